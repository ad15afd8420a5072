//! Gemini CLI (`BeforeTool`, `AfterTool`), as 0.61.0 behaves
//! (`shared/harnesses/gemini/PROTOCOL.md`).
//!
//! - Gemini uses a JSON object on stdout whatever the exit code, and runs
//!   the tool on empty or non-JSON output, on exit 1, on a signal or a
//!   timeout: so the reply is always one object, exit 0.
//! - `{"decision": "allow"}`, `{"decision": "deny", "reason": …}` (the
//!   model sees `Tool execution blocked: <reason>`), `{}` for no opinion.
//!   `ask` hangs a headless `gemini -p` and nothing in the hook input says
//!   whether a person is there, so a `defer` is a deny by default;
//!   `--defer-as ask` on the hook command line opts an interactive user in.
//! - No turn id and no tool-call id: the turn is the id of the transcript's
//!   latest user record (the transcript already holds the prompt when
//!   `BeforeTool` fires).
//! - `tool_input` is the model's raw arguments: relative paths are resolved
//!   against `cwd`; `web_fetch` names its URLs inside `prompt`; MCP tools are
//!   `mcp_<server>_<tool>` with `mcp_context`.
//! - `BeforeAgent` (`session_id, prompt`, before the agent loop of a
//!   prompt) records the session's latest prompt for its tool calls, used
//!   when the chat file holds no user message; the reply is always `{}`, so
//!   a prompt is never blocked.

use serde_json::{Value, json};

use crate::catalogue::{self, Entry};
use crate::hooks::settings::{Dir, Format, Install, JsonRules};
use crate::hooks::snippet::{self, SnippetContext};
use crate::hooks::tools::{self, Action, Ids};
use crate::hooks::transcript;
use crate::hooks::{
    Answer, Call, Event, Harness, HookError, Observed, Presence, Reply, TranscriptRef,
};
use crate::request::{Request, Surface};

pub struct Gemini;

/// The adapter, for the registry (`build.rs`).
pub static HARNESS: Gemini = Gemini;

const QUIET_EVENTS: &[&str] = &[
    "AfterAgent",
    "BeforeModel",
    "AfterModel",
    "BeforeToolSelection",
    "SessionStart",
    "SessionEnd",
    "PreCompress",
    "Notification",
];

impl Harness for Gemini {
    fn entry(&self) -> &'static Entry {
        &catalogue::GEMINI
    }

    fn about(&self) -> &'static str {
        "Gemini CLI command hooks (BeforeTool, AfterTool, BeforeAgent)."
    }

    fn default_timeout_secs(&self) -> u64 {
        60
    }

    fn snippet(&self, ctx: &SnippetContext<'_>) -> Result<(String, Vec<String>), String> {
        let mut notes = vec!["Merge into ~/.gemini/settings.json (your user settings).".to_owned()];
        if ctx.command.contains('$') {
            notes.push(
                "warning: Gemini CLI expands `$` in settings strings; move vouch to a path \
                 without `$`."
                    .to_owned(),
            );
        }
        Ok((
            snippet::pretty(&hooks(&ctx.command, ctx.timeout_secs)),
            notes,
        ))
    }

    fn install(&self) -> Option<Install> {
        Some(Install {
            // `GEMINI_CLI_HOME` stands in for the home directory (0.61.0).
            dir: Dir::EnvJoin {
                var: "GEMINI_CLI_HOME",
                below: ".gemini",
                home: ".gemini",
            },
            file: "settings.json",
            // `hooksConfig.enabled = false` conflicts with the fragment's
            // `true`: install refuses it, naming the key.
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
        match event.as_str() {
            "BeforeTool" => {
                let ids = ids(input)?;
                let mut requests = requests(&ids, input)?;
                // `hookSpecificOutput.tool_input` merges into the call's
                // arguments (checked with the binary: e2e/harnesses/run.sh).
                crate::hooks::runs_rewritten(&mut requests, &["run_shell_command"]);
                Ok(Event::Decide(Call {
                    requests,
                    transcript: transcript(input),
                    presence: Presence::Nobody(
                        "Gemini CLI's hook input does not say whether a person is watching, \
                         and a headless run hangs on \"ask\"",
                    ),
                    turn_from_transcript: true,
                    event,
                }))
            }
            "AfterTool" => {
                let ids = ids(input)?;
                let request = requests(&ids, input)?
                    .into_iter()
                    .next()
                    .ok_or(HookError::MissingField("tool_input"))?;
                let succeeded = input
                    .get("tool_response")
                    .map(|r| r.get("error").is_none_or(Value::is_null));
                Ok(Event::Observe(Box::new(Observed {
                    request,
                    succeeded,
                    event,
                })))
            }
            // Recorded for the turn's tool calls, in case the chat file
            // does not hold the prompt when they arrive.
            "BeforeAgent" => tools::prompt(input, event, &["session_id"], None),
            name if QUIET_EVENTS.contains(&name) => Ok(Event::Ignore { event }),
            _ => Err(HookError::UnknownEvent(event)),
        }
    }

    fn render(&self, _event: &str, answer: &Answer) -> Reply {
        Reply::Json(match answer {
            Answer::Abstain => json!({}),
            Answer::Allow(_) => json!({"decision": "allow"}),
            Answer::AllowConfined { confined, .. } => json!({
                "decision": "allow",
                "hookSpecificOutput": {
                    "hookEventName": "BeforeTool",
                    "tool_input": {"command": confined.command},
                },
            }),
            Answer::Deny(reason) => json!({"decision": "deny", "reason": reason}),
            // Gemini's own confirmation dialog shows `systemMessage`.
            Answer::Ask(reason) => {
                json!({"decision": "ask", "reason": reason, "systemMessage": reason})
            }
        })
    }

    fn no_op(&self, _event: &str) -> Reply {
        Reply::Json(json!({}))
    }

    fn prompt_events(&self) -> &'static [&'static str] {
        &["BeforeAgent"]
    }

    fn after_events(&self) -> &'static [&'static str] {
        &["AfterTool"]
    }

    fn primary_event(&self) -> &'static str {
        "BeforeTool"
    }
}

