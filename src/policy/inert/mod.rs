//! The inert stage (design §6.1b, issue 31): a bash request is allowed
//! without a model when its one analysis proves that every unit that can
//! run only reads. See `docs/inert.md` for what is inert, what never can
//! be, and how to add a command.
//!
//! The proof, for every command of the [`Analysis`]:
//! - the analysis is complete (no syntax error, no budget, no note);
//! - the program is known by name (a bare name or one under a system
//!   directory: `./cat` is the project's), and the table
//!   ([`spec::lookup`]) or a builtin check says it only reads under the
//!   options given — every word known, an unlisted option refused;
//! - its operands that are read for their contents are known paths that
//!   are not sensitive, checked again through their symlinks at decision
//!   time; a directory tree searched is not the home, `/` or a system
//!   directory;
//! - every redirection reads such a path, duplicates a descriptor, is a
//!   here-document, or writes to `/dev/null`;
//! - no assignment before it changes what it runs (only locale and colour
//!   variables are accepted);
//! - what runs it (`xargs`, a shell's `-c`, `timeout`) is inert too.
//!
//! The command text is checked for the constructs whose evaluation the
//! analysis does not follow: arithmetic (`((…))`, `$((…))`, `[[ … ]]`,
//! `${a[i]}`, `${a:i}`), which evaluates an array subscript's `$(…)` even
//! in a value the environment supplies, and assignments to the variables
//! that choose what a program runs or loads (`PATH`, `BASH_ENV`, `GIT_*`,
//! `LD_*`, `PAGER`, …).

mod derive;
mod files;
mod found;
mod git;
mod scripts;
mod tree;

use std::path::Path;

use crate::shell::options::{Item, OptName, OptValue, Parsed};
use crate::shell::spec::{self, CommandSpec, Dialect, Inert, Modifier};
use crate::shell::{Analysis, Arg, Command, CommandKind, Origin, RedirectOp};

use crate::config::routing::SYSTEM_BIN;
use crate::credentials::is_sensitive_path;

pub use files::{Entries, Entry, Files, Kind, Meta};

/// The `rule_id` of an inert decision.
pub const RULE_ID: &str = crate::rules::StageRule::InertReadOnly.as_str();

/// What the stage found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum InertVerdict {
    /// Every unit only reads: one line per unit saying why.
    Inert(Vec<String>),
    /// Not proven; the reason (for logs and tests), and the request goes on
    /// to routing exactly as before.
    NotProven(String),
}

/// What the stage needs besides the analysis.
#[derive(Clone, Copy)]
pub struct InertContext<'a> {
    /// The request's home (for `~/.gitconfig` and the tree rule).
    pub home: &'a str,
    /// vouch's own protected paths: never read by an inert command.
    pub protected: &'a [String],
    /// The system git configuration (`/etc/gitconfig`).
    pub git_system_config: &'a Path,
    /// The machine's files, asked at decision time: the only way the
    /// stage looks at the filesystem (the engine hands in the disk).
    pub files: &'a dyn Files,
}

impl std::fmt::Debug for InertContext<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("InertContext")
            .field("home", &self.home)
            .field("protected", &self.protected)
            .field("git_system_config", &self.git_system_config)
            .finish_non_exhaustive()
    }
}

/// Variables a command-line assignment may set without changing what a
/// program runs or loads.
const HARMLESS_VARS: &[&str] = &[
    "LANG",
    "LANGUAGE",
    "TZ",
    "NO_COLOR",
    "COLUMNS",
    "LINES",
    "CLICOLOR",
    "FORCE_COLOR",
    "TERM",
];

/// Names that, assigned anywhere in the command (or looped over), change
/// which program runs or what it loads.
const STEERING_VARS: &[&str] = &[
    "PATH",
    "BASH_ENV",
    "ENV",
    "IFS",
    "CDPATH",
    "GLOBIGNORE",
    "HOME",
    "SHELLOPTS",
    "BASHOPTS",
    "PS4",
    "PROMPT_COMMAND",
    "PAGER",
    "MANPAGER",
    "EDITOR",
    "VISUAL",
    "BROWSER",
    "TMPDIR",
    "RIPGREP_CONFIG_PATH",
    "GREP_OPTIONS",
    "XDG_CONFIG_HOME",
    "POSIXLY_CORRECT",
    "FUNCNAME",
];

/// Prefixes of such names (`GIT_DIR`, `LD_PRELOAD`, `LESSOPEN`).
const STEERING_PREFIXES: &[&str] = &[
    "GIT_", "LD_", "LESS", "PYTHON", "NODE_", "PERL", "RUBY", "JQ_", "DYLD_",
];

/// Judges one analysed bash command.
pub fn judge(command: &str, analysis: &Analysis, ctx: &InertContext<'_>) -> InertVerdict {
    match prove(command, analysis, ctx) {
        Ok(units) => InertVerdict::Inert(units),
        Err(why) => InertVerdict::NotProven(why),
    }
}

