//! The audit seam: where the audit record of every final decision goes.
//!
//! The decision table emits one [`AuditRecord`] per final decision as an
//! [`crate::pipeline::Effect::Audit`]; the engine hands it to the configured
//! [`AuditSink`] through a bounded queue drained by one worker thread, so a
//! sink that is slow, broken or panicking can never change a decision or its
//! latency (design §8: a broken audit must never touch a decision). When the
//! queue is full a record is dropped and counted, never waited for. With
//! [`NoAudit`] (the default) no thread is started and records are discarded.
//!
//! Dropping the engine closes the queue and waits briefly for the worker to
//! drain it, so a short-lived CLI process does not lose the records of the
//! one decision it made. A hook process uses
//! [`AuditDelivery::AfterReply`] instead: records wait in memory, and
//! [`AuditQueue::wait_delivered`] hands them to the sink on the caller's
//! thread once the reply is out — no thread and no channel.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc::{self, Receiver, SyncSender, TryRecvError, TrySendError};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use crate::audit::AuditDelivery;
use crate::audit::facts::AuditRecord;
pub use crate::audit::{AuditSink, NoAudit};

/// Records waiting for the sink; beyond this they are dropped and counted.
const QUEUE_CAPACITY: usize = 4096;
/// How long the worker keeps gathering after the first record of a batch
/// before it hands the batch over, unless a flush is waiting (which unparks
/// it): a busy service wakes it once per few milliseconds of decisions
/// instead of once per decision, and the sink looks each project up once
/// per batch.
const BATCH_LINGER: Duration = Duration::from_millis(5);
/// How long dropping the engine waits for queued records to reach the sink.
const DRAIN_ON_DROP: Duration = Duration::from_secs(2);

/// The queue in front of a sink.
pub(crate) struct AuditQueue {
    sender: Option<SyncSender<AuditRecord>>,
    /// The worker, unparked by a flush or a drop that must not wait out
    /// its linger (after setting `hurry`).
    worker: Option<std::thread::Thread>,
    hurry: Arc<AtomicBool>,
    /// Signalled by the worker when it has drained the queue and stopped
    /// (behind a mutex: a receiver is not `Sync`, the engine is).
    done: Mutex<Option<Receiver<()>>>,
    dropped: Arc<AtomicU64>,
    /// Records pushed and not yet handed to the sink.
    in_flight: Arc<AtomicU64>,
    /// [`AuditDelivery::AfterReply`] only.
    held: Option<Held>,
}

/// The sink of [`AuditDelivery::AfterReply`] and the records waiting for it.
struct Held {
    sink: Arc<dyn AuditSink>,
    records: Mutex<Vec<AuditRecord>>,
}

impl AuditQueue {
    pub fn new(sink: Arc<dyn AuditSink>, delivery: AuditDelivery) -> AuditQueue {
        if !sink.enabled() {
            return AuditQueue::discard();
        }
        if delivery == AuditDelivery::AfterReply {
            let mut queue = AuditQueue::discard();
            queue.held = Some(Held {
                sink,
                records: Mutex::new(Vec::new()),
            });
            return queue;
        }
        let dropped = Arc::new(AtomicU64::new(0));
        let in_flight = Arc::new(AtomicU64::new(0));
        let worker_in_flight = Arc::clone(&in_flight);
        let hurry = Arc::new(AtomicBool::new(false));
        let worker_hurry = Arc::clone(&hurry);
        let (sender, records) = mpsc::sync_channel::<AuditRecord>(QUEUE_CAPACITY);
        let (finished, done) = mpsc::channel::<()>();
        let spawned = std::thread::Builder::new()
            .name("vouch-audit".to_owned())
            .spawn(move || {
                while let Some(batch) = next_batch(&records, &worker_hurry) {
                    let n = u64::try_from(batch.len()).unwrap_or(u64::MAX);
                    deliver(sink.as_ref(), batch);
                    worker_in_flight.fetch_sub(n, Ordering::SeqCst);
                }
                let _ = finished.send(());
            });
        match spawned {
            Ok(handle) => AuditQueue {
                sender: Some(sender),
                worker: Some(handle.thread().clone()),
                hurry,
                done: Mutex::new(Some(done)),
                dropped,
                in_flight,
                held: None,
            },
            Err(e) => {
                tracing::warn!(error = %e, "cannot start the audit worker; auditing is off");
                AuditQueue {
                    sender: None,
                    worker: None,
                    hurry,
                    done: Mutex::new(None),
                    dropped,
                    in_flight,
                    held: None,
                }
            }
        }
    }

