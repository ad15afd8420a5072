//! One-use grants for sandbox brokers (design §6.7).
//!
//! When an `allow` asks for a grant, vouch mints a random token and stores
//! only its SHA-256, bound to the session and the request hash. The broker
//! presents the token with the request it is about to perform; [`consume`]
//! succeeds exactly once, before expiry, for the same session and an
//! identical request hash. The check and the spending are one `DELETE`
//! statement (it spent the grant when it deleted a row), so of N concurrent
//! consumers (threads or processes) exactly one wins. Both writes commit at
//! `synchronous=FULL`: a power cut must not bring a spent grant back.
//!
//! The decision table never draws randomness itself: the engine mints a
//! [`GrantToken`] for a request that asks for one before the table runs, and
//! the table turns it into the decision's [`Grant`] (with its expiry) and a
//! store effect, which the engine applies in the decision's transaction
//! through [`store`].

use sha2::{Digest, Sha256};

use crate::clock::Clock;
use crate::decision::Grant;
use crate::store::sql::params;
use crate::store::{
    self, DbResult, Durability, PruneClock, Store, StoreError, Transaction, sql_ms,
};

/// A freshly minted token, not yet stored.
#[derive(Clone, PartialEq, Eq)]
pub struct GrantToken {
    token: String,
    /// Hex SHA-256 of the token: all the database ever holds.
    pub sha256: String,
}

impl std::fmt::Debug for GrantToken {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GrantToken")
            .field("sha256", &self.sha256)
            .finish_non_exhaustive()
    }
}

impl GrantToken {
    /// 32 random bytes from the operating system, base64url.
    pub fn mint() -> Result<GrantToken, StoreError> {
        let token = store::mint_token()?;
        Ok(GrantToken {
            sha256: token_hash(&token),
            token,
        })
    }

    /// The grant as the decision carries it, valid `ttl_ms` from `now_ms`.
    pub fn grant(&self, now_ms: u64, ttl_ms: u64) -> Grant {
        Grant {
            token: self.token.clone(),
            expires_at_ms: now_ms.saturating_add(ttl_ms),
        }
    }
}

fn token_hash(token: &str) -> String {
    // `hex::encode` collects the digits as `char`s one at a time, which cost
    // more than the SHA-256 itself on a grant pair's path; the slice form
    // writes the 64 ASCII digits straight into a buffer.
    let digest = Sha256::digest(token.as_bytes());
    let mut digits = [0u8; 64];
    let fast = hex::encode_to_slice(digest, &mut digits)
        .ok()
        .and_then(|()| std::str::from_utf8(&digits).ok().map(str::to_owned));
    // `None` cannot happen (32 bytes are 64 ASCII digits), but never panics.
    fast.unwrap_or_else(|| hex::encode(digest))
}

/// How often one process prunes expired grants. The prune scans the table
/// (it has no expiry index: an index page in every mint's and every
/// consume's `synchronous=FULL` commit cost more than the scan), so it runs
/// on a mint at most this often, not on every one. Expired grants thus stay
/// up to this much past their expiry, unusable: `consume` checks the expiry
/// itself.
pub const GRANT_PRUNE_EVERY_MS: u64 = 60 * 1000;

/// When this process prunes expired grants next.
static GRANT_PRUNE: PruneClock = PruneClock::new(GRANT_PRUNE_EVERY_MS);

/// Stores a minted grant inside the caller's transaction, pruning expired
/// grants first when a prune is due ([`GRANT_PRUNE_EVERY_MS`]).
pub(crate) fn store(
    tx: &Transaction<'_>,
    now_ms: u64,
    token_sha256: &str,
    session: &str,
    request_hash: &str,
    expires_at_ms: u64,
) -> DbResult<()> {
    if GRANT_PRUNE.claim(now_ms) {
        prune(tx, now_ms)?;
    }
    tx.execute(
        "INSERT INTO grants (token_hash, session_id, request_hash, expires_at_ms) \
         VALUES (?1, ?2, ?3, ?4)",
        params![token_sha256, session, request_hash, sql_ms(expires_at_ms)],
    )?;
    Ok(())
}

/// Deletes every grant expired at `now_ms` (a scan of the table).
fn prune(tx: &Transaction<'_>, now_ms: u64) -> DbResult<usize> {
    tx.execute(
        "DELETE FROM grants WHERE expires_at_ms <= ?1",
        params![sql_ms(now_ms)],
    )
}

/// Mints and stores a grant for `request_hash` in `session`, valid for
/// `ttl_ms`, in its own `synchronous=FULL` transaction (tools and tests; the
/// pipeline stores grants in the decision's transaction).
pub fn mint(
    db: &Store,
    clock: &dyn Clock,
    session: &str,
    request_hash: &str,
    ttl_ms: u64,
) -> Result<Grant, StoreError> {
    let now = clock.now_ms();
    let token = GrantToken::mint()?;
    let grant = token.grant(now, ttl_ms);
    db.write(Durability::Full, |tx| {
        store(
            tx,
            now,
            &token.sha256,
            session,
            request_hash,
            grant.expires_at_ms,
        )
    })?;
    Ok(grant)
}

/// Spends the grant `token` if it was minted for this `session` and this
/// exact `request_hash` (recomputed by the caller from the presented
/// request) and has not expired. `true` exactly once; every other case —
/// replay, another session, any changed field, expiry, a malformed token —
/// is `false`. A mismatching attempt does not spend the grant: the rightful
/// holder can still use it.
pub fn consume(
    db: &Store,
    clock: &dyn Clock,
    session: &str,
    token: &str,
    request_hash: &str,
) -> Result<bool, StoreError> {
    // Not a token this module could have minted: no database work.
    if !store::is_token(token) {
        return Ok(false);
    }
    let now = clock.now_ms();
    let hash = token_hash(token);
    // A plain DELETE and its change count: `RETURNING` would make SQLite
    // build an ephemeral table (its own pager and a page-sized buffer) on
    // every consume, ~10 % of a mint + consume pair's instructions.
    let spent = db.write(Durability::Full, |tx| {
        tx.execute(
            "DELETE FROM grants WHERE token_hash = ?1 AND session_id = ?2 \
             AND request_hash = ?3 AND expires_at_ms > ?4",
            params![hash, session, request_hash, sql_ms(now)],
        )
    })?;
    Ok(spent == 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn token_shape() {
        let t = GrantToken::mint().unwrap();
        let g = t.grant(1_000, 60_000);
        assert_eq!(g.token.len(), store::TOKEN_CHARS);
        assert!(store::is_token(&g.token));
        assert_eq!(g.expires_at_ms, 61_000);
        assert_eq!(t.sha256, token_hash(&g.token));
        assert_eq!(t.sha256.len(), 64);
        assert!(!format!("{t:?}").contains(&g.token));
    }
}
