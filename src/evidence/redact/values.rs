//! Where a value ends, and whether it is worth hiding.
//!
//! The redacted span must cover the whole value in its own syntax, or the
//! tail of a secret shows: a YAML scalar with spaces runs to the end of its
//! line (or is a `|` block), a double-quoted string ends at its first
//! unescaped quote, a shell word runs through every quoted and unquoted
//! piece glued to it (`'ab'\''cd'`). Judging a value (is it a reference, a
//! path, random?) reads at most [`JUDGE_BYTES`] of it, so a value that is
//! not hidden costs a bounded amount however often it is looked at; the full
//! extent is only walked when the value is hidden, and scanning then resumes
//! after it, so every byte is walked once.

use super::kind;
use super::provider::shannon_entropy;

/// How much of a value is read to judge it. A value longer than this is
/// never a reference or a path, so it is judged by its first bytes.
pub const JUDGE_BYTES: usize = 512;

/// The syntax a value is written in, from the separator before it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Syntax {
    /// After `=`: a shell word (quotes and escapes glue pieces together;
    /// whitespace and `;&|<>()` end it; `&` too, as in a URL query).
    Shell,
    /// After `:` at the start of a line: a YAML scalar (rest of the line, a
    /// quoted string, or a `|`/`>` block).
    Block,
    /// After `:` or `:=` inside a line (JSON, code, prose): a quoted string,
    /// or a bare word up to whitespace or `,;)]}`.
    Inline,
    /// Inside a quoted string that opened before the name (`-H 'Cookie:
    /// a=1; b=2'`, `-d 'token=x&y=1'`): up to the closing quote or the end
    /// of the line, and after `=` also up to a `&` or a blank.
    /// `escaped`: the string opened with an escaped quote (`\"`, a JSON
    /// string inside another), so only the same escaped quote closes it.
    Quoted { quote: u8, amp: bool, escaped: bool },
    /// After `=` in text whose shell quoting is already removed: up to a
    /// shell delimiter, quotes and backslashes being literal bytes.
    Bare,
    /// After a verb in prose ("the db password is X"): one word, up to
    /// whitespace, a quote, an escaped quote or line break, or a shell
    /// operator followed by a blank; sentence punctuation at its end is
    /// not part of it.
    Prose,
}

/// A value's bytes: `start..end` is what is hidden (inside the outer quotes
/// of a quoted value); `next` is where scanning resumes after it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Extent {
    pub start: usize,
    pub end: usize,
    pub next: usize,
    /// Whether the walk reached the real end (false: stopped at a limit).
    pub complete: bool,
}

impl Extent {
    pub fn bytes<'h>(&self, hay: &'h [u8]) -> &'h [u8] {
        hay.get(self.start..self.end).unwrap_or_default()
    }
}

/// The value starting at `at`, walking at most `limit` bytes.
pub fn extent(hay: &[u8], at: usize, syntax: Syntax, indent: usize, limit: usize) -> Extent {
    let stop = at.saturating_add(limit).min(hay.len());
    match syntax {
        Syntax::Shell => shell_word(hay, at, stop),
        Syntax::Block => block_scalar(hay, at, indent, stop),
        Syntax::Inline => inline_value(hay, at, stop),
        Syntax::Quoted {
            quote,
            amp,
            escaped,
        } => until_quote(hay, at, quote, amp, escaped, stop),
        Syntax::Bare => bare_word(hay, at, stop),
        Syntax::Prose => prose_word(hay, at, stop),
    }
}

/// One word of prose at `at` (see [`Syntax::Prose`]).
fn prose_word(hay: &[u8], at: usize, stop: usize) -> Extent {
    let mut i = at;
    while i < stop {
        let Some(b) = byte(hay, i) else { break };
        let next = byte(hay, i + 1);
        let ends = b.is_ascii_whitespace()
            || matches!(b, b'\'' | b'"' | b'`')
            || (b == b'\\' && matches!(next, Some(b'"' | b'\'' | b'n' | b'r' | b't')))
            || (matches!(b, b';' | b'|' | b'&' | b'<' | b'>' | b')')
                && next.is_none_or(|n| {
                    n.is_ascii_whitespace()
                        || matches!(n, b';' | b'|' | b'&' | b'\'' | b'"' | b'\\')
                }));
        if ends {
            break;
        }
        i += 1;
    }
    let mut end = i;
    while end > at && byte(hay, end - 1).is_some_and(|b| matches!(b, b'.' | b',' | b'?' | b':')) {
        end -= 1;
    }
    Extent {
        start: at,
        end,
        next: i,
        complete: i < stop || stop == hay.len(),
    }
}

