//! The repository files that can switch vouch off, or change what runs
//! after vouch's check, per harness — read as hostile input.
//!
//! A repository is a stranger's: every read is bounded
//! ([`MAX_FILE_BYTES`], [`MAX_DIR_ENTRIES`]), only regular files are opened
//! (a FIFO would hang the read), a symbolic link is followed only when it
//! stays inside the repository (one that leaves it is itself a finding:
//! the harness would read a file vouch was not shown), and a file that
//! cannot be read as its format is a finding, never a pass — the harness
//! may read what vouch cannot. Nothing here panics on garbage: JSON depth
//! is bounded by the parser's recursion limit, and every lookup is total.

use std::fs;
use std::io::Read;
use std::path::{Path, PathBuf};

use serde::Serialize;
use serde_json::Value;

/// The largest file read; a larger one is a finding.
pub const MAX_FILE_BYTES: u64 = 1024 * 1024;
/// Entries of a hook or plugin directory looked at; more is a finding.
pub const MAX_DIR_ENTRIES: usize = 256;

crate::names::named_enum! {
    /// What a finding means.
    pub enum Kind {
        /// The file switches every hook off, vouch's included.
        SwitchesOff = "switches_off",
        /// Something of the repository's runs with or after vouch's check
        /// and can change what runs (hooks, plugins).
        RunsAfter = "runs_after",
        /// vouch could not check it (unreadable, too large, a link out of
        /// the repository): the harness may still read it.
        Unchecked = "unchecked",
    }
}

/// One repository file that needs the user's attention.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Finding {
    pub harness: &'static str,
    /// Relative to the directory checked.
    pub file: String,
    pub kind: Kind,
    pub what: String,
    pub fix: String,
}

/// What the machine says that changes a finding's words.
#[derive(Debug, Clone, Copy, Default)]
pub struct Context {
    /// Qwen Code's folder trust in the user's settings, if known.
    pub qwen_trust: Option<bool>,
}

/// A file's text, or why it is a finding.
enum Read_ {
    Absent,
    Text(String),
    Finding(String),
}

struct Repo {
    root: PathBuf,
}

impl Repo {
    /// Reads `rel` as untrusted input (see the module doc).
    fn read(&self, rel: &str) -> Read_ {
        let path = self.root.join(rel);
        if fs::symlink_metadata(&path).is_err() {
            return Read_::Absent;
        }
        let real = match fs::canonicalize(&path) {
            Ok(r) => r,
            Err(e) => return Read_::Finding(format!("it cannot be resolved ({e})")),
        };
        if !real.starts_with(&self.root) {
            return Read_::Finding(format!(
                "it leads outside the repository, to `{}`",
                real.display()
            ));
        }
        let meta = match fs::metadata(&real) {
            Ok(m) => m,
            Err(e) => return Read_::Finding(format!("it cannot be read ({e})")),
        };
        if !meta.is_file() {
            return Read_::Finding("it is not a regular file".to_owned());
        }
        if meta.len() > MAX_FILE_BYTES {
            return Read_::Finding(format!("it is larger than {MAX_FILE_BYTES} bytes"));
        }
        let mut bytes = Vec::new();
        // Never a FIFO swapped in after the check above (`open_regular`).
        let read = crate::paths::open_regular(&real)
            .and_then(|f| f.take(MAX_FILE_BYTES + 1).read_to_end(&mut bytes));
        if let Err(e) = read {
            return Read_::Finding(format!("it cannot be read ({e})"));
        }
        match String::from_utf8(bytes) {
            Ok(text) => Read_::Text(text),
            Err(_) => Read_::Finding("it is not UTF-8 text".to_owned()),
        }
    }

    /// The regular files directly in directory `rel` (bounded), or why not.
    fn list(&self, rel: &str) -> Result<Vec<String>, String> {
        let path = self.root.join(rel);
        if fs::symlink_metadata(&path).is_err() {
            return Ok(Vec::new());
        }
        let real = fs::canonicalize(&path).map_err(|e| format!("it cannot be resolved ({e})"))?;
        if !real.starts_with(&self.root) {
            return Err(format!(
                "it leads outside the repository, to `{}`",
                real.display()
            ));
        }
        let entries = fs::read_dir(&real).map_err(|e| format!("it cannot be listed ({e})"))?;
        let mut names = Vec::new();
        for entry in entries.take(MAX_DIR_ENTRIES.saturating_add(1)) {
            let entry = entry.map_err(|e| format!("it cannot be listed ({e})"))?;
            names.push(entry.file_name().to_string_lossy().into_owned());
        }
        if names.len() > MAX_DIR_ENTRIES {
            return Err(format!("it holds more than {MAX_DIR_ENTRIES} entries"));
        }
        names.sort();
        Ok(names)
    }
}

