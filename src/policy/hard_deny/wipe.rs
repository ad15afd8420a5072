//! `wipe-root-or-home`: recursive removal of `/`, the home directory, an
//! ancestor of it, or everything directly inside one of them — by `rm` in
//! any flag spelling, a `find` that deletes what it finds, `rsync --delete`
//! into it, or a `delete` surface.

use super::HardRule;
use crate::shell::spec::{Modifier, Role};
use crate::shell::{Arg, CommandKind, Seg, find, glob};

use super::facts::{Env, Facts};
use super::paths::{Target, is_match_all, is_within};
use super::{HardDeny, deny};

/// Commands that remove what they are given.
pub(super) const REMOVERS: &[&str] = &[
    "rm",
    "rimraf",
    "trash",
    "trash-put",
    "srm",
    "unlink",
    "rmdir",
    "shred",
];

/// `/`, home, or an ancestor of home.
fn is_critical_dir(env: &Env, path: &str) -> bool {
    path == "/" || is_within(&env.home, path)
}

/// The directories a wipe must not reach: `/`, each ancestor of home, home.
fn critical_dirs(env: &Env) -> Vec<String> {
    let mut out = vec!["/".to_owned()];
    let mut dir = String::new();
    for part in env.home.split('/').filter(|p| !p.is_empty()) {
        dir.push('/');
        dir.push_str(part);
        out.push(dir.clone());
    }
    out
}

/// Is the target root, home, an ancestor of home, or everything directly
/// inside one of them?
pub(super) fn wipe_target(f: &mut Facts<'_>, target: &Target) -> bool {
    match target {
        Target::Exact(p) => is_critical_dir(f.env, p),
        Target::Partial(_) => false,
        Target::Pattern(_) => {
            for dir in critical_dirs(f.env) {
                if f.names(target, &dir) {
                    return true;
                }
            }
            let parts = target.components();
            let Some((last, dirs)) = parts.split_last() else {
                return false;
            };
            if !is_match_all(last) {
                return false;
            }
            let mut dir = String::new();
            for d in dirs {
                match d.as_slice() {
                    [Seg::Lit(s)] => {
                        dir.push('/');
                        dir.push_str(s);
                    }
                    _ => return false,
                }
            }
            if dir.is_empty() {
                dir.push('/');
            }
            is_critical_dir(f.env, &dir)
        }
    }
}

fn describe(env: &Env, target: &Target) -> String {
    match target {
        Target::Exact(p) if p == "/" => "the root directory".to_owned(),
        Target::Exact(p) if *p == env.home => format!("the home directory `{}`", env.home),
        Target::Exact(p) => format!("`{p}`, which contains the home directory"),
        other => format!("everything matching `{}`", other.display()),
    }
}

pub(super) fn check(f: &mut Facts<'_>) -> Option<HardDeny> {
    let count = f.analysis.commands.len();
    for i in 0..count {
        let Some(cmd) = f.command(i) else { continue };
        let name = cmd.name().map(str::to_ascii_lowercase);
        let found = match name.as_deref() {
            Some(n) if REMOVERS.contains(&n) && n != "shred" => rm(f, i, n),
            // Any other command that removes trees (`cmake -E rm -r`).
            Some(n)
                if f.effects_of(i).is_some_and(|e| {
                    e.has(Modifier::Recursive) && e.items.iter().any(|(r, _)| *r == Role::Delete)
                }) =>
            {
                let n = n.to_owned();
                rm(f, i, &n)
            }
            Some("find") => find(f, i),
            Some("rsync") => rsync(f, i),
            Some("chmod" | "chown" | "chgrp") => no_preserve_root(f, i),
            Some(_) => None,
            None if cmd.kind == CommandKind::Unresolved => unknown_command(f, i),
            None => None,
        };
        if found.is_some() {
            return found;
        }
    }
    None
}

