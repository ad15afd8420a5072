//! The state database (`<state_dir>/vouch.sqlite`, design §2 and §6.3):
//! session counters, the verdict cache, recent denials, one-use human
//! authorizations and grants, shared safely by the daemon and any number of
//! CLI hook processes.
//!
//! How it stays safe:
//! - WAL journal, `busy_timeout` of 5 s, and every write in a
//!   `BEGIN IMMEDIATE` transaction, so concurrent writers queue instead of
//!   failing on a lock upgrade.
//! - A pool of connections behind a mutex: a `rusqlite::Connection` is
//!   `Send` but not `Sync`, so each read borrows one connection for the
//!   length of one transaction. The pool keeps as many idle connections as
//!   the service runs blocking tasks at once, so a busy service reuses warm
//!   connections (their prepared statements included) instead of opening
//!   and closing one per request. The HTTP service calls in from
//!   `spawn_blocking`; hook processes open their own `Store`.
//! - One writer connection behind its own lock: SQLite admits one writer at
//!   a time anyway, and writers of the same process queue on that lock (woken
//!   in turn) instead of in SQLite's busy handler, which polls with sleeps of
//!   up to 100 ms and turned concurrent reviews into tail latency. Writers in
//!   other processes (hook runs) still meet at SQLite's lock and its busy
//!   timeout; the in-process queue waits at most that timeout too.
//! - Durability is chosen per transaction ([`Durability`]): counters run at
//!   `synchronous=NORMAL` (a commit survives a process crash; an OS crash may
//!   lose the last few, which only forgets a denial or a budget tick), while
//!   anything that creates or spends a one-use authority (grants, overrides,
//!   break glass) commits at `synchronous=FULL`, so a power cut can never
//!   resurrect a spent grant.
//! - A corrupt database is reported as [`StoreError::Corrupt`] and left
//!   exactly as it is — never deleted or rebuilt, because it may be the
//!   evidence someone needs. Every open reads the schema (a file that is not
//!   a database, or whose schema is damaged, fails there); the service also
//!   runs `PRAGMA quick_check(1)` when it starts ([`Store::open_checked`]).
//!   A short-lived hook process does not: the check reads every page of the
//!   database, and damage deeper in the file still fails the read or write
//!   that meets it (`SQLITE_CORRUPT`, rolled back), which fails closed.

pub(crate) mod files;
pub mod postgres;
mod queued;
pub mod sql;

use std::path::{Path, PathBuf};
use std::sync::{Mutex, PoisonError};
use std::time::Duration;

use rusqlite::config::DbConfig;
use rusqlite::{Connection, ErrorCode, OpenFlags, TransactionBehavior};
use rusqlite_migration::{M, Migrations};

pub use files::{
    DIR_MODE, FILE_MODE, TOKEN_BYTES, TOKEN_CHARS, ensure_private_dir, is_token,
    load_or_create_token, mint_token, random_bytes,
};
pub use queued::{QueuedWrite, Recorded};
pub use sql::{DbError, DbResult, Row, Statement, Transaction};

/// File name of the state database inside the state directory.
pub const DATABASE_FILE: &str = "vouch.sqlite";
/// Held (OS file lock) while a process opens and migrates the database, so
/// processes starting together do not race SQLite's journal-mode switch and
/// schema creation, where its busy handler does not help.
pub const OPEN_LOCK_FILE: &str = "vouch.sqlite.lock";

/// How long a writer waits for another process's transaction.
const BUSY_TIMEOUT: Duration = Duration::from_secs(5);

/// Idle read connections kept for reuse; more are opened on demand and
/// closed when returned to a full pool. As many as the service's reviews in
/// flight at once (`server.max_concurrent_reviews` is at most 1024, its
/// default 16), so a loaded service does not open and close a connection per
/// request; each idle one costs a file descriptor and a few KiB until used.
const POOL_IDLE_MAX: usize = 64;

/// Prepared statements kept per connection (the crate uses about 40).
const STATEMENT_CACHE: usize = 64;

