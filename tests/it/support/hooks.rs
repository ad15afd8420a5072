//! Driving `vouch hook <harness>` in the tests: each harness's primary
//! shell event (from its captured fixtures, `tests/fixtures/harnesses/`),
//! and reading a reply as exactly that harness's deny for its event.

#![allow(dead_code, reason = "each test module uses a part")]

use serde_json::Value;
use vouch::hooks::{Answer, HarnessId, Reply};

use super::fixtures;

/// Every harness vouch has an adapter for (checked against the registry by
/// [`every_harness`]).
pub const HARNESSES: [&str; 7] = [
    "claude-code",
    "codex",
    "copilot",
    "cursor",
    "gemini",
    "opencode",
    "qwen",
];

/// [`HARNESSES`], after checking it names every harness of the registry:
/// a new adapter fails the tests that cover "every harness" until it has
/// a shell event here.
pub fn every_harness() -> [&'static str; 7] {
    let mut registry = HarnessId::names();
    registry.sort_unstable();
    assert_eq!(
        registry,
        HARNESSES.to_vec(),
        "tests/it/support/hooks.rs needs a shell event for every harness"
    );
    HARNESSES
}

/// A captured hook payload of `harness` (`tests/fixtures/harnesses/`).
pub fn fixture(harness: &str, name: &str) -> Value {
    serde_json::from_str(&fixtures::text(&format!("harnesses/{harness}/{name}"))).unwrap()
}

/// The primary shell event of each harness, running `command`.
pub fn shell_event(harness: &str, command: &str) -> Value {
    let (name, pointer) = match harness {
        "claude-code" => ("pretooluse-http.json", "/tool_input/command"),
        "codex" => ("PreToolUse.stdin.json", "/tool_input/command"),
        "copilot" => ("preToolUse.bash.json", "/toolArgs/command"),
        "cursor" => ("beforeShellExecution.plain.json", "/command"),
        "gemini" => ("before_tool.run_shell_command.json", "/tool_input/command"),
        "opencode" => ("tool.execute.before.bash.json", "/args/command"),
        "qwen" => ("PreToolUse.run_shell_command.json", "/tool_input/command"),
        other => panic!("no shell event for harness `{other}`"),
    };
    let mut v = fixture(harness, name);
    if harness == "claude-code" {
        v["permission_mode"] = "default".into();
    }
    *v.pointer_mut(pointer).unwrap() = command.into();
    v
}

/// The event a hook input names (the harness's primary event when it
/// names none, as vouch reads it).
pub fn event_of(harness: &str, input: &Value) -> String {
    input["hook_event_name"].as_str().map_or_else(
        || {
            HarnessId::named(harness)
                .unwrap()
                .harness()
                .primary_event()
                .to_owned()
        },
        str::to_owned,
    )
}

/// The reason of `stdout` when it is exactly `harness`'s deny for `event`
/// (rendered again from that reason, byte for byte the same JSON); else
/// what it is instead.
pub fn deny_reason(harness: &str, event: &str, stdout: &str) -> Result<String, String> {
    let adapter = HarnessId::named(harness).unwrap().harness();
    let marker = "\u{1}REASON\u{1}";
    let template = adapter
        .render(event, &Answer::Deny(marker.to_owned()))
        .to_json();
    let (pointer, around) = find_marker(&template, marker, String::new())
        .ok_or_else(|| format!("{harness}: a deny for `{event}` carries no reason"))?;
    let reply: Value = match stdout.trim() {
        "" => return Err(format!("{harness}: an empty reply (no objection)")),
        text => serde_json::from_str(text).map_err(|e| format!("{harness}: {e}: {stdout}"))?,
    };
    let (before, after) = around.split_once(marker).unwrap();
    let reason = reply
        .pointer(&pointer)
        .and_then(Value::as_str)
        .and_then(|s| s.strip_prefix(before))
        .and_then(|s| s.strip_suffix(after))
        .ok_or_else(|| format!("{harness}: not a deny: {stdout}"))?
        .to_owned();
    let expected = adapter.render(event, &Answer::Deny(reason.clone()));
    match expected == Reply::Json(reply) {
        true => Ok(reason),
        false => Err(format!(
            "{harness}: not exactly its deny for `{event}`: {stdout}"
        )),
    }
}

/// The JSON pointer of the first string holding `marker`, and that string.
fn find_marker(v: &Value, marker: &str, at: String) -> Option<(String, String)> {
    match v {
        Value::String(s) if s.contains(marker) => Some((at, s.clone())),
        Value::Object(map) => map
            .iter()
            .find_map(|(k, v)| find_marker(v, marker, format!("{at}/{k}"))),
        Value::Array(items) => items
            .iter()
            .enumerate()
            .find_map(|(i, v)| find_marker(v, marker, format!("{at}/{i}"))),
        Value::String(_) | Value::Null | Value::Bool(_) | Value::Number(_) => None,
    }
}
