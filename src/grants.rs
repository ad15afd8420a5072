//! One-use grants for sandbox brokers (design §6.7).
//!
//! When an `allow` asks for a grant, vouch mints a random token and stores
//! only its SHA-256, bound to the session and the request hash. The broker
//! presents the token with the request it is about to perform; [`consume`]
//! succeeds exactly once, before expiry, for the same session and an
//! identical request hash. The check and the spending are one
//! `DELETE … RETURNING` statement, so of N concurrent consumers (threads or
//! processes) exactly one wins. Both writes commit at `synchronous=FULL`: a
//! power cut must not bring a spent grant back.

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use rand::Rng;
use rusqlite::{OptionalExtension, params};
use sha2::{Digest, Sha256};

use crate::clock::Clock;
use crate::decision::Grant;
use crate::store::{Durability, Store, StoreError, sql_ms};

/// Random bytes in a token.
pub const TOKEN_BYTES: usize = 32;
/// Length of a token in base64url without padding.
pub const TOKEN_CHARS: usize = 43;

fn token_hash(token: &str) -> String {
    hex::encode(Sha256::digest(token.as_bytes()))
}

/// Mints a grant for `request_hash` in `session`, valid for `ttl_ms`.
/// Expired grants are pruned in the same transaction.
pub fn mint(
    store: &Store,
    clock: &dyn Clock,
    session: &str,
    request_hash: &str,
    ttl_ms: u64,
) -> Result<Grant, StoreError> {
    let now = clock.now_ms();
    let expires_at_ms = now.saturating_add(ttl_ms);
    let token = URL_SAFE_NO_PAD.encode(rand::rng().random::<[u8; TOKEN_BYTES]>());
    let hash = token_hash(&token);
    store.write(Durability::Full, |tx| {
        tx.prepare_cached("DELETE FROM grants WHERE expires_at_ms <= ?1")?
            .execute(params![sql_ms(now)])?;
        tx.prepare_cached(
            "INSERT INTO grants (token_hash, session_id, request_hash, expires_at_ms) \
             VALUES (?1, ?2, ?3, ?4)",
        )?
        .execute(params![hash, session, request_hash, sql_ms(expires_at_ms)])?;
        Ok(())
    })?;
    Ok(Grant {
        token,
        expires_at_ms,
    })
}

/// Spends the grant `token` if it was minted for this `session` and this
/// exact `request_hash` (recomputed by the caller from the presented
/// request) and has not expired. `true` exactly once; every other case —
/// replay, another session, any changed field, expiry, a malformed token —
/// is `false`. A mismatching attempt does not spend the grant: the rightful
/// holder can still use it.
pub fn consume(
    store: &Store,
    clock: &dyn Clock,
    session: &str,
    token: &str,
    request_hash: &str,
) -> Result<bool, StoreError> {
    // Not a token this module could have minted: no database work.
    if token.len() != TOKEN_CHARS
        || !token
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
    {
        return Ok(false);
    }
    let now = clock.now_ms();
    let hash = token_hash(token);
    let spent = store.write(Durability::Full, |tx| {
        tx.prepare_cached(
            "DELETE FROM grants WHERE token_hash = ?1 AND session_id = ?2 \
             AND request_hash = ?3 AND expires_at_ms > ?4 RETURNING token_hash",
        )?
        .query_row(params![hash, session, request_hash, sql_ms(now)], |row| {
            row.get::<_, String>(0)
        })
        .optional()
    })?;
    Ok(spent.is_some())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn token_shape() {
        let token = URL_SAFE_NO_PAD.encode([0u8; TOKEN_BYTES]);
        assert_eq!(token.len(), TOKEN_CHARS);
        assert_eq!(token_hash("x").len(), 64);
    }
}
