//! What a confined command may read: the Landlock grants, worked out from
//! the filesystem before the process restricts itself.
//!
//! Reading is denied by default. Directory listings are allowed everywhere
//! (a name is not content). File contents may be read, and programs run,
//! only in:
//!
//! - the system's trees ([`SYSTEM_TREES`]) and the directories of `PATH`
//!   that are not the home, an ancestor of it or a sensitive place;
//! - the project: the nearest ancestor of the working directory holding
//!   `.git` (else the working directory), unless that is the home or above
//!   it, then the working directory alone under the same rule — read, never
//!   run; a linked worktree's git directories too;
//! - git's own configuration in the home (`~/.gitconfig`,
//!   `~/.config/git/`).
//!
//! Landlock cannot deny a path inside a tree it allows, so a tree holding
//! something hidden is not granted whole: the walk (`Walker::walk`) grants each
//! entry beside the hidden ones instead, down to them. What is hidden: every
//! path [`crate::credentials::is_sensitive_path`] names (`.env*`,
//! keys, credential files and directories), vouch's own configuration and
//! state, `inert.deny_paths`, the home directory, and the system's secrets
//! ([`SYSTEM_SECRETS`]). The walk charges one unit per directory entry
//! before it reads the next, against `inert.confine_max_entries` shared by
//! all trees; a directory whose listing does not fit is not granted at all
//! (its files cannot be read), so running out of budget hides more, never
//! less. Symbolic links are never granted: reading through one is judged
//! where it points.

use std::ffi::OsStr;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use crate::credentials::is_sensitive_path;

/// Trees whose files any confined command may read and run.
pub const SYSTEM_TREES: &[&str] = &[
    "/usr",
    "/bin",
    "/sbin",
    "/lib",
    "/lib32",
    "/lib64",
    "/libx32",
    "/etc",
    "/nix/store",
    "/proc",
    "/sys",
];

/// Secrets inside [`SYSTEM_TREES`] that only root can read: hidden when
/// the command runs as root. (`/etc/ssh`'s host keys are found by name.)
pub const SYSTEM_SECRETS: &[&str] = &[
    "/etc/shadow",
    "/etc/gshadow",
    "/etc/shadow-",
    "/etc/gshadow-",
    "/etc/ssl/private",
    "/etc/security/opasswd",
];

/// Device files a confined command may read.
const READ_DEVICES: &[&str] = &["/dev/zero", "/dev/random", "/dev/urandom", "/dev/full"];

/// Device files it may also write: the bit bucket and the controlling
/// terminal; of `/dev/pts`, only the terminals its own standard streams
/// are ([`own_terminals`]), never another session's.
const WRITE_DEVICES: &[&str] = &["/dev/null", "/dev/tty"];

/// Files of the home a confined command may read: git's configuration
/// (without it `git` refuses to start).
const HOME_ALLOWED: &[&str] = &[".gitconfig", ".config/git"];

/// Deepest directory the walk descends into; deeper ones are not granted.
const MAX_DEPTH: usize = 128;

/// What one grant allows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Access {
    /// Read files and run programs (system trees, `PATH`).
    ReadRun,
    /// Read files (the project, git's configuration).
    Read,
    /// Read and write a device (`/dev/null`, the terminal).
    Device,
}

/// One grant: a file or a directory and everything beneath it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Grant {
    pub path: PathBuf,
    pub access: Access,
    /// Whether the path lies where the command's user can write (the
    /// project, the home, `PATH` directories outside the system's trees):
    /// then it is checked again when the rule is made, in case it was
    /// replaced by a link since the walk saw it.
    pub verify: bool,
}

/// What the plan is made from: the confined process's own view.
#[derive(Debug, Clone)]
pub struct Setting<'a> {
    pub home: Option<&'a Path>,
    pub cwd: &'a Path,
    /// `PATH` as the command will get it.
    pub path_var: Option<&'a OsStr>,
    /// vouch's own files and `inert.deny_paths`, absolute.
    pub hidden: Vec<PathBuf>,
    /// Whether the command runs as root (the system's secrets are then
    /// readable unless hidden).
    pub root: bool,
    /// Directory entries the walk may read, all trees together.
    pub max_entries: u64,
}

/// The grants, and whether the walk ran out of budget (and where).
#[derive(Debug, Clone, Default)]
pub struct Plan {
    pub grants: Vec<Grant>,
    /// The first tree whose walk ran out of budget: part of it is not
    /// readable.
    pub exhausted: Option<PathBuf>,
}

