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

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use rusqlite::config::DbConfig;
use rusqlite::{
    Connection, ErrorCode, OpenFlags, OptionalExtension, Transaction, TransactionBehavior, params,
};
use rusqlite_migration::{M, Migrations};

use super::AuditError;
use super::record::{CURRENT_GENERATION, Row, day_of};
use super::subject::{Kind, Subject};
use crate::store::InitLock;
use crate::store::files;

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
    /// ([`crate::hooks::Harness::after_event_has_ran_arguments`]).
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

    fn add(&mut self, row: &rusqlite::Row<'_>) -> rusqlite::Result<()> {
        let text = |i: usize| -> rusqlite::Result<&str> {
            row.get_ref(i)?.as_str().map_err(|e| {
                rusqlite::Error::FromSqlConversionFailure(
                    i,
                    rusqlite::types::Type::Text,
                    Box::new(e),
                )
            })
        };
        let source = self.intern(text(1)?);
        let result = self.intern(text(2)?);
        let resolution = self.intern(text(3)?);
        let key = (
            row.get::<_, i64>(0)?,
            source,
            result,
            resolution,
            row.get::<_, i64>(4)? != 0,
            row.get::<_, i64>(5)?,
        );
        *self.sums.entry(key).or_insert(0) += row.get::<_, i64>(6)?;
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

/// An open audit database.
pub struct Db {
    conn: Connection,
    path: PathBuf,
    subjects: HashMap<(String, Kind, String), i64>,
    hashes: HashMap<String, i64>,
}

impl std::fmt::Debug for Db {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Db")
            .field("path", &self.path)
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
            conn,
            path,
            subjects: HashMap::new(),
            hashes: HashMap::new(),
        })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Folds a long log back into the database and truncates it, for a
    /// process that opens the database once and exits
    /// ([`crate::store::truncate_long_log`]).
    pub(crate) fn truncate_long_log(&self, lock_timeout: Duration) {
        crate::store::truncate_long_log(&self.conn, &self.path, lock_timeout);
    }

    fn err(&self, e: rusqlite::Error) -> AuditError {
        AuditError::from_sqlite(&self.path.display().to_string(), e, Duration::ZERO)
    }

    /// Writes one batch in one transaction. `global_retention_days` is the
    /// trusted retention; each op may carry a shorter one for its project.
    pub fn write(
        &mut self,
        ops: Vec<Op>,
        now_ms: u64,
        global_retention_days: u32,
    ) -> Result<WriteSummary, AuditError> {
        let path = self.path.display().to_string();
        let mut new_subjects = Vec::new();
        let mut new_hashes = Vec::new();
        let result = (|| {
            let tx = self
                .conn
                .transaction_with_behavior(TransactionBehavior::Immediate)?;
            let summary = write_batch(
                &tx,
                &Caches {
                    subjects: &self.subjects,
                    hashes: &self.hashes,
                },
                &mut Fresh {
                    subjects: &mut new_subjects,
                    hashes: &mut new_hashes,
                },
                ops,
                now_ms,
                global_retention_days,
            )?;
            tx.commit()?;
            Ok(summary)
        })();
        match result {
            Ok(summary) => {
                // Only committed ids enter the caches.
                if self.subjects.len() + new_subjects.len() > CACHE_LIMIT {
                    self.subjects.clear();
                }
                if self.hashes.len() + new_hashes.len() > CACHE_LIMIT {
                    self.hashes.clear();
                }
                self.subjects.extend(new_subjects);
                self.hashes.extend(new_hashes);
                Ok(summary)
            }
            Err(e) => Err(AuditError::from_sqlite(&path, e, Duration::ZERO)),
        }
    }

    /// The collection dates.
    pub fn meta(&self) -> Result<Meta, AuditError> {
        let get = |key: &str| -> rusqlite::Result<Option<i64>> {
            self.conn
                .query_row("SELECT value FROM meta WHERE key = ?1", [key], |row| {
                    row.get(0)
                })
                .optional()
        };
        Ok(Meta {
            collecting_since_ms: get("collecting_since").map_err(|e| self.err(e))?,
            recommendations_since_ms: get("recommendations_since").map_err(|e| self.err(e))?,
        })
    }

    /// The id of a keyed hash, if it was ever stored.
    pub fn hash_id(&self, value: &str) -> Result<Option<i64>, AuditError> {
        self.conn
            .query_row("SELECT id FROM hashes WHERE value = ?1", [value], |row| {
                row.get(0)
            })
            .optional()
            .map_err(|e| self.err(e))
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
        if first_block <= last_block {
            self.read_range(
                "blocks",
                "block",
                first_block,
                last_block,
                scope_id,
                &mut groups,
            )?;
            self.read_range(
                "daily",
                "day",
                from_day,
                first_block * BLOCK_DAYS - 1,
                scope_id,
                &mut groups,
            )?;
            self.read_range(
                "daily",
                "day",
                (last_block + 1) * BLOCK_DAYS,
                to_day,
                scope_id,
                &mut groups,
            )?;
        } else {
            self.read_range("daily", "day", from_day, to_day, scope_id, &mut groups)?;
        }
        Ok(groups.into_rows())
    }

    fn read_range(
        &self,
        table: &str,
        column: &str,
        from: i64,
        to: i64,
        scope_id: Option<i64>,
        groups: &mut Groups,
    ) -> Result<(), AuditError> {
        if from > to {
            return Ok(());
        }
        let scope_clause = if scope_id.is_some() {
            "AND scope_id = ?3"
        } else {
            "AND ?3 IS NULL"
        };
        let sql = format!(
            "SELECT subject_id, source, result, resolution, forwarded, generation, count \
             FROM {table} WHERE {column} BETWEEN ?1 AND ?2 {scope_clause}"
        );
        let mut stmt = self.conn.prepare_cached(&sql).map_err(|e| self.err(e))?;
        let mut rows = stmt
            .query(params![from, to, scope_id])
            .map_err(|e| self.err(e))?;
        while let Some(row) = rows.next().map_err(|e| self.err(e))? {
            groups.add(row).map_err(|e| self.err(e))?;
        }
        Ok(())
    }

    /// The subjects with these ids.
    pub fn subjects(
        &self,
        ids: impl IntoIterator<Item = i64>,
    ) -> Result<HashMap<i64, StoredSubject>, AuditError> {
        let mut stmt = self
            .conn
            .prepare_cached("SELECT surface, kind, subject FROM subjects WHERE id = ?1")
            .map_err(|e| self.err(e))?;
        let mut out = HashMap::new();
        for id in ids {
            let found = stmt
                .query_row([id], |row| {
                    Ok(StoredSubject {
                        surface: row.get(0)?,
                        kind: Kind::parse(&row.get::<_, String>(1)?),
                        text: row.get(2)?,
                    })
                })
                .optional()
                .map_err(|e| self.err(e))?;
            if let Some(subject) = found {
                out.insert(id, subject);
            }
        }
        Ok(out)
    }

    /// `PRAGMA integrity_check`; `["ok"]` when healthy.
    pub fn integrity_check(&self) -> Result<Vec<String>, AuditError> {
        let mut stmt = self
            .conn
            .prepare("PRAGMA integrity_check")
            .map_err(|e| self.err(e))?;
        let rows = stmt
            .query_map([], |row| row.get::<_, String>(0))
            .map_err(|e| self.err(e))?;
        rows.collect::<rusqlite::Result<Vec<_>>>()
            .map_err(|e| self.err(e))
    }
}

