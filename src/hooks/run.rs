//! `vouch hook <harness>`: one hook call, from the harness's stdin to its
//! reply, in a short-lived process against the shared SQLite state.
//!
//! The process environment is the harness's, which the project can set
//! (Gemini CLI loads the project's `.env`; project settings set variables),
//! so here it is not trusted: vouch's files are located from `--home` (the
//! hook command line in the user's own settings) or `$HOME`, never from
//! `VOUCH_HOME` or the XDG variables; `VOUCH_<SECTION>__<KEY>` variables may
//! only tighten (a loosening one fails the call closed, naming it); and
//! `VOUCH_ALLOW_UNTRUSTED_DEV` is ignored.
//!
//! A watchdog answers with a fail-closed reply when the harness's hook
//! timeout (less `hooks.deadline_margin_ms`) is about to run out, whatever
//! the work is stuck on (stdin, a state lock, the model): most harnesses run
//! the tool when a hook is killed for time.

use std::io::{Read, Write};
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::Value;

use super::call::{Answers, Wanted, config_error};
use super::transcript::Transcript;
use super::{
    Answer, Call, DeferAs, Event, HarnessId, HookError, MIN_DEADLINE_MS, Observed, Presence,
    Prompt, Reply, fault_answer,
};
use crate::config::{LoadedConfig, Source};
use crate::decision::Fault;
use crate::engine::{AuditDelivery, Engine, EngineOptions, ModelRuntime};
use crate::paths::Paths;
use crate::request::MAX_REQUEST_BYTES;
use crate::session::prompts::{PromptKey, Recording};

/// What the hook command line says.
#[derive(Debug, Clone)]
pub struct HookOptions {
    pub harness: HarnessId,
    /// `--home DIR`: vouch's files (`DIR/config.toml`, `DIR/state/`), as
    /// `VOUCH_HOME` would say outside hooks.
    pub home: Option<PathBuf>,
    /// `--config FILE`: one more trusted overlay.
    pub config: Option<PathBuf>,
    /// `--timeout SECONDS`: the harness's hook timeout for this entry, as
    /// written in its settings; else the harness's default.
    pub timeout_secs: Option<u64>,
    pub defer_as: DeferAs,
    /// `--server URL` (and its token and TLS options): tool calls are
    /// decided by a central `vouch serve` rather than in this process
    /// ([`super::remote`]).
    pub remote: Option<super::remote::RemoteOptions>,
    /// This process is the worker of a supervising `vouch hook`
    /// ([`super::supervise`]): its output is frames for the supervisor
    /// (the event once known, then the reply), not the harness's bytes.
    pub framed: bool,
}

/// Time the work gets when the trusted configuration cannot be read to learn
/// `hooks.deadline_margin_ms`: the default margin.
const FALLBACK_MARGIN_MS: u64 = 5000;

/// The time the work keeps for itself besides the model call (process start,
/// transcript, state) when the review deadline is fitted under the hook's.
pub const NON_MODEL_RESERVE_MS: u64 = 1000;

