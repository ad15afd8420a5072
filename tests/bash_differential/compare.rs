//! What vouch extracted against what bash ran.
//!
//! vouch's side is a list of [`Unit`]s whose values are known, a set of
//! candidates, or unknown; bash's side is the recorder's [`Record`]s. A
//! record is explained by a unit whose name, arguments and cwd all admit
//! it; a candidate set admits its members, "unknown" admits anything, an
//! unknown run of fields admits any number of arguments, a glob admits what
//! it matches (or itself, as bash leaves an unmatched glob). A case is
//! **exact** when every record is explained by known values (or candidate
//! sets that are exactly the values seen), **consistent** when every record
//! is explained but some value was left unknown, and **wrong** when a record
//! is unexplained (vouch missed or mis-read a command) or, in a case where
//! every command runs, a unit vouch reported never ran.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;

use crate::recorder::{PASS_THROUGH, Record};

/// One value as vouch states it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Value {
    Known(String),
    OneOf(BTreeSet<String>),
    Unknown,
}

/// One argument position as vouch states it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Arg {
    /// Exactly one argument.
    One(Value),
    /// Any number of arguments (an unquoted unknown expansion, `xargs`'s
    /// appended input).
    Fields,
    /// An unquoted glob: the paths it matches, or the pattern itself.
    Glob(String),
}

/// One simple command vouch says would run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unit {
    /// The command's name (the basename bash looks up).
    pub name: Value,
    pub args: Vec<Arg>,
    pub cwd: Value,
    /// Wrappers vouch removed to reach this command (`sudo`, `env`, …).
    pub wrappers: Vec<String>,
}

/// How precisely a unit explains a record.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Precision {
    /// Some value was unknown, a run of fields or a glob.
    Loose,
    /// Only known values and candidate sets.
    Sets,
    /// Only known values.
    Exact,
}

/// The verdict on one case.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    Exact,
    Consistent,
    Wrong(Vec<Finding>),
}

/// One way vouch and bash disagree.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub enum Finding {
    /// bash ran this and no unit explains it.
    Missed(String),
    /// vouch reported this unit and bash never ran it (only judged where
    /// every command of the case runs).
    Extra(String),
}

impl fmt::Display for Finding {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Finding::Missed(r) => write!(f, "missed: bash ran {r}"),
            Finding::Extra(u) => write!(f, "extra: vouch reported {u}, bash never ran it"),
        }
    }
}

/// Wrappers that are bash builtins or keywords: a builtin behind them stays
/// a builtin. Any other wrapper (`env`, `nice`, `exec`, …) runs the
/// external program of that name.
const BUILTIN_WRAPPERS: &[&str] = &["command", "builtin", "time", "coproc"];

/// What the comparison needs to know about bash and the case.
pub struct Context<'a> {
    /// bash's builtins and reserved words.
    pub builtins: &'a BTreeSet<String>,
    /// Functions the case defines.
    pub functions: &'a BTreeSet<String>,
    /// Every command in the case runs (no dead branch): extra units count.
    pub all_run: bool,
}

/// Compares vouch's units with bash's records.
pub fn compare(units: &[Unit], records: &[Record], ctx: &Context<'_>) -> Outcome {
    let mut findings = Vec::new();
    let mut precision = Precision::Exact;
    // Values seen per (unit, position) for units matched through candidate
    // sets: a set is exact only if it is exactly what bash used.
    let mut seen: BTreeMap<(usize, usize), BTreeSet<String>> = BTreeMap::new();
    let mut used = vec![false; units.len()];
    for record in records {
        let best = units
            .iter()
            .enumerate()
            .filter_map(|(i, u)| explains(u, record).map(|p| (p, i)))
            .max();
        match best {
            Some((p, i)) => {
                precision = precision.min(p);
                if let Some(slot) = used.get_mut(i) {
                    *slot = true;
                }
                if p == Precision::Sets {
                    note_values(i, record, &mut seen);
                }
            }
            None => match wrapper_of(units, record) {
                Some(i) => {
                    if let Some(slot) = used.get_mut(i) {
                        *slot = true;
                    }
                }
                None => findings.push(Finding::Missed(show_record(record))),
            },
        }
    }
    if ctx.all_run {
        for (i, unit) in units.iter().enumerate() {
            // A unit is verified when some record is its own (the same
            // command may run twice and be reported twice).
            let verified = used.get(i).copied().unwrap_or(true)
                || records.iter().any(|r| {
                    explains(unit, r).is_some()
                        || (unit.wrappers.iter().any(|w| w == &r.name) && suffix_explains(unit, r))
                });
            if !verified && is_external(unit, ctx) && !behind_terminal_wrapper(unit) {
                findings.push(Finding::Extra(show_unit(unit)));
            }
        }
    }
    if !findings.is_empty() {
        findings.sort();
        findings.dedup();
        return Outcome::Wrong(findings);
    }
    if precision == Precision::Sets && sets_are_tight(units, &seen) {
        precision = Precision::Exact;
    }
    match precision {
        Precision::Exact => Outcome::Exact,
        Precision::Sets | Precision::Loose => Outcome::Consistent,
    }
}

