//! Load generator for `vouch serve`: drives `POST /v1/review` with hard-deny
//! requests over keep-alive connections and prints throughput, latency
//! percentiles and the server's resident memory.
//!
//! By default it starts its own server: it re-executes itself as a child
//! that runs exactly what `vouch serve` runs (`vouch::server::prepare` +
//! `run`) on `127.0.0.1:0` with a temporary `VOUCH_HOME`, so the memory read
//! from `/proc/<pid>/status` is the server's alone. `--connect ADDR
//! --token-file F [--pid P]` measures a service that is already running
//! (loopback only). It stops by itself after `--seconds` or `--requests`.
//!
//! ```text
//! cargo run --release --example loadgen -- --seconds 10 --connections 64
//! ```

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

use std::io::{BufRead, BufReader};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use clap::Parser;

#[derive(Parser, Debug)]
#[command(about = "Drive POST /v1/review on a vouch service and report latency and memory")]
struct Args {
    /// Concurrent keep-alive connections.
    #[arg(long, default_value_t = 64)]
    connections: usize,
    /// Stop after this many seconds of load.
    #[arg(long, default_value_t = 10)]
    seconds: u64,
    /// Stop after this many requests in total.
    #[arg(long, default_value_t = 1_000_000)]
    requests: u64,
    /// Offered load in requests/s across all connections (open loop, latency
    /// measured from each request's scheduled time). Default: as fast as the
    /// connections go (closed loop, which measures saturation throughput).
    #[arg(long)]
    rate: Option<f64>,
    /// The command under review (a hard deny by default).
    #[arg(long, default_value = "rm -rf /")]
    command: String,
    /// Measure a running service at this loopback address instead of starting one.
    #[arg(long, requires = "token_file")]
    connect: Option<SocketAddr>,
    /// Adapter token file of the running service.
    #[arg(long)]
    token_file: Option<PathBuf>,
    /// PID of the running service, for its memory figures.
    #[arg(long)]
    pid: Option<u32>,
    /// Internal: run as the server child with this VOUCH_HOME.
    #[arg(long, hide = true)]
    serve_child: Option<PathBuf>,
}

fn main() -> anyhow::Result<()> {
    let args = Args::parse();
    if let Some(home) = &args.serve_child {
        return serve_child(home);
    }
    let runtime = tokio::runtime::Runtime::new()?;
    runtime.block_on(drive(args))
}

/// The server child: `vouch serve` on 127.0.0.1:0 until stdin closes.
fn serve_child(home: &Path) -> anyhow::Result<()> {
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn")),
        )
        .with_writer(std::io::stderr)
        .init();
    let mut config = vouch::config::Config::defaults()?;
    config.server.listen = "127.0.0.1:0".to_owned();
    // The top of the legal range: this measures the service, not the limiter.
    config.server.rate_limit_per_second = 100_000;
    let options = vouch::engine::EngineOptions::isolated(home, &config)?;
    let runtime = tokio::runtime::Runtime::new()?;
    runtime.block_on(async {
        let (listener, state) = vouch::server::prepare(options).await?;
        println!("listening on {}", listener.describe());
        let stdin_closed = async {
            // Blocking read in its own thread: EOF means the parent is done.
            let _ = tokio::task::spawn_blocking(|| {
                let mut sink = String::new();
                while std::io::stdin().read_line(&mut sink).is_ok_and(|n| n > 0) {}
            })
            .await;
        };
        vouch::server::run(listener, state, stdin_closed).await?;
        anyhow::Ok(())
    })
}

/// One keep-alive HTTP/1.1 connection to the service.
struct Connection {
    sender: hyper::client::conn::http1::SendRequest<http_body_util::Full<axum::body::Bytes>>,
    authorization: axum::http::HeaderValue,
}

impl Connection {
    async fn open(addr: SocketAddr, authorization: &str) -> anyhow::Result<Connection> {
        let stream = tokio::net::TcpStream::connect(addr).await?;
        stream.set_nodelay(true)?;
        let (sender, connection) =
            hyper::client::conn::http1::handshake(hyper_util::rt::TokioIo::new(stream)).await?;
        tokio::spawn(connection);
        Ok(Connection {
            sender,
            authorization: authorization.parse()?,
        })
    }

    async fn post(&mut self, body: &axum::body::Bytes) -> anyhow::Result<(u16, axum::body::Bytes)> {
        use http_body_util::BodyExt;
        self.sender.ready().await?;
        let request = axum::http::Request::post("/v1/review")
            .header(axum::http::header::HOST, "vouch")
            .header(
                axum::http::header::AUTHORIZATION,
                self.authorization.clone(),
            )
            .header(axum::http::header::CONTENT_TYPE, "application/json")
            .body(http_body_util::Full::new(body.clone()))?;
        let response = self.sender.send_request(request).await?;
        let status = response.status().as_u16();
        let bytes = response.into_body().collect().await?.to_bytes();
        Ok((status, bytes))
    }
}

