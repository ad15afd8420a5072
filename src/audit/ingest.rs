//! Events from outside vouch's own pipeline, for `vouch audit ingest` (JSON
//! lines on stdin) and `POST /v1/audit/events` (a JSON array).
//!
//! Two shapes are accepted, told apart by `kind`:
//!
//! - a pi-permission-system `permissions:decision` event (`kind` absent or
//!   `"decision"`): `{requestId?, surface, value?, result, resolution,
//!   origin?, agentName?, matchedPattern?, forwarding?}`, plus what the
//!   forwarding client knows and the event lacks: `cwd`, `home`, `source`
//!   (default `"pi"`) and `timestamp_ms`. pi adds fields over time, so
//!   unknown fields are ignored rather than refused.
//! - an after-the-fact report that a call ran (`"kind": "ran"`):
//!   `{kind, source, request: <canonical request>, timestamp_ms?}`, for a
//!   harness adapter that reports through the service. If vouch had
//!   deferred that exact request in that session, it counts as a human
//!   approval.
//!
//! Ingest is idempotent: an event's `requestId` (a `ran` event's
//! `tool_call_id` or `id`), or where there is none a digest of the whole
//! event, is remembered as an HMAC, and the same event twice counts once.
//! Error messages name the field and the problem and never quote a value
//! that could hold a secret.

use std::path::PathBuf;

use serde_json::{Map, Value};

use super::record::{self, ResultKind};
use super::{EventId, Observation, ProjectAudit, What};
use crate::evidence::redact;
use crate::request::{MAX_COMMAND_BYTES, MAX_PATH_BYTES, Request, Surface, canonical_json};

/// Largest accepted event (one JSON line or array element), in bytes.
pub const MAX_EVENT_BYTES: usize = 256 * 1024;
/// How far in the future a `timestamp_ms` may lie (clock skew), in ms.
const MAX_CLOCK_SKEW_MS: u64 = 86_400_000;

/// Why one event was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EventError {
    #[error("not valid JSON ({0})")]
    Json(String),
    #[error("the event is {size} bytes, larger than the limit of {limit} bytes")]
    TooLarge { size: usize, limit: usize },
    #[error("an event must be a JSON object")]
    NotObject,
    #[error("field `{0}` is required")]
    Missing(&'static str),
    #[error("field `{field}` must be {expected}")]
    Type {
        field: &'static str,
        expected: &'static str,
    },
    #[error("field `{field}` is {size} bytes, larger than the limit of {limit} bytes")]
    FieldTooLarge {
        field: &'static str,
        size: usize,
        limit: usize,
    },
    #[error("field `{field}` must be an absolute path")]
    NotAbsolute { field: &'static str },
    #[error("field `result` must be `allow` or `deny`")]
    BadResult,
    #[error("field `kind` must be `decision` or `ran`")]
    BadKind,
    #[error("field `timestamp_ms` lies more than a day in the future")]
    Future,
    #[error("field `request` is not a valid canonical request: {0}")]
    Request(String),
}

/// What one ingest call did.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct IngestSummary {
    /// Events read.
    pub events: u64,
    /// Added to the aggregates.
    pub counted: u64,
    /// Counted before (same id or digest).
    pub duplicates: u64,
    /// Older than the retention window: not stored.
    pub expired: u64,
    /// `ran` events with no decision of vouch's awaiting them.
    pub unmatched: u64,
    /// Events of projects that turned auditing off.
    pub not_audited: u64,
    /// Events refused, with why (by 0-based index, or line number for the
    /// CLI).
    pub rejected: Vec<Rejected>,
}

impl IngestSummary {
    /// Adds another call's counts to this one.
    pub fn add(&mut self, other: IngestSummary) {
        self.events += other.events;
        self.counted += other.counted;
        self.duplicates += other.duplicates;
        self.expired += other.expired;
        self.unmatched += other.unmatched;
        self.not_audited += other.not_audited;
        self.rejected.extend(other.rejected);
    }
}

/// One refused event.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Rejected {
    pub index: usize,
    pub error: String,
}

/// Finds the project root and audit settings for an event's `cwd`.
pub type ProjectLookup<'a> = &'a dyn Fn(Option<&str>) -> (Option<PathBuf>, ProjectAudit);

/// What the caller knows that an event's fields do not say.
pub struct Context<'a> {
    /// Now, in ms since the epoch.
    pub now_ms: u64,
    pub project: ProjectLookup<'a>,
}

/// Parses one event from raw JSON.
pub fn parse_line(line: &str, ctx: &Context<'_>) -> Result<Observation, EventError> {
    if line.len() > MAX_EVENT_BYTES {
        return Err(EventError::TooLarge {
            size: line.len(),
            limit: MAX_EVENT_BYTES,
        });
    }
    let value: Value = serde_json::from_str(line).map_err(|e| {
        // Position only: serde's message can quote the offending text.
        EventError::Json(format!("line {}, column {}", e.line(), e.column()))
    })?;
    parse_value(&value, ctx)
}

