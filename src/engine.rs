//! The engine: one running vouch — its configuration, state and reviewer —
//! behind a small async API that the CLI, the HTTP service and the harness
//! adapters all call.
//!
//! `review` never fails: every error inside becomes a fail-closed
//! [`Decision`]. The deterministic stages and all SQLite work run on the
//! blocking pool (`spawn_blocking`); only the model call is awaited on the
//! async runtime. The operator calls return [`EngineError`], whose variants
//! map onto HTTP status classes at the edge.

use std::path::Path;
use std::sync::{Arc, Mutex};

use serde_json::Value;

use crate::audit::{self, Audit, Observation, ProjectAudit};
use crate::clock::{Clock, SystemClock};
use crate::config::{Config, ConfigError, LoadedConfig};
use crate::decision::{Decision, Grant, Outcome, Stage};
use crate::grants;
use crate::paths::Paths;
use crate::pipeline::{self, Prepared, ReviewJob};
use crate::request::Request;
use crate::reviewer::{self, ModelInput, ReviewResult, Reviewer};
use crate::session::overrides::{self, OverrideError, Selector};
use crate::store::{Store, StoreError};

/// Why an engine call (other than `review`) failed.
#[derive(Debug, thiserror::Error)]
pub enum EngineError {
    /// The caller's input is wrong (HTTP 400).
    #[error("{0}")]
    BadRequest(String),
    /// The named thing does not exist (HTTP 404).
    #[error("{0}")]
    NotFound(String),
    /// The request conflicts with current state, e.g. an override already
    /// pending (HTTP 409).
    #[error("{0}")]
    Conflict(String),
    /// Configuration forbids it, e.g. break glass disabled (HTTP 403).
    #[error("{0}")]
    Forbidden(String),
    /// An internal fault; the message is for logs, not for clients (HTTP 5xx).
    #[error("{0}")]
    Internal(String),
}

impl From<StoreError> for EngineError {
    fn from(e: StoreError) -> Self {
        EngineError::Internal(e.to_string())
    }
}

impl From<OverrideError> for EngineError {
    fn from(e: OverrideError) -> Self {
        use OverrideError as E;
        match e {
            E::Store(inner) => EngineError::Internal(inner.to_string()),
            E::InvalidSelector { .. } => EngineError::BadRequest(e.to_string()),
            E::NoSuchDenial { .. } | E::NoSuchChallenge { .. } | E::NoCriticalDenial { .. } => {
                EngineError::NotFound(e.to_string())
            }
            E::BreakGlassDisabled => EngineError::Forbidden(e.to_string()),
            E::AlreadyPending { .. }
            | E::AlreadyUsed { .. }
            | E::AmbiguousPrefix { .. }
            | E::CriticalNeedsBreakGlass { .. }
            | E::NotCritical { .. }
            | E::OutsideWindow { .. }
            | E::PhraseMismatch
            | E::StaleChallenge { .. }
            | E::ChallengeExpired { .. } => EngineError::Conflict(e.to_string()),
        }
    }
}

/// Reads one environment variable (injectable so tests never see the real one).
pub type EnvLookup = Arc<dyn Fn(&str) -> Option<String> + Send + Sync>;

/// What the engine needs to start.
#[derive(Clone)]
pub struct EngineOptions {
    /// Where vouch's files live.
    pub paths: Paths,
    /// The effective trusted configuration (defaults → user → `--config` →
    /// environment).
    pub trusted: LoadedConfig,
    /// Time source for TTLs and expiry.
    pub clock: Arc<dyn Clock>,
    /// Reads the reviewer API key variable (`std::env::var` in production).
    pub env: EnvLookup,
    /// Allow deciding for a project that contains vouch's own binary or
    /// trusted config (`VOUCH_ALLOW_UNTRUSTED_DEV=1`, local development).
    pub allow_untrusted_dev: bool,
}

impl EngineOptions {
    /// Options for an isolated instance: everything under `vouch_home` (as
    /// with `VOUCH_HOME`), the given configuration, the system clock, no API
    /// key unless `env` provides one. What tests and tools use.
    pub fn isolated(vouch_home: &Path, config: &Config) -> Result<EngineOptions, ConfigError> {
        let home = vouch_home.display().to_string();
        let paths = Paths::from_lookup(|name| match name {
            "VOUCH_HOME" => Some(home.clone()),
            _ => None,
        })
        .map_err(|e| ConfigError::Io {
            file: home.clone(),
            message: e.to_string(),
        })?;
        Ok(EngineOptions {
            paths,
            trusted: LoadedConfig::from_config(config)?,
            clock: Arc::new(SystemClock),
            env: Arc::new(|_| None),
            allow_untrusted_dev: false,
        })
    }

