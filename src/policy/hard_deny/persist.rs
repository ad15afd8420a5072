//! `access-persistence`: writes that add SSH or sudo authorization — an
//! `authorized_keys` file inside a `.ssh` directory, `/etc/sudoers` or a
//! file in `/etc/sudoers.d` — and commands that grant administrator groups.
//! A pattern counts only when it can name such a file: `touch *` in a
//! project cannot, `cp k ~/.ssh/*` can.

use crate::shell::Arg;
use crate::shell::spec::Role;

use super::facts::Facts;
use super::paths::{Target, ends_with, is_within};
use super::{Category, HardDeny, deny};

/// What authorization a written target adds, with its rule id.
pub(super) fn persistence_target(target: &Target) -> Option<(&'static str, &'static str)> {
    if ends_with(target, &[".ssh", "authorized_keys"])
        || ends_with(target, &[".ssh", "authorized_keys2"])
    {
        return Some((
            "access-persistence/authorized-keys",
            "SSH `authorized_keys`",
        ));
    }
    let names = |file: &str| match target {
        Target::Exact(p) => p == file,
        Target::Pattern(t) => crate::shell::glob::path_may_match(t, file),
        Target::Partial(_) => false,
    };
    let below = |dir: &str| match target {
        Target::Exact(p) => is_within(p, dir),
        Target::Pattern(t) => crate::shell::glob::may_reach(t, dir),
        Target::Partial(_) => false,
    };
    if names("/etc/sudoers") || below("/etc/sudoers.d") {
        return Some(("access-persistence/sudoers", "sudo rules"));
    }
    if names("/etc/ssh/sshd_config") || below("/etc/ssh/sshd_config.d") {
        return Some((
            "access-persistence/sshd-config",
            "SSH server authorization settings",
        ));
    }
    if ["/etc/passwd", "/etc/shadow", "/etc/group", "/etc/gshadow"]
        .iter()
        .any(|f| names(f))
    {
        return Some(("access-persistence/accounts", "accounts or groups"));
    }
    None
}

/// A directory receiving files of unknown names where any name adds
/// authorization: a `.ssh` directory (`wget -P ~/.ssh`, `tar -C ~/.ssh -x`,
/// `git clone … ~/.ssh`), `/etc/sudoers.d`, `/etc/ssh/sshd_config.d`.
fn persistence_dir(target: &Target) -> Option<(&'static str, &'static str)> {
    if ends_with(target, &[".ssh"]) {
        return Some((
            "access-persistence/authorized-keys",
            "which can add SSH `authorized_keys`",
        ));
    }
    if ends_with(target, &["etc", "sudoers.d"]) {
        return Some(("access-persistence/sudoers", "each of which is a sudo rule"));
    }
    if ends_with(target, &["etc", "ssh", "sshd_config.d"]) {
        return Some((
            "access-persistence/sshd-config",
            "each of which configures the SSH server",
        ));
    }
    None
}

/// `chmod u+s`, `chmod 4755`: a set-user-id (or set-group-id) program.
fn setuid_mode(mode: &str) -> bool {
    let symbolic = mode.split(',').any(|clause| {
        clause
            .split_once(['+', '='])
            .is_some_and(|(_, perms)| perms.contains('s'))
    });
    let octal = mode.len() == 4
        && mode.chars().all(|c| c.is_digit(8))
        && mode
            .chars()
            .next()
            .is_some_and(|c| matches!(c, '2' | '4' | '6' | '7'));
    symbolic || octal
}

const ADMIN_GROUPS: &[&str] = &["sudo", "wheel", "admin", "root", "adm"];

pub(super) fn check(f: &mut Facts<'_>) -> Option<HardDeny> {
    for i in 0..f.analysis.commands.len() {
        for touch in f.touches(i).iter() {
            if touch.role == Role::WriteInto {
                for target in &touch.targets {
                    if let Some((rule, what)) = persistence_dir(target) {
                        return deny(
                            Category::AccessPersistence,
                            rule,
                            format!(
                                "writes files of unknown names into `{}`, {what}",
                                target.display()
                            ),
                        );
                    }
                }
            }
            if !matches!(touch.role, Role::Write) {
                continue;
            }
            for target in &touch.targets {
                if let Some((rule, what)) = persistence_target(target) {
                    return deny(
                        Category::AccessPersistence,
                        rule,
                        format!("writes `{}`, adding {what}", target.display()),
                    );
                }
            }
        }
        if let Some(d) = admin_group(f, i) {
            return Some(d);
        }
    }
    None
}

