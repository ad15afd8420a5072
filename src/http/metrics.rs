//! Counters and histograms for `GET /metrics`, in the Prometheus text format.
//!
//! The label sets are closed and small (outcomes × stages, a handful of
//! routes), so the hot path is a few relaxed atomic adds on fixed arrays; no
//! registry, no allocation per request. What is exported, and from what:
//!
//! - `vouch_decisions_total{decision,stage}` — every decision returned;
//! - `vouch_review_duration_seconds{stage}` — wall time of `Engine::review`;
//! - `vouch_model_calls_total{outcome}` — from `decision.review.calls`: a
//!   review that produced a verdict counts one `verdict` and `calls - 1`
//!   `retried`; a failed review counts all its calls as `failure`;
//! - `vouch_model_tokens_total{direction}` — from `decision.review`;
//! - `vouch_breaker_open_decisions_total` — decisions with stage `breaker`;
//! - `vouch_grants_minted_total` / `vouch_grants_consumed_total` /
//!   `vouch_grants_rejected_total` — allows carrying a grant, consumes that
//!   returned true / false;
//! - `vouch_http_requests_total{route,status}`, `vouch_rate_limited_total{role}`,
//!   `vouch_hook_fail_closed_total{reason}`, `vouch_reviews_in_flight`;
//! - `vouch_log_lines_dropped_total` — from [`crate::telemetry`]'s lossy
//!   log writer: lines stderr did not take in time;
//! - `vouch_connections_open`, `vouch_connections_refused_total{reason}`
//!   (answered 503 over `server.max_connections_per_peer` or
//!   `server.max_connections`), `vouch_header_timeouts_total{request}`
//!   (`first`: answered 408, headers not complete within
//!   `server.header_timeout_ms` of connecting; `later`: a kept-alive
//!   connection closed waiting for its next request's headers) — from
//!   [`crate::server`]'s accept loop.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::sync::Mutex;
use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};
use std::time::Duration;

use crate::decision::{Decision, Outcome, Stage};
use crate::names::named_enum;

use super::auth::Role;

/// Histogram upper bounds in seconds: sub-millisecond deterministic stages up
/// to the 90 s default reviewer deadline.
const BUCKETS: [f64; 16] = [
    0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0,
    90.0,
];

named_enum! {
    /// Why the hook route answered with a fail-closed decision of its own.
    pub enum HookFallback {
        Malformed = "malformed",
        TooLarge = "too_large",
        RateLimited = "rate_limited",
        Timeout = "timeout",
        Internal = "internal",
    }
}

named_enum! {
    /// Why a connection was answered 503 and closed as it was accepted.
    pub enum Refused {
        /// `server.max_connections_per_peer` from its address were open.
        PerPeer = "per_peer",
        /// `server.max_connections` were open.
        Total = "total",
    }
}

named_enum! {
    /// Which request's headers did not arrive within `server.header_timeout_ms`.
    pub enum HeaderTimeout {
        /// The connection's first: answered 408, closed.
        First = "first",
        /// A kept-alive connection's next: closed.
        Later = "later",
    }
}

#[derive(Default)]
struct Histogram {
    buckets: [AtomicU64; BUCKETS.len()],
    count: AtomicU64,
    sum_micros: AtomicU64,
}

impl Histogram {
    fn observe(&self, elapsed: Duration) {
        let secs = elapsed.as_secs_f64();
        // Non-cumulative storage; the renderer accumulates.
        if let Some(slot) = BUCKETS
            .iter()
            .position(|bound| secs <= *bound)
            .and_then(|i| self.buckets.get(i))
        {
            slot.fetch_add(1, Ordering::Relaxed);
        }
        self.count.fetch_add(1, Ordering::Relaxed);
        let micros = u64::try_from(elapsed.as_micros()).unwrap_or(u64::MAX);
        self.sum_micros.fetch_add(micros, Ordering::Relaxed);
    }
}

