//! The rules of six categories, per unit and per path surface
//! (credential exfiltration follows data across units: see `exfil`).

use crate::request::Surface;
use crate::shell::{Assignment, Unit, Word};

use super::effects::{Args, Effect};
use super::paths::{
    self, Resolved, components, covers, glob_component, inside, is_block_device, is_match_all,
    is_within,
};
use super::{Analysis, Category, Env, HardDeny, exfil, net};

fn deny(category: Category, rule_id: &'static str, rationale: String) -> Option<HardDeny> {
    Some(HardDeny {
        category,
        rule_id,
        rationale,
    })
}

/// A rule judged one unit at a time.
type UnitRule = fn(&Analysis<'_>, usize, &Unit) -> Option<HardDeny>;

/// All command rules, most destructive category first.
pub(crate) fn command(a: &Analysis<'_>) -> Option<HardDeny> {
    let units = &a.script.units;
    let per_unit: [UnitRule; 5] = [wipe, device, fork_bomb, trust_boundary, access_persistence];
    for rule in per_unit {
        for (i, unit) in units.iter().enumerate() {
            if let Some(d) = rule(a, i, unit) {
                return Some(d);
            }
        }
    }
    if let Some(d) = exfil::check(a) {
        return Some(d);
    }
    transport(a)
}

// ---------------------------------------------------------------- wipe

/// Root, home, or a directory that contains home.
fn is_critical_dir(env: &Env, path: &str) -> bool {
    path == "/" || is_within(&env.home, path)
}

/// The pattern names root, home, an ancestor of home, or everything
/// directly inside one of them.
fn wipe_target(env: &Env, r: &Resolved) -> bool {
    if !r.glob {
        return is_critical_dir(env, &r.path);
    }
    let mut ancestor = String::new();
    for part in components(&env.home) {
        ancestor.push('/');
        ancestor.push_str(part);
        if paths::path_matches(r, &ancestor) {
            return true;
        }
    }
    let parts = components(&r.path);
    let Some((last, dir_parts)) = parts.split_last() else {
        return true;
    };
    let dir = if dir_parts.is_empty() {
        "/".to_owned()
    } else {
        format!("/{}", dir_parts.join("/"))
    };
    is_match_all(last) && !dir.contains(['*', '?', '[']) && is_critical_dir(env, &dir)
}

fn describe_dir(env: &Env, r: &Resolved) -> String {
    if r.path == "/" {
        "the root directory".to_owned()
    } else if r.path == env.home {
        format!("the home directory `{}`", env.home)
    } else if r.glob {
        format!("everything matching `{}`", r.path)
    } else {
        format!("`{}`, which contains the home directory", r.path)
    }
}

/// Words printed by `echo`/`printf` units feeding this one (`echo / | xargs rm -rf`).
fn piped_words(a: &Analysis<'_>, unit: &Unit) -> Vec<Word> {
    let mut out = Vec::new();
    if !unit.extra_args_unknown {
        return out;
    }
    for &source in &unit.sources {
        let Some(src) = a.script.units.get(source) else {
            continue;
        };
        match src.name() {
            Some("echo" | "printf") => {
                for word in src.args() {
                    if !word.as_literal().is_some_and(|t| t.starts_with('-')) {
                        out.push(word.clone());
                    }
                }
            }
            // `find ROOT …` prints ROOT first.
            Some("find") => {
                for word in src.args() {
                    if word
                        .as_literal()
                        .is_some_and(|t| t.starts_with('-') || t == "(" || t == "!")
                    {
                        break;
                    }
                    out.push(word.clone());
                }
            }
            _ => {}
        }
    }
    out
}

fn wipe(a: &Analysis<'_>, i: usize, unit: &Unit) -> Option<HardDeny> {
    let name = match unit.name() {
        Some(n) => n,
        // An unknown command name (`$RM`, `$(echo rm)`) with rm-like
        // arguments is judged as `rm`.
        None if unit.argv.first().is_some_and(Word::has_expansion) => "rm",
        None => return None,
    };
    match name {
        "rm" | "rimraf" => {
            let args = Args::parse(unit.args(), "", &["interactive"]);
            if args.has(&["no-preserve-root"]) {
                return deny(
                    Category::WipeRootOrHome,
                    "wipe-root-or-home/no-preserve-root",
                    "`rm --no-preserve-root` disables the guard against deleting the root directory".to_owned(),
                );
            }
            // A word that is not literal (`rm $FLAGS /`) may hold `-rf`.
            let unknown_flags = args.operands.iter().any(|w| w.has_expansion());
            let recursive = name == "rimraf" || unknown_flags || args.has(&["r", "R", "recursive"]);
            if !recursive {
                return None;
            }
            let force = name == "rimraf" || args.has(&["f", "force"]);
            let mut operands: Vec<Word> = args.operands.iter().map(|w| (*w).clone()).collect();
            operands.extend(piped_words(a, unit));
            for word in &operands {
                for r in a.resolve(i, word) {
                    if wipe_target(a.env, &r) {
                        let (rule, what) = if force {
                            (
                                "wipe-root-or-home/rm-recursive-force",
                                "recursive forced removal",
                            )
                        } else {
                            ("wipe-root-or-home/rm-recursive", "recursive removal")
                        };
                        return deny(
                            Category::WipeRootOrHome,
                            rule,
                            format!(
                                "{what} of {} (written `{}`)",
                                describe_dir(a.env, &r),
                                word.display()
                            ),
                        );
                    }
                }
            }
            None
        }
        "chmod" | "chown" | "chgrp" => {
            let args = Args::parse(unit.args(), "", &[]);
            args.has(&["no-preserve-root"]).then(|| HardDeny {
                category: Category::WipeRootOrHome,
                rule_id: "wipe-root-or-home/no-preserve-root",
                rationale: format!(
                    "`{name} --no-preserve-root` disables the guard for the root directory"
                ),
            })
        }
        "find" => find_delete(a, i, unit),
        "rsync" => rsync_delete(a, i, unit),
        _ => None,
    }
}

/// `rsync -a --delete empty/ ~/` empties the destination.
fn rsync_delete(a: &Analysis<'_>, i: usize, unit: &Unit) -> Option<HardDeny> {
    let args = Args::parse(
        unit.args(),
        "efTB",
        &[
            "exclude",
            "include",
            "filter",
            "rsh",
            "rsync-path",
            "chmod",
            "chown",
        ],
    );
    if !args.opts.iter().any(|(name, _)| name.starts_with("delete")) {
        return None;
    }
    let dest = args.operands.last()?;
    for r in a.resolve(i, dest) {
        if wipe_target(a.env, &r) {
            return deny(
                Category::WipeRootOrHome,
                "wipe-root-or-home/rsync-delete",
                format!(
                    "`rsync --delete` into {} removes everything not in the source",
                    describe_dir(a.env, &r)
                ),
            );
        }
    }
    None
}

fn find_delete(a: &Analysis<'_>, i: usize, unit: &Unit) -> Option<HardDeny> {
    let args = unit.args();
    let mut k = 0;
    while let Some(t) = args.get(k).and_then(Word::as_literal) {
        match t {
            "-H" | "-L" | "-P" => k += 1,
            "-D" => k += 2,
            _ if t.starts_with("-O") => k += 1,
            _ => break,
        }
    }
    let mut roots: Vec<Word> = Vec::new();
    for word in args.get(k..).unwrap_or(&[]) {
        if word
            .as_literal()
            .is_some_and(|t| t.starts_with('-') || t == "(" || t == "!")
        {
            break;
        }
        roots.push(word.clone());
    }
    if roots.is_empty() {
        roots.push(Word::literal_text("."));
    }
    let mut destructive = None;
    let mut in_exec = false;
    for word in args {
        let Some(t) = word.as_literal() else { continue };
        if t == "-delete" {
            destructive = Some("-delete");
        }
        if in_exec {
            let base = t.rsplit('/').next().unwrap_or(t);
            if matches!(base, "rm" | "rimraf" | "shred" | "unlink" | "rmdir") {
                destructive = Some("-exec rm");
            }
        }
        in_exec = matches!(t, "-exec" | "-execdir" | "-ok" | "-okdir")
            || (in_exec
                && !matches!(t, ";" | "+")
                && matches!(t, "sudo" | "command" | "env" | "nice"));
    }
    let action = destructive?;
    for root in &roots {
        for r in a.resolve(i, root) {
            if wipe_target(a.env, &r) {
                return deny(
                    Category::WipeRootOrHome,
                    "wipe-root-or-home/find-delete",
                    format!("`find {action}` starting at {}", describe_dir(a.env, &r)),
                );
            }
        }
    }
    None
}

// ---------------------------------------------------------------- device

fn device(a: &Analysis<'_>, i: usize, unit: &Unit) -> Option<HardDeny> {
    if let Some(name) = unit.name()
        && (name == "mkfs"
            || name.starts_with("mkfs.")
            || matches!(name, "mke2fs" | "wipefs" | "blkdiscard"))
    {
        let target = unit
            .args()
            .iter()
            .rev()
            .find(|w| !w.as_literal().is_some_and(|t| t.starts_with('-')))
            .map(Word::display)
            .unwrap_or_default();
        let rule = if name == "wipefs" {
            "device-destroy/wipefs"
        } else if name == "blkdiscard" {
            "device-destroy/blkdiscard"
        } else {
            "device-destroy/mkfs"
        };
        return deny(
            Category::DeviceDestroy,
            rule,
            format!("`{name}` destroys the filesystem on `{target}`"),
        );
    }
    if let Some(d) = partition_table(a, i, unit) {
        return Some(d);
    }
    let is_dd = unit.name() == Some("dd");
    let is_shred = unit.name() == Some("shred");
    let redirect_targets: Vec<&Word> = unit
        .redirects
        .iter()
        .filter(|r| r.op.writes())
        .map(|r| &r.target)
        .collect();
    for touch in a.effects_of(i) {
        let (effect, word) = (touch.effect, &touch.word);
        if !matches!(effect, Effect::Write | Effect::Delete { .. }) {
            continue;
        }
        for r in &touch.targets {
            if !is_block_device(r) {
                continue;
            }
            let rule = if redirect_targets.contains(&word) {
                "device-destroy/redirect-to-device"
            } else if is_dd {
                "device-destroy/dd-to-device"
            } else if is_shred {
                "device-destroy/shred-device"
            } else {
                "device-destroy/write-to-device"
            };
            return deny(
                Category::DeviceDestroy,
                rule,
                format!("overwrites the block device `{}`", r.path),
            );
        }
    }
    if unit.name() == Some("mkswap") {
        for word in unit.args() {
            for r in a.resolve(i, word) {
                if is_block_device(&r) {
                    return deny(
                        Category::DeviceDestroy,
                        "device-destroy/mkfs",
                        format!("`mkswap` formats the block device `{}`", r.path),
                    );
                }
            }
        }
    }
    None
}

/// `sgdisk --zap-all`, `parted … mklabel`, `sfdisk DEVICE`: the partition
/// table of a block device is rewritten.
fn partition_table(a: &Analysis<'_>, i: usize, unit: &Unit) -> Option<HardDeny> {
    let name = unit
        .name()
        .filter(|n| matches!(*n, "sgdisk" | "gdisk" | "parted" | "sfdisk"))?;
    let words: Vec<String> = unit.args().iter().map(Word::display).collect();
    let has = |list: &[&str]| words.iter().any(|w| list.contains(&w.as_str()));
    let destructive = match name {
        "sgdisk" | "gdisk" => has(&["-Z", "--zap-all", "-z", "--zap", "-o", "--clear"]),
        "parted" => has(&["mklabel", "mktable", "rm"]),
        "sfdisk" => !has(&[
            "-l",
            "--list",
            "-d",
            "--dump",
            "-s",
            "--show-size",
            "-V",
            "--verify",
        ]),
        _ => false,
    };
    if !destructive {
        return None;
    }
    for word in unit.args() {
        for r in a.resolve(i, word) {
            if is_block_device(&r) {
                return deny(
                    Category::DeviceDestroy,
                    "device-destroy/partition-table",
                    format!("`{name}` rewrites the partition table of `{}`", r.path),
                );
            }
        }
    }
    None
}

// ---------------------------------------------------------------- fork bomb

fn fork_bomb(_a: &Analysis<'_>, _i: usize, unit: &Unit) -> Option<HardDeny> {
    if let (Some(function), Some(name)) = (&unit.in_function, unit.name())
        && function == name
        && (unit.background || unit.in_pipeline)
    {
        return deny(
            Category::ForkBomb,
            "fork-bomb/recursive-function",
            format!("function `{function}` spawns copies of itself without bound"),
        );
    }
    let name = unit.name()?;
    let interpreter =
        matches!(name, "perl" | "ruby" | "node" | "php") || name.starts_with("python");
    if interpreter {
        for word in unit.args() {
            let text = word.display();
            let looping = ["while", "loop", "for(;;)", "for (;;)"]
                .iter()
                .any(|k| text.contains(k));
            if text.contains("fork") && looping {
                return deny(
                    Category::ForkBomb,
                    "fork-bomb/interpreter-fork-loop",
                    format!("`{name}` forks in an unbounded loop"),
                );
            }
        }
    }
    None
}

// ---------------------------------------------------------------- trust boundary

/// Does `component` (possibly a glob) match `literal`?
fn comp_is(component: &str, glob: bool, literal: &str) -> bool {
    if glob {
        glob_component(component, literal)
    } else {
        component == literal
    }
}

/// An agent harness's permission configuration, by path shape.
fn harness_config(r: &Resolved, effect: Effect) -> Option<&'static str> {
    let parts = components(&r.path);
    let g = r.glob;
    let n = parts.len();
    for (k, part) in parts.iter().enumerate() {
        let rest = parts.get(k + 1..).unwrap_or(&[]);
        let tail_is = |names: &[&str]| {
            rest.len() == 1
                && rest
                    .first()
                    .is_some_and(|c| names.iter().any(|name| comp_is(c, g, name)))
        };
        let dir_is = |dir: &str| comp_is(part, g, dir);
        if k + 1 == n && comp_is(part, g, ".claude.json") {
            return Some("Claude Code's user configuration");
        }
        if dir_is(".vouch") {
            return Some("the project's `.vouch/` configuration");
        }
        if dir_is(".claude")
            && rest.len() == 1
            && rest.first().is_some_and(|c| {
                (c.starts_with("settings") && c.ends_with(".json"))
                    || comp_is(c, g, "settings.json")
                    || comp_is(c, g, "settings.local.json")
            })
        {
            return Some("Claude Code's permission settings");
        }
        if dir_is(".codex") && !rest.is_empty() {
            return Some("Codex's configuration");
        }
        if dir_is(".gemini") && tail_is(&["settings.json"]) {
            return Some("Gemini CLI's settings");
        }
        if dir_is(".cursor")
            && tail_is(&[
                "hooks.json",
                "cli.json",
                "cli-config.json",
                "permissions.json",
            ])
        {
            return Some("Cursor's hooks or permissions");
        }
        if dir_is(".pi")
            && rest.iter().any(|c| {
                [
                    "settings.json",
                    "sandbox.json",
                    "permissions.json",
                    "pi-auto-review.json",
                    "extensions",
                ]
                .iter()
                .any(|name| comp_is(c, g, name))
                    || c.contains("permission")
            })
        {
            return Some("Pi's permission configuration");
        }
        // Removing or moving a whole harness directory drops its rules.
        if k + 1 == n
            && effect.whole_tree()
            && [".claude", ".codex", ".gemini", ".cursor", ".pi"]
                .iter()
                .any(|d| dir_is(d))
        {
            return Some("an agent harness's configuration directory");
        }
    }
    None
}

