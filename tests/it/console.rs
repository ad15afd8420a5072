//! The operator console's rules (issue 29), through the router without a
//! socket: the login, the cookie and CSRF guards, the security headers, and
//! the live feed's redaction. The browser test (`e2e/console/`) drives the
//! same routes through Debian's chromium.

use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::body::Body;
use axum::http::{HeaderMap, Method, Request, StatusCode, header};
use http_body_util::BodyExt;
use serde_json::{Value, json};
use tower::ServiceExt;
use vouch::config::{Config, Provider};
use vouch::engine::{Engine, EngineOptions};
use vouch::http::{AppState, Tokens, app};

use crate::support::model_server::{ModelServer, Reply, Script};

const ADAPTER: &str = "adapter-token-for-console-tests";
const OPERATOR: &str = "operator-token-for-console-tests";
const SECRET: &str = "ghp_Zq7Xw2Lm9Pk4Rt8Vb3Nc6Hd1Jf5Gs0Ya2Ue7";

struct Console {
    app: Router,
    _dir: tempfile::TempDir,
}

fn console_with(model: Option<&ModelServer>) -> Console {
    let dir = tempfile::tempdir().unwrap();
    let mut config = Config::defaults().unwrap();
    config.reviewer.provider = Provider::Openai;
    let mut options = EngineOptions::isolated(dir.path(), &config).unwrap();
    if let Some(model) = model {
        config.reviewer.base_url = model.base_url();
        options = EngineOptions::isolated(dir.path(), &config).unwrap();
        options.env = Arc::new(|name| (name == "VOUCH_REVIEWER_API_KEY").then(|| "k".to_owned()));
    }
    let engine = Engine::new(options).unwrap();
    let state = AppState::new(engine, Tokens::from_values(ADAPTER, OPERATOR)).unwrap();
    Console {
        app: app(state),
        _dir: dir,
    }
}

async fn send(app: &Router, request: Request<Body>) -> (StatusCode, HeaderMap, String) {
    let response = app.clone().oneshot(request).await.unwrap();
    let (status, headers) = (response.status(), response.headers().clone());
    let body = axum::body::to_bytes(response.into_body(), usize::MAX)
        .await
        .unwrap();
    (status, headers, String::from_utf8_lossy(&body).into_owned())
}

fn login_request(token: &str) -> Request<Body> {
    Request::builder()
        .method(Method::POST)
        .uri("/console/login")
        .header(header::CONTENT_TYPE, "application/x-www-form-urlencoded")
        .body(Body::from(format!("token={token}")))
        .unwrap()
}

/// Logs in; returns the cookie pair and the page's CSRF token.
async fn login(app: &Router) -> (String, String) {
    let (status, headers, _) = send(app, login_request(OPERATOR)).await;
    assert_eq!(status, StatusCode::SEE_OTHER);
    let set = headers[header::SET_COOKIE].to_str().unwrap().to_owned();
    let pair = set.split(';').next().unwrap().to_owned();
    let page = Request::builder()
        .uri("/console")
        .header(header::COOKIE, &pair)
        .body(Body::empty())
        .unwrap();
    let (status, _, html) = send(app, page).await;
    assert_eq!(status, StatusCode::OK);
    let csrf = html
        .split("<meta name=\"csrf-token\" content=\"")
        .nth(1)
        .and_then(|rest| rest.split('"').next())
        .unwrap()
        .to_owned();
    assert!(csrf.len() >= 40, "{csrf}");
    (pair, csrf)
}

fn api(method: Method, uri: &str, cookie: Option<&str>, csrf: Option<&str>) -> Request<Body> {
    let mut b = Request::builder()
        .method(method)
        .uri(uri)
        .header(header::CONTENT_TYPE, "application/json");
    if let Some(c) = cookie {
        b = b.header(header::COOKIE, c);
    }
    if let Some(t) = csrf {
        b = b.header("x-csrf-token", t);
    }
    b.body(Body::from(
        json!({"session_id": "s-1", "request_hash": "0123456789abcdef"}).to_string(),
    ))
    .unwrap()
}

fn assert_console_headers(headers: &HeaderMap) {
    let csp = headers[header::CONTENT_SECURITY_POLICY].to_str().unwrap();
    assert!(
        csp.starts_with("default-src 'none'; script-src 'self'"),
        "{csp}"
    );
    assert!(!csp.contains("unsafe-inline"), "{csp}");
    assert_eq!(headers[header::X_CONTENT_TYPE_OPTIONS], "nosniff");
    assert_eq!(headers[header::REFERRER_POLICY], "no-referrer");
    assert_eq!(headers[header::CACHE_CONTROL], "no-store");
}

