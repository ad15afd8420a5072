//! One audit observation as the aggregate row it adds to, and the fixed
//! vocabulary of results and resolutions, with what each says about user
//! friction.
//!
//! Every string stored in `result`, `resolution` and `source` comes from the
//! tables here (or is a validated short name), never from raw input, so an
//! event cannot smuggle text into the database through them.

use crate::decision::{Outcome, Stage};

use super::subject::Subject;

/// What happened, as stored in `result`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ResultKind {
    Allow,
    Deny,
    /// vouch handed the action to a human.
    Defer,
    /// vouch had no opinion (routing `pass`, or no model): the harness's own
    /// rules decided.
    Abstain,
}

impl ResultKind {
    pub fn as_str(self) -> &'static str {
        match self {
            ResultKind::Allow => "allow",
            ResultKind::Deny => "deny",
            ResultKind::Defer => "defer",
            ResultKind::Abstain => "abstain",
        }
    }

    pub fn parse(s: &str) -> Option<ResultKind> {
        Some(match s {
            "allow" => ResultKind::Allow,
            "deny" => ResultKind::Deny,
            "defer" => ResultKind::Defer,
            "abstain" => ResultKind::Abstain,
            _ => return None,
        })
    }

    pub const ALL: [ResultKind; 4] = [
        ResultKind::Allow,
        ResultKind::Deny,
        ResultKind::Defer,
        ResultKind::Abstain,
    ];

    /// The result of one of vouch's decisions.
    pub fn of_decision(outcome: Outcome, abstain: bool) -> ResultKind {
        match (outcome, abstain) {
            (Outcome::Allow, true) => ResultKind::Abstain,
            (Outcome::Allow, false) => ResultKind::Allow,
            (Outcome::Deny, _) => ResultKind::Deny,
            (Outcome::Defer, _) => ResultKind::Defer,
        }
    }
}

/// What a resolution says about the human's friction.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Friction {
    /// A human approved on the ask path: evidence for a rule.
    Approved,
    /// Refused, failed or could not be confirmed: blocks any rule.
    Blocks,
    /// Says nothing either way (policy allows, vouch's own decisions, …).
    Neutral,
}

/// How an outcome was reached, as stored in `resolution`. pi-permission-system
/// names are kept as they are; vouch's own decisions are `vouch_<stage>`.
pub const RESOLUTIONS: &[(&str, Friction)] = &[
    // pi-permission-system `permissions:decision` (and the Claude Code /
    // Codex / Gemini / Cursor after-events, which report `user_approved`).
    ("policy_allow", Friction::Neutral),
    ("policy_deny", Friction::Blocks),
    ("session_approved", Friction::Neutral),
    ("infrastructure_auto_allowed", Friction::Neutral),
    ("user_approved", Friction::Approved),
    ("user_approved_for_session", Friction::Approved),
    ("user_denied", Friction::Blocks),
    ("auto_approved", Friction::Neutral),
    ("confirmation_unavailable", Friction::Blocks),
    ("authorizer_allowed", Friction::Neutral),
    ("authorizer_denied", Friction::Blocks),
    ("gate_error", Friction::Blocks),
    // A call vouch denied ran anyway (the harness failed open).
    ("ran_after_deny", Friction::Blocks),
    // A call ran whose arguments match no decision of vouch's in its
    // session: changed after the check (a later hook or plugin), or no
    // vouch hook ran. Only where the after-event carries what ran.
    ("ran_unreviewed", Friction::Blocks),
    // A resolution this version does not know.
    ("other", Friction::Neutral),
    // vouch's own final decisions, by stage.
    ("vouch_hard_deny", Friction::Neutral),
    ("vouch_inert", Friction::Neutral),
    ("vouch_routing", Friction::Neutral),
    ("vouch_breaker", Friction::Neutral),
    ("vouch_budget", Friction::Neutral),
    ("vouch_cache", Friction::Neutral),
    ("vouch_override", Friction::Neutral),
    ("vouch_break_glass", Friction::Neutral),
    ("vouch_reviewer", Friction::Neutral),
    ("vouch_risk_ceiling", Friction::Neutral),
    ("vouch_reviewer_failure", Friction::Neutral),
    ("vouch_config_error", Friction::Neutral),
];

/// A resolution from the fixed vocabulary; anything else is `other`.
pub fn resolution(name: &str) -> &'static str {
    RESOLUTIONS
        .iter()
        .find(|(known, _)| *known == name)
        .map_or("other", |(known, _)| known)
}

/// The resolution of one of vouch's decisions.
pub fn vouch_resolution(stage: Stage) -> &'static str {
    match stage {
        Stage::HardDeny => "vouch_hard_deny",
        Stage::Inert => "vouch_inert",
        Stage::Routing => "vouch_routing",
        Stage::Breaker => "vouch_breaker",
        Stage::Budget => "vouch_budget",
        Stage::Cache => "vouch_cache",
        Stage::Override => "vouch_override",
        Stage::BreakGlass => "vouch_break_glass",
        Stage::Reviewer => "vouch_reviewer",
        Stage::RiskCeiling => "vouch_risk_ceiling",
        Stage::ReviewerFailure => "vouch_reviewer_failure",
        Stage::ConfigError => "vouch_config_error",
    }
}

