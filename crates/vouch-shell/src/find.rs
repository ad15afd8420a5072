//! `find`'s expression: which actions (`-exec`, `-delete`, …) a path can
//! reach, given what each test says about it.
//!
//! find evaluates its expression left to right with short-circuit `-a`
//! (implicit) and `-o`, `!`, parentheses and `,`. The tests narrow what an
//! action runs on: in `find ~ -name node_modules -prune -exec rm -rf {} +`
//! the starting point `~` reaches `-exec` only if its name is
//! `node_modules`. The caller says what each test gives for the path in
//! question ([`Truth`]); whatever cannot be read (an unknown word, an
//! expression nested deeper than [`MAX_DEPTH`], a parse error) reaches
//! every action.

use crate::glob;
use crate::value::Arg;

/// What a test gives for one path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Truth {
    True,
    False,
    Maybe,
}

/// Tests and options that take one argument (the inert stage reads the
/// same list to step over their values).
pub const ONE_ARG: &[&str] = &[
    "-name",
    "-iname",
    "-path",
    "-ipath",
    "-wholename",
    "-iwholename",
    "-regex",
    "-iregex",
    "-lname",
    "-ilname",
    "-newer",
    "-anewer",
    "-cnewer",
    "-newermt",
    "-mtime",
    "-atime",
    "-ctime",
    "-mmin",
    "-amin",
    "-cmin",
    "-size",
    "-user",
    "-group",
    "-uid",
    "-gid",
    "-perm",
    "-inum",
    "-samefile",
    "-links",
    "-used",
    "-fstype",
    "-context",
    "-type",
    "-xtype",
    "-maxdepth",
    "-mindepth",
    "-printf",
    "-fprint",
    "-fprint0",
    "-fls",
    "-regextype",
    "-files0-from",
];

/// Primaries and operators that only select paths or print their names and
/// metadata: no action that runs (`-exec`, `-ok`), deletes (`-delete`) or
/// writes a file (`-fprint*`, `-fls`), and no `-files0-from`. The inert
/// stage lists names with `find` only when every word of its expression is
/// one of these (or the value of one in [`ONE_ARG`]).
pub const LISTING: &[&str] = &[
    "-name",
    "-iname",
    "-path",
    "-ipath",
    "-wholename",
    "-iwholename",
    "-regex",
    "-iregex",
    "-type",
    "-xtype",
    "-maxdepth",
    "-mindepth",
    "-mtime",
    "-mmin",
    "-atime",
    "-amin",
    "-ctime",
    "-cmin",
    "-newer",
    "-size",
    "-empty",
    "-perm",
    "-user",
    "-group",
    "-uid",
    "-gid",
    "-links",
    "-inum",
    "-samefile",
    "-readable",
    "-writable",
    "-executable",
    "-print",
    "-print0",
    "-printf",
    "-ls",
    "-prune",
    "-quit",
    "-not",
    "-a",
    "-and",
    "-o",
    "-or",
    "!",
    "(",
    ")",
    ",",
    "-true",
    "-false",
    "-depth",
    "-follow",
    "-mount",
    "-xdev",
    "-noleaf",
    "-regextype",
    "-nouser",
    "-nogroup",
    "-lname",
    "-ilname",
    "-daystart",
    "-newermt",
    "-anewer",
    "-cnewer",
    "-used",
    "-fstype",
    "-warn",
    "-nowarn",
    "-ignore_readdir_race",
];

/// Actions that run a command on the path, up to `;` (or `{} +`).
const EXEC: &[&str] = &["-exec", "-execdir", "-ok", "-okdir"];

/// Deeper nesting than this is not read: every action counts as reached.
pub const MAX_DEPTH: usize = 64;

enum Node {
    /// A test or option: its name and its arguments (`None` where unknown).
    Test(String, Vec<Option<String>>),
    /// An action, by the index of its word in the expression.
    Action(usize),
    Not(Box<Node>),
    // Chains are lists, not nested pairs: `-name a -name b …` thousands
    // long must not make a tree as deep as it is long (evaluating and
    // dropping it would recurse once per term).
    And(Vec<Node>),
    Or(Vec<Node>),
    Comma(Vec<Node>),
}

struct Parser<'a> {
    words: Vec<Option<&'a str>>,
    at: usize,
}

