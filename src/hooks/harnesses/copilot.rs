//! GitHub Copilot CLI (`preToolUse`, `postToolUse`), as `@github/copilot`
//! 1.0.102 behaves (`shared/harnesses/copilot-cli/PROTOCOL.md`, confirmed
//! with the pinned binary).
//!
//! - The native (camelCase) hook form is the one vouch installs: a file in
//!   `~/.copilot/hooks/` with `{"version": 1, "hooks": {"preToolUse": [{"type":
//!   "command", "bash": …, "timeoutSec": N}]}}`.
//! - Its payload names no event: `{sessionId, timestamp, cwd, toolName,
//!   toolArgs}`, and `postToolUse` adds `toolResult`. The event is read from
//!   the payload's shape: `toolResult` present is `postToolUse` (recorded for
//!   the audit, never decided), anything else with a tool is `preToolUse`
//!   (decided). Neither shape can turn into an allow by being misread: a
//!   `postToolUse` read as `preToolUse` is only decided once more.
//! - Reply `{"permissionDecision": "allow"|"deny"|"ask",
//!   "permissionDecisionReason": R}`, exit 0; the model sees `Denied by
//!   preToolUse hook: R`. `modifiedArgs` is never emitted. Copilot runs the
//!   tool on empty or non-JSON output and on a timeout, blocks on any
//!   non-zero exit: vouch always prints one object, within the deadline.
//! - `ask` in a headless `copilot -p` blocks the tool ("unable to ask user
//!   for confirmation") and nothing in the payload says whether a person is
//!   there, so a `defer` is a deny by default; `--defer-as ask` on the hook
//!   command line opts an interactive user in.
//! - No turn id, tool-call id or transcript path: the transcript is
//!   Copilot's session log, `<config dir>/session-state/<sessionId>/events.jsonl`
//!   (`$COPILOT_HOME`, else `$HOME/.copilot`), read when it is there. Copilot
//!   writes it in batches, so at `preToolUse` it may be missing or lag
//!   behind; the turn is then unknown.
//! - `userPromptSubmitted` (`{sessionId, timestamp, cwd, prompt}`, told
//!   apart by its `prompt`) records the session's latest prompt for the
//!   turn's tool calls, used when the session log holds no user message;
//!   the reply is always `{}`, so a prompt is never blocked.
//! - A Claude-style hook configuration (`PreToolUse` with a `matcher`) gets
//!   a Claude-shaped payload: vouch refuses it with a deny in the Claude
//!   shape that configuration honours, naming the native form to use.

use serde_json::{Value, json};

use crate::catalogue::{self, Entry};
use crate::hooks::settings::{Dir, Format, Install, JsonRules};
use crate::hooks::snippet::{self, SnippetContext};
use crate::hooks::tools::{self, Action, Ids};
use crate::hooks::transcript::{self, Line, str_of};
use crate::hooks::{
    Answer, Call, Event, Harness, HookError, Observed, Presence, Reply, TranscriptRef,
};
use crate::request::{Request, Surface, TranscriptEntry};

pub struct Copilot;

/// The adapter, for the registry (`build.rs`).
pub static HARNESS: Copilot = Copilot;

/// The harness's hook timeout when the configuration gives none (Copilot's
/// own default is 30 s; the snippet sets `timeoutSec` from vouch's deadline).
pub const DEFAULT_TIMEOUT_SECS: u64 = 30;

/// The pre-tool event (named on no payload; vouch's own name for it).
const PRE: &str = "preToolUse";
/// The after-the-fact event.
const POST: &str = "postToolUse";
/// The prompt event (named on no payload either: the one with `prompt`).
const PROMPT: &str = "userPromptSubmitted";
/// The event a Claude-style configuration names.
const CLAUDE_PRE: &str = "PreToolUse";