/// Parses one event already read as JSON.
pub fn parse_value(value: &Value, ctx: &Context<'_>) -> Result<Observation, EventError> {
    let event = value.as_object().ok_or(EventError::NotObject)?;
    match opt_str(event, "kind", 16)? {
        None | Some("decision") => decision_event(event, ctx),
        Some("ran") => ran_event(event, ctx),
        Some(_) => Err(EventError::BadKind),
    }
}

fn opt_str<'a>(
    event: &'a Map<String, Value>,
    field: &'static str,
    limit: usize,
) -> Result<Option<&'a str>, EventError> {
    match event.get(field) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) if s.len() > limit => Err(EventError::FieldTooLarge {
            field,
            size: s.len(),
            limit,
        }),
        Some(Value::String(s)) => Ok(Some(s.as_str())),
        Some(_) => Err(EventError::Type {
            field,
            expected: "a string",
        }),
    }
}

fn req_str<'a>(
    event: &'a Map<String, Value>,
    field: &'static str,
    limit: usize,
) -> Result<&'a str, EventError> {
    opt_str(event, field, limit)?.ok_or(EventError::Missing(field))
}

fn opt_path<'a>(
    event: &'a Map<String, Value>,
    field: &'static str,
) -> Result<Option<&'a str>, EventError> {
    match opt_str(event, field, MAX_PATH_BYTES)? {
        Some(p) if !p.starts_with('/') => Err(EventError::NotAbsolute { field }),
        other => Ok(other),
    }
}

fn timestamp(event: &Map<String, Value>, now_ms: u64) -> Result<u64, EventError> {
    match event.get("timestamp_ms") {
        None | Some(Value::Null) => Ok(now_ms),
        Some(v) => {
            let ms = v.as_u64().ok_or(EventError::Type {
                field: "timestamp_ms",
                expected: "milliseconds since the Unix epoch (a non-negative integer)",
            })?;
            if ms > now_ms.saturating_add(MAX_CLOCK_SKEW_MS) {
                return Err(EventError::Future);
            }
            Ok(ms)
        }
    }
}

/// Surfaces whose pi `value` is a path (the built-in path tools included).
fn pi_value_is_path(surface: &str) -> bool {
    matches!(
        surface,
        "read"
            | "write"
            | "edit"
            | "path"
            | "external_directory"
            | "delete"
            | "grep"
            | "find"
            | "ls"
    )
}

/// Surfaces whose pi `value` is a name (an MCP target, a skill).
fn pi_value_is_name(surface: &str) -> bool {
    matches!(surface, "mcp" | "skill")
}

fn decision_event(
    event: &Map<String, Value>,
    ctx: &Context<'_>,
) -> Result<Observation, EventError> {
    let surface_name = req_str(event, "surface", 256)?;
    let value = opt_str(event, "value", MAX_COMMAND_BYTES)?;
    let result = match req_str(event, "result", 16)? {
        "allow" => ResultKind::Allow,
        "deny" => ResultKind::Deny,
        _ => return Err(EventError::BadResult),
    };
    let resolution = record::resolution(req_str(event, "resolution", 64)?);
    let origin = opt_str(event, "origin", MAX_PATH_BYTES)?;
    let pattern = opt_str(event, "matchedPattern", MAX_COMMAND_BYTES)?;
    let request_id = opt_str(event, "requestId", 256)?;
    let forwarded = match event.get("forwarding") {
        None | Some(Value::Null) => false,
        Some(Value::Object(_)) => true,
        Some(_) => {
            return Err(EventError::Type {
                field: "forwarding",
                expected: "an object or null",
            });
        }
    };
    let cwd = opt_path(event, "cwd")?;
    let home = opt_path(event, "home")?;
    let source = opt_str(event, "source", 64)?.unwrap_or("pi");
    let at_ms = timestamp(event, ctx.now_ms)?;
    let parsed: Option<Surface> = surface_name.parse().ok();
    let (project_root, project) = (ctx.project)(cwd);
    let (command, path, tool) = match parsed {
        Some(Surface::Bash) => (value, None, None),
        Some(_) if pi_value_is_path(surface_name) => (None, value, None),
        Some(_) if pi_value_is_name(surface_name) => (None, None, value),
        // Another tool's value is its input: never kept; the tool name is
        // the surface itself.
        Some(_) | None => (None, None, None),
    };
    let event_id = match request_id {
        Some(id) => EventId::Id(id.to_owned()),
        None => EventId::Digest(canonical_json(&Value::Object(event.clone()))),
    };
    Ok(Observation {
        what: What::Decision {
            result,
            resolution,
            origin: origin.map(str::to_owned),
            pattern: pattern.map(str::to_owned),
            forwarded,
            awaits_after_event: false,
        },
        invalid_surface: parsed.is_none(),
        surface: parsed.unwrap_or(Surface::Mcp),
        tool: tool.map(str::to_owned),
        command: command.map(str::to_owned),
        path: path.map(str::to_owned),
        resolved_path: None,
        destination: None,
        value: None,
        cwd: cwd.map(str::to_owned),
        home: home.map(str::to_owned),
        project_root,
        session_id: None,
        request_hash: None,
        source: Some(source.to_owned()),
        at_ms,
        project,
        event_id: Some(event_id),
        starts_another: None,
    })
}

