//! The differential fuzzer against the real programs (issue 42): for each
//! inert-capable reader of the one command table (and `find` and `git`), it
//! generates argv from the **real program's** option alphabet — the options
//! its `--help` prints, joined with the ones the table lists — in every
//! form getopt and the programs' own parsers read (short options alone and
//! in clusters, attached and separate values, `--long=VALUE`, unique
//! abbreviations of long options, `--`, `@FILE`, operands and glob matches
//! named like options, symlinks and `..` after them), runs each one for
//! real in bubblewrap over a fixture home, and compares what it did with
//! vouch's prediction: a command vouch calls inert must write nothing (but
//! `.git/index`), run no other program, connect nowhere, and print no
//! secret byte.
//!
//! Each case runs under `strace -f` (execve, connect/sendto, every open for
//! writing and every call that creates, removes, renames, links or changes
//! a file), its standard output and error are searched for the fixture's
//! secret markers (`VOUCHSECRET-…`, in `.env`, `~/.aws/credentials`,
//! `~/.bashrc`, Terraform state, a `.git/config` token and the
//! environment), and the home is compared by metadata before and after.
//! Cases run in batches: one sandbox per batch, this test binary as the
//! driver inside it ([`driver`]), restoring the home from a read-only
//! pristine copy after any case that changed it.
//!
//! Two fixture variants: `plain` (the inert harness's fixture) measures the
//! option profiles; `planted` adds what programs read on their own —
//! `~/.jq`, `~/.magic`, ignore files that unhide `.env`, a git hook, a bare
//! repository, a partial clone, configuration with a byte-order mark and
//! with a comment that ends in a backslash.
//!
//! Modes: unconfined (the default: it measures the table) and confined
//! (`VOUCH_INERT_FUZZ_CONFINE=1` with `VOUCH_BIN` naming a vouch binary
//! that has `vouch confine`: each case runs as `$VOUCH_BIN confine -- bash
//! -c …`, which proves the enforcement: no case may do any of those,
//! inert or not).

use std::collections::BTreeMap;
use std::io::{BufRead, Read, Write};
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};
use vouch::shell::spec::{self, CommandSpec, Dialect, Inert, Operands};

/// Where the driver, the cases and the pristine home are inside the sandbox.
pub const DRIVER_PATH: &str = "/run/vouch-fuzz/driver";
const CASES_PATH: &str = "/run/vouch-fuzz/cases.jsonl";
const PRISTINE_PATH: &str = "/run/vouch-fuzz/pristine";
const TRACE_PATH: &str = "/run/vouch-fuzz/work/trace";
const VOUCH_PATH: &str = "/run/vouch-fuzz/vouch";
/// The marker every planted secret carries.
pub const SECRET_MARKER: &str = "VOUCHSECRET";
/// The environment variable holding a secret in every case's environment.
const SECRET_ENV: (&str, &str) = ("VOUCH_FUZZ_TOKEN", "VOUCHSECRET-env-7f3a");
/// One case's wall-clock limit (a backstop: `tail -f` waits forever).
const CASE_TIMEOUT: Duration = Duration::from_secs(4);
/// Output kept per case for the secret search.
const OUTPUT_LIMIT: u64 = 256 * 1024;
/// Cases per sandbox.
pub const BATCH: usize = 250;

/// The system calls traced: executions, connections, and every call that
/// may create, write, remove, rename, link or change a file.
const TRACED: &str = "execve,execveat,connect,sendto,sendmsg,open,openat,openat2,creat,\
mkdir,mkdirat,rename,renameat,renameat2,unlink,unlinkat,rmdir,symlink,symlinkat,link,linkat,\
truncate,chmod,fchmodat,chown,fchownat,lchown,utimensat,utimes,utime,mknod,mknodat";

/// One case: the command run (`bash -c`) and the program it exercises.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Case {
    pub index: usize,
    pub program: String,
    pub command: String,
}

/// What one case did.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Observed {
    pub index: usize,
    pub execs: Vec<String>,
    pub connects: Vec<String>,
    pub writes: Vec<String>,
    pub secrets: Vec<String>,
    pub timed_out: bool,
    pub broken: Option<String>,
}

impl Observed {
    /// Whether the case did anything an inert command may not.
    pub fn bad(&self) -> bool {
        !self.execs.is_empty()
            || !self.connects.is_empty()
            || !self.writes.is_empty()
            || !self.secrets.is_empty()
    }

