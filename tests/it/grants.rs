//! One-use grants (design §6.7): exactly once, only for the same session and
//! an identical request, only before expiry — across threads and processes.

use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};
use std::sync::{Arc, Barrier};

use vouch::clock::ManualClock;
use vouch::grants::{consume, mint};
use vouch::request::Request;
use vouch::store::Store;

const NOW: u64 = 1_800_000_000_000;
const TTL: u64 = 60_000;

fn base_request() -> Request {
    Request::from_slice(
        br#"{"session_id":"s-1","turn_id":"t-1","agent":"main","surface":"network",
            "tool":"sandbox","command":"npm install","cwd":"/srv/app","path":"/srv/app/node_modules",
            "destination":"registry.npmjs.org:443","input":{"op":"connect"}}"#,
    )
    .unwrap()
}

fn open() -> (tempfile::TempDir, Store, ManualClock) {
    let home = tempfile::tempdir().unwrap();
    let store = Store::open(&home.path().join("state")).unwrap();
    (home, store, ManualClock::new(NOW))
}

#[test]
fn consumes_once_then_never_again() {
    let (_home, store, clock) = open();
    let hash = base_request().request_hash();
    let grant = mint(&store, &clock, "s-1", &hash, TTL).unwrap();
    assert_eq!(grant.token.len(), 43);
    assert!(!grant.token.contains('='));
    assert_eq!(grant.expires_at_ms, NOW + TTL);
    assert!(consume(&store, &clock, "s-1", &grant.token, &hash).unwrap());
    assert!(!consume(&store, &clock, "s-1", &grant.token, &hash).unwrap());
}

#[test]
fn any_changed_field_fails_and_does_not_spend_the_grant() {
    let (_home, store, clock) = open();
    let base = base_request();
    let hash = base.request_hash();
    let grant = mint(&store, &clock, "s-1", &hash, TTL).unwrap();
    let variants: Vec<(&str, Request)> = vec![
        ("command", {
            let mut r = base.clone();
            r.command = Some("npm install evil".into());
            r
        }),
        ("cwd", {
            let mut r = base.clone();
            r.cwd = Some("/srv/other".into());
            r
        }),
        ("path", {
            let mut r = base.clone();
            r.path = Some("/srv/app/.env".into());
            r
        }),
        ("destination", {
            let mut r = base.clone();
            r.destination = Some("evil.example:443".into());
            r
        }),
        ("agent", {
            let mut r = base.clone();
            r.agent = Some("subagent".into());
            r
        }),
        ("input", {
            let mut r = base.clone();
            r.input = Some(serde_json::json!({"op": "connect", "extra": true}));
            r
        }),
    ];
    for (field, variant) in variants {
        let changed = variant.request_hash();
        assert_ne!(changed, hash, "changing `{field}` must change the hash");
        assert!(
            !consume(&store, &clock, "s-1", &grant.token, &changed).unwrap(),
            "a grant must not be consumed with a changed `{field}`"
        );
    }
    assert!(!consume(&store, &clock, "s-other", &grant.token, &hash).unwrap());
    assert!(!consume(&store, &clock, "s-1", "not-a-token", &hash).unwrap());
    assert!(!consume(&store, &clock, "s-1", &"A".repeat(43), &hash).unwrap());
    // None of the failed attempts spent it.
    assert!(consume(&store, &clock, "s-1", &grant.token, &hash).unwrap());
}

#[test]
fn expired_grants_fail_and_are_pruned() {
    let (_home, store, clock) = open();
    let hash = base_request().request_hash();
    let grant = mint(&store, &clock, "s-1", &hash, TTL).unwrap();
    clock.advance(TTL);
    assert!(!consume(&store, &clock, "s-1", &grant.token, &hash).unwrap());
    // Just before expiry it still works.
    let clock = ManualClock::new(NOW);
    let grant = mint(&store, &clock, "s-1", &hash, TTL).unwrap();
    clock.advance(TTL - 1);
    assert!(consume(&store, &clock, "s-1", &grant.token, &hash).unwrap());
}

/// Bytes one WAL frame takes: a 24-byte header and a 4 KiB page.
const WAL_FRAME_BYTES: u64 = 24 + 4096;

fn wal_len(home: &tempfile::TempDir) -> u64 {
    std::fs::metadata(home.path().join("state").join("vouch.sqlite-wal"))
        .unwrap()
        .len()
}

/// The grant bench's yardstick (`benches/state.rs`) is one frame and one
/// `fdatasync` a commit; a mint or a consume that touched a second page
/// (an index, a prune that deleted nothing) would make it an unfair one.
#[test]
fn a_mint_and_a_consume_each_append_one_log_frame() {
    let (home, store, clock) = open();
    let hash = base_request().request_hash();
    let first = mint(&store, &clock, "s-1", &hash, TTL).unwrap();
    let before = wal_len(&home);
    let second = mint(&store, &clock, "s-1", &hash, TTL).unwrap();
    let minted = wal_len(&home);
    assert!(consume(&store, &clock, "s-1", &first.token, &hash).unwrap());
    let consumed = wal_len(&home);
    assert_eq!(minted - before, WAL_FRAME_BYTES, "a mint's frames");
    assert_eq!(consumed - minted, WAL_FRAME_BYTES, "a consume's frames");
    assert!(consume(&store, &clock, "s-1", &second.token, &hash).unwrap());
}

