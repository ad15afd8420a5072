//! Decoded views of a text: what it says once URL escapes, JSON string
//! escapes, shell quoting or terminal control sequences are taken off.
//!
//! A secret in `?q=%3Dsk-ant-…`, in `"{\"password\":\"…\"}"` or in
//! `'ab'\''cd'` is hidden from the rules by its encoding. So is one glued to
//! a colour escape (`ESC[1msk-ant-…`: the `m` that ends the escape is a word
//! character, so a rule that wants a word boundary before the key does not
//! match), or one that a terminal draws whole but the text splits with
//! escapes (`grep --color` highlighting part of a key). Each view is the
//! decoded text plus a map back to the original bytes, so a finding in a view
//! redacts the original span that encodes it. Views are built only when the
//! decoding changes something, at most [`MAX_VIEWS`] of them (two levels:
//! JSON inside a URL, a URL inside a JSON string, an escape written as
//! `\u001b` in JSON), each in one pass.

use crate::shell::decode_ansi_c;

/// Most views of one text, the text itself included.
pub const MAX_VIEWS: usize = 8;

/// How a run of view bytes came from the bytes below it.
#[derive(Debug, Clone, Copy)]
struct Seg {
    /// First view byte.
    view: usize,
    /// First byte below (in the parent view, or the original text).
    orig: usize,
    /// Bytes below it covers.
    orig_len: usize,
    /// View bytes.
    len: usize,
    /// Copied byte for byte (else one decoded unit: an escape, a quote run).
    copied: bool,
}

/// One decoded view.
pub struct View {
    pub bytes: Vec<u8>,
    segs: Vec<Seg>,
    /// The view this one was decoded from; `None` for the original text.
    parent: Option<usize>,
    /// Whether shell quoting was taken off this view or one below it.
    pub dequoted: bool,
    /// The decoder that made this view from its parent.
    decoder: Option<Decoder>,
}

/// The decoders, in the order they are tried.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Decoder {
    /// Each terminal control sequence (and lone control byte) becomes one
    /// space: a key glued after an escape starts at a boundary.
    TerminalBoundary,
    Url,
    Json,
    Shell,
    /// Each terminal control sequence is dropped: a key split by escapes
    /// is joined, as the terminal shows it.
    TerminalJoin,
}

/// The boundary view comes first, so a text that needs a second-level
/// decoding (`\u001b[1m…` in a JSON string) still gets it within
/// [`MAX_VIEWS`].
const DECODERS: [Decoder; 5] = [
    Decoder::TerminalBoundary,
    Decoder::Url,
    Decoder::Json,
    Decoder::Shell,
    Decoder::TerminalJoin,
];

/// The original text and every view decoded from it.
pub struct Views {
    pub views: Vec<View>,
    /// Per view, the regions worth scanning (`None`: the whole view).
    regions: Vec<Option<Vec<(usize, usize)>>>,
}

impl Views {
    pub fn of(text: &[u8]) -> Views {
        let mut views = vec![View {
            bytes: text.to_vec(),
            segs: Vec::new(),
            parent: None,
            dequoted: false,
            decoder: None,
        }];
        let mut level = vec![0usize];
        for _depth in 0..2 {
            let mut next = Vec::new();
            for &index in &level {
                for decoder in DECODERS {
                    if views.len() >= MAX_VIEWS {
                        break;
                    }
                    let Some(source) = views.get(index) else {
                        continue;
                    };
                    let dequoted = source.dequoted || decoder == Decoder::Shell;
                    if let Some(mut view) = decode(decoder, &source.bytes) {
                        view.parent = Some(index);
                        view.dequoted = dequoted;
                        view.decoder = Some(decoder);
                        next.push(views.len());
                        views.push(view);
                    }
                }
            }
            level = next;
        }
        let mut views = Views {
            regions: views.iter().map(View::dirty).collect(),
            views,
        };
        views.prune_second_level();
        views
    }

    /// The regions of view `index` worth scanning, sorted and disjoint;
    /// `None` for the whole view (the original text).
    pub fn regions(&self, index: usize) -> Option<&[(usize, usize)]> {
        self.regions.get(index).and_then(Option::as_deref)
    }

