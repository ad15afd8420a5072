//! The process's audit handle: a bounded queue in front of one background
//! writer thread, so that recording an observation costs a decision one
//! channel send and nothing else — no SQLite, no parsing, no hashing, no
//! lock of another process. A short-lived process that answers once (a
//! `vouch hook` run) holds its observations in memory instead and writes
//! them on its own thread after its reply is out
//! ([`AuditDelivery::AfterReply`]): no thread, no channel, no second
//! allocator arena, which cost such a process more than the write itself.
//!
//! Failure isolation (design §8): when the database cannot be opened,
//! locked, written or read (corruption), auditing turns off for the rest of
//! the process with one warning, and every later observation is dropped
//! without work. A full queue drops the observation too, counted and warned
//! about once, never blocking the caller.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc::{self, Receiver, SyncSender, TrySendError};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use super::db::{Db, Location, WriteSummary};
use super::keys::Keys;
use super::{AuditError, Derive, Observation, subject};
use crate::clock::Clock;
use crate::config::AuditConfig;

/// One warning per process when auditing turns off or a write could not
/// finish, whichever handle hit it.
static WARNED_OFF: AtomicBool = AtomicBool::new(false);
/// One warning per process when the queue overflows.
static WARNED_FULL: AtomicBool = AtomicBool::new(false);

/// The settings the writer runs with (trusted configuration only).
#[derive(Debug, Clone)]
pub struct Settings {
    /// `audit.enabled`: when false nothing is recorded, but what was
    /// recorded before can still be reported.
    pub enabled: bool,
    /// Holds `hmac.key`, and `audit.sqlite` unless the audit is kept on
    /// PostgreSQL.
    pub state_dir: PathBuf,
    /// Where the aggregates are kept (`[store] backend`).
    pub location: Location,
    pub retention_days: u32,
    pub pending_ttl_ms: u64,
    pub lock_timeout: Duration,
    pub queue_capacity: usize,
    pub limits: subject::Limits,
}

impl Settings {
    pub fn from_config(state_dir: &Path, cfg: &AuditConfig, location: Location) -> Settings {
        Settings {
            enabled: cfg.enabled,
            state_dir: state_dir.to_path_buf(),
            location,
            retention_days: cfg.retention_days,
            pending_ttl_ms: cfg.pending_ttl_ms,
            lock_timeout: Duration::from_millis(cfg.lock_timeout_ms),
            queue_capacity: usize::try_from(cfg.queue_capacity)
                .unwrap_or(usize::MAX)
                .max(1),
            limits: subject::Limits {
                max_command_bytes: usize::try_from(cfg.max_command_bytes).unwrap_or(usize::MAX),
                max_template_tokens: usize::try_from(cfg.max_template_tokens).unwrap_or(usize::MAX),
            },
        }
    }

    fn derive<'a>(&self, keys: &'a Keys, memo: &'a std::cell::RefCell<super::Memo>) -> Derive<'a> {
        Derive {
            keys,
            limits: self.limits,
            pending_ttl_ms: self.pending_ttl_ms,
            memo,
        }
    }
}

/// Where observations are written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum AuditDelivery {
    /// By a writer thread, started on the first observation (the service).
    #[default]
    Background,
    /// Held in memory (at most `audit.queue_capacity`) and written by
    /// [`Audit::flush`] on the caller's thread, which a short-lived process
    /// calls once its reply is out.
    AfterReply,
}

/// Whether observations are being counted.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[serde(tag = "status", rename_all = "snake_case")]
pub enum AuditStatus {
    /// Counting (the database opens on the first observation).
    On { dropped: u64 },
    /// Turned off by configuration.
    Disabled,
    /// Turned off after a failure; the reason says which.
    Off { reason: String, dropped: u64 },
}

enum Job {
    Observe(Box<Observation>),
    Flush(mpsc::Sender<()>),
}

struct Shared {
    off: AtomicBool,
    reason: Mutex<Option<String>>,
    dropped: AtomicU64,
    /// Observations queued and not yet written (or given up on): a flush
    /// with nothing pending succeeds at once, even with no time left.
    pending: AtomicU64,
}

