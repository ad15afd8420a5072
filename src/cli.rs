//! The command-line commands as library functions over explicit streams, so
//! `main.rs` stays a thin argument parser and tests can call them directly.
//!
//! Exit codes: 0 success (a decision was printed, a grant was consumed),
//! 1 a clean "no" (grant not consumed, operator command refused),
//! 2 bad input or configuration.

use std::io::{BufRead, IsTerminal, Read, Write};
use std::path::{Path, PathBuf};

use crate::config::FailClosed;
use crate::config::{LoadedConfig, render_show};
use crate::decision::Decision;
use crate::engine::{Engine, EngineOptions, load_process_config};
use crate::paths::Paths;
use crate::request::{MAX_REQUEST_BYTES, Request, RequestError};
use crate::session::operator::{self, OperatorContext};

pub use crate::config::Global;

/// A command failure: printed as one line on stderr.
#[derive(Debug, thiserror::Error)]
pub enum CliError {
    #[error("invalid request: {0}")]
    Request(#[from] RequestError),
    #[error("cannot read standard input: {0}")]
    Stdin(std::io::Error),
    #[error("{0}")]
    Setup(String),
}

/// Paths and trusted configuration for this process.
pub fn load(global: &Global) -> Result<(Paths, LoadedConfig), CliError> {
    crate::engine::load_global(global).map_err(CliError::Setup)
}

fn engine(global: &Global) -> Result<Engine, CliError> {
    let (paths, loaded) = load(global)?;
    let mut options = EngineOptions::from_process(paths, loaded);
    options.confine.config.clone_from(&global.config);
    Engine::new(options).map_err(|e| CliError::Setup(e.to_string()))
}

/// Reads at most one byte more than the request limit, so an oversized body
/// is refused without being buffered whole.
pub fn read_request(input: impl Read) -> Result<Request, CliError> {
    let limit = u64::try_from(MAX_REQUEST_BYTES).unwrap_or(u64::MAX);
    let mut body = Vec::new();
    input
        .take(limit.saturating_add(1))
        .read_to_end(&mut body)
        .map_err(CliError::Stdin)?;
    if body.len() > MAX_REQUEST_BYTES {
        // Not drained to learn the exact size: an endless stdin would hang.
        return Err(RequestError::StreamTooLarge {
            limit: MAX_REQUEST_BYTES,
        }
        .into());
    }
    Ok(Request::from_slice(&body)?)
}

pub use crate::engine::THREAD_STACK_BYTES;

fn runtime() -> Result<tokio::runtime::Runtime, CliError> {
    tokio::runtime::Builder::new_current_thread()
        .thread_stack_size(THREAD_STACK_BYTES)
        .enable_all()
        .build()
        .map_err(|e| CliError::Setup(format!("cannot start the runtime: {e}")))
}

fn print_line(out: &mut impl Write, value: &impl serde::Serialize) -> std::io::Result<()> {
    let line = serde_json::to_string(value).map_err(std::io::Error::other)?;
    writeln!(out, "{line}")?;
    out.flush()
}

fn fail(err: &mut impl Write, e: &dyn std::fmt::Display, code: i32) -> i32 {
    // Nothing more can be done if stderr itself is gone.
    let _ = writeln!(err, "vouch: {e}");
    code
}

/// `vouch review`: one request on stdin → one decision line on stdout.
///
/// A configuration that cannot be loaded still yields a decision: the
/// request's `failure_mode`-free default of deny, stage `config_error`.
pub fn review(global: &Global, input: impl Read, mut out: impl Write, mut err: impl Write) -> i32 {
    let request = match read_request(input) {
        Ok(r) => r,
        Err(e) => return fail(&mut err, &e, 2),
    };
    // The engine (and its audit queue, which drains on drop) outlives the
    // printed line: the harness gets its answer first.
    let (decision, engine) = match engine(global) {
        Ok(engine) => match runtime() {
            Ok(rt) => (rt.block_on(engine.review(request)), Some(engine)),
            Err(e) => (config_error(&request, &e), Some(engine)),
        },
        Err(e) => (config_error(&request, &e), None),
    };
    let code = match print_line(&mut out, &decision) {
        Ok(()) => 0,
        Err(e) => fail(&mut err, &e, 2),
    };
    // After the decision is out: a slow or locked audit database delays
    // only this process's exit, by at most `audit.flush_timeout_ms`.
    if let Some(engine) = &engine {
        let wait = std::time::Duration::from_millis(engine.config().audit.flush_timeout_ms);
        engine.flush_audit(wait);
    }
    code
}

/// Without a usable configuration there is no failure mode to consult: deny.
fn config_error(request: &Request, e: &CliError) -> Decision {
    Decision::config_error(FailClosed::Deny, request.request_hash(), e.to_string())
}

/// `vouch grant consume --session S --token T` with the request on stdin.
pub fn grant_consume(
    global: &Global,
    session: &str,
    token: &str,
    input: impl Read,
    mut out: impl Write,
    mut err: impl Write,
) -> i32 {
    let request = match read_request(input) {
        Ok(r) => r,
        Err(e) => return fail(&mut err, &e, 2),
    };
    let engine = match engine(global) {
        Ok(e) => e,
        Err(e) => return fail(&mut err, &e, 2),
    };
    let consumed = match runtime() {
        Ok(rt) => rt.block_on(engine.consume_grant(session, token, &request)),
        Err(e) => return fail(&mut err, &e, 2),
    };
    match consumed {
        Ok(consumed) => {
            if let Err(e) = print_line(&mut out, &serde_json::json!({ "consumed": consumed })) {
                return fail(&mut err, &e, 2);
            }
            if consumed { 0 } else { 1 }
        }
        Err(e) => fail(&mut err, &e, 2),
    }
}

/// Runs an operator command against the shared state. The trusted
/// configuration decides here; a project overlay that disables break glass
/// is enforced again when the exact retry reaches the pipeline.
fn with_operator(
    global: &Global,
    session_id: &str,
    mut err: impl Write,
    run: impl FnOnce(OperatorContext<'_>) -> Result<(), operator::OperatorError>,
) -> i32 {
    let engine = match engine(global) {
        Ok(e) => e,
        Err(e) => return fail(&mut err, &e, 2),
    };
    let (store, clock, cfg) = match engine.operator_context() {
        Ok(parts) => parts,
        Err(e) => return fail(&mut err, &e, 2),
    };
    let ctx = OperatorContext {
        store: &store,
        clock,
        cfg,
        session: session_id,
    };
    match run(ctx) {
        Ok(()) => 0,
        Err(e) => fail(&mut err, &e, 1),
    }
}

/// `vouch approve --session S [N|HASH]`.
pub fn approve(
    global: &Global,
    session_id: &str,
    selector: Option<&str>,
    input: impl BufRead,
    mut out: impl Write,
    err: impl Write,
) -> i32 {
    let is_tty = std::io::stdin().is_terminal();
    with_operator(global, session_id, err, |ctx| {
        operator::run_approve(ctx, selector, input, &mut out, is_tty).map(drop)
    })
}

/// `vouch break-glass --session S`: interactive, refuses without a terminal.
pub fn break_glass(
    global: &Global,
    session_id: &str,
    input: impl BufRead,
    mut out: impl Write,
    err: impl Write,
) -> i32 {
    let is_tty = std::io::stdin().is_terminal() && std::io::stdout().is_terminal();
    with_operator(global, session_id, err, |ctx| {
        operator::run_break_glass(ctx, input, &mut out, is_tty).map(drop)
    })
}

/// `vouch config show`: every effective value with the layer it came from.
/// With `--project DIR`, the project overlay of DIR is folded in too.
pub fn config_show(
    global: &Global,
    project: Option<&Path>,
    mut out: impl Write,
    mut err: impl Write,
) -> i32 {
    let (_, loaded) = match load(global) {
        Ok(l) => l,
        Err(e) => return fail(&mut err, &e, 2),
    };
    let shown = match project {
        None => loaded,
        Some(dir) => match crate::config::for_project(&loaded, Some(dir)).effective {
            Ok(l) => l,
            Err(e) => return fail(&mut err, &e, 2),
        },
    };
    match out.write_all(render_show(&shown).as_bytes()) {
        Ok(()) => 0,
        Err(e) => fail(&mut err, &e, 2),
    }
}

/// `vouch serve`: loads the trusted configuration (an invalid one refuses to
/// start, naming file, key and problem), binds, prints where the tokens are
/// (never their values) and serves until SIGINT or SIGTERM.
pub fn serve(global: &Global, listen: Option<&str>, mut err: impl Write) -> i32 {
    let (paths, mut loaded) = match load(global) {
        Ok(l) => l,
        Err(e) => return fail(&mut err, &e, 2),
    };
    if let Some(listen) = listen {
        let mut cfg = (*loaded.config).clone();
        cfg.server.listen = listen.to_owned();
        loaded.config = std::sync::Arc::new(cfg);
    }
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .thread_stack_size(THREAD_STACK_BYTES)
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => return fail(&mut err, &format!("cannot start the runtime: {e}"), 2),
    };
    let mut options = EngineOptions::from_process(paths, loaded);
    options.confine.config.clone_from(&global.config);
    let console = &mut err;
    let result: Result<(), crate::server::ServeError> = runtime.block_on(async move {
        let cfg = &options.trusted.config;
        tracing::info!(
            provider = ?cfg.reviewer.provider,
            model = %cfg.reviewer.model,
            "reviewer configured"
        );
        let (listener, state) = crate::server::prepare(options).await?;
        // The service's stderr is its operator console: one line each.
        let _ = writeln!(
            console,
            "vouch: adapter token in {}",
            state.tokens().adapter_path().display()
        );
        let _ = writeln!(
            console,
            "vouch: operator token in {}",
            state.tokens().operator_path().display()
        );
        // Handlers first, so a signal sent on reading the line below is a
        // graceful shutdown.
        let shutdown = crate::server::shutdown_signal();
        let _ = writeln!(console, "vouch: listening on {}", listener.describe());
        crate::server::run(listener, state, shutdown).await
    });
    crate::telemetry::report_dropped_log_lines();
    match result {
        Ok(()) => 0,
        Err(e) => fail(&mut err, &e, 1),
    }
}

/// `vouch audit report`: statistics and suggested rules, as text or JSON.
pub fn audit_report(
    global: &Global,
    options: crate::audit::report::Options,
    json: bool,
    mut out: impl Write,
    mut err: impl Write,
) -> i32 {
    let engine = match engine(global) {
        Ok(e) => e,
        Err(e) => return fail(&mut err, &e, 2),
    };
    let report = match runtime() {
        Ok(rt) => rt.block_on(engine.audit_report(options)),
        Err(e) => return fail(&mut err, &e, 2),
    };
    let report = match report {
        Ok(r) => r,
        Err(crate::engine::EngineError::AuditInput(m)) => return fail(&mut err, &m, 2),
        Err(e) => return fail(&mut err, &e, 1),
    };
    let written = if json {
        print_line(&mut out, &report)
    } else {
        out.write_all(crate::audit::report::render_text(&report).as_bytes())
    };
    match written {
        Ok(()) => 0,
        Err(e) => fail(&mut err, &e, 2),
    }
}

/// `vouch hook <harness>`: one hook call, decided in a supervised worker
/// process ([`crate::hooks::supervise`]). Always exit 0: every fault,
/// the worker's crash included, is a fail-closed reply in the harness's
/// own schema. Nothing is set up here beyond what supervising needs (no
/// configuration, no logging): the worker does the rest.
pub fn hook<R, W>(global: &Global, request: &HookRequest, input: R, out: W) -> i32
where
    R: Read + Send + 'static,
    W: Write,
{
    let supervision = crate::hooks::supervise::Supervision {
        harness: request.harness,
        timeout_secs: request.timeout_secs,
        worker_args: request.worker_args(global),
    };
    crate::hooks::supervise::supervise(&supervision, input, out)
}

/// `vouch hook-worker <harness>` (hidden): the decision of one hook call,
/// in the process a supervising `vouch hook` started; its output is
/// frames for the supervisor ([`crate::hooks::run`]).
pub fn hook_worker<R, W>(global: &Global, request: HookRequest, input: R, out: W) -> i32
where
    R: Read,
    W: Write + Send + 'static,
{
    // An unknown `--defer-as` must not make the hook fail open: the
    // strictest reading (never ask) is used, and said on stderr.
    let defer_as = request.defer_as.parse().unwrap_or_else(|e: String| {
        tracing::warn!(problem = %e, "using `--defer-as deny`");
        crate::hooks::DeferAs::Deny
    });
    let opts = crate::hooks::HookOptions {
        harness: request.harness,
        home: request.home,
        config: global.config.clone(),
        timeout_secs: request.timeout_secs,
        defer_as,
        remote: request.remote,
        framed: true,
    };
    crate::hooks::run_hook(&opts, input, out)
}

/// What `vouch hook <harness>` was given on its command line.
#[derive(Debug, Clone)]
pub struct HookRequest {
    pub harness: crate::hooks::HarnessId,
    /// `--home DIR`.
    pub home: Option<PathBuf>,
    /// `--timeout SECONDS`.
    pub timeout_secs: Option<u64>,
    /// `--defer-as MODE`, as written.
    pub defer_as: String,
    /// `--server URL` and its options.
    pub remote: Option<crate::hooks::remote::RemoteOptions>,
}

impl HookRequest {
    /// The worker's command line: `hook-worker <harness>` with every
    /// option this call was given, the same words `vouch hook` parsed
    /// (each field is read by name, so a new one cannot be forgotten here).
    pub fn worker_args(&self, global: &Global) -> Vec<std::ffi::OsString> {
        let HookRequest {
            harness,
            home,
            timeout_secs,
            defer_as,
            remote,
        } = self;
        let Global { config } = global;
        let mut args: Vec<std::ffi::OsString> = Vec::new();
        if let Some(config) = config {
            args.push("--config".into());
            args.push(config.into());
        }
        args.push(crate::hooks::supervise::WORKER_COMMAND.into());
        args.push(harness.as_str().into());
        if let Some(home) = home {
            args.push("--home".into());
            args.push(home.into());
        }
        if let Some(timeout) = timeout_secs {
            args.push("--timeout".into());
            args.push(timeout.to_string().into());
        }
        args.push("--defer-as".into());
        args.push(defer_as.into());
        if let Some(crate::hooks::remote::RemoteOptions {
            server,
            token_file,
            ca_file,
            allow_plain_http,
        }) = remote
        {
            args.push("--server".into());
            args.push(server.into());
            if let Some(file) = token_file {
                args.push("--token-file".into());
                args.push(file.into());
            }
            if let Some(file) = ca_file {
                args.push("--ca-file".into());
                args.push(file.into());
            }
            if *allow_plain_http {
                args.push("--allow-plain-http".into());
            }
        }
        args
    }
}

/// What `vouch hook snippet <harness>` was given on its command line.
#[derive(Debug, Clone)]
pub struct SnippetRequest {
    pub harness: String,
    /// `--http`: Claude Code's `type: "http"` form.
    pub http: bool,
    /// `--server URL` and its options, pinned into the hook command line.
    pub remote: Option<crate::hooks::remote::RemoteOptions>,
}

/// `vouch hook snippet <harness>`: the settings fragment on stdout, notes on
/// stderr. Runs in the user's own shell, so `VOUCH_HOME` here is trusted and
/// pinned into the hook command line.
pub fn hook_snippet(
    global: &Global,
    request: &SnippetRequest,
    mut out: impl Write,
    mut err: impl Write,
) -> i32 {
    use crate::hooks::snippet::{SnippetOptions, render};
    let http = request.http;
    let harness: crate::hooks::HarnessId = match request.harness.parse() {
        Ok(h) => h,
        Err(e) => return fail(&mut err, &e, 2),
    };
    let (_, loaded) = match load(global) {
        Ok(l) => l,
        Err(e) => return fail(&mut err, &e, 2),
    };
    let absolute = |p: &Path| std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf());
    let Some(exe) = crate::paths::current_exe().map(absolute) else {
        return fail(
            &mut err,
            &"cannot find the path of the running vouch binary",
            2,
        );
    };
    let env_dir = |name: &str| {
        std::env::var_os(name)
            .map(PathBuf::from)
            .filter(|p| p.is_absolute())
    };
    let codex_home = env_dir("CODEX_HOME")
        .or_else(|| env_dir("HOME").map(|h| h.join(".codex")))
        .unwrap_or_else(|| PathBuf::from("~/.codex"));
    let opts = SnippetOptions {
        harness,
        exe,
        home: env_dir("VOUCH_HOME"),
        config: global.config.as_deref().map(absolute),
        http,
        codex_config: codex_home.join("config.toml"),
        remote: request.remote.clone().map(|mut r| {
            // Pinned in the harness's settings: absolute, as the hook's
            // working directory is the project's.
            r.token_file = r.token_file.as_deref().map(absolute);
            r.ca_file = r.ca_file.as_deref().map(absolute);
            r
        }),
    };
    let (text, notes) = match render(&opts, &loaded.config) {
        Ok(rendered) => rendered,
        Err(e) => return fail(&mut err, &e, 2),
    };
    for note in notes {
        let _ = writeln!(err, "vouch: {note}");
    }
    match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        Ok(()) => 0,
        Err(e) => fail(&mut err, &e, 2),
    }
}

