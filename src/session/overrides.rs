//! Human authorizations for an exact retry (design §6.6): the operator's
//! override of a non-critical model denial, and break glass for a critical
//! one.
//!
//! Rules enforced here, each in one `synchronous=FULL` transaction:
//! - Both are one-use, bound to the session and the request hash, and expire
//!   after `overrides.ttl_ms`; [`super::apply`] spends them (the decision table's effects).
//! - One approval per denial: not while one is pending for that action, and
//!   not after it was used until the model denies the action afresh (a new
//!   denial row). An approval that expired unused may be issued again: the
//!   human's intent stands and nothing was spent.
//! - Only the newest denial of each action is listed or selectable, so an
//!   action whose latest verdict was critical is offered only to break glass.
//! - Break glass: only `critical` denials of the last
//!   `overrides.break_glass_window_ms`, only while `break_glass_enabled`,
//!   and only after the human types a random `BREAK-GLASS <CODE>` phrase
//!   within [`CHALLENGE_TTL_MS`]. A challenge allows exactly one attempt: a
//!   wrong phrase spends it (no guessing), and a new challenge carries a new
//!   code.

use std::fmt;
use std::str::FromStr;

use crate::store::sql::{DbResult, Row, params};
use serde::Serialize;
use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;

use super::{AuthorizationKind, DENIAL_RETENTION_MS, column, ms_column};
use crate::clock::Clock;
use crate::config::Config;
use crate::decision::RiskLevel;
use crate::store::{Durability, Store, StoreError, Transaction, sql_ms};

/// How long the human has to type the break-glass phrase.
pub const CHALLENGE_TTL_MS: u64 = 60_000;
/// Characters of the break-glass code: no `0/O`, `1/I/L` to misread.
pub const CODE_ALPHABET: &[u8] = b"ABCDEFGHJKMNPQRSTUVWXYZ23456789";
/// Length of the break-glass code.
pub const CODE_LEN: usize = 8;
/// Shortest accepted request-hash prefix when selecting a denial.
pub const MIN_HASH_PREFIX: usize = 8;

#[derive(Debug, thiserror::Error)]
pub enum OverrideError {
    #[error("no such denial: `{selector}` matches no recent model denial in session `{session}`")]
    NoSuchDenial { selector: String, session: String },
    #[error(
        "selector `{selector}` is neither a list index (1–999) nor a request hash prefix of at least 8 hex digits"
    )]
    InvalidSelector { selector: String },
    #[error("hash prefix `{prefix}` matches {count} denials; give more digits")]
    AmbiguousPrefix { prefix: String, count: usize },
    #[error(
        "already approved and pending: an authorization for request `{hash}` expires in {remaining_s} s"
    )]
    AlreadyPending { hash: String, remaining_s: u64 },
    #[error(
        "already used; deny it again first: the approval of this denial of request `{hash}` was spent"
    )]
    AlreadyUsed { hash: String },
    #[error(
        "request `{hash}` was denied as critical: an exact-retry approval does not apply; use `vouch break-glass`"
    )]
    CriticalNeedsBreakGlass { hash: String },
    #[error(
        "not critical: request `{hash}` was denied at `{risk}` risk; break glass is only for critical denials, use `vouch approve`"
    )]
    NotCritical { hash: String, risk: &'static str },
    #[error(
        "the critical denial of request `{hash}` is older than the break glass window of {window_s} s"
    )]
    OutsideWindow { hash: String, window_s: u64 },
    #[error("no critical model denial in session `{session}` within the last {window_s} s")]
    NoCriticalDenial { session: String, window_s: u64 },
    #[error("break glass is disabled (`overrides.break_glass_enabled = false`)")]
    BreakGlassDisabled,
    #[error(
        "no such break glass challenge `{id}` in session `{session}` (already spent or never issued)"
    )]
    NoSuchChallenge { id: String, session: String },
    #[error(
        "the action was denied again after challenge `{id}` was issued; start a new one to see the current denial"
    )]
    StaleChallenge { id: String },
    #[error("phrase does not match; the challenge is spent, start a new one")]
    PhraseMismatch,
    #[error("challenge expired: the phrase must be typed within {ttl_s} s; start a new one")]
    ChallengeExpired { ttl_s: u64 },
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// How a denial is picked: 1-based index as listed, or a request hash
/// (full or a unique prefix of at least [`MIN_HASH_PREFIX`] hex digits).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Selector {
    Index(usize),
    Hash(String),
}

