//! Depth by construction (issue 43): every program the command table says
//! runs other code and every nesting construct of the grammar, stacked
//! 10,000 deep around `rm -rf ~` (`support/deep.rs` reads the table, so a
//! new entry is covered here with no new line), each analysed on a thread
//! with tokio's 2 MiB stack and with the wall-clock backstops switched off:
//! what bounds the work and the stack is the budgets alone. Each analysis
//! ends (the process does not abort), within a bounded time, and either
//! finds the `rm` or says it is incomplete — never a complete analysis that
//! lost the command (which the inert stage could allow).

#![allow(
    clippy::unwrap_used,
    clippy::panic,
    clippy::indexing_slicing,
    reason = "test code: a failure is the test failing"
)]

#[path = "support/deep.rs"]
mod deep;

use std::time::Duration;

use vouch_shell::{Limits, ShellEnv, analyze};

/// How deep each case nests.
const DEPTH: usize = 10_000;

/// The analysing thread's stack: tokio's 2 MiB, where `vouch serve`
/// analyses. The budgets are sized for optimised frames (the cases pass
/// on 1 MiB, not on 512 KiB); an unoptimised build's frames are several
/// times larger, so a debug run of this test gets 8 MiB and ten times the
/// time (CI runs it optimised).
const STACK: usize = if cfg!(debug_assertions) {
    8 << 20
} else {
    2 << 20
};

/// The largest request vouch reads (the cases go to `vouch serve` too).
const MAX_REQUEST_BYTES: usize = 1024 * 1024;

/// The CPU time one case may take with the clocks off (the analysing
/// thread's own, so other work on the machine does not count), the
/// fastest of three runs. The budgets, not a clock, end each analysis;
/// the slowest case is tree-sitter's own parse of an unterminated
/// 10,000-stage pipeline, ~1 s of CPU within `max_parse_operations` (each
/// of its operations grows with the pipeline; the parse clock stops it at
/// 25 ms in service), the next the scripts re-parsed at each of eight
/// levels (~0.2 s). Before the budgets, a wrapper chain ran ~1.3 s and
/// then aborted the process.
const CEILING: Duration = Duration::from_secs(if cfg!(debug_assertions) { 20 } else { 2 });

/// Limits with the clocks lifted: only the counted budgets bound the work.
fn no_deadline() -> Limits {
    Limits {
        parse_timeout_us: u64::MAX / 4,
        analysis_timeout_us: u64::MAX / 4,
        ..Limits::DEFAULT
    }
}

/// What a case's analysis showed.
#[derive(Debug)]
struct Outcome {
    took: Duration,
    incomplete: Vec<&'static str>,
    /// Whether a unit runs `rm`.
    rm: bool,
}

fn analysed(command: &str) -> Outcome {
    let env = ShellEnv {
        cwd: Some("/home/dev/project"),
        home: "/home/dev",
        vars: &[],
    };
    let limits = no_deadline();
    let mut best = Duration::MAX;
    let mut last = None;
    for _ in 0..3 {
        let start = thread_cpu();
        let analysis = analyze(command, &env, &limits);
        best = best.min(thread_cpu().saturating_sub(start));
        last = Some((
            analysis.incomplete.iter().map(|i| i.budget).collect(),
            analysis
                .commands
                .iter()
                .any(|c| c.argv.first().and_then(|a| a.as_known()) == Some("rm")),
        ));
        if best <= CEILING {
            break;
        }
    }
    let (incomplete, rm) = last.unwrap();
    Outcome {
        took: best,
        incomplete,
        rm,
    }
}

/// CPU time this thread has used (user and system), from
/// `/proc/thread-self/stat` in clock ticks of 10 ms.
fn thread_cpu() -> Duration {
    let stat = std::fs::read_to_string("/proc/thread-self/stat").unwrap();
    // The fields after the command name, which is in parentheses.
    let fields: Vec<&str> = stat
        .rsplit_once(')')
        .unwrap()
        .1
        .split_whitespace()
        .collect();
    let ticks: u64 = fields[11].parse::<u64>().unwrap() + fields[12].parse::<u64>().unwrap();
    Duration::from_millis(ticks * 10)
}

/// Analyses every case on one thread of [`STACK`]; returns what went wrong.
fn check(cases: Vec<deep::Case>) -> Vec<String> {
    std::thread::Builder::new()
        .stack_size(STACK)
        .spawn(move || {
            let mut failures = Vec::new();
            for case in &cases {
                if case.command.len() > MAX_REQUEST_BYTES {
                    failures.push(format!("{}: {} bytes", case.name, case.command.len()));
                    continue;
                }
                let outcome = analysed(&case.command);
                if outcome.took > CEILING {
                    failures.push(format!(
                        "{}: took {:?} ({outcome:?})",
                        case.name, outcome.took
                    ));
                }
                if case.runs_tail && !outcome.rm && outcome.incomplete.is_empty() {
                    failures.push(format!(
                        "{}: a complete analysis without the `rm` it runs",
                        case.name
                    ));
                }
            }
            failures
        })
        .unwrap()
        .join()
        .unwrap()
}

#[test]
fn every_program_that_runs_code_stacked_ten_thousand_deep_is_bounded() {
    let cases = deep::programs(DEPTH);
    // The generator found the table's runners (a table it cannot read
    // would make this test pass vacuously).
    for expected in [
        "wrapper nice",
        "wrapper timeout",
        "runner sudo",
        "runner xargs",
        "shell bash -c",
        "script eval",
        "code option su c",
        "package runner npx",
    ] {
        assert!(
            cases.iter().any(|c| c.name == expected),
            "no case `{expected}`"
        );
    }
    let failures = check(cases);
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn every_nesting_construct_ten_thousand_deep_is_bounded() {
    let failures = check(deep::grammar(DEPTH));
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
