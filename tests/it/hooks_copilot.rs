//! `vouch hook copilot` through the real binary, for every captured GitHub
//! Copilot CLI payload (`tests/fixtures/harnesses/copilot/`: the shared
//! notes' fixtures with their placeholders made absolute, plus our own),
//! against a scripted model server on 127.0.0.1:0. Each reply is read as
//! Copilot 1.0.102 reads it: `permissionDecision` in one JSON object, exit 0
//! (Copilot runs the tool on empty or non-JSON output, so that is checked
//! to never happen on the pre-tool path).

use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};

use serde_json::{Value, json};

use crate::support::model_server::{ModelServer, Reply};

const FIXTURES: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/fixtures/harnesses/copilot"
);
const SESSION: &str = "5d103ec3-9d10-4bb2-97fe-7c907703e7e1";

fn fixture(name: &str) -> Value {
    let path = Path::new(FIXTURES).join(name);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str(&text).unwrap()
}

/// A vouch home (also the hook's `$HOME`, where Copilot's session log is
/// looked for) with a model, or none.
fn home(config: Option<&str>) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    if let Some(text) = config {
        std::fs::write(dir.path().join("config.toml"), text).unwrap();
    }
    dir
}

fn with_model(base_url: &str) -> tempfile::TempDir {
    home(Some(&format!(
        "[reviewer]\nprovider = \"openai\"\nbase_url = \"{base_url}\"\napi_key_env = \"\"\ntimeout_ms = 5000\n"
    )))
}

/// `vouch hook copilot` with nothing of the test's environment; stdout.
fn run(home: &Path, stdin: &[u8], args: &[&str]) -> String {
    let mut child = Command::new(env!("CARGO_BIN_EXE_vouch"))
        .args(["hook", "copilot", "--home"])
        .arg(home)
        .args(args)
        .env_clear()
        .env("HOME", home)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(stdin).unwrap();
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(0), "vouch always exits 0");
    String::from_utf8(out.stdout).unwrap()
}

fn run_json(home: &Path, input: &Value, args: &[&str]) -> Value {
    let stdout = run(home, input.to_string().as_bytes(), args);
    reply(&stdout)
}

/// One JSON object on one line, with no key Copilot would act on besides
/// the decision (never `modifiedArgs`).
fn reply(stdout: &str) -> Value {
    assert_eq!(stdout.lines().count(), 1, "one line: {stdout:?}");
    let v: Value = serde_json::from_str(stdout).unwrap_or_else(|e| panic!("{e}: {stdout}"));
    let obj = v.as_object().unwrap();
    for key in obj.keys() {
        assert!(
            ["permissionDecision", "permissionDecisionReason"].contains(&key.as_str()),
            "unexpected key {key} in {stdout}"
        );
    }
    v
}

fn decision(v: &Value) -> &str {
    v.get("permissionDecision")
        .and_then(Value::as_str)
        .unwrap_or("abstain")
}

fn reason(v: &Value) -> &str {
    v["permissionDecisionReason"].as_str().unwrap_or_default()
}

fn bash(command: &str) -> Value {
    let mut v = fixture("preToolUse.bash.json");
    v["toolArgs"]["command"] = command.into();
    v
}

#[test]
fn every_fixture_without_a_model() {
    let home = home(None);
    let cases = [
        // No model: vouch abstains and Copilot's own rules decide.
        ("preToolUse.bash.json", "abstain", ""),
        ("preToolUse.create.json", "abstain", ""),
        ("preToolUse.edit.json", "abstain", ""),
        ("preToolUse.view.json", "abstain", ""),
        ("preToolUse.grep.json", "abstain", ""),
        ("preToolUse.task.json", "abstain", ""),
        // Hard denies decide without a model.
        ("preToolUse.bash.hard-deny.json", "deny", "Do not retry"),
        (
            "preToolUse.create-repo-hook.json",
            "deny",
            "GitHub Copilot CLI's hooks, settings or session log",
        ),
        // After the fact and events about no tool: the no-op.
        ("postToolUse.bash.json", "abstain", ""),
        ("sessionStart.json", "abstain", ""),
        ("sessionEnd.json", "abstain", ""),
        ("userPromptSubmitted.json", "abstain", ""),
        ("agentStop.json", "abstain", ""),
        ("permissionRequest.bash.json", "abstain", ""),
    ];
    for (name, want, needle) in cases {
        let v = run_json(home.path(), &fixture(name), &[]);
        assert_eq!(decision(&v), want, "{name}: {v}");
        assert!(reason(&v).contains(needle), "{name}: {v}");
    }
}

