//! A throwaway PostgreSQL cluster for tests and the figures program
//! (issue 27): Debian's own binaries (`/usr/lib/postgresql/<version>/bin`,
//! the highest version installed), a fresh `initdb` in a temp directory,
//! and a server that listens only on a Unix socket inside that directory —
//! no TCP port, nothing another test or the machine's own cluster can
//! collide with. Trust authentication as `postgres`; fsync stays on (the
//! figures program measures commits), only `initdb` itself skips its syncs.
//!
//! PostgreSQL refuses to run as root, and CI runs as root: then every
//! server-side binary runs as the `postgres` user (`setpriv`), which owns
//! the cluster's directory. The tests connect over the socket as whoever
//! they are; the socket directory is world-searchable.
//!
//! [`Cluster::start`] answers `Err(Skip)` when PostgreSQL is not installed
//! (or cannot run here), with a reason naming what to install; a test
//! hands it to `support::strict::skip`, which prints `skipped: <reason>`,
//! or under `VOUCH_TEST_STRICT=1` (as `.ci/run` runs, after installing the
//! package) fails the test.
//! [`Cluster::stop`] and [`Cluster::start_again`] take the server down
//! (`pg_ctl stop -m fast`) and up again on the same directory, for a
//! "database restarted under load" test. Dropping the cluster stops the
//! server (`-m immediate`) and removes the directory, also when a test
//! fails.

#![allow(dead_code)]

use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

/// Connections the server admits: three `vouch serve` replicas with their
/// pools, plus 64 pgbench clients, with room to spare.
pub const MAX_CONNECTIONS: u32 = 300;

/// How long `pg_ctl start` may take before the cluster counts as broken.
const START_TIMEOUT: Duration = Duration::from_secs(60);

/// Why the PostgreSQL tests cannot run here, naming what to install
/// (printed, then the test returns; a failure under strict mode).
#[derive(Debug)]
pub struct Skip(pub String);

impl std::fmt::Display for Skip {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// Who runs the server-side binaries.
#[derive(Debug, Clone, Copy)]
struct RunAs {
    uid: u32,
    gid: u32,
}

/// A running throwaway cluster with one database, `vouch`.
pub struct Cluster {
    bin: PathBuf,
    root: tempfile::TempDir,
    run_as: Option<RunAs>,
    running: bool,
}

/// The highest installed `/usr/lib/postgresql/<version>/bin` holding
/// `initdb`, `pg_ctl` and `postgres`.
pub fn binaries() -> Result<PathBuf, Skip> {
    let base = Path::new("/usr/lib/postgresql");
    let entries = std::fs::read_dir(base).map_err(|e| {
        Skip(format!(
            "PostgreSQL's server binaries are not installed (`{}`: {e}): `apt-get install postgresql` (.ci/run does)",
            base.display()
        ))
    })?;
    let mut versions: Vec<(Vec<u32>, PathBuf)> = entries
        .filter_map(Result::ok)
        .filter_map(|e| {
            let name = e.file_name().into_string().ok()?;
            let version: Vec<u32> = name
                .split('.')
                .map(|p| p.parse().ok())
                .collect::<Option<_>>()?;
            let bin = e.path().join("bin");
            ["initdb", "pg_ctl", "postgres"]
                .iter()
                .all(|b| bin.join(b).is_file())
                .then_some((version, bin))
        })
        .collect();
    versions.sort();
    versions.pop().map(|(_, bin)| bin).ok_or_else(|| {
        Skip(format!(
            "no PostgreSQL server binaries (initdb, pg_ctl, postgres) under `{}`: `apt-get install postgresql` (.ci/run does)",
            base.display()
        ))
    })
}

/// The effective uid of this process (the owner of `/proc/self`).
fn euid() -> u32 {
    std::fs::metadata("/proc/self").map_or(u32::MAX, |m| m.uid())
}

/// uid and gid of `user` from `/etc/passwd`.
fn user_ids(user: &str) -> Option<RunAs> {
    let passwd = std::fs::read_to_string("/etc/passwd").ok()?;
    passwd.lines().find_map(|line| {
        let mut fields = line.split(':');
        (fields.next()? == user).then_some(())?;
        let _password = fields.next()?;
        Some(RunAs {
            uid: fields.next()?.parse().ok()?,
            gid: fields.next()?.parse().ok()?,
        })
    })
}

impl Cluster {
    /// `initdb` in a new temp directory, start the server on a socket
    /// there, wait until it accepts connections, create database `vouch`.
    pub fn start() -> Result<Cluster, Skip> {
        let bin = binaries()?;
        let run_as = if euid() == 0 {
            let ids = user_ids("postgres").ok_or_else(|| {
                Skip(
                    "running as root and there is no `postgres` user to run the server as: `apt-get install postgresql` creates it"
                        .into(),
                )
            })?;
            if !Path::new("/usr/bin/setpriv").is_file() {
                return Err(Skip(
                    "running as root and `setpriv` (util-linux) is missing: `apt-get install util-linux`"
                        .into(),
                ));
            }
            Some(ids)
        } else {
            None
        };
        let root = tempfile::Builder::new()
            .prefix("vouch-pg-")
            .tempdir()
            .map_err(|e| Skip(format!("cannot create a temp dir: {e}")))?;
        let cluster = Cluster {
            bin,
            root,
            run_as,
            running: false,
        };
        cluster.prepare_dirs();
        let init = cluster.server_command("initdb", |c| {
            c.args([
                "-A",
                "trust",
                "-U",
                "postgres",
                "-E",
                "UTF8",
                "--no-sync",
                "-D",
            ])
            .arg(cluster.data_dir());
        });
        check("initdb", &init);
        let mut cluster = cluster;
        cluster.start_again();
        let created = cluster.psql("postgres", "CREATE DATABASE vouch");
        check("CREATE DATABASE vouch", &created);
        Ok(cluster)
    }

