//! Human authorizations (design §6.6): exact-retry overrides and break
//! glass, through the library API and the interactive CLI logic, with the
//! retries decided by the real engine.

use std::io::{BufReader, Read};
use std::sync::{Arc, Mutex};

use crate::support::state::{Gate, S, State, gate, request, request_in, verdict, with_command};
use vouch::clock::Clock;
use vouch::config::Config;
use vouch::decision::{Outcome, RiskLevel, Stage};
use vouch::session::operator::{OperatorContext, OperatorError, run_approve, run_break_glass};
use vouch::session::overrides::{
    self, Approval, ApprovalState, CHALLENGE_TTL_MS, Challenge, DenialView, OverrideError, Selector,
};
use vouch::store::Store;

/// The request hash of action `tag`.
fn hash(tag: &str) -> String {
    request("t-1", tag).request_hash()
}

impl State {
    fn list(&self) -> Vec<DenialView> {
        overrides::list_denials(&self.store(), &*self.clock, &self.cfg, S).unwrap()
    }

    fn approve(&self, selector: &Selector) -> Result<Approval, OverrideError> {
        overrides::approve(&self.store(), &*self.clock, &self.cfg, S, selector)
    }

    fn challenge(&self, selector: Option<&Selector>) -> Result<Challenge, OverrideError> {
        self.challenge_with(&self.cfg, selector)
    }

    fn challenge_with(
        &self,
        cfg: &Config,
        selector: Option<&Selector>,
    ) -> Result<Challenge, OverrideError> {
        overrides::break_glass_challenge(&self.store(), &*self.clock, cfg, S, selector)
    }

    fn confirm(&self, session: &str, id: &str, phrase: &str) -> Result<Approval, OverrideError> {
        self.confirm_with(&self.cfg, session, id, phrase)
    }

    fn confirm_with(
        &self,
        cfg: &Config,
        session: &str,
        id: &str,
        phrase: &str,
    ) -> Result<Approval, OverrideError> {
        overrides::break_glass_confirm(&self.store(), &*self.clock, cfg, session, id, phrase)
    }

    fn critical(&self, cfg: &Config) -> Result<Vec<DenialView>, OverrideError> {
        overrides::list_critical_denials(&self.store(), &*self.clock, cfg, S)
    }

    /// The retry of action `tag` in `turn`, up to the model.
    fn retry(&self, turn: &str, tag: &str) -> Gate {
        gate(&self.engine, request(turn, tag))
    }
}

/// State for these tests: the verdict cache is off, so each denial of the
/// same action is a fresh model denial (the cache has its own tests, and one
/// here shows an approval beats a cached denial).
fn fresh() -> State {
    fresh_with(|_| {})
}

fn fresh_with(edit: impl FnOnce(&mut Config)) -> State {
    State::with(|c| {
        c.cache.ttl_ms = 0;
        edit(c);
    })
}

/// A review reached the model without any human authorization.
fn plain_review(g: &Gate) -> bool {
    g.is_review() && !g.has_override()
}

#[test]
fn lists_newest_first_deduplicated_without_critical_ones() {
    let s = fresh();
    let (a, b) = (hash("aa"), hash("bb"));
    s.deny(request("t-1", "aa"), RiskLevel::High);
    s.deny(request("t-2", "bb"), RiskLevel::Medium);
    s.deny(request("t-2", "cc"), RiskLevel::Critical);
    s.deny(request("t-2", "aa"), RiskLevel::High);
    let listed = s.list();
    let hashes: Vec<&str> = listed.iter().map(|d| d.request_hash.as_str()).collect();
    assert_eq!(hashes, vec![a.as_str(), b.as_str()]);
    assert_eq!(listed[0].turn_id, "t-2");
    assert_eq!(listed[0].summary, "curl -X DELETE https://api.example/prod");
    assert_eq!(listed[0].cwd.as_deref(), Some("/srv/app"));
    assert_eq!(listed[0].approval, ApprovalState::Available);
    // Another session sees nothing.
    assert!(
        overrides::list_denials(&s.store(), &*s.clock, &s.cfg, "s-2")
            .unwrap()
            .is_empty()
    );
}

#[test]
fn list_is_capped_at_max_listed() {
    let s = fresh_with(|c| {
        c.overrides.max_listed = 3;
        c.turn.max_reviews = 100;
        c.breaker.consecutive_denials = 100;
    });
    for i in 0..5 {
        s.deny(request("t-1", &format!("{i:02}")), RiskLevel::Low);
    }
    let listed = s.list();
    assert_eq!(listed.len(), 3);
    assert_eq!(listed[0].request_hash, hash("04"));
    // An index past the list is no such denial.
    assert!(matches!(
        s.approve(&Selector::Index(4)).unwrap_err(),
        OverrideError::NoSuchDenial { .. }
    ));
}