/// Lines handed to the engine per transaction.
const INGEST_BATCH_LINES: usize = 1000;

/// `vouch audit ingest`: JSON lines on stdin. Good lines are counted even
/// when others are refused; each refused line is named on stderr (exit 1).
/// Prints one summary line on stdout.
pub fn audit_ingest(
    global: &Global,
    input: impl BufRead,
    mut out: impl Write,
    mut err: impl Write,
) -> i32 {
    use crate::audit::ingest::{IngestSummary, MAX_EVENT_BYTES};
    let engine = match engine(global) {
        Ok(e) => e,
        Err(e) => return fail(&mut err, &e, 2),
    };
    let rt = match runtime() {
        Ok(rt) => rt,
        Err(e) => return fail(&mut err, &e, 2),
    };
    let mut lines = LineReader::new(input, MAX_EVENT_BYTES);
    let mut total = IngestSummary::default();
    while !lines.done {
        let (values, numbers) = match read_batch(&mut lines, &mut total) {
            Ok(batch) => batch,
            Err(e) => return fail(&mut err, &CliError::Stdin(e), 2),
        };
        if values.is_empty() {
            continue;
        }
        match rt.block_on(engine.audit_ingest(values, false)) {
            Ok(mut summary) => {
                // Indexes within the batch become line numbers.
                for rejected in &mut summary.rejected {
                    rejected.index = numbers.get(rejected.index).copied().unwrap_or(0);
                }
                total.add(summary);
            }
            Err(e) => return fail(&mut err, &e, 2),
        }
    }
    for rejected in &total.rejected {
        let _ = writeln!(err, "vouch: line {}: {}", rejected.index, rejected.error);
    }
    if let Err(e) = print_line(&mut out, &total) {
        return fail(&mut err, &e, 2);
    }
    if total.rejected.is_empty() { 0 } else { 1 }
}

