//! The decision table (design §6): one pure function, [`decide`], that orders
//! every stage before the model call, and [`conclude`], which turns what the
//! model said into the decision. Both read plain data ([`Inputs`], [`Job`])
//! and return a [`Decision`] with the [`Effect`]s that must follow it; the
//! engine's shell gathers the inputs (files, the state database, the model)
//! and applies the state effects through `session::apply`: those of
//! [`decide`] in the write transaction that decided them, on fresh state;
//! those of [`conclude`] in a second write after the model (in `vouch
//! serve`, group-committed with other reviews' by the store's recorder
//! thread). Nothing here touches a file, a socket or the clock; what does is
//! computed before and handed in — the inert verdict ([`Inputs::inert`])
//! reads the filesystem, so it is the engine that runs it.
//!
//! Inputs that cost something to gather — the reviewer, the turn's state,
//! the evidence packet, the cache lookup — start out [`Gathered::NotYet`];
//! when the table reaches a stage that needs one, it answers
//! [`Step::Gather`] and the shell calls it again with that input filled in.
//! So a hard deny never opens the database, an open breaker never builds a
//! packet, and a packet is built once, with the trusted override already in
//! it when one is pending. (Cedar's partial evaluation works the same way:
//! an unknown input yields a residual instead of an answer.)
//!
//! Every outcome is an exhaustive `match`; no arm is a wildcard that could
//! allow. Every decision carries its stage and reason, and each final one an
//! [`Effect::Audit`] record when auditing is on.

use std::path::Path;
use std::sync::Arc;

use crate::config::{Config, ConfigError, LoadedConfig, Provider, RoutePolicy, WithoutModel};
use crate::decision::ceiling;
use crate::decision::{Decision, Fault, Outcome, ReviewStats, Routed, VerdictSource};
use crate::evidence::packet::{Packet, PacketContext};
use crate::evidence::redact;
use crate::grants::GrantToken;
use crate::policy::hard_deny;
use crate::request::Request;
use crate::reviewer::{ReviewOutcome, ReviewResult, Verdict};
use crate::session::{AuthorizationKind, PendingAuthorization, Snapshot};

/// `rule_id` of the decision made because no reviewer model is configured
/// (`reviewer.without_model`: an abstain, or a defer to the human).
pub const NO_REVIEWER_RULE: &str = crate::rules::StageRule::RoutingNoReviewer.as_str();

/// An input the table may need, gathered on demand.
#[derive(Debug, Clone, Copy)]
pub enum Gathered<'a, T: ?Sized> {
    /// Not gathered yet: the table answers [`Step::Gather`] when it needs it.
    NotYet,
    Ready(&'a T),
    /// Gathering failed; the text is the reason, for the rationale.
    Unavailable(&'a str),
}

/// Whether the request asked for a grant, and the token minted for it.
#[derive(Debug, Clone, Copy)]
pub enum GrantInput<'a> {
    NotAsked,
    /// Minted by the shell beforehand (randomness is I/O); stored only if
    /// the decision allows.
    Ready(&'a GrantToken),
    Unavailable(&'a str),
}

/// A trusted file (or vouch's own binary) inside the project root, where
/// the agent could have rewritten it.
#[derive(Debug, Clone, Copy)]
pub struct Exposed<'a> {
    pub file: &'a Path,
    pub root: &'a Path,
}

/// Everything the table reads.
#[derive(Debug, Clone)]
pub struct Inputs<'a> {
    pub request: &'a Request,
    pub request_hash: &'a str,
    pub now_ms: u64,
    /// The hard-deny stage's verdict ([`hard_denies`]): pure, but the most
    /// expensive stage, so the shell computes it once per request rather
    /// than on every round of the table.
    pub hard_deny: &'a hard_deny::DenyVerdict,
    /// Whether the command starts another command, from the request's one
    /// analysis ([`crate::audit::subject::starts_another_command`]): the
    /// audit's template reads it instead of analysing the command again.
    /// `None` when the command was not analysed.
    pub starts_another: Option<bool>,
    /// The inert stage's verdict on the command, from the same analysis;
    /// `None` when it was not judged (not bash, the stage off in the
    /// trusted configuration).
    pub inert: Option<&'a crate::policy::inert::InertVerdict>,
    /// How an inert command would run confined (docs/confine.md); `None`
    /// when it cannot: the caller cannot run a rewritten command, this
    /// machine cannot confine, or the command's files are not on this
    /// machine. An inert verdict allows only with one.
    pub confined: Option<&'a crate::confine::Confined>,
    /// The units the command would run, for routing's command templates;
    /// `None` when it was not analysed completely (no template applies).
    pub units: Option<&'a [crate::config::routing::Unit]>,
    /// The trusted configuration: its failure mode answers when the project
    /// overlay is rejected.
    pub trusted: &'a Config,
    /// The trusted configuration tightened by the project overlay, or why
    /// the overlay was rejected.
    pub project: Result<&'a LoadedConfig, &'a ConfigError>,
    /// `None` also when `VOUCH_ALLOW_UNTRUSTED_DEV=1` (the shell skips it).
    pub exposed: Option<Exposed<'a>>,
    /// Whether a reviewer can be built from the effective configuration.
    pub reviewer: Gathered<'a, ()>,
    pub state: Gathered<'a, Snapshot>,
    /// The packet and the context it was built with.
    pub packet: Gathered<'a, (PacketContext, Packet)>,
    /// The verdict cached under the packet's key: `None` not looked up,
    /// `Some(None)` a miss.
    pub cache: Option<Option<&'a Verdict>>,
    pub grant: GrantInput<'a>,
}

