//! Hard denies (design §6.1): deterministic rules that no model, override
//! or break glass can lift.
//!
//! [`check`] runs before anything else in the pipeline. For a command it
//! judges the commands bash would run (see [`crate::shell::analyze`]): each
//! argv after expansion, in the directory it runs in, with the effects the
//! command-spec table gives it; for path-naming surfaces it judges `path`
//! and `resolved_path`. Seven categories, each with a stable id and a rule
//! per trigger ([`HardRule`], registered in [`crate::rules`] and listed in
//! `docs/rules.md`): `wipe-root-or-home`, `device-destroy`, `fork-bomb`,
//! `trust-boundary`, `credential-exfiltration`, `access-persistence`,
//! `transport-security-weakening`.
//!
//! A value bash only knows at run time never matches a catastrophic target
//! by itself; a candidate set is checked whole. When the command does not
//! parse, or the analysis ran out of a budget, or runs code vouch does not
//! read, and nothing that was read is a hard deny, the verdict is
//! [`DenyVerdict::ParseFailed`] or [`DenyVerdict::Incomplete`] — never
//! [`DenyVerdict::Clear`]: the request goes to the reviewer with a note.

mod container;
mod device;
mod exfil;
mod facts;
mod fork;
mod net;
mod opaque;
mod paths;
mod persist;
mod producers;
mod startup;
mod switches;
mod text;
mod transport;
mod trust;
mod wipe;

use crate::request::{Request, Surface};
use crate::shell::{self, Limits};

pub(crate) use facts::{Env, Facts};

/// vouch's own files: the pipeline fills in the active locations (state
/// dir, user config dir or file, installed binary, `--config` files).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct VouchFiles {
    pub paths: Vec<String>,
    /// The entries of `paths` that hold configuration only, never vouch's
    /// tokens or key (the user configuration file and directory when the
    /// state directory is not inside them): reading them, even a whole
    /// tree, is not a secret read. Any other entry is taken to hold secrets.
    pub config_only: Vec<String>,
    /// Environment variables whose values vouch knows (`VOUCH_HOME`): the
    /// analysis expands them to these values.
    pub vars: Vec<(String, String)>,
}

/// What a check needs besides the request.
#[derive(Debug, Clone, Copy)]
pub struct DenyContext<'a> {
    /// The request's home (or the service's HOME).
    pub home: &'a str,
    pub cwd: Option<&'a str>,
    pub protected: &'a VouchFiles,
    /// Budgets of the bash analysis (trusted configuration, `[analysis]`).
    pub limits: &'a Limits,
}

pub use crate::rules::{Category, HardRule};

/// One hard deny: the rule that fired (its category is part of it) and
/// why, naming the target.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HardDeny {
    pub rule: HardRule,
    pub rationale: String,
}

impl HardDeny {
    pub fn category(&self) -> Category {
        self.rule.category()
    }

    /// `category/rule`, e.g. `wipe-root-or-home/rm-recursive-force`.
    pub fn rule_id(&self) -> &'static str {
        self.rule.as_str()
    }
}

/// The outcome of the hard-deny stage.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DenyVerdict {
    Deny(HardDeny),
    /// No hard deny applies; later stages decide.
    Clear,
    /// The command could not be fully parsed and nothing that did parse is a
    /// hard deny. Never an allow: the pipeline sends it to the model with a
    /// `parse_failed` note or applies `failure_mode`.
    ParseFailed {
        error: String,
    },
    /// The analysis stopped at a budget, or the command runs code a static
    /// reading cannot follow (an interpreter one-liner, a computed script),
    /// and nothing that was read is a hard deny. Handled like
    /// [`DenyVerdict::ParseFailed`], with an `analysis_incomplete` note.
    Incomplete {
        note: String,
    },
}

pub(crate) fn deny(rule: HardRule, rationale: String) -> Option<HardDeny> {
    Some(HardDeny { rule, rationale })
}

/// Runs every hard-deny rule over `request`.
pub fn check(request: &Request, ctx: &DenyContext<'_>) -> DenyVerdict {
    check_analysed(request, ctx, None)
}

/// The one analysis of a request's command (design §6.1, issue 30: read
/// once): in the request's home and working directory, with the variables
/// vouch knows and the configured budgets. The hard denies, redaction and
/// the audit's template all read this value; nothing analyses the same
/// text again.
pub fn analyze_command(command: &str, ctx: &DenyContext<'_>) -> shell::Analysis {
    analyze(command, &Env::without_protected(ctx), ctx.limits)
}

/// [`check`] with the request's command already analysed
/// ([`analyze_command`] of `request.command` in the same context); `None`
/// analyses it here.
pub fn check_analysed(
    request: &Request,
    ctx: &DenyContext<'_>,
    analysis: Option<&shell::Analysis>,
) -> DenyVerdict {
    let env = Env::new(ctx);
    for path in [request.path.as_deref(), request.resolved_path.as_deref()]
        .into_iter()
        .flatten()
    {
        if let Some(deny) = trust::path_surface(&request.surface, path, &env) {
            return DenyVerdict::Deny(deny);
        }
    }
    match (request.command.as_deref(), analysis) {
        (Some(command), Some(analysis)) => judge(analysis, &env, ctx.limits, 0, Some(command)),
        (Some(command), None) => check_command_env(command, &env, ctx.limits, 0),
        (None, _) => DenyVerdict::Clear,
    }
}

