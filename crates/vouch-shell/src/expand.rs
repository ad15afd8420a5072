//! Word expansion in bash's order: brace expansion, tilde expansion,
//! parameter and arithmetic expansion and command substitution (left to
//! right), word splitting with the effective `IFS`, pathname expansion,
//! quote removal.
//!
//! A word may expand differently depending on which candidate a variable
//! holds; each way is kept (bounded by `max_candidates`), and ways that
//! produce the same number of fields are merged position by position.
//! Pathname expansion keeps a glob as a pattern (the file system is
//! runtime data): [`Seg::Star`], [`Seg::Quest`], [`Seg::Class`].

use super::ast::{ArgAst, Assign, AssignValue, Part, Redir, RedirTarget, WordAst};
use super::command::{Redirect, RedirectOp};
use super::interp::{Interp, Output};
use super::state::{Binding, Input, State, Var};
use super::value::{Arg, Seg, Sources, Text, Value};

/// A piece of an expanded word before field splitting.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum X {
    /// Text. `quoted`: neither split nor globbed. `split`: the result of an
    /// unquoted expansion, which `IFS` splits.
    Lit {
        text: String,
        quoted: bool,
        split: bool,
    },
    /// Text nobody knows.
    Any { quoted: bool, from: Sources },
    /// A field boundary inside `"$@"`.
    Break,
}

pub(crate) type XWord = Vec<X>;

/// One piece of an expanded `${v/p/r}` replacement.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum RepPiece {
    Text(String),
    /// An unquoted `&`: the text the pattern matched.
    Matched,
}

fn lit(text: &str, quoted: bool, split: bool) -> X {
    X::Lit {
        text: text.to_owned(),
        quoted,
        split,
    }
}

/// A brace-expansion atom: an unquoted literal character or an opaque part.
#[derive(Debug, Clone, PartialEq)]
enum Atom<'a> {
    C(char),
    P(&'a Part),
}

fn atoms(word: &WordAst) -> Vec<Atom<'_>> {
    let mut out = Vec::new();
    for part in &word.parts {
        match part {
            Part::Lit(text) => out.extend(text.chars().map(Atom::C)),
            other => out.push(Atom::P(other)),
        }
    }
    out
}

