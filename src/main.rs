//! The `vouch` command line. Parses arguments, sets up tracing and calls the
//! library; nothing else lives here.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Context as _;
use clap::{Parser, Subcommand};
use vouch::config::{Config, DEFAULT_TOML};
use vouch::engine::EngineOptions;

#[derive(Parser)]
#[command(
    name = "vouch",
    version,
    about = "Model-backed auto-review authorizer for coding agents"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Run the HTTP service (loopback by default).
    Serve {
        /// `host:port` or `unix:/path`; overrides `server.listen`.
        #[arg(long)]
        listen: Option<String>,
        /// One more trusted configuration overlay (TOML).
        #[arg(long)]
        config: Option<PathBuf>,
    },
}

fn main() -> ExitCode {
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info")),
        )
        .with_writer(std::io::stderr)
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .init();
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Serve { listen, config } => serve(listen, config.as_deref()),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("vouch: {e:#}");
            ExitCode::from(1)
        }
    }
}

fn serve(listen: Option<String>, config_file: Option<&Path>) -> anyhow::Result<()> {
    let mut config = load_config(config_file)?;
    if let Some(listen) = listen {
        config.server.listen = listen;
    }
    let state_dir = state_dir()?;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("cannot start the async runtime")?;
    runtime.block_on(async move {
        tracing::info!(
            provider = ?config.reviewer.provider,
            model = %config.reviewer.model,
            "reviewer"
        );
        let (listener, state) = vouch::server::prepare(EngineOptions { config, state_dir }).await?;
        eprintln!(
            "vouch: adapter token in {}",
            state.tokens().adapter_path().display()
        );
        eprintln!(
            "vouch: operator token in {}",
            state.tokens().operator_path().display()
        );
        eprintln!("vouch: listening on {}", listener.describe());
        vouch::server::run(listener, state, vouch::server::shutdown_signal()).await?;
        Ok(())
    })
}

/// Package defaults with `--config FILE` merged over them, table by table.
/// (Interim: the full layering — user file, environment, project overlay —
/// lives in `config::layers`.)
fn load_config(file: Option<&Path>) -> anyhow::Result<Config> {
    let Some(file) = file else {
        return Ok(Config::defaults()?);
    };
    let mut base: toml::Table = toml::from_str(DEFAULT_TOML).context("package defaults")?;
    let text =
        std::fs::read_to_string(file).with_context(|| format!("cannot read {}", file.display()))?;
    let overlay: toml::Table =
        toml::from_str(&text).with_context(|| format!("{}", file.display()))?;
    merge(&mut base, overlay);
    toml::Value::Table(base)
        .try_into()
        .with_context(|| format!("{}", file.display()))
}

fn merge(base: &mut toml::Table, overlay: toml::Table) {
    for (key, value) in overlay {
        match (base.get_mut(&key), value) {
            (Some(toml::Value::Table(b)), toml::Value::Table(o)) => merge(b, o),
            (_, value) => {
                base.insert(key, value);
            }
        }
    }
}

/// `$VOUCH_HOME/state`, else `$XDG_STATE_HOME/vouch`, else
/// `~/.local/state/vouch` (design §2).
fn state_dir() -> anyhow::Result<PathBuf> {
    let var = |name: &str| std::env::var_os(name).filter(|v| !v.is_empty());
    if let Some(home) = var("VOUCH_HOME") {
        return Ok(PathBuf::from(home).join("state"));
    }
    if let Some(state) = var("XDG_STATE_HOME") {
        return Ok(PathBuf::from(state).join("vouch"));
    }
    let home = var("HOME").context("neither VOUCH_HOME, XDG_STATE_HOME nor HOME is set")?;
    Ok(PathBuf::from(home).join(".local/state/vouch"))
}