/// Whether a word of prose after "password is" reads as the secret rather
/// than as more prose ("is required", "is wrong", "is 8 characters"): six
/// bytes or more, with a digit or a symbol, and no reference, path,
/// placeholder or URL.
pub fn secretish_word(v: &[u8]) -> bool {
    let v = v.trim_ascii();
    v.len() >= 6
        && v.iter().any(|b| {
            b.is_ascii_digit() || (b.is_ascii_punctuation() && !matches!(b, b'-' | b'_' | b'.'))
        })
        && memchr::memmem::find(v, b"://").is_none()
        && !is_exempt(v)
}

fn byte(hay: &[u8], i: usize) -> Option<u8> {
    hay.get(i).copied()
}

pub fn is_shell_delimiter(b: u8) -> bool {
    b.is_ascii_whitespace() || matches!(b, b';' | b'&' | b'|' | b'<' | b'>' | b'(' | b')' | b'`')
}

/// Index of the closing `"` of a double-quoted string whose body starts at
/// `from` (backslash escapes skipped), or `stop`.
fn close_double(hay: &[u8], from: usize, stop: usize, multiline: bool) -> (usize, bool) {
    let mut i = from;
    while i < stop {
        match byte(hay, i) {
            Some(b'\\') => i += 2,
            Some(b'"') => return (i, true),
            Some(b'\n') if !multiline => return (i, false),
            Some(_) => i += 1,
            None => break,
        }
    }
    (stop.min(hay.len()), false)
}

/// A shell word: every quoted and unquoted piece up to an unquoted
/// delimiter.
fn shell_word(hay: &[u8], at: usize, stop: usize) -> Extent {
    let mut i = at;
    let mut pieces = 0usize;
    let mut single_quoted_whole = None;
    let mut complete = true;
    while i < stop {
        let Some(b) = byte(hay, i) else { break };
        let piece_start = i;
        match b {
            b'\'' => {
                let close = memchr_in(hay, b'\'', i + 1, stop);
                if close.is_none() && stop == hay.len() {
                    return unterminated(hay, at, piece_start, stop);
                }
                i = close.map_or(stop, |c| c + 1);
                complete &= close.is_some();
            }
            b'"' => {
                let (close, found) = close_double(hay, i + 1, stop, true);
                if !found && stop == hay.len() {
                    return unterminated(hay, at, piece_start, stop);
                }
                i = if found { close + 1 } else { close };
                complete &= found;
            }
            b'$' if byte(hay, i + 1) == Some(b'\'') => {
                let after = after_ansi_c(hay, i, stop);
                if byte(hay, after.saturating_sub(1)) != Some(b'\'') && stop == hay.len() {
                    return unterminated(hay, at, piece_start, stop);
                }
                i = after;
            }
            // `\n`, `\r`, `\t`: in a shell word the escaped letter, but
            // written so only in text that encodes a line break or a tab
            // (a JSON string holding a command): the word ends there, or a
            // value would run on over the next line's command.
            b'\\' if matches!(byte(hay, i + 1), Some(b'n' | b'r' | b't')) => break,
            // `\$(…)`: a substitution escaped for the shell a `sh -c "…"`
            // string is run by, whole.
            b'\\' if byte(hay, i + 1) == Some(b'$') && byte(hay, i + 2) == Some(b'(') => {
                i = after_expansion(hay, i + 1, stop);
            }
            b'\\' => i += 2,
            b'$' if matches!(byte(hay, i + 1), Some(b'(' | b'{')) => {
                i = after_expansion(hay, i, stop);
            }
            b if is_shell_delimiter(b) => break,
            _ => {
                while i < stop
                    && byte(hay, i).is_some_and(|c| !is_shell_delimiter(c))
                    && !matches!(byte(hay, i), Some(b'\'' | b'"' | b'\\' | b'$'))
                {
                    i += 1;
                }
                if i == piece_start {
                    i += 1;
                }
            }
        }
        pieces += 1;
        if pieces == 1 && matches!(b, b'\'' | b'"') {
            single_quoted_whole = Some(i);
        }
    }
    let end = i.min(hay.len());
    complete &= end < stop || stop == hay.len();
    // A value that is one quoted string: hide what is inside the quotes. A
    // word of several pieces that opens and closes with a quote: hide from
    // inside the first quote to inside the last (`'ab'\''cd'`).
    let opens = byte(hay, at).filter(|b| matches!(b, b'\'' | b'"'));
    let closes = end
        .checked_sub(1)
        .and_then(|e| byte(hay, e))
        .filter(|b| Some(*b) == opens);
    // A word that only opens with a quote (`"a"b`): the quote is not secret.
    let (start, inner_end) = match (opens, closes, single_quoted_whole) {
        (Some(_), Some(_), Some(_)) if end > at + 1 => (at + 1, end - 1),
        (Some(_), _, _) if end > at + 1 => (at + 1, trim_trailing(hay, at + 1, end)),
        _ => (at, trim_trailing(hay, at, end)),
    };
    Extent {
        start,
        end: inner_end.max(start),
        next: end,
        complete,
    }
}