fn no_preserve_root(f: &Facts<'_>, i: usize) -> Option<HardDeny> {
    let cmd = f.command(i)?;
    let eff = f.effects_of(i)?;
    let given = eff
        .parsed
        .as_ref()
        .is_some_and(|p| p.has(&["no-preserve-root"]))
        || cmd
            .args()
            .iter()
            .any(|a| a.as_known() == Some("--no-preserve-root"));
    given.then(|| HardDeny {
        rule: HardRule::WipeNoPreserveRoot,
        rationale: format!(
            "`{} --no-preserve-root` disables the guard against acting on the root directory",
            cmd.name().unwrap_or("rm")
        ),
    })
}

fn rm(f: &mut Facts<'_>, i: usize, name: &str) -> Option<HardDeny> {
    if let Some(d) = no_preserve_root(f, i) {
        return Some(d);
    }
    let eff = f.effects_of(i)?;
    let recursive = name == "rimraf" || eff.has(Modifier::Recursive);
    let maybe_recursive = !recursive && eff.unknown_options;
    if !recursive && !maybe_recursive {
        return None;
    }
    let force = name == "rimraf" || eff.has(Modifier::Force);
    let touches = f.touches(i);
    for touch in touches.iter().filter(|t| t.role == Role::Delete) {
        let unreached = find_roots_unreached(f, i, &touch.value);
        for target in &touch.targets {
            if unreached.contains(target) {
                continue;
            }
            if wipe_target(f, target) {
                let (rule, what) = if maybe_recursive {
                    (
                        HardRule::WipeRmUnknownFlags,
                        "removal with flags nobody can read (they may be `-rf`)",
                    )
                } else if force {
                    (HardRule::WipeRmRecursiveForce, "recursive forced removal")
                } else {
                    (HardRule::WipeRmRecursive, "recursive removal")
                };
                return deny(
                    rule,
                    format!(
                        "{what} of {} (written `{}`)",
                        describe(f.env, target),
                        touch.value
                    ),
                );
            }
        }
    }
    None
}

/// The starting points (absolute) that `{}` of the `find -exec` running
/// command `i` cannot be: `value` is find's `{}` (a root `r` and `r/…`
/// below it) and `r`'s own name fails the tests before every `-exec`
/// (`find ~ -name node_modules -prune -exec rm -rf {} +`), or `-mindepth`
/// keeps find below its roots.
pub(super) fn find_roots_unreached(
    f: &Facts<'_>,
    i: usize,
    value: &crate::shell::Value,
) -> Vec<Target> {
    let Some(cmd) = f.command(i) else {
        return Vec::new();
    };
    let Some(finder) = cmd.parent.and_then(|p| f.command(p)) else {
        return Vec::new();
    };
    if finder.name() != Some("find") {
        return Vec::new();
    }
    let args = finder.args();
    let start = args
        .iter()
        .position(|a| {
            a.as_known().is_some_and(|t| {
                (t.starts_with('-') && t.len() > 1) || matches!(t, "(" | "!" | ")" | ",")
            })
        })
        .unwrap_or(args.len());
    let expression = args.get(start..).unwrap_or(&[]);
    let execs: Vec<usize> = expression
        .iter()
        .enumerate()
        .filter(|(_, a)| matches!(a.as_known(), Some("-exec" | "-execdir" | "-ok" | "-okdir")))
        .map(|(at, _)| at)
        .collect();
    let skips = find::skips_roots(expression);
    let candidates = value.candidates();
    let mut out = Vec::new();
    // `root/*` stands for every entry only when most entries reach an
    // `-exec` (`find ~ -exec rm -rf {} +`); a selective test before it
    // (`-name node_modules`, `-type f`) narrows it, as for `-delete`.
    if most_entries_reach(expression)
        .is_some_and(|reached| !execs.iter().any(|e| reached.contains(e)))
    {
        for c in candidates.iter().filter(|c| c.is_pattern() && !c.has_any()) {
            out.extend(super::paths::resolve(
                &crate::shell::Value::text(c.clone()),
                &cmd.cwd,
            ));
        }
    }
    for c in candidates {
        let Some(root) = c.as_known() else { continue };
        // Only the shape find gives `{}`: the root and a path below it.
        let below = candidates.iter().any(|b| {
            b.has_any() && b.known_prefix().trim_end_matches('/') == root.trim_end_matches('/')
        });
        if !below {
            continue;
        }
        let reaches = !skips
            && find::reached_actions(expression, &|n, a| find::root_truth(root, n, a))
                .is_none_or(|reached| execs.iter().any(|e| reached.contains(e)));
        if !reaches {
            for t in super::paths::resolve(&crate::shell::Value::known(root), &cmd.cwd) {
                if matches!(t, Target::Exact(_)) {
                    out.push(t);
                }
            }
        }
    }
    out
}

