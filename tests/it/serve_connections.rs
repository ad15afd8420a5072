//! `vouch serve`'s connection hygiene (issue 43), against the real binary
//! on 127.0.0.1:0: connections that never finish their headers are
//! answered 408 and closed within `server.header_timeout_ms` while reviews
//! keep answering; a kept-alive connection that sends no next request is
//! closed after it too; connections over `server.max_connections_per_peer`
//! or `server.max_connections` are answered 503 at once; and `/metrics`
//! counts each.
//!
//! File descriptors: the 2,000-connection test holds 2,000 sockets in this
//! process and 2,000 in the service; it raises this process's soft
//! `RLIMIT_NOFILE` (the service inherits it) to at most 8,192 within the
//! hard limit, and says so if the hard limit is too low.

use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpSocket, TcpStream};

use crate::support::serve::Running;

/// Raises the soft open-file limit to `wanted` (within the hard limit);
/// panics naming the limit when the hard limit is lower.
fn raise_open_files(wanted: u64) {
    use rustix::process::{Resource, Rlimit, getrlimit, setrlimit};
    let limit = getrlimit(Resource::Nofile);
    let hard = limit.maximum.unwrap_or(u64::MAX);
    assert!(
        hard >= wanted,
        "this test needs {wanted} open files; the hard limit is {hard} (raise `ulimit -Hn`)"
    );
    if limit.current.is_some_and(|soft| soft < wanted) {
        setrlimit(
            Resource::Nofile,
            Rlimit {
                current: Some(wanted),
                maximum: limit.maximum,
            },
        )
        .unwrap();
    }
}

fn review(command: &str) -> Value {
    json!({"session_id": "conns", "surface": "bash", "command": command,
           "cwd": "/srv/app", "home": "/home/dev"})
}

/// A counter's value in the `/metrics` text.
async fn metric(http: &reqwest::Client, server: &Running, series: &str) -> u64 {
    let text = http
        .get(server.url("/metrics"))
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    text.lines()
        .find_map(|l| l.strip_prefix(series)?.trim().parse().ok())
        .unwrap_or_else(|| panic!("no `{series}` in /metrics"))
}

