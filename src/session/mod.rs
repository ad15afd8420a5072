//! Per-turn session state (design §6.3): the circuit breaker, review and
//! failure budgets, the verdict cache and recent model denials, persisted in
//! the state database so a restart forgets nothing and the daemon and hook
//! processes share one view.
//!
//! This module is the state half of the decision: it reads a [`Snapshot`]
//! of one turn (its counters and the human authorizations pending for the
//! request) and a cache lookup, which the decision table
//! ([`crate::pipeline`]) reads as plain data, and it applies the state
//! [`Effect`]s the table returns, inside the caller's transaction. The
//! breaker's rules are pure methods of [`TurnState`]; the order of the
//! stages lives in the table, not here.
//!
//! Human authorizations are created in [`overrides`]; the interactive CLI
//! commands live in [`operator`].

pub mod effects;
pub mod operator;
pub mod overrides;
pub mod prompts;

use serde::Serialize;

use crate::config::{BreakerConfig, Config};
use crate::decision::{Outcome, RiskLevel};
use crate::names::named_enum;
use crate::reviewer::Verdict;
use crate::store::sql::{DbError, DbResult, Row, params};
use crate::store::{PruneClock, Store, StoreError, Transaction, ms_from_sql, sql_ms};
pub use effects::{DenialRecord, Effect};

/// How long a turn's counters are kept after their last update. A turn that
/// is idle this long is over; a new turn starts closed anyway.
pub const TURN_STATE_RETENTION_MS: u64 = 24 * 60 * 60 * 1000;
/// How often one process prunes idle turns (a scan of the whole table, so
/// not on every new turn: with a day of turns kept, a scan per new turn
/// grew with the table and held the write lock for it). Idle turns thus live
/// up to this much past their retention.
pub const TURN_PRUNE_EVERY_MS: u64 = 60 * 1000;

/// When this process prunes idle turns next.
static TURN_PRUNE: PruneClock = PruneClock::new(TURN_PRUNE_EVERY_MS);

/// How long a model denial stays listed for operators.
pub const DENIAL_RETENTION_MS: u64 = 24 * 60 * 60 * 1000;
/// Denial summaries kept per session (newest win).
pub const MAX_DENIALS_PER_SESSION: u32 = 100;
/// Longest stored text field (summary, rationale, suggestion), in bytes.
/// Longer text is cut at a character boundary with an explicit marker.
pub const MAX_STORED_TEXT_BYTES: usize = 2048;

/// The (session, turn) that scopes the breaker and budgets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TurnKey<'a> {
    pub session: &'a str,
    pub turn: &'a str,
}

named_enum! {
    /// What a one-use human authorization lets the exact retry do.
    pub enum AuthorizationKind {
        /// Reviewed again, with the approval as trusted context.
        Override = "override",
        /// Allowed without the model.
        BreakGlass = "break_glass",
    }
}

/// A human authorization pending for this session and request hash.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PendingAuthorization {
    pub id: i64,
    pub kind: AuthorizationKind,
    pub created_at_ms: u64,
    /// Rationale of the denial the human approved past, when still known.
    pub denied_rationale: Option<String>,
    pub denied_risk_level: Option<RiskLevel>,
}

/// One turn as the decision table sees it.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Snapshot {
    pub turn: TurnState,
    /// Unexpired, unused authorizations for this session and request hash,
    /// oldest first.
    pub pending: Vec<PendingAuthorization>,
}

impl Snapshot {
    /// The oldest pending authorization of `kind`.
    pub fn pending(&self, kind: AuthorizationKind) -> Option<&PendingAuthorization> {
        self.pending.iter().find(|a| a.kind == kind)
    }
}

/// A turn's counters, for operators, metrics and tests.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
pub struct TurnStatus {
    pub reviews: u32,
    pub failures: u32,
    pub verdicts: u32,
    pub denials: u32,
    pub consecutive_denials: u32,
    /// Denials among the last `breaker.window_size` verdicts.
    pub window_denials: u32,
    pub breaker_open: bool,
}

/// A turn's row: the counters the breaker and budgets read.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct TurnState {
    /// Model-backed reviews reserved this turn.
    pub reviews: u32,
    pub failures: u32,
    pub verdicts: u32,
    pub denials: u32,
    pub consecutive_denials: u32,
    /// 'D' (denial) or 'A' (anything else) per verdict, oldest first.
    pub recent: String,
    pub breaker_open: bool,
    /// Whether the row was in the database when loaded.
    pub stored: bool,
}

