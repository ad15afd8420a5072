//! The one test model server: a real HTTP/1.1 server on loopback that speaks
//! the wire formats vouch's reviewer uses — OpenAI chat completions, Ollama's
//! OpenAI-compatible form of them, Anthropic messages — and that a test
//! scripts per request, down to faults no well-behaved server produces.
//!
//! Every test that needs a model uses it: the integration tests through
//! [`ModelServer`], everything else (Node clients, harness end-to-end suites,
//! the load and soak harness) through `examples/model_server.rs`, which
//! includes this file, so both forms are one source. `docs/testing.md` says
//! how to start either.
//!
//! # What a request gets
//!
//! Requests to paths that start with `/_` are control requests (below).
//! Every other request is recorded (method, path, headers, raw body), then
//! answered by the first of: the next [`Reply`] in the script's queue; the
//! first [`Rule`] whose `contains` text occurs in the raw request body; the
//! script's default. A [`Reply`] is either a model [`Answer`] — a verdict or
//! raw content text, which the server wraps in the envelope the request's
//! path asks for (`…/chat/completions`: OpenAI, or Ollama's flavour when the
//! body sends `max_tokens`; `…/messages`: Anthropic, the verdict as the input
//! of the forced tool) — or exact bytes, or one of the faults: an error
//! status with the provider's error body and any `Retry-After` form, garbage,
//! a truncated body (with a correct or a wrong `content-length`), a dropped
//! connection (before any byte, mid-headers, mid-body), a slow drip, or a
//! hang. Any reply may first wait `delay_ms`.
//!
//! # The script as JSON (`--script FILE`, `POST /_script`)
//!
//! ```json
//! {"default": REPLY, "rules": [{"contains": "text", "reply": REPLY}], "queue": [REPLY]}
//! ```
//!
//! Every key is optional; no `default` means "allow, risk low". REPLY is one
//! of (unknown keys, or a key that means nothing for the reply's kind, are
//! refused with the key's path):
//!
//! - an answer: `{"verdict": {...}}` (any JSON, sent verbatim, so invalid
//!   verdicts can be scripted too) or `{"text": "..."}` (the model's content
//!   verbatim), with optional `"stop": "done" | "max_tokens" | "refusal"` and
//!   `"usage": {"input_tokens": N, "output_tokens": N}`; `{}` is the default
//!   allow;
//! - exact bytes: `{"raw": "body text", "status": 200}`;
//! - `{"fault": "status", "status": 429, "error": "insufficient_quota"}`:
//!   the status with the provider's error body (`error` sets its type/code);
//! - `{"fault": "garbage"}`: 200 with a body that is not JSON;
//! - `{"fault": "truncate", "content_length": "correct" | "wrong"}`: half of
//!   the answer's body; `correct` declares the bytes sent (a well-framed but
//!   cut JSON body), `wrong` (the default) declares the whole body and then
//!   sends nothing more, leaving the connection open;
//! - `{"fault": "drop", "at": "before_any_byte" | "mid_headers" | "mid_body"}`;
//! - `{"fault": "slow_drip", "chunk_bytes": 1, "chunk_delay_ms": 50}`: the
//!   answer's body a few bytes at a time;
//! - `{"fault": "hang"}`: never answer (until the client goes away).
//!
//! Answer keys (`verdict`, `text`, `stop`, `usage`) also choose the body that
//! `truncate`, `slow_drip` and `drop` at `mid_body` cut or drip (default: the
//! allow). Any reply that sends a status line may add `"headers": {..}`,
//! `"retry_after": "2"` (seconds or an HTTP-date, sent verbatim),
//! `"retry_after_ms": "400"` and `"retry_after_date_in_s": 2` (an HTTP-date
//! that many seconds after the reply is sent); every reply takes `"delay_ms"`.
//!
//! # Control endpoints
//!
//! `POST /_script` replaces the script (body as above; 400 names the
//! problem); `GET /_requests` returns the recorded requests as a JSON array
//! of `{"method", "path", "headers", "body"}` (`body` is the raw text);
//! `DELETE /_requests` clears them. At most `max_recorded` requests are kept
//! (default 10 000, oldest evicted first); `GET /_requests` reports how many
//! were evicted in the `x-model-server-evicted` header, never silently.

#![allow(
    dead_code,
    reason = "shared by the integration tests and examples/model_server.rs; each uses a part"
)]

use std::collections::{BTreeMap, VecDeque};
use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant, SystemTime};

use axum::http::{HeaderMap, HeaderName, HeaderValue, StatusCode};
use serde::Deserialize;
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::task::{JoinHandle, JoinSet};

/// Largest request head read; more is refused with 431.
const MAX_HEAD_BYTES: usize = 64 << 10;
/// Largest request body read; more is refused with 413. vouch's own bodies
/// are bounded by `budget.max_reviewer_input_tokens` far below this.
const MAX_BODY_BYTES: usize = 32 << 20;
const MAX_HEADERS: usize = 100;
/// Requests kept for `requests()` / `GET /_requests` unless changed.
pub const DEFAULT_MAX_RECORDED: usize = 10_000;
/// Name of the forced Anthropic tool when the request does not say.
const DEFAULT_TOOL: &str = "submit_verdict";
const GARBAGE: &[u8] = b"<html><body><h1>502 Bad Gateway</h1>upstream sent \x00\xff</body></html>";
const REFUSAL_TEXT: &str = "I'm sorry, but I can't help with that.";

/// The verdict JSON a reviewer returns, for scripts.
pub fn verdict(outcome: &str, risk_level: &str) -> Value {
    json!({
        "outcome": outcome,
        "risk_level": risk_level,
        "user_authorization": "high",
        "rationale": format!("scripted {outcome} at {risk_level} risk"),
        "suggestion": null,
    })
}

// ------------------------------------------------------------------ replies

/// What the model said.
#[derive(Debug, Clone, PartialEq)]
pub enum Content {
    /// A verdict (any JSON, sent verbatim): the message content as JSON text,
    /// or the input of Anthropic's forced tool.
    Verdict(Value),
    /// The model's output text verbatim (an Anthropic text block).
    Text(String),
}

/// Why the model stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Stop {
    /// Finished normally (`stop`, `tool_use` / `end_turn`).
    #[default]
    Done,
    /// Cut off at the output cap (`length`, `max_tokens`).
    MaxTokens,
    /// Declined (OpenAI `refusal`, Anthropic `refusal`; Ollama has no
    /// refusal field, so it answers with refusal prose).
    Refusal,
}

/// A model answer, wrapped by the server in the request's wire format.
#[derive(Debug, Clone, PartialEq)]
pub struct Answer {
    pub content: Content,
    pub stop: Stop,
    pub input_tokens: u64,
    pub output_tokens: u64,
}

