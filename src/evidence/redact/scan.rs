//! The one scanner: a keyword prefilter, then only the rules it enables.
//!
//! One list holds every trigger: the provider rules' keywords, the
//! structural rules' words, the command names of the CLI table and `--`. A
//! single pass over each view (the text and its decoded forms,
//! [`super::views`]) finds them all — with a two-byte word index, which
//! costs nothing to build, for small texts, and with an Aho-Corasick DFA,
//! built once per process, for large ones — and decides what runs: provider
//! rules in merged windows around their keyword hits, structural rules once
//! over the view, the CLI reader at each command name. Findings are mapped
//! back to the original text and returned; they are applied once, by the
//! caller, and nothing re-reads the output.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{LazyLock, OnceLock};

use aho_corasick::automaton::Automaton;
use aho_corasick::dfa::DFA;
use aho_corasick::{Anchored, MatchKind};

use super::cli;
use super::kind::{SecretKind, Span};
use super::provider::{self, Finding, PROVIDERS, Providers};
use super::structural::{self, Structural, Which};
use super::views::Views;

/// A finding in the original text, with the bytes the rule saw when it was
/// found in a decoded view (`None`: in the text itself, whose span holds
/// them), so the same secret can be found again elsewhere.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Found {
    pub span: Span,
    pub seen: Option<Vec<u8>>,
}

/// What a trigger word enables.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Target {
    Provider(usize),
    Structural(Which),
    Command,
    LongOption,
}

/// Why the scanner could not be built.
#[derive(Debug, Clone, thiserror::Error)]
pub enum ScanError {
    #[error("redaction triggers do not compile: {0}")]
    Triggers(String),
}

/// From this many bytes of text on, the trigger words are searched with an
/// Aho-Corasick DFA: it searches several times faster than the word index
/// but costs milliseconds to build, which a short-lived process scanning a
/// small request should not pay. Both report the same hits.
pub const DFA_TEXT_BYTES: usize = 64 * 1024;

/// Once a process has scanned this much text in all, it switches to the DFA
/// for every text: a long-lived `vouch serve` pays for it once.
pub const DFA_AFTER_BYTES: usize = 256 * 1024;

/// What the trigger hits of one view enable.
struct Gate {
    /// Per provider rule, the merged windows its keyword hits open.
    windows: Vec<Vec<(usize, usize)>>,
    /// Per [`WHICH`] rule (but assignments), whether a word of it was seen.
    enabled: [bool; WHICH.len()],
    /// Command-name hits: (pattern, start, end).
    commands: Vec<(usize, usize, usize)>,
    long_options: bool,
    /// Assignment word hits.
    names: Vec<(usize, usize)>,
}

pub(crate) struct Scanner {
    /// The trigger words (lowercased), pattern id = index.
    words: Vec<String>,
    /// The words by their first two bytes: nothing to build but a sort.
    index: WordIndex,
    /// The same words as an Aho-Corasick DFA, built the first time a large
    /// text is seen. Walked byte by byte here ([`Scanner::each_hit`]): the
    /// adversarial text holds a trigger every few bytes, and the library's
    /// overlapping iterator costs ~200 instructions a hit to resume.
    fast: OnceLock<Option<DFA>>,
    /// Bytes this process has searched for triggers.
    scanned: AtomicUsize,
    /// Trigger pattern index → what it enables.
    targets: Vec<Vec<Target>>,
    providers: &'static Providers,
    structural: Structural,
}

pub(crate) static SCANNER: LazyLock<Result<Scanner, ScanError>> = LazyLock::new(Scanner::build);

pub(crate) const WHICH: [Which; 7] = [
    Which::Assignment,
    Which::Pem,
    Which::Jwt,
    Which::Url,
    Which::Netrc,
    Which::Pair,
    Which::Pgpass,
];