impl TurnState {
    /// A stored turn whose columns `reviews, failures, verdicts, denials,
    /// consecutive_denials, recent, breaker_open` start at `first`.
    fn stored_at(row: &Row<'_>, first: usize) -> DbResult<TurnState> {
        Ok(TurnState {
            reviews: row.get(first)?,
            failures: row.get(first + 1)?,
            verdicts: row.get(first + 2)?,
            denials: row.get(first + 3)?,
            consecutive_denials: row.get(first + 4)?,
            recent: row.get(first + 5)?,
            breaker_open: row.get(first + 6)?,
            stored: true,
        })
    }

    fn load(tx: &Transaction<'_>, key: TurnKey<'_>) -> DbResult<TurnState> {
        tx.query_opt(
            "SELECT reviews, failures, verdicts, denials, consecutive_denials, recent, breaker_open \
             FROM turn_state WHERE session_id = ?1 AND turn_id = ?2",
            params![key.session, key.turn],
            |row| TurnState::stored_at(row, 0),
        )
        .map(Option::unwrap_or_default)
    }

    fn save(&self, tx: &Transaction<'_>, key: TurnKey<'_>, now: u64) -> DbResult<()> {
        if !self.stored && TURN_PRUNE.claim(now) {
            // A new turn is the moment old ones pile up; pruning here (at
            // most once a minute) keeps the table bounded without an index
            // write on every review.
            tx.execute(
                "DELETE FROM turn_state WHERE updated_at_ms < ?1",
                params![sql_ms(now.saturating_sub(TURN_STATE_RETENTION_MS))],
            )?;
        }
        tx.execute(
            "INSERT INTO turn_state (session_id, turn_id, reviews, failures, verdicts, denials, \
             consecutive_denials, recent, breaker_open, updated_at_ms) \
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10) \
             ON CONFLICT (session_id, turn_id) DO UPDATE SET reviews = excluded.reviews, \
             failures = excluded.failures, verdicts = excluded.verdicts, \
             denials = excluded.denials, consecutive_denials = excluded.consecutive_denials, \
             recent = excluded.recent, breaker_open = excluded.breaker_open, \
             updated_at_ms = excluded.updated_at_ms",
            params![
                key.session,
                key.turn,
                self.reviews,
                self.failures,
                self.verdicts,
                self.denials,
                self.consecutive_denials,
                self.recent,
                self.breaker_open,
                sql_ms(now)
            ],
        )?;
        Ok(())
    }

    /// Denials among the last `window_size` verdicts.
    pub fn window_denials(&self, window_size: u32) -> u32 {
        let size = usize::try_from(window_size).unwrap_or(usize::MAX);
        let skip = self.recent.len().saturating_sub(size);
        let count = self
            .recent
            .bytes()
            .skip(skip)
            .filter(|&b| b == b'D')
            .count();
        u32::try_from(count).unwrap_or(u32::MAX)
    }

    /// Whether the breaker is open, judged with the effective thresholds of
    /// this request, so a project overlay that lowers one takes effect at
    /// once.
    pub fn breaker_tripped(&self, rule: &BreakerConfig) -> bool {
        self.breaker_open
            || self.consecutive_denials >= rule.consecutive_denials
            || self.window_denials(rule.window_size) >= rule.window_denials
    }

    /// Counts one model verdict; opens the breaker when a threshold is met.
    pub fn count_verdict(&mut self, outcome: Outcome, rule: &BreakerConfig) {
        self.verdicts = self.verdicts.saturating_add(1);
        let mark = match outcome {
            Outcome::Deny => {
                self.denials = self.denials.saturating_add(1);
                self.consecutive_denials = self.consecutive_denials.saturating_add(1);
                'D'
            }
            // A model allow or defer is not a denial and ends the streak.
            Outcome::Allow | Outcome::Defer => {
                self.consecutive_denials = 0;
                'A'
            }
        };
        self.recent.push(mark);
        let size = usize::try_from(rule.window_size).unwrap_or(usize::MAX);
        if self.recent.len() > size {
            let cut = self.recent.len().saturating_sub(size);
            self.recent = self.recent.get(cut..).unwrap_or_default().to_owned();
        }
        if self.breaker_tripped(rule) {
            self.breaker_open = true;
        }
    }

