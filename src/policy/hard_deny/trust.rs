//! `trust-boundary`: any write, delete, move, mode change or link on vouch's
//! own files or an agent harness's permission configuration, reading
//! vouch's tokens and key, and path surfaces doing the same.
//!
//! Comparison ignores case (macOS file systems do). A pattern counts as
//! every path it can match: `~/.config/vou*/config.toml` reaches vouch's
//! configuration from above, `rm -rf ~/.c*` removes its parent. Harness
//! files and `.vouch` are also recognised by name wherever they are, but a
//! last component that matches every entry (`*`, `.[!.]*`, `.??*`) names
//! none of them: like `rm -rf DIR`, it reaches them only if they exist, and
//! the pipeline lists the project's `.vouch` among the protected locations
//! exactly when it exists.

use super::HardRule;
use crate::catalogue::{self, HarnessFiles};
use crate::request::Surface;
use crate::shell::spec::{Modifier, Role};
use crate::shell::{Seg, Text, Value};

use super::facts::{Env, Facts};
use super::paths::{self, Target, component_is};
use super::{HardDeny, deny};

/// How a role touches a protected path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Touch {
    Modify {
        whole_tree: bool,
    },
    /// A directory that receives new files.
    Into,
    Read {
        whole_tree: bool,
    },
    None,
}

fn touch_of(role: Role, recursive: bool) -> Touch {
    match role {
        Role::Write | Role::LinkTarget => Touch::Modify { whole_tree: false },
        Role::Delete | Role::Mode => Touch::Modify {
            whole_tree: recursive,
        },
        Role::MoveAway => Touch::Modify { whole_tree: true },
        Role::WriteInto => Touch::Into,
        Role::ReadTree => Touch::Read { whole_tree: true },
        Role::Read => Touch::Read {
            whole_tree: recursive,
        },
        Role::Upload | Role::Data | Role::FormData | Role::Header | Role::Variable => {
            Touch::Read { whole_tree: false }
        }
        Role::Url
        | Role::Route
        | Role::Script
        | Role::Chdir
        | Role::Value
        | Role::Names
        | Role::Program(_)
        | Role::Run
        | Role::Setting
        | Role::Select(_) => Touch::None,
    }
}

fn verb(role: Role) -> &'static str {
    match role {
        Role::Write => "writes",
        Role::WriteInto => "writes into",
        Role::Delete => "deletes",
        Role::MoveAway => "moves",
        Role::Mode => "changes permissions of",
        Role::LinkTarget => "links to",
        Role::Read
        | Role::ReadTree
        | Role::Upload
        | Role::Data
        | Role::FormData
        | Role::Header
        | Role::Variable => "reads",
        Role::Url
        | Role::Route
        | Role::Script
        | Role::Chdir
        | Role::Value
        | Role::Names
        | Role::Program(_)
        | Role::Run
        | Role::Setting
        | Role::Select(_) => "uses",
    }
}

fn rule(role: Role) -> HardRule {
    match role {
        Role::Write | Role::WriteInto => HardRule::TrustWrite,
        Role::Delete => HardRule::TrustDelete,
        Role::MoveAway => HardRule::TrustMove,
        Role::Mode => HardRule::TrustChmod,
        Role::LinkTarget => HardRule::TrustLink,
        _ => HardRule::TrustReadSecret,
    }
}

/// The target in lower case (protected paths are compared so).
fn lower(target: &Target) -> Target {
    match target {
        Target::Exact(p) => Target::Exact(p.to_ascii_lowercase()),
        Target::Partial(p) => Target::Partial(p.to_ascii_lowercase()),
        Target::Pattern(t) => {
            let mut out = Text::default();
            for seg in &t.segs {
                match seg {
                    Seg::Lit(s) => out.push_str(&s.to_ascii_lowercase()),
                    other => out.push(other.clone()),
                }
            }
            Target::Pattern(out)
        }
    }
}

