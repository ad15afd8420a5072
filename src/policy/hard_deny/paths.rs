//! Turning values into absolute path targets, and the path predicates the
//! rules share.
//!
//! Resolution is lexical, in the directory the command runs in (every
//! candidate of it). A target is exact, a pathname pattern (which counts as
//! every path it can match), or partial: its beginning is runtime data and
//! only its end is known (`$DIR/.ssh/authorized_keys`), which name-based
//! rules may use but location-based ones may not. Nothing here touches the
//! file system; symlinks are the adapter's `resolved_path`.

use crate::shell::{Seg, Text, Value, glob, path};

/// One path a value may name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Target {
    /// A known absolute path, normalized.
    Exact(String),
    /// An absolute pathname pattern (`.` and `..` folded where literal).
    Pattern(Text),
    /// The known end of a path whose beginning is unknown, from a `/` on
    /// (`/.ssh/authorized_keys`).
    Partial(String),
}

impl Target {
    /// The path as shown in rationales.
    pub(crate) fn display(&self) -> String {
        match self {
            Target::Exact(p) => p.clone(),
            Target::Pattern(t) => t.to_string(),
            Target::Partial(end) => format!("…{end}"),
        }
    }

    /// Its components, when known or a pattern (partial: the known end).
    pub(crate) fn components(&self) -> Vec<Vec<Seg>> {
        match self {
            Target::Exact(p) | Target::Partial(p) => p
                .split('/')
                .filter(|c| !c.is_empty())
                .map(|c| vec![Seg::Lit(c.to_owned())])
                .collect(),
            Target::Pattern(t) => components(t),
        }
    }
}

/// Splits a text into path components at literal slashes.
fn components(t: &Text) -> Vec<Vec<Seg>> {
    let mut out: Vec<Vec<Seg>> = Vec::new();
    let mut current: Vec<Seg> = Vec::new();
    for seg in &t.segs {
        match seg {
            Seg::Lit(s) => {
                let mut pieces = s.split('/');
                if let Some(first) = pieces.next()
                    && !first.is_empty()
                {
                    current.push(Seg::Lit(first.to_owned()));
                }
                for piece in pieces {
                    if !current.is_empty() {
                        out.push(std::mem::take(&mut current));
                    }
                    if !piece.is_empty() {
                        current.push(Seg::Lit(piece.to_owned()));
                    }
                }
            }
            other => current.push(other.clone()),
        }
    }
    if !current.is_empty() {
        out.push(current);
    }
    out
}

/// A pattern with literal `.` and `..` components folded.
fn normalize_pattern(t: &Text) -> Text {
    let mut parts: Vec<Vec<Seg>> = Vec::new();
    for c in components(t) {
        match c.as_slice() {
            [Seg::Lit(dot)] if dot == "." => {}
            [Seg::Lit(dots)] if dots == ".." => {
                parts.pop();
            }
            _ => parts.push(c),
        }
    }
    let mut out = Text::default();
    if parts.is_empty() {
        out.push_str("/");
    }
    for part in parts {
        out.push_str("/");
        for seg in part {
            out.push(seg);
        }
    }
    out
}

/// The targets of `value` for a command running in `cwd`.
pub(crate) fn resolve(value: &Value, cwd: &Value) -> Vec<Target> {
    let mut out = Vec::new();
    for t in value.candidates() {
        if t.is_empty() {
            continue;
        }
        if t.has_any() {
            let end = t.known_suffix();
            if let Some(slash) = end.find('/') {
                let tail = end.get(slash..).unwrap_or("");
                if tail.len() > 1 {
                    out.push(Target::Partial(tail.to_owned()));
                }
            }
            continue;
        }
        let absolute = t.known_prefix().starts_with('/');
        if let Some(known) = t.as_known() {
            if absolute {
                out.push(Target::Exact(path::normalize(known)));
                continue;
            }
            for c in cwd.candidates() {
                match c.as_known() {
                    Some(dir) => out.push(Target::Exact(path::join(dir, known))),
                    None => out.push(Target::Partial(format!("/{known}"))),
                }
            }
            continue;
        }
        // A pattern.
        if absolute {
            out.push(Target::Pattern(normalize_pattern(t)));
            continue;
        }
        for c in cwd.candidates() {
            if let Some(dir) = c.as_known() {
                let mut joined = Text::lit(dir);
                joined.push_str("/");
                joined.append(t);
                out.push(Target::Pattern(normalize_pattern(&joined)));
            }
        }
    }
    out.dedup();
    out
}

/// `path` equals `base` or lies below it.
pub(crate) fn is_within(path: &str, base: &str) -> bool {
    if base == "/" {
        return path.starts_with('/');
    }
    path == base
        || path
            .strip_prefix(base)
            .is_some_and(|rest| rest.starts_with('/'))
}

