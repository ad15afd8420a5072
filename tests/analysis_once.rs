//! One analysis of a command per request (issue 30): the hard denies (the
//! early hop and the full check), the packet's redaction and the audit's
//! template all read the analysis the engine made once. The count is
//! `vouch_shell::analyses_performed()`, a process-wide counter, so this
//! file is its own test binary with one test: nothing else analyses while
//! it counts.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    reason = "test code: a failed step is a failed test"
)]

use std::time::Duration;

use serde_json::json;
use vouch::config::{Config, Provider};
use vouch::decision::Decision;
use vouch::engine::{Engine, EngineOptions, ModelRuntime};
use vouch::request::Request;
use vouch::shell::analyses_performed;

fn request(command: &str, input_command: &str) -> Request {
    Request::from_slice(
        json!({
            "session_id": "s-once",
            "turn_id": "t-once",
            "surface": "bash",
            "tool": "Bash",
            "command": command,
            "cwd": "/srv/app",
            "home": "/home/dev",
            "input": {"command": input_command},
            "transcript": [{"role": "user", "text": "build it"}],
        })
        .to_string()
        .as_bytes(),
    )
    .unwrap()
}

/// How many analyses `run` caused, its audit records written.
fn analyses<T>(engine: &Engine, run: impl FnOnce() -> T) -> (u64, T) {
    let before = analyses_performed();
    let decision = run();
    assert!(engine.flush_audit(Duration::from_secs(10)), "audit flushed");
    (analyses_performed() - before, decision)
}

fn stage(d: &Decision) -> String {
    serde_json::to_value(d).unwrap()["stage"]
        .as_str()
        .unwrap()
        .to_owned()
}

#[test]
fn each_request_is_analysed_once() {
    let dir = tempfile::tempdir().unwrap();
    let mut config = Config::defaults().unwrap();
    // A reviewer nobody answers (connection refused at once): the packet is
    // built and redacted, then the review fails closed.
    config.reviewer.provider = Provider::Openai;
    config.reviewer.base_url = "http://127.0.0.1:9/v1".to_owned();
    config.reviewer.api_key_env = String::new();
    assert!(config.audit.enabled, "the audit reads the command too");
    let engine = Engine::new(EngineOptions::isolated(dir.path(), &config).unwrap()).unwrap();
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let review = |r: Request| runtime.block_on(engine.review(r));
    let mut here = ModelRuntime::default();

    // Every command is new to this process: the audit's template memo has
    // never seen it, so an audit that analysed would be counted.
    let cases: [(&str, &str, &str); 5] = [
        // A plain line that is not denied: the early hop's analysis crosses
        // to the blocking stages, the packet's redaction and the audit.
        (
            "cargo build -p once-a",
            "cargo build -p once-a",
            "reviewer_failure",
        ),
        // Not a plain line: the blocking stages make the one analysis.
        (
            "for f in src/*.rs; do rustfmt \"$f\"; done",
            "for f in src/*.rs; do rustfmt \"$f\"; done",
            "reviewer_failure",
        ),
        // Hard denies on the early hop: a list, and a simple command (which
        // the audit templates, so it reads the analysis too).
        ("cd /tmp && rm -rf ~", "cd /tmp && rm -rf ~", "hard_deny"),
        ("rm -rf /", "rm -rf /", "hard_deny"),
        // A hard deny of the full check.
        ("rm -rf \"$HOME\"/", "rm -rf \"$HOME\"/", "hard_deny"),
    ];
    for (command, input, expected) in cases {
        let (count, decision) = analyses(&engine, || review(request(command, input)));
        assert_eq!(stage(&decision), expected, "`{command}`");
        assert_eq!(count, 1, "`{command}` through Engine::review");
        // The hook's path (`review_here`): the same, on this thread.
        let again = format!("{command} ");
        let (count, decision) = analyses(&engine, || {
            engine.review_here(request(&again, &again), &mut here)
        });
        assert_eq!(stage(&decision), expected, "`{again}`");
        assert_eq!(count, 1, "`{again}` through Engine::review_here");
    }

    // An `input.command` that differs from `command` is other text: the
    // redaction reads it with one analysis of its own (docs/shell.md).
    let (count, _) = analyses(&engine, || {
        review(request("cargo test -p once-b", "cargo test -p once-c"))
    });
    assert_eq!(count, 2, "a different input.command is read once more");

    // The counter sees the audit's own analyses: an after-the-fact event
    // (no decision, so no analysis to share) of a new command is one.
    let (count, _) = analyses(&engine, || {
        engine.observe_ran(&request("cargo doc -p once-d", "cargo doc -p once-d"));
    });
    assert_eq!(count, 1, "the audit's template of an unanalysed command");
}