/// Vouch's secrets: its tokens and HMAC key.
fn is_secret_name(component: &str, glob: bool) -> bool {
    if glob {
        ["adapter.token", "operator.token", "hmac.key"]
            .iter()
            .any(|n| glob_component(component, n))
    } else {
        component.ends_with(".token") || component == "hmac.key"
    }
}

/// What protected thing `effect` on `r` touches, if any.
pub(crate) fn trust_hit(env: &Env, effect: Effect, r: &Resolved) -> Option<String> {
    let lower = Resolved {
        path: r.path.to_ascii_lowercase(),
        glob: r.glob,
    };
    if effect.modifies() {
        for p in &env.protected {
            if inside(&lower, p) || (effect.whole_tree() && covers(&lower, p)) {
                return Some(format!("vouch's own files (`{p}`)"));
            }
        }
        return harness_config(&lower, effect).map(str::to_owned);
    }
    let last = components(&lower.path).last().copied().unwrap_or("");
    let recursive = matches!(effect, Effect::Read { recursive: true });
    for p in &env.protected {
        if inside(&lower, p) && (is_secret_name(last, lower.glob) || recursive) {
            return Some(format!("vouch's secrets under `{p}`"));
        }
    }
    None
}

fn trust_rule(effect: Effect) -> &'static str {
    match effect {
        Effect::Write => "trust-boundary/write",
        Effect::Delete { .. } => "trust-boundary/delete",
        Effect::MoveAway => "trust-boundary/move",
        Effect::Mode { .. } => "trust-boundary/chmod",
        Effect::Link => "trust-boundary/link",
        Effect::Read { .. } => "trust-boundary/read-secret",
    }
}

