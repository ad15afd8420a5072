//! The PostgreSQL backend: the state of every replica of a team's service
//! in one database (`[store] backend = "postgres"`, docs/deploy.md).
//!
//! - Driver and pool: `postgres` (the blocking face of `tokio-postgres`)
//!   behind an `r2d2` pool. The state code is synchronous transactions on
//!   blocking threads (as with SQLite), so a blocking client fits it; see
//!   docs/decisions.md.
//! - Every write transaction first takes one transaction-scoped advisory
//!   lock ([`Lock`]), so writes of all replicas apply one at a time, as
//!   SQLite's single writer applies them: a turn's counters are read and
//!   written with no lost update, and a grant or authorization is spent
//!   once. Reads run in a `REPEATABLE READ` snapshot and take no lock.
//! - Durability per transaction, as on SQLite: counters commit with
//!   `synchronous_commit = off` (a server crash may lose the last few,
//!   which only forgets a denial or a budget tick), anything that creates or
//!   spends one-use authority waits for the WAL flush.
//! - Faults: a server that is down, restarting or failing over makes the
//!   transaction fail with [`StoreError::Unavailable`]; the caller fails
//!   closed. Broken connections are dropped from the pool and new ones are
//!   opened on demand, so the service recovers by itself. Every wait is
//!   bounded: the pool's checkout, the connect, each statement and each lock
//!   wait (`store.timeout_ms`).
//! - The connection URL comes from the environment (`store.url_env`); it
//!   may carry a password, so it is never logged or shown: messages name
//!   only host, port and database.

use std::time::Duration;

use super::sql::{DbError, DbResult, PgConn, Transaction};
use super::{Durability, StoreError};
use crate::config::StoreConfig;

/// The advisory locks write transactions take (keys of
/// `pg_advisory_xact_lock`; "vouch" in ASCII, then a small number, or a
/// session's own key).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Lock {
    /// State written outside any one session's rows (tools, tests).
    State,
    /// One session's rows: its turns' counters, its authorizations and
    /// denials ([`session_lock`]).
    Session(i64),
    /// The audit's aggregates.
    Audit,
    /// Schema migrations.
    Migrate,
}

impl Lock {
    pub(crate) fn key(self) -> i64 {
        const BASE: i64 = 0x766f_7563_6800;
        match self {
            Lock::State => BASE + 1,
            Lock::Session(key) => key,
            Lock::Audit => BASE + 2,
            Lock::Migrate => BASE + 3,
        }
    }
}

/// The lock of one session's rows: the first 8 bytes of a SHA-256 of its
/// id. Two sessions whose keys collide only wait for each other.
pub fn session_lock(session: &str) -> Lock {
    use sha2::Digest as _;
    let digest = sha2::Sha256::new()
        .chain_update(b"vouch session\0")
        .chain_update(session.as_bytes())
        .finalize();
    let mut first = [0u8; 8];
    for (to, from) in first.iter_mut().zip(digest.iter()) {
        *to = *from;
    }
    Lock::Session(i64::from_be_bytes(first))
}

/// Opens connections for the pool.
#[derive(Debug)]
struct Manager {
    config: postgres::Config,
}

impl r2d2::ManageConnection for Manager {
    type Connection = PgConn;
    type Error = postgres::Error;

    fn connect(&self) -> Result<PgConn, postgres::Error> {
        Ok(PgConn::new(self.config.connect(postgres::NoTls)?))
    }

    fn is_valid(&self, conn: &mut PgConn) -> Result<(), postgres::Error> {
        conn.client.simple_query("").map(drop)
    }

    fn has_broken(&self, conn: &mut PgConn) -> bool {
        conn.client.is_closed()
    }
}

/// The state database on a PostgreSQL server.
pub struct PgDb {
    pool: r2d2::Pool<Manager>,
    /// `postgresql://host:port/db`, for messages.
    display: String,
}

impl std::fmt::Debug for PgDb {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PgDb")
            .field("at", &self.display)
            .finish_non_exhaustive()
    }
}

/// Schema migrations of one component, in order; each runs once, in the
/// transaction that records it.
pub(crate) struct Migrations {
    pub component: &'static str,
    pub steps: &'static [&'static str],
}

/// The state schema (the same versions as `migrations/state/`).
pub(crate) const STATE_MIGRATIONS: Migrations = Migrations {
    component: "state",
    steps: &[
        include_str!("../../migrations/postgres/state/V1__session_state.sql"),
        include_str!("../../migrations/postgres/state/V2__grants_without_expiry_index.sql"),
        include_str!("../../migrations/postgres/state/V3__verdict_cache_size.sql"),
        include_str!("../../migrations/postgres/state/V4__recorded_prompts.sql"),
    ],
};

