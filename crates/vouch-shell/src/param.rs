//! Parameter expansion: `$x`, `${x}` and every `${…}` operator — defaults,
//! assignment, alternatives, prefix and suffix removal, pattern
//! replacement, substrings, case modification, transformations, lengths,
//! indirection, arrays and the positional parameters.
//!
//! An operator on a known value is computed exactly as bash would; on a
//! value that is not known the result is unknown (with the same sources, so
//! data flow is kept), except where the operator decides by itself
//! (`${x:-/}` is `/` when `x` may be empty).

use super::ast::{Anchor, CaseMode, Index, ParamExp, ParamName, ParamOp, WordAst};
use super::expand::{RepPiece, X, XWord, binding_value, text_x};
use super::glob;
use super::interp::Interp;
use super::state::{Binding, State};
use super::value::{Sources, Text, Value};

/// One candidate of a parameter before its operator.
#[derive(Debug, Clone, PartialEq)]
enum Base {
    Unset,
    Str(Text),
    /// Set to something nobody knows (possibly empty or unset).
    Unknown(Sources),
    /// `$@`, `${a[@]}`: elements; `star` for `$*` / `${a[*]}`.
    List(Vec<Text>, bool),
    /// A list nobody knows.
    UnknownList(Sources, bool),
}

/// The expanded operands of one `${…}`, each expanded at most once however
/// many candidates the parameter has: expanding them again per candidate
/// made nested operators cost two or four times as much per level.
#[derive(Default)]
struct ParamOperands {
    /// `${v:-w}`, `${v:+w}`: the word's candidates were given already.
    word_given: bool,
    /// `${v:=w}`: the word's value.
    value: Option<Value>,
    /// `${v#p}`, `${v/p/r}`, `${v^p}`: the pattern's candidates.
    patterns: Option<Vec<Text>>,
    /// `${v/p/r}`: the replacement's value and, when it is one known
    /// string, its pieces.
    replacement: Option<(Value, Option<Vec<RepPiece>>)>,
    /// `${v:off:len}`: the offset and the length, where known.
    range: Option<(Option<i64>, Option<Option<i64>>)>,
}

impl Interp {
    pub(crate) fn param(&mut self, exp: &ParamExp, quoted: bool, state: &mut State) -> Vec<XWord> {
        if !self.meter.step() {
            return vec![vec![X::Any {
                quoted,
                from: Sources::none(),
            }]];
        }
        let bases = self.bases(exp, state);
        let limit = self.meter.limits.max_candidates as usize;
        let mut operands = ParamOperands::default();
        let mut out: Vec<XWord> = Vec::new();
        for base in bases {
            let results = if exp.length {
                vec![length(&base)]
            } else {
                self.operate(exp, base, quoted, state, &mut operands)
            };
            for r in results {
                // Each candidate is converted and compared with the ones
                // before it: a step each, so that an expansion of many
                // candidates, nested or repeated in loops, costs the step
                // budget in proportion to its work.
                if !self.meter.step() {
                    break;
                }
                if out.len() >= limit {
                    self.meter.exceeded(
                        "max_candidates",
                        format!("a parameter expansion has more than {limit} values"),
                    );
                    break;
                }
                let mut xw = self.x_of(&r, quoted, state);
                if quoted && xw.is_empty() && !matches!(r, Base::List(_, false)) {
                    // `"$unset"` is still an (empty) quoted word, and so is
                    // `"$*"` of no parameters; only `"$@"` vanishes.
                    xw.push(X::Lit {
                        text: String::new(),
                        quoted: true,
                        split: false,
                    });
                }
                if !out.contains(&xw) {
                    out.push(xw);
                }
            }
        }
        if out.is_empty() {
            out.push(Vec::new());
        }
        out
    }

