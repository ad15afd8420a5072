//! `vouch install <harness>` and `vouch uninstall <harness>`: vouch's hook
//! merged into the harness's user-level settings, and taken out again.
//!
//! Setup must not be able to switch vouch off by itself failing, so:
//!
//! - **Everything is checked before a byte is written**: vouch's
//!   configuration (an invalid one is the install's error, exit 2), the
//!   binary the hook will run (absolute, executable, and it answers
//!   `--version`), `--server` and its token, the settings file itself (a
//!   file that is not valid JSON or TOML is refused, naming it, and never
//!   overwritten), and a setting that would make the harness run no hook
//!   at all (`disableAllHooks`).
//! - **The write is atomic** ([`atomic`]): a temporary file in the same
//!   directory, flushed, then renamed over the old one with its mode kept.
//!   A failure at any point leaves the previous file byte-identical.
//! - **The merge keeps everything else** ([`json`], [`codex_toml`]): every
//!   other key and hook, the file's key order, indentation and (for TOML)
//!   comments. vouch's own entries are recognised by their command
//!   (`<…>/vouch hook <harness>`), so installing twice leaves one.
//! - **Uninstall gives the file back**: install keeps a record
//!   (`<vouch config dir>/installed/<harness>.json`: the file, a hash of
//!   what install wrote, what else it changed); while the file is as
//!   install left it, uninstall writes back exactly the bytes it found
//!   (checked when installing: the record keeps the previous text itself
//!   only when taking vouch's entries out would not reproduce it). A file
//!   changed since loses only vouch's entries.
//!
//! Where each harness keeps its user settings, in which format, and what
//! in it can switch hooks off is the harness's own knowledge
//! ([`crate::hooks::Harness::install`], described in the data types of
//! [`crate::hooks::settings`], re-exported here).

pub mod atomic;
pub mod codex_toml;
pub mod json;

use std::io::Write;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::config::Config;
use crate::hooks::HarnessId;
use crate::hooks::remote::RemoteOptions;
pub use crate::hooks::settings::{Dir, Format, Install, JsonRules, NoHome};
use crate::hooks::snippet::{self, SnippetOptions};

/// Why install or uninstall did nothing. Nothing was written in any case.
#[derive(Debug, thiserror::Error)]
pub enum InstallError {
    #[error("vouch has no installer for `{0}`; use `vouch hook snippet {0}`")]
    NoInstaller(String),
    #[error(transparent)]
    NoHome(#[from] NoHome),
    /// vouch's configuration (the message names the file and key).
    #[error("{0}")]
    Config(String),
    #[error("the vouch binary `{path}` cannot be the hook's: {problem}")]
    Binary { path: String, problem: String },
    #[error("`--server`: {0}")]
    Remote(String),
    #[error("cannot install into `{file}`: {problem}")]
    Settings { file: String, problem: String },
    #[error("cannot write `{file}`: {source}")]
    Write {
        file: String,
        source: std::io::Error,
    },
}

fn settings_err(file: &Path, problem: impl Into<String>) -> InstallError {
    InstallError::Settings {
        file: file.display().to_string(),
        problem: problem.into(),
    }
}

/// What the command line asked, and what it runs with.
pub struct Options<'a> {
    pub harness: HarnessId,
    pub dry_run: bool,
    /// The vouch binary the hook runs (absolute).
    pub exe: PathBuf,
    /// `--home` to pin (`VOUCH_HOME` of the installing shell), if any.
    pub vouch_home: Option<PathBuf>,
    /// `--config` to pin, if any.
    pub config: Option<PathBuf>,
    pub remote: Option<RemoteOptions>,
    /// Where install records are kept (`<vouch config dir>/installed`).
    pub records: PathBuf,
    /// The installing shell's environment (`HOME`, the harness's own
    /// directory variable, `VOUCH_ADAPTER_TOKEN`).
    pub env: &'a dyn Fn(&str) -> Option<String>,
}

