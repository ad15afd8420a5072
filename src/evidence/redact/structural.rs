//! vouch's structural rules: secrets known by what surrounds them rather
//! than by their own shape — values of secret-named assignments, keys and
//! headers, URL passwords, `.netrc` entries, HAR-style name/value pairs,
//! PEM private keys and JWTs.
//!
//! Each rule finds a short, bounded head with a regex and then walks the
//! value by hand ([`values::extent`]), so the span covers the whole value in
//! its own syntax. Scanning resumes after a hidden value, or at the start of
//! a value that was kept (a name inside it may start a secret of its own):
//! no byte is walked twice except within the bounded judgement window.

use std::collections::HashMap;
use std::sync::OnceLock;

use regex_automata::util::syntax;
use regex_automata::{Input, meta};

use super::keys::{KeyClass, classify_key};
use super::kind::SecretKind;
use super::kind::Span;
use super::values::{self, Extent, JUDGE_BYTES, Syntax};

/// The structural rules' head patterns, each built the first time its
/// trigger word is seen (a short-lived process sees few of them).
pub(crate) struct Structural {
    pem_begin: Lazy,
    pem_end: Lazy,
    jwt: Lazy,
    url: Lazy,
    netrc: Lazy,
    pair: Lazy,
    pgpass: Lazy,
}

/// A constant pattern built on first use. The patterns are tested to
/// build; if one still did not, its rule hides every region it was asked
/// to scan (see [`Structural::run`]).
struct Lazy {
    pattern: &'static str,
    built: OnceLock<Option<meta::Regex>>,
}

impl Lazy {
    const fn new(pattern: &'static str) -> Lazy {
        Lazy {
            pattern,
            built: OnceLock::new(),
        }
    }

    fn get(&self) -> Option<&meta::Regex> {
        self.built
            .get_or_init(|| {
                build(self.pattern)
                    .map_err(|e| tracing::error!(error = %e, "a structural redaction rule failed to build"))
                    .ok()
            })
            .as_ref()
    }
}

/// Which structural rule a trigger word enables.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Which {
    Assignment,
    Pem,
    Jwt,
    Url,
    Netrc,
    Pair,
    Pgpass,
}

/// Trigger words (matched case-insensitively) and the rule each enables.
pub(crate) const TRIGGERS: &[(&str, Which)] = &[
    ("pass", Which::Assignment),
    ("pwd", Which::Assignment),
    ("pw", Which::Assignment),
    ("token", Which::Assignment),
    ("secret", Which::Assignment),
    ("key", Which::Assignment),
    ("cred", Which::Assignment),
    ("auth", Which::Assignment),
    ("cookie", Which::Assignment),
    ("session", Which::Assignment),
    ("sid", Which::Assignment),
    ("sig", Which::Assignment),
    ("salt", Which::Assignment),
    ("bearer", Which::Assignment),
    ("hmac", Which::Assignment),
    ("pat", Which::Assignment),
    ("pin", Which::Assignment),
    ("otp", Which::Assignment),
    ("mfa", Which::Assignment),
    ("dsn", Which::Assignment),
    ("jwt", Which::Assignment),
    ("nonce", Which::Assignment),
    ("seed", Which::Assignment),
    ("private key", Which::Pem),
    ("eyj", Which::Jwt),
    ("://", Which::Url),
    ("machine", Which::Netrc),
    ("\"value\"", Which::Pair),
    ("pgpass", Which::Pgpass),
];

const PEM_BEGIN: &str = r"-----BEGIN[ A-Z0-9]{0,40}PRIVATE KEY(?: BLOCK)?-----";
const PEM_END: &str = r"-----END[ A-Z0-9]{0,40}PRIVATE KEY(?: BLOCK)?-----";
const JWT: &str =
    r"\beyJ[A-Za-z0-9_-]{8,}\.(?:eyJ)?[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]*(?:\.[A-Za-z0-9_-]*){0,2}";
const URL: &str = r"\b[A-Za-z][A-Za-z0-9+.-]{0,30}://";
const NETRC: &str = r"(?i)\bmachine[ \t]+[^\s]{1,255}(?:(?:\s|[0-9]|\xE2\x86\x92){1,24}(?:login|account|port|protocol)[ \t]{1,8}[^\s]{1,255}){0,4}(?:\s|[0-9]|\xE2\x86\x92){1,24}password[ \t]{1,8}";
const PAIR: &str = r#"(?i)"(?:name|key|header)"[ \t]*:[ \t]*"[A-Za-z0-9_.-]{1,80}"[ \t]*,\s{0,16}"value"[ \t]*:[ \t]*"#;

/// A `.pgpass` line's first four fields (`host:port:database:user:`), after
/// the start of a line (real or escaped), a quote or a blank: the password
/// follows.
const PGPASS: &str = r#"(?m)(?:^|[ \t'"]|\\n|\xE2\x86\x92)[A-Za-z0-9_.*%\[\]-]{1,255}:(?:[0-9]{1,5}|\*):(?:[^:\s'"\\]|\\[:\\]){1,255}:(?:[^:\s'"\\]|\\[:\\]){1,255}:"#;

fn build(pattern: &str) -> Result<meta::Regex, String> {
    meta::Builder::new()
        .syntax(syntax::Config::new().unicode(false).utf8(false))
        .configure(meta::Config::new().utf8_empty(false))
        .build(pattern)
        .map_err(|e| format!("structural rule `{pattern}`: {e}"))
}