/// All service metrics. Shared by reference from the app state.
#[derive(Default)]
pub struct Metrics {
    decisions: [[AtomicU64; Stage::ALL.len()]; Outcome::ALL.len()],
    durations: [Histogram; Stage::ALL.len()],
    model_verdict: AtomicU64,
    model_retried: AtomicU64,
    model_failure: AtomicU64,
    tokens_in: AtomicU64,
    tokens_out: AtomicU64,
    grants_minted: AtomicU64,
    grants_consumed: AtomicU64,
    grants_rejected: AtomicU64,
    rate_limited: [AtomicU64; Role::ALL.len()],
    hook_fallbacks: [AtomicU64; HookFallback::ALL.len()],
    in_flight: AtomicI64,
    connections_open: AtomicI64,
    connections_refused: [AtomicU64; Refused::ALL.len()],
    header_timeouts: [AtomicU64; HeaderTimeout::ALL.len()],
    /// (route template, status) → count. A mutex is fine: the key set is
    /// bounded by the route table and the critical section is one add.
    http: Mutex<BTreeMap<(&'static str, u16), u64>>,
}

fn bump(counter: Option<&AtomicU64>, by: u64) {
    if let Some(c) = counter {
        c.fetch_add(by, Ordering::Relaxed);
    }
}

impl Metrics {
    pub fn new() -> Metrics {
        Metrics::default()
    }

    /// Records one decision returned by `Engine::review`.
    pub fn record_decision(&self, decision: &Decision, elapsed: Duration) {
        let (o, s) = (decision.outcome().index(), decision.stage().index());
        bump(self.decisions.get(o).and_then(|row| row.get(s)), 1);
        if let Some(h) = self.durations.get(s) {
            h.observe(elapsed);
        }
        if let Some(review) = decision.review() {
            let calls = u64::from(review.calls);
            match decision.stage() {
                Stage::ReviewerFailure => bump(Some(&self.model_failure), calls),
                Stage::HardDeny
                | Stage::Inert
                | Stage::Routing
                | Stage::Breaker
                | Stage::Budget
                | Stage::Cache
                | Stage::Override
                | Stage::BreakGlass
                | Stage::Reviewer
                | Stage::RiskCeiling
                | Stage::ConfigError => {
                    if calls > 0 {
                        bump(Some(&self.model_verdict), 1);
                        bump(Some(&self.model_retried), calls - 1);
                    }
                }
            }
            bump(Some(&self.tokens_in), review.input_tokens);
            bump(Some(&self.tokens_out), review.output_tokens);
        }
        if decision.grant().is_some() && decision.outcome() == Outcome::Allow {
            bump(Some(&self.grants_minted), 1);
        }
    }

    pub fn record_consume(&self, consumed: bool) {
        if consumed {
            bump(Some(&self.grants_consumed), 1);
        } else {
            bump(Some(&self.grants_rejected), 1);
        }
    }

    pub fn record_rate_limited(&self, role: Role) {
        bump(self.rate_limited.get(role.index()), 1);
    }

    pub fn record_hook_fallback(&self, why: HookFallback) {
        bump(self.hook_fallbacks.get(why.index()), 1);
    }

    pub fn record_http(&self, route: &'static str, status: u16) {
        if let Ok(mut map) = self.http.lock() {
            *map.entry((route, status)).or_insert(0) += 1;
        }
    }

    /// A connection was refused (503) as it was accepted.
    pub fn record_refused(&self, why: Refused) {
        bump(self.connections_refused.get(why.index()), 1);
    }

    /// A connection's headers did not arrive in time.
    pub fn record_header_timeout(&self, which: HeaderTimeout) {
        bump(self.header_timeouts.get(which.index()), 1);
    }

    /// Marks one connection as open until the guard drops.
    pub fn connection_opened(&self) -> InFlight<'_> {
        self.connections_open.fetch_add(1, Ordering::Relaxed);
        InFlight(&self.connections_open)
    }

