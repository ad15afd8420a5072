//! The audit database, `<state_dir>/audit.sqlite` (design §2, §8): daily
//! aggregate rows, 16-day block sums of the same rows, the ids ingest has
//! already counted, and vouch's own asks awaiting their after-event.
//!
//! It is a separate file from the state database on purpose: whatever
//! happens to it (corruption, a lock held by another process, a full disk)
//! the caller turns into "auditing off" and no decision changes. A corrupt
//! file is reported and left exactly as it is — never repaired, deleted or
//! rebuilt — since it may be the evidence someone needs.
//!
//! Writes come in batches, one `BEGIN IMMEDIATE` transaction each, with
//! identical rows coalesced first; retention is applied in the same
//! transaction, at most once per day per cutoff.
//!
//! Every statement goes through the store's [`Transaction`] seam, so the
//! same bodies serve the second backend: with `[store] backend =
//! "postgres"` the audit's tables live in the state's PostgreSQL database
//! ([`Location::Postgres`], `migrations/postgres/audit/`, translations of
//! `migrations/audit/` that `tests/it/store_schema.rs` checks), shared by
//! every replica of the service. There each write batch is one transaction
//! that first takes the audit's advisory lock ([`Lock::Audit`]), so batches
//! of all replicas apply one at a time and their counts add up; a report
//! reads one snapshot per query. Interned subjects and hashes are never
//! deleted (retention prunes only counts, ids and pending asks), so an id a
//! process cached stays valid whatever another replica writes; a batch
//! that hands a new id to the caches commits synchronously, so a server
//! crash cannot take back a row a cache still names, and a batch that finds
//! the audit recreated (another `collecting_since`) starts with empty
//! caches. `hmac.key` stays a file in each replica's state directory — never
//! in the database — and replicas hold copies of one key ([`Db::check_key`]
//! refuses a replica with another one). A failure on
//! PostgreSQL (server down, lock wait past `store.timeout_ms`) turns
//! auditing off as a local failure does.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use rusqlite::config::DbConfig;
use rusqlite::{Connection, ErrorCode, OpenFlags, TransactionBehavior};
use rusqlite_migration::{M, Migrations};

use super::AuditError;
use super::keys::{Domain, Keys};
use super::record::{CURRENT_GENERATION, Row, day_of};
use super::subject::{Kind, Subject};
use crate::config::{StoreBackend, StoreConfig};
use crate::store::postgres::{self, Lock, PgDb};
use crate::store::sql::{DbError, DbResult, Statement, params};
use crate::store::{Durability, InitLock, StoreError, Transaction, files};

/// File name of the audit database inside the state directory.
pub const DATABASE_FILE: &str = "audit.sqlite";
/// Held while a process opens and migrates the database.
pub const OPEN_LOCK_FILE: &str = "audit.sqlite.lock";
/// Days summed in one row of `blocks`.
pub const BLOCK_DAYS: i64 = 16;

/// Schema migrations, in order; `to_latest` runs the pending ones in one
/// transaction.
pub const MIGRATIONS: &[&str] = &[
    include_str!("../../migrations/audit/V1__daily_aggregates.sql"),
    include_str!("../../migrations/audit/V2__recommendation_evidence.sql"),
    include_str!("../../migrations/audit/V3__pending_allows.sql"),
];

/// The same schema for PostgreSQL, step for step.
pub(crate) const PG_MIGRATIONS: postgres::Migrations = postgres::Migrations {
    component: "audit",
    steps: &[
        include_str!("../../migrations/postgres/audit/V1__daily_aggregates.sql"),
        include_str!("../../migrations/postgres/audit/V2__recommendation_evidence.sql"),
        include_str!("../../migrations/postgres/audit/V3__pending_allows.sql"),
    ],
};

/// Ids cached per connection before the caches are cleared.
const CACHE_LIMIT: usize = 100_000;

/// Pages the write-ahead log grows to before SQLite copies it back into the
/// database (its default is 1,000): fewer, larger checkpoints, and so fewer
/// fsyncs, for a log of at most 16 MiB.
const WAL_AUTOCHECKPOINT_PAGES: i64 = 4000;

/// SQLite page cache per connection, in KiB (SQLite's default is 2 MiB):
/// idempotency ids are random keys, so a batch touches pages all over the
/// `seen` tree, and a cache that holds them avoids rereading and spilling.
const PAGE_CACHE_KIB: i64 = 16 * 1024;

/// A decision that awaits the harness's after-the-fact report.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Await {
    /// HMAC of session and request hash.
    pub key: String,
    pub decision: AwaitKind,
    pub expires_at_ms: u64,
}

/// Which of vouch's decisions is awaiting.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AwaitKind {
    Defer,
    Deny,
    /// Only for harnesses whose after-event carries the arguments that ran
    /// ([`crate::catalogue::Entry::after_event_has_ran_arguments`]).
    Allow,
}

impl AwaitKind {
    fn as_str(self) -> &'static str {
        match self {
            AwaitKind::Defer => "defer",
            AwaitKind::Deny => "deny",
            AwaitKind::Allow => "allow",
        }
    }
}

/// One thing to write.
#[derive(Debug, Clone)]
pub enum Op {
    /// Count `row`; skip it when `once` (an event id HMAC) was seen before.
    Count {
        row: Row,
        retention_days: u32,
        once: Option<String>,
        awaits: Option<Await>,
    },
    /// A harness reported that a call ran: if vouch had deferred it, count
    /// `row` as a human approval; if vouch had denied it, as a call that ran
    /// after a denial; otherwise nothing (vouch's own row already counts it).
    Ran {
        key: String,
        row: Row,
        retention_days: u32,
        once: Option<String>,
        /// A ran event matching no decision of its session is counted
        /// (`ran_unreviewed`) rather than dropped: its harness reports the
        /// arguments that ran, so no match means they are not the ones
        /// vouch decided on (or no vouch hook ran).
        unreviewed_counts: bool,
    },
}