/// What the shell must gather before the table can go on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Need {
    Reviewer,
    State,
    /// Build the packet with this context.
    Packet(PacketContext),
    /// Look the packet's key up in the verdict cache (inside the decision's
    /// transaction).
    Cache,
}

/// A decision and what must happen because of it.
#[derive(Debug, Clone, PartialEq)]
pub struct Decided {
    pub decision: Decision,
    pub effects: Vec<Effect>,
}

/// The table's answer.
#[derive(Debug, Clone, PartialEq)]
#[expect(
    clippy::large_enum_variant,
    reason = "one step a round, moved once: boxing the decision would add an allocation to \
              every decision for nothing"
)]
pub enum Step {
    Decided(Decided),
    /// Ask the model: apply `job.effects`, call it with the packet, then
    /// [`conclude`].
    Review(Box<Job>),
    Gather(Need),
}

/// Everything [`conclude`] needs once the model has answered.
#[derive(Debug, Clone, PartialEq)]
pub struct Job {
    pub request_hash: String,
    pub facts: RequestFacts,
    pub config: Arc<Config>,
    /// `ModelWithOverride` when a human's exact-retry approval is in the packet.
    pub source: VerdictSource,
    /// Where a decisive verdict is cached (`None` with an override: that
    /// packet is never looked up).
    pub cache_key: Option<String>,
    pub grant: Option<GrantToken>,
    /// Applied in the decision's transaction, before the model is called.
    pub effects: Vec<Effect>,
}

pub use crate::audit::facts::{AuditRecord, RequestFacts};

pub use crate::session::effects::{DenialRecord, Effect};

