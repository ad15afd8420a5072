//! Cursor (`beforeShellExecution`, `beforeMCPExecution`, `beforeReadFile`,
//! `preToolUse` and the after-hooks), from Cursor's documentation and the
//! hook engine shipped in `@cursor/sdk` (`shared/harnesses/cursor/PROTOCOL.md`;
//! no Cursor client could be run here).
//!
//! - Reply `{"permission": "allow"|"deny"|"ask", "user_message", "agent_message"}`,
//!   exit 0. The reason goes in both messages: the SDK runtime shows the
//!   agent `user_message`, the documentation says `agent_message`.
//! - Without `failClosed: true` in `hooks.json`, a crash, a timeout or empty
//!   output let the command run: `vouch hook snippet cursor` sets it.
//! - The session is `conversation_id`, the turn `generation_id` (it changes
//!   with every user message). Cursor's transcript format is not documented,
//!   so it is not read: `beforeSubmitPrompt` (`conversation_id`,
//!   `generation_id`, `prompt`) records the session's latest prompt, the
//!   user message of the turn's reviews, and is answered `{"continue":
//!   true}` (a prompt is never blocked).
//! - `beforeReadFile` hands over the file's `content`: it never leaves this
//!   module (only the path is judged).

use serde_json::{Value, json};

use crate::catalogue::{self, Entry};
use crate::hooks::settings::{Dir, Format, Install, JsonRules};
use crate::hooks::snippet::{self, SnippetContext};
use crate::hooks::tools::{self, Action, Ids};
use crate::hooks::{Answer, Call, Event, Harness, HookError, Observed, Presence, Reply};
use crate::request::{Request, Surface};

pub struct Cursor;

/// The adapter, for the registry (`build.rs`).
pub static HARNESS: Cursor = Cursor;

/// Permission steps that are not about a tool vouch judges.
const QUIET_EVENTS: &[&str] = &[
    "sessionStart",
    "sessionEnd",
    "stop",
    "subagentStart",
    "subagentStop",
    "afterAgentResponse",
    "afterAgentThought",
    "preCompact",
];

/// The prompt event: recorded, never blocked.
const PROMPT_EVENT: &str = "beforeSubmitPrompt";

/// After-the-fact events, for the audit.
const AFTER_EVENTS: &[&str] = &[
    "afterShellExecution",
    "afterMCPExecution",
    "afterFileEdit",
    "afterTabFileEdit",
    "postToolUse",
    "postToolUseFailure",
];

