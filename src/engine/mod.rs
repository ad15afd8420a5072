//! The engine: one running vouch — its configuration, state and reviewer —
//! behind a small typed API that the CLI, the HTTP service and the harness
//! adapters all call.
//!
//! [`Engine::review`] is the call "canonical request in, decision out"; the
//! others that decide a request are it in parts or on the caller's thread
//! ([`Engine::review_early`] and [`Engine::review_late`] for the service,
//! [`Engine::review_here`] for a hook process, [`Engine::floor_here`] for
//! what a remote hook keeps). None fails: every error inside becomes a
//! fail-closed [`Decision`]. Underneath, [`driver`]
//! is the thin layer around the pure decision table
//! ([`crate::pipeline`]): it gathers what the table asks for (project
//! configuration, the hard-deny and inert verdicts and the confined form,
//! the reviewer, the turn's state, the packet, the cache), calls the model,
//! and hands each final decision's audit record to the [`AuditSink`]. The
//! state effects are two writes, both applied by `session::apply`: those
//! decided before the model commit in the write transaction that decided
//! them (SQLite or PostgreSQL), and the verdict's after it, in a
//! transaction of their own — or, in `vouch serve`, queued for the store's
//! recorder thread, which commits the writes queued together in one
//! transaction, a savepoint each. Filesystem and database work run on the
//! blocking pool (`spawn_blocking`); only the model call is awaited on the
//! runtime. A short-lived process that decides once
//! ([`Engine::review_here`]) runs them on its own thread instead and starts
//! a runtime only for a model call: a hard deny costs it no thread, no
//! runtime and no HTTP client.
//!
//! The operator calls return typed values or an [`EngineError`] that keeps
//! its cause; the HTTP edge maps causes to status codes.

mod audit;
mod driver;
mod files;

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};

use serde::Serialize;
use serde_json::Value;

use crate::audit::{self as policy_audit, Audit, AuditStatus, Observation, ProjectAudit};
use crate::clock::{Clock, SystemClock};
use crate::config::{Config, ConfigError, LoadedConfig, Provider, StoreBackend};
use crate::decision::{Decision, Grant};
use crate::evidence::packet::Packet;
use crate::grants;
use crate::names::named_enum;
use crate::paths::Paths;
use crate::pipeline::Job;
use crate::request::Request;
use crate::reviewer::{
    self, FailureClass, ModelInput, ReviewOutcome, ReviewResult, Reviewer, ReviewerError,
};
use crate::session::overrides::{self, Approval, Challenge, DenialView, OverrideError, Selector};
use crate::session::prompts::{self, PromptKey, RecordedPrompt, Recording};
use crate::store::{Store, StoreError};

pub use crate::audit::AuditDelivery;
pub use audit::{AuditSink, NoAudit};
pub use files::Disk;

