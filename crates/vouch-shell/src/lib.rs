//! Bash read the way bash runs it (design §6.1, issues 8 and 30): the
//! crate `vouch-shell`, with no dependency on the rest of vouch
//! (`cargo test -p vouch-shell` runs alone).
//!
//! Hard denies must judge what bash would execute, not what the text looks
//! like: `echo 'rm -rf /'` runs `echo`, while `bash -c "r""m -rf /"` runs
//! `rm`, and `rm -rf 2>/dev/null ~` removes the home directory. [`analyze`]
//! parses a command line with tree-sitter-bash, lexes every word by bash's
//! rules and runs the result through an abstract interpreter that follows
//! bash's expansions and control flow, over values that are known, one of a
//! set of candidates, or unknown. It returns every simple command that would
//! run, with its argv after expansion, its working directory, where its
//! input comes from and which command spawned it. See `docs/shell.md`.
//!
//! Layout, one line for every module, in the order a command line meets
//! them:
//!
//! - [`continuation`]: line continuations (`\` before a newline) joined the
//!   way bash's reader removes them, before the text is parsed.
//! - [`syntax`]: one script parsed with tree-sitter-bash within budgets, the
//!   grammar's known gaps repaired, the tree converted into the [`ast`].
//! - [`ast`]: the owned syntax of one script (statements as bash groups
//!   them, words with their quoting, nothing expanded).
//! - [`lex`]: bash's word lexer (quoting, every `${…}` operator, arithmetic
//!   and command substitution).
//! - [`interp`]: the abstract interpreter (control flow, subshells,
//!   pipelines, functions), recording every simple command that would start.
//! - [`builtins`]: one simple command (expansion, then a function, a
//!   builtin or a program) and the builtins that change later commands.
//! - [`expand`]: word expansion in bash's order, each way a word may expand
//!   kept.
//! - [`param`]: `$x` and every `${…}` operator.
//! - [`arith`]: bash arithmetic over 64-bit integers and unknown values.
//! - [`evaluated`]: strings bash evaluates as code that do not look like
//!   commands (subscripts, prompts, `mapfile -C`, imported functions).
//! - [`runners`]: programs that run other commands (wrappers, shells,
//!   `xargs`, `find -exec`, `su`, `flock`, `watch`, `parallel`).
//! - [`embedded`]: shell code that programs run for the command line (git's
//!   configuration and variables, `ssh -o ProxyCommand`, `rsync -e`, `tar
//!   --to-command`, …).
//! - [`code`]: interpreter code (Python, Perl, Ruby, JavaScript, PHP, Lua,
//!   Tcl, awk, R, Julia, AppleScript) tokenized by each language's string
//!   rules, for the shells and programs it runs, the trees it removes and
//!   the files it writes.
//! - [`conservative`]: the readings of what the table does not know (an
//!   unknown program's arguments as the command it may run, strings that
//!   may be code, a runtime name as each dangerous program).
//! - [`printf`]: what `echo` and `printf` print and what `test` answers,
//!   when their arguments are known.
//! - [`printed`]: what the path tools (`dirname`, `basename`, `realpath`,
//!   `readlink -f`) and `tr` print, when their input is known.
//! - [`decode`]: what `base64 -d`, base32, hex and `rev` decode static text
//!   to.
//! - [`spec`]: the command table (`spec::readers` the programs that can
//!   only read, `spec::git` git's subcommands and configuration keys).
//! - [`options`]: the getopt_long parser every entry of the table is read
//!   with.
//! - [`effects`]: what a command does to which paths and hosts, from the
//!   table, and in its own `effects::special` the effects of commands a
//!   table row cannot describe (`dd`, `tar` modes, git subcommands,
//!   archives, `sqlite3`, HTTP clients, disk tools).
//! - [`find`]: which of `find`'s actions a path can reach through its
//!   expression.
//! - [`command`]: what [`analyze`] returns (the commands with their argv,
//!   working directory, input and redirections, and what was left
//!   incomplete).
//! - [`value`]: values as far as a static reading knows them (known,
//!   candidates, holes of unknown text).
//! - [`glob`]: bash pattern matching with holes, never exponential, and
//!   whether a value could be a given text ([`argv_may_be`]).
//! - [`path`]: lexical paths (joining, `.` and `..`), no filesystem.
//! - [`state`]: the shell state the interpreter carries along the control
//!   flow.
//! - [`budget`]: the budgets of one analysis, the meter that charges them
//!   and what an exceeded one leaves ([`Incomplete`]).
//! - [`shape`]: how a command line is written ([`shape_of`]), for the
//!   audit's templates.
//! - `analysis_tests` (tests only): command lines and the commands they run.
//!
//! The table is where most command knowledge lives, not all of it: the
//! modules that run code ([`runners`], [`embedded`], [`code`],
//! [`conservative`]), print known output ([`printf`], [`printed`],
//! [`decode`]) or read what a row cannot say (`effects::special`, [`find`]) know
//! their programs in code, as do some of vouch's stages (the Known gaps of
//! vouch's `src/lib.rs`).

mod arith;
mod ast;
pub mod budget;
mod builtins;
mod code;
pub mod command;
mod conservative;
mod continuation;
mod decode;
pub mod effects;
mod embedded;
mod endless;
mod evaluated;
mod expand;
pub mod find;
pub mod glob;
mod interp;
mod lex;
pub mod options;
mod param;
pub mod path;
mod printed;
mod printf;
mod runners;
mod shape;
pub mod spec;
mod state;
mod syntax;
pub mod value;