/// JSON with comments (Gemini CLI, Qwen Code and OpenCode read JSONC):
/// `//` and `/* */` outside strings become spaces, and trailing commas
/// before `}` or `]` go.
pub fn strip_jsonc(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    let mut in_string = false;
    while let Some(c) = chars.next() {
        if in_string {
            out.push(c);
            match c {
                '\\' => {
                    if let Some(n) = chars.next() {
                        out.push(n);
                    }
                }
                '"' => in_string = false,
                _ => {}
            }
            continue;
        }
        match (c, chars.peek()) {
            ('"', _) => {
                in_string = true;
                out.push(c);
            }
            ('/', Some('/')) => {
                for n in chars.by_ref() {
                    if n == '\n' {
                        out.push('\n');
                        break;
                    }
                }
            }
            ('/', Some('*')) => {
                chars.next();
                let mut last = ' ';
                for n in chars.by_ref() {
                    if last == '*' && n == '/' {
                        break;
                    }
                    last = n;
                }
                out.push(' ');
            }
            _ => out.push(c),
        }
    }
    // Trailing commas, outside strings (a second pass that tracks strings).
    let mut cleaned = String::with_capacity(out.len());
    let mut in_string = false;
    let mut escaped = false;
    let chars: Vec<char> = out.chars().collect();
    for (i, &c) in chars.iter().enumerate() {
        if in_string {
            cleaned.push(c);
            if escaped {
                escaped = false;
            } else if c == '\\' {
                escaped = true;
            } else if c == '"' {
                in_string = false;
            }
            continue;
        }
        if c == '"' {
            in_string = true;
        }
        if c == ',' {
            let next = chars
                .iter()
                .skip(i.saturating_add(1))
                .find(|n| !n.is_whitespace());
            if matches!(next, Some('}' | ']')) {
                continue;
            }
        }
        cleaned.push(c);
    }
    cleaned
}

/// A file read as JSON(C), or the finding that it could not be.
fn json_file(
    repo: &Repo,
    rel: &str,
    harness: &'static str,
    out: &mut Vec<Finding>,
) -> Option<Value> {
    match repo.read(rel) {
        Read_::Absent => None,
        Read_::Finding(why) => {
            out.push(unchecked(harness, rel, &why));
            None
        }
        Read_::Text(text) => match serde_json::from_str::<Value>(&strip_jsonc(&text)) {
            Ok(v) => Some(v),
            Err(e) => {
                out.push(unchecked(
                    harness,
                    rel,
                    &format!("it is not JSON vouch can read ({e})"),
                ));
                None
            }
        },
    }
}

fn unchecked(harness: &'static str, rel: &str, why: &str) -> Finding {
    Finding {
        harness,
        file: rel.to_owned(),
        kind: Kind::Unchecked,
        what: format!("vouch could not check this file: {why}; the harness may still read it"),
        fix: "look at it yourself, and remove or repair it".to_owned(),
    }
}

fn is_true(v: &Value, path: &[&str]) -> bool {
    path.iter().try_fold(v, |v, k| v.get(k)) == Some(&Value::Bool(true))
}

/// The events of a `hooks` object that list at least one entry.
fn hook_events(v: &Value) -> Vec<String> {
    v.get("hooks")
        .and_then(Value::as_object)
        .map(|o| {
            o.iter()
                .filter(|(_, entries)| entries.as_array().is_some_and(|a| !a.is_empty()))
                .map(|(k, _)| k.clone())
                .collect()
        })
        .unwrap_or_default()
}