/// The units of an analysed command as routing's templates see them, and
/// the stage's verdict, from one pass: the words of each unit (known or
/// not) and whether the unit alone is inert. The units are `None` when the
/// analysis is not complete (no template may then apply).
pub fn judge_with_units(
    command: &str,
    analysis: &Analysis,
    ctx: &InertContext<'_>,
) -> (InertVerdict, Option<Vec<crate::config::routing::Unit>>) {
    if !analysis.is_complete() || !analysis.notes.is_empty() {
        return (
            InertVerdict::NotProven("the analysis is not complete".to_owned()),
            None,
        );
    }
    // Conservative readings (what an unknown program may run) are the
    // floor's, never units of an allow: with one present a program the
    // table does not know runs, so nothing is proven, and the readings are
    // not units a template must match.
    let conservative = analysis.commands.iter().any(|c| c.conservative);
    let text = text_refusal(command);
    let mut first_refusal = text.clone().err();
    let mut reasons = Vec::with_capacity(analysis.commands.len());
    let units = analysis
        .commands
        .iter()
        .enumerate()
        .filter(|(_, unit)| !unit.conservative)
        .map(|(index, unit)| {
            let reason = unit_reason(index, unit, analysis, ctx);
            let inert = text.is_ok() && reason.is_ok();
            match reason {
                Ok(why) => reasons.push(why),
                Err(why) => {
                    first_refusal.get_or_insert(why);
                }
            }
            crate::config::routing::Unit {
                words: unit
                    .argv
                    .iter()
                    .map(|a| a.as_known().map(str::to_owned))
                    .collect(),
                inert,
            }
        })
        .collect::<Vec<_>>();
    if conservative {
        first_refusal.get_or_insert_with(|| "a program vouch does not know runs".to_owned());
    }
    let verdict = match (first_refusal, units.is_empty()) {
        (Some(why), _) => InertVerdict::NotProven(why),
        (None, true) => InertVerdict::NotProven("nothing runs".to_owned()),
        (None, false) => InertVerdict::Inert(reasons),
    };
    (verdict, Some(units))
}

fn prove(
    command: &str,
    analysis: &Analysis,
    ctx: &InertContext<'_>,
) -> Result<Vec<String>, String> {
    if !analysis.is_complete() || !analysis.notes.is_empty() {
        return Err("the analysis is not complete".to_owned());
    }
    if analysis.commands.is_empty() {
        return Err("nothing runs".to_owned());
    }
    if analysis.commands.iter().any(|c| c.conservative) {
        return Err("a program vouch does not know runs".to_owned());
    }
    text_refusal(command)?;
    let mut units = Vec::with_capacity(analysis.commands.len());
    for (index, unit) in analysis.commands.iter().enumerate() {
        let why = unit_reason(index, unit, analysis, ctx)?;
        units.push(why);
    }
    Ok(units)
}

/// The constructs the analysis does not follow, found in the text.
fn text_refusal(command: &str) -> Result<(), String> {
    // `\|`, `\<` and `\>` are regex syntax in a quoted grep pattern; `\&`
    // has no such use and is how a list is hidden from a reader.
    if command.contains("\\&") {
        return Err("a backslash-escaped `&` is how a command is hidden from a reader".to_owned());
    }
    for construct in ["((", "[[", "$[", "]=", "${!"] {
        if command.contains(construct) {
            return Err(format!(
                "`{construct}` evaluates arithmetic, where a subscript may run a command"
            ));
        }
    }
    let mut rest = command;
    while let Some(at) = rest.find("${") {
        let after = rest.get(at + 2..).unwrap_or_default();
        let body: String = after.chars().take_while(|c| *c != '}').collect();
        if body.contains('[') {
            return Err(
                "an array subscript is arithmetic, where a subscript may run a command".to_owned(),
            );
        }
        if let Some(colon) = body.find(':') {
            let next = body.get(colon + 1..).and_then(|s| s.chars().next());
            if !matches!(next, Some('-' | '=' | '?' | '+')) {
                return Err(
                    "a substring offset is arithmetic, where a subscript may run a command"
                        .to_owned(),
                );
            }
        }
        rest = after;
    }
    if let Some(name) = secret_variable(command) {
        return Err(format!(
            "`${name}` may hold a secret, which the command would print"
        ));
    }
    if let Some(name) = steering_assignment(command) {
        return Err(format!(
            "assigning `{name}` chooses what a program runs or loads"
        ));
    }
    Ok(())
}

/// Words in variable names that say they hold a secret.
const SECRET_NAME_PARTS: &[&str] = &[
    "TOKEN",
    "SECRET",
    "PASSWORD",
    "PASSWD",
    "PASS",
    "KEY",
    "CREDENTIAL",
    "AUTH",
    "COOKIE",
    "SESSION",
    "PRIVATE",
    "CERT",
];

/// A variable expanded in the text (`$NAME`, `${NAME…}`) whose name says
/// it holds a secret: printing it reads a secret.
fn secret_variable(command: &str) -> Option<&str> {
    let mut rest = command;
    while let Some(at) = rest.find('$') {
        let after = rest.get(at + 1..)?;
        let name_from = after.strip_prefix('{').unwrap_or(after);
        let len = name_from
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .unwrap_or(name_from.len());
        let name = name_from.get(..len)?;
        let upper = name.to_ascii_uppercase();
        if SECRET_NAME_PARTS.iter().any(|p| upper.contains(p)) {
            return Some(name);
        }
        rest = after;
    }
    None
}

/// A steering variable the text assigns: `NAME=`, `NAME+=`, `NAME[…]=`,
/// `${NAME:=…}`, `${NAME=…}`, or a loop over it (`for NAME in`). Reading
/// one (`echo $HOME`) is fine; the builtins that assign by name (`export`,
/// `read`, `printf -v`, `unset`, …) are not inert anyway.
fn steering_assignment(command: &str) -> Option<&str> {
    let is_ident = |c: char| c.is_ascii_alphanumeric() || c == '_';
    let mut previous = "";
    let mut rest = command;
    while !rest.is_empty() {
        let start = rest.find(is_ident)?;
        let from = rest.get(start..)?;
        let len = from.find(|c: char| !is_ident(c)).unwrap_or(from.len());
        let word = from.get(..len)?;
        let after = from.get(len..).unwrap_or_default();
        let assigned = ["=", "+=", "[", ":="].iter().any(|p| after.starts_with(p))
            || matches!(previous, "for" | "select");
        if assigned && steering(word) {
            return Some(word);
        }
        previous = word;
        rest = after;
    }
    None
}

