//! File-system hygiene for the state directory: it holds the session state,
//! one-use authorizations and grants, so it is private to the user (`0700`)
//! and every database file inside it is `0600` before SQLite writes a byte.
//!
//! A directory or file found looser than that is tightened (and logged), not
//! refused: the looser mode is almost always an old umask, and refusing would
//! leave model-backed reviews failing closed until someone runs `chmod`. A
//! mode we cannot change (someone else owns the file) is refused. A symlink
//! in place of the directory or a database file is refused: following it
//! would let whoever planted it choose where authorizations are written.

use std::fs::{self, OpenOptions};
use std::io;
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};

use super::StoreError;

/// Mode of the state directory.
pub const DIR_MODE: u32 = 0o700;
/// Mode of every database file (`vouch.sqlite`, `-wal`, `-shm`).
pub const FILE_MODE: u32 = 0o600;

pub(crate) fn io_err(path: &Path, action: &'static str, source: io::Error) -> StoreError {
    StoreError::Io {
        path: path.display().to_string(),
        action,
        source,
    }
}

/// Creates the state directory `0700`, or tightens an existing one.
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
        Ok(meta) => tighten(dir, meta.permissions().mode(), DIR_MODE)?,
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
/// truncating an existing file), or tightens an existing one.
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
        Ok(meta) => tighten(path, meta.permissions().mode(), FILE_MODE),
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
            let meta = fs::symlink_metadata(path).map_err(|e| io_err(path, "inspect", e))?;
            tighten(path, meta.permissions().mode(), FILE_MODE)
        }
        Err(e) => Err(io_err(path, "inspect", e)),
    }
}

/// Tightens `path` to `wanted` when it grants any bit `wanted` does not.
fn tighten(path: &Path, mode: u32, wanted: u32) -> Result<(), StoreError> {
    let permission_bits = mode & 0o7777;
    if permission_bits & !wanted == 0 {
        return Ok(());
    }
    tracing::warn!(
        path = %path.display(),
        found = format_args!("{permission_bits:o}"),
        wanted = format_args!("{wanted:o}"),
        "vouch state file was more permissive than expected; tightening it"
    );
    fs::set_permissions(path, fs::Permissions::from_mode(wanted)).map_err(|source| {
        StoreError::Permissions {
            path: path.display().to_string(),
            mode: format!("{permission_bits:o}"),
            source,
        }
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
/// `0600` (SQLite gives them the main file's mode; this verifies it and
/// tightens anything that is not).
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
