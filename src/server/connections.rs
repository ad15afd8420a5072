//! The accept loop of `vouch serve`, and what it does before the HTTP
//! layer sees a connection (issue 43: 1,500 connections that never
//! finished their headers were held for over 40 s, and a local process
//! could use up the service's file descriptors).
//!
//! - **Caps**: at most `server.max_connections` open connections, and at
//!   most `server.max_connections_per_peer` from one IP address; one more
//!   is answered `503 Service Unavailable` and closed as it is accepted,
//!   before anything of it is read.
//! - **Header timeout**: a connection's first request must have sent its
//!   whole header block within `server.header_timeout_ms` of connecting,
//!   or it is answered `408 Request Timeout` and closed. That head is read
//!   here (up to [`HEAD_LIMIT`] bytes, scanned once for the blank line that
//!   ends it) and handed to hyper's HTTP/1 connection with the rest of the
//!   stream, which times
//!   each later request's headers on a kept-alive connection itself
//!   (`header_read_timeout`; past it the connection closes, as an idle one
//!   would).
//! - **Shutdown**: on the signal, accepting stops, connections still
//!   waiting for their first headers are dropped, and every other one is
//!   asked to finish its request and close (hyper's graceful shutdown);
//!   [`serve`] returns when the last one has.
//!
//! Each of these is counted in `/metrics` ([`Metrics`]).

use std::collections::HashMap;
use std::future::Future;
use std::net::IpAddr;
use std::pin::{Pin, pin};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::Duration;

use axum::Router;
use hyper::server::conn::http1;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::service::TowerToHyperService;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt, ReadBuf};
use tokio::net::{TcpListener, UnixListener};
use tokio::sync::{Notify, Semaphore, watch};

use crate::config::ServerConfig;
use crate::http::AppState;
use crate::http::metrics::{HeaderTimeout, Metrics, Refused};

/// Most bytes of a first request's head read here; a longer head is
/// handed to hyper as it is, which refuses it (`431`).
const HEAD_LIMIT: usize = 64 * 1024;

/// The answer to a connection over a cap.
const OVER_CAP: &[u8] = b"HTTP/1.1 503 Service Unavailable\r\nconnection: close\r\n\
    retry-after: 1\r\ncontent-type: text/plain\r\ncontent-length: 51\r\n\r\n\
    vouch: too many open connections; try again later\n";

/// The answer to a connection whose first headers did not arrive in time.
const TOO_SLOW: &[u8] = b"HTTP/1.1 408 Request Timeout\r\nconnection: close\r\n\
    content-type: text/plain\r\ncontent-length: 49\r\n\r\n\
    vouch: the request headers did not arrive in time\n";

/// How long writing a refusal (and reading what the client sent before
/// closing, so the close does not reset the answer away) may take.
const REFUSAL_LINGER: Duration = Duration::from_millis(500);

/// Refusals lingering at once; past it a refusal closes at once.
const MAX_LINGERING: usize = 64;

/// How long the loop rests after `accept` fails (out of descriptors: the
/// condition clears only as connections close).
const ACCEPT_BACKOFF: Duration = Duration::from_millis(50);

/// The connection limits of `[server]`.
#[derive(Debug, Clone, Copy)]
pub struct Settings {
    pub header_timeout: Duration,
    pub max_connections: usize,
    pub max_per_peer: usize,
}

impl Settings {
    pub fn of(server: &ServerConfig) -> Settings {
        Settings {
            header_timeout: Duration::from_millis(server.header_timeout_ms),
            max_connections: usize::try_from(server.max_connections).unwrap_or(usize::MAX),
            max_per_peer: usize::try_from(server.max_connections_per_peer).unwrap_or(usize::MAX),
        }
    }
}

/// A listener the loop accepts from: the peer's address when it has one.
pub trait Accept {
    type Io: AsyncRead + AsyncWrite + Unpin + Send + 'static;
    fn accept(&self) -> impl Future<Output = std::io::Result<(Self::Io, Option<IpAddr>)>> + Send;
}

