//! Writing a settings file so that a failure at any point leaves the
//! previous file byte-identical, never empty or partial: the new bytes go
//! to a temporary file in the same directory (created exclusively, mode set
//! before a byte is written), are flushed to disk, then renamed over the
//! old name in one step, and the directory is flushed too.
//!
//! A settings file that is a symbolic link (a dotfiles repository's
//! `~/.claude/settings.json -> ~/dotfiles/claude.json`) is followed: the
//! link stays as it is and its target is replaced, in the target's own
//! directory, so the user's link keeps working. A dangling link, a link
//! loop or a target that is not a regular file is refused.

use std::fs::{self, File, OpenOptions};
use std::io::{self, Read, Write};
use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};

/// The largest settings file vouch reads: anything bigger is not a
/// settings file it should rewrite.
pub const MAX_SETTINGS_BYTES: u64 = 4 * 1024 * 1024;

/// Mode of a settings file vouch creates (the harness's own files are
/// the user's alone).
pub const NEW_FILE_MODE: u32 = 0o600;

/// Where a write stopped, for the tests that prove every stop leaves the
/// previous file whole.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Step {
    Created,
    Written,
    Synced,
    Renamed,
}

/// The file a settings path stands for: itself, or the target of the
/// symbolic link(s) it is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Resolved {
    /// The path the harness reads.
    pub given: PathBuf,
    /// The regular file (or where it will be created) that is written.
    pub file: PathBuf,
    /// Whether `given` is a symbolic link.
    pub via_link: bool,
}

/// Resolves `path` as [`Resolved`] says. A missing file resolves to
/// itself; its directory must exist or be creatable.
pub fn resolve(path: &Path) -> io::Result<Resolved> {
    match fs::symlink_metadata(path) {
        Ok(meta) if meta.file_type().is_symlink() => {
            let file = fs::canonicalize(path).map_err(|e| {
                io::Error::new(
                    e.kind(),
                    format!("it is a symbolic link whose target cannot be resolved ({e})"),
                )
            })?;
            let meta = fs::metadata(&file)?;
            if !meta.is_file() {
                return Err(io::Error::other(format!(
                    "it is a symbolic link to `{}`, which is not a regular file",
                    file.display()
                )));
            }
            Ok(Resolved {
                given: path.to_path_buf(),
                file,
                via_link: true,
            })
        }
        Ok(meta) if !meta.is_file() => Err(io::Error::other("it is not a regular file")),
        Ok(_) | Err(_) => Ok(Resolved {
            given: path.to_path_buf(),
            file: path.to_path_buf(),
            via_link: false,
        }),
    }
}

/// The current bytes of `file` and its mode, or `None` when it does not
/// exist. Bounded by [`MAX_SETTINGS_BYTES`].
pub fn read(file: &Path) -> io::Result<Option<(Vec<u8>, u32)>> {
    let f = match File::open(file) {
        Ok(f) => f,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(e),
    };
    let meta = f.metadata()?;
    if !meta.is_file() {
        return Err(io::Error::other("it is not a regular file"));
    }
    let mut bytes = Vec::new();
    f.take(MAX_SETTINGS_BYTES + 1).read_to_end(&mut bytes)?;
    if u64::try_from(bytes.len()).unwrap_or(u64::MAX) > MAX_SETTINGS_BYTES {
        return Err(io::Error::other(format!(
            "it is larger than {MAX_SETTINGS_BYTES} bytes"
        )));
    }
    Ok(Some((bytes, meta.permissions().mode() & 0o7777)))
}

/// Replaces `file` with `bytes` atomically, with mode `mode`.
pub fn write(file: &Path, bytes: &[u8], mode: u32) -> io::Result<()> {
    write_with(file, bytes, mode, &mut |_| Ok(()))
}

