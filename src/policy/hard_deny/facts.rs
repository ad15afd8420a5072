//! What the rules read, computed once per request: the normalized home,
//! working directory and protected locations, and for every command of the
//! analysis its effects (from the command-spec table) with each value
//! resolved to absolute path targets in the directory the command runs in.

use std::cell::RefCell;
use std::rc::Rc;

use crate::shell::effects::{self, Effects};
use crate::shell::spec::Role;
use crate::shell::{Analysis, Command, Limits, Value, glob, path};

use super::Context;
use super::paths::{self, Target};

/// Home, working directory and protected locations, normalized once.
pub(crate) struct Env {
    pub home: String,
    pub cwd: Option<String>,
    /// Lowercased, normalized absolute paths of vouch's own files.
    pub protected: Vec<String>,
    /// Lowercased, normalized protected locations that hold configuration
    /// only (no tokens or key): a recursive read of them reads no secret.
    pub config_only: Vec<String>,
    /// Environment variables whose values vouch knows.
    pub known_vars: Vec<(String, String)>,
}

impl Env {
    /// Home, working directory and variables only: for the rules that
    /// never read the protected locations.
    pub(crate) fn without_protected(ctx: &Context<'_>) -> Self {
        Env {
            home: path::normalize(ctx.home),
            cwd: ctx.cwd.map(path::normalize),
            protected: Vec::new(),
            config_only: Vec::new(),
            known_vars: ctx.protected.vars.clone(),
        }
    }

    pub(crate) fn new(ctx: &Context<'_>) -> Self {
        let home = path::normalize(ctx.home);
        let cwd = ctx.cwd.map(path::normalize);
        let normalize = |p: &String| {
            let absolute = if p.starts_with('/') {
                p.clone()
            } else if let Some(rest) = p.strip_prefix("~/") {
                format!("{home}/{rest}")
            } else {
                format!("{}/{p}", cwd.as_deref().unwrap_or(&home))
            };
            let mut normal = path::normalize(&absolute);
            normal.make_ascii_lowercase();
            normal
        };
        let listed = |list: &[String]| -> Vec<String> {
            list.iter()
                .filter(|p| !p.trim().is_empty())
                .map(normalize)
                .collect()
        };
        let mut protected = listed(&ctx.protected.paths);
        let mut config_only = listed(&ctx.protected.config_only);
        let mut default_config = path::join(&home, ".config/vouch");
        default_config.make_ascii_lowercase();
        // The default configuration directory holds no secrets unless the
        // pipeline lists it (or something inside it, as a state directory
        // under `XDG_STATE_HOME=~/.config` would be) as more than
        // configuration.
        let holds_more = protected
            .iter()
            .any(|p| paths::is_within(p, &default_config) && !config_only.contains(p));
        if !holds_more {
            config_only.push(default_config.clone());
        }
        let mut default_state = path::join(&home, ".local/state/vouch");
        default_state.make_ascii_lowercase();
        protected.push(default_config);
        protected.push(default_state);
        protected.sort();
        protected.dedup();
        config_only.sort();
        config_only.dedup();
        Env {
            home,
            cwd,
            protected,
            config_only,
            known_vars: ctx.protected.vars.clone(),
        }
    }
}

/// One effect of one command, with its targets.
pub(crate) struct Touch {
    pub role: Role,
    pub value: Value,
    pub targets: Vec<Target>,
}

/// Everything the rules read about one analysed command line.
pub(crate) struct Facts<'a> {
    pub analysis: &'a Analysis,
    pub env: &'a Env,
    /// Per command, its effects.
    pub effects: Vec<Effects>,
    /// Per command, its effects' targets once [`Facts::touches`] resolved them.
    touched: RefCell<Vec<Option<Rc<[Touch]>>>>,
    /// Pattern-matching work left before the rules stop matching.
    work_left: u64,
    /// Budgets the rules themselves ran out of.
    pub incomplete: Vec<String>,
    /// Whether the conservative readings of the analysis are judged too
    /// ([`crate::shell::Command::conservative`]).
    conservative: bool,
}