/// What happened.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Outcome {
    /// The settings file the harness reads.
    pub file: PathBuf,
    /// The file written, when `file` is a symbolic link to it.
    pub link_target: Option<PathBuf>,
    pub change: Change,
    /// For the user (warnings, what else was changed).
    pub notes: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Change {
    /// Written (created, merged, restored).
    Written,
    /// Removed (uninstall of a file install created).
    Removed,
    /// Already as asked: nothing written.
    Unchanged,
    /// `--dry-run`: what would be written, as a line diff.
    Planned(String),
}

/// What install remembers for uninstall.
#[derive(Debug, Clone, Serialize, Deserialize)]
struct Record {
    file: PathBuf,
    /// Whether the file existed before install.
    existed: bool,
    /// SHA-256 of the bytes install wrote.
    written: String,
    /// The previous text, kept only when taking vouch out of what install
    /// wrote would not reproduce it exactly.
    original: Option<String>,
    json: Option<json::Changes>,
    toml: Option<codex_toml::Changes>,
}

fn sha256(bytes: &[u8]) -> String {
    hex::encode(Sha256::digest(bytes))
}

fn spec(harness: HarnessId) -> Result<Install, InstallError> {
    harness
        .harness()
        .install()
        .ok_or_else(|| InstallError::NoInstaller(harness.as_str().to_owned()))
}

/// Checks the binary the hook will run: absolute, a regular executable
/// file, and it answers `--version` as vouch.
pub fn check_binary(exe: &Path) -> Result<(), InstallError> {
    let fail = |problem: String| InstallError::Binary {
        path: exe.display().to_string(),
        problem,
    };
    if !exe.is_absolute() {
        return Err(fail("the path is not absolute".to_owned()));
    }
    let meta = std::fs::metadata(exe).map_err(|e| fail(e.to_string()))?;
    use std::os::unix::fs::PermissionsExt;
    if !meta.is_file() || meta.permissions().mode() & 0o111 == 0 {
        return Err(fail("it is not an executable file".to_owned()));
    }
    let out = std::process::Command::new(exe)
        .arg("--version")
        .stdin(std::process::Stdio::null())
        .output()
        .map_err(|e| fail(format!("it does not run: {e}")))?;
    let text = String::from_utf8_lossy(&out.stdout);
    if !out.status.success() || !text.starts_with("vouch ") {
        return Err(fail(format!(
            "`--version` did not answer as vouch (exit {}, `{}`)",
            out.status.code().unwrap_or(-1),
            text.trim()
        )));
    }
    Ok(())
}

/// The first `n` words of a POSIX shell command line (quotes and
/// backslashes undone; what `snippet::quote` writes reads back).
pub fn shell_words(line: &str, n: usize) -> Vec<String> {
    let mut words = Vec::new();
    let mut word = String::new();
    let mut in_word = false;
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        match c {
            '\'' => {
                in_word = true;
                for q in chars.by_ref() {
                    if q == '\'' {
                        break;
                    }
                    word.push(q);
                }
            }
            '"' => {
                in_word = true;
                while let Some(q) = chars.next() {
                    match q {
                        '"' => break,
                        '\\' => {
                            if let Some(e) = chars.next() {
                                word.push(e);
                            }
                        }
                        other => word.push(other),
                    }
                }
            }
            '\\' => {
                in_word = true;
                if let Some(e) = chars.next() {
                    word.push(e);
                }
            }
            c if c.is_whitespace() => {
                if in_word {
                    words.push(std::mem::take(&mut word));
                    in_word = false;
                    if words.len() >= n {
                        return words;
                    }
                }
            }
            c => {
                in_word = true;
                word.push(c);
            }
        }
    }
    if in_word && words.len() < n {
        words.push(word);
    }
    words
}

/// Whether `command` runs `vouch hook <harness>` (any vouch binary: a
/// reinstall from another path replaces the old entry).
pub fn is_vouch_command(command: &str, harness: &str) -> bool {
    let words = shell_words(command, 3);
    match words.as_slice() {
        [exe, hook, name] => {
            let base = Path::new(exe)
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default();
            (base == "vouch" || base.starts_with("vouch-") || base.starts_with("vouch."))
                && hook == "hook"
                && name == harness
        }
        _ => false,
    }
}