impl Default for Answer {
    /// Allow at low risk: what an unscripted server answers.
    fn default() -> Answer {
        Answer {
            content: Content::Verdict(verdict("allow", "low")),
            stop: Stop::Done,
            input_tokens: 100,
            output_tokens: 20,
        }
    }
}

/// What `content-length` a truncated body declares.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Declared {
    /// The bytes actually sent: the framing is right, the JSON is cut.
    Correct,
    /// The whole body; then nothing more is sent and the connection stays
    /// open, so only the client's deadline ends the wait.
    Wrong,
}

/// Where a dropped connection closes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DropAt {
    /// After reading the request, before a byte of reply.
    BeforeAnyByte,
    /// Partway through the status line and headers.
    MidHeaders,
    /// After the headers and half of the body (declared whole).
    MidBody,
}

/// What the server does with one model request.
#[derive(Debug, Clone, PartialEq)]
pub enum Action {
    /// A model answer in the request's wire format (404 on an unknown path).
    Answer(Answer),
    /// Exactly this status and body.
    Raw { status: u16, body: Vec<u8> },
    /// This status with the provider's error body; `error` sets its
    /// type/code (e.g. `insufficient_quota`).
    Status { status: u16, error: Option<String> },
    /// This status with a body that is not JSON.
    Garbage { status: u16 },
    /// Half of the answer's body.
    Truncate { answer: Answer, declared: Declared },
    /// Close the connection at `at`; `answer` is the body cut at `MidBody`.
    Drop { at: DropAt, answer: Answer },
    /// The answer's body `chunk_bytes` at a time, one chunk per `every`.
    SlowDrip {
        answer: Answer,
        chunk_bytes: usize,
        every: Duration,
    },
    /// Never answer; wait for the client to close.
    Hang,
}

/// One scripted reply. Also called a [`Step`] when it sits in the queue.
#[derive(Debug, Clone, PartialEq)]
pub struct Reply {
    pub action: Action,
    /// Waited before anything is sent.
    pub delay: Duration,
    /// Extra response headers (`Retry-After`, `retry-after-ms`, ...).
    pub headers: Vec<(String, String)>,
    /// Adds a `Retry-After` HTTP-date this long after the reply is sent.
    pub retry_after_date_in: Option<Duration>,
}

/// The name the queue API was first written with; the same type.
pub type Step = Reply;

impl Reply {
    pub fn new(action: Action) -> Reply {
        Reply {
            action,
            delay: Duration::ZERO,
            headers: Vec::new(),
            retry_after_date_in: None,
        }
    }

    /// A verdict, wrapped in the request's wire format.
    pub fn verdict(verdict: Value) -> Reply {
        Reply::answer(Answer {
            content: Content::Verdict(verdict),
            ..Answer::default()
        })
    }

    /// The model's content text verbatim.
    pub fn text(text: impl Into<String>) -> Reply {
        Reply::answer(Answer {
            content: Content::Text(text.into()),
            ..Answer::default()
        })
    }

    pub fn answer(answer: Answer) -> Reply {
        Reply::new(Action::Answer(answer))
    }

    /// Allow at low risk.
    pub fn allow() -> Reply {
        Reply::answer(Answer::default())
    }

    /// Exactly this status and JSON body, whatever the path.
    pub fn json(status: u16, body: Value) -> Reply {
        Reply::raw(status, body.to_string())
    }

    /// Exactly this status and body, whatever the path.
    pub fn raw(status: u16, body: impl Into<Vec<u8>>) -> Reply {
        Reply::new(Action::Raw {
            status,
            body: body.into(),
        })
    }

    /// An error status with the provider's error body.
    pub fn status(status: u16) -> Reply {
        Reply::new(Action::Status {
            status,
            error: None,
        })
    }

    /// An error status whose body names `error` (e.g. `insufficient_quota`).
    pub fn status_error(status: u16, error: &str) -> Reply {
        Reply::new(Action::Status {
            status,
            error: Some(error.to_owned()),
        })
    }

    pub fn garbage() -> Reply {
        Reply::new(Action::Garbage { status: 200 })
    }

    pub fn truncate(declared: Declared) -> Reply {
        Reply::new(Action::Truncate {
            answer: Answer::default(),
            declared,
        })
    }

    pub fn drop_at(at: DropAt) -> Reply {
        Reply::new(Action::Drop {
            at,
            answer: Answer::default(),
        })
    }

    pub fn slow_drip(chunk_bytes: usize, every: Duration) -> Reply {
        Reply::new(Action::SlowDrip {
            answer: Answer::default(),
            chunk_bytes,
            every,
        })
    }

    pub fn hang() -> Reply {
        Reply::new(Action::Hang)
    }

    /// What an exhausted queue answers in [`ModelServer::start`]: 418, which
    /// the reviewer reads as a client error (a fail-closed deny).
    pub fn exhausted() -> Reply {
        Reply::raw(418, "script exhausted").header("content-type", "text/plain")
    }

    pub fn header(mut self, name: &str, value: impl Into<String>) -> Reply {
        self.headers.push((name.to_owned(), value.into()));
        self
    }

    pub fn delayed(mut self, delay: Duration) -> Reply {
        self.delay = delay;
        self
    }

    pub fn retry_after_date_in(mut self, after: Duration) -> Reply {
        self.retry_after_date_in = Some(after);
        self
    }

    /// Replaces the answer this reply carries (its verdict, or the body a
    /// fault cuts or drips); no effect on a reply without one.
    pub fn with_answer(mut self, new: Answer) -> Reply {
        if let Some(answer) = self.answer_mut() {
            *answer = new;
        }
        self
    }

    /// Sets why the model stopped, on the answer this reply carries.
    pub fn stop(mut self, stop: Stop) -> Reply {
        if let Some(answer) = self.answer_mut() {
            answer.stop = stop;
        }
        self
    }

    fn answer_mut(&mut self) -> Option<&mut Answer> {
        match &mut self.action {
            Action::Answer(answer)
            | Action::Truncate { answer, .. }
            | Action::Drop { answer, .. }
            | Action::SlowDrip { answer, .. } => Some(answer),
            Action::Raw { .. } | Action::Status { .. } | Action::Garbage { .. } | Action::Hang => {
                None
            }
        }
    }

    /// The headers to send, with a `Retry-After` date computed now.
    fn headers_now(&self) -> Vec<(String, String)> {
        let mut headers = self.headers.clone();
        if let Some(after) = self.retry_after_date_in {
            let when = httpdate::fmt_http_date(SystemTime::now() + after);
            headers.push(("retry-after".to_owned(), when));
        }
        headers
    }
}

