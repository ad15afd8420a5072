//! State database throughput (design §6.3, §6.7): grant mint+consume pairs
//! at `synchronous=FULL` (beside the same disk's measured fsync bound,
//! `fsync/append_8k_fdatasync`; target ≥ 0.9 of it) and the per-review state
//! read+update, `gate` + `record` at `synchronous=NORMAL` (target median
//! ≤ 200 µs). Each is measured twice: with the database on the temp dir's
//! file system (what a user gets; dominated by the device's fsync latency)
//! and, where `/dev/shm` exists, on tmpfs (SQLite's own cost, fsync free).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::atomic::{AtomicU64, Ordering};

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use vouch::clock::ManualClock;
use vouch::config::Config;
use vouch::decision::{Outcome, RiskLevel, UserAuthorization};
use vouch::session::{ActionSummary, CachedVerdict, Gate, ReviewEvent, TurnKey, gate, record};
use vouch::store::Store;

const NOW: u64 = 1_800_000_000_000;

/// The places the database is put: (label, parent directory).
fn locations() -> Vec<(&'static str, Option<&'static str>)> {
    let mut places = vec![("disk", None)];
    if std::path::Path::new("/dev/shm").is_dir() {
        places.push(("tmpfs", Some("/dev/shm")));
    }
    places
}

fn temp_home(parent: Option<&str>) -> tempfile::TempDir {
    match parent {
        Some(dir) => tempfile::tempdir_in(dir).unwrap(),
        None => tempfile::tempdir().unwrap(),
    }
}

fn grants(c: &mut Criterion) {
    for (label, parent) in locations() {
        grants_on(c, label, parent);
    }
}

/// The yardstick for the pairs: one durable append on the same file system,
/// as a WAL commit at `synchronous=FULL` does (two 4 KiB frames, then
/// `fdatasync`, overwriting a preallocated file and rewound every 1,000
/// frame pairs, as a checkpointed WAL is reused). A mint + consume pair is
/// two commits, so its bound is
/// `1 / (2 × this)` pairs/s; the README gives pairs/s as a ratio to it.
fn fsync_bound(c: &mut Criterion) {
    use std::io::{Seek, Write};
    for (label, parent) in locations() {
        let home = temp_home(parent);
        let mut file = std::fs::File::create(home.path().join("fsync-probe")).unwrap();
        let frames = vec![0x5au8; 8192];
        // Preallocated, as a WAL in its steady state: overwrites that do not
        // grow the file (growing ones also commit the inode).
        for _ in 0..1000 {
            file.write_all(&frames).unwrap();
        }
        file.sync_all().unwrap();
        let counter = AtomicU64::new(0);
        let mut group = c.benchmark_group("fsync");
        group.throughput(Throughput::Elements(1));
        group.bench_function(format!("append_8k_fdatasync/{label}"), |b| {
            b.iter(|| {
                if counter.fetch_add(1, Ordering::Relaxed) % 1000 == 0 {
                    file.rewind().unwrap();
                }
                file.write_all(&frames).unwrap();
                file.sync_data().unwrap();
            });
        });
        group.finish();
    }
}

fn per_review(c: &mut Criterion) {
    for (label, parent) in locations() {
        per_review_on(c, label, parent);
    }
}

fn grants_on(c: &mut Criterion, label: &str, parent: Option<&str>) {
    let home = temp_home(parent);
    let store = Store::open(&home.path().join("state")).unwrap();
    let clock = ManualClock::new(NOW);
    let hash = "9f".repeat(32);
    let mut group = c.benchmark_group("grants");
    group.throughput(Throughput::Elements(1));
    group.bench_function(format!("mint_consume_pair_sync_full/{label}"), |b| {
        b.iter(|| {
            let grant = vouch::grants::mint(&store, &clock, "s-1", &hash, 60_000).unwrap();
            assert!(vouch::grants::consume(&store, &clock, "s-1", &grant.token, &hash).unwrap());
        });
    });
    group.finish();
}

fn per_review_on(c: &mut Criterion, label: &str, parent: Option<&str>) {
    let home = temp_home(parent);
    let store = Store::open(&home.path().join("state")).unwrap();
    let clock = ManualClock::new(NOW);
    let mut cfg = Config::defaults().unwrap();
    cfg.turn.max_reviews = u32::MAX;
    let key = TurnKey {
        session: "s-1",
        turn: "t-1",
    };
    let verdict = CachedVerdict {
        outcome: Outcome::Allow,
        risk_level: RiskLevel::Low,
        user_authorization: UserAuthorization::High,
        rationale: "the user asked for exactly this build step".into(),
        suggestion: None,
    };
    let action = ActionSummary {
        surface: "bash",
        cwd: Some("/srv/app"),
        target: "cargo build --release",
    };
    let counter = AtomicU64::new(0);
    let mut group = c.benchmark_group("session");
    group.throughput(Throughput::Elements(1));
    group.bench_function(format!("gate_then_record_verdict/{label}"), |b| {
        b.iter(|| {
            let i = counter.fetch_add(1, Ordering::Relaxed);
            let hash = format!("{i:064x}");
            let cache_key = format!("packet-{i}");
            clock.advance(1);
            let g = gate(&store, &clock, &cfg, key, &hash, Some(&cache_key)).unwrap();
            assert!(matches!(g, Gate::Review { .. }));
            record(
                &store,
                &clock,
                &cfg,
                key,
                &hash,
                ReviewEvent::Verdict {
                    verdict: &verdict,
                    cache_key: Some(&cache_key),
                    action,
                },
            )
            .unwrap();
        });
    });
    group.finish();
}

criterion_group!(benches, fsync_bound, grants, per_review);
criterion_main!(benches);
