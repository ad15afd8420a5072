//! Bash's word lexer: turns the source text of one word into [`WordAst`]
//! parts, with bash's quoting rules (backslash, single and double quotes,
//! `$'…'`, `$"…"`), every parameter-expansion operator, arithmetic and
//! command substitution.
//!
//! The grammar only tells where a word and its command substitutions start
//! and end ([`Subst`]); everything inside a word is read here, so quoting
//! and `${…}` follow bash rather than the grammar's approximations.

use std::rc::Rc;

use super::ast::{
    Anchor, CaseMode, Index, ParamExp, ParamName, ParamOp, Part, Subst, SubstKind, WordAst,
};

/// How the text being lexed is quoted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    Unquoted,
    /// Inside `"…"`.
    Double,
    /// The operand of a `${…}` inside double quotes: quoted, `"` only groups.
    DoubleOperand,
    /// An expanding here-document body: like double quotes, but `"` is plain.
    HereDoc,
}

impl Mode {
    fn quoted(self) -> bool {
        !matches!(self, Mode::Unquoted)
    }
}

pub(crate) struct Lexer<'s> {
    src: &'s str,
    /// Sorted by start.
    substs: &'s [Subst],
    /// Offsets where the text holds something the lexer cannot read (an
    /// unterminated quote, a substitution the grammar did not see).
    pub problems: Vec<usize>,
    /// How many `${…}` may still nest inside one another (the meter's
    /// depth left when the lexer was made): the lexer recurses once per
    /// level, so deeper ones are read as an unknown expansion.
    depth_left: u32,
    /// A `${…}` nested deeper than allowed was read as unknown: the
    /// caller records `max_syntax_depth`.
    pub too_deep: bool,
    /// Start bytes of the substitutions read into parts.
    pub taken: Vec<usize>,
}

fn is_name_start(c: u8) -> bool {
    c.is_ascii_alphabetic() || c == b'_'
}

fn is_name_char(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'_'
}

/// Accumulates parts, merging neighbouring literal text of one kind.
#[derive(Default)]
struct Out {
    parts: Vec<Part>,
}

impl Out {
    fn lit(&mut self, text: &str, quoted: bool) {
        if text.is_empty() && !quoted {
            return;
        }
        match (self.parts.last_mut(), quoted) {
            (Some(Part::Lit(t)), false) | (Some(Part::Quoted(t)), true) => t.push_str(text),
            (_, false) => self.parts.push(Part::Lit(text.to_owned())),
            (_, true) => self.parts.push(Part::Quoted(text.to_owned())),
        }
    }

    fn push(&mut self, part: Part) {
        self.parts.push(part);
    }

    /// Appends parts, merging quoted text with quoted text.
    fn extend(&mut self, parts: Vec<Part>) {
        for part in parts {
            match part {
                Part::Quoted(text) => self.lit(&text, true),
                Part::Lit(text) => self.lit(&text, false),
                other => self.push(other),
            }
        }
    }

    fn word(self) -> WordAst {
        WordAst { parts: self.parts }
    }
}

impl<'s> Lexer<'s> {
    /// A lexer of `src` whose substitutions the grammar found are
    /// `substs`, nesting `${…}` at most `depth_left` deep.
    pub(crate) fn new(src: &'s str, substs: &'s [Subst], depth_left: u32) -> Self {
        Lexer {
            src,
            substs,
            problems: Vec::new(),
            depth_left,
            too_deep: false,
            taken: Vec::new(),
        }
    }

    fn byte(&self, pos: usize) -> Option<u8> {
        self.src.as_bytes().get(pos).copied()
    }

    fn char_at(&self, pos: usize) -> Option<char> {
        self.src.get(pos..).and_then(|s| s.chars().next())
    }

