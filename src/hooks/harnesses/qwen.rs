//! Qwen Code (`PreToolUse`, `PostToolUse`, `PostToolUseFailure`), as
//! 0.24.4 behaves (`shared/harnesses/qwen-code/PROTOCOL.md`,
//! `docs/harnesses/qwen.md`).
//!
//! Qwen Code descends from Gemini CLI, but its hooks are Claude Code's:
//! snake_case payloads, `hookSpecificOutput.permissionDecision` replies,
//! exit 2 with stderr to block, timeouts in seconds. Its tools keep Gemini
//! CLI's names (`run_shell_command`, `write_file`, `edit`, `read_file`, …).
//!
//! - The turn is `prompt_id` (`<session>########<n>`, shared by a prompt's
//!   tool round-trips); `tool_call_id` is the model's own call id.
//! - Replies: `permissionDecision` `allow`/`deny`/`ask` with the reason (the
//!   model sees a deny's reason verbatim), `{}` for no opinion. Qwen runs the
//!   tool on anything it cannot read (no output, non-JSON, broken JSON, exit
//!   1, a signal, a timeout, a missing binary), so the reply is always one
//!   object, exit 0, and the snippet's command turns a vouch that cannot
//!   run into exit 2 with a reason on stderr (which blocks).
//! - `ask` bounces the call back to Qwen's approval dialog where one can be
//!   shown, and blocks with the reason in a headless run. Who is there is
//!   read from `permission_mode`: in `yolo` and `auto` the user chose not
//!   to be asked (a headless `--yolo` run is the common case), so a `defer`
//!   is a deny that says a human must approve; in `default`, `plan` and
//!   `auto_edit` a person approves Qwen's own prompts, and an "ask" either
//!   reaches them or blocks. An unknown or missing mode counts as nobody.
//! - `PreToolUse` fires after Qwen's own parameter checks and approval, just
//!   before the tool runs, and argument rewriting by hooks is not honoured:
//!   what vouch judged is what runs.
//! - `UserPromptSubmit` (`session_id, prompt_id, prompt`) records the
//!   session's latest prompt for the turn's tool calls (used when the chat
//!   file holds no user message); it fires a second time with an empty
//!   prompt, which is ignored. The reply is always `{}`: a prompt is never
//!   blocked.

use serde_json::{Value, json};

use crate::catalogue::{self, Entry};
use crate::hooks::settings::{Dir, Format, Install, JsonRules};
use crate::hooks::snippet::{self, SnippetContext};
use crate::hooks::tools::{self, Action, Ids};
use crate::hooks::transcript::{self, Line, str_of};
use crate::hooks::{
    Answer, Call, Event, Harness, HookError, Observed, Presence, Reply, TranscriptRef,
};
use crate::request::{Surface, TranscriptEntry};

pub struct Qwen;

/// The adapter, for the registry (`build.rs`).
pub static HARNESS: Qwen = Qwen;

/// Qwen Code's own hook timeout when an entry sets none, in seconds
/// (`DEFAULT_COMMAND_HOOK_TIMEOUT_SECONDS`).
pub const DEFAULT_TIMEOUT_SECS: u64 = 60;

/// The largest hook timeout Qwen Code reads as seconds: from 1000 on it
/// takes the number as (legacy) milliseconds, so a longer wait cannot be
/// written.
pub const MAX_TIMEOUT_SECS: u64 = 999;

/// Events that carry no tool call to decide.
const QUIET_EVENTS: &[&str] = &[
    "PostToolBatch",
    "Notification",
    "UserPromptExpansion",
    "SessionStart",
    "SessionEnd",
    "SessionDelete",
    "Stop",
    "StopFailure",
    "MessageDisplay",
    "SubagentStart",
    "SubagentStop",
    "PreCompact",
    "PostCompact",
    // Qwen's own dialog is about to ask; vouch's gate is `PreToolUse`.
    "PermissionRequest",
    "PermissionDenied",
    "TodoCreated",
    "TodoCompleted",
    "InstructionsLoaded",
];

