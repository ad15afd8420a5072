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

use super::table::spec;
use vouch_shell::options::HasArg::{No, Optional, Required};
use vouch_shell::options::{Item, LongOpt, OptName, OptionSpec, Parsed, long};

/// How much configuration is read before giving up (not inert).
const MAX_CONFIG_BYTES: u64 = 256 * 1024;
/// How many parent directories are searched for `.git`.
const MAX_DEPTH: usize = 64;

/// git's global options that may precede an inert subcommand.
const GLOBAL: OptionSpec = OptionSpec {
    short: "C:pP",
    long: &[
        long("no-pager", No),
        long("paginate", No),
        long("no-optional-locks", No),
        long("literal-pathspecs", No),
        long("no-replace-objects", No),
        long("glob-pathspecs", No),
        long("noglob-pathspecs", No),
        long("icase-pathspecs", No),
    ],
    stop_at_operand: true,
    prefixes: false,
    single_dash_long: false,
};

/// Options of `log`/`show`/`diff`/`whatchanged`/`shortlog`/`rev-list`
/// that are refused: a file written (`--output`), a program run
/// (`--ext-diff`, `--show-signature`, `--textconv` forces a configured
/// driver; the configuration is checked anyway), files outside the
/// repository read (`--no-index`).
const LOG_REFUSED: &[&str] = &[
    "--output",
    "--ext-diff",
    "--show-signature",
    "--textconv",
    "--no-index",
    "--open-files-in-pager",
    "-O",
    "--exec",
    "--upload-pack",
];

/// A subcommand and how its arguments are checked.
enum Sub {
    /// Any option not in [`LOG_REFUSED`] (and not `-o`-like): history and
    /// diff viewers take hundreds of read-only options.
    Viewer,
    /// Only these options; operands as given.
    Only(OptionSpec),
    /// Listing only: no operand unless `--list`/`-l` is given (an operand
    /// creates a branch or tag).
    ListOnly(OptionSpec),
    /// Only the `list` subcommand (`git stash list`, `git worktree list`),
    /// with `--porcelain`/`-v` at most.
    Listing,
}

const STATUS: &[LongOpt] = &[
    long("short", No),
    long("branch", No),
    long("porcelain", Optional),
    long("long", No),
    long("verbose", No),
    long("untracked-files", Optional),
    long("ignored", Optional),
    long("ignore-submodules", Optional),
    long("show-stash", No),
    long("ahead-behind", No),
    long("no-ahead-behind", No),
    long("renames", No),
    long("no-renames", No),
    long("column", Optional),
    long("no-column", No),
];

const BRANCH: &[LongOpt] = &[
    long("all", No),
    long("remotes", No),
    long("verbose", No),
    long("list", No),
    long("show-current", No),
    long("contains", Optional),
    long("no-contains", Optional),
    long("merged", Optional),
    long("no-merged", Optional),
    long("sort", Required),
    long("format", Required),
    long("points-at", Required),
    long("color", Optional),
    long("no-color", No),
    long("column", Optional),
    long("no-column", No),
    long("ignore-case", No),
    long("abbrev", Optional),
];

const TAG: &[LongOpt] = &[
    long("list", No),
    long("sort", Required),
    long("contains", Optional),
    long("no-contains", Optional),
    long("merged", Optional),
    long("no-merged", Optional),
    long("points-at", Required),
    long("format", Required),
    long("column", Optional),
    long("no-column", No),
    long("ignore-case", No),
    long("color", Optional),
];

const REV_PARSE: &[LongOpt] = &[
    long("abbrev-ref", Optional),
    long("short", Optional),
    long("verify", No),
    long("quiet", No),
    long("show-toplevel", No),
    long("show-prefix", No),
    long("show-cdup", No),
    long("git-dir", No),
    long("git-common-dir", No),
    long("absolute-git-dir", No),
    long("is-inside-work-tree", No),
    long("is-inside-git-dir", No),
    long("is-bare-repository", No),
    long("is-shallow-repository", No),
    long("symbolic-full-name", No),
    long("symbolic", No),
    long("all", No),
    long("branches", Optional),
    long("tags", Optional),
    long("remotes", Optional),
    long("show-superproject-working-tree", No),
    long("sq", No),
    long("default", Required),
];

