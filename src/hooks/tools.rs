//! Shared pieces of the tool mappings: the one [`Action`] every harness's
//! tool becomes, and the helpers that build it — shell commands packed once,
//! paths resolved against `cwd`, URLs turned into `host:port`, custom
//! surfaces named after the tool.

use serde_json::{Map, Value};

use super::{Event, HookError, Prompt};
use crate::request::{Request, Surface};

/// Most targets one call may name (files of a patch, URLs of a fetch,
/// paths of a multi-file read); more is refused rather than cut.
pub const MAX_TARGETS: usize = 32;

/// What one tool call does, before the per-call identifiers are added.
#[derive(Debug, Clone, PartialEq)]
pub struct Action {
    pub surface: Surface,
    pub tool: String,
    pub command: Option<String>,
    pub path: Option<String>,
    pub destination: Option<String>,
    /// The tool input minus what `command`/`path` already say.
    pub input: Option<Value>,
    /// The agent's stated justification (untrusted evidence).
    pub reason: Option<String>,
    /// A working directory the tool input names (`dir_path`), overriding
    /// the event's `cwd`.
    pub cwd: Option<String>,
}

impl Action {
    fn new(surface: Surface, tool: &str, input: Option<Value>) -> Action {
        Action {
            surface,
            tool: tool.to_owned(),
            command: None,
            path: None,
            destination: None,
            input: input.and_then(non_empty),
            reason: None,
            cwd: None,
        }
    }
}

/// The per-call identity every request of one hook call shares.
#[derive(Debug, Clone, Default)]
pub struct Ids {
    pub source: &'static str,
    pub session_id: String,
    pub turn_id: Option<String>,
    pub tool_call_id: Option<String>,
    pub agent: Option<String>,
    pub cwd: Option<String>,
}

/// The turn and agent of a call from a harness that names its turn in
/// `turn_field` and a subagent in `agent_id`/`agent_type`. A subagent's calls
/// are their own turn: its denials must not trip the main agent's breaker,
/// nor spend its budget.
pub fn turn_and_agent(input: &Value, turn_field: &str) -> (Option<String>, Option<String>) {
    let agent_id = first_text(input, &["agent_id"]);
    let turn_id = match (first_text(input, &[turn_field]), agent_id) {
        (Some(t), Some(a)) => Some(format!("{t}/{a}")),
        (Some(t), None) => Some(t.to_owned()),
        (None, _) => None,
    };
    let agent = agent_id.map(|a| first_text(input, &["agent_type"]).unwrap_or(a).to_owned());
    (turn_id, agent)
}

/// A prompt event's [`Prompt`]: the session from the first of
/// `session_keys`, the turn from `turn_key` (when the harness names one
/// there), the text from `prompt` (absent reads as empty: nothing to
/// record).
pub fn prompt(
    input: &Value,
    event: String,
    session_keys: &[&'static str],
    turn_key: Option<&str>,
) -> Result<Event, HookError> {
    let session_id = first_text(input, session_keys)
        .ok_or(HookError::MissingField(
            session_keys.first().copied().unwrap_or("session_id"),
        ))?
        .to_owned();
    Ok(Event::Prompt(Box::new(Prompt {
        session_id,
        turn_id: turn_key
            .and_then(|key| first_text(input, &[key]))
            .map(str::to_owned),
        text: first_text(input, &["prompt"])
            .unwrap_or_default()
            .to_owned(),
        event,
    })))
}

/// The canonical request for one action.
pub fn request(ids: &Ids, action: Action) -> Result<Request, HookError> {
    let request = Request {
        id: None,
        tool_call_id: ids.tool_call_id.clone(),
        session_id: ids.session_id.clone(),
        turn_id: ids.turn_id.clone(),
        source: Some(ids.source.to_owned()),
        agent: ids.agent.clone(),
        surface: action.surface,
        tool: Some(action.tool),
        command: action.command,
        cwd: action.cwd.or_else(|| ids.cwd.clone()),
        home: None,
        path: action.path,
        resolved_path: None,
        destination: action.destination,
        input: action.input,
        reason: action.reason,
        transcript: Vec::new(),
        issue_grant: false,
        // Set by the adapter whose harness runs a rewritten command.
        can_run_confined: false,
        remote_hook: false,
        files_elsewhere: false,
        transcript_source: crate::request::TranscriptSource::default(),
    };
    request.validate()?;
    Ok(request)
}

/// A `cwd` the request can carry: absolute, else none (Cursor sends `""`).
pub fn absolute(dir: Option<&str>) -> Option<String> {
    dir.filter(|d| d.starts_with('/')).map(str::to_owned)
}

/// `field` of `input` as a string, or the error naming it.
pub fn text(input: &Value, tool: &str, field: &'static str) -> Result<String, HookError> {
    input
        .get(field)
        .and_then(Value::as_str)
        .map(str::to_owned)
        .ok_or_else(|| HookError::MissingInput {
            tool: tool.to_owned(),
            field,
        })
}

/// The first of `fields` that `input` holds as a non-empty string.
pub fn first_text<'a>(input: &'a Value, fields: &[&str]) -> Option<&'a str> {
    fields
        .iter()
        .find_map(|f| input.get(*f).and_then(Value::as_str))
        .filter(|s| !s.is_empty())
}

