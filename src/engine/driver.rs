//! The driver around the decision table: it gathers what
//! [`pipeline::decide`] asks for, applies the effects it returns, and does
//! the same for [`pipeline::conclude`] after the model.
//!
//! Gathering is on demand and in the table's order: the project
//! configuration, hard-deny context and grant token are cheap and always
//! there; the reviewer, the turn's state, the evidence packet and the cache
//! lookup are fetched only when the table reaches a stage that needs them.
//!
//! Atomicity: the turn's state is first read in a plain read transaction,
//! only to learn what to gather (a packet is built outside any lock). The
//! final answer is then decided again **inside** one `BEGIN IMMEDIATE`
//! transaction, on a fresh snapshot and cache lookup, and its state effects
//! are applied in that same transaction: a reservation, an authorization
//! spent, a breaker reset or a grant stored always match the state they were
//! decided on. If the fresh state asks for something not gathered (a human
//! approved the request in between, so the packet must carry the approval),
//! or for `synchronous=FULL` when the transaction runs at `NORMAL`, nothing
//! is written and the round repeats — a bounded number of times, then the
//! request fails closed.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::{Engine, PendingReview, Prepared};
use crate::config::{Config, LoadedConfig, ProjectConfig};
use crate::decision::{Decision, Fault, Stage};
use crate::evidence::packet::{self, Packet, PacketContext};
use crate::grants::GrantToken;
use crate::pipeline::{
    self, Decided, Effect, Exposed, Gathered, GrantInput, Inputs, Need, RequestFacts, Step,
};
use crate::policy::hard_deny;
use crate::request::Request;
use crate::reviewer::{ReviewResult, Reviewer, Verdict};
use crate::session::{self, Scope, Snapshot, TurnKey};
use crate::store::{Durability, Store, StoreError};

/// Rounds of gathering and committing before a request fails closed. Four
/// gathers (reviewer, state, packet, cache) and a commit need five; the rest
/// absorb a state that changed under the request.
const MAX_ROUNDS: u32 = 8;

/// What the shell has gathered for one request so far.
#[derive(Default)]
struct Gathering {
    reviewer: Option<Result<Arc<Reviewer>, String>>,
    store: Option<Arc<Store>>,
    state: Option<Result<Snapshot, String>>,
    packet: Option<Result<(PacketContext, Packet), String>>,
}

/// The inputs that are known before the first round.
struct Fixed<'a> {
    request: &'a Request,
    hash: String,
    now: u64,
    trusted: &'a LoadedConfig,
    project: ProjectConfig,
    hard_deny: hard_deny::DenyVerdict,
    /// The inert stage's verdict, from the same analysis.
    inert: Option<crate::policy::inert::InertVerdict>,
    /// How an inert command runs confined, when it can ([`confined_form`]).
    confined: Option<crate::confine::Confined>,
    /// The units routing's command templates match, from the same analysis.
    units: Option<Vec<crate::config::routing::Unit>>,
    /// The request's one analysis of its command: the hard denies read it,
    /// then the packet's redaction; the audit gets what it needs of it in
    /// the record ([`RequestFacts::starts_another`]).
    analysis: Option<crate::shell::Analysis>,
    exposed: Option<(PathBuf, PathBuf)>,
    grant: Option<Result<GrantToken, String>>,
}

/// The home a request's hard denies are judged in: its own, else the
/// service's, else `/root`.
fn request_home(engine: &Engine, request: &Request) -> String {
    request
        .home
        .clone()
        .or_else(|| {
            let home = engine.inner.options.paths.home.as_ref();
            home.map(|h| h.display().to_string())
        })
        .unwrap_or_else(|| "/root".to_owned())
}

/// The variables whose values the analysis knows (`VOUCH_HOME`).
fn known_vars(engine: &Engine) -> Vec<(String, String)> {
    let vouch_home = engine.inner.options.paths.vouch_home.iter();
    vouch_home
        .map(|h| ("VOUCH_HOME".to_owned(), h.display().to_string()))
        .collect()
}