    /// Whether a confined case got through confinement: a write or a
    /// connection that succeeded (attempts that failed are not recorded in
    /// that mode), or a secret `vouch confine` guarantees to keep (the
    /// credential list, `.env*`, secret-named environment variables) in
    /// its output. Running a program is not a confinement guarantee.
    pub fn escaped_confinement(&self) -> bool {
        const GUARANTEED: &[&str] = &["VOUCHSECRET-dotenv", "VOUCHSECRET-aws", "VOUCHSECRET-env"];
        !self.connects.is_empty()
            || !self.writes.is_empty()
            || self
                .secrets
                .iter()
                .any(|s| GUARANTEED.iter().any(|g| s.starts_with(g)))
    }

    pub fn summary(&self) -> String {
        let mut parts = Vec::new();
        for (what, list) in [
            ("ran", &self.execs),
            ("connected", &self.connects),
            ("wrote", &self.writes),
            ("printed secret", &self.secrets),
        ] {
            if !list.is_empty() {
                parts.push(format!("{what}: {}", list.join(", ")));
            }
        }
        parts.join("; ")
    }
}

// ------------------------------------------------------------------ driver

/// The driver's life inside the sandbox: `DRIVER HOME TMP CONFINE`. Runs
/// every case of [`CASES_PATH`] and prints one [`Observed`] per line.
pub fn driver() -> ! {
    let args: Vec<String> = std::env::args().collect();
    let (Some(home), Some(tmp)) = (args.get(1), args.get(2)) else {
        eprintln!("fuzz driver: usage: driver HOME TMP [confine]");
        std::process::exit(2);
    };
    let confine = args.get(3).is_some_and(|a| a == "confine");
    let home = PathBuf::from(home);
    let tmp = PathBuf::from(tmp);
    let cases = std::fs::read_to_string(CASES_PATH).unwrap_or_default();
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    let mut dirty = true;
    let mut base = BTreeMap::new();
    for line in cases.lines() {
        let Ok(case) = serde_json::from_str::<Case>(line) else {
            continue;
        };
        if dirty {
            if let Err(e) = restore(Path::new(PRISTINE_PATH), &home, &tmp) {
                let broken = Observed {
                    index: case.index,
                    broken: Some(format!("restore: {e}")),
                    ..Observed::default()
                };
                let _ = writeln!(
                    out,
                    "{}",
                    serde_json::to_string(&broken).unwrap_or_default()
                );
                continue;
            }
            base = meta_snapshot(&home);
        }
        let mut observed = run_case(&case, &home, confine);
        let after = meta_snapshot(&home);
        for change in meta_changes(&base, &after) {
            if !observed.writes.contains(&change) {
                observed.writes.push(change);
            }
        }
        let left_in_tmp = std::fs::read_dir(&tmp).map(|d| d.count()).unwrap_or(0);
        if left_in_tmp > 0 {
            observed
                .writes
                .push(format!("{left_in_tmp} file(s) left in /tmp"));
        }
        dirty = after != base || left_in_tmp > 0;
        let _ = writeln!(
            out,
            "{}",
            serde_json::to_string(&observed).unwrap_or_default()
        );
    }
    let _ = out.flush();
    std::process::exit(0);
}

fn run_case(case: &Case, home: &Path, confine: bool) -> Observed {
    let mut observed = Observed {
        index: case.index,
        ..Observed::default()
    };
    let _ = std::fs::remove_file(TRACE_PATH);
    let mut cmd = Command::new("strace");
    cmd.args([
        "-f",
        "-qq",
        "--seccomp-bpf",
        "-e",
        "signal=none",
        "-s",
        "256",
    ])
    .arg("-e")
    .arg(format!("trace={TRACED}"))
    .args(["-o", TRACE_PATH, "--"]);
    if confine {
        cmd.args([VOUCH_PATH, "confine", "--"]);
    }
    cmd.args(["bash", "--norc", "--noprofile", "-c", &case.command]);
    cmd.current_dir(home.join("project"))
        .env(SECRET_ENV.0, SECRET_ENV.1)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0);
    let mut child = match cmd.spawn() {
        Ok(c) => c,
        Err(e) => {
            observed.broken = Some(format!("strace: {e}"));
            return observed;
        }
    };
    let readers: Vec<_> = [
        child
            .stdout
            .take()
            .map(|p| Box::new(p) as Box<dyn Read + Send>),
        child
            .stderr
            .take()
            .map(|p| Box::new(p) as Box<dyn Read + Send>),
    ]
    .into_iter()
    .flatten()
    .map(|mut pipe| {
        std::thread::spawn(move || {
            let mut buf = Vec::new();
            let _ = (&mut pipe).take(OUTPUT_LIMIT).read_to_end(&mut buf);
            let _ = std::io::copy(&mut pipe, &mut std::io::sink());
            buf
        })
    })
    .collect();
    let deadline = Instant::now() + CASE_TIMEOUT;
    loop {
        match child.try_wait() {
            Ok(Some(_)) => break,
            Ok(None) if Instant::now() >= deadline => {
                observed.timed_out = true;
                // The whole group: strace and everything it traces.
                let _ = Command::new("kill")
                    .args(["-KILL", "--", &format!("-{}", child.id())])
                    .status();
                let _ = child.kill();
                let _ = child.wait();
                break;
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(1)),
            Err(_) => break,
        }
    }
    for reader in readers {
        let bytes = reader.join().unwrap_or_default();
        let text = String::from_utf8_lossy(&bytes);
        for (at, _) in text.match_indices(SECRET_MARKER) {
            let shown: String = text[at..].chars().take(24).collect();
            if !observed.secrets.contains(&shown) {
                observed.secrets.push(shown);
            }
        }
    }
    let trace = std::fs::read_to_string(TRACE_PATH).unwrap_or_default();
    read_trace(&trace, &case.program, confine, &mut observed);
    observed
}

