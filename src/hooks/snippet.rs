//! `vouch hook snippet <harness>`: the exact fragment for the user's own
//! harness settings. vouch never edits a harness's files itself; the user
//! pastes this (stdout is only the fragment, notes go to stderr). Each
//! harness writes its own fragment ([`super::Harness::snippet`]); this
//! module gives it the command line and the timeout.
//!
//! Every fragment sets what keeps the harness from running the tool when
//! vouch is down or slow: Claude Code's `onFailure: "block"`, Cursor's
//! `failClosed: true`, Codex's `[hooks.state]` trusted hash (without it Codex
//! silently skips the hook), and a harness timeout above vouch's own
//! deadline, which the command line repeats (`--timeout`) so vouch answers
//! first even if the reviewer's timeout is raised later.

use std::path::{Path, PathBuf};

use serde_json::Value;

use super::HarnessId;
use super::run::NON_MODEL_RESERVE_MS;
use crate::config::Config;

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
    /// `--server URL` and its token and TLS options, for a hook that asks
    /// a central `vouch serve` (docs/remote-hook.md).
    pub remote: Option<super::remote::RemoteOptions>,
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

/// What a harness's snippet is built from.
#[derive(Debug)]
pub struct SnippetContext<'a> {
    pub opts: &'a SnippetOptions,
    pub config: &'a Config,
    /// The hook command line: the binary, `hook <harness>`, the pinned
    /// `--home`/`--config` and `--timeout`, each word quoted for a POSIX shell.
    pub command: String,
    /// The harness hook timeout, in seconds ([`timeout_secs`]).
    pub timeout_secs: u64,
}

/// The fragment and the notes for the user.
pub fn render(opts: &SnippetOptions, cfg: &Config) -> Result<(String, Vec<String>), String> {
    let timeout = timeout_secs(cfg);
    let ctx = SnippetContext {
        opts,
        config: cfg,
        command: command_line(opts, timeout),
        timeout_secs: timeout,
    };
    let (text, mut notes) = opts.harness.harness().snippet(&ctx)?;
    if let Some(remote) = &opts.remote {
        notes.push(remote_note(remote));
    }
    Ok((text, notes))
}

/// What a user of a `--server` fragment must still do.
fn remote_note(remote: &super::remote::RemoteOptions) -> String {
    let token = match &remote.token_file {
        Some(file) => format!(
            "the adapter token is read from `{}` on every call: copy the service's \
             `adapter.token` there (mode 0600; under vouch's own config directory the agent \
             cannot read it)",
            file.display()
        ),
        None => format!(
            "the adapter token is read from `{}` in the environment the harness starts from \
             (or pass `--token-file`)",
            super::remote::TOKEN_ENV
        ),
    };
    format!(
        "Tool calls are decided by the vouch service at `{}`; {token}. When the service cannot \
         be reached the hook denies with `[vouch fault: unreachable]` (docs/remote-hook.md).",
        remote.server
    )
}

/// Pretty JSON with a final newline.
pub fn pretty(v: &Value) -> String {
    let mut s = serde_json::to_string_pretty(v).unwrap_or_else(|_| v.to_string());
    s.push('\n');
    s
}

/// The command line for a prompt event in a harness that blocks when a
/// hook cannot start (Gemini CLI stops the agent, Copilot CLI the prompt):
/// vouch never blocks a prompt, so a vouch that cannot run (missing,
/// crashed, killed; vouch itself always exits 0) answers the no-op `{}`
/// through the shell instead. The tool calls that follow still fail closed
/// on their own events.
pub fn prompt_never_blocks(command: &str) -> String {
    format!("{command} || echo '{{}}'")
}