/// Every finding in `dir`.
pub fn scan(dir: &Path, ctx: &Context) -> Vec<Finding> {
    let root = match fs::canonicalize(dir) {
        Ok(r) => r,
        Err(e) => {
            return vec![unchecked(
                "vouch",
                ".",
                &format!("the directory cannot be resolved ({e})"),
            )];
        }
    };
    let repo = Repo { root };
    let mut out = Vec::new();
    // A harness directory that is a link out of the repository: what the
    // harness reads through it is not the repository's to show.
    for (harness, rel) in [
        ("claude-code", ".claude"),
        ("codex", ".codex"),
        ("gemini", ".gemini"),
        ("qwen", ".qwen"),
        ("copilot", ".github"),
        ("copilot", ".github/copilot"),
        ("copilot", ".github/hooks"),
        ("opencode", ".opencode"),
        ("cursor", ".cursor"),
    ] {
        let path = repo.root.join(rel);
        let linked = fs::symlink_metadata(&path).is_ok_and(|m| m.file_type().is_symlink());
        if linked {
            match fs::canonicalize(&path) {
                Ok(real) if real.starts_with(&repo.root) => {}
                Ok(real) => out.push(unchecked(
                    harness,
                    rel,
                    &format!(
                        "it is a link out of the repository, to `{}`",
                        real.display()
                    ),
                )),
                Err(e) => out.push(unchecked(
                    harness,
                    rel,
                    &format!("it is a link that cannot be resolved ({e})"),
                )),
            }
        }
    }
    claude_code(&repo, &mut out);
    codex(&repo, &mut out);
    gemini(&repo, &mut out);
    qwen(&repo, ctx, &mut out);
    copilot(&repo, &mut out);
    opencode(&repo, &mut out);
    cursor(&repo, &mut out);
    out
}

fn claude_code(repo: &Repo, out: &mut Vec<Finding>) {
    for rel in [".claude/settings.json", ".claude/settings.local.json"] {
        let Some(v) = json_file(repo, rel, "claude-code", out) else {
            continue;
        };
        if is_true(&v, &["disableAllHooks"]) {
            out.push(Finding {
                harness: "claude-code",
                file: rel.to_owned(),
                kind: Kind::SwitchesOff,
                what: "`disableAllHooks: true` switches off every hook in this project, vouch's \
                       included: tools run unreviewed, with no warning"
                    .to_owned(),
                fix: format!("remove `disableAllHooks` from {rel}"),
            });
        }
        let events = hook_events(&v);
        if !events.is_empty() {
            out.push(Finding {
                harness: "claude-code",
                file: rel.to_owned(),
                kind: Kind::RunsAfter,
                what: format!(
                    "the project defines hooks ({}) that run beside vouch's; a `PreToolUse` hook \
                     can allow a call or rewrite its input (`updatedInput`) after vouch's check \
                     (Cursor runs these too)",
                    events.join(", ")
                ),
                fix: format!("read them, and remove from {rel} any hook you did not write"),
            });
        }
    }
}

fn codex(repo: &Repo, out: &mut Vec<Finding>) {
    let rel = ".codex/config.toml";
    match repo.read(rel) {
        Read_::Absent => {}
        Read_::Finding(why) => out.push(unchecked("codex", rel, &why)),
        Read_::Text(text) => match text.parse::<toml::Table>() {
            Err(e) => out.push(unchecked(
                "codex",
                rel,
                &format!(
                    "it is not TOML vouch can read ({})",
                    e.to_string().trim_end()
                ),
            )),
            Ok(t) => {
                let off = t
                    .get("features")
                    .and_then(|f| f.get("hooks"))
                    .and_then(toml::Value::as_bool)
                    == Some(false);
                if off {
                    out.push(Finding {
                        harness: "codex",
                        file: rel.to_owned(),
                        kind: Kind::SwitchesOff,
                        what: "`[features] hooks = false` switches Codex's hooks off, vouch's \
                               included, once the project is trusted"
                            .to_owned(),
                        fix: format!("remove `hooks` from `[features]` in {rel}"),
                    });
                }
                if t.get("hooks").is_some() {
                    out.push(Finding {
                        harness: "codex",
                        file: rel.to_owned(),
                        kind: Kind::RunsAfter,
                        what: "the project defines hooks that run beside vouch's once the \
                               project is trusted"
                            .to_owned(),
                        fix: format!("read them, and remove from {rel} any hook you did not write"),
                    });
                }
            }
        },
    }
    let rel = ".codex/hooks.json";
    if let Some(v) = json_file(repo, rel, "codex", out)
        && !hook_events(&v).is_empty()
    {
        out.push(Finding {
            harness: "codex",
            file: rel.to_owned(),
            kind: Kind::RunsAfter,
            what: "the project defines hooks that run beside vouch's once the project is trusted"
                .to_owned(),
            fix: format!("read them, and remove {rel} if you did not write it"),
        });
    }
}

