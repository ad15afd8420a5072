//! Risk ceilings: the host's rules over the reviewer's verdict (design §6.5),
//! and the turning of a finished review into a [`Decision`].
//!
//! The model proposes; the host disposes. A verdict is only advice until these
//! rules pass it: `critical` is never auto-allowed, a `high` allow needs the
//! user's authorization at `medium` or above, and any allow above
//! `decision.max_auto_allow_risk` becomes `decision.on_risk_exceeded`. A
//! `defer` verdict becomes `decision.on_uncertain`. A trusted user may set
//! either action to `allow`; that is respected, except that an allow reached
//! that way is still held to the ceiling and a critical risk never allows.
//! A review that produced no verdict is a failure and ends in
//! `decision.failure_mode`, which cannot be `allow`.

use crate::config::{Config, DecisionConfig};
use crate::decision::{
    Decision, Grant, Judged, Outcome, ReviewStats, RiskLevel, Stage, UserAuthorization,
    VerdictExtras, VerdictSource,
};
use crate::reviewer::{ReviewOutcome, ReviewResult, Verdict};

/// Applies the host rules to a verdict. Returns the outcome, the stage that
/// decided it (`reviewer` when the verdict stands as configured,
/// `risk_ceiling` when a ceiling changed it) and the rationale.
pub fn apply(verdict: &Verdict, cfg: &DecisionConfig) -> (Outcome, Stage, String) {
    let rationale = verdict.rationale.trim().to_owned();
    // What the verdict asks for once the configured actions are applied.
    let proposed = match verdict.outcome {
        // The model's own allow, still subject to the ceiling below.
        Outcome::Allow => Outcome::Allow,
        // A denial always stands.
        Outcome::Deny => Outcome::Deny,
        // Uncertain: the user's configured action, ceiling-checked if allow.
        Outcome::Defer => cfg.on_uncertain,
    };
    match proposed {
        // Stricter than any ceiling: nothing to check.
        Outcome::Deny => (Outcome::Deny, Stage::Reviewer, rationale),
        // Hands the action to a human: nothing to check.
        Outcome::Defer => (Outcome::Defer, Stage::Reviewer, rationale),
        // Only an allow meets the ceiling.
        Outcome::Allow => match exceeded(verdict, cfg) {
            None => (Outcome::Allow, Stage::Reviewer, rationale),
            Some(why) => {
                let outcome = match cfg.on_risk_exceeded {
                    // A trusted user chose to allow over the ceiling, but a
                    // critical action still goes to a human at least.
                    Outcome::Allow => match verdict.risk_level {
                        RiskLevel::Critical => Outcome::Defer,
                        RiskLevel::Low | RiskLevel::Medium | RiskLevel::High => Outcome::Allow,
                    },
                    // Stricter than allow: taken as configured.
                    Outcome::Defer => Outcome::Defer,
                    // Strictest: taken as configured.
                    Outcome::Deny => Outcome::Deny,
                };
                (
                    outcome,
                    Stage::RiskCeiling,
                    format!("{why}; reviewer: {rationale}"),
                )
            }
        },
    }
}

/// Why an allow of this verdict would exceed the ceiling, if it would.
fn exceeded(verdict: &Verdict, cfg: &DecisionConfig) -> Option<String> {
    let risk = verdict.risk_level;
    if risk == RiskLevel::Critical {
        return Some("critical risk is never auto-allowed".to_owned());
    }
    if risk == RiskLevel::High && verdict.user_authorization < UserAuthorization::Medium {
        return Some(
            "high risk is auto-allowed only with user authorization of medium or above".to_owned(),
        );
    }
    if risk > cfg.max_auto_allow_risk {
        return Some(format!(
            "risk `{}` is above `decision.max_auto_allow_risk` (`{}`)",
            risk.as_str(),
            cfg.max_auto_allow_risk.as_str()
        ));
    }
    None
}