const LS_FILES: &[LongOpt] = &[
    long("cached", No),
    long("deleted", No),
    long("modified", No),
    long("others", No),
    long("ignored", No),
    long("stage", No),
    long("unmerged", No),
    long("killed", No),
    long("directory", No),
    long("no-empty-directory", No),
    long("exclude-standard", No),
    long("full-name", No),
    long("error-unmatch", No),
    long("exclude", Required),
    long("eol", No),
    long("deduplicate", No),
    long("format", Required),
    long("recurse-submodules", No),
];

const LS_TREE: &[LongOpt] = &[
    long("name-only", No),
    long("name-status", No),
    long("object-only", No),
    long("full-name", No),
    long("full-tree", No),
    long("long", No),
    long("abbrev", Optional),
    long("format", Required),
];

const BLAME: &[LongOpt] = &[
    long("porcelain", No),
    long("line-porcelain", No),
    long("incremental", No),
    long("show-name", No),
    long("show-number", No),
    long("show-email", No),
    long("show-stats", No),
    long("root", No),
    long("date", Required),
    long("abbrev", Optional),
];

const DESCRIBE: &[LongOpt] = &[
    long("tags", No),
    long("all", No),
    long("long", No),
    long("always", No),
    long("abbrev", Optional),
    long("dirty", Optional),
    long("exact-match", No),
    long("first-parent", No),
    long("match", Required),
    long("exclude", Required),
    long("contains", No),
];

const REMOTE: &[LongOpt] = &[long("verbose", No)];

const CAT_FILE: &[LongOpt] = &[];

const MERGE_BASE: &[LongOpt] = &[
    long("all", No),
    long("octopus", No),
    long("is-ancestor", No),
    long("independent", No),
    long("fork-point", No),
];

const SHOW_REF: &[LongOpt] = &[
    long("head", No),
    long("heads", No),
    long("tags", No),
    long("branches", No),
    long("verify", No),
    long("hash", Optional),
    long("abbrev", Optional),
    long("quiet", No),
    long("dereference", No),
];

const FOR_EACH_REF: &[LongOpt] = &[
    long("count", Required),
    long("sort", Required),
    long("format", Required),
    long("points-at", Required),
    long("merged", Optional),
    long("no-merged", Optional),
    long("contains", Optional),
    long("no-contains", Optional),
    long("ignore-case", No),
    long("shell", No),
    long("perl", No),
    long("python", No),
    long("tcl", No),
];

const COUNT_OBJECTS: &[LongOpt] = &[long("verbose", No), long("human-readable", No)];

const NAME_REV: &[LongOpt] = &[long("name-only", No), long("tags", No), long("all", No)];

fn subcommand(name: &str) -> Option<Sub> {
    Some(match name {
        "log" | "show" | "diff" | "whatchanged" | "shortlog" | "rev-list" | "reflog" => Sub::Viewer,
        "status" => Sub::Only(spec("sbvuz", STATUS)),
        "branch" => Sub::ListOnly(spec("arvl", BRANCH)),
        "tag" => Sub::ListOnly(spec("ln::i", TAG)),
        "rev-parse" => Sub::Only(spec("q", REV_PARSE)),
        "ls-files" => Sub::Only(spec("cdmoiskuvtfzx:X:", LS_FILES)),
        "ls-tree" => Sub::Only(spec("drtlz", LS_TREE)),
        "blame" => Sub::Only(spec("blstfnepwcMCL:", BLAME)),
        "describe" => Sub::Only(spec("", DESCRIBE)),
        "remote" => Sub::ListOnly(spec("v", REMOTE)),
        "cat-file" => Sub::Only(spec("tspe", CAT_FILE)),
        "merge-base" => Sub::Only(spec("a", MERGE_BASE)),
        "show-ref" => Sub::Only(spec("dsq", SHOW_REF)),
        "for-each-ref" => Sub::Only(spec("", FOR_EACH_REF)),
        "count-objects" => Sub::Only(spec("vH", COUNT_OBJECTS)),
        "name-rev" => Sub::Only(spec("", NAME_REV)),
        "stash" | "worktree" => Sub::Listing,
        _ => return None,
    })
}