/// Reads up to [`INGEST_BATCH_LINES`] events and their line numbers; lines
/// that are not JSON go straight to `total` as refused.
fn read_batch(
    lines: &mut LineReader<impl BufRead>,
    total: &mut crate::audit::ingest::IngestSummary,
) -> std::io::Result<(Vec<serde_json::Value>, Vec<usize>)> {
    let mut values = Vec::new();
    let mut numbers = Vec::new();
    while values.len() < INGEST_BATCH_LINES {
        let Some((number, line)) = lines.next_line()? else {
            break;
        };
        let parsed = line.and_then(|text| {
            if text.trim().is_empty() {
                return Ok(None);
            }
            serde_json::from_str(&text)
                .map(Some)
                .map_err(|e| format!("not valid JSON (column {})", e.column()))
        });
        match parsed {
            Ok(None) => {}
            Ok(Some(value)) => {
                values.push(value);
                numbers.push(number);
            }
            Err(error) => {
                total.events += 1;
                total.rejected.push(crate::audit::ingest::Rejected {
                    index: number,
                    error,
                });
            }
        }
    }
    Ok((values, numbers))
}

/// Reads lines of at most `limit` bytes; a longer line is skipped (to its
/// end, in bounded chunks) and reported, never cut.
struct LineReader<R> {
    input: R,
    limit: usize,
    number: usize,
    done: bool,
}

