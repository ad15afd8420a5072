//! `vouch hook <harness>` through the real binary: every captured event of
//! every harness (`tests/fixtures/harnesses/`, copied from the harness
//! write-ups, plus our own), against a scripted model server on 127.0.0.1:0
//! and a real state directory. Each reply is read the way the harness reads
//! it (Codex replies are also checked against Codex's own output schemas,
//! since Codex runs the command on any unknown field).

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::support::model_server::{ModelServer, Reply};

const FIXTURES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/harnesses");

fn fixture(harness: &str, name: &str) -> Value {
    let path = Path::new(FIXTURES).join(harness).join(name);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str(&text).unwrap()
}

/// A vouch home for the hook: `config.toml` (a model, or none) and `state/`.
struct Home {
    dir: tempfile::TempDir,
}

impl Home {
    fn fresh() -> Home {
        Home {
            dir: tempfile::tempdir().unwrap(),
        }
    }

    fn with_model(base_url: &str) -> Home {
        let home = Home::fresh();
        home.write_config(&format!(
            "[reviewer]\nprovider = \"openai\"\nbase_url = \"{base_url}\"\napi_key_env = \"\"\ntimeout_ms = 5000\n"
        ));
        home
    }

    fn write_config(&self, text: &str) {
        std::fs::write(self.dir.path().join("config.toml"), text).unwrap();
    }

    fn path(&self) -> &Path {
        self.dir.path()
    }
}

/// One hook run: exit code, stdout, how long it took.
struct Run {
    code: i32,
    stdout: String,
    elapsed: Duration,
}

/// `vouch hook HARNESS` for `home`, with nothing of the test's own
/// environment, stdin and stdout piped and stderr discarded.
fn hook_command(home: &Home, harness: &str, args: &[&str]) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_vouch"));
    cmd.args(["hook", harness, "--home"])
        .arg(home.path())
        .args(args)
        .env_clear()
        .env("HOME", home.path())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null());
    cmd
}

fn run_with(home: &Home, harness: &str, stdin: &[u8], args: &[&str], env: &[(&str, &str)]) -> Run {
    let started = Instant::now();
    let mut cmd = hook_command(home, harness, args);
    cmd.stderr(Stdio::piped());
    for (k, v) in env {
        cmd.env(k, v);
    }
    let mut child = cmd.spawn().unwrap();
    child.stdin.take().unwrap().write_all(stdin).unwrap();
    let out = child.wait_with_output().unwrap();
    Run {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8(out.stdout).unwrap(),
        elapsed: started.elapsed(),
    }
}

fn run(home: &Home, harness: &str, input: &Value) -> Run {
    run_with(home, harness, input.to_string().as_bytes(), &[], &[])
}

/// What a harness makes of a reply.
#[derive(Debug, PartialEq, Eq)]
enum Seen {
    Abstain,
    Allow,
    Deny(String),
    Ask(String),
}

impl Seen {
    fn kind(&self) -> &'static str {
        match self {
            Seen::Abstain => "abstain",
            Seen::Allow => "allow",
            Seen::Deny(_) => "deny",
            Seen::Ask(_) => "ask",
        }
    }

    fn reason(&self) -> &str {
        match self {
            Seen::Deny(r) | Seen::Ask(r) => r,
            Seen::Abstain | Seen::Allow => "",
        }
    }
}

/// Reads a reply as `harness` does; panics on anything the harness would
/// not accept as a well-formed answer.
fn seen(harness: &str, event: &str, stdout: &str) -> Seen {
    if stdout.trim().is_empty() {
        assert_eq!(harness, "codex", "only Codex takes an empty reply");
        return Seen::Abstain;
    }
    assert_eq!(stdout.lines().count(), 1, "one line: {stdout:?}");
    let v: Value = serde_json::from_str(stdout).unwrap_or_else(|e| panic!("{e}: {stdout}"));
    if harness == "codex" {
        check_codex_schema(event, &v);
    }
    if v == json!({}) {
        return Seen::Abstain;
    }
    let text = |v: &Value| v.as_str().unwrap_or_default().to_owned();
    match harness {
        "claude-code" | "codex" => {
            let h = &v["hookSpecificOutput"];
            if let Some(d) = h["permissionDecision"].as_str() {
                let reason = text(&h["permissionDecisionReason"]);
                return match d {
                    "allow" => Seen::Allow,
                    "deny" => Seen::Deny(reason),
                    "ask" => Seen::Ask(reason),
                    other => panic!("permissionDecision {other}"),
                };
            }
            match h["decision"]["behavior"].as_str() {
                Some("allow") => Seen::Allow,
                Some("deny") => Seen::Deny(text(&h["decision"]["message"])),
                other => panic!("not a decision: {other:?} in {v}"),
            }
        }
        "gemini" => match v["decision"].as_str() {
            Some("allow") => Seen::Allow,
            Some("deny") => Seen::Deny(text(&v["reason"])),
            Some("ask") => Seen::Ask(text(&v["reason"])),
            other => panic!("gemini decision {other:?}"),
        },
        "cursor" => {
            let reason = text(&v["user_message"]);
            assert!(
                v["permission"] == "allow" || v["agent_message"] == v["user_message"],
                "the reason goes in both messages: {v}"
            );
            match v["permission"].as_str() {
                Some("allow") => Seen::Allow,
                Some("deny") => Seen::Deny(reason),
                Some("ask") => Seen::Ask(reason),
                other => panic!("cursor permission {other:?}"),
            }
        }
        other => panic!("harness {other}"),
    }
}

/// Every key of a Codex reply is one its output schema allows
/// (`additionalProperties: false` throughout), and enums hold.
fn check_codex_schema(event: &str, reply: &Value) {
    let file = match event {
        "PreToolUse" => "pre-tool-use",
        "PermissionRequest" => "permission-request",
        "PostToolUse" => "post-tool-use",
        other => panic!("no Codex schema for {other}"),
    };
    let schema = fixture(
        "codex",
        &format!("schemas/{file}.command.output.schema.json"),
    );
    check_against(&schema, &schema, reply, "$");
}