impl Harness for Copilot {
    fn entry(&self) -> &'static Entry {
        &catalogue::COPILOT
    }

    fn about(&self) -> &'static str {
        "GitHub Copilot CLI command hooks (preToolUse, postToolUse, userPromptSubmitted; the event from the payload's shape)."
    }

    fn default_timeout_secs(&self) -> u64 {
        DEFAULT_TIMEOUT_SECS
    }

    fn snippet(&self, ctx: &SnippetContext<'_>) -> Result<(String, Vec<String>), String> {
        Ok(hook_file(&ctx.command, ctx.timeout_secs))
    }

    fn install(&self) -> Option<Install> {
        Some(Install {
            // Copilot CLI's `COPILOT_HOME`, else `~/.copilot`; a hook file of
            // vouch's own among the user's hook files.
            dir: Dir::Env {
                var: Some("COPILOT_HOME"),
                home: ".copilot",
            },
            file: "hooks/vouch.json",
            format: Format::Json(JsonRules {
                off_switches: &[],
                force_true: &[],
            }),
        })
    }

    fn parse(&self, input: &Value) -> Result<Event, HookError> {
        if let Some(name) = tools::first_text(input, &["hook_event_name"]) {
            // A Claude-style configuration: vouch does not read it.
            return Err(HookError::BadInput {
                tool: "(event)".to_owned(),
                problem: format!(
                    "Copilot sent a Claude-style `{name}` payload; configure vouch with the native \
                     form that `vouch hook snippet copilot` prints"
                ),
            });
        }
        if let Some(event) = quiet(input) {
            if event == PROMPT {
                // Recorded for the turn's tool calls: the session log may
                // not hold the prompt yet when they arrive.
                return tools::prompt(input, event, &["sessionId"], None);
            }
            return Ok(Event::Ignore { event });
        }
        if input.get("toolResult").is_some() {
            // The tool already ran: an input vouch cannot read is the no-op
            // (the shared fault path would answer for `preToolUse`, the only
            // event it can name for a payload that names none).
            let request = match ids(input).and_then(|ids| requests(&ids, input)) {
                Ok(r) => r.into_iter().next(),
                Err(e) => {
                    let why = crate::evidence::redact::redact_text(&e.to_string()).into_owned();
                    tracing::warn!(event = POST, error = %why, "unreadable after-the-fact hook input");
                    None
                }
            };
            let Some(request) = request else {
                return Ok(Event::Ignore {
                    event: POST.to_owned(),
                });
            };
            let succeeded = input
                .get("toolResult")
                .and_then(|r| r.get("resultType"))
                .and_then(Value::as_str)
                .map(|t| t == "success");
            return Ok(Event::Observe(Box::new(Observed {
                request,
                succeeded,
                event: POST.to_owned(),
            })));
        }
        let ids = ids(input)?;
        let mut requests = requests(&ids, input)?;
        // `modifiedArgs` runs the rewritten arguments (camelCase
        // configuration only: its Claude-style `updatedInput` is ignored).
        crate::hooks::runs_rewritten(&mut requests, &["bash"]);
        Ok(Event::Decide(Call {
            requests,
            transcript: transcript(&ids.session_id),
            presence: Presence::Nobody(
                "GitHub Copilot CLI's hook input does not say whether a person is watching, \
                 and a headless run refuses \"ask\"",
            ),
            turn_from_transcript: true,
            event: PRE.to_owned(),
        }))
    }

    fn render(&self, event: &str, answer: &Answer) -> Reply {
        if event == CLAUDE_PRE {
            // Only a refusal reaches here (see `parse`); the Claude shape is
            // the one that configuration reads.
            return match answer {
                Answer::Abstain => Reply::Json(json!({})),
                Answer::Allow(r) => super::claude_code::pre_tool_use("allow", r),
                Answer::Deny(r) => super::claude_code::pre_tool_use("deny", r),
                Answer::Ask(r) => super::claude_code::pre_tool_use("ask", r),
                // Never asked for here: this configuration ignores a rewrite.
                Answer::AllowConfined { .. } => super::claude_code::pre_tool_use(
                    "deny",
                    &crate::hooks::cannot_rewrite(
                        "GitHub Copilot CLI's Claude-style configuration",
                    ),
                ),
            };
        }
        Reply::Json(match answer {
            Answer::Abstain => json!({}),
            Answer::Allow(_) => json!({"permissionDecision": "allow"}),
            Answer::AllowConfined { confined, .. } => json!({
                "permissionDecision": "allow",
                "modifiedArgs": confined.input.clone().unwrap_or_else(|| json!({"command": confined.command})),
            }),
            Answer::Deny(reason) => {
                json!({"permissionDecision": "deny", "permissionDecisionReason": reason})
            }
            Answer::Ask(reason) => {
                json!({"permissionDecision": "ask", "permissionDecisionReason": reason})
            }
        })
    }

    fn no_op(&self, _event: &str) -> Reply {
        Reply::Json(json!({}))
    }

    fn prompt_events(&self) -> &'static [&'static str] {
        &[PROMPT]
    }

    fn after_events(&self) -> &'static [&'static str] {
        &[POST]
    }

    fn primary_event(&self) -> &'static str {
        PRE
    }
}

