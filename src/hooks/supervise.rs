//! `vouch hook <harness>` decides in a supervised worker: a child process
//! of this same binary (`/proc/self/exe hook-worker …`) reads the harness's
//! input, decides and writes its reply; this process only passes the input
//! on, waits with a deadline and checks the reply. Any abnormal end of the
//! decision — a signal (a stack overflow or `abort` is `SIGABRT`, a memory
//! kill `SIGKILL`), an exit without a reply, garbage on its output, a hang
//! past the deadline — becomes the harness's fail-closed reply, and the
//! exit code is 0 whatever happened: a harness reads a crashed hook as "run
//! the tool" (Codex ran `rm -rf ~` after a hook aborted, issue 43).
//!
//! The supervisor must not be able to crash on the input, so it does as
//! little as possible: it never parses the input, loads no configuration
//! and sets up no logging. It copies at most the request limit of standard
//! input to the worker (the worker refuses a larger one), reads the
//! worker's frames (one JSON object a line: `{"event": NAME}` once the
//! event is known, then `{"reply": REPLY}`), forwards the reply as soon as
//! it is complete (the worker writes the audit record after it), and waits
//! for the worker's exit. Nothing in the hook's environment, which the
//! project can set, changes any of this: the worker is this process's own
//! executable (`/proc/self/exe`, not a path from `PATH` or a variable), and
//! supervision has no switch.

use std::ffi::OsString;
use std::io::{BufRead, BufReader, Read, Write};
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, SyncSender};
use std::time::{Duration, Instant};

use serde_json::Value;

use super::{HarnessId, Reply};
use crate::decision::Fault;
use crate::request::MAX_REQUEST_BYTES;

/// The hidden subcommand the worker runs: `vouch hook-worker <harness> …`,
/// the same arguments as `vouch hook`.
pub const WORKER_COMMAND: &str = "hook-worker";

/// How much later than the worker's own deadline the supervisor gives up
/// on it: half the smallest legal `hooks.deadline_margin_ms` (500 ms), so
/// the worker's watchdog answers first when it can, and the supervisor
/// still answers before the harness's own timeout.
const BACKSTOP_RESERVE_MS: u64 = 250;

/// The most a worker may write (its frames): a reply is a few kilobytes.
const MAX_WORKER_OUTPUT: usize = 1 << 20;

/// Stack of the two helper threads: they copy bytes and split lines.
const HELPER_STACK: usize = 64 << 10;

/// How often the exit of a worker that closed its output is checked.
const EXIT_POLL: Duration = Duration::from_micros(200);

/// What the supervisor needs: which harness (for the shape of a
/// fail-closed reply), its hook timeout, and the worker's arguments.
#[derive(Debug, Clone)]
pub struct Supervision {
    pub harness: HarnessId,
    /// `--timeout SECONDS`, else the harness's default.
    pub timeout_secs: Option<u64>,
    /// The worker's arguments after the program name
    /// (`hook-worker <harness> --home …`).
    pub worker_args: Vec<OsString>,
}

/// One line the worker wrote, read.
#[derive(Debug, Clone, PartialEq)]
pub enum Frame {
    /// The event being answered (for the shape of a fail-closed reply).
    Event(String),
    /// The reply for the harness.
    Reply(Reply),
}

/// What the reader thread saw.
enum Seen {
    Line(Vec<u8>),
    /// The worker closed its output (it is exiting).
    End,
    /// More than [`MAX_WORKER_OUTPUT`], or unreadable.
    Broken(String),
}

