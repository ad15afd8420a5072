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

/// A running `vouch serve` in a caller-provided home (so a test can place
/// files in the state directory first), with its stderr collected.
pub struct Running {
    child: std::process::Child,
    pub listen: String,
    pub home: std::path::PathBuf,
    stderr: std::sync::mpsc::Receiver<String>,
    /// Everything read from stderr so far.
    pub log: Vec<String>,
}

impl Running {
    /// Starts `vouch serve` on 127.0.0.1:0 in `home` with `config` and
    /// extra environment; waits for the ready line.
    pub fn start(home: &Path, config: &str, env: &[(&str, &str)]) -> Running {
        use std::io::BufRead;
        let mut command = command(home, "127.0.0.1:0", config);
        for (k, v) in env {
            command.env(k, v);
        }
        let mut child = command.spawn().unwrap();
        let (tx, rx) = std::sync::mpsc::channel();
        let stderr = child.stderr.take().unwrap();
        std::thread::spawn(move || {
            for line in std::io::BufReader::new(stderr)
                .lines()
                .map_while(Result::ok)
            {
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
        let mut log = Vec::new();
        loop {
            match rx.recv_timeout(std::time::Duration::from_millis(100)) {
                Ok(line) => {
                    let ready = line.strip_prefix(READY_PREFIX).map(|a| a.trim().to_owned());
                    log.push(line);
                    if let Some(listen) = ready {
                        return Running {
                            child,
                            listen,
                            home: home.to_path_buf(),
                            stderr: rx,
                            log,
                        };
                    }
                }
                Err(_) => {
                    let exited = child.try_wait().unwrap();
                    assert!(
                        exited.is_none() && std::time::Instant::now() < deadline,
                        "vouch serve did not start ({exited:?}):\n{}",
                        log.join("\n")
                    );
                }
            }
        }
    }

    pub fn token(&self, name: &str) -> String {
        std::fs::read_to_string(self.home.join("state").join(format!("{name}.token")))
            .unwrap()
            .trim()
            .to_owned()
    }

    pub fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.listen)
    }

    /// SIGTERM, then waits for exit; returns the whole stderr.
    pub fn stop(mut self) -> Vec<String> {
        let status = Command::new("kill")
            .args(["-TERM", &self.child.id().to_string()])
            .status()
            .unwrap();
        assert!(status.success());
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
        while self.child.try_wait().unwrap().is_none() {
            assert!(
                std::time::Instant::now() < deadline,
                "vouch serve did not exit"
            );
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        // The reader thread ends at EOF; collect what it still holds.
        while let Ok(line) = self.stderr.recv_timeout(std::time::Duration::from_secs(2)) {
            self.log.push(line);
        }
        std::mem::take(&mut self.log)
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
