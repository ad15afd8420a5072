//! Listening, serving and shutting down (`vouch serve`).
//!
//! [`bind`] turns `server.listen` into a listener — TCP on loopback unless
//! `server.allow_remote` is set, or a Unix socket created with mode `0600` —
//! and [`run`] serves [`crate::http::app`] on it until the `shutdown` future
//! completes, then stops accepting, lets in-flight requests finish for at
//! most `server.shutdown_grace_ms`, and returns. The accept loop is its own
//! ([`connections`]): caps on open connections in all and per address, and
//! a deadline for each request's headers, which `axum::serve` does not
//! have. The shutdown signal is a
//! future (as in mini-redis) so tests decide when it fires; the binary passes
//! [`shutdown_signal`] (SIGINT or SIGTERM).

use std::future::Future;
use std::net::SocketAddr;
use std::os::unix::fs::{FileTypeExt, MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

use tokio::net::{TcpListener, UnixListener};

pub mod connections;

use crate::engine::{Engine, EngineError, EngineOptions};
use crate::http::{self, AppState, LimitsError, Tokens};
use crate::store::StoreError;

/// Prefix of a Unix-socket `server.listen` value.
pub const UNIX_PREFIX: &str = "unix:";

#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    #[error(
        "`server.listen` = `{listen}` resolves to `{addr}`, which is not a loopback address; \
         set `server.allow_remote = true` to listen on it (and put TLS in front)"
    )]
    NotLoopback { listen: String, addr: SocketAddr },
    #[error("`server.listen` = `{listen}` is not `host:port` or `unix:/absolute/path`: {problem}")]
    BadListen { listen: String, problem: String },
    #[error("cannot listen on `{listen}`: {message}")]
    Bind { listen: String, message: String },
    #[error("socket `{path}` is in use by another running process; stop it or choose another path")]
    SocketInUse { path: String },
    #[error("`{path}` exists and is not a socket; refusing to replace it")]
    NotASocket { path: String },
    #[error("{0}")]
    Tokens(#[from] StoreError),
    #[error("{0}")]
    Limits(#[from] LimitsError),
    #[error("cannot start the engine: {0}")]
    Engine(#[from] EngineError),
    #[error("server failed: {0}")]
    Io(#[from] std::io::Error),
}

/// A bound listener.
pub enum Listener {
    Tcp(TcpListener),
    Unix(UnixSocket),
}

/// A Unix listener and the socket file it owns.
pub struct UnixSocket {
    listener: UnixListener,
    path: PathBuf,
    /// (device, inode) of the socket file we created, so cleanup never
    /// removes a file another instance has since put at the same path.
    identity: (u64, u64),
}

impl Listener {
    /// Where the service listens, in `server.listen` syntax
    /// (`127.0.0.1:41234`, `unix:/run/vouch.sock`).
    pub fn describe(&self) -> String {
        match self {
            Listener::Tcp(l) => l
                .local_addr()
                .map_or_else(|e| format!("<unknown: {e}>"), |a| a.to_string()),
            Listener::Unix(u) => format!("{UNIX_PREFIX}{}", u.path.display()),
        }
    }
}

/// Binds `listen`, refusing a non-loopback address unless `allow_remote`.
pub async fn bind(listen: &str, allow_remote: bool) -> Result<Listener, ServeError> {
    if let Some(path) = listen.strip_prefix(UNIX_PREFIX) {
        return bind_unix(listen, Path::new(path)).await.map(Listener::Unix);
    }
    let addrs: Vec<SocketAddr> = match listen.parse::<SocketAddr>() {
        Ok(addr) => vec![addr],
        Err(_) => tokio::net::lookup_host(listen)
            .await
            .map_err(|e| ServeError::BadListen {
                listen: listen.to_owned(),
                problem: e.to_string(),
            })?
            .collect(),
    };
    if addrs.is_empty() {
        return Err(ServeError::BadListen {
            listen: listen.to_owned(),
            problem: "it resolves to no address".to_owned(),
        });
    }
    if !allow_remote && let Some(addr) = addrs.iter().find(|a| !a.ip().is_loopback()) {
        return Err(ServeError::NotLoopback {
            listen: listen.to_owned(),
            addr: *addr,
        });
    }
    let listener = TcpListener::bind(addrs.as_slice())
        .await
        .map_err(|e| ServeError::Bind {
            listen: listen.to_owned(),
            message: e.to_string(),
        })?;
    Ok(Listener::Tcp(listener))
}

async fn bind_unix(listen: &str, path: &Path) -> Result<UnixSocket, ServeError> {
    let shown = || path.display().to_string();
    let bind_err = |e: std::io::Error| ServeError::Bind {
        listen: listen.to_owned(),
        message: e.to_string(),
    };
    if !path.is_absolute() {
        return Err(ServeError::BadListen {
            listen: listen.to_owned(),
            problem: "the socket path must be absolute".to_owned(),
        });
    }
    let (Some(parent), Some(name)) = (path.parent(), path.file_name()) else {
        return Err(ServeError::BadListen {
            listen: listen.to_owned(),
            problem: "the socket path has no file name".to_owned(),
        });
    };
    match std::fs::symlink_metadata(path) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => return Err(bind_err(e)),
        Ok(meta) if !meta.file_type().is_socket() => {
            return Err(ServeError::NotASocket { path: shown() });
        }
        // A socket file: live if something accepts on it, stale otherwise
        // (a previous instance that was killed). Only a stale one is removed.
        Ok(_) => match tokio::net::UnixStream::connect(path).await {
            Ok(_) => return Err(ServeError::SocketInUse { path: shown() }),
            Err(e) if e.kind() == std::io::ErrorKind::ConnectionRefused => {
                tracing::warn!(path = %path.display(), "removing stale socket file");
                std::fs::remove_file(path).map_err(bind_err)?;
            }
            Err(e) => return Err(bind_err(e)),
        },
    }
    // Bound under a private temporary name, restricted to 0600, then renamed
    // into place: nobody can connect through the final path while the file
    // still has the umask's looser mode.
    let suffix = crate::store::random_bytes::<4>().map_err(|e| ServeError::Bind {
        listen: listen.to_owned(),
        message: e.to_string(),
    })?;
    let tmp = parent.join(format!(
        ".{}.{}.{}.tmp",
        name.to_string_lossy(),
        std::process::id(),
        hex::encode(suffix)
    ));
    let _ = std::fs::remove_file(&tmp);
    let listener = UnixListener::bind(&tmp).map_err(bind_err)?;
    let placed = std::fs::set_permissions(&tmp, std::fs::Permissions::from_mode(0o600))
        .and_then(|()| std::fs::rename(&tmp, path));
    if let Err(e) = placed {
        let _ = std::fs::remove_file(&tmp);
        return Err(bind_err(e));
    }
    let meta = std::fs::symlink_metadata(path).map_err(bind_err)?;
    Ok(UnixSocket {
        listener,
        path: path.to_owned(),
        identity: (meta.dev(), meta.ino()),
    })
}

/// Builds the engine, tokens and app state for `options`, and binds
/// `server.listen`. Returns what [`run`] needs; the caller prints where.
pub async fn prepare(mut options: EngineOptions) -> Result<(Listener, AppState), ServeError> {
    let tokens = Tokens::load_or_create(&options.paths.state_dir)?;
    let listen = options.trusted.config.server.listen.clone();
    let allow_remote = options.trusted.config.server.allow_remote;
    // The integrity check belongs to the long-lived service, at start (a
    // damaged database is reported now, and reviews fail closed while it
    // stays so; hard denies still answer).
    options.check_store_on_open = true;
    let engine = Engine::new(options)?;
    let opening = engine.clone();
    if let Ok(Err(e)) = tokio::task::spawn_blocking(move || opening.store().map(drop)).await {
        tracing::error!(error = %e, "state database unavailable at start; model reviews fail closed");
    }
    let state = AppState::new(engine, tokens)?;
    let listener = bind(&listen, allow_remote).await?;
    Ok((listener, state))
}

/// Serves until `shutdown` completes, then drains for at most
/// `server.shutdown_grace_ms`.
pub async fn run(
    listener: Listener,
    state: AppState,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> Result<(), ServeError> {
    let grace = Duration::from_millis(state.engine().config().server.shutdown_grace_ms);
    let janitor = tokio::spawn({
        let state = state.clone();
        async move {
            let mut every = tokio::time::interval(http::limits::RETAIN_RECENT_EVERY);
            loop {
                every.tick().await;
                state.limits().retain_recent();
            }
        }
    });
    let (fired_tx, fired_rx) = tokio::sync::oneshot::channel::<()>();
    // When the signal fired: the grace runs from there, and the audit flush
    // at exit gets only what the drain left of it.
    let fired_at = Arc::new(OnceLock::<Instant>::new());
    let signal = {
        let fired_at = Arc::clone(&fired_at);
        let feed = state.engine().feed().clone();
        async move {
            shutdown.await;
            tracing::info!("shutdown requested; no longer accepting connections");
            // Open console streams end, so they do not hold the drain.
            feed.close();
            let _ = fired_at.set(Instant::now());
            let _ = fired_tx.send(());
        }
    };
    let deadline = async move {
        match fired_rx.await {
            Ok(()) => tokio::time::sleep(grace).await,
            // The signal future was dropped: serving ended on its own.
            Err(_) => std::future::pending().await,
        }
    };
    let engine = state.engine().clone();
    let app = http::app(state.clone());
    let (served, socket) = match listener {
        Listener::Tcp(l) => {
            let serving = connections::serve(l, app, state, signal);
            (drain(serving, deadline, grace).await, None)
        }
        Listener::Unix(u) => {
            let serving = connections::serve(u.listener, app, state, signal);
            let served = drain(serving, deadline, grace).await;
            (served, Some((u.path, u.identity)))
        }
    };
    janitor.abort();
    if let Some((path, identity)) = socket {
        remove_own_socket(&path, identity);
    }
    // What the audit writer still holds is written before exit, within what
    // is left of the same grace: the flush never extends it (a drain that
    // used all of it leaves the flush one non-blocking try).
    let left = fired_at
        .get()
        .map_or(grace, |at| grace.saturating_sub(at.elapsed()));
    let flushed = tokio::task::spawn_blocking(move || engine.flush_audit(left)).await;
    if !matches!(flushed, Ok(true)) {
        tracing::warn!(target: "vouch::audit", "audit observations still queued at exit were not written");
    }
    served
}

async fn drain(
    serving: impl Future<Output = ()>,
    deadline: impl Future<Output = ()>,
    grace: Duration,
) -> Result<(), ServeError> {
    tokio::select! {
        () = serving => {
            tracing::info!("all connections closed; stopped");
            Ok(())
        }
        () = deadline => {
            tracing::warn!(
                grace_ms = u64::try_from(grace.as_millis()).unwrap_or(u64::MAX),
                "shutdown grace elapsed with requests still in flight; stopping anyway"
            );
            Ok(())
        }
    }
}

fn remove_own_socket(path: &Path, identity: (u64, u64)) {
    let ours = std::fs::symlink_metadata(path)
        .is_ok_and(|m| m.file_type().is_socket() && (m.dev(), m.ino()) == identity);
    if ours && let Err(e) = std::fs::remove_file(path) {
        tracing::warn!(path = %path.display(), error = %e, "cannot remove socket file");
    }
}

/// Installs the SIGTERM and SIGINT handlers now and returns a future that
/// completes on either. Called before `listening` is printed: a supervisor
/// that signals as soon as it reads that line must get a graceful shutdown,
/// not the default action (the process killed mid-request).
pub fn shutdown_signal() -> impl Future<Output = ()> + Send + 'static {
    use tokio::signal::unix::{Signal, SignalKind, signal};
    let install = |kind: SignalKind, name: &'static str| match signal(kind) {
        Ok(s) => Some(s),
        Err(e) => {
            tracing::error!(error = %e, signal = name, "cannot listen for the signal");
            None
        }
    };
    async fn recv(s: Option<Signal>) {
        match s {
            Some(mut s) => {
                s.recv().await;
            }
            // Not installable: only the other signal stops vouch.
            None => std::future::pending::<()>().await,
        }
    }
    let terminate = recv(install(SignalKind::terminate(), "SIGTERM"));
    let interrupt = recv(install(SignalKind::interrupt(), "SIGINT"));
    async move {
        tokio::select! {
            () = terminate => tracing::info!("received SIGTERM"),
            () = interrupt => tracing::info!("received SIGINT"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn non_loopback_is_refused_by_name() {
        let err = bind("0.0.0.0:0", false).await.err().unwrap().to_string();
        assert!(err.contains("`0.0.0.0:0`"), "{err}");
        assert!(err.contains("server.allow_remote"), "{err}");
        assert!(matches!(
            bind("0.0.0.0:0", true).await,
            Ok(Listener::Tcp(_))
        ));
        assert!(matches!(
            bind("127.0.0.1:0", false).await,
            Ok(Listener::Tcp(_))
        ));
        assert!(matches!(
            bind("[::1]:0", false).await,
            Ok(_) | Err(ServeError::Bind { .. })
        ));
        let err = bind("nonsense", false).await.err().unwrap().to_string();
        assert!(err.contains("`nonsense`"), "{err}");
    }

    #[tokio::test]
    async fn unix_socket_is_private_and_stale_files_are_handled() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("v.sock");
        let listen = format!("unix:{}", path.display());
        let first = bind(&listen, false).await.unwrap();
        let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600);
        // Live socket: refused.
        let err = bind(&listen, false).await.err().unwrap();
        assert!(matches!(err, ServeError::SocketInUse { .. }), "{err}");
        // Stale socket (listener gone, file left behind): replaced.
        drop(first);
        assert!(path.exists());
        let second = bind(&listen, false).await.unwrap();
        assert_eq!(second.describe(), listen);
        // A regular file is never replaced.
        let file = dir.path().join("plain");
        std::fs::write(&file, b"x").unwrap();
        let err = bind(&format!("unix:{}", file.display()), false)
            .await
            .err()
            .unwrap();
        assert!(matches!(err, ServeError::NotASocket { .. }), "{err}");
        assert!(matches!(
            bind("unix:relative.sock", false).await,
            Err(ServeError::BadListen { .. })
        ));
    }
}