    fn text(&self, start: usize, end: usize) -> &'s str {
        self.src.get(start..end).unwrap_or("")
    }

    /// The substitution starting at `pos`, recorded as read.
    fn take_subst(&mut self, pos: usize) -> Option<&'s Subst> {
        let found = self.subst_at(pos)?;
        self.taken.push(pos);
        Some(found)
    }

    fn subst_at(&self, pos: usize) -> Option<&'s Subst> {
        let at = self.substs.binary_search_by_key(&pos, |s| s.start).ok()?;
        self.substs.get(at)
    }

    /// A word in unquoted context.
    pub(crate) fn word(&mut self, start: usize, end: usize) -> WordAst {
        let mut out = Out::default();
        self.run(start, end, Mode::Unquoted, &mut out);
        out.word()
    }

    /// An expanding here-document body.
    pub(crate) fn heredoc(&mut self, start: usize, end: usize) -> WordAst {
        let mut out = Out::default();
        self.run(start, end, Mode::HereDoc, &mut out);
        out.word()
    }

    fn run(&mut self, start: usize, end: usize, mode: Mode, out: &mut Out) {
        let mut pos = start;
        while pos < end {
            pos = self.one(pos, end, mode, out);
        }
    }

    /// Lexes one element at `pos`; returns the position after it.
    fn one(&mut self, pos: usize, end: usize, mode: Mode, out: &mut Out) -> usize {
        let Some(c) = self.byte(pos) else {
            return end;
        };
        match c {
            b'\\' => self.backslash(pos, end, mode, out),
            b'\'' if mode == Mode::Unquoted => self.single_quoted(pos, end, out),
            b'"' if mode == Mode::Unquoted => {
                let mut inner = Out::default();
                let after = self.double_quoted(pos + 1, end, &mut inner);
                if inner.parts.is_empty() {
                    // `""` is an empty quoted string, not nothing.
                    out.lit("", true);
                }
                out.extend(inner.parts);
                after
            }
            b'"' if mode == Mode::DoubleOperand => pos + 1,
            b'$' => self.dollar(pos, end, mode, out),
            b'`' => self.backtick(pos, end, mode.quoted(), out),
            b'<' | b'>' if mode == Mode::Unquoted && self.byte(pos + 1) == Some(b'(') => {
                match self.take_subst(pos) {
                    Some(s) => {
                        out.push(Part::Proc {
                            body: Rc::clone(&s.body),
                            output: s.kind == SubstKind::ProcOut,
                        });
                        s.end.min(end).max(pos + 1)
                    }
                    None => {
                        out.lit(self.text(pos, pos + 1), false);
                        pos + 1
                    }
                }
            }
            _ if super::shortcuts() => {
                // A run of characters none of the arms above act on, taken
                // at once (one character at a time gives the same text).
                let run = self
                    .text(pos, end)
                    .bytes()
                    .position(|b| b"\\'\"$`<>".contains(&b))
                    .unwrap_or(end - pos)
                    .max(1);
                match self.src.get(pos..pos + run) {
                    Some(text) => {
                        out.lit(text, mode.quoted());
                        pos + run
                    }
                    None => self.one_char(pos, mode, out),
                }
            }
            _ => self.one_char(pos, mode, out),
        }
    }

    /// One ordinary character at `pos`; returns the position after it.
    fn one_char(&self, pos: usize, mode: Mode, out: &mut Out) -> usize {
        let ch = self.char_at(pos).unwrap_or('\u{fffd}');
        let mut buf = [0u8; 4];
        out.lit(ch.encode_utf8(&mut buf), mode.quoted());
        pos + ch.len_utf8().max(1)
    }

    fn backslash(&mut self, pos: usize, end: usize, mode: Mode, out: &mut Out) -> usize {
        let Some(next) = self.char_at(pos + 1).filter(|_| pos + 1 < end) else {
            out.lit("\\", mode.quoted());
            return pos + 1;
        };
        let after = pos + 1 + next.len_utf8();
        if next == '\n' {
            // Line continuation: removed everywhere it is special.
            return after;
        }
        let escapes = match mode {
            Mode::Unquoted => true,
            Mode::Double | Mode::DoubleOperand => matches!(next, '$' | '`' | '"' | '\\'),
            Mode::HereDoc => matches!(next, '$' | '`' | '\\'),
        };
        let mut buf = [0u8; 4];
        if escapes {
            out.lit(next.encode_utf8(&mut buf), true);
        } else {
            out.lit("\\", mode.quoted());
            out.lit(next.encode_utf8(&mut buf), mode.quoted());
        }
        after
    }

    fn single_quoted(&mut self, pos: usize, end: usize, out: &mut Out) -> usize {
        let body_start = pos + 1;
        match self.text(body_start, end).find('\'') {
            Some(len) => {
                out.lit(self.text(body_start, body_start + len), true);
                body_start + len + 1
            }
            None => {
                self.problems.push(pos);
                out.lit(self.text(body_start, end), true);
                end
            }
        }
    }

    /// Lexes after an opening `"` up to the closing one; returns the
    /// position after it.
    fn double_quoted(&mut self, start: usize, end: usize, out: &mut Out) -> usize {
        let mut pos = start;
        while pos < end {
            if self.byte(pos) == Some(b'"') {
                return pos + 1;
            }
            pos = self.one(pos, end, Mode::Double, out);
        }
        self.problems.push(start.saturating_sub(1));
        end
    }

    fn backtick(&mut self, pos: usize, end: usize, quoted: bool, out: &mut Out) -> usize {
        match self.take_subst(pos) {
            Some(s) => {
                out.push(Part::Cmd {
                    body: Rc::clone(&s.body),
                    quoted,
                });
                s.end.min(end).max(pos + 1)
            }
            None => {
                self.problems.push(pos);
                out.lit("`", quoted);
                pos + 1
            }
        }
    }

    fn dollar(&mut self, pos: usize, end: usize, mode: Mode, out: &mut Out) -> usize {
        let quoted = mode.quoted();
        let next = if pos + 1 < end {
            self.byte(pos + 1)
        } else {
            None
        };
        match next {
            Some(b'\'') if mode == Mode::Unquoted => self.ansi_c(pos, end, out),
            Some(b'"') if mode == Mode::Unquoted => {
                // `$"…"`: a translated string, which is a double-quoted one.
                let mut inner = Out::default();
                let after = self.double_quoted(pos + 2, end, &mut inner);
                if inner.parts.is_empty() {
                    out.lit("", true);
                }
                out.extend(inner.parts);
                after
            }
            Some(b'(') if self.byte(pos + 2) == Some(b'(') && self.subst_at(pos).is_none() => {
                self.arith(pos, pos + 3, end, b')', quoted, out)
            }
            Some(b'[') => self.arith(pos, pos + 2, end, b']', quoted, out),
            Some(b'(') => match self.take_subst(pos) {
                Some(s) => {
                    out.push(Part::Cmd {
                        body: Rc::clone(&s.body),
                        quoted,
                    });
                    s.end.min(end).max(pos + 2)
                }
                None => {
                    self.problems.push(pos);
                    out.lit("$", quoted);
                    pos + 1
                }
            },
            Some(b'{') => self.braced(pos, end, mode, out),
            Some(c) if is_name_start(c) => {
                let mut stop = pos + 1;
                while stop < end && self.byte(stop).is_some_and(is_name_char) {
                    stop += 1;
                }
                let name = self.text(pos + 1, stop).to_owned();
                out.push(simple_param(ParamName::Var(name), quoted));
                stop
            }
            Some(c) if c.is_ascii_digit() => {
                out.push(simple_param(
                    ParamName::Positional(u32::from(c - b'0')),
                    quoted,
                ));
                pos + 2
            }
            Some(c @ (b'@' | b'*' | b'#' | b'?' | b'-' | b'$' | b'!' | b'_')) => {
                out.push(simple_param(ParamName::Special(char::from(c)), quoted));
                pos + 2
            }
            _ => {
                out.lit("$", quoted);
                pos + 1
            }
        }
    }

    fn ansi_c(&mut self, pos: usize, end: usize, out: &mut Out) -> usize {
        let body_start = pos + 2;
        let bytes = self.src.as_bytes();
        let mut k = body_start;
        while k < end {
            match bytes.get(k) {
                Some(b'\\') => k += 2,
                Some(b'\'') => {
                    let inner = self.text(body_start, k);
                    out.lit(&decode_ansi_c(inner), true);
                    return k + 1;
                }
                Some(_) => k += 1,
                None => break,
            }
        }
        self.problems.push(pos);
        out.lit(&decode_ansi_c(self.text(body_start, end)), true);
        end
    }

    /// `$((…))` or `$[…]`: the expression runs to the matching close.
    fn arith(
        &mut self,
        pos: usize,
        body_start: usize,
        end: usize,
        close: u8,
        quoted: bool,
        out: &mut Out,
    ) -> usize {
        let mut depth = 0usize;
        let mut k = body_start;
        let mut substs = Vec::new();
        while k < end {
            if let Some(s) = self.take_subst(k) {
                // Kept with its place in the expression, so that expanding
                // the expression runs it there, once.
                substs.push(Subst {
                    start: k - body_start,
                    end: s.end.min(end).max(k + 1) - body_start,
                    body: Rc::clone(&s.body),
                    kind: s.kind,
                });
                k = s.end.max(k + 1);
                continue;
            }
            match self.byte(k) {
                Some(b'(') => depth += 1,
                Some(c) if c == close && close == b']' && depth == 0 => {
                    let expr = self.text(body_start, k).to_owned();
                    out.push(Part::Arith {
                        expr,
                        substs,
                        quoted,
                    });
                    return k + 1;
                }
                Some(b')') if close == b')' => {
                    if depth == 0 && self.byte(k + 1) == Some(b')') {
                        let expr = self.text(body_start, k).to_owned();
                        out.push(Part::Arith {
                            expr,
                            substs,
                            quoted,
                        });
                        return k + 2;
                    }
                    depth = depth.saturating_sub(1);
                }
                _ => {}
            }
            k += 1;
        }
        self.problems.push(pos);
        out.push(Part::Arith {
            expr: self.text(body_start, end).to_owned(),
            substs,
            quoted,
        });
        end
    }

    /// The position of the `}` closing the `${` at `pos`.
    fn brace_end(&mut self, pos: usize, end: usize, mode: Mode) -> Option<usize> {
        let mut depth = 0usize;
        let mut k = pos + 2;
        let mut in_double = mode.quoted();
        while k < end {
            if let Some(s) = self.subst_at(k) {
                k = s.end.max(k + 1);
                continue;
            }
            match self.byte(k)? {
                b'\\' => k += 1,
                b'\'' if !in_double => {
                    k += self.text(k + 1, end).find('\'').map_or(end, |n| n + 1);
                }
                b'"' if mode == Mode::Unquoted => in_double = !in_double,
                b'$' if self.byte(k + 1) == Some(b'{') => {
                    depth += 1;
                    k += 1;
                }
                b'}' => {
                    if depth == 0 {
                        return Some(k);
                    }
                    depth -= 1;
                }
                _ => {}
            }
            k += 1;
        }
        None
    }

    fn braced(&mut self, pos: usize, end: usize, mode: Mode, out: &mut Out) -> usize {
        let Some(close) = self.brace_end(pos, end, mode) else {
            self.problems.push(pos);
            out.lit(self.text(pos, end), mode.quoted());
            return end;
        };
        let Some(left) = self.depth_left.checked_sub(1) else {
            self.too_deep = true;
            out.push(Part::Param {
                exp: Box::new(bad_param()),
                quoted: mode.quoted(),
            });
            return close + 1;
        };
        self.depth_left = left;
        let exp = self.param_body(pos + 2, close, mode);
        self.depth_left = left + 1;
        out.push(Part::Param {
            exp: Box::new(exp),
            quoted: mode.quoted(),
        });
        close + 1
    }

    /// A name at `pos`: identifier, digits, or one special character.
    fn name(&self, pos: usize, end: usize) -> Option<(ParamName, usize)> {
        let c = self.byte(pos).filter(|_| pos < end)?;
        if is_name_start(c) {
            let mut k = pos + 1;
            while k < end && self.byte(k).is_some_and(is_name_char) {
                k += 1;
            }
            return Some((ParamName::Var(self.text(pos, k).to_owned()), k));
        }
        if c.is_ascii_digit() {
            let mut k = pos + 1;
            while k < end && self.byte(k).is_some_and(|b| b.is_ascii_digit()) {
                k += 1;
            }
            let n = self.text(pos, k).parse().unwrap_or(u32::MAX);
            return Some((ParamName::Positional(n), k));
        }
        if matches!(
            c,
            b'@' | b'*' | b'#' | b'?' | b'-' | b'$' | b'!' | b'0' | b'_'
        ) {
            return Some((ParamName::Special(char::from(c)), pos + 1));
        }
        None
    }

    /// `[…]` at `pos`; returns the index and the position after `]`.
    fn subscript(&mut self, pos: usize, end: usize) -> Option<(Index, usize)> {
        if self.byte(pos) != Some(b'[') {
            return None;
        }
        let mut depth = 0usize;
        let mut k = pos + 1;
        while k < end {
            match self.byte(k)? {
                b'[' => depth += 1,
                b']' if depth == 0 => {
                    let inner = self.text(pos + 1, k);
                    let index = match inner {
                        "@" => Index::At,
                        "*" => Index::Star,
                        _ => Index::Expr(self.word(pos + 1, k)),
                    };
                    return Some((index, k + 1));
                }
                b']' => depth -= 1,
                _ => {}
            }
            k += 1;
        }
        None
    }

    /// The inside of `${…}`, from `start` to the closing brace.
    fn param_body(&mut self, start: usize, end: usize, mode: Mode) -> ParamExp {
        let text = self.text(start, end);
        let bad = bad_param;
        if text == "#" {
            return plain(ParamName::Special('#'));
        }
        if let Some(rest_start) = text.strip_prefix('#').map(|_| start + 1)
            && let Some((name, after)) = self.name(rest_start, end)
        {
            let (index, after) = match self.subscript(after, end) {
                Some((i, a)) => (Some(i), a),
                None => (None, after),
            };
            if after == end {
                return ParamExp {
                    name,
                    index,
                    indirect: false,
                    length: true,
                    op: ParamOp::None,
                };
            }
        }
        let (indirect, name_start) = match text.strip_prefix('!') {
            Some(rest) if !rest.is_empty() => (true, start + 1),
            _ => (false, start),
        };
        let Some((name, after)) = self.name(name_start, end) else {
            return bad();
        };
        if indirect {
            let tail = self.text(after, end);
            if matches!(tail, "*" | "@") && matches!(name, ParamName::Var(_)) {
                return ParamExp {
                    op: ParamOp::Names,
                    ..plain(name)
                };
            }
            if matches!(tail, "[@]" | "[*]") {
                return ParamExp {
                    op: ParamOp::Keys,
                    ..plain(name)
                };
            }
        }
        let (index, after) = match (&name, self.subscript(after, end)) {
            (ParamName::Var(_), Some((i, a))) => (Some(i), a),
            _ => (None, after),
        };
        let op = self.operator(after, end, mode);
        ParamExp {
            name,
            index,
            indirect,
            length: false,
            op,
        }
    }

    /// A pattern operand of `${…}`: pattern characters stay active even
    /// inside double quotes (only quoting inside the operand makes them
    /// literal).
    fn pattern_operand(&mut self, start: usize, end: usize) -> WordAst {
        let mut out = Out::default();
        self.run(start, end, Mode::Unquoted, &mut out);
        out.word()
    }

    /// An operand word of `${…}`.
    fn operand(&mut self, start: usize, end: usize, mode: Mode) -> WordAst {
        let mut out = Out::default();
        let inner = if mode.quoted() {
            Mode::DoubleOperand
        } else {
            Mode::Unquoted
        };
        self.run(start, end, inner, &mut out);
        out.word()
    }

    fn operator(&mut self, pos: usize, end: usize, mode: Mode) -> ParamOp {
        let rest = self.text(pos, end);
        if rest.is_empty() {
            return ParamOp::None;
        }
        let word = |lexer: &mut Self, skip: usize| lexer.operand(pos + skip, end, mode);
        let b = rest.as_bytes();
        match (b.first().copied(), b.get(1).copied()) {
            (Some(b':'), Some(op @ (b'-' | b'=' | b'?' | b'+'))) => {
                let w = word(self, 2);
                value_op(op, true, w)
            }
            (Some(op @ (b'-' | b'=' | b'?' | b'+')), _) => {
                let w = word(self, 1);
                value_op(op, false, w)
            }
            (Some(b':'), _) => {
                let body = self.text(pos + 1, end);
                match top_level_colon(body) {
                    Some(at) => ParamOp::Substring {
                        offset: body.get(..at).unwrap_or("").to_owned(),
                        length: Some(body.get(at + 1..).unwrap_or("").to_owned()),
                    },
                    None => ParamOp::Substring {
                        offset: body.to_owned(),
                        length: None,
                    },
                }
            }
            (Some(b'#'), second) => {
                let longest = second == Some(b'#');
                let pattern = self.pattern_operand(pos + 1 + usize::from(longest), end);
                ParamOp::RemovePrefix { longest, pattern }
            }
            (Some(b'%'), second) => {
                let longest = second == Some(b'%');
                let pattern = self.pattern_operand(pos + 1 + usize::from(longest), end);
                ParamOp::RemoveSuffix { longest, pattern }
            }
            (Some(b'/'), second) => {
                let (all, anchor, skip) = match second {
                    Some(b'/') => (true, None, 2),
                    Some(b'#') => (false, Some(Anchor::Start), 2),
                    Some(b'%') => (false, Some(Anchor::End), 2),
                    _ => (false, None, 1),
                };
                let body_start = pos + skip;
                let split = self.replace_split(body_start, end);
                let pattern = self.pattern_operand(body_start, split.unwrap_or(end));
                // The replacement gets full quote removal even inside
                // double quotes (`"${v/a/\ }"` is ` `, `"${v/a/'q'}"` is
                // `q`) and tilde expansion (bash 5.2).
                let with = match split {
                    Some(at) => self.operand(at + 1, end, Mode::Unquoted),
                    None => WordAst::default(),
                };
                ParamOp::Replace {
                    all,
                    anchor,
                    pattern,
                    with,
                }
            }
            (Some(c @ (b'^' | b',' | b'~')), second) => {
                let all = second == Some(c);
                let mode_case = match c {
                    b'^' => CaseMode::Upper,
                    b',' => CaseMode::Lower,
                    _ => CaseMode::Toggle,
                };
                let pattern = self.pattern_operand(pos + 1 + usize::from(all), end);
                ParamOp::Case {
                    mode: mode_case,
                    all,
                    pattern,
                }
            }
            (Some(b'@'), Some(t)) if rest.len() == 2 => ParamOp::Transform(char::from(t)),
            _ => ParamOp::Bad,
        }
    }

    /// The `/` separating pattern and replacement in `${x/p/r}`.
    fn replace_split(&mut self, start: usize, end: usize) -> Option<usize> {
        let mut k = start;
        let mut depth = 0usize;
        while k < end {
            if let Some(s) = self.subst_at(k) {
                k = s.end.max(k + 1);
                continue;
            }
            match self.byte(k)? {
                b'\\' => k += 1,
                b'\'' => k += self.text(k + 1, end).find('\'').map_or(end, |n| n + 1),
                b'$' if self.byte(k + 1) == Some(b'{') => depth += 1,
                b'}' => depth = depth.saturating_sub(1),
                b'/' if depth == 0 => return Some(k),
                _ => {}
            }
            k += 1;
        }
        None
    }
}

