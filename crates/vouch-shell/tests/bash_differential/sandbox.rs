//! Real bash in a bubblewrap sandbox, with every external command a recorder.
//!
//! The sandbox has a read-only root, tmpfs `HOME` (`/home/dev`, with a
//! project at `/home/dev/project`) and `/tmp`, no network, its own PID
//! namespace, and a clean environment. Every bin directory is one directory
//! of recorder scripts (see [`crate::recorder`]), so `rm`, `/bin/rm`,
//! `/usr/bin/rm` and `command -p rm` all land on a recorder; shells and the
//! programs that only run other programs run for real after recording.

use std::collections::BTreeSet;
use std::io::{BufRead, BufReader, Read, Write};
use std::os::unix::fs::MetadataExt;
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::thread;
use std::time::{Duration, Instant};

use crate::recorder::{Message, PASS_THROUGH, REAL_BIN, RECORDER_PATH, Record, SOCKET_PATH};

/// The request's home and cwd for every run: vouch is told the same.
pub const HOME: &str = "/home/dev";
pub const CWD: &str = "/home/dev/project";

/// Directories that exist in the sandbox, so `cd` into them works and globs
/// have something to match.
const SKELETON: &[&str] = &[
    "/home/dev/project/src",
    "/home/dev/project/build",
    "/home/dev/project/dist",
    "/home/dev/project/.cache",
    "/home/dev/project/a.txt",
    "/home/dev/project/b.txt",
    "/home/dev/.ssh",
    "/home/dev/.config",
    "/tmp/x",
    "/tmp/build",
];

/// Names the generator and the corpora use that a host may lack; they get a
/// recorder anyway, so `sudo` is an execution, not "command not found".
pub const EXTRA_NAMES: &[&str] = &[
    "sudo",
    "doas",
    "parallel",
    "busybox",
    "rsync",
    "curl",
    "wget",
    "git",
    "nc",
    "socat",
    "scp",
    "sftp",
    "ssh",
    "sqlite3",
    "python3",
    "node",
    "perl",
    "ruby",
    "mkfs.ext4",
    "wipefs",
    "sfdisk",
    "parted",
    "shred",
    "sponge",
    "jq",
    "zip",
    "unzip",
    "gh",
    "aws",
    "kubectl",
    "helm",
    "npm",
    "pip",
    "rm",
    "cp",
    "mv",
    "cat",
    "ls",
    "touch",
    "mkdir",
    "chmod",
    "dd",
    "tee",
    "grep",
    "sed",
    "awk",
];

/// The sandbox both differential harnesses start bash in: its own user,
/// PID, network, IPC and UTS namespaces, a read-only root, fresh `/dev`
/// and `/proc`, ended with the test.
pub const ISOLATION: [&str; 15] = [
    "--unshare-user",
    "--unshare-pid",
    "--unshare-net",
    "--unshare-ipc",
    "--unshare-uts",
    "--unshare-cgroup-try",
    "--die-with-parent",
    "--new-session",
    "--ro-bind",
    "/",
    "/",
    "--dev",
    "/dev",
    "--proc",
    "/proc",
];

/// How long one command may run before it is killed and counted as a
/// timeout (generated commands never loop; this is a backstop).
const RUN_TIMEOUT: Duration = Duration::from_secs(10);
/// How much of a run's stderr is kept for diagnostics.
const STDERR_LIMIT: usize = 8 * 1024;

/// Why the sandbox cannot run here (no bubblewrap, no user namespaces),
/// naming what to install or allow.
#[derive(Debug, Clone)]
pub struct Unavailable(pub String);

/// bubblewrap is not on `PATH`.
pub const NO_BWRAP: &str =
    "bubblewrap (`bwrap`) is not installed: `apt-get install bubblewrap` (.ci/run does)";

/// bubblewrap is there but its probe run failed.
pub fn cannot_start(ending: Ending, stderr: &str) -> String {
    format!(
        "bubblewrap cannot start the sandbox here: {ending:?}, stderr: {}; it needs unprivileged user namespaces (`sysctl kernel.unprivileged_userns_clone=1`, or run as root)",
        stderr.trim()
    )
}

/// How a run ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ending {
    Exited(Option<i32>),
    TimedOut,
}

/// What bash really ran for one command.
#[derive(Debug, Clone)]
pub struct Run {
    pub records: Vec<Record>,
    pub ending: Ending,
    pub stderr: String,
    /// Connections refused because the peer was not the recorder, and
    /// messages that did not parse: each one makes the run untrustworthy.
    pub rejected: Vec<String>,
}

pub struct Sandbox {
    dir: tempfile::TempDir,
    bwrap: PathBuf,
    recorder: PathBuf,
    recorder_id: (u64, u64),
    runs: AtomicU64,
}