    /// Drops the regions of a second-level view (a decoding of a decoding)
    /// that say nothing new: where its bytes, [`DIRTY_MARGIN`] each side,
    /// equal the first-level view made by the same decoder straight from
    /// the text, and that view scans the same spot. That is every spot
    /// where the first decoding changed nothing nearby: a JSON escape 4 KiB
    /// away from the nearest URL escape is read once, in the JSON view, not
    /// again in the JSON-of-URL view.
    fn prune_second_level(&mut self) {
        for index in 0..self.views.len() {
            let Some(view) = self.views.get(index) else {
                continue;
            };
            if matches!(view.parent, None | Some(0)) {
                continue;
            }
            let sibling = self
                .views
                .iter()
                .position(|v| v.parent == Some(0) && v.decoder == view.decoder);
            let Some(sibling) = sibling else { continue };
            let Some(mut regions) = self.regions.get_mut(index).and_then(Option::take) else {
                continue;
            };
            regions.retain(|&(from, to)| !self.repeats_sibling(index, sibling, from, to));
            if let Some(slot) = self.regions.get_mut(index) {
                *slot = Some(regions);
            }
        }
    }

    /// Whether region `from..to` of view `index` is scanned already in
    /// first-level view `sibling`: the same bytes, [`DIRTY_MARGIN`] each
    /// side, at the same place in the text, inside one of its regions.
    fn repeats_sibling(&self, index: usize, sibling: usize, from: usize, to: usize) -> bool {
        let (Some(view), Some(other)) = (self.views.get(index), self.views.get(sibling)) else {
            return false;
        };
        let outer_from = from.saturating_sub(DIRTY_MARGIN);
        let outer_to = to.saturating_add(DIRTY_MARGIN).min(view.bytes.len());
        let (inner_from, inner_to) = self.to_original(index, from, to);
        let (orig_from, orig_to) = self.to_original(index, outer_from, outer_to);
        let (in_from, in_to) = (other.at_source(inner_from), other.at_source(inner_to));
        let scanned = self.regions(sibling).is_some_and(|r| {
            let i = r.partition_point(|&(_, end)| end < in_to);
            r.get(i).is_some_and(|&(a, b)| a <= in_from && in_to <= b)
        });
        scanned
            && view.bytes.get(outer_from..outer_to)
                == other
                    .bytes
                    .get(other.at_source(orig_from)..other.at_source(orig_to))
    }

    /// The original byte range that view `index`'s bytes `start..end` encode.
    pub fn to_original(&self, index: usize, start: usize, end: usize) -> (usize, usize) {
        let (mut start, mut end, mut at) = (start, end, index);
        while let Some(view) = self.views.get(at) {
            let Some(parent) = view.parent else { break };
            (start, end) = view.map(start, end);
            at = parent;
        }
        (start, end)
    }
}

/// Bytes around a decoded spot that a derived view is scanned for: the
/// longest head or token a rule needs to see whole. Elsewhere a derived view
/// equals its source, which is scanned already.
pub const DIRTY_MARGIN: usize = 512;

impl View {
    /// The regions of this view worth scanning: every decoded spot (and
    /// every dropped quote) with [`DIRTY_MARGIN`] bytes each side, merged.
    /// `None` for the original text, which is scanned whole.
    fn dirty(&self) -> Option<Vec<(usize, usize)>> {
        self.parent?;
        let mut out: Vec<(usize, usize)> = Vec::new();
        let mut expect_orig = None;
        for seg in &self.segs {
            let gap = expect_orig.is_some_and(|o| o != seg.orig);
            if !seg.copied || gap {
                let from = seg.view.saturating_sub(DIRTY_MARGIN);
                let to = (seg.view + if seg.copied { 0 } else { seg.len })
                    .saturating_add(DIRTY_MARGIN)
                    .min(self.bytes.len());
                match out.last_mut() {
                    Some(last) if from <= last.1 => last.1 = last.1.max(to),
                    Some(_) | None => out.push((from, to)),
                }
            }
            expect_orig = Some(seg.orig + seg.orig_len);
        }
        Some(out)
    }