impl FromStr for Selector {
    type Err = OverrideError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let s = s.trim();
        let invalid = || OverrideError::InvalidSelector {
            selector: s.to_owned(),
        };
        if (1..=3).contains(&s.len()) && s.bytes().all(|b| b.is_ascii_digit()) {
            let index: usize = s.parse().map_err(|_| invalid())?;
            return if index == 0 {
                Err(invalid())
            } else {
                Ok(Selector::Index(index))
            };
        }
        if (MIN_HASH_PREFIX..=64).contains(&s.len()) && s.bytes().all(|b| b.is_ascii_hexdigit()) {
            return Ok(Selector::Hash(s.to_ascii_lowercase()));
        }
        Err(invalid())
    }
}

impl fmt::Display for Selector {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Selector::Index(i) => write!(f, "{i}"),
            Selector::Hash(h) => f.write_str(h),
        }
    }
}

/// Whether a denial can still be approved.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(tag = "state", rename_all = "snake_case")]
pub enum ApprovalState {
    Available,
    Pending {
        expires_at_ms: u64,
    },
    /// Approved and spent: approvable again only after a fresh denial.
    Used,
}

/// A recent model denial as an operator sees it. Every text field was
/// redacted by the pipeline before it was stored.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct DenialView {
    #[serde(skip)]
    pub(crate) denial_id: i64,
    pub request_hash: String,
    pub session_id: String,
    pub turn_id: String,
    pub risk_level: RiskLevel,
    pub surface: String,
    pub cwd: Option<String>,
    /// Redacted command or target.
    pub summary: String,
    pub rationale: String,
    pub created_at_ms: u64,
    pub approval: ApprovalState,
}

/// An exact-retry approval that was just created.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Approval {
    pub request_hash: String,
    pub session_id: String,
    pub expires_at_ms: u64,
}

/// A break-glass challenge: show `denial` and `phrase`, collect the phrase.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Challenge {
    pub id: String,
    /// `BREAK-GLASS <CODE>`: what the human must type.
    pub phrase: String,
    pub expires_at_ms: u64,
    pub denial: DenialView,
}

/// The columns [`denial_row`] reads, in its order.
const DENIAL_COLUMNS: &str = "d.id, d.request_hash, d.session_id, d.turn_id, d.risk_level, \
     d.surface, d.cwd, d.summary, d.rationale, d.created_at_ms";

/// Keeps only the newest denial of each action (session and request hash).
const NEWEST_OF_ACTION: &str = "d.id = (SELECT max(d2.id) FROM denials d2 \
     WHERE d2.session_id = d.session_id AND d2.request_hash = d.request_hash)";

/// One denial selected with [`DENIAL_COLUMNS`]; its approval state is
/// worked out afterwards.
fn denial_row(row: &Row<'_>) -> DbResult<DenialView> {
    Ok(DenialView {
        denial_id: row.get(0)?,
        request_hash: row.get(1)?,
        session_id: row.get(2)?,
        turn_id: row.get(3)?,
        risk_level: column(row, 4)?,
        surface: row.get(5)?,
        cwd: row.get(6)?,
        summary: row.get(7)?,
        rationale: row.get(8)?,
        created_at_ms: ms_column(row, 9)?,
        approval: ApprovalState::Available,
    })
}

/// The newest denial of each action in `session` still within retention,
/// newest first, with its approval state.
fn newest_denials(tx: &Transaction<'_>, session: &str, now: u64) -> DbResult<Vec<DenialView>> {
    let since = sql_ms(now.saturating_sub(DENIAL_RETENTION_MS));
    let mut denials = tx.query_all(
        &format!(
            "SELECT {DENIAL_COLUMNS} FROM denials d \
             WHERE d.session_id = ?1 AND d.created_at_ms >= ?2 AND {NEWEST_OF_ACTION} \
             ORDER BY d.id DESC"
        ),
        params![session, since],
        denial_row,
    )?;
    for denial in &mut denials {
        denial.approval = approval_state(tx, denial, now)?;
    }
    Ok(denials)
}

