//! Figures for a shared PostgreSQL store (issue 27), in one run against one
//! throwaway cluster (`tests/it/support/postgres.rs`):
//!
//! ```text
//! cargo run --release --example pg_figures                 # ~1 minute
//! cargo run --release --example pg_figures -- --seconds 3  # quicker
//! ```
//!
//! (a) **bound**: the cluster's single-row-update rate at `--clients`
//!     (64) clients — `pgbench -n -c 64 -j 2 -T <seconds>` running
//!     `UPDATE bound SET v = v + 1 WHERE id = 1` on a one-row table: one
//!     commit each, every client on the same row, fsync on.
//! (b) **grant pairs/s** across three `vouch serve` replicas at the same
//!     clients, spread round robin: a pair is a mint (`POST /v1/review`
//!     with `issue_grant`, answered from the verdict cache: one commit, the
//!     turn's counters and the grant) and its consume
//!     (`POST /v1/grants/consume`: one commit). Two commits a pair, so the
//!     ratio printed is pairs/s ÷ (bound / 2); the target is ≥ 0.8. Each
//!     client has its own session, as agents do.
//! (c) **per-request cost** of the store on the reviewed path, each
//!     backend in the same run: `cached` (a verdict-cache hit) and `model`
//!     (a new turn and one model call, the test model answering after
//!     `--model-delay-ms`) at `--path-clients` (16) clients over the three
//!     replicas — requests/s, p50 and p99.
//!
//! Backends: `sqlite` (the three replicas share one `VOUCH_HOME`, one
//! machine) and `postgres` (each replica its own `VOUCH_HOME` with copies of
//! the first one's tokens and `hmac.key`, `[store] backend = "postgres"`,
//! the URL in `VOUCH_STORE_URL`). Needs Debian's
//! `postgresql` package; run as root, the cluster runs as `postgres`.

#![allow(
    clippy::indexing_slicing,
    reason = "an example driving a benchmark; indices are over fixed arrays"
)]

#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
#[path = "../tests/it/support/postgres.rs"]
mod postgres;

#[allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]
#[path = "../tests/it/support/model_server.rs"]
mod model_server;

#[allow(
    dead_code,
    reason = "the load harness's process module; this program starts replicas with it and reads no memory or CPU figures"
)]
#[path = "loadgen/target.rs"]
mod target;

use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use clap::Parser;
use serde_json::{Value, json};

use model_server::{ModelServer, Reply, Script};
use postgres::Cluster;
use target::Service;

#[derive(Parser, Debug)]
#[command(about = "Single-row-update bound, grant pairs and store cost: SQLite vs PostgreSQL")]
struct Args {
    /// Seconds of load per measurement.
    #[arg(long, default_value_t = 5.0)]
    seconds: f64,
    /// Clients for the bound and the grant pairs.
    #[arg(long, default_value_t = 64)]
    clients: usize,
    /// Clients for the reviewed-path cells (c).
    #[arg(long, default_value_t = 16)]
    path_clients: usize,
    /// The test model's answer delay in the `model` cells, in ms.
    #[arg(long, default_value_t = 50)]
    model_delay_ms: u64,
}

const REPLICAS: usize = 3;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Backend {
    Sqlite,
    Postgres,
}

impl Backend {
    fn name(self) -> &'static str {
        match self {
            Backend::Sqlite => "sqlite",
            Backend::Postgres => "postgres",
        }
    }
}