/// An unknown command name (`$RM -rf /`) with `rm`'s flags is judged as `rm`.
fn unknown_command(f: &mut Facts<'_>, i: usize) -> Option<HardDeny> {
    let cmd = f.command(i)?;
    let args: Vec<&str> = cmd.args().iter().filter_map(Arg::as_known).collect();
    let flags: String = args
        .iter()
        .filter(|a| a.starts_with('-') && !a.starts_with("--"))
        .flat_map(|a| a.chars().skip(1))
        .collect();
    let long = |n: &str| args.contains(&n);
    let recursive = flags.contains(['r', 'R']) || long("--recursive");
    let force = flags.contains('f') || long("--force");
    if !(recursive && force) {
        return None;
    }
    let cwd = cmd.cwd.clone();
    for a in cmd.args() {
        let Arg::Field(v) = a else { continue };
        if v.as_known().is_some_and(|t| t.starts_with('-')) {
            continue;
        }
        for target in super::paths::resolve(v, &cwd) {
            if wipe_target(f, &target) {
                return deny(
                    HardRule::WipeUnknownCommandRmFlags,
                    format!(
                        "a command whose name is runtime data, given `-rf`, on {}",
                        describe(f.env, &target)
                    ),
                );
            }
        }
    }
    None
}

/// Tests that make `find` act on some entries only.
const SELECTIVE: &[&str] = &[
    "-name",
    "-iname",
    "-path",
    "-ipath",
    "-wholename",
    "-iwholename",
    "-regex",
    "-iregex",
    "-newer",
    "-anewer",
    "-cnewer",
    "-newermt",
    "-mtime",
    "-atime",
    "-ctime",
    "-mmin",
    "-amin",
    "-cmin",
    "-size",
    "-user",
    "-group",
    "-uid",
    "-gid",
    "-perm",
    "-inum",
    "-samefile",
    "-links",
    "-lname",
    "-ilname",
    "-empty",
    "-nouser",
    "-nogroup",
    "-used",
    "-fstype",
    "-context",
];

/// The actions of find's `expression` most entries reach: a selective
/// test is false for most, so it guards what follows it, unless negated or
/// bypassed by `-o` (`! -name keep -delete`, `-name '*.log' -o -delete`),
/// or it matches every name (`-name '*'`). `None`: not read (all reached).
fn most_entries_reach(expression: &[Arg]) -> Option<Vec<usize>> {
    find::reached_actions(expression, &|name, test_args| {
        if !SELECTIVE.contains(&name) {
            return find::Truth::True;
        }
        let every_name = matches!(
            name,
            "-name" | "-iname" | "-path" | "-ipath" | "-wholename" | "-iwholename"
        ) && test_args.first().cloned().flatten().is_some_and(|p| {
            let pattern = glob::pattern_of(&p);
            EVERY_NAME
                .iter()
                .all(|n| glob::matches(&pattern, n, glob::Mode::STRING))
        });
        if every_name {
            find::Truth::True
        } else {
            find::Truth::False
        }
    })
}

/// Names a pattern that matches every name must match (`*`, `?*`).
const EVERY_NAME: &[&str] = &["a", "node_modules", ".cache", "x.log", "/home/dev", "Z 1"];

