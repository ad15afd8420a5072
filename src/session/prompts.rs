//! The latest user prompt of each harness session (schema v4), as the
//! harness's prompt hook reported it (Claude Code's `UserPromptSubmit` and
//! its counterparts in the other harnesses).
//!
//! Why it exists: the first tool call of a turn can reach vouch before the
//! harness has written its transcript file (Claude Code's `claude -p` often
//! does), and that first call is often the one that matters most. When the
//! transcript then holds no user message, the recorded prompt stands in for
//! it, as untrusted evidence like any transcript text.
//!
//! What is kept: only what the evidence packet would show. The prompt is
//! redacted with the packet's redactor and cut to the packet's user-message
//! budget (`budget.max_user_transcript_tokens`, with the packet's visible
//! `[… N bytes omitted]` marker) before it reaches the database, so no
//! secret and nothing unbounded is ever stored. It lives as long as its
//! turn: the session's next prompt replaces it, a record for another turn
//! is not used, and a record idle for [`PROMPT_RETENTION_MS`] (the idle
//! expiry of turns) is neither used nor kept.

use crate::store::sql::params;

use crate::config::BudgetConfig;
use crate::evidence::{packet, redact};
use crate::store::{Durability, PruneClock, Store, StoreError, sql_ms};

use super::{TURN_PRUNE_EVERY_MS, TURN_STATE_RETENTION_MS};

/// How long a recorded prompt is used after it was recorded: as long as an
/// idle turn's counters are kept.
pub const PROMPT_RETENTION_MS: u64 = TURN_STATE_RETENTION_MS;

/// Longest session or turn id recorded, in bytes (as a request's ids).
const MAX_ID_BYTES: usize = 256;

/// When this process prunes expired prompts next (a scan of the table, so
/// at most once a minute, as idle turns).
static PROMPT_PRUNE: PruneClock = PruneClock::new(TURN_PRUNE_EVERY_MS);

/// Whose prompt: one harness's session.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PromptKey<'a> {
    /// The harness (`claude-code`): two harnesses' session ids may collide.
    pub source: &'a str,
    pub session: &'a str,
}

/// A prompt as stored: redacted and fitted to the user-message budget.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RecordedPrompt {
    /// The harness's turn id for it, when its prompt event named one.
    pub turn_id: Option<String>,
    pub text: String,
    pub recorded_at_ms: u64,
}

/// What recording a prompt did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Recording {
    /// Stored, replacing the session's earlier prompt.
    Stored,
    /// Nothing to keep: the prompt is empty or blank (Qwen Code sends a
    /// second, empty one per prompt), so the session's prompt is left as it
    /// is.
    Empty,
    /// Not even the cut marker fits the user-message budget (a cap of 0):
    /// the packet would show no user message, so none is kept, and the
    /// session's older prompt is removed so it cannot stand in for this one.
    NoBudget,
    /// The session id is empty or longer than a request's may be: no
    /// request of that session could ever look it up.
    BadSession,
}

/// The text to store for `prompt`: redacted, then fitted to the budget.
/// `None` when nothing is left to store.
pub fn prepare(prompt: &str, budget: &BudgetConfig) -> Option<String> {
    let redacted = redact::redact_text(prompt);
    packet::fit_user_message(&redacted, budget)
}

/// Records `prompt` as the latest of its session at `now`, redacted and cut
/// to `budget` first.
pub fn record(
    store: &Store,
    now: u64,
    key: PromptKey<'_>,
    turn: Option<&str>,
    prompt: &str,
    budget: &BudgetConfig,
) -> Result<Recording, StoreError> {
    if key.session.is_empty() || key.session.len() > MAX_ID_BYTES {
        return Ok(Recording::BadSession);
    }
    if prompt.trim().is_empty() {
        return Ok(Recording::Empty);
    }
    let turn = turn.filter(|t| !t.is_empty() && t.len() <= MAX_ID_BYTES);
    let text = prepare(prompt, budget);
    store.write_atomic(Durability::Normal, |tx| {
        if PROMPT_PRUNE.claim(now) {
            tx.execute(
                "DELETE FROM recorded_prompts WHERE recorded_at_ms < ?1",
                params![sql_ms(now.saturating_sub(PROMPT_RETENTION_MS))],
            )?;
        }
        let Some(text) = &text else {
            tx.execute(
                "DELETE FROM recorded_prompts WHERE source = ?1 AND session_id = ?2",
                params![key.source, key.session],
            )?;
            return Ok(Recording::NoBudget);
        };
        tx.execute(
            "INSERT INTO recorded_prompts (source, session_id, turn_id, prompt, recorded_at_ms) \
             VALUES (?1, ?2, ?3, ?4, ?5) \
             ON CONFLICT (source, session_id) DO UPDATE SET turn_id = excluded.turn_id, \
             prompt = excluded.prompt, recorded_at_ms = excluded.recorded_at_ms",
            params![key.source, key.session, turn, text, sql_ms(now)],
        )?;
        Ok(Recording::Stored)
    })
}