impl Structural {
    pub const fn new() -> Structural {
        Structural {
            pem_begin: Lazy::new(PEM_BEGIN),
            pem_end: Lazy::new(PEM_END),
            jwt: Lazy::new(JWT),
            url: Lazy::new(URL),
            netrc: Lazy::new(NETRC),
            pair: Lazy::new(PAIR),
            pgpass: Lazy::new(PGPASS),
        }
    }

    /// Whether every pattern builds (the unit tests check).
    #[cfg(test)]
    pub fn builds(&self) -> bool {
        [
            &self.pem_begin,
            &self.pem_end,
            &self.jwt,
            &self.url,
            &self.netrc,
            &self.pair,
            &self.pgpass,
        ]
        .iter()
        .all(|l| l.get().is_some())
    }

    /// Runs one rule over the heads that start in `from..to`. A rule whose
    /// pattern did not build hides the whole region (fail closed).
    pub fn run(&self, which: Which, hay: &[u8], from: usize, to: usize, out: &mut Vec<Span>) {
        let ok = match which {
            // Driven by the trigger hits instead: see [`Structural::assignments`].
            Which::Assignment => true,
            Which::Pem => self.pem(hay, from, to, out).is_some(),
            Which::Jwt => self.jwts(hay, from, to, out).is_some(),
            Which::Url => self.urls(hay, from, to, out).is_some(),
            Which::Netrc => self.netrc(hay, from, to, out).is_some(),
            Which::Pair => self.pairs(hay, from, to, out).is_some(),
            Which::Pgpass => self.pgpass(hay, from, to, out).is_some(),
        };
        if !ok {
            out.push(Span::new(from, to, SecretKind::Unscanned));
        }
    }

    fn jwts(&self, hay: &[u8], from: usize, to: usize, out: &mut Vec<Span>) -> Option<()> {
        let range = from..to.saturating_add(HEAD_REACH).min(hay.len());
        for m in self.jwt.get()?.find_iter(Input::new(hay).range(range)) {
            if m.start() >= to {
                break;
            }
            out.push(Span::new(m.start(), m.end(), SecretKind::Jwt));
        }
        Some(())
    }

    fn netrc(&self, hay: &[u8], from: usize, to: usize, out: &mut Vec<Span>) -> Option<()> {
        let range = from..to.saturating_add(HEAD_REACH).min(hay.len());
        for m in self.netrc.get()?.find_iter(Input::new(hay).range(range)) {
            if m.start() >= to {
                break;
            }
            let mut token = netrc_token(hay, m.end());
            // `echo 'machine h … password X' >> ~/.netrc`: the quote that
            // closes the shell word is not the password's.
            if let Some(&q @ (b'\'' | b'"')) = token.end.checked_sub(1).and_then(|i| hay.get(i))
                && token.end > token.start + 1
                && m.start()
                    .checked_sub(1)
                    .and_then(|i| hay.get(i))
                    .is_some_and(|b| *b == q)
                && !token.bytes(hay).iter().rev().skip(1).any(|b| *b == q)
            {
                token.end -= 1;
            }
            push_value(hay, token, SecretKind::NetrcPassword, out);
        }
        Some(())
    }

    /// `.pgpass` lines (`host:port:database:user:password`): the last
    /// field is the password. Enabled where the text names `pgpass` (`echo
    /// … >> ~/.pgpass`, a here-document into it) or is written to a file of
    /// that name (a Write tool's `content`).
    fn pgpass(&self, hay: &[u8], from: usize, to: usize, out: &mut Vec<Span>) -> Option<()> {
        let range = from..to.saturating_add(HEAD_REACH).min(hay.len());
        for m in self.pgpass.get()?.find_iter(Input::new(hay).range(range)) {
            if m.start() >= to {
                break;
            }
            let opener = hay.get(m.start()).copied();
            let end = pgpass_password_end(hay, m.end(), opener);
            if end > m.end() {
                out.push(Span::new(m.end(), end, SecretKind::GenericAssignment));
            }
        }
        Some(())
    }

    fn pairs(&self, hay: &[u8], from: usize, to: usize, out: &mut Vec<Span>) -> Option<()> {
        let range = from..to.saturating_add(HEAD_REACH).min(hay.len());
        for m in self.pair.get()?.find_iter(Input::new(hay).range(range)) {
            if m.start() >= to {
                break;
            }
            pair(hay, m.start(), m.end(), out);
        }
        Some(())
    }

