//! Router tests for `vouch serve` without a socket: every route through
//! `tower::ServiceExt::oneshot`, against the real engine facade.

use axum::Router;
use axum::body::Body;
use axum::http::{Method, Request, StatusCode, header};
use serde_json::{Value, json};
use tower::ServiceExt;
use vouch::config::{Config, FailClosed, Provider};
use vouch::engine::{Engine, EngineOptions};
use vouch::http::{AppState, Tokens, app};

const ADAPTER: &str = "adapter-token-for-tests";
const OPERATOR: &str = "operator-token-for-tests";

struct Harness {
    app: Router,
    _dir: tempfile::TempDir,
}

fn harness_with(edit: impl FnOnce(&mut Config)) -> Harness {
    let dir = tempfile::tempdir().unwrap();
    let mut config = Config::defaults().unwrap();
    // A configured reviewer nobody answers: model reviews fail closed.
    config.reviewer.provider = Provider::Openai;
    edit(&mut config);
    let engine = Engine::new(EngineOptions::isolated(dir.path(), &config).unwrap()).unwrap();
    let state = AppState::new(engine, Tokens::from_values(ADAPTER, OPERATOR)).unwrap();
    Harness {
        app: app(state),
        _dir: dir,
    }
}

/// A real internal fault: the state directory's path is taken by a plain
/// file, so the state database cannot be opened.
fn broken_state_harness() -> Harness {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("state"), b"not a directory").unwrap();
    let mut config = Config::defaults().unwrap();
    config.reviewer.provider = Provider::Openai;
    let engine = Engine::new(EngineOptions::isolated(dir.path(), &config).unwrap()).unwrap();
    let state = AppState::new(engine, Tokens::from_values(ADAPTER, OPERATOR)).unwrap();
    Harness {
        app: app(state),
        _dir: dir,
    }
}

fn harness() -> Harness {
    harness_with(|_| {})
}

fn req(method: Method, uri: &str, token: Option<&str>, body: impl Into<Body>) -> Request<Body> {
    let mut b = Request::builder().method(method).uri(uri);
    if let Some(t) = token {
        b = b.header(header::AUTHORIZATION, format!("Bearer {t}"));
    }
    b.header(header::CONTENT_TYPE, "application/json")
        .body(body.into())
        .unwrap()
}

async fn send(
    app: &Router,
    request: Request<Body>,
) -> (StatusCode, axum::http::HeaderMap, Vec<u8>) {
    let response = app.clone().oneshot(request).await.unwrap();
    let status = response.status();
    let headers = response.headers().clone();
    let body = axum::body::to_bytes(response.into_body(), usize::MAX)
        .await
        .unwrap()
        .to_vec();
    (status, headers, body)
}

async fn send_json(app: &Router, request: Request<Body>) -> (StatusCode, Value) {
    let (status, _, body) = send(app, request).await;
    let value = serde_json::from_slice(&body)
        .unwrap_or_else(|e| panic!("not JSON ({e}): {}", String::from_utf8_lossy(&body)));
    (status, value)
}

fn review_body() -> String {
    json!({"session_id": "s-1", "surface": "bash", "command": "rm -rf /", "cwd": "/srv/app"})
        .to_string()
}

fn hook_body(tool: &str, input: Value) -> String {
    json!({
        "session_id": "abc", "transcript_path": "/tmp/t.jsonl", "cwd": "/srv/app",
        "permission_mode": "default", "hook_event_name": "PreToolUse",
        "tool_name": tool, "tool_input": input, "tool_use_id": "toolu_01"
    })
    .to_string()
}

/// Every authenticated route with a body that gets past parsing.
fn guarded_routes() -> Vec<(Method, &'static str, String, bool)> {
    let consume = json!({"session_id": "s-1", "token": "t", "request": {"session_id": "s-1", "surface": "bash", "command": "ls"}}).to_string();
    vec![
        (Method::POST, "/v1/review", review_body(), false),
        (Method::POST, "/v1/grants/consume", consume, false),
        (Method::POST, "/v1/audit/events", "[]".into(), false),
        (
            Method::POST,
            "/hooks/claude-code",
            hook_body("Bash", json!({"command": "ls"})),
            false,
        ),
        (Method::GET, "/v1/sessions/s-1/denials", String::new(), true),
        (
            Method::POST,
            "/v1/sessions/s-1/overrides",
            json!({"selector": "1"}).to_string(),
            true,
        ),
        (
            Method::POST,
            "/v1/sessions/s-1/break-glass",
            String::new(),
            true,
        ),
        (
            Method::POST,
            "/v1/sessions/s-1/break-glass/confirm",
            json!({"challenge_id": "c", "phrase": "BREAK-GLASS X"}).to_string(),
            true,
        ),
        (Method::GET, "/v1/audit/report", String::new(), true),
    ]
}