    /// The candidate values of the named parameter.
    fn bases(&mut self, exp: &ParamExp, state: &mut State) -> Vec<Base> {
        if exp.indirect && !matches!(exp.op, ParamOp::Names | ParamOp::Keys) {
            let direct = ParamExp {
                indirect: false,
                length: false,
                op: ParamOp::None,
                index: None,
                name: exp.name.clone(),
            };
            let mut out = Vec::new();
            for b in self.bases(&direct, state) {
                match b {
                    Base::Str(t) => match t.as_known() {
                        Some(name) if !name.is_empty() => {
                            let target = ParamExp {
                                indirect: false,
                                length: false,
                                op: ParamOp::None,
                                index: exp.index.clone(),
                                name: parse_name(name),
                            };
                            out.extend(self.bases(&target, state));
                        }
                        _ => out.push(Base::Unknown(t.sources())),
                    },
                    Base::Unset => out.push(Base::Unset),
                    other => out.push(Base::Unknown(sources_of(&other))),
                }
            }
            return out;
        }
        match &exp.name {
            ParamName::Var(name) => self.var_bases(name, exp.index.as_ref(), state),
            ParamName::Positional(0) => state
                .arg0
                .candidates()
                .iter()
                .cloned()
                .map(Base::Str)
                .collect(),
            ParamName::Positional(n) => match &state.positional {
                // After a pattern (any number of words) the count is lost.
                Some(list) if shifted_by_pattern(list, (*n as usize).saturating_sub(1)) => {
                    vec![Base::Unknown(Sources::none())]
                }
                Some(list) => match list.get((*n as usize).saturating_sub(1)) {
                    Some(v) => v.candidates().iter().cloned().map(Base::Str).collect(),
                    None => vec![Base::Unset],
                },
                None => vec![Base::Unknown(Sources::none())],
            },
            ParamName::Special(c @ ('@' | '*')) => match &state.positional {
                Some(list) => self.list_bases(list, *c == '*'),
                None => vec![Base::UnknownList(Sources::none(), *c == '*')],
            },
            ParamName::Special('#') => match &state.positional {
                Some(list) if shifted_by_pattern(list, list.len()) => {
                    vec![Base::Unknown(Sources::none())]
                }
                Some(list) => vec![Base::Str(Text::lit(&list.len().to_string()))],
                None => vec![Base::Unknown(Sources::none())],
            },
            ParamName::Special('0') => state
                .arg0
                .candidates()
                .iter()
                .cloned()
                .map(Base::Str)
                .collect(),
            ParamName::Special(_) => vec![Base::Unknown(Sources::none())],
        }
    }

    /// A list of positional values as candidate lists (each element may
    /// have several candidates: every combination, bounded).
    fn list_bases(&mut self, list: &[Value], star: bool) -> Vec<Base> {
        let mut ways: Vec<Vec<Text>> = vec![Vec::new()];
        let limit = self.meter.limits.max_candidates as usize;
        for v in list {
            if let [only] = v.candidates() {
                // One candidate: every way grows in place (cloning each
                // way per element made a long list quadratic).
                for w in &mut ways {
                    w.push(only.clone());
                }
                continue;
            }
            let mut next = Vec::new();
            for w in &ways {
                for c in v.candidates() {
                    if next.len() >= limit {
                        self.meter.exceeded(
                            "max_candidates",
                            format!("the positional parameters combine in more than {limit} ways"),
                        );
                        break;
                    }
                    let mut n = w.clone();
                    n.push(c.clone());
                    next.push(n);
                }
            }
            ways = next;
        }
        ways.into_iter().map(|w| Base::List(w, star)).collect()
    }

    fn var_bases(&mut self, name: &str, index: Option<&Index>, state: &mut State) -> Vec<Base> {
        // `FUNCNAME`: the functions being called, innermost first (`bash -c`
        // adds no `main`); `${FUNCNAME[0]}` is the current one.
        let var = if name == "FUNCNAME" && !state.vars.contains_key(name) {
            let binding = if state.calls.is_empty() {
                Binding::Unset
            } else {
                Binding::Arr(std::rc::Rc::new(
                    state.calls.iter().rev().map(|f| Text::lit(f)).collect(),
                ))
            };
            super::state::Var::one(binding, false)
        } else {
            state.get(name, &self.known)
        };
        let element = match index {
            Some(Index::Expr(w)) => {
                let text = self.expand_value(w, state);
                let n = text.as_known().map(str::to_owned);
                Some(n.and_then(|t| self.arith(&t, state)))
            }
            _ => None,
        };
        let mut out = Vec::new();
        for b in &var.vals {
            let base = match (b, index) {
                (Binding::Unset, Some(Index::At | Index::Star)) => {
                    Base::List(Vec::new(), matches!(index, Some(Index::Star)))
                }
                (Binding::Unset, _) => Base::Unset,
                (Binding::Str(t), Some(Index::At | Index::Star)) => {
                    Base::List(vec![t.clone()], matches!(index, Some(Index::Star)))
                }
                (Binding::Str(t), Some(Index::Expr(_))) => match element {
                    Some(Some(0)) => Base::Str(t.clone()),
                    Some(Some(_)) => Base::Unset,
                    _ => Base::Unknown(t.sources()),
                },
                (Binding::Str(t), None) => Base::Str(t.clone()),
                (Binding::Arr(items), Some(Index::At | Index::Star)) => {
                    Base::List((**items).clone(), matches!(index, Some(Index::Star)))
                }
                (Binding::Arr(items), Some(Index::Expr(_))) => match element {
                    Some(Some(n)) => {
                        let at = if n < 0 {
                            i64::try_from(items.len()).ok().map(|len| len + n)
                        } else {
                            Some(n)
                        };
                        match at
                            .and_then(|k| usize::try_from(k).ok())
                            .and_then(|k| items.get(k))
                        {
                            Some(t) => Base::Str(t.clone()),
                            None => Base::Unset,
                        }
                    }
                    _ => Base::Unknown(Sources::none()),
                },
                (Binding::Arr(items), None) => match items.first() {
                    Some(t) => Base::Str(t.clone()),
                    None => Base::Unset,
                },
                (Binding::Unknown(from), Some(Index::At | Index::Star)) => {
                    Base::UnknownList(from.clone(), matches!(index, Some(Index::Star)))
                }
                (Binding::Unknown(from), _) => Base::Unknown(from.clone()),
            };
            if !out.contains(&base) {
                out.push(base);
            }
        }
        out
    }

