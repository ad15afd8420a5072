//! What the floor does not know, read conservatively.
//!
//! The command table knows what its programs do with their arguments. A
//! program it does not know may run them: environment, sandbox and test
//! runners (`direnv exec . CMD`, `poetry run CMD`, `bwrap … CMD`, `entr
//! CMD`) take a command as their arguments, and many take shell code as an
//! option's value (`nix-shell --run 'CMD'`, `tool --hook 'CMD'`). A command
//! whose name is runtime data (`$X -rf /`, `${A[k]} …`) may be any program.
//! Rather than take such a unit as harmless, the analysis records the
//! readings a careful reader would consider, as commands marked
//! [`Command::conservative`]:
//!
//! - **argument suffixes**: every suffix of an unknown program's arguments
//!   that starts with the name of a program or builtin the table knows, as
//!   the command the program may run;
//! - **strings that may be code**: every argument (or `--option=VALUE`
//!   value) of an unknown program that holds a blank or a shell operator,
//!   as a script;
//! - **unknown names**: a command whose name is runtime data, read as each
//!   of the programs whose misuse the hard denies name ([`DANGEROUS_PROGRAMS`]) that
//!   its name may be (`Value::may_be`: `$(git rev-parse
//!   --show-toplevel)/x.sh` may be none of them).
//!
//! A reading is never evidence that anything runs: only the hard denies
//! read it, and only to deny (a catastrophic reading is a hard deny whose
//! rule says it was conservative). Readings are not read again inside a
//! reading (a reading of a reading would multiply), each costs an
//! interpreter step before it is made, and they stop when the steps do.
//!
//! [`Command::conservative`]: super::command::Command::conservative

use super::interp::Interp;
use super::spec;
use super::state::State;
use super::value::{Arg, Value};

/// Builtins that run their arguments (or a file) as a command or script.
const RUNNING_BUILTINS: &[&str] = &[
    "eval", "exec", "source", ".", "command", "builtin", "trap", "coproc", "time",
];

/// Names a suffix reading never starts at: builtins that only print or
/// test, whose reading could not be catastrophic and would only cost steps.
const INERT_NAMES: &[&str] = &[
    "echo", "printf", "test", "[", "[[", "true", "false", ":", "pwd", "cd", "type", "which",
    "whereis", "basename", "dirname", "realpath", "readlink",
];

/// The programs whose misuse the hard denies name (wipes, devices, trust
/// and persistence writes, uploads and network sinks, TLS switches, shells
/// that run a string): what a command whose name is runtime data is read
/// as, and where the floor's reading of raw text starts a command line.
pub const DANGEROUS_PROGRAMS: &[&str] = &[
    "rm",
    "shred",
    "dd",
    "wipefs",
    "mkfs",
    "blkdiscard",
    "sgdisk",
    "parted",
    "fdisk",
    "chmod",
    "chown",
    "tee",
    "cp",
    "mv",
    "ln",
    "install",
    "truncate",
    "curl",
    "wget",
    "nc",
    "ncat",
    "socat",
    "scp",
    "rsync",
    "sh",
    "bash",
    "eval",
    "find",
    "sed",
    "usermod",
    "useradd",
    "gpasswd",
    "git",
    "npm",
    "sudo",
    "export",
];

/// Interpreters of a language that is not bash and that no tokenizer of
/// `code.rs` reads.
const OTHER_INTERPRETERS: &[&str] = &["pwsh", "powershell"];

/// Most readings one command gets, each kind (the step budget bounds the
/// work as a whole; this keeps one long argument list from spending it).
const MAX_READINGS: usize = 32;

/// Whether `word` names a program or builtin whose command a suffix
/// reading should consider.
fn names_a_program(word: &str) -> bool {
    let base = word.rsplit('/').next().unwrap_or(word);
    if base.is_empty() || INERT_NAMES.contains(&base) {
        return false;
    }
    spec::lookup(base).is_some() || RUNNING_BUILTINS.contains(&base) || spec::is_shell(base)
}