fn trust_boundary(a: &Analysis<'_>, i: usize, _unit: &Unit) -> Option<HardDeny> {
    for touch in a.effects_of(i) {
        let effect = touch.effect;
        for r in &touch.targets {
            if let Some(what) = trust_hit(a.env, effect, r) {
                return deny(
                    Category::TrustBoundary,
                    trust_rule(effect),
                    format!("{} `{}`, part of {what}", effect.verb(), r.path),
                );
            }
        }
    }
    None
}

// ---------------------------------------------------------------- access persistence

fn persistence_target(r: &Resolved) -> Option<&'static str> {
    let parts = components(&r.path);
    let last = parts.last().copied().unwrap_or("");
    if comp_is(last, r.glob, "authorized_keys") || comp_is(last, r.glob, "authorized_keys2") {
        return Some("SSH `authorized_keys`");
    }
    if paths::path_matches(r, "/etc/sudoers") || inside(r, "/etc/sudoers.d") {
        return Some("sudo rules");
    }
    None
}

const ADMIN_GROUPS: &[&str] = &["sudo", "wheel", "admin", "root", "adm"];

fn access_persistence(a: &Analysis<'_>, i: usize, unit: &Unit) -> Option<HardDeny> {
    for touch in a.effects_of(i) {
        let effect = touch.effect;
        if effect != Effect::Write {
            continue;
        }
        for r in &touch.targets {
            if let Some(what) = persistence_target(r) {
                let rule = if what.starts_with("SSH") {
                    "access-persistence/authorized-keys"
                } else {
                    "access-persistence/sudoers"
                };
                return deny(
                    Category::AccessPersistence,
                    rule,
                    format!("writes `{}`, adding {what}", r.path),
                );
            }
        }
    }
    let name = unit.name()?;
    let grants_admin = match name {
        "usermod" => {
            let args = Args::parse(
                unit.args(),
                "GgdsuclLpeEf",
                &["groups", "gid", "home", "shell"],
            );
            args.values(&["G", "groups"]).iter().any(|w| {
                w.literal()
                    .is_some_and(|t| t.split(',').any(|g| ADMIN_GROUPS.contains(&g)))
            })
        }
        "gpasswd" => {
            let args = Args::parse(
                unit.args(),
                "aAdMr",
                &["add", "administrators", "delete", "members"],
            );
            args.has(&["a", "add", "M", "members"])
                && args
                    .operands
                    .iter()
                    .any(|w| w.as_literal().is_some_and(|t| ADMIN_GROUPS.contains(&t)))
        }
        "adduser" | "addgroup" => {
            let args = Args::parse(unit.args(), "", &[]);
            args.operands.len() == 2
                && args
                    .operands
                    .last()
                    .and_then(|w| w.as_literal())
                    .is_some_and(|t| ADMIN_GROUPS.contains(&t))
        }
        "visudo" => unit
            .assignments
            .iter()
            .any(|x| matches!(x.name.as_str(), "EDITOR" | "VISUAL" | "SUDO_EDITOR")),
        _ => false,
    };
    grants_admin.then(|| HardDeny {
        category: Category::AccessPersistence,
        rule_id: "access-persistence/sudo-group",
        rationale: format!("`{name}` grants administrator (sudo) rights non-interactively"),
    })
}

