//! Closed-loop load over keep-alive HTTP/1.1 connections: each client sends
//! its next request when the previous answer has arrived, for a fixed time,
//! and records every latency (microseconds), so p99.9 is an observed value.

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use axum::body::Bytes;
use axum::http::{HeaderValue, Method, Request, header};
use http_body_util::{BodyExt, Full};
use serde_json::{Value, json};

/// What one request asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// `GET /livez`: the trivial 200 route, the floor.
    Livez,
    /// A bash hard deny (`rm -rf /`): answered before routing.
    HardDeny,
    /// A `read` of a project file: routed `pass`, no model.
    Pass,
    /// The same reviewed command again in the same turn: the verdict cache.
    Cached,
    /// A new command in a new turn: one model call each.
    Model,
    /// The test model server called straight from the load generator (no
    /// vouch): a request of the size vouch sends, answered after the same
    /// fixed delay. Not a target: it shows how much of the `model` cell's
    /// overhead is the test model's own (its timer, its HTTP, this
    /// process's clients sharing the cores).
    ModelDirect,
    /// The four review kinds in turn.
    Mixed,
}

impl Kind {
    pub const ALL: [Kind; 7] = [
        Kind::Livez,
        Kind::HardDeny,
        Kind::Pass,
        Kind::Cached,
        Kind::Model,
        Kind::ModelDirect,
        Kind::Mixed,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Kind::Livez => "livez",
            Kind::HardDeny => "hard_deny",
            Kind::Pass => "pass",
            Kind::Cached => "cached",
            Kind::Model => "model",
            Kind::ModelDirect => "model_direct",
            Kind::Mixed => "mixed",
        }
    }

    /// The request number `n` of client `client`.
    fn body(self, client: usize, n: u64) -> Option<Value> {
        let session = format!("loadgen-{client}");
        let base = |surface: &str| json!({"session_id": session, "surface": surface, "cwd": "/srv/app", "home": "/home/dev"});
        let mut v = match self {
            Kind::Livez => return None,
            Kind::ModelDirect => return Some(direct_body(client, n)),
            Kind::HardDeny => base("bash"),
            Kind::Pass => base("read"),
            Kind::Cached | Kind::Model => base("bash"),
            Kind::Mixed => {
                let kinds = [Kind::HardDeny, Kind::Pass, Kind::Cached, Kind::Model];
                let kind = kinds
                    .get(usize::try_from(n % 4).unwrap_or(0))
                    .copied()
                    .unwrap_or(Kind::HardDeny);
                return kind.body(client, n);
            }
        };
        match self {
            Kind::HardDeny => v["command"] = "rm -rf /".into(),
            Kind::Pass => v["path"] = "/srv/app/README.md".into(),
            Kind::Cached => {
                v["turn_id"] = "cached-turn".into();
                v["command"] = format!("cargo build -p cached{client}").into();
            }
            _ => {
                v["turn_id"] = format!("turn-{n}").into();
                v["command"] = format!("cargo build -p crate{client}x{n}").into();
            }
        }
        Some(v)
    }
}

/// An OpenAI chat-completions request of the size and shape vouch sends
/// for the `model` kind (system prompt, a user packet of ~1.5 KiB, the
/// verdict schema), distinct per request.
fn direct_body(client: usize, n: u64) -> Value {
    let packet = format!(
        "{{\"request\":{{\"surface\":\"bash\",\"command\":\"cargo build -p crate{client}x{n}\",\"cwd\":\"/srv/app\"}},\"evidence\":[]}} {}",
        "context ".repeat(150)
    );
    json!({
        "model": "loadgen",
        "max_completion_tokens": 256,
        "messages": [
            {"role": "system", "content": "You review one action of a coding agent. Answer with the verdict JSON."},
            {"role": "user", "content": packet},
        ],
        "response_format": {"type": "json_schema", "json_schema": {"name": "verdict", "strict": true, "schema": {"type": "object"}}},
    })
}

/// Where a kind's requests go: `vouch serve`, or the test model server.
#[derive(Debug, Clone, Copy)]
pub struct Endpoints {
    pub service: SocketAddr,
    pub model: SocketAddr,
}

