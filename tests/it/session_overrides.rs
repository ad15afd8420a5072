//! Human authorizations (design §6.6): exact-retry overrides and break
//! glass, through the library API and the interactive CLI logic.

use std::io::{BufReader, Read};
use std::sync::{Arc, Mutex};

use vouch::clock::{Clock, ManualClock};
use vouch::config::Config;
use vouch::decision::{Outcome, RiskLevel, UserAuthorization};
use vouch::session::operator::{OperatorContext, OperatorError, run_approve, run_break_glass};
use vouch::session::overrides::{
    ApprovalState, CHALLENGE_TTL_MS, OverrideError, Selector, approve, break_glass_challenge,
    break_glass_confirm, list_critical_denials, list_denials,
};
use vouch::session::{
    ActionSummary, CachedVerdict, Gate, ReviewEvent, TurnKey, gate, record, turn_status,
};
use vouch::store::Store;

const NOW: u64 = 1_800_000_000_000;
const S: &str = "s-1";
const T1: TurnKey<'static> = TurnKey {
    session: S,
    turn: "t-1",
};
const T2: TurnKey<'static> = TurnKey {
    session: S,
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

fn hash(tag: &str) -> String {
    let mut h = tag.to_owned();
    while h.len() < 64 {
        h.push('0');
    }
    h
}

/// The model denies `h` at `risk` in `key`'s turn.
fn deny(
    store: &Store,
    clock: &ManualClock,
    cfg: &Config,
    key: TurnKey<'_>,
    h: &str,
    risk: RiskLevel,
) {
    assert!(
        matches!(
            gate(store, clock, cfg, key, h, None).unwrap(),
            Gate::Review { .. }
        ),
        "the denial under test must come from a model review"
    );
    let v = CachedVerdict {
        outcome: Outcome::Deny,
        risk_level: risk,
        user_authorization: UserAuthorization::Unknown,
        rationale: format!("risky action {}", &h[..8]),
        suggestion: None,
    };
    record(
        store,
        clock,
        cfg,
        key,
        h,
        ReviewEvent::Verdict {
            verdict: &v,
            cache_key: None,
            action: ActionSummary {
                surface: "bash",
                cwd: Some("/srv/app"),
                target: "curl -X DELETE https://api.example/prod",
            },
        },
    )
    .unwrap();
    clock.advance(10);
}

fn gate_of(store: &Store, clock: &ManualClock, cfg: &Config, key: TurnKey<'_>, h: &str) -> Gate {
    gate(store, clock, cfg, key, h, None).unwrap()
}

#[test]
fn lists_newest_first_deduplicated_without_critical_ones() {
    let (_h, store, clock, cfg) = setup();
    let (a, b, c) = (hash("aa"), hash("bb"), hash("cc"));
    deny(&store, &clock, &cfg, T1, &a, RiskLevel::High);
    deny(&store, &clock, &cfg, T2, &b, RiskLevel::Medium);
    deny(&store, &clock, &cfg, T2, &c, RiskLevel::Critical);
    deny(&store, &clock, &cfg, T2, &a, RiskLevel::High);
    let listed = list_denials(&store, &clock, &cfg, S).unwrap();
    let hashes: Vec<&str> = listed.iter().map(|d| d.request_hash.as_str()).collect();
    assert_eq!(hashes, vec![a.as_str(), b.as_str()]);
    assert_eq!(listed[0].turn_id, "t-2");
    assert_eq!(listed[0].summary, "curl -X DELETE https://api.example/prod");
    assert_eq!(listed[0].cwd.as_deref(), Some("/srv/app"));
    assert_eq!(listed[0].approval, ApprovalState::Available);
    // Another session sees nothing.
    assert!(
        list_denials(&store, &clock, &cfg, "s-2")
            .unwrap()
            .is_empty()
    );
}

