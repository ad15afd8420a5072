//! Analyses one command line (the first argument, or standard input) and
//! prints how long it took, the units found and what was incomplete:
//!
//! ```text
//! cargo run --release -p vouch-shell --example analyze -- 'rm -rf ~'
//! VOUCH_NO_DEADLINE=1 cargo run --release -p vouch-shell --example analyze < deep.sh
//! VOUCH_STACK_KIB=2048 cargo run --release -p vouch-shell --example analyze < deep.sh
//! ```
//!
//! With `VOUCH_NO_DEADLINE` set, the wall-clock backstops are lifted, so
//! what bounds the work is the deterministic budgets alone. With
//! `VOUCH_STACK_KIB` the analysis runs on a thread with that much stack
//! (tokio's workers, where `vouch serve` analyses, have 2048).

use std::io::Read as _;
use std::time::Instant;

use vouch_shell::{Limits, ShellEnv, analyze};

fn main() -> std::io::Result<()> {
    let command = match std::env::args().nth(1) {
        Some(command) => command,
        None => {
            let mut text = String::new();
            std::io::stdin().read_to_string(&mut text)?;
            text
        }
    };
    let mut limits = Limits::DEFAULT;
    if std::env::var_os("VOUCH_NO_DEADLINE").is_some() {
        limits.parse_timeout_us = u64::MAX / 4;
        limits.analysis_timeout_us = u64::MAX / 4;
    }
    let stack = std::env::var("VOUCH_STACK_KIB")
        .ok()
        .and_then(|k| k.parse::<usize>().ok());
    let (analysis, took) = match stack {
        Some(kib) => {
            let command = command.clone();
            std::thread::Builder::new()
                .stack_size(kib << 10)
                .spawn(move || timed(&command, &limits))?
                .join()
                .map_err(|_| std::io::Error::other("the analysis thread panicked"))?
        }
        None => timed(&command, &limits),
    };
    println!("{} bytes, {:?}", command.len(), took);
    println!(
        "{} commands, {} errors",
        analysis.commands.len(),
        analysis.errors.len()
    );
    if std::env::var_os("VOUCH_UNITS").is_some() {
        for c in &analysis.commands {
            println!(
                "unit: {:?} (parent {:?}, origin {:?})",
                c.argv, c.parent, c.origin
            );
        }
    }
    for i in &analysis.incomplete {
        println!("incomplete: {}: {}", i.budget, i.detail);
    }
    Ok(())
}

/// The analysis of `command` and how long it took.
fn timed(command: &str, limits: &Limits) -> (vouch_shell::Analysis, std::time::Duration) {
    let env = ShellEnv {
        cwd: Some("/home/dev/project"),
        home: "/home/dev",
        vars: &[],
    };
    let start = Instant::now();
    let analysis = analyze(command, &env, limits);
    (analysis, start.elapsed())
}