impl Harness for Qwen {
    fn entry(&self) -> &'static Entry {
        &catalogue::QWEN
    }

    fn about(&self) -> &'static str {
        "Qwen Code command hooks (PreToolUse, PostToolUse, PostToolUseFailure, UserPromptSubmit)."
    }

    fn default_timeout_secs(&self) -> u64 {
        DEFAULT_TIMEOUT_SECS
    }

    fn snippet(&self, ctx: &SnippetContext<'_>) -> Result<(String, Vec<String>), String> {
        // The `--timeout` vouch answers by must be the one Qwen waits.
        let timeout = ctx.timeout_secs.min(MAX_TIMEOUT_SECS);
        Ok(hooks(
            &snippet::command_line(ctx.opts, timeout),
            ctx.timeout_secs,
        ))
    }

    fn install(&self) -> Option<Install> {
        Some(Install {
            // Qwen Code's `QWEN_HOME`, else `~/.qwen`.
            dir: Dir::Env {
                var: Some("QWEN_HOME"),
                home: ".qwen",
            },
            file: "settings.json",
            format: Format::Json(JsonRules {
                off_switches: &[&["disableAllHooks"]],
                // Off by default in 0.24.4, which makes every folder trusted:
                // a cloned repository's `disableAllHooks` would switch vouch
                // off (docs/harnesses/qwen.md).
                force_true: &[&["security", "folderTrust", "enabled"]],
            }),
        })
    }

    fn parse(&self, input: &Value) -> Result<Event, HookError> {
        let event = tools::first_text(input, &["hook_event_name"])
            .ok_or(HookError::MissingField("hook_event_name"))?
            .to_owned();
        match event.as_str() {
            "PreToolUse" => {
                let ids = ids(input)?;
                let requests = actions_of(input, ids.cwd.as_deref())?
                    .into_iter()
                    .map(|a| tools::request(&ids, a))
                    .collect::<Result<Vec<_>, _>>()?;
                Ok(Event::Decide(Call {
                    turn_from_transcript: ids.turn_id.is_none(),
                    requests,
                    transcript: transcript(input),
                    presence: presence(tools::first_text(input, &["permission_mode"])),
                    event,
                }))
            }
            "PostToolUse" | "PostToolUseFailure" => {
                let ids = ids(input)?;
                let request = actions_of(input, ids.cwd.as_deref())?
                    .into_iter()
                    .next()
                    .ok_or(HookError::MissingField("tool_input"))
                    .and_then(|a| tools::request(&ids, a))?;
                Ok(Event::Observe(Box::new(Observed {
                    request,
                    succeeded: Some(event == "PostToolUse"),
                    event,
                })))
            }
            // Recorded for the turn's tool calls. Qwen sends it twice per
            // prompt, the second time with `"prompt": ""` when a tool
            // result goes back: an empty prompt is not recorded (see
            // `session::prompts`), so the first one stays.
            "UserPromptSubmit" => tools::prompt(input, event, &["session_id"], Some("prompt_id")),
            name if QUIET_EVENTS.contains(&name) => Ok(Event::Ignore { event }),
            _ => Err(HookError::UnknownEvent(event)),
        }
    }

    fn render(&self, _event: &str, answer: &Answer) -> Reply {
        match answer {
            Answer::Abstain => Reply::Json(json!({})),
            Answer::Allow(reason) => super::claude_code::pre_tool_use("allow", reason),
            // Never asked for: Qwen Code ignores `updatedInput`.
            Answer::AllowConfined { .. } => {
                super::claude_code::pre_tool_use("deny", &crate::hooks::cannot_rewrite("Qwen Code"))
            }
            Answer::Deny(reason) => super::claude_code::pre_tool_use("deny", reason),
            Answer::Ask(reason) => super::claude_code::pre_tool_use("ask", reason),
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

/// Whom an "ask" reaches, from `permission_mode`.
fn presence(mode: Option<&str>) -> Presence {
    match mode {
        // A person approves Qwen's own prompts here: an "ask" goes back to
        // that dialog, or blocks with the reason where none can be shown.
        Some("default" | "plan" | "auto_edit") => Presence::Human,
        Some("yolo") => Presence::Nobody("Qwen Code runs in yolo mode, without approval prompts"),
        // A classifier approves instead of a person.
        Some("auto") => Presence::Nobody("Qwen Code's auto mode approves without a person"),
        Some(_) | None => {
            Presence::Nobody("Qwen Code's hook input does not name a permission mode vouch knows")
        }
    }
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
        source: "qwen",
        session_id,
        turn_id,
        // The model's own id, which the transcript's records carry; else
        // Qwen's synthetic one.
        tool_call_id: tools::first_text(input, &["tool_call_id", "tool_use_id"]).map(str::to_owned),
        agent,
        cwd: tools::absolute(cwd),
    })
}