impl Shared {
    /// `count` observations not written because the database was
    /// unavailable for a moment: dropped and counted, auditing stays on.
    fn lost(&self, why: &AuditError, count: usize) {
        self.dropped
            .fetch_add(u64::try_from(count).unwrap_or(u64::MAX), Ordering::SeqCst);
        tracing::warn!(
            target: "vouch::audit",
            error = %why,
            dropped = count,
            "audit observations dropped: the audit database is unavailable (decisions are not \
             affected; the next batch tries again)"
        );
    }

    fn turn_off(&self, why: &AuditError) {
        *self.reason.lock().unwrap_or_else(PoisonError::into_inner) = Some(why.to_string());
        self.off.store(true, Ordering::SeqCst);
        if !WARNED_OFF.swap(true, Ordering::SeqCst) {
            tracing::warn!(
                target: "vouch::audit",
                error = %why,
                "auditing is off for the rest of this process; decisions are not affected"
            );
        }
    }
}

struct Inner {
    settings: Option<Settings>,
    delivery: AuditDelivery,
    /// [`AuditDelivery::AfterReply`]: observations not yet written.
    held: Mutex<Vec<Observation>>,
    clock: Arc<dyn Clock>,
    shared: Arc<Shared>,
    /// The writer's queue and its thread (unparked by a flush that must not
    /// wait out the batch's linger).
    sender: Mutex<Option<(SyncSender<Job>, std::thread::Thread)>>,
    /// A second connection for synchronous work (ingest, reports).
    direct: Mutex<Option<(Db, Keys)>>,
    /// What ingest has derived so far.
    direct_memo: Mutex<super::Memo>,
}

/// A cheaply cloneable handle to this process's audit.
#[derive(Clone)]
pub struct Audit {
    inner: Arc<Inner>,
}

impl std::fmt::Debug for Audit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Audit")
            .field("status", &self.status())
            .finish()
    }
}

impl Audit {
    /// The audit for `state_dir` under the trusted `[audit]` settings, kept
    /// at `location`. Nothing is opened or started until the first
    /// observation.
    pub fn new(
        state_dir: &Path,
        cfg: &AuditConfig,
        location: Location,
        clock: Arc<dyn Clock>,
        delivery: AuditDelivery,
    ) -> Audit {
        Audit::with_settings(
            Some(Settings::from_config(state_dir, cfg, location)),
            clock,
            delivery,
        )
    }

    /// An audit that records nothing.
    pub fn disabled() -> Audit {
        Audit::with_settings(
            None,
            Arc::new(crate::clock::SystemClock),
            AuditDelivery::Background,
        )
    }

    fn with_settings(
        settings: Option<Settings>,
        clock: Arc<dyn Clock>,
        delivery: AuditDelivery,
    ) -> Audit {
        Audit {
            inner: Arc::new(Inner {
                settings,
                delivery,
                held: Mutex::new(Vec::new()),
                clock,
                shared: Arc::new(Shared {
                    off: AtomicBool::new(false),
                    reason: Mutex::new(None),
                    dropped: AtomicU64::new(0),
                    pending: AtomicU64::new(0),
                }),
                sender: Mutex::new(None),
                direct: Mutex::new(None),
                direct_memo: Mutex::new(super::Memo::default()),
            }),
        }
    }

    pub fn status(&self) -> AuditStatus {
        let dropped = self.inner.shared.dropped.load(Ordering::SeqCst);
        if !self.inner.settings.as_ref().is_some_and(|s| s.enabled) {
            return AuditStatus::Disabled;
        }
        if self.inner.shared.off.load(Ordering::SeqCst) {
            let reason = self
                .inner
                .shared
                .reason
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .clone()
                .unwrap_or_default();
            return AuditStatus::Off { reason, dropped };
        }
        AuditStatus::On { dropped }
    }

    /// The trusted settings, when auditing is enabled.
    pub fn settings(&self) -> Option<&Settings> {
        self.inner.settings.as_ref().filter(|s| s.enabled)
    }

    /// The clock observations are stamped with.
    pub fn now_ms(&self) -> u64 {
        self.inner.clock.now_ms()
    }

    fn is_active(&self) -> bool {
        self.settings().is_some() && !self.inner.shared.off.load(Ordering::SeqCst)
    }

