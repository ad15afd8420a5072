//! Bash parsing into the units that would actually run (design §6.1).
//!
//! Hard denies must judge what bash would execute, not what the text looks
//! like: `echo 'rm -rf /'` runs `echo`, while `bash -c "r""m -rf /"` runs
//! `rm`. [`parse`] uses tree-sitter-bash and returns every simple command
//! ("unit") reachable through lists, pipelines, groups, subshells, control
//! flow, function bodies, substitutions, `bash -c`/`eval` strings and common
//! wrappers (`sudo`, `env`, `timeout`, `xargs`, …), with words decoded and
//! expansions kept visible, plus the data flow between units (pipes,
//! substitutions, variables) so policy can follow a secret from its reader
//! to a network sink.
//!
//! A syntax error is reported, never turned into "no units": the units that
//! did parse are still returned so policy can deny on them.

mod walk;
pub mod word;
mod wrappers;

use std::cell::RefCell;

pub use word::{Piece, Word};

/// How many `bash -c` / `eval` / stdin-script levels are followed. Deeper
/// nesting is an error (fail closed), not an empty result.
pub const MAX_SCRIPT_NESTING: usize = 8;

/// How deep the syntax tree is walked. Past this, a pathological input
/// (thousands of nested parentheses) is an error instead of a stack overflow.
pub const MAX_TREE_DEPTH: usize = 200;

/// Why a command could not be fully understood.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ShellError {
    #[error("bash syntax error at byte {offset}: unexpected `{snippet}`")]
    Syntax { offset: usize, snippet: String },
    #[error("bash syntax error at byte {offset}: missing `{expected}`")]
    Missing { offset: usize, expected: String },
    #[error("script nesting (`bash -c`, `eval`, piped scripts) deeper than {limit} levels")]
    TooDeep { limit: usize },
    #[error("command structure nested deeper than {limit} levels")]
    TreeTooDeep { limit: usize },
    #[error("bash parser unavailable: {0}")]
    Parser(String),
}

/// Where a unit's standard output (or value) goes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Sink {
    /// Into another unit: through a pipe, as a substitution in its words or
    /// redirections, or through process substitution.
    Unit { index: usize, flow: Flow },
    /// Into a shell variable (`K=$(cat key)`, `for k in $(…)`).
    Variable(String),
}

/// How data reaches another unit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Flow {
    Pipe,
    Substitution,
    ProcessSubstitution,
}

/// Why a unit exists.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Origin {
    /// A command written in the script.
    Command,
    /// Inside `$(…)` or backticks.
    CommandSubstitution,
    /// Inside `<(…)` or `>(…)`.
    ProcessSubstitution,
    /// Spawned by `find -exec`/`-execdir`/`-ok`.
    FindExec,
}

/// Redirection operators.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RedirectOp {
    /// `>`
    Write,
    /// `>>`
    Append,
    /// `>|`
    Clobber,
    /// `&>` or `>&` onto a file.
    WriteAll,
    /// `&>>`
    AppendAll,
    /// `<`
    Read,
    /// `<>`
    ReadWrite,
    /// `>&N` / `<&N`: duplicates a descriptor, names no file.
    Duplicate,
    /// `<<<` word.
    HereString,
    /// `<<` body.
    HereDoc,
}

impl RedirectOp {
    /// True when the target is a file that gets written.
    pub fn writes(self) -> bool {
        match self {
            RedirectOp::Write
            | RedirectOp::Append
            | RedirectOp::Clobber
            | RedirectOp::WriteAll
            | RedirectOp::AppendAll
            | RedirectOp::ReadWrite => true,
            RedirectOp::Read
            | RedirectOp::Duplicate
            | RedirectOp::HereString
            | RedirectOp::HereDoc => false,
        }
    }

    /// True when the target is a file that gets read.
    pub fn reads_file(self) -> bool {
        matches!(self, RedirectOp::Read | RedirectOp::ReadWrite)
    }

    pub fn as_str(self) -> &'static str {
        match self {
            RedirectOp::Write => ">",
            RedirectOp::Append => ">>",
            RedirectOp::Clobber => ">|",
            RedirectOp::WriteAll => "&>",
            RedirectOp::AppendAll => "&>>",
            RedirectOp::Read => "<",
            RedirectOp::ReadWrite => "<>",
            RedirectOp::Duplicate => ">&",
            RedirectOp::HereString => "<<<",
            RedirectOp::HereDoc => "<<",
        }
    }
}

/// One redirection of a unit (its own, or inherited from an enclosing group).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Redirect {
    pub fd: Option<u32>,
    pub op: RedirectOp,
    /// The file, the here-string, or the here-document body.
    pub target: Word,
}

