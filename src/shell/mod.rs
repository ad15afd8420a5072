//! Bash parsing into the units that would actually run (design §6.1).
