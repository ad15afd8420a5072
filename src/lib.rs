//! vouch: a model-backed auto-review authorizer for coding agents.
//!
//! A coding agent about to cross a boundary (run a shell command, write
//! outside its workspace, open a connection) asks vouch, which answers
//! **allow**, **deny** or **defer** (hand it to the human). Deterministic hard
//! denies run first; then routing; then per-turn session state; then a
//! reviewer model over a small, redacted, fenced evidence packet; then risk
//! ceilings; and for sandbox brokers a one-use grant. Every fault ends in the
//! configured fail-closed outcome, never in an allow.
//!
//! # Layout
//!
//! - [`request`]: the canonical request, its validation and `request_hash`.
//! - [`decision`]: the decision, its stages and the words said to the agent.
//! - [`config`]: typed configuration, layers and the tighten-only project overlay.
//! - [`paths`]: where vouch keeps its files (`VOUCH_HOME` or XDG).
//! - [`shell`]: bash parsing into the units that would actually run.
//! - [`policy`]: hard denies, routing and risk ceilings — pure functions.
//! - [`evidence`]: redaction, token estimates and the fenced evidence packet.
//! - [`reviewer`]: model clients, verdict parsing, one deadline, bounded retries.
//! - [`store`], [`session`], [`grants`], [`clock`]: shared SQLite state —
//!   breaker, budgets, cache, overrides, break glass, one-use grants.
//! - [`pipeline`]: orders the stages and returns a [`decision::Decision`].
//! - [`audit`]: redacted daily aggregates of every decision and after-event
//!   in `audit.sqlite`, and the report that suggests permission rules.
//! - [`engine`]: one running vouch behind an async API.
//! - [`hooks`]: the harness adapters (`vouch hook claude-code|codex|gemini|cursor`,
//!   `POST /hooks/<harness>`): harness JSON → canonical request → the
//!   harness's own reply, transcripts, snippets.
//! - [`http`], [`server`]: the `vouch serve` HTTP service.
//! - [`cli`]: the command-line commands; [`telemetry`]: tracing setup and events.

pub mod audit;
pub mod cli;
pub mod clock;
pub mod config;
pub mod decision;
pub mod engine;
pub mod evidence;
pub mod grants;
pub mod hooks;
pub mod http;
pub mod paths;
pub mod pipeline;
pub mod policy;
pub mod request;
pub mod reviewer;
pub mod server;
pub mod session;
pub mod shell;
pub mod store;
pub mod telemetry;