    /// Applies the operator to one candidate; returns result candidates.
    fn operate(
        &mut self,
        exp: &ParamExp,
        base: Base,
        quoted: bool,
        state: &mut State,
        operands: &mut ParamOperands,
    ) -> Vec<Base> {
        match &exp.op {
            ParamOp::None => vec![base],
            ParamOp::Default { colon, word } | ParamOp::Error { colon, word } => {
                let alternative = matches!(exp.op, ParamOp::Default { .. });
                match nullness(&base, *colon) {
                    Null::Yes if alternative => self.word_bases(word, quoted, state, operands),
                    Null::Yes => vec![Base::Unknown(Sources::none())],
                    Null::No => vec![base],
                    Null::Maybe if alternative => {
                        let mut out = vec![base];
                        out.extend(self.word_bases(word, quoted, state, operands));
                        out
                    }
                    Null::Maybe => vec![base],
                }
            }
            ParamOp::Assign { colon, word } => {
                self.assign_default(exp, *colon, word, base, state, operands)
            }
            ParamOp::Alt { colon, word } => match nullness(&base, *colon) {
                Null::Yes => vec![Base::Str(Text::default())],
                Null::No => self.word_bases(word, quoted, state, operands),
                Null::Maybe => {
                    let mut out = vec![Base::Str(Text::default())];
                    out.extend(self.word_bases(word, quoted, state, operands));
                    out
                }
            },
            ParamOp::RemovePrefix { longest, pattern } => {
                let patterns = self.patterns(pattern, state, operands);
                self.each_text(base, |me, t| me.remove(t, &patterns, *longest, true))
            }
            ParamOp::RemoveSuffix { longest, pattern } => {
                let patterns = self.patterns(pattern, state, operands);
                self.each_text(base, |me, t| me.remove(t, &patterns, *longest, false))
            }
            ParamOp::Replace {
                all,
                anchor,
                pattern,
                with,
            } => {
                let patterns = self.patterns(pattern, state, operands);
                let (replacement, template) = self.replacement(with, state, operands);
                self.each_text(base, |me, t| {
                    me.replace(
                        t,
                        &patterns,
                        (&replacement, template.as_deref()),
                        *all,
                        *anchor,
                    )
                })
            }
            ParamOp::Substring { offset, length } => {
                let range = self.range(offset, length.as_deref(), state, operands);
                self.substring_of(exp, base, range, state)
            }
            ParamOp::Case { mode, all, pattern } => {
                let patterns = if pattern.parts.is_empty() {
                    Vec::new()
                } else {
                    self.patterns(pattern, state, operands)
                };
                self.case_each(base, *mode, *all, &patterns)
            }
            ParamOp::Transform('P') => self.prompt_each(base, state),
            ParamOp::Transform(c) => {
                let c = *c;
                self.each_text(base, |_, t| vec![transform(t, c)])
            }
            ParamOp::Names => vec![Base::UnknownList(Sources::none(), false)],
            ParamOp::Keys => vec![keys(base)],
            ParamOp::Bad => vec![Base::Unknown(Sources::none())],
        }
    }

