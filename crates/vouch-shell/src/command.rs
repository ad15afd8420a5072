//! What [`super::analyze`] returns: the simple commands a bash command line
//! would run, each with its argv after every expansion, its working
//! directory and where its input comes from, plus what stopped the analysis
//! from being complete.

use super::budget::Incomplete;
use super::value::{Arg, Sources, Value};

/// What vouch knows about the shell a command will run in. Everything not
/// named here (other environment variables, the file system, the user
/// database) is runtime data and stays unknown.
#[derive(Debug, Clone, Copy)]
pub struct ShellEnv<'a> {
    /// The working directory bash starts in (absolute), when known.
    pub cwd: Option<&'a str>,
    /// `HOME` (absolute).
    pub home: &'a str,
    /// Environment variables whose values vouch knows (`VOUCH_HOME`, …).
    pub vars: &'a [(&'a str, &'a str)],
}

/// How bash runs a command.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CommandKind {
    /// A program found through `PATH` (or named by a path).
    External,
    /// A shell builtin (`cd`, `echo`, `read`, `eval`, …): no process.
    Builtin,
    /// A call of a function defined in the command; its body's commands
    /// follow it.
    Function,
    /// The command name depends on runtime data (`$CMD args`).
    Unresolved,
}

/// Why a command exists.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Origin {
    /// Written in the command line (or in a script string it runs).
    Command,
    /// Inside `$(…)` or backticks.
    CommandSubstitution,
    /// Inside `<(…)` or `>(…)`.
    ProcessSubstitution,
    /// The body of a function defined in the command that no call was seen
    /// to run (a call through an unknown name, a trap, an exported function
    /// may still run it), analysed once with unknown arguments.
    UncalledFunction,
}

/// Redirection operators.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
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
    /// `>&N` / `<&N` / `N>&-`: duplicates or closes a descriptor.
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

/// One redirection in effect for a command: its own, one on an enclosing
/// group, or one an earlier `exec` made permanent.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Redirect {
    /// The descriptor redirected (`2>` → 2); the operator's default when
    /// not written (0 for `<`, 1 for `>`).
    pub fd: u32,
    pub op: RedirectOp,
    /// The file name, or the here-string / here-document text.
    pub target: Value,
}

/// One simple command that would run.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Command {
    /// The argv bash (or the wrapper in [`Command::parent`]) passes, after
    /// brace, tilde, parameter, arithmetic and command expansion, word
    /// splitting, pathname expansion and quote removal. `argv[0]` is the
    /// command name as written (`/bin/rm`, `rm`).
    pub argv: Vec<Arg>,
    /// The working directory it runs in.
    pub cwd: Value,
    pub kind: CommandKind,
    /// The command that runs this one (`sudo`, `env`, `xargs`, `find -exec`,
    /// `bash -c`, a piped-into shell): an index into
    /// [`Analysis::commands`]. `None`: bash itself runs it.
    pub parent: Option<usize>,
    /// Variables placed in its environment (`A=1 cmd`, `env A=1 cmd`).
    pub assignments: Vec<(String, Value)>,
    pub redirects: Vec<Redirect>,
    /// Commands whose output reaches its standard input (pipes,
    /// substitutions inside here-documents, `exec <` of their output).
    pub stdin_from: Sources,
    /// Its standard input when statically known (a here-string, a
    /// here-document, `echo` text piped in).
    pub stdin_text: Option<Value>,
    /// Runs in the background (`cmd &`, `coproc`).
    pub background: bool,
    /// A call of a function from inside its own body (or a function it
    /// calls), or a command that runs again a script being run (`bash $0`,
    /// `. f.sh` inside f.sh, `eval "$BASH_EXECUTION_STRING"`; the same text
    /// is the same script): not followed again.
    pub recursive: bool,
    /// Reached, within the body it is in (a function's or a script's, or
    /// the command line outside any), only past a condition whose outcome
    /// is runtime data: the right of `&&`/`||` after a command of unknown
    /// status, an `if`, `elif` or `else` branch, a loop body whose
    /// condition may fail, a `for` over items that may be none, a `case`
    /// arm that may not match. For a [`Self::recursive`] command, within
    /// the body it starts again: a condition around that body's first run
    /// bounds none of the runs it starts itself.
    pub guarded: bool,
    /// Part of a pipeline.
    pub in_pipeline: bool,
    /// For a [`Self::recursive`] command: the run it starts is in a new
    /// process of its own *within the body it starts again* — behind a
    /// `&`, a `coproc` or a pipe written in that body (`:(){ :|:& }`,
    /// `bash $0 &` in the script). Not when the whole body runs in one
    /// (`f(){ echo; f; }; f &`, `bash f.sh | cat`): each run then waits
    /// for the one it starts, and no process is left behind.
    pub async_rerun: bool,
    /// The function whose body holds it (the innermost, when inlined).
    pub function: Option<String>,
    /// How many script strings (`bash -c`, `eval`, piped scripts) enclose it.
    pub depth: usize,
    pub origin: Origin,
    /// A conservative reading, not a command known to run: the arguments
    /// of a program the table does not know taken as the command it may
    /// run (`direnv exec . rm -rf ~` → `rm -rf ~`), a string that may be
    /// code taken as a script (`tool --hook 'rm -rf ~'`), and everything
    /// such a reading starts. Only the hard denies read these, and only to
    /// deny (docs/shell.md, "What the floor does not know"): a conservative
    /// reading never allows anything, never matches an allowing rule and
    /// never counts for the audit.
    pub conservative: bool,
}

