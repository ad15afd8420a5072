//! What a redacted value was, as shown in `[REDACTED:<kind>]`, and the counts
//! of what was redacted.

use std::collections::BTreeMap;

use serde::{Serialize, Serializer};

use super::provider::{self, RuleId};

/// Prefix of every replacement.
pub const MARKER_PREFIX: &str = "[REDACTED:";

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

/// What a redacted value was.
///
/// Declared from most to least specific: when findings overlap, the merged
/// span carries the first kind in this order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum SecretKind {
    /// A provider's key format (`github-pat` shows as `github_pat`).
    Provider(RuleId),
    PrivateKey,
    Jwt,
    UrlPassword,
    UrlCredential,
    CliPassword,
    CliSecret,
    AuthHeader,
    Cookie,
    NetrcPassword,
    GenericAssignment,
    SecretField,
    /// A value recognised as a secret elsewhere in the same request, found
    /// again where nothing around it says so.
    Repeated,
    /// The redaction rules could not be compiled, so the whole text was
    /// withheld rather than sent unscanned.
    Unscanned,
}

/// Labels of the kinds that are not provider rules.
const STRUCTURAL: &[(SecretKind, &str)] = &[
    (SecretKind::PrivateKey, "private_key"),
    (SecretKind::Jwt, "jwt"),
    (SecretKind::UrlPassword, "url_password"),
    (SecretKind::UrlCredential, "url_credential"),
    (SecretKind::CliPassword, "cli_password"),
    (SecretKind::CliSecret, "cli_secret"),
    (SecretKind::AuthHeader, "auth_header"),
    (SecretKind::Cookie, "cookie"),
    (SecretKind::NetrcPassword, "netrc_password"),
    (SecretKind::GenericAssignment, "generic_assignment"),
    (SecretKind::SecretField, "secret_field"),
    (SecretKind::Repeated, "repeated"),
    (SecretKind::Unscanned, "unscanned"),
];

impl SecretKind {
    pub fn as_str(self) -> &'static str {
        match self {
            SecretKind::Provider(id) => provider::label(id),
            other => STRUCTURAL
                .iter()
                .find(|(k, _)| *k == other)
                .map_or("secret", |(_, label)| label),
        }
    }

    /// The kind whose label is `label`, if any.
    pub fn from_label(label: &str) -> Option<SecretKind> {
        STRUCTURAL
            .iter()
            .find(|(_, l)| *l == label)
            .map(|(k, _)| *k)
            .or_else(|| provider::by_label(label).map(SecretKind::Provider))
    }

    pub fn marker(self) -> String {
        let mut out = String::new();
        self.push_marker(&mut out);
        out
    }

    /// Appends [`SecretKind::marker`] to `out` without a string of its own.
    pub fn push_marker(self, out: &mut String) {
        out.push_str(MARKER_PREFIX);
        out.push_str(self.as_str());
        out.push(']');
    }

    #[cfg(test)]
    pub(crate) fn structural_labels() -> impl Iterator<Item = &'static str> {
        STRUCTURAL.iter().map(|(_, l)| *l)
    }
}

impl std::fmt::Display for SecretKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl Serialize for SecretKind {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

/// Whether `text` is exactly one marker vouch writes. A lookalike with an
/// unknown kind, or with anything after it, is not: it is scanned like any
/// other text.
pub fn is_marker(text: &str) -> bool {
    text.strip_prefix(MARKER_PREFIX)
        .and_then(|r| r.strip_suffix(']'))
        .is_some_and(|label| SecretKind::from_label(label).is_some())
}

/// The length of the marker starting at byte `at` of `hay`, if one does.
pub fn marker_at(hay: &[u8], at: usize) -> Option<usize> {
    let rest = hay.get(at..)?;
    let body = rest.strip_prefix(MARKER_PREFIX.as_bytes())?;
    let close = body.iter().take(80).position(|b| *b == b']')?;
    let label = std::str::from_utf8(body.get(..close)?).ok()?;
    SecretKind::from_label(label).map(|_| MARKER_PREFIX.len() + close + 1)
}

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

    /// The count for the kind labelled `label` (`"github_pat"`).
    pub fn count_label(&self, label: &str) -> u32 {
        SecretKind::from_label(label).map_or(0, |k| self.count(k))
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
