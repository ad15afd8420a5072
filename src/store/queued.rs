//! Group commit for writes that only need to be durable: the service's
//! record of each review's verdict is queued for one recorder thread, which
//! commits every write queued by the time it holds the write connection in
//! one transaction, a savepoint each.
//!
//! Under load many reviews finish at once (a model answers about as fast
//! for all of them), and each one's record used to be a transaction of its
//! own, taken in turn on the one write connection by a blocking thread of
//! its own: a request waited for every commit queued before its own, and
//! dozens of threads took turns on one lock. Now one thread commits them
//! together and each caller awaits its outcome. A write's effects are what
//! they would be in a transaction of its own (its savepoint is rolled back
//! alone when it fails), at the strongest durability any write of the
//! transaction asked for; its caller is answered only after the commit that
//! holds it. The thread starts with the first queued write (a short-lived
//! process that never queues one starts none) and ends with its store.

use std::collections::VecDeque;
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError, Weak};

use super::{
    BUSY_TIMEOUT, Backend, DbError, DbResult, Durability, Pooled, SqliteDb, Store, StoreError,
    Transaction, in_transaction,
};

/// Writes committed in one transaction at most.
const MAX_BATCH: usize = 64;

/// Transactions the recorder commits before it lets other writers of the
/// process have the write connection (then it queues for it again).
const BATCHES_PER_TURN: usize = 4;