/// Attempts at migrating when another process migrates at the same moment.
const MIGRATION_ATTEMPTS: u32 = 3;

/// Schema migrations, in order. Each file runs once, in one transaction.
const MIGRATIONS: &[&str] = &[
    include_str!("../../migrations/state/V1__session_state.sql"),
    include_str!("../../migrations/state/V2__grants_without_expiry_index.sql"),
    include_str!("../../migrations/state/V3__verdict_cache_size.sql"),
    include_str!("../../migrations/state/V4__recorded_prompts.sql"),
];

#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error(
        "state database `{path}` is corrupt ({detail}); it was left untouched: move it aside \
         to start with empty state, or restore it from a backup"
    )]
    Corrupt { path: String, detail: String },
    #[error("cannot {action} `{path}`: {source}")]
    Io {
        path: String,
        action: &'static str,
        source: std::io::Error,
    },
    #[error(
        "`{path}` has mode {mode:04o}; it must not be readable or writable by group or others \
         (chmod {wanted:o} `{path}`)"
    )]
    TooOpen {
        path: String,
        mode: u32,
        wanted: u32,
    },
    #[error(
        "`{path}` does not hold a token (expected 43 base64url characters); delete it to mint \
         a new one"
    )]
    NotAToken { path: String },
    #[error("no random bytes from the operating system: {message}")]
    Random { message: String },
    #[error("`{path}` is a symbolic link; vouch refuses to keep its state through a link")]
    Symlink { path: String },
    #[error("state database `{path}`: cannot migrate the schema: {detail}")]
    Migration { path: String, detail: String },
    #[error("state database `{path}`: {source}")]
    Sqlite {
        path: String,
        source: rusqlite::Error,
    },
    /// The state store cannot be reached or did not complete a
    /// transaction (PostgreSQL down, restarting or failing over; a pool
    /// with no connection free in time). Requests that need state fail
    /// closed; the next one tries again.
    #[error("state store unavailable ({at}): {detail}")]
    Unavailable { at: String, detail: String },
    #[error("state database `{path}`: field `{field}` holds an unexpected value `{value}`")]
    BadValue {
        path: String,
        field: &'static str,
        value: String,
    },
}

impl StoreError {
    /// This error for each of several callers it failed (the error is not
    /// `Clone`: an unavailable store keeps its fields, anything else its
    /// text).
    pub fn shared(&self) -> StoreError {
        match self {
            StoreError::Unavailable { at, detail } => StoreError::Unavailable {
                at: at.clone(),
                detail: detail.clone(),
            },
            other => StoreError::Unavailable {
                at: String::new(),
                detail: other.to_string(),
            },
        }
    }
}

/// How hard a commit must reach the disk before it returns (ordered: `Full`
/// is the stronger).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Durability {
    /// `synchronous=NORMAL`: survives a process crash; an OS crash may lose
    /// the most recent commits. For counters, caches and denial summaries.
    Normal,
    /// `synchronous=FULL`: the WAL is fsynced at commit. For anything that
    /// creates or spends one-use authority.
    Full,
}

struct Pooled {
    conn: Connection,
    durability: Durability,
}

impl Pooled {
    fn set_durability(&mut self, wanted: Durability) -> rusqlite::Result<()> {
        if self.durability != wanted {
            let level = match wanted {
                Durability::Normal => "NORMAL",
                Durability::Full => "FULL",
            };
            self.conn.pragma_update(None, "synchronous", level)?;
            self.durability = wanted;
        }
        Ok(())
    }
}

