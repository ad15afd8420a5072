//! When a failed model call earns its one retry (design §6.5).
//!
//! The rules are small but they decide what a user pays for: a retry is one
//! more billed call, and a wait spends the review's single deadline. So the
//! classification of an HTTP status, the reading of `Retry-After` and the
//! final "retry now, wait then retry, or fail closed" choice are pure
//! functions here, tested without a server.

use std::time::{Duration, SystemTime};

use reqwest::StatusCode;
use reqwest::header::{HeaderMap, RETRY_AFTER};

use super::FailureClass;

/// The design's hard ceiling on a Retry-After wait; `max_retry_after_ms` can
/// only lower it.
pub const RETRY_AFTER_CEILING: Duration = Duration::from_secs(5);

/// What the provider asked for before the next attempt.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RetryAfter {
    /// No hint: the retry may go at once.
    Absent,
    /// Wait this long first.
    Wait(Duration),
    /// A header that parses as neither seconds, an HTTP-date nor
    /// milliseconds. vouch does not guess how long that means.
    Unparseable,
}

/// Reads `retry-after-ms` (OpenAI's millisecond hint, preferred because it
/// is more precise) or `Retry-After` as delta-seconds or an HTTP-date
/// relative to `now`. A date in the past means "now".
pub fn parse_retry_after(headers: &HeaderMap, now: SystemTime) -> RetryAfter {
    if let Some(value) = headers.get("retry-after-ms") {
        return match value.to_str().ok().map(str::trim).map(str::parse::<f64>) {
            Some(Ok(ms)) if ms.is_finite() && ms >= 0.0 => {
                RetryAfter::Wait(Duration::from_secs_f64(ms / 1000.0))
            }
            _ => RetryAfter::Unparseable,
        };
    }
    let Some(value) = headers.get(RETRY_AFTER) else {
        return RetryAfter::Absent;
    };
    let Ok(text) = value.to_str().map(str::trim) else {
        return RetryAfter::Unparseable;
    };
    if let Ok(seconds) = text.parse::<u64>() {
        return RetryAfter::Wait(Duration::from_secs(seconds));
    }
    match httpdate::parse_http_date(text) {
        Ok(when) => RetryAfter::Wait(when.duration_since(now).unwrap_or(Duration::ZERO)),
        Err(_) => RetryAfter::Unparseable,
    }
}

/// Classifies a non-2xx reply. `body` is read only for a 429, and only to
/// tell a spent quota (which waiting cannot fix) from a rate limit.
pub fn classify_status(status: StatusCode, body: Option<&[u8]>) -> FailureClass {
    match status.as_u16() {
        401 | 403 => FailureClass::Auth,
        429 if body.is_some_and(is_quota_error) => FailureClass::Quota,
        429 => FailureClass::RateLimited,
        code @ 400..=499 => FailureClass::ClientError(code),
        500..=599 => FailureClass::Http5xx,
        code => FailureClass::UnexpectedStatus(code),
    }
}

/// OpenAI reports a spent balance as 429 with `insufficient_quota` in
/// `error.code` or `error.type`; the plain substring catches compatible
/// servers that put it elsewhere.
fn is_quota_error(body: &[u8]) -> bool {
    let marker = b"insufficient_quota";
    body.windows(marker.len()).any(|w| w == marker)
}

/// What to do after a failed attempt.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Next {
    /// Fail closed with the attempt's class.
    Stop(FailureClass),
    /// Retry at once, unchanged.
    RetryNow,
    /// Retry at once with the format correction appended.
    RetryWithCorrection,
    /// Sleep, then retry unchanged.
    WaitThenRetry(Duration),
}

