//! The decision vouch returns for every request (design §5), and the words it
//! says to the agent model.
//!
//! Every decision carries the stage that decided it and a rationale, so a
//! reader of the JSON (or the audit) can always tell *why*. A [`Decision`]
//! is made only by its per-stage constructors, which fix what each stage may
//! answer (a breaker or a failure can never allow, a hard deny is always
//! critical, only an allow carries a grant); its fields are private, and
//! `message` is derived from the rest once, at construction, so it can never
//! disagree with them.

pub mod ceiling;

use serde::Serialize;

use crate::config::FailClosed;
use crate::names::named_enum;
pub use crate::names::{Outcome, RiskLevel};
pub use crate::reviewer::verdict::UserAuthorization;
pub use crate::reviewer::{ReviewStats, Verdict};

named_enum! {
    /// Which stage of the pipeline decided.
    pub enum Stage {
        HardDeny = "hard_deny",
        /// The command provably only reads (design §6.1b).
        Inert = "inert",
        Routing = "routing",
        Breaker = "breaker",
        Budget = "budget",
        Cache = "cache",
        /// The reviewer allowed an exact retry that a human approved.
        Override = "override",
        BreakGlass = "break_glass",
        Reviewer = "reviewer",
        RiskCeiling = "risk_ceiling",
        ReviewerFailure = "reviewer_failure",
        ConfigError = "config_error",
    }
}

named_enum! {
    /// Why vouch could not decide: the machine-readable kind every decision
    /// that comes from a fault carries (`fault` in the decision JSON, and
    /// [`Fault::tag`] at the start of the message a harness shows), so a
    /// user or a script can tell "vouch could not decide" from "vouch
    /// decided no". A decision on the action itself (a hard deny, a rule, a
    /// verdict, a ceiling) has none.
    pub enum Fault {
        /// The reviewer could not be reached or refused the call
        /// (connection, 5xx, 429, quota, auth, other HTTP errors).
        ReviewerDown = "reviewer_down",
        /// The review deadline passed.
        ReviewerTimeout = "reviewer_timeout",
        /// The reviewer answered, but not with a usable verdict (empty,
        /// invalid, truncated, refused, too large).
        ReviewerBadReply = "reviewer_bad_reply",
        /// The reviewer could not be built (a missing API key, a bad URL).
        ReviewerUnusable = "reviewer_unusable",
        /// `turn.max_failures` reviewer failures this turn: not called again.
        FailureBudgetSpent = "failure_budget_spent",
        /// The state database could not be opened, read or written.
        StateUnavailable = "state_unavailable",
        /// The turn's circuit breaker is open after repeated denials.
        BreakerOpen = "breaker_open",
        /// The turn's review budget (`turn.max_reviews`) is spent.
        BudgetSpent = "budget_spent",
        /// The configuration could not be used or trusted.
        ConfigError = "config_error",
        /// The evidence packet or the grant token could not be made.
        EvidenceUnavailable = "evidence_unavailable",
        /// The hook's input could not be read or understood.
        HookInput = "hook_input",
        /// The harness's hook timeout, or the service's request timeout, ran
        /// out before a decision.
        Deadline = "deadline",
        /// The service is rate limiting this caller: not reviewed.
        RateLimited = "rate_limited",
        /// vouch itself failed (a task died).
        Internal = "internal",
        /// vouch could not be reached, or answered something unreadable:
        /// said by a client (the Pi and sandbox-runtime clients, the
        /// OpenCode plugin), never by vouch itself.
        Unreachable = "unreachable",
    }
}

impl Fault {
    /// The kind as it starts a fault's message: `[vouch fault: breaker_open]`.
    /// Every harness's reply schema has a reason string, and some reject any
    /// field they do not know (Codex runs the tool on one), so the kind
    /// travels in the text; `fault` in the decision JSON says the same.
    pub fn tag(self) -> String {
        format!("[vouch fault: {}]", self.as_str())
    }