fn steering(name: &str) -> bool {
    STEERING_VARS.contains(&name)
        || STEERING_PREFIXES
            .iter()
            .any(|p| name.starts_with(p) && name.len() > p.len())
}

/// One word of a unit: known text, or a pathname pattern with no unknown
/// piece (`src/*.rs`), which the option parser takes for an operand only
/// when it cannot start with `-` (`*` may match a file named `--pre=sh`).
#[derive(Debug, Clone, Copy)]
struct Word<'a> {
    text: Option<&'a str>,
    pattern: Option<&'a crate::shell::Text>,
    /// A path a `find` of the command printed ([`found`]).
    found: Option<&'a found::FoundArgs>,
}

impl crate::shell::options::OptWord for Word<'_> {
    fn known(&self) -> Option<&str> {
        self.text
    }

    fn known_prefix(&self) -> &str {
        match (self.text, self.pattern, self.found) {
            (Some(text), _, _) => text,
            (None, Some(pattern), _) => pattern.known_prefix(),
            // Every found path starts with its root: an operand, unless a
            // root could be read as an option (`find` refuses those).
            (None, None, Some(found)) => match found.roots.as_slice() {
                [root, ..] if !root.starts_with('-') => root,
                _ => "",
            },
            (None, None, None) => "",
        }
    }
}

fn words<'a>(
    unit: &'a Command,
    found: Option<&'a found::FoundArgs>,
) -> Result<Vec<Word<'a>>, String> {
    unit.argv
        .iter()
        .enumerate()
        .map(|(at, arg)| {
            let unknown = || "a word whose value is not known statically".to_owned();
            if let Some(found) = found.filter(|f| f.holds(at)) {
                return Ok(Word {
                    text: None,
                    pattern: None,
                    found: Some(found),
                });
            }
            let Arg::Field(value) = arg else {
                return Err(unknown());
            };
            if let Some(text) = value.as_known() {
                return Ok(Word {
                    text: Some(text),
                    pattern: None,
                    found: None,
                });
            }
            match value.candidates() {
                [only] if only.is_pattern() && !only.has_any() => Ok(Word {
                    text: None,
                    pattern: Some(only),
                    found: None,
                }),
                _ => Err(unknown()),
            }
        })
        .collect()
}

/// The entries a pattern matches in its directory, at decision time, as
/// bash's pathname expansion would list them (the pattern only in the last
/// component). Past [`MAX_GLOB_ENTRIES`] directory entries it is not proven.
fn expand_pattern(
    pattern: &crate::shell::Text,
    cwd: Option<&str>,
    ctx: &InertContext<'_>,
) -> Result<Vec<String>, String> {
    let home = ctx.home;
    let source = pattern.pattern_source();
    let (dir, last) = match source.rfind('/') {
        Some(at) => (
            source.get(..at).unwrap_or_default(),
            source.get(at + 1..).unwrap_or_default(),
        ),
        None => (".", source.as_str()),
    };
    if dir.contains(['*', '?', '[', '\\']) {
        return Err(format!("`{source}`: a pattern in a directory name"));
    }
    let dir = if dir.is_empty() { "/" } else { dir };
    let base = absolute(dir, cwd, home)?;
    // The pattern as a path first: `~/.ssh/*`, `*.pem`, vouch's `*.token`.
    content_path_refusal(&format!("{base}/{last}"), cwd, ctx)?;
    let component = crate::shell::glob::pattern_of(last);
    let mut found = Vec::new();
    let Ok(entries) = ctx.files.entries(Path::new(&base)) else {
        // Nothing to match: bash passes the pattern as one literal name,
        // which does not exist either.
        return Ok(found);
    };
    for (seen, entry) in entries.enumerate() {
        if seen >= MAX_GLOB_ENTRIES {
            return Err(format!("`{source}`: too many entries to check"));
        }
        let entry = entry.map_err(|e| format!("`{base}`: {e}"))?;
        let name = entry.name.to_string_lossy();
        if crate::shell::glob::matches(&component, &name, crate::shell::glob::Mode::PATHNAME) {
            found.push(format!("{base}/{name}"));
        }
    }
    Ok(found)
}

/// Directory entries a pattern read for its contents is checked against.
const MAX_GLOB_ENTRIES: usize = 4096;

