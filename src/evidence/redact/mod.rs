//! Redaction: secrets become `[REDACTED:<kind>]` before anything is estimated,
//! sent to the reviewer, cached, stored or logged.
//!
//! Three things find a secret (see `docs/redaction.md` for what each
//! recognises and what none can):
//!
//! - **Provider formats** ([`provider`]): the gitleaks default rule set,
//!   vendored as data, plus vouch's own rules in the same format.
//! - **Structure** ([`structural`], [`cli`]): the value of a secret-named
//!   key, assignment or header, a URL password, a `.netrc` entry, a PEM
//!   block, a JWT, the secret argument of a command-line option.
//! - **Repetition**: a value found by either of those is hidden wherever
//!   else it appears in the same request, even bare.
//!
//! Every text is scanned as written and in its decoded forms ([`views`]:
//! URL escapes, JSON string escapes, shell quoting) by one scanner
//! ([`scan`]): a keyword prefilter, then only the rules it enables, in
//! bounded windows, so the work is linear in the text. The findings are
//! merged and applied once; a byte any rule flags is never shown.
//!
//! Structured input (`input`, a tool call's arguments) is walked: the value
//! under a secret-named key, or paired with a secret name in a HAR-style
//! `{"name": …, "value": …}` object, is replaced whole, whatever it looks
//! like. Every other string is scanned as text, and a `command` string is
//! also read by the shell parser ([`crate::shell::analyze`]): the request's
//! own command through the analysis the engine already made of it
//! ([`ShellReading`]), every other command text (an `input.command` that
//! differs from it, a tool call's command in the transcript) through one
//! analysis of its own, never two of the same text.

mod argv;
mod cli;
mod keys;
mod kind;
mod provider;
mod repeats;
mod scan;
mod stores;
mod structural;
mod values;
mod views;

use std::borrow::Cow;

use serde_json::Value;

pub use keys::{KeyClass, classify_key};
pub use kind::{MARKER_PREFIX, RedactionReport, SecretKind};
pub use provider::RuleId;
pub use scan::{ScanError, provider_rules};
pub use values::looks_random;

use crate::request::{Request, Surface, TranscriptEntry};
use kind::Span;
use repeats::Repeats;
use scan::{SCANNER, Scanner};
use structural::Which;
use views::Views;

/// A value shorter than this is not searched for again elsewhere: short
/// strings (`admin`, `1234`) occur everywhere by chance.
pub const MIN_REPEAT_BYTES: usize = 6;

/// How much of a remembered value must match for a hit; a hit is then
/// compared against the whole value.
pub const REPEAT_PREFIX: usize = 128;

/// Longest command the shell parser reads for secret options; longer text
/// is still read by the text scanner.
pub const MAX_SHELL_PARSE_BYTES: usize = crate::request::MAX_COMMAND_BYTES;

/// Loads and checks the redaction rules now rather than on first use.
/// Returns whether they loaded; if they did not, every text is withheld whole
/// (see [`SecretKind::Unscanned`]). Each provider rule's automaton is still
/// built the first time its keyword is seen.
pub fn prepare() -> bool {
    SCANNER.is_ok()
}

/// Why the rules did not compile, if they did not.
pub fn rule_error() -> Option<ScanError> {
    scan::ready().err()
}

/// The gitleaks rules vouch replaces with its own, and why.
pub fn replaced_rules() -> &'static [(&'static str, &'static str)] {
    scan::REPLACED
}

/// Whether `name` is a command whose arguments can carry a secret by the
/// shell command table (`mysql -pX`, `htpasswd -b FILE USER X`): the
/// audit's command templates redact such commands in full rather than
/// template them as written.
pub fn is_cli_secret_command(name: &str) -> bool {
    cli::command_names().any(|n| n == name)
}

/// Redacts secret-shaped text. Borrows when nothing was found.
pub fn redact_text(s: &str) -> Cow<'_, str> {
    redact_text_with(s, &mut RedactionReport::default())
}

/// [`redact_text`], counting what was redacted into `report`.
pub fn redact_text_with<'a>(s: &'a str, report: &mut RedactionReport) -> Cow<'a, str> {
    let mut pass = Pass::new();
    pass.collect_text(s, false);
    pass.seal();
    pass.apply_text(s, report)
}

