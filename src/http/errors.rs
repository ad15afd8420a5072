//! The one error type of the HTTP edge and how it becomes a response.
//!
//! Every failure a client can see leaves through [`AppError`], so every
//! non-2xx body has the same shape, `{"error": {"code", "message"}}`. 4xx
//! messages are specific — they name the field and the problem, with the same
//! words the CLI prints — because the caller can fix them. 5xx messages are
//! generic: the cause may name files, SQL or upstream hosts, so it goes to the
//! log and the client gets an opaque line.

use std::time::Duration;

use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde_json::json;

use crate::engine::EngineError;
use crate::json::JsonError;
use crate::request::RequestError;
use crate::session::overrides::OverrideError;

/// A cause that is logged, never sent.
pub type Cause = Box<dyn std::error::Error + Send + Sync>;

/// A failed request at the HTTP edge.
#[derive(Debug, thiserror::Error)]
pub enum AppError {
    #[error("missing or invalid bearer token")]
    Unauthorized,
    #[error("{0}")]
    Forbidden(String),
    #[error("{0}")]
    BadRequest(String),
    #[error("{0}")]
    NotFound(String),
    #[error("{0}")]
    Conflict(String),
    #[error("method not allowed on this route")]
    MethodNotAllowed,
    #[error("request body is larger than the limit of {limit} bytes")]
    PayloadTooLarge { limit: usize },
    #[error("rate limit exceeded for this token; retry after {retry_after_secs} s")]
    RateLimited { retry_after_secs: u64 },
    #[error("the request did not complete within {} ms", .after.as_millis())]
    Timeout { after: Duration },
    #[error("{0}")]
    NotImplemented(String),
    /// The cause is logged, never sent.
    #[error("internal error: {0}")]
    Internal(Cause),
}

impl AppError {
    pub fn status(&self) -> StatusCode {
        match self {
            AppError::Unauthorized => StatusCode::UNAUTHORIZED,
            AppError::Forbidden(_) => StatusCode::FORBIDDEN,
            AppError::BadRequest(_) => StatusCode::BAD_REQUEST,
            AppError::NotFound(_) => StatusCode::NOT_FOUND,
            AppError::Conflict(_) => StatusCode::CONFLICT,
            AppError::MethodNotAllowed => StatusCode::METHOD_NOT_ALLOWED,
            AppError::PayloadTooLarge { .. } => StatusCode::PAYLOAD_TOO_LARGE,
            AppError::RateLimited { .. } => StatusCode::TOO_MANY_REQUESTS,
            AppError::Timeout { .. } => StatusCode::GATEWAY_TIMEOUT,
            AppError::NotImplemented(_) => StatusCode::NOT_IMPLEMENTED,
            AppError::Internal(_) => StatusCode::INTERNAL_SERVER_ERROR,
        }
    }

    /// The stable, machine-readable `error.code`.
    pub fn code(&self) -> &'static str {
        match self {
            AppError::Unauthorized => "unauthorized",
            AppError::Forbidden(_) => "forbidden",
            AppError::BadRequest(_) => "invalid_request",
            AppError::NotFound(_) => "not_found",
            AppError::Conflict(_) => "conflict",
            AppError::MethodNotAllowed => "method_not_allowed",
            AppError::PayloadTooLarge { .. } => "payload_too_large",
            AppError::RateLimited { .. } => "rate_limited",
            AppError::Timeout { .. } => "timeout",
            AppError::NotImplemented(_) => "not_implemented",
            AppError::Internal(_) => "internal",
        }
    }

    /// What the client is told: the detail for 4xx, a generic line for 5xx.
    pub fn public_message(&self) -> String {
        match self {
            AppError::Internal(_) => {
                "internal error; the cause is in the vouch service log".to_owned()
            }
            other => other.to_string(),
        }
    }

    /// An internal fault described in words (the words are logged only).
    pub fn internal(what: impl Into<String>) -> AppError {
        AppError::Internal(what.into().into())
    }
}