#[test]
fn an_override_is_single_use_and_reaches_the_model_as_context() {
    let s = fresh();
    let a = hash("aa");
    s.deny(request("t-1", "aa"), RiskLevel::High);
    let approval = s.approve(&Selector::Index(1)).unwrap();
    assert_eq!(approval.request_hash, a);
    assert_eq!(
        approval.expires_at_ms,
        s.clock.now_ms() + s.cfg.overrides.ttl_ms
    );
    // Other sessions and other actions do not see it.
    assert!(plain_review(&gate(
        &s.engine,
        request_in("s-2", "t-1", "aa")
    )));
    assert!(plain_review(&s.retry("t-2", "bb")));
    // The exact retry, in a later turn, carries it to the model once, with
    // the denial it answers.
    match s.retry("t-2", "aa") {
        Gate::Review(pending) => {
            let packet = &pending.packet().user;
            assert!(packet.contains("human operator approved"), "{packet}");
            assert!(packet.contains("risky action"), "{packet}");
            assert_eq!(pending.job().request_hash, a);
        }
        other => panic!("expected the override, got {other:?}"),
    }
    assert!(plain_review(&s.retry("t-2", "aa")));
}

#[test]
fn an_allowed_approved_retry_is_decided_at_stage_override() {
    let s = fresh();
    s.deny(request("t-1", "aa"), RiskLevel::High);
    s.approve(&Selector::Index(1)).unwrap();
    let allow = verdict(Outcome::Allow, RiskLevel::Medium, "the user approved it");
    let d = s.review(request("t-2", "aa"), allow.clone());
    assert_eq!((d.outcome(), d.stage()), (Outcome::Allow, Stage::Override));
    // Without the approval, the same verdict is the reviewer's own.
    let d = s.review(request("t-3", "bb"), allow);
    assert_eq!((d.outcome(), d.stage()), (Outcome::Allow, Stage::Reviewer));
}

#[test]
fn no_reissue_while_pending_nor_after_use_until_denied_again() {
    let s = fresh();
    let a = hash("aa");
    s.deny(request("t-1", "aa"), RiskLevel::Medium);
    s.approve(&Selector::Index(1)).unwrap();
    let err = s.approve(&Selector::Index(1)).unwrap_err();
    assert!(matches!(err, OverrideError::AlreadyPending { .. }), "{err}");
    assert!(err.to_string().contains("already approved and pending"));
    assert!(matches!(
        s.list()[0].approval,
        ApprovalState::Pending { .. }
    ));
    // Spend it.
    assert!(s.retry("t-2", "aa").has_override());
    let err = s.approve(&Selector::Hash(a.clone())).unwrap_err();
    assert!(matches!(err, OverrideError::AlreadyUsed { .. }), "{err}");
    assert!(
        err.to_string()
            .contains("already used; deny it again first")
    );
    assert_eq!(s.list()[0].approval, ApprovalState::Used);
    // A fresh denial of the same action may be approved again.
    s.deny(request("t-3", "aa"), RiskLevel::Medium);
    s.approve(&Selector::Hash(a[..8].to_owned())).unwrap();
}

#[test]
fn an_approval_that_expired_unused_may_be_issued_again() {
    let s = fresh();
    s.deny(request("t-1", "aa"), RiskLevel::Medium);
    s.approve(&Selector::Index(1)).unwrap();
    s.clock.advance(s.cfg.overrides.ttl_ms);
    assert!(plain_review(&s.retry("t-2", "aa")));
    s.approve(&Selector::Index(1)).unwrap();
}

/// (Two real request hashes sharing 8 hex digits would take ~2^32 tries;
/// the ambiguity rule itself is a unit test of `session::overrides`.)
#[test]
fn selection_by_full_hash_or_prefix() {
    let s = fresh_with(|c| c.breaker.consecutive_denials = 100);
    for tag in ["x1", "x2", "y"] {
        s.deny(request("t-1", tag), RiskLevel::Low);
    }
    let (h2, hy) = (hash("x2"), hash("y"));
    let approval = s.approve(&h2[..10].parse().unwrap()).unwrap();
    assert_eq!(approval.request_hash, h2);
    let approval = s.approve(&hy.parse().unwrap()).unwrap();
    assert_eq!(approval.request_hash, hy);
    let known = [hash("x1"), h2, hy];
    let unknown = (0..)
        .map(|i| format!("{i:08x}"))
        .find(|p| !known.iter().any(|h| h.starts_with(p.as_str())))
        .unwrap();
    let err = s.approve(&unknown.parse().unwrap()).unwrap_err();
    assert!(err.to_string().starts_with("no such denial"), "{err}");
    assert!(matches!(
        "abc".parse::<Selector>().unwrap_err(),
        OverrideError::InvalidSelector { .. }
    ));
}