/// Whether `name` runs code of a general-purpose language that is not
/// bash (python, node, perl, ruby, php, lua, tcl, R, julia, osascript,
/// PowerShell); awk and jq are not counted.
pub fn runs_other_language(name: &str) -> bool {
    super::code::lang_of(name).is_some_and(|l| l != super::code::Lang::Awk)
        || OTHER_INTERPRETERS.contains(&name)
}

/// Whether `name` is an interpreter whose code is not bash (awk and jq
/// included).
pub(crate) fn is_interpreter(name: &str) -> bool {
    super::code::lang_of(name).is_some() || OTHER_INTERPRETERS.contains(&name) || name == "jq"
}

/// Whether `text` may be a command line: it holds a blank or a shell
/// operator, and is not too long to be worth a parse.
fn may_be_code(text: &str) -> bool {
    text.len() <= 4096
        && text
            .bytes()
            .any(|b| matches!(b, b' ' | b'\t' | b'\n' | b';' | b'|' | b'&' | b'`' | b'$'))
}

impl Interp {
    /// The readings of a program the table does not know: argument
    /// suffixes and strings that may be code.
    pub(crate) fn unknown_program(
        &mut self,
        index: Option<usize>,
        name: &str,
        args: &[Arg],
        assigns: &[(String, Value)],
        state: &State,
    ) {
        if self.ctx.conservative || args.is_empty() {
            return;
        }
        let saved = self.ctx.conservative;
        self.ctx.conservative = true;
        let mut readings = 0;
        for (k, arg) in args.iter().enumerate() {
            if readings >= MAX_READINGS {
                break;
            }
            let Some(word) = arg.as_known() else { continue };
            if !names_a_program(word) {
                continue;
            }
            if !self.meter.step() {
                break;
            }
            readings += 1;
            let suffix: Vec<Arg> = args.get(k..).unwrap_or(&[]).to_vec();
            self.spawn(index, suffix, assigns.to_vec(), None, state.clone());
        }
        if !is_interpreter(name) {
            let mut scripts = 0;
            for arg in args {
                if scripts >= MAX_READINGS {
                    break;
                }
                let Some(text) = arg.as_known() else { continue };
                // `--hook=CMD`: the value after the first `=` of an option.
                let code = match text.strip_prefix('-') {
                    Some(option) => option.split_once('=').map_or(text, |(_, v)| v),
                    None => text,
                };
                if !may_be_code(code) {
                    continue;
                }
                if !self.meter.script_step() {
                    break;
                }
                scripts += 1;
                let texts = self.value_scripts(&Value::known(code));
                self.run_scripts(texts, state.clone(), index, true);
            }
        }
        self.ctx.conservative = saved;
    }

    /// The readings of a command whose name is runtime data: as each
    /// program of [`DANGEROUS_PROGRAMS`] its name may be.
    pub(crate) fn unknown_name(
        &mut self,
        index: Option<usize>,
        argv: &[Arg],
        assigns: &[(String, Value)],
        state: &State,
    ) {
        if self.ctx.conservative {
            return;
        }
        let Some(Arg::Field(name)) = argv.first() else {
            return;
        };
        let args = argv.get(1..).unwrap_or(&[]);
        if args.is_empty() {
            return;
        }
        let saved = self.ctx.conservative;
        self.ctx.conservative = true;
        for program in DANGEROUS_PROGRAMS {
            if !name.may_be(program) {
                continue;
            }
            if !self.meter.step() {
                break;
            }
            let mut reading = Vec::with_capacity(argv.len());
            reading.push(Arg::Field(Value::known(program)));
            reading.extend(args.iter().cloned());
            self.spawn(index, reading, assigns.to_vec(), None, state.clone());
        }
        self.ctx.conservative = saved;
    }
}
