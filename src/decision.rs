//! The decision vouch returns for every request (design §5), and the words it
//! says to the agent model.
//!
//! Every decision carries the stage that decided it and a rationale, so a
//! reader of the JSON (or the audit) can always tell *why*.

use serde::{Deserialize, Serialize};

/// What the harness should do.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    Allow,
    Deny,
    /// Hand the action to the human (the harness's own prompt).
    Defer,
}

impl Outcome {
    pub fn as_str(self) -> &'static str {
        match self {
            Outcome::Allow => "allow",
            Outcome::Deny => "deny",
            Outcome::Defer => "defer",
        }
    }

    /// Strictness order used by tighten-only config: allow < defer < deny.
    pub fn strictness(self) -> u8 {
        match self {
            Outcome::Allow => 0,
            Outcome::Defer => 1,
            Outcome::Deny => 2,
        }
    }
}

/// Which stage of the pipeline decided.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Stage {
    HardDeny,
    Routing,
    Breaker,
    Budget,
    Cache,
    Override,
    BreakGlass,
    Reviewer,
    RiskCeiling,
    ReviewerFailure,
    ConfigError,
}

impl Stage {
    pub fn as_str(self) -> &'static str {
        match self {
            Stage::HardDeny => "hard_deny",
            Stage::Routing => "routing",
            Stage::Breaker => "breaker",
            Stage::Budget => "budget",
            Stage::Cache => "cache",
            Stage::Override => "override",
            Stage::BreakGlass => "break_glass",
            Stage::Reviewer => "reviewer",
            Stage::RiskCeiling => "risk_ceiling",
            Stage::ReviewerFailure => "reviewer_failure",
            Stage::ConfigError => "config_error",
        }
    }
}

/// Risk taxonomy shared by the reviewer verdict and the host rules.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RiskLevel {
    Low,
    Medium,
    High,
    Critical,
}

impl RiskLevel {
    pub fn as_str(self) -> &'static str {
        match self {
            RiskLevel::Low => "low",
            RiskLevel::Medium => "medium",
            RiskLevel::High => "high",
            RiskLevel::Critical => "critical",
        }
    }
}

/// How clearly the user authorized this exact action, as judged by the model.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum UserAuthorization {
    Unknown,
    Low,
    Medium,
    High,
}

/// A one-use grant for a sandbox broker.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Grant {
    pub token: String,
    pub expires_at_ms: u64,
}

/// Cost and timing of a model-backed review.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct ReviewStats {
    pub model: String,
    pub calls: u32,
    pub input_tokens: u64,
    pub output_tokens: u64,
    pub packet_tokens_estimate: u64,
    pub duration_ms: u64,
}

/// The answer to one request.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Decision {
    pub decision: Outcome,
    pub stage: Stage,
    pub request_hash: String,
    pub risk_level: Option<RiskLevel>,
    pub user_authorization: Option<UserAuthorization>,
    pub rationale: String,
    pub message: String,
    /// Rule id for deterministic stages (`hard_deny`, `routing`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rule_id: Option<String>,
    /// `true` only for `pass` routing: vouch has no opinion and the harness's
    /// own rules decide. Adapters emit "no decision" for it.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub abstain: bool,
    /// A safer alternative the reviewer offered, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub suggestion: Option<String>,
    pub grant: Option<Grant>,
    pub review: Option<ReviewStats>,
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

impl Decision {
    /// A decision with no model involvement; `message` is filled from the
    /// outcome and stage.
    pub fn new(
        decision: Outcome,
        stage: Stage,
        request_hash: String,
        rationale: impl Into<String>,
    ) -> Self {
        let rationale = rationale.into();
        let mut d = Decision {
            decision,
            stage,
            request_hash,
            risk_level: None,
            user_authorization: None,
            message: String::new(),
            rationale,
            rule_id: None,
            abstain: false,
            suggestion: None,
            grant: None,
            review: None,
        };
        d.message = d.compose_message(OverrideHint::None);
        d
    }

    /// Rewrites `message` for the agent model; call after changing fields.
    pub fn with_message(mut self, hint: OverrideHint) -> Self {
        self.message = self.compose_message(hint);
        self
    }

    fn compose_message(&self, hint: OverrideHint) -> String {
        let rationale = self.rationale.trim();
        match (self.decision, self.stage) {
            (Outcome::Allow, Stage::Routing) if self.abstain => {
                "vouch has no opinion on this action; the harness's own permission rules decide."
                    .to_owned()
            }
            (Outcome::Allow, _) => format!("Automatic policy allowed this action: {rationale}"),
            (outcome, Stage::ReviewerFailure | Stage::ConfigError) => {
                let what = match outcome {
                    Outcome::Defer => "it was handed to a human for approval",
                    Outcome::Deny | Outcome::Allow => "the action was blocked",
                };
                format!(
                    "Automatic review could not complete, so {what}. This is a failure of the \
                     reviewer, not a judgement that the action is risky: {rationale}"
                )
            }
            (Outcome::Defer, _) => format!(
                "Automatic policy (not a human) did not approve this action and has handed it \
                 to a human for approval: {rationale}"
            ),
            (Outcome::Deny, _) => {
                let mut m = format!(
                    "Automatic policy denied this action (not a human). Do not retry it in \
                     another form or try to work around it. Reason: {rationale}"
                );
                if let Some(s) = self.suggestion.as_deref().filter(|s| !s.trim().is_empty()) {
                    m.push_str(" Safer alternative: ");
                    m.push_str(s.trim());
                }
                match hint {
                    OverrideHint::None => {}
                    OverrideHint::ExactRetry => m.push_str(
                        " If the user wants this exact action, they can approve one exact retry \
                         with `vouch approve`; then retry the identical request.",
                    ),
                    OverrideHint::BreakGlass => m.push_str(
                        " This was judged critical. Only the user can override it, with \
                         `vouch break-glass`; then retry the identical request.",
                    ),
                }
                m
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hard_deny_message_offers_no_override() {
        let d = Decision::new(Outcome::Deny, Stage::HardDeny, "h".into(), "wipe of /");
        assert!(d.message.contains("not a human"));
        assert!(d.message.contains("wipe of /"));
        assert!(!d.message.contains("vouch approve"));
        assert!(!d.message.contains("break-glass"));
    }

    #[test]
    fn model_denials_name_their_override() {
        let d = Decision::new(Outcome::Deny, Stage::Reviewer, "h".into(), "pushes to main");
        assert!(
            d.clone()
                .with_message(OverrideHint::ExactRetry)
                .message
                .contains("vouch approve")
        );
        assert!(
            d.with_message(OverrideHint::BreakGlass)
                .message
                .contains("vouch break-glass")
        );
    }

    #[test]
    fn failures_are_worded_as_failures() {
        let d = Decision::new(Outcome::Deny, Stage::ReviewerFailure, "h".into(), "timeout");
        assert!(d.message.contains("could not complete"));
        assert!(d.message.contains("blocked"));
        assert!(d.message.contains("failure of the reviewer"));
        assert!(!d.message.contains("Do not retry"));
    }

    #[test]
    fn serializes_the_documented_shape() {
        let d = Decision::new(Outcome::Deny, Stage::HardDeny, "ab".into(), "r");
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
        assert!(v.get("abstain").is_none());
    }
}
