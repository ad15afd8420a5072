//! Provider key formats: the gitleaks default rule set, vendored as data, and
//! vouch's own rules in the same format.
//!
//! Both files use gitleaks' schema (`id`, `regex`, `keywords`, `entropy`,
//! `secretGroup`, `allowlists`) and are read with its semantics: a rule runs
//! only where one of its keywords occurs, the secret is the configured (or
//! first non-empty) capture group, a finding whose secret is not random
//! enough (`entropy`) or that an allowlist names is dropped, and a `generic`
//! rule's secret must hold a digit. Rules restricted to file paths
//! (`path = …`) do not apply: vouch scans commands and text, not files.
//!
//! Each rule runs only in windows around its keyword hits, sized by the
//! longest match its regex can make (computed from the pattern), and
//! overlapping windows are merged: a rule reads each byte at most once
//! however many keywords crowd together, so the scan is linear in the text.
//!
//! Patterns are parsed (and so checked) when the rules load, but each one's
//! automaton is built the first time its keyword is seen: a `vouch hook` or
//! `vouch review` process lives for one request, sees a handful of keywords,
//! and building all ~220 automata up front was most of a reviewed hook run.

use std::sync::{LazyLock, OnceLock};

use regex_automata::util::syntax;
use regex_automata::{Input, meta};
use serde::Deserialize;

use super::kind::RuleId;
use super::values::shannon_entropy;

/// gitleaks' default rules, v8.30.1 (MIT; see `rules/LICENSE-gitleaks`).
const GITLEAKS_RULES: &str = include_str!("rules/gitleaks.toml");
/// vouch's own provider rules, in gitleaks' format.
const VOUCH_RULES: &str = include_str!("rules/vouch.toml");

/// gitleaks rules that vouch's structural rules replace, because they
/// redact the whole value in its own syntax (quotes, escapes, line prefixes)
/// where the gitleaks pattern stops early.
pub const REPLACED: &[(&str, &str)] = &[
    (
        "private-key",
        "vouch's PEM rule also covers truncated blocks and `N→` line prefixes",
    ),
    (
        "jwt",
        "vouch's JWT rule also covers tokens without a signature",
    ),
    (
        "generic-api-key",
        "vouch's assignment rule judges every word of the name and hides the whole value",
    ),
    (
        "curl-auth-header",
        "vouch reads any `Authorization:` header, not only after `curl -H`",
    ),
    (
        "curl-auth-user",
        "vouch's option table reads `curl -u` with getopt semantics",
    ),
];

/// Rules whose keywords can lie outside the match they gate; the window
/// around a keyword must contain the match, so these get keywords that do.
const KEYWORD_OVERRIDES: &[(&str, &[&str])] = &[
    ("airtable-personnal-access-token", &["pat"]),
    ("facebook-access-token", &["|", "%"]),
    ("cloudflare-origin-ca-key", &["v1.0-"]),
    ("intra42-client-secret", &["s-s4t2ud-", "s-s4t2af-"]),
];

/// How far before its keyword a match of a rule with an unbounded repetition
/// may start. Every such rule puts its keyword within the first bytes of the
/// match (checked by a test against the rule data).
pub const UNBOUNDED_PREFIX: usize = 512;

/// How far after its keyword the window of a rule with an unbounded
/// repetition first reaches. A match that runs into the window's end is
/// searched again to the end of the text, so no match is cut short.
pub const UNBOUNDED_REACH: usize = 16 * 1024;

/// Text around a match that a `regexTarget = "line"` allowlist sees, each
/// side. A longer line is cut for the allowlist only, never for the scan.
const LINE_CONTEXT: usize = 1024;

#[derive(Debug, Deserialize)]
struct RuleFile {
    #[serde(default)]
    allowlist: Option<AllowSpec>,
    #[serde(default)]
    rules: Vec<RuleSpec>,
}

