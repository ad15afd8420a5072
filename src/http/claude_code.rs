//! Claude Code `type: "http"` hooks: its `PreToolUse` JSON in, its
//! `hookSpecificOutput` JSON out.
//!
//! Claude Code runs the tool when an HTTP hook answers anything but 2xx, so
//! this module never produces an error response: every failure past
//! authentication becomes a `deny` or `ask` with a reason the agent (and the
//! human watching it) can read.
//!
//! The input is read tolerantly: Claude Code adds fields across versions
//! (`permission_mode`, `agent_id`, …), and rejecting them would turn an
//! upgrade into an outage. What vouch decides on — `session_id`, `tool_name`,
//! `tool_input` and the fields the surface needs — is required and checked.

use serde::Deserialize;
use serde_json::{Value, json};

use crate::config::FailClosed;
use crate::decision::{Decision, Outcome};
use crate::request::{Request, Surface};

/// The `PreToolUse` hook input, as far as vouch reads it.
#[derive(Debug, Deserialize)]
pub struct HookInput {
    pub session_id: String,
    #[serde(default)]
    pub transcript_path: Option<String>,
    #[serde(default)]
    pub cwd: Option<String>,
    pub hook_event_name: String,
    #[serde(default)]
    pub tool_name: Option<String>,
    #[serde(default)]
    pub tool_input: Option<Value>,
    #[serde(default)]
    pub tool_use_id: Option<String>,
}

/// Why a hook body could not become a canonical request.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum HookError {
    #[error("hook body is not valid JSON for a Claude Code hook: {0}")]
    Json(String),
    #[error("hook event `{0}` is not handled by this route (configure it for PreToolUse)")]
    UnsupportedEvent(String),
    #[error("field `tool_name` is missing")]
    MissingToolName,
    #[error("tool `{tool}`: field `tool_input.{field}` is missing or not a string")]
    MissingInput { tool: String, field: &'static str },
    #[error("tool `{tool}`: field `tool_input.url` is not a URL with a host: `{url}`")]
    BadUrl { tool: String, url: String },
    #[error("{0}")]
    Request(#[from] crate::request::RequestError),
}

/// What a hook body asks of the route.
#[derive(Debug, Clone, PartialEq)]
pub enum HookEvent {
    /// `PreToolUse`: decide this request.
    Decide(Request),
    /// `PostToolUse`: this call ran; the audit pairs it with vouch's
    /// decision (a deferred call that ran is a human approval).
    Ran(Request),
    /// Nothing to do.
    Ignore,
}

/// Parses a hook body. `Ok(None)` for events that carry nothing to decide.
pub fn parse(bytes: &[u8]) -> Result<Option<Request>, HookError> {
    match parse_event(bytes)? {
        HookEvent::Decide(request) => Ok(Some(request)),
        HookEvent::Ran(_) | HookEvent::Ignore => Ok(None),
    }
}

/// Parses a hook body into what the route should do with it.
pub fn parse_event(bytes: &[u8]) -> Result<HookEvent, HookError> {
    let mut de = serde_json::Deserializer::from_slice(bytes);
    let input: HookInput = serde_path_to_error::deserialize(&mut de).map_err(|e| {
        let path = e.path().to_string();
        let inner = e.into_inner();
        if path.is_empty() || path == "." {
            HookError::Json(inner.to_string())
        } else {
            HookError::Json(format!("at `{path}`: {inner}"))
        }
    })?;
    de.end().map_err(|e| HookError::Json(e.to_string()))?;
    match input.hook_event_name.as_str() {
        "PreToolUse" => to_request(input).map(HookEvent::Decide),
        // The same mapping as `PreToolUse`, so the request hash matches.
        "PostToolUse" => to_request(input).map(HookEvent::Ran),
        // Events after a failure or without a tool decide nothing here.
        "PostToolUseFailure" | "Notification" | "Stop" | "SubagentStop" | "SessionStart"
        | "SessionEnd" | "UserPromptSubmit" | "PreCompact" => Ok(HookEvent::Ignore),
        other => Err(HookError::UnsupportedEvent(other.to_owned())),
    }
}

/// Maps a `PreToolUse` input onto the canonical request.
pub fn to_request(input: HookInput) -> Result<Request, HookError> {
    let tool = input.tool_name.ok_or(HookError::MissingToolName)?;
    let tool_input = input.tool_input.unwrap_or(Value::Null);
    let text = |field: &'static str| -> Result<String, HookError> {
        tool_input
            .get(field)
            .and_then(Value::as_str)
            .map(str::to_owned)
            .ok_or_else(|| HookError::MissingInput {
                tool: tool.clone(),
                field,
            })
    };
    let (mut command, mut path, mut destination) = (None, None, None);
    let surface = match tool.as_str() {
        "Bash" => {
            command = Some(text("command")?);
            Surface::Bash
        }
        "Write" => {
            path = Some(text("file_path")?);
            Surface::Write
        }
        "Edit" | "MultiEdit" => {
            path = Some(text("file_path")?);
            Surface::Edit
        }
        "NotebookEdit" => {
            path = Some(text("notebook_path")?);
            Surface::Edit
        }
        "Read" => {
            path = Some(text("file_path")?);
            Surface::Read
        }
        "WebFetch" => {
            let url = text("url")?;
            destination = Some(destination_of(&tool, &url)?);
            Surface::Network
        }
        name if name.starts_with("mcp__") => Surface::Mcp,
        name => custom_surface(name),
    };
    let request = Request {
        id: None,
        tool_call_id: input.tool_use_id,
        session_id: input.session_id,
        turn_id: None,
        source: Some("claude-code".to_owned()),
        agent: None,
        surface,
        tool: Some(tool),
        command,
        cwd: input.cwd,
        home: None,
        path,
        resolved_path: None,
        destination,
        input: Some(tool_input),
        reason: None,
        transcript: Vec::new(),
        issue_grant: false,
    };
    request.validate()?;
    Ok(request)
}

