//! The live decision feed: every final decision `vouch serve` makes, as a
//! small redacted summary, for the operator console's live view
//! (`GET /console/api/events`).
//!
//! It exists so a human can watch decisions as they happen without the
//! decision path paying for it. Publishing is one relaxed atomic load while
//! nobody watches; while someone does, the decision path clones a few short
//! fields and hands them to the blocking pool, where they are redacted
//! exactly as the state database's denial rows are (the command or target,
//! the cwd, the rationale and the suggestion through
//! [`crate::evidence::redact::redact_text`]) and sent on a bounded
//! `tokio::sync::broadcast` channel. A watcher that falls behind loses the
//! oldest items and is told how many ([`Received::Missed`]); nothing ever
//! waits for a watcher.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};

use serde::Serialize;
use tokio::sync::{broadcast, watch};

use crate::decision::{Decision, Fault, Outcome, RiskLevel, Stage};
use crate::evidence::redact::redact_text;
use crate::request::Request;

/// Items a watcher may fall behind by before it misses the oldest.
pub const FEED_CAPACITY: usize = 256;

/// One decision as the console shows it. Every free-text field is redacted.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FeedItem {
    pub at_ms: u64,
    pub session_id: String,
    pub turn_id: String,
    /// The harness (`source`) and agent the request named, if any.
    pub source: Option<String>,
    pub agent: Option<String>,
    pub surface: String,
    /// The command or target, redacted.
    pub summary: String,
    pub cwd: Option<String>,
    pub request_hash: String,
    pub decision: Outcome,
    pub stage: Stage,
    pub rule_id: Option<String>,
    pub risk_level: Option<RiskLevel>,
    pub fault: Option<Fault>,
    pub abstain: bool,
    pub rationale: String,
    pub suggestion: Option<String>,
    pub model: Option<String>,
    pub input_tokens: Option<u64>,
    pub output_tokens: Option<u64>,
    pub duration_ms: Option<u64>,
}

/// What the decision path copies while someone watches: raw, redacted later
/// off the decision path.
struct Raw {
    at_ms: u64,
    session_id: String,
    turn_id: String,
    source: Option<String>,
    agent: Option<String>,
    surface: String,
    target: String,
    cwd: Option<String>,
    decision: Decision,
}

impl Raw {
    fn of(request: &Request, decision: &Decision, at_ms: u64) -> Raw {
        let target = [
            &request.command,
            &request.path,
            &request.destination,
            &request.tool,
        ]
        .into_iter()
        .find_map(Option::as_deref)
        .unwrap_or("");
        Raw {
            at_ms,
            session_id: request.session_id.clone(),
            turn_id: request.turn().to_owned(),
            source: request.source.clone(),
            agent: request.agent.clone(),
            surface: request.surface.as_str().to_owned(),
            target: target.to_owned(),
            cwd: request.cwd.clone(),
            decision: decision.clone(),
        }
    }

    fn redacted(self) -> FeedItem {
        let d = &self.decision;
        let review = d.review();
        FeedItem {
            at_ms: self.at_ms,
            session_id: self.session_id,
            turn_id: self.turn_id,
            source: self.source.map(|s| redact_text(&s).into_owned()),
            agent: self.agent.map(|s| redact_text(&s).into_owned()),
            surface: self.surface,
            summary: redact_text(&self.target).into_owned(),
            cwd: self.cwd.map(|c| redact_text(&c).into_owned()),
            request_hash: d.request_hash().to_owned(),
            decision: d.outcome(),
            stage: d.stage(),
            rule_id: d.rule_id().map(str::to_owned),
            risk_level: d.risk_level(),
            fault: d.fault(),
            abstain: d.abstain(),
            rationale: redact_text(d.rationale()).into_owned(),
            suggestion: d.suggestion().map(|s| redact_text(s).into_owned()),
            model: review.map(|r| r.model.clone()),
            input_tokens: review.map(|r| r.input_tokens),
            output_tokens: review.map(|r| r.output_tokens),
            duration_ms: review.map(|r| r.duration_ms),
        }
    }
}

/// The publishing side, owned by the engine. Cheap to clone.
#[derive(Clone)]
pub struct Feed {
    inner: Arc<FeedInner>,
}

struct FeedInner {
    /// Made on the first subscription: a `vouch hook` process, which
    /// nobody watches, never allocates the channel's slots.
    sender: OnceLock<broadcast::Sender<Arc<FeedItem>>>,
    /// Live [`Subscription`]s: the decision path reads only this.
    watchers: AtomicUsize,
    /// Set once at shutdown so open streams end and the drain is not held.
    closed: watch::Sender<bool>,
}

impl std::fmt::Debug for Feed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Feed")
            .field("watchers", &self.inner.watchers.load(Ordering::Relaxed))
            .finish_non_exhaustive()
    }
}

impl Default for Feed {
    fn default() -> Self {
        Feed::new()
    }
}

