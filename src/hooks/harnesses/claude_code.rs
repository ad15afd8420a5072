//! Claude Code (`PreToolUse`, `PermissionRequest`, `PostToolUse`,
//! `UserPromptSubmit`), as 2.1.332 behaves
//! (`shared/harnesses/claude-code/PROTOCOL.md`).
//!
//! - `UserPromptSubmit` (`session_id, transcript_path, cwd, hook_event_name,
//!   prompt`) records the session's latest prompt and answers `{}`: the
//!   first `PreToolUse` of a `claude -p` run often arrives before Claude
//!   Code has written the transcript, and the record stands in for its user
//!   message. A prompt is never blocked, also when recording fails.
//! - The turn is `prompt_id` (it changes with every user prompt); a
//!   subagent's calls carry `agent_id`/`agent_type` and get their own turn.
//! - `PreToolUse` answers `hookSpecificOutput.permissionDecision`
//!   `allow`/`deny`/`ask` with the reason; `{}` leaves Claude Code's rules in
//!   charge. A headless `ask` blocks and shows the agent the reason, so "ask"
//!   never runs the tool; in `bypassPermissions` and `dontAsk` nobody is
//!   asked, so a `defer` is a deny that says a human must approve.
//! - `PermissionRequest` fires when Claude Code is about to show its own
//!   dialog: `decision.behavior` `allow`/`deny`, and "ask" is no decision
//!   (the dialog follows).
//! - Every tool reaches a hook whose matcher is `""`: shell tools (`Bash`,
//!   `Monitor`, `PowerShell`) are `bash`, file tools are paths resolved
//!   against `cwd`, `WebFetch` and `Monitor.ws.url` are `network`, MCP tools
//!   `mcp`, everything else a custom surface (the harness-internal ones pass
//!   in `config/default.toml`).

use serde_json::{Value, json};

use crate::catalogue::{self, Entry};
use crate::config::Config;
use crate::hooks::settings::{Dir, Format, Install, JsonRules};
use crate::hooks::snippet::{self, SnippetContext};
use crate::hooks::tools::{self, Action, Ids};
use crate::hooks::transcript;
use crate::hooks::{
    Answer, Call, Event, Harness, HookError, Observed, Presence, Reply, TranscriptRef,
};
use crate::request::Surface;

pub struct ClaudeCode;

/// The adapter, for the registry (`build.rs`).
pub static HARNESS: ClaudeCode = ClaudeCode;

/// Events that carry no tool call to decide.
const QUIET_EVENTS: &[&str] = &[
    "Notification",
    "Stop",
    "StopFailure",
    "SubagentStart",
    "SubagentStop",
    "SessionStart",
    "SessionEnd",
    "UserPromptExpansion",
    "PreCompact",
    "PostCompact",
    "Setup",
    "TeammateIdle",
    "TaskCreated",
    "TaskCompleted",
    "WorktreeCreate",
    "WorktreeRemove",
];

