//! The reviewer model client: one deadline, at most two calls, and a verdict
//! or a named failure — never an allow by default (design §6.5).
//!
//! The pipeline hands over plain text ([`ModelInput`]) that the evidence
//! builder has already redacted, fenced and budgeted. This module sends it in
//! the configured provider's wire format ([`wire`]), reads the reply into a
//! strictly validated [`Verdict`] ([`verdict`]), and decides whether a failed
//! call earns its single retry ([`retry`]). Every outcome, including every
//! fault, comes back as a [`ReviewResult`]; turning it into a decision (risk
//! ceilings, failure mode) is [`crate::decision::ceiling`]'s job.
//!
//! The API key is held only as a sensitive header value: it is never logged,
//! never part of an error, and never sent over plain HTTP to a host other
//! than loopback.
//!
//! # Choices where the design is silent
//!
//! Made for a user who pays per token and fears a leaked key:
//! - A 429 without `Retry-After` is retried once at once; an unparseable
//!   `Retry-After` is not retried at all. A 5xx that carries `Retry-After`
//!   is held to the same ceiling and deadline as a 429.
//! - `stats.calls` counts attempts, including one that never connected.
//! - The format retry appends only the fixed correction; the model's bad
//!   output is not sent back (cheaper, and nothing it wrote is re-fed).
//! - Replies over 1 MiB are not read; a 429 body is read (≤ 64 KiB) only to
//!   spot `insufficient_quota` and is then dropped.
//! - `base_url` may not embed credentials, a query or a fragment, and a key
//!   is refused for plain `http` to a non-loopback host.
//! - OpenAI `finish_reason: "content_filter"` counts as a refusal.
//! - Anthropic cache read/write tokens are added to `input_tokens` (they are
//!   billed); if a server ignores the forced tool, a text answer is still
//!   parsed tolerantly.

pub mod retry;
pub mod verdict;
pub mod wire;

use std::time::{Duration, SystemTime};

use reqwest::header::{AUTHORIZATION, CONTENT_TYPE, HeaderName, HeaderValue};
use reqwest::{Client, Response, Url};
use tokio::time::Instant;

use crate::config::{Provider, ReviewerConfig};
use crate::telemetry;

use retry::{Next, RetryAfter};
pub use verdict::Verdict;

/// Cost and timing of a model-backed review.
#[derive(Debug, Clone, PartialEq, Eq, Default, serde::Serialize)]
pub struct ReviewStats {
    pub model: String,
    pub calls: u32,
    pub input_tokens: u64,
    pub output_tokens: u64,
    pub packet_tokens_estimate: u64,
    pub duration_ms: u64,
}
use wire::{RequestShape, Usage, Wire};

/// Largest 2xx reply read, in bytes. A verdict capped at
/// `max_output_tokens` (≤ 4096) fits many times over; anything larger is a
/// misbehaving endpoint, not an answer.
const MAX_REPLY_BYTES: usize = 1 << 20;

/// Largest 429 body read to tell a spent quota from a rate limit.
const MAX_ERROR_BODY_BYTES: usize = 64 << 10;

/// What the reviewer model is asked: the fixed policy and the packet.
///
/// Deliberately not `Debug`: prompt text must not reach a log by accident.
#[derive(Clone, Copy)]
pub struct ModelInput<'a> {
    pub system: &'a str,
    pub user: &'a str,
}

/// Why a review produced no verdict. Each class has a stable snake_case
/// [`name`](FailureClass::name) for telemetry and audit, and a
/// [`phrase`](FailureClass::phrase) for the decision's rationale.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum FailureClass {
    /// The review deadline passed.
    Timeout,
    /// Connection refused, reset, or dropped before a reply.
    Connect,
    /// The provider answered 5xx.
    Http5xx,
    /// 429 after the retry, or 429 with no retry left.
    RateLimited,
    /// 429/5xx whose Retry-After exceeds the ceiling or the deadline.
    RetryAfterTooLong,
    /// 429 with `insufficient_quota`: waiting cannot fix it.
    Quota,
    /// 401 or 403.
    Auth,
    /// Any other 4xx.
    ClientError(u16),
    /// 1xx/3xx (redirects are not followed).
    UnexpectedStatus(u16),
    /// The model produced nothing.
    EmptyOutput,
    /// Not exactly one parseable JSON object.
    InvalidJson,
    /// A JSON object that is not a schema-valid verdict.
    SchemaInvalid,
    /// Stopped at the output token cap.
    Truncated,
    /// The model declined to judge.
    Refusal,
    /// A 2xx body that is not the provider's reply format.
    MalformedResponse,
    /// A reply larger than vouch reads.
    ResponseTooLarge,
    /// The evidence packet did not fit the input budget; the model was not
    /// called. Produced by the packet builder's caller, not by [`Reviewer`].
    PacketTooLarge,
    /// The request could not be built or sent for a reason other than the
    /// network (a local client fault).
    Transport,
}

