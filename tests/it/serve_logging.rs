//! Logging never stalls a decision: `vouch serve` with its stderr a pipe
//! that nobody reads (a supervisor that stopped draining it) keeps answering
//! — log lines it cannot write are dropped and counted in `/metrics`, and the
//! count is reported once at shutdown. Short-lived commands still flush
//! every line before they exit.

use std::io::{BufRead, BufReader};
use std::process::{Child, ChildStderr, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::json;

use crate::support::model_server::{ModelServer, Script};
use crate::support::serve::{self, READY_PREFIX};

/// Many times what a pipe (64 KiB) and the log buffer hold.
const REQUESTS: usize = 20_000;
const WORKERS: usize = 16;
/// Each request's bound: a stalled server fails here instead of hanging.
const PER_REQUEST: Duration = Duration::from_secs(10);

struct Serve {
    child: Child,
    listen: String,
    /// Held open and unread after the ready line, until taken.
    stderr: Option<BufReader<ChildStderr>>,
    home: tempfile::TempDir,
}

impl Drop for Serve {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn start() -> Serve {
    let home = tempfile::tempdir().unwrap();
    // Lifted so the load is not refused by the per-token rate limit.
    let config = "[server]\nrate_limit_per_second = 100000\n";
    let mut child = serve::command(home.path(), "127.0.0.1:0", config)
        .spawn()
        .unwrap();
    let mut stderr = BufReader::new(child.stderr.take().unwrap());
    let mut line = String::new();
    let listen = loop {
        line.clear();
        assert!(
            stderr.read_line(&mut line).unwrap() > 0,
            "serve exited before listening"
        );
        if let Some(addr) = line.trim_end().strip_prefix(READY_PREFIX) {
            break addr.to_owned();
        }
    };
    Serve {
        child,
        listen,
        stderr: Some(stderr),
        home,
    }
}

fn dropped_lines(metrics: &str) -> u64 {
    metrics
        .lines()
        .find_map(|l| l.strip_prefix("vouch_log_lines_dropped_total "))
        .unwrap_or_else(|| panic!("no drop counter in /metrics:\n{metrics}"))
        .parse()
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_undrained_stderr_never_stalls_the_service() {
    let serve = start();
    let token = std::fs::read_to_string(serve.home.path().join("state/adapter.token")).unwrap();
    let token = token.trim().to_owned();
    let client = reqwest::Client::new();
    let url = format!("http://{}/v1/review", serve.listen);
    let body =
        json!({"session_id": "log", "surface": "bash", "command": "rm -rf /", "cwd": "/srv/app"});

    let started = Instant::now();
    let mut workers = tokio::task::JoinSet::new();
    for _ in 0..WORKERS {
        let (client, url, token, body) = (client.clone(), url.clone(), token.clone(), body.clone());
        workers.spawn(async move {
            let mut slowest = Duration::ZERO;
            for _ in 0..REQUESTS / WORKERS {
                let sent = Instant::now();
                let response = client
                    .post(&url)
                    .bearer_auth(&token)
                    .json(&body)
                    .timeout(PER_REQUEST)
                    .send()
                    .await
                    .expect("answered within the bound");
                assert_eq!(response.status(), 200);
                let decision: serde_json::Value = response.json().await.unwrap();
                assert_eq!(decision["decision"], "deny");
                assert_eq!(decision["stage"], "hard_deny");
                slowest = slowest.max(sent.elapsed());
            }
            slowest
        });
    }
    let mut slowest = Duration::ZERO;
    while let Some(done) = workers.join_next().await {
        slowest = slowest.max(done.unwrap());
    }
    let elapsed = started.elapsed();

    let metrics_url = format!("http://{}/metrics", serve.listen);
    let metrics = client
        .get(&metrics_url)
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    let dropped = dropped_lines(&metrics);
    eprintln!(
        "{REQUESTS} reviews with stderr undrained in {elapsed:?}; slowest {slowest:?}; \
         {dropped} log lines dropped"
    );
    // One access line per request; most could be neither written nor
    // buffered.
    assert!(dropped > 0, "{metrics}");
    assert!(dropped <= REQUESTS as u64 + 10, "{dropped}");
    assert!(
        metrics.contains(&format!(
            "vouch_http_requests_total{{route=\"/v1/review\",status=\"200\"}} {REQUESTS}"
        )),
        "{metrics}"
    );

    // Drain stderr from now on; once a fresh access line arrives the log
    // has room again, and the shutdown report can be written.
    let mut serve = serve;
    let stderr = serve.stderr.take().unwrap();
    let seen = Arc::new(Mutex::new(String::new()));
    let reader = {
        let seen = Arc::clone(&seen);
        std::thread::spawn(move || {
            for line in stderr.lines().map_while(Result::ok) {
                let mut seen = seen.lock().unwrap();
                seen.push_str(&line);
                seen.push('\n');
            }
        })
    };
    let deadline = Instant::now() + Duration::from_secs(30);
    while !seen.lock().unwrap().contains("/healthz") {
        assert!(Instant::now() < deadline, "the log never caught up");
        let healthz = format!("http://{}/healthz", serve.listen);
        client.get(healthz).send().await.unwrap();
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let killed = Command::new("kill")
        .args(["-TERM", &serve.child.id().to_string()])
        .status()
        .unwrap();
    assert!(killed.success());
    let deadline = Instant::now() + Duration::from_secs(15);
    let status = loop {
        if let Some(status) = serve.child.try_wait().unwrap() {
            break status;
        }
        assert!(
            Instant::now() < deadline,
            "serve did not exit after SIGTERM"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    assert!(status.success(), "{status:?}");
    reader.join().unwrap();
    let log = seen.lock().unwrap().clone();
    assert!(log.contains("log lines were dropped"), "{log}");
    let reported: u64 = log
        .split("dropped_lines=")
        .nth(1)
        .and_then(|rest| rest.split(|c: char| !c.is_ascii_digit()).next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no dropped_lines in the shutdown report:\n{log}"));
    assert!(reported >= dropped, "{reported} < {dropped}");
}

/// `vouch review` writes its log lines from the writer's thread; they are
/// all on stderr when the process has exited, run after run.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn short_lived_commands_flush_their_logs_before_exiting() {
    let model = ModelServer::with_script(Script::default()).await;
    let home = tempfile::tempdir().unwrap();
    let base_url = model.base_url();
    let runs = tokio::task::spawn_blocking(move || {
        (0..5)
            .map(|i| {
                let mut child = Command::new(env!("CARGO_BIN_EXE_vouch"))
                    .arg("review")
                    .env("VOUCH_HOME", home.path())
                    .env("HOME", home.path())
                    .env("VOUCH_REVIEWER__PROVIDER", "openai")
                    .env("VOUCH_REVIEWER__BASE_URL", &base_url)
                    // The review events are the last lines logged before
                    // the decision is printed and the process exits.
                    .env("RUST_LOG", "vouch::review=info")
                    .stdin(Stdio::piped())
                    .stdout(Stdio::piped())
                    .stderr(Stdio::piped())
                    .spawn()
                    .unwrap();
                let request = json!({"session_id": "flush", "turn_id": format!("t{i}"),
                    "surface": "bash", "command": format!("make build-{i}"), "cwd": "/srv/app"});
                std::io::Write::write_all(
                    &mut child.stdin.take().unwrap(),
                    request.to_string().as_bytes(),
                )
                .unwrap();
                child.wait_with_output().unwrap()
            })
            .collect::<Vec<_>>()
    })
    .await
    .unwrap();
    for out in runs {
        let stdout = String::from_utf8_lossy(&out.stdout);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(0), "{stderr}");
        let decision: serde_json::Value = serde_json::from_str(&stdout).unwrap();
        assert_eq!(decision["stage"], "reviewer", "{decision}");
        assert!(stderr.contains("review_attempt"), "{stderr}");
        assert!(stderr.contains("review_complete"), "{stderr}");
    }
}
