//! `git` as an inert command: a read-only subcommand with read-only
//! options, in a repository whose configuration cannot name a program.
//!
//! git runs what its configuration names: `core.fsmonitor` on `git status`,
//! `diff.external` and textconv drivers on `git diff`/`log -p`, filters on
//! any command that compares the worktree, `gpg.program` when
//! `log.showSignature` is on, a pager on a terminal. So a git unit is inert
//! only when every configuration file that applies to it — the
//! repository's (found from the unit's working directory, as git finds it,
//! through a `.git` file to a worktree's or submodule's directory), the
//! user's and the system's — was read at decision time, within a budget,
//! and sets none of the keys that name a program, and includes no other
//! file. The environment's `GIT_*` variables are the harness's (see
//! `docs/inert.md`); a command-line assignment of one is refused.
//!
//! Accepted write: `git status` and a worktree `git diff` may refresh
//! `.git/index` (stat data only; no tracked file changes). Commands that
//! take a lock (`--no-optional-locks` avoids it) are otherwise read-only.

use std::path::{Path, PathBuf};

use crate::shell::options::{Item, OptName, OptionSpec, Parsed};
use crate::shell::spec::git::{self as knowledge, Sub};

use super::files::{self, Files, Kind};

/// How much configuration is read before giving up (not inert).
const MAX_CONFIG_BYTES: u64 = 256 * 1024;
/// How many parent directories are searched for `.git`.
const MAX_DEPTH: usize = 64;
/// How many entries of a hooks directory are looked at.
const MAX_HOOKS: usize = 256;

/// Why the git unit's subcommand and its words are not inert (`None`: they
/// are), by the table's knowledge of git (`crate::shell::spec::git`).
/// `files` answers whether a path named is a git configuration that holds
/// a credential.
pub fn argument_refusal(name: &str, rest: &[&str], files: &dyn Files) -> Option<String> {
    let Some(sub) = knowledge::subcommand(name) else {
        return Some(format!("`git {name}` is not in the read-only list"));
    };
    if let Some(why) = history_content_refusal(name, rest, files) {
        return Some(why);
    }
    match sub {
        Sub::Viewer => viewer_refusal(name, rest),
        Sub::Only(spec) => only_refusal(name, &spec, rest, false),
        Sub::ListOnly(spec) => only_refusal(name, &spec, rest, true),
        Sub::Listing => match rest {
            ["list", options @ ..]
                if options.iter().all(|o| knowledge::LIST_OPTIONS.contains(o)) =>
            {
                None
            }
            _ => Some(format!("`git {name}` other than `list` changes something")),
        },
    }
}

/// Options that keep `git show` and `git log` to names and counts.
const NO_PATCH: &[&str] = &[
    "-s",
    "--no-patch",
    "--stat",
    "--shortstat",
    "--numstat",
    "--name-only",
    "--name-status",
    "--summary",
    "--dirstat",
    "--raw",
];

/// Options that make `git log` print patches.
const PATCH: &[&str] = &[
    "-p",
    "-u",
    "--patch",
    "--cc",
    "-c",
    "--unified",
    "--word-diff",
];

/// Why `git NAME REST…` may print a file's content out of the repository's
/// history, where a secret committed once (and deleted since) still is:
/// `git show HEAD:.env`, `git log -p`, `git show COMMIT`, `git cat-file -p`,
/// `git diff A B`, `git blame .env`. Allowed only when a pathspec after
/// `--` limits it to paths that are not sensitive by name.
fn history_content_refusal(name: &str, rest: &[&str], files: &dyn Files) -> Option<String> {
    let split = rest.iter().position(|w| *w == "--");
    let (before, paths) = match split {
        Some(k) => (
            rest.get(..k).unwrap_or_default(),
            rest.get(k + 1..).unwrap_or_default(),
        ),
        None => (rest, &[][..]),
    };
    let sensitive = |path: &str| super::sensitive_by_name(path, files);
    for word in before {
        if let Some((_, path)) = word.split_once(':')
            && !word.starts_with('-')
            && !word.contains("://")
            && sensitive(path)
        {
            return Some(format!(
                "`git {name} {word}` prints a sensitive file out of the history"
            ));
        }
    }
    if paths.iter().any(|p| sensitive(p)) {
        return Some(format!("`git {name}` of a sensitive path"));
    }
    let options = || before.iter().filter(|w| w.starts_with('-'));
    let has = |list: &[&str]| {
        options().any(|w| {
            let o = w.split('=').next().unwrap_or(w);
            list.contains(&o) || (o.starts_with("-U") && list.contains(&"-u"))
        })
    };
    let operands = before.iter().filter(|w| !w.starts_with('-')).count();
    let patches = match name {
        "show" => !has(NO_PATCH),
        "log" | "whatchanged" | "reflog" => has(PATCH),
        "cat-file" => has(&["-p"]) || operands >= 2,
        "blame" => before.iter().any(|w| !w.starts_with('-') && sensitive(w)),
        "diff" => {
            operands >= 2
                || before
                    .iter()
                    .any(|w| !w.starts_with('-') && w.contains(".."))
        }
        _ => false,
    };
    (patches && paths.is_empty()).then(|| {
        format!(
            "`git {name}` prints file contents out of the history, which may hold a secret committed once; a pathspec after `--` limits it"
        )
    })
}

