//! Routing (design §6.2) over the fixture vectors in
//! `tests/fixtures/routing.jsonl`, plus sensitive-read strictness and the
//! wording of rationales.

use std::path::Path;

use vouch::config::{LoadedConfig, RoutePolicy, load_trusted};
use vouch::paths::Paths;
use vouch::policy::routing::{RouteReason, RuleOrigin};
use vouch::request::Request;

fn load(config: &Path) -> LoadedConfig {
    let dir = tempfile::tempdir().unwrap();
    let vh = dir.path().to_str().unwrap().to_owned();
    let paths = Paths::from_lookup(move |k| (k == "VOUCH_HOME").then(|| vh.clone())).unwrap();
    load_trusted(&paths, Some(config), Vec::new()).unwrap()
}

fn load_text(text: &str) -> LoadedConfig {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("c.toml");
    std::fs::write(&file, text).unwrap();
    load(&file)
}

fn policy(name: &str) -> RoutePolicy {
    serde_json::from_value(serde_json::Value::String(name.into())).unwrap()
}

#[test]
fn fixture_vectors() {
    let loaded = load(&crate::support::fixtures::path("routing.toml"));
    let mut count = 0;
    for (_, case) in crate::support::fixtures::jsonl::<serde_json::Value>("routing.jsonl") {
        let name = case["name"].as_str().unwrap();
        let request = Request::from_slice(case["request"].to_string().as_bytes()).unwrap();
        let route = loaded.router.route(&request);
        assert_eq!(
            route.policy,
            policy(case["policy"].as_str().unwrap()),
            "{name}: {route:?}"
        );
        assert_eq!(route.rule_id(), case["rule_id"].as_str().unwrap(), "{name}");
        assert!(!route.rationale().is_empty());
        count += 1;
    }
    assert!(count >= 20, "only {count} vectors");
}

fn req(v: serde_json::Value) -> Request {
    Request::from_slice(v.to_string().as_bytes()).unwrap()
}

#[test]
fn sensitive_reads_take_the_stricter_policy() {
    // A stricter surface entry stays when sensitive_reads is looser.
    let loaded =
        load_text("[routing]\nsensitive_reads = \"ai\"\n[routing.surfaces]\nread = \"human\"\n");
    let r = loaded.router.route(&req(
        serde_json::json!({"session_id": "s", "surface": "read", "path": ".env"}),
    ));
    assert_eq!(r.policy, RoutePolicy::Human);
    assert_eq!(r.rule_id(), "routing/surface-read");

    // A trusted `pass` rule does not pass a sensitive read.
    let loaded = load_text(
        "[routing]\nsensitive_reads = \"human\"\n[[routing.rules]]\npattern = \"^read$\"\nfield = \"surface\"\npolicy = \"pass\"\n",
    );
    let r = loaded.router.route(&req(
        serde_json::json!({"session_id": "s", "surface": "read", "path": "~/.ssh/id_rsa"}),
    ));
    assert_eq!(r.policy, RoutePolicy::Human);
    assert_eq!(r.reason, RouteReason::SensitiveRead);
    let r = loaded.router.route(&req(
        serde_json::json!({"session_id": "s", "surface": "read", "path": "README.md"}),
    ));
    assert_eq!(r.policy, RoutePolicy::Pass);

    // The owner may explicitly pass sensitive reads too.
    let loaded = load_text("[routing]\nsensitive_reads = \"pass\"\n");
    let r = loaded.router.route(&req(
        serde_json::json!({"session_id": "s", "surface": "read", "path": ".env"}),
    ));
    assert_eq!(r.policy, RoutePolicy::Pass);
}

#[test]
fn rationale_names_rule_note_and_field() {
    let loaded = load(&crate::support::fixtures::path("routing.toml"));
    let r = loaded.router.route(&req(
        serde_json::json!({"session_id": "s", "surface": "bash", "command": "git push"}),
    ));
    assert_eq!(
        r.reason,
        RouteReason::Rule {
            index: 0,
            field: vouch::config::RuleField::Command,
            note: Some("pushes need a person".into()),
            origin: RuleOrigin::Trusted,
        }
    );
    assert_eq!(
        r.rationale(),
        "trusted routing rule 0 matched the command (pushes need a person): policy `human`"
    );
    let r = loaded.router.route(&req(
        serde_json::json!({"session_id": "s", "surface": "bash", "command": "make"}),
    ));
    assert_eq!(
        r.rationale(),
        "no routing rule or surface entry matched; the trusted default policy is `ai`"
    );
}

#[test]
fn routing_is_case_sensitive_regex_with_inline_flags() {
    let loaded = load_text(
        "[[routing.rules]]\npattern = \"(?i)^DROP TABLE\"\npolicy = \"never\"\n[[routing.rules]]\npattern = \"^Curl\"\npolicy = \"human\"\n",
    );
    let route = |c: &str| {
        loaded
            .router
            .route(&req(
                serde_json::json!({"session_id": "s", "surface": "bash", "command": c}),
            ))
            .policy
    };
    assert_eq!(route("drop table users"), RoutePolicy::Never);
    assert_eq!(route("curl x"), RoutePolicy::Ai);
    assert_eq!(route("Curl x"), RoutePolicy::Human);
}
