//! One run of the deterministic floor on its own, for instruction counts
//! that load on the machine does not change (the criterion benchmark
//! `benches/deterministic.rs` times the same inputs):
//!
//! ```text
//! cargo build --release --example shell_profile
//! valgrind --tool=callgrind target/release/examples/shell_profile hostile 'relative cd'
//! valgrind --tool=callgrind target/release/examples/shell_profile corpus 1
//! ```
//!
//! `hostile NAME`: one input of the hostile corpus, checked once;
//! `command TEXT`: any command, checked once.
//! `repeat ROUNDS TEXT`: one command checked ROUNDS times (the one-time
//! set-up shows up once; divide the rest by ROUNDS).
//! `corpus ROUNDS`: every corpus command (hard-deny and benign fixtures)
//! checked ROUNDS times — divide the instruction count by the number of
//! checks it prints for a per-command figure.
//! Prints the wall time (a hint only; read the counts).

#[path = "../tests/it/support/fixtures.rs"]
mod fixtures;
#[path = "../benches/support/hostile.rs"]
mod hostile;

use std::time::Instant;

use anyhow::{Context as _, bail};
use vouch::policy::hard_deny::{DenyContext, DenyVerdict, VouchFiles, check};
use vouch::request::Request;

fn bash_request(command: &str, cwd: &str, home: &str) -> anyhow::Result<Request> {
    let v = serde_json::json!({
        "session_id": "profile", "surface": "bash", "tool": "Bash",
        "command": command, "cwd": cwd, "home": home,
    });
    Ok(Request::from_slice(v.to_string().as_bytes())?)
}

fn corpus() -> anyhow::Result<Vec<(Request, String, String)>> {
    let files = [
        "hard_deny.jsonl",
        "hard_deny_extra.jsonl",
        "benign.jsonl",
        "benign_extra.jsonl",
    ];
    let mut out = Vec::new();
    for v in fixtures::records::<serde_json::Value>(&files) {
        let text = |key: &str| v.get(key).and_then(serde_json::Value::as_str);
        let Some(command) = text("command") else {
            continue;
        };
        let cwd = text("cwd").context("fixture without cwd")?.to_owned();
        let home = text("home").context("fixture without home")?.to_owned();
        out.push((bash_request(command, &cwd, &home)?, cwd, home));
    }
    Ok(out)
}

const USAGE: &str =
    "usage: shell_profile hostile NAME | command TEXT | repeat ROUNDS TEXT | corpus ROUNDS";

fn main() -> anyhow::Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let protected = VouchFiles {
        paths: vec!["/opt/vouch/bin/vouch".to_owned()],
        config_only: Vec::new(),
        vars: Vec::new(),
    };
    // The wall-clock backstops are lifted: under valgrind everything runs
    // ~50 times slower and they would stop the analysis early. The
    // deterministic budgets (`max_parse_operations`, `max_steps`, …) hold.
    let limits = vouch::shell::Limits {
        parse_timeout_us: 60_000_000,
        analysis_timeout_us: 600_000_000,
        ..vouch::shell::Limits::DEFAULT
    };
    match args.first().map(String::as_str) {
        Some(mode @ ("hostile" | "command")) => {
            let name = args.get(1).context("hostile NAME | command TEXT")?;
            let command = if mode == "command" {
                name.clone()
            } else {
                hostile::hostile()
                    .into_iter()
                    .find(|(n, _)| n == name)
                    .with_context(|| format!("no hostile input named `{name}`"))?
                    .1
            };
            let request = bash_request(&command, "/srv/app", "/home/dev")?;
            let ctx = DenyContext {
                home: "/home/dev",
                cwd: Some("/srv/app"),
                protected: &protected,
                limits: &limits,
            };
            let start = Instant::now();
            let verdict = check(&request, &ctx);
            let ms = start.elapsed().as_secs_f64() * 1e3;
            let shown: String = name.chars().take(40).collect();
            println!("{shown}: {} in {ms:.2} ms", describe(&verdict));
        }
        Some("repeat") => repeat(&args, &protected, &limits)?,
        Some("corpus") => {
            let rounds: u32 = args.get(1).map_or(Ok(1), |r| r.parse())?;
            let cases = corpus()?;
            let start = Instant::now();
            let mut denied = 0_usize;
            for _ in 0..rounds {
                for (request, cwd, home) in &cases {
                    let ctx = DenyContext {
                        home,
                        cwd: Some(cwd),
                        protected: &protected,
                        limits: &limits,
                    };
                    if matches!(check(request, &ctx), DenyVerdict::Deny(_)) {
                        denied += 1;
                    }
                }
            }
            let checks = cases.len() * rounds as usize;
            let us = start.elapsed().as_secs_f64() * 1e6 / checks as f64;
            println!("{checks} checks ({denied} denied), {us:.1} µs each");
        }
        _ => bail!(USAGE),
    }
    Ok(())
}

/// `repeat ROUNDS TEXT`: one command checked ROUNDS times.
fn repeat(
    args: &[String],
    protected: &VouchFiles,
    limits: &vouch::shell::Limits,
) -> anyhow::Result<()> {
    let rounds: u32 = args.get(1).map_or(Ok(1), |r| r.parse())?;
    let command = args.get(2).context("repeat ROUNDS TEXT")?;
    let request = bash_request(command, "/srv/app", "/home/dev")?;
    let ctx = DenyContext {
        home: "/home/dev",
        cwd: Some("/srv/app"),
        protected,
        limits,
    };
    let start = Instant::now();
    let mut last = String::new();
    for _ in 0..rounds {
        last = describe(&check(&request, &ctx));
    }
    let us = start.elapsed().as_secs_f64() * 1e6 / f64::from(rounds.max(1));
    println!("{rounds} checks: {last}, {us:.2} µs each");
    Ok(())
}

fn describe(verdict: &DenyVerdict) -> String {
    match verdict {
        DenyVerdict::Deny(_) => "deny".to_owned(),
        DenyVerdict::Clear => "clear".to_owned(),
        DenyVerdict::ParseFailed { .. } => "parse failed".to_owned(),
        DenyVerdict::Incomplete { .. } => format!("incomplete {verdict:?}"),
    }
}