/// Runs one supervised hook call: `input` (the harness's stdin) to the
/// worker, the worker's reply (or a fail-closed reply) to `out`. Returns
/// the exit code, always 0.
pub fn supervise<R, W>(sup: &Supervision, input: R, mut out: W) -> i32
where
    R: Read + Send + 'static,
    W: Write,
{
    let started = Instant::now();
    let backstop = started + backstop(sup.harness, sup.timeout_secs);
    let harness = sup.harness.harness();
    let mut event = harness.primary_event().to_owned();
    let fail = |event: &str, fault: Fault, why: &str, out: &mut W| {
        // The only line the supervisor logs: nothing else is set up.
        let _ = writeln!(
            std::io::stderr(),
            "vouch: {why}; the call was answered fail-closed"
        );
        write_reply(out, &harness.fault_reply(event, fault, &why));
        0
    };
    let mut worker = match spawn_worker(&sup.worker_args) {
        Ok(w) => w,
        Err(e) => {
            let why = format!("cannot start the decision process: {e}");
            return fail(&event, Fault::Internal, &why, &mut out);
        }
    };
    let lines = match start_helpers(&mut worker, input) {
        Ok(lines) => lines,
        Err(e) => {
            end(&mut worker);
            let why = format!("cannot start the hook's helper threads: {e}");
            return fail(&event, Fault::Internal, &why, &mut out);
        }
    };
    loop {
        let left = backstop.saturating_duration_since(Instant::now());
        let seen = match lines.recv_timeout(left) {
            Ok(seen) => seen,
            Err(RecvTimeoutError::Timeout) => {
                end(&mut worker);
                let why = format!(
                    "the decision process did not answer within {} ms, the time left before the \
                     harness's own hook timeout",
                    backstop.saturating_duration_since(started).as_millis()
                );
                return fail(&event, Fault::Deadline, &why, &mut out);
            }
            Err(RecvTimeoutError::Disconnected) => Seen::End,
        };
        match seen {
            Seen::Line(line) => match read_frame(&line) {
                Ok(Frame::Event(name)) => event = name,
                Ok(Frame::Reply(reply)) => {
                    write_reply(&mut out, &reply);
                    // The worker writes its audit record after the reply
                    // and ends itself (its output closes as it exits); the
                    // harness waits for this exit.
                    while let Ok(Seen::Line(_)) =
                        lines.recv_timeout(backstop.saturating_duration_since(Instant::now()))
                    {
                    }
                    wait_until(&mut worker, backstop);
                    return 0;
                }
                Err(problem) => {
                    end(&mut worker);
                    let why = format!("the decision process wrote {problem}");
                    return fail(&event, Fault::Internal, &why, &mut out);
                }
            },
            Seen::End => {
                let status = wait_until(&mut worker, backstop);
                let why = format!(
                    "the decision process ended without an answer ({})",
                    describe(status)
                );
                return fail(&event, Fault::Internal, &why, &mut out);
            }
            Seen::Broken(problem) => {
                end(&mut worker);
                let why = format!("the decision process's output was unusable: {problem}");
                return fail(&event, Fault::Internal, &why, &mut out);
            }
        }
    }
}

/// How long the supervisor waits for the worker: the harness's hook
/// timeout less [`BACKSTOP_RESERVE_MS`], and never less than the worker's
/// shortest deadline plus it.
fn backstop(harness: HarnessId, timeout_secs: Option<u64>) -> Duration {
    let timeout_ms = timeout_secs
        .unwrap_or_else(|| harness.harness().default_timeout_secs())
        .saturating_mul(1000);
    let shortest = super::MIN_DEADLINE_MS.saturating_add(BACKSTOP_RESERVE_MS);
    Duration::from_millis(timeout_ms.saturating_sub(BACKSTOP_RESERVE_MS).max(shortest))
}

/// Starts the worker: this process's own executable, with the hook's
/// environment (the worker reads it as untrusted, as the hook always did).
fn spawn_worker(args: &[OsString]) -> std::io::Result<Child> {
    let start = |program: &std::path::Path| {
        Command::new(program)
            // What `ps` shows, and clap's name for the program.
            .arg0("vouch")
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
    };
    // `/proc/self/exe` is the running image even when the file was
    // replaced or removed since (an upgrade); without `/proc`, the path
    // the kernel reports for it.
    match start(std::path::Path::new("/proc/self/exe")) {
        Ok(child) => Ok(child),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => start(&std::env::current_exe()?),
        Err(e) => Err(e),
    }
}

/// Starts the thread that copies `input` to the worker (at most one byte
/// more than the request limit, so the worker can refuse a larger one)
/// and the one that reads the worker's lines.
fn start_helpers<R>(worker: &mut Child, input: R) -> std::io::Result<Receiver<Seen>>
where
    R: Read + Send + 'static,
{
    let stdin = worker
        .stdin
        .take()
        .ok_or_else(|| std::io::Error::other("the worker has no standard input"))?;
    let stdout = worker
        .stdout
        .take()
        .ok_or_else(|| std::io::Error::other("the worker has no standard output"))?;
    std::thread::Builder::new()
        .name("vouch-hook-input".to_owned())
        .stack_size(HELPER_STACK)
        .spawn(move || pass_input(input, stdin))?;
    let (tx, rx) = mpsc::sync_channel(4);
    std::thread::Builder::new()
        .name("vouch-hook-output".to_owned())
        .stack_size(HELPER_STACK)
        .spawn(move || read_lines(stdout, &tx))?;
    Ok(rx)
}