    /// The view position of source byte `pos` (the start of the decoded
    /// unit it is part of, or the end of a dropped run).
    fn at_source(&self, pos: usize) -> usize {
        let i = self.segs.partition_point(|s| s.orig <= pos);
        match i.checked_sub(1).and_then(|i| self.segs.get(i)) {
            Some(s) if s.copied => s.view + (pos - s.orig).min(s.len),
            Some(s) if pos == s.orig => s.view,
            Some(s) => s.view + s.len,
            None => 0,
        }
    }

    /// Maps `start..end` of this view to the bytes it was decoded from.
    fn map(&self, start: usize, end: usize) -> (usize, usize) {
        if end <= start {
            let s = self.map_start(start);
            return (s, s);
        }
        (self.map_start(start), self.map_end(end - 1))
    }

    fn seg_at(&self, pos: usize) -> Option<&Seg> {
        let i = self.segs.partition_point(|s| s.view <= pos);
        i.checked_sub(1).and_then(|i| self.segs.get(i))
    }

    fn map_start(&self, pos: usize) -> usize {
        match self.seg_at(pos) {
            Some(s) if s.copied => s.orig + (pos - s.view).min(s.len),
            Some(s) => s.orig,
            None => 0,
        }
    }

    /// The end (exclusive) below the view byte at `last`.
    fn map_end(&self, last: usize) -> usize {
        match self.seg_at(last) {
            Some(s) if s.copied => s.orig + (last - s.view).min(s.len) + 1,
            Some(s) => s.orig + s.orig_len,
            None => 0,
        }
    }
}

/// Builds a view and its map.
#[derive(Default)]
struct Builder {
    bytes: Vec<u8>,
    segs: Vec<Seg>,
    changed: bool,
}

impl Builder {
    fn with_capacity(n: usize) -> Builder {
        Builder {
            bytes: Vec::with_capacity(n),
            segs: Vec::new(),
            changed: false,
        }
    }

    fn copy(&mut self, orig: usize, bytes: &[u8]) {
        if bytes.is_empty() {
            return;
        }
        let view = self.bytes.len();
        self.bytes.extend_from_slice(bytes);
        if let Some(last) = self.segs.last_mut()
            && last.copied
            && last.orig + last.orig_len == orig
            && last.view + last.len == view
        {
            last.len += bytes.len();
            last.orig_len += bytes.len();
            return;
        }
        self.segs.push(Seg {
            view,
            orig,
            orig_len: bytes.len(),
            len: bytes.len(),
            copied: true,
        });
    }

    fn decoded(&mut self, orig: usize, orig_len: usize, out: &[u8]) {
        self.changed = true;
        if out.is_empty() {
            return;
        }
        self.segs.push(Seg {
            view: self.bytes.len(),
            orig,
            orig_len,
            len: out.len(),
            copied: false,
        });
        self.bytes.extend_from_slice(out);
    }

    /// Drops source bytes (a quote) from the view.
    fn skip(&mut self) {
        self.changed = true;
    }

    fn finish(self) -> Option<View> {
        self.changed.then_some(View {
            bytes: self.bytes,
            segs: self.segs,
            parent: None,
            dequoted: false,
            decoder: None,
        })
    }
}

fn decode(decoder: Decoder, text: &[u8]) -> Option<View> {
    match decoder {
        Decoder::Url => memchr::memchr(b'%', text).and_then(|_| url(text)),
        Decoder::Json => memchr::memchr(b'\\', text).and_then(|_| json(text)),
        Decoder::Shell => memchr::memchr3(b'\'', b'"', b'\\', text).and_then(|_| shell(text)),
        Decoder::TerminalBoundary => terminal(text, b" "),
        Decoder::TerminalJoin => terminal(text, b""),
    }
}

/// Terminal control: each escape sequence (CSI `ESC[…m`, OSC `ESC]…BEL`
/// or `ESC]…ESC\\`, the other `ESC` sequences, their 8-bit C1 forms) and
/// each other control byte but tab, newline and carriage return becomes
/// `with`.
fn terminal(text: &[u8], with: &[u8]) -> Option<View> {
    let mut b = Builder::with_capacity(text.len());
    let mut i = 0;
    let mut run = 0;
    while let Some(at) = text
        .get(i..)
        .and_then(|r| r.iter().position(|&c| starts_control(c)))
    {
        i += at;
        let len = control_len(text, i);
        if len == 0 {
            i += 1;
            continue;
        }
        b.copy(run, text.get(run..i).unwrap_or_default());
        b.decoded(i, len, with);
        i += len;
        run = i;
    }
    b.copy(run, text.get(run..).unwrap_or_default());
    b.finish()
}

