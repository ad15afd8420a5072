//! File-system hygiene for the state directory, in one place for every
//! file vouch keeps there: the databases, the service tokens and keys. It
//! holds session state, one-use authorizations, grants and bearer tokens, so
//! it is private to the user (`0700`) and every file inside it is `0600`
//! before a byte is written.
//!
//! A directory or file found readable or writable by group or others is
//! **refused**, naming the `chmod` that fixes it, by every command alike
//! (`vouch serve`, `vouch review`, the hooks): whatever was in it may have
//! leaked, and that is the operator's call, not something to tighten
//! silently. A symlink in place of the directory or a file is refused too:
//! following it would let whoever planted it choose where authorizations are
//! written. Newly created files and directories get their exact mode,
//! whatever the umask.
//!
//! Secrets (tokens, keys, nonces) come from the operating system's random
//! source through [`random_bytes`]; a failure there is an error, never a
//! weaker fallback.

use std::fs::{self, OpenOptions};
use std::io::{self, Write};
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};

use data_encoding::BASE64URL_NOPAD;

use super::StoreError;

/// Mode of the state directory.
pub const DIR_MODE: u32 = 0o700;
/// Mode of every file inside it (`vouch.sqlite`, `-wal`, `-shm`, tokens).
pub const FILE_MODE: u32 = 0o600;
/// Random bytes in a token (grants, service tokens).
pub const TOKEN_BYTES: usize = 32;
/// Length of a token in base64url without padding.
pub const TOKEN_CHARS: usize = 43;

pub(crate) fn io_err(path: &Path, action: &'static str, source: io::Error) -> StoreError {
    StoreError::Io {
        path: path.display().to_string(),
        action,
        source,
    }
}

/// Creates the state directory `0700`, or checks an existing one.
pub fn ensure_private_dir(dir: &Path) -> Result<(), StoreError> {
    match fs::symlink_metadata(dir) {
        Ok(meta) if meta.file_type().is_symlink() => {
            return Err(StoreError::Symlink {
                path: dir.display().to_string(),
            });
        }
        Ok(meta) if !meta.is_dir() => {
            return Err(io_err(
                dir,
                "use as the state directory",
                io::Error::new(io::ErrorKind::AlreadyExists, "not a directory"),
            ));
        }
        Ok(meta) => refuse_if_open(dir, meta.permissions().mode(), DIR_MODE)?,
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            // Parents are created with the umask's mode (they are ordinary
            // directories such as `~/.local/state`); only the leaf is private.
            if let Some(parent) = dir.parent() {
                fs::create_dir_all(parent)
                    .map_err(|e| io_err(parent, "create the parent of", e))?;
            }
            match fs::DirBuilder::new().mode(DIR_MODE).create(dir) {
                Ok(()) => {}
                // Another process won the race; check what it made.
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {
                    return ensure_private_dir(dir);
                }
                Err(e) => return Err(io_err(dir, "create", e)),
            }
            // The umask may have removed bits but never adds any; set it
            // exactly anyway so the mode does not depend on the umask.
            fs::set_permissions(dir, fs::Permissions::from_mode(DIR_MODE))
                .map_err(|e| io_err(dir, "set the mode of", e))?;
        }
        Err(e) => return Err(io_err(dir, "inspect", e)),
    }
    Ok(())
}

/// Creates `path` empty with mode `0600` if it does not exist (never
/// truncating an existing file), or checks an existing one.
pub fn ensure_private_file(path: &Path) -> Result<(), StoreError> {
    match fs::symlink_metadata(path) {
        Ok(meta) if meta.file_type().is_symlink() => Err(StoreError::Symlink {
            path: path.display().to_string(),
        }),
        Ok(meta) if !meta.is_file() => Err(io_err(
            path,
            "use as a database file",
            io::Error::new(io::ErrorKind::AlreadyExists, "not a regular file"),
        )),
        Ok(meta) => refuse_if_open(path, meta.permissions().mode(), FILE_MODE),
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            // `create(true)` without `truncate`: if another process creates
            // it between our check and this open, we open theirs unchanged.
            OpenOptions::new()
                .write(true)
                .create(true)
                .truncate(false)
                .mode(FILE_MODE)
                .open(path)
                .map_err(|e| io_err(path, "create", e))?;
            // The umask may have removed bits but never adds any.
            let meta = fs::symlink_metadata(path).map_err(|e| io_err(path, "inspect", e))?;
            refuse_if_open(path, meta.permissions().mode(), FILE_MODE)
        }
        Err(e) => Err(io_err(path, "inspect", e)),
    }
}