/// The hard-deny stage alone, for a request it can answer without touching
/// the filesystem or the state: a command-only request that one of the
/// categories that never read vouch's protected locations denies
/// ([`hard_deny::check_before_protected`]), whose command is a plain
/// command line of at most 256 bytes. Pure work on those bytes (no file,
/// no lock, no expansion), so an async worker may run it; `None`
/// means "go through [`prepare`]", which decides as before.
///
/// The decision comes from the same table as [`prepare`]'s, which answers a
/// hard deny before it reads the project configuration. Its audit record
/// follows the trusted `audit.enabled` (a project overlay may only turn
/// auditing off); the policy audit applies the project's own setting when
/// it looks the project up for the record, as it does for every record.
///
/// Not deciding, it hands back the analysis it made (`Err`), for
/// [`prepare`] to use rather than analyse the command again.
pub(super) fn decide_early(
    engine: &Engine,
    request: &Request,
) -> Result<Decision, Option<crate::shell::Analysis>> {
    if !engine.inner.early_hard_denies {
        return Err(None);
    }
    let trusted = &engine.inner.options.trusted;
    let home = request_home(engine, request);
    // Not read by the categories that answer here (the doc of
    // `check_before_protected`); the full list needs the project's files.
    let protected = hard_deny::VouchFiles {
        paths: Vec::new(),
        config_only: Vec::new(),
        vars: known_vars(engine),
    };
    let ctx = hard_deny::DenyContext {
        home: &home,
        cwd: request.cwd.as_deref(),
        protected: &protected,
        limits: &trusted.config.analysis,
    };
    let (verdict, starts_another) = match hard_deny::check_early(request, &ctx) {
        hard_deny::Early::Deny(deny, analysis) => (
            hard_deny::DenyVerdict::Deny(deny),
            Some(crate::audit::subject::starts_another_command(&analysis)),
        ),
        hard_deny::Early::Undecided(analysis) => return Err(analysis),
    };
    let hash = request.request_hash();
    let inputs = Inputs {
        request,
        request_hash: &hash,
        now_ms: engine.clock().now_ms(),
        hard_deny: &verdict,
        inert: None,
        confined: None,
        units: None,
        starts_another,
        trusted: &trusted.config,
        project: Ok(trusted),
        exposed: None,
        reviewer: Gathered::NotYet,
        state: Gathered::NotYet,
        packet: Gathered::NotYet,
        cache: None,
        grant: GrantInput::NotAsked,
    };
    match pipeline::decide(&inputs) {
        Step::Decided(d) if !d.effects.iter().any(Effect::is_state) => Ok(emit(engine, d)),
        // INVARIANT: the table answers a hard deny at once, without state.
        Step::Decided(_) | Step::Gather(_) | Step::Review(_) => Err(None),
    }
}

/// [`Engine::floor_here`]: the table with nothing gathered, kept only when
/// it answers with a hard deny or a configuration refusal (both need no
/// state, reviewer or model); anything else is the service's to decide.
pub(super) fn floor(engine: &Engine, request: &Request) -> Option<Decision> {
    let fixed = Fixed::new(engine, request, None);
    let g = Gathering::default();
    match pipeline::decide(&fixed.inputs(&g, Gathered::NotYet, None)) {
        Step::Decided(d) if !d.effects.iter().any(Effect::is_state) => {
            match d.decision.stage() {
                // Judged with this machine's files: the service cannot see
                // them. Inert too (docs/remote-hook.md): which files a read
                // reaches, and the confinement, are this machine's.
                Stage::HardDeny | Stage::ConfigError | Stage::Inert => Some(emit(engine, d)),
                // The trusted and central configuration decide these.
                Stage::Routing
                | Stage::Breaker
                | Stage::Budget
                | Stage::Cache
                | Stage::Override
                | Stage::BreakGlass
                | Stage::Reviewer
                | Stage::RiskCeiling
                | Stage::ReviewerFailure => None,
            }
        }
        // The service gathers state, the packet and the model.
        Step::Decided(_) | Step::Gather(_) | Step::Review(_) => None,
    }
}