/// Works out the grants for `setting`.
pub fn plan(setting: &Setting<'_>) -> Plan {
    // Written without `.`, repeated or trailing `/`, as [`beneath`] needs.
    let normal = |p: &Path| p.components().collect::<PathBuf>();
    let hidden: Vec<PathBuf> = hidden_paths(setting).iter().map(|p| normal(p)).collect();
    let mut holes = hidden.clone();
    holes.extend(setting.home.map(normal));
    let mut walker = Walker {
        budget: setting.max_entries,
        hidden,
        holes,
        exhausted: None,
    };
    let mut grants = Vec::new();
    let mut granted: Vec<PathBuf> = Vec::new();
    for tree in SYSTEM_TREES {
        // `/bin` is often a link to `/usr/bin`: grant where it points, once.
        let Ok(path) = std::fs::canonicalize(tree) else {
            continue;
        };
        if path.is_dir() && !is_under_any(&path, &granted) {
            walker.grant_tree(&path, Access::ReadRun, &mut grants, false);
            granted.push(path);
        }
    }
    for device in READ_DEVICES {
        push_existing(&mut grants, device, Access::Read);
    }
    for device in WRITE_DEVICES {
        push_existing(&mut grants, device, Access::Device);
    }
    for terminal in own_terminals() {
        push_existing(&mut grants, &terminal, Access::Device);
    }
    if let Some(project) = project_tree(setting)
        && !is_under_any(&project, &granted)
    {
        walker.grant_tree(&project, Access::Read, &mut grants, true);
        for git_dir in linked_git_dirs(&project, setting.home) {
            if !is_under_any(&git_dir, &granted) && !git_dir.starts_with(&project) {
                walker.grant_tree(&git_dir, Access::Read, &mut grants, true);
            }
        }
        granted.push(project);
    }
    for dir in path_dirs(setting) {
        if !is_under_any(&dir, &granted) {
            walker.grant_tree(&dir, Access::ReadRun, &mut grants, true);
            granted.push(dir);
        }
    }
    if let Some(home) = setting.home {
        for name in HOME_ALLOWED {
            // Where it points when it is a link (dotfiles kept elsewhere),
            // judged there: a link to a credential stays hidden.
            if let Ok(path) = std::fs::canonicalize(home.join(name)) {
                walker.grant_tree(&path, Access::Read, &mut grants, true);
            }
        }
    }
    Plan {
        grants,
        exhausted: walker.exhausted,
    }
}

fn push_existing(grants: &mut Vec<Grant>, path: &str, access: Access) {
    let path = Path::new(path);
    if path.exists() {
        grants.push(Grant {
            path: path.to_path_buf(),
            access,
            verify: false,
        });
    }
}

/// The hidden paths known before the walk: vouch's, the configured ones
/// and, for root, the system's secrets and SSH host keys.
fn hidden_paths(setting: &Setting<'_>) -> Vec<PathBuf> {
    let mut hidden = setting.hidden.clone();
    if setting.root {
        hidden.extend(SYSTEM_SECRETS.iter().map(PathBuf::from));
        if let Ok(entries) = std::fs::read_dir("/etc/ssh") {
            for entry in entries.flatten().take(256) {
                let name = entry.file_name();
                let name = name.to_string_lossy();
                if name.starts_with("ssh_host_") && !name.ends_with(".pub") {
                    hidden.push(entry.path());
                }
            }
        }
    }
    hidden
}

/// `path` is `dir` or lies beneath it, for any `dir` of `dirs`.
fn is_under_any(path: &Path, dirs: &[PathBuf]) -> bool {
    dirs.iter().any(|d| path.starts_with(d))
}

/// `dir` is the home, `/`, or a directory that holds the home.
fn holds_home(dir: &Path, home: Option<&Path>) -> bool {
    dir == Path::new("/") || home.is_some_and(|h| h.starts_with(dir))
}

/// The project tree: the nearest ancestor of the working directory with
/// `.git`, else the working directory; the working directory when that
/// ancestor holds the home; nothing when the working directory does too.
fn project_tree(setting: &Setting<'_>) -> Option<PathBuf> {
    let cwd = std::fs::canonicalize(setting.cwd).ok()?;
    let root = cwd
        .ancestors()
        .take(MAX_DEPTH)
        .find(|dir| dir.join(".git").exists())
        .unwrap_or(&cwd)
        .to_path_buf();
    let home = setting.home;
    [root, cwd].into_iter().find(|dir| !holds_home(dir, home))
}