fn unit_reason(
    index: usize,
    unit: &Command,
    analysis: &Analysis,
    ctx: &InertContext<'_>,
) -> Result<String, String> {
    unit_preconditions(unit)?;
    let cwd = unit.cwd.as_known().map(str::to_owned);
    redirects_refusal(unit, cwd.as_deref(), ctx)?;
    let name = match unit.kind {
        CommandKind::Unresolved => return Err("a command whose name is not known".to_owned()),
        CommandKind::Function => {
            // The call itself runs nothing; the body's commands follow it
            // in the analysis and are judged there.
            return Ok(format!(
                "`{}`: a function defined in the command",
                unit.name().unwrap_or("?")
            ));
        }
        CommandKind::External | CommandKind::Builtin => program_name(unit)?,
    };
    if name == "echo" {
        // What it prints may be unknown; it never runs it.
        return Ok("`echo`: prints, writes nothing".to_owned());
    }
    // Every inert-capable name has an entry in vouch-shell's one table; its
    // entry says how the stage may use it.
    let spec = spec::lookup(&name)
        .filter(|s| derive::usable(s))
        .ok_or_else(|| format!("`{name}` is not a read-only command of the table"))?;
    let found = found::found_args(unit, analysis);
    let argv = match words(unit, found.as_ref()) {
        Ok(argv) => argv,
        Err(why) => {
            let known: Vec<&str> = unit.argv.iter().skip(1).map_while(Arg::as_known).collect();
            if derive::names_only(spec, &known) {
                return Ok(format!(
                    "`{name}`: prints only file names or counts, whatever files it is given"
                ));
            }
            return Err(why);
        }
    };
    // The rationale names programs (and git's subcommand), never their
    // arguments: those may carry a secret, and decisions are logged.
    let word_args: Vec<Word<'_>> = argv.get(1..).unwrap_or(&[]).to_vec();
    // Programs with subcommands and builtins take known words only.
    let known: Option<Vec<&str>> = word_args.iter().map(|w| w.text).collect();
    let args: Vec<&str> = known.clone().unwrap_or_default();
    let all_known = known.is_some();
    match spec.inert {
        Inert::Never => Err(format!("`{name}` is never inert")),
        Inert::Builtin => {
            if unit.kind != CommandKind::Builtin {
                return Err(format!("the program `{name}` (not the builtin)"));
            }
            if !all_known {
                return Err(format!("`{name}` with a pattern argument"));
            }
            builtin_reason(&name, unit, &args).map(|why| format!("`{name}`: {why}"))
        }
        Inert::Shell | Inert::Runner | Inert::Find | Inert::Git if !all_known => {
            Err(format!("`{name}` with a pattern argument"))
        }
        Inert::Shell => {
            shell_refusal(index, &name, spec, &args, analysis, cwd.as_deref(), ctx)?;
            Ok(format!("`{name} -c`: its script's commands are each inert"))
        }
        Inert::Runner => {
            runner_refusal(index, &name, spec, &args, analysis, cwd.as_deref(), ctx)?;
            Ok(format!("`{name}`: runs only inert commands"))
        }
        Inert::Find => {
            let runs = children(index, analysis).next().is_some();
            find_refusal(&args, runs, cwd.as_deref(), ctx)?;
            Ok(format!("`{name}`: lists names, runs and writes nothing"))
        }
        Inert::Git => {
            git_after_cd(analysis)?;
            git_refusal(spec, &args, cwd.as_deref(), ctx)?;
            Ok(format!(
                "`{name}`: a read-only git subcommand, and no configuration that applies names a program"
            ))
        }
        Inert::Reader { trees } => {
            let shown =
                derive::reader_refusal(&name, spec, trees, &word_args, cwd.as_deref(), ctx)?;
            Ok(format!("`{name}`: {}", shown.describe()))
        }
    }
}

/// What every unit must satisfy whatever it runs: in the foreground, not a
/// recursive call, not an uncalled body, no steering assignment before it.
fn unit_preconditions(unit: &Command) -> Result<(), String> {
    if unit.background {
        return Err("a background command".to_owned());
    }
    if unit.recursive {
        return Err("a recursive function call".to_owned());
    }
    if unit.origin == Origin::UncalledFunction {
        return Err("a function body that nothing was seen to call".to_owned());
    }
    for (name, _) in &unit.assignments {
        if !HARMLESS_VARS.contains(&name.as_str()) && !name.starts_with("LC_") {
            return Err(format!("the assignment `{name}=` before a command"));
        }
    }
    Ok(())
}

/// The program's basename, when bash finds it on `PATH` (a bare name) or
/// it lies in a system directory.
fn program_name(unit: &Command) -> Result<String, String> {
    let first = unit
        .argv
        .first()
        .and_then(Arg::as_known)
        .ok_or_else(|| "a command whose name is not known".to_owned())?;
    if first.contains('/')
        && !SYSTEM_BIN.iter().any(|dir| {
            first.starts_with(dir) && !first.get(dir.len()..).unwrap_or_default().contains('/')
        })
    {
        return Err(format!(
            "`{first}` is a program named by a path, not a system one"
        ));
    }
    Ok(first.rsplit('/').next().unwrap_or(first).to_owned())
}

/// Text the command line feeds a program (a here-document, a here-string)
/// that the floor would hard-deny were it run: `cat <<EOF⏎rm -rf ~⏎EOF`
/// only prints it, but a command line that stages a catastrophic script is
/// not one to wave through unseen (both peer guards block it; the agent's
/// next step may pipe it into a shell). Text not known statically is
/// refused: its unknown part may be anything; so is a body the floor cannot
/// read whole (a parse error — an unclosed quote in prose may swallow a
/// command after it — or a budget spent). Only here-documents pay for the
/// check (an analysis of the body with the default budgets).
fn staged_text_refusal(
    text: &crate::shell::Value,
    cwd: Option<&str>,
    ctx: &InertContext<'_>,
) -> Result<(), String> {
    let protected = crate::policy::hard_deny::VouchFiles {
        paths: ctx.protected.to_vec(),
        config_only: Vec::new(),
        vars: Vec::new(),
    };
    let floor = crate::policy::hard_deny::DenyContext {
        home: ctx.home,
        cwd,
        protected: &protected,
        limits: &crate::shell::Limits::DEFAULT,
    };
    for candidate in text.candidates() {
        let body = candidate
            .as_known()
            .ok_or("a here-document or here-string whose text is not known statically")?;
        match crate::policy::hard_deny::check_command(body, &floor) {
            crate::policy::hard_deny::DenyVerdict::Deny(deny) => {
                return Err(format!(
                    "a here-document or here-string holding a command the floor denies ({})",
                    deny.rule_id()
                ));
            }
            crate::policy::hard_deny::DenyVerdict::ParseFailed { .. }
            | crate::policy::hard_deny::DenyVerdict::Incomplete { .. } => {
                return Err("a here-document or here-string the floor cannot read whole".to_owned());
            }
            crate::policy::hard_deny::DenyVerdict::Clear => {}
        }
    }
    Ok(())
}