    /// Closes the breaker (a human broke glass).
    pub fn reset_breaker(&mut self) {
        self.breaker_open = false;
        self.consecutive_denials = 0;
        self.recent.clear();
    }

    pub fn status(&self, rule: &BreakerConfig) -> TurnStatus {
        TurnStatus {
            reviews: self.reviews,
            failures: self.failures,
            verdicts: self.verdicts,
            denials: self.denials,
            consecutive_denials: self.consecutive_denials,
            window_denials: self.window_denials(rule.window_size),
            breaker_open: self.breaker_tripped(rule),
        }
    }
}

/// One turn's counters as the operator console lists them.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct TurnRow {
    pub session_id: String,
    pub turn_id: String,
    #[serde(flatten)]
    pub status: TurnStatus,
    pub updated_at_ms: u64,
}

/// The most recently active turns of every session, newest first, at most
/// `limit`, updated at or after `since_ms`.
pub fn recent_turns(
    store: &Store,
    cfg: &Config,
    since_ms: u64,
    limit: u32,
) -> Result<Vec<TurnRow>, StoreError> {
    store.read(|tx| {
        tx.query_all(
            "SELECT session_id, turn_id, reviews, failures, verdicts, denials, \
             consecutive_denials, recent, breaker_open, updated_at_ms FROM turn_state \
             WHERE updated_at_ms >= ?1 ORDER BY updated_at_ms DESC LIMIT ?2",
            params![sql_ms(since_ms), limit],
            |row| {
                let state = TurnState::stored_at(row, 2)?;
                Ok(TurnRow {
                    session_id: row.get(0)?,
                    turn_id: row.get(1)?,
                    status: state.status(&cfg.breaker),
                    updated_at_ms: ms_column(row, 9)?,
                })
            },
        )
    })
}

/// Reads the turn and the authorizations pending for `request_hash`.
pub fn read_snapshot(
    tx: &Transaction<'_>,
    key: TurnKey<'_>,
    request_hash: &str,
    now: u64,
) -> DbResult<Snapshot> {
    let turn = TurnState::load(tx, key)?;
    let pending = tx.query_all(
        "SELECT a.id, a.kind, a.created_at_ms, d.rationale, d.risk_level FROM authorizations a \
         LEFT JOIN denials d ON d.id = a.denial_id \
         WHERE a.session_id = ?1 AND a.request_hash = ?2 AND a.used_at_ms IS NULL \
         AND a.expires_at_ms > ?3 ORDER BY a.id",
        params![key.session, request_hash, sql_ms(now)],
        |row| {
            let risk: Option<String> = row.get(4)?;
            Ok(PendingAuthorization {
                id: row.get(0)?,
                kind: column(row, 1)?,
                created_at_ms: ms_column(row, 2)?,
                denied_rationale: row.get(3)?,
                denied_risk_level: risk.as_deref().and_then(RiskLevel::from_name),
            })
        },
    )?;
    Ok(Snapshot { turn, pending })
}

/// The verdict cached under `cache_key`, if it has not expired.
pub fn cache_lookup(tx: &Transaction<'_>, cache_key: &str, now: u64) -> DbResult<Option<Verdict>> {
    tx.query_opt(
        "SELECT outcome, risk_level, user_authorization, rationale, suggestion \
         FROM verdict_cache WHERE cache_key = ?1 AND expires_at_ms > ?2",
        params![cache_key, sql_ms(now)],
        |row| {
            Ok(Verdict {
                outcome: column(row, 0)?,
                risk_level: column(row, 1)?,
                user_authorization: column(row, 2)?,
                rationale: row.get(3)?,
                suggestion: row.get(4)?,
            })
        },
    )
}

/// Whose state the effects of one decision touch.
#[derive(Debug, Clone, Copy)]
pub struct Scope<'a> {
    pub key: TurnKey<'a>,
    pub request_hash: &'a str,
    pub now: u64,
}

