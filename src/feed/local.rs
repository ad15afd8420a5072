//! The decisions of `vouch hook` processes on this machine, for the
//! console's Live view: hooks share the state directory with `vouch
//! serve`, so they hand their decisions to it through a small table there.
//!
//! How it stays out of a decision's way:
//!
//! - **A hook pays one `stat` while nobody watches.** The service keeps a
//!   marker file (`feed.watched`) fresh while a console's live stream is
//!   open; a hook process looks at its age once, on its first decision,
//!   and holds its decisions in memory only when it is fresh.
//! - **Held decisions are written after the reply** ([`append`], from
//!   `Engine::after_reply`), redacted exactly as the service's own feed
//!   items are ([`super::FeedItem`]), each free-text field then cut to
//!   [`MAX_TEXT_CHARS`]. A locked store costs the hook at most
//!   [`BUSY_TIMEOUT`] after its reply; a missing, broken or locked one
//!   loses the items, never changes a decision, and is logged at debug.
//! - **Bounded**: `feed.sqlite` (mode 0600, WAL) keeps at most
//!   [`MAX_ROWS`] items and none older than [`TTL_MS`], pruned on every
//!   write. It holds only redacted feed items, never a secret, and is not
//!   state any decision reads.
//! - The service reads rows newer than the last it saw every
//!   [`POLL_EVERY`] while someone watches ([`Reader`]), on the blocking
//!   pool, and sends them on the feed's broadcast channel.

use std::fs::{self, OpenOptions};
use std::io;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use rusqlite::{Connection, OpenFlags, TransactionBehavior, params};

use super::FeedItem;

/// The table's file in the state directory.
pub const FILE: &str = "feed.sqlite";
/// The file the service keeps fresh while a console watches.
pub const MARKER: &str = "feed.watched";
/// Rows kept.
pub const MAX_ROWS: i64 = 512;
/// Rows older than this are pruned (ten minutes).
pub const TTL_MS: u64 = 10 * 60 * 1000;
/// A marker older than this means nobody watches (the service touches it
/// every [`TOUCH_EVERY`]).
pub const FRESH: Duration = Duration::from_secs(5);
/// How often the service touches the marker while watched.
pub const TOUCH_EVERY: Duration = Duration::from_secs(1);
/// How often the service reads new rows while watched.
pub const POLL_EVERY: Duration = Duration::from_millis(300);
/// The longest a hook waits for another writer.
pub const BUSY_TIMEOUT: Duration = Duration::from_millis(100);
/// Characters kept of each free-text field.
pub const MAX_TEXT_CHARS: usize = 4096;
/// Rows read per poll.
const READ_BATCH: i64 = 256;

const SCHEMA: &str = "CREATE TABLE IF NOT EXISTS feed (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    at_ms INTEGER NOT NULL,
    item TEXT NOT NULL
)";

/// Whether a console watches: the marker is a regular file touched within
/// [`FRESH`] of `now`.
pub fn watched(state_dir: &Path, now: SystemTime) -> bool {
    let Ok(meta) = fs::symlink_metadata(state_dir.join(MARKER)) else {
        return false;
    };
    if !meta.is_file() {
        return false;
    }
    meta.modified()
        .is_ok_and(|at| match now.duration_since(at) {
            Ok(age) => age <= FRESH,
            // Touched "in the future" by a little: clocks are the same machine's.
            Err(e) => e.duration() <= FRESH,
        })
}

/// Marks the feed watched now (the service, while a console is open).
pub fn touch(state_dir: &Path) -> io::Result<()> {
    let path = state_dir.join(MARKER);
    if fs::symlink_metadata(&path).is_ok_and(|m| !m.is_file()) {
        return Err(io::Error::other("the marker is not a regular file"));
    }
    let file = OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(false)
        .mode(0o600)
        .open(&path)?;
    file.set_modified(SystemTime::now())
}

/// Nobody watches any more.
pub fn unmark(state_dir: &Path) {
    let _ = fs::remove_file(state_dir.join(MARKER));
}

/// Why the table could not be used (logged, never surfaced in a decision).
#[derive(Debug, thiserror::Error)]
pub enum LocalError {
    #[error("`{path}`: {message}")]
    File { path: String, message: String },
    #[error("`{path}`: {source}")]
    Sqlite {
        path: String,
        source: rusqlite::Error,
    },
}

