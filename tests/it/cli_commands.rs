//! The operator and configuration commands as a user runs them: real binary,
//! `VOUCH_HOME` in a temp dir, state shared with an in-process engine.

use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};

use serde_json::json;

use vouch::config::Config;
use vouch::engine::{Engine, EngineOptions};
use vouch::request::Request;

struct Out {
    code: i32,
    stdout: String,
    stderr: String,
}

fn vouch(home: &Path, args: &[&str], envs: &[(&str, &str)], stdin: &[u8]) -> Out {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_vouch"));
    cmd.args(args)
        .env("VOUCH_HOME", home)
        .env_remove("RUST_LOG")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    for (k, v) in envs {
        cmd.env(k, v);
    }
    let mut child = cmd.spawn().unwrap();
    child.stdin.take().unwrap().write_all(stdin).unwrap();
    let out = child.wait_with_output().unwrap();
    Out {
        code: out.status.code().unwrap(),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

fn request_json() -> serde_json::Value {
    json!({"session_id": "s1", "surface": "network", "destination": "registry.npmjs.org:443",
           "command": "npm install", "cwd": "/srv/app"})
}

#[test]
fn config_show_names_every_layer() {
    let home = tempfile::tempdir().unwrap();
    std::fs::write(
        home.path().join("config.toml"),
        "[reviewer]\ntimeout_ms = 20000\n",
    )
    .unwrap();
    let extra = home.path().join("extra.toml");
    std::fs::write(&extra, "[turn]\nmax_reviews = 7\n").unwrap();
    let out = vouch(
        home.path(),
        &["config", "show", "--config", extra.to_str().unwrap()],
        &[("VOUCH_BREAKER__ACTION", "deny")],
        b"",
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    let line = |key: &str| {
        out.stdout
            .lines()
            .find(|l| l.starts_with(&format!("{key} =")))
            .unwrap_or_else(|| panic!("no `{key}` in {}", out.stdout))
            .to_owned()
    };
    assert!(line("reviewer.timeout_ms").contains("20000"));
    assert!(line("reviewer.timeout_ms").contains("user "));
    assert!(line("turn.max_reviews").contains("--config"));
    assert!(line("breaker.action").contains("env VOUCH_BREAKER__ACTION"));
    assert!(line("budget.max_reviewer_input_tokens").contains("default"));
}

#[test]
fn invalid_trusted_config_is_a_clear_error() {
    let home = tempfile::tempdir().unwrap();
    std::fs::write(
        home.path().join("config.toml"),
        "[reviewer]\ntimout_ms = 1\n",
    )
    .unwrap();
    let out = vouch(home.path(), &["config", "show"], &[], b"");
    assert_eq!(out.code, 2);
    assert!(out.stderr.contains("reviewer.timout_ms"), "{}", out.stderr);
    // `serve` refuses to start on the same file.
    let out = vouch(home.path(), &["serve", "--listen", "127.0.0.1:0"], &[], b"");
    assert_eq!(out.code, 2);
    assert!(out.stderr.contains("reviewer.timout_ms"), "{}", out.stderr);
}

#[tokio::test]
async fn grant_consume_succeeds_once_for_the_exact_request() {
    let home = tempfile::tempdir().unwrap();
    let engine =
        Engine::new(EngineOptions::isolated(home.path(), &Config::defaults().unwrap()).unwrap())
            .unwrap();
    let request = Request::from_slice(request_json().to_string().as_bytes()).unwrap();
    let grant = engine.mint_grant("s1", &request).await.unwrap();
    let body = request_json().to_string();
    let args = [
        "grant",
        "consume",
        "--session",
        "s1",
        "--token",
        &grant.token,
    ];

    let mut changed = request_json();
    changed["destination"] = "evil.example:443".into();
    let out = vouch(home.path(), &args, &[], changed.to_string().as_bytes());
    assert_eq!(
        (out.code, out.stdout.trim()),
        (1, r#"{"consumed":false}"#),
        "{}",
        out.stderr
    );

    let other = [
        "grant",
        "consume",
        "--session",
        "s2",
        "--token",
        &grant.token,
    ];
    let out = vouch(home.path(), &other, &[], body.as_bytes());
    assert_eq!(out.code, 1);

    let out = vouch(home.path(), &args, &[], body.as_bytes());
    assert_eq!(
        (out.code, out.stdout.trim()),
        (0, r#"{"consumed":true}"#),
        "{}",
        out.stderr
    );
    let out = vouch(home.path(), &args, &[], body.as_bytes());
    assert_eq!(
        (out.code, out.stdout.trim()),
        (1, r#"{"consumed":false}"#),
        "{}",
        out.stderr
    );

    let out = vouch(home.path(), &args, &[], b"{not json");
    assert_eq!(out.code, 2);
}

/// A grant token is base64url, so one in 64 begins with `-` (`-V…` once
/// read as `--version` and the consume failed with a usage error); a
/// session id may too. Both are values, never flags.
#[test]
fn tokens_and_sessions_beginning_with_a_dash_are_values() {
    let home = tempfile::tempdir().unwrap();
    let body = request_json().to_string();
    let out = vouch(
        home.path(),
        &["grant", "consume", "--session", "-s", "--token", "-VhX9"],
        &[],
        body.as_bytes(),
    );
    assert_eq!(
        (out.code, out.stdout.trim()),
        (1, r#"{"consumed":false}"#),
        "{}",
        out.stderr
    );
    let out = vouch(home.path(), &["approve", "--session", "-h"], &[], b"");
    assert_eq!(out.code, 1, "{}", out.stdout);
    assert!(out.stderr.contains("-h"), "{}", out.stderr);
}

#[test]
fn approve_with_nothing_denied_says_so() {
    let home = tempfile::tempdir().unwrap();
    let out = vouch(home.path(), &["approve", "--session", "nobody"], &[], b"");
    assert_eq!(out.code, 1, "{}", out.stdout);
    assert!(out.stderr.contains("nobody"), "{}", out.stderr);
    let out = vouch(
        home.path(),
        &["approve", "--session", "nobody", "1"],
        &[],
        b"",
    );
    assert_eq!(out.code, 1);
    assert!(out.stderr.contains("no such denial"), "{}", out.stderr);
}

#[test]
fn break_glass_refuses_without_a_terminal() {
    let home = tempfile::tempdir().unwrap();
    let out = vouch(
        home.path(),
        &["break-glass", "--session", "s1"],
        &[],
        b"BREAK-GLASS X\n",
    );
    assert_eq!(out.code, 1);
    assert!(out.stderr.contains("terminal"), "{}", out.stderr);
}

/// Each `vouch hook <harness> --help` (and `snippet`) opens with what that
/// command is, never with the text of an option group it shares.
#[test]
fn every_hook_command_says_what_it_is() {
    let home = tempfile::tempdir().unwrap();
    for harness in vouch::hooks::HarnessId::all() {
        let out = vouch(home.path(), &["hook", harness.as_str(), "--help"], &[], b"");
        assert_eq!(out.code, 0, "{}: {}", harness.as_str(), out.stderr);
        let first = out.stdout.lines().next().unwrap_or_default();
        assert_eq!(
            first,
            harness.harness().about(),
            "`vouch hook {} --help`",
            harness.as_str()
        );
    }
    let out = vouch(home.path(), &["hook", "snippet", "--help"], &[], b"");
    assert!(
        out.stdout.starts_with("Print the settings fragment"),
        "{}",
        out.stdout
    );
}
