//! `vouch hook snippet <harness>`: the exact fragment for the user's own
//! harness settings. vouch never edits a harness's files itself; the user
//! pastes this (stdout is only the fragment, notes go to stderr).
//!
//! Every fragment sets what keeps the harness from running the tool when
//! vouch is down or slow: Claude Code's `onFailure: "block"`, Cursor's
//! `failClosed: true`, Codex's `[hooks.state]` trusted hash (without it Codex
//! silently skips the hook), and a harness timeout above vouch's own
//! deadline, which the command line repeats (`--timeout`) so vouch answers
//! first even if the reviewer's timeout is raised later.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};
use sha2::{Digest, Sha256};

use super::HarnessId;
use super::run::NON_MODEL_RESERVE_MS;
use crate::config::Config;
use crate::request::canonical_json;

/// What the fragment needs to know.
#[derive(Debug, Clone)]
pub struct SnippetOptions {
    pub harness: HarnessId,
    /// The `vouch` binary the harness should run (absolute).
    pub exe: PathBuf,
    /// `--home` to pin in the command line (the `VOUCH_HOME` of the shell
    /// that asked for the snippet), if any.
    pub home: Option<PathBuf>,
    /// `--config` to pin in the command line, if any.
    pub config: Option<PathBuf>,
    /// Claude Code: the `type: "http"` form for `vouch serve` instead.
    pub http: bool,
    /// Codex: the `config.toml` the fragment goes in (its path is part of
    /// the trusted-hash key).
    pub codex_config: PathBuf,
}

/// The harness hook timeout, in seconds, for a configuration: the review
/// deadline, the non-model reserve and vouch's answer margin, rounded up,
/// plus a few seconds of process start-up.
pub fn timeout_secs(cfg: &Config) -> u64 {
    let ms = cfg
        .reviewer
        .timeout_ms
        .saturating_add(NON_MODEL_RESERVE_MS)
        .saturating_add(cfg.hooks.deadline_margin_ms);
    ms.div_ceil(1000).saturating_add(4)
}

/// The fragment and the notes for the user.
pub fn render(opts: &SnippetOptions, cfg: &Config) -> (String, Vec<String>) {
    let timeout = timeout_secs(cfg);
    let command = command_line(opts, timeout);
    let mut notes = Vec::new();
    let text = match opts.harness {
        HarnessId::ClaudeCode if opts.http => {
            notes.push(
                "Claude Code `type: \"http\"` hook for `vouch serve`: export the adapter token \
                 as VOUCH_ADAPTER_TOKEN in the environment Claude Code starts from."
                    .to_owned(),
            );
            pretty(&claude_http(cfg, timeout))
        }
        HarnessId::ClaudeCode => {
            notes.push("Merge into ~/.claude/settings.json (your user settings).".to_owned());
            pretty(&claude_command(&command, timeout))
        }
        HarnessId::Codex => {
            notes.push(format!(
                "Append to {} (your user config). The [hooks.state] keys assume these are the \
                 first hooks of each event there; `codex app-server` `hooks/list` shows the \
                 hashes Codex expects.",
                opts.codex_config.display()
            ));
            codex(&command, timeout, &opts.codex_config)
        }
        HarnessId::Gemini => {
            notes.push("Merge into ~/.gemini/settings.json (your user settings).".to_owned());
            if command.contains('$') {
                notes.push(
                    "warning: Gemini CLI expands `$` in settings strings; move vouch to a path \
                     without `$`."
                        .to_owned(),
                );
            }
            pretty(&gemini(&command, timeout))
        }
        HarnessId::Cursor => {
            notes.push("Merge into ~/.cursor/hooks.json (your user hooks).".to_owned());
            pretty(&cursor(&command, timeout))
        }
    };
    (text, notes)
}

fn pretty(v: &Value) -> String {
    let mut s = serde_json::to_string_pretty(v).unwrap_or_else(|_| v.to_string());
    s.push('\n');
    s
}

/// `'…'`-quotes a word for the harness's shell when it needs it.
fn quote(word: &str) -> String {
    if !word.is_empty()
        && word
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./=:@%+,".contains(c))
    {
        word.to_owned()
    } else {
        format!("'{}'", word.replace('\'', r"'\''"))
    }
}

fn command_line(opts: &SnippetOptions, timeout: u64) -> String {
    let mut words = vec![
        quote(&opts.exe.display().to_string()),
        "hook".to_owned(),
        opts.harness.as_str().to_owned(),
    ];
    let mut flag = |name: &str, value: Option<&Path>| {
        if let Some(v) = value {
            words.push(name.to_owned());
            words.push(quote(&v.display().to_string()));
        }
    };
    flag("--home", opts.home.as_deref());
    flag("--config", opts.config.as_deref());
    words.push("--timeout".to_owned());
    words.push(timeout.to_string());
    words.join(" ")
}

fn claude_command(command: &str, timeout: u64) -> Value {
    let entry = |block: bool| {
        let mut hook = json!({"type": "command", "command": command, "timeout": timeout});
        if let (true, Some(obj)) = (block, hook.as_object_mut()) {
            // Claude Code runs the tool when a hook cannot start or times
            // out, unless told to block.
            obj.insert("onFailure".to_owned(), json!("block"));
        }
        json!([{"matcher": "", "hooks": [hook]}])
    };
    json!({"hooks": {
        "PreToolUse": entry(true),
        "PermissionRequest": entry(true),
        "PostToolUse": entry(false),
    }})
}