/// What one write did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
pub struct WriteSummary {
    /// Observations added to the aggregates.
    pub counted: u64,
    /// Events whose id was counted before.
    pub duplicates: u64,
    /// Observations older than the retention window: not stored.
    pub expired: u64,
    /// After-events with no decision of vouch's awaiting them.
    pub unmatched: u64,
}

/// One row of a report window (blocks and edge days alike).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WindowRow {
    pub subject_id: i64,
    pub source: String,
    pub result: String,
    pub resolution: String,
    pub forwarded: bool,
    pub generation: i64,
    pub count: i64,
}

/// Window rows summed in memory while they are read: the text columns
/// repeat a handful of values, so they are interned rather than allocated
/// per row.
#[derive(Default)]
struct Groups {
    strings: Vec<String>,
    sums: HashMap<(i64, usize, usize, usize, bool, i64), i64>,
}

impl Groups {
    fn intern(&mut self, text: &str) -> usize {
        if let Some(i) = self.strings.iter().position(|s| s == text) {
            return i;
        }
        self.strings.push(text.to_owned());
        self.strings.len() - 1
    }

    fn add(&mut self, row: &crate::store::Row<'_>) -> DbResult<()> {
        let source = self.intern(row.text(1)?);
        let result = self.intern(row.text(2)?);
        let resolution = self.intern(row.text(3)?);
        let key = (
            row.get::<i64>(0)?,
            source,
            result,
            resolution,
            row.get::<i64>(4)? != 0,
            row.get::<i64>(5)?,
        );
        *self.sums.entry(key).or_insert(0) += row.get::<i64>(6)?;
        Ok(())
    }

    fn into_rows(self) -> Vec<WindowRow> {
        let text = |i: usize| self.strings.get(i).cloned().unwrap_or_default();
        self.sums
            .iter()
            .map(
                |(&(subject_id, source, result, resolution, forwarded, generation), &count)| {
                    WindowRow {
                        subject_id,
                        source: text(source),
                        result: text(result),
                        resolution: text(resolution),
                        forwarded,
                        generation,
                        count,
                    }
                },
            )
            .collect()
    }
}

/// A subject as stored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredSubject {
    pub surface: String,
    pub kind: Option<Kind>,
    pub text: String,
}

/// The collection dates.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Meta {
    pub collecting_since_ms: Option<i64>,
    pub recommendations_since_ms: Option<i64>,
}

/// Where the audit is kept: the backend `[store]` configures.
#[derive(Clone, Default)]
pub enum Location {
    /// `<state_dir>/audit.sqlite`.
    #[default]
    Sqlite,
    /// Tables in the state's PostgreSQL database. `url` was read from the
    /// environment variable `store.url_env` names (`None`: unset, and the
    /// audit fails to open, which turns auditing off); never shown.
    Postgres {
        url: Option<String>,
        store: StoreConfig,
    },
}

impl Location {
    /// The location `[store]` names, its URL read through `env`.
    pub fn from_config(store: &StoreConfig, env: &dyn Fn(&str) -> Option<String>) -> Location {
        match store.backend {
            StoreBackend::Sqlite => Location::Sqlite,
            StoreBackend::Postgres => Location::Postgres {
                url: crate::store::postgres::url_in_env(store, env),
                store: store.clone(),
            },
        }
    }
}

impl std::fmt::Debug for Location {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // The URL may carry a password: never printed.
        match self {
            Location::Sqlite => f.write_str("Sqlite"),
            Location::Postgres { store, .. } => f
                .debug_struct("Postgres")
                .field("url_env", &store.url_env)
                .finish_non_exhaustive(),
        }
    }
}

/// The connection of an open audit database.
enum Backend {
    Sqlite { conn: Connection, path: PathBuf },
    Postgres(PgDb),
}

/// An open audit database.
pub struct Db {
    backend: Backend,
    /// The file's path, or `postgresql://host:port/db`: for messages.
    display: String,
    subjects: HashMap<(String, Kind, String), i64>,
    hashes: HashMap<String, i64>,
    /// PostgreSQL: the `collecting_since` the caches were filled under (a
    /// different one means the audit was recreated, and its ids with it).
    epoch: Option<i64>,
}

impl std::fmt::Debug for Db {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Db")
            .field("at", &self.display)
            .finish_non_exhaustive()
    }
}

fn is_corruption(e: &rusqlite::Error) -> bool {
    matches!(
        e.sqlite_error_code(),
        Some(ErrorCode::DatabaseCorrupt | ErrorCode::NotADatabase)
    )
}

fn is_busy(e: &rusqlite::Error) -> bool {
    matches!(
        e.sqlite_error_code(),
        Some(ErrorCode::DatabaseBusy | ErrorCode::DatabaseLocked)
    )
}

impl Db {
    /// Opens the audit at `location`: [`Db::open`] for SQLite,
    /// [`Db::open_postgres`] for PostgreSQL.
    pub fn open_at(
        location: &Location,
        state_dir: &Path,
        lock_timeout: Duration,
    ) -> Result<Db, AuditError> {
        match location {
            Location::Sqlite => Db::open(state_dir, lock_timeout),
            Location::Postgres { url, store } => Db::open_postgres(url.as_deref(), store),
        }
    }