/// What the trace says the case did.
fn read_trace(trace: &str, program: &str, confine: bool, observed: &mut Observed) {
    // strace runs bash, bash runs the program (confined: strace runs
    // vouch, vouch runs bash, bash runs the program).
    let mut allowed_execs = if confine { 3 } else { 2 };
    for line in trace.lines() {
        let Some((call, rest)) = syscall(line) else {
            continue;
        };
        let failed_lookup = rest.contains("= -1 ENOENT");
        // Confined, a refused write or connection is the enforcement at
        // work: only the calls that succeeded count.
        let refused = confine && rest.contains("= -1 ");
        match call {
            "execve" | "execveat" => {
                if failed_lookup {
                    continue;
                }
                if allowed_execs > 0 {
                    allowed_execs -= 1;
                    continue;
                }
                let path = first_string(rest).unwrap_or("?");
                // `egrep` is a script that runs `grep -E`: the same entry.
                let name = path.rsplit('/').next().unwrap_or(path);
                let same_entry = spec::lookup(name)
                    .zip(spec::lookup(program))
                    .is_some_and(|(a, b)| a.names == b.names);
                if !same_entry {
                    push(&mut observed.execs, path);
                }
            }
            "connect" | "sendto" | "sendmsg" => {
                if refused {
                    continue;
                }
                if let Some(peer) = peer(rest) {
                    push(&mut observed.connects, &peer);
                }
            }
            "open" | "openat" | "openat2" | "creat" => {
                let writes = !refused
                    && (call == "creat"
                        || ["O_WRONLY", "O_RDWR", "O_CREAT", "O_TRUNC", "O_APPEND"]
                            .iter()
                            .any(|f| rest.contains(f)));
                if writes
                    && let Some(path) = first_string(rest)
                    && !exempt_write(path)
                {
                    push(&mut observed.writes, &format!("{call} {path}"));
                }
            }
            _ if refused => {}
            "utimensat" | "utimes" | "utime" => {
                // `utimensat(fd, NULL, …)` on an open descriptor is
                // `futimens`: still a change of the file it names.
                if let Some(path) = first_string(rest).filter(|p| !exempt_write(p)) {
                    push(&mut observed.writes, &format!("{call} {path}"));
                } else if rest.contains("NULL") && !rest.contains("AT_FDCWD") {
                    push(&mut observed.writes, &format!("{call} (a descriptor)"));
                }
            }
            "mkdir" | "mkdirat" | "rename" | "renameat" | "renameat2" | "unlink" | "unlinkat"
            | "rmdir" | "symlink" | "symlinkat" | "link" | "linkat" | "truncate" | "chmod"
            | "fchmodat" | "chown" | "fchownat" | "lchown" | "mknod" | "mknodat" => {
                if let Some(path) = first_string(rest).filter(|p| !exempt_write(p)) {
                    push(&mut observed.writes, &format!("{call} {path}"));
                }
            }
            _ => {}
        }
    }
}

fn push(list: &mut Vec<String>, item: &str) {
    if !list.iter().any(|i| i == item) && list.len() < 16 {
        list.push(item.to_owned());
    }
}

/// `PID name(args…) = …`: the call's name and what follows it.
fn syscall(line: &str) -> Option<(&str, &str)> {
    let line = line.trim_start();
    let after_pid = line
        .split_once(' ')
        .filter(|(pid, _)| pid.chars().all(|c| c.is_ascii_digit()))
        .map_or(line, |(_, rest)| rest)
        .trim_start();
    if after_pid.starts_with('<') || after_pid.starts_with("+++") || after_pid.starts_with("---") {
        return None;
    }
    let open = after_pid.find('(')?;
    Some((after_pid.get(..open)?, after_pid.get(open + 1..)?))
}

/// The first quoted string of a call's arguments.
fn first_string(rest: &str) -> Option<&str> {
    let start = rest.find('"')? + 1;
    let len = rest.get(start..)?.find('"')?;
    rest.get(start..start + len)
}