impl AuditError {
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
) -> rusqlite::Result<WriteSummary> {
    let today = day_of(now_ms);
    let global_cutoff = cutoff(today, global_retention_days);
    prune(tx, None, global_cutoff)?;
    let mut summary = WriteSummary::default();
    let mut counts: HashMap<Key, i64> = HashMap::new();
    let mut shorter: HashMap<String, i64> = HashMap::new();
    // Prepared once for the batch: the per-row statements are the hot path
    // of ingest, and a cache lookup per row costs a hash of the SQL text.
    let mut seen = tx.prepare_cached(INSERT_SEEN)?;
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
    let mut upserts = [
        tx.prepare_cached(UPSERT_DAILY)?,
        tx.prepare_cached(UPSERT_BLOCK)?,
    ];
    for (key, count) in counts {
        upsert(tx, &mut upserts, caches, fresh, &key, count)?;
    }
    for (scope, scope_cutoff) in shorter {
        let id = hash_id(tx, caches, fresh, Some(&scope))?;
        prune(tx, Some(id), scope_cutoff)?;
    }
    awaiting.store_all(tx)?;
    tx.prepare_cached("DELETE FROM pending WHERE expires_at_ms < ?1")?
        .execute([crate::store::sql_ms(now_ms)])?;
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
    seen: &mut rusqlite::CachedStatement<'_>,
    awaiting: &mut Awaiting,
    op: Op,
    now_ms: u64,
    today: i64,
    global_retention_days: u32,
    summary: &mut WriteSummary,
) -> rusqlite::Result<Option<(Row, i64)>> {
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
        let awaited: Option<String> = tx
            .prepare_cached(
                "DELETE FROM pending WHERE key = ?1 AND expires_at_ms >= ?2 RETURNING decision",
            )?
            .query_row(params![key, crate::store::sql_ms(now_ms)], |r| r.get(0))
            .optional()?;
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
/// row is replaced whole by a later decision of the same key (`INSERT OR
/// REPLACE`), so of a batch's decisions only the last one per key is
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
    fn store(&mut self, tx: &Transaction<'_>, key: &str) -> rusqlite::Result<()> {
        match self.by_key.remove(key) {
            Some(awaits) => insert_pending(tx, &awaits),
            None => Ok(()),
        }
    }

    fn store_all(self, tx: &Transaction<'_>) -> rusqlite::Result<()> {
        for awaits in self.by_key.values() {
            insert_pending(tx, awaits)?;
        }
        Ok(())
    }
}

