//! The processes under load: the real `vouch serve` binary (built by cargo
//! if it is missing), with a temp `VOUCH_HOME`, a config overlay pointing
//! its reviewer at the test model server, and its stderr drained so logging
//! is not what is measured; plus its memory and CPU from `/proc`.

use std::io::{BufRead, BufReader, Read};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use anyhow::{Context, bail};

/// The `vouch` binary: `VOUCH_BIN` when set (used as is, as the other
/// end-to-end suites do — CI points it at the binary `cargo test --release`
/// built, so nothing is compiled twice), else the one next to this example
/// (`target/release/vouch`), built with the same cargo first.
pub fn vouch_binary() -> anyhow::Result<PathBuf> {
    if let Some(binary) = std::env::var_os("VOUCH_BIN") {
        let binary = PathBuf::from(binary);
        if !binary.is_file() {
            bail!("VOUCH_BIN `{}` is not a file", binary.display());
        }
        return Ok(binary);
    }
    let exe = std::env::current_exe()?;
    let dir = exe
        .parent()
        .and_then(Path::parent)
        .context("cannot locate the target directory")?;
    let binary = dir.join("vouch");
    let profile = dir.file_name().and_then(|n| n.to_str()).unwrap_or("debug");
    if let Ok(cargo) = std::env::var("CARGO") {
        let mut build = Command::new(cargo);
        build.args(["build", "--bin", "vouch"]);
        if profile == "release" {
            build.arg("--release");
        }
        let status = build.status().context("cannot run cargo build")?;
        if !status.success() {
            bail!("cargo build --bin vouch failed: {status}");
        }
    }
    if !binary.is_file() {
        bail!(
            "`{}` does not exist: run `cargo build --release --bin vouch`",
            binary.display()
        );
    }
    Ok(binary)
}

/// The trusted overlay: reviewer at `model_base_url`, limits opened so the
/// service, not its limiter, is measured; the turn budget as shipped (the
/// load keeps turns short). The verdict cache keeps entries for an hour and
/// holds 1,024, not the shipped 60 s and 256: the `cached` cells re-send
/// requests an earlier cell cached (a minute before, at 256 clients), and
/// the cell at 256 clients needs one entry a client; at exactly 256 every
/// review an earlier cell left behind evicts one of them, each miss then
/// evicting another. Either way its answer check would count the misses as
/// failures.
pub fn config(model_base_url: &str, timeout_ms: u64) -> String {
    format!(
        "[reviewer]\nprovider = \"openai\"\nbase_url = \"{model_base_url}\"\napi_key_env = \"\"\n\
         timeout_ms = {timeout_ms}\nretries = 2\nmax_retry_after_ms = 200\n\n\
         [turn]\nmax_reviews = 1000\n\n\
         [cache]\nttl_ms = 3600000\nmax_entries = 1024\n\n\
         [server]\nrate_limit_per_second = 100000\nmax_concurrent_reviews = 1024\nshutdown_grace_ms = 2000\n"
    )
}

/// A running `vouch serve`, killed if dropped before [`Service::stop`].
pub struct Service {
    pub child: Child,
    pub addr: SocketAddr,
    pub adapter_token: String,
    /// The temp `VOUCH_HOME` [`Service::start`] made, kept for the
    /// service's lifetime.
    _home: Option<tempfile::TempDir>,
}

impl Drop for Service {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Service {
    /// Starts `binary serve` with `config` in a temp `VOUCH_HOME` of its
    /// own; returns once it said it listens.
    pub fn start(binary: &Path, config: &str) -> anyhow::Result<Service> {
        let home = tempfile::tempdir()?;
        let mut service = Service::start_in(binary, home.path(), config, &[])?;
        service._home = Some(home);
        Ok(service)
    }

    /// Starts `binary serve` with `config` (written into `home`) and
    /// `VOUCH_HOME` and `HOME` set to `home`, then `env` (which may
    /// override `RUST_LOG`, `info` by default); returns once it said it
    /// listens. Replicas share a home, or each gets its own.
    pub fn start_in(
        binary: &Path,
        home: &Path,
        config: &str,
        env: &[(&str, &str)],
    ) -> anyhow::Result<Service> {
        let config_path = home.join("served.toml");
        std::fs::write(&config_path, config)?;
        let mut command = Command::new(binary);
        command
            .args(["serve", "--listen", "127.0.0.1:0", "--config"])
            .arg(&config_path)
            .env("VOUCH_HOME", home)
            .env("HOME", home)
            .env("RUST_LOG", "info")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped());
        for (key, value) in env {
            command.env(key, value);
        }
        let mut child = command.spawn().context("cannot start vouch serve")?;
        let stderr = child.stderr.take().context("no stderr")?;
        let mut reader = BufReader::new(stderr);
        let mut line = String::new();
        let addr = loop {
            line.clear();
            if reader.read_line(&mut line)? == 0 {
                bail!("vouch serve exited before listening: {:?}", child.wait()?);
            }
            if let Some(addr) = line.trim().strip_prefix("vouch: listening on ") {
                break addr
                    .parse::<SocketAddr>()
                    .with_context(|| format!("`{addr}`"))?;
            }
        };
        // Drain the access log so a full pipe is not part of the figures
        // (the soak test is where an undrained stderr is exercised).
        std::thread::spawn(move || {
            let mut sink = [0u8; 64 * 1024];
            while reader.read(&mut sink).is_ok_and(|n| n > 0) {}
        });
        let adapter_token = std::fs::read_to_string(home.join("state/adapter.token"))?
            .trim()
            .to_owned();
        Ok(Service {
            child,
            addr,
            adapter_token,
            _home: None,
        })
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// SIGTERM, then the exit status (SIGKILL after `within`).
    pub fn stop(mut self, within: Duration) -> anyhow::Result<String> {
        Command::new("kill")
            .args(["-TERM", &self.child.id().to_string()])
            .status()?;
        let deadline = std::time::Instant::now() + within;
        while std::time::Instant::now() < deadline {
            if let Some(status) = self.child.try_wait()? {
                return Ok(status.to_string());
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        self.child.kill()?;
        Ok(format!("killed after {within:?}: {:?}", self.child.wait()?))
    }
}

/// (VmRSS, VmHWM) of `pid` in KiB.
pub fn memory_kib(pid: u32) -> Option<(u64, u64)> {
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

/// User + system CPU time of `pid` (clock ticks of 10 ms, Linux `USER_HZ`).
pub fn cpu_time(pid: u32) -> Option<Duration> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let rest = stat.rsplit_once(')')?.1;
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let ticks = fields.get(11)?.parse::<u64>().ok()? + fields.get(12)?.parse::<u64>().ok()?;
    Some(Duration::from_millis(ticks * 10))
}
