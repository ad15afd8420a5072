//! The long-run knobs both differential harnesses read from the environment
//! (`bash_differential`, `inert_differential`).

/// A count from `name` (`20_000` allowed), else `default`.
pub fn env_number(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.replace('_', "").parse().ok())
        .unwrap_or(default)
}

/// The run's seed from `name`: a number, `random`, or `default`.
pub fn seed(name: &str, default: u64) -> u64 {
    match std::env::var(name).ok().as_deref() {
        Some("random") => std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos() as u64)
            .unwrap_or(default),
        Some(n) => n.parse().unwrap_or(default),
        None => default,
    }
}
