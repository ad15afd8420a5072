//! Codex CLI (`PreToolUse`, `PermissionRequest`, `PostToolUse`), as 0.171.0
//! behaves (`shared/harnesses/codex/PROTOCOL.md`).
//!
//! Codex runs the command on any reply it cannot use — non-JSON output,
//! exit 1, an unknown extra field, `allow` or `ask` at `PreToolUse`, a
//! timeout — so replies are exactly its schemas (`additionalProperties:
//! false`) and nothing else:
//! - `PreToolUse` can only deny. Allow and abstain are an empty stdout
//!   (Codex's own sandbox and approval flow go on); there is no "ask", so a
//!   `defer` is a deny that says a human must approve.
//! - `PermissionRequest` (only when Codex would ask for approval): behavior
//!   `allow` or `deny`; "ask" is no output, which hands the request to
//!   Codex's approval flow — a person only when the turn's
//!   `approvals_reviewer` (read from the rollout) is `user`; otherwise
//!   (`auto_review`, `codex exec --approve-for-me`) a `defer` denies.
//! - The turn is `turn_id`; the tool-use id is the model's `call_id`.
//! - `UserPromptSubmit` (`session_id, turn_id, prompt`) records the
//!   session's latest prompt for the turn's tool calls (used when the
//!   rollout holds no user message yet); the reply is always the empty
//!   no-op, so a prompt is never blocked.

use std::path::Path;

use serde_json::{Value, json};
use sha2::{Digest, Sha256};

use crate::catalogue::{self, Entry};
use crate::hooks::settings::{Dir, Format, Install};
use crate::hooks::snippet::SnippetContext;
use crate::hooks::tools::{self, Action, Ids};
use crate::hooks::transcript::{self, Transcript};
use crate::hooks::{
    Answer, Call, Event, Harness, HookError, Observed, Presence, Reply, TranscriptRef,
};
use crate::request::canonical_json;
use crate::request::{Request, Surface};

pub struct Codex;

/// The adapter, for the registry (`build.rs`).
pub static HARNESS: Codex = Codex;

const QUIET_EVENTS: &[&str] = &[
    "SessionStart",
    "SessionEnd",
    "Stop",
    "SubagentStart",
    "SubagentStop",
    "PreCompact",
    "PostCompact",
    "Interrupt",
];

/// Why "ask" is impossible at `PreToolUse`.
pub const PRE_TOOL_USE_NOBODY: &str = "Codex's PreToolUse hook cannot ask a human";