fn transcript(input: &Value) -> Option<TranscriptRef> {
    tools::first_text(input, &["transcript_path"]).map(|p| TranscriptRef {
        path: p.to_owned(),
        format: &QWEN_CHAT,
    })
}

fn actions_of(input: &Value, cwd: Option<&str>) -> Result<Vec<Action>, HookError> {
    let tool =
        tools::first_text(input, &["tool_name"]).ok_or(HookError::MissingField("tool_name"))?;
    let empty = Value::Object(serde_json::Map::new());
    let ti = input.get("tool_input").unwrap_or(&empty);
    actions(tool, ti, cwd)
}

/// Qwen's harness-internal tools (discovery, todo lists, plan mode, goals,
/// skills, questions, subagents — a subagent's own calls reach the hook one
/// by one), each with the name Qwen's own rule language gives it as an
/// alias, which is the surface vouch's defaults already let pass.
const INTERNAL: &[(&str, &str)] = &[
    ("agent", "Agent"),
    ("task", "Agent"),
    ("skill", "Skill"),
    ("tool_search", "ToolSearch"),
    ("todo_write", "TodoWrite"),
    ("ask_user_question", "AskUserQuestion"),
    ("enter_plan_mode", "EnterPlanMode"),
    ("exit_plan_mode", "ExitPlanMode"),
    ("list_agents", "ListAgents"),
    ("report_findings", "ReportFindings"),
];

/// Maps one Qwen Code tool onto actions.
pub fn actions(tool: &str, ti: &Value, cwd: Option<&str>) -> Result<Vec<Action>, HookError> {
    let path = |field: &'static str| tools::text(ti, tool, field);
    // Searches and listings read the directory they name, else `cwd`.
    let dir = || tools::first_text(ti, &["path", "dir_path", "directory"]).unwrap_or(".");
    Ok(match tool {
        "run_shell_command" | "monitor" => {
            let mut a = tools::shell(tool, tools::text(ti, tool, "command")?, ti, &["command"]);
            // The command runs in `directory` when given.
            a.cwd = tools::first_text(ti, &["directory", "dir_path"])
                .map(|d| tools::resolve(d, cwd))
                .filter(|d| d.starts_with('/'));
            vec![a]
        }
        "write_file" => vec![tools::file(
            Surface::Write,
            tool,
            &path("file_path")?,
            cwd,
            ti,
        )],
        "edit" | "replace" => vec![tools::file(
            Surface::Edit,
            tool,
            &path("file_path")?,
            cwd,
            ti,
        )],
        "notebook_edit" => vec![tools::file(
            Surface::Edit,
            tool,
            &path("notebook_path")?,
            cwd,
            ti,
        )],
        "read_file" | "zoom_image" => {
            vec![tools::file(
                Surface::Read,
                tool,
                &path("file_path")?,
                cwd,
                ti,
            )]
        }
        "glob" | "grep_search" | "list_directory" => {
            vec![tools::file(Surface::Read, tool, dir(), cwd, ti)]
        }
        "web_fetch" => vec![tools::network(tool, "url", &path("url")?, ti)?],
        "web_search" => vec![tools::network_unknown(tool, ti)],
        // The deferred-tool bridge: Qwen dispatches the named tool through
        // its scheduler, so it is judged as that tool would be (one level:
        // the bridge refuses to call itself).
        "tool_call" => match (
            tools::first_text(ti, &["name"]),
            ti.get("arguments").filter(|a| a.is_object()),
        ) {
            (Some(inner), Some(args)) if inner != "tool_call" => actions(inner, args, cwd)?,
            (Some(_) | None, _) => vec![tools::custom(tool, ti)],
        },
        name if name.starts_with("mcp__") => vec![tools::mcp(tool, ti, None)],
        name => match INTERNAL.iter().find(|(n, _)| *n == name) {
            Some((_, alias)) => {
                let mut a = tools::custom(alias, ti);
                a.tool = name.to_owned();
                vec![a]
            }
            None => vec![tools::custom(name, ti)],
        },
    })
}