/// [`write`], calling `stop` after each step (a test makes it fail there).
pub fn write_with(
    file: &Path,
    bytes: &[u8],
    mode: u32,
    stop: &mut dyn FnMut(Step) -> io::Result<()>,
) -> io::Result<()> {
    let dir = match file.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    };
    fs::create_dir_all(&dir)?;
    let name = file
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "settings".to_owned());
    let (temp_path, temp) = create_temp(&dir, &name, mode)?;
    let result = (|| {
        stop(Step::Created)?;
        let mut temp = temp;
        temp.write_all(bytes)?;
        stop(Step::Written)?;
        // The umask never widens a mode, but the creation mode may have
        // been narrowed by it: set it exactly.
        temp.set_permissions(fs::Permissions::from_mode(mode))?;
        temp.sync_all()?;
        stop(Step::Synced)?;
        drop(temp);
        fs::rename(&temp_path, file)?;
        stop(Step::Renamed)
    })();
    match result {
        Ok(()) => {
            // The rename is in the directory: flush it too. A failure here
            // leaves the new file in place, which is what was asked.
            if let Ok(d) = File::open(&dir) {
                let _ = d.sync_all();
            }
            Ok(())
        }
        Err(e) => {
            // The previous file was never touched; only the temporary goes
            // (already renamed away when the last step failed).
            let _ = fs::remove_file(&temp_path);
            Err(e)
        }
    }
}

/// Removes `file` (uninstalling what install created).
pub fn remove(file: &Path) -> io::Result<()> {
    fs::remove_file(file)
}

/// A new, exclusive temporary file beside `name` in `dir`.
fn create_temp(dir: &Path, name: &str, mode: u32) -> io::Result<(PathBuf, File)> {
    let mut last = None;
    for _ in 0..16 {
        let suffix: [u8; 6] =
            crate::store::random_bytes().map_err(|e| io::Error::other(e.to_string()))?;
        let path = dir.join(format!(".{name}.vouch-{}.tmp", hex::encode(suffix)));
        match OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(mode & 0o777)
            .open(&path)
        {
            Ok(f) => return Ok((path, f)),
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => last = Some(e),
            Err(e) => return Err(e),
        }
    }
    Err(last.unwrap_or_else(|| io::Error::other("no temporary file name was free")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_failure_at_every_step_leaves_the_old_file_whole() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("settings.json");
        fs::write(&file, b"{\"old\": true}\n").unwrap();
        fs::set_permissions(&file, fs::Permissions::from_mode(0o640)).unwrap();
        for at in [Step::Created, Step::Written, Step::Synced] {
            let err = write_with(&file, b"{\"new\": 1}", 0o640, &mut |s| {
                if s == at {
                    Err(io::Error::other("injected"))
                } else {
                    Ok(())
                }
            })
            .unwrap_err();
            assert_eq!(err.to_string(), "injected");
            assert_eq!(fs::read(&file).unwrap(), b"{\"old\": true}\n", "{at:?}");
            let left: Vec<_> = fs::read_dir(dir.path()).unwrap().collect();
            assert_eq!(left.len(), 1, "a temporary file was left after {at:?}");
        }
        write(&file, b"{\"new\": 1}", 0o640).unwrap();
        assert_eq!(fs::read(&file).unwrap(), b"{\"new\": 1}");
        let mode = fs::metadata(&file).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o640);
    }

    #[test]
    fn links_are_followed_and_dangling_ones_refused() {
        let dir = tempfile::tempdir().unwrap();
        let real = dir.path().join("real.json");
        fs::write(&real, b"{}").unwrap();
        let link = dir.path().join("settings.json");
        std::os::unix::fs::symlink(&real, &link).unwrap();
        let r = resolve(&link).unwrap();
        assert!(r.via_link);
        assert_eq!(r.file, fs::canonicalize(&real).unwrap());
        let dangling = dir.path().join("dangling.json");
        std::os::unix::fs::symlink(dir.path().join("absent"), &dangling).unwrap();
        assert!(resolve(&dangling).is_err());
        assert!(resolve(dir.path()).is_err());
    }
}
