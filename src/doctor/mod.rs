//! `vouch doctor [DIR]`: is each harness on this machine actually guarded,
//! and does the repository in `DIR` switch vouch off?
//!
//! For every harness whose configuration directory exists ("found"), the
//! user-level settings are read as `vouch install` writes them: is vouch's
//! hook there, does the binary it names exist and answer as vouch, is the
//! configuration it pins (`--home`, `--config`) valid, and is the reviewer
//! (or the `--server`) reachable — or is no reviewer configured
//! (`provider = "none"`: what the model would review abstains), which is
//! stated, not counted. A setting of the user's own that makes the harness
//! run no hook at all, or Qwen Code's folder trust left off, is a finding.
//!
//! Then every file in `DIR` that can switch vouch off or change what runs
//! after vouch's check is a finding ([`repo`]), with the file, what it
//! does, and the fix. The exit code is 1 on any finding, so a script can
//! gate on it.

pub mod repo;

use std::io::Write;
use std::net::{TcpStream, ToSocketAddrs};
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::Serialize;

use crate::config::Provider;
use crate::hooks::HarnessId;
use crate::install::{self, Format, json};
use crate::paths::Paths;

pub use repo::{Finding, Kind};

/// How long a reachability check waits for a TCP connection.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(3);

/// One harness on this machine.
#[derive(Debug, Clone, Serialize)]
pub struct HarnessStatus {
    pub harness: &'static str,
    /// The user-level settings file vouch installs into.
    pub settings: String,
    /// Whether the harness's configuration directory exists.
    pub found: bool,
    pub installed: bool,
    /// The hook command line vouch found, if any.
    pub command: Option<String>,
    /// What is fine, said for the reader (the binary, the reviewer).
    pub ok: Vec<String>,
    /// What leaves this harness unguarded or failing closed: each counts.
    pub problems: Vec<String>,
}

/// The whole report.
#[derive(Debug, Clone, Serialize)]
pub struct Report {
    pub harnesses: Vec<HarnessStatus>,
    pub directory: String,
    pub repository: Vec<Finding>,
    /// Problems and findings together: the exit code is 1 when non-zero.
    pub findings: usize,
}

/// Checks this machine (through `env`: `HOME` and the harnesses' own
/// directory variables) and the repository at `dir`.
pub fn check(dir: &Path, env: &dyn Fn(&str) -> Option<String>) -> Report {
    let harnesses: Vec<HarnessStatus> = HarnessId::all()
        .filter_map(|h| harness_status(h, env))
        .collect();
    let qwen_trust = qwen_folder_trust(env);
    let repository = repo::scan(dir, &repo::Context { qwen_trust });
    let findings = harnesses.iter().map(|h| h.problems.len()).sum::<usize>() + repository.len();
    Report {
        harnesses,
        directory: dir.display().to_string(),
        repository,
        findings,
    }
}

/// Whether Qwen Code's folder trust is on in the user's settings.
fn qwen_folder_trust(env: &dyn Fn(&str) -> Option<String>) -> Option<bool> {
    let spec = HarnessId::named("qwen")?.harness().install()?;
    let text = read_settings(&spec.path(env).ok()?).ok()??;
    let (doc, _) = json::parse(&text).ok()?;
    Some(doc.at(&["security", "folderTrust", "enabled"]) == Some(&json::Json::Bool(true)))
}

fn read_settings(path: &Path) -> Result<Option<String>, String> {
    let resolved = install::atomic::resolve(path).map_err(|e| e.to_string())?;
    match install::atomic::read(&resolved.file).map_err(|e| e.to_string())? {
        Some((bytes, _)) => String::from_utf8(bytes)
            .map(Some)
            .map_err(|_| "it is not UTF-8 text".to_owned()),
        None => Ok(None),
    }
}

fn harness_status(h: HarnessId, env: &dyn Fn(&str) -> Option<String>) -> Option<HarnessStatus> {
    let spec = h.harness().install()?;
    let dir = spec.dir(env).ok()?;
    let path = spec.path(env).ok()?;
    let mut status = HarnessStatus {
        harness: h.as_str(),
        settings: path.display().to_string(),
        found: dir.is_dir(),
        installed: false,
        command: None,
        ok: Vec::new(),
        problems: Vec::new(),
    };
    if !status.found {
        return Some(status);
    }
    let text = match read_settings(&path) {
        Ok(Some(text)) => text,
        Ok(None) => {
            status.problems.push(format!(
                "vouch is not installed (no {}): run `vouch install {h}`",
                path.display()
            ));
            return Some(status);
        }
        Err(e) => {
            status
                .problems
                .push(format!("{} cannot be read: {e}", path.display()));
            return Some(status);
        }
    };
    let commands = match vouch_commands(h, &spec, &text) {
        Ok(c) => c,
        Err(e) => {
            status
                .problems
                .push(format!("{} cannot be read: {e}", path.display()));
            return Some(status);
        }
    };
    user_switches(h, &spec, &text, &mut status);
    let Some(command) = commands.into_iter().next() else {
        status.problems.push(format!(
            "vouch is not installed in {}: run `vouch install {h}`",
            path.display()
        ));
        return Some(status);
    };
    status.installed = true;
    check_command(&command, &mut status);
    status.command = Some(command);
    Some(status)
}

