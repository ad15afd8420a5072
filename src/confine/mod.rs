//! `vouch confine -- PROGRAM ARGS…`: runs a command so that it cannot
//! write, connect, signal or trace outside itself, gain privileges, or read
//! the sensitive paths — the enforcement behind an inert allow (design
//! §6.1b, docs/confine.md).
//!
//! The process works out what the command may read ([`plan`]), restricts
//! itself with the kernel's own mechanisms ([`kernel`]: Landlock, the
//! capability bounding set, `no_new_privs`, seccomp), leaves out the
//! environment variables that hold secrets ([`env`]) and replaces itself
//! with the command (`execve`): the process id, the working directory,
//! standard input, output and error, the exit status and every other
//! variable are the command's own, untouched.
//!
//! A guarantee this system cannot give (an older kernel, Landlock not
//! enabled, no seccomp) is never silently dropped: `confine` prints one line
//! naming what is missing and exits [`EXIT_CANNOT_CONFINE`] without running
//! anything. The decision side asks [`available`] first (once per process),
//! so an inert command is allowed — rewritten to its confined form
//! ([`form`]) — only where it can run confined.
//!
//! Where vouch's files are comes from the command line (`--home`,
//! `--config`) and `$HOME`, as under `vouch hook`: the caller's
//! environment is the harness's, which the project can set.

pub mod env;
pub mod filter;
pub mod form;
pub mod kernel;
pub mod plan;

use std::ffi::OsString;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

pub use form::{Confined, Locations};

/// Exit status when the command cannot be confined (nothing ran).
pub const EXIT_CANNOT_CONFINE: i32 = 125;

/// Exit status when the command could not be started (as a shell's: not
/// found or not executable).
pub const EXIT_NOT_FOUND: i32 = 127;

/// What a system lacks for confinement, or what went wrong applying it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Missing {
    #[error("confinement needs Linux (Landlock and seccomp); this system is not Linux")]
    NotLinux,
    #[error(
        "confinement needs Landlock ABI 6 (Linux 6.12 or later, with `landlock` in the boot's \
         `lsm=` list); this kernel offers ABI {found} ({why})"
    )]
    Landlock { found: u8, why: String },
    #[error("confinement needs seccomp filters (CONFIG_SECCOMP_FILTER); this kernel has none")]
    Seccomp,
    #[error("confinement has no seccomp filter for the architecture `{arch}`")]
    Arch { arch: &'static str },
    #[error("cannot work out where vouch's files are: {0}")]
    Paths(String),
    #[error("cannot read vouch's trusted configuration: {0}")]
    Config(String),
    #[error("cannot read the working directory: {0}")]
    Cwd(String),
    #[error("nothing to run: give the program after `--`")]
    NoProgram,
    #[error("cannot apply the confinement: {0}")]
    Apply(String),
}

/// Whether this system can confine, asked once per process (a few
/// syscalls). The decision allows an inert command only when it can.
pub fn available() -> Result<(), Missing> {
    static PROBED: OnceLock<Result<(), Missing>> = OnceLock::new();
    PROBED.get_or_init(kernel::probe).clone()
}

/// Where a confined command's bash is: the first of the usual places that
/// holds one, looked up once. The inert analysis reads commands as bash,
/// so bash runs them, whatever the harness's own shell.
pub fn bash() -> Option<&'static Path> {
    const PLACES: &[&str] = &[
        "/bin/bash",
        "/usr/bin/bash",
        "/usr/local/bin/bash",
        "/opt/homebrew/bin/bash",
        "/run/current-system/sw/bin/bash",
    ];
    static BASH: OnceLock<Option<PathBuf>> = OnceLock::new();
    BASH.get_or_init(|| {
        PLACES
            .iter()
            .map(Path::new)
            .find(|p| p.is_file())
            .map(Path::to_path_buf)
    })
    .as_deref()
}

/// `vouch confine` as the command line gives it.
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// `--home DIR`: vouch's files, as `VOUCH_HOME` would say.
    pub home: Option<PathBuf>,
    /// `--config FILE`: one more trusted overlay.
    pub config: Option<PathBuf>,
    /// The program and its arguments.
    pub argv: Vec<OsString>,
}