// ---------------------------------------------------------------------------
// The hook entry
// ---------------------------------------------------------------------------

/// Stderr text of the snippet's fallback, shown to the model when vouch
/// cannot run at all.
const FALLBACK_REASON: &str = "vouch could not run (missing, crashed or killed), so this tool \
                               call was blocked. This is a failure of the reviewer, not a \
                               judgement that the action is risky.";

/// The hook entry for `~/.qwen/settings.json`: `PreToolUse` decides, the
/// after-events are for the audit. Qwen runs `command` through `bash -c`;
/// the `||` branch turns a vouch that could not answer (exit 127 when the
/// binary is missing, a crash, a signal) into exit 2 with a reason on
/// stderr, which Qwen reads as a block. vouch itself always exits 0.
fn hooks(command: &str, timeout_secs: u64) -> (String, Vec<String>) {
    let timeout = timeout_secs.min(MAX_TIMEOUT_SECS);
    let gate = format!("{command} || {{ echo '{FALLBACK_REASON}' >&2; exit 2; }}");
    let entry = |command: &str| {
        json!([{"matcher": "", "hooks": [{
            "type": "command", "name": "vouch", "command": command, "timeout": timeout,
        }]}])
    };
    // The prompt hook has no exit-2 fallback: a prompt is never blocked.
    let value = json!({"hooks": {
        "UserPromptSubmit": entry(command),
        "PreToolUse": entry(&gate),
        "PostToolUse": entry(command),
        "PostToolUseFailure": entry(command),
    }});
    let text = snippet::pretty(&value);
    let mut notes = vec![
        "Merge into ~/.qwen/settings.json (your user settings). Keep `disableAllHooks` unset \
         there: a project's `.qwen/settings.json` setting it would switch vouch off, which is \
         why vouch refuses the agent's writes to that file."
            .to_owned(),
    ];
    if timeout_secs > MAX_TIMEOUT_SECS {
        notes.push(format!(
            "warning: Qwen Code reads a hook timeout of 1000 or more as milliseconds; the \
             timeout is {MAX_TIMEOUT_SECS} s, below the review deadline of {timeout_secs} s. \
             Lower `reviewer.timeout_ms` so that `--timeout` on the command line matches."
        ));
    }
    (text, notes)
}

// ---------------------------------------------------------------------------
// The transcript
// ---------------------------------------------------------------------------

/// Qwen Code chat JSONL (`~/.qwen/projects/<project>/chats/<session>.jsonl`).
#[derive(Debug)]
pub struct QwenChat;
pub static QWEN_CHAT: QwenChat = QwenChat;

impl transcript::Format for QwenChat {
    fn lines(&self, records: Vec<Value>) -> Vec<Line> {
        records.iter().map(qwen_line).collect()
    }
}