fn viewer_refusal(name: &str, rest: &[&str]) -> Option<String> {
    for word in rest {
        if *word == "--" {
            break;
        }
        let option = word.split('=').next().unwrap_or_default();
        // git's parse-options takes any unambiguous abbreviation: `--ext`
        // may be `--ext-diff`.
        let refused = knowledge::VIEWER_REFUSED.iter().any(|r| {
            *r == option || (option.len() > 3 && option.starts_with("--") && r.starts_with(option))
        });
        if refused {
            return Some(format!(
                "`git {name} {option}` writes a file, runs a program or reads outside the repository"
            ));
        }
        if knowledge::FORMAT_RUNS.iter().any(|p| word.contains(p)) {
            return Some(format!(
                "`git {name}` with a format that verifies signatures (runs gpg)"
            ));
        }
    }
    if name == "reflog"
        && rest
            .first()
            .is_some_and(|w| !matches!(*w, "show" | "list") && !w.starts_with('-'))
    {
        return Some("`git reflog` other than `show` changes the reflog".to_owned());
    }
    None
}

fn only_refusal(name: &str, spec: &OptionSpec, rest: &[&str], list_only: bool) -> Option<String> {
    let parsed = Parsed::new(spec, rest);
    let mut operands = 0;
    for item in &parsed.items {
        match item {
            Item::Opt {
                name: OptName::Long(long),
                at,
                ..
            } if rest
                .get(*at)
                .map(|w| w.trim_start_matches('-'))
                .map(|w| w.split_once('=').map_or(w, |(n, _)| n))
                != Some(*long) =>
            {
                return Some(format!(
                    "`git {name}` with an abbreviated long option (`--{long}`)"
                ));
            }
            Item::Opt { .. } | Item::End { .. } => {}
            Item::Operand { .. } => operands += 1,
            Item::Unknown { .. } | Item::Invalid { .. } => {
                return Some(format!(
                    "`git {name}` with an option that is not in its read-only list"
                ));
            }
        }
    }
    let listing = parsed
        .items
        .iter()
        .any(|item| matches!(item, Item::Opt { name, .. } if name.is(knowledge::LISTING)));
    if list_only && operands > 0 && !listing {
        return Some(format!(
            "`git {name}` with an operand creates or changes something"
        ));
    }
    if name == "remote" && operands > 0 {
        return Some(
            "`git remote` subcommands other than the listing may use the network".to_owned(),
        );
    }
    None
}

/// Why git run in `cwd` as `git SUB REST…` may do more than read (`None`:
/// it cannot): the repository found as git finds it, its configuration,
/// hooks, and for `git diff` a path operand outside it, all asked of
/// `files`.
pub fn repository_refusal(
    cwd: &Path,
    sub: &str,
    rest: &[&str],
    home: &Path,
    system: &Path,
    files: &dyn Files,
) -> Option<String> {
    let mut budget = MAX_CONFIG_BYTES;
    let (top, dirs) = match repository(cwd, &mut budget, files) {
        Ok(Some(found)) => found,
        // No repository where vouch looks (or no such directory): git
        // would fail, or vouch does not see the filesystem the command
        // runs on. Either way nothing is proven.
        Ok(None) => return Some(format!("no git repository found from `{}`", cwd.display())),
        Err(why) => return Some(format!("the repository could not be read: {why}")),
    };
    if knowledge::IMPLICIT_NO_INDEX.contains(&sub)
        && let Some(why) = outside_operand(cwd, &top, rest, files)
    {
        return Some(why);
    }
    if let Some(why) = hooks_refusal(&dirs, files) {
        return Some(why);
    }
    configuration_refusal(&top, &dirs, home, system, &mut budget, files)
}