/// A shell word cut at a quote that never closes before the end of the
/// text. The quote is not the value's: a decoded view can open a quote the
/// original closes (`echo "a\npassword=X" > f; rm -rf ~/app` read with JSON
/// escapes decoded ends `password=X"`), and a value that ran on to the end
/// through it would hide every action after the secret. The value is the
/// pieces before the quote; when the quote opens the value, its body up to
/// the first blank or shell delimiter (a secret with blanks in an unclosed
/// quote loses its tail to the other rules, never the command its place).
fn unterminated(hay: &[u8], at: usize, quote: usize, stop: usize) -> Extent {
    if quote > at {
        return Extent {
            start: at,
            end: trim_trailing(hay, at, quote),
            next: quote,
            complete: true,
        };
    }
    let body = match byte(hay, quote) {
        Some(b'$') => quote + 2,
        _ => quote + 1,
    }
    .min(stop);
    let end = unclosed_body_end(hay, body, stop);
    Extent {
        start: body,
        end,
        next: end,
        complete: true,
    }
}

/// Where the body of a quote that never closes, starting at `body`, ends as
/// a value: at the first blank, shell delimiter, quote, or escaped line
/// break or tab (`\n` in a JSON string holding the command).
fn unclosed_body_end(hay: &[u8], body: usize, stop: usize) -> usize {
    let rest = hay.get(body..stop).unwrap_or_default();
    let mut i = 0;
    while let Some(&b) = rest.get(i) {
        if is_shell_delimiter(b)
            || matches!(b, b'"' | b'\'')
            || (b == b'\\' && matches!(rest.get(i + 1), Some(b'n' | b'r' | b't')))
        {
            break;
        }
        i += 1;
    }
    body + i
}

/// The parts of a hidden value `start..end` that are its own bytes: all of
/// it, except the commands it runs.
///
/// A command substitution in a value (`API_KEY="$(curl -s URL | sh)"`,
/// `SECRET=${SECRET:-$(rm -rf ~/app)}`, `` TOKEN=`…` ``) is code that
/// runs when the assignment does: hiding it would hide an action from the
/// reviewer. It stays visible — except a substitution that only prints
/// literal words (`$(echo hunter2)`, `$(printf %s hunter2)`), whose words
/// are the value and are hidden, the `echo` kept. The text around the
/// substitutions is hidden as before.
pub fn hidden_parts(hay: &[u8], start: usize, end: usize) -> Vec<(usize, usize)> {
    let mut parts = Vec::new();
    let mut from = start;
    let mut i = start;
    while i < end {
        let code = match byte(hay, i) {
            Some(b'$') if byte(hay, i + 1) == Some(b'(') => {
                Some((i + 2, after_expansion(hay, i, end).min(end)))
            }
            Some(b'$') if byte(hay, i + 1) == Some(b'{') => {
                let close = after_expansion(hay, i, end).min(end);
                let body = hay.get(i..close).unwrap_or_default();
                let runs = memchr::memmem::find(body, b"$(").is_some() || body.contains(&b'`');
                runs.then_some((i + 2, close))
            }
            Some(b'`') => {
                let close = memchr_in(hay, b'`', i + 1, end).map_or(end, |c| c + 1);
                Some((i + 1, close))
            }
            Some(b'\\') if byte(hay, i + 1) == Some(b'$') && byte(hay, i + 2) == Some(b'(') => {
                Some((i + 3, after_expansion(hay, i + 1, end).min(end)))
            }
            Some(b'\\') => {
                i += 2;
                continue;
            }
            _ => None,
        };
        let Some((body, close)) = code else {
            i += 1;
            continue;
        };
        if from < i {
            parts.push((from, i));
        }
        if let Some(words) = printed_words(hay, body, close) {
            parts.push(words);
        }
        from = close;
        i = close.max(i + 1);
    }
    if from < end {
        parts.push((from, end));
    }
    parts.retain(|(s, e)| s < e && !is_exempt(hay.get(*s..*e).unwrap_or_default()));
    parts
}

/// Programs that only transform what they read (decode, decompress, cut):
/// the literal a substitution pipes into them, or gives them as a
/// here-string, is the value in another spelling. A program that could run
/// what it reads (a shell, an interpreter, `xargs`, `sed`) is not one.
const DECODERS: &[&[u8]] = &[
    b"base64", b"base32", b"basenc", b"xxd", b"tr", b"rev", b"gunzip", b"zcat", b"gzip", b"bzip2",
    b"bunzip2", b"xz", b"unxz", b"zstd", b"openssl", b"cut", b"head", b"tail", b"fold",
];

