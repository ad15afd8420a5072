//! Deterministic policy: the stages that decide without a model and look
//! at more than the configuration. (Routing is compiled with the
//! configuration, `config::routing`; the risk ceilings sit with the
//! decision they make, `decision::ceiling`; the credential paths are a
//! leaf, `credentials`.)
//!
//! The hard denies ([`hard_deny`]) are pure functions over plain data (the
//! request, its one analysis, the configuration, the protected locations
//! the engine hands in), so each can be tested alone and benchmarked on the
//! hot path.
//!
//! The inert stage ([`inert`]) is a function of the request, its analysis,
//! the configuration and the machine's answers to the questions it asks
//! through [`inert::Files`]: an allow without a model must hold for the
//! files that are there, so it looks at them at decision time — paths
//! resolved through symbolic links, hard links, globs expanded against
//! directories, git's repository, configuration and hooks, the trees a
//! search would walk and their ignore files. Nothing in `policy` opens the
//! filesystem itself (`tests/it/layering.rs` fails if it does): the engine
//! supplies the disk (`engine::Disk`), runs the stage once per request and
//! hands its verdict to the decision table as data. The verdict still
//! depends on the machine at decision time; that is the point.

pub mod hard_deny;
pub mod inert;