impl Accept for TcpListener {
    type Io = tokio::net::TcpStream;

    async fn accept(&self) -> std::io::Result<(Self::Io, Option<IpAddr>)> {
        let (stream, peer) = TcpListener::accept(self).await?;
        // Answers are small and written whole: no delay for them.
        let _ = stream.set_nodelay(true);
        Ok((stream, Some(peer.ip())))
    }
}

impl Accept for UnixListener {
    type Io = tokio::net::UnixStream;

    async fn accept(&self) -> std::io::Result<(Self::Io, Option<IpAddr>)> {
        let (stream, _) = UnixListener::accept(self).await?;
        Ok((stream, None))
    }
}

/// Open connections, in all and per address.
struct Gate {
    settings: Settings,
    open: Mutex<(usize, HashMap<IpAddr, usize>)>,
    /// Signalled each time a connection closes (shutdown waits for none).
    closed: Notify,
}

/// One admitted connection; dropping it frees its place.
struct Permit {
    gate: Arc<Gate>,
    peer: Option<IpAddr>,
}

impl Gate {
    fn admit(self: &Arc<Gate>, peer: Option<IpAddr>) -> Result<Permit, Refused> {
        let mut open = self
            .open
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let (total, per_peer) = &mut *open;
        if *total >= self.settings.max_connections {
            return Err(Refused::Total);
        }
        if let Some(ip) = peer {
            let from = per_peer.entry(ip).or_insert(0);
            if *from >= self.settings.max_per_peer {
                return Err(Refused::PerPeer);
            }
            *from += 1;
        }
        *total += 1;
        Ok(Permit {
            gate: Arc::clone(self),
            peer,
        })
    }

    fn open(&self) -> usize {
        self.open
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .0
    }
}

impl Drop for Permit {
    fn drop(&mut self) {
        {
            let mut open = self
                .gate
                .open
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            let (total, per_peer) = &mut *open;
            *total = total.saturating_sub(1);
            if let Some(ip) = self.peer
                && let Some(from) = per_peer.get_mut(&ip)
            {
                *from = from.saturating_sub(1);
                if *from == 0 {
                    per_peer.remove(&ip);
                }
            }
        }
        self.gate.closed.notify_waiters();
    }
}

/// Serves `app` on `listener` until `shutdown` completes, then until every
/// connection has closed (the caller bounds that with the grace period).
pub async fn serve<L: Accept>(
    listener: L,
    app: Router,
    state: AppState,
    shutdown: impl Future<Output = ()>,
) {
    let settings = Settings::of(&state.engine().config().server);
    let gate = Arc::new(Gate {
        settings,
        open: Mutex::new((0, HashMap::new())),
        closed: Notify::new(),
    });
    let lingering = Arc::new(Semaphore::new(MAX_LINGERING));
    let (stop_tx, stop_rx) = watch::channel(false);
    let mut shutdown = pin!(shutdown);
    loop {
        let accepted = tokio::select! {
            accepted = listener.accept() => accepted,
            () = &mut shutdown => break,
        };
        let (io, peer) = match accepted {
            Ok(accepted) => accepted,
            Err(e) => {
                tracing::warn!(error = %e, "cannot accept a connection");
                tokio::time::sleep(ACCEPT_BACKOFF).await;
                continue;
            }
        };
        match gate.admit(peer) {
            Ok(permit) => {
                let connection = Connection {
                    app: app.clone(),
                    state: state.clone(),
                    settings,
                    stop: stop_rx.clone(),
                    permit,
                };
                tokio::spawn(connection.run(io));
            }
            Err(why) => {
                state.metrics().record_refused(why);
                tracing::debug!(reason = %why, ?peer, "connection refused over a cap");
                refuse(io, OVER_CAP, &lingering);
            }
        }
    }
    drop(listener);
    let _ = stop_tx.send(true);
    loop {
        let closed = gate.closed.notified();
        if gate.open() == 0 {
            return;
        }
        closed.await;
    }
}