    /// `${v:off:len}`, and `${@:off:len}` over the positional parameters.
    fn substring_of(
        &mut self,
        exp: &ParamExp,
        base: Base,
        (off, len): (Option<i64>, Option<Option<i64>>),
        state: &mut State,
    ) -> Vec<Base> {
        if !matches!(exp.name, ParamName::Special('@' | '*')) || exp.index.is_some() {
            return vec![substring(base, off, len)];
        }
        let patterns = state
            .positional
            .as_ref()
            .map(|list| list.iter().map(Value::has_pattern).collect::<Vec<bool>>());
        positional_substring(base, off, len, &state.arg0, patterns.as_deref())
    }

    /// `${v:=word}`: when `v` is (maybe) null it takes the word's value,
    /// which is also the expansion.
    fn assign_default(
        &mut self,
        exp: &ParamExp,
        colon: bool,
        word: &WordAst,
        base: Base,
        state: &mut State,
        operands: &mut ParamOperands,
    ) -> Vec<Base> {
        let null = nullness(&base, colon);
        if matches!(null, Null::No) {
            return vec![base];
        }
        let value = match &operands.value {
            Some(value) => value.clone(),
            None => {
                let value = self.expand_value(word, state);
                operands.value = Some(value.clone());
                value
            }
        };
        if let ParamName::Var(name) = &exp.name {
            let mut vals: Vec<Binding> = value
                .candidates()
                .iter()
                .cloned()
                .map(Binding::Str)
                .collect();
            // Values the variable keeps (other candidates, not null
            // ones) stay candidates.
            for b in state.get(name, &self.known).vals {
                let kept = match &b {
                    Binding::Unset => Base::Unset,
                    Binding::Str(t) => Base::Str(t.clone()),
                    Binding::Arr(items) => Base::Str(items.first().cloned().unwrap_or_default()),
                    Binding::Unknown(from) => Base::Unknown(from.clone()),
                };
                if !matches!(nullness(&kept, colon), Null::Yes) {
                    vals.push(b);
                }
            }
            let vals = self.bounded(vals);
            let exported = state.get(name, &self.known).exported;
            state.set(name, super::state::Var { vals, exported });
        }
        let mut out: Vec<Base> = value.into_candidates().into_iter().map(Base::Str).collect();
        if matches!(null, Null::Maybe) {
            out.push(base);
        }
        out
    }

    /// An operand word as result candidates. Quoted or not, the word is
    /// kept as text here: the caller's splitting acts on unquoted ones.
    ///
    /// The caller gathers the results of every base into one set, so the
    /// word's candidates are given once, to the first base that takes them,
    /// and nothing to the next: `${a:-${a:-…}}` nested ten deep under loops
    /// copied and compared every candidate of the word once per candidate
    /// of the base, at every level (a `bash_nesting` fuzz input: 0.8 s with
    /// the clock off).
    fn word_bases(
        &mut self,
        word: &WordAst,
        _quoted: bool,
        state: &mut State,
        operands: &mut ParamOperands,
    ) -> Vec<Base> {
        if operands.word_given {
            return Vec::new();
        }
        let done: Vec<Base> = self
            .expand_value(word, state)
            .into_candidates()
            .into_iter()
            .map(Base::Str)
            .collect();
        operands.word_given = true;
        done
    }

    /// `${v/p/r}`'s replacement, expanded once.
    fn replacement(
        &mut self,
        with: &WordAst,
        state: &mut State,
        operands: &mut ParamOperands,
    ) -> (Value, Option<Vec<RepPiece>>) {
        if let Some(done) = &operands.replacement {
            return done.clone();
        }
        let done = self.expand_replacement(with, state);
        operands.replacement = Some(done.clone());
        done
    }

    /// `${v:off:len}`'s offset and length, evaluated once.
    fn range(
        &mut self,
        offset: &str,
        length: Option<&str>,
        state: &mut State,
        operands: &mut ParamOperands,
    ) -> (Option<i64>, Option<Option<i64>>) {
        if let Some(range) = operands.range {
            return range;
        }
        let off = self.arith_text(offset, state);
        let len = length.map(|l| self.arith_text(l, state));
        operands.range = Some((off, len));
        (off, len)
    }

    /// A pattern operand's candidates, expanded once.
    fn patterns(
        &mut self,
        pattern: &WordAst,
        state: &mut State,
        operands: &mut ParamOperands,
    ) -> Vec<Text> {
        if let Some(done) = &operands.patterns {
            return done.clone();
        }
        let done = self.expand_pattern(pattern, state);
        operands.patterns = Some(done.clone());
        done
    }

