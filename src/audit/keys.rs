//! The audit's keyed hashes: `hmac.key` and HMAC-SHA256 under it.
//!
//! Request ids, project locations, rule origins and rule patterns are stored
//! only as HMACs, so the database can count and join them without holding
//! them. The key is 32 random bytes in `<state_dir>/hmac.key`, mode `0600`,
//! created on first use and never rewritten: a new key would silently split
//! every aggregate in two. Reading it is a hard deny for agents.
//!
//! Each kind of value is hashed under its own domain label, so the same text
//! as a project path and as a rule pattern yields unrelated values and a
//! table cannot be joined against another column. Values are truncated to
//! 128 bits (RFC 2104 allows truncation): ample to tell values apart, and
//! half the bytes on every aggregate row.

use std::fs::{self, OpenOptions};
use std::io::{self, Read, Write};
use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};

use hmac::{Hmac, KeyInit, Mac};
use sha2::Sha256;

use super::AuditError;
use crate::store::files::{self, FILE_MODE};

/// File name of the key inside the state directory.
pub const KEY_FILE: &str = "hmac.key";
/// Random bytes in the key.
pub const KEY_BYTES: usize = 32;
/// Bytes of each HMAC kept (hex doubles it).
const DIGEST_BYTES: usize = 16;

/// What a keyed hash stands for; each is its own domain.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Domain {
    /// A project root.
    Scope,
    /// The configuration scope of a winning rule.
    Origin,
    /// A rule pattern.
    Pattern,
    /// An ingested event's id (or digest), for idempotent ingest.
    EventId,
    /// A session and request hash, pairing a decision with its after-event.
    Pending,
    /// A constant: which key the replicas sharing a PostgreSQL audit write
    /// with ([`crate::audit::db::Db::check_key`]).
    KeyCheck,
}

impl Domain {
    fn label(self) -> &'static [u8] {
        match self {
            Domain::Scope => b"vouch-audit/scope",
            Domain::Origin => b"vouch-audit/origin",
            Domain::Pattern => b"vouch-audit/pattern",
            Domain::EventId => b"vouch-audit/event-id",
            Domain::Pending => b"vouch-audit/pending",
            Domain::KeyCheck => b"vouch-audit/key-check",
        }
    }
}

/// The loaded key, already keyed into HMAC-SHA256: each digest clones the
/// keyed state instead of hashing the key's inner and outer pads again.
/// Its `Debug` never shows the bytes.
#[derive(Clone)]
pub struct Keys {
    // INVARIANT: HMAC accepts keys of any length, so this is always `Some`;
    // `None` only keeps construction total (every digest would be empty).
    mac: Option<Hmac<Sha256>>,
}

impl std::fmt::Debug for Keys {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Keys(<redacted>)")
    }
}

impl Keys {
    /// A key from known bytes (tests and benchmarks).
    pub fn from_bytes(key: [u8; KEY_BYTES]) -> Keys {
        Keys {
            mac: Hmac::<Sha256>::new_from_slice(&key).ok(),
        }
    }

    /// Loads `<state_dir>/hmac.key`, creating it (32 random bytes, `0600`)
    /// when it does not exist. A key of the wrong size is an error, never
    /// replaced.
    pub fn load_or_create(state_dir: &Path) -> Result<Keys, AuditError> {
        files::ensure_private_dir(state_dir)?;
        let path = state_dir.join(KEY_FILE);
        match read_key(&path) {
            Ok(keys) => return Ok(keys),
            Err(KeyRead::Missing) => {}
            Err(KeyRead::Failed(e)) => return Err(e),
        }
        create_key(&path)?;
        read_key(&path).map_err(|e| match e {
            KeyRead::Missing => AuditError::Key {
                path: path.display().to_string(),
                problem: "vanished right after it was created".to_owned(),
            },
            KeyRead::Failed(e) => e,
        })
    }

    /// Loads an existing key; `Ok(None)` when there is none yet (a report
    /// over an audit that never recorded anything).
    pub fn load(state_dir: &Path) -> Result<Option<Keys>, AuditError> {
        match read_key(&state_dir.join(KEY_FILE)) {
            Ok(keys) => Ok(Some(keys)),
            Err(KeyRead::Missing) => Ok(None),
            Err(KeyRead::Failed(e)) => Err(e),
        }
    }

