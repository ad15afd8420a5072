//! Configuration (design §3): typed sections, the compiled-in defaults, the
//! layered loading and the tighten-only project overlay.
//!
//! Layers, in order: package defaults → user overlay → `--config FILE` →
//! `VOUCH_<SECTION>__<KEY>` environment variables → project overlay. The
//! first four are trusted and may set any legal value; the project overlay
//! (`<project root>/.vouch/config.toml`) is written where the agent works, so
//! it may only tighten. The parts:
//!
//! - [`spec`]: the one table of keys, legal ranges and tighten directions.
//! - [`validate`]: per-layer checks that name file, key and legal values.
//! - [`layers`]: reading and folding the trusted layers, with sources.
//! - [`tighten`]: the project overlay fold.
//! - [`show`]: `vouch config show`.
//! - [`cache`]: per-project results, re-validated with one `stat`.
//! - [`routing`]: the routing table (design §6.2), compiled as a layer loads
//!   so a bad pattern is an error naming its file and key, and asked on
//!   the hot path.

pub mod cache;
pub mod layers;
pub mod routing;
pub mod show;
pub mod spec;
pub mod tighten;
pub mod validate;

pub use cache::ProjectCache;
pub use layers::{LoadedConfig, Source, load_trusted, process_env};
pub use show::render_show;
pub use tighten::{ProjectConfig, for_project, project_root, tighten_trusted, tighten_with_env};

use serde::{Deserialize, Serialize};

use crate::names::named_enum;
use crate::names::{Outcome, RiskLevel};

/// The package defaults, compiled in.
pub const DEFAULT_TOML: &str = include_str!("../config/default.toml");

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Config {
    pub reviewer: ReviewerConfig,
    pub budget: BudgetConfig,
    pub decision: DecisionConfig,
    pub breaker: BreakerConfig,
    pub turn: TurnConfig,
    pub cache: CacheConfig,
    pub grants: GrantsConfig,
    pub overrides: OverridesConfig,
    pub routing: RoutingConfig,
    pub audit: AuditConfig,
    /// The inert stage (design §6.1b).
    pub inert: InertConfig,
    pub hooks: HooksConfig,
    pub server: ServerConfig,
    /// Where the state lives (design §6.3; docs/deploy.md).
    pub store: StoreConfig,
    /// Budgets of the bash analysis behind hard denies (trusted layers only).
    pub analysis: crate::shell::Limits,
}

named_enum! {
    /// The reviewer's wire format.
    pub enum Provider {
        /// No reviewer model is configured (the default of a fresh install):
        /// whatever the model would review takes `reviewer.without_model`.
        None = "none",
        Openai = "openai",
        Anthropic = "anthropic",
        Ollama = "ollama",
    }
}

named_enum! {
    /// What happens, with no reviewer model configured, to what the model
    /// would have reviewed. Declared loosest first: a project may move
    /// `abstain` to `human`, never back.
    pub enum WithoutModel {
        /// No opinion: the harness's own permission rules decide, as if vouch
        /// were not installed.
        Abstain = "abstain",
        /// Defer to the human.
        Human = "human",
    }
}

named_enum! {
    /// How evidence is counted against the token budget. Declared strictest
    /// first: `utf8` counts every byte, so less evidence fits.
    pub enum Estimator {
        Utf8 = "utf8",
        O200k = "o200k",
    }
}

named_enum! {
    /// An outcome that never allows: failure and breaker actions. Declared
    /// loosest first.
    pub enum FailClosed {
        Defer = "defer",
        Deny = "deny",
    }
}

impl FailClosed {
    pub fn outcome(self) -> Outcome {
        match self {
            FailClosed::Deny => Outcome::Deny,
            FailClosed::Defer => Outcome::Defer,
        }
    }
}

named_enum! {
    /// Routing policy for a surface, rule or default. Declared loosest first:
    /// `pass` < `ai` < `human` < `never`.
    pub enum RoutePolicy {
        /// Abstain: the harness's own rules decide.
        Pass = "pass",
        /// The reviewer model decides.
        Ai = "ai",
        /// Defer to the human.
        Human = "human",
        /// Deny without a model call.
        Never = "never",
    }
}