// ---------------------------------------------------------------- transport

fn falsey(text: &str) -> bool {
    matches!(
        text.trim().to_ascii_lowercase().as_str(),
        "false" | "0" | "no" | "off"
    )
}

/// `http.sslVerify` or `http.<url>.sslVerify`; returns the URL scope.
fn ssl_verify_key(key: &str) -> Option<Option<&str>> {
    let lower = key.to_ascii_lowercase();
    if !lower.ends_with(".sslverify") || !lower.starts_with("http.") {
        return None;
    }
    let inner = key.get(5..key.len().saturating_sub(10)).unwrap_or("");
    Some((!inner.is_empty()).then_some(inner))
}

fn transport(a: &Analysis<'_>) -> Option<HardDeny> {
    let units = &a.script.units;
    for unit in units {
        if let Some(d) = transport_unit(unit) {
            return Some(d);
        }
    }
    for binding in &a.script.bindings {
        let later: Vec<Word> = units
            .get(binding.before_unit..)
            .unwrap_or(&[])
            .iter()
            .flat_map(net::urls)
            .collect();
        if let Some(d) = weakening_assignment(&binding.assignment, &later) {
            return Some(d);
        }
    }
    None
}

fn weakening_assignment(x: &Assignment, urls: &[Word]) -> Option<HardDeny> {
    let value = x.value.literal();
    let unknown_or = |f: &dyn Fn(&str) -> bool| value.as_deref().is_none_or(f);
    let (rule, hit) = match x.name.as_str() {
        // git disables verification when the variable is set at all.
        "GIT_SSL_NO_VERIFY" => (
            "transport-security-weakening/git-ssl-no-verify",
            unknown_or(&|v| !v.is_empty()),
        ),
        "NODE_TLS_REJECT_UNAUTHORIZED" => (
            "transport-security-weakening/node-tls-reject-unauthorized",
            unknown_or(&|v| v.trim() == "0"),
        ),
        "PYTHONHTTPSVERIFY" => (
            "transport-security-weakening/python-https-verify",
            unknown_or(&|v| v.trim() == "0"),
        ),
        "NPM_CONFIG_STRICT_SSL" | "npm_config_strict_ssl" => (
            "transport-security-weakening/npm-strict-ssl-off",
            unknown_or(&falsey),
        ),
        "PIP_TRUSTED_HOST" => (
            "transport-security-weakening/pip-trusted-host",
            unknown_or(&|v| !v.split_whitespace().all(net::is_loopback_host)),
        ),
        _ => return None,
    };
    if !hit || (x.name != "PIP_TRUSTED_HOST" && net::all_loopback(urls)) {
        return None;
    }
    deny(
        Category::TransportSecurityWeakening,
        rule,
        format!(
            "`{}={}` turns off TLS certificate verification",
            x.name,
            x.value.display()
        ),
    )
}

