//! Paths a `find` of the same command printed, given to another program:
//! the `{}` of `find ROOT … -exec CMD … {} ;` (or `{} +`), and what
//! `xargs CMD` appends when its input is `find ROOT …`'s output
//! (`find src -name '*.rs' | xargs wc -l`). The analysis knows such a word
//! only as "ROOT or a path below it"; this module says which words of a
//! unit are such paths, so the reader judges them as a search of ROOT
//! (every file below it, hidden ones included, may be read; a symbolic
//! link below it counts as what it points to).
//!
//! Only exact shapes are followed; anything else is a word whose value is
//! not known, and refused as before:
//!
//! - `find` with one `-exec … ;` or `-exec … {} +` (never `-execdir`, `-ok`),
//!   the child's words the template's, each `{}` a found path;
//! - `xargs` with at most `-0`, `-r`, `-n N`, `-P N`, `-t`, `-x`, its input
//!   only from `find`s that print with `-print` (or by default) — or all
//!   with `-print0` when `xargs -0`, never a mix. Without `-0` xargs splits
//!   its input at blanks and reads quotes and backslashes, so a found name
//!   holding one would become other words: the walk then refuses any such
//!   name ([`super::tree::Narrowing::names_split`]).

use crate::shell::options::{Item, Parsed};
use crate::shell::{Analysis, Arg, Command};

/// Which argument positions of a unit are found paths, and of what.
#[derive(Debug, Clone, Default)]
pub(super) struct FoundArgs {
    /// Positions in `argv` (the name is 0) holding one found path.
    pub at: Vec<usize>,
    /// The position of the trailing unknown words that are more of them
    /// (`{} +`, `xargs`).
    pub more: Option<usize>,
    /// The `find`s' starting points.
    pub roots: Vec<String>,
    /// `xargs` without `-0`: names are split at blanks.
    pub split: bool,
    /// The `-name` globs every printed path's base name matches, when the
    /// `find`'s expression is only tests joined by "and" (no `-o`, `!`,
    /// `,` or parentheses) and there is one `find`; empty: no narrowing.
    pub names: Vec<String>,
}

impl FoundArgs {
    pub fn holds(&self, at: usize) -> bool {
        self.at.contains(&at) || self.more == Some(at)
    }
}

/// The found paths among `unit`'s words, when its parent hands it some in
/// one of the shapes above; `None` otherwise.
pub(super) fn found_args(unit: &Command, analysis: &Analysis) -> Option<FoundArgs> {
    let parent = analysis.commands.get(unit.parent?)?;
    match parent.name()? {
        "find" => from_find_exec(unit, parent),
        "xargs" => from_xargs(unit, parent, analysis),
        _ => None,
    }
}

fn known_args(unit: &Command) -> Option<Vec<&str>> {
    unit.argv.iter().skip(1).map(Arg::as_known).collect()
}

/// `find`'s actions: what it does with a path beyond testing it.
const ACTIONS: &[&str] = &[
    "-print", "-print0", "-printf", "-fprint", "-fprint0", "-fprintf", "-ls", "-fls", "-exec",
    "-execdir", "-ok", "-okdir", "-delete", "-quit",
];

/// The `-name` globs of a `find` whose expression only joins tests with
/// "and": a path it prints matches every one (empty when it may print
/// others).
fn name_globs(args: &[&str]) -> Vec<String> {
    let joins_otherwise = args
        .iter()
        .any(|w| matches!(*w, "-o" | "-or" | "!" | "-not" | "(" | ")" | ","));
    // An action before a test acts on every path the test would have
    // left out (`find t -print -name '*.md'` prints them all): the globs
    // narrow only when the one action, if any, is the expression's last
    // word.
    let action_at = args.iter().position(|w| ACTIONS.contains(w));
    let action_last = action_at.is_none_or(|at| at + 1 == args.len());
    if joins_otherwise || !action_last {
        return Vec::new();
    }
    args.windows(2)
        .filter(|pair| pair.first() == Some(&"-name"))
        .filter_map(|pair| pair.get(1).map(|g| (*g).to_owned()))
        .collect()
}

/// Whether a `find` unit's standard output holds only what it prints: no
/// redirection but `2>/dev/null` (`2>&1` and `|&` put its error messages,
/// words of its own choosing, among the paths).
fn prints_only_paths(find: &Command) -> bool {
    use crate::shell::RedirectOp;
    find.redirects.iter().all(|r| {
        r.fd == 2
            && matches!(
                r.op,
                RedirectOp::Write | RedirectOp::Append | RedirectOp::Clobber
            )
            && r.target.as_known() == Some("/dev/null")
    })
}

