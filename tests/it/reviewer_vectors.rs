//! Data-driven and property tests for the two pure parts of a review: the
//! tolerant-extract, strict-validate verdict parser
//! (`tests/fixtures/verdicts.jsonl`) and the host rules over a verdict
//! (`tests/fixtures/risk_ceiling.jsonl`).

use proptest::prelude::*;
use serde::Deserialize;

use vouch::config::{Config, DecisionConfig};
use vouch::decision::ceiling;
use vouch::decision::{Outcome, RiskLevel, Stage, UserAuthorization};
use vouch::reviewer::verdict::{self, Verdict, VerdictError};

use crate::support::fixtures::text as fixture;

#[derive(Deserialize)]
struct VerdictCase {
    name: String,
    text: String,
    expect: String,
}

fn describe(result: &Result<Verdict, VerdictError>) -> &'static str {
    match result {
        Ok(v) => v.outcome.as_str(),
        Err(VerdictError::Empty) => "empty",
        Err(VerdictError::InvalidJson) => "invalid_json",
        Err(VerdictError::SchemaInvalid) => "schema_invalid",
    }
}

#[test]
fn verdict_vectors() {
    let text = fixture("verdicts.jsonl");
    let mut seen = 0;
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        let case: VerdictCase = serde_json::from_str(line).unwrap();
        let got = verdict::parse_text(&case.text);
        assert_eq!(describe(&got), case.expect, "case `{}`", case.name);
        seen += 1;
    }
    assert!(seen >= 30, "fixture file looks truncated");
}

#[derive(Deserialize)]
struct CeilingVerdict {
    outcome: Outcome,
    risk_level: RiskLevel,
    user_authorization: UserAuthorization,
}

#[derive(Deserialize)]
struct CeilingConfig {
    max_auto_allow_risk: RiskLevel,
    on_risk_exceeded: Outcome,
    on_uncertain: Outcome,
}

#[derive(Deserialize)]
struct CeilingExpect {
    decision: Outcome,
    stage: Stage,
}

#[derive(Deserialize)]
struct CeilingCase {
    name: String,
    verdict: CeilingVerdict,
    decision: CeilingConfig,
    expect: CeilingExpect,
}

#[test]
fn risk_ceiling_vectors() {
    let base = Config::defaults().unwrap().decision;
    let text = fixture("risk_ceiling.jsonl");
    let mut seen = 0;
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        let case: CeilingCase = serde_json::from_str(line).unwrap();
        let cfg = DecisionConfig {
            max_auto_allow_risk: case.decision.max_auto_allow_risk,
            on_risk_exceeded: case.decision.on_risk_exceeded,
            on_uncertain: case.decision.on_uncertain,
            ..base.clone()
        };
        let v = Verdict {
            outcome: case.verdict.outcome,
            risk_level: case.verdict.risk_level,
            user_authorization: case.verdict.user_authorization,
            rationale: "r".into(),
            suggestion: None,
        };
        let (outcome, stage, rationale) = ceiling::apply(&v, &cfg);
        assert_eq!(
            (outcome, stage),
            (case.expect.decision, case.expect.stage),
            "case `{}`",
            case.name
        );
        assert!(rationale.ends_with('r'), "the model's rationale is kept");
        seen += 1;
    }
    assert!(seen >= 15, "fixture file looks truncated");
}

fn outcome() -> impl Strategy<Value = Outcome> {
    prop_oneof![
        Just(Outcome::Allow),
        Just(Outcome::Deny),
        Just(Outcome::Defer)
    ]
}

fn risk() -> impl Strategy<Value = RiskLevel> {
    prop_oneof![
        Just(RiskLevel::Low),
        Just(RiskLevel::Medium),
        Just(RiskLevel::High),
        Just(RiskLevel::Critical)
    ]
}

fn auth() -> impl Strategy<Value = UserAuthorization> {
    prop_oneof![
        Just(UserAuthorization::Unknown),
        Just(UserAuthorization::Low),
        Just(UserAuthorization::Medium),
        Just(UserAuthorization::High)
    ]
}

fn verdict_json(o: Outcome, r: RiskLevel, a: UserAuthorization, rationale: &str) -> String {
    serde_json::json!({
        "outcome": o,
        "risk_level": r,
        "user_authorization": a,
        "rationale": rationale,
        "suggestion": null,
    })
    .to_string()
}

proptest! {
    /// Any text at all: the parser answers (never panics), and an answer
    /// that is a verdict came from exactly one object in the text.
    #[test]
    fn parser_is_total(text in ".{0,400}") {
        let _ = verdict::parse_text(&text);
    }

    /// One valid object wrapped in brace-free prose is always found, and its
    /// fields survive unchanged.
    #[test]
    fn prose_without_braces_never_hides_the_verdict(
        before in "[^{}]{0,80}",
        after in "[^{}]{0,80}",
        o in outcome(), r in risk(), a in auth(),
        rationale in "[^\\\\]{0,100}",
    ) {
        let text = format!("{before}{}{after}", verdict_json(o, r, a, &rationale));
        let v = verdict::parse_text(&text).unwrap();
        prop_assert_eq!(v.outcome, o);
        prop_assert_eq!(v.risk_level, r);
        prop_assert_eq!(v.user_authorization, a);
        prop_assert_eq!(v.rationale, rationale);
    }

    /// Two objects are never resolved by picking one.
    #[test]
    fn two_verdicts_are_always_rejected(
        sep in "[^{}]{0,20}",
        o1 in outcome(), o2 in outcome(), r in risk(), a in auth(),
    ) {
        let text = format!("{}{sep}{}", verdict_json(o1, r, a, "x"), verdict_json(o2, r, a, "y"));
        prop_assert_eq!(verdict::parse_text(&text), Err(VerdictError::InvalidJson));
    }

    /// Host rules: no configuration ever turns a critical verdict or a denial
    /// into an allow, and an allow is either within the ceiling or the
    /// trusted user's explicit `on_risk_exceeded = "allow"`.
    #[test]
    fn host_rules_never_loosen(
        o in outcome(), r in risk(), a in auth(),
        max in risk(), exceeded in outcome(), uncertain in outcome(),
    ) {
        let cfg = DecisionConfig {
            max_auto_allow_risk: max,
            on_risk_exceeded: exceeded,
            on_uncertain: uncertain,
            ..Config::defaults().unwrap().decision
        };
        let v = Verdict { outcome: o, risk_level: r, user_authorization: a, rationale: "r".into(), suggestion: None };
        let (decided, stage, _) = ceiling::apply(&v, &cfg);
        if decided == Outcome::Allow {
            prop_assert_ne!(r, RiskLevel::Critical);
            prop_assert_ne!(o, Outcome::Deny);
            let within = r <= max && (r != RiskLevel::High || a >= UserAuthorization::Medium);
            prop_assert!(within || (exceeded == Outcome::Allow && stage == Stage::RiskCeiling));
        }
        if o == Outcome::Deny {
            prop_assert_eq!(decided, Outcome::Deny);
        }
    }
}
