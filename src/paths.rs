//! Where vouch keeps its files (design §2): filled in by the config work.
