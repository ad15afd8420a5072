//! Redaction: secrets become `[REDACTED:<kind>]` before anything is estimated,
//! sent to the reviewer, cached or logged.
//!
//! Two passes cover the two ways a secret reaches vouch. Structured input
//! (`input`, a tool call's arguments) is walked and the value under a
//! secret-named key is replaced whole, whatever it looks like. Every string is
//! then scanned for secret-shaped text: provider key formats, JWTs, PEM
//! blocks, URL credentials, `--password=…` options, `Authorization:` headers
//! and `NAME=value` assignments whose name says it holds a secret.
//!
//! Most text holds no secret, so the scan is gated: one Aho-Corasick pass
//! finds the trigger keywords, and only the rules whose keyword occurs run
//! their regex. Overlapping findings are merged and the union is replaced, so
//! a byte that any rule flags is never shown; the label is the most specific
//! kind in the union.
//!
//! Key names match on words (`snake_case`, `camelCase`, `kebab-case`), never
//! on substrings: `author`, `tokenizer`, `keyboard`, `monkey` and `secretary`
//! are ordinary names, `api_key`, `authToken` and `X-Api-Key` are not.

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::sync::LazyLock;

use aho_corasick::{AhoCorasick, AhoCorasickBuilder, MatchKind};
use regex::{Captures, Regex};
use serde::Serialize;
use serde_json::Value;

use crate::request::{Request, TranscriptEntry};

/// What a redacted value was, as shown in `[REDACTED:<kind>]`.
///
/// Declared from most to least specific: when findings overlap, the merged
/// span carries the first kind in this order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum SecretKind {
    PrivateKey,
    Jwt,
    Anthropic,
    Openai,
    AwsAccessKey,
    GithubPat,
    GithubToken,
    GithubFineGrained,
    GitlabPat,
    SlackBot,
    SlackUser,
    SlackToken,
    SlackWebhook,
    StripeLive,
    StripeRestricted,
    StripeTest,
    StripeWebhookSecret,
    GoogleApi,
    NpmToken,
    Huggingface,
    Pypi,
    Sendgrid,
    Digitalocean,
    DockerPat,
    AwsSecretKey,
    UrlPassword,
    UrlCredential,
    CliPassword,
    CliSecret,
    AuthHeader,
    Cookie,
    GenericAssignment,
    SecretField,
    /// The redaction rules could not be compiled, so the whole text was
    /// withheld rather than sent unscanned.
    Unscanned,
}

impl SecretKind {
    pub fn as_str(self) -> &'static str {
        match self {
            SecretKind::PrivateKey => "private_key",
            SecretKind::Jwt => "jwt",
            SecretKind::Anthropic => "anthropic",
            SecretKind::Openai => "openai",
            SecretKind::AwsAccessKey => "aws_access_key",
            SecretKind::GithubPat => "github_pat",
            SecretKind::GithubToken => "github_token",
            SecretKind::GithubFineGrained => "github_fine_grained",
            SecretKind::GitlabPat => "gitlab_pat",
            SecretKind::SlackBot => "slack_bot",
            SecretKind::SlackUser => "slack_user",
            SecretKind::SlackToken => "slack_token",
            SecretKind::SlackWebhook => "slack_webhook",
            SecretKind::StripeLive => "stripe_live",
            SecretKind::StripeRestricted => "stripe_restricted",
            SecretKind::StripeTest => "stripe_test",
            SecretKind::StripeWebhookSecret => "stripe_webhook_secret",
            SecretKind::GoogleApi => "google_api",
            SecretKind::NpmToken => "npm_token",
            SecretKind::Huggingface => "huggingface",
            SecretKind::Pypi => "pypi",
            SecretKind::Sendgrid => "sendgrid",
            SecretKind::Digitalocean => "digitalocean",
            SecretKind::DockerPat => "docker_pat",
            SecretKind::AwsSecretKey => "aws_secret_key",
            SecretKind::UrlPassword => "url_password",
            SecretKind::UrlCredential => "url_credential",
            SecretKind::CliPassword => "cli_password",
            SecretKind::CliSecret => "cli_secret",
            SecretKind::AuthHeader => "auth_header",
            SecretKind::Cookie => "cookie",
            SecretKind::GenericAssignment => "generic_assignment",
            SecretKind::SecretField => "secret_field",
            SecretKind::Unscanned => "unscanned",
        }
    }

    fn marker(self) -> String {
        format!("{MARKER_PREFIX}{}]", self.as_str())
    }
}

impl std::fmt::Display for SecretKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Prefix of every replacement; text already starting with it is left alone,
/// which makes redaction idempotent.
const MARKER_PREFIX: &str = "[REDACTED:";

/// How many values of each kind were redacted. Counts only, never values, so
/// it can go to telemetry.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[serde(transparent)]
pub struct RedactionReport {
    counts: BTreeMap<SecretKind, u32>,
}

impl RedactionReport {
    pub fn add(&mut self, kind: SecretKind) {
        let count = self.counts.entry(kind).or_insert(0);
        *count = count.saturating_add(1);
    }

    pub fn merge(&mut self, other: &RedactionReport) {
        for (kind, n) in &other.counts {
            let count = self.counts.entry(*kind).or_insert(0);
            *count = count.saturating_add(*n);
        }
    }

    pub fn count(&self, kind: SecretKind) -> u32 {
        self.counts.get(&kind).copied().unwrap_or(0)
    }

    pub fn total(&self) -> u32 {
        self.counts
            .values()
            .fold(0u32, |sum, n| sum.saturating_add(*n))
    }

    pub fn is_empty(&self) -> bool {
        self.counts.is_empty()
    }

    pub fn iter(&self) -> impl Iterator<Item = (SecretKind, u32)> + '_ {
        self.counts.iter().map(|(kind, n)| (*kind, *n))
    }
}

// ---------------------------------------------------------------------------
// Public entry points
// ---------------------------------------------------------------------------