    /// Options for this process: real paths, clock and environment.
    pub fn from_process(paths: Paths, trusted: LoadedConfig) -> EngineOptions {
        EngineOptions {
            paths,
            trusted,
            clock: Arc::new(SystemClock),
            env: Arc::new(|name| std::env::var(name).ok()),
            allow_untrusted_dev: std::env::var("VOUCH_ALLOW_UNTRUSTED_DEV").as_deref() == Ok("1"),
        }
    }
}

/// Project roots whose folded overlay is kept in memory.
const PROJECT_CACHE_ENTRIES: usize = 256;

/// A cheaply cloneable handle to one running vouch.
#[derive(Clone)]
pub struct Engine {
    inner: Arc<Inner>,
}

struct Inner {
    options: EngineOptions,
    /// The state database, opened on first use. A failure is not cached: the
    /// next request tries again, and meanwhile model-backed reviews fail
    /// closed while hard denies still answer.
    store: Mutex<Option<Arc<Store>>>,
    /// The one HTTP client for every reviewer call.
    http: reqwest::Client,
    /// Project overlays already folded, keyed by project root.
    projects: crate::config::ProjectCache,
    /// The policy audit: every final decision is observed here, off the
    /// decision path.
    audit: Audit,
}

impl Engine {
    pub fn new(options: EngineOptions) -> Result<Engine, EngineError> {
        let http = reviewer::http_client().map_err(|e| EngineError::Internal(e.to_string()))?;
        let audit = Audit::new(
            &options.paths.state_dir,
            &options.trusted.config.audit,
            Arc::clone(&options.clock),
        );
        Ok(Engine {
            inner: Arc::new(Inner {
                options,
                store: Mutex::new(None),
                http,
                projects: crate::config::ProjectCache::new(PROJECT_CACHE_ENTRIES),
                audit,
            }),
        })
    }

    /// The policy audit of this engine.
    pub fn audit(&self) -> &Audit {
        &self.inner.audit
    }

    /// The project root and audit settings in force for a working directory
    /// (the project overlay may only turn auditing off or shorten retention;
    /// a rejected overlay leaves the trusted settings).
    pub fn audit_project(&self, cwd: Option<&str>) -> (Option<std::path::PathBuf>, ProjectAudit) {
        let trusted = &self.inner.options.trusted;
        let project = self.inner.projects.for_project(trusted, cwd.map(Path::new));
        let settings = match &project.effective {
            Ok(loaded) => ProjectAudit::of(&loaded.config.audit),
            Err(_) => ProjectAudit::of(&trusted.config.audit),
        };
        (project.root, settings)
    }

    /// What the audit will record about `request`, before its decision.
    fn audit_draft(&self, request: &Request) -> Option<Observation> {
        self.inner.audit.settings()?;
        let (root, project) = self.audit_project(request.cwd.as_deref());
        let what = audit::What::Ran;
        Some(Observation::of_request(
            request,
            what,
            project,
            root,
            self.clock().now_ms(),
        ))
    }

    /// Records that a harness ran `request` (Claude Code / Codex
    /// `PostToolUse`, Gemini `AfterTool`, Cursor's after-hooks): if vouch had
    /// deferred it in this session, a human approved it. Never blocks on the
    /// audit database and never fails; it does look up the project (a few
    /// `stat` calls), so async callers run it on the blocking pool.
    pub fn observe_ran(&self, request: &Request) {
        if let Some(draft) = self.audit_draft(request) {
            self.inner.audit.observe(draft);
        }
    }

    /// The trusted configuration (before any project overlay).
    pub fn config(&self) -> &Config {
        &self.inner.options.trusted.config
    }

    pub fn state_dir(&self) -> &Path {
        &self.inner.options.paths.state_dir
    }

    fn clock(&self) -> &dyn Clock {
        self.inner.options.clock.as_ref()
    }

    /// The state database, opening it on first use.
    pub fn store(&self) -> Result<Arc<Store>, StoreError> {
        // A panic elsewhere cannot leave the slot half-written: it holds an
        // `Option<Arc<Store>>` that is replaced whole.
        let mut slot = self
            .inner
            .store
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Some(store) = slot.as_ref() {
            return Ok(Arc::clone(store));
        }
        let store = Arc::new(Store::open(self.state_dir())?);
        *slot = Some(Arc::clone(&store));
        Ok(store)
    }

