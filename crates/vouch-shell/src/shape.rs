//! How a command line is written, for callers that care about its text
//! rather than what it runs: the audit's command templates (design §8)
//! describe commands the way a harness's prefix rule matches them, so they
//! need "one simple command, these words as written", and a name for every
//! other shape.
//!
//! [`super::analyze`] answers what bash runs; a prefix rule written for
//! `make` never matches `(make)`, `{ make; }` or `FOO=1 make` although all
//! of them run `make`, so this reads the syntax tree, not the analysis.

use super::ast::{ArgAst, Part, Stmt, WordAst};
use super::budget::{Limits, Meter};
use super::syntax;

/// The shape of a command line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Shape {
    /// Nothing runs (blank, or comments only).
    Empty,
    /// A syntax error, or a parse budget ran out.
    Unparsed,
    /// One simple command with no assignment or redirection: each word's
    /// text after quote removal, or `None` where bash would expand it
    /// (parameters, substitutions, arithmetic, an unquoted glob character,
    /// a leading `~`, an assignment-shaped argument of a declaration
    /// builtin).
    Simple(Vec<Option<String>>),
    /// A pipeline, or a list that contains one.
    Pipeline,
    /// Assignments, before a command or alone.
    EnvPrefix,
    /// Redirections or a here-document on the command.
    Redirection,
    /// Anything else: lists, `&`, `!`, subshells, groups, control flow,
    /// function definitions, tests.
    Compound,
}

/// The shape of `command`, parsed within `limits`.
pub fn shape_of(command: &str, limits: &Limits) -> Shape {
    let mut meter = Meter::new(*limits);
    let parsed = syntax::parse(command, &mut meter);
    if !parsed.errors.is_empty() || meter.is_incomplete() {
        return Shape::Unparsed;
    }
    match &parsed.stmt {
        Stmt::Empty => Shape::Empty,
        Stmt::Simple(simple) if !simple.assigns.is_empty() => Shape::EnvPrefix,
        Stmt::Simple(simple) if !simple.redirects.is_empty() => Shape::Redirection,
        Stmt::Simple(simple) if simple.words.is_empty() => Shape::Empty,
        // `export K=v`, `local x=1`: a declaration builtin assigns.
        Stmt::Simple(simple) if simple.words.iter().any(|w| matches!(w, ArgAst::Assign(_))) => {
            Shape::EnvPrefix
        }
        // `echo $(whoami)` runs a second command.
        Stmt::Simple(simple) if simple.words.iter().any(substitutes) => Shape::Compound,
        Stmt::Simple(simple) => Shape::Simple(simple.words.iter().map(written).collect()),
        Stmt::Redirected(..) => Shape::Redirection,
        other if has_pipeline(other) => Shape::Pipeline,
        _ => Shape::Compound,
    }
}

/// Whether a word runs a command or process substitution.
fn substitutes(arg: &ArgAst) -> bool {
    let ArgAst::Word(word) = arg else {
        return false;
    };
    word.parts.iter().any(|part| match part {
        Part::Cmd { .. } | Part::Proc { .. } => true,
        Part::Arith { substs, .. } => !substs.is_empty(),
        Part::Param { .. } | Part::Lit(_) | Part::Quoted(_) => false,
    })
}

/// A word's text as written, when bash would not expand it.
fn written(arg: &ArgAst) -> Option<String> {
    match arg {
        ArgAst::Word(word) => literal_unexpanded(word),
        ArgAst::Assign(_) => None,
    }
}

fn literal_unexpanded(word: &WordAst) -> Option<String> {
    let mut out = String::new();
    for (k, part) in word.parts.iter().enumerate() {
        match part {
            Part::Lit(text) => {
                if text.contains(['*', '?', '[']) || (k == 0 && text.starts_with('~')) {
                    return None;
                }
                out.push_str(text);
            }
            Part::Quoted(text) => out.push_str(text),
            Part::Param { .. } | Part::Cmd { .. } | Part::Arith { .. } | Part::Proc { .. } => {
                return None;
            }
        }
    }
    Some(out)
}

/// Whether a list (`a | b; c`) holds a pipeline at its top level.
fn has_pipeline(stmt: &Stmt) -> bool {
    match stmt {
        Stmt::Pipeline(_) => true,
        Stmt::And(a, b) | Stmt::Or(a, b) => has_pipeline(a) || has_pipeline(b),
        Stmt::Seq(stmts) => stmts.iter().any(has_pipeline),
        Stmt::Background(inner) | Stmt::Not(inner) => has_pipeline(inner),
        Stmt::Empty
        | Stmt::Simple(_)
        | Stmt::Subshell(_)
        | Stmt::Group(_)
        | Stmt::Redirected(..)
        | Stmt::If { .. }
        | Stmt::While { .. }
        | Stmt::For { .. }
        | Stmt::ArithFor { .. }
        | Stmt::Case { .. }
        | Stmt::Function { .. }
        | Stmt::Arith(_)
        | Stmt::Test { .. } => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(command: &str) -> Shape {
        shape_of(command, &Limits::DEFAULT)
    }

    fn words(list: &[Option<&str>]) -> Shape {
        Shape::Simple(list.iter().map(|w| w.map(str::to_owned)).collect())
    }

    #[test]
    fn one_simple_command_keeps_its_written_words() {
        assert_eq!(
            s("git commit -m 'a b' # note"),
            words(&[Some("git"), Some("commit"), Some("-m"), Some("a b")])
        );
        assert_eq!(
            s("echo $HOME ~/x *.rs \"${A:-x}\" {a,b}"),
            words(&[Some("echo"), None, None, None, None, Some("{a,b}")])
        );
    }

    #[test]
    fn other_shapes_are_named() {
        assert_eq!(s("   "), Shape::Empty);
        assert_eq!(s("# only a comment"), Shape::Empty);
        assert_eq!(s("echo 'open"), Shape::Unparsed);
        assert_eq!(s("FOO=1 make"), Shape::EnvPrefix);
        assert_eq!(s("X=1"), Shape::EnvPrefix);
        assert_eq!(s("export K=v"), Shape::EnvPrefix);
        assert_eq!(s("echo $(whoami)"), Shape::Compound);
        assert_eq!(s("cat <(ls)"), Shape::Compound);
        assert_eq!(s("make > log 2>&1"), Shape::Redirection);
        assert_eq!(s("cat <<EOF\nhi\nEOF"), Shape::Redirection);
        assert_eq!(s("{ make; } > log"), Shape::Redirection);
        assert_eq!(s("cat a | grep b"), Shape::Pipeline);
        assert_eq!(s("cat a | grep b; ls"), Shape::Pipeline);
        for compound in [
            "make && make install",
            "(make)",
            "{ make; }",
            "make &",
            "! make",
        ] {
            assert_eq!(s(compound), Shape::Compound, "{compound}");
        }
    }
}
