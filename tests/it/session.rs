//! Per-turn session state (design §6.3): circuit breaker, budgets, verdict
//! cache, and many processes updating one turn without losing a count.

use std::process::{Command, Stdio};

use vouch::clock::ManualClock;
use vouch::config::{Config, FailClosed};
use vouch::decision::{Outcome, RiskLevel, UserAuthorization};
use vouch::session::{
    ActionSummary, CachedVerdict, Gate, ReviewEvent, TurnKey, gate, record, turn_status,
};
use vouch::store::Store;

const NOW: u64 = 1_800_000_000_000;
const T1: TurnKey<'static> = TurnKey {
    session: "s-1",
    turn: "t-1",
};
const T2: TurnKey<'static> = TurnKey {
    session: "s-1",
    turn: "t-2",
};

fn setup() -> (tempfile::TempDir, Store, ManualClock, Config) {
    let home = tempfile::tempdir().unwrap();
    let store = Store::open(&home.path().join("state")).unwrap();
    (
        home,
        store,
        ManualClock::new(NOW),
        Config::defaults().unwrap(),
    )
}

fn verdict(outcome: Outcome) -> CachedVerdict {
    CachedVerdict {
        outcome,
        risk_level: RiskLevel::Medium,
        user_authorization: UserAuthorization::Unknown,
        rationale: format!("model said {}", outcome.as_str()),
        suggestion: Some("use a dry run".into()),
    }
}

fn hash(i: usize) -> String {
    format!("{i:064x}")
}

const ACTION: ActionSummary<'static> = ActionSummary {
    surface: "bash",
    cwd: Some("/srv/app"),
    target: "rm -rf build",
};

/// One full model-backed review: the gate must let it through, then the
/// verdict is recorded.
fn review(
    store: &Store,
    clock: &ManualClock,
    cfg: &Config,
    key: TurnKey<'_>,
    i: usize,
    o: Outcome,
) {
    let h = hash(i);
    match gate(store, clock, cfg, key, &h, None).unwrap() {
        Gate::Review { .. } => {}
        other => panic!("review {i} should reach the model, got {other:?}"),
    }
    let v = verdict(o);
    record(
        store,
        clock,
        cfg,
        key,
        &h,
        ReviewEvent::Verdict {
            verdict: &v,
            cache_key: None,
            action: ACTION,
        },
    )
    .unwrap();
}

fn gate_next(store: &Store, clock: &ManualClock, cfg: &Config, key: TurnKey<'_>) -> Gate {
    gate(store, clock, cfg, key, &hash(9999), None).unwrap()
}

#[test]
fn breaker_opens_after_three_consecutive_model_denials() {
    let (_h, store, clock, cfg) = setup();
    review(&store, &clock, &cfg, T1, 0, Outcome::Deny);
    review(&store, &clock, &cfg, T1, 1, Outcome::Deny);
    assert!(!turn_status(&store, &cfg, T1).unwrap().breaker_open);
    review(&store, &clock, &cfg, T1, 2, Outcome::Deny);
    assert!(turn_status(&store, &cfg, T1).unwrap().breaker_open);
    assert_eq!(
        gate_next(&store, &clock, &cfg, T1),
        Gate::BreakerOpen {
            action: FailClosed::Defer,
            consecutive_denials: 3,
            window_denials: 3
        }
    );
    // Open means no model call: nothing was reserved by the refused gate.
    assert_eq!(turn_status(&store, &cfg, T1).unwrap().reviews, 3);
    // It stays open for the rest of the turn, even after time passes.
    clock.advance(3_600_000);
    assert!(matches!(
        gate_next(&store, &clock, &cfg, T1),
        Gate::BreakerOpen { .. }
    ));
    // A new turn starts closed.
    assert!(matches!(
        gate_next(&store, &clock, &cfg, T2),
        Gate::Review { .. }
    ));
}

#[test]
fn breaker_action_follows_config() {
    let (_h, store, clock, mut cfg) = setup();
    cfg.breaker.action = FailClosed::Deny;
    for i in 0..3 {
        review(&store, &clock, &cfg, T1, i, Outcome::Deny);
    }
    assert!(matches!(
        gate_next(&store, &clock, &cfg, T1),
        Gate::BreakerOpen {
            action: FailClosed::Deny,
            ..
        }
    ));
}