fn redirects_refusal(
    unit: &Command,
    cwd: Option<&str>,
    ctx: &InertContext<'_>,
) -> Result<(), String> {
    for r in &unit.redirects {
        match r.op {
            RedirectOp::Duplicate => {}
            RedirectOp::HereDoc | RedirectOp::HereString => {
                staged_text_refusal(&r.target, cwd, ctx)?;
            }
            RedirectOp::Read => {
                let target = r
                    .target
                    .as_known()
                    .ok_or("a redirection from a file not known statically")?;
                content_path_refusal(target, cwd, ctx)?;
            }
            RedirectOp::Write
            | RedirectOp::Append
            | RedirectOp::Clobber
            | RedirectOp::WriteAll
            | RedirectOp::AppendAll
            | RedirectOp::ReadWrite => {
                if r.target.as_known() != Some("/dev/null") {
                    return Err(format!(
                        "a redirection `{}` that writes a file",
                        r.op.as_str()
                    ));
                }
            }
        }
    }
    Ok(())
}

/// A file read for its contents: a known path, not sensitive by name nor
/// through its symlinks, not one of vouch's files, not under `/proc` or
/// `/dev`.
fn content_path_refusal(
    path: &str,
    cwd: Option<&str>,
    ctx: &InertContext<'_>,
) -> Result<(), String> {
    if path == "-" {
        return Ok(());
    }
    let absolute = absolute(path, cwd, ctx.home)?;
    let real = physical(path, cwd, ctx.home, ctx.files);
    let mut names = vec![absolute.clone()];
    names.extend(real.clone());
    for name in &names {
        if sensitive_by_name(name, ctx.files)
            || ctx
                .protected
                .iter()
                .any(|p| crate::shell::path::is_ancestor_or_self(p, name))
        {
            return Err(format!("`{path}` is a sensitive file"));
        }
        // The user's own files outside the working tree (`~/.bashrc` with
        // an exported token, another project's caches) are not the agent's
        // to read unasked; the system's (`/etc/os-release`) and the
        // project's are.
        let in_home = crate::shell::path::is_ancestor_or_self(ctx.home, name);
        let in_tree = cwd.is_some_and(|c| crate::shell::path::is_ancestor_or_self(c, name));
        if in_home && !in_tree {
            return Err(format!(
                "`{path}` is one of the user's files outside the working directory"
            ));
        }
    }
    // A hard link is the same file under another name: `notes.md` linked
    // to `~/.aws/credentials` reads the credentials, and no name says so.
    if let Some(real) = real
        && ctx
            .files
            .stat(Path::new(&real))
            .is_ok_and(|m| m.kind == Kind::File && hard_linked(&m))
    {
        return Err(format!(
            "`{path}` is a file with more than one name (a hard link may be a sensitive file)"
        ));
    }
    Ok(())
}

/// Whether a regular file has more than one name.
fn hard_linked(meta: &Meta) -> bool {
    meta.links > 1
}

/// The path as the kernel resolves it: symbolic links first, then each
/// `..` from where the link led (`sub/../.bashrc` with `sub -> ~/.aws` is
/// `~/.bashrc`, not `./.bashrc` as a lexical normalization says). The
/// longest prefix that exists is resolved; the rest is appended. `None`
/// when nothing of it can be resolved.
fn physical(path: &str, cwd: Option<&str>, home: &str, files: &dyn Files) -> Option<String> {
    let raw = match path.strip_prefix('~') {
        Some(rest) if rest.is_empty() || rest.starts_with('/') => format!("{home}{rest}"),
        Some(_) => return None,
        None if path.starts_with('/') => path.to_owned(),
        None => format!("{}/{path}", cwd?),
    };
    let parts: Vec<&str> = raw.split('/').collect();
    for keep in (1..=parts.len()).rev() {
        let head = parts.get(..keep)?.join("/");
        if let Ok(real) = files.canonical(Path::new(if head.is_empty() { "/" } else { &head })) {
            let rest = parts.get(keep..).unwrap_or_default().join("/");
            let joined = if rest.is_empty() {
                real.display().to_string()
            } else {
                format!("{}/{rest}", real.display())
            };
            return Some(crate::shell::path::normalize(&joined));
        }
    }
    None
}

fn absolute(path: &str, cwd: Option<&str>, home: &str) -> Result<String, String> {
    let expanded = match path.strip_prefix('~') {
        Some(rest) if rest.is_empty() || rest.starts_with('/') => format!("{home}{rest}"),
        Some(_) => return Err(format!("`{path}` names another user's home")),
        None => path.to_owned(),
    };
    if expanded.starts_with('/') {
        return Ok(crate::shell::path::normalize(&expanded));
    }
    let cwd = cwd.ok_or("a relative path in a directory not known statically")?;
    Ok(crate::shell::path::join(cwd, &expanded))
}