/// A `${…}` that cannot be read (or is nested too deep to read): it
/// expands to something unknown.
fn bad_param() -> ParamExp {
    ParamExp {
        name: ParamName::Special('?'),
        index: None,
        indirect: false,
        length: false,
        op: ParamOp::Bad,
    }
}

fn simple_param(name: ParamName, quoted: bool) -> Part {
    Part::Param {
        exp: Box::new(plain(name)),
        quoted,
    }
}

fn plain(name: ParamName) -> ParamExp {
    ParamExp {
        name,
        index: None,
        indirect: false,
        length: false,
        op: ParamOp::None,
    }
}

fn value_op(op: u8, colon: bool, word: WordAst) -> ParamOp {
    match op {
        b'-' => ParamOp::Default { colon, word },
        b'=' => ParamOp::Assign { colon, word },
        b'?' => ParamOp::Error { colon, word },
        _ => ParamOp::Alt { colon, word },
    }
}

/// The `:` separating offset and length in `${x:o:l}`, outside parentheses
/// and a `?:` conditional.
fn top_level_colon(body: &str) -> Option<usize> {
    let mut depth = 0i32;
    let mut ternary = 0i32;
    for (i, c) in body.char_indices() {
        match c {
            '(' => depth += 1,
            ')' => depth -= 1,
            '?' if depth == 0 => ternary += 1,
            ':' if depth == 0 && ternary > 0 => ternary -= 1,
            ':' if depth == 0 => return Some(i),
            _ => {}
        }
    }
    None
}