/// A linked worktree's or submodule's git directories: `.git` is a file
/// saying `gitdir: DIR`, and `DIR/commondir` names the repository's
/// shared one. Both are read by every git command run there.
fn linked_git_dirs(project: &Path, home: Option<&Path>) -> Vec<PathBuf> {
    let dot_git = project.join(".git");
    if !dot_git.is_file() {
        return Vec::new();
    }
    let Ok(text) = read_small(&dot_git) else {
        return Vec::new();
    };
    let Some(dir) = text.strip_prefix("gitdir:").map(str::trim) else {
        return Vec::new();
    };
    let Ok(git_dir) = std::fs::canonicalize(project.join(dir)) else {
        return Vec::new();
    };
    let mut out = vec![git_dir.clone()];
    if let Ok(common) = read_small(&git_dir.join("commondir"))
        && let Ok(common) = std::fs::canonicalize(git_dir.join(common.trim()))
    {
        out.push(common);
    }
    // What the project's own `.git` file names is the agent's to write: only
    // a directory that is a git directory (`HEAD` and `objects` in it) is
    // granted, never the home (`commondir` pointing at `$HOME`) or a tree
    // holding it.
    out.retain(|dir| {
        dir.join("HEAD").is_file() && dir.join("objects").is_dir() && !holds_home(dir, home)
    });
    out
}

/// The terminals under `/dev/pts` the process's standard streams are
/// attached to.
fn own_terminals() -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for fd in 0..3 {
        if let Ok(target) = std::fs::read_link(format!("/proc/self/fd/{fd}")) {
            let target = target.display().to_string();
            if target.starts_with("/dev/pts/") && !out.contains(&target) {
                out.push(target);
            }
        }
    }
    out
}

/// A file of at most 4 KiB, as text.
fn read_small(path: &Path) -> std::io::Result<String> {
    use std::io::Read;
    let mut text = String::new();
    crate::paths::open_regular(path)?
        .take(4096)
        .read_to_string(&mut text)?;
    Ok(text)
}

/// The directories of `PATH` a confined command may run programs from:
/// absolute, existing, and neither the home, `/`, a directory holding the
/// home, nor a sensitive place.
fn path_dirs(setting: &Setting<'_>) -> Vec<PathBuf> {
    let Some(var) = setting.path_var else {
        return Vec::new();
    };
    std::env::split_paths(var)
        .take(64)
        .filter(|p| p.is_absolute())
        .filter_map(|p| std::fs::canonicalize(p).ok())
        .filter(|p| p.is_dir())
        .filter(|p| !holds_home(p, setting.home))
        .filter(|p| !is_sensitive_path(&p.to_string_lossy()))
        .collect()
}

/// The walk: which entries of a tree may be granted.
struct Walker {
    budget: u64,
    /// Never granted, nor anything beneath.
    hidden: Vec<PathBuf>,
    /// `hidden` and the home: no grant covers them whole (a tree holding
    /// one is split around it), though the home's allowed files and the
    /// `PATH` directories in it are granted on their own.
    holes: Vec<PathBuf>,
    exhausted: Option<PathBuf>,
}

/// What a walked directory turned out to be.
enum Walked {
    /// Nothing hidden beneath it, and all of it was seen: grant it whole.
    Clean,
    /// Grant only these entries beneath it.
    Split(Vec<PathBuf>),
}

impl Walker {
    /// Grants `tree` with `access`: whole when nothing beneath it is
    /// hidden, else entry by entry. `search` says whether to look beneath it
    /// for sensitive names (the system trees hold none by name but the
    /// known ones, and are too large to walk on every command).
    fn grant_tree(&mut self, tree: &Path, access: Access, out: &mut Vec<Grant>, search: bool) {
        let is_dir = tree.is_dir();
        if self.is_hidden(tree, is_dir) {
            return;
        }
        let walked = if !is_dir {
            // A file (`~/.gitconfig`): nothing beneath it to search.
            Walked::Clean
        } else if search {
            self.walk(tree, 0)
        } else {
            self.split_for_known(tree)
        };
        match walked {
            Walked::Clean => out.push(Grant {
                path: tree.to_path_buf(),
                access,
                verify: search,
            }),
            Walked::Split(paths) => out.extend(paths.into_iter().map(|path| Grant {
                path,
                access,
                verify: search,
            })),
        }
    }

    /// Whether `path` (a file, or a directory when `dir`) must not be read:
    /// a hidden path or beneath one, or a sensitive name.
    fn is_hidden(&self, path: &Path, dir: bool) -> bool {
        if self.hidden.iter().any(|h| beneath(path, h)) {
            return true;
        }
        // A directory is sensitive for what it holds (`.ssh`, `.aws`), not
        // for its own name (`id_gen/` is not a key): ask about a child.
        let named = match dir {
            true => path.join("_"),
            false => path.to_path_buf(),
        };
        is_sensitive_path(&named.to_string_lossy())
    }

