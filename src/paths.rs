//! Where vouch keeps its files (design §2).
//!
//! `VOUCH_HOME`, when set, holds everything: the trusted user overlay
//! (`config.toml`) and `state/`. Otherwise the XDG base directories decide:
//! `$XDG_CONFIG_HOME/vouch/config.toml` and `$XDG_STATE_HOME/vouch/`, with the
//! spec's defaults under `$HOME`. The environment is read through an injected
//! lookup so tests never see the real home. The same locations feed the
//! `trust-boundary` hard deny: an agent must never be able to rewrite the
//! files that decide what it may do.

use std::path::{Path, PathBuf};

/// Opens `path` for reading when it is a regular file, without ever
/// waiting: the agent can make any file vouch reads in its world (the
/// project's configuration, a repository's git configuration, a
/// transcript) a FIFO, and a plain open of one for reading blocks until a
/// writer comes. The open does not block, and what the handle is — not
/// what the path was a moment before — decides; anything but a regular
/// file is an error ("not a regular file").
pub fn open_regular(path: &Path) -> std::io::Result<std::fs::File> {
    use std::os::unix::fs::OpenOptionsExt as _;
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_CLOEXEC)
        .open(path)?;
    if !file.metadata()?.is_file() {
        return Err(std::io::Error::other("not a regular file"));
    }
    Ok(file)
}

/// The running executable, looked up once: it cannot change while the
/// process runs, and both the hard denies and the project trust check ask
/// for it on every request.
pub fn current_exe() -> Option<&'static Path> {
    static EXE: std::sync::OnceLock<Option<PathBuf>> = std::sync::OnceLock::new();
    EXE.get_or_init(|| std::env::current_exe().ok()).as_deref()
}

/// Why vouch's file locations could not be determined.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PathsError {
    #[error("`VOUCH_HOME` must be an absolute path, got `{0}`")]
    RelativeVouchHome(String),
    #[error(
        "cannot locate vouch's files: `VOUCH_HOME` is unset and `HOME` is unset or not absolute"
    )]
    NoHome,
}

/// vouch's file locations for this process.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Paths {
    /// `VOUCH_HOME` when set (absolute).
    pub vouch_home: Option<PathBuf>,
    /// The trusted user overlay; a missing file is fine.
    pub user_config: PathBuf,
    /// The state directory (databases, key, tokens).
    pub state_dir: PathBuf,
    /// The service's own `HOME`, when absolute.
    pub home: Option<PathBuf>,
}

/// An absolute, non-empty path from an environment value; anything else is
/// ignored, as the XDG base directory spec requires for relative values.
fn absolute(value: Option<String>) -> Option<PathBuf> {
    value
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .filter(|p| p.is_absolute())
}

impl Paths {
    /// Reads the process environment.
    pub fn from_env() -> Result<Paths, PathsError> {
        Paths::from_lookup(|name| std::env::var(name).ok())
    }

    /// Resolves the locations from an injected environment lookup.
    pub fn from_lookup(env: impl Fn(&str) -> Option<String>) -> Result<Paths, PathsError> {
        let home = absolute(env("HOME"));
        if let Some(raw) = env("VOUCH_HOME").filter(|v| !v.is_empty()) {
            let vouch_home = PathBuf::from(&raw);
            // A relative VOUCH_HOME would move with the working directory, so
            // two processes could disagree about where state lives.
            if !vouch_home.is_absolute() {
                return Err(PathsError::RelativeVouchHome(raw));
            }
            return Ok(Paths {
                user_config: vouch_home.join("config.toml"),
                state_dir: vouch_home.join("state"),
                vouch_home: Some(vouch_home),
                home,
            });
        }
        let config_base = absolute(env("XDG_CONFIG_HOME"))
            .or_else(|| home.as_ref().map(|h| h.join(".config")))
            .ok_or(PathsError::NoHome)?;
        let state_base = absolute(env("XDG_STATE_HOME"))
            .or_else(|| home.as_ref().map(|h| h.join(".local").join("state")))
            .ok_or(PathsError::NoHome)?;
        Ok(Paths {
            vouch_home: None,
            user_config: config_base.join("vouch").join("config.toml"),
            state_dir: state_base.join("vouch"),
            home,
        })
    }

    /// The directory holding the user overlay.
    pub fn config_dir(&self) -> &Path {
        self.user_config.parent().unwrap_or(&self.user_config)
    }

    /// vouch's own files that an agent must never write (and whose tokens it
    /// must never read): the active config file and its directory, the state
    /// directory, `VOUCH_HOME`, the default locations under the request's
    /// `home` and under the service's `HOME`, and the running executable.
    ///
    /// Each entry is a file or directory; anything at or below it is
    /// protected. The defaults are listed even when another location is
    /// active, because a later run without `VOUCH_HOME` (or with different
    /// XDG variables) would trust them.
    pub fn protected_paths(&self, request_home: &str) -> Vec<String> {
        self.protected().for_home(request_home)
    }

