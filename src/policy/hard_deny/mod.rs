//! Hard denies (design §6.1): deterministic rules that no model, override
//! or break glass can lift.
//!
//! [`check`] runs before anything else in the pipeline. For a command it
//! judges the units bash would run (see [`crate::shell`]), not the text; for
//! path-naming surfaces it judges `path` and `resolved_path`. Seven
//! categories, each with a stable id and a rule id per trigger:
//! `wipe-root-or-home`, `device-destroy`, `fork-bomb`, `trust-boundary`,
//! `credential-exfiltration`, `access-persistence`,
//! `transport-security-weakening`.
//!
//! Deny on doubt: a command that does not parse yields
//! [`Verdict::ParseFailed`] (never [`Verdict::Clear`]) unless a unit that did
//! parse is already a hard deny.

mod effects;
mod exfil;
mod net;
mod paths;
mod rules;

use std::collections::HashMap;

use crate::request::{Request, Surface};
use crate::shell::{self, Script};

use paths::Vars;

/// vouch's own files: the pipeline fills in the active locations (state
/// dir, user config dir or file, installed binary, `--config` files).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Protected {
    pub paths: Vec<String>,
}

/// What a check needs besides the request.
#[derive(Debug, Clone, Copy)]
pub struct Context<'a> {
    /// The request's home (or the service's HOME).
    pub home: &'a str,
    pub cwd: Option<&'a str>,
    pub protected: &'a Protected,
}

/// The hard-deny categories of design §6.1.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Category {
    WipeRootOrHome,
    DeviceDestroy,
    ForkBomb,
    TrustBoundary,
    CredentialExfiltration,
    AccessPersistence,
    TransportSecurityWeakening,
}

impl Category {
    pub fn id(&self) -> &'static str {
        match self {
            Category::WipeRootOrHome => "wipe-root-or-home",
            Category::DeviceDestroy => "device-destroy",
            Category::ForkBomb => "fork-bomb",
            Category::TrustBoundary => "trust-boundary",
            Category::CredentialExfiltration => "credential-exfiltration",
            Category::AccessPersistence => "access-persistence",
            Category::TransportSecurityWeakening => "transport-security-weakening",
        }
    }
}

/// One hard deny: category, the rule that fired, and why (naming the target).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HardDeny {
    pub category: Category,
    /// `category/rule`, e.g. `wipe-root-or-home/rm-recursive-force`.
    pub rule_id: &'static str,
    pub rationale: String,
}

/// The outcome of the hard-deny stage.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    Deny(HardDeny),
    /// No hard deny applies; later stages decide.
    Clear,
    /// The command could not be fully parsed and nothing that did parse is a
    /// hard deny. Never an allow: the pipeline sends it to the model with a
    /// `parse_failed` note or applies `failure_mode`.
    ParseFailed {
        error: String,
    },
}

/// Home, working directory and protected locations, normalized once.
pub(crate) struct Env {
    pub home: String,
    pub cwd: Option<String>,
    /// Lowercased, normalized absolute paths of vouch's own files.
    pub protected: Vec<String>,
}

impl Env {
    fn new(ctx: &Context<'_>) -> Self {
        let home = paths::normalize(ctx.home);
        let cwd = ctx.cwd.map(paths::normalize);
        let mut protected: Vec<String> = ctx
            .protected
            .paths
            .iter()
            .filter(|p| !p.trim().is_empty())
            .map(|p| {
                let absolute = if p.starts_with('/') {
                    p.clone()
                } else if let Some(rest) = p.strip_prefix("~/") {
                    format!("{home}/{rest}")
                } else {
                    format!("{}/{p}", cwd.as_deref().unwrap_or(&home))
                };
                paths::normalize(&absolute).to_ascii_lowercase()
            })
            .collect();
        for default in [".config/vouch", ".local/state/vouch"] {
            protected.push(paths::normalize(&format!("{home}/{default}")).to_ascii_lowercase());
        }
        protected.sort();
        protected.dedup();
        Env {
            home,
            cwd,
            protected,
        }
    }
}

/// One parsed command with what the rules need per unit.
pub(crate) struct Analysis<'s> {
    pub script: &'s Script,
    pub env: &'s Env,
    pub vars: Vars,
    /// Candidate working directories per unit (request `cwd` plus every
    /// directory an earlier `cd`/`pushd` in the command moved to).
    pub cwds: Vec<Vec<String>>,
    /// Path effects per unit with their resolved targets, computed once
    /// for all rules.
    pub effects: Vec<Vec<Touch>>,
}

/// One path effect of a unit: what, the word naming it, where it resolves.
pub(crate) struct Touch {
    pub effect: effects::Effect,
    pub word: shell::Word,
    pub targets: Vec<paths::Resolved>,
}

