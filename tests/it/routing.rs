//! Routing (design §6.2) over the fixture vectors in
//! `tests/fixtures/routing.jsonl`, plus sensitive-read strictness and the
//! wording of rationales.

use std::path::Path;

use vouch::config::routing::{RouteReason, RuleOrigin, Unit};
use vouch::config::{LoadedConfig, RoutePolicy, for_project, load_trusted};
use vouch::paths::Paths;
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

/// The units a bash request's command would run, as the engine hands them
/// to routing (one analysis, inert flags per unit).
fn units(request: &Request) -> Option<Vec<Unit>> {
    let command = request.command.as_deref()?;
    let cwd = request.cwd.as_deref().unwrap_or("/srv/app");
    let env = vouch::shell::ShellEnv {
        cwd: Some(cwd),
        home: "/home/dev",
        vars: &[],
    };
    let analysis = vouch::shell::analyze(command, &env, &vouch::shell::Limits::DEFAULT);
    let ctx = vouch::policy::inert::InertContext {
        home: "/home/dev",
        protected: &[],
        git_system_config: Path::new("/nonexistent/gitconfig"),
        files: &vouch::engine::Disk,
    };
    vouch::policy::inert::judge_with_units(command, &analysis, &ctx).1
}

fn route(loaded: &LoadedConfig, request: &Request) -> vouch::config::routing::Route {
    let units = units(request);
    loaded.router.route_units(request, units.as_deref())
}

fn bash(command: &str) -> Request {
    req(
        serde_json::json!({"session_id": "s", "surface": "bash", "command": command, "cwd": "/srv/app"}),
    )
}

#[test]
fn command_templates_match_every_unit_after_expansion() {
    let loaded = load_text(
        r#"
[routing]
default = "ai"
rules = [
  { command = "git push *", policy = "human" },
  { command = "rm -rf *", policy = "never" },
  { command = "git status *", policy = "pass" },
  { command = "npm test *", policy = "pass" },
  { command = "npm run lint", policy = "pass" },
]
"#,
    );
    let policy_of = |command: &str| route(&loaded, &bash(command)).policy;
    // An allowing template passes only when every unit is allowed.
    assert_eq!(policy_of("git status --short"), RoutePolicy::Pass);
    assert_eq!(policy_of("git status; rm -rf ../x"), RoutePolicy::Never);
    assert_eq!(policy_of("git status; npm publish"), RoutePolicy::Ai);
    assert_eq!(policy_of("npm test && npm run lint"), RoutePolicy::Pass);
    assert_eq!(policy_of("npm run lint --fix"), RoutePolicy::Ai);
    // `cd` is inert on its own, so it needs no template of its own.
    assert_eq!(
        policy_of("cd sub && npm test -- --watch=false"),
        RoutePolicy::Pass
    );
    assert_eq!(policy_of("cd sub && touch x && npm test"), RoutePolicy::Ai);
    // After expansion, through wrappers and shells.
    assert_eq!(policy_of("bash -c 'npm test'"), RoutePolicy::Pass);
    assert_eq!(policy_of("x=push; git $x origin main"), RoutePolicy::Human);
    assert_eq!(policy_of("sudo rm -rf build"), RoutePolicy::Never);
    // The project's own program is not the template's.
    assert_eq!(policy_of("./git status"), RoutePolicy::Ai);
    assert_eq!(policy_of("/usr/bin/git status"), RoutePolicy::Pass);
    // A word that is not known matches only `*`.
    assert_eq!(policy_of("npm $CMD"), RoutePolicy::Ai);
}

#[test]
fn a_regex_pass_over_the_command_is_refused_with_the_rule_named() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("c.toml");
    std::fs::write(
        &file,
        "[routing]\nrules = [\n  { pattern = \"^git log\", policy = \"ai\" },\n  { pattern = \"^git status\", policy = \"pass\" },\n]\n",
    )
    .unwrap();
    let vh = dir.path().to_str().unwrap().to_owned();
    let paths = Paths::from_lookup(move |k| (k == "VOUCH_HOME").then(|| vh.clone())).unwrap();
    let error = load_trusted(&paths, Some(&file), Vec::new())
        .unwrap_err()
        .to_string();
    assert!(error.contains("routing.rules[1].pattern"), "{error}");
    assert!(error.contains("command = \"git status *\""), "{error}");
}

#[test]
fn fixture_vectors() {
    let loaded = load(&crate::support::fixtures::path("routing.toml"));
    let mut count = 0;
    for (_, case) in crate::support::fixtures::jsonl::<serde_json::Value>("routing.jsonl") {
        let name = case["name"].as_str().unwrap();
        let request = Request::from_slice(case["request"].to_string().as_bytes()).unwrap();
        // `project`: the project's `.vouch/config.toml` over the trusted one.
        let route = match case["project"].as_str() {
            Some(overlay) => {
                let project = tempfile::tempdir().unwrap();
                std::fs::create_dir_all(project.path().join(".git")).unwrap();
                std::fs::create_dir_all(project.path().join(".vouch")).unwrap();
                std::fs::write(project.path().join(".vouch/config.toml"), overlay).unwrap();
                let effective = for_project(&loaded, Some(project.path()))
                    .effective
                    .unwrap();
                route(&effective, &request)
            }
            None => route(&loaded, &request),
        };
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

#[test]
fn an_audit_suggestion_for_vouch_takes_effect_when_pasted() {
    use vouch::audit::targets::{Candidate, Target, suggest};
    let candidate = Candidate {
        surface: "bash".to_owned(),
        kind: vouch::audit::subject::Kind::Template,
        subject: "npm test *".to_owned(),
        approvals: 7,
        sources: vec!["claude-code".to_owned()],
    };
    let suggestions = suggest("vouch".parse::<Target>().unwrap(), &[candidate], &[], false);
    assert_eq!(suggestions.rules.len(), 1, "{suggestions:?}");
    assert!(
        suggestions.snippet.contains("command = \"npm test *\""),
        "{}",
        suggestions.snippet
    );
    let loaded = load_text(&format!(
        "[routing]\ndefault = \"ai\"\n\n{}",
        suggestions.snippet
    ));
    assert_eq!(
        route(&loaded, &bash("npm test -- --watch=false")).policy,
        RoutePolicy::Pass
    );
    assert_eq!(
        route(&loaded, &bash("cd web && npm test")).policy,
        RoutePolicy::Pass
    );
    assert_eq!(
        route(&loaded, &bash("npm test; npm publish")).policy,
        RoutePolicy::Ai
    );
}