/// Turns a finished model review into the decision for `request_hash`.
///
/// Verdicts go through [`apply`]; failures become `decision.failure_mode` at
/// stage `reviewer_failure`, worded as a failure. `review` is filled
/// whenever the model was called.
pub fn decide(result: &ReviewResult, config: &Config, request_hash: String) -> Decision {
    let review = (result.stats.calls > 0).then(|| result.stats.clone());
    match &result.outcome {
        ReviewOutcome::Verdict(verdict) => decide_verdict(
            verdict,
            config,
            request_hash,
            VerdictSource::Model,
            review,
            None,
        ),
        ReviewOutcome::Failure(class) => {
            let rationale = format!("reviewer failure (`{}`): {}", class.name(), class.phrase());
            Decision::reviewer_failure(
                config.decision.failure_mode,
                crate::decision::Fault::of_failure(*class),
                request_hash,
                rationale,
                review,
            )
        }
    }
}

/// The decision for one verdict from `source`: the host rules, the stage
/// that decided, how a human may override a model denial, and the grant an
/// allow carries.
pub fn decide_verdict(
    verdict: &Verdict,
    config: &Config,
    request_hash: String,
    source: VerdictSource,
    review: Option<ReviewStats>,
    grant: Option<Grant>,
) -> Decision {
    let (outcome, stage, rationale) = apply(verdict, &config.decision);
    let judged = Judged {
        verdict,
        outcome,
        ceiling: stage == Stage::RiskCeiling,
        rationale,
    };
    let extras = VerdictExtras {
        review,
        grant,
        break_glass_enabled: config.overrides.break_glass_enabled,
    };
    Decision::verdict(&judged, source, request_hash, extras)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::FailClosed;
    use crate::decision::ReviewStats;
    use crate::reviewer::FailureClass;

    const RISKS: [RiskLevel; 4] = [
        RiskLevel::Low,
        RiskLevel::Medium,
        RiskLevel::High,
        RiskLevel::Critical,
    ];
    const AUTHS: [UserAuthorization; 4] = [
        UserAuthorization::Unknown,
        UserAuthorization::Low,
        UserAuthorization::Medium,
        UserAuthorization::High,
    ];
    const OUTCOMES: [Outcome; 3] = [Outcome::Allow, Outcome::Deny, Outcome::Defer];

    fn verdict(outcome: Outcome, risk: RiskLevel, auth: UserAuthorization) -> Verdict {
        Verdict {
            outcome,
            risk_level: risk,
            user_authorization: auth,
            rationale: " because ".into(),
            suggestion: None,
        }
    }

    fn defaults() -> Config {
        Config::defaults().unwrap()
    }

    fn every_decision_config() -> Vec<DecisionConfig> {
        let mut all = vec![];
        for max in [
            RiskLevel::Low,
            RiskLevel::Medium,
            RiskLevel::High,
            RiskLevel::Critical,
        ] {
            for exceeded in OUTCOMES {
                for uncertain in OUTCOMES {
                    for failure in [FailClosed::Deny, FailClosed::Defer] {
                        all.push(DecisionConfig {
                            failure_mode: failure,
                            max_auto_allow_risk: max,
                            on_risk_exceeded: exceeded,
                            on_uncertain: uncertain,
                        });
                    }
                }
            }
        }
        all
    }

    #[test]
    fn allow_within_the_ceiling_stands() {
        let cfg = defaults().decision;
        let v = verdict(
            Outcome::Allow,
            RiskLevel::Medium,
            UserAuthorization::Unknown,
        );
        assert_eq!(
            apply(&v, &cfg),
            (Outcome::Allow, Stage::Reviewer, "because".into())
        );
    }

    #[test]
    fn allow_above_max_goes_to_on_risk_exceeded() {
        let mut cfg = defaults().decision;
        cfg.max_auto_allow_risk = RiskLevel::Low;
        let v = verdict(Outcome::Allow, RiskLevel::Medium, UserAuthorization::High);
        let (o, s, r) = apply(&v, &cfg);
        assert_eq!((o, s), (Outcome::Defer, Stage::RiskCeiling));
        assert!(
            r.contains("max_auto_allow_risk") && r.contains("because"),
            "{r}"
        );
        cfg.on_risk_exceeded = Outcome::Deny;
        assert_eq!(apply(&v, &cfg).0, Outcome::Deny);
        // A trusted user may choose allow for non-critical risk.
        cfg.on_risk_exceeded = Outcome::Allow;
        assert_eq!(apply(&v, &cfg).0, Outcome::Allow);
        assert_eq!(apply(&v, &cfg).1, Stage::RiskCeiling);
    }

    #[test]
    fn high_allow_needs_medium_authorization() {
        let mut cfg = defaults().decision;
        cfg.max_auto_allow_risk = RiskLevel::High;
        for auth in AUTHS {
            let v = verdict(Outcome::Allow, RiskLevel::High, auth);
            let expected = if auth >= UserAuthorization::Medium {
                (Outcome::Allow, Stage::Reviewer)
            } else {
                (Outcome::Defer, Stage::RiskCeiling)
            };
            let (o, s, _) = apply(&v, &cfg);
            assert_eq!((o, s), expected, "{auth:?}");
        }
    }

    #[test]
    fn critical_is_never_allowed() {
        for cfg in every_decision_config() {
            for outcome in OUTCOMES {
                for auth in AUTHS {
                    let v = verdict(outcome, RiskLevel::Critical, auth);
                    let (o, _, _) = apply(&v, &cfg);
                    assert_ne!(o, Outcome::Allow, "{cfg:?} {outcome:?} {auth:?}");
                }
            }
        }
    }

    #[test]
    fn critical_allow_takes_the_stricter_of_on_risk_exceeded_and_defer() {
        let mut cfg = defaults().decision;
        let v = verdict(Outcome::Allow, RiskLevel::Critical, UserAuthorization::High);
        for (configured, expected) in [
            (Outcome::Allow, Outcome::Defer),
            (Outcome::Defer, Outcome::Defer),
            (Outcome::Deny, Outcome::Deny),
        ] {
            cfg.on_risk_exceeded = configured;
            let (o, s, r) = apply(&v, &cfg);
            assert_eq!((o, s), (expected, Stage::RiskCeiling));
            assert!(r.contains("critical"));
        }
    }

    #[test]
    fn deny_always_stands() {
        for cfg in every_decision_config() {
            for risk in RISKS {
                let v = verdict(Outcome::Deny, risk, UserAuthorization::High);
                assert_eq!(apply(&v, &cfg).0, Outcome::Deny);
                assert_eq!(apply(&v, &cfg).1, Stage::Reviewer);
            }
        }
    }

    #[test]
    fn defer_goes_to_on_uncertain_and_an_allow_there_is_still_capped() {
        let mut cfg = defaults().decision;
        let v = verdict(Outcome::Defer, RiskLevel::Low, UserAuthorization::Unknown);
        for uncertain in OUTCOMES {
            cfg.on_uncertain = uncertain;
            assert_eq!(apply(&v, &cfg).0, uncertain);
            assert_eq!(apply(&v, &cfg).1, Stage::Reviewer);
        }
        cfg.on_uncertain = Outcome::Allow;
        let high = verdict(Outcome::Defer, RiskLevel::High, UserAuthorization::Unknown);
        assert_eq!(
            apply(&high, &cfg).0,
            Outcome::Defer,
            "an uncertain high-risk action is held to the ceiling"
        );
    }

    #[test]
    fn an_allow_always_satisfies_the_rules_or_the_users_explicit_choice() {
        for cfg in every_decision_config() {
            for outcome in OUTCOMES {
                for risk in RISKS {
                    for auth in AUTHS {
                        let v = verdict(outcome, risk, auth);
                        let (o, s, _) = apply(&v, &cfg);
                        if o != Outcome::Allow {
                            continue;
                        }
                        assert_ne!(risk, RiskLevel::Critical);
                        assert_ne!(outcome, Outcome::Deny);
                        let within = risk <= cfg.max_auto_allow_risk
                            && (risk != RiskLevel::High || auth >= UserAuthorization::Medium);
                        if !within {
                            assert_eq!(cfg.on_risk_exceeded, Outcome::Allow);
                            assert_eq!(s, Stage::RiskCeiling);
                        }
                        if outcome == Outcome::Defer {
                            assert_eq!(cfg.on_uncertain, Outcome::Allow);
                        }
                    }
                }
            }
        }
    }

    fn result(outcome: ReviewOutcome, calls: u32) -> ReviewResult {
        ReviewResult {
            outcome,
            stats: ReviewStats {
                model: "m".into(),
                calls,
                input_tokens: 100,
                output_tokens: 20,
                packet_tokens_estimate: 90,
                duration_ms: 5,
            },
        }
    }

    #[test]
    fn model_denials_offer_the_right_override() {
        let mut config = defaults();
        let mut v = verdict(Outcome::Deny, RiskLevel::High, UserAuthorization::Unknown);
        v.suggestion = Some(" run the tests instead ".into());
        let d = decide(
            &result(ReviewOutcome::Verdict(v.clone()), 1),
            &config,
            "h".into(),
        );
        assert_eq!((d.outcome(), d.stage()), (Outcome::Deny, Stage::Reviewer));
        assert!(d.message().contains("vouch approve"));
        assert!(d.message().contains("run the tests instead"));
        assert_eq!(d.suggestion(), Some("run the tests instead"));
        assert_eq!(d.risk_level(), Some(RiskLevel::High));
        assert_eq!(d.user_authorization(), Some(UserAuthorization::Unknown));
        assert_eq!(d.review().map(|r| r.calls), Some(1));

        v.risk_level = RiskLevel::Critical;
        let d = decide(
            &result(ReviewOutcome::Verdict(v.clone()), 1),
            &config,
            "h".into(),
        );
        assert!(d.message().contains("vouch break-glass"));
        assert!(!d.message().contains("vouch approve"));

        config.overrides.break_glass_enabled = false;
        let d = decide(&result(ReviewOutcome::Verdict(v), 1), &config, "h".into());
        assert!(!d.message().contains("break-glass"));
        assert!(!d.message().contains("vouch approve"));
    }

    #[test]
    fn ceiling_denials_are_model_denials_too() {
        let mut config = defaults();
        config.decision.on_risk_exceeded = Outcome::Deny;
        let v = verdict(Outcome::Allow, RiskLevel::High, UserAuthorization::Low);
        let d = decide(&result(ReviewOutcome::Verdict(v), 1), &config, "h".into());
        assert_eq!(
            (d.outcome(), d.stage()),
            (Outcome::Deny, Stage::RiskCeiling)
        );
        assert!(d.message().contains("vouch approve"));
    }

    #[test]
    fn allows_and_defers_carry_the_verdict() {
        let config = defaults();
        let v = verdict(Outcome::Allow, RiskLevel::Low, UserAuthorization::High);
        let d = decide(&result(ReviewOutcome::Verdict(v), 1), &config, "abc".into());
        assert_eq!((d.outcome(), d.stage()), (Outcome::Allow, Stage::Reviewer));
        assert_eq!(d.request_hash(), "abc");
        assert_eq!(d.review().unwrap().input_tokens, 100);
        let v = verdict(Outcome::Defer, RiskLevel::Medium, UserAuthorization::Low);
        let d = decide(&result(ReviewOutcome::Verdict(v), 1), &config, "abc".into());
        assert_eq!((d.outcome(), d.stage()), (Outcome::Defer, Stage::Reviewer));
        assert!(!d.message().contains("vouch approve"));
    }

    #[test]
    fn failures_take_failure_mode_and_are_worded_as_failures() {
        let mut config = defaults();
        for mode in [FailClosed::Deny, FailClosed::Defer] {
            config.decision.failure_mode = mode;
            // Even with every configurable action set to allow.
            config.decision.on_risk_exceeded = Outcome::Allow;
            config.decision.on_uncertain = Outcome::Allow;
            let d = decide(
                &result(ReviewOutcome::Failure(FailureClass::Timeout), 1),
                &config,
                "h".into(),
            );
            assert_eq!(d.outcome(), mode.outcome());
            assert_eq!(d.stage(), Stage::ReviewerFailure);
            assert!(d.rationale().contains("timeout"), "{}", d.rationale());
            assert!(d.message().contains("could not complete"));
            assert!(!d.message().contains("vouch approve"));
            assert_eq!(d.risk_level(), None);
            assert!(d.review().is_some());
        }
        let d = decide(
            &result(ReviewOutcome::Failure(FailureClass::PacketTooLarge), 0),
            &config,
            "h".into(),
        );
        assert!(d.review().is_none(), "the model was not called");
    }
}