/// Where a `connect`/`sendto` goes; `None` for a call without an address
/// and for the name-service cache socket glibc tries on every user lookup
/// (no daemon listens in the sandbox; `ls -l` and `id` try it).
fn peer(rest: &str) -> Option<String> {
    if rest.contains("AF_UNIX") {
        let path = rest
            .split("sun_path=")
            .nth(1)
            .and_then(first_string)
            .unwrap_or("?");
        if path.contains("nscd") {
            return None;
        }
        return Some(format!("unix:{path}"));
    }
    if rest.contains("AF_NETLINK") || rest.contains("AF_PACKET") {
        return Some(
            if rest.contains("AF_NETLINK") {
                "netlink"
            } else {
                "packet"
            }
            .to_owned(),
        );
    }
    if rest.contains("AF_INET") {
        let addr = rest
            .split("inet_addr(")
            .nth(1)
            .or_else(|| rest.split("inet_pton(").nth(1))
            .and_then(first_string)
            .unwrap_or("?");
        let port = rest
            .split("htons(")
            .nth(1)
            .and_then(|p| p.split(')').next())
            .unwrap_or("?");
        return Some(format!("{addr}:{port}"));
    }
    None
}

/// Writes that are not writes: the terminal and the null device, and git's
/// stat cache (docs/inert.md).
fn exempt_write(path: &str) -> bool {
    path == "/dev/null"
        || path == "/dev/tty"
        || path.starts_with("/dev/pts/")
        || path.ends_with(".git/index")
        || path.ends_with(".git/index.lock")
        || path.starts_with("/run/vouch-fuzz/work")
}

/// Path to (kind, mode, size, mtime, link target) of everything under root.
type Meta = BTreeMap<String, String>;

fn meta_snapshot(root: &Path) -> Meta {
    let mut out = Meta::new();
    let mut pending = vec![root.to_path_buf()];
    while let Some(dir) = pending.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            let rel = path
                .strip_prefix(root)
                .unwrap_or(&path)
                .display()
                .to_string();
            let Ok(meta) = std::fs::symlink_metadata(&path) else {
                continue;
            };
            let value = if meta.file_type().is_symlink() {
                format!(
                    "link {}",
                    std::fs::read_link(&path).unwrap_or_default().display()
                )
            } else if meta.is_dir() {
                pending.push(path.clone());
                format!("dir {:o}", meta.mode() & 0o7777)
            } else {
                format!(
                    "file {:o} {} {}.{}",
                    meta.mode() & 0o7777,
                    meta.len(),
                    meta.mtime(),
                    meta.mtime_nsec()
                )
            };
            out.insert(rel, value);
        }
    }
    out
}

fn meta_changes(before: &Meta, after: &Meta) -> Vec<String> {
    let mut out = Vec::new();
    for (path, old) in before {
        if crate::fixture::is_exempt(path) {
            continue;
        }
        match after.get(path) {
            None => out.push(format!("removed {path}")),
            Some(new) if new != old => out.push(format!("changed {path}")),
            Some(_) => {}
        }
    }
    for path in after.keys() {
        if !crate::fixture::is_exempt(path) && !before.contains_key(path) {
            out.push(format!("added {path}"));
        }
    }
    out
}

/// Empties `home` and `tmp` and copies `pristine` into `home`.
fn restore(pristine: &Path, home: &Path, tmp: &Path) -> std::io::Result<()> {
    for dir in [home, tmp] {
        for entry in std::fs::read_dir(dir)? {
            let path = entry?.path();
            let meta = std::fs::symlink_metadata(&path)?;
            if meta.is_dir() {
                // A case may have taken the write bit away.
                let _ = std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755));
                std::fs::remove_dir_all(&path)?;
            } else {
                std::fs::remove_file(&path)?;
            }
        }
    }
    copy_tree(pristine, home)
}

fn copy_tree(from: &Path, to: &Path) -> std::io::Result<()> {
    for entry in std::fs::read_dir(from)? {
        let entry = entry?;
        let src = entry.path();
        let dst = to.join(entry.file_name());
        let meta = std::fs::symlink_metadata(&src)?;
        if meta.file_type().is_symlink() {
            std::os::unix::fs::symlink(std::fs::read_link(&src)?, &dst)?;
        } else if meta.is_dir() {
            std::fs::create_dir(&dst)?;
            copy_tree(&src, &dst)?;
            std::fs::set_permissions(&dst, meta.permissions())?;
        } else {
            std::fs::copy(&src, &dst)?;
        }
    }
    Ok(())
}

// ------------------------------------------------------------------ alphabet

/// Whether an option takes a value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Arity {
    Flag,
    Value,
    Two,
    /// Not listed in the table: tried both ways.
    Unknown,
}

