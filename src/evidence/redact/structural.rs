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

use regex_automata::util::syntax;
use regex_automata::{Input, meta};

use super::keys::{KeyClass, classify_key};
use super::kind::SecretKind;
use super::scan::Span;
use super::values::{self, Extent, JUDGE_BYTES, Syntax};

/// The structural rules, compiled.
pub(crate) struct Structural {
    assignment: meta::Regex,
    pem_begin: meta::Regex,
    pem_end: meta::Regex,
    jwt: meta::Regex,
    url: meta::Regex,
    netrc: meta::Regex,
    pair: meta::Regex,
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
}

/// Trigger words (matched case-insensitively) and the rule each enables.
pub(crate) const TRIGGERS: &[(&str, Which)] = &[
    ("pass", Which::Assignment),
    ("pwd", Which::Assignment),
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
];

/// A name that may hold a secret, its quote and its separator. The value
/// after it is walked by hand.
const ASSIGNMENT: &str = r#"(?i)(?:\\?["'`])?\b[a-z0-9_.-]{0,80}?(?:pass|pwd|token|secret|key|cred|auth|cookie|session|sid|sig|salt|bearer|hmac|pat|pin|otp|mfa|dsn|jwt|nonce|seed)[a-z0-9_.-]{0,80}(?:\\?["'`])?[ \t]{0,16}(?::=|=>|=|:)[ \t]{0,16}"#;
const PEM_BEGIN: &str = r"-----BEGIN[ A-Z0-9]{0,40}PRIVATE KEY(?: BLOCK)?-----";
const PEM_END: &str = r"-----END[ A-Z0-9]{0,40}PRIVATE KEY(?: BLOCK)?-----";
const JWT: &str = r"\beyJ[A-Za-z0-9_-]{8,}\.(?:eyJ)?[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]*(?:\.[A-Za-z0-9_-]*){0,2}";
const URL: &str = r"\b[A-Za-z][A-Za-z0-9+.-]{0,30}://";
const NETRC: &str = r"(?i)\bmachine[ \t]+[^\s]{1,255}(?:\s{1,8}(?:login|account|port|protocol)[ \t]{1,8}[^\s]{1,255}){0,4}\s{1,8}password[ \t]{1,8}";
const PAIR: &str = r#"(?i)"(?:name|key|header)"[ \t]*:[ \t]*"[A-Za-z0-9_.-]{1,80}"[ \t]*,\s{0,16}"value"[ \t]*:[ \t]*"#;

fn build(pattern: &str) -> Result<meta::Regex, String> {
    meta::Builder::new()
        .syntax(syntax::Config::new().unicode(false).utf8(false))
        .configure(meta::Config::new().utf8_empty(false))
        .build(pattern)
        .map_err(|e| format!("structural rule `{pattern}`: {e}"))
}

impl Structural {
    pub fn compile() -> Result<Structural, String> {
        Ok(Structural {
            assignment: build(ASSIGNMENT)?,
            pem_begin: build(PEM_BEGIN)?,
            pem_end: build(PEM_END)?,
            jwt: build(JWT)?,
            url: build(URL)?,
            netrc: build(NETRC)?,
            pair: build(PAIR)?,
        })
    }

    pub fn run(&self, which: Which, hay: &[u8], out: &mut Vec<Span>) {
        match which {
            Which::Assignment => self.assignments(hay, out),
            Which::Pem => self.pem(hay, out),
            Which::Jwt => {
                for m in self.jwt.find_iter(hay) {
                    out.push(Span::new(m.start(), m.end(), SecretKind::Jwt));
                }
            }
            Which::Url => self.urls(hay, out),
            Which::Netrc => {
                for m in self.netrc.find_iter(hay) {
                    let e = values::extent(hay, m.end(), Syntax::Inline, 0, usize::MAX);
                    push_value(hay, e, SecretKind::NetrcPassword, out);
                }
            }
            Which::Pair => self.pairs(hay, out),
        }
    }

    fn assignments(&self, hay: &[u8], out: &mut Vec<Span>) {
        let mut at = 0;
        while at < hay.len() {
            let Some(m) = self.assignment.search(&Input::new(hay).range(at..)) else {
                break;
            };
            let head = parse_head(hay, m.start(), m.end());
            let next = match head {
                Some(head) => judge(hay, &head, out),
                None => None,
            };
            // Resume after a hidden value; else at the value's start, where a
            // name inside the kept value may begin.
            at = next.unwrap_or(m.end()).max(m.start() + 1);
        }
    }

    fn pairs(&self, hay: &[u8], out: &mut Vec<Span>) {
        for m in self.pair.find_iter(hay) {
            let Some(name) = pair_name(hay.get(m.start()..m.end()).unwrap_or_default()) else {
                continue;
            };
            if classify_key(&name) != KeyClass::Secret {
                continue;
            }
            let e = values::extent(hay, m.end(), Syntax::Inline, 0, usize::MAX);
            push_value(hay, e, kind_for(&name, true), out);
        }
    }