/// The connection URL in the environment variable `store.url_env` names,
/// read through `env`; `None` when it is unset or blank.
pub(crate) fn url_in_env(
    cfg: &StoreConfig,
    env: &dyn Fn(&str) -> Option<String>,
) -> Option<String> {
    env(&cfg.url_env).filter(|u| !u.trim().is_empty())
}

/// Why there is no URL to connect to, naming the variable (for the state
/// and the audit alike).
pub(crate) fn missing_url(cfg: &StoreConfig) -> String {
    format!(
        "`store.backend` is \"postgres\" but the environment variable `{}` \
         (`store.url_env`) holds no connection URL",
        cfg.url_env
    )
}

impl PgDb {
    /// Connects to `url` (a `postgresql://` URL or `key=value` string),
    /// applies pending migrations, and keeps a pool of
    /// `store.pool_size` connections.
    pub fn open(url: &str, cfg: &StoreConfig) -> Result<PgDb, StoreError> {
        let db = PgDb::connect(url, cfg)?;
        db.migrate(&STATE_MIGRATIONS)?;
        Ok(db)
    }

    /// A pool for `url` that migrates nothing (the audit applies its own
    /// schema, [`crate::audit::db::PG_MIGRATIONS`]). Connections open on
    /// first use.
    pub(crate) fn connect(url: &str, cfg: &StoreConfig) -> Result<PgDb, StoreError> {
        let mut config: postgres::Config =
            url.parse()
                .map_err(|e: postgres::Error| StoreError::Unavailable {
                    at: "postgresql".to_owned(),
                    detail: format!("the URL in `{}` does not parse: {e}", cfg.url_env),
                })?;
        let display = describe(&config);
        let timeout = Duration::from_millis(cfg.timeout_ms);
        if config.get_connect_timeout().is_none() {
            config.connect_timeout(timeout);
        }
        config.keepalives(true);
        config.keepalives_idle(Duration::from_secs(30));
        if config.get_application_name().is_none() {
            config.application_name("vouch");
        }
        // Bounded waits on the server's side too: a statement or a lock wait
        // past the timeout fails (and the request fails closed) instead of
        // holding the request past its deadline; a transaction left idle by
        // a stalled client is ended by the server.
        // Appended to the URL's own `options` (a `search_path`, say).
        let ms = cfg.timeout_ms;
        let options = format!(
            "{} -c statement_timeout={ms} -c lock_timeout={ms} \
             -c idle_in_transaction_session_timeout={}",
            config.get_options().unwrap_or_default(),
            ms.saturating_mul(4)
        );
        config.options(options.trim_start());
        let pool = r2d2::Pool::builder()
            .max_size(cfg.pool_size)
            .min_idle(Some(0))
            .connection_timeout(timeout)
            .test_on_check_out(false)
            .error_handler(Box::new(r2d2::NopErrorHandler))
            .build_unchecked(Manager { config });
        Ok(PgDb { pool, display })
    }

    /// `postgresql://host:port/db`, for messages.
    pub fn describe(&self) -> &str {
        &self.display
    }

    /// A round trip on a pooled connection.
    pub fn ping(&self) -> Result<(), StoreError> {
        let mut conn = self.checkout()?;
        conn.client
            .simple_query("SELECT 1")
            .map(drop)
            .map_err(|e| self.error(&DbError::Postgres(e)))
    }

    fn checkout(&self) -> Result<r2d2::PooledConnection<Manager>, StoreError> {
        self.pool.get().map_err(|e| StoreError::Unavailable {
            at: self.display.clone(),
            detail: format!("no connection to the database: {e}"),
        })
    }

    /// A statement's error as the store reports it.
    pub(crate) fn error(&self, e: &DbError) -> StoreError {
        StoreError::Unavailable {
            at: self.display.clone(),
            detail: e.to_string(),
        }
    }

