//! `access-persistence`: changes that let someone in, or raise a user to
//! administrator, and outlast the command — SSH and sudo authorization
//! (`authorized_keys`, `~/.ssh/rc`, `sshd_config` settings that authorize,
//! `/etc/sudoers`, `/etc/sudoers.d`), the account database (`/etc/passwd`,
//! `/etc/shadow`, `/etc/group`, a UID 0 account, a root password set or
//! removed non-interactively), membership of the administrators' groups
//! (by name or by their well-known GID), PAM stacks that let anyone
//! authenticate (`pam_permit.so`), and programs made set-user-ID or given
//! the capabilities that amount to root.
//!
//! Scheduled jobs and services (cron, systemd units) run code later but
//! grant no access by themselves: they stay the reviewer's, like any other
//! write (docs/decisions.md).
//!
//! A pattern counts only when it can name such a file: `touch *` in a
//! project cannot, `cp k ~/.ssh/*` can. Where the text written is known
//! (`echo`, `printf`, a here-document, a `sed` insertion), a write to the
//! SSH server's or PAM's configuration is judged by what it says:
//! `PermitRootLogin no` hardens, `PermitRootLogin yes` authorizes.

use super::HardRule;
use crate::shell::spec::Role;
use crate::shell::{Arg, Value};

use super::facts::Facts;
use super::paths::{Target, ends_with, is_within};
use super::{HardDeny, deny, net};

/// What authorization a written target adds, with its rule id.
pub(super) fn persistence_target(target: &Target) -> Option<(HardRule, &'static str)> {
    if ends_with(target, &[".ssh", "authorized_keys"])
        || ends_with(target, &[".ssh", "authorized_keys2"])
    {
        return Some((HardRule::PersistAuthorizedKeys, "SSH `authorized_keys`"));
    }
    let names = |file: &str| match target {
        Target::Exact(p) => p == file,
        Target::Pattern(t) => crate::shell::glob::path_may_match(t, file),
        Target::Partial(_) => false,
    };
    let below = |dir: &str| match target {
        Target::Exact(p) => is_within(p, dir) && p != dir,
        Target::Pattern(t) => crate::shell::glob::may_reach(t, dir),
        Target::Partial(_) => false,
    };
    // `~/.ssh/rc` and `/etc/ssh/sshrc` run at every SSH login.
    if ends_with(target, &[".ssh", "rc"]) || names("/etc/ssh/sshrc") {
        return Some((
            HardRule::PersistSshRc,
            "commands that run at every SSH login",
        ));
    }
    if names("/etc/sudoers") || below("/etc/sudoers.d") {
        return Some((HardRule::PersistSudoers, "sudo rules"));
    }
    if names("/etc/ssh/sshd_config") || below("/etc/ssh/sshd_config.d") {
        return Some((
            HardRule::PersistSshdConfig,
            "SSH server authorization settings",
        ));
    }
    if ["/etc/passwd", "/etc/shadow", "/etc/group", "/etc/gshadow"]
        .iter()
        .any(|f| names(f))
    {
        return Some((HardRule::PersistAccounts, "accounts or groups"));
    }
    if names("/etc/pam.conf") || below("/etc/pam.d") || pam_module(target) {
        return Some((HardRule::PersistPam, "authentication rules (PAM)"));
    }
    None
}

/// A PAM module file (`…/security/pam_x.so`): code every login runs.
fn pam_module(target: &Target) -> bool {
    match target {
        Target::Exact(p) | Target::Partial(p) => {
            let mut parts = p.rsplit('/');
            let name = parts.next().unwrap_or("");
            parts.next() == Some("security") && name.starts_with("pam_") && name.ends_with(".so")
        }
        Target::Pattern(_) => false,
    }
}

/// The PAM files every login, `su` or `sudo` reads: a write whose text is
/// unknown is judged as one that may let anyone in.
const PAM_AUTH_FILES: &[&str] = &[
    "common-auth",
    "common-account",
    "common-password",
    "system-auth",
    "password-auth",
    "sudo",
    "sudo-i",
    "su",
    "su-l",
    "sshd",
    "login",
    "other",
    "runuser",
    "runuser-l",
    "passwd",
    "polkit-1",
];