    /// The kind of a reviewer failure.
    pub fn of_failure(class: crate::reviewer::FailureClass) -> Fault {
        use crate::reviewer::FailureClass as C;
        match class {
            C::Timeout => Fault::ReviewerTimeout,
            C::Connect
            | C::Http5xx
            | C::RateLimited
            | C::RetryAfterTooLong
            | C::Quota
            | C::Auth
            | C::ClientError(_)
            | C::UnexpectedStatus(_)
            | C::Transport => Fault::ReviewerDown,
            C::EmptyOutput
            | C::InvalidJson
            | C::SchemaInvalid
            | C::Truncated
            | C::Refusal
            | C::MalformedResponse
            | C::ResponseTooLarge => Fault::ReviewerBadReply,
            C::PacketTooLarge => Fault::EvidenceUnavailable,
        }
    }
}

/// A one-use grant for a sandbox broker.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Grant {
    pub token: String,
    pub expires_at_ms: u64,
}

/// What the agent may be told about overriding a denial.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OverrideHint {
    /// Deterministic policy: no human override exists.
    None,
    /// A non-critical model denial: a human may approve an exact retry.
    ExactRetry,
    /// A critical model denial: only break glass applies.
    BreakGlass,
}

/// What routing decided without the model.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Routed {
    /// `pass`, or no reviewer model with `reviewer.without_model = "abstain"`:
    /// no opinion; the harness's own rules decide.
    Abstain,
    /// `human`: defer to the person.
    Human,
    /// `never`: deny without a model call.
    Never,
}

/// Where a verdict came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum VerdictSource {
    /// The model, just now.
    Model,
    /// The model, with a human's exact-retry approval as trusted context.
    ModelWithOverride,
    /// The verdict cache (the same packet was judged within `cache.ttl_ms`).
    Cache,
}

/// A verdict after the host rules ([`ceiling::apply`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Judged<'a> {
    pub verdict: &'a Verdict,
    pub outcome: Outcome,
    /// A ceiling changed what the verdict asked for.
    pub ceiling: bool,
    pub rationale: String,
}

/// The answer to one request.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Decision {
    decision: Outcome,
    stage: Stage,
    request_hash: String,
    risk_level: Option<RiskLevel>,
    user_authorization: Option<UserAuthorization>,
    rationale: String,
    message: String,
    /// Rule id for deterministic stages (`hard_deny`, `routing`).
    #[serde(skip_serializing_if = "Option::is_none")]
    rule_id: Option<String>,
    /// `true` only for a routing abstain (`pass`, or no reviewer model with
    /// `reviewer.without_model = "abstain"`): vouch has no opinion and the
    /// harness's own rules decide. Adapters emit "no decision" for it.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    abstain: bool,
    /// Set when the decision comes from a fault, not a judgement of the
    /// action ([`Fault`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    fault: Option<Fault>,
    /// A safer alternative the reviewer offered, if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    suggestion: Option<String>,
    grant: Option<Grant>,
    review: Option<ReviewStats>,
    /// An inert allow's confined form (docs/confine.md): what the caller
    /// runs in place of the command. Only an inert allow carries one, and
    /// an inert allow always does.
    #[serde(skip_serializing_if = "Option::is_none")]
    confined: Option<Box<crate::confine::Confined>>,
}

/// The fields a constructor sets; everything else starts empty.
struct Parts {
    outcome: Outcome,
    stage: Stage,
    request_hash: String,
    rationale: String,
}

impl Decision {
    fn build(p: Parts, fill: impl FnOnce(&mut Decision), hint: OverrideHint) -> Decision {
        let mut d = Decision {
            decision: p.outcome,
            stage: p.stage,
            request_hash: p.request_hash,
            risk_level: None,
            user_authorization: None,
            rationale: p.rationale.trim().to_owned(),
            message: String::new(),
            rule_id: None,
            abstain: false,
            fault: None,
            suggestion: None,
            grant: None,
            review: None,
            confined: None,
        };
        fill(&mut d);
        // INVARIANT: only an allow carries a grant.
        if d.decision != Outcome::Allow {
            d.grant = None;
        }
        d.message = d.compose_message(hint);
        d
    }

    /// A deterministic hard deny: critical, never overridable.
    pub fn hard_deny(hash: String, rule: crate::rules::HardRule, rationale: String) -> Decision {
        let parts = Parts {
            outcome: Outcome::Deny,
            stage: Stage::HardDeny,
            request_hash: hash,
            rationale,
        };
        let fill = |d: &mut Decision| {
            d.rule_id = Some(rule.as_str().to_owned());
            d.risk_level = Some(RiskLevel::Critical);
        };
        Decision::build(parts, fill, OverrideHint::None)
    }