impl Harness for Codex {
    fn entry(&self) -> &'static Entry {
        &catalogue::CODEX
    }

    fn about(&self) -> &'static str {
        "Codex CLI command hooks (PreToolUse, PermissionRequest, PostToolUse, UserPromptSubmit)."
    }

    fn default_timeout_secs(&self) -> u64 {
        600
    }

    fn snippet(&self, ctx: &SnippetContext<'_>) -> Result<(String, Vec<String>), String> {
        let note = format!(
            "Append to {} (your user config). The [hooks.state] keys assume these are the first \
             hooks of each event there; `codex app-server` `hooks/list` shows the hashes Codex \
             expects.",
            ctx.opts.codex_config.display()
        );
        Ok((
            hooks_toml(&ctx.command, ctx.timeout_secs, &ctx.opts.codex_config),
            vec![note],
        ))
    }

    fn install(&self) -> Option<Install> {
        Some(Install {
            dir: Dir::Env {
                var: Some("CODEX_HOME"),
                home: ".codex",
            },
            file: "config.toml",
            format: Format::CodexToml,
        })
    }

    fn parse(&self, input: &Value) -> Result<Event, HookError> {
        let event = tools::first_text(input, &["hook_event_name"])
            .ok_or(HookError::MissingField("hook_event_name"))?
            .to_owned();
        match event.as_str() {
            "PreToolUse" | "PermissionRequest" => {
                let ids = ids(input)?;
                let mut requests = requests(&ids, input)?;
                // PreToolUse runs `updatedInput`'s command with an allow
                // (0.171, checked with the binary: e2e/harnesses/run.sh).
                if event == "PreToolUse" {
                    crate::hooks::runs_rewritten(&mut requests, &["Bash"]);
                }
                // PermissionRequest: who answers is only known from the
                // transcript; until then, nobody (see `run`).
                let presence = Presence::Nobody(if event == "PreToolUse" {
                    PRE_TOOL_USE_NOBODY
                } else {
                    "Codex's approval reviewer for this turn is not a person"
                });
                Ok(Event::Decide(Call {
                    turn_from_transcript: ids.turn_id.is_none(),
                    requests,
                    transcript: transcript(input),
                    presence,
                    event,
                }))
            }
            "PostToolUse" => {
                let ids = ids(input)?;
                let request = requests(&ids, input)?
                    .into_iter()
                    .next()
                    .ok_or(HookError::MissingField("tool_input"))?;
                Ok(Event::Observe(Box::new(Observed {
                    request,
                    succeeded: None,
                    event,
                })))
            }
            // Recorded for the turn's tool calls, in case the rollout does
            // not hold the prompt yet when they arrive.
            "UserPromptSubmit" => tools::prompt(input, event, &["session_id"], Some("turn_id")),
            name if QUIET_EVENTS.contains(&name) => Ok(Event::Ignore { event }),
            _ => Err(HookError::UnknownEvent(event)),
        }
    }

    fn render(&self, event: &str, answer: &Answer) -> Reply {
        match (event, answer) {
            ("PermissionRequest", Answer::Allow(_)) => Reply::Json(json!({
                "hookSpecificOutput": {
                    "hookEventName": "PermissionRequest",
                    "decision": {"behavior": "allow"},
                }
            })),
            ("PermissionRequest", Answer::Deny(reason)) => Reply::Json(json!({
                "hookSpecificOutput": {
                    "hookEventName": "PermissionRequest",
                    "decision": {"behavior": "deny", "message": reason},
                }
            })),
            // No decision: Codex's own approval flow asks.
            ("PermissionRequest", Answer::Abstain | Answer::Ask(_)) => Reply::Empty,
            // Never asked for at PermissionRequest (see `parse`): blocked.
            ("PermissionRequest", Answer::AllowConfined { .. }) => {
                let reason = crate::hooks::cannot_rewrite("this Codex event");
                self.render(event, &Answer::Deny(reason))
            }
            // The one allow PreToolUse accepts: with the rewritten input.
            (_, Answer::AllowConfined { message, confined }) => {
                super::claude_code::pre_tool_use_rewritten(message, confined)
            }
            // `PreToolUse` and anything else: deny is the only answer.
            (_, Answer::Deny(reason)) => deny_pre_tool_use(reason),
            // INVARIANT: `run` never builds Ask for PreToolUse (its presence
            // is Nobody); were it to, the safe reading is a deny.
            (_, Answer::Ask(reason)) => deny_pre_tool_use(reason),
            (_, Answer::Allow(_) | Answer::Abstain) => Reply::Empty,
        }
    }

    fn no_op(&self, _event: &str) -> Reply {
        Reply::Empty
    }

    fn prompt_events(&self) -> &'static [&'static str] {
        &["UserPromptSubmit"]
    }

    fn after_events(&self) -> &'static [&'static str] {
        &["PostToolUse"]
    }

    fn primary_event(&self) -> &'static str {
        "PreToolUse"
    }

    fn can_ask(&self, event: &str) -> bool {
        event == "PermissionRequest"
    }

    fn refine_presence(
        &self,
        event: &str,
        presence: Presence,
        transcript: &Transcript,
    ) -> Presence {
        match event {
            // Codex's approval flow: a person only when the turn says so.
            "PermissionRequest" => crate::hooks::run::presence_from_reviewer(transcript, presence),
            _ => presence,
        }
    }
}