/// Why an engine call (other than `review`) failed. The cause is kept whole;
/// the HTTP edge decides what a client is told.
#[derive(Debug, thiserror::Error)]
pub enum EngineError {
    #[error(transparent)]
    Store(#[from] StoreError),
    /// An operator request the state refuses (no such denial, already
    /// pending, wrong phrase, …).
    #[error(transparent)]
    Override(#[from] OverrideError),
    #[error("engine task failed: {0}")]
    Task(#[from] tokio::task::JoinError),
    #[error(transparent)]
    Reviewer(#[from] ReviewerError),
    /// An audit request the caller can fix (a refused ingest batch, report
    /// options out of range).
    #[error("{0}")]
    AuditInput(String),
    #[error(transparent)]
    Audit(#[from] policy_audit::AuditError),
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
    /// Receives the audit record of every final decision, off the decision
    /// path ([`NoAudit`] until the audit subsystem plugs in).
    pub audit: Arc<dyn AuditSink>,
    /// Whether audit records are written by a worker thread (the service)
    /// or held until [`Engine::flush_audit`] writes them on the caller's
    /// thread (a hook process, after its reply).
    pub audit_delivery: AuditDelivery,
    /// Run `PRAGMA quick_check(1)` when the state database is opened (the
    /// service, which opens it at start). Short-lived processes skip it: it
    /// reads every page of the database.
    pub check_store_on_open: bool,
    /// Whether `env` may supply the PostgreSQL URL (`store.url_env`). Not
    /// in a hook process: its environment is the harness's, which the
    /// project can set, and a URL of the project's choosing would be state
    /// of the project's choosing (a forged break glass, say).
    pub store_url_from_env: bool,
    /// What an inert allow's confined form names (docs/confine.md).
    pub confine: ConfineSetup,
}

/// The vouch binary and trusted overlay an inert allow's confined form
/// runs with: `EXE confine [--home DIR] [--config FILE] -- bash -c CMD`
/// (the home is [`Paths::vouch_home`]).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ConfineSetup {
    /// The absolute path of the vouch binary; `None`: no confined form, so
    /// no inert allow.
    pub exe: Option<PathBuf>,
    /// `--config FILE` of the deciding process, passed on.
    pub config: Option<PathBuf>,
}

impl ConfineSetup {
    /// This process's binary, no extra overlay.
    pub fn this_binary() -> ConfineSetup {
        ConfineSetup {
            exe: crate::paths::current_exe().map(Path::to_path_buf),
            config: None,
        }
    }
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
            audit: Arc::new(NoAudit),
            audit_delivery: AuditDelivery::Background,
            check_store_on_open: true,
            store_url_from_env: true,
            confine: ConfineSetup::this_binary(),
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
            audit: Arc::new(NoAudit),
            audit_delivery: AuditDelivery::Background,
            check_store_on_open: false,
            store_url_from_env: true,
            confine: ConfineSetup::this_binary(),
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
    /// The one HTTP client for every reviewer call, built when the first
    /// reviewer is (its TLS setup is most of a hard deny's start-up cost).
    http: OnceLock<reqwest::Client>,
    /// Project overlays already folded, keyed by project root.
    projects: Arc<crate::config::ProjectCache>,
    /// The policy audit: decisions reach it through the audit queue; after
    /// events, ingest and the report call it directly.
    policy_audit: Audit,
    /// The reviewer last built, with the configuration it was built from:
    /// nearly every request shares the trusted configuration (or one cached
    /// project fold), so it is built once, not per request.
    reviewer: Mutex<Option<(Arc<Config>, Arc<Reviewer>)>>,
    audit: audit::AuditQueue,
    /// vouch's own files, worked out once but for each request's home.
    protected: crate::paths::ProtectedPaths,
    /// Whether hard denies that need no file are answered before the
    /// blocking pool ([`Engine::review_early`]): not with a caller's own
    /// audit sink, which receives records as the full path emits them.
    early_hard_denies: bool,
    /// `server.max_concurrent_reviews`: a review takes one only for its
    /// model call, so hard denies, routed answers and cache hits never wait
    /// behind slow models.
    model_slots: tokio::sync::Semaphore,
    /// How many reviews run their blocking stages before the model at once
    /// ([`PREPARE_SLOTS_PER_WORKER`] a runtime worker). They all need the
    /// one write connection in the end, so more threads only queue on its
    /// lock (a futex wake-up each); the rest wait here, on the runtime, for
    /// free. Sized on the first [`Engine::review_late`], from the runtime
    /// it runs on: a hook process, which never calls it, pays nothing.
    prepare_slots: OnceLock<tokio::sync::Semaphore>,
    /// The live decision feed (the operator console watches it): a relaxed
    /// load per decision while nobody watches.
    feed: crate::feed::Feed,
}

/// Concurrent blocking preparations a runtime worker ([`Inner::prepare_slots`]).
const PREPARE_SLOTS_PER_WORKER: usize = 2;

/// A request [`Engine::review_early`] did not decide, with what it computed
/// for [`Engine::review_late`]: the analysis of its command, when it made
/// one (a plain command line), so the blocking stages do not make another.
#[derive(Debug, Default)]
pub struct Undecided(Option<crate::shell::Analysis>);

/// The result of the stages before the model.
#[derive(Debug)]
pub enum Prepared {
    /// A stage decided.
    Decided(Box<Decision>),
    /// The model must be asked: [`Engine::call_model`], then
    /// [`Engine::finish`].
    Review(Box<PendingReview>),
}

/// A review whose reservation is committed, waiting for the model.
pub struct PendingReview {
    job: Job,
    packet: Packet,
    reviewer: Arc<Reviewer>,
    store: Arc<Store>,
}

impl std::fmt::Debug for PendingReview {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // The packet is prompt text: never in a log line.
        f.debug_struct("PendingReview")
            .field("request_hash", &self.job.request_hash)
            .field("reviewer", &self.reviewer)
            .finish_non_exhaustive()
    }
}

impl PendingReview {
    /// The evidence packet the model will read.
    pub fn packet(&self) -> &Packet {
        &self.packet
    }

    /// What the decision table handed over.
    pub fn job(&self) -> &Job {
        &self.job
    }
}

/// A listed denial with its 1-based index, as `vouch approve N` takes it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ListedDenial {
    pub index: usize,
    #[serde(flatten)]
    pub denial: DenialView,
}

named_enum! {
    /// Whether model-backed reviews can run.
    pub enum HealthStatus {
        Ok = "ok",
        /// Hard denies still answer; model reviews fail closed.
        Degraded = "degraded",
    }
}

/// Store and reviewer status for `/healthz`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Health {
    pub status: HealthStatus,
    /// `ok` or `unavailable` (the cause is logged, not shown).
    pub store: &'static str,
    pub audit: AuditStatus,
    pub reviewer: ReviewerHealth,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ReviewerHealth {
    /// `configured`, or `invalid: <why>` (never the key or the full URL).
    pub status: String,
    pub provider: Provider,
    pub model: String,
}

impl Engine {
    pub fn new(options: EngineOptions) -> Result<Engine, EngineError> {
        let policy_audit = Audit::new(
            &options.paths.state_dir,
            &options.trusted.config.audit,
            // Not from a hook's environment (the project can set it), as
            // for the state ([`EngineOptions::store_url_from_env`]): with
            // no URL the PostgreSQL audit is off.
            policy_audit::db::Location::from_config(&options.trusted.config.store, &|name| {
                if options.store_url_from_env {
                    (options.env)(name)
                } else {
                    None
                }
            }),
            Arc::clone(&options.clock),
            options.audit_delivery,
        );
        let projects = Arc::new(crate::config::ProjectCache::new(PROJECT_CACHE_ENTRIES));
        let audit = audit::AuditQueue::new(
            decision_sink(&options, &policy_audit, &projects),
            options.audit_delivery,
        );
        let protected = options.paths.protected();
        // A process that replies, then writes (`vouch hook`) hands its
        // decisions to the service's console through the state directory;
        // every other engine is the service's side of it.
        let feed = if options.audit_delivery == AuditDelivery::AfterReply {
            crate::feed::Feed::for_hook(&options.paths.state_dir)
        } else {
            crate::feed::Feed::for_service(&options.paths.state_dir)
        };
        let early_hard_denies = !options.audit.enabled();
        // The configuration allows 1–1024; a hand-built 0 would wait forever.
        let slots = usize::try_from(options.trusted.config.server.max_concurrent_reviews)
            .unwrap_or(usize::MAX)
            .clamp(1, tokio::sync::Semaphore::MAX_PERMITS);
        Ok(Engine {
            inner: Arc::new(Inner {
                options,
                store: Mutex::new(None),
                http: OnceLock::new(),
                projects,
                reviewer: Mutex::new(None),
                policy_audit,
                audit,
                protected,
                early_hard_denies,
                model_slots: tokio::sync::Semaphore::new(slots),
                prepare_slots: OnceLock::new(),
                feed,
            }),
        })
    }

    /// The live decision feed of [`Engine::review_early`] and
    /// [`Engine::review_late`] (the service's decisions).
    pub fn feed(&self) -> &crate::feed::Feed {
        &self.inner.feed
    }

    /// Hands `decision` to the feed when someone watches; the decision path
    /// pays one relaxed load otherwise.
    fn published(&self, request: &Request, decision: Decision) -> Decision {
        if self.inner.feed.watched() {
            self.inner
                .feed
                .publish(request, &decision, self.clock().now_ms());
        }
        decision
    }

    /// The policy audit of this engine.
    pub fn audit(&self) -> &Audit {
        &self.inner.policy_audit
    }

    /// Waits, at most `timeout`, until this process's audit records are
    /// written: the decision queue delivered to the sink, then the audit
    /// writer flushed. Short-lived commands call it after their reply is
    /// out; `false` when time ran out (the records may be lost, decisions
    /// never change).
    pub fn flush_audit(&self, timeout: std::time::Duration) -> bool {
        let deadline = std::time::Instant::now() + timeout;
        self.inner.audit.wait_delivered(deadline)
            && self
                .inner
                .policy_audit
                .flush(deadline.saturating_duration_since(std::time::Instant::now()))
    }

    /// What a short-lived process does once its reply is out: writes its
    /// audit records ([`Engine::flush_audit`]), then folds a long state
    /// log back into the database (`crate::store::truncate_long_log`).
    pub fn after_reply(&self, timeout: std::time::Duration) {
        self.flush_audit(timeout);
        self.inner.feed.flush_local(self.clock().now_ms());
        let store = self
            .inner
            .store
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone();
        if let Some(store) = store {
            store.truncate_long_log();
        }
    }

    /// Lets decisions already queued reach the audit writer (at most
    /// `audit.flush_timeout_ms`), so an after event observed next pairs with
    /// its decision (the writer keeps their order; held records keep it
    /// too).
    fn settle_audit(&self) {
        let wait = std::time::Duration::from_millis(self.config().audit.flush_timeout_ms);
        self.inner
            .audit
            .wait_delivered(std::time::Instant::now() + wait);
    }

    /// Lets decisions already made be written to `audit.sqlite` (at most
    /// `audit.flush_timeout_ms` in all), so a report or ingest that follows,
    /// on its own connection, sees them.
    fn settle_audit_written(&self) {
        let wait = std::time::Duration::from_millis(self.config().audit.flush_timeout_ms);
        self.flush_audit(wait);
    }

    /// The project root and audit settings in force for a working directory
    /// (the project overlay may only turn auditing off or shorten retention;
    /// a rejected overlay leaves the trusted settings).
    pub fn audit_project(&self, cwd: Option<&str>) -> (Option<std::path::PathBuf>, ProjectAudit) {
        project_audit(&self.inner.options.trusted, &self.inner.projects, cwd)
    }

    /// What the audit will record about `request`, before its decision.
    fn audit_draft(&self, request: &Request) -> Option<Observation> {
        self.inner.policy_audit.settings()?;
        let (root, project) = self.audit_project(request.cwd.as_deref());
        let what = policy_audit::What::Ran;
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
            // Its decision, if still on the decision queue, goes first so
            // the two pair (nearly always nothing is waiting; a stuck
            // custom sink costs at most `audit.flush_timeout_ms`).
            self.settle_audit();
            self.inner.policy_audit.observe(draft);
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
        let cfg = &self.inner.options.trusted.config.store;
        if cfg.backend == StoreBackend::Postgres && !self.inner.options.store_url_from_env {
            return Err(StoreError::Unavailable {
                at: "postgresql".to_owned(),
                detail: "a hook process does not take the PostgreSQL URL from the harness's \
                         environment, which the project can set; point the hook at the team's \
                         service instead (`vouch hook <harness> --server URL`)"
                    .to_owned(),
            });
        }
        let store = Arc::new(Store::open_configured(
            self.state_dir(),
            cfg,
            &|name| (self.inner.options.env)(name),
            self.inner.options.check_store_on_open,
        )?);
        *slot = Some(Arc::clone(&store));
        Ok(store)
    }

    /// Records a harness session's latest user prompt, redacted and fitted
    /// to the user-message budget ([`prompts::record`]). Blocking (SQLite).
    pub fn record_prompt(
        &self,
        key: PromptKey<'_>,
        turn: Option<&str>,
        prompt: &str,
    ) -> Result<Recording, StoreError> {
        let store = self.store()?;
        let now = self.clock().now_ms();
        prompts::record(&store, now, key, turn, prompt, &self.config().budget)
    }

    /// The session's recorded prompt for `turn`, unless expired
    /// ([`prompts::latest`]). Blocking (SQLite).
    pub fn recorded_prompt(
        &self,
        key: PromptKey<'_>,
        turn: Option<&str>,
    ) -> Result<Option<RecordedPrompt>, StoreError> {
        let store = self.store()?;
        prompts::latest(&store, self.clock().now_ms(), key, turn)
    }

    /// Decides one request. Never fails: faults become fail-closed decisions.
    /// The final decision, whatever stage made it, is observed by the audit
    /// (one channel send; the audit's own work happens on its writer thread).
    pub async fn review(&self, request: Request) -> Decision {
        match self.review_early(&request) {
            Ok(decision) => decision,
            Err(undecided) => self.review_late(request, undecided).await,
        }
    }

    /// The first hop of [`Engine::review`], on the calling thread: a hard
    /// deny that needs no file, state or model (`rm -rf /`), or `None` when
    /// the request must go on through [`Engine::review_late`]. Pure CPU work
    /// on a plain command line of at most 256 bytes (a few hundred µs at
    /// worst), so an async worker may run it: a hard deny then costs no task and no
    /// blocking-pool hand-off. It writes no state; a panic inside becomes a
    /// fail-closed decision.
    ///
    /// When it does not decide, it hands back what it computed
    /// ([`Undecided`]: the analysis of the command, when it made one) for
    /// [`Engine::review_late`], so the command is analysed once per request.
    pub fn review_early(&self, request: &Request) -> Result<Decision, Undecided> {
        match caught(|| driver::decide_early(self, request)) {
            Ok(Ok(decision)) => Ok(self.published(request, decision)),
            Ok(Err(analysis)) => Err(Undecided(analysis)),
            Err(why) => Ok(self.published(request, driver::task_failure(self, request, &why))),
        }
    }

    /// [`Engine::review`] past its first hop (for a caller that ran
    /// [`Engine::review_early`] itself): the stages before the model on the
    /// blocking pool, the model call, the record of its verdict.
    pub async fn review_late(&self, request: Request, early: Undecided) -> Decision {
        // Shared with the blocking task rather than copied up front: only a
        // task that dies needs the request again (for its failure decision),
        // and the feed reads it after the decision.
        let request = Arc::new(request);
        let decision = self.review_late_shared(&request, early).await;
        self.published(&request, decision)
    }

    async fn review_late_shared(&self, request: &Arc<Request>, early: Undecided) -> Decision {
        let this = self.clone();
        let shared = Arc::clone(request);
        let slots = self.inner.prepare_slots.get_or_init(|| {
            let workers = tokio::runtime::Handle::try_current()
                .map_or(1, |runtime| runtime.metrics().num_workers());
            tokio::sync::Semaphore::new(workers.max(1).saturating_mul(PREPARE_SLOTS_PER_WORKER))
        });
        // The semaphore is never closed; were it, the review would go on
        // without a slot rather than fail.
        let slot = slots.acquire().await.ok();
        let analysis = early.0;
        let prepared =
            tokio::task::spawn_blocking(move || driver::prepare(&this, &shared, analysis)).await;
        drop(slot);
        let pending = match prepared {
            Ok(Prepared::Decided(decision)) => return *decision,
            Ok(Prepared::Review(pending)) => pending,
            Err(join) => return driver::task_failure(self, request, &join),
        };
        let result = self.call_model_in_slot(&pending).await;
        // Recording the verdict is queued for the store's recorder thread
        // (shared commits, no blocking thread). A panic while concluding
        // fails closed, as a failed task does.
        match futures_catch(driver::finish_queued(self, *pending, result)).await {
            Ok(decision) => decision,
            Err(why) => driver::task_failure(self, request, &why),
        }
    }

    /// The decisions a remote hook (`vouch hook <harness> --server URL`)
    /// keeps for itself before it asks the central service: the hard-deny
    /// stage with this machine's view of the request (its files and
    /// symlinks, the project's `.vouch/`, vouch's own files under this
    /// home), and the refusals to decide that only this machine can see (a
    /// trusted file of vouch's inside the project, a project overlay that
    /// tries to loosen). `None` when none of them answers: the service
    /// decides. Writes no state; the audit observes a decision made here,
    /// and a panic inside becomes a fail-closed decision.
    pub fn floor_here(&self, request: &Request) -> Option<Decision> {
        match caught(|| driver::floor(self, request)) {
            Ok(found) => found.map(|decision| self.published(request, decision)),
            Err(why) => Some(self.published(request, driver::task_failure(self, request, &why))),
        }
    }

    /// [`Engine::review`] on the calling thread, for a short-lived process
    /// that decides and exits (`vouch hook`): the stages before and after
    /// the model run here, and only a model call needs an async runtime —
    /// `runtime` builds one on first need and keeps it for the next. A hard
    /// deny, a routed answer or a cache hit starts no runtime and no
    /// thread. Never fails: a panic inside becomes a fail-closed decision,
    /// as a failed task does in [`Engine::review`].
    pub fn review_here(&self, request: Request, runtime: &mut ModelRuntime) -> Decision {
        let analysis = match caught(|| driver::decide_early(self, &request)) {
            Ok(Ok(decision)) => return self.published(&request, decision),
            Ok(Err(analysis)) => analysis,
            Err(why) => {
                return self.published(&request, driver::task_failure(self, &request, &why));
            }
        };
        let decision = self.review_here_late(&request, analysis, runtime);
        self.published(&request, decision)
    }

    /// [`Engine::review_here`] past the hard denies that need no file.
    fn review_here_late(
        &self,
        request: &Request,
        analysis: Option<crate::shell::Analysis>,
        runtime: &mut ModelRuntime,
    ) -> Decision {
        let pending = match caught(|| driver::prepare(self, request, analysis)) {
            Ok(Prepared::Decided(decision)) => return *decision,
            Ok(Prepared::Review(pending)) => pending,
            Err(why) => return driver::task_failure(self, request, &why),
        };
        let result = match runtime.get() {
            Ok(rt) => match caught(|| rt.block_on(self.call_model_in_slot(&pending))) {
                Ok(result) => result,
                Err(why) => return driver::task_failure(self, request, &why),
            },
            Err(e) => {
                tracing::error!(error = %e, "cannot start the runtime for the model call; failing closed");
                ReviewResult {
                    outcome: ReviewOutcome::Failure(FailureClass::Transport),
                    stats: crate::decision::ReviewStats::default(),
                }
            }
        };
        match caught(move || self.finish(*pending, result)) {
            Ok(decision) => decision,
            Err(why) => driver::task_failure(self, request, &why),
        }
    }

    /// Runs the stages before the model call (blocking: filesystem and
    /// SQLite). Either a decision, or the review [`Engine::review`] hands to
    /// the model and then to [`Engine::finish`].
    pub fn prepare(&self, request: Request) -> Prepared {
        driver::prepare(self, &request, None)
    }

    /// Records what the model said and returns the decision (blocking).
    pub fn finish(&self, pending: PendingReview, result: ReviewResult) -> Decision {
        driver::finish(self, pending, result)
    }

    /// The reviewer for an effective configuration (shared, not copied: it
    /// holds the request template and schema).
    fn reviewer_for(&self, cfg: &Arc<Config>) -> Result<Arc<Reviewer>, ReviewerError> {
        let mut slot = self
            .inner
            .reviewer
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Some((built_for, reviewer)) = slot.as_ref()
            && Arc::ptr_eq(built_for, cfg)
        {
            return Ok(Arc::clone(reviewer));
        }
        let key = reviewer::api_key_from_env(&cfg.reviewer, &|name| (self.inner.options.env)(name));
        let reviewer = Arc::new(Reviewer::new(&cfg.reviewer, self.http_client()?, key)?);
        *slot = Some((Arc::clone(cfg), Arc::clone(&reviewer)));
        Ok(reviewer)
    }

    /// The shared HTTP client, built on first use (two threads racing here
    /// build two; the first one stored is kept).
    fn http_client(&self) -> Result<reqwest::Client, ReviewerError> {
        if let Some(client) = self.inner.http.get() {
            return Ok(client.clone());
        }
        let built = reviewer::http_client()?;
        Ok(self.inner.http.get_or_init(|| built).clone())
    }

    /// Waits for one of the `server.max_concurrent_reviews` model slots and
    /// calls the model in it. The slot is freed when the model has answered
    /// (recording the answer needs none). The semaphore is never closed;
    /// were it, the review fails closed as a local fault without a call.
    async fn call_model_in_slot(&self, pending: &PendingReview) -> ReviewResult {
        match self.inner.model_slots.acquire().await {
            Ok(_slot) => self.call_model(pending).await,
            Err(closed) => {
                tracing::error!(error = %closed, "no model slot; failing closed");
                ReviewResult {
                    outcome: ReviewOutcome::Failure(FailureClass::Transport),
                    stats: crate::decision::ReviewStats::default(),
                }
            }
        }
    }

    /// Calls the model inside a span carrying the evidence counts, so the
    /// reviewer's `review_attempt` and `review_complete` events are reported
    /// with them (counts only: never text).
    async fn call_model(&self, pending: &PendingReview) -> ReviewResult {
        use tracing::Instrument as _;
        let counts = &pending.packet.counts;
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
            system: &pending.packet.system,
            user: &pending.packet.user,
        };
        pending
            .reviewer
            .review(input, pending.packet.estimated_tokens)
            .instrument(span)
            .await
    }

    /// Ingests decision and after-the-fact events (`vouch audit ingest`,
    /// `POST /v1/audit/events`). Each event is parsed on its own; refused
    /// ones are listed by index. With `all_or_nothing`, one refused event
    /// refuses the batch and nothing is written.
    pub async fn audit_ingest(
        &self,
        events: Vec<Value>,
        all_or_nothing: bool,
    ) -> Result<policy_audit::ingest::IngestSummary, EngineError> {
        self.blocking(move |this| {
            this.settle_audit_written();
            let mut summary = policy_audit::ingest::IngestSummary {
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
            let ctx = policy_audit::ingest::Context {
                now_ms: this.clock().now_ms(),
                project: &lookup,
            };
            let mut observations = Vec::with_capacity(events.len());
            for (index, event) in events.iter().enumerate() {
                match policy_audit::ingest::parse_value(event, &ctx) {
                    Ok(o) => observations.push(o),
                    Err(e) => summary.rejected.push(policy_audit::ingest::Rejected {
                        index,
                        error: e.to_string(),
                    }),
                }
            }
            if all_or_nothing && let Some(first) = summary.rejected.first() {
                return Err(EngineError::AuditInput(format!(
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
            let written = this.inner.policy_audit.write_now(&observations)?;
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
        options: policy_audit::report::Options,
    ) -> Result<policy_audit::report::Report, EngineError> {
        self.blocking(move |this| {
            // Decisions already made are in the report (bounded wait).
            this.settle_audit_written();
            let retention = match &options.scope {
                policy_audit::report::Scope::Current(dir) => {
                    this.audit_project(dir.to_str()).1.retention_days
                }
                policy_audit::report::Scope::All => this.config().audit.retention_days,
            };
            options
                .validate(retention)
                .map_err(|e| EngineError::AuditInput(e.to_string()))?;
            this.inner
                .policy_audit
                .report(&options, retention)
                .map_err(EngineError::from)
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
        let (session, token, hash) = (
            session_id.to_owned(),
            token.to_owned(),
            request.request_hash(),
        );
        self.blocking(move |this| {
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
        let (session, hash) = (session_id.to_owned(), request.request_hash());
        self.blocking(move |this| {
            let store = this.store()?;
            let ttl = this.config().grants.ttl_ms;
            Ok(grants::mint(&store, this.clock(), &session, &hash, ttl)?)
        })
        .await
    }

    /// Recent non-critical model denials of a session, newest first, with
    /// the index `approve` takes.
    pub async fn list_denials(&self, session_id: &str) -> Result<Vec<ListedDenial>, EngineError> {
        let session = session_id.to_owned();
        self.blocking(move |this| {
            let store = this.store()?;
            let denials = overrides::list_denials(&store, this.clock(), this.config(), &session)?;
            Ok(denials
                .into_iter()
                .enumerate()
                .map(|(i, denial)| ListedDenial {
                    index: i.saturating_add(1),
                    denial,
                })
                .collect())
        })
        .await
    }

    /// The newest model denials of every session, newest first, with what
    /// an operator can do about each (the console's list).
    pub async fn recent_denials(
        &self,
        limit: u32,
    ) -> Result<Vec<overrides::RecentDenial>, EngineError> {
        self.blocking(move |this| {
            let store = this.store()?;
            Ok(overrides::recent_denials(
                &store,
                this.clock(),
                this.config(),
                limit,
            )?)
        })
        .await
    }

    /// The turns of every session active in the last `within_ms`, newest
    /// first: breaker and budget counters (the console's sessions view).
    pub async fn recent_turns(
        &self,
        within_ms: u64,
        limit: u32,
    ) -> Result<Vec<crate::session::TurnRow>, EngineError> {
        self.blocking(move |this| {
            let store = this.store()?;
            let since = this.clock().now_ms().saturating_sub(within_ms);
            Ok(crate::session::recent_turns(
                &store,
                this.config(),
                since,
                limit,
            )?)
        })
        .await
    }

    /// The engine's clock reading, in ms since the epoch.
    pub fn now_ms(&self) -> u64 {
        self.clock().now_ms()
    }

    /// Approves one exact retry of a listed denial (`selector`: 1-based index
    /// or request-hash prefix).
    pub async fn approve(&self, session_id: &str, selector: &str) -> Result<Approval, EngineError> {
        let selector: Selector = selector.parse()?;
        let session = session_id.to_owned();
        self.blocking(move |this| {
            let store = this.store()?;
            Ok(overrides::approve(
                &store,
                this.clock(),
                this.config(),
                &session,
                &selector,
            )?)
        })
        .await
    }

    /// Starts break glass for a critical denial; returns the challenge
    /// (details and the phrase the human must type).
    pub async fn break_glass_challenge(
        &self,
        session_id: &str,
        selector: Option<&str>,
    ) -> Result<Challenge, EngineError> {
        let selector: Option<Selector> = selector.map(str::parse).transpose()?;
        let session = session_id.to_owned();
        self.blocking(move |this| {
            let store = this.store()?;
            Ok(overrides::break_glass_challenge(
                &store,
                this.clock(),
                this.config(),
                &session,
                selector.as_ref(),
            )?)
        })
        .await
    }

    /// Confirms break glass with the typed phrase.
    pub async fn break_glass_confirm(
        &self,
        session_id: &str,
        challenge_id: &str,
        phrase: &str,
    ) -> Result<Approval, EngineError> {
        let (session, id, phrase) = (
            session_id.to_owned(),
            challenge_id.to_owned(),
            phrase.to_owned(),
        );
        self.blocking(move |this| {
            let store = this.store()?;
            Ok(overrides::break_glass_confirm(
                &store,
                this.clock(),
                this.config(),
                &session,
                &id,
                &phrase,
            )?)
        })
        .await
    }

    /// What the operator CLI commands need.
    pub fn operator_context(&self) -> Result<(Arc<Store>, &dyn Clock, &Config), StoreError> {
        Ok((self.store()?, self.clock(), self.config()))
    }

    /// Store and reviewer status for `/healthz`: `ok` when the state
    /// database opens and the reviewer configuration is usable, else
    /// `degraded` (hard denies still answer; model reviews fail closed).
    pub async fn health(&self) -> Health {
        let store = self
            .blocking(|this| Ok(this.store().and_then(|store| store.ping())?))
            .await;
        let cfg = self.config();
        // `none` is a configuration, not a fault: reviews defer to the human.
        let unconfigured = cfg.reviewer.provider == Provider::None;
        let reviewer = if unconfigured {
            Ok(())
        } else {
            self.reviewer_for(&self.inner.options.trusted.config)
                .map(drop)
        };
        if let Err(e) = &store {
            tracing::warn!(error = %e, "state database unavailable");
        }
        Health {
            status: match (&store, &reviewer) {
                (Ok(()), Ok(())) => HealthStatus::Ok,
                // Either part missing means model reviews fail closed.
                (Err(_), _) | (_, Err(_)) => HealthStatus::Degraded,
            },
            store: match &store {
                Ok(()) => "ok",
                Err(_) => "unavailable",
            },
            // Auditing never affects decisions, so it never degrades health.
            audit: self.inner.policy_audit.status(),
            reviewer: ReviewerHealth {
                status: match &reviewer {
                    Ok(()) if unconfigured => "none".to_owned(),
                    Ok(()) => "configured".to_owned(),
                    Err(e) => format!("invalid: {e}"),
                },
                provider: cfg.reviewer.provider,
                model: cfg.reviewer.model.clone(),
            },
        }
    }

    /// Runs blocking engine work off the async workers.
    async fn blocking<T, F>(&self, f: F) -> Result<T, EngineError>
    where
        F: FnOnce(&Engine) -> Result<T, EngineError> + Send + 'static,
        T: Send + 'static,
    {
        let this = self.clone();
        tokio::task::spawn_blocking(move || f(&this)).await?
    }
}

/// The async runtime of [`Engine::review_here`]'s model calls: built on
/// first need (single-threaded, driven by the calling thread), dropped
/// without waiting for stray blocking tasks.
#[derive(Default)]
pub struct ModelRuntime(Option<tokio::runtime::Runtime>);

impl ModelRuntime {
    fn get(&mut self) -> std::io::Result<&tokio::runtime::Runtime> {
        if self.0.is_none() {
            let built = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()?;
            self.0 = Some(built);
        }
        self.0
            .as_ref()
            .ok_or_else(|| std::io::Error::other("the runtime was not kept"))
    }
}

impl Drop for ModelRuntime {
    fn drop(&mut self) {
        // The reply must not wait on blocking tasks.
        if let Some(rt) = self.0.take() {
            rt.shutdown_background();
        }
    }
}

/// Runs `f`, turning a panic into its message (a short-lived process must
/// answer with a fail-closed decision, not die into its harness's
/// fail-open path).
fn caught<T>(f: impl FnOnce() -> T) -> Result<T, String> {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(f))
        .map_err(|payload| panic_message(payload.as_ref()))
}

/// Awaits `f`, turning a panic inside it into its message (as [`caught`]
/// does for a closure).
async fn futures_catch<T>(f: impl std::future::Future<Output = T>) -> Result<T, String> {
    let mut f = std::pin::pin!(f);
    std::future::poll_fn(|cx| {
        match std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| f.as_mut().poll(cx))) {
            Ok(std::task::Poll::Pending) => std::task::Poll::Pending,
            Ok(std::task::Poll::Ready(value)) => std::task::Poll::Ready(Ok(value)),
            Err(payload) => std::task::Poll::Ready(Err(panic_message(payload.as_ref()))),
        }
    })
    .await
}

/// The text of a panic's payload.
fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    payload
        .downcast_ref::<&str>()
        .map(|s| (*s).to_owned())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "a panic".to_owned())
}

/// The project root and audit settings in force for a working directory.
fn project_audit(
    trusted: &LoadedConfig,
    projects: &crate::config::ProjectCache,
    cwd: Option<&str>,
) -> (Option<std::path::PathBuf>, ProjectAudit) {
    let project = projects.for_project(trusted, cwd.map(Path::new));
    let settings = match &project.effective {
        Ok(loaded) => ProjectAudit::of(&loaded.config.audit),
        Err(_) => ProjectAudit::of(&trusted.config.audit),
    };
    (project.root, settings)
}

/// The sink final decisions go to: the caller's, when it set one in
/// [`EngineOptions::audit`]; else the policy audit itself when
/// `audit.enabled` (serve, `vouch review` and `vouch hook` alike); else
/// nothing.
fn decision_sink(
    options: &EngineOptions,
    policy_audit: &Audit,
    projects: &Arc<crate::config::ProjectCache>,
) -> Arc<dyn AuditSink> {
    if options.audit.enabled() || policy_audit.settings().is_none() {
        return Arc::clone(&options.audit);
    }
    let trusted = options.trusted.clone();
    let projects = Arc::clone(projects);
    Arc::new(policy_audit::DecisionSink::new(
        policy_audit.clone(),
        Box::new(move |cwd| project_audit(&trusted, &projects, cwd)),
    ))
}

/// The stack of every thread of vouch's runtimes (`vouch serve`'s workers
/// and blocking pool, `vouch review`'s, `vouch eval`'s), where requests
/// are analysed: tokio's default is 2 MiB. The analysis bounds its own
/// depth by budgets that keep it within 2 MiB (`vouch-shell`'s
/// `tests/depth.rs` proves it on 2 MiB; it needs under 1 MiB), so this is
/// a margin, not the fix: four times what the budgets need, reserved as
/// address space and touched only as used.
pub const THREAD_STACK_BYTES: usize = 8 << 20;

/// The paths and trusted configuration a command-line command runs with
/// (`--config` from `global`); the error is one line to print.
pub fn load_global(global: &crate::config::Global) -> Result<(Paths, LoadedConfig), String> {
    let paths = Paths::from_env().map_err(|e| e.to_string())?;
    let loaded = load_process_config(&paths, global.config.as_deref())
        .map_err(|e| format!("invalid configuration: {e}"))?;
    Ok((paths, loaded))
}

/// Loads the trusted configuration for this process; used by the CLI.
pub fn load_process_config(
    paths: &Paths,
    cli_config: Option<&Path>,
) -> Result<LoadedConfig, ConfigError> {
    let env = crate::config::process_env()?;
    crate::config::load_trusted(paths, cli_config, env)
}