#[test]
fn breaker_opens_after_ten_denials_in_the_last_fifty_reviews() {
    let (_h, store, clock, mut cfg) = setup();
    cfg.turn.max_reviews = 1_000;
    // Deny, deny, allow: never three in a row.
    let pattern = [Outcome::Deny, Outcome::Deny, Outcome::Allow];
    let mut denials = 0;
    for i in 0.. {
        let o = pattern[i % 3];
        review(&store, &clock, &cfg, T1, i, o);
        let status = turn_status(&store, &cfg, T1).unwrap();
        assert!(status.consecutive_denials < 3);
        if o == Outcome::Deny {
            denials += 1;
        }
        if denials == 10 {
            assert!(status.breaker_open, "{status:?}");
            assert_eq!(status.window_denials, 10);
            break;
        }
        assert!(
            !status.breaker_open,
            "opened early at review {i}: {status:?}"
        );
    }
    assert!(matches!(
        gate_next(&store, &clock, &cfg, T1),
        Gate::BreakerOpen {
            window_denials: 10,
            ..
        }
    ));
}

#[test]
fn old_denials_slide_out_of_the_window() {
    let (_h, store, clock, mut cfg) = setup();
    cfg.turn.max_reviews = 1_000;
    // Nine denials, then 41 allows push them to the edge of the window.
    for i in 0..9 {
        let o = if i % 2 == 0 {
            Outcome::Deny
        } else {
            Outcome::Allow
        };
        review(&store, &clock, &cfg, T1, i, o);
    }
    // 5 denials so far (i = 0, 2, 4, 6, 8); 50 allows flush them out.
    for i in 9..59 {
        review(&store, &clock, &cfg, T1, i, Outcome::Allow);
    }
    let status = turn_status(&store, &cfg, T1).unwrap();
    assert_eq!(status.window_denials, 0);
    assert_eq!(status.denials, 5);
    // Nine more alternating denials stay below ten in the window.
    for i in 59..77 {
        let o = if i % 2 == 0 {
            Outcome::Deny
        } else {
            Outcome::Allow
        };
        review(&store, &clock, &cfg, T1, i, o);
    }
    let status = turn_status(&store, &cfg, T1).unwrap();
    assert_eq!(status.window_denials, 9);
    assert!(!status.breaker_open);
}

#[test]
fn reviewer_failures_do_not_count_towards_the_breaker() {
    let (_h, store, clock, cfg) = setup();
    review(&store, &clock, &cfg, T1, 0, Outcome::Deny);
    review(&store, &clock, &cfg, T1, 1, Outcome::Deny);
    for i in 2..7 {
        assert!(matches!(
            gate(&store, &clock, &cfg, T1, &hash(i), None).unwrap(),
            Gate::Review { .. }
        ));
        record(&store, &clock, &cfg, T1, &hash(i), ReviewEvent::Failure).unwrap();
    }
    let status = turn_status(&store, &cfg, T1).unwrap();
    assert_eq!(status.consecutive_denials, 2);
    assert_eq!(status.failures, 5);
    assert!(!status.breaker_open);
    assert!(matches!(
        gate_next(&store, &clock, &cfg, T1),
        Gate::Review { .. }
    ));
}

#[test]
fn an_allow_resets_the_consecutive_count() {
    let (_h, store, clock, cfg) = setup();
    for (i, o) in [
        Outcome::Deny,
        Outcome::Deny,
        Outcome::Allow,
        Outcome::Deny,
        Outcome::Deny,
    ]
    .into_iter()
    .enumerate()
    {
        review(&store, &clock, &cfg, T1, i, o);
    }
    assert!(!turn_status(&store, &cfg, T1).unwrap().breaker_open);
}

