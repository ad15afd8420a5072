//! Starting the real `vouch serve` binary the way the end-to-end tests do:
//! a temp `VOUCH_HOME` (and `HOME`), one trusted `--config` overlay, info
//! logs on a piped stderr, which carries the readiness line
//! (`vouch: listening on …`).

use std::path::Path;
use std::process::{Command, Stdio};

/// Prefix of the line on stderr that says the service is ready.
pub const READY_PREFIX: &str = "vouch: listening on ";

/// `vouch serve --listen LISTEN --config HOME/test-config.toml` with
/// `config` written there; the caller adds environment and spawns.
pub fn command(home: &Path, listen: &str, config: &str) -> Command {
    let config_path = home.join("test-config.toml");
    std::fs::write(&config_path, config).unwrap();
    let mut command = Command::new(env!("CARGO_BIN_EXE_vouch"));
    command
        .args(["serve", "--listen", listen, "--config"])
        .arg(&config_path)
        .env("VOUCH_HOME", home)
        .env("HOME", home)
        .env("RUST_LOG", "info")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    command
}