    /// Decides one request. Never fails: faults become fail-closed decisions.
    /// The final decision, whatever stage made it, is observed by the audit
    /// (one channel send; the audit's own work happens on its writer thread).
    pub async fn review(&self, request: Request) -> Decision {
        let (decision, draft) = self.decide(request).await;
        if let Some(draft) = draft {
            self.inner.audit.observe(draft.decided(&decision));
        }
        decision
    }

    async fn decide(&self, request: Request) -> (Decision, Option<Observation>) {
        let hash = request.request_hash();
        let failure_mode = self.config().decision.failure_mode.outcome();
        let this = self.clone();
        let prepared = tokio::task::spawn_blocking(move || {
            let draft = this.audit_draft(&request);
            (this.prepare(request), draft)
        })
        .await;
        let (job, draft) = match prepared {
            Ok((Prepared::Decided(decision), draft)) => return (*decision, draft),
            Ok((Prepared::Review(job), draft)) => (job, draft),
            Err(join) => {
                tracing::error!(error = %join, "decision task failed");
                let failed = internal_failure(failure_mode, hash, "the decision task failed");
                return (failed, None);
            }
        };
        let result = self.call_model(&job).await;
        let this = self.clone();
        let decision = match tokio::task::spawn_blocking(move || this.finish(*job, result)).await {
            Ok(decision) => decision,
            Err(join) => {
                tracing::error!(error = %join, "decision task failed");
                internal_failure(failure_mode, hash, "the decision task failed")
            }
        };
        (decision, draft)
    }

    /// Runs the stages before the model call (blocking: filesystem and
    /// SQLite). Either a decision, or the job [`Engine::review`] hands to the
    /// model and then to [`pipeline::finish`].
    pub fn prepare(&self, request: Request) -> Prepared {
        let ctx = pipeline::Context {
            paths: &self.inner.options.paths,
            trusted: &self.inner.options.trusted,
            projects: &self.inner.projects,
            clock: self.clock(),
            allow_untrusted_dev: self.inner.options.allow_untrusted_dev,
            store: &|| self.store(),
            reviewer: &|cfg: &Config| self.reviewer_for(cfg),
        };
        pipeline::prepare(&ctx, request)
    }

    fn reviewer_for(&self, cfg: &Config) -> Result<Reviewer, reviewer::ReviewerError> {
        let key = reviewer::api_key_from_env(&cfg.reviewer, &|name| (self.inner.options.env)(name));
        Reviewer::new(&cfg.reviewer, self.inner.http.clone(), key)
    }

    /// Calls the model inside a span carrying the evidence counts, so the
    /// reviewer's `review_attempt` and `review_complete` events are reported
    /// with them (counts only: never text).
    async fn call_model(&self, job: &ReviewJob) -> ReviewResult {
        use tracing::Instrument as _;
        let counts = &job.packet.counts;
        let span = tracing::info_span!(
            "review",
            evidence.user_messages = counts.user_messages,
            evidence.tool_calls = counts.tool_calls,
            evidence.tool_results = counts.tool_results,
            evidence.summaries = counts.summaries,
            evidence.cut = counts.cut,
            evidence.dropped = counts.dropped,
            evidence.redactions = counts.redactions.total(),
        );
        let input = ModelInput {
            system: &job.packet.system,
            user: &job.packet.user,
        };
        job.reviewer
            .review(input, job.packet.estimated_tokens)
            .instrument(span)
            .await
    }

    fn finish(&self, job: ReviewJob, result: ReviewResult) -> Decision {
        pipeline::finish(self.clock(), job, result)
    }