    /// HMAC-SHA256 of `value` in `domain`, 128 bits as lowercase hex.
    pub fn digest(&self, domain: Domain, value: &str) -> String {
        self.digest_parts(domain, &[value.as_bytes()])
    }

    /// HMAC over several parts, each length-prefixed so that no two
    /// different part lists hash alike (`"ab","c"` vs `"a","bc"`).
    pub fn digest_parts(&self, domain: Domain, parts: &[&[u8]]) -> String {
        let Some(mut mac) = self.mac.clone() else {
            return String::new();
        };
        let label = domain.label();
        mac.update(&(label.len() as u64).to_be_bytes());
        mac.update(label);
        for part in parts {
            mac.update(&(part.len() as u64).to_be_bytes());
            mac.update(part);
        }
        let full = mac.finalize().into_bytes();
        hex::encode(full.get(..DIGEST_BYTES).unwrap_or(&full))
    }
}

enum KeyRead {
    Missing,
    Failed(AuditError),
}

fn key_error(path: &Path, problem: impl Into<String>) -> AuditError {
    AuditError::Key {
        path: path.display().to_string(),
        problem: problem.into(),
    }
}

/// Reads the key without following a symlink; a key open to group or
/// others is refused, never read.
fn read_key(path: &Path) -> Result<Keys, KeyRead> {
    let meta = match fs::symlink_metadata(path) {
        Ok(meta) => meta,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Err(KeyRead::Missing),
        Err(e) => {
            return Err(KeyRead::Failed(key_error(
                path,
                format!("cannot inspect: {e}"),
            )));
        }
    };
    if meta.file_type().is_symlink() {
        return Err(KeyRead::Failed(key_error(
            path,
            "is a symbolic link; vouch refuses to take its key through a link",
        )));
    }
    files::ensure_private_file(path).map_err(|e| KeyRead::Failed(e.into()))?;
    // The state directory is private (0700), so nothing but this user can
    // swap the checked file for a link before the open.
    let mut file = OpenOptions::new()
        .read(true)
        .open(path)
        .map_err(|e| KeyRead::Failed(key_error(path, format!("cannot open: {e}"))))?;
    let mut bytes = Vec::with_capacity(KEY_BYTES + 1);
    Read::by_ref(&mut file)
        .take(KEY_BYTES as u64 + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| KeyRead::Failed(key_error(path, format!("cannot read: {e}"))))?;
    let key: [u8; KEY_BYTES] = bytes.as_slice().try_into().map_err(|_| {
        KeyRead::Failed(key_error(
            path,
            format!(
                "holds {} bytes, not {KEY_BYTES}; it was left as it is (restore it, or move it \
                 aside to start a new, unlinkable audit)",
                bytes.len()
            ),
        ))
    })?;
    Ok(Keys::from_bytes(key))
}

/// Writes a fresh key to a private temporary file and links it into place:
/// `link` fails when the key exists, so two processes creating at once both
/// end up reading the one that won.
fn create_key(path: &Path) -> Result<(), AuditError> {
    let tmp = temp_path(path);
    let key: [u8; KEY_BYTES] = files::random_bytes()
        .map_err(|e| key_error(path, format!("cannot draw random bytes: {e}")))?;
    let written = (|| -> io::Result<()> {
        let mut file = OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(FILE_MODE)
            .open(&tmp)?;
        fs::set_permissions(&tmp, fs::Permissions::from_mode(FILE_MODE))?;
        file.write_all(&key)?;
        file.sync_all()
    })();
    let linked = written.and_then(|()| fs::hard_link(&tmp, path));
    // The temporary name is ours alone; removing it cannot touch the key.
    let _ = fs::remove_file(&tmp);
    match linked {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists => Ok(()),
        Err(e) => Err(key_error(path, format!("cannot create: {e}"))),
    }
}