    /// Every unit of the command provably only reads: allowed without a
    /// model, one reason per unit in the rationale, to run as `confined`
    /// says (the prediction is a filter; the confinement enforces it).
    pub fn inert(hash: String, units: &[String], confined: crate::confine::Confined) -> Decision {
        let parts = Parts {
            outcome: Outcome::Allow,
            stage: Stage::Inert,
            request_hash: hash,
            rationale: format!("every command only reads: {}", units.join("; ")),
        };
        let fill = |d: &mut Decision| {
            d.rule_id = Some(crate::policy::inert::RULE_ID.to_owned());
            d.risk_level = Some(RiskLevel::Low);
            d.confined = Some(Box::new(confined));
        };
        Decision::build(parts, fill, OverrideHint::None)
    }

    /// Routing decided without the model.
    pub fn routed(routed: Routed, hash: String, rule_id: String, rationale: String) -> Decision {
        let outcome = match routed {
            Routed::Abstain => Outcome::Allow,
            Routed::Human => Outcome::Defer,
            Routed::Never => Outcome::Deny,
        };
        let parts = Parts {
            outcome,
            stage: Stage::Routing,
            request_hash: hash,
            rationale,
        };
        let fill = |d: &mut Decision| {
            d.rule_id = Some(rule_id);
            d.abstain = routed == Routed::Abstain;
        };
        Decision::build(parts, fill, OverrideHint::None)
    }

    /// A decision that comes from a fault: no judgement of the action.
    fn faulted(
        action: FailClosed,
        stage: Stage,
        fault: Fault,
        hash: String,
        rationale: String,
    ) -> Decision {
        let parts = Parts {
            outcome: action.outcome(),
            stage,
            request_hash: hash,
            rationale,
        };
        Decision::build(parts, |d| d.fault = Some(fault), OverrideHint::None)
    }

    /// The configuration for this request cannot be trusted or used.
    pub fn config_error(action: FailClosed, hash: String, rationale: String) -> Decision {
        let stage = Stage::ConfigError;
        Decision::faulted(action, stage, Fault::ConfigError, hash, rationale)
    }

    /// The turn's circuit breaker is open.
    pub fn breaker(action: FailClosed, hash: String, rationale: String) -> Decision {
        Decision::faulted(action, Stage::Breaker, Fault::BreakerOpen, hash, rationale)
    }

    /// The turn's review budget is spent.
    pub fn budget(action: FailClosed, hash: String, rationale: String) -> Decision {
        Decision::faulted(action, Stage::Budget, Fault::BudgetSpent, hash, rationale)
    }

    /// The review could not complete (or could not start) because of
    /// `fault`; `review` is the cost of the calls made, if any.
    pub fn reviewer_failure(
        action: FailClosed,
        fault: Fault,
        hash: String,
        rationale: String,
        review: Option<ReviewStats>,
    ) -> Decision {
        let parts = Parts {
            outcome: action.outcome(),
            stage: Stage::ReviewerFailure,
            request_hash: hash,
            rationale,
        };
        let fill = |d: &mut Decision| {
            d.review = review;
            d.fault = Some(fault);
        };
        Decision::build(parts, fill, OverrideHint::None)
    }

    /// A human broke glass for this exact request: allow without the model.
    pub fn break_glass(hash: String, rationale: String, grant: Option<Grant>) -> Decision {
        let parts = Parts {
            outcome: Outcome::Allow,
            stage: Stage::BreakGlass,
            request_hash: hash,
            rationale,
        };
        Decision::build(parts, |d| d.grant = grant, OverrideHint::None)
    }