    /// The temp directory; the data directory and the socket live inside.
    pub fn root(&self) -> &Path {
        self.root.path()
    }

    pub fn data_dir(&self) -> PathBuf {
        self.root().join("data")
    }

    /// The directory the server's Unix socket is in (its `host`).
    pub fn socket_dir(&self) -> PathBuf {
        self.root().join("sock")
    }

    /// The server's log (`pg_ctl -l`).
    pub fn log_path(&self) -> PathBuf {
        self.root().join("server.log")
    }

    /// The connection URL of database `vouch` (rust-postgres syntax: the
    /// socket directory as `host`).
    pub fn url(&self) -> String {
        self.url_of("vouch")
    }

    pub fn url_of(&self, database: &str) -> String {
        format!(
            "postgresql://postgres@/{database}?host={}",
            self.socket_dir().display()
        )
    }

    /// The directory of the PostgreSQL binaries in use (pgbench, psql).
    pub fn bin_dir(&self) -> &Path {
        &self.bin
    }

    pub fn is_running(&self) -> bool {
        self.running
    }

    /// The cluster's directories, owned by the server's user; the root and
    /// the socket directory world-searchable so a client (root, or the
    /// test's own user) can reach the socket.
    fn prepare_dirs(&self) {
        for dir in [self.data_dir(), self.socket_dir()] {
            std::fs::create_dir_all(&dir).unwrap();
        }
        std::fs::set_permissions(self.root(), std::fs::Permissions::from_mode(0o755)).unwrap();
        std::fs::set_permissions(self.socket_dir(), std::fs::Permissions::from_mode(0o755))
            .unwrap();
        std::fs::set_permissions(self.data_dir(), std::fs::Permissions::from_mode(0o700)).unwrap();
        if let Some(ids) = self.run_as {
            for path in [
                self.root().to_path_buf(),
                self.data_dir(),
                self.socket_dir(),
            ] {
                std::os::unix::fs::chown(&path, Some(ids.uid), Some(ids.gid)).unwrap();
            }
        }
    }