#[test]
fn review_budget_then_on_exhausted() {
    let (_h, store, clock, mut cfg) = setup();
    cfg.turn.max_reviews = 3;
    cfg.turn.on_exhausted = FailClosed::Deny;
    for i in 0..3 {
        review(&store, &clock, &cfg, T1, i, Outcome::Allow);
    }
    assert_eq!(
        gate_next(&store, &clock, &cfg, T1),
        Gate::BudgetExhausted {
            reviews: 3,
            action: FailClosed::Deny
        }
    );
    assert_eq!(turn_status(&store, &cfg, T1).unwrap().reviews, 3);
    assert!(matches!(
        gate_next(&store, &clock, &cfg, T2),
        Gate::Review { .. }
    ));
}

#[test]
fn failure_budget_then_failure_mode() {
    let (_h, store, clock, mut cfg) = setup();
    cfg.turn.max_failures = 2;
    cfg.decision.failure_mode = FailClosed::Defer;
    for i in 0..2 {
        assert!(matches!(
            gate(&store, &clock, &cfg, T1, &hash(i), None).unwrap(),
            Gate::Review { .. }
        ));
        record(&store, &clock, &cfg, T1, &hash(i), ReviewEvent::Failure).unwrap();
    }
    assert_eq!(
        gate_next(&store, &clock, &cfg, T1),
        Gate::FailuresExhausted {
            failures: 2,
            action: FailClosed::Defer
        }
    );
}

#[test]
fn concurrent_gates_never_overspend_the_budget() {
    let (_h, store, _clock, mut cfg) = setup();
    cfg.turn.max_reviews = 5;
    let store = std::sync::Arc::new(store);
    let cfg = std::sync::Arc::new(cfg);
    let handles: Vec<_> = (0..20)
        .map(|i| {
            let (store, cfg) = (store.clone(), cfg.clone());
            std::thread::spawn(move || {
                let clock = ManualClock::new(NOW);
                matches!(
                    gate(&store, &clock, &cfg, T1, &hash(i), None).unwrap(),
                    Gate::Review { .. }
                )
            })
        })
        .collect();
    let admitted = handles
        .into_iter()
        .map(|h| h.join().unwrap())
        .filter(|&ok| ok)
        .count();
    assert_eq!(admitted, 5);
}

fn record_cached(store: &Store, clock: &ManualClock, cfg: &Config, key: &str, o: Outcome) {
    let v = verdict(o);
    record(
        store,
        clock,
        cfg,
        T1,
        &hash(1),
        ReviewEvent::Verdict {
            verdict: &v,
            cache_key: Some(key),
            action: ACTION,
        },
    )
    .unwrap();
}

#[test]
fn cache_hits_within_ttl_and_misses_after() {
    let (_h, store, clock, cfg) = setup();
    record_cached(&store, &clock, &cfg, "packet-a", Outcome::Allow);
    clock.advance(cfg.cache.ttl_ms - 1);
    match gate(&store, &clock, &cfg, T2, &hash(1), Some("packet-a")).unwrap() {
        Gate::Cached(v) => {
            assert_eq!(v, verdict(Outcome::Allow));
        }
        other => panic!("expected a cache hit, got {other:?}"),
    }
    // A hit is not billed.
    assert_eq!(turn_status(&store, &cfg, T2).unwrap().reviews, 0);
    clock.advance(1);
    assert!(matches!(
        gate(&store, &clock, &cfg, T2, &hash(1), Some("packet-a")).unwrap(),
        Gate::Review { .. }
    ));
    // Other keys never hit.
    assert!(matches!(
        gate(&store, &clock, &cfg, T2, &hash(1), Some("packet-b")).unwrap(),
        Gate::Review { .. }
    ));
}

#[test]
fn defer_verdicts_are_not_cached_and_a_disabled_cache_stores_nothing() {
    let (_h, store, clock, mut cfg) = setup();
    record_cached(&store, &clock, &cfg, "unsure", Outcome::Defer);
    assert!(matches!(
        gate(&store, &clock, &cfg, T2, &hash(1), Some("unsure")).unwrap(),
        Gate::Review { .. }
    ));
    cfg.cache.ttl_ms = 0;
    record_cached(&store, &clock, &cfg, "off", Outcome::Allow);
    cfg.cache.ttl_ms = 60_000;
    assert!(matches!(
        gate(&store, &clock, &cfg, T2, &hash(1), Some("off")).unwrap(),
        Gate::Review { .. }
    ));
}