fn ids(input: &Value) -> Result<Ids, HookError> {
    Ok(Ids {
        source: "gemini",
        session_id: tools::first_text(input, &["session_id"])
            .ok_or(HookError::MissingField("session_id"))?
            .to_owned(),
        turn_id: None,
        tool_call_id: None,
        agent: None,
        cwd: tools::absolute(input.get("cwd").and_then(Value::as_str)),
    })
}

fn transcript(input: &Value) -> Option<TranscriptRef> {
    tools::first_text(input, &["transcript_path"]).map(|p| TranscriptRef {
        path: p.to_owned(),
        format: &transcript::GEMINI,
    })
}

fn requests(ids: &Ids, input: &Value) -> Result<Vec<Request>, HookError> {
    let tool =
        tools::first_text(input, &["tool_name"]).ok_or(HookError::MissingField("tool_name"))?;
    let empty = Value::Object(serde_json::Map::new());
    let ti = input.get("tool_input").unwrap_or(&empty);
    actions(tool, ti, ids.cwd.as_deref(), input.get("mcp_context"))?
        .into_iter()
        .map(|a| tools::request(ids, a))
        .collect()
}

/// Maps one Gemini tool onto actions.
pub fn actions(
    tool: &str,
    ti: &Value,
    cwd: Option<&str>,
    mcp_context: Option<&Value>,
) -> Result<Vec<Action>, HookError> {
    let path = |fields: &[&'static str]| {
        tools::first_text(ti, fields)
            .map(str::to_owned)
            .ok_or_else(|| HookError::MissingInput {
                tool: tool.to_owned(),
                field: fields.first().copied().unwrap_or("file_path"),
            })
    };
    // Searches and listings read the directory they name, else `cwd`.
    let dir = || tools::first_text(ti, &["dir_path", "path", "directory"]).unwrap_or(".");
    Ok(match tool {
        "run_shell_command" => {
            let mut a = tools::shell(tool, tools::text(ti, tool, "command")?, ti, &["command"]);
            // The command runs in `dir_path` when given.
            a.cwd = tools::first_text(ti, &["dir_path", "directory"])
                .map(|d| tools::resolve(d, cwd))
                .filter(|d| d.starts_with('/'));
            vec![a]
        }
        "write_file" => vec![tools::file(
            Surface::Write,
            tool,
            &path(&["file_path", "absolute_path"])?,
            cwd,
            ti,
        )],
        "replace" | "edit" => vec![tools::file(
            Surface::Edit,
            tool,
            &path(&["file_path", "absolute_path"])?,
            cwd,
            ti,
        )],
        "read_file" => vec![tools::file(
            Surface::Read,
            tool,
            &path(&["file_path", "absolute_path"])?,
            cwd,
            ti,
        )],
        "read_many_files" => read_many(tool, ti, cwd)?,
        "list_directory" | "glob" | "search_file_content" | "grep_search" => {
            vec![tools::file(Surface::Read, tool, dir(), cwd, ti)]
        }
        "web_fetch" => web_fetch(tool, ti)?,
        "google_web_search" => vec![tools::network_unknown(tool, ti)],
        name if name.starts_with("mcp_") => match mcp_context {
            Some(ctx) => vec![mcp(tool, ti, ctx)],
            None => vec![tools::custom(name, ti)],
        },
        name => vec![tools::custom(name, ti)],
    })
}

