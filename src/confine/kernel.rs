//! The kernel's mechanisms, applied to this process before it runs the
//! command: Landlock (files, TCP, scoping), the capability bounding set,
//! `no_new_privs`, and a seccomp filter.
//!
//! Everything here restricts the calling thread; `vouch confine` runs it on
//! its main thread and then replaces itself with the command (`execve`),
//! which keeps exactly that thread's restrictions.

use std::fs::File;
use std::os::fd::AsRawFd;
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;

use landlock::{
    ABI, Access, AccessFs, AccessNet, BitFlags, CompatLevel, Compatible, PathBeneath, Ruleset,
    RulesetAttr, RulesetCreated, RulesetCreatedAttr, RulesetStatus, Scope,
};

use super::Missing;
use super::plan::{Access as Grant, Plan};

/// The Landlock ABI every guarantee needs: 6 (Linux 6.12) scopes signals
/// and abstract Unix sockets to the sandbox; its filesystem rights (5:
/// device ioctls, 3: truncation) and TCP rules (4) come with it.
pub const REQUIRED_ABI: ABI = ABI::V6;

/// Checks, without restricting anything, that this system can confine:
/// Linux, Landlock at [`REQUIRED_ABI`], seccomp filters. Cheap (a few
/// syscalls and one small `/proc` read); callers cache it.
pub fn probe() -> Result<(), Missing> {
    if !cfg!(target_os = "linux") {
        return Err(Missing::NotLinux);
    }
    landlock_ruleset().map_err(|why| Missing::Landlock {
        found: found_abi(),
        why,
    })?;
    seccomp_available()?;
    super::filter::program()?;
    Ok(())
}

/// The ruleset every confined command gets, before its path rules.
fn landlock_ruleset() -> Result<RulesetCreated, String> {
    Ruleset::default()
        .set_compatibility(CompatLevel::HardRequirement)
        .handle_access(AccessFs::from_all(REQUIRED_ABI))
        .and_then(|r| r.handle_access(AccessNet::from_all(REQUIRED_ABI)))
        .and_then(|r| r.scope(Scope::from_all(REQUIRED_ABI)))
        .and_then(|r| r.create())
        .map_err(|e| e.to_string())
}

/// The highest Landlock ABI this kernel offers (0: none), for messages.
fn found_abi() -> u8 {
    let abis = [
        (ABI::V6, 6),
        (ABI::V5, 5),
        (ABI::V4, 4),
        (ABI::V3, 3),
        (ABI::V2, 2),
        (ABI::V1, 1),
    ];
    for (abi, n) in abis {
        let works = Ruleset::default()
            .set_compatibility(CompatLevel::HardRequirement)
            .handle_access(AccessFs::from_all(abi))
            .and_then(|r| r.create())
            .is_ok();
        if works {
            return n;
        }
    }
    0
}

/// seccomp filters are there when `/proc/self/status` shows the `Seccomp`
/// field (`CONFIG_SECCOMP`) and filters are counted (`CONFIG_SECCOMP_FILTER`).
fn seccomp_available() -> Result<(), Missing> {
    let status = std::fs::read_to_string("/proc/self/status").map_err(|_| Missing::Seccomp)?;
    let has = |field: &str| status.lines().any(|l| l.starts_with(field));
    match has("Seccomp:") && has("Seccomp_filters:") {
        true => Ok(()),
        false => Err(Missing::Seccomp),
    }
}

/// The Landlock ruleset with the plan's grants, not yet applied (any
/// thread may build it; [`apply`] restricts the thread that calls it).
pub fn rules(plan: &Plan) -> Result<RulesetCreated, Missing> {
    let ruleset = landlock_ruleset().map_err(|why| Missing::Landlock {
        found: found_abi(),
        why,
    })?;
    add_rules(ruleset, plan)
}

/// Restricts the calling thread: Landlock with `ruleset` ([`rules`]), no
/// capabilities (the bounding set emptied, so even root gains none at
/// `execve`), `no_new_privs`, then the seccomp filter ([`super::filter`]).
/// After this only `execve` is left to do.
pub fn apply(ruleset: RulesetCreated) -> Result<(), Missing> {
    drop_capabilities()?;
    let status = ruleset
        .restrict_self()
        .map_err(|e| Missing::Apply(format!("Landlock: {e}")))?;
    if status.ruleset != RulesetStatus::FullyEnforced {
        return Err(Missing::Apply(
            "Landlock: the ruleset is not fully enforced".to_owned(),
        ));
    }
    let filter = super::filter::program()?;
    seccompiler::apply_filter(&filter).map_err(|e| Missing::Apply(format!("seccomp: {e}")))?;
    Ok(())
}