fn friction_of(resolution: &str) -> Friction {
    RESOLUTIONS
        .iter()
        .find(|(known, _)| *known == resolution)
        .map_or(Friction::Neutral, |(_, friction)| *friction)
}

/// What one stored row counts as when suggesting rules.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Evidence {
    /// A direct human approval on the ask path, recorded since schema v2.
    Approval,
    /// A human approval of a subagent's forwarded ask: statistics only,
    /// since the requester's working directory is not known.
    ForwardedApproval,
    /// A human approval recorded before schema v2: statistics only.
    LegacyApproval,
    /// A denial, gate error or unavailable confirmation: no rule.
    Blocking,
    /// No evidence either way.
    Neutral,
}

/// The evidence of a stored row. An unknown `result` (a newer writer)
/// blocks: nothing unrecognised may help a rule along.
pub fn evidence(result: &str, resolution: &str, forwarded: bool, generation: i64) -> Evidence {
    let Some(result) = ResultKind::parse(result) else {
        return Evidence::Blocking;
    };
    match (result, friction_of(resolution)) {
        (ResultKind::Deny, _) | (_, Friction::Blocks) => Evidence::Blocking,
        (ResultKind::Allow, Friction::Approved) if forwarded => Evidence::ForwardedApproval,
        (ResultKind::Allow, Friction::Approved) if generation < CURRENT_GENERATION => {
            Evidence::LegacyApproval
        }
        (ResultKind::Allow, Friction::Approved) => Evidence::Approval,
        // An approval word on anything but an allow proves nothing.
        (ResultKind::Defer | ResultKind::Abstain, Friction::Approved)
        | (ResultKind::Allow | ResultKind::Defer | ResultKind::Abstain, Friction::Neutral) => {
            Evidence::Neutral
        }
    }
}

/// Rows written by this version.
pub const CURRENT_GENERATION: i64 = 2;

/// The harness that reported an observation: a known name, another short
/// lowercase name, or `unknown`.
pub fn source(name: Option<&str>) -> String {
    match name {
        Some(name)
            if (1..=32).contains(&name.len())
                && name.starts_with(|c: char| c.is_ascii_lowercase())
                && name
                    .bytes()
                    .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-') =>
        {
            name.to_owned()
        }
        Some(_) | None => "unknown".to_owned(),
    }
}

/// One observation, ready to be counted. Holds only safe values: the
/// subject, vocabulary strings and keyed hashes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Row {
    /// Days since 1970-01-01 (UTC).
    pub day: i64,
    /// HMAC of the project root, or `None` when no directory was named.
    pub scope: Option<String>,
    pub surface: String,
    pub subject: Subject,
    pub source: String,
    pub result: ResultKind,
    pub resolution: &'static str,
    pub origin: Option<String>,
    pub pattern: Option<String>,
    pub forwarded: bool,
}

/// Milliseconds since the epoch → days since the epoch (UTC).
pub fn day_of(ms: u64) -> i64 {
    i64::try_from(ms / 86_400_000).unwrap_or(i64::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn friction_classes() {
        assert_eq!(
            evidence("allow", "user_approved", false, 2),
            Evidence::Approval
        );
        assert_eq!(
            evidence("allow", "user_approved_for_session", false, 2),
            Evidence::Approval
        );
        assert_eq!(
            evidence("allow", "user_approved", true, 2),
            Evidence::ForwardedApproval
        );
        assert_eq!(
            evidence("allow", "user_approved", false, 1),
            Evidence::LegacyApproval
        );
        assert_eq!(
            evidence("allow", "policy_allow", false, 2),
            Evidence::Neutral
        );
        assert_eq!(
            evidence("allow", "vouch_reviewer", false, 2),
            Evidence::Neutral
        );
        assert_eq!(
            evidence("deny", "vouch_hard_deny", false, 2),
            Evidence::Blocking
        );
        assert_eq!(
            evidence("allow", "gate_error", false, 2),
            Evidence::Blocking
        );
        assert_eq!(
            evidence("deny", "confirmation_unavailable", false, 2),
            Evidence::Blocking
        );
        assert_eq!(
            evidence("defer", "user_approved", false, 2),
            Evidence::Neutral
        );
        assert_eq!(
            evidence("maybe", "user_approved", false, 2),
            Evidence::Blocking
        );
    }

    #[test]
    fn vocabulary_is_closed() {
        assert_eq!(resolution("user_approved"), "user_approved");
        assert_eq!(resolution("sk-live-123"), "other");
        for stage in [Stage::HardDeny, Stage::Reviewer, Stage::ConfigError] {
            assert_eq!(resolution(vouch_resolution(stage)), vouch_resolution(stage));
        }
        assert_eq!(source(Some("claude-code")), "claude-code");
        assert_eq!(source(Some("Bad Name")), "unknown");
        assert_eq!(source(None), "unknown");
    }
}