/// Why the git unit's words are not inert (`None`: they are). `args` are
/// the words after `git`, all known.
pub fn argument_refusal(args: &[&str]) -> Option<String> {
    let parsed = Parsed::new(&GLOBAL, args);
    let mut sub_at = None;
    for item in &parsed.items {
        match item {
            Item::Opt { .. } | Item::End { .. } => {}
            Item::Operand { at } => {
                sub_at = Some(*at);
                break;
            }
            Item::Unknown { .. } | Item::Invalid { .. } => {
                return Some("a git global option that is not read-only (`-c`, `--git-dir`, `--exec-path`, …)".to_owned());
            }
        }
    }
    let Some(at) = sub_at else {
        return Some("git without a subcommand".to_owned());
    };
    let name = args.get(at).copied().unwrap_or_default();
    let rest = args.get(at + 1..).unwrap_or(&[]);
    let Some(sub) = subcommand(name) else {
        return Some(format!("`git {name}` is not in the read-only list"));
    };
    match sub {
        Sub::Viewer => viewer_refusal(name, rest),
        Sub::Only(spec) => only_refusal(name, &spec, rest, false),
        Sub::ListOnly(spec) => only_refusal(name, &spec, rest, true),
        Sub::Listing => match rest {
            ["list", options @ ..]
                if options
                    .iter()
                    .all(|o| matches!(*o, "--porcelain" | "-v" | "--verbose" | "-z")) =>
            {
                None
            }
            _ => Some(format!("`git {name}` other than `list` changes something")),
        },
    }
}