fn rights(grant: Grant) -> BitFlags<AccessFs> {
    match grant {
        Grant::ReadRun => AccessFs::ReadFile | AccessFs::Execute,
        Grant::Read => AccessFs::ReadFile.into(),
        Grant::Device => {
            AccessFs::ReadFile | AccessFs::WriteFile | AccessFs::Truncate | AccessFs::IoctlDev
        }
    }
}

fn add_rules(mut ruleset: RulesetCreated, plan: &Plan) -> Result<RulesetCreated, Missing> {
    let apply = |e: landlock::RulesetError| Missing::Apply(format!("Landlock: {e}"));
    // Listing names is allowed everywhere: a name is not content.
    let root =
        open_exact(Path::new("/")).ok_or_else(|| Missing::Apply("cannot open `/`".into()))?;
    ruleset = ruleset
        .add_rule(PathBeneath::new(root, AccessFs::ReadDir))
        .map_err(apply)?;
    for grant in &plan.grants {
        // A path that changed since the walk (replaced by a link, moved) is
        // not granted: less is readable, never more.
        let opened = match grant.verify {
            true => open_exact(&grant.path),
            false => open_path(&grant.path),
        };
        let Some(fd) = opened else {
            continue;
        };
        ruleset = ruleset
            .add_rule(PathBeneath::new(fd, rights(grant.access)))
            .map_err(apply)?;
    }
    Ok(ruleset)
}

/// Opens `path` for a rule: `O_PATH`, no final symlink followed (a path of
/// the system's trees, which only root writes).
fn open_path(path: &Path) -> Option<File> {
    std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_PATH | libc::O_NOFOLLOW | libc::O_CLOEXEC)
        .open(path)
        .ok()
}

/// [`open_path`], then checks that it is not a link and that the kernel
/// reports that very path for it, so no component was swapped for a link
/// after the walk saw it (the command's user can write there).
fn open_exact(path: &Path) -> Option<File> {
    let file = open_path(path)?;
    let meta = file.metadata().ok()?;
    if meta.file_type().is_symlink() {
        return None;
    }
    let seen = std::fs::read_link(format!("/proc/self/fd/{}", file.as_raw_fd())).ok()?;
    (seen == path).then_some(file)
}

/// Empties the capability bounding set and the ambient set, so that the
/// command gains no capability at `execve`, root included. A process
/// without `CAP_SETPCAP` has an empty effective set already and cannot
/// gain one under `no_new_privs`; only its bounding set cannot be touched.
fn drop_capabilities() -> Result<(), Missing> {
    use rustix::thread::{
        CapabilitySet, capability_is_in_bounding_set, clear_ambient_capability_set,
        remove_capability_from_bounding_set,
    };
    // Fails only where ambient capabilities do not exist (Linux < 4.3).
    let _ = clear_ambient_capability_set();
    // Asked once, and only when a drop fails (an unprivileged process).
    let mut privileged_once: Option<bool> = None;
    for cap in CapabilitySet::all().iter() {
        match capability_is_in_bounding_set(cap) {
            Ok(false) | Err(_) => continue,
            Ok(true) => {}
        }
        if remove_capability_from_bounding_set(cap).is_err() {
            if *privileged_once.get_or_insert_with(privileged) {
                return Err(Missing::Apply(
                    "cannot empty the capability bounding set".to_owned(),
                ));
            }
            // Without CAP_SETPCAP no other drop can work either.
            break;
        }
    }
    Ok(())
}

/// Whether the process holds any effective capability (root, or file
/// capabilities): then its bounding set must be emptied.
fn privileged() -> bool {
    std::fs::read_to_string("/proc/self/status").map_or(true, |s| {
        s.lines()
            .find_map(|l| l.strip_prefix("CapEff:"))
            .is_none_or(|v| !v.trim().trim_start_matches('0').is_empty())
    })
}
