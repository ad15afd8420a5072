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
//! The decision is a pure function of plain data, with I/O at the edges:
//!
//! - [`pipeline`]: **the decision table.** `decide(&Inputs) -> Step` orders
//!   every stage before the model (hard denies, configuration, routing, the
//!   reviewer, break glass, breaker, budgets, the packet, an approval, the
//!   cache) and `conclude(&Job, &ReviewResult)` every stage after it (risk
//!   ceilings, what is recorded). Both return a [`decision::Decision`] with
//!   the [`pipeline::Effect`]s that must follow it — one audit record per
//!   final decision among them. No file, socket or clock.
//! - [`engine`]: the shell around the table — gathers its inputs on demand
//!   (project configuration, the reviewer, the turn's state, the packet, the
//!   cache lookup), applies its effects in one SQLite transaction, calls the
//!   model in between, and hands audit records to the audit sink.
//!   `Engine::review(Request) -> Decision` decides one request; `vouch serve`
//!   splits it where it must not block a worker (`review_early` answers a
//!   plain hard deny on the worker, `review_late` the rest), and the hooks
//!   run `review_here` on their own runtime.
//! - [`decision`]: the decision, its per-stage constructors and the words
//!   said to the agent; [`names`]: the one enum ↔ name table.
//! - [`request`]: the canonical request, its validation and `request_hash`;
//!   [`json`]: the one strict JSON parser for outside input.
//! - [`config`]: typed configuration, layers and the tighten-only project overlay.
//! - [`paths`]: where vouch keeps its files (`VOUCH_HOME` or XDG).
//! - [`shell`]: the crate `vouch-shell` (`crates/vouch-shell`, re-exported
//!   here): bash parsed, repaired, expanded and interpreted into an
//!   `Analysis` of the units that would actually run, bounded by budgets it
//!   charges before each step and each level of nesting. Its command table
//!   (`shell::spec`) is the one place command knowledge lives.
//! - [`policy`]: hard denies, routing and risk ceilings — pure functions.
//! - [`rules`]: the rule registry — every rule id a deterministic decision
//!   names (hard denies by category, the inert stage, routing), with what
//!   it means; `docs/rules.md` is generated from it.
//! - [`confine`]: `vouch confine`, the enforcement behind an inert allow
//!   (Landlock, seccomp, no capabilities, secrets left out of the
//!   environment), and the confined form an inert decision carries.
//! - [`evidence`]: redaction, token estimates and the fenced evidence packet.
//! - [`reviewer`]: model clients, verdict parsing, one deadline, bounded retries.
//! - [`session`], [`grants`], [`store`], [`clock`]: the state the table reads
//!   and the effects it writes — turn snapshots, breaker and budget rules,
//!   cache, overrides and break glass, one-use grants. The two backends
//!   (SQLite files, or one PostgreSQL database shared by replicas:
//!   `store::postgres`), the one `Transaction` both serve (`store::sql`),
//!   the schema, file modes, tokens and randomness are in [`store`]; each
//!   module's own SQL, written once for both backends, sits beside its rules
//!   (`session`, `session::overrides`, `grants`, the effects applied in
//!   `engine`), and the audit's in `audit::db`.
//! - [`audit`]: redacted daily aggregates of every decision and after-event
//!   in `audit.sqlite` (or the shared PostgreSQL database), and the report
//!   that suggests permission rules.
//! - [`http`], [`server`]: the `vouch serve` HTTP service (one `AppError`,
//!   one strict-body extractor; its own accept loop with connection caps and
//!   a header timeout, `server::connections`), with the operator console at `/console`
//!   (`http::console`); [`feed`]: the live decision feed the console
//!   watches (a relaxed load per decision while nobody does).
//! - [`hooks`]: the harness adapters (`vouch hook <harness>`, and
//!   `POST /hooks/claude-code` for Claude Code's `http` hook): harness JSON →
//!   canonical request → the harness's own reply; with `--server`, a team's
//!   central service decides (`hooks::remote`). `vouch hook` decides in a
//!   worker process it supervises (`hooks::supervise`): a crash of the
//!   decision is the harness's fail-closed reply. Each harness is one file of
//!   `src/hooks/harnesses/` (its parsing, replies, timeout, snippet,
//!   protected files, transcript format and audit rule language), listed by
//!   `build.rs` into the registry the command line, the trust-boundary hard
//!   denies and the audit read.
//! - [`install`]: `vouch install`/`uninstall` (vouch's hook merged into a
//!   harness's user settings, atomically); [`doctor`]: which harnesses are
//!   guarded, and which repository files switch vouch off.
//! - [`cli`]: the command-line commands; [`telemetry`]: tracing setup and events.

pub mod audit;
pub mod cli;
pub mod clock;
pub mod config;
pub mod confine;
pub mod decision;
pub mod doctor;
pub mod engine;
pub mod eval;
pub mod evidence;
pub mod feed;
pub mod grants;
pub mod hooks;
pub mod http;
pub mod install;
pub mod json;
pub mod names;
pub mod paths;
pub mod pipeline;
pub mod policy;
pub mod request;
pub mod reviewer;
pub mod rules;
pub mod server;
pub mod session;
pub use vouch_shell as shell;
pub mod store;
pub mod telemetry;