/// Whether `stage` (a pipeline stage, trimmed) runs a decoder and nothing
/// else: no substitution, redirection or list operator in it.
fn is_decoder_stage(stage: &[u8]) -> bool {
    let name_len = stage
        .iter()
        .position(u8::is_ascii_whitespace)
        .unwrap_or(stage.len());
    let name = stage.get(..name_len).unwrap_or_default();
    let name = name.rsplit(|b| *b == b'/').next().unwrap_or(name);
    DECODERS.contains(&name)
        && !stage.iter().any(|b| {
            matches!(
                b,
                b';' | b'&' | b'<' | b'>' | b'`' | b'$' | b'(' | b')' | b'\n'
            )
        })
}

/// In a substitution body `body..close` (its closing byte included), the
/// literal that is the value: the words of one `echo` or `printf` of
/// literal words, when every later stage of its pipeline is a decoder
/// (`$(echo c2stcHJv… | base64 -d)`), or a decoder's here-string
/// (`$(base64 -d <<< c2st…)`). The commands stay visible.
fn printed_words(hay: &[u8], body: usize, close: usize) -> Option<(usize, usize)> {
    let inner_end = close.saturating_sub(1).max(body);
    let inner = hay.get(body..inner_end)?;
    let lead = inner.iter().take_while(|b| b.is_ascii_whitespace()).count();
    let rest = inner.get(lead..)?;
    if let Some(word) = here_string_of_a_decoder(rest) {
        let start = body + lead + word.0;
        return Some((start, body + lead + word.1));
    }
    let command = [b"echo".as_slice(), b"printf".as_slice()]
        .into_iter()
        .find(|c| rest.starts_with(c) && rest.get(c.len()).is_some_and(|b| *b == b' '))?;
    let words = rest.get(command.len()..)?;
    // The first stage ends at the first `|` outside quotes; every stage
    // after it must be a decoder.
    let pipe = unquoted_pipe(words);
    let (printed, after) = match pipe {
        Some(p) => (words.get(..p)?, words.get(p + 1..)),
        None => (words, None),
    };
    if let Some(after) = after
        && !after
            .split(|b| *b == b'|')
            .all(|stage| is_decoder_stage(stage.trim_ascii()))
    {
        return None;
    }
    if printed.iter().any(|b| {
        matches!(
            b,
            b'|' | b';' | b'&' | b'<' | b'>' | b'`' | b'$' | b'(' | b')' | b'\n'
        )
    }) {
        return None;
    }
    let start = body + lead + command.len();
    let start = start + printed.iter().take_while(|b| **b == b' ').count();
    let trailing = printed.iter().rev().take_while(|b| **b == b' ').count();
    let end = body + lead + command.len() + printed.len() - trailing;
    (start < end).then_some((start, end))
}

/// The first `|` of `words` outside single or double quotes.
fn unquoted_pipe(words: &[u8]) -> Option<usize> {
    let mut quote = None;
    for (i, b) in words.iter().enumerate() {
        match (quote, b) {
            (None, b'\'' | b'"') => quote = Some(*b),
            (Some(q), _) if q == *b => quote = None,
            (None, b'|') => return Some(i),
            _ => {}
        }
    }
    None
}

/// `base64 -d <<< LITERAL`: the here-string's word (start, end) within
/// `stage`, when the stage is a decoder's and the word is literal.
fn here_string_of_a_decoder(stage: &[u8]) -> Option<(usize, usize)> {
    let at = memchr::memmem::find(stage, b"<<<")?;
    let command = stage.get(..at)?.trim_ascii();
    if !is_decoder_stage(command) {
        return None;
    }
    let from = at + 3;
    let from = from
        + stage
            .get(from..)?
            .iter()
            .take_while(|b| **b == b' ')
            .count();
    let word = stage.get(from..)?;
    let len = word
        .iter()
        .position(|b| {
            b.is_ascii_whitespace() || matches!(b, b';' | b'|' | b'&' | b'<' | b'>' | b'$' | b'`')
        })
        .unwrap_or(word.len());
    (len > 0).then_some((from, from + len))
}

/// A word up to the first shell delimiter, every other byte literal.
fn bare_word(hay: &[u8], at: usize, stop: usize) -> Extent {
    let len = hay
        .get(at..stop)
        .unwrap_or_default()
        .iter()
        .position(|b| is_shell_delimiter(*b))
        .unwrap_or(stop.saturating_sub(at));
    let end = at + len;
    Extent {
        start: at,
        end: trim_trailing(hay, at, end),
        next: end,
        complete: end < stop || stop == hay.len(),
    }
}

/// The index after a `$'…'` string starting at `at` (its `\\` escapes skipped).
fn after_ansi_c(hay: &[u8], at: usize, stop: usize) -> usize {
    let mut j = at + 2;
    while j < stop && byte(hay, j) != Some(b'\'') {
        j += if byte(hay, j) == Some(b'\\') { 2 } else { 1 };
    }
    (j + 1).min(stop.max(j))
}