#[test]
fn critical_denials_are_not_approvable() {
    let s = fresh();
    s.deny(request("t-1", "cc"), RiskLevel::Critical);
    assert!(s.list().is_empty());
    assert!(matches!(
        s.approve(&Selector::Index(1)).unwrap_err(),
        OverrideError::NoSuchDenial { .. }
    ));
    assert!(matches!(
        s.approve(&Selector::Hash(hash("cc"))).unwrap_err(),
        OverrideError::CriticalNeedsBreakGlass { .. }
    ));
}

#[test]
fn an_open_breaker_holds_an_override_for_later_and_the_cache_never_swallows_it() {
    let s = State::new();
    for tag in ["01", "02"] {
        s.deny(request("t-1", tag), RiskLevel::Low);
    }
    // The third denial (cached under its packet) opens the breaker of t-1.
    s.deny(request("t-1", "aa"), RiskLevel::Medium);
    s.approve(&Selector::Hash(hash("aa"))).unwrap();
    assert_eq!(s.retry("t-1", "aa").stage(), Stage::Breaker);
    // Still pending; in the next turn the cached denial does not win.
    assert!(s.retry("t-2", "aa").has_override());
}

/// Opens t-1's breaker with a critical denial of `cc` as the third.
fn critical_with_open_breaker(s: &State) {
    s.deny(request("t-1", "01"), RiskLevel::High);
    s.deny(request("t-1", "02"), RiskLevel::High);
    s.deny(request("t-1", "cc"), RiskLevel::Critical);
    assert_eq!(s.retry("t-1", "03").stage(), Stage::Breaker);
}

#[test]
fn break_glass_success_allows_once_without_the_model_and_resets_the_breaker() {
    let s = fresh();
    let c = hash("cc");
    critical_with_open_breaker(&s);
    assert_eq!(s.critical(&s.cfg).unwrap().len(), 1);
    let challenge = s.challenge(None).unwrap();
    assert_eq!(challenge.denial.request_hash, c);
    assert_eq!(
        challenge.denial.rationale,
        format!("risky action {}", &c[..8])
    );
    assert_eq!(challenge.expires_at_ms, s.clock.now_ms() + CHALLENGE_TTL_MS);
    let code = challenge.phrase.strip_prefix("BREAK-GLASS ").unwrap();
    assert_eq!(code.len(), 8);
    s.clock.advance(CHALLENGE_TTL_MS - 1);
    let auth = s
        .confirm(S, &challenge.id, &format!("  {}\n", challenge.phrase))
        .unwrap();
    assert_eq!(auth.request_hash, c);
    // Pending: no second challenge.
    assert!(matches!(
        s.challenge(None).unwrap_err(),
        OverrideError::AlreadyPending { .. }
    ));
    let reviews_before = s.status("t-1").reviews;
    let g = s.retry("t-1", "cc");
    let d = g.decision();
    assert_eq!(
        (d.outcome(), d.stage()),
        (Outcome::Allow, Stage::BreakGlass)
    );
    assert_eq!(d.request_hash(), c);
    assert!(
        d.rationale().contains("denied earlier: risky action"),
        "{d:?}"
    );
    let status = s.status("t-1");
    assert!(!status.breaker_open);
    assert_eq!(status.consecutive_denials, 0);
    assert_eq!(status.reviews, reviews_before, "break glass is not billed");
    // One use: the same request now goes to the model (breaker is closed).
    assert!(plain_review(&s.retry("t-1", "cc")));
    // And it cannot be reissued until the model denies it afresh.
    assert!(matches!(
        s.challenge(None).unwrap_err(),
        OverrideError::AlreadyUsed { .. }
    ));
}

