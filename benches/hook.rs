//! One hook run as a harness pays for it: process start to reply of
//! `vouch hook claude-code` (spawn, read stdin, load configuration, decide,
//! print), for a hard-deny command, an inert one and for a command the reviewer model
//! allows, against the test model server answering at once (0 ms).
//!
//! `vouch hook` decides in a supervised worker (`hooks::supervise`): the
//! `*_worker_alone` cells run that worker directly (`vouch hook-worker`,
//! the same work the hook did in one process before issue 43), so the
//! difference between a cell and its `_worker_alone` twin is what the
//! supervision costs.
//!
//! `cargo bench --bench hook` (short: `-- --warm-up-time 1 --measurement-time 3`).
//! Each reviewed run has its own turn and command, so neither the verdict
//! cache nor the turn budget short-cuts the model call.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

#[path = "../tests/it/support/model_server.rs"]
mod model_server;

use std::io::Write;
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};

use criterion::{Criterion, criterion_group, criterion_main};
use serde_json::json;

use model_server::{ModelServer, Script};

fn hook_input(command: &str, turn: u64) -> Vec<u8> {
    json!({
        "session_id": "bench-session", "transcript_path": "/nonexistent/bench.jsonl",
        "cwd": "/srv/bench", "prompt_id": format!("turn-{turn}"), "permission_mode": "default",
        "hook_event_name": "PreToolUse", "tool_name": "Bash",
        "tool_input": {"command": command, "description": "bench"}, "tool_use_id": format!("toolu_{turn}"),
    })
    .to_string()
    .into_bytes()
}

/// Runs the hook once; returns its stdout.
fn run(home: &std::path::Path, input: &[u8]) -> String {
    run_as("hook", home, input)
}

/// Runs `vouch COMMAND claude-code` once (`hook`, or `hook-worker`: the
/// worker alone, unsupervised); returns its stdout.
fn run_as(command: &str, home: &std::path::Path, input: &[u8]) -> String {
    let mut child = Command::new(env!("CARGO_BIN_EXE_vouch"))
        .args([command, "claude-code", "--home"])
        .arg(home)
        // As `vouch hook snippet` writes it for the default 90 s review.
        .args(["--timeout", "100"])
        .env_clear()
        .env("HOME", home)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(input).unwrap();
    let out = child.wait_with_output().unwrap();
    String::from_utf8(out.stdout).unwrap()
}

fn bench(c: &mut Criterion) {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap();
    let server = runtime.block_on(ModelServer::with_script(Script::default()));
    let home = tempfile::tempdir().unwrap();
    std::fs::write(
        home.path().join("config.toml"),
        format!(
            "[reviewer]\nprovider = \"openai\"\nbase_url = \"{}\"\napi_key_env = \"\"\n\n\
             [turn]\nmax_reviews = 1000\n\n[cache]\nttl_ms = 0\n",
            server.base_url()
        ),
    )
    .unwrap();

    let mut group = c.benchmark_group("hook_run");
    let deny = hook_input("rm -rf ~/", 0);
    assert!(run(home.path(), &deny).contains("\"deny\""));
    group.bench_function("hard_deny", |b| b.iter(|| run(home.path(), &deny)));
    assert!(run_as("hook-worker", home.path(), &deny).contains("\"deny\""));
    group.bench_function("hard_deny_worker_alone", |b| {
        b.iter(|| run_as("hook-worker", home.path(), &deny));
    });

    // An inert command: allowed without the model (issue 31: within the
    // hard-deny figure).
    let inert = hook_input("ls -la src && cat README.md | head -20", 0);
    let answer = run(home.path(), &inert);
    assert!(
        answer.contains("\"allow\"") && answer.contains("only reads"),
        "{answer}"
    );
    group.bench_function("inert", |b| b.iter(|| run(home.path(), &inert)));
    group.bench_function("inert_worker_alone", |b| {
        b.iter(|| run_as("hook-worker", home.path(), &inert));
    });

    let turn = AtomicU64::new(1);
    let reviewed = |n: u64| hook_input(&format!("cargo build -p crate{n}"), n);
    let first = run(home.path(), &reviewed(turn.fetch_add(1, Ordering::Relaxed)));
    assert!(first.contains("\"allow\""), "{first}");
    group.bench_function("reviewed_0ms_model", |b| {
        b.iter_batched(
            || reviewed(turn.fetch_add(1, Ordering::Relaxed)),
            |input| run(home.path(), &input),
            criterion::BatchSize::SmallInput,
        );
    });
    group.finish();
    assert!(
        server.requests().len() > 1,
        "the reviewed runs called the model"
    );
}

criterion_group!(benches, bench);
criterion_main!(benches);