impl Feed {
    pub fn new() -> Feed {
        let (closed, _) = watch::channel(false);
        Feed {
            inner: Arc::new(FeedInner {
                sender: OnceLock::new(),
                watchers: AtomicUsize::new(0),
                closed,
            }),
        }
    }

    /// Whether anyone is watching: one relaxed load, all an unwatched
    /// decision pays.
    pub fn watched(&self) -> bool {
        self.inner.watchers.load(Ordering::Relaxed) > 0
    }

    /// Publishes `decision` on `request` if anyone watches. Never blocks:
    /// the redaction runs on the blocking pool when a runtime is there (the
    /// service), inline otherwise.
    pub fn publish(&self, request: &Request, decision: &Decision, at_ms: u64) {
        if !self.watched() {
            return;
        }
        let raw = Raw::of(request, decision, at_ms);
        let sender = self.inner.sender().clone();
        let send = move || {
            // No receiver left is not an error: the item is simply unseen.
            let _ = sender.send(Arc::new(raw.redacted()));
        };
        match tokio::runtime::Handle::try_current() {
            Ok(runtime) => {
                drop(runtime.spawn_blocking(send));
            }
            Err(_) => send(),
        }
    }

    /// A new watcher, receiving items published from now on.
    pub fn subscribe(&self) -> Subscription {
        self.inner.watchers.fetch_add(1, Ordering::Relaxed);
        Subscription {
            receiver: self.inner.sender().subscribe(),
            closed: self.inner.closed.subscribe(),
            feed: Arc::clone(&self.inner),
        }
    }

    /// Ends every open subscription (at shutdown).
    pub fn close(&self) {
        self.inner.closed.send_replace(true);
    }
}

impl FeedInner {
    fn sender(&self) -> &broadcast::Sender<Arc<FeedItem>> {
        self.sender
            .get_or_init(|| broadcast::channel(FEED_CAPACITY).0)
    }
}

/// What a watcher gets next.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Received {
    Item(Arc<FeedItem>),
    /// The watcher fell behind and this many items were dropped for it.
    Missed(u64),
    /// The feed closed (shutdown): the stream ends.
    Closed,
}

/// One watcher. Dropping it stops the decision path copying for it.
pub struct Subscription {
    receiver: broadcast::Receiver<Arc<FeedItem>>,
    closed: watch::Receiver<bool>,
    feed: Arc<FeedInner>,
}

impl Subscription {
    /// Waits for the next item, a lag marker, or the close.
    pub async fn next(&mut self) -> Received {
        if *self.closed.borrow() {
            return Received::Closed;
        }
        tokio::select! {
            received = self.receiver.recv() => match received {
                Ok(item) => Received::Item(item),
                Err(broadcast::error::RecvError::Lagged(n)) => Received::Missed(n),
                Err(broadcast::error::RecvError::Closed) => Received::Closed,
            },
            // A close, or the sender gone: either way the stream ends.
            _ = self.closed.changed() => Received::Closed,
        }
    }
}

impl Drop for Subscription {
    fn drop(&mut self) {
        self.feed.watchers.fetch_sub(1, Ordering::Relaxed);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request(command: &str) -> Request {
        Request::from_slice(
            serde_json::json!({"session_id": "s-1", "surface": "bash", "command": command})
                .to_string()
                .as_bytes(),
        )
        .unwrap()
    }

    #[tokio::test]
    async fn unwatched_publish_sends_nothing_and_items_are_redacted() {
        let feed = Feed::new();
        let secret = "ghp_0123456789abcdefghijABCDEFGHIJ012345";
        let r = request(&format!("echo {secret}"));
        let d = Decision::hard_deny(r.request_hash(), "x", format!("saw {secret}"));
        feed.publish(&r, &d, 1);
        let mut sub = feed.subscribe();
        assert!(feed.watched());
        feed.publish(&r, &d, 2);
        let Received::Item(item) = sub.next().await else {
            panic!("no item")
        };
        assert_eq!(item.at_ms, 2);
        let text = serde_json::to_string(&*item).unwrap();
        assert!(!text.contains(secret), "{text}");
        drop(sub);
        assert!(!feed.watched());
    }

    #[tokio::test]
    async fn a_slow_watcher_is_told_what_it_missed_and_close_ends_it() {
        let feed = Feed::new();
        let mut sub = feed.subscribe();
        let r = request("ls");
        let d = Decision::hard_deny(r.request_hash(), "x", "why".to_owned());
        for i in 0..(FEED_CAPACITY as u64 + 5) {
            // Inline sends (no blocking pool) keep the order exact.
            let _ = feed
                .inner
                .sender()
                .send(Arc::new(Raw::of(&r, &d, i).redacted()));
        }
        assert_eq!(sub.next().await, Received::Missed(5));
        assert!(matches!(sub.next().await, Received::Item(_)));
        feed.close();
        assert_eq!(sub.next().await, Received::Closed);
    }
}