fn from_atoms(atoms: &[Atom<'_>]) -> WordAst {
    let mut parts: Vec<Part> = Vec::new();
    for a in atoms {
        match a {
            Atom::C(c) => {
                if let Some(Part::Lit(t)) = parts.last_mut() {
                    t.push(*c);
                } else {
                    parts.push(Part::Lit(c.to_string()));
                }
            }
            Atom::P(p) => parts.push((*p).clone()),
        }
    }
    WordAst { parts }
}

/// The sequence of `{a..b[..step]}` when `inner` is one.
fn sequence(inner: &[Atom<'_>], budget: usize) -> Option<Vec<String>> {
    // Only digits, letters, `.`, `+` and `-` make a sequence: anything else
    // answers at its first atom, without copying the text (`find_brace`
    // asks about every pair of braces, and nested pairs contain each other).
    let sequence_atom = |a: &Atom<'_>| matches!(a, Atom::C(c) if c.is_ascii_alphanumeric() || matches!(c, '.' | '+' | '-'));
    if !inner.iter().all(sequence_atom) {
        return None;
    }
    let text: String = inner
        .iter()
        .map(|a| match a {
            Atom::C(c) => Some(*c),
            Atom::P(_) => None,
        })
        .collect::<Option<String>>()?;
    let parts: Vec<&str> = text.split("..").collect();
    let (start, end, step) = match parts.as_slice() {
        [a, b] => (*a, *b, None),
        [a, b, s] => (*a, *b, Some(*s)),
        _ => return None,
    };
    let step: i64 = match step {
        Some(s) => s.parse::<i64>().ok()?.checked_abs()?.max(1),
        None => 1,
    };
    if let (Ok(a), Ok(b)) = (start.parse::<i64>(), end.parse::<i64>()) {
        let width = if (start.starts_with('0') && start.len() > 1)
            || (end.starts_with('0') && end.len() > 1)
            || start.starts_with("-0")
        {
            start.len().max(end.len())
        } else {
            0
        };
        let count = a.abs_diff(b) / step.unsigned_abs() + 1;
        if count > budget as u64 {
            return Some(Vec::new());
        }
        let mut out = Vec::new();
        let mut x = a;
        loop {
            out.push(if width > 0 {
                format!("{x:0width$}")
            } else {
                x.to_string()
            });
            if x == b || out.len() as u64 >= count {
                break;
            }
            x = if a < b { x + step } else { x - step };
            if (a < b && x > b) || (a > b && x < b) {
                break;
            }
        }
        return Some(out);
    }
    let (mut sa, mut sb) = (start.chars(), end.chars());
    let (Some(ca), None, Some(cb), None) = (sa.next(), sa.next(), sb.next(), sb.next()) else {
        return None;
    };
    if !ca.is_ascii_alphabetic() || !cb.is_ascii_alphabetic() {
        return None;
    }
    let (a, b) = (ca as i64, cb as i64);
    let mut out = Vec::new();
    let mut x = a;
    loop {
        out.push(char::from_u32(u32::try_from(x).ok()?)?.to_string());
        if x == b {
            break;
        }
        x = if a < b { x + step } else { x - step };
        if (a < b && x > b) || (a > b && x < b) {
            break;
        }
    }
    Some(out)
}

impl Interp {
    /// Brace expansion of one word (bash's first expansion): at most
    /// `max_fields` words, and what it scans and copies on the way is
    /// charged to `max_expansion_bytes`.
    fn braces(&mut self, word: &WordAst) -> Vec<WordAst> {
        let has_brace = word
            .parts
            .iter()
            .any(|p| matches!(p, Part::Lit(t) if t.contains('{')));
        if !has_brace {
            return vec![word.clone()];
        }
        let atoms = atoms(word);
        let mut braces = Braces {
            out: Vec::new(),
            max_words: usize::try_from(self.meter.limits.max_fields).unwrap_or(usize::MAX),
            meter: &mut self.meter,
            stopped: false,
        };
        braces.expand(&atoms, 0);
        braces.out.iter().map(|a| from_atoms(a)).collect()
    }

    /// Tilde expansion at the start of a word: `~`, `~/x`, `~+`, `~-`, `~user`.
    fn tilde(&self, word: &WordAst, state: &State) -> Option<(Value, WordAst)> {
        let Some(Part::Lit(first)) = word.parts.first() else {
            return None;
        };
        let rest = first.strip_prefix('~')?;
        let (prefix, after) = match rest.find('/') {
            Some(slash) => (rest.get(..slash)?, rest.get(slash..)?),
            None if word.parts.len() == 1 => (rest, ""),
            None => return None,
        };
        let value = self.tilde_prefix(prefix, state)?;
        let mut remaining = word.clone();
        if let Some(Part::Lit(t)) = remaining.parts.first_mut() {
            *t = after.to_owned();
        }
        Some((value, remaining))
    }

    fn tilde_prefix(&self, prefix: &str, state: &State) -> Option<Value> {
        let var_value = |name: &str| -> Value {
            let var = state.get(name, &self.known);
            binding_value(&var)
        };
        Some(match prefix {
            "" => var_value("HOME"),
            "+" => state.cwd.clone(),
            "-" => var_value("OLDPWD"),
            user if user
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || "._-".contains(c)) =>
            {
                if self.known.user.as_deref() == Some(user) {
                    // The user name is read off `HOME`; whether the user
                    // database has it is runtime data. Without it bash
                    // leaves the word as written.
                    let mut v = Value::known(&self.known.home);
                    v.add(Text::lit(&format!("~{user}")));
                    v
                } else if user == "root" {
                    let mut v = Value::known("/root");
                    v.add(Text::any(Sources::none()));
                    v
                } else {
                    Value::unknown()
                }
            }
            _ => return None,
        })
    }

    /// The ways one word can expand before splitting.
    fn xwords(&mut self, word: &WordAst, state: &mut State, assignment: bool) -> Vec<XWord> {
        let mut ways: Vec<XWord> = vec![Vec::new()];
        // Borrowed unless a tilde prefix was cut off: cloning every
        // operand at every nesting level copied each subtree once per level.
        let (head, body) = match self.tilde(word, state) {
            Some((value, rest)) => (Some(value), std::borrow::Cow::Owned(rest)),
            None => (None, std::borrow::Cow::Borrowed(word)),
        };
        if let Some(value) = head {
            let alts: Vec<XWord> = value.candidates().iter().map(|t| text_x(t, true)).collect();
            ways = self.product(ways, alts);
        }
        for (k, part) in body.parts.iter().enumerate() {
            let alts = self.part(part, state, assignment, k == 0 && !assignment);
            ways = self.product(ways, alts);
            if ways.is_empty() {
                break;
            }
        }
        ways
    }

    fn product(&mut self, ways: Vec<XWord>, alts: Vec<XWord>) -> Vec<XWord> {
        let limit = self.meter.limits.max_candidates as usize;
        let ways = self.bounded_product(ways, alts, limit, "a word");
        if ways.len() < limit {
            return ways;
        }
        self.meter.exceeded(
            "max_candidates",
            format!("a word expands in {limit} ways or more"),
        );
        // At the limit the word is past its budget (the analysis is
        // incomplete): it becomes one unknown, unquoted text carrying every
        // source, so the rest of a long word (a here-document of thousands
        // of unknowns) costs one part each, not the limit's worth.
        let mut from = Sources::none();
        for x in ways.iter().flatten() {
            if let X::Any { from: f, .. } = x {
                from.extend(f);
            }
        }
        vec![vec![X::Any {
            quoted: false,
            from,
        }]]
    }

    /// Every way of `left` followed by every way of `right`, at most `limit`
    /// of them: past it the meter records `max_candidates` (the analysis
    /// is then incomplete, never a pass) for `what` ("a word", "a command
    /// line").
    fn bounded_product<T: Clone>(
        &mut self,
        mut left: Vec<Vec<T>>,
        mut right: Vec<Vec<T>>,
        limit: usize,
        what: &str,
    ) -> Vec<Vec<T>> {
        // Already at the limit: every further part keeps only its first
        // way (the word is past its budget, so the analysis is incomplete
        // whatever follows), so a long word of unknowns costs one pass over
        // its parts, not a full product per part.
        if left.len() >= limit && right.len() > 1 {
            self.meter.exceeded(
                "max_candidates",
                format!("{what} expands in more than {limit} ways"),
            );
            right.truncate(1);
        }
        if right.len() == 1 {
            if let Some(only) = right.into_iter().next() {
                if let [l] = left.as_mut_slice() {
                    l.extend(only);
                } else {
                    for l in &mut left {
                        l.extend(only.iter().cloned());
                    }
                }
            }
            return left;
        }
        let mut out = Vec::with_capacity(left.len().saturating_mul(right.len()).min(limit));
        'outer: for l in &left {
            for r in &right {
                if out.len() >= limit {
                    self.meter.exceeded(
                        "max_candidates",
                        format!("{what} expands in more than {limit} ways"),
                    );
                    break 'outer;
                }
                let mut joined = l.clone();
                joined.extend(r.iter().cloned());
                out.push(joined);
            }
        }
        out
    }

    /// The ways one part can expand.
    fn part(
        &mut self,
        part: &Part,
        state: &mut State,
        assignment: bool,
        first: bool,
    ) -> Vec<XWord> {
        let nested = match part {
            Part::Lit(_) | Part::Quoted(_) => {
                return self.nested_part(part, state, assignment, first);
            }
            Part::Param { quoted, .. } | Part::Cmd { quoted, .. } | Part::Arith { quoted, .. } => {
                *quoted
            }
            Part::Proc { .. } => false,
        };
        // Expansions nest words, statements and scripts: one level each.
        if !self.meter.enter() {
            return vec![vec![X::Any {
                quoted: nested,
                from: Sources::none(),
            }]];
        }
        let ways = self.nested_part(part, state, assignment, first);
        self.meter.leave();
        ways
    }

    /// The ways one part can expand, once [`Interp::part`] entered the
    /// level an expansion nests in.
    fn nested_part(
        &mut self,
        part: &Part,
        state: &mut State,
        assignment: bool,
        first: bool,
    ) -> Vec<XWord> {
        match part {
            Part::Lit(text) => self.literal_part(text, state, assignment, first),
            Part::Quoted(text) => vec![vec![lit(text, true, false)]],
            Part::Param { exp, quoted } => self.param(exp, *quoted, state),
            Part::Cmd { body, quoted } => {
                let value = self.substitute(body, state);
                value
                    .candidates()
                    .iter()
                    .map(|t| text_x(t, *quoted))
                    .collect()
            }
            Part::Arith {
                expr,
                substs,
                quoted,
            } => self.arith_part(expr, substs, *quoted, state),
            Part::Proc { body, output } => self.proc_part(body, *output, state),
        }
    }

    /// Unquoted literal text: tildes after `:` in assignments, and after
    /// `=` in words shaped like assignments.
    fn literal_part(
        &mut self,
        text: &str,
        state: &mut State,
        assignment: bool,
        first: bool,
    ) -> Vec<XWord> {
        if assignment && text.contains(":~") {
            // `PATH=a:~/bin`: a tilde after a colon expands too.
            return self.colon_tildes(text, state);
        }
        if first
            && let Some((name, rest)) = assignment_like(text)
            && rest.contains('~')
        {
            return self.assignment_like_tildes(name, rest, state);
        }
        vec![vec![lit(text, false, false)]]
    }

    /// `of=~/x` as an argument: bash expands the tilde after `=` (and `:`)
    /// in words shaped like assignments.
    fn assignment_like_tildes(&mut self, name: &str, rest: &str, state: &State) -> Vec<XWord> {
        let mut ways = vec![vec![lit(&format!("{name}="), false, false)]];
        let (head, tail) = rest
            .split_once(':')
            .map_or((rest, None), |(h, t)| (h, Some(t)));
        let tilde = head.strip_prefix('~').and_then(|r| {
            let (user, after) = r.find('/').map_or((r, ""), |at| {
                (r.get(..at).unwrap_or(""), r.get(at..).unwrap_or(""))
            });
            self.tilde_prefix(user, state).map(|v| (v, after))
        });
        let first: Vec<XWord> = match tilde {
            Some((v, after)) => v
                .candidates()
                .iter()
                .map(|t| {
                    let mut w = text_x(t, true);
                    w.push(lit(after, false, false));
                    w
                })
                .collect(),
            None => vec![vec![lit(head, false, false)]],
        };
        ways = self.product(ways, first);
        if let Some(tail) = tail {
            let rest_ways = self.colon_tildes(&format!(":{tail}"), state);
            ways = self.product(ways, rest_ways);
        }
        ways
    }

    /// `$((…))`: its substitutions run, then the arithmetic when known.
    fn arith_part(
        &mut self,
        expr: &str,
        substs: &[super::ast::Subst],
        quoted: bool,
        state: &mut State,
    ) -> Vec<XWord> {
        let expanded = self.expand_arith_text(expr, substs, state);
        let value = expanded.and_then(|e| self.arith(&e, state));
        match value {
            Some(n) => vec![vec![lit(&n.to_string(), quoted, !quoted)]],
            None => vec![vec![X::Any {
                quoted,
                from: Sources::none(),
            }]],
        }
    }

    /// `<(…)` / `>(…)`: the commands run; the word is `/dev/fd/N`.
    fn proc_part(&mut self, body: &super::ast::Stmt, output: bool, state: &State) -> Vec<XWord> {
        let saved = self.ctx;
        self.ctx.origin = super::command::Origin::ProcessSubstitution;
        let inner = state.clone();
        let (_, out) = if output {
            // `>(…)` reads what the command writes to it. Which command
            // writes what is not followed; read conservatively, it is what
            // the command reads (`… | tee >(sh)` hands `sh` tee's input).
            let mut unknown = inner.clone();
            unknown.stdin = Input::default();
            let start = self.commands.len();
            let first = self.exec(body, unknown);
            self.pending_feeds
                .push((saved.origin, start..self.commands.len()));
            if inner.stdin.text.is_some() {
                self.ctx.conservative = true;
                let _ = self.exec(body, inner);
            }
            first
        } else {
            self.exec(body, inner)
        };
        self.ctx = saved;
        let from = out.from.clone();
        self.proc_outputs.push(out);
        // Bash passes `/dev/fd/N`.
        vec![vec![
            lit("/dev/fd/", true, false),
            X::Any { quoted: true, from },
        ]]
    }

    fn colon_tildes(&mut self, text: &str, state: &State) -> Vec<XWord> {
        let mut ways: Vec<XWord> = vec![Vec::new()];
        for (k, piece) in text.split(':').enumerate() {
            let mut alts: Vec<XWord> = Vec::new();
            let sep = if k > 0 { ":" } else { "" };
            let expanded = piece.strip_prefix('~').and_then(|rest| {
                let (prefix, after) = match rest.find('/') {
                    Some(s) => (rest.get(..s)?, rest.get(s..)?),
                    None => (rest, ""),
                };
                let v = self.tilde_prefix(prefix, state)?;
                Some((v, after))
            });
            match expanded {
                Some((v, after)) if k > 0 => {
                    for t in v.candidates() {
                        let mut w = vec![lit(sep, false, false)];
                        w.extend(text_x(t, true));
                        w.push(lit(after, false, false));
                        alts.push(w);
                    }
                }
                _ => alts.push(vec![lit(&format!("{sep}{piece}"), false, false)]),
            }
            ways = self.product(ways, alts);
        }
        ways
    }

    /// The value of `$(…)`: what its commands print, when known.
    pub(crate) fn substitute(&mut self, body: &super::ast::Stmt, state: &State) -> Value {
        let saved = self.ctx;
        self.ctx.origin = super::command::Origin::CommandSubstitution;
        self.ctx.background = false;
        self.ctx.in_pipeline = false;
        let mut inner = state.clone();
        inner.stdin = Input::default();
        // `$(< FILE)`: bash reads the file itself (no command runs); a
        // file the command wrote earlier has known text.
        if let super::ast::Stmt::Simple(s) = body
            && s.words.is_empty()
            && s.assigns.is_empty()
            && let [redirect] = s.redirects.as_slice()
            && redirect.op == super::command::RedirectOp::Read
            && let super::ast::RedirTarget::Word(target) = &redirect.target
        {
            let path = self.expand_value(target, &mut inner.clone());
            // A file of unknown text is read by the redirection's own
            // command below: its output carries that read (a credential
            // file's bytes flowing into a sink).
            if let Some(text) = self.file_text(&Arg::Field(path), state) {
                self.ctx = saved;
                return text;
            }
        }
        let (_, out) = self.exec(body, inner);
        self.ctx = saved;
        output_value(&out)
    }

    /// Expands `$x`, `${x}` and `$(…)` inside an arithmetic expression.
    fn expand_arith_text(
        &mut self,
        expr: &str,
        substs: &[super::ast::Subst],
        state: &mut State,
    ) -> Option<String> {
        if !expr.contains(['$', '`']) && substs.is_empty() {
            return Some(expr.to_owned());
        }
        // Read as bash reads it: as if inside double quotes, where a `"`
        // is plain (so `'$(…)'` still runs).
        let mut lexer = super::lex::Lexer::new(expr, substs, self.meter.depth_left());
        let word = lexer.heredoc(0, expr.len());
        if lexer.too_deep {
            self.meter.too_deep();
        }
        // A substitution the lexer did not reach (inside text it read
        // another way) still runs.
        // Both lists are in text order: one pass finds the ones skipped.
        let mut taken = lexer.taken.iter().peekable();
        for s in substs {
            if taken.next_if(|&&t| t == s.start).is_none() {
                self.substitute(&s.body, state);
            }
        }
        let value = self.expand_value(&word, state);
        value.as_known().map(str::to_owned)
    }

    /// Lexes `text` (an arithmetic expression, an offset) as an unquoted
    /// word, nesting `${…}` no deeper than the levels left.
    pub(crate) fn lex_text(&mut self, text: &str) -> WordAst {
        let mut lexer = super::lex::Lexer::new(text, &[], self.meter.depth_left());
        let word = lexer.word(0, text.len());
        if lexer.too_deep {
            self.meter.too_deep();
        }
        word
    }

    /// Expands words to argv shapes: each shape is one way the whole list
    /// can expand.
    pub(crate) fn expand_argv_words<W: std::borrow::Borrow<WordAst>>(
        &mut self,
        words: &[W],
        state: &mut State,
    ) -> Vec<Vec<Arg>> {
        let mut columns = Columns::default();
        let max_fields = self.meter.limits.max_fields;
        for word in words {
            let word: &WordAst = word.borrow();
            if let Some(text) = plain_literal(word).filter(|_| super::shortcuts()) {
                // What `expand_word` returns for it (one shape of one
                // field), without building that shape.
                columns.push_field(Arg::known(text));
            } else {
                if self.meter.expansion_spent() {
                    break;
                }
                columns.push(self.expand_word(word, state));
            }
            if self.too_many_fields(&columns, "a command line") {
                break;
            }
        }
        let mut shapes = self.build_shapes(columns, "a command line");
        for s in &mut shapes {
            s.truncate(usize::try_from(max_fields).unwrap_or(usize::MAX));
        }
        shapes
    }

    /// Expands a command's words (assignment words of declaration builtins
    /// as `NAME=value` fields, with their values also returned).
    pub(crate) fn expand_command_words(
        &mut self,
        words: &[ArgAst],
        state: &mut State,
    ) -> (Vec<Vec<Arg>>, Vec<(String, Value)>) {
        let mut plain: Vec<std::borrow::Cow<'_, WordAst>> = Vec::with_capacity(words.len());
        let mut decl = Vec::new();
        for w in words {
            match w {
                ArgAst::Word(word) => plain.push(std::borrow::Cow::Borrowed(word)),
                ArgAst::Assign(a) => {
                    let value = self.assign_value(a, state);
                    let mut field = WordAst::literal(&format!("{}=", a.name), true);
                    field.parts.push(Part::Quoted(String::new()));
                    decl.push((a.name.clone(), value));
                    plain.push(std::borrow::Cow::Owned(field));
                }
            }
        }
        let mut shapes = self.expand_argv_words(&plain, state);
        // Replace the placeholder `NAME=` fields with their values.
        let mut k = 0;
        for w in words {
            if let ArgAst::Assign(a) = w
                && let Some((_, value)) = decl.get(k)
            {
                for shape in &mut shapes {
                    for arg in shape.iter_mut() {
                        if arg.as_known() == Some(&format!("{}=", a.name)) {
                            let mut prefixed = Vec::new();
                            for c in value.candidates() {
                                let mut t = Text::lit(&format!("{}=", a.name));
                                t.append(c);
                                prefixed.push(t);
                            }
                            if let Some(v) = Value::from_candidates(prefixed) {
                                *arg = Arg::Field(v);
                            }
                            break;
                        }
                    }
                }
                k += 1;
            }
        }
        (shapes, decl)
    }

    /// The argv shapes one word expands to.
    pub(crate) fn expand_word(&mut self, word: &WordAst, state: &mut State) -> Vec<Vec<Arg>> {
        if let Some(text) = plain_literal(word).filter(|_| super::shortcuts()) {
            return vec![vec![Arg::known(text)]];
        }
        self.expand_word_general(word, state)
    }

    /// [`Self::expand_word`] for any word, literal or not.
    pub(crate) fn expand_word_general(
        &mut self,
        word: &WordAst,
        state: &mut State,
    ) -> Vec<Vec<Arg>> {
        // Brace expansion makes several words; each may expand several ways.
        let mut columns = Columns::default();
        for (k, braced) in self.braces(word).into_iter().enumerate() {
            // Every word brace expansion made past the first is a step.
            if k > 0 && !self.meter.step() {
                break;
            }
            let xwords = self.xwords(&braced, state, false);
            if !self
                .meter
                .expansion(xwords.iter().map(xword_bytes).fold(0, u64::saturating_add))
            {
                break;
            }
            let mut ways: Vec<Vec<Arg>> = Vec::new();
            for xw in xwords {
                let fields = self.split(&xw, state);
                merge_shape(&mut ways, fields);
            }
            if ways.is_empty() {
                ways.push(Vec::new());
            }
            columns.push(ways);
            if self.too_many_fields(&columns, "a word") {
                break;
            }
        }
        self.build_shapes(columns, "a word")
    }

    /// True (and recorded) when the longest shape of `columns` has more
    /// than `max_fields` fields.
    fn too_many_fields(&mut self, columns: &Columns, what: &str) -> bool {
        let max = self.meter.limits.max_fields;
        if columns.longest <= max {
            return false;
        }
        self.meter.exceeded(
            "max_fields",
            format!("{what} expands to more than {max} fields"),
        );
        true
    }

    /// The shapes of `columns`: the first `max_candidates` ways of taking
    /// one way from each column, in order (the last column varies
    /// fastest), each built once. Past the limit the meter records
    /// `max_candidates` for `what`; past `max_fields` fields over all the
    /// shapes it records `max_fields` and builds no more of them (the
    /// first is kept whole), so what every later stage walks is bounded
    /// too.
    fn build_shapes(&mut self, columns: Columns, what: &str) -> Vec<Vec<Arg>> {
        let limit = usize::try_from(self.meter.limits.max_candidates).unwrap_or(usize::MAX);
        let columns = match columns.into_only_shape() {
            Ok(shape) => return vec![shape],
            Err(columns) => columns,
        };
        let max_fields = usize::try_from(self.meter.limits.max_fields).unwrap_or(usize::MAX);
        let mut fields = 0usize;
        let ways = columns
            .columns
            .iter()
            .try_fold(1usize, |n, c| n.checked_mul(c.len()));
        if ways.is_none_or(|n| n > limit) {
            self.meter.exceeded(
                "max_candidates",
                format!("{what} expands in more than {limit} ways"),
            );
        }
        let count = ways.map_or(limit, |n| n.min(limit));
        let mut pick = vec![0usize; columns.columns.len()];
        let mut shapes = Vec::with_capacity(count);
        for _ in 0..count {
            let mut shape = Vec::with_capacity(usize::try_from(columns.longest).unwrap_or(0));
            for (column, &k) in columns.columns.iter().zip(&pick) {
                if let Some(way) = column.get(k) {
                    shape.extend(way.iter().cloned());
                }
            }
            fields = fields.saturating_add(shape.len());
            if fields > max_fields && !shapes.is_empty() {
                self.meter.exceeded(
                    "max_fields",
                    format!("{what} expands to more than {max_fields} fields over its ways"),
                );
                break;
            }
            shapes.push(shape);
            // The next way: the last column with another way moves on,
            // the columns after it start over.
            for (column, k) in columns.columns.iter().zip(pick.iter_mut()).rev() {
                *k += 1;
                if *k < column.len() {
                    break;
                }
                *k = 0;
            }
        }
        shapes
    }

    /// Expands the replacement of `${v/p/r}` once: its value, and its
    /// literal text with the places of the matched text — with
    /// `patsub_replacement` (on by default since bash 5.2) an unquoted `&`,
    /// written or from an unquoted expansion, stands for what the pattern
    /// matched. The pieces are `None` when the replacement is not one
    /// known string.
    pub(crate) fn expand_replacement(
        &mut self,
        word: &WordAst,
        state: &mut State,
    ) -> (Value, Option<Vec<RepPiece>>) {
        let ways = self.xwords(word, state, false);
        let pieces = match ways.as_slice() {
            [way] => replacement_pieces(way),
            _ => None,
        };
        (value_of_ways(ways), pieces)
    }

    /// Expands a word without splitting or globbing (assignment values,
    /// here-documents, `case` subjects, `[[ … ]]` operands).
    pub(crate) fn expand_value(&mut self, word: &WordAst, state: &mut State) -> Value {
        self.expand_value_inner(word, state, false)
    }

    fn expand_value_inner(&mut self, word: &WordAst, state: &mut State, assignment: bool) -> Value {
        let ways = self.xwords(word, state, assignment);
        value_of_ways(ways)
    }

    /// Expands a pattern word (`case`, `${x#p}`, `[[ x == p ]]`): unquoted
    /// pattern characters stay pattern characters.
    pub(crate) fn expand_pattern(&mut self, word: &WordAst, state: &mut State) -> Vec<Text> {
        let mut out = Vec::new();
        for xw in self.xwords(word, state, false) {
            let mut pieces = Vec::new();
            for x in xw {
                match x {
                    X::Lit { text, quoted, .. } => {
                        pieces.extend(text.chars().map(|c| Piece::Char(c, !quoted)));
                    }
                    X::Any { from, .. } => pieces.push(Piece::Any(from)),
                    X::Break => pieces.push(Piece::Char(' ', false)),
                }
            }
            out.push(pattern_text(&pieces, true));
        }
        out
    }

    /// The value of an assignment (`NAME=value`, `NAME=(a b)` joined for
    /// scalar use).
    pub(crate) fn assign_value(&mut self, a: &Assign, state: &mut State) -> Value {
        match &a.value {
            AssignValue::Scalar(word) => self.expand_value_inner(word, state, true),
            AssignValue::Array(items) => {
                let mut texts = Vec::new();
                for item in items {
                    let v = self.expand_value(item, state);
                    texts.push(v.candidates().first().cloned().unwrap_or_default());
                }
                Value::text(texts.into_iter().next().unwrap_or_default())
            }
        }
    }

    /// Applies an assignment to `state`.
    pub(crate) fn apply_assign(&mut self, a: &Assign, state: &mut State, exported: bool) {
        // `a[$(cmd)]=1`: the subscript is expanded, its substitutions run.
        if let Some(index) = &a.index {
            let _ = self.expand_value(index, state);
        }
        // `n='a[$(cmd)]'` evaluates the subscript when `n` is an integer
        // variable (`declare -i`), which the analysis does not track: read
        // conservatively.
        if let AssignValue::Scalar(word) = &a.value
            && word
                .parts
                .iter()
                .any(|p| matches!(p, Part::Lit(t) | Part::Quoted(t) if t.contains('[')))
        {
            let mut scratch = state.clone();
            let value = self.expand_value(word, &mut scratch);
            if let Some(text) = value.as_known()
                && super::evaluated::runs_in_subscript(text)
            {
                let saved = self.ctx.conservative;
                self.ctx.conservative = true;
                self.run_evaluated(text, state, None);
                self.ctx.conservative = saved;
            }
        }
        let binding_vals: Vec<Binding> = match &a.value {
            AssignValue::Array(items) => self.array_bindings(items, a.index.is_some(), state),
            AssignValue::Scalar(word) => {
                let value = self.expand_value_inner(word, state, true);
                if a.index.is_some() {
                    // One element of an array: the array becomes unknown
                    // unless it is simple to follow.
                    vec![Binding::Unknown(value.sources())]
                } else if a.append {
                    let old = binding_value(&state.get(&a.name, &self.known));
                    let joined = super::interp::concat_values(&old, &value, &mut self.meter)
                        .unwrap_or_else(Value::unknown);
                    joined
                        .into_candidates()
                        .into_iter()
                        .map(Binding::Str)
                        .collect()
                } else {
                    value
                        .into_candidates()
                        .into_iter()
                        .map(Binding::Str)
                        .collect()
                }
            }
        };
        let old = state.get(&a.name, &self.known);
        let vals = self.bounded(binding_vals);
        state.set(
            &a.name,
            Var {
                vals,
                exported: old.exported || exported,
            },
        );
    }

    /// The binding of an array assignment, `A=(a b [k]=c)`: the array
    /// when its indices run 0, 1, … and each element has one value (and
    /// the assignment is not to one element, `indexed`), unknown otherwise.
    fn array_bindings(
        &mut self,
        items: &[WordAst],
        indexed: bool,
        state: &mut State,
    ) -> Vec<Binding> {
        let mut keyed = false;
        // Each element with its index: `[N]=value` sets N, any other
        // item the index after the last one (`declare -a A=([0]=rm
        // [1]=-rf [2]=/)`); the array is followed when the indices
        // run 0, 1, … once sorted.
        let mut placed: Vec<(usize, Text)> = Vec::new();
        let mut next = 0usize;
        for item in items {
            if matches!(item.parts.first(), Some(Part::Lit(t)) if t.starts_with('[')) {
                match indexed_item(item) {
                    Some((at, value)) => {
                        let v = self.expand_value(&value, state);
                        match v.candidates() {
                            [only] => placed.push((at, only.clone())),
                            _ => keyed = true,
                        }
                        next = at.saturating_add(1);
                    }
                    None => keyed = true,
                }
                continue;
            }
            let shapes = self.expand_word(item, state);
            match shapes.as_slice() {
                [only]
                    if only
                        .iter()
                        .all(|x| matches!(x, Arg::Field(v) if v.candidates().len() == 1)) =>
                {
                    for arg in only {
                        if let Some(t) = arg.candidates().first() {
                            placed.push((next, t.clone()));
                            next = next.saturating_add(1);
                        }
                    }
                }
                _ => keyed = true,
            }
        }
        placed.sort_by_key(|(at, _)| *at);
        keyed |= !placed.iter().enumerate().all(|(k, (at, _))| *at == k);
        let elements: Vec<Text> = placed.into_iter().map(|(_, t)| t).collect();
        if keyed || indexed {
            vec![Binding::Unknown(Sources::none())]
        } else {
            vec![Binding::Arr(std::rc::Rc::new(elements))]
        }
    }

    /// Caps the candidates of a variable, and the length of each value.
    pub(crate) fn bounded(&mut self, vals: Vec<Binding>) -> Vec<Binding> {
        let limit = self.meter.limits.max_candidates as usize;
        let max_bytes = self.meter.limits.max_value_bytes as usize;
        let mut out: Vec<Binding> = Vec::new();
        for b in vals {
            let too_long = match &b {
                Binding::Str(t) => text_len(t) > max_bytes,
                Binding::Arr(items) => items.iter().map(text_len).sum::<usize>() > max_bytes,
                Binding::Unset | Binding::Unknown(_) => false,
            };
            let b = if too_long {
                self.meter.exceeded(
                    "max_value_bytes",
                    format!("a value grows past {max_bytes} bytes"),
                );
                Binding::Unknown(Sources::none())
            } else {
                b
            };
            if out.contains(&b) {
                continue;
            }
            if out.len() >= limit {
                self.meter.exceeded(
                    "max_candidates",
                    format!("a variable takes more than {limit} values"),
                );
                out.push(Binding::Unknown(Sources::none()));
                out.dedup();
                break;
            }
            out.push(b);
        }
        if out.is_empty() {
            out.push(Binding::Unset);
        }
        out
    }

    /// `"$@"` as argv entries.
    pub(crate) fn positional_args(&self, state: &State) -> Vec<Arg> {
        match &state.positional {
            Some(list) => list.iter().cloned().map(Arg::Field).collect(),
            None => vec![Arg::Unknown(Sources::none())],
        }
    }

    /// Splits one expanded way into fields and applies pathname expansion.
    fn split(&mut self, xw: &XWord, state: &State) -> Vec<Arg> {
        if let Some(at) = xw
            .iter()
            .position(|x| matches!(x, X::Any { quoted: false, .. }))
        {
            return split_at_hole(xw, at, state);
        }
        let ifs = binding_value(&state.get("IFS", &self.known));
        let Some(ifs) = ifs.as_known().map(str::to_owned) else {
            if xw.iter().any(|x| matches!(x, X::Lit { split: true, .. })) {
                return vec![Arg::Unknown(Sources::none())];
            }
            return self.fields_to_args(vec![to_pieces(xw)], state);
        };
        let fields = ifs_fields(xw, &ifs);
        self.fields_to_args(fields, state)
    }

    fn fields_to_args(&mut self, fields: Vec<Vec<Piece>>, state: &State) -> Vec<Arg> {
        let glob = !state.opts.noglob;
        fields
            .into_iter()
            .map(|f| Arg::Field(Value::text(pattern_text(&f, glob))))
            .collect()
    }

    /// Expands redirections; sets standard input for what they feed.
    /// Returns them and where standard output's consumer reads from.
    pub(crate) fn redirects(
        &mut self,
        redirs: &[Redir],
        state: &mut State,
    ) -> (Vec<Redirect>, Stdout) {
        let mut out = Vec::new();
        let mut stdout_redirected = false;
        let mut other_fd_into_stdout = false;
        for r in redirs {
            let target = match &r.target {
                RedirTarget::Word(w) => match r.op {
                    RedirectOp::HereString => {
                        let mut v = self.expand_value(w, state);
                        v = append_newline(&v);
                        v
                    }
                    _ => self.redirect_target(w, state),
                },
                RedirTarget::HereDoc { body } => self.expand_value(body, state),
            };
            let fd = r.fd.unwrap_or_else(|| default_fd(r));
            match r.op {
                RedirectOp::HereString | RedirectOp::HereDoc if fd == 0 => {
                    state.stdin = Input {
                        text: Some(target.clone()),
                        items: None,
                        from: target.sources(),
                    };
                }
                RedirectOp::Read | RedirectOp::ReadWrite if fd == 0 => {
                    let text = self.file_text(&Arg::Field(target.clone()), state);
                    state.stdin = Input {
                        text,
                        items: None,
                        from: target.sources(),
                    };
                }
                // `N<<EOF`, `N<<<…`, `N<FILE`: what reading descriptor N
                // gives, for `<&N` and `/dev/fd/N` later in the command
                // (`sh <&3`, `source /dev/fd/3 3<<EOF`).
                RedirectOp::HereString | RedirectOp::HereDoc | RedirectOp::Read if fd > 2 => {
                    std::rc::Rc::make_mut(&mut state.fds).insert(
                        fd,
                        Redirect {
                            fd,
                            op: r.op,
                            target: target.clone(),
                        },
                    );
                }
                RedirectOp::Duplicate if fd == 0 => self.stdin_from_fd(&target, state),
                RedirectOp::Write
                | RedirectOp::Append
                | RedirectOp::Clobber
                | RedirectOp::WriteAll
                | RedirectOp::AppendAll
                    if fd == 1 =>
                {
                    stdout_redirected = true;
                }
                RedirectOp::Duplicate if fd == 1 => {
                    stdout_redirected |= target.as_known() != Some("1");
                }
                // `2>&1` while standard output is still the pipe: what the
                // command writes to descriptor 2 (error messages) goes
                // there too (`find … 2>&1 >/dev/null | xargs cat`).
                RedirectOp::Duplicate if !stdout_redirected && target.as_known() == Some("1") => {
                    other_fd_into_stdout = true;
                }
                _ => {}
            }
            out.push(Redirect {
                fd,
                op: r.op,
                target,
            });
        }
        let stdout = match (other_fd_into_stdout, stdout_redirected) {
            (true, true) => Stdout::Unknown,
            (true, false) => Stdout::OutputAndUnknown,
            (false, true) => Stdout::Elsewhere,
            (false, false) => Stdout::Output,
        };
        (out, stdout)
    }

    /// `<&N`: standard input becomes what descriptor `target` was opened
    /// to read earlier in the command, when it is known.
    fn stdin_from_fd(&mut self, target: &Value, state: &mut State) {
        let opened = target
            .as_known()
            .and_then(|n| n.parse::<u32>().ok())
            .and_then(|n| state.fds.get(&n).cloned());
        if let Some(opened) = opened {
            let text = match opened.op {
                RedirectOp::HereString | RedirectOp::HereDoc => Some(opened.target.clone()),
                RedirectOp::Read => self.file_text(&Arg::Field(opened.target.clone()), state),
                _ => None,
            };
            state.stdin = Input {
                text,
                items: None,
                from: opened.target.sources(),
            };
        }
    }

    /// A redirection target: one field, or unknown.
    fn redirect_target(&mut self, word: &WordAst, state: &mut State) -> Value {
        let shapes = self.expand_word(word, state);
        let mut candidates = Vec::new();
        for shape in shapes {
            match shape.as_slice() {
                [Arg::Field(v)] => candidates.extend(v.candidates().iter().cloned()),
                _ => candidates.push(Text::any(Sources::none())),
            }
        }
        Value::from_candidates(candidates).unwrap_or_else(Value::unknown)
    }
}