/// Whether a JSON hook entry (a flat hook, or a group with `hooks`) is
/// vouch's: a command that runs `vouch hook <harness>`, or Claude Code's
/// `http` hook to vouch's route.
pub fn is_vouch_entry(entry: &json::Json, harness: &str) -> bool {
    let one = |h: &json::Json| {
        ["command", "bash"]
            .iter()
            .filter_map(|k| h.get(k).and_then(json::Json::as_str))
            .any(|c| is_vouch_command(c, harness))
            || (h.get("type").and_then(json::Json::as_str) == Some("http")
                && h.get("url")
                    .and_then(json::Json::as_str)
                    .is_some_and(|u| u.ends_with(&format!("/hooks/{harness}"))))
    };
    match entry.get("hooks").and_then(json::Json::as_array) {
        Some(inner) => inner.iter().any(one),
        None => one(entry),
    }
}

/// What install writes for a harness: the snippet, from the same code as
/// `vouch hook snippet` prints it.
fn fragment(
    opts: &Options<'_>,
    cfg: &Config,
    codex_config: PathBuf,
) -> Result<(String, Vec<String>, String, u64), InstallError> {
    let snippet_opts = SnippetOptions {
        harness: opts.harness,
        exe: opts.exe.clone(),
        home: opts.vouch_home.clone(),
        config: opts.config.clone(),
        http: false,
        codex_config,
        remote: opts.remote.clone(),
    };
    let timeout = snippet::timeout_secs(cfg);
    let command = snippet::command_line(&snippet_opts, timeout);
    let (text, notes) = snippet::render(&snippet_opts, cfg).map_err(InstallError::Config)?;
    Ok((text, notes, command, timeout))
}

/// `vouch install <harness>`.
pub fn install(opts: &Options<'_>, cfg: &Config) -> Result<Outcome, InstallError> {
    let spec = spec(opts.harness)?;
    let name = opts.harness.as_str();
    check_binary(&opts.exe)?;
    if let Some(remote) = &opts.remote {
        crate::hooks::remote::Remote::connect(remote, opts.env, std::time::Duration::from_secs(5))
            .map_err(|e| InstallError::Remote(e.to_string()))?;
    }
    let path = spec.path(opts.env)?;
    let (text, notes, command, timeout) = fragment(opts, cfg, path.clone())?;
    let resolved = atomic::resolve(&path).map_err(|e| settings_err(&path, e.to_string()))?;
    let current = atomic::read(&resolved.file).map_err(|e| settings_err(&path, e.to_string()))?;
    let (before, mode) = match &current {
        Some((bytes, mode)) => (
            Some(
                String::from_utf8(bytes.clone())
                    .map_err(|_| settings_err(&path, "it is not UTF-8 text"))?,
            ),
            *mode,
        ),
        None => (None, atomic::NEW_FILE_MODE),
    };
    let config_key = path.display().to_string();
    let mut record = Record {
        file: path.clone(),
        existed: before.is_some(),
        written: String::new(),
        original: None,
        json: None,
        toml: None,
    };
    let fragment = Fragment {
        text: &text,
        command: &command,
        timeout,
    };
    let after = merged(
        &spec,
        name,
        before.as_deref(),
        &fragment,
        &path,
        &mut record,
    )?;
    // Uninstall must give back exactly what was there: check now that it
    // would, and keep the text itself only where it would not.
    let back = unmerged(&spec, name, &after, &config_key, Some(&record))?;
    if back != before {
        record.original.clone_from(&before);
    }
    record.written = sha256(after.as_bytes());
    let mut notes: Vec<String> = notes
        .into_iter()
        .filter(|n| n.starts_with("warning:"))
        .collect();
    notes.extend(format_notes(opts.harness, &record));
    let outcome = |change| Outcome {
        file: path.clone(),
        link_target: resolved.via_link.then(|| resolved.file.clone()),
        change,
        notes: notes.clone(),
    };
    if before.as_deref() == Some(after.as_str()) {
        if !opts.dry_run && !record_path(opts).exists() {
            write_record(opts, &record)?;
        }
        return Ok(outcome(Change::Unchanged));
    }
    if opts.dry_run {
        return Ok(outcome(Change::Planned(diff(
            before.as_deref().unwrap_or(""),
            &after,
        ))));
    }
    write_record(opts, &record)?;
    atomic::write(&resolved.file, after.as_bytes(), mode).map_err(|source| {
        InstallError::Write {
            file: resolved.file.display().to_string(),
            source,
        }
    })?;
    Ok(outcome(Change::Written))
}

