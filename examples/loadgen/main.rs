//! The load harness (issue 14): one command that drives the real
//! `vouch serve` over loopback and prints what an SRE needs to size it.
//!
//! ```text
//! cargo run --release --example loadgen                  # full run, ~2 minutes
//! cargo run --release --example loadgen -- --seconds 1 --clients 1,64   # quick look
//! ```
//!
//! It starts the test model server (in this process; every verdict an
//! allow at low risk after `--model-delay-ms`, 50 by default) and the
//! `vouch serve` binary next to this example (building it with cargo if
//! needed) with a temp `VOUCH_HOME`. Then, for each of 1, 16, 64 and 256
//! closed-loop keep-alive clients, one cell per kind of request: `livez`
//! (the trivial 200 route, the floor), `refused` (the hard deny's body with
//! one unknown field: the same route, token check, rate limit, deadline,
//! body read and strict parse, answered with a 400 instead of a decision —
//! the `POST` exchange without the decision), `hard_deny`, `pass` (a routed read),
//! `cached` (the verdict cache), `model` (a new turn, one model call),
//! `model_direct` (the test model called straight, no vouch: how much of
//! `model`'s overhead is the test model's own; not part of ratio (b)) and
//! `mixed` (the four review kinds in turn). Each cell prints throughput, p50/p99/p99.9,
//! errors (transport errors, statuses other than the kind's and answers other than
//! the kind's: every timed answer's decision and stage are checked), the
//! server's peak RSS and its CPU time per request (user + system, all its
//! threads: the figure least disturbed by whatever else shares the cores),
//! and the load generator's own CPU time per request (`gen`: it shares the
//! two cores with the server, so it bounds throughput too). Two ratios from
//! the same run:
//! (a) hard-deny throughput over `livez` throughput (target ≥ 0.7), split
//! into `refused` over `livez` (the exchange's share) and `hard_deny` over
//! `refused` (the decision's share), and
//! (b) the model cell's latency minus the model's fixed delay at 64 clients
//! (target ≤ 2 ms at p50, ≤ 10 ms at p99). Last, `vouch hook claude-code`
//! processes at `--hook-rate` a second (half hard denies, half reviewed):
//! latency from spawn to exit and peak RSS per process.

#![allow(
    clippy::indexing_slicing,
    reason = "an example driving a benchmark; JSON bodies are built, not parsed"
)]

mod hooks;
mod load;
mod target;

#[path = "../../tests/it/support/model_server.rs"]
mod model_server;

use std::time::Duration;

use clap::Parser;

use load::{Cell, Endpoints, Kind};
use model_server::{ModelServer, Reply, Script};

#[derive(Parser, Debug)]
#[command(
    about = "Drive vouch serve and vouch hook over loopback; print throughput, latency and memory"
)]
struct Args {
    /// Concurrent clients, one cell each (comma-separated).
    #[arg(long, value_delimiter = ',', default_values_t = [1, 16, 64, 256])]
    clients: Vec<usize>,
    /// Kinds of request, one cell each (default: all).
    #[arg(long, value_delimiter = ',')]
    kinds: Vec<String>,
    /// Seconds of load per cell.
    #[arg(long, default_value_t = 3.0)]
    seconds: f64,
    /// The test model's fixed answer delay, in ms.
    #[arg(long, default_value_t = 50)]
    model_delay_ms: u64,
    /// `vouch hook` processes started per second.
    #[arg(long, default_value_t = 20.0)]
    hook_rate: f64,
    /// Seconds of hook processes (0: skip).
    #[arg(long, default_value_t = 5.0)]
    hook_seconds: f64,
    /// Turn the policy audit off in the served configuration (it is on as
    /// shipped): what the audit costs a request, by difference.
    #[arg(long)]
    no_audit: bool,
}