#[test]
fn a_claude_style_payload_is_refused_in_the_claude_shape() {
    let home = home(None);
    let stdout = run(
        home.path(),
        fixture("PreToolUse.claude_style.bash.json")
            .to_string()
            .as_bytes(),
        &[],
    );
    let v: Value = serde_json::from_str(&stdout).unwrap();
    let out = &v["hookSpecificOutput"];
    assert_eq!(out["permissionDecision"], "deny", "{stdout}");
    assert!(
        out["permissionDecisionReason"]
            .as_str()
            .unwrap()
            .contains("vouch hook snippet copilot")
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_reviewer_allows_and_denies_in_copilots_terms() {
    let server = ModelServer::start(vec![
        Reply::verdict(json!({"outcome": "allow", "risk_level": "low",
            "user_authorization": "high", "rationale": "asked for", "suggestion": null})),
        Reply::verdict(json!({"outcome": "deny", "risk_level": "medium",
            "user_authorization": "unknown", "rationale": "MODEL-DENY-MARKER nobody asked",
            "suggestion": null})),
    ])
    .await;
    let home = with_model(&server.base_url());
    let v = run_json(home.path(), &bash("touch allowed-marker"), &[]);
    assert_eq!(v, json!({"permissionDecision": "allow"}));
    let v = run_json(home.path(), &bash("touch denied-marker"), &[]);
    assert_eq!(decision(&v), "deny", "{v}");
    assert!(reason(&v).contains("MODEL-DENY-MARKER"), "{v}");
    assert!(reason(&v).contains("not a human"), "{v}");
    assert_eq!(server.requests().len(), 2);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hard_denies_never_reach_the_reviewer() {
    let server = ModelServer::start(vec![]).await;
    let home = with_model(&server.base_url());
    for input in [
        bash("echo ok; rm -rf ~/"),
        fixture("preToolUse.create-repo-hook.json"),
        json!({"sessionId": SESSION, "timestamp": 1, "cwd": "/home/u/project",
               "toolName": "edit", "toolArgs": {"path": "/home/u/.copilot/settings.json",
               "old_str": "a", "new_str": "b"}}),
        bash("echo '{\"disableAllHooks\": true}' > .github/copilot/settings.json"),
    ] {
        let v = run_json(home.path(), &input, &[]);
        assert_eq!(decision(&v), "deny", "{input}: {v}");
        assert!(reason(&v).contains("Do not retry"), "{v}");
    }
    assert!(server.requests().is_empty());
}

#[test]
fn defer_is_a_deny_unless_the_user_opts_into_ask() {
    let home = home(Some("[reviewer]\nwithout_model = \"human\"\n"));
    let input = bash("npm install left-pad");
    let v = run_json(home.path(), &input, &[]);
    assert_eq!(decision(&v), "deny", "{v}");
    assert!(reason(&v).contains("a human must approve"), "{v}");
    let v = run_json(home.path(), &input, &["--defer-as", "ask"]);
    assert_eq!(decision(&v), "ask", "{v}");
    assert!(reason(&v).contains("no reviewer model"), "{v}");
}

#[test]
fn every_fault_is_a_well_formed_deny() {
    // The reviewer is down.
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let dead = format!(
        "http://127.0.0.1:{}/v1",
        listener.local_addr().unwrap().port()
    );
    drop(listener);
    let down = with_model(&dead);
    let v = run_json(down.path(), &bash("make test"), &[]);
    assert_eq!(decision(&v), "deny", "{v}");
    assert!(reason(&v).contains("could not complete"), "{v}");

    let fresh = home(None);
    let faults: Vec<Vec<u8>> =
        vec![
        b"not json".to_vec(),
        b"".to_vec(),
        b"[1, 2]".to_vec(),
        b"{\"sessionId\": \"s\"".to_vec(),
        vec![0xff, 0xfe, 0x00],
        // A tool call with a field missing or of the wrong type.
        json!({"timestamp": 1, "cwd": "/p", "toolName": "bash", "toolArgs": {"command": "ls"}})
            .to_string()
            .into_bytes(),
        json!({"sessionId": "s", "cwd": "/p", "toolArgs": {"command": "ls"}})
            .to_string()
            .into_bytes(),
        json!({"sessionId": "s", "cwd": "/p", "toolName": "bash", "toolArgs": "ls"})
            .to_string()
            .into_bytes(),
        json!({"sessionId": "s", "cwd": "/p", "toolName": "bash", "toolArgs": {}})
            .to_string()
            .into_bytes(),
        json!({"sessionId": "s", "cwd": "p", "toolName": "bash", "toolArgs": {"command": "ls"}})
            .to_string()
            .into_bytes(),
        // Nothing recognisable at all.
        json!({"sessionId": "s", "cwd": "/p"}).to_string().into_bytes(),
    ];
    for stdin in faults {
        let v = reply(&run(fresh.path(), &stdin, &[]));
        assert_eq!(
            decision(&v),
            "deny",
            "{:?}: {v}",
            String::from_utf8_lossy(&stdin)
        );
        assert!(reason(&v).contains("could not review"), "{v}");
    }
    // A broken configuration.
    let broken = home(Some("[reviewer\n"));
    let v = run_json(broken.path(), &bash("ls"), &[]);
    assert_eq!(decision(&v), "deny", "{v}");
}

#[test]
fn unreadable_post_tool_use_gets_the_no_op() {
    let home = home(None);
    let mut post = fixture("postToolUse.bash.json");
    post["toolArgs"] = json!({});
    let v = run_json(home.path(), &post, &[]);
    assert_eq!(v, json!({}), "the tool already ran");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_session_log_gives_the_reviewer_the_users_message() {
    let server = ModelServer::start(vec![Reply::verdict(json!({"outcome": "allow",
        "risk_level": "low", "user_authorization": "high", "rationale": "asked for",
        "suggestion": null}))])
    .await;
    let home = with_model(&server.base_url());
    let dir = home.path().join(".copilot/session-state").join(SESSION);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::copy(
        Path::new(FIXTURES).join("events.jsonl"),
        dir.join("events.jsonl"),
    )
    .unwrap();
    let v = run_json(home.path(), &bash("touch ran-1"), &[]);
    assert_eq!(v, json!({"permissionDecision": "allow"}));
    let bodies: Vec<String> = server.requests().into_iter().map(|r| r.raw_body).collect();
    assert_eq!(bodies.len(), 1);
    assert!(bodies[0].contains("RUN<<<touch ran-1>>>"), "{}", bodies[0]);
    assert!(
        !bodies[0].contains("skill text"),
        "an injected message is not the user's"
    );
}

#[test]
fn the_snippet_is_native_and_fails_closed() {
    let home = home(None);
    let out = Command::new(env!("CARGO_BIN_EXE_vouch"))
        .args(["hook", "snippet", "copilot"])
        .env_clear()
        .env("HOME", home.path())
        .env("VOUCH_HOME", home.path())
        .output()
        .unwrap();
    assert!(out.status.success());
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["version"], 1);
    for event in ["preToolUse", "postToolUse"] {
        let hook = &v["hooks"][event][0];
        assert_eq!(hook["type"], "command");
        let command = hook["bash"].as_str().unwrap();
        assert!(command.contains(" hook copilot --home "), "{command}");
        assert!(command.ends_with("--timeout 100"), "{command}");
        // Copilot runs the tool on a timeout: its timeout outlives vouch's.
        assert_eq!(hook["timeoutSec"], 100);
    }
    let notes = String::from_utf8(out.stderr).unwrap();
    assert!(notes.contains(".copilot/hooks/vouch.json"), "{notes}");
}

/// The `--allow-tool` patterns in a generated suggestion.
fn allow_tool_patterns(snippet: &str) -> Vec<String> {
    let re = regex::Regex::new(r"--allow-tool '([^']*)'").unwrap();
    re.captures_iter(snippet).map(|c| c[1].to_owned()).collect()
}

#[tokio::test]
async fn audit_rules_parse_as_allow_tool_patterns() {
    use vouch::audit::targets::Target;
    use vouch::audit::targets::copilot::parse_pattern;
    let report = crate::audit::candidates_report("copilot".parse::<Target>().unwrap()).await;
    let snippet = &report.suggestions.snippet;
    assert!(snippet.contains("\ncopilot"), "{snippet}");
    let patterns = allow_tool_patterns(snippet);
    assert!(!patterns.is_empty(), "{snippet}");
    for p in &patterns {
        let (kind, arg) = parse_pattern(p).unwrap_or_else(|| panic!("{p} does not parse"));
        assert_eq!(kind, "shell", "{p}");
        let arg = arg.unwrap();
        // A word prefix: literal words, then the `:*` wildcard.
        let words = arg.strip_suffix(":*").unwrap_or_else(|| panic!("{p}"));
        assert!(!words.contains([':', '*', '(', ')', '\'']), "{p}");
    }
    for want in [
        "shell(npm run:*)",
        "shell(cat:*)",
        "shell(git status --short:*)",
    ] {
        assert!(
            patterns.iter().any(|p| p == want),
            "{want} not in {patterns:?}"
        );
    }
    // Tool rules need the MCP server's name, which the audit does not keep.
    assert!(
        report
            .suggestions
            .skipped
            .iter()
            .any(|s| s.subject == "exa:search")
    );
}

/// The pinned Copilot binary (`VOUCH_COPILOT_BIN`) accepts the generated
/// patterns: an invalid `--allow-tool` fails at start-up with "Invalid
/// --allow-tool value" (shown with a control), a valid one gets as far as
/// calling the (dead) model provider. Run by `e2e/harnesses/run.sh copilot`.
#[tokio::test]
#[ignore = "needs the Copilot CLI binary in VOUCH_COPILOT_BIN"]
async fn copilot_accepts_the_generated_rules() {
    use vouch::audit::targets::Target;
    let bin = std::env::var("VOUCH_COPILOT_BIN").expect("VOUCH_COPILOT_BIN");
    let report = crate::audit::candidates_report("copilot".parse::<Target>().unwrap()).await;
    let patterns = allow_tool_patterns(&report.suggestions.snippet);
    assert!(!patterns.is_empty());
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let dead = format!(
        "http://127.0.0.1:{}/v1",
        listener.local_addr().unwrap().port()
    );
    drop(listener);
    let home = tempfile::tempdir().unwrap();
    let run = |rules: &[String]| {
        let mut cmd = Command::new(&bin);
        for r in rules {
            cmd.arg("--allow-tool").arg(r);
        }
        let out = cmd
            .args(["-p", "hello"])
            .current_dir(home.path())
            .env_clear()
            .env("PATH", "/usr/bin:/bin")
            .env("HOME", home.path())
            .env("HTTPS_PROXY", "http://127.0.0.1:9")
            .env("NO_PROXY", "127.0.0.1,localhost")
            .env("COPILOT_PROVIDER_TYPE", "openai")
            .env("COPILOT_PROVIDER_BASE_URL", &dead)
            .env("COPILOT_PROVIDER_API_KEY", "x")
            .env("COPILOT_MODEL", "fake-model")
            .env("COPILOT_OFFLINE", "true")
            .stdin(Stdio::null())
            .output()
            .unwrap();
        format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    };
    let control = run(&["shell(git".to_owned()]);
    assert!(control.contains("Invalid --allow-tool value"), "{control}");
    let out = run(&patterns);
    assert!(!out.contains("Invalid"), "{patterns:?}: {out}");
}

/// Copilot runs the tool when its hook times out, so vouch must answer
/// first: a slow reviewer and a stuck stdin both get a deny well inside the
/// hook's `--timeout` (7 s here, vouch's margin 5 s).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_deny_comes_before_copilots_timeout() {
    use std::time::{Duration, Instant};
    let server = ModelServer::start(vec![
        Reply::verdict(json!({"outcome": "allow", "risk_level": "low",
            "user_authorization": "high", "rationale": "late", "suggestion": null}))
        .delayed(Duration::from_secs(20)),
    ])
    .await;
    let slow = with_model(&server.base_url());
    let started = Instant::now();
    let v = run_json(slow.path(), &bash("make"), &["--timeout", "7"]);
    assert_eq!(decision(&v), "deny", "{v}");
    assert!(
        started.elapsed() < Duration::from_secs(6),
        "{:?}",
        started.elapsed()
    );

    let fresh = home(None);
    let started = Instant::now();
    let mut child = Command::new(env!("CARGO_BIN_EXE_vouch"))
        .args(["hook", "copilot", "--timeout", "6", "--home"])
        .arg(fresh.path())
        .env_clear()
        .env("HOME", fresh.path())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(b"{\"sessionId\": ").unwrap();
    let out = child.wait_with_output().unwrap();
    drop(stdin);
    assert_eq!(out.status.code(), Some(0));
    let v = reply(&String::from_utf8(out.stdout).unwrap());
    assert_eq!(decision(&v), "deny", "{v}");
    assert!(reason(&v).contains("did not finish within"), "{v}");
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "{:?}",
        started.elapsed()
    );
}

/// `vouch audit report` totals of this home (the hook's `--home`).
fn resolutions(home: &Path) -> Value {
    let out = Command::new(env!("CARGO_BIN_EXE_vouch"))
        .args(["audit", "report", "--scope", "all", "--format", "json"])
        .env_clear()
        .env("VOUCH_HOME", home)
        .env("HOME", home)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    report["totals"]["by_resolution"].clone()
}

/// A trusted repository's later hook can rewrite what vouch allowed
/// (`modifiedArgs`); `postToolUse` carries what ran. A call that ran as
/// allowed adds nothing; one whose arguments match no decision of the
/// session is counted as `ran_unreviewed`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_call_that_ran_with_other_arguments_is_counted_unreviewed() {
    let allow = || {
        Reply::verdict(json!({"outcome": "allow", "risk_level": "low",
            "user_authorization": "high", "rationale": "asked for", "suggestion": null}))
    };
    let server = ModelServer::start(vec![allow(), allow()]).await;
    let home = with_model(&server.base_url());
    let post = |command: &str| {
        let mut v = fixture("postToolUse.bash.json");
        v["toolArgs"]["command"] = command.into();
        v
    };
    for command in ["touch reviewed-one", "touch reviewed-two"] {
        let v = run_json(home.path(), &bash(command), &[]);
        assert_eq!(decision(&v), "allow", "{v}");
    }
    // The first ran as vouch allowed it; the second was rewritten.
    for command in ["touch reviewed-one", "touch rewritten-after-vouch"] {
        let v = run_json(home.path(), &post(command), &[]);
        assert_eq!(v, json!({}));
    }
    let by = resolutions(home.path());
    assert_eq!(by["ran_unreviewed"], 1, "{by}");
    assert!(by.get("ran_after_deny").is_none(), "{by}");
}