/// Does a known text written to a PAM file let anyone authenticate?
fn pam_text_permits(text: &str) -> bool {
    let lower = text.to_ascii_lowercase();
    lower.contains("pam_permit") || lower.contains("pam_exec")
}

/// Does a known text written to the SSH server's configuration authorize
/// anyone (a root login, passwords, another key file, …)? A commented line
/// says nothing; `PermitRootLogin no` hardens.
fn sshd_text_authorizes(text: &str) -> bool {
    text.lines().any(|line| {
        let line = line.trim();
        if line.starts_with('#') || line.is_empty() {
            return false;
        }
        let (key, value) = line
            .split_once(|c: char| c.is_whitespace() || c == '=')
            .unwrap_or((line, ""));
        let value = value
            .trim()
            .trim_start_matches('=')
            .trim()
            .to_ascii_lowercase();
        let yes = value.starts_with("yes");
        match key.to_ascii_lowercase().as_str() {
            "permitrootlogin" => !matches!(
                value.as_str(),
                "no" | "prohibit-password" | "without-password" | "forced-commands-only"
            ),
            "passwordauthentication"
            | "permitemptypasswords"
            | "kbdinteractiveauthentication"
            | "challengeresponseauthentication"
            | "hostbasedauthentication"
            | "permituserenvironment" => yes,
            "ignorerhosts" | "strictmodes" => value.starts_with("no"),
            "authorizedkeysfile"
            | "authorizedkeyscommand"
            | "authorizedkeyscommanduser"
            | "authorizedprincipalsfile"
            | "authorizedprincipalscommand"
            | "authorizedprincipalscommanduser"
            | "trustedusercakeys"
            | "include" => true,
            _ => false,
        }
    })
}

/// Whether a write adding `rule`'s kind of authorization, with `text` (when
/// known) as what is written, to `target`, really authorizes.
fn content_authorizes(rule: HardRule, target: &Target, text: Option<&str>) -> bool {
    match (rule, text) {
        (HardRule::PersistSshdConfig, Some(t)) => sshd_text_authorizes(t),
        (HardRule::PersistPam, Some(t)) => pam_text_permits(t),
        (HardRule::PersistPam, None) => {
            pam_module(target)
                || match target {
                    Target::Exact(p) => {
                        p == "/etc/pam.conf"
                            || p.strip_prefix("/etc/pam.d/")
                                .is_some_and(|n| PAM_AUTH_FILES.contains(&n))
                    }
                    Target::Pattern(_) | Target::Partial(_) => true,
                }
        }
        _ => true,
    }
}

/// A directory receiving files of unknown names where any name adds
/// authorization: a `.ssh` directory (`wget -P ~/.ssh`, `tar -C ~/.ssh -x`,
/// `git clone … ~/.ssh`), `/etc/sudoers.d`, `/etc/ssh/sshd_config.d`.
fn persistence_dir(target: &Target) -> Option<(HardRule, &'static str)> {
    if ends_with(target, &[".ssh"]) {
        return Some((
            HardRule::PersistAuthorizedKeys,
            "which can add SSH `authorized_keys`",
        ));
    }
    if ends_with(target, &["etc", "sudoers.d"]) {
        return Some((HardRule::PersistSudoers, "each of which is a sudo rule"));
    }
    if ends_with(target, &["etc", "ssh", "sshd_config.d"]) {
        return Some((
            HardRule::PersistSshdConfig,
            "each of which configures the SSH server",
        ));
    }
    None
}

/// `chmod u+s`, `chmod 4755`, `chmod +s`: the set-user-ID bit. The
/// set-group-ID bit alone (`g+s`, `2775`, what shared directories use) is
/// not it.
fn setuid_mode(mode: &str) -> bool {
    if !mode.is_empty() && mode.chars().all(|c| c.is_digit(8)) {
        return mode.len() >= 4 && u32::from_str_radix(mode, 8).is_ok_and(|m| m & 0o4000 != 0);
    }
    mode.split(',').any(|clause| {
        let who_end = clause.find(['+', '-', '=']).unwrap_or(clause.len());
        let who = clause.get(..who_end).unwrap_or("");
        if !who.chars().all(|c| "ugoa".contains(c)) {
            return false;
        }
        let for_user = who.is_empty() || who.contains(['u', 'a']);
        // `+s`, `=rwxs`, `u+x-w+s`: each operator with its permissions.
        let mut adds = false;
        let mut op = ' ';
        for c in clause.get(who_end..).unwrap_or("").chars() {
            match c {
                '+' | '-' | '=' => op = c,
                's' if op != '-' => adds = true,
                _ => {}
            }
        }
        for_user && adds
    })
}

