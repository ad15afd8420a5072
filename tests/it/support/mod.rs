//! Shared test support for the integration tests.

pub mod model_server;
pub mod serve;