impl Scanner {
    fn build() -> Result<Scanner, ScanError> {
        let providers: &'static Providers = &PROVIDERS;
        let mut words: Vec<String> = Vec::new();
        let mut targets: Vec<Vec<Target>> = Vec::new();
        // foldhash: SipHash's per-key cost was most of a one-shot build.
        let mut index: foldhash::HashMap<String, usize> = foldhash::HashMap::default();
        let mut add = |word: &str, target: Target| {
            let word = word.to_ascii_lowercase();
            match index.get(&word) {
                Some(&at) => {
                    if let Some(list) = targets.get_mut(at) {
                        list.push(target);
                    }
                }
                None => {
                    index.insert(word.clone(), words.len());
                    words.push(word);
                    targets.push(vec![target]);
                }
            }
        };
        for (index, rule) in providers.rules.iter().enumerate() {
            for keyword in rule.keywords {
                add(keyword, Target::Provider(index));
            }
        }
        for (word, which) in structural::TRIGGERS {
            add(word, Target::Structural(*which));
        }
        for name in cli::command_names() {
            add(name, Target::Command);
        }
        add("--", Target::LongOption);
        if u16::try_from(words.len()).is_err() {
            return Err(ScanError::Triggers(format!(
                "{} trigger words are more than the word index holds",
                words.len()
            )));
        }
        Ok(Scanner {
            index: WordIndex::new(&words),
            words,
            fast: OnceLock::new(),
            scanned: AtomicUsize::new(0),
            targets,
            providers,
            structural: Structural::new(),
        })
    }

    /// Calls `f(pattern, start, end)` for every trigger word occurrence
    /// inside `from..to` (overlapping ones included), searching with `dfa`
    /// or, without one, the word index.
    fn each_hit(
        &self,
        dfa: Option<&DFA>,
        hay: &[u8],
        (from, to): (usize, usize),
        f: impl FnMut(usize, usize, usize),
    ) {
        match dfa {
            Some(dfa) => dfa_hits(dfa, hay, from, to, f),
            None => self.index.each_hit(&self.words, hay, from, to, f),
        }
    }

    /// The DFA when a text of `len` bytes should use it, built on first use;
    /// `None` for the word index (also when the DFA failed to build: the
    /// index finds the same hits).
    fn fast_for(&self, len: usize) -> Option<&DFA> {
        let before = self.scanned.fetch_add(len, Ordering::Relaxed);
        if len < DFA_TEXT_BYTES && before.saturating_add(len) < DFA_AFTER_BYTES {
            return None;
        }
        self.fast
            .get_or_init(|| {
                // No prefilter: ~600 words start with nearly every byte.
                DFA::builder()
                    .ascii_case_insensitive(true)
                    .match_kind(MatchKind::Standard)
                    .prefilter(false)
                    .build(&self.words)
                    .ok()
            })
            .as_ref()
    }

    /// Every finding in `text` and its decoded views, in original
    /// coordinates (not yet merged).
    #[cfg(test)]
    pub fn scan(&self, text: &[u8]) -> Vec<Found> {
        self.scan_views(&Views::of(text))
    }

    /// Every finding in a text's `views`, in original coordinates (not yet
    /// merged).
    #[cfg(test)]
    pub fn scan_views(&self, views: &Views) -> Vec<Found> {
        self.scan_views_forced(views, &[])
    }

    /// [`Scanner::scan_views`], with the structural rules `forced` run
    /// whether or not their trigger words occur: a text known by where it
    /// goes (a Write tool's `content` for `~/.pgpass`) is read in that
    /// file's format.
    pub fn scan_views_forced(&self, views: &Views, forced: &[Which]) -> Vec<Found> {
        let mut out = Vec::new();
        let mut local = Vec::new();
        // The spans found in the text as written, sorted: where a decoded
        // view's finding starts inside one, the text as written says where
        // the value ends ([`clip_to_as_written`]).
        let mut as_written: Vec<(usize, usize)> = Vec::new();
        for (index, view) in views.views.iter().enumerate() {
            local.clear();
            let whole = [(0, view.bytes.len())];
            let regions = views.regions(index).unwrap_or(&whole);
            if regions.is_empty() {
                continue;
            }
            self.scan_view(&view.bytes, regions, view.dequoted, forced, &mut local);
            for span in &local {
                let (start, end) = views.to_original(index, span.start, span.end);
                if start >= end {
                    continue;
                }
                let seen = (index > 0).then(|| {
                    view.bytes
                        .get(span.start..span.end)
                        .unwrap_or_default()
                        .to_vec()
                });
                out.push(Found {
                    span: Span::new(start, end, span.kind),
                    seen,
                });
            }
            if index == 0 {
                as_written = out.iter().map(|f| (f.span.start, f.span.end)).collect();
                as_written.sort_unstable();
            }
        }
        let text = views.views.first().map_or(&[][..], |v| v.bytes.as_slice());
        clip_to_as_written(&mut out, &as_written, text);
        out
    }