/// `find ROOT … -delete` or `-exec rm …` on root or home, where most
/// entries reach the action: no test that selects some entries only
/// stands before it (find's operators followed, [`find::reached_actions`]).
fn find(f: &mut Facts<'_>, i: usize) -> Option<HardDeny> {
    let cmd = f.command(i)?;
    let args = cmd.args();
    let mut k = 0;
    while let Some(t) = args.get(k).and_then(Arg::as_known) {
        match t {
            "-H" | "-L" | "-P" => k += 1,
            "-D" => k += 2,
            "--" => {
                k += 1;
                break;
            }
            _ if t.starts_with("-O") => k += 1,
            _ => break,
        }
    }
    let mut roots = Vec::new();
    while let Some(a) = args.get(k) {
        if a.as_known().is_some_and(|t| {
            (t.starts_with('-') && t.len() > 1) || matches!(t, "(" | "!" | ")" | ",")
        }) {
            break;
        }
        if let Arg::Field(v) = a {
            roots.push(v.clone());
        }
        k += 1;
    }
    if roots.is_empty() {
        roots.push(crate::shell::Value::known("."));
    }
    let expression = args.get(k..).unwrap_or(&[]);
    let reached = most_entries_reach(expression);
    let reaches = |word: &[&str]| {
        expression.iter().enumerate().any(|(at, a)| {
            a.as_known().is_some_and(|t| word.contains(&t))
                && reached.as_ref().is_none_or(|r| r.contains(&at))
        })
    };
    let deletes = reaches(&["-delete"]);
    let spawns_remover = reaches(&["-exec", "-execdir", "-ok", "-okdir"])
        && f.commands().any(|(j, c)| {
            descends_from(f, j, i)
                && c.name()
                    .is_some_and(|n| REMOVERS.contains(&n.to_ascii_lowercase().as_str()))
        });
    let action = if deletes {
        "-delete"
    } else if spawns_remover {
        "-exec rm"
    } else {
        return None;
    };
    let cwd = cmd.cwd.clone();
    for root in &roots {
        for target in super::paths::resolve(root, &cwd) {
            if wipe_target(f, &target) {
                return deny(
                    HardRule::WipeFindDelete,
                    format!("`find {action}` starting at {}", describe(f.env, &target)),
                );
            }
        }
    }
    None
}

/// Is command `j` run (directly or through wrappers) by command `i`?
pub(super) fn descends_from(f: &Facts<'_>, j: usize, i: usize) -> bool {
    let mut at = j;
    for _ in 0..64 {
        match f.command(at).and_then(|c| c.parent) {
            Some(p) if p == i => return true,
            Some(p) => at = p,
            None => return false,
        }
    }
    false
}

/// `rsync --delete SRC DEST` with DEST root or home.
fn rsync(f: &mut Facts<'_>, i: usize) -> Option<HardDeny> {
    let eff = f.effects_of(i)?;
    let parsed = eff.parsed.as_ref()?;
    // `-n`/`--dry-run` lists what would be deleted and deletes nothing.
    if parsed.has(&["n", "dry-run"]) {
        return None;
    }
    let deletes = parsed.items.iter().any(|item| {
        matches!(item, crate::shell::options::Item::Opt { name: crate::shell::options::OptName::Long(l), .. } if l.starts_with("del") || *l == "remove-source-files")
    });
    if !deletes {
        return None;
    }
    let touches = f.touches(i);
    let dest = touches.iter().find(|t| t.role == Role::Write)?;
    if dest.value.candidates().iter().any(|c| {
        let head = c.known_prefix();
        head.split_once(':')
            .is_some_and(|(h, _)| !h.is_empty() && !h.contains('/'))
    }) {
        return None;
    }
    for target in &dest.targets {
        if wipe_target(f, target) {
            return deny(
                HardRule::WipeRsyncDelete,
                format!(
                    "`rsync --delete` into {} removes everything not in the source",
                    describe(f.env, target)
                ),
            );
        }
    }
    None
}

/// A `delete` surface on root or home.
pub(super) fn delete_surface(f_env: &Env, target: &Target) -> Option<HardDeny> {
    match target {
        Target::Exact(p) if is_critical_dir(f_env, p) => deny(
            HardRule::WipeDeleteSurface,
            format!("deletion of {}", describe(f_env, target)),
        ),
        _ => None,
    }
}
