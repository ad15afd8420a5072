//! `vouch review` as a user runs it: one request on stdin, one decision line
//! on stdout, exit 0; malformed input → one line on stderr, exit 2, and never
//! a panic.

use std::io::Write;
use std::process::{Command, Stdio};

struct Run {
    code: i32,
    stdout: String,
    stderr: String,
}

fn review(home: &std::path::Path, body: &[u8]) -> Run {
    let mut child = Command::new(env!("CARGO_BIN_EXE_vouch"))
        .arg("review")
        .env("VOUCH_HOME", home)
        .env_remove("RUST_LOG")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // A writer thread: the child may exit before reading everything (it
    // refuses oversized input), so a broken pipe here is expected.
    let mut stdin = child.stdin.take().unwrap();
    let body = body.to_vec();
    let writer = std::thread::spawn(move || {
        let _ = stdin.write_all(&body);
    });
    let out = child.wait_with_output().unwrap();
    writer.join().unwrap();
    Run {
        code: out.status.code().expect("exited, not killed by a signal"),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

fn assert_rejected(run: &Run, needle: &str) {
    assert_eq!(run.code, 2, "stderr: {}", run.stderr);
    assert!(
        run.stdout.is_empty(),
        "stdout must be empty: {}",
        run.stdout
    );
    assert!(
        !run.stderr.contains("panicked"),
        "must not panic: {}",
        run.stderr
    );
    let lines: Vec<&str> = run.stderr.lines().collect();
    assert_eq!(lines.len(), 1, "one line on stderr: {:?}", run.stderr);
    assert!(
        run.stderr.to_lowercase().contains(needle),
        "stderr should mention `{needle}`: {}",
        run.stderr
    );
}

#[test]
fn example_request_is_decided_on_one_line() {
    let home = tempfile::tempdir().unwrap();
    let body = std::fs::read(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/examples/bash-request.json"
    ))
    .unwrap();
    let run = review(home.path(), &body);
    assert_eq!(run.code, 0, "stderr: {}", run.stderr);
    assert_eq!(run.stdout.lines().count(), 1);
    let d: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(d["decision"], "deny");
    assert_eq!(d["stage"], "hard_deny");
    assert_eq!(d["request_hash"].as_str().unwrap().len(), 64);
    assert!(d["message"].as_str().unwrap().contains("not a human"));
}

#[test]
fn truncated_json_is_rejected() {
    let home = tempfile::tempdir().unwrap();
    let run = review(home.path(), br#"{"session_id": "s", "surface": "ba"#);
    assert_rejected(&run, "eof");
}

#[test]
fn deep_nesting_is_rejected() {
    let home = tempfile::tempdir().unwrap();
    let mut body = String::from(r#"{"session_id":"s","surface":"bash","input":"#);
    body.push_str(&"[".repeat(10_000));
    body.push_str(&"]".repeat(10_000));
    body.push('}');
    let run = review(home.path(), body.as_bytes());
    assert_rejected(&run, "recursion");
}

#[test]
fn invalid_utf8_is_rejected() {
    let home = tempfile::tempdir().unwrap();
    let run = review(
        home.path(),
        b"{\"session_id\":\"s\xff\xfe\",\"surface\":\"bash\"}",
    );
    assert_rejected(&run, "utf-8");
}

#[test]
fn nul_bytes_are_rejected() {
    let home = tempfile::tempdir().unwrap();
    let raw = review(
        home.path(),
        b"{\"session_id\":\"s\0\",\"surface\":\"bash\"}",
    );
    assert_rejected(&raw, "control character");
    let escaped = review(
        home.path(),
        br#"{"session_id":"s","surface":"bash","command":"rm\u0000 -rf /"}"#,
    );
    assert_rejected(&escaped, "nul");
}

#[test]
fn two_mebibyte_body_is_rejected() {
    let home = tempfile::tempdir().unwrap();
    let mut body = String::from(r#"{"session_id":"s","surface":"bash","command":""#);
    body.push_str(&"a".repeat(2 * 1024 * 1024));
    body.push_str("\"}");
    let run = review(home.path(), body.as_bytes());
    assert_rejected(&run, "larger than the limit");
}

#[test]
fn empty_input_and_field_errors_are_named() {
    let home = tempfile::tempdir().unwrap();
    assert_rejected(&review(home.path(), b""), "empty");
    assert_rejected(
        &review(
            home.path(),
            br#"{"session_id":"s","surface":"bash","comand":"ls"}"#,
        ),
        "unknown field `comand`",
    );
    assert_rejected(
        &review(home.path(), br#"{"surface":"bash"}"#),
        "missing field `session_id`",
    );
    assert_rejected(
        &review(home.path(), br#"{"session_id":"s","surface":"foo bar"}"#),
        "surface `foo bar` is not valid",
    );
}
