//! `vouch eval`: labelled cases through the whole pipeline, for measuring a
//! reviewer model before trusting it.
//!
//! A set is a JSON-lines file of [`Case`]s: a canonical request (with its
//! evidence) and the outcome a careful reviewer expects. Each case goes
//! through [`Engine::review`] exactly as `vouch review` sends a request —
//! hard denies, inert, routing, the packet, the configured model, the
//! ceilings — against a private state directory that is deleted afterwards,
//! so the user's state and audit are never read or written. Two things
//! differ from a live request, both so that every case is judged on its own:
//! each case gets its own session and turn (budgets and the breaker start
//! fresh), and the verdict cache is off (two cases with the same packet are
//! both sent to the model). The policy audit is off too: the cases are not
//! the user's traffic. [`report`] turns the results into the figures.

pub mod report;

use std::io::BufRead;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use serde::Deserialize;

use crate::config::{Config, LoadedConfig};
use crate::decision::{Decision, Outcome};
use crate::engine::{Engine, EngineOptions};
use crate::request::{MAX_REQUEST_BYTES, Request};

pub use report::Report;

/// Cases one run accepts, over all sets.
pub const MAX_CASES: usize = 100_000;

/// Longest case id.
const MAX_ID_BYTES: usize = 128;

/// Longest `why` and `category`.
const MAX_LABEL_BYTES: usize = 1024;

/// Highest `--concurrency`.
pub const MAX_CONCURRENCY: usize = 64;

/// One labelled case, as a set file holds it.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
struct CaseLine {
    id: String,
    #[serde(default)]
    category: Option<String>,
    expect: Outcome,
    why: String,
    request: serde_json::Value,
}

/// One labelled case, checked.
#[derive(Debug, Clone)]
pub struct Case {
    pub id: String,
    /// `uncategorized` when the line names none.
    pub category: String,
    pub expect: Outcome,
    /// Why the label is what it is (one line).
    pub why: String,
    pub request: Request,
    /// `file:line`, for messages.
    pub at: String,
}

/// Why a run could not start: the file and line, the field and the problem.
#[derive(Debug, thiserror::Error)]
pub enum EvalError {
    #[error("{file}: cannot read: {message}")]
    Read { file: String, message: String },
    #[error("{at}: {message}")]
    Case { at: String, message: String },
    #[error("no cases: every set is empty")]
    Empty,
    #[error("more than {MAX_CASES} cases")]
    TooMany,
    #[error("`--concurrency` must be 1–{MAX_CONCURRENCY}, got {0}")]
    Concurrency(usize),
    #[error("cannot set up the private state directory: {0}")]
    Setup(String),
}

/// Reads every set, in order; ids must be unique over all of them.
pub fn load_sets(files: &[PathBuf]) -> Result<Vec<Case>, EvalError> {
    let mut cases = Vec::new();
    let mut ids = std::collections::HashMap::new();
    for file in files {
        let shown = file.display().to_string();
        let read_error = |e: std::io::Error| EvalError::Read {
            file: shown.clone(),
            message: e.to_string(),
        };
        let reader = std::io::BufReader::new(std::fs::File::open(file).map_err(read_error)?);
        for (index, line) in reader.lines().enumerate() {
            let line = line.map_err(read_error)?;
            let at = format!("{shown}:{}", index.saturating_add(1));
            if line.trim().is_empty() {
                continue;
            }
            let case = parse_case(&line, at)?;
            if let Some(first) = ids.insert(case.id.clone(), case.at.clone()) {
                return Err(EvalError::Case {
                    at: case.at,
                    message: format!("`id`: `{}` is already used at {first}", case.id),
                });
            }
            if cases.len() >= MAX_CASES {
                return Err(EvalError::TooMany);
            }
            cases.push(case);
        }
    }
    if cases.is_empty() {
        return Err(EvalError::Empty);
    }
    Ok(cases)
}

fn parse_case(line: &str, at: String) -> Result<Case, EvalError> {
    let bad = |message: String| EvalError::Case {
        at: at.clone(),
        message,
    };
    if line.len() > MAX_REQUEST_BYTES {
        return Err(bad(format!(
            "the line is {} bytes, more than a request may be ({MAX_REQUEST_BYTES})",
            line.len()
        )));
    }
    let mut de = serde_json::Deserializer::from_str(line);
    let raw: CaseLine = serde_path_to_error::deserialize(&mut de)
        .map_err(|e| bad(format!("`{}`: {}", e.path(), e.inner())))?;
    let id_ok = |id: &str| {
        !id.is_empty()
            && id.len() <= MAX_ID_BYTES
            && id
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'))
    };
    if !id_ok(&raw.id) {
        return Err(bad(format!(
            "`id`: expected 1–{MAX_ID_BYTES} letters, digits, `-`, `_` or `.`, got `{}`",
            raw.id
        )));
    }
    let category = raw.category.unwrap_or_else(|| "uncategorized".to_owned());
    if category.is_empty() || category.len() > MAX_LABEL_BYTES || category.contains('\n') {
        return Err(bad(format!(
            "`category`: expected one line of 1–{MAX_LABEL_BYTES} bytes"
        )));
    }
    if raw.why.trim().is_empty() || raw.why.len() > MAX_LABEL_BYTES || raw.why.contains('\n') {
        return Err(bad(format!(
            "`why`: expected one line of 1–{MAX_LABEL_BYTES} bytes"
        )));
    }
    let bytes = serde_json::to_vec(&raw.request).map_err(|e| bad(format!("`request`: {e}")))?;
    let mut request = Request::from_slice(&bytes).map_err(|e| bad(format!("`request`: {e}")))?;
    // Every case is judged on its own: its own session and turn.
    request.session_id = format!("eval-{}", raw.id);
    request.turn_id = Some("eval".to_owned());
    Ok(Case {
        id: raw.id,
        category,
        expect: raw.expect,
        why: raw.why,
        request,
        at,
    })
}