    /// [`Paths::protected_paths`] with everything but the request's home
    /// worked out once (the service answers many requests from one `Paths`).
    pub fn protected(&self) -> ProtectedPaths {
        let lossy = |p: &Path| p.to_string_lossy().into_owned();
        let mut before = vec![
            lossy(&self.user_config),
            lossy(self.config_dir()),
            lossy(&self.state_dir),
        ];
        if let Some(vouch_home) = &self.vouch_home {
            before.push(lossy(vouch_home));
        }
        let mut after = Vec::new();
        if let Some(home) = self.home.as_deref().filter(|h| h.is_absolute()) {
            after.extend(home_defaults(home).iter().map(|p| lossy(p)));
        }
        if let Some(exe) = current_exe() {
            after.push(lossy(exe));
        }
        let state_dir = self.state_dir.clone();
        let mut config_only = vec![lossy(&self.user_config), lossy(self.config_dir())];
        if let Some(home) = self.home.as_deref().filter(|h| h.is_absolute()) {
            let [config, _] = home_defaults(home);
            config_only.push(lossy(&config));
        }
        config_only.retain(|c| !state_dir.starts_with(c));
        ProtectedPaths {
            before,
            after,
            config_only,
            state_dir,
        }
    }
}

/// The default config and state locations under a home directory.
fn home_defaults(home: &Path) -> [PathBuf; 2] {
    [
        home.join(".config").join("vouch"),
        home.join(".local").join("state").join("vouch"),
    ]
}

/// vouch's protected files, in the order [`Paths::protected_paths`] lists
/// them, around the place where the request's home goes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProtectedPaths {
    before: Vec<String>,
    after: Vec<String>,
    /// The configuration locations that hold no tokens or key: the user
    /// configuration file and directory and the default configuration
    /// directory under the service's `HOME`, each unless the state
    /// directory lies inside it (`VOUCH_HOME` holds both).
    config_only: Vec<String>,
    state_dir: PathBuf,
}

impl ProtectedPaths {
    /// The list for a request whose home is `request_home`, without
    /// duplicates.
    pub fn for_home(&self, request_home: &str) -> Vec<String> {
        let home = Path::new(request_home);
        let mut strings: Vec<String> = Vec::with_capacity(self.before.len() + self.after.len() + 2);
        let mut add = |s: String| {
            if !strings.contains(&s) {
                strings.push(s);
            }
        };
        self.before.iter().cloned().for_each(&mut add);
        if home.is_absolute() {
            home_defaults(home)
                .iter()
                .map(|p| p.to_string_lossy().into_owned())
                .for_each(&mut add);
        }
        self.after.iter().cloned().for_each(&mut add);
        strings
    }

    /// The entries of [`ProtectedPaths::for_home`] that hold configuration
    /// only: reading them reads none of vouch's tokens or key.
    pub fn config_only_for_home(&self, request_home: &str) -> Vec<String> {
        let mut out = self.config_only.clone();
        let home = Path::new(request_home);
        if home.is_absolute() {
            let [config, _] = home_defaults(home);
            if !self.state_dir.starts_with(&config) {
                let config = config.to_string_lossy().into_owned();
                if !out.contains(&config) {
                    out.push(config);
                }
            }
        }
        out
    }
}