fn open(state_dir: &Path, create: bool) -> Result<Option<Connection>, LocalError> {
    let path = state_dir.join(FILE);
    let shown = path.display().to_string();
    let file_err = |message: String| LocalError::File {
        path: shown.clone(),
        message,
    };
    match fs::symlink_metadata(&path) {
        Ok(m) if !m.is_file() => return Err(file_err("not a regular file".to_owned())),
        Ok(_) => {}
        Err(e) if e.kind() == io::ErrorKind::NotFound && create => {
            // Created 0600 before SQLite opens it; its -wal and -shm take
            // the main file's mode.
            OpenOptions::new()
                .write(true)
                .create(true)
                .truncate(false)
                .mode(0o600)
                .open(&path)
                .map_err(|e| file_err(e.to_string()))?;
        }
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(file_err(e.to_string())),
    }
    let sqlite = |source| LocalError::Sqlite {
        path: shown.clone(),
        source,
    };
    let conn = Connection::open_with_flags(
        &path,
        OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )
    .map_err(sqlite)?;
    conn.busy_timeout(BUSY_TIMEOUT).map_err(sqlite)?;
    conn.pragma_update(None, "journal_mode", "WAL")
        .map_err(sqlite)?;
    conn.pragma_update(None, "synchronous", "NORMAL")
        .map_err(sqlite)?;
    conn.execute(SCHEMA, []).map_err(sqlite)?;
    Ok(Some(conn))
}

/// `text` cut to [`MAX_TEXT_CHARS`] (after redaction: a cut never splits
/// a secret the redaction would have caught).
fn cut(text: &mut String) {
    if let Some((at, _)) = text.char_indices().nth(MAX_TEXT_CHARS) {
        text.truncate(at);
        text.push('…');
    }
}

fn bounded(mut item: FeedItem) -> FeedItem {
    cut(&mut item.summary);
    cut(&mut item.rationale);
    for field in [
        &mut item.cwd,
        &mut item.suggestion,
        &mut item.source,
        &mut item.agent,
    ] {
        if let Some(text) = field.as_mut() {
            cut(text);
        }
    }
    cut(&mut item.session_id);
    cut(&mut item.turn_id);
    item
}

/// Appends already-redacted `items` and prunes what is too old or too
/// many. The state directory must exist (a hook that decided has made it).
pub fn append(state_dir: &Path, items: Vec<FeedItem>, now_ms: u64) -> Result<(), LocalError> {
    if items.is_empty() {
        return Ok(());
    }
    let Some(mut conn) = open(state_dir, true)? else {
        return Ok(());
    };
    let path = state_dir.join(FILE).display().to_string();
    let sqlite = |source| LocalError::Sqlite {
        path: path.clone(),
        source,
    };
    let tx = conn
        .transaction_with_behavior(TransactionBehavior::Immediate)
        .map_err(sqlite)?;
    for item in items {
        let item = bounded(item);
        let text = serde_json::to_string(&item).map_err(|e| LocalError::File {
            path: path.clone(),
            message: e.to_string(),
        })?;
        tx.execute(
            "INSERT INTO feed (at_ms, item) VALUES (?1, ?2)",
            params![i64::try_from(item.at_ms).unwrap_or(i64::MAX), text],
        )
        .map_err(sqlite)?;
    }
    let oldest = i64::try_from(now_ms.saturating_sub(TTL_MS)).unwrap_or(0);
    tx.execute(
        "DELETE FROM feed WHERE at_ms < ?1 OR id <= (SELECT max(id) FROM feed) - ?2",
        params![oldest, MAX_ROWS],
    )
    .map_err(sqlite)?;
    tx.commit().map_err(sqlite)
}

/// The service's side: new rows since the last read.
#[derive(Debug)]
pub struct Reader {
    state_dir: PathBuf,
    conn: Option<Connection>,
    /// The last row seen; `None` until the first read, which starts at the
    /// end (a console shows what happens while it watches).
    last: Option<i64>,
    warned: bool,
}

impl Reader {
    pub fn new(state_dir: &Path) -> Reader {
        Reader {
            state_dir: state_dir.to_path_buf(),
            conn: None,
            last: None,
            warned: false,
        }
    }

    /// Starts at the rows there now: only what comes next is read.
    pub fn start_at_end(&mut self) {
        let last = self.with_conn(|conn| {
            conn.query_row("SELECT coalesce(max(id), 0) FROM feed", [], |r| r.get(0))
        });
        self.last = Some(last.unwrap_or(0));
    }

    fn with_conn<T>(&mut self, f: impl FnOnce(&Connection) -> rusqlite::Result<T>) -> Option<T> {
        if self.conn.is_none() {
            match open(&self.state_dir, false) {
                Ok(conn) => self.conn = conn,
                Err(e) => {
                    self.warn(&e);
                    return None;
                }
            }
        }
        let result = f(self.conn.as_ref()?);
        match result {
            Ok(v) => Some(v),
            Err(e) => {
                // Reopened next time: the file may have been replaced.
                self.conn = None;
                let path = self.state_dir.join(FILE).display().to_string();
                self.warn(&LocalError::Sqlite { path, source: e });
                None
            }
        }
    }

