//! Audit throughput (design §8, issue 12): ingest of pi-permission-system
//! decision events in batched transactions (target ≥ 20,000 events/s), and
//! the report over a full half year — 180 days × 5,000 subjects, every
//! subject seen every day (target ≤ 500 ms).
//!
//! Ingest goes through the engine's real path: JSON events → parse → project
//! lookup → command template (redaction and the bash parse) → HMACs → one
//! SQLite transaction per batch of 1,000. The commands cycle through 400
//! distinct shapes, with a fresh `requestId` on every event, so every event
//! is new to the database and most templates repeat, as in real use.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use serde_json::{Value, json};
use vouch::audit::db::{Db, Op};
use vouch::audit::keys::{Domain, Keys};
use vouch::audit::record::{ResultKind, Row};
use vouch::audit::report::{self, Options, Scope};
use vouch::audit::subject::{Kind, Subject};
use vouch::audit::targets::Target;
use vouch::clock::ManualClock;
use vouch::config::Config;
use vouch::engine::{Engine, EngineOptions};

/// A `--target` by name.
fn target(name: &str) -> Target {
    name.parse().unwrap()
}

/// Day 20,798, the 15th day of its 16-day block (`day % 16 == 14`): the
/// 180-day window then has 20 edge days read from `daily` (the most any
/// 180-day window has) and the 174-day window 30 edge days plus 9 blocks,
/// the most rows any window within the retention reads.
const NOW: u64 = 1_796_990_400_000;
const DAY_MS: u64 = 86_400_000;
const BATCH: usize = 1000;

fn shapes() -> Vec<String> {
    let verbs = [
        "status", "log", "diff", "show", "build", "test", "run", "check",
    ];
    let tools = [
        "git", "cargo", "npm", "make", "kubectl", "docker", "pytest", "go", "ls", "cat",
    ];
    let mut out = Vec::new();
    for (i, tool) in tools.iter().enumerate() {
        for (j, verb) in verbs.iter().enumerate() {
            for k in 0..5 {
                out.push(format!(
                    "{tool} {verb} --flag-{k} value-{i}{j}{k} src/file_{k}.rs"
                ));
            }
        }
    }
    out
}

fn ingest(c: &mut Criterion) {
    let dir = tempfile::tempdir().unwrap();
    let project = dir.path().join("project");
    std::fs::create_dir_all(project.join(".git")).unwrap();
    let config = Config::defaults().unwrap();
    let mut options = EngineOptions::isolated(&dir.path().join("vh"), &config).unwrap();
    options.clock = Arc::new(ManualClock::new(NOW));
    let engine = Engine::new(options).unwrap();
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    let shapes = shapes();
    let next = AtomicU64::new(0);
    let cwd = project.join("src").display().to_string();
    let batch = || -> Vec<Value> {
        (0..BATCH)
            .map(|i| {
                let n = next.fetch_add(1, Ordering::Relaxed);
                json!({"requestId": format!("req-{n}"), "surface": "bash",
                       "value": shapes[i % shapes.len()], "result": "allow",
                       "resolution": if i % 3 == 0 { "policy_allow" } else { "user_approved" },
                       "origin": "project", "agentName": "main", "matchedPattern": "git *",
                       "forwarding": null, "cwd": cwd})
            })
            .collect()
    };
    let mut group = c.benchmark_group("audit");
    group.throughput(Throughput::Elements(BATCH as u64));
    group.bench_function("ingest_batch_of_1000_events", |b| {
        b.iter_batched(
            batch,
            |events| {
                let summary = rt.block_on(engine.audit_ingest(events, true)).unwrap();
                assert_eq!(summary.counted, BATCH as u64);
            },
            criterion::BatchSize::PerIteration,
        );
    });
    group.finish();
}

/// A database holding 180 days × 5,000 subjects, written through the real
/// write path (one transaction per day).
fn half_year(dir: &std::path::Path, keys: &Keys, project: &str) -> Db {
    let state = dir.join("state");
    let mut db = Db::open(&state, Duration::from_secs(5)).unwrap();
    let scope = keys.digest(Domain::Scope, project);
    let today = i64::try_from(NOW / DAY_MS).unwrap();
    for back in (0..180).rev() {
        let day = today - back;
        let ops = (0..5000)
            .map(|s| Op::Count {
                row: Row {
                    day,
                    scope: Some(scope.clone()),
                    surface: "bash".to_owned(),
                    subject: Subject::new(Kind::Template, format!("tool{s} sub{} *", s % 40)),
                    source: "claude-code".to_owned(),
                    result: ResultKind::Allow,
                    resolution: if s % 4 == 0 {
                        "vouch_reviewer"
                    } else {
                        "user_approved"
                    },
                    origin: None,
                    pattern: (s % 2 == 0).then(|| format!("{:032x}", s % 100)),
                    forwarded: false,
                },
                retention_days: 180,
                once: None,
                awaits: None,
            })
            .collect();
        let now = u64::try_from(day).unwrap() * DAY_MS + DAY_MS / 2;
        db.write(ops, now, 180).unwrap();
    }
    db
}

fn report_bench(c: &mut Criterion) {
    let block = vouch::audit::db::BLOCK_DAYS;
    assert_eq!(
        i64::try_from(NOW / DAY_MS).unwrap() % block,
        block - 2,
        "NOW no longer gives the worst window alignment"
    );
    let dir = tempfile::tempdir().unwrap();
    let keys = Keys::from_bytes([9; 32]);
    let project = dir.path().join("project");
    std::fs::create_dir_all(project.join(".git")).unwrap();
    // Built on first use, so filtering for the ingest benchmark skips it.
    let db = std::cell::OnceCell::new();
    let db = || db.get_or_init(|| half_year(dir.path(), &keys, &project.to_string_lossy()));
    let mut group = c.benchmark_group("audit");
    group.sample_size(10);
    for (label, scope, days) in [
        ("all", Scope::All, 180),
        ("current", Scope::Current(project.clone()), 180),
        ("all_174_days_worst_alignment", Scope::All, 174),
    ] {
        let options = Options {
            days,
            top: 20,
            min_count: 5,
            scope,
            target: target("claude-code"),
        };
        group.bench_function(format!("report_180_days_x_5000_subjects/{label}"), |b| {
            let db = db();
            b.iter(|| {
                let r = report::build(Some((db, &keys)), &options, 180, NOW).unwrap();
                assert_eq!(r.totals.observations, u64::from(days) * 5000);
                assert_eq!(r.suggestions.rules.len(), 20);
            });
        });
    }
    group.finish();
}

criterion_group!(benches, ingest, report_bench);
criterion_main!(benches);