impl Harness for Cursor {
    fn entry(&self) -> &'static Entry {
        &catalogue::CURSOR
    }

    fn about(&self) -> &'static str {
        "Cursor hooks (beforeShellExecution, beforeMCPExecution, beforeReadFile, preToolUse, after*, beforeSubmitPrompt)."
    }

    fn default_timeout_secs(&self) -> u64 {
        60
    }

    fn snippet(&self, ctx: &SnippetContext<'_>) -> Result<(String, Vec<String>), String> {
        Ok((
            snippet::pretty(&hooks(&ctx.command, ctx.timeout_secs)),
            vec!["Merge into ~/.cursor/hooks.json (your user hooks).".to_owned()],
        ))
    }

    fn install(&self) -> Option<Install> {
        Some(Install {
            dir: Dir::Env {
                var: None,
                home: ".cursor",
            },
            file: "hooks.json",
            format: Format::Json(JsonRules {
                off_switches: &[],
                force_true: &[],
            }),
        })
    }

    fn parse(&self, input: &Value) -> Result<Event, HookError> {
        let event = tools::first_text(input, &["hook_event_name"])
            .ok_or(HookError::MissingField("hook_event_name"))?
            .to_owned();
        let name = event.as_str();
        if name == PROMPT_EVENT {
            // Recorded for the turn's tool calls: Cursor's transcript is
            // not read, so this is their only user message.
            return tools::prompt(
                input,
                event,
                &["conversation_id", "session_id"],
                Some("generation_id"),
            );
        }
        if QUIET_EVENTS.contains(&name) {
            return Ok(Event::Ignore { event });
        }
        let ids = ids(input)?;
        let actions = actions(name, input, ids.cwd.as_deref())?;
        let requests: Vec<Request> = actions
            .into_iter()
            .map(|a| tools::request(&ids, a))
            .collect::<Result<_, _>>()?;
        if AFTER_EVENTS.contains(&name) {
            let request = requests
                .into_iter()
                .next()
                .ok_or(HookError::MissingField("tool_input"))?;
            return Ok(Event::Observe(Box::new(Observed {
                succeeded: Some(name != "postToolUseFailure"),
                request,
                event,
            })));
        }
        Ok(Event::Decide(Call {
            turn_from_transcript: false,
            requests,
            transcript: None,
            // Cursor shows its approval prompt for "ask".
            presence: Presence::Human,
            event,
        }))
    }

    fn render(&self, _event: &str, answer: &Answer) -> Reply {
        let with = |permission: &str, reason: &str| json!({"permission": permission, "user_message": reason, "agent_message": reason});
        Reply::Json(match answer {
            Answer::Abstain => json!({}),
            Answer::Allow(_) => json!({"permission": "allow"}),
            // Never asked for: Cursor's shell hook cannot rewrite a command.
            Answer::AllowConfined { .. } => with("deny", &crate::hooks::cannot_rewrite("Cursor")),
            Answer::Deny(reason) => with("deny", reason),
            Answer::Ask(reason) => with("ask", reason),
        })
    }

    fn no_op(&self, event: &str) -> Reply {
        match event {
            // The prompt goes on, whatever vouch made of it.
            PROMPT_EVENT => Reply::Json(json!({"continue": true})),
            _ => Reply::Json(json!({})),
        }
    }

    fn prompt_events(&self) -> &'static [&'static str] {
        &[PROMPT_EVENT]
    }

    fn after_events(&self) -> &'static [&'static str] {
        AFTER_EVENTS
    }

    fn primary_event(&self) -> &'static str {
        "beforeShellExecution"
    }
}

fn ids(input: &Value) -> Result<Ids, HookError> {
    let session_id = tools::first_text(input, &["conversation_id", "session_id"])
        .ok_or(HookError::MissingField("conversation_id"))?
        .to_owned();
    let root = input
        .get("workspace_roots")
        .and_then(Value::as_array)
        .and_then(|r| r.first())
        .and_then(Value::as_str);
    // `cwd` may be an empty string; the first workspace root stands in.
    let cwd =
        tools::absolute(input.get("cwd").and_then(Value::as_str)).or_else(|| tools::absolute(root));
    Ok(Ids {
        source: "cursor",
        session_id,
        turn_id: tools::first_text(input, &["generation_id"]).map(str::to_owned),
        tool_call_id: tools::first_text(input, &["tool_use_id"]).map(str::to_owned),
        agent: None,
        cwd,
    })
}

/// Maps one Cursor event onto actions.
fn actions(event: &str, input: &Value, cwd: Option<&str>) -> Result<Vec<Action>, HookError> {
    let empty = Value::Object(serde_json::Map::new());
    match event {
        "beforeShellExecution" | "afterShellExecution" => {
            let command = tools::text(input, "Shell", "command")?;
            Ok(vec![tools::shell("Shell", command, &empty, &[])])
        }
        "beforeMCPExecution" | "afterMCPExecution" => {
            let tool = tools::first_text(input, &["tool_name"])
                .ok_or(HookError::MissingField("tool_name"))?;
            // `tool_input` is a JSON string; keep it structured when it parses.
            let args = match input.get("tool_input") {
                Some(Value::String(s)) => {
                    serde_json::from_str(s).unwrap_or_else(|_| Value::String(s.clone()))
                }
                Some(other) => other.clone(),
                None => Value::Null,
            };
            let mut ti = json!({"arguments": args});
            for key in ["url", "command"] {
                if let (Some(v), Some(obj)) = (input.get(key), ti.as_object_mut()) {
                    obj.insert(format!("server_{key}"), v.clone());
                }
            }
            let url = input.get("url").and_then(Value::as_str);
            Ok(vec![tools::mcp(&format!("MCP:{tool}"), &ti, url)])
        }
        // The file's content is never forwarded: only the path is judged.
        "beforeReadFile" | "beforeTabFileRead" => {
            let path = tools::text(input, "Read", "file_path")?;
            Ok(vec![tools::file(Surface::Read, "Read", &path, cwd, &empty)])
        }
        "afterFileEdit" | "afterTabFileEdit" => {
            let path = tools::text(input, "Write", "file_path")?;
            Ok(vec![tools::file(
                Surface::Edit,
                "Write",
                &path,
                cwd,
                &empty,
            )])
        }
        "preToolUse" | "postToolUse" | "postToolUseFailure" => {
            let tool = tools::first_text(input, &["tool_name"])
                .ok_or(HookError::MissingField("tool_name"))?;
            let ti = input.get("tool_input").unwrap_or(&empty);
            tool_action(tool, ti, cwd).map(|a| vec![a])
        }
        other => Err(HookError::UnknownEvent(other.to_owned())),
    }
}