/// Redacts a JSON value: values under secret-named keys are replaced whole,
/// every other string is scanned as text.
pub fn redact_value(v: &Value) -> Value {
    redact_value_with(v, &mut RedactionReport::default())
}

/// [`redact_value`], counting what was redacted into `report`.
pub fn redact_value_with(v: &Value, report: &mut RedactionReport) -> Value {
    let mut out = v.clone();
    let mut pass = Pass::new();
    walk_value(&mut out, None, &mut pass, Mode::Collect, report);
    pass.seal();
    walk_value(&mut out, None, &mut pass, Mode::Apply, report);
    out
}

/// A copy of `r` with every free-text field redacted: the action fields,
/// `agent`, `source`, `tool`, `reason`, every transcript entry and tool
/// result. Identifiers (`id`, `session_id`, `turn_id`, `tool_call_id`) are
/// kept as they are so tool calls still link to their results; they never
/// reach the model.
pub fn redact_request(r: &Request) -> Request {
    redact_request_with_report(r).0
}

/// [`redact_request`] plus the counts of what was redacted.
pub fn redact_request_with_report(r: &Request) -> (Request, RedactionReport) {
    redact_request_read(r, ShellReading::default())
}

/// How redaction reads command lines with the shell analysis.
#[derive(Clone, Copy)]
pub struct ShellReading<'a> {
    /// The request's command and the one analysis the engine made of it
    /// (`hard_deny::analyze_command`): read from there, not analysed again.
    pub analysed: Option<(&'a str, &'a crate::shell::Analysis)>,
    /// The budgets for any other command text (the configured
    /// `[analysis]`).
    pub limits: crate::shell::Limits,
}

impl Default for ShellReading<'_> {
    fn default() -> Self {
        ShellReading {
            analysed: None,
            limits: crate::shell::Limits::DEFAULT,
        }
    }
}

/// [`redact_request_with_report`], reading the request's command through
/// `reading`.
///
/// Another text that is a command (`input.command`, a transcript tool
/// call's) is the same reading when it is the same text, and gets one
/// analysis of its own otherwise: it is not what the hard denies judged
/// (an adapter may send an `input.command` that differs from `command`),
/// so what it carries must be found in it. Those analyses use the
/// configured budgets, in no home or directory: only values written in the
/// text (or expanded from it) are looked for.
pub fn redact_request_read(r: &Request, reading: ShellReading<'_>) -> (Request, RedactionReport) {
    let mut report = RedactionReport::default();
    let mut out = r.clone();
    let mut pass = Pass::new();
    pass.limits = reading.limits;
    if let Some((command, analysis)) = reading.analysed {
        pass.read
            .push((command.to_owned(), secrets_of_analysis(analysis)));
    }
    walk_request(&mut out, &mut pass, Mode::Collect, &mut report);
    pass.seal();
    walk_request(&mut out, &mut pass, Mode::Apply, &mut report);
    (out, report)
}

/// The two walks over a request: the first finds every secret (so a value
/// found in one field is known in all), the second applies them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    Collect,
    Apply,
}

fn walk_request(r: &mut Request, pass: &mut Pass, mode: Mode, report: &mut RedactionReport) {
    let bash = r.surface == Surface::Bash;
    let mut text = |s: &mut Option<String>, shell: bool, pass: &mut Pass| {
        if let Some(s) = s.as_mut() {
            pass.text(s, shell, mode, report);
        }
    };
    text(&mut r.command, bash, pass);
    for field in [
        &mut r.reason,
        &mut r.path,
        &mut r.resolved_path,
        &mut r.destination,
        &mut r.cwd,
        &mut r.home,
        &mut r.agent,
        &mut r.source,
        &mut r.tool,
    ] {
        text(field, false, pass);
    }
    if let Some(input) = r.input.as_mut() {
        walk_value(input, None, pass, mode, report);
    }
    for entry in &mut r.transcript {
        match entry {
            TranscriptEntry::User { text }
            | TranscriptEntry::Assistant { text }
            | TranscriptEntry::Summary { text }
            | TranscriptEntry::ToolResult { text, .. } => pass.text(text, false, mode, report),
            TranscriptEntry::ToolCall {
                tool_name, input, ..
            } => {
                if let Some(name) = tool_name.as_mut() {
                    pass.text(name, false, mode, report);
                }
                if let Some(input) = input.as_mut() {
                    walk_value(input, None, pass, mode, report);
                }
            }
        }
    }
}

