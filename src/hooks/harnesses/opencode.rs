//! OpenCode (`tool.execute.before`, `tool.execute.after`), as 1.18.33
//! behaves (`shared/harnesses/opencode/PROTOCOL.md`, `docs/harnesses/opencode.md`).
//!
//! - OpenCode has no command hooks: vouch's plugin (`clients/opencode/`,
//!   installed by `vouch hook snippet opencode`) runs `vouch hook opencode`
//!   for every tool call with a JSON object of its own making on stdin:
//!   `hook_event_name`, `tool`, `sessionID`, `callID`, `messageID` (the
//!   session's latest user message, from `chat.message`: the turn), `agent`,
//!   `args` (the model's arguments), `directory`, `worktree`, and on the
//!   after event `reviewed_args` (what vouch was shown before).
//! - The reply is `{"decision": "allow" | "deny" | "abstain", "reason": …}`.
//!   The plugin throws (blocks the tool, the model reads `reason` verbatim)
//!   on anything but an explicit allow or abstain. A plugin cannot ask a
//!   person and cannot approve (OpenCode's own permissions run after it), so
//!   a `defer` is a deny that says a human must approve, and an allow only
//!   means "no objection".
//! - Paths are the model's own (`filePath`, relative ones against
//!   `directory`); `bash` runs in `workdir` when given; `apply_patch` names
//!   its files in the patch text; tools this adapter does not know (MCP
//!   tools are `<server>_<tool>`, plugin and project tools any name) are
//!   custom surfaces named after the tool.

use serde_json::{Value, json};

use crate::catalogue::{self, Entry};
use crate::hooks::settings::{Dir, Format, Install};
use crate::hooks::snippet::SnippetContext;
use crate::hooks::tools::{self, Action, Ids};
use crate::hooks::{Answer, Call, Event, Harness, HookError, Observed, Presence, Reply};
use crate::request::Surface;

pub struct OpenCode;

/// The adapter, for the registry (`build.rs`).
pub static HARNESS: OpenCode = OpenCode;

/// The hook timeout when the command line does not say: vouch's own default
/// (the reviewer's 90 s, its reserve and answer margin, start-up), what the
/// snippet writes with default settings. OpenCode itself waits forever; the
/// plugin's timeout sits a few seconds above this.
pub const DEFAULT_TIMEOUT_SECS: u64 = 100;

/// Seconds the plugin waits past the hook timeout before it gives up on
/// vouch (which answers before its timeout): process start and a slow disk.
pub const PLUGIN_GRACE_SECS: u64 = 5;

const BEFORE: &str = "tool.execute.before";
const AFTER: &str = "tool.execute.after";

/// The plugin source, whose settings lines the snippet fills in.
const PLUGIN_SOURCE: &str = include_str!("../../../clients/opencode/src/vouch.ts");
const SETTINGS_BEGIN: &str = "// vouch:settings-begin";
const SETTINGS_END: &str = "// vouch:settings-end";