impl Sandbox {
    /// Prepares the recorder scripts and checks that a sandbox really starts.
    pub fn new() -> Result<Sandbox, Unavailable> {
        let bwrap = find_on_path("bwrap").ok_or_else(|| Unavailable(NO_BWRAP.to_owned()))?;
        let recorder = std::env::current_exe()
            .map_err(|e| Unavailable(format!("cannot find the test binary: {e}")))?;
        let meta = std::fs::metadata(&recorder)
            .map_err(|e| Unavailable(format!("cannot stat the test binary: {e}")))?;
        let dir = tempfile::Builder::new()
            .prefix("vouch-bash-diff-")
            .tempdir()
            .map_err(|e| Unavailable(format!("no temp dir: {e}")))?;
        write_recorders(&dir.path().join("bin"))
            .map_err(|e| Unavailable(format!("cannot write recorder scripts: {e}")))?;
        let sandbox = Sandbox {
            dir,
            bwrap,
            recorder,
            recorder_id: (meta.dev(), meta.ino()),
            runs: AtomicU64::new(0),
        };
        let probe = sandbox.run("echo probe; /bin/true");
        let recorded_true = probe.records.iter().any(|r| r.name == "true");
        if probe.ending != Ending::Exited(Some(0)) || !recorded_true || !probe.rejected.is_empty() {
            return Err(Unavailable(cannot_start(probe.ending, &probe.stderr)));
        }
        Ok(sandbox)
    }

    /// Runs `command` as `bash -c` in a fresh sandbox and returns what ran.
    pub fn run(&self, command: &str) -> Run {
        let n = self.runs.fetch_add(1, Ordering::Relaxed);
        let socket = self.dir.path().join(format!("sock-{n}"));
        run_recorded(&socket, n, self.recorder_id, self.command(&socket, command))
    }

    fn command(&self, socket: &Path, script: &str) -> Command {
        let bin = self.dir.path().join("bin");
        let mut cmd = Command::new(&self.bwrap);
        cmd.args(ISOLATION);
        cmd.args([
            "--tmpfs",
            "/tmp",
            "--tmpfs",
            "/home",
            "--tmpfs",
            "/run",
            "--dir",
            "/run/vouch-rec",
        ]);
        cmd.arg("--ro-bind").arg(&self.recorder).arg(RECORDER_PATH);
        cmd.args(["--ro-bind", "/usr/bin", REAL_BIN]);
        cmd.arg("--bind").arg(socket).arg(SOCKET_PATH);
        for dir in bin_dirs() {
            cmd.arg("--ro-bind").arg(&bin).arg(dir);
        }
        for dir in SKELETON {
            cmd.args(["--dir", dir]);
        }
        cmd.args(["--chdir", CWD, "--clearenv"]);
        cmd.args([
            "--setenv",
            "PATH",
            "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
        ]);
        cmd.args(["--setenv", "HOME", HOME, "--setenv", "LANG", "C.UTF-8"]);
        cmd.arg(format!("{REAL_BIN}/bash"));
        cmd.args(["--norc", "--noprofile", "-c", script]);
        cmd.stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped());
        cmd
    }
}

/// Runs one sandbox command line (`bwrap`, already told to bind `socket`
/// at [`SOCKET_PATH`]) as run `n`, collecting what the recorders whose
/// executable is `recorder_id` report. Shared with the inert harness
/// (`tests/inert_differential/`), whose sandbox differs only in its mounts.
pub fn run_recorded(socket: &Path, n: u64, recorder_id: (u64, u64), mut sandbox: Command) -> Run {
    let listener = match UnixListener::bind(socket) {
        Ok(l) => l,
        Err(e) => return failed_run(format!("cannot bind {}: {e}", socket.display())),
    };
    let collector = thread::spawn(move || collect(&listener, recorder_id, n));
    let mut child = match sandbox.spawn() {
        Ok(c) => c,
        Err(e) => {
            barrier(socket, n);
            let _ = collector.join();
            return failed_run(format!("cannot start bwrap: {e}"));
        }
    };
    let stderr_reader = child.stderr.take().map(|mut pipe| {
        thread::spawn(move || {
            let mut buf = Vec::new();
            let _ = (&mut pipe).take(STDERR_LIMIT as u64).read_to_end(&mut buf);
            // Drain the rest so the child never blocks on a full pipe.
            let _ = std::io::copy(&mut pipe, &mut std::io::sink());
            String::from_utf8_lossy(&buf).into_owned()
        })
    });
    let deadline = Instant::now() + RUN_TIMEOUT;
    let ending = loop {
        match child.try_wait() {
            Ok(Some(status)) => break Ending::Exited(status.code()),
            Ok(None) if Instant::now() >= deadline => {
                let _ = child.kill();
                let _ = child.wait();
                break Ending::TimedOut;
            }
            Ok(None) => thread::sleep(Duration::from_millis(1)),
            Err(_) => break Ending::Exited(None),
        }
    };
    barrier(socket, n);
    let (records, rejected) = collector
        .join()
        .unwrap_or_else(|_| (Vec::new(), vec!["collector panicked".to_owned()]));
    let stderr = stderr_reader
        .and_then(|h| h.join().ok())
        .unwrap_or_default();
    let _ = std::fs::remove_file(socket);
    Run {
        records,
        ending,
        stderr,
        rejected,
    }
}

