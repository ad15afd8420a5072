//! Orders the decision stages (design §1) and returns a [`Decision`].
//!
//! [`prepare`] runs everything before the model call — hard denies, project
//! configuration, routing, the evidence packet and the session gate — and
//! either decides or hands back a [`ReviewJob`]. [`finish`] records what the
//! model said and applies the risk ceilings. Both are synchronous (they touch
//! the filesystem and SQLite); the engine runs them on the blocking pool and
//! awaits only the model call in between.
//!
//! Every early return is a complete decision with its stage and reason, and
//! every error ends in the configured fail-closed outcome.

use std::path::Path;
use std::sync::Arc;

use crate::clock::Clock;
use crate::config::{Config, LoadedConfig, ProjectCache, Provider, RoutePolicy};
use crate::decision::{Decision, Outcome, OverrideHint, Stage};
use crate::evidence::packet::{self, Packet, PacketContext};
use crate::evidence::redact;
use crate::grants;
use crate::paths::Paths;
use crate::policy::{ceiling, hard_deny};
use crate::request::Request;
use crate::reviewer::{ReviewOutcome, ReviewResult, Reviewer, ReviewerError, Verdict};
use crate::session::{self, ActionSummary, CachedVerdict, Gate, ReviewEvent, TurnKey};
use crate::store::{Store, StoreError};

/// What [`prepare`] needs from its caller; I/O is reached through callbacks
/// so the engine decides how (and whether) to open the store and reviewer.
pub struct Context<'a> {
    pub paths: &'a Paths,
    pub trusted: &'a LoadedConfig,
    /// Folded project overlays, re-checked with one `stat` per request.
    pub projects: &'a ProjectCache,
    pub clock: &'a dyn Clock,
    pub allow_untrusted_dev: bool,
    pub store: &'a dyn Fn() -> Result<Arc<Store>, StoreError>,
    pub reviewer: &'a dyn Fn(&Config) -> Result<Reviewer, ReviewerError>,
}

/// The result of the stages before the model.
pub enum Prepared {
    /// A stage decided.
    Decided(Box<Decision>),
    /// The model must be asked.
    Review(Box<ReviewJob>),
}

/// Everything needed to call the model and finish the decision.
pub struct ReviewJob {
    pub request: Request,
    pub request_hash: String,
    pub config: Arc<Config>,
    pub store: Arc<Store>,
    pub reviewer: Reviewer,
    pub packet: Packet,
}

/// `rule_id` of the decision that defers because no reviewer is configured.
pub const NO_REVIEWER_RULE: &str = "routing/no-reviewer";

fn decided(d: Decision) -> Prepared {
    Prepared::Decided(Box::new(d))
}

/// The outcome when the review cannot run, from the given configuration.
fn failure(cfg: &Config, stage: Stage, hash: &str, why: impl Into<String>) -> Prepared {
    decided(Decision::new(
        cfg.decision.failure_mode.outcome(),
        stage,
        hash.to_owned(),
        why,
    ))
}