impl Harness for ClaudeCode {
    fn entry(&self) -> &'static Entry {
        &catalogue::CLAUDE_CODE
    }

    fn about(&self) -> &'static str {
        "Claude Code command hooks (PreToolUse, PermissionRequest, PostToolUse, UserPromptSubmit)."
    }

    /// 60 s in older releases and 600 s in newer ones: the smaller is
    /// assumed.
    fn default_timeout_secs(&self) -> u64 {
        60
    }

    fn snippet(&self, ctx: &SnippetContext<'_>) -> Result<(String, Vec<String>), String> {
        if ctx.opts.http {
            let note = "Claude Code `type: \"http\"` hook for `vouch serve`: export the adapter \
                        token as VOUCH_ADAPTER_TOKEN in the environment Claude Code starts from.";
            return Ok((
                snippet::pretty(&http_hook(ctx.config, ctx.timeout_secs)),
                vec![note.to_owned()],
            ));
        }
        Ok((
            snippet::pretty(&command_hooks(&ctx.command, ctx.timeout_secs)),
            vec!["Merge into ~/.claude/settings.json (your user settings).".to_owned()],
        ))
    }

    fn install(&self) -> Option<Install> {
        Some(Install {
            // Claude Code's `CLAUDE_CONFIG_DIR`, else `~/.claude`.
            dir: Dir::Env {
                var: Some("CLAUDE_CONFIG_DIR"),
                home: ".claude",
            },
            file: "settings.json",
            format: Format::Json(JsonRules {
                off_switches: &[&["disableAllHooks"]],
                force_true: &[],
            }),
        })
    }

    fn parse(&self, input: &Value) -> Result<Event, HookError> {
        let event = tools::first_text(input, &["hook_event_name"])
            .ok_or(HookError::MissingField("hook_event_name"))?
            .to_owned();
        match event.as_str() {
            "PreToolUse" | "PermissionRequest" => {
                let ids = ids(input)?;
                let action = action(input)?;
                let mode = tools::first_text(input, &["permission_mode"]).unwrap_or("default");
                let presence = match mode {
                    "bypassPermissions" | "dontAsk" => {
                        Presence::Nobody("Claude Code runs without permission prompts")
                    }
                    _ => Presence::Human,
                };
                let mut requests = vec![tools::request(&ids, action)?];
                // `updatedInput` with an allow runs the rewritten command
                // (PreToolUse; a PermissionRequest is not rewritten here).
                if event == "PreToolUse" {
                    crate::hooks::runs_rewritten(&mut requests, &["Bash"]);
                }
                Ok(Event::Decide(Call {
                    turn_from_transcript: ids.turn_id.is_none(),
                    requests,
                    transcript: transcript(input),
                    presence,
                    event,
                }))
            }
            "PostToolUse" | "PostToolUseFailure" => {
                let ids = ids(input)?;
                let succeeded = Some(event == "PostToolUse");
                Ok(Event::Observe(Box::new(Observed {
                    request: tools::request(&ids, action(input)?)?,
                    succeeded,
                    event,
                })))
            }
            // Recorded for the turn's first tool calls: Claude Code often
            // has not written the transcript when they arrive.
            "UserPromptSubmit" => tools::prompt(input, event, &["session_id"], Some("prompt_id")),
            name if QUIET_EVENTS.contains(&name) => Ok(Event::Ignore { event }),
            _ => Err(HookError::UnknownEvent(event)),
        }
    }

    fn render(&self, event: &str, answer: &Answer) -> Reply {
        match event {
            "PermissionRequest" => match answer {
                // The dialog Claude Code is about to show decides.
                Answer::Abstain | Answer::Ask(_) => Reply::Json(json!({})),
                Answer::Allow(_) => permission_request("allow", None),
                Answer::Deny(reason) => permission_request("deny", Some(reason)),
                // Never asked for here (see `parse`): blocked.
                Answer::AllowConfined { .. } => {
                    permission_request("deny", Some(&crate::hooks::cannot_rewrite("this event")))
                }
            },
            _ => match answer {
                Answer::Abstain => Reply::Json(json!({})),
                Answer::Allow(reason) => pre_tool_use("allow", reason),
                Answer::AllowConfined { message, confined } => {
                    pre_tool_use_rewritten(message, confined)
                }
                Answer::Deny(reason) => pre_tool_use("deny", reason),
                Answer::Ask(reason) => pre_tool_use("ask", reason),
            },
        }
    }

    fn no_op(&self, _event: &str) -> Reply {
        Reply::Json(json!({}))
    }

    fn prompt_events(&self) -> &'static [&'static str] {
        &["UserPromptSubmit"]
    }

    fn after_events(&self) -> &'static [&'static str] {
        &["PostToolUse", "PostToolUseFailure"]
    }

    fn primary_event(&self) -> &'static str {
        "PreToolUse"
    }
}

/// A `PreToolUse` allow that runs the command's confined form:
/// `updatedInput` replaces the tool's input (the whole of it, so it carries
/// every field the call kept, with the confined command).
pub fn pre_tool_use_rewritten(reason: &str, confined: &crate::confine::Confined) -> Reply {
    Reply::Json(json!({
        "hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "permissionDecision": "allow",
            "permissionDecisionReason": reason,
            "updatedInput": confined.input.clone().unwrap_or_else(|| json!({"command": confined.command})),
        }
    }))
}