    /// Reads the name around each trigger word hit (`pass`, `token`, …)
    /// and judges the value after it. Each name is read once, and a run of
    /// name characters too long to be a name is skipped whole.
    ///
    /// In a view with its shell quoting taken off (`dequoted`), a quote left
    /// in the text is a literal character, so values after `=` are bare words.
    pub fn assignments(hay: &[u8], hits: &[(usize, usize)], dequoted: bool, out: &mut Vec<Span>) {
        let mut resume = 0;
        // Names repeat (`key:key:…`, a log's fields): each is classified once.
        let mut classes: HashMap<&str, KeyClass> = HashMap::new();
        let mut sorted: Vec<(usize, usize)> = hits.to_vec();
        sorted.sort_unstable();
        for (s, e) in sorted {
            if s < resume {
                continue;
            }
            let mut ns = s;
            while ns > 0
                && s - ns < NAME_REACH
                && hay.get(ns - 1).copied().is_some_and(is_name_byte)
            {
                ns -= 1;
            }
            let mut ne = e;
            while ne - e < NAME_REACH && hay.get(ne).copied().is_some_and(is_name_byte) {
                ne += 1;
            }
            let too_long = (ns > 0 && hay.get(ns - 1).copied().is_some_and(is_name_byte))
                || hay.get(ne).copied().is_some_and(is_name_byte);
            if too_long {
                resume = ne
                    + hay
                        .get(ne..)
                        .unwrap_or_default()
                        .iter()
                        .take_while(|b| is_name_byte(**b))
                        .count();
                continue;
            }
            resume = ne;
            let Some(mut head) = head_at(hay, ns, ne) else {
                continue;
            };
            if dequoted && head.syntax == Syntax::Shell {
                head.syntax = Syntax::Bare;
            }
            let class = match classes.get(head.name) {
                Some(class) => *class,
                None => {
                    let class = classify_key(head.name);
                    if classes.len() >= MAX_CACHED_NAMES {
                        classes.clear();
                    }
                    classes.insert(head.name, class);
                    class
                }
            };
            // "the api key: X", "access key is X": a two-word name.
            let class = match class {
                KeyClass::Secret => class,
                KeyClass::MaybeSecret | KeyClass::Plain => {
                    match prose_phrase_class(hay, ns, head.name) {
                        KeyClass::Secret => KeyClass::Secret,
                        KeyClass::MaybeSecret | KeyClass::Plain => class,
                    }
                }
            };
            // Resume after a hidden value; else at the value's start, where a
            // name inside the kept value may begin.
            resume = judge(hay, &head, class, out)
                .unwrap_or(head.value_start)
                .max(ne);
            resume = follow_trailing_head(hay, out, resume);
        }
    }

    fn pem(&self, hay: &[u8], from: usize, to: usize, out: &mut Vec<Span>) -> Option<()> {
        let (pem_begin, pem_end) = (self.pem_begin.get()?, self.pem_end.get()?);
        let range = from..to.saturating_add(HEAD_REACH).min(hay.len());
        let mut covered = 0;
        let mut blocks: Vec<(usize, usize)> = Vec::new();
        for m in pem_begin.find_iter(Input::new(hay).range(range.clone())) {
            if m.start() < covered || m.start() >= to {
                continue;
            }
            let mut end = key_material_end(hay, m.end(), pem_end);
            out.push(Span::new(m.start(), end, SecretKind::PrivateKey));
            if end == m.end() {
                for (start, word_end) in key_material_words(hay, m.end()) {
                    out.push(Span::new(start, word_end, SecretKind::PrivateKey));
                    end = word_end;
                }
            }
            blocks.push((m.start(), end));
            covered = end;
        }
        // The tail of a block whose start was cut off.
        for m in pem_end.find_iter(Input::new(hay).range(range)) {
            if m.start() >= to {
                break;
            }
            // Blocks are sorted and disjoint: one binary search.
            let i = blocks.partition_point(|b| b.0 <= m.start());
            if i.checked_sub(1)
                .and_then(|i| blocks.get(i))
                .is_some_and(|b| m.end() <= b.1)
            {
                continue;
            }
            let start = key_material_start(hay, m.start());
            out.push(Span::new(start, m.end(), SecretKind::PrivateKey));
        }
        Some(())
    }

    fn urls(&self, hay: &[u8], from: usize, to: usize, out: &mut Vec<Span>) -> Option<()> {
        let url = self.url.get()?;
        let mut at = from;
        let reach = to.saturating_add(HEAD_REACH).min(hay.len());
        while at < to
            && let Some(m) = url.search(&Input::new(hay).range(at..reach))
            && m.start() < to
        {
            at = url_credentials(hay, m.end(), out).max(m.end());
        }
        Some(())
    }
}

/// How much of a value under a maybe-secret name (`key`, `session`) is read
/// to judge whether it looks random.
const MAYBE_JUDGE_BYTES: usize = 48;

/// How far past the end of a scanned region a head that starts in it may
/// reach (the longest head the patterns allow).
const HEAD_REACH: usize = 512;

/// A parsed assignment head.
struct Head<'h> {
    name: &'h str,
    value_start: usize,
    syntax: Syntax,
    indent: usize,
}

fn is_name_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b'-')
}

/// Most distinct names one text's classifications are remembered for.
const MAX_CACHED_NAMES: usize = 1024;

/// Longest name read around a trigger word, each side.
const NAME_REACH: usize = 80;

