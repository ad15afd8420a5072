//! State database throughput (design §6.3, §6.7): grant mint+consume pairs
//! at `synchronous=FULL` (beside the same file system's fsync bound,
//! `fsync/wal_frame_fdatasync`, and interleaved with it pair by pair, the
//! ratio printed on stderr; target ≥ 0.9 of it), the per-review state
//! read+update at `synchronous=NORMAL` (target median ≤ 200 µs), and the
//! whole per-review path outside the model call. Each is measured with the
//! database on the temp dir's file system (what a user gets; dominated by
//! the device's fsync latency) and, where `/dev/shm` exists, on tmpfs
//! (SQLite's own cost, fsync free).
//!
//! - `session/gate_then_record_verdict`: exactly the database work the
//!   engine does for one review — the snapshot read, the decision
//!   transaction (fresh snapshot, cache lookup, reservation) and the record
//!   transaction (verdict, cache entry) — without the pure decision table.
//! - `session/prepare_then_finish`: `Engine::prepare` + `Engine::finish` for
//!   a small bash request: project configuration, hard denies, routing, the
//!   reviewer, the packet, the decision table and the same transactions.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use vouch::clock::{Clock, ManualClock};
use vouch::config::Config;
use vouch::decision::{Outcome, ReviewStats, RiskLevel, UserAuthorization};
use vouch::engine::{Engine, EngineOptions, Prepared};
use vouch::pipeline::Effect;
use vouch::request::Request;
use vouch::reviewer::{ReviewOutcome, ReviewResult, Verdict};
use vouch::session::{self, Scope, TurnKey};
use vouch::store::{Durability, Store};

const NOW: u64 = 1_800_000_000_000;

/// Pairs run before the grant bench measures: past the WAL's first
/// automatic checkpoint (1,000 pages; a pair writes two, so 500 pairs).
const WAL_WARM_PAIRS: usize = 600;

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

/// WAL frames one grant commit appends: a mint inserts one row and a
/// consume deletes it, both in the grants table's one leaf page (the table
/// has no secondary index; `tests/it/grants.rs` checks the count).
const FRAMES_PER_COMMIT: usize = 1;

/// Bytes of one WAL frame: its 24-byte header and a 4 KiB page.
const FRAME_BYTES: usize = 24 + 4096;

/// Bytes of the WAL header before the first frame.
const WAL_HEADER_BYTES: u64 = 32;

/// Frames after which SQLite's automatic checkpoint lets the WAL restart
/// from its beginning (`wal_autocheckpoint`, 1,000 pages by default).
const WAL_FRAMES: usize = 1000;

/// The yardstick for the pairs: one durable commit's worth of I/O on the
/// same file system, exactly as a grant commit at `synchronous=FULL` does
/// it — the commit's frames (one, of 24 + 4,096 bytes) written at the next
/// frame offset of a preallocated log, then `fdatasync` — rewound to the
/// first frame every [`WAL_FRAMES`] frames, as a checkpointed WAL is
/// reused. One write per commit where SQLite makes two (header, page): the
/// syscalls are SQLite's cost, the bytes and the sync the disk's. A mint +
/// consume pair is two commits, so its bound is `1 / (2 × this)` pairs/s;
/// the README gives pairs/s as a ratio to it.
struct Probe {
    file: std::fs::File,
    frames: Vec<u8>,
    commits: u64,
}

impl Probe {
    fn new(dir: &std::path::Path) -> Probe {
        use std::io::Write;
        let mut file = std::fs::File::create(dir.join("fsync-probe")).unwrap();
        // Preallocated, as a WAL in its steady state: overwrites that do not
        // grow the file (growing ones also commit the inode).
        let log = vec![0x5au8; WAL_HEADER_BYTES as usize + WAL_FRAMES * FRAME_BYTES];
        file.write_all(&log).unwrap();
        file.sync_all().unwrap();
        Probe {
            file,
            frames: vec![0xa5u8; FRAMES_PER_COMMIT * FRAME_BYTES],
            commits: 0,
        }
    }

    fn commit(&mut self) {
        use std::os::unix::fs::FileExt;
        let commits_per_log = (WAL_FRAMES / FRAMES_PER_COMMIT) as u64;
        let slot = self.commits % commits_per_log;
        self.commits += 1;
        let offset = WAL_HEADER_BYTES + slot * self.frames.len() as u64;
        self.file.write_all_at(&self.frames, offset).unwrap();
        self.file.sync_data().unwrap();
    }
}