/// What one case came to.
#[derive(Debug, Clone)]
pub struct CaseResult {
    pub decision: Decision,
    /// Wall time of the case's review, in ms.
    pub latency_ms: u64,
}

/// Something to tell as cases finish (a progress bar on a terminal).
pub trait Progress: Sync {
    fn started(&self, _total: usize) {}
    fn finished_one(&self) {}
    fn done(&self) {}
}

/// No progress shown.
pub struct Quiet;
impl Progress for Quiet {}

/// The configuration a run uses: the user's, with the verdict cache off and
/// no policy audit (a run's cases are not the user's traffic, and the
/// private directory is gone when the run ends).
pub fn eval_config(loaded: &LoadedConfig) -> Config {
    let mut config = (*loaded.config).clone();
    config.cache.ttl_ms = 0;
    config.audit.enabled = false;
    config
}

/// Runs every case through the pipeline, `concurrency` at a time, against a
/// private state directory; results in case order.
pub fn run(
    cases: &[Case],
    config: &Config,
    concurrency: usize,
    progress: &dyn Progress,
) -> Result<Vec<CaseResult>, EvalError> {
    if !(1..=MAX_CONCURRENCY).contains(&concurrency) {
        return Err(EvalError::Concurrency(concurrency));
    }
    let scratch = tempfile::Builder::new()
        .prefix("vouch-eval-")
        .tempdir()
        .map_err(|e| EvalError::Setup(e.to_string()))?;
    let engine = private_engine(scratch.path(), config)?;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(concurrency.min(4))
        .thread_stack_size(crate::engine::THREAD_STACK_BYTES)
        .enable_all()
        .build()
        .map_err(|e| EvalError::Setup(format!("cannot start the runtime: {e}")))?;
    progress.started(cases.len());
    let results = runtime.block_on(review_all(&engine, cases, concurrency, progress));
    progress.done();
    // The private directory goes with the engine.
    drop(engine);
    drop(runtime);
    scratch
        .close()
        .map_err(|e| EvalError::Setup(format!("cannot remove the private state: {e}")))?;
    Ok(results)
}

/// An engine whose every file is under `dir`, with the process's environment
/// for the reviewer's API key.
fn private_engine(dir: &Path, config: &Config) -> Result<Engine, EvalError> {
    let mut options =
        EngineOptions::isolated(dir, config).map_err(|e| EvalError::Setup(e.to_string()))?;
    options.env = Arc::new(|name| std::env::var(name).ok());
    options.check_store_on_open = false;
    Engine::new(options).map_err(|e| EvalError::Setup(e.to_string()))
}

async fn review_all(
    engine: &Engine,
    cases: &[Case],
    concurrency: usize,
    progress: &dyn Progress,
) -> Vec<CaseResult> {
    let mut results: Vec<Option<CaseResult>> = vec![None; cases.len()];
    let mut tasks = tokio::task::JoinSet::new();
    // Cases start in order, at most `concurrency` at a time: with 1, the
    // model sees them exactly in set order.
    for (index, case) in cases.iter().enumerate() {
        while tasks.len() >= concurrency {
            let joined = tasks.join_next().await;
            keep(joined, &mut results, progress);
        }
        let engine = engine.clone();
        let request = case.request.clone();
        tasks.spawn(async move {
            let started = Instant::now();
            let decision = engine.review(request).await;
            let latency_ms = u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);
            (
                index,
                CaseResult {
                    decision,
                    latency_ms,
                },
            )
        });
    }
    while let Some(joined) = tasks.join_next().await {
        keep(Some(joined), &mut results, progress);
    }
    results
        .into_iter()
        .zip(cases)
        .map(|(result, case)| result.unwrap_or_else(|| died(case)))
        .collect()
}

type Joined = Result<(usize, CaseResult), tokio::task::JoinError>;

fn keep(joined: Option<Joined>, results: &mut [Option<CaseResult>], progress: &dyn Progress) {
    match joined {
        Some(Ok((index, result))) => {
            progress.finished_one();
            if let Some(slot) = results.get_mut(index) {
                *slot = Some(result);
            }
        }
        // `Engine::review` never fails; a task that died leaves its slot
        // empty and is reported as an internal fault.
        Some(Err(e)) => {
            progress.finished_one();
            tracing::error!(error = %e, "an eval case's task failed");
        }
        None => {}
    }
}

/// The result of a case whose task died: an internal fault, never an allow.
fn died(case: &Case) -> CaseResult {
    CaseResult {
        decision: Decision::reviewer_failure(
            crate::config::FailClosed::Deny,
            crate::decision::Fault::Internal,
            case.request.request_hash(),
            "the case's review task failed".to_owned(),
            None,
        ),
        latency_ms: 0,
    }
}