#[expect(
    clippy::too_many_lines,
    reason = "predates the 80-line limit; split by issue 8"
)]
fn transport_unit(unit: &Unit) -> Option<HardDeny> {
    let urls = net::urls(unit);
    for x in &unit.assignments {
        if let Some(d) = weakening_assignment(x, &urls) {
            return Some(d);
        }
    }
    let name = unit.name()?;
    let weak =
        |rule: &'static str, what: String| deny(Category::TransportSecurityWeakening, rule, what);
    let target = || {
        urls.iter()
            .find(|w| !net::all_loopback(std::slice::from_ref(*w)))
            .map(|w| format!(" for `{}`", w.display()))
            .unwrap_or_default()
    };
    match name {
        "curl" | "curlie" => {
            let args = Args::parse(unit.args(), net::CURL_VALUE_SHORT, net::CURL_VALUE_LONG);
            if args.has(&["k", "insecure", "proxy-insecure", "doh-insecure"])
                && !net::all_loopback(&urls)
            {
                return weak(
                    "transport-security-weakening/curl-insecure",
                    format!(
                        "`curl --insecure` skips TLS certificate verification{}",
                        target()
                    ),
                );
            }
        }
        "wget" => {
            let args = Args::parse(unit.args(), net::WGET_VALUE_SHORT, net::WGET_VALUE_LONG);
            let execute_off = args.values(&["e", "execute"]).iter().any(|w| {
                w.literal().is_some_and(|t| {
                    let t = t.to_ascii_lowercase().replace('-', "_");
                    t.split_once('=')
                        .is_some_and(|(k, v)| k.trim() == "check_certificate" && falsey(v))
                })
            });
            if (args.has(&["no-check-certificate"]) || execute_off) && !net::all_loopback(&urls) {
                return weak(
                    "transport-security-weakening/wget-no-check-certificate",
                    format!(
                        "`wget --no-check-certificate` skips TLS certificate verification{}",
                        target()
                    ),
                );
            }
        }
        "git" => return git_ssl(unit, &urls),
        "npm" | "pnpm" | "yarn" | "bun" => {
            let words: Vec<String> = unit.args().iter().map(Word::display).collect();
            let lower: Vec<String> = words.iter().map(|w| w.to_ascii_lowercase()).collect();
            let mut hit = lower.iter().any(|w| {
                w.strip_prefix("--strict-ssl=").is_some_and(falsey) || w == "--no-strict-ssl"
            });
            for (k, w) in lower.iter().enumerate() {
                let key = w.trim_start_matches("--");
                if key == "strict-ssl" || key == "enablestrictssl" {
                    hit |= lower.get(k + 1).is_some_and(|v| falsey(v));
                }
                if let Some(v) = key
                    .strip_prefix("strict-ssl=")
                    .or_else(|| key.strip_prefix("enablestrictssl="))
                {
                    hit |= falsey(v);
                }
            }
            if hit && !net::all_loopback(&urls) {
                return weak(
                    "transport-security-weakening/npm-strict-ssl-off",
                    format!("`{name}` with `strict-ssl false` skips TLS certificate verification"),
                );
            }
        }
        _ => {
            let is_pip = name.starts_with("pip")
                || (name.starts_with("python")
                    && unit.args().iter().any(|w| w.as_literal() == Some("pip")))
                || (name == "uv" && unit.args().first().and_then(Word::as_literal) == Some("pip"));
            if is_pip {
                let args = Args::parse(unit.args(), "", &["trusted-host"]);
                let mut hosts = args.values(&["trusted-host"]);
                let words = unit.args();
                for (k, w) in words.iter().enumerate() {
                    if w.as_literal()
                        .is_some_and(|t| t.ends_with(".trusted-host") || t == "trusted-host")
                        && let Some(v) = words.get(k + 1)
                    {
                        hosts.push(v.clone());
                    }
                }
                let all_local = !hosts.is_empty()
                    && hosts.iter().all(|h| {
                        h.literal().is_some_and(|t| {
                            t.split_whitespace().all(|host| {
                                net::is_loopback_url(host) || net::is_loopback_host(host)
                            })
                        })
                    });
                if !hosts.is_empty() && !all_local {
                    return weak(
                        "transport-security-weakening/pip-trusted-host",
                        format!(
                            "`pip --trusted-host {}` skips TLS certificate verification",
                            hosts.first().map(Word::display).unwrap_or_default()
                        ),
                    );
                }
            }
        }
    }
    None
}