impl<'s> Analysis<'s> {
    fn new(script: &'s Script, env: &'s Env) -> Self {
        let mut vars: Vars = HashMap::new();
        // Command-prefix assignments (`D=/ cmd`, `sudo D=/`) do not set the
        // shell's variable, but counting them as candidate values only ever
        // adds denials, and spares reasoning about which shell sets what.
        let assigned = script
            .bindings
            .iter()
            .map(|b| &b.assignment)
            .chain(script.units.iter().flat_map(|u| u.assignments.iter()));
        for assignment in assigned {
            vars.entry(assignment.name.clone())
                .or_default()
                .push(assignment.value.clone());
        }
        // Variables the shell sets itself; assigned values above take part too.
        if let Some(cwd) = &env.cwd {
            vars.entry("PWD".to_owned())
                .or_default()
                .push(shell::Word::literal_text(cwd));
        }
        if let Some(user) = env.home.rsplit('/').next().filter(|u| !u.is_empty()) {
            for name in ["USER", "LOGNAME"] {
                vars.entry(name.to_owned())
                    .or_default()
                    .push(shell::Word::literal_text(user));
            }
        }
        let mut current: Vec<String> = env.cwd.iter().cloned().collect();
        let mut cwds = Vec::with_capacity(script.units.len());
        for unit in &script.units {
            cwds.push(current.clone());
            if matches!(unit.name(), Some("cd" | "pushd")) {
                let args: Vec<&shell::Word> = unit
                    .args()
                    .iter()
                    .filter(|w| !w.as_literal().is_some_and(|t| t.starts_with('-')))
                    .collect();
                let targets = match args.first() {
                    None => vec![env.home.clone()],
                    Some(word) => paths::resolve(word, &env.home, &current, &vars)
                        .into_iter()
                        .filter(|r| !r.glob)
                        .map(|r| r.path)
                        .collect(),
                };
                for target in targets {
                    if !current.contains(&target) {
                        current.push(target);
                    }
                }
            }
        }
        let effects = script
            .units
            .iter()
            .enumerate()
            .map(|(i, unit)| {
                let unit_cwds = cwds.get(i).map(Vec::as_slice).unwrap_or(&[]);
                effects::effects(unit)
                    .into_iter()
                    .map(|(effect, word)| Touch {
                        effect,
                        targets: paths::resolve(&word, &env.home, unit_cwds, &vars),
                        word,
                    })
                    .collect()
            })
            .collect();
        Analysis {
            script,
            env,
            vars,
            cwds,
            effects,
        }
    }

    /// The path effects of unit `index`.
    pub(crate) fn effects_of(&self, index: usize) -> &[Touch] {
        self.effects.get(index).map(Vec::as_slice).unwrap_or(&[])
    }

    /// Resolves a word of unit `index` to candidate absolute paths.
    pub(crate) fn resolve(&self, index: usize, word: &shell::Word) -> Vec<paths::Resolved> {
        let cwds = self.cwds.get(index).map(Vec::as_slice).unwrap_or(&[]);
        paths::resolve(word, &self.env.home, cwds, &self.vars)
    }
}

/// Runs every hard-deny rule over `request`.
pub fn check(request: &Request, ctx: &Context<'_>) -> Verdict {
    let env = Env::new(ctx);
    for path in [request.path.as_deref(), request.resolved_path.as_deref()]
        .into_iter()
        .flatten()
    {
        if let Some(deny) = rules::path_surface(&request.surface, path, &env) {
            return Verdict::Deny(deny);
        }
    }
    match request.command.as_deref() {
        Some(command) => check_command_env(command, &env),
        None => Verdict::Clear,
    }
}

/// Runs the command rules over one bash command.
pub fn check_command(command: &str, ctx: &Context<'_>) -> Verdict {
    check_command_env(command, &Env::new(ctx))
}

fn check_command_env(command: &str, env: &Env) -> Verdict {
    let script = shell::parse(command);
    let analysis = Analysis::new(&script, env);
    if let Some(deny) = rules::command(&analysis) {
        return Verdict::Deny(deny);
    }
    match script.error() {
        Some(error) => Verdict::ParseFailed {
            error: error.to_string(),
        },
        None => Verdict::Clear,
    }
}

/// Surfaces whose `path` is only read.
pub(crate) fn surface_reads_only(surface: &Surface) -> bool {
    match surface {
        Surface::Read => true,
        Surface::Bash
        | Surface::Write
        | Surface::Edit
        | Surface::Path
        | Surface::ExternalDirectory
        | Surface::Network
        | Surface::Mcp
        | Surface::Delete
        | Surface::GitPush
        | Surface::Custom(_) => false,
    }
}

#[cfg(test)]
mod tests;
