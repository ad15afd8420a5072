//! The engine: one running vouch — its configuration, state and reviewer —
//! behind a small async API that the CLI, the HTTP service and the harness
//! adapters all call.
//!
//! `review` never fails: every error inside becomes a fail-closed
//! [`Decision`]. The operator calls return [`EngineError`], whose variants map
//! onto HTTP status classes at the edge.

use std::path::PathBuf;
use std::sync::Arc;

use serde_json::Value;

use crate::config::Config;
use crate::decision::{Decision, Outcome, Stage};
use crate::request::Request;

/// Why an engine call (other than `review`) failed.
#[derive(Debug, thiserror::Error)]
pub enum EngineError {
    /// The caller's input is wrong (HTTP 400).
    #[error("{0}")]
    BadRequest(String),
    /// The named thing does not exist (HTTP 404).
    #[error("{0}")]
    NotFound(String),
    /// The request conflicts with current state, e.g. an override already
    /// pending (HTTP 409).
    #[error("{0}")]
    Conflict(String),
    /// Configuration forbids it, e.g. break glass disabled (HTTP 403).
    #[error("{0}")]
    Forbidden(String),
    /// An internal fault; the message is for logs, not for clients (HTTP 5xx).
    #[error("{0}")]
    Internal(String),
}

/// What the engine needs to start.
#[derive(Debug, Clone)]
pub struct EngineOptions {
    /// The effective trusted configuration.
    pub config: Config,
    /// Directory holding `vouch.sqlite`, tokens and keys.
    pub state_dir: PathBuf,
}

/// A cheaply cloneable handle to one running vouch.
#[derive(Clone)]
pub struct Engine {
    inner: Arc<Inner>,
}

struct Inner {
    options: EngineOptions,
}

impl Engine {
    pub fn new(options: EngineOptions) -> Result<Engine, EngineError> {
        Ok(Engine {
            inner: Arc::new(Inner { options }),
        })
    }

    pub fn config(&self) -> &Config {
        &self.inner.options.config
    }

    pub fn state_dir(&self) -> &std::path::Path {
        &self.inner.options.state_dir
    }

    /// Decides one request. Never fails: faults become fail-closed decisions.
    pub async fn review(&self, request: Request) -> Decision {
        let hash = request.request_hash();
        let outcome = self.config().decision.failure_mode.outcome();
        Decision::new(
            outcome,
            Stage::ReviewerFailure,
            hash,
            "the decision pipeline is not assembled in this build",
        )
    }

    /// Consumes a one-use grant for exactly this request. `Ok(false)` for any
    /// mismatch, replay or expiry.
    pub async fn consume_grant(
        &self,
        _session_id: &str,
        _token: &str,
        _request: &Request,
    ) -> Result<bool, EngineError> {
        Err(EngineError::Internal(
            "grant store is not assembled in this build".into(),
        ))
    }

    /// Recent non-critical model denials of a session, newest first.
    pub async fn list_denials(&self, _session_id: &str) -> Result<Vec<Value>, EngineError> {
        Err(EngineError::Internal(
            "session store is not assembled in this build".into(),
        ))
    }

    /// Approves one exact retry of a listed denial (`selector`: 1-based index
    /// or request-hash prefix).
    pub async fn approve(&self, _session_id: &str, _selector: &str) -> Result<Value, EngineError> {
        Err(EngineError::Internal(
            "session store is not assembled in this build".into(),
        ))
    }

    /// Starts break glass for a critical denial; returns the challenge
    /// (details and the phrase the human must type).
    pub async fn break_glass_challenge(
        &self,
        _session_id: &str,
        _selector: Option<&str>,
    ) -> Result<Value, EngineError> {
        Err(EngineError::Internal(
            "session store is not assembled in this build".into(),
        ))
    }

    /// Confirms break glass with the typed phrase.
    pub async fn break_glass_confirm(
        &self,
        _session_id: &str,
        _challenge_id: &str,
        _phrase: &str,
    ) -> Result<Value, EngineError> {
        Err(EngineError::Internal(
            "session store is not assembled in this build".into(),
        ))
    }

    /// Store and reviewer status for `/healthz`.
    pub fn health(&self) -> Value {
        let cfg = self.config();
        serde_json::json!({
            "status": "ok",
            "store": "unknown",
            "reviewer": {
                "provider": cfg.reviewer.provider,
                "model": cfg.reviewer.model,
            },
        })
    }
}

/// The outcome used whenever the engine cannot decide.
pub fn fail_closed_outcome(config: &Config) -> Outcome {
    config.decision.failure_mode.outcome()
}