/// Runs `f` between `begin` and `end` (both kept prepared on `conn`). On an
/// error the transaction is rolled back before the error is returned (the
/// caller then drops the connection, which would roll back as well).
fn in_transaction<T>(
    conn: &Connection,
    begin: &str,
    end: &str,
    f: impl FnOnce(&Transaction<'_>) -> DbResult<T>,
) -> DbResult<T> {
    conn.prepare_cached(begin)?.execute([])?;
    let done = f(&Transaction::sqlite(conn)).and_then(|value| {
        conn.prepare_cached(end)?.execute([])?;
        Ok(value)
    });
    if done.is_err() && !conn.is_autocommit() {
        // Best effort: the error being returned is the one that matters.
        let _ = conn.execute_batch("ROLLBACK");
    }
    done
}

/// The shared state store. Cheap to share (`Arc<Store>`); `Send + Sync`.
/// One of two backends ([`Backend`]): the embedded SQLite file (the
/// default, for one machine) or a PostgreSQL database shared by every
/// replica of a team's service ([`postgres`]). Both run the same statements
/// through the same [`Transaction`].
pub struct Store {
    backend: Backend,
    /// Writes waiting for the recorder thread ([`Store::write_queued`]).
    queue: std::sync::Arc<queued::Queue>,
}

/// Where the state lives.
pub(crate) enum Backend {
    Sqlite(SqliteDb),
    Postgres(postgres::PgDb),
}

impl Drop for Store {
    fn drop(&mut self) {
        // The recorder thread, if one was started, ends.
        self.queue.close();
    }
}

impl std::fmt::Debug for Store {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Store")
            .field("at", &self.describe())
            .finish_non_exhaustive()
    }
}

impl Store {
    fn with(backend: Backend) -> Store {
        Store {
            backend,
            queue: std::sync::Arc::default(),
        }
    }

    /// [`Store::open`], then `PRAGMA quick_check(1)` (it reads every page:
    /// for the service's start, not for every short-lived process).
    pub fn open_checked(state_dir: &Path) -> Result<Store, StoreError> {
        Ok(Store::with(Backend::Sqlite(SqliteDb::open_checked(
            state_dir,
        )?)))
    }

    /// Opens (creating if needed) `<state_dir>/vouch.sqlite`: private
    /// directory and files, WAL, a read of the schema, migrations.
    pub fn open(state_dir: &Path) -> Result<Store, StoreError> {
        Ok(Store::with(Backend::Sqlite(SqliteDb::open(state_dir)?)))
    }

    /// Opens the backend `[store]` configures: the SQLite file in
    /// `state_dir` (checked as [`Store::open_checked`] when `checked`), or
    /// the PostgreSQL database whose URL is in the environment variable
    /// `store.url_env` names (read through `env`; never logged).
    pub fn open_configured(
        state_dir: &Path,
        cfg: &crate::config::StoreConfig,
        env: &dyn Fn(&str) -> Option<String>,
        checked: bool,
    ) -> Result<Store, StoreError> {
        match cfg.backend {
            crate::config::StoreBackend::Sqlite if checked => Store::open_checked(state_dir),
            crate::config::StoreBackend::Sqlite => Store::open(state_dir),
            crate::config::StoreBackend::Postgres => {
                let url =
                    postgres::url_in_env(cfg, env).ok_or_else(|| StoreError::Unavailable {
                        at: "postgresql".to_owned(),
                        detail: postgres::missing_url(cfg),
                    })?;
                let db = postgres::PgDb::open(&url, cfg)?;
                Ok(Store::with(Backend::Postgres(db)))
            }
        }
    }

    /// Where the state lives, for messages: the SQLite file's path, or
    /// `postgresql://host/db` (never the user name or password).
    pub fn describe(&self) -> &str {
        match &self.backend {
            Backend::Sqlite(db) => &db.display_path,
            Backend::Postgres(db) => db.describe(),
        }
    }

    /// Path of the SQLite database file (`None` for PostgreSQL).
    pub fn path(&self) -> Option<&Path> {
        match &self.backend {
            Backend::Sqlite(db) => Some(&db.db_path),
            Backend::Postgres(_) => None,
        }
    }

