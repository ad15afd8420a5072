//! Bash pattern matching: pathname expansion (`*` never crosses `/` nor
//! matches a leading `.`), `case` and `${x#pattern}` patterns (`*` matches
//! anything), with holes of unknown text.
//!
//! Matching runs as a set-of-states automaton over the pattern, so its cost
//! is the product of the two lengths and never exponential
//! (`touch ****************X` is one pass). Callers that match untrusted
//! patterns against many subjects charge the work to their budget with
//! [`cost`].

use super::value::{Arg, Seg, Text};

/// One pattern element.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Tok<'a> {
    Char(char),
    Star,
    Quest,
    Class(&'a str),
    /// A hole: any text, `/` and leading dots included.
    Any,
}

/// How a pattern is applied.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Mode {
    /// Pathname expansion: `*`, `?` and classes never match `/`, and a `.`
    /// starting a name is only matched by a literal `.` (unless `dotglob`).
    pub pathname: bool,
    pub dotglob: bool,
    pub nocase: bool,
}

impl Mode {
    pub const PATHNAME: Mode = Mode {
        pathname: true,
        dotglob: false,
        nocase: false,
    };
    pub const STRING: Mode = Mode {
        pathname: false,
        dotglob: false,
        nocase: false,
    };
}

fn tokens(text: &Text) -> Vec<Tok<'_>> {
    let mut out = Vec::new();
    for seg in &text.segs {
        match seg {
            Seg::Lit(s) => out.extend(s.chars().map(Tok::Char)),
            Seg::Any(_) => out.push(Tok::Any),
            Seg::Star => out.push(Tok::Star),
            Seg::Quest => out.push(Tok::Quest),
            Seg::Class(inner) => out.push(Tok::Class(inner)),
        }
    }
    out
}

/// Work units a match of `pattern` against `subject_len` characters costs.
pub fn cost(pattern: &Text, subject_len: usize) -> u64 {
    let pattern_len: usize = pattern
        .segs
        .iter()
        .map(|s| match s {
            Seg::Lit(t) => t.len(),
            Seg::Any(_) | Seg::Star | Seg::Quest | Seg::Class(_) => 1,
        })
        .sum();
    (pattern_len as u64 + 1).saturating_mul(subject_len as u64 + 1)
}

/// Does a bracket expression (the text between `[` and `]`) match `c`?
pub fn class_matches(inner: &str, c: char, nocase: bool) -> bool {
    let (negate, body) = match inner.strip_prefix(['!', '^']) {
        Some(rest) => (true, rest),
        None => (false, inner),
    };
    let chars: Vec<char> = body.chars().collect();
    let mut hit = false;
    let mut i = 0;
    while let Some(&first) = chars.get(i) {
        if first == '[' && chars.get(i + 1) == Some(&':') {
            let rest: String = chars.get(i + 2..).unwrap_or(&[]).iter().collect();
            if let Some(end) = rest.find(":]") {
                let name = rest.get(..end).unwrap_or("");
                hit |= posix_class(name, c);
                i += 2 + end + 2;
                continue;
            }
        }
        let (lo, step) = if first == '\\' {
            (chars.get(i + 1).copied().unwrap_or('\\'), 2)
        } else {
            (first, 1)
        };
        if chars.get(i + step) == Some(&'-')
            && let Some(&hi) = chars.get(i + step + 1)
        {
            hit |= (lo..=hi).contains(&c)
                || (nocase
                    && ((lo..=hi).contains(&c.to_ascii_lowercase())
                        || (lo..=hi).contains(&c.to_ascii_uppercase())));
            i += step + 2;
        } else {
            hit |= lo == c || (nocase && lo.eq_ignore_ascii_case(&c));
            i += step;
        }
    }
    hit != negate
}

fn posix_class(name: &str, c: char) -> bool {
    match name {
        "alpha" => c.is_alphabetic(),
        "digit" => c.is_ascii_digit(),
        "alnum" => c.is_alphanumeric(),
        "upper" => c.is_uppercase(),
        "lower" => c.is_lowercase(),
        "space" => c.is_whitespace(),
        "blank" => c == ' ' || c == '\t',
        "punct" => c.is_ascii_punctuation(),
        "print" => !c.is_control(),
        "graph" => !c.is_control() && !c.is_whitespace(),
        "cntrl" => c.is_control(),
        "xdigit" => c.is_ascii_hexdigit(),
        "word" => c.is_alphanumeric() || c == '_',
        // An unknown class name: bash treats the expression as not matching.
        _ => false,
    }
}

/// The automaton: which pattern positions are live.
struct Matcher<'a> {
    toks: Vec<Tok<'a>>,
    mode: Mode,
}