/// Runs one hook call: reads `input`, writes the harness's reply to `out`,
/// returns the exit code (always 0: harnesses read a non-zero exit as "run
/// the tool anyway", or worse).
///
/// The call is worked on this thread; a watchdog thread (which allocates
/// nothing and sleeps until a deadline) answers for it when the deadline
/// comes first, and then ends the process with exit code 0, whatever the
/// work is stuck on. After the reply the audit record is written here too,
/// for at most `audit.flush_timeout_ms` (and never past the deadline): the
/// watchdog ends the process when that runs out.
pub fn run_hook<R, W>(opts: &HookOptions, input: R, out: W) -> i32
where
    R: Read,
    W: Write + Send + 'static,
{
    let started = Instant::now();
    let harness = opts.harness.harness();
    let env = Env::from_process(opts);
    let trusted = env.trusted();
    let margin = match &trusted {
        Ok(t) => t.config.hooks.deadline_margin_ms,
        Err(_) => FALLBACK_MARGIN_MS,
    };
    let timeout_ms = opts
        .timeout_secs
        .unwrap_or_else(|| opts.harness.harness().default_timeout_secs())
        .saturating_mul(1000);
    let deadline = Duration::from_millis(timeout_ms.saturating_sub(margin).max(MIN_DEADLINE_MS));
    let flush = Duration::from_millis(match &trusted {
        Ok(t) => t.config.audit.flush_timeout_ms,
        Err(_) => 0,
    });

    let slot = Arc::new(ReplySlot::new(
        Box::new(out),
        harness.primary_event(),
        opts.framed,
    ));
    let watchdog = Watchdog::start(Arc::clone(&slot), opts.harness, (started, deadline), flush);
    let (reply, engine) = match &watchdog {
        Ok(_) => work(opts, env, trusted, input, &slot, started, deadline),
        Err(e) => (
            render_fault(
                opts.harness,
                &slot.event,
                Fault::Internal,
                &format!("cannot start the hook watchdog: {e}"),
            ),
            None,
        ),
    };
    if !slot.answer(&reply) {
        // The watchdog answered first and is ending the process.
        return 0;
    }
    if let Ok(watchdog) = &watchdog {
        watchdog.replied();
    }
    // The harness waits for the process to exit: the audit write gets what
    // is left of `audit.flush_timeout_ms` and of the deadline, whichever is
    // less (the watchdog holds it to that).
    if let Some(engine) = engine {
        engine.after_reply(flush);
    }
    if let Ok(watchdog) = &watchdog {
        watchdog.finished();
    }
    0
}

/// Where the one reply goes: whoever claims it first (the work or the
/// watchdog) writes it; the other writes nothing.
struct ReplySlot {
    out: Mutex<Option<Box<dyn Write + Send>>>,
    /// The event being answered, for the shape of a reply the watchdog gives.
    event: Mutex<String>,
    /// Unanswered, being answered, answered (and when, for the audit's time).
    state: Mutex<SlotState>,
    /// Frames for a supervisor ([`HookOptions::framed`]).
    framed: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum SlotState {
    Working,
    Replying,
    Replied(Instant),
    /// The audit is written too: nothing is left for the watchdog.
    Finished,
}

impl ReplySlot {
    fn new(out: Box<dyn Write + Send>, event: &str, framed: bool) -> ReplySlot {
        ReplySlot {
            out: Mutex::new(Some(out)),
            event: Mutex::new(event.to_owned()),
            state: Mutex::new(SlotState::Working),
            framed,
        }
    }

    /// The input names the event being answered: replies take its shape,
    /// and a supervisor is told (its fail-closed reply, should this
    /// process die, takes the same shape).
    fn set_event(&self, name: &str) {
        name.clone_into(
            &mut self
                .event
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner),
        );
        if !self.framed {
            return;
        }
        let mut out = self
            .out
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Some(out) = out.as_mut() {
            // A supervisor that cannot be told answers for the primary event.
            let _ = out.write_all(super::supervise::event_frame(name).as_bytes());
            let _ = out.flush();
        }
    }

    fn state(&self) -> std::sync::MutexGuard<'_, SlotState> {
        self.state
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Writes `reply` unless it was claimed already; `true` when this call
    /// wrote it.
    fn answer(&self, reply: &Reply) -> bool {
        {
            let mut state = self.state();
            if *state != SlotState::Working {
                return false;
            }
            *state = SlotState::Replying;
        }
        let out = self
            .out
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .take();
        if let Some(out) = out {
            match self.framed {
                true => write_frame(out, reply),
                false => write_reply(out, reply),
            }
        }
        *self.state() = SlotState::Replied(Instant::now());
        true
    }
}

/// The thread that answers and ends the process when the work does not
/// finish in time. It only sleeps and checks a state (no allocation, so no
/// allocator arena of its own) until it has to act.
struct Watchdog {
    thread: std::thread::Thread,
    slot: Arc<ReplySlot>,
}