    /// A queue that discards everything, with no thread.
    pub fn discard() -> AuditQueue {
        AuditQueue {
            sender: None,
            worker: None,
            hurry: Arc::new(AtomicBool::new(false)),
            done: Mutex::new(None),
            dropped: Arc::new(AtomicU64::new(0)),
            in_flight: Arc::new(AtomicU64::new(0)),
            held: None,
        }
    }

    /// Hands a record to the worker without waiting.
    pub fn push(&self, record: AuditRecord) {
        if let Some(held) = &self.held {
            let mut held = held.records.lock().unwrap_or_else(PoisonError::into_inner);
            if held.len() < QUEUE_CAPACITY {
                held.push(record);
            } else {
                drop(held);
                self.count_dropped();
            }
            return;
        }
        let Some(sender) = &self.sender else { return };
        // Counted before the send: the worker may finish it at once. The
        // count bounds the queue and the worker's batch together.
        if self.in_flight.fetch_add(1, Ordering::SeqCst) >= QUEUE_CAPACITY as u64 {
            self.in_flight.fetch_sub(1, Ordering::SeqCst);
            self.count_dropped();
            return;
        }
        match sender.try_send(record) {
            Ok(()) => {}
            Err(TrySendError::Full(_)) => {
                self.in_flight.fetch_sub(1, Ordering::SeqCst);
                self.count_dropped();
            }
            Err(TrySendError::Disconnected(_)) => {
                self.in_flight.fetch_sub(1, Ordering::SeqCst);
            }
        }
    }

    fn count_dropped(&self) {
        let before = self.dropped.fetch_add(1, Ordering::Relaxed);
        if before.is_power_of_two() || before == 0 {
            tracing::warn!(
                dropped = before.saturating_add(1),
                "the audit sink is behind; audit records were dropped"
            );
        }
    }

    /// Waits until every record pushed so far has reached the sink, or
    /// `deadline` passes (`false`). Short-lived processes call it after
    /// their reply is out. Held records ([`AuditDelivery::AfterReply`]) are
    /// handed to the sink here, on this thread.
    pub fn wait_delivered(&self, deadline: Instant) -> bool {
        if let Some(held) = &self.held {
            let records =
                std::mem::take(&mut *held.records.lock().unwrap_or_else(PoisonError::into_inner));
            if !records.is_empty() {
                deliver(held.sink.as_ref(), records);
            }
            return true;
        }
        while self.in_flight.load(Ordering::SeqCst) > 0 {
            if Instant::now() >= deadline {
                return false;
            }
            self.hurry();
            std::thread::sleep(Duration::from_millis(1));
        }
        true
    }

    /// Ends the worker's linger: what it gathered goes to the sink now.
    fn hurry(&self) {
        if let Some(worker) = &self.worker {
            self.hurry.store(true, Ordering::SeqCst);
            worker.unpark();
        }
    }

    /// Records dropped because the sink fell behind.
    #[cfg(test)]
    pub fn dropped(&self) -> u64 {
        self.dropped.load(Ordering::Relaxed)
    }
}

/// The next batch: waits for a first record, then gathers what arrives
/// within [`BATCH_LINGER`] (at most [`QUEUE_CAPACITY`] records). `None` once
/// the queue is closed and empty.
fn next_batch(records: &Receiver<AuditRecord>, hurry: &AtomicBool) -> Option<Vec<AuditRecord>> {
    let first = records.recv().ok()?;
    let linger_until = Instant::now() + BATCH_LINGER;
    let mut batch = vec![first];
    while batch.len() < QUEUE_CAPACITY {
        match records.try_recv() {
            Ok(record) => batch.push(record),
            Err(TryRecvError::Disconnected) => break,
            Err(TryRecvError::Empty) => {
                let left = linger_until.saturating_duration_since(Instant::now());
                if left.is_zero() || hurry.swap(false, Ordering::SeqCst) {
                    break;
                }
                // Parked rather than waiting in `recv`: records queued
                // meanwhile do not wake this thread one by one; a flush or
                // the queue's drop sets `hurry` and unparks it.
                std::thread::park_timeout(left);
            }
        }
    }
    Some(batch)
}