/// What protected thing `touch` on `target` hits, if any; `copies`: the
/// command also writes or uploads (a copy or an archive of what it reads).
fn hit(f: &mut Facts<'_>, touch: Touch, target: &Target, copies: bool) -> Option<String> {
    let t = lower(target);
    // A copy of the reference, so the loops below may charge `f`.
    let env = f.env;
    let protected = &env.protected;
    match touch {
        Touch::None => None,
        Touch::Modify { whole_tree } => {
            for p in protected {
                if f.reaches(&t, p) || (whole_tree && f.covers(&t, p)) {
                    return Some(format!("vouch's own files (`{p}`)"));
                }
            }
            harness_config(&t, whole_tree).map(str::to_owned)
        }
        Touch::Into => {
            let home = f.env.home.to_ascii_lowercase();
            for p in protected {
                // Files of unknown names land in it: at or below a
                // protected location, or in its parent directories (except
                // home and `/`, which every unpacking reaches).
                let above =
                    f.covers(&t, p) && !matches!(&t, Target::Exact(d) if *d == home || d == "/");
                if f.reaches(&t, p) || above {
                    return Some(format!("vouch's own files (`{p}`)"));
                }
            }
            harness_dir(&t).map(str::to_owned)
        }
        Touch::Read { whole_tree } => {
            // A target inside the configuration alone reads no secret,
            // whatever protected directory holds it (`VOUCH_HOME`).
            let in_config = matches!(&t, Target::Exact(x)
                if env.config_only.iter().any(|c| paths::is_within(x, c)));
            for p in protected {
                // A token or key by name anywhere protected; a whole tree
                // where secrets live, and a copy or archive of any of it
                // (`grep -r` over the configuration alone reads no secret).
                let holds_secrets = !env.config_only.iter().any(|c| paths::is_within(p, c));
                if f.reaches(&t, p) && secret_name(&t) {
                    return Some(format!("vouch's secrets under `{p}`"));
                }
                if whole_tree
                    && (copies || (holds_secrets && !in_config))
                    && (f.reaches(&t, p) || f.covers(&t, p))
                {
                    return Some(format!("vouch's secrets under `{p}`"));
                }
            }
            None
        }
    }
}

/// vouch's tokens and HMAC key, by name.
fn secret_name(target: &Target) -> bool {
    let parts = target.components();
    let Some(last) = parts.last() else {
        return false;
    };
    match last.as_slice() {
        [Seg::Lit(s)] => s.ends_with(".token") || s == "hmac.key",
        _ => ["adapter.token", "operator.token", "hmac.key"]
            .iter()
            .any(|n| component_is(last, n)),
    }
}

/// An agent harness's permission configuration, by path shape: each
/// harness's [`HarnessFiles`] files (from the catalogue), Pi's, and `.vouch`.
fn harness_config(t: &Target, whole_tree: bool) -> Option<&'static str> {
    let parts = t.components();
    let n = parts.len();
    for (k, part) in parts.iter().enumerate() {
        let here = parts.get(k..).unwrap_or(&[]);
        if k + 1 == n && sweeps(part) {
            // `DIR/*`, `DIR/.[!.]*`: every entry of DIR, which names no
            // harness file or `.vouch` by itself (as `rm -rf DIR` does
            // not); the protected locations (the project's `.vouch` when
            // it exists) are still checked against the pattern.
            break;
        }
        if component_is(part, ".vouch") {
            return Some("the project's `.vouch/` configuration");
        }
        if let Some(what) = harnesses()
            .find(|p| p.files.iter().any(|file| path_is(here, file)))
            .map(|p| p.what)
        {
            return Some(what);
        }
        if pi_config(part, here.get(1..).unwrap_or(&[])) {
            return Some("Pi's permission configuration");
        }
        if k + 1 == n && harness_dir_name(part) {
            // Removing, moving, relinking or re-moding a whole harness
            // directory drops or replaces its rules.
            let _ = whole_tree;
            return Some("an agent harness's configuration directory");
        }
    }
    None
}

/// Every harness's protected configuration, in the catalogue's order.
fn harnesses() -> impl Iterator<Item = HarnessFiles> {
    catalogue::ALL.iter().map(|e| e.protected)
}