/// Runs the command rules over one bash command.
pub fn check_command(command: &str, ctx: &DenyContext<'_>) -> DenyVerdict {
    check_command_env(command, &Env::new(ctx), ctx.limits, 0)
}

/// The shell analysis of `command` in `env` (its home, directory and
/// known variables).
fn analyze(command: &str, env: &Env, limits: &Limits) -> shell::Analysis {
    let vars: Vec<(&str, &str)> = env
        .known_vars
        .iter()
        .map(|(k, v)| (k.as_str(), v.as_str()))
        .collect();
    let shell_env = shell::ShellEnv {
        cwd: env.cwd.as_deref(),
        home: &env.home,
        vars: &vars,
    };
    shell::analyze(command, &shell_env, limits)
}

/// How many levels of shell strings inside interpreter code are judged.
const MAX_EMBEDDED_DEPTH: u32 = 2;

fn check_command_env(command: &str, env: &Env, limits: &Limits, depth: u32) -> DenyVerdict {
    judge(
        &analyze(command, env, limits),
        env,
        limits,
        depth,
        Some(command),
    )
}

/// The command rules over one analysis. Shell code found inside
/// interpreter code (`python -c 'os.system("…")'`) is other text: it gets
/// an analysis of its own, at most [`MAX_EMBEDDED_DEPTH`] levels down.
fn judge(
    analysis: &shell::Analysis,
    env: &Env,
    limits: &Limits,
    depth: u32,
    text: Option<&str>,
) -> DenyVerdict {
    let mut facts = Facts::new(analysis, env, limits);
    if let Some(deny) = rules(&mut facts) {
        return DenyVerdict::Deny(deny);
    }
    if analysis.commands.iter().any(|c| c.conservative) {
        let mut readings = Facts::new(analysis, env, limits).with_readings();
        if let Some(deny) = rules(&mut readings) {
            return DenyVerdict::Deny(conservative(deny));
        }
    }
    if depth < MAX_EMBEDDED_DEPTH
        && let Some(deny) = embedded_denies(&facts, env, limits, depth)
    {
        return DenyVerdict::Deny(deny);
    }
    // A command whose name is runtime data, or code vouch cannot follow
    // (a shell fed a script nobody can read, an interpreter's `system(c)`
    // of a variable, an awk program running its input), may run any
    // string the text holds (an array element, a regex capture, a value
    // `read` split, a here-string, an `-v` assignment).
    let opaque_notes = opaque::notes(&facts);
    if depth == 0
        && (analysis
            .commands
            .iter()
            .any(|c| c.kind == shell::CommandKind::Unresolved)
            || !opaque_notes.is_empty()
            || !analysis.notes.is_empty())
        && let Some(text) = text
    {
        for string in text::code_readings(text) {
            if let DenyVerdict::Deny(deny) = check_command_env(&string, env, limits, depth + 1) {
                let mut deny = conservative(deny);
                deny.rationale = format!(
                    "code vouch cannot follow may run the string `{string}`: {}",
                    deny.rationale
                );
                return DenyVerdict::Deny(deny);
            }
        }
    }
    // What the analysis could not read whole (a syntax error, a budget)
    // is read as text: each command line the text spells out after a
    // program the hard denies name.
    if depth == 0
        && (!analysis.errors.is_empty() || !analysis.incomplete.is_empty())
        && let Some(text) = text
    {
        for segment in text::segments(text) {
            if let DenyVerdict::Deny(deny) = check_command_env(&segment, env, limits, depth + 1) {
                let mut deny = conservative(deny);
                deny.rationale = format!("in the text `{segment}`: {}", deny.rationale);
                return DenyVerdict::Deny(deny);
            }
        }
    }
    if let Some(error) = analysis.errors.first() {
        return DenyVerdict::ParseFailed {
            error: error.to_string(),
        };
    }
    let mut notes: Vec<String> = analysis
        .incomplete
        .iter()
        .map(ToString::to_string)
        .collect();
    notes.extend(facts.incomplete.iter().cloned());
    notes.extend(analysis.notes.iter().cloned());
    notes.extend(opaque_notes);
    match notes.first() {
        Some(_) => DenyVerdict::Incomplete {
            note: notes.join("; "),
        },
        None => DenyVerdict::Clear,
    }
}