/// A queued write: owns what it writes.
pub type QueuedWrite = Box<dyn FnOnce(&Transaction<'_>) -> DbResult<()> + Send>;

/// What a queued write's caller receives once its transaction is over.
pub type Recorded = tokio::sync::oneshot::Receiver<Result<(), StoreError>>;

/// The writes waiting for the recorder, shared by the store and the thread.
#[derive(Default)]
pub(super) struct Queue {
    pending: Mutex<Pending>,
    wake: Condvar,
}

#[derive(Default)]
struct Pending {
    writes: VecDeque<Queued>,
    /// The recorder thread was started.
    started: bool,
    /// The recorder waits for writes (so a new one must wake it).
    sleeping: bool,
    /// The store is gone: the recorder ends.
    closed: bool,
}

struct Queued {
    write: QueuedWrite,
    durability: Durability,
    /// The PostgreSQL lock the write needs ([`Store::write_queued_session`]).
    lock: super::postgres::Lock,
    done: tokio::sync::oneshot::Sender<Result<(), StoreError>>,
}

impl Queue {
    fn lock(&self) -> MutexGuard<'_, Pending> {
        self.pending.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn take_front(&self, at_most: usize) -> Vec<Queued> {
        let mut pending = self.lock();
        let n = pending.writes.len().min(at_most);
        pending.writes.drain(..n).collect()
    }

    /// Tells the recorder its store is gone.
    pub(super) fn close(&self) {
        self.lock().closed = true;
        self.wake.notify_all();
    }
}

impl Store {
    /// Queues `write` for the recorder thread (started on first use), which
    /// commits it in its own savepoint together with the other writes
    /// queued by then; the returned receiver gets the outcome once that
    /// transaction is over. An error from `write` rolls back only its own
    /// changes. The recorder waits for the write connection at most the busy
    /// timeout, then fails the writes queued as [`Store::write`] would.
    pub fn write_queued(self: &Arc<Store>, durability: Durability, write: QueuedWrite) -> Recorded {
        self.queue_write(durability, super::postgres::Lock::State, write)
    }

    /// [`Store::write_queued`] for a write of one session's rows (as
    /// [`Store::write_session`]): on PostgreSQL its transaction holds that
    /// session's lock (a shared transaction holds the lock of every session
    /// it writes).
    pub fn write_queued_session(
        self: &Arc<Store>,
        session: &str,
        durability: Durability,
        write: QueuedWrite,
    ) -> Recorded {
        self.queue_write(durability, super::postgres::session_lock(session), write)
    }

    fn queue_write(
        self: &Arc<Store>,
        durability: Durability,
        lock: super::postgres::Lock,
        write: QueuedWrite,
    ) -> Recorded {
        let (done, recorded) = tokio::sync::oneshot::channel();
        let (start, wake) = {
            let mut pending = self.queue.lock();
            pending.writes.push_back(Queued {
                write,
                durability,
                lock,
                done,
            });
            let start = !pending.started;
            pending.started = true;
            (start, pending.sleeping)
        };
        if start {
            let queue = Arc::clone(&self.queue);
            let store = Arc::downgrade(self);
            let spawned = std::thread::Builder::new()
                .name("vouch-record".to_owned())
                .spawn(move || record(&queue, &store));
            if let Err(e) = spawned {
                // Nothing will commit them: every write queued fails, and the
                // next one tries to start the thread again.
                let failed: Vec<Queued> = {
                    let mut pending = self.queue.lock();
                    pending.started = false;
                    pending.writes.drain(..).collect()
                };
                for q in failed {
                    let _ = q.done.send(Err(StoreError::Unavailable {
                        at: self.describe().to_owned(),
                        detail: format!("cannot start the recorder: {e}"),
                    }));
                }
            }
        } else if wake {
            self.queue.wake.notify_one();
        }
        recorded
    }

    /// The recorder's turn: up to [`BATCHES_PER_TURN`] transactions of
    /// queued writes.
    fn commit_queued(&self) {
        match self.backend() {
            Backend::Sqlite(db) => db.commit_queued(&self.queue),
            Backend::Postgres(db) => {
                for _ in 0..BATCHES_PER_TURN {
                    let batch = self.queue.take_front(MAX_BATCH);
                    if batch.is_empty() {
                        break;
                    }
                    let durability = strongest(&batch);
                    let locks: Vec<super::postgres::Lock> = batch.iter().map(|q| q.lock).collect();
                    let mut dones = Vec::with_capacity(batch.len());
                    let result =
                        db.write_holding(&locks, durability, |tx| run_batch(tx, batch, &mut dones));
                    match result {
                        Ok(outcomes) => {
                            for (done, outcome) in dones.into_iter().zip(outcomes) {
                                let _ = done.send(outcome.map_err(|e| db.error(&e)));
                            }
                        }
                        Err(e) => {
                            for done in dones {
                                let _ = done.send(Err(e.shared()));
                            }
                        }
                    }
                }
            }
        }
    }
}

/// The strongest durability any write of `batch` asked for.
fn strongest(batch: &[Queued]) -> Durability {
    batch
        .iter()
        .map(|q| q.durability)
        .max()
        .unwrap_or(Durability::Normal)
}

/// Runs every write of `batch` in `tx`, each in its own savepoint (a write
/// alone in its transaction needs none: its error rolls the transaction
/// back). `dones` receives the writes' senders in order; the result holds
/// their outcomes in the same order.
fn run_batch(
    tx: &Transaction<'_>,
    batch: Vec<Queued>,
    dones: &mut Vec<tokio::sync::oneshot::Sender<Result<(), StoreError>>>,
) -> DbResult<Vec<DbResult<()>>> {
    let single = batch.len() == 1;
    let mut outcomes = Vec::with_capacity(batch.len());
    for q in batch {
        dones.push(q.done);
        if single {
            (q.write)(tx)?;
            outcomes.push(Ok(()));
            continue;
        }
        tx.execute("SAVEPOINT queued", &[])?;
        match (q.write)(tx) {
            Ok(()) => outcomes.push(Ok(())),
            Err(e) => {
                tx.execute("ROLLBACK TO SAVEPOINT queued", &[])?;
                outcomes.push(Err(e));
            }
        }
        tx.execute("RELEASE SAVEPOINT queued", &[])?;
    }
    Ok(outcomes)
}

impl SqliteDb {
    /// The recorder's turn on the write connection: up to
    /// [`BATCHES_PER_TURN`] transactions of queued writes.
    fn commit_queued(&self, queue: &Queue) {
        let Some(mut slot) = self.writer.try_lock_for(BUSY_TIMEOUT) else {
            for q in queue.take_front(usize::MAX) {
                let _ = q.done.send(Err(
                    self.busy("other writers of this process held the database for too long")
                ));
            }
            return;
        };
        for _ in 0..BATCHES_PER_TURN {
            let batch = queue.take_front(MAX_BATCH);
            if batch.is_empty() {
                break;
            }
            let mut pooled = match slot.take() {
                Some(pooled) => pooled,
                None => match self.connect() {
                    Ok(pooled) => pooled,
                    Err(e) => {
                        let message = e.to_string();
                        for q in batch {
                            let _ = q.done.send(Err(self.busy(&message)));
                        }
                        continue;
                    }
                },
            };
            // A connection that failed mid-transaction is dropped, as in
            // `write`.
            if self.commit_batch(&mut pooled, batch) {
                *slot = Some(pooled);
            }
        }
        // Writers waiting for the connection go first.
        parking_lot::MutexGuard::unlock_fair(slot);
    }

    /// One transaction for `batch`; every write's outcome is sent. False
    /// when the transaction itself failed (the connection is then not
    /// reused).
    fn commit_batch(&self, pooled: &mut Pooled, batch: Vec<Queued>) -> bool {
        let durability = strongest(&batch);
        let mut dones = Vec::with_capacity(batch.len());
        let result = pooled
            .set_durability(durability)
            .map_err(DbError::from)
            .and_then(|()| {
                in_transaction(&pooled.conn, "BEGIN IMMEDIATE", "COMMIT", |tx| {
                    run_batch(tx, batch, &mut dones)
                })
            });
        match result {
            Ok(outcomes) => {
                for (done, outcome) in dones.into_iter().zip(outcomes) {
                    let _ = done.send(outcome.map_err(|e| self.db_error(e)));
                }
                true
            }
            Err(e) => {
                for done in dones {
                    let _ = done.send(Err(self.shared_error(&e)));
                }
                false
            }
        }
    }

    /// `e` for each of the writes it failed (`rusqlite::Error` is not
    /// `Clone`: its code and text are kept).
    fn shared_error(&self, e: &DbError) -> StoreError {
        let DbError::Sqlite(e) = e else {
            return StoreError::Unavailable {
                at: self.display_path.clone(),
                detail: e.to_string(),
            };
        };
        if super::is_corruption(e) {
            return self.sql_error_ref(e);
        }
        let code = match e {
            rusqlite::Error::SqliteFailure(code, _) => *code,
            _ => rusqlite::ffi::Error::new(rusqlite::ffi::SQLITE_ERROR),
        };
        self.sql_error(rusqlite::Error::SqliteFailure(code, Some(e.to_string())))
    }

    fn busy(&self, message: &str) -> StoreError {
        self.sql_error(rusqlite::Error::SqliteFailure(
            rusqlite::ffi::Error::new(rusqlite::ffi::SQLITE_BUSY),
            Some(message.to_owned()),
        ))
    }
}

/// The recorder thread: waits for writes, commits them, until its store is
/// dropped. A panic inside a write fails that transaction's writes (their
/// senders are dropped, which their callers see as a failure) and the
/// thread goes on.
fn record(queue: &Queue, store: &Weak<Store>) {
    loop {
        {
            let mut pending = queue.lock();
            while pending.writes.is_empty() && !pending.closed {
                pending.sleeping = true;
                pending = queue
                    .wake
                    .wait(pending)
                    .unwrap_or_else(PoisonError::into_inner);
                pending.sleeping = false;
            }
            if pending.writes.is_empty() {
                return;
            }
        }
        let Some(store) = store.upgrade() else {
            // Dropping the queued writes' senders fails them.
            queue.lock().writes.clear();
            return;
        };
        let turn = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| store.commit_queued()));
        if turn.is_err() {
            tracing::error!("the recorder's transaction panicked; its writes failed");
        }
    }
}
