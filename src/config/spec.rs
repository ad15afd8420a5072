//! The one table of configuration keys: for every leaf key, its type, its
//! legal range and the direction in which a project overlay may move it.
//!
//! Keeping type, range and tighten direction side by side means a new key
//! cannot be added without deciding how a project may change it: the tests
//! check that this table and `config/default.toml` name exactly the same keys.

/// What values a key accepts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// An integer in `min..=max`.
    Int {
        min: i64,
        max: i64,
    },
    Bool,
    /// One of the listed strings. The order is the one `Tighten::Lower` and
    /// `Tighten::Higher` compare by (its index).
    Enum(&'static [&'static str]),
    /// A string with a shape check.
    Text(TextShape),
    /// `routing.rules`: an array of `{pattern, policy, field, note}` tables.
    Rules,
    /// `routing.surfaces`: a table of surface name → routing policy.
    Surfaces,
    /// An array of paths (absolute, `~/…` or relative to the request's
    /// working directory), at most [`MAX_PATHS`] of at most 4,096 bytes.
    Paths,
    /// A price in USD per million tokens: a number (integer or decimal) in
    /// 0–[`MAX_PRICE`]. Read only by `vouch eval`'s cost estimate.
    Price,
}

/// Entries a [`Kind::Paths`] key may hold.
pub const MAX_PATHS: usize = 256;

/// Shape checks for string keys.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TextShape {
    /// `http://` or `https://` URL without whitespace.
    Url,
    /// A model id: 1–256 printable characters.
    ModelId,
    /// An environment variable name, or empty for "send no key".
    EnvVarName,
    /// `host:port` or `unix:/absolute/path`.
    Listen,
}

/// How a project overlay may change a key (design §3).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tighten {
    /// Only trusted layers may set it: any presence in a project overlay is
    /// an error, even with the trusted value, so a project file means the
    /// same thing on every machine.
    TrustedOnly,
    /// A lower (or equal) value is stricter.
    Lower,
    /// A higher (or equal) value is stricter.
    Higher,
    /// `false` is stricter: a project may turn it off, never on.
    DisableOnly,
    /// Rules may be appended, never removed, and never with policy `pass`;
    /// the router takes the stricter of the trusted and project answers.
    AppendRules,
    /// Each entry may only name a policy at least as strict as what the
    /// trusted configuration gives that surface; never `pass`.
    StricterSurfaces,
}

/// One leaf key.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KeySpec {
    pub key: &'static str,
    pub kind: Kind,
    pub tighten: Tighten,
}

/// Routing policies, loosest first: `pass` < `ai` < `human` < `never`.
pub const ROUTE_POLICIES: &[&str] = RoutePolicy::NAMES;
/// Outcomes, loosest first: `allow` < `defer` < `deny`.
pub const OUTCOMES: &[&str] = Outcome::NAMES;
/// Fail-closed outcomes, loosest first.
pub const FAIL_CLOSED: &[&str] = FailClosed::NAMES;
/// Rule fields.
pub const RULE_FIELDS: &[&str] = RuleField::NAMES;
/// Risks the model may be allowed to auto-allow: all but `critical`, which
/// is never auto-allowed.
pub const AUTO_ALLOW_RISKS: &[&str] = match RiskLevel::NAMES.split_last() {
    Some((_critical, rest)) => rest,
    None => &[],
};

const fn int(min: i64, max: i64) -> Kind {
    Kind::Int { min, max }
}

/// Largest price a `Kind::Price` key accepts, in USD per million tokens.
pub const MAX_PRICE: f64 = 10_000.0;

const fn spec(key: &'static str, kind: Kind, tighten: Tighten) -> KeySpec {
    KeySpec { key, kind, tighten }
}

use super::{Estimator, FailClosed, Provider, RoutePolicy, RuleField, StoreBackend, WithoutModel};
use crate::names::{Outcome, RiskLevel};
use Tighten::{AppendRules, DisableOnly, Higher, Lower, StricterSurfaces, TrustedOnly};