/// Hard denies in code the command hands to others: interpreters'
/// shell strings, containers' commands on their mounts, text a later shell
/// runs.
fn embedded_denies(facts: &Facts<'_>, env: &Env, limits: &Limits, depth: u32) -> Option<HardDeny> {
    for script in opaque::embedded_scripts(facts) {
        if let DenyVerdict::Deny(mut d) = check_command_env(&script, env, limits, depth + 1) {
            d.rationale = format!("code handed to a shell (`{script}`): {}", d.rationale);
            return Some(d);
        }
    }
    // What a container runs on the directories it mounts.
    for script in container::scripts(facts) {
        if let DenyVerdict::Deny(d) = check_command_env(&script, env, limits, depth + 1) {
            let mut d = conservative(d);
            d.rationale = format!(
                "a container runs `{script}` on this machine's mounted paths: {}",
                d.rationale
            );
            return Some(d);
        }
    }
    // Text a later shell runs: a startup file's new lines, an alias.
    for script in startup::later_scripts(facts) {
        if let DenyVerdict::Deny(mut d) = check_command_env(&script, env, limits, depth + 1) {
            d.rationale = format!(
                "code left for later shells to run (`{script}`): {}",
                d.rationale
            );
            return Some(d);
        }
    }
    None
}

/// A hard deny found only in a conservative reading: the category's
/// conservative rule, and the rule that fired named in the rationale.
fn conservative(deny: HardDeny) -> HardDeny {
    HardDeny {
        rule: deny.category().conservative_rule(),
        rationale: format!(
            "read conservatively (vouch cannot follow what runs here, so it judges what may run): {} (`{}`)",
            deny.rationale,
            deny.rule_id()
        ),
    }
}

/// The longest command [`check_before_protected`] answers: the heaviest
/// plain lines of this length take a few hundred microseconds (`cargo bench
/// --bench deterministic`, "early hard-deny check").
pub const EARLY_COMMAND_BYTES: usize = 256;

/// The budgets whose only stop is the clock: the one thing that can make
/// two analyses of the same command with the same limits differ.
const CLOCK_BUDGETS: [&str; 2] = ["parse_timeout_us", "analysis_timeout_us"];

/// The hard deny [`check`] gives `request` whatever vouch's protected
/// locations are (`ctx.protected.paths` is not read), when it can be known
/// without them; `None` means "ask [`check`]", never "clear".
///
/// That is a command-only request (no `path` or `resolved_path`, which the
/// path rules judge against the protected locations) whose command is a
/// plain command line ([`shell::is_plain_command_line`]) of at most
/// [`EARLY_COMMAND_BYTES`], denied at its top
/// level by one of the categories [`rules`] runs before the first one that
/// reads them ([`before_protected`]). An analysis the clock stopped (a
/// backstop a plain line does not reach) is `None`: the clock is the one
/// thing that could make it differ from [`check`]'s.
pub fn check_before_protected(request: &Request, ctx: &DenyContext<'_>) -> Option<HardDeny> {
    match check_early(request, ctx) {
        Early::Deny(deny, _) => Some(deny),
        Early::Undecided(_) => None,
    }
}

/// What [`check_early`] found.
#[derive(Debug)]
pub enum Early {
    /// The hard deny [`check`] would give, and the analysis it was found
    /// in (the audit reads it too).
    Deny(HardDeny, shell::Analysis),
    /// Ask [`check`] (never "clear"), with the request's analysis when one
    /// was made ([`analyze_command`]'s, to hand to [`check_analysed`] and
    /// the stages after it rather than analyse the command again).
    Undecided(Option<shell::Analysis>),
}

/// [`check_before_protected`], keeping the analysis it made. An analysis
/// the clock stopped is not kept: the full check makes its own, the one
/// case of a second analysis (a backstop a plain line does not reach).
pub fn check_early(request: &Request, ctx: &DenyContext<'_>) -> Early {
    if request.path.is_some() || request.resolved_path.is_some() {
        return Early::Undecided(None);
    }
    let Some(command) = request.command.as_deref() else {
        return Early::Undecided(None);
    };
    // Only a short line with nothing to expand: the clock is a backstop,
    // not the bound (one step of an expansion can outlast any deadline).
    if command.len() > EARLY_COMMAND_BYTES || !shell::is_plain_command_line(command) {
        return Early::Undecided(None);
    }
    let env = Env::without_protected(ctx);
    let analysis = analyze(command, &env, ctx.limits);
    if analysis
        .incomplete
        .iter()
        .any(|i| CLOCK_BUDGETS.contains(&i.budget))
    {
        return Early::Undecided(None);
    }
    match before_protected(&mut Facts::new(&analysis, &env, ctx.limits)) {
        Some(deny) => Early::Deny(deny, analysis),
        None => Early::Undecided(Some(analysis)),
    }
}

/// The categories that never read the protected locations, in [`rules`]'
/// order: what they find does not depend on them.
fn before_protected(f: &mut Facts<'_>) -> Option<HardDeny> {
    wipe::check(f)
        .or_else(|| device::check(f))
        .or_else(|| fork::check(f))
}

/// All command rules, most destructive category first.
fn rules(f: &mut Facts<'_>) -> Option<HardDeny> {
    before_protected(f)
        .or_else(|| trust::check(f))
        .or_else(|| persist::check(f))
        .or_else(|| exfil::check(f))
        .or_else(|| transport::check(f))
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