    /// Ingests decision and after-the-fact events (`vouch audit ingest`,
    /// `POST /v1/audit/events`). Each event is parsed on its own; refused
    /// ones are listed by index. With `all_or_nothing`, one refused event
    /// refuses the batch and nothing is written.
    pub async fn audit_ingest(
        &self,
        events: Vec<Value>,
        all_or_nothing: bool,
    ) -> Result<audit::ingest::IngestSummary, EngineError> {
        let this = self.clone();
        blocking(move || {
            let mut summary = audit::ingest::IngestSummary {
                events: u64::try_from(events.len()).unwrap_or(u64::MAX),
                ..Default::default()
            };
            // One lookup per directory and batch: events repeat them.
            let seen = std::cell::RefCell::new(std::collections::HashMap::new());
            let lookup = |cwd: Option<&str>| {
                seen.borrow_mut()
                    .entry(cwd.map(str::to_owned))
                    .or_insert_with(|| this.audit_project(cwd))
                    .clone()
            };
            let ctx = audit::ingest::Context {
                now_ms: this.clock().now_ms(),
                project: &lookup,
            };
            let mut observations = Vec::with_capacity(events.len());
            for (index, event) in events.iter().enumerate() {
                match audit::ingest::parse_value(event, &ctx) {
                    Ok(o) => observations.push(o),
                    Err(e) => summary.rejected.push(audit::ingest::Rejected {
                        index,
                        error: e.to_string(),
                    }),
                }
            }
            if all_or_nothing && let Some(first) = summary.rejected.first() {
                return Err(EngineError::BadRequest(format!(
                    "event {}: {} ({} of {} events refused; nothing was stored)",
                    first.index,
                    first.error,
                    summary.rejected.len(),
                    summary.events
                )));
            }
            summary.not_audited = observations
                .iter()
                .filter(|o| !o.project.enabled)
                .count()
                .try_into()
                .unwrap_or(u64::MAX);
            let written = this
                .inner
                .audit
                .write_now(&observations)
                .map_err(|e| match e {
                    audit::AuditError::Disabled => EngineError::Conflict(e.to_string()),
                    other => EngineError::Internal(other.to_string()),
                })?;
            summary.counted = written.counted;
            summary.duplicates = written.duplicates;
            summary.expired = written.expired;
            summary.unmatched = written.unmatched;
            Ok(summary)
        })
        .await
    }

    /// The audit report (`vouch audit report`, `GET /v1/audit/report`).
    pub async fn audit_report(
        &self,
        options: audit::report::Options,
    ) -> Result<audit::report::Report, EngineError> {
        let this = self.clone();
        blocking(move || {
            let retention = match &options.scope {
                audit::report::Scope::Current(dir) => {
                    this.audit_project(dir.to_str()).1.retention_days
                }
                audit::report::Scope::All => this.config().audit.retention_days,
            };
            options
                .validate(retention)
                .map_err(|e| EngineError::BadRequest(e.to_string()))?;
            this.inner
                .audit
                .report(&options, retention)
                .map_err(|e| EngineError::Internal(e.to_string()))
        })
        .await
    }

    /// Consumes a one-use grant for exactly this request. `Ok(false)` for any
    /// mismatch, replay or expiry.
    pub async fn consume_grant(
        &self,
        session_id: &str,
        token: &str,
        request: &Request,
    ) -> Result<bool, EngineError> {
        let (this, session, token, hash) = (
            self.clone(),
            session_id.to_owned(),
            token.to_owned(),
            request.request_hash(),
        );
        blocking(move || {
            let store = this.store()?;
            Ok(grants::consume(
                &store,
                this.clock(),
                &session,
                &token,
                &hash,
            )?)
        })
        .await
    }

    /// Mints a grant outside the pipeline; used by tests and tools.
    pub async fn mint_grant(
        &self,
        session_id: &str,
        request: &Request,
    ) -> Result<Grant, EngineError> {
        let (this, session, hash) = (self.clone(), session_id.to_owned(), request.request_hash());
        blocking(move || {
            let store = this.store()?;
            let ttl = this.config().grants.ttl_ms;
            Ok(grants::mint(&store, this.clock(), &session, &hash, ttl)?)
        })
        .await
    }

    /// Recent non-critical model denials of a session, newest first.
    pub async fn list_denials(&self, session_id: &str) -> Result<Vec<Value>, EngineError> {
        let (this, session) = (self.clone(), session_id.to_owned());
        blocking(move || {
            let store = this.store()?;
            let denials = overrides::list_denials(&store, this.clock(), this.config(), &session)?;
            denials
                .iter()
                .enumerate()
                .map(|(i, d)| {
                    let mut v = serde_json::to_value(d)
                        .map_err(|e| EngineError::Internal(e.to_string()))?;
                    if let Some(obj) = v.as_object_mut() {
                        obj.insert("index".to_owned(), Value::from(i.saturating_add(1)));
                    }
                    Ok(v)
                })
                .collect()
        })
        .await
    }