/// The vouch hook commands in a harness's settings.
fn vouch_commands(
    h: HarnessId,
    spec: &install::Install,
    text: &str,
) -> Result<Vec<String>, String> {
    let name = h.as_str();
    let mut out = Vec::new();
    match spec.format {
        Format::Json(_) => {
            let (doc, _) = json::parse(text)?;
            let Some(json::Json::Object(events)) = doc.get("hooks") else {
                return Ok(out);
            };
            let mut push = |h: &json::Json| {
                for key in ["command", "bash"] {
                    if let Some(c) = h.get(key).and_then(json::Json::as_str)
                        && install::is_vouch_command(c, name)
                    {
                        out.push(c.to_owned());
                    }
                }
            };
            for (_, entries) in events {
                for entry in entries.as_array().unwrap_or_default() {
                    match entry.get("hooks").and_then(json::Json::as_array) {
                        Some(inner) => inner.iter().for_each(&mut push),
                        None => push(entry),
                    }
                }
            }
        }
        Format::CodexToml => {
            let doc = install::codex_toml::parse(text)?;
            let Some(hooks) = doc.get("hooks").and_then(toml_edit::Item::as_table) else {
                return Ok(out);
            };
            for (_, groups) in hooks.iter() {
                let Some(groups) = groups.as_array_of_tables() else {
                    continue;
                };
                for group in groups {
                    let Some(handlers) = group
                        .get("hooks")
                        .and_then(toml_edit::Item::as_array_of_tables)
                    else {
                        continue;
                    };
                    for handler in handlers {
                        if let Some(c) = handler.get("command").and_then(toml_edit::Item::as_str)
                            && install::is_vouch_command(c, name)
                        {
                            out.push(c.to_owned());
                        }
                    }
                }
            }
        }
        Format::OwnFile { marker } => {
            // The plugin's `const COMMAND: string = "<JSON string>";`.
            if text.contains(marker)
                && let Some(line) = text.lines().find(|l| l.starts_with("const COMMAND"))
                && let Some(start) = line.find('"')
                && let Some(end) = line.rfind('"')
                && let Some(quoted) = line.get(start..=end)
                && let Ok(command) = serde_json::from_str::<String>(quoted)
            {
                out.push(command);
            }
        }
    }
    Ok(out)
}

/// The user's own settings that switch every hook off.
fn user_switches(h: HarnessId, spec: &install::Install, text: &str, status: &mut HarnessStatus) {
    let Format::Json(rules) = spec.format else {
        return;
    };
    let Ok((doc, _)) = json::parse(text) else {
        return;
    };
    for path in rules.off_switches {
        if doc.at(path) == Some(&json::Json::Bool(true)) {
            status.problems.push(format!(
                "`{}` is true in your settings: {h} runs no hook at all, vouch's included",
                path.join(".")
            ));
        }
    }
    for path in rules.force_true {
        if doc.at(path) != Some(&json::Json::Bool(true)) {
            status.problems.push(format!(
                "`{}` is not on: every folder counts as trusted, so a cloned repository's \
                 settings can switch vouch off (run `vouch install {h}`, which turns it on)",
                path.join(".")
            ));
        }
    }
    if h.as_str() == "gemini" {
        if doc.at(&["hooksConfig", "enabled"]) == Some(&json::Json::Bool(false)) {
            status.problems.push(
                "`hooksConfig.enabled` is false in your settings: Gemini CLI runs no hook"
                    .to_owned(),
            );
        }
        let disabled = doc
            .at(&["hooksConfig", "disabled"])
            .and_then(json::Json::as_array)
            .unwrap_or_default();
        if disabled.iter().any(|d| d.as_str() == Some("vouch")) {
            status.problems.push(
                "`hooksConfig.disabled` lists `vouch` in your settings: Gemini CLI skips vouch's hook"
                    .to_owned(),
            );
        }
    }
}