#[test]
fn list_is_capped_at_max_listed() {
    let (_h, store, clock, mut cfg) = setup();
    cfg.overrides.max_listed = 3;
    cfg.turn.max_reviews = 100;
    cfg.breaker.consecutive_denials = 100;
    for i in 0..5 {
        deny(
            &store,
            &clock,
            &cfg,
            T1,
            &hash(&format!("{i:02}")),
            RiskLevel::Low,
        );
    }
    let listed = list_denials(&store, &clock, &cfg, S).unwrap();
    assert_eq!(listed.len(), 3);
    assert_eq!(listed[0].request_hash, hash("04"));
    // An index past the list is no such denial.
    assert!(matches!(
        approve(&store, &clock, &cfg, S, &Selector::Index(4)).unwrap_err(),
        OverrideError::NoSuchDenial { .. }
    ));
}

#[test]
fn an_override_is_single_use_and_reaches_the_model_as_context() {
    let (_h, store, clock, cfg) = setup();
    let a = hash("aa");
    deny(&store, &clock, &cfg, T1, &a, RiskLevel::High);
    let approval = approve(&store, &clock, &cfg, S, &Selector::Index(1)).unwrap();
    assert_eq!(approval.request_hash, a);
    assert_eq!(
        approval.expires_at_ms,
        clock.now_ms() + cfg.overrides.ttl_ms
    );
    // Other sessions and other hashes do not see it.
    let other_session = TurnKey {
        session: "s-2",
        turn: "t-1",
    };
    assert_eq!(
        gate_of(&store, &clock, &cfg, other_session, &a),
        Gate::Review {
            override_pass: None
        }
    );
    assert_eq!(
        gate_of(&store, &clock, &cfg, T2, &hash("bb")),
        Gate::Review {
            override_pass: None
        }
    );
    // The exact retry, in a later turn, carries it to the model once.
    match gate_of(&store, &clock, &cfg, T2, &a) {
        Gate::Review {
            override_pass: Some(pass),
        } => {
            assert_eq!(pass.request_hash, a);
            assert_eq!(
                pass.approved_at_ms,
                approval.expires_at_ms - cfg.overrides.ttl_ms
            );
            assert_eq!(pass.denied_risk_level, Some(RiskLevel::High));
            assert!(pass.denied_rationale.unwrap().contains("risky action"));
        }
        other => panic!("expected the override, got {other:?}"),
    }
    assert_eq!(
        gate_of(&store, &clock, &cfg, T2, &a),
        Gate::Review {
            override_pass: None
        }
    );
}

#[test]
fn no_reissue_while_pending_nor_after_use_until_denied_again() {
    let (_h, store, clock, cfg) = setup();
    let a = hash("aa");
    deny(&store, &clock, &cfg, T1, &a, RiskLevel::Medium);
    approve(&store, &clock, &cfg, S, &Selector::Index(1)).unwrap();
    let err = approve(&store, &clock, &cfg, S, &Selector::Index(1)).unwrap_err();
    assert!(matches!(err, OverrideError::AlreadyPending { .. }), "{err}");
    assert!(err.to_string().contains("already approved and pending"));
    assert!(matches!(
        list_denials(&store, &clock, &cfg, S).unwrap()[0].approval,
        ApprovalState::Pending { .. }
    ));
    // Spend it.
    assert!(matches!(
        gate_of(&store, &clock, &cfg, T2, &a),
        Gate::Review {
            override_pass: Some(_)
        }
    ));
    let err = approve(&store, &clock, &cfg, S, &Selector::Hash(a.clone())).unwrap_err();
    assert!(matches!(err, OverrideError::AlreadyUsed { .. }), "{err}");
    assert!(
        err.to_string()
            .contains("already used; deny it again first")
    );
    assert_eq!(
        list_denials(&store, &clock, &cfg, S).unwrap()[0].approval,
        ApprovalState::Used
    );
    // A fresh denial of the same action may be approved again.
    deny(&store, &clock, &cfg, T2, &a, RiskLevel::Medium);
    approve(&store, &clock, &cfg, S, &Selector::Hash(a[..8].to_owned())).unwrap();
}