fn main() -> anyhow::Result<()> {
    let args = Args::parse();
    let binary = target::vouch_binary()?;
    let runtime = tokio::runtime::Runtime::new()?;
    let delay = Duration::from_millis(args.model_delay_ms);
    let model = runtime.block_on(ModelServer::with_script(Script::always(
        Reply::allow().delayed(delay),
    )));
    model.set_max_recorded(16);
    let service = target::Service::start(&binary, &served_config(&args, &model.base_url()))?;
    let pid = service.pid();
    let endpoints = Endpoints {
        service: service.addr,
        model: model.addr(),
    };
    let idle = target::memory_kib(pid).map_or(0, |(rss, _)| rss);
    let cpu_before = target::cpu_time(pid);
    println!(
        "vouch serve pid {pid} at http://{} (idle RSS {:.1} MiB); model delay {} ms; audit {}",
        service.addr,
        mib(idle),
        args.model_delay_ms,
        if args.no_audit { "off" } else { "on" }
    );
    print_header();
    let mut cells = Vec::new();
    for &clients in &args.clients {
        for kind in Kind::ALL
            .into_iter()
            .filter(|k| args.kinds.is_empty() || args.kinds.iter().any(|n| n == k.name()))
        {
            let cell = runtime.block_on(load::run_cell(
                endpoints,
                &service.adapter_token,
                pid,
                kind,
                clients,
                Duration::from_secs_f64(args.seconds),
            ))?;
            print_cell(&cell);
            if let Some(why) = &cell.first_error {
                println!("  first failure: {why}");
            }
            cells.push(cell);
        }
    }
    let cpu = target::cpu_time(pid)
        .zip(cpu_before)
        .map(|(a, b)| a.saturating_sub(b));
    let hwm = target::memory_kib(pid).map_or(0, |(_, hwm)| hwm);
    print_ratios(&cells, args.model_delay_ms);
    println!(
        "server            VmHWM {:.1} MiB over the run; CPU {:.1} s",
        mib(hwm),
        cpu.unwrap_or_default().as_secs_f64()
    );
    let mut hook_failures = 0;
    if args.hook_seconds > 0.0 {
        let home = tempfile::tempdir()?;
        hooks::prepare(home.path(), &model.base_url())?;
        let runs = hooks::run(
            &binary,
            home.path(),
            args.hook_rate,
            Duration::from_secs_f64(args.hook_seconds),
        );
        hook_failures = runs.iter().filter(|r| !r.ok).count();
        print_hooks(&runs, args.hook_rate);
    }
    println!(
        "server exit       {}",
        service.stop(Duration::from_secs(10))?
    );
    let errors: u64 = cells.iter().map(|c| c.errors).sum();
    if errors > 0 || hook_failures > 0 {
        anyhow::bail!("{errors} failed requests and {hook_failures} wrong or failed hook runs");
    }
    Ok(())
}

/// The trusted overlay `vouch serve` runs with ([`target::config`]), the
/// audit off with `--no-audit`.
fn served_config(args: &Args, model_base_url: &str) -> String {
    let mut config = target::config(model_base_url, 10_000);
    if args.no_audit {
        config.push_str("\n[audit]\nenabled = false\n");
    }
    config
}

fn mib(kib: u64) -> f64 {
    kib as f64 / 1024.0
}

fn print_header() {
    println!(
        "{:<10} {:>7} {:>9} {:>10} {:>8} {:>8} {:>9} {:>7} {:>9} {:>9} {:>9}  decisions",
        "kind",
        "clients",
        "requests",
        "req/s",
        "p50 ms",
        "p99 ms",
        "p99.9 ms",
        "errors",
        "RSS MiB",
        "CPU µs/req",
        "gen µs/req"
    );
}