impl FailureClass {
    /// Stable name for telemetry and audit.
    pub fn name(self) -> &'static str {
        match self {
            FailureClass::Timeout => "timeout",
            FailureClass::Connect => "connect",
            FailureClass::Http5xx => "http_5xx",
            FailureClass::RateLimited => "rate_limited",
            FailureClass::RetryAfterTooLong => "retry_after_too_long",
            FailureClass::Quota => "quota",
            FailureClass::Auth => "auth",
            FailureClass::ClientError(_) => "client_error",
            FailureClass::UnexpectedStatus(_) => "unexpected_status",
            FailureClass::EmptyOutput => "empty_output",
            FailureClass::InvalidJson => "invalid_json",
            FailureClass::SchemaInvalid => "schema_invalid",
            FailureClass::Truncated => "truncated",
            FailureClass::Refusal => "refusal",
            FailureClass::MalformedResponse => "malformed_response",
            FailureClass::ResponseTooLarge => "response_too_large",
            FailureClass::PacketTooLarge => "packet_too_large",
            FailureClass::Transport => "transport",
        }
    }

    /// What went wrong, for the agent and the user. Never carries provider
    /// text.
    pub fn phrase(self) -> String {
        match self {
            FailureClass::Timeout => {
                "the reviewer did not answer before the review deadline".into()
            }
            FailureClass::Connect => {
                "the reviewer could not be reached, or the connection dropped before a reply".into()
            }
            FailureClass::Http5xx => "the reviewer service returned a server error".into(),
            FailureClass::RateLimited => "the reviewer service is rate limiting requests".into(),
            FailureClass::RetryAfterTooLong => {
                "the reviewer service asked to wait longer than the review allows".into()
            }
            FailureClass::Quota => "the reviewer account has no quota left".into(),
            FailureClass::Auth => {
                "the reviewer service rejected the credentials (see `reviewer.api_key_env`)".into()
            }
            FailureClass::ClientError(code) => {
                format!("the reviewer service rejected the request (HTTP {code})")
            }
            FailureClass::UnexpectedStatus(code) => {
                format!("the reviewer service answered with unexpected HTTP status {code}")
            }
            FailureClass::EmptyOutput => "the reviewer model returned no output".into(),
            FailureClass::InvalidJson => {
                "the reviewer model did not return exactly one JSON verdict".into()
            }
            FailureClass::SchemaInvalid => {
                "the reviewer model's verdict did not match the verdict schema".into()
            }
            FailureClass::Truncated => {
                "the reviewer model's output was cut off at the output token limit".into()
            }
            FailureClass::Refusal => "the reviewer model declined to judge the action".into(),
            FailureClass::MalformedResponse => {
                "the reviewer service's reply was not in the expected format".into()
            }
            FailureClass::ResponseTooLarge => {
                "the reviewer service's reply exceeded the size vouch reads".into()
            }
            FailureClass::PacketTooLarge => {
                "the evidence for this action did not fit the reviewer input budget".into()
            }
            FailureClass::Transport => "the request to the reviewer could not be sent".into(),
        }
    }
}

/// A verdict, or why there is none.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ReviewOutcome {
    Verdict(Verdict),
    Failure(FailureClass),
}

/// The outcome of one review and what it cost.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReviewResult {
    pub outcome: ReviewOutcome,
    pub stats: ReviewStats,
}