/// How precisely `unit` explains `record`, or `None` when it cannot.
pub fn explains(unit: &Unit, record: &Record) -> Option<Precision> {
    let name = value_admits(&unit.name, &record.name)?;
    let cwd = value_admits(&unit.cwd, &record.cwd)?;
    let args = args_admit(&unit.args, &record.args)?;
    Some(name.min(cwd).min(args))
}

fn value_admits(value: &Value, actual: &str) -> Option<Precision> {
    match value {
        Value::Known(v) => (v == actual).then_some(Precision::Exact),
        Value::OneOf(set) => set.contains(actual).then_some(Precision::Sets),
        Value::Unknown => Some(Precision::Loose),
    }
}

/// Aligns vouch's argument positions with bash's arguments: a dynamic
/// programme over (position, argument), bounded by their product.
fn args_admit(items: &[Arg], actual: &[String]) -> Option<Precision> {
    let n = items.len();
    let m = actual.len();
    // best[i][j]: best precision aligning items[i..] with actual[j..].
    let mut best: Vec<Vec<Option<Precision>>> = vec![vec![None; m + 1]; n + 1];
    if let Some(row) = best.get_mut(n)
        && let Some(cell) = row.get_mut(m)
    {
        *cell = Some(Precision::Exact);
    }
    for i in (0..n).rev() {
        for j in (0..=m).rev() {
            let here = match items.get(i) {
                Some(Arg::One(value)) => actual.get(j).and_then(|a| {
                    let p = value_admits(value, a)?;
                    Some(p.min(cell(&best, i + 1, j + 1)?))
                }),
                Some(Arg::Fields) => (j..=m)
                    .filter_map(|k| cell(&best, i + 1, k))
                    .max()
                    .map(|p| p.min(Precision::Loose)),
                Some(Arg::Glob(pattern)) => {
                    let literal = actual
                        .get(j)
                        .filter(|a| *a == pattern)
                        .and_then(|_| cell(&best, i + 1, j + 1));
                    let matched = (j + 1..=m)
                        .take_while(|&k| {
                            actual.get(k - 1).is_some_and(|a| glob_matches(pattern, a))
                        })
                        .filter_map(|k| cell(&best, i + 1, k))
                        .max();
                    literal.max(matched).map(|p| p.min(Precision::Loose))
                }
                None => None,
            };
            if let Some(row) = best.get_mut(i)
                && let Some(slot) = row.get_mut(j)
            {
                *slot = here;
            }
        }
    }
    cell(&best, 0, 0)
}

fn cell(best: &[Vec<Option<Precision>>], i: usize, j: usize) -> Option<Precision> {
    best.get(i).and_then(|row| row.get(j)).copied().flatten()
}

/// Bash pathname matching: `*` and `?` never match `/`, and never a
/// leading `.` of a path component; `[…]` is a bracket expression. Paths
/// bash produced from a pattern like `src/*` are compared component-wise.
pub fn glob_matches(pattern: &str, path: &str) -> bool {
    let pats: Vec<&str> = pattern.split('/').collect();
    let parts: Vec<&str> = path.split('/').collect();
    pats.len() == parts.len()
        && pats.iter().zip(&parts).all(|(p, s)| {
            let p: Vec<char> = p.chars().collect();
            let s: Vec<char> = s.chars().collect();
            let leading_dot_ok = s.first().is_none_or(|c| *c != '.') || p.first() == Some(&'.');
            leading_dot_ok && component_matches(&p, &s)
        })
}

fn component_matches(p: &[char], s: &[char]) -> bool {
    match p.split_first() {
        None => s.is_empty(),
        Some(('*', rest)) => {
            (0..=s.len()).any(|k| component_matches(rest, s.get(k..).unwrap_or(&[])))
        }
        Some(('?', rest)) => s
            .split_first()
            .is_some_and(|(_, tail)| component_matches(rest, tail)),
        Some(('[', rest)) => match (bracket(rest), s.split_first()) {
            (Some((set, negated, after)), Some((c, tail))) => {
                set.contains(c) != negated && component_matches(after, tail)
            }
            (None, Some((c, tail))) => *c == '[' && component_matches(rest, tail),
            (_, None) => false,
        },
        Some((c, rest)) => s
            .split_first()
            .is_some_and(|(d, tail)| c == d && component_matches(rest, tail)),
    }
}

/// Parses a bracket expression after `[`: its characters (ranges
/// expanded), whether it is negated, and the pattern after `]`.
fn bracket(p: &[char]) -> Option<(Vec<char>, bool, &[char])> {
    let (negated, mut i) = match p.first() {
        Some('!' | '^') => (true, 1),
        _ => (false, 0),
    };
    let mut set = Vec::new();
    let start = i;
    while let Some(&c) = p.get(i) {
        if c == ']' && i > start {
            return Some((set, negated, p.get(i + 1..).unwrap_or(&[])));
        }
        if p.get(i + 1) == Some(&'-')
            && let Some(&end) = p.get(i + 2)
            && end != ']'
        {
            set.extend(c..=end);
            i += 3;
        } else {
            set.push(c);
            i += 1;
        }
    }
    None
}