/// Decodes the inside of an ANSI-C string (`$'…'` without the quotes).
pub fn decode_ansi_c(inner: &str) -> String {
    let mut out = String::new();
    let mut chars = inner.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        let Some(esc) = chars.next() else {
            out.push('\\');
            break;
        };
        match esc {
            'a' => out.push('\u{7}'),
            'b' => out.push('\u{8}'),
            'e' | 'E' => out.push('\u{1b}'),
            'f' => out.push('\u{c}'),
            'n' => out.push('\n'),
            'r' => out.push('\r'),
            't' => out.push('\t'),
            'v' => out.push('\u{b}'),
            '\\' | '\'' | '"' | '?' => out.push(esc),
            '0'..='7' => {
                let mut value = esc.to_digit(8).unwrap_or(0);
                for _ in 0..2 {
                    match chars.peek().and_then(|d| d.to_digit(8)) {
                        Some(d) => {
                            value = value * 8 + d;
                            chars.next();
                        }
                        None => break,
                    }
                }
                push_code(&mut out, value & 0xff);
            }
            'x' => match take_hex(&mut chars, 2) {
                Some(v) => push_code(&mut out, v),
                None => out.push_str("\\x"),
            },
            'u' => match take_hex(&mut chars, 4) {
                Some(v) => push_code(&mut out, v),
                None => out.push_str("\\u"),
            },
            'U' => match take_hex(&mut chars, 8) {
                Some(v) => push_code(&mut out, v),
                None => out.push_str("\\U"),
            },
            'c' => match chars.next() {
                Some(ctl) => push_code(&mut out, (ctl as u32) & 0x1f),
                None => out.push_str("\\c"),
            },
            other => {
                out.push('\\');
                out.push(other);
            }
        }
    }
    out
}