fn pass_input(input: impl Read, mut to: impl Write) {
    let limit = u64::try_from(MAX_REQUEST_BYTES)
        .unwrap_or(u64::MAX)
        .saturating_add(1);
    // A worker that ended early closes the pipe: nothing more to pass on.
    let _ = std::io::copy(&mut input.take(limit), &mut to);
    // Dropping `to` closes the worker's standard input: the end of it.
}

fn read_lines(from: impl Read, tx: &SyncSender<Seen>) {
    let mut reader = BufReader::new(from);
    let mut total = 0usize;
    loop {
        let mut line = Vec::new();
        let room = MAX_WORKER_OUTPUT.saturating_sub(total);
        let limit = u64::try_from(room).unwrap_or(u64::MAX).saturating_add(1);
        let read = (&mut reader).take(limit).read_until(b'\n', &mut line);
        let seen = match read {
            Ok(0) => Seen::End,
            Ok(n) if n > room => Seen::Broken(format!("more than {MAX_WORKER_OUTPUT} bytes")),
            Ok(n) => {
                total = total.saturating_add(n);
                Seen::Line(line)
            }
            Err(e) => Seen::Broken(e.to_string()),
        };
        let last = !matches!(seen, Seen::Line(_));
        if tx.send(seen).is_err() || last {
            return;
        }
    }
}

/// Reads one line of the worker's output: a complete frame (a JSON object
/// with `event`, a string, or `reply`, an object or `null`) ended by a
/// newline. Anything else is a problem named for the message.
pub fn read_frame(line: &[u8]) -> Result<Frame, String> {
    let Some(body) = line.strip_suffix(b"\n") else {
        return Err("a line cut short (no newline at its end)".to_owned());
    };
    let value: Value =
        serde_json::from_slice(body).map_err(|_| "a line that is not JSON".to_owned())?;
    let Value::Object(mut map) = value else {
        return Err("a line that is not a JSON object".to_owned());
    };
    if map.len() != 1 {
        return Err("a frame with other than one field".to_owned());
    }
    match (map.remove("event"), map.remove("reply")) {
        (Some(Value::String(name)), None) => Ok(Frame::Event(name)),
        (None, Some(Value::Null)) => Ok(Frame::Reply(Reply::Empty)),
        (None, Some(reply @ Value::Object(_))) => Ok(Frame::Reply(Reply::Json(reply))),
        (Some(_) | None, Some(_)) | (Some(_), None) | (None, None) => {
            Err("a frame that is neither an event nor a reply".to_owned())
        }
    }
}

/// The frame a worker writes for `reply`.
pub fn reply_frame(reply: &Reply) -> String {
    let inner = match reply {
        Reply::Json(v) => v.clone(),
        Reply::Empty => Value::Null,
    };
    format!("{}\n", serde_json::json!({ "reply": inner }))
}

/// The frame a worker writes once it knows the event it answers.
pub fn event_frame(event: &str) -> String {
    format!("{}\n", serde_json::json!({ "event": event }))
}

fn write_reply(out: &mut impl Write, reply: &Reply) {
    // Nothing more can be done when stdout itself is gone.
    let _ = out.write_all(reply.to_stdout().as_bytes());
    let _ = out.flush();
}

/// Waits for the worker to exit until `until`, then kills it. Called once
/// its output has closed, when it is exiting already.
fn wait_until(worker: &mut Child, until: Instant) -> Option<ExitStatus> {
    loop {
        match worker.try_wait() {
            Ok(Some(status)) => return Some(status),
            Ok(None) if Instant::now() < until => std::thread::sleep(EXIT_POLL),
            Ok(None) | Err(_) => {
                end(worker);
                return None;
            }
        }
    }
}

/// Kills the worker and reaps it.
fn end(worker: &mut Child) {
    // Already gone is fine: either way it runs no more.
    let _ = worker.kill();
    let _ = worker.wait();
}