fn known_words(args: &[Arg]) -> Vec<&str> {
    args.iter().map(|a| a.as_known().unwrap_or("")).collect()
}

fn names_admin(v: &str) -> bool {
    v.split(',').any(|g| ADMIN_GROUPS.contains(&g))
}

/// `usermod -aG sudo`, `gpasswd -a u sudo`, `adduser u sudo`, a
/// non-interactive `visudo`.
fn admin_group(f: &Facts<'_>, i: usize) -> Option<HardDeny> {
    let cmd = f.command(i)?;
    let name = cmd.name()?;
    // Long options as getopt_long reads them (`--app --gr` is `--append
    // --groups`).
    let canonical = crate::shell::effects::canonical_args_of(cmd);
    let words = known_words(canonical.as_deref().unwrap_or(cmd.args()));
    let grants = match name {
        "usermod" => words.iter().enumerate().any(|(k, w)| {
            let group_flag = w.starts_with('-') && !w.starts_with("--") && w.contains('G');
            (group_flag
                && (w.ends_with('G') && words.get(k + 1).is_some_and(|g| names_admin(g))
                    || w.split_once('G')
                        .is_some_and(|(_, g)| !g.is_empty() && names_admin(g))))
                || w.strip_prefix("--groups=").is_some_and(names_admin)
                || (*w == "--groups" && words.get(k + 1).is_some_and(|g| names_admin(g)))
        }),
        "gpasswd" => {
            words
                .iter()
                .any(|w| matches!(*w, "-a" | "--add" | "-M" | "--members"))
                && words.iter().any(|w| ADMIN_GROUPS.contains(w))
        }
        "adduser" | "addgroup" if !words.iter().any(|w| w.starts_with('-')) => {
            adds_to_admin_group(&words)
        }
        "addgroup" => adds_to_admin_group(&words),
        "visudo" => cmd
            .assignments
            .iter()
            .any(|(n, _)| matches!(n.as_str(), "EDITOR" | "VISUAL" | "SUDO_EDITOR")),
        "dscl" => {
            words.contains(&"GroupMembership") && words.iter().any(|w| ADMIN_GROUPS.contains(w))
        }
        "dseditgroup" => words.contains(&"-a") && words.iter().any(|w| ADMIN_GROUPS.contains(w)),
        "useradd" | "adduser" => {
            (name == "adduser" && adds_to_admin_group(&words))
                || words.iter().enumerate().any(|(k, w)| {
                    let next = words.get(k + 1).copied().unwrap_or("");
                    (matches!(*w, "-u" | "--uid") && next == "0")
                        || (matches!(*w, "-g" | "--gid") && matches!(next, "0" | "root"))
                        || (matches!(*w, "-G" | "--groups") && names_admin(next))
                        || w.strip_prefix("--groups=").is_some_and(names_admin)
                        || *w == "-o"
                })
        }
        // A system program (an absolute path) made set-user-id.
        "chmod" => words.iter().any(|w| setuid_mode(w)) && words.iter().any(|w| w.starts_with('/')),
        "setcap" => words.iter().any(|w| {
            let lower = w.to_ascii_lowercase();
            lower.contains("cap_setuid")
                || lower.contains("cap_setgid")
                || lower.contains("cap_sys_admin")
                || lower.contains("cap_dac_override")
                || lower == "all+ep"
        }),
        _ => false,
    };
    let (rule_id, what) = match name {
        "chmod" | "setcap" => (
            "access-persistence/setuid",
            "makes a program run with raised privileges",
        ),
        "useradd" => (
            "access-persistence/admin-user",
            "creates an account with administrator rights",
        ),
        _ => (
            "access-persistence/sudo-group",
            "grants administrator (sudo) rights non-interactively",
        ),
    };
    grants.then(|| HardDeny {
        category: Category::AccessPersistence,
        rule_id,
        rationale: format!("`{name}` {what}"),
    })
}

/// `adduser USER GROUP` / `addgroup USER GROUP` with an administrators' group.
fn adds_to_admin_group(words: &[&str]) -> bool {
    let operands: Vec<&&str> = words.iter().filter(|w| !w.starts_with('-')).collect();
    operands.len() == 2 && operands.last().is_some_and(|g| ADMIN_GROUPS.contains(g))
}