/// Applies the state effects of one decision inside the caller's
/// transaction: the turn row is loaded once, changed by every counting
/// effect, and saved once. `Audit` is not state and is skipped.
pub fn apply(tx: &Transaction<'_>, scope: Scope<'_>, effects: &[Effect]) -> DbResult<()> {
    let mut turn = TurnState::load(tx, scope.key)?;
    let mut turn_changed = false;
    for effect in effects {
        match effect {
            Effect::ReserveReview => {
                turn.reviews = turn.reviews.saturating_add(1);
                turn_changed = true;
            }
            Effect::CountVerdict { outcome, breaker } => {
                turn.count_verdict(*outcome, breaker);
                turn_changed = true;
            }
            Effect::CountFailure => {
                turn.failures = turn.failures.saturating_add(1);
                turn_changed = true;
            }
            Effect::ResetBreaker => {
                turn.reset_breaker();
                turn_changed = true;
            }
            Effect::SpendAuthorization { id } => {
                tx.execute(
                    "UPDATE authorizations SET used_at_ms = ?2 WHERE id = ?1",
                    params![*id, sql_ms(scope.now)],
                )?;
            }
            Effect::RecordDenial(denial) => insert_denial(tx, scope, denial)?,
            Effect::CacheVerdict {
                key,
                verdict,
                expires_at_ms,
                max_entries,
            } => cache_store(tx, key, verdict, scope.now, *expires_at_ms, *max_entries)?,
            Effect::StoreGrant {
                token_sha256,
                expires_at_ms,
            } => crate::grants::store(
                tx,
                scope.now,
                token_sha256,
                scope.key.session,
                scope.request_hash,
                *expires_at_ms,
            )?,
            // Not state: the engine hands it to the audit sink.
            Effect::Audit(_) => {}
        }
    }
    if turn_changed {
        turn.save(tx, scope.key, scope.now)?;
    }
    Ok(())
}

/// A turn's counters (zeros for a turn never seen).
pub fn turn_status(
    store: &Store,
    cfg: &Config,
    key: TurnKey<'_>,
) -> Result<TurnStatus, StoreError> {
    store.read(|tx| TurnState::load(tx, key).map(|row| row.status(&cfg.breaker)))
}

fn insert_denial(tx: &Transaction<'_>, scope: Scope<'_>, denial: &DenialRecord) -> DbResult<()> {
    let key = scope.key;
    tx.execute(
        "INSERT INTO denials (session_id, turn_id, request_hash, risk_level, surface, cwd, \
         summary, rationale, created_at_ms) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
        params![
            key.session,
            key.turn,
            scope.request_hash,
            denial.risk_level.as_str(),
            bounded_text(&denial.surface),
            denial.cwd.as_deref().map(bounded_text),
            bounded_text(&denial.summary),
            bounded_text(&denial.rationale),
            sql_ms(scope.now)
        ],
    )?;
    tx.execute(
        "DELETE FROM denials WHERE session_id = ?1 AND id NOT IN \
         (SELECT id FROM denials WHERE session_id = ?1 ORDER BY id DESC LIMIT ?2)",
        params![key.session, MAX_DENIALS_PER_SESSION],
    )?;
    tx.execute(
        "DELETE FROM denials WHERE created_at_ms < ?1",
        params![sql_ms(scope.now.saturating_sub(DENIAL_RETENTION_MS))],
    )?;
    Ok(())
}

fn cache_store(
    tx: &Transaction<'_>,
    cache_key: &str,
    verdict: &Verdict,
    now: u64,
    expires_at_ms: u64,
    max_entries: u32,
) -> DbResult<()> {
    // An upsert, not `INSERT OR REPLACE`: a replace deletes the old row
    // without firing delete triggers, and the cache's size row
    // (`verdict_cache_size`, kept by triggers) would count it twice.
    tx.execute(
        "INSERT INTO verdict_cache (cache_key, outcome, risk_level, \
         user_authorization, rationale, suggestion, created_at_ms, expires_at_ms) \
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8) \
         ON CONFLICT (cache_key) DO UPDATE SET outcome = excluded.outcome, \
         risk_level = excluded.risk_level, user_authorization = excluded.user_authorization, \
         rationale = excluded.rationale, suggestion = excluded.suggestion, \
         created_at_ms = excluded.created_at_ms, expires_at_ms = excluded.expires_at_ms",
        params![
            cache_key,
            verdict.outcome.as_str(),
            verdict.risk_level.as_str(),
            verdict.user_authorization.as_str(),
            bounded_text(&verdict.rationale),
            verdict.suggestion.as_deref().map(bounded_text),
            sql_ms(now),
            sql_ms(expires_at_ms)
        ],
    )?;
    tx.execute(
        "DELETE FROM verdict_cache WHERE expires_at_ms <= ?1",
        params![sql_ms(now)],
    )?;
    // Oldest first: every entry of one config has the same TTL, so the
    // earliest expiry is the earliest insert. The size is one row the
    // cache's triggers keep (schema v3; counting the cache here scanned its
    // index on every review), so the common case (within capacity) reads
    // nothing else. Over capacity (a busy service lives there: each new
    // review adds one entry), the last entry to go is found by an index
    // seek and everything up to it removed by an index range, rather than
    // an `IN (subquery)` that builds a temporary table on every review.
    let entries: i64 = tx.query_one(
        "SELECT entries FROM verdict_cache_size WHERE id = 0",
        params![],
        |row| row.get(0),
    )?;
    let excess = entries.saturating_sub(i64::from(max_entries));
    if excess > 0 {
        let last: Option<(i64, String)> = tx.query_opt(
            "SELECT expires_at_ms, cache_key FROM verdict_cache \
             ORDER BY expires_at_ms, cache_key LIMIT 1 OFFSET ?1",
            params![excess.saturating_sub(1)],
            |row| Ok((row.get(0)?, row.get(1)?)),
        )?;
        if let Some((expires_at_ms, cache_key)) = last {
            tx.execute(
                "DELETE FROM verdict_cache WHERE (expires_at_ms, cache_key) <= (?1, ?2)",
                params![expires_at_ms, cache_key],
            )?;
        }
    }
    Ok(())
}