/// `input` without `keys`; `None` when nothing else is left.
pub fn without(input: &Value, keys: &[&str]) -> Option<Value> {
    match input {
        Value::Object(map) => {
            let rest: Map<String, Value> = map
                .iter()
                .filter(|(k, _)| !keys.contains(&k.as_str()))
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect();
            non_empty(Value::Object(rest))
        }
        other => non_empty(other.clone()),
    }
}

fn non_empty(v: Value) -> Option<Value> {
    match &v {
        Value::Null => None,
        Value::Object(m) if m.is_empty() => None,
        _ => Some(v),
    }
}

/// A shell command. The command is packed once: `input` keeps only what
/// the command text does not already say (timeouts, background and
/// sandbox flags), and the agent's description becomes `reason`.
pub fn shell(tool: &str, command: String, input: &Value, command_keys: &[&str]) -> Action {
    let mut drop: Vec<&str> = command_keys.to_vec();
    drop.push("description");
    let mut a = Action::new(Surface::Bash, tool, without(input, &drop));
    a.command = Some(command);
    a.reason = first_text(input, &["description", "justification"]).map(str::to_owned);
    a
}

/// A file tool: `path` resolved against `cwd` (harnesses pass the model's
/// own, possibly relative, path). Content stays in `input`: the reviewer
/// judges what is written.
pub fn file(surface: Surface, tool: &str, path: &str, cwd: Option<&str>, input: &Value) -> Action {
    let mut a = Action::new(surface, tool, Some(input.clone()));
    a.path = Some(resolve(path, cwd));
    a
}

/// `path` made absolute against `cwd`; `~/` is left for the pipeline's
/// home-aware checks.
pub fn resolve(path: &str, cwd: Option<&str>) -> String {
    if path.starts_with('/') || path.starts_with('~') {
        return path.to_owned();
    }
    match cwd {
        Some(cwd) => {
            let rest = path.strip_prefix("./").unwrap_or(path);
            if rest.is_empty() || rest == "." {
                cwd.to_owned()
            } else {
                format!("{}/{rest}", cwd.trim_end_matches('/'))
            }
        }
        None => path.to_owned(),
    }
}

/// A network tool with the destination of `url` (from `tool_input.<field>`).
pub fn network(
    tool: &str,
    field: &'static str,
    url: &str,
    input: &Value,
) -> Result<Action, HookError> {
    let mut a = Action::new(Surface::Network, tool, Some(input.clone()));
    a.destination = Some(destination_of(tool, field, url)?);
    Ok(a)
}

/// A network tool whose destination vouch cannot know (a search run by
/// the provider).
pub fn network_unknown(tool: &str, input: &Value) -> Action {
    Action::new(Surface::Network, tool, Some(input.clone()))
}

/// An MCP tool; `destination` when the server is reached over a URL.
pub fn mcp(tool: &str, input: &Value, server_url: Option<&str>) -> Action {
    let mut a = Action::new(Surface::Mcp, tool, Some(input.clone()));
    a.destination = server_url.and_then(|u| destination_of(tool, "url", u).ok());
    a
}

/// Any other tool: a custom surface named after it. Routing decides; the
/// harness-internal ones are listed as `pass` in `config/default.toml`.
pub fn custom(tool: &str, input: &Value) -> Action {
    Action::new(custom_surface(tool), tool, Some(input.clone()))
}

