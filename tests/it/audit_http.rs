//! `POST /v1/audit/events` and `GET /v1/audit/report` through the router
//! (no socket), against a real engine and `audit.sqlite`.

use axum::Router;
use axum::body::Body;
use axum::http::{Method, Request, StatusCode, header};
use serde_json::{Value, json};
use tower::ServiceExt;
use vouch::config::Config;
use vouch::engine::{Engine, EngineOptions};
use vouch::http::{AppState, Tokens, app};

const ADAPTER: &str = "adapter-token-for-audit-tests";
const OPERATOR: &str = "operator-token-for-audit-tests";

struct Harness {
    app: Router,
    dir: tempfile::TempDir,
}

fn harness() -> Harness {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("project/.git")).unwrap();
    let config = Config::defaults().unwrap();
    let engine =
        Engine::new(EngineOptions::isolated(&dir.path().join("vh"), &config).unwrap()).unwrap();
    let state = AppState::new(engine, Tokens::from_values(ADAPTER, OPERATOR)).unwrap();
    Harness {
        app: app(state),
        dir,
    }
}

impl Harness {
    fn project(&self) -> String {
        self.dir.path().join("project").display().to_string()
    }

    async fn call(
        &self,
        method: Method,
        uri: &str,
        token: &str,
        body: impl Into<Body>,
    ) -> (StatusCode, Value) {
        let request = Request::builder()
            .method(method)
            .uri(uri)
            .header(header::AUTHORIZATION, format!("Bearer {token}"))
            .header(header::CONTENT_TYPE, "application/json")
            .body(body.into())
            .unwrap();
        let response = self.app.clone().oneshot(request).await.unwrap();
        let status = response.status();
        let bytes = axum::body::to_bytes(response.into_body(), usize::MAX)
            .await
            .unwrap();
        let value = serde_json::from_slice(&bytes)
            .unwrap_or_else(|e| panic!("not JSON ({e}): {}", String::from_utf8_lossy(&bytes)));
        (status, value)
    }

    fn events(&self, n: usize) -> Value {
        let events: Vec<Value> = (0..n)
            .map(|i| {
                json!({"requestId": format!("r{i}"), "surface": "bash", "value": "git status",
                       "result": "allow", "resolution": "user_approved", "origin": null,
                       "agentName": "main", "matchedPattern": "git *", "cwd": self.project()})
            })
            .collect();
        Value::Array(events)
    }
}

#[tokio::test]
async fn events_are_counted_once_and_reported() {
    let h = harness();
    let body = h.events(5).to_string();
    let (status, first) = h
        .call(Method::POST, "/v1/audit/events", ADAPTER, body.clone())
        .await;
    assert_eq!(status, StatusCode::OK, "{first}");
    assert_eq!(
        (first["events"].as_u64(), first["counted"].as_u64()),
        (Some(5), Some(5))
    );
    let (_, second) = h
        .call(Method::POST, "/v1/audit/events", ADAPTER, body)
        .await;
    assert_eq!(
        (second["counted"].as_u64(), second["duplicates"].as_u64()),
        (Some(0), Some(5))
    );

    let uri = format!("/v1/audit/report?min_count=5&target=pi&cwd={}", h.project());
    let (status, report) = h.call(Method::GET, &uri, OPERATOR, "").await;
    assert_eq!(status, StatusCode::OK, "{report}");
    assert_eq!(report["version"], 1);
    assert_eq!(report["scope"]["kind"], "current");
    assert_eq!(report["totals"]["observations"], 5);
    assert_eq!(report["top_subjects"][0]["subject"], "git status");
    assert_eq!(report["suggestions"]["target"], "pi");
    assert_eq!(report["suggestions"]["rules"][0]["rule"], "git status");
    let (_, all) = h
        .call(
            Method::GET,
            "/v1/audit/report?scope=all&format=x",
            OPERATOR,
            "",
        )
        .await;
    assert!(
        all["error"]["message"]
            .as_str()
            .unwrap()
            .contains("`format`"),
        "{all}"
    );
}

#[tokio::test]
async fn one_bad_event_refuses_the_batch_and_names_it() {
    let h = harness();
    let mut events = h.events(3);
    events[2]["result"] = "maybe".into();
    let (status, v) = h
        .call(
            Method::POST,
            "/v1/audit/events",
            ADAPTER,
            events.to_string(),
        )
        .await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    let message = v["error"]["message"].as_str().unwrap();
    assert!(
        message.contains("event 2") && message.contains("`result`"),
        "{message}"
    );
    assert!(message.contains("nothing was stored"), "{message}");
    let (_, report) = h
        .call(Method::GET, "/v1/audit/report?scope=all", OPERATOR, "")
        .await;
    assert_eq!(report["totals"]["observations"], 0);
    for (body, needle) in [
        ("{\"surface\": \"bash\"}", "JSON array"),
        ("[{\"surface\": ", "not valid JSON"),
        ("[[1]]", "JSON object"),
    ] {
        let (status, v) = h
            .call(Method::POST, "/v1/audit/events", ADAPTER, body)
            .await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
        assert!(
            v["error"]["message"].as_str().unwrap().contains(needle),
            "{v}"
        );
    }
}

#[tokio::test]
async fn report_parameters_are_checked_by_name() {
    let h = harness();
    for (query, needle) in [
        ("", "`cwd` is required"),
        (
            "scope=all&days=0",
            "`--days` must be between 1 and the retention of 180 days",
        ),
        ("scope=all&days=181", "retention of 180 days"),
        ("scope=all&top=51", "`--top`"),
        ("scope=all&min_count=0", "`--min-count`"),
        ("scope=all&days=many", "`days` must be a whole number"),
        ("scope=mine", "`scope` must be `current` or `all`"),
        ("scope=all&target=vim", "`target` must be one of"),
        ("cwd=relative", "`cwd` must be an absolute path"),
        ("scope=all&colour=red", "`colour` is not known"),
    ] {
        let (status, v) = h
            .call(
                Method::GET,
                &format!("/v1/audit/report?{query}"),
                OPERATOR,
                "",
            )
            .await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{query}: {v}");
        let message = v["error"]["message"].as_str().unwrap();
        assert!(message.contains(needle), "{query}: {message}");
    }
    // An empty audit is a report with nothing in it, not an error.
    let (status, v) = h
        .call(
            Method::GET,
            "/v1/audit/report?scope=all&target=codex",
            OPERATOR,
            "",
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{v}");
    assert_eq!(v["totals"]["observations"], 0);
    assert_eq!(v["suggestions"]["format"], "starlark");
    // Reports are for the operator.
    let (status, _) = h
        .call(Method::GET, "/v1/audit/report?scope=all", ADAPTER, "")
        .await;
    assert_eq!(status, StatusCode::FORBIDDEN);
}