    /// The hits of the word index and of the DFA in `hay`, each sorted.
    #[cfg(test)]
    pub fn hits_both(&self, hay: &[u8], from: usize, to: usize) -> [Vec<(usize, usize, usize)>; 2] {
        let mut index = Vec::new();
        self.index
            .each_hit(&self.words, hay, from, to, |p, s, e| index.push((s, e, p)));
        let dfa = self.fast_for(usize::MAX).unwrap();
        let mut fast = Vec::new();
        dfa_hits(dfa, hay, from, to, |p, s, e| fast.push((s, e, p)));
        index.sort_unstable();
        fast.sort_unstable();
        [index, fast]
    }

    #[cfg(test)]
    pub fn triggers_count(&self, hay: &[u8]) -> usize {
        let mut n = 0;
        let dfa = self.fast_for(hay.len());
        self.each_hit(dfa, hay, (0, hay.len()), |_, _, _| n += 1);
        n
    }

    #[cfg(test)]
    pub fn rule_times(&self, hay: &[u8]) -> Vec<(std::time::Duration, String, usize)> {
        let mut windows: Vec<Vec<(usize, usize)>> = vec![Vec::new(); self.providers.rules.len()];
        let dfa = self.fast_for(hay.len());
        self.each_hit(dfa, hay, (0, hay.len()), |pattern, start, end| {
            for target in &self.targets[pattern] {
                if let Target::Provider(rule) = *target
                    && let (Some(list), Some(w)) = (
                        windows.get_mut(rule),
                        self.providers.window(rule, start, end, hay.len()),
                    )
                {
                    push_window(list, w);
                }
            }
        });
        let mut times = Vec::new();
        for (i, w) in windows.iter().enumerate() {
            let mut only = vec![Vec::new(); windows.len()];
            only[i] = w.clone();
            let covered: usize = w.iter().map(|(a, b)| b - a).sum();
            let t = std::time::Instant::now();
            let mut f = Vec::new();
            self.providers.find(hay, &only, &mut f);
            times.push((t.elapsed(), self.providers.rules[i].id.to_owned(), covered));
        }
        times.sort();
        times.reverse();
        times.truncate(15);
        times
    }

    #[cfg(test)]
    pub fn structural_only(&self, which: Which, hay: &[u8], out: &mut Vec<Span>) {
        self.structural.run(which, hay, 0, hay.len(), out);
    }

    #[cfg(test)]
    pub fn scan_view_pub(&self, hay: &[u8], out: &mut Vec<Span>) {
        self.scan_view(hay, &[(0, hay.len())], false, &[], out);
    }

