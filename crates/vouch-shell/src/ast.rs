//! The syntax of one script, owned: statements as bash groups them and
//! words as bash's lexer sees them (quoting kept, nothing expanded yet).
//!
//! The tree-sitter tree is converted once ([`super::syntax`]) so that the
//! interpreter can keep function bodies after their tree is gone (a
//! function defined inside `eval` is called later) and so that every word
//! is lexed by our own rules, which follow bash's, rather than by the
//! grammar's approximations.

use std::rc::Rc;

use super::command::RedirectOp;

/// One statement.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Stmt {
    /// Runs nothing (an empty script, a comment).
    Empty,
    Simple(Simple),
    /// `a | b | c`; stages run in subshells.
    Pipeline(Vec<Stmt>),
    /// `! a`
    Not(Box<Stmt>),
    And(Box<Stmt>, Box<Stmt>),
    Or(Box<Stmt>, Box<Stmt>),
    /// Statements run one after another.
    Seq(Vec<Stmt>),
    /// `a &`
    Background(Box<Stmt>),
    /// `( … )`
    Subshell(Box<Stmt>),
    /// `{ …; }`
    Group(Box<Stmt>),
    /// Redirections on a compound statement (`{ …; } > f`, `while …; done < f`).
    Redirected(Box<Stmt>, Vec<Redir>),
    If {
        /// `if`/`elif` conditions with their bodies, in order.
        branches: Vec<(Stmt, Stmt)>,
        otherwise: Option<Box<Stmt>>,
    },
    /// `while`/`until` loops.
    While {
        cond: Box<Stmt>,
        body: Box<Stmt>,
        until: bool,
    },
    /// `for v in words` (`items: None`: `for v` over `"$@"`); `select` too.
    For {
        var: String,
        items: Option<Vec<WordAst>>,
        body: Box<Stmt>,
    },
    /// `for ((init; cond; update))`.
    ArithFor {
        init: String,
        cond: String,
        update: String,
        body: Box<Stmt>,
    },
    Case {
        word: WordAst,
        arms: Vec<CaseArm>,
    },
    Function {
        name: String,
        body: Rc<Stmt>,
    },
    /// `(( expr ))`.
    Arith(String),
    /// `[[ … ]]` or `[ … ]` parsed as a test: its words (for the
    /// substitutions they run).
    Test {
        words: Vec<WordAst>,
    },
}

/// `;;`, `;&` or `;;&` after a case arm.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ArmEnd {
    Break,
    FallThrough,
    TestNext,
}

#[derive(Debug, Clone, PartialEq)]
pub(crate) struct CaseArm {
    pub patterns: Vec<WordAst>,
    pub body: Stmt,
    pub end: ArmEnd,
}

/// A simple command: assignments, words and redirections, in source order
/// within each list.
#[derive(Debug, Clone, PartialEq, Default)]
pub(crate) struct Simple {
    pub assigns: Vec<Assign>,
    pub words: Vec<ArgAst>,
    pub redirects: Vec<Redir>,
}

/// A word of a simple command; declaration builtins (`export`, `local`,
/// `declare`, …) take assignment words, which are expanded like
/// assignments (no splitting, no globbing).
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum ArgAst {
    Word(WordAst),
    Assign(Assign),
}

/// `NAME=value`, `NAME+=value`, `NAME[i]=value`, `NAME=(a b)`.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Assign {
    pub name: String,
    pub index: Option<WordAst>,
    pub append: bool,
    pub value: AssignValue,
}

#[derive(Debug, Clone, PartialEq)]
pub(crate) enum AssignValue {
    Scalar(WordAst),
    /// `(a b [k]=c)`: element words (an explicit `[k]=` index is kept in
    /// the word; the interpreter treats such arrays as unknown-keyed).
    Array(Vec<WordAst>),
}

#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Redir {
    /// The descriptor written before the operator (`2>`), if any.
    pub fd: Option<u32>,
    pub op: RedirectOp,
    pub target: RedirTarget,
}

#[derive(Debug, Clone, PartialEq)]
pub(crate) enum RedirTarget {
    /// A file name, a here-string, or the descriptor of `>&N`.
    Word(WordAst),
    /// A here-document body, expanded unless its delimiter was quoted.
    HereDoc { body: WordAst },
}