fn viewer_refusal(name: &str, rest: &[&str]) -> Option<String> {
    for word in rest {
        if *word == "--" {
            break;
        }
        let option = word.split('=').next().unwrap_or_default();
        if LOG_REFUSED.contains(&option) {
            return Some(format!(
                "`git {name} {option}` writes a file or runs a program"
            ));
        }
        if option.starts_with("--out") {
            return Some(format!("`git {name} {option}` may write a file"));
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
        .any(|item| matches!(item, Item::Opt { name, .. } if listing_option(name)));
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

fn listing_option(name: &OptName) -> bool {
    name.is(&[
        "l",
        "list",
        "contains",
        "no-contains",
        "merged",
        "no-merged",
        "points-at",
    ])
}

/// Configuration keys (lower case, `section.key` or `section.*.key` with
/// the subsection elided) that name a program git may run on a read.
fn names_program(section: &str, subsection: bool, key: &str) -> bool {
    matches!(
        (section, subsection, key),
        (
            "core",
            false,
            "fsmonitor" | "pager" | "alternaterefscommand" | "gitproxy" | "sshcommand"
        ) | ("pager" | "filter" | "include" | "includeif", _, _)
            | ("diff", false, "external")
            | ("diff", true, "textconv" | "command")
            | ("gpg", _, "program")
            | ("log", false, "showsignature")
            | ("interactive", false, "difffilter")
    )
}

/// Where git finds the repository of `cwd`: the directory holding `.git`
/// and the git directory itself (a `.git` file's `gitdir:`), plus a
/// worktree's common directory.
fn repository(cwd: &Path, budget: &mut u64) -> Result<Option<(PathBuf, Vec<PathBuf>)>, String> {
    let mut dir = Some(cwd);
    for _ in 0..MAX_DEPTH {
        let Some(here) = dir else {
            return Ok(None);
        };
        let dot_git = here.join(".git");
        match std::fs::symlink_metadata(&dot_git) {
            Ok(meta) if meta.is_dir() => {
                return Ok(Some((here.to_path_buf(), vec![dot_git])));
            }
            Ok(meta) if meta.is_file() => {
                let text = read_limited(&dot_git, budget)?;
                let target = text
                    .strip_prefix("gitdir:")
                    .map(str::trim)
                    .ok_or_else(|| format!("`{}` is not a gitdir file", dot_git.display()))?;
                let gitdir = here.join(target);
                let mut dirs = vec![gitdir.clone()];
                if let Ok(common) = read_limited(&gitdir.join("commondir"), budget) {
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
        dir = here.parent();
    }
    Err("the repository search went too deep".to_owned())
}

fn read_limited(path: &Path, budget: &mut u64) -> Result<String, String> {
    let meta = std::fs::metadata(path).map_err(|e| format!("`{}`: {e}", path.display()))?;
    if meta.len() > *budget {
        return Err(format!(
            "`{}` is larger than the configuration budget",
            path.display()
        ));
    }
    *budget = budget.saturating_sub(meta.len());
    std::fs::read_to_string(path).map_err(|e| format!("`{}`: {e}", path.display()))
}

/// Why the configuration that applies to a git command run in `cwd` may
/// make it run a program (`None`: it cannot). `home` is the user's home
/// (for `~/.gitconfig`); `system` the system file (`/etc/gitconfig`).
pub fn configuration_refusal(cwd: &Path, home: &Path, system: &Path) -> Option<String> {
    let mut budget = MAX_CONFIG_BYTES;
    let (top, dirs) = match repository(cwd, &mut budget) {
        Ok(Some(found)) => found,
        // No repository where vouch looks (or no such directory): git
        // would fail, or vouch does not see the filesystem the command
        // runs on. Either way nothing is proven.
        Ok(None) => return Some(format!("no git repository found from `{}`", cwd.display())),
        Err(why) => return Some(format!("the repository could not be read: {why}")),
    };
    if top.join(".gitmodules").exists() {
        return Some(
            "the repository has submodules, whose own configuration git also follows".to_owned(),
        );
    }
    let mut files: Vec<PathBuf> = dirs
        .iter()
        .flat_map(|d| [d.join("config"), d.join("config.worktree")])
        .collect();
    files.push(home.join(".gitconfig"));
    files.push(home.join(".config/git/config"));
    files.push(system.to_path_buf());
    for file in files {
        let text = match read_limited(&file, &mut budget) {
            Ok(text) => text,
            Err(_) if !file.exists() => continue,
            Err(why) => return Some(why),
        };
        if let Some(key) = first_program_key(&text) {
            return Some(format!(
                "`{}` sets `{key}`, which names a program git may run",
                file.display()
            ));
        }
    }
    None
}

/// The first key of a git configuration text that names a program, or an
/// unreadable line (refused rather than guessed).
fn first_program_key(text: &str) -> Option<String> {
    let mut section = String::new();
    let mut subsection = false;
    for raw in text.lines() {
        let line = raw.trim();
        if line.is_empty() || line.starts_with('#') || line.starts_with(';') {
            continue;
        }
        if let Some(header) = line.strip_prefix('[') {
            let Some(end) = header.find(']') else {
                return Some(format!("unreadable line `{line}`"));
            };
            let inner = header.get(..end).unwrap_or_default().trim();
            let (name, sub) = match inner.split_once([' ', '.']) {
                Some((name, sub)) => (name, !sub.trim().is_empty()),
                None => (inner, false),
            };
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
            continue;
        }
        if let Some(found) = key_names_program(&section, subsection, line) {
            return Some(found);
        }
    }
    None
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
    if !names_program(section, subsection, &key) {
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

    #[test]
    fn subcommands() {
        assert_eq!(argument_refusal(&["status"]), None);
        assert_eq!(
            argument_refusal(&["--no-pager", "log", "--oneline", "-5"]),
            None
        );
        assert_eq!(argument_refusal(&["diff", "--stat", "HEAD~1"]), None);
        assert_eq!(argument_refusal(&["branch", "-a"]), None);
        assert_eq!(argument_refusal(&["-C", "sub", "status", "-s"]), None);
        assert!(argument_refusal(&["log", "--output=x"]).is_some());
        assert!(argument_refusal(&["diff", "--ext-diff"]).is_some());
        assert!(argument_refusal(&["-c", "core.pager=sh", "log"]).is_some());
        assert!(argument_refusal(&["branch", "new"]).is_some());
        assert!(argument_refusal(&["push"]).is_some());
        assert!(argument_refusal(&["remote", "show", "origin"]).is_some());
        assert!(argument_refusal(&["log", "--show-signature"]).is_some());
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
    }
}
