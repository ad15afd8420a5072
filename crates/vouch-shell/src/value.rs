//! Values as far as a static reading of a command can know them.
//!
//! Bash decides most of what a command does only when it runs: a variable
//! may come from the environment, a `$(…)` prints whatever it prints, a glob
//! matches whatever files exist. The analysis never guesses those: a string
//! is a [`Text`] of literal pieces and [`Seg::Any`] holes, a value that can
//! take several forms is a [`Value`] listing every candidate, and an argv
//! entry whose very number of fields is unknown is [`Arg::Unknown`]. Policy
//! then asks precise questions ("can this be `/`?", "does every candidate
//! stay below the project?") instead of matching raw text.

use std::fmt;
use std::sync::Arc;

/// Commands whose output a piece of runtime data holds (indices into
/// [`super::Analysis::commands`]), so policy can follow a secret from the
/// command that read it to the one that sends it; and whether the hole
/// stands for candidates the analysis stopped listing (a value past
/// `max_candidates`, see [`Value::add`]), so that wherever such a hole
/// reaches a command the analysis says it is incomplete.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]
pub struct Sources {
    commands: Vec<usize>,
    widened: bool,
}

impl Sources {
    /// No command: environment data, or data of unknown origin.
    pub fn none() -> Self {
        Sources::default()
    }

    pub fn one(index: usize) -> Self {
        Sources {
            commands: vec![index],
            widened: false,
        }
    }

    /// Adds `index`, keeping the set sorted and free of repeats.
    pub fn insert(&mut self, index: usize) {
        if let Err(at) = self.commands.binary_search(&index) {
            self.commands.insert(at, index);
        }
    }

    pub fn extend(&mut self, other: &Sources) {
        for &i in &other.commands {
            self.insert(i);
        }
        self.widened |= other.widened;
    }

    pub fn iter(&self) -> impl Iterator<Item = usize> + '_ {
        self.commands.iter().copied()
    }

    /// True when no command's output is held (widened or not).
    pub fn is_empty(&self) -> bool {
        self.commands.is_empty()
    }

    pub fn contains(&self, index: usize) -> bool {
        self.commands.binary_search(&index).is_ok()
    }

    /// True when the hole replaced candidates past the budget.
    pub fn is_widened(&self) -> bool {
        self.widened
    }
}

/// One piece of a [`Text`].
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Seg {
    /// Literal characters.
    Lit(String),
    /// Characters nobody can know statically (possibly none, possibly `/`).
    Any(Sources),
    /// An unquoted `*` that pathname expansion will act on.
    Star,
    /// An unquoted `?`.
    Quest,
    /// An unquoted bracket expression, the text between `[` and `]`
    /// (`!a-z`, `[:alpha:]x`).
    Class(String),
}

/// A string as far as it is known: literal pieces, unknown holes and, for a
/// pathname pattern, the pattern characters pathname expansion acts on.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]
pub struct Text {
    pub segs: Vec<Seg>,
}

impl Text {
    /// A fully known string.
    pub fn lit(text: &str) -> Self {
        let mut out = Text::default();
        out.push_str(text);
        out
    }

    /// A string nobody can know.
    pub fn any(from: Sources) -> Self {
        Text {
            segs: vec![Seg::Any(from)],
        }
    }

    /// Appends literal text, merging with a preceding literal piece.
    pub fn push_str(&mut self, text: &str) {
        if text.is_empty() {
            return;
        }
        if let Some(Seg::Lit(last)) = self.segs.last_mut() {
            last.push_str(text);
        } else {
            self.segs.push(Seg::Lit(text.to_owned()));
        }
    }

    pub fn push_char(&mut self, c: char) {
        if let Some(Seg::Lit(last)) = self.segs.last_mut() {
            last.push(c);
        } else {
            self.segs.push(Seg::Lit(c.to_string()));
        }
    }

    /// Appends one piece; neighbouring literals merge and neighbouring
    /// unknowns become one unknown.
    pub fn push(&mut self, seg: Seg) {
        match (self.segs.last_mut(), seg) {
            (_, Seg::Lit(text)) => self.push_str(&text),
            (Some(Seg::Any(mine)), Seg::Any(theirs)) => mine.extend(&theirs),
            (_, other) => self.segs.push(other),
        }
    }

    pub fn append(&mut self, other: &Text) {
        for seg in &other.segs {
            self.push(seg.clone());
        }
    }