#[test]
fn an_approval_that_expired_unused_may_be_issued_again() {
    let (_h, store, clock, cfg) = setup();
    let a = hash("aa");
    deny(&store, &clock, &cfg, T1, &a, RiskLevel::Medium);
    approve(&store, &clock, &cfg, S, &Selector::Index(1)).unwrap();
    clock.advance(cfg.overrides.ttl_ms);
    assert_eq!(
        gate_of(&store, &clock, &cfg, T2, &a),
        Gate::Review {
            override_pass: None
        }
    );
    approve(&store, &clock, &cfg, S, &Selector::Index(1)).unwrap();
}

#[test]
fn selection_by_full_hash_prefix_and_ambiguity() {
    let (_h, store, clock, mut cfg) = setup();
    cfg.breaker.consecutive_denials = 100;
    let (x1, x2, y) = (hash("abcdef0011"), hash("abcdef0022"), hash("123456789a"));
    for h in [&x1, &x2, &y] {
        deny(&store, &clock, &cfg, T1, h, RiskLevel::Low);
    }
    let err = approve(&store, &clock, &cfg, S, &"abcdef00".parse().unwrap()).unwrap_err();
    assert!(
        matches!(err, OverrideError::AmbiguousPrefix { count: 2, .. }),
        "{err}"
    );
    let approval = approve(&store, &clock, &cfg, S, &"abcdef0022".parse().unwrap()).unwrap();
    assert_eq!(approval.request_hash, x2);
    let approval = approve(&store, &clock, &cfg, S, &y.parse().unwrap()).unwrap();
    assert_eq!(approval.request_hash, y);
    let err = approve(&store, &clock, &cfg, S, &"ffffffff".parse().unwrap()).unwrap_err();
    assert!(err.to_string().starts_with("no such denial"), "{err}");
    assert!(matches!(
        "abc".parse::<Selector>().unwrap_err(),
        OverrideError::InvalidSelector { .. }
    ));
}

#[test]
fn critical_denials_are_not_approvable() {
    let (_h, store, clock, cfg) = setup();
    let c = hash("cc");
    deny(&store, &clock, &cfg, T1, &c, RiskLevel::Critical);
    assert!(list_denials(&store, &clock, &cfg, S).unwrap().is_empty());
    assert!(matches!(
        approve(&store, &clock, &cfg, S, &Selector::Index(1)).unwrap_err(),
        OverrideError::NoSuchDenial { .. }
    ));
    assert!(matches!(
        approve(&store, &clock, &cfg, S, &Selector::Hash(c.clone())).unwrap_err(),
        OverrideError::CriticalNeedsBreakGlass { .. }
    ));
}

#[test]
fn an_open_breaker_holds_an_override_for_later_and_the_cache_never_swallows_it() {
    let (_h, store, clock, cfg) = setup();
    let a = hash("aa");
    for tag in ["01", "02"] {
        deny(&store, &clock, &cfg, T1, &hash(tag), RiskLevel::Low);
    }
    // Third denial (cached under "pkt") opens the breaker of t-1.
    assert!(matches!(
        gate(&store, &clock, &cfg, T1, &a, Some("pkt")).unwrap(),
        Gate::Review { .. }
    ));
    let v = CachedVerdict {
        outcome: Outcome::Deny,
        risk_level: RiskLevel::Medium,
        user_authorization: UserAuthorization::Unknown,
        rationale: "no".into(),
        suggestion: None,
    };
    record(
        &store,
        &clock,
        &cfg,
        T1,
        &a,
        ReviewEvent::Verdict {
            verdict: &v,
            cache_key: Some("pkt"),
            action: ActionSummary {
                surface: "bash",
                cwd: None,
                target: "x",
            },
        },
    )
    .unwrap();
    approve(&store, &clock, &cfg, S, &Selector::Hash(a.clone())).unwrap();
    assert!(matches!(
        gate(&store, &clock, &cfg, T1, &a, Some("pkt")).unwrap(),
        Gate::BreakerOpen { .. }
    ));
    // Still pending; in the next turn the cached denial does not win.
    match gate(&store, &clock, &cfg, T2, &a, Some("pkt")).unwrap() {
        Gate::Review {
            override_pass: Some(_),
        } => {}
        other => panic!("expected the override, got {other:?}"),
    }
}

