//! The HTTP service (`vouch serve`, design §7.2): an authenticated loopback
//! edge in front of the [`Engine`].
//!
//! [`app`] builds the whole router from an [`AppState`], so every route is
//! testable without a socket; [`crate::server`] owns listening and shutdown.
//!
//! Request path, outermost first: access log → route match → guard (bearer
//! token → role check → per-token rate limit → request deadline) → handler
//! (body limit → strict parse → bounded-concurrency review).
//!
//! Route classes:
//! - adapter (adapter or operator token): `POST /v1/review`,
//!   `POST /v1/grants/consume`, `POST /v1/audit/events`;
//! - operator (operator token only): `/v1/sessions/{id}/…`, `GET /v1/audit/report`;
//! - hook (adapter or operator token): `POST /hooks/claude-code`, which past
//!   authentication answers 200 with a Claude Code decision on every path;
//! - console (a login cookie, and a CSRF header on every change; see
//!   [`console`]): `GET /console`, `POST /console/login`,
//!   `/console/assets/…`, `/console/api/…`;
//! - open: `GET /livez` (the process answers HTTP; touches nothing else),
//!   `GET /healthz` (the store opens and the reviewer is usable), and
//!   `GET /metrics` unless `server.allow_remote` is
//!   set, in which case it needs the operator token (counts by stage and
//!   outcome are harmless on a loopback interface, not on a network).

pub mod auth;
pub mod body;
pub mod console;
pub mod errors;
pub mod limits;
pub mod metrics;
mod routes;

use std::sync::Arc;
use std::time::Instant;

use axum::Router;
use axum::extract::{MatchedPath, Request, State};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};

use crate::config::FailClosed;
use crate::engine::Engine;

pub use auth::{Required, Role, Tokens};
pub use errors::AppError;
pub use limits::{Limits, LimitsError};
pub use metrics::Metrics;

/// Everything the handlers share. Cheap to clone.
#[derive(Clone)]
pub struct AppState {
    inner: Arc<Shared>,
}

struct Shared {
    engine: Engine,
    tokens: Tokens,
    limits: Limits,
    metrics: Metrics,
    metrics_open: bool,
    console: console::Sessions,
}

impl AppState {
    /// Builds the state from a running engine and the service tokens; limits
    /// come from the engine's configuration.
    pub fn new(engine: Engine, tokens: Tokens) -> Result<AppState, LimitsError> {
        let limits = Limits::from_config(engine.config())?;
        let metrics_open = !engine.config().server.allow_remote;
        Ok(AppState {
            inner: Arc::new(Shared {
                engine,
                tokens,
                limits,
                metrics: Metrics::new(),
                metrics_open,
                console: console::Sessions::default(),
            }),
        })
    }

    pub fn engine(&self) -> &Engine {
        &self.inner.engine
    }

    pub fn tokens(&self) -> &Tokens {
        &self.inner.tokens
    }

    pub fn limits(&self) -> &Limits {
        &self.inner.limits
    }

    pub fn metrics(&self) -> &Metrics {
        &self.inner.metrics
    }

    /// The operator console's logins.
    pub fn console(&self) -> &console::Sessions {
        &self.inner.console
    }

    fn failure_mode(&self) -> FailClosed {
        self.inner.engine.config().decision.failure_mode
    }
}

/// The service router.
pub fn app(state: AppState) -> Router {
    let adapter = Router::new()
        .route("/v1/review", post(routes::review))
        .route("/v1/grants/consume", post(routes::consume_grant))
        .route("/v1/audit/events", post(routes::audit_events))
        .route_layer(middleware::from_fn_with_state(
            (state.clone(), Required::Adapter),
            guard,
        ));
    let operator = Router::new()
        .route("/v1/sessions/{id}/denials", get(routes::list_denials))
        .route("/v1/sessions/{id}/overrides", post(routes::approve))
        .route("/v1/sessions/{id}/break-glass", post(routes::break_glass))
        .route(
            "/v1/sessions/{id}/break-glass/confirm",
            post(routes::break_glass_confirm),
        )
        .route("/v1/audit/report", get(routes::audit_report))
        .route_layer(middleware::from_fn_with_state(
            (state.clone(), Required::Operator),
            guard,
        ));
    let hooks = Router::new()
        .route("/hooks/claude-code", post(routes::claude_code_hook))
        .route_layer(middleware::from_fn_with_state(state.clone(), hook_guard));
    let open = Router::new()
        .route("/livez", get(routes::livez))
        .route("/healthz", get(routes::healthz))
        .route("/metrics", get(routes::metrics));
    Router::new()
        .merge(adapter)
        .merge(operator)
        .merge(hooks)
        .merge(open)
        .merge(console::router(state.clone()))
        .fallback(routes::not_found)
        .method_not_allowed_fallback(routes::method_not_allowed)
        .layer(middleware::from_fn_with_state(state.clone(), access_log))
        .with_state(state)
}