#[derive(Debug, Deserialize)]
struct RuleSpec {
    id: String,
    #[serde(default)]
    regex: Option<String>,
    #[serde(default)]
    keywords: Vec<String>,
    #[serde(default)]
    entropy: Option<f64>,
    #[serde(default, rename = "secretGroup")]
    secret_group: Option<usize>,
    #[serde(default)]
    path: Option<String>,
    #[serde(default)]
    allowlists: Vec<AllowSpec>,
}

#[derive(Debug, Default, Deserialize)]
struct AllowSpec {
    #[serde(default)]
    regexes: Vec<String>,
    #[serde(default, rename = "regexTarget")]
    regex_target: Option<String>,
    #[serde(default)]
    stopwords: Vec<String>,
    #[serde(default)]
    paths: Vec<String>,
    #[serde(default)]
    condition: Option<String>,
}

/// Why the rule data could not be used.
#[derive(Debug, thiserror::Error)]
pub enum RuleError {
    #[error("rule file `{file}` is not valid: {source}")]
    File {
        file: &'static str,
        source: toml::de::Error,
    },
    #[error("rule `{id}` does not compile: {message}")]
    Regex { id: String, message: String },
    #[error("rule `{id}` has no keywords, so it could never run")]
    NoKeywords { id: String },
    #[error("rule id `{id}` appears twice")]
    Duplicate { id: String },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Target {
    Secret,
    Match,
    Line,
}

/// A parsed pattern whose automaton is built on first use.
struct LazyRegex {
    /// In Rust's syntax (see [`go_syntax`]).
    pattern: String,
    built: OnceLock<Option<meta::Regex>>,
}

impl LazyRegex {
    /// The automaton, or `None` when building it failed (a size limit): the
    /// callers then fail closed — a rule redacts its whole window, an
    /// allowlist allows nothing.
    fn get(&self) -> Option<&meta::Regex> {
        self.built
            .get_or_init(|| {
                meta::Builder::new()
                    .configure(meta::Config::new().utf8_empty(false))
                    .syntax(syntax_config())
                    .build(&self.pattern)
                    .map_err(|e| tracing::error!(error = %e, "a redaction rule's automaton failed to build"))
                    .ok()
            })
            .as_ref()
    }
}

struct Allow {
    target: Target,
    regexes: Vec<LazyRegex>,
    stopwords: Vec<String>,
    /// `condition = "AND"` with a path list: a path never matches here, so
    /// the allowlist never applies.
    never: bool,
}

pub(crate) struct Rule {
    pub id: String,
    pub label: String,
    pub keywords: Vec<String>,
    /// The pattern text, for the data checks in the tests.
    pub pattern: String,
    regex: LazyRegex,
    secret_group: Option<usize>,
    entropy: Option<f64>,
    generic: bool,
    /// Longest possible match, when the pattern bounds it.
    max_len: Option<usize>,
    allow: Vec<Allow>,
}

pub(crate) struct Providers {
    pub rules: Vec<Rule>,
    global: Allow,
}

/// One provider finding, in the coordinates of the scanned bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Finding {
    pub start: usize,
    pub end: usize,
    pub rule: RuleId,
}

pub(crate) static PROVIDERS: LazyLock<Result<Providers, RuleError>> = LazyLock::new(|| {
    Providers::load(&[
        ("gitleaks.toml", GITLEAKS_RULES),
        ("vouch.toml", VOUCH_RULES),
    ])
});

/// The label of a provider rule (`github-pat` → `github_pat`).
pub fn label(id: RuleId) -> &'static str {
    PROVIDERS
        .as_ref()
        .ok()
        .and_then(|p| p.rules.get(usize::from(id.0)))
        .map_or("provider", |r| r.label.as_str())
}

/// The rule labelled `label`.
pub fn by_label(label: &str) -> Option<RuleId> {
    let providers = PROVIDERS.as_ref().ok()?;
    let index = providers.rules.iter().position(|r| r.label == label)?;
    u16::try_from(index).ok().map(RuleId)
}