/// Opens t-1's breaker with a critical denial of `c` as the third.
fn critical_with_open_breaker(store: &Store, clock: &ManualClock, cfg: &Config, c: &str) {
    deny(store, clock, cfg, T1, &hash("01"), RiskLevel::High);
    deny(store, clock, cfg, T1, &hash("02"), RiskLevel::High);
    deny(store, clock, cfg, T1, c, RiskLevel::Critical);
    assert!(matches!(
        gate_of(store, clock, cfg, T1, &hash("03")),
        Gate::BreakerOpen { .. }
    ));
}

#[test]
fn break_glass_success_allows_once_without_the_model_and_resets_the_breaker() {
    let (_h, store, clock, cfg) = setup();
    let c = hash("cc");
    critical_with_open_breaker(&store, &clock, &cfg, &c);
    let listed = list_critical_denials(&store, &clock, &cfg, S).unwrap();
    assert_eq!(listed.len(), 1);
    let challenge = break_glass_challenge(&store, &clock, &cfg, S, None).unwrap();
    assert_eq!(challenge.denial.request_hash, c);
    assert_eq!(
        challenge.denial.rationale,
        format!("risky action {}", &c[..8])
    );
    assert_eq!(challenge.expires_at_ms, clock.now_ms() + CHALLENGE_TTL_MS);
    let code = challenge.phrase.strip_prefix("BREAK-GLASS ").unwrap();
    assert_eq!(code.len(), 8);
    clock.advance(CHALLENGE_TTL_MS - 1);
    let auth = break_glass_confirm(
        &store,
        &clock,
        &cfg,
        S,
        &challenge.id,
        &format!("  {}\n", challenge.phrase),
    )
    .unwrap();
    assert_eq!(auth.request_hash, c);
    // Pending: no second challenge.
    assert!(matches!(
        break_glass_challenge(&store, &clock, &cfg, S, None).unwrap_err(),
        OverrideError::AlreadyPending { .. }
    ));
    let reviews_before = turn_status(&store, &cfg, T1).unwrap().reviews;
    match gate_of(&store, &clock, &cfg, T1, &c) {
        Gate::BreakGlass(pass) => assert_eq!(pass.request_hash, c),
        other => panic!("expected break glass, got {other:?}"),
    }
    let status = turn_status(&store, &cfg, T1).unwrap();
    assert!(!status.breaker_open);
    assert_eq!(status.consecutive_denials, 0);
    assert_eq!(status.reviews, reviews_before, "break glass is not billed");
    // One use: the same request now goes to the model (breaker is closed).
    assert_eq!(
        gate_of(&store, &clock, &cfg, T1, &c),
        Gate::Review {
            override_pass: None
        }
    );
    // And it cannot be reissued until the model denies it afresh.
    assert!(matches!(
        break_glass_challenge(&store, &clock, &cfg, S, None).unwrap_err(),
        OverrideError::AlreadyUsed { .. }
    ));
}

#[test]
fn wrong_phrase_is_refused_and_spends_the_challenge() {
    let (_h, store, clock, cfg) = setup();
    let c = hash("cc");
    deny(&store, &clock, &cfg, T1, &c, RiskLevel::Critical);
    let challenge = break_glass_challenge(&store, &clock, &cfg, S, None).unwrap();
    let err = break_glass_confirm(
        &store,
        &clock,
        &cfg,
        S,
        &challenge.id,
        "BREAK-GLASS AAAAAAAA",
    )
    .unwrap_err();
    assert!(matches!(err, OverrideError::PhraseMismatch), "{err}");
    assert!(err.to_string().contains("phrase does not match"));
    let err =
        break_glass_confirm(&store, &clock, &cfg, S, &challenge.id, &challenge.phrase).unwrap_err();
    assert!(
        matches!(err, OverrideError::NoSuchChallenge { .. }),
        "{err}"
    );
    // Lowercase is a different phrase.
    let challenge = break_glass_challenge(&store, &clock, &cfg, S, None).unwrap();
    assert!(matches!(
        break_glass_confirm(
            &store,
            &clock,
            &cfg,
            S,
            &challenge.id,
            &challenge.phrase.to_lowercase()
        )
        .unwrap_err(),
        OverrideError::PhraseMismatch
    ));
    // A challenge belongs to its session.
    let challenge = break_glass_challenge(&store, &clock, &cfg, S, None).unwrap();
    assert!(matches!(
        break_glass_confirm(
            &store,
            &clock,
            &cfg,
            "s-2",
            &challenge.id,
            &challenge.phrase
        )
        .unwrap_err(),
        OverrideError::NoSuchChallenge { .. }
    ));
    assert_eq!(
        gate_of(&store, &clock, &cfg, T2, &c),
        Gate::Review {
            override_pass: None
        }
    );
}