impl<'a> Facts<'a> {
    pub(crate) fn new(analysis: &'a Analysis, env: &'a Env, limits: &Limits) -> Self {
        let effects = analysis.commands.iter().map(effects::effects).collect();
        Facts {
            analysis,
            env,
            effects,
            touched: RefCell::new(vec![None; analysis.commands.len()]),
            work_left: limits.max_match_work,
            incomplete: Vec::new(),
            conservative: false,
        }
    }

    /// The same facts with the analysis's conservative readings judged
    /// too.
    pub(crate) fn with_readings(mut self) -> Self {
        self.conservative = true;
        self
    }

    /// The commands the rules judge: those that run, and the conservative
    /// readings when [`Facts::with_readings`] asked for them.
    pub(crate) fn commands(&self) -> impl Iterator<Item = (usize, &'a Command)> {
        let readings = self.conservative;
        self.analysis
            .commands
            .iter()
            .enumerate()
            .filter(move |(_, c)| readings || !c.conservative)
    }

    /// Command `index`, when the rules judge it (a conservative reading
    /// only [`Facts::with_readings`]).
    pub(crate) fn command(&self, index: usize) -> Option<&'a Command> {
        self.analysis
            .commands
            .get(index)
            .filter(|c| self.conservative || !c.conservative)
    }

    pub(crate) fn effects_of(&self, index: usize) -> Option<&Effects> {
        self.command(index)?;
        self.effects.get(index)
    }

    /// The effects of command `index` with resolved targets, resolved once
    /// (every category's rules read them).
    pub(crate) fn touches(&self, index: usize) -> Rc<[Touch]> {
        if let Some(Some(done)) = self.touched.borrow().get(index) {
            return Rc::clone(done);
        }
        let (Some(cmd), Some(eff)) = (self.command(index), self.effects.get(index)) else {
            return Rc::from(Vec::new());
        };
        let touches: Rc<[Touch]> = eff
            .items
            .iter()
            .map(|(role, value)| Touch {
                role: *role,
                value: value.clone(),
                targets: paths::resolve(value, &cmd.cwd),
            })
            .collect();
        if let Some(slot) = self.touched.borrow_mut().get_mut(index) {
            *slot = Some(Rc::clone(&touches));
        }
        touches
    }

    /// Could `target` name exactly `path`?
    pub(crate) fn names(&mut self, target: &Target, path: &str) -> bool {
        match target {
            Target::Exact(p) => p == path,
            Target::Pattern(t) => self.charge(t, path.len()) && glob::path_may_match(t, path),
            Target::Partial(_) => false,
        }
    }

    /// Could `target` name `base` or something below it?
    pub(crate) fn reaches(&mut self, target: &Target, base: &str) -> bool {
        match target {
            Target::Exact(p) => paths::is_within(p, base),
            Target::Pattern(t) => self.charge(t, base.len()) && glob::may_reach(t, base),
            Target::Partial(_) => false,
        }
    }

    /// Could `target` name `path` or one of its ancestors (so that acting
    /// on the whole tree reaches `path`)?
    pub(crate) fn covers(&mut self, target: &Target, path: &str) -> bool {
        match target {
            Target::Exact(p) => paths::is_within(path, p),
            Target::Pattern(t) => {
                self.charge(t, path.len().saturating_mul(4)) && glob::may_cover(t, path)
            }
            Target::Partial(_) => false,
        }
    }

    /// Charges pattern-matching work; false (and recorded) once spent.
    pub(crate) fn charge(&mut self, pattern: &crate::shell::Text, subject_len: usize) -> bool {
        let cost = glob::cost(pattern, subject_len);
        if cost > self.work_left {
            if self.incomplete.is_empty() {
                self.incomplete.push(
                    "pattern matching against protected locations ran out of its budget (budget `analysis.max_match_work`)"
                        .to_owned(),
                );
            }
            return false;
        }
        self.work_left -= cost;
        true
    }
}
