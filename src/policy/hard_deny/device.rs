//! `device-destroy`: formatting, wiping, discarding or overwriting a block
//! device, rewriting its partition table, and destroying the volumes built
//! on devices (LVM volumes and groups, ZFS pools and datasets, RAID
//! superblocks). A regular file (a disk image) is not a device, and
//! read-only or dry runs of the disk tools are not writes.
//!
//! A device has many names: `/dev/sda`, `/dev/disk/by-id/…`,
//! `/dev/mapper/…`, `/proc/self/root/dev/sda` ([`super::paths`]), and any
//! name the command itself gives one before writing it — a link to a device
//! (`ln -s /dev/sda d`) or a device node it makes (`mknod d b 8 0`). A loop
//! device (`/dev/loop0`) is a device too, except in a command that attaches
//! a regular file to a loop device with `losetup` first (formatting the
//! image it just attached destroys nothing but that image).

use super::HardRule;
use crate::shell::spec::Role;
use crate::shell::{Arg, RedirectOp};

use super::facts::Facts;
use super::paths::{Target, may_be_block_device};
use super::{HardDeny, deny};

fn formatter(name: &str) -> bool {
    name == "mkfs"
        || name.starts_with("mkfs.")
        || matches!(
            name,
            "mke2fs"
                | "mkswap"
                | "mkdosfs"
                | "mkntfs"
                | "newfs"
                | "newfs_apfs"
                | "newfs_hfs"
                | "mkreiserfs"
                | "mkudffs"
                | "mkexfatfs"
        )
}

/// Tools whose only use on a device is to destroy what it holds: given a
/// `/dev/…` path nobody can read until run time, it is a device.
fn destroys_what_it_is_given(name: &str) -> bool {
    formatter(name)
        || matches!(
            name,
            "dd" | "dcfldd"
                | "dc3dd"
                | "ddpt"
                | "ddrescue"
                | "wipefs"
                | "blkdiscard"
                | "shred"
                | "badblocks"
        )
        || crate::shell::spec::PARTITIONERS.contains(&name)
}

/// Names the command gives a device before it writes them: links to a
/// device and block-device nodes it makes, with the device each stands for.
fn aliases(f: &Facts<'_>) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = Vec::new();
    for (i, cmd) in f.commands() {
        let touches = f.touches(i);
        match cmd.name() {
            // `ln [-s] /dev/sda d`, `ln -s /dev/sda -t dir`.
            Some("ln" | "link") => {
                let device = touches
                    .iter()
                    .filter(|t| t.role == Role::LinkTarget)
                    .flat_map(|t| t.targets.iter())
                    .find_map(may_be_block_device);
                let Some(device) = device else { continue };
                for t in touches.iter().filter(|t| t.role == Role::Write) {
                    for target in &t.targets {
                        if let Target::Exact(p) = target {
                            out.push((p.clone(), format!("a link to `{device}`")));
                        }
                    }
                }
            }
            // `mknod NAME b MAJOR MINOR`: a block-device node.
            Some("mknod") => {
                let words: Vec<&str> = cmd.args().iter().filter_map(Arg::as_known).collect();
                let operands: Vec<&str> = words
                    .iter()
                    .copied()
                    .filter(|w| !w.starts_with('-'))
                    .collect();
                if operands.get(1).is_some_and(|t| *t == "b")
                    && let Some(Target::Exact(p)) = touches
                        .iter()
                        .find(|t| t.role == Role::Write)
                        .and_then(|t| t.targets.first())
                {
                    out.push((
                        p.clone(),
                        format!("a block device node made by `mknod {}`", operands.join(" ")),
                    ));
                }
            }
            _ => {}
        }
    }
    out
}

/// A command that attaches a regular file (not a device) to a loop device:
/// `losetup -f --show disk.img`, `losetup /dev/loop3 disk.img`.
fn attaches_image(f: &Facts<'_>) -> bool {
    f.commands().any(|(_, cmd)| {
        cmd.name() == Some("losetup")
            && cmd.args().iter().any(|a| {
                a.as_known().is_some_and(|t| {
                    !t.starts_with('-') && !t.starts_with("/dev/") && !t.is_empty()
                })
            })
            && !cmd.args().iter().any(|a| {
                a.as_known()
                    .is_some_and(|t| t.starts_with("/dev/") && !t.starts_with("/dev/loop"))
            })
    })
}

fn is_loop(path: &str) -> bool {
    super::paths::without_proc_root(path).starts_with("/dev/loop")
}

/// The rule and the verb for a write to a block device by `name` (or by a
/// redirection of its command, `redirected`).
fn device_write_rule(name: &str, redirected: bool) -> (HardRule, &'static str) {
    if redirected {
        (HardRule::DeviceRedirectToDevice, "a redirection overwrites")
    } else if formatter(name) {
        (HardRule::DeviceMkfs, "formats")
    } else if name == "wipefs" {
        (HardRule::DeviceWipefs, "wipes the signatures of")
    } else if name == "blkdiscard" {
        (HardRule::DeviceBlkdiscard, "discards every block of")
    } else if crate::shell::spec::PARTITIONERS.contains(&name) {
        (
            HardRule::DevicePartitionTable,
            "rewrites the partition table of",
        )
    } else if matches!(name, "dd" | "dcfldd" | "dc3dd" | "ddpt" | "ddrescue") {
        (HardRule::DeviceDdToDevice, "`dd` overwrites")
    } else if name == "shred" {
        (HardRule::DeviceShredDevice, "`shred` overwrites")
    } else {
        (HardRule::DeviceWriteToDevice, "overwrites")
    }
}