fn tool_action(tool: &str, ti: &Value, cwd: Option<&str>) -> Result<Action, HookError> {
    let path = |fields: &[&'static str]| {
        tools::first_text(ti, fields)
            .map(str::to_owned)
            .ok_or_else(|| HookError::MissingInput {
                tool: tool.to_owned(),
                field: fields.first().copied().unwrap_or("file_path"),
            })
    };
    Ok(match tool {
        "Shell" => {
            let mut a = tools::shell(tool, tools::text(ti, tool, "command")?, ti, &["command"]);
            a.cwd = tools::absolute(tools::first_text(ti, &["working_directory"]));
            a
        }
        "Write" => tools::file(
            Surface::Write,
            tool,
            &path(&["file_path", "path"])?,
            cwd,
            ti,
        ),
        "Delete" => tools::file(
            Surface::Delete,
            tool,
            &path(&["file_path", "path"])?,
            cwd,
            ti,
        ),
        // Content Cursor may attach to a read is never forwarded.
        "Read" => tools::file(
            Surface::Read,
            tool,
            &path(&["file_path", "path"])?,
            cwd,
            &tools::without(ti, &["content"]).unwrap_or(Value::Null),
        ),
        "Grep" => {
            let dir = tools::first_text(ti, &["path", "directory"]).unwrap_or(".");
            tools::file(Surface::Read, tool, dir, cwd, ti)
        }
        name if name.starts_with("MCP:") => tools::mcp(name, ti, None),
        name => tools::custom(name, ti),
    })
}

fn hooks(command: &str, timeout: u64) -> Value {
    let gate = |matcher: Option<&str>| {
        let mut e = json!({"command": command, "timeout": timeout, "failClosed": true});
        if let (Some(m), Some(obj)) = (matcher, e.as_object_mut()) {
            obj.insert("matcher".to_owned(), json!(m));
        }
        json!([e])
    };
    let after = || json!([{"command": command, "timeout": timeout}]);
    json!({"version": 1, "hooks": {
        // No `failClosed`: a prompt is never blocked.
        "beforeSubmitPrompt": after(),
        "beforeShellExecution": gate(None),
        "beforeMCPExecution": gate(None),
        "beforeReadFile": gate(None),
        "preToolUse": gate(Some("Write|Delete")),
        "afterShellExecution": after(),
        "afterMCPExecution": after(),
        "afterFileEdit": after(),
    }})
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn read_content_never_reaches_the_request() {
        let v = json!({
            "conversation_id": "c", "generation_id": "g", "hook_event_name": "beforeReadFile",
            "workspace_roots": ["/p"], "file_path": "/p/.env", "content": "API_KEY=abc"
        });
        let Event::Decide(call) = Cursor.parse(&v).unwrap() else {
            panic!()
        };
        let text = serde_json::to_string(&call.requests).unwrap();
        assert!(!text.contains("API_KEY"), "{text}");
        assert_eq!(call.requests[0].path.as_deref(), Some("/p/.env"));
    }

    #[test]
    fn deny_carries_the_reason_twice() {
        let Reply::Json(v) = Cursor.render("beforeShellExecution", &Answer::Deny("r".into()))
        else {
            panic!()
        };
        assert_eq!(
            v,
            json!({"permission": "deny", "user_message": "r", "agent_message": "r"})
        );
    }
}