/// `git diff A B` where a path lies outside the repository compares the
/// two files as `--no-index` does, whatever they are: an operand that is
/// absolute, in the home (`~`), climbs out (`..`) or resolves outside the
/// repository's top is refused.
fn outside_operand(cwd: &Path, top: &Path, rest: &[&str], files: &dyn Files) -> Option<String> {
    for word in rest {
        if word.starts_with('-') && *word != "-" {
            continue;
        }
        let outside = word.starts_with('/')
            || word.starts_with('~')
            || word.split('/').any(|c| c == "..")
            || files
                .canonical(&cwd.join(word))
                .is_ok_and(|real| !real.starts_with(top) && !top.starts_with(&real));
        if outside {
            return Some(format!(
                "`git diff` with `{word}`, a path outside the repository (read as `--no-index`)"
            ));
        }
    }
    None
}

/// A hook git may run on a read (`post-index-change` when `git status`
/// refreshes the index): any file in a hooks directory that is not one of
/// git's `.sample`s.
fn hooks_refusal(dirs: &[PathBuf], files: &dyn Files) -> Option<String> {
    for dir in dirs {
        let hooks = dir.join("hooks");
        let Ok(entries) = files.entries(&hooks) else {
            continue;
        };
        for (seen, entry) in entries.enumerate() {
            if seen >= MAX_HOOKS {
                return Some(format!("`{}` has too many entries", hooks.display()));
            }
            let Ok(entry) = entry else {
                return Some(format!("`{}` could not be read", hooks.display()));
            };
            let name = entry.name.to_string_lossy();
            if !name.ends_with(".sample") {
                return Some(format!(
                    "the repository has a hook (`{name}`), which git may run on a read"
                ));
            }
        }
    }
    None
}