/// `host:port` of a URL, the shape `destination` takes.
fn destination_of(tool: &str, url: &str) -> Result<String, HookError> {
    let bad = || HookError::BadUrl {
        tool: tool.to_owned(),
        url: url.to_owned(),
    };
    let parsed = reqwest::Url::parse(url).map_err(|_| bad())?;
    let host = parsed.host_str().ok_or_else(bad)?;
    let port = parsed.port_or_known_default().ok_or_else(bad)?;
    Ok(format!("{host}:{port}"))
}

/// A custom surface named after the tool: characters outside
/// `[A-Za-z0-9_.:-]` become `_` and the name is cut to 64 bytes (the full
/// name is still in `tool`, which is part of the request hash).
fn custom_surface(name: &str) -> Surface {
    let mut cleaned: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | ':' | '-') {
                c
            } else {
                '_'
            }
        })
        .take(64)
        .collect();
    if cleaned.is_empty() {
        cleaned.push('_');
    }
    // A tool literally named like a built-in surface is treated as that
    // surface rather than as a look-alike custom one.
    cleaned.parse().unwrap_or(Surface::Custom(cleaned))
}

/// Claude Code's answer for a pipeline decision.
pub fn answer(decision: &Decision) -> Value {
    match decision.decision {
        // `pass` routing: no opinion, Claude Code's own rules decide.
        Outcome::Allow if decision.abstain => json!({}),
        Outcome::Allow => permission("allow", &decision.message),
        Outcome::Deny => permission("deny", &decision.message),
        // Defer hands the call to the human: Claude Code's own prompt.
        Outcome::Defer => permission("ask", &decision.message),
    }
}

/// Claude Code's answer when no decision could be made.
pub fn fail_closed(mode: FailClosed, reason: &str) -> Value {
    match mode {
        FailClosed::Deny => permission("deny", reason),
        FailClosed::Defer => permission("ask", reason),
    }
}

