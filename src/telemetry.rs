//! Structured events about reviews, and the log setup for the binary
//! (design §9).
//!
//! A user paying per token wants to see what each review cost and why it
//! failed; a user who fears a leak wants to know that the logs cannot hold
//! what the model saw. So the events here take only counts, timings, stable
//! class names and the configured model id — their types leave no room for
//! prompt text, response text, provider error bodies, headers, keys or URLs.
//!
//! Logging never stalls a decision: lines go to stderr through a bounded,
//! non-blocking writer (`tracing-appender`, lossy) whose own thread does the
//! blocking writes. When stderr is a pipe nobody drains, the buffer fills and
//! further lines are dropped and counted ([`dropped_log_lines`], exported as
//! `vouch_log_lines_dropped_total`) instead of blocking the thread that
//! decides.

use std::io::Write as _;
use std::sync::{Mutex, OnceLock, PoisonError};

use tracing_appender::non_blocking::{ErrorCounter, NonBlocking, WorkerGuard};
use tracing_subscriber::EnvFilter;

/// Log lines held while stderr is not accepting them; past this, lines are
/// dropped and counted. A reader that keeps up never gets near it; one that
/// stopped loses what it would not read anyway. Not a configuration key:
/// logging starts before configuration is read, so that reading can log.
/// 8192 lines of ~200 bytes bound the buffer at under 2 MiB.
pub const LOG_BUFFER_LINES: usize = 8192;

/// The writer thread gathers the lines waiting for it into one write of at
/// most this many bytes (stderr itself is unbuffered: a write call per line
/// cost the busy service a system call per request). It writes out whenever
/// it has caught up, so no line waits for others to fill the buffer.
const LOG_WRITE_BYTES: usize = 64 * 1024;

static DROPPED: OnceLock<ErrorCounter> = OnceLock::new();

/// Log lines dropped so far because stderr was not taking them (0 when
/// [`init`] was not called in this process).
pub fn dropped_log_lines() -> u64 {
    DROPPED
        .get()
        .map_or(0, |c| u64::try_from(c.dropped_lines()).unwrap_or(u64::MAX))
}

/// Says once, at the end of a service's life, how many lines were dropped.
pub fn report_dropped_log_lines() {
    let dropped = dropped_log_lines();
    if dropped > 0 {
        tracing::warn!(
            dropped_lines = dropped,
            "log lines were dropped because stderr was not read fast enough"
        );
    }
}

/// The log writer, started by the first line that is written: most
/// short-lived commands (a `vouch hook` run that decides quietly) write
/// none, and a writer thread that is never needed is not started (its stack
/// and allocations cost a hook process page faults before its reply).
struct LazyWriter {
    started: OnceLock<NonBlocking>,
    /// Taken once: by [`LogGuard`]'s drop or by [`flush_before_exit`].
    worker: Mutex<Option<WorkerGuard>>,
}

impl LazyWriter {
    fn writer(&self) -> NonBlocking {
        self.started
            .get_or_init(|| {
                let (writer, worker) =
                    tracing_appender::non_blocking::NonBlockingBuilder::default()
                        .lossy(true)
                        .buffered_lines_limit(LOG_BUFFER_LINES)
                        .thread_name("vouch-log")
                        .finish(std::io::BufWriter::with_capacity(
                            LOG_WRITE_BYTES,
                            std::io::stderr(),
                        ));
                let _ = DROPPED.set(writer.error_counter());
                *self.worker.lock().unwrap_or_else(PoisonError::into_inner) = Some(worker);
                writer
            })
            .clone()
    }

    /// Flushes what is buffered (for at most about a second) and stops the
    /// writer; nothing when no line was ever written. When the buffer is
    /// full — stderr has stopped taking lines — a flush cannot succeed, so
    /// it is skipped rather than waited for.
    fn stop(&self) {
        let Some(probe) = self.started.get() else {
            return;
        };
        let Some(worker) = self
            .worker
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take()
        else {
            return;
        };
        let mut probe = probe.clone();
        let counter = probe.error_counter();
        let before = counter.dropped_lines();
        // An empty line writes nothing; it only tells whether the buffer
        // has room.
        let _ = probe.write(b"");
        if counter.dropped_lines() > before {
            // The worker guard would wait, then print to stdout (which
            // carries decisions) that it could not shut the writer down.
            std::mem::forget(worker);
        } else {
            drop(worker);
        }
    }
}

/// The process's log writer (one subscriber per process).
static WRITER: LazyWriter = LazyWriter {
    started: OnceLock::new(),
    worker: Mutex::new(None),
};

/// Keeps the log writer until the command is done; dropping it (at the end
/// of `main`) flushes what is buffered, as [`flush_before_exit`] does.
#[must_use = "dropping the guard stops the log writer; hold it until the command is done"]
pub struct LogGuard(());