fn temp_path(path: &Path) -> PathBuf {
    // Unique per process and call: `create_new` refuses any name in use.
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let mut name = path.as_os_str().to_owned();
    name.push(format!(".tmp.{}.{n}", std::process::id()));
    PathBuf::from(name)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::DirBuilderExt as _;

    /// A `0700` state directory inside `parent`: the key is only read from
    /// a directory no one else can write, so the tests start from one (the
    /// temp dir itself may be `0755` under the process umask).
    fn private_state_dir(parent: &Path) -> PathBuf {
        let state = parent.join("state");
        fs::DirBuilder::new().mode(0o700).create(&state).unwrap();
        state
    }

    #[test]
    fn stable_per_key_and_different_across_keys_and_domains() {
        let a = Keys::from_bytes([7; KEY_BYTES]);
        let b = Keys::from_bytes([8; KEY_BYTES]);
        let x = a.digest(Domain::Scope, "/srv/app");
        assert_eq!(x, a.digest(Domain::Scope, "/srv/app"));
        assert_eq!(x.len(), DIGEST_BYTES * 2);
        assert_ne!(x, b.digest(Domain::Scope, "/srv/app"));
        assert_ne!(x, a.digest(Domain::Pattern, "/srv/app"));
        assert_ne!(x, a.digest(Domain::Scope, "/srv/app2"));
        assert_ne!(
            a.digest_parts(Domain::Pending, &[b"ab", b"c"]),
            a.digest_parts(Domain::Pending, &[b"a", b"bc"])
        );
    }

    #[test]
    fn the_prekeyed_state_is_plain_hmac_sha256() {
        let key = [7; KEY_BYTES];
        let mut direct = Hmac::<Sha256>::new_from_slice(&key).unwrap();
        let label = Domain::Scope.label();
        direct.update(&(label.len() as u64).to_be_bytes());
        direct.update(label);
        direct.update(&8u64.to_be_bytes());
        direct.update(b"/srv/app");
        let full = direct.finalize().into_bytes();
        let keys = Keys::from_bytes(key);
        assert_eq!(
            keys.digest(Domain::Scope, "/srv/app"),
            hex::encode(&full[..DIGEST_BYTES])
        );
        // Cloning the keyed state leaves it unchanged for the next digest.
        assert_eq!(
            keys.digest(Domain::Scope, "/srv/app"),
            keys.digest(Domain::Scope, "/srv/app")
        );
    }

    #[test]
    fn created_once_private_and_reloaded() {
        let dir = tempfile::tempdir().unwrap();
        let state = dir.path().join("state");
        let first = Keys::load_or_create(&state).unwrap();
        let path = state.join(KEY_FILE);
        let mode = fs::metadata(&path).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600);
        assert_eq!(fs::read(&path).unwrap().len(), KEY_BYTES);
        let again = Keys::load_or_create(&state).unwrap();
        assert_eq!(
            first.digest(Domain::Scope, "x"),
            again.digest(Domain::Scope, "x")
        );
        assert!(Keys::load(&state).unwrap().is_some());
        assert!(Keys::load(&dir.path().join("none")).unwrap().is_none());
        assert_eq!(format!("{first:?}"), "Keys(<redacted>)");
    }

    #[test]
    fn a_wrong_sized_key_is_refused_and_kept() {
        let dir = tempfile::tempdir().unwrap();
        let state = private_state_dir(dir.path());
        let path = state.join(KEY_FILE);
        fs::write(&path, b"short").unwrap();
        fs::set_permissions(&path, fs::Permissions::from_mode(FILE_MODE)).unwrap();
        let err = Keys::load_or_create(&state).unwrap_err();
        assert!(err.to_string().contains("holds 5 bytes"), "{err}");
        assert_eq!(fs::read(&path).unwrap(), b"short");
    }

    #[test]
    fn a_symlinked_key_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let state = private_state_dir(dir.path());
        let real = dir.path().join("elsewhere");
        fs::write(&real, [1u8; KEY_BYTES]).unwrap();
        std::os::unix::fs::symlink(&real, state.join(KEY_FILE)).unwrap();
        let err = Keys::load_or_create(&state).unwrap_err();
        assert!(err.to_string().contains("symbolic link"), "{err}");
    }
}