    fn arith_text(&mut self, text: &str, state: &mut State) -> Option<i64> {
        let word = self.lex_text(text);
        let expanded = self.expand_value(&word, state);
        let expr = expanded.as_known()?.to_owned();
        self.arith(&expr, state)
    }

    /// Applies `f` to a scalar, or to every element of a list.
    /// `${a^p}`, `${a,,p}`, …: each character is matched against each
    /// pattern, charged to `max_match_work` before the work (a case change
    /// inside loops of `${a=…}` once took seconds uncounted).
    fn case_each(&mut self, base: Base, mode: CaseMode, all: bool, patterns: &[Text]) -> Vec<Base> {
        self.each_text(base, |me, t| {
            let chars = t.as_known().map_or(0, |s| s.chars().count() as u64);
            let work = patterns
                .iter()
                .map(|p| {
                    glob::cost(p, 1)
                        .saturating_add(MATCH_CALL_COST)
                        .saturating_mul(chars)
                })
                .fold(0u64, u64::saturating_add);
            if work > 0 && !me.meter.match_work(work) {
                return vec![Text::any(t.sources())];
            }
            vec![case(t, mode, all, patterns)]
        })
    }

    /// `${v@P}`: the value expanded as a prompt, its substitutions run;
    /// what it prints is runtime data.
    fn prompt_each(&mut self, base: Base, state: &State) -> Vec<Base> {
        self.each_text(base, |interp, t| {
            if let Some(text) = t.as_known() {
                interp.prompt_expansion(text, state);
            }
            vec![Text::any(t.sources())]
        })
    }

    fn each_text(&mut self, base: Base, f: impl Fn(&mut Self, &Text) -> Vec<Text>) -> Vec<Base> {
        match base {
            Base::Str(t) => f(self, &t).into_iter().map(Base::Str).collect(),
            Base::Unset => f(self, &Text::default())
                .into_iter()
                .map(Base::Str)
                .collect(),
            Base::List(items, star) => {
                let mut out = Vec::new();
                for item in &items {
                    let r = f(self, item);
                    out.push(r.into_iter().next().unwrap_or_default());
                }
                vec![Base::List(out, star)]
            }
            other => vec![other],
        }
    }

    fn remove(&mut self, t: &Text, patterns: &[Text], longest: bool, prefix: bool) -> Vec<Text> {
        let Some(subject) = t.as_known() else {
            return vec![Text::any(t.sources())];
        };
        let mut out = Vec::new();
        for p in patterns {
            if p.has_any()
                || !self.meter.match_work(
                    glob::cost(p, subject.len()).saturating_mul(subject.len() as u64 + 1),
                )
            {
                out.push(Text::any(Sources::none()));
                continue;
            }
            let result = if prefix {
                let ends = glob::prefix_matches(p, subject, false);
                let cut = if longest { ends.last() } else { ends.first() };
                cut.map_or(subject, |&c| subject.get(c..).unwrap_or(""))
            } else {
                let starts = glob::suffix_matches(p, subject, false);
                let cut = if longest {
                    starts.last()
                } else {
                    starts.first()
                };
                cut.map_or(subject, |&c| subject.get(..c).unwrap_or(""))
            };
            out.push(Text::lit(result));
        }
        if out.is_empty() {
            out.push(t.clone());
        }
        out
    }

    fn replace(
        &mut self,
        t: &Text,
        patterns: &[Text],
        (with, template): (&Value, Option<&[RepPiece]>),
        all: bool,
        anchor: Option<Anchor>,
    ) -> Vec<Text> {
        let (Some(subject), Some(rep)) = (t.as_known(), template) else {
            let mut from = t.sources();
            from.extend(&with.sources());
            return vec![Text::any(from)];
        };
        let mut out = Vec::new();
        for p in patterns {
            let work = glob::cost(p, subject.len()).saturating_mul(subject.len() as u64 + 1);
            if p.has_any() || !self.meter.match_work(work) {
                out.push(Text::any(Sources::none()));
                continue;
            }
            out.push(Text::lit(&replace_known(subject, p, rep, all, anchor)));
        }
        if out.is_empty() {
            out.push(t.clone());
        }
        out
    }