fn claude_http(cfg: &Config, timeout: u64) -> Value {
    let listen = &cfg.server.listen;
    json!({"hooks": {"PreToolUse": [{"matcher": "", "hooks": [{
        "type": "http",
        "url": format!("http://{listen}/hooks/claude-code"),
        "headers": {"Authorization": "Bearer $VOUCH_ADAPTER_TOKEN"},
        "allowedEnvVars": ["VOUCH_ADAPTER_TOKEN"],
        "timeout": timeout,
        "onFailure": "block",
    }]}]}})
}

/// Codex's trusted hash of one hook group: `sha256:` + SHA-256 of the
/// canonical JSON of `{event_name, matcher?, hooks: [{type, command,
/// timeout, async}]}` (keys sorted, no spaces).
pub fn codex_trusted_hash(event_snake: &str, command: &str, timeout: u64) -> String {
    let identity = json!({
        "event_name": event_snake,
        "hooks": [{"type": "command", "command": command, "timeout": timeout, "async": false}],
    });
    format!(
        "sha256:{}",
        hex::encode(Sha256::digest(canonical_json(&identity).as_bytes()))
    )
}

fn codex(command: &str, timeout: u64, config_path: &Path) -> String {
    let toml_str = |s: &str| Value::String(s.to_owned()).to_string();
    let mut out = String::new();
    let events = [
        ("PreToolUse", "pre_tool_use"),
        ("PermissionRequest", "permission_request"),
        ("PostToolUse", "post_tool_use"),
    ];
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
            toml_str(&codex_trusted_hash(snake, command, timeout))
        ));
    }
    out
}

fn gemini(command: &str, timeout: u64) -> Value {
    let ms = timeout.saturating_mul(1000);
    let entry = || {
        json!([{"matcher": "", "hooks": [{
            "name": "vouch", "type": "command", "command": command, "timeout": ms,
        }]}])
    };
    json!({
        "hooks": {"BeforeTool": entry(), "AfterTool": entry()},
        "hooksConfig": {"enabled": true},
    })
}

fn cursor(command: &str, timeout: u64) -> Value {
    let gate = |matcher: Option<&str>| {
        let mut e = json!({"command": command, "timeout": timeout, "failClosed": true});
        if let (Some(m), Some(obj)) = (matcher, e.as_object_mut()) {
            obj.insert("matcher".to_owned(), json!(m));
        }
        json!([e])
    };
    let after = || json!([{"command": command, "timeout": timeout}]);
    json!({"version": 1, "hooks": {
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

    fn opts(harness: HarnessId) -> SnippetOptions {
        SnippetOptions {
            harness,
            exe: PathBuf::from("/usr/local/bin/vouch"),
            home: Some(PathBuf::from("/home/dev/.vouch home")),
            config: None,
            http: false,
            codex_config: PathBuf::from("/home/dev/.codex/config.toml"),
        }
    }

    #[test]
    fn timeouts_sit_above_the_review_deadline() {
        let cfg = Config::defaults().unwrap();
        assert_eq!(timeout_secs(&cfg), 100);
    }

    #[test]
    fn claude_blocks_on_failure() {
        let cfg = Config::defaults().unwrap();
        let (text, _) = render(&opts(HarnessId::ClaudeCode), &cfg);
        let v: Value = serde_json::from_str(&text).unwrap();
        let hook = &v["hooks"]["PreToolUse"][0]["hooks"][0];
        assert_eq!(hook["onFailure"], "block");
        assert_eq!(
            hook["command"],
            "/usr/local/bin/vouch hook claude-code --home '/home/dev/.vouch home' --timeout 100"
        );
    }

    #[test]
    fn codex_hash_matches_the_protocol() {
        // The hash Codex 0.171.0 reported for this hook group (PROTOCOL.md
        // names the recipe; this pins its shape).
        let h = codex_trusted_hash("pre_tool_use", "vouch hook codex", 600);
        let identity = r#"{"event_name":"pre_tool_use","hooks":[{"async":false,"command":"vouch hook codex","timeout":600,"type":"command"}]}"#;
        assert_eq!(
            h,
            format!("sha256:{}", hex::encode(Sha256::digest(identity)))
        );
        let cfg = Config::defaults().unwrap();
        let (text, _) = render(&opts(HarnessId::Codex), &cfg);
        let parsed: toml::Table = toml::from_str(&text).unwrap();
        assert!(
            parsed["hooks"]["state"]
                .as_table()
                .unwrap()
                .contains_key("/home/dev/.codex/config.toml:pre_tool_use:0:0")
        );
    }

    #[test]
    fn gemini_and_cursor_fragments_parse() {
        let cfg = Config::defaults().unwrap();
        let (text, _) = render(&opts(HarnessId::Gemini), &cfg);
        let v: Value = serde_json::from_str(&text).unwrap();
        assert_eq!(v["hooks"]["BeforeTool"][0]["hooks"][0]["timeout"], 100_000);
        let (text, _) = render(&opts(HarnessId::Cursor), &cfg);
        let v: Value = serde_json::from_str(&text).unwrap();
        assert_eq!(v["hooks"]["beforeShellExecution"][0]["failClosed"], true);
    }
}
