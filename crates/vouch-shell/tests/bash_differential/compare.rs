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

use crate::recorder::Record;

/// One piece of a candidate string as vouch states it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Piece {
    Lit(String),
    /// Text nobody can know (possibly empty, possibly holding `/`).
    Any,
    /// Unquoted pattern characters pathname expansion acts on.
    Star,
    Quest,
    Class(String),
}

/// One candidate string.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cand(pub Vec<Piece>);

impl Cand {
    pub fn lit(text: &str) -> Self {
        Cand(vec![Piece::Lit(text.to_owned())])
    }

    /// The string when every character is known and none is a pattern.
    pub fn as_lit(&self) -> Option<String> {
        let mut out = String::new();
        for p in &self.0 {
            match p {
                Piece::Lit(t) => out.push_str(t),
                Piece::Any | Piece::Star | Piece::Quest | Piece::Class(_) => return None,
            }
        }
        Some(out)
    }

    pub fn is_pattern(&self) -> bool {
        self.0
            .iter()
            .any(|p| matches!(p, Piece::Star | Piece::Quest | Piece::Class(_)))
    }

    /// What bash keeps for a pattern that matches nothing: its spelling.
    fn spelling(&self) -> Option<String> {
        let mut out = String::new();
        for p in &self.0 {
            match p {
                Piece::Lit(t) => out.push_str(t),
                Piece::Any => return None,
                Piece::Star => out.push('*'),
                Piece::Quest => out.push('?'),
                Piece::Class(c) => {
                    out.push('[');
                    out.push_str(c);
                    out.push(']');
                }
            }
        }
        Some(out)
    }
}

/// One string as vouch states it: one of its candidates (never empty).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Value(pub Vec<Cand>);

impl Value {
    pub fn known(text: &str) -> Self {
        Value(vec![Cand::lit(text)])
    }

    pub fn unknown() -> Self {
        Value(vec![Cand(vec![Piece::Any])])
    }

    pub fn one_of(texts: &[&str]) -> Self {
        Value(texts.iter().map(|t| Cand::lit(t)).collect())
    }
}

/// One argument position as vouch states it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Arg {
    /// Exactly one field — except that a pattern candidate stands for the
    /// names it matches (one or more) or, matching nothing, its spelling.
    Field(Value),
    /// Any number of fields whose contents depend on runtime data.
    Fields,
}

/// Whether bash's recorders must have seen a unit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Expect {
    /// An external program bash (or a real wrapper) executes.
    Recorded,
    /// A builtin or a function call: no process.
    Internal,
    /// Run by a program that only records (`sudo`), or by an unknown name:
    /// its absence proves nothing.
    Unverifiable,
}

/// One simple command vouch says would run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unit {
    /// The command's name (the basename bash looks up).
    pub name: Value,
    pub args: Vec<Arg>,
    pub cwd: Value,
    pub expect: Expect,
    /// Units with the same key are shapes of one command that vouch could
    /// not narrow down (`"${A:=}"` with `A` unknown is one field or none):
    /// one of them running verifies them all.
    pub alternatives: String,
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

/// What the comparison needs to know about the case.
pub struct Context {
    /// Every command in the case runs (no dead branch): extra units count.
    pub all_run: bool,
}