impl<'a> Matcher<'a> {
    fn new(pattern: &'a Text, mode: Mode) -> Self {
        Matcher {
            toks: tokens(pattern),
            mode,
        }
    }

    /// Adds `t` and every position reachable from it without consuming a
    /// character (stars and holes match the empty string).
    fn close(&self, t: usize, live: &mut [bool]) {
        let mut t = t;
        loop {
            match live.get_mut(t) {
                Some(slot) if !*slot => *slot = true,
                _ => return,
            }
            match self.toks.get(t) {
                Some(Tok::Star | Tok::Any) => t += 1,
                _ => return,
            }
        }
    }

    fn start(&self) -> Vec<bool> {
        let mut live = vec![false; self.toks.len() + 1];
        self.close(0, &mut live);
        live
    }

    /// One subject character; `name_start` tells whether it begins a name.
    fn step(&self, live: &[bool], c: char, name_start: bool) -> Vec<bool> {
        let mut next = vec![false; self.toks.len() + 1];
        let pathname = self.mode.pathname;
        let hidden = pathname && name_start && c == '.' && !self.mode.dotglob;
        // What a `*`, `?` or class may not consume here.
        let blocked = hidden || (pathname && c == '/');
        for (t, &on) in live.iter().enumerate() {
            if !on {
                continue;
            }
            let Some(tok) = self.toks.get(t) else {
                continue;
            };
            match *tok {
                Tok::Any => self.close(t, &mut next),
                Tok::Star => {
                    if !blocked {
                        self.close(t, &mut next);
                    }
                }
                Tok::Quest => {
                    if !blocked {
                        self.close(t + 1, &mut next);
                    }
                }
                Tok::Class(inner) => {
                    if !blocked && class_matches(inner, c, self.mode.nocase) {
                        self.close(t + 1, &mut next);
                    }
                }
                Tok::Char(p) => {
                    if p == c || (self.mode.nocase && p.eq_ignore_ascii_case(&c)) {
                        self.close(t + 1, &mut next);
                    }
                }
            }
        }
        next
    }

    fn run(&self, subject: &str) -> Vec<bool> {
        let mut live = self.start();
        let mut name_start = true;
        for c in subject.chars() {
            live = self.step(&live, c, name_start);
            if !live.iter().any(|&b| b) {
                return live;
            }
            name_start = c == '/';
        }
        live
    }

    fn accepts(&self, live: &[bool]) -> bool {
        live.get(self.toks.len()).copied().unwrap_or(false)
    }
}

/// A pattern written as text (`*.sqlite`, `id_[rd]sa`, `\*`) as a [`Text`].
pub fn pattern_of(source: &str) -> Text {
    let mut t = Text::default();
    let chars: Vec<char> = source.chars().collect();
    let mut i = 0;
    while let Some(&c) = chars.get(i) {
        i += 1;
        match c {
            '\\' => {
                if let Some(&n) = chars.get(i) {
                    t.push_char(n);
                    i += 1;
                }
            }
            '*' => t.push(Seg::Star),
            '?' => t.push(Seg::Quest),
            '[' => {
                let rest: String = chars.get(i..).unwrap_or(&[]).iter().collect();
                let skip = usize::from(rest.starts_with(['!', '^']));
                let search_from =
                    skip + usize::from(rest.get(skip..).is_some_and(|r| r.starts_with(']')));
                match rest.get(search_from..).and_then(|r| r.find(']')) {
                    Some(end) => {
                        let inner = rest.get(..search_from + end).unwrap_or("");
                        t.push(Seg::Class(inner.to_owned()));
                        i += inner.chars().count() + 1;
                    }
                    None => t.push_char('['),
                }
            }
            other => t.push_char(other),
        }
    }
    t
}

/// Does `pattern` (in `mode`) match all of `subject`?
pub fn matches(pattern: &Text, subject: &str, mode: Mode) -> bool {
    Compiled::new(pattern, mode).matches(subject)
}

/// A pattern read once and matched against many subjects (`${v,,PAT}`
/// matches it against every character of the value).
pub(crate) struct Compiled<'a>(Matcher<'a>);

impl<'a> Compiled<'a> {
    pub(crate) fn new(pattern: &'a Text, mode: Mode) -> Self {
        Compiled(Matcher::new(pattern, mode))
    }

    /// As [`matches`].
    pub(crate) fn matches(&self, subject: &str) -> bool {
        let live = self.0.run(subject);
        self.0.accepts(&live)
    }
}

