//! Hard denies (design §6.1): filled in by the shell/hard-deny work.
