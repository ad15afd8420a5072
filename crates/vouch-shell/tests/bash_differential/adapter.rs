//! The one place that reads vouch's shell analysis: request in, the
//! commands that would run out, in the comparison's own terms
//! ([`crate::compare::Unit`]), so the comparison does not trust vouch's
//! matching code to judge vouch.
//!
//! It reads `vouch_shell::analyze` (see `docs/shell.md`): argv after every
//! expansion, cwd, kind and parent per command, values as candidates of text
//! with holes and pattern characters.

use vouch_shell::{self as shell, Analysis, CommandKind, Limits, Seg, ShellEnv, Text};

use crate::compare::{Arg, Cand, Expect, Piece, Unit, Value};
use crate::recorder::PASS_THROUGH;

/// The units vouch says `command` would run, given the request's `cwd` and
/// `home`, and why the analysis was incomplete when it was.
pub fn extract(command: &str, cwd: &str, home: &str) -> (Vec<Unit>, Option<String>) {
    let env = ShellEnv {
        cwd: Some(cwd),
        home,
        vars: &[],
    };
    let analysis = shell::analyze(command, &env, &Limits::default());
    let units = analysis
        .commands
        .iter()
        .enumerate()
        .map(|(i, c)| Unit {
            name: name_of(c.argv.first()),
            args: c.args().iter().map(arg).collect(),
            cwd: value(&c.cwd),
            expect: expect(&analysis, i),
            alternatives: shape_key(&analysis, i),
        })
        .collect();
    (units, incomplete(&analysis))
}

fn incomplete(analysis: &Analysis) -> Option<String> {
    let mut why: Vec<String> = analysis.errors.iter().map(ToString::to_string).collect();
    why.extend(analysis.incomplete.iter().map(ToString::to_string));
    (!why.is_empty()).then(|| why.join("; "))
}

/// Whether a recorder must have seen command `i`: an external program is
/// recorded unless something on its way only records (`sudo`) or has an
/// unknown name; builtins and function calls never are.
fn expect(analysis: &Analysis, i: usize) -> Expect {
    let Some(command) = analysis.commands.get(i) else {
        return Expect::Unverifiable;
    };
    match command.kind {
        CommandKind::Builtin | CommandKind::Function => return Expect::Internal,
        CommandKind::Unresolved => return Expect::Unverifiable,
        CommandKind::External => {}
    }
    // Walk the spawners; bounded by the number of commands, so a cycle in
    // the parent links cannot loop.
    let mut at = command.parent;
    for _ in 0..analysis.commands.len() {
        let Some(p) = at.and_then(|p| analysis.commands.get(p)) else {
            return Expect::Recorded;
        };
        match p.kind {
            CommandKind::External if p.name().is_some_and(|n| PASS_THROUGH.contains(&n)) => {}
            CommandKind::External | CommandKind::Unresolved => return Expect::Unverifiable,
            CommandKind::Builtin | CommandKind::Function => {}
        }
        at = p.parent;
    }
    Expect::Unverifiable
}

/// What shapes of one command have in common: name, cwd, nesting and the
/// spawner's name (`docs/differential.md`: alternatives).
fn shape_key(analysis: &Analysis, i: usize) -> String {
    let Some(c) = analysis.commands.get(i) else {
        return String::new();
    };
    let parent = c
        .parent
        .and_then(|p| analysis.commands.get(p))
        .and_then(|p| p.name())
        .unwrap_or("");
    format!(
        "{}|{}|{}|{:?}|{:?}|{parent}",
        c.name().unwrap_or("?"),
        c.cwd,
        c.depth,
        c.origin,
        c.function
    )
}

fn name_of(first: Option<&shell::Arg>) -> Value {
    let Some(shell::Arg::Field(v)) = first else {
        return Value::unknown();
    };
    let cands: Option<Vec<Cand>> = v
        .candidates()
        .iter()
        .map(|t| {
            let text = t.as_known()?;
            Some(Cand::lit(text.rsplit('/').next().unwrap_or(text)))
        })
        .collect();
    cands.map_or_else(Value::unknown, Value)
}

fn arg(a: &shell::Arg) -> Arg {
    match a {
        shell::Arg::Field(v) => Arg::Field(value(v)),
        shell::Arg::Unknown(_) => Arg::Fields,
    }
}

fn value(v: &shell::Value) -> Value {
    Value(v.candidates().iter().map(cand).collect())
}

fn cand(t: &Text) -> Cand {
    Cand(
        t.segs
            .iter()
            .map(|s| match s {
                Seg::Lit(text) => Piece::Lit(text.clone()),
                Seg::Any(_) => Piece::Any,
                Seg::Star => Piece::Star,
                Seg::Quest => Piece::Quest,
                Seg::Class(inner) => Piece::Class(inner.clone()),
            })
            .collect(),
    )
}