impl Watchdog {
    /// `budget` is the time from `started` to `deadline`, for the reply.
    fn start(
        slot: Arc<ReplySlot>,
        harness: HarnessId,
        (started, budget): (Instant, Duration),
        flush: Duration,
    ) -> std::io::Result<Watchdog> {
        let deadline = started + budget;
        let watched = Arc::clone(&slot);
        let handle = std::thread::Builder::new()
            .name("vouch-watchdog".to_owned())
            .spawn(move || watch(&watched, harness, (deadline, budget), flush))?;
        Ok(Watchdog {
            thread: handle.thread().clone(),
            slot,
        })
    }

    /// The reply is out: the watchdog now times the audit write.
    fn replied(&self) {
        self.thread.unpark();
    }

    /// Nothing is left to time.
    fn finished(&self) {
        *self.slot.state() = SlotState::Finished;
        self.thread.unpark();
    }
}

fn watch(
    slot: &ReplySlot,
    harness: HarnessId,
    (deadline, budget): (Instant, Duration),
    flush: Duration,
) {
    loop {
        let state = *slot.state();
        let now = Instant::now();
        let until = match state {
            SlotState::Finished => return,
            SlotState::Working if now >= deadline => {
                let why = format!(
                    "the review did not finish within {} ms, the time left before the harness's \
                     own hook timeout",
                    budget.as_millis()
                );
                let fault = Fault::Deadline;
                if slot.answer(&render_fault(harness, &slot.event, fault, &why)) {
                    end_process();
                }
                // The work claimed the reply a moment earlier: time its audit.
                continue;
            }
            SlotState::Working => deadline,
            // A reply being written is never cut short.
            SlotState::Replying => now + Duration::from_millis(5),
            SlotState::Replied(at) => {
                let until = (at + flush).min(deadline);
                if now >= until {
                    end_process();
                }
                until
            }
        };
        std::thread::park_timeout(until.saturating_duration_since(now));
    }
}

/// Ends a hook process whose work is stuck, once its reply is out.
fn end_process() {
    crate::telemetry::flush_before_exit();
    std::process::exit(0);
}

fn write_reply(mut out: impl Write, reply: &Reply) {
    // Nothing more can be done when stdout itself is gone.
    let _ = out.write_all(reply.to_stdout().as_bytes());
    let _ = out.flush();
}

/// The reply as the supervisor reads it: one frame, written at once.
fn write_frame(mut out: impl Write, reply: &Reply) {
    // A supervisor that cannot read it answers fail-closed itself.
    let _ = out.write_all(super::supervise::reply_frame(reply).as_bytes());
    let _ = out.flush();
}

fn event_name(event: &Mutex<String>) -> String {
    event
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
        .clone()
}

fn render_fault(
    harness: HarnessId,
    event: &Mutex<String>,
    fault: Fault,
    why: &dyn std::fmt::Display,
) -> Reply {
    harness
        .harness()
        .fault_reply(&event_name(event), fault, why)
}

/// The trusted setup, read from the command line and `$HOME` only.
struct Env {
    paths: Result<Paths, String>,
    cli_config: Option<PathBuf>,
    /// The `VOUCH_` variables of the process, folded tighten-only.
    vars: Result<Vec<(String, String)>, String>,
}

impl Env {
    fn from_process(opts: &HookOptions) -> Env {
        let home = opts.home.as_ref().map(|h| h.display().to_string());
        let user_home = std::env::var("HOME").ok();
        Env {
            paths: hook_paths(home, user_home),
            cli_config: opts.config.clone(),
            vars: crate::config::process_env().map_err(|e| e.to_string()),
        }
    }

    /// The trusted configuration: defaults, the user file, `--config`.
    fn trusted(&self) -> Result<LoadedConfig, String> {
        let paths = self.paths.as_ref().map_err(Clone::clone)?;
        crate::config::load_trusted(paths, self.cli_config.as_deref(), Vec::new())
            .map_err(|e| format!("invalid configuration: {e}"))
    }
}