/// The head around the name `ns..ne`: its quoting and separator, or `None`
/// when no separator follows.
fn head_at(hay: &[u8], ns: usize, ne: usize) -> Option<Head<'_>> {
    let before = ns.checked_sub(1).and_then(|i| hay.get(i)).copied();
    let open = before.filter(|b| matches!(b, b'"' | b'\'' | b'`'));
    let head_start = match open {
        Some(_) => ns - 1,
        None => ns,
    };
    let name = std::str::from_utf8(hay.get(ns..ne)?).ok()?;
    let mut i = ne;
    if hay.get(i) == Some(&b'\\') {
        i += 1;
    }
    let closed = open.is_some() && hay.get(i).copied() == open;
    if closed {
        i += 1;
    }
    let blanks = count_blanks(hay, i);
    i += blanks;
    let sep_len = match (hay.get(i), hay.get(i + 1)) {
        (Some(b':'), Some(b'=')) | (Some(b'='), Some(b'>')) => 2,
        (Some(b'=' | b':'), _) => 1,
        _ if blanks > 0 && open.is_none() => {
            let value_start = prose_value_start(hay, i)?;
            return Some(Head {
                name,
                value_start,
                syntax: Syntax::Prose,
                indent: 0,
            });
        }
        _ => return None,
    };
    // `a::b` paths, `==` comparisons' right side, URLs are not assignments.
    if hay.get(i) == Some(&b':') && matches!(hay.get(i + 1), Some(b':' | b'/')) {
        return None;
    }
    let shell = hay.get(i) == Some(&b'=') && sep_len == 1;
    let value_start = i + sep_len + count_blanks(hay, i + sep_len);
    let line_start = line_indent(hay, head_start);
    let syntax = match (open, closed, shell, line_start) {
        // `'Cookie: a=1; b=2'`, `-d 'token=x&y=1'`: inside a quoted string.
        (Some(quote), false, amp, _) => Syntax::Quoted {
            quote,
            amp,
            escaped: ns >= 2 && hay.get(ns - 2) == Some(&b'\\'),
        },
        (_, _, true, _) => Syntax::Shell,
        (None, _, false, Some(_)) => Syntax::Block,
        _ => Syntax::Inline,
    };
    Some(Head {
        name,
        value_start,
        syntax,
        indent: line_start.unwrap_or(0),
    })
}

/// Verbs that, after a secret's name in prose, introduce its value: "the
/// db password is X", "the token was X", "the new password is now X".
const PROSE_VERBS: &[&[u8]] = &[b"is", b"was", b"are", b"will be", b"should be"];

/// Where the value starts after a prose verb at `at` ("is X", "is now X",
/// "is: X"), or `None` when no verb stands there.
fn prose_value_start(hay: &[u8], at: usize) -> Option<usize> {
    let rest = hay.get(at..)?;
    let verb = PROSE_VERBS.iter().find(|v| {
        rest.get(..v.len())
            .is_some_and(|w| w.eq_ignore_ascii_case(v))
            && rest
                .get(v.len())
                .is_some_and(|b| matches!(b, b' ' | b'\t' | b':'))
    })?;
    let mut i = at + verb.len();
    if hay.get(i) == Some(&b':') {
        i += 1;
    }
    let blanks = count_blanks(hay, i);
    if blanks == 0 {
        return None;
    }
    i += blanks;
    for filler in [&b"now"[..], b"set to", b"still"] {
        let after = hay.get(i..)?;
        if after
            .get(..filler.len())
            .is_some_and(|w| w.eq_ignore_ascii_case(filler))
            && after.get(filler.len()) == Some(&b' ')
        {
            i += filler.len();
            i += count_blanks(hay, i);
        }
    }
    Some(i)
}

/// In prose a name is often two words ("the api key is X", "access key
/// was X"): the class of the word before `name` (one space before `ns`)
/// joined to it.
fn prose_phrase_class(hay: &[u8], ns: usize, name: &str) -> KeyClass {
    let Some(space) = ns.checked_sub(1).filter(|&i| hay.get(i) == Some(&b' ')) else {
        return KeyClass::Plain;
    };
    let before = hay.get(space.saturating_sub(24)..space).unwrap_or_default();
    let len = before
        .iter()
        .rev()
        .take_while(|b| b.is_ascii_alphabetic())
        .count();
    if len == 0 || len == before.len() && space >= 24 {
        return KeyClass::Plain;
    }
    let word = before.get(before.len() - len..).unwrap_or_default();
    classify_key(&format!("{}_{name}", String::from_utf8_lossy(word)))
}

/// Spaces and tabs at `at`, at most 16.
fn count_blanks(hay: &[u8], at: usize) -> usize {
    hay.get(at..)
        .unwrap_or_default()
        .iter()
        .take(16)
        .take_while(|b| **b == b' ' || **b == b'\t')
        .count()
}

/// A hidden value that ends in a name and a separator (`.*/authSecret:` in a
/// `sed` expression) leaves the value after it unjudged: judge it as that
/// name's value. Returns where scanning resumes.
fn follow_trailing_head(hay: &[u8], out: &mut Vec<Span>, mut resume: usize) -> usize {
    for _ in 0..4 {
        let Some(last) = out.last().copied() else {
            return resume;
        };
        let hidden = hay.get(last.start..last.end).unwrap_or_default();
        if !matches!(hidden.last(), Some(b':' | b'=')) {
            return resume;
        }
        let name_end = last.end - 1;
        let name_len = hidden
            .iter()
            .rev()
            .skip(1)
            .take(NAME_REACH)
            .take_while(|b| is_name_byte(**b))
            .count();
        let Some(head) = head_at(hay, name_end - name_len, name_end) else {
            return resume;
        };
        let class = classify_key(head.name);
        match judge(hay, &head, class, out) {
            Some(next) => resume = resume.max(next),
            None => return resume,
        }
    }
    resume
}

