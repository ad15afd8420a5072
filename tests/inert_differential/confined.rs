//! Confined against unconfined (issue 42): every command vouch calls inert
//! runs twice in bubblewrap over a fresh copy of the fixture home — as the
//! agent wrote it, and in its confined form (`vouch confine -- bash -c
//! …`) — and the two must print the same bytes on standard output and end
//! with the same status.
//!
//! The documented exceptions (docs/confine.md, "What changes for the
//! command"), each counted and reported, never silently dropped:
//!
//! - **refused read**: the confined run was refused a read ("Permission
//!   denied" on standard error where the unconfined one had none) — a
//!   file outside the readable trees (the home outside the project,
//!   `/tmp`), or a sensitive one (`.env`, the fixture's fake credentials);
//! - **not reproducible**: two unconfined runs already differ (`date`,
//!   `$$`, timings), so no comparison is possible;
//! - **timed out**: a run did not end within the harness's 10 s.
//!
//! Anything else that differs is a failure.

use std::io::Read;
use std::process::{Command, Stdio};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use crate::sandbox;
use crate::{Harness, Slot};

/// How long one run may take before it is killed.
const RUN_TIMEOUT: Duration = Duration::from_secs(10);

/// What one run printed and how it ended (`None`: killed for time).
#[derive(Debug, Clone, PartialEq, Eq)]
struct Ran {
    stdout: Vec<u8>,
    stderr: String,
    status: Option<i32>,
}

/// How one comparison came out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    Identical,
    RefusedRead,
    NotReproducible,
    TimedOut,
    Differs,
}

/// Counts of each outcome, the differences in full, and every command
/// that was not identical with its outcome (written to a file to read).
#[derive(Default)]
pub struct Compared {
    pub counts: Mutex<[usize; 5]>,
    pub differences: Mutex<Vec<String>>,
    pub not_identical: Mutex<Vec<(Outcome, String)>>,
}

impl Compared {
    pub fn record(&self, outcome: Outcome, detail: impl FnOnce() -> String) {
        let detail = detail();
        if outcome != Outcome::Identical
            && let Ok(mut all) = self.not_identical.lock()
        {
            all.push((outcome, detail.clone()));
        }
        if let Ok(mut counts) = self.counts.lock() {
            let slot = match outcome {
                Outcome::Identical => 0,
                Outcome::RefusedRead => 1,
                Outcome::NotReproducible => 2,
                Outcome::TimedOut => 3,
                Outcome::Differs => 4,
            };
            counts[slot] += 1;
        }
        if outcome == Outcome::Differs
            && let Ok(mut d) = self.differences.lock()
        {
            d.push(detail);
        }
    }

    pub fn summary(&self, what: &str, seconds: f64) -> String {
        let c = self.counts.lock().map(|c| *c).unwrap_or_default();
        format!(
            "{what}: {} compared confined and unconfined: {} identical, {} refused a read \
             (documented), {} not reproducible unconfined, {} timed out, {} differ ({seconds:.0} s)",
            c.iter().sum::<usize>(),
            c[0],
            c[1],
            c[2],
            c[3],
            c[4]
        )
    }
}

/// Runs `command` in `slot` (a fresh copy each time), confined or not.
fn run(harness: &Harness, slot: &Slot, command: &str, confined: bool) -> Result<Ran, String> {
    slot.refresh(&harness.fixture_home)?;
    let mut cmd = Command::new("bwrap");
    cmd.args(sandbox::ISOLATION);
    cmd.arg("--bind").arg(&slot.tmp).arg("/tmp");
    cmd.arg("--bind").arg(&slot.home).arg(&slot.home);
    cmd.arg("--chdir").arg(&slot.project).arg("--clearenv");
    cmd.args(["--setenv", "PATH", "/usr/local/bin:/usr/bin:/bin"]);
    cmd.arg("--setenv").arg("HOME").arg(&slot.home);
    cmd.args(["--setenv", "GIT_CONFIG_NOSYSTEM", "1"]);
    cmd.args(["--setenv", "LANG", "C.UTF-8"]);
    if confined {
        cmd.arg(env!("CARGO_BIN_EXE_vouch")).args(["confine", "--"]);
    }
    cmd.args(["/bin/bash", "-c", command]);
    cmd.stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = cmd.spawn().map_err(|e| format!("bwrap: {e}"))?;
    let mut stdout = child.stdout.take().ok_or("no stdout")?;
    let mut stderr = child.stderr.take().ok_or("no stderr")?;
    let out = std::thread::spawn(move || {
        let mut buf = Vec::new();
        let _ = stdout.read_to_end(&mut buf);
        buf
    });
    let err = std::thread::spawn(move || {
        let mut buf = Vec::new();
        let _ = stderr.read_to_end(&mut buf);
        buf
    });
    let started = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().map_err(|e| e.to_string())? {
            break Some(status.code().unwrap_or(-1));
        }
        if started.elapsed() > RUN_TIMEOUT {
            let _ = child.kill();
            let _ = child.wait();
            break None;
        }
        std::thread::sleep(Duration::from_millis(2));
    };
    Ok(Ran {
        stdout: out.join().unwrap_or_default(),
        stderr: String::from_utf8_lossy(&err.join().unwrap_or_default()).into_owned(),
        status,
    })
}

/// Compares `command` confined and unconfined in `slot`.
pub fn compare(harness: &Harness, slot: &Slot, command: &str, into: &Compared) {
    let runs = (|| {
        let bare = run(harness, slot, command, false)?;
        let confined = run(harness, slot, command, true)?;
        Ok::<_, String>((bare, confined))
    })();
    let (bare, confined) = match runs {
        Ok(r) => r,
        Err(e) => {
            into.record(Outcome::Differs, || {
                format!("`{command}`: the harness failed: {e}")
            });
            return;
        }
    };
    let outcome = if bare.status.is_none() || confined.status.is_none() {
        Outcome::TimedOut
    } else if bare.stdout == confined.stdout && bare.status == confined.status {
        Outcome::Identical
    } else if confined.stderr.contains("Permission denied")
        && !bare.stderr.contains("Permission denied")
    {
        Outcome::RefusedRead
    } else {
        match run(harness, slot, command, false) {
            Ok(again) if again.stdout != bare.stdout || again.status != bare.status => {
                Outcome::NotReproducible
            }
            Ok(_) | Err(_) => Outcome::Differs,
        }
    };
    into.record(outcome, || {
        if outcome == Outcome::Identical {
            return String::new();
        }
        format!(
            "`{command}`\n  unconfined: status {:?}, stdout {:?}\n  confined:   status {:?}, \
             stdout {:?}, stderr {:?}",
            bare.status,
            String::from_utf8_lossy(&bare.stdout),
            confined.status,
            String::from_utf8_lossy(&confined.stdout),
            confined.stderr
        )
    });
}

/// Whether `vouch confine` can run in the sandbox here (Landlock inside a
/// user namespace): `Err` with its refusal when not.
pub fn available(harness: &Harness) -> Result<(), String> {
    let slot = &harness.slots[0];
    let ran = run(harness, slot, "echo confined", true)?;
    match (ran.status, ran.stdout.as_slice()) {
        (Some(0), b"confined\n") => Ok(()),
        _ => Err(format!("{:?}: {}", ran.status, ran.stderr.trim())),
    }
}