    /// A verdict after the host rules. The stage says where it came from
    /// (`reviewer`, `cache`, `override` for an allowed approved retry) unless
    /// a ceiling changed it (`risk_ceiling`). Model denials name their
    /// override: an exact retry, or break glass for critical ones when it is
    /// enabled.
    pub fn verdict(
        judged: &Judged<'_>,
        source: VerdictSource,
        hash: String,
        extras: VerdictExtras,
    ) -> Decision {
        let v = judged.verdict;
        let stage = match (judged.ceiling, source, judged.outcome) {
            (true, _, _) => Stage::RiskCeiling,
            (false, VerdictSource::Cache, _) => Stage::Cache,
            (false, VerdictSource::ModelWithOverride, Outcome::Allow) => Stage::Override,
            (false, VerdictSource::Model | VerdictSource::ModelWithOverride, _) => Stage::Reviewer,
        };
        let hint = match (judged.outcome, v.risk_level) {
            (Outcome::Deny, RiskLevel::Critical) if extras.break_glass_enabled => {
                OverrideHint::BreakGlass
            }
            // Break glass is off: a critical denial has no override.
            (Outcome::Deny, RiskLevel::Critical) => OverrideHint::None,
            (Outcome::Deny, RiskLevel::Low | RiskLevel::Medium | RiskLevel::High) => {
                OverrideHint::ExactRetry
            }
            // Only denials carry an override hint.
            (Outcome::Allow | Outcome::Defer, _) => OverrideHint::None,
        };
        let parts = Parts {
            outcome: judged.outcome,
            stage,
            request_hash: hash,
            rationale: judged.rationale.clone(),
        };
        let fill = |d: &mut Decision| {
            d.risk_level = Some(v.risk_level);
            d.user_authorization = Some(v.user_authorization);
            d.suggestion = v
                .suggestion
                .as_deref()
                .map(str::trim)
                .filter(|s| !s.is_empty())
                .map(str::to_owned);
            d.review = extras.review;
            d.grant = extras.grant;
        };
        Decision::build(parts, fill, hint)
    }

    pub fn outcome(&self) -> Outcome {
        self.decision
    }

    pub fn stage(&self) -> Stage {
        self.stage
    }

    pub fn request_hash(&self) -> &str {
        &self.request_hash
    }

    pub fn risk_level(&self) -> Option<RiskLevel> {
        self.risk_level
    }

    pub fn user_authorization(&self) -> Option<UserAuthorization> {
        self.user_authorization
    }

    pub fn rationale(&self) -> &str {
        &self.rationale
    }

    /// The words for the agent model, derived from the other fields.
    pub fn message(&self) -> &str {
        &self.message
    }

    pub fn rule_id(&self) -> Option<&str> {
        self.rule_id.as_deref()
    }

    pub fn abstain(&self) -> bool {
        self.abstain
    }

    pub fn suggestion(&self) -> Option<&str> {
        self.suggestion.as_deref()
    }

    pub fn confined(&self) -> Option<&crate::confine::Confined> {
        self.confined.as_deref()
    }

    pub fn grant(&self) -> Option<&Grant> {
        self.grant.as_ref()
    }

    pub fn review(&self) -> Option<&ReviewStats> {
        self.review.as_ref()
    }

    /// Why vouch could not decide, when the decision comes from a fault.
    pub fn fault(&self) -> Option<Fault> {
        self.fault
    }

    fn compose_message(&self, hint: OverrideHint) -> String {
        let message = self.judgement_message(hint);
        match self.fault {
            Some(fault) => format!("{} {message}", fault.tag()),
            None => message,
        }
    }

    fn judgement_message(&self, hint: OverrideHint) -> String {
        let rationale = self.rationale.as_str();
        let what = |outcome: Outcome| match outcome {
            Outcome::Defer => "it was handed to a human for approval",
            Outcome::Deny | Outcome::Allow => "the action was blocked",
        };
        match (self.decision, self.stage) {
            (Outcome::Allow, Stage::Routing) if self.abstain => {
                "vouch has no opinion on this action; the harness's own permission rules decide."
                    .to_owned()
            }
            (Outcome::Allow, _) => format!("Automatic policy allowed this action: {rationale}"),
            (outcome, Stage::ReviewerFailure | Stage::ConfigError) => format!(
                "Automatic review could not complete, so {}. This is a failure of the reviewer, \
                 not a judgement that the action is risky: {rationale}",
                what(outcome)
            ),
            (outcome, Stage::Breaker | Stage::Budget) => format!(
                "Automatic review is stopped for this turn, so {}. This action itself was not \
                 judged: {rationale}",
                what(outcome)
            ),
            (Outcome::Defer, _) => format!(
                "Automatic policy (not a human) did not approve this action and has handed it \
                 to a human for approval: {rationale}"
            ),
            (Outcome::Deny, _) => self.denial_message(hint),
        }
    }