/// Runs the stages up to the model call.
#[expect(
    clippy::too_many_lines,
    reason = "predates the 80-line limit; split by issue 10"
)]
pub fn prepare(ctx: &Context<'_>, request: Request) -> Prepared {
    let hash = request.request_hash();
    let trusted_cfg: &Config = &ctx.trusted.config;

    // 1. Hard denies, always with the trusted view of what is protected.
    let home = request
        .home
        .clone()
        .or_else(|| ctx.paths.home.as_ref().map(|h| h.display().to_string()))
        .unwrap_or_else(|| "/root".to_owned());
    let cwd_path = request.cwd.as_deref().map(Path::new);
    let project = ctx.projects.for_project(ctx.trusted, cwd_path);
    let mut protected = ctx.paths.protected_paths(&home);
    if let Some(root) = &project.root {
        protected.push(root.join(".vouch").display().to_string());
    }
    let protected = hard_deny::Protected { paths: protected };
    let hd_ctx = hard_deny::Context {
        home: &home,
        cwd: request.cwd.as_deref(),
        protected: &protected,
    };
    let parse_note = match check_with_resolved_path(&request, &hd_ctx) {
        hard_deny::Verdict::Deny(deny) => {
            let mut d = Decision::new(Outcome::Deny, Stage::HardDeny, hash, deny.rationale);
            d.rule_id = Some(deny.rule_id.to_owned());
            d.risk_level = Some(crate::decision::RiskLevel::Critical);
            return decided(d.with_message(OverrideHint::None));
        }
        hard_deny::Verdict::Clear => None,
        hard_deny::Verdict::ParseFailed { error } => Some(format!(
            "parse_failed: the host could not fully parse this bash command ({error}); \
             judge the raw command text with extra care"
        )),
    };

    // 2. Configuration for this project: never decide on a configuration the
    // agent could have written.
    let loaded = match project.effective {
        Ok(loaded) => loaded,
        Err(e) => {
            return failure(
                trusted_cfg,
                Stage::ConfigError,
                &hash,
                format!(
                    "the project configuration was rejected, so the reviewer is disabled for this project: {e}"
                ),
            );
        }
    };
    if !ctx.allow_untrusted_dev
        && let Some(root) = &project.root
        && let Some(file) = ctx.trusted.trusted_file_inside(root)
    {
        return failure(
            trusted_cfg,
            Stage::ConfigError,
            &hash,
            format!(
                "vouch's own trusted file `{}` lies inside the project `{}`, where the agent could \
                 have rewritten it; set VOUCH_ALLOW_UNTRUSTED_DEV=1 only for local development",
                file.display(),
                root.display()
            ),
        );
    }
    let cfg = Arc::clone(&loaded.config);

    // 3. Routing. A command nobody could parse is never passed through
    // unreviewed, whatever surface carried it.
    let route = loaded.router.route(&request);
    let policy = match (route.policy, &parse_note) {
        (RoutePolicy::Pass, Some(_)) => RoutePolicy::Ai,
        (policy, _) => policy,
    };
    let routed = |outcome: Outcome, abstain: bool| {
        let mut d = Decision::new(outcome, Stage::Routing, hash.clone(), route.rationale());
        d.rule_id = Some(route.rule_id());
        d.abstain = abstain;
        decided(d.with_message(OverrideHint::None))
    };
    match policy {
        // Abstain: the harness's own permission rules decide.
        RoutePolicy::Pass => return routed(Outcome::Allow, true),
        // A person decides.
        RoutePolicy::Human => return routed(Outcome::Defer, false),
        // Configured never to run.
        RoutePolicy::Never => return routed(Outcome::Deny, false),
        // On to the reviewer.
        RoutePolicy::Ai => {}
    }
    // No reviewer model is configured (a fresh install): what the model
    // would have reviewed goes to the human. Not a failure, so not
    // `failure_mode`; hard denies above still applied.
    if cfg.reviewer.provider == Provider::None {
        let mut d = Decision::new(
            Outcome::Defer,
            Stage::Routing,
            hash,
            "no reviewer model is configured (`reviewer.provider = \"none\"`), so this action \
             needs a human decision",
        );
        d.rule_id = Some(NO_REVIEWER_RULE.to_owned());
        return decided(d.with_message(OverrideHint::None));
    }

    // 4. State, reviewer and packet. Any fault here fails closed.
    let store = match (ctx.store)() {
        Ok(store) => store,
        Err(e) => {
            tracing::warn!(error = %e, "state database unavailable; failing closed");
            let why = format!("the state database is unavailable: {e}");
            return failure(&cfg, Stage::ReviewerFailure, &hash, why);
        }
    };
    let reviewer = match (ctx.reviewer)(&cfg) {
        Ok(r) => r,
        Err(e) => {
            let why = format!("the reviewer is not usable: {e}");
            return failure(&cfg, Stage::ReviewerFailure, &hash, why);
        }
    };
    let estimator = cfg.budget.estimator;
    let packets = PacketSource {
        request: &request,
        parse_note,
        budget: &cfg.budget,
        overhead: reviewer.wire_overhead_tokens(&|s| estimator.count(s)),
    };
    let packet = match packets.build(None) {
        Ok(p) => p,
        Err(why) => return failure(&cfg, Stage::ReviewerFailure, &hash, why),
    };

    // 5. Session gate: break glass, breaker, budgets, cache, overrides.
    let key = TurnKey {
        session: &request.session_id,
        turn: request.turn(),
    };
    let gate = match session::gate(&store, ctx.clock, &cfg, key, &hash, Some(&packet.cache_key)) {
        Ok(g) => g,
        Err(e) => {
            tracing::warn!(error = %e, "session gate failed; failing closed");
            return failure(
                &cfg,
                Stage::ReviewerFailure,
                &hash,
                format!("the session state could not be read: {e}"),
            );
        }
    };
    match gate {
        // A human broke glass for this exact request: allow without the model.
        Gate::BreakGlass(pass) => {
            let why = match pass.denied_rationale {
                Some(r) => {
                    format!("a human broke glass for this exact request (denied earlier: {r})")
                }
                None => "a human broke glass for this exact request".to_owned(),
            };
            let d = Decision::new(Outcome::Allow, Stage::BreakGlass, hash.clone(), why);
            decided(with_grant(&store, ctx.clock, &cfg, &request, d))
        }
        // Too many model denials this turn.
        Gate::BreakerOpen {
            action,
            consecutive_denials,
            window_denials,
        } => decided(Decision::new(
            action.outcome(),
            Stage::Breaker,
            hash,
            format!(
                "automatic review stopped for this turn after repeated denials \
                 ({consecutive_denials} in a row, {window_denials} in the recent window)"
            ),
        )),
        // Too many reviewer failures this turn.
        Gate::FailuresExhausted { failures, action } => decided(Decision::new(
            action.outcome(),
            Stage::ReviewerFailure,
            hash,
            format!("the reviewer failed {failures} times this turn, so it was not called again"),
        )),
        // Review budget spent.
        Gate::BudgetExhausted { reviews, action } => decided(Decision::new(
            action.outcome(),
            Stage::Budget,
            hash,
            format!("the turn's review budget is spent ({reviews} model reviews)"),
        )),
        // The same packet was judged moments ago: reuse the verdict.
        Gate::Cached(v) => {
            let result = ReviewResult {
                outcome: ReviewOutcome::Verdict(from_cached(&v)),
                stats: Default::default(),
            };
            let mut d = ceiling::decide(&result, &cfg, hash);
            if d.stage == Stage::Reviewer {
                d.stage = Stage::Cache;
            }
            decided(with_grant(&store, ctx.clock, &cfg, &request, d))
        }
        // Call the model, with the human's override as trusted context.
        Gate::Review { override_pass } => {
            let packet = match override_pass.map(|pass| packets.build(Some(override_note(&pass)))) {
                None => packet,
                Some(Ok(with_override)) => with_override,
                Some(Err(why)) => return failure(&cfg, Stage::ReviewerFailure, &hash, why),
            };
            Prepared::Review(Box::new(ReviewJob {
                request,
                request_hash: hash,
                config: cfg,
                store,
                reviewer,
                packet,
            }))
        }
    }
}