    fn pem(&self, hay: &[u8], out: &mut Vec<Span>) {
        let mut covered = 0;
        for m in self.pem_begin.find_iter(hay) {
            if m.start() < covered {
                continue;
            }
            let end = key_material_end(hay, m.end(), &self.pem_end);
            out.push(Span::new(m.start(), end, SecretKind::PrivateKey));
            covered = end;
        }
        // The tail of a block whose start was cut off.
        for m in self.pem_end.find_iter(hay) {
            if out
                .iter()
                .any(|s| s.kind == SecretKind::PrivateKey && s.start <= m.start() && m.end() <= s.end)
            {
                continue;
            }
            let start = key_material_start(hay, m.start());
            out.push(Span::new(start, m.end(), SecretKind::PrivateKey));
        }
    }

    fn urls(&self, hay: &[u8], out: &mut Vec<Span>) {
        let mut at = 0;
        while let Some(m) = self.url.search(&Input::new(hay).range(at..)) {
            let authority_end = hay
                .get(m.end()..)
                .and_then(|r| {
                    r.iter().position(|b| {
                        b.is_ascii_whitespace()
                            || matches!(b, b'/' | b'?' | b'#' | b'\'' | b'"' | b'<' | b'>' | b'`' | b'\\')
                    })
                })
                .map_or(hay.len(), |i| m.end() + i);
            url_credentials(hay, m.end(), authority_end, out);
            at = authority_end.max(m.end());
        }
    }
}

/// How much of a value under a maybe-secret name (`key`, `session`) is read
/// to judge whether it looks random.
const MAYBE_JUDGE_BYTES: usize = 48;

/// A parsed assignment head.
struct Head {
    name: String,
    value_start: usize,
    syntax: Syntax,
    indent: usize,
}

/// Splits a head match into its name, separator and quoting.
fn parse_head(hay: &[u8], start: usize, end: usize) -> Option<Head> {
    let text = hay.get(start..end)?;
    let mut i = 0;
    if text.first() == Some(&b'\\') {
        i += 1;
    }
    let open = text.get(i).copied().filter(|b| matches!(b, b'"' | b'\'' | b'`'));
    if open.is_some() {
        i += 1;
    }
    let name_start = i;
    while text
        .get(i)
        .is_some_and(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b'-'))
    {
        i += 1;
    }
    let name = String::from_utf8_lossy(text.get(name_start..i)?).into_owned();
    if text.get(i) == Some(&b'\\') {
        i += 1;
    }
    let closed = open.is_some() && text.get(i) == open.as_ref();
    if closed {
        i += 1;
    }
    while text.get(i).is_some_and(|b| *b == b' ' || *b == b'\t') {
        i += 1;
    }
    let sep = text.get(i..).unwrap_or_default();
    let shell = sep.first() == Some(&b'=') && sep.get(1) != Some(&b'>');
    let line_start = line_indent(hay, start);
    let syntax = match (open, closed, shell, line_start) {
        // `'Cookie: a=1; b=2'`, `-d 'token=x&y=1'`: inside a quoted string.
        (Some(quote), false, amp, _) => Syntax::Quoted { quote, amp },
        (_, _, true, _) => Syntax::Shell,
        (None, _, false, Some(_)) => Syntax::Block,
        _ => Syntax::Inline,
    };
    Some(Head {
        name,
        value_start: end,
        syntax,
        indent: line_start.unwrap_or(0),
    })
}

/// How far `at` is indented when only whitespace (or a YAML `- `) stands
/// between it and the start of its line. Looks back a bounded distance.
fn line_indent(hay: &[u8], at: usize) -> Option<usize> {
    let from = at.saturating_sub(128);
    let before = hay.get(from..at)?;
    let line_start = match memchr::memrchr(b'\n', before) {
        Some(i) => i + 1,
        None if from == 0 => 0,
        None => return None,
    };
    let prefix = before.get(line_start..)?;
    prefix
        .iter()
        .all(|b| matches!(b, b' ' | b'\t' | b'-'))
        .then(|| prefix.iter().take_while(|b| matches!(b, b' ' | b'\t')).count())
}

/// Authorization schemes kept in front of the credential they introduce.
const SCHEMES: &[&str] = &[
    "bearer", "basic", "token", "bot", "digest", "negotiate", "apikey", "aws4-hmac-sha256", "ntlm",
    "hawk", "mac",
];

/// Skips an authorization scheme (`Bearer `, `Bearer%20` decoded) at `at`.
fn skip_scheme(hay: &[u8], at: usize) -> usize {
    let rest = hay.get(at..).unwrap_or_default();
    let word_len = rest
        .iter()
        .take(24)
        .position(|b| *b == b' ' || *b == b'+')
        .unwrap_or(0);
    let word = rest.get(..word_len).unwrap_or_default().to_ascii_lowercase();
    if word_len > 0 && SCHEMES.iter().any(|s| s.as_bytes() == word.as_slice()) {
        at + word_len + 1
    } else {
        at
    }
}

