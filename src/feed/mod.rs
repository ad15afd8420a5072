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
//!
//! `vouch hook` processes on the same machine decide outside the service,
//! so their decisions come through the state directory instead
//! ([`local`]): a hook holds its decisions only while the service says a
//! console watches (one `stat`), writes them redacted after its reply, and
//! the service reads them onto the same channel.

pub mod local;

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

use serde::{Deserialize, Serialize};
use tokio::sync::{broadcast, watch};

use crate::decision::{Decision, Fault, Outcome, RiskLevel, Stage};
use crate::evidence::redact::redact_text;
use crate::request::Request;

/// Items a watcher may fall behind by before it misses the oldest.
pub const FEED_CAPACITY: usize = 256;

/// One decision as the console shows it. Every free-text field is redacted.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
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
    /// The decisions of this machine's hook processes ([`local`]).
    local: Option<Local>,
}

/// Which side of the hooks' feed this process is.
enum Local {
    /// A `vouch hook` process: decisions are held while a console watches
    /// and written after the reply ([`Feed::flush_local`]).
    Hook {
        state_dir: PathBuf,
        /// Whether a console watched when the first decision was made.
        watched: OnceLock<bool>,
        held: Mutex<Vec<Raw>>,
    },
    /// `vouch serve`: reads the hooks' decisions while someone watches.
    Service {
        state_dir: PathBuf,
        started: AtomicBool,
    },
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
        Feed::with_local(None)
    }

    fn with_local(local: Option<Local>) -> Feed {
        let (closed, _) = watch::channel(false);
        Feed {
            inner: Arc::new(FeedInner {
                sender: OnceLock::new(),
                watchers: AtomicUsize::new(0),
                closed,
                local,
            }),
        }
    }

    /// The feed of a `vouch hook` process, whose decisions reach a console
    /// through `state_dir` ([`local`]).
    pub fn for_hook(state_dir: &Path) -> Feed {
        Feed::with_local(Some(Local::Hook {
            state_dir: state_dir.to_path_buf(),
            watched: OnceLock::new(),
            held: Mutex::new(Vec::new()),
        }))
    }

    /// The service's feed, which also shows the decisions hook processes
    /// write to `state_dir` while someone watches.
    pub fn for_service(state_dir: &Path) -> Feed {
        Feed::with_local(Some(Local::Service {
            state_dir: state_dir.to_path_buf(),
            started: AtomicBool::new(false),
        }))
    }

    /// Whether anyone is watching: one relaxed load, all an unwatched
    /// decision pays (a hook process: one `stat` of the service's marker,
    /// once).
    pub fn watched(&self) -> bool {
        if self.inner.watchers.load(Ordering::Relaxed) > 0 {
            return true;
        }
        match &self.inner.local {
            Some(Local::Hook {
                state_dir, watched, ..
            }) => *watched.get_or_init(|| local::watched(state_dir, std::time::SystemTime::now())),
            Some(Local::Service { .. }) | None => false,
        }
    }

    /// Publishes `decision` on `request` if anyone watches. Never blocks:
    /// the redaction runs on the blocking pool when a runtime is there (the
    /// service), inline otherwise; a hook process holds it for
    /// [`Feed::flush_local`].
    pub fn publish(&self, request: &Request, decision: &Decision, at_ms: u64) {
        if !self.watched() {
            return;
        }
        let raw = Raw::of(request, decision, at_ms);
        if let Some(Local::Hook { held, .. }) = &self.inner.local {
            held.lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
                .push(raw);
            return;
        }
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

    /// A hook process, after its reply: writes the decisions it held (while
    /// a console watched) to the state directory, redacted. Bounded by
    /// [`local::BUSY_TIMEOUT`]; a failure loses them and is logged.
    pub fn flush_local(&self, now_ms: u64) {
        let Some(Local::Hook {
            state_dir, held, ..
        }) = &self.inner.local
        else {
            return;
        };
        let raw = std::mem::take(
            &mut *held
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner),
        );
        if raw.is_empty() {
            return;
        }
        let items = raw.into_iter().map(Raw::redacted).collect();
        if let Err(e) = local::append(state_dir, items, now_ms) {
            tracing::debug!(error = %e, "this hook's decisions did not reach the console's live view");
        }
    }

    /// A new watcher, receiving items published from now on.
    pub fn subscribe(&self) -> Subscription {
        self.inner.watchers.fetch_add(1, Ordering::Relaxed);
        if let Some(Local::Service { state_dir, started }) = &self.inner.local
            && let Ok(runtime) = tokio::runtime::Handle::try_current()
            && !started.swap(true, Ordering::Relaxed)
        {
            drop(runtime.spawn(poll_local(Arc::clone(&self.inner), state_dir.clone())));
        }
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

/// The service's reader of the hooks' decisions: while someone watches,
/// keeps the marker fresh and moves new rows onto the channel; when nobody
/// does, removes the marker. Ends at shutdown.
async fn poll_local(inner: Arc<FeedInner>, state_dir: PathBuf) {
    let mut closed = inner.closed.subscribe();
    let mut reader = Some(local::Reader::new(&state_dir));
    let mut was_watched = false;
    let mut touched: Option<std::time::Instant> = None;
    loop {
        if *closed.borrow() {
            break;
        }
        let watched = inner.watchers.load(Ordering::Relaxed) > 0;
        if watched {
            let dir = state_dir.clone();
            let touch = touched.is_none_or(|t| t.elapsed() >= local::TOUCH_EVERY);
            let start = !was_watched;
            let mut r = reader
                .take()
                .unwrap_or_else(|| local::Reader::new(&state_dir));
            let read = tokio::task::spawn_blocking(move || {
                // The position first, then the marker: a hook that sees the
                // marker writes after the position, so nothing is missed.
                if start {
                    r.start_at_end();
                }
                if touch && let Err(e) = local::touch(&dir) {
                    tracing::debug!(error = %e, "cannot mark the live feed watched");
                }
                let items = r.next_batch();
                (r, items)
            })
            .await;
            if touch {
                touched = Some(std::time::Instant::now());
            }
            if let Ok((r, items)) = read {
                reader = Some(r);
                for item in items {
                    let _ = inner.sender().send(Arc::new(item));
                }
            }
        } else if was_watched {
            let dir = state_dir.clone();
            drop(tokio::task::spawn_blocking(move || local::unmark(&dir)));
            touched = None;
        }
        was_watched = watched;
        tokio::select! {
            () = tokio::time::sleep(local::POLL_EVERY) => {}
            _ = closed.changed() => {}
        }
    }
    let dir = state_dir.clone();
    drop(tokio::task::spawn_blocking(move || local::unmark(&dir)));
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
        let d = Decision::hard_deny(
            r.request_hash(),
            crate::rules::HardRule::WipeRmRecursiveForce,
            format!("saw {secret}"),
        );
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
        let d = Decision::hard_deny(
            r.request_hash(),
            crate::rules::HardRule::WipeRmRecursiveForce,
            "why".to_owned(),
        );
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
