//! `vouch hook qwen` through the real binary, event by event, with the
//! payloads Qwen Code 0.24.4 sent (`tests/fixtures/harnesses/qwen/`): every
//! answer (allow, deny, defer, abstain) and every fault is one JSON object
//! Qwen reads, exit 0. Also the snippet's fallback for a vouch that cannot
//! run, and the audit's rules in Qwen's `permissions.allow` language.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::support::model_server::{ModelServer, Reply};

const FIXTURES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/harnesses/qwen");

fn fixture(name: &str) -> Value {
    let path = Path::new(FIXTURES).join(name);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str(&text).unwrap()
}

/// A shell `PreToolUse` as captured, running `command`.
fn shell(command: &str) -> Value {
    let mut v = fixture("PreToolUse.run_shell_command.json");
    v["tool_input"]["command"] = command.into();
    v
}

struct Home(tempfile::TempDir);

impl Home {
    fn fresh() -> Home {
        Home(tempfile::tempdir().unwrap())
    }

    fn with(config: &str) -> Home {
        let home = Home::fresh();
        std::fs::write(home.path().join("config.toml"), config).unwrap();
        home
    }

    fn with_model(base_url: &str) -> Home {
        Home::with(&format!(
            "[reviewer]\nprovider = \"openai\"\nbase_url = \"{base_url}\"\napi_key_env = \"\"\ntimeout_ms = 5000\n"
        ))
    }

    fn path(&self) -> &Path {
        self.0.path()
    }
}

struct Run {
    code: i32,
    stdout: String,
    elapsed: Duration,
}

fn command(home: &Home, args: &[&str]) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_vouch"));
    cmd.args(["hook", "qwen", "--home"])
        .arg(home.path())
        .args(args)
        .env_clear()
        .env("HOME", home.path())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null());
    cmd
}

fn run_bytes(home: &Home, stdin: &[u8], args: &[&str]) -> Run {
    let started = Instant::now();
    let mut child = command(home, args).spawn().unwrap();
    child.stdin.take().unwrap().write_all(stdin).unwrap();
    let out = child.wait_with_output().unwrap();
    Run {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8(out.stdout).unwrap(),
        elapsed: started.elapsed(),
    }
}

fn run(home: &Home, input: &Value) -> Run {
    run_bytes(home, input.to_string().as_bytes(), &[])
}

/// What Qwen Code makes of a reply (its `createHookOutput` for
/// `PreToolUse`); panics on anything it would not read as an answer.
#[derive(Debug, PartialEq, Eq)]
enum Seen {
    Nothing,
    Allow,
    Deny(String),
    Ask(String),
}