/// Events about no tool, by their shape: `permissionRequest` (it names
/// itself in `hookName`; vouch decided in `preToolUse` already) and the
/// session, prompt and stop events, which carry no tool at all. Anything
/// naming a tool is decided or observed; anything else is an error.
fn quiet(input: &Value) -> Option<String> {
    if let Some(name) = tools::first_text(input, &["hookName"]) {
        return (name == "permissionRequest").then(|| name.to_owned());
    }
    let names_tool = ["toolName", "toolArgs", "toolInput", "toolResult"]
        .iter()
        .any(|k| input.get(*k).is_some());
    let session_keys: &[(&str, &str)] = &[
        ("initialPrompt", "sessionStart"),
        ("stopReason", "agentStop"),
        ("prompt", PROMPT),
        ("reason", "sessionEnd"),
    ];
    if names_tool {
        return None;
    }
    session_keys
        .iter()
        .find(|(key, _)| input.get(*key).is_some())
        .map(|(_, event)| (*event).to_owned())
}

fn ids(input: &Value) -> Result<Ids, HookError> {
    let session_id = tools::first_text(input, &["sessionId"])
        .ok_or(HookError::MissingField("sessionId"))?
        .to_owned();
    let cwd = input.get("cwd").and_then(Value::as_str);
    if let Some(cwd) = cwd.filter(|c| !c.is_empty() && !c.starts_with('/')) {
        return Err(HookError::BadInput {
            tool: "(event)".to_owned(),
            problem: format!("field `cwd` must be an absolute path, got `{cwd}`"),
        });
    }
    Ok(Ids {
        source: "copilot",
        session_id,
        turn_id: None,
        tool_call_id: None,
        agent: None,
        cwd: tools::absolute(cwd),
    })
}

/// The session log, where Copilot keeps it for this process's environment.
fn transcript(session_id: &str) -> Option<TranscriptRef> {
    let dir = std::env::var("COPILOT_HOME")
        .ok()
        .filter(|d| d.starts_with('/'))
        .or_else(|| {
            std::env::var("HOME")
                .ok()
                .filter(|h| h.starts_with('/'))
                .map(|h| format!("{}/.copilot", h.trim_end_matches('/')))
        })?;
    transcript_in(&dir, session_id)
}

/// `<dir>/session-state/<session>/events.jsonl`, for a session id that is
/// one plain path component.
pub fn transcript_in(config_dir: &str, session_id: &str) -> Option<TranscriptRef> {
    let plain = !session_id.is_empty()
        && session_id.len() <= 128
        && session_id
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_');
    plain.then(|| TranscriptRef {
        path: format!(
            "{}/session-state/{session_id}/events.jsonl",
            config_dir.trim_end_matches('/')
        ),
        format: &SESSION_EVENTS,
    })
}

fn requests(ids: &Ids, input: &Value) -> Result<Vec<Request>, HookError> {
    let tool =
        tools::first_text(input, &["toolName"]).ok_or(HookError::MissingField("toolName"))?;
    let empty = Value::Object(serde_json::Map::new());
    let args = match input.get("toolArgs") {
        None | Some(Value::Null) => &empty,
        Some(v @ Value::Object(_)) => v,
        Some(_) => {
            return Err(HookError::BadInput {
                tool: tool.to_owned(),
                problem: "field `toolArgs` is not a JSON object".to_owned(),
            });
        }
    };
    actions(tool, args, ids.cwd.as_deref())?
        .into_iter()
        .map(|a| tools::request(ids, a))
        .collect()
}