    /// Approves one exact retry of a listed denial (`selector`: 1-based index
    /// or request-hash prefix).
    pub async fn approve(&self, session_id: &str, selector: &str) -> Result<Value, EngineError> {
        let selector: Selector = selector.parse()?;
        let (this, session) = (self.clone(), session_id.to_owned());
        blocking(move || {
            let store = this.store()?;
            let approval =
                overrides::approve(&store, this.clock(), this.config(), &session, &selector)?;
            serde_json::to_value(approval).map_err(|e| EngineError::Internal(e.to_string()))
        })
        .await
    }

    /// Starts break glass for a critical denial; returns the challenge
    /// (details and the phrase the human must type).
    pub async fn break_glass_challenge(
        &self,
        session_id: &str,
        selector: Option<&str>,
    ) -> Result<Value, EngineError> {
        let selector: Option<Selector> = selector.map(str::parse).transpose()?;
        let (this, session) = (self.clone(), session_id.to_owned());
        blocking(move || {
            let store = this.store()?;
            let challenge = overrides::break_glass_challenge(
                &store,
                this.clock(),
                this.config(),
                &session,
                selector.as_ref(),
            )?;
            serde_json::to_value(challenge).map_err(|e| EngineError::Internal(e.to_string()))
        })
        .await
    }

    /// Confirms break glass with the typed phrase.
    pub async fn break_glass_confirm(
        &self,
        session_id: &str,
        challenge_id: &str,
        phrase: &str,
    ) -> Result<Value, EngineError> {
        let (this, session, id, phrase) = (
            self.clone(),
            session_id.to_owned(),
            challenge_id.to_owned(),
            phrase.to_owned(),
        );
        blocking(move || {
            let store = this.store()?;
            let approval = overrides::break_glass_confirm(
                &store,
                this.clock(),
                this.config(),
                &session,
                &id,
                &phrase,
            )?;
            serde_json::to_value(approval).map_err(|e| EngineError::Internal(e.to_string()))
        })
        .await
    }

    /// What the operator CLI commands need.
    pub fn operator_context(&self) -> Result<(Arc<Store>, &dyn Clock, &Config), StoreError> {
        Ok((self.store()?, self.clock(), self.config()))
    }

    /// Store and reviewer status for `/healthz`: `status` is `ok` when the
    /// state database opens and the reviewer configuration is usable, else
    /// `degraded` (hard denies still answer; model reviews fail closed).
    pub async fn health(&self) -> Value {
        let this = self.clone();
        let store = tokio::task::spawn_blocking(move || this.store().map(drop))
            .await
            .map_err(|e| e.to_string())
            .and_then(|opened| opened.map_err(|e| e.to_string()));
        let cfg = self.config();
        // `none` is a configuration, not a fault: reviews defer to the human.
        let unconfigured = cfg.reviewer.provider == crate::config::Provider::None;
        let reviewer = if unconfigured {
            Ok(())
        } else {
            self.reviewer_for(cfg).map(drop).map_err(|e| e.to_string())
        };
        let status = match (&store, &reviewer) {
            (Ok(()), Ok(())) => "ok",
            // Either part missing means model reviews fail closed.
            (Err(_), _) | (_, Err(_)) => "degraded",
        };
        if let Err(e) = &store {
            tracing::warn!(error = %e, "state database unavailable");
        }
        serde_json::json!({
            "status": status,
            "store": match &store { Ok(()) => "ok".to_owned(), Err(_) => "unavailable".to_owned() },
            // Auditing never affects decisions, so it never degrades health.
            "audit": self.inner.audit.status(),
            "reviewer": {
                "status": match &reviewer {
                    Ok(()) if unconfigured => "none".to_owned(),
                    Ok(()) => "configured".to_owned(),
                    Err(e) => format!("invalid: {e}"),
                },
                "provider": cfg.reviewer.provider,
                "model": cfg.reviewer.model,
            },
        })
    }
}

/// Runs blocking engine work off the async workers.
async fn blocking<T, F>(f: F) -> Result<T, EngineError>
where
    F: FnOnce() -> Result<T, EngineError> + Send + 'static,
    T: Send + 'static,
{
    tokio::task::spawn_blocking(f)
        .await
        .map_err(|e| EngineError::Internal(format!("engine task failed: {e}")))?
}

fn internal_failure(outcome: Outcome, hash: String, why: &str) -> Decision {
    Decision::new(outcome, Stage::ReviewerFailure, hash, why)
}

/// Loads the trusted configuration for this process; used by the CLI.
pub fn load_process_config(
    paths: &Paths,
    cli_config: Option<&Path>,
) -> Result<LoadedConfig, ConfigError> {
    let env = crate::config::process_env()?;
    crate::config::load_trusted(paths, cli_config, env)
}