/// Why a [`Reviewer`] could not be built from its configuration. Messages
/// never contain the API key or the full base URL (which could embed one).
#[derive(Debug, thiserror::Error)]
pub enum ReviewerError {
    #[error(
        "no reviewer model is configured (`reviewer.provider = \"none\"`); set a provider, \
         `base_url` and `model` in the user configuration"
    )]
    NotConfigured,
    #[error("key `reviewer.base_url`: not a valid URL ({0})")]
    BaseUrl(String),
    #[error("key `reviewer.base_url`: scheme `{0}` is not supported; use http or https")]
    Scheme(String),
    #[error(
        "key `reviewer.base_url`: must not carry a user name, password, query or fragment; \
         put the API key in the variable named by `reviewer.api_key_env`"
    )]
    UrlCredentials,
    #[error(
        "key `reviewer.base_url`: refusing to send an API key over plain http to `{0}`; \
         use https, or a loopback address for a local server"
    )]
    KeyOverPlainHttp(String),
    #[error("the API key in `{0}` contains characters that cannot be sent in an HTTP header")]
    ApiKey(String),
    #[error("key `reviewer.model`: must not be empty")]
    EmptyModel,
    #[error("the verdict schema in prompts/verdict.schema.json is not valid JSON: {0}")]
    Schema(String),
    #[error("cannot serialize the model request body: {0}")]
    Body(String),
    #[error("cannot build the HTTP client: {0}")]
    Client(String),
}

/// Reads the API key from the variable named by `reviewer.api_key_env`
/// through `lookup` (`std::env::var` in production, a map in tests). An
/// empty name or an empty value means "no key": local servers need none.
pub fn api_key_from_env(
    cfg: &ReviewerConfig,
    lookup: &dyn Fn(&str) -> Option<String>,
) -> Option<String> {
    let name = cfg.api_key_env.trim();
    if name.is_empty() {
        return None;
    }
    lookup(name)
        .map(|k| k.trim().to_owned())
        .filter(|k| !k.is_empty())
}

/// The one HTTP client the service shares for reviewer calls: no redirects
/// (a redirect could carry the key elsewhere) and no client-internal retries
/// (every model call is counted and billed, so only [`Reviewer`] retries).
pub fn http_client() -> Result<Client, ReviewerError> {
    Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .retry(reqwest::retry::never())
        .user_agent(concat!("vouch/", env!("CARGO_PKG_VERSION")))
        .build()
        .map_err(|e| ReviewerError::Client(e.to_string()))
}

/// A configured reviewer; cheap to share behind an `Arc`.
#[derive(Clone)]
pub struct Reviewer {
    shape: RequestShape,
    endpoint: Url,
    /// Header name and sensitive value; `None` sends no credentials.
    auth: Option<(HeaderName, HeaderValue)>,
    timeout: Duration,
    max_calls: u32,
    max_retry_after: Duration,
    client: Client,
    /// The request body with empty messages (and the correction a retry
    /// adds), kept to estimate the wire overhead without rebuilding it.
    empty_body: String,
}

impl std::fmt::Debug for Reviewer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Reviewer")
            .field("provider", &wire::provider_name(self.shape.provider))
            .field("model", &self.shape.model)
            .field("has_api_key", &self.auth.is_some())
            .field("timeout", &self.timeout)
            .field("max_calls", &self.max_calls)
            .finish_non_exhaustive()
    }
}

/// One model call, read.
struct Attempt {
    http_status: Option<u16>,
    usage: Usage,
    result: Result<Verdict, FailureClass>,
    retry_after: RetryAfter,
}

impl Attempt {
    fn failed(http_status: Option<u16>, class: FailureClass) -> Attempt {
        Attempt {
            http_status,
            usage: Usage::default(),
            result: Err(class),
            retry_after: RetryAfter::Absent,
        }
    }
}