/// Can the components `here` be the protected path `pattern` exactly (a
/// final `**`: anything below it)?
fn path_is(here: &[Vec<Seg>], pattern: &[&str]) -> bool {
    match pattern.split_last() {
        Some((&"**", dir)) => {
            here.len() > dir.len() && here.iter().zip(dir).all(|(p, name)| name_is(p, name))
        }
        Some(_) => {
            here.len() == pattern.len()
                && here.iter().zip(pattern).all(|(p, name)| name_is(p, name))
        }
        None => false,
    }
}

/// One component against one protected name (ignoring case): `*` any
/// name, `a*b` a name with that start and end, else the name itself. A component that is a
/// pattern in the command counts when it can match the name (a `*` in a
/// protected name stands for nothing there: `settings*.json` is probed as
/// `settings.json`).
fn name_is(part: &[Seg], name: &str) -> bool {
    if name == "*" {
        return true;
    }
    // Targets are compared in lower case ([`lower`]), so the names are too
    // (nearly all are already: no allocation on this per-target path).
    let lowered;
    let name = if name.bytes().any(|b| b.is_ascii_uppercase()) {
        lowered = name.to_ascii_lowercase();
        lowered.as_str()
    } else {
        name
    };
    match (name.split_once('*'), part) {
        (Some((start, end)), [Seg::Lit(s)]) => {
            s.len() >= start.len() + end.len() && s.starts_with(start) && s.ends_with(end)
        }
        (Some((start, end)), _) => component_is(part, &format!("{start}{end}")),
        (None, _) => component_is(part, name),
    }
}

/// Pi's permission files under `.pi` (Pi has no `vouch hook` adapter: its
/// authorizer chain calls `vouch serve`).
fn pi_config(part: &[Seg], rest: &[Vec<Seg>]) -> bool {
    component_is(part, ".pi")
        && rest.iter().any(|c| {
            [
                "settings.json",
                "sandbox.json",
                "permissions.json",
                "pi-auto-review.json",
                "extensions",
            ]
            .iter()
            .any(|x| component_is(c, x))
                || matches!(c.as_slice(), [Seg::Lit(s)] if s.contains("permission"))
        })
}

/// A last component matching every entry, or every hidden one of three
/// characters or more (`*`, `.[!.]*`, `.??*`).
fn sweeps(part: &[Seg]) -> bool {
    paths::is_match_all(part)
        || [".ab", ".config", ".ssh", ".x.y", ".vouch", ".claude"]
            .iter()
            .all(|n| component_is(part, n))
}

fn harness_dir_name(part: &[Seg]) -> bool {
    component_is(part, ".pi") || harnesses().any(|p| p.dirs.iter().any(|d| component_is(part, d)))
}

/// A harness configuration directory receiving files: one a harness owns
/// whole, `.vouch`, or a directory whose every file is protected (a
/// protected path ending in `**`, such as Copilot's `.github/hooks`).
fn harness_dir(t: &Target) -> Option<&'static str> {
    let parts = t.components();
    let last = parts.last().filter(|l| !sweeps(l))?;
    let loads_every_file = || {
        harnesses().any(|p| {
            p.files.iter().any(|file| match file.split_last() {
                Some((&"**", dir)) if !dir.is_empty() => parts
                    .len()
                    .checked_sub(dir.len())
                    .and_then(|at| parts.get(at..))
                    .is_some_and(|tail| path_is(tail, dir)),
                Some(_) | None => false,
            })
        })
    };
    (harness_dir_name(last) || component_is(last, ".vouch") || loads_every_file())
        .then_some("an agent harness's configuration directory")
}

/// File names vouch keeps in its directories.
const VOUCH_FILES: &[&str] = &[
    "config.toml",
    "vouch.sqlite",
    "audit.sqlite",
    "state.sqlite",
    "vouch.sqlite-wal",
    "vouch.sqlite-shm",
    "audit.sqlite-wal",
    "audit.sqlite-shm",
    "hmac.key",
    "adapter.token",
    "operator.token",
];