    /// [`Db::open_existing`] at `location`. On PostgreSQL the tables are
    /// created when missing (the database is the state's, which exists).
    pub fn open_existing_at(
        location: &Location,
        state_dir: &Path,
        lock_timeout: Duration,
    ) -> Result<Option<Db>, AuditError> {
        match location {
            Location::Sqlite => Db::open_existing(state_dir, lock_timeout),
            Location::Postgres { url, store } => Db::open_postgres(url.as_deref(), store).map(Some),
        }
    }

    /// On PostgreSQL, checks that `keys` is the key the other replicas
    /// write with: keyed hashes (project scopes, event ids, pending asks)
    /// add up across replicas only under one key. The first writer records
    /// a check value (60 bits of an HMAC of a constant: says nothing about
    /// the key); a replica holding another key — one that minted its own —
    /// is refused, which turns its auditing off. Nothing to check on SQLite,
    /// whose key sits next to its file.
    pub fn check_key(&self, keys: &Keys, state_dir: &Path) -> Result<(), AuditError> {
        let Backend::Postgres(pg) = &self.backend else {
            return Ok(());
        };
        let digest = keys.digest(Domain::KeyCheck, "");
        let mine = digest
            .get(..15)
            .and_then(|h| i64::from_str_radix(h, 16).ok())
            .ok_or_else(|| AuditError::Database {
                at: self.display.clone(),
                detail: "the key check value did not derive".to_owned(),
            })?;
        let read = |tx: &Transaction<'_>| {
            tx.query_opt(
                "SELECT value FROM meta WHERE key = 'key_check'",
                params![],
                |r| r.get::<i64>(0),
            )
        };
        // Read first: once recorded (nearly always), a process opening the
        // audit writes nothing and waits for no lock.
        let recorded = match pg.read(read).map_err(|e| AuditError::from_store(&e))? {
            Some(recorded) => recorded,
            None => pg
                .write(Lock::Audit, Durability::Full, |tx| {
                    tx.execute(
                        "INSERT INTO meta (key, value) VALUES ('key_check', ?1) \
                         ON CONFLICT (key) DO NOTHING",
                        params![mine],
                    )?;
                    read(tx)?.ok_or(DbError::NoRow)
                })
                .map_err(|e| AuditError::from_store(&e))?,
        };
        if recorded == mine {
            Ok(())
        } else {
            Err(AuditError::Key {
                path: state_dir.join(super::keys::KEY_FILE).display().to_string(),
                problem: format!(
                    "is not the key the other replicas writing to `{}` use; copy one \
                     replica's `{}` to every replica",
                    self.display,
                    super::keys::KEY_FILE
                ),
            })
        }
    }

    /// Connects to the PostgreSQL database at `url` and applies the audit's
    /// pending migrations ([`PG_MIGRATIONS`], under the migration lock).
    pub fn open_postgres(url: Option<&str>, store: &StoreConfig) -> Result<Db, AuditError> {
        let url = url.ok_or_else(|| AuditError::Database {
            at: "postgresql".to_owned(),
            detail: crate::store::postgres::missing_url(store),
        })?;
        let pg = PgDb::connect(url, store).map_err(|e| AuditError::from_store(&e))?;
        pg.migrate(&PG_MIGRATIONS)
            .map_err(|e| AuditError::from_store(&e))?;
        Ok(Db {
            display: pg.describe().to_owned(),
            backend: Backend::Postgres(pg),
            subjects: HashMap::new(),
            hashes: HashMap::new(),
            epoch: None,
        })
    }

    /// Opens `<state_dir>/audit.sqlite`, creating it (mode `0600`) and
    /// migrating it to the latest schema. Waits at most `lock_timeout` for
    /// another process's lock.
    pub fn open(state_dir: &Path, lock_timeout: Duration) -> Result<Db, AuditError> {
        files::ensure_private_dir(state_dir)?;
        let path = state_dir.join(DATABASE_FILE);
        // Created 0600 before SQLite sees it: `-wal` and `-shm` take its mode.
        files::ensure_private_file(&path)?;
        Db::open_file(state_dir, path, lock_timeout)
    }

    /// Opens the database only when it exists (a report must not create
    /// one); `Ok(None)` otherwise.
    pub fn open_existing(
        state_dir: &Path,
        lock_timeout: Duration,
    ) -> Result<Option<Db>, AuditError> {
        let path = state_dir.join(DATABASE_FILE);
        match std::fs::symlink_metadata(&path) {
            Ok(_) => {
                files::ensure_private_file(&path)?;
                Db::open_file(state_dir, path, lock_timeout).map(Some)
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(files::io_err(&path, "inspect", e).into()),
        }
    }

    fn open_file(
        state_dir: &Path,
        path: PathBuf,
        lock_timeout: Duration,
    ) -> Result<Db, AuditError> {
        let _init = InitLock::acquire_within(&state_dir.join(OPEN_LOCK_FILE), lock_timeout)?;
        // No SQLITE_OPEN_CREATE: the file exists, made private above.
        let flags = OpenFlags::SQLITE_OPEN_READ_WRITE
            | OpenFlags::SQLITE_OPEN_NO_MUTEX
            | OpenFlags::SQLITE_OPEN_NOFOLLOW;
        let display = path.display().to_string();
        let sql = |e: rusqlite::Error| AuditError::from_sqlite(&display, e, lock_timeout);
        let mut conn = Connection::open_with_flags(&path, flags).map_err(sql)?;
        conn.busy_timeout(lock_timeout).map_err(sql)?;
        conn.set_prepared_statement_cache_capacity(32);
        // Read before anything is written: a file that is not a database
        // fails here (SQLITE_NOTADB), untouched. No full `quick_check`: it
        // reads every page, which a hook process cannot afford on a
        // half-year audit; damage deeper in the file surfaces as
        // SQLITE_CORRUPT on the read or write that meets it, and that write
        // is rolled back.
        let _tables: i64 = conn
            .query_row("SELECT count(*) FROM sqlite_master", [], |row| row.get(0))
            .map_err(sql)?;
        let mode: String = conn
            .pragma_update_and_check(None, "journal_mode", "WAL", |row| row.get(0))
            .map_err(sql)?;
        if !mode.eq_ignore_ascii_case("wal") {
            return Err(AuditError::Migration {
                path: display,
                detail: format!("journal mode stayed `{mode}`"),
            });
        }
        // The audit is statistics, not a security record: NORMAL in WAL
        // survives a killed process and loses at most the last commits on
        // power loss (docs/audit.md), and commits without an fsync.
        conn.pragma_update(None, "synchronous", "NORMAL")
            .map_err(sql)?;
        // Most connections live in a short `vouch hook` process: closing
        // the last one must not checkpoint (and fsync) the log on the way
        // out; `wal_autocheckpoint` still copies it back at a commit.
        conn.set_db_config(DbConfig::SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, true)
            .map_err(sql)?;
        conn.pragma_update(None, "cache_size", -PAGE_CACHE_KIB)
            .map_err(sql)?;
        conn.pragma_update(None, "wal_autocheckpoint", WAL_AUTOCHECKPOINT_PAGES)
            .map_err(sql)?;
        conn.pragma_update(None, "trusted_schema", "OFF")
            .map_err(sql)?;
        migrate(&mut conn, &display, lock_timeout)?;
        files::verify_database_modes(&path)?;
        Ok(Db {
            backend: Backend::Sqlite { conn, path },
            display,
            subjects: HashMap::new(),
            hashes: HashMap::new(),
            epoch: None,
        })
    }

    /// The SQLite file's path (`None` on PostgreSQL).
    pub fn path(&self) -> Option<&Path> {
        match &self.backend {
            Backend::Sqlite { path, .. } => Some(path),
            Backend::Postgres(_) => None,
        }
    }

    /// Where the audit is, for messages: the file's path, or
    /// `postgresql://host:port/db` (never a user name or password).
    pub fn describe(&self) -> &str {
        &self.display
    }

    /// Folds a long log back into the database and truncates it, for a
    /// process that opens the database once and exits
    /// ([`crate::store::truncate_long_log`]). Nothing to do on PostgreSQL.
    pub(crate) fn truncate_long_log(&self, lock_timeout: Duration) {
        match &self.backend {
            Backend::Sqlite { conn, path } => {
                crate::store::truncate_long_log(conn, path, lock_timeout);
            }
            Backend::Postgres(_) => {}
        }
    }

    /// Runs `f` on one read: on SQLite each statement is its own implicit
    /// transaction, as ever; on PostgreSQL `f` runs in one snapshot.
    fn read<T>(&self, f: impl FnOnce(&Transaction<'_>) -> DbResult<T>) -> Result<T, AuditError> {
        match &self.backend {
            Backend::Sqlite { conn, .. } => {
                f(&Transaction::sqlite(conn)).map_err(|e| AuditError::from_db(&self.display, e))
            }
            Backend::Postgres(pg) => pg.read(f).map_err(|e| AuditError::from_store(&e)),
        }
    }

    /// Writes one batch in one transaction. `global_retention_days` is the
    /// trusted retention; each op may carry a shorter one for its project.
    pub fn write(
        &mut self,
        ops: Vec<Op>,
        now_ms: u64,
        global_retention_days: u32,
    ) -> Result<WriteSummary, AuditError> {
        let Db {
            backend,
            display,
            subjects,
            hashes,
            epoch,
        } = self;
        let mut new_subjects = Vec::new();
        let mut new_hashes = Vec::new();
        let mut fresh = Fresh {
            subjects: &mut new_subjects,
            hashes: &mut new_hashes,
        };
        let caches = Caches {
            subjects: &*subjects,
            hashes: &*hashes,
        };
        let result = match backend {
            Backend::Sqlite { conn, .. } => (|| {
                let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
                let summary = write_batch(
                    &Transaction::sqlite(&tx),
                    &caches,
                    &mut fresh,
                    ops,
                    now_ms,
                    global_retention_days,
                )?;
                tx.commit()?;
                Ok((summary, None))
            })()
            .map_err(|e| AuditError::from_db(display, e)),
            Backend::Postgres(pg) => write_postgres(
                pg,
                &caches,
                *epoch,
                &mut fresh,
                ops,
                now_ms,
                global_retention_days,
            )
            .map(|(summary, now_epoch)| (summary, Some(now_epoch)))
            .map_err(|e| AuditError::from_store(&e)),
        };
        let (summary, seen_epoch) = result?;
        if let Some(now_epoch) = seen_epoch
            && now_epoch != *epoch
        {
            subjects.clear();
            hashes.clear();
            *epoch = now_epoch;
        }
        // Only committed ids enter the caches.
        if subjects.len() + new_subjects.len() > CACHE_LIMIT {
            subjects.clear();
        }
        if hashes.len() + new_hashes.len() > CACHE_LIMIT {
            hashes.clear();
        }
        subjects.extend(new_subjects);
        hashes.extend(new_hashes);
        Ok(summary)
    }

    /// The collection dates.
    pub fn meta(&self) -> Result<Meta, AuditError> {
        self.read(|tx| {
            let get = |key: &str| -> DbResult<Option<i64>> {
                tx.query_opt(
                    "SELECT value FROM meta WHERE key = ?1",
                    params![key],
                    |row| row.get(0),
                )
            };
            Ok(Meta {
                collecting_since_ms: get("collecting_since")?,
                recommendations_since_ms: get("recommendations_since")?,
            })
        })
    }

    /// The id of a keyed hash, if it was ever stored.
    pub fn hash_id(&self, value: &str) -> Result<Option<i64>, AuditError> {
        self.read(|tx| {
            tx.query_opt(
                "SELECT id FROM hashes WHERE value = ?1",
                params![value],
                |row| row.get(0),
            )
        })
    }

    /// Every count between `from_day` and `to_day` (inclusive), summed per
    /// (subject, source, result, resolution, forwarded, generation): from
    /// block sums where whole blocks fit, from days at the edges.
    pub fn window(
        &self,
        from_day: i64,
        to_day: i64,
        scope_id: Option<i64>,
    ) -> Result<Vec<WindowRow>, AuditError> {
        let mut groups = Groups::default();
        let first_block = (from_day + BLOCK_DAYS - 1).div_euclid(BLOCK_DAYS);
        let last_block = (to_day + 1).div_euclid(BLOCK_DAYS) - 1;
        self.read(|tx| {
            let mut range = |table: &str, column: &str, from: i64, to: i64| {
                read_range(tx, table, column, from, to, scope_id, &mut groups)
            };
            if first_block <= last_block {
                range("blocks", "block", first_block, last_block)?;
                range("daily", "day", from_day, first_block * BLOCK_DAYS - 1)?;
                range("daily", "day", (last_block + 1) * BLOCK_DAYS, to_day)?;
            } else {
                range("daily", "day", from_day, to_day)?;
            }
            Ok(())
        })?;
        Ok(groups.into_rows())
    }

    /// The subjects with these ids.
    pub fn subjects(
        &self,
        ids: impl IntoIterator<Item = i64>,
    ) -> Result<HashMap<i64, StoredSubject>, AuditError> {
        self.read(|tx| {
            let mut statement =
                tx.prepare("SELECT surface, kind, subject FROM subjects WHERE id = ?1")?;
            let mut out = HashMap::new();
            for id in ids {
                let found = statement.query_opt(params![id], |row| {
                    Ok(StoredSubject {
                        surface: row.get(0)?,
                        kind: Kind::parse(row.text(1)?),
                        text: row.get(2)?,
                    })
                })?;
                if let Some(subject) = found {
                    out.insert(id, subject);
                }
            }
            Ok(out)
        })
    }

    /// `PRAGMA integrity_check`; `["ok"]` when healthy. On PostgreSQL,
    /// whether the database answers (the server checks its own pages).
    pub fn integrity_check(&self) -> Result<Vec<String>, AuditError> {
        match &self.backend {
            Backend::Sqlite { .. } => self.read(|tx| {
                tx.query_all("PRAGMA integrity_check", params![], |row| {
                    row.get::<String>(0)
                })
            }),
            Backend::Postgres(pg) => pg
                .ping()
                .map(|()| vec!["ok".to_owned()])
                .map_err(|e| AuditError::from_store(&e)),
        }
    }
}

/// Adds the rows of `table` whose `column` lies in `from..=to` (one scope,
/// or all) to `groups`.
fn read_range(
    tx: &Transaction<'_>,
    table: &str,
    column: &str,
    from: i64,
    to: i64,
    scope_id: Option<i64>,
    groups: &mut Groups,
) -> DbResult<()> {
    if from > to {
        return Ok(());
    }
    let sql = format!(
        "SELECT subject_id, source, result, resolution, forwarded, generation, count \
         FROM {table} WHERE {column} BETWEEN ?1 AND ?2 {}",
        scope_clause(scope_id, 3)
    );
    tx.query_all(&sql, params![from, to, scope_id], |row| groups.add(row))?;
    Ok(())
}

/// `AND scope_id = ?n` for one scope; for all scopes a clause that is true
/// and still binds `?n` (typed, for PostgreSQL).
fn scope_clause(scope_id: Option<i64>, n: usize) -> String {
    if scope_id.is_some() {
        format!("AND scope_id = ?{n}")
    } else {
        format!("AND CAST(?{n} AS BIGINT) IS NULL")
    }
}

impl AuditError {
    /// A statement's error on the database at `at`.
    fn from_db(at: &str, e: DbError) -> AuditError {
        match e {
            DbError::Sqlite(e) => AuditError::from_sqlite(at, e, Duration::ZERO),
            other => AuditError::Database {
                at: at.to_owned(),
                detail: other.to_string(),
            },
        }
    }

    /// A PostgreSQL failure, as the store reports it.
    fn from_store(e: &StoreError) -> AuditError {
        match e {
            StoreError::Migration { path, detail } => AuditError::Migration {
                path: path.clone(),
                detail: detail.clone(),
            },
            StoreError::Unavailable { at, detail } => AuditError::Unavailable {
                at: at.clone(),
                detail: detail.clone(),
            },
            other => AuditError::Database {
                at: "postgresql".to_owned(),
                detail: other.to_string(),
            },
        }
    }

    fn from_sqlite(path: &str, e: rusqlite::Error, waited: Duration) -> AuditError {
        if is_corruption(&e) {
            AuditError::Corrupt {
                path: path.to_owned(),
                detail: e.to_string(),
            }
        } else if is_busy(&e) {
            AuditError::Locked {
                path: path.to_owned(),
                waited_ms: u64::try_from(waited.as_millis()).unwrap_or(u64::MAX),
            }
        } else {
            AuditError::Sqlite {
                path: path.to_owned(),
                source: e,
            }
        }
    }
}

fn migrate(conn: &mut Connection, display: &str, lock_timeout: Duration) -> Result<(), AuditError> {
    let migrations = Migrations::new(MIGRATIONS.iter().map(|sql| M::up(sql)).collect());
    conn.set_transaction_behavior(TransactionBehavior::Immediate);
    migrations.to_latest(conn).map_err(|e| match e {
        rusqlite_migration::Error::RusqliteError { err, .. } => {
            AuditError::from_sqlite(display, err, lock_timeout)
        }
        other => AuditError::Migration {
            path: display.to_owned(),
            detail: other.to_string(),
        },
    })
}

/// One batch on PostgreSQL, under the audit's advisory lock: the caches
/// serve only when the audit is the one they were filled from (its
/// `collecting_since` is returned, to compare next time).
fn write_postgres(
    pg: &PgDb,
    caches: &Caches<'_>,
    epoch: Option<i64>,
    fresh: &mut Fresh<'_>,
    ops: Vec<Op>,
    now_ms: u64,
    global_retention_days: u32,
) -> Result<(WriteSummary, Option<i64>), StoreError> {
    pg.write(Lock::Audit, Durability::Normal, |tx| {
        let now_epoch = tx.query_opt(
            "SELECT value FROM meta WHERE key = 'collecting_since'",
            params![],
            |r| r.get::<i64>(0),
        )?;
        let none = (HashMap::new(), HashMap::new());
        // Ids cached under another audit name other rows now.
        let caches = if now_epoch == epoch {
            Caches {
                subjects: caches.subjects,
                hashes: caches.hashes,
            }
        } else {
            Caches {
                subjects: &none.0,
                hashes: &none.1,
            }
        };
        let summary = write_batch(tx, &caches, fresh, ops, now_ms, global_retention_days)?;
        if !fresh.subjects.is_empty() || !fresh.hashes.is_empty() {
            // The caches will name these rows: the commit waits for the log
            // flush, which also makes durable the commit (another
            // replica's, maybe) that made them.
            tx.query_one(
                "SELECT set_config('synchronous_commit', 'on', true)",
                params![],
                |r| r.get::<String>(0),
            )?;
        }
        Ok((summary, now_epoch))
    })
}

/// Ids already known to this connection.
struct Caches<'a> {
    subjects: &'a HashMap<(String, Kind, String), i64>,
    hashes: &'a HashMap<String, i64>,
}