/// Decides everything that can be decided before the model is called.
pub fn decide(i: &Inputs<'_>) -> Step {
    let hash = || i.request_hash.to_owned();
    // Hard denies come first, with the trusted view of what is protected:
    // no configuration, state, model or human can override them.
    let parse_note = match i.hard_deny {
        hard_deny::DenyVerdict::Deny(deny) => {
            let d = Decision::hard_deny(hash(), deny.rule, deny.rationale.clone());
            return finish(i, audit_enabled(i), d, Vec::new());
        }
        hard_deny::DenyVerdict::Clear => None,
        hard_deny::DenyVerdict::ParseFailed { error } => Some(parse_note(error)),
        hard_deny::DenyVerdict::Incomplete { note } => Some(incomplete_note(note)),
    };
    // A project overlay that could not be read or tries to loosen disables
    // the reviewer for this project: the trusted failure mode answers.
    let loaded = match i.project {
        Ok(loaded) => loaded,
        Err(e) => {
            let why = format!(
                "the project configuration was rejected, so the reviewer is disabled for this \
                 project: {e}"
            );
            let d = Decision::config_error(i.trusted.decision.failure_mode, hash(), why);
            return finish(i, i.trusted.audit.enabled, d, Vec::new());
        }
    };
    let cfg = &*loaded.config;
    // Never decide on a configuration the agent could have written.
    if let Some(exposed) = i.exposed {
        let why = format!(
            "vouch's own trusted file `{}` lies inside the project `{}`, where the agent could \
             have rewritten it; set VOUCH_ALLOW_UNTRUSTED_DEV=1 only for local development",
            exposed.file.display(),
            exposed.root.display()
        );
        let d = Decision::config_error(cfg.decision.failure_mode, hash(), why);
        return finish(i, cfg.audit.enabled, d, Vec::new());
    }
    // Inert: every unit provably only reads, and it will run confined.
    // Never on a command that did not parse or whose analysis is
    // incomplete (the verdict says so), nor where it cannot run confined
    // (it goes on to routing like any other command); a project overlay
    // may turn the stage off.
    if let (None, true, Some(crate::policy::inert::InertVerdict::Inert(units)), Some(confined)) =
        (&parse_note, cfg.inert.enabled, i.inert, i.confined)
    {
        let d = Decision::inert(hash(), units, confined.clone());
        return finish(i, cfg.audit.enabled, d, Vec::new());
    }
    // Routing, before any state: decisions that need no model need no
    // database. A command nobody could parse is never passed through
    // unreviewed, whatever surface carried it.
    let route = loaded.router.route_units(i.request, i.units);
    let routed = match (route.policy, &parse_note) {
        // On to the reviewer (an unparseable `pass` included).
        (RoutePolicy::Pass, Some(_)) | (RoutePolicy::Ai, _) => None,
        // Abstain: the harness's own permission rules decide.
        (RoutePolicy::Pass, None) => Some(Routed::Abstain),
        // A person decides.
        (RoutePolicy::Human, _) => Some(Routed::Human),
        // Configured never to run.
        (RoutePolicy::Never, _) => Some(Routed::Never),
    };
    if let Some(routed) = routed {
        let d = Decision::routed(routed, hash(), route.rule_id(), route.rationale());
        return finish(i, cfg.audit.enabled, d, Vec::new());
    }
    // No reviewer model is configured (a fresh install): what the model
    // would have reviewed takes `reviewer.without_model`. Not a failure, so
    // not `failure_mode`; the hard denies and routing above still applied.
    if cfg.reviewer.provider == Provider::None {
        let (routed, why) = without_model(cfg.reviewer.without_model);
        let d = Decision::routed(routed, hash(), NO_REVIEWER_RULE.to_owned(), why);
        return finish(i, cfg.audit.enabled, d, Vec::new());
    }
    // A reviewer that cannot be built fails closed before any state is
    // touched: nothing could be reviewed anyway.
    match i.reviewer {
        Gathered::NotYet => return Step::Gather(Need::Reviewer),
        Gathered::Unavailable(why) => {
            let why = format!("the reviewer is not usable: {why}");
            return failure_step(i, cfg, Fault::ReviewerUnusable, why);
        }
        Gathered::Ready(()) => {}
    }
    match i.state {
        Gathered::NotYet => Step::Gather(Need::State),
        Gathered::Unavailable(why) => {
            let why = format!("the state database is unavailable: {why}");
            failure_step(i, cfg, Fault::StateUnavailable, why)
        }
        Gathered::Ready(snapshot) => turn_stages(i, loaded, snapshot, parse_note),
    }
}

/// What a request the model would have reviewed gets when no reviewer model
/// is configured. Neither arm allows: an abstain is the harness's "no
/// opinion", so installing vouch without a model is never looser than not
/// installing it.
fn without_model(choice: WithoutModel) -> (Routed, String) {
    match choice {
        // The harness's own permission rules decide, as without vouch.
        WithoutModel::Abstain => (
            Routed::Abstain,
            "no reviewer model is configured (`reviewer.provider = \"none\"`), so vouch has no \
             opinion on this action and the harness's own permission rules decide \
             (`reviewer.without_model = \"abstain\"`)"
                .to_owned(),
        ),
        // The trusted configuration chose a person over the harness.
        WithoutModel::Human => (
            Routed::Human,
            "no reviewer model is configured (`reviewer.provider = \"none\"`) and \
             `reviewer.without_model = \"human\"`, so this action needs a human decision"
                .to_owned(),
        ),
    }
}

