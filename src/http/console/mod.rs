//! The operator console (`GET /console`): the operator's view of every
//! agent of every harness this service decides for — pending model denials
//! with one-click exact-retry approval and break glass, the live decision
//! feed, each turn's breaker and budgets, and the policy audit as charts
//! with its suggested rules. `docs/console.md` says what each view shows
//! and where its data comes from.
//!
//! Why it is built this way:
//! - **The operator token, once.** `POST /console/login` checks it in
//!   constant time (the bearer check's [`super::Tokens::identify`]) and
//!   answers with a random console session id in an `HttpOnly`,
//!   `SameSite=Strict` cookie scoped to `/console`. The token itself never
//!   leaves the form; sessions live in memory ([`Sessions`]) and expire.
//! - **CSRF.** Every session has its own random CSRF token, delivered in the
//!   page's `<meta name="csrf-token">`; every state-changing request under
//!   `/console/api/` must echo it in `X-CSRF-Token` (compared in constant
//!   time). No cookie → 401; a wrong or missing CSRF token → 403.
//! - **No injected script can run.** Every response carries a strict
//!   Content-Security-Policy (no inline script or style, nothing from
//!   elsewhere); the page's script puts every untrusted string in the DOM
//!   with `textContent`. Every asset is served from here ([`assets`]): the
//!   console makes no request off this service.
//! - **Nothing secret.** The views read what the state database holds
//!   (already redacted) and the live feed ([`crate::feed`]), redacted the
//!   same way.
//! - **The decision path pays nothing.** The feed costs a decision one
//!   relaxed atomic load while no console is open.

mod assets;

use std::collections::HashMap;
use std::convert::Infallible;
use std::time::{Duration, Instant};

use axum::extract::{Request, State};
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, header};
use axum::middleware::{self, Next};
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;

use super::AppState;
use super::auth::Role;
use super::body::{self, Strict};
use super::errors::AppError;
use crate::feed::Received;
use crate::session::overrides::{Approval, Challenge, RecentDenial};

/// The console session cookie.
pub const COOKIE: &str = "vouch_console";
/// The header every state-changing console request carries.
pub const CSRF_HEADER: &str = "x-csrf-token";
/// How long a console login lasts: a working day, then the token again.
pub const SESSION_TTL: Duration = Duration::from_secs(8 * 60 * 60);
/// Console logins kept at once; the oldest is dropped past this.
pub const MAX_SESSIONS: usize = 64;
/// Denials the pending view lists (newest first).
pub const MAX_DENIALS: u32 = 100;
/// Turns the sessions view lists (most recently active first).
pub const MAX_TURNS: u32 = 100;
/// How far back the sessions view looks.
pub const TURNS_WITHIN_MS: u64 = 24 * 60 * 60 * 1000;
/// Longest audit window the charts ask for, in days (one report per day).
pub const MAX_CHART_DAYS: u32 = 31;

/// The policy every console response carries: the page's own script and
/// style only, nothing inline, nothing from elsewhere.
pub const CONTENT_SECURITY_POLICY: &str = "default-src 'none'; script-src 'self'; \
     style-src 'self'; img-src 'self' data:; connect-src 'self'; base-uri 'none'; \
     form-action 'self'; frame-ancestors 'none'";

/// One logged-in console.
#[derive(Debug, Clone)]
struct Session {
    csrf: String,
    expires: Instant,
}

/// Console logins in memory, keyed by the SHA-256 of the cookie's session
/// id (a lookup then reveals nothing about the id through timing).
#[derive(Debug, Default)]
pub struct Sessions {
    by_id: parking_lot::Mutex<HashMap<[u8; 32], Session>>,
}

fn id_key(id: &str) -> [u8; 32] {
    Sha256::digest(id.as_bytes()).into()
}

