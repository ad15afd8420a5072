//! Closed-loop load over keep-alive HTTP/1.1 connections: each client sends
//! its next request when the previous answer has arrived, for a fixed time,
//! and records every latency (microseconds), so p99.9 is an observed value.

use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::body::Bytes;
use axum::http::{HeaderValue, Method, Request, header};
use http_body_util::{BodyExt, Full};
use serde_json::{Value, json};

/// Whether a decision `answer` begins `{"decision":"<decision>","stage":"<stage>"`
/// (the `Decision` field order): a byte comparison, not a parse, so checking
/// every answer adds little to the load generator's share of the cores.
fn decided(answer: &[u8], decision: &str, stage: &str) -> bool {
    ["{\"decision\":\"", decision, "\",\"stage\":\"", stage, "\""]
        .iter()
        .try_fold(answer, |rest, part| rest.strip_prefix(part.as_bytes()))
        .is_some()
}

/// The unknown field a `refused` body ends with (fields serialize in
/// name order), named in the 400 it gets.
const REFUSED_FIELD: &str = "zz_not_a_field";

/// Numbers the `model` requests of the whole run.
static NEXT_REVIEW: AtomicU64 = AtomicU64::new(0);

/// What one request asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// `GET /livez`: the trivial 200 route, the floor.
    Livez,
    /// A bash hard deny (`rm -rf /`): answered before routing.
    HardDeny,
    /// The hard deny's body with one unknown field last, to the same route:
    /// the token check, rate limit, deadline, body read and strict parse of
    /// a hard deny, then a 400 instead of a decision. The `POST` exchange
    /// without the decision, so ratio (a) splits into the exchange's share
    /// and the decision's.
    Refused,
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
    pub const ALL: [Kind; 8] = [
        Kind::Livez,
        Kind::Refused,
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
            Kind::Refused => "refused",
            Kind::Pass => "pass",
            Kind::Cached => "cached",
            Kind::Model => "model",
            Kind::ModelDirect => "model_direct",
            Kind::Mixed => "mixed",
        }
    }

    /// The body of request number `n` of client `client`, serialized: a
    /// kind whose body does not change from request to request builds it
    /// once per client ([`Kind::fixed_body`]), so the load generator's own
    /// CPU, which shares the cores with the server, stays out of ratio (a).
    fn body(self, client: usize, n: u64) -> Option<Bytes> {
        self.value(client, n)
            .map(|v| Bytes::from(serde_json::to_vec(&v).unwrap_or_default()))
    }

    /// The body every request of this kind and client sends, when it never
    /// changes (`livez` sends none; `model` and `mixed` change per request).
    fn fixed_body(self, client: usize) -> Option<Bytes> {
        match self {
            Kind::HardDeny | Kind::Refused | Kind::Pass | Kind::Cached => self.body(client, 0),
            Kind::Livez | Kind::Model | Kind::ModelDirect | Kind::Mixed => None,
        }
    }

    /// The kind request number `n` of this kind is (`mixed` takes the four
    /// review kinds in turn).
    fn at(self, n: u64) -> Kind {
        match self {
            Kind::Mixed => {
                let kinds = [Kind::HardDeny, Kind::Pass, Kind::Cached, Kind::Model];
                kinds
                    .get(usize::try_from(n % 4).unwrap_or(0))
                    .copied()
                    .unwrap_or(Kind::HardDeny)
            }
            Kind::Livez
            | Kind::HardDeny
            | Kind::Refused
            | Kind::Pass
            | Kind::Cached
            | Kind::Model
            | Kind::ModelDirect => self,
        }
    }

    /// The status every answer of this kind must have.
    fn status(self) -> u16 {
        match self {
            Kind::Refused => 400,
            Kind::Livez
            | Kind::HardDeny
            | Kind::Pass
            | Kind::Cached
            | Kind::Model
            | Kind::ModelDirect
            | Kind::Mixed => 200,
        }
    }

    /// Whether `answer` (with [`Kind::status`]) is what request `n` of this
    /// kind must get: every timed answer is checked, so a cell that counts
    /// wrong answers as throughput cannot pass.
    fn expected(self, n: u64, answer: &[u8]) -> bool {
        match self.at(n) {
            Kind::Livez => answer.starts_with(b"{\"status\":\"alive\""),
            Kind::HardDeny => decided(answer, "deny", "hard_deny"),
            Kind::Refused => memchr::memmem::find(answer, REFUSED_FIELD.as_bytes()).is_some(),
            Kind::Pass => decided(answer, "allow", "routing"),
            // In its own cell the warm-up filled the cache; inside `mixed`
            // the first one of a client may be the review that fills it.
            Kind::Cached => {
                decided(answer, "allow", "cache")
                    || (self == Kind::Mixed && decided(answer, "allow", "reviewer"))
            }
            Kind::Model => decided(answer, "allow", "reviewer"),
            Kind::ModelDirect => memchr::memmem::find(answer, b"\"chat.completion\"").is_some(),
            // `at` never answers `mixed`.
            Kind::Mixed => false,
        }
    }

    /// The request number `n` of client `client`.
    fn value(self, client: usize, n: u64) -> Option<Value> {
        let session = format!("loadgen-{client}");
        let base = |surface: &str| json!({"session_id": session, "surface": surface, "cwd": "/srv/app", "home": "/home/dev"});
        let mut v = match self {
            Kind::Livez => return None,
            Kind::ModelDirect => return Some(direct_body(client, n)),
            Kind::Refused => {
                let mut v = Kind::HardDeny.value(client, n)?;
                v[REFUSED_FIELD] = true.into();
                return Some(v);
            }
            Kind::HardDeny => base("bash"),
            Kind::Pass => base("read"),
            Kind::Cached | Kind::Model => base("bash"),
            Kind::Mixed => return self.at(n).value(client, n),
        };
        match self {
            // The line issue 30 measures: a list (two units), the wipe
            // judged in the directory the first unit moves to.
            Kind::HardDeny => v["command"] = "cd /tmp && rm -rf ~".into(),
            Kind::Pass => v["path"] = "/srv/app/README.md".into(),
            Kind::Cached => {
                v["turn_id"] = "cached-turn".into();
                v["command"] = format!("cargo build -p cached{client}").into();
            }
            _ => {
                // Unique across cells, not only within one: a command that
                // an earlier cell (fewer clients, the same session names)
                // already reviewed would be a verdict-cache hit.
                let review = NEXT_REVIEW.fetch_add(1, Ordering::Relaxed);
                v["turn_id"] = format!("turn-{review}").into();
                v["command"] = format!("cargo build -p crate{client}x{review}").into();
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
            | Kind::Refused
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
                | Kind::Refused
                | Kind::Pass
                | Kind::Cached
                | Kind::Model
                | Kind::Mixed => "/v1/review",
            },
        })
    }

    /// Sends `body` to the kind's path (`/v1/review`, or the model's), or
    /// `GET /livez` without one.
    pub async fn send(&mut self, body: Option<Bytes>) -> anyhow::Result<(u16, Bytes)> {
        self.sender.ready().await?;
        let builder = Request::builder()
            .header(header::HOST, "vouch")
            .header(header::AUTHORIZATION, self.authorization.clone());
        let request = match body {
            Some(v) => builder
                .method(Method::POST)
                .uri(self.path)
                .header(header::CONTENT_TYPE, "application/json")
                .body(Full::new(v))?,
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
    /// Requests that failed: a transport error, a status other than 200,
    /// or an answer other than the kind's ([`Kind::expected`]).
    pub errors: u64,
    /// What the first failed request got.
    pub first_error: Option<String>,
    /// `decision/stage` of the first answer of each review kind.
    pub decisions: Vec<String>,
    pub peak_rss_kib: u64,
    /// The server's CPU time (user + system, all threads) over the timed
    /// part of the cell: what one request costs it, whatever else shares
    /// the cores (throughput and latency depend on that; this much less).
    pub server_cpu: Option<Duration>,
    /// This process's CPU time over the same part.
    pub own_cpu: Option<Duration>,
}

impl Cell {
    /// The server's CPU time per answered request, in µs.
    pub fn cpu_us_per_request(&self) -> f64 {
        self.per_request(self.server_cpu)
    }

    /// The load generator's own CPU time per request, in µs: its clients,
    /// and in the `model` cells also the in-process test model.
    pub fn own_cpu_us_per_request(&self) -> f64 {
        self.per_request(self.own_cpu)
    }

    fn per_request(&self, cpu: Option<Duration>) -> f64 {
        match cpu {
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
    let warmed = warm_up(addr, token, kind, clients).await?;
    let decisions = dedup(warmed.iter().map(|(_, s)| s.clone()));
    let cpu_before = crate::target::cpu_time(pid);
    let own_before = crate::target::cpu_time(std::process::id());
    let started = Instant::now();
    let deadline = started + duration;
    let run = Arc::new(Run {
        addr,
        token: token.to_owned(),
        kind,
        deadline,
        errors: AtomicU64::new(0),
        first_error: Mutex::new(None),
    });
    let mut workers = Vec::with_capacity(clients);
    for (client, (connection, _)) in warmed.into_iter().enumerate() {
        workers.push(tokio::spawn(client_loop(
            Arc::clone(&run),
            connection,
            client,
        )));
    }
    let mut latencies = Vec::new();
    for w in workers {
        latencies.extend(w.await?);
    }
    let elapsed = started.elapsed();
    let own_cpu = crate::target::cpu_time(std::process::id())
        .zip(own_before)
        .map(|(after, before)| after.saturating_sub(before));
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
        errors: run.errors.load(Ordering::Relaxed),
        first_error: run
            .first_error
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .take(),
        decisions,
        peak_rss_kib: peak.load(Ordering::Relaxed),
        server_cpu,
        own_cpu,
    })
}

/// Every client connects and sends one untimed request first (it also
/// fills the cache entry the `cached` kind then hits): its connection and
/// the answer's `decision/stage`.
async fn warm_up(
    addr: SocketAddr,
    token: &str,
    kind: Kind,
    clients: usize,
) -> anyhow::Result<Vec<(Connection, String)>> {
    let mut warmed = Vec::with_capacity(clients);
    for client in 0..clients {
        let mut connection = Connection::open(addr, token, kind).await?;
        let (status, answer) = connection.send(kind.body(client, u64::MAX)).await?;
        if status != kind.status() {
            anyhow::bail!(
                "{} warm-up answered {status}: {}",
                kind.name(),
                String::from_utf8_lossy(&answer)
            );
        }
        warmed.push((connection, summary(&answer)));
    }
    Ok(warmed)
}

/// What every client of one cell shares.
struct Run {
    addr: SocketAddr,
    token: String,
    kind: Kind,
    deadline: Instant,
    errors: AtomicU64,
    first_error: Mutex<Option<String>>,
}

impl Run {
    fn failed(&self, why: String) {
        self.errors.fetch_add(1, Ordering::Relaxed);
        self.first_error
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .get_or_insert(why);
    }
}

async fn client_loop(run: Arc<Run>, connection: Connection, client: usize) -> Vec<u32> {
    let kind = run.kind;
    let mut latencies = Vec::with_capacity(50_000);
    let mut connection = Some(connection);
    let fixed = kind.fixed_body(client);
    let mut n = 0u64;
    while Instant::now() < run.deadline {
        let body = match &fixed {
            Some(body) => Some(body.clone()),
            None => kind.body(client, n),
        };
        let sent = Instant::now();
        let failure = match connection.as_mut() {
            Some(c) => match c.send(body).await {
                Ok((status, answer)) if status == kind.status() && kind.expected(n, &answer) => {
                    None
                }
                Ok((status, answer)) => Some(format!(
                    "{} answered {status}: {}",
                    kind.at(n).name(),
                    String::from_utf8_lossy(answer.get(..200).unwrap_or(&answer))
                )),
                Err(e) => Some(format!("{}: {e}", kind.at(n).name())),
            },
            None => Some("no connection".to_owned()),
        };
        latencies.push(u32::try_from(sent.elapsed().as_micros()).unwrap_or(u32::MAX));
        n += 1;
        if let Some(why) = failure {
            run.failed(why);
            // A broken connection is replaced and counted, never retried silently.
            connection = Connection::open(run.addr, &run.token, kind).await.ok();
        }
    }
    latencies
}

fn summary(answer: &[u8]) -> String {
    let v: Value = serde_json::from_slice(answer).unwrap_or(Value::Null);
    match (v["decision"].as_str(), v["stage"].as_str()) {
        (Some(d), Some(s)) => format!("{d}/{s}"),
        // A refusal says its code.
        _ if v["error"]["code"].is_string() => {
            format!("error/{}", v["error"]["code"].as_str().unwrap_or("?"))
        }
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