    /// Scans `hay`, looking for triggers and heads that start in one of
    /// `regions` (sorted, disjoint; values may run past them).
    fn scan_view(
        &self,
        hay: &[u8],
        regions: &[(usize, usize)],
        dequoted: bool,
        forced: &[Which],
        out: &mut Vec<Span>,
    ) {
        let mut gate = Gate {
            windows: vec![Vec::new(); self.providers.rules.len()],
            enabled: WHICH.map(|w| forced.contains(&w)),
            commands: Vec::new(),
            long_options: false,
            names: Vec::new(),
        };
        // Chosen once per view: see [`DFA_TEXT_BYTES`], [`DFA_AFTER_BYTES`].
        let dfa = self.fast_for(hay.len());
        for &region in regions {
            self.each_hit(dfa, hay, region, |pattern, start, end| {
                self.gate(hay, pattern, start, end, &mut gate);
            });
        }
        let Gate {
            windows,
            enabled,
            commands,
            long_options,
            names,
        } = gate;
        let mut findings: Vec<Finding> = Vec::new();
        self.providers.find(hay, &windows, &mut findings);
        out.extend(
            findings
                .iter()
                .map(|f| Span::new(f.start, f.end, SecretKind::Provider(f.rule))),
        );
        Structural::assignments(hay, &names, dequoted, out);
        for (which, on) in WHICH.iter().zip(enabled) {
            if on {
                for &(from, to) in regions {
                    self.structural.run(*which, hay, from, to, out);
                }
            }
        }
        self.commands(hay, &commands, out);
        if long_options {
            for &(from, to) in regions {
                cli::scan_long_options(hay, from, to, out);
            }
        }
    }

    /// Records what one trigger hit at `start..end` enables.
    fn gate(&self, hay: &[u8], pattern: usize, start: usize, end: usize, gate: &mut Gate) {
        for target in self
            .targets
            .get(pattern)
            .map(Vec::as_slice)
            .unwrap_or_default()
        {
            match *target {
                Target::Provider(rule) => {
                    if let (Some(list), Some(w)) = (
                        gate.windows.get_mut(rule),
                        self.providers.window(rule, start, end, hay.len()),
                    ) {
                        push_window(list, w);
                    }
                }
                Target::Structural(Which::Assignment) => gate.names.push((start, end)),
                Target::Structural(which) => {
                    if let Some(flag) = WHICH
                        .iter()
                        .position(|w| *w == which)
                        .and_then(|i| gate.enabled.get_mut(i))
                    {
                        *flag = true;
                    }
                }
                Target::Command => {
                    if is_command_word(hay, start, end) {
                        gate.commands.push((pattern, start, end));
                    }
                }
                Target::LongOption => gate.long_options = true,
            }
        }
    }

    /// Reads each command found in the text once: a command name inside the
    /// words already read starts nothing new, so no word is read twice.
    fn commands(&self, hay: &[u8], hits: &[(usize, usize, usize)], out: &mut Vec<Span>) {
        let mut covered = 0;
        for &(_, start, end) in hits {
            if start < covered {
                continue;
            }
            covered = cli::scan_command(hay, start, end, out);
        }
    }
}

/// The trigger words indexed by their first two bytes, lowercased and
/// hashed into [`KEYS`] buckets: a search at each position looks only at
/// the words of the bucket of the two bytes there, each compared whole.
/// Building it is one counting sort over the buckets, so a process that
/// scans one small request (a hook, `vouch confine`'s environment) pays
/// next to nothing for the scanner (an automaton over the ~600 words cost
/// ~4.3 M instructions to build; a table of all 65,536 byte pairs, half a
/// megabyte of fresh pages); per byte it is slower than a DFA, which large
/// texts get instead.
struct WordIndex {
    /// Per bucket, where its words start in `ids` (`KEYS + 1` offsets).
    starts: Vec<u32>,
    /// Word ids grouped by key.
    ids: Vec<u16>,
    /// Per lowercased byte, the one-byte word it is (id + 1), or 0.
    singles: Vec<u16>,
}

/// Buckets of the two-byte keys: ~600 words over 4,096 buckets share one
/// rarely, and a shared bucket costs one more comparison.
const KEYS: usize = 1 << 12;

