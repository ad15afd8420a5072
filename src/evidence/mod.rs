//! Evidence: what the reviewer model is allowed to see, and how much of it.
//!
//! The reviewer is the only stage that ships request data off the machine, so
//! everything it reads is prepared here, in a fixed order: secrets are
//! redacted first ([`redact`]), then the few transcript items that bear on
//! the action are selected, fenced as untrusted data and fitted to a token
//! budget ([`packet`]) measured by a conservative estimator ([`estimate`]).
//! Nothing in this module does I/O; the reviewer client sends what
//! [`packet::build`] returns.

pub mod estimate;
pub mod packet;
pub mod redact;

pub use packet::{
    DropCause, DropStep, Dropped, EvidenceCounts, Packet, PacketContext, PacketError, build,
};
pub use redact::{
    RedactionReport, SecretKind, redact_request, redact_request_with_report, redact_text,
    redact_value,
};