#[test]
fn expired_grants_are_deleted_by_a_later_mint() {
    let (home, store, clock) = open();
    let hash = base_request().request_hash();
    mint(&store, &clock, "s-1", &hash, TTL).unwrap();
    let rows = || {
        let conn =
            rusqlite::Connection::open(home.path().join("state").join("vouch.sqlite")).unwrap();
        conn.query_row("SELECT count(*) FROM grants", [], |row| {
            row.get::<_, i64>(0)
        })
        .unwrap()
    };
    assert_eq!(rows(), 1);
    // Mints prune at most once a minute per process (other tests' mints in
    // this process claim the same slot), so a few mints a prune interval
    // apart, each after the first grant expired: one of them prunes.
    let mut kept = Vec::new();
    for _ in 0..4 {
        clock.advance(TTL + vouch::grants::GRANT_PRUNE_EVERY_MS);
        kept.push(mint(&store, &clock, "s-1", &hash, TTL).unwrap());
        if rows() == 1 {
            break;
        }
    }
    // Only the newest grant is left: every older one had expired.
    assert_eq!(rows(), 1);
    let newest = kept.last().unwrap();
    assert!(consume(&store, &clock, "s-1", &newest.token, &hash).unwrap());
}

#[test]
fn sixty_four_threads_racing_on_one_grant_yield_exactly_one_winner() {
    let (_home, store, clock) = open();
    let store = Arc::new(store);
    let clock = Arc::new(clock);
    let hash = base_request().request_hash();
    let grant = mint(&store, &*clock, "s-1", &hash, TTL).unwrap();
    let barrier = Arc::new(Barrier::new(64));
    let handles: Vec<_> = (0..64)
        .map(|_| {
            let (store, clock, barrier) = (store.clone(), clock.clone(), barrier.clone());
            let (token, hash) = (grant.token.clone(), hash.clone());
            std::thread::spawn(move || {
                barrier.wait();
                consume(&store, &*clock, "s-1", &token, &hash).unwrap()
            })
        })
        .collect();
    let wins = handles
        .into_iter()
        .map(|h| h.join().unwrap())
        .filter(|&won| won)
        .count();
    assert_eq!(wins, 1);
}

const CHILD_ENV: &str = "VOUCH_TEST_GRANT_RACE";

/// Child side of the multi-process race: opens the store, says `READY`,
/// waits for the parent's go (a line on stdin), consumes once, prints the
/// result.
#[test]
#[ignore = "child process of eight_processes_racing_on_one_grant_yield_exactly_one_winner"]
fn grant_race_child() {
    let Ok(spec) = std::env::var(CHILD_ENV) else {
        return;
    };
    let parts: Vec<&str> = spec.split('|').collect();
    let (dir, token, hash) = (parts[0], parts[1], parts[2]);
    let store = Store::open(std::path::Path::new(dir)).unwrap();
    let clock = ManualClock::new(NOW);
    // A leading newline: libtest has already printed `test name ... `.
    println!("\nREADY");
    let mut go = String::new();
    std::io::stdin().read_line(&mut go).unwrap();
    let won = consume(&store, &clock, "s-1", token, hash).unwrap();
    println!("\nCONSUMED={won}");
}

#[test]
fn eight_processes_racing_on_one_grant_yield_exactly_one_winner() {
    let (home, store, clock) = open();
    let hash = base_request().request_hash();
    let grant = mint(&store, &clock, "s-1", &hash, TTL).unwrap();
    let spec = format!(
        "{}|{}|{}",
        home.path().join("state").display(),
        grant.token,
        hash
    );
    let mut children: Vec<_> = (0..8)
        .map(|_| {
            Command::new(std::env::current_exe().unwrap())
                .args([
                    "--exact",
                    "grants::grant_race_child",
                    "--nocapture",
                    "--include-ignored",
                    "--test-threads=1",
                ])
                .env(CHILD_ENV, &spec)
                .stdin(Stdio::piped())
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    // Every child has opened the store and waits: let them all go at once.
    let mut outputs: Vec<_> = children
        .iter_mut()
        .map(|child| {
            let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
            assert!(
                lines.by_ref().map_while(Result::ok).any(|l| l == "READY"),
                "a child never became ready"
            );
            lines
        })
        .collect();
    for child in &mut children {
        child.stdin.take().unwrap().write_all(b"go\n").unwrap();
    }
    let mut results = Vec::new();
    for (child, lines) in children.into_iter().zip(outputs.iter_mut()) {
        let line = lines
            .map_while(Result::ok)
            .find(|l| l.starts_with("CONSUMED="))
            .expect("child printed no result");
        let output = child.wait_with_output().unwrap();
        assert!(
            output.status.success(),
            "child failed: {}",
            String::from_utf8_lossy(&output.stderr)
        );
        results.push(line == "CONSUMED=true");
    }
    assert_eq!(results.len(), 8);
    assert_eq!(results.iter().filter(|&&won| won).count(), 1, "{results:?}");
}