/// A byte that may start a control sequence: a C0 control but tab,
/// newline and carriage return, DEL, or the UTF-8 lead byte of a C1
/// control (U+0080 to U+009F).
fn starts_control(c: u8) -> bool {
    (c < 0x20 && !matches!(c, b'\t' | b'\n' | b'\r')) || c == 0x7f || c == 0xc2
}

/// The length of the control sequence at `at`; 0 when there is none (a
/// `0xC2` that leads an ordinary character).
fn control_len(text: &[u8], at: usize) -> usize {
    const ESC: u8 = 0x1b;
    let next = text.get(at + 1).copied();
    match (text.get(at).copied(), next) {
        (Some(ESC), Some(b'[')) => 2 + csi_body(text, at + 2),
        (Some(ESC), Some(b']' | b'P' | b'X' | b'^' | b'_')) => 2 + string_body(text, at + 2),
        (Some(ESC), Some(0x20..=0x2f)) => {
            let rest = text.get(at + 1..).unwrap_or_default();
            let inter = rest
                .iter()
                .take_while(|c| (0x20..=0x2f).contains(*c))
                .count();
            let fin = rest.get(inter).is_some_and(|c| (0x30..=0x7e).contains(c));
            1 + inter + usize::from(fin)
        }
        (Some(ESC), Some(0x30..=0x7e)) => 2,
        // C1 controls, UTF-8 encoded: CSI, the string openers, the rest.
        (Some(0xc2), Some(0x9b)) => 2 + csi_body(text, at + 2),
        (Some(0xc2), Some(0x90 | 0x98 | 0x9d | 0x9e | 0x9f)) => 2 + string_body(text, at + 2),
        (Some(0xc2), Some(0x80..=0x9f)) => 2,
        (Some(0xc2), _) => 0,
        (Some(_), _) => 1,
        (None, _) => 0,
    }
}

/// The length of a CSI's parameters, intermediates and final byte from
/// `from`.
fn csi_body(text: &[u8], from: usize) -> usize {
    let rest = text.get(from..).unwrap_or_default();
    let params = rest
        .iter()
        .take_while(|c| (0x30..=0x3f).contains(*c))
        .count();
    let inter = rest
        .get(params..)
        .unwrap_or_default()
        .iter()
        .take_while(|c| (0x20..=0x2f).contains(*c))
        .count();
    let fin = rest
        .get(params + inter)
        .is_some_and(|c| (0x40..=0x7e).contains(c));
    params + inter + usize::from(fin)
}

/// The length of a control string's body and terminator from `from`: it
/// ends at BEL or ST (`ESC\\`, C1 `0x9C`), both taken, or before any other
/// control byte, which then starts its own sequence.
fn string_body(text: &[u8], from: usize) -> usize {
    let mut i = from;
    while let Some(&c) = text.get(i) {
        let terminator = match (c, text.get(i + 1).copied()) {
            (0x07, _) => Some(1),
            (0x1b, Some(b'\\')) | (0xc2, Some(0x9c)) => Some(2),
            (0xc2, Some(0x80..=0x9f)) => Some(0),
            (0xc2, _) => None,
            _ if starts_control(c) => Some(0),
            _ => None,
        };
        if let Some(len) = terminator {
            return i + len - from;
        }
        i += 1;
    }
    i - from
}

/// One shell word with its quoting removed.
pub fn dequote(word: &[u8]) -> Vec<u8> {
    shell(word).map_or_else(|| word.to_vec(), |v| v.bytes)
}

fn hex(b: u8) -> Option<u8> {
    char::from(b)
        .to_digit(16)
        .and_then(|d| u8::try_from(d).ok())
}

/// The byte `%XY` at `at` encodes.
fn url_escape(text: &[u8], at: usize) -> Option<u8> {
    Some(hex(*text.get(at + 1)?)? * 16 + hex(*text.get(at + 2)?)?)
}