/// A `PreToolUse` permission decision.
pub fn pre_tool_use(decision: &str, reason: &str) -> Reply {
    Reply::Json(json!({
        "hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "permissionDecision": decision,
            "permissionDecisionReason": reason,
        }
    }))
}

fn permission_request(behavior: &str, message: Option<&String>) -> Reply {
    let mut decision = json!({ "behavior": behavior });
    if let (Some(m), Some(obj)) = (message, decision.as_object_mut()) {
        obj.insert("message".to_owned(), Value::String(m.clone()));
    }
    Reply::Json(json!({
        "hookSpecificOutput": {
            "hookEventName": "PermissionRequest",
            "decision": decision,
        }
    }))
}

fn ids(input: &Value) -> Result<Ids, HookError> {
    let session_id = tools::first_text(input, &["session_id"])
        .ok_or(HookError::MissingField("session_id"))?
        .to_owned();
    let (turn_id, agent) = tools::turn_and_agent(input, "prompt_id");
    let cwd = input.get("cwd").and_then(Value::as_str);
    if let Some(cwd) = cwd.filter(|c| !c.is_empty() && !c.starts_with('/')) {
        return Err(HookError::BadInput {
            tool: "(event)".to_owned(),
            problem: format!("field `cwd` must be an absolute path, got `{cwd}`"),
        });
    }
    Ok(Ids {
        source: "claude-code",
        session_id,
        turn_id,
        tool_call_id: tools::first_text(input, &["tool_use_id"]).map(str::to_owned),
        agent,
        cwd: tools::absolute(cwd),
    })
}

fn transcript(input: &Value) -> Option<TranscriptRef> {
    tools::first_text(input, &["transcript_path"]).map(|p| TranscriptRef {
        path: p.to_owned(),
        format: &transcript::CLAUDE_CODE,
    })
}

/// Maps one Claude Code tool onto an action.
pub fn action(input: &Value) -> Result<Action, HookError> {
    let tool =
        tools::first_text(input, &["tool_name"]).ok_or(HookError::MissingField("tool_name"))?;
    let empty = Value::Object(serde_json::Map::new());
    let ti = input.get("tool_input").unwrap_or(&empty);
    let cwd = tools::absolute(input.get("cwd").and_then(Value::as_str));
    let cwd = cwd.as_deref();
    let path = |field: &'static str| tools::text(ti, tool, field);
    Ok(match tool {
        "Bash" | "PowerShell" => tools::shell(tool, path("command")?, ti, &["command"]),
        // Monitor runs `command` in a shell, or opens `ws.url`.
        "Monitor" => match tools::first_text(ti, &["command"]) {
            Some(command) => tools::shell(tool, command.to_owned(), ti, &["command"]),
            None => {
                let url = ti
                    .get("ws")
                    .and_then(|ws| ws.get("url"))
                    .and_then(Value::as_str)
                    .ok_or_else(|| HookError::MissingInput {
                        tool: tool.to_owned(),
                        field: "command",
                    })?;
                tools::network(tool, "ws.url", url, ti)?
            }
        },
        "Write" => tools::file(Surface::Write, tool, &path("file_path")?, cwd, ti),
        "Edit" | "MultiEdit" => tools::file(Surface::Edit, tool, &path("file_path")?, cwd, ti),
        "NotebookEdit" => tools::file(Surface::Edit, tool, &path("notebook_path")?, cwd, ti),
        "Read" => tools::file(Surface::Read, tool, &path("file_path")?, cwd, ti),
        "NotebookRead" => tools::file(Surface::Read, tool, &path("notebook_path")?, cwd, ti),
        // Searches read the tree they are pointed at (else `cwd`).
        "Glob" | "Grep" | "LS" => {
            let dir = tools::first_text(ti, &["path"]).unwrap_or(".");
            tools::file(Surface::Read, tool, dir, cwd, ti)
        }
        "WebFetch" => tools::network(tool, "url", &path("url")?, ti)?,
        "WebSearch" => tools::network_unknown(tool, ti),
        "ListMcpResourcesTool" | "ReadMcpResourceTool" => tools::mcp(tool, ti, None),
        name if name.starts_with("mcp__") => tools::mcp(tool, ti, None),
        name => tools::custom(name, ti),
    })
}