    /// The string, when every character is known and none is a pattern.
    pub fn as_known(&self) -> Option<&str> {
        match self.segs.as_slice() {
            [] => Some(""),
            [Seg::Lit(text)] => Some(text),
            _ => None,
        }
    }

    /// True when some hole of the text replaced candidates past the budget.
    pub fn is_widened(&self) -> bool {
        self.segs
            .iter()
            .any(|s| matches!(s, Seg::Any(from) if from.is_widened()))
    }

    /// True when the text is one hole that replaced candidates past the budget.
    fn is_widened_hole(&self) -> bool {
        matches!(self.segs.as_slice(), [Seg::Any(from)] if from.is_widened())
    }

    /// True when the text holds an unknown hole.
    pub fn has_any(&self) -> bool {
        self.segs.iter().any(|s| matches!(s, Seg::Any(_)))
    }

    /// True when pathname expansion will treat the text as a pattern.
    pub fn is_pattern(&self) -> bool {
        self.segs
            .iter()
            .any(|s| matches!(s, Seg::Star | Seg::Quest | Seg::Class(_)))
    }

    pub fn is_empty(&self) -> bool {
        self.segs.is_empty()
    }

    /// What a copy of the text holds, for `max_expansion_bytes`: its literal
    /// and bracket bytes, one for each hole or pattern character.
    pub fn bytes(&self) -> u64 {
        self.segs
            .iter()
            .map(|seg| match seg {
                Seg::Lit(text) | Seg::Class(text) => u64::try_from(text.len()).unwrap_or(u64::MAX),
                Seg::Any(_) | Seg::Star | Seg::Quest => 1,
            })
            .fold(0, u64::saturating_add)
    }

    /// The literal text before the first hole or pattern character.
    pub fn known_prefix(&self) -> &str {
        match self.segs.first() {
            Some(Seg::Lit(text)) => text,
            _ => "",
        }
    }

    /// The literal text after the last hole or pattern character (the whole
    /// text when it is known).
    pub fn known_suffix(&self) -> &str {
        match self.segs.last() {
            Some(Seg::Lit(text)) => text,
            _ => "",
        }
    }

    /// Commands whose output this text holds.
    pub fn sources(&self) -> Sources {
        let mut out = Sources::none();
        for seg in &self.segs {
            if let Seg::Any(from) = seg {
                out.extend(from);
            }
        }
        out
    }

    /// The text as a bash pattern string: literal pattern characters
    /// escaped, pattern pieces as written, holes as `*`. Used to show
    /// patterns and to match them.
    pub fn pattern_source(&self) -> String {
        let mut out = String::new();
        for seg in &self.segs {
            match seg {
                Seg::Lit(text) => {
                    for c in text.chars() {
                        if matches!(c, '*' | '?' | '[' | ']' | '\\') {
                            out.push('\\');
                        }
                        out.push(c);
                    }
                }
                Seg::Any(_) | Seg::Star => out.push('*'),
                Seg::Quest => out.push('?'),
                Seg::Class(inner) => {
                    out.push('[');
                    out.push_str(inner);
                    out.push(']');
                }
            }
        }
        out
    }

    /// The text bash keeps for a pattern that matches no file: its
    /// characters as written (holes have no single spelling: `None`).
    pub fn unmatched_spelling(&self) -> Option<String> {
        let mut out = String::new();
        for seg in &self.segs {
            match seg {
                Seg::Lit(text) => out.push_str(text),
                Seg::Any(_) => return None,
                Seg::Star => out.push('*'),
                Seg::Quest => out.push('?'),
                Seg::Class(inner) => {
                    out.push('[');
                    out.push_str(inner);
                    out.push(']');
                }
            }
        }
        Some(out)
    }
}

impl fmt::Display for Text {
    /// Bash-like spelling for rationales: holes as `…`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for seg in &self.segs {
            match seg {
                Seg::Lit(text) => f.write_str(text)?,
                Seg::Any(_) => f.write_str("…")?,
                Seg::Star => f.write_str("*")?,
                Seg::Quest => f.write_str("?")?,
                Seg::Class(inner) => write!(f, "[{inner}]")?,
            }
        }
        Ok(())
    }
}

/// One string that can take one of several forms: every candidate bash may
/// produce (a single candidate is the common case). Never empty.
///
/// The candidates are shared: every command record, every branch of the
/// control flow and every state holds its values, so a copy must not copy
/// the strings (a 64-candidate working directory copied per command made
/// `cd a || cd b; ` × 4000 take seconds).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Value {
    candidates: Arc<Vec<Text>>,
}

