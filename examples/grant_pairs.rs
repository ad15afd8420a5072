//! Grant mint + consume pairs on their own, for syscall and instruction
//! counts of one pair (the criterion benchmark `benches/state.rs` times the
//! same pairs beside the disk's fsync bound):
//!
//! ```text
//! cargo build --release --example grant_pairs
//! strace -f -c target/release/examples/grant_pairs DIR 1000
//! strace -f -T -e trace=pwrite64,fdatasync,fsync,fcntl target/release/examples/grant_pairs DIR 3
//! valgrind --tool=callgrind target/release/examples/grant_pairs /dev/shm/x 1000
//! ```
//!
//! `DIR` is the state directory (created; use a fresh one, or one of an
//! earlier run to start from a warm WAL); `PAIRS` pairs run after 600
//! warm-up pairs (past the WAL's first automatic checkpoint, as in the
//! bench), and the warm-up is marked on stderr so a trace can be cut there.
//! Prints the wall time per pair (a hint only; read the counts).

use std::time::Instant;

use anyhow::{Context as _, bail};
use vouch::clock::ManualClock;
use vouch::store::Store;

const WARM_PAIRS: usize = 600;

fn main() -> anyhow::Result<()> {
    let mut args = std::env::args().skip(1);
    let (Some(dir), Some(pairs)) = (args.next(), args.next()) else {
        bail!("usage: grant_pairs DIR PAIRS");
    };
    let pairs: usize = pairs.parse().context("PAIRS")?;
    let store = Store::open(std::path::Path::new(&dir))?;
    let clock = ManualClock::new(1_800_000_000_000);
    let hash = "9f".repeat(32);
    let pair = || -> anyhow::Result<()> {
        let grant = vouch::grants::mint(&store, &clock, "s-1", &hash, 60_000)?;
        if !vouch::grants::consume(&store, &clock, "s-1", &grant.token, &hash)? {
            bail!("a fresh grant did not consume");
        }
        Ok(())
    };
    for _ in 0..WARM_PAIRS {
        pair()?;
    }
    // A marker a trace can be cut at (`write(2, "measured …`).
    eprintln!("measured pairs start");
    let start = Instant::now();
    for _ in 0..pairs {
        pair()?;
    }
    let spent = start.elapsed();
    eprintln!("measured pairs end");
    let per_pair = spent.as_secs_f64() * 1e6 / pairs.max(1) as f64;
    println!("{pairs} pairs in {spent:.2?}: {per_pair:.1} µs a pair");
    Ok(())
}
