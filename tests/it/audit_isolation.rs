//! A broken audit database never touches a decision (design §8): garbage in
//! `audit.sqlite` and a write lock held by another process both turn
//! auditing off with one warning, while every decision stays what it would
//! have been, and the corrupt file stays byte for byte as it was.

use std::io::{BufRead, BufReader, Read, Write};
use std::path::Path;
use std::process::{Command, Stdio};

use serde_json::{Value, json};
use sha2::{Digest, Sha256};

use crate::support::model_server::{ModelServer, Reply, Script};
use crate::support::serve::Running;

/// Bytes that are not an SQLite database (no header), deterministic.
fn garbage() -> Vec<u8> {
    let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
    (0..16_384)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x.to_le_bytes()[0]
        })
        .collect()
}

fn sha256(path: &Path) -> String {
    hex::encode(Sha256::digest(std::fs::read(path).unwrap()))
}

fn private_state(home: &Path) -> std::path::PathBuf {
    use std::os::unix::fs::PermissionsExt;
    let state = home.join("state");
    std::fs::create_dir_all(&state).unwrap();
    std::fs::set_permissions(&state, std::fs::Permissions::from_mode(0o700)).unwrap();
    state
}

fn config(model: &ModelServer) -> String {
    format!(
        "[reviewer]\nprovider = \"openai\"\nbase_url = \"{}\"\ntimeout_ms = 5000\n",
        model.base_url()
    )
}

/// Requests decided by every stage that needs no state beyond the model.
fn requests() -> Vec<Value> {
    let base = |surface: &str| json!({"session_id": "iso", "surface": surface, "cwd": "/srv/app", "home": "/home/dev"});
    let mut out = Vec::new();
    for (surface, field, value) in [
        ("bash", "command", "rm -rf /"),
        ("bash", "command", "make test"),
        ("bash", "command", "cat notes.txt | grep todo"),
        ("read", "path", "/srv/app/README.md"),
        ("read", "path", "/home/dev/.ssh/id_rsa"),
        ("network", "destination", "example.com:443"),
    ] {
        let mut r = base(surface);
        r[field] = value.into();
        out.push(r);
    }
    out
}

/// The decision fields that must not change.
async fn decide_all(server: &Running) -> Vec<Value> {
    let client = reqwest::Client::new();
    let token = server.token("adapter");
    let mut out = Vec::new();
    for round in 0..3 {
        for (i, request) in requests().into_iter().enumerate() {
            let mut request = request;
            request["turn_id"] = format!("t{round}-{i}").into();
            let v: Value = client
                .post(server.url("/v1/review"))
                .bearer_auth(&token)
                .json(&request)
                .send()
                .await
                .unwrap()
                .json()
                .await
                .unwrap();
            out.push(json!([
                v["decision"],
                v["stage"],
                v["rule_id"],
                v["risk_level"],
                v["abstain"]
            ]));
        }
    }
    out
}

/// `/healthz` once the audit has left "on" (the writer opens its database
/// after the first observation, on its own thread), or after 10 s.
async fn settled_health(server: &Running) -> Value {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    loop {
        let health: Value = reqwest::get(server.url("/healthz"))
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        if health["audit"]["status"] != "on" || std::time::Instant::now() > deadline {
            return health;
        }
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
}

fn audit_warnings(log: &[String]) -> usize {
    log.iter().filter(|l| l.contains("auditing is off")).count()
}

#[tokio::test]
async fn a_corrupt_audit_database_changes_no_decision() {
    let model = ModelServer::with_script(Script::always(Reply::allow())).await;
    let (bad, good) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let corrupt = private_state(bad.path()).join("audit.sqlite");
    std::fs::write(&corrupt, garbage()).unwrap();
    // Private, as vouch makes its own: what is refused is the content.
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&corrupt, std::fs::Permissions::from_mode(0o600)).unwrap();
    }
    let before = sha256(&corrupt);
    let env = [("VOUCH_REVIEWER_API_KEY", "test-key")];
    let broken = Running::start(bad.path(), &config(&model), &env);
    let healthy = Running::start(good.path(), &config(&model), &env);
    let (with_broken, with_healthy) = (decide_all(&broken).await, decide_all(&healthy).await);
    assert_eq!(with_broken, with_healthy);
    assert!(
        with_broken.iter().any(|d| d[0] == "allow") && with_broken.iter().any(|d| d[0] == "deny")
    );
    // Health is not degraded by the audit; it says auditing is off once
    // the writer, which opens the database on its own thread, has met it.
    let health = settled_health(&broken).await;
    assert_eq!(health["status"], "ok", "{health}");
    assert_eq!(health["audit"]["status"], "off", "{health}");
    assert!(
        health["audit"]["reason"]
            .as_str()
            .unwrap()
            .contains("corrupt"),
        "{health}"
    );
    let (broken_log, healthy_log) = (broken.stop(), healthy.stop());
    assert_eq!(audit_warnings(&broken_log), 1, "{}", broken_log.join("\n"));
    assert_eq!(
        audit_warnings(&healthy_log),
        0,
        "{}",
        healthy_log.join("\n")
    );
    assert_eq!(sha256(&corrupt), before, "the corrupt file was modified");
    // The healthy service recorded every decision.
    let out = Command::new(env!("CARGO_BIN_EXE_vouch"))
        .args([
            "audit",
            "report",
            "--scope",
            "all",
            "--format",
            "json",
            "--min-count",
            "1",
        ])
        .env("VOUCH_HOME", good.path())
        .env("HOME", good.path())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report["totals"]["observations"], with_healthy.len());
    // A report over the corrupt file fails, clearly, and leaves it alone.
    let out = Command::new(env!("CARGO_BIN_EXE_vouch"))
        .args(["audit", "report", "--scope", "all"])
        .env("VOUCH_HOME", bad.path())
        .env("HOME", bad.path())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("corrupt"));
    assert_eq!(sha256(&corrupt), before);
}