/// Compiles the redaction rules now rather than on first use, so a service
/// pays that cost at start. Returns whether they compiled; if they did not,
/// every text is withheld whole (see [`SecretKind::Unscanned`]).
pub fn prepare() -> bool {
    RULES.is_some()
}

/// Redacts secret-shaped text. Borrows when nothing was found.
pub fn redact_text(s: &str) -> Cow<'_, str> {
    redact_text_with(s, &mut RedactionReport::default())
}

/// [`redact_text`], counting what was redacted into `report`.
pub fn redact_text_with<'a>(s: &'a str, report: &mut RedactionReport) -> Cow<'a, str> {
    let Some(rules) = RULES.as_ref() else {
        // INVARIANT: text is never passed on unscanned.
        if s.is_empty() {
            return Cow::Borrowed(s);
        }
        report.add(SecretKind::Unscanned);
        return Cow::Owned(SecretKind::Unscanned.marker());
    };
    let spans = rules.find(s);
    if spans.is_empty() {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len());
    let mut at = 0;
    for span in &spans {
        out.push_str(s.get(at..span.start).unwrap_or_default());
        out.push_str(&span.kind.marker());
        report.add(span.kind);
        at = span.end;
    }
    out.push_str(s.get(at..).unwrap_or_default());
    Cow::Owned(out)
}

/// Redacts a JSON value: values under secret-named keys are replaced whole,
/// every other string is scanned as text.
pub fn redact_value(v: &Value) -> Value {
    redact_value_with(v, &mut RedactionReport::default())
}

/// [`redact_value`], counting what was redacted into `report`.
pub fn redact_value_with(v: &Value, report: &mut RedactionReport) -> Value {
    match v {
        Value::String(s) => Value::String(redact_text_with(s, report).into_owned()),
        Value::Array(items) => Value::Array(
            items
                .iter()
                .map(|item| redact_value_with(item, report))
                .collect(),
        ),
        Value::Object(map) => {
            let mut out = serde_json::Map::with_capacity(map.len());
            for (key, value) in map {
                let redacted = match classify_key(key) {
                    KeyClass::Secret if holds_secret(value) => {
                        report.add(SecretKind::SecretField);
                        Value::String(SecretKind::SecretField.marker())
                    }
                    KeyClass::MaybeSecret
                        if value.as_str().is_some_and(|s| {
                            !is_exempt_value(s) && looks_random(s) && !is_uuid(s)
                        }) =>
                    {
                        report.add(SecretKind::SecretField);
                        Value::String(SecretKind::SecretField.marker())
                    }
                    KeyClass::Secret | KeyClass::MaybeSecret | KeyClass::Plain => {
                        redact_value_with(value, report)
                    }
                };
                out.insert(key.clone(), redacted);
            }
            Value::Object(out)
        }
        Value::Null | Value::Bool(_) | Value::Number(_) => v.clone(),
    }
}

/// A copy of `r` with every free-text field redacted. Identifiers
/// (`id`, `session_id`, `turn_id`, `tool_call_id`, tool names) are kept as
/// they are so tool calls still link to their results.
pub fn redact_request(r: &Request) -> Request {
    redact_request_with_report(r).0
}

/// [`redact_request`] plus the counts of what was redacted.
pub fn redact_request_with_report(r: &Request) -> (Request, RedactionReport) {
    let mut report = RedactionReport::default();
    let text = |s: &Option<String>, report: &mut RedactionReport| {
        s.as_ref().map(|s| redact_text_with(s, report).into_owned())
    };
    let mut out = r.clone();
    out.command = text(&r.command, &mut report);
    out.reason = text(&r.reason, &mut report);
    out.path = text(&r.path, &mut report);
    out.resolved_path = text(&r.resolved_path, &mut report);
    out.destination = text(&r.destination, &mut report);
    out.cwd = text(&r.cwd, &mut report);
    out.home = text(&r.home, &mut report);
    out.input = r.input.as_ref().map(|v| redact_value_with(v, &mut report));
    out.transcript = r
        .transcript
        .iter()
        .map(|entry| redact_entry(entry, &mut report))
        .collect();
    (out, report)
}

fn redact_entry(entry: &TranscriptEntry, report: &mut RedactionReport) -> TranscriptEntry {
    match entry {
        TranscriptEntry::User { text } => TranscriptEntry::User {
            text: redact_text_with(text, report).into_owned(),
        },
        TranscriptEntry::Assistant { text } => TranscriptEntry::Assistant {
            text: redact_text_with(text, report).into_owned(),
        },
        TranscriptEntry::Summary { text } => TranscriptEntry::Summary {
            text: redact_text_with(text, report).into_owned(),
        },
        TranscriptEntry::ToolResult { tool_call_id, text } => TranscriptEntry::ToolResult {
            tool_call_id: tool_call_id.clone(),
            text: redact_text_with(text, report).into_owned(),
        },
        TranscriptEntry::ToolCall {
            tool_call_id,
            tool_name,
            input,
        } => TranscriptEntry::ToolCall {
            tool_call_id: tool_call_id.clone(),
            tool_name: tool_name.clone(),
            input: input.as_ref().map(|v| redact_value_with(v, report)),
        },
    }
}

// ---------------------------------------------------------------------------
// Secret-named keys
// ---------------------------------------------------------------------------

/// What a key name says about its value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KeyClass {
    /// The name says the value is a secret (`password`, `api_key`): the value
    /// is redacted whatever it looks like.
    Secret,
    /// The name may hold a secret (`key`, `auth`, `session`): the value is
    /// redacted when it looks random.
    MaybeSecret,
    Plain,
}

/// Last words that make a name secret.
const SECRET_WORDS: &[&str] = &[
    "password",
    "passwords",
    "passwd",
    "passphrase",
    "pwd",
    "pass",
    "secret",
    "secrets",
    "token",
    "apikey",
    "accesskey",
    "secretkey",
    "privatekey",
    "credential",
    "credentials",
    "creds",
    "cookie",
    "cookies",
    "authorization",
    "bearer",
    "authtoken",
    "accesstoken",
    "refreshtoken",
    "sessiontoken",
    "clientsecret",
];