impl Harness for OpenCode {
    fn entry(&self) -> &'static Entry {
        &catalogue::OPENCODE
    }

    fn about(&self) -> &'static str {
        "OpenCode, through vouch's plugin (tool.execute.before, tool.execute.after)."
    }

    fn default_timeout_secs(&self) -> u64 {
        DEFAULT_TIMEOUT_SECS
    }

    fn snippet(&self, ctx: &SnippetContext<'_>) -> Result<(String, Vec<String>), String> {
        plugin_file(&ctx.command, ctx.timeout_secs)
    }

    fn install(&self) -> Option<Install> {
        Some(Install {
            // OpenCode's global config directory.
            dir: Dir::EnvJoin {
                var: "XDG_CONFIG_HOME",
                below: "opencode",
                home: ".config/opencode",
            },
            file: "plugins/vouch.ts",
            format: Format::OwnFile {
                marker: SETTINGS_BEGIN,
            },
        })
    }

    fn parse(&self, input: &Value) -> Result<Event, HookError> {
        let event = tools::first_text(input, &["hook_event_name"])
            .ok_or(HookError::MissingField("hook_event_name"))?
            .to_owned();
        match event.as_str() {
            BEFORE => {
                let ids = ids(input)?;
                let mut requests = actions(input, ids.cwd.as_deref())?
                    .into_iter()
                    .map(|a| tools::request(&ids, a))
                    .collect::<Result<Vec<_>, _>>()?;
                // The plugin sets `args.command` to the reply's `command`,
                // and OpenCode runs what the args say after the hook.
                crate::hooks::runs_rewritten(&mut requests, &["bash"]);
                Ok(Event::Decide(Call {
                    turn_from_transcript: false,
                    requests,
                    transcript: None,
                    presence: Presence::Nobody(
                        "OpenCode's plugin hook has no way to ask a person, and OpenCode's own \
                         permission prompt comes after it",
                    ),
                    event,
                }))
            }
            AFTER => {
                let ids = ids(input)?;
                if let Some(reviewed) = input.get("reviewed_args")
                    && input.get("args") != Some(reviewed)
                {
                    // A plugin that ran after vouch's rewrote the arguments:
                    // the audit records what ran, next to what was decided.
                    tracing::warn!(
                        tool = tools::first_text(input, &["tool"]).unwrap_or("?"),
                        call_id = ids.tool_call_id.as_deref().unwrap_or("?"),
                        "OpenCode ran different arguments than vouch reviewed"
                    );
                }
                let request = actions(input, ids.cwd.as_deref())?
                    .into_iter()
                    .next()
                    .ok_or(HookError::MissingField("args"))?;
                Ok(Event::Observe(Box::new(Observed {
                    request: tools::request(&ids, request)?,
                    succeeded: None,
                    event,
                })))
            }
            _ => Err(HookError::UnknownEvent(event)),
        }
    }

    fn render(&self, _event: &str, answer: &Answer) -> Reply {
        Reply::Json(match answer {
            Answer::Abstain => json!({"decision": "abstain"}),
            Answer::Allow(reason) => json!({"decision": "allow", "reason": reason}),
            Answer::AllowConfined { message, confined } => json!({
                "decision": "allow",
                "reason": message,
                "command": confined.command,
            }),
            Answer::Deny(reason) => json!({"decision": "deny", "reason": reason}),
            // Never produced (the presence is always "nobody"); a plugin
            // cannot ask, so it would block.
            Answer::Ask(reason) => json!({"decision": "deny", "reason": reason}),
        })
    }

    /// Only after-the-fact events get it, and the plugin ignores their
    /// reply; on a `tool.execute.before` an empty object would block.
    fn no_op(&self, _event: &str) -> Reply {
        Reply::Json(json!({}))
    }

    fn after_events(&self) -> &'static [&'static str] {
        &[AFTER]
    }

    fn primary_event(&self) -> &'static str {
        BEFORE
    }

    fn can_ask(&self, _event: &str) -> bool {
        false
    }
}

fn ids(input: &Value) -> Result<Ids, HookError> {
    let session_id = tools::first_text(input, &["sessionID"])
        .ok_or(HookError::MissingField("sessionID"))?
        .to_owned();
    let directory = input.get("directory").and_then(Value::as_str);
    if let Some(d) = directory.filter(|d| !d.is_empty() && !d.starts_with('/')) {
        return Err(HookError::BadInput {
            tool: "(event)".to_owned(),
            problem: format!("field `directory` must be an absolute path, got `{d}`"),
        });
    }
    Ok(Ids {
        source: "opencode",
        session_id,
        turn_id: tools::first_text(input, &["messageID"]).map(str::to_owned),
        tool_call_id: tools::first_text(input, &["callID"]).map(str::to_owned),
        agent: tools::first_text(input, &["agent"]).map(str::to_owned),
        cwd: tools::absolute(directory),
    })
}