/// Ids resolved inside the current transaction.
struct Fresh<'a> {
    subjects: &'a mut Vec<((String, Kind, String), i64)>,
    hashes: &'a mut Vec<(String, i64)>,
}

impl Fresh<'_> {
    fn subject(&self, key: &(String, Kind, String)) -> Option<i64> {
        self.subjects
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, id)| *id)
    }

    fn hash(&self, value: &str) -> Option<i64> {
        self.hashes
            .iter()
            .find(|(k, _)| k == value)
            .map(|(_, id)| *id)
    }
}

/// The aggregate key of a row, ids not yet resolved.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
struct Key {
    day: i64,
    scope: Option<String>,
    surface: String,
    subject: Subject,
    source: String,
    result: &'static str,
    resolution: &'static str,
    origin: Option<String>,
    pattern: Option<String>,
    forwarded: bool,
}

impl Key {
    fn of(row: Row) -> Key {
        Key {
            day: row.day,
            scope: row.scope,
            surface: row.surface,
            subject: row.subject,
            source: row.source,
            result: row.result.as_str(),
            resolution: row.resolution,
            origin: row.origin,
            pattern: row.pattern,
            forwarded: row.forwarded,
        }
    }
}

/// The first day a retention of `days` keeps, as of `today`.
fn cutoff(today: i64, days: u32) -> i64 {
    today - i64::from(days.max(1)) + 1
}