/// Runs the command confined. Returns only when it could not: the exit
/// status, after one line on standard error saying why.
pub fn run(opts: &Options) -> i32 {
    let (program, args) = match opts.argv.split_first() {
        Some(split) => split,
        None => return refuse(&Missing::NoProgram),
    };
    let prepared = match prepare(opts) {
        Ok(p) => p,
        Err(missing) => return refuse(&why_not(missing)),
    };
    if let Some(tree) = &prepared.plan.exhausted {
        eprintln!(
            "vouch confine: `{}` holds more entries than `inert.confine_max_entries` allows \
             searching for sensitive files; what was not searched cannot be read",
            tree.display()
        );
    }
    if let Err(missing) = kernel::apply(prepared.ruleset) {
        return refuse(&why_not(missing));
    }
    let error = std::process::Command::new(program)
        .args(args)
        .env_clear()
        .envs(prepared.env)
        .exec();
    eprintln!(
        "vouch confine: cannot run `{}`: {error}",
        Path::new(program).display()
    );
    EXIT_NOT_FOUND
}

/// What the system lacks, when that is why confining failed (the probe's
/// precise reason), else the failure itself. `vouch confine` does not probe
/// first: building and applying the restrictions fails on the same lacks.
fn why_not(failed: Missing) -> Missing {
    match available() {
        Err(lack) => lack,
        Ok(()) => failed,
    }
}

fn refuse(missing: &Missing) -> i32 {
    eprintln!("vouch confine: refusing to run the command unconfined: {missing}");
    EXIT_CANNOT_CONFINE
}

/// What is worked out before the process restricts itself.
struct Prepared {
    plan: plan::Plan,
    ruleset: landlock::RulesetCreated,
    env: Vec<(OsString, OsString)>,
}

/// The plan, its ruleset (built, not yet applied) and the environment.
/// One thread throughout: a second one for the environment's check cost
/// more (its start, its pages) than it saved, measured.
fn prepare(opts: &Options) -> Result<Prepared, Missing> {
    let vars: Vec<(OsString, OsString)> = std::env::vars_os().collect();
    let plan = plan_for(opts, &vars)?;
    let ruleset = kernel::rules(&plan)?;
    let (env, _dropped) = env::scrub(vars);
    Ok(Prepared { plan, ruleset, env })
}

/// What the command may read, from the trusted configuration and the
/// filesystem as it is now.
fn plan_for(opts: &Options, vars: &[(OsString, OsString)]) -> Result<plan::Plan, Missing> {
    let home = vars
        .iter()
        .find(|(n, _)| n == "HOME")
        .map(|(_, v)| PathBuf::from(v))
        .filter(|h| h.is_absolute());
    let lossy_home = home.as_ref().map(|h| h.display().to_string());
    let paths = crate::paths::hook_paths(
        opts.home.as_ref().map(|h| h.display().to_string()),
        lossy_home.clone(),
    )
    .map_err(Missing::Paths)?;
    let trusted = crate::config::load_trusted(&paths, opts.config.as_deref(), Vec::new())
        .map_err(|e| Missing::Config(e.to_string()))?;
    let cwd = std::env::current_dir().map_err(|e| Missing::Cwd(e.to_string()))?;
    let exe = crate::paths::current_exe();
    let mut hidden: Vec<PathBuf> = paths
        .protected_paths(lossy_home.as_deref().unwrap_or("/nonexistent"))
        .into_iter()
        .map(PathBuf::from)
        // Reading the binary reveals nothing; hiding it would split its
        // directory into a rule per program.
        .filter(|p| Some(p.as_path()) != exe)
        .collect();
    hidden.extend(deny_paths(
        &trusted.config.inert.deny_paths,
        home.as_deref(),
        &cwd,
    ));
    // The walk sees canonical paths: compare like with like.
    let hidden = hidden
        .into_iter()
        .map(|p| std::fs::canonicalize(&p).unwrap_or(p))
        .collect();
    let real_home = home
        .as_ref()
        .map(|h| std::fs::canonicalize(h).unwrap_or_else(|_| h.clone()));
    let path_var = vars
        .iter()
        .find(|(n, _)| n == "PATH")
        .map(|(_, v)| v.clone());
    let setting = plan::Setting {
        home: real_home.as_deref(),
        cwd: &cwd,
        path_var: path_var.as_deref(),
        hidden,
        root: plan::running_as_root(),
        max_entries: trusted.config.inert.confine_max_entries,
    };
    Ok(plan::plan(&setting))
}

/// `inert.deny_paths` made absolute: `~/…` against the home, relative
/// entries against the working directory. A `~` entry without a home
/// hides nothing more: the home is never readable anyway.
fn deny_paths(configured: &[String], home: Option<&Path>, cwd: &Path) -> Vec<PathBuf> {
    configured
        .iter()
        .filter_map(|entry| {
            if entry == "~" {
                home.map(Path::to_path_buf)
            } else if let Some(rest) = entry.strip_prefix("~/") {
                home.map(|h| h.join(rest))
            } else {
                Some(cwd.join(entry))
            }
        })
        .collect()
}
