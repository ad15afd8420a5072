//! Route handlers. Each one takes its body through the [`Strict`] extractor
//! (size limit, strict parse), calls one engine method and returns its typed
//! result; none of them does blocking work on the async worker (the engine
//! owns `spawn_blocking`).

use std::time::Instant;

use axum::Json;
use axum::body::Body;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::decision::{Decision, Fault};
use crate::engine::{HealthStatus, ListedDenial};
use crate::hooks::{self, Answer, DeferAs, Event, HarnessId};
use crate::request::Request;
use crate::session::overrides::{Approval, Challenge};

use super::AppState;
use super::auth::Role;
use super::body::{self, FromBody, Strict};
use super::errors::AppError;
use super::metrics::HookFallback;

/// Largest accepted `{id}` path segment, matching `session_id`'s limit.
const MAX_SESSION_ID_BYTES: usize = 256;

pub(super) fn session_id(id: &str) -> Result<&str, AppError> {
    if id.is_empty() || id.len() > MAX_SESSION_ID_BYTES || id.chars().any(char::is_control) {
        return Err(AppError::BadRequest(format!(
            "session id in the path must be 1–{MAX_SESSION_ID_BYTES} bytes without control \
             characters"
        )));
    }
    Ok(id)
}

/// Runs one review in its own task. The engine bounds concurrent model
/// calls (`server.max_concurrent_reviews`); answers that need no model never
/// wait for a slot.
///
/// Its own task, so that a panic inside the engine becomes an error the
/// caller turns into a fail-closed answer instead of a dropped connection
/// (which Claude Code would treat as "run the tool"), and so that a client
/// hanging up does not cancel a review half-way through its bookkeeping.
///
/// A hard deny that needs no file, state or model is answered first, here
/// on the worker ([`crate::engine::Engine::review_early`]: bounded CPU work
/// that writes no state and catches its own panics), without a task.
async fn reviewed(state: &AppState, request: Request) -> Result<Decision, AppError> {
    let started = Instant::now();
    let undecided = {
        let _in_flight = state.metrics().review_started();
        match state.engine().review_early(&request) {
            Ok(decision) => {
                state
                    .metrics()
                    .record_decision(&decision, started.elapsed());
                return Ok(decision);
            }
            Err(undecided) => undecided,
        }
    };
    let state = state.clone();
    tokio::spawn(async move {
        let _in_flight = state.metrics().review_started();
        let decision = state.engine().review_late(request, undecided).await;
        state
            .metrics()
            .record_decision(&decision, started.elapsed());
        Ok(decision)
    })
    .await?
}

pub async fn review(
    State(state): State<AppState>,
    headers: HeaderMap,
    Strict(mut request): Strict<Request>,
) -> Result<Json<Decision>, AppError> {
    request.files_elsewhere = files_elsewhere(&state, &headers);
    Ok(Json(reviewed(&state, request).await?))
}

/// Whether the caller may be on another machine, so that this machine's
/// files are not the ones its command would touch and inert is not decided
/// here (docs/remote-hook.md): the service accepts remote peers
/// (`server.allow_remote`), or a proxy says it forwarded the call
/// (`Forwarded`, `X-Forwarded-For`, `X-Real-IP`). A loopback-only service
/// with no such header has only callers on this machine.
fn files_elsewhere(state: &AppState, headers: &HeaderMap) -> bool {
    state.engine().config().server.allow_remote
        || ["forwarded", "x-forwarded-for", "x-real-ip"]
            .iter()
            .any(|name| headers.contains_key(*name))
}

