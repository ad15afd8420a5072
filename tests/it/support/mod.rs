//! Shared test support for the integration tests: the fixture loader, the
//! scripted model server, starting `vouch serve`, each harness's hook
//! calls, the deep-nesting generator and a real engine over temporary
//! state.

pub mod fixtures;
pub mod hooks;
pub mod model_server;
pub mod postgres;
pub mod proof;
pub mod serve;
pub mod state;
pub mod tls;

/// The deep-nesting generator of `vouch-shell`'s tests: every program the
/// command table says runs code, and every nesting construct, stacked
/// thousands deep around `rm -rf ~`.
#[path = "../../../crates/vouch-shell/tests/support/deep.rs"]
pub mod deep;

/// A missing tool skips a test, or under `VOUCH_TEST_STRICT=1` fails it
/// (the helper every test tree shares).
#[path = "../../../crates/vouch-shell/tests/support/strict.rs"]
pub mod strict;

/// The path of the audit report over every project, 30 days.
pub const AUDIT_REPORT_ALL: &str = "/v1/audit/report?scope=all&days=30";

/// The observations the audit has counted, over every project, as the
/// service at `report_url` ([`AUDIT_REPORT_ALL`] on it) reports them.
pub async fn audit_observations(http: &reqwest::Client, report_url: &str, operator: &str) -> u64 {
    let report: serde_json::Value = http
        .get(report_url)
        .bearer_auth(operator)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    report["totals"]["observations"].as_u64().unwrap()
}

/// Runs `command` with `stdin` written to it, stdout and stderr captured.
pub fn run_with_stdin(command: &mut std::process::Command, stdin: &[u8]) -> std::process::Output {
    spawn_with_stdin(command, stdin).wait_with_output().unwrap()
}

/// Starts `command` with piped stdout and stderr, writes `stdin` to it and
/// closes it: the child, for a caller that watches how long it runs.
pub fn spawn_with_stdin(command: &mut std::process::Command, stdin: &[u8]) -> std::process::Child {
    use std::io::Write as _;
    use std::process::Stdio;
    let mut child = command
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(stdin).unwrap();
    child
}

/// Every `.rs` file under `dir`, recursively (the source scans of
/// `rules.rs` and `layering.rs`).
pub fn rust_files(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    let mut pending = vec![dir.to_path_buf()];
    while let Some(dir) = pending.pop() {
        for entry in std::fs::read_dir(&dir).unwrap().flatten() {
            let path = entry.path();
            if path.is_dir() {
                pending.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") {
                out.push(path);
            }
        }
    }
    out
}