/// `%3D` → `=`.
fn url(text: &[u8]) -> Option<View> {
    let mut b = Builder::with_capacity(text.len());
    let mut i = 0;
    let mut run = 0;
    while let Some(at) = text.get(i..).and_then(|r| memchr::memchr(b'%', r)) {
        i += at;
        match url_escape(text, i) {
            Some(byte) => {
                b.copy(run, text.get(run..i).unwrap_or_default());
                b.decoded(i, 3, &[byte]);
                i += 3;
                run = i;
            }
            None => i += 1,
        }
    }
    b.copy(run, text.get(run..).unwrap_or_default());
    b.finish()
}

/// JSON string escapes: `\"`, `\\`, `\/`, `\n`, `\uXXXX`, …
fn json(text: &[u8]) -> Option<View> {
    let mut b = Builder::with_capacity(text.len());
    let mut i = 0;
    let mut run = 0;
    while let Some(at) = text.get(i..).and_then(|r| memchr::memchr(b'\\', r)) {
        i += at;
        let (out, used): (Vec<u8>, usize) = match text.get(i + 1) {
            Some(b'"') => (b"\"".to_vec(), 2),
            Some(b'\\') => (b"\\".to_vec(), 2),
            Some(b'/') => (b"/".to_vec(), 2),
            Some(b'n') => (b"\n".to_vec(), 2),
            Some(b'r') => (b"\r".to_vec(), 2),
            Some(b't') => (b"\t".to_vec(), 2),
            Some(b'b') => (vec![8], 2),
            Some(b'f') => (vec![12], 2),
            Some(b'u') => match unicode_escape(text, i) {
                Some(decoded) => decoded,
                None => {
                    i += 1;
                    continue;
                }
            },
            Some(_) | None => {
                i += 1;
                continue;
            }
        };
        b.copy(run, text.get(run..i).unwrap_or_default());
        b.decoded(i, used, &out);
        i += used;
        run = i;
    }
    b.copy(run, text.get(run..).unwrap_or_default());
    b.finish()
}

fn four_hex(text: &[u8], at: usize) -> Option<u32> {
    let digits = text.get(at..at + 4)?;
    let s = std::str::from_utf8(digits).ok()?;
    u32::from_str_radix(s, 16).ok()
}

/// `\uXXXX` (and a surrogate pair) at `at`, as UTF-8 and the bytes used.
fn unicode_escape(text: &[u8], at: usize) -> Option<(Vec<u8>, usize)> {
    let high = four_hex(text, at + 2)?;
    let (code, used) = if (0xD800..0xDC00).contains(&high)
        && text.get(at + 6..at + 8) == Some(b"\\u")
        && let Some(low) = four_hex(text, at + 8)
        && (0xDC00..0xE000).contains(&low)
    {
        (0x10000 + ((high - 0xD800) << 10) + (low - 0xDC00), 12)
    } else {
        (high, 6)
    };
    let c = char::from_u32(code).unwrap_or(char::REPLACEMENT_CHARACTER);
    Some((c.to_string().into_bytes(), used))
}

/// Shell quote removal: `'…'`, `"…"` (with its escapes), `$'…'` and
/// backslash escapes, as bash would read the words.
///
/// A quoted string standing alone (between separators, nothing escaped
/// inside: `{"name": "value"}`, `echo 'a b'`) is kept as written: taking
/// its quotes off joins nothing, and every rule already reads quoted
/// values in place, so decoding it would only make the view differ from
/// the text (and be scanned again) for nothing.
fn shell(text: &[u8]) -> Option<View> {
    let mut b = Builder::with_capacity(text.len());
    let mut i = 0;
    while i < text.len() {
        let Some(&c) = text.get(i) else { break };
        let standalone = match c {
            b'\'' | b'"' => standalone_quoted(text, i),
            _ => None,
        };
        if let Some(end) = standalone {
            b.copy(i, text.get(i..end).unwrap_or_default());
            i = end;
            continue;
        }
        match c {
            b'\'' => i = single_quoted(text, i, &mut b),
            b'"' => i = double_quoted(text, i, &mut b),
            b'$' if text.get(i + 1) == Some(&b'\'') => i = ansi_c(text, i, &mut b),
            b'\\' => {
                match text.get(i + 1) {
                    Some(b'\n') => b.decoded(i, 2, b""),
                    Some(&next) => b.decoded(i, 2, &[next]),
                    None => b.copy(i, b"\\"),
                }
                i += 2;
            }
            _ => {
                let end = text
                    .get(i..)
                    .and_then(|r| memchr::memchr3(b'\'', b'"', b'\\', r))
                    .map_or(text.len(), |j| i + j);
                // Stop before a `$` that opens `$'…'`.
                let end = match (end.checked_sub(1).and_then(|e| text.get(e)), text.get(end)) {
                    (Some(b'$'), Some(b'\'')) if end - 1 > i => end - 1,
                    _ => end,
                };
                b.copy(i, text.get(i..end).unwrap_or_default());
                i = end;
            }
        }
    }
    b.finish()
}