/// The value of a word's expansions, without splitting or globbing.
fn value_of_ways(ways: Vec<XWord>) -> Value {
    let mut candidates = Vec::new();
    for xw in ways {
        let mut t = Text::default();
        for x in xw {
            match x {
                X::Lit { text, .. } => t.push_str(&text),
                X::Any { from, .. } => t.push(Seg::Any(from)),
                X::Break => t.push_str(" "),
            }
        }
        candidates.push(t);
    }
    Value::from_candidates(candidates).unwrap_or_else(|| Value::known(""))
}

/// A replacement's literal text with the places of the matched text
/// (unquoted `&`); `None` when part of it is not known.
fn replacement_pieces(way: &XWord) -> Option<Vec<RepPiece>> {
    let mut pieces = Vec::new();
    let mut text = String::new();
    for x in way {
        match x {
            X::Lit {
                text: t, quoted, ..
            } => {
                for c in t.chars() {
                    if c == '&' && !quoted {
                        pieces.push(RepPiece::Text(std::mem::take(&mut text)));
                        pieces.push(RepPiece::Matched);
                    } else {
                        text.push(c);
                    }
                }
            }
            X::Break => text.push(' '),
            X::Any { .. } => return None,
        }
    }
    pieces.push(RepPiece::Text(text));
    Some(pieces)
}