/// Codex reads Claude Code's `PreToolUse` reply shape.
fn deny_pre_tool_use(reason: &str) -> Reply {
    super::claude_code::pre_tool_use("deny", reason)
}

fn ids(input: &Value) -> Result<Ids, HookError> {
    let session_id = tools::first_text(input, &["session_id"])
        .ok_or(HookError::MissingField("session_id"))?
        .to_owned();
    let (turn_id, agent) = tools::turn_and_agent(input, "turn_id");
    Ok(Ids {
        source: "codex",
        session_id,
        turn_id,
        tool_call_id: tools::first_text(input, &["tool_use_id"]).map(str::to_owned),
        agent,
        cwd: tools::absolute(input.get("cwd").and_then(Value::as_str)),
    })
}

fn transcript(input: &Value) -> Option<TranscriptRef> {
    tools::first_text(input, &["transcript_path"]).map(|p| TranscriptRef {
        path: p.to_owned(),
        format: &transcript::CODEX,
    })
}

/// The requests of one Codex tool call: one, or one per file of a patch.
fn requests(ids: &Ids, input: &Value) -> Result<Vec<Request>, HookError> {
    let tool =
        tools::first_text(input, &["tool_name"]).ok_or(HookError::MissingField("tool_name"))?;
    let empty = Value::Object(serde_json::Map::new());
    let ti = input.get("tool_input").unwrap_or(&empty);
    let actions = actions(tool, ti, ids.cwd.as_deref())?;
    actions
        .into_iter()
        .map(|a| tools::request(ids, a))
        .collect()
}

/// Maps one Codex tool onto actions.
pub fn actions(tool: &str, ti: &Value, cwd: Option<&str>) -> Result<Vec<Action>, HookError> {
    Ok(match tool {
        "Bash" | "exec_command" | "shell" | "local_shell" | "unified_exec" => {
            vec![tools::shell(
                tool,
                shell_command(tool, ti)?,
                ti,
                &["command", "cmd"],
            )]
        }
        "apply_patch" => {
            let patch = tools::first_text(ti, &["patch", "input", "command"]).ok_or_else(|| {
                HookError::MissingInput {
                    tool: tool.to_owned(),
                    field: "patch",
                }
            })?;
            let files = tools::bounded(tool, patch_files(patch))?;
            if files.is_empty() {
                return Err(HookError::BadInput {
                    tool: tool.to_owned(),
                    problem: "the patch names no file".to_owned(),
                });
            }
            files
                .into_iter()
                .map(|(surface, path)| tools::file(surface, tool, &path, cwd, ti))
                .collect()
        }
        "view_image" => vec![tools::file(
            Surface::Read,
            tool,
            &tools::text(ti, tool, "path")?,
            cwd,
            ti,
        )],
        "web_search" => vec![tools::network_unknown(tool, ti)],
        name if name.starts_with("mcp__") => vec![tools::mcp(tool, ti, None)],
        name => vec![tools::custom(name, ti)],
    })
}

/// The command text: a string, or an argv array joined with quoting.
fn shell_command(tool: &str, ti: &Value) -> Result<String, HookError> {
    let missing = || HookError::MissingInput {
        tool: tool.to_owned(),
        field: "command",
    };
    match ti.get("command").or_else(|| ti.get("cmd")) {
        Some(Value::String(s)) => Ok(s.clone()),
        Some(Value::Array(argv)) => tools::join_argv(argv).ok_or_else(missing),
        _ => Err(missing()),
    }
}

/// The files a Codex patch touches (`*** Add File:`, `*** Update File:`,
/// `*** Delete File:`, `*** Move to:`), with the surface each write is.
pub fn patch_files(patch: &str) -> Vec<(Surface, String)> {
    let mut out: Vec<(Surface, String)> = Vec::new();
    for line in patch.lines() {
        let line = line.trim_end();
        let found = [
            ("*** Add File: ", Surface::Write),
            ("*** Update File: ", Surface::Edit),
            ("*** Delete File: ", Surface::Delete),
            ("*** Move to: ", Surface::Write),
        ]
        .into_iter()
        .find_map(|(prefix, surface)| line.strip_prefix(prefix).map(|p| (surface, p.trim())));
        if let Some((surface, path)) = found
            && !path.is_empty()
            && !out.iter().any(|(_, p)| p == path)
        {
            out.push((surface, path.to_owned()));
        }
    }
    out
}