    /// Whether a hole lies strictly beneath `dir`.
    fn holds_hole(&self, dir: &Path) -> bool {
        self.holes
            .iter()
            .any(|h| h.as_os_str() != dir.as_os_str() && beneath(h, dir))
    }

    /// Whether `path` is a hole itself.
    fn is_hole(&self, path: &Path) -> bool {
        self.holes.iter().any(|h| h.as_os_str() == path.as_os_str())
    }

    /// A system tree: split only down to the known hidden paths inside it.
    fn split_for_known(&mut self, dir: &Path) -> Walked {
        if !self.holds_hole(dir) {
            return Walked::Clean;
        }
        let Some(entries) = self.list(dir) else {
            return Walked::Split(Vec::new());
        };
        let mut grants = Vec::new();
        for (path, kind) in entries {
            if self.is_hole(&path) || self.hidden.iter().any(|h| beneath(&path, h)) {
                continue;
            }
            match kind {
                Kind::Symlink => {}
                Kind::Dir => match self.split_for_known(&path) {
                    Walked::Clean => grants.push(path),
                    Walked::Split(inner) => grants.extend(inner),
                },
                Kind::Other => grants.push(path),
            }
        }
        Walked::Split(grants)
    }

    /// A tree searched entry by entry for sensitive names.
    fn walk(&mut self, dir: &Path, depth: usize) -> Walked {
        if depth >= MAX_DEPTH {
            self.exhausted.get_or_insert_with(|| dir.to_path_buf());
            return Walked::Split(Vec::new());
        }
        let Some(entries) = self.list(dir) else {
            return Walked::Split(Vec::new());
        };
        let mut clean = true;
        let mut grants = Vec::new();
        for (path, kind) in entries {
            if self.is_hole(&path) || self.is_hidden(&path, kind == Kind::Dir) {
                clean = false;
                continue;
            }
            match kind {
                // Read through, a link is judged where it points.
                Kind::Symlink => {}
                Kind::Dir => match self.walk(&path, depth + 1) {
                    Walked::Clean => grants.push(path),
                    Walked::Split(inner) => {
                        clean = false;
                        grants.extend(inner);
                    }
                },
                Kind::Other => grants.push(path),
            }
        }
        match clean {
            true => Walked::Clean,
            false => Walked::Split(grants),
        }
    }

    /// A directory's entries, each charged before it is read; `None` when
    /// it cannot be read or the budget runs out first.
    fn list(&mut self, dir: &Path) -> Option<Vec<(PathBuf, Kind)>> {
        let entries = std::fs::read_dir(dir).ok()?;
        let mut out = Vec::new();
        for entry in entries {
            if self.budget == 0 {
                self.exhausted.get_or_insert_with(|| dir.to_path_buf());
                return None;
            }
            self.budget -= 1;
            let Ok(entry) = entry else { return None };
            let Ok(file_type) = entry.file_type() else {
                return None;
            };
            let kind = if file_type.is_symlink() {
                Kind::Symlink
            } else if file_type.is_dir() {
                Kind::Dir
            } else {
                Kind::Other
            };
            out.push((entry.path(), kind));
        }
        Some(out)
    }
}

