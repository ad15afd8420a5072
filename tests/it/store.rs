//! The state database's guarantees: private modes, corruption reported and
//! left untouched, state surviving a restart, and a database that stays
//! intact when a writer is killed mid-loop.

use std::io::{BufRead, BufReader};
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::Arc;

use crate::support::state::{NOW, engine, failure, gate, request, review_with, verdict};
use vouch::clock::ManualClock;
use vouch::decision::{Outcome, RiskLevel};
use vouch::engine::Engine;
use vouch::session::overrides::{Selector, approve};
use vouch::session::{TurnKey, turn_status};
use vouch::store::{DATABASE_FILE, Durability, Store, StoreError};

const KEY: TurnKey<'static> = TurnKey {
    session: "s-1",
    turn: "t-1",
};

/// A directory made the way vouch makes its state directory (`0700`).
fn private_dir(path: &Path) {
    std::fs::create_dir(path).unwrap();
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o700)).unwrap();
}

fn mode(path: &Path) -> u32 {
    std::fs::metadata(path).unwrap().permissions().mode() & 0o7777
}

/// An engine whose state directory is `<home>/state`.
fn engine_at(home: &Path) -> (Engine, Arc<ManualClock>) {
    let clock = Arc::new(ManualClock::new(NOW));
    (
        engine(home, &clock, &crate::support::state::config()),
        clock,
    )
}

/// A model denial (with its summary and cache entry) and a grant.
fn write_some_state(engine: &Engine, clock: &ManualClock) {
    review_with(
        engine,
        request("t-1", "aa"),
        verdict(Outcome::Deny, RiskLevel::High, "force-pushes over main"),
    );
    let store = engine.store().unwrap();
    let hash = request("t-1", "aa").request_hash();
    vouch::grants::mint(&store, clock, "s-1", &hash, 60_000).unwrap();
}

#[test]
fn state_dir_is_0700_and_database_files_0600() {
    let home = tempfile::tempdir().unwrap();
    let deep = home.path().join("deep");
    let (engine, clock) = engine_at(&deep);
    write_some_state(&engine, &clock);
    let store = engine.store().unwrap();
    let dir = deep.join("state");
    assert_eq!(mode(&dir), 0o700);
    let db = dir.join(DATABASE_FILE);
    assert_eq!(store.path(), Some(db.as_path()));
    for suffix in ["", "-wal", "-shm"] {
        let path = Path::new(&format!("{}{suffix}", db.display())).to_path_buf();
        assert!(path.exists(), "{} should exist while open", path.display());
        assert_eq!(mode(&path), 0o600, "{}", path.display());
    }
}

/// Every command treats the state directory alike: a directory or file open
/// to group or others is refused, naming the `chmod` that fixes it, and is
/// left as it was.
#[test]
fn looser_existing_modes_are_refused_naming_the_fix() {
    let home = tempfile::tempdir().unwrap();
    let dir = home.path().join("state");
    std::fs::create_dir(&dir).unwrap();
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o755)).unwrap();
    let db = dir.join(DATABASE_FILE);
    std::fs::write(&db, b"").unwrap();
    std::fs::set_permissions(&db, std::fs::Permissions::from_mode(0o644)).unwrap();
    let err = Store::open(&dir).unwrap_err();
    assert!(matches!(err, StoreError::TooOpen { .. }), "{err}");
    let message = err.to_string();
    assert!(message.contains("mode 0755"), "{message}");
    assert!(message.contains("(chmod 700 `"), "{message}");
    assert_eq!(mode(&dir), 0o755, "refused, not tightened");
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o700)).unwrap();
    let message = Store::open(&dir).unwrap_err().to_string();
    assert!(message.contains("mode 0644"), "{message}");
    assert!(message.contains("(chmod 600 `"), "{message}");
    assert_eq!(mode(&db), 0o644);
    std::fs::set_permissions(&db, std::fs::Permissions::from_mode(0o600)).unwrap();
    let store = Store::open(&dir).unwrap();
    store.verify_file_modes().unwrap();
    // The service's token files follow the same rule.
    let tokens = dir.join("adapter.token");
    vouch::http::Tokens::load_or_create(&dir).unwrap();
    std::fs::set_permissions(&tokens, std::fs::Permissions::from_mode(0o640)).unwrap();
    let message = vouch::http::Tokens::load_or_create(&dir)
        .unwrap_err()
        .to_string();
    assert!(message.contains("adapter.token"), "{message}");
    assert!(message.contains("(chmod 600 `"), "{message}");
}