/// The administrators' groups by name.
const ADMIN_GROUPS: &[&str] = &["sudo", "wheel", "admin", "root", "adm"];

/// Their well-known GIDs: `root` 0 everywhere, `adm` 4, `wheel` 10 (Red
/// Hat, Fedora, Arch, SUSE), `sudo` 27 (Debian, Ubuntu), `admin` 80
/// (macOS). A GID is what `usermod -aG 27` is given when the name is not.
const ADMIN_GIDS: &[u32] = &[0, 4, 10, 27, 80];

fn is_admin_group(group: &str) -> bool {
    let g = group.trim();
    ADMIN_GROUPS.contains(&g)
        || (!g.is_empty()
            && g.bytes().all(|b| b.is_ascii_digit())
            && g.parse::<u32>().is_ok_and(|n| ADMIN_GIDS.contains(&n)))
}

fn names_admin(v: &str) -> bool {
    v.split(',').any(is_admin_group)
}

/// UID 0 in any spelling (`0`, `00`).
fn is_uid_zero(v: &str) -> bool {
    !v.is_empty() && v.bytes().all(|b| b == b'0')
}

pub(super) fn check(f: &mut Facts<'_>) -> Option<HardDeny> {
    for i in 0..f.analysis.commands.len() {
        let text = f.written_text(i);
        for touch in f.touches(i).iter() {
            if touch.role == Role::WriteInto {
                for target in &touch.targets {
                    if let Some((rule, what)) = persistence_dir(target) {
                        return deny(
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
                if let Some((rule, what)) = persistence_target(target)
                    && content_authorizes(rule, target, text.as_deref())
                {
                    return deny(
                        rule,
                        format!("writes `{}`, adding {what}", target.display()),
                    );
                }
            }
        }
        if let Some(d) = admin_group(f, i)
            .or_else(|| root_password(f, i))
            .or_else(|| setuid(f, i))
            .or_else(|| copies_key_to_loopback(f, i))
        {
            return Some(d);
        }
    }
    None
}

fn known_words(args: &[Arg]) -> Vec<&str> {
    args.iter().map(|a| a.as_known().unwrap_or("")).collect()
}

/// The known values of command `i`'s options `names`.
fn known_options(f: &Facts<'_>, i: usize, names: &[&str]) -> Vec<String> {
    f.option_values(i, names)
        .iter()
        .filter_map(|v| v.as_known().map(str::to_owned))
        .collect()
}

fn grants(rule: HardRule, rationale: String) -> Option<HardDeny> {
    deny(rule, rationale)
}

/// `usermod -aG sudo`, `usermod -aG 27`, `useradd -Gwheel`, `--uid=0`,
/// `gpasswd -a u sudo`, `groupmems -a u -g wheel`, `adduser u sudo`, a
/// non-interactive `visudo` or `vipw`, macOS `dscl`/`dseditgroup`.
fn admin_group(f: &Facts<'_>, i: usize) -> Option<HardDeny> {
    let cmd = f.command(i)?;
    let name = cmd.name()?;
    let canonical = crate::shell::effects::canonical_args_of(cmd);
    let words = known_words(canonical.as_deref().unwrap_or(cmd.args()));
    let sudo_group = |what: &str| sudo_group_grant(name, what);
    match name {
        "usermod" | "useradd" => user_admin_change(f, i, name),
        "gpasswd" => {
            let adds = !f
                .option_values(i, &["a", "add", "M", "members", "A", "administrators"])
                .is_empty();
            let group = f
                .operand_values(i)
                .last()
                .and_then(|v| v.as_known().map(str::to_owned));
            (adds && group.as_deref().is_some_and(is_admin_group))
                .then(|| sudo_group("adds a member to an administrators' group"))
                .flatten()
        }
        "groupmems" => {
            let value_of = |opts: &[&str]| word_option_value(&words, opts);
            let adds = value_of(&["-a", "--add"]).is_some();
            let group = value_of(&["-g", "--group"]);
            (adds && group.is_some_and(is_admin_group))
                .then(|| sudo_group("adds a member to an administrators' group"))
                .flatten()
        }
        "adduser" | "addgroup" => {
            // Debian's `adduser --ingroup sudo eve` / `--gid 27`: the
            // account's primary group.
            let primary = words.iter().enumerate().any(|(k, w)| {
                matches!(*w, "--ingroup" | "--gid")
                    && words.get(k + 1).is_some_and(|g| is_admin_group(g))
                    || w.strip_prefix("--ingroup=")
                        .or_else(|| w.strip_prefix("--gid="))
                        .is_some_and(is_admin_group)
            });
            (primary || adds_to_admin_group(&words))
                .then(|| sudo_group("adds the account to an administrators' group"))
                .flatten()
        }
        "visudo" | "vipw" | "vigr" => cmd
            .assignments
            .iter()
            .any(|(n, _)| matches!(n.as_str(), "EDITOR" | "VISUAL" | "SUDO_EDITOR"))
            .then(|| sudo_group("is given an editor that writes without a person"))
            .flatten(),
        "dscl" => {
            let admin = words.iter().any(|w| {
                let g = w.strip_prefix("/Groups/").unwrap_or(w);
                is_admin_group(g)
            });
            (words.contains(&"GroupMembership") && admin)
                .then(|| sudo_group("adds a member to an administrators' group"))
                .flatten()
        }
        "dseditgroup" => (words.contains(&"-a") && words.iter().any(|w| is_admin_group(w)))
            .then(|| sudo_group("adds a member to an administrators' group"))
            .flatten(),
        _ => None,
    }
}

/// The deny for `name` adding an account to an administrators' group, as
/// `what` says.
fn sudo_group_grant(name: &str, what: &str) -> Option<HardDeny> {
    grants(
        HardRule::PersistSudoGroup,
        format!("`{name}` {what} (administrator rights)"),
    )
}

/// `usermod`/`useradd` (command `i`, named `name`): an administrators'
/// group among the groups, as the primary group, or UID 0.
fn user_admin_change(f: &Facts<'_>, i: usize, name: &str) -> Option<HardDeny> {
    let groups = known_options(f, i, &["G", "groups"]);
    if let Some(g) = groups.iter().find(|g| names_admin(g)) {
        return sudo_group_grant(name, &format!("adds the account to the group `{g}`"));
    }
    let primary = known_options(f, i, &["g", "gid"]);
    if let Some(g) = primary.iter().find(|g| is_admin_group(g)) {
        return grants(
            HardRule::PersistAdminUser,
            format!("`{name}` makes `{g}` the account's primary group"),
        );
    }
    if known_options(f, i, &["u", "uid"])
        .iter()
        .any(|u| is_uid_zero(u))
    {
        return grants(
            HardRule::PersistAdminUser,
            format!("`{name}` gives an account UID 0 (root)"),
        );
    }
    None
}

/// The value of the first of `opts` among `words`: the next word, or
/// glued on with `=` (`--group=wheel`).
fn word_option_value<'w>(words: &[&'w str], opts: &[&str]) -> Option<&'w str> {
    words.iter().enumerate().find_map(|(k, w)| {
        opts.iter().find_map(|o| {
            if w == o {
                words.get(k + 1).copied()
            } else {
                w.strip_prefix(o).and_then(|r| r.strip_prefix('='))
            }
        })
    })
}