// ------------------------------------------------------------------ scripts

/// A content rule: answers a request whose raw body contains `contains`.
#[derive(Debug, Clone, PartialEq)]
pub struct Rule {
    pub contains: String,
    pub reply: Reply,
}

/// How the server answers: queue first, then rules, then the default.
#[derive(Debug, Clone, PartialEq)]
pub struct Script {
    pub queue: VecDeque<Reply>,
    pub rules: Vec<Rule>,
    pub default: Reply,
}

impl Default for Script {
    /// No queue, no rules, allow at low risk.
    fn default() -> Script {
        Script::always(Reply::allow())
    }
}

impl Script {
    /// Answers every request with `reply`.
    pub fn always(reply: Reply) -> Script {
        Script {
            queue: VecDeque::new(),
            rules: Vec::new(),
            default: reply,
        }
    }

    /// Answers the requests in order; after the last, [`Reply::exhausted`].
    pub fn queue(replies: Vec<Reply>) -> Script {
        Script {
            queue: replies.into(),
            ..Script::always(Reply::exhausted())
        }
    }

    /// Adds a content rule after the existing ones.
    pub fn rule(mut self, contains: &str, reply: Reply) -> Script {
        self.rules.push(Rule {
            contains: contains.to_owned(),
            reply,
        });
        self
    }

    /// Parses the JSON form (module docs); the error names the key's path.
    pub fn from_json(bytes: &[u8]) -> Result<Script, ScriptError> {
        let mut de = serde_json::Deserializer::from_slice(bytes);
        let parsed: ScriptJson = serde_path_to_error::deserialize(&mut de)
            .map_err(|e| ScriptError(format!("at `{}`: {}", e.path(), e.inner())))?;
        de.end()
            .map_err(|e| ScriptError(format!("after the script: {e}")))?;
        let at =
            |place: String| move |problem: String| ScriptError(format!("at `{place}`: {problem}"));
        let default = match parsed.default {
            Some(reply) => reply.into_reply().map_err(at("default".to_owned()))?,
            None => Reply::allow(),
        };
        let mut script = Script::always(default);
        for (i, rule) in parsed.rules.into_iter().enumerate() {
            if rule.contains.is_empty() {
                return Err(at(format!("rules[{i}].contains"))(
                    "must not be empty".into(),
                ));
            }
            let reply = rule
                .reply
                .into_reply()
                .map_err(at(format!("rules[{i}].reply")))?;
            script = script.rule(&rule.contains, reply);
        }
        for (i, reply) in parsed.queue.into_iter().enumerate() {
            let reply = reply.into_reply().map_err(at(format!("queue[{i}]")))?;
            script.queue.push_back(reply);
        }
        Ok(script)
    }

    /// The reply for one request body.
    fn next(&mut self, body: &str) -> Reply {
        if let Some(reply) = self.queue.pop_front() {
            return reply;
        }
        self.rules
            .iter()
            .find(|rule| body.contains(rule.contains.as_str()))
            .map_or_else(|| self.default.clone(), |rule| rule.reply.clone())
    }
}