#[test]
fn a_phrase_typed_after_sixty_seconds_is_refused() {
    let (_h, store, clock, cfg) = setup();
    let c = hash("cc");
    deny(&store, &clock, &cfg, T1, &c, RiskLevel::Critical);
    let challenge = break_glass_challenge(&store, &clock, &cfg, S, None).unwrap();
    clock.advance(61_000);
    let err =
        break_glass_confirm(&store, &clock, &cfg, S, &challenge.id, &challenge.phrase).unwrap_err();
    assert!(
        matches!(err, OverrideError::ChallengeExpired { .. }),
        "{err}"
    );
    assert!(err.to_string().contains("challenge expired"));
    assert!(matches!(
        gate_of(&store, &clock, &cfg, T2, &c),
        Gate::Review { .. }
    ));
}

#[test]
fn break_glass_refuses_non_critical_denials() {
    let (_h, store, clock, cfg) = setup();
    let a = hash("aa");
    deny(&store, &clock, &cfg, T1, &a, RiskLevel::High);
    let err = break_glass_challenge(&store, &clock, &cfg, S, Some(&Selector::Hash(a))).unwrap_err();
    assert!(matches!(err, OverrideError::NotCritical { .. }), "{err}");
    assert!(err.to_string().starts_with("not critical"));
    assert!(matches!(
        break_glass_challenge(&store, &clock, &cfg, S, None).unwrap_err(),
        OverrideError::NoCriticalDenial { .. }
    ));
}

#[test]
fn break_glass_refuses_denials_older_than_the_window() {
    let (_h, store, clock, cfg) = setup();
    let c = hash("cc");
    deny(&store, &clock, &cfg, T1, &c, RiskLevel::Critical);
    clock.advance(cfg.overrides.break_glass_window_ms + 1);
    assert!(
        list_critical_denials(&store, &clock, &cfg, S)
            .unwrap()
            .is_empty()
    );
    assert!(matches!(
        break_glass_challenge(&store, &clock, &cfg, S, None).unwrap_err(),
        OverrideError::NoCriticalDenial { .. }
    ));
    assert!(matches!(
        break_glass_challenge(&store, &clock, &cfg, S, Some(&Selector::Hash(c))).unwrap_err(),
        OverrideError::OutsideWindow { .. }
    ));
}

#[test]
fn break_glass_disabled_by_config_refuses_and_is_not_honoured() {
    let (_h, store, clock, mut cfg) = setup();
    let c = hash("cc");
    deny(&store, &clock, &cfg, T1, &c, RiskLevel::Critical);
    let challenge = break_glass_challenge(&store, &clock, &cfg, S, None).unwrap();
    let mut disabled = cfg.clone();
    disabled.overrides.break_glass_enabled = false;
    for err in [
        break_glass_challenge(&store, &clock, &disabled, S, None).unwrap_err(),
        list_critical_denials(&store, &clock, &disabled, S).unwrap_err(),
        break_glass_confirm(
            &store,
            &clock,
            &disabled,
            S,
            &challenge.id,
            &challenge.phrase,
        )
        .unwrap_err(),
    ] {
        assert!(matches!(err, OverrideError::BreakGlassDisabled), "{err}");
        assert!(err.to_string().contains("break glass is disabled"));
    }
    // Confirmed while enabled, then disabled (say, by a project overlay):
    // the gate does not honour it.
    break_glass_confirm(&store, &clock, &cfg, S, &challenge.id, &challenge.phrase).unwrap();
    assert!(matches!(
        gate_of(&store, &clock, &disabled, T2, &c),
        Gate::Review { .. }
    ));
    cfg.overrides.break_glass_enabled = true;
    assert!(matches!(
        gate_of(&store, &clock, &cfg, T2, &c),
        Gate::BreakGlass(_)
    ));
}