/// Every leaf key, in `config/default.toml` order.
///
/// Direction notes that are not obvious:
/// - `budget.estimator`: `utf8` counts every byte as a token, so less
///   evidence fits than with `o200k`; `utf8` (index 0) is the stricter one.
/// - `breaker.window_size`: the breaker opens when `window_denials` of the
///   last `window_size` reviews were denials; a longer window remembers more
///   denials, so it trips sooner: higher is stricter.
/// - `cache.*`, `grants.ttl_ms`, `overrides.*`: a shorter lifetime or a
///   smaller cache reuses a past verdict or authorization less; lower is
///   stricter.
/// - `decision.max_auto_allow_risk`: lower lets the model auto-allow less.
/// - `reviewer.without_model`: `human` (index 1) asks a person where
///   `abstain` leaves the harness's own rules to decide; higher is stricter.
pub const KEYS: &[KeySpec] = &[
    spec(
        "reviewer.provider",
        Kind::Enum(Provider::NAMES),
        TrustedOnly,
    ),
    spec(
        "reviewer.without_model",
        Kind::Enum(WithoutModel::NAMES),
        Higher,
    ),
    spec("reviewer.base_url", Kind::Text(TextShape::Url), TrustedOnly),
    spec(
        "reviewer.model",
        Kind::Text(TextShape::ModelId),
        TrustedOnly,
    ),
    spec(
        "reviewer.api_key_env",
        Kind::Text(TextShape::EnvVarName),
        TrustedOnly,
    ),
    spec("reviewer.timeout_ms", int(1000, 600_000), Lower),
    spec("reviewer.max_output_tokens", int(64, 4096), Lower),
    spec("reviewer.retries", int(0, 2), Lower),
    spec("reviewer.max_retry_after_ms", int(0, 5000), Lower),
    spec("reviewer.input_usd_per_mtok", Kind::Price, TrustedOnly),
    spec("reviewer.output_usd_per_mtok", Kind::Price, TrustedOnly),
    spec("budget.max_reviewer_input_tokens", int(2048, 32_768), Lower),
    spec("budget.max_user_transcript_tokens", int(0, 32_768), Lower),
    spec("budget.max_tool_transcript_tokens", int(0, 32_768), Lower),
    spec("budget.max_relevant_result_tokens", int(0, 32_768), Lower),
    spec("budget.estimator", Kind::Enum(Estimator::NAMES), Lower),
    spec("decision.failure_mode", Kind::Enum(FAIL_CLOSED), Higher),
    spec(
        "decision.max_auto_allow_risk",
        Kind::Enum(AUTO_ALLOW_RISKS),
        Lower,
    ),
    spec("decision.on_risk_exceeded", Kind::Enum(OUTCOMES), Higher),
    spec("decision.on_uncertain", Kind::Enum(OUTCOMES), Higher),
    spec("breaker.consecutive_denials", int(1, 100), Lower),
    spec("breaker.window_denials", int(1, 1000), Lower),
    spec("breaker.window_size", int(1, 1000), Higher),
    spec("breaker.action", Kind::Enum(FAIL_CLOSED), Higher),
    spec("turn.max_reviews", int(1, 1000), Lower),
    spec("turn.on_exhausted", Kind::Enum(FAIL_CLOSED), Higher),
    spec("turn.max_failures", int(1, 1000), Lower),
    spec("cache.ttl_ms", int(0, 3_600_000), Lower),
    spec("cache.max_entries", int(0, 100_000), Lower),
    spec("grants.ttl_ms", int(1000, 600_000), Lower),
    spec("overrides.ttl_ms", int(1000, 600_000), Lower),
    spec("overrides.max_listed", int(1, 100), Lower),
    spec("overrides.break_glass_enabled", Kind::Bool, DisableOnly),
    spec(
        "overrides.break_glass_window_ms",
        int(1000, 3_600_000),
        Lower,
    ),
    spec("routing.default", Kind::Enum(ROUTE_POLICIES), Higher),
    spec("routing.rules", Kind::Rules, AppendRules),
    spec(
        "routing.sensitive_reads",
        Kind::Enum(ROUTE_POLICIES),
        Higher,
    ),
    spec("routing.surfaces", Kind::Surfaces, StricterSurfaces),
    spec("audit.enabled", Kind::Bool, DisableOnly),
    spec("inert.enabled", Kind::Bool, DisableOnly),
    spec("inert.deny_paths", Kind::Paths, TrustedOnly),
    spec(
        "inert.confine_max_entries",
        int(1000, 10_000_000),
        TrustedOnly,
    ),
    spec("audit.retention_days", int(1, 3650), Lower),
    spec("audit.pending_ttl_ms", int(60_000, 86_400_000), Lower),
    spec("audit.lock_timeout_ms", int(10, 10_000), TrustedOnly),
    spec("audit.flush_timeout_ms", int(0, 10_000), TrustedOnly),
    spec("audit.queue_capacity", int(16, 1_000_000), TrustedOnly),
    spec("audit.max_command_bytes", int(256, 65_536), TrustedOnly),
    spec("audit.max_template_tokens", int(4, 256), TrustedOnly),
    spec(
        "hooks.transcript_tail_bytes",
        int(0, 16 * 1024 * 1024),
        Lower,
    ),
    spec("hooks.deadline_margin_ms", int(500, 60_000), Higher),
    spec("hooks.server_connect_timeout_ms", int(100, 60_000), Lower),
    spec("server.listen", Kind::Text(TextShape::Listen), TrustedOnly),
    spec("server.allow_remote", Kind::Bool, TrustedOnly),
    spec("server.max_body_bytes", int(1024, 1_048_576), TrustedOnly),
    spec("server.rate_limit_per_second", int(1, 100_000), TrustedOnly),
    spec("server.max_concurrent_reviews", int(1, 1024), TrustedOnly),
    spec("server.shutdown_grace_ms", int(0, 600_000), TrustedOnly),
    spec("server.header_timeout_ms", int(100, 120_000), TrustedOnly),
    spec("server.max_connections", int(16, 65_536), TrustedOnly),
    spec(
        "server.max_connections_per_peer",
        int(1, 65_536),
        TrustedOnly,
    ),
    spec(
        "store.backend",
        Kind::Enum(StoreBackend::NAMES),
        TrustedOnly,
    ),
    spec(
        "store.url_env",
        Kind::Text(TextShape::EnvVarName),
        TrustedOnly,
    ),
    spec("store.pool_size", int(1, 256), TrustedOnly),
    spec("store.timeout_ms", int(100, 60_000), TrustedOnly),
    spec(
        "analysis.max_parse_operations",
        int(10_000, 1_000_000_000),
        TrustedOnly,
    ),
    spec(
        "analysis.parse_timeout_us",
        int(1000, 10_000_000),
        TrustedOnly,
    ),
    spec(
        "analysis.max_syntax_nodes",
        int(100, 10_000_000),
        TrustedOnly,
    ),
    spec("analysis.max_syntax_depth", int(10, 1000), TrustedOnly),
    spec("analysis.max_script_nesting", int(1, 64), TrustedOnly),
    spec("analysis.max_steps", int(100, 100_000_000), TrustedOnly),
    spec(
        "analysis.analysis_timeout_us",
        int(1000, 10_000_000),
        TrustedOnly,
    ),
    spec("analysis.max_commands", int(10, 1_000_000), TrustedOnly),
    spec("analysis.max_fields", int(10, 1_000_000), TrustedOnly),
    spec("analysis.max_candidates", int(2, 4096), TrustedOnly),
    spec(
        "analysis.max_value_bytes",
        int(256, 16_777_216),
        TrustedOnly,
    ),
    spec(
        "analysis.max_expansion_bytes",
        int(4096, 1_073_741_824),
        TrustedOnly,
    ),
    spec("analysis.max_call_depth", int(1, 256), TrustedOnly),
    spec("analysis.max_loop_iterations", int(1, 4096), TrustedOnly),
    spec(
        "analysis.max_match_work",
        int(1000, 10_000_000_000),
        TrustedOnly,
    ),
];

