//! What the audit receives for one final decision: the request's action
//! fields, owned ([`RequestFacts`]), and the decision's outcome, stage and
//! rule ([`AuditRecord`]). Built by the decision table
//! ([`crate::pipeline`]) and handed to an [`super::sink::AuditSink`].

use crate::decision::{Decision, Outcome, RiskLevel, Stage};
use crate::evidence::redact;
use crate::request::Request;

/// The action fields of a request, owned: what the audit and the denial
/// summary need after the request itself is gone.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RequestFacts {
    pub request_id: Option<String>,
    pub tool_call_id: Option<String>,
    pub session_id: String,
    pub turn_id: String,
    pub source: Option<String>,
    pub agent: Option<String>,
    pub surface: String,
    pub tool: Option<String>,
    pub command: Option<String>,
    pub path: Option<String>,
    /// The path as the harness resolved it, and the caller's home: the audit
    /// derives a file rule's subject from them.
    pub resolved_path: Option<String>,
    pub home: Option<String>,
    pub destination: Option<String>,
    pub cwd: Option<String>,
    pub issue_grant: bool,
    /// Whether the command starts another command, read from the request's
    /// analysis (see `pipeline::Inputs::starts_another`); `None` lets the audit
    /// work it out.
    pub starts_another: Option<bool>,
}

impl RequestFacts {
    pub fn of(r: &Request) -> RequestFacts {
        RequestFacts {
            request_id: r.id.clone(),
            tool_call_id: r.tool_call_id.clone(),
            session_id: r.session_id.clone(),
            turn_id: r.turn().to_owned(),
            source: r.source.clone(),
            agent: r.agent.clone(),
            surface: r.surface.as_str().to_owned(),
            tool: r.tool.clone(),
            command: r.command.clone(),
            path: r.path.clone(),
            resolved_path: r.resolved_path.clone(),
            home: r.home.clone(),
            destination: r.destination.clone(),
            cwd: r.cwd.clone(),
            issue_grant: r.issue_grant,
            starts_another: None,
        }
    }

    /// [`RequestFacts::of`] with what the request's analysis said.
    pub fn analysed(r: &Request, starts_another: Option<bool>) -> RequestFacts {
        RequestFacts {
            starts_another,
            ..RequestFacts::of(r)
        }
    }

    /// The command or target, redacted: what an operator is shown.
    pub(crate) fn redacted_target(&self) -> String {
        let target = [&self.command, &self.path, &self.destination, &self.tool]
            .into_iter()
            .find_map(Option::as_deref)
            .unwrap_or("");
        redact::redact_text(target).into_owned()
    }
}

/// One final decision as the audit sees it: plain data, raw action fields
/// included (the audit module templates or HMACs them and never stores them
/// as they are, design §8).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AuditRecord {
    pub at_ms: u64,
    pub request_hash: String,
    pub facts: RequestFacts,
    pub outcome: Outcome,
    pub stage: Stage,
    pub abstain: bool,
    pub rule_id: Option<String>,
    pub risk_level: Option<RiskLevel>,
}

impl AuditRecord {
    pub fn of(facts: RequestFacts, at_ms: u64, d: &Decision) -> AuditRecord {
        AuditRecord {
            at_ms,
            request_hash: d.request_hash().to_owned(),
            facts,
            outcome: d.outcome(),
            stage: d.stage(),
            abstain: d.abstain(),
            rule_id: d.rule_id().map(str::to_owned),
            risk_level: d.risk_level(),
        }
    }
}
