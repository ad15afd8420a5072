//! Temporary: [`super::analyze`] over the syntax walker, until the
//! expansion model replaces it (issue 8). Words become single fields,
//! variables are known only when the environment names them, and every
//! command runs in the starting directory.

use super::budget::{Limits, Meter};
use super::command::{Analysis, Command, CommandKind, Origin, Redirect, RedirectOp, ShellEnv};
use super::value::{Arg, Seg, Sources, Text, Value};
use super::word::{Piece, Word};

const BUILTINS: &[&str] = &[
    "cd",
    "echo",
    "printf",
    "read",
    "eval",
    "source",
    ".",
    "exec",
    "export",
    "declare",
    "local",
    "readonly",
    "typeset",
    "unset",
    "set",
    "shift",
    "true",
    "false",
    ":",
    "test",
    "[",
    "pushd",
    "popd",
    "mapfile",
    "readarray",
    "builtin",
    "command",
    "let",
    "return",
    "exit",
    "trap",
];

fn text(word: &Word, env: &ShellEnv<'_>) -> Text {
    let mut out = Text::default();
    for piece in &word.pieces {
        match piece {
            Piece::Literal(t) => out.push_str(t),
            Piece::Home => out.push_str(env.home),
            Piece::Var { name, .. } => match env.vars.iter().find(|(n, _)| n == name) {
                Some((_, v)) => out.push_str(v),
                None => out.push(Seg::Any(Sources::none())),
            },
            Piece::Glob('*') => out.push(Seg::Star),
            Piece::Glob('?') => out.push(Seg::Quest),
            Piece::Glob(c) => out.push_char(*c),
            Piece::Subst => out.push(Seg::Any(Sources::none())),
        }
    }
    out
}

fn op(op: super::RedirectOp) -> RedirectOp {
    match op {
        super::RedirectOp::Write => RedirectOp::Write,
        super::RedirectOp::Append => RedirectOp::Append,
        super::RedirectOp::Clobber => RedirectOp::Clobber,
        super::RedirectOp::WriteAll => RedirectOp::WriteAll,
        super::RedirectOp::AppendAll => RedirectOp::AppendAll,
        super::RedirectOp::Read => RedirectOp::Read,
        super::RedirectOp::ReadWrite => RedirectOp::ReadWrite,
        super::RedirectOp::Duplicate => RedirectOp::Duplicate,
        super::RedirectOp::HereString => RedirectOp::HereString,
        super::RedirectOp::HereDoc => RedirectOp::HereDoc,
    }
}

pub(super) fn analyze(command: &str, env: &ShellEnv<'_>, limits: &Limits) -> Analysis {
    let script = super::parse(command);
    let meter = Meter::new(*limits);
    let cwd = env.cwd.map_or_else(Value::unknown, Value::known);
    let commands = script
        .units
        .iter()
        .map(|unit| {
            let argv: Vec<Arg> = unit
                .argv
                .iter()
                .map(|w| Arg::Field(Value::text(text(w, env))))
                .collect();
            let name = unit.name().unwrap_or("");
            let kind = if unit.argv.first().is_some_and(Word::has_expansion) {
                CommandKind::Unresolved
            } else if BUILTINS.contains(&name) {
                CommandKind::Builtin
            } else {
                CommandKind::External
            };
            let mut stdin_from = Sources::none();
            for &s in &unit.sources {
                stdin_from.insert(s);
            }
            Command {
                argv,
                cwd: cwd.clone(),
                kind,
                parent: None,
                assignments: unit
                    .assignments
                    .iter()
                    .map(|a| (a.name.clone(), Value::text(text(&a.value, env))))
                    .collect(),
                redirects: unit
                    .redirects
                    .iter()
                    .map(|r| Redirect {
                        fd: r.fd.unwrap_or(u32::from(!r.op.reads_file())),
                        op: op(r.op),
                        target: Value::text(text(&r.target, env)),
                    })
                    .collect(),
                stdin_from,
                stdin_text: None,
                background: unit.background,
                in_pipeline: unit.in_pipeline,
                function: unit.in_function.clone(),
                depth: unit.depth,
                origin: match unit.origin {
                    super::Origin::Command | super::Origin::FindExec => Origin::Command,
                    super::Origin::CommandSubstitution => Origin::CommandSubstitution,
                    super::Origin::ProcessSubstitution => Origin::ProcessSubstitution,
                },
            }
        })
        .collect();
    Analysis {
        commands,
        errors: script.errors,
        incomplete: meter.into_incomplete(),
    }
}