impl<'a> Parser<'a> {
    fn peek(&self) -> Option<Option<&'a str>> {
        self.words.get(self.at).copied()
    }

    fn comma(&mut self, depth: usize) -> Option<Node> {
        let first = self.or(depth)?;
        let mut terms = Vec::new();
        while self.peek() == Some(Some(",")) {
            self.at += 1;
            terms.push(self.or(depth)?);
        }
        Some(chain(first, terms, Node::Comma))
    }

    fn or(&mut self, depth: usize) -> Option<Node> {
        let first = self.and(depth)?;
        let mut terms = Vec::new();
        while matches!(self.peek(), Some(Some("-o" | "-or"))) {
            self.at += 1;
            terms.push(self.and(depth)?);
        }
        Some(chain(first, terms, Node::Or))
    }

    fn and(&mut self, depth: usize) -> Option<Node> {
        let first = self.unary(depth)?;
        let mut terms = Vec::new();
        loop {
            match self.peek() {
                None | Some(Some("-o" | "-or" | "," | ")")) => {
                    return Some(chain(first, terms, Node::And));
                }
                Some(Some("-a" | "-and")) => self.at += 1,
                Some(_) => {}
            }
            terms.push(self.unary(depth)?);
        }
    }

    fn unary(&mut self, depth: usize) -> Option<Node> {
        if depth > MAX_DEPTH {
            return None;
        }
        let word = self.peek()?;
        match word {
            Some("!" | "-not") => {
                self.at += 1;
                Some(Node::Not(Box::new(self.unary(depth + 1)?)))
            }
            Some("(") => {
                self.at += 1;
                let inner = self.comma(depth + 1)?;
                (self.peek() == Some(Some(")"))).then_some(())?;
                self.at += 1;
                Some(inner)
            }
            Some(w) if EXEC.contains(&w) => {
                let at = self.at;
                self.at += 1;
                let mut last: Option<&'a str> = None;
                loop {
                    let next = self.peek()?;
                    self.at += 1;
                    match next {
                        Some(";") => break,
                        Some("+") if last == Some("{}") => break,
                        other => last = other,
                    }
                }
                Some(Node::Action(at))
            }
            Some("-delete") => {
                self.at += 1;
                Some(Node::Action(self.at - 1))
            }
            Some(w) => {
                self.at += 1;
                let takes = if ONE_ARG.contains(&w) || (w.starts_with("-newer") && w.len() > 6) {
                    1
                } else if w == "-fprintf" {
                    2
                } else {
                    0
                };
                let mut args = Vec::new();
                for _ in 0..takes {
                    args.push(self.peek()?.map(str::to_owned));
                    self.at += 1;
                }
                Some(Node::Test(w.to_owned(), args))
            }
            // An unknown word where an operator, test or action stands may
            // be any of them.
            None => None,
        }
    }
}

/// `first` alone, or `first` and `rest` joined by `join`.
fn chain(first: Node, rest: Vec<Node>, join: fn(Vec<Node>) -> Node) -> Node {
    if rest.is_empty() {
        return first;
    }
    let mut terms = Vec::with_capacity(rest.len() + 1);
    terms.push(first);
    terms.extend(rest);
    join(terms)
}

/// Evaluates `node` for a path that arrives when `entry` is possible;
/// returns (can be true, can be false) and marks the actions reached.
fn eval(
    node: &Node,
    entry: bool,
    test: &dyn Fn(&str, &[Option<String>]) -> Truth,
    reached: &mut Vec<usize>,
) -> (bool, bool) {
    if !entry {
        return (false, false);
    }
    match node {
        Node::Test(name, args) => match test(name, args) {
            Truth::True => (true, false),
            Truth::False => (false, true),
            Truth::Maybe => (true, true),
        },
        Node::Action(at) => {
            reached.push(*at);
            (true, true)
        }
        Node::Not(inner) => {
            let (t, f) = eval(inner, entry, test, reached);
            (f, t)
        }
        // Each term is reached by the paths the one before let through.
        Node::And(terms) => {
            let (mut through, mut failed) = (entry, false);
            for term in terms {
                let (t, f) = eval(term, through, test, reached);
                through = t;
                failed |= f;
            }
            (through, failed)
        }
        Node::Or(terms) => {
            let (mut matched, mut through) = (false, entry);
            for term in terms {
                let (t, f) = eval(term, through, test, reached);
                matched |= t;
                through = f;
            }
            (matched, through)
        }
        Node::Comma(terms) => {
            let mut last = (false, false);
            for term in terms {
                last = eval(term, entry, test, reached);
            }
            last
        }
    }
}

/// The actions of `expression` (the words after find's starting points)
/// that a path may reach, by their index in `expression`, with `test`
/// saying what each test gives for the path. `None`: the expression was
/// not read, so every action may be reached.
pub fn reached_actions(
    expression: &[Arg],
    test: &dyn Fn(&str, &[Option<String>]) -> Truth,
) -> Option<Vec<usize>> {
    if expression.is_empty() {
        return Some(Vec::new());
    }
    // Words of unknown number may be anything, anywhere.
    if expression.iter().any(|a| matches!(a, Arg::Unknown(_))) {
        return None;
    }
    let mut parser = Parser {
        words: expression.iter().map(Arg::as_known).collect(),
        at: 0,
    };
    let node = parser.comma(0)?;
    if parser.at < parser.words.len() {
        return None;
    }
    let mut reached = Vec::new();
    eval(&node, true, test, &mut reached);
    Some(reached)
}