fn approval_state(tx: &Transaction<'_>, denial: &DenialView, now: u64) -> DbResult<ApprovalState> {
    let pending: Option<i64> = tx.query_one(
        "SELECT max(expires_at_ms) FROM authorizations WHERE session_id = ?1 \
         AND request_hash = ?2 AND used_at_ms IS NULL AND expires_at_ms > ?3",
        params![denial.session_id, denial.request_hash, sql_ms(now)],
        |row| row.get(0),
    )?;
    if let Some(expires) = pending {
        return Ok(ApprovalState::Pending {
            expires_at_ms: crate::store::ms_from_sql(expires),
        });
    }
    let used: Option<i64> = tx.query_opt(
        "SELECT id FROM authorizations WHERE denial_id = ?1 AND used_at_ms IS NOT NULL LIMIT 1",
        params![denial.denial_id],
        |row| row.get(0),
    )?;
    Ok(match used {
        Some(_) => ApprovalState::Used,
        None => ApprovalState::Available,
    })
}

fn is_critical(d: &DenialView) -> bool {
    d.risk_level == RiskLevel::Critical
}

/// A session's recent non-critical model denials, newest first, at most
/// `overrides.max_listed`: what `vouch approve` shows and indexes.
pub fn list_denials(
    store: &Store,
    clock: &dyn Clock,
    cfg: &Config,
    session: &str,
) -> Result<Vec<DenialView>, StoreError> {
    let now = clock.now_ms();
    store.read(|tx| Ok(listed_for_approval(newest_denials(tx, session, now)?, cfg)))
}

fn listed_for_approval(denials: Vec<DenialView>, cfg: &Config) -> Vec<DenialView> {
    let max = usize::try_from(cfg.overrides.max_listed).unwrap_or(usize::MAX);
    denials
        .into_iter()
        .filter(|d| !is_critical(d))
        .take(max)
        .collect()
}

/// What an operator can do about a listed denial.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Remedy {
    /// A non-critical denial: `approve` one exact retry (if its approval
    /// state allows).
    Approve,
    /// A critical denial inside the window while break glass is enabled.
    BreakGlass,
    /// A critical denial outside the window, or break glass disabled.
    None,
}

/// A denial of any session with what may be done about it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct RecentDenial {
    #[serde(flatten)]
    pub denial: DenialView,
    pub remedy: Remedy,
}

/// The newest denial of each action of every session, newest first, at
/// most `limit`: the operator console's list (the CLI lists one session).
pub fn recent_denials(
    store: &Store,
    clock: &dyn Clock,
    cfg: &Config,
    limit: u32,
) -> Result<Vec<RecentDenial>, StoreError> {
    let now = clock.now_ms();
    let denials = store.read(|tx| {
        let since = sql_ms(now.saturating_sub(DENIAL_RETENTION_MS));
        let mut denials = tx.query_all(
            &format!(
                "SELECT {DENIAL_COLUMNS} FROM denials d \
                 WHERE d.created_at_ms >= ?1 AND {NEWEST_OF_ACTION} \
                 ORDER BY d.id DESC LIMIT ?2"
            ),
            params![since, limit],
            denial_row,
        )?;
        for denial in &mut denials {
            denial.approval = approval_state(tx, denial, now)?;
        }
        Ok(denials)
    })?;
    Ok(denials
        .into_iter()
        .map(|denial| {
            let remedy = match (is_critical(&denial), cfg.overrides.break_glass_enabled) {
                (false, _) => Remedy::Approve,
                (true, true) if within_window(&denial, cfg, now) => Remedy::BreakGlass,
                (true, true | false) => Remedy::None,
            };
            RecentDenial { denial, remedy }
        })
        .collect())
}

/// A session's critical model denials eligible for break glass, newest first.
pub fn list_critical_denials(
    store: &Store,
    clock: &dyn Clock,
    cfg: &Config,
    session: &str,
) -> Result<Vec<DenialView>, OverrideError> {
    if !cfg.overrides.break_glass_enabled {
        return Err(OverrideError::BreakGlassDisabled);
    }
    let now = clock.now_ms();
    let denials = store.read(|tx| newest_denials(tx, session, now))?;
    Ok(denials
        .into_iter()
        .filter(|d| is_critical(d) && within_window(d, cfg, now))
        .collect())
}

fn within_window(d: &DenialView, cfg: &Config, now: u64) -> bool {
    d.created_at_ms >= now.saturating_sub(cfg.overrides.break_glass_window_ms)
}

