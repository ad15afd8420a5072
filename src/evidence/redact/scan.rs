//! The one scanner: a keyword prefilter, then only the rules it enables.
//!
//! One Aho-Corasick automaton holds every trigger: the provider rules'
//! keywords, the structural rules' words, the command names of the CLI
//! table and `--`. Its single pass over each view (the text and its decoded
//! forms, [`super::views`]) decides what runs: provider rules in merged
//! windows around their keyword hits, structural rules once over the view,
//! the CLI reader at each command name. Findings are mapped back to the
//! original text and returned; they are applied once, by the caller, and
//! nothing re-reads the output.

use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{LazyLock, OnceLock};

use aho_corasick::{AhoCorasick, AhoCorasickBuilder, AhoCorasickKind, MatchKind};

use super::cli;
use super::kind::SecretKind;
use super::provider::{self, Finding, PROVIDERS, Providers};
use super::structural::{self, Structural, Which};
use super::views::Views;

/// One finding: bytes `start..end` hold a secret of `kind`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Span {
    pub start: usize,
    pub end: usize,
    pub kind: SecretKind,
}

impl Span {
    pub fn new(start: usize, end: usize, kind: SecretKind) -> Span {
        Span { start, end, kind }
    }
}

/// A finding in the original text, with the bytes the rule saw (decoded,
/// when it was found in a view), so the same secret can be found again
/// elsewhere.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Found {
    pub span: Span,
    pub seen: Vec<u8>,
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

/// From this many bytes of text on, the trigger words are searched with a
/// DFA: it searches several times faster than the NFA but costs a few
/// milliseconds to build, which a short-lived process scanning a small
/// request should not pay. Both report the same matches.
pub const DFA_TEXT_BYTES: usize = 64 * 1024;

/// Once a process has scanned this much text in all, it switches to the DFA
/// for every text: a long-lived `vouch serve` pays for it once.
pub const DFA_AFTER_BYTES: usize = 256 * 1024;

pub(crate) struct Scanner {
    /// The trigger words as a contiguous NFA: cheap to build.
    triggers: AhoCorasick,
    /// The same words as a DFA, built the first time a large text is seen.
    fast: OnceLock<Option<AhoCorasick>>,
    /// Bytes this process has searched for triggers.
    scanned: AtomicUsize,
    words: Vec<String>,
    /// Trigger pattern index → what it enables.
    targets: Vec<Vec<Target>>,
    providers: &'static Providers,
    structural: Structural,
}

pub(crate) static SCANNER: LazyLock<Result<Scanner, ScanError>> = LazyLock::new(Scanner::build);

pub(crate) const WHICH: [Which; 6] = [
    Which::Assignment,
    Which::Pem,
    Which::Jwt,
    Which::Url,
    Which::Netrc,
    Which::Pair,
];

impl Scanner {
    fn build() -> Result<Scanner, ScanError> {
        let providers: &'static Providers = &PROVIDERS;
        let mut words: Vec<String> = Vec::new();
        let mut targets: Vec<Vec<Target>> = Vec::new();
        let mut index: HashMap<String, usize> = HashMap::new();
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
        let triggers = trigger_automaton(&words, AhoCorasickKind::ContiguousNFA)
            .map_err(|e| ScanError::Triggers(e.to_string()))?;
        Ok(Scanner {
            triggers,
            fast: OnceLock::new(),
            scanned: AtomicUsize::new(0),
            words,
            targets,
            providers,
            structural: Structural::new(),
        })
    }

    /// The trigger automaton for a text of `len` bytes (see
    /// [`DFA_TEXT_BYTES`] and [`DFA_AFTER_BYTES`]).
    fn triggers_for(&self, len: usize) -> &AhoCorasick {
        let before = self.scanned.fetch_add(len, Ordering::Relaxed);
        if len < DFA_TEXT_BYTES && before.saturating_add(len) < DFA_AFTER_BYTES {
            return &self.triggers;
        }
        self.fast
            .get_or_init(|| trigger_automaton(&self.words, AhoCorasickKind::DFA).ok())
            .as_ref()
            .unwrap_or(&self.triggers)
    }

    /// Every finding in `text` and its decoded views, in original
    /// coordinates (not yet merged).
    #[cfg(test)]
    pub fn scan(&self, text: &[u8]) -> Vec<Found> {
        self.scan_views(&Views::of(text))
    }