/// The descriptor a redirection without one written applies to: 0 for
/// what reads, 1 for what writes (and for `>&WORD`).
fn default_fd(r: &Redir) -> u32 {
    match r.op {
        RedirectOp::Read | RedirectOp::ReadWrite | RedirectOp::HereString | RedirectOp::HereDoc => {
            0
        }
        RedirectOp::Duplicate => {
            if matches!(&r.target, RedirTarget::Word(_)) {
                1
            } else {
                0
            }
        }
        RedirectOp::Write
        | RedirectOp::Append
        | RedirectOp::Clobber
        | RedirectOp::WriteAll
        | RedirectOp::AppendAll => 1,
    }
}

fn append_newline(v: &Value) -> Value {
    let candidates = v
        .candidates()
        .iter()
        .map(|t| {
            let mut t = t.clone();
            t.push_str("\n");
            t
        })
        .collect();
    Value::from_candidates(candidates).unwrap_or_else(|| Value::known("\n"))
}

fn text_len(t: &Text) -> usize {
    t.segs
        .iter()
        .map(|s| match s {
            Seg::Lit(x) => x.len(),
            Seg::Any(_) | Seg::Star | Seg::Quest => 1,
            Seg::Class(c) => c.len() + 2,
        })
        .sum()
}

/// The ways each word of a list (or each word brace expansion made of one
/// word) expands, kept apart until [`Interp::build_shapes`] builds the
/// shapes once: joining them word by word copied every shape at every
/// word that expands several ways, a cost that grew with the square of
/// the line.
#[derive(Default)]
struct Columns {
    columns: Vec<Vec<Vec<Arg>>>,
    /// Fields of the longest shape: the longest way of each column, summed.
    longest: u64,
}