/// What install writes: the harness's fragment and its hook command line.
struct Fragment<'a> {
    text: &'a str,
    command: &'a str,
    timeout: u64,
}

/// `before` (the file's text, if any) with vouch's fragment merged in; what
/// else changed goes into `record`.
fn merged(
    spec: &Install,
    name: &str,
    before: Option<&str>,
    fragment: &Fragment<'_>,
    path: &Path,
    record: &mut Record,
) -> Result<String, InstallError> {
    let is_vouch = |e: &json::Json| is_vouch_entry(e, name);
    let is_vouch_cmd = |c: &str| is_vouch_command(c, name);
    let config_key = path.display().to_string();
    match spec.format {
        Format::Json(rules) => {
            let snippet: serde_json::Value = serde_json::from_str(fragment.text)
                .map_err(|e| InstallError::Config(format!("vouch's fragment: {e}")))?;
            let (mut doc, style) = match before {
                Some(t) if !t.trim().is_empty() => {
                    json::parse(t).map_err(|e| settings_err(path, e))?
                }
                _ => (json::Json::Object(Vec::new()), json::Style::default()),
            };
            let changes = json::merge(&mut doc, &snippet, &rules, &is_vouch)
                .map_err(|e| settings_err(path, e))?;
            record.json = Some(changes);
            json::render(&doc, &style).map_err(|e| settings_err(path, e))
        }
        Format::CodexToml => {
            let mut doc =
                codex_toml::parse(before.unwrap_or("")).map_err(|e| settings_err(path, e))?;
            let changes = codex_toml::merge(
                &mut doc,
                fragment.command,
                fragment.timeout,
                &config_key,
                &is_vouch_cmd,
            )
            .map_err(|e| settings_err(path, e))?;
            record.toml = Some(changes);
            Ok(doc.to_string())
        }
        Format::OwnFile { marker } => {
            if let Some(t) = before
                && !t.contains(marker)
            {
                return Err(settings_err(
                    path,
                    "a file that is not vouch's is already there; move it aside first",
                ));
            }
            Ok(fragment.text.to_owned())
        }
    }
}

/// What install changed besides vouch's hook, said to the user.
fn format_notes(harness: HarnessId, record: &Record) -> Vec<String> {
    let mut notes = Vec::new();
    if let Some(changes) = &record.json {
        for forced in &changes.forced {
            notes.push(format!(
                "turned `{}` on (it was {}){}",
                forced.path.join("."),
                forced
                    .before
                    .as_ref()
                    .map_or("unset".to_owned(), ToString::to_string),
                if harness.as_str() == "qwen" {
                    ": a repository's `.qwen/settings.json` now loads only in a folder you \
                     trusted, so a cloned one cannot switch vouch off with `disableAllHooks`. \
                     In an untrusted folder Qwen Code runs `--yolo` as `default` (its shell \
                     tool is then refused headless); trust a folder in \
                     `~/.qwen/trustedFolders.json` (docs/harnesses/qwen.md)"
                } else {
                    ""
                }
            ));
        }
    }
    notes
}

