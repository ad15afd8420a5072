//! git's command knowledge: its global options, the subcommands that only
//! read and their options, and the configuration keys that name a program
//! git may run on a read. The inert stage (`src/policy/inert/git.rs`) keeps
//! only the proof — finding the repository and reading its configuration
//! at decision time — and reads everything it knows about git from here.
//!
//! git runs what its configuration names: `core.fsmonitor` on `git status`,
//! `diff.external` and textconv drivers on `git diff`/`log -p`, filters on
//! any command that compares the worktree, `gpg.program` when a signature
//! is shown, a pager on a terminal, hooks (`post-index-change` when `git
//! status` refreshes the index), and a partial clone's promisor remote
//! fetches missing objects on `git show`.

use super::{Modifier, Role};
use crate::options::HasArg::{No, Optional, Required};
use crate::options::{Clusters, LongOpt, OptionSpec, long};

/// git's global options (git 2.47). git matches them whole.
pub const GLOBAL: OptionSpec = OptionSpec {
    short: "C:c:hpPv",
    long: &[
        long("git-dir", Required),
        long("work-tree", Required),
        long("namespace", Required),
        long("exec-path", Optional),
        long("html-path", No),
        long("man-path", No),
        long("info-path", No),
        long("config-env", Required),
        long("attr-source", Required),
        long("list-cmds", Required),
        long("bare", No),
        long("no-pager", No),
        long("paginate", No),
        long("no-replace-objects", No),
        long("no-lazy-fetch", No),
        long("no-optional-locks", No),
        long("no-advice", No),
        long("literal-pathspecs", No),
        long("glob-pathspecs", No),
        long("noglob-pathspecs", No),
        long("icase-pathspecs", No),
        long("help", No),
        long("version", No),
    ],
    stop_at_operand: true,
    prefixes: false,
    single_dash_long: false,
    clusters: Clusters::Getopt,
};

/// What the global options' values are: `-C` is the directory whose
/// repository applies (the inert stage finds it); the rest choose another
/// repository, configuration or program than the one found.
pub const GLOBAL_ROLES: &[(&[&str], Role)] = &[
    (&["C"], Role::Chdir),
    (
        &[
            "c",
            "config-env",
            "git-dir",
            "work-tree",
            "namespace",
            "attr-source",
        ],
        Role::Setting,
    ),
    (&["exec-path"], Role::Run),
];

/// `--bare` takes the directory for a repository.
pub const GLOBAL_MODIFIERS: &[(&[&str], Modifier)] = &[(&["bare"], Modifier::Setting)];

/// A read-only subcommand and how its arguments are read.
#[derive(Debug, Clone, Copy)]
pub enum Sub {
    /// History and diff viewers (`log`, `show`, `diff`, …): they take
    /// hundreds of options that only change what is printed; the ones in
    /// [`VIEWER_REFUSED`] (and any abbreviation of one) write a file, run a
    /// program or read outside the repository.
    Viewer,
    /// Only these options.
    Only(OptionSpec),
    /// Listing only: an operand creates a branch or tag unless one of
    /// [`LISTING`] is given.
    ListOnly(OptionSpec),
    /// Only the `list` subcommand, with [`LIST_OPTIONS`].
    Listing,
}

/// Options of the viewers that write a file (`--output`), run a program
/// (`--ext-diff`, `--textconv`, `--show-signature`, `-O`, `--exec`,
/// `--upload-pack`) or read files outside the repository (`--no-index`).
pub const VIEWER_REFUSED: &[&str] = &[
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

/// Pretty-format placeholders that run a program: `%G?`, `%GS`, `%GK`, …
/// verify a signature with gpg.
pub const FORMAT_RUNS: &[&str] = &["%G"];

/// The viewer whose two path operands, one outside the repository, make
/// it compare files as `--no-index` does (`git diff ~/.aws/credentials
/// /dev/null` prints the file).
pub const IMPLICIT_NO_INDEX: &[&str] = &["diff"];

/// Options of `branch`/`tag` that make their operands patterns or commits
/// to list by, not names to create.
pub const LISTING: &[&str] = &[
    "l",
    "list",
    "contains",
    "no-contains",
    "merged",
    "no-merged",
    "points-at",
];

/// Options `git stash list` and `git worktree list` may take.
pub const LIST_OPTIONS: &[&str] = &["--porcelain", "-v", "--verbose", "-z"];

/// An option spec of a subcommand: GNU permutation, long options matched
/// whole for the inert stage (git's parse-options takes abbreviations,
/// which the inert stage refuses).
const fn sub(short: &'static str, long: &'static [LongOpt]) -> OptionSpec {
    OptionSpec {
        short,
        long,
        stop_at_operand: false,
        prefixes: true,
        single_dash_long: false,
        clusters: Clusters::Getopt,
    }
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

const REMOTE: &[LongOpt] = &[long("verbose", No)];

const COUNT_OBJECTS: &[LongOpt] = &[long("verbose", No), long("human-readable", No)];

const NAME_REV: &[LongOpt] = &[long("name-only", No), long("tags", No), long("all", No)];

/// A read-only subcommand by name.
pub fn subcommand(name: &str) -> Option<Sub> {
    Some(match name {
        "log" | "show" | "diff" | "whatchanged" | "shortlog" | "rev-list" | "reflog" => Sub::Viewer,
        "status" => Sub::Only(sub("sbvuz", STATUS)),
        "branch" => Sub::ListOnly(sub("arvl", BRANCH)),
        "tag" => Sub::ListOnly(sub("ln::i", TAG)),
        "rev-parse" => Sub::Only(sub("q", REV_PARSE)),
        "ls-files" => Sub::Only(sub("cdmoiskuvtfzx:X:", LS_FILES)),
        "ls-tree" => Sub::Only(sub("drtlz", LS_TREE)),
        "blame" => Sub::Only(sub("blstfnepwcMCL:", BLAME)),
        "describe" => Sub::Only(sub("", DESCRIBE)),
        "remote" => Sub::ListOnly(sub("v", REMOTE)),
        "cat-file" => Sub::Only(sub("tspe", &[])),
        "merge-base" => Sub::Only(sub("a", MERGE_BASE)),
        "show-ref" => Sub::Only(sub("dsq", SHOW_REF)),
        "for-each-ref" => Sub::Only(sub("", FOR_EACH_REF)),
        "count-objects" => Sub::Only(sub("vH", COUNT_OBJECTS)),
        "name-rev" => Sub::Only(sub("", NAME_REV)),
        "stash" | "worktree" => Sub::Listing,
        _ => return None,
    })
}

/// Configuration keys (lower case; `subsection`: written `section.NAME.key`)
/// that name a program git may run, or a remote it may fetch from, on a
/// read: unless set to false, a repository where one applies is not inert.
pub fn names_program(section: &str, subsection: bool, key: &str) -> bool {
    matches!(
        (section, subsection, key),
        (
            "core",
            false,
            "fsmonitor" | "pager" | "alternaterefscommand" | "gitproxy" | "sshcommand" | "hookspath"
        ) | ("pager" | "filter" | "include" | "includeif", _, _)
            | ("diff", false, "external")
            | ("diff", true, "textconv" | "command")
            | ("gpg", _, "program")
            | ("log", false, "showsignature")
            | ("interactive", false, "difffilter")
            // A partial clone fetches missing objects from its promisor
            // remote (`git show` of one runs a fetch).
            | ("extensions", false, "partialclone")
            | ("remote", true, "promisor")
    )
}
