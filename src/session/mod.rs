//! Per-turn session state (design §6.3): the circuit breaker, review and
//! failure budgets, the verdict cache and recent model denials, persisted in
//! the state database so a restart forgets nothing and the daemon and hook
//! processes share one view.
//!
//! The pipeline makes two calls per review, each one `BEGIN IMMEDIATE`
//! transaction:
//! - [`gate`] before the model: consumes a pending break glass (allow
//!   without the model), then checks the breaker, the failure budget and the
//!   review budget, consumes a pending exact-retry override, looks up the
//!   verdict cache, and finally reserves one review from the budget.
//! - [`record`] after it: the model's verdict (breaker, denial summary,
//!   cache) or a reviewer failure (failure budget).
//!
//! Human authorizations are created in [`overrides`]; the interactive CLI
//! commands live in [`operator`].

pub mod operator;
pub mod overrides;

use rusqlite::{OptionalExtension, Transaction, params};
use serde::Serialize;

use crate::clock::Clock;
use crate::config::{Config, FailClosed};
use crate::decision::{Outcome, RiskLevel, UserAuthorization};
use crate::store::{Durability, Store, StoreError, ms_from_sql, sql_ms};

/// How long a turn's counters are kept after their last update. A turn that
/// is idle this long is over; a new turn starts closed anyway.
pub const TURN_STATE_RETENTION_MS: u64 = 24 * 60 * 60 * 1000;
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

/// The verdict fields needed to rebuild a decision; stored in the cache.
/// The caller passes redacted text only: nothing here may be a secret.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct CachedVerdict {
    pub outcome: Outcome,
    pub risk_level: RiskLevel,
    pub user_authorization: UserAuthorization,
    pub rationale: String,
    pub suggestion: Option<String>,
}

/// A consumed exact-retry override: trusted context for the model.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct OverridePass {
    pub request_hash: String,
    pub approved_at_ms: u64,
    /// Rationale of the denial the human approved past, when still known.
    pub denied_rationale: Option<String>,
    pub denied_risk_level: Option<RiskLevel>,
}

/// A consumed break-glass authorization: allow without the model.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct BreakGlassPass {
    pub request_hash: String,
    pub confirmed_at_ms: u64,
    pub denied_rationale: Option<String>,
}

/// What the pipeline does next, decided before any model call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Gate {
    /// A human broke glass for this exact request in this session: allow
    /// without the model (stage `break_glass`), after re-running hard denies.
    /// Already consumed, and the turn's breaker is already reset. Wins over
    /// an open breaker and spent budgets: a human decided, and nothing is
    /// billed.
    BreakGlass(BreakGlassPass),
    /// The turn's breaker is open: `action` without calling the model
    /// (stage `breaker`).
    BreakerOpen {
        action: FailClosed,
        consecutive_denials: u32,
        window_denials: u32,
    },
    /// `turn.max_failures` reviewer failures this turn: `failure_mode`
    /// without calling the model (stage `reviewer_failure`).
    FailuresExhausted { failures: u32, action: FailClosed },
    /// `turn.max_reviews` model-backed reviews this turn: `turn.on_exhausted`
    /// without calling the model (stage `budget`).
    BudgetExhausted { reviews: u32, action: FailClosed },
    /// The same packet was reviewed within `cache.ttl_ms`: reuse the verdict
    /// (stage `cache`; risk ceilings still apply). Already counted by the
    /// breaker like the verdict it replays; not billed and not recorded again.
    Cached(CachedVerdict),
    /// Call the model; one review is reserved from the budget. With an
    /// override, give it to the model as trusted context (it is consumed).
    /// Afterwards call [`record`] with the verdict or the failure.
    Review { override_pass: Option<OverridePass> },
}

/// The redacted action a denial summary shows operators.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ActionSummary<'a> {
    pub surface: &'a str,
    pub cwd: Option<&'a str>,
    /// Redacted command or target (path, destination, tool).
    pub target: &'a str,
}

/// What happened in a review that [`gate`] let through.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReviewEvent<'a> {
    /// The model answered. `verdict.outcome` is the model's own outcome
    /// (before risk ceilings): that is what the breaker counts.
    Verdict {
        verdict: &'a CachedVerdict,
        /// Packet hash without the nonce; allow and deny verdicts are cached
        /// under it.
        cache_key: Option<&'a str>,
        action: ActionSummary<'a>,
    },
    /// The review could not complete (timeout, transport, garbage output,
    /// packet over budget). Counts against `turn.max_failures`, not the
    /// breaker.
    Failure,
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