    /// Turns result candidates into expansion pieces.
    fn x_of(&mut self, base: &Base, quoted: bool, state: &State) -> XWord {
        match base {
            Base::Unset => Vec::new(),
            Base::Str(t) => text_x(t, quoted),
            Base::Unknown(from) => vec![X::Any {
                quoted,
                from: from.clone(),
            }],
            Base::UnknownList(from, _) => vec![X::Any {
                quoted: false,
                from: from.clone(),
            }],
            Base::List(items, star) => {
                if *star && quoted {
                    let ifs = binding_value(&state.get("IFS", &self.known));
                    let sep = match ifs.as_known() {
                        Some(s) => s.chars().next().map(String::from).unwrap_or_default(),
                        None => " ".to_owned(),
                    };
                    let mut joined = Text::default();
                    for (k, item) in items.iter().enumerate() {
                        if k > 0 {
                            joined.push_str(&sep);
                        }
                        joined.append(item);
                    }
                    return text_x(&joined, true);
                }
                let mut out = Vec::new();
                for (k, item) in items.iter().enumerate() {
                    if k > 0 {
                        out.push(X::Break);
                    }
                    let pieces = text_x(item, quoted);
                    if quoted && pieces.is_empty() {
                        out.push(X::Lit {
                            text: String::new(),
                            quoted: true,
                            split: false,
                        });
                    }
                    out.extend(pieces);
                }
                out
            }
        }
    }
}

fn sources_of(base: &Base) -> Sources {
    match base {
        Base::Unset => Sources::none(),
        Base::Str(t) => t.sources(),
        Base::Unknown(from) | Base::UnknownList(from, _) => from.clone(),
        Base::List(items, _) => {
            let mut s = Sources::none();
            for i in items {
                s.extend(&i.sources());
            }
            s
        }
    }
}

fn parse_name(name: &str) -> ParamName {
    if let Ok(n) = name.parse::<u32>() {
        return ParamName::Positional(n);
    }
    let mut chars = name.chars();
    if let (Some(c), None) = (chars.next(), chars.next())
        && "@*#?-$!".contains(c)
    {
        return ParamName::Special(c);
    }
    ParamName::Var(name.to_owned())
}

/// Whether a candidate counts as unset (or, with `colon`, empty).
enum Null {
    Yes,
    No,
    Maybe,
}

fn nullness(base: &Base, colon: bool) -> Null {
    match base {
        Base::Unset => Null::Yes,
        Base::Str(t) => match t.as_known() {
            Some("") if colon => Null::Yes,
            Some(_) => Null::No,
            None if colon && t.known_prefix().is_empty() && t.known_suffix().is_empty() => {
                Null::Maybe
            }
            None => Null::No,
        },
        Base::Unknown(_) => Null::Maybe,
        Base::List(items, _) => {
            if items.is_empty() || colon && items.iter().all(|t| t.as_known() == Some("")) {
                Null::Yes
            } else {
                Null::No
            }
        }
        Base::UnknownList(..) => Null::Maybe,
    }
}

fn length(base: &Base) -> Base {
    match base {
        Base::Unset => Base::Str(Text::lit("0")),
        Base::Str(t) => match t.as_known() {
            Some(s) => Base::Str(Text::lit(&s.chars().count().to_string())),
            None => Base::Unknown(Sources::none()),
        },
        Base::List(items, _) => Base::Str(Text::lit(&items.len().to_string())),
        Base::Unknown(_) | Base::UnknownList(..) => Base::Unknown(Sources::none()),
    }
}

fn substring(base: Base, offset: Option<i64>, length: Option<Option<i64>>) -> Base {
    let (Some(off), len) = (offset, length) else {
        return Base::Unknown(sources_of(&base));
    };
    if let Some(None) = len {
        return Base::Unknown(sources_of(&base));
    }
    let len = len.flatten();
    let slice = |count: usize| -> Option<(usize, usize)> {
        let count_i = i64::try_from(count).ok()?;
        let start = if off < 0 { count_i + off } else { off };
        if start < 0 || start > count_i {
            return Some((0, 0));
        }
        let end = match len {
            None => count_i,
            Some(l) if l < 0 => count_i + l,
            Some(l) => (start + l).min(count_i),
        };
        if end < start {
            return None;
        }
        Some((usize::try_from(start).ok()?, usize::try_from(end).ok()?))
    };
    match base {
        Base::Str(t) => match t.as_known() {
            Some(s) => {
                let chars: Vec<char> = s.chars().collect();
                match slice(chars.len()) {
                    Some((a, b)) => Base::Str(Text::lit(
                        &chars.get(a..b).unwrap_or(&[]).iter().collect::<String>(),
                    )),
                    None => Base::Unknown(Sources::none()),
                }
            }
            None => Base::Unknown(t.sources()),
        },
        Base::Unset => Base::Str(Text::default()),
        Base::List(items, star) => {
            // `${@:1:2}` counts from `$1`; `${a[@]:1}` from element 0.
            match slice(items.len()) {
                Some((a, b)) => Base::List(items.get(a..b).unwrap_or(&[]).to_vec(), star),
                None => Base::UnknownList(Sources::none(), star),
            }
        }
        Base::UnknownList(from, star) => Base::UnknownList(from, star),
        other => Base::Unknown(sources_of(&other)),
    }
}