/// A `find`'s starting points and its actions (`-print`, `-print0`, …).
fn roots_and_actions<'a>(args: &[&'a str]) -> (Vec<&'a str>, Vec<&'a str>) {
    let (mut roots, i) = super::find_roots(args);
    if roots.is_empty() {
        roots.push(".");
    }
    let actions = args
        .get(i..)
        .unwrap_or_default()
        .iter()
        .copied()
        .filter(|w| ACTIONS.contains(w))
        .collect();
    (roots, actions)
}

fn from_find_exec(unit: &Command, find: &Command) -> Option<FoundArgs> {
    let args = known_args(find)?;
    let (roots, actions) = roots_and_actions(&args);
    // One `-exec` and nothing else that prints or runs.
    if actions != ["-exec"] {
        return None;
    }
    let start = args.iter().position(|w| *w == "-exec")? + 1;
    let rest = args.get(start..)?;
    let end = rest.iter().position(|w| matches!(*w, ";" | "+"))?;
    let template = rest.get(..end)?;
    let batch = rest.get(end) == Some(&"+");
    if batch && template.last() != Some(&"{}") {
        return None;
    }
    let want = template.len() + usize::from(batch);
    if unit.argv.len() != want {
        return None;
    }
    let mut found = FoundArgs {
        roots: roots.iter().map(|r| (*r).to_owned()).collect(),
        // The words before `-exec` (the expression up to its action).
        names: name_globs(args.get(..start.saturating_sub(1))?),
        ..FoundArgs::default()
    };
    for (i, word) in template.iter().enumerate() {
        let arg = unit.argv.get(i)?;
        match *word {
            "{}" => {
                arg.as_known().is_none().then_some(())?;
                found.at.push(i);
            }
            other => (arg.as_known() == Some(other)).then_some(())?,
        }
    }
    if batch {
        found.more = Some(template.len());
    }
    (!found.at.is_empty()).then_some(found)
}

fn from_xargs(unit: &Command, xargs: &Command, analysis: &Analysis) -> Option<FoundArgs> {
    let args = known_args(xargs)?;
    let spec = crate::shell::spec::lookup("xargs")?;
    let parsed = Parsed::new(&spec.options, &args);
    let mut nul = false;
    let mut first_operand = args.len();
    for item in &parsed.items {
        match item {
            Item::Opt { name, .. } => {
                if name.is(&["0", "null"]) {
                    nul = true;
                } else if !name.is(&[
                    "r",
                    "no-run-if-empty",
                    "n",
                    "max-args",
                    "P",
                    "max-procs",
                    "t",
                    "verbose",
                    "x",
                    "exit",
                ]) {
                    return None;
                }
            }
            Item::End { .. } => {}
            Item::Operand { at } => {
                first_operand = *at;
                break;
            }
            Item::Unknown { .. } | Item::Invalid { .. } => return None,
        }
    }
    // What it runs: its operands, or `echo`; then one item, then more.
    let template = args.len().saturating_sub(first_operand).max(1);
    if unit.argv.len() != template + 2 {
        return None;
    }
    let (Some(Arg::Field(_)), Some(Arg::Unknown(_))) =
        (unit.argv.get(template), unit.argv.get(template + 1))
    else {
        return None;
    };
    // Its input: only `find`s that print each path whole.
    let sources: Vec<usize> = xargs.stdin_from.iter().collect();
    if sources.is_empty() || xargs.stdin_from.is_widened() {
        return None;
    }
    let mut roots = Vec::new();
    let mut names = Vec::new();
    let one = sources.len() == 1;
    for index in sources {
        let find = analysis.commands.get(index)?;
        if find.name()? != "find" {
            return None;
        }
        let find_args = known_args(find)?;
        if !prints_only_paths(find) {
            return None;
        }
        let (find_roots, actions) = roots_and_actions(&find_args);
        let prints = match nul {
            true => actions.iter().all(|a| *a == "-print0") && !actions.is_empty(),
            false => actions.iter().all(|a| *a == "-print"),
        };
        if !prints {
            return None;
        }
        roots.extend(find_roots.iter().map(|r| (*r).to_owned()));
        if one {
            names = name_globs(&find_args);
        }
    }
    Some(FoundArgs {
        at: vec![template],
        more: Some(template + 1),
        roots,
        split: !nul,
        names,
    })
}