#[test]
fn cache_evicts_the_oldest_beyond_max_entries() {
    let (_h, store, clock, mut cfg) = setup();
    cfg.cache.max_entries = 3;
    for key in ["k1", "k2", "k3", "k4"] {
        record_cached(&store, &clock, &cfg, key, Outcome::Allow);
        clock.advance(1);
    }
    assert!(matches!(
        gate(&store, &clock, &cfg, T2, &hash(1), Some("k1")).unwrap(),
        Gate::Review { .. }
    ));
    for key in ["k2", "k3", "k4"] {
        assert!(
            matches!(
                gate(&store, &clock, &cfg, T2, &hash(1), Some(key)).unwrap(),
                Gate::Cached(_)
            ),
            "{key} should still be cached"
        );
    }
}

#[test]
fn cached_denials_count_towards_the_breaker() {
    let (_h, store, clock, cfg) = setup();
    assert!(matches!(
        gate(&store, &clock, &cfg, T1, &hash(1), Some("p")).unwrap(),
        Gate::Review { .. }
    ));
    record_cached(&store, &clock, &cfg, "p", Outcome::Deny);
    for _ in 0..2 {
        assert!(matches!(
            gate(&store, &clock, &cfg, T1, &hash(1), Some("p")).unwrap(),
            Gate::Cached(CachedVerdict {
                outcome: Outcome::Deny,
                ..
            })
        ));
    }
    assert!(matches!(
        gate(&store, &clock, &cfg, T1, &hash(1), Some("p")).unwrap(),
        Gate::BreakerOpen { .. }
    ));
}

const CHILD_ENV: &str = "VOUCH_TEST_RECORD_HAMMER_DIR";
const CHILDREN: u32 = 4;
const ROUNDS: u32 = 40;

fn hammer_cfg() -> Config {
    let mut cfg = Config::defaults().unwrap();
    cfg.turn.max_reviews = 100_000;
    cfg.turn.max_failures = 100_000;
    cfg.breaker.consecutive_denials = 100_000;
    cfg.breaker.window_denials = 1_000;
    cfg.breaker.window_size = 1_000;
    cfg
}

/// Child of `processes_hammering_one_turn_lose_no_update`.
#[test]
#[ignore = "child process of processes_hammering_one_turn_lose_no_update"]
fn record_hammer_child() {
    let Ok(dir) = std::env::var(CHILD_ENV) else {
        return;
    };
    let store = Store::open(std::path::Path::new(&dir)).unwrap();
    let clock = ManualClock::new(NOW);
    let cfg = hammer_cfg();
    for i in 0..ROUNDS as usize {
        let o = if i % 2 == 0 {
            Outcome::Deny
        } else {
            Outcome::Allow
        };
        review(&store, &clock, &cfg, T1, i, o);
        record(&store, &clock, &cfg, T1, &hash(i), ReviewEvent::Failure).unwrap();
    }
    println!("\nDONE");
}

#[test]
fn processes_hammering_one_turn_lose_no_update() {
    let (home, store, _clock, _cfg) = setup();
    let dir = home.path().join("state");
    let children: Vec<_> = (0..CHILDREN)
        .map(|_| {
            Command::new(std::env::current_exe().unwrap())
                .args([
                    "--exact",
                    "session::record_hammer_child",
                    "--nocapture",
                    "--include-ignored",
                    "--test-threads=1",
                ])
                .env(CHILD_ENV, &dir)
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    for child in children {
        let out = child.wait_with_output().unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(String::from_utf8_lossy(&out.stdout).contains("\nDONE"));
    }
    let cfg = hammer_cfg();
    let status = turn_status(&store, &cfg, T1).unwrap();
    let total = CHILDREN * ROUNDS;
    assert_eq!(status.reviews, total);
    assert_eq!(status.verdicts, total);
    assert_eq!(status.failures, total);
    assert_eq!(status.denials, total / 2);
    assert_eq!(status.window_denials, total / 2);
}