impl Reviewer {
    /// Builds a reviewer. `client` should come from [`http_client`] (shared,
    /// no redirects, no internal retries); `api_key` from
    /// [`api_key_from_env`].
    pub fn new(
        cfg: &ReviewerConfig,
        client: Client,
        api_key: Option<String>,
    ) -> Result<Reviewer, ReviewerError> {
        let wire = Wire::of(cfg.provider).ok_or(ReviewerError::NotConfigured)?;
        if cfg.model.trim().is_empty() {
            return Err(ReviewerError::EmptyModel);
        }
        let base =
            Url::parse(cfg.base_url.trim()).map_err(|e| ReviewerError::BaseUrl(e.to_string()))?;
        if !matches!(base.scheme(), "http" | "https") {
            return Err(ReviewerError::Scheme(base.scheme().to_owned()));
        }
        if !base.username().is_empty()
            || base.password().is_some()
            || base.query().is_some()
            || base.fragment().is_some()
        {
            return Err(ReviewerError::UrlCredentials);
        }
        let endpoint = format!(
            "{}{}",
            base.as_str().trim_end_matches('/'),
            wire::endpoint_path(wire)
        );
        let endpoint = Url::parse(&endpoint).map_err(|e| ReviewerError::BaseUrl(e.to_string()))?;

        let auth = match api_key.filter(|k| !k.is_empty()) {
            None => None,
            Some(key) => {
                if endpoint.scheme() == "http" && !is_loopback(&endpoint) {
                    let host = endpoint.host_str().unwrap_or_default().to_owned();
                    return Err(ReviewerError::KeyOverPlainHttp(host));
                }
                let (name, value) = match wire {
                    Wire::Openai | Wire::Ollama => (AUTHORIZATION, format!("Bearer {key}")),
                    Wire::Anthropic => (HeaderName::from_static("x-api-key"), key),
                };
                let mut value = HeaderValue::from_str(&value)
                    .map_err(|_| ReviewerError::ApiKey(cfg.api_key_env.clone()))?;
                // Keeps the value out of `Debug` output and HTTP/2 header
                // compression tables.
                value.set_sensitive(true);
                Some((name, value))
            }
        };
        let schema = serde_json::from_str(verdict::VERDICT_SCHEMA)
            .map_err(|e| ReviewerError::Schema(e.to_string()))?;
        let shape = RequestShape {
            provider: wire,
            model: cfg.model.clone(),
            max_output_tokens: cfg.max_output_tokens,
            schema,
        };
        let empty = ModelInput {
            system: "",
            user: "",
        };
        let empty_body = shape
            .body_bytes(&empty, true)
            .map_err(|e| ReviewerError::Body(e.to_string()))
            .and_then(|b| String::from_utf8(b).map_err(|e| ReviewerError::Body(e.to_string())))?;
        Ok(Reviewer {
            shape,
            empty_body,
            endpoint,
            auth,
            timeout: Duration::from_millis(cfg.timeout_ms),
            // `retries` is a budget, but never more than one retry.
            max_calls: if cfg.retries == 0 { 1 } else { 2 },
            max_retry_after: Duration::from_millis(cfg.max_retry_after_ms)
                .min(retry::RETRY_AFTER_CEILING),
            client,
        })
    }

    pub fn model(&self) -> &str {
        &self.shape.model
    }

    pub fn provider(&self) -> Provider {
        self.shape.provider.provider()
    }

    /// Tokens the wire format adds around the system and user text: the
    /// request body serialized with both empty (model name, schema or tool,
    /// JSON framing), including the format-correction message a retry may
    /// append, so a budget that holds for the first call holds for the
    /// second as well.
    pub fn wire_overhead_tokens(&self, count: &dyn Fn(&str) -> u64) -> u64 {
        count(&self.empty_body)
    }

    /// Runs one review under one deadline. Never panics, never returns an
    /// allow that the model did not give in a schema-valid verdict.
    pub async fn review(&self, input: ModelInput<'_>, packet_tokens_estimate: u64) -> ReviewResult {
        let started = Instant::now();
        let deadline = started + self.timeout;
        let mut stats = ReviewStats {
            model: self.shape.model.clone(),
            packet_tokens_estimate,
            ..ReviewStats::default()
        };
        let mut with_correction = false;
        let outcome = loop {
            let remaining = deadline.saturating_duration_since(Instant::now());
            if remaining.is_zero() {
                break ReviewOutcome::Failure(FailureClass::Timeout);
            }
            stats.calls += 1;
            let (result, next) = self
                .attempt(&input, with_correction, deadline, &mut stats)
                .await;
            match (result, next) {
                (Ok(verdict), _) => break ReviewOutcome::Verdict(verdict),
                (Err(class), None) => break ReviewOutcome::Failure(class),
                (Err(_), Some(Next::Stop(class))) => break ReviewOutcome::Failure(class),
                (Err(_), Some(Next::RetryNow)) => {}
                (Err(_), Some(Next::RetryWithCorrection)) => with_correction = true,
                (Err(_), Some(Next::WaitThenRetry(wait))) => tokio::time::sleep(wait).await,
            }
        };
        stats.duration_ms = millis(started.elapsed());
        self.report_complete(&outcome, &stats);
        ReviewResult { outcome, stats }
    }