/// Endings that make a single run-together word secret. `pass` is not one:
/// `bypass` and `compass` are ordinary words.
const SECRET_SUFFIXES: &[&str] = &["password", "passwd", "secret", "token", "apikey"];

/// Words that, before a final `key`, make the name secret (`api_key`).
const SECRET_KEY_QUALIFIERS: &[&str] = &[
    "api",
    "access",
    "secret",
    "private",
    "signing",
    "encryption",
    "master",
    "auth",
    "account",
    "client",
    "license",
    "service",
];

/// Last words that may name a secret.
const MAYBE_SECRET_WORDS: &[&str] = &[
    "key",
    "keys",
    "auth",
    "session",
    "sessionid",
    "signature",
    "sig",
    "salt",
];

/// Classifies a key name by its words; see the module docs.
pub fn classify_key(name: &str) -> KeyClass {
    let words = split_words(name);
    let Some(last) = words.last() else {
        return KeyClass::Plain;
    };
    let before_last = words
        .len()
        .checked_sub(2)
        .and_then(|i| words.get(i))
        .map(String::as_str);
    if SECRET_WORDS.contains(&last.as_str()) {
        return KeyClass::Secret;
    }
    // Run-together environment names: `PGPASSWORD`, `NPMTOKEN`.
    if SECRET_SUFFIXES.iter().any(|suffix| last.ends_with(suffix)) {
        return KeyClass::Secret;
    }
    if last == "key" {
        match before_last {
            Some("public") => return KeyClass::Plain,
            Some(q) if SECRET_KEY_QUALIFIERS.contains(&q) => return KeyClass::Secret,
            Some(_) | None => {}
        }
    }
    if MAYBE_SECRET_WORDS.contains(&last.as_str()) {
        return KeyClass::MaybeSecret;
    }
    KeyClass::Plain
}

/// Splits `fooBar_baz-QUXName` into `[foo, bar, baz, qux, name]`.
fn split_words(name: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut current = String::new();
    let chars: Vec<char> = name.chars().collect();
    for (i, &c) in chars.iter().enumerate() {
        if !c.is_ascii_alphanumeric() {
            if !current.is_empty() {
                words.push(std::mem::take(&mut current));
            }
            continue;
        }
        let prev = i.checked_sub(1).and_then(|p| chars.get(p)).copied();
        let next = chars.get(i + 1).copied();
        let boundary = c.is_ascii_uppercase()
            && prev.is_some_and(|p| {
                p.is_ascii_lowercase()
                    || p.is_ascii_digit()
                    || (p.is_ascii_uppercase() && next.is_some_and(|n| n.is_ascii_lowercase()))
            });
        if boundary && !current.is_empty() {
            words.push(std::mem::take(&mut current));
        }
        current.push(c.to_ascii_lowercase());
    }
    if !current.is_empty() {
        words.push(current);
    }
    words
}

/// Whether a value under a secret-named key is worth hiding: everything but
/// `null`, booleans and the exempt strings of [`is_exempt_value`].
fn holds_secret(v: &Value) -> bool {
    match v {
        Value::Null | Value::Bool(_) => false,
        Value::String(s) => !is_exempt_value(s),
        Value::Number(_) => true,
        Value::Array(items) => !items.is_empty(),
        Value::Object(map) => !map.is_empty(),
    }
}

/// Values that are not secrets even where a secret is expected: empty, a
/// shell or template variable reference, an earlier redaction, a file path,
/// or a literal like `null`.
fn is_exempt_value(v: &str) -> bool {
    let v = v.trim();
    if v.is_empty() || v.starts_with(MARKER_PREFIX) {
        return true;
    }
    if is_variable_reference(v) || is_path_like(v) {
        return true;
    }
    matches!(
        v.to_ascii_lowercase().as_str(),
        "null" | "none" | "nil" | "true" | "false" | "undefined"
    )
}

/// A shell expansion (`$NAME`, `${NAME}`, `$(cmd)`) or a template
/// placeholder (`{{ name }}`, `%NAME%`, `<token>`): a reference to a secret,
/// not the secret.
fn is_variable_reference(v: &str) -> bool {
    let ident = |s: &str| {
        !s.is_empty()
            && s.bytes()
                .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b' ' | b'-'))
    };
    if let Some(rest) = v.strip_prefix('$') {
        return rest
            .bytes()
            .next()
            .is_some_and(|b| b.is_ascii_alphabetic() || matches!(b, b'_' | b'{' | b'('));
    }
    if let Some(rest) = v.strip_prefix("{{").and_then(|r| r.strip_suffix("}}")) {
        return ident(rest.trim());
    }
    if let Some(rest) = v.strip_prefix('%').and_then(|r| r.strip_suffix('%')) {
        return ident(rest);
    }
    if let Some(rest) = v.strip_prefix('<').and_then(|r| r.strip_suffix('>')) {
        return ident(rest);
    }
    false
}

/// `/etc/app.conf`, `~/.ssh/id_rsa`, `./secrets/dev.json`: a path names
/// where a secret lives, which the reviewer should see.
fn is_path_like(v: &str) -> bool {
    let rest = v
        .strip_prefix("~/")
        .or_else(|| v.strip_prefix("./"))
        .or_else(|| v.strip_prefix("../"))
        .or_else(|| v.strip_prefix('/'));
    let Some(rest) = rest else {
        return false;
    };
    rest.contains('/')
        && rest
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-' | b'/' | b'~'))
}