impl Command {
    /// The basename of `argv[0]` when it is known (`/usr/bin/rm` → `rm`).
    pub fn name(&self) -> Option<&str> {
        let first = self.argv.first()?.as_known()?;
        Some(first.rsplit('/').next().unwrap_or(first))
    }

    /// The arguments after the command name.
    pub fn args(&self) -> &[Arg] {
        self.argv.get(1..).unwrap_or(&[])
    }

    /// True when some value of the command is a hole that replaced
    /// candidates past `max_candidates` (see [`Value::add`]): what it runs
    /// on is wider than listed, so the analysis is incomplete.
    pub(crate) fn is_widened(&self) -> bool {
        let arg = |a: &Arg| match a {
            Arg::Field(v) => v.candidates().iter().any(super::value::Text::is_widened),
            Arg::Unknown(from) => from.is_widened(),
        };
        let value = |v: &Value| v.candidates().iter().any(super::value::Text::is_widened);
        self.argv.iter().any(arg)
            || value(&self.cwd)
            || self.assignments.iter().any(|(_, v)| value(v))
            || self.redirects.iter().any(|r| value(&r.target))
            || self.stdin_from.is_widened()
            || self.stdin_text.as_ref().is_some_and(value)
    }
}

/// The note of a loop that never ends, starts a background process each
/// time round and waits for nothing: processes without bound (the hard
/// denies read it as a fork bomb).
pub const ENDLESS_SPAWNING: &str =
    "a loop that never ends starts background processes without waiting for anything";

/// The note of a function that starts a background process and then
/// surely calls itself again, with no `wait` between: each call leaves a
/// process behind, without bound (the hard denies read it as a fork bomb).
pub const RECURSION_SPAWNING: &str =
    "a function leaves a background process behind and calls itself again without end";

/// [`RECURSION_SPAWNING`] found only in a conservative reading
/// ([`Command::conservative`]): judged only with the readings.
pub const RECURSION_SPAWNING_IN_READING: &str = "read conservatively, a function leaves a background process behind and calls itself again without end";

/// Everything [`super::analyze`] found.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Analysis {
    /// In the order bash would start them (a substitution's commands before
    /// the command that uses their output).
    pub commands: Vec<Command>,
    /// Syntax errors: the command does not fully parse.
    pub errors: Vec<super::ShellError>,
    /// Budgets exceeded: the analysis stopped early somewhere.
    pub incomplete: Vec<Incomplete>,
    /// Behaviour a static reading cannot bound (a loop that never ends and
    /// keeps starting background processes).
    pub notes: Vec<String>,
}

impl Analysis {
    /// True when no syntax error and no budget stopped the analysis.
    pub fn is_complete(&self) -> bool {
        self.errors.is_empty() && self.incomplete.is_empty()
    }
}
