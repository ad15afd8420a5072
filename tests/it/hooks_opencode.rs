//! `vouch hook opencode` through the real binary, as vouch's OpenCode plugin
//! (`clients/opencode/src/vouch.ts`) calls it: the payloads it sends
//! (`tests/fixtures/harnesses/opencode/`, captured from OpenCode 1.18.33
//! through the plugin, plus our own per tool), against a scripted model
//! server on 127.0.0.1:0 and a real state directory. The plugin lets a call
//! through only on `{"decision": "allow"}` or `{"decision": "abstain"}`;
//! everything else blocks, so every fault must come out as a deny (or, on
//! the after-the-fact event whose reply the plugin ignores, as `{}`).

use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::support::model_server::{ModelServer, Reply};

const FIXTURES: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/fixtures/harnesses/opencode"
);

fn fixture(name: &str) -> Value {
    let path = Path::new(FIXTURES).join(name);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str(&text).unwrap()
}

fn bash(command: &str) -> Value {
    let mut v = fixture("tool.execute.before.bash.json");
    v["args"]["command"] = command.into();
    v
}

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
        std::fs::write(
            home.dir.path().join("config.toml"),
            format!(
                "[reviewer]\nprovider = \"openai\"\nbase_url = \"{base_url}\"\napi_key_env = \"\"\ntimeout_ms = 5000\n"
            ),
        )
        .unwrap();
        home
    }
}

fn command(home: &Home, args: &[&str]) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_vouch"));
    cmd.args(["hook", "opencode", "--home"])
        .arg(home.dir.path())
        .args(args)
        .env_clear()
        .env("HOME", home.dir.path())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null());
    cmd
}

/// The reply, as the plugin reads it; the exit code must be 0.
fn run_bytes(home: &Home, stdin: &[u8], args: &[&str]) -> Value {
    let mut child = command(home, args).spawn().unwrap();
    child.stdin.take().unwrap().write_all(stdin).unwrap();
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    let stdout = String::from_utf8(out.stdout).unwrap();
    assert_eq!(stdout.lines().count(), 1, "one reply line: {stdout}");
    serde_json::from_str(&stdout).unwrap_or_else(|e| panic!("{e}: {stdout}"))
}

fn run(home: &Home, input: &Value) -> Value {
    run_bytes(home, input.to_string().as_bytes(), &[])
}

fn decision(reply: &Value) -> &str {
    reply["decision"].as_str().unwrap_or("(none)")
}

fn reason(reply: &Value) -> &str {
    reply["reason"].as_str().unwrap_or("")
}

fn verdict(outcome: &str, rationale: &str) -> Reply {
    Reply::verdict(json!({"outcome": outcome, "risk_level": "medium",
        "user_authorization": "unknown", "rationale": rationale, "suggestion": null}))
}

/// Without a model: each captured or per-tool payload gets vouch's
/// abstain, a trust-boundary hard deny, or (after the fact) `{}`.
#[test]
fn every_fixture_on_a_fresh_install() {
    let cases = [
        ("tool.execute.before.bash.json", "abstain"),
        ("tool.execute.before.write.json", "abstain"),
        ("tool.execute.before.edit.json", "abstain"),
        ("tool.execute.before.read.json", "abstain"),
        ("tool.execute.before.webfetch.json", "abstain"),
        ("tool.execute.before.todowrite.json", "abstain"),
        ("tool.execute.before.mcp.json", "abstain"),
        // The patch adds a project plugin: OpenCode would load it unasked.
        ("tool.execute.before.apply_patch.json", "deny"),
    ];
    for (name, want) in cases {
        let home = Home::fresh();
        let reply = run(&home, &fixture(name));
        assert_eq!(decision(&reply), want, "{name}: {reply}");
    }
    let home = Home::fresh();
    let reply = run(&home, &fixture("tool.execute.after.bash.rewritten.json"));
    assert_eq!(reply, json!({}));
}

#[tokio::test(flavor = "multi_thread")]
async fn model_allow_deny_and_defer_reach_the_plugin() {
    let server = ModelServer::start(vec![
        Reply::verdict(json!({"outcome": "allow", "risk_level": "low",
            "user_authorization": "high", "rationale": "asked for", "suggestion": null})),
        verdict("deny", "MODEL-DENY-MARKER: nobody asked for this"),
        verdict("defer", "a person should look at this"),
    ])
    .await;
    let home = Home::with_model(&server.base_url());
    let reply = run(&home, &bash("make test"));
    assert_eq!(decision(&reply), "allow", "{reply}");
    let reply = run(&home, &bash("make deploy"));
    assert_eq!(decision(&reply), "deny", "{reply}");
    assert!(reason(&reply).contains("MODEL-DENY-MARKER"), "{reply}");
    // A plugin cannot ask anyone: a defer is a deny that says so.
    let reply = run(&home, &bash("make release"));
    assert_eq!(decision(&reply), "deny", "{reply}");
    assert!(reason(&reply).contains("a human must approve"), "{reply}");
    assert_eq!(server.requests().len(), 3);
}