fn actions(input: &Value, cwd: Option<&str>) -> Result<Vec<Action>, HookError> {
    let tool = tools::first_text(input, &["tool"]).ok_or(HookError::MissingField("tool"))?;
    let empty = Value::Object(serde_json::Map::new());
    let args = match input.get("args") {
        None | Some(Value::Null) => &empty,
        Some(v @ Value::Object(_)) => v,
        Some(_) => {
            return Err(HookError::BadInput {
                tool: tool.to_owned(),
                problem: "field `args` is not an object".to_owned(),
            });
        }
    };
    tool_actions(tool, args, cwd)
}

/// Maps one OpenCode tool onto actions.
pub fn tool_actions(tool: &str, args: &Value, cwd: Option<&str>) -> Result<Vec<Action>, HookError> {
    // `filePath` in 1.18.33's tools; `path` in the newer tool set it also ships.
    let file_path = || {
        tools::first_text(args, &["filePath", "path"])
            .map(str::to_owned)
            .ok_or_else(|| HookError::MissingInput {
                tool: tool.to_owned(),
                field: "filePath",
            })
    };
    Ok(match tool {
        "bash" => {
            let mut a = tools::shell(
                tool,
                tools::text(args, tool, "command")?,
                args,
                &["command"],
            );
            a.cwd = tools::first_text(args, &["workdir"])
                .map(|d| tools::resolve(d, cwd))
                .filter(|d| d.starts_with('/'));
            vec![a]
        }
        "write" => vec![tools::file(Surface::Write, tool, &file_path()?, cwd, args)],
        "edit" | "multiedit" => vec![tools::file(Surface::Edit, tool, &file_path()?, cwd, args)],
        "read" => vec![tools::file(Surface::Read, tool, &file_path()?, cwd, args)],
        // Searches and listings read the directory they name, else `directory`.
        "glob" | "grep" | "list" => {
            let dir = tools::first_text(args, &["path"]).unwrap_or(".");
            vec![tools::file(Surface::Read, tool, dir, cwd, args)]
        }
        "apply_patch" => {
            let patch =
                tools::first_text(args, &["patchText"]).ok_or_else(|| HookError::MissingInput {
                    tool: tool.to_owned(),
                    field: "patchText",
                })?;
            let files = tools::bounded(tool, super::codex::patch_files(patch))?;
            if files.is_empty() {
                return Err(HookError::BadInput {
                    tool: tool.to_owned(),
                    problem: "the patch names no file".to_owned(),
                });
            }
            files
                .into_iter()
                .map(|(surface, path)| tools::file(surface, tool, &path, cwd, args))
                .collect()
        }
        "webfetch" => vec![tools::network(
            tool,
            "url",
            &tools::text(args, tool, "url")?,
            args,
        )?],
        "websearch" | "codesearch" => vec![tools::network_unknown(tool, args)],
        // `task`, `todowrite`, `skill`, `question`, `plan_exit`, `lsp`, MCP
        // tools (`<server>_<tool>`) and plugin or project tools: each its
        // own surface; `config/default.toml` passes the harness-internal ones.
        name => vec![tools::custom(name, args)],
    })
}

