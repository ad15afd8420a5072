//! The audit-sink seam as the engine drives it: one record per final
//! decision, handed over off the decision path, and a sink that panics or
//! hangs never changes a decision.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::support::state::{self, NOW, gate, request, review_with, verdict, with_command};
use vouch::clock::ManualClock;
use vouch::decision::{Decision, Outcome, RiskLevel, Stage};
use vouch::engine::{AuditSink, Engine, EngineOptions};
use vouch::pipeline::AuditRecord;

#[derive(Default)]
struct Collect(Mutex<Vec<AuditRecord>>);

impl AuditSink for Collect {
    fn record(&self, record: AuditRecord) {
        self.0.lock().unwrap().push(record);
    }
}

struct Panics;

impl AuditSink for Panics {
    fn record(&self, _record: AuditRecord) {
        panic!("a broken audit sink");
    }
}

/// Never returns while the test runs.
struct Hangs;

impl AuditSink for Hangs {
    fn record(&self, _record: AuditRecord) {
        std::thread::sleep(Duration::from_secs(3_600));
    }
}

fn engine_with(home: &std::path::Path, sink: Arc<dyn AuditSink>) -> Engine {
    let mut options = EngineOptions::isolated(home, &state::config()).unwrap();
    options.clock = Arc::new(ManualClock::new(NOW));
    options.audit = sink;
    Engine::new(options).unwrap()
}

/// A hard deny, a model allow and a model deny: what each decision is.
fn three_decisions(engine: &Engine) -> Vec<Decision> {
    let wipe = with_command(request("t1", "a"), "rm -rf /");
    let hard = gate(engine, wipe).decision().clone();
    let allowed = review_with(
        engine,
        request("t1", "b"),
        verdict(Outcome::Allow, RiskLevel::Low, "fine"),
    );
    let denied = review_with(
        engine,
        request("t1", "c"),
        verdict(Outcome::Deny, RiskLevel::High, "no"),
    );
    vec![hard, allowed, denied]
}

/// What a decision is, without its request-specific words.
fn shape(d: &Decision) -> (Outcome, Stage, Option<String>) {
    (d.outcome(), d.stage(), d.rule_id().map(str::to_owned))
}

#[test]
fn every_final_decision_reaches_the_sink_once() {
    let home = tempfile::tempdir().unwrap();
    let sink = Arc::new(Collect::default());
    let engine = engine_with(home.path(), sink.clone());
    let decisions = three_decisions(&engine);
    // Dropping the engine drains the queue (bounded).
    drop(engine);
    let records = sink.0.lock().unwrap().clone();
    assert_eq!(records.len(), decisions.len(), "{records:#?}");
    for (record, d) in records.iter().zip(&decisions) {
        assert_eq!(record.request_hash, d.request_hash());
        assert_eq!(record.outcome, d.outcome());
        assert_eq!(record.stage, d.stage());
        assert_eq!(record.rule_id.as_deref(), d.rule_id());
        assert_eq!(record.facts.session_id, state::S);
        assert_eq!(record.facts.surface, "bash");
        assert_eq!(record.facts.cwd.as_deref(), Some("/srv/app"));
    }
    assert_eq!(records[0].stage, Stage::HardDeny);
    assert_eq!(records[0].facts.command.as_deref(), Some("rm -rf /"));
}

#[test]
fn a_panicking_or_hanging_sink_changes_no_decision() {
    let reference = {
        let home = tempfile::tempdir().unwrap();
        let engine = engine_with(home.path(), Arc::new(vouch::engine::NoAudit));
        three_decisions(&engine)
    };
    for sink in [Arc::new(Panics) as Arc<dyn AuditSink>, Arc::new(Hangs)] {
        let home = tempfile::tempdir().unwrap();
        let engine = engine_with(home.path(), sink);
        let got = three_decisions(&engine);
        assert_eq!(
            got.iter().map(shape).collect::<Vec<_>>(),
            reference.iter().map(shape).collect::<Vec<_>>()
        );
        // The engine's drop waits a bounded time for a stuck sink.
        let start = Instant::now();
        drop(engine);
        assert!(start.elapsed() < Duration::from_secs(30));
    }
}
