//! Deterministic policy: the stages that decide without a model.
//!
//! Each is a pure function over plain data so it can be tested alone and
//! benchmarked on the hot path.

pub mod ceiling;
pub mod credentials;
pub mod hard_deny;
pub mod inert;
pub mod routing;