/// Writes `answer` and closes, lingering briefly to read what the client
/// sent (closing on unread bytes resets the connection, and the answer
/// with it); at most [`MAX_LINGERING`] at once, the rest close at once.
fn refuse<Io>(mut io: Io, answer: &'static [u8], lingering: &Arc<Semaphore>)
where
    Io: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    let Ok(slot) = Arc::clone(lingering).try_acquire_owned() else {
        return;
    };
    tokio::spawn(async move {
        let _slot = slot;
        let _ = tokio::time::timeout(REFUSAL_LINGER, async {
            io.write_all(answer).await?;
            io.shutdown().await?;
            let mut sink = [0u8; 4096];
            let mut left = HEAD_LIMIT;
            while left > 0 {
                let n = io.read(&mut sink).await?;
                if n == 0 {
                    break;
                }
                left = left.saturating_sub(n);
            }
            Ok::<(), std::io::Error>(())
        })
        .await;
    });
}

/// One admitted connection.
struct Connection {
    app: Router,
    state: AppState,
    settings: Settings,
    stop: watch::Receiver<bool>,
    permit: Permit,
}

impl Connection {
    async fn run<Io>(mut self, mut io: Io)
    where
        Io: AsyncRead + AsyncWrite + Unpin + Send + 'static,
    {
        let metrics = self.state.metrics();
        let _open = metrics.connection_opened();
        let head = tokio::select! {
            head = tokio::time::timeout(self.settings.header_timeout, read_head(&mut io)) => head,
            // Shutting down: a request not yet sent is not waited for.
            _ = self.stop.wait_for(|stop| *stop) => return,
        };
        let head = match head {
            Ok(Ok(head)) => head,
            // The client went away or the read failed: nothing to answer.
            Ok(Err(_)) => return,
            Err(_elapsed) => {
                metrics.record_header_timeout(HeaderTimeout::First);
                let _ = tokio::time::timeout(REFUSAL_LINGER, async {
                    io.write_all(TOO_SLOW).await?;
                    io.shutdown().await
                })
                .await;
                return;
            }
        };
        serve_http(
            Prefixed::new(head, io),
            self.app,
            self.settings,
            metrics,
            self.stop,
        )
        .await;
        drop(self.permit);
    }
}

/// Reads until the first request's head is complete (a blank line ends
/// it), the client stops sending, or [`HEAD_LIMIT`] bytes; returns what
/// was read, for hyper to parse.
async fn read_head<Io: AsyncRead + Unpin>(io: &mut Io) -> std::io::Result<Vec<u8>> {
    let mut head = Vec::with_capacity(1024);
    let mut scanned: usize = 0;
    loop {
        if head.len() >= HEAD_LIMIT {
            return Ok(head);
        }
        let n = io.read_buf(&mut head).await?;
        if n == 0 {
            return Ok(head);
        }
        // Only the new bytes (and the three before them, for a blank line
        // split across reads) are scanned.
        let from = scanned.saturating_sub(3);
        if head.get(from..).is_some_and(|tail| {
            tail.windows(4).any(|w| w == b"\r\n\r\n") || tail.windows(2).any(|w| w == b"\n\n")
        }) {
            return Ok(head);
        }
        scanned = head.len();
    }
}