/// A path sensitive by its name alone: the credential list and the names
/// [`extra_sensitive`] adds (and a git configuration that holds a
/// credential, asked of `files`).
fn sensitive_by_name(path: &str, files: &dyn Files) -> bool {
    is_sensitive_path(path) || extra_sensitive(path, files)
}

/// Sensitive for reading, beyond the credential list: process and device
/// files, shell histories, token files of common tools.
fn extra_sensitive(path: &str, files: &dyn Files) -> bool {
    const PREFIXES: &[&str] = &["/proc/", "/dev/", "/sys/"];
    // Shell and REPL histories are on the credential list's sensitive
    // names (`credentials::is_sensitive_path`).
    const NAMES: &[&str] = &[
        ".pypirc",
        "hosts.yml",
        "credentials",
        "credentials.toml",
        "credentials.tfrc.json",
        ".vault-token",
        ".envrc",
        // Secret manifests by convention (Kubernetes, Rails, SOPS).
        "secrets.yaml",
        "secrets.yml",
        "secrets.json",
        "secrets.toml",
        "secrets.env",
        "secrets.txt",
    ];
    // Terraform state and variable files hold resource secrets in clear.
    const SUFFIXES: &[&str] = &[".tfstate", ".tfstate.backup", ".tfvars", ".tfvars.json"];
    let name = path.rsplit('/').next().unwrap_or(path);
    PREFIXES
        .iter()
        .any(|p| path.starts_with(p) && path != "/dev/null")
        || NAMES.contains(&name)
        || name.starts_with(".env")
        || SUFFIXES.iter().any(|s| name.ends_with(s))
        || path == "/proc"
        || embeds_credentials(path, files)
}

/// How much of a git configuration is read to look for credentials.
const MAX_CREDENTIAL_SCAN: u64 = 64 * 1024;

/// A repository's `.git/config` whose remote URL carries credentials
/// (`https://user:TOKEN@host/…`, `https://TOKEN@host/…`): reading it reads
/// the token. One that cannot be read whole is taken to.
fn embeds_credentials(path: &str, files: &dyn Files) -> bool {
    let git_config = path.ends_with("/.git/config")
        || path.ends_with("/.git/config.worktree")
        || path.ends_with("/.gitconfig")
        || path.ends_with("/.config/git/config")
        || path.ends_with("/.gitmodules");
    if !git_config {
        return false;
    }
    let Ok(meta) = files.stat(Path::new(path)) else {
        return false;
    };
    if meta.len > MAX_CREDENTIAL_SCAN {
        return true;
    }
    let Ok(text) = files
        .read(Path::new(path), MAX_CREDENTIAL_SCAN)
        .and_then(files::text)
    else {
        return true;
    };
    git::carries_credentials(&text)
}

/// A directory tree searched: not `/`, not the home itself or above, not
/// a system directory, not sensitive.
fn tree_refusal(path: &str, cwd: Option<&str>, ctx: &InertContext<'_>) -> Result<(), String> {
    let absolute = absolute(path, cwd, ctx.home)?;
    let mut names = vec![absolute.clone()];
    names.extend(physical(path, cwd, ctx.home, ctx.files));
    for name in &names {
        let system = [
            "/etc", "/proc", "/sys", "/dev", "/var", "/boot", "/root", "/run",
        ]
        .iter()
        .any(|d| crate::shell::path::is_ancestor_or_self(d, name));
        if crate::shell::path::is_ancestor_or_self(name, ctx.home) || system {
            return Err(format!(
                "`{path}` is a tree that holds the home or system files"
            ));
        }
        // As for a file read: the user's own files outside the working
        // tree are not the agent's to search (`rg '' sub/../.bashrc`).
        let in_home = crate::shell::path::is_ancestor_or_self(ctx.home, name);
        let in_tree = cwd.is_some_and(|c| crate::shell::path::is_ancestor_or_self(c, name));
        if in_home && !in_tree {
            return Err(format!(
                "`{path}` is one of the user's trees outside the working directory"
            ));
        }
        // A protected path inside the tree: the walk refuses any entry of
        // it the program would read — one that exists. One that does not
        // exist yet cannot be shown unread: refused.
        if sensitive_by_name(name, ctx.files)
            || ctx.protected.iter().any(|p| {
                crate::shell::path::is_ancestor_or_self(p, name)
                    || (crate::shell::path::is_ancestor_or_self(name, p)
                        && ctx.files.lstat(Path::new(p)).is_err())
            })
        {
            return Err(format!("`{path}` is a sensitive tree"));
        }
    }
    Ok(())
}

/// A word that may be taken as an option although it was meant as an
/// operand: one that starts with `-`.
fn option_like(word: &str) -> bool {
    word.starts_with('-') && word != "-"
}

fn option_value<'w>(args: &[&'w str], value: OptValue) -> Option<&'w str> {
    match value {
        OptValue::Attached { at, offset } => args.get(at).and_then(|w| w.get(offset..)),
        OptValue::Next { at } => args.get(at).copied(),
    }
}

fn script_refusal(kind: Dialect, text: &str) -> Result<(), String> {
    match scripts::refusal(kind, text) {
        Some(why) => Err(why),
        None => Ok(()),
    }
}

