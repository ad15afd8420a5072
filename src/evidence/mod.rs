//! Evidence: what the reviewer model is allowed to see, and how much of it.
//!
//! The reviewer is the only stage that ships request data off the machine, so
//! everything it reads is prepared here, in a fixed order: secrets are
//! redacted first ([`redact`]), then the few transcript items that bear on
//! the action are selected, fenced as untrusted data and fitted to a token
//! budget ([`packet`]) measured by a conservative estimator ([`estimate`]).
//! Nothing in this module does I/O; the reviewer client sends what
//! [`packet::build`] returns.
//!
//! # Choices where the design is silent
//!
//! - Key names are split into words; the last word decides. `password`,
//!   `token`, `secret`, `cookie`, `credentials`, `api_key`, `private_key`
//!   and run-together `PGPASSWORD` always hide their value; `key`, `auth`,
//!   `session`, `signature` hide it only when it looks random; `author`,
//!   `tokenizer`, `keyboard`, `monkey`, `secretary`, `public_key`,
//!   `max_tokens` and `password_file` are ordinary.
//! - Variable references (`$TOKEN`, `${{ secrets.X }}`), file paths and
//!   `null`/`true`/`false` under a secret name are kept: they say where a
//!   secret comes from, which the reviewer needs, without being one.
//! - The agent's `reason` sits inside the fence as secondary evidence, not in
//!   the request JSON: it is agent-written and the first thing dropped.
//! - Only the latest summary is included; each one supersedes the last.
//! - Evidence is one canonical JSON object per line, so text cannot forge a
//!   host label, and per-attempt ids are replaced by unit numbers that pair
//!   a call with its results.
//! - Over budget, after the documented steps (reason, older structured
//!   matches, optional producer/result units) the summary and then older
//!   user messages go, oldest first.

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
