//! Analyses one command line (the first argument, or standard input) and
//! prints how long it took, the units found and what was incomplete:
//!
//! ```text
//! cargo run --release -p vouch-shell --example analyze -- 'rm -rf ~'
//! VOUCH_NO_DEADLINE=1 cargo run --release -p vouch-shell --example analyze < deep.sh
//! ```
//!
//! With `VOUCH_NO_DEADLINE` set, the wall-clock backstops are lifted, so
//! what bounds the work is the deterministic budgets alone.

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
    let env = ShellEnv {
        cwd: Some("/home/dev/project"),
        home: "/home/dev",
        vars: &[],
    };
    let start = Instant::now();
    let analysis = analyze(&command, &env, &limits);
    let took = start.elapsed();
    println!("{} bytes, {:?}", command.len(), took);
    println!(
        "{} commands, {} errors",
        analysis.commands.len(),
        analysis.errors.len()
    );
    for i in &analysis.incomplete {
        println!("incomplete: {}: {}", i.budget, i.detail);
    }
    Ok(())
}