fn syntax_config() -> syntax::Config {
    // Go's regexp (gitleaks' engine) has ASCII `\w`, `\s`, `\b` and case
    // folding; so do these, which also keeps the lazy DFA on every input.
    syntax::Config::new().unicode(false).utf8(false)
}

/// Go's regexp reads a `{` that does not start a repetition (`{\d+}` in
/// `^\$(?:\d+|{\d+})$`) as a literal; Rust's needs it escaped.
fn go_syntax(pattern: &str) -> String {
    let bytes = pattern.as_bytes();
    let mut out = String::with_capacity(pattern.len() + 8);
    let mut i = 0;
    let mut in_class = false;
    while let Some(&b) = bytes.get(i) {
        match b {
            b'\\' => {
                out.push_str(pattern.get(i..i + 2).unwrap_or("\\"));
                i += 2;
                continue;
            }
            b'[' if !in_class => in_class = true,
            b']' if in_class => in_class = false,
            b'{' if !in_class && !is_repetition(bytes.get(i + 1..).unwrap_or_default()) => {
                out.push_str("\\{");
                i += 1;
                continue;
            }
            _ => {}
        }
        let len = pattern
            .get(i..)
            .and_then(|r| r.chars().next())
            .map_or(1, char::len_utf8);
        out.push_str(pattern.get(i..i + len).unwrap_or_default());
        i += len;
    }
    out
}

/// Whether the text after a `{` is `n}`, `n,}` or `n,m}`.
fn is_repetition(rest: &[u8]) -> bool {
    let digits = rest.iter().take_while(|b| b.is_ascii_digit()).count();
    if digits == 0 {
        return false;
    }
    match rest.get(digits) {
        Some(b'}') => true,
        Some(b',') => {
            let more = rest
                .get(digits + 1..)
                .unwrap_or_default()
                .iter()
                .take_while(|b| b.is_ascii_digit())
                .count();
            rest.get(digits + 1 + more) == Some(&b'}')
        }
        Some(_) | None => false,
    }
}

fn compile(id: &str, pattern: &str) -> Result<(LazyRegex, Option<usize>), RuleError> {
    let pattern = go_syntax(pattern);
    let hir = syntax::parse_with(&pattern, &syntax_config()).map_err(|e| RuleError::Regex {
        id: id.to_owned(),
        message: e.to_string(),
    })?;
    let max_len = hir.properties().maximum_len();
    let regex = LazyRegex {
        pattern,
        built: OnceLock::new(),
    };
    Ok((regex, max_len))
}

fn compile_allow(id: &str, spec: &AllowSpec) -> Result<Allow, RuleError> {
    let regexes = spec
        .regexes
        .iter()
        .map(|p| compile(id, p).map(|(r, _)| r))
        .collect::<Result<Vec<_>, _>>()?;
    let target = match spec.regex_target.as_deref() {
        Some("match") => Target::Match,
        Some("line") => Target::Line,
        Some(_) | None => Target::Secret,
    };
    let and = spec
        .condition
        .as_deref()
        .is_some_and(|c| c.eq_ignore_ascii_case("and"));
    Ok(Allow {
        target,
        regexes,
        stopwords: spec
            .stopwords
            .iter()
            .map(|w| w.to_ascii_lowercase())
            .collect(),
        never: and && !spec.paths.is_empty(),
    })
}