/// How far `at` is indented when only whitespace (or a YAML `- `) stands
/// between it and the start of its line. Looks back a bounded distance.
fn line_indent(hay: &[u8], at: usize) -> Option<usize> {
    let from = at.saturating_sub(128);
    let before = hay.get(from..at)?;
    let line_start = match memchr::memrchr(b'\n', before) {
        Some(i) => from + i + 1,
        None if from == 0 => 0,
        None => return None,
    };
    // A file viewer's `   12→` prefix is not part of the line.
    let text_start = (line_start + line_prefix(hay, line_start)).min(at);
    let prefix = hay.get(text_start..at)?;
    prefix
        .iter()
        .all(|b| matches!(b, b' ' | b'\t' | b'-'))
        .then(|| {
            prefix
                .iter()
                .take_while(|b| matches!(b, b' ' | b'\t'))
                .count()
        })
}

/// Authorization schemes kept in front of the credential they introduce.
const SCHEMES: &[&str] = &[
    "bearer",
    "basic",
    "token",
    "bot",
    "digest",
    "negotiate",
    "apikey",
    "aws4-hmac-sha256",
    "ntlm",
    "hawk",
    "mac",
];

/// Skips an authorization scheme (`Bearer `, `Bearer%20` decoded) at `at`.
fn skip_scheme(hay: &[u8], at: usize) -> usize {
    let rest = hay.get(at..).unwrap_or_default();
    let word_len = rest
        .iter()
        .take(24)
        .position(|b| *b == b' ' || *b == b'+')
        .unwrap_or(0);
    let word = rest.get(..word_len).unwrap_or_default();
    if word_len > 0
        && SCHEMES
            .iter()
            .any(|s| s.as_bytes().eq_ignore_ascii_case(word))
    {
        at + word_len + 1
    } else {
        at
    }
}

/// Decides whether the value after `head` is hidden; returns where scanning
/// resumes when it is.
fn judge(hay: &[u8], head: &Head<'_>, class: KeyClass, out: &mut Vec<Span>) -> Option<usize> {
    if class == KeyClass::Plain {
        return None;
    }
    let header = is_header_name(head.name);
    let start = if header {
        skip_scheme(hay, head.value_start)
    } else {
        head.value_start
    };
    // A kept value is judged on a short window: names inside it are looked
    // at again, so each look must cost a bounded amount.
    let window = match class {
        KeyClass::MaybeSecret => MAYBE_JUDGE_BYTES,
        KeyClass::Secret | KeyClass::Plain => JUDGE_BYTES + 1,
    };
    let probe = values::extent(hay, start, head.syntax, head.indent, window);
    let sample = probe.bytes(hay);
    if sample.is_empty() {
        return None;
    }
    if head.syntax == Syntax::Prose
        && !(class == KeyClass::Secret && values::secretish_word(sample))
    {
        return None;
    }
    let hide = match class {
        KeyClass::Secret => !(probe.complete && values::is_exempt(sample)),
        KeyClass::MaybeSecret => values::looks_random(sample) && !values::is_exempt(sample),
        KeyClass::Plain => false,
    };
    if !hide {
        // A kept reference holds nothing more to find; other kept values
        // are scanned again from their start.
        return (probe.complete && values::is_exempt(sample)).then_some(probe.next);
    }
    let full = if probe.complete {
        probe
    } else {
        values::extent(hay, start, head.syntax, head.indent, usize::MAX)
    };
    let kind = kind_for(
        head.name,
        header || matches!(head.syntax, Syntax::Quoted { .. }),
    );
    push_value(hay, full, kind, out);
    Some(full.next.max(start))
}

fn is_header_name(name: &str) -> bool {
    contains_ignore_case(name.as_bytes(), b"authorization") || name.eq_ignore_ascii_case("bearer")
}

/// Whether `needle` (lowercase) occurs in `hay`, ignoring ASCII case.
fn contains_ignore_case(hay: &[u8], needle: &[u8]) -> bool {
    hay.windows(needle.len())
        .any(|w| w.eq_ignore_ascii_case(needle))
}

fn kind_for(name: &str, header_context: bool) -> SecretKind {
    if contains_ignore_case(name.as_bytes(), b"cookie") {
        SecretKind::Cookie
    } else if is_header_name(name) || (header_context && name.contains('-')) {
        SecretKind::AuthHeader
    } else {
        SecretKind::GenericAssignment
    }
}

fn push_value(hay: &[u8], e: Extent, kind: SecretKind, out: &mut Vec<Span>) {
    let bytes = e.bytes(hay);
    if bytes.is_empty() || values::is_exempt(bytes) {
        return;
    }
    for (start, end) in values::hidden_parts(hay, e.start, e.end) {
        out.push(Span::new(start, end, kind));
    }
}

/// A `.netrc` token at `at`: a quoted string, else everything up to
/// whitespace (quotes inside it are its own bytes: `ab"cd`).
fn netrc_token(hay: &[u8], at: usize) -> Extent {
    if matches!(hay.get(at), Some(b'"' | b'\'')) {
        return values::extent(hay, at, Syntax::Inline, 0, usize::MAX);
    }
    let len = hay
        .get(at..)
        .unwrap_or_default()
        .iter()
        .take_while(|b| !b.is_ascii_whitespace())
        .count();
    Extent {
        start: at,
        end: at + len,
        next: at + len,
        complete: true,
    }
}