/// A random-looking token: long, mixing letters and digits, with high
/// per-character entropy. Ordinary words and identifiers fail this.
pub fn looks_random(v: &str) -> bool {
    let v = v.trim();
    if v.len() < 16 || v.bytes().any(|b| b.is_ascii_whitespace()) {
        return false;
    }
    let digits = v.bytes().filter(u8::is_ascii_digit).count();
    let letters = v.bytes().filter(u8::is_ascii_alphabetic).count();
    digits >= 2 && letters >= 2 && shannon_entropy(v) >= 3.0
}

fn shannon_entropy(v: &str) -> f64 {
    let mut counts = [0u32; 256];
    for b in v.bytes() {
        if let Some(c) = counts.get_mut(usize::from(b)) {
            *c = c.saturating_add(1);
        }
    }
    let len = v.len() as f64;
    counts
        .iter()
        .filter(|&&c| c > 0)
        .map(|&c| {
            let p = f64::from(c) / len;
            -p * p.log2()
        })
        .sum()
}

/// `8080/path/@scope`: a port and a path that merely contain an `@`, not a
/// password.
fn is_port_and_path(v: &str) -> bool {
    let port = v.split('/').next().unwrap_or_default();
    v.contains('/') && !port.is_empty() && port.bytes().all(|b| b.is_ascii_digit())
}

fn is_uuid(v: &str) -> bool {
    let v = v.as_bytes();
    v.len() == 36
        && v.iter().enumerate().all(|(i, b)| match i {
            8 | 13 | 18 | 23 => *b == b'-',
            _ => b.is_ascii_hexdigit(),
        })
}

// ---------------------------------------------------------------------------
// Text rules
// ---------------------------------------------------------------------------

/// One finding: bytes `start..end` of the scanned text hold a secret.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Span {
    start: usize,
    end: usize,
    kind: SecretKind,
}

/// A keyword-gated regex and what to make of its captures.
struct Rule {
    triggers: &'static [&'static str],
    pattern: &'static str,
    collect: fn(&Captures<'_>, &mut Vec<Span>),
    resume: Resume,
}

/// Where the next search starts after a match.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Resume {
    AfterMatch,
    /// At the start of the value: a bare value may swallow the name of the
    /// next assignment (`apiKey: .*/apiKey: "x"`), which must still be seen.
    AtValue,
}

struct CompiledRule {
    regex: Regex,
    collect: fn(&Captures<'_>, &mut Vec<Span>),
    resume: Resume,
}

struct Rules {
    triggers: AhoCorasick,
    /// Trigger pattern index → indices of the rules it enables.
    trigger_rules: Vec<Vec<usize>>,
    rules: Vec<CompiledRule>,
}

static RULES: LazyLock<Option<Rules>> = LazyLock::new(|| Rules::compile(RULE_SPECS).ok());

#[derive(Debug, thiserror::Error)]
enum CompileError {
    #[error("redaction rule `{pattern}` does not compile: {source}")]
    Regex {
        pattern: &'static str,
        source: regex::Error,
    },
    #[error("redaction triggers do not compile: {0}")]
    Triggers(#[from] aho_corasick::BuildError),
}

impl Rules {
    fn compile(specs: &[Rule]) -> Result<Rules, CompileError> {
        let mut trigger_words: Vec<&'static str> = Vec::new();
        let mut trigger_rules: Vec<Vec<usize>> = Vec::new();
        let mut rules = Vec::with_capacity(specs.len());
        for (index, spec) in specs.iter().enumerate() {
            let regex = Regex::new(spec.pattern).map_err(|source| CompileError::Regex {
                pattern: spec.pattern,
                source,
            })?;
            rules.push(CompiledRule {
                regex,
                collect: spec.collect,
                resume: spec.resume,
            });
            for word in spec.triggers {
                match trigger_words
                    .iter()
                    .position(|w| w.eq_ignore_ascii_case(word))
                {
                    Some(at) => {
                        if let Some(list) = trigger_rules.get_mut(at) {
                            list.push(index);
                        }
                    }
                    None => {
                        trigger_words.push(word);
                        trigger_rules.push(vec![index]);
                    }
                }
            }
        }
        let triggers = AhoCorasickBuilder::new()
            .ascii_case_insensitive(true)
            .match_kind(MatchKind::Standard)
            .build(&trigger_words)?;
        Ok(Rules {
            triggers,
            trigger_rules,
            rules,
        })
    }