#[tokio::test]
async fn auth_matrix_on_every_route() {
    let h = harness();
    for (method, uri, body, operator_only) in guarded_routes() {
        for token in [None, Some("wrong"), Some("")] {
            let (status, headers, body) =
                send(&h.app, req(method.clone(), uri, token, body.clone())).await;
            assert_eq!(status, StatusCode::UNAUTHORIZED, "{method} {uri} {token:?}");
            assert_eq!(headers[header::WWW_AUTHENTICATE], "Bearer");
            let v: Value = serde_json::from_slice(&body).unwrap();
            assert_eq!(v["error"]["code"], "unauthorized");
        }
        // A token in the wrong scheme is no token.
        let wrong_scheme = Request::builder()
            .method(method.clone())
            .uri(uri)
            .header(header::AUTHORIZATION, format!("Basic {ADAPTER}"))
            .body(Body::from(body.clone()))
            .unwrap();
        assert_eq!(send(&h.app, wrong_scheme).await.0, StatusCode::UNAUTHORIZED);

        let (status, v) = send_json(
            &h.app,
            req(method.clone(), uri, Some(ADAPTER), body.clone()),
        )
        .await;
        if operator_only {
            assert_eq!(status, StatusCode::FORBIDDEN, "{method} {uri}");
            assert_eq!(v["error"]["code"], "forbidden");
            assert!(
                v["error"]["message"]
                    .as_str()
                    .unwrap()
                    .contains("operator token")
            );
        } else {
            assert_ne!(status, StatusCode::UNAUTHORIZED, "{method} {uri}");
            assert_ne!(status, StatusCode::FORBIDDEN, "{method} {uri}");
        }
        // The operator token is accepted everywhere.
        let (status, _) = send_json(&h.app, req(method.clone(), uri, Some(OPERATOR), body)).await;
        assert_ne!(status, StatusCode::UNAUTHORIZED, "{method} {uri}");
        assert_ne!(status, StatusCode::FORBIDDEN, "{method} {uri}");
    }
}

#[tokio::test]
async fn review_returns_the_engine_decision() {
    let h = harness();
    let (status, v) = send_json(
        &h.app,
        req(Method::POST, "/v1/review", Some(ADAPTER), review_body()),
    )
    .await;
    assert_eq!(status, StatusCode::OK);
    // The pipeline fails closed; whatever it decides, never an allow here.
    assert_ne!(v["decision"], "allow");
    assert_eq!(v["request_hash"].as_str().unwrap().len(), 64);
    for key in ["stage", "rationale", "message", "grant", "review"] {
        assert!(v.get(key).is_some(), "missing {key}: {v}");
    }
}