pub use budget::{Incomplete, Limits};
pub use command::{
    Analysis, Command, CommandKind, ENDLESS_SPAWNING, Origin, RECURSION_SPAWNING,
    RECURSION_SPAWNING_IN_READING, Redirect, RedirectOp, ShellEnv,
};
pub use conservative::{DANGEROUS_PROGRAMS, runs_other_language};
pub use endless::reads_endless_input;

/// Whether interpreter code (`perl -e`, `python -c`, …, the interpreter
/// named `name`) starts processes in a loop nothing bounds: a fork bomb.
pub fn code_forks_without_bound(name: &str, code: &str) -> bool {
    code::forks_without_bound(name, code)
}
pub use glob::argv_may_be;
/// ANSI-C quoting (`$'…'`) decoded as bash does; redaction reads through it.
pub use lex::decode_ansi_c;
pub use shape::{Shape, shape_of};
pub use value::{Arg, Seg, Sources, Text, Value};

#[cfg(test)]
thread_local! {
    static SHORTCUTS: std::cell::Cell<bool> = const { std::cell::Cell::new(true) };
}

/// Whether the analysis takes its shortcuts: work skipped where the input
/// shows it would change nothing (no walk for rewrites a command has no
/// text for, no search for substitutions in a word without `(` or a
/// backtick, plain literal words expanded directly). Tests turn them off
/// to prove the general path gives the same analysis.
#[cfg(not(test))]
#[inline]
pub(crate) fn shortcuts() -> bool {
    true
}

#[cfg(test)]
pub(crate) fn shortcuts() -> bool {
    SHORTCUTS.with(std::cell::Cell::get)
}

#[cfg(test)]
pub(crate) fn set_shortcuts(on: bool) {
    SHORTCUTS.with(|s| s.set(on));
}

/// Whether `command` is a plain command line: one simple command, or two
/// joined by one `&&`, `||`, `|` or `;`, of at most 512 bytes of blanks and
/// characters bash gives no syntax to (letters, digits, `_./:=,+%@~-`) —
/// `rm -rf /`, `ls -la ~/src`, `cd build && make`. Nothing in it expands,
/// globs, nests or redirects, so its analysis is work linear in its length;
/// what may run on an async worker is limited to such lines.
pub fn is_plain_command_line(command: &str) -> bool {
    syntax::plain_shape(command)
}

/// Why a command could not be fully understood.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ShellError {
    #[error("bash syntax error at byte {offset}: unexpected `{snippet}`")]
    Syntax { offset: usize, snippet: String },
    #[error("bash syntax error at byte {offset}: missing `{expected}`")]
    Missing { offset: usize, expected: String },
    #[error("bash parser unavailable: {0}")]
    Parser(String),
}

/// Analyses performed by this process ([`analyze`] calls), for tests and
/// metrics that hold a caller to reading each command once.
static ANALYSES: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

/// How many times [`analyze`] has run in this process. A caller that
/// promises one analysis per request (vouch does: the hard denies,
/// redaction and the audit share it) is tested against the difference.
pub fn analyses_performed() -> u64 {
    ANALYSES.load(std::sync::atomic::Ordering::Relaxed)
}

/// The simple commands `command` would run when bash executes it in `env`:
/// each with its argv after every expansion, its working directory and the
/// command that spawns it, every value known, one of a candidate set, or
/// unknown. Work is bounded by `limits`; what ran out is listed in
/// [`Analysis::incomplete`] (see `docs/shell.md`).
///
/// This is the expansion model's entry point: the hard-deny rules,
/// redaction's reading of command lines, the audit's templates and the
/// differential tests against real bash all read its result. (The crate's
/// other public functions read the syntax alone — [`shape_of`],
/// [`is_plain_command_line`] — or decode one quoting form.)
///
/// The result is `Send` (its values share their candidates through `Arc`),
/// so a caller can compute it once and hand it to another thread: vouch
/// analyses a plain command line on an async worker and, when that does not
/// decide the request, passes the same analysis to its blocking stages.
pub fn analyze(command: &str, env: &ShellEnv<'_>, limits: &Limits) -> Analysis {
    ANALYSES.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let mut meter = budget::Meter::new(*limits);
    let parsed = syntax::parse(command, &mut meter);
    let home = path::normalize(env.home);
    let user = home
        .rsplit('/')
        .next()
        .filter(|u| !u.is_empty())
        .map(str::to_owned);
    let known = state::Known {
        home,
        user,
        vars: env
            .vars
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect(),
    };
    let cwd = env.cwd.map_or_else(value::Value::unknown, |c| {
        value::Value::known(&path::normalize(c))
    });
    let mut interp = interp::Interp::new(known, meter);
    interp.errors.extend(parsed.errors);
    let start = state::State::new(cwd);
    interp.exec(&parsed.stmt, start.clone());
    interp.uncalled_functions(&start);
    Analysis {
        commands: interp.commands,
        errors: interp.errors,
        incomplete: interp.meter.into_incomplete(),
        notes: interp.notes,
    }
}

#[cfg(test)]
mod analysis_tests;