/// A `PreToolUse` permission decision.
pub fn permission(decision: &'static str, reason: &str) -> Value {
    json!({
        "hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "permissionDecision": decision,
            "permissionDecisionReason": reason,
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::decision::Stage;

    fn hook(tool: &str, input: Value) -> Value {
        json!({
            "session_id": "abc", "transcript_path": "/tmp/t.jsonl", "cwd": "/srv/app",
            "permission_mode": "default", "hook_event_name": "PreToolUse",
            "tool_name": tool, "tool_input": input, "tool_use_id": "toolu_01"
        })
    }

    fn map(v: &Value) -> Result<Option<Request>, HookError> {
        parse(v.to_string().as_bytes())
    }

    #[test]
    fn tools_map_to_surfaces() {
        let r = map(&hook("Bash", json!({"command": "ls -la"})))
            .unwrap()
            .unwrap();
        assert_eq!(r.surface, Surface::Bash);
        assert_eq!(r.command.as_deref(), Some("ls -la"));
        assert_eq!(r.tool_call_id.as_deref(), Some("toolu_01"));
        assert_eq!(r.cwd.as_deref(), Some("/srv/app"));
        assert_eq!(r.source.as_deref(), Some("claude-code"));

        let r = map(&hook(
            "Write",
            json!({"file_path": "/srv/app/a", "content": "x"}),
        ))
        .unwrap()
        .unwrap();
        assert_eq!(
            (r.surface, r.path.as_deref()),
            (Surface::Write, Some("/srv/app/a"))
        );
        let r = map(&hook("MultiEdit", json!({"file_path": "/a", "edits": []})))
            .unwrap()
            .unwrap();
        assert_eq!(r.surface, Surface::Edit);
        let r = map(&hook("Read", json!({"file_path": "/a"})))
            .unwrap()
            .unwrap();
        assert_eq!(r.surface, Surface::Read);
        let r = map(&hook(
            "WebFetch",
            json!({"url": "https://example.com/x", "prompt": "p"}),
        ))
        .unwrap()
        .unwrap();
        assert_eq!(r.surface, Surface::Network);
        assert_eq!(r.destination.as_deref(), Some("example.com:443"));
        let r = map(&hook("mcp__github__create_issue", json!({"title": "t"})))
            .unwrap()
            .unwrap();
        assert_eq!(r.surface, Surface::Mcp);
        assert_eq!(r.tool.as_deref(), Some("mcp__github__create_issue"));
        let r = map(&hook("Grep", json!({"pattern": "x"})))
            .unwrap()
            .unwrap();
        assert_eq!(r.surface, Surface::Custom("Grep".into()));
        let r = map(&hook("My Tool/v2", json!({}))).unwrap().unwrap();
        assert_eq!(r.surface, Surface::Custom("My_Tool_v2".into()));
    }

    #[test]
    fn malformed_inputs_are_named() {
        let err = map(&hook("Bash", json!({"cmd": "ls"})))
            .unwrap_err()
            .to_string();
        assert!(err.contains("tool_input.command"), "{err}");
        let mut v = hook("Bash", json!({"command": "ls"}));
        v.as_object_mut().unwrap().remove("session_id");
        let err = map(&v).unwrap_err().to_string();
        assert!(err.contains("missing field `session_id`"), "{err}");
        let err = map(&hook("WebFetch", json!({"url": "not a url"}))).unwrap_err();
        assert!(matches!(err, HookError::BadUrl { .. }));
        let mut v = hook("Bash", json!({"command": "ls"}));
        v["cwd"] = "relative".into();
        let err = map(&v).unwrap_err().to_string();
        assert!(err.contains("`cwd`"), "{err}");
        let mut v = hook("Bash", json!({"command": "ls"}));
        v["hook_event_name"] = "PermissionRequest".into();
        assert!(matches!(map(&v), Err(HookError::UnsupportedEvent(_))));
        v["hook_event_name"] = "PostToolUse".into();
        assert_eq!(map(&v), Ok(None));
    }

    #[test]
    fn answers_follow_the_decision() {
        let d = Decision::new(Outcome::Deny, Stage::HardDeny, "h".into(), "wipe");
        let a = answer(&d);
        assert_eq!(a["hookSpecificOutput"]["permissionDecision"], "deny");
        assert_eq!(a["hookSpecificOutput"]["hookEventName"], "PreToolUse");
        assert!(
            a["hookSpecificOutput"]["permissionDecisionReason"]
                .as_str()
                .unwrap()
                .contains("wipe")
        );
        let d = Decision::new(Outcome::Defer, Stage::Reviewer, "h".into(), "unsure");
        assert_eq!(
            answer(&d)["hookSpecificOutput"]["permissionDecision"],
            "ask"
        );
        let d = Decision::new(Outcome::Allow, Stage::Reviewer, "h".into(), "fine");
        assert_eq!(
            answer(&d)["hookSpecificOutput"]["permissionDecision"],
            "allow"
        );
        let mut d = Decision::new(Outcome::Allow, Stage::Routing, "h".into(), "pass");
        d.abstain = true;
        assert_eq!(answer(&d), json!({}));
        assert_eq!(
            fail_closed(FailClosed::Defer, "x")["hookSpecificOutput"]["permissionDecision"],
            "ask"
        );
    }
}