fn write_batch(
    tx: &Transaction<'_>,
    caches: &Caches<'_>,
    fresh: &mut Fresh<'_>,
    ops: Vec<Op>,
    now_ms: u64,
    global_retention_days: u32,
) -> DbResult<WriteSummary> {
    let today = day_of(now_ms);
    let global_cutoff = cutoff(today, global_retention_days);
    prune(tx, None, global_cutoff)?;
    let mut summary = WriteSummary::default();
    let mut counts: HashMap<Key, i64> = HashMap::new();
    let mut shorter: HashMap<String, i64> = HashMap::new();
    // Prepared once for the batch: the per-row statements are the hot path
    // of ingest, and a cache lookup per row costs a hash of the SQL text.
    let mut seen = tx.prepare(INSERT_SEEN)?;
    let mut awaiting = Awaiting::default();
    for op in ops {
        let Some((row, row_cutoff)) = apply(
            tx,
            &mut seen,
            &mut awaiting,
            op,
            now_ms,
            today,
            global_retention_days,
            &mut summary,
        )?
        else {
            continue;
        };
        if row_cutoff > global_cutoff
            && let Some(scope) = &row.scope
        {
            let entry = shorter.entry(scope.clone()).or_insert(row_cutoff);
            *entry = (*entry).max(row_cutoff);
        }
        summary.counted += 1;
        *counts.entry(Key::of(row)).or_insert(0) += 1;
    }
    let mut upserts = [tx.prepare(UPSERT_DAILY)?, tx.prepare(UPSERT_BLOCK)?];
    for (key, count) in counts {
        upsert(tx, &mut upserts, caches, fresh, &key, count)?;
    }
    for (scope, scope_cutoff) in shorter {
        let id = hash_id(tx, caches, fresh, Some(&scope))?;
        prune(tx, Some(id), scope_cutoff)?;
    }
    awaiting.store_all(tx)?;
    tx.execute(
        "DELETE FROM pending WHERE expires_at_ms < ?1",
        params![crate::store::sql_ms(now_ms)],
    )?;
    Ok(summary)
}

