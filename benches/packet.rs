//! Redaction and packet build for a 16 KiB transcript, with both estimators.
//!
//! Targets (design §6.4): median ≤ 1 ms with `utf8`, ≤ 5 ms with `o200k`
//! (encoder built before measuring). Run once, not in CI:
//! `cargo bench --bench packet -- --warm-up-time 1 --measurement-time 3`.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::hint::black_box;

use criterion::{Criterion, criterion_group, criterion_main};
use serde_json::json;
use vouch::config::{Config, Estimator};
use vouch::evidence::packet::{PacketContext, build};
use vouch::evidence::redact::redact_text;
use vouch::request::Request;

/// A transcript of about 16 KiB: conversation, unrelated tool activity,
/// matching earlier attempts with their output, a summary, and a few
/// secrets for the redactor to find.
fn request() -> Request {
    let mut transcript = Vec::new();
    let line = |i: usize| {
        format!(
            "src/module_{i}.rs:{}: warning: unused variable `token_count` in fn handle_{i}\n",
            i * 7
        )
    };
    for i in 0..14 {
        transcript.push(json!({"role": "user", "text": format!("step {i}: please fix the failing test in module {i} and keep the API stable")}));
        transcript.push(json!({"role": "assistant", "text": format!("I'll inspect module {i} first, then run the tests again to confirm the fix.")}));
        transcript.push(json!({"role": "tool_call", "tool_call_id": format!("t{i}"), "tool_name": "Bash", "input": {"command": format!("cargo test -p app module_{i}")}}));
        transcript.push(json!({"role": "tool_result", "tool_call_id": format!("t{i}"), "text": (0..8).map(line).collect::<String>()}));
    }
    for i in 0..3 {
        transcript.push(json!({"role": "tool_call", "tool_call_id": format!("p{i}"), "tool_name": "Bash", "input": {"command": "git push --force origin main"}}));
        transcript.push(json!({"role": "tool_result", "tool_call_id": format!("p{i}"), "text": format!("remote: rejected (attempt {i}); export GITHUB_TOKEN=ghp_pfJBd0Kh8oOOL8dKLzdocJ2isAjIhKtJ0Rlg\n{}", (0..6).map(line).collect::<String>())}));
    }
    transcript.push(json!({"role": "summary", "text": "Earlier the user asked to stabilise the test suite; DATABASE_PASSWORD=1584d8c4fa2815d2802827283e0ad841 was used locally."}));
    transcript.push(json!({"role": "tool_call", "tool_call_id": "toolu_x", "tool_name": "Bash", "input": {"command": "git push --force origin main"}}));
    transcript.push(
        json!({"role": "user", "text": "ok, force-push main: I rewrote the history on purpose"}),
    );
    let v = json!({
        "id": "r", "tool_call_id": "toolu_x", "session_id": "s", "surface": "git_push",
        "tool": "Bash", "command": "git push --force origin main", "cwd": "/srv/app",
        "home": "/home/dev", "input": {"command": "git push --force origin main"},
        "reason": "the user asked to publish the rewritten history",
        "transcript": transcript,
    });
    Request::from_slice(v.to_string().as_bytes()).unwrap()
}

fn transcript_bytes(r: &Request) -> usize {
    serde_json::to_string(&r.transcript).unwrap().len()
}

fn bench(c: &mut Criterion) {
    let r = request();
    let size = transcript_bytes(&r);
    assert!((15 * 1024..=18 * 1024).contains(&size), "{size} bytes");
    let text = serde_json::to_string(&r.transcript).unwrap();
    c.bench_function("redact_text/16KiB", |b| {
        b.iter(|| redact_text(black_box(&text)).len())
    });
    assert!(vouch::evidence::redact::prepare());
    for (est, name) in [(Estimator::Utf8, "utf8"), (Estimator::O200k, "o200k")] {
        est.prepare();
        let mut budget = Config::defaults().unwrap().budget;
        budget.estimator = est;
        let ctx = PacketContext::default();
        assert!(build(&r, &ctx, &budget, 300).is_ok());
        c.bench_function(&format!("redact_and_build/16KiB/{name}"), |b| {
            b.iter(|| build(black_box(&r), &ctx, &budget, 300).map(|p| p.estimated_tokens))
        });
    }
}

criterion_group!(benches, bench);
criterion_main!(benches);