/// The inert stage and routing's units on a bash command whose hard denies
/// are clear, from one pass over the analysis. The verdict only when the
/// trusted configuration has the stage on (a project overlay may still
/// turn it off: the table reads the effective setting); nothing at all
/// (no file read) when neither the stage nor a command-template rule
/// would read it.
fn inert_and_units(
    request: &Request,
    trusted: &Config,
    templates: bool,
    hard_deny: &hard_deny::DenyVerdict,
    analysis: Option<&crate::shell::Analysis>,
    home: &str,
    protected: &[String],
) -> (
    Option<crate::policy::inert::InertVerdict>,
    Option<Vec<crate::config::routing::Unit>>,
) {
    let clear = matches!(hard_deny, hard_deny::DenyVerdict::Clear);
    let bash = request.surface == crate::request::Surface::Bash;
    let wanted = trusted.inert.enabled || templates;
    let (true, true, true, Some(command), Some(analysis)) =
        (wanted, clear, bash, request.command.as_deref(), analysis)
    else {
        return (None, None);
    };
    let denied = denied_paths(&trusted.inert.deny_paths, protected, request, home);
    let ctx = crate::policy::inert::InertContext {
        home,
        protected: denied.as_deref().unwrap_or(protected),
        git_system_config: Path::new("/etc/gitconfig"),
        files: &super::Disk,
    };
    let (verdict, units) = crate::policy::inert::judge_with_units(command, analysis, &ctx);
    if request.files_elsewhere || request.remote_hook {
        // Judged on this machine's files, which are not the command's: no
        // verdict, and no unit counts as inert for a template either.
        let units = units.map(|units| {
            units
                .into_iter()
                .map(|u| crate::config::routing::Unit { inert: false, ..u })
                .collect()
        });
        return (None, units);
    }
    (trusted.inert.enabled.then_some(verdict), units)
}

/// The confined form an inert allow of `request` carries: only for an
/// inert verdict, a caller that runs rewritten commands, a command whose
/// files are on this machine, and a machine that can confine
/// ([`crate::confine::available`], asked once per process). Otherwise
/// `None`, and the inert command goes on to routing.
fn confined_form(
    engine: &Engine,
    request: &Request,
    inert: Option<&crate::policy::inert::InertVerdict>,
) -> Option<crate::confine::Confined> {
    let (Some(crate::policy::inert::InertVerdict::Inert(_)), Some(command)) =
        (inert, request.command.as_deref())
    else {
        return None;
    };
    if !request.can_run_confined || request.remote_hook || request.files_elsewhere {
        return None;
    }
    if let Err(missing) = crate::confine::available() {
        tracing::debug!(%missing, "cannot confine here: inert commands go on to routing");
        return None;
    }
    let options = &engine.inner.options;
    let at = crate::confine::Locations {
        home: options.paths.vouch_home.as_deref(),
        config: options.confine.config.as_deref(),
    };
    crate::confine::Confined::new(
        options.confine.exe.as_deref()?,
        crate::confine::bash()?,
        &at,
        command,
        request.input.as_ref(),
    )
}

/// vouch's protected paths and the configured `inert.deny_paths`, made
/// absolute (`~/…` against the request's home, relative entries against
/// its working directory); `None` when none are configured. A relative
/// entry of a request without a working directory cannot be placed, so
/// `/` stands for it: no read is then proven inert.
fn denied_paths(
    configured: &[String],
    protected: &[String],
    request: &Request,
    home: &str,
) -> Option<Vec<String>> {
    if configured.is_empty() {
        return None;
    }
    let mut all = protected.to_vec();
    for entry in configured {
        let absolute = if entry == "~" {
            crate::shell::path::normalize(home)
        } else if let Some(rest) = entry.strip_prefix("~/") {
            crate::shell::path::join(home, rest)
        } else if entry.starts_with('/') {
            crate::shell::path::normalize(entry)
        } else {
            match request.cwd.as_deref() {
                Some(cwd) => crate::shell::path::join(cwd, entry),
                None => "/".to_owned(),
            }
        };
        all.push(absolute);
    }
    Some(all)
}