#[test]
fn symlinked_state_is_refused() {
    let home = tempfile::tempdir().unwrap();
    let real = home.path().join("real");
    private_dir(&real);
    let link = home.path().join("state");
    std::os::unix::fs::symlink(&real, &link).unwrap();
    assert!(matches!(
        Store::open(&link).unwrap_err(),
        StoreError::Symlink { .. }
    ));
    let dir = home.path().join("state2");
    private_dir(&dir);
    std::os::unix::fs::symlink(real.join("elsewhere.sqlite"), dir.join(DATABASE_FILE)).unwrap();
    let err = Store::open(&dir).unwrap_err();
    assert!(matches!(err, StoreError::Symlink { .. }), "{err}");
    assert!(!real.join("elsewhere.sqlite").exists());
}

fn assert_corrupt_and_untouched(contents: &[u8]) {
    let home = tempfile::tempdir().unwrap();
    let dir = home.path().join("state");
    private_dir(&dir);
    let db = dir.join(DATABASE_FILE);
    std::fs::write(&db, contents).unwrap();
    std::fs::set_permissions(&db, std::fs::Permissions::from_mode(0o600)).unwrap();
    let err = Store::open(&dir).unwrap_err();
    match &err {
        StoreError::Corrupt { path, .. } => assert!(path.ends_with(DATABASE_FILE)),
        other => panic!("expected Corrupt, got {other:?}"),
    }
    let message = err.to_string();
    assert!(message.contains("corrupt"), "{message}");
    assert!(message.contains("left untouched"), "{message}");
    assert_eq!(std::fs::read(&db).unwrap(), contents, "file was modified");
    // Opening again reports the same and still changes nothing.
    assert!(matches!(
        Store::open(&dir).unwrap_err(),
        StoreError::Corrupt { .. }
    ));
    assert_eq!(std::fs::read(&db).unwrap(), contents);
}

#[test]
fn garbage_file_is_reported_corrupt_and_left_byte_identical() {
    let garbage: Vec<u8> = (0..16_384u32).map(|i| (i * 7 + 3) as u8).collect();
    assert_corrupt_and_untouched(&garbage);
}

#[test]
fn damaged_real_database_is_reported_corrupt_and_left_byte_identical() {
    let home = tempfile::tempdir().unwrap();
    let dir = home.path().join("state");
    {
        let (engine, clock) = engine_at(home.path());
        write_some_state(&engine, &clock);
    }
    // vouch's connections skip SQLite's checkpoint on close (a short-lived
    // hook process must not fsync after its reply), so the pages are still
    // in the WAL: fold them into the file, then damage real pages.
    let conn = rusqlite::Connection::open(dir.join(DATABASE_FILE)).unwrap();
    conn.query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |_| Ok(()))
        .unwrap();
    drop(conn);
    let mut bytes = std::fs::read(dir.join(DATABASE_FILE)).unwrap();
    assert!(bytes.len() > 4096, "expected a checkpointed database");
    // Keep the 100-byte header, wreck the schema page and everything after.
    for b in bytes.iter_mut().skip(100) {
        *b = 0xA5;
    }
    assert_corrupt_and_untouched(&bytes);
}

#[test]
fn state_survives_a_restart() {
    let home = tempfile::tempdir().unwrap();
    let cfg = crate::support::state::config();
    {
        let (engine, clock) = engine_at(home.path());
        write_some_state(&engine, &clock);
        approve(
            &engine.store().unwrap(),
            &*clock,
            &cfg,
            "s-1",
            &Selector::Index(1),
        )
        .unwrap();
    }
    let (engine, _clock) = engine_at(home.path());
    let store = engine.store().unwrap();
    let status = turn_status(&store, &cfg, KEY).unwrap();
    assert_eq!(status.reviews, 1);
    assert_eq!(status.denials, 1);
    assert_eq!(status.consecutive_denials, 1);
    // The approval made before the restart is still pending, once.
    assert!(gate(&engine, request("t-2", "aa")).has_override());
    // Spent: the next retry gets the cached denial again.
    assert_eq!(
        gate(&engine, request("t-2", "aa")).stage(),
        vouch::decision::Stage::Cache
    );
    assert_eq!(store.integrity_check().unwrap(), vec!["ok".to_owned()]);
}