/// A script that cannot be used; says where and why.
#[derive(Debug, thiserror::Error)]
#[error("invalid model server script {0}")]
pub struct ScriptError(String);

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ScriptJson {
    #[serde(default)]
    default: Option<ReplyJson>,
    #[serde(default)]
    rules: Vec<RuleJson>,
    #[serde(default)]
    queue: Vec<ReplyJson>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RuleJson {
    contains: String,
    reply: ReplyJson,
}

#[derive(Deserialize, Clone, Copy, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
enum FaultKind {
    Status,
    Garbage,
    Truncate,
    Drop,
    SlowDrip,
    Hang,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct UsageJson {
    input_tokens: u64,
    output_tokens: u64,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ReplyJson {
    verdict: Option<Value>,
    text: Option<String>,
    stop: Option<Stop>,
    usage: Option<UsageJson>,
    raw: Option<String>,
    fault: Option<FaultKind>,
    status: Option<u16>,
    error: Option<String>,
    headers: Option<BTreeMap<String, String>>,
    retry_after: Option<Value>,
    retry_after_ms: Option<Value>,
    retry_after_date_in_s: Option<u64>,
    content_length: Option<Declared>,
    at: Option<DropAt>,
    chunk_bytes: Option<usize>,
    chunk_delay_ms: Option<u64>,
    delay_ms: Option<u64>,
}

/// Keys that describe the answer a reply carries.
const ANSWER_KEYS: &[&str] = &["verdict", "text", "stop", "usage"];
/// Keys that only mean something when a status line is sent.
const HEADER_KEYS: &[&str] = &[
    "headers",
    "retry_after",
    "retry_after_ms",
    "retry_after_date_in_s",
];

impl ReplyJson {
    /// The keys present, other than `fault` and `delay_ms` (always allowed).
    fn present(&self) -> Vec<&'static str> {
        [
            ("verdict", self.verdict.is_some()),
            ("text", self.text.is_some()),
            ("stop", self.stop.is_some()),
            ("usage", self.usage.is_some()),
            ("raw", self.raw.is_some()),
            ("status", self.status.is_some()),
            ("error", self.error.is_some()),
            ("headers", self.headers.is_some()),
            ("retry_after", self.retry_after.is_some()),
            ("retry_after_ms", self.retry_after_ms.is_some()),
            (
                "retry_after_date_in_s",
                self.retry_after_date_in_s.is_some(),
            ),
            ("content_length", self.content_length.is_some()),
            ("at", self.at.is_some()),
            ("chunk_bytes", self.chunk_bytes.is_some()),
            ("chunk_delay_ms", self.chunk_delay_ms.is_some()),
        ]
        .into_iter()
        .filter_map(|(name, here)| here.then_some(name))
        .collect()
    }

    /// The keys this reply's kind gives a meaning to, and the kind's name.
    fn allowed(&self) -> (Vec<&'static str>, String) {
        let with_headers = |own: &[&'static str]| [own, HEADER_KEYS].concat();
        match (self.fault, self.raw.is_some()) {
            (None, false) => (with_headers(ANSWER_KEYS), "an answer".into()),
            (None, true) => (with_headers(&["raw", "status"]), "a `raw` reply".into()),
            (Some(FaultKind::Status), _) => {
                (with_headers(&["status", "error"]), "fault `status`".into())
            }
            (Some(FaultKind::Garbage), _) => (with_headers(&["status"]), "fault `garbage`".into()),
            (Some(FaultKind::Truncate), _) => (
                with_headers(&[ANSWER_KEYS, &["content_length"]].concat()),
                "fault `truncate`".into(),
            ),
            (Some(FaultKind::SlowDrip), _) => (
                with_headers(&[ANSWER_KEYS, &["chunk_bytes", "chunk_delay_ms"]].concat()),
                "fault `slow_drip`".into(),
            ),
            (Some(FaultKind::Drop), _) => match self.at.unwrap_or(DropAt::BeforeAnyByte) {
                DropAt::MidBody => (
                    with_headers(&[ANSWER_KEYS, &["at"]].concat()),
                    "fault `drop` at `mid_body`".into(),
                ),
                DropAt::BeforeAnyByte | DropAt::MidHeaders => (
                    vec!["at"],
                    "fault `drop` before the headers are sent".into(),
                ),
            },
            (Some(FaultKind::Hang), _) => (Vec::new(), "fault `hang`".into()),
        }
    }

    fn answer(&self) -> Result<Answer, String> {
        let base = Answer::default();
        let content = match (&self.verdict, &self.text) {
            (Some(_), Some(_)) => return Err("`verdict` and `text` exclude each other".into()),
            (Some(v), None) => Content::Verdict(v.clone()),
            (None, Some(t)) => Content::Text(t.clone()),
            (None, None) => base.content,
        };
        Ok(Answer {
            content,
            stop: self.stop.unwrap_or_default(),
            input_tokens: self
                .usage
                .as_ref()
                .map_or(base.input_tokens, |u| u.input_tokens),
            output_tokens: self
                .usage
                .as_ref()
                .map_or(base.output_tokens, |u| u.output_tokens),
        })
    }

    fn status_or(&self, default: u16) -> Result<u16, String> {
        match self.status.unwrap_or(default) {
            code @ 100..=599 => Ok(code),
            code => Err(format!(
                "`status` = `{code}` is not an HTTP status (100-599)"
            )),
        }
    }

    fn into_reply(self) -> Result<Reply, String> {
        let (allowed, kind) = self.allowed();
        if let Some(key) = self.present().into_iter().find(|k| !allowed.contains(k)) {
            return Err(format!("`{key}` has no meaning for {kind}"));
        }
        let action = match self.fault {
            None if self.raw.is_some() => Action::Raw {
                status: self.status_or(200)?,
                body: self.raw.clone().unwrap_or_default().into_bytes(),
            },
            None => Action::Answer(self.answer()?),
            Some(FaultKind::Status) => Action::Status {
                status: self.status_or(500)?,
                error: self.error.clone(),
            },
            Some(FaultKind::Garbage) => Action::Garbage {
                status: self.status_or(200)?,
            },
            Some(FaultKind::Truncate) => Action::Truncate {
                answer: self.answer()?,
                declared: self.content_length.unwrap_or(Declared::Wrong),
            },
            Some(FaultKind::Drop) => Action::Drop {
                at: self.at.unwrap_or(DropAt::BeforeAnyByte),
                answer: self.answer()?,
            },
            Some(FaultKind::SlowDrip) => Action::SlowDrip {
                answer: self.answer()?,
                chunk_bytes: match self.chunk_bytes.unwrap_or(1) {
                    0 => return Err("`chunk_bytes` must be at least 1".into()),
                    n => n,
                },
                every: Duration::from_millis(self.chunk_delay_ms.unwrap_or(50)),
            },
            Some(FaultKind::Hang) => Action::Hang,
        };
        let mut reply =
            Reply::new(action).delayed(Duration::from_millis(self.delay_ms.unwrap_or(0)));
        for (name, value) in self.headers.unwrap_or_default() {
            reply = reply.header(&name, value);
        }
        if let Some(v) = self.retry_after {
            reply = reply.header("retry-after", header_text("retry_after", v)?);
        }
        if let Some(v) = self.retry_after_ms {
            reply = reply.header("retry-after-ms", header_text("retry_after_ms", v)?);
        }
        if let Some(s) = self.retry_after_date_in_s {
            reply = reply.retry_after_date_in(Duration::from_secs(s));
        }
        for (name, value) in &reply.headers {
            if HeaderName::from_bytes(name.as_bytes()).is_err()
                || HeaderValue::from_str(value).is_err()
            {
                return Err(format!("header `{name}` cannot be sent in HTTP"));
            }
        }
        Ok(reply)
    }
}

/// A header value given as a string or a number, sent as text.
fn header_text(key: &str, value: Value) -> Result<String, String> {
    match value {
        Value::String(s) => Ok(s),
        Value::Number(n) => Ok(n.to_string()),
        other => Err(format!(
            "`{key}` must be a string or a number, not `{other}`"
        )),
    }
}

// ------------------------------------------------------------------ server

/// One request as the server saw it.
#[derive(Debug, Clone)]
pub struct Recorded {
    pub method: String,
    /// The request target without its query.
    pub path: String,
    pub headers: HeaderMap,
    /// The body as text (lossy for non-UTF-8 bytes).
    pub raw_body: String,
    /// The body as JSON, or `null` when it is not JSON.
    pub body: Value,
}

impl Recorded {
    fn to_json(&self) -> Value {
        let mut headers = serde_json::Map::new();
        for (name, value) in &self.headers {
            let text = String::from_utf8_lossy(value.as_bytes()).into_owned();
            match headers.get_mut(name.as_str()) {
                Some(Value::String(seen)) => {
                    seen.push_str(", ");
                    seen.push_str(&text);
                }
                _ => {
                    headers.insert(name.as_str().to_owned(), Value::String(text));
                }
            }
        }
        json!({"method": self.method, "path": self.path, "headers": headers, "body": self.raw_body})
    }
}

struct State {
    script: Script,
    recorded: VecDeque<Recorded>,
    max_recorded: usize,
    evicted: u64,
}

struct Shared {
    state: Mutex<State>,
    /// Model requests answered so far (for envelope ids).
    served: AtomicU64,
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, State> {
        // A panicking test thread must not take the server down with it.
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// A running model server; stops (with every open connection) when dropped.
pub struct ModelServer {
    addr: SocketAddr,
    shared: Arc<Shared>,
    task: JoinHandle<()>,
}

impl ModelServer {
    /// Answers requests with `queue` in order, then [`Reply::exhausted`].
    pub async fn start(queue: Vec<Reply>) -> ModelServer {
        ModelServer::with_script(Script::queue(queue)).await
    }

    /// Serves `script` on `127.0.0.1:0`.
    #[expect(
        clippy::expect_used,
        reason = "test helper: a test cannot run without its server"
    )]
    pub async fn with_script(script: Script) -> ModelServer {
        ModelServer::bind("127.0.0.1:0", script)
            .await
            .expect("bind the model server on 127.0.0.1:0")
    }

    /// Serves `script` on `addr`, which must be a loopback address.
    pub async fn bind(addr: &str, script: Script) -> std::io::Result<ModelServer> {
        let resolved: Vec<SocketAddr> = tokio::net::lookup_host(addr).await?.collect();
        if resolved.is_empty() || resolved.iter().any(|a| !a.ip().is_loopback()) {
            return Err(std::io::Error::other(format!(
                "`{addr}` is not a loopback address; the test model server serves loopback only"
            )));
        }
        let listener = TcpListener::bind(resolved.as_slice()).await?;
        let addr = listener.local_addr()?;
        let shared = Arc::new(Shared {
            state: Mutex::new(State {
                script,
                recorded: VecDeque::new(),
                max_recorded: DEFAULT_MAX_RECORDED,
                evicted: 0,
            }),
            served: AtomicU64::new(0),
        });
        let task = tokio::spawn(accept_loop(listener, Arc::clone(&shared)));
        Ok(ModelServer { addr, shared, task })
    }

    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// `http://127.0.0.1:PORT`, for the control endpoints.
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// Base URL as `reviewer.base_url` would hold it.
    pub fn base_url(&self) -> String {
        format!("http://{}/v1", self.addr)
    }

    /// The recorded model requests, oldest first.
    pub fn requests(&self) -> Vec<Recorded> {
        self.shared.lock().recorded.iter().cloned().collect()
    }

    pub fn clear_requests(&self) {
        self.shared.lock().recorded.clear();
    }

    /// Requests dropped from the record because of `max_recorded`.
    pub fn evicted(&self) -> u64 {
        self.shared.lock().evicted
    }

    pub fn set_max_recorded(&self, max: usize) {
        self.shared.lock().max_recorded = max;
    }

    /// Replaces the script (queue, rules and default).
    pub fn set_script(&self, script: Script) {
        self.shared.lock().script = script;
    }

    /// Appends to the queue.
    pub fn push(&self, reply: Reply) {
        self.shared.lock().script.queue.push_back(reply);
    }

    /// Queued replies not yet used.
    pub fn unused_steps(&self) -> usize {
        self.shared.lock().script.queue.len()
    }
}

impl Drop for ModelServer {
    fn drop(&mut self) {
        // Aborting the accept loop drops its JoinSet, which aborts every
        // connection task (hanging ones included).
        self.task.abort();
    }
}

async fn accept_loop(listener: TcpListener, shared: Arc<Shared>) {
    let mut connections = JoinSet::new();
    loop {
        tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok((stream, _)) => {
                    let _ = stream.set_nodelay(true);
                    connections.spawn(connection(stream, Arc::clone(&shared)));
                }
                // Out of descriptors or a reset during accept: try again
                // shortly rather than spin.
                Err(_) => tokio::time::sleep(Duration::from_millis(10)).await,
            },
            Some(_) = connections.join_next(), if !connections.is_empty() => {}
        }
    }
}

/// Whether the connection takes another request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Flow {
    KeepOpen,
    Close,
}