/// Builds the evidence packet for one request, with or without a trusted
/// override; the error is the rationale of a fail-closed decision.
struct PacketSource<'a> {
    request: &'a Request,
    parse_note: Option<String>,
    budget: &'a crate::config::BudgetConfig,
    overhead: u64,
}

impl PacketSource<'_> {
    fn build(&self, trusted_override: Option<String>) -> Result<Packet, String> {
        let ctx = PacketContext {
            parse_note: self.parse_note.clone(),
            trusted_override,
        };
        packet::build(self.request, &ctx, self.budget, self.overhead).map_err(|e| {
            format!("the evidence packet could not be built, so the model was not called: {e}")
        })
    }
}

/// The trusted note an exact-retry override adds to the packet.
fn override_note(pass: &session::OverridePass) -> String {
    let denied = match &pass.denied_rationale {
        Some(r) => format!(" (denial rationale: {r})"),
        None => String::new(),
    };
    format!(
        "A human operator approved one exact retry of this request after it was denied{denied}. \
         Treat this as explicit user authorization for this exact action only."
    )
}

/// Runs hard denies on the request, and again with vouch's own symlink
/// resolution of `path` when it differs from what the adapter sent.
fn check_with_resolved_path(request: &Request, ctx: &hard_deny::Context<'_>) -> hard_deny::Verdict {
    let first = hard_deny::check(request, ctx);
    let resolved = request
        .path
        .as_deref()
        .and_then(|p| resolve_path(p, request.cwd.as_deref()));
    match (first, resolved) {
        (hard_deny::Verdict::Clear, Some(resolved))
            if request.resolved_path.as_deref() != Some(resolved.as_str()) =>
        {
            let mut again = request.clone();
            again.resolved_path = Some(resolved);
            hard_deny::check(&again, ctx)
        }
        (verdict, _) => verdict,
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

/// Mints the grant an `allow` carries when the request asked for one. A
/// grant that cannot be minted turns the allow into the failure outcome: a
/// broker that asked for a grant cannot act without it.
fn with_grant(
    store: &Store,
    clock: &dyn Clock,
    cfg: &Config,
    request: &Request,
    mut decision: Decision,
) -> Decision {
    match decision.decision {
        Outcome::Allow if request.issue_grant => {}
        // Only allows carry grants.
        Outcome::Allow | Outcome::Deny | Outcome::Defer => return decision,
    }
    match grants::mint(
        store,
        clock,
        &request.session_id,
        &decision.request_hash,
        cfg.grants.ttl_ms,
    ) {
        Ok(grant) => {
            decision.grant = Some(grant);
            decision
        }
        Err(e) => {
            tracing::warn!(error = %e, "grant could not be minted; failing closed");
            let mut d = Decision::new(
                cfg.decision.failure_mode.outcome(),
                Stage::ReviewerFailure,
                decision.request_hash,
                format!("the action was approved but its grant could not be stored: {e}"),
            );
            d.review = decision.review;
            d
        }
    }
}

/// Records the review and turns its result into the decision.
pub fn finish(clock: &dyn Clock, job: ReviewJob, result: ReviewResult) -> Decision {
    let cfg = &job.config;
    let request = &job.request;
    let key = TurnKey {
        session: &request.session_id,
        turn: request.turn(),
    };
    let target = redact::redact_text(
        request
            .command
            .as_deref()
            .or(request.path.as_deref())
            .or(request.destination.as_deref())
            .or(request.tool.as_deref())
            .unwrap_or(""),
    )
    .into_owned();
    let surface = request.surface.as_str().to_owned();
    let cached: Option<CachedVerdict> = match &result.outcome {
        ReviewOutcome::Verdict(v) => Some(to_cached(v)),
        ReviewOutcome::Failure(_) => None,
    };
    let event = match &cached {
        Some(verdict) => ReviewEvent::Verdict {
            verdict,
            cache_key: Some(&job.packet.cache_key),
            action: ActionSummary {
                surface: &surface,
                cwd: request.cwd.as_deref(),
                target: &target,
            },
        },
        None => ReviewEvent::Failure,
    };
    let decision = ceiling::decide(&result, cfg, job.request_hash.clone());
    if let Err(e) = session::record(&job.store, clock, cfg, key, &job.request_hash, event) {
        // The breaker and budgets must see every review; one they cannot
        // record must not allow.
        tracing::warn!(error = %e, "review could not be recorded; failing closed");
        let mut d = Decision::new(
            cfg.decision.failure_mode.outcome(),
            Stage::ReviewerFailure,
            job.request_hash,
            format!("the review could not be recorded in the session state: {e}"),
        );
        d.review = decision.review;
        return d;
    }
    with_grant(&job.store, clock, cfg, request, decision)
}

/// The verdict fields the cache keeps (already redacted by the reviewer's
/// input; rationale and suggestion are the model's own words).
fn to_cached(v: &Verdict) -> CachedVerdict {
    CachedVerdict {
        outcome: v.outcome,
        risk_level: v.risk_level,
        user_authorization: v.user_authorization,
        rationale: redact::redact_text(&v.rationale).into_owned(),
        suggestion: v
            .suggestion
            .as_deref()
            .map(|s| redact::redact_text(s).into_owned()),
    }
}

fn from_cached(v: &CachedVerdict) -> Verdict {
    Verdict {
        outcome: v.outcome,
        risk_level: v.risk_level,
        user_authorization: v.user_authorization,
        rationale: v.rationale.clone(),
        suggestion: v.suggestion.clone(),
    }
}