impl Sessions {
    /// A new login: `(session id, csrf token)`.
    fn create(&self, now: Instant) -> Result<(String, String), AppError> {
        let id = crate::store::mint_token().map_err(|e| AppError::Internal(Box::new(e)))?;
        let csrf = crate::store::mint_token().map_err(|e| AppError::Internal(Box::new(e)))?;
        let mut by_id = self.by_id.lock();
        by_id.retain(|_, s| s.expires > now);
        while by_id.len() >= MAX_SESSIONS {
            let oldest = by_id.iter().min_by_key(|(_, s)| s.expires).map(|(k, _)| *k);
            match oldest {
                Some(key) => {
                    by_id.remove(&key);
                }
                None => break,
            }
        }
        by_id.insert(
            id_key(&id),
            Session {
                csrf: csrf.clone(),
                expires: now + SESSION_TTL,
            },
        );
        Ok((id, csrf))
    }

    /// The live session of `id`.
    fn get(&self, id: &str, now: Instant) -> Option<Session> {
        let key = id_key(id);
        let mut by_id = self.by_id.lock();
        match by_id.get(&key) {
            Some(s) if s.expires > now => Some(s.clone()),
            Some(_) => {
                by_id.remove(&key);
                None
            }
            None => None,
        }
    }

    fn remove(&self, id: &str) {
        self.by_id.lock().remove(&id_key(id));
    }
}

/// The console's routes; merged into [`super::app`].
pub fn router(state: AppState) -> Router<AppState> {
    let api = Router::new()
        .route("/console/api/overview", get(overview))
        .route("/console/api/events", get(events))
        .route("/console/api/audit", get(audit))
        .route("/console/api/approve", post(approve))
        .route("/console/api/break-glass", post(break_glass))
        .route(
            "/console/api/break-glass/confirm",
            post(break_glass_confirm),
        )
        .route("/console/api/logout", post(logout))
        .route_layer(middleware::from_fn_with_state(state, api_guard));
    Router::new()
        .route("/console", get(page))
        .route("/console/login", post(login))
        .route("/console/assets/{name}", get(asset))
        .merge(api)
        .layer(middleware::from_fn(security_headers))
}