fn failed_run(reason: String) -> Run {
    Run {
        records: Vec::new(),
        ending: Ending::Exited(None),
        stderr: reason.clone(),
        rejected: vec![reason],
    }
}

/// The bin directories the recorder directory is mounted over: the usual
/// four, plus `/bin` and `/sbin` where they are real directories rather
/// than links into `/usr`.
pub fn bin_dirs() -> Vec<&'static str> {
    let mut dirs = vec!["/usr/bin", "/usr/sbin", "/usr/local/bin", "/usr/local/sbin"];
    for dir in ["/bin", "/sbin"] {
        if std::fs::symlink_metadata(dir).is_ok_and(|m| m.is_dir()) {
            dirs.push(dir);
        }
    }
    dirs.retain(|d| Path::new(d).is_dir());
    dirs
}

pub fn find_on_path(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|d| d.join(name))
        .find(|p| p.is_file())
}

/// One recorder script per program name found in the host's bin
/// directories, plus [`EXTRA_NAMES`] and [`PASS_THROUGH`].
fn write_recorders(bin: &Path) -> std::io::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    std::fs::create_dir_all(bin)?;
    let mut names: BTreeSet<String> = EXTRA_NAMES
        .iter()
        .chain(PASS_THROUGH)
        .map(|s| (*s).to_owned())
        .collect();
    for dir in [
        "/usr/bin",
        "/usr/sbin",
        "/usr/local/bin",
        "/usr/local/sbin",
        "/bin",
        "/sbin",
    ] {
        if let Ok(entries) = std::fs::read_dir(dir) {
            for entry in entries.flatten() {
                let name = entry.file_name().to_string_lossy().into_owned();
                if !name.contains(char::is_whitespace) {
                    names.insert(name);
                }
            }
        }
    }
    for name in names {
        let path = bin.join(&name);
        std::fs::write(&path, format!("#!{RECORDER_PATH} {name}\n"))?;
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755))?;
    }
    Ok(())
}

/// Accepts connections until the harness's own barrier for run `n` arrives;
/// returns the records and the reasons for any rejected connection.
fn collect(listener: &UnixListener, recorder_id: (u64, u64), n: u64) -> (Vec<Record>, Vec<String>) {
    let mut records = Vec::new();
    let mut rejected = Vec::new();
    for stream in listener.incoming() {
        let Ok(stream) = stream else { continue };
        match check_peer(&stream, recorder_id) {
            Peer::Recorder => {}
            // Killed with its sandbox before it could be looked at (`cmd &`
            // as the script's last word): it was never acknowledged, so the
            // program it stands for never ran — as a recorder killed
            // mid-report below.
            Peer::Gone => continue,
            Peer::Rejected(why) => {
                rejected.push(why);
                continue;
            }
        }
        let _ = stream.set_read_timeout(Some(Duration::from_secs(2)));
        let mut line = String::new();
        let mut reader = BufReader::new(&stream);
        match reader.read_line(&mut line) {
            // A recorder killed mid-report (its sandbox ended): nothing ran
            // that we could vouch for.
            Ok(0) | Err(_) => continue,
            Ok(_) => {}
        }
        match serde_json::from_str::<Message>(&line) {
            Ok(Message::Exec(record)) => {
                records.push(record);
                let _ = (&stream).write_all(b"ok\n");
            }
            Ok(Message::Barrier(b)) if b == n => break,
            Ok(Message::Barrier(b)) => rejected.push(format!("barrier {b} during run {n}")),
            Err(e) => rejected.push(format!("unparsable message `{}`: {e}", line.trim())),
        }
    }
    (records, rejected)
}

/// Who is at the other end of a connection.
enum Peer {
    /// A process whose executable is the recorder.
    Recorder,
    /// A process that exited before it could be looked at.
    Gone,
    /// Anything else, and why.
    Rejected(String),
}

/// The peer must be a process whose executable is the recorder (this test
/// binary), identified by device and inode.
fn check_peer(stream: &UnixStream, recorder_id: (u64, u64)) -> Peer {
    let cred = match rustix::net::sockopt::socket_peercred(stream) {
        Ok(cred) => cred,
        Err(e) => return Peer::Rejected(format!("no peer credentials: {e}")),
    };
    let pid = cred.pid.as_raw_nonzero().get();
    match std::fs::metadata(format!("/proc/{pid}/exe")) {
        Ok(meta) if (meta.dev(), meta.ino()) == recorder_id => Peer::Recorder,
        Ok(_) => Peer::Rejected(format!("peer {pid} is not the recorder")),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Peer::Gone,
        Err(e) => Peer::Rejected(format!("peer {pid}: cannot stat its executable: {e}")),
    }
}

/// Ends run `n`'s collection: every recorder of that run has either been
/// acknowledged or died with its sandbox before this connection is accepted.
fn barrier(socket: &Path, n: u64) {
    if let Ok(mut stream) = UnixStream::connect(socket)
        && let Ok(mut line) = serde_json::to_string(&Message::Barrier(n))
    {
        line.push('\n');
        let _ = stream.write_all(line.as_bytes());
    }
}