struct Target {
    addr: SocketAddr,
    token: String,
    pid: Option<u32>,
    child: Option<std::process::Child>,
    _home: Option<tempfile::TempDir>,
}

fn start_child() -> anyhow::Result<Target> {
    let home = tempfile::tempdir()?;
    let mut child = Command::new(std::env::current_exe()?)
        .arg("--serve-child")
        .arg(home.path())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .context("cannot start the server child")?;
    let stdout = child.stdout.take().context("child stdout")?;
    let mut line = String::new();
    BufReader::new(stdout).read_line(&mut line)?;
    let addr: SocketAddr = line
        .trim()
        .strip_prefix("listening on ")
        .with_context(|| format!("unexpected child output `{line}`"))?
        .parse()?;
    let token = std::fs::read_to_string(home.path().join("state/adapter.token"))?
        .trim()
        .to_owned();
    Ok(Target {
        addr,
        token,
        pid: Some(child.id()),
        child: Some(child),
        _home: Some(home),
    })
}

/// (VmRSS, VmHWM) in KiB.
fn memory_kib(pid: u32) -> Option<(u64, u64)> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let field = |name: &str| {
        status
            .lines()
            .find_map(|l| l.strip_prefix(name))
            .and_then(|v| v.split_whitespace().next())
            .and_then(|v| v.parse::<u64>().ok())
    };
    Some((field("VmRSS:")?, field("VmHWM:")?))
}

/// User + system CPU time of `pid`, from `/proc/<pid>/stat` (clock ticks of
/// 10 ms, the Linux `USER_HZ`).
fn cpu_time(pid: u32) -> Option<Duration> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // Fields after the parenthesised command name; utime and stime are the
    // 14th and 15th fields of the whole line.
    let rest = stat.rsplit_once(')')?.1;
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let ticks = fields.get(11)?.parse::<u64>().ok()? + fields.get(12)?.parse::<u64>().ok()?;
    Some(Duration::from_millis(ticks * 10))
}

fn percentile(sorted: &[u32], p: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    let rank = ((p / 100.0) * sorted.len() as f64).ceil() as usize;
    f64::from(sorted[rank.clamp(1, sorted.len()) - 1]) / 1000.0
}