/// The index after a `$(…)` or `${…}` starting at `at`: to the matching
/// close, nested ones included, never past a newline.
fn after_expansion(hay: &[u8], at: usize, stop: usize) -> usize {
    let (open, close) = match byte(hay, at + 1) {
        Some(b'(') => (b'(', b')'),
        _ => (b'{', b'}'),
    };
    let mut depth = 0usize;
    let mut j = at + 1;
    while j < stop {
        match byte(hay, j) {
            Some(c) if c == open => depth += 1,
            Some(c) if c == close => {
                depth = depth.saturating_sub(1);
                if depth == 0 {
                    break;
                }
            }
            Some(b'\n') | None => break,
            Some(_) => {}
        }
        j += 1;
    }
    (j + 1).min(stop.max(j))
}

/// Drops trailing `,` `}` `]` that close the structure around a bare value.
fn trim_trailing(hay: &[u8], start: usize, mut end: usize) -> usize {
    while end > start && matches!(byte(hay, end - 1), Some(b',' | b'}' | b']')) {
        end -= 1;
    }
    end
}

fn memchr_in(hay: &[u8], needle: u8, from: usize, stop: usize) -> Option<usize> {
    let slice = hay.get(from..stop)?;
    memchr::memchr(needle, slice).map(|i| from + i)
}

fn line_end(hay: &[u8], from: usize, stop: usize) -> usize {
    memchr_in(hay, b'\n', from, stop).unwrap_or(stop)
}

/// A quoted string after `:`: JSON/YAML double quotes with escapes, or
/// YAML single quotes where `''` is a quote.
fn quoted_inline(hay: &[u8], at: usize, stop: usize) -> Option<Extent> {
    match byte(hay, at)? {
        // `\"…\"`: a JSON string inside another string.
        b'\\' if byte(hay, at + 1) == Some(b'"') => {
            let body = at + 2;
            let close = hay
                .get(body..stop)
                .and_then(|r| memchr::memmem::find(r, b"\\\""))
                .map(|i| body + i);
            let line = line_end(hay, body, stop);
            let end = match close {
                Some(c) => c,
                None if line < stop || stop == hay.len() => unclosed_body_end(hay, body, line),
                None => line,
            };
            Some(Extent {
                start: body,
                end,
                next: close.map_or(end, |c| c + 2),
                complete: close.is_some() || end < stop || stop == hay.len(),
            })
        }
        b'"' => {
            let (close, found) = close_double(hay, at + 1, stop, false);
            if !found && (close < stop || stop == hay.len()) {
                // Never closed on its line: a word, not the rest of the line.
                let end = unclosed_body_end(hay, at + 1, close);
                return Some(Extent {
                    start: at + 1,
                    end,
                    next: end,
                    complete: true,
                });
            }
            Some(Extent {
                start: at + 1,
                end: close,
                next: if found { close + 1 } else { close },
                complete: found || close < stop || stop == hay.len(),
            })
        }
        b'\'' => {
            let mut i = at + 1;
            while i < stop {
                match byte(hay, i) {
                    Some(b'\'') if byte(hay, i + 1) == Some(b'\'') => i += 2,
                    Some(b'\'') | Some(b'\n') | None => break,
                    Some(_) => i += 1,
                }
            }
            let found = byte(hay, i) == Some(b'\'');
            if !found && (i < stop || stop == hay.len()) {
                let end = unclosed_body_end(hay, at + 1, i.min(stop));
                return Some(Extent {
                    start: at + 1,
                    end,
                    next: end,
                    complete: true,
                });
            }
            Some(Extent {
                start: at + 1,
                end: i.min(stop),
                next: if found { i + 1 } else { i.min(stop) },
                complete: found || i < stop || stop == hay.len(),
            })
        }
        _ => None,
    }
}

/// A YAML value at the start of a line: quoted, a block scalar, or the rest
/// of the line without a trailing comment.
fn block_scalar(hay: &[u8], at: usize, indent: usize, stop: usize) -> Extent {
    if let Some(quoted) = quoted_inline(hay, at, stop) {
        return quoted;
    }
    let eol = line_end(hay, at, stop);
    let rest = hay.get(at..eol).unwrap_or_default();
    let indicator = rest.trim_ascii_end();
    let is_block = matches!(indicator.first(), Some(b'|' | b'>'))
        && indicator
            .iter()
            .skip(1)
            .all(|b| matches!(b, b'-' | b'+' | b'0'..=b'9'));
    if is_block {
        return block_lines(hay, eol, indent, stop);
    }
    let mut end = eol;
    // ` #` starts a comment in YAML; inside a plain scalar `#` is text.
    if let Some(hash) = rest.windows(2).position(|w| w == b" #") {
        end = at + hash;
    }
    while end > at && byte(hay, end - 1).is_some_and(|b| b.is_ascii_whitespace()) {
        end -= 1;
    }
    Extent {
        start: at,
        end,
        next: eol,
        complete: eol < stop || stop == hay.len(),
    }
}