/// The sections, in table order.
pub fn sections() -> impl Iterator<Item = &'static str> {
    let mut seen: Vec<&'static str> = Vec::new();
    for k in KEYS {
        let section = k.key.split('.').next().unwrap_or(k.key);
        if !seen.contains(&section) {
            seen.push(section);
        }
    }
    seen.into_iter()
}

/// The spec for `section.key`, if it exists.
pub fn lookup(section: &str, key: &str) -> Option<&'static KeySpec> {
    // Lengths first: every layer's every key is looked up, most of them
    // against keys of another length (this was most of loading the
    // configuration).
    KEYS.iter().find(|k| {
        k.key.len() == section.len() + 1 + key.len()
            && k.key
                .split_once('.')
                .is_some_and(|(s, name)| s == section && name == key)
    })
}

/// The position of `value` in an enum's list.
pub fn enum_rank(values: &[&str], value: &str) -> Option<usize> {
    values.iter().position(|v| *v == value)
}

/// A human-readable description of the legal values.
pub fn describe(kind: Kind) -> String {
    match kind {
        Kind::Int { min, max } => format!("an integer in {min}–{max}"),
        Kind::Price => format!("a price in USD per million tokens, 0–{MAX_PRICE}"),
        Kind::Bool => "`true` or `false`".to_owned(),
        Kind::Enum(values) => format!("one of {}", quoted_list(values)),
        Kind::Text(TextShape::Url) => "an `http://` or `https://` URL".to_owned(),
        Kind::Text(TextShape::ModelId) => "a model id of 1–256 printable characters".to_owned(),
        Kind::Text(TextShape::EnvVarName) => {
            "an environment variable name (`[A-Za-z_][A-Za-z0-9_]*`, not `VOUCH_<SECTION>__<KEY>`) or empty".to_owned()
        }
        Kind::Text(TextShape::Listen) => "`host:port` or `unix:/absolute/path`".to_owned(),
        Kind::Rules => "an array of `{pattern, policy, field, note}` tables".to_owned(),
        Kind::Surfaces => "a table of surface name → routing policy".to_owned(),
        Kind::Paths => format!(
            "an array of at most {MAX_PATHS} paths of 1–4096 bytes without control characters"
        ),
    }
}