/// Decides whether the value after `head` is hidden; returns where scanning
/// resumes when it is.
fn judge(hay: &[u8], head: &Head, out: &mut Vec<Span>) -> Option<usize> {
    let class = classify_key(&head.name);
    if class == KeyClass::Plain {
        return None;
    }
    let header = is_header_name(&head.name);
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
    let kind = kind_for(&head.name, header || matches!(head.syntax, Syntax::Quoted { .. }));
    push_value(hay, full, kind, out);
    Some(full.next.max(start))
}

fn is_header_name(name: &str) -> bool {
    let lower = name.to_ascii_lowercase();
    lower.contains("authorization") || lower == "bearer"
}

fn kind_for(name: &str, header_context: bool) -> SecretKind {
    let lower = name.to_ascii_lowercase();
    if lower.contains("cookie") {
        SecretKind::Cookie
    } else if is_header_name(name) || (header_context && lower.contains('-')) {
        SecretKind::AuthHeader
    } else {
        SecretKind::GenericAssignment
    }
}

fn push_value(hay: &[u8], e: Extent, kind: SecretKind, out: &mut Vec<Span>) {
    let bytes = e.bytes(hay);
    if !bytes.is_empty() && !values::is_exempt(bytes) {
        out.push(Span::new(e.start, e.end, kind));
    }
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

/// `scheme://user:password@host`: hides the password (or a token-like user
/// when there is no password). The user info runs to the last `@` of the
/// authority, so a password holding `@` is hidden whole.
fn url_credentials(hay: &[u8], start: usize, end: usize, out: &mut Vec<Span>) {
    let Some(authority) = hay.get(start..end) else { return };
    let Some(at) = memchr::memrchr(b'@', authority) else { return };
    let userinfo = authority.get(..at).unwrap_or_default();
    match memchr::memchr(b':', userinfo) {
        Some(colon) => {
            let password = userinfo.get(colon + 1..).unwrap_or_default();
            if !password.is_empty() && !values::is_exempt(password) {
                out.push(Span::new(start + colon + 1, start + at, SecretKind::UrlPassword));
            }
        }
        None => {
            if values::looks_random(userinfo) && !values::is_exempt(userinfo) {
                out.push(Span::new(start, start + at, SecretKind::UrlCredential));
            }
        }
    }
}

/// Whether `b` can be part of PEM key material (base64, headers such as
/// `Proc-Type: 4,ENCRYPTED`, line breaks).
fn is_material(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'+' | b'/' | b'=' | b':' | b',' | b'.' | b'-' | b' ' | b'\t' | b'\r' | b'\n')
}

/// Length of a line-number prefix at `at` (`   12→`, `12\t`), as a file
/// viewer prints it, or 0.
fn line_prefix(hay: &[u8], at: usize) -> usize {
    let rest = hay.get(at..).unwrap_or_default();
    let spaces = rest.iter().take_while(|b| **b == b' ').count();
    let digits = rest
        .get(spaces..)
        .unwrap_or_default()
        .iter()
        .take_while(|b| b.is_ascii_digit())
        .count();
    if digits == 0 {
        return 0;
    }
    let after = rest.get(spaces + digits..).unwrap_or_default();
    if after.starts_with("→".as_bytes()) {
        spaces + digits + "→".len()
    } else if after.first() == Some(&b'\t') {
        spaces + digits + 1
    } else {
        0
    }
}

/// Where the key material after a BEGIN line ends: after the END line, or
/// at the first byte that cannot be key material (a truncated block).
fn key_material_end(hay: &[u8], from: usize, pem_end: &meta::Regex) -> usize {
    let mut i = from;
    let mut line_start = false;
    while i < hay.len() {
        if line_start {
            i += line_prefix(hay, i);
        }
        let Some(&b) = hay.get(i) else { break };
        if b == b'-' && hay.get(i..).is_some_and(|r| r.starts_with(b"-----END")) {
            return pem_end
                .search(&Input::new(hay).range(i..).anchored(regex_automata::Anchored::Yes))
                .map_or(i, |m| m.end());
        }
        if b == b'\\' && matches!(hay.get(i + 1), Some(b'n' | b'r' | b't')) {
            line_start = hay.get(i + 1) == Some(&b'n');
            i += 2;
            continue;
        }
        if !is_material(b) {
            break;
        }
        line_start = b == b'\n';
        i += 1;
    }
    // Trailing whitespace is not part of the key.
    while i > from && hay.get(i - 1).is_some_and(u8::is_ascii_whitespace) {
        i -= 1;
    }
    i
}

/// Where the key material before an END line starts when its BEGIN line is
/// missing: back over lines of key material.
fn key_material_start(hay: &[u8], end: usize) -> usize {
    let mut i = end;
    while i > 0 {
        let Some(&b) = hay.get(i - 1) else { break };
        let escaped_newline = b == b'n' && i >= 2 && hay.get(i - 2) == Some(&b'\\');
        if escaped_newline {
            i -= 2;
            continue;
        }
        if !is_material(b) {
            break;
        }
        i -= 1;
    }
    while hay.get(i).is_some_and(u8::is_ascii_whitespace) && i < end {
        i += 1;
    }
    i
}
