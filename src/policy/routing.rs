//! Routing (design §6.2): filled in by the config/routing work.
