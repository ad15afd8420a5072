//! `fork-bomb`: a function that spawns copies of itself (directly, through
//! `$FUNCNAME` or mutual recursion) in a pipeline or the background, and
//! interpreter one-liners that fork in an unbounded loop.

use crate::shell::CommandKind;
use crate::shell::spec::Role;

use super::facts::Facts;
use super::{Category, HardDeny, deny};

/// Interpreters whose inline code (`-e`, `-c`, `-r`) is read for a fork loop.
const INTERPRETERS: &[&str] = &[
    "perl", "ruby", "node", "php", "python", "python2", "python3", "lua",
];

pub(super) fn check(f: &mut Facts<'_>) -> Option<HardDeny> {
    for (i, cmd) in f.commands() {
        if cmd.kind == CommandKind::Function && cmd.recursive && (cmd.background || cmd.in_pipeline)
        {
            let name = cmd.name().unwrap_or("?");
            return deny(
                Category::ForkBomb,
                "fork-bomb/recursive-function",
                format!("function `{name}` spawns copies of itself without bound"),
            );
        }
        let Some(name) = cmd.name() else { continue };
        let base = name.trim_end_matches(|c: char| c.is_ascii_digit() || c == '.');
        if !INTERPRETERS.contains(&name) && !INTERPRETERS.contains(&base) {
            continue;
        }
        for code in inline_code(f, i) {
            if forks_in_a_loop(&code) {
                return deny(
                    Category::ForkBomb,
                    "fork-bomb/interpreter-fork-loop",
                    format!("`{name}` forks in an unbounded loop"),
                );
            }
        }
    }
    None
}

/// The inline code an interpreter is given (`-e CODE`, `-c CODE`, `-r CODE`).
pub(super) fn inline_code(f: &Facts<'_>, i: usize) -> Vec<String> {
    let mut out = Vec::new();
    if let Some(eff) = f.effects_of(i) {
        for v in eff.with(&[Role::Script]) {
            if let Some(t) = v.as_known() {
                out.push(t.to_owned());
            }
        }
    }
    let Some(cmd) = f.command(i) else { return out };
    let args = cmd.args();
    let mut k = 0;
    while let Some(a) = args.get(k) {
        let flag = a.as_known().unwrap_or("");
        let takes = matches!(
            flag,
            "-e" | "-E" | "-c" | "-r" | "--eval" | "-p" | "--print"
        ) || (flag.starts_with('-')
            && !flag.starts_with("--")
            && flag.ends_with(['e', 'c'])
            && flag.len() <= 4);
        if takes && let Some(code) = args.get(k + 1).and_then(|c| c.as_known()) {
            out.push(code.to_owned());
            k += 2;
            continue;
        }
        k += 1;
    }
    out
}

fn forks_in_a_loop(code: &str) -> bool {
    let compact: String = code.chars().filter(|c| !c.is_whitespace()).collect();
    let forks = compact.contains("fork");
    let looping = [
        "while",
        "loop",
        "for(;;)",
        "until",
        "whileTrue",
        "whiletrue",
    ]
    .iter()
    .any(|k| compact.contains(k));
    forks && looping
}