/// The per-turn stages, in order, once the turn's state is known.
fn turn_stages(
    i: &Inputs<'_>,
    loaded: &LoadedConfig,
    snapshot: &Snapshot,
    parse_note: Option<String>,
) -> Step {
    let cfg = &*loaded.config;
    let hash = || i.request_hash.to_owned();
    let turn = &snapshot.turn;
    // A broker that asked for a grant cannot act on an allow without one,
    // so no stage that could allow may run without the token.
    if let GrantInput::Unavailable(why) = i.grant {
        let why = format!("no grant token could be minted, so the action was not reviewed: {why}");
        return failure_step(i, cfg, Fault::EvidenceUnavailable, why);
    }
    // A human broke glass for this exact request: allow without the model.
    // First, because a human decided: it wins over an open breaker and spent
    // budgets, and nothing is billed. A disabled break glass (trusted or
    // project) is not honoured even if confirmed earlier.
    if cfg.overrides.break_glass_enabled
        && let Some(auth) = snapshot.pending(AuthorizationKind::BreakGlass)
    {
        return break_glass(i, cfg, auth);
    }
    // Too many model denials this turn: stop asking the model.
    if turn.breaker_tripped(&cfg.breaker) {
        let why = format!(
            "automatic review stopped for this turn after repeated denials ({} in a row, {} in \
             the recent window)",
            turn.consecutive_denials,
            turn.window_denials(cfg.breaker.window_size)
        );
        let d = Decision::breaker(cfg.breaker.action, hash(), why);
        return finish(i, cfg.audit.enabled, d, Vec::new());
    }
    // Too many reviewer failures this turn: do not call it again.
    if turn.failures >= cfg.turn.max_failures {
        let why = format!(
            "the reviewer failed {} times this turn, so it was not called again",
            turn.failures
        );
        return failure_step(i, cfg, Fault::FailureBudgetSpent, why);
    }
    // The turn's review budget is spent.
    if turn.reviews >= cfg.turn.max_reviews {
        let why = format!(
            "the turn's review budget is spent ({} model reviews)",
            turn.reviews
        );
        let d = Decision::budget(cfg.turn.on_exhausted, hash(), why);
        return finish(i, cfg.audit.enabled, d, Vec::new());
    }
    // Only now is the evidence needed: the model (or the cache) will see it.
    // A pending exact-retry approval goes into it as trusted context.
    let approval = snapshot.pending(AuthorizationKind::Override);
    let wanted = PacketContext {
        parse_note,
        trusted_override: approval.map(override_note),
    };
    let packet = match i.packet {
        Gathered::Ready((built, packet)) if *built == wanted => packet,
        Gathered::Ready(_) | Gathered::NotYet => return Step::Gather(Need::Packet(wanted)),
        Gathered::Unavailable(why) => {
            let why = format!(
                "the evidence packet could not be built, so the model was not called: {why}"
            );
            return failure_step(i, cfg, Fault::EvidenceUnavailable, why);
        }
    };
    match approval {
        // An approval changes the packet, so the cache is skipped: a cached
        // denial must never swallow a human's approval. It is spent now,
        // even if the review then fails: one use means one use.
        Some(auth) => review(i, loaded, packet, Some(auth)),
        None => cached_or_review(i, loaded, packet),
    }
}

/// The verdict cache, then the model.
fn cached_or_review(i: &Inputs<'_>, loaded: &LoadedConfig, packet: &Packet) -> Step {
    let cfg = &*loaded.config;
    if !cache_enabled(cfg) {
        return review(i, loaded, packet, None);
    }
    match i.cache {
        None => Step::Gather(Need::Cache),
        // The same packet was judged moments ago: reuse the verdict. It
        // counts for the breaker like the verdict it replays (an agent
        // looping on a denied action still trips it); it is not billed.
        Some(Some(verdict)) => {
            let grant = granted(i);
            let d = ceiling::decide_verdict(
                verdict,
                cfg,
                i.request_hash.to_owned(),
                VerdictSource::Cache,
                None,
                grant.map(|t| t.grant(i.now_ms, cfg.grants.ttl_ms)),
            );
            let mut effects = vec![Effect::CountVerdict {
                outcome: verdict.outcome,
                breaker: cfg.breaker.clone(),
            }];
            store_grant(&mut effects, &d, grant);
            finish(i, cfg.audit.enabled, d, effects)
        }
        Some(None) => review(i, loaded, packet, None),
    }
}