fn fsync_bound(c: &mut Criterion) {
    for (label, parent) in locations() {
        let home = temp_home(parent);
        let mut probe = Probe::new(home.path());
        let mut group = c.benchmark_group("fsync");
        group.throughput(Throughput::Elements(1));
        group.bench_function(format!("wal_frame_fdatasync/{label}"), |b| {
            b.iter(|| probe.commit());
        });
        group.finish();
    }
}

fn per_review(c: &mut Criterion) {
    for (label, parent) in locations() {
        per_review_on(c, label, parent);
        engine_on(c, label, parent, 0);
        engine_on(c, label, parent, FULL_CACHE);
    }
}

/// `cache.max_entries` at the most the key allows, and the cache filled to
/// it: what checking the cache's capacity costs a review of a big service
/// (before schema v3 it counted the cache on every insert).
const FULL_CACHE: u32 = 100_000;

/// The pair bench. Each measured pair is preceded by the yardstick's two
/// commits on the same file system, timed apart, so pair and bound see the
/// same disk at the same moments (a shared disk's fsync latency drifts by
/// several times within a minute); the ratio of their medians is printed
/// when the bench ends.
fn grants_on(c: &mut Criterion, label: &str, parent: Option<&str>) {
    let home = temp_home(parent);
    let store = Store::open(&home.path().join("state")).unwrap();
    let mut probe = Probe::new(home.path());
    let clock = ManualClock::new(NOW);
    let hash = "9f".repeat(32);
    let pair = || {
        let grant = vouch::grants::mint(&store, &clock, "s-1", &hash, 60_000).unwrap();
        assert!(vouch::grants::consume(&store, &clock, "s-1", &grant.token, &hash).unwrap());
    };
    let mut warm = false;
    let mut pairs = Vec::new();
    let mut bounds = Vec::new();
    let mut group = c.benchmark_group("grants");
    group.throughput(Throughput::Elements(1));
    group.bench_function(format!("mint_consume_pair_sync_full/{label}"), |b| {
        if !warm {
            // A service's WAL in its steady state, as the yardstick's file:
            // a fresh WAL grows (each commit then also commits the file's
            // new size) until SQLite's first automatic checkpoint; after
            // it, commits overwrite the same 4 MiB.
            for _ in 0..WAL_WARM_PAIRS {
                pair();
            }
            warm = true;
        }
        b.iter_custom(|iters| {
            let mut total = Duration::ZERO;
            for _ in 0..iters {
                let start = Instant::now();
                probe.commit();
                probe.commit();
                let mid = Instant::now();
                pair();
                let spent = mid.elapsed();
                bounds.push(mid - start);
                pairs.push(spent);
                total += spent;
            }
            total
        });
    });
    group.finish();
    if let (Some(pair), Some(bound)) = (median(&mut pairs), median(&mut bounds)) {
        eprintln!(
            "grants/{label}: {} pairs, each after two one-frame fdatasync commits on the same \
             file system: pair median {:.1} µs, bound (two commits) median {:.1} µs, \
             ratio bound / pair {:.2}",
            pairs.len(),
            pair.as_secs_f64() * 1e6,
            bound.as_secs_f64() * 1e6,
            bound.as_secs_f64() / pair.as_secs_f64(),
        );
    }
}

fn median(samples: &mut [Duration]) -> Option<Duration> {
    samples.sort_unstable();
    samples.get(samples.len() / 2).copied()
}

fn verdict() -> Verdict {
    Verdict {
        outcome: Outcome::Allow,
        risk_level: RiskLevel::Low,
        user_authorization: UserAuthorization::High,
        rationale: "the user asked for exactly this build step".into(),
        suggestion: None,
    }
}