/// Pathname expansion: could `pattern` produce the name `path`?
pub fn path_may_match(pattern: &Text, path: &str) -> bool {
    matches(pattern, path, Mode::PATHNAME)
}

/// Could the (non-pattern) text be exactly `actual`? Holes match anything.
pub fn text_may_be(text: &Text, actual: &str) -> bool {
    if let Some(known) = text.as_known() {
        return known == actual;
    }
    // Literal pieces only: pattern characters inside them are literal.
    let mut literal = Text::default();
    for seg in &text.segs {
        match seg {
            Seg::Lit(s) => literal.push_str(s),
            Seg::Any(from) => literal.push(Seg::Any(from.clone())),
            Seg::Star => literal.push_str("*"),
            Seg::Quest => literal.push_str("?"),
            Seg::Class(inner) => literal.push_str(&format!("[{inner}]")),
        }
    }
    matches(&literal, actual, Mode::STRING)
}

/// Pathname expansion: could `pattern` produce `base` itself or a path
/// below it (`rm -rf ~/.c*` reaches `~/.config/vouch`; `~/.config/vou*/x`
/// reaches into `~/.config/vouch`)?
pub fn may_reach(pattern: &Text, base: &str) -> bool {
    let m = Matcher::new(pattern, Mode::PATHNAME);
    let live = m.run(base);
    for (t, &on) in live.iter().enumerate() {
        if !on {
            continue;
        }
        match m.toks.get(t) {
            // Matches `base` exactly.
            None => return true,
            // Continues with `/…` below `base`.
            Some(Tok::Char('/') | Tok::Any) => return true,
            Some(Tok::Char(_) | Tok::Star | Tok::Quest | Tok::Class(_)) => {}
        }
    }
    false
}

/// Pathname expansion: could `pattern` produce a path that contains `path`
/// (`path` itself or one of its ancestors: `rm -rf /ho*` removes
/// `/home/dev`)?
pub fn may_cover(pattern: &Text, path: &str) -> bool {
    if path_may_match(pattern, path) {
        return true;
    }
    let mut end = path.len();
    while let Some(slash) = path.get(..end).and_then(|p| p.rfind('/')) {
        let ancestor = if slash == 0 {
            "/"
        } else {
            path.get(..slash).unwrap_or("/")
        };
        if path_may_match(pattern, ancestor) {
            return true;
        }
        if slash == 0 {
            break;
        }
        end = slash;
    }
    false
}

/// The lengths of the prefixes of `subject` that `pattern` matches
/// (string mode), shortest first: what `${x#p}` / `${x##p}` remove.
pub fn prefix_matches(pattern: &Text, subject: &str, nocase: bool) -> Vec<usize> {
    let mode = Mode {
        nocase,
        ..Mode::STRING
    };
    let m = Matcher::new(pattern, mode);
    let mut out = Vec::new();
    let mut live = m.start();
    if m.accepts(&live) {
        out.push(0);
    }
    for (pos, c) in subject.char_indices() {
        live = m.step(&live, c, false);
        if !live.iter().any(|&b| b) {
            break;
        }
        if m.accepts(&live) {
            out.push(pos + c.len_utf8());
        }
    }
    out
}

/// The start offsets of the suffixes of `subject` that `pattern` matches,
/// shortest suffix first: what `${x%p}` / `${x%%p}` remove.
pub fn suffix_matches(pattern: &Text, subject: &str, nocase: bool) -> Vec<usize> {
    let mode = Mode {
        nocase,
        ..Mode::STRING
    };
    let mut starts: Vec<usize> = subject.char_indices().map(|(i, _)| i).collect();
    starts.push(subject.len());
    starts.reverse();
    starts
        .into_iter()
        .filter(|&start| matches(pattern, subject.get(start..).unwrap_or(""), mode))
        .collect()
}

impl Text {
    /// Could bash's value of this text be exactly `actual`? Holes match any
    /// characters; a pattern may stand for a name it matches or, when
    /// nothing matched, for its own spelling.
    pub fn may_be(&self, actual: &str) -> bool {
        if self.is_pattern() {
            if self.unmatched_spelling().as_deref() == Some(actual) {
                return true;
            }
            return path_may_match(self, actual);
        }
        text_may_be(self, actual)
    }
}