impl<'a> Fixed<'a> {
    fn new(
        engine: &'a Engine,
        request: &'a Request,
        analysis: Option<crate::shell::Analysis>,
    ) -> Fixed<'a> {
        let options = &engine.inner.options;
        let trusted = &options.trusted;
        let home = request_home(engine, request);
        let cwd = request.cwd.as_deref().map(Path::new);
        let project = engine.inner.projects.for_project(trusted, cwd);
        let mut paths = engine.inner.protected.for_home(&home);
        if let Some(root) = &project.root {
            // Only an existing project overlay is vouch's: protecting a
            // `.vouch` that is not there would hard-deny `rm -rf .` in a
            // fresh project.
            let overlay = root.join(".vouch");
            if overlay.exists() {
                paths.push(overlay.display().to_string());
            }
        }
        let exposed = match (&project.root, options.allow_untrusted_dev) {
            (Some(root), false) => trusted
                .trusted_file_inside(root)
                .map(|file| (file, root.clone())),
            (None, _) | (_, true) => None,
        };
        let protected = hard_deny::VouchFiles {
            paths,
            config_only: engine.inner.protected.config_only_for_home(&home),
            vars: known_vars(engine),
        };
        let resolved_path = request
            .path
            .as_deref()
            .and_then(|p| resolve_path(p, request.cwd.as_deref()));
        let ctx = hard_deny::DenyContext {
            home: &home,
            cwd: request.cwd.as_deref(),
            protected: &protected,
            limits: &trusted.config.analysis,
        };
        // The one analysis of the command: the early hop's, else made here.
        let analysis = match (analysis, request.command.as_deref()) {
            (Some(analysis), Some(_)) => Some(analysis),
            (None, Some(command)) => Some(hard_deny::analyze_command(command, &ctx)),
            (_, None) => None,
        };
        let hard_deny =
            pipeline::hard_denies(request, &ctx, resolved_path.as_deref(), analysis.as_ref());
        let templates = project
            .effective
            .as_ref()
            .is_ok_and(|loaded| loaded.router.has_templates());
        let (inert, units) = inert_and_units(
            request,
            &trusted.config,
            templates,
            &hard_deny,
            analysis.as_ref(),
            &home,
            &protected.paths,
        );
        let confined = confined_form(engine, request, inert.as_ref());
        Fixed {
            request,
            hash: request.request_hash(),
            now: engine.clock().now_ms(),
            hard_deny,
            inert,
            confined,
            units,
            analysis,
            trusted,
            project,
            exposed,
            grant: request
                .issue_grant
                .then(|| GrantToken::mint().map_err(|e| e.to_string())),
        }
    }

    /// The effective configuration, when the project overlay was accepted.
    fn config(&self) -> &Arc<Config> {
        match &self.project.effective {
            Ok(loaded) => &loaded.config,
            Err(_) => &self.trusted.config,
        }
    }

    fn inputs<'b>(
        &'b self,
        g: &'b Gathering,
        state: Gathered<'b, Snapshot>,
        cache: Option<Option<&'b Verdict>>,
    ) -> Inputs<'b> {
        Inputs {
            request: self.request,
            request_hash: &self.hash,
            now_ms: self.now,
            hard_deny: &self.hard_deny,
            inert: self.inert.as_ref(),
            confined: self.confined.as_ref(),
            units: self.units.as_deref(),
            starts_another: self
                .analysis
                .as_ref()
                .map(crate::audit::subject::starts_another_command),
            trusted: &self.trusted.config,
            project: self.project.effective.as_ref(),
            exposed: self
                .exposed
                .as_ref()
                .map(|(file, root)| Exposed { file, root }),
            reviewer: gathered(g.reviewer.as_ref().map(|r| r.as_ref().map(|_| &()))),
            state,
            packet: gathered(g.packet.as_ref().map(|r| r.as_ref())),
            cache,
            grant: match &self.grant {
                None => GrantInput::NotAsked,
                Some(Ok(token)) => GrantInput::Ready(token),
                Some(Err(why)) => GrantInput::Unavailable(why),
            },
        }
    }

    fn fail(&self, fault: Fault, why: String) -> Decided {
        let facts = RequestFacts::of(self.request);
        let (hash, now) = (self.hash.clone(), self.now);
        pipeline::failure(facts, hash, now, self.config(), (fault, why), None)
    }
}

fn gathered<'a, T>(slot: Option<Result<&'a T, &'a String>>) -> Gathered<'a, T> {
    match slot {
        None => Gathered::NotYet,
        Some(Ok(value)) => Gathered::Ready(value),
        Some(Err(why)) => Gathered::Unavailable(why),
    }
}

/// What one locked round produced.
enum Round {
    Done(Step),
    /// Nothing was written; go round again with this state.
    Again {
        state: Snapshot,
        durability: Durability,
    },
}