fn per_review_on(c: &mut Criterion, label: &str, parent: Option<&str>) {
    let home = temp_home(parent);
    let store = Store::open(&home.path().join("state")).unwrap();
    let clock = ManualClock::new(NOW);
    let cfg = Config::defaults().unwrap();
    let counter = AtomicU64::new(0);
    let mut group = c.benchmark_group("session");
    group.throughput(Throughput::Elements(1));
    group.bench_function(format!("gate_then_record_verdict/{label}"), |b| {
        b.iter(|| {
            let i = counter.fetch_add(1, Ordering::Relaxed);
            // A fresh turn now and then keeps the budget from running out,
            // as real turns do.
            let turn = format!("t-{}", i / 500);
            let key = TurnKey {
                session: "s-1",
                turn: &turn,
            };
            let hash = format!("{i:064x}");
            let cache_key = format!("packet-{i}");
            clock.advance(1);
            let now = clock.now_ms();
            let scope = Scope {
                key,
                request_hash: &hash,
                now,
            };
            store
                .read(|tx| session::read_snapshot(tx, key, &hash, now))
                .unwrap();
            store
                .write(Durability::Normal, |tx| {
                    session::read_snapshot(tx, key, &hash, now)?;
                    assert!(session::cache_lookup(tx, &cache_key, now)?.is_none());
                    session::apply(tx, scope, &[Effect::ReserveReview])
                })
                .unwrap();
            let record = [
                Effect::CountVerdict {
                    outcome: Outcome::Allow,
                    breaker: cfg.breaker.clone(),
                },
                Effect::CacheVerdict {
                    key: cache_key.clone(),
                    verdict: verdict(),
                    expires_at_ms: now + cfg.cache.ttl_ms,
                    max_entries: cfg.cache.max_entries,
                },
            ];
            store
                .write(Durability::Normal, |tx| session::apply(tx, scope, &record))
                .unwrap();
        });
    });
    group.finish();
}

/// `entries` cache rows expiring an hour after the bench starts, older than
/// any the bench adds: each review then evicts one of them.
fn fill_cache(engine: &Engine, entries: u32) {
    if entries == 0 {
        return;
    }
    let at = i64::try_from(NOW).unwrap();
    engine
        .store()
        .unwrap()
        .write(Durability::Normal, |tx| {
            let mut insert = tx.prepare(
                "INSERT INTO verdict_cache VALUES (?1, 'allow', 'low', 'unknown', 'bench', NULL, ?2, ?3)",
            )?;
            for i in 0..entries {
                insert.execute(vouch::store::sql::params![
                    format!("{i:064x}"),
                    at,
                    at + 3_600_000
                ])?;
            }
            Ok(())
        })
        .unwrap();
}

fn engine_on(c: &mut Criterion, label: &str, parent: Option<&str>, cached: u32) {
    let home = temp_home(parent);
    let clock = Arc::new(ManualClock::new(NOW));
    let mut cfg = Config::defaults().unwrap();
    cfg.reviewer.provider = vouch::config::Provider::Openai;
    let name = if cached > 0 {
        cfg.cache.max_entries = cached;
        format!("prepare_then_finish_cache_{cached}/{label}")
    } else {
        format!("prepare_then_finish/{label}")
    };
    let mut options = EngineOptions::isolated(home.path(), &cfg).unwrap();
    options.clock = clock.clone();
    let engine = Engine::new(options).unwrap();
    fill_cache(&engine, cached);
    let result = ReviewResult {
        outcome: ReviewOutcome::Verdict(verdict()),
        stats: ReviewStats {
            model: "bench".into(),
            calls: 1,
            ..ReviewStats::default()
        },
    };
    let counter = AtomicU64::new(0);
    let mut group = c.benchmark_group("session");
    group.throughput(Throughput::Elements(1));
    group.bench_function(name, |b| {
        b.iter(|| {
            let i = counter.fetch_add(1, Ordering::Relaxed);
            clock.advance(1);
            let v = serde_json::json!({
                "session_id": "s-1", "turn_id": format!("t-{}", i / 10),
                "surface": "bash", "tool": "Bash", "command": format!("cargo build -p crate{i}"),
                "cwd": "/srv/app", "home": "/home/dev",
                "transcript": [{"role": "user", "text": "build it"}],
            });
            let request = Request::from_slice(v.to_string().as_bytes()).unwrap();
            match engine.prepare(request) {
                Prepared::Review(pending) => {
                    engine.finish(*pending, result.clone());
                }
                Prepared::Decided(d) => panic!("expected a review, got {d:?}"),
            }
        });
    });
    group.finish();
}

criterion_group!(benches, fsync_bound, grants, per_review);
criterion_main!(benches);