/// `NAME=value`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Assignment {
    pub name: String,
    pub value: Word,
}

/// One simple command that would run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unit {
    /// Decoded words, wrappers removed: `sudo -u root rm -rf /` → `rm -rf /`.
    pub argv: Vec<Word>,
    /// Wrappers that were removed, outermost first (`sudo`, `env`, …).
    pub wrappers: Vec<String>,
    /// `FOO=1 cmd`, `env FOO=1 cmd`, `sudo FOO=1 cmd`.
    pub assignments: Vec<Assignment>,
    pub redirects: Vec<Redirect>,
    /// The runner appends arguments not visible here (`xargs`, `find -exec {}`).
    pub extra_args_unknown: bool,
    /// Runs in the background (`cmd &`).
    pub background: bool,
    /// Part of a pipeline.
    pub in_pipeline: bool,
    /// Name of the function whose body holds this unit.
    pub in_function: Option<String>,
    /// How many script levels (`bash -c`, `eval`) enclose it.
    pub depth: usize,
    pub origin: Origin,
    /// Where its output goes.
    pub sinks: Vec<Sink>,
    /// Units whose output reaches it.
    pub sources: Vec<usize>,
}

impl Unit {
    /// The command's name: the basename of `argv[0]` when it is literal.
    pub fn name(&self) -> Option<&str> {
        let first = self.argv.first()?.as_literal()?;
        Some(first.rsplit('/').next().unwrap_or(first))
    }

    /// Arguments after the command name.
    pub fn args(&self) -> &[Word] {
        self.argv.get(1..).unwrap_or(&[])
    }
}

/// A standalone assignment (`K=$(cat key)`, `export X=1`), in script order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Binding {
    pub assignment: Assignment,
    /// Units with an index below this ran before the assignment took effect.
    pub before_unit: usize,
    pub exported: bool,
}

/// Everything [`parse`] found.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Script {
    /// In execution order (a substitution's units before their command).
    pub units: Vec<Unit>,
    pub bindings: Vec<Binding>,
    /// Syntax errors and limits hit; empty when the whole command parsed.
    pub errors: Vec<ShellError>,
}

impl Script {
    /// The first error, if any.
    pub fn error(&self) -> Option<&ShellError> {
        self.errors.first()
    }
}

thread_local! {
    // Parsers are not `Sync`; one per thread keeps parsing allocation-light.
    static PARSER: RefCell<Option<tree_sitter::Parser>> = const { RefCell::new(None) };
}

/// Parses `source` with this thread's parser.
fn parse_tree(source: &str) -> Result<tree_sitter::Tree, ShellError> {
    PARSER.with(|cell| {
        let mut slot = cell.borrow_mut();
        if slot.is_none() {
            let mut parser = tree_sitter::Parser::new();
            parser
                .set_language(&tree_sitter_bash::LANGUAGE.into())
                .map_err(|e| ShellError::Parser(e.to_string()))?;
            *slot = Some(parser);
        }
        let parser = slot
            .as_mut()
            .ok_or_else(|| ShellError::Parser("parser slot empty".to_owned()))?;
        parser
            .parse(source, None)
            .ok_or_else(|| ShellError::Parser("parse returned no tree".to_owned()))
    })
}

/// True when `source` is exactly one simple command at the top level: no
/// list, pipeline, background `&`, group, subshell, negation, control flow,
/// assignment, redirection or syntax error around it (comments aside).
///
/// Units alone cannot tell `make` from `(make)` or `{ make; }`; the audit's
/// command templates need the difference, because a rule written for the
/// first never matches the others.
pub fn is_single_simple_command(source: &str) -> bool {
    let Ok(tree) = parse_tree(source) else {
        return false;
    };
    let root = tree.root_node();
    if root.has_error() {
        return false;
    }
    let mut cursor = root.walk();
    let mut statements = root.children(&mut cursor).filter(|n| n.kind() != "comment");
    let (Some(only), None) = (statements.next(), statements.next()) else {
        return false;
    };
    if only.kind() != "command" {
        return false;
    }
    let mut cursor = only.walk();
    only.children(&mut cursor).all(|child| {
        !matches!(
            child.kind(),
            "variable_assignment" | "file_redirect" | "herestring_redirect" | "heredoc_redirect"
        )
    })
}

/// Splits `command` into the units that would run.
pub fn parse(command: &str) -> Script {
    let mut builder = walk::Builder::default();
    builder.script(command, walk::Scope::top());
    builder.finish()
}

#[cfg(test)]
mod tests;