/// Chooses the next step for a failed attempt.
///
/// `calls_left` counts model calls still allowed; `remaining` is the time
/// left on the review deadline; `max_wait` is the configured Retry-After
/// ceiling (already capped at [`RETRY_AFTER_CEILING`]).
pub fn next_step(
    class: FailureClass,
    retry_after: RetryAfter,
    calls_left: u32,
    remaining: Duration,
    max_wait: Duration,
) -> Next {
    let retryable = match class {
        // Malformed output: the same question with a fixed reminder.
        FailureClass::EmptyOutput | FailureClass::InvalidJson | FailureClass::SchemaInvalid => {
            Some(Next::RetryWithCorrection)
        }
        // Transient on the provider's side; a wait hint is honoured below.
        FailureClass::Connect | FailureClass::Http5xx | FailureClass::RateLimited => {
            Some(Next::RetryNow)
        }
        // Asking again cannot help, costs money, or the deadline is gone.
        FailureClass::Timeout
        | FailureClass::RetryAfterTooLong
        | FailureClass::Quota
        | FailureClass::Auth
        | FailureClass::ClientError(_)
        | FailureClass::UnexpectedStatus(_)
        | FailureClass::Truncated
        | FailureClass::Refusal
        | FailureClass::MalformedResponse
        | FailureClass::ResponseTooLarge
        | FailureClass::PacketTooLarge
        | FailureClass::Transport => None,
    };
    let Some(step) = retryable else {
        return Next::Stop(class);
    };
    // A Retry-After the provider cannot be held to fails closed at once,
    // without spending the deadline on a wait that is not allowed anyway.
    let wait = match retry_after {
        RetryAfter::Absent => Duration::ZERO,
        RetryAfter::Wait(wait) if wait <= max_wait && wait < remaining => wait,
        RetryAfter::Wait(_) => return Next::Stop(FailureClass::RetryAfterTooLong),
        RetryAfter::Unparseable => return Next::Stop(class),
    };
    if calls_left == 0 || remaining.is_zero() {
        return Next::Stop(class);
    }
    if wait.is_zero() {
        step
    } else {
        Next::WaitThenRetry(wait)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use reqwest::header::HeaderValue;

    fn headers(pairs: &[(&'static str, &str)]) -> HeaderMap {
        let mut h = HeaderMap::new();
        for (k, v) in pairs {
            h.insert(*k, HeaderValue::from_str(v).unwrap());
        }
        h
    }

    #[test]
    fn retry_after_forms() {
        let now = SystemTime::UNIX_EPOCH + Duration::from_secs(1_800_000_000);
        assert_eq!(parse_retry_after(&headers(&[]), now), RetryAfter::Absent);
        assert_eq!(
            parse_retry_after(&headers(&[("retry-after", " 3 ")]), now),
            RetryAfter::Wait(Duration::from_secs(3))
        );
        let date = httpdate::fmt_http_date(now + Duration::from_secs(2));
        assert_eq!(
            parse_retry_after(&headers(&[("retry-after", &date)]), now),
            RetryAfter::Wait(Duration::from_secs(2))
        );
        let past = httpdate::fmt_http_date(now - Duration::from_secs(60));
        assert_eq!(
            parse_retry_after(&headers(&[("retry-after", &past)]), now),
            RetryAfter::Wait(Duration::ZERO)
        );
        assert_eq!(
            parse_retry_after(
                &headers(&[("retry-after-ms", "1500"), ("retry-after", "30")]),
                now
            ),
            RetryAfter::Wait(Duration::from_millis(1500))
        );
        assert_eq!(
            parse_retry_after(&headers(&[("retry-after", "soon")]), now),
            RetryAfter::Unparseable
        );
        assert_eq!(
            parse_retry_after(&headers(&[("retry-after", "-1")]), now),
            RetryAfter::Unparseable
        );
        assert_eq!(
            parse_retry_after(&headers(&[("retry-after-ms", "NaN")]), now),
            RetryAfter::Unparseable
        );
    }

    #[test]
    fn statuses_are_classified() {
        let s = |c| StatusCode::from_u16(c).unwrap();
        assert_eq!(classify_status(s(401), None), FailureClass::Auth);
        assert_eq!(classify_status(s(403), None), FailureClass::Auth);
        assert_eq!(
            classify_status(s(404), None),
            FailureClass::ClientError(404)
        );
        assert_eq!(
            classify_status(s(400), None),
            FailureClass::ClientError(400)
        );
        assert_eq!(
            classify_status(s(429), Some(b"{}")),
            FailureClass::RateLimited
        );
        assert_eq!(
            classify_status(
                s(429),
                Some(br#"{"error":{"code":"insufficient_quota","type":"insufficient_quota"}}"#)
            ),
            FailureClass::Quota
        );
        assert_eq!(classify_status(s(500), None), FailureClass::Http5xx);
        assert_eq!(classify_status(s(529), None), FailureClass::Http5xx);
        assert_eq!(
            classify_status(s(302), None),
            FailureClass::UnexpectedStatus(302)
        );
    }

    const MAX: Duration = RETRY_AFTER_CEILING;
    const LOTS: Duration = Duration::from_secs(60);

    #[test]
    fn format_failures_retry_with_the_correction() {
        for class in [
            FailureClass::EmptyOutput,
            FailureClass::InvalidJson,
            FailureClass::SchemaInvalid,
        ] {
            assert_eq!(
                next_step(class, RetryAfter::Absent, 1, LOTS, MAX),
                Next::RetryWithCorrection
            );
            assert_eq!(
                next_step(class, RetryAfter::Absent, 0, LOTS, MAX),
                Next::Stop(class)
            );
        }
    }

    #[test]
    fn transient_failures_retry_once() {
        for class in [
            FailureClass::Connect,
            FailureClass::Http5xx,
            FailureClass::RateLimited,
        ] {
            assert_eq!(
                next_step(class, RetryAfter::Absent, 1, LOTS, MAX),
                Next::RetryNow
            );
            assert_eq!(
                next_step(class, RetryAfter::Absent, 0, LOTS, MAX),
                Next::Stop(class)
            );
        }
    }

    #[test]
    fn retry_after_is_honoured_only_within_both_limits() {
        let c = FailureClass::RateLimited;
        let one = RetryAfter::Wait(Duration::from_secs(1));
        assert_eq!(
            next_step(c, one, 1, LOTS, MAX),
            Next::WaitThenRetry(Duration::from_secs(1))
        );
        // Above the ceiling: no wait, fail closed.
        assert_eq!(
            next_step(c, RetryAfter::Wait(Duration::from_secs(30)), 1, LOTS, MAX),
            Next::Stop(FailureClass::RetryAfterTooLong)
        );
        // Within the ceiling but past the deadline.
        assert_eq!(
            next_step(c, one, 1, Duration::from_millis(900), MAX),
            Next::Stop(FailureClass::RetryAfterTooLong)
        );
        // A configured lower ceiling wins.
        assert_eq!(
            next_step(c, one, 1, LOTS, Duration::from_millis(500)),
            Next::Stop(FailureClass::RetryAfterTooLong)
        );
        assert_eq!(
            next_step(c, RetryAfter::Unparseable, 1, LOTS, MAX),
            Next::Stop(c)
        );
        assert_eq!(
            next_step(c, RetryAfter::Wait(Duration::ZERO), 1, LOTS, MAX),
            Next::RetryNow
        );
    }

    #[test]
    fn terminal_failures_never_retry() {
        for class in [
            FailureClass::Timeout,
            FailureClass::Quota,
            FailureClass::Auth,
            FailureClass::ClientError(400),
            FailureClass::ClientError(404),
            FailureClass::Truncated,
            FailureClass::Refusal,
            FailureClass::MalformedResponse,
            FailureClass::ResponseTooLarge,
            FailureClass::UnexpectedStatus(302),
            FailureClass::Transport,
        ] {
            assert_eq!(
                next_step(class, RetryAfter::Absent, 1, LOTS, MAX),
                Next::Stop(class)
            );
        }
    }
}