/// Decides one request up to the model call; `analysis` is the early
/// hop's analysis of its command, when it made one.
pub(super) fn prepare(
    engine: &Engine,
    request: &Request,
    analysis: Option<crate::shell::Analysis>,
) -> Prepared {
    let fixed = Fixed::new(engine, request, analysis);
    let mut g = Gathering::default();
    let mut durability = Durability::Normal;
    for _ in 0..MAX_ROUNDS {
        let state = gathered(g.state.as_ref().map(|r| r.as_ref()));
        let step = pipeline::decide(&fixed.inputs(&g, state, None));
        let commit = match &step {
            Step::Gather(Need::Reviewer) => {
                g.reviewer = Some(
                    engine
                        .reviewer_for(fixed.config())
                        .map_err(|e| e.to_string()),
                );
                continue;
            }
            Step::Gather(Need::State) => {
                read_state(engine, &fixed, &mut g);
                continue;
            }
            Step::Gather(Need::Packet(ctx)) => {
                g.packet = Some(build_packet(&fixed, &g, ctx));
                continue;
            }
            Step::Gather(Need::Cache) | Step::Review(_) => true,
            Step::Decided(d) => d.effects.iter().any(Effect::is_state),
        };
        if !commit {
            return decided(engine, step_decided(step, &fixed));
        }
        durability = durability.max(durability_of(&step));
        let Some(store) = g.store.clone() else {
            // INVARIANT: the table asks for the state before anything that
            // commits, and reading it keeps the store.
            return decided(
                engine,
                fixed.fail(
                    Fault::StateUnavailable,
                    "the state database was not opened".to_owned(),
                ),
            );
        };
        match commit_round(&store, &fixed, &g, durability) {
            Ok(Round::Done(step)) => return finish_step(engine, &fixed, step, g, store),
            Ok(Round::Again {
                state,
                durability: wanted,
            }) => {
                g.state = Some(Ok(state));
                durability = durability.max(wanted);
            }
            Err(e) => {
                tracing::warn!(error = %e, "session state transaction failed; failing closed");
                let why = format!("the session state could not be read: {e}");
                return decided(engine, fixed.fail(Fault::StateUnavailable, why));
            }
        }
    }
    let why = "the session state kept changing while this request was prepared".to_owned();
    decided(engine, fixed.fail(Fault::StateUnavailable, why))
}

/// Opens the store and reads the turn's state outside any write lock.
fn read_state(engine: &Engine, fixed: &Fixed<'_>, g: &mut Gathering) {
    let read = engine.store().and_then(|store| {
        let key = turn_key(fixed.request);
        let snapshot = store.read(|tx| session::read_snapshot(tx, key, &fixed.hash, fixed.now))?;
        Ok((store, snapshot))
    });
    g.state = Some(match read {
        Ok((store, snapshot)) => {
            g.store = Some(store);
            Ok(snapshot)
        }
        Err(e) => {
            tracing::warn!(error = %e, "state database unavailable; failing closed");
            Err(e.to_string())
        }
    });
}

fn build_packet(
    fixed: &Fixed<'_>,
    g: &Gathering,
    ctx: &PacketContext,
) -> Result<(PacketContext, Packet), String> {
    let Some(Ok(reviewer)) = &g.reviewer else {
        // INVARIANT: the table asks for the reviewer before the packet.
        return Err("the reviewer was not ready".to_owned());
    };
    let cfg = fixed.config();
    let estimator = cfg.budget.estimator;
    let overhead = reviewer.wire_overhead_tokens(&|s| estimator.count(s));
    let reading = crate::evidence::redact::ShellReading {
        analysed: fixed
            .request
            .command
            .as_deref()
            .zip(fixed.analysis.as_ref()),
        limits: cfg.analysis,
    };
    packet::build_read(fixed.request, ctx, &cfg.budget, overhead, reading)
        .map(|p| (ctx.clone(), p))
        .map_err(|e| e.to_string())
}