/// Where git finds the repository of `cwd`: the directory holding `.git`
/// and the git directory itself (a `.git` file's `gitdir:`), plus a
/// worktree's common directory.
fn repository(
    cwd: &Path,
    budget: &mut u64,
    files: &dyn Files,
) -> Result<Option<(PathBuf, Vec<PathBuf>)>, String> {
    let mut dir = Some(cwd);
    for _ in 0..MAX_DEPTH {
        let Some(here) = dir else {
            return Ok(None);
        };
        let dot_git = here.join(".git");
        match files.lstat(&dot_git) {
            Ok(meta) if meta.kind == Kind::Dir => {
                return Ok(Some((here.to_path_buf(), vec![dot_git])));
            }
            Ok(meta) if meta.kind == Kind::File => {
                let text = read_limited(&dot_git, budget, files)?;
                let target = text
                    .strip_prefix("gitdir:")
                    .map(str::trim)
                    .ok_or_else(|| format!("`{}` is not a gitdir file", dot_git.display()))?;
                let gitdir = here.join(target);
                let mut dirs = vec![gitdir.clone()];
                if let Ok(common) = read_limited(&gitdir.join("commondir"), budget, files) {
                    dirs.push(gitdir.join(common.trim()));
                }
                return Ok(Some((here.to_path_buf(), dirs)));
            }
            Ok(_) => {
                return Err(format!(
                    "`{}` is neither a directory nor a file",
                    dot_git.display()
                ));
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(format!("`{}`: {e}", dot_git.display())),
        }
        // A bare repository (or a `.git` directory entered directly): git
        // uses a directory with `HEAD`, `objects/` and `refs/` as the
        // repository itself, with its own configuration and hooks.
        if files.is_file_at(&here.join("HEAD"))
            && files.is_dir_at(&here.join("objects"))
            && files.is_dir_at(&here.join("refs"))
        {
            let mut dirs = vec![here.to_path_buf()];
            if let Ok(common) = read_limited(&here.join("commondir"), budget, files) {
                dirs.push(here.join(common.trim()));
            }
            return Ok(Some((here.to_path_buf(), dirs)));
        }
        dir = here.parent();
    }
    Err("the repository search went too deep".to_owned())
}

fn read_limited(path: &Path, budget: &mut u64, files: &dyn Files) -> Result<String, String> {
    let meta = files
        .stat(path)
        .map_err(|e| format!("`{}`: {e}", path.display()))?;
    if meta.len > *budget {
        return Err(format!(
            "`{}` is larger than the configuration budget",
            path.display()
        ));
    }
    let limit = *budget;
    *budget = budget.saturating_sub(meta.len);
    files
        .read(path, limit)
        .and_then(files::text)
        .map_err(|e| format!("`{}`: {e}", path.display()))
}

/// Why the configuration that applies to a git command run in `cwd` may
/// make it run a program (`None`: it cannot). `home` is the user's home
/// (for `~/.gitconfig`); `system` the system file (`/etc/gitconfig`).
/// Why the configuration that applies to the repository at `top` (git
/// directories `dirs`) may make git run a program (`None`: it cannot).
/// `home` is the user's home (for `~/.gitconfig`); `system` the system file
/// (`/etc/gitconfig`).
fn configuration_refusal(
    top: &Path,
    dirs: &[PathBuf],
    home: &Path,
    system: &Path,
    budget: &mut u64,
    files: &dyn Files,
) -> Option<String> {
    if files.exists(&top.join(".gitmodules")) {
        return Some(
            "the repository has submodules, whose own configuration git also follows".to_owned(),
        );
    }
    let mut configs: Vec<PathBuf> = dirs
        .iter()
        .flat_map(|d| [d.join("config"), d.join("config.worktree")])
        .collect();
    configs.push(home.join(".gitconfig"));
    configs.push(home.join(".config/git/config"));
    configs.push(system.to_path_buf());
    for file in configs {
        let text = match read_limited(&file, budget, files) {
            Ok(text) => text,
            Err(_) if !files.exists(&file) => continue,
            Err(why) => return Some(why),
        };
        if let Some(key) = first_program_key(&text) {
            return Some(format!(
                "`{}` sets `{key}`, which names a program git may run",
                file.display()
            ));
        }
        if carries_credentials(&text) {
            return Some(format!(
                "`{}` carries a credential (a URL with a user or token, an extra header) that git prints",
                file.display()
            ));
        }
    }
    None
}

/// A git configuration text holding a credential git commands print
/// (`git remote -v`, `git config -l`): a URL with a user or token in it
/// (`https://user:TOKEN@host`, `https://TOKEN@host`, a `pushurl`, an
/// `insteadOf`), or an extra HTTP header (`http.*.extraheader`).
pub(super) fn carries_credentials(text: &str) -> bool {
    let lower = text.to_ascii_lowercase();
    lower.contains("extraheader")
        || lower.split("://").skip(1).any(|after| {
            let url: String = after
                .chars()
                .take_while(|c| !c.is_whitespace() && *c != '"' && *c != '\'')
                .collect();
            let authority = url.split('/').next().unwrap_or("");
            // A token in the query (`?private_token=…`, `?access_key=…`).
            let query = url.split_once('?').map_or("", |(_, q)| q);
            authority.contains('@')
                || ["token", "key", "secret", "pass", "auth", "sig"]
                    .iter()
                    .any(|k| query.contains(k))
        })
}

/// The first key of a git configuration text that names a program, or a
/// line that cannot be read (refused rather than guessed). Read as git
/// reads it: a byte-order mark before the first line, `[section
/// "subsection"]` and `[section.sub]` headers, comments after `#` or `;`
/// outside quotes, and values continued over a backslash-newline (a line
/// inside a continued value is not a key).
fn first_program_key(text: &str) -> Option<String> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let mut section = String::new();
    let mut subsection = false;
    let mut continued = false;
    for raw in text.lines() {
        if continued {
            continued = continues(raw);
            continue;
        }
        let line = raw.trim();
        if line.is_empty() || line.starts_with('#') || line.starts_with(';') {
            continue;
        }
        if let Some(header) = line.strip_prefix('[') {
            let Some(end) = header.find(']') else {
                return Some(format!("unreadable line `{line}`"));
            };
            let inner = header.get(..end).unwrap_or_default().trim();
            let (name, sub) = match inner.split_once([' ', '.', '\t']) {
                Some((name, sub)) => (name, !sub.trim().is_empty()),
                None => (inner, false),
            };
            if name.is_empty() || !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '-') {
                return Some(format!("unreadable section `{inner}`"));
            }
            section = name.to_ascii_lowercase();
            subsection = sub;
            let after = header.get(end + 1..).unwrap_or_default().trim();
            if after.is_empty() || after.starts_with('#') || after.starts_with(';') {
                continue;
            }
            // `[core] fsmonitor = x` on one line.
            if let Some(found) = key_names_program(&section, subsection, after) {
                return Some(found);
            }
            continued = continues(after);
            continue;
        }
        if !line.chars().next().is_some_and(|c| c.is_ascii_alphabetic()) {
            return Some(format!("unreadable line `{line}`"));
        }
        if let Some(found) = key_names_program(&section, subsection, line) {
            return Some(found);
        }
        continued = continues(line);
    }
    None
}