impl Value {
    pub fn known(text: &str) -> Self {
        Value::text(Text::lit(text))
    }

    pub fn text(text: Text) -> Self {
        Value {
            candidates: Arc::new(vec![text]),
        }
    }

    pub fn unknown() -> Self {
        Value::text(Text::any(Sources::none()))
    }

    /// A value from candidates; `None` when there are none.
    pub fn from_candidates(candidates: Vec<Text>) -> Option<Self> {
        let mut out: Option<Value> = None;
        for c in candidates {
            match &mut out {
                None => out = Some(Value::text(c)),
                Some(v) => v.add(c),
            }
        }
        out
    }

    /// Adds a candidate unless it is already listed. Past
    /// `max_candidates` the value is not listed any more: it becomes one
    /// widened hole (any string) carrying every candidate's sources, and
    /// stays that hole whatever joins it, so joins of branches (`cd a || cd
    /// b; …` repeated) stay bounded instead of doubling at every join. The
    /// widest reading loses candidates (`/` among them, perhaps), so the
    /// analysis of a command that uses it is incomplete (see
    /// [`Self::is_widened`]): it goes to the reviewer, never passes.
    pub fn add(&mut self, candidate: Text) {
        if self.candidates.contains(&candidate) {
            return;
        }
        let full = u64::try_from(self.candidates.len())
            .map_or(true, |n| n >= super::budget::Limits::DEFAULT.max_candidates);
        if full || self.is_widened() || candidate.is_widened_hole() {
            let mut from = self.sources();
            from.extend(&candidate.sources());
            from.widened = true;
            self.candidates = Arc::new(vec![Text::any(from)]);
            return;
        }
        Arc::make_mut(&mut self.candidates).push(candidate);
    }

    /// Every candidate of `other` becomes one of this value's.
    pub fn merge(&mut self, other: &Value) {
        if Arc::ptr_eq(&self.candidates, &other.candidates) {
            return;
        }
        for c in other.candidates.iter() {
            self.add(c.clone());
        }
    }

    /// True when the value is the one hole that replaced candidates past
    /// `max_candidates` ([`Self::add`]).
    pub fn is_widened(&self) -> bool {
        matches!(self.candidates.as_slice(), [only] if only.is_widened_hole())
    }

    pub fn candidates(&self) -> &[Text] {
        &self.candidates
    }

    pub fn into_candidates(self) -> Vec<Text> {
        Arc::try_unwrap(self.candidates).unwrap_or_else(|shared| (*shared).clone())
    }

    /// The string when there is one candidate and it is fully known.
    pub fn as_known(&self) -> Option<&str> {
        match self.candidates.as_slice() {
            [only] => only.as_known(),
            _ => None,
        }
    }

    /// True when some candidate holds a hole.
    /// Whether a candidate is a pattern: unquoted in a word it stands for
    /// the names it matches, any number of fields.
    pub fn has_pattern(&self) -> bool {
        self.candidates().iter().any(Text::is_pattern)
    }

    pub fn has_any(&self) -> bool {
        self.candidates.iter().any(Text::has_any)
    }

    pub fn may_be(&self, actual: &str) -> bool {
        self.candidates.iter().any(|c| c.may_be(actual))
    }

    /// Commands whose output any candidate holds.
    pub fn sources(&self) -> Sources {
        let mut out = Sources::none();
        for c in self.candidates.iter() {
            out.extend(&c.sources());
        }
        out
    }
}

impl fmt::Display for Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.candidates.as_slice() {
            [only] => write!(f, "{only}"),
            many => {
                f.write_str("{")?;
                for (k, c) in many.iter().enumerate() {
                    if k > 0 {
                        f.write_str(" | ")?;
                    }
                    write!(f, "{c}")?;
                }
                f.write_str("}")
            }
        }
    }
}

/// One entry of an argv as bash builds it after every expansion.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Arg {
    /// Exactly one field whose value is one of the candidates; a pattern
    /// candidate (see [`Text::is_pattern`]) stands for the names it matches
    /// (any number of fields) or, when nothing matches, its own spelling.
    Field(Value),
    /// Zero or more fields whose number and contents depend on runtime data
    /// (an unquoted expansion of an unknown variable, an unquoted `$(…)`).
    Unknown(Sources),
}

