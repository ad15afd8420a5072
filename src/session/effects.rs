//! The effects the decision table returns ([`crate::pipeline`]) with its
//! answer, applied by [`super::apply`] inside the caller's transaction:
//! declared here, beside what applies them, so that the state layer does
//! not import the table above it.

use crate::audit::facts::AuditRecord;
use crate::config::BreakerConfig;
use crate::names::{Outcome, RiskLevel};
use crate::reviewer::Verdict;

/// A model denial as operators are shown it (redacted).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DenialRecord {
    pub risk_level: RiskLevel,
    pub surface: String,
    pub cwd: Option<String>,
    /// Redacted command or target.
    pub summary: String,
    pub rationale: String,
}

/// What must follow a decision. State effects concern the request's
/// session, turn and hash, and are applied in one transaction; `Audit` goes
/// to the audit sink after the decision is final.
#[derive(Debug, Clone, PartialEq)]
pub enum Effect {
    /// Spend one review of `turn.max_reviews`, in the transaction that
    /// checked it, so concurrent requests of a turn never overspend.
    ReserveReview,
    /// A model verdict (or its cached replay) for the breaker; opens it when
    /// the thresholds are reached.
    CountVerdict {
        outcome: Outcome,
        breaker: BreakerConfig,
    },
    /// A reviewer failure, against `turn.max_failures`.
    CountFailure,
    /// A break glass was used: the turn's breaker closes.
    ResetBreaker,
    /// A one-use human authorization is spent.
    SpendAuthorization {
        id: i64,
    },
    /// A model denial, listed for `vouch approve` / break glass.
    RecordDenial(DenialRecord),
    /// A decisive verdict (redacted) reused for the same packet.
    CacheVerdict {
        key: String,
        verdict: Verdict,
        expires_at_ms: u64,
        max_entries: u32,
    },
    /// The grant an allow carries (only its hash is stored).
    StoreGrant {
        token_sha256: String,
        expires_at_ms: u64,
    },
    Audit(Box<AuditRecord>),
}

impl Effect {
    /// Creating or spending one-use authority must survive a power cut.
    pub fn needs_full_sync(&self) -> bool {
        match self {
            Effect::SpendAuthorization { .. } | Effect::StoreGrant { .. } => true,
            Effect::ReserveReview
            | Effect::CountVerdict { .. }
            | Effect::CountFailure
            | Effect::ResetBreaker
            | Effect::RecordDenial(_)
            | Effect::CacheVerdict { .. }
            | Effect::Audit(_) => false,
        }
    }

    /// Whether the effect writes the state database.
    pub fn is_state(&self) -> bool {
        !matches!(self, Effect::Audit(_))
    }
}