/// `vouch uninstall <harness>`.
pub fn uninstall(opts: &Options<'_>) -> Result<Outcome, InstallError> {
    let spec = spec(opts.harness)?;
    let name = opts.harness.as_str();
    let path = spec.path(opts.env)?;
    let config_key = path.display().to_string();
    let resolved = atomic::resolve(&path).map_err(|e| settings_err(&path, e.to_string()))?;
    let record = read_record(opts).filter(|r| r.file == path);
    let outcome = |change, notes| Outcome {
        file: path.clone(),
        link_target: resolved.via_link.then(|| resolved.file.clone()),
        change,
        notes,
    };
    let Some((bytes, mode)) =
        atomic::read(&resolved.file).map_err(|e| settings_err(&path, e.to_string()))?
    else {
        if !opts.dry_run {
            remove_record(opts);
        }
        return Ok(outcome(
            Change::Unchanged,
            vec!["the file does not exist".to_owned()],
        ));
    };
    let current = String::from_utf8(bytes.clone())
        .map_err(|_| settings_err(&path, "it is not UTF-8 text"))?;
    let untouched = record
        .as_ref()
        .is_some_and(|r| r.written == sha256(current.as_bytes()));
    let mut notes = Vec::new();
    let after: Option<String> = match &record {
        Some(r) if untouched => match &r.original {
            Some(original) => Some(original.clone()),
            None => unmerged(&spec, name, &current, &config_key, Some(r))?,
        },
        r => {
            if r.is_some() {
                notes.push(
                    "the file changed since vouch installed into it: only vouch's entries are \
                     taken out"
                        .to_owned(),
                );
            }
            unmerged(&spec, name, &current, &config_key, r.as_ref())?
        }
    };
    if after.as_deref() == Some(current.as_str()) {
        if !opts.dry_run {
            remove_record(opts);
        }
        notes.push("vouch is not installed there".to_owned());
        return Ok(outcome(Change::Unchanged, notes));
    }
    if opts.dry_run {
        return Ok(outcome(
            Change::Planned(diff(&current, after.as_deref().unwrap_or(""))),
            notes,
        ));
    }
    let change = match &after {
        Some(text) => {
            atomic::write(&resolved.file, text.as_bytes(), mode).map_err(|source| {
                InstallError::Write {
                    file: resolved.file.display().to_string(),
                    source,
                }
            })?;
            Change::Written
        }
        None => {
            atomic::remove(&resolved.file).map_err(|source| InstallError::Write {
                file: resolved.file.display().to_string(),
                source,
            })?;
            Change::Removed
        }
    };
    remove_record(opts);
    Ok(outcome(change, notes))
}

/// `text` with vouch taken out (and install's other changes undone when
/// `record` says what they were); `None` for a file that should not exist.
fn unmerged(
    spec: &Install,
    harness: &str,
    text: &str,
    config_key: &str,
    record: Option<&Record>,
) -> Result<Option<String>, InstallError> {
    let is_vouch = |e: &json::Json| is_vouch_entry(e, harness);
    let is_vouch_cmd = |c: &str| is_vouch_command(c, harness);
    let file = || record.map_or_else(|| PathBuf::from(config_key), |r| r.file.clone());
    match spec.format {
        Format::Json(_) => {
            if text.trim().is_empty() {
                return Ok(Some(text.to_owned()));
            }
            let (mut doc, style) = json::parse(text).map_err(|e| settings_err(&file(), e))?;
            let changes = record.and_then(|r| r.json.as_ref());
            if json::unmerge(&mut doc, &is_vouch, changes) == 0 && changes.is_none() {
                // Nothing of vouch's: the file stays as it is, layout and all.
                return Ok(Some(text.to_owned()));
            }
            let out = json::render(&doc, &style).map_err(|e| settings_err(&file(), e))?;
            if record.is_some_and(|r| !r.existed) && doc == json::Json::Object(Vec::new()) {
                return Ok(None);
            }
            Ok(Some(out))
        }
        Format::CodexToml => {
            let mut doc = codex_toml::parse(text).map_err(|e| settings_err(&file(), e))?;
            let changes = record.and_then(|r| r.toml.as_ref());
            if codex_toml::unmerge(&mut doc, config_key, &is_vouch_cmd, changes) == 0
                && changes.is_none()
            {
                return Ok(Some(text.to_owned()));
            }
            let out = doc.to_string();
            if record.is_some_and(|r| !r.existed) && out.trim().is_empty() {
                return Ok(None);
            }
            Ok(Some(out))
        }
        Format::OwnFile { marker } => {
            if text.contains(marker) {
                Ok(None)
            } else {
                Ok(Some(text.to_owned()))
            }
        }
    }
}

