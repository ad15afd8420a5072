//! The inputs that once aborted `vouch serve` (a stack overflow from deep
//! nesting) or held a worker for minutes (nested expansions growing ×2 or
//! ×4 per level) sent to a running service: each is answered with a
//! fail-closed decision, and the service keeps answering — a hard deny is
//! still denied and `/livez` still live after all of them (issue 30).
//!
//! Issue 43's generator (`crates/vouch-shell/tests/support/deep.rs`):
//! every wrapper, runner, shell, script and shell-code option of the
//! command table and every nesting construct, each as deep as a request's
//! 64 KiB `command` allows (thousands of levels) around `rm -rf ~`, sent
//! to a running `vouch serve` and to `vouch review`: each answered, never
//! an allow, and the service keeps answering. (The same inputs reach every
//! `vouch hook <harness>` in `hook_supervisor.rs`.)

use std::io::Write;
use std::process::{Command, Stdio};

use serde_json::{Value, json};

use crate::support::deep;
use crate::support::serve::Running;

/// No reviewer: what the floor does not deny defers to a person, so every
/// answer of vouch's own is a deny or a defer (never an allow).
const DEFER_WITHOUT_MODEL: &str = "[reviewer]\nwithout_model = \"human\"\n\
    [server]\nrate_limit_per_second = 100000\n";

fn generated() -> Vec<deep::Case> {
    deep::all_within(10_000, vouch::request::MAX_COMMAND_BYTES)
}

/// `open` repeated `depth` times around `inner`, closed by `close`.
fn nest(open: &str, inner: &str, close: &str, depth: usize) -> String {
    format!("{}{inner}{}", open.repeat(depth), close.repeat(depth))
}

fn hostile() -> Vec<(&'static str, String)> {
    vec![
        (
            "arithmetic 1,000 deep",
            format!("echo $(({}))", nest("(", "1", ")", 1000)),
        ),
        (
            "arithmetic expansions 1,000 deep",
            format!("echo {}", nest("$(( 1+", "1", " ))", 1000)),
        ),
        (
            "${a:-…} 3,000 deep",
            format!("echo {}", nest("${a:-", "x", "}", 3000)),
        ),
        (
            "${a/x/…} 12 deep",
            format!("echo {}", nest("${a/x/", "y", "}", 12)),
        ),
        (
            "${a:-…} 50 deep behind a hard deny",
            format!("rm -rf / ; echo {}", nest("${a:-", "x", "}", 50)),
        ),
        (
            "${a:=…} 26 deep",
            format!("echo {}", nest("${a:=", "x", "}", 26)),
        ),
        (
            "${a#…} 26 deep",
            format!("echo {}", nest("${a#", "x", "}", 26)),
        ),
        (
            "${a:-${b}…} 26 deep",
            format!("echo {}", nest("${a:-${b}", "x", "}", 26)),
        ),
        (
            "set -- \"$@\" \"$@\" 25 times",
            format!(
                "set -- a b; {}echo \"$@\"",
                "set -- \"$@\" \"$@\"; ".repeat(25)
            ),
        ),
        (
            "subscripts 10,000 deep",
            format!("echo $(({}))", nest("a[", "1", "]", 10_000)),
        ),
        (
            "command substitutions 3,000 deep",
            format!("echo {}", nest("$(echo ", "x", ")", 3000)),
        ),
    ]
}