/// Compares vouch's units with bash's records.
pub fn compare(units: &[Unit], records: &[Record], ctx: &Context) -> Outcome {
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
            None => findings.push(Finding::Missed(show_record(record))),
        }
    }
    if ctx.all_run {
        let verified: Vec<bool> = units
            .iter()
            .enumerate()
            .map(|(i, unit)| {
                // A unit is verified when some record is its own (the same
                // command may run twice and be reported twice).
                used.get(i).copied().unwrap_or(true)
                    || records.iter().any(|r| explains(unit, r).is_some())
            })
            .collect();
        let shapes_seen: BTreeSet<&str> = units
            .iter()
            .zip(&verified)
            .filter(|(_, v)| **v)
            .map(|(u, _)| u.alternatives.as_str())
            .collect();
        for (unit, verified) in units.iter().zip(&verified) {
            let verified = *verified || shapes_seen.contains(unit.alternatives.as_str());
            if !verified && unit.expect == Expect::Recorded {
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

/// How precisely `value` admits `actual` as one field (a pattern standing
/// for one name, or its own spelling).
fn value_admits(value: &Value, actual: &str) -> Option<Precision> {
    let all_lit = value.0.iter().all(|c| c.as_lit().is_some());
    value
        .0
        .iter()
        .filter_map(|c| match c.as_lit() {
            Some(text) => (text == actual).then_some(if value.0.len() == 1 {
                Precision::Exact
            } else if all_lit {
                Precision::Sets
            } else {
                Precision::Loose
            }),
            None => {
                let spelled = c.is_pattern() && c.spelling().as_deref() == Some(actual);
                (spelled || cand_matches(c, actual)).then_some(Precision::Loose)
            }
        })
        .max()
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
                Some(Arg::Field(value)) => {
                    let one = actual.get(j).and_then(|a| {
                        let p = value_admits(value, a)?;
                        Some(p.min(cell(&best, i + 1, j + 1)?))
                    });
                    // A pattern candidate may also stand for several names.
                    let many = value
                        .0
                        .iter()
                        .filter(|c| c.is_pattern())
                        .filter_map(|c| {
                            (j + 1..=m)
                                .take_while(|&k| {
                                    actual.get(k - 1).is_some_and(|a| cand_matches(c, a))
                                })
                                .filter_map(|k| cell(&best, i + 1, k))
                                .max()
                        })
                        .max()
                        .map(|p| p.min(Precision::Loose));
                    one.max(many)
                }
                Some(Arg::Fields) => (j..=m)
                    .filter_map(|k| cell(&best, i + 1, k))
                    .max()
                    .map(|p| p.min(Precision::Loose)),
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

/// Could bash produce `actual` from candidate `c`? Holes match any text
/// (`/` included); pattern characters follow pathname expansion: `*`, `?`
/// and classes never match `/`, nor a `.` that starts a path component.
pub fn cand_matches(c: &Cand, actual: &str) -> bool {
    let mut toks = Vec::new();
    for p in &c.0 {
        match p {
            Piece::Lit(t) => toks.extend(t.chars().map(Tok::Char)),
            Piece::Any => toks.push(Tok::Any),
            Piece::Star => toks.push(Tok::Star),
            Piece::Quest => toks.push(Tok::Quest),
            Piece::Class(inner) => toks.push(Tok::Class(inner.chars().collect())),
        }
    }
    let s: Vec<char> = actual.chars().collect();
    // A wildcard may take `ch` at `pos`: never `/`, never a leading `.`.
    let wild_ok = |ch: char, pos: usize| {
        ch != '/' && !(ch == '.' && (pos == 0 || s.get(pos - 1) == Some(&'/')))
    };
    // reach[k]: the pattern consumed so far can end at s[..k].
    let mut reach = vec![false; s.len() + 1];
    set(&mut reach, 0);
    for tok in &toks {
        let mut next = vec![false; s.len() + 1];
        for k in 0..=s.len() {
            if !reach.get(k).copied().unwrap_or(false) {
                continue;
            }
            match tok {
                Tok::Char(ch) => {
                    if s.get(k) == Some(ch) {
                        set(&mut next, k + 1);
                    }
                }
                Tok::Any => {
                    for e in k..=s.len() {
                        set(&mut next, e);
                    }
                }
                Tok::Star => {
                    set(&mut next, k);
                    let mut e = k;
                    while s.get(e).is_some_and(|&ch| wild_ok(ch, e)) {
                        e += 1;
                        set(&mut next, e);
                    }
                }
                Tok::Quest => {
                    if s.get(k).is_some_and(|&ch| wild_ok(ch, k)) {
                        set(&mut next, k + 1);
                    }
                }
                Tok::Class(inner) => {
                    if s.get(k)
                        .is_some_and(|&ch| wild_ok(ch, k) && class_contains(inner, ch))
                    {
                        set(&mut next, k + 1);
                    }
                }
            }
        }
        reach = next;
    }
    reach.get(s.len()).copied().unwrap_or(false)
}

/// A glob written the usual way (`src/*`, `[!a]*`), for the self-checks.
pub fn glob_matches(pattern: &str, path: &str) -> bool {
    let mut pieces = Vec::new();
    let mut chars = pattern.chars();
    while let Some(c) = chars.next() {
        match c {
            '*' => pieces.push(Piece::Star),
            '?' => pieces.push(Piece::Quest),
            '[' => {
                let mut inner = String::new();
                let mut closed = false;
                while let Some(d) = chars.next() {
                    if d == ']' && !inner.is_empty() && !inner.ends_with("[:") {
                        closed = true;
                        break;
                    }
                    inner.push(d);
                    if inner.ends_with("[:") {
                        // A character class name runs to its own `:]`.
                        for e in chars.by_ref() {
                            inner.push(e);
                            if inner.ends_with(":]") {
                                break;
                            }
                        }
                    }
                }
                if closed {
                    pieces.push(Piece::Class(inner));
                } else {
                    pieces.push(Piece::Lit(format!("[{inner}")));
                }
            }
            other => pieces.push(Piece::Lit(other.to_string())),
        }
    }
    cand_matches(&Cand(pieces), path)
}

#[derive(Debug)]
enum Tok {
    Char(char),
    Any,
    Star,
    Quest,
    Class(Vec<char>),
}

fn set(v: &mut [bool], k: usize) {
    if let Some(slot) = v.get_mut(k) {
        *slot = true;
    }
}

/// Bracket expression membership: `!`/`^` negates, `a-z` ranges,
/// `[:alpha:]`-style classes for the common names.
fn class_contains(inner: &[char], ch: char) -> bool {
    let (negated, body) = match inner.split_first() {
        Some(('!' | '^', rest)) => (true, rest),
        _ => (false, inner),
    };
    let mut hit = false;
    let mut i = 0;
    while let Some(&c) = body.get(i) {
        if c == '['
            && body.get(i + 1) == Some(&':')
            && let Some(end) = (i + 2..body.len())
                .find(|&e| body.get(e) == Some(&':') && body.get(e + 1) == Some(&']'))
        {
            let name: String = body.get(i + 2..end).unwrap_or(&[]).iter().collect();
            hit |= match name.as_str() {
                "alpha" => ch.is_alphabetic(),
                "digit" => ch.is_ascii_digit(),
                "alnum" => ch.is_alphanumeric(),
                "upper" => ch.is_uppercase(),
                "lower" => ch.is_lowercase(),
                "space" => ch.is_whitespace(),
                _ => false,
            };
            i = end + 2;
            continue;
        }
        if body.get(i + 1) == Some(&'-')
            && let Some(&end) = body.get(i + 2)
        {
            hit |= (c..=end).contains(&ch);
            i += 3;
        } else {
            hit |= c == ch;
            i += 1;
        }
    }
    hit != negated
}

fn note_values(
    index: usize,
    record: &Record,
    seen: &mut BTreeMap<(usize, usize), BTreeSet<String>>,
) {
    // Position 0 is the name, 1 the cwd, 2.. the arguments (which align
    // one to one here: a Sets match has no fields and no patterns).
    let values = [&record.name, &record.cwd]
        .into_iter()
        .chain(record.args.iter());
    for (pos, v) in values.enumerate() {
        seen.entry((index, pos)).or_default().insert(v.clone());
    }
}

/// A candidate set is exact when it is exactly the set of values bash used
/// at that position over every run of the unit.
fn sets_are_tight(units: &[Unit], seen: &BTreeMap<(usize, usize), BTreeSet<String>>) -> bool {
    seen.iter().all(|((i, pos), values)| {
        let Some(unit) = units.get(*i) else {
            return false;
        };
        let stated = match pos {
            0 => Some(&unit.name),
            1 => Some(&unit.cwd),
            p => match unit.args.get(p - 2) {
                Some(Arg::Field(v)) => Some(v),
                Some(Arg::Fields) | None => None,
            },
        };
        let lits: Option<BTreeSet<String>> =
            stated.and_then(|v| v.0.iter().map(Cand::as_lit).collect());
        lits.is_some_and(|set| &set == values)
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
            Arg::Field(v) => out.push_str(&show_value(v)),
            Arg::Fields => out.push_str("<fields>"),
        }
    }
    let note = match unit.expect {
        Expect::Recorded => "",
        Expect::Internal => " [internal]",
        Expect::Unverifiable => " [unverifiable]",
    };
    format!("{out}{note} (cwd {})", show_value(&unit.cwd))
}

fn show_value(value: &Value) -> String {
    let shown: Vec<String> = value.0.iter().map(show_cand).collect();
    match shown.as_slice() {
        [one] => one.clone(),
        many => format!("{{{}}}", many.join("|")),
    }
}

fn show_cand(c: &Cand) -> String {
    match c.as_lit() {
        Some(text) => shell_words(&[text]),
        None => {
            let mut out = String::new();
            for p in &c.0 {
                match p {
                    Piece::Lit(t) => out.push_str(t),
                    Piece::Any => out.push('…'),
                    Piece::Star => out.push('*'),
                    Piece::Quest => out.push('?'),
                    Piece::Class(c) => {
                        out.push('[');
                        out.push_str(c);
                        out.push(']');
                    }
                }
            }
            format!("<{out}>")
        }
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