/// One program's options: the real program's (`--help`) and the table's.
#[derive(Debug, Clone, Default)]
pub struct Alphabet {
    shorts: Vec<(char, Arity)>,
    longs: Vec<(String, Arity)>,
}

fn table_arity(spec: &CommandSpec, short: Option<char>, long: Option<&str>) -> Arity {
    use vouch::shell::options::HasArg;
    let has = match (short, long) {
        (Some(c), _) => spec.options.short_arg(c),
        (None, Some(l)) => spec
            .options
            .long
            .iter()
            .find(|o| o.name == l)
            .map(|o| o.has_arg),
        (None, None) => None,
    };
    match has {
        Some(HasArg::No) => Arity::Flag,
        Some(HasArg::Required | HasArg::Optional) => Arity::Value,
        Some(HasArg::Two) => Arity::Two,
        None => Arity::Unknown,
    }
}

/// The real program's options from its help text, with the table's.
pub fn alphabet(program: &str, spec: &CommandSpec) -> Alphabet {
    let mut help = String::new();
    for flag in ["--help", "-h"] {
        let out = Command::new(program)
            .arg(flag)
            .stdin(Stdio::null())
            .output();
        if let Ok(out) = out {
            help.push_str(&String::from_utf8_lossy(&out.stdout));
            help.push_str(&String::from_utf8_lossy(&out.stderr));
        }
    }
    let mut shorts: Vec<char> = Vec::new();
    let mut longs: Vec<String> = Vec::new();
    let bytes: Vec<char> = help.chars().collect();
    for (i, c) in bytes.iter().enumerate() {
        if *c != '-' || i > 0 && !matches!(bytes[i - 1], ' ' | '\t' | '[' | ',' | '|' | '(' | '\n')
        {
            continue;
        }
        if bytes.get(i + 1) == Some(&'-') {
            let name: String = bytes[i + 2..]
                .iter()
                .take_while(|c| c.is_ascii_alphanumeric() || **c == '-')
                .collect();
            if name.len() > 1 && !longs.contains(&name) {
                longs.push(name);
            }
        } else if let Some(l) = bytes.get(i + 1).filter(|c| c.is_ascii_alphanumeric())
            && !bytes
                .get(i + 2)
                .is_some_and(|n| n.is_ascii_alphanumeric() && *l != 'p')
            && !shorts.contains(l)
        {
            shorts.push(*l);
        }
    }
    for c in spec
        .options
        .short
        .chars()
        .filter(|c| c.is_ascii_alphanumeric())
    {
        if !shorts.contains(&c) {
            shorts.push(c);
        }
    }
    for l in spec.options.long {
        if !longs.iter().any(|x| x == l.name) {
            longs.push(l.name.to_owned());
        }
    }
    Alphabet {
        shorts: shorts
            .into_iter()
            .map(|c| (c, table_arity(spec, Some(c), None)))
            .collect(),
        longs: longs
            .into_iter()
            .map(|l| {
                let arity = table_arity(spec, None, Some(&l));
                (l, arity)
            })
            .collect(),
    }
}

// ------------------------------------------------------------------ cases

/// A small deterministic generator (SplitMix64): the same case for the same
/// seed and index on every machine.
struct Rng(u64);

impl Rng {
    fn new(seed: u64, index: usize) -> Rng {
        Rng(seed ^ (index as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15))
    }
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: usize) -> usize {
        if n == 0 {
            0
        } else {
            (self.next() % n as u64) as usize
        }
    }
    fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }
    fn chance(&mut self, percent: u64) -> bool {
        self.next() % 100 < percent
    }
}

/// Values an option may be given.
const VALUES: &[&str] = &[
    "out.txt",
    "README.md",
    ".env",
    "docs/setup.txt",
    "1",
    "0",
    "3",
    "x",
    "sh",
    "-",
    "notes.txt",
    "sub/../.bashrc",
    "sub/credentials",
    "~/.aws/credentials",
    "src",
    "..",
    "/tmp/o",
    "a,b",
    "%s",
    "+%s",
    "touch RAN",
    "--",
    ".",
    "*",
    "/dev/null",
    "terraform.tfstate",
    "@opts",
];

/// Operands: files, trees, names like options, globs, symlinks and `..`.
const OPERANDS: &[&str] = &[
    "README.md",
    "README.md",
    "notes.txt",
    "src",
    "docs",
    ".",
    "src/main.rs",
    "data.json",
    ".env",
    "docs/setup.txt",
    "sub/../.bashrc",
    "sub/credentials",
    "sub",
    "--pre=sh",
    "./-o",
    "-o",
    "-rf",
    "--files0-from=.env",
    "--output=out.txt",
    "*",
    "*",
    "*.md",
    ".*",
    "src/*",
    "out.txt",
    "missing.txt",
    "-",
    "--",
    "@opts",
    "terraform.tfstate",
    ".git/config",
    "..",
    "~/.aws/credentials",
    "~/.bashrc",
    "/etc/hostname",
    "vendor/x",
    "'a b'",
];

