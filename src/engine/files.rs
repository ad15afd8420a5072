//! The disk: the machine's filesystem answering the inert stage's
//! questions ([`crate::policy::inert::Files`]). The stage never opens a
//! file itself; the engine hands it this.

use std::io::{self, Read as _};
use std::path::{Path, PathBuf};

use crate::policy::inert::{Entries, Entry, Files, Kind, Meta};

/// The local filesystem, asked at decision time.
#[derive(Debug, Clone, Copy, Default)]
pub struct Disk;

impl Files for Disk {
    fn lstat(&self, path: &Path) -> io::Result<Meta> {
        std::fs::symlink_metadata(path).map(|m| meta(&m))
    }

    fn stat(&self, path: &Path) -> io::Result<Meta> {
        std::fs::metadata(path).map(|m| meta(&m))
    }

    fn canonical(&self, path: &Path) -> io::Result<PathBuf> {
        std::fs::canonicalize(path)
    }

    fn entries<'a>(&'a self, dir: &Path) -> io::Result<Entries<'a>> {
        let entries = std::fs::read_dir(dir)?;
        Ok(Box::new(entries.map(|entry| {
            entry.map(|entry| Entry {
                name: entry.file_name(),
                // From the listing where the filesystem gives it (no
                // `lstat` per entry), as `DirEntry::file_type` does.
                kind: entry.file_type().map(|t| kind(&t)),
            })
        })))
    }

    fn read(&self, path: &Path, limit: u64) -> io::Result<Vec<u8>> {
        // Never a FIFO the agent made of a file it names (`.git/config`):
        // see `open_regular`.
        let file = crate::paths::open_regular(path)?;
        let mut bytes = Vec::new();
        // One byte past the limit tells a file that grew since it was
        // looked at from one that is exactly `limit` long.
        file.take(limit.saturating_add(1)).read_to_end(&mut bytes)?;
        if u64::try_from(bytes.len()).map_or(true, |n| n > limit) {
            return Err(io::Error::other(format!(
                "longer than the {limit} bytes read"
            )));
        }
        Ok(bytes)
    }
}

fn meta(m: &std::fs::Metadata) -> Meta {
    use std::os::unix::fs::MetadataExt as _;
    Meta {
        kind: kind(&m.file_type()),
        len: m.len(),
        links: m.nlink(),
    }
}

fn kind(t: &std::fs::FileType) -> Kind {
    if t.is_file() {
        Kind::File
    } else if t.is_dir() {
        Kind::Dir
    } else if t.is_symlink() {
        Kind::Symlink
    } else {
        Kind::Other
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_fifo_is_refused_without_waiting_for_a_writer() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("config");
        let made = std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap();
        assert!(made.success());
        // Were the open blocking, this test would hang here.
        let err = Disk.read(&fifo, 1024).unwrap_err();
        assert!(err.to_string().contains("not a regular file"), "{err}");
    }

    #[test]
    fn a_regular_file_is_read_within_its_limit() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("f");
        std::fs::write(&file, b"12345").unwrap();
        assert_eq!(Disk.read(&file, 5).unwrap(), b"12345");
        assert!(Disk.read(&file, 4).is_err());
        assert!(Disk.read(dir.path(), 4).is_err(), "a directory is not read");
    }
}