/// Can path `x` (lower case, absolute) reach one of `actions` of find's
/// `expression`? A name test that cannot match it stops it (compared in
/// lower case, as protected paths are: a miss is sure, a match may be);
/// a path test too when the root was written absolute (find then names
/// `x` as written).
fn find_reaches(
    expression: &[crate::shell::Arg],
    actions: &[usize],
    x: &str,
    written_absolute: bool,
) -> bool {
    use crate::shell::find::{self, Truth};
    use crate::shell::glob;
    let base = x.rsplit('/').next().unwrap_or(x);
    let truth = |name: &str, test_args: &[Option<String>]| -> Truth {
        let Some(arg) = test_args.first().cloned().flatten() else {
            return Truth::Maybe;
        };
        let matches = |subject: &str| {
            glob::matches(
                &glob::pattern_of(&arg.to_ascii_lowercase()),
                subject,
                glob::Mode::STRING,
            )
        };
        match name {
            "-name" | "-iname" if !matches(base) => Truth::False,
            "-path" | "-ipath" | "-wholename" | "-iwholename"
                if written_absolute && !matches(x) =>
            {
                Truth::False
            }
            _ => Truth::Maybe,
        }
    };
    find::reached_actions(expression, &truth)
        .is_none_or(|reached| actions.iter().any(|a| reached.contains(a)))
}

/// `find ROOT … -delete` (or `-exec rm`) reaching one of vouch's files: a
/// root at or above a protected location whose tests let the location or
/// a file vouch keeps in it reach the action (find's operators followed,
/// [`crate::shell::find::reached_actions`]).
fn find_deletes(f: &mut Facts<'_>, i: usize) -> Option<HardDeny> {
    let cmd = f.command(i)?;
    if cmd.name() != Some("find") {
        return None;
    }
    let args = cmd.args();
    let spawns_remover = f.commands().any(|(j, c)| {
        super::wipe::descends_from(f, j, i)
            && c.name().is_some_and(|n| super::wipe::REMOVERS.contains(&n))
    });
    let first_expr = args
        .iter()
        .position(|a| {
            a.as_known()
                .is_some_and(|t| t.starts_with('-') && t.len() > 1)
        })
        .unwrap_or(args.len());
    let expression = args.get(first_expr..).unwrap_or(&[]);
    let actions: Vec<usize> = expression
        .iter()
        .enumerate()
        .filter(|(_, a)| match a.as_known() {
            Some("-delete") => true,
            Some("-exec" | "-execdir" | "-ok" | "-okdir") => spawns_remover,
            _ => false,
        })
        .map(|(at, _)| at)
        .collect();
    if actions.is_empty() {
        return None;
    }
    let skips_roots = crate::shell::find::skips_roots(expression);
    let cwd = cmd.cwd.clone();
    let roots: Vec<Value> = args
        .iter()
        .take(first_expr)
        .filter_map(|a| match a {
            crate::shell::Arg::Field(v) => Some(v.clone()),
            crate::shell::Arg::Unknown(_) => None,
        })
        .collect();
    let protected = f.env.protected.clone();
    for root in roots {
        let written_absolute = root
            .candidates()
            .iter()
            .all(|t| t.known_prefix().starts_with('/'));
        for target in paths::resolve(&root, &cwd) {
            let t = lower(&target);
            for p in &protected {
                if !f.covers(&t, p) && !f.reaches(&t, p) {
                    continue;
                }
                // The location itself and the files vouch keeps in it, as
                // find would name them.
                let mut found: Vec<String> = vec![p.clone()];
                found.extend(VOUCH_FILES.iter().map(|file| format!("{p}/{file}")));
                let hit = found.iter().any(|x| {
                    let at_root = matches!(&t, Target::Exact(r) if r == x);
                    !(at_root && skips_roots)
                        && find_reaches(expression, &actions, x, written_absolute)
                });
                if hit {
                    return deny(
                        HardRule::TrustDelete,
                        format!(
                            "`find … -delete` from `{}` reaches vouch's own files (`{p}`)",
                            target.display()
                        ),
                    );
                }
            }
        }
    }
    None
}

/// The files that stand for every file of a directory a harness owns
/// whole (`.codex/**`): the configuration names harnesses use.
const ANY_NAMES: &[&str] = &[
    "config.toml",
    "config.json",
    "settings.json",
    "hooks.json",
    "auth.json",
];