/// A `"name": "X", "value": "…"` pair whose name says secret.
fn pair(hay: &[u8], start: usize, end: usize, out: &mut Vec<Span>) {
    let Some(name) = pair_name(hay.get(start..end).unwrap_or_default()) else {
        return;
    };
    if classify_key(&name) != KeyClass::Secret {
        return;
    }
    let e = values::extent(hay, end, Syntax::Inline, 0, usize::MAX);
    push_value(hay, e, kind_for(&name, true), out);
}

/// The name of a `"name": "X", "value":` head.
fn pair_name(head: &[u8]) -> Option<String> {
    let colon = head.iter().position(|b| *b == b':')?;
    let rest = head.get(colon + 1..)?;
    let open = rest.iter().position(|b| *b == b'"')?;
    let body = rest.get(open + 1..)?;
    let close = body.iter().position(|b| *b == b'"')?;
    Some(String::from_utf8_lossy(body.get(..close)?).into_owned())
}

/// Longest URL word read for credentials after a `://`.
const URL_WORD_BYTES: usize = 512;

/// Where a URL's word ends: at whitespace, a quote, `<>`, a backquote or a
/// backslash (an escaped quote around it). `/`, `?` and `#` do not end it:
/// a password may hold them unescaped (`app:pF0#x!y@db`).
fn url_word_end(hay: &[u8], start: usize) -> usize {
    let stop = start.saturating_add(URL_WORD_BYTES).min(hay.len());
    hay.get(start..stop)
        .and_then(|r| {
            r.iter().position(|b| {
                b.is_ascii_whitespace() || matches!(b, b'\'' | b'"' | b'<' | b'>' | b'`' | b'\\')
            })
        })
        .map_or(stop, |i| start + i)
}

/// Whether a host (`db.internal`, `h1:27017,h2`, `[::1]:5432`) starts at
/// `at` and ends where the URL's path, query or fragment does (or at the
/// end of the word).
fn host_at(word: &[u8], at: usize) -> bool {
    let rest = word.get(at..).unwrap_or_default();
    let len = rest
        .iter()
        .position(|b| matches!(b, b'/' | b'?' | b'#'))
        .unwrap_or(rest.len());
    let host = rest.get(..len).unwrap_or_default();
    !host.is_empty()
        && host.iter().all(|b| {
            b.is_ascii_alphanumeric()
                || matches!(b, b'.' | b'-' | b'_' | b':' | b',' | b'[' | b']' | b'%')
        })
}

/// `scheme://user:password@host`: hides the password (or a token-like user
/// when there is no password), from `start` (just after `://`). Returns
/// where the search for the next URL resumes.
///
/// The user info runs to the `@` before the host, whatever the password
/// holds: `#`, `!`, `?`, `/` and `@` unescaped are common in pasted
/// connection strings and every client reads them as the password's, so
/// the authority does not end at the first `/?#` as RFC 3986 would have
/// it. A colon followed by digits and then the path is a port
/// (`host:8080/@scope/pkg`), not a password.
fn url_credentials(hay: &[u8], start: usize, out: &mut Vec<Span>) -> usize {
    let end = url_word_end(hay, start);
    let Some(word) = hay.get(start..end) else {
        return end;
    };
    // The authority as RFC 3986 reads it: where the search resumes when no
    // credentials are found, so a URL in this one's query is read too.
    let authority = word
        .iter()
        .position(|b| matches!(b, b'/' | b'?' | b'#'))
        .unwrap_or(word.len());
    let colon = word
        .iter()
        .position(|b| matches!(b, b':' | b'/' | b'?' | b'#'))
        .filter(|&c| word.get(c) == Some(&b':'));
    let is_port = |c: usize| {
        let after = word.get(c + 1..).unwrap_or_default();
        let digits = after.iter().take_while(|b| b.is_ascii_digit()).count();
        after
            .get(digits)
            .is_none_or(|b| matches!(b, b'/' | b'?' | b'#' | b'@'))
            && !after.get(digits..).unwrap_or_default().starts_with(b"@")
    };
    match colon {
        Some(colon) if !is_port(colon) => {
            // The first `@` after the colon that a host follows; failing
            // that, the last `@` of the word.
            let ats = || {
                word.iter()
                    .enumerate()
                    .skip(colon + 1)
                    .filter(|(_, b)| **b == b'@')
                    .map(|(i, _)| i)
            };
            let Some(at) = ats()
                .find(|&i| host_at(word, i + 1))
                .or_else(|| ats().next_back())
            else {
                return start + authority;
            };
            let password = word.get(colon + 1..at).unwrap_or_default();
            if !password.is_empty() && !values::is_exempt(password) {
                out.push(Span::new(
                    start + colon + 1,
                    start + at,
                    SecretKind::UrlPassword,
                ));
            }
            start + at + 1
        }
        Some(_) | None => {
            let userinfo_end = word.get(..authority).and_then(|a| memchr::memrchr(b'@', a));
            if let Some(at) = userinfo_end {
                let userinfo = word.get(..at).unwrap_or_default();
                // `user@host:port`: a port's colon, not a password's.
                let user = match memchr::memchr(b':', userinfo) {
                    Some(c) => userinfo.get(..c).unwrap_or_default(),
                    None => userinfo,
                };
                if values::looks_random(user) && !values::is_exempt(user) {
                    out.push(Span::new(
                        start,
                        start + user.len(),
                        SecretKind::UrlCredential,
                    ));
                }
            }
            start + authority
        }
    }
}