/// Applies one op's bookkeeping (retention, idempotency, pending asks) and
/// returns the row to count with its retention cutoff, or `None` when it
/// is not counted (the summary says why).
#[expect(
    clippy::too_many_arguments,
    reason = "one op's bookkeeping against the batch's statements and buffers"
)]
fn apply(
    tx: &Transaction<'_>,
    seen: &mut Statement<'_, '_>,
    awaiting: &mut Awaiting,
    op: Op,
    now_ms: u64,
    today: i64,
    global_retention_days: u32,
    summary: &mut WriteSummary,
) -> DbResult<Option<(Row, i64)>> {
    let (mut row, retention, once, awaits, ran_key) = match op {
        Op::Count {
            row,
            retention_days,
            once,
            awaits,
        } => (row, retention_days, once, awaits, None),
        Op::Ran {
            key,
            row,
            retention_days,
            once,
            unreviewed_counts,
        } => (
            row,
            retention_days,
            once,
            None,
            Some((key, unreviewed_counts)),
        ),
    };
    let row_cutoff = cutoff(today, retention.min(global_retention_days));
    if row.day < row_cutoff {
        summary.expired += 1;
        return Ok(None);
    }
    if let Some(id) = &once {
        // Stored as raw bytes; an id that is not hex (never produced here)
        // is kept as its text bytes, still unique.
        let bytes = hex::decode(id).unwrap_or_else(|_| id.as_bytes().to_vec());
        let inserted = seen.execute(params![bytes, row.day])?;
        if inserted == 0 {
            summary.duplicates += 1;
            return Ok(None);
        }
    }
    if let Some((key, unreviewed_counts)) = ran_key {
        // A decision of this batch awaiting this very event is stored
        // first, as it would have been in op order.
        awaiting.store(tx, &key)?;
        let awaited: Option<String> = tx.query_opt(
            "DELETE FROM pending WHERE key = ?1 AND expires_at_ms >= ?2 RETURNING decision",
            params![key, crate::store::sql_ms(now_ms)],
            |r| r.get(0),
        )?;
        row.resolution = match (awaited.as_deref(), unreviewed_counts) {
            (Some("defer"), _) => "user_approved",
            (Some("deny"), _) => "ran_after_deny",
            // Ran as allowed: nothing new.
            (Some("allow"), _) => return Ok(None),
            (None, true) => "ran_unreviewed",
            (Some(_), _) | (None, false) => {
                summary.unmatched += 1;
                return Ok(None);
            }
        };
        row.result = super::record::ResultKind::Allow;
    }
    if let Some(awaits) = awaits {
        awaiting.later(awaits);
    }
    Ok(Some((row, row_cutoff)))
}