impl<R: BufRead> LineReader<R> {
    fn new(input: R, limit: usize) -> Self {
        LineReader {
            input,
            limit,
            number: 0,
            done: false,
        }
    }

    /// The next line with its 1-based number: its text, or why it was
    /// refused. `Ok(None)` at the end.
    fn next_line(&mut self) -> std::io::Result<Option<(usize, Result<String, String>)>> {
        if self.done {
            return Ok(None);
        }
        let mut buf = Vec::new();
        let limit = u64::try_from(self.limit).unwrap_or(u64::MAX);
        let read = (&mut self.input)
            .take(limit.saturating_add(1))
            .read_until(b'\n', &mut buf)?;
        if read == 0 {
            self.done = true;
            return Ok(None);
        }
        self.number += 1;
        let ended = buf.last() == Some(&b'\n');
        if !ended && buf.len() > self.limit {
            // Skip the rest of the over-long line without buffering it.
            loop {
                let mut chunk = Vec::new();
                let n = (&mut self.input)
                    .take(64 * 1024)
                    .read_until(b'\n', &mut chunk)?;
                if n == 0 || chunk.last() == Some(&b'\n') {
                    break;
                }
            }
            return Ok(Some((
                self.number,
                Err(format!(
                    "line is longer than the limit of {} bytes",
                    self.limit
                )),
            )));
        }
        let text = match String::from_utf8(buf) {
            Ok(text) => text,
            Err(e) => {
                return Ok(Some((
                    self.number,
                    Err(format!(
                        "line is not valid UTF-8 (at byte {})",
                        e.utf8_error().valid_up_to()
                    )),
                )));
            }
        };
        Ok(Some((self.number, Ok(text))))
    }
}