    fn denial_message(&self, hint: OverrideHint) -> String {
        let mut m = format!(
            "Automatic policy denied this action (not a human). Do not retry it in another form \
             or try to work around it. Reason: {}",
            self.rationale
        );
        if let Some(s) = self.suggestion.as_deref() {
            m.push_str(" Safer alternative: ");
            m.push_str(s);
        }
        match hint {
            OverrideHint::None => {}
            OverrideHint::ExactRetry => m.push_str(
                " If the user wants this exact action, they can approve one exact retry with \
                 `vouch approve`; then retry the identical request.",
            ),
            OverrideHint::BreakGlass => m.push_str(
                " This was judged critical. Only the user can override it, with \
                 `vouch break-glass`; then retry the identical request.",
            ),
        }
        m
    }
}

/// What a verdict decision carries besides the verdict.
#[derive(Debug, Clone, Default)]
pub struct VerdictExtras {
    /// Cost of the model call; `None` for a cache hit.
    pub review: Option<ReviewStats>,
    /// Kept only if the judged outcome is an allow.
    pub grant: Option<Grant>,
    /// Whether a critical denial may offer break glass.
    pub break_glass_enabled: bool,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::{HardRule, StageRule};

    fn verdict(outcome: Outcome, risk: RiskLevel) -> Verdict {
        Verdict {
            outcome,
            risk_level: risk,
            user_authorization: UserAuthorization::Unknown,
            rationale: "pushes to main".into(),
            suggestion: Some(" open a pull request ".into()),
        }
    }