async fn connection(mut stream: TcpStream, shared: Arc<Shared>) {
    let mut buf = Vec::new();
    loop {
        let request = match read_request(&mut stream, &mut buf).await {
            Ok(Some(request)) => request,
            Ok(None) => return,
            Err(refusal) => {
                let body = json!({"error": refusal.message}).to_string();
                let _ = send(&mut stream, refusal.status, &[], body.as_bytes(), true).await;
                return;
            }
        };
        let flow = if request.path.starts_with("/_") {
            control(&mut stream, &shared, &request).await
        } else {
            model(&mut stream, &shared, request).await
        };
        if flow == Flow::Close {
            let _ = stream.shutdown().await;
            return;
        }
    }
}

// ------------------------------------------------------------------ reading

struct Incoming {
    method: String,
    path: String,
    headers: HeaderMap,
    body: Vec<u8>,
    /// The client asked to close after this exchange (or spoke HTTP/1.0).
    close: bool,
}

/// A request the server will not read: answered with `status` and closed.
struct Refusal {
    status: u16,
    message: String,
}

fn refuse(status: u16, message: &str) -> Refusal {
    Refusal {
        status,
        message: message.to_owned(),
    }
}

enum Framing {
    Length(usize),
    Chunked,
}

struct Head {
    method: String,
    path: String,
    headers: HeaderMap,
    framing: Framing,
    close: bool,
    expects_continue: bool,
}

/// Reads more bytes into `buf`; false at end of stream or on error.
async fn fill(stream: &mut TcpStream, buf: &mut Vec<u8>) -> bool {
    buf.reserve(16 << 10);
    matches!(stream.read_buf(buf).await, Ok(n) if n > 0)
}

/// Reads one request; `None` when the client closed the connection first.
async fn read_request(
    stream: &mut TcpStream,
    buf: &mut Vec<u8>,
) -> Result<Option<Incoming>, Refusal> {
    let head = loop {
        if let Some((head, used)) = parse_head(buf)? {
            buf.drain(..used);
            break head;
        }
        if buf.len() > MAX_HEAD_BYTES {
            return Err(refuse(431, "request head too large"));
        }
        if !fill(stream, buf).await {
            return Ok(None);
        }
    };
    if head.expects_continue
        && stream
            .write_all(b"HTTP/1.1 100 Continue\r\n\r\n")
            .await
            .is_err()
    {
        return Ok(None);
    }
    let body = match head.framing {
        Framing::Length(n) => {
            while buf.len() < n {
                if !fill(stream, buf).await {
                    return Ok(None);
                }
            }
            let rest = buf.split_off(n);
            std::mem::replace(buf, rest)
        }
        Framing::Chunked => loop {
            if let Some((body, used)) = decode_chunked(buf)? {
                buf.drain(..used);
                break body;
            }
            if !fill(stream, buf).await {
                return Ok(None);
            }
        },
    };
    Ok(Some(Incoming {
        method: head.method,
        path: head.path,
        headers: head.headers,
        body,
        close: head.close,
    }))
}