/// The batch's decisions awaiting an after event, one per key: a pending
/// row is replaced whole by a later decision of the same key (`INSERT … ON
/// CONFLICT DO UPDATE`), so of a batch's decisions only the last one per key is
/// written, once — at the end of the batch, or before an after event of
/// that key reads it, which keeps the result of op order exactly. A retried
/// request (the same session and request hash, as a hard deny retried by
/// an agent is) then costs one statement per batch, not one per retry.
#[derive(Default)]
struct Awaiting {
    by_key: HashMap<String, Await>,
}

impl Awaiting {
    fn later(&mut self, awaits: Await) {
        self.by_key.insert(awaits.key.clone(), awaits);
    }

    /// Writes the pending row of `key`, if one waits.
    fn store(&mut self, tx: &Transaction<'_>, key: &str) -> DbResult<()> {
        match self.by_key.remove(key) {
            Some(awaits) => insert_pending(tx, &awaits),
            None => Ok(()),
        }
    }

    fn store_all(self, tx: &Transaction<'_>) -> DbResult<()> {
        for awaits in self.by_key.values() {
            insert_pending(tx, awaits)?;
        }
        Ok(())
    }
}

fn insert_pending(tx: &Transaction<'_>, awaits: &Await) -> DbResult<()> {
    tx.execute(
        "INSERT INTO pending (key, decision, expires_at_ms) VALUES (?1, ?2, ?3) \
         ON CONFLICT (key) DO UPDATE SET decision = excluded.decision, \
         expires_at_ms = excluded.expires_at_ms",
        params![
            awaits.key,
            awaits.decision.as_str(),
            crate::store::sql_ms(awaits.expires_at_ms)
        ],
    )?;
    Ok(())
}

/// Remembers an ingested event id; no change when it was seen before.
const INSERT_SEEN: &str = "INSERT INTO seen (id, day) VALUES (?1, ?2) ON CONFLICT DO NOTHING";
/// Adds to a day's row (or a block's), creating it at the first count.
const UPSERT_DAILY: &str = "INSERT INTO daily (day, scope_id, subject_id, source, result, \
     resolution, origin_id, pattern_id, forwarded, generation, count) \
     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11) \
     ON CONFLICT (day, scope_id, subject_id, source, result, resolution, origin_id, pattern_id, \
     forwarded, generation) DO UPDATE SET count = daily.count + excluded.count";
const UPSERT_BLOCK: &str = "INSERT INTO blocks (block, scope_id, subject_id, source, result, \
     resolution, origin_id, pattern_id, forwarded, generation, count) \
     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11) \
     ON CONFLICT (block, scope_id, subject_id, source, result, resolution, origin_id, pattern_id, \
     forwarded, generation) DO UPDATE SET count = blocks.count + excluded.count";