/// The session's recorded prompt for `turn` at `now`: `None` when there is
/// none, it has expired, or it was recorded for another turn (a turn the
/// request or the record does not know matches any).
pub fn latest(
    store: &Store,
    now: u64,
    key: PromptKey<'_>,
    turn: Option<&str>,
) -> Result<Option<RecordedPrompt>, StoreError> {
    let found = store.read(|tx| {
        tx.query_opt(
            "SELECT turn_id, prompt, recorded_at_ms FROM recorded_prompts \
             WHERE source = ?1 AND session_id = ?2 AND recorded_at_ms >= ?3",
            params![
                key.source,
                key.session,
                sql_ms(now.saturating_sub(PROMPT_RETENTION_MS))
            ],
            |row| {
                Ok(RecordedPrompt {
                    turn_id: row.get(0)?,
                    text: row.get(1)?,
                    recorded_at_ms: super::ms_column(row, 2)?,
                })
            },
        )
    })?;
    Ok(found.filter(|p| match (turn, p.turn_id.as_deref()) {
        // A subagent's turn is `<turn>/<agent>`: the prompt that started
        // the turn started the subagent too.
        (Some(wanted), Some(recorded)) => {
            wanted == recorded
                || wanted
                    .strip_prefix(recorded)
                    .is_some_and(|rest| rest.starts_with('/'))
        }
        (None, _) | (_, None) => true,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Config;

    fn budget() -> BudgetConfig {
        Config::defaults().unwrap().budget
    }

    fn store() -> (tempfile::TempDir, Store) {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(&dir.path().join("state")).unwrap();
        (dir, store)
    }

    const KEY: PromptKey<'static> = PromptKey {
        source: "claude-code",
        session: "s-1",
    };

    #[test]
    fn the_next_prompt_replaces_the_last_and_blank_ones_are_ignored() {
        let (_dir, store) = store();
        let b = budget();
        let now = 1_000_000;
        assert_eq!(
            record(&store, now, KEY, Some("p-1"), "first", &b).unwrap(),
            Recording::Stored
        );
        assert_eq!(
            record(&store, now + 1, KEY, Some("p-2"), "second", &b).unwrap(),
            Recording::Stored
        );
        assert_eq!(
            record(&store, now + 2, KEY, Some("p-2"), " \n", &b).unwrap(),
            Recording::Empty
        );
        let got = latest(&store, now + 3, KEY, Some("p-2")).unwrap().unwrap();
        assert_eq!(got.text, "second");
        assert_eq!(got.turn_id.as_deref(), Some("p-2"));
        // Another turn's prompt is not this turn's.
        assert_eq!(latest(&store, now + 3, KEY, Some("p-1")).unwrap(), None);
        // A subagent of the turn is the turn's.
        assert!(
            latest(&store, now + 3, KEY, Some("p-2/a-1"))
                .unwrap()
                .is_some()
        );
        assert_eq!(latest(&store, now + 3, KEY, Some("p-20")).unwrap(), None);
        // A request without a turn id takes the session's latest.
        assert!(latest(&store, now + 3, KEY, None).unwrap().is_some());
        let other = PromptKey {
            source: "codex",
            session: "s-1",
        };
        assert_eq!(latest(&store, now + 3, other, None).unwrap(), None);
    }

    #[test]
    fn an_expired_prompt_is_not_used_and_is_pruned() {
        let (_dir, store) = store();
        let b = budget();
        let then = 5_000_000;
        record(&store, then, KEY, None, "old prompt", &b).unwrap();
        let expired = then + PROMPT_RETENTION_MS + 1;
        assert_eq!(latest(&store, expired, KEY, None).unwrap(), None);
        assert!(
            latest(&store, then + PROMPT_RETENTION_MS, KEY, None)
                .unwrap()
                .is_some()
        );
        // Another session's prompt, recorded later, prunes the expired row.
        let later = PromptKey {
            source: "claude-code",
            session: "s-2",
        };
        // The prune is claimed at most once a minute per process.
        let after_prune_interval = expired + TURN_PRUNE_EVERY_MS;
        record(&store, after_prune_interval, later, None, "new", &b).unwrap();
        let rows: i64 = store
            .read(|tx| {
                tx.query_one(
                    "SELECT count(*) FROM recorded_prompts WHERE session_id = 's-1'",
                    &[],
                    |r| r.get(0),
                )
            })
            .unwrap();
        assert_eq!(rows, 0);
    }

    #[test]
    fn an_oversized_prompt_is_cut_visibly_to_the_user_message_budget() {
        let b = budget();
        let long = "please refactor the parser ".repeat(2000);
        let kept = prepare(&long, &b).unwrap();
        assert!(kept.len() < long.len() / 4, "{}", kept.len());
        assert!(kept.contains("bytes omitted]"), "{kept}");
        assert!(kept.starts_with("please refactor"));
        let short = prepare("fix the build", &b).unwrap();
        assert_eq!(short, "fix the build");
        let mut none = b.clone();
        none.max_user_transcript_tokens = 0;
        assert_eq!(prepare("fix the build", &none), None);
    }

    #[test]
    fn a_secret_is_redacted_before_it_is_stored() {
        let (_dir, store) = store();
        let secret = "ghp_pfJBd0Kh8oOOL8dKLzdocJ2isAjIhKtJ0Rlg";
        record(
            &store,
            1,
            KEY,
            None,
            &format!("deploy with token {secret}"),
            &budget(),
        )
        .unwrap();
        let got = latest(&store, 2, KEY, None).unwrap().unwrap();
        assert!(!got.text.contains(secret), "{}", got.text);
        assert!(got.text.starts_with("deploy with token"));
    }
}