    /// One model call within what is left of the deadline: its result, what
    /// the retry policy says next (`None` after a verdict), and its
    /// `review_attempt` event. Token usage is added to `stats`.
    async fn attempt(
        &self,
        input: &ModelInput<'_>,
        with_correction: bool,
        deadline: Instant,
        stats: &mut ReviewStats,
    ) -> (Result<Verdict, FailureClass>, Option<Next>) {
        let call_started = Instant::now();
        let remaining = deadline.saturating_duration_since(call_started);
        let attempt = match self.shape.body_bytes(input, with_correction) {
            Ok(body) => self.call(body, remaining).await,
            Err(e) => {
                tracing::error!(error = %e, "cannot serialize the model request; failing closed");
                Attempt::failed(None, FailureClass::Transport)
            }
        };
        stats.input_tokens = stats
            .input_tokens
            .saturating_add(attempt.usage.input_tokens);
        stats.output_tokens = stats
            .output_tokens
            .saturating_add(attempt.usage.output_tokens);
        let next = match &attempt.result {
            Ok(_) => None,
            Err(class) => Some(retry::next_step(
                *class,
                attempt.retry_after,
                self.max_calls.saturating_sub(stats.calls),
                deadline.saturating_duration_since(Instant::now()),
                self.max_retry_after,
            )),
        };
        telemetry::review_attempt(&telemetry::AttemptEvent {
            provider: wire::provider_name(self.shape.provider),
            model: &self.shape.model,
            attempt: stats.calls,
            http_status: attempt.http_status,
            class: match &attempt.result {
                Ok(_) => "ok",
                Err(class) => class.name(),
            },
            next: match next {
                None => "done",
                Some(Next::Stop(_)) => "stop",
                Some(Next::RetryNow) => "retry",
                Some(Next::RetryWithCorrection) => "retry_with_correction",
                Some(Next::WaitThenRetry(_)) => "wait_then_retry",
            },
            duration_ms: millis(call_started.elapsed()),
            input_tokens: attempt.usage.input_tokens,
            output_tokens: attempt.usage.output_tokens,
        });
        (attempt.result, next)
    }

    /// The `review_complete` event.
    fn report_complete(&self, outcome: &ReviewOutcome, stats: &ReviewStats) {
        let (outcome_name, failure_class, risk_level) = match outcome {
            ReviewOutcome::Verdict(v) => (v.outcome.as_str(), None, Some(v.risk_level.as_str())),
            ReviewOutcome::Failure(class) => ("failure", Some(class.name()), None),
        };
        telemetry::review_complete(&telemetry::CompleteEvent {
            provider: wire::provider_name(self.shape.provider),
            model: &self.shape.model,
            outcome: outcome_name,
            failure_class,
            risk_level,
            calls: stats.calls,
            duration_ms: stats.duration_ms,
            input_tokens: stats.input_tokens,
            output_tokens: stats.output_tokens,
            packet_tokens_estimate: stats.packet_tokens_estimate,
        });
    }

    /// One HTTP exchange, bounded by `remaining` both through reqwest's
    /// per-request timeout and an outer timer over sending and reading.
    async fn call(&self, body: Vec<u8>, remaining: Duration) -> Attempt {
        let mut request = self
            .client
            .post(self.endpoint.clone())
            .timeout(remaining)
            .header(CONTENT_TYPE, HeaderValue::from_static("application/json"))
            .body(body);
        if self.shape.provider == Wire::Anthropic {
            request = request.header("anthropic-version", wire::ANTHROPIC_VERSION);
        }
        if let Some((name, value)) = &self.auth {
            request = request.header(name.clone(), value.clone());
        }
        let exchange = async {
            let mut response = match request.send().await {
                Ok(r) => r,
                Err(e) => return Attempt::failed(None, transport_class(&e)),
            };
            let status = response.status();
            let code = Some(status.as_u16());
            if status.is_success() {
                return match read_bounded(&mut response, MAX_REPLY_BYTES).await {
                    Ok(bytes) => {
                        let reply = wire::read_reply(self.shape.provider, &bytes);
                        Attempt {
                            http_status: code,
                            usage: reply.usage,
                            result: reply.verdict,
                            retry_after: RetryAfter::Absent,
                        }
                    }
                    Err(class) => Attempt::failed(code, class),
                };
            }
            let retry_after = retry::parse_retry_after(response.headers(), SystemTime::now());
            // The body is read only to classify a 429, and is dropped here.
            let error_body = if status == reqwest::StatusCode::TOO_MANY_REQUESTS {
                read_bounded(&mut response, MAX_ERROR_BODY_BYTES).await.ok()
            } else {
                None
            };
            Attempt {
                http_status: code,
                usage: Usage::default(),
                result: Err(retry::classify_status(status, error_body.as_deref())),
                retry_after,
            }
        };
        tokio::time::timeout(remaining, exchange)
            .await
            .unwrap_or_else(|_| Attempt::failed(None, FailureClass::Timeout))
    }
}