impl Endpoints {
    fn of(self, kind: Kind) -> SocketAddr {
        match kind {
            Kind::ModelDirect => self.model,
            Kind::Livez
            | Kind::HardDeny
            | Kind::Pass
            | Kind::Cached
            | Kind::Model
            | Kind::Mixed => self.service,
        }
    }
}

/// One keep-alive connection.
pub struct Connection {
    sender: hyper::client::conn::http1::SendRequest<Full<Bytes>>,
    authorization: HeaderValue,
    /// The path bodies are posted to.
    path: &'static str,
}

impl Connection {
    pub async fn open(addr: SocketAddr, token: &str, kind: Kind) -> anyhow::Result<Connection> {
        let stream = tokio::net::TcpStream::connect(addr).await?;
        stream.set_nodelay(true)?;
        let (sender, connection) =
            hyper::client::conn::http1::handshake(hyper_util::rt::TokioIo::new(stream)).await?;
        tokio::spawn(connection);
        Ok(Connection {
            sender,
            authorization: format!("Bearer {token}").parse()?,
            path: match kind {
                Kind::ModelDirect => "/v1/chat/completions",
                Kind::Livez
                | Kind::HardDeny
                | Kind::Pass
                | Kind::Cached
                | Kind::Model
                | Kind::Mixed => "/v1/review",
            },
        })
    }

    /// Sends `body` to the kind's path (`/v1/review`, or the model's), or
    /// `GET /livez` without one.
    pub async fn send(&mut self, body: Option<&Value>) -> anyhow::Result<(u16, Bytes)> {
        self.sender.ready().await?;
        let builder = Request::builder()
            .header(header::HOST, "vouch")
            .header(header::AUTHORIZATION, self.authorization.clone());
        let request = match body {
            Some(v) => builder
                .method(Method::POST)
                .uri(self.path)
                .header(header::CONTENT_TYPE, "application/json")
                .body(Full::new(Bytes::from(v.to_string())))?,
            None => builder
                .method(Method::GET)
                .uri("/livez")
                .body(Full::new(Bytes::new()))?,
        };
        let response = self.sender.send_request(request).await?;
        let status = response.status().as_u16();
        Ok((status, response.into_body().collect().await?.to_bytes()))
    }
}

/// What one cell (kind × clients) measured.
pub struct Cell {
    pub kind: Kind,
    pub clients: usize,
    pub elapsed: Duration,
    /// Sorted latencies in µs.
    pub latencies: Vec<u32>,
    pub errors: u64,
    /// `decision/stage` of the first answer of each review kind.
    pub decisions: Vec<String>,
    pub peak_rss_kib: u64,
    /// The server's CPU time (user + system, all threads) over the timed
    /// part of the cell: what one request costs it, whatever else shares
    /// the cores (throughput and latency depend on that; this much less).
    pub server_cpu: Option<Duration>,
}

impl Cell {
    /// The server's CPU time per answered request, in µs.
    pub fn cpu_us_per_request(&self) -> f64 {
        match self.server_cpu {
            Some(cpu) if !self.latencies.is_empty() => {
                cpu.as_secs_f64() * 1e6 / self.latencies.len() as f64
            }
            _ => f64::NAN,
        }
    }

    pub fn throughput(&self) -> f64 {
        self.latencies.len() as f64 / self.elapsed.as_secs_f64()
    }

    /// The `p`th percentile in ms (nearest rank).
    pub fn percentile(&self, p: f64) -> f64 {
        let n = self.latencies.len();
        if n == 0 {
            return f64::NAN;
        }
        let rank = ((p / 100.0) * n as f64).ceil() as usize;
        self.latencies
            .get(rank.clamp(1, n) - 1)
            .map_or(f64::NAN, |v| f64::from(*v) / 1000.0)
    }
}