    /// Which backend this is: `sqlite` or `postgres`.
    pub fn backend_name(&self) -> &'static str {
        match &self.backend {
            Backend::Sqlite(_) => "sqlite",
            Backend::Postgres(_) => "postgres",
        }
    }

    /// For a short-lived process after its reply: folds a long SQLite log
    /// back into the database ([`truncate_long_log`]). Nothing to do for
    /// PostgreSQL.
    pub fn truncate_long_log(&self) {
        match &self.backend {
            Backend::Sqlite(db) => db.truncate_long_log(),
            Backend::Postgres(_) => {}
        }
    }

    /// SQLite's full `PRAGMA integrity_check` (`["ok"]` when healthy); for
    /// PostgreSQL, whether the database answers (the server checks its own
    /// pages).
    pub fn integrity_check(&self) -> Result<Vec<String>, StoreError> {
        match &self.backend {
            Backend::Sqlite(db) => db.integrity_check(),
            Backend::Postgres(db) => db.ping().map(|()| vec!["ok".to_owned()]),
        }
    }

    /// Verifies that the SQLite database and its `-wal`/`-shm` files are
    /// `0600` (nothing to check for PostgreSQL).
    pub fn verify_file_modes(&self) -> Result<(), StoreError> {
        match &self.backend {
            Backend::Sqlite(db) => db.verify_file_modes(),
            Backend::Postgres(_) => Ok(()),
        }
    }

    /// Whether the store answers now: for PostgreSQL a round trip on a
    /// pooled connection (what `/healthz` asks); SQLite is a local file
    /// that opened, so it answers.
    pub fn ping(&self) -> Result<(), StoreError> {
        match &self.backend {
            Backend::Sqlite(_) => Ok(()),
            Backend::Postgres(db) => db.ping(),
        }
    }

    /// Runs `f` inside one write transaction and commits it. An error from
    /// `f` rolls everything back. Writes are serialized: SQLite admits one
    /// writer at a time, and on PostgreSQL every write transaction first
    /// takes one advisory lock, so the replicas of a team's service apply
    /// their writes one at a time too (no lost update of a turn's counters,
    /// no grant spent twice).
    pub fn write<T>(
        &self,
        durability: Durability,
        f: impl FnOnce(&Transaction<'_>) -> DbResult<T>,
    ) -> Result<T, StoreError> {
        match &self.backend {
            Backend::Sqlite(db) => db.write(durability, f),
            Backend::Postgres(db) => db.write(postgres::Lock::State, durability, f),
        }
    }

    /// [`Store::write`] for a transaction that reads and writes the rows of
    /// one session only (its turns, authorizations, denials; grants and the
    /// shared verdict cache ride along, being safe on their own): on
    /// PostgreSQL it takes that session's advisory lock, so writes of one
    /// session apply one at a time across replicas while other sessions'
    /// commits run beside them.
    pub fn write_session<T>(
        &self,
        session: &str,
        durability: Durability,
        f: impl FnOnce(&Transaction<'_>) -> DbResult<T>,
    ) -> Result<T, StoreError> {
        match &self.backend {
            Backend::Sqlite(db) => db.write(durability, f),
            Backend::Postgres(db) => db.write(postgres::session_lock(session), durability, f),
        }
    }

    /// [`Store::write`] for a transaction of statements that are each
    /// atomic on their own and write nothing they read first (a grant's
    /// insert, a grant's conditional delete): on PostgreSQL it takes no
    /// advisory lock, so such commits run side by side and share WAL
    /// flushes (two consumes of one grant still meet at its row: one
    /// deletes it, the other finds nothing). SQLite serializes every write
    /// anyway.
    pub fn write_atomic<T>(
        &self,
        durability: Durability,
        f: impl FnOnce(&Transaction<'_>) -> DbResult<T>,
    ) -> Result<T, StoreError> {
        match &self.backend {
            Backend::Sqlite(db) => db.write(durability, f),
            Backend::Postgres(db) => db.write_unlocked(durability, f),
        }
    }

    /// Runs `f` inside one read transaction (a consistent snapshot).
    pub fn read<T>(
        &self,
        f: impl FnOnce(&Transaction<'_>) -> DbResult<T>,
    ) -> Result<T, StoreError> {
        match &self.backend {
            Backend::Sqlite(db) => db.read(f),
            Backend::Postgres(db) => db.read(f),
        }
    }

    pub(crate) fn backend(&self) -> &Backend {
        &self.backend
    }
}

/// The embedded backend: `<state_dir>/vouch.sqlite`.
pub(crate) struct SqliteDb {
    db_path: PathBuf,
    display_path: String,
    idle: Mutex<Vec<Pooled>>,
    /// The connection every write transaction of this process uses, and the
    /// lock that queues them (`None` until the first write, or after a
    /// failed one).
    writer: parking_lot::Mutex<Option<Pooled>>,
}

/// An exclusive OS lock on a database's open lock file (such as
/// [`OPEN_LOCK_FILE`]), released on drop.
pub(crate) struct InitLock(std::fs::File);

impl InitLock {
    /// Waits at most the busy timeout: a process stuck holding it must not
    /// stall every hook forever (the caller then fails closed).
    fn acquire(path: &Path) -> Result<InitLock, StoreError> {
        InitLock::acquire_within(path, BUSY_TIMEOUT)
    }

    /// Waits at most `wait` for the lock.
    pub(crate) fn acquire_within(path: &Path, wait: Duration) -> Result<InitLock, StoreError> {
        files::ensure_private_file(path)?;
        let file = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .open(path)
            .map_err(|e| files::io_err(path, "open", e))?;
        let deadline = std::time::Instant::now() + wait;
        loop {
            match file.try_lock() {
                Ok(()) => return Ok(InitLock(file)),
                Err(std::fs::TryLockError::WouldBlock) if std::time::Instant::now() < deadline => {
                    std::thread::sleep(Duration::from_millis(5));
                }
                Err(std::fs::TryLockError::WouldBlock) => {
                    let e = std::io::Error::new(
                        std::io::ErrorKind::TimedOut,
                        "another process held the lock for too long",
                    );
                    return Err(files::io_err(path, "lock", e));
                }
                Err(std::fs::TryLockError::Error(e)) => {
                    return Err(files::io_err(path, "lock", e));
                }
            }
        }
    }
}

impl Drop for InitLock {
    fn drop(&mut self) {
        // Closing the file releases the lock too; unlocking first just makes
        // the release immediate and explicit.
        let _ = self.0.unlock();
    }
}

impl SqliteDb {
    fn open_checked(state_dir: &Path) -> Result<SqliteDb, StoreError> {
        let store = SqliteDb::open(state_dir)?;
        let pooled = store.checkout()?;
        store.quick_check(&pooled.conn)?;
        store.checkin(pooled);
        Ok(store)
    }

    fn open(state_dir: &Path) -> Result<SqliteDb, StoreError> {
        files::ensure_private_dir(state_dir)?;
        let db_path = state_dir.join(DATABASE_FILE);
        // Created 0600 here, before SQLite touches it: SQLite gives the
        // `-wal` and `-shm` files the main file's mode.
        files::ensure_private_file(&db_path)?;
        let _init = InitLock::acquire(&state_dir.join(OPEN_LOCK_FILE))?;
        let store = SqliteDb {
            display_path: db_path.display().to_string(),
            db_path,
            idle: Mutex::new(Vec::new()),
            writer: parking_lot::Mutex::new(None),
        };
        let mut first = store.connect()?;
        // Read before anything is written: a file that is not a database,
        // or whose schema page is damaged, fails here, untouched.
        let _tables: i64 = first
            .conn
            .query_row("SELECT count(*) FROM sqlite_master", [], |row| row.get(0))
            .map_err(|e| store.sql_error(e))?;
        let mode: String = first
            .conn
            .pragma_update_and_check(None, "journal_mode", "WAL", |row| row.get(0))
            .map_err(|e| store.sql_error(e))?;
        if !mode.eq_ignore_ascii_case("wal") {
            return Err(StoreError::BadValue {
                path: store.display_path.clone(),
                field: "journal_mode",
                value: mode,
            });
        }
        store.migrate(&mut first.conn)?;
        files::verify_database_modes(&store.db_path)?;
        store.checkin(first);
        Ok(store)
    }

    fn truncate_long_log(&self) {
        if let Ok(pooled) = self.checkout() {
            truncate_long_log(&pooled.conn, &self.db_path, BUSY_TIMEOUT);
            self.checkin(pooled);
        }
    }

    fn integrity_check(&self) -> Result<Vec<String>, StoreError> {
        self.read(|tx| tx.query_all("PRAGMA integrity_check", &[], |row| row.get::<String>(0)))
    }

    fn verify_file_modes(&self) -> Result<(), StoreError> {
        files::verify_database_modes(&self.db_path)
    }

    /// Runs `f` inside one `BEGIN IMMEDIATE` transaction and commits it.
    /// An error from `f` rolls everything back. Writers of this process take
    /// turns on one connection; waiting for the turn longer than the busy
    /// timeout fails as SQLite's own busy error would.
    fn write<T>(
        &self,
        durability: Durability,
        f: impl FnOnce(&Transaction<'_>) -> DbResult<T>,
    ) -> Result<T, StoreError> {
        let Some(mut slot) = self.writer.try_lock_for(BUSY_TIMEOUT) else {
            let busy = rusqlite::Error::SqliteFailure(
                rusqlite::ffi::Error::new(rusqlite::ffi::SQLITE_BUSY),
                Some("other writers of this process held the database for too long".to_owned()),
            );
            return Err(self.sql_error(busy));
        };
        let mut pooled = match slot.take() {
            Some(pooled) => pooled,
            None => self.connect()?,
        };
        let result = pooled
            .set_durability(durability)
            .map_err(DbError::from)
            .and_then(|()| in_transaction(&pooled.conn, "BEGIN IMMEDIATE", "COMMIT", f));
        match result {
            Ok(value) => {
                *slot = Some(pooled);
                Ok(value)
            }
            // A connection that failed mid-transaction is dropped rather than
            // reused: whatever state it is in, a fresh one is known-good.
            Err(e) => Err(self.db_error(e)),
        }
    }

    fn read<T>(&self, f: impl FnOnce(&Transaction<'_>) -> DbResult<T>) -> Result<T, StoreError> {
        let pooled = self.checkout()?;
        // Ended by a rollback: a read commits nothing.
        let result = in_transaction(&pooled.conn, "BEGIN DEFERRED", "ROLLBACK", f);
        match result {
            Ok(value) => {
                self.checkin(pooled);
                Ok(value)
            }
            Err(e) => Err(self.db_error(e)),
        }
    }

    fn checkout(&self) -> Result<Pooled, StoreError> {
        let idle = self
            .idle
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .pop();
        match idle {
            Some(pooled) => Ok(pooled),
            None => self.connect(),
        }
    }

    fn checkin(&self, pooled: Pooled) {
        let mut idle = self.idle.lock().unwrap_or_else(PoisonError::into_inner);
        if idle.len() < POOL_IDLE_MAX {
            idle.push(pooled);
        }
    }

    fn connect(&self) -> Result<Pooled, StoreError> {
        // No SQLITE_OPEN_CREATE: the file was created 0600 by `open`, and a
        // file that vanished since then is an error, not something to
        // recreate with SQLite's default mode.
        let flags = OpenFlags::SQLITE_OPEN_READ_WRITE
            | OpenFlags::SQLITE_OPEN_NO_MUTEX
            | OpenFlags::SQLITE_OPEN_NOFOLLOW;
        let conn =
            Connection::open_with_flags(&self.db_path, flags).map_err(|e| self.sql_error(e))?;
        conn.busy_timeout(BUSY_TIMEOUT)
            .map_err(|e| self.sql_error(e))?;
        // Every statement this crate runs stays prepared on the connection.
        conn.set_prepared_statement_cache_capacity(STATEMENT_CACHE);
        conn.pragma_update(None, "foreign_keys", "ON")
            .map_err(|e| self.sql_error(e))?;
        conn.pragma_update(None, "synchronous", "NORMAL")
            .map_err(|e| self.sql_error(e))?;
        conn.pragma_update(None, "trusted_schema", "OFF")
            .map_err(|e| self.sql_error(e))?;
        // A `vouch hook` process closes its connections a moment after its
        // reply: the last close must not checkpoint the log and fsync the
        // database on the way out (the harness waits for the exit), nor
        // delete the log so that the next process recreates it and fsyncs
        // the directory. `wal_autocheckpoint` still checkpoints at commits.
        conn.set_db_config(DbConfig::SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, true)
            .map_err(|e| self.sql_error(e))?;
        // Plans never depend on bound values. Without this, binding a new
        // `LIMIT ?` (the cache eviction, the denial pruning) expires the
        // cached statement and SQLite parses and plans it again on every
        // execution; with no `ANALYZE` statistics there is nothing a
        // value-specific plan could gain.
        conn.set_db_config(DbConfig::SQLITE_DBCONFIG_ENABLE_QPSG, true)
            .map_err(|e| self.sql_error(e))?;
        Ok(Pooled {
            conn,
            durability: Durability::Normal,
        })
    }

    fn quick_check(&self, conn: &Connection) -> Result<(), StoreError> {
        let verdict: String = conn
            .query_row("PRAGMA quick_check(1)", [], |row| row.get(0))
            .map_err(|e| self.sql_error(e))?;
        if verdict == "ok" {
            Ok(())
        } else {
            Err(StoreError::Corrupt {
                path: self.display_path.clone(),
                detail: verdict,
            })
        }
    }

    fn migrate(&self, conn: &mut Connection) -> Result<(), StoreError> {
        let migrations = Migrations::new(MIGRATIONS.iter().map(|sql| M::up(sql)).collect());
        // Two processes opening a fresh database at once both see version 0;
        // the second one's migration then fails on the first one's tables.
        // Immediate transactions serialize them, and re-checking the version
        // after a failure tells that race apart from a real error.
        conn.set_transaction_behavior(TransactionBehavior::Immediate);
        let mut attempt = 0;
        loop {
            attempt += 1;
            match migrations.to_latest(conn) {
                Ok(()) => return Ok(()),
                Err(e) => {
                    let caught_up = migrations
                        .pending_migrations(conn)
                        .map(|pending| pending == 0)
                        .unwrap_or(false);
                    if caught_up {
                        return Ok(());
                    }
                    if let rusqlite_migration::Error::RusqliteError { err, .. } = &e
                        && is_corruption(err)
                    {
                        return Err(self.sql_error_ref(err));
                    }
                    if attempt >= MIGRATION_ATTEMPTS {
                        return Err(StoreError::Migration {
                            path: self.display_path.clone(),
                            detail: e.to_string(),
                        });
                    }
                }
            }
        }
    }

    /// A statement's error as the store reports it.
    fn db_error(&self, e: DbError) -> StoreError {
        match e {
            DbError::Sqlite(e) => self.sql_error(e),
            other => StoreError::Unavailable {
                at: self.display_path.clone(),
                detail: other.to_string(),
            },
        }
    }

    fn sql_error(&self, e: rusqlite::Error) -> StoreError {
        if is_corruption(&e) {
            StoreError::Corrupt {
                path: self.display_path.clone(),
                detail: e.to_string(),
            }
        } else {
            StoreError::Sqlite {
                path: self.display_path.clone(),
                source: e,
            }
        }
    }

    fn sql_error_ref(&self, e: &rusqlite::Error) -> StoreError {
        StoreError::Corrupt {
            path: self.display_path.clone(),
            detail: e.to_string(),
        }
    }
}

/// Log frames past which a short-lived process folds the log back into
/// the database after its reply (256 pages of 4 KiB: 1 MiB).
const SHORT_LIVED_LOG_FRAMES: u64 = 256;

/// Bytes of one log frame of a 4 KiB page (frame header included).
const LOG_FRAME_BYTES: u64 = 4096 + 24;

/// A process that opens a WAL database while no other process has it open
/// finds the log's index (`-shm`) reset: it rebuilds it by reading and
/// checksumming every frame of the log, and believes none of it copied
/// back, so the log is never restarted and grows with every process (and
/// once past `wal_autocheckpoint`, every commit copies all of it back
/// again). So a short-lived process (a `vouch hook` run), after its reply,
/// folds a log longer than [`SHORT_LIVED_LOG_FRAMES`] back into the
/// database and truncates it (`wal_checkpoint(TRUNCATE)`: two fsyncs, about
/// once in 60 hook runs). It never waits for another process: busy means
/// someone else (the service) has the database open, and its own
/// checkpoints keep the log short.
pub(crate) fn truncate_long_log(conn: &Connection, db_path: &Path, busy_timeout: Duration) {
    let mut log = db_path.as_os_str().to_owned();
    log.push("-wal");
    let long = std::fs::metadata(&log)
        .map(|m| m.len() > SHORT_LIVED_LOG_FRAMES * LOG_FRAME_BYTES)
        .unwrap_or(false);
    if !long {
        return;
    }
    let folded = conn.busy_timeout(Duration::ZERO).and_then(|()| {
        conn.query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |row| {
            row.get::<_, i64>(0)
        })
    });
    if let Err(e) = folded {
        tracing::debug!(error = %e, "the log was not folded back; a later process will");
    }
    let _ = conn.busy_timeout(busy_timeout);
}

fn is_corruption(e: &rusqlite::Error) -> bool {
    matches!(
        e.sqlite_error_code(),
        Some(ErrorCode::DatabaseCorrupt | ErrorCode::NotADatabase)
    )
}

/// A once-per-interval claim for a process's table prunes: due the first
/// time, then once per `every_ms` (or when the clock went back). Claimed
/// atomically, so concurrent callers prune once.
pub(crate) struct PruneClock {
    every_ms: u64,
    /// When this process last pruned (clock milliseconds; 0: never).
    last_ms: std::sync::atomic::AtomicU64,
}

impl PruneClock {
    pub(crate) const fn new(every_ms: u64) -> PruneClock {
        PruneClock {
            every_ms,
            last_ms: std::sync::atomic::AtomicU64::new(0),
        }
    }

    /// Whether a prune at `now` is due; `true` claims it.
    pub(crate) fn claim(&self, now: u64) -> bool {
        use std::sync::atomic::Ordering::Relaxed;
        let last = self.last_ms.load(Relaxed);
        let due = last == 0 || now < last || now.saturating_sub(last) >= self.every_ms;
        due && self
            .last_ms
            .compare_exchange(last, now.max(1), Relaxed, Relaxed)
            .is_ok()
    }
}

/// Milliseconds as SQLite's signed integer, saturating far in the future.
pub(crate) fn sql_ms(ms: u64) -> i64 {
    i64::try_from(ms).unwrap_or(i64::MAX)
}

/// A stored millisecond value back as `u64` (negative values never occur;
/// they would read as the epoch, i.e. long expired).
pub(crate) fn ms_from_sql(ms: i64) -> u64 {
    u64::try_from(ms).unwrap_or(0)
}

#[cfg(test)]
mod tests {
    /// `.cargo/config.toml` tells the bundled SQLite that `fdatasync` works
    /// (docs/state.md, "Durability and the disk"); without it every
    /// `synchronous=FULL` commit pays for a full `fsync`. The flag reaches
    /// this crate's compilation through the same `[env]` table that reaches
    /// libsqlite3-sys's build script.
    #[test]
    fn sqlite_is_built_to_sync_with_fdatasync() {
        let flags = option_env!("LIBSQLITE3_FLAGS").unwrap_or_default();
        assert!(
            flags.split_whitespace().any(|f| f == "-DHAVE_FDATASYNC=1"),
            "LIBSQLITE3_FLAGS = {flags:?}"
        );
    }

    /// The SQLite actually linked was built with allocation counting off
    /// (`.cargo/config.toml`): read back from the library itself, not from
    /// the flag string.
    #[test]
    fn sqlite_does_not_count_allocations() {
        let conn = rusqlite::Connection::open_in_memory().unwrap();
        let options: Vec<String> = conn
            .prepare("PRAGMA compile_options")
            .unwrap()
            .query_map([], |row| row.get(0))
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap();
        assert!(
            options.iter().any(|o| o == "DEFAULT_MEMSTATUS=0"),
            "compile options: {options:?}"
        );
    }
}