/// Keys whose string value names the file a tool writes or edits.
const FILE_KEYS: &[&str] = &[
    "file_path",
    "filePath",
    "path",
    "filename",
    "file",
    "target_file",
    "absolute_path",
];

/// Credential files whose lines have a format of their own, read in the
/// text written to them even where nothing in that text names the format.
/// The formats of the others are recognised in any text (`.netrc`'s
/// `machine … password`, `.git-credentials`' URLs, `.my.cnf`'s
/// `password=`, `~/.docker/config.json`'s `"auth"`). Each is a credential
/// file by [`crate::credentials`] (a unit test checks).
pub(crate) const FILE_FORMATS: &[(&str, Which)] = &[(".pgpass", Which::Pgpass)];

/// The formats the file an object names (`{"file_path": "~/.pgpass",
/// "content": …}`) is written in.
fn file_formats(map: &serde_json::Map<String, Value>) -> Vec<Which> {
    FILE_KEYS
        .iter()
        .filter_map(|k| map.get(*k).and_then(Value::as_str))
        .flat_map(|path| {
            let name = path.rsplit(['/', '\\']).next().unwrap_or(path);
            FILE_FORMATS
                .iter()
                .filter(move |(file, _)| name == *file)
                .map(|(_, which)| *which)
        })
        .collect()
}

/// Keys whose string value is a shell command.
const COMMAND_KEYS: &[&str] = &["command", "cmd", "script", "commandLine", "command_line"];

fn walk_value(
    v: &mut Value,
    key: Option<&str>,
    pass: &mut Pass,
    mode: Mode,
    report: &mut RedactionReport,
) {
    match v {
        Value::String(s) => {
            let shell = key.is_some_and(|k| COMMAND_KEYS.contains(&k));
            pass.text(s, shell, mode, report);
        }
        Value::Array(items) => {
            for item in items {
                walk_value(item, None, pass, mode, report);
            }
        }
        Value::Object(map) => {
            let paired = paired_secret_value(map);
            // A nested object (a MultiEdit's `edits`) is written to the
            // file its parent names.
            let formats = match file_formats(map) {
                found if found.is_empty() => pass.forced.clone(),
                found => found,
            };
            let outer = std::mem::replace(&mut pass.forced, formats);
            for (k, value) in map.iter_mut() {
                let hide = match classify_key(k) {
                    KeyClass::Secret => holds_secret(value),
                    KeyClass::MaybeSecret => value.as_str().is_some_and(|s| {
                        values::looks_random(s.as_bytes()) && !values::is_exempt(s.as_bytes())
                    }),
                    KeyClass::Plain => false,
                } || (paired && k == "value" && holds_secret(value));
                if hide {
                    pass.secret_value(value, mode, report);
                } else {
                    walk_value(value, Some(k), pass, mode, report);
                }
            }
            pass.forced = outer;
        }
        Value::Null | Value::Bool(_) | Value::Number(_) => {}
    }
}

/// `{"name": "Authorization", "value": "…"}` (HAR headers, cookies, query
/// strings, Kubernetes `env`): the pair's name says the value is secret.
fn paired_secret_value(map: &serde_json::Map<String, Value>) -> bool {
    map.contains_key("value")
        && ["name", "key", "header"].iter().any(|k| {
            map.get(*k)
                .and_then(Value::as_str)
                .is_some_and(|name| classify_key(name) == KeyClass::Secret)
        })
}

/// Whether a value under a secret-named key is worth hiding: everything but
/// `null`, booleans and the exempt strings (references, paths, markers).
fn holds_secret(v: &Value) -> bool {
    match v {
        Value::Null | Value::Bool(_) => false,
        Value::String(s) => !values::is_exempt(s.as_bytes()),
        Value::Number(_) => true,
        Value::Array(items) => !items.is_empty(),
        Value::Object(map) => !map.is_empty(),
    }
}

/// The state shared by the two walks: the findings of each text, in walk
/// order, and the secret values to find again.
struct Pass {
    scanner: Option<&'static Scanner>,
    found: Vec<Vec<Span>>,
    /// Each text's decoded views, kept from the first walk for the repeat
    /// search of the second; `None` when the text has none (it is then
    /// searched as it is).
    views: Vec<Option<Views>>,
    next: usize,
    repeats: Repeats,
    /// Command texts already read by the shell analysis, with the secret
    /// values found in each: a text is analysed at most once per pass.
    read: Vec<(String, ShellSecrets)>,
    /// Budgets for the analyses this pass makes.
    limits: crate::shell::Limits,
    /// Structural rules run on the texts being walked whatever words they
    /// hold: the formats of the file they are written to.
    forced: Vec<Which>,
}