pub use crate::paths::hook_paths;

/// Everything after the process starts: read, parse, decide, render.
fn work<R: Read>(
    opts: &HookOptions,
    env: Env,
    trusted: Result<LoadedConfig, String>,
    input: R,
    slot: &ReplySlot,
    started: Instant,
    deadline: Duration,
) -> (Reply, Option<Engine>) {
    let event = &slot.event;
    let harness = opts.harness.harness();
    let fault = |event: &str, why: &dyn std::fmt::Display| {
        (harness.fault_reply(event, Fault::HookInput, why), None)
    };
    let value = match read_input(input) {
        Ok(v) => v,
        Err(e) => return fault(harness.primary_event(), &e),
    };
    if let Some(name) = value.get("hook_event_name").and_then(Value::as_str) {
        slot.set_event(name);
    }
    let parsed = match harness.parse(&value) {
        Ok(e) => e,
        Err(e) => return fault(&event_name(event), &e),
    };
    let remaining = deadline.saturating_sub(started.elapsed());
    match parsed {
        Event::Ignore { event } => (harness.no_op(&event), None),
        Event::Observe(observed) => {
            let engine = observe(&env, trusted, &observed, remaining);
            (harness.no_op(&observed.event), engine)
        }
        Event::Prompt(prompt) => {
            let engine = match hook_engine(&env, trusted, remaining) {
                Ok(engine) => {
                    record_prompt(&engine, opts.harness, &prompt);
                    Some(engine)
                }
                Err(why) => {
                    tracing::warn!(problem = ?why, "the prompt was not recorded; it goes through");
                    None
                }
            };
            (harness.no_op(&prompt.event), engine)
        }
        Event::Decide(call) => {
            let name = call.event.clone();
            let until = Instant::now() + remaining;
            let (answer, engine) = decide(opts, &env, trusted, call, until);
            (harness.render(&name, &answer), engine)
        }
    }
}

/// Reads the hook input: at most [`MAX_REQUEST_BYTES`], one JSON object.
fn read_input(input: impl Read) -> Result<Value, HookError> {
    let limit = u64::try_from(MAX_REQUEST_BYTES).unwrap_or(u64::MAX);
    let mut bytes = Vec::new();
    input
        .take(limit.saturating_add(1))
        .read_to_end(&mut bytes)
        .map_err(|e| HookError::Json(format!("cannot read standard input: {e}")))?;
    if bytes.len() > MAX_REQUEST_BYTES {
        return Err(HookError::TooLarge {
            limit: MAX_REQUEST_BYTES,
        });
    }
    let value: Value =
        crate::json::from_slice(&bytes).map_err(|e| HookError::Json(e.to_string()))?;
    if !value.is_object() {
        return Err(HookError::Json("expected a JSON object".to_owned()));
    }
    Ok(value)
}

/// After-the-fact events are for the audit only (a deferred call that ran
/// is a human approval); they never change a decision, and a setup that
/// cannot be read just leaves them unrecorded. Returns the engine whose
/// audit holds the observation, for the flush after the reply.
fn observe(
    env: &Env,
    trusted: Result<LoadedConfig, String>,
    observed: &Observed,
    remaining: Duration,
) -> Option<Engine> {
    tracing::debug!(
        event = %observed.event,
        surface = observed.request.surface.as_str(),
        succeeded = ?observed.succeeded,
        "tool call observed after the fact"
    );
    match hook_engine(env, trusted, remaining) {
        Ok(engine) => {
            engine.observe_ran(&observed.request);
            Some(engine)
        }
        Err(why) => {
            tracing::debug!(problem = ?why, "after-the-fact event not audited");
            None
        }
    }
}