/// The model must be asked: reserve the review (and spend the approval).
fn review(
    i: &Inputs<'_>,
    loaded: &LoadedConfig,
    packet: &Packet,
    approval: Option<&PendingAuthorization>,
) -> Step {
    let mut effects = vec![Effect::ReserveReview];
    if let Some(auth) = approval {
        effects.push(Effect::SpendAuthorization { id: auth.id });
    }
    Step::Review(Box::new(Job {
        request_hash: i.request_hash.to_owned(),
        facts: RequestFacts::analysed(i.request, i.starts_another),
        config: Arc::clone(&loaded.config),
        source: match approval {
            Some(_) => VerdictSource::ModelWithOverride,
            None => VerdictSource::Model,
        },
        cache_key: match approval {
            Some(_) => None,
            None => Some(packet.cache_key.clone()),
        },
        grant: granted(i).cloned(),
        effects,
    }))
}

fn break_glass(i: &Inputs<'_>, cfg: &Config, auth: &PendingAuthorization) -> Step {
    let why = match &auth.denied_rationale {
        Some(r) => format!("a human broke glass for this exact request (denied earlier: {r})"),
        None => "a human broke glass for this exact request".to_owned(),
    };
    let grant = granted(i);
    let d = Decision::break_glass(
        i.request_hash.to_owned(),
        why,
        grant.map(|t| t.grant(i.now_ms, cfg.grants.ttl_ms)),
    );
    let mut effects = vec![
        Effect::SpendAuthorization { id: auth.id },
        Effect::ResetBreaker,
    ];
    store_grant(&mut effects, &d, grant);
    finish(i, cfg.audit.enabled, d, effects)
}

/// Records what the model said and turns it into the decision.
pub fn conclude(job: &Job, result: &ReviewResult, now_ms: u64) -> Decided {
    let cfg = &*job.config;
    let grant = job.grant.as_ref();
    let mut effects = Vec::new();
    let decision = match &result.outcome {
        ReviewOutcome::Verdict(verdict) => {
            let d = ceiling::decide_verdict(
                verdict,
                cfg,
                job.request_hash.clone(),
                job.source,
                Some(result.stats.clone()),
                grant.map(|t| t.grant(now_ms, cfg.grants.ttl_ms)),
            );
            // The breaker counts the model's own outcome, before ceilings.
            effects.push(Effect::CountVerdict {
                outcome: verdict.outcome,
                breaker: cfg.breaker.clone(),
            });
            record_verdict(&mut effects, job, verdict, now_ms);
            store_grant(&mut effects, &d, grant);
            d
        }
        ReviewOutcome::Failure(_) => {
            // Failures never count for the breaker, only against the
            // failure budget.
            effects.push(Effect::CountFailure);
            ceiling::decide(result, cfg, job.request_hash.clone())
        }
    };
    if cfg.audit.enabled {
        let record = AuditRecord::of(job.facts.clone(), now_ms, &decision);
        effects.push(Effect::Audit(Box::new(record)));
    }
    Decided { decision, effects }
}

/// The denial summary and the cache entry a verdict leaves behind.
fn record_verdict(effects: &mut Vec<Effect>, job: &Job, verdict: &Verdict, now_ms: u64) {
    let cfg = &*job.config;
    let redacted = Verdict {
        rationale: redact::redact_text(&verdict.rationale).into_owned(),
        suggestion: verdict
            .suggestion
            .as_deref()
            .map(|s| redact::redact_text(s).into_owned()),
        ..verdict.clone()
    };
    match verdict.outcome {
        Outcome::Deny => effects.push(Effect::RecordDenial(DenialRecord {
            risk_level: verdict.risk_level,
            surface: job.facts.surface.clone(),
            // The stored cwd is redacted like the summary: the agent can
            // choose the directory name.
            cwd: job
                .facts
                .cwd
                .as_deref()
                .map(|c| redact::redact_text(c).into_owned()),
            summary: job.facts.redacted_target(),
            rationale: redacted.rationale.clone(),
        })),
        Outcome::Allow | Outcome::Defer => {}
    }
    // Only decisive verdicts are reused (design §6.3): a model that was
    // unsure should get to look again.
    let decisive = match verdict.outcome {
        Outcome::Allow | Outcome::Deny => true,
        Outcome::Defer => false,
    };
    if let Some(key) = &job.cache_key
        && decisive
        && cache_enabled(cfg)
    {
        effects.push(Effect::CacheVerdict {
            key: key.clone(),
            verdict: redacted,
            expires_at_ms: now_ms.saturating_add(cfg.cache.ttl_ms),
            max_entries: cfg.cache.max_entries,
        });
    }
}