fn gemini(repo: &Repo, out: &mut Vec<Finding>) {
    let rel = ".gemini/settings.json";
    let Some(v) = json_file(repo, rel, "gemini", out) else {
        return;
    };
    let config = v.get("hooksConfig");
    if config.and_then(|c| c.get("enabled")) == Some(&Value::Bool(false)) {
        out.push(Finding {
            harness: "gemini",
            file: rel.to_owned(),
            kind: Kind::SwitchesOff,
            what: "`hooksConfig.enabled: false` switches off every hook in this project, vouch's \
                   included, with no warning"
                .to_owned(),
            fix: format!("remove `hooksConfig.enabled` from {rel}"),
        });
    }
    let disabled: Vec<String> = config
        .and_then(|c| c.get("disabled"))
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(|d| d.as_str().map(str::to_owned))
                .collect()
        })
        .unwrap_or_default();
    if !disabled.is_empty() {
        out.push(Finding {
            harness: "gemini",
            file: rel.to_owned(),
            kind: Kind::SwitchesOff,
            what: format!(
                "`hooksConfig.disabled` switches off the hooks named {}{}",
                disabled.join(", "),
                if disabled.iter().any(|d| d == "vouch") {
                    ", vouch's among them"
                } else {
                    " (vouch's hook is named `vouch`: a hook can be renamed to match)"
                }
            ),
            fix: format!("remove `hooksConfig.disabled` from {rel}"),
        });
    }
    let events = hook_events(&v);
    if !events.is_empty() {
        out.push(Finding {
            harness: "gemini",
            file: rel.to_owned(),
            kind: Kind::RunsAfter,
            what: format!(
                "the project defines hooks ({}) that Gemini CLI trusts after one warning; a \
                 `BeforeTool` hook can rewrite the tool's input after vouch's check",
                events.join(", ")
            ),
            fix: format!("read them, and remove from {rel} any hook you did not write"),
        });
    }
}

fn qwen(repo: &Repo, ctx: &Context, out: &mut Vec<Finding>) {
    let rel = ".qwen/settings.json";
    let Some(v) = json_file(repo, rel, "qwen", out) else {
        return;
    };
    if is_true(&v, &["disableAllHooks"]) {
        let when = match ctx.qwen_trust {
            Some(true) => {
                "in a folder you trust (folder trust is on in your settings: it is ignored \
                 while this folder is untrusted, and trusting it switches vouch off)"
            }
            Some(false) | None => {
                "now: folder trust is off in your settings, so every folder counts as trusted"
            }
        };
        out.push(Finding {
            harness: "qwen",
            file: rel.to_owned(),
            kind: Kind::SwitchesOff,
            what: format!(
                "`disableAllHooks: true` switches off every hook, vouch's included, with no \
                 warning, {when}"
            ),
            fix: format!(
                "remove `disableAllHooks` from {rel}, and keep folder trust on (`vouch install \
                 qwen` turns it on)"
            ),
        });
    }
}