#[tokio::test]
async fn login_takes_only_the_operator_token_and_sets_a_strict_cookie() {
    let c = console_with(None);
    let (status, headers, page) = send(
        &c.app,
        Request::builder()
            .uri("/console")
            .body(Body::empty())
            .unwrap(),
    )
    .await;
    assert_eq!(status, StatusCode::OK);
    assert!(page.contains("action=\"/console/login\""), "{page}");
    assert!(!page.contains("csrf-token"), "no CSRF token before login");
    assert_console_headers(&headers);

    for (token, expected) in [
        ("wrong", StatusCode::UNAUTHORIZED),
        ("", StatusCode::UNAUTHORIZED),
        (ADAPTER, StatusCode::FORBIDDEN),
    ] {
        let (status, headers, _) = send(&c.app, login_request(token)).await;
        assert_eq!(status, expected, "login with `{token}`");
        assert!(headers.get(header::SET_COOKIE).is_none());
        assert_console_headers(&headers);
    }
    let (status, headers, _) = send(&c.app, login_request(OPERATOR)).await;
    assert_eq!(status, StatusCode::SEE_OTHER);
    assert_eq!(headers[header::LOCATION], "/console");
    let cookie = headers[header::SET_COOKIE].to_str().unwrap();
    for part in [
        "vouch_console=",
        "HttpOnly",
        "SameSite=Strict",
        "Path=/console",
    ] {
        assert!(cookie.contains(part), "{cookie}");
    }
    assert!(!cookie.contains(OPERATOR), "the cookie is never the token");
}