/// Bytes that end a shell word or separate JSON and assignment parts: a
/// quote next to one of them (or to the text's edge) glues nothing on.
fn is_separator(b: u8) -> bool {
    b.is_ascii_whitespace()
        || matches!(
            b,
            b';' | b'&'
                | b'|'
                | b'<'
                | b'>'
                | b'('
                | b')'
                | b'{'
                | b'}'
                | b'['
                | b']'
                | b','
                | b':'
                | b'='
        )
}

/// The end (past the closing quote) of the quoted string opening at `at`
/// when it stands alone: a separator (or the edge) on both sides, and for
/// double quotes nothing the shell would unescape or expand inside.
fn standalone_quoted(text: &[u8], at: usize) -> Option<usize> {
    let quote = *text.get(at)?;
    let before = at.checked_sub(1).and_then(|i| text.get(i)).copied();
    if before.is_some_and(|b| !is_separator(b)) {
        return None;
    }
    let body = text.get(at + 1..)?;
    let close = memchr::memchr(quote, body)?;
    let inner = body.get(..close)?;
    if quote == b'"' && memchr::memchr3(b'\\', b'$', b'`', inner).is_some() {
        return None;
    }
    let end = at + 1 + close + 1;
    let after = text.get(end).copied();
    after.is_none_or(is_separator).then_some(end)
}

fn single_quoted(text: &[u8], at: usize, b: &mut Builder) -> usize {
    b.skip();
    let body = at + 1;
    let close = text
        .get(body..)
        .and_then(|r| memchr::memchr(b'\'', r))
        .map(|j| body + j);
    let end = close.unwrap_or(text.len());
    b.copy(body, text.get(body..end).unwrap_or_default());
    close.map_or(text.len(), |c| c + 1)
}

fn double_quoted(text: &[u8], at: usize, b: &mut Builder) -> usize {
    b.skip();
    let mut i = at + 1;
    let mut run = i;
    while i < text.len() {
        match text.get(i) {
            Some(b'"') => {
                b.copy(run, text.get(run..i).unwrap_or_default());
                return i + 1;
            }
            Some(b'\\') if matches!(text.get(i + 1), Some(b'"' | b'\\' | b'$' | b'`' | b'\n')) => {
                b.copy(run, text.get(run..i).unwrap_or_default());
                let out = match text.get(i + 1) {
                    Some(b'\n') | None => Vec::new(),
                    Some(&c) => vec![c],
                };
                b.decoded(i, 2, &out);
                i += 2;
                run = i;
            }
            Some(_) | None => i += 1,
        }
    }
    b.copy(run, text.get(run..).unwrap_or_default());
    text.len()
}

fn ansi_c(text: &[u8], at: usize, b: &mut Builder) -> usize {
    let body = at + 2;
    let mut i = body;
    while i < text.len() && text.get(i) != Some(&b'\'') {
        i += if text.get(i) == Some(&b'\\') { 2 } else { 1 };
    }
    let end = i.min(text.len());
    let inner = String::from_utf8_lossy(text.get(body..end).unwrap_or_default());
    let decoded = decode_ansi_c(&inner);
    let used = (end + 1).min(text.len()) - at;
    b.decoded(at, used, decoded.as_bytes());
    at + used
}