#[test]
fn wrong_phrase_is_refused_and_spends_the_challenge() {
    let s = fresh();
    s.deny(request("t-1", "cc"), RiskLevel::Critical);
    let challenge = s.challenge(None).unwrap();
    let err = s
        .confirm(S, &challenge.id, "BREAK-GLASS AAAAAAAA")
        .unwrap_err();
    assert!(matches!(err, OverrideError::PhraseMismatch), "{err}");
    assert!(err.to_string().contains("phrase does not match"));
    let err = s.confirm(S, &challenge.id, &challenge.phrase).unwrap_err();
    assert!(
        matches!(err, OverrideError::NoSuchChallenge { .. }),
        "{err}"
    );
    // Lowercase is a different phrase.
    let challenge = s.challenge(None).unwrap();
    assert!(matches!(
        s.confirm(S, &challenge.id, &challenge.phrase.to_lowercase())
            .unwrap_err(),
        OverrideError::PhraseMismatch
    ));
    // A challenge belongs to its session.
    let challenge = s.challenge(None).unwrap();
    assert!(matches!(
        s.confirm("s-2", &challenge.id, &challenge.phrase)
            .unwrap_err(),
        OverrideError::NoSuchChallenge { .. }
    ));
    assert!(plain_review(&s.retry("t-2", "cc")));
}

#[test]
fn a_phrase_typed_after_sixty_seconds_is_refused() {
    let s = fresh();
    s.deny(request("t-1", "cc"), RiskLevel::Critical);
    let challenge = s.challenge(None).unwrap();
    s.clock.advance(61_000);
    let err = s.confirm(S, &challenge.id, &challenge.phrase).unwrap_err();
    assert!(
        matches!(err, OverrideError::ChallengeExpired { .. }),
        "{err}"
    );
    assert!(err.to_string().contains("challenge expired"));
    assert!(s.retry("t-2", "cc").is_review());
}

#[test]
fn break_glass_refuses_non_critical_denials() {
    let s = fresh();
    s.deny(request("t-1", "aa"), RiskLevel::High);
    let err = s.challenge(Some(&Selector::Hash(hash("aa")))).unwrap_err();
    assert!(matches!(err, OverrideError::NotCritical { .. }), "{err}");
    assert!(err.to_string().starts_with("not critical"));
    assert!(matches!(
        s.challenge(None).unwrap_err(),
        OverrideError::NoCriticalDenial { .. }
    ));
}

#[test]
fn break_glass_refuses_denials_older_than_the_window() {
    let s = fresh();
    s.deny(request("t-1", "cc"), RiskLevel::Critical);
    s.clock.advance(s.cfg.overrides.break_glass_window_ms + 1);
    assert!(s.critical(&s.cfg).unwrap().is_empty());
    assert!(matches!(
        s.challenge(None).unwrap_err(),
        OverrideError::NoCriticalDenial { .. }
    ));
    assert!(matches!(
        s.challenge(Some(&Selector::Hash(hash("cc")))).unwrap_err(),
        OverrideError::OutsideWindow { .. }
    ));
}

#[test]
fn break_glass_disabled_by_config_refuses_and_is_not_honoured() {
    let s = fresh();
    s.deny(request("t-1", "cc"), RiskLevel::Critical);
    let challenge = s.challenge(None).unwrap();
    let mut disabled = s.cfg.clone();
    disabled.overrides.break_glass_enabled = false;
    for err in [
        s.challenge_with(&disabled, None).unwrap_err(),
        s.critical(&disabled).unwrap_err(),
        s.confirm_with(&disabled, S, &challenge.id, &challenge.phrase)
            .unwrap_err(),
    ] {
        assert!(matches!(err, OverrideError::BreakGlassDisabled), "{err}");
        assert!(err.to_string().contains("break glass is disabled"));
    }
    // Confirmed while enabled, then disabled (say, by a project overlay):
    // the gate does not honour it.
    s.confirm(S, &challenge.id, &challenge.phrase).unwrap();
    let off = s.engine_with(&disabled);
    assert!(gate(&off, request("t-2", "cc")).is_review());
    assert_eq!(s.retry("t-2", "cc").stage(), Stage::BreakGlass);
}

fn ctx<'a>(s: &'a State, store: &'a Store) -> OperatorContext<'a> {
    OperatorContext {
        store,
        clock: &*s.clock,
        cfg: &s.cfg,
        session: S,
    }
}