impl WordIndex {
    fn new(words: &[String]) -> WordIndex {
        let mut singles = vec![0u16; 256];
        let mut counts = vec![0u32; KEYS + 1];
        let keyed = || {
            words
                .iter()
                .enumerate()
                .filter_map(|(id, w)| match *w.as_bytes() {
                    [a, b, ..] => Some((pair(a, b), u16::try_from(id).ok()?)),
                    _ => None,
                })
        };
        for (key, _) in keyed() {
            if let Some(c) = counts.get_mut(key + 1) {
                *c += 1;
            }
        }
        for i in 1..counts.len() {
            let before = counts.get(i - 1).copied().unwrap_or(0);
            if let Some(c) = counts.get_mut(i) {
                *c += before;
            }
        }
        let starts = counts.clone();
        let mut ids = vec![0u16; starts.last().map_or(0, |&n| n as usize)];
        for (key, id) in keyed() {
            if let Some(next) = counts.get_mut(key)
                && let Some(slot) = ids.get_mut(*next as usize)
            {
                *slot = id;
                *next += 1;
            }
        }
        for (id, w) in words.iter().enumerate() {
            if let ([b], Ok(id)) = (w.as_bytes(), u16::try_from(id + 1))
                && let Some(slot) = singles.get_mut(usize::from(b.to_ascii_lowercase()))
            {
                *slot = id;
            }
        }
        WordIndex {
            starts,
            ids,
            singles,
        }
    }

    /// Every occurrence of a word inside `from..to`, by start position.
    fn each_hit(
        &self,
        words: &[String],
        hay: &[u8],
        from: usize,
        to: usize,
        mut f: impl FnMut(usize, usize, usize),
    ) {
        let region = hay.get(..to.min(hay.len())).unwrap_or_default();
        let mut rest = region.get(from..).unwrap_or_default();
        let mut i = from;
        while let [a, tail @ ..] = rest {
            let single = self
                .singles
                .get(usize::from(a.to_ascii_lowercase()))
                .copied()
                .unwrap_or(0);
            if single > 0 {
                f(usize::from(single - 1), i, i + 1);
            }
            if let Some(&b) = tail.first() {
                let key = pair(*a, b);
                let lo = self.starts.get(key).map_or(0, |&s| s as usize);
                let hi = self.starts.get(key + 1).map_or(0, |&s| s as usize);
                for &id in self.ids.get(lo..hi).unwrap_or_default() {
                    let word = words
                        .get(usize::from(id))
                        .map_or(&b""[..], |w| w.as_bytes());
                    if rest
                        .get(..word.len())
                        .is_some_and(|at| at.eq_ignore_ascii_case(word))
                    {
                        f(usize::from(id), i, i + word.len());
                    }
                }
            }
            rest = tail;
            i += 1;
        }
    }
}

/// Every occurrence of a trigger word ending inside `from..to` and
/// starting at or after `from` (overlapping ones included): the DFA's match
/// states list every word that ends at a byte, as the overlapping search
/// reports them.
fn dfa_hits(dfa: &DFA, hay: &[u8], from: usize, to: usize, mut f: impl FnMut(usize, usize, usize)) {
    let Ok(mut sid) = dfa.start_state(Anchored::No) else {
        return;
    };
    let region = hay.get(from..to.min(hay.len())).unwrap_or_default();
    for (i, &b) in region.iter().enumerate() {
        sid = dfa.next_state(Anchored::No, sid, b);
        if dfa.is_special(sid) && dfa.is_match(sid) {
            let end = from + i + 1;
            for k in 0..dfa.match_len(sid) {
                let pattern = dfa.match_pattern(sid, k);
                let start = end.saturating_sub(dfa.pattern_len(pattern));
                f(pattern.as_usize(), start, end);
            }
        }
    }
}

/// Two bytes, lowercased, as one key.
/// The bucket of two bytes, case-insensitively.
fn pair(a: u8, b: u8) -> usize {
    let key = (usize::from(a.to_ascii_lowercase()) << 8) | usize::from(b.to_ascii_lowercase());
    (key ^ (key >> 5)) & (KEYS - 1)
}

/// Adds a window, merged with the last one when they overlap or lie less
/// than [`provider::WINDOW_GAP`] bytes apart.
fn push_window(list: &mut Vec<(usize, usize)>, w: (usize, usize)) {
    if let Some(last) = list.last_mut()
        && w.0 <= last.1.saturating_add(provider::WINDOW_GAP)
        && w.1.saturating_add(provider::WINDOW_GAP) >= last.0
    {
        last.0 = last.0.min(w.0);
        last.1 = last.1.max(w.1);
        return;
    }
    list.push(w);
}