/// What a test gives for a starting point itself (`root`, as written after
/// expansion): a name test is matched against it; `-mindepth N` (N ≥ 1)
/// excludes it; every other test may go either way.
pub fn root_truth(root: &str, name: &str, args: &[Option<String>]) -> Truth {
    let arg = args.first().cloned().flatten();
    let Some(arg) = arg else {
        return Truth::Maybe;
    };
    let base = {
        let trimmed = root.trim_end_matches('/');
        if trimmed.is_empty() {
            "/"
        } else {
            trimmed.rsplit('/').next().unwrap_or(trimmed)
        }
    };
    let matches = |pattern: &str, subject: &str, fold: bool| {
        let (p, s) = if fold {
            (pattern.to_lowercase(), subject.to_lowercase())
        } else {
            (pattern.to_owned(), subject.to_owned())
        };
        glob::matches(&glob::pattern_of(&p), &s, glob::Mode::STRING)
    };
    let truth = |b: bool| if b { Truth::True } else { Truth::False };
    match name {
        "-name" => truth(matches(&arg, base, false)),
        "-iname" => truth(matches(&arg, base, true)),
        "-path" | "-wholename" => truth(matches(&arg, root, false)),
        "-ipath" | "-iwholename" => truth(matches(&arg, root, true)),
        "-mindepth" => match arg.parse::<u64>() {
            Ok(n) if n >= 1 => Truth::False,
            _ => Truth::True,
        },
        _ => Truth::Maybe,
    }
}

/// Does `-mindepth N` (N ≥ 1, a global option wherever it stands) keep
/// find away from its starting points?
pub fn skips_roots(expression: &[Arg]) -> bool {
    expression.windows(2).any(|w| {
        matches!(w, [a, n] if a.as_known() == Some("-mindepth")
            && n.as_known().and_then(|t| t.parse::<u64>().ok()).is_some_and(|n| n >= 1))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(text: &str) -> Vec<Arg> {
        text.split(' ').map(Arg::known).collect()
    }

    #[test]
    fn an_unknown_word_reaches_everything() {
        let unknown_text = || {
            Arg::Field(crate::value::Value::text(crate::value::Text::any(
                crate::value::Sources::none(),
            )))
        };
        let mut expr = words("-name x");
        expr.push(unknown_text());
        expr.push(Arg::known("-delete"));
        assert_eq!(reached_actions(&expr, &|_, _| Truth::False), None);
        let mut expr = words("-name");
        expr.push(Arg::Unknown(crate::value::Sources::none()));
        expr.push(Arg::known("-delete"));
        assert_eq!(reached_actions(&expr, &|_, _| Truth::False), None);
        // One field of unknown text is only the test's argument.
        let mut expr = words("-name");
        expr.push(unknown_text());
        expr.push(Arg::known("-delete"));
        assert_eq!(reached_actions(&expr, &|_, _| Truth::False), Some(vec![]));
    }

    fn reached(root: &str, expr: &str) -> Option<Vec<usize>> {
        let root = root.to_owned();
        reached_actions(&words(expr), &move |n, a| root_truth(&root, n, a))
    }

    #[test]
    fn name_tests_narrow_the_root() {
        assert_eq!(
            reached(
                "/home/dev",
                "-type d -name node_modules -prune -exec rm -rf {} +"
            ),
            Some(vec![])
        );
        assert_eq!(reached("/home/dev", "-name * -delete"), Some(vec![2]));
        assert_eq!(reached("/home/dev", "! -name x -delete"), Some(vec![3]));
        assert_eq!(reached("/home/dev", "-name x -o -delete"), Some(vec![3]));
        assert_eq!(
            reached("/home/dev", "( -name a -o -name b ) -delete"),
            Some(vec![])
        );
        assert_eq!(reached("/home/dev", "-name dev -delete"), Some(vec![2]));
        assert_eq!(reached("/home/dev", "-iname DEV -delete"), Some(vec![2]));
        assert_eq!(reached("/home/dev", "-type d -delete"), Some(vec![2]));
        assert_eq!(reached("/home/dev", "-path /home/* -delete"), Some(vec![2]));
    }

    #[test]
    fn unreadable_expressions_reach_everything() {
        assert_eq!(reached("/", "( -name x -delete"), None);
        assert_eq!(reached("/", "-exec rm {}"), None);
        let deep = format!("{}-delete", "! ".repeat(MAX_DEPTH + 2));
        assert_eq!(reached("/", deep.trim()), None);
    }

    #[test]
    fn mindepth_skips_the_roots() {
        assert!(skips_roots(&words("-mindepth 1 -delete")));
        assert!(!skips_roots(&words("-mindepth 0 -delete")));
    }
}