    /// Marks one review as running until the guard drops.
    pub fn review_started(&self) -> InFlight<'_> {
        self.in_flight.fetch_add(1, Ordering::Relaxed);
        InFlight(&self.in_flight)
    }

    /// The Prometheus text exposition (format 0.0.4).
    pub fn render(&self) -> String {
        let mut out = String::with_capacity(8 * 1024);
        self.render_decisions(&mut out);
        self.render_durations(&mut out);
        self.render_model(&mut out);
        self.render_counters(&mut out);
        self.render_connections(&mut out);
        self.render_http(&mut out);
        out
    }

    fn render_decisions(&self, out: &mut String) {
        header(
            out,
            "vouch_decisions_total",
            "counter",
            "Decisions returned, by outcome and deciding stage.",
        );
        for (outcome, row) in Outcome::ALL.iter().zip(&self.decisions) {
            for (stage, count) in Stage::ALL.iter().zip(row) {
                let _ = writeln!(
                    out,
                    "vouch_decisions_total{{decision=\"{outcome}\",stage=\"{stage}\"}} {}",
                    load(count)
                );
            }
        }
        header(
            out,
            "vouch_breaker_open_decisions_total",
            "counter",
            "Decisions made by an open per-turn circuit breaker.",
        );
        let breaker: u64 = self
            .decisions
            .iter()
            .filter_map(|row| row.get(Stage::Breaker.index()))
            .map(load)
            .sum();
        let _ = writeln!(out, "vouch_breaker_open_decisions_total {breaker}");
    }

    fn render_durations(&self, out: &mut String) {
        header(
            out,
            "vouch_review_duration_seconds",
            "histogram",
            "Wall time of one review, by deciding stage.",
        );
        for (stage, h) in Stage::ALL.iter().zip(&self.durations) {
            let mut cumulative = 0;
            for (bound, slot) in BUCKETS.iter().zip(&h.buckets) {
                cumulative += load(slot);
                let _ = writeln!(
                    out,
                    "vouch_review_duration_seconds_bucket{{stage=\"{stage}\",le=\"{bound}\"}} {cumulative}"
                );
            }
            let count = load(&h.count);
            let _ = writeln!(
                out,
                "vouch_review_duration_seconds_bucket{{stage=\"{stage}\",le=\"+Inf\"}} {count}"
            );
            let _ = writeln!(
                out,
                "vouch_review_duration_seconds_sum{{stage=\"{stage}\"}} {}",
                load(&h.sum_micros) as f64 / 1e6
            );
            let _ = writeln!(
                out,
                "vouch_review_duration_seconds_count{{stage=\"{stage}\"}} {count}"
            );
        }
    }

    fn render_model(&self, out: &mut String) {
        header(
            out,
            "vouch_model_calls_total",
            "counter",
            "Reviewer model calls, by outcome.",
        );
        for (label, c) in [
            ("verdict", &self.model_verdict),
            ("retried", &self.model_retried),
            ("failure", &self.model_failure),
        ] {
            let _ = writeln!(
                out,
                "vouch_model_calls_total{{outcome=\"{label}\"}} {}",
                load(c)
            );
        }
        header(
            out,
            "vouch_model_tokens_total",
            "counter",
            "Reviewer model tokens, by direction.",
        );
        for (direction, c) in [("input", &self.tokens_in), ("output", &self.tokens_out)] {
            let _ = writeln!(
                out,
                "vouch_model_tokens_total{{direction=\"{direction}\"}} {}",
                load(c)
            );
        }
    }

    fn render_counters(&self, out: &mut String) {
        for (name, help, c) in [
            (
                "vouch_grants_minted_total",
                "One-use grants issued with an allow.",
                &self.grants_minted,
            ),
            (
                "vouch_grants_consumed_total",
                "Grants consumed successfully.",
                &self.grants_consumed,
            ),
            (
                "vouch_grants_rejected_total",
                "Grant consumes that matched nothing (replay, mismatch, expiry).",
                &self.grants_rejected,
            ),
        ] {
            header(out, name, "counter", help);
            let _ = writeln!(out, "{name} {}", load(c));
        }
        header(
            out,
            "vouch_rate_limited_total",
            "counter",
            "Requests refused by the per-token rate limit.",
        );
        for (role, c) in Role::ALL.iter().zip(&self.rate_limited) {
            let _ = writeln!(
                out,
                "vouch_rate_limited_total{{role=\"{role}\"}} {}",
                load(c)
            );
        }
        header(
            out,
            "vouch_hook_fail_closed_total",
            "counter",
            "Hook answers made without a pipeline decision, by reason.",
        );
        for (why, c) in HookFallback::ALL.iter().zip(&self.hook_fallbacks) {
            let _ = writeln!(
                out,
                "vouch_hook_fail_closed_total{{reason=\"{why}\"}} {}",
                load(c)
            );
        }
        header(
            out,
            "vouch_reviews_in_flight",
            "gauge",
            "Reviews currently running or waiting for a slot.",
        );
        let _ = writeln!(
            out,
            "vouch_reviews_in_flight {}",
            self.in_flight.load(Ordering::Relaxed)
        );
    }

    fn render_connections(&self, out: &mut String) {
        header(
            out,
            "vouch_connections_open",
            "gauge",
            "Connections open now.",
        );
        let _ = writeln!(
            out,
            "vouch_connections_open {}",
            self.connections_open.load(Ordering::Relaxed)
        );
        header(
            out,
            "vouch_connections_refused_total",
            "counter",
            "Connections answered 503 and closed as they were accepted, by the cap they met.",
        );
        for (why, c) in Refused::ALL.iter().zip(&self.connections_refused) {
            let _ = writeln!(
                out,
                "vouch_connections_refused_total{{reason=\"{why}\"}} {}",
                load(c)
            );
        }
        header(
            out,
            "vouch_header_timeouts_total",
            "counter",
            "Connections whose request headers did not arrive within server.header_timeout_ms \
             (first: answered 408; later: a kept-alive connection closed).",
        );
        for (which, c) in HeaderTimeout::ALL.iter().zip(&self.header_timeouts) {
            let _ = writeln!(
                out,
                "vouch_header_timeouts_total{{request=\"{which}\"}} {}",
                load(c)
            );
        }
    }

    fn render_http(&self, out: &mut String) {
        header(
            out,
            "vouch_log_lines_dropped_total",
            "counter",
            "Log lines dropped because stderr was not taking them (logging never blocks).",
        );
        let _ = writeln!(
            out,
            "vouch_log_lines_dropped_total {}",
            crate::telemetry::dropped_log_lines()
        );

        header(
            out,
            "vouch_http_requests_total",
            "counter",
            "HTTP requests, by route template and status.",
        );
        if let Ok(map) = self.http.lock() {
            for ((route, status), count) in map.iter() {
                let _ = writeln!(
                    out,
                    "vouch_http_requests_total{{route=\"{route}\",status=\"{status}\"}} {count}"
                );
            }
        }
    }
}