/// Picks one denial by hash among `all` (the newest per action).
fn by_hash<'a>(
    all: &'a [DenialView],
    prefix: &str,
    session: &str,
) -> Result<&'a DenialView, OverrideError> {
    let mut matches = all.iter().filter(|d| d.request_hash.starts_with(prefix));
    match (matches.next(), matches.count()) {
        (Some(d), 0) => Ok(d),
        (Some(_), more) => Err(OverrideError::AmbiguousPrefix {
            prefix: prefix.to_owned(),
            count: more.saturating_add(1),
        }),
        (None, _) => Err(OverrideError::NoSuchDenial {
            selector: prefix.to_owned(),
            session: session.to_owned(),
        }),
    }
}

fn check_approvable(d: &DenialView, now: u64) -> Result<(), OverrideError> {
    match d.approval {
        ApprovalState::Available => Ok(()),
        ApprovalState::Pending { expires_at_ms } => Err(OverrideError::AlreadyPending {
            hash: d.request_hash.clone(),
            remaining_s: expires_at_ms.saturating_sub(now).div_ceil(1000),
        }),
        ApprovalState::Used => Err(OverrideError::AlreadyUsed {
            hash: d.request_hash.clone(),
        }),
    }
}

fn insert_authorization(
    tx: &Transaction<'_>,
    kind: AuthorizationKind,
    denial: &DenialView,
    now: u64,
    expires_at_ms: u64,
) -> DbResult<()> {
    tx.execute(
        "DELETE FROM authorizations WHERE created_at_ms < ?1",
        params![sql_ms(now.saturating_sub(DENIAL_RETENTION_MS))],
    )?;
    tx.execute(
        "INSERT INTO authorizations (kind, session_id, request_hash, denial_id, created_at_ms, \
         expires_at_ms) VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
        params![
            kind.as_str(),
            denial.session_id,
            denial.request_hash,
            denial.denial_id,
            sql_ms(now),
            sql_ms(expires_at_ms)
        ],
    )?;
    Ok(())
}

/// Approves one exact retry of a non-critical model denial.
pub fn approve(
    store: &Store,
    clock: &dyn Clock,
    cfg: &Config,
    session: &str,
    selector: &Selector,
) -> Result<Approval, OverrideError> {
    let now = clock.now_ms();
    let expires_at_ms = now.saturating_add(cfg.overrides.ttl_ms);
    store
        .write_session(session, Durability::Full, |tx| {
            let all = newest_denials(tx, session, now)?;
            let chosen = match selector {
                Selector::Index(index) => {
                    let listed = listed_for_approval(all, cfg);
                    match listed.into_iter().nth(index.saturating_sub(1)) {
                        Some(d) => d,
                        None => {
                            return Ok(Err(OverrideError::NoSuchDenial {
                                selector: selector.to_string(),
                                session: session.to_owned(),
                            }));
                        }
                    }
                }
                Selector::Hash(prefix) => match by_hash(&all, prefix, session) {
                    Ok(d) if is_critical(d) => {
                        return Ok(Err(OverrideError::CriticalNeedsBreakGlass {
                            hash: d.request_hash.clone(),
                        }));
                    }
                    Ok(d) => d.clone(),
                    Err(e) => return Ok(Err(e)),
                },
            };
            if let Err(e) = check_approvable(&chosen, now) {
                return Ok(Err(e));
            }
            insert_authorization(tx, AuthorizationKind::Override, &chosen, now, expires_at_ms)?;
            Ok(Ok(Approval {
                request_hash: chosen.request_hash,
                session_id: session.to_owned(),
                expires_at_ms,
            }))
        })
        .map_err(OverrideError::from)
        .and_then(|inner| inner)
}

fn phrase_digest(phrase: &str) -> String {
    hex::encode(Sha256::digest(phrase.as_bytes()))
}