/// Reads a body up to `limit` bytes; more is [`FailureClass::ResponseTooLarge`].
async fn read_bounded(response: &mut Response, limit: usize) -> Result<Vec<u8>, FailureClass> {
    if response.content_length().is_some_and(|n| n > limit as u64) {
        return Err(FailureClass::ResponseTooLarge);
    }
    let mut bytes = Vec::new();
    loop {
        match response.chunk().await {
            Ok(Some(chunk)) => {
                if bytes.len().saturating_add(chunk.len()) > limit {
                    return Err(FailureClass::ResponseTooLarge);
                }
                bytes.extend_from_slice(&chunk);
            }
            Ok(None) => return Ok(bytes),
            Err(e) => return Err(transport_class(&e)),
        }
    }
}

/// Classifies a reqwest error without ever formatting it: its text includes
/// the URL.
fn transport_class(e: &reqwest::Error) -> FailureClass {
    if e.is_timeout() {
        FailureClass::Timeout
    } else if e.is_connect() || e.is_request() || e.is_body() || e.is_decode() {
        FailureClass::Connect
    } else {
        FailureClass::Transport
    }
}

fn is_loopback(url: &Url) -> bool {
    let Some(host) = url.host_str() else {
        return false;
    };
    let bare = host.trim_start_matches('[').trim_end_matches(']');
    match bare.parse::<std::net::IpAddr>() {
        Ok(ip) => ip.is_loopback(),
        Err(_) => bare.eq_ignore_ascii_case("localhost"),
    }
}