fn ctx<'a>(store: &'a Store, clock: &'a ManualClock, cfg: &'a Config) -> OperatorContext<'a> {
    OperatorContext {
        store,
        clock,
        cfg,
        session: S,
    }
}

#[test]
fn run_break_glass_refuses_without_a_terminal() {
    let (_h, store, clock, cfg) = setup();
    deny(&store, &clock, &cfg, T1, &hash("cc"), RiskLevel::Critical);
    let mut out = Vec::new();
    let err = run_break_glass(ctx(&store, &clock, &cfg), &b""[..], &mut out, false).unwrap_err();
    assert!(matches!(err, OperatorError::NotATerminal), "{err}");
    assert!(err.to_string().contains("interactive terminal"));
    assert!(out.is_empty());
    // Nothing was created.
    assert!(matches!(
        gate_of(&store, &clock, &cfg, T2, &hash("cc")),
        Gate::Review { .. }
    ));
}

/// Terminal input that types whatever phrase the program just printed.
struct TypesThePhrase {
    screen: Arc<Mutex<Vec<u8>>>,
    typed: Option<Vec<u8>>,
}

impl Read for TypesThePhrase {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        if self.typed.is_none() {
            let screen = String::from_utf8(self.screen.lock().unwrap().clone()).unwrap();
            let start = screen.find("type `").unwrap() + "type `".len();
            let end = start + screen[start..].find('`').unwrap();
            self.typed = Some(format!("{}\n", &screen[start..end]).into_bytes());
        }
        let typed = self.typed.as_mut().unwrap();
        let n = typed.len().min(buf.len());
        buf[..n].copy_from_slice(&typed[..n]);
        typed.drain(..n);
        Ok(n)
    }
}

struct Screen(Arc<Mutex<Vec<u8>>>);