fn load(c: &AtomicU64) -> u64 {
    c.load(Ordering::Relaxed)
}

fn header(out: &mut String, name: &str, kind: &str, help: &str) {
    let _ = writeln!(out, "# HELP {name} {help}");
    let _ = writeln!(out, "# TYPE {name} {kind}");
}

/// Decrements a gauge on drop (reviews in flight, connections open), so a
/// cancelled review (client gone, timeout) still leaves the gauge right.
pub struct InFlight<'a>(&'a AtomicI64);

impl Drop for InFlight<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::Relaxed);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::decision::{Grant, ReviewStats};

    #[test]
    fn decisions_model_calls_and_grants_are_counted() {
        let m = Metrics::new();
        let verdict = crate::reviewer::Verdict {
            outcome: Outcome::Allow,
            risk_level: crate::decision::RiskLevel::Low,
            user_authorization: crate::decision::UserAuthorization::High,
            rationale: "ok".into(),
            suggestion: None,
        };
        let judged = crate::decision::Judged {
            verdict: &verdict,
            outcome: Outcome::Allow,
            ceiling: false,
            rationale: "ok".into(),
        };
        let extras = crate::decision::VerdictExtras {
            review: Some(ReviewStats {
                model: "m".into(),
                calls: 2,
                input_tokens: 100,
                output_tokens: 7,
                ..ReviewStats::default()
            }),
            grant: Some(Grant {
                token: "t".into(),
                expires_at_ms: 1,
            }),
            break_glass_enabled: true,
        };
        let d = Decision::verdict(
            &judged,
            crate::decision::VerdictSource::Model,
            "h".into(),
            extras,
        );
        m.record_decision(&d, Duration::from_millis(3));
        let b = Decision::breaker(crate::config::FailClosed::Defer, "h".into(), "open".into());
        m.record_decision(&b, Duration::from_micros(100));
        m.record_consume(true);
        let text = m.render();
        assert!(text.contains("vouch_decisions_total{decision=\"allow\",stage=\"reviewer\"} 1"));
        assert!(text.contains("vouch_model_calls_total{outcome=\"verdict\"} 1"));
        assert!(text.contains("vouch_model_calls_total{outcome=\"retried\"} 1"));
        assert!(text.contains("vouch_model_tokens_total{direction=\"input\"} 100"));
        assert!(text.contains("vouch_breaker_open_decisions_total 1"));
        assert!(text.contains("vouch_grants_minted_total 1"));
        assert!(text.contains("vouch_grants_consumed_total 1"));
        assert!(
            text.contains(
                "vouch_review_duration_seconds_bucket{stage=\"reviewer\",le=\"0.0025\"} 0"
            )
        );
        assert!(
            text.contains(
                "vouch_review_duration_seconds_bucket{stage=\"reviewer\",le=\"0.005\"} 1"
            )
        );
        assert!(text.contains("vouch_review_duration_seconds_count{stage=\"breaker\"} 1"));
    }
}