impl Columns {
    /// Adds a column; one that expands one way only joins the column before
    /// it when that one does too (most words of most lines), so a plain
    /// line is one column of one way.
    fn push(&mut self, mut ways: Vec<Vec<Arg>>) {
        let longest = ways.iter().map(Vec::len).max().unwrap_or(0);
        self.longest = self
            .longest
            .saturating_add(u64::try_from(longest).unwrap_or(u64::MAX));
        if let ([only], Some([last])) = (
            ways.as_mut_slice(),
            self.columns.last_mut().map(Vec::as_mut_slice),
        ) {
            last.append(only);
            return;
        }
        self.columns.push(ways);
    }

    /// Adds a column of one way of one field (a plain literal word)
    /// without allocating one.
    fn push_field(&mut self, arg: Arg) {
        self.longest = self.longest.saturating_add(1);
        if let Some([last]) = self.columns.last_mut().map(Vec::as_mut_slice) {
            last.push(arg);
        } else {
            self.columns.push(vec![vec![arg]]);
        }
    }

    /// The one shape when every column expands one way, moved rather
    /// than copied.
    fn into_only_shape(self) -> Result<Vec<Arg>, Columns> {
        if self.columns.iter().all(|c| c.len() == 1) {
            Ok(self.columns.into_iter().flatten().flatten().collect())
        } else {
            Err(self)
        }
    }
}