/// Parses a complete request head at the start of `buf`, with the bytes it
/// used; `None` while it is incomplete.
fn parse_head(buf: &[u8]) -> Result<Option<(Head, usize)>, Refusal> {
    let mut slots = [httparse::EMPTY_HEADER; MAX_HEADERS];
    let mut parsed = httparse::Request::new(&mut slots);
    let used = match parsed.parse(buf) {
        Ok(httparse::Status::Complete(used)) => used,
        Ok(httparse::Status::Partial) => return Ok(None),
        Err(httparse::Error::TooManyHeaders) => return Err(refuse(431, "too many headers")),
        Err(e) => return Err(refuse(400, &format!("malformed request head: {e}"))),
    };
    let mut headers = HeaderMap::new();
    for h in parsed.headers.iter() {
        if let (Ok(name), Ok(value)) = (
            HeaderName::from_bytes(h.name.as_bytes()),
            HeaderValue::from_bytes(h.value),
        ) {
            headers.append(name, value);
        }
    }
    let text = |name: &str| {
        headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .map(str::to_ascii_lowercase)
    };
    let chunked = text("transfer-encoding").is_some_and(|te| te.contains("chunked"));
    let framing = match (chunked, text("content-length")) {
        (true, _) => Framing::Chunked,
        (false, None) => Framing::Length(0),
        (false, Some(n)) => match n.trim().parse::<usize>() {
            Ok(n) if n <= MAX_BODY_BYTES => Framing::Length(n),
            Ok(_) => return Err(refuse(413, "request body too large")),
            Err(_) => return Err(refuse(400, "content-length is not a number")),
        },
    };
    let connection = text("connection").unwrap_or_default();
    let http10 = parsed.version == Some(0);
    let head = Head {
        method: parsed.method.unwrap_or_default().to_owned(),
        path: parsed
            .path
            .unwrap_or_default()
            .split('?')
            .next()
            .unwrap_or_default()
            .to_owned(),
        close: connection.contains("close") || (http10 && !connection.contains("keep-alive")),
        expects_continue: text("expect").is_some_and(|e| e == "100-continue"),
        headers,
        framing,
    };
    Ok(Some((head, used)))
}

/// Decodes a complete chunked body at the start of `data`, with the bytes it
/// used; `None` while it is incomplete.
fn decode_chunked(data: &[u8]) -> Result<Option<(Vec<u8>, usize)>, Refusal> {
    let mut body = Vec::new();
    let mut pos = 0usize;
    loop {
        let rest = data.get(pos..).unwrap_or_default();
        let (used, size) = match httparse::parse_chunk_size(rest) {
            Ok(httparse::Status::Complete(found)) => found,
            Ok(httparse::Status::Partial) => return Ok(None),
            Err(_) => return Err(refuse(400, "malformed chunk size")),
        };
        pos += used;
        let size = usize::try_from(size).unwrap_or(usize::MAX);
        if size == 0 {
            // No trailers: one CRLF; trailers: they end with an empty line.
            let rest = data.get(pos..).unwrap_or_default();
            if rest.starts_with(b"\r\n") {
                return Ok(Some((body, pos + 2)));
            }
            return Ok(find(rest, b"\r\n\r\n").map(|at| (body, pos + at + 4)));
        }
        if body.len().saturating_add(size) > MAX_BODY_BYTES {
            return Err(refuse(413, "request body too large"));
        }
        let Some(chunk) = data.get(pos..pos + size) else {
            return Ok(None);
        };
        match data.get(pos + size..pos + size + 2) {
            None => return Ok(None),
            Some(b"\r\n") => {}
            Some(_) => return Err(refuse(400, "chunk not followed by CRLF")),
        }
        body.extend_from_slice(chunk);
        pos += size + 2;
    }
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

// ------------------------------------------------------------------ writing

/// The status line and headers of a response.
fn head(status: u16, headers: &[(String, String)], content_length: usize, close: bool) -> Vec<u8> {
    let reason = StatusCode::from_u16(status)
        .ok()
        .and_then(|s| s.canonical_reason())
        .unwrap_or("Unknown");
    let mut out = format!("HTTP/1.1 {status} {reason}\r\n");
    if !headers
        .iter()
        .any(|(n, _)| n.eq_ignore_ascii_case("content-type"))
    {
        out.push_str("content-type: application/json\r\n");
    }
    for (name, value) in headers {
        out.push_str(&format!("{name}: {value}\r\n"));
    }
    out.push_str(&format!(
        "content-length: {content_length}\r\ndate: {}\r\n",
        httpdate::fmt_http_date(SystemTime::now())
    ));
    if close {
        out.push_str("connection: close\r\n");
    }
    out.push_str("\r\n");
    out.into_bytes()
}

/// One whole response.
async fn send(
    stream: &mut TcpStream,
    status: u16,
    headers: &[(String, String)],
    body: &[u8],
    close: bool,
) -> Flow {
    let mut bytes = head(status, headers, body.len(), close);
    bytes.extend_from_slice(body);
    match (stream.write_all(&bytes).await, close) {
        (Ok(()), false) => Flow::KeepOpen,
        (Ok(()), true) | (Err(_), _) => Flow::Close,
    }
}

/// Reads and discards until the client closes: a hang that ends when the
/// client gives up, so no connection outlives its client.
async fn hang(stream: &mut TcpStream) -> Flow {
    let mut sink = [0u8; 4096];
    while matches!(stream.read(&mut sink).await, Ok(n) if n > 0) {}
    Flow::Close
}

async fn control(stream: &mut TcpStream, shared: &Shared, request: &Incoming) -> Flow {
    let mut headers = Vec::new();
    let (status, body) = match (request.method.as_str(), request.path.as_str()) {
        ("POST", "/_script") => match Script::from_json(&request.body) {
            Ok(script) => {
                shared.lock().script = script;
                (200, json!({"ok": true}))
            }
            Err(e) => (400, json!({"error": e.to_string()})),
        },
        ("GET", "/_requests") => {
            let state = shared.lock();
            headers.push((
                "x-model-server-evicted".to_owned(),
                state.evicted.to_string(),
            ));
            (200, state.recorded.iter().map(Recorded::to_json).collect())
        }
        ("DELETE", "/_requests") => {
            let mut state = shared.lock();
            let cleared = state.recorded.len();
            state.recorded.clear();
            (200, json!({"cleared": cleared}))
        }
        (method, path @ ("/_script" | "/_requests")) => (
            405,
            json!({"error": format!("method `{method}` is not allowed on `{path}`")}),
        ),
        (_, path) => (
            404,
            json!({"error": format!("no control endpoint `{path}`; there are POST /_script and GET, DELETE /_requests")}),
        ),
    };
    send(
        stream,
        status,
        &headers,
        body.to_string().as_bytes(),
        request.close,
    )
    .await
}

async fn model(stream: &mut TcpStream, shared: &Shared, request: Incoming) -> Flow {
    let raw_body = String::from_utf8_lossy(&request.body).into_owned();
    let body: Value = serde_json::from_slice(&request.body).unwrap_or(Value::Null);
    let reply = {
        let mut state = shared.lock();
        let reply = state.script.next(&raw_body);
        if state.recorded.len() >= state.max_recorded {
            state.recorded.pop_front();
            state.evicted += 1;
        }
        if state.max_recorded > 0 {
            state.recorded.push_back(Recorded {
                method: request.method,
                path: request.path.clone(),
                headers: request.headers,
                raw_body,
                body: body.clone(),
            });
        }
        reply
    };
    if !reply.delay.is_zero() {
        sleep_precisely(reply.delay).await;
    }
    let n = shared.served.fetch_add(1, Ordering::Relaxed);
    let exchange = Exchange {
        format: Format::of(&request.path, &body),
        request: &body,
        n,
        headers: reply.headers_now(),
        close: request.close,
    };
    perform(stream, &exchange, reply.action).await
}

/// One model request being answered.
struct Exchange<'a> {
    format: Format,
    request: &'a Value,
    /// Sequence number, for envelope ids.
    n: u64,
    headers: Vec<(String, String)>,
    close: bool,
}

