//! Scripted model servers for the reviewer tests: a real axum HTTP server on
//! 127.0.0.1:0 that answers each request with the next scripted reply and
//! records every request's path, headers and JSON body; and a raw TCP server
//! that reads a request and then drops the connection without answering
//! (what a crashed proxy or a reset looks like to the client).

#![allow(dead_code)]

use std::collections::VecDeque;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::Router;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use serde_json::Value;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;
use tokio::task::JoinHandle;

/// One request as the server saw it.
#[derive(Debug, Clone)]
pub struct Recorded {
    pub path: String,
    pub headers: HeaderMap,
    pub raw_body: String,
    pub body: Value,
}

/// One scripted reply.
#[derive(Debug, Clone)]
pub struct Step {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: String,
    pub delay: Duration,
}

impl Step {
    pub fn json(status: u16, body: Value) -> Step {
        Step {
            status,
            headers: vec![("content-type".into(), "application/json".into())],
            body: body.to_string(),
            delay: Duration::ZERO,
        }
    }

    pub fn header(mut self, name: &str, value: impl Into<String>) -> Step {
        self.headers.push((name.into(), value.into()));
        self
    }

    pub fn delayed(mut self, delay: Duration) -> Step {
        self.delay = delay;
        self
    }
}

#[derive(Default)]
struct Shared {
    script: Mutex<VecDeque<Step>>,
    recorded: Mutex<Vec<Recorded>>,
}

fn record(shared: &Shared, path: String, headers: HeaderMap, raw: &[u8]) {
    let raw_body = String::from_utf8_lossy(raw).into_owned();
    let body = serde_json::from_slice(raw).unwrap_or(Value::Null);
    shared.recorded.lock().unwrap().push(Recorded {
        path,
        headers,
        raw_body,
        body,
    });
}

/// The axum model server.
pub struct ModelServer {
    pub addr: SocketAddr,
    shared: Arc<Shared>,
    task: JoinHandle<()>,
}

async fn handle(
    State(shared): State<Arc<Shared>>,
    uri: Uri,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    record(&shared, uri.path().to_owned(), headers, &body);
    let step = shared.script.lock().unwrap().pop_front();
    let Some(step) = step else {
        return (StatusCode::IM_A_TEAPOT, "script exhausted").into_response();
    };
    tokio::time::sleep(step.delay).await;
    let mut response = (StatusCode::from_u16(step.status).unwrap(), step.body).into_response();
    for (name, value) in step.headers {
        response.headers_mut().insert(
            axum::http::HeaderName::from_bytes(name.as_bytes()).unwrap(),
            value.parse().unwrap(),
        );
    }
    response
}

impl ModelServer {
    pub async fn start(script: Vec<Step>) -> ModelServer {
        let shared = Arc::new(Shared {
            script: Mutex::new(script.into()),
            recorded: Mutex::new(Vec::new()),
        });
        let app = Router::new()
            .fallback(handle)
            .with_state(Arc::clone(&shared));
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let task = tokio::spawn(async move {
            axum::serve(listener, app).await.unwrap();
        });
        ModelServer { addr, shared, task }
    }

    /// Base URL as `reviewer.base_url` would hold it.
    pub fn base_url(&self) -> String {
        format!("http://{}/v1", self.addr)
    }

    pub fn requests(&self) -> Vec<Recorded> {
        self.shared.recorded.lock().unwrap().clone()
    }

    pub fn unused_steps(&self) -> usize {
        self.shared.script.lock().unwrap().len()
    }
}

impl Drop for ModelServer {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// What the raw server does with one accepted connection.
#[derive(Debug, Clone)]
pub enum RawStep {
    /// Read the request, then close the socket without a byte of reply.
    Drop,
    /// Read the request, then answer 200 with this JSON body.
    Respond(Value),
}

/// A hand-rolled HTTP/1.1 server for faults axum cannot produce.
pub struct DroppingServer {
    pub addr: SocketAddr,
    shared: Arc<Mutex<Vec<String>>>,
    task: JoinHandle<()>,
}

impl DroppingServer {
    pub async fn start(script: Vec<RawStep>) -> DroppingServer {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let shared = Arc::new(Mutex::new(Vec::new()));
        let bodies = Arc::clone(&shared);
        let task = tokio::spawn(async move {
            let mut script: VecDeque<RawStep> = script.into();
            while let Ok((mut stream, _)) = listener.accept().await {
                let body = read_request(&mut stream).await;
                bodies.lock().unwrap().push(body);
                match script.pop_front() {
                    Some(RawStep::Respond(json)) => {
                        let text = json.to_string();
                        let reply = format!(
                            "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\n\
                             content-length: {}\r\nconnection: close\r\n\r\n{text}",
                            text.len()
                        );
                        stream.write_all(reply.as_bytes()).await.unwrap();
                        stream.shutdown().await.ok();
                    }
                    Some(RawStep::Drop) | None => drop(stream),
                }
            }
        });
        DroppingServer { addr, shared, task }
    }

    pub fn base_url(&self) -> String {
        format!("http://{}/v1", self.addr)
    }

    /// Request bodies received, one per accepted connection.
    pub fn bodies(&self) -> Vec<String> {
        self.shared.lock().unwrap().clone()
    }
}

impl Drop for DroppingServer {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// Reads one HTTP/1.1 request (headers, then `content-length` bytes) and
/// returns its body.
async fn read_request(stream: &mut tokio::net::TcpStream) -> String {
    let mut buf = Vec::new();
    let mut chunk = [0u8; 4096];
    let header_end = loop {
        let n = stream.read(&mut chunk).await.unwrap_or(0);
        if n == 0 {
            return String::new();
        }
        buf.extend_from_slice(&chunk[..n]);
        if let Some(pos) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            break pos + 4;
        }
    };
    let head = String::from_utf8_lossy(&buf[..header_end]).to_ascii_lowercase();
    let length: usize = head
        .lines()
        .find_map(|l| l.strip_prefix("content-length:"))
        .map(|v| v.trim().parse().unwrap())
        .unwrap_or(0);
    while buf.len() < header_end + length {
        let n = stream.read(&mut chunk).await.unwrap_or(0);
        if n == 0 {
            break;
        }
        buf.extend_from_slice(&chunk[..n]);
    }
    String::from_utf8_lossy(&buf[header_end..]).into_owned()
}