/// `'…'`-quotes a word for the harness's shell when it needs it.
pub fn quote(word: &str) -> String {
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

pub fn command_line(opts: &SnippetOptions, timeout: u64) -> String {
    let mut words = vec![
        quote(&opts.exe.display().to_string()),
        "hook".to_owned(),
        opts.harness.as_str().to_owned(),
    ];
    let mut flag = |name: &str, value: Option<String>| {
        if let Some(v) = value {
            words.push(name.to_owned());
            words.push(quote(&v));
        }
    };
    let shown = |p: Option<&Path>| p.map(|p| p.display().to_string());
    flag("--home", shown(opts.home.as_deref()));
    flag("--config", shown(opts.config.as_deref()));
    if let Some(remote) = &opts.remote {
        flag("--server", Some(remote.server.clone()));
        flag("--token-file", shown(remote.token_file.as_deref()));
        flag("--ca-file", shown(remote.ca_file.as_deref()));
        if remote.allow_plain_http {
            words.push("--allow-plain-http".to_owned());
        }
    }
    words.push("--timeout".to_owned());
    words.push(timeout.to_string());
    words.join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timeouts_sit_above_the_review_deadline() {
        let cfg = Config::defaults().unwrap();
        assert_eq!(timeout_secs(&cfg), 100);
    }

    fn opts(harness: &str) -> SnippetOptions {
        SnippetOptions {
            harness: HarnessId::named(harness).unwrap(),
            exe: PathBuf::from("/usr/local/bin/vouch"),
            home: Some(PathBuf::from("/home/dev/.vouch home")),
            config: None,
            http: false,
            codex_config: PathBuf::from("/home/dev/.codex/config.toml"),
            remote: None,
        }
    }

    #[test]
    fn every_harness_has_a_snippet_naming_its_hook_command() {
        let cfg = Config::defaults().unwrap();
        for h in HarnessId::all() {
            let (text, notes) = render(&opts(h.as_str()), &cfg).unwrap();
            assert!(
                !notes.is_empty(),
                "{h}: no note says where the fragment goes"
            );
            assert!(
                text.contains(&format!("/usr/local/bin/vouch hook {h}")),
                "{h}: {text}"
            );
        }
    }

    #[test]
    fn claude_blocks_on_failure() {
        let cfg = Config::defaults().unwrap();
        let (text, _) = render(&opts("claude-code"), &cfg).unwrap();
        let v: Value = serde_json::from_str(&text).unwrap();
        let hook = &v["hooks"]["PreToolUse"][0]["hooks"][0];
        assert_eq!(hook["onFailure"], "block");
        assert_eq!(
            hook["command"],
            "/usr/local/bin/vouch hook claude-code --home '/home/dev/.vouch home' --timeout 100"
        );
        // The prompt hook: the same command, and never blocking the prompt.
        let prompt = &v["hooks"]["UserPromptSubmit"][0]["hooks"][0];
        assert_eq!(prompt["command"], hook["command"]);
        assert_eq!(prompt.get("onFailure"), None);
        let mut http = opts("claude-code");
        http.http = true;
        let (text, _) = render(&http, &cfg).unwrap();
        let v: Value = serde_json::from_str(&text).unwrap();
        assert_eq!(
            v["hooks"]["PreToolUse"][0]["hooks"][0]["onFailure"],
            "block"
        );
        let prompt = &v["hooks"]["UserPromptSubmit"][0]["hooks"][0];
        assert_eq!(prompt["type"], "http");
        assert_eq!(prompt.get("onFailure"), None);
    }

    #[test]
    fn codex_hash_matches_the_protocol() {
        use sha2::{Digest, Sha256};
        // The hash Codex 0.171.0 reported for this hook group (PROTOCOL.md
        // names the recipe; this pins its shape).
        let h =
            crate::hooks::harnesses::codex::trusted_hash("pre_tool_use", "vouch hook codex", 600);
        let identity = r#"{"event_name":"pre_tool_use","hooks":[{"async":false,"command":"vouch hook codex","timeout":600,"type":"command"}]}"#;
        assert_eq!(
            h,
            format!("sha256:{}", hex::encode(Sha256::digest(identity)))
        );
        let cfg = Config::defaults().unwrap();
        let (text, _) = render(&opts("codex"), &cfg).unwrap();
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
        let (text, _) = render(&opts("gemini"), &cfg).unwrap();
        let v: Value = serde_json::from_str(&text).unwrap();
        assert_eq!(v["hooks"]["BeforeTool"][0]["hooks"][0]["timeout"], 100_000);
        // Gemini stops the agent when a hook cannot start: the prompt
        // event falls back to the no-op.
        let prompt = v["hooks"]["BeforeAgent"][0]["hooks"][0]["command"]
            .as_str()
            .unwrap();
        assert!(prompt.ends_with(" || echo '{}'"), "{prompt}");
        let tool = v["hooks"]["BeforeTool"][0]["hooks"][0]["command"]
            .as_str()
            .unwrap();
        assert!(!tool.contains("||"), "{tool}");
        let (text, _) = render(&opts("cursor"), &cfg).unwrap();
        let v: Value = serde_json::from_str(&text).unwrap();
        assert_eq!(v["hooks"]["beforeShellExecution"][0]["failClosed"], true);
        assert_eq!(v["hooks"]["beforeSubmitPrompt"][0].get("failClosed"), None);
    }

    #[test]
    fn words_are_quoted_for_the_shell() {
        assert_eq!(quote("/usr/bin/vouch"), "/usr/bin/vouch");
        assert_eq!(quote("/a b/it's"), r"'/a b/it'\''s'");
        assert_eq!(quote(""), "''");
    }
}