/// Refuses `path` when its mode grants group or others anything, naming the
/// `chmod` that fixes it.
fn refuse_if_open(path: &Path, mode: u32, wanted: u32) -> Result<(), StoreError> {
    let permission_bits = mode & 0o7777;
    if permission_bits & 0o077 == 0 {
        return Ok(());
    }
    Err(StoreError::TooOpen {
        path: path.display().to_string(),
        mode: permission_bits,
        wanted,
    })
}

/// The `-wal` and `-shm` companions of a database file.
pub fn companions(db: &Path) -> [PathBuf; 2] {
    let mut wal = db.as_os_str().to_owned();
    wal.push("-wal");
    let mut shm = db.as_os_str().to_owned();
    shm.push("-shm");
    [PathBuf::from(wal), PathBuf::from(shm)]
}

/// After the first write: the database and whichever companions exist are
/// `0600` (SQLite gives them the main file's mode; this verifies it).
pub fn verify_database_modes(db: &Path) -> Result<(), StoreError> {
    ensure_private_file(db)?;
    for companion in companions(db) {
        match fs::symlink_metadata(&companion) {
            Ok(_) => ensure_private_file(&companion)?,
            Err(e) if e.kind() == io::ErrorKind::NotFound => {}
            Err(e) => return Err(io_err(&companion, "inspect", e)),
        }
    }
    Ok(())
}

/// Random bytes from the operating system.
pub fn random_bytes<const N: usize>() -> Result<[u8; N], StoreError> {
    let mut bytes = [0u8; N];
    getrandom::getrandom(&mut bytes).map_err(|e| StoreError::Random {
        message: e.to_string(),
    })?;
    Ok(bytes)
}

/// A fresh token: [`TOKEN_BYTES`] random bytes, base64url without padding.
pub fn mint_token() -> Result<String, StoreError> {
    Ok(BASE64URL_NOPAD.encode(&random_bytes::<TOKEN_BYTES>()?))
}

/// Whether `text` has the shape of a token [`mint_token`] makes.
pub fn is_token(text: &str) -> bool {
    text.len() == TOKEN_CHARS
        && BASE64URL_NOPAD
            .decode(text.as_bytes())
            .is_ok_and(|bytes| bytes.len() == TOKEN_BYTES)
}

/// Reads the secret token in `path` (mode `0600`, no symlink), minting and
/// writing one when the file does not exist. Two processes starting together
/// agree on one token: it is written to a private temporary name and
/// hard-linked into place, and the loser of the race reads the winner's.
pub fn load_or_create_token(path: &Path) -> Result<String, StoreError> {
    if let Some(token) = read_token(path)? {
        return Ok(token);
    }
    let token = mint_token()?;
    // Unique per attempt, not just per process: threads of one process (and
    // tests) may race here too.
    let suffix = hex::encode(random_bytes::<8>()?);
    let tmp = path.with_extension(format!("tmp.{}.{suffix}", std::process::id()));
    let mut file = OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(FILE_MODE)
        .open(&tmp)
        .map_err(|e| io_err(&tmp, "create", e))?;
    let written = file
        .write_all(token.as_bytes())
        .and_then(|()| file.write_all(b"\n"))
        .and_then(|()| file.sync_all());
    drop(file);
    let linked = written.and_then(|()| fs::hard_link(&tmp, path));
    // Best effort: a leftover temporary file holds a token nobody uses.
    let _ = fs::remove_file(&tmp);
    match linked {
        Ok(()) => Ok(token),
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {
            read_token(path)?.ok_or_else(|| StoreError::NotAToken {
                path: path.display().to_string(),
            })
        }
        Err(e) => Err(io_err(path, "create", e)),
    }
}

/// The token in `path`, or `None` when the file does not exist.
fn read_token(path: &Path) -> Result<Option<String>, StoreError> {
    let meta = match fs::symlink_metadata(path) {
        Ok(meta) => meta,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(io_err(path, "inspect", e)),
    };
    if meta.file_type().is_symlink() {
        return Err(StoreError::Symlink {
            path: path.display().to_string(),
        });
    }
    refuse_if_open(path, meta.permissions().mode(), FILE_MODE)?;
    let text = fs::read_to_string(path).map_err(|e| io_err(path, "read", e))?;
    let token = text.trim();
    if !is_token(token) {
        return Err(StoreError::NotAToken {
            path: path.display().to_string(),
        });
    }
    Ok(Some(token.to_owned()))
}