/// Concrete names for a protected file pattern (`settings*.json` is
/// `settings.json` and `settings.local.json`; `**` and `*` the names of
/// [`ANY_NAMES`]).
fn concrete_names(pattern: &[&str]) -> Vec<String> {
    let mut out = vec![String::new()];
    for part in pattern {
        let names: Vec<String> = match *part {
            "**" | "*" => ANY_NAMES.iter().map(|n| (*n).to_owned()).collect(),
            p if p.contains('*') => vec![p.replace('*', ""), p.replace('*', ".local")],
            p => vec![p.to_owned()],
        };
        out = out
            .iter()
            .flat_map(|prefix| {
                names.iter().map(move |n| {
                    if prefix.is_empty() {
                        n.clone()
                    } else {
                        format!("{prefix}/{n}")
                    }
                })
            })
            .collect();
    }
    out
}

/// Where a harness's protected files lie (lower case, absolute): under
/// home, under the working directory (the project), and under a project
/// in home (`~/work/.claude/settings.json`). Pi's files and the project's
/// `.vouch/` too.
fn harness_probes(env: &Env) -> Vec<String> {
    let mut files: Vec<String> = harnesses()
        .flat_map(|p| {
            p.files
                .iter()
                .flat_map(|f| concrete_names(f))
                .collect::<Vec<_>>()
        })
        .collect();
    files.extend(
        [
            ".pi/settings.json",
            ".pi/sandbox.json",
            ".pi/permissions.json",
            ".pi/agent/settings.json",
            ".vouch/config.toml",
        ]
        .map(str::to_owned),
    );
    let mut bases = vec![env.home.clone(), format!("{}/work", env.home)];
    bases.extend(env.cwd.clone());
    let mut out: Vec<String> = bases
        .iter()
        .flat_map(|b| {
            files
                .iter()
                .map(move |f| format!("{b}/{f}").to_ascii_lowercase())
        })
        .collect();
    out.sort();
    out.dedup();
    out
}

/// Can the file find names `written` (lower case, as find prints it: the
/// root as given, then the path below it) reach one of `actions`? Name
/// and path tests are read against it; any other test may go either way.
fn find_reaches_written(
    expression: &[crate::shell::Arg],
    actions: &[usize],
    written: &str,
) -> bool {
    use crate::shell::find::{self, Truth};
    use crate::shell::glob;
    let base = written.rsplit('/').next().unwrap_or(written);
    let truth = |name: &str, test_args: &[Option<String>]| -> Truth {
        let Some(arg) = test_args.first().cloned().flatten() else {
            return Truth::Maybe;
        };
        let matches = |subject: &str| {
            glob::matches(
                &glob::pattern_of(&arg.to_ascii_lowercase()),
                subject,
                glob::Mode::STRING,
            )
        };
        let verdict = |m: bool| if m { Truth::True } else { Truth::False };
        match name {
            "-name" | "-iname" => verdict(matches(base)),
            "-path" | "-ipath" | "-wholename" | "-iwholename" => verdict(matches(written)),
            _ => Truth::Maybe,
        }
    };
    find::reached_actions(expression, &truth)
        .is_none_or(|reached| actions.iter().any(|a| reached.contains(a)))
}

/// Does a name or path test of find's `expression` select the file find
/// names `written` (lower case)? That is what makes a selective find aim
/// at a protected file rather than sweep past it.
fn a_test_selects(expression: &[crate::shell::Arg], written: &str) -> bool {
    use crate::shell::glob;
    let base = written.rsplit('/').next().unwrap_or(written);
    expression.windows(2).any(|w| {
        let (Some(test), Some(arg)) = (
            w.first().and_then(|a| a.as_known()),
            w.get(1).and_then(|a| a.as_known()),
        ) else {
            return false;
        };
        let matches = |subject: &str| {
            glob::matches(
                &glob::pattern_of(&arg.to_ascii_lowercase()),
                subject,
                glob::Mode::STRING,
            )
        };
        match test {
            "-name" | "-iname" => matches(base),
            "-path" | "-ipath" | "-wholename" | "-iwholename" => matches(written),
            _ => false,
        }
    })
}