/// hyper's HTTP/1 over `io` (what `axum::serve` ran), each later
/// request's headers timed by hyper, until the connection ends or shutdown
/// asks it to.
async fn serve_http<Io>(
    io: Io,
    app: Router,
    settings: Settings,
    metrics: &Metrics,
    mut stop: watch::Receiver<bool>,
) where
    Io: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    let connection = http1::Builder::new()
        .timer(TokioTimer::new())
        .header_read_timeout(settings.header_timeout)
        .serve_connection(TokioIo::new(io), TowerToHyperService::new(app))
        .with_upgrades();
    let mut connection = pin!(connection);
    let mut stopping = false;
    loop {
        tokio::select! {
            served = connection.as_mut() => {
                if let Err(e) = served {
                    if e.is_timeout() {
                        metrics.record_header_timeout(HeaderTimeout::Later);
                    }
                    tracing::debug!(error = %e, "connection ended with an error");
                }
                return;
            }
            _ = stop.wait_for(|stop| *stop), if !stopping => {
                stopping = true;
                connection.as_mut().graceful_shutdown();
            }
        }
    }
}

/// A stream whose first bytes were read already: they are read again
/// first, then the stream's own.
struct Prefixed<Io> {
    head: Vec<u8>,
    at: usize,
    io: Io,
}

impl<Io> Prefixed<Io> {
    fn new(head: Vec<u8>, io: Io) -> Prefixed<Io> {
        Prefixed { head, at: 0, io }
    }
}

impl<Io: AsyncRead + Unpin> AsyncRead for Prefixed<Io> {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        let this = self.get_mut();
        if let Some(rest) = this.head.get(this.at..).filter(|r| !r.is_empty()) {
            let n = rest.len().min(buf.remaining());
            if let Some(chunk) = rest.get(..n) {
                buf.put_slice(chunk);
            }
            this.at += n;
            if this.at >= this.head.len() {
                this.head = Vec::new();
                this.at = 0;
            }
            return Poll::Ready(Ok(()));
        }
        Pin::new(&mut this.io).poll_read(cx, buf)
    }
}

impl<Io: AsyncWrite + Unpin> AsyncWrite for Prefixed<Io> {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        Pin::new(&mut self.get_mut().io).poll_write(cx, buf)
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.get_mut().io).poll_flush(cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.get_mut().io).poll_shutdown(cx)
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[std::io::IoSlice<'_>],
    ) -> Poll<std::io::Result<usize>> {
        Pin::new(&mut self.get_mut().io).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.io.is_write_vectored()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_head_is_read_to_its_blank_line_and_replayed_whole() {
        let (mut client, mut server) = tokio::io::duplex(64);
        let request = b"GET /livez HTTP/1.1\r\nhost: x\r\n\r\nBODY";
        tokio::spawn(async move {
            // In pieces, the blank line split across two writes.
            for piece in request.chunks(7) {
                client.write_all(piece).await.unwrap();
                tokio::task::yield_now().await;
            }
            client
        });
        let head = read_head(&mut server).await.unwrap();
        assert!(head.windows(4).any(|w| w == b"\r\n\r\n"), "{head:?}");
        let mut replayed = Prefixed::new(head, server);
        let mut all = vec![0u8; request.len()];
        replayed.read_exact(&mut all).await.unwrap();
        assert_eq!(&all, request);
    }

    #[test]
    fn caps_count_per_address_and_in_all() {
        let gate = Arc::new(Gate {
            settings: Settings {
                header_timeout: Duration::from_secs(1),
                max_connections: 3,
                max_per_peer: 2,
            },
            open: Mutex::new((0, HashMap::new())),
            closed: Notify::new(),
        });
        let a: IpAddr = "127.0.0.1".parse().unwrap();
        let b: IpAddr = "127.0.0.2".parse().unwrap();
        let first = gate.admit(Some(a)).unwrap();
        let _second = gate.admit(Some(a)).unwrap();
        assert!(matches!(gate.admit(Some(a)), Err(Refused::PerPeer)));
        let _third = gate.admit(Some(b)).unwrap();
        assert!(matches!(gate.admit(Some(b)), Err(Refused::Total)));
        assert!(matches!(gate.admit(None), Err(Refused::Total)));
        drop(first);
        assert_eq!(gate.open(), 2);
        let _again = gate.admit(Some(a)).unwrap();
    }
}