/// Codex's trusted hash of one hook group: `sha256:` + SHA-256 of the
/// canonical JSON of `{event_name, matcher?, hooks: [{type, command,
/// timeout, async}]}` (keys sorted, no spaces).
pub fn trusted_hash(event_snake: &str, command: &str, timeout: u64) -> String {
    let identity = json!({
        "event_name": event_snake,
        "hooks": [{"type": "command", "command": command, "timeout": timeout, "async": false}],
    });
    format!(
        "sha256:{}",
        hex::encode(Sha256::digest(canonical_json(&identity).as_bytes()))
    )
}

/// The events vouch's Codex hook is registered for: the name in
/// `config.toml` and the one in its `[hooks.state]` keys and hashes.
pub const HOOK_EVENTS: [(&str, &str); 4] = [
    ("UserPromptSubmit", "user_prompt_submit"),
    ("PreToolUse", "pre_tool_use"),
    ("PermissionRequest", "permission_request"),
    ("PostToolUse", "post_tool_use"),
];

fn hooks_toml(command: &str, timeout: u64, config_path: &Path) -> String {
    let toml_str = |s: &str| Value::String(s.to_owned()).to_string();
    let mut out = String::new();
    let events = HOOK_EVENTS;
    for (event, _) in events {
        out.push_str(&format!(
            "[[hooks.{event}]]\n[[hooks.{event}.hooks]]\ntype = \"command\"\ncommand = {}\ntimeout = {timeout}\n\n",
            toml_str(command)
        ));
    }
    for (_, snake) in events {
        let key = format!("{}:{snake}:0:0", config_path.display());
        out.push_str(&format!(
            "[hooks.state.{}]\ntrusted_hash = {}\n\n",
            toml_str(&key),
            toml_str(&trusted_hash(snake, command, timeout))
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn patches_name_every_file() {
        let patch = "*** Begin Patch\n*** Update File: src/a.rs\n@@\n-x\n+y\n*** Add File: .codex/config.toml\n+[x]\n*** End Patch\n";
        let files = patch_files(patch);
        assert_eq!(
            files,
            vec![
                (Surface::Edit, "src/a.rs".to_owned()),
                (Surface::Write, ".codex/config.toml".to_owned())
            ]
        );
        let a = actions("apply_patch", &json!({"patch": patch}), Some("/p")).unwrap();
        assert_eq!(a.len(), 2);
        assert_eq!(a[1].path.as_deref(), Some("/p/.codex/config.toml"));
    }

    #[test]
    fn argv_commands_are_joined() {
        let a = actions(
            "shell",
            &json!({"command": ["bash", "-lc", "ls -la"]}),
            None,
        )
        .unwrap();
        assert_eq!(a[0].command.as_deref(), Some("bash -lc 'ls -la'"));
        assert_eq!(a[0].input, None);
    }

    #[test]
    fn pre_tool_use_never_allows_out_loud() {
        assert_eq!(
            Codex.render("PreToolUse", &Answer::Allow("ok".into())),
            Reply::Empty
        );
        assert_eq!(Codex.render("PreToolUse", &Answer::Abstain), Reply::Empty);
        let Reply::Json(v) = Codex.render("PreToolUse", &Answer::Ask("q".into())) else {
            panic!()
        };
        assert_eq!(v["hookSpecificOutput"]["permissionDecision"], "deny");
        assert_eq!(
            Codex.render("PermissionRequest", &Answer::Ask("q".into())),
            Reply::Empty
        );
    }
}