/// Secret values the shell analysis found in a command, with their kinds.
type ShellSecrets = Vec<(Vec<u8>, SecretKind)>;

impl Pass {
    fn new() -> Pass {
        Pass {
            scanner: SCANNER.as_ref().ok(),
            found: Vec::new(),
            views: Vec::new(),
            next: 0,
            repeats: Repeats::new(),
            read: Vec::new(),
            limits: crate::shell::Limits::DEFAULT,
            forced: Vec::new(),
        }
    }

    fn text(&mut self, s: &mut String, shell: bool, mode: Mode, report: &mut RedactionReport) {
        match mode {
            Mode::Collect => self.collect_text(s, shell),
            Mode::Apply => {
                if let Cow::Owned(redacted) = self.apply_text(s, report) {
                    *s = redacted;
                }
            }
        }
    }

    fn collect_text(&mut self, s: &str, shell: bool) {
        let Some(scanner) = self.scanner else {
            self.found.push(Vec::new());
            self.views.push(None);
            return;
        };
        let views = Views::of(s.as_bytes());
        let found = scanner.scan_views_forced(&views, &self.forced);
        self.views.push((views.views.len() > 1).then_some(views));
        for f in &found {
            let original = s.as_bytes().get(f.span.start..f.span.end);
            if let Some(seen) = &f.seen {
                self.remember(seen, f.span.kind);
            }
            if let Some(original) = original
                && f.seen.as_deref() != Some(original)
            {
                self.remember(original, f.span.kind);
            }
        }
        if shell {
            let at = match self.read.iter().position(|(text, _)| text == s) {
                Some(at) => Some(at),
                None if s.len() <= MAX_SHELL_PARSE_BYTES => {
                    self.read
                        .push((s.to_owned(), shell_secrets(s, &self.limits)));
                    self.read.len().checked_sub(1)
                }
                None => None,
            };
            let secrets = at.and_then(|at| self.read.get(at)).map(|(_, found)| found);
            for (value, kind) in secrets.cloned().unwrap_or_default() {
                self.repeats.remember(&value, kind);
            }
        }
        self.found.push(found.into_iter().map(|f| f.span).collect());
    }

    fn remember(&mut self, value: &[u8], kind: SecretKind) {
        self.repeats.remember(value, kind);
    }

    fn secret_value(&mut self, v: &mut Value, mode: Mode, report: &mut RedactionReport) {
        match mode {
            Mode::Collect => {
                if let Value::String(s) = v {
                    let bytes = s.as_bytes().to_vec();
                    self.remember(&bytes, SecretKind::SecretField);
                }
            }
            Mode::Apply => {
                report.add(SecretKind::SecretField);
                *v = Value::String(SecretKind::SecretField.marker());
            }
        }
    }

    /// Ends the first walk.
    fn seal(&mut self) {
        self.next = 0;
    }

    fn apply_text<'a>(&mut self, s: &'a str, report: &mut RedactionReport) -> Cow<'a, str> {
        let index = self.next;
        self.next += 1;
        if self.scanner.is_none() {
            // INVARIANT: text is never passed on unscanned.
            if s.is_empty() {
                return Cow::Borrowed(s);
            }
            report.add(SecretKind::Unscanned);
            return Cow::Owned(SecretKind::Unscanned.marker());
        }
        let mut spans = self
            .found
            .get_mut(index)
            .map(std::mem::take)
            .unwrap_or_default();
        let views = self.views.get_mut(index).and_then(Option::take);
        self.find_repeats(s, views.as_ref(), &mut spans);
        apply(s, spans, report)
    }

    /// Spans where a remembered secret value occurs again: in `s`, or in
    /// every one of its decoded `views` when it has some.
    fn find_repeats(&self, s: &str, views: Option<&Views>, spans: &mut Vec<Span>) {
        let Some(views) = views else {
            self.repeats.find(s.as_bytes(), 0, s.len(), |h| {
                spans.push(Span::new(h.start, h.end, h.kind));
            });
            return;
        };
        for (index, view) in views.views.iter().enumerate() {
            let whole = [(0, view.bytes.len())];
            for &(from, to) in views.regions(index).unwrap_or(&whole) {
                self.repeats.find(&view.bytes, from, to, |h| {
                    let (start, end) = views.to_original(index, h.start, h.end);
                    spans.push(Span::new(start, end, h.kind));
                });
            }
        }
    }
}