/// The lines of a `|` or `>` block: every following line indented deeper
/// than the key (blank lines included).
fn block_lines(hay: &[u8], eol: usize, indent: usize, stop: usize) -> Extent {
    let start = (eol + 1).min(stop);
    let mut end = start;
    let mut i = start;
    while i < stop {
        let next_eol = line_end(hay, i, stop);
        let line = hay.get(i..next_eol).unwrap_or_default();
        let blank = line.iter().all(u8::is_ascii_whitespace);
        let depth = line
            .iter()
            .take_while(|b| **b == b' ' || **b == b'\t')
            .count();
        if !blank && depth <= indent {
            break;
        }
        if !blank {
            end = next_eol;
        }
        i = next_eol + 1;
    }
    Extent {
        start,
        end: end.max(start),
        next: end.max(start),
        complete: i < stop || stop == hay.len(),
    }
}

/// A value inside a line: quoted, or a bare word.
fn inline_value(hay: &[u8], at: usize, stop: usize) -> Extent {
    if let Some(quoted) = quoted_inline(hay, at, stop) {
        return quoted;
    }
    // A template expression (`${{ secrets.X }}`, `{{ var }}`) runs to its
    // closing braces, spaces included.
    let rest = hay.get(at..stop).unwrap_or_default();
    if rest.starts_with(b"${{") || rest.starts_with(b"{{") {
        let line = rest
            .get(..memchr::memchr(b'\n', rest).unwrap_or(rest.len()))
            .unwrap_or_default();
        if let Some(close) = memchr::memmem::find(line, b"}}") {
            let end = at + close + 2;
            return Extent {
                start: at,
                end,
                next: end,
                complete: true,
            };
        }
    }
    let mut i = at;
    while i < stop
        && byte(hay, i).is_some_and(|b| {
            !b.is_ascii_whitespace()
                && !matches!(b, b',' | b';' | b')' | b']' | b'}' | b'"' | b'\'')
        })
    {
        i += 1;
    }
    Extent {
        start: at,
        end: i,
        next: i,
        complete: i < stop || stop == hay.len(),
    }
}

/// Up to the closing quote `q` (or the end of the line, or a `&`).
fn until_quote(hay: &[u8], at: usize, q: u8, amp: bool, escaped: bool, stop: usize) -> Extent {
    let eol = line_end(hay, at, stop);
    // After `=` the value is one word of the quoted text (`-d 'token=x&y=1'`,
    // `"PASSWORD=x && rm -rf ~"` in a JSON string holding a command): it
    // ends at a blank or a `&` as well. After `:` it is the rest of the
    // quoted text (`-H 'Cookie: a=1; b=2'`).
    let eol = match amp {
        true => hay
            .get(at..eol)
            .unwrap_or_default()
            .windows(2)
            .position(|w| {
                matches!(w.first(), Some(b'&' | b' ' | b'\t' | b';' | b'|'))
                    || matches!(w, [b'\\', b'n' | b'r' | b't'])
            })
            .map_or(eol, |i| at + i),
        false => eol,
    };
    let close = match q {
        _ if escaped => hay
            .get(at..eol)
            .and_then(|r| memchr::memmem::find(r, &[b'\\', q]))
            .map(|i| at + i),
        b'"' => {
            let (c, found) = close_double(hay, at, eol, false);
            found.then_some(c)
        }
        other => memchr_in(hay, other, at, eol),
    };
    let mut end = close.unwrap_or(eol);
    while end > at && byte(hay, end - 1).is_some_and(|b| b.is_ascii_whitespace()) {
        end -= 1;
    }
    Extent {
        start: at,
        end,
        next: end,
        complete: close.is_some() || eol < stop || stop == hay.len(),
    }
}

// ---------------------------------------------------------------------------
// Judging a value
// ---------------------------------------------------------------------------

/// Values that are not secrets even where a secret is expected: empty, a
/// well-formed reference to a secret held elsewhere, a real earlier
/// redaction, a file path, or a literal like `null`. Everything else under a
/// secret name is hidden: a value that merely starts with `$` or `/`, or
/// that merely starts like a marker, is not exempt.
pub fn is_exempt(v: &[u8]) -> bool {
    let v = v.trim_ascii();
    if v.is_empty() || v.len() > JUDGE_BYTES {
        return v.is_empty();
    }
    let Ok(text) = std::str::from_utf8(v) else {
        return false;
    };
    kind::is_marker(text)
        || is_reference(text)
        || is_path(text)
        || is_substitution_of_a_lookup(text)
        || is_placeholder(text)
        || [
            "null",
            "none",
            "nil",
            "true",
            "false",
            "undefined",
            "~",
            "[]",
            "{}",
        ]
        .iter()
        .any(|w| w.eq_ignore_ascii_case(text))
}

