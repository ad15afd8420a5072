//! The policy audit as the engine's [`AuditSink`]: the decision core emits
//! one plain [`AuditRecord`] per final decision; this turns it into an
//! [`Observation`] (with the project's audit settings) and queues it on the
//! audit writer. It runs on the engine's audit worker thread, never on a
//! decision's path, and [`Audit::observe`] itself never blocks.

use std::collections::HashMap;
use std::path::PathBuf;

use super::facts::AuditRecord;
use super::{Audit, Observation, ProjectAudit, What, record};
use crate::request::Surface;

/// Finds the project root and audit settings in force for a working
/// directory (the project overlay may only turn auditing off or shorten
/// retention).
pub type ProjectLookup = Box<dyn Fn(Option<&str>) -> (Option<PathBuf>, ProjectAudit) + Send + Sync>;

/// Final decisions into the policy audit.
pub struct DecisionSink {
    audit: Audit,
    project: ProjectLookup,
}

impl DecisionSink {
    pub fn new(audit: Audit, project: ProjectLookup) -> DecisionSink {
        DecisionSink { audit, project }
    }
}

impl AuditSink for DecisionSink {
    fn record(&self, record: AuditRecord) {
        let (root, project) = (self.project)(record.facts.cwd.as_deref());
        self.audit
            .observe(Observation::of_record(record, project, root));
    }

    /// One project lookup per working directory and batch (a batch is a few
    /// milliseconds of decisions, so a project changed meanwhile is seen by
    /// the next one, as the writer's own memo does).
    fn record_all(&self, records: Vec<AuditRecord>) {
        let mut seen: HashMap<Option<String>, (Option<PathBuf>, ProjectAudit)> = HashMap::new();
        for record in records {
            let cwd = record.facts.cwd.as_deref();
            let (root, project) = match seen.get(&record.facts.cwd) {
                Some(found) => found.clone(),
                None => {
                    let found = (self.project)(cwd);
                    seen.insert(record.facts.cwd.clone(), found.clone());
                    found
                }
            };
            self.audit
                .observe(Observation::of_record(record, project, root));
        }
    }

    fn enabled(&self) -> bool {
        self.audit.settings().is_some()
    }
}

impl Observation {
    /// vouch's own final decision, from the record the decision core emits.
    pub fn of_record(
        record: AuditRecord,
        project: ProjectAudit,
        project_root: Option<PathBuf>,
    ) -> Observation {
        let facts = record.facts;
        let parsed = facts.surface.parse::<Surface>().ok();
        Observation {
            what: What::Decision {
                result: record::ResultKind::of_decision(record.outcome, record.abstain),
                resolution: record::vouch_resolution(record.stage),
                origin: None,
                pattern: record.rule_id,
                forwarded: false,
                awaits_after_event: true,
            },
            invalid_surface: parsed.is_none(),
            surface: parsed.unwrap_or(Surface::Mcp),
            tool: facts.tool,
            command: facts.command,
            path: facts.path,
            resolved_path: facts.resolved_path,
            destination: facts.destination,
            value: None,
            cwd: facts.cwd,
            home: facts.home,
            project_root,
            session_id: Some(facts.session_id),
            request_hash: Some(record.request_hash),
            source: facts.source,
            at_ms: record.at_ms,
            project,
            event_id: None,
            starts_another: facts.starts_another,
        }
    }
}

/// Receives final decisions. Called on the audit worker thread, never on a
/// decision's path.
pub trait AuditSink: Send + Sync {
    fn record(&self, record: AuditRecord);

    /// The records the worker gathered in one wake-up, in order. The
    /// default hands each to [`AuditSink::record`], a panic losing only its
    /// record; a sink may share work between them (one project lookup per
    /// directory).
    fn record_all(&self, records: Vec<AuditRecord>) {
        for record in records {
            deliver_one(self, record);
        }
    }

    /// `false` when every record would be discarded: no worker is started.
    fn enabled(&self) -> bool {
        true
    }
}

/// Auditing off (or not built yet): records are discarded.
#[derive(Debug, Clone, Copy, Default)]
pub struct NoAudit;

impl AuditSink for NoAudit {
    fn record(&self, _record: AuditRecord) {}

    fn enabled(&self) -> bool {
        false
    }
}

/// Hands one record to the sink; a panicking sink loses its record only.
fn deliver_one<S: AuditSink + ?Sized>(sink: &S, record: AuditRecord) {
    let delivered =
        std::panic::catch_unwind(std::panic::AssertUnwindSafe(move || sink.record(record)));
    if delivered.is_err() {
        tracing::warn!("the audit sink panicked; one record was lost");
    }
}