/// What `vouch eval` was asked.
#[derive(Debug, Clone)]
pub struct EvalOptions {
    pub sets: Vec<PathBuf>,
    /// A second trusted overlay, run on the same cases beside the first.
    pub compare: Option<PathBuf>,
    pub concurrency: usize,
    pub json: bool,
}

/// `vouch eval`: labelled cases through the whole pipeline, then the report
/// (text, or the stable JSON document). Exit 0 with a report, 2 for bad
/// sets, options or configuration.
pub fn eval(
    global: &Global,
    options: &EvalOptions,
    mut out: impl Write,
    mut err: impl Write,
) -> i32 {
    use crate::eval::{self, Report, report};
    let cases = match eval::load_sets(&options.sets) {
        Ok(c) => c,
        Err(e) => return fail(&mut err, &e, 2),
    };
    let (paths, base) = match load(global) {
        Ok(loaded) => loaded,
        Err(e) => return fail(&mut err, &e, 2),
    };
    let mut configs = vec![eval::eval_config(&base)];
    if let Some(file) = &options.compare {
        match load_process_config(&paths, Some(file)) {
            Ok(loaded) => configs.push(eval::eval_config(&loaded)),
            Err(e) => {
                let e = format!("invalid `--compare` configuration: {e}");
                return fail(&mut err, &e, 2);
            }
        }
    }
    let mut reports = Vec::new();
    for config in &configs {
        let progress = EvalProgress::on_terminal();
        match eval::run(&cases, config, options.concurrency, &progress) {
            Ok(results) => reports.push(Report::of(&cases, &results, config)),
            Err(e) => return fail(&mut err, &e, 2),
        }
    }
    let written = match (reports.as_slice(), options.json) {
        ([one], true) => print_line(&mut out, one),
        ([one], false) => out.write_all(report::render_text(one).as_bytes()),
        ([a, b], true) => print_line(&mut out, &serde_json::json!({ "reports": [a, b] })),
        ([a, b], false) => out.write_all(report::render_compare(a, b).as_bytes()),
        // INVARIANT: one configuration, or two with `--compare`.
        _ => return fail(&mut err, &"no report was made", 2),
    };
    match written {
        Ok(()) => 0,
        Err(e) => fail(&mut err, &e, 2),
    }
}

/// `vouch eval`'s progress bar, on stderr when it is a terminal.
struct EvalProgress(Option<indicatif::ProgressBar>);

impl EvalProgress {
    fn on_terminal() -> EvalProgress {
        EvalProgress(std::io::stderr().is_terminal().then(|| {
            let bar = indicatif::ProgressBar::new(0);
            if let Ok(style) = indicatif::ProgressStyle::with_template(
                "{bar:40} {pos}/{len} cases, {elapsed} elapsed, about {eta} left",
            ) {
                bar.set_style(style);
            }
            bar
        }))
    }
}

impl crate::eval::Progress for EvalProgress {
    fn started(&self, total: usize) {
        if let Some(bar) = &self.0 {
            bar.set_length(u64::try_from(total).unwrap_or(u64::MAX));
        }
    }

    fn finished_one(&self) {
        if let Some(bar) = &self.0 {
            bar.inc(1);
        }
    }

    fn done(&self) {
        if let Some(bar) = &self.0 {
            bar.finish_and_clear();
        }
    }
}