/// Secret values the shell analysis of `command` finds: secret option
/// arguments of every command that would run (through wrappers, `bash -c`,
/// `eval`, after expansion) and secret-named variables placed in a
/// command's environment. Bare `NAME=value` statements are the text
/// scanner's (structural assignments).
fn shell_secrets(command: &str, limits: &crate::shell::Limits) -> ShellSecrets {
    // Nothing here depends on the real home or cwd: only values as written
    // (or expanded from the command's own text) are looked for.
    let env = crate::shell::ShellEnv {
        cwd: None,
        home: "/",
        vars: &[],
    };
    secrets_of_analysis(&crate::shell::analyze(command, &env, limits))
}

/// [`shell_secrets`] of a command already analysed (in whatever home and
/// directory: a value expanded from them is looked for in the text like
/// any other and simply not found there).
fn secrets_of_analysis(analysis: &crate::shell::Analysis) -> ShellSecrets {
    let mut out = Vec::new();
    for found_in in &analysis.commands {
        let words: Vec<&[u8]> = found_in
            .argv
            .iter()
            .map(|a| a.as_known().map_or(&b"\0"[..], str::as_bytes))
            .collect();
        for found in cli::secrets_in(&words) {
            let value = found_in
                .argv
                .get(found.word)
                .and_then(crate::shell::Arg::as_known)
                .and_then(|l| l.as_bytes().get(found.from..));
            if let Some(value) = value {
                out.push((value.to_vec(), found.kind));
            }
        }
        // `echo V | docker login --password-stdin`: the text piped or
        // here-stringed into a password reader is the password.
        if let Some(part) = stores::reads_secret_stdin(&words)
            && let Some(text) = found_in.stdin_text.as_ref().and_then(|t| t.as_known())
        {
            for secret in stores::stdin_secrets(text.as_bytes(), part) {
                if !values::is_exempt(secret) {
                    out.push((secret.to_vec(), SecretKind::CliPassword));
                }
            }
        }
        for (name, value) in &found_in.assignments {
            if classify_key(name) == KeyClass::Secret
                && let Some(value) = value.as_known()
            {
                out.push((value.as_bytes().to_vec(), SecretKind::GenericAssignment));
            }
        }
    }
    out
}

/// Replaces the merged spans of `s` with markers.
fn apply<'a>(s: &'a str, mut spans: Vec<Span>, report: &mut RedactionReport) -> Cow<'a, str> {
    if spans.is_empty() {
        return Cow::Borrowed(s);
    }
    for span in &mut spans {
        span.start = s.floor_char_boundary(span.start.min(s.len()));
        span.end = s.ceil_char_boundary(span.end.min(s.len()));
    }
    drop_inside_markers(s, &mut spans);
    let spans = merge(spans);
    if spans.is_empty() {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len());
    let mut at = 0;
    for span in &spans {
        out.push_str(s.get(at..span.start).unwrap_or_default());
        span.kind.push_marker(&mut out);
        report.add(span.kind);
        at = span.end;
    }
    out.push_str(s.get(at..).unwrap_or_default());
    Cow::Owned(out)
}

/// Removes findings that start inside an earlier marker (its own `:` must
/// not read as `user:password`) and findings that are exactly a marker,
/// which keeps redaction idempotent.
fn drop_inside_markers(s: &str, spans: &mut Vec<Span>) {
    if !s.contains(MARKER_PREFIX) {
        return;
    }
    let markers: Vec<(usize, usize)> =
        memchr::memmem::find_iter(s.as_bytes(), MARKER_PREFIX.as_bytes())
            .filter_map(|start| {
                kind::marker_at(s.as_bytes(), start).map(|len| (start, start + len))
            })
            .collect();
    spans.retain(|span| {
        !markers.iter().any(|&(start, end)| {
            (span.start > start && span.start < end) || (span.start == start && span.end <= end)
        })
    });
}

/// Merges overlapping spans; the merged span keeps the most specific kind.
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

#[cfg(test)]
mod keeps_actions;
#[cfg(test)]
mod tests;