/// `adduser USER GROUP` / `addgroup USER GROUP` with an administrators' group.
fn adds_to_admin_group(words: &[&str]) -> bool {
    let operands: Vec<&&str> = words.iter().filter(|w| !w.starts_with('-')).collect();
    operands.len() == 2 && operands.last().is_some_and(|g| is_admin_group(g))
}

/// Setting or removing root's password without a person at a terminal:
/// `chpasswd` or `newusers` given `root:…` or a UID 0 line, `passwd -d
/// root`, `passwd root` reading its input from the command, `usermod -p …
/// root`.
fn root_password(f: &Facts<'_>, i: usize) -> Option<HardDeny> {
    let cmd = f.command(i)?;
    let name = cmd.name()?;
    let input = cmd.stdin_text.as_ref().and_then(Value::as_known);
    let root = |what: &str| grants(HardRule::PersistRootPassword, format!("`{name}` {what}"));
    match name {
        "chpasswd" => input
            .is_some_and(|t| t.lines().any(|l| l.trim_start().starts_with("root:")))
            .then(|| root("sets root's password"))
            .flatten(),
        "newusers" => input
            .is_some_and(|t| {
                t.lines().any(|l| {
                    let fields: Vec<&str> = l.split(':').collect();
                    l.trim_start().starts_with("root:")
                        || fields.get(2).is_some_and(|u| is_uid_zero(u))
                        || fields.get(3).is_some_and(|g| is_admin_group(g))
                })
            })
            .then(|| root("creates an account with root's rights"))
            .flatten(),
        "passwd" => {
            let words = known_words(cmd.args());
            let user = words.iter().rev().find(|w| !w.starts_with('-')).copied();
            let under_sudo = cmd
                .parent
                .and_then(|p| f.command(p))
                .is_some_and(|p| matches!(p.name(), Some("sudo" | "doas")));
            let is_root = user.map_or(under_sudo, |u| u == "root");
            let deletes = words.iter().any(|w| {
                *w == "--delete" || (w.starts_with('-') && !w.starts_with("--") && w.contains('d'))
            });
            let scripted =
                words.contains(&"--stdin") || input.is_some() || !cmd.stdin_from.is_empty();
            (is_root && (deletes || scripted))
                .then(|| root("sets or removes root's password without a person"))
                .flatten()
        }
        "usermod" => {
            let sets = !f.option_values(i, &["p", "password"]).is_empty();
            let user = f
                .operand_values(i)
                .last()
                .and_then(|v| v.as_known().map(str::to_owned));
            (sets && user.as_deref() == Some("root"))
                .then(|| root("sets root's password hash"))
                .flatten()
        }
        _ => None,
    }
}