fn is_base64(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'+' | b'/' | b'=')
}

/// Length of a line-number prefix at `at` (`   12→`, `12\t`), as a file
/// viewer prints it, plus indentation, or 0.
fn line_prefix(hay: &[u8], at: usize) -> usize {
    // A viewer's output shown by another viewer carries two prefixes.
    let mut total = 0;
    for _ in 0..3 {
        let one = one_line_prefix(hay, at + total);
        total += one;
        if one == 0 || hay.get(at + total - 1) == Some(&b' ') {
            break;
        }
    }
    total
}

fn one_line_prefix(hay: &[u8], at: usize) -> usize {
    let rest = hay.get(at..).unwrap_or_default();
    let spaces = rest
        .iter()
        .take_while(|b| **b == b' ' || **b == b'\t')
        .count();
    let digits = rest
        .get(spaces..)
        .unwrap_or_default()
        .iter()
        .take_while(|b| b.is_ascii_digit())
        .count();
    let after = rest.get(spaces + digits..).unwrap_or_default();
    let marker = if digits == 0 {
        0
    } else if after.starts_with("→".as_bytes()) {
        digits + "→".len()
    } else if after.first() == Some(&b'\t') {
        digits + 1
    } else {
        return spaces;
    };
    spaces + marker
}

/// Finds line ends: a newline or an escaped `\n`. Remembers the next real
/// newline so a long line of escaped ones is not searched again per line.
struct Lines {
    newline: Option<usize>,
}

impl Lines {
    /// Returns (end of the text of the line starting at `at`, start of the
    /// next line).
    fn next(&mut self, hay: &[u8], at: usize) -> (usize, usize) {
        if self.newline.is_none_or(|n| n < at) {
            self.newline = hay
                .get(at..)
                .and_then(|r| memchr::memchr(b'\n', r))
                .map(|i| at + i)
                .or(Some(hay.len()));
        }
        let newline = self.newline.unwrap_or(hay.len());
        let escaped = hay
            .get(at..newline)
            .and_then(|r| memchr::memmem::find(r, b"\\n"))
            .map(|i| at + i);
        match escaped {
            Some(e) => (e, e + 2),
            None => (newline, (newline + 1).min(hay.len())),
        }
    }
}

/// Whether `line` is a PEM header line (`Proc-Type: 4,ENCRYPTED`).
fn is_pem_header(line: &[u8]) -> bool {
    let colon = line.iter().position(|b| *b == b':');
    colon.is_some_and(|c| {
        c > 0
            && line
                .get(..c)
                .unwrap_or_default()
                .iter()
                .all(|b| b.is_ascii_alphanumeric() || *b == b'-')
    })
}

/// Where the key material after a BEGIN line ends: after the END line, or
/// where the material stops (a truncated block): line by line, each line
/// base64 (after a file viewer's `N→` prefix), a few header lines first.
fn key_material_end(hay: &[u8], from: usize, pem_end: &meta::Regex) -> usize {
    let mut at = from;
    let mut end = from;
    let mut lines = 0usize;
    let mut finder = Lines { newline: None };
    while at < hay.len() {
        let text_start = at + line_prefix(hay, at);
        let (line_end, next) = finder.next(hay, text_start);
        let line = hay.get(text_start..line_end).unwrap_or_default();
        if line.starts_with(b"-----END") {
            return pem_end
                .search(
                    &Input::new(hay)
                        .range(text_start..)
                        .anchored(regex_automata::Anchored::Yes),
                )
                .map_or(line_end, |m| m.end());
        }
        let trimmed = line.trim_ascii_end();
        let run = trimmed.iter().take_while(|b| is_base64(**b)).count();
        let header = lines < 4 && is_pem_header(trimmed);
        if !header && ends_here_document(hay, trimmed) {
            // The block was cut off inside a here-document: its delimiter
            // line ends it, and what follows is the next command.
            return end;
        }
        if header || (run == trimmed.len() && !(trimmed.is_empty() && lines > 4)) {
            if !trimmed.is_empty() {
                end = text_start + trimmed.len();
            }
        } else {
            // Material stops inside this line: cut there (`MIIE…"` where
            // the text was truncated), unless a blank follows the run, which
            // makes it a word of prose or of a command, not key material.
            let word = matches!(trimmed.get(run), Some(b' ' | b'\t'));
            return if run > 0 && !word {
                text_start + run
            } else {
                end
            };
        }
        lines += 1;
        if next == at {
            break;
        }
        at = next;
    }
    end
}

/// Where a `.pgpass` password starting at `at` ends: at the quote that
/// opened its line, at a blank when the line is an unquoted shell word,
/// else at the end of the line (real or escaped). `\:` and `\\` are the
/// password's own escapes.
fn pgpass_password_end(hay: &[u8], at: usize, opener: Option<u8>) -> usize {
    let stop = at.saturating_add(JUDGE_BYTES).min(hay.len());
    let mut i = at;
    while i < stop {
        let Some(b) = hay.get(i).copied() else { break };
        let next = hay.get(i + 1).copied();
        let ends = match opener {
            Some(q @ (b'\'' | b'"')) => b == q || b == b'\n' || (b == b'\\' && next == Some(q)),
            Some(b' ' | b'\t') => {
                b.is_ascii_whitespace() || matches!(b, b';' | b'|' | b'&' | b'<' | b'>' | b')')
            }
            Some(_) | None => b == b'\n' || b == b'\r',
        } || (b == b'\\' && matches!(next, Some(b'n' | b'r' | b'"')));
        if ends {
            break;
        }
        // `\:` and `\\` escape a byte of the password.
        i += if b == b'\\' && matches!(next, Some(b':' | b'\\')) {
            2
        } else {
            1
        };
    }
    let trimmed = hay.get(at..i).unwrap_or_default().trim_ascii_end().len();
    at + trimmed
}