/// The decision when the shell itself cannot go on (the state transaction
/// failed, a task died): `failure_mode` of the given configuration.
pub fn failure(
    facts: RequestFacts,
    request_hash: String,
    now_ms: u64,
    cfg: &Config,
    (fault, why): (Fault, String),
    review: Option<ReviewStats>,
) -> Decided {
    let action = cfg.decision.failure_mode;
    let decision = Decision::reviewer_failure(action, fault, request_hash, why, review);
    let mut effects = Vec::new();
    if cfg.audit.enabled {
        let record = AuditRecord::of(facts, now_ms, &decision);
        effects.push(Effect::Audit(Box::new(record)));
    }
    Decided { decision, effects }
}

fn finish(i: &Inputs<'_>, audit: bool, decision: Decision, mut effects: Vec<Effect>) -> Step {
    if audit {
        let facts = RequestFacts::analysed(i.request, i.starts_another);
        let record = AuditRecord::of(facts, i.now_ms, &decision);
        effects.push(Effect::Audit(Box::new(record)));
    }
    Step::Decided(Decided { decision, effects })
}

fn failure_step(i: &Inputs<'_>, cfg: &Config, fault: Fault, why: String) -> Step {
    let d = Decision::reviewer_failure(
        cfg.decision.failure_mode,
        fault,
        i.request_hash.to_owned(),
        why,
        None,
    );
    finish(i, cfg.audit.enabled, d, Vec::new())
}

/// Whether auditing is on for this request: the project's configuration
/// when it was accepted, else the trusted one.
fn audit_enabled(i: &Inputs<'_>) -> bool {
    match i.project {
        Ok(loaded) => loaded.config.audit.enabled,
        Err(_) => i.trusted.audit.enabled,
    }
}

fn granted<'a>(i: &Inputs<'a>) -> Option<&'a GrantToken> {
    match i.grant {
        GrantInput::Ready(token) => Some(token),
        GrantInput::NotAsked | GrantInput::Unavailable(_) => None,
    }
}

/// Stores the grant when the decision kept it (only allows do).
fn store_grant(effects: &mut Vec<Effect>, d: &Decision, token: Option<&GrantToken>) {
    if let (Some(grant), Some(token)) = (d.grant(), token) {
        effects.push(Effect::StoreGrant {
            token_sha256: token.sha256.clone(),
            expires_at_ms: grant.expires_at_ms,
        });
    }
}

fn cache_enabled(cfg: &Config) -> bool {
    cfg.cache.ttl_ms > 0 && cfg.cache.max_entries > 0
}

/// The hard-deny stage: the request's home, cwd and vouch's protected files
/// (always the trusted view), checked once as sent and again with vouch's
/// own symlink resolution of `path` (`resolved_path`, gathered by the shell)
/// when it differs from what the adapter sent. `analysis` is the request's
/// one analysis of its command ([`hard_deny::analyze_command`]); `None`
/// analyses it here.
pub fn hard_denies(
    request: &Request,
    ctx: &hard_deny::DenyContext<'_>,
    resolved_path: Option<&str>,
    analysis: Option<&crate::shell::Analysis>,
) -> hard_deny::DenyVerdict {
    let first = hard_deny::check_analysed(request, ctx, analysis);
    match (first, resolved_path) {
        (hard_deny::DenyVerdict::Clear, Some(resolved))
            if request.resolved_path.as_deref() != Some(resolved) =>
        {
            let mut again = request.clone();
            again.resolved_path = Some(resolved.to_owned());
            hard_deny::check_analysed(&again, ctx, analysis)
        }
        (verdict, _) => verdict,
    }
}

fn parse_note(error: &str) -> String {
    format!(
        "parse_failed: the host could not fully parse this bash command ({error}); judge the raw \
         command text with extra care"
    )
}

/// Like [`parse_note`], for an analysis that ran past one of its budgets
/// (`[analysis]` in the configuration): the command goes to the reviewer,
/// never straight through.
fn incomplete_note(note: &str) -> String {
    format!(
        "analysis_incomplete: the host could not fully analyse this bash command ({note}); judge \
         the raw command text with extra care"
    )
}

/// The trusted note an exact-retry approval adds to the packet.
fn override_note(auth: &PendingAuthorization) -> String {
    let denied = match &auth.denied_rationale {
        Some(r) => format!(" (denial rationale: {r})"),
        None => String::new(),
    };
    format!(
        "A human operator approved one exact retry of this request after it was denied{denied}. \
         Treat this as explicit user authorization for this exact action only."
    )
}