fn builtin_reason(name: &str, unit: &Command, args: &[&str]) -> Result<String, String> {
    match name {
        "printf" => {
            let first = unit.argv.get(1).and_then(Arg::as_known);
            if first.is_none_or(|w| w.starts_with('-')) {
                return Err(
                    "`printf` with an option (`-v` assigns a variable, evaluating its subscript)"
                        .to_owned(),
                );
            }
            Ok("prints, writes nothing".to_owned())
        }
        "test" | "[" => test_refusal(args).map(|()| "a test of files or strings".to_owned()),
        "type" | "command" => {
            let listing = args
                .first()
                .is_some_and(|a| matches!(*a, "-v" | "-V" | "-t" | "-a" | "-p" | "-P"));
            if name == "command" && !listing {
                return Err("`command` runs its command".to_owned());
            }
            if args.iter().skip(1).any(|a| a.starts_with('-')) {
                return Err(format!("`{name}` with words that are not names"));
            }
            Ok("names what a word would run".to_owned())
        }
        "set" => {
            if args.is_empty() {
                return Err("`set` without arguments prints every variable".to_owned());
            }
            let ok = args.iter().all(|a| {
                matches!(
                    *a,
                    "-e" | "-u"
                        | "-x"
                        | "+e"
                        | "+u"
                        | "+x"
                        | "-o"
                        | "+o"
                        | "pipefail"
                        | "errexit"
                        | "nounset"
                        | "xtrace"
                        | "-eu"
                        | "-ex"
                        | "-eux"
                        | "-euo"
                )
            });
            if ok {
                Ok("sets error-handling options".to_owned())
            } else {
                Err("`set` with options other than error handling".to_owned())
            }
        }
        // The table's other builtins only print or move within the command.
        _ => Ok("a builtin that only prints or moves within the command".to_owned()),
    }
}

/// `test`/`[`: string and file tests only. `-v` and the arithmetic
/// comparisons evaluate an array subscript, which may run a command.
fn test_refusal(args: &[&str]) -> Result<(), String> {
    const ARITH: &[&str] = &["-eq", "-ne", "-lt", "-le", "-gt", "-ge"];
    for (i, arg) in args.iter().enumerate() {
        if *arg == "-v" || *arg == "-R" {
            return Err("`test -v` evaluates an array subscript".to_owned());
        }
        if ARITH.contains(arg) {
            let plain = |w: Option<&&str>| {
                w.is_some_and(|w| {
                    w.trim()
                        .trim_start_matches(['-', '+'])
                        .chars()
                        .all(|c| c.is_ascii_digit())
                })
            };
            if !(plain(i.checked_sub(1).and_then(|j| args.get(j))) && plain(args.get(i + 1))) {
                return Err("an arithmetic test of a value that is not a plain number".to_owned());
            }
        }
    }
    Ok(())
}

/// The commands this unit runs (its children in the analysis).
fn children(index: usize, analysis: &Analysis) -> impl Iterator<Item = &Command> {
    analysis
        .commands
        .iter()
        .filter(move |c| c.parent == Some(index))
}

/// The options of a wrapper (a shell, a runner) up to its first operand,
/// each checked by the table's roles and modifiers; `read`: options whose
/// value is a file read (`xargs -a FILE`) are checked as such. Returns the
/// parse.
fn wrapper_options(
    name: &str,
    spec: &CommandSpec,
    args: &[&str],
    cwd: Option<&str>,
    ctx: &InertContext<'_>,
) -> Result<Parsed, String> {
    let parsed = Parsed::new(&spec.options, args);
    for item in &parsed.items {
        match item {
            Item::Opt {
                name: opt,
                value,
                at,
            } => {
                derive::option_refusal(name, spec, opt, args.get(*at).copied())?;
                if derive::option_role(spec, opt) == crate::shell::spec::Role::Read {
                    let file = value
                        .and_then(|v| option_value(args, v))
                        .ok_or("an option's file is not known")?;
                    content_path_refusal(file, cwd, ctx)?;
                }
            }
            Item::End { .. } => {}
            Item::Operand { .. } => break,
            Item::Unknown { .. } | Item::Invalid { .. } => {
                return Err(format!(
                    "`{name}` with an option its table entry does not list"
                ));
            }
        }
    }
    Ok(parsed)
}

/// A shell is inert when it runs a `-c` script (whose commands the analysis
/// lists as its children, each judged on its own) and its other options
/// are read-only by the table (`-l`, `-e`, `-u`, `-x`, `--norc`, …).
fn shell_refusal(
    index: usize,
    name: &str,
    spec: &CommandSpec,
    args: &[&str],
    analysis: &Analysis,
    cwd: Option<&str>,
    ctx: &InertContext<'_>,
) -> Result<(), String> {
    // The script's own words are not the shell's options.
    let parsed = wrapper_options(name, spec, args, cwd, ctx)?;
    if !parsed.has(&["c"]) {
        return Err("a shell without `-c` reads its script from a file or its input".to_owned());
    }
    if children(index, analysis).next().is_none() {
        return Err("a shell script whose commands are not known".to_owned());
    }
    Ok(())
}

/// `xargs`, `timeout`, `nice`, `stdbuf`: inert when their own options are
/// read-only by the table and what they run is (the analysis lists it as a
/// child, judged on its own). `xargs` with no command runs `echo`; `xargs
/// -I` puts its input into a shell script's text, which no analysis sees.
fn runner_refusal(
    index: usize,
    name: &str,
    spec: &CommandSpec,
    args: &[&str],
    analysis: &Analysis,
    cwd: Option<&str>,
    ctx: &InertContext<'_>,
) -> Result<(), String> {
    let parsed = wrapper_options(name, spec, args, cwd, ctx)?;
    let substitutes = parsed.items.iter().any(|item| {
        matches!(item, Item::Opt { name: opt, .. }
            if derive::option_modifiers(spec, opt).any(|m| m == Modifier::Substitutes))
    });
    if substitutes
        && children(index, analysis).any(|c| c.name().is_some_and(crate::shell::spec::is_shell))
    {
        return Err(format!(
            "`{name}` puts its input into a shell script's text"
        ));
    }
    if parsed.first_operand().is_some() && children(index, analysis).next().is_none() {
        return Err(format!(
            "`{name}` runs a command the analysis could not read"
        ));
    }
    Ok(())
}