impl From<RequestError> for AppError {
    fn from(e: RequestError) -> Self {
        match e {
            RequestError::TooLarge { limit, .. } => AppError::PayloadTooLarge { limit },
            other => AppError::BadRequest(other.to_string()),
        }
    }
}

impl From<JsonError> for AppError {
    fn from(e: JsonError) -> Self {
        AppError::BadRequest(e.to_string())
    }
}

impl From<tokio::task::JoinError> for AppError {
    fn from(e: tokio::task::JoinError) -> Self {
        AppError::Internal(Box::new(e))
    }
}

impl From<EngineError> for AppError {
    fn from(e: EngineError) -> Self {
        match e {
            EngineError::Override(e) => e.into(),
            EngineError::Store(e) => AppError::Internal(Box::new(e)),
            EngineError::Task(e) => AppError::Internal(Box::new(e)),
            EngineError::Reviewer(e) => AppError::Internal(Box::new(e)),
            EngineError::AuditInput(m) => AppError::BadRequest(m),
            EngineError::Audit(e @ crate::audit::AuditError::Disabled) => {
                AppError::Conflict(e.to_string())
            }
            EngineError::Audit(e) => AppError::Internal(Box::new(e)),
        }
    }
}

impl From<OverrideError> for AppError {
    fn from(e: OverrideError) -> Self {
        use OverrideError as E;
        match e {
            E::Store(inner) => AppError::Internal(Box::new(inner)),
            E::InvalidSelector { .. } => AppError::BadRequest(e.to_string()),
            E::NoSuchDenial { .. } | E::NoSuchChallenge { .. } | E::NoCriticalDenial { .. } => {
                AppError::NotFound(e.to_string())
            }
            E::BreakGlassDisabled => AppError::Forbidden(e.to_string()),
            E::AlreadyPending { .. }
            | E::AlreadyUsed { .. }
            | E::AmbiguousPrefix { .. }
            | E::CriticalNeedsBreakGlass { .. }
            | E::NotCritical { .. }
            | E::OutsideWindow { .. }
            | E::PhraseMismatch
            | E::StaleChallenge { .. }
            | E::ChallengeExpired { .. } => AppError::Conflict(e.to_string()),
        }
    }
}

impl IntoResponse for AppError {
    fn into_response(self) -> Response {
        let status = self.status();
        if status.is_server_error() {
            tracing::error!(code = self.code(), cause = %self, "request failed");
        }
        let body = json!({"error": {"code": self.code(), "message": self.public_message()}});
        let mut response = (status, axum::Json(body)).into_response();
        match &self {
            AppError::RateLimited { retry_after_secs } => {
                response
                    .headers_mut()
                    .insert(header::RETRY_AFTER, HeaderValue::from(*retry_after_secs));
            }
            AppError::Unauthorized => {
                response
                    .headers_mut()
                    .insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
            }
            AppError::Forbidden(_)
            | AppError::BadRequest(_)
            | AppError::NotFound(_)
            | AppError::Conflict(_)
            | AppError::MethodNotAllowed
            | AppError::PayloadTooLarge { .. }
            | AppError::Timeout { .. }
            | AppError::NotImplemented(_)
            | AppError::Internal(_) => {}
        }
        response
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn internal_causes_never_reach_the_client() {
        let e = AppError::internal("open /secret/vouch.sqlite: permission denied");
        assert!(!e.public_message().contains("secret"));
        assert_eq!(e.status(), StatusCode::INTERNAL_SERVER_ERROR);
    }

    #[test]
    fn request_errors_keep_their_words() {
        let e = AppError::from(RequestError::EmptyField {
            field: "session_id",
        });
        assert_eq!(e.status(), StatusCode::BAD_REQUEST);
        assert!(e.public_message().contains("`session_id`"));
    }
}