/// Authenticates the caller, or says why not.
fn authenticate(state: &AppState, request: &Request) -> Result<Role, AppError> {
    let presented = auth::bearer(request.headers().get(axum::http::header::AUTHORIZATION))
        .ok_or(AppError::Unauthorized)?;
    state
        .tokens()
        .identify(presented)
        .ok_or(AppError::Unauthorized)
}

/// Auth, rate limit and deadline for the JSON API routes.
async fn guard(
    State((state, required)): State<(AppState, Required)>,
    mut request: Request,
    next: Next,
) -> Result<Response, AppError> {
    let role = authenticate(&state, &request)?;
    match (required, role) {
        (Required::Operator, Role::Adapter) => {
            return Err(AppError::Forbidden(
                "this route needs the operator token; the adapter token cannot create \
                 overrides, break glass or read reports"
                    .to_owned(),
            ));
        }
        (Required::Operator, Role::Operator)
        | (Required::Adapter, Role::Adapter | Role::Operator) => {}
    }
    if let Err(retry_after_secs) = state.limits().check_rate(role) {
        state.metrics().record_rate_limited(role);
        return Err(AppError::RateLimited { retry_after_secs });
    }
    request.extensions_mut().insert(role);
    let after = state.limits().request_timeout;
    let mut response = tokio::time::timeout(after, next.run(request))
        .await
        .map_err(|_| AppError::Timeout { after })?;
    response.extensions_mut().insert(role);
    Ok(response)
}

/// The hook route's guard: past authentication it never answers non-2xx.
async fn hook_guard(State(state): State<AppState>, request: Request, next: Next) -> Response {
    let role = match authenticate(&state, &request) {
        Ok(role) => role,
        Err(e) => return e.into_response(),
    };
    let mut response = if state.limits().check_rate(role).is_err() {
        state.metrics().record_rate_limited(role);
        state
            .metrics()
            .record_hook_fallback(metrics::HookFallback::RateLimited);
        axum::Json(
            crate::hooks::harnesses::claude_code::pre_tool_use(
                "ask",
                &format!(
                    "{} vouch is rate limiting this agent (too many tool calls per second), so \
                     this call was not reviewed automatically and needs a human decision.",
                    crate::decision::Fault::RateLimited.tag()
                ),
            )
            .to_json(),
        )
        .into_response()
    } else {
        let after = state.limits().request_timeout;
        match tokio::time::timeout(after, next.run(request)).await {
            Ok(response) => response,
            Err(_) => {
                state
                    .metrics()
                    .record_hook_fallback(metrics::HookFallback::Timeout);
                let decision = match state.failure_mode() {
                    FailClosed::Deny => "deny",
                    FailClosed::Defer => "ask",
                };
                axum::Json(
                    crate::hooks::harnesses::claude_code::pre_tool_use(
                        decision,
                        &format!(
                            "{} Automatic review could not complete within {} ms, so this call \
                             was not approved. This is a failure of the reviewer, not a \
                             judgement that the action is risky.",
                            crate::decision::Fault::Deadline.tag(),
                            after.as_millis()
                        ),
                    )
                    .to_json(),
                )
                .into_response()
            }
        }
    };
    response.extensions_mut().insert(role);
    response
}

/// One access-log line per request: method, route template, status, role and
/// latency. Never bodies, query strings or headers (the bearer token is one).
async fn access_log(State(state): State<AppState>, request: Request, next: Next) -> Response {
    let started = Instant::now();
    let method = request.method().clone();
    let route = route_label(request.extensions().get::<MatchedPath>());
    // The head is parsed and the handler starts: what a client (or a test)
    // waiting for "the service has my request" can watch for at debug.
    tracing::debug!(target: "vouch::access", %method, route, "request started");
    let response = next.run(request).await;
    let status = response.status().as_u16();
    let role = response
        .extensions()
        .get::<Role>()
        .map_or("none", |r| r.as_str());
    state.metrics().record_http(route, status);
    tracing::info!(
        target: "vouch::access",
        %method,
        route,
        status,
        role,
        latency_us = u64::try_from(started.elapsed().as_micros()).unwrap_or(u64::MAX),
    );
    response
}

/// The route table, as `'static` labels for logs and metrics.
const ROUTES: [&str; 24] = [
    "/v1/review",
    "/v1/grants/consume",
    "/v1/audit/events",
    "/v1/audit/report",
    "/v1/sessions/{id}/denials",
    "/v1/sessions/{id}/overrides",
    "/v1/sessions/{id}/break-glass",
    "/v1/sessions/{id}/break-glass/confirm",
    "/hooks/claude-code",
    "/livez",
    "/healthz",
    "/metrics",
    "/console",
    "/console/login",
    "/console/assets/{name}",
    "/console/api/overview",
    "/console/api/events",
    "/console/api/audit",
    "/console/api/approve",
    "/console/api/break-glass",
    "/console/api/break-glass/confirm",
    "/console/api/logout",
    "unmatched",
    "other",
];

fn route_label(matched: Option<&MatchedPath>) -> &'static str {
    let Some(matched) = matched else {
        return "unmatched";
    };
    ROUTES
        .iter()
        .copied()
        .find(|r| *r == matched.as_str())
        .unwrap_or("other")
}
