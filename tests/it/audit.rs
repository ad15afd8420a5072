//! The policy audit end to end against a real `audit.sqlite`: subjects from
//! the fixture corpora, keyed hashes, idempotent ingest, the v1 → v2
//! upgrade, retention, vouch's own decisions paired with after-events, and
//! when a rule is (and is not) suggested.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde_json::{Value, json};
use vouch::audit::db::{Db, MIGRATIONS};
use vouch::audit::keys::{Domain, KEY_FILE, Keys};
use vouch::audit::report::{Options, Report, Scope};
use vouch::audit::subject::{self, Limits, PathClass, PathContext};
use vouch::audit::targets::Target;
use vouch::clock::ManualClock;
use vouch::config::Config;
use vouch::engine::{Engine, EngineOptions};
use vouch::request::Request;

/// A `--target` by name.
fn target(name: &str) -> Target {
    name.parse().unwrap()
}

/// 2026-12-01T12:00:00Z.
const NOW_MS: u64 = 1_796_126_400_000;
const DAY_MS: u64 = 86_400_000;

const LIMITS: Limits = Limits {
    max_command_bytes: 4096,
    max_template_tokens: 32,
};

fn fixture_lines(name: &str) -> Vec<(usize, Value)> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name);
    std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
        .lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
        .map(|(i, l)| {
            (
                i + 1,
                serde_json::from_str(l).unwrap_or_else(|e| panic!("{name}:{}: {e}", i + 1)),
            )
        })
        .collect()
}