/// Hands a batch to the sink; a panicking sink loses what it had not
/// taken, not the worker or the process.
fn deliver(sink: &dyn AuditSink, records: Vec<AuditRecord>) {
    let delivered = std::panic::catch_unwind(std::panic::AssertUnwindSafe(move || {
        sink.record_all(records)
    }));
    if delivered.is_err() {
        tracing::warn!("the audit sink panicked; records were lost");
    }
}

impl Drop for AuditQueue {
    fn drop(&mut self) {
        // Closing the sender ends the worker's loop once the queue is empty.
        drop(self.sender.take());
        self.hurry();
        let done = self
            .done
            .get_mut()
            .unwrap_or_else(PoisonError::into_inner)
            .take();
        if let Some(done) = done
            && done.recv_timeout(DRAIN_ON_DROP).is_err()
        {
            tracing::warn!("the audit sink did not drain in time; queued records may be lost");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::decision::{Outcome, Stage};
    use crate::pipeline::RequestFacts;

    fn record(i: u64) -> AuditRecord {
        AuditRecord {
            at_ms: i,
            request_hash: "h".into(),
            facts: RequestFacts {
                request_id: None,
                tool_call_id: None,
                session_id: "s".into(),
                turn_id: "t".into(),
                source: None,
                agent: None,
                surface: "bash".into(),
                tool: None,
                command: Some("ls".into()),
                path: None,
                resolved_path: None,
                home: None,
                destination: None,
                cwd: None,
                issue_grant: false,
                starts_another: None,
            },
            outcome: Outcome::Allow,
            stage: Stage::Reviewer,
            abstain: false,
            rule_id: None,
            risk_level: None,
        }
    }

    struct Collect(Mutex<Vec<u64>>);
    impl AuditSink for Collect {
        fn record(&self, record: AuditRecord) {
            assert_ne!(record.at_ms, 3, "a broken sink");
            self.0.lock().unwrap().push(record.at_ms);
        }
    }

    #[test]
    fn records_reach_the_sink_in_order_and_a_panic_loses_only_its_record() {
        let sink = Arc::new(Collect(Mutex::new(Vec::new())));
        let queue = AuditQueue::new(sink.clone(), AuditDelivery::Background);
        for i in 1..=5 {
            queue.push(record(i));
        }
        drop(queue);
        assert_eq!(*sink.0.lock().unwrap(), vec![1, 2, 4, 5]);
    }

    struct OnThread(Mutex<Vec<(u64, std::thread::ThreadId)>>);
    impl AuditSink for OnThread {
        fn record(&self, record: AuditRecord) {
            assert_ne!(record.at_ms, 3, "a broken sink");
            let here = std::thread::current().id();
            self.0.lock().unwrap().push((record.at_ms, here));
        }
    }

    #[test]
    fn after_reply_records_wait_and_reach_the_sink_on_the_callers_thread() {
        let sink = Arc::new(OnThread(Mutex::new(Vec::new())));
        let queue = AuditQueue::new(sink.clone(), AuditDelivery::AfterReply);
        for i in 1..=5 {
            queue.push(record(i));
        }
        assert!(
            sink.0.lock().unwrap().is_empty(),
            "delivered before the flush"
        );
        assert!(queue.wait_delivered(Instant::now()));
        let here = std::thread::current().id();
        let got = sink.0.lock().unwrap().clone();
        assert_eq!(got, [1, 2, 4, 5].map(|i| (i, here)).to_vec());
        // Delivered once: a second flush has nothing left.
        assert!(queue.wait_delivered(Instant::now()));
        assert_eq!(sink.0.lock().unwrap().len(), 4);
        for i in 0..(QUEUE_CAPACITY as u64 + 7) {
            queue.push(record(i + 10));
        }
        assert_eq!(queue.dropped(), 7);
    }

    struct Stuck(std::sync::Barrier);
    impl AuditSink for Stuck {
        fn record(&self, _record: AuditRecord) {
            self.0.wait();
        }
    }

    #[test]
    fn a_stuck_sink_never_blocks_the_caller() {
        let sink = Arc::new(Stuck(std::sync::Barrier::new(2)));
        let queue = AuditQueue::new(sink.clone(), AuditDelivery::Background);
        // Reaching the assertion at all shows that pushing never waited.
        for i in 0..(QUEUE_CAPACITY as u64 + 100) {
            queue.push(record(i));
        }
        assert!(queue.dropped() >= 99, "{}", queue.dropped());
        // Let the worker go so the test ends.
        std::thread::spawn(move || {
            loop {
                sink.0.wait();
            }
        });
        drop(queue);
    }
}