    /// Queues one observation. Never blocks and never fails: when auditing
    /// is off or the queue is full, the observation is dropped.
    pub fn observe(&self, observation: Observation) {
        if !self.is_active() {
            return;
        }
        if self.inner.delivery == AuditDelivery::AfterReply {
            self.hold(observation);
            return;
        }
        let Some(sender) = self.sender() else {
            return;
        };
        // Counted before the send so that the writer never sees it written
        // before it was counted.
        self.inner.shared.pending.fetch_add(1, Ordering::SeqCst);
        match sender.try_send(Job::Observe(Box::new(observation))) {
            Ok(()) => {}
            Err(TrySendError::Full(_)) => {
                self.inner.shared.pending.fetch_sub(1, Ordering::SeqCst);
                let dropped = self.inner.shared.dropped.fetch_add(1, Ordering::SeqCst) + 1;
                if !WARNED_FULL.swap(true, Ordering::SeqCst) {
                    tracing::warn!(
                        target: "vouch::audit",
                        dropped,
                        "audit queue is full; observations are being dropped (decisions are not affected)"
                    );
                }
            }
            // The writer stopped; it turned auditing off and said why.
            Err(TrySendError::Disconnected(_)) => {
                self.inner.shared.pending.fetch_sub(1, Ordering::SeqCst);
            }
        }
    }

    /// Keeps an observation for [`Audit::flush`]; beyond the queue's
    /// capacity it is dropped and counted, as a full queue would.
    fn hold(&self, observation: Observation) {
        let capacity = self.settings().map_or(0, |s| s.queue_capacity);
        let mut held = self
            .inner
            .held
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        if held.len() < capacity {
            held.push(observation);
            return;
        }
        drop(held);
        let dropped = self.inner.shared.dropped.fetch_add(1, Ordering::SeqCst) + 1;
        if !WARNED_FULL.swap(true, Ordering::SeqCst) {
            tracing::warn!(
                target: "vouch::audit",
                dropped,
                "too many audit observations in one process; the rest are dropped (decisions are \
                 not affected)"
            );
        }
    }

    /// Writes what [`AuditDelivery::AfterReply`] held, on this thread, in
    /// one transaction; a failure turns auditing off as the writer would.
    /// SQLite's busy timeout (`audit.lock_timeout_ms`) bounds the wait for
    /// another process's lock; on PostgreSQL, `store.timeout_ms` bounds the
    /// wait for the audit's advisory lock (and every statement).
    fn write_held(&self) -> bool {
        let held = std::mem::take(
            &mut *self
                .inner
                .held
                .lock()
                .unwrap_or_else(PoisonError::into_inner),
        );
        if held.is_empty() {
            return true;
        }
        match self.write_now(&held) {
            Ok(_) => {
                let _ = self.with_db(false, |db, _, settings| {
                    db.truncate_long_log(settings.lock_timeout);
                    Ok(())
                });
                true
            }
            Err(e @ AuditError::Unavailable { .. }) => {
                self.inner.shared.lost(&e, held.len());
                false
            }
            Err(e) => {
                self.inner.shared.turn_off(&e);
                false
            }
        }
    }

    /// Waits until everything queued so far is written, at most `timeout`.
    /// Short-lived commands call it after printing their decision. With
    /// [`AuditDelivery::AfterReply`] the write happens here, on the
    /// caller's thread (bounded by the lock timeout, not by `timeout`).
    pub fn flush(&self, timeout: Duration) -> bool {
        if !self.is_active() {
            return true;
        }
        if self.inner.delivery == AuditDelivery::AfterReply {
            return self.write_held();
        }
        let Some((sender, writer)) = self.sender_if_started() else {
            return true;
        };
        if self.inner.shared.pending.load(Ordering::SeqCst) == 0 {
            return true;
        }
        let deadline = Instant::now() + timeout;
        let (tx, rx) = mpsc::channel();
        let mut job = Job::Flush(tx);
        loop {
            let sent = sender.try_send(job);
            // Ends the writer's linger (or lets it drain a full queue).
            writer.unpark();
            match sent {
                Ok(()) => break,
                Err(TrySendError::Full(back)) if Instant::now() < deadline => {
                    job = back;
                    std::thread::sleep(Duration::from_millis(1));
                }
                Err(TrySendError::Full(_) | TrySendError::Disconnected(_)) => return false,
            }
        }
        let done = rx
            .recv_timeout(deadline.saturating_duration_since(Instant::now()))
            .is_ok();
        if !done && !WARNED_OFF.swap(true, Ordering::SeqCst) {
            tracing::warn!(
                target: "vouch::audit",
                waited_ms = u64::try_from(timeout.as_millis()).unwrap_or(u64::MAX),
                "the audit write did not finish in time; this process's last observations may be \
                 lost (decisions are not affected)"
            );
        }
        done
    }