fn seg_text(part: &[Seg]) -> Text {
    let mut t = Text::default();
    for s in part {
        t.push(s.clone());
    }
    t
}

/// Does one component (literal or pattern) match `name`?
pub(crate) fn component_is(part: &[Seg], name: &str) -> bool {
    match part {
        [Seg::Lit(s)] => s == name,
        _ => glob::matches(&seg_text(part), name, glob::Mode::PATHNAME),
    }
}

/// Can the target's last components be `names` (`[".ssh",
/// "authorized_keys"]`), wherever the path is?
pub(crate) fn ends_with(target: &Target, names: &[&str]) -> bool {
    let parts = target.components();
    if parts.len() < names.len() {
        return false;
    }
    let tail = parts.get(parts.len() - names.len()..).unwrap_or(&[]);
    tail.iter().zip(names).all(|(p, n)| component_is(p, n))
}

/// Names a match-all pattern must match: ordinary names, or hidden ones.
const PLAIN_PROBES: &[&str] = &[
    "a",
    "Z",
    "0",
    "x.y",
    "-",
    "_",
    "project",
    "Documents",
    "a b",
];
const HIDDEN_PROBES: &[&str] = &[".a", ".config", ".ssh", ".x.y"];

/// A last component that matches every entry of its directory, or every
/// hidden one (`*`, `.*`, `?*`, `[!.]*`; not `*.log`).
pub(crate) fn is_match_all(part: &[Seg]) -> bool {
    if matches!(part, [Seg::Lit(_)]) {
        return false;
    }
    PLAIN_PROBES.iter().all(|n| component_is(part, n))
        || HIDDEN_PROBES.iter().all(|n| component_is(part, n))
}

/// Device paths that are not block devices: `/dev/null`, terminals,
/// sockets, descriptors.
const NOT_DEVICES: &[&str] = &[
    "null",
    "zero",
    "full",
    "random",
    "urandom",
    "tty",
    "stdin",
    "stdout",
    "stderr",
    "console",
    "ptmx",
    "fd",
    "pts",
    "shm",
    "tcp",
    "udp",
    "net",
    "input",
    "snd",
    "dri",
    "bus",
    "char",
    "cpu",
    "hugepages",
    "mqueue",
    "vfio",
    "usb",
    "serial",
    "v4l",
    "log",
    "kmsg",
    "fuse",
    "kvm",
    "tun",
    "autofs",
    "cuse",
    "vhost-net",
    "vhost-vsock",
    "uinput",
    "rfkill",
    "watchdog",
    "rtc",
    "hpet",
    "uhid",
    "loop-control",
    "mapper/control",
    "btrfs-control",
    "core",
    "initctl",
    "gpiochip0",
];

/// Prefixes of block-device (and raw memory) names under `/dev`: Linux
/// (`sd`, `nvme`, `mmcblk`, `xvd`, `vd`, `md`, `dm-`, `loop`, `pmem`, …),
/// macOS (`disk`, `rdisk`), the BSDs (`ada`, `da`, `wd`), and the
/// directories of aliases (`disk/by-id/`, `mapper/`, `block/`, `zvol/`).
const DEVICE_PREFIXES: &[&str] = &[
    "sd", "hd", "vd", "xvd", "nvme", "mmcblk", "loop", "md", "dm-", "sr", "disk", "rdisk",
    "mapper/", "root", "mem", "kmem", "port", "nbd", "rbd", "zd", "bcache", "ubd", "block/", "ram",
    "fd0", "sg", "st", "nst", "mtd", "zvol/", "iscsi", "bsg/", "ubi", "md/", "pmem", "ada", "da",
    "wd", "emmc", "cciss/", "drbd", "rsxx", "skd", "vdisk",
];

/// `path` with every `/proc/PID/root` (`self`, `thread-self`, a number)
/// removed from its front: the root directory as that process sees it,
/// which is `/` for the agent's own processes (`/proc/self/root/dev/sda`
/// is `/dev/sda`).
pub(crate) fn without_proc_root(path: &str) -> &str {
    let mut rest = path;
    for _ in 0..8 {
        let Some(after) = rest.strip_prefix("/proc/") else {
            break;
        };
        let Some((pid, tail)) = after.split_once('/') else {
            break;
        };
        let is_process =
            matches!(pid, "self" | "thread-self") || pid.bytes().all(|b| b.is_ascii_digit());
        match tail.strip_prefix("root") {
            Some(t) if is_process && (t.is_empty() || t.starts_with('/')) => {
                rest = if t.is_empty() { "/" } else { t };
            }
            _ => break,
        }
    }
    rest
}