fn request(command: &str) -> Value {
    json!({
        "session_id": "nesting", "turn_id": "t-1", "source": "claude-code",
        "surface": "bash", "tool": "Bash", "command": command,
        "cwd": "/srv/app", "home": "/home/dev",
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn deep_and_exponential_inputs_are_answered_and_the_service_keeps_answering() {
    let home = tempfile::tempdir().unwrap();
    let server = Running::start(home.path(), "", &[]);
    let token = server.token("adapter");
    let client = reqwest::Client::builder()
        .timeout(std::time::Duration::from_secs(20))
        .build()
        .unwrap();
    let review = |command: String| {
        let client = client.clone();
        let url = server.url("/v1/review");
        let token = token.clone();
        async move {
            let answer = client
                .post(url)
                .bearer_auth(token)
                .json(&request(&command))
                .send()
                .await
                .unwrap();
            assert_eq!(answer.status(), 200);
            answer.json::<Value>().await.unwrap()
        }
    };
    for (name, command) in hostile() {
        let decision = review(command).await;
        let outcome = decision["decision"].as_str().unwrap_or_default();
        // No model is configured: what is not a hard deny abstains (the
        // harness decides). Never an allow of vouch's own, but for a
        // complete analysis that proves the command only prints (`echo` of
        // a deep expansion is inert).
        let abstains = outcome == "allow" && decision["abstain"] == true;
        let inert = decision["stage"] == "inert";
        assert!(
            abstains || inert || matches!(outcome, "deny" | "defer"),
            "{name}: {decision}"
        );
        if name.contains("behind a hard deny") {
            assert_eq!(outcome, "deny", "{name}: {decision}");
            assert_eq!(decision["stage"], "hard_deny", "{name}: {decision}");
        }
        let live = client.get(server.url("/livez")).send().await.unwrap();
        assert_eq!(live.status(), 200, "after {name}");
    }
    let decision = review("cd /tmp && rm -rf ~".to_owned()).await;
    assert_eq!(decision["decision"], "deny", "{decision}");
    assert_eq!(decision["stage"], "hard_deny", "{decision}");
    server.stop();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_runner_and_construct_thousands_deep_is_answered_and_the_service_keeps_answering() {
    let home = tempfile::tempdir().unwrap();
    let server = Running::start(home.path(), DEFER_WITHOUT_MODEL, &[]);
    let token = server.token("adapter");
    let client = reqwest::Client::builder()
        .timeout(std::time::Duration::from_secs(20))
        .build()
        .unwrap();
    let cases = generated();
    assert!(cases.len() > 200, "{} cases", cases.len());
    for case in &cases {
        let answer = client
            .post(server.url("/v1/review"))
            .bearer_auth(&token)
            .json(&request(&case.command))
            .send()
            .await
            .unwrap_or_else(|e| panic!("{}: {e}", case.name));
        assert_eq!(answer.status(), 200, "{}", case.name);
        let decision: Value = answer.json().await.unwrap();
        assert!(
            matches!(decision["decision"].as_str(), Some("deny" | "defer")),
            "{}: {decision}",
            case.name
        );
    }
    let live = client.get(server.url("/livez")).send().await.unwrap();
    assert_eq!(live.status(), 200);
    let decision: Value = client
        .post(server.url("/v1/review"))
        .bearer_auth(&token)
        .json(&request("cd /tmp && rm -rf ~"))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(decision["stage"], "hard_deny", "{decision}");
    server.stop();
}

/// The same inputs to `vouch review`, one process each: exit 0 and one
/// decision line, never an allow (the process does not abort).
#[test]
fn every_runner_and_construct_thousands_deep_is_decided_by_vouch_review() {
    let home = tempfile::tempdir().unwrap();
    std::fs::write(home.path().join("config.toml"), DEFER_WITHOUT_MODEL).unwrap();
    for case in generated() {
        let mut child = Command::new(env!("CARGO_BIN_EXE_vouch"))
            .arg("review")
            .env_clear()
            .env("VOUCH_HOME", home.path())
            .env("HOME", home.path())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let body = request(&case.command).to_string();
        child
            .stdin
            .take()
            .unwrap()
            .write_all(body.as_bytes())
            .unwrap();
        let out = child.wait_with_output().unwrap();
        assert_eq!(
            out.status.code(),
            Some(0),
            "{}: {}",
            case.name,
            String::from_utf8_lossy(&out.stderr)
        );
        let decision: Value = serde_json::from_slice(&out.stdout).unwrap();
        assert!(
            matches!(decision["decision"].as_str(), Some("deny" | "defer")),
            "{}: {decision}",
            case.name
        );
    }
}