fn git_ssl(unit: &Unit, urls: &[Word]) -> Option<HardDeny> {
    let args = unit.args();
    let deny_git = |key: &str| {
        deny(
            Category::TransportSecurityWeakening,
            "transport-security-weakening/git-ssl-verify-off",
            format!("git `{key}=false` skips TLS certificate verification"),
        )
    };
    let scoped_loopback = |scope: Option<&str>| scope.is_some_and(net::is_loopback_url);
    let mut k = 0;
    while let Some(word) = args.get(k) {
        let text = word.display();
        let setting = if text == "-c" {
            k += 1;
            args.get(k).map(Word::display)
        } else {
            text.strip_prefix("-c")
                .filter(|s| !s.is_empty())
                .map(str::to_owned)
        };
        if let Some(setting) = setting
            && let Some((key, value)) = setting.split_once('=')
            && let Some(scope) = ssl_verify_key(key)
            && falsey(value)
            && !scoped_loopback(scope)
            && !net::all_loopback(urls)
        {
            return deny_git(key);
        }
        if text == "config" {
            let rest: Vec<String> = args
                .get(k + 1..)
                .unwrap_or(&[])
                .iter()
                .map(Word::display)
                .collect();
            if rest
                .iter()
                .any(|t| t == "--unset" || t == "--unset-all" || t == "unset")
            {
                return None;
            }
            let mut operands = Vec::new();
            let mut j = 0;
            while let Some(t) = rest.get(j) {
                if matches!(
                    t.as_str(),
                    "--file" | "-f" | "--type" | "--blob" | "--default" | "--comment"
                ) {
                    j += 2;
                    continue;
                }
                if !t.starts_with('-') && t != "set" {
                    operands.push(t.clone());
                }
                j += 1;
            }
            if let [key, value, ..] = operands.as_slice()
                && let Some(scope) = ssl_verify_key(key)
                && falsey(value)
                && !scoped_loopback(scope)
            {
                return deny_git(key);
            }
            return None;
        }
        if !text.starts_with('-') {
            break;
        }
        k += 1;
    }
    None
}