/// Program texts, read-only and not, per dialect.
fn programs(dialect: Dialect) -> &'static [&'static str] {
    match dialect {
        Dialect::Pattern => &["TODO", "foo", "a", "'^#'", "-e", "'x|y'", "KEY", "''", "."],
        Dialect::Sed => &[
            "'1,5p'",
            "-n",
            "'s/a/b/'",
            "'w out.txt'",
            "':a w out.txt'",
            "'s/a/b/w out.txt'",
            "'1e touch RAN'",
            "'r .env'",
            "'1R .env'",
            "'$!N'",
            "'b end; w out.txt'",
            "'y/ab/cd/'",
            "'s/a/b/e'",
            "':x;n;bx'",
            "'W out.txt'",
            "p",
        ],
        Dialect::Awk => &[
            "'{print $1}'",
            "'NR==1'",
            "'END{print NR}'",
            "'BEGIN{system(\"touch RAN\")}'",
            "'{print > \"out.txt\"}'",
            "'{print | \"sh\"}'",
            "'BEGIN{print ENVIRON[\"VOUCH_FUZZ_TOKEN\"]}'",
            "'BEGIN { ARGV[1] = \".env\"; ARGC = 2 } { print }'",
            "'BEGIN{getline x < \".env\"; print x}'",
            "'{print FILENAME}'",
            "'BEGIN{while ((\"cat .env\" | getline l) > 0) print l}'",
        ],
        Dialect::Jq => &[
            ".",
            ".name",
            "'.items | length'",
            "keys",
            "'$ENV'",
            "env",
            "'env.VOUCH_FUZZ_TOKEN'",
            "input_filename",
            "'$__loc__'",
            "'import \"x\" as y; .'",
            "'[inputs]'",
            "length",
            "'.resources'",
            "'getpath([\"a\"])'",
            "-n",
        ],
    }
}

/// A long option's shortest unique prefix among the alphabet's (at least
/// two letters), when it is not the whole name.
fn abbreviation(name: &str, longs: &[(String, Arity)]) -> Option<String> {
    (2..name.len()).find_map(|n| {
        let prefix = name.get(..n)?;
        let unique = longs.iter().filter(|(l, _)| l.starts_with(prefix)).count() == 1;
        unique.then(|| prefix.to_owned())
    })
}

fn quote(word: &str) -> String {
    let bare = word
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || "-_./=,+%@:~*".contains(c));
    if bare || word.starts_with('\'') {
        word.to_owned()
    } else {
        format!("'{}'", word.replace('\'', "'\\''"))
    }
}

/// One option word (or two) in one of the forms a parser reads.
fn option_words(rng: &mut Rng, alpha: &Alphabet, out: &mut Vec<String>) {
    let long = !alpha.longs.is_empty() && (alpha.shorts.is_empty() || rng.chance(45));
    if long {
        let (name, arity) = rng.pick(&alpha.longs).clone();
        let spelled = match abbreviation(&name, &alpha.longs) {
            Some(abbr) if rng.chance(20) => abbr,
            _ => name.clone(),
        };
        let value = quote(rng.pick::<&str>(VALUES));
        let with_value = match arity {
            Arity::Flag => rng.chance(5),
            Arity::Value | Arity::Two => true,
            Arity::Unknown => rng.chance(50),
        };
        match (with_value, arity, rng.chance(50)) {
            (false, _, _) => out.push(format!("--{spelled}")),
            (true, Arity::Two, _) => {
                out.push(format!("--{spelled}"));
                out.push("v".to_owned());
                out.push(value);
            }
            (true, _, true) => out.push(format!("--{spelled}={value}")),
            (true, _, false) => {
                out.push(format!("--{spelled}"));
                out.push(value);
            }
        }
        return;
    }
    // A cluster of one to three letters, the last perhaps with a value.
    let letters = 1 + rng.below(3);
    let mut word = String::from("-");
    let mut trailing = Vec::new();
    for _ in 0..letters {
        let (c, arity) = *rng.pick(&alpha.shorts);
        word.push(c);
        if matches!(arity, Arity::Value | Arity::Two) || arity == Arity::Unknown && rng.chance(40) {
            let value = quote(rng.pick::<&str>(VALUES));
            if rng.chance(40) {
                word.push_str(&value);
                break;
            }
            trailing.push(value);
        }
    }
    out.push(word);
    out.extend(trailing);
}

