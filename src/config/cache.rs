//! A cache of per-project effective configurations.
//!
//! Folding a project overlay means reading and parsing a file and compiling
//! its routing regexes (hundreds of microseconds), far over the hot-path
//! budget, while the file almost never changes. The cache keeps the folded
//! result per overlay file and re-validates it on every lookup with one
//! `stat`: any change of size, modification or change time, or inode reloads
//! it. A stale entry can never be looser than the trusted configuration,
//! since every cached result came out of the same tighten-only fold.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::SystemTime;

use super::layers::LoadedConfig;
use super::tighten::{PROJECT_OVERLAY, ProjectConfig, overlay_at, project_root};

/// Identity of an overlay file as `stat` sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Stamp {
    len: u64,
    modified: Option<SystemTime>,
    #[cfg(unix)]
    unix: (u64, u64, i64, i64),
}

impl Stamp {
    fn of(meta: &std::fs::Metadata) -> Stamp {
        #[cfg(unix)]
        use std::os::unix::fs::MetadataExt;
        Stamp {
            len: meta.len(),
            modified: meta.modified().ok(),
            #[cfg(unix)]
            unix: (meta.dev(), meta.ino(), meta.ctime(), meta.ctime_nsec()),
        }
    }
}

#[derive(Debug)]
struct Entry {
    trusted: Arc<super::Config>,
    stamp: Stamp,
    project: ProjectConfig,
}

/// Effective configurations by project, bounded to `capacity` overlay files.
#[derive(Debug)]
pub struct ProjectCache {
    capacity: usize,
    entries: Mutex<HashMap<PathBuf, Entry>>,
}

impl ProjectCache {
    pub fn new(capacity: usize) -> ProjectCache {
        ProjectCache {
            capacity: capacity.max(1),
            entries: Mutex::new(HashMap::new()),
        }
    }

    /// Same answer as [`super::for_project`], reusing a fold while the
    /// overlay file and the trusted configuration are unchanged.
    pub fn for_project(&self, trusted: &LoadedConfig, cwd: Option<&Path>) -> ProjectConfig {
        let Some(cwd) = cwd else {
            return super::for_project(trusted, None);
        };
        let root = project_root(cwd);
        let file = root.join(PROJECT_OVERLAY);
        let stamp = match std::fs::metadata(&file) {
            Ok(meta) if meta.is_file() => Stamp::of(&meta),
            // Absent (the common case): nothing to fold, nothing to cache,
            // and no second look at the file.
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return ProjectConfig {
                    root: Some(root),
                    overlay: None,
                    effective: Ok(trusted.clone()),
                };
            }
            // Anything else (a directory, a permission error) is reported by
            // the uncached path, which fails closed.
            Ok(_) | Err(_) => return overlay_at(trusted, root),
        };
        if let Some(entry) = self.lock().get(&file)
            && entry.stamp == stamp
            && Arc::ptr_eq(&entry.trusted, &trusted.config)
        {
            return entry.project.clone();
        }
        // Folded outside the lock; a concurrent fold of the same file just
        // stores the same result twice.
        let project = overlay_at(trusted, root);
        let mut entries = self.lock();
        if entries.len() >= self.capacity && !entries.contains_key(&file) {
            // Rare (more projects than capacity): start over rather than
            // track recency on the hot path.
            entries.clear();
        }
        entries.insert(
            file,
            Entry {
                trusted: Arc::clone(&trusted.config),
                stamp,
                project: project.clone(),
            },
        );
        project
    }

    fn lock(&self) -> MutexGuard<'_, HashMap<PathBuf, Entry>> {
        // A panic while holding the lock cannot leave an entry half-written
        // (insert is one call), so a poisoned map is still usable.
        self.entries
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}