fn millis(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Config;

    fn cfg(provider: Provider, base_url: &str) -> ReviewerConfig {
        let mut c = Config::defaults().unwrap().reviewer;
        c.provider = provider;
        c.base_url = base_url.into();
        c
    }

    fn client() -> Client {
        http_client().unwrap()
    }

    #[test]
    fn api_key_lookup() {
        let mut c = cfg(Provider::Openai, "http://127.0.0.1:1/v1");
        let lookup = |name: &str| (name == "K").then(|| " sk-1 ".to_owned());
        c.api_key_env = "K".into();
        assert_eq!(api_key_from_env(&c, &lookup).as_deref(), Some("sk-1"));
        c.api_key_env = "OTHER".into();
        assert_eq!(api_key_from_env(&c, &lookup), None);
        c.api_key_env = String::new();
        assert_eq!(api_key_from_env(&c, &lookup), None);
        let empty = |_: &str| Some("  ".to_owned());
        c.api_key_env = "K".into();
        assert_eq!(api_key_from_env(&c, &empty), None);
    }

    #[test]
    fn endpoints_per_provider() {
        let r = Reviewer::new(
            &cfg(Provider::Openai, "https://api.example/v1/"),
            client(),
            None,
        )
        .unwrap();
        assert_eq!(
            r.endpoint.as_str(),
            "https://api.example/v1/chat/completions"
        );
        let r = Reviewer::new(
            &cfg(Provider::Anthropic, "https://api.example/v1"),
            client(),
            None,
        )
        .unwrap();
        assert_eq!(r.endpoint.as_str(), "https://api.example/v1/messages");
    }

    #[test]
    fn keys_stay_off_plain_http_to_remote_hosts() {
        let key = || Some("sk-secret".to_owned());
        for ok in [
            "http://127.0.0.1:11434/v1",
            "http://localhost:8080",
            "http://[::1]:9/v1",
            "https://api.example/v1",
        ] {
            assert!(
                Reviewer::new(&cfg(Provider::Openai, ok), client(), key()).is_ok(),
                "{ok}"
            );
        }
        let err = Reviewer::new(
            &cfg(Provider::Openai, "http://models.lan/v1"),
            client(),
            key(),
        )
        .unwrap_err();
        assert!(matches!(err, ReviewerError::KeyOverPlainHttp(_)));
        assert!(!err.to_string().contains("sk-secret"));
        // Without a key, plain http anywhere is the user's call.
        assert!(
            Reviewer::new(
                &cfg(Provider::Ollama, "http://models.lan/v1"),
                client(),
                None
            )
            .is_ok()
        );
    }

    #[test]
    fn bad_urls_and_keys_are_named_without_echoing_secrets() {
        let c = |u: &str| Reviewer::new(&cfg(Provider::Openai, u), client(), None).unwrap_err();
        assert!(matches!(c("not a url"), ReviewerError::BaseUrl(_)));
        assert!(matches!(c("ftp://h/v1"), ReviewerError::Scheme(_)));
        let e = c("https://user:pw@h/v1");
        assert!(matches!(e, ReviewerError::UrlCredentials));
        assert!(!e.to_string().contains("pw"));
        assert!(matches!(
            c("https://h/v1?key=abc"),
            ReviewerError::UrlCredentials
        ));
        let e = Reviewer::new(
            &cfg(Provider::Openai, "https://h/v1"),
            client(),
            Some("sk-\nbad".into()),
        )
        .unwrap_err();
        assert!(matches!(e, ReviewerError::ApiKey(_)));
        assert!(!e.to_string().contains("sk-"));
    }

    #[test]
    fn debug_never_prints_the_key() {
        let r = Reviewer::new(
            &cfg(Provider::Anthropic, "https://h/v1"),
            client(),
            Some("sk-ant-secret".into()),
        )
        .unwrap();
        let shown = format!("{r:?}");
        assert!(!shown.contains("sk-ant-secret"));
        assert!(shown.contains("has_api_key: true"));
    }

    #[test]
    fn retries_are_capped_at_two_calls() {
        for (retries, calls) in [(0, 1), (1, 2), (2, 2), (100, 2)] {
            let mut c = cfg(Provider::Openai, "https://h/v1");
            c.retries = retries;
            assert_eq!(Reviewer::new(&c, client(), None).unwrap().max_calls, calls);
        }
        let mut c = cfg(Provider::Openai, "https://h/v1");
        c.max_retry_after_ms = 60_000;
        assert_eq!(
            Reviewer::new(&c, client(), None).unwrap().max_retry_after,
            retry::RETRY_AFTER_CEILING
        );
    }

    #[test]
    fn wire_overhead_counts_the_framing_and_correction() {
        for provider in [Provider::Openai, Provider::Anthropic, Provider::Ollama] {
            let r = Reviewer::new(&cfg(provider, "https://h/v1"), client(), None).unwrap();
            let bytes = |s: &str| s.len() as u64;
            let overhead = r.wire_overhead_tokens(&bytes);
            assert!(
                overhead > verdict::VERDICT_SCHEMA.len() as u64 / 2,
                "{provider:?}"
            );
            assert!(overhead > wire::FORMAT_CORRECTION.len() as u64);
        }
    }

    #[test]
    fn every_failure_has_a_name_and_phrase() {
        let all = [
            FailureClass::Timeout,
            FailureClass::Connect,
            FailureClass::Http5xx,
            FailureClass::RateLimited,
            FailureClass::RetryAfterTooLong,
            FailureClass::Quota,
            FailureClass::Auth,
            FailureClass::ClientError(404),
            FailureClass::UnexpectedStatus(302),
            FailureClass::EmptyOutput,
            FailureClass::InvalidJson,
            FailureClass::SchemaInvalid,
            FailureClass::Truncated,
            FailureClass::Refusal,
            FailureClass::MalformedResponse,
            FailureClass::ResponseTooLarge,
            FailureClass::PacketTooLarge,
            FailureClass::Transport,
        ];
        let names: std::collections::HashSet<_> = all.iter().map(|c| c.name()).collect();
        assert_eq!(names.len(), all.len());
        for c in all {
            assert!(
                c.name()
                    .bytes()
                    .all(|b| b.is_ascii_lowercase() || b == b'_' || b.is_ascii_digit())
            );
            assert!(!c.phrase().is_empty());
        }
        assert!(FailureClass::ClientError(404).phrase().contains("404"));
    }
}
