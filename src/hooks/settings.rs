//! Where a harness keeps its user-level settings and how vouch's hook is
//! written into them: the description an adapter gives
//! ([`super::Harness::install`]) and `vouch install` and `vouch doctor`
//! read (`crate::install`, which re-exports these types). Data only, so
//! the adapters describe their settings without importing the installer
//! that reads them.

use std::path::PathBuf;

/// Where a harness keeps its user-level configuration directory.
#[derive(Debug, Clone, Copy)]
pub enum Dir {
    /// `$var` when it is set to an absolute path (Codex's `CODEX_HOME`),
    /// else `~/<home>`.
    Env {
        var: Option<&'static str>,
        home: &'static str,
    },
    /// `$var/<below>` when `var` is set to an absolute path (Gemini CLI's
    /// `GEMINI_CLI_HOME` stands in for the home directory; OpenCode's
    /// `XDG_CONFIG_HOME`), else `~/<home>`.
    EnvJoin {
        var: &'static str,
        below: &'static str,
        home: &'static str,
    },
}

/// How vouch's hook is written into the file.
#[derive(Debug, Clone, Copy)]
pub enum Format {
    /// A JSON settings file the harness's fragment merges into.
    Json(JsonRules),
    /// Codex's `config.toml`, with its `[hooks.state]` trusted hashes.
    CodexToml,
    /// A file of vouch's own (OpenCode's plugin): written whole, and
    /// recognised as vouch's by `marker`; another file at that name is
    /// never replaced.
    OwnFile { marker: &'static str },
}

/// What a merge into a JSON settings file needs to know of the harness
/// (`install::json::merge`).
#[derive(Debug, Clone, Copy)]
pub struct JsonRules {
    /// Settings that switch off every hook when `true` (Claude Code's and
    /// Qwen Code's `disableAllHooks`): install refuses while one is on.
    pub off_switches: &'static [&'static [&'static str]],
    /// Settings install turns on (Qwen Code's
    /// `security.folderTrust.enabled`); uninstall restores them.
    pub force_true: &'static [&'static [&'static str]],
}

/// A harness's user-level settings, as install writes them.
#[derive(Debug, Clone, Copy)]
pub struct Install {
    pub dir: Dir,
    /// The file below `dir`.
    pub file: &'static str,
    pub format: Format,
}

/// The settings cannot be found: there is no absolute home directory.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("cannot find the settings: `HOME` is unset or not absolute")]
pub struct NoHome;

impl Install {
    /// The configuration directory, from `env` (the harness's own variable,
    /// then `HOME`).
    pub fn dir(&self, env: &dyn Fn(&str) -> Option<String>) -> Result<PathBuf, NoHome> {
        let absolute = |name: &str| {
            env(name)
                .filter(|v| !v.is_empty())
                .map(PathBuf::from)
                .filter(|p| p.is_absolute())
        };
        let home = || absolute("HOME").ok_or(NoHome);
        match self.dir {
            Dir::Env { var, home: rel } => match var.and_then(absolute) {
                Some(dir) => Ok(dir),
                None => Ok(home()?.join(rel)),
            },
            Dir::EnvJoin {
                var,
                below,
                home: rel,
            } => match absolute(var) {
                Some(dir) => Ok(dir.join(below)),
                None => Ok(home()?.join(rel)),
            },
        }
    }

    /// The settings file.
    pub fn path(&self, env: &dyn Fn(&str) -> Option<String>) -> Result<PathBuf, NoHome> {
        Ok(self.dir(env)?.join(self.file))
    }
}
