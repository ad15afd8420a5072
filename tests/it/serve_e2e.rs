//! End-to-end tests of `vouch serve`: the real binary, a temp `VOUCH_HOME`,
//! real sockets (TCP on 127.0.0.1:0 and a Unix socket), real signals.

use std::io::{BufRead, BufReader};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

use crate::support::model_server::{ModelServer, Reply, Script};
use crate::support::serve::{self, READY_PREFIX};

struct Server {
    child: Child,
    listen: String,
    home: tempfile::TempDir,
    stderr: mpsc::Receiver<String>,
}

impl Server {
    fn start(listen: &str, config: &str) -> Server {
        Self::try_start(listen, config)
            .unwrap_or_else(|(status, log)| panic!("vouch serve exited early ({status:?}):\n{log}"))
    }

    /// Starts `vouch serve`; `Err` with its exit status and stderr if it
    /// stopped before listening.
    fn try_start(listen: &str, config: &str) -> Result<Server, (Option<ExitStatus>, String)> {
        let home = tempfile::tempdir().unwrap();
        let mut child = serve::command(home.path(), listen, config)
            .env("VOUCH_REVIEWER_API_KEY", "test-key")
            // `request started` lines are the readiness signal of the
            // shutdown tests.
            .env("RUST_LOG", "info,vouch::access=debug")
            .spawn()
            .unwrap();
        let (tx, rx) = mpsc::channel();
        let stderr = child.stderr.take().unwrap();
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        let deadline = Instant::now() + Duration::from_secs(20);
        let mut log = String::new();
        loop {
            match rx.recv_timeout(Duration::from_millis(100)) {
                Ok(line) => {
                    log.push_str(&line);
                    log.push('\n');
                    if let Some(addr) = line.strip_prefix(READY_PREFIX) {
                        return Ok(Server {
                            child,
                            listen: addr.trim().to_owned(),
                            home,
                            stderr: rx,
                        });
                    }
                }
                Err(mpsc::RecvTimeoutError::Timeout) => {
                    if let Ok(Some(status)) = child.try_wait() {
                        return Err((Some(status), log));
                    }
                    assert!(Instant::now() < deadline, "server did not start:\n{log}");
                }
                Err(mpsc::RecvTimeoutError::Disconnected) => {
                    let status = child.wait().ok();
                    return Err((status, log));
                }
            }
        }
    }

    fn state_dir(&self) -> PathBuf {
        self.home.path().join("state")
    }

    fn token(&self, name: &str) -> String {
        std::fs::read_to_string(self.state_dir().join(format!("{name}.token")))
            .unwrap()
            .trim()
            .to_owned()
    }

    fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.listen)
    }

    fn sigterm(&self) {
        let status = Command::new("kill")
            .args(["-TERM", &self.child.id().to_string()])
            .status()
            .unwrap();
        assert!(status.success());
    }

    /// Reads stderr until a line containing `needle` (returned), failing
    /// after `within`.
    fn wait_for_log(&self, needle: &str, within: Duration) -> String {
        let deadline = Instant::now() + within;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.stderr.recv_timeout(left) {
                Ok(line) if line.contains(needle) => return line,
                Ok(_) => {}
                Err(e) => panic!("no `{needle}` on stderr within {within:?}: {e}"),
            }
        }
    }

    /// Waits for the process to exit; returns its status and the rest of stderr.
    fn wait(mut self, within: Duration) -> (ExitStatus, String) {
        let deadline = Instant::now() + within;
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                let rest: Vec<String> = self.stderr.try_iter().collect();
                return (status, rest.join("\n"));
            }
            if Instant::now() > deadline {
                let _ = self.child.kill();
                panic!("server did not exit within {within:?}");
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn review_request(command: &str) -> Value {
    json!({"session_id": "e2e", "surface": "bash", "command": command, "cwd": "/srv/app"})
}

/// One HTTP/1.1 exchange over a Unix socket (reqwest has no Unix transport).
async fn unix_request(
    path: &Path,
    method: &str,
    uri: &str,
    token: &str,
    body: &str,
) -> (u16, String) {
    let mut stream = tokio::net::UnixStream::connect(path).await.unwrap();
    let head = format!(
        "{method} {uri} HTTP/1.1\r\nHost: vouch\r\nAuthorization: Bearer {token}\r\n\
         Content-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    );
    stream.write_all(head.as_bytes()).await.unwrap();
    stream.write_all(body.as_bytes()).await.unwrap();
    let mut raw = String::new();
    stream.read_to_string(&mut raw).await.unwrap();
    parse_response(&raw)
}

fn parse_response(raw: &str) -> (u16, String) {
    let status: u16 = raw.split(' ').nth(1).unwrap().parse().unwrap();
    let body = raw
        .split_once("\r\n\r\n")
        .map(|(_, b)| b.to_owned())
        .unwrap_or_default();
    (status, body)
}

#[tokio::test]
async fn review_over_tcp_then_sigterm_exits_zero() {
    let server = Server::start("127.0.0.1:0", "");
    assert!(server.listen.starts_with("127.0.0.1:"), "{}", server.listen);
    let token = server.token("adapter");
    let mode = std::fs::metadata(server.state_dir().join("adapter.token"))
        .unwrap()
        .permissions()
        .mode();
    assert_eq!(mode & 0o777, 0o600);
    let client = reqwest::Client::new();

    let response = client
        .post(server.url("/v1/review"))
        .bearer_auth(&token)
        .json(&review_request("rm -rf /"))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    let decision: Value = response.json().await.unwrap();
    assert_ne!(decision["decision"], "allow");
    assert_eq!(decision["request_hash"].as_str().unwrap().len(), 64);

    let response = client
        .post(server.url("/v1/review"))
        .json(&review_request("ls"))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 401);
    let response = client.get(server.url("/healthz")).send().await.unwrap();
    assert_eq!(response.status(), 200);
    let metrics = client
        .get(server.url("/metrics"))
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(
        metrics.contains("vouch_http_requests_total{route=\"/v1/review\",status=\"200\"} 1"),
        "{metrics}"
    );

    server.sigterm();
    let (status, log) = server.wait(Duration::from_secs(10));
    assert!(status.success(), "{status:?}\n{log}");
    // Where the tokens are is printed; their values never are.
    assert!(!log.contains(&token));
}

#[tokio::test]
async fn review_over_a_unix_socket() {
    let dir = tempfile::tempdir().unwrap();
    let socket = dir.path().join("vouch.sock");
    let server = Server::start(&format!("unix:{}", socket.display()), "");
    assert_eq!(server.listen, format!("unix:{}", socket.display()));
    let mode = std::fs::metadata(&socket).unwrap().permissions().mode();
    assert_eq!(mode & 0o777, 0o600);
    let token = server.token("adapter");

    let body = review_request("rm -rf ~").to_string();
    let (status, body) = unix_request(&socket, "POST", "/v1/review", &token, &body).await;
    assert_eq!(status, 200, "{body}");
    let decision: Value = serde_json::from_str(&body).unwrap();
    assert_ne!(decision["decision"], "allow");

    let hook = json!({"session_id": "s", "cwd": "/srv/app", "hook_event_name": "PreToolUse", "tool_name": "Bash", "tool_input": {"command": "npm install left-pad"}, "tool_use_id": "t1"}).to_string();
    let (status, body) = unix_request(&socket, "POST", "/hooks/claude-code", &token, &hook).await;
    assert_eq!(status, 200, "{body}");
    let answer: Value = serde_json::from_str(&body).unwrap();
    assert_ne!(answer["hookSpecificOutput"]["permissionDecision"], "allow");

    let (status, _) = unix_request(&socket, "GET", "/v1/sessions/s/denials", &token, "").await;
    assert_eq!(status, 403);

    server.sigterm();
    let (status, log) = server.wait(Duration::from_secs(10));
    assert!(status.success(), "{status:?}\n{log}");
    assert!(!socket.exists(), "socket file left behind");
}

/// A supervisor may signal as soon as it reads the `listening` line: the
/// handlers are installed before it, so that is a graceful exit 0, never
/// death by the default action of SIGTERM.
#[test]
fn sigterm_right_after_listening_exits_zero() {
    for _ in 0..5 {
        let server = Server::start("127.0.0.1:0", "");
        server.sigterm();
        let (status, log) = server.wait(Duration::from_secs(10));
        assert_eq!(status.code(), Some(0), "{status:?}\n{log}");
    }
}

#[test]
fn non_loopback_listen_is_refused() {
    let (status, log) = Server::try_start("0.0.0.0:0", "")
        .err()
        .expect("must not start");
    assert_eq!(status.and_then(|s| s.code()), Some(1));
    assert!(log.contains("`0.0.0.0:0`"), "{log}");
    assert!(log.contains("server.allow_remote"), "{log}");
}

/// A request still being uploaded when SIGTERM arrives is finished and
/// answered; then the process exits 0.
#[tokio::test]
async fn sigterm_finishes_a_slow_in_flight_request() {
    let server = Server::start("127.0.0.1:0", "");
    let token = server.token("adapter");
    let body = review_request("rm -rf /").to_string();
    let (first, second) = body.split_at(body.len() / 2);

    let mut stream = tokio::net::TcpStream::connect(&server.listen)
        .await
        .unwrap();
    let head = format!(
        "POST /v1/review HTTP/1.1\r\nHost: vouch\r\nAuthorization: Bearer {token}\r\n\
         Content-Type: application/json\r\nContent-Length: {}\r\n\r\n",
        body.len()
    );
    stream.write_all(head.as_bytes()).await.unwrap();
    stream.write_all(first.as_bytes()).await.unwrap();
    server.wait_for_log("request started", Duration::from_secs(10));

    server.sigterm();
    server.wait_for_log("no longer accepting connections", Duration::from_secs(10));
    // The log line comes just before the accept loop drops the listener, so
    // wait (bounded) for the port to refuse connections.
    let closed_by = std::time::Instant::now() + Duration::from_secs(10);
    while tokio::net::TcpStream::connect(&server.listen).await.is_ok() {
        assert!(
            std::time::Instant::now() < closed_by,
            "still accepting connections 10 s after SIGTERM"
        );
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    // Still draining: not exited.
    let mut server = server;
    assert!(
        server.child.try_wait().unwrap().is_none(),
        "exited with a request in flight"
    );

    stream.write_all(second.as_bytes()).await.unwrap();
    let mut raw = Vec::new();
    stream.read_to_end(&mut raw).await.unwrap();
    let (status, body) = parse_response(&String::from_utf8(raw).unwrap());
    assert_eq!(status, 200, "{body}");
    let decision: Value = serde_json::from_str(&body).unwrap();
    assert_ne!(decision["decision"], "allow");

    let (status, log) = server.wait(Duration::from_secs(10));
    assert!(status.success(), "{status:?}\n{log}");
}

/// A request that never completes cannot hold shutdown past
/// `server.shutdown_grace_ms`.
#[tokio::test]
async fn shutdown_grace_bounds_a_stuck_request() {
    let server = Server::start("127.0.0.1:0", "[server]\nshutdown_grace_ms = 300\n");
    let token = server.token("adapter");
    let mut stream = tokio::net::TcpStream::connect(&server.listen)
        .await
        .unwrap();
    let head = format!(
        "POST /v1/review HTTP/1.1\r\nHost: vouch\r\nAuthorization: Bearer {token}\r\n\
         Content-Length: 1000\r\n\r\n{{\"session_id\""
    );
    stream.write_all(head.as_bytes()).await.unwrap();
    server.wait_for_log("request started", Duration::from_secs(10));
    let started = Instant::now();
    server.sigterm();
    let (status, log) = server.wait(Duration::from_secs(10));
    assert!(status.success(), "{status:?}\n{log}");
    assert!(
        started.elapsed() >= Duration::from_millis(250),
        "{:?}",
        started.elapsed()
    );
    assert!(log.contains("grace elapsed"), "{log}");
}

/// A supervisor may signal the service the moment it reads the ready line:
/// the handlers must already be installed then, or the signal takes its
/// default action (killed by the signal, no drain, no exit 0). bash's
/// builtin `kill` sends it microseconds after the line arrives, with no
/// process start in between; each run alternates SIGTERM and SIGINT.
#[test]
fn a_signal_right_after_the_ready_line_still_drains_and_exits_zero() {
    let script = r#"
        set -u
        fifo="$HOME/stderr.fifo"; mkfifo "$fifo"
        "$VOUCH" serve --listen 127.0.0.1:0 2>"$fifo" &
        pid=$!
        exec 3<"$fifo"
        while IFS= read -r line <&3; do
            case $line in "vouch: listening on "*) kill -"$SIG" "$pid"; break;; esac
        done
        cat <&3 >"$HOME/rest.log" &
        wait "$pid"; code=$?
        wait
        echo "exit=$code"
    "#;
    for run in 0..6 {
        let home = tempfile::tempdir().unwrap();
        let signal = if run % 2 == 0 { "TERM" } else { "INT" };
        let out = Command::new("bash")
            .args(["-c", script])
            .env("VOUCH", env!("CARGO_BIN_EXE_vouch"))
            .env("VOUCH_HOME", home.path())
            .env("HOME", home.path())
            .env("RUST_LOG", "info")
            .env("SIG", signal)
            .output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        let rest = std::fs::read_to_string(home.path().join("rest.log")).unwrap_or_default();
        assert_eq!(stdout.trim(), "exit=0", "run {run} (SIG{signal}):\n{rest}");
        assert!(rest.contains(&format!("received SIG{signal}")), "{rest}");
    }
}

/// The test model server answering every chat completion with `verdict`
/// after `delay`.
async fn model_answering(delay: Duration, verdict: Value) -> ModelServer {
    ModelServer::with_script(Script::always(Reply::verdict(verdict).delayed(delay))).await
}

fn reviewer_config(model: &ModelServer) -> String {
    format!(
        "[reviewer]\nprovider = \"openai\"\nbase_url = \"{}\"\ntimeout_ms = 10000\n",
        model.base_url()
    )
}

/// SIGTERM while a review waits on a slow (~1 s) reviewer model: the client
/// still gets its decision and the process exits 0.
#[tokio::test]
async fn sigterm_during_an_in_flight_review() {
    let verdict = json!({"outcome": "deny", "risk_level": "medium", "user_authorization": "unknown", "rationale": "test verdict", "suggestion": null});
    let model = model_answering(Duration::from_millis(1000), verdict).await;
    let server = Server::start("127.0.0.1:0", &reviewer_config(&model));
    let token = server.token("adapter");
    let url = server.url("/v1/review");
    let sent = Instant::now();
    let review = tokio::spawn(async move {
        reqwest::Client::new()
            .post(url)
            .bearer_auth(token)
            .json(&review_request("make deploy-staging"))
            .send()
            .await
    });
    // In flight: the model has the request (polled without blocking the
    // runtime the client task runs on).
    let deadline = Instant::now() + Duration::from_secs(10);
    while model.requests().is_empty() {
        assert!(Instant::now() < deadline, "the model never got the review");
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    server.sigterm();
    let response = review
        .await
        .unwrap()
        .expect("the in-flight review must be answered");
    assert_eq!(response.status(), 200);
    let decision: Value = response.json().await.unwrap();
    assert_ne!(decision["decision"], "allow");
    // The review was genuinely in flight: the model was called and answered
    // after the signal.
    assert_eq!(model.requests().len(), 1);
    assert!(
        sent.elapsed() >= Duration::from_millis(900),
        "answered before the model did"
    );
    assert_eq!(decision["stage"], "reviewer");
    let (status, log) = server.wait(Duration::from_secs(15));
    assert!(status.success(), "{status:?}\n{log}");
}

/// Allow with a grant over HTTP, then consume it exactly once.
#[tokio::test]

async fn grant_round_trip_over_http() {
    let verdict = json!({"outcome": "allow", "risk_level": "low", "user_authorization": "high", "rationale": "the user asked for it", "suggestion": null});
    let model = model_answering(Duration::ZERO, verdict).await;
    let server = Server::start("127.0.0.1:0", &reviewer_config(&model));
    let token = server.token("adapter");
    let client = reqwest::Client::new();
    let mut request = review_request("cargo build --release");
    request["issue_grant"] = true.into();
    request["transcript"] = json!([{"role": "user", "text": "please build the release binary"}]);
    let decision: Value = client
        .post(server.url("/v1/review"))
        .bearer_auth(&token)
        .json(&request)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(decision["decision"], "allow", "{decision}");
    let grant = decision["grant"]["token"].as_str().unwrap().to_owned();
    let consume = |req: Value| {
        let client = client.clone();
        let url = server.url("/v1/grants/consume");
        let token = token.clone();
        let grant = grant.clone();
        async move {
            let response = client
                .post(url)
                .bearer_auth(token)
                .json(&json!({"session_id": "e2e", "token": grant, "request": req}))
                .send()
                .await
                .unwrap();
            assert_eq!(response.status(), 200);
            response.json::<Value>().await.unwrap()["consumed"]
                .as_bool()
                .unwrap()
        }
    };
    assert!(
        !consume(review_request("cargo build")).await,
        "a changed request must not consume"
    );
    assert!(consume(request.clone()).await);
    assert!(!consume(request).await, "a grant is one-use");
}

/// A model denial listed and approved by the operator over HTTP; the adapter
/// token cannot do the same.
#[tokio::test]

async fn operator_override_round_trip_over_http() {
    let verdict = json!({"outcome": "deny", "risk_level": "medium", "user_authorization": "unknown", "rationale": "force-pushes a shared branch", "suggestion": null});
    let model = model_answering(Duration::ZERO, verdict).await;
    let server = Server::start("127.0.0.1:0", &reviewer_config(&model));
    let adapter = server.token("adapter");
    let operator = server.token("operator");
    let client = reqwest::Client::new();
    let request = review_request("git push --force origin main");
    let decision: Value = client
        .post(server.url("/v1/review"))
        .bearer_auth(&adapter)
        .json(&request)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(decision["decision"], "deny");
    assert_eq!(decision["stage"], "reviewer");

    let denials = server.url("/v1/sessions/e2e/denials");
    let response = client
        .get(&denials)
        .bearer_auth(&adapter)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 403);
    let listed: Value = client
        .get(&denials)
        .bearer_auth(&operator)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(listed["denials"].as_array().unwrap().len(), 1, "{listed}");

    let overrides = server.url("/v1/sessions/e2e/overrides");
    let response = client
        .post(&overrides)
        .bearer_auth(&adapter)
        .json(&json!({"selector": "1"}))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 403);
    let response = client
        .post(&overrides)
        .bearer_auth(&operator)
        .json(&json!({"selector": "1"}))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    // One approval per denial: a second one conflicts.
    let response = client
        .post(&overrides)
        .bearer_auth(&operator)
        .json(&json!({"selector": "1"}))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 409);
}