/// A wrapper's own record (`env -i rm …`, `sudo rm …`): explained by a unit
/// that names it among its wrappers. A wrapper that runs for real is checked
/// through the record of what it ran; one that only records (`sudo`) must
/// end with the unit's command, as its inner command never ran.
fn wrapper_of(units: &[Unit], record: &Record) -> Option<usize> {
    units.iter().position(|u| {
        u.wrappers.iter().any(|w| w == &record.name)
            && (PASS_THROUGH.contains(&record.name.as_str()) || suffix_explains(u, record))
    })
}

fn suffix_explains(unit: &Unit, record: &Record) -> bool {
    (0..record.args.len()).any(|k| {
        record.args.get(k).is_some_and(|first| {
            let name = first.rsplit('/').next().unwrap_or(first);
            let inner = Record {
                name: name.to_owned(),
                path: first.clone(),
                args: record.args.get(k + 1..).unwrap_or(&[]).to_vec(),
                cwd: record.cwd.clone(),
            };
            explains(unit, &inner).is_some()
        })
    })
}

/// A unit behind a wrapper that only records (`sudo`): its command never
/// ran in the sandbox, so its absence proves nothing.
fn behind_terminal_wrapper(unit: &Unit) -> bool {
    unit.wrappers
        .iter()
        .any(|w| !PASS_THROUGH.contains(&w.as_str()) && !BUILTIN_WRAPPERS.contains(&w.as_str()))
        && !unit.wrappers.iter().any(|w| w == "exec")
}

/// True when bash would run `unit` as an external program (so a recorder
/// must have seen it): a known name that is neither a function of the case
/// nor a builtin reached without an external wrapper.
fn is_external(unit: &Unit, ctx: &Context<'_>) -> bool {
    let Value::Known(name) = &unit.name else {
        return false;
    };
    let through_external = unit
        .wrappers
        .iter()
        .any(|w| !BUILTIN_WRAPPERS.contains(&w.as_str()));
    if through_external {
        return true;
    }
    !(ctx.builtins.contains(name) || ctx.functions.contains(name))
}

fn note_values(
    index: usize,
    record: &Record,
    seen: &mut BTreeMap<(usize, usize), BTreeSet<String>>,
) {
    // Position 0 is the name, 1 the cwd, 2.. the arguments (which align
    // one to one here: a Sets match has no fields or globs).
    let values = [&record.name, &record.cwd]
        .into_iter()
        .chain(record.args.iter());
    for (pos, v) in values.enumerate() {
        seen.entry((index, pos)).or_default().insert(v.clone());
    }
}

fn sets_are_tight(units: &[Unit], seen: &BTreeMap<(usize, usize), BTreeSet<String>>) -> bool {
    seen.iter().all(|((i, pos), values)| {
        let Some(unit) = units.get(*i) else {
            return false;
        };
        let stated = match pos {
            0 => Some(&unit.name),
            1 => Some(&unit.cwd),
            p => match unit.args.get(p - 2) {
                Some(Arg::One(v)) => Some(v),
                Some(Arg::Fields | Arg::Glob(_)) | None => None,
            },
        };
        match stated {
            Some(Value::Known(v)) => values.len() == 1 && values.contains(v),
            Some(Value::OneOf(set)) => set == values,
            Some(Value::Unknown) | None => false,
        }
    })
}

pub fn show_record(record: &Record) -> String {
    let mut argv = vec![record.name.clone()];
    argv.extend(record.args.iter().cloned());
    format!("{} (cwd {})", shell_words(&argv), record.cwd)
}

pub fn show_unit(unit: &Unit) -> String {
    let mut out = show_value(&unit.name);
    for arg in &unit.args {
        out.push(' ');
        match arg {
            Arg::One(v) => out.push_str(&show_value(v)),
            Arg::Fields => out.push_str("<fields>"),
            Arg::Glob(p) => out.push_str(&format!("<glob {p}>")),
        }
    }
    if !unit.wrappers.is_empty() {
        out.push_str(&format!(" [via {}]", unit.wrappers.join(", ")));
    }
    format!("{out} (cwd {})", show_value(&unit.cwd))
}

fn show_value(value: &Value) -> String {
    match value {
        Value::Known(v) => shell_words(std::slice::from_ref(v)),
        Value::OneOf(set) => format!(
            "{{{}}}",
            set.iter()
                .map(|v| shell_words(std::slice::from_ref(v)))
                .collect::<Vec<_>>()
                .join("|")
        ),
        Value::Unknown => "<unknown>".to_owned(),
    }
}

fn shell_words(words: &[String]) -> String {
    words
        .iter()
        .map(|w| {
            if !w.is_empty()
                && w.chars()
                    .all(|c| c.is_ascii_alphanumeric() || "-_./=:,@%+".contains(c))
            {
                w.clone()
            } else {
                format!("'{}'", w.replace('\'', "'\\''"))
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}