pub(super) fn check(f: &mut Facts<'_>) -> Option<HardDeny> {
    let aliases = aliases(f);
    let images = attaches_image(f);
    for i in 0..f.analysis.commands.len() {
        if let Some(d) = volume_destroyer(f, i) {
            return Some(d);
        }
        let Some(cmd) = f.command(i) else { continue };
        let name = cmd.name().unwrap_or("").to_owned();
        let redirected: Vec<crate::shell::Value> = cmd
            .redirects
            .iter()
            .filter(|r| r.op.writes() || r.op == RedirectOp::ReadWrite)
            .map(|r| r.target.clone())
            .collect();
        for touch in f.touches(i).iter() {
            if touch.role != Role::Write {
                continue;
            }
            // `dd of=/dev/$DISK`, `mkfs.ext4 /dev/$(lsblk …)`: a device
            // named at run time, given to a tool that only destroys.
            if destroys_what_it_is_given(&name)
                && touch.value.candidates().iter().any(|t| {
                    t.has_any()
                        && super::paths::without_proc_root(t.known_prefix()).starts_with("/dev/")
                        && !t.known_prefix().starts_with("/dev/fd/")
                })
            {
                return deny(
                    HardRule::DeviceNamedAtRunTime,
                    format!(
                        "`{name}` overwrites `{}`, a device whose name is runtime data",
                        touch.value
                    ),
                );
            }
            for target in &touch.targets {
                let shown = match may_be_block_device(target) {
                    Some(_) if images && matches!(target, Target::Exact(p) if is_loop(p)) => {
                        continue;
                    }
                    Some(d) => format!("`{d}`"),
                    None => match target {
                        Target::Exact(p) => match aliases.iter().find(|(a, _)| a == p) {
                            Some((alias, device)) => format!("`{alias}` ({device})"),
                            None => continue,
                        },
                        Target::Pattern(_) | Target::Partial(_) => continue,
                    },
                };
                let (rule, what) = device_write_rule(&name, redirected.contains(&touch.value));
                return deny(rule, format!("{what} the block device {shown} (`{name}`)"));
            }
        }
    }
    None
}

/// The tools that destroy a volume, a pool or a whole device by name
/// rather than by a path the rules can read as a write: LVM's `lvremove`,
/// `vgremove`, `pvremove`; ZFS's `zpool destroy` and `zfs destroy` of a
/// dataset (a snapshot or bookmark, `pool/fs@snap`, leaves the data);
/// `sg_format --format` and `sg_sanitize`. Their test and dry-run modes
/// (`--test`, `zfs destroy -n`) change nothing.
fn volume_destroyer(f: &Facts<'_>, i: usize) -> Option<HardDeny> {
    let cmd = f.command(i)?;
    let name = cmd.name()?;
    let words: Vec<&str> = cmd.args().iter().filter_map(Arg::as_known).collect();
    let has = |list: &[&str]| words.iter().any(|w| list.contains(w));
    let short = |c: char| {
        words
            .iter()
            .any(|w| w.starts_with('-') && !w.starts_with("--") && w.contains(c))
    };
    let operands: Vec<&str> = words
        .iter()
        .copied()
        .filter(|w| !w.starts_with('-'))
        .collect();
    let destroyed: Option<String> = match name {
        "lvremove" | "vgremove" | "pvremove" | "lvreduce" => {
            let test = has(&["--test"]) || short('t');
            let help = has(&["--help", "--version"]) || short('h');
            (!test && !help && (!operands.is_empty() || has(&["-a", "--all", "--select", "-S"])))
                .then(|| operands.join(" "))
        }
        "zpool" => (operands.first() == Some(&"destroy"))
            .then(|| operands.get(1..).unwrap_or(&[]).join(" ")),
        "zfs" => {
            let dry = short('n');
            let datasets: Vec<&str> = operands
                .iter()
                .skip(1)
                .copied()
                .filter(|d| !d.contains(['@', '#']))
                .collect();
            (operands.first() == Some(&"destroy") && !dry && !datasets.is_empty())
                .then(|| datasets.join(" "))
        }
        "sg_format" => (has(&["--format"]) || short('F')).then(|| operands.join(" ")),
        "sg_sanitize" => {
            let mode = has(&["--block", "--crypto", "--overwrite", "--fail"])
                || short('B')
                || short('C')
                || short('O');
            mode.then(|| operands.join(" "))
        }
        _ => None,
    };
    let destroyed = destroyed?;
    let what = if destroyed.is_empty() {
        "every volume it selects".to_owned()
    } else {
        format!("`{destroyed}`")
    };
    deny(
        HardRule::DeviceVolumeDestroy,
        format!("`{name}` destroys {what} and the data on it"),
    )
}