/// Reads until the service closes the connection (or `limit` passes);
/// returns what it wrote and when it closed, counted from `since`.
async fn until_closed(mut conn: TcpStream, since: Instant, limit: Duration) -> (Vec<u8>, Duration) {
    let mut got = Vec::new();
    let read = tokio::time::timeout(limit, conn.read_to_end(&mut got)).await;
    let closed = since.elapsed();
    match read {
        Ok(_) => (got, closed),
        Err(_) => (b"(still open)".to_vec(), closed),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn two_thousand_header_less_connections_are_closed_in_time_while_reviews_answer() {
    const CONNECTIONS: usize = 2_000;
    const TIMEOUT: Duration = Duration::from_millis(2_000);
    raise_open_files(8_192);
    let home = tempfile::tempdir().unwrap();
    let server = Running::start(
        home.path(),
        "[server]\nheader_timeout_ms = 2000\nmax_connections = 4096\n\
         max_connections_per_peer = 4096\nrate_limit_per_second = 100000\n",
        &[],
    );
    let token = server.token("adapter");
    let http = reqwest::Client::builder()
        .timeout(Duration::from_secs(10))
        .build()
        .unwrap();
    // Half send nothing, half the start of a request that never ends.
    let mut readers = tokio::task::JoinSet::new();
    for k in 0..CONNECTIONS {
        let opened = Instant::now();
        let mut conn = TcpStream::connect(&server.listen).await.unwrap();
        if k % 2 == 1 {
            conn.write_all(
                b"POST /v1/review HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\n",
            )
            .await
            .unwrap();
        }
        readers.spawn(until_closed(conn, opened, TIMEOUT * 5));
    }
    // While they are held open: reviews answer, each in time.
    let mut answered = 0;
    let window = Instant::now();
    while window.elapsed() < TIMEOUT / 2 {
        let started = Instant::now();
        let decision: Value = http
            .post(server.url("/v1/review"))
            .bearer_auth(&token)
            .json(&review("rm -rf /"))
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        assert_eq!(decision["decision"], "deny", "{decision}");
        assert!(
            started.elapsed() < Duration::from_secs(1),
            "{:?}",
            started.elapsed()
        );
        answered += 1;
    }
    assert!(answered >= 3, "{answered} reviews answered");
    // Each header-less connection: 408, closed, within the header timeout
    // (and the time to serve its timer on a busy machine).
    let mut closed = 0;
    while let Some(joined) = readers.join_next().await {
        let (got, after) = joined.unwrap();
        assert!(
            got.starts_with(b"HTTP/1.1 408 Request Timeout\r\n"),
            "{}",
            String::from_utf8_lossy(&got)
        );
        assert!(after >= TIMEOUT - Duration::from_millis(50), "{after:?}");
        assert!(after <= TIMEOUT + Duration::from_secs(3), "{after:?}");
        closed += 1;
    }
    assert_eq!(closed, CONNECTIONS);
    assert_eq!(
        metric(
            &http,
            &server,
            "vouch_header_timeouts_total{request=\"first\"}"
        )
        .await,
        CONNECTIONS as u64
    );
    // Still answering after them.
    let decision: Value = http
        .post(server.url("/v1/review"))
        .bearer_auth(&token)
        .json(&review("rm -rf ~"))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(decision["stage"], "hard_deny", "{decision}");
    server.stop();
}

/// A connection from `source` (a loopback address) to `to`.
async fn connect_from(source: &str, to: &str) -> TcpStream {
    let socket = TcpSocket::new_v4().unwrap();
    socket.bind(format!("{source}:0").parse().unwrap()).unwrap();
    socket.connect(to.parse().unwrap()).await.unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn connections_over_a_cap_are_answered_503_at_once() {
    let home = tempfile::tempdir().unwrap();
    let server = Running::start(
        home.path(),
        "[server]\nheader_timeout_ms = 60000\nmax_connections = 16\n\
         max_connections_per_peer = 8\n",
        &[],
    );
    let http = reqwest::Client::builder()
        .timeout(Duration::from_secs(10))
        .pool_max_idle_per_host(0)
        .build()
        .unwrap();
    let mut held = Vec::new();
    for _ in 0..8 {
        held.push(connect_from("127.0.0.1", &server.listen).await);
    }
    // The ninth from the same address: 503, closed, at once.
    let started = Instant::now();
    let mut ninth = connect_from("127.0.0.1", &server.listen).await;
    ninth
        .write_all(b"GET /livez HTTP/1.1\r\nhost: x\r\n\r\n")
        .await
        .unwrap();
    let (got, _) = until_closed(ninth, started, Duration::from_secs(5)).await;
    assert!(
        got.starts_with(b"HTTP/1.1 503 Service Unavailable\r\n"),
        "{}",
        String::from_utf8_lossy(&got)
    );
    assert!(started.elapsed() < Duration::from_secs(2));
    // Another address still gets in, up to the total.
    for _ in 0..8 {
        held.push(connect_from("127.0.0.2", &server.listen).await);
    }
    let started = Instant::now();
    let over = connect_from("127.0.0.3", &server.listen).await;
    let (got, _) = until_closed(over, started, Duration::from_secs(5)).await;
    assert!(
        got.starts_with(b"HTTP/1.1 503 Service Unavailable\r\n"),
        "{}",
        String::from_utf8_lossy(&got)
    );
    // The places come back as the connections close.
    drop(held);
    let deadline = Instant::now() + Duration::from_secs(5);
    let live = loop {
        match http.get(server.url("/livez")).send().await {
            Ok(r) if r.status() == 200 => break r,
            Ok(_) | Err(_) if Instant::now() < deadline => {
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
            other => panic!("{other:?}"),
        }
    };
    assert_eq!(live.status(), 200);
    assert!(
        metric(
            &http,
            &server,
            "vouch_connections_refused_total{reason=\"per_peer\"}"
        )
        .await
            >= 1
    );
    assert!(
        metric(
            &http,
            &server,
            "vouch_connections_refused_total{reason=\"total\"}"
        )
        .await
            >= 1
    );
    server.stop();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_kept_alive_connection_without_a_next_request_is_closed_after_the_timeout() {
    let home = tempfile::tempdir().unwrap();
    let server = Running::start(home.path(), "[server]\nheader_timeout_ms = 1000\n", &[]);
    let started = Instant::now();
    let mut conn = TcpStream::connect(&server.listen).await.unwrap();
    conn.write_all(b"GET /livez HTTP/1.1\r\nhost: x\r\n\r\n")
        .await
        .unwrap();
    let mut first = Vec::new();
    while !first.ends_with(b"\"alive\"}") {
        let mut chunk = [0u8; 256];
        let n = conn.read(&mut chunk).await.unwrap();
        assert!(n > 0, "{}", String::from_utf8_lossy(&first));
        first.extend_from_slice(&chunk[..n]);
    }
    assert!(first.starts_with(b"HTTP/1.1 200 OK\r\n"), "{first:?}");
    // Nothing more is sent: the service closes the connection.
    let (rest, after) = until_closed(conn, started, Duration::from_secs(10)).await;
    assert!(rest.is_empty(), "{rest:?}");
    assert!(after >= Duration::from_millis(950), "{after:?}");
    assert!(after <= Duration::from_secs(4), "{after:?}");
    let http = reqwest::Client::new();
    assert_eq!(
        metric(
            &http,
            &server,
            "vouch_header_timeouts_total{request=\"later\"}"
        )
        .await,
        1
    );
    server.stop();
}