/// True when one of the first `before` positional parameters is a pattern,
/// which stands for any number of words: what comes after it is not at a
/// known position.
fn shifted_by_pattern(list: &[Value], before: usize) -> bool {
    list.iter().take(before).any(Value::has_pattern)
}

/// `${@:off:len}`: the positional parameters counted from `$0` (offset 0
/// includes it, `-1` is the last one); a negative length is an expansion
/// error in bash, so the result is unknown.
fn positional_substring(
    base: Base,
    offset: Option<i64>,
    length: Option<Option<i64>>,
    arg0: &Value,
    patterns: Option<&[bool]>,
) -> Vec<Base> {
    let Base::List(items, star) = base else {
        return vec![substring(base, offset, length)];
    };
    let len = match length {
        None => None,
        Some(Some(l)) if l >= 0 => Some(l),
        Some(_) => return vec![Base::UnknownList(Sources::none(), star)],
    };
    let Some(off) = offset else {
        return vec![Base::UnknownList(Sources::none(), star)];
    };
    // A pattern stands for any number of words: before the slice it moves
    // where the slice starts (and the count a negative offset is from),
    // inside a slice of some length where it ends.
    let pattern_in = |range: std::ops::Range<usize>| {
        patterns.is_some_and(|p| p.get(range).unwrap_or(&[]).contains(&true))
    };
    let before = usize::try_from(off.saturating_sub(1)).unwrap_or(0);
    if pattern_in(
        0..if off < 0 {
            items.len()
        } else {
            before.min(items.len())
        },
    ) {
        return vec![Base::UnknownList(Sources::none(), star)];
    }
    // Offsets over `$0 $1 … $n`; `count` is n + 1.
    let count = i64::try_from(items.len())
        .unwrap_or(i64::MAX)
        .saturating_add(1);
    let start = if off < 0 {
        count.saturating_add(off)
    } else {
        off
    };
    if start < 0 || start >= count {
        return vec![Base::List(Vec::new(), star)];
    }
    let end = len.map_or(count, |l| start.saturating_add(l).min(count));
    let from = usize::try_from(start.saturating_sub(1).max(0)).unwrap_or(usize::MAX);
    let to = usize::try_from(end.saturating_sub(1).max(0)).unwrap_or(0);
    if len.is_some() && pattern_in(from..to.max(from)) {
        return vec![Base::UnknownList(Sources::none(), star)];
    }
    let tail: Vec<Text> = items.get(from..to.max(from)).unwrap_or(&[]).to_vec();
    if start > 0 || end == 0 {
        return vec![Base::List(tail, star)];
    }
    // The slice starts at `$0`: one list per candidate of `$0`.
    arg0.candidates()
        .iter()
        .map(|a0| {
            let mut list = vec![a0.clone()];
            list.extend(tail.iter().cloned());
            Base::List(list, star)
        })
        .collect()
}

/// What one call of the matcher costs beyond its pattern and subject (it
/// sets up its states): a case change matches every character on its own.
const MATCH_CALL_COST: u64 = 128;

fn case(t: &Text, mode: CaseMode, all: bool, patterns: &[Text]) -> Text {
    let Some(s) = t.as_known() else {
        return Text::any(t.sources());
    };
    let mut out = String::with_capacity(s.len());
    let mut buf = [0u8; 4];
    let compiled: Vec<glob::Compiled<'_>> = patterns
        .iter()
        .map(|p| glob::Compiled::new(p, glob::Mode::STRING))
        .collect();
    for (k, c) in s.chars().enumerate() {
        let one: &str = c.encode_utf8(&mut buf);
        let selected =
            (all || k == 0) && (compiled.is_empty() || compiled.iter().any(|m| m.matches(one)));
        if !selected {
            out.push(c);
            continue;
        }
        match mode {
            CaseMode::Upper => out.extend(c.to_uppercase()),
            CaseMode::Lower => out.extend(c.to_lowercase()),
            CaseMode::Toggle => {
                if c.is_uppercase() {
                    out.extend(c.to_lowercase());
                } else {
                    out.extend(c.to_uppercase());
                }
            }
        }
    }
    Text::lit(&out)
}