#[tokio::test]
async fn the_api_needs_the_cookie_and_every_change_the_csrf_token() {
    let c = console_with(None);
    let (cookie, csrf) = login(&c.app).await;

    // No cookie, or a cookie nobody issued: 401, with the console headers.
    for bad in [None, Some("vouch_console=forged")] {
        let (status, headers, body) =
            send(&c.app, api(Method::GET, "/console/api/overview", bad, None)).await;
        assert_eq!(status, StatusCode::UNAUTHORIZED, "{body}");
        assert_console_headers(&headers);
        let (status, _, _) = send(
            &c.app,
            api(Method::POST, "/console/api/approve", bad, Some(&csrf)),
        )
        .await;
        assert_eq!(status, StatusCode::UNAUTHORIZED);
    }
    // The bearer token is not a console credential.
    let bearer = Request::builder()
        .uri("/console/api/overview")
        .header(header::AUTHORIZATION, format!("Bearer {OPERATOR}"))
        .body(Body::empty())
        .unwrap();
    assert_eq!(send(&c.app, bearer).await.0, StatusCode::UNAUTHORIZED);

    let (status, _, body) = send(
        &c.app,
        api(Method::GET, "/console/api/overview", Some(&cookie), None),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let overview: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(overview["denials"], json!([]));
    assert_eq!(overview["limits"]["max_reviews"], 20);

    // A change without the CSRF token, or with another one: 403.
    for bad in [None, Some("wrong"), Some(&csrf[1..])] {
        let (status, _, body) = send(
            &c.app,
            api(Method::POST, "/console/api/approve", Some(&cookie), bad),
        )
        .await;
        assert_eq!(status, StatusCode::FORBIDDEN, "{body}");
        assert!(body.contains("CSRF"), "{body}");
    }
    // A list index is not a request hash: the console names denials by hash.
    let index = Request::builder()
        .method(Method::POST)
        .uri("/console/api/approve")
        .header(header::COOKIE, &cookie)
        .header("x-csrf-token", &csrf)
        .header(header::CONTENT_TYPE, "application/json")
        .body(Body::from(
            json!({"session_id": "s-1", "request_hash": "1"}).to_string(),
        ))
        .unwrap();
    assert_eq!(send(&c.app, index).await.0, StatusCode::BAD_REQUEST);
    // With it, the request reaches the override rules (no such denial).
    let (status, _, body) = send(
        &c.app,
        api(
            Method::POST,
            "/console/api/approve",
            Some(&cookie),
            Some(&csrf),
        ),
    )
    .await;
    assert_eq!(status, StatusCode::NOT_FOUND, "{body}");

    // Logging out ends the session.
    let (status, headers, _) = send(
        &c.app,
        api(
            Method::POST,
            "/console/api/logout",
            Some(&cookie),
            Some(&csrf),
        ),
    )
    .await;
    assert_eq!(status, StatusCode::NO_CONTENT);
    assert!(
        headers[header::SET_COOKIE]
            .to_str()
            .unwrap()
            .contains("Max-Age=0")
    );
    let (status, _, _) = send(
        &c.app,
        api(Method::GET, "/console/api/overview", Some(&cookie), None),
    )
    .await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
}

#[tokio::test]
async fn assets_are_served_with_their_types_and_nothing_else() {
    let c = console_with(None);
    for (name, kind) in [
        ("console.js", "text/javascript; charset=utf-8"),
        ("console.css", "text/css; charset=utf-8"),
    ] {
        let get = Request::builder()
            .uri(format!("/console/assets/{name}"))
            .body(Body::empty())
            .unwrap();
        let (status, headers, body) = send(&c.app, get).await;
        assert_eq!(status, StatusCode::OK);
        assert_eq!(headers[header::CONTENT_TYPE], kind);
        assert_console_headers(&headers);
        // Nothing from elsewhere (the SVG namespace is a name, not a
        // request), and no markup built from strings.
        let body = body.replace("http://www.w3.org/2000/svg", "");
        assert!(!body.contains("http://") && !body.contains("https://"));
        assert!(!body.contains("innerHTML"), "{name}");
    }
    let missing = Request::builder()
        .uri("/console/assets/..%2Fmod.rs")
        .body(Body::empty())
        .unwrap();
    assert_eq!(send(&c.app, missing).await.0, StatusCode::NOT_FOUND);
}

/// Reads server-sent events from `body` until one named `decision`.
async fn next_decision(body: &mut Body) -> Value {
    let mut text = String::new();
    loop {
        let frame = tokio::time::timeout(Duration::from_secs(10), body.frame())
            .await
            .expect("a feed event within 10 s")
            .expect("the stream is open")
            .unwrap();
        if let Ok(data) = frame.into_data() {
            text.push_str(&String::from_utf8_lossy(&data));
        }
        while let Some(end) = text.find("\n\n") {
            let event: String = text.drain(..end + 2).collect();
            if event.contains("event: decision") {
                let data = event
                    .lines()
                    .find_map(|l| l.strip_prefix("data: "))
                    .unwrap();
                return serde_json::from_str(data).unwrap();
            }
        }
    }
}

#[tokio::test]
async fn the_live_feed_shows_decisions_redacted_as_the_state_database() {
    let script = Script::always(Reply::allow()).rule(
        "console-secret",
        Reply::verdict(json!({
            "outcome": "deny", "risk_level": "high", "user_authorization": "unknown",
            "rationale": format!("it sends {SECRET} <script>alert(1)</script> away"),
            "suggestion": null
        })),
    );
    let model = ModelServer::with_script(script).await;
    let c = console_with(Some(&model));
    let (cookie, _) = login(&c.app).await;
    let response = c
        .app
        .clone()
        .oneshot(api(Method::GET, "/console/api/events", Some(&cookie), None))
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    assert_eq!(
        response.headers()[header::CONTENT_TYPE],
        "text/event-stream"
    );
    let mut events = response.into_body();

    let command = format!("./send.sh console-secret '<script>x</script>' {SECRET}");
    let review = Request::builder()
        .method(Method::POST)
        .uri("/v1/review")
        .header(header::AUTHORIZATION, format!("Bearer {ADAPTER}"))
        .header(header::CONTENT_TYPE, "application/json")
        .body(Body::from(
            json!({"session_id": "s-9", "turn_id": "t-1", "surface": "bash",
                   "command": command, "source": "claude-code"})
            .to_string(),
        ))
        .unwrap();
    let (status, _, decision) = send(&c.app, review).await;
    assert_eq!(status, StatusCode::OK, "{decision}");
    let decision: Value = serde_json::from_str(&decision).unwrap();
    assert_eq!(decision["decision"], "deny", "{decision}");

    let item = next_decision(&mut events).await;
    let text = item.to_string();
    assert!(!text.contains(SECRET), "{text}");
    assert!(!text.contains(&SECRET[4..]), "{text}");
    assert_eq!(item["decision"], "deny");
    assert_eq!(item["stage"], "reviewer");
    assert_eq!(item["session_id"], "s-9");
    assert_eq!(item["request_hash"], decision["request_hash"]);
    assert_eq!(item["source"], "claude-code");
    assert!(item["model"].is_string(), "{item}");
    // The markup stays as text for the page to render inert.
    assert!(
        item["summary"]
            .as_str()
            .unwrap()
            .contains("<script>x</script>")
    );

    // What the console lists matches what the state database holds.
    let (status, _, body) = send(
        &c.app,
        api(Method::GET, "/console/api/overview", Some(&cookie), None),
    )
    .await;
    assert_eq!(status, StatusCode::OK);
    assert!(!body.contains(SECRET), "{body}");
    let overview: Value = serde_json::from_str(&body).unwrap();
    let denial = &overview["denials"][0];
    assert_eq!(denial["summary"], item["summary"]);
    assert_eq!(denial["rationale"], item["rationale"]);
    assert_eq!(denial["remedy"], "approve");
    assert_eq!(overview["turns"][0]["session_id"], "s-9");
    assert_eq!(overview["turns"][0]["denials"], 1);
}
