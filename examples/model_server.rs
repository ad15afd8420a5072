//! The test model server as a process, for tests that are not Rust
//! integration tests: the Node clients, the harness end-to-end suites and
//! the load and soak harness. The same source as the integration tests'
//! server (`tests/it/support/model_server.rs`, whose docs describe the
//! script, the faults and the control endpoints).
//!
//! ```text
//! cargo run --release --example model_server -- --listen 127.0.0.1:0 [--script FILE]
//! ```
//!
//! The first line on stdout is exactly `listening http://127.0.0.1:PORT`;
//! point `reviewer.base_url` at `http://127.0.0.1:PORT/v1`. It serves until
//! SIGTERM, SIGINT or end of stdin — so a parent that dies takes it along;
//! keep its stdin an open pipe (with stdin at `/dev/null` it stops at once,
//! saying why on stderr). It listens on loopback only.
//!
//! `POST /_script` replaces the script at run time; `GET /_requests` lists
//! what vouch sent (method, path, headers, raw body); `DELETE /_requests`
//! clears the list.

#[path = "../tests/it/support/model_server.rs"]
mod model_server;

use std::io::{Read, Write};
use std::path::PathBuf;

use anyhow::Context;
use clap::Parser;
use tokio::signal::unix::{Signal, SignalKind, signal};

use model_server::{DEFAULT_MAX_RECORDED, ModelServer, Script};

#[derive(Parser, Debug)]
#[command(about = "Scriptable OpenAI / Anthropic / Ollama model server for vouch's tests")]
struct Args {
    /// Loopback `host:port` to listen on; port 0 picks a free one.
    #[arg(long, default_value = "127.0.0.1:0")]
    listen: String,
    /// JSON script: {"default": REPLY, "rules": [{"contains", "reply"}], "queue": [REPLY]}.
    #[arg(long, value_name = "FILE")]
    script: Option<PathBuf>,
    /// Requests kept for GET /_requests (oldest evicted first, and counted).
    #[arg(long, default_value_t = DEFAULT_MAX_RECORDED)]
    max_recorded: usize,
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let args = Args::parse();
    let script = match &args.script {
        Some(path) => {
            let bytes = std::fs::read(path)
                .with_context(|| format!("cannot read the script `{}`", path.display()))?;
            Script::from_json(&bytes).with_context(|| format!("in `{}`", path.display()))?
        }
        None => Script::default(),
    };
    // Before the ready line: a signal sent as soon as it is read must find
    // the handlers in place, not the default action.
    let stopping = Stop::install().context("cannot install signal handlers")?;
    let server = ModelServer::bind(&args.listen, script)
        .await
        .with_context(|| format!("cannot listen on `{}`", args.listen))?;
    server.set_max_recorded(args.max_recorded);
    let mut stdout = std::io::stdout();
    writeln!(stdout, "listening http://{}", server.addr())?;
    stdout.flush()?;
    let why = stopping.wait().await;
    eprintln!("model_server: {why}; stopping");
    Ok(())
}

/// SIGTERM, SIGINT and end of stdin, whichever comes first.
struct Stop {
    terminate: Signal,
    interrupt: Signal,
    eof: tokio::sync::oneshot::Receiver<()>,
}

impl Stop {
    fn install() -> std::io::Result<Stop> {
        let terminate = signal(SignalKind::terminate())?;
        let interrupt = signal(SignalKind::interrupt())?;
        // A plain thread, not tokio's stdin: its blocking read cannot be
        // cancelled and would hold the runtime's shutdown.
        let (eof_tx, eof) = tokio::sync::oneshot::channel::<()>();
        std::thread::spawn(move || {
            let mut sink = [0u8; 1024];
            let mut stdin = std::io::stdin();
            while matches!(stdin.read(&mut sink), Ok(n) if n > 0) {}
            let _ = eof_tx.send(());
        });
        Ok(Stop {
            terminate,
            interrupt,
            eof,
        })
    }

    /// Says which one came.
    async fn wait(mut self) -> &'static str {
        tokio::select! {
            _ = self.terminate.recv() => "SIGTERM",
            _ = self.interrupt.recv() => "SIGINT",
            _ = self.eof => "end of stdin",
        }
    }
}