/// The bytes an expanded word holds (a piece of unknown text counts one).
/// What an expanded word costs against `max_expansion_bytes`: its text,
/// and [`PIECE_COST`] for every piece of it — a piece is an allocation
/// and a step of splitting whatever its length, so a list of thousands of
/// one-byte elements (`set -- "$@" "$@"` repeated) is charged for the
/// work it makes, not only for its few bytes.
fn xword_bytes(word: &XWord) -> u64 {
    word.iter()
        .map(|x| match x {
            X::Lit { text, .. } => u64::try_from(text.len()).unwrap_or(u64::MAX),
            X::Any { .. } | X::Break => 0,
        })
        .fold(0, u64::saturating_add)
        .saturating_add(PIECE_COST.saturating_mul(word.len() as u64))
}

/// Bytes an expanded piece costs beyond its text (see [`xword_bytes`]).
pub(crate) const PIECE_COST: u64 = 32;

/// Adds a field list to the shapes, merging with one of the same form.
fn merge_shape(shapes: &mut Vec<Vec<Arg>>, fields: Vec<Arg>) {
    for shape in shapes.iter_mut() {
        let same_form = shape.len() == fields.len()
            && shape.iter().zip(fields.iter()).all(|(a, b)| {
                matches!(
                    (a, b),
                    (Arg::Field(_), Arg::Field(_)) | (Arg::Unknown(_), Arg::Unknown(_))
                )
            });
        if same_form {
            for (a, b) in shape.iter_mut().zip(fields) {
                match (a, b) {
                    (Arg::Field(v), Arg::Field(w)) => v.merge(&w),
                    (Arg::Unknown(f), Arg::Unknown(g)) => f.extend(&g),
                    _ => {}
                }
            }
            return;
        }
    }
    shapes.push(fields);
}