    /// Every finding in a text's `views`, in original coordinates (not yet
    /// merged).
    pub fn scan_views(&self, views: &Views) -> Vec<Found> {
        let mut out = Vec::new();
        let mut local = Vec::new();
        for (index, view) in views.views.iter().enumerate() {
            local.clear();
            let whole = [(0, view.bytes.len())];
            let regions = views.regions(index).unwrap_or(&whole);
            if regions.is_empty() {
                continue;
            }
            self.scan_view(&view.bytes, regions, view.dequoted, &mut local);
            for span in &local {
                let (start, end) = views.to_original(index, span.start, span.end);
                if start >= end {
                    continue;
                }
                out.push(Found {
                    span: Span::new(start, end, span.kind),
                    seen: view
                        .bytes
                        .get(span.start..span.end)
                        .unwrap_or_default()
                        .to_vec(),
                });
            }
        }
        out
    }

    #[cfg(test)]
    pub fn triggers_count(&self, hay: &[u8]) -> usize {
        self.triggers.find_overlapping_iter(hay).count()
    }

    #[cfg(test)]
    pub fn rule_times(&self, hay: &[u8]) -> Vec<(std::time::Duration, String, usize)> {
        let mut windows: Vec<Vec<(usize, usize)>> = vec![Vec::new(); self.providers.rules.len()];
        for m in self.triggers.find_overlapping_iter(hay) {
            for target in self
                .targets
                .get(m.pattern().as_usize())
                .map(Vec::as_slice)
                .unwrap_or_default()
            {
                if let Target::Provider(rule) = *target
                    && let (Some(list), Some(w)) = (
                        windows.get_mut(rule),
                        self.providers.window(rule, m.start(), m.end(), hay.len()),
                    )
                {
                    push_window(list, w);
                }
            }
        }
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
        self.scan_view(hay, &[(0, hay.len())], false, out);
    }

    /// Scans `hay`, looking for triggers and heads that start in one of
    /// `regions` (sorted, disjoint; values may run past them).
    fn scan_view(
        &self,
        hay: &[u8],
        regions: &[(usize, usize)],
        dequoted: bool,
        out: &mut Vec<Span>,
    ) {
        let mut windows: Vec<Vec<(usize, usize)>> = vec![Vec::new(); self.providers.rules.len()];
        let mut enabled = [false; WHICH.len()];
        let mut commands: Vec<(usize, usize, usize)> = Vec::new();
        let mut long_options = false;
        let mut names: Vec<(usize, usize)> = Vec::new();
        let triggers = self.triggers_for(hay.len());
        let hits = regions.iter().flat_map(|&(from, to)| {
            triggers.find_overlapping_iter(aho_corasick::Input::new(hay).range(from..to))
        });
        for m in hits {
            let pattern = m.pattern().as_usize();
            for target in self
                .targets
                .get(pattern)
                .map(Vec::as_slice)
                .unwrap_or_default()
            {
                match *target {
                    Target::Provider(rule) => {
                        if let (Some(list), Some(w)) = (
                            windows.get_mut(rule),
                            self.providers.window(rule, m.start(), m.end(), hay.len()),
                        ) {
                            push_window(list, w);
                        }
                    }
                    Target::Structural(Which::Assignment) => names.push((m.start(), m.end())),
                    Target::Structural(which) => {
                        if let Some(flag) = WHICH
                            .iter()
                            .position(|w| *w == which)
                            .and_then(|i| enabled.get_mut(i))
                        {
                            *flag = true;
                        }
                    }
                    Target::Command => {
                        if is_command_word(hay, m.start(), m.end()) {
                            commands.push((pattern, m.start(), m.end()));
                        }
                    }
                    Target::LongOption => long_options = true,
                }
            }
        }
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

fn trigger_automaton(
    words: &[String],
    kind: AhoCorasickKind,
) -> Result<AhoCorasick, aho_corasick::BuildError> {
    AhoCorasickBuilder::new()
        .ascii_case_insensitive(true)
        .match_kind(MatchKind::Standard)
        .kind(Some(kind))
        .build(words)
}

/// Adds a window, merged with the last one when they overlap.
fn push_window(list: &mut Vec<(usize, usize)>, w: (usize, usize)) {
    if let Some(last) = list.last_mut()
        && w.0 <= last.1
        && w.1 >= last.0
    {
        last.0 = last.0.min(w.0);
        last.1 = last.1.max(w.1);
        return;
    }
    list.push(w);
}

/// Whether `start..end` is a whole command word: at a word start (or after
/// a path), followed by whitespace.
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
    starts && after.is_some_and(|b| b == b' ' || b == b'\t')
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