/// [`CODE_LEN`] characters drawn uniformly from [`CODE_ALPHABET`]: random
/// bytes at or above the largest multiple of the alphabet's size are
/// rejected, so no character is likelier than another.
fn random_code() -> Result<String, StoreError> {
    let size = CODE_ALPHABET.len();
    let limit = 256 - 256 % size;
    let mut code = String::with_capacity(CODE_LEN);
    // Each byte is kept with probability limit/256 (> 0.96 for 31 symbols);
    // the attempt cap only stops a broken random source from spinning.
    for _ in 0..64 {
        for b in crate::store::random_bytes::<16>()? {
            let b = usize::from(b);
            if b < limit
                && let Some(&c) = CODE_ALPHABET.get(b % size)
            {
                code.push(char::from(c));
                if code.len() == CODE_LEN {
                    return Ok(code);
                }
            }
        }
    }
    Err(StoreError::Random {
        message: "the random source kept returning rejected bytes".to_owned(),
    })
}

/// Starts break glass for a critical model denial: the newest eligible one,
/// or the one `selector` names.
pub fn break_glass_challenge(
    store: &Store,
    clock: &dyn Clock,
    cfg: &Config,
    session: &str,
    selector: Option<&Selector>,
) -> Result<Challenge, OverrideError> {
    if !cfg.overrides.break_glass_enabled {
        return Err(OverrideError::BreakGlassDisabled);
    }
    let now = clock.now_ms();
    let window_s = cfg.overrides.break_glass_window_ms / 1000;
    let id = hex::encode(crate::store::random_bytes::<16>()?);
    let phrase = format!("BREAK-GLASS {}", random_code()?);
    let expires_at_ms = now.saturating_add(CHALLENGE_TTL_MS);
    store
        .write_session(session, Durability::Full, |tx| {
            let all = newest_denials(tx, session, now)?;
            let eligible: Vec<&DenialView> = all
                .iter()
                .filter(|d| is_critical(d) && within_window(d, cfg, now))
                .collect();
            let chosen = match selector {
                None => match eligible.first() {
                    Some(d) => (*d).clone(),
                    None => {
                        return Ok(Err(OverrideError::NoCriticalDenial {
                            session: session.to_owned(),
                            window_s,
                        }));
                    }
                },
                Some(Selector::Index(index)) => match eligible.get(index.saturating_sub(1)) {
                    Some(d) => (*d).clone(),
                    None => {
                        return Ok(Err(OverrideError::NoSuchDenial {
                            selector: index.to_string(),
                            session: session.to_owned(),
                        }));
                    }
                },
                Some(Selector::Hash(prefix)) => match by_hash(&all, prefix, session) {
                    Ok(d) if !is_critical(d) => {
                        return Ok(Err(OverrideError::NotCritical {
                            hash: d.request_hash.clone(),
                            risk: d.risk_level.as_str(),
                        }));
                    }
                    Ok(d) if !within_window(d, cfg, now) => {
                        return Ok(Err(OverrideError::OutsideWindow {
                            hash: d.request_hash.clone(),
                            window_s,
                        }));
                    }
                    Ok(d) => d.clone(),
                    Err(e) => return Ok(Err(e)),
                },
            };
            if let Err(e) = check_approvable(&chosen, now) {
                return Ok(Err(e));
            }
            tx.execute(
                "DELETE FROM break_glass_challenges WHERE expires_at_ms <= ?1",
                params![sql_ms(now)],
            )?;
            tx.execute(
                "INSERT INTO break_glass_challenges (id, session_id, denial_id, phrase_sha256, \
                 created_at_ms, expires_at_ms) VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
                params![
                    id,
                    session,
                    chosen.denial_id,
                    phrase_digest(&phrase),
                    sql_ms(now),
                    sql_ms(expires_at_ms)
                ],
            )?;
            Ok(Ok(Challenge {
                id: id.clone(),
                phrase: phrase.clone(),
                expires_at_ms,
                denial: chosen,
            }))
        })
        .map_err(OverrideError::from)
        .and_then(|inner| inner)
}