    fn sender_if_started(&self) -> Option<(SyncSender<Job>, std::thread::Thread)> {
        self.inner
            .sender
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// The writer's queue, starting the writer on first use.
    fn sender(&self) -> Option<SyncSender<Job>> {
        let settings = self.settings()?;
        let mut slot = self
            .inner
            .sender
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        if let Some((sender, _)) = slot.as_ref() {
            return Some(sender.clone());
        }
        let (tx, rx) = mpsc::sync_channel(settings.queue_capacity);
        let worker = Worker {
            settings: settings.clone(),
            clock: Arc::clone(&self.inner.clock),
            shared: Arc::clone(&self.inner.shared),
            open: None,
            memo: std::cell::RefCell::default(),
        };
        let spawned = std::thread::Builder::new()
            .name("vouch-audit".to_owned())
            .spawn(move || worker.run(&rx));
        match spawned {
            Ok(detached) => {
                *slot = Some((tx.clone(), detached.thread().clone()));
                Some(tx)
            }
            Err(e) => {
                self.inner.shared.turn_off(&AuditError::Stopped(format!(
                    "cannot start the writer thread: {e}"
                )));
                None
            }
        }
    }

    /// Runs `f` on the synchronous connection (opening it on first use).
    /// For ingest and reports: blocking, and errors go to the caller.
    pub(crate) fn with_db<T>(
        &self,
        create: bool,
        f: impl FnOnce(&mut Db, &Keys, &Settings) -> Result<T, AuditError>,
    ) -> Result<Option<T>, AuditError> {
        let settings = self.inner.settings.as_ref().ok_or(AuditError::Disabled)?;
        let mut slot = self
            .inner
            .direct
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        if slot.is_none() {
            let opened = if create {
                let keys = Keys::load_or_create(&settings.state_dir)?;
                let db = Db::open_at(
                    &settings.location,
                    &settings.state_dir,
                    settings.lock_timeout,
                )?;
                db.check_key(&keys, &settings.state_dir)?;
                Some((db, keys))
            } else {
                match (
                    Keys::load(&settings.state_dir)?,
                    Db::open_existing_at(
                        &settings.location,
                        &settings.state_dir,
                        settings.lock_timeout,
                    )?,
                ) {
                    (Some(keys), Some(db)) => {
                        db.check_key(&keys, &settings.state_dir)?;
                        Some((db, keys))
                    }
                    _ => None,
                }
            };
            *slot = opened;
        }
        let Some((db, keys)) = slot.as_mut() else {
            return Ok(None);
        };
        match f(db, keys, settings) {
            Ok(value) => Ok(Some(value)),
            Err(e) => {
                // A connection that failed is not reused.
                *slot = None;
                Err(e)
            }
        }
    }

    /// Writes observations now, in one transaction (ingest). Returns what
    /// was counted, skipped as a duplicate, or too old to keep.
    pub fn write_now(&self, observations: &[Observation]) -> Result<WriteSummary, AuditError> {
        if self.settings().is_none() {
            return Err(AuditError::Disabled);
        }
        let now = self.now_ms();
        let mut kept = self
            .inner
            .direct_memo
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        kept.next_batch();
        let memo = std::cell::RefCell::new(std::mem::take(&mut *kept));
        let written = self.with_db(true, |db, keys, settings| {
            let derive = settings.derive(keys, &memo);
            let ops = observations
                .iter()
                .filter_map(|o| o.to_op(derive))
                .collect();
            db.write(ops, now, settings.retention_days)
        });
        *kept = memo.into_inner();
        let written = written?;
        written.ok_or(AuditError::Disabled)
    }
}

impl Audit {
    /// Builds a report from what was recorded (an empty one when nothing
    /// was). `retention_days` bounds `--days`: the trusted retention, or a
    /// project's shorter one.
    pub fn report(
        &self,
        options: &super::report::Options,
        retention_days: u32,
    ) -> Result<super::report::Report, AuditError> {
        let now = self.now_ms();
        let built = self.with_db(false, |db, keys, _| {
            super::report::build(Some((db, keys)), options, retention_days, now)
        })?;
        match built {
            Some(report) => Ok(report),
            None => super::report::build(None, options, retention_days, now),
        }
    }
}

/// How long the writer keeps gathering after the first observation of a
/// batch before it commits, unless a flush is waiting: a busy service then
/// commits one transaction per few milliseconds of decisions instead of one
/// per decision (a third of an observation's cost), and its thread wakes
/// once per batch instead of once per decision. Short-lived processes flush
/// after their decision, which ends the wait at once; the report and ingest
/// flush first too, so neither misses a decision made. A `kill -9` loses at
/// most this much more of the decisions in flight.
const BATCH_LINGER: Duration = Duration::from_millis(10);

/// The background writer: owns its connection, batches what is queued.
struct Worker {
    settings: Settings,
    clock: Arc<dyn Clock>,
    shared: Arc<Shared>,
    open: Option<(Db, Keys)>,
    memo: std::cell::RefCell<super::Memo>,
}

impl Worker {
    fn run(mut self, rx: &Receiver<Job>) {
        while let Ok(first) = rx.recv() {
            let mut observations = Vec::new();
            let mut flushes = Vec::new();
            let linger_until = Instant::now() + BATCH_LINGER;
            let mut job = Some(first);
            loop {
                while let Some(next) = job.take() {
                    match next {
                        Job::Observe(o) => observations.push(*o),
                        Job::Flush(ack) => flushes.push(ack),
                    }
                    if observations.len() < self.settings.queue_capacity {
                        job = rx.try_recv().ok();
                    }
                }
                let left = linger_until.saturating_duration_since(Instant::now());
                if !flushes.is_empty()
                    || observations.len() >= self.settings.queue_capacity
                    || left.is_zero()
                {
                    break;
                }
                // Parked rather than waiting in `recv`: decisions queued
                // meanwhile do not wake this thread one by one; a flush
                // unparks it.
                std::thread::park_timeout(left);
                job = rx.try_recv().ok();
            }
            if !self.shared.off.load(Ordering::SeqCst)
                && !observations.is_empty()
                && let Err(e) = self.write(&observations)
            {
                self.open = None;
                match e {
                    // PostgreSQL down or restarting: this batch is lost
                    // (counted as dropped), auditing stays on and the next
                    // batch reconnects.
                    AuditError::Unavailable { .. } => self.shared.lost(&e, observations.len()),
                    _ => self.shared.turn_off(&e),
                }
            }
            let done = u64::try_from(observations.len()).unwrap_or(u64::MAX);
            self.shared.pending.fetch_sub(done, Ordering::SeqCst);
            for ack in flushes {
                // The waiter may have given up; that is its business.
                let _ = ack.send(());
            }
        }
    }

    fn write(&mut self, observations: &[Observation]) -> Result<(), AuditError> {
        if self.open.is_none() {
            let keys = Keys::load_or_create(&self.settings.state_dir)?;
            let db = Db::open_at(
                &self.settings.location,
                &self.settings.state_dir,
                self.settings.lock_timeout,
            )?;
            db.check_key(&keys, &self.settings.state_dir)?;
            self.open = Some((db, keys));
        }
        let Some((db, keys)) = self.open.as_mut() else {
            return Err(AuditError::Stopped("the database did not open".to_owned()));
        };
        self.memo.borrow_mut().next_batch();
        let derive = self.settings.derive(keys, &self.memo);
        let ops = observations
            .iter()
            .filter_map(|o| o.to_op(derive))
            .collect();
        db.write(ops, self.clock.now_ms(), self.settings.retention_days)
            .map(drop)
    }
}