/// Maps one Copilot tool onto actions.
pub fn actions(tool: &str, args: &Value, cwd: Option<&str>) -> Result<Vec<Action>, HookError> {
    let path = |field: &'static str| tools::text(args, tool, field);
    Ok(match tool {
        "bash" | "powershell" => vec![tools::shell(
            tool,
            tools::text(args, tool, "command")?,
            args,
            &["command"],
        )],
        // Keystrokes into a running shell are commands too.
        "write_bash" | "write_powershell" => vec![tools::shell(
            tool,
            tools::text(args, tool, "input")?,
            args,
            &["input"],
        )],
        "create" => vec![tools::file(Surface::Write, tool, &path("path")?, cwd, args)],
        "edit" | "str_replace" | "insert" => {
            vec![tools::file(Surface::Edit, tool, &path("path")?, cwd, args)]
        }
        "view" => vec![tools::file(Surface::Read, tool, &path("path")?, cwd, args)],
        "glob" | "grep" => searched(tool, args, cwd)?,
        "web_fetch" => vec![tools::network(tool, "url", &path("url")?, args)?],
        name => vec![tools::custom(name, args)],
    })
}

/// A search reads each directory or file it names, else `cwd`.
fn searched(tool: &str, args: &Value, cwd: Option<&str>) -> Result<Vec<Action>, HookError> {
    let paths: Vec<String> = match args.get("paths").or_else(|| args.get("path")) {
        Some(Value::String(s)) => vec![s.clone()],
        Some(Value::Array(items)) => items
            .iter()
            .filter_map(Value::as_str)
            .map(str::to_owned)
            .collect(),
        Some(_) | None => Vec::new(),
    };
    let paths = tools::bounded(tool, paths)?;
    if paths.is_empty() {
        return Ok(vec![tools::file(Surface::Read, tool, ".", cwd, args)]);
    }
    Ok(paths
        .iter()
        .map(|p| tools::file(Surface::Read, tool, p, cwd, args))
        .collect())
}

/// The hook file for `~/.copilot/hooks/vouch.json` and the notes for the
/// user. `postToolUse` tells the audit which deferred or denied calls ran
/// anyway (the arguments it sees are the final ones, after any later hook).
fn hook_file(command: &str, timeout_secs: u64) -> (String, Vec<String>) {
    let entry =
        |command: &str| json!([{"type": "command", "bash": command, "timeoutSec": timeout_secs}]);
    // Copilot blocks when a hook exits non-zero or cannot start.
    let prompt = snippet::prompt_never_blocks(command);
    let v = json!({"version": 1, "hooks": {
        PROMPT: entry(&prompt),
        PRE: entry(command),
        POST: entry(command),
    }});
    let text = snippet::pretty(&v);
    let notes = vec![
        "Save as ~/.copilot/hooks/vouch.json (your user hooks; $COPILOT_HOME/hooks/ when you set \
         COPILOT_HOME)."
            .to_owned(),
        "Copilot runs the tool when a hook times out or prints nothing: `timeoutSec` is above \
         vouch's deadline so vouch answers first. Copilot blocks when the hook exits non-zero or \
         cannot start."
            .to_owned(),
        "Hooks in a trusted repository's .github/hooks/ run after vouch's and can rewrite the \
         arguments it allowed; its .github/copilot/settings.json can set disableAllHooks. vouch \
         denies the agent writing them, and the audit counts a call that ran with arguments vouch \
         did not decide on as `ran_unreviewed` (docs/harnesses/copilot.md)."
            .to_owned(),
    ];
    (text, notes)
}

// ---------------------------------------------------------------------------
// The transcript: the session log
// ---------------------------------------------------------------------------

/// GitHub Copilot CLI session events
/// (`~/.copilot/session-state/<session>/events.jsonl`).
#[derive(Debug)]
pub struct SessionEvents;
pub static SESSION_EVENTS: SessionEvents = SessionEvents;

impl transcript::Format for SessionEvents {
    fn lines(&self, records: Vec<Value>) -> Vec<Line> {
        records.iter().map(copilot_line).collect()
    }
}