fn is_upper_ident(s: &str) -> bool {
    s.bytes()
        .next()
        .is_some_and(|b| b.is_ascii_uppercase() || b == b'_')
        && s.bytes()
            .all(|b| b.is_ascii_uppercase() || b.is_ascii_digit() || b == b'_')
}

fn is_lower_ident(s: &str) -> bool {
    !s.is_empty() && s.bytes().all(|b| b.is_ascii_lowercase() || b == b'_')
}

/// `$NAME`, `${NAME}`, `${NAME:-}`, `${{ secrets.NAME }}`, `{{ name }}`,
/// `%NAME%`: a reference to a secret, not the secret. A name in mixed case
/// or with a fallback value (`${PW:-hunter2}`) is not one.
fn is_reference(v: &str) -> bool {
    if let Some(rest) = v.strip_prefix("${{").and_then(|r| r.strip_suffix("}}")) {
        let inner = rest.trim();
        return [
            "secrets.", "env.", "vars.", "inputs.", "github.", "steps.", "needs.",
        ]
        .iter()
        .any(|p| inner.starts_with(p))
            && inner
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b'-'));
    }
    if let Some(rest) = v.strip_prefix("${").and_then(|r| r.strip_suffix('}')) {
        let name = rest
            .strip_suffix(":-")
            .or_else(|| rest.strip_suffix(":?"))
            .unwrap_or(rest);
        return is_upper_ident(name) || is_lower_ident(name);
    }
    if let Some(name) = v.strip_prefix('$') {
        return is_upper_ident(name) || is_lower_ident(name);
    }
    if let Some(rest) = v.strip_prefix("{{").and_then(|r| r.strip_suffix("}}")) {
        let inner = rest.trim();
        return !inner.is_empty()
            && inner.bytes().all(|b| {
                b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b' ' | b'|' | b'(' | b')')
            });
    }
    if let Some(name) = v.strip_prefix('%').and_then(|r| r.strip_suffix('%')) {
        return is_upper_ident(name) || is_lower_ident(name);
    }
    false
}

/// `<your-token>`, `xxxxxxxx`, `********`, `...`: a placeholder.
fn is_placeholder(v: &str) -> bool {
    if let Some(inner) = v.strip_prefix('<').and_then(|r| r.strip_suffix('>')) {
        return !inner.is_empty()
            && inner
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b' ' | b'.'));
    }
    let mut bytes = v.bytes();
    let first = bytes.next();
    v.len() >= 3
        && first.is_some_and(|f| matches!(f.to_ascii_lowercase(), b'x' | b'*' | b'.'))
        && bytes.all(|b| Some(b.to_ascii_lowercase()) == first.map(|f| f.to_ascii_lowercase()))
}

/// `/etc/app.conf`, `~/.ssh/id_rsa`, `./secrets/dev.json`: a path names
/// where a secret lives, which the reviewer should see. Every segment must
/// look like a file name, so a secret with slashes (`/Xq7v/B2mK9pL`) is not
/// a path.
fn is_path(v: &str) -> bool {
    let rest = v
        .strip_prefix("~/")
        .or_else(|| v.strip_prefix("./"))
        .or_else(|| v.strip_prefix("../"))
        .or_else(|| v.strip_prefix('/'));
    let Some(rest) = rest else {
        return false;
    };
    rest.contains('/')
        && rest.split('/').all(|seg| {
            seg.bytes()
                .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-' | b'~'))
                && !looks_random_segment(seg)
        })
}

/// A path segment that reads like a token rather than a file name.
fn looks_random_segment(seg: &str) -> bool {
    let digits = seg.bytes().filter(u8::is_ascii_digit).count();
    let upper = seg.bytes().filter(u8::is_ascii_uppercase).count();
    let lower = seg.bytes().filter(u8::is_ascii_lowercase).count();
    seg.len() >= 8 && digits >= 2 && upper >= 2 && lower >= 2
}

/// `$(cat /run/secrets/db)`, `$(pass show app)`, `` `gh auth token` ``: a
/// command that looks a secret up. A substitution that could hold the
/// secret itself (`$(echo hunter2)`, quotes, pipes) is not exempt.
fn is_substitution_of_a_lookup(v: &str) -> bool {
    let inner = v
        .strip_prefix("$(")
        .and_then(|r| r.strip_suffix(')'))
        .or_else(|| v.strip_prefix('`').and_then(|r| r.strip_suffix('`')));
    let Some(inner) = inner else {
        return false;
    };
    let mut words = inner.split_ascii_whitespace();
    let Some(command) = words.next() else {
        return false;
    };
    let plain_word = |w: &str| {
        !w.is_empty()
            && w.bytes().all(|b| {
                b.is_ascii_alphanumeric()
                    || matches!(b, b'_' | b'.' | b'/' | b':' | b'@' | b'=' | b'-' | b'~')
            })
    };
    let echoes = matches!(
        command.rsplit('/').next().unwrap_or(command),
        "echo"
            | "printf"
            | "base64"
            | "xxd"
            | "openssl"
            | "rev"
            | "tr"
            | "sed"
            | "awk"
            | "python"
            | "python3"
            | "node"
            | "perl"
            | "ruby"
    );
    !echoes
        && plain_word(command)
        && inner.split_ascii_whitespace().count() <= 6
        && words.all(plain_word)
}

