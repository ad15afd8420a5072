//! Real bash in bubblewrap over a fresh copy of the fixture, where every
//! program really runs and is recorded first.
//!
//! The sandbox is the differential harness's
//! (`crates/vouch-shell/tests/bash_differential/`):
//! a read-only root, no network (`--unshare-net`), its own PID namespace,
//! a clean environment, and every bin directory (`/usr/bin`, `/bin`,
//! `/usr/local/bin`, …) one directory of recorder scripts. Here each script
//! names the real program too (`#!/run/vouch-rec/recorder NAME=PATH`, the
//! host's file with its symlinks resolved, found under the host's `/usr`
//! mounted at `/run/vouch-rec/real/usr`), so the recorder reports the
//! execution and then executes the real program: a write really happens
//! and a program run by a program (git's fsmonitor through `sh`) is
//! recorded too. Two directories are writable: the slot's copy of the
//! fixture home, mounted at the path vouch was told, and an empty `/tmp`.
//!
//! `zsh` is rarely installed; where it is not, its script runs in the real
//! bash (vouch reads a `zsh -lc` script as bash too).

use std::collections::BTreeSet;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};

use crate::recorder::{RECORDER_PATH, SOCKET_PATH};
use crate::sandbox::{self, Run, Unavailable};

/// Where the host's `/usr` is mounted inside the sandbox, for the real
/// programs.
pub const REAL_ROOT: &str = "/run/vouch-rec/real";

/// The standard `PATH` inside the sandbox.
const PATH: &str = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";

/// The recorder's resolution of its script argument `NAME=PATH` (`NAME`
/// alone: not installed, record only).
pub fn resolve(arg: &str) -> (String, Option<PathBuf>) {
    match arg.split_once('=') {
        Some((name, real)) => (name.to_owned(), Some(PathBuf::from(real))),
        None => (arg.to_owned(), None),
    }
}

/// The sandbox's fixed parts: bubblewrap, the recorder binary and the
/// directory of recorder scripts.
pub struct Sandbox {
    dir: PathBuf,
    bwrap: PathBuf,
    recorder: PathBuf,
    recorder_id: (u64, u64),
    real_bash: String,
    runs: AtomicU64,
}

impl Sandbox {
    /// Writes the recorder scripts under `dir`.
    pub fn new(dir: &Path) -> Result<Sandbox, Unavailable> {
        let bwrap = sandbox::find_on_path("bwrap")
            .ok_or_else(|| Unavailable(sandbox::NO_BWRAP.to_owned()))?;
        let recorder = std::env::current_exe()
            .map_err(|e| Unavailable(format!("cannot find the test binary: {e}")))?;
        let meta = std::fs::metadata(&recorder)
            .map_err(|e| Unavailable(format!("cannot stat the test binary: {e}")))?;
        let real_bash = real_path("/usr/bin/bash")
            .or_else(|| real_path("/bin/bash"))
            .ok_or_else(|| Unavailable("no bash under /usr".to_owned()))?;
        write_recorders(&dir.join("bin"), &real_bash)
            .map_err(|e| Unavailable(format!("cannot write recorder scripts: {e}")))?;
        Ok(Sandbox {
            dir: dir.to_owned(),
            bwrap,
            recorder,
            recorder_id: (meta.dev(), meta.ino()),
            real_bash,
            runs: AtomicU64::new(0),
        })
    }

    /// Runs `command` as `bash -c` in `cwd`, with `home` (the slot's copy
    /// of the fixture home) and `tmp` writable.
    pub fn run(&self, command: &str, home: &Path, cwd: &Path, tmp: &Path) -> Run {
        let n = self.runs.fetch_add(1, Ordering::Relaxed);
        let socket = self.dir.join(format!("sock-{n}"));
        let mut cmd = Command::new(&self.bwrap);
        cmd.args(sandbox::ISOLATION);
        cmd.args(["--tmpfs", "/run", "--dir", "/run/vouch-rec"]);
        cmd.arg("--bind").arg(tmp).arg("/tmp");
        cmd.arg("--ro-bind").arg(&self.recorder).arg(RECORDER_PATH);
        cmd.arg("--ro-bind")
            .arg("/usr")
            .arg(format!("{REAL_ROOT}/usr"));
        cmd.arg("--bind").arg(&socket).arg(SOCKET_PATH);
        for dir in sandbox::bin_dirs() {
            cmd.arg("--ro-bind").arg(self.dir.join("bin")).arg(dir);
        }
        cmd.arg("--bind").arg(home).arg(home);
        cmd.arg("--chdir").arg(cwd).arg("--clearenv");
        cmd.args(["--setenv", "PATH", PATH]);
        cmd.arg("--setenv").arg("HOME").arg(home);
        // vouch is told the system configuration does not exist.
        cmd.args(["--setenv", "GIT_CONFIG_NOSYSTEM", "1"]);
        cmd.args(["--setenv", "LANG", "C.UTF-8"]);
        cmd.arg(&self.real_bash);
        cmd.args(["--norc", "--noprofile", "-c", command]);
        cmd.stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped());
        sandbox::run_recorded(&socket, n, self.recorder_id, cmd)
    }
}

/// A host program's file, symlinks resolved, as the sandbox sees it (under
/// [`REAL_ROOT`]); none outside `/usr`.
fn real_path(host: &str) -> Option<String> {
    let real = std::fs::canonicalize(host).ok()?;
    let real = real.to_str()?;
    real.starts_with("/usr/")
        .then(|| format!("{REAL_ROOT}{real}"))
}

/// One script per program name in the host's bin directories, plus the
/// differential harness's extra names (network clients among them).
fn write_recorders(bin: &Path, real_bash: &str) -> std::io::Result<()> {
    std::fs::create_dir_all(bin)?;
    let mut names: BTreeSet<String> = sandbox::EXTRA_NAMES
        .iter()
        .map(|s| (*s).to_owned())
        .collect();
    names.insert("zsh".to_owned());
    let dirs = [
        "/usr/local/sbin",
        "/usr/local/bin",
        "/usr/sbin",
        "/usr/bin",
        "/sbin",
        "/bin",
    ];
    for dir in dirs {
        if let Ok(entries) = std::fs::read_dir(dir) {
            for entry in entries.flatten() {
                let name = entry.file_name().to_string_lossy().into_owned();
                if !name.contains(char::is_whitespace) && !name.contains('=') {
                    names.insert(name);
                }
            }
        }
    }
    for name in names {
        // The first one on PATH, as bash would find it.
        let real = dirs
            .iter()
            .find_map(|dir| real_path(&format!("{dir}/{name}")))
            .or_else(|| (name == "zsh").then(|| real_bash.to_owned()));
        let arg = match real {
            Some(real) => format!("{name}={real}"),
            None => name.clone(),
        };
        let path = bin.join(&name);
        std::fs::write(&path, format!("#!{RECORDER_PATH} {arg}\n"))?;
        std::fs::set_permissions(&path, std::os::unix::fs::PermissionsExt::from_mode(0o755))?;
    }
    Ok(())
}