/// One read per named path (or pattern), else the directory.
fn read_many(tool: &str, ti: &Value, cwd: Option<&str>) -> Result<Vec<Action>, HookError> {
    let paths: Vec<String> = ["paths", "include"]
        .iter()
        .filter_map(|k| ti.get(*k).and_then(Value::as_array))
        .flatten()
        .filter_map(Value::as_str)
        .map(str::to_owned)
        .collect();
    let paths = tools::bounded(tool, paths)?;
    if paths.is_empty() {
        let dir = tools::first_text(ti, &["dir_path", "path", "directory"]).unwrap_or(".");
        return Ok(vec![tools::file(Surface::Read, tool, dir, cwd, ti)]);
    }
    Ok(paths
        .iter()
        .map(|p| tools::file(Surface::Read, tool, p, cwd, ti))
        .collect())
}

/// One network action per URL: `url`, else those named in `prompt`.
fn web_fetch(tool: &str, ti: &Value) -> Result<Vec<Action>, HookError> {
    let mut urls: Vec<String> = tools::first_text(ti, &["url"])
        .map(str::to_owned)
        .into_iter()
        .collect();
    urls.extend(
        tools::first_text(ti, &["prompt"])
            .map(tools::urls_in)
            .unwrap_or_default(),
    );
    urls.dedup();
    let urls = tools::bounded(tool, urls)?;
    if urls.is_empty() {
        return Err(HookError::BadInput {
            tool: tool.to_owned(),
            problem: "names no http(s) URL".to_owned(),
        });
    }
    urls.iter()
        .map(|u| tools::network(tool, "prompt", u, ti))
        .collect()
}

/// An MCP tool with the server it runs on as part of what is judged.
fn mcp(tool: &str, ti: &Value, ctx: &Value) -> Action {
    let mut input = ti.clone();
    if let Some(obj) = input.as_object_mut() {
        obj.insert("mcp_context".to_owned(), ctx.clone());
    }
    tools::mcp(tool, &input, ctx.get("url").and_then(Value::as_str))
}

fn hooks(command: &str, timeout: u64) -> Value {
    let ms = timeout.saturating_mul(1000);
    let entry = |command: &str| {
        json!([{"matcher": "", "hooks": [{
            "name": "vouch", "type": "command", "command": command, "timeout": ms,
        }]}])
    };
    // Gemini stops the agent when a `BeforeAgent` hook cannot start.
    let prompt = snippet::prompt_never_blocks(command);
    json!({
        "hooks": {
            "BeforeAgent": entry(&prompt),
            "BeforeTool": entry(command),
            "AfterTool": entry(command),
        },
        "hooksConfig": {"enabled": true},
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn web_fetch_names_each_url() {
        let a = actions(
            "web_fetch",
            &json!({"prompt": "compare https://a.example/x and https://b.example/y"}),
            Some("/p"),
            None,
        )
        .unwrap();
        let d: Vec<_> = a.iter().map(|a| a.destination.clone().unwrap()).collect();
        assert_eq!(d, ["a.example:443", "b.example:443"]);
        assert!(actions("web_fetch", &json!({"prompt": "no url"}), None, None).is_err());
    }

    #[test]
    fn shell_commands_run_in_dir_path() {
        let a = actions(
            "run_shell_command",
            &json!({"command": "ls", "dir_path": "sub"}),
            Some("/p"),
            None,
        )
        .unwrap();
        assert_eq!(a[0].cwd.as_deref(), Some("/p/sub"));
        assert_eq!(a[0].input, Some(json!({"dir_path": "sub"})));
    }

    #[test]
    fn replies_are_always_one_object() {
        assert_eq!(
            Gemini.render("BeforeTool", &Answer::Abstain),
            Reply::Json(json!({}))
        );
        assert_eq!(
            Gemini.render("BeforeTool", &Answer::Deny("r".into())),
            Reply::Json(json!({"decision": "deny", "reason": "r"}))
        );
    }
}