/// A random-looking token: long, mixing letters and digits, with high
/// per-character entropy. Ordinary words and identifiers fail this.
pub fn looks_random(v: &[u8]) -> bool {
    let v = v.trim_ascii();
    let v = v.get(..JUDGE_BYTES).unwrap_or(v);
    if v.len() < 16 || v.iter().any(u8::is_ascii_whitespace) {
        return false;
    }
    let digits = v.iter().filter(|b| b.is_ascii_digit()).count();
    let letters = v.iter().filter(|b| b.is_ascii_alphabetic()).count();
    digits >= 2 && letters >= 2 && shannon_entropy(v) >= 3.0 && !is_uuid(v)
}

pub fn is_uuid(v: &[u8]) -> bool {
    v.len() == 36
        && v.iter().enumerate().all(|(i, b)| match i {
            8 | 13 | 18 | 23 => *b == b'-',
            _ => b.is_ascii_hexdigit(),
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shell(s: &str) -> String {
        let e = extent(s.as_bytes(), 0, Syntax::Shell, 0, usize::MAX);
        String::from_utf8_lossy(e.bytes(s.as_bytes())).into_owned()
    }

    #[test]
    fn shell_words_cover_every_piece() {
        assert_eq!(shell("abc def"), "abc");
        assert_eq!(shell("'a b' c"), "a b");
        assert_eq!(shell(r#""a\"b" c"#), r#"a\"b"#);
        assert_eq!(shell(r"'ab'\''cd' x"), r"ab'\''cd");
        assert_eq!(shell(r#"ab"cd"'ef' x"#), r#"ab"cd"'ef'"#);
        assert_eq!(shell("abc;make"), "abc");
        assert_eq!(shell("abc&b=1"), "abc");
        assert_eq!(shell("abc, x"), "abc");
    }

    #[test]
    fn yaml_values_run_to_the_end_of_the_line() {
        let s = b"correct horse battery staple # note\nnext: 1";
        let e = extent(s, 0, Syntax::Block, 0, usize::MAX);
        assert_eq!(e.bytes(s), b"correct horse battery staple");
        let s = b"|\n  line one\n  line two\nnext: 1";
        let e = extent(s, 0, Syntax::Block, 0, usize::MAX);
        assert_eq!(e.bytes(s), b"  line one\n  line two");
        let s = br#""a \" b" rest"#;
        let e = extent(s, 0, Syntax::Block, 0, usize::MAX);
        assert_eq!(e.bytes(s), br#"a \" b"#);
        let s = b"'it''s' rest";
        let e = extent(s, 0, Syntax::Inline, 0, usize::MAX);
        assert_eq!(e.bytes(s), b"it''s");
    }

    #[test]
    fn exemptions_are_exact() {
        for v in [
            "",
            "$DB_PASSWORD",
            "${TOKEN}",
            "${TOKEN:-}",
            "$(cat /run/secrets/db)",
            "$(pass show openai)",
            "{{ api_key }}",
            "${{ secrets.NPM_TOKEN }}",
            "/run/secrets/db",
            "~/.ssh/id_rsa",
            "[REDACTED:jwt]",
            "null",
            "<your-token>",
            "********",
        ] {
            assert!(is_exempt(v.as_bytes()), "{v}");
        }
        for v in [
            "hunter2",
            "/x",
            "$up3rS3cret",
            "${PW:-hunter2}",
            "$(echo hunter2)",
            "[REDACTED:jwt]hunter2",
            "[REDACTED:not a kind]",
            "/Xq7vB2mK9pL/aB3dE5gH7j",
        ] {
            assert!(!is_exempt(v.as_bytes()), "{v}");
        }
    }

    #[test]
    fn randomness() {
        assert!(looks_random(b"1584d8c4fa2815d2802827283e0ad841"));
        assert!(looks_random(b"aB3dE5gH7jK9mN1p"));
        assert!(!looks_random(b"production-database"));
        assert!(!looks_random(b"short1"));
        assert!(!looks_random(b"aaaaaaaaaaaaaaaa11"));
        assert!(!looks_random(b"550e8400-e29b-41d4-a716-446655440000"));
    }
}