#[tokio::test(flavor = "multi_thread")]
async fn hard_denies_never_reach_the_model() {
    let server = ModelServer::start(vec![]).await;
    let home = Home::with_model(&server.base_url());
    for input in [
        bash("echo ok; rm -rf ~/"),
        bash("echo 'export const X = 1' > .opencode/plugins/x.ts"),
        bash("rm ~/.config/opencode/plugins/vouch.ts"),
        fixture("tool.execute.before.apply_patch.json"),
    ] {
        let reply = run(&home, &input);
        assert_eq!(decision(&reply), "deny", "{input}: {reply}");
        assert!(reason(&reply).contains("Do not retry"), "{reply}");
    }
    let mut write = fixture("tool.execute.before.write.json");
    write["args"]["filePath"] = "opencode.json".into();
    assert_eq!(decision(&run(&home, &write)), "deny");
    assert!(server.requests().is_empty());
}

#[test]
fn reviewer_unreachable_is_a_deny() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    drop(listener);
    let home = Home::with_model(&format!("http://127.0.0.1:{port}/v1"));
    let reply = run(&home, &bash("make test"));
    assert_eq!(decision(&reply), "deny", "{reply}");
    assert!(reason(&reply).contains("could not complete"), "{reply}");
}

#[test]
fn every_fault_is_a_deny() {
    let home = Home::fresh();
    for stdin in [
        &b"not json"[..],
        b"",
        b"[1, 2]",
        b"{\"hook_event_name\": \"tool.execute.before\"",
        &[0xff, 0xfe, 0x00][..],
    ] {
        let reply = run_bytes(&home, stdin, &[]);
        assert_eq!(decision(&reply), "deny", "{stdin:?}: {reply}");
        assert!(reason(&reply).contains("could not review"), "{reply}");
    }
    let mut input = bash("ls");
    input.as_object_mut().unwrap().remove("sessionID");
    let reply = run(&home, &input);
    assert_eq!(decision(&reply), "deny");
    assert!(reason(&reply).contains("is missing"), "{reply}");
    for (field, value) in [
        ("args", json!("ls")),
        ("tool", json!(7)),
        ("hook_event_name", json!("chat.message")),
        ("directory", json!("relative/dir")),
    ] {
        let mut input = bash("ls");
        input[field] = value;
        let reply = run(&home, &input);
        assert_eq!(decision(&reply), "deny", "{field}: {reply}");
    }
    let mut input = bash("ls");
    input["args"] = json!({"cmd": "ls"});
    assert_eq!(decision(&run(&home, &input)), "deny");
}

#[test]
fn unreadable_after_events_get_the_no_op() {
    let home = Home::fresh();
    let mut input = fixture("tool.execute.after.bash.rewritten.json");
    input.as_object_mut().unwrap().remove("sessionID");
    assert_eq!(run(&home, &input), json!({}));
}

/// A call stuck before any decision (stdin never closed) gets the
/// watchdog's deny before the plugin's own timeout, and the process ends.
#[test]
fn a_stuck_call_gets_the_watchdogs_deny() {
    let home = Home::fresh();
    let started = Instant::now();
    let mut child = command(&home, &["--timeout", "6"]).spawn().unwrap();
    let mut stdin = child.stdin.take().unwrap();
    stdin
        .write_all(b"{\"hook_event_name\": \"tool.execute.before\", ")
        .unwrap();
    let out = child.wait_with_output().unwrap();
    drop(stdin);
    assert_eq!(out.status.code(), Some(0));
    let reply: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(decision(&reply), "deny", "{reply}");
    assert!(
        reason(&reply).contains("did not finish within 1000 ms"),
        "{reply}"
    );
    assert!(started.elapsed() < Duration::from_secs(5));
}

/// The snippet is the plugin file with the hook command and a timeout a
/// few seconds above the one vouch answers within.
#[test]
fn the_snippet_is_the_plugin_with_vouch_written_in() {
    let home = Home::fresh();
    let out = Command::new(env!("CARGO_BIN_EXE_vouch"))
        .args(["hook", "snippet", "opencode"])
        .env_clear()
        .env("HOME", home.dir.path())
        .env("VOUCH_HOME", home.dir.path())
        .output()
        .unwrap();
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    let notes = String::from_utf8(out.stderr).unwrap();
    let command_line = text
        .lines()
        .find(|l| l.starts_with("const COMMAND: string = "))
        .unwrap();
    assert!(
        command_line.contains(" hook opencode --home "),
        "{command_line}"
    );
    assert!(
        command_line.ends_with(" --timeout 100\";"),
        "{command_line}"
    );
    assert!(text.contains("const TIMEOUT_MS: number = 105000;"));
    assert!(text.contains("export const VouchPlugin"));
    assert!(
        notes.contains("~/.config/opencode/plugins/vouch.ts"),
        "{notes}"
    );
    assert!(notes.contains("--pure"), "{notes}");
}