#[test]
fn template_corpus() {
    let mut failures = Vec::new();
    let mut checked = 0;
    for file in ["templates.jsonl", "templates_extra.jsonl"] {
        for (line, v) in fixture_lines(file) {
            let command = v["command"].as_str().unwrap();
            let got = subject::command_template(command, LIMITS);
            checked += 1;
            match (v["template"].as_str(), &got) {
                (Some(want), Ok(have)) if want == have => {}
                (None, Err(why)) => {
                    if let Some(reason) = v["reason"].as_str()
                        && reason != why.label()
                    {
                        failures.push(format!(
                            "{file}:{line}: `{command}`: want {reason}, got {}",
                            why.label()
                        ));
                    }
                }
                (want, _) => failures.push(format!(
                    "{file}:{line}: `{command}`: want {want:?}, got {got:?}"
                )),
            }
        }
    }
    assert!(checked >= 80, "only {checked} vectors");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn path_class_corpus() {
    let mut failures = Vec::new();
    for (line, v) in fixture_lines("path_classes.jsonl") {
        let workspace = v["workspace"].as_str().map(PathBuf::from);
        let ctx = PathContext {
            cwd: v["cwd"].as_str(),
            home: v["home"].as_str(),
            workspace: workspace.as_deref(),
        };
        let got = subject::path_class(v["path"].as_str().unwrap(), v["resolved"].as_str(), ctx);
        if got.as_str() != v["class"].as_str().unwrap() {
            failures.push(format!(
                "path_classes.jsonl:{line}: {v}: got {}",
                got.as_str()
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    // Every class occurs in the corpus.
    let classes: Vec<String> = fixture_lines("path_classes.jsonl")
        .into_iter()
        .map(|(_, v)| v["class"].as_str().unwrap().to_owned())
        .collect();
    for class in [
        PathClass::Workspace,
        PathClass::Temp,
        PathClass::Home,
        PathClass::External,
        PathClass::Sensitive,
        PathClass::Unknown,
    ] {
        assert!(
            classes.iter().any(|c| c == class.as_str()),
            "{}",
            class.as_str()
        );
    }
}

/// One isolated vouch: its own `VOUCH_HOME`, a manual clock, a project.
struct Home {
    dir: tempfile::TempDir,
    clock: Arc<ManualClock>,
    engine: Engine,
}

impl Home {
    fn new() -> Home {
        Home::with(|_| {})
    }

    fn with(edit: impl FnOnce(&mut Config)) -> Home {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("project/.git")).unwrap();
        let mut config = Config::defaults().unwrap();
        edit(&mut config);
        let clock = Arc::new(ManualClock::new(NOW_MS));
        let mut options = EngineOptions::isolated(&dir.path().join("vh"), &config).unwrap();
        options.clock = clock.clone();
        let engine = Engine::new(options).unwrap();
        Home { dir, clock, engine }
    }

    fn project(&self) -> PathBuf {
        self.dir.path().join("project")
    }

    fn state(&self) -> PathBuf {
        self.dir.path().join("vh/state")
    }

    /// A pi-permission-system `permissions:decision` event in the project.
    fn pi(&self, value: &str, result: &str, resolution: &str) -> Value {
        json!({
            "surface": "bash", "value": value, "result": result, "resolution": resolution,
            "origin": "project", "agentName": "main", "matchedPattern": "*",
            "cwd": self.project().join("src"), "timestamp_ms": self.clock.now_ms_value(),
        })
    }

    async fn ingest(&self, events: Vec<Value>) -> vouch::audit::ingest::IngestSummary {
        self.engine.audit_ingest(events, true).await.unwrap()
    }

    async fn report(&self, target: Target, min_count: u64) -> Report {
        self.report_days(target, min_count, 30).await
    }

    async fn report_days(&self, target: Target, min_count: u64, days: u32) -> Report {
        self.engine
            .audit_report(Options {
                days,
                top: 20,
                min_count,
                scope: Scope::Current(self.project()),
                target,
            })
            .await
            .unwrap()
    }
}

trait NowValue {
    fn now_ms_value(&self) -> u64;
}

impl NowValue for ManualClock {
    fn now_ms_value(&self) -> u64 {
        vouch::clock::Clock::now_ms(self)
    }
}

fn with_id(mut event: Value, id: &str) -> Value {
    event["requestId"] = id.into();
    event
}

fn rules(report: &Report) -> Vec<String> {
    report
        .suggestions
        .rules
        .iter()
        .map(|r| r.rule.clone())
        .collect()
}

#[tokio::test]
async fn keyed_hashes_are_stable_per_key_and_differ_across_keys() {
    let (a, b) = (Home::new(), Home::new());
    for home in [&a, &b] {
        home.ingest(vec![home.pi("git status", "allow", "user_approved")])
            .await;
    }
    let key_a = Keys::load(&a.state()).unwrap().unwrap();
    let key_b = Keys::load(&b.state()).unwrap().unwrap();
    let again = Keys::load(&a.state()).unwrap().unwrap();
    assert_eq!(std::fs::read(a.state().join(KEY_FILE)).unwrap().len(), 32);
    for value in ["/srv/app", "git *", "project"] {
        assert_eq!(
            key_a.digest(Domain::Scope, value),
            again.digest(Domain::Scope, value)
        );
        assert_ne!(
            key_a.digest(Domain::Scope, value),
            key_b.digest(Domain::Scope, value)
        );
    }
    // The stored scope is the HMAC of the project root under that home's key.
    let report = a.report(target("claude-code"), 1).await;
    assert_eq!(
        report.scope.project.as_deref(),
        Some(
            key_a
                .digest(Domain::Scope, &a.project().to_string_lossy())
                .as_str()
        )
    );
    assert_eq!(report.totals.observations, 1);
}

#[tokio::test]
async fn the_same_batch_twice_counts_once() {
    let home = Home::new();
    let batch: Vec<Value> = (0..6)
        .map(|i| {
            with_id(
                home.pi("git status", "allow", "user_approved"),
                &format!("req-{i}"),
            )
        })
        // pi 20.7.3 sends no requestId: a digest of the event stands in.
        .chain([home.pi("npm test", "allow", "user_approved")])
        .collect();
    let first = home.ingest(batch.clone()).await;
    assert_eq!((first.events, first.counted, first.duplicates), (7, 7, 0));
    let second = home.ingest(batch).await;
    assert_eq!(
        (second.events, second.counted, second.duplicates),
        (7, 0, 7)
    );
    let report = home.report(target("claude-code"), 1).await;
    assert_eq!(report.totals.observations, 7);
    let git = report
        .top_subjects
        .iter()
        .find(|s| s.subject == "git status")
        .unwrap();
    assert_eq!(git.approvals, 6);
}

#[tokio::test]
async fn min_count_is_a_threshold() {
    let home = Home::new();
    let events: Vec<Value> = (0..5)
        .map(|i| {
            with_id(
                home.pi("git status --short", "allow", "user_approved"),
                &format!("a{i}"),
            )
        })
        .collect();
    home.ingest(events[..4].to_vec()).await;
    assert!(rules(&home.report(target("claude-code"), 5).await).is_empty());
    home.ingest(events).await;
    let report = home.report(target("claude-code"), 5).await;
    assert_eq!(rules(&report), vec!["Bash(git status --short)"]);
    assert_eq!(report.suggestions.rules[0].approvals, 5);
}

#[tokio::test]
async fn one_denial_in_the_window_blocks() {
    for (result, resolution) in [
        ("deny", "user_denied"),
        ("deny", "policy_deny"),
        ("allow", "gate_error"),
        ("deny", "confirmation_unavailable"),
    ] {
        let home = Home::new();
        let mut events: Vec<Value> = (0..9)
            .map(|i| {
                with_id(
                    home.pi("git push origin main", "allow", "user_approved"),
                    &format!("a{i}"),
                )
            })
            .collect();
        events.push(with_id(
            home.pi("git push origin main", result, resolution),
            "d",
        ));
        home.ingest(events).await;
        let report = home.report(target("claude-code"), 5).await;
        assert!(
            rules(&report).is_empty(),
            "{resolution}: {:?}",
            rules(&report)
        );
        let line = &report.top_subjects[0];
        assert_eq!((line.approvals, line.blocking), (9, 1), "{resolution}");
    }
}

#[tokio::test]
async fn a_denied_variant_blocks_a_rule_that_would_cover_it() {
    let home = Home::new();
    let mut events: Vec<Value> = (0..6)
        .map(|i| {
            with_id(
                home.pi("git push origin main", "allow", "user_approved"),
                &format!("a{i}"),
            )
        })
        .collect();
    events.push(with_id(
        home.pi("git push origin main --force", "deny", "user_denied"),
        "d",
    ));
    home.ingest(events).await;
    // Claude Code's exact rule does not cover the denied variant.
    assert_eq!(
        rules(&home.report(target("claude-code"), 5).await),
        vec!["Bash(git push origin main)"]
    );
    // Codex's prefix rule `git push origin main` would: not suggested, and
    // the report says why.
    let codex = home.report(target("codex"), 5).await;
    assert!(rules(&codex).is_empty());
    let reason = &codex.suggestions.skipped[0].reason;
    assert!(reason.contains("git push origin main --force"), "{reason}");
}

#[tokio::test]
async fn policy_allows_and_forwarded_approvals_do_not_count() {
    let home = Home::new();
    let mut events = Vec::new();
    for i in 0..10 {
        events.push(with_id(
            home.pi("ls -la", "allow", "policy_allow"),
            &format!("p{i}"),
        ));
        events.push(with_id(
            home.pi("cat notes.txt", "allow", "auto_approved"),
            &format!("y{i}"),
        ));
        let mut forwarded = with_id(
            home.pi("make test", "allow", "user_approved"),
            &format!("f{i}"),
        );
        forwarded["forwarding"] = json!({"requesterAgentName": "sub", "requesterSessionId": "c"});
        events.push(forwarded);
    }
    home.ingest(events).await;
    let report = home.report(target("pi"), 1).await;
    assert!(rules(&report).is_empty(), "{:?}", rules(&report));
    let make = report
        .top_subjects
        .iter()
        .find(|s| s.subject == "make test")
        .unwrap();
    assert_eq!((make.approvals, make.approvals_not_counted), (0, 10));
    assert_eq!(report.totals.by_resolution["policy_allow"], 10);
}

#[tokio::test]
async fn structural_variants_never_become_rules() {
    let home = Home::new();
    let events: Vec<Value> = (0..8)
        .map(|i| {
            with_id(
                home.pi("make && make install", "allow", "user_approved"),
                &format!("c{i}"),
            )
        })
        .collect();
    home.ingest(events).await;
    let report = home.report(target("claude-code"), 1).await;
    assert_eq!(report.top_subjects[0].subject, "<compound>");
    assert!(rules(&report).is_empty());
}

/// A v1 database built from the v1 SQL, as an earlier vouch left it.
fn v1_database(state: &Path, keys: &Keys, project: &Path) {
    use std::os::unix::fs::PermissionsExt;
    // vouch refuses state it did not make private (as it makes its own).
    std::fs::create_dir_all(state).unwrap();
    std::fs::set_permissions(state, std::fs::Permissions::from_mode(0o700)).unwrap();
    let path = state.join("audit.sqlite");
    drop(std::fs::File::create(&path).unwrap());
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).unwrap();
    let conn = rusqlite::Connection::open(&path).unwrap();
    conn.execute_batch(MIGRATIONS[0]).unwrap();
    conn.pragma_update(None, "user_version", 1).unwrap();
    conn.execute(
        "UPDATE meta SET value = ?1 WHERE key = 'collecting_since'",
        [i64::try_from(NOW_MS - 10 * DAY_MS).unwrap()],
    )
    .unwrap();
    let scope = keys.digest(Domain::Scope, &project.to_string_lossy());
    let day = i64::try_from((NOW_MS - 2 * DAY_MS) / DAY_MS).unwrap();
    for (subject, result, resolution, count) in [
        ("git status", "allow", "user_approved", 40),
        ("cargo build", "allow", "user_approved", 12),
        ("<pipeline>", "deny", "policy_deny", 3),
    ] {
        conn.execute(
            "INSERT INTO daily VALUES (?1, ?2, 'bash', ?3, ?4, ?5, '', '', ?6)",
            rusqlite::params![day, scope, subject, result, resolution, count],
        )
        .unwrap();
    }
    std::fs::write(state.join(KEY_FILE), keys_bytes()).unwrap();
    std::fs::set_permissions(state.join(KEY_FILE), std::fs::Permissions::from_mode(0o600)).unwrap();
}

fn keys_bytes() -> [u8; 32] {
    [42; 32]
}

#[tokio::test]
async fn v1_upgrades_in_place_and_its_rows_never_suggest() {
    let home = Home::new();
    let keys = Keys::from_bytes(keys_bytes());
    v1_database(&home.state(), &keys, &home.project());
    // The first observation opens and migrates it.
    home.ingest(vec![with_id(
        home.pi("npm test", "allow", "user_approved"),
        "n",
    )])
    .await;
    let report = home.report(target("claude-code"), 1).await;
    assert_eq!(report.totals.observations, 40 + 12 + 3 + 1);
    assert_eq!(report.totals.pre_migration, 55);
    assert_eq!(
        report.collecting_since_ms,
        Some(i64::try_from(NOW_MS - 10 * DAY_MS).unwrap())
    );
    assert!(report.recommendations_since_ms.unwrap() >= report.collecting_since_ms.unwrap());
    let git = report
        .top_subjects
        .iter()
        .find(|s| s.subject == "git status")
        .unwrap();
    assert_eq!((git.approvals, git.approvals_not_counted), (0, 40));
    // Only the post-migration approval is evidence.
    assert_eq!(rules(&report), vec!["Bash(npm test)"]);
    let db = Db::open(&home.state(), std::time::Duration::from_secs(1)).unwrap();
    assert_eq!(db.integrity_check().unwrap(), vec!["ok".to_owned()]);
}

#[tokio::test]
async fn a_deferred_call_that_ran_is_a_human_approval() {
    let home = Home::with(|c| {
        c.routing.rules.push(vouch::config::RoutingRule {
            pattern: Some("^make".into()),
            command: None,
            field: vouch::config::RuleField::Command,
            policy: vouch::config::RoutePolicy::Human,
            note: None,
        });
    });
    let request = |i: usize, command: &str| -> Request {
        Request::from_slice(
            json!({"session_id": "s-1", "turn_id": format!("t{i}"), "tool_call_id": format!("toolu_{i}"),
                   "source": "claude-code", "surface": "bash", "command": command,
                   "cwd": home.project()})
            .to_string()
            .as_bytes(),
        )
        .unwrap()
    };
    for i in 0..6 {
        let r = request(i, "make test");
        let decision = home.engine.review(r.clone()).await;
        assert_eq!(decision.outcome(), vouch::decision::Outcome::Defer);
        // Five of them were approved and ran; one was not.
        if i < 5 {
            home.engine.observe_ran(&r);
        }
    }
    // A call vouch did not defer proves nothing when it runs.
    home.engine.observe_ran(&request(9, "ls"));
    assert!(home.engine.flush_audit(std::time::Duration::from_secs(5)));
    let report = home.report(target("claude-code"), 5).await;
    let make = report
        .top_subjects
        .iter()
        .find(|s| s.subject == "make test")
        .unwrap();
    assert_eq!(make.approvals, 5);
    assert_eq!(make.by_result["defer"], 6);
    assert_eq!(rules(&report), vec!["Bash(make test)"]);
    assert!(report.top_subjects.iter().all(|s| s.subject != "ls"));
}

#[tokio::test]
async fn retention_prunes_on_write_and_projects_may_only_shorten_it() {
    let home = Home::with(|c| c.audit.retention_days = 10);
    home.ingest(vec![with_id(
        home.pi("git status", "allow", "user_approved"),
        "old",
    )])
    .await;
    // An event older than the window is not stored at all.
    let mut ancient = with_id(home.pi("git log", "allow", "user_approved"), "ancient");
    ancient["timestamp_ms"] = (NOW_MS - 30 * DAY_MS).into();
    assert_eq!(home.ingest(vec![ancient]).await.expired, 1);
    home.clock.advance(11 * DAY_MS);
    home.ingest(vec![with_id(
        home.pi("npm test", "allow", "user_approved"),
        "new",
    )])
    .await;
    let db = rusqlite::Connection::open(home.state().join("audit.sqlite")).unwrap();
    let days: i64 = db
        .query_row("SELECT COUNT(DISTINCT day) FROM daily", [], |r| r.get(0))
        .unwrap();
    let blocks: i64 = db
        .query_row("SELECT SUM(count) FROM blocks", [], |r| r.get(0))
        .unwrap();
    assert_eq!(
        (days, blocks),
        (1, 1),
        "the old day is gone from days and blocks"
    );
    // --days cannot reach past the retention.
    let err = home
        .engine
        .audit_report(Options {
            days: 11,
            top: 20,
            min_count: 1,
            scope: Scope::All,
            target: target("claude-code"),
        })
        .await
        .unwrap_err();
    assert!(err.to_string().contains("retention of 10 days"), "{err}");

    // A project that shortens retention prunes its own rows sooner.
    std::fs::create_dir_all(home.project().join(".vouch")).unwrap();
    std::fs::write(
        home.project().join(".vouch/config.toml"),
        "[audit]\nretention_days = 2\n",
    )
    .unwrap();
    home.clock.advance(3 * DAY_MS);
    home.ingest(vec![with_id(
        home.pi("cargo build", "allow", "user_approved"),
        "later",
    )])
    .await;
    let report = home.report_days(target("claude-code"), 1, 2).await;
    assert_eq!(report.retention_days, 2);
    let stored = |subject: &str| -> i64 {
        db.query_row(
            "SELECT COUNT(*) FROM daily JOIN subjects ON subjects.id = daily.subject_id \
             WHERE subjects.subject = ?1",
            [subject],
            |r| r.get(0),
        )
        .unwrap()
    };
    assert_eq!(stored("npm test"), 0, "pruned with the project's 2 days");
    assert_eq!(stored("cargo build"), 1);
    // A project cannot lengthen it: the overlay is rejected, the trusted
    // 10 days stay.
    std::fs::write(
        home.project().join(".vouch/config.toml"),
        "[audit]\nretention_days = 90\n",
    )
    .unwrap();
    assert_eq!(
        home.report_days(target("claude-code"), 1, 2)
            .await
            .retention_days,
        10
    );
}

#[tokio::test]
async fn a_project_that_turns_auditing_off_is_not_recorded() {
    let home = Home::new();
    std::fs::create_dir_all(home.project().join(".vouch")).unwrap();
    std::fs::write(
        home.project().join(".vouch/config.toml"),
        "[audit]\nenabled = false\n",
    )
    .unwrap();
    let summary = home
        .ingest(vec![home.pi("git status", "allow", "user_approved")])
        .await;
    assert_eq!((summary.counted, summary.not_audited), (0, 1));
    assert_eq!(
        home.report(target("claude-code"), 1)
            .await
            .totals
            .observations,
        0
    );
}

/// A report with one candidate of every shape, for the format checks.
pub(crate) async fn candidates_report(target: Target) -> Report {
    let home = Home::new();
    let mut events = Vec::new();
    for (n, command) in [
        "git status --short",
        "npm run *",
        "cargo test --release --lib audit",
        "curl --data=@x.json https://example.com",
        "cat README.md",
    ]
    .into_iter()
    .enumerate()
    {
        for i in 0..5 {
            events.push(with_id(
                home.pi(command, "allow", "user_approved"),
                &format!("{n}-{i}"),
            ));
        }
    }
    for i in 0..5 {
        let mut tool = with_id(
            home.pi("exa:search", "allow", "user_approved"),
            &format!("mcp-{i}"),
        );
        tool["surface"] = "mcp".into();
        tool["source"] = target.as_str().into();
        events.push(tool);
    }
    home.ingest(events).await;
    home.report(target, 5).await
}

#[tokio::test]
async fn claude_code_rules_parse_as_settings_json() {
    let report = candidates_report(target("claude-code")).await;
    let settings: Value = serde_json::from_str(&report.suggestions.snippet).unwrap();
    let allow: Vec<&str> = settings["permissions"]["allow"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    for want in [
        "Bash(git status --short)",
        "Bash(npm run:*)",
        "Bash(cargo test --release --lib:*)",
        "Bash(curl --data=* *)",
        "Bash(cat:*)",
        "exa:search",
    ] {
        assert!(allow.contains(&want), "{want} not in {allow:?}");
    }
    let rule = regex::Regex::new(r"^(Bash\([^()]+\)|[A-Za-z0-9_.:-]+)$").unwrap();
    assert!(allow.iter().all(|r| rule.is_match(r)), "{allow:?}");
}

#[tokio::test]
async fn pi_rules_parse_as_a_permission_bash_map() {
    let report = candidates_report(target("pi")).await;
    let config: Value = serde_json::from_str(&report.suggestions.snippet).unwrap();
    let bash = config["permission"]["bash"].as_object().unwrap();
    assert_eq!(bash["git status --short"], "allow");
    assert_eq!(bash["npm run *"], "allow");
    assert_eq!(config["permission"]["mcp"]["exa:search"], "allow");
    assert!(
        report
            .suggestions
            .notes
            .iter()
            .any(|n| n.contains("last matching pattern"))
    );
}

#[tokio::test]
async fn cursor_rules_parse_as_cli_config_json() {
    let report = candidates_report(target("cursor")).await;
    let config: Value = serde_json::from_str(&report.suggestions.snippet).unwrap();
    let allow = config["permissions"]["allow"].as_array().unwrap();
    // Only `cat *` covers every argument: Shell(cat). The others would widen.
    assert_eq!(allow, &vec![Value::from("Shell(cat)")]);
    assert!(
        report
            .suggestions
            .skipped
            .iter()
            .any(|s| s.subject == "git status --short")
    );
}

#[tokio::test]
async fn gemini_rules_parse_as_policy_toml() {
    let report = candidates_report(target("gemini")).await;
    let policy: toml::Table = toml::from_str(&report.suggestions.snippet).unwrap();
    let rules = policy["rule"].as_array().unwrap();
    assert!(!rules.is_empty());
    for rule in rules {
        let rule = rule.as_table().unwrap();
        assert_eq!(rule["decision"].as_str(), Some("allow"));
        assert!(rule["priority"].as_integer().unwrap() <= 999);
        assert!(rule.contains_key("toolName"));
    }
    let prefixes: Vec<&str> = rules
        .iter()
        .filter_map(|r| r.get("commandPrefix")?.as_str())
        .collect();
    assert!(
        prefixes.contains(&"git status --short") && prefixes.contains(&"npm run"),
        "{prefixes:?}"
    );
    assert!(
        rules
            .iter()
            .any(|r| r["toolName"].as_str() == Some("exa:search"))
    );
}

/// A small reader of the Starlark subset Codex rules use: calls with
/// keyword arguments whose values are strings, lists or nested lists.
fn parse_starlark_calls(text: &str) -> Vec<(String, Vec<(String, Value)>)> {
    let mut calls = Vec::new();
    let mut rest = text.trim_start();
    while !rest.is_empty() {
        if let Some(comment) = rest.strip_prefix('#') {
            rest = comment.split_once('\n').map_or("", |(_, r)| r).trim_start();
            continue;
        }
        let open = rest.find('(').unwrap();
        let name = rest[..open].trim().to_owned();
        assert!(
            name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_'),
            "{name}"
        );
        rest = &rest[open + 1..];
        let mut args = Vec::new();
        loop {
            rest = rest.trim_start();
            if let Some(r) = rest.strip_prefix(')') {
                rest = r.trim_start();
                break;
            }
            let eq = rest.find('=').unwrap();
            let key = rest[..eq].trim().to_owned();
            rest = &rest[eq + 1..];
            // The value is valid JSON in this subset (double-quoted strings, lists).
            let mut de = serde_json::Deserializer::from_str(rest).into_iter::<Value>();
            let value = de.next().unwrap().unwrap();
            rest = rest[de.byte_offset()..].trim_start();
            rest = rest.strip_prefix(',').unwrap_or(rest);
            args.push((key, value));
        }
        calls.push((name, args));
    }
    calls
}

#[tokio::test]
async fn codex_rules_parse_as_prefix_rule_calls() {
    let report = candidates_report(target("codex")).await;
    let calls = parse_starlark_calls(&report.suggestions.snippet);
    assert!(!calls.is_empty());
    for (name, args) in &calls {
        assert_eq!(name, "prefix_rule");
        let get = |k: &str| {
            args.iter()
                .find(|(key, _)| key == k)
                .map(|(_, v)| v.clone())
                .unwrap()
        };
        let pattern = get("pattern");
        assert!(pattern.as_array().unwrap().iter().all(Value::is_string));
        assert_eq!(get("decision"), "allow");
        assert!(
            get("justification")
                .as_str()
                .unwrap()
                .contains("approved by hand")
        );
        // Each `match` example is matched by its own pattern.
        assert_eq!(get("match")[0], pattern);
    }
    assert!(
        report
            .suggestions
            .skipped
            .iter()
            .any(|s| s.subject == "exa:search")
    );
    assert!(report.suggestions.rules.iter().all(|r| r.broader));
}

/// The real Codex binary checks the generated rules file (CI sets
/// `VOUCH_CODEX_BIN` to the npm-installed `codex`).
#[tokio::test]
#[ignore = "needs the real codex CLI: VOUCH_CODEX_BIN=… cargo test --release --test it -- --ignored codex_execpolicy"]
async fn codex_execpolicy_accepts_the_generated_rules() {
    let codex =
        std::env::var("VOUCH_CODEX_BIN").expect("VOUCH_CODEX_BIN must name the codex binary");
    let report = candidates_report(target("codex")).await;
    let dir = tempfile::tempdir().unwrap();
    let rules = dir.path().join("vouch.rules");
    std::fs::write(&rules, &report.suggestions.snippet).unwrap();
    for (command, decision) in [
        (&["git", "status", "--short"][..], Some("allow")),
        (&["npm", "run", "lint"][..], Some("allow")),
        (&["rm", "-rf", "/"][..], None),
    ] {
        let out = std::process::Command::new(&codex)
            .args(["execpolicy", "check", "--rules"])
            .arg(&rules)
            .args(command)
            .env("HOME", dir.path())
            .env("CODEX_HOME", dir.path().join(".codex"))
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let verdict: Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(
            verdict["decision"].as_str(),
            decision,
            "{command:?}: {verdict}"
        );
    }
}

/// Every secret of the redaction corpora (the probes included), placed where
/// a command template keeps words or drops values — as the command word, a
/// bare word, an option's value, glued to a short or long option, as a
/// `.netrc` line, as written and shell-quoted — goes through ingest; none of
/// it may appear in `audit.sqlite` or its `-wal`/`-shm` files, while the
/// templates around it demonstrably do.
#[tokio::test]
async fn no_corpus_secret_in_a_templated_command_reaches_audit_sqlite() {
    let mut secrets = Vec::new();
    for file in [
        "secrets.jsonl",
        "secrets_extra.jsonl",
        "redaction_probes.jsonl",
    ] {
        for (_, v) in fixture_lines(file) {
            secrets.push(v["secret"].as_str().unwrap().to_owned());
        }
    }
    assert!(secrets.len() > 200, "{} secrets", secrets.len());
    let home = Home::new();
    let mut events = Vec::new();
    for (i, secret) in secrets.iter().enumerate() {
        let quoted = format!("'{}'", secret.replace('\'', "'\\''"));
        for (j, place) in [
            "{} status",
            "deploy {} now",
            "deploy --token {}",
            "deploy -t{}",
            "deploy --secret={}",
            "mysql -p{} app",
            "htpasswd -b users dev {}",
            "echo machine host login dev password {}",
        ]
        .iter()
        .enumerate()
        {
            for (k, s) in [secret, &quoted].into_iter().enumerate() {
                let event = home.pi(&place.replace("{}", s), "allow", "user_approved");
                events.push(with_id(event, &format!("probe-{i}-{j}-{k}")));
            }
        }
    }
    let summary = home.ingest(events).await;
    assert!(summary.counted > 0, "{summary:?}");
    let mut bytes = Vec::new();
    for suffix in ["", "-wal", "-shm"] {
        let path = home.state().join(format!("audit.sqlite{suffix}"));
        if path.exists() {
            bytes.extend(std::fs::read(path).unwrap());
        }
    }
    let has = |needle: &str| bytes.windows(needle.len()).any(|w| w == needle.as_bytes());
    // The scan reads real rows: the safe templates were written.
    assert!(has("deploy --token *"), "templates were written");
    let leaked: Vec<&String> = secrets.iter().filter(|s| has(s)).collect();
    assert!(leaked.is_empty(), "secrets in audit.sqlite: {leaked:?}");
}

/// Every harness of the adapter registry has its rule language: a
/// `--target` of the same name, in the registry's order, with
/// pi-permission-system's and vouch's own after them (the order
/// `vouch audit report --target` lists them in).
#[test]
fn every_harness_has_a_target_of_its_name_in_registry_order() {
    use vouch::hooks::HarnessId;
    let targets: Vec<&str> = Target::all().map(Target::as_str).collect();
    let mut want = HarnessId::names();
    want.extend(["pi", "vouch"]);
    assert_eq!(targets, want);
    for harness in HarnessId::all() {
        assert_eq!(target(harness.as_str()).as_str(), harness.as_str());
        assert_eq!(
            target(harness.as_str()).language().tool_source(),
            harness.as_str(),
            "a harness's rule language reads the tool names its harness reports"
        );
    }
}