/// How many vouch entries `text` holds for the harness (install twice
/// must leave each event at one).
pub fn count_entries(harness: HarnessId, text: &str) -> Result<usize, String> {
    let spec = spec(harness).map_err(|e| e.to_string())?;
    let name = harness.as_str();
    match spec.format {
        Format::Json(_) => {
            let (doc, _) = json::parse(text)?;
            Ok(json::count_vouch(&doc, &|e| is_vouch_entry(e, name)))
        }
        Format::CodexToml => {
            let doc = codex_toml::parse(text)?;
            Ok(codex_toml::count_vouch(&doc, &|c| {
                is_vouch_command(c, name)
            }))
        }
        Format::OwnFile { marker } => Ok(usize::from(text.contains(marker))),
    }
}

fn record_path(opts: &Options<'_>) -> PathBuf {
    opts.records.join(format!("{}.json", opts.harness.as_str()))
}

fn write_record(opts: &Options<'_>, record: &Record) -> Result<(), InstallError> {
    let path = record_path(opts);
    let text = serde_json::to_string_pretty(record).map_err(|e| InstallError::Write {
        file: path.display().to_string(),
        source: std::io::Error::other(e),
    })?;
    let made = crate::store::ensure_private_dir(&opts.records).map_err(|e| InstallError::Write {
        file: opts.records.display().to_string(),
        source: std::io::Error::other(e.to_string()),
    });
    made.and_then(|()| {
        atomic::write(&path, text.as_bytes(), 0o600).map_err(|source| InstallError::Write {
            file: path.display().to_string(),
            source,
        })
    })
}

fn read_record(opts: &Options<'_>) -> Option<Record> {
    let text = std::fs::read_to_string(record_path(opts)).ok()?;
    serde_json::from_str(&text).ok()
}

fn remove_record(opts: &Options<'_>) {
    let _ = std::fs::remove_file(record_path(opts));
}

/// A line diff: the lines both texts share at their start and end are
/// left out; the rest is shown as removed (`-`) and added (`+`).
pub fn diff(before: &str, after: &str) -> String {
    let a: Vec<&str> = before.lines().collect();
    let b: Vec<&str> = after.lines().collect();
    let head = a.iter().zip(&b).take_while(|(x, y)| x == y).count();
    let tail = a
        .iter()
        .rev()
        .zip(b.iter().rev())
        .take_while(|(x, y)| x == y)
        .count()
        .min(a.len().saturating_sub(head))
        .min(b.len().saturating_sub(head));
    let mut out = format!("@@ line {} @@\n", head.saturating_add(1));
    for line in a
        .iter()
        .skip(head)
        .take(a.len().saturating_sub(head + tail))
    {
        out.push_str(&format!("-{line}\n"));
    }
    for line in b
        .iter()
        .skip(head)
        .take(b.len().saturating_sub(head + tail))
    {
        out.push_str(&format!("+{line}\n"));
    }
    out
}