#[tokio::test]
async fn bad_bodies_get_400_naming_the_problem() {
    let h = harness();
    let cases = [
        ("{\"session_id\": \"s\", ", "EOF while parsing"),
        (
            r#"{"session_id": "s", "surface": "bash", "comand": "ls"}"#,
            "unknown field `comand`",
        ),
        (r#"{"surface": "bash"}"#, "missing field `session_id`"),
        (
            r#"{"session_id": "s", "surface": "foo bar"}"#,
            "surface `foo bar` is not valid",
        ),
        ("", "request body is empty"),
        (
            r#"{"session_id": "s", "surface": "bash", "cwd": "rel"}"#,
            "`cwd`",
        ),
    ];
    for (body, needle) in cases {
        let (status, v) =
            send_json(&h.app, req(Method::POST, "/v1/review", Some(ADAPTER), body)).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
        assert_eq!(v["error"]["code"], "invalid_request");
        let message = v["error"]["message"].as_str().unwrap();
        assert!(message.contains(needle), "{body}: {message}");
    }

    // The same words through the consume envelope, and in the envelope itself.
    let consume = json!({"session_id": "s", "token": "t", "request": {"session_id": "s", "surface": "bash", "comand": "ls"}});
    let (status, v) = send_json(
        &h.app,
        req(
            Method::POST,
            "/v1/grants/consume",
            Some(ADAPTER),
            consume.to_string(),
        ),
    )
    .await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    let message = v["error"]["message"].as_str().unwrap();
    assert!(
        message.contains("`request`") && message.contains("unknown field `comand`"),
        "{message}"
    );
    let consume = json!({"session_id": "s", "tokn": "t", "request": {}});
    let (status, v) = send_json(
        &h.app,
        req(
            Method::POST,
            "/v1/grants/consume",
            Some(ADAPTER),
            consume.to_string(),
        ),
    )
    .await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert!(
        v["error"]["message"]
            .as_str()
            .unwrap()
            .contains("unknown field `tokn`")
    );

    let (status, v) = send_json(
        &h.app,
        req(
            Method::POST,
            "/v1/sessions/s/overrides",
            Some(OPERATOR),
            r#"{"selectr": "1"}"#,
        ),
    )
    .await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert!(
        v["error"]["message"]
            .as_str()
            .unwrap()
            .contains("unknown field `selectr`")
    );
    let (status, v) = send_json(
        &h.app,
        req(
            Method::POST,
            "/v1/sessions/s/break-glass/confirm",
            Some(OPERATOR),
            r#"{"challenge_id": "c"}"#,
        ),
    )
    .await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert!(
        v["error"]["message"]
            .as_str()
            .unwrap()
            .contains("missing field `phrase`")
    );
}

#[tokio::test]
async fn oversized_bodies_get_413_or_a_hook_denial() {
    let h = harness_with(|c| c.server.max_body_bytes = 1024);
    let big = format!(
        r#"{{"session_id": "s", "surface": "bash", "command": "{}"}}"#,
        "a".repeat(4096)
    );
    // Without a Content-Length: caught while reading.
    let (status, v) = send_json(
        &h.app,
        req(Method::POST, "/v1/review", Some(ADAPTER), big.clone()),
    )
    .await;
    assert_eq!(status, StatusCode::PAYLOAD_TOO_LARGE);
    assert_eq!(v["error"]["code"], "payload_too_large");
    assert!(
        v["error"]["message"]
            .as_str()
            .unwrap()
            .contains("1024 bytes")
    );
    // With a Content-Length: refused before reading.
    let mut r = req(Method::POST, "/v1/review", Some(ADAPTER), big.clone());
    r.headers_mut()
        .insert(header::CONTENT_LENGTH, big.len().into());
    let (status, _) = send_json(&h.app, r).await;
    assert_eq!(status, StatusCode::PAYLOAD_TOO_LARGE);
    // A body just under the limit still works.
    let (status, _) = send_json(
        &h.app,
        req(Method::POST, "/v1/review", Some(ADAPTER), review_body()),
    )
    .await;
    assert_eq!(status, StatusCode::OK);
    // The hook route answers 200 with a denial instead.
    let hook = hook_body("Bash", json!({"command": "a".repeat(4096)}));
    let (status, v) = send_json(
        &h.app,
        req(Method::POST, "/hooks/claude-code", Some(ADAPTER), hook),
    )
    .await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(v["hookSpecificOutput"]["permissionDecision"], "deny");
}

#[tokio::test]
async fn rate_limit_answers_429_with_retry_after_but_never_on_the_hook() {
    let h = harness_with(|c| c.server.rate_limit_per_second = 1);
    // Burst is 2x the rate.
    for _ in 0..2 {
        let (status, _) = send_json(
            &h.app,
            req(Method::POST, "/v1/review", Some(ADAPTER), review_body()),
        )
        .await;
        assert_eq!(status, StatusCode::OK);
    }
    let (status, headers, body) = send(
        &h.app,
        req(Method::POST, "/v1/review", Some(ADAPTER), review_body()),
    )
    .await;
    assert_eq!(status, StatusCode::TOO_MANY_REQUESTS);
    let retry: u64 = headers[header::RETRY_AFTER]
        .to_str()
        .unwrap()
        .parse()
        .unwrap();
    assert!((1..=2).contains(&retry), "{retry}");
    let v: Value = serde_json::from_slice(&body).unwrap();
    assert_eq!(v["error"]["code"], "rate_limited");

    let hook = hook_body("Bash", json!({"command": "ls"}));
    let (status, v) = send_json(
        &h.app,
        req(Method::POST, "/hooks/claude-code", Some(ADAPTER), hook),
    )
    .await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(v["hookSpecificOutput"]["permissionDecision"], "ask");
    assert!(
        v["hookSpecificOutput"]["permissionDecisionReason"]
            .as_str()
            .unwrap()
            .contains("rate limiting")
    );

    // The limit is per token: the operator still gets through.
    let (status, _) = send_json(
        &h.app,
        req(Method::POST, "/v1/review", Some(OPERATOR), review_body()),
    )
    .await;
    assert_eq!(status, StatusCode::OK);

    let (_, _, metrics) = send(&h.app, req(Method::GET, "/metrics", None, "")).await;
    let metrics = String::from_utf8(metrics).unwrap();
    assert!(
        metrics.contains("vouch_rate_limited_total{role=\"adapter\"} 2"),
        "{metrics}"
    );
    assert!(metrics.contains("vouch_hook_fail_closed_total{reason=\"rate_limited\"} 1"));
}

#[tokio::test]
async fn hook_answers_200_with_a_decision_on_every_path() {
    let h = harness();
    // The pipeline's own decision (a hard deny), mapped.
    let body = hook_body("Bash", json!({"command": "rm -rf /"}));
    let (status, v) = send_json(
        &h.app,
        req(Method::POST, "/hooks/claude-code", Some(ADAPTER), body),
    )
    .await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(v["hookSpecificOutput"]["hookEventName"], "PreToolUse");
    assert_eq!(v["hookSpecificOutput"]["permissionDecision"], "deny");

    // Malformed bodies: still 200, a denial naming the problem.
    for (body, needle) in [
        ("not json".to_owned(), "not valid JSON"),
        (String::new(), "body is empty"),
        (
            hook_body("Bash", json!({"cmd": "ls"})),
            "tool_input.command",
        ),
        (
            hook_body("WebFetch", json!({"url": "::"})),
            "tool_input.url",
        ),
        (
            json!({"hook_event_name": "PreToolUse"}).to_string(),
            "session_id",
        ),
    ] {
        let (status, v) = send_json(
            &h.app,
            req(
                Method::POST,
                "/hooks/claude-code",
                Some(ADAPTER),
                body.clone(),
            ),
        )
        .await;
        assert_eq!(status, StatusCode::OK, "{body}");
        assert_eq!(
            v["hookSpecificOutput"]["permissionDecision"], "deny",
            "{body}"
        );
        let reason = v["hookSpecificOutput"]["permissionDecisionReason"]
            .as_str()
            .unwrap();
        assert!(reason.contains(needle), "{body}: {reason}");
    }

    // Events with nothing to decide: no decision.
    let mut post =
        serde_json::from_str::<Value>(&hook_body("Bash", json!({"command": "ls"}))).unwrap();
    post["hook_event_name"] = "PostToolUse".into();
    let (status, v) = send_json(
        &h.app,
        req(
            Method::POST,
            "/hooks/claude-code",
            Some(ADAPTER),
            post.to_string(),
        ),
    )
    .await;
    assert_eq!((status, v), (StatusCode::OK, json!({})));

    let (_, _, metrics) = send(&h.app, req(Method::GET, "/metrics", None, "")).await;
    let metrics = String::from_utf8(metrics).unwrap();
    assert!(
        metrics.contains("vouch_hook_fail_closed_total{reason=\"malformed\"} 5"),
        "{metrics}"
    );
}

#[tokio::test]
async fn hook_uses_ask_when_failure_mode_is_defer() {
    let h = harness_with(|c| c.decision.failure_mode = FailClosed::Defer);
    let body = hook_body("Bash", json!({"command": "make"}));
    let (status, v) = send_json(
        &h.app,
        req(Method::POST, "/hooks/claude-code", Some(ADAPTER), body),
    )
    .await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(v["hookSpecificOutput"]["permissionDecision"], "ask");
}

#[tokio::test]
async fn engine_faults_are_500_with_a_generic_body() {
    let h = broken_state_harness();
    for (method, uri, body) in [
        (Method::GET, "/v1/sessions/s-1/denials", String::new()),
        (Method::POST, "/v1/sessions/s-1/overrides", json!({"selector": "1"}).to_string()),
        (Method::POST, "/v1/sessions/s-1/break-glass", json!({"selector": "ab12cd34"}).to_string()),
        (
            Method::POST,
            "/v1/grants/consume",
            json!({"session_id": "s", "token": "t", "request": {"session_id": "s", "surface": "bash"}}).to_string(),
        ),
    ] {
        let (status, v) = send_json(&h.app, req(method.clone(), uri, Some(OPERATOR), body)).await;
        assert_eq!(status, StatusCode::INTERNAL_SERVER_ERROR, "{method} {uri}");
        assert_eq!(v["error"]["code"], "internal");
        let message = v["error"]["message"].as_str().unwrap();
        assert!(!message.contains("store"), "cause leaked: {message}");
    }
}

#[tokio::test]
async fn healthz_is_open() {
    let h = harness();
    let (status, v) = send_json(&h.app, req(Method::GET, "/healthz", None, "")).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(v["status"], "ok");
    assert_eq!(v["reviewer"]["model"], "codex-auto-review");
}

#[tokio::test]
async fn livez_is_open_and_reads_nothing() {
    let h = harness();
    let (status, v) = send_json(&h.app, req(Method::GET, "/livez", None, "")).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(v, json!({"status": "alive"}));
}

#[tokio::test]
async fn metrics_count_what_happened() {
    let h = harness();
    for _ in 0..3 {
        send(
            &h.app,
            req(Method::POST, "/v1/review", Some(ADAPTER), review_body()),
        )
        .await;
    }
    send(&h.app, req(Method::POST, "/v1/review", None, review_body())).await;
    let (status, headers, body) = send(&h.app, req(Method::GET, "/metrics", None, "")).await;
    assert_eq!(status, StatusCode::OK);
    assert!(
        headers[header::CONTENT_TYPE]
            .to_str()
            .unwrap()
            .starts_with("text/plain; version=0.0.4")
    );
    let text = String::from_utf8(body).unwrap();
    assert!(
        text.contains("vouch_decisions_total{decision=\"deny\",stage=\"hard_deny\"} 3"),
        "{text}"
    );
    assert!(text.contains("vouch_review_duration_seconds_count{stage=\"hard_deny\"} 3"));
    assert!(text.contains("vouch_http_requests_total{route=\"/v1/review\",status=\"200\"} 3"));
    assert!(text.contains("vouch_http_requests_total{route=\"/v1/review\",status=\"401\"} 1"));
    assert!(text.contains("# TYPE vouch_review_duration_seconds histogram"));
    assert!(text.contains("vouch_reviews_in_flight 0"));
}

#[tokio::test]
async fn metrics_need_the_operator_token_when_remote_is_allowed() {
    let h = harness_with(|c| c.server.allow_remote = true);
    assert_eq!(
        send(&h.app, req(Method::GET, "/metrics", None, "")).await.0,
        StatusCode::UNAUTHORIZED
    );
    assert_eq!(
        send(&h.app, req(Method::GET, "/metrics", Some(ADAPTER), ""))
            .await
            .0,
        StatusCode::FORBIDDEN
    );
    assert_eq!(
        send(&h.app, req(Method::GET, "/metrics", Some(OPERATOR), ""))
            .await
            .0,
        StatusCode::OK
    );
    assert_eq!(
        send(&h.app, req(Method::GET, "/healthz", None, "")).await.0,
        StatusCode::OK
    );
}

#[tokio::test]
async fn unknown_routes_and_bad_session_ids() {
    let h = harness();
    let (status, v) = send_json(&h.app, req(Method::GET, "/v2/nothing", Some(ADAPTER), "")).await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    assert_eq!(v["error"]["code"], "not_found");
    let (status, v) = send_json(&h.app, req(Method::GET, "/v1/review", Some(ADAPTER), "")).await;
    assert_eq!(status, StatusCode::METHOD_NOT_ALLOWED);
    assert_eq!(v["error"]["code"], "method_not_allowed");
    let long = "x".repeat(300);
    let (status, v) = send_json(
        &h.app,
        req(
            Method::GET,
            &format!("/v1/sessions/{long}/denials"),
            Some(OPERATOR),
            "",
        ),
    )
    .await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert!(
        v["error"]["message"]
            .as_str()
            .unwrap()
            .contains("session id")
    );
}

#[tokio::test]
async fn large_bodies_are_parsed_off_the_worker_with_the_same_words() {
    let h = harness();
    let transcript: Vec<Value> = (0..500)
        .map(|i| json!({"role": "user", "text": format!("message {i} {}", "x".repeat(64))}))
        .collect();
    let body =
        json!({"session_id": "s", "surface": "bash", "command": "ls", "transcript": transcript});
    assert!(body.to_string().len() > 32 * 1024);
    let (status, v) = send_json(
        &h.app,
        req(Method::POST, "/v1/review", Some(ADAPTER), body.to_string()),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{v}");
    let mut bad = body.clone();
    bad["comand"] = "ls".into();
    let (status, v) = send_json(
        &h.app,
        req(Method::POST, "/v1/review", Some(ADAPTER), bad.to_string()),
    )
    .await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert!(
        v["error"]["message"]
            .as_str()
            .unwrap()
            .contains("unknown field `comand`")
    );
    let hook = hook_body(
        "Write",
        json!({"file_path": "/srv/app/big.txt", "content": "y".repeat(40_000)}),
    );
    let (status, v) = send_json(
        &h.app,
        req(Method::POST, "/hooks/claude-code", Some(ADAPTER), hook),
    )
    .await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(v["hookSpecificOutput"]["permissionDecision"], "deny");
    let hook = hook_body("Write", json!({"content": "y".repeat(40_000)}));
    let (_, v) = send_json(
        &h.app,
        req(Method::POST, "/hooks/claude-code", Some(ADAPTER), hook),
    )
    .await;
    assert!(
        v["hookSpecificOutput"]["permissionDecisionReason"]
            .as_str()
            .unwrap()
            .contains("tool_input.file_path")
    );
}

/// A request body that never finishes arriving.
struct StalledBody;

impl axum::body::HttpBody for StalledBody {
    type Data = axum::body::Bytes;
    type Error = std::io::Error;

    fn poll_frame(
        self: std::pin::Pin<&mut Self>,
        _: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Option<Result<http_body::Frame<Self::Data>, Self::Error>>> {
        std::task::Poll::Pending
    }
}

#[tokio::test(start_paused = true)]
async fn stalled_requests_time_out_as_504_or_a_hook_decision() {
    let h = harness_with(|c| c.reviewer.timeout_ms = 1000);
    let (status, v) = send_json(
        &h.app,
        req(
            Method::POST,
            "/v1/review",
            Some(ADAPTER),
            Body::new(StalledBody),
        ),
    )
    .await;
    assert_eq!(status, StatusCode::GATEWAY_TIMEOUT);
    assert_eq!(v["error"]["code"], "timeout");
    assert!(
        v["error"]["message"].as_str().unwrap().contains("6000 ms"),
        "{v}"
    );

    let (status, v) = send_json(
        &h.app,
        req(
            Method::POST,
            "/hooks/claude-code",
            Some(ADAPTER),
            Body::new(StalledBody),
        ),
    )
    .await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(v["hookSpecificOutput"]["permissionDecision"], "deny");
    assert!(
        v["hookSpecificOutput"]["permissionDecisionReason"]
            .as_str()
            .unwrap()
            .contains("could not complete within")
    );

    let h = harness_with(|c| {
        c.reviewer.timeout_ms = 1000;
        c.decision.failure_mode = FailClosed::Defer;
    });
    let (status, v) = send_json(
        &h.app,
        req(
            Method::POST,
            "/hooks/claude-code",
            Some(ADAPTER),
            Body::new(StalledBody),
        ),
    )
    .await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(v["hookSpecificOutput"]["permissionDecision"], "ask");
}

#[tokio::test]
async fn hook_answers_200_deny_when_the_pipeline_errors() {
    let h = broken_state_harness();
    let app = &h.app;
    let body = hook_body("Bash", json!({"command": "git push origin main"}));
    let (status, v) = send_json(
        app,
        req(Method::POST, "/hooks/claude-code", Some(ADAPTER), body),
    )
    .await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(v["hookSpecificOutput"]["permissionDecision"], "deny");
    let reason = v["hookSpecificOutput"]["permissionDecisionReason"]
        .as_str()
        .unwrap();
    assert!(reason.contains("could not complete"), "{reason}");

    let (status, v) = send_json(app, req(Method::GET, "/healthz", None, "")).await;
    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE);
    assert_eq!(v["status"], "degraded");
    assert_eq!(v["store"], "unavailable");
}

/// `UserPromptSubmit` over HTTP is recorded and answered `{}`; with a state
/// database that cannot be opened the prompt still goes through (a
/// recording fault never blocks the user's prompt).
#[tokio::test]
async fn a_prompt_is_answered_with_the_no_op_even_when_recording_fails() {
    let body = json!({
        "session_id": "abc", "transcript_path": "/tmp/t.jsonl", "cwd": "/srv/app",
        "hook_event_name": "UserPromptSubmit", "prompt": "please fix the build"
    })
    .to_string();
    for h in [harness(), broken_state_harness()] {
        let (status, v) = send_json(
            &h.app,
            req(
                Method::POST,
                "/hooks/claude-code",
                Some(ADAPTER),
                body.clone(),
            ),
        )
        .await;
        assert_eq!(status, StatusCode::OK);
        assert_eq!(v, json!({}));
    }
}