/// `find`: lists names. Any primary outside the table's listing ones
/// ([`crate::shell::find::LISTING`]: no `-exec`, `-delete`, `-fprint`, …)
/// refuses it.
fn find_refusal(
    args: &[&str],
    runs: bool,
    cwd: Option<&str>,
    ctx: &InertContext<'_>,
) -> Result<(), String> {
    let (mut roots, i) = find_roots(args);
    let mut takes_value = false;
    let mut in_exec = false;
    let mut execs = 0;
    for word in args.get(i..).unwrap_or(&[]) {
        if takes_value {
            takes_value = false;
            continue;
        }
        // `-exec CMD … ;` (or `{} +`): CMD is a unit of its own, judged
        // there with `{}` a path found here (`found.rs`); one, and only
        // when the analysis read it.
        if in_exec {
            in_exec = !matches!(*word, ";" | "+");
            continue;
        }
        if *word == "-exec" && runs {
            execs += 1;
            in_exec = true;
            if execs > 1 {
                return Err("`find` with more than one `-exec`".to_owned());
            }
            continue;
        }
        if !crate::shell::find::LISTING.contains(word) {
            return Err(format!(
                "`find` with `{word}`, which runs, deletes or writes (or is not known)"
            ));
        }
        takes_value = crate::shell::find::ONE_ARG.contains(word);
    }
    if roots.is_empty() {
        roots.push(".");
    }
    // `find` prints names and metadata, never contents: any starting point
    // may be listed (`find .. -name AGENTS.md`, `find ~ -name '*.pem'`).
    for root in roots {
        if option_like(root) {
            return Err("a `find` starting point that looks like an option".to_owned());
        }
        let path = absolute(root, cwd, ctx.home)?;
        let sensitive = sensitive_by_name(&path, ctx.files)
            || ctx
                .protected
                .iter()
                .any(|p| crate::shell::path::is_ancestor_or_self(p, &path));
        if sensitive {
            return Err(format!("`find` in `{root}`, a sensitive directory"));
        }
    }
    Ok(())
}

/// A `find` command line's starting points (none written: none here) and
/// where its expression starts: the words before the first that starts
/// with `-` or is `!`, `(`, `)`, `,`, after the `-H`/`-L`/`-P` that lead.
fn find_roots<'a>(args: &[&'a str]) -> (Vec<&'a str>, usize) {
    let mut i = 0;
    let mut roots = Vec::new();
    while let Some(word) = args.get(i).copied() {
        if matches!(word, "-H" | "-L" | "-P") && roots.is_empty() {
            i += 1;
            continue;
        }
        if word.starts_with('-') || matches!(word, "!" | "(" | ")" | ",") {
            break;
        }
        roots.push(word);
        i += 1;
    }
    (roots, i)
}

/// Which repository's configuration applies depends on the directory git
/// runs in; the differential harness found lists where the analysis
/// followed a `cd` wrongly (`tests/fixtures/inert_differential.jsonl`).
/// Until that is exact, a git unit after any directory change is not
/// proven.
fn git_after_cd(analysis: &Analysis) -> Result<(), String> {
    let moves = analysis.commands.iter().any(|c| {
        c.name()
            .is_some_and(|n| matches!(n, "cd" | "pushd" | "popd"))
    });
    if moves {
        return Err(
            "git after a change of directory (which repository applies is not certain)".to_owned(),
        );
    }
    Ok(())
}

fn git_refusal(
    spec: &CommandSpec,
    args: &[&str],
    cwd: Option<&str>,
    ctx: &InertContext<'_>,
) -> Result<(), String> {
    let cwd = cwd.ok_or("git in a directory not known statically")?;
    // `git -C DIR`: the repository is DIR's.
    let mut dir = std::path::PathBuf::from(cwd);
    let parsed = Parsed::new(&spec.options, args);
    let mut sub_at = None;
    for item in &parsed.items {
        match item {
            Item::Opt {
                name: OptName::Short('C'),
                value: Some(v),
                ..
            } => {
                let to = option_value(args, *v).ok_or("`git -C` without a directory")?;
                dir = Path::new(&absolute(to, Some(&dir.display().to_string()), ctx.home)?)
                    .to_path_buf();
            }
            Item::Opt { name, at, .. } => {
                derive::option_refusal("git", spec, name, args.get(*at).copied())?;
            }
            Item::End { .. } => {}
            Item::Operand { at } => {
                sub_at = Some(*at);
                break;
            }
            Item::Unknown { .. } | Item::Invalid { .. } => {
                return Err("a git global option the table does not list".to_owned());
            }
        }
    }
    let at = sub_at.ok_or("git without a subcommand")?;
    let sub = args.get(at).copied().unwrap_or_default();
    let rest = args.get(at + 1..).unwrap_or(&[]);
    if let Some(why) = git::argument_refusal(sub, rest, ctx.files) {
        return Err(why);
    }
    match git::repository_refusal(
        &dir,
        sub,
        rest,
        Path::new(ctx.home),
        ctx.git_system_config,
        ctx.files,
    ) {
        Some(why) => Err(why),
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests;