/// Most shell words of key material read after a BEGIN marker.
const MAX_KEY_WORDS: usize = 256;

/// Key material written as shell words after the BEGIN marker's own word
/// (`printf '%s\n' '-----BEGIN … KEY-----' 'MIIE…' 'AoIB…' > k`): every
/// word of base64 that follows, each its own span inside its quotes, up to
/// the first word that is not (an `-----END` word, `>`, a command). The
/// quotes, blanks and the command around them stay.
fn key_material_words(hay: &[u8], from: usize) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    let mut at = from;
    // The marker's closing quote (`'`, `"` or an escaped `\"`).
    let close = |at: usize| match hay.get(at) {
        Some(b'\'' | b'"') => 1,
        Some(b'\\') if hay.get(at + 1) == Some(&b'"') => 2,
        _ => 0,
    };
    at += close(at);
    while out.len() < MAX_KEY_WORDS {
        let blanks = count_blanks(hay, at);
        if blanks == 0 {
            break;
        }
        at += blanks;
        at += close(at);
        let run = hay
            .get(at..)
            .unwrap_or_default()
            .iter()
            .take_while(|b| is_base64(**b))
            .count();
        let after = at + run;
        let word = hay.get(at..after).unwrap_or_default();
        // A file name after the marker (`grep '-----BEGIN…' keyfile`) is
        // not key material: a line of a key is long and mixed.
        let material = run >= 16
            && (word
                .iter()
                .any(|b| b.is_ascii_digit() || matches!(b, b'+' | b'/'))
                || (word.iter().any(u8::is_ascii_uppercase)
                    && word.iter().any(u8::is_ascii_lowercase)));
        let ends_word = hay.get(after).is_none_or(|b| {
            matches!(
                b,
                b' ' | b'\t' | b'\'' | b'"' | b'\\' | b'\n' | b';' | b'|' | b'&' | b')'
            )
        });
        if !material || !ends_word {
            break;
        }
        out.push((at, after));
        at = after + close(after);
    }
    out
}

/// Whether `line` is the delimiter of a here-document the text opens
/// (`<<EOF`, `<<-'KEY'`, `<< "END"`): a word line of base64 letters that
/// ends the body rather than belonging to the key.
fn ends_here_document(hay: &[u8], line: &[u8]) -> bool {
    let word = line.trim_ascii();
    if word.is_empty()
        || word.len() > 64
        || !word.iter().all(|b| b.is_ascii_alphanumeric() || *b == b'_')
    {
        return false;
    }
    memchr::memmem::find_iter(hay, b"<<").take(64).any(|at| {
        let rest = hay.get(at + 2..).unwrap_or_default();
        let rest = rest.strip_prefix(b"-").unwrap_or(rest);
        let rest = rest.trim_ascii_start();
        let rest = rest
            .strip_prefix(b"'")
            .or_else(|| rest.strip_prefix(b"\""))
            .or_else(|| rest.strip_prefix(b"\\"))
            .unwrap_or(rest);
        rest.starts_with(word)
            && !rest
                .get(word.len())
                .is_some_and(|b| b.is_ascii_alphanumeric() || *b == b'_')
    })
}

/// Where the key material before an END line starts when its BEGIN line is
/// missing: back over whole lines of base64.
fn key_material_start(hay: &[u8], end: usize) -> usize {
    let mut start = end;
    // Start from the END line's own start when only a prefix precedes it.
    let head = hay.get(..end).unwrap_or_default();
    let own = memchr::memrchr(b'\n', head).map_or(0, |i| i + 1);
    let mut at = if own + line_prefix(hay, own) == end {
        own
    } else {
        end
    };
    loop {
        let before = hay.get(..at).unwrap_or_default();
        // The line that ends just before `at` (skip its terminator).
        let line_end = if before.ends_with(b"\\n") {
            at - 2
        } else if before.ends_with(b"\n") {
            at - 1
        } else {
            at
        };
        let head = hay.get(..line_end).unwrap_or_default();
        let nl = memchr::memrchr(b'\n', head).map_or(0, |i| i + 1);
        let esc = head
            .get(nl..)
            .and_then(|r| memchr::memmem::rfind(r, b"\\n"))
            .map_or(0, |i| nl + i + 2);
        let line_start = nl.max(esc);
        let text_start = line_start + line_prefix(hay, line_start);
        let line = hay
            .get(text_start.min(line_end)..line_end)
            .unwrap_or_default()
            .trim_ascii();
        let run = line.iter().rev().take_while(|b| is_base64(**b)).count();
        if run == 0 {
            return start;
        }
        if run < line.len() {
            return line_end - run;
        }
        start = text_start;
        if line_start == 0 || line_start >= at {
            return start;
        }
        at = line_start;
    }
}