/// One Qwen Code chat record: `user` records are the person's messages
/// (Qwen marks them `provenance: "real_user"`; a subtype other than
/// `mid_turn_user_message` is the CLI's own), `assistant` records carry
/// `functionCall` parts, `tool_result` records `functionResponse` parts;
/// `system` records (telemetry, snapshots) say nothing about the request.
fn qwen_line(v: &Value) -> Line {
    let mut line = Line::default();
    let parts = v
        .get("message")
        .and_then(|m| m.get("parts"))
        .and_then(Value::as_array);
    let parts = parts.map(Vec::as_slice).unwrap_or_default();
    match str_of(v, "type").unwrap_or_default() {
        "user" => {
            let genuine = str_of(v, "provenance").is_none_or(|p| p == "real_user")
                && str_of(v, "subtype").is_none_or(|s| s == "mid_turn_user_message");
            let text = parts
                .iter()
                .filter_map(|p| str_of(p, "text"))
                .collect::<Vec<_>>()
                .join("\n");
            if genuine && !text.trim().is_empty() {
                line.entries.push(TranscriptEntry::User { text });
                line.user_id = Some(str_of(v, "uuid").map(str::to_owned));
            }
        }
        "assistant" => {
            for call in parts.iter().filter_map(|p| p.get("functionCall")) {
                line.entries.push(TranscriptEntry::ToolCall {
                    tool_call_id: str_of(call, "id").map(str::to_owned),
                    tool_name: str_of(call, "name").map(str::to_owned),
                    input: call.get("args").cloned(),
                });
            }
        }
        "tool_result" => {
            for response in parts.iter().filter_map(|p| p.get("functionResponse")) {
                let result = response.get("response");
                let text = match result.and_then(|r| r.get("output").or_else(|| r.get("error"))) {
                    Some(Value::String(s)) => s.clone(),
                    Some(other) => other.to_string(),
                    None => result.map(Value::to_string).unwrap_or_default(),
                };
                line.entries.push(TranscriptEntry::ToolResult {
                    tool_call_id: str_of(response, "id").map(str::to_owned),
                    text,
                });
            }
        }
        _ => {}
    }
    line
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::request::Request;

    fn hook(tool: &str, input: Value) -> Value {
        json!({
            "session_id": "s-1", "transcript_path": "/tmp/t.jsonl", "cwd": "/srv/app",
            "hook_event_name": "PreToolUse", "permission_mode": "yolo",
            "prompt_id": "s-1########0", "tool_name": tool, "tool_input": input,
            "tool_use_id": "toolu_1", "tool_call_id": "call_1"
        })
    }

    fn call(v: &Value) -> Call {
        match Qwen.parse(v).unwrap() {
            Event::Decide(call) => call,
            other => panic!("not a decision: {other:?}"),
        }
    }

    fn one(v: &Value) -> Request {
        let c = call(v);
        assert_eq!(c.requests.len(), 1);
        c.requests.into_iter().next().unwrap()
    }

    #[test]
    fn tools_map_to_surfaces() {
        let r = one(&hook(
            "run_shell_command",
            json!({"command": "ls", "description": "list", "directory": "sub"}),
        ));
        assert_eq!(r.surface, Surface::Bash);
        assert_eq!(r.command.as_deref(), Some("ls"));
        assert_eq!(r.cwd.as_deref(), Some("/srv/app/sub"));
        assert_eq!(r.reason.as_deref(), Some("list"));
        assert_eq!(r.turn_id.as_deref(), Some("s-1########0"));
        assert_eq!(r.tool_call_id.as_deref(), Some("call_1"));
        let r = one(&hook(
            "write_file",
            json!({"file_path": "/srv/app/n.txt", "content": "x"}),
        ));
        assert_eq!(
            (r.surface, r.path.as_deref()),
            (Surface::Write, Some("/srv/app/n.txt"))
        );
        let r = one(&hook(
            "edit",
            json!({"file_path": "a.rs", "old_string": "a", "new_string": "b"}),
        ));
        assert_eq!(
            (r.surface, r.path.as_deref()),
            (Surface::Edit, Some("/srv/app/a.rs"))
        );
        let r = one(&hook("grep_search", json!({"pattern": "x"})));
        assert_eq!(
            (r.surface, r.path.as_deref()),
            (Surface::Read, Some("/srv/app"))
        );
        let r = one(&hook("web_fetch", json!({"url": "https://example.com/x"})));
        assert_eq!(r.destination.as_deref(), Some("example.com:443"));
        let r = one(&hook("mcp__github__create_issue", json!({"title": "t"})));
        assert_eq!(r.surface, Surface::Mcp);
        let r = one(&hook("agent", json!({"prompt": "look"})));
        assert_eq!(r.surface, Surface::Custom("Agent".into()));
        assert_eq!(r.tool.as_deref(), Some("agent"));
        let r = one(&hook("update_goal", json!({"goal": "g"})));
        assert_eq!(r.surface, Surface::Custom("update_goal".into()));
    }

    #[test]
    fn the_tool_call_bridge_is_judged_as_its_target() {
        let r = one(&hook(
            "tool_call",
            json!({"name": "run_shell_command", "arguments": {"command": "make"}}),
        ));
        assert_eq!(
            (r.surface, r.command.as_deref()),
            (Surface::Bash, Some("make"))
        );
        let r = one(&hook(
            "tool_call",
            json!({"name": "tool_call", "arguments": {"name": "x", "arguments": {}}}),
        ));
        assert_eq!(r.surface, Surface::Custom("tool_call".into()));
    }

    #[test]
    fn only_prompting_modes_have_a_human() {
        for (mode, human) in [
            ("default", true),
            ("plan", true),
            ("auto_edit", true),
            ("yolo", false),
            ("auto", false),
            ("bogus", false),
        ] {
            let mut v = hook("run_shell_command", json!({"command": "ls"}));
            v["permission_mode"] = mode.into();
            assert_eq!(call(&v).presence == Presence::Human, human, "{mode}");
        }
        let mut v = hook("run_shell_command", json!({"command": "ls"}));
        v.as_object_mut().unwrap().remove("permission_mode");
        assert!(matches!(call(&v).presence, Presence::Nobody(_)));
    }

    #[test]
    fn malformed_inputs_are_named() {
        let err = Qwen
            .parse(&hook("run_shell_command", json!({"cmd": "ls"})))
            .unwrap_err();
        assert!(err.to_string().contains("tool_input.command"), "{err}");
        let mut v = hook("run_shell_command", json!({"command": "ls"}));
        v["hook_event_name"] = "BeforeTool".into();
        assert!(matches!(Qwen.parse(&v), Err(HookError::UnknownEvent(_))));
        let mut v = hook("run_shell_command", json!({"command": "ls"}));
        v["cwd"] = "rel".into();
        assert!(Qwen.parse(&v).is_err());
    }

    #[test]
    fn replies_are_permission_decisions() {
        let Reply::Json(v) = Qwen.render("PreToolUse", &Answer::Deny("no".into())) else {
            panic!()
        };
        assert_eq!(
            v,
            json!({"hookSpecificOutput": {"hookEventName": "PreToolUse",
                "permissionDecision": "deny", "permissionDecisionReason": "no"}})
        );
        assert_eq!(
            Qwen.render("PreToolUse", &Answer::Abstain),
            Reply::Json(json!({}))
        );
    }

    #[test]
    fn the_snippet_blocks_when_vouch_cannot_run() {
        let (text, _) = hooks("/opt/vouch hook qwen --timeout 100", 100);
        let v: Value = serde_json::from_str(&text).unwrap();
        let pre = &v["hooks"]["PreToolUse"][0];
        assert_eq!(pre["matcher"], "");
        assert_eq!(pre["hooks"][0]["timeout"], 100);
        let command = pre["hooks"][0]["command"].as_str().unwrap();
        assert!(command.starts_with("/opt/vouch hook qwen --timeout 100 || {"));
        assert!(command.ends_with("exit 2; }"), "{command}");
        assert!(!FALLBACK_REASON.contains('\''));
        assert_eq!(
            v["hooks"]["PostToolUse"][0]["hooks"][0]["command"],
            "/opt/vouch hook qwen --timeout 100"
        );
        let (text, notes) = hooks("v", 1500);
        let v: Value = serde_json::from_str(&text).unwrap();
        assert_eq!(v["hooks"]["PreToolUse"][0]["hooks"][0]["timeout"], 999);
        assert!(notes.iter().any(|n| n.contains("milliseconds")));
    }

    #[test]
    fn qwen_records_become_entries() {
        let text =
            include_str!("../../../tests/fixtures/harnesses/qwen/transcript.at_pre_tool_use.jsonl");
        let t = transcript::parse(text, &QWEN_CHAT, true);
        assert_eq!(
            t.latest_user_id.as_deref(),
            Some("867866bd-79bf-43ed-9743-e443510f99e8")
        );
        assert_eq!(
            t.entries,
            vec![
                TranscriptEntry::User {
                    text: "please RUN<<<touch ran-x>>>".into()
                },
                TranscriptEntry::ToolCall {
                    tool_call_id: Some("call_e2e_1".into()),
                    tool_name: Some("run_shell_command".into()),
                    input: Some(
                        serde_json::json!({"command": "touch ran-x", "description": "e2e marker"})
                    ),
                },
            ]
        );
        let full =
            include_str!("../../../tests/fixtures/harnesses/qwen/transcript.after_run.jsonl");
        let t = transcript::parse(full, &QWEN_CHAT, true);
        assert!(t.entries.iter().any(|e| matches!(e,
            TranscriptEntry::ToolResult { tool_call_id: Some(id), text } if id == "call_e2e_1" && text.contains("Exit Code: 0"))));
    }
}