/// A word before expansion.
#[derive(Debug, Clone, PartialEq, Default)]
pub(crate) struct WordAst {
    pub parts: Vec<Part>,
}

impl WordAst {
    pub(crate) fn literal(text: &str, quoted: bool) -> Self {
        let part = if quoted {
            Part::Quoted(text.to_owned())
        } else {
            Part::Lit(text.to_owned())
        };
        WordAst { parts: vec![part] }
    }

    /// The text when the word is literal (quoted or not, no expansion).
    pub(crate) fn as_literal(&self) -> Option<String> {
        let mut out = String::new();
        for part in &self.parts {
            match part {
                Part::Lit(t) | Part::Quoted(t) => out.push_str(t),
                Part::Param { .. } | Part::Cmd { .. } | Part::Arith { .. } | Part::Proc { .. } => {
                    return None;
                }
            }
        }
        Some(out)
    }
}

/// One part of a word.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Part {
    /// Unquoted literal text: brace, tilde and pathname expansion apply.
    Lit(String),
    /// Quoted text after quote removal (single or double quotes, `$'…'`,
    /// a backslash-escaped character).
    Quoted(String),
    Param {
        exp: Box<ParamExp>,
        quoted: bool,
    },
    /// `$(…)` or backticks.
    Cmd {
        body: Rc<Stmt>,
        quoted: bool,
    },
    /// `$((…))`: the expression text, and the substitutions inside it
    /// (by byte range of the expression).
    Arith {
        expr: String,
        substs: Vec<Subst>,
        quoted: bool,
    },
    /// `<(…)` (`output: false`) or `>(…)`.
    Proc {
        body: Rc<Stmt>,
        output: bool,
    },
}

/// The parameter an expansion names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum ParamName {
    Var(String),
    /// `$1`, `${10}`.
    Positional(u32),
    /// `$@ $* $# $? $- $$ $! $0 $_`.
    Special(char),
}

/// `[@]`, `[*]` or `[expr]` after a name.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Index {
    At,
    Star,
    Expr(WordAst),
}

/// A parameter expansion, `$x` or `${…}` with its operator.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct ParamExp {
    pub name: ParamName,
    pub index: Option<Index>,
    /// `${!x}`: the value names the variable to expand.
    pub indirect: bool,
    /// `${#x}`: the length.
    pub length: bool,
    pub op: ParamOp,
}

/// What a `${…}` does with the value.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum ParamOp {
    None,
    /// `:-` / `-`
    Default {
        colon: bool,
        word: WordAst,
    },
    /// `:=` / `=`
    Assign {
        colon: bool,
        word: WordAst,
    },
    /// `:?` / `?`
    Error {
        colon: bool,
        word: WordAst,
    },
    /// `:+` / `+`
    Alt {
        colon: bool,
        word: WordAst,
    },
    /// `#` / `##`
    RemovePrefix {
        longest: bool,
        pattern: WordAst,
    },
    /// `%` / `%%`
    RemoveSuffix {
        longest: bool,
        pattern: WordAst,
    },
    /// `/`, `//`, `/#`, `/%`
    Replace {
        all: bool,
        anchor: Option<Anchor>,
        pattern: WordAst,
        with: WordAst,
    },
    /// `:offset` / `:offset:length` (arithmetic texts).
    Substring {
        offset: String,
        length: Option<String>,
    },
    /// `^ ^^ , ,, ~ ~~`
    Case {
        mode: CaseMode,
        all: bool,
        pattern: WordAst,
    },
    /// `@Q @E @P @A @a @U @u @L @K @k`
    Transform(char),
    /// `${!prefix*}` / `${!prefix@}`: variable names.
    Names,
    /// `${!array[@]}`: the keys.
    Keys,
    /// Syntax bash rejects at run time (`bad substitution`).
    Bad,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Anchor {
    Start,
    End,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum CaseMode {
    Upper,
    Lower,
    Toggle,
}

/// A command or process substitution the grammar found, by byte range of
/// the whole script (of the expression, inside `$((…))`).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Subst {
    pub start: usize,
    pub end: usize,
    pub body: Rc<Stmt>,
    pub kind: SubstKind,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum SubstKind {
    /// `$(…)` or backticks.
    Command,
    /// `<(…)`
    ProcIn,
    /// `>(…)`
    ProcOut,
}