/// Whether a configuration line's value goes on to the next line: it ends
/// with an unescaped backslash outside a comment.
fn continues(line: &str) -> bool {
    let mut quoted = false;
    let mut escaped = false;
    let mut last_backslash = false;
    for c in line.trim_end_matches(['\r']).chars() {
        last_backslash = false;
        if escaped {
            escaped = false;
            continue;
        }
        match c {
            '\\' => {
                escaped = true;
                last_backslash = true;
            }
            '"' => quoted = !quoted,
            '#' | ';' if !quoted => return false,
            _ => {}
        }
    }
    last_backslash
}

fn key_names_program(section: &str, subsection: bool, line: &str) -> Option<String> {
    let key: String = line
        .chars()
        .take_while(|c| c.is_ascii_alphanumeric() || *c == '-')
        .collect::<String>()
        .to_ascii_lowercase();
    let value = line
        .split_once('=')
        .map(|(_, v)| v.trim().to_ascii_lowercase());
    if !knowledge::names_program(section, subsection, &key) {
        return None;
    }
    // Switched off explicitly: `core.fsmonitor = false`, `log.showSignature = false`.
    if matches!(value.as_deref(), Some("false" | "no" | "off" | "0"))
        && section != "include"
        && section != "includeif"
    {
        return None;
    }
    Some(if subsection {
        format!("{section}.*.{key}")
    } else {
        format!("{section}.{key}")
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `argument_refusal` as the stage calls it, on the disk.
    fn argument_refusal(name: &str, rest: &[&str]) -> Option<String> {
        super::argument_refusal(name, rest, &crate::engine::Disk)
    }

    #[test]
    fn subcommands() {
        assert_eq!(argument_refusal("status", &[]), None);
        assert_eq!(argument_refusal("log", &["--oneline", "-5"]), None);
        assert_eq!(argument_refusal("diff", &["--stat", "HEAD~1"]), None);
        assert_eq!(argument_refusal("branch", &["-a"]), None);
        assert_eq!(argument_refusal("status", &["-s"]), None);
        assert!(argument_refusal("log", &["--output=x"]).is_some());
        assert!(argument_refusal("diff", &["--ext-diff"]).is_some());
        assert!(argument_refusal("diff", &["--ext"]).is_some());
        assert!(argument_refusal("branch", &["new"]).is_some());
        assert!(argument_refusal("push", &[]).is_some());
        assert!(argument_refusal("remote", &["show", "origin"]).is_some());
        assert!(argument_refusal("log", &["--show-signature"]).is_some());
        assert!(argument_refusal("log", &["--format=%G?"]).is_some());
        assert!(argument_refusal("status", &["--short"]).is_none());
        assert!(argument_refusal("status", &["--sho"]).is_some());
    }

    #[test]
    fn configuration_keys() {
        assert_eq!(
            first_program_key("[core]\n\tbare = false\n\tfilemode = true\n"),
            None
        );
        assert!(first_program_key("[core]\n\tfsmonitor = ./x.sh\n").is_some());
        assert_eq!(first_program_key("[core]\n\tfsmonitor = false\n"), None);
        assert!(first_program_key("[diff \"pdf\"]\n\ttextconv = pdftotext\n").is_some());
        assert!(first_program_key("[filter \"lfs\"]\n\tclean = git-lfs clean -- %f\n").is_some());
        assert!(first_program_key("[include]\n\tpath = other\n").is_some());
        assert!(
            first_program_key("[log]\n\tshowSignature = true\n[gpg]\n\tprogram = x\n").is_some()
        );
        assert!(first_program_key("[Core]\n\tFSMonitor = x\n").is_some());
        assert!(first_program_key("[core] pager = less\n").is_some());
        assert_eq!(first_program_key("[remote \"origin\"]\n\turl = x\n"), None);
        // A byte-order mark does not hide the section.
        assert!(first_program_key("\u{feff}[core]\n\tfsmonitor = x\n").is_some());
        // A continued value's next line is not a key.
        assert_eq!(
            first_program_key("[remote \"o\"]\n\turl = a\\\n[core]\n"),
            None
        );
        assert!(first_program_key("[remote \"o\"]\n\tpromisor = true\n").is_some());
        assert!(first_program_key("[core]\n\t\"fsmonitor\" = x\n").is_some());
    }
}