/// Records a submitted prompt as its session's latest (blocking: SQLite).
///
/// The harness's reply to a prompt event is always its no-op, whatever
/// happens here: a fault is logged and the prompt goes through. Blocking
/// the user's prompt would stop the person from talking to the agent at
/// all, and it would protect nothing: a prompt runs no tool, and every tool
/// call the prompt leads to is still reviewed (fail-closed) on its own
/// event. The record only adds evidence to those reviews; without it they
/// read the transcript alone and their packet says so.
pub fn record_prompt(engine: &Engine, harness: HarnessId, prompt: &Prompt) {
    let key = PromptKey {
        source: harness.as_str(),
        session: &prompt.session_id,
    };
    match engine.record_prompt(key, prompt.turn_id.as_deref(), &prompt.text) {
        Ok(Recording::Stored) => tracing::debug!(event = %prompt.event, "prompt recorded"),
        Ok(Recording::Empty) => {
            tracing::debug!(event = %prompt.event, "empty prompt: the session's prompt is kept");
        }
        Ok(Recording::NoBudget) => tracing::debug!(
            event = %prompt.event,
            "the user-message budget is 0: no prompt is kept"
        ),
        Ok(Recording::BadSession) => tracing::warn!(
            event = %prompt.event,
            "the prompt's session id is empty or too long; the prompt was not recorded"
        ),
        Err(e) => tracing::warn!(
            event = %prompt.event,
            error = %e,
            "the prompt was not recorded; it goes through"
        ),
    }
}

/// An engine over the shared state with the hook's configuration.
fn hook_engine(
    env: &Env,
    trusted: Result<LoadedConfig, String>,
    remaining: Duration,
) -> Result<Engine, Answer> {
    let loaded = trusted
        .and_then(|t| hook_config(&t, env, remaining))
        .map_err(|why| config_error(&why))?;
    let paths = env.paths.clone().map_err(|e| config_error(&e))?;
    let mut options = EngineOptions::from_process(paths, loaded);
    // An inert allow's confined form reads the same overlay.
    options.confine.config.clone_from(&env.cli_config);
    // The project can set the hook's environment: no development escape,
    // and no PostgreSQL URL from it.
    options.allow_untrusted_dev = false;
    options.store_url_from_env = false;
    // One decision, then exit: the audit is written on this thread after
    // the reply, with no writer thread.
    options.audit_delivery = AuditDelivery::AfterReply;
    Engine::new(options).map_err(|e| fault_answer(Fault::Internal, &e))
}

/// Decides a call: the hook's configuration, an engine over the shared
/// state, then [`decide_call_here`] in this process, or with `--server`
/// [`super::remote::decide_call`] (the central service decides; the floor
/// and the evidence stay here). `until` is the hook's deadline.
fn decide(
    opts: &HookOptions,
    env: &Env,
    trusted: Result<LoadedConfig, String>,
    call: Call,
    until: Instant,
) -> (Answer, Option<Engine>) {
    let remaining = until.saturating_duration_since(Instant::now());
    let engine = match hook_engine(env, trusted, remaining) {
        Ok(e) => e,
        Err(answer) => return (answer, None),
    };
    let answer = match &opts.remote {
        Some(remote) => {
            let local = super::remote::Local {
                home: env.paths.as_ref().ok().and_then(|p| p.home.clone()),
                env: &|name| std::env::var(name).ok(),
            };
            super::remote::decide_call(
                &engine,
                opts.harness,
                call,
                opts.defer_as,
                remote,
                &local,
                until,
            )
        }
        None => {
            let mut runtime = ModelRuntime::default();
            let answer = decide_call_here(&engine, opts.harness, call, opts.defer_as, &mut runtime);
            // Dropped without waiting: the reply must not wait on blocking tasks.
            drop(runtime);
            answer
        }
    };
    (answer, Some(engine))
}

