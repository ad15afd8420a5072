//! Resource limits at the edge: per-token rate limit, body size and request
//! deadline; `server.max_concurrent_reviews` is checked here and enforced by
//! the engine around each model call.
//!
//! They protect two things: the reviewer model (every review may cost money
//! and holds a provider connection) and the service itself (one runaway agent
//! loop must not starve every other developer's agent on the same host).

use std::num::NonZeroU32;
use std::time::Duration;

use governor::clock::{Clock, DefaultClock};
use governor::state::keyed::DefaultKeyedStateStore;
use governor::{Quota, RateLimiter};

use crate::config::{Config, ServerConfig};

use super::auth::Role;

/// Slack added to `reviewer.timeout_ms` for the whole HTTP request, so the
/// reviewer's own deadline (and its fail-closed decision) always fires first;
/// the HTTP timeout only catches a stuck body upload or a wedged engine.
pub const REQUEST_TIMEOUT_SLACK: Duration = Duration::from_secs(5);

/// How often idle rate-limit keys are dropped.
pub const RETAIN_RECENT_EVERY: Duration = Duration::from_secs(60);

#[derive(Debug, thiserror::Error)]
pub enum LimitsError {
    #[error("key `server.{key}` must be at least 1, got {value}")]
    Zero { key: &'static str, value: u64 },
    #[error("key `server.max_body_bytes` is {value}, larger than this platform can address")]
    BodyTooLarge { value: u64 },
}

/// The limits of one service instance.
pub struct Limits {
    limiter: RateLimiter<Role, DefaultKeyedStateStore<Role>, DefaultClock>,
    pub max_body_bytes: usize,
    pub request_timeout: Duration,
}

impl Limits {
    pub fn from_config(config: &Config) -> Result<Limits, LimitsError> {
        let server: &ServerConfig = &config.server;
        let per_second =
            NonZeroU32::new(server.rate_limit_per_second).ok_or(LimitsError::Zero {
                key: "rate_limit_per_second",
                value: 0,
            })?;
        // Burst = 2x the rate (config/default.toml), saturating at u32::MAX.
        let burst = per_second.saturating_mul(NonZeroU32::MIN.saturating_add(1));
        let quota = Quota::per_second(per_second).allow_burst(burst);
        if server.max_concurrent_reviews == 0 {
            return Err(LimitsError::Zero {
                key: "max_concurrent_reviews",
                value: 0,
            });
        }
        let max_body_bytes =
            usize::try_from(server.max_body_bytes).map_err(|_| LimitsError::BodyTooLarge {
                value: server.max_body_bytes,
            })?;
        if max_body_bytes == 0 {
            return Err(LimitsError::Zero {
                key: "max_body_bytes",
                value: 0,
            });
        }
        Ok(Limits {
            limiter: RateLimiter::keyed(quota),
            max_body_bytes,
            request_timeout: Duration::from_millis(config.reviewer.timeout_ms)
                .saturating_add(REQUEST_TIMEOUT_SLACK),
        })
    }

    /// `Ok` when `role` may make one more request now; otherwise how long to
    /// wait, in whole seconds (at least 1, as `Retry-After` wants).
    pub fn check_rate(&self, role: Role) -> Result<(), u64> {
        match self.limiter.check_key(&role) {
            Ok(()) => Ok(()),
            Err(not_until) => {
                let wait = not_until.wait_time_from(self.limiter.clock().now());
                let secs = wait.as_secs() + u64::from(wait.subsec_nanos() > 0);
                Err(secs.max(1))
            }
        }
    }

    /// Forgets keys idle long enough to be back at full burst.
    pub fn retain_recent(&self) {
        self.limiter.retain_recent();
        self.limiter.shrink_to_fit();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rate_limit_refuses_past_the_burst_and_says_when() {
        let mut config = Config::defaults().unwrap();
        config.server.rate_limit_per_second = 1;
        let limits = Limits::from_config(&config).unwrap();
        assert!(limits.check_rate(Role::Adapter).is_ok());
        assert!(limits.check_rate(Role::Adapter).is_ok());
        assert_eq!(limits.check_rate(Role::Adapter), Err(1));
        // Keys are independent: the operator still has its burst.
        assert!(limits.check_rate(Role::Operator).is_ok());
        limits.retain_recent();
    }

    #[test]
    fn zero_limits_are_refused_by_name() {
        let mut config = Config::defaults().unwrap();
        config.server.max_concurrent_reviews = 0;
        let err = Limits::from_config(&config).err().unwrap().to_string();
        assert!(err.contains("server.max_concurrent_reviews"), "{err}");
        let mut config = Config::defaults().unwrap();
        config.server.rate_limit_per_second = 0;
        let err = Limits::from_config(&config).err().unwrap().to_string();
        assert!(err.contains("server.rate_limit_per_second"), "{err}");
    }

    #[test]
    fn request_timeout_exceeds_the_reviewer_deadline() {
        let config = Config::defaults().unwrap();
        let limits = Limits::from_config(&config).unwrap();
        assert!(limits.request_timeout > Duration::from_millis(config.reviewer.timeout_ms));
    }
}