/// The plugin file for `~/.config/opencode/plugins/vouch.ts`, with `command`
/// and the plugin's own timeout written in, and the notes for the user.
fn plugin_file(command: &str, timeout_secs: u64) -> Result<(String, Vec<String>), String> {
    let timeout_ms = timeout_secs
        .saturating_add(PLUGIN_GRACE_SECS)
        .saturating_mul(1000);
    let settings = format!(
        "{SETTINGS_BEGIN} (written by `vouch hook snippet opencode`)\n\
         /** The hook command, run with `/bin/sh -c`. */\n\
         const COMMAND: string = {};\n\
         /** How long one answer may take: a little over the `--timeout` vouch answers within. */\n\
         const TIMEOUT_MS: number = {timeout_ms};\n",
        Value::String(command.to_owned())
    );
    let text = match (
        PLUGIN_SOURCE.find(SETTINGS_BEGIN),
        PLUGIN_SOURCE.find(SETTINGS_END),
    ) {
        (Some(begin), Some(end)) if begin < end => {
            let head = PLUGIN_SOURCE.get(..begin).unwrap_or_default();
            let tail = PLUGIN_SOURCE.get(end..).unwrap_or_default();
            format!("{head}{settings}{tail}")
        }
        // The plugin source carries both markers (a unit test checks it);
        // without them nothing usable can be printed.
        _ => {
            return Err(
                "this vouch was built with a plugin source that has no settings markers".to_owned(),
            );
        }
    };
    let notes = vec![
        "Save this as ~/.config/opencode/plugins/vouch.ts (OpenCode loads every plugin file \
         there for every project). It needs no package: only Node builtins."
            .to_owned(),
        "`opencode --pure` and OPENCODE_PURE=1 load no plugin at all: such a run is not \
         reviewed by vouch."
            .to_owned(),
        "OpenCode's own permissions still apply after vouch; vouch can only block.".to_owned(),
    ];
    Ok((text, notes))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::request::Request;

    fn before(tool: &str, args: Value) -> Value {
        json!({
            "hook_event_name": "tool.execute.before", "tool": tool, "sessionID": "ses_1",
            "callID": "call_1", "messageID": "msg_1", "agent": "build", "args": args,
            "directory": "/srv/app", "worktree": "/srv/app"
        })
    }

    fn all(v: &Value) -> Vec<Request> {
        match OpenCode.parse(v).unwrap() {
            Event::Decide(call) => {
                assert!(matches!(call.presence, Presence::Nobody(_)));
                call.requests
            }
            other => panic!("not a decision: {other:?}"),
        }
    }

    fn one(v: &Value) -> Request {
        let mut r = all(v);
        assert_eq!(r.len(), 1);
        r.pop().unwrap()
    }

    #[test]
    fn tools_map_to_surfaces() {
        let r = one(&before(
            "bash",
            json!({"command": "ls -la", "description": "list", "workdir": "sub", "timeout": 5}),
        ));
        assert_eq!(r.surface, Surface::Bash);
        assert_eq!(r.command.as_deref(), Some("ls -la"));
        assert_eq!(r.cwd.as_deref(), Some("/srv/app/sub"));
        assert_eq!(r.reason.as_deref(), Some("list"));
        assert_eq!(r.input, Some(json!({"workdir": "sub", "timeout": 5})));
        assert_eq!(r.turn_id.as_deref(), Some("msg_1"));
        assert_eq!(r.tool_call_id.as_deref(), Some("call_1"));
        assert_eq!(r.agent.as_deref(), Some("build"));
        assert_eq!(r.source.as_deref(), Some("opencode"));
        let r = one(&before(
            "write",
            json!({"filePath": "notes.txt", "content": "hi"}),
        ));
        assert_eq!(
            (r.surface, r.path.as_deref()),
            (Surface::Write, Some("/srv/app/notes.txt"))
        );
        let r = one(&before(
            "edit",
            json!({"filePath": "/etc/hosts", "oldString": "a", "newString": "b"}),
        ));
        assert_eq!(
            (r.surface, r.path.as_deref()),
            (Surface::Edit, Some("/etc/hosts"))
        );
        let r = one(&before("read", json!({"path": "src/main.rs"})));
        assert_eq!(
            (r.surface, r.path.as_deref()),
            (Surface::Read, Some("/srv/app/src/main.rs"))
        );
        let r = one(&before("grep", json!({"pattern": "x"})));
        assert_eq!(
            (r.surface, r.path.as_deref()),
            (Surface::Read, Some("/srv/app"))
        );
        let r = one(&before(
            "webfetch",
            json!({"url": "https://example.com/x", "format": "text"}),
        ));
        assert_eq!(r.destination.as_deref(), Some("example.com:443"));
        let r = one(&before("todowrite", json!({"todos": []})));
        assert_eq!(r.surface, Surface::Custom("todowrite".into()));
        let r = one(&before("github_create_issue", json!({"title": "t"})));
        assert_eq!(r.surface, Surface::Custom("github_create_issue".into()));
    }

    #[test]
    fn patches_name_every_file() {
        let patch = "*** Begin Patch\n*** Update File: src/a.rs\n@@\n-x\n+y\n*** Add File: .opencode/plugins/x.ts\n+1\n*** End Patch\n";
        let r = all(&before("apply_patch", json!({ "patchText": patch })));
        let paths: Vec<_> = r.iter().map(|r| r.path.clone().unwrap()).collect();
        assert_eq!(
            paths,
            ["/srv/app/src/a.rs", "/srv/app/.opencode/plugins/x.ts"]
        );
        assert!(
            OpenCode
                .parse(&before("apply_patch", json!({"patchText": "nothing"})))
                .is_err()
        );
    }

    #[test]
    fn after_events_are_observed() {
        let mut v = before("bash", json!({"command": "touch ran-by-project-plugin"}));
        v["hook_event_name"] = AFTER.into();
        v["reviewed_args"] = json!({"command": "touch ran-1"});
        let Event::Observe(o) = OpenCode.parse(&v).unwrap() else {
            panic!("not observed")
        };
        assert_eq!(
            o.request.command.as_deref(),
            Some("touch ran-by-project-plugin")
        );
    }

    #[test]
    fn malformed_inputs_are_named() {
        let mut v = before("bash", json!({"command": "ls"}));
        v.as_object_mut().unwrap().remove("sessionID");
        let e = OpenCode.parse(&v).unwrap_err().to_string();
        assert!(e.contains("sessionID"), "{e}");
        let e = OpenCode
            .parse(&before("bash", json!({"cmd": "ls"})))
            .unwrap_err()
            .to_string();
        assert!(e.contains("command"), "{e}");
        let e = OpenCode
            .parse(&before("bash", json!("ls")))
            .unwrap_err()
            .to_string();
        assert!(e.contains("args"), "{e}");
        let mut v = before("bash", json!({"command": "ls"}));
        v["directory"] = "rel".into();
        assert!(OpenCode.parse(&v).is_err());
        let mut v = before("bash", json!({"command": "ls"}));
        v["hook_event_name"] = "chat.message".into();
        assert!(matches!(
            OpenCode.parse(&v),
            Err(HookError::UnknownEvent(_))
        ));
    }

    #[test]
    fn replies_are_the_plugins_schema() {
        let r = |a: Answer| match OpenCode.render(BEFORE, &a) {
            Reply::Json(v) => v,
            Reply::Empty => panic!("empty"),
        };
        assert_eq!(r(Answer::Abstain), json!({"decision": "abstain"}));
        assert_eq!(r(Answer::Allow("ok".into()))["decision"], "allow");
        assert_eq!(
            r(Answer::Deny("no".into())),
            json!({"decision": "deny", "reason": "no"})
        );
        assert_eq!(r(Answer::Ask("q".into()))["decision"], "deny");
        assert_eq!(OpenCode.no_op(AFTER), Reply::Json(json!({})));
    }

    #[test]
    fn the_snippet_is_the_plugin_with_its_settings() {
        let (text, notes) = plugin_file("/opt/v p/vouch hook opencode --timeout 100", 100).unwrap();
        assert!(
            text.contains(
                r#"const COMMAND: string = "/opt/v p/vouch hook opencode --timeout 100";"#
            ),
            "{text}"
        );
        assert!(text.contains("const TIMEOUT_MS: number = 105000;"));
        assert_eq!(text.matches("const COMMAND").count(), 1);
        assert!(text.contains(SETTINGS_END));
        assert!(text.contains("export const VouchPlugin"));
        assert_eq!(text.matches("\nexport ").count(), 1, "one export only");
        assert!(notes.iter().any(|n| n.contains("plugins/vouch.ts")));
    }
}