    fn judged(v: &Verdict, ceiling: bool) -> Judged<'_> {
        Judged {
            verdict: v,
            outcome: v.outcome,
            ceiling,
            rationale: v.rationale.clone(),
        }
    }

    fn extras(break_glass_enabled: bool) -> VerdictExtras {
        VerdictExtras {
            break_glass_enabled,
            ..VerdictExtras::default()
        }
    }

    #[test]
    fn hard_deny_message_offers_no_override() {
        let d = Decision::hard_deny(
            "h".into(),
            HardRule::WipeRmRecursiveForce,
            "wipe of /".into(),
        );
        assert_eq!((d.outcome(), d.stage()), (Outcome::Deny, Stage::HardDeny));
        assert_eq!(d.risk_level(), Some(RiskLevel::Critical));
        assert!(d.message().contains("not a human"));
        assert!(d.message().contains("wipe of /"));
        assert!(!d.message().contains("vouch approve"));
        assert!(!d.message().contains("break-glass"));
    }

    #[test]
    fn model_denials_name_their_override() {
        let v = verdict(Outcome::Deny, RiskLevel::High);
        let d = Decision::verdict(
            &judged(&v, false),
            VerdictSource::Model,
            "h".into(),
            extras(true),
        );
        assert!(d.message().contains("vouch approve"));
        assert!(
            d.message()
                .contains("Safer alternative: open a pull request")
        );
        assert_eq!(d.suggestion(), Some("open a pull request"));
        let v = verdict(Outcome::Deny, RiskLevel::Critical);
        let d = Decision::verdict(
            &judged(&v, false),
            VerdictSource::Model,
            "h".into(),
            extras(true),
        );
        assert!(d.message().contains("vouch break-glass"));
        let d = Decision::verdict(
            &judged(&v, false),
            VerdictSource::Model,
            "h".into(),
            extras(false),
        );
        assert!(!d.message().contains("break-glass"));
        assert!(!d.message().contains("vouch approve"));
    }

    #[test]
    fn verdict_stages_follow_source_and_ceiling() {
        let allow = verdict(Outcome::Allow, RiskLevel::Low);
        let deny = verdict(Outcome::Deny, RiskLevel::Low);
        let cases = [
            (&allow, false, VerdictSource::Model, Stage::Reviewer),
            (&allow, false, VerdictSource::Cache, Stage::Cache),
            (
                &allow,
                false,
                VerdictSource::ModelWithOverride,
                Stage::Override,
            ),
            (
                &deny,
                false,
                VerdictSource::ModelWithOverride,
                Stage::Reviewer,
            ),
            (
                &allow,
                true,
                VerdictSource::ModelWithOverride,
                Stage::RiskCeiling,
            ),
            (&deny, true, VerdictSource::Cache, Stage::RiskCeiling),
        ];
        for (v, ceiling, source, stage) in cases {
            let d = Decision::verdict(&judged(v, ceiling), source, "h".into(), extras(true));
            assert_eq!(d.stage(), stage, "{source:?} ceiling={ceiling}");
        }
    }

    #[test]
    fn only_allows_carry_grants() {
        let grant = Grant {
            token: "t".into(),
            expires_at_ms: 1,
        };
        for (outcome, kept) in [
            (Outcome::Allow, true),
            (Outcome::Deny, false),
            (Outcome::Defer, false),
        ] {
            let v = verdict(outcome, RiskLevel::Low);
            let mut e = extras(true);
            e.grant = Some(grant.clone());
            let d = Decision::verdict(&judged(&v, false), VerdictSource::Model, "h".into(), e);
            assert_eq!(d.grant().is_some(), kept, "{outcome:?}");
        }
    }

    #[test]
    fn failures_are_worded_as_failures() {
        let fault = Fault::ReviewerTimeout;
        let d = Decision::reviewer_failure(FailClosed::Deny, fault, "h".into(), "t".into(), None);
        assert!(d.message().contains("could not complete"));
        assert!(d.message().contains("blocked"));
        assert!(d.message().contains("failure of the reviewer"));
        assert!(!d.message().contains("Do not retry"));
        let d = Decision::config_error(FailClosed::Defer, "h".into(), "bad overlay".into());
        assert!(d.message().contains("handed to a human"));
    }

    #[test]
    fn faults_carry_their_kind_and_judgements_none() {
        let fault = Fault::ReviewerDown;
        let d = Decision::reviewer_failure(FailClosed::Defer, fault, "h".into(), "c".into(), None);
        assert_eq!(d.fault(), Some(Fault::ReviewerDown));
        assert!(
            d.message().starts_with("[vouch fault: reviewer_down] "),
            "{}",
            d.message()
        );
        let json = serde_json::to_value(&d).unwrap_or_default();
        assert_eq!(json["fault"], "reviewer_down");
        let d = Decision::breaker(FailClosed::Deny, "h".into(), "open".into());
        assert!(d.message().starts_with("[vouch fault: breaker_open] "));
        assert!(d.message().contains("not judged"));
        assert!(!d.message().contains("Do not retry"));
        let d = Decision::budget(FailClosed::Defer, "h".into(), "spent".into());
        assert_eq!(d.fault(), Some(Fault::BudgetSpent));
        let d = Decision::hard_deny("h".into(), HardRule::WipeRmRecursiveForce, "wipe".into());
        assert_eq!(d.fault(), None);
        assert!(!d.message().contains("[vouch fault"));
        let json = serde_json::to_value(&d).unwrap_or_default();
        assert!(json.get("fault").is_none());
        let v = verdict(Outcome::Deny, RiskLevel::High);
        let d = Decision::verdict(
            &judged(&v, false),
            VerdictSource::Model,
            "h".into(),
            extras(true),
        );
        assert_eq!(d.fault(), None);
    }

    #[test]
    fn routing_abstains_only_for_pass() {
        let d = Decision::routed(
            Routed::Abstain,
            "h".into(),
            StageRule::RoutingDefault.as_str().into(),
            "pass".into(),
        );
        assert_eq!((d.outcome(), d.abstain()), (Outcome::Allow, true));
        assert!(d.message().contains("no opinion"));
        let d = Decision::routed(
            Routed::Never,
            "h".into(),
            StageRule::RoutingRule.with("1"),
            "no".into(),
        );
        assert_eq!((d.outcome(), d.abstain()), (Outcome::Deny, false));
        assert_eq!(d.rule_id(), Some(StageRule::RoutingRule.with("1").as_str()));
    }

    #[test]
    fn serializes_the_documented_shape() {
        let d = Decision::hard_deny("ab".into(), HardRule::ForkBombRecursiveFunction, "r".into());
        let v = serde_json::to_value(&d).unwrap();
        for key in [
            "decision",
            "stage",
            "request_hash",
            "risk_level",
            "user_authorization",
            "rationale",
            "message",
            "grant",
            "review",
        ] {
            assert!(v.get(key).is_some(), "missing {key}");
        }
        assert_eq!(v["stage"], "hard_deny");
        assert_eq!(v["rule_id"], HardRule::ForkBombRecursiveFunction.as_str());
        assert!(v.get("abstain").is_none());
    }
}
