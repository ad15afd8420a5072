//! A real engine over a temporary state directory and a manual clock, for
//! the tests of per-turn state, overrides, break glass and the store: each
//! review runs the real shell and decision table against real SQLite
//! ([`Engine::prepare`], then [`Engine::finish`] with the model's answer),
//! with the model's answer given as a [`ReviewResult`] so no socket is
//! needed. The pipeline tests drive the same engine against a real model
//! server instead.

#![allow(dead_code)]

use std::sync::Arc;

use vouch::clock::ManualClock;
use vouch::config::{Config, Provider};
use vouch::decision::{Decision, Outcome, ReviewStats, RiskLevel, Stage, UserAuthorization};
use vouch::engine::{Engine, EngineOptions, PendingReview, Prepared};
use vouch::request::Request;
use vouch::reviewer::{FailureClass, ReviewOutcome, ReviewResult, Verdict};
use vouch::session::{TurnKey, TurnStatus, turn_status};
use vouch::store::Store;

pub const NOW: u64 = 1_800_000_000_000;
/// The session every helper request belongs to.
pub const S: &str = "s-1";

/// One isolated vouch: its home, clock, configuration and engine.
pub struct State {
    pub home: tempfile::TempDir,
    pub clock: Arc<ManualClock>,
    pub cfg: Config,
    pub engine: Engine,
}

impl State {
    pub fn new() -> State {
        State::with(|_| {})
    }

    pub fn with(edit: impl FnOnce(&mut Config)) -> State {
        let mut cfg = config();
        edit(&mut cfg);
        let home = tempfile::tempdir().unwrap();
        let clock = Arc::new(ManualClock::new(NOW));
        let engine = engine(home.path(), &clock, &cfg);
        State {
            home,
            clock,
            cfg,
            engine,
        }
    }

    /// Another engine on the same state and clock, with another
    /// configuration (what a project overlay would make effective).
    pub fn engine_with(&self, cfg: &Config) -> Engine {
        engine(self.home.path(), &self.clock, cfg)
    }

    pub fn store(&self) -> Arc<Store> {
        self.engine.store().unwrap()
    }

    pub fn status(&self, turn: &str) -> TurnStatus {
        let key = TurnKey { session: S, turn };
        turn_status(&self.store(), &self.cfg, key).unwrap()
    }

    /// One model review of `request` that must reach the model, answered
    /// with `result`.
    pub fn review(&self, request: Request, result: ReviewResult) -> Decision {
        review_with(&self.engine, request, result)
    }

    /// The model denies `request` at `risk`.
    pub fn deny(&self, request: Request, risk: RiskLevel) -> Decision {
        let why = format!("risky action {}", &request.request_hash()[..8]);
        let d = self.review(request, verdict(Outcome::Deny, risk, &why));
        self.clock.advance(10);
        d
    }
}

/// The defaults with a reviewer configured (never called here: answers are
/// given to `Engine::finish` directly).
pub fn config() -> Config {
    let mut cfg = Config::defaults().unwrap();
    cfg.reviewer.provider = Provider::Openai;
    // The commands under test are often reads (`echo …`): they must reach
    // the model, not the inert stage.
    cfg.inert.enabled = false;
    cfg
}

pub fn engine(home: &std::path::Path, clock: &Arc<ManualClock>, cfg: &Config) -> Engine {
    let mut options = EngineOptions::isolated(home, cfg).unwrap();
    options.clock = clock.clone();
    Engine::new(options).unwrap()
}

/// A review that must reach the model, answered with `result`.
pub fn review_with(engine: &Engine, request: Request, result: ReviewResult) -> Decision {
    match engine.prepare(request) {
        Prepared::Review(pending) => engine.finish(*pending, result),
        Prepared::Decided(d) => panic!("the review under test must reach the model, got {d:?}"),
    }
}

/// What the table decided before the model, or the review it prepared.
pub enum Gate {
    Decided(Box<Decision>),
    Review(Box<PendingReview>),
}

impl std::fmt::Debug for Gate {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Gate::Decided(d) => write!(f, "Decided({} at {})", d.outcome(), d.stage()),
            Gate::Review(p) => write!(f, "Review({p:?})"),
        }
    }
}

impl Gate {
    /// The stage that decided; panics on a review.
    pub fn stage(&self) -> Stage {
        match self {
            Gate::Decided(d) => d.stage(),
            Gate::Review(_) => panic!("expected a decision, got a review"),
        }
    }

    pub fn decision(&self) -> &Decision {
        match self {
            Gate::Decided(d) => d,
            Gate::Review(_) => panic!("expected a decision, got a review"),
        }
    }

    pub fn is_review(&self) -> bool {
        matches!(self, Gate::Review(_))
    }

    /// Whether the review carries a human's exact-retry approval.
    pub fn has_override(&self) -> bool {
        match self {
            Gate::Review(p) => {
                let with = p.packet().user.contains("human operator approved");
                assert_eq!(
                    with,
                    p.job().source == vouch::decision::VerdictSource::ModelWithOverride
                );
                with
            }
            Gate::Decided(d) => panic!("expected a review, got {d:?}"),
        }
    }
}

/// Runs the stages before the model. A review that is returned is never
/// finished: its reservation stays, as when a model call never returns.
pub fn gate(engine: &Engine, request: Request) -> Gate {
    match engine.prepare(request) {
        Prepared::Decided(d) => Gate::Decided(d),
        Prepared::Review(p) => Gate::Review(p),
    }
}

/// A bash request of session [`S`] in `turn`. `tag` makes the action (and
/// so its request hash) distinct while the command shown to operators stays
/// the same.
pub fn request(turn: &str, tag: &str) -> Request {
    request_in(S, turn, tag)
}

pub fn request_in(session: &str, turn: &str, tag: &str) -> Request {
    let v = serde_json::json!({
        "session_id": session,
        "turn_id": turn,
        "surface": "bash",
        "tool": "Bash",
        "command": "curl -X DELETE https://api.example/prod",
        "cwd": "/srv/app",
        "home": "/home/dev",
        "agent": tag,
        "transcript": [{"role": "user", "text": "clean up the prod fixtures"}],
    });
    Request::from_slice(v.to_string().as_bytes()).unwrap()
}

/// A request whose shown command is `command`.
pub fn with_command(mut request: Request, command: &str) -> Request {
    request.command = Some(command.to_owned());
    request
}

fn stats() -> ReviewStats {
    ReviewStats {
        model: "test-model".into(),
        calls: 1,
        input_tokens: 300,
        output_tokens: 30,
        packet_tokens_estimate: 280,
        duration_ms: 5,
    }
}

/// The model's verdict.
pub fn verdict(outcome: Outcome, risk: RiskLevel, rationale: &str) -> ReviewResult {
    ReviewResult {
        outcome: ReviewOutcome::Verdict(Verdict {
            outcome,
            risk_level: risk,
            user_authorization: UserAuthorization::Unknown,
            rationale: rationale.to_owned(),
            suggestion: Some("use a dry run".into()),
        }),
        stats: stats(),
    }
}

/// A review that failed.
pub fn failure() -> ReviewResult {
    ReviewResult {
        outcome: ReviewOutcome::Failure(FailureClass::Timeout),
        stats: stats(),
    }
}