const LOCK_ENV: &str = "VOUCH_TEST_HOLD_AUDIT_LOCK";

/// Helper process for the lock test (the test binary re-runs itself):
/// holds a write transaction on the database named by `LOCK_ENV` until
/// its stdin closes. Does nothing when run without it.
#[test]
#[ignore = "helper run by a_write_lock_held_by_another_process_does_not_stall_a_decision"]
fn hold_audit_write_lock() {
    let Ok(path) = std::env::var(LOCK_ENV) else {
        return;
    };
    let conn = rusqlite::Connection::open(path).unwrap();
    conn.execute_batch(
        "BEGIN IMMEDIATE; INSERT OR REPLACE INTO meta (key, value) VALUES ('lock_test', 1);",
    )
    .unwrap();
    println!("LOCKED");
    std::io::stdout().flush().unwrap();
    let mut rest = Vec::new();
    let _ = std::io::stdin().read_to_end(&mut rest);
    conn.execute_batch("ROLLBACK").unwrap();
}

fn review(home: &Path, request: &Value) -> (Value, String) {
    let out = crate::support::run_with_stdin(
        Command::new(env!("CARGO_BIN_EXE_vouch"))
            .arg("review")
            .env("VOUCH_HOME", home)
            .env("HOME", home)
            .env_remove("RUST_LOG"),
        request.to_string().as_bytes(),
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    (
        serde_json::from_slice(&out.stdout).unwrap(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn observations(home: &Path) -> u64 {
    let out = Command::new(env!("CARGO_BIN_EXE_vouch"))
        .args(["audit", "report", "--scope", "all", "--format", "json"])
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
    report["totals"]["observations"].as_u64().unwrap()
}

#[test]
fn a_write_lock_held_by_another_process_does_not_stall_a_decision() {
    let home = tempfile::tempdir().unwrap();
    let request = json!({"session_id": "lock", "surface": "bash", "command": "rm -rf ~", "home": "/home/dev"});
    // A first decision creates the database.
    let (unlocked, stderr) = review(home.path(), &request);
    assert!(!stderr.contains("auditing is off"), "{stderr}");
    assert_eq!(observations(home.path()), 1);

    let mut holder = Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "audit_isolation::hold_audit_write_lock",
            "--ignored",
            "--nocapture",
        ])
        .env(LOCK_ENV, home.path().join("state/audit.sqlite"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(holder.stdout.take().unwrap()).lines();
    assert!(
        lines.any(|l| l.is_ok_and(|l| l.contains("LOCKED"))),
        "the helper did not take the lock"
    );
    let (locked, stderr) = review(home.path(), &request);
    // The decision came back, and its process exited, while the other
    // process still held the lock (it holds it until its stdin closes).
    assert!(
        holder.try_wait().unwrap().is_none(),
        "the lock holder is gone"
    );
    assert_eq!(locked, unlocked);
    assert_eq!(stderr.matches("vouch::audit").count(), 1, "{stderr}");
    assert!(
        stderr.contains("auditing is off") && stderr.contains("locked"),
        "{stderr}"
    );
    drop(holder.stdin.take());
    assert!(holder.wait().unwrap().success());
    // The decision made under the lock went uncounted; auditing resumes in
    // the next process.
    review(home.path(), &request);
    assert_eq!(observations(home.path()), 2);
}