/// The installing shell's view: paths, the binary, the records.
fn options_from_process<'a>(
    global: &crate::config::Global,
    harness: &str,
    dry_run: bool,
    remote: Option<RemoteOptions>,
    env: &'a dyn Fn(&str) -> Option<String>,
) -> Result<(Options<'a>, Config), InstallError> {
    let harness: HarnessId = harness
        .parse()
        .map_err(|e: crate::hooks::HookError| InstallError::Config(e.to_string()))?;
    let (paths, loaded) = crate::engine::load_global(global).map_err(InstallError::Config)?;
    let absolute = |p: &Path| std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf());
    let exe = crate::paths::current_exe()
        .map(absolute)
        .ok_or_else(|| InstallError::Binary {
            path: "vouch".to_owned(),
            problem: "cannot find the path of the running vouch binary".to_owned(),
        })?;
    let options = Options {
        harness,
        dry_run,
        exe,
        vouch_home: paths.vouch_home.clone(),
        config: global.config.as_deref().map(absolute),
        remote: remote.map(|mut r| {
            r.token_file = r.token_file.as_deref().map(absolute);
            r.ca_file = r.ca_file.as_deref().map(absolute);
            r
        }),
        records: paths.config_dir().join("installed"),
        env,
    };
    Ok((options, (*loaded.config).clone()))
}

/// Prints an outcome.
fn report(out: &mut impl Write, err: &mut impl Write, verb: &str, harness: &str, o: &Outcome) {
    let file = match &o.link_target {
        Some(target) => format!("{} (a link to {})", o.file.display(), target.display()),
        None => o.file.display().to_string(),
    };
    let line = match &o.change {
        Change::Written => format!("vouch: {verb} {harness}: wrote {file}"),
        Change::Removed => {
            format!("vouch: {verb} {harness}: removed {file}, which install had created")
        }
        Change::Unchanged => {
            format!("vouch: {verb} {harness}: {file} already as it should be; nothing written")
        }
        Change::Planned(diff) => {
            let _ = write!(out, "--- {file}\n+++ {file} (after {verb})\n{diff}");
            format!("vouch: {verb} {harness}: dry run, nothing written")
        }
    };
    let _ = writeln!(err, "{line}");
    for note in &o.notes {
        let _ = writeln!(err, "vouch: {note}");
    }
}

/// `vouch install <harness>` from the command line: exit 0 when the hook
/// is in place (or the dry run printed), 2 when nothing could be written.
pub fn run_install(
    global: &crate::config::Global,
    harness: &str,
    dry_run: bool,
    remote: Option<RemoteOptions>,
    mut out: impl Write,
    mut err: impl Write,
) -> i32 {
    let env = |name: &str| std::env::var(name).ok();
    let result = options_from_process(global, harness, dry_run, remote, &env)
        .and_then(|(opts, cfg)| install(&opts, &cfg));
    match result {
        Ok(o) => {
            report(&mut out, &mut err, "install", harness, &o);
            0
        }
        Err(e) => {
            let _ = writeln!(err, "vouch: install {harness}: {e}; nothing was written");
            2
        }
    }
}

/// `vouch uninstall <harness>` from the command line.
pub fn run_uninstall(
    global: &crate::config::Global,
    harness: &str,
    dry_run: bool,
    mut out: impl Write,
    mut err: impl Write,
) -> i32 {
    let env = |name: &str| std::env::var(name).ok();
    let result = options_from_process(global, harness, dry_run, None, &env)
        .and_then(|(opts, _)| uninstall(&opts));
    match result {
        Ok(o) => {
            report(&mut out, &mut err, "uninstall", harness, &o);
            0
        }
        Err(e) => {
            let _ = writeln!(err, "vouch: uninstall {harness}: {e}; nothing was written");
            2
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn commands_are_recognised_by_their_words() {
        assert!(is_vouch_command(
            "/usr/bin/vouch hook codex --timeout 100",
            "codex"
        ));
        assert!(is_vouch_command(
            "'/a b/vouch' hook qwen --home x || { exit 2; }",
            "qwen"
        ));
        assert!(!is_vouch_command("/usr/bin/vouch hook codex", "qwen"));
        assert!(!is_vouch_command("/usr/bin/other hook codex", "codex"));
        assert!(!is_vouch_command("echo vouch hook codex", "codex"));
        assert_eq!(shell_words(r"a 'b c' d\ e", 5), ["a", "b c", "d e"]);
    }

    #[test]
    fn the_diff_shows_only_what_changes() {
        let d = diff("a\nb\nc\n", "a\nx\nc\n");
        assert_eq!(d, "@@ line 2 @@\n-b\n+x\n");
    }
}