fn print_cell(c: &Cell) {
    println!(
        "{:<10} {:>7} {:>9} {:>10.0} {:>8.3} {:>8.3} {:>9.3} {:>7} {:>9.1} {:>10.0} {:>10.0}  {}",
        c.kind.name(),
        c.clients,
        c.latencies.len(),
        c.throughput(),
        c.percentile(50.0),
        c.percentile(99.0),
        c.percentile(99.9),
        c.errors,
        mib(c.peak_rss_kib),
        c.cpu_us_per_request(),
        c.own_cpu_us_per_request(),
        c.decisions.join(" "),
    );
}

fn find(cells: &[Cell], kind: Kind, clients: usize) -> Option<&Cell> {
    cells
        .iter()
        .find(|c| c.kind == kind && c.clients == clients)
}

fn print_ratios(cells: &[Cell], delay_ms: u64) {
    for floor in cells.iter().filter(|c| c.kind == Kind::Livez) {
        if let Some(deny) = find(cells, Kind::HardDeny, floor.clients) {
            println!(
                "ratio (a)         {:>3} clients: hard_deny {:.0} req/s / livez {:.0} req/s = {:.2} (target >= 0.7)",
                floor.clients,
                deny.throughput(),
                floor.throughput(),
                deny.throughput() / floor.throughput()
            );
            // The split of (a): the exchange's share, the decision's share.
            if let Some(refused) = find(cells, Kind::Refused, floor.clients) {
                println!(
                    "  split of (a)    {:>3} clients: refused (the POST exchange, no decision) {:.0} req/s / livez = {:.2}; hard_deny / refused = {:.2}",
                    floor.clients,
                    refused.throughput(),
                    refused.throughput() / floor.throughput(),
                    deny.throughput() / refused.throughput()
                );
            }
        }
    }
    let base = delay_ms as f64;
    for model in cells.iter().filter(|c| c.kind == Kind::Model) {
        println!(
            "ratio (b)         {:>3} clients: model overhead over {delay_ms} ms p50 {:+.2} ms, p99 {:+.2} ms, p99.9 {:+.2} ms (target at 64: <= 2, <= 10)",
            model.clients,
            model.percentile(50.0) - base,
            model.percentile(99.0) - base,
            model.percentile(99.9) - base
        );
    }
    // Not the target (its yardstick stays the fixed delay): the test model
    // called straight, so a reader sees how much of the above is its own.
    for direct in cells.iter().filter(|c| c.kind == Kind::ModelDirect) {
        println!(
            "model_direct      {:>3} clients: the test model alone over {delay_ms} ms p50 {:+.2} ms, p99 {:+.2} ms, p99.9 {:+.2} ms (no vouch; for reading (b), not part of it)",
            direct.clients,
            direct.percentile(50.0) - base,
            direct.percentile(99.0) - base,
            direct.percentile(99.9) - base
        );
    }
}

fn print_hooks(runs: &[hooks::Run], rate: f64) {
    for reviewed in [false, true] {
        let mut ms: Vec<f64> = runs
            .iter()
            .filter(|r| r.reviewed == reviewed)
            .map(|r| r.latency.as_secs_f64() * 1000.0)
            .collect();
        ms.sort_by(f64::total_cmp);
        let failed = runs
            .iter()
            .filter(|r| r.reviewed == reviewed && !r.ok)
            .count();
        let peak = runs
            .iter()
            .filter(|r| r.reviewed == reviewed)
            .map(|r| r.peak_kib)
            .max()
            .unwrap_or(0);
        let at = |p: f64| {
            ms.get(((p / 100.0 * ms.len() as f64).ceil() as usize).clamp(1, ms.len().max(1)) - 1)
                .copied()
                .unwrap_or(f64::NAN)
        };
        println!(
            "vouch hook        {:<9} {} runs at {rate:.0}/s: p50 {:.1} ms, p99 {:.1} ms, p99.9 {:.1} ms, {failed} wrong or failed, peak RSS {:.1} MiB",
            if reviewed { "reviewed" } else { "hard_deny" },
            ms.len(),
            at(50.0),
            at(99.0),
            at(99.9),
            mib(peak)
        );
    }
}