#[expect(
    clippy::too_many_lines,
    reason = "predates the 80-line limit; rebuilt by issue 14"
)]
async fn drive(args: Args) -> anyhow::Result<()> {
    let mut target = match args.connect {
        Some(addr) => {
            if !addr.ip().is_loopback() {
                bail!("`--connect {addr}` is not a loopback address; loadgen only drives loopback");
            }
            let file = args
                .token_file
                .clone()
                .context("--token-file is required")?;
            Target {
                addr,
                token: std::fs::read_to_string(&file)?.trim().to_owned(),
                pid: args.pid,
                child: None,
                _home: None,
            }
        }
        None => start_child()?,
    };
    let body = serde_json::json!({
        "session_id": "loadgen", "surface": "bash", "command": args.command,
        "cwd": "/srv/app", "home": "/home/dev"
    })
    .to_string();
    let body = axum::body::Bytes::from(body);
    let authorization = format!("Bearer {}", target.token);
    // Warm up (and check the token) with one request.
    let mut warm = Connection::open(target.addr, &authorization).await?;
    let (status, answer) = warm.post(&body).await?;
    if status != 200 {
        bail!(
            "warm-up request answered {status}: {}",
            String::from_utf8_lossy(&answer)
        );
    }
    let decision: serde_json::Value = serde_json::from_slice(&answer)?;
    drop(warm);
    tokio::time::sleep(Duration::from_millis(300)).await;
    let idle = target.pid.and_then(memory_kib);
    let cpu_before = target.pid.and_then(cpu_time);

    let issued = Arc::new(AtomicU64::new(0));
    let failures = Arc::new(AtomicU64::new(0));
    let stop = Arc::new(AtomicBool::new(false));
    let peak_rss = Arc::new(AtomicU64::new(0));
    let sampler = target.pid.map(|pid| {
        let (stop, peak) = (Arc::clone(&stop), Arc::clone(&peak_rss));
        tokio::spawn(async move {
            while !stop.load(Ordering::Relaxed) {
                if let Some((rss, _)) = memory_kib(pid) {
                    peak.fetch_max(rss, Ordering::Relaxed);
                }
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
        })
    });
    let deadline = Instant::now() + Duration::from_secs(args.seconds);
    let started = Instant::now();
    let mut workers = Vec::with_capacity(args.connections);
    for _ in 0..args.connections {
        let (addr, body, authorization) = (target.addr, body.clone(), authorization.clone());
        let (issued, failures, stop) = (
            Arc::clone(&issued),
            Arc::clone(&failures),
            Arc::clone(&stop),
        );
        let budget = args.requests;
        // Open loop: this connection's share of the offered rate, staggered so
        // the connections do not fire in lockstep.
        let period = args
            .rate
            .map(|rate| Duration::from_secs_f64(args.connections as f64 / rate));
        let offset = period.map(|p| p.mul_f64(workers.len() as f64 / args.connections as f64));
        workers.push(tokio::spawn(async move {
            let mut latencies: Vec<u32> = Vec::with_capacity(100_000);
            let mut connection = Connection::open(addr, &authorization).await.ok();
            let mut scheduled = started + offset.unwrap_or_default();
            while Instant::now() < deadline
                && !stop.load(Ordering::Relaxed)
                && issued.fetch_add(1, Ordering::Relaxed) < budget
            {
                // A request whose slot passed while the previous answer was
                // still coming counts from its scheduled time, so slow answers
                // are not hidden (coordinated omission); one that waited for
                // its slot counts from when the timer woke it, so the 1 ms
                // timer granularity is not billed to the server.
                let sent = match period {
                    Some(p) => {
                        let at = scheduled;
                        scheduled += p;
                        if at > Instant::now() {
                            tokio::time::sleep_until(at.into()).await;
                            Instant::now()
                        } else {
                            at
                        }
                    }
                    None => Instant::now(),
                };
                let ok = match connection.as_mut() {
                    Some(c) => matches!(c.post(&body).await, Ok((200, _))),
                    None => false,
                };
                if !ok {
                    // A broken connection is replaced, not retried silently.
                    connection = Connection::open(addr, &authorization).await.ok();
                }
                latencies.push(u32::try_from(sent.elapsed().as_micros()).unwrap_or(u32::MAX));
                if !ok {
                    failures.fetch_add(1, Ordering::Relaxed);
                }
            }
            latencies
        }));
    }
    let mut latencies = Vec::new();
    for w in workers {
        latencies.extend(w.await?);
    }
    let elapsed = started.elapsed();
    stop.store(true, Ordering::Relaxed);
    if let Some(s) = sampler {
        let _ = s.await;
    }
    let end = target.pid.and_then(memory_kib);
    let cpu_used = target
        .pid
        .and_then(cpu_time)
        .zip(cpu_before)
        .map(|(after, before)| after.saturating_sub(before));
    latencies.sort_unstable();

    let n = latencies.len();
    let mode = args.rate.map_or_else(
        || "closed loop".to_owned(),
        |r| format!("open loop at {r:.0} req/s offered"),
    );
    println!(
        "target            http://{} ({} connections, keep-alive, {mode})",
        target.addr, args.connections
    );
    println!(
        "decision          {} / {}",
        decision["decision"], decision["stage"]
    );
    println!(
        "requests          {n} in {:.2} s, {} failed",
        elapsed.as_secs_f64(),
        failures.load(Ordering::Relaxed)
    );
    println!(
        "throughput        {:.0} req/s",
        n as f64 / elapsed.as_secs_f64()
    );
    println!(
        "latency ms        p50 {:.3}  p99 {:.3}  p99.9 {:.3}  max {:.3}",
        percentile(&latencies, 50.0),
        percentile(&latencies, 99.0),
        percentile(&latencies, 99.9),
        latencies
            .last()
            .map_or(f64::NAN, |m| f64::from(*m) / 1000.0)
    );
    match (idle, end) {
        (Some((idle_rss, _)), Some((_, hwm))) => println!(
            "server memory     idle {:.1} MiB, peak sampled under load {:.1} MiB, VmHWM {:.1} MiB",
            idle_rss as f64 / 1024.0,
            peak_rss.load(Ordering::Relaxed) as f64 / 1024.0,
            hwm as f64 / 1024.0
        ),
        _ => println!("server memory     unknown (no --pid)"),
    }
    if let Some(cpu) = cpu_used {
        println!(
            "server CPU        {:.2} s ({:.0}% of one core, {:.0} µs per request)",
            cpu.as_secs_f64(),
            100.0 * cpu.as_secs_f64() / elapsed.as_secs_f64(),
            1e6 * cpu.as_secs_f64() / n.max(1) as f64
        );
    }
    if let Some(mut child) = target.child.take() {
        drop(child.stdin.take());
        let status = child.wait()?;
        println!("server exit       {status}");
    }
    Ok(())
}