/// Adds `count` to the key's day row and block row (`upserts`: prepared
/// [`UPSERT_DAILY`] and [`UPSERT_BLOCK`]).
fn upsert(
    tx: &Transaction<'_>,
    upserts: &mut [Statement<'_, '_>; 2],
    caches: &Caches<'_>,
    fresh: &mut Fresh<'_>,
    key: &Key,
    count: i64,
) -> DbResult<()> {
    let subject_id = subject_id(tx, caches, fresh, &key.surface, &key.subject)?;
    let scope_id = hash_id(tx, caches, fresh, key.scope.as_deref())?;
    let origin_id = hash_id(tx, caches, fresh, key.origin.as_deref())?;
    let pattern_id = hash_id(tx, caches, fresh, key.pattern.as_deref())?;
    let [daily, block] = upserts;
    for (statement, bucket) in [(daily, key.day), (block, key.day.div_euclid(BLOCK_DAYS))] {
        statement.execute(params![
            bucket,
            scope_id,
            subject_id,
            key.source,
            key.result,
            key.resolution,
            origin_id,
            pattern_id,
            key.forwarded,
            CURRENT_GENERATION,
            count
        ])?;
    }
    Ok(())
}

fn subject_id(
    tx: &Transaction<'_>,
    caches: &Caches<'_>,
    fresh: &mut Fresh<'_>,
    surface: &str,
    subject: &Subject,
) -> DbResult<i64> {
    let key = (surface.to_owned(), subject.kind, subject.text.clone());
    if let Some(id) = caches
        .subjects
        .get(&key)
        .copied()
        .or_else(|| fresh.subject(&key))
    {
        return Ok(id);
    }
    // Insert-or-get under the write lock (SQLite's, or the audit's
    // advisory lock on PostgreSQL): no other writer interns in between.
    let found: Option<i64> = tx.query_opt(
        "SELECT id FROM subjects WHERE surface = ?1 AND kind = ?2 AND subject = ?3",
        params![surface, subject.kind.as_str(), subject.text],
        |r| r.get(0),
    )?;
    let id = match found {
        Some(id) => id,
        None => tx.query_one(
            "INSERT INTO subjects (surface, kind, subject) VALUES (?1, ?2, ?3) RETURNING id",
            params![surface, subject.kind.as_str(), subject.text],
            |r| r.get(0),
        )?,
    };
    fresh.subjects.push((key, id));
    Ok(id)
}

fn hash_id(
    tx: &Transaction<'_>,
    caches: &Caches<'_>,
    fresh: &mut Fresh<'_>,
    value: Option<&str>,
) -> DbResult<i64> {
    let Some(value) = value.filter(|v| !v.is_empty()) else {
        return Ok(0);
    };
    if let Some(id) = caches
        .hashes
        .get(value)
        .copied()
        .or_else(|| fresh.hash(value))
    {
        return Ok(id);
    }
    let found: Option<i64> = tx.query_opt(
        "SELECT id FROM hashes WHERE value = ?1",
        params![value],
        |r| r.get(0),
    )?;
    let id = match found {
        Some(id) => id,
        None => tx.query_one(
            "INSERT INTO hashes (value) VALUES (?1) RETURNING id",
            params![value],
            |r| r.get(0),
        )?,
    };
    fresh.hashes.push((value.to_owned(), id));
    Ok(id)
}

/// Deletes what retention no longer keeps — all scopes (`None`) or one —
/// and rebuilds the block the cutoff falls in from the days that remain.
/// Runs at most once per cutoff: `pruned` remembers the last one. Never
/// deletes an interned subject or hash: writers cache their ids.
fn prune(tx: &Transaction<'_>, scope_id: Option<i64>, cutoff_day: i64) -> DbResult<()> {
    let marker = scope_id.unwrap_or(-1);
    let done: Option<i64> = tx.query_opt(
        "SELECT before_day FROM pruned WHERE scope_id = ?1",
        params![marker],
        |r| r.get(0),
    )?;
    if done.is_some_and(|d| d >= cutoff_day) {
        return Ok(());
    }
    let scope_clause = scope_clause(scope_id, 2);
    let block = cutoff_day.div_euclid(BLOCK_DAYS);
    tx.execute(
        &format!("DELETE FROM daily WHERE day < ?1 {scope_clause}"),
        params![cutoff_day, scope_id],
    )?;
    tx.execute(
        &format!("DELETE FROM blocks WHERE block <= ?1 {scope_clause}"),
        params![block, scope_id],
    )?;
    tx.execute(
        &format!(
            "INSERT INTO blocks (block, scope_id, subject_id, source, result, resolution, \
             origin_id, pattern_id, forwarded, generation, count) \
             SELECT CAST(?3 AS BIGINT), scope_id, subject_id, source, result, resolution, \
             origin_id, pattern_id, forwarded, generation, CAST(SUM(count) AS BIGINT) FROM daily \
             WHERE day BETWEEN ?1 AND ?4 {scope_clause} \
             GROUP BY scope_id, subject_id, source, result, resolution, origin_id, pattern_id, \
             forwarded, generation"
        ),
        params![cutoff_day, scope_id, block, (block + 1) * BLOCK_DAYS - 1],
    )?;
    if scope_id.is_none() {
        tx.execute("DELETE FROM seen WHERE day < ?1", params![cutoff_day])?;
    }
    tx.execute(
        "INSERT INTO pruned (scope_id, before_day) VALUES (?1, ?2) \
         ON CONFLICT (scope_id) DO UPDATE SET before_day = excluded.before_day",
        params![marker, cutoff_day],
    )?;
    Ok(())
}