/// Decides again under the write lock, on fresh state, and applies the
/// state effects in the same transaction.
fn commit_round(
    store: &Store,
    fixed: &Fixed<'_>,
    g: &Gathering,
    durability: Durability,
) -> Result<Round, StoreError> {
    let key = turn_key(fixed.request);
    store.write_session(key.session, durability, |tx| {
        let fresh = session::read_snapshot(tx, key, &fixed.hash, fixed.now)?;
        let cached = match &g.packet {
            Some(Ok((_, packet))) => session::cache_lookup(tx, &packet.cache_key, fixed.now)?,
            Some(Err(_)) | None => None,
        };
        let cache = g.packet.as_ref().map(|_| cached.as_ref());
        let step = pipeline::decide(&fixed.inputs(g, Gathered::Ready(&fresh), cache));
        let effects: &[Effect] = match &step {
            Step::Decided(d) => &d.effects,
            Step::Review(job) => &job.effects,
            // The fresh state needs something not gathered (a packet with
            // another context); an impossible need is caught the same way
            // and ends in the round limit.
            Step::Gather(_) => {
                return Ok(Round::Again {
                    state: fresh,
                    durability,
                });
            }
        };
        let wanted = durability_of_effects(effects);
        if wanted > durability {
            return Ok(Round::Again {
                state: fresh,
                durability: wanted,
            });
        }
        let scope = Scope {
            key,
            request_hash: &fixed.hash,
            now: fixed.now,
        };
        session::apply(tx, scope, effects)?;
        Ok(Round::Done(step))
    })
}

fn finish_step(
    engine: &Engine,
    fixed: &Fixed<'_>,
    step: Step,
    g: Gathering,
    store: Arc<Store>,
) -> Prepared {
    match step {
        Step::Decided(d) => decided(engine, d),
        Step::Review(job) => match (g.reviewer, g.packet) {
            (Some(Ok(reviewer)), Some(Ok((_, packet)))) => {
                Prepared::Review(Box::new(PendingReview {
                    job: *job,
                    packet,
                    reviewer,
                    store,
                }))
            }
            // INVARIANT: the table reviews only with both ready.
            _ => decided(
                engine,
                fixed.fail(Fault::Internal, "the review was not ready".to_owned()),
            ),
        },
        Step::Gather(_) => {
            let why = "the decision did not finish".to_owned();
            decided(engine, fixed.fail(Fault::Internal, why))
        }
    }
}

fn step_decided(step: Step, fixed: &Fixed<'_>) -> Decided {
    match step {
        Step::Decided(d) => d,
        // INVARIANT: only decisions without state effects get here.
        Step::Review(_) | Step::Gather(_) => {
            fixed.fail(Fault::Internal, "the decision did not finish".to_owned())
        }
    }
}

/// Records the review's outcome and returns the decision (blocking: the
/// record is a transaction of its own on the calling thread).
pub(super) fn finish(engine: &Engine, pending: PendingReview, result: ReviewResult) -> Decision {
    let (concluded, record) = conclude(engine, &pending, result);
    let session = &pending.job.facts.session_id;
    let outcome = pending
        .store
        .write_session(session, concluded.durability, |tx| record(tx));
    settle(engine, &pending, concluded, outcome)
}

/// [`finish`] for the service: the record is queued for the store's
/// recorder thread ([`Store::write_queued`]), so reviews finishing together
/// share one commit and no blocking thread waits for it.
pub(super) async fn finish_queued(
    engine: &Engine,
    pending: PendingReview,
    result: ReviewResult,
) -> Decision {
    let (concluded, record) = conclude(engine, &pending, result);
    let session = &pending.job.facts.session_id;
    let recorded = pending
        .store
        .write_queued_session(session, concluded.durability, record);
    let outcome = match recorded.await {
        Ok(outcome) => outcome,
        // The recorder dropped the write unanswered (a panic in its
        // transaction, or its store is gone): not recorded.
        Err(_) => Err(StoreError::Unavailable {
            at: pending.store.describe().to_owned(),
            detail: "the recorder did not answer".to_owned(),
        }),
    };
    settle(engine, &pending, concluded, outcome)
}

/// The review's decision, before its state effects are recorded.
struct Concluded {
    decided: Decided,
    durability: Durability,
    now: u64,
}