/// The `index`th case of the run with `seed` over `programs`.
pub fn case(seed: u64, index: usize, programs_list: &[(String, Alphabet)]) -> Case {
    let mut rng = Rng::new(seed, index);
    let (program, alpha) = &programs_list[index % programs_list.len()];
    let Some(spec) = spec::lookup(program) else {
        return Case {
            index,
            program: program.clone(),
            command: program.clone(),
        };
    };
    let mut words: Vec<String> = vec![program.clone()];
    if program == "git" {
        return git_case(index, &mut rng);
    }
    if program == "find" {
        return find_case(index, &mut rng);
    }
    let options = rng.below(4);
    let mut operand_words = Vec::new();
    if let Operands::ProgramFirst { program: d, .. } = spec.operands {
        operand_words.push(rng.pick(programs(d)).to_string());
    }
    for _ in 0..rng.below(3) {
        operand_words.push(quote(rng.pick::<&str>(OPERANDS)));
    }
    for _ in 0..options {
        option_words(&mut rng, alpha, &mut words);
    }
    // Options after operands (GNU permutation) and `--` before them.
    if rng.chance(15) {
        words.push("--".to_owned());
    }
    let split = rng.below(operand_words.len() + 1);
    words.splice(1..1, Vec::<String>::new());
    let (first, second) = operand_words.split_at(split);
    words.extend(first.iter().cloned());
    if rng.chance(20) && !alpha.shorts.is_empty() {
        option_words(&mut rng, alpha, &mut words);
    }
    words.extend(second.iter().cloned());
    Case {
        index,
        program: program.clone(),
        command: words.join(" "),
    }
}

fn git_case(index: usize, rng: &mut Rng) -> Case {
    const GLOBAL: &[&str] = &[
        "",
        "",
        "",
        "-C vendor/x",
        "-C ../textconv",
        "-C ../extdiff",
        "-C bare.git",
        "-C ../partial",
        "-C ../bom",
        "-C ../comment",
        "--no-pager",
        "-P",
        "-c core.pager=cat",
        "--no-optional-locks",
        "--git-dir=bare.git",
        "-p",
    ];
    const SUBS: &[&str] = &[
        "status",
        "log",
        "show",
        "diff",
        "branch",
        "tag",
        "rev-parse",
        "ls-files",
        "ls-tree",
        "blame",
        "describe",
        "cat-file",
        "shortlog",
        "rev-list",
        "reflog",
        "remote",
        "count-objects",
        "for-each-ref",
        "show-ref",
        "name-rev",
        "stash list",
        "worktree list",
        "grep",
        "archive",
        "config",
        "fetch",
        "notes",
    ];
    const ARGS: &[&str] = &[
        "",
        "-1",
        "--oneline",
        "-p",
        "--stat",
        "HEAD",
        "HEAD:README.md",
        "--format=%G?",
        "--pretty=%H",
        "--output=out.txt",
        "--outp=out.txt",
        "--ext-diff",
        "--ext",
        "--textconv",
        "--no-index",
        "~/.aws/credentials /dev/null",
        ".env /dev/null",
        "-- README.md",
        "-s",
        "--porcelain",
        "-a",
        "-v",
        "newname",
        "--list",
        "-l",
        "--show-toplevel",
        "-O out.txt",
        "--no-ext-diff",
        "--all",
        "--sho",
        "--short",
        "README.md",
        "-t HEAD",
        "-p HEAD",
        "--show-signature",
        "--name-only",
        "--cached",
        "HEAD~1",
        "sub/../.bashrc",
        "--exec=sh",
    ];
    let mut words = vec!["git".to_owned()];
    let global = rng.pick(GLOBAL);
    if !global.is_empty() {
        words.push((*global).to_owned());
    }
    words.push((*rng.pick(SUBS)).to_owned());
    for _ in 0..rng.below(3) {
        let arg = rng.pick(ARGS);
        if !arg.is_empty() {
            words.push((*arg).to_owned());
        }
    }
    Case {
        index,
        program: "git".to_owned(),
        command: words.join(" "),
    }
}

fn find_case(index: usize, rng: &mut Rng) -> Case {
    const ROOTS: &[&str] = &[
        ".", "src", "..", "~", "sub", "sub/..", "-L .", "*", "-- .", "-H sub",
    ];
    const EXPR: &[&str] = &[
        "-name '*.md'",
        "-type f",
        "-maxdepth 1",
        "-print",
        "-print0",
        "-ls",
        "-printf '%p\\n'",
        "-newer README.md",
        "-empty",
        "-exec touch {}.x ;",
        "-execdir ls ;",
        "-ok ls ;",
        "-delete",
        "-fprint out.txt",
        "-fls out.txt",
        "-fprintf out.txt %p",
        "-files0-from .env",
        "-newerXY README.md",
        "-quit",
        "-prune",
        "! -name x",
        "-o -name y",
        "-follow",
        "-samefile .env",
        "-readable",
        "-regex '.*'",
    ];
    let mut words = vec!["find".to_owned(), (*rng.pick(ROOTS)).to_owned()];
    for _ in 0..rng.below(4) {
        words.push((*rng.pick(EXPR)).to_owned());
    }
    Case {
        index,
        program: "find".to_owned(),
        command: words.join(" ").replace(" ;", " \\;"),
    }
}