fn command_hooks(command: &str, timeout: u64) -> Value {
    let entry = |block: bool| {
        let mut hook = json!({"type": "command", "command": command, "timeout": timeout});
        if let (true, Some(obj)) = (block, hook.as_object_mut()) {
            // Claude Code runs the tool when a hook cannot start or times
            // out, unless told to block.
            obj.insert("onFailure".to_owned(), json!("block"));
        }
        json!([{"matcher": "", "hooks": [hook]}])
    };
    // No matcher for prompts, and no `onFailure: "block"`: vouch never
    // blocks a prompt (the prompt only feeds the reviews of the tool calls
    // that follow, which are blocked on failure themselves).
    let prompt = json!([{"hooks": [{"type": "command", "command": command, "timeout": timeout}]}]);
    json!({"hooks": {
        "UserPromptSubmit": prompt,
        "PreToolUse": entry(true),
        "PermissionRequest": entry(true),
        "PostToolUse": entry(false),
    }})
}

fn http_hook(cfg: &Config, timeout: u64) -> Value {
    let listen = &cfg.server.listen;
    let hook = json!({
        "type": "http",
        "url": format!("http://{listen}/hooks/claude-code"),
        "headers": {"Authorization": "Bearer $VOUCH_ADAPTER_TOKEN"},
        "allowedEnvVars": ["VOUCH_ADAPTER_TOKEN"],
        "timeout": timeout,
    });
    let mut gate = hook.clone();
    if let Some(obj) = gate.as_object_mut() {
        obj.insert("onFailure".to_owned(), json!("block"));
    }
    // The prompt hook never blocks (see `command_hooks`).
    json!({"hooks": {
        "UserPromptSubmit": [{"hooks": [hook]}],
        "PreToolUse": [{"matcher": "", "hooks": [gate]}],
    }})
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::request::Request;

    fn hook(tool: &str, input: Value) -> Value {
        json!({
            "session_id": "abc", "transcript_path": "/tmp/t.jsonl", "cwd": "/srv/app",
            "prompt_id": "p-1", "permission_mode": "default", "hook_event_name": "PreToolUse",
            "tool_name": tool, "tool_input": input, "tool_use_id": "toolu_01"
        })
    }

    fn one(v: &Value) -> Request {
        match ClaudeCode.parse(v).unwrap() {
            Event::Decide(call) => {
                assert_eq!(call.requests.len(), 1);
                call.requests.into_iter().next().unwrap()
            }
            other => panic!("not a decision: {other:?}"),
        }
    }

    #[test]
    fn tools_map_to_surfaces() {
        let r = one(&hook(
            "Bash",
            json!({"command": "ls -la", "description": "list"}),
        ));
        assert_eq!(r.surface, Surface::Bash);
        assert_eq!(r.command.as_deref(), Some("ls -la"));
        assert_eq!(r.input, None, "the command is packed once");
        assert_eq!(r.reason.as_deref(), Some("list"));
        assert_eq!(r.turn_id.as_deref(), Some("p-1"));
        assert_eq!(r.tool_call_id.as_deref(), Some("toolu_01"));
        let r = one(&hook(
            "Monitor",
            json!({"command": "tail -f log", "description": "d", "timeout_ms": 1}),
        ));
        assert_eq!(
            (r.surface, r.command.as_deref()),
            (Surface::Bash, Some("tail -f log"))
        );
        let r = one(&hook(
            "Monitor",
            json!({"ws": {"url": "wss://feed.example/x"}, "description": "d", "timeout_ms": 1}),
        ));
        assert_eq!(r.surface, Surface::Network);
        assert_eq!(r.destination.as_deref(), Some("feed.example:443"));
        let r = one(&hook(
            "Write",
            json!({"file_path": "notes.txt", "content": "x"}),
        ));
        assert_eq!(
            (r.surface, r.path.as_deref()),
            (Surface::Write, Some("/srv/app/notes.txt"))
        );
        let r = one(&hook("Grep", json!({"pattern": "x"})));
        assert_eq!(
            (r.surface, r.path.as_deref()),
            (Surface::Read, Some("/srv/app"))
        );
        let r = one(&hook(
            "WebFetch",
            json!({"url": "https://example.com/x", "prompt": "p"}),
        ));
        assert_eq!(r.destination.as_deref(), Some("example.com:443"));
        let r = one(&hook("mcp__github__create_issue", json!({"title": "t"})));
        assert_eq!(r.surface, Surface::Mcp);
        let r = one(&hook("ToolSearch", json!({"query": "x"})));
        assert_eq!(r.surface, Surface::Custom("ToolSearch".into()));
    }

    #[test]
    fn subagents_get_their_own_turn() {
        let mut v = hook("Bash", json!({"command": "ls"}));
        v["agent_id"] = "a-7".into();
        v["agent_type"] = "Explore".into();
        let r = one(&v);
        assert_eq!(r.turn_id.as_deref(), Some("p-1/a-7"));
        assert_eq!(r.agent.as_deref(), Some("Explore"));
    }

    #[test]
    fn bypass_mode_has_nobody_to_ask() {
        let mut v = hook("Bash", json!({"command": "ls"}));
        v["permission_mode"] = "bypassPermissions".into();
        let Event::Decide(call) = ClaudeCode.parse(&v).unwrap() else {
            panic!()
        };
        assert!(matches!(call.presence, Presence::Nobody(_)));
    }

    #[test]
    fn malformed_inputs_are_named() {
        let err = ClaudeCode
            .parse(&hook("Bash", json!({"cmd": "ls"})))
            .unwrap_err();
        assert!(err.to_string().contains("tool_input.command"), "{err}");
        let mut v = hook("Bash", json!({"command": "ls"}));
        v.as_object_mut().unwrap().remove("session_id");
        assert!(
            ClaudeCode
                .parse(&v)
                .unwrap_err()
                .to_string()
                .contains("session_id")
        );
        let mut v = hook("Bash", json!({"command": "ls"}));
        v["hook_event_name"] = "Bogus".into();
        assert!(matches!(
            ClaudeCode.parse(&v),
            Err(HookError::UnknownEvent(_))
        ));
    }

    #[test]
    fn a_prompt_is_recorded_not_decided() {
        let v = json!({"session_id": "abc", "transcript_path": "/tmp/t.jsonl", "cwd": "/srv/app",
            "hook_event_name": "UserPromptSubmit", "prompt": "fix the build"});
        let Ok(Event::Prompt(p)) = ClaudeCode.parse(&v) else {
            panic!("not a prompt")
        };
        assert_eq!(
            (p.session_id.as_str(), p.text.as_str(), p.turn_id),
            ("abc", "fix the build", None)
        );
        let mut v = v;
        v["prompt_id"] = "p-1".into();
        let Ok(Event::Prompt(p)) = ClaudeCode.parse(&v) else {
            panic!("not a prompt")
        };
        assert_eq!(p.turn_id.as_deref(), Some("p-1"));
        assert_eq!(ClaudeCode.no_op("UserPromptSubmit"), Reply::Json(json!({})));
    }

    #[test]
    fn replies_follow_the_event() {
        let deny = Answer::Deny("no".into());
        let Reply::Json(v) = ClaudeCode.render("PreToolUse", &deny) else {
            panic!()
        };
        assert_eq!(v["hookSpecificOutput"]["permissionDecision"], "deny");
        assert_eq!(v["hookSpecificOutput"]["permissionDecisionReason"], "no");
        let Reply::Json(v) = ClaudeCode.render("PermissionRequest", &deny) else {
            panic!()
        };
        assert_eq!(v["hookSpecificOutput"]["decision"]["behavior"], "deny");
        assert_eq!(v["hookSpecificOutput"]["decision"]["message"], "no");
        assert_eq!(
            ClaudeCode.render("PermissionRequest", &Answer::Ask("q".into())),
            Reply::Json(json!({}))
        );
        assert_eq!(
            ClaudeCode.render("PreToolUse", &Answer::Abstain),
            Reply::Json(json!({}))
        );
    }
}