/// Could `argv` be exactly `actual` at run time? Each [`Arg::Unknown`]
/// stands for any number of fields, each pattern candidate for one or more
/// fields it matches (or its own spelling), every other entry for one field.
pub fn argv_may_be(argv: &[Arg], actual: &[&str]) -> bool {
    // reachable[j]: the first k entries can produce the first j fields.
    let mut reachable = vec![false; actual.len() + 1];
    if let Some(first) = reachable.first_mut() {
        *first = true;
    }
    for arg in argv {
        let mut next = vec![false; actual.len() + 1];
        for (j, &ok) in reachable.iter().enumerate() {
            if !ok {
                continue;
            }
            match arg {
                Arg::Unknown(_) => {
                    for slot in next.iter_mut().skip(j) {
                        *slot = true;
                    }
                }
                Arg::Field(value) => {
                    for candidate in value.candidates() {
                        let rest = actual.get(j..).unwrap_or(&[]);
                        if let Some(first) = rest.first()
                            && candidate.may_be(first)
                            && let Some(slot) = next.get_mut(j + 1)
                        {
                            *slot = true;
                        }
                        if candidate.is_pattern() {
                            // Several matching names, in bash's sorted order.
                            let mut k = j;
                            while let Some(name) = actual.get(k) {
                                if !path_may_match(candidate, name) {
                                    break;
                                }
                                k += 1;
                                if let Some(slot) = next.get_mut(k) {
                                    *slot = true;
                                }
                            }
                        }
                    }
                }
            }
        }
        reachable = next;
    }
    reachable.last().copied().unwrap_or(false)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::value::Sources;

    fn pat(source: &str) -> Text {
        let mut t = Text::default();
        let mut chars = source.chars().peekable();
        while let Some(c) = chars.next() {
            match c {
                '*' => t.push(Seg::Star),
                '?' => t.push(Seg::Quest),
                '%' => t.push(Seg::Any(Sources::none())),
                '[' => {
                    let mut inner = String::new();
                    for d in chars.by_ref() {
                        if d == ']' {
                            break;
                        }
                        inner.push(d);
                    }
                    t.push(Seg::Class(inner));
                }
                other => t.push_char(other),
            }
        }
        t
    }

    #[test]
    fn pathname_rules() {
        assert!(path_may_match(&pat("/srv/*"), "/srv/app"));
        assert!(!path_may_match(&pat("/srv/*"), "/srv/.git"));
        assert!(path_may_match(&pat("/srv/.*"), "/srv/.git"));
        assert!(!path_may_match(&pat("/*"), "/home/dev"));
        assert!(path_may_match(&pat("/*/*"), "/home/dev"));
        assert!(path_may_match(
            &pat("/home/dev/.config/vou*/config.toml"),
            "/home/dev/.config/vouch/config.toml"
        ));
        assert!(path_may_match(&pat("id_[rd]sa"), "id_rsa"));
        assert!(!path_may_match(&pat("id_[!r]sa"), "id_rsa"));
        let mut alpha = Text::default();
        alpha.push(Seg::Class("[:alpha:]".into()));
        alpha.push_str("x");
        assert!(path_may_match(&alpha, "ax"));
        assert!(!path_may_match(&alpha, "1x"));
        assert!(path_may_match(
            &pat("%/authorized_keys"),
            "/home/dev/.ssh/authorized_keys"
        ));
    }

    #[test]
    fn many_stars_are_linear() {
        let stars = format!("{}X", "*".repeat(4000));
        let subject = "a".repeat(4000);
        assert!(!path_may_match(&pat(&stars), &subject));
        assert!(path_may_match(&pat(&stars), &format!("{subject}X")));
    }

    #[test]
    fn reach_and_cover() {
        assert!(!may_reach(&pat("/home/dev/.c*"), "/home/dev/.config/vouch"));
        assert!(may_cover(&pat("/home/dev/.c*"), "/home/dev/.config/vouch"));
        assert!(may_reach(
            &pat("/home/dev/.config/vou*/config.toml"),
            "/home/dev/.config/vouch"
        ));
        assert!(may_reach(
            &pat("/home/dev/.config/vouch/*"),
            "/home/dev/.config/vouch"
        ));
        assert!(!may_reach(&pat("/srv/app/*"), "/home/dev/.ssh"));
        assert!(may_cover(&pat("/ho*"), "/home/dev"));
        assert!(may_cover(&pat("/*"), "/home/dev"));
        assert!(!may_cover(&pat("/tmp/*"), "/home/dev"));
    }

    #[test]
    fn prefix_and_suffix_removal() {
        assert_eq!(prefix_matches(&pat("*/"), "a/b/c", false), vec![2, 4]);
        assert_eq!(suffix_matches(&pat("/*"), "a/b/c", false), vec![3, 1]);
    }

    #[test]
    fn classes() {
        assert!(class_matches("a-c", 'b', false));
        assert!(!class_matches("!a-c", 'b', false));
        assert!(class_matches("]x", ']', false));
        assert!(class_matches("[:digit:]", '7', false));
    }
}