#[test]
fn many_threads_share_one_store() {
    let home = tempfile::tempdir().unwrap();
    let mut cfg = crate::support::state::config();
    cfg.turn.max_failures = 1_000;
    cfg.turn.max_reviews = 1_000;
    let engine = engine(home.path(), &Arc::new(ManualClock::new(NOW)), &cfg);
    let handles: Vec<_> = (0..16)
        .map(|t| {
            let engine = engine.clone();
            std::thread::spawn(move || {
                for i in 0..25 {
                    review_with(&engine, request("t-1", &format!("{t}-{i}")), failure());
                }
            })
        })
        .collect();
    for h in handles {
        h.join().unwrap();
    }
    let status = turn_status(&engine.store().unwrap(), &cfg, KEY).unwrap();
    assert_eq!((status.reviews, status.failures), (400, 400));
}

/// Queued writes that wait together (here: behind a transaction that holds
/// the write connection) are committed by the recorder thread, each in its
/// own savepoint: the one that fails leaves nothing behind and gets its
/// error; every other is committed and told so.
#[test]
fn queued_writes_waiting_together_commit_or_fail_one_by_one() {
    let home = tempfile::tempdir().unwrap();
    let dir = home.path().join("state");
    let store = Arc::new(Store::open(&dir).unwrap());
    store
        .write(Durability::Normal, |tx| {
            tx.execute("CREATE TABLE queued_test (n INTEGER NOT NULL)", &[])
                .map(drop)
        })
        .unwrap();
    let (held, hold) = std::sync::mpsc::channel();
    let holder = {
        let store = Arc::clone(&store);
        std::thread::spawn(move || {
            store
                .write(Durability::Normal, |tx| {
                    tx.execute("INSERT INTO queued_test (n) VALUES (-1)", &[])?;
                    held.send(()).unwrap();
                    std::thread::sleep(std::time::Duration::from_millis(300));
                    Ok(())
                })
                .unwrap();
        })
    };
    hold.recv().unwrap();
    let writers: Vec<_> = (0..12i64)
        .map(|n| {
            let store = Arc::clone(&store);
            std::thread::spawn(move || {
                let durability = if n == 5 {
                    Durability::Full
                } else {
                    Durability::Normal
                };
                store
                    .write_queued(
                        durability,
                        Box::new(move |tx| {
                            tx.execute("INSERT INTO queued_test (n) VALUES (?1)", &[&n])?;
                            if n == 7 {
                                tx.execute("INSERT INTO no_such_table (n) VALUES (1)", &[])?;
                            }
                            Ok(())
                        }),
                    )
                    .blocking_recv()
                    .expect("the recorder answers every queued write")
            })
        })
        .collect();
    let outcomes: Vec<_> = writers.into_iter().map(|w| w.join().unwrap()).collect();
    holder.join().unwrap();
    for (n, outcome) in outcomes.iter().enumerate() {
        match (n, outcome) {
            (7, Err(e)) => assert!(e.to_string().contains("no_such_table"), "{e}"),
            (7, Ok(())) => panic!("the failing write reported success"),
            (_, Ok(())) => {}
            (n, Err(e)) => panic!("write {n} failed: {e}"),
        }
    }
    let written: Vec<i64> = store
        .read(|tx| {
            tx.query_all("SELECT n FROM queued_test ORDER BY n", &[], |row| {
                row.get(0)
            })
        })
        .unwrap();
    let expected: Vec<i64> = std::iter::once(-1)
        .chain((0..12).filter(|n| *n != 7))
        .collect();
    assert_eq!(written, expected);
}

const KILL_ENV: &str = "VOUCH_TEST_KILL_LOOP_DIR";
/// Reviews per turn in the write loop, below `turn.max_reviews`.
const PER_TURN: u64 = 500;

/// Child of `kill_nine_mid_write_leaves_an_intact_database`: reviews (each
/// with its cache entry) and grant mint+consume pairs, forever.
#[test]
#[ignore = "child process of kill_nine_mid_write_leaves_an_intact_database"]
fn write_loop_child() {
    let Ok(home) = std::env::var(KILL_ENV) else {
        return;
    };
    let clock = Arc::new(ManualClock::new(NOW));
    let mut cfg = crate::support::state::config();
    cfg.turn.max_reviews = 1_000;
    let engine = engine(Path::new(&home), &clock, &cfg);
    let store = engine.store().unwrap();
    for i in 0u64.. {
        let r = request(&format!("t-{}", i / PER_TURN), &format!("{i}"));
        let hash = r.request_hash();
        review_with(&engine, r, verdict(Outcome::Allow, RiskLevel::Low, "fine"));
        let grant = vouch::grants::mint(&store, &*clock, "s-1", &hash, 60_000).unwrap();
        vouch::grants::consume(&store, &*clock, "s-1", &grant.token, &hash).unwrap();
        clock.advance(1);
        if i == 50 {
            println!("\nREADY");
        }
    }
}