fn check_against(root: &Value, schema: &Value, v: &Value, at: &str) {
    let schema = resolve(root, schema);
    if let Some(values) = schema["enum"].as_array() {
        assert!(values.contains(v), "{at}: {v} not in {values:?}");
    }
    if let Some(c) = schema.get("const") {
        assert_eq!(v, c, "{at}");
    }
    let Some(obj) = v.as_object() else { return };
    let props = schema["properties"]
        .as_object()
        .cloned()
        .unwrap_or_default();
    for key in schema["required"].as_array().into_iter().flatten() {
        assert!(
            obj.contains_key(key.as_str().unwrap()),
            "{at}: missing {key}"
        );
    }
    for (key, value) in obj {
        let sub = props
            .get(key)
            .unwrap_or_else(|| panic!("{at}: `{key}` is not allowed by Codex's schema"));
        check_against(root, sub, value, &format!("{at}.{key}"));
    }
}

fn resolve<'a>(root: &'a Value, schema: &'a Value) -> &'a Value {
    if let Some(r) = schema["$ref"].as_str() {
        let name = r.trim_start_matches("#/definitions/");
        return resolve(root, &root["definitions"][name]);
    }
    if let Some(first) = schema["allOf"].as_array().and_then(|a| a.first()) {
        return resolve(root, first);
    }
    schema
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

/// A loopback port with nothing listening on it.
fn dead_url() -> String {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    drop(listener);
    format!("http://127.0.0.1:{port}/v1")
}

#[test]
fn every_fixture_on_a_fresh_install() {
    let table = std::fs::read_to_string(Path::new(FIXTURES).join("fresh_install.jsonl")).unwrap();
    let mut count = 0;
    for line in table.lines().filter(|l| !l.trim().is_empty()) {
        let case: Value = serde_json::from_str(line).unwrap();
        let harness = case["harness"].as_str().unwrap();
        let input = fixture(harness, case["fixture"].as_str().unwrap());
        let event = input["hook_event_name"].as_str().unwrap().to_owned();
        let home = Home::fresh();
        let r = run(&home, harness, &input);
        assert_eq!(r.code, 0, "{line}");
        let got = seen(harness, &event, &r.stdout);
        assert_eq!(got.kind(), case["answer"], "{line}: {}", r.stdout);
        if let Some(needle) = case["contains"].as_str() {
            assert!(got.reason().contains(needle), "{line}: {}", got.reason());
        }
        count += 1;
    }
    assert_eq!(count, 37);
}

/// No reviewer model configured (`tests/fixtures/harnesses/no_model.jsonl`):
/// a call that is neither a hard deny nor decided by routing gets the
/// harness's own "no opinion" — exactly these stdout bytes, exit 0 — so the
/// harness decides as if vouch were not installed; with `without_model =
/// "human"` it gets the harness's defer form. Hard denies and routing rules
/// still decide first.
#[test]
fn without_a_model_each_harness_gets_its_abstain() {
    let table = std::fs::read_to_string(Path::new(FIXTURES).join("no_model.jsonl")).unwrap();
    let mut count = 0;
    for line in table.lines().filter(|l| !l.trim().is_empty()) {
        let case: Value = serde_json::from_str(line).unwrap();
        let name = case["case"].as_str().unwrap();
        let harness = case["harness"].as_str().unwrap();
        let mut input = fixture(harness, case["fixture"].as_str().unwrap());
        for (key, value) in case["set"].as_object().into_iter().flatten() {
            input[key] = value.clone();
        }
        if let Some(command) = case.get("command") {
            match harness {
                "cursor" => input["command"] = command.clone(),
                _ => input["tool_input"]["command"] = command.clone(),
            }
        }
        let home = Home::fresh();
        if let Some(text) = case["config"].as_str() {
            home.write_config(text);
        }
        let args: Vec<&str> = case["args"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|a| a.as_str().unwrap())
            .collect();
        let env: Vec<(&str, &str)> = case["env"]
            .as_object()
            .into_iter()
            .flatten()
            .map(|(k, v)| (k.as_str(), v.as_str().unwrap()))
            .collect();
        let r = run_with(&home, harness, input.to_string().as_bytes(), &args, &env);
        assert_eq!(r.code, 0, "{name}");
        let event = input["hook_event_name"].as_str().unwrap();
        let got = seen(harness, event, &r.stdout);
        if let Some(stdout) = case["stdout"].as_str() {
            assert_eq!(r.stdout, stdout, "{name}");
            assert_eq!(got, Seen::Abstain, "{name}");
        } else {
            assert_eq!(got.kind(), case["answer"], "{name}: {}", r.stdout);
            let needle = case["contains"].as_str().unwrap();
            assert!(got.reason().contains(needle), "{name}: {}", got.reason());
        }
        count += 1;
    }
    assert_eq!(count, 27);
}

/// The primary shell event of each harness, with a command.
fn shell_event(harness: &str, command: &str) -> (Value, &'static str) {
    match harness {
        "claude-code" => {
            let mut v = fixture("claude-code", "pretooluse-http.json");
            v["permission_mode"] = "default".into();
            v["tool_input"]["command"] = command.into();
            (v, "PreToolUse")
        }
        "codex" => {
            let mut v = fixture("codex", "PreToolUse.stdin.json");
            v["tool_input"]["command"] = command.into();
            (v, "PreToolUse")
        }
        "gemini" => {
            let mut v = fixture("gemini", "before_tool.run_shell_command.json");
            v["tool_input"]["command"] = command.into();
            (v, "BeforeTool")
        }
        "cursor" => {
            let mut v = fixture("cursor", "beforeShellExecution.plain.json");
            v["command"] = command.into();
            (v, "beforeShellExecution")
        }
        other => panic!("{other}"),
    }
}

const HARNESSES: [&str; 4] = ["claude-code", "codex", "gemini", "cursor"];

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn model_allow_and_deny_reach_each_harness_in_its_own_terms() {
    for harness in HARNESSES {
        let server = ModelServer::start(vec![model_allow(), model_deny()]).await;
        let home = Home::with_model(&server.base_url());
        let (input, event) = shell_event(harness, "touch allowed-marker");
        let r = run(&home, harness, &input);
        let got = seen(harness, event, &r.stdout);
        match harness {
            // Codex's PreToolUse has no "allow": no objection is an empty reply.
            "codex" => assert_eq!(got, Seen::Abstain, "{harness}"),
            _ => assert_eq!(got, Seen::Allow, "{harness}: {}", r.stdout),
        }
        let (input, event) = shell_event(harness, "touch denied-marker");
        let r = run(&home, harness, &input);
        let got = seen(harness, event, &r.stdout);
        assert_eq!(got.kind(), "deny", "{harness}: {}", r.stdout);
        assert!(
            got.reason().contains("MODEL-DENY-MARKER"),
            "{harness}: {}",
            got.reason()
        );
        assert!(got.reason().contains("not a human"), "{harness}");
        assert!(got.reason().contains("vouch approve"), "{harness}");
        assert_eq!(server.requests().len(), 2, "{harness}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hard_denies_never_reach_the_model() {
    for harness in HARNESSES {
        let server = ModelServer::start(vec![]).await;
        let home = Home::with_model(&server.base_url());
        let (input, event) = shell_event(harness, "echo ok; rm -rf ~/");
        let r = run(&home, harness, &input);
        let got = seen(harness, event, &r.stdout);
        assert_eq!(got.kind(), "deny", "{harness}: {}", r.stdout);
        assert!(got.reason().contains("Do not retry"), "{harness}");
        assert!(
            !got.reason().contains("vouch approve"),
            "{harness}: no override"
        );
        // A decision on the action carries no fault kind.
        assert!(!got.reason().contains("[vouch fault"), "{harness}");
        assert!(server.requests().is_empty(), "{harness}");
    }
}

#[test]
fn reviewer_unreachable_is_each_harness_fail_closed_reply() {
    let url = dead_url();
    for harness in HARNESSES {
        let home = Home::with_model(&url);
        let (input, event) = shell_event(harness, "make test");
        let r = run(&home, harness, &input);
        assert_eq!(r.code, 0);
        let got = seen(harness, event, &r.stdout);
        assert_eq!(got.kind(), "deny", "{harness}: {}", r.stdout);
        assert!(
            got.reason().contains("could not complete"),
            "{harness}: {}",
            got.reason()
        );
        // The fault's kind, machine-readable, where every harness keeps it.
        assert!(
            got.reason().starts_with("[vouch fault: reviewer_down] "),
            "{harness}: {}",
            got.reason()
        );
    }
}

#[test]
fn malformed_stdin_is_a_well_formed_deny() {
    let home = Home::fresh();
    let primary = [
        ("claude-code", "PreToolUse"),
        ("codex", "PreToolUse"),
        ("gemini", "BeforeTool"),
        ("cursor", "beforeShellExecution"),
    ];
    for (harness, event) in primary {
        for stdin in [
            &b"not json"[..],
            b"",
            b"[1, 2]",
            b"{\"hook_event_name\": \"PreToolUse\"",
            &[0xff, 0xfe, 0x00][..],
        ] {
            let r = run_with(&home, harness, stdin, &[], &[]);
            assert_eq!(r.code, 0, "{harness}");
            let got = seen(harness, event, &r.stdout);
            assert_eq!(got.kind(), "deny", "{harness} {stdin:?}: {}", r.stdout);
            assert!(got.reason().contains("could not review"), "{harness}");
            assert!(
                got.reason().starts_with("[vouch fault: hook_input] "),
                "{harness}: {}",
                got.reason()
            );
        }
        // A known event with a field missing names the field.
        let (mut input, _) = shell_event(harness, "ls");
        input.as_object_mut().unwrap().remove(match harness {
            "cursor" => "conversation_id",
            _ => "session_id",
        });
        let got = seen(harness, event, &run(&home, harness, &input).stdout);
        assert!(
            got.reason().contains("is missing"),
            "{harness}: {}",
            got.reason()
        );
    }
}

#[test]
fn unreadable_after_the_fact_events_get_the_no_op() {
    let home = Home::fresh();
    for (harness, event, file) in [
        ("claude-code", "PostToolUse", "posttooluse.bash.json"),
        ("codex", "PostToolUse", "PostToolUse.stdin.json"),
        ("gemini", "AfterTool", "after_tool.run_shell_command.json"),
        ("cursor", "afterFileEdit", "afterFileEdit.json"),
    ] {
        let mut input = fixture(harness, file);
        let obj = input.as_object_mut().unwrap();
        obj.remove("tool_name");
        obj.remove("tool_input");
        obj.remove("file_path");
        let r = run(&home, harness, &input);
        assert_eq!(r.code, 0);
        assert_eq!(
            seen(harness, event, &r.stdout),
            Seen::Abstain,
            "{harness}: {}",
            r.stdout
        );
    }
}

#[test]
fn read_only_and_inert_tools_abstain() {
    let home = Home::with_model(&dead_url());
    let cases = [
        (
            "claude-code",
            fixture("claude-code", "pretooluse.toolsearch.json"),
        ),
        (
            "claude-code",
            fixture("claude-code", "pretooluse.todowrite.json"),
        ),
        (
            "claude-code",
            fixture("claude-code", "pretooluse.read.json"),
        ),
        ("gemini", fixture("gemini", "before_tool.read_file.json")),
        ("gemini", {
            let mut v = fixture("gemini", "before_tool.read_file.json");
            v["tool_name"] = "write_todos".into();
            v["tool_input"] = json!({"todos": [{"description": "x", "status": "pending"}]});
            v
        }),
        ("codex", {
            let mut v = fixture("codex", "PreToolUse.stdin.json");
            v["tool_name"] = "update_plan".into();
            v["tool_input"] = json!({"plan": [{"step": "x", "status": "pending"}]});
            v
        }),
    ];
    for (harness, input) in cases {
        let event = input["hook_event_name"].as_str().unwrap().to_owned();
        let got = seen(harness, &event, &run(&home, harness, &input).stdout);
        assert_eq!(got, Seen::Abstain, "{harness} {}", input["tool_name"]);
    }
}

/// A Claude Code transcript: an older request, the latest one, the current
/// tool call (linked by id), an unrelated call, and secrets throughout.
fn claude_transcript(dir: &Path, tool_use_id: &str, command: &str) -> PathBuf {
    let secret = "AKIAUJZDE8GXD6NCF10E";
    let lines = [
        json!({"type": "user", "uuid": "u0", "message": {"role": "user", "content": "set up the repo"}}),
        json!({"type": "assistant", "message": {"content": [{"type": "tool_use", "id": "toolu_old", "name": "Bash",
            "input": {"command": "cat notes", "description": "UNLINKED-MARKER"}}]}}),
        json!({"type": "user", "message": {"content": [{"type": "tool_result", "tool_use_id": "toolu_old",
            "content": format!("aws_secret_access_key = {secret}")}]}}),
        json!({"type": "user", "uuid": "u1", "promptId": "prompt-2", "message": {"role": "user",
            "content": format!("LATEST-USER-MARKER: please run the marker command; my key is {secret}")}}),
        json!({"type": "assistant", "message": {"content": [{"type": "tool_use", "id": tool_use_id, "name": "Bash",
            "input": {"command": command, "description": "LINKED-MARKER"}}]}}),
    ];
    let path = dir.join("session.jsonl");
    let mut text: String = lines.iter().map(|l| format!("{l}\n")).collect();
    // A partial last line, as a harness mid-write leaves it.
    text.push_str("{\"type\":\"assistant\",\"message\":{\"content\":[{\"type\":\"te");
    std::fs::write(&path, text).unwrap();
    path
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_latest_user_message_and_linked_call_reach_the_model_and_no_secret_does() {
    let server = ModelServer::start(vec![model_allow(), model_allow(), model_allow()]).await;
    let home = Home::with_model(&server.base_url());
    let command = "touch transcript-marker";
    let transcript = claude_transcript(home.path(), "toolu_vouchcheck01", command);
    let (mut input, _) = shell_event("claude-code", command);
    input["transcript_path"] = transcript.display().to_string().into();
    let r = run(&home, "claude-code", &input);
    assert_eq!(seen("claude-code", "PreToolUse", &r.stdout), Seen::Allow);

    // Codex's real rollout and Gemini's real chat file, as captured.
    let (mut codex, _) = shell_event("codex", "touch ran-all-events");
    codex["transcript_path"] = format!("{FIXTURES}/codex/PreToolUse.transcript.jsonl").into();
    assert_eq!(
        seen("codex", "PreToolUse", &run(&home, "codex", &codex).stdout),
        Seen::Abstain
    );
    let mut gemini = fixture("gemini", "before_tool.run_shell_command.json");
    gemini["transcript_path"] = format!("{FIXTURES}/gemini/transcript.at_before_tool.jsonl").into();
    assert_eq!(
        seen(
            "gemini",
            "BeforeTool",
            &run(&home, "gemini", &gemini).stdout
        ),
        Seen::Allow
    );

    let bodies: Vec<String> = server.requests().into_iter().map(|r| r.raw_body).collect();
    assert_eq!(bodies.len(), 3);
    let claude = &bodies[0];
    assert!(claude.contains("LATEST-USER-MARKER"), "{claude}");
    assert!(
        claude.contains("LINKED-MARKER"),
        "the linked call is evidence"
    );
    assert!(
        !claude.contains("UNLINKED-MARKER"),
        "unrelated calls are not"
    );
    assert!(
        claude.contains("please run: touch ran-all-events")
            || bodies[1].contains("please run: touch ran-all-events")
    );
    assert!(
        bodies[1].contains("please run: touch ran-all-events"),
        "{}",
        bodies[1]
    );
    assert!(bodies[2].contains("RUN<<<touch ran-x>>>"), "{}", bodies[2]);
    assert!(
        !bodies[2].contains("session_context"),
        "the CLI's own preamble is not the user's request"
    );
    for body in &bodies {
        assert!(
            !body.contains("AKIAUJZDE8GXD6NCF10E"),
            "a secret reached the model"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_4_kib_command_is_packed_once_and_fits() {
    let server = ModelServer::start(vec![model_allow()]).await;
    let home = Home::with_model(&server.base_url());
    let command = format!("printf '%s' {} > out.txt", "x".repeat(4096));
    let (input, _) = shell_event("claude-code", &command);
    let got = seen(
        "claude-code",
        "PreToolUse",
        &run(&home, "claude-code", &input).stdout,
    );
    assert_eq!(got, Seen::Allow);
    let body = &server.requests()[0].raw_body;
    assert_eq!(
        body.matches(&"x".repeat(4096)).count(),
        1,
        "the command is sent once"
    );
}

#[test]
fn the_environment_may_only_tighten() {
    let home = Home::fresh();
    let (input, event) = shell_event("gemini", "touch x");
    // A project's `.env` loosening routing: refused, naming the variable.
    let r = run_with(
        &home,
        "gemini",
        input.to_string().as_bytes(),
        &[],
        &[("VOUCH_ROUTING__DEFAULT", "pass")],
    );
    let got = seen("gemini", event, &r.stdout);
    assert_eq!(got.kind(), "deny");
    assert!(
        got.reason().contains("VOUCH_ROUTING__DEFAULT"),
        "{}",
        got.reason()
    );
    // Tightening is fine: `never` denies without a model.
    let r = run_with(
        &home,
        "gemini",
        input.to_string().as_bytes(),
        &[],
        &[("VOUCH_ROUTING__DEFAULT", "never")],
    );
    let got = seen("gemini", event, &r.stdout);
    assert!(got.reason().contains("routing"), "{}", got.reason());

    // VOUCH_HOME from the environment is not where the hook keeps state.
    let elsewhere = tempfile::tempdir().unwrap();
    let elsewhere_path = elsewhere.path().display().to_string();
    let mut claude = fixture("claude-code", "pretooluse.monitor-ws.json");
    claude["tool_name"] = "Bash".into();
    claude["tool_input"] = json!({"command": "make"});
    let server_home = Home::with_model(&dead_url());
    run_with(
        &server_home,
        "claude-code",
        claude.to_string().as_bytes(),
        &[],
        &[("VOUCH_HOME", &elsewhere_path)],
    );
    assert!(
        server_home.path().join("state").exists(),
        "state under --home"
    );
    assert!(
        !elsewhere.path().join("state").exists(),
        "VOUCH_HOME was ignored"
    );
}

#[test]
fn untrusted_dev_is_ignored_under_hooks() {
    // vouch's own config lies inside the project the agent works in.
    let project = tempfile::tempdir().unwrap();
    std::fs::create_dir(project.path().join(".git")).unwrap();
    let home = Home {
        dir: tempfile::tempdir_in(project.path()).unwrap(),
    };
    home.write_config("[reviewer]\nprovider = \"openai\"\napi_key_env = \"\"\n");
    let (mut input, event) = shell_event("cursor", "make");
    input["cwd"] = project.path().display().to_string().into();
    let r = run_with(
        &home,
        "cursor",
        input.to_string().as_bytes(),
        &[],
        &[("VOUCH_ALLOW_UNTRUSTED_DEV", "1")],
    );
    let got = seen("cursor", event, &r.stdout);
    assert_eq!(got.kind(), "deny", "{}", r.stdout);
    assert!(
        got.reason().contains("lies inside the project"),
        "{}",
        got.reason()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_hook_answers_before_the_harness_timeout() {
    let server = ModelServer::start(vec![model_allow().delayed(Duration::from_secs(20))]).await;
    let home = Home::with_model(&server.base_url());
    let (input, event) = shell_event("gemini", "make");
    // Harness timeout 7 s, margin 5 s: vouch must answer within ~2 s.
    let r = run_with(
        &home,
        "gemini",
        input.to_string().as_bytes(),
        &["--timeout", "7"],
        &[],
    );
    let got = seen("gemini", event, &r.stdout);
    assert_eq!(got.kind(), "deny", "{}", r.stdout);
    assert!(r.elapsed < Duration::from_secs(6), "{:?}", r.elapsed);
}

/// A call stuck before any decision (the harness never closes stdin) gets
/// the watchdog's fail-closed reply in time, and the process ends (exit 0)
/// though the work never finishes.
#[test]
fn a_stuck_call_gets_the_watchdogs_deny_and_the_process_ends() {
    let home = Home::fresh();
    for harness in ["claude-code", "codex", "gemini", "cursor"] {
        let started = Instant::now();
        // Harness timeout 6 s, margin 5 s: vouch answers after ~1 s.
        let mut child = hook_command(&home, harness, &["--timeout", "6"])
            .spawn()
            .unwrap();
        let mut stdin = child.stdin.take().unwrap();
        stdin.write_all(b"{\"hook_event_name\": ").unwrap();
        let out = child.wait_with_output().unwrap();
        let elapsed = started.elapsed();
        drop(stdin);
        assert_eq!(out.status.code(), Some(0), "{harness}");
        let stdout = String::from_utf8(out.stdout).unwrap();
        assert_eq!(stdout.lines().count(), 1, "{harness}: one reply: {stdout}");
        let primary = match harness {
            "gemini" => "BeforeTool",
            "cursor" => "beforeShellExecution",
            _ => "PreToolUse",
        };
        let got = seen(harness, primary, &stdout);
        assert_eq!(got.kind(), "deny", "{harness}: {stdout}");
        assert!(
            got.reason().contains("did not finish within 1000 ms"),
            "{harness}: {stdout}"
        );
        assert!(
            elapsed >= Duration::from_millis(900),
            "{harness}: {elapsed:?}"
        );
        assert!(elapsed < Duration::from_secs(5), "{harness}: {elapsed:?}");
    }
}

/// The reply is on stdout before the audit record is written, and a
/// locked audit database holds the process at most `audit.flush_timeout_ms`
/// after its reply (the harness waits for the exit).
#[test]
fn the_reply_comes_before_the_audit_write_and_a_locked_audit_is_cut_off() {
    let home = Home::fresh();
    home.write_config("[audit]\nlock_timeout_ms = 8000\nflush_timeout_ms = 300\n");
    let (input, event) = shell_event("claude-code", "rm -rf /");
    let first = run(&home, "claude-code", &input);
    assert_eq!(seen("claude-code", event, &first.stdout).kind(), "deny");
    let db = home.path().join("state").join("audit.sqlite");
    let lock = rusqlite::Connection::open(&db).unwrap();
    lock.execute_batch("BEGIN EXCLUSIVE").unwrap();

    let started = Instant::now();
    let mut child = hook_command(&home, "claude-code", &[]).spawn().unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(input.to_string().as_bytes())
        .unwrap();
    let mut stdout = std::io::BufReader::new(child.stdout.take().unwrap());
    let mut line = String::new();
    std::io::BufRead::read_line(&mut stdout, &mut line).unwrap();
    let replied = started.elapsed();
    assert_eq!(seen("claude-code", event, &line).kind(), "deny", "{line}");
    let status = child.wait().unwrap();
    let exited = started.elapsed();
    lock.execute_batch("ROLLBACK").unwrap();
    assert_eq!(status.code(), Some(0));
    assert!(
        exited >= replied + Duration::from_millis(250),
        "the audit write waited after the reply: replied {replied:?}, exited {exited:?}"
    );
    assert!(
        exited < replied + Duration::from_secs(3),
        "the locked audit held the exit past flush_timeout_ms: replied {replied:?}, exited {exited:?}"
    );
}

/// Each hook process opens the audit alone, so SQLite never restarts its
/// log by itself (the index is rebuilt, and nothing looks copied back);
/// after the reply a long log is folded back and truncated, so it stays
/// near 1 MiB instead of growing with every run (~16 KiB a record).
#[test]
fn the_audit_log_stays_short_across_hook_runs() {
    let home = Home::fresh();
    let (input, event) = shell_event("claude-code", "rm -rf /");
    let log = home.path().join("state").join("audit.sqlite-wal");
    let mut longest = 0;
    for _ in 0..120 {
        let r = run(&home, "claude-code", &input);
        assert_eq!(seen("claude-code", event, &r.stdout).kind(), "deny");
        longest = longest.max(std::fs::metadata(&log).map_or(0, |m| m.len()));
    }
    assert!(longest > 0, "the audit was written");
    let bound = 256 * (4096 + 24) + 64 * 1024;
    assert!(longest <= bound, "audit log grew to {longest} bytes");
}

#[test]
fn codex_permission_request_asks_only_when_a_person_reviews() {
    // No model, and what it would review defers to the human.
    let home = Home::fresh();
    home.write_config("[reviewer]\nwithout_model = \"human\"\n");
    let dir = tempfile::tempdir().unwrap();
    let original =
        std::fs::read_to_string(format!("{FIXTURES}/codex/PreToolUse.transcript.jsonl")).unwrap();
    // The captured turn is reviewed by `auto_review`: nobody to ask.
    let mut input = fixture("codex", "PermissionRequest.stdin.json");
    input["transcript_path"] = format!("{FIXTURES}/codex/PreToolUse.transcript.jsonl").into();
    let got = seen(
        "codex",
        "PermissionRequest",
        &run(&home, "codex", &input).stdout,
    );
    assert_eq!(got.kind(), "deny", "auto_review is not a person");
    // The same turn with the user as reviewer: no decision, Codex asks.
    let user = dir.path().join("rollout.jsonl");
    std::fs::write(
        &user,
        original.replace(
            "\"approvals_reviewer\": \"auto_review\"",
            "\"approvals_reviewer\": \"user\"",
        ),
    )
    .unwrap();
    input["transcript_path"] = user.display().to_string().into();
    let r = run(&home, "codex", &input);
    assert_eq!(
        seen("codex", "PermissionRequest", &r.stdout),
        Seen::Abstain,
        "{}",
        r.stdout
    );
    // `--defer-as deny` never asks.
    let r = run_with(
        &home,
        "codex",
        input.to_string().as_bytes(),
        &["--defer-as", "deny"],
        &[],
    );
    assert_eq!(seen("codex", "PermissionRequest", &r.stdout).kind(), "deny");
}

#[test]
fn snippets_are_parseable_and_fail_closed() {
    let home = Home::fresh();
    for harness in HARNESSES {
        let out = Command::new(env!("CARGO_BIN_EXE_vouch"))
            .args(["hook", "snippet", harness])
            .env_clear()
            .env("HOME", home.path())
            .env("VOUCH_HOME", home.path())
            .output()
            .unwrap();
        assert!(out.status.success(), "{harness}");
        let text = String::from_utf8(out.stdout).unwrap();
        assert!(text.contains("--home"), "{harness}: the location is pinned");
        assert!(text.contains("--timeout 100"), "{harness}");
        match harness {
            "codex" => {
                let t: toml::Table = toml::from_str(&text).unwrap();
                assert!(t["hooks"]["state"].as_table().unwrap().len() == 4);
            }
            "claude-code" => assert!(text.contains("\"onFailure\": \"block\"")),
            "cursor" => assert!(text.contains("\"failClosed\": true")),
            _ => assert!(text.contains("\"timeout\": 100000")),
        }
    }
}

// ---------------------------------------------------------------------------
// The user's prompt, recorded by each harness's prompt event
// ---------------------------------------------------------------------------

/// Claude Code's `UserPromptSubmit` for `session`, naming `transcript`.
fn claude_prompt(transcript: &Path, prompt: &str) -> Value {
    let mut v = fixture("claude-code", "userpromptsubmit.json");
    v["transcript_path"] = transcript.display().to_string().into();
    v["prompt"] = prompt.into();
    v
}

/// Claude Code's `PreToolUse` running `command`, naming `transcript`.
fn claude_call(transcript: &Path, command: &str) -> Value {
    let (mut v, _) = shell_event("claude-code", command);
    v["transcript_path"] = transcript.display().to_string().into();
    v
}

/// Every byte of the state database (the database, its log and index).
fn state_bytes(home: &Home) -> Vec<u8> {
    let mut bytes = Vec::new();
    for entry in std::fs::read_dir(home.path().join("state")).unwrap() {
        let path = entry.unwrap().path();
        if path
            .file_name()
            .unwrap()
            .to_string_lossy()
            .starts_with("vouch.sqlite")
        {
            bytes.extend(std::fs::read(&path).unwrap());
        }
    }
    bytes
}

fn contains(haystack: &[u8], needle: &str) -> bool {
    haystack
        .windows(needle.len())
        .any(|w| w == needle.as_bytes())
}

const NOT_WRITTEN_YET: &str = "the harness had not written its transcript file yet; the latest \
                               user message in the evidence is the prompt the harness's prompt \
                               hook recorded for this session.";
const FILE_WITHOUT_USER: &str = "the harness's transcript file holds no user message; the latest \
                                 user message in the evidence is the prompt the harness's prompt \
                                 hook recorded for this session.";

/// The first `PreToolUse` of a `claude -p` run often comes before Claude
/// Code has written the transcript: the prompt its `UserPromptSubmit`
/// recorded is then the packet's latest user message, inside the fence,
/// and the host note says where it came from — also when the file exists
/// but holds no user message. With no record, the note says whether the
/// file existed.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn claude_codes_first_call_gets_the_prompt_its_prompt_hook_recorded() {
    let server = ModelServer::start(vec![model_allow(), model_allow(), model_allow()]).await;
    let home = Home::with_model(&server.base_url());
    let transcript = home.path().join("not-written-yet.jsonl");
    let prompt = "PROMPT-MARKER: please create the marker file ran-c";

    let r = run(&home, "claude-code", &claude_prompt(&transcript, prompt));
    assert_eq!(
        (r.code, r.stdout.as_str()),
        (0, "{}\n"),
        "a prompt is never blocked"
    );
    let r = run(
        &home,
        "claude-code",
        &claude_call(&transcript, "touch ran-c"),
    );
    assert_eq!(seen("claude-code", "PreToolUse", &r.stdout), Seen::Allow);

    // Now the file is there, with the call but not (yet) the prompt.
    let line = json!({"type": "assistant", "message": {"content": [{"type": "tool_use",
        "id": "toolu_vouchcheck01", "name": "Bash", "input": {"command": "touch ran-d"}}]}});
    std::fs::write(&transcript, format!("{line}\n")).unwrap();
    let r = run(
        &home,
        "claude-code",
        &claude_call(&transcript, "touch ran-d"),
    );
    assert_eq!(seen("claude-code", "PreToolUse", &r.stdout), Seen::Allow);

    // Another session: no record, no file.
    let mut other = claude_call(&home.path().join("missing.jsonl"), "touch ran-e");
    other["session_id"] = "another-session".into();
    let r = run(&home, "claude-code", &other);
    assert_eq!(seen("claude-code", "PreToolUse", &r.stdout), Seen::Allow);

    let bodies: Vec<String> = server.requests().into_iter().map(|r| r.raw_body).collect();
    assert_eq!(bodies.len(), 3);
    let packet = |body: &str| -> String {
        let v: Value = serde_json::from_str(body).unwrap();
        v["messages"]
            .as_array()
            .unwrap()
            .iter()
            .map(|m| m["content"].as_str().unwrap_or_default().to_owned())
            .collect::<Vec<_>>()
            .join("\n")
    };
    let first = packet(&bodies[0]);
    assert!(first.contains(NOT_WRITTEN_YET), "{first}");
    let fenced = first.split("<<<EVIDENCE").nth(1).unwrap();
    assert!(
        fenced.contains(r#""item":"latest user message","text":"PROMPT-MARKER: please create"#),
        "the recorded prompt is fenced evidence: {first}"
    );
    let second = packet(&bodies[1]);
    assert!(second.contains(FILE_WITHOUT_USER), "{second}");
    assert!(second.contains("PROMPT-MARKER"), "{second}");
    let third = packet(&bodies[2]);
    assert!(
        third.contains(
            "Host note: no user message: the harness had not written its transcript file yet, \
             and no prompt was recorded for this session."
        ),
        "{third}"
    );
    assert!(
        !third.contains("PROMPT-MARKER"),
        "another session's prompt: {third}"
    );
}

/// A secret in the prompt is redacted before the prompt is stored: not one
/// byte of the state database (its log included) holds it, while the rest
/// of the prompt is there.
#[test]
fn a_secret_in_the_prompt_never_reaches_the_state_database() {
    let home = Home::fresh();
    let secret = "ghp_pfJBd0Kh8oOOL8dKLzdocJ2isAjIhKtJ0Rlg";
    let prompt = format!("STORED-PROMPT-MARKER deploy with GITHUB_TOKEN={secret} now");
    let transcript = home.path().join("t.jsonl");
    let r = run(&home, "claude-code", &claude_prompt(&transcript, &prompt));
    assert_eq!((r.code, r.stdout.as_str()), (0, "{}\n"));
    let bytes = state_bytes(&home);
    assert!(
        contains(&bytes, "STORED-PROMPT-MARKER"),
        "the prompt was recorded"
    );
    assert!(
        !contains(&bytes, secret),
        "the secret reached the state database"
    );
    assert!(!contains(&bytes, "pfJBd0Kh8oOOL8dKLzdocJ2isAjIhKtJ0Rlg"));
}

/// An oversized prompt is cut to the user-message budget with the packet's
/// visible marker; an empty one records nothing (the earlier prompt stays,
/// as Qwen Code's second, empty `UserPromptSubmit` needs); a record past
/// the idle expiry of turns is not used.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn oversized_empty_and_expired_prompts() {
    let server = ModelServer::start(vec![model_allow(), model_allow()]).await;
    let home = Home::with_model(&server.base_url());
    let transcript = home.path().join("not-written-yet.jsonl");
    let long = format!(
        "HEAD-MARKER {} TAIL-MARKER",
        "lorem ipsum dolor ".repeat(20_000)
    );
    assert!(run(&home, "claude-code", &claude_prompt(&transcript, &long)).code == 0);
    let r = run(&home, "claude-code", &claude_prompt(&transcript, ""));
    assert_eq!((r.code, r.stdout.as_str()), (0, "{}\n"));
    let r = run(
        &home,
        "claude-code",
        &claude_call(&transcript, "touch ran-c"),
    );
    assert_eq!(seen("claude-code", "PreToolUse", &r.stdout), Seen::Allow);
    let bytes = state_bytes(&home);
    assert!(
        !contains(&bytes, &"lorem ipsum dolor ".repeat(2_000)),
        "the stored prompt is cut"
    );

    // Age the record past the idle expiry of turns (24 h).
    let conn = rusqlite::Connection::open(home.path().join("state/vouch.sqlite")).unwrap();
    let aged = conn
        .execute("UPDATE recorded_prompts SET recorded_at_ms = 1", [])
        .unwrap();
    assert_eq!(aged, 1);
    drop(conn);
    let r = run(
        &home,
        "claude-code",
        &claude_call(&transcript, "touch ran-d"),
    );
    assert_eq!(seen("claude-code", "PreToolUse", &r.stdout), Seen::Allow);

    let bodies: Vec<String> = server.requests().into_iter().map(|r| r.raw_body).collect();
    assert_eq!(bodies.len(), 2);
    let cut = &bodies[0];
    assert!(cut.contains("HEAD-MARKER"), "{cut}");
    assert!(cut.contains("TAIL-MARKER"), "{cut}");
    assert!(cut.contains("bytes omitted]"), "cut visibly: {cut}");
    assert!(cut.len() < 40_000, "{}", cut.len());
    let expired = &bodies[1];
    assert!(!expired.contains("HEAD-MARKER"), "{expired}");
    assert!(
        expired.contains("no user message: the harness had not written its transcript file yet"),
        "{expired}"
    );
}

/// The other harnesses' prompt events: Codex `UserPromptSubmit`, Qwen
/// Code's (the second, empty one ignored), Gemini CLI `BeforeAgent`,
/// Cursor `beforeSubmitPrompt` (Cursor's transcript is never read) and
/// Copilot's `userPromptSubmitted`. Each is answered with the harness's
/// no-op, and the next call's packet holds the prompt.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_harnesses_prompt_event_reaches_the_packet() {
    let server = ModelServer::start(vec![model_allow(); 5]).await;
    let home = Home::with_model(&server.base_url());
    let missing = home.path().join("missing.jsonl").display().to_string();

    let mut prompt = fixture("codex", "UserPromptSubmit.stdin.json");
    prompt["transcript_path"] = missing.clone().into();
    prompt["prompt"] = "CODEX-PROMPT-MARKER please touch ran-all-events".into();
    let r = run(&home, "codex", &prompt);
    assert_eq!(
        (r.code, r.stdout.as_str()),
        (0, ""),
        "Codex's no-op is empty"
    );
    let (mut call, _) = shell_event("codex", "touch ran-all-events");
    call["transcript_path"] = missing.clone().into();
    call["permission_mode"] = "default".into();
    let r = run(&home, "codex", &call);
    assert_eq!(r.code, 0);

    for name in [
        "UserPromptSubmit.json",
        "UserPromptSubmit.second_empty_after_tool.json",
    ] {
        let mut prompt = fixture("qwen", name);
        prompt["transcript_path"] = missing.clone().into();
        let r = run(&home, "qwen", &prompt);
        assert_eq!((r.code, r.stdout.as_str()), (0, "{}\n"), "{name}");
    }
    let mut call = fixture("qwen", "PreToolUse.run_shell_command.json");
    call["transcript_path"] = missing.clone().into();
    call["permission_mode"] = "default".into();
    assert_eq!(run(&home, "qwen", &call).code, 0);

    let mut prompt = fixture("gemini", "before_agent.json");
    prompt["transcript_path"] = missing.clone().into();
    prompt["prompt"] = "GEMINI-PROMPT-MARKER please touch ran-x".into();
    let r = run(&home, "gemini", &prompt);
    assert_eq!((r.code, r.stdout.as_str()), (0, "{}\n"));
    let (mut call, _) = shell_event("gemini", "touch ran-x");
    call["transcript_path"] = missing.clone().into();
    assert_eq!(run(&home, "gemini", &call).code, 0);

    let mut prompt = fixture("cursor", "beforeSubmitPrompt.json");
    prompt["prompt"] = "CURSOR-PROMPT-MARKER please touch ran-c".into();
    let r = run(&home, "cursor", &prompt);
    assert_eq!((r.code, r.stdout.trim()), (0, r#"{"continue":true}"#));
    let (call, _) = shell_event("cursor", "touch ran-c");
    assert_eq!(run(&home, "cursor", &call).code, 0);

    let mut prompt = fixture("copilot", "userPromptSubmitted.json");
    prompt["prompt"] = "COPILOT-PROMPT-MARKER please touch ran-1".into();
    let r = run(&home, "copilot", &prompt);
    assert_eq!((r.code, r.stdout.as_str()), (0, "{}\n"));
    let mut call = fixture("copilot", "preToolUse.bash.json");
    call["sessionId"] = prompt["sessionId"].clone();
    call["toolArgs"]["command"] = "touch ran-1".into();
    assert_eq!(run(&home, "copilot", &call).code, 0);

    let bodies: Vec<String> = server.requests().into_iter().map(|r| r.raw_body).collect();
    assert_eq!(bodies.len(), 5);
    let expect = [
        ("CODEX-PROMPT-MARKER", NOT_WRITTEN_YET),
        ("please run the command", NOT_WRITTEN_YET),
        ("GEMINI-PROMPT-MARKER", NOT_WRITTEN_YET),
        (
            "CURSOR-PROMPT-MARKER",
            "the harness's transcript was not read; the latest user message in the evidence is \
             the prompt the harness's prompt hook recorded for this session.",
        ),
        ("COPILOT-PROMPT-MARKER", NOT_WRITTEN_YET),
    ];
    for (body, (marker, note)) in bodies.iter().zip(expect) {
        assert!(body.contains(marker), "{marker}: {body}");
        assert!(body.contains(note), "{marker}: {body}");
    }
}

/// A prompt is never blocked: with a state directory that cannot be opened
/// (and with a configuration that cannot be read) every harness's prompt
/// event still gets its no-op.
#[test]
fn a_recording_fault_never_blocks_the_prompt() {
    let broken_state = Home::fresh();
    std::fs::write(broken_state.path().join("state"), b"not a directory").unwrap();
    let broken_config = Home::fresh();
    broken_config.write_config("[reviewer\n");
    let transcript = broken_state.path().join("t.jsonl");
    for home in [&broken_state, &broken_config] {
        let r = run(
            home,
            "claude-code",
            &claude_prompt(&transcript, "fix the build"),
        );
        assert_eq!((r.code, r.stdout.as_str()), (0, "{}\n"));
        let r = run(
            home,
            "codex",
            &fixture("codex", "UserPromptSubmit.stdin.json"),
        );
        assert_eq!((r.code, r.stdout.as_str()), (0, ""));
        let r = run(
            home,
            "cursor",
            &fixture("cursor", "beforeSubmitPrompt.json"),
        );
        assert_eq!((r.code, r.stdout.trim()), (0, r#"{"continue":true}"#));
        let r = run(home, "gemini", &fixture("gemini", "before_agent.json"));
        assert_eq!((r.code, r.stdout.as_str()), (0, "{}\n"));
    }
}

/// A prompt event vouch cannot read (no session) still gets the no-op.
#[test]
fn an_unreadable_prompt_event_gets_the_no_op() {
    let home = Home::fresh();
    let mut v = claude_prompt(&home.path().join("t.jsonl"), "fix the build");
    v.as_object_mut().unwrap().remove("session_id");
    let r = run(&home, "claude-code", &v);
    assert_eq!((r.code, r.stdout.as_str()), (0, "{}\n"));
    let mut v = fixture("gemini", "before_agent.json");
    v.as_object_mut().unwrap().remove("session_id");
    let r = run(&home, "gemini", &v);
    assert_eq!((r.code, r.stdout.as_str()), (0, "{}\n"));
}

/// The adapter registry (`hooks::harnesses::ALL`, from `build.rs`) and the
/// harness catalogue the layers below read (`catalogue::ALL`) name exactly
/// the same harnesses in the same order, and each adapter names its own
/// entry: a harness added to one and not the other, or an adapter pointing
/// at another's protected files, fails here.
#[test]
fn the_adapter_registry_and_the_catalogue_name_the_same_harnesses() {
    use vouch::catalogue;
    use vouch::hooks::harnesses;
    let adapters: Vec<&str> = harnesses::ALL.iter().map(|h| h.name()).collect();
    let entries: Vec<&str> = catalogue::ALL.iter().map(|e| e.name).collect();
    assert_eq!(adapters, entries);
    for (adapter, entry) in harnesses::ALL.iter().zip(catalogue::ALL) {
        assert!(
            std::ptr::eq(adapter.entry(), *entry),
            "the adapter in `{}`'s place names another entry",
            entry.name
        );
        let found = catalogue::named(entry.name).unwrap();
        assert!(
            std::ptr::eq(found, *entry),
            "two entries named `{}`",
            entry.name
        );
    }
    assert!(catalogue::named("pi").is_none());
}