/// The decision for the model's `result`, and the write (owning the state
/// effects, which leave `decided`) that records it.
fn conclude(
    engine: &Engine,
    pending: &PendingReview,
    result: ReviewResult,
) -> (Concluded, crate::store::QueuedWrite) {
    let now = engine.clock().now_ms();
    let job = &pending.job;
    let mut decided = pipeline::conclude(job, &result, now);
    let durability = durability_of_effects(&decided.effects);
    let (state, rest): (Vec<Effect>, Vec<Effect>) = std::mem::take(&mut decided.effects)
        .into_iter()
        .partition(Effect::is_state);
    decided.effects = rest;
    let (session_id, turn_id, request_hash) = (
        job.facts.session_id.clone(),
        job.facts.turn_id.clone(),
        job.request_hash.clone(),
    );
    let record = Box::new(move |tx: &crate::store::Transaction<'_>| {
        let scope = Scope {
            key: TurnKey {
                session: &session_id,
                turn: &turn_id,
            },
            request_hash: &request_hash,
            now,
        };
        session::apply(tx, scope, &state)
    });
    (
        Concluded {
            decided,
            durability,
            now,
        },
        record,
    )
}

/// The decision once its record's `outcome` is known: a review that could
/// not be recorded fails closed.
fn settle(
    engine: &Engine,
    pending: &PendingReview,
    concluded: Concluded,
    outcome: Result<(), StoreError>,
) -> Decision {
    let Concluded { decided, now, .. } = concluded;
    let job = &pending.job;
    match outcome {
        Ok(()) => emit(engine, decided),
        Err(e) => {
            // The breaker and budgets must see every review; one they cannot
            // record must not allow.
            tracing::warn!(error = %e, "review could not be recorded; failing closed");
            let why = format!("the review could not be recorded in the session state: {e}");
            let review = decided.decision.review().cloned();
            let failed = pipeline::failure(
                job.facts.clone(),
                job.request_hash.clone(),
                now,
                &job.config,
                (Fault::StateUnavailable, why),
                review,
            );
            emit(engine, failed)
        }
    }
}

/// Hands the final decision's audit record to the sink and returns it.
fn decided(engine: &Engine, d: Decided) -> Prepared {
    Prepared::Decided(Box::new(emit(engine, d)))
}

fn emit(engine: &Engine, d: Decided) -> Decision {
    for effect in d.effects {
        match effect {
            Effect::Audit(record) => engine.inner.audit.push(*record),
            // Applied already, in the decision's transaction.
            Effect::ReserveReview
            | Effect::CountVerdict { .. }
            | Effect::CountFailure
            | Effect::ResetBreaker
            | Effect::SpendAuthorization { .. }
            | Effect::RecordDenial(_)
            | Effect::CacheVerdict { .. }
            | Effect::StoreGrant { .. } => {}
        }
    }
    d.decision
}

/// The fail-closed decision when a blocking task dies (a panic inside).
pub(super) fn task_failure(
    engine: &Engine,
    request: &Request,
    join: &dyn std::fmt::Display,
) -> Decision {
    tracing::error!(error = %join, "decision task failed");
    let why = "the decision task failed".to_owned();
    let now = engine.clock().now_ms();
    let facts = RequestFacts::of(request);
    let d = pipeline::failure(
        facts,
        request.request_hash(),
        now,
        engine.config(),
        (Fault::Internal, why),
        None,
    );
    emit(engine, d)
}

fn durability_of(step: &Step) -> Durability {
    match step {
        Step::Decided(d) => durability_of_effects(&d.effects),
        Step::Review(job) => durability_of_effects(&job.effects),
        Step::Gather(_) => Durability::Normal,
    }
}

fn durability_of_effects(effects: &[Effect]) -> Durability {
    if effects.iter().any(Effect::needs_full_sync) {
        Durability::Full
    } else {
        Durability::Normal
    }
}

fn turn_key(request: &Request) -> TurnKey<'_> {
    TurnKey {
        session: &request.session_id,
        turn: request.turn(),
    }
}

/// The symlink-resolved form of `path` when the file or its parent exists.
fn resolve_path(path: &str, cwd: Option<&str>) -> Option<String> {
    let p = Path::new(path);
    let absolute = if p.is_absolute() {
        p.to_path_buf()
    } else {
        Path::new(cwd?).join(p)
    };
    if let Ok(real) = std::fs::canonicalize(&absolute) {
        return Some(real.display().to_string());
    }
    let parent = std::fs::canonicalize(absolute.parent()?).ok()?;
    Some(parent.join(absolute.file_name()?).display().to_string())
}