/// vouch's locations under `vouch hook`: `--home` stands where `VOUCH_HOME`
/// would, else the defaults under `$HOME`; the XDG variables are not read.
pub fn hook_paths(home: Option<String>, user_home: Option<String>) -> Result<Paths, String> {
    Paths::from_lookup(|name| match name {
        "VOUCH_HOME" => home.clone(),
        "HOME" => user_home.clone(),
        _ => None,
    })
    .map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn lookup(vars: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
        let map: HashMap<String, String> = vars
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect();
        move |name| map.get(name).cloned()
    }

    #[test]
    fn vouch_home_holds_everything() {
        let p = Paths::from_lookup(lookup(&[
            ("VOUCH_HOME", "/tmp/vh"),
            ("HOME", "/home/dev"),
            ("XDG_CONFIG_HOME", "/xdg/config"),
        ]))
        .unwrap();
        assert_eq!(p.vouch_home.as_deref(), Some(Path::new("/tmp/vh")));
        assert_eq!(p.user_config, PathBuf::from("/tmp/vh/config.toml"));
        assert_eq!(p.state_dir, PathBuf::from("/tmp/vh/state"));
        assert_eq!(p.home.as_deref(), Some(Path::new("/home/dev")));
    }

    #[test]
    fn configuration_without_the_state_directory_is_config_only() {
        let p = Paths::from_lookup(lookup(&[("HOME", "/srv/svc")])).unwrap();
        let only = p.protected().config_only_for_home("/home/dev");
        for dir in [
            "/srv/svc/.config/vouch/config.toml",
            "/srv/svc/.config/vouch",
            "/home/dev/.config/vouch",
        ] {
            assert!(only.contains(&dir.to_owned()), "{dir}: {only:?}");
        }
        assert!(!only.iter().any(|c| c.contains(".local/state")));
        // `VOUCH_HOME` holds the state directory: only its file is
        // configuration alone.
        let p =
            Paths::from_lookup(lookup(&[("VOUCH_HOME", "/vh"), ("HOME", "/home/dev")])).unwrap();
        let only = p.protected().config_only_for_home("/home/dev");
        assert!(only.contains(&"/vh/config.toml".to_owned()), "{only:?}");
        assert!(!only.contains(&"/vh".to_owned()), "{only:?}");
        // `XDG_STATE_HOME=~/.config`: the state directory is the
        // configuration directory.
        let p = Paths::from_lookup(lookup(&[
            ("HOME", "/home/dev"),
            ("XDG_STATE_HOME", "/home/dev/.config"),
        ]))
        .unwrap();
        let only = p.protected().config_only_for_home("/home/dev");
        assert!(
            !only.contains(&"/home/dev/.config/vouch".to_owned()),
            "{only:?}"
        );
    }

    #[test]
    fn xdg_then_home_defaults() {
        let p = Paths::from_lookup(lookup(&[
            ("HOME", "/home/dev"),
            ("XDG_CONFIG_HOME", "/xdg/config"),
            ("XDG_STATE_HOME", "/xdg/state"),
        ]))
        .unwrap();
        assert_eq!(
            p.user_config,
            PathBuf::from("/xdg/config/vouch/config.toml")
        );
        assert_eq!(p.state_dir, PathBuf::from("/xdg/state/vouch"));

        let p = Paths::from_lookup(lookup(&[("HOME", "/home/dev")])).unwrap();
        assert_eq!(
            p.user_config,
            PathBuf::from("/home/dev/.config/vouch/config.toml")
        );
        assert_eq!(p.state_dir, PathBuf::from("/home/dev/.local/state/vouch"));
    }

    #[test]
    fn relative_xdg_values_are_ignored() {
        let p = Paths::from_lookup(lookup(&[
            ("HOME", "/home/dev"),
            ("XDG_CONFIG_HOME", "rel/config"),
            ("XDG_STATE_HOME", ""),
        ]))
        .unwrap();
        assert_eq!(
            p.user_config,
            PathBuf::from("/home/dev/.config/vouch/config.toml")
        );
        assert_eq!(p.state_dir, PathBuf::from("/home/dev/.local/state/vouch"));
    }

    #[test]
    fn no_home_is_an_error_unless_everything_is_given() {
        assert_eq!(Paths::from_lookup(lookup(&[])), Err(PathsError::NoHome));
        assert_eq!(
            Paths::from_lookup(lookup(&[("HOME", "relative")])),
            Err(PathsError::NoHome)
        );
        assert!(Paths::from_lookup(lookup(&[("VOUCH_HOME", "/vh")])).is_ok());
        let p = Paths::from_lookup(lookup(&[
            ("XDG_CONFIG_HOME", "/c"),
            ("XDG_STATE_HOME", "/s"),
        ]))
        .unwrap();
        assert_eq!(p.state_dir, PathBuf::from("/s/vouch"));
        assert_eq!(p.home, None);
    }

    #[test]
    fn relative_vouch_home_is_an_error() {
        assert_eq!(
            Paths::from_lookup(lookup(&[("VOUCH_HOME", "vh"), ("HOME", "/h")])),
            Err(PathsError::RelativeVouchHome("vh".into()))
        );
    }

    #[test]
    fn protected_paths_cover_active_and_default_locations() {
        let p =
            Paths::from_lookup(lookup(&[("VOUCH_HOME", "/vh"), ("HOME", "/home/svc")])).unwrap();
        let protected = p.protected_paths("/home/dev");
        for expected in [
            "/vh/config.toml",
            "/vh",
            "/vh/state",
            "/home/dev/.config/vouch",
            "/home/dev/.local/state/vouch",
            "/home/svc/.config/vouch",
            "/home/svc/.local/state/vouch",
        ] {
            assert!(
                protected.iter().any(|p| p == expected),
                "{expected} missing from {protected:?}"
            );
        }
        let exe = std::env::current_exe().unwrap();
        assert!(protected.contains(&exe.to_string_lossy().into_owned()));
        // No duplicates, and a relative request home adds nothing.
        let mut sorted = protected.clone();
        sorted.sort();
        sorted.dedup();
        assert_eq!(sorted.len(), protected.len());
        assert!(
            !p.protected_paths("rel")
                .iter()
                .any(|p| p.starts_with("rel"))
        );
    }
}
