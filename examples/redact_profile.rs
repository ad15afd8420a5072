//! One redaction run on its own, for instruction counts that load on the
//! machine does not change (the criterion benchmark `benches/redaction.rs`
//! times the same input):
//!
//! ```text
//! cargo build --release --example redact_profile
//! valgrind --tool=callgrind target/release/examples/redact_profile adversarial 1024
//! valgrind --tool=callgrind target/release/examples/redact_profile start
//! ```
//!
//! `adversarial KIB` / `dense KIB` / `plain KIB`: load the rules, then redact
//! that much of the benchmark's adversarial text (sparse, dense or a single
//! encoded piece) once.
//! `start`: what a short-lived process pays before its first redaction —
//! load the rules and redact one small hook-sized request.
//! A third argument `warm` redacts the text once before the measured run:
//! the count minus the cold run's is what one more redaction costs once
//! every automaton is built (what the criterion benchmark times).
//! Prints the wall time of each phase (a hint only; read the counts).

#[path = "../benches/support/adversarial.rs"]
mod adversarial;

use std::time::Instant;

use anyhow::{Context, bail};
use vouch::evidence::redact::{prepare, redact_text};

fn main() -> anyhow::Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mode = args.first().map_or("start", String::as_str);
    let kib: usize = match args.get(1) {
        Some(n) => n.parse().context("KIB must be a whole number")?,
        None => 1024,
    };
    let text = match mode {
        "adversarial" => adversarial::adversarial(kib * 1024, adversarial::SPARSE),
        "dense" => adversarial::adversarial(kib * 1024, adversarial::DENSE),
        // One encoded piece only: what the text itself costs, views aside.
        "plain" => adversarial::adversarial(kib * 1024, usize::MAX),
        "start" => r#"cargo build -p crate1 --release && echo "bench""#.to_owned(),
        other => bail!("unknown mode `{other}`: adversarial, dense, plain or start"),
    };
    let t = Instant::now();
    if !prepare() {
        bail!("the redaction rules did not load");
    }
    let loaded = t.elapsed();
    if args.get(2).is_some_and(|a| a == "warm") {
        drop(redact_text(&text));
    }
    let t = Instant::now();
    let out = redact_text(&text);
    let redacted = t.elapsed();
    if std::env::var_os("REDACT_PROFILE_PRINT").is_some() {
        println!("{out}");
    }
    println!(
        "{mode} {} bytes: rules {loaded:?}, redaction {redacted:?}, output {} bytes",
        text.len(),
        out.len()
    );
    Ok(())
}
