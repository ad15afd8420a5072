//! Input that never ends: what `yes`, `seq inf` and `cat /dev/zero` print,
//! and what a command reads from them. A loop that reads such input
//! (`yes | while read l; do …; done`) never runs out of lines, and a
//! runner fed by it (`seq inf | xargs -P0 …`) never runs out of work: the
//! fork-bomb denies read both.
//!
//! The reading is of the command line as written: a program between the
//! source and the reader that could end the stream (`head`, `grep -m`)
//! is not followed through, so the input is not endless. Only `cat` with
//! no file (it copies its input) passes endlessness on, to a bounded depth.

use super::command::{Command, RedirectOp};

/// Devices whose reading never ends.
const ENDLESS_DEVICES: &[&str] = &["/dev/zero", "/dev/urandom", "/dev/random"];

/// How many `cat`s between source and reader are followed.
const MAX_COPIES: usize = 8;

/// True when what command `index` of `commands` reads on standard input
/// never ends: its `<` redirection names an endless device, or a command
/// whose output reaches its input prints without end (text before or
/// after an endless part does not end it).
pub fn reads_endless_input(commands: &[Command], index: usize) -> bool {
    reads_endless(commands, index, 0)
}

fn reads_endless(commands: &[Command], index: usize, depth: usize) -> bool {
    let Some(cmd) = commands.get(index) else {
        return false;
    };
    let redirected = cmd.redirects.iter().any(|r| {
        r.fd == 0
            && r.op == RedirectOp::Read
            && r.target
                .as_known()
                .is_some_and(|t| ENDLESS_DEVICES.contains(&t))
    });
    redirected
        || cmd
            .stdin_from
            .iter()
            .filter(|&k| k != index)
            .any(|k| prints_endless(commands, k, depth))
}

/// True when command `index` prints without end: `yes`, `seq … inf`,
/// `cat`/`pv` of an endless device, or `cat` of endless input.
fn prints_endless(commands: &[Command], index: usize, depth: usize) -> bool {
    let Some(cmd) = commands.get(index) else {
        return false;
    };
    let words: Vec<&str> = cmd.args().iter().filter_map(|a| a.as_known()).collect();
    let known = words.len() == cmd.args().len();
    match cmd.name() {
        Some("yes") => true,
        Some("seq") => {
            known
                && words.last().is_some_and(|w| {
                    matches!(
                        w.trim_start_matches('+').to_ascii_lowercase().as_str(),
                        "inf" | "infinity"
                    )
                })
        }
        Some("cat" | "pv") if known => {
            let files: Vec<&&str> = words
                .iter()
                .filter(|w| !w.starts_with('-') || **w == "-")
                .collect();
            if files.iter().any(|w| ENDLESS_DEVICES.contains(w)) {
                return true;
            }
            let reads_stdin =
                files.is_empty() || files.iter().any(|w| matches!(**w, "-" | "/dev/stdin"));
            reads_stdin && depth < MAX_COPIES && reads_endless(commands, index, depth + 1)
        }
        _ => false,
    }
}