/// The roots of a `find` (its words before the expression, `.` when
/// none is named) and its expression.
fn find_roots(args: &[crate::shell::Arg]) -> (Vec<String>, &[crate::shell::Arg]) {
    let first_expr = args
        .iter()
        .position(|a| {
            a.as_known().is_some_and(|t| {
                (t.starts_with('-') && t.len() > 1) || matches!(t, "(" | "!" | ")" | ",")
            })
        })
        .unwrap_or(args.len());
    let expression = args.get(first_expr..).unwrap_or(&[]);
    let roots: Vec<String> = args
        .iter()
        .take(first_expr)
        .filter_map(|a| {
            a.as_known().map(|t| match t.trim_end_matches('/') {
                "" if t.starts_with('/') => "/".to_owned(),
                trimmed => trimmed.to_owned(),
            })
        })
        .filter(|t| !t.starts_with('-') && !t.is_empty())
        .collect();
    let roots = if roots.is_empty() {
        vec![".".to_owned()]
    } else {
        roots
    };
    (roots, expression)
}

/// Does a command the `find` at `i` runs (`-exec`, `-execdir`) change one
/// of the paths it found (below one of its `roots`)?
fn find_exec_changes(
    f: &Facts<'_>,
    i: usize,
    roots: &[String],
    expression: &[crate::shell::Arg],
) -> bool {
    let below_a_root = |text: &str| {
        let text = text.trim_end_matches('/');
        roots.iter().any(|r| {
            text == r
                || r == "/"
                || text
                    .strip_prefix(r.as_str())
                    .is_some_and(|rest| rest.starts_with('/'))
        })
    };
    let execdir = expression
        .iter()
        .any(|a| matches!(a.as_known(), Some("-execdir" | "-okdir")));
    f.commands().any(|(j, _)| {
        super::wipe::descends_from(f, j, i)
            && f.touches(j).iter().any(|t| {
                matches!(touch_of(t.role, false), Touch::Modify { .. } | Touch::Into)
                    && (execdir
                        || t.value
                            .candidates()
                            .iter()
                            .any(|c| below_a_root(c.known_prefix())))
            })
    })
}

/// `find ROOT … -delete`, or `-exec CMD … {}` where CMD changes what it is
/// given (`rm`, `sed -i`, `truncate`, `cp x {}`), when a protected harness
/// file below ROOT passes find's tests: a selective test that selects the
/// protected file itself (`-name 'settings*.json'`) is no protection
/// (`find ~/.claude -name 'settings*.json' -delete`). A find that only
/// sweeps (`find . -type f -delete`) reaches a harness file only if it
/// exists, like `rm -rf .`, unless its root names the harness's own
/// directory (`find ~/.codex -type f -delete`).
fn find_changes_harness(f: &mut Facts<'_>, i: usize) -> Option<HardDeny> {
    let cmd = f.command(i)?;
    if cmd.name() != Some("find") {
        return None;
    }
    let args = cmd.args();
    let (roots, expression) = find_roots(args);
    let exec_changes = find_exec_changes(f, i, &roots, expression);
    let actions: Vec<(usize, bool)> = expression
        .iter()
        .enumerate()
        .filter_map(|(at, a)| match a.as_known() {
            Some("-delete") => Some((at, true)),
            Some("-exec" | "-execdir" | "-ok" | "-okdir") if exec_changes => Some((at, false)),
            _ => None,
        })
        .collect();
    if actions.is_empty() {
        return None;
    }
    let positions: Vec<usize> = actions.iter().map(|(at, _)| *at).collect();
    let deletes = actions.iter().all(|(_, d)| *d);
    let skips_roots = crate::shell::find::skips_roots(expression);
    let cwd = cmd.cwd.clone();
    let probes = harness_probes(f.env);
    for root in &roots {
        for target in paths::resolve(&Value::known(root), &cwd) {
            let Target::Exact(resolved) = lower(&target) else {
                continue;
            };
            let root_is_harness = harness_config(&Target::Exact(resolved.clone()), true).is_some();
            for probe in &probes {
                if !paths::is_within(probe, &resolved) || (skips_roots && *probe == resolved) {
                    continue;
                }
                let below = probe.get(resolved.len()..).unwrap_or("");
                let written = format!("{}{below}", root.to_ascii_lowercase()).replace("//", "/");
                let named = Target::Exact(probe.clone());
                let Some(what) = harness_config(&named, false) else {
                    continue;
                };
                if !find_reaches_written(expression, &positions, &written)
                    || !(root_is_harness || a_test_selects(expression, &written))
                {
                    continue;
                }
                let probe = named.display();
                return deny(
                    if deletes {
                        HardRule::TrustDelete
                    } else {
                        HardRule::TrustWrite
                    },
                    format!(
                        "`find {root} …` {} `{probe}` (its tests select it), part of {what}",
                        if deletes { "deletes" } else { "changes" }
                    ),
                );
            }
        }
    }
    None
}