/// The turn row as stored.
#[derive(Debug, Clone, Default)]
struct TurnRow {
    reviews: u32,
    failures: u32,
    verdicts: u32,
    denials: u32,
    consecutive_denials: u32,
    /// 'D' (denial) or 'A' (anything else) per verdict, oldest first.
    recent: String,
    breaker_open: bool,
    /// Whether the row was in the database when loaded.
    stored: bool,
}

impl TurnRow {
    fn load(tx: &Transaction<'_>, key: TurnKey<'_>) -> rusqlite::Result<TurnRow> {
        tx.prepare_cached(
            "SELECT reviews, failures, verdicts, denials, consecutive_denials, recent, breaker_open \
             FROM turn_state WHERE session_id = ?1 AND turn_id = ?2",
        )?
        .query_row(params![key.session, key.turn], |row| {
            Ok(TurnRow {
                reviews: row.get(0)?,
                failures: row.get(1)?,
                verdicts: row.get(2)?,
                denials: row.get(3)?,
                consecutive_denials: row.get(4)?,
                recent: row.get(5)?,
                breaker_open: row.get(6)?,
                stored: true,
            })
        })
        .optional()
        .map(Option::unwrap_or_default)
    }

    fn save(&self, tx: &Transaction<'_>, key: TurnKey<'_>, now: u64) -> rusqlite::Result<()> {
        if !self.stored {
            // A new turn is the moment old ones pile up; pruning here keeps
            // the table bounded without an index write on every review.
            tx.prepare_cached("DELETE FROM turn_state WHERE updated_at_ms < ?1")?
                .execute(params![sql_ms(now.saturating_sub(TURN_STATE_RETENTION_MS))])?;
        }
        tx.prepare_cached(
            "INSERT INTO turn_state (session_id, turn_id, reviews, failures, verdicts, denials, \
             consecutive_denials, recent, breaker_open, updated_at_ms) \
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10) \
             ON CONFLICT (session_id, turn_id) DO UPDATE SET reviews = excluded.reviews, \
             failures = excluded.failures, verdicts = excluded.verdicts, \
             denials = excluded.denials, consecutive_denials = excluded.consecutive_denials, \
             recent = excluded.recent, breaker_open = excluded.breaker_open, \
             updated_at_ms = excluded.updated_at_ms",
        )?
        .execute(params![
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
        ])?;
        Ok(())
    }