/// Decides a call with a running engine (the service's): reads the
/// transcript, then sends each request through the one engine call; the
/// strictest answer wins, and the first deny ends the call.
pub async fn decide_call(
    engine: &Engine,
    harness_id: HarnessId,
    call: Call,
    defer_as: DeferAs,
) -> Answer {
    let wanted = Wanted::of(harness_id, &call);
    let this = engine.clone();
    let evidence = tokio::task::spawn_blocking(move || wanted.gather(&this))
        .await
        .unwrap_or_default();
    let mut answers = Answers::new(harness_id, &call, defer_as, evidence);
    for request in call.requests {
        let decision = engine.review(answers.with_transcript(request)).await;
        if answers.push(&decision) {
            break;
        }
    }
    answers.strictest()
}

/// [`decide_call`] on this thread (a hook process): a runtime only for a
/// model call, none for a hard deny.
pub fn decide_call_here(
    engine: &Engine,
    harness_id: HarnessId,
    call: Call,
    defer_as: DeferAs,
    runtime: &mut ModelRuntime,
) -> Answer {
    let evidence = Wanted::of(harness_id, &call).gather(engine);
    let mut answers = Answers::new(harness_id, &call, defer_as, evidence);
    for request in call.requests {
        let decision = engine.review_here(answers.with_transcript(request), runtime);
        if answers.push(&decision) {
            break;
        }
    }
    answers.strictest()
}

/// The trusted configuration tightened by the hook's environment and
/// deadline: `VOUCH_*` variables fold tighten-only, and the review deadline
/// is lowered to fit inside the harness's hook timeout.
fn hook_config(
    trusted: &LoadedConfig,
    env: &Env,
    remaining: Duration,
) -> Result<LoadedConfig, String> {
    let vars = env.vars.clone()?;
    let tightened = crate::config::tighten_with_env(trusted, vars).map_err(|e| {
        format!(
            "under `vouch hook` the environment may only tighten the configuration (the \
             project can set it): {e}"
        )
    })?;
    let budget = u64::try_from(remaining.as_millis())
        .unwrap_or(u64::MAX)
        .saturating_sub(NON_MODEL_RESERVE_MS)
        .max(1000);
    if budget >= tightened.config.reviewer.timeout_ms {
        return Ok(tightened);
    }
    let mut layer = toml::Table::new();
    let mut reviewer = toml::Table::new();
    reviewer.insert(
        "timeout_ms".to_owned(),
        toml::Value::Integer(i64::try_from(budget).unwrap_or(i64::MAX)),
    );
    layer.insert("reviewer".to_owned(), toml::Value::Table(reviewer));
    crate::config::tighten_trusted(
        &tightened,
        Source::HookCommandLine("--timeout".to_owned()),
        &layer,
    )
    .map_err(|e| e.to_string())
}

/// Who is there, once the transcript is read (Codex names its approval
/// reviewer there).
pub fn presence_from_reviewer(transcript: &Transcript, otherwise: Presence) -> Presence {
    match transcript.approvals_reviewer.as_deref() {
        Some("user") => Presence::Human,
        Some(_) | None => otherwise,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hook_paths_ignore_xdg_and_vouch_home_variables() {
        let p = hook_paths(None, Some("/home/dev".into())).unwrap();
        assert_eq!(p.state_dir, PathBuf::from("/home/dev/.local/state/vouch"));
        assert_eq!(
            p.user_config,
            PathBuf::from("/home/dev/.config/vouch/config.toml")
        );
        let p = hook_paths(Some("/opt/vouch".into()), Some("/home/dev".into())).unwrap();
        assert_eq!(p.state_dir, PathBuf::from("/opt/vouch/state"));
    }

    #[test]
    fn malformed_input_is_named() {
        assert!(
            read_input(&b"not json"[..])
                .unwrap_err()
                .to_string()
                .contains("not valid JSON")
        );
        assert!(read_input(&b"[1]"[..]).is_err());
        let big = vec![b' '; MAX_REQUEST_BYTES + 2];
        assert!(matches!(
            read_input(&big[..]),
            Err(HookError::TooLarge { .. })
        ));
    }
}