fn transform(t: &Text, op: char) -> Text {
    let Some(s) = t.as_known() else {
        return Text::any(t.sources());
    };
    match op {
        'Q' | 'K' | 'k' => Text::lit(&shell_quote(s)),
        'E' => Text::lit(&super::lex::decode_ansi_c(s)),
        'U' => Text::lit(&s.to_uppercase()),
        'L' => Text::lit(&s.to_lowercase()),
        'u' => {
            let mut chars = s.chars();
            let mut out: String = chars
                .next()
                .map(|c| c.to_uppercase().collect())
                .unwrap_or_default();
            out.push_str(chars.as_str());
            Text::lit(&out)
        }
        'a' => Text::lit(""),
        _ => Text::any(Sources::none()),
    }
}

/// `'…'` quoting as `${x@Q}` produces it.
pub(crate) fn shell_quote(s: &str) -> String {
    let mut out = String::from("'");
    for c in s.chars() {
        if c == '\'' {
            out.push_str("'\\''");
        } else {
            out.push(c);
        }
    }
    out.push('\'');
    out
}

/// The replacement for one match: the template with `&` filled in.
fn fill(rep: &[RepPiece], matched: &str) -> String {
    let mut out = String::new();
    for piece in rep {
        match piece {
            RepPiece::Text(t) => out.push_str(t),
            RepPiece::Matched => out.push_str(matched),
        }
    }
    out
}

fn replace_known(
    subject: &str,
    pattern: &Text,
    rep: &[RepPiece],
    all: bool,
    anchor: Option<Anchor>,
) -> String {
    let longest_at = |start: usize| -> Option<usize> {
        let rest = subject.get(start..)?;
        let ends = glob::prefix_matches(pattern, rest, false);
        ends.last()
            .copied()
            .filter(|&e| e > 0 || pattern.is_empty())
    };
    // An empty value that the pattern matches is replaced whole, anchored
    // or not (`B=; ${B//*/Z}` is `Z`, as in bash's `pat_subst`).
    if subject.is_empty() && glob::matches(pattern, "", glob::Mode::STRING) {
        return fill(rep, "");
    }
    match anchor {
        Some(Anchor::Start) => match longest_at(0) {
            Some(end) => format!(
                "{}{}",
                fill(rep, subject.get(..end).unwrap_or("")),
                subject.get(end..).unwrap_or("")
            ),
            None => subject.to_owned(),
        },
        Some(Anchor::End) => {
            for (start, _) in subject
                .char_indices()
                .chain(std::iter::once((subject.len(), ' ')))
            {
                if glob::matches(
                    pattern,
                    subject.get(start..).unwrap_or(""),
                    glob::Mode::STRING,
                ) {
                    return format!(
                        "{}{}",
                        subject.get(..start).unwrap_or(""),
                        fill(rep, subject.get(start..).unwrap_or(""))
                    );
                }
            }
            subject.to_owned()
        }
        None => {
            let mut out = String::new();
            let mut pos = 0;
            let mut replaced = false;
            while pos <= subject.len() {
                if (!replaced || all)
                    && let Some(end) = longest_at(pos)
                    && end > 0
                {
                    out.push_str(&fill(rep, subject.get(pos..pos + end).unwrap_or("")));
                    pos += end;
                    replaced = true;
                    continue;
                }
                match subject.get(pos..).and_then(|r| r.chars().next()) {
                    Some(c) => {
                        out.push(c);
                        pos += c.len_utf8();
                    }
                    None => break,
                }
            }
            out
        }
    }
}

/// `${!a[@]}`: the indices of an array (`0` for a scalar).
fn keys(base: Base) -> Base {
    match base {
        Base::List(items, star) => Base::List(
            (0..items.len())
                .map(|k| Text::lit(&k.to_string()))
                .collect(),
            star,
        ),
        Base::Str(_) => Base::List(vec![Text::lit("0")], false),
        Base::Unset => Base::List(Vec::new(), false),
        other => Base::UnknownList(sources_of(&other), false),
    }
}