fn main() -> anyhow::Result<()> {
    let args = Args::parse();
    let binary = target::vouch_binary()?;
    let cluster = Cluster::start().map_err(|skip| anyhow::anyhow!("{skip}"))?;
    println!(
        "cluster: {} (socket {}), {} clients, {} s a measurement",
        cluster.bin_dir().display(),
        cluster.socket_dir().display(),
        args.clients,
        args.seconds
    );
    let bound = pgbench_bound(&cluster, args.clients, args.seconds)?;
    println!(
        "(a) bound: single-row UPDATE at {} clients: {bound:.0} commits/s",
        args.clients
    );

    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?;
    let model = runtime.block_on(ModelServer::with_script(Script::always(
        Reply::allow().delayed(Duration::from_millis(args.model_delay_ms)),
    )));
    model.set_max_recorded(16);

    let mut rows = Vec::new();
    for backend in [Backend::Sqlite, Backend::Postgres] {
        let replicas = runtime.block_on(Replicas::start(
            &binary,
            backend,
            &model.base_url(),
            &cluster,
        ))?;
        let seconds = Duration::from_secs_f64(args.seconds);
        let pairs = runtime.block_on(grant_pairs(&replicas, args.clients, seconds))?;
        let cached = runtime.block_on(reviewed(
            &replicas,
            Kind::Cached,
            args.path_clients,
            seconds,
        ))?;
        let model_cell =
            runtime.block_on(reviewed(&replicas, Kind::Model, args.path_clients, seconds))?;
        rows.push((backend, pairs, cached, model_cell));
        replicas.stop();
    }

    print_table(&rows, bound, args.model_delay_ms);
    println!(
        "target: postgres ratio >= 0.8 (a pair is two commits; the bound is one commit a client)"
    );
    let errors: u64 = rows
        .iter()
        .map(|r| r.1.errors + r.2.errors + r.3.errors)
        .sum();
    if errors > 0 {
        bail!("{errors} failed or wrong answers");
    }
    Ok(())
}

type Row = (Backend, Cell, Cell, Cell);

/// One line per backend: (b) and its ratio, then (c).
fn print_table(rows: &[Row], bound: f64, model_delay_ms: u64) {
    println!();
    println!(
        "{:<9} {:>11} {:>13} {:>11} {:>10} {:>10} {:>11} {:>10} {:>10} {:>7}",
        "backend",
        "pairs/s",
        "ratio b/(a/2)",
        "cached r/s",
        "cached p50",
        "cached p99",
        "model r/s",
        "model p50",
        "model p99",
        "errors"
    );
    for (backend, pairs, cached, model) in rows {
        println!(
            "{:<9} {:>11.0} {:>13.2} {:>11.0} {:>8.2}ms {:>8.2}ms {:>11.0} {:>8.2}ms {:>8.2}ms {:>7}",
            backend.name(),
            pairs.throughput(),
            pairs.throughput() / (bound / 2.0),
            cached.throughput(),
            cached.percentile(50.0),
            cached.percentile(99.0),
            model.throughput(),
            model.percentile(50.0),
            model.percentile(99.0),
            pairs.errors + cached.errors + model.errors,
        );
    }
    if let (Some(sqlite), Some(pg)) = (
        rows.iter().find(|r| r.0 == Backend::Sqlite),
        rows.iter().find(|r| r.0 == Backend::Postgres),
    ) {
        println!(
            "postgres - sqlite p50: cached {:+.2} ms, model {:+.2} ms (model delay {} ms)",
            pg.2.percentile(50.0) - sqlite.2.percentile(50.0),
            pg.3.percentile(50.0) - sqlite.3.percentile(50.0),
            model_delay_ms
        );
    }
}