// ---------------------------------------------------------------- path surfaces

/// Rules for a surface that names a path (`write`, `edit`, `read`, …).
pub(crate) fn path_surface(surface: &Surface, path: &str, env: &Env) -> Option<HardDeny> {
    let text = if path == "~" {
        env.home.clone()
    } else if let Some(rest) = path.strip_prefix("~/") {
        format!("{}/{rest}", env.home)
    } else {
        path.to_owned()
    };
    let cwds = vec![env.cwd.clone().unwrap_or_else(|| env.home.clone())];
    let effect = if super::surface_reads_only(surface) {
        Effect::Read { recursive: false }
    } else if *surface == Surface::Delete {
        Effect::Delete { recursive: true }
    } else {
        Effect::Write
    };
    for r in paths::resolve_text(&text, false, &cwds) {
        if *surface == Surface::Delete && wipe_target(env, &r) {
            return deny(
                Category::WipeRootOrHome,
                "wipe-root-or-home/delete-surface",
                format!("deletion of {}", describe_dir(env, &r)),
            );
        }
        if effect.modifies() && is_block_device(&r) {
            return deny(
                Category::DeviceDestroy,
                "device-destroy/write-to-device",
                format!("`{surface}` onto the block device `{}`", r.path),
            );
        }
        if let Some(what) = trust_hit(env, effect, &r) {
            return deny(
                Category::TrustBoundary,
                trust_rule(effect),
                format!("`{surface}` of `{}`, part of {what}", r.path),
            );
        }
        if effect == Effect::Write
            && let Some(what) = persistence_target(&r)
        {
            return deny(
                Category::AccessPersistence,
                if what.starts_with("SSH") {
                    "access-persistence/authorized-keys"
                } else {
                    "access-persistence/sudoers"
                },
                format!("`{surface}` of `{}`, adding {what}", r.path),
            );
        }
    }
    None
}