#[test]
fn kill_nine_mid_write_leaves_an_intact_database() {
    let home = tempfile::tempdir().unwrap();
    let dir = home.path().join("state");
    drop(Store::open(&dir).unwrap());
    let mut child = Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "store::write_loop_child",
            "--nocapture",
            "--include-ignored",
            "--test-threads=1",
        ])
        .env(KILL_ENV, home.path())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let stdout = child.stdout.take().unwrap();
    let mut lines = BufReader::new(stdout).lines();
    // Killed the moment it says it is writing, so the kill lands mid-loop.
    assert!(
        lines.any(|l| l.map(|l| l == "READY").unwrap_or(false)),
        "child never became ready"
    );
    child.kill().unwrap(); // SIGKILL on Unix
    let status = child.wait().unwrap();
    assert!(!status.success());
    let store = Store::open(&dir).unwrap();
    assert_eq!(store.integrity_check().unwrap(), vec!["ok".to_owned()]);
    let conn = rusqlite::Connection::open(dir.join(DATABASE_FILE)).unwrap();
    let (reviews, verdicts): (i64, i64) = conn
        .query_row(
            "SELECT sum(reviews), sum(verdicts) FROM turn_state",
            [],
            |row| Ok((row.get(0)?, row.get(1)?)),
        )
        .unwrap();
    assert!(verdicts > 50, "{verdicts}");
    // Every committed verdict was reserved first; at most the one killed
    // between reservation and record is reserved but unrecorded.
    assert!(
        reviews >= verdicts && reviews <= verdicts + 1,
        "{reviews} {verdicts}"
    );
}

#[test]
fn a_database_from_a_newer_vouch_is_refused_and_left_alone() {
    let home = tempfile::tempdir().unwrap();
    let dir = home.path().join("state");
    drop(Store::open(&dir).unwrap());
    let db = dir.join(DATABASE_FILE);
    {
        let conn = rusqlite::Connection::open(&db).unwrap();
        conn.pragma_update(None, "user_version", 99).unwrap();
    }
    let before = std::fs::read(&db).unwrap();
    let err = Store::open(&dir).unwrap_err();
    assert!(matches!(err, StoreError::Migration { .. }), "{err}");
    assert!(err.to_string().contains("cannot migrate"), "{err}");
    assert_eq!(std::fs::read(&db).unwrap(), before);
}

#[test]
fn schema_v3_starts_the_cache_size_row_from_the_rows_already_cached() {
    let home = tempfile::tempdir().unwrap();
    let dir = home.path().join("state");
    drop(Store::open(&dir).unwrap());
    {
        // Back to schema v2, with two entries a v2 vouch cached.
        let conn = rusqlite::Connection::open(dir.join(DATABASE_FILE)).unwrap();
        conn.execute_batch(
            "DROP TRIGGER verdict_cache_inserted; DROP TRIGGER verdict_cache_deleted; \
             DROP TABLE verdict_cache_size; DROP TABLE recorded_prompts; \
             PRAGMA user_version = 2;",
        )
        .unwrap();
        for key in ["k1", "k2"] {
            conn.execute(
                "INSERT INTO verdict_cache VALUES (?1, 'allow', 'low', 'unknown', 'r', NULL, 1, 2)",
                [key],
            )
            .unwrap();
        }
    }
    let store = Store::open(&dir).unwrap();
    let entries: i64 = store
        .read(|tx| tx.query_one("SELECT entries FROM verdict_cache_size", &[], |r| r.get(0)))
        .unwrap();
    assert_eq!(entries, 2);
}

#[test]
fn schema_v4_adds_the_prompt_table_to_a_v3_database() {
    let home = tempfile::tempdir().unwrap();
    let dir = home.path().join("state");
    drop(Store::open(&dir).unwrap());
    {
        // Back to schema v3, as a v3 vouch left it.
        let conn = rusqlite::Connection::open(dir.join(DATABASE_FILE)).unwrap();
        conn.execute_batch("DROP TABLE recorded_prompts; PRAGMA user_version = 3;")
            .unwrap();
    }
    let store = Store::open(&dir).unwrap();
    let rows: i64 = store
        .read(|tx| tx.query_one("SELECT count(*) FROM recorded_prompts", &[], |r| r.get(0)))
        .unwrap();
    assert_eq!(rows, 0);
}