/// Whether a setuid target is one an attacker gains from: a known path
/// outside the working tree's relative names (`/usr/bin/find`,
/// `/tmp/rootbash`), a path nobody knows until run time (`"$(command -v
/// python3)"`), or a file the command also gives to root (`chown root`).
fn privileged_target(value: &Value, targets: &[Target], chowned_root: &[String]) -> bool {
    if targets.is_empty() {
        return value.candidates().iter().any(|t| t.has_any());
    }
    targets.iter().any(|t| match t {
        Target::Exact(p) => {
            chowned_root.contains(p)
                || value
                    .candidates()
                    .iter()
                    .any(|c| c.known_prefix().starts_with('/') || c.has_any())
        }
        Target::Pattern(_) => value
            .candidates()
            .iter()
            .any(|c| c.known_prefix().starts_with('/')),
        Target::Partial(_) => true,
    })
}

/// Paths the command gives to root: `chown root[:…] X`, `chown 0 X`.
fn chowned_to_root(f: &Facts<'_>) -> Vec<String> {
    let mut out = Vec::new();
    for (i, cmd) in f.commands() {
        if cmd.name() != Some("chown") {
            continue;
        }
        let owner = cmd
            .args()
            .iter()
            .filter_map(Arg::as_known)
            .find(|w| !w.starts_with('-'));
        let to_root = owner.is_some_and(|o| {
            let user = o.split([':', '.']).next().unwrap_or("");
            user == "root" || is_uid_zero(user)
        });
        if !to_root {
            continue;
        }
        for touch in f.touches(i).iter().filter(|t| t.role == Role::Mode) {
            for t in &touch.targets {
                if let Target::Exact(p) = t {
                    out.push(p.clone());
                }
            }
        }
    }
    out
}