/// `Path::starts_with` for the walk's paths, compared as bytes: both are
/// absolute and normal (joined from canonical directories and entry names:
/// no `.`, `..`, repeated or trailing `/`), so a byte prefix that ends at a
/// `/` is a component prefix — without splitting either into components,
/// which is most of the walk's time on a large tree.
fn beneath(path: &Path, dir: &Path) -> bool {
    use std::os::unix::ffi::OsStrExt;
    let (path, dir) = (path.as_os_str().as_bytes(), dir.as_os_str().as_bytes());
    match path.strip_prefix(dir) {
        Some(rest) => rest.is_empty() || rest.starts_with(b"/") || dir.ends_with(b"/"),
        None => false,
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Dir,
    Symlink,
    Other,
}

/// Whether the process runs as root (by its own `/proc` entry's owner).
pub fn running_as_root() -> bool {
    std::fs::metadata("/proc/self").is_ok_and(|m| m.uid() == 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn setting<'a>(home: &'a Path, cwd: &'a Path) -> Setting<'a> {
        Setting {
            home: Some(home),
            cwd,
            path_var: None,
            hidden: Vec::new(),
            root: false,
            max_entries: 10_000,
        }
    }

    fn read_grants(plan: &Plan) -> Vec<PathBuf> {
        plan.grants
            .iter()
            .filter(|g| g.access == Access::Read && !g.path.starts_with("/dev"))
            .map(|g| g.path.clone())
            .collect()
    }

    #[test]
    fn a_project_is_granted_beside_its_secrets() {
        let tmp = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(tmp.path()).unwrap();
        let home = root.join("home");
        let project = root.join("project");
        std::fs::create_dir_all(project.join(".git")).unwrap();
        std::fs::create_dir_all(project.join("src/deep")).unwrap();
        std::fs::create_dir_all(&home).unwrap();
        std::fs::write(project.join(".env"), "K=v").unwrap();
        std::fs::write(project.join("README.md"), "r").unwrap();
        std::fs::write(project.join("src/deep/server.key"), "k").unwrap();
        std::fs::write(project.join("src/main.rs"), "m").unwrap();
        let cwd = project.join("src");
        let plan = plan(&setting(&home, &cwd));
        let read = read_grants(&plan);
        assert!(read.contains(&project.join("README.md")), "{read:?}");
        assert!(read.contains(&project.join(".git")), "{read:?}");
        assert!(read.contains(&project.join("src/main.rs")), "{read:?}");
        assert!(!read.iter().any(|p| p.ends_with(".env")), "{read:?}");
        assert!(!read.contains(&project), "{read:?}");
        assert!(!read.contains(&project.join("src")), "{read:?}");
        assert!(!read.iter().any(|p| p.ends_with("server.key")), "{read:?}");
        assert!(plan.exhausted.is_none());
    }

    #[test]
    fn a_clean_project_is_one_grant_and_the_home_is_never_one() {
        let tmp = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(tmp.path()).unwrap();
        let project = root.join("p");
        std::fs::create_dir_all(project.join("src")).unwrap();
        std::fs::write(project.join("src/a"), "a").unwrap();
        let plan1 = plan(&setting(&root.join("h"), &project));
        assert_eq!(read_grants(&plan1), vec![project.clone()]);
        // Working in the home, or above it: the home is not granted.
        let plan2 = plan(&setting(&project, &project));
        assert!(read_grants(&plan2).is_empty(), "{:?}", read_grants(&plan2));
        let plan3 = plan(&setting(&project.join("src"), &project));
        assert!(read_grants(&plan3).is_empty(), "{:?}", read_grants(&plan3));
    }

    #[test]
    fn running_out_of_budget_hides_what_was_not_seen() {
        let tmp = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(tmp.path()).unwrap();
        let project = root.join("p");
        for i in 0..20 {
            std::fs::create_dir_all(project.join(format!("d{i}"))).unwrap();
            std::fs::write(project.join(format!("d{i}/f")), "x").unwrap();
        }
        let home = root.join("h");
        let mut s = setting(&home, &project);
        s.max_entries = 10;
        let plan = plan(&s);
        assert!(plan.exhausted.is_some());
        let read = read_grants(&plan);
        assert!(!read.contains(&project), "{read:?}");
        assert!(read.len() < 20, "{read:?}");
    }

    #[test]
    fn gits_configuration_in_the_home_is_granted() {
        let tmp = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(tmp.path()).unwrap();
        let home = root.join("h");
        std::fs::create_dir_all(home.join(".config/git")).unwrap();
        std::fs::write(home.join(".gitconfig"), "[user]\n").unwrap();
        std::fs::write(home.join(".config/git/ignore"), "x\n").unwrap();
        std::fs::write(home.join(".bashrc"), "x\n").unwrap();
        let project = root.join("p");
        std::fs::create_dir_all(&project).unwrap();
        let read = read_grants(&plan(&setting(&home, &project)));
        assert!(read.contains(&home.join(".gitconfig")), "{read:?}");
        assert!(read.contains(&home.join(".config/git")), "{read:?}");
        assert!(!read.iter().any(|p| p.ends_with(".bashrc")), "{read:?}");
    }

    #[test]
    fn configured_and_vouch_paths_are_hidden() {
        let tmp = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(tmp.path()).unwrap();
        let project = root.join("p");
        std::fs::create_dir_all(project.join("secrets")).unwrap();
        std::fs::write(project.join("secrets/x"), "x").unwrap();
        std::fs::write(project.join("ok"), "x").unwrap();
        let home = root.join("h");
        let mut s = setting(&home, &project);
        s.hidden.push(project.join("secrets"));
        let read = read_grants(&plan(&s));
        assert_eq!(read, vec![project.join("ok")]);
    }
}