fn ran_event(event: &Map<String, Value>, ctx: &Context<'_>) -> Result<Observation, EventError> {
    let source = req_str(event, "source", 64)?;
    let raw = event.get("request").ok_or(EventError::Missing("request"))?;
    let text = raw.to_string();
    let request = Request::from_slice(text.as_bytes())
        .map_err(|e| EventError::Request(redact::redact_text(&e.to_string()).into_owned()))?;
    let at_ms = timestamp(event, ctx.now_ms)?;
    let (project_root, project) = (ctx.project)(request.cwd.as_deref());
    let event_id = match (&request.tool_call_id, &request.id) {
        (Some(id), _) | (None, Some(id)) => EventId::Id(format!("{}\u{0}{id}", request.session_id)),
        (None, None) => EventId::Digest(canonical_json(&Value::Object(event.clone()))),
    };
    let mut observation =
        Observation::of_request(&request, What::Ran, project, project_root, at_ms);
    observation.source = Some(source.to_owned());
    observation.event_id = Some(event_id);
    Ok(observation)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ctx_project(_: Option<&str>) -> (Option<PathBuf>, ProjectAudit) {
        (
            Some(PathBuf::from("/srv/app")),
            ProjectAudit {
                enabled: true,
                retention_days: 180,
            },
        )
    }

    fn parse(line: &str) -> Result<Observation, EventError> {
        parse_line(
            line,
            &Context {
                now_ms: 1_800_000_000_000,
                project: &ctx_project,
            },
        )
    }

    #[test]
    fn pi_decision_events() {
        let o = parse(
            r#"{"requestId":"r1","surface":"bash","value":"git status","result":"allow",
                "resolution":"user_approved","origin":"project","agentName":"main",
                "matchedPattern":"git *","forwarding":null,"newField":1}"#,
        )
        .unwrap();
        assert_eq!(o.command.as_deref(), Some("git status"));
        assert_eq!(o.event_id, Some(EventId::Id("r1".into())));
        // 20.7.3 has no requestId: a digest of the event instead.
        let o = parse(
            r#"{"surface":"read","value":"src/a.rs","result":"deny","resolution":"policy_deny"}"#,
        )
        .unwrap();
        assert!(matches!(o.event_id, Some(EventId::Digest(_))));
        assert_eq!(o.path.as_deref(), Some("src/a.rs"));
        let o = parse(r#"{"surface":"third_party","value":"{\"x\":1}","result":"allow","resolution":"policy_allow"}"#).unwrap();
        assert_eq!(
            (o.tool.as_deref(), o.command.as_deref(), o.path.as_deref()),
            (None, None, None)
        );
    }

    #[test]
    fn errors_name_the_field_without_quoting_values() {
        let secret = "hunter2Xq7vB2mK";
        for (line, want) in [
            (
                format!(r#"{{"surface":"bash","value":"x","result":"{secret}","resolution":"x"}}"#),
                "field `result` must be",
            ),
            (
                r#"{"value":"x","result":"allow","resolution":"x"}"#.to_owned(),
                "field `surface` is required",
            ),
            (
                r#"{"surface":"bash","result":"allow","resolution":"x","cwd":"rel"}"#.to_owned(),
                "field `cwd` must be an absolute path",
            ),
            (
                r#"{"surface":"bash","result":"allow","resolution":"x","timestamp_ms":"soon"}"#
                    .to_owned(),
                "field `timestamp_ms` must be",
            ),
            (
                format!(
                    r#"{{"surface":"bash","result":"allow","resolution":"x","kind":"{secret}"}}"#
                ),
                "field `kind` must be",
            ),
            (format!(r#"{{"surface": {secret}}}"#), "not valid JSON"),
            ("[1]".to_owned(), "must be a JSON object"),
        ] {
            let err = parse(&line).unwrap_err().to_string();
            assert!(err.contains(want), "{err}");
            assert!(!err.contains(secret), "{err}");
        }
    }

    #[test]
    fn ran_events_carry_a_canonical_request() {
        let o = parse(
            r#"{"kind":"ran","source":"gemini","request":{"session_id":"s","surface":"bash","command":"make"}}"#,
        )
        .unwrap();
        assert_eq!(o.what, What::Ran);
        assert_eq!(o.source.as_deref(), Some("gemini"));
        let err = parse(r#"{"kind":"ran","source":"x","request":{"surface":"bash"}}"#).unwrap_err();
        assert!(err.to_string().contains("session_id"), "{err}");
    }
}
