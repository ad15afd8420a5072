//! vouch's integration tests, one crate so the suite links once.
//!
//! Each module is one area (CLI, config, HTTP, pipeline, state, ...); shared
//! helpers live in [`support`]. Test code may unwrap, expect, panic and index.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    clippy::too_many_lines
)]

mod support;

mod audit;
mod audit_http;
mod audit_isolation;
mod audit_postgres;
mod audit_seam;
mod audit_secrets;
mod cli_commands;
mod cli_review;
mod config_layers;
mod config_props;
mod config_tighten;
mod confine;
mod confine_decide;
mod console;
mod crash;
mod decide;
mod eval;
mod fifo;
mod grants;
mod hard_deny_wrapping;
mod hook_supervisor;
mod hooks;
mod hooks_copilot;
mod hooks_opencode;
mod hooks_qwen;
mod hooks_remote;
mod http_router;
mod install;
mod layering;
mod model_server_faults;
mod multiprocess;
mod packet;
mod pipeline;
mod races;
mod redaction;
mod replicas;
mod reviewer;
mod reviewer_vectors;
mod routing;
mod rules;
mod serve_connections;
mod serve_e2e;
mod serve_logging;
mod serve_nesting;
mod session;
mod session_overrides;
mod soak;
mod store;
mod store_schema;