#[test]
fn run_break_glass_refuses_without_a_terminal() {
    let s = fresh();
    s.deny(request("t-1", "cc"), RiskLevel::Critical);
    let store = s.store();
    let mut out = Vec::new();
    let err = run_break_glass(ctx(&s, &store), &b""[..], &mut out, false).unwrap_err();
    assert!(matches!(err, OperatorError::NotATerminal), "{err}");
    assert!(err.to_string().contains("interactive terminal"));
    assert!(out.is_empty());
    // Nothing was created.
    assert!(plain_review(&s.retry("t-2", "cc")));
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
    let s = fresh();
    let c = hash("cc");
    critical_with_open_breaker(&s);
    let screen = Arc::new(Mutex::new(Vec::new()));
    let input = BufReader::new(TypesThePhrase {
        screen: screen.clone(),
        typed: None,
    });
    let store = s.store();
    let auth = run_break_glass(ctx(&s, &store), input, Screen(screen.clone()), true).unwrap();
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
    assert_eq!(s.retry("t-1", "cc").stage(), Stage::BreakGlass);
}

#[test]
fn run_break_glass_with_a_wrong_phrase_authorizes_nothing() {
    let s = fresh();
    s.deny(request("t-1", "cc"), RiskLevel::Critical);
    let store = s.store();
    let mut out = Vec::new();
    let err = run_break_glass(
        ctx(&s, &store),
        &b"BREAK-GLASS 2345ABCD\n"[..],
        &mut out,
        true,
    )
    .unwrap_err();
    assert!(matches!(
        err,
        OperatorError::Override(OverrideError::PhraseMismatch)
    ));
    assert!(plain_review(&s.retry("t-2", "cc")));
}

#[test]
fn run_approve_lists_then_approves_by_index_or_prompt() {
    let s = fresh();
    let a = hash("aa");
    s.deny(request("t-1", "aa"), RiskLevel::High);
    // A summary that tries to drive the terminal is shown escaped.
    let evil = with_command(request("t-1", "ee"), "echo \u{1b}[2Jhi");
    let evil_hash = evil.request_hash();
    s.review(evil, verdict(Outcome::Deny, RiskLevel::Low, "r"));

    let store = s.store();
    let mut out = Vec::new();
    let listed = run_approve(ctx(&s, &store), None, &b""[..], &mut out, false).unwrap();
    assert!(listed.is_none());
    let text = String::from_utf8(out).unwrap();
    assert!(text.contains("  1. [low]"), "{text}");
    assert!(text.contains("  2. [high]"), "{text}");
    assert!(text.contains("\\u{1b}[2Jhi"), "{text}");
    assert!(!text.contains('\u{1b}'));
    assert!(text.contains("vouch approve --session s-1"));

    let mut out = Vec::new();
    let approval = run_approve(ctx(&s, &store), Some("2"), &b""[..], &mut out, false)
        .unwrap()
        .unwrap();
    assert_eq!(approval.request_hash, a);

    let mut out = Vec::new();
    let approval = run_approve(ctx(&s, &store), None, &b"1\n"[..], &mut out, true)
        .unwrap()
        .unwrap();
    assert_eq!(approval.request_hash, evil_hash);
    let text = String::from_utf8(out).unwrap();
    assert!(text.contains("Approve which one?"), "{text}");

    let mut out = Vec::new();
    let err = run_approve(ctx(&s, &store), Some("1"), &b""[..], &mut out, false).unwrap_err();
    assert!(
        err.to_string().contains("already approved and pending"),
        "{err}"
    );
}

#[test]
fn run_approve_with_nothing_to_approve_says_so() {
    let s = fresh();
    let store = s.store();
    let mut out = Vec::new();
    let err = run_approve(ctx(&s, &store), None, &b""[..], &mut out, true).unwrap_err();
    assert!(
        matches!(err, OperatorError::NothingToApprove { .. }),
        "{err}"
    );
    s.deny(request("t-1", "aa"), RiskLevel::Low);
    let err = run_approve(ctx(&s, &store), None, &b"\n"[..], &mut out, true).unwrap_err();
    assert!(matches!(err, OperatorError::Cancelled), "{err}");
}

#[test]
fn a_challenge_for_a_denial_that_was_repeated_is_stale() {
    let s = fresh();
    s.deny(request("t-1", "cc"), RiskLevel::Critical);
    let challenge = s.challenge(None).unwrap();
    s.deny(request("t-2", "cc"), RiskLevel::Critical);
    let err = s.confirm(S, &challenge.id, &challenge.phrase).unwrap_err();
    assert!(matches!(err, OverrideError::StaleChallenge { .. }), "{err}");
    let challenge = s.challenge(None).unwrap();
    s.confirm(S, &challenge.id, &challenge.phrase).unwrap();
}