impl std::io::Write for Screen {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

#[test]
fn run_break_glass_on_a_terminal_shows_the_details_and_takes_the_phrase() {
    let (_h, store, clock, cfg) = setup();
    let c = hash("cc");
    critical_with_open_breaker(&store, &clock, &cfg, &c);
    let screen = Arc::new(Mutex::new(Vec::new()));
    let input = BufReader::new(TypesThePhrase {
        screen: screen.clone(),
        typed: None,
    });
    let auth = run_break_glass(
        ctx(&store, &clock, &cfg),
        input,
        Screen(screen.clone()),
        true,
    )
    .unwrap();
    assert_eq!(auth.request_hash, c);
    let shown = String::from_utf8(screen.lock().unwrap().clone()).unwrap();
    for needle in [
        format!("risky action {}", &c[..8]),
        "bash".to_owned(),
        "/srv/app".to_owned(),
        "curl -X DELETE https://api.example/prod".to_owned(),
        c.clone(),
        "BREAK-GLASS ".to_owned(),
        "within 60 s".to_owned(),
    ] {
        assert!(shown.contains(&needle), "missing {needle:?} in:\n{shown}");
    }
    assert!(matches!(
        gate_of(&store, &clock, &cfg, T1, &c),
        Gate::BreakGlass(_)
    ));
}

#[test]
fn run_break_glass_with_a_wrong_phrase_authorizes_nothing() {
    let (_h, store, clock, cfg) = setup();
    let c = hash("cc");
    deny(&store, &clock, &cfg, T1, &c, RiskLevel::Critical);
    let mut out = Vec::new();
    let err = run_break_glass(
        ctx(&store, &clock, &cfg),
        &b"BREAK-GLASS 2345ABCD\n"[..],
        &mut out,
        true,
    )
    .unwrap_err();
    assert!(matches!(
        err,
        OperatorError::Override(OverrideError::PhraseMismatch)
    ));
    assert!(matches!(
        gate_of(&store, &clock, &cfg, T2, &c),
        Gate::Review { .. }
    ));
}

#[test]
fn run_approve_lists_then_approves_by_index_or_prompt() {
    let (_h, store, clock, cfg) = setup();
    let a = hash("aa");
    deny(&store, &clock, &cfg, T1, &a, RiskLevel::High);
    // A summary that tries to drive the terminal is shown escaped.
    let evil = hash("ee");
    gate_of(&store, &clock, &cfg, T1, &evil);
    let v = CachedVerdict {
        outcome: Outcome::Deny,
        risk_level: RiskLevel::Low,
        user_authorization: UserAuthorization::Unknown,
        rationale: "r".into(),
        suggestion: None,
    };
    record(
        &store,
        &clock,
        &cfg,
        T1,
        &evil,
        ReviewEvent::Verdict {
            verdict: &v,
            cache_key: None,
            action: ActionSummary {
                surface: "bash",
                cwd: None,
                target: "echo \u{1b}[2Jhi",
            },
        },
    )
    .unwrap();

    let mut out = Vec::new();
    let listed = run_approve(ctx(&store, &clock, &cfg), None, &b""[..], &mut out, false).unwrap();
    assert!(listed.is_none());
    let text = String::from_utf8(out).unwrap();
    assert!(text.contains("  1. [low]"), "{text}");
    assert!(text.contains("  2. [high]"), "{text}");
    assert!(text.contains("\\u{1b}[2Jhi"), "{text}");
    assert!(!text.contains('\u{1b}'));
    assert!(text.contains("vouch approve --session s-1"));

    let mut out = Vec::new();
    let approval = run_approve(
        ctx(&store, &clock, &cfg),
        Some("2"),
        &b""[..],
        &mut out,
        false,
    )
    .unwrap()
    .unwrap();
    assert_eq!(approval.request_hash, a);

    let mut out = Vec::new();
    let approval = run_approve(ctx(&store, &clock, &cfg), None, &b"1\n"[..], &mut out, true)
        .unwrap()
        .unwrap();
    assert_eq!(approval.request_hash, evil);
    let text = String::from_utf8(out).unwrap();
    assert!(text.contains("Approve which one?"), "{text}");

    let mut out = Vec::new();
    let err = run_approve(
        ctx(&store, &clock, &cfg),
        Some("1"),
        &b""[..],
        &mut out,
        false,
    )
    .unwrap_err();
    assert!(
        err.to_string().contains("already approved and pending"),
        "{err}"
    );
}

#[test]
fn run_approve_with_nothing_to_approve_says_so() {
    let (_h, store, clock, cfg) = setup();
    let mut out = Vec::new();
    let err = run_approve(ctx(&store, &clock, &cfg), None, &b""[..], &mut out, true).unwrap_err();
    assert!(
        matches!(err, OperatorError::NothingToApprove { .. }),
        "{err}"
    );
    deny(&store, &clock, &cfg, T1, &hash("aa"), RiskLevel::Low);
    let err = run_approve(ctx(&store, &clock, &cfg), None, &b"\n"[..], &mut out, true).unwrap_err();
    assert!(matches!(err, OperatorError::Cancelled), "{err}");
}

#[test]
fn a_challenge_for_a_denial_that_was_repeated_is_stale() {
    let (_h, store, clock, cfg) = setup();
    let c = hash("cc");
    deny(&store, &clock, &cfg, T1, &c, RiskLevel::Critical);
    let challenge = break_glass_challenge(&store, &clock, &cfg, S, None).unwrap();
    deny(&store, &clock, &cfg, T2, &c, RiskLevel::Critical);
    let err =
        break_glass_confirm(&store, &clock, &cfg, S, &challenge.id, &challenge.phrase).unwrap_err();
    assert!(matches!(err, OverrideError::StaleChallenge { .. }), "{err}");
    let challenge = break_glass_challenge(&store, &clock, &cfg, S, None).unwrap();
    break_glass_confirm(&store, &clock, &cfg, S, &challenge.id, &challenge.phrase).unwrap();
}