/// `host:port` of a URL, the shape `destination` takes.
pub fn destination_of(tool: &str, field: &'static str, url: &str) -> Result<String, HookError> {
    let bad = || HookError::BadUrl {
        tool: tool.to_owned(),
        field,
        url: url.to_owned(),
    };
    let parsed = reqwest::Url::parse(url.trim()).map_err(|_| bad())?;
    let host = parsed.host_str().ok_or_else(bad)?;
    let port = parsed.port_or_known_default().ok_or_else(bad)?;
    Ok(format!("{host}:{port}"))
}

/// The `http(s)://` URLs in free text (Gemini's `web_fetch` prompt), in
/// order, without duplicates.
pub fn urls_in(text: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for (at, _) in text.match_indices("http") {
        let rest = text.get(at..).unwrap_or_default();
        if !(rest.starts_with("http://") || rest.starts_with("https://")) {
            continue;
        }
        let end = rest
            .find(|c: char| c.is_whitespace() || matches!(c, '"' | '\'' | '<' | '>' | ')'))
            .unwrap_or(rest.len());
        let url = rest
            .get(..end)
            .unwrap_or_default()
            .trim_end_matches(['.', ',']);
        if !out.iter().any(|u| u == url) {
            out.push(url.to_owned());
        }
    }
    out
}

/// Refuses a call naming more targets than vouch reviews in one go.
pub fn bounded<T>(tool: &str, items: Vec<T>) -> Result<Vec<T>, HookError> {
    if items.len() > MAX_TARGETS {
        return Err(HookError::BadInput {
            tool: tool.to_owned(),
            problem: format!(
                "names {} targets, more than the {MAX_TARGETS} vouch reviews in one call",
                items.len()
            ),
        });
    }
    Ok(items)
}

/// A custom surface named after the tool: characters outside
/// `[A-Za-z0-9_.:-]` become `_` and the name is cut to 64 bytes (the full
/// name is still in `tool`, which is part of the request hash).
pub fn custom_surface(name: &str) -> Surface {
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

/// Quotes an argv for display as one shell command (Codex sends some
/// commands as arrays).
pub fn join_argv(argv: &[Value]) -> Option<String> {
    let words: Option<Vec<&str>> = argv.iter().map(Value::as_str).collect();
    let words = words?;
    Some(
        words
            .iter()
            .map(|w| {
                if !w.is_empty()
                    && w.chars()
                        .all(|c| c.is_ascii_alphanumeric() || "-_./=:@%+,".contains(c))
                {
                    (*w).to_owned()
                } else {
                    format!("'{}'", w.replace('\'', r"'\''"))
                }
            })
            .collect::<Vec<_>>()
            .join(" "),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_command_is_packed_once() {
        let input = json!({"command": "ls -la", "description": "list", "timeout": 5});
        let a = shell("Bash", "ls -la".into(), &input, &["command"]);
        assert_eq!(a.command.as_deref(), Some("ls -la"));
        assert_eq!(a.input, Some(json!({"timeout": 5})));
        assert_eq!(a.reason.as_deref(), Some("list"));
        let a = shell("Bash", "ls".into(), &json!({"command": "ls"}), &["command"]);
        assert_eq!(a.input, None);
    }

    #[test]
    fn paths_resolve_against_cwd() {
        assert_eq!(resolve("notes.txt", Some("/p")), "/p/notes.txt");
        assert_eq!(resolve("./a/b", Some("/p/")), "/p/a/b");
        assert_eq!(resolve(".", Some("/p")), "/p");
        assert_eq!(resolve("/etc/x", Some("/p")), "/etc/x");
        assert_eq!(resolve("~/.ssh/id", Some("/p")), "~/.ssh/id");
    }

    #[test]
    fn urls_and_destinations() {
        assert_eq!(
            urls_in("summarize https://a.example/x, then http://b.example:8080/y."),
            vec!["https://a.example/x", "http://b.example:8080/y"]
        );
        assert_eq!(
            destination_of("t", "url", "https://a.example/x").unwrap(),
            "a.example:443"
        );
        assert!(destination_of("t", "url", "nope").is_err());
    }

    #[test]
    fn custom_surfaces_are_cleaned() {
        assert_eq!(
            custom_surface("My Tool/v2"),
            Surface::Custom("My_Tool_v2".into())
        );
        assert_eq!(custom_surface("bash"), Surface::Bash);
    }

    #[test]
    fn argv_is_quoted() {
        let argv = [json!("bash"), json!("-lc"), json!("echo 'hi' && ls")];
        assert_eq!(
            join_argv(&argv).unwrap(),
            r"bash -lc 'echo '\''hi'\'' && ls'"
        );
    }
}