#[cfg(test)]
mod tests {
    use super::*;

    fn decoded(text: &str) -> Vec<String> {
        Views::of(text.as_bytes())
            .views
            .iter()
            .map(|v| String::from_utf8_lossy(&v.bytes).into_owned())
            .collect()
    }

    #[test]
    fn views_decode_each_encoding() {
        let v = decoded("a%3Dsk-ant-x");
        assert!(v.contains(&"a=sk-ant-x".to_owned()), "{v:?}");
        let v = decoded(r#"echo "{\"password\":\"hunter2\"}""#);
        assert!(
            v.iter().any(|s| s.contains(r#"{"password":"hunter2"}"#)),
            "{v:?}"
        );
        let v = decoded(r"PW='ab'\''cd' x");
        assert!(v.contains(&"PW=ab'cd x".to_owned()), "{v:?}");
        let v = decoded(r"X=$'\x68i'");
        assert!(v.contains(&"X=hi".to_owned()), "{v:?}");
        assert_eq!(decoded("plain text").len(), 1);
    }

    #[test]
    fn terminal_views_make_boundaries_and_join_splits() {
        let v = decoded("\x1b[1;32mhf_x\x1b[0m ok");
        assert!(v.contains(&" hf_x  ok".to_owned()), "{v:?}");
        assert!(v.contains(&"hf_x ok".to_owned()), "{v:?}");
        // OSC hyperlinks end at ST or BEL; charset and single-byte escapes.
        let v = decoded("\x1b]8;;https://x\x1b\\npm_x\x1b]8;;\x07 \x1b(Bgsk_x\x1bMdapi1\x01SG.x");
        assert!(v.contains(&" npm_x   gsk_x dapi1 SG.x".to_owned()), "{v:?}");
        // 8-bit CSI (U+009B) and an ordinary two-byte character.
        let v = decoded("\u{9b}1mhvs.x é");
        assert!(v.contains(&" hvs.x é".to_owned()), "{v:?}");
        assert_eq!(decoded("tab\tand newline\n é").len(), 1);
        // An unterminated OSC stops at the next escape.
        let v = decoded("\x1b]0;title\x1b[1mhf_x");
        assert!(v.contains(&"  hf_x".to_owned()), "{v:?}");
    }

    #[test]
    fn terminal_view_spans_map_back() {
        let text = "\x1b[01;31m\x1b[Ksk_live\x1b[m\x1b[K_abc def";
        let views = Views::of(text.as_bytes());
        let index = views
            .views
            .iter()
            .position(|v| v.bytes == b"sk_live_abc def")
            .unwrap();
        let (s, e) = views.to_original(index, 0, 11);
        assert_eq!(&text[s..e], "sk_live\x1b[m\x1b[K_abc");
        let text = "x\x1b[1mhf_abc\x1b[0m";
        let views = Views::of(text.as_bytes());
        let (index, view) = views
            .views
            .iter()
            .enumerate()
            .find(|(_, v)| v.bytes == b"x hf_abc ")
            .unwrap();
        let at = view.bytes.iter().position(|b| *b == b'h').unwrap();
        let (s, e) = views.to_original(index, at, at + 6);
        assert_eq!(&text[s..e], "hf_abc");
    }

    #[test]
    fn view_spans_map_back_to_the_encoding() {
        let text = r"PW='ab'\''cd' x";
        let views = Views::of(text.as_bytes());
        let (index, view) = views
            .views
            .iter()
            .enumerate()
            .find(|(_, v)| v.bytes == b"PW=ab'cd x")
            .unwrap();
        let at = view.bytes.iter().position(|b| *b == b'a').unwrap();
        let (s, e) = views.to_original(index, at, at + 5);
        assert_eq!(&text[s..e], r"ab'\''cd");

        let text = "q=%3Dsk-ant-abc&x";
        let views = Views::of(text.as_bytes());
        let view = views.views.get(1).unwrap();
        let at = view.bytes.iter().position(|b| *b == b's').unwrap();
        let (s, e) = views.to_original(1, at, at + 10);
        assert_eq!(&text[s..e], "sk-ant-abc");
    }
}