    fn warn(&mut self, e: &LocalError) {
        if !self.warned {
            self.warned = true;
            tracing::warn!(error = %e, "the hooks' live feed cannot be read; the console shows this service's decisions only");
        }
    }

    /// The items written since the last call (at most a batch).
    pub fn next_batch(&mut self) -> Vec<FeedItem> {
        if self.last.is_none() {
            self.start_at_end();
        }
        let after = self.last.unwrap_or(0);
        let rows = self.with_conn(|conn| {
            let mut stmt = conn
                .prepare_cached("SELECT id, item FROM feed WHERE id > ?1 ORDER BY id LIMIT ?2")?;
            let rows = stmt.query_map(params![after, READ_BATCH], |r| {
                Ok((r.get::<_, i64>(0)?, r.get::<_, String>(1)?))
            })?;
            rows.collect::<rusqlite::Result<Vec<_>>>()
        });
        let mut items = Vec::new();
        for (id, text) in rows.unwrap_or_default() {
            self.last = Some(id);
            // A row that does not read as an item is skipped, not shown raw.
            if let Ok(item) = serde_json::from_str::<FeedItem>(&text) {
                items.push(item);
            }
        }
        items
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::decision::{Outcome, Stage};

    fn item(at_ms: u64, summary: &str) -> FeedItem {
        FeedItem {
            at_ms,
            session_id: "s".into(),
            turn_id: "t".into(),
            source: Some("claude-code".into()),
            agent: None,
            surface: "bash".into(),
            summary: summary.into(),
            cwd: None,
            request_hash: "h".into(),
            decision: Outcome::Deny,
            stage: Stage::HardDeny,
            rule_id: None,
            risk_level: None,
            fault: None,
            abstain: false,
            rationale: "r".into(),
            suggestion: None,
            model: None,
            input_tokens: None,
            output_tokens: None,
            duration_ms: None,
        }
    }

    #[test]
    fn rows_are_read_once_bounded_and_pruned() {
        let dir = tempfile::tempdir().unwrap();
        let mut reader = Reader::new(dir.path());
        assert!(reader.next_batch().is_empty(), "no file yet");
        append(dir.path(), vec![item(1, "before")], 1).unwrap();
        let mut reader = Reader::new(dir.path());
        reader.start_at_end();
        let long = "x".repeat(MAX_TEXT_CHARS * 2);
        append(dir.path(), vec![item(2, &long)], 2).unwrap();
        let got = reader.next_batch();
        assert_eq!(got.len(), 1, "only what came after the start");
        assert_eq!(got[0].summary.chars().count(), MAX_TEXT_CHARS + 1);
        assert!(reader.next_batch().is_empty());
        let many: Vec<_> = (0..(MAX_ROWS as u64 + 10))
            .map(|i| item(3 + i, "m"))
            .collect();
        append(dir.path(), many, 3).unwrap();
        let conn = Connection::open(dir.path().join(FILE)).unwrap();
        let n: i64 = conn
            .query_row("SELECT count(*) FROM feed", [], |r| r.get(0))
            .unwrap();
        assert_eq!(n, MAX_ROWS);
        append(dir.path(), vec![item(TTL_MS * 2, "late")], TTL_MS * 2).unwrap();
        let n: i64 = conn
            .query_row("SELECT count(*) FROM feed", [], |r| r.get(0))
            .unwrap();
        assert_eq!(n, 1, "expired rows go");
    }

    #[test]
    fn the_marker_is_fresh_only_for_a_while() {
        let dir = tempfile::tempdir().unwrap();
        assert!(!watched(dir.path(), SystemTime::now()));
        touch(dir.path()).unwrap();
        assert!(watched(dir.path(), SystemTime::now()));
        assert!(!watched(dir.path(), SystemTime::now() + FRESH * 3));
        unmark(dir.path());
        assert!(!watched(dir.path(), SystemTime::now()));
    }

    #[test]
    fn a_broken_file_is_an_error_not_a_panic() {
        let dir = tempfile::tempdir().unwrap();
        fs::write(dir.path().join(FILE), b"not a database at all, just text").unwrap();
        assert!(append(dir.path(), vec![item(1, "x")], 1).is_err());
        let mut reader = Reader::new(dir.path());
        assert!(reader.next_batch().is_empty());
    }
}