    /// The merged, sorted, non-overlapping secret spans of `s`.
    fn find(&self, s: &str) -> Vec<Span> {
        let mut enabled = vec![false; self.rules.len()];
        let mut any = false;
        // Overlapping matches so a short trigger inside a longer one still counts.
        for m in self.triggers.find_overlapping_iter(s) {
            for &rule in self
                .trigger_rules
                .get(m.pattern().as_usize())
                .map(Vec::as_slice)
                .unwrap_or_default()
            {
                if let Some(flag) = enabled.get_mut(rule) {
                    *flag = true;
                    any = true;
                }
            }
        }
        if !any {
            return Vec::new();
        }
        let mut spans = Vec::new();
        for (rule, on) in self.rules.iter().zip(&enabled) {
            if !on {
                continue;
            }
            let mut at = 0;
            while at <= s.len() {
                let Some(caps) = rule.regex.captures_at(s, at) else {
                    break;
                };
                (rule.collect)(&caps, &mut spans);
                let Some(whole) = caps.get(0) else {
                    break;
                };
                let value_start = match rule.resume {
                    Resume::AfterMatch => None,
                    Resume::AtValue => ["dq", "sq", "bare", "v"]
                        .iter()
                        .find_map(|g| caps.name(g))
                        .map(|m| m.start()),
                };
                // Resume one character before the value, so the boundary
                // in front of a name inside the value can match; always move
                // forward, by at least one character.
                let next = value_start
                    .map(|v| {
                        s.get(..v)
                            .and_then(|h| h.chars().next_back())
                            .map_or(v, |c| v - c.len_utf8())
                    })
                    .filter(|&v| v > at && v > whole.start())
                    .unwrap_or(whole.end());
                at = match next > at {
                    true => next,
                    false => s
                        .get(at..)
                        .and_then(|r| r.chars().next())
                        .map_or(s.len() + 1, |c| at + c.len_utf8()),
                };
            }
        }
        drop_inside_markers(s, &mut spans);
        merge(spans)
    }
}

/// Removes findings that start inside an earlier `[REDACTED:kind]` marker:
/// the marker's own `:` must not read as `user:password`, which keeps
/// redaction idempotent.
fn drop_inside_markers(s: &str, spans: &mut Vec<Span>) {
    if !s.contains(MARKER_PREFIX) {
        return;
    }
    let markers: Vec<(usize, usize)> = s
        .match_indices(MARKER_PREFIX)
        .filter_map(|(start, _)| {
            let close = s.get(start..)?.find(']')?;
            Some((start, start + close + 1))
        })
        .collect();
    spans.retain(|span| {
        !markers
            .iter()
            .any(|&(start, end)| span.start > start && span.start < end)
    });
}

/// Merges overlapping or touching spans; the merged span keeps the most
/// specific kind.
fn merge(mut spans: Vec<Span>) -> Vec<Span> {
    spans.retain(|s| s.start < s.end);
    spans.sort_by_key(|s| (s.start, s.end));
    let mut out: Vec<Span> = Vec::with_capacity(spans.len());
    for span in spans {
        match out.last_mut() {
            Some(last) if span.start < last.end => {
                last.end = last.end.max(span.end);
                last.kind = last.kind.min(span.kind);
            }
            Some(_) | None => out.push(span),
        }
    }
    out
}

fn push(spans: &mut Vec<Span>, m: Option<regex::Match<'_>>, kind: SecretKind) {
    if let Some(m) = m {
        spans.push(Span {
            start: m.start(),
            end: m.end(),
            kind,
        });
    }
}

/// The value of an assignment or option: the first of the capture groups
/// `dq` (double-quoted), `sq` (single-quoted) or `bare` that matched.
fn value_of<'h>(caps: &Captures<'h>) -> Option<regex::Match<'h>> {
    caps.name("dq")
        .or_else(|| caps.name("sq"))
        .or_else(|| caps.name("bare"))
}

/// A quoted or bare value, as named groups for [`value_of`]. A bare value
/// runs to the next whitespace or quote; [`bare_end`] then shortens it where
/// the syntax around it ends a word.
macro_rules! value_re {
    () => {
        r#"(?:"(?P<dq>[^"\n]*)"|'(?P<sq>[^'\n]*)'|(?P<bare>[^\s'"`]+))"#
    };
}

/// Where a bare value really ends. After `=` (shell, env files, URL
/// queries) a shell metacharacter or `&` ends it; after `:` (YAML, JSON,
/// headers) only trailing punctuation is trimmed, so `Tr0ub4dor&3` stays
/// whole.
fn bare_end(value: &str, shell_like: bool) -> usize {
    if shell_like {
        return value
            .find([';', '&', '|', '<', '>', '(', ')'])
            .unwrap_or(value.len());
    }
    value.trim_end_matches([',', ';', ')', '}', ']']).len()
}

/// The value span to redact: quoted values whole, bare ones up to
/// [`bare_end`]. `None` when the value is exempt (see [`is_exempt_value`]).
fn secret_value<'h>(caps: &Captures<'h>, shell_like: bool) -> Option<(usize, usize, &'h str)> {
    let v = value_of(caps)?;
    let raw = v.as_str();
    if is_exempt_value(raw) {
        return None;
    }
    let end = match caps.name("bare") {
        Some(_) => bare_end(raw, shell_like),
        None => raw.len(),
    };
    let value = raw.get(..end)?;
    if is_exempt_value(value) {
        return None;
    }
    Some((v.start(), v.start() + end, value))
}

/// Word boundary without Unicode, so the lazy DFA never falls back.
macro_rules! wb {
    () => {
        r"(?-u:\b)"
    };
}

