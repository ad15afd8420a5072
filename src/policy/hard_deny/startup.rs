//! Shell code a command leaves to run later: text it writes into a shell
//! startup file (`~/.bashrc`, `~/.profile`, `/etc/profile.d/*.sh`,
//! `/etc/environment`) and the values of the aliases it defines and uses. Every
//! later shell runs that text, so it is judged as bash like the command
//! itself: `echo 'export NODE_TLS_REJECT_UNAUTHORIZED=0' >> ~/.bashrc` and
//! `alias curl='curl -k'` weaken TLS for what comes after, `echo 'rm -rf
//! ~' >> ~/.bashrc` wipes home at the next login.

use crate::shell::spec::Role;

use super::facts::Facts;
use super::paths::Target;

/// Startup files bash, zsh, ksh and sh read, by name in home.
const HOME_STARTUP: &[&str] = &[
    ".bashrc",
    ".bash_profile",
    ".bash_login",
    ".bash_logout",
    ".profile",
    ".zshrc",
    ".zshenv",
    ".zprofile",
    ".zlogin",
    ".kshrc",
    ".mkshrc",
    ".envrc",
];

/// System-wide startup files.
const SYSTEM_STARTUP: &[&str] = &[
    "/etc/profile",
    "/etc/bash.bashrc",
    "/etc/bashrc",
    "/etc/zshrc",
    "/etc/zsh/zshrc",
    "/etc/zsh/zshenv",
    "/etc/zsh/zprofile",
    "/etc/environment",
];

/// How a startup file's text is read: as a script, or as `NAME=value`
/// lines (`/etc/environment`, read by PAM for every session).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Script,
    Environment,
}

fn startup_file(target: &Target) -> Option<Kind> {
    let Target::Exact(path) = target else {
        return None;
    };
    if path == "/etc/environment" {
        return Some(Kind::Environment);
    }
    let name = path.rsplit('/').next().unwrap_or("");
    let system = SYSTEM_STARTUP.contains(&path.as_str())
        || path
            .strip_prefix("/etc/profile.d/")
            .is_some_and(|n| !n.contains('/'));
    (system || HOME_STARTUP.contains(&name)).then_some(Kind::Script)
}

/// The scripts command line `f` leaves for later shells, at most 16.
pub(super) fn later_scripts(f: &Facts<'_>) -> Vec<String> {
    let mut out = Vec::new();
    for (i, cmd) in f.commands() {
        // An alias runs only where its name is later a command: in a later
        // line of this shell (with `expand_aliases`) or in a startup file.
        if cmd.name() == Some("alias") {
            for a in cmd.args() {
                if let Some((name, value)) = a.as_known().and_then(|t| t.split_once('='))
                    && !value.trim().is_empty()
                    && f.commands().any(|(k, c)| k > i && c.name() == Some(name))
                {
                    out.push(value.to_owned());
                }
            }
        }
        let kind = f
            .touches(i)
            .iter()
            .filter(|t| t.role == Role::Write)
            .flat_map(|t| t.targets.iter())
            .find_map(startup_file);
        let (Some(kind), Some(text)) = (kind, f.written_text(i)) else {
            continue;
        };
        match kind {
            Kind::Script => {
                // Every later interactive shell expands the aliases the
                // file defines.
                out.extend(alias_values(&text));
                out.push(text);
            }
            Kind::Environment => out.extend(
                text.lines()
                    .map(str::trim)
                    .filter(|l| l.contains('=') && !l.starts_with('#'))
                    .map(|l| format!("export {l}")),
            ),
        }
    }
    out.truncate(16);
    out
}

/// The values of the `alias NAME=VALUE` lines of a startup file's text,
/// their quotes taken off.
fn alias_values(text: &str) -> Vec<String> {
    text.lines()
        .filter_map(|l| l.trim().strip_prefix("alias "))
        .filter_map(|l| l.split_once('=').map(|(_, v)| v.trim()))
        .map(|v| {
            v.strip_prefix('\'')
                .and_then(|v| v.strip_suffix('\''))
                .or_else(|| v.strip_prefix('"').and_then(|v| v.strip_suffix('"')))
                .unwrap_or(v)
                .to_owned()
        })
        .filter(|v| !v.is_empty())
        .collect()
}