fn insert_pending(tx: &Transaction<'_>, awaits: &Await) -> rusqlite::Result<()> {
    tx.prepare_cached(
        "INSERT OR REPLACE INTO pending (key, decision, expires_at_ms) VALUES (?1, ?2, ?3)",
    )?
    .execute(params![
        awaits.key,
        awaits.decision.as_str(),
        crate::store::sql_ms(awaits.expires_at_ms)
    ])?;
    Ok(())
}

/// Remembers an ingested event id; no change when it was seen before.
const INSERT_SEEN: &str = "INSERT OR IGNORE INTO seen (id, day) VALUES (?1, ?2)";
/// Adds to a day's row (or a block's), creating it at the first count.
const UPSERT_DAILY: &str = "INSERT INTO daily (day, scope_id, subject_id, source, result, \
     resolution, origin_id, pattern_id, forwarded, generation, count) \
     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11) \
     ON CONFLICT (day, scope_id, subject_id, source, result, resolution, origin_id, pattern_id, \
     forwarded, generation) DO UPDATE SET count = count + excluded.count";
const UPSERT_BLOCK: &str = "INSERT INTO blocks (block, scope_id, subject_id, source, result, \
     resolution, origin_id, pattern_id, forwarded, generation, count) \
     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11) \
     ON CONFLICT (block, scope_id, subject_id, source, result, resolution, origin_id, pattern_id, \
     forwarded, generation) DO UPDATE SET count = count + excluded.count";