impl Arg {
    pub fn known(text: &str) -> Self {
        Arg::Field(Value::known(text))
    }

    /// The string when the entry is one fully known field.
    pub fn as_known(&self) -> Option<&str> {
        match self {
            Arg::Field(v) => v.as_known(),
            Arg::Unknown(_) => None,
        }
    }

    /// The candidates of a one-field entry; none for [`Arg::Unknown`].
    pub fn candidates(&self) -> &[Text] {
        match self {
            Arg::Field(v) => v.candidates(),
            Arg::Unknown(_) => &[],
        }
    }

    /// True when some part of the entry depends on runtime data.
    pub fn has_unknown(&self) -> bool {
        match self {
            Arg::Field(v) => v.has_any(),
            Arg::Unknown(_) => true,
        }
    }

    pub fn sources(&self) -> Sources {
        match self {
            Arg::Field(v) => v.sources(),
            Arg::Unknown(from) => from.clone(),
        }
    }
}

impl fmt::Display for Arg {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Arg::Field(v) => write!(f, "{v}"),
            Arg::Unknown(_) => f.write_str("…"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::budget::Limits;
    use super::*;
    use crate::glob::argv_may_be;

    fn pattern(parts: &[Seg]) -> Text {
        let mut t = Text::default();
        for p in parts {
            t.push(p.clone());
        }
        t
    }

    #[test]
    fn a_value_past_its_candidate_budget_becomes_a_hole() {
        // Joins of branches (`cd a || cd b; …`) must not grow a value without
        // bound: past the budget it reads as any string, the widest reading.
        let mut v = Value::known("/srv/0");
        for n in 1..1000 {
            v.add(Text::lit(&format!("/srv/{n}")));
        }
        let limit = usize::try_from(Limits::DEFAULT.max_candidates).unwrap();
        assert!(v.candidates().len() <= limit);
        assert!(v.has_any());
        assert!(v.may_be("/"));
    }

    #[test]
    fn text_pieces_merge() {
        let mut t = Text::lit("a");
        t.push_str("b");
        t.push(Seg::Any(Sources::one(1)));
        t.push(Seg::Any(Sources::one(2)));
        t.push_char('c');
        assert_eq!(t.segs.len(), 3);
        assert_eq!(t.known_prefix(), "ab");
        assert_eq!(t.known_suffix(), "c");
        assert_eq!(t.sources(), {
            let mut s = Sources::one(2);
            s.insert(1);
            s
        });
        assert_eq!(t.to_string(), "ab…c");
    }

    #[test]
    fn holes_match_anything_literals_match_exactly() {
        let mut t = Text::lit("/home/");
        t.push(Seg::Any(Sources::none()));
        t.push_str("/x");
        assert!(t.may_be("/home/dev/x"));
        assert!(t.may_be("/home//x"));
        assert!(!t.may_be("/home/dev/y"));
        assert!(Text::lit("a").may_be("a"));
        assert!(!Text::lit("a").may_be("ab"));
    }

    #[test]
    fn patterns_stand_for_matches_or_their_spelling() {
        let star = pattern(&[Seg::Lit("/tmp/".into()), Seg::Star]);
        assert!(star.may_be("/tmp/x"));
        assert!(star.may_be("/tmp/*"));
        assert!(!star.may_be("/tmp/.hidden"));
        assert!(!star.may_be("/tmp/a/b"));
    }

    #[test]
    fn argv_alignment_with_unknown_and_globs() {
        let argv = vec![
            Arg::known("rm"),
            Arg::Unknown(Sources::none()),
            Arg::known("/"),
        ];
        assert!(argv_may_be(&argv, &["rm", "/"]));
        assert!(argv_may_be(&argv, &["rm", "-r", "-f", "/"]));
        assert!(!argv_may_be(&argv, &["rm", "-rf"]));
        let glob = vec![
            Arg::known("ls"),
            Arg::Field(Value::text(pattern(&[Seg::Star, Seg::Lit(".rs".into())]))),
        ];
        assert!(argv_may_be(&glob, &["ls", "a.rs", "b.rs"]));
        assert!(argv_may_be(&glob, &["ls", "*.rs"]));
        assert!(!argv_may_be(&glob, &["ls", "a.rs", "b.md"]));
        assert!(!argv_may_be(&glob, &["ls"]));
    }
}