    fn window_denials(&self, window_size: u32) -> u32 {
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

    /// Evaluated with the effective config of this request, so a project
    /// overlay that lowers a threshold takes effect at once.
    fn breaker_tripped(&self, cfg: &Config) -> bool {
        self.breaker_open
            || self.consecutive_denials >= cfg.breaker.consecutive_denials
            || self.window_denials(cfg.breaker.window_size) >= cfg.breaker.window_denials
    }

    fn count_verdict(&mut self, outcome: Outcome, cfg: &Config) {
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
        let size = usize::try_from(cfg.breaker.window_size).unwrap_or(usize::MAX);
        if self.recent.len() > size {
            let cut = self.recent.len().saturating_sub(size);
            self.recent = self.recent.get(cut..).unwrap_or_default().to_owned();
        }
        if self.breaker_tripped(cfg) {
            self.breaker_open = true;
        }
    }

    fn reset_breaker(&mut self) {
        self.breaker_open = false;
        self.consecutive_denials = 0;
        self.recent.clear();
    }

    fn status(&self, cfg: &Config) -> TurnStatus {
        TurnStatus {
            reviews: self.reviews,
            failures: self.failures,
            verdicts: self.verdicts,
            denials: self.denials,
            consecutive_denials: self.consecutive_denials,
            window_denials: self.window_denials(cfg.breaker.window_size),
            breaker_open: self.breaker_tripped(cfg),
        }
    }
}

/// One step of the gate transaction: done, or it found an authorization to
/// spend and must rerun at `synchronous=FULL` (SQLite cannot change the
/// level inside a transaction).
enum GateStep {
    Done(Gate),
    NeedsFullSync,
}

/// Pre-review check and reservation (see [`Gate`] for each outcome).
pub fn gate(
    store: &Store,
    clock: &dyn Clock,
    cfg: &Config,
    key: TurnKey<'_>,
    request_hash: &str,
    cache_key: Option<&str>,
) -> Result<Gate, StoreError> {
    let now = clock.now_ms();
    let step = store.write(Durability::Normal, |tx| {
        gate_tx(tx, now, cfg, key, request_hash, cache_key, false)
    })?;
    match step {
        GateStep::Done(gate) => Ok(gate),
        GateStep::NeedsFullSync => {
            let step = store.write(Durability::Full, |tx| {
                gate_tx(tx, now, cfg, key, request_hash, cache_key, true)
            })?;
            match step {
                GateStep::Done(gate) => Ok(gate),
                // INVARIANT: with `may_spend` true, gate_tx never asks again;
                // should it ever, nothing was spent and the review fails
                // closed on the error.
                GateStep::NeedsFullSync => Err(store.bad_value(
                    "synchronous",
                    "an authorization was found but not spent at FULL".to_owned(),
                )),
            }
        }
    }
}

struct PendingAuthorization {
    id: i64,
    kind: String,
    created_at_ms: u64,
    denied_rationale: Option<String>,
    denied_risk: Option<String>,
}

fn pending_authorizations(
    tx: &Transaction<'_>,
    session: &str,
    request_hash: &str,
    now: u64,
) -> rusqlite::Result<Vec<PendingAuthorization>> {
    let mut stmt = tx.prepare_cached(
        "SELECT a.id, a.kind, a.created_at_ms, d.rationale, d.risk_level FROM authorizations a \
         LEFT JOIN denials d ON d.id = a.denial_id \
         WHERE a.session_id = ?1 AND a.request_hash = ?2 AND a.used_at_ms IS NULL \
         AND a.expires_at_ms > ?3 ORDER BY a.id",
    )?;
    let rows = stmt.query_map(params![session, request_hash, sql_ms(now)], |row| {
        Ok(PendingAuthorization {
            id: row.get(0)?,
            kind: row.get(1)?,
            created_at_ms: ms_column(row, 2)?,
            denied_rationale: row.get(3)?,
            denied_risk: row.get(4)?,
        })
    })?;
    rows.collect()
}

fn spend_authorization(tx: &Transaction<'_>, id: i64, now: u64) -> rusqlite::Result<()> {
    tx.prepare_cached("UPDATE authorizations SET used_at_ms = ?2 WHERE id = ?1")?
        .execute(params![id, sql_ms(now)])?;
    Ok(())
}

fn gate_tx(
    tx: &Transaction<'_>,
    now: u64,
    cfg: &Config,
    key: TurnKey<'_>,
    request_hash: &str,
    cache_key: Option<&str>,
    may_spend: bool,
) -> rusqlite::Result<GateStep> {
    let mut turn = TurnRow::load(tx, key)?;
    let pending = pending_authorizations(tx, key.session, request_hash, now)?;

    // A disabled break glass (trusted or project config) is not honoured
    // even when an authorization was created before it was disabled.
    if cfg.overrides.break_glass_enabled
        && let Some(auth) = pending.iter().find(|a| a.kind == "break_glass")
    {
        if !may_spend {
            return Ok(GateStep::NeedsFullSync);
        }
        spend_authorization(tx, auth.id, now)?;
        turn.reset_breaker();
        turn.save(tx, key, now)?;
        return Ok(GateStep::Done(Gate::BreakGlass(BreakGlassPass {
            request_hash: request_hash.to_owned(),
            confirmed_at_ms: auth.created_at_ms,
            denied_rationale: auth.denied_rationale.clone(),
        })));
    }

    if turn.breaker_tripped(cfg) {
        return Ok(GateStep::Done(Gate::BreakerOpen {
            action: cfg.breaker.action,
            consecutive_denials: turn.consecutive_denials,
            window_denials: turn.window_denials(cfg.breaker.window_size),
        }));
    }
    if turn.failures >= cfg.turn.max_failures {
        return Ok(GateStep::Done(Gate::FailuresExhausted {
            failures: turn.failures,
            action: cfg.decision.failure_mode,
        }));
    }
    if turn.reviews >= cfg.turn.max_reviews {
        return Ok(GateStep::Done(Gate::BudgetExhausted {
            reviews: turn.reviews,
            action: cfg.turn.on_exhausted,
        }));
    }

    // An override changes the packet (it is trusted context), so the cache
    // is skipped: a cached denial must never swallow a human's approval.
    let override_pass = match pending.iter().find(|a| a.kind == "override") {
        Some(auth) => {
            if !may_spend {
                return Ok(GateStep::NeedsFullSync);
            }
            spend_authorization(tx, auth.id, now)?;
            Some(OverridePass {
                request_hash: request_hash.to_owned(),
                approved_at_ms: auth.created_at_ms,
                denied_rationale: auth.denied_rationale.clone(),
                denied_risk_level: auth.denied_risk.as_deref().and_then(parse_risk),
            })
        }
        None => None,
    };

    if override_pass.is_none()
        && let Some(cache_key) = cache_key
        && cache_enabled(cfg)
        && let Some(cached) = cache_lookup(tx, cache_key, now)?
    {
        // The replayed verdict counts for the breaker like the model verdict
        // it is: an agent retrying a denied action in a loop must still trip
        // it. It is not billed: no model was called.
        turn.count_verdict(cached.outcome, cfg);
        turn.save(tx, key, now)?;
        return Ok(GateStep::Done(Gate::Cached(cached)));
    }

    // Reserve the review now, inside the same transaction as the check, so
    // concurrent requests of one turn can never overspend the budget.
    turn.reviews = turn.reviews.saturating_add(1);
    turn.save(tx, key, now)?;
    Ok(GateStep::Done(Gate::Review { override_pass }))
}

/// Records what happened in a review [`gate`] let through.
pub fn record(
    store: &Store,
    clock: &dyn Clock,
    cfg: &Config,
    key: TurnKey<'_>,
    request_hash: &str,
    event: ReviewEvent<'_>,
) -> Result<(), StoreError> {
    let now = clock.now_ms();
    store.write(Durability::Normal, |tx| {
        let mut turn = TurnRow::load(tx, key)?;
        match event {
            ReviewEvent::Failure => {
                turn.failures = turn.failures.saturating_add(1);
            }
            ReviewEvent::Verdict {
                verdict,
                cache_key,
                action,
            } => {
                turn.count_verdict(verdict.outcome, cfg);
                match verdict.outcome {
                    Outcome::Deny => {
                        insert_denial(tx, key, request_hash, verdict, action, now)?;
                    }
                    Outcome::Allow | Outcome::Defer => {}
                }
                if let Some(cache_key) = cache_key {
                    cache_store(tx, cfg, cache_key, verdict, now)?;
                }
            }
        }
        turn.save(tx, key, now)?;
        Ok(())
    })
}

/// A turn's counters (zeros for a turn never seen).
pub fn turn_status(
    store: &Store,
    cfg: &Config,
    key: TurnKey<'_>,
) -> Result<TurnStatus, StoreError> {
    store.read(|tx| TurnRow::load(tx, key).map(|row| row.status(cfg)))
}

fn insert_denial(
    tx: &Transaction<'_>,
    key: TurnKey<'_>,
    request_hash: &str,
    verdict: &CachedVerdict,
    action: ActionSummary<'_>,
    now: u64,
) -> rusqlite::Result<()> {
    tx.prepare_cached(
        "INSERT INTO denials (session_id, turn_id, request_hash, risk_level, surface, cwd, \
         summary, rationale, created_at_ms) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
    )?
    .execute(params![
        key.session,
        key.turn,
        request_hash,
        verdict.risk_level.as_str(),
        bounded_text(action.surface),
        action.cwd.map(bounded_text),
        bounded_text(action.target),
        bounded_text(&verdict.rationale),
        sql_ms(now)
    ])?;
    tx.prepare_cached(
        "DELETE FROM denials WHERE session_id = ?1 AND id NOT IN \
         (SELECT id FROM denials WHERE session_id = ?1 ORDER BY id DESC LIMIT ?2)",
    )?
    .execute(params![key.session, MAX_DENIALS_PER_SESSION])?;
    tx.prepare_cached("DELETE FROM denials WHERE created_at_ms < ?1")?
        .execute(params![sql_ms(now.saturating_sub(DENIAL_RETENTION_MS))])?;
    Ok(())
}

fn cache_enabled(cfg: &Config) -> bool {
    cfg.cache.ttl_ms > 0 && cfg.cache.max_entries > 0
}

fn cache_lookup(
    tx: &Transaction<'_>,
    cache_key: &str,
    now: u64,
) -> rusqlite::Result<Option<CachedVerdict>> {
    tx.prepare_cached(
        "SELECT outcome, risk_level, user_authorization, rationale, suggestion \
         FROM verdict_cache WHERE cache_key = ?1 AND expires_at_ms > ?2",
    )?
    .query_row(params![cache_key, sql_ms(now)], |row| {
        Ok(CachedVerdict {
            outcome: column(row, 0, parse_outcome)?,
            risk_level: column(row, 1, parse_risk)?,
            user_authorization: column(row, 2, parse_user_authorization)?,
            rationale: row.get(3)?,
            suggestion: row.get(4)?,
        })
    })
    .optional()
}

fn cache_store(
    tx: &Transaction<'_>,
    cfg: &Config,
    cache_key: &str,
    verdict: &CachedVerdict,
    now: u64,
) -> rusqlite::Result<()> {
    // Only decisive verdicts are reused (design §6.3); a model that was
    // unsure should get to look again.
    match verdict.outcome {
        Outcome::Allow | Outcome::Deny => {}
        Outcome::Defer => return Ok(()),
    }
    if !cache_enabled(cfg) {
        return Ok(());
    }
    tx.prepare_cached(
        "INSERT OR REPLACE INTO verdict_cache (cache_key, outcome, risk_level, \
         user_authorization, rationale, suggestion, created_at_ms, expires_at_ms) \
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
    )?
    .execute(params![
        cache_key,
        verdict.outcome.as_str(),
        verdict.risk_level.as_str(),
        user_authorization_str(verdict.user_authorization),
        bounded_text(&verdict.rationale),
        verdict.suggestion.as_deref().map(bounded_text),
        sql_ms(now),
        sql_ms(now.saturating_add(cfg.cache.ttl_ms))
    ])?;
    tx.prepare_cached("DELETE FROM verdict_cache WHERE expires_at_ms <= ?1")?
        .execute(params![sql_ms(now)])?;
    // Oldest first: every entry of one config has the same TTL, so the
    // earliest expiry is the earliest insert.
    tx.prepare_cached(
        "DELETE FROM verdict_cache WHERE cache_key IN (SELECT cache_key FROM verdict_cache \
         ORDER BY expires_at_ms, cache_key \
         LIMIT max(0, (SELECT count(*) FROM verdict_cache) - ?1))",
    )?
    .execute(params![cfg.cache.max_entries])?;
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

pub(crate) fn parse_outcome(s: &str) -> Option<Outcome> {
    match s {
        "allow" => Some(Outcome::Allow),
        "deny" => Some(Outcome::Deny),
        "defer" => Some(Outcome::Defer),
        _ => None,
    }
}

pub(crate) fn parse_risk(s: &str) -> Option<RiskLevel> {
    match s {
        "low" => Some(RiskLevel::Low),
        "medium" => Some(RiskLevel::Medium),
        "high" => Some(RiskLevel::High),
        "critical" => Some(RiskLevel::Critical),
        _ => None,
    }
}

fn parse_user_authorization(s: &str) -> Option<UserAuthorization> {
    match s {
        "unknown" => Some(UserAuthorization::Unknown),
        "low" => Some(UserAuthorization::Low),
        "medium" => Some(UserAuthorization::Medium),
        "high" => Some(UserAuthorization::High),
        _ => None,
    }
}

fn user_authorization_str(u: UserAuthorization) -> &'static str {
    match u {
        UserAuthorization::Unknown => "unknown",
        UserAuthorization::Low => "low",
        UserAuthorization::Medium => "medium",
        UserAuthorization::High => "high",
    }
}

/// Reads a text column through `parse`; an unknown value is an error (the
/// schema's CHECK constraints make it unreachable), never a default.
pub(crate) fn column<T>(
    row: &rusqlite::Row<'_>,
    idx: usize,
    parse: fn(&str) -> Option<T>,
) -> rusqlite::Result<T> {
    let raw: String = row.get(idx)?;
    parse(&raw).ok_or_else(|| {
        rusqlite::Error::FromSqlConversionFailure(
            idx,
            rusqlite::types::Type::Text,
            format!("unexpected value `{raw}`").into(),
        )
    })
}

/// Reads a stored millisecond column.
pub(crate) fn ms_column(row: &rusqlite::Row<'_>, idx: usize) -> rusqlite::Result<u64> {
    row.get::<_, i64>(idx).map(ms_from_sql)
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
        let mut row = TurnRow::default();
        for outcome in [Outcome::Deny, Outcome::Deny, Outcome::Allow, Outcome::Allow] {
            row.count_verdict(outcome, &c);
        }
        assert_eq!(row.recent, "DDAA");
        assert_eq!(row.window_denials(4), 2);
        row.count_verdict(Outcome::Deny, &c);
        assert_eq!(row.recent, "DAAD");
        assert!(!row.breaker_open);
        row.count_verdict(Outcome::Deny, &c);
        assert_eq!(row.recent, "AADD");
        assert!(!row.breaker_open);
        row.count_verdict(Outcome::Deny, &c);
        assert!(row.breaker_open);
    }

    #[test]
    fn defer_ends_a_denial_streak() {
        let c = cfg();
        let mut row = TurnRow::default();
        row.count_verdict(Outcome::Deny, &c);
        row.count_verdict(Outcome::Deny, &c);
        row.count_verdict(Outcome::Defer, &c);
        row.count_verdict(Outcome::Deny, &c);
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