async fn perform(stream: &mut TcpStream, x: &Exchange<'_>, action: Action) -> Flow {
    let headers = x.headers.as_slice();
    match action {
        Action::Answer(answer) => match x.format.envelope(&answer, x.request, x.n) {
            Some(body) => send(stream, 200, headers, &body, x.close).await,
            None => send(stream, 404, headers, &x.format.error(404, None), x.close).await,
        },
        Action::Raw { status, body } => send(stream, status, headers, &body, x.close).await,
        Action::Status { status, error } => {
            send(
                stream,
                status,
                headers,
                &x.format.error(status, error.as_deref()),
                x.close,
            )
            .await
        }
        Action::Garbage { status } => send(stream, status, headers, GARBAGE, x.close).await,
        Action::Truncate { answer, declared } => {
            let body = x.format.envelope_any(&answer, x.request, x.n);
            let cut = body.get(..body.len() / 2).unwrap_or_default();
            match declared {
                Declared::Correct => send(stream, 200, headers, cut, x.close).await,
                Declared::Wrong => {
                    let mut bytes = head(200, headers, body.len(), x.close);
                    bytes.extend_from_slice(cut);
                    if stream.write_all(&bytes).await.is_err() {
                        return Flow::Close;
                    }
                    hang(stream).await
                }
            }
        }
        Action::Drop { at, answer } => {
            let bytes = match at {
                DropAt::BeforeAnyByte => Vec::new(),
                DropAt::MidHeaders => b"HTTP/1.1 200 OK\r\ncontent-type: appl".to_vec(),
                DropAt::MidBody => {
                    let body = x.format.envelope_any(&answer, x.request, x.n);
                    let mut bytes = head(200, headers, body.len(), false);
                    bytes.extend_from_slice(body.get(..body.len() / 2).unwrap_or_default());
                    bytes
                }
            };
            let _ = stream.write_all(&bytes).await;
            Flow::Close
        }
        Action::SlowDrip {
            answer,
            chunk_bytes,
            every,
        } => {
            let body = x.format.envelope_any(&answer, x.request, x.n);
            if stream
                .write_all(&head(200, headers, body.len(), x.close))
                .await
                .is_err()
            {
                return Flow::Close;
            }
            for chunk in body.chunks(chunk_bytes.max(1)) {
                tokio::time::sleep(every).await;
                if stream.write_all(chunk).await.is_err() {
                    return Flow::Close;
                }
            }
            if x.close { Flow::Close } else { Flow::KeepOpen }
        }
        Action::Hang => hang(stream).await,
    }
}

// ---------------------------------------------------------------- envelopes

/// The wire format a model request asks for, from its path and body.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Format {
    OpenAi,
    /// Ollama's OpenAI-compatible endpoint; vouch sends it `max_tokens`.
    Ollama,
    Anthropic,
    Unknown,
}

impl Format {
    fn of(path: &str, body: &Value) -> Format {
        if path.ends_with("/messages") {
            Format::Anthropic
        } else if path.ends_with("/chat/completions") {
            if body.get("max_tokens").is_some() && body.get("max_completion_tokens").is_none() {
                Format::Ollama
            } else {
                Format::OpenAi
            }
        } else {
            Format::Unknown
        }
    }

    /// The 200 body of `answer`; `None` on a path no provider serves.
    fn envelope(self, answer: &Answer, request: &Value, n: u64) -> Option<Vec<u8>> {
        let model = request.get("model").cloned().unwrap_or(Value::Null);
        let created = SystemTime::now()
            .duration_since(SystemTime::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs());
        let body = match self {
            Format::OpenAi => openai(answer, &model, n, created),
            Format::Ollama => ollama(answer, &model, n, created),
            Format::Anthropic => anthropic(answer, request, &model, n),
            Format::Unknown => return None,
        };
        Some(body.to_string().into_bytes())
    }

    /// As [`Format::envelope`], falling back to OpenAI's on an unknown path
    /// (a fault still needs a body to cut).
    fn envelope_any(self, answer: &Answer, request: &Value, n: u64) -> Vec<u8> {
        let known = if self == Format::Unknown {
            Format::OpenAi
        } else {
            self
        };
        known.envelope(answer, request, n).unwrap_or_default()
    }

    /// The provider's error body for `status`.
    fn error(self, status: u16, error: Option<&str>) -> Vec<u8> {
        let message = format!("scripted fault: HTTP {status}");
        let body = match self {
            Format::Anthropic => {
                let kind = error.unwrap_or(match status {
                    400 => "invalid_request_error",
                    401 => "authentication_error",
                    403 => "permission_error",
                    404 => "not_found_error",
                    413 => "request_too_large",
                    429 => "rate_limit_error",
                    529 => "overloaded_error",
                    _ => "api_error",
                });
                json!({"type": "error", "error": {"type": kind, "message": message}})
            }
            Format::OpenAi | Format::Ollama | Format::Unknown => {
                let (kind, code) = match (error, status) {
                    (Some(e), _) => (e, e),
                    (None, 401) => ("invalid_request_error", "invalid_api_key"),
                    (None, 404) => ("invalid_request_error", "model_not_found"),
                    (None, 429) => ("requests", "rate_limit_exceeded"),
                    (None, 400..=499) => ("invalid_request_error", "invalid_request"),
                    (None, _) => ("server_error", "server_error"),
                };
                json!({"error": {"message": message, "type": kind, "param": null, "code": code}})
            }
        };
        body.to_string().into_bytes()
    }
}

fn content_text(content: &Content) -> String {
    match content {
        Content::Verdict(v) => v.to_string(),
        Content::Text(t) => t.clone(),
    }
}

