//! The one place that reads vouch's shell analysis: request in, the units
//! that would run out, in the comparison's terms ([`crate::compare::Unit`]).
//!
//! Today this reads `vouch::shell::parse`, whose words keep expansions
//! visible but unresolved and whose units carry no working directory; when
//! the analysis exposes resolved values (known / candidates / unknown) and a
//! cwd per unit, only this file changes.

use std::collections::BTreeSet;

use vouch::shell::{self, Piece, Word};

use crate::compare::{Arg, Unit, Value};

/// The units vouch says `command` would run, given the request's `cwd` and
/// `home`, and vouch's own error when the analysis was incomplete.
pub fn extract(command: &str, cwd: &str, home: &str) -> (Vec<Unit>, Option<String>) {
    let script = shell::parse(command);
    // Today's units carry no cwd: it is the request's until anything may
    // have changed it, then unknown.
    // (`env` and `sudo` may have been given `-C`/`-D`, which today's units
    // do not keep.)
    let changes_cwd = script.units.iter().any(|u| {
        matches!(u.name(), Some("cd" | "pushd" | "popd"))
            || u.wrappers.iter().any(|w| w == "env" || w == "sudo")
    });
    let cwd = if changes_cwd {
        Value::Unknown
    } else {
        Value::Known(cwd.to_owned())
    };
    let units = script
        .units
        .iter()
        .map(|unit| {
            let name = match unit.argv.first().map(|w| value_of(w, home)) {
                Some(Arg::One(Value::Known(n))) => {
                    Value::Known(n.rsplit('/').next().unwrap_or(&n).to_owned())
                }
                Some(Arg::One(Value::OneOf(set))) => Value::OneOf(
                    set.iter()
                        .map(|n| n.rsplit('/').next().unwrap_or(n).to_owned())
                        .collect::<BTreeSet<_>>(),
                ),
                Some(Arg::One(Value::Unknown) | Arg::Fields | Arg::Glob(_)) | None => {
                    Value::Unknown
                }
            };
            let mut args: Vec<Arg> = unit.args().iter().map(|w| value_of(w, home)).collect();
            if unit.extra_args_unknown {
                args.push(Arg::Fields);
            }
            Unit {
                name,
                args,
                cwd: cwd.clone(),
                wrappers: unit.wrappers.clone(),
            }
        })
        .collect();
    (units, script.error().map(ToString::to_string))
}

/// One decoded word: literal text (with `~`/`$HOME` as the request's home)
/// is known; literal text with glob characters is a glob; anything else may
/// split into any number of fields (today's words do not say whether an
/// expansion was quoted).
fn value_of(word: &Word, home: &str) -> Arg {
    let mut text = String::new();
    let mut glob = false;
    for piece in &word.pieces {
        match piece {
            Piece::Literal(t) => text.push_str(t),
            Piece::Home => text.push_str(home),
            Piece::Glob(c) => {
                glob = true;
                text.push(*c);
            }
            Piece::Var { .. } | Piece::Subst => return Arg::Fields,
        }
    }
    if glob {
        Arg::Glob(text)
    } else {
        Arg::One(Value::Known(text))
    }
}
