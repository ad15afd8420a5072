//! Group commit for writes that only need to be durable: each is queued,
//! and whichever writer holds the write connection commits every write
//! queued by then in one transaction, a savepoint each.
//!
//! Under load many reviews finish at once (a model answers about as fast
//! for all of them), and each one's record of its verdict used to be a
//! transaction of its own, taken in turn on the one write connection: a
//! request waited for every commit queued before its own. Now the first
//! writer to get the connection commits all of them, and the others find
//! theirs done when their turn comes. A write's effects are what they
//! would be in a transaction of its own (its savepoint is rolled back
//! alone when it fails), at the strongest durability any write of the
//! transaction asked for; its caller returns only after the commit that
//! holds it.

use std::collections::VecDeque;
use std::sync::{Arc, Condvar, Mutex, PoisonError};
use std::time::{Duration, Instant};

use super::{BUSY_TIMEOUT, Durability, Pooled, Store, StoreError, Transaction, in_transaction};

/// Writes committed in one transaction at most; more queued are committed
/// in the next (by the same writer while its own is among them).
const MAX_BATCH: usize = 64;

/// A queued write: owns what it writes.
pub type QueuedWrite = Box<dyn FnOnce(&Transaction<'_>) -> rusqlite::Result<()> + Send>;

/// The writes waiting for a commit, oldest first.
#[derive(Default)]
pub(super) struct Queue {
    pending: Mutex<VecDeque<Queued>>,
}

struct Queued {
    write: QueuedWrite,
    durability: Durability,
    done: Arc<Done>,
}

/// Where a write's outcome is left for its caller.
#[derive(Default)]
struct Done {
    outcome: Mutex<Option<Result<(), StoreError>>>,
    ready: Condvar,
}

impl Done {
    fn set(&self, outcome: Result<(), StoreError>) {
        *self.outcome.lock().unwrap_or_else(PoisonError::into_inner) = Some(outcome);
        self.ready.notify_all();
    }

    fn take(&self) -> Option<Result<(), StoreError>> {
        self.outcome
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take()
    }

    /// Waits at most `wait` for the outcome.
    fn wait(&self, wait: Duration) -> Option<Result<(), StoreError>> {
        let deadline = Instant::now() + wait;
        let mut outcome = self.outcome.lock().unwrap_or_else(PoisonError::into_inner);
        loop {
            if let Some(done) = outcome.take() {
                return Some(done);
            }
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return None;
            }
            outcome = self
                .ready
                .wait_timeout(outcome, left)
                .unwrap_or_else(PoisonError::into_inner)
                .0;
        }
    }
}

impl Store {
    /// Commits `write` (in its own savepoint) together with the other
    /// writes queued by the time the write connection is free, and returns
    /// once the transaction that holds it has committed — or the error that
    /// kept it out. An error from `write` rolls back only its own changes.
    /// Waiting longer than the busy timeout fails as [`Store::write`] does;
    /// a write that is already inside another caller's transaction then
    /// waits for that transaction instead (at most the busy timeout more).
    pub fn write_queued(
        &self,
        durability: Durability,
        write: QueuedWrite,
    ) -> Result<(), StoreError> {
        let done = Arc::new(Done::default());
        self.queue.lock().push_back(Queued {
            write,
            durability,
            done: Arc::clone(&done),
        });
        let Some(mut slot) = self.writer.try_lock_for(BUSY_TIMEOUT) else {
            let mut pending = self.queue.lock();
            let before = pending.len();
            pending.retain(|q| !Arc::ptr_eq(&q.done, &done));
            let withdrawn = pending.len() < before;
            drop(pending);
            if withdrawn {
                return Err(
                    self.busy("other writers of this process held the database for too long")
                );
            }
            return done.wait(BUSY_TIMEOUT).unwrap_or_else(|| {
                Err(self.busy("the transaction holding this write did not finish in time"))
            });
        };
        loop {
            if let Some(outcome) = done.take() {
                return outcome;
            }
            let batch = self.queue.take_front(MAX_BATCH);
            if batch.is_empty() {
                // INVARIANT: an unfinished write stays queued until a holder
                // of the write connection takes it; none took it but us.
                return Err(self.busy("the queued write was lost"));
            }
            let mut pooled = match slot.take() {
                Some(pooled) => pooled,
                None => match self.connect() {
                    Ok(pooled) => pooled,
                    Err(e) => {
                        let message = e.to_string();
                        for q in batch {
                            q.done.set(Err(self.busy(&message)));
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
    }

    /// One transaction for `batch`; every write's outcome is set. False
    /// when the transaction itself failed (the connection is then not
    /// reused).
    fn commit_batch(&self, pooled: &mut Pooled, batch: Vec<Queued>) -> bool {
        let durability = batch
            .iter()
            .map(|q| q.durability)
            .max()
            .unwrap_or(Durability::Normal);
        let mut dones = Vec::with_capacity(batch.len());
        let single = batch.len() == 1;
        let result = pooled.set_durability(durability).and_then(|()| {
            in_transaction(&pooled.conn, "BEGIN IMMEDIATE", "COMMIT", |tx| {
                let mut outcomes = Vec::with_capacity(batch.len());
                for q in batch {
                    dones.push(q.done);
                    if single {
                        // Alone in its transaction: its error rolls it back.
                        (q.write)(tx)?;
                        outcomes.push(Ok(()));
                        continue;
                    }
                    tx.prepare_cached("SAVEPOINT queued")?.execute([])?;
                    match (q.write)(tx) {
                        Ok(()) => outcomes.push(Ok(())),
                        Err(e) => {
                            tx.prepare_cached("ROLLBACK TO queued")?.execute([])?;
                            outcomes.push(Err(e));
                        }
                    }
                    tx.prepare_cached("RELEASE queued")?.execute([])?;
                }
                Ok(outcomes)
            })
        });
        match result {
            Ok(outcomes) => {
                for (done, outcome) in dones.iter().zip(outcomes) {
                    done.set(outcome.map_err(|e| self.sql_error(e)));
                }
                true
            }
            Err(e) => {
                for done in &dones {
                    done.set(Err(self.shared_error(&e)));
                }
                false
            }
        }
    }

    /// `e` for each of the writes it failed (the first keeps no special
    /// claim on it: `rusqlite::Error` is not `Clone`).
    fn shared_error(&self, e: &rusqlite::Error) -> StoreError {
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

impl Queue {
    fn lock(&self) -> std::sync::MutexGuard<'_, VecDeque<Queued>> {
        self.pending.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn take_front(&self, at_most: usize) -> Vec<Queued> {
        let mut pending = self.lock();
        let n = pending.len().min(at_most);
        pending.drain(..n).collect()
    }
}
