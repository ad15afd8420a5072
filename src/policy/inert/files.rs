//! What the inert stage asks of the machine, and nothing else (issue 45).
//!
//! The stage proves a command only reads by looking at the files it would
//! read at decision time: what a path is, where its symbolic links lead, a
//! directory's entries, a few small configuration and ignore files. It asks
//! those questions through [`Files`] and never opens the filesystem itself,
//! so the stage is a function of the request, its analysis, the
//! configuration and the answers it got. The engine hands in the disk
//! (`crate::engine::Disk`); the answers are still the machine's at decision
//! time, which is the point: an allow must hold for the files that are
//! there.
//!
//! The interface is plain data: a [`Kind`], a [`Meta`], an [`Entry`] and
//! the `std::io::Error` the machine gave (its text is what a reason
//! quotes). Work stays bounded where the stage bounds it: a directory's
//! entries come one at a time, so a walk charges its budget before each,
//! and a read stops past its limit.

use std::ffi::OsString;
use std::io;
use std::path::{Path, PathBuf};

/// What a path is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    File,
    Dir,
    /// Only from [`Files::lstat`] and an [`Entry`]: [`Files::stat`] follows
    /// the link.
    Symlink,
    /// A socket, a device, a pipe.
    Other,
}

/// What the stage reads of a path's metadata.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Meta {
    pub kind: Kind,
    /// The size in bytes.
    pub len: u64,
    /// How many names (hard links) the file has.
    pub links: u64,
}

/// One entry of a directory, as the directory lists it.
#[derive(Debug)]
pub struct Entry {
    /// The entry's name in its directory (not lossily converted: the
    /// stage joins it to the directory to look further).
    pub name: OsString,
    /// What the entry is, not following a symbolic link; the error when
    /// the machine could not say.
    pub kind: io::Result<Kind>,
}

/// The entries of one directory, one at a time.
pub type Entries<'a> = Box<dyn Iterator<Item = io::Result<Entry>> + 'a>;

/// The machine's files as the inert stage sees them. Every question is
/// asked at decision time; every answer may be an error, which the stage
/// reads as "not proven" (or as "absent" where an absent file proves
/// nothing is there).
pub trait Files: Sync {
    /// What `path` is, not following a final symbolic link (`lstat`).
    fn lstat(&self, path: &Path) -> io::Result<Meta>;

    /// What `path` is, following symbolic links (`stat`).
    fn stat(&self, path: &Path) -> io::Result<Meta>;

    /// The path with every symbolic link, `.` and `..` resolved; an error
    /// when any component does not exist.
    fn canonical(&self, path: &Path) -> io::Result<PathBuf>;

    /// The entries of directory `dir` (without `.` and `..`), listed as
    /// the caller takes them, so it charges its budget before each.
    fn entries<'a>(&'a self, dir: &Path) -> io::Result<Entries<'a>>;

    /// The bytes of the file at `path` (following links): at most `limit`
    /// of them. A file longer than `limit` when read is an error: the
    /// stage never judges part of a file.
    fn read(&self, path: &Path, limit: u64) -> io::Result<Vec<u8>>;

    /// Whether something exists at `path`, following links (a dangling
    /// link does not): `std::path::Path::exists`.
    fn exists(&self, path: &Path) -> bool {
        self.stat(path).is_ok()
    }

    /// Whether `path` is a directory, following links.
    fn is_dir_at(&self, path: &Path) -> bool {
        self.stat(path).is_ok_and(|m| m.kind == Kind::Dir)
    }

    /// Whether `path` is a regular file, following links.
    fn is_file_at(&self, path: &Path) -> bool {
        self.stat(path).is_ok_and(|m| m.kind == Kind::File)
    }
}

/// A file's bytes as text, failing as `std::fs::read_to_string` does on
/// bytes that are not UTF-8 (its error text, which a reason quotes).
pub(super) fn text(bytes: Vec<u8>) -> io::Result<String> {
    String::from_utf8(bytes).map_err(|_| {
        io::Error::new(
            io::ErrorKind::InvalidData,
            "stream did not contain valid UTF-8",
        )
    })
}