/// A block device (or raw memory) whose overwrite destroys data: Linux
/// names, macOS `disk2`/`rdisk2`, LVM `/dev/VG/LV`, `/dev/disk/by-*/…`,
/// also reached through `/proc/self/root`.
pub(crate) fn is_block_device(path: &str) -> bool {
    let Some(rest) = without_proc_root(path).strip_prefix("/dev/") else {
        return false;
    };
    if rest.is_empty()
        || NOT_DEVICES
            .iter()
            .any(|n| rest == *n || rest.starts_with(&format!("{n}/")))
    {
        return false;
    }
    if DEVICE_PREFIXES.iter().any(|p| rest.starts_with(p)) {
        return true;
    }
    // `/dev/VG/LV`: a volume group directory holding logical volumes.
    rest.split('/').count() == 2
}

/// A target that can be a block device.
pub(crate) fn may_be_block_device(target: &Target) -> Option<String> {
    match target {
        Target::Exact(p) => is_block_device(p).then(|| p.clone()),
        Target::Pattern(t) => {
            let probes = [
                "/dev/sda",
                "/dev/sdb",
                "/dev/nvme0n1",
                "/dev/vda",
                "/dev/disk2",
                "/dev/mmcblk0",
                "/dev/xvda",
                "/proc/self/root/dev/sda",
                "/proc/1/root/dev/sda",
            ];
            probes
                .iter()
                .find(|p| glob::path_may_match(t, p))
                .map(|p| format!("{t} (e.g. {p})"))
        }
        Target::Partial(_) => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pat(parts: &[Seg]) -> Text {
        let mut t = Text::default();
        for p in parts {
            t.push(p.clone());
        }
        t
    }

    #[test]
    fn resolves_relative_and_patterns() {
        let cwd = Value::known("/srv/app");
        assert_eq!(
            resolve(&Value::known(".."), &cwd),
            vec![Target::Exact("/srv".into())]
        );
        let star = Value::text(pat(&[Seg::Lit("../".into()), Seg::Star]));
        assert_eq!(
            resolve(&star, &cwd),
            vec![Target::Pattern(pat(&[Seg::Lit("/srv/".into()), Seg::Star]))]
        );
        let partial = Value::text(pat(&[
            Seg::Any(crate::shell::Sources::none()),
            Seg::Lit("/.ssh/authorized_keys".into()),
        ]));
        assert_eq!(
            resolve(&partial, &cwd),
            vec![Target::Partial("/.ssh/authorized_keys".into())]
        );
    }

    #[test]
    fn match_all_components() {
        assert!(is_match_all(&[Seg::Star]));
        assert!(is_match_all(&[Seg::Lit(".".into()), Seg::Star]));
        assert!(is_match_all(&[Seg::Quest, Seg::Star]));
        assert!(!is_match_all(&[Seg::Star, Seg::Lit(".log".into())]));
        assert!(!is_match_all(&[Seg::Lit("p".into()), Seg::Star]));
    }

    #[test]
    fn block_devices() {
        for d in [
            "/dev/sda",
            "/dev/nvme0n1",
            "/dev/disk/by-id/x",
            "/dev/disk2",
            "/dev/rdisk2",
            "/dev/vg0/root",
            "/dev/mapper/x",
            "/proc/self/root/dev/sda",
            "/proc/1/root/dev/nvme0n1p1",
            "/proc/thread-self/root/proc/self/root/dev/xvda",
            "/dev/md127",
            "/dev/dm-3",
            "/dev/pmem0",
            "/dev/ada0",
        ] {
            assert!(is_block_device(d), "{d}");
        }
        for d in [
            "/dev/null",
            "/dev/zero",
            "/dev/tcp/1.2.3.4/80",
            "/dev/pts/0",
            "/dev/fd/3",
            "/dev/stdout",
            "/proc/self/root/dev/null",
            "/proc/self/fd/1",
            "/proc/x/root/dev/sda",
            "/dev/ttyUSB0",
        ] {
            assert!(!is_block_device(d), "{d}");
        }
    }

    #[test]
    fn name_ends() {
        let t = Target::Exact("/home/dev/.ssh/authorized_keys".into());
        assert!(ends_with(&t, &[".ssh", "authorized_keys"]));
        let star = Target::Pattern(pat(&[Seg::Lit("/srv/app/".into()), Seg::Star]));
        assert!(!ends_with(&star, &[".ssh", "authorized_keys"]));
        let ssh = Target::Pattern(pat(&[Seg::Lit("/home/dev/.ssh/".into()), Seg::Star]));
        assert!(ends_with(&ssh, &[".ssh", "authorized_keys"]));
    }
}
