//! Shared test support for the integration tests: the fixture loader, the
//! scripted model server, starting `vouch serve`, and a real engine over
//! temporary state.

pub mod fixtures;
pub mod model_server;
pub mod postgres;
pub mod proof;
pub mod serve;
pub mod state;
pub mod tls;