/// Completes break glass: `typed` must equal the challenge's phrase
/// (surrounding whitespace ignored) before it expires. Any attempt spends
/// the challenge. Success creates a one-use authorization that lets the
/// exact retry allow without the model and resets the turn's breaker.
pub fn break_glass_confirm(
    store: &Store,
    clock: &dyn Clock,
    cfg: &Config,
    session: &str,
    challenge_id: &str,
    typed: &str,
) -> Result<Approval, OverrideError> {
    if !cfg.overrides.break_glass_enabled {
        return Err(OverrideError::BreakGlassDisabled);
    }
    let now = clock.now_ms();
    let typed_digest = phrase_digest(typed.trim());
    let expires_at_ms = now.saturating_add(cfg.overrides.ttl_ms);
    store
        .write_session(session, Durability::Full, |tx| {
            let challenge: Option<(i64, String, u64)> = tx.query_opt(
                "DELETE FROM break_glass_challenges WHERE id = ?1 AND session_id = ?2 \
                 RETURNING denial_id, phrase_sha256, expires_at_ms",
                params![challenge_id, session],
                |row| Ok((row.get(0)?, row.get(1)?, ms_column(row, 2)?)),
            )?;
            let Some((denial_id, expected_digest, challenge_expires)) = challenge else {
                return Ok(Err(OverrideError::NoSuchChallenge {
                    id: challenge_id.to_owned(),
                    session: session.to_owned(),
                }));
            };
            // The challenge row is deleted above and that deletion commits
            // whatever happens next: one attempt per challenge.
            if challenge_expires <= now {
                return Ok(Err(OverrideError::ChallengeExpired {
                    ttl_s: CHALLENGE_TTL_MS / 1000,
                }));
            }
            let matches: bool = typed_digest
                .as_bytes()
                .ct_eq(expected_digest.as_bytes())
                .into();
            if !matches {
                return Ok(Err(OverrideError::PhraseMismatch));
            }
            let all = newest_denials(tx, session, now)?;
            let Some(denial) = all.into_iter().find(|d| d.denial_id == denial_id) else {
                // The action was denied again (a newer row) or the row aged
                // out; the human must look at the current denial.
                return Ok(Err(OverrideError::StaleChallenge {
                    id: challenge_id.to_owned(),
                }));
            };
            if let Err(e) = check_approvable(&denial, now) {
                return Ok(Err(e));
            }
            insert_authorization(
                tx,
                AuthorizationKind::BreakGlass,
                &denial,
                now,
                expires_at_ms,
            )?;
            Ok(Ok(Approval {
                request_hash: denial.request_hash,
                session_id: session.to_owned(),
                expires_at_ms,
            }))
        })
        .map_err(OverrideError::from)
        .and_then(|inner| inner)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn selectors_parse() {
        assert_eq!("2".parse::<Selector>().unwrap(), Selector::Index(2));
        assert_eq!(
            "ABCDEF12".parse::<Selector>().unwrap(),
            Selector::Hash("abcdef12".into())
        );
        assert!("0".parse::<Selector>().is_err());
        assert!("abc".parse::<Selector>().is_err());
        assert!("abcdefg1".parse::<Selector>().is_err());
        assert!("1234".parse::<Selector>().is_err());
        assert_eq!(
            "12345678".parse::<Selector>().unwrap(),
            Selector::Hash("12345678".into())
        );
    }

    fn denial(hash: &str) -> DenialView {
        DenialView {
            denial_id: 1,
            request_hash: hash.to_owned(),
            session_id: "s".into(),
            turn_id: "t".into(),
            risk_level: RiskLevel::Low,
            surface: "bash".into(),
            cwd: None,
            summary: "x".into(),
            rationale: "r".into(),
            created_at_ms: 0,
            approval: ApprovalState::Available,
        }
    }

    #[test]
    fn a_prefix_must_pick_exactly_one_denial() {
        let all = [
            denial("abcdef0011aa"),
            denial("abcdef0022bb"),
            denial("123456789acc"),
        ];
        let err = by_hash(&all, "abcdef00", "s").unwrap_err();
        assert!(
            matches!(err, OverrideError::AmbiguousPrefix { count: 2, .. }),
            "{err}"
        );
        assert!(err.to_string().contains("give more digits"));
        assert_eq!(
            by_hash(&all, "abcdef0022", "s").unwrap().request_hash,
            "abcdef0022bb"
        );
        assert!(matches!(
            by_hash(&all, "ffffffff", "s").unwrap_err(),
            OverrideError::NoSuchDenial { .. }
        ));
    }

    #[test]
    fn codes_use_the_unambiguous_alphabet() {
        for _ in 0..100 {
            let code = random_code().unwrap();
            assert_eq!(code.len(), CODE_LEN);
            assert!(code.bytes().all(|b| CODE_ALPHABET.contains(&b)));
            assert!(!code.contains(['0', 'O', '1', 'I', 'L']));
        }
    }
}
