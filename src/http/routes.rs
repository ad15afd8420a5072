//! Route handlers. Each one reads its body with the size limit, parses it
//! strictly, calls one engine method and maps the result; none of them does
//! blocking work on the async worker (the engine owns `spawn_blocking`).

use std::time::Instant;

use axum::Json;
use axum::body::{Body, Bytes};
use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde::Deserialize;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};

use crate::decision::Decision;
use crate::hooks::{self, Answer, DeferAs, Event, HarnessId};
use crate::request::Request;

use super::AppState;
use super::auth::Role;
use super::errors::AppError;
use super::metrics::HookFallback;

/// Largest accepted `{id}` path segment, matching `session_id`'s limit.
const MAX_SESSION_ID_BYTES: usize = 256;

/// Bodies up to this size are parsed on the async worker (a few µs); larger
/// ones (up to `server.max_body_bytes`, milliseconds of JSON work with a long
/// transcript) go to the blocking pool so they never stall other requests.
const INLINE_PARSE_BYTES: usize = 16 * 1024;

/// Runs `parse` over `bytes`, off the async worker when the body is large.
async fn parse_off_worker<T, E>(
    bytes: Bytes,
    parse: impl FnOnce(&[u8]) -> Result<T, E> + Send + 'static,
) -> Result<T, AppError>
where
    T: Send + 'static,
    E: Into<AppError> + Send + 'static,
{
    if bytes.len() <= INLINE_PARSE_BYTES {
        return parse(&bytes).map_err(Into::into);
    }
    tokio::task::spawn_blocking(move || parse(&bytes))
        .await
        .map_err(|e| AppError::Internal(format!("parse task failed: {e}")))?
        .map_err(Into::into)
}

/// Reads the whole body, refusing more than `server.max_body_bytes`.
///
/// This is the same bounded read as tower-http's `RequestBodyLimitLayer`
/// (`http_body_util::Limited` underneath), done here rather than as a layer so
/// that an oversized body gets the JSON error on the API routes and a
/// fail-closed decision — not a bare 413 — on the hook route.
async fn read_body(state: &AppState, headers: &HeaderMap, body: Body) -> Result<Bytes, AppError> {
    let limit = state.limits().max_body_bytes;
    let declared = headers
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok());
    if declared.is_some_and(|n| n > limit as u64) {
        return Err(AppError::PayloadTooLarge { limit });
    }
    axum::body::to_bytes(body, limit).await.map_err(|e| {
        let too_large = std::error::Error::source(&e)
            .is_some_and(|s| s.is::<http_body_util::LengthLimitError>());
        if too_large {
            AppError::PayloadTooLarge { limit }
        } else {
            AppError::BadRequest(format!("cannot read the request body: {e}"))
        }
    })
}

/// Parses a small JSON body strictly, naming the field at fault.
fn parse_json<T: DeserializeOwned>(bytes: &[u8]) -> Result<T, AppError> {
    if bytes.iter().all(u8::is_ascii_whitespace) {
        return Err(AppError::BadRequest("request body is empty".to_owned()));
    }
    let mut de = serde_json::Deserializer::from_slice(bytes);
    let value = serde_path_to_error::deserialize(&mut de).map_err(|e| {
        let path = e.path().to_string();
        let inner = e.into_inner();
        if path.is_empty() || path == "." {
            AppError::BadRequest(inner.to_string())
        } else {
            AppError::BadRequest(format!("at `{path}`: {inner}"))
        }
    })?;
    de.end()
        .map_err(|e| AppError::BadRequest(format!("trailing data after the body: {e}")))?;
    Ok(value)
}

fn session_id(id: &str) -> Result<&str, AppError> {
    if id.is_empty() || id.len() > MAX_SESSION_ID_BYTES || id.chars().any(char::is_control) {
        return Err(AppError::BadRequest(format!(
            "session id in the path must be 1–{MAX_SESSION_ID_BYTES} bytes without control \
             characters"
        )));
    }
    Ok(id)
}