pub fn quoted_list(values: &[&str]) -> String {
    values
        .iter()
        .map(|v| format!("`{v}`"))
        .collect::<Vec<_>>()
        .join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::validate::validate_value;
    use crate::config::{Config, DEFAULT_TOML};
    use std::collections::BTreeSet;

    fn leaves(table: &toml::Table) -> BTreeSet<String> {
        let mut out = BTreeSet::new();
        for (section, body) in table {
            for key in body.as_table().unwrap().keys() {
                out.insert(format!("{section}.{key}"));
            }
        }
        out
    }

    fn spec_keys() -> BTreeSet<String> {
        KEYS.iter().map(|k| k.key.to_owned()).collect()
    }

    #[test]
    fn every_default_key_has_a_spec_and_direction() {
        let defaults: toml::Table = toml::from_str(DEFAULT_TOML).unwrap();
        assert_eq!(leaves(&defaults), spec_keys());
    }

    #[test]
    fn every_config_field_has_a_spec_and_direction() {
        let typed = toml::Table::try_from(Config::defaults().unwrap()).unwrap();
        assert_eq!(leaves(&typed), spec_keys());
    }

    #[test]
    fn keys_are_unique_and_defaults_are_legal() {
        assert_eq!(spec_keys().len(), KEYS.len());
        let defaults: toml::Table = toml::from_str(DEFAULT_TOML).unwrap();
        for k in KEYS {
            let (section, key) = k.key.split_once('.').unwrap();
            let value = &defaults[section][key];
            validate_value(k, value).unwrap_or_else(|p| panic!("{}: {p:?}", k.key));
            assert_eq!(lookup(section, key), Some(k));
        }
    }

    #[test]
    fn server_and_model_selection_are_trusted_only() {
        for k in KEYS {
            if k.key.starts_with("server.")
                || k.key.starts_with("analysis.")
                || [
                    "reviewer.provider",
                    "reviewer.base_url",
                    "reviewer.model",
                    "reviewer.api_key_env",
                ]
                .contains(&k.key)
            {
                assert_eq!(k.tighten, Tighten::TrustedOnly, "{}", k.key);
            }
        }
    }
}