/// Cuts `text` to [`MAX_STORED_TEXT_BYTES`] at a character boundary, saying
/// so in the text itself: operators must be able to tell a cut summary from
/// the whole one.
pub(crate) fn bounded_text(text: &str) -> String {
    if text.len() <= MAX_STORED_TEXT_BYTES {
        return text.to_owned();
    }
    let mut end = MAX_STORED_TEXT_BYTES.saturating_sub(64);
    while !text.is_char_boundary(end) {
        end = end.saturating_sub(1);
    }
    format!(
        "{}… [cut by vouch: {} more bytes]",
        text.get(..end).unwrap_or_default(),
        text.len().saturating_sub(end)
    )
}

/// Reads a text column holding a wire name; an unknown value is an error
/// (the schema's CHECK constraints make it unreachable), never a default.
pub(crate) fn column<T: std::str::FromStr>(row: &Row<'_>, idx: usize) -> DbResult<T> {
    let raw: String = row.get(idx)?;
    raw.parse::<T>().map_err(|_| DbError::BadValue {
        column: idx,
        value: raw,
    })
}

/// Reads a stored millisecond column.
pub(crate) fn ms_column(row: &Row<'_>, idx: usize) -> DbResult<u64> {
    row.get::<i64>(idx).map(ms_from_sql)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cfg() -> Config {
        Config::defaults().unwrap()
    }

    #[test]
    fn window_counts_only_the_last_window_size_verdicts() {
        let mut c = cfg();
        c.breaker.window_size = 4;
        c.breaker.window_denials = 3;
        c.breaker.consecutive_denials = 100;
        let mut row = TurnState::default();
        for outcome in [Outcome::Deny, Outcome::Deny, Outcome::Allow, Outcome::Allow] {
            row.count_verdict(outcome, &c.breaker);
        }
        assert_eq!(row.recent, "DDAA");
        assert_eq!(row.window_denials(4), 2);
        row.count_verdict(Outcome::Deny, &c.breaker);
        assert_eq!(row.recent, "DAAD");
        assert!(!row.breaker_open);
        row.count_verdict(Outcome::Deny, &c.breaker);
        assert_eq!(row.recent, "AADD");
        assert!(!row.breaker_open);
        row.count_verdict(Outcome::Deny, &c.breaker);
        assert!(row.breaker_open);
    }

    #[test]
    fn defer_ends_a_denial_streak() {
        let c = cfg();
        let mut row = TurnState::default();
        row.count_verdict(Outcome::Deny, &c.breaker);
        row.count_verdict(Outcome::Deny, &c.breaker);
        row.count_verdict(Outcome::Defer, &c.breaker);
        row.count_verdict(Outcome::Deny, &c.breaker);
        assert_eq!(row.consecutive_denials, 1);
        assert!(!row.breaker_open);
    }

    #[test]
    fn long_text_is_cut_visibly() {
        let text = "é".repeat(MAX_STORED_TEXT_BYTES);
        let cut = bounded_text(&text);
        assert!(cut.len() <= MAX_STORED_TEXT_BYTES);
        assert!(cut.contains("cut by vouch"));
        assert_eq!(bounded_text("short"), "short");
    }
}