/// The binary, the configuration and the reviewer a hook command names.
fn check_command(command: &str, status: &mut HarnessStatus) {
    let words = install::shell_words(command, 64);
    let Some(exe) = words.first() else {
        return;
    };
    match install::check_binary(Path::new(exe)) {
        Ok(()) => status.ok.push(format!("the hook's binary {exe} runs")),
        Err(e) => status.problems.push(format!(
            "{e}: every call fails closed or, where the harness fails open, runs unreviewed"
        )),
    }
    let flag = |name: &str| {
        words
            .iter()
            .position(|w| w == name)
            .and_then(|i| words.get(i.saturating_add(1)))
            .cloned()
    };
    if let Some(server) = flag("--server") {
        match reachable_url(&server) {
            Ok(addr) => status
                .ok
                .push(format!("the vouch service {server} is reachable ({addr})")),
            Err(e) => status.problems.push(format!(
                "the vouch service {server} is not reachable ({e}): every call is denied"
            )),
        }
        return;
    }
    let home = flag("--home");
    let config = flag("--config").map(PathBuf::from);
    let paths = Paths::from_lookup(|name| match name {
        "VOUCH_HOME" => home.clone(),
        "HOME" => std::env::var("HOME").ok(),
        _ => None,
    });
    let loaded = paths.map_err(|e| e.to_string()).and_then(|p| {
        crate::config::load_trusted(&p, config.as_deref(), Vec::new()).map_err(|e| e.to_string())
    });
    let cfg = match loaded {
        Ok(l) => l.config,
        Err(e) => {
            status.problems.push(format!(
                "vouch's configuration for this hook is invalid ({e}): every call is denied"
            ));
            return;
        }
    };
    status.ok.push("vouch's configuration is valid".to_owned());
    match cfg.reviewer.provider {
        Provider::None => status.ok.push(
            "no reviewer model is configured (`reviewer.provider = \"none\"`): what the model \
             would review abstains, and the harness's own rules decide"
                .to_owned(),
        ),
        _ => match reachable_url(&cfg.reviewer.base_url) {
            Ok(addr) => status.ok.push(format!(
                "the reviewer {} is reachable ({addr})",
                cfg.reviewer.base_url
            )),
            Err(e) => status.problems.push(format!(
                "the reviewer {} is not reachable ({e}): reviewed calls fail closed",
                cfg.reviewer.base_url
            )),
        },
    }
}

/// Connects to the host and port of `url`.
fn reachable_url(url: &str) -> Result<String, String> {
    let parsed = reqwest::Url::parse(url).map_err(|e| format!("not a URL: {e}"))?;
    let host = parsed.host_str().ok_or("no host")?;
    let port = parsed.port_or_known_default().ok_or("no port")?;
    let addrs: Vec<_> = (host.trim_matches(['[', ']']), port)
        .to_socket_addrs()
        .map_err(|e| e.to_string())?
        .collect();
    let mut last = "no address".to_owned();
    for addr in addrs {
        match TcpStream::connect_timeout(&addr, CONNECT_TIMEOUT) {
            Ok(_) => return Ok(addr.to_string()),
            Err(e) => last = e.to_string(),
        }
    }
    Err(last)
}

/// The report as text.
pub fn render_text(r: &Report) -> String {
    let mut out = String::from("Harnesses on this machine:\n");
    for h in &r.harnesses {
        let state = match (h.found, h.installed, h.problems.is_empty()) {
            (false, _, _) => "not found",
            (true, true, true) => "guarded",
            (true, true, false) => "PROBLEM",
            (true, false, _) => "NOT GUARDED",
        };
        out.push_str(&format!("  {:<12} {state:<12} {}\n", h.harness, h.settings));
        for ok in &h.ok {
            out.push_str(&format!("      ok: {ok}\n"));
        }
        for p in &h.problems {
            out.push_str(&format!("      problem: {p}\n"));
        }
    }
    out.push_str(&format!("Repository {}:\n", r.directory));
    if r.repository.is_empty() {
        out.push_str("  no file here switches vouch off or runs after its check\n");
    }
    for f in &r.repository {
        out.push_str(&format!(
            "  {} ({}, {}): {}\n      fix: {}\n",
            f.file,
            f.harness,
            f.kind.as_str(),
            f.what,
            f.fix
        ));
    }
    out.push_str(&format!(
        "{} finding{}\n",
        r.findings,
        if r.findings == 1 { "" } else { "s" }
    ));
    out
}

/// `vouch doctor [DIR] [--format json]`: exit 0 with no finding, 1 with
/// any, 2 when `DIR` is not a directory.
pub fn run(
    _global: &crate::config::Global,
    dir: Option<PathBuf>,
    as_json: bool,
    mut out: impl Write,
    mut err: impl Write,
) -> i32 {
    let dir = match dir.map_or_else(std::env::current_dir, Ok) {
        Ok(d) => d,
        Err(e) => {
            let _ = writeln!(err, "vouch: doctor: cannot read the current directory: {e}");
            return 2;
        }
    };
    if !dir.is_dir() {
        let _ = writeln!(err, "vouch: doctor: `{}` is not a directory", dir.display());
        return 2;
    }
    let env = |name: &str| std::env::var(name).ok();
    let report = check(&dir, &env);
    let written = if as_json {
        serde_json::to_string(&report)
            .map_err(std::io::Error::other)
            .and_then(|line| writeln!(out, "{line}"))
    } else {
        out.write_all(render_text(&report).as_bytes())
    };
    if let Err(e) = written {
        let _ = writeln!(err, "vouch: doctor: {e}");
        return 2;
    }
    i32::from(report.findings > 0)
}