/// `pgbench` on a one-row table in its own database: commits/s.
fn pgbench_bound(cluster: &Cluster, clients: usize, seconds: f64) -> anyhow::Result<f64> {
    let out = cluster.psql("postgres", "CREATE DATABASE bench");
    if !out.status.success() {
        bail!(
            "CREATE DATABASE bench: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let out = cluster.psql(
        "bench",
        "CREATE TABLE bound (id int PRIMARY KEY, v bigint NOT NULL); INSERT INTO bound VALUES (1, 0)",
    );
    if !out.status.success() {
        bail!("bound table: {}", String::from_utf8_lossy(&out.stderr));
    }
    let script = cluster.root().join("bound.sql");
    std::fs::write(&script, "UPDATE bound SET v = v + 1 WHERE id = 1;\n")?;
    let out = cluster
        .tool("pgbench")
        .arg("-h")
        .arg(cluster.socket_dir())
        .args([
            "-U",
            "postgres",
            "-n",
            "-c",
            &clients.to_string(),
            "-j",
            "2",
        ])
        .args(["-T", &format!("{}", seconds.ceil().max(1.0) as u64), "-f"])
        .arg(&script)
        .arg("bench")
        .output()
        .context("cannot run pgbench")?;
    let stdout = String::from_utf8_lossy(&out.stdout);
    if !out.status.success() {
        bail!(
            "pgbench failed: {stdout}{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    stdout
        .lines()
        .find_map(|l| l.strip_prefix("tps = "))
        .and_then(|rest| rest.split_whitespace().next())
        .and_then(|tps| tps.parse::<f64>().ok())
        .with_context(|| format!("no `tps = ` line in pgbench's output:\n{stdout}"))
}

/// The overlay each replica runs with: the load harness's (limits open,
/// the verdict cache long and large enough that every `cached` request
/// hits it), on the backend measured.
fn config(backend: Backend, model_base_url: &str) -> String {
    let mut config = target::config(model_base_url, 10_000);
    if backend == Backend::Postgres {
        config.push_str("\n[store]\nbackend = \"postgres\"\n");
    }
    config
}

/// The replicas' own log level: warnings only.
const QUIET: (&str, &str) = ("RUST_LOG", "warn");

/// Three replicas over one state (see the module doc).
struct Replicas {
    nodes: Vec<Service>,
    _homes: Vec<tempfile::TempDir>,
    adapter: String,
    http: reqwest::Client,
}

impl Replicas {
    async fn start(
        binary: &Path,
        backend: Backend,
        model_base_url: &str,
        cluster: &Cluster,
    ) -> anyhow::Result<Replicas> {
        let config = config(backend, model_base_url);
        let http = reqwest::Client::builder()
            .timeout(Duration::from_secs(30))
            .pool_max_idle_per_host(1024)
            .build()?;
        let mut nodes = Vec::new();
        let mut homes = Vec::new();
        match backend {
            Backend::Sqlite => {
                let home = tempfile::tempdir()?;
                for _ in 0..REPLICAS {
                    nodes.push(Service::start_in(binary, home.path(), &config, &[QUIET])?);
                }
                homes.push(home);
            }
            Backend::Postgres => {
                let out = cluster.psql("postgres", "CREATE DATABASE figures");
                if !out.status.success() {
                    bail!(
                        "CREATE DATABASE figures: {}",
                        String::from_utf8_lossy(&out.stderr)
                    );
                }
                let url = cluster.url_of("figures");
                let env = [QUIET, ("VOUCH_STORE_URL", url.as_str())];
                for _ in 0..REPLICAS {
                    homes.push(tempfile::tempdir()?);
                }
                let first_state = homes[0].path().join("state");
                nodes.push(Service::start_in(binary, homes[0].path(), &config, &env)?);
                // The first audit write makes hmac.key; then copy it and
                // the tokens, as a team distributes them.
                let token = nodes[0].adapter_token.clone();
                let event = json!([{"requestId": "figures-key", "surface": "bash", "value": "git status",
                    "result": "allow", "resolution": "user_approved", "origin": null,
                    "agentName": "main", "matchedPattern": null, "cwd": "/srv/app"}]);
                http.post(format!("http://{}/v1/audit/events", nodes[0].addr))
                    .bearer_auth(&token)
                    .json(&event)
                    .send()
                    .await?
                    .error_for_status()?;
                let key = first_state.join("hmac.key");
                let deadline = Instant::now() + Duration::from_secs(10);
                while !key.is_file() {
                    if Instant::now() > deadline {
                        bail!("{} never appeared", key.display());
                    }
                    tokio::time::sleep(Duration::from_millis(20)).await;
                }
                for home in &homes[1..] {
                    distribute(&first_state, &home.path().join("state"))?;
                    nodes.push(Service::start_in(binary, home.path(), &config, &env)?);
                }
            }
        }
        let adapter = nodes[0].adapter_token.clone();
        Ok(Replicas {
            nodes,
            _homes: homes,
            adapter,
            http,
        })
    }

    fn url(&self, client: usize, path: &str) -> String {
        format!(
            "http://{}{path}",
            self.nodes[client % self.nodes.len()].addr
        )
    }

    fn stop(self) {
        drop(self);
    }
}

fn distribute(from: &Path, to: &Path) -> anyhow::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    std::fs::create_dir_all(to)?;
    std::fs::set_permissions(to, std::fs::Permissions::from_mode(0o700))?;
    for name in ["adapter.token", "operator.token", "hmac.key"] {
        std::fs::copy(from.join(name), to.join(name))?;
        std::fs::set_permissions(to.join(name), std::fs::Permissions::from_mode(0o600))?;
    }
    Ok(())
}

/// Latencies (µs) and failures of one closed-loop measurement.
#[derive(Default)]
struct Cell {
    latencies_us: Vec<u64>,
    errors: u64,
    elapsed: Duration,
    first_error: Option<String>,
}

impl Cell {
    fn throughput(&self) -> f64 {
        self.latencies_us.len() as f64 / self.elapsed.as_secs_f64().max(1e-9)
    }

    fn percentile(&self, p: f64) -> f64 {
        let mut sorted = self.latencies_us.clone();
        sorted.sort_unstable();
        if sorted.is_empty() {
            return f64::NAN;
        }
        let rank = ((p / 100.0 * sorted.len() as f64).ceil() as usize).clamp(1, sorted.len());
        sorted[rank - 1] as f64 / 1000.0
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Cached,
    Model,
}

static NEXT_TURN: AtomicU64 = AtomicU64::new(0);

fn request(session: &str, turn: &str, command: &str, grant: bool) -> Value {
    json!({"session_id": session, "turn_id": turn, "surface": "bash", "command": command,
           "cwd": "/srv/app", "home": "/home/dev", "issue_grant": grant,
           "transcript": [{"role": "user", "text": "please build it"}]})
}

async fn post(
    http: &reqwest::Client,
    url: &str,
    token: &str,
    body: &Value,
) -> anyhow::Result<Value> {
    let response = http.post(url).bearer_auth(token).json(body).send().await?;
    let status = response.status();
    let value: Value = response.json().await?;
    if !status.is_success() {
        bail!("{status}: {value}");
    }
    Ok(value)
}

/// `clients` closed loops of `one` for `seconds`; `one` returns the
/// latency it timed (a pair times both requests).
async fn closed_loop<F, Fut>(clients: usize, seconds: Duration, one: F) -> Cell
where
    F: Fn(usize, u64) -> Fut + Send + Sync + 'static,
    Fut: std::future::Future<Output = anyhow::Result<()>> + Send,
{
    let one = Arc::new(one);
    let stop = Arc::new(AtomicBool::new(false));
    let start = Instant::now();
    let tasks: Vec<_> = (0..clients)
        .map(|client| {
            let (one, stop) = (Arc::clone(&one), Arc::clone(&stop));
            tokio::spawn(async move {
                let mut cell = Cell::default();
                let mut n = 0;
                while !stop.load(Ordering::Relaxed) {
                    let t = Instant::now();
                    match one(client, n).await {
                        Ok(()) => cell
                            .latencies_us
                            .push(u64::try_from(t.elapsed().as_micros()).unwrap_or(u64::MAX)),
                        Err(e) => {
                            cell.errors += 1;
                            cell.first_error.get_or_insert_with(|| e.to_string());
                        }
                    }
                    n += 1;
                }
                cell
            })
        })
        .collect();
    tokio::time::sleep(seconds).await;
    stop.store(true, Ordering::Relaxed);
    let mut total = Cell::default();
    for t in tasks {
        if let Ok(cell) = t.await {
            total.latencies_us.extend(cell.latencies_us);
            total.errors += cell.errors;
            if total.first_error.is_none() {
                total.first_error = cell.first_error;
            }
        }
    }
    total.elapsed = start.elapsed();
    if let Some(why) = &total.first_error {
        println!("  first failure: {why}");
    }
    total
}

/// Mint (a cache hit with `issue_grant`) then consume, per client session.
async fn grant_pairs(r: &Replicas, clients: usize, seconds: Duration) -> anyhow::Result<Cell> {
    // Warm: each client's verdict is cached (one model call each).
    for client in 0..clients {
        let body = request(
            &format!("pairs-{client}"),
            "t",
            &format!("cargo build -p pairs{client}"),
            false,
        );
        post(&r.http, &r.url(client, "/v1/review"), &r.adapter, &body).await?;
    }
    let (http, adapter) = (r.http.clone(), r.adapter.clone());
    let urls: Vec<(String, String)> = (0..clients)
        .map(|c| (r.url(c, "/v1/review"), r.url(c, "/v1/grants/consume")))
        .collect();
    let cell = closed_loop(clients, seconds, move |client, _| {
        let (http, adapter) = (http.clone(), adapter.clone());
        let (review_url, consume_url) = urls[client].clone();
        async move {
            let session = format!("pairs-{client}");
            let body = request(
                &session,
                "t",
                &format!("cargo build -p pairs{client}"),
                true,
            );
            let d = post(&http, &review_url, &adapter, &body).await?;
            if d["decision"] != "allow" || d["stage"] != "cache" {
                bail!("mint: {d}");
            }
            let token = d["grant"]["token"].as_str().context("no grant")?;
            let c = post(
                &http,
                &consume_url,
                &adapter,
                &json!({"session_id": session, "token": token, "request": body}),
            )
            .await?;
            if c["consumed"] != true {
                bail!("consume: {c}");
            }
            Ok(())
        }
    })
    .await;
    println!(
        "(b) grant pairs: {:.0} pairs/s at {clients} clients over {REPLICAS} replicas ({} pairs, {} errors)",
        cell.throughput(),
        cell.latencies_us.len(),
        cell.errors
    );
    Ok(cell)
}

/// The one request client `client` of a `cached` cell sends: reviewed
/// once before the timed run, a verdict-cache hit from then on.
fn cached_request(client: usize) -> Value {
    request(
        &format!("cached-{client}"),
        "t",
        &format!("cargo build -p cached{client}"),
        false,
    )
}

/// `cached` or `model` reviews over the replicas.
async fn reviewed(
    r: &Replicas,
    kind: Kind,
    clients: usize,
    seconds: Duration,
) -> anyhow::Result<Cell> {
    if kind == Kind::Cached {
        for client in 0..clients {
            let body = cached_request(client);
            post(&r.http, &r.url(client, "/v1/review"), &r.adapter, &body).await?;
        }
    }
    let (http, adapter) = (r.http.clone(), r.adapter.clone());
    let urls: Vec<String> = (0..clients).map(|c| r.url(c, "/v1/review")).collect();
    let cell = closed_loop(clients, seconds, move |client, _| {
        let (http, adapter, url) = (http.clone(), adapter.clone(), urls[client].clone());
        async move {
            let (body, stage) = match kind {
                Kind::Cached => (cached_request(client), "cache"),
                Kind::Model => {
                    let n = NEXT_TURN.fetch_add(1, Ordering::Relaxed);
                    (
                        request(
                            &format!("model-{client}"),
                            &format!("t{n}"),
                            &format!("cargo build -p m{client}x{n}"),
                            false,
                        ),
                        "reviewer",
                    )
                }
            };
            let d = post(&http, &url, &adapter, &body).await?;
            if d["decision"] != "allow" || d["stage"] != stage {
                bail!("{kind:?}: {d}");
            }
            Ok(())
        }
    })
    .await;
    Ok(cell)
}