/// Adds `count` to the key's day row and block row (`upserts`: prepared
/// [`UPSERT_DAILY`] and [`UPSERT_BLOCK`]).
fn upsert(
    tx: &Transaction<'_>,
    upserts: &mut [rusqlite::CachedStatement<'_>; 2],
    caches: &Caches<'_>,
    fresh: &mut Fresh<'_>,
    key: &Key,
    count: i64,
) -> rusqlite::Result<()> {
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
            i64::from(key.forwarded),
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
) -> rusqlite::Result<i64> {
    let key = (surface.to_owned(), subject.kind, subject.text.clone());
    if let Some(id) = caches
        .subjects
        .get(&key)
        .copied()
        .or_else(|| fresh.subject(&key))
    {
        return Ok(id);
    }
    let found: Option<i64> = tx
        .prepare_cached(
            "SELECT id FROM subjects WHERE surface = ?1 AND kind = ?2 AND subject = ?3",
        )?
        .query_row(params![surface, subject.kind.as_str(), subject.text], |r| {
            r.get(0)
        })
        .optional()?;
    let id = match found {
        Some(id) => id,
        None => tx
            .prepare_cached(
                "INSERT INTO subjects (surface, kind, subject) VALUES (?1, ?2, ?3) RETURNING id",
            )?
            .query_row(params![surface, subject.kind.as_str(), subject.text], |r| {
                r.get(0)
            })?,
    };
    fresh.subjects.push((key, id));
    Ok(id)
}

fn hash_id(
    tx: &Transaction<'_>,
    caches: &Caches<'_>,
    fresh: &mut Fresh<'_>,
    value: Option<&str>,
) -> rusqlite::Result<i64> {
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
    let found: Option<i64> = tx
        .prepare_cached("SELECT id FROM hashes WHERE value = ?1")?
        .query_row([value], |r| r.get(0))
        .optional()?;
    let id = match found {
        Some(id) => id,
        None => tx
            .prepare_cached("INSERT INTO hashes (value) VALUES (?1) RETURNING id")?
            .query_row([value], |r| r.get(0))?,
    };
    fresh.hashes.push((value.to_owned(), id));
    Ok(id)
}

/// Deletes what retention no longer keeps — all scopes (`None`) or one —
/// and rebuilds the block the cutoff falls in from the days that remain.
/// Runs at most once per cutoff: `pruned` remembers the last one.
fn prune(tx: &Transaction<'_>, scope_id: Option<i64>, cutoff_day: i64) -> rusqlite::Result<()> {
    let marker = scope_id.unwrap_or(-1);
    let done: Option<i64> = tx
        .prepare_cached("SELECT before_day FROM pruned WHERE scope_id = ?1")?
        .query_row([marker], |r| r.get(0))
        .optional()?;
    if done.is_some_and(|d| d >= cutoff_day) {
        return Ok(());
    }
    let scope_clause = if scope_id.is_some() {
        "AND scope_id = ?2"
    } else {
        "AND ?2 IS NULL"
    };
    let block = cutoff_day.div_euclid(BLOCK_DAYS);
    tx.prepare_cached(&format!("DELETE FROM daily WHERE day < ?1 {scope_clause}"))?
        .execute(params![cutoff_day, scope_id])?;
    tx.prepare_cached(&format!(
        "DELETE FROM blocks WHERE block <= ?1 {scope_clause}"
    ))?
    .execute(params![block, scope_id])?;
    tx.prepare_cached(&format!(
        "INSERT INTO blocks (block, scope_id, subject_id, source, result, resolution, origin_id, \
         pattern_id, forwarded, generation, count) \
         SELECT ?3, scope_id, subject_id, source, result, resolution, origin_id, pattern_id, \
         forwarded, generation, SUM(count) FROM daily \
         WHERE day BETWEEN ?1 AND ?4 {scope_clause} \
         GROUP BY scope_id, subject_id, source, result, resolution, origin_id, pattern_id, \
         forwarded, generation"
    ))?
    .execute(params![
        cutoff_day,
        scope_id,
        block,
        (block + 1) * BLOCK_DAYS - 1
    ])?;
    if scope_id.is_none() {
        tx.prepare_cached("DELETE FROM seen WHERE day < ?1")?
            .execute([cutoff_day])?;
    }
    tx.prepare_cached(
        "INSERT INTO pruned (scope_id, before_day) VALUES (?1, ?2) \
         ON CONFLICT (scope_id) DO UPDATE SET before_day = excluded.before_day",
    )?
    .execute(params![marker, cutoff_day])?;
    Ok(())
}