impl Drop for LogGuard {
    fn drop(&mut self) {
        WRITER.stop();
    }
}

/// Flushes the log lines written so far and stops the writer, for a
/// process about to end without returning from `main` (a hook's watchdog
/// answering for a stuck call). Lines logged after it are dropped.
pub fn flush_before_exit() {
    WRITER.stop();
}

/// `tracing` target of the review events, for `RUST_LOG=vouch::review=debug`.
pub const REVIEW_TARGET: &str = "vouch::review";

/// One model call (`review_attempt`).
#[derive(Debug, Clone, Copy)]
pub struct AttemptEvent<'a> {
    pub provider: &'static str,
    /// The configured model id (not secret; logged at service start too).
    pub model: &'a str,
    /// 1 for the first call, 2 for the retry.
    pub attempt: u32,
    /// HTTP status when a response arrived.
    pub http_status: Option<u16>,
    /// `ok` or a [`crate::reviewer::FailureClass`] name.
    pub class: &'static str,
    /// `done`, `stop`, `retry`, `retry_with_correction` or `wait_then_retry`.
    pub next: &'static str,
    pub duration_ms: u64,
    pub input_tokens: u64,
    pub output_tokens: u64,
}

/// One finished review (`review_complete`).
#[derive(Debug, Clone, Copy)]
pub struct CompleteEvent<'a> {
    pub provider: &'static str,
    pub model: &'a str,
    /// `allow`, `deny`, `defer` (the model's verdict, before host rules) or
    /// `failure`.
    pub outcome: &'static str,
    pub failure_class: Option<&'static str>,
    pub risk_level: Option<&'static str>,
    pub calls: u32,
    pub duration_ms: u64,
    pub input_tokens: u64,
    pub output_tokens: u64,
    pub packet_tokens_estimate: u64,
}

/// Emits `review_attempt`: info when the call produced a verdict, warn when
/// it failed.
pub fn review_attempt(e: &AttemptEvent<'_>) {
    macro_rules! emit {
        ($level:expr) => {
            tracing::event!(
                name: "review_attempt",
                target: REVIEW_TARGET,
                $level,
                event = "review_attempt",
                provider = e.provider,
                model = e.model,
                attempt = e.attempt,
                http_status = e.http_status,
                class = e.class,
                next = e.next,
                duration_ms = e.duration_ms,
                input_tokens = e.input_tokens,
                output_tokens = e.output_tokens,
            )
        };
    }
    if e.class == "ok" {
        emit!(tracing::Level::INFO);
    } else {
        emit!(tracing::Level::WARN);
    }
}

/// Emits `review_complete`.
pub fn review_complete(e: &CompleteEvent<'_>) {
    tracing::event!(
        name: "review_complete",
        target: REVIEW_TARGET,
        tracing::Level::INFO,
        event = "review_complete",
        provider = e.provider,
        model = e.model,
        outcome = e.outcome,
        failure_class = e.failure_class,
        risk_level = e.risk_level,
        calls = e.calls,
        duration_ms = e.duration_ms,
        input_tokens = e.input_tokens,
        output_tokens = e.output_tokens,
        packet_tokens_estimate = e.packet_tokens_estimate,
    );
}

/// Installs the process-wide subscriber for `main.rs`: human-readable lines
/// on stderr (stdout carries decision JSON) through the non-blocking writer,
/// filtered by `RUST_LOG` (default `info`). Keep the guard until the command
/// is done, so its lines are flushed before the process exits.
///
/// It cannot fail: a hook run must never crash into its harness's fail-open
/// path over logging. An invalid `RUST_LOG` falls back to `info` and says so
/// in a warning; a second call keeps the subscriber already installed.
pub fn init() -> LogGuard {
    init_with_default("info")
}

/// [`init`] with another default level: short-lived commands whose stderr a
/// harness reads use `warn`, so one request yields at most its one line.
pub fn init_with_default(default: &str) -> LogGuard {
    let spec = std::env::var("RUST_LOG").unwrap_or_default();
    let (filter, rejected) = match EnvFilter::try_new(spec.trim()) {
        Ok(filter) if !spec.trim().is_empty() => (filter, None),
        Ok(_) => (EnvFilter::new(default), None),
        Err(e) => (EnvFilter::new(default), Some(e.to_string())),
    };
    let installed = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(|| WRITER.writer())
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .try_init()
        .is_ok();
    if let (true, Some(problem)) = (installed, rejected) {
        tracing::warn!(
            "environment variable `RUST_LOG` is invalid ({problem}); logging at `{default}`"
        );
    }
    LogGuard(())
}