/// One Copilot session event `{type, data, id, …}`: `user.message` (the
/// user's text, its `messageId` the turn), `assistant.message` (its
/// `toolRequests`), `tool.execution_complete` (the result) and compaction
/// summaries (`session.compaction_complete`). Hooks, usage and system
/// prompts are left out.
fn copilot_line(v: &Value) -> Line {
    let mut line = Line::default();
    let data = v.get("data").unwrap_or(&Value::Null);
    match str_of(v, "type").unwrap_or_default() {
        "user.message" => {
            let text = str_of(data, "content").unwrap_or_default();
            // `source` marks a message the harness injected (a skill, another
            // agent); an autopilot continuation is not the user's either.
            let injected = str_of(data, "source").is_some_and(|s| !s.is_empty())
                || data.get("isAutopilotContinuation").and_then(Value::as_bool) == Some(true);
            if !injected && !text.trim().is_empty() {
                line.entries.push(TranscriptEntry::User {
                    text: text.to_owned(),
                });
                line.user_id = Some(
                    str_of(data, "messageId")
                        .or_else(|| str_of(v, "id"))
                        .map(str::to_owned),
                );
            }
        }
        "assistant.message" => {
            let text = str_of(data, "content").unwrap_or_default();
            if !text.trim().is_empty() {
                line.entries.push(TranscriptEntry::Assistant {
                    text: text.to_owned(),
                });
            }
            for call in data
                .get("toolRequests")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
            {
                line.entries.push(TranscriptEntry::ToolCall {
                    tool_call_id: str_of(call, "toolCallId").map(str::to_owned),
                    tool_name: str_of(call, "name").map(str::to_owned),
                    input: call.get("arguments").cloned(),
                });
            }
        }
        "tool.execution_complete" => {
            let result = data.get("result");
            let text = result
                .and_then(|r| str_of(r, "content"))
                .map(str::to_owned)
                .or_else(|| result.map(Value::to_string))
                .unwrap_or_default();
            line.entries.push(TranscriptEntry::ToolResult {
                tool_call_id: str_of(data, "toolCallId").map(str::to_owned),
                text,
            });
        }
        "session.compaction_complete" => {
            if let Some(text) = str_of(data, "summaryContent") {
                line.entries.push(TranscriptEntry::Summary {
                    text: text.to_owned(),
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

    fn pre(tool: &str, args: Value) -> Value {
        json!({"sessionId": "5d103ec3-9d10", "timestamp": 1, "cwd": "/p",
               "toolName": tool, "toolArgs": args})
    }

    #[test]
    fn the_event_comes_from_the_payload_shape() {
        let e = Copilot
            .parse(&pre("bash", json!({"command": "ls"})))
            .unwrap();
        assert!(matches!(e, Event::Decide(ref c) if c.event == "preToolUse"));
        let mut post = pre("bash", json!({"command": "ls"}));
        post["toolResult"] = json!({"resultType": "success", "textResultForLlm": "x"});
        let Event::Observe(o) = Copilot.parse(&post).unwrap() else {
            panic!("postToolUse is observed");
        };
        assert_eq!(o.succeeded, Some(true));
        assert_eq!(o.request.command.as_deref(), Some("ls"));
    }

    #[test]
    fn tools_map_onto_surfaces() {
        let one = |tool: &str, args: Value| {
            let a = actions(tool, &args, Some("/p")).unwrap();
            (
                a[0].surface.as_str().to_owned(),
                a[0].path.clone(),
                a[0].command.clone(),
            )
        };
        assert_eq!(
            one("bash", json!({"command": "ls", "description": "d"}))
                .2
                .as_deref(),
            Some("ls")
        );
        assert_eq!(
            one("create", json!({"path": "a.txt", "file_text": "x"}))
                .1
                .as_deref(),
            Some("/p/a.txt")
        );
        assert_eq!(one("edit", json!({"path": "/x/b"})).0, "edit");
        assert_eq!(one("view", json!({"path": "c"})).0, "read");
        assert_eq!(
            one("grep", json!({"pattern": "x"})).1.as_deref(),
            Some("/p")
        );
        assert_eq!(
            one("write_bash", json!({"shellId": "0", "input": "rm -rf x\n"})).0,
            "bash"
        );
        assert!(actions("bash", &json!({}), None).is_err());
        assert!(actions("create", &json!({"file_text": "x"}), None).is_err());
        let a = actions(
            "glob",
            &json!({"pattern": "*", "paths": ["a", "/b"]}),
            Some("/p"),
        )
        .unwrap();
        assert_eq!(a.len(), 2);
    }

    #[test]
    fn bad_payloads_are_errors() {
        assert!(Copilot.parse(&json!({"toolName": "bash"})).is_err());
        assert!(
            Copilot
                .parse(&json!({"sessionId": "s", "cwd": "/p"}))
                .is_err()
        );
        let Ok(Event::Prompt(prompt)) = Copilot.parse(&json!({"sessionId": "s", "prompt": "hi"}))
        else {
            panic!("a payload with `prompt` is the prompt event");
        };
        assert_eq!(
            (
                prompt.event.as_str(),
                prompt.session_id.as_str(),
                prompt.text.as_str()
            ),
            (PROMPT, "s", "hi")
        );
        assert!(
            Copilot.parse(&json!({"prompt": "hi"})).is_err(),
            "no session"
        );
        // A prompt key does not hide a tool.
        assert!(matches!(
            Copilot.parse(&json!({"sessionId": "s", "cwd": "/p", "prompt": "hi",
                                  "toolName": "bash", "toolArgs": {"command": "ls"}})),
            Ok(Event::Decide(_))
        ));
        assert!(Copilot.parse(&pre("bash", json!("ls"))).is_err());
        let mut rel = pre("bash", json!({"command": "ls"}));
        rel["cwd"] = json!("p");
        assert!(Copilot.parse(&rel).is_err());
        let claude = json!({"hook_event_name": "PreToolUse", "session_id": "s",
                            "tool_name": "Bash", "tool_input": {"command": "ls"}});
        assert!(Copilot.parse(&claude).is_err());
    }

    #[test]
    fn replies_are_copilot_objects_and_never_rewrite_arguments() {
        assert_eq!(
            Copilot.render(PRE, &Answer::Abstain),
            Reply::Json(json!({}))
        );
        assert_eq!(
            Copilot.render(PRE, &Answer::Deny("r".into())),
            Reply::Json(json!({"permissionDecision": "deny", "permissionDecisionReason": "r"}))
        );
        assert_eq!(
            Copilot.render(PRE, &Answer::Allow("r".into())),
            Reply::Json(json!({"permissionDecision": "allow"}))
        );
        let Reply::Json(claude) = Copilot.render(CLAUDE_PRE, &Answer::Deny("r".into())) else {
            panic!("a Claude-style refusal is JSON");
        };
        assert_eq!(claude["hookSpecificOutput"]["permissionDecision"], "deny");
        for a in [
            Answer::Abstain,
            Answer::Allow("a".into()),
            Answer::Deny("d".into()),
            Answer::Ask("q".into()),
        ] {
            assert!(!Copilot.render(PRE, &a).to_stdout().contains("modifiedArgs"));
        }
    }

    #[test]
    fn the_transcript_path_takes_only_a_plain_session_id() {
        let t = transcript_in("/h/.copilot/", "5d103ec3-9d10").unwrap();
        assert_eq!(
            t.path,
            "/h/.copilot/session-state/5d103ec3-9d10/events.jsonl"
        );
        assert!(transcript_in("/h/.copilot", "../x").is_none());
        assert!(transcript_in("/h/.copilot", "").is_none());
    }

    #[test]
    fn the_snippet_is_native_and_outlives_vouchs_deadline() {
        let (text, notes) = hook_file("/bin/vouch hook copilot", 40);
        let v: Value = serde_json::from_str(&text).unwrap();
        assert_eq!(v["version"], 1);
        for e in ["preToolUse", "postToolUse"] {
            assert_eq!(v["hooks"][e][0]["bash"], "/bin/vouch hook copilot");
            assert_eq!(v["hooks"][e][0]["timeoutSec"], 40);
        }
        assert!(notes.iter().any(|n| n.contains(".copilot/hooks/")));
    }

    #[test]
    fn copilot_session_events_become_entries() {
        // The pinned binary's own log (hooks, usage and the system prompt
        // left in place or cut), an injected skill message, a cut last line.
        let text = include_str!("../../../tests/fixtures/harnesses/copilot/events.jsonl");
        let t = transcript::parse(text, &SESSION_EVENTS, true);
        assert_eq!(
            t.latest_user_id.as_deref(),
            Some("6410d22e-3e49-44c1-a643-1c095d6efb83")
        );
        let users: Vec<_> = t
            .entries
            .iter()
            .filter(|e| matches!(e, TranscriptEntry::User { .. }))
            .collect();
        assert_eq!(
            users,
            [&TranscriptEntry::User {
                text: "RUN<<<touch ran-1>>>".into()
            }]
        );
        assert!(t.entries.contains(&TranscriptEntry::ToolCall {
            tool_call_id: Some("call_e2e_1".into()),
            tool_name: Some("bash".into()),
            input: Some(serde_json::json!({"command": "touch ran-1", "description": "e2e marker"})),
        }));
        assert!(t.entries.iter().any(|e| matches!(e,
            TranscriptEntry::ToolResult { tool_call_id: Some(id), text }
                if id == "call_e2e_1" && text.contains("exit code 0"))));
    }
}