/// One character of a field, and whether pathname expansion acts on it.
#[derive(Debug, Clone, PartialEq)]
enum Piece {
    Char(char, bool),
    Any(Sources),
}

fn to_pieces(xw: &XWord) -> Vec<Piece> {
    let mut out = Vec::new();
    for x in xw {
        match x {
            X::Lit { text, quoted, .. } => {
                out.extend(text.chars().map(|c| Piece::Char(c, !quoted)))
            }
            X::Any { from, .. } => out.push(Piece::Any(from.clone())),
            X::Break => out.push(Piece::Char(' ', false)),
        }
    }
    out
}

/// A field as text; with `glob`, active `*`, `?` and `[…]` become pattern
/// pieces.
fn pattern_text(pieces: &[Piece], glob: bool) -> Text {
    let mut t = Text::default();
    let mut i = 0;
    while let Some(p) = pieces.get(i) {
        i += 1;
        match p {
            Piece::Any(from) => t.push(Seg::Any(from.clone())),
            Piece::Char(c, active) if glob && *active => match c {
                '*' => t.push(Seg::Star),
                '?' => t.push(Seg::Quest),
                '[' => match class_end(pieces, i) {
                    Some(end) => {
                        let inner: String = pieces
                            .get(i..end)
                            .unwrap_or(&[])
                            .iter()
                            .map(|p| match p {
                                Piece::Char(c, true) => c.to_string(),
                                Piece::Char(c, false) => format!("\\{c}"),
                                Piece::Any(_) => String::new(),
                            })
                            .collect();
                        t.push(Seg::Class(inner));
                        i = end + 1;
                    }
                    None => t.push_char('['),
                },
                other => t.push_char(*other),
            },
            Piece::Char(c, _) => t.push_char(*c),
        }
    }
    t
}

/// The index of the `]` closing a bracket expression whose body starts at
/// `start`.
fn class_end(pieces: &[Piece], start: usize) -> Option<usize> {
    let mut k = start;
    if matches!(pieces.get(k), Some(Piece::Char('!' | '^', true))) {
        k += 1;
    }
    if matches!(pieces.get(k), Some(Piece::Char(']', true))) {
        k += 1;
    }
    while let Some(p) = pieces.get(k) {
        match p {
            Piece::Char(']', true) => return Some(k),
            Piece::Char('/', _) | Piece::Any(_) => return None,
            Piece::Char('[', true) if matches!(pieces.get(k + 1), Some(Piece::Char(':', true))) => {
                // `[:alpha:]` inside the expression.
                let mut j = k + 2;
                while let Some(q) = pieces.get(j) {
                    if matches!(q, Piece::Char(':', true))
                        && matches!(pieces.get(j + 1), Some(Piece::Char(']', true)))
                    {
                        break;
                    }
                    j += 1;
                }
                k = j + 2;
                continue;
            }
            Piece::Char(_, _) => {}
        }
        k += 1;
    }
    None
}

/// `NAME=rest` when `text` starts like an assignment.
fn assignment_like(text: &str) -> Option<(&str, &str)> {
    let (name, rest) = text.split_once('=')?;
    let valid = name
        .chars()
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    valid.then_some((name, rest))
}

/// A text as expansion pieces. A pattern character in a stored text
/// stands for what pathname expansion matched when the text was made
/// (`for f in ~/*`, `A=(~/*)`, `set -- ~/*`): quoting the expansion later
/// (`"$f"`) does not make it one literal name, so it stays a pattern.
pub(crate) fn text_x(t: &Text, quoted: bool) -> XWord {
    t.segs
        .iter()
        .map(|s| match s {
            Seg::Lit(text) => lit(text, quoted, !quoted),
            Seg::Any(from) => X::Any {
                quoted,
                from: from.clone(),
            },
            Seg::Star => lit("*", false, false),
            Seg::Quest => lit("?", false, false),
            Seg::Class(c) => lit(&format!("[{c}]"), false, false),
        })
        .collect()
}

/// A variable's scalar value: its candidates (an array's first element).
pub(crate) fn binding_value(var: &Var) -> Value {
    let mut out: Vec<Text> = Vec::new();
    for b in &var.vals {
        match b {
            Binding::Unset => out.push(Text::default()),
            Binding::Str(t) => out.push(t.clone()),
            Binding::Arr(items) => out.push(items.first().cloned().unwrap_or_default()),
            Binding::Unknown(from) => out.push(Text::any(from.clone())),
        }
    }
    Value::from_candidates(out).unwrap_or_else(|| Value::known(""))
}

/// What a command substitution yields: the output without its trailing
/// newlines, or unknown text from the commands that printed it.
pub(crate) fn output_value(out: &Output) -> Value {
    match &out.text {
        Some(text) => {
            let candidates = text
                .candidates()
                .iter()
                .map(|t| {
                    let mut t = t.clone();
                    if let Some(Seg::Lit(last)) = t.segs.last_mut() {
                        while last.ends_with('\n') {
                            last.pop();
                        }
                    }
                    if matches!(t.segs.last(), Some(Seg::Lit(l)) if l.is_empty()) {
                        t.segs.pop();
                    }
                    t
                })
                .collect();
            Value::from_candidates(candidates).unwrap_or_else(|| Value::known(""))
        }
        None => Value::text(Text::any(out.from.clone())),
    }
}

/// `{a,b}` and `{1..3}` expansion over atoms, within its budgets: at most
/// `max_words` words, and every word it looks at (scanned and copied once)
/// is charged to the meter's `max_expansion_bytes`, so a long word copied
/// many times stops there rather than filling memory. Each refusal is
/// recorded on the meter.
struct Braces<'a, 'm> {
    out: Vec<Vec<Atom<'a>>>,
    max_words: usize,
    meter: &'m mut super::budget::Meter,
    stopped: bool,
}

impl<'a> Braces<'a, '_> {
    fn too_many_words(&mut self) {
        self.stopped = true;
        let max = self.max_words;
        self.meter.exceeded(
            "max_fields",
            format!("brace expansion makes more than {max} words"),
        );
    }

    fn expand(&mut self, word: &[Atom<'a>], depth: usize) {
        if self.stopped {
            return;
        }
        if self.out.len() >= self.max_words {
            self.too_many_words();
            return;
        }
        if !self
            .meter
            .expansion(u64::try_from(word.len()).unwrap_or(u64::MAX))
        {
            self.stopped = true;
            return;
        }
        if depth > 64 {
            self.too_many_words();
            self.out.push(word.to_vec());
            return;
        }
        let Some((open, close, commas)) = find_brace(word) else {
            self.out.push(word.to_vec());
            return;
        };
        let pre = word.get(..open).unwrap_or(&[]);
        let post = word.get(close + 1..).unwrap_or(&[]);
        let inner = word.get(open + 1..close).unwrap_or(&[]);
        let alternatives: Vec<Vec<Atom<'a>>> = if commas.is_empty() {
            match sequence(inner, self.max_words) {
                Some(items) if items.is_empty() => {
                    self.too_many_words();
                    return;
                }
                Some(items) => items
                    .into_iter()
                    .map(|s| s.chars().map(Atom::C).collect())
                    .collect(),
                None => {
                    self.out.push(word.to_vec());
                    return;
                }
            }
        } else {
            let mut alts = Vec::new();
            let mut start = open + 1;
            for cut in commas.into_iter().chain(std::iter::once(close)) {
                alts.push(word.get(start..cut).unwrap_or(&[]).to_vec());
                start = cut + 1;
            }
            alts
        };
        for alt in alternatives {
            let mut next: Vec<Atom<'a>> = pre.to_vec();
            next.extend(alt);
            next.extend(post.iter().cloned());
            self.expand(&next, depth + 1);
            if self.stopped {
                return;
            }
        }
    }
}

