//! The recorder: what every external command is inside the sandbox.
//!
//! Each name on the sandbox's `PATH` (and under `/bin`, `/usr/bin`, …) is a
//! two-line script `#!/run/vouch-rec/recorder NAME`, so the kernel runs this
//! test binary as `recorder NAME PATH ARGS…`: the name it was looked up as,
//! the path bash executed, and the arguments bash passed. The recorder sends
//! them with its working directory over the sandbox's one Unix socket, waits
//! for the harness to acknowledge, and exits 0 — or, for the few programs
//! that only run other programs (`env`, `xargs`, `find`, shells, …), executes
//! the real one, whose own lookups land on recorders again.
//!
//! The log cannot be forged by the command under test: the harness accepts
//! a connection only when the peer process's executable is this very binary
//! (checked by inode through `SO_PEERCRED` and `/proc/PID/exe`), bash cannot
//! open a Unix socket, and nothing on the sandbox's `PATH` is a real program
//! that could.

use std::io::{BufRead, BufReader, Write};
use std::os::unix::net::UnixStream;
use std::os::unix::process::CommandExt;
use std::process::Command;

use serde::{Deserialize, Serialize};

/// Where the test binary is mounted inside the sandbox. The recorder knows
/// it is the recorder when it runs from here.
pub const RECORDER_PATH: &str = "/run/vouch-rec/recorder";
/// The socket the harness listens on, as the sandbox sees it.
pub const SOCKET_PATH: &str = "/run/vouch-rec/sock";
/// The host's `/usr/bin`, for the programs that run for real.
pub const REAL_BIN: &str = "/run/vouch-rec/real";

/// Programs that run other programs and are harmless in the sandbox: they
/// are recorded and then executed for real, so what they run is recorded
/// too. `base64` only decodes text, and runs for real so that a decoded
/// payload (`eval "$(printf %s … | base64 -d)"`) reaches bash. Everything
/// else only records.
pub const PASS_THROUGH: &[&str] = &[
    "bash", "sh", "dash", "env", "nice", "nohup", "timeout", "stdbuf", "setsid", "xargs", "find",
    "flock", "ionice", "base64",
];

/// One execution, as the recorder reports it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Record {
    /// The name the program was installed under (`rm` for `/bin/rm`).
    pub name: String,
    /// The path bash executed (`/usr/bin/rm`, `/bin/rm`).
    pub path: String,
    /// The arguments after `argv[0]`.
    pub args: Vec<String>,
    /// The working directory it ran in.
    pub cwd: String,
}

/// A message on the socket: an execution, or the harness's own end-of-run
/// marker.
#[derive(Debug, Serialize, Deserialize)]
pub enum Message {
    Exec(Record),
    Barrier(u64),
}

/// True when this process is the recorder inside the sandbox.
pub fn invoked_as_recorder() -> bool {
    std::env::current_exe().is_ok_and(|p| p == std::path::Path::new(RECORDER_PATH))
}

/// The recorder's whole life. Exits 0 after recording, or becomes the real
/// program for [`PASS_THROUGH`] names; exits 126 when it cannot report, so a
/// lost record is visible as a failed command, never as silence.
pub fn run() -> ! {
    run_with(|name| {
        (
            name.to_owned(),
            PASS_THROUGH
                .contains(&name)
                .then(|| std::path::PathBuf::from(format!("{REAL_BIN}/{name}"))),
        )
    })
}

/// The recorder, with `resolve` turning the script's one argument into the
/// program's name and the real program to execute after recording (none:
/// exit 0). The inert harness (`tests/inert_differential/`) runs every
/// program for real this way.
pub fn run_with(resolve: impl Fn(&str) -> (String, Option<std::path::PathBuf>)) -> ! {
    let argv: Vec<String> = std::env::args_os()
        .map(|a| a.to_string_lossy().into_owned())
        .collect();
    let (Some(arg), Some(path)) = (argv.get(1), argv.get(2)) else {
        eprintln!("vouch recorder: invoked without a name");
        std::process::exit(126);
    };
    let (name, real) = resolve(arg);
    let args: Vec<String> = argv.get(3..).unwrap_or(&[]).to_vec();
    let cwd = std::env::current_dir()
        .map(|d| d.to_string_lossy().into_owned())
        .unwrap_or_else(|e| format!("<getcwd failed: {e}>"));
    let record = Record {
        name: name.clone(),
        path: path.clone(),
        args: args.clone(),
        cwd,
    };
    if let Err(e) = report(&record) {
        eprintln!("vouch recorder: cannot report `{name}`: {e}");
        std::process::exit(126);
    }
    if let Some(real) = real {
        let err = Command::new(&real).arg0(&name).args(&args).exec();
        eprintln!(
            "vouch recorder: cannot run the real `{name}` ({}): {err}",
            real.display()
        );
        std::process::exit(126);
    }
    std::process::exit(0);
}

fn report(record: &Record) -> std::io::Result<()> {
    let mut stream = UnixStream::connect(SOCKET_PATH)?;
    let mut line = serde_json::to_string(&Message::Exec(record.clone()))?;
    line.push('\n');
    stream.write_all(line.as_bytes())?;
    // Wait for the acknowledgement, so the harness has read `/proc` while
    // this process still exists, and records arrive before bash moves on.
    let mut ack = String::new();
    BufReader::new(stream).read_line(&mut ack)?;
    if ack.trim() == "ok" {
        Ok(())
    } else {
        Err(std::io::Error::other(format!(
            "harness answered `{}`",
            ack.trim()
        )))
    }
}