    /// Runs `f` in one write transaction that holds `lock` from its start
    /// to its commit.
    pub fn write<T>(
        &self,
        lock: Lock,
        durability: Durability,
        f: impl FnOnce(&Transaction<'_>) -> DbResult<T>,
    ) -> Result<T, StoreError> {
        self.write_holding(&[lock], durability, f)
    }

    /// Runs `f` in one write transaction that first takes every lock of
    /// `locks`, in ascending key order (so two transactions that need some
    /// of the same locks never wait for each other in a circle).
    pub fn write_holding<T>(
        &self,
        locks: &[Lock],
        durability: Durability,
        f: impl FnOnce(&Transaction<'_>) -> DbResult<T>,
    ) -> Result<T, StoreError> {
        let mut keys: Vec<i64> = locks.iter().map(|l| l.key()).collect();
        keys.sort_unstable();
        keys.dedup();
        let mut begin = match durability {
            Durability::Normal => "BEGIN; SET LOCAL synchronous_commit = off".to_owned(),
            Durability::Full => "BEGIN".to_owned(),
        };
        for key in keys {
            begin.push_str(&format!("; SELECT pg_advisory_xact_lock({key})"));
        }
        self.transaction(&begin, "COMMIT", f)
    }

    /// Runs `f` in one write transaction that takes no advisory lock
    /// ([`super::Store::write_atomic`]).
    pub fn write_unlocked<T>(
        &self,
        durability: Durability,
        f: impl FnOnce(&Transaction<'_>) -> DbResult<T>,
    ) -> Result<T, StoreError> {
        self.write_holding(&[], durability, f)
    }

    /// Runs `f` in one read-only snapshot.
    pub fn read<T>(
        &self,
        f: impl FnOnce(&Transaction<'_>) -> DbResult<T>,
    ) -> Result<T, StoreError> {
        self.transaction(
            "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY",
            "ROLLBACK",
            f,
        )
    }

    fn transaction<T>(
        &self,
        begin: &str,
        end: &str,
        f: impl FnOnce(&Transaction<'_>) -> DbResult<T>,
    ) -> Result<T, StoreError> {
        let mut conn = self.checkout()?;
        if let Err(e) = conn.client.batch_execute(begin) {
            if !conn.client.is_closed() {
                return Err(self.error(&DbError::from(e)));
            }
            // A connection the server closed (a restart, a failover) since
            // it was pooled: nothing ran on it, so the transaction starts
            // again once on a fresh one (the pool discards the closed one).
            drop(conn);
            conn = self.checkout()?;
            conn.client
                .batch_execute(begin)
                .map_err(|e| self.error(&DbError::from(e)))?;
        }
        let done = f(&Transaction::postgres(&mut conn)).and_then(|value| {
            conn.client.batch_execute(end)?;
            Ok(value)
        });
        match done {
            Ok(value) => Ok(value),
            Err(e) => {
                // Best effort: a broken connection is dropped by the pool
                // (`has_broken`); a live one must not go back mid-transaction.
                if !conn.client.is_closed() && conn.client.batch_execute("ROLLBACK").is_err() {
                    tracing::debug!("rollback after a failed transaction failed");
                }
                Err(self.error(&e))
            }
        }
    }

    /// Applies the pending steps of `migrations`, under the migration lock
    /// (replicas starting together apply each step once). A database whose
    /// schema is newer than this binary knows is refused.
    pub(crate) fn migrate(&self, migrations: &Migrations) -> Result<(), StoreError> {
        let mut conn = self.checkout()?;
        let begin = format!(
            "BEGIN; SELECT pg_advisory_xact_lock({}); \
             CREATE TABLE IF NOT EXISTS vouch_schema (component TEXT NOT NULL, \
             version BIGINT NOT NULL, applied_at TIMESTAMPTZ NOT NULL DEFAULT now(), \
             PRIMARY KEY (component, version))",
            Lock::Migrate.key()
        );
        let known = i64::try_from(migrations.steps.len()).unwrap_or(i64::MAX);
        let steps = |conn: &mut PgConn| -> Result<(), DbError> {
            conn.client.batch_execute(&begin)?;
            let applied: Option<i64> = conn
                .client
                .query_one(
                    "SELECT max(version) FROM vouch_schema WHERE component = $1",
                    &[&migrations.component],
                )?
                .try_get(0)?;
            let applied = applied.unwrap_or(0);
            if applied > known {
                return Err(DbError::BadValue {
                    column: 0,
                    value: format!(
                        "schema `{}` is at version {applied}, newer than this vouch knows \
                         ({known}); upgrade vouch",
                        migrations.component
                    ),
                });
            }
            for (version, sql) in (1_i64..).zip(migrations.steps.iter()) {
                if version <= applied {
                    continue;
                }
                conn.client.batch_execute(sql)?;
                conn.client.execute(
                    "INSERT INTO vouch_schema (component, version) VALUES ($1, $2)",
                    &[&migrations.component, &version],
                )?;
            }
            conn.client.batch_execute("COMMIT")?;
            Ok(())
        };
        match steps(&mut conn) {
            Ok(()) => Ok(()),
            Err(e) => {
                if !conn.client.is_closed() {
                    let _ = conn.client.batch_execute("ROLLBACK");
                }
                Err(StoreError::Migration {
                    path: self.display.clone(),
                    detail: e.to_string(),
                })
            }
        }
    }
}

/// `postgresql://host:port/db` from a parsed configuration: no user, no
/// password, no options.
fn describe(config: &postgres::Config) -> String {
    let host = match config.get_hosts().first() {
        Some(postgres::config::Host::Tcp(h)) => h.clone(),
        Some(postgres::config::Host::Unix(p)) => p.display().to_string(),
        None => "localhost".to_owned(),
    };
    let port = config.get_ports().first().copied().unwrap_or(5432);
    let db = config.get_dbname().unwrap_or("(default)");
    format!("postgresql://{host}:{port}/{db}")
}