impl RoutePolicy {
    /// Strictness order for tighten-only routing: `pass` < `ai` < `human` <
    /// `never`.
    pub fn strictness(self) -> u8 {
        u8::try_from(self.index()).unwrap_or(u8::MAX)
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ReviewerConfig {
    pub provider: Provider,
    pub without_model: WithoutModel,
    pub base_url: String,
    pub model: String,
    pub api_key_env: String,
    pub timeout_ms: u64,
    pub max_output_tokens: u32,
    pub retries: u32,
    pub max_retry_after_ms: u64,
    /// The model's prices, USD per million tokens: `vouch eval`'s cost
    /// estimate (0 when unknown).
    pub input_usd_per_mtok: f64,
    pub output_usd_per_mtok: f64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BudgetConfig {
    pub max_reviewer_input_tokens: u32,
    pub max_user_transcript_tokens: u32,
    pub max_tool_transcript_tokens: u32,
    pub max_relevant_result_tokens: u32,
    pub estimator: Estimator,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DecisionConfig {
    pub failure_mode: FailClosed,
    pub max_auto_allow_risk: RiskLevel,
    pub on_risk_exceeded: Outcome,
    pub on_uncertain: Outcome,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BreakerConfig {
    pub consecutive_denials: u32,
    pub window_denials: u32,
    pub window_size: u32,
    pub action: FailClosed,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TurnConfig {
    pub max_reviews: u32,
    pub on_exhausted: FailClosed,
    pub max_failures: u32,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CacheConfig {
    pub ttl_ms: u64,
    pub max_entries: u32,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GrantsConfig {
    pub ttl_ms: u64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OverridesConfig {
    pub ttl_ms: u64,
    pub max_listed: u32,
    pub break_glass_enabled: bool,
    pub break_glass_window_ms: u64,
}

named_enum! {
    /// Which field a routing rule's regex is matched against.
    pub enum RuleField {
        Surface = "surface",
        Tool = "tool",
        Command = "command",
        /// The canonical JSON of the action fields.
        Request = "request",
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RoutingRule {
    /// A regular expression over `field` (`"^git push"`). Exactly one of
    /// `pattern` and `command` is given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pattern: Option<String>,
    /// A command template (`"npm test *"`), matched against every unit the
    /// command would run, after expansion (docs/inert.md, "Rules").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub command: Option<String>,
    pub policy: RoutePolicy,
    #[serde(default = "default_rule_field")]
    pub field: RuleField,
    #[serde(default)]
    pub note: Option<String>,
}

fn default_rule_field() -> RuleField {
    RuleField::Command
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RoutingConfig {
    pub default: RoutePolicy,
    pub rules: Vec<RoutingRule>,
    pub sensitive_reads: RoutePolicy,
    /// Surface name → policy. Ordered map so `config show` is stable.
    pub surfaces: std::collections::BTreeMap<String, RoutePolicy>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AuditConfig {
    pub enabled: bool,
    pub retention_days: u32,
    pub pending_ttl_ms: u64,
    pub lock_timeout_ms: u64,
    pub flush_timeout_ms: u64,
    pub queue_capacity: u64,
    pub max_command_bytes: u64,
    pub max_template_tokens: u64,
}

/// The inert stage: commands proven to only read are allowed without a
/// model. A project overlay may turn it off, never on.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct InertConfig {
    pub enabled: bool,
    /// Paths whose contents, trees and `find` listings the stage never
    /// calls inert, besides the built-in sensitive names: absolute, `~/…`
    /// (the request's home) or relative to the request's working directory.
    pub deny_paths: Vec<String>,
    /// Directory entries `vouch confine` may read while it looks for
    /// sensitive files in the trees a confined command may read; what it
    /// could not search is not readable.
    pub confine_max_entries: u64,
}

/// `vouch hook <harness>`: transcript reading and the adapter's deadline.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HooksConfig {
    pub transcript_tail_bytes: u64,
    pub deadline_margin_ms: u64,
    /// `--server`: the connect timeout to the central service.
    pub server_connect_timeout_ms: u64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ServerConfig {
    pub listen: String,
    pub allow_remote: bool,
    pub max_body_bytes: u64,
    pub rate_limit_per_second: u32,
    pub max_concurrent_reviews: u32,
    pub shutdown_grace_ms: u64,
    /// Time a client has to send a request's headers, in ms: from its
    /// connection for the first request (past it: 408 and the connection
    /// closes), from the previous response for a kept-alive one's next.
    pub header_timeout_ms: u64,
    /// Open connections in all; one more is answered 503 and closed.
    pub max_connections: u32,
    /// Open connections from one IP address (a Unix socket's clients are
    /// its owner: only [`ServerConfig::max_connections`] applies there).
    pub max_connections_per_peer: u32,
}

named_enum! {
    /// Where the state (turns, cache, denials, authorizations, grants,
    /// prompts, audit aggregates) lives.
    pub enum StoreBackend {
        /// `<state_dir>/vouch.sqlite` and `audit.sqlite`: one machine.
        Sqlite = "sqlite",
        /// One PostgreSQL database shared by every replica of a service.
        Postgres = "postgres",
    }
}

/// `[store]`: the state backend. Trusted layers only.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StoreConfig {
    pub backend: StoreBackend,
    /// Name of the environment variable that holds the PostgreSQL
    /// connection URL (it may carry a password: never stored in a file by
    /// vouch, never logged, never shown).
    pub url_env: String,
    /// PostgreSQL connections per process, at most.
    pub pool_size: u32,
    /// Longest wait for a PostgreSQL connection, statement or lock, in ms.
    pub timeout_ms: u64,
}

/// Why a configuration layer was rejected. Every message names the layer
/// (file or environment variable) and, where there is one, the key.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ConfigError {
    #[error("{file}: {message}")]
    Parse { file: String, message: String },
    #[error("{file}: key `{key}`: {problem}")]
    Invalid {
        file: String,
        key: String,
        problem: String,
    },
    #[error("{file}: key `{key}` would loosen the trusted configuration: {problem}")]
    Loosening {
        file: String,
        key: String,
        problem: String,
    },
    #[error("cannot read {file}: {message}")]
    Io { file: String, message: String },
    #[error("environment variable `{var}`: {problem}")]
    Env { var: String, problem: String },
}

impl ConfigError {
    /// The key the error is about, when there is one.
    pub fn key(&self) -> Option<&str> {
        match self {
            ConfigError::Invalid { key, .. } | ConfigError::Loosening { key, .. } => Some(key),
            ConfigError::Parse { .. } | ConfigError::Io { .. } | ConfigError::Env { .. } => None,
        }
    }
}

impl Config {
    /// The compiled-in defaults.
    pub fn defaults() -> Result<Config, ConfigError> {
        toml::from_str(DEFAULT_TOML).map_err(|e| ConfigError::Parse {
            file: "<defaults>".to_owned(),
            message: e.to_string(),
        })
    }
}

/// Options every command takes.
#[derive(Debug, Clone, Default)]
pub struct Global {
    /// `--config FILE`: one more trusted overlay after the user file.
    pub config: Option<std::path::PathBuf>,
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `crate::shell::Limits::DEFAULT` holds the numbers of `[analysis]` in
    /// `config/default.toml`.
    #[test]
    fn analysis_defaults_match_the_configuration_file() {
        let config = Config::defaults().unwrap();
        assert_eq!(config.analysis, crate::shell::Limits::DEFAULT);
    }

    #[test]
    fn defaults_parse() {
        let c = Config::defaults().unwrap();
        assert_eq!(c.reviewer.timeout_ms, 90_000);
        assert_eq!(c.budget.max_reviewer_input_tokens, 8192);
        assert_eq!(c.routing.surfaces.get("read"), Some(&RoutePolicy::Pass));
        assert_eq!(c.decision.failure_mode, FailClosed::Deny);
    }
}
