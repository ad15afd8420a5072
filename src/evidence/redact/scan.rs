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

use std::sync::LazyLock;

use aho_corasick::{AhoCorasick, AhoCorasickBuilder, MatchKind};

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
    #[error("redaction rules: {0}")]
    Rules(String),
    #[error("redaction triggers do not compile: {0}")]
    Triggers(String),
}

pub(crate) struct Scanner {
    triggers: AhoCorasick,
    /// Trigger pattern index → what it enables.
    targets: Vec<Vec<Target>>,
    providers: &'static Providers,
    structural: Structural,
}

pub(crate) static SCANNER: LazyLock<Result<Scanner, ScanError>> = LazyLock::new(Scanner::build);

const WHICH: [Which; 6] = [
    Which::Assignment,
    Which::Pem,
    Which::Jwt,
    Which::Url,
    Which::Netrc,
    Which::Pair,
];

impl Scanner {
    fn build() -> Result<Scanner, ScanError> {
        let providers = PROVIDERS
            .as_ref()
            .map_err(|e| ScanError::Rules(e.to_string()))?;
        let structural = Structural::compile().map_err(ScanError::Rules)?;
        let mut words: Vec<String> = Vec::new();
        let mut targets: Vec<Vec<Target>> = Vec::new();
        let mut add = |word: &str, target: Target| {
            let word = word.to_ascii_lowercase();
            match words.iter().position(|w| *w == word) {
                Some(at) => {
                    if let Some(list) = targets.get_mut(at) {
                        list.push(target);
                    }
                }
                None => {
                    words.push(word);
                    targets.push(vec![target]);
                }
            }
        };
        for (index, rule) in providers.rules.iter().enumerate() {
            for keyword in &rule.keywords {
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
        let triggers = AhoCorasickBuilder::new()
            .ascii_case_insensitive(true)
            .match_kind(MatchKind::Standard)
            .build(&words)
            .map_err(|e| ScanError::Triggers(e.to_string()))?;
        Ok(Scanner {
            triggers,
            targets,
            providers,
            structural,
        })
    }

    /// Every finding in `text` and its decoded views, in original
    /// coordinates (not yet merged).
    pub fn scan(&self, text: &[u8]) -> Vec<Found> {
        let views = Views::of(text);
        let mut out = Vec::new();
        let mut local = Vec::new();
        for (index, view) in views.views.iter().enumerate() {
            local.clear();
            self.scan_view(&view.bytes, &mut local);
            for span in &local {
                let (start, end) = views.to_original(index, span.start, span.end);
                if start >= end {
                    continue;
                }
                out.push(Found {
                    span: Span::new(start, end, span.kind),
                    seen: view.bytes.get(span.start..span.end).unwrap_or_default().to_vec(),
                });
            }
        }
        out
    }

    fn scan_view(&self, hay: &[u8], out: &mut Vec<Span>) {
        let mut windows: Vec<Vec<(usize, usize)>> = vec![Vec::new(); self.providers.rules.len()];
        let mut enabled = [false; WHICH.len()];
        let mut commands: Vec<(usize, usize, usize)> = Vec::new();
        let mut long_options = false;
        for m in self.triggers.find_overlapping_iter(hay) {
            let pattern = m.pattern().as_usize();
            for target in self.targets.get(pattern).map(Vec::as_slice).unwrap_or_default() {
                match *target {
                    Target::Provider(rule) => {
                        if let (Some(list), Some(w)) = (
                            windows.get_mut(rule),
                            self.providers.window(rule, m.start(), m.end(), hay.len()),
                        ) {
                            push_window(list, w);
                        }
                    }
                    Target::Structural(which) => {
                        if let Some(flag) = WHICH.iter().position(|w| *w == which).and_then(|i| enabled.get_mut(i)) {
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
        for (which, on) in WHICH.iter().zip(enabled) {
            if on {
                self.structural.run(*which, hay, out);
            }
        }
        self.commands(hay, &commands, out);
        if long_options {
            cli::scan_long_options(hay, out);
        }
    }

    /// Reads each command found in the text once: a name inside the words
    /// already read for the same name starts nothing new.
    fn commands(&self, hay: &[u8], hits: &[(usize, usize, usize)], out: &mut Vec<Span>) {
        let mut covered: Vec<(usize, usize)> = Vec::new();
        for &(pattern, start, end) in hits {
            let until = covered
                .iter()
                .find(|(p, _)| *p == pattern)
                .map_or(0, |(_, u)| *u);
            if start < until {
                continue;
            }
            let read_to = cli::scan_command(hay, start, end, out);
            match covered.iter_mut().find(|(p, _)| *p == pattern) {
                Some(slot) => slot.1 = read_to,
                None => covered.push((pattern, read_to)),
            }
        }
    }
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
    let starts = before.is_none_or(|b| {
        b.is_ascii_whitespace() || matches!(b, b';' | b'|' | b'&' | b'(' | b'\'' | b'"' | b'/' | b'`' | b'{')
    });
    starts && after.is_some_and(|b| b == b' ' || b == b'\t')
}

/// Provider rule data the tests check.
pub fn provider_rules() -> Vec<(&'static str, &'static str, bool, Option<usize>)> {
    PROVIDERS.as_ref().map_or_else(
        |_| Vec::new(),
        |p| {
            p.rules
                .iter()
                .map(|r| (r.id.as_str(), r.label.as_str(), r.is_unbounded(), r.first_keyword_offset()))
                .collect()
        },
    )
}

/// Whether the rules compiled.
pub fn ready() -> Result<(), ScanError> {
    SCANNER.as_ref().map(|_| ()).map_err(Clone::clone)
}

pub use provider::REPLACED;