/// Runs `clients` closed-loop clients of `kind` for `duration`.
pub async fn run_cell(
    endpoints: Endpoints,
    token: &str,
    pid: u32,
    kind: Kind,
    clients: usize,
    duration: Duration,
) -> anyhow::Result<Cell> {
    let addr = endpoints.of(kind);
    let errors = Arc::new(AtomicU64::new(0));
    let stop = Arc::new(AtomicBool::new(false));
    let peak = Arc::new(AtomicU64::new(0));
    let sampler = {
        let (stop, peak) = (Arc::clone(&stop), Arc::clone(&peak));
        tokio::spawn(async move {
            while !stop.load(Ordering::Relaxed) {
                if let Some((rss, _)) = crate::target::memory_kib(pid) {
                    peak.fetch_max(rss, Ordering::Relaxed);
                }
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
        })
    };
    // Every client connects and sends one untimed request first (it also
    // fills the cache entry the `cached` kind then hits).
    let mut warmed = Vec::with_capacity(clients);
    for client in 0..clients {
        let mut connection = Connection::open(addr, token, kind).await?;
        let (status, answer) = connection
            .send(kind.body(client, u64::MAX).as_ref())
            .await?;
        if status != 200 {
            anyhow::bail!(
                "{} warm-up answered {status}: {}",
                kind.name(),
                String::from_utf8_lossy(&answer)
            );
        }
        warmed.push((connection, summary(&answer)));
    }
    let decisions = dedup(warmed.iter().map(|(_, s)| s.clone()));
    let cpu_before = crate::target::cpu_time(pid);
    let started = Instant::now();
    let deadline = started + duration;
    let mut workers = Vec::with_capacity(clients);
    for (client, (connection, _)) in warmed.into_iter().enumerate() {
        let errors = Arc::clone(&errors);
        workers.push(tokio::spawn(client_loop(
            addr,
            token.to_owned(),
            connection,
            kind,
            client,
            deadline,
            errors,
        )));
    }
    let mut latencies = Vec::new();
    for w in workers {
        latencies.extend(w.await?);
    }
    let elapsed = started.elapsed();
    // A cell vouch does not serve has no server CPU to divide.
    let server_cpu = crate::target::cpu_time(pid)
        .zip(cpu_before)
        .map(|(after, before)| after.saturating_sub(before))
        .filter(|_| kind != Kind::ModelDirect);
    stop.store(true, Ordering::Relaxed);
    let _ = sampler.await;
    latencies.sort_unstable();
    Ok(Cell {
        kind,
        clients,
        elapsed,
        latencies,
        errors: errors.load(Ordering::Relaxed),
        decisions,
        peak_rss_kib: peak.load(Ordering::Relaxed),
        server_cpu,
    })
}

async fn client_loop(
    addr: SocketAddr,
    token: String,
    connection: Connection,
    kind: Kind,
    client: usize,
    deadline: Instant,
    errors: Arc<AtomicU64>,
) -> Vec<u32> {
    let mut latencies = Vec::with_capacity(50_000);
    let mut connection = Some(connection);
    let mut n = 0u64;
    while Instant::now() < deadline {
        let body = kind.body(client, n);
        n += 1;
        let sent = Instant::now();
        let ok = match connection.as_mut() {
            Some(c) => matches!(c.send(body.as_ref()).await, Ok((200, _))),
            None => false,
        };
        latencies.push(u32::try_from(sent.elapsed().as_micros()).unwrap_or(u32::MAX));
        if !ok {
            errors.fetch_add(1, Ordering::Relaxed);
            // A broken connection is replaced and counted, never retried silently.
            connection = Connection::open(addr, &token, kind).await.ok();
        }
    }
    latencies
}

fn summary(answer: &[u8]) -> String {
    let v: Value = serde_json::from_slice(answer).unwrap_or(Value::Null);
    match (v["decision"].as_str(), v["stage"].as_str()) {
        (Some(d), Some(s)) => format!("{d}/{s}"),
        // `livez` says its status; the model, what it answered.
        _ => v["status"]
            .as_str()
            .or(v["object"].as_str())
            .unwrap_or("?")
            .to_owned(),
    }
}

fn dedup(items: impl Iterator<Item = String>) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for item in items {
        if !out.contains(&item) {
            out.push(item);
        }
    }
    out
}
