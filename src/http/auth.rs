//! Bearer tokens: who may call which route.
//!
//! Two tokens live in the state directory. `adapter.token` is what every
//! agent hook and sandbox broker holds: it may ask for decisions and consume
//! grants. `operator.token` is for the human: overrides, break glass and
//! reports. An agent that can read its own hook configuration can read the
//! adapter token, so the adapter token must never be able to authorize
//! anything by itself — that is why overrides need the other one.
//!
//! The operator token is also accepted on adapter routes: it is strictly more
//! privileged, and an operator debugging with `curl` should not need two
//! secrets. The reverse is a 403.
//!
//! Tokens are 32 random bytes, base64url without padding, created once with
//! mode `0600` (directory `0700`) and reused; minting, modes and the race
//! between two starting services are [`crate::store`]'s, shared with every
//! other file in the state directory. Comparison is constant time.

use std::path::{Path, PathBuf};

use subtle::ConstantTimeEq;

use crate::names::named_enum;
use crate::store::{self, StoreError};

/// File name of the adapter token inside the state directory.
pub const ADAPTER_TOKEN_FILE: &str = "adapter.token";
/// File name of the operator token inside the state directory.
pub const OPERATOR_TOKEN_FILE: &str = "operator.token";

named_enum! {
    /// Which token a caller presented.
    pub enum Role {
        Adapter = "adapter",
        Operator = "operator",
    }
}

/// What a route demands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Required {
    /// Adapter or operator token.
    Adapter,
    /// Operator token only.
    Operator,
}

/// The two service tokens and where they live.
#[derive(Clone)]
pub struct Tokens {
    adapter: Vec<u8>,
    operator: Vec<u8>,
    adapter_path: PathBuf,
    operator_path: PathBuf,
}

impl std::fmt::Debug for Tokens {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Tokens")
            .field("adapter_path", &self.adapter_path)
            .field("operator_path", &self.operator_path)
            .finish_non_exhaustive()
    }
}

impl Tokens {
    /// Reads both tokens from `state_dir`, minting any that is missing. A
    /// state directory or token file open to group or others is refused
    /// (see [`crate::store`]'s file rules).
    pub fn load_or_create(state_dir: &Path) -> Result<Tokens, StoreError> {
        store::ensure_private_dir(state_dir)?;
        let adapter_path = state_dir.join(ADAPTER_TOKEN_FILE);
        let operator_path = state_dir.join(OPERATOR_TOKEN_FILE);
        let adapter = store::load_or_create_token(&adapter_path)?;
        let operator = store::load_or_create_token(&operator_path)?;
        Ok(Tokens {
            adapter: adapter.into_bytes(),
            operator: operator.into_bytes(),
            adapter_path,
            operator_path,
        })
    }

    /// Tokens given directly (tests, embedding).
    pub fn from_values(adapter: &str, operator: &str) -> Tokens {
        Tokens {
            adapter: adapter.as_bytes().to_vec(),
            operator: operator.as_bytes().to_vec(),
            adapter_path: PathBuf::new(),
            operator_path: PathBuf::new(),
        }
    }

    pub fn adapter_path(&self) -> &Path {
        &self.adapter_path
    }

    pub fn operator_path(&self) -> &Path {
        &self.operator_path
    }

    /// Which role `presented` authenticates as, if any. Both comparisons run
    /// every time so timing does not tell which token was close.
    pub fn identify(&self, presented: &[u8]) -> Option<Role> {
        let is_adapter: bool = self.adapter.as_slice().ct_eq(presented).into();
        let is_operator: bool = self.operator.as_slice().ct_eq(presented).into();
        match (is_operator, is_adapter) {
            (true, _) => Some(Role::Operator),
            (false, true) => Some(Role::Adapter),
            (false, false) => None,
        }
    }
}

/// The token in an `Authorization: Bearer <token>` header value.
pub fn bearer(header: Option<&axum::http::HeaderValue>) -> Option<&[u8]> {
    let value = header?.as_bytes();
    let (scheme, rest) = value.split_at_checked(7)?;
    if !scheme.eq_ignore_ascii_case(b"bearer ") {
        return None;
    }
    let token = rest.trim_ascii();
    (!token.is_empty()).then_some(token)
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::http::HeaderValue;
    use std::fs;
    use std::io::Write;
    use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt, PermissionsExt};

    #[test]
    fn tokens_are_created_private_and_reused() {
        let dir = tempfile::tempdir().unwrap();
        let state = dir.path().join("state");
        let first = Tokens::load_or_create(&state).unwrap();
        let mode = |p: &Path| fs::metadata(p).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode(&state), 0o700);
        assert_eq!(mode(first.adapter_path()), 0o600);
        assert_eq!(mode(first.operator_path()), 0o600);
        let second = Tokens::load_or_create(&state).unwrap();
        assert_eq!(first.adapter, second.adapter);
        assert_eq!(first.operator, second.operator);
        assert_ne!(first.adapter, first.operator);
        assert_eq!(first.adapter.len(), 43);
    }

    #[test]
    fn concurrent_first_starts_agree_on_one_token() {
        let dir = tempfile::tempdir().unwrap();
        let state = dir.path().join("state");
        let handles: Vec<_> = (0..8)
            .map(|_| {
                let state = state.clone();
                std::thread::spawn(move || Tokens::load_or_create(&state).unwrap())
            })
            .collect();
        let all: Vec<Tokens> = handles.into_iter().map(|h| h.join().unwrap()).collect();
        for t in &all {
            assert_eq!(t.adapter, all[0].adapter);
            assert_eq!(t.operator, all[0].operator);
        }
        let leftovers = fs::read_dir(&state).unwrap().count();
        assert_eq!(leftovers, 2, "temporary files left behind");
    }

    #[test]
    fn loose_token_file_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let state = dir.path().join("state");
        let tokens = Tokens::load_or_create(&state).unwrap();
        fs::set_permissions(tokens.adapter_path(), fs::Permissions::from_mode(0o644)).unwrap();
        let err = Tokens::load_or_create(&state).unwrap_err().to_string();
        assert!(err.contains("adapter.token"), "{err}");
        assert!(err.contains("0644"), "{err}");
    }

    #[test]
    fn garbage_token_file_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let state = dir.path().join("state");
        fs::DirBuilder::new().mode(0o700).create(&state).unwrap();
        fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .open(state.join(OPERATOR_TOKEN_FILE))
            .unwrap()
            .write_all(b"hunter2")
            .unwrap();
        let err = Tokens::load_or_create(&state).unwrap_err().to_string();
        assert!(err.contains("does not hold a token"), "{err}");
    }

    #[test]
    fn identify_and_bearer_parsing() {
        let t = Tokens::from_values("aaa", "ooo");
        assert_eq!(t.identify(b"aaa"), Some(Role::Adapter));
        assert_eq!(t.identify(b"ooo"), Some(Role::Operator));
        assert_eq!(t.identify(b"aa"), None);
        assert_eq!(t.identify(b""), None);
        let h = HeaderValue::from_static("Bearer abc");
        assert_eq!(bearer(Some(&h)), Some(&b"abc"[..]));
        let h = HeaderValue::from_static("bearer   abc ");
        assert_eq!(bearer(Some(&h)), Some(&b"abc"[..]));
        let h = HeaderValue::from_static("Basic abc");
        assert_eq!(bearer(Some(&h)), None);
        let h = HeaderValue::from_static("Bearer ");
        assert_eq!(bearer(Some(&h)), None);
        assert_eq!(bearer(None), None);
    }
}