impl Providers {
    fn load(files: &[(&'static str, &str)]) -> Result<Providers, RuleError> {
        let mut rules: Vec<Rule> = Vec::new();
        let mut global = Allow {
            target: Target::Secret,
            regexes: Vec::new(),
            stopwords: Vec::new(),
            never: false,
        };
        for (file, text) in files {
            let parsed: RuleFile =
                toml::from_str(text).map_err(|source| RuleError::File { file, source })?;
            if let Some(spec) = &parsed.allowlist {
                let allow = compile_allow("global allowlist", spec)?;
                global.regexes.extend(allow.regexes);
                global.stopwords.extend(allow.stopwords);
            }
            for spec in parsed.rules {
                if let Some(rule) = Rule::from_spec(spec)? {
                    if rules.iter().any(|r| r.id == rule.id) {
                        return Err(RuleError::Duplicate { id: rule.id });
                    }
                    rules.push(rule);
                }
            }
        }
        Ok(Providers { rules, global })
    }

    /// Every provider finding in `hay`, given the keyword hits that gate them.
    pub fn find(&self, hay: &[u8], windows: &[Vec<(usize, usize)>], out: &mut Vec<Finding>) {
        for (index, (rule, ranges)) in self.rules.iter().zip(windows).enumerate() {
            let Ok(id) = u16::try_from(index) else { break };
            for &(start, end) in ranges {
                rule.find_in(hay, start, end, &self.global, RuleId(id), out);
            }
        }
    }

    /// The byte window a keyword hit at `hit_start..hit_end` opens for `rule`.
    pub fn window(
        &self,
        rule: usize,
        hit_start: usize,
        hit_end: usize,
        len: usize,
    ) -> Option<(usize, usize)> {
        let rule = self.rules.get(rule)?;
        Some(match rule.max_len {
            Some(max) => (
                hit_end.saturating_sub(max),
                hit_start.saturating_add(max).min(len),
            ),
            None => (
                hit_start.saturating_sub(UNBOUNDED_PREFIX),
                hit_end.saturating_add(UNBOUNDED_REACH).min(len),
            ),
        })
    }
}

impl Rule {
    fn from_spec(spec: RuleSpec) -> Result<Option<Rule>, RuleError> {
        let Some(pattern) = spec.regex.as_deref() else {
            return Ok(None);
        };
        if spec.path.is_some() || REPLACED.iter().any(|(id, _)| *id == spec.id) {
            return Ok(None);
        }
        let keywords: Vec<String> = match KEYWORD_OVERRIDES.iter().find(|(id, _)| *id == spec.id) {
            Some((_, words)) => words.iter().map(|w| (*w).to_owned()).collect(),
            None => spec
                .keywords
                .iter()
                .map(|k| k.to_ascii_lowercase())
                .collect(),
        };
        if keywords.is_empty() {
            return Err(RuleError::NoKeywords { id: spec.id });
        }
        let (regex, max_len) = compile(&spec.id, pattern)?;
        let allow = spec
            .allowlists
            .iter()
            .map(|a| compile_allow(&spec.id, a))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Some(Rule {
            label: spec.id.replace('-', "_"),
            generic: spec.id.starts_with("generic"),
            id: spec.id,
            keywords,
            pattern: pattern.to_owned(),
            regex,
            secret_group: spec.secret_group,
            entropy: spec.entropy,
            max_len,
            allow,
        }))
    }

    fn find_in(
        &self,
        hay: &[u8],
        start: usize,
        end: usize,
        global: &Allow,
        id: RuleId,
        out: &mut Vec<Finding>,
    ) {
        let (mut start, mut end) = (start, end);
        loop {
            let Some(cut) = self.find_window(hay, start, end, global, id, out) else {
                return;
            };
            // A match ran into the window's end: search on from it, to the
            // end of the text.
            (start, end) = (cut, hay.len());
        }
    }

    /// Searches one window; returns where a match cut by the window's end
    /// starts.
    fn find_window(
        &self,
        hay: &[u8],
        start: usize,
        end: usize,
        global: &Allow,
        id: RuleId,
        out: &mut Vec<Finding>,
    ) -> Option<usize> {
        let Some(regex) = self.regex.get() else {
            // No automaton: the whole window is taken for a secret.
            out.push(Finding {
                start,
                end,
                rule: id,
            });
            return None;
        };
        let input = Input::new(hay).range(start..end);
        for caps in regex.captures_iter(input) {
            let Some(whole) = caps.get_match() else {
                continue;
            };
            if whole.end() >= end && end < hay.len() {
                return Some(whole.start());
            }
            let secret = match self.secret_group {
                Some(group) => caps.get_group(group),
                None => (1..caps.group_len())
                    .filter_map(|g| caps.get_group(g))
                    .find(|s| !s.is_empty()),
            }
            .unwrap_or(whole.span());
            let bytes = hay.get(secret.start..secret.end).unwrap_or_default();
            if bytes.is_empty() || !self.passes_checks(bytes) {
                continue;
            }
            let whole_span = (whole.start(), whole.end());
            let allowed = self
                .allow
                .iter()
                .chain(std::iter::once(global))
                .any(|a| a.allows(hay, bytes, whole_span));
            if !allowed {
                out.push(Finding {
                    start: secret.start,
                    end: secret.end,
                    rule: id,
                });
            }
        }
        None
    }

    fn passes_checks(&self, secret: &[u8]) -> bool {
        if let Some(threshold) = self.entropy {
            if shannon_entropy(secret) <= threshold {
                return false;
            }
            // gitleaks' rule for generic patterns: a secret has a digit.
            if self.generic && !secret.iter().any(u8::is_ascii_digit) {
                return false;
            }
        }
        true
    }

    /// Where the first keyword starts in the pattern text (lowercased), for
    /// the test that checks unbounded rules keep their keyword early. A
    /// keyword split by an alternation (`dckr_(?:pat|oat)_` for `dckr_pat_`)
    /// is found by its longest prefix of at least two bytes in the pattern.
    pub fn first_keyword_offset(&self) -> Option<usize> {
        // `hooks\.slack\.com` holds the keyword `hooks.slack.com`.
        let pattern = self.pattern.to_ascii_lowercase().replace("\\.", ".");
        self.keywords
            .iter()
            .filter_map(|k| {
                (2..=k.len())
                    .rev()
                    .filter_map(|n| k.get(..n))
                    .find_map(|prefix| pattern.find(prefix))
            })
            .min()
    }

    pub fn is_unbounded(&self) -> bool {
        self.max_len.is_none()
    }

    /// Whether this rule's automata (its own and its allowlists') build; the
    /// rule-set test builds them all, which a running process never needs.
    #[cfg(test)]
    pub fn builds(&self) -> bool {
        self.regex.get().is_some()
            && self
                .allow
                .iter()
                .all(|a| a.regexes.iter().all(|r| r.get().is_some()))
    }
}

impl Allow {
    fn allows(&self, hay: &[u8], secret: &[u8], whole: (usize, usize)) -> bool {
        if self.never {
            return false;
        }
        let lower = secret.to_ascii_lowercase();
        if self
            .stopwords
            .iter()
            .any(|w| memchr::memmem::find(&lower, w.as_bytes()).is_some())
        {
            return true;
        }
        if self.regexes.is_empty() {
            return false;
        }
        let target: &[u8] = match self.target {
            Target::Secret => secret,
            Target::Match => hay.get(whole.0..whole.1).unwrap_or_default(),
            Target::Line => {
                let from = whole.0.saturating_sub(LINE_CONTEXT);
                let to = whole.1.saturating_add(LINE_CONTEXT).min(hay.len());
                let before = hay.get(from..whole.0).unwrap_or_default();
                let after = hay.get(whole.1..to).unwrap_or_default();
                let line_start = memchr::memrchr(b'\n', before).map_or(from, |i| from + i + 1);
                let line_end = memchr::memchr(b'\n', after).map_or(to, |i| whole.1 + i);
                hay.get(line_start..line_end).unwrap_or_default()
            }
        };
        self.regexes
            .iter()
            .any(|r| r.get().is_some_and(|r| r.is_match(target)))
    }
}