fn openai(answer: &Answer, model: &Value, n: u64, created: u64) -> Value {
    let (content, refusal, finish) = match answer.stop {
        Stop::Done => (
            Value::String(content_text(&answer.content)),
            Value::Null,
            "stop",
        ),
        Stop::MaxTokens => (
            Value::String(content_text(&answer.content)),
            Value::Null,
            "length",
        ),
        Stop::Refusal => (Value::Null, Value::String(REFUSAL_TEXT.into()), "stop"),
    };
    let (i, o) = (answer.input_tokens, answer.output_tokens);
    json!({
        "id": format!("chatcmpl-test{n}"),
        "object": "chat.completion",
        "created": created,
        "model": model,
        "choices": [{
            "index": 0,
            "message": {"role": "assistant", "content": content, "refusal": refusal, "annotations": []},
            "logprobs": null,
            "finish_reason": finish,
        }],
        "usage": {
            "prompt_tokens": i,
            "completion_tokens": o,
            "total_tokens": i + o,
            "prompt_tokens_details": {"cached_tokens": 0, "audio_tokens": 0},
            "completion_tokens_details": {"reasoning_tokens": 0, "audio_tokens": 0,
                "accepted_prediction_tokens": 0, "rejected_prediction_tokens": 0},
        },
        "service_tier": "default",
        "system_fingerprint": "fp_vouch_test",
    })
}

fn ollama(answer: &Answer, model: &Value, n: u64, created: u64) -> Value {
    let (content, finish) = match answer.stop {
        Stop::Done => (content_text(&answer.content), "stop"),
        Stop::MaxTokens => (content_text(&answer.content), "length"),
        Stop::Refusal => (REFUSAL_TEXT.to_owned(), "stop"),
    };
    let (i, o) = (answer.input_tokens, answer.output_tokens);
    json!({
        "id": format!("chatcmpl-{n}"),
        "object": "chat.completion",
        "created": created,
        "model": model,
        "system_fingerprint": "fp_ollama",
        "choices": [{
            "index": 0,
            "message": {"role": "assistant", "content": content},
            "finish_reason": finish,
        }],
        "usage": {"prompt_tokens": i, "completion_tokens": o, "total_tokens": i + o},
    })
}

fn anthropic(answer: &Answer, request: &Value, model: &Value, n: u64) -> Value {
    let tool = request
        .pointer("/tool_choice/name")
        .or_else(|| request.pointer("/tools/0/name"))
        .and_then(Value::as_str)
        .unwrap_or(DEFAULT_TOOL);
    let (block, natural) = match &answer.content {
        Content::Verdict(v) => (
            json!({"type": "tool_use", "id": format!("toolu_test{n}"), "name": tool, "input": v}),
            "tool_use",
        ),
        Content::Text(t) => (json!({"type": "text", "text": t}), "end_turn"),
    };
    let (content, stop) = match answer.stop {
        Stop::Done => (json!([block]), natural),
        Stop::MaxTokens => (json!([block]), "max_tokens"),
        Stop::Refusal => (json!([]), "refusal"),
    };
    json!({
        "id": format!("msg_test{n}"),
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": content,
        "stop_reason": stop,
        "stop_sequence": null,
        "usage": {
            "input_tokens": answer.input_tokens,
            "cache_creation_input_tokens": 0,
            "cache_read_input_tokens": 0,
            "output_tokens": answer.output_tokens,
            "service_tier": "standard",
        },
    })
}

// ------------------------------------------------------------------ timing

/// Waits `delay`: never less, and not, as tokio's timer does, up to a tick
/// or two more (its wheel counts whole milliseconds and rounds a deadline
/// up, and the driver parks in `epoll_wait`, whose timeout is whole
/// milliseconds too: a 50 ms sleep ends 50.5–52 ms later). A fixed-delay
/// model is the yardstick of the load harness's ratio (b), so its own
/// lateness would be counted as vouch's. One thread ([`PRECISE_TIMER`])
/// keeps the deadlines and sleeps to the nearest with the kernel's
/// high-resolution timer; if it cannot be had, tokio's timer serves (late,
/// never early).
async fn sleep_precisely(delay: Duration) {
    let deadline = Instant::now() + delay;
    let (fired, wait) = tokio::sync::oneshot::channel();
    let queued = precise_timer().is_some_and(|timer| {
        timer
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .send(Timer { deadline, fired })
            .is_ok()
    });
    if !queued || wait.await.is_err() || Instant::now() < deadline {
        tokio::time::sleep_until(deadline.into()).await;
    }
}

/// One pending [`sleep_precisely`], ordered by deadline (earliest first
/// out of the max-heap).
struct Timer {
    deadline: Instant,
    fired: tokio::sync::oneshot::Sender<()>,
}

impl PartialEq for Timer {
    fn eq(&self, other: &Timer) -> bool {
        self.deadline == other.deadline
    }
}

impl Eq for Timer {}

impl PartialOrd for Timer {
    fn partial_cmp(&self, other: &Timer) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Timer {
    fn cmp(&self, other: &Timer) -> std::cmp::Ordering {
        other.deadline.cmp(&self.deadline)
    }
}

type TimerQueue = Mutex<std::sync::mpsc::Sender<Timer>>;

/// The process's one timer thread, started on first use; `None` when the
/// thread cannot be spawned.
static PRECISE_TIMER: std::sync::OnceLock<Option<TimerQueue>> = std::sync::OnceLock::new();

fn precise_timer() -> Option<&'static TimerQueue> {
    PRECISE_TIMER
        .get_or_init(|| {
            let (queue, incoming) = std::sync::mpsc::channel();
            std::thread::Builder::new()
                .name("model-server-timer".to_owned())
                .spawn(move || run_timers(&incoming))
                .ok()
                .map(|_| Mutex::new(queue))
        })
        .as_ref()
}

fn run_timers(incoming: &std::sync::mpsc::Receiver<Timer>) {
    use std::sync::mpsc::RecvTimeoutError;
    let mut pending = std::collections::BinaryHeap::<Timer>::new();
    loop {
        let next = match pending.peek() {
            None => incoming.recv().map_err(|_| RecvTimeoutError::Disconnected),
            Some(t) => incoming.recv_timeout(t.deadline.saturating_duration_since(Instant::now())),
        };
        match next {
            Ok(timer) => pending.push(timer),
            Err(RecvTimeoutError::Timeout) => {}
            Err(RecvTimeoutError::Disconnected) => return,
        }
        let now = Instant::now();
        while pending.peek().is_some_and(|t| t.deadline <= now) {
            if let Some(t) = pending.pop() {
                // The waiter may be gone (its connection closed): nothing to do.
                let _ = t.fired.send(());
            }
        }
    }
}
