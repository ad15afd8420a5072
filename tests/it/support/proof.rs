//! Helpers for the soak, crash and race tests (issue 14): a real
//! `vouch serve` whose stderr the test controls, its memory, and
//! durations that are short by default and long on request.

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, ChildStderr};
use std::time::Duration;

use super::serve::{self, READY_PREFIX};

/// `VOUCH_<NAME>` in seconds if set (the long form), else `short`.
pub fn seconds_from_env(name: &str, short: u64) -> Duration {
    let secs = std::env::var(name)
        .ok()
        .and_then(|v| v.parse::<u64>().ok())
        .unwrap_or(short);
    Duration::from_secs(secs)
}

/// A running `vouch serve`; killed when dropped.
pub struct Service {
    pub child: Child,
    pub listen: String,
    /// Past the ready line; the caller decides how (and whether) to read it.
    pub stderr: Option<BufReader<ChildStderr>>,
}

impl Service {
    /// Starts `vouch serve` on `127.0.0.1:0` in `home` with `config`.
    pub fn start(home: &Path, config: &str) -> Service {
        let mut child = serve::command(home, "127.0.0.1:0", config).spawn().unwrap();
        let mut stderr = BufReader::new(child.stderr.take().unwrap());
        let mut line = String::new();
        let listen = loop {
            line.clear();
            assert!(
                stderr.read_line(&mut line).unwrap() > 0,
                "vouch serve exited before listening"
            );
            if let Some(addr) = line.trim_end().strip_prefix(READY_PREFIX) {
                break addr.to_owned();
            }
        };
        Service {
            child,
            listen,
            stderr: Some(stderr),
        }
    }

    pub fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.listen)
    }

    /// Resident memory in KiB.
    pub fn rss_kib(&self) -> u64 {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.child.id()))
            .unwrap_or_default();
        status
            .lines()
            .find_map(|l| l.strip_prefix("VmRSS:"))
            .and_then(|v| v.split_whitespace().next())
            .and_then(|v| v.parse().ok())
            .unwrap_or(0)
    }

    /// `kill -9`: no drain, no handler, nothing flushed.
    pub fn kill9(mut self) {
        self.child.kill().unwrap();
        self.child.wait().unwrap();
    }
}

impl Drop for Service {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

pub fn token(home: &Path, name: &str) -> String {
    std::fs::read_to_string(home.join(format!("state/{name}.token")))
        .unwrap()
        .trim()
        .to_owned()
}