/// The headers every console response carries, errors included.
async fn security_headers(request: Request, next: Next) -> Response {
    let mut response = next.run(request).await;
    let headers = response.headers_mut();
    let set = [
        (
            header::CONTENT_SECURITY_POLICY,
            HeaderValue::from_static(CONTENT_SECURITY_POLICY),
        ),
        (
            header::X_CONTENT_TYPE_OPTIONS,
            HeaderValue::from_static("nosniff"),
        ),
        (
            header::REFERRER_POLICY,
            HeaderValue::from_static("no-referrer"),
        ),
        (header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY")),
        (header::CACHE_CONTROL, HeaderValue::from_static("no-store")),
    ];
    for (name, value) in set {
        headers.insert(name, value);
    }
    response
}

/// The console session id in the request's `Cookie` header, if any.
fn cookie_session(headers: &HeaderMap) -> Option<&str> {
    headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .filter_map(|pair| pair.trim().split_once('='))
        .find(|(name, _)| *name == COOKIE)
        .map(|(_, value)| value.trim())
        .filter(|value| !value.is_empty())
}

/// Whether a method changes state (and so needs the CSRF token).
fn changes_state(method: &Method) -> bool {
    !matches!(*method, Method::GET | Method::HEAD | Method::OPTIONS)
}

/// The console API's guard: a live session cookie, and for anything but a
/// read, the session's CSRF token in `X-CSRF-Token`.
async fn api_guard(
    State(state): State<AppState>,
    request: Request,
    next: Next,
) -> Result<Response, AppError> {
    let Some(session) =
        cookie_session(request.headers()).and_then(|id| state.console().get(id, Instant::now()))
    else {
        return Ok(signed_out());
    };
    if changes_state(request.method()) {
        let presented = request
            .headers()
            .get(CSRF_HEADER)
            .map_or(&b""[..], HeaderValue::as_bytes);
        let matches: bool = session.csrf.as_bytes().ct_eq(presented).into();
        if !matches {
            return Err(AppError::Forbidden(
                "missing or wrong CSRF token (header `X-CSRF-Token`); reload the console"
                    .to_owned(),
            ));
        }
    }
    let mut response = next.run(request).await;
    response.extensions_mut().insert(Role::Operator);
    Ok(response)
}

/// 401 for a request without a live console session. Not
/// [`AppError::Unauthorized`]: that one asks for a bearer token, which the
/// console does not take.
fn signed_out() -> Response {
    let body = serde_json::json!({"error": {
        "code": "unauthorized",
        "message": "no console session: sign in at /console with the operator token",
    }});
    (StatusCode::UNAUTHORIZED, Json(body)).into_response()
}

fn html(status: StatusCode, body: String) -> Response {
    (
        status,
        [(header::CONTENT_TYPE, "text/html; charset=utf-8")],
        body,
    )
        .into_response()
}

/// `GET /console`: the console for a logged-in browser, else the login page.
async fn page(State(state): State<AppState>, headers: HeaderMap) -> Response {
    let session = cookie_session(&headers).and_then(|id| state.console().get(id, Instant::now()));
    match session {
        Some(session) => html(StatusCode::OK, assets::app_page(&session.csrf)),
        None => html(StatusCode::OK, assets::login_page(None)),
    }
}

#[derive(Deserialize)]
struct LoginForm {
    token: String,
}

/// `POST /console/login`: the operator token from the form; a session
/// cookie and a redirect to the console, or the login page again with 401.
async fn login(
    State(state): State<AppState>,
    form: Result<axum::Form<LoginForm>, axum::extract::rejection::FormRejection>,
) -> Response {
    let role = form
        .ok()
        .and_then(|axum::Form(f)| state.tokens().identify(f.token.trim().as_bytes()));
    match role {
        Some(Role::Operator) => {}
        Some(Role::Adapter) => {
            return html(
                StatusCode::FORBIDDEN,
                assets::login_page(Some(
                    "That is the adapter token. The console needs the operator token \
                     (operator.token in the state directory).",
                )),
            );
        }
        None => {
            return html(
                StatusCode::UNAUTHORIZED,
                assets::login_page(Some("That is not the operator token.")),
            );
        }
    }
    let (id, _) = match state.console().create(Instant::now()) {
        Ok(created) => created,
        Err(e) => return e.into_response(),
    };
    let cookie = format!(
        "{COOKIE}={id}; HttpOnly; SameSite=Strict; Path=/console; Max-Age={}",
        SESSION_TTL.as_secs()
    );
    let mut response = (
        StatusCode::SEE_OTHER,
        [(header::LOCATION, HeaderValue::from_static("/console"))],
    )
        .into_response();
    match HeaderValue::from_str(&cookie) {
        Ok(value) => {
            response.headers_mut().insert(header::SET_COOKIE, value);
        }
        Err(e) => return AppError::internal(format!("cookie header: {e}")).into_response(),
    }
    response
}

/// `POST /console/api/logout`: ends this console session.
async fn logout(State(state): State<AppState>, headers: HeaderMap) -> Response {
    if let Some(id) = cookie_session(&headers) {
        state.console().remove(id);
    }
    (
        StatusCode::NO_CONTENT,
        [(
            header::SET_COOKIE,
            HeaderValue::from_static(
                "vouch_console=; HttpOnly; SameSite=Strict; Path=/console; Max-Age=0",
            ),
        )],
    )
        .into_response()
}

/// `GET /console/assets/{name}`: the page's script and style.
async fn asset(axum::extract::Path(name): axum::extract::Path<String>) -> Response {
    match assets::get(&name) {
        Some((content_type, body)) => {
            ([(header::CONTENT_TYPE, content_type)], body).into_response()
        }
        None => AppError::NotFound("no such console asset".to_owned()).into_response(),
    }
}

/// The limits the sessions view compares each turn's counters with.
#[derive(Serialize)]
struct TurnLimits {
    max_reviews: u32,
    max_failures: u32,
    consecutive_denials: u32,
    break_glass_enabled: bool,
    break_glass_window_ms: u64,
}

#[derive(Serialize)]
struct Overview {
    now_ms: u64,
    denials: Vec<RecentDenial>,
    turns: Vec<crate::session::TurnRow>,
    limits: TurnLimits,
}

/// `GET /console/api/overview`: recent denials of every session and the
/// turns' counters.
async fn overview(State(state): State<AppState>) -> Result<Json<Overview>, AppError> {
    let engine = state.engine();
    let denials = engine.recent_denials(MAX_DENIALS).await?;
    let turns = engine.recent_turns(TURNS_WITHIN_MS, MAX_TURNS).await?;
    let cfg = engine.config();
    Ok(Json(Overview {
        now_ms: engine.now_ms(),
        denials,
        turns,
        limits: TurnLimits {
            max_reviews: cfg.turn.max_reviews,
            max_failures: cfg.turn.max_failures,
            consecutive_denials: cfg.breaker.consecutive_denials,
            break_glass_enabled: cfg.overrides.break_glass_enabled,
            break_glass_window_ms: cfg.overrides.break_glass_window_ms,
        },
    }))
}

/// `GET /console/api/events`: the live decision feed as server-sent events
/// (`decision` with a [`crate::feed::FeedItem`], `missed` with a count when
/// this stream fell behind). Ends at shutdown.
async fn events(
    State(state): State<AppState>,
) -> Sse<impl futures_util::Stream<Item = Result<Event, Infallible>>> {
    let subscription = state.engine().feed().subscribe();
    let stream = futures_util::stream::unfold(subscription, |mut sub| async move {
        let event = match sub.next().await {
            Received::Item(item) => Event::default()
                .event("decision")
                .json_data(&*item)
                .unwrap_or_else(|_| Event::default().event("missed").data("1")),
            Received::Missed(n) => Event::default().event("missed").data(n.to_string()),
            Received::Closed => return None,
        };
        Some((Ok(event), sub))
    });
    Sse::new(stream).keep_alive(KeepAlive::default())
}

/// One day's totals by result, for the per-day chart.
#[derive(Serialize)]
struct Day {
    /// `YYYY-MM-DD` (UTC, as the audit stores days).
    day: String,
    by_result: std::collections::BTreeMap<String, u64>,
}

#[derive(Serialize)]
struct AuditView {
    report: crate::audit::report::Report,
    days: Vec<Day>,
    targets: Vec<&'static str>,
}

/// `GET /console/api/audit?days=&target=&top=&min_count=`: the report
/// over every project (as `vouch audit report --scope all`), plus each
/// day's totals for the chart.
async fn audit(
    State(state): State<AppState>,
    query: Result<
        axum::extract::Query<Vec<(String, String)>>,
        axum::extract::rejection::QueryRejection,
    >,
) -> Result<Json<AuditView>, AppError> {
    let axum::extract::Query(mut pairs) =
        query.map_err(|e| AppError::BadRequest(format!("invalid query string: {e}")))?;
    if !pairs.iter().any(|(name, _)| name == "scope") {
        pairs.push(("scope".to_owned(), "all".to_owned()));
    }
    let options = super::routes::report_options(pairs)?;
    let engine = state.engine();
    let report = engine.audit_report(options.clone()).await?;
    // Each day is the difference of two windows ending today: the audit
    // keeps no per-day series, and its window reads are cheap.
    let mut days = Vec::new();
    let mut before = std::collections::BTreeMap::new();
    for span in 1..=options.days.min(MAX_CHART_DAYS) {
        let cumulative = engine
            .audit_report(crate::audit::report::Options {
                days: span,
                ..options.clone()
            })
            .await?;
        let totals = cumulative.totals.by_result;
        let day = totals
            .iter()
            .map(|(result, count)| {
                let earlier = before.get(result).copied().unwrap_or(0);
                (result.clone(), count.saturating_sub(earlier))
            })
            .collect();
        days.push(Day {
            day: cumulative.window.from,
            by_result: day,
        });
        before = totals;
    }
    days.reverse();
    Ok(Json(AuditView {
        report,
        days,
        targets: crate::audit::targets::Target::all()
            .map(crate::audit::targets::Target::as_str)
            .collect(),
    }))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct DenialRef {
    session_id: String,
    request_hash: String,
}

/// A request hash as the console sends it: 8–64 hex digits, so it is
/// always read as a hash, never as `vouch approve`'s list index.
fn request_hash(hash: &str) -> Result<&str, AppError> {
    let hex = (8..=64).contains(&hash.len()) && hash.bytes().all(|b| b.is_ascii_hexdigit());
    if hex {
        Ok(hash)
    } else {
        Err(AppError::BadRequest(
            "`request_hash` must be 8–64 hex digits".to_owned(),
        ))
    }
}

/// `POST /console/api/approve {session_id, request_hash}`: one exact retry
/// of that denial (the override `vouch approve` makes; critical denials are
/// refused there).
async fn approve(
    State(state): State<AppState>,
    Strict(body::Json(body)): Strict<body::Json<DenialRef>>,
) -> Result<Json<Approval>, AppError> {
    let session = super::routes::session_id(&body.session_id)?;
    Ok(Json(
        state
            .engine()
            .approve(session, request_hash(&body.request_hash)?)
            .await?,
    ))
}

/// `POST /console/api/break-glass {session_id, request_hash}`: the
/// challenge (the phrase to type, 60 s, one attempt).
async fn break_glass(
    State(state): State<AppState>,
    Strict(body::Json(body)): Strict<body::Json<DenialRef>>,
) -> Result<Json<Challenge>, AppError> {
    let session = super::routes::session_id(&body.session_id)?;
    Ok(Json(
        state
            .engine()
            .break_glass_challenge(session, Some(request_hash(&body.request_hash)?))
            .await?,
    ))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ConfirmBody {
    session_id: String,
    challenge_id: String,
    phrase: String,
}

/// `POST /console/api/break-glass/confirm {session_id, challenge_id, phrase}`.
async fn break_glass_confirm(
    State(state): State<AppState>,
    Strict(body::Json(body)): Strict<body::Json<ConfirmBody>>,
) -> Result<Json<Approval>, AppError> {
    let session = super::routes::session_id(&body.session_id)?;
    Ok(Json(
        state
            .engine()
            .break_glass_confirm(session, &body.challenge_id, &body.phrase)
            .await?,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cookie_parsing_finds_only_the_console_cookie() {
        let mut h = HeaderMap::new();
        h.insert(
            header::COOKIE,
            HeaderValue::from_static("a=1; vouch_console=abc ; b=2"),
        );
        assert_eq!(cookie_session(&h), Some("abc"));
        let mut h = HeaderMap::new();
        h.insert(
            header::COOKIE,
            HeaderValue::from_static("xvouch_console=abc"),
        );
        assert_eq!(cookie_session(&h), None);
        let mut h = HeaderMap::new();
        h.insert(header::COOKIE, HeaderValue::from_static("vouch_console="));
        assert_eq!(cookie_session(&h), None);
    }

    #[test]
    fn sessions_expire_and_are_bounded() {
        let sessions = Sessions::default();
        let now = Instant::now();
        let (id, csrf) = sessions.create(now).unwrap();
        assert_eq!(sessions.get(&id, now).unwrap().csrf, csrf);
        assert!(sessions.get("other", now).is_none());
        assert!(sessions.get(&id, now + SESSION_TTL).is_none());
        for _ in 0..(MAX_SESSIONS + 3) {
            sessions.create(now).unwrap();
        }
        assert!(sessions.by_id.lock().len() <= MAX_SESSIONS);
    }
}