static RULE_SPECS: &[Rule] = &[
    Rule {
        resume: Resume::AfterMatch,
        // Up to the END line; unterminated, up to the end of the key material.
        triggers: &["PRIVATE KEY"],
        pattern: r"-----BEGIN[ A-Z0-9]*PRIVATE KEY[ A-Z]*-----(?:(?s:.*?)-----END[ A-Z0-9]*PRIVATE KEY[ A-Z]*-----|(?:[A-Za-z0-9+/=:,. \t\r\n-]|\\[nrt])*)",
        collect: |caps, spans| push(spans, caps.get(0), SecretKind::PrivateKey),
    },
    Rule {
        resume: Resume::AfterMatch,
        triggers: &["eyJ"],
        pattern: concat!(
            wb!(),
            r"eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]*"
        ),
        collect: |caps, spans| push(spans, caps.get(0), SecretKind::Jwt),
    },
    Rule {
        resume: Resume::AfterMatch,
        triggers: &["sk-ant-"],
        pattern: concat!(wb!(), r"sk-ant-[A-Za-z0-9_-]{20,}"),
        collect: |caps, spans| push(spans, caps.get(0), SecretKind::Anthropic),
    },
    Rule {
        resume: Resume::AfterMatch,
        // `sk-learn` and other short names are too short; real keys mix cases
        // and digits.
        triggers: &["sk-"],
        pattern: concat!(wb!(), r"sk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{20,}"),
        collect: |caps, spans| {
            if let Some(m) = caps.get(0) {
                let body = m.as_str();
                let mixed = body.bytes().any(|b| b.is_ascii_uppercase())
                    && body.bytes().any(|b| b.is_ascii_lowercase())
                    && body.bytes().any(|b| b.is_ascii_digit());
                if mixed {
                    push(spans, Some(m), SecretKind::Openai);
                }
            }
        },
    },
    Rule {
        resume: Resume::AfterMatch,
        triggers: &["AKIA", "ASIA", "ABIA", "ACCA"],
        pattern: concat!(wb!(), r"(?:AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16}", wb!()),
        collect: |caps, spans| push(spans, caps.get(0), SecretKind::AwsAccessKey),
    },
    Rule {
        resume: Resume::AfterMatch,
        triggers: &["ghp_", "gho_", "ghu_", "ghs_", "ghr_"],
        pattern: concat!(wb!(), r"gh(?P<t>[pousr])_[A-Za-z0-9]{30,255}", wb!()),
        collect: |caps, spans| {
            let kind = match caps.name("t").map(|m| m.as_str()) {
                Some("p") => SecretKind::GithubPat,
                Some(_) | None => SecretKind::GithubToken,
            };
            push(spans, caps.get(0), kind);
        },
    },
    Rule {
        resume: Resume::AfterMatch,
        triggers: &["github_pat_"],
        pattern: concat!(wb!(), r"github_pat_[A-Za-z0-9_]{20,255}"),
        collect: |caps, spans| push(spans, caps.get(0), SecretKind::GithubFineGrained),
    },
    Rule {
        resume: Resume::AfterMatch,
        triggers: &["glpat-"],
        pattern: concat!(wb!(), r"glpat-[A-Za-z0-9_-]{20,}"),
        collect: |caps, spans| push(spans, caps.get(0), SecretKind::GitlabPat),
    },
    Rule {
        resume: Resume::AfterMatch,
        triggers: &["xoxa-", "xoxb-", "xoxp-", "xoxr-", "xoxs-", "xapp-"],
        pattern: concat!(
            wb!(),
            r"(?:xox(?P<t>[abprs])-[A-Za-z0-9-]{10,}|xapp-[0-9]+-[A-Za-z0-9-]{10,})"
        ),
        collect: |caps, spans| {
            let kind = match caps.name("t").map(|m| m.as_str()) {
                Some("b") => SecretKind::SlackBot,
                Some("p") => SecretKind::SlackUser,
                Some(_) | None => SecretKind::SlackToken,
            };
            push(spans, caps.get(0), kind);
        },
    },
    Rule {
        resume: Resume::AfterMatch,
        triggers: &["hooks.slack.com"],
        pattern: r"hooks\.slack\.com/(?:services|workflows|triggers)/(?P<v>[A-Za-z0-9/_-]+)",
        collect: |caps, spans| push(spans, caps.name("v"), SecretKind::SlackWebhook),
    },
    Rule {
        resume: Resume::AfterMatch,
        triggers: &["sk_live_", "rk_live_", "sk_test_", "rk_test_"],
        pattern: concat!(wb!(), r"(?P<t>[sr])k_(?P<env>live|test)_[A-Za-z0-9]{16,}"),
        collect: |caps, spans| {
            let kind = match (
                caps.name("t").map(|m| m.as_str()),
                caps.name("env").map(|m| m.as_str()),
            ) {
                (Some("s"), Some("live")) => SecretKind::StripeLive,
                (Some(_), Some("live")) => SecretKind::StripeRestricted,
                (Some(_) | None, Some(_) | None) => SecretKind::StripeTest,
            };
            push(spans, caps.get(0), kind);
        },
    },
    Rule {
        resume: Resume::AfterMatch,
        triggers: &["whsec_"],
        pattern: concat!(wb!(), r"whsec_[A-Za-z0-9+/=]{24,}"),
        collect: |caps, spans| push(spans, caps.get(0), SecretKind::StripeWebhookSecret),
    },
    Rule {
        resume: Resume::AfterMatch,
        triggers: &["AIza"],
        pattern: r"AIza[0-9A-Za-z_-]{30,}",
        collect: |caps, spans| push(spans, caps.get(0), SecretKind::GoogleApi),
    },
    Rule {
        resume: Resume::AfterMatch,
        triggers: &["npm_"],
        pattern: concat!(wb!(), r"npm_[A-Za-z0-9]{30,}"),
        collect: |caps, spans| push(spans, caps.get(0), SecretKind::NpmToken),
    },
    Rule {
        resume: Resume::AfterMatch,
        triggers: &["hf_"],
        pattern: concat!(wb!(), r"hf_[A-Za-z0-9]{30,}"),
        collect: |caps, spans| {
            if let Some(m) = caps.get(0)
                && m.as_str().bytes().any(|b| b.is_ascii_uppercase())
                && m.as_str().bytes().any(|b| b.is_ascii_lowercase())
            {
                push(spans, Some(m), SecretKind::Huggingface);
            }
        },
    },
    Rule {
        resume: Resume::AfterMatch,
        triggers: &["pypi-AgE"],
        pattern: r"pypi-AgE[A-Za-z0-9_-]{30,}",
        collect: |caps, spans| push(spans, caps.get(0), SecretKind::Pypi),
    },
    Rule {
        resume: Resume::AfterMatch,
        triggers: &["SG."],
        pattern: concat!(wb!(), r"SG\.[A-Za-z0-9_-]{16,}\.[A-Za-z0-9_-]{16,}"),
        collect: |caps, spans| push(spans, caps.get(0), SecretKind::Sendgrid),
    },
    Rule {
        resume: Resume::AfterMatch,
        triggers: &["dop_v1_", "doo_v1_", "dor_v1_"],
        pattern: concat!(wb!(), r"do[opr]_v1_[a-f0-9]{64}"),
        collect: |caps, spans| push(spans, caps.get(0), SecretKind::Digitalocean),
    },
    Rule {
        resume: Resume::AfterMatch,
        triggers: &["dckr_pat_"],
        pattern: concat!(wb!(), r"dckr_pat_[A-Za-z0-9_-]{20,}"),
        collect: |caps, spans| push(spans, caps.get(0), SecretKind::DockerPat),
    },
    Rule {
        resume: Resume::AfterMatch,
        // scheme://user:password@host keeps user and host; a user part alone
        // is hidden only when it looks like a token.
        triggers: &["://"],
        pattern: concat!(
            wb!(),
            r#"[A-Za-z][A-Za-z0-9+.-]{0,20}://(?P<user>[^\s:/?#@'"<>]*)(?::(?P<pass>[^\s?#@'"<>]*))?@"#
        ),
        collect: |caps, spans| {
            if let Some(pass) = caps.name("pass")
                && !is_exempt_value(pass.as_str())
                && !is_port_and_path(pass.as_str())
            {
                push(spans, Some(pass), SecretKind::UrlPassword);
            } else if let Some(user) = caps.name("user")
                && looks_random(user.as_str())
                && !is_exempt_value(user.as_str())
            {
                push(spans, Some(user), SecretKind::UrlCredential);
            }
        },
    },
    Rule {
        resume: Resume::AtValue,
        // --password=…, --db-password …, --token …, --api-key …
        triggers: &["--"],
        pattern: concat!(
            r"(?i)(?:^|[\s'\x22=])--(?P<name>(?:[a-z0-9]+-)*(?:password|passwd|pass|token|api-key|apikey|secret|secret-key|access-key|private-key|auth-token|access-token|refresh-token|client-secret))(?:=|[ \t]+)",
            value_re!()
        ),
        collect: |caps, spans| {
            if let Some((start, end, value)) = secret_value(caps, true)
                && !value.starts_with('-')
            {
                let password = caps
                    .name("name")
                    .is_some_and(|n| n.as_str().to_ascii_lowercase().contains("pass"));
                let kind = if password {
                    SecretKind::CliPassword
                } else {
                    SecretKind::CliSecret
                };
                spans.push(Span { start, end, kind });
            }
        },
    },
    Rule {
        resume: Resume::AfterMatch,
        // curl -u user:password, --user=user:password. `docker run -u
        // 1000:1000` is a uid:gid, not a password.
        triggers: &["-u", "--user"],
        pattern: r#"(?:^|[ \t])(?:-u|--user)(?:=|[ \t]+)?["']?[^\s:'"]+:(?P<v>[^\s'"]+)"#,
        collect: |caps, spans| {
            if let Some(v) = caps.name("v")
                && !is_exempt_value(v.as_str())
                && !v.as_str().bytes().all(|b| b.is_ascii_digit())
            {
                push(spans, Some(v), SecretKind::CliPassword);
            }
        },
    },
    Rule {
        resume: Resume::AfterMatch,
        // sshpass -p SECRET (or -pSECRET).
        triggers: &["sshpass"],
        pattern: r#"(?-u:\b)sshpass[ \t]+(?:-[a-oq-zA-Z][^\s]*[ \t]+)*-p[ \t]*(?:'(?P<sq>[^'\n]*)'|"(?P<dq>[^"\n]*)"|(?P<bare>[^\s'";&|]+))"#,
        collect: |caps, spans| {
            if let Some(v) = value_of(caps)
                && !is_exempt_value(v.as_str())
            {
                push(spans, Some(v), SecretKind::CliPassword);
            }
        },
    },
    Rule {
        resume: Resume::AfterMatch,
        // mysql -pSECRET: the password is glued to -p. Only for the MySQL
        // family, where -p means password (elsewhere it is a port or a flag).
        triggers: &["mysql", "mariadb"],
        pattern: concat!(
            wb!(),
            r#"(?:mysql|mysqldump|mysqladmin|mysqlimport|mysqlshow|mysqlcheck|mariadb|mariadb-dump)"#,
            wb!(),
            r#"[^\n;&|]*?[ \t]-p(?P<v>[^\s'";&|]+)"#
        ),
        collect: |caps, spans| {
            if let Some(v) = caps.name("v")
                && !is_exempt_value(v.as_str())
            {
                push(spans, Some(v), SecretKind::CliPassword);
            }
        },
    },
    Rule {
        resume: Resume::AtValue,
        triggers: &[
            "authorization",
            "api-key",
            "auth-token",
            "access-token",
            "private-token",
        ],
        pattern: concat!(
            r#"(?i)"#,
            wb!(),
            r#"(?:proxy-authorization|authorization|x-api-key|api-key|x-auth-token|x-access-token|x-goog-api-key|private-token)["']?[ \t]*:[ \t]*["']?(?:(?:bearer|basic|token|bot|digest|negotiate|apikey)[ \t]+)?(?P<v>[^\s'"=][^\s'"]*)"#
        ),
        collect: |caps, spans| {
            if let Some(v) = caps.name("v")
                && !is_exempt_value(v.as_str())
            {
                push(spans, Some(v), SecretKind::AuthHeader);
            }
        },
    },
    Rule {
        resume: Resume::AtValue,
        triggers: &["cookie"],
        pattern: concat!(
            r#"(?i)"#,
            wb!(),
            r#"(?:set-)?cookie["']?[ \t]*:[ \t]*["']?(?P<v>[^'"\r\n]+)"#
        ),
        collect: |caps, spans| {
            if let Some(v) = caps.name("v")
                && !is_exempt_value(v.as_str())
            {
                push(spans, Some(v), SecretKind::Cookie);
            }
        },
    },
    Rule {
        resume: Resume::AfterMatch,
        // `aws configure set aws_secret_access_key X` has no `=`.
        triggers: &["secret"],
        pattern: r#"(?i)aws_?secret_?(?:access_?)?key["']?[ \t]*(?:[:=]|[ \t])[ \t]*["']?(?P<v>[A-Za-z0-9/+]{40})(?-u:\b)"#,
        collect: |caps, spans| push(spans, caps.name("v"), SecretKind::AwsSecretKey),
    },
    Rule {
        resume: Resume::AtValue,
        // NAME=value, export NAME=value, "name": "value", name: value,
        // name := value, key => value. Only names holding a trigger word
        // match, so the ordinary `"key": value` pairs of JSON tool output
        // never reach the capture engine.
        triggers: &[
            "pass",
            "pwd",
            "token",
            "secret",
            "key",
            "credential",
            "creds",
            "auth",
            "cookie",
            "session",
            "signature",
            "sig",
            "salt",
            "bearer",
        ],
        pattern: concat!(
            r#"(?:^|[^A-Za-z0-9_.$-])["']?(?P<name>(?:[A-Za-z_][A-Za-z0-9_.-]*?)?(?i:pass|pwd|token|secret|key|cred|auth|cookie|session|sig|salt|bearer)[A-Za-z0-9_.-]*)["']?[ \t]*(?P<sep>:=|=>|=|:)[ \t]*(?:(?i:bearer|basic|token)[ \t]+)?"#,
            value_re!()
        ),
        collect: |caps, spans| {
            let Some(name) = caps.name("name") else {
                return;
            };
            let class = classify_key(name.as_str());
            if class == KeyClass::Plain {
                return;
            }
            let shell_like = caps.name("sep").is_some_and(|s| s.as_str() == "=");
            let Some((start, end, value)) = secret_value(caps, shell_like) else {
                return;
            };
            let hide = match class {
                KeyClass::Secret => true,
                KeyClass::MaybeSecret => looks_random(value) && !is_uuid(value),
                KeyClass::Plain => false,
            };
            if hide {
                spans.push(Span {
                    start,
                    end,
                    kind: SecretKind::GenericAssignment,
                });
            }
        },
    },
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rules_compile() {
        let rules = Rules::compile(RULE_SPECS);
        assert!(rules.is_ok(), "{:?}", rules.err().map(|e| e.to_string()));
        assert!(prepare());
    }

    #[test]
    fn key_words_split_on_case_and_separators() {
        assert_eq!(split_words("apiKey"), ["api", "key"]);
        assert_eq!(split_words("X-Api-Key"), ["x", "api", "key"]);
        assert_eq!(
            split_words("AWS_SECRET_ACCESS_KEY"),
            ["aws", "secret", "access", "key"]
        );
        assert_eq!(split_words("APIKey"), ["api", "key"]);
        assert_eq!(split_words("authToken2"), ["auth", "token2"]);
    }

    #[test]
    fn key_classes() {
        for secret in [
            "password",
            "db_password",
            "DATABASE_PASSWORD",
            "passwd",
            "token",
            "githubToken",
            "secret",
            "client_secret",
            "api_key",
            "apikey",
            "apiKey",
            "x-api-key",
            "access_key",
            "private_key",
            "authorization",
            "Cookie",
            "credentials",
            "aws_secret_access_key",
        ] {
            assert_eq!(classify_key(secret), KeyClass::Secret, "{secret}");
        }
        for maybe in ["key", "sort_key", "session", "auth", "signature"] {
            assert_eq!(classify_key(maybe), KeyClass::MaybeSecret, "{maybe}");
        }
        for plain in [
            "author",
            "tokenizer",
            "keyboard",
            "monkey",
            "secretary",
            "public_key",
            "max_tokens",
            "token_count",
            "password_file",
            "session_id",
            "keychain",
            "passage",
            "",
        ] {
            assert_eq!(classify_key(plain), KeyClass::Plain, "{plain}");
        }
    }

    #[test]
    fn overlapping_findings_merge_to_the_most_specific_kind() {
        let merged = merge(vec![
            Span {
                start: 5,
                end: 20,
                kind: SecretKind::AuthHeader,
            },
            Span {
                start: 5,
                end: 18,
                kind: SecretKind::Jwt,
            },
            Span {
                start: 30,
                end: 31,
                kind: SecretKind::Cookie,
            },
        ]);
        assert_eq!(
            merged,
            vec![
                Span {
                    start: 5,
                    end: 20,
                    kind: SecretKind::Jwt
                },
                Span {
                    start: 30,
                    end: 31,
                    kind: SecretKind::Cookie
                }
            ]
        );
    }

    #[test]
    fn assignment_forms() {
        let g = "[REDACTED:generic_assignment]";
        for (input, expected) in [
            ("token=hunter2", format!("token={g}")),
            ("password: hunter2", format!("password: {g}")),
            (r#""secret": "abc""#, format!(r#""secret": "{g}""#)),
            ("key=9f8e7d6c5b4a39281706f5e4d3c2b1a0", format!("key={g}")),
            ("key=name", "key=name".to_owned()),
            (
                "export GITHUB_TOKEN=abc x",
                format!("export GITHUB_TOKEN={g} x"),
            ),
            (r#"apiKey := "abc""#, format!(r#"apiKey := "{g}""#)),
            ("{:password => 'abc'}", format!("{{:password => '{g}'}}")),
            ("a?access_token=abc&b=1", format!("a?access_token={g}&b=1")),
            ("PASS=abc;make", format!("PASS={g};make")),
            (
                "path: /srv/app, session: 42",
                "path: /srv/app, session: 42".to_owned(),
            ),
        ] {
            assert_eq!(redact_text(input), expected, "{input}");
        }
    }

    #[test]
    fn text_without_triggers_is_borrowed() {
        assert!(matches!(
            redact_text("cargo build --release"),
            Cow::Borrowed(_)
        ));
    }

    #[test]
    fn exempt_values() {
        for v in [
            "",
            "$DB_PASSWORD",
            "${TOKEN}",
            "$(cat /run/secret)",
            "{{ api_key }}",
            "/run/secrets/db",
            "~/.ssh/id_rsa",
            "[REDACTED:jwt]",
            "null",
        ] {
            assert!(is_exempt_value(v), "{v}");
        }
        assert!(!is_exempt_value("hunter2"));
        assert!(!is_exempt_value("/x"));
    }

    #[test]
    fn randomness() {
        assert!(looks_random("1584d8c4fa2815d2802827283e0ad841"));
        assert!(looks_random("aB3dE5gH7jK9mN1p"));
        assert!(!looks_random("production-database"));
        assert!(!looks_random("short1"));
        assert!(!looks_random("aaaaaaaaaaaaaaaa11"));
    }
}