fn seen(run: &Run) -> Seen {
    assert_eq!(run.code, 0, "vouch exits 0: {}", run.stdout);
    assert_eq!(run.stdout.lines().count(), 1, "one line: {:?}", run.stdout);
    let v: Value = serde_json::from_str(&run.stdout).unwrap();
    if v == json!({}) {
        return Seen::Nothing;
    }
    let h = &v["hookSpecificOutput"];
    assert_eq!(h["hookEventName"], "PreToolUse", "{v}");
    let reason = h["permissionDecisionReason"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    match h["permissionDecision"].as_str() {
        Some("allow") => Seen::Allow,
        Some("deny") => Seen::Deny(reason),
        Some("ask") => Seen::Ask(reason),
        other => panic!("permissionDecision {other:?} in {v}"),
    }
}

fn deny_reason(run: &Run) -> String {
    match seen(run) {
        Seen::Deny(r) => r,
        other => panic!("not a deny: {other:?}"),
    }
}

fn model_allow() -> Reply {
    Reply::verdict(
        json!({"outcome": "allow", "risk_level": "low", "user_authorization": "high",
        "rationale": "the user asked for exactly this", "suggestion": null}),
    )
}

fn model_deny() -> Reply {
    Reply::verdict(
        json!({"outcome": "deny", "risk_level": "medium", "user_authorization": "unknown",
        "rationale": "MODEL-DENY-MARKER: nobody asked for this", "suggestion": "ask the user first"}),
    )
}

fn dead_url() -> String {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    drop(listener);
    format!("http://127.0.0.1:{port}/v1")
}

/// No model configured: every captured event gets `{}` (Qwen's own rules
/// decide), the non-tool events and the after-event too.
#[test]
fn without_a_model_every_captured_event_gets_no_opinion() {
    let home = Home::fresh();
    for name in [
        "PreToolUse.run_shell_command.json",
        "PreToolUse.write_file.json",
        "PostToolUse.run_shell_command.json",
        "SessionStart.json",
        "UserPromptSubmit.json",
        "UserPromptSubmit.second_empty_after_tool.json",
        "Stop.json",
    ] {
        let r = run(&home, &fixture(name));
        assert_eq!(r.stdout, "{}\n", "{name}");
        assert_eq!(r.code, 0, "{name}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_model_allows_and_denies_in_qwens_terms() {
    let server = ModelServer::start(vec![model_allow(), model_deny()]).await;
    let home = Home::with_model(&server.base_url());
    assert_eq!(
        seen(&run(&home, &shell("touch allowed-marker"))),
        Seen::Allow
    );
    let reason = deny_reason(&run(&home, &shell("touch denied-marker")));
    assert!(reason.contains("MODEL-DENY-MARKER"), "{reason}");
    assert!(reason.contains("vouch approve"), "{reason}");
    assert_eq!(server.requests().len(), 2);
}

/// A `defer` asks only where Qwen shows its approval dialog: never in
/// `yolo` (the headless default) or `auto`.
#[test]
fn defer_asks_only_in_prompting_modes() {
    let home = Home::with("[reviewer]\nwithout_model = \"human\"\n");
    for (mode, asks) in [
        ("yolo", false),
        ("auto", false),
        ("default", true),
        ("auto_edit", true),
        ("plan", true),
    ] {
        let mut input = shell("npm install left-pad");
        input["permission_mode"] = mode.into();
        match seen(&run(&home, &input)) {
            Seen::Ask(r) if asks => assert!(r.contains("no reviewer model"), "{mode}: {r}"),
            Seen::Deny(r) if !asks => assert!(r.contains("a human must approve"), "{mode}: {r}"),
            other => panic!("{mode}: {other:?}"),
        }
    }
    // `--defer-as deny` holds in every mode.
    let mut input = shell("npm install left-pad");
    input["permission_mode"] = "default".into();
    let r = run_bytes(&home, input.to_string().as_bytes(), &["--defer-as", "deny"]);
    assert!(deny_reason(&r).contains("a human must approve"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hard_denies_and_qwens_settings_never_reach_the_model() {
    let server = ModelServer::start(vec![]).await;
    let home = Home::with_model(&server.base_url());
    let reason = deny_reason(&run(&home, &shell("echo ok; rm -rf ~/")));
    assert!(reason.contains("Do not retry"), "{reason}");
    // A trusted project's `disableAllHooks` would switch every hook off.
    for (tool, input) in [
        (
            "write_file",
            json!({"file_path": "/srv/project/.qwen/settings.json", "content": "{\"disableAllHooks\": true}"}),
        ),
        (
            "edit",
            json!({"file_path": ".qwen/settings.json", "old_string": "{", "new_string": "{\"disableAllHooks\": true,"}),
        ),
        (
            "write_file",
            json!({"file_path": "/home/dev/.qwen/trustedFolders.json", "content": "{}"}),
        ),
        (
            "run_shell_command",
            json!({"command": "echo '{\"disableAllHooks\":true}' > .qwen/settings.json"}),
        ),
        ("run_shell_command", json!({"command": "rm -rf ~/.qwen"})),
    ] {
        let mut v = fixture("PreToolUse.write_file.json");
        v["tool_name"] = tool.into();
        v["tool_input"] = input;
        let reason = deny_reason(&run(&home, &v));
        assert!(reason.contains("Do not retry"), "{tool}: {reason}");
    }
    assert!(server.requests().is_empty());
}

#[test]
fn faults_are_well_formed_denies() {
    let home = Home::fresh();
    for stdin in [
        &b"not json"[..],
        b"",
        b"[1, 2]",
        b"{\"hook_event_name\": \"PreToolUse\"",
        &[0xff, 0xfe, 0x00][..],
    ] {
        let reason = deny_reason(&run_bytes(&home, stdin, &[]));
        assert!(reason.contains("could not review"), "{stdin:?}: {reason}");
    }
    let mut v = shell("ls");
    v.as_object_mut().unwrap().remove("session_id");
    assert!(deny_reason(&run(&home, &v)).contains("is missing"));
    let mut v = shell("ls");
    v["tool_input"] = json!({"cmd": "ls"});
    assert!(deny_reason(&run(&home, &v)).contains("tool_input.command"));
    // Gemini CLI's event names are not Qwen's.
    let mut v = shell("ls");
    v["hook_event_name"] = "BeforeTool".into();
    assert!(deny_reason(&run(&home, &v)).contains("not one this adapter knows"));
    // An after-event vouch cannot read: the no-op, the tool already ran.
    let mut v = fixture("PostToolUse.run_shell_command.json");
    v["tool_input"] = json!({});
    assert_eq!(run(&home, &v).stdout, "{}\n");
}

#[test]
fn an_unreachable_reviewer_is_a_deny() {
    let home = Home::with_model(&dead_url());
    let reason = deny_reason(&run(&home, &shell("make test")));
    assert!(reason.contains("could not complete"), "{reason}");
}

/// Stdin never closes: the watchdog answers before Qwen's timeout, whose
/// expiry would run the tool.
#[test]
fn a_stuck_call_gets_the_watchdogs_deny_in_time() {
    let home = Home::fresh();
    let started = Instant::now();
    let mut child = command(&home, &["--timeout", "6"]).spawn().unwrap();
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(b"{\"hook_event_name\": ").unwrap();
    let out = child.wait_with_output().unwrap();
    drop(stdin);
    let r = Run {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8(out.stdout).unwrap(),
        elapsed: started.elapsed(),
    };
    assert!(deny_reason(&r).contains("did not finish within 1000 ms"));
    assert!(r.elapsed < Duration::from_secs(5), "{:?}", r.elapsed);
}

/// The latest user message of Qwen's own chat file reaches the reviewer.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_transcripts_user_message_reaches_the_model() {
    let server = ModelServer::start(vec![model_allow()]).await;
    let home = Home::with_model(&server.base_url());
    let mut input = shell("touch ran-x");
    input["transcript_path"] = format!("{FIXTURES}/transcript.at_pre_tool_use.jsonl").into();
    input["tool_call_id"] = "call_e2e_1".into();
    assert_eq!(seen(&run(&home, &input)), Seen::Allow);
    let body = &server.requests()[0].raw_body;
    assert!(body.contains("please RUN<<<touch ran-x>>>"), "{body}");
    assert!(
        !body.contains("attribution_snapshot"),
        "system records are not evidence"
    );
}

fn snippet_text(home: &Home) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_vouch"))
        .args(["hook", "snippet", "qwen"])
        .env_clear()
        .env("HOME", home.path())
        .env("VOUCH_HOME", home.path())
        .output()
        .unwrap();
    assert!(out.status.success());
    String::from_utf8(out.stdout).unwrap()
}

/// The snippet's `PreToolUse` command, run by `bash -c` as Qwen runs it:
/// vouch's own reply (a hard deny: Qwen Code gets no inert allow, which
/// would need a rewrite it ignores) passes through; a vouch that is missing or dies is
/// exit 2 with a reason on stderr, which Qwen reads as a block.
#[test]
fn the_snippet_blocks_when_vouch_cannot_run() {
    let home = Home::fresh();
    let text = snippet_text(&home);
    let v: Value = serde_json::from_str(&text).unwrap();
    let hook = &v["hooks"]["PreToolUse"][0]["hooks"][0];
    assert_eq!(v["hooks"]["PreToolUse"][0]["matcher"], "");
    assert_eq!(hook["timeout"], 100);
    let gate = hook["command"].as_str().unwrap();
    assert!(gate.contains("--timeout 100"), "{gate}");
    assert!(gate.contains("--home"), "{gate}");

    let bash = |command: &str| {
        let mut child = Command::new("bash")
            .args(["-c", command])
            .env_clear()
            .env("HOME", home.path())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        // A shell whose vouch is missing exits without reading its stdin:
        // the write may then fail with a broken pipe, which is its answer.
        let _ = child
            .stdin
            .take()
            .unwrap()
            .write_all(shell("rm -rf ~/").to_string().as_bytes());
        child.wait_with_output().unwrap()
    };
    let out = bash(gate);
    assert_eq!(out.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&out.stdout).contains("permissionDecision"));

    let exe = PathBuf::from(env!("CARGO_BIN_EXE_vouch"))
        .display()
        .to_string();
    for broken in ["/nonexistent/vouch", "bash -c 'kill -9 $$'", "false"] {
        let out = bash(&gate.replacen(&exe, broken, 1));
        assert_eq!(out.status.code(), Some(2), "{broken}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stderr.contains("vouch could not run"), "{broken}: {stderr}");
    }
}

#[test]
fn audit_rules_are_qwen_permission_rules() {
    use vouch::audit::subject::Kind;
    use vouch::audit::targets::{Candidate, Target, suggest};
    let candidate = |subject: &str, kind| Candidate {
        surface: "bash".into(),
        kind,
        subject: subject.into(),
        approvals: 5,
        sources: vec!["qwen".into()],
    };
    let s = suggest(
        "qwen".parse::<Target>().unwrap(),
        &[
            candidate("npm run *", Kind::Template),
            candidate("git status --short", Kind::Template),
            candidate("git push *", Kind::Template),
            candidate("docker run img:*", Kind::Template),
            candidate("mcp__github__get_issue", Kind::Tool),
        ],
        &["git push --force *".to_owned()],
        false,
    );
    assert_eq!(s.file, ".qwen/settings.json");
    let v: Value = serde_json::from_str(&s.snippet).unwrap();
    let allow: Vec<&str> = v["permissions"]["allow"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r.as_str().unwrap())
        .collect();
    assert_eq!(
        allow,
        [
            "Bash(npm run *)",
            "Bash(git status --short)",
            "mcp__github__get_issue"
        ]
    );
    let broader: Vec<bool> = s.rules.iter().map(|r| r.broader).collect();
    assert_eq!(broader, [false, true, false]);
    let skipped: Vec<&str> = s.skipped.iter().map(|r| r.subject.as_str()).collect();
    assert_eq!(skipped, ["git push *", "docker run img:*"]);
}

/// Writes the settings the e2e gives the real Qwen Code binary, to show it
/// accepts the generated rule (`e2e/harnesses/run.sh qwen`).
#[test]
#[ignore = "run by e2e/harnesses/run.sh: VOUCH_QWEN_RULES_OUT=FILE cargo test --test it -- --ignored qwen_rules_for_the_e2e"]
fn qwen_rules_for_the_e2e() {
    use vouch::audit::subject::Kind;
    use vouch::audit::targets::{Candidate, Target, suggest};
    let out = std::env::var("VOUCH_QWEN_RULES_OUT").expect("VOUCH_QWEN_RULES_OUT names the file");
    let s = suggest(
        "qwen".parse::<Target>().unwrap(),
        &[Candidate {
            surface: "bash".into(),
            kind: Kind::Template,
            subject: "touch ran-rule *".into(),
            approvals: 5,
            sources: vec!["qwen".into()],
        }],
        &[],
        true,
    );
    std::fs::write(out, s.snippet).unwrap();
}