/// Runs one review in its own task under a concurrency slot.
///
/// Its own task, so that a panic inside the engine becomes an error the
/// caller turns into a fail-closed answer instead of a dropped connection
/// (which Claude Code would treat as "run the tool"), and so that a client
/// hanging up does not cancel a review half-way through its bookkeeping.
async fn reviewed(state: &AppState, request: Request) -> Result<Decision, AppError> {
    let state = state.clone();
    tokio::spawn(async move {
        let _in_flight = state.metrics().review_started();
        let _slot = state
            .limits()
            .review_slot()
            .await
            .ok_or_else(|| AppError::Internal("review semaphore closed".to_owned()))?;
        let started = Instant::now();
        let decision = state.engine().review(request).await;
        state
            .metrics()
            .record_decision(&decision, started.elapsed());
        Ok(decision)
    })
    .await
    .map_err(|e| AppError::Internal(format!("review task failed: {e}")))?
}

pub async fn review(
    State(state): State<AppState>,
    headers: HeaderMap,
    body: Body,
) -> Result<Json<Decision>, AppError> {
    let bytes = read_body(&state, &headers, body).await?;
    let request = parse_off_worker(bytes, Request::from_slice).await?;
    Ok(Json(reviewed(&state, request).await?))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ConsumeBody {
    session_id: String,
    token: String,
    request: Value,
}

pub async fn consume_grant(
    State(state): State<AppState>,
    headers: HeaderMap,
    body: Body,
) -> Result<Json<Value>, AppError> {
    let bytes = read_body(&state, &headers, body).await?;
    let (body, request) = parse_off_worker(bytes, |bytes| {
        let body: ConsumeBody = parse_json(bytes)?;
        // Re-read through the canonical parser so the words match `vouch review`.
        let request = Request::from_slice(body.request.to_string().as_bytes())
            .map_err(|e| AppError::BadRequest(format!("in field `request`: {e}")))?;
        Ok::<_, AppError>((body, request))
    })
    .await?;
    let consumed = state
        .engine()
        .consume_grant(&body.session_id, &body.token, &request)
        .await?;
    state.metrics().record_consume(consumed);
    Ok(Json(json!({ "consumed": consumed })))
}

pub async fn list_denials(
    State(state): State<AppState>,
    Path(id): Path<String>,
) -> Result<Json<Value>, AppError> {
    let id = session_id(&id)?;
    let denials = state.engine().list_denials(id).await?;
    Ok(Json(json!({ "session_id": id, "denials": denials })))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ApproveBody {
    selector: String,
}

pub async fn approve(
    State(state): State<AppState>,
    Path(id): Path<String>,
    headers: HeaderMap,
    body: Body,
) -> Result<Json<Value>, AppError> {
    let id = session_id(&id)?;
    let bytes = read_body(&state, &headers, body).await?;
    let body: ApproveBody = parse_json(&bytes)?;
    Ok(Json(state.engine().approve(id, &body.selector).await?))
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct ChallengeBody {
    #[serde(default)]
    selector: Option<String>,
}

pub async fn break_glass(
    State(state): State<AppState>,
    Path(id): Path<String>,
    headers: HeaderMap,
    body: Body,
) -> Result<Json<Value>, AppError> {
    let id = session_id(&id)?;
    let bytes = read_body(&state, &headers, body).await?;
    // The body is optional: no selector means "the most recent critical denial".
    let body: ChallengeBody = if bytes.iter().all(u8::is_ascii_whitespace) {
        ChallengeBody::default()
    } else {
        parse_json(&bytes)?
    };
    Ok(Json(
        state
            .engine()
            .break_glass_challenge(id, body.selector.as_deref())
            .await?,
    ))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ConfirmBody {
    challenge_id: String,
    phrase: String,
}

pub async fn break_glass_confirm(
    State(state): State<AppState>,
    Path(id): Path<String>,
    headers: HeaderMap,
    body: Body,
) -> Result<Json<Value>, AppError> {
    let id = session_id(&id)?;
    let bytes = read_body(&state, &headers, body).await?;
    let body: ConfirmBody = parse_json(&bytes)?;
    Ok(Json(
        state
            .engine()
            .break_glass_confirm(id, &body.challenge_id, &body.phrase)
            .await?,
    ))
}

/// `POST /v1/audit/events`: a JSON array of events (see `docs/audit.md`).
/// All or nothing: one refused event refuses the batch, naming it.
pub async fn audit_events(
    State(state): State<AppState>,
    headers: HeaderMap,
    body: Body,
) -> Result<Json<crate::audit::ingest::IngestSummary>, AppError> {
    let bytes = read_body(&state, &headers, body).await?;
    let events = parse_off_worker(bytes, |bytes| {
        match serde_json::from_slice::<Value>(bytes) {
            Ok(Value::Array(events)) => Ok(events),
            Ok(_) => Err(AppError::BadRequest(
                "the body must be a JSON array of events".to_owned(),
            )),
            // Position only: serde's message can quote the offending text.
            Err(e) => Err(AppError::BadRequest(format!(
                "the body is not valid JSON (line {}, column {})",
                e.line(),
                e.column()
            ))),
        }
    })
    .await?;
    Ok(Json(state.engine().audit_ingest(events, true).await?))
}

/// `GET /v1/audit/report?days=&top=&min_count=&scope=&target=&cwd=`: the
/// JSON report. `scope=current` (the default) needs `cwd`, the directory
/// whose project to report on.
pub async fn audit_report(
    State(state): State<AppState>,
    query: Result<
        axum::extract::Query<Vec<(String, String)>>,
        axum::extract::rejection::QueryRejection,
    >,
) -> Result<Json<crate::audit::report::Report>, AppError> {
    let axum::extract::Query(pairs) =
        query.map_err(|e| AppError::BadRequest(format!("invalid query string: {e}")))?;
    let options = report_options(pairs)?;
    Ok(Json(state.engine().audit_report(options).await?))
}

fn report_options(pairs: Vec<(String, String)>) -> Result<crate::audit::report::Options, AppError> {
    use crate::audit::report::{self, Scope};
    let mut options = report::Options {
        days: report::DEFAULT_DAYS,
        top: report::DEFAULT_TOP,
        min_count: report::DEFAULT_MIN_COUNT,
        scope: Scope::All,
        target: crate::audit::targets::Target::ClaudeCode,
    };
    let mut scope = "current".to_owned();
    let mut cwd: Option<String> = None;
    let bad = |name: &str, problem: &str| {
        AppError::BadRequest(format!("query parameter `{name}` {problem}"))
    };
    for (name, value) in pairs {
        let name = name.as_str();
        let number = || {
            value
                .parse::<u64>()
                .map_err(|_| bad(name, "must be a whole number"))
        };
        match name {
            "days" => options.days = u32::try_from(number()?).unwrap_or(u32::MAX),
            "top" => options.top = usize::try_from(number()?).unwrap_or(usize::MAX),
            "min_count" | "min-count" => options.min_count = number()?,
            "scope" if value == "current" || value == "all" => scope = value,
            "scope" => return Err(bad(name, "must be `current` or `all`")),
            "target" => {
                options.target = value.parse().map_err(|e: String| bad(name, &e))?;
            }
            // The HTTP report is JSON; `format=json` is accepted for parity.
            "format" if value == "json" => {}
            "format" => return Err(bad(name, "must be `json` (this route answers JSON)")),
            "cwd" if value.starts_with('/') => cwd = Some(value),
            "cwd" => return Err(bad(name, "must be an absolute path")),
            other => return Err(bad(other, "is not known")),
        }
    }
    if scope == "current" {
        let cwd = cwd.ok_or_else(|| {
            bad(
                "cwd",
                "is required with `scope=current` (or ask for `scope=all`)",
            )
        })?;
        options.scope = Scope::Current(std::path::PathBuf::from(cwd));
    }
    Ok(options)
}

/// `POST /hooks/claude-code`: Claude Code's `type: "http"` hook, through the
/// same adapter as `vouch hook claude-code`. Past the guard, every path
/// answers 200: Claude Code runs the tool on any other status.
pub async fn claude_code_hook(
    State(state): State<AppState>,
    headers: HeaderMap,
    body: Body,
) -> Json<Value> {
    let claude = HarnessId::ClaudeCode.harness();
    let reply = |event: &str, answer: &Answer| Json(claude.render(event, answer).to_json());
    let bytes = match read_body(&state, &headers, body).await {
        Ok(bytes) => bytes,
        Err(e) => {
            let why = if matches!(e, AppError::PayloadTooLarge { .. }) {
                HookFallback::TooLarge
            } else {
                HookFallback::Malformed
            };
            state.metrics().record_hook_fallback(why);
            let why = format!("vouch could not read this hook call: {e}");
            return reply(claude.primary_event(), &hooks::fault_answer(&why));
        }
    };
    let parsed = parse_off_worker(bytes, |bytes| Ok::<_, AppError>(parse_claude_hook(bytes))).await;
    let event = match parsed {
        Ok(Ok(event)) => event,
        Ok(Err((event, e))) => {
            state
                .metrics()
                .record_hook_fallback(HookFallback::Malformed);
            tracing::warn!(error = %e, "malformed claude code hook body");
            let why = format!("vouch could not understand this tool call: {e}");
            return Json(claude.fault_reply(&event, &why).to_json());
        }
        Err(e) => {
            state.metrics().record_hook_fallback(HookFallback::Internal);
            tracing::error!(cause = %e, "claude code hook parse failed");
            let why = "vouch could not parse this tool call because of an internal error";
            return reply(claude.primary_event(), &hooks::fault_answer(&why));
        }
    };
    match event {
        Event::Decide(call) => {
            let name = call.event.clone();
            let answer =
                hooks::decide_call(state.engine(), HarnessId::ClaudeCode, call, DeferAs::Auto)
                    .await;
            reply(&name, &answer)
        }
        Event::Observe(observed) => {
            // For the audit only; finding the project touches the
            // filesystem, so off the worker.
            let engine = state.engine().clone();
            let name = observed.event.clone();
            let _ =
                tokio::task::spawn_blocking(move || engine.observe_ran(&observed.request)).await;
            Json(claude.no_op(&name).to_json())
        }
        // Nothing to decide.
        Event::Ignore { event } => Json(claude.no_op(&event).to_json()),
    }
}

/// A Claude Code hook body as an event, or the error with the event name
/// it carried (so the fault reply has the right shape).
fn parse_claude_hook(bytes: &[u8]) -> Result<Event, (String, hooks::HookError)> {
    let claude = HarnessId::ClaudeCode.harness();
    let primary = claude.primary_event().to_owned();
    let value: Value = serde_json::from_slice(bytes)
        .map_err(|e| (primary.clone(), hooks::HookError::Json(e.to_string())))?;
    let event = value
        .get("hook_event_name")
        .and_then(Value::as_str)
        .map_or(primary, str::to_owned);
    claude.parse(&value).map_err(|e| (event, e))
}

pub async fn healthz(State(state): State<AppState>) -> Response {
    let health = state.engine().health().await;
    let ok = health.get("status").and_then(Value::as_str) == Some("ok");
    let status = if ok {
        StatusCode::OK
    } else {
        StatusCode::SERVICE_UNAVAILABLE
    };
    (status, Json(health)).into_response()
}

pub async fn metrics(State(state): State<AppState>, headers: HeaderMap) -> Response {
    if !state.inner.metrics_open {
        let role = super::auth::bearer(headers.get(header::AUTHORIZATION))
            .and_then(|t| state.tokens().identify(t));
        match role {
            Some(Role::Operator) => {}
            Some(Role::Adapter) => {
                return AppError::Forbidden(
                    "`/metrics` needs the operator token when `server.allow_remote` is set"
                        .to_owned(),
                )
                .into_response();
            }
            None => return AppError::Unauthorized.into_response(),
        }
    }
    (
        [(
            header::CONTENT_TYPE,
            "text/plain; version=0.0.4; charset=utf-8",
        )],
        state.metrics().render(),
    )
        .into_response()
}

pub async fn not_found() -> AppError {
    AppError::NotFound("no such route".to_owned())
}

pub async fn method_not_allowed() -> AppError {
    AppError::MethodNotAllowed
}