pub(super) fn check(f: &mut Facts<'_>) -> Option<HardDeny> {
    for i in 0..f.analysis.commands.len() {
        if let Some(d) = find_deletes(f, i).or_else(|| find_changes_harness(f, i)) {
            return Some(d);
        }
        let recursive = f
            .effects_of(i)
            .is_some_and(|e| e.has(Modifier::Recursive) || e.unknown_options);
        let name = f.command(i).and_then(|c| c.name()).unwrap_or("").to_owned();
        let recursive = recursive || name == "rimraf";
        let touches = f.touches(i);
        let copies = touches
            .iter()
            .any(|t| matches!(t.role, Role::Write | Role::WriteInto | Role::Upload));
        for touch in touches.iter() {
            let how = touch_of(touch.role, recursive);
            // A change to a `find` root whose name fails find's tests does
            // not happen; what lies below it is `find_deletes`' question.
            let unreached = match how {
                Touch::Modify { .. } => super::wipe::find_roots_unreached(f, i, &touch.value),
                Touch::Into | Touch::Read { .. } | Touch::None => Vec::new(),
            };
            for target in &touch.targets {
                if unreached.contains(target) {
                    continue;
                }
                if let Some(what) = hit(f, how, target, copies) {
                    return deny(
                        rule(touch.role),
                        format!(
                            "`{name}` {} `{}`, part of {what}",
                            verb(touch.role),
                            target.display()
                        ),
                    );
                }
            }
        }
    }
    None
}

/// Rules for a surface that names a path (`write`, `edit`, `read`, …).
pub(crate) fn path_surface(surface: &Surface, path: &str, env: &Env) -> Option<HardDeny> {
    let text = if path == "~" {
        env.home.clone()
    } else if let Some(rest) = path.strip_prefix("~/") {
        format!("{}/{rest}", env.home)
    } else {
        path.to_owned()
    };
    let cwd = Value::known(env.cwd.as_deref().unwrap_or(&env.home));
    let role = if super::surface_reads_only(surface) {
        Role::Read
    } else if *surface == Surface::Delete {
        Role::Delete
    } else {
        Role::Write
    };
    let analysis = crate::shell::Analysis::default();
    let limits = crate::shell::Limits::default();
    let mut f = Facts::new(&analysis, env, &limits);
    for target in paths::resolve(&Value::known(&text), &cwd) {
        if *surface == Surface::Delete
            && let Some(d) = super::wipe::delete_surface(env, &target)
        {
            return Some(d);
        }
        if role != Role::Read
            && let Some(device) = paths::may_be_block_device(&target)
        {
            return deny(
                HardRule::DeviceWriteToDevice,
                format!("`{surface}` onto the block device `{device}`"),
            );
        }
        let how = touch_of(role, *surface == Surface::Delete);
        if let Some(what) = hit(&mut f, how, &target, false) {
            return deny(
                rule(role),
                format!("`{surface}` of `{}`, part of {what}", target.display()),
            );
        }
        if role == Role::Write
            && let Some((rule, what)) = super::persist::persistence_target(&target)
        {
            return deny(
                rule,
                format!("`{surface}` of `{}`, adding {what}", target.display()),
            );
        }
    }
    None
}