/// A program made set-user-ID (`chmod u+s`, `install -m 4755`) or given
/// capabilities that amount to root (`setcap cap_setuid+ep`).
fn setuid(f: &Facts<'_>, i: usize) -> Option<HardDeny> {
    let cmd = f.command(i)?;
    let name = cmd.name()?;
    let raised = |what: String| grants(HardRule::PersistSetuid, what);
    match name {
        "chmod" => {
            let mode = cmd.args().iter().filter_map(Arg::as_known).find(|w| {
                !w.starts_with("--") && !matches!(*w, "-R" | "-v" | "-c" | "-f" | "-h")
            })?;
            if !setuid_mode(mode) {
                return None;
            }
            // `chmod u+s $(which vim)`: words nobody knows until run time.
            if cmd.args().iter().any(|a| matches!(a, Arg::Unknown(_))) {
                return raised(format!(
                    "`chmod {mode}` makes a program named only at run time set-user-ID"
                ));
            }
            let chowned = chowned_to_root(f);
            for touch in f.touches(i).iter().filter(|t| t.role == Role::Mode) {
                if privileged_target(&touch.value, &touch.targets, &chowned) {
                    return raised(format!(
                        "`chmod {mode}` makes `{}` run as its owner (set-user-ID)",
                        touch.value
                    ));
                }
            }
            None
        }
        "install" => {
            let modes = known_options(f, i, &["m", "mode"]);
            let mode = modes.iter().find(|m| setuid_mode(m))?;
            let chowned = chowned_to_root(f);
            for touch in f.touches(i).iter().filter(|t| t.role == Role::Write) {
                if privileged_target(&touch.value, &touch.targets, &chowned) {
                    return raised(format!(
                        "`install -m {mode}` installs `{}` set-user-ID",
                        touch.value
                    ));
                }
            }
            None
        }
        "setcap" => {
            let words = known_words(cmd.args());
            let root_caps = words.iter().any(|w| {
                let lower = w.to_ascii_lowercase();
                !lower.starts_with('-')
                    && (lower.contains("cap_setuid")
                        || lower.contains("cap_setgid")
                        || lower.contains("cap_sys_admin")
                        || lower.contains("cap_dac_override")
                        || lower.contains("cap_dac_read_search")
                        || lower.contains("cap_sys_ptrace")
                        || lower.contains("cap_sys_module")
                        || lower.contains("cap_chown")
                        || lower.contains("cap_fowner")
                        || lower.starts_with("all")
                        || lower.starts_with("=ep"))
                    && (lower.contains('+') || lower.contains('='))
            });
            root_caps
                .then(|| {
                    raised("`setcap` gives a program capabilities that amount to root".to_owned())
                })
                .flatten()
        }
        _ => None,
    }
}

/// `ssh-copy-id … root@localhost`: installs a key in this machine's own
/// `authorized_keys`.
fn copies_key_to_loopback(f: &Facts<'_>, i: usize) -> Option<HardDeny> {
    let cmd = f.command(i)?;
    if cmd.name()? != "ssh-copy-id" {
        return None;
    }
    let words = known_words(cmd.args());
    let mut k = 0;
    let mut host = None;
    while let Some(w) = words.get(k) {
        if matches!(*w, "-i" | "-p" | "-o" | "-F" | "-J") {
            k += 2;
            continue;
        }
        if !w.starts_with('-') {
            host = Some(*w);
        }
        k += 1;
    }
    let host = host?;
    let bare = host.rsplit_once('@').map_or(host, |(_, h)| h);
    net::is_loopback_host(bare)
        .then(|| {
            grants(
                HardRule::PersistAuthorizedKeys,
                format!("`ssh-copy-id` adds a key to this machine's `authorized_keys` (`{host}`)"),
            )
        })
        .flatten()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn setuid_is_not_setgid() {
        for m in [
            "4755", "04755", "6755", "u+s", "+s", "a+s", "ug+s", "u=rwxs", "u+x,u+s",
        ] {
            assert!(setuid_mode(m), "{m}");
        }
        for m in [
            "2775", "02775", "g+s", "755", "1777", "+t", "u-s", "-s", "g=rwxs", "o+rx",
        ] {
            assert!(!setuid_mode(m), "{m}");
        }
    }

    #[test]
    fn admin_groups_by_name_and_gid() {
        for g in ["sudo", "wheel", "27", "10", "0", "admin", "080"] {
            assert!(is_admin_group(g), "{g}");
        }
        for g in ["docker", "999", "1000", "video", ""] {
            assert!(!is_admin_group(g), "{g}");
        }
    }

    #[test]
    fn sshd_text() {
        assert!(sshd_text_authorizes("PermitRootLogin yes"));
        assert!(sshd_text_authorizes("AuthorizedKeysFile /tmp/keys"));
        assert!(sshd_text_authorizes("passwordauthentication=yes"));
        assert!(!sshd_text_authorizes("PermitRootLogin no"));
        assert!(!sshd_text_authorizes("#PermitRootLogin yes"));
        assert!(!sshd_text_authorizes(
            "PasswordAuthentication no\nX11Forwarding no"
        ));
    }
}