    /// `name` from the server's binary directory, as the server's user.
    fn command(&self, name: &str) -> Command {
        let program = self.bin.join(name);
        let mut command = match self.run_as {
            Some(ids) => {
                let mut c = Command::new("/usr/bin/setpriv");
                c.arg(format!("--reuid={}", ids.uid))
                    .arg(format!("--regid={}", ids.gid))
                    .arg("--init-groups")
                    .arg(program);
                c
            }
            None => Command::new(program),
        };
        command
            .current_dir(self.root())
            .env_remove("PGHOST")
            .env_remove("PGPORT")
            .env_remove("PGDATABASE")
            .env_remove("PGUSER")
            .env("LC_ALL", "C")
            .stdin(Stdio::null());
        command
    }

    fn server_command(&self, name: &str, args: impl FnOnce(&mut Command)) -> Output {
        let mut command = self.command(name);
        args(&mut command);
        command
            .output()
            .unwrap_or_else(|e| panic!("cannot run {name}: {e}"))
    }

    /// The `-o` options of the server: socket only, in our directory.
    fn server_options(&self) -> String {
        format!(
            "-c listen_addresses='' -c unix_socket_directories='{}' -c max_connections={MAX_CONNECTIONS} \
             -c shared_buffers=64MB -c dynamic_shared_memory_type=mmap -c log_min_messages=warning",
            self.socket_dir().display()
        )
    }

    /// Starts the server on the existing data directory and waits until it
    /// accepts connections (`pg_ctl -w`, bounded, then a connect check).
    pub fn start_again(&mut self) {
        let out = self.server_command("pg_ctl", |c| {
            c.arg("-D")
                .arg(self.data_dir())
                .arg("-l")
                .arg(self.log_path())
                .args(["-w", "-t", &START_TIMEOUT.as_secs().to_string(), "-o"])
                .arg(self.server_options())
                .arg("start");
        });
        if !out.status.success() {
            panic!(
                "pg_ctl start failed: {}\n{}\nserver log:\n{}",
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr),
                std::fs::read_to_string(self.log_path()).unwrap_or_default()
            );
        }
        self.running = true;
        let deadline = Instant::now() + START_TIMEOUT;
        loop {
            let ready = self.psql("postgres", "SELECT 1");
            if ready.status.success() {
                return;
            }
            assert!(
                Instant::now() < deadline,
                "the cluster does not accept connections: {}",
                String::from_utf8_lossy(&ready.stderr)
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// `pg_ctl stop -m fast`: connected clients are disconnected, the
    /// server shuts down cleanly; the data directory stays.
    pub fn stop(&mut self) {
        let out = self.server_command("pg_ctl", |c| {
            c.arg("-D")
                .arg(self.data_dir())
                .args(["-m", "fast", "-w", "-t", "60", "stop"]);
        });
        check("pg_ctl stop", &out);
        self.running = false;
    }

    /// `psql` on `database` over the socket as `postgres`, one command,
    /// unaligned tuples-only output (run as the server's user, so it works
    /// for root too).
    pub fn psql(&self, database: &str, sql: &str) -> Output {
        let mut command = self.command("psql");
        command
            .arg("-h")
            .arg(self.socket_dir())
            .args(["-U", "postgres", "-d", database, "-X", "-A", "-t", "-q"])
            .args(["-v", "ON_ERROR_STOP=1", "-c", sql]);
        command.output().unwrap()
    }

    /// The single value `sql` selects from database `vouch`.
    pub fn query_value(&self, sql: &str) -> String {
        let out = self.psql("vouch", sql);
        check(sql, &out);
        String::from_utf8_lossy(&out.stdout).trim().to_owned()
    }

    /// `name` (a binary next to the server's, e.g. `pgbench`) as the
    /// server's user, for the caller to finish and run.
    pub fn tool(&self, name: &str) -> Command {
        self.command(name)
    }
}

fn check(what: &str, out: &Output) {
    assert!(
        out.status.success(),
        "{what} failed ({}): {}{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

impl Drop for Cluster {
    fn drop(&mut self) {
        if self.running {
            let _ = self
                .command("pg_ctl")
                .arg("-D")
                .arg(self.data_dir())
                .args(["-m", "immediate", "-w", "-t", "30", "stop"])
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .status();
        }
        // The TempDir removes the directory (root may remove the server
        // user's files; a non-root run owns them).
    }
}