/// Whether program `name` is installed where the fuzzer looks for it.
pub fn installed(name: &str) -> bool {
    ["/usr/bin", "/bin", "/usr/local/bin"]
        .iter()
        .any(|d| Path::new(d).join(name).exists())
}

/// The programs the fuzzer exercises: the table's readers that are
/// installed here, `find` and `git`, each with its alphabet.
pub fn programs_under_test(filter: Option<&str>) -> Vec<(String, Alphabet)> {
    let mut out = Vec::new();
    for spec in spec::all() {
        let reader = matches!(spec.inert, Inert::Reader { .. } | Inert::Find | Inert::Git);
        if !reader {
            continue;
        }
        for name in spec.names {
            if filter.is_some_and(|f| !f.split(',').any(|n| n == *name)) {
                continue;
            }
            if installed(name) {
                out.push(((*name).to_owned(), alphabet(name, spec)));
            }
        }
    }
    out
}

/// The sandbox command for one batch.
pub fn batch_command(
    bwrap: &Path,
    driver: &Path,
    cases: &Path,
    pristine: &Path,
    home: &Path,
    tmp: &Path,
    confine: Option<&Path>,
) -> Command {
    let mut cmd = Command::new(bwrap);
    cmd.args(crate::sandbox::ISOLATION);
    cmd.args([
        "--tmpfs",
        "/run",
        "--dir",
        "/run/vouch-fuzz",
        "--dir",
        "/run/vouch-fuzz/work",
    ]);
    cmd.arg("--ro-bind").arg(driver).arg(DRIVER_PATH);
    cmd.arg("--ro-bind").arg(cases).arg(CASES_PATH);
    cmd.arg("--ro-bind").arg(pristine).arg(PRISTINE_PATH);
    if let Some(vouch) = confine {
        cmd.arg("--ro-bind").arg(vouch).arg(VOUCH_PATH);
    }
    cmd.arg("--bind").arg(tmp).arg("/tmp");
    cmd.arg("--bind").arg(home).arg(home);
    cmd.arg("--chdir")
        .arg(home.join("project"))
        .arg("--clearenv");
    cmd.args([
        "--setenv",
        "PATH",
        "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
    ]);
    cmd.arg("--setenv").arg("HOME").arg(home);
    cmd.args(["--setenv", "GIT_CONFIG_NOSYSTEM", "1"]);
    cmd.args(["--setenv", "LANG", "C.UTF-8"]);
    cmd.arg(DRIVER_PATH).arg(home).arg("/tmp");
    if confine.is_some() {
        cmd.arg("confine");
    }
    cmd.stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    cmd
}

/// Reads the driver's lines.
pub fn read_observed(out: impl Read) -> Vec<Observed> {
    std::io::BufReader::new(out)
        .lines()
        .map_while(Result::ok)
        .filter_map(|l| serde_json::from_str(&l).ok())
        .collect()
}

/// What the fuzzer counts per program.
#[derive(Debug, Default, Clone, Serialize)]
pub struct Tally {
    pub runs: usize,
    pub inert: usize,
    pub inert_bad: usize,
    pub refused: usize,
    pub refused_bad: usize,
    pub timed_out: usize,
    pub broken: usize,
}

/// The planted variant: what programs read on their own, added to a built
/// fixture home (`home/dev`).
pub fn plant(home: &Path) -> std::io::Result<()> {
    let write = |path: &str, text: &str| -> std::io::Result<()> {
        let path = home.join(path);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent)?;
        }
        std::fs::write(path, text)
    };
    write(
        ".jq",
        "def keys: $ENV.VOUCH_FUZZ_TOKEN;\ndef length: input_filename;\n",
    )?;
    write(
        ".magic",
        "0\tstring\tAPI_TOKEN=\tplanted magic %s\n0\tstring\t#\tplanted magic %s\n",
    )?;
    write("project/.ignore", "!.env\n")?;
    write("project/.rgignore", "!.env\n!.git\n")?;
    let hook = home.join("project/.git/hooks/post-index-change");
    std::fs::create_dir_all(hook.parent().unwrap_or(home))?;
    std::fs::write(&hook, "#!/bin/sh\ntouch HOOK_RAN\n")?;
    std::fs::set_permissions(&hook, std::fs::Permissions::from_mode(0o755))?;
    crate::fixture::extra_repositories(home)
}