fn take_hex(chars: &mut std::iter::Peekable<std::str::Chars<'_>>, max: usize) -> Option<u32> {
    let mut value: Option<u32> = None;
    for _ in 0..max {
        match chars.peek().and_then(|d| d.to_digit(16)) {
            Some(d) => {
                value = Some(value.unwrap_or(0).saturating_mul(16).saturating_add(d));
                chars.next();
            }
            None => break,
        }
    }
    value
}

fn push_code(out: &mut String, code: u32) {
    // Bytes that are not valid scalar values decode to U+FFFD, which can match
    // nothing policy looks for: the command then stays with the model.
    out.push(char::from_u32(code).unwrap_or('\u{fffd}'));
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lex(text: &str) -> WordAst {
        let mut lexer = Lexer::new(text, &[], u32::MAX);
        let w = lexer.word(0, text.len());
        assert!(lexer.problems.is_empty(), "{text}: {:?}", lexer.problems);
        w
    }

    #[test]
    fn quoting() {
        assert_eq!(
            lex(r#"a'b c'"d\"e"\ f"#).parts,
            vec![
                Part::Lit("a".into()),
                Part::Quoted("b cd\"e ".into()),
                Part::Lit("f".into())
            ]
        );
        assert_eq!(lex("$'\\x72m'").parts, vec![Part::Quoted("rm".into())]);
        assert_eq!(lex("\"\"").parts, vec![Part::Quoted(String::new())]);
        assert_eq!(lex(r#""a\b""#).parts, vec![Part::Quoted("a\\b".into())]);
    }

    #[test]
    fn parameters() {
        let w = lex("${x:-a b}$1${10}$@");
        assert_eq!(w.parts.len(), 4);
        let Part::Param { exp, quoted } = &w.parts[0] else {
            panic!()
        };
        assert!(!quoted);
        assert_eq!(exp.name, ParamName::Var("x".into()));
        assert!(matches!(exp.op, ParamOp::Default { colon: true, .. }));
        let Part::Param { exp, .. } = &w.parts[2] else {
            panic!()
        };
        assert_eq!(exp.name, ParamName::Positional(10));
    }

    #[test]
    fn operators() {
        let op = |t: &str| {
            let w = lex(t);
            let Some(Part::Param { exp, .. }) = w.parts.first() else {
                panic!("{t}")
            };
            (**exp).clone()
        };
        assert!(op("${#x}").length);
        assert!(op("${!x}").indirect);
        assert_eq!(op("${!pre*}").op, ParamOp::Names);
        assert_eq!(op("${!a[@]}").op, ParamOp::Keys);
        assert!(matches!(
            op("${x##*/}").op,
            ParamOp::RemovePrefix { longest: true, .. }
        ));
        assert!(matches!(
            op("${x%/}").op,
            ParamOp::RemoveSuffix { longest: false, .. }
        ));
        assert!(matches!(
            op("${x//a/b}").op,
            ParamOp::Replace { all: true, .. }
        ));
        assert!(matches!(
            op("${x/#a/b}").op,
            ParamOp::Replace {
                anchor: Some(Anchor::Start),
                ..
            }
        ));
        assert!(matches!(op("${x:1:2}").op, ParamOp::Substring { .. }));
        assert!(matches!(
            op("${x^^}").op,
            ParamOp::Case {
                mode: CaseMode::Upper,
                all: true,
                ..
            }
        ));
        assert_eq!(op("${x@Q}").op, ParamOp::Transform('Q'));
        assert_eq!(op("${a[@]}").index, Some(Index::At));
        assert_eq!(
            op("${x:%}").op,
            ParamOp::Substring {
                offset: "%".into(),
                length: None
            }
        );
        assert_eq!(op("${#}").name, ParamName::Special('#'));
    }

    #[test]
    fn arithmetic() {
        let w = lex("$((1+(2)))x");
        assert!(matches!(&w.parts[0], Part::Arith { expr, .. } if expr == "1+(2)"));
        assert_eq!(w.parts[1], Part::Lit("x".into()));
    }

    #[test]
    fn unterminated_quote_is_a_problem() {
        let mut lexer = Lexer::new("'abc", &[], u32::MAX);
        lexer.word(0, 4);
        assert_eq!(lexer.problems, vec![0]);
    }
}