/// `{session_id, token, request}`; the request is re-read through the
/// canonical parser so the words match `vouch review`.
pub struct ConsumeCall {
    session_id: String,
    token: String,
    request: Request,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ConsumeBody {
    session_id: String,
    token: String,
    request: Value,
}

impl FromBody for ConsumeCall {
    fn from_body(bytes: &[u8]) -> Result<Self, AppError> {
        let body: ConsumeBody = crate::json::from_slice(bytes)?;
        let request = Request::from_slice(body.request.to_string().as_bytes())
            .map_err(|e| AppError::BadRequest(format!("in field `request`: {e}")))?;
        Ok(ConsumeCall {
            session_id: body.session_id,
            token: body.token,
            request,
        })
    }
}

#[derive(Serialize)]
pub struct Consumed {
    consumed: bool,
}

pub async fn consume_grant(
    State(state): State<AppState>,
    Strict(call): Strict<ConsumeCall>,
) -> Result<Json<Consumed>, AppError> {
    let consumed = state
        .engine()
        .consume_grant(&call.session_id, &call.token, &call.request)
        .await?;
    state.metrics().record_consume(consumed);
    Ok(Json(Consumed { consumed }))
}

#[derive(Serialize)]
pub struct Denials {
    session_id: String,
    denials: Vec<ListedDenial>,
}

pub async fn list_denials(
    State(state): State<AppState>,
    Path(id): Path<String>,
) -> Result<Json<Denials>, AppError> {
    let id = session_id(&id)?;
    let denials = state.engine().list_denials(id).await?;
    Ok(Json(Denials {
        session_id: id.to_owned(),
        denials,
    }))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ApproveBody {
    selector: String,
}

pub async fn approve(
    State(state): State<AppState>,
    Path(id): Path<String>,
    Strict(body::Json(body)): Strict<body::Json<ApproveBody>>,
) -> Result<Json<Approval>, AppError> {
    let id = session_id(&id)?;
    Ok(Json(state.engine().approve(id, &body.selector).await?))
}

/// Optional body: no selector means "the most recent critical denial".
#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub struct ChallengeBody {
    #[serde(default)]
    selector: Option<String>,
}

impl FromBody for ChallengeBody {
    fn from_body(bytes: &[u8]) -> Result<Self, AppError> {
        if bytes.iter().all(u8::is_ascii_whitespace) {
            return Ok(ChallengeBody::default());
        }
        Ok(crate::json::from_slice(bytes)?)
    }
}

pub async fn break_glass(
    State(state): State<AppState>,
    Path(id): Path<String>,
    Strict(body): Strict<ChallengeBody>,
) -> Result<Json<Challenge>, AppError> {
    let id = session_id(&id)?;
    let challenge = state
        .engine()
        .break_glass_challenge(id, body.selector.as_deref())
        .await?;
    Ok(Json(challenge))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ConfirmBody {
    challenge_id: String,
    phrase: String,
}

pub async fn break_glass_confirm(
    State(state): State<AppState>,
    Path(id): Path<String>,
    Strict(body::Json(body)): Strict<body::Json<ConfirmBody>>,
) -> Result<Json<Approval>, AppError> {
    let id = session_id(&id)?;
    let approval = state
        .engine()
        .break_glass_confirm(id, &body.challenge_id, &body.phrase)
        .await?;
    Ok(Json(approval))
}

/// The body of `POST /v1/audit/events`: a JSON array of events, each
/// parsed (and refused by index) by the audit's ingest.
#[derive(Debug)]
pub struct AuditEvents(pub Vec<Value>);

impl FromBody for AuditEvents {
    fn from_body(bytes: &[u8]) -> Result<Self, AppError> {
        match serde_json::from_slice::<Value>(bytes) {
            Ok(Value::Array(events)) => Ok(AuditEvents(events)),
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
    }
}

/// `POST /v1/audit/events`: a JSON array of events (see `docs/audit.md`).
/// All or nothing: one refused event refuses the batch, naming it.
pub async fn audit_events(
    State(state): State<AppState>,
    Strict(AuditEvents(events)): Strict<AuditEvents>,
) -> Result<Json<crate::audit::ingest::IngestSummary>, AppError> {
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

pub(super) fn report_options(
    pairs: Vec<(String, String)>,
) -> Result<crate::audit::report::Options, AppError> {
    use crate::audit::report::{self, Scope};
    let mut options = report::Options {
        days: report::DEFAULT_DAYS,
        top: report::DEFAULT_TOP,
        min_count: report::DEFAULT_MIN_COUNT,
        scope: Scope::All,
        target: crate::audit::targets::Target::of(&crate::audit::targets::claude_code::ClaudeCode),
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
    let claude = HarnessId::of(&hooks::harnesses::claude_code::HARNESS).harness();
    let reply = |event: &str, answer: &Answer| Json(claude.render(event, answer).to_json());
    let bytes = match body::read_limited(&state, &headers, body).await {
        Ok(bytes) => bytes,
        Err(e) => {
            let why = if matches!(e, AppError::PayloadTooLarge { .. }) {
                HookFallback::TooLarge
            } else {
                HookFallback::Malformed
            };
            state.metrics().record_hook_fallback(why);
            let why = format!("vouch could not read this hook call: {e}");
            let answer = hooks::fault_answer(Fault::HookInput, &why);
            return reply(claude.primary_event(), &answer);
        }
    };
    let parsed =
        body::parse_off_worker(bytes, |bytes| Ok::<_, AppError>(parse_claude_hook(bytes))).await;
    let event = match parsed {
        Ok(Ok(event)) => event,
        Ok(Err((event, e))) => {
            state
                .metrics()
                .record_hook_fallback(HookFallback::Malformed);
            tracing::warn!(
                error = %crate::evidence::redact::redact_text(&e.to_string()),
                "malformed claude code hook body"
            );
            let why = format!("vouch could not understand this tool call: {e}");
            return Json(claude.fault_reply(&event, Fault::HookInput, &why).to_json());
        }
        Err(e) => {
            state.metrics().record_hook_fallback(HookFallback::Internal);
            tracing::error!(cause = %e, "claude code hook parse failed");
            let why = "vouch could not parse this tool call because of an internal error";
            let answer = hooks::fault_answer(Fault::Internal, &why);
            return reply(claude.primary_event(), &answer);
        }
    };
    match event {
        Event::Decide(mut call) => {
            let name = call.event.clone();
            let elsewhere = files_elsewhere(&state, &headers);
            for request in &mut call.requests {
                request.files_elsewhere = elsewhere;
            }
            let answer = hooks::decide_call(
                state.engine(),
                HarnessId::of(&hooks::harnesses::claude_code::HARNESS),
                call,
                DeferAs::Auto,
            )
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
        // Recorded for the turn's tool calls; never blocked (see
        // `hooks::record_prompt`).
        Event::Prompt(prompt) => {
            let engine = state.engine().clone();
            let name = prompt.event.clone();
            let harness = HarnessId::of(&hooks::harnesses::claude_code::HARNESS);
            let _ = tokio::task::spawn_blocking(move || {
                hooks::record_prompt(&engine, harness, &prompt);
            })
            .await;
            Json(claude.no_op(&name).to_json())
        }
        // Nothing to decide.
        Event::Ignore { event } => Json(claude.no_op(&event).to_json()),
    }
}

/// A Claude Code hook body as an event, or the error with the event name
/// it carried (so the fault reply has the right shape).
fn parse_claude_hook(bytes: &[u8]) -> Result<Event, (String, hooks::HookError)> {
    let claude = HarnessId::of(&hooks::harnesses::claude_code::HARNESS).harness();
    let primary = claude.primary_event().to_owned();
    let value: Value = crate::json::from_slice(bytes)
        .map_err(|e| (primary.clone(), hooks::HookError::Json(e.to_string())))?;
    let event = value
        .get("hook_event_name")
        .and_then(Value::as_str)
        .map_or(primary, str::to_owned);
    claude.parse(&value).map_err(|e| (event, e))
}

/// Liveness for supervisors: the process accepts and answers HTTP. It reads
/// no state and calls nothing, so polling it costs the service nothing and
/// it is the floor a review's cost is compared with (the load harness).
pub async fn livez() -> Json<Value> {
    Json(serde_json::json!({ "status": "alive" }))
}

pub async fn healthz(State(state): State<AppState>) -> Response {
    let health = state.engine().health().await;
    let status = match health.status {
        HealthStatus::Ok => StatusCode::OK,
        HealthStatus::Degraded => StatusCode::SERVICE_UNAVAILABLE,
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