/// How a worker ended, for the message.
fn describe(status: Option<ExitStatus>) -> String {
    match status {
        None => "it did not exit in time and was killed".to_owned(),
        Some(status) => match (status.code(), status.signal()) {
            (Some(code), _) => format!("exit code {code}"),
            (None, Some(signal)) => format!("killed by signal {signal}{}", signal_name(signal)),
            (None, None) => format!("{status}"),
        },
    }
}

fn signal_name(signal: i32) -> &'static str {
    match signal {
        1 => " (SIGHUP)",
        2 => " (SIGINT)",
        3 => " (SIGQUIT)",
        4 => " (SIGILL)",
        5 => " (SIGTRAP)",
        6 => " (SIGABRT: an abort or a stack overflow)",
        7 => " (SIGBUS)",
        8 => " (SIGFPE)",
        9 => " (SIGKILL: killed, perhaps for memory)",
        10 => " (SIGUSR1)",
        11 => " (SIGSEGV)",
        12 => " (SIGUSR2)",
        13 => " (SIGPIPE)",
        14 => " (SIGALRM)",
        15 => " (SIGTERM)",
        16 => " (SIGSTKFLT)",
        24 => " (SIGXCPU)",
        25 => " (SIGXFSZ)",
        26 => " (SIGVTALRM)",
        27 => " (SIGPROF)",
        29 => " (SIGIO)",
        30 => " (SIGPWR)",
        31 => " (SIGSYS)",
        _ => "",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frames_round_trip_and_anything_else_is_refused() {
        let reply = Reply::Json(serde_json::json!({"decision": "deny"}));
        assert_eq!(
            read_frame(reply_frame(&reply).as_bytes()),
            Ok(Frame::Reply(reply))
        );
        assert_eq!(
            read_frame(reply_frame(&Reply::Empty).as_bytes()),
            Ok(Frame::Reply(Reply::Empty))
        );
        assert_eq!(
            read_frame(event_frame("PreToolUse").as_bytes()),
            Ok(Frame::Event("PreToolUse".to_owned()))
        );
        for bad in [
            &b""[..],
            b"\n",
            b"{\"reply\": null}",
            b"{\"reply\": 3}\n",
            b"{\"reply\": \"allow\"}\n",
            b"{\"reply\": {}, \"event\": \"x\"}\n",
            b"{\"event\": 1}\n",
            b"[1]\n",
            b"{\"reply\": {\"decision\": \n",
            b"garbage\n",
        ] {
            assert!(read_frame(bad).is_err(), "{bad:?}");
        }
    }

    /// A worker that writes something other than frames, or nothing, is
    /// answered fail-closed. The worker here is this test binary itself
    /// (`/proc/self/exe`) with libtest's own arguments: `--list` prints
    /// test names, an unknown flag prints nothing on stdout and fails.
    #[test]
    fn garbage_or_no_reply_from_the_worker_is_the_fail_closed_reply() {
        let codex = HarnessId::named("codex").unwrap();
        for (args, expected) in [
            ("--list", "wrote a line that is not JSON"),
            ("--no-such-flag", "ended without an answer (exit code"),
        ] {
            let supervision = Supervision {
                harness: codex,
                timeout_secs: Some(30),
                worker_args: vec![args.into()],
            };
            let mut out = Vec::new();
            assert_eq!(supervise(&supervision, std::io::empty(), &mut out), 0);
            let reply = String::from_utf8(out).unwrap();
            assert!(reply.contains("\"permissionDecision\":\"deny\""), "{reply}");
            assert!(reply.contains("[vouch fault: internal]"), "{reply}");
            assert!(reply.contains(expected), "{args}: {reply}");
        }
    }

    #[test]
    fn the_backstop_follows_the_workers_deadline() {
        let codex = HarnessId::named("codex").unwrap();
        // 30 s: the worker answers by 25 s (default margin), the supervisor by 29.75 s.
        assert_eq!(backstop(codex, Some(30)), Duration::from_millis(29_750));
        // A timeout shorter than the worker's shortest deadline.
        assert_eq!(backstop(codex, Some(0)), Duration::from_millis(750));
    }

    #[test]
    fn endings_are_named() {
        assert_eq!(describe(None), "it did not exit in time and was killed");
        assert_eq!(
            describe(Some(ExitStatus::from_raw(11))),
            "killed by signal 11 (SIGSEGV)"
        );
        assert_eq!(
            describe(Some(ExitStatus::from_raw(134 << 8))),
            "exit code 134"
        );
    }
}