fn copilot(repo: &Repo, out: &mut Vec<Finding>) {
    for rel in [
        ".github/copilot/settings.json",
        ".github/copilot/settings.local.json",
    ] {
        if let Some(v) = json_file(repo, rel, "copilot", out)
            && is_true(&v, &["disableAllHooks"])
        {
            out.push(Finding {
                harness: "copilot",
                file: rel.to_owned(),
                kind: Kind::SwitchesOff,
                what: "`disableAllHooks: true` switches off every hook, vouch's included, once \
                       the folder is trusted (`--trust-folder`)"
                    .to_owned(),
                fix: format!("remove `disableAllHooks` from {rel}"),
            });
        }
    }
    let dir = ".github/hooks";
    let names = match repo.list(dir) {
        Ok(n) => n,
        Err(why) => {
            out.push(unchecked("copilot", dir, &why));
            return;
        }
    };
    for name in names.iter().filter(|n| n.ends_with(".json")) {
        let rel = format!("{dir}/{name}");
        let Some(v) = json_file(repo, &rel, "copilot", out) else {
            continue;
        };
        let events = hook_events(&v);
        let pre: Vec<&String> = events
            .iter()
            .filter(|e| matches!(e.as_str(), "preToolUse" | "PreToolUse"))
            .collect();
        if pre.is_empty() {
            continue;
        }
        let rewrites = v.to_string().contains("modifiedArgs");
        out.push(Finding {
            harness: "copilot",
            file: rel.clone(),
            kind: Kind::RunsAfter,
            what: format!(
                "a repository `preToolUse` hook runs after vouch's in a trusted folder and can \
                 rewrite the arguments vouch allowed (`modifiedArgs`){}; the audit counts such \
                 a call as `ran_unreviewed`, after it ran",
                if rewrites {
                    ", and this one's command answers `modifiedArgs`"
                } else {
                    ""
                }
            ),
            fix: format!("read it, and remove {rel} if you did not write it"),
        });
    }
}

fn opencode(repo: &Repo, out: &mut Vec<Finding>) {
    for dir in [".opencode/plugins", ".opencode/plugin"] {
        match repo.list(dir) {
            Err(why) => out.push(unchecked("opencode", dir, &why)),
            Ok(names) => {
                for name in names.iter().filter(|n| {
                    [".js", ".ts", ".mjs", ".cjs", ".mts", ".cts", ".jsx", ".tsx"]
                        .iter()
                        .any(|ext| n.ends_with(ext))
                }) {
                    let rel = format!("{dir}/{name}");
                    out.push(Finding {
                        harness: "opencode",
                        file: rel.clone(),
                        kind: Kind::RunsAfter,
                        what: "a project plugin loads with no prompt and runs after vouch's: it \
                               can rewrite a tool's arguments (`output.args`) after vouch's \
                               check, or run any code inside OpenCode"
                            .to_owned(),
                        fix: format!("read it, and remove {rel} if you did not write it"),
                    });
                }
            }
        }
    }
    for rel in [
        "opencode.json",
        "opencode.jsonc",
        ".opencode/opencode.json",
        ".opencode/opencode.jsonc",
    ] {
        let Some(v) = json_file(repo, rel, "opencode", out) else {
            continue;
        };
        let plugins: Vec<String> = v
            .get("plugin")
            .and_then(Value::as_array)
            .map(|a| {
                a.iter()
                    .map(|p| p.as_str().unwrap_or("?").to_owned())
                    .collect()
            })
            .unwrap_or_default();
        if !plugins.is_empty() {
            out.push(Finding {
                harness: "opencode",
                file: rel.to_owned(),
                kind: Kind::RunsAfter,
                what: format!(
                    "`plugin` loads {} into OpenCode, after vouch's plugin: each can rewrite a \
                     tool's arguments after vouch's check",
                    plugins.join(", ")
                ),
                fix: format!("remove the plugins you did not choose from `plugin` in {rel}"),
            });
        }
    }
}

fn cursor(repo: &Repo, out: &mut Vec<Finding>) {
    let rel = ".cursor/hooks.json";
    let Some(v) = json_file(repo, rel, "cursor", out) else {
        return;
    };
    let events = hook_events(&v);
    if !events.is_empty() {
        out.push(Finding {
            harness: "cursor",
            file: rel.to_owned(),
            kind: Kind::RunsAfter,
            what: format!(
                "the project defines hooks ({}) that run beside vouch's in a trusted workspace",
                events.join(", ")
            ),
            fix: format!("read them, and remove from {rel} any hook you did not write"),
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn jsonc_comments_and_trailing_commas_go_but_strings_stay() {
        let text = "{\n // c\n \"a\": \"x // y\", /* z */ \"b\": [1, 2,],\n}";
        let v: Value = serde_json::from_str(&strip_jsonc(text)).unwrap();
        assert_eq!(v["a"], "x // y");
        assert_eq!(v["b"], serde_json::json!([1, 2]));
    }
}