/// Whether `start..end` is a whole command word: at a word start (or after
/// a path), followed by a blank or the end of its clause.
fn is_command_word(hay: &[u8], start: usize, end: usize) -> bool {
    let before = start.checked_sub(1).and_then(|i| hay.get(i)).copied();
    let after = hay.get(end).copied();
    // Non-ASCII before: the end of a file viewer's `12→` prefix.
    let starts = before.is_none_or(|b| {
        b.is_ascii_whitespace()
            || !b.is_ascii()
            || matches!(
                b,
                b';' | b'|' | b'&' | b'(' | b'\'' | b'"' | b'/' | b'`' | b'{' | b'='
            )
    });
    // A command may also end its clause (`… | chpasswd`, `chpasswd;`):
    // what a program reads on standard input can be its secret.
    starts
        && after.is_none_or(|b| {
            matches!(
                b,
                b' ' | b'\t' | b'\n' | b';' | b'|' | b'&' | b')' | b'\'' | b'"'
            )
        })
}

/// Provider rule data the tests check.
pub fn provider_rules() -> Vec<(&'static str, &'static str, bool, Option<usize>)> {
    PROVIDERS
        .rules
        .iter()
        .map(|r| {
            (
                r.id,
                r.label.as_str(),
                r.is_unbounded(),
                r.first_keyword_offset(),
            )
        })
        .collect()
}

/// The provider rules whose automata fail to build (each is built on first
/// use; this builds them all).
#[cfg(test)]
pub fn unbuildable_rules() -> Vec<&'static str> {
    PROVIDERS
        .rules
        .iter()
        .filter(|r| !r.builds())
        .map(|r| r.id)
        .collect()
}

/// Whether the rules compiled.
pub fn ready() -> Result<(), ScanError> {
    SCANNER.as_ref().map(|_| ()).map_err(Clone::clone)
}

pub use provider::REPLACED;

/// Ends a finding of a decoded view that starts inside a finding of the
/// text as written, where that one ends, when what it adds holds shell
/// syntax.
///
/// A decoding changes quoting: JSON's `\"` becomes a quote that pairs with
/// the string's own closing quote, a shell view drops the quotes that close
/// a value, so a value read in a view can run on over the text after it —
/// `echo "a\npassword=X" > f; rm -rf ~/app` read with its escapes decoded
/// has `password=X" > f; rm -rf ~/app"`. Hiding that would hide the action
/// from the reviewer. A view may still see more of a value than the text
/// as written (a JSON-escaped YAML line `password: a b c` is one word
/// before decoding, a line after), so the view's end stands unless the
/// bytes it adds hold a shell operator or redirection (`;`, `|`, `&`,
/// `<`, `>`, a backquote) or a line break (or one escaped, `\n`): no
/// secret runs on over those, an action does.
fn clip_to_as_written(found: &mut [Found], as_written: &[(usize, usize)], text: &[u8]) {
    if as_written.is_empty() {
        return;
    }
    for f in found.iter_mut().filter(|f| f.seen.is_some()) {
        let at = as_written.partition_point(|(s, _)| *s <= f.span.start);
        let container = at
            .checked_sub(1)
            .and_then(|i| as_written.get(..=i))
            .into_iter()
            .flatten()
            .rev()
            .take(8)
            .filter(|(s, e)| *s <= f.span.start && f.span.start < *e)
            .map(|(_, e)| *e)
            .max();
        if let Some(end) = container
            && f.span.end > end
            && adds_shell_syntax(text.get(end..f.span.end).unwrap_or_default())
        {
            f.span.end = end;
            // The view's bytes no longer match the span: the bytes as
            // written are remembered for the repeat search instead.
            f.seen = None;
        }
    }
}

/// Whether `added` holds a shell operator, a redirection, a backquote or a
/// line break (written or escaped).
fn adds_shell_syntax(added: &[u8]) -> bool {
    added
        .iter()
        .any(|b| matches!(b, b';' | b'|' | b'&' | b'<' | b'>' | b'`' | b'\n'))
        || added.windows(2).any(|w| matches!(w, [b'\\', b'n' | b'r']))
}