/// The first `{…}` that brace expansion acts on: a top-level comma or a
/// sequence inside. One pass pairs every brace (a stack of the open ones,
/// each with the commas directly inside it), so a word of unclosed braces
/// costs its length, not its length squared; the first opening brace, in
/// word order, whose pair expands wins.
fn find_brace(word: &[Atom<'_>]) -> Option<(usize, usize, Vec<usize>)> {
    let mut open: Vec<(usize, Vec<usize>)> = Vec::new();
    let mut first: Option<(usize, usize, Vec<usize>)> = None;
    for (k, a) in word.iter().enumerate() {
        match a {
            Atom::C('{') => open.push((k, Vec::new())),
            Atom::C(',') => {
                if let Some((_, commas)) = open.last_mut() {
                    commas.push(k);
                }
            }
            Atom::C('}') => {
                let Some((start, commas)) = open.pop() else {
                    continue;
                };
                // `${` opens a parameter expansion, not a brace expansion
                // (it still pairs with its `}`).
                let dollar = start > 0 && word.get(start - 1) == Some(&Atom::C('$'));
                let expands = !dollar
                    && (!commas.is_empty()
                        || sequence(word.get(start + 1..k).unwrap_or(&[]), 0).is_some());
                if expands && first.as_ref().is_none_or(|(f, _, _)| start < *f) {
                    first = Some((start, k, commas));
                }
            }
            Atom::C(_) | Atom::P(_) => {}
        }
    }
    first
}

/// The text of a word that every expansion leaves as it is: one unquoted
/// literal of characters that brace, tilde and pathname expansion never act
/// on (`rm`, `-rf`, `src/main.rs`). Most words are like that; they skip the
/// general machinery, which would give the same one field.
fn plain_literal(word: &WordAst) -> Option<&str> {
    match word.parts.as_slice() {
        [Part::Lit(t)]
            if !t.is_empty()
                && t.bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b"-_./:=,+%@".contains(&b)) =>
        {
            Some(t)
        }
        _ => None,
    }
}

/// A way with an unquoted unknown part at `at`: its fields are unknown,
/// except that text before the hole that cannot split starts the first.
fn split_at_hole(xw: &XWord, at: usize, state: &State) -> Vec<Arg> {
    let mut all = Sources::none();
    for x in xw {
        if let X::Any { from, .. } = x {
            all.extend(from);
        }
    }
    // Text before the hole that cannot split: the first field
    // starts with it (`https://localhost:$PORT/` → `https://localhost:…`).
    let head = xw.get(..at).unwrap_or(&[]);
    let solid = head
        .iter()
        .all(|x| matches!(x, X::Lit { split: false, .. } | X::Any { quoted: true, .. }))
        && head
            .iter()
            .any(|x| matches!(x, X::Lit { text, .. } if !text.is_empty()));
    if solid {
        let mut pieces = to_pieces(&head.to_vec());
        pieces.push(Piece::Any(all.clone()));
        let glob = !state.opts.noglob;
        return vec![
            Arg::Field(Value::text(pattern_text(&pieces, glob))),
            Arg::Unknown(all),
        ];
    }
    vec![Arg::Unknown(all)]
}

/// The fields of a way with known `ifs` (before pathname expansion).
fn ifs_fields(xw: &XWord, ifs: &str) -> Vec<Vec<Piece>> {
    let mut fields: Vec<Vec<Piece>> = Vec::new();
    let mut current: Vec<Piece> = Vec::new();
    let mut started = false;
    let mut after_ws_delim = false;
    for x in xw {
        match x {
            X::Break => {
                if started {
                    fields.push(std::mem::take(&mut current));
                }
                started = false;
            }
            X::Any { from, .. } => {
                current.push(Piece::Any(from.clone()));
                started = true;
                after_ws_delim = false;
            }
            X::Lit {
                text,
                quoted,
                split,
            } => {
                if *quoted {
                    started = true;
                    after_ws_delim = false;
                    current.extend(text.chars().map(|c| Piece::Char(c, false)));
                    continue;
                }
                for c in text.chars() {
                    if *split && ifs.contains(c) {
                        let ws = c == ' ' || c == '\t' || c == '\n';
                        if ws {
                            if started {
                                fields.push(std::mem::take(&mut current));
                                started = false;
                                after_ws_delim = true;
                            }
                        } else {
                            if !after_ws_delim || started {
                                fields.push(std::mem::take(&mut current));
                            }
                            started = false;
                            after_ws_delim = false;
                        }
                    } else {
                        current.push(Piece::Char(c, true));
                        started = true;
                        after_ws_delim = false;
                    }
                }
            }
        }
    }
    if started {
        fields.push(current);
    }
    fields
}

/// An array item `[N]=value` with a literal decimal index: the index and
/// the value's word.
fn indexed_item(item: &WordAst) -> Option<(usize, WordAst)> {
    let (first, rest) = item.parts.split_first()?;
    let Part::Lit(text) = first else { return None };
    let inner = text.strip_prefix('[')?;
    let (index, after) = inner.split_once("]=")?;
    if index.is_empty() || !index.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let at: usize = index.parse().ok()?;
    let mut parts = Vec::with_capacity(item.parts.len());
    if !after.is_empty() {
        parts.push(Part::Lit(after.to_owned()));
    }
    parts.extend(rest.iter().cloned());
    Some((at, WordAst { parts }))
}

#[cfg(test)]
mod tests {
    use super::super::budget::{Limits, Meter};
    use super::super::state::Known;
    use super::*;

    #[test]
    fn plain_literals_expand_as_the_general_path_does() {
        let known = Known {
            home: "/home/dev".to_owned(),
            user: Some("dev".to_owned()),
            vars: Vec::new(),
        };
        let mut interp = Interp::new(known, Meter::new(Limits::DEFAULT));
        let mut state = State::new(Value::known("/srv/app"));
        for w in [
            "rm",
            "-rf",
            "src/main.rs",
            "a=b",
            "--opt=x:y",
            "x,y",
            "+%@",
            "..",
            ".",
        ] {
            let word = WordAst::literal(w, false);
            assert!(plain_literal(&word).is_some(), "{w}");
            let fast = interp.expand_word(&word, &mut state);
            let general = interp.expand_word_general(&word, &mut state);
            assert_eq!(fast, general, "{w}");
        }
        for w in [
            "{a,b}", "~", "~/x", "*.rs", "a?", "[ab]", "a=~/x", "a b", "",
        ] {
            assert!(plain_literal(&WordAst::literal(w, false)).is_none(), "{w}");
        }
    }
}

/// What reaches a command's standard output, after its redirections.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Stdout {
    /// What the command prints.
    Output,
    /// Nothing: it goes to a file.
    Elsewhere,
    /// Only another descriptor's bytes (`2>&1 >/dev/null`): not known.
    Unknown,
    /// What the command prints, and another descriptor's bytes among it
    /// (`2>&1`): the known part stays (`echo 'rm -rf ~' 2>&1 | sh` is still
    /// read), the rest is not known.
    OutputAndUnknown,
}
