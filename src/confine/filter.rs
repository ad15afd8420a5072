//! The seccomp filter of a confined command, as a BPF program.
//!
//! Written here rather than by seccompiler's rule compiler because the
//! kernel runs a new filter over every syscall number when it is attached
//! (to cache which ones it always allows), and a compiled chain of ~150
//! checks made that cost milliseconds per command; this program finds a
//! number in a binary tree of at most eight comparisons. seccompiler still
//! attaches it ([`seccompiler::apply_filter`]).
//!
//! The program: a process calling with another architecture's numbers is
//! killed; an x32 call (bit 30) is denied whole; then the syscall number
//! decides — [`denied`] calls answer `EPERM`, `clone` with a namespace flag
//! `EPERM`, `clone3` `ENOSYS` (its flags are behind a pointer a filter
//! cannot read; the C library then falls back to `clone`), `ioctl` pushing
//! input into the terminal (`TIOCSTI`, `TIOCLINUX`) `EPERM`, `prlimit64`
//! on another process than the caller `EPERM`; everything
//! else is allowed.

use seccompiler::sock_filter;

use super::Missing;

/// What the filter answers for one syscall number.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Leaf {
    Deny,
    /// `clone`: denied when its flags ask for a new namespace.
    Clone,
    /// `clone3`: "not implemented".
    NotImplemented,
    /// `ioctl`: denied for the terminal-input requests.
    Ioctl,
    /// `prlimit64`: allowed on the calling process only (pid 0); another
    /// process's limits are its own business (a low CPU limit kills it).
    OwnProcess,
}

const BPF_LD_W_ABS: u16 = 0x20;
const BPF_JEQ_K: u16 = 0x15;
const BPF_JGE_K: u16 = 0x35;
const BPF_JSET_K: u16 = 0x45;
const BPF_RET_K: u16 = 0x06;

const RET_KILL_PROCESS: u32 = 0x8000_0000;
const RET_ALLOW: u32 = 0x7fff_0000;
const RET_ERRNO: u32 = 0x0005_0000;

/// Offsets in `struct seccomp_data`: the number, the architecture, and the
/// low 32 bits of the first two arguments (little-endian).
const NR: u32 = 0;
const ARCH: u32 = 4;
const ARG0_LOW: u32 = 16;
const ARG1_LOW: u32 = 24;

/// The x32 ABI's marker bit in the syscall number.
const X32_BIT: u32 = 0x4000_0000;

/// Namespace flags `clone` may not carry (all in the low 32 bits).
pub const NEW_NAMESPACES: u32 = (libc::CLONE_NEWNS
    | libc::CLONE_NEWCGROUP
    | libc::CLONE_NEWUTS
    | libc::CLONE_NEWIPC
    | libc::CLONE_NEWUSER
    | libc::CLONE_NEWPID
    | libc::CLONE_NEWNET) as u32
    | 0x80; // CLONE_NEWTIME

/// The audit architecture of this build, for the first check.
fn audit_arch() -> Result<u32, Missing> {
    match std::env::consts::ARCH {
        "x86_64" => Ok(0xc000_003e),
        "aarch64" => Ok(0xc000_00b7),
        arch => Err(Missing::Arch { arch }),
    }
}

/// The syscalls a confined command may not make, beyond what Landlock
/// covers: every socket (IP, netlink, packet, Unix — a pathname Unix socket
/// is a daemon's door, which Landlock cannot close before ABI 9), tracing
/// and other processes' memory, mounts and namespaces, kernel keyrings
/// (other sessions' secrets), io_uring (socket operations outside this
/// filter), BPF and perf, opening by file handle (around path checks), the
/// metadata writes Landlock does not handle (mode, owner, extended
/// attributes, times), and the host's settings (modules, clock, hostname,
/// swap, reboot, kernel log).
pub fn denied() -> Vec<i64> {
    let mut calls = vec![
        libc::SYS_socket,
        libc::SYS_ptrace,
        libc::SYS_process_vm_readv,
        libc::SYS_process_vm_writev,
        libc::SYS_pidfd_getfd,
        libc::SYS_mount,
        libc::SYS_umount2,
        libc::SYS_pivot_root,
        libc::SYS_chroot,
        libc::SYS_move_mount,
        libc::SYS_open_tree,
        libc::SYS_fsopen,
        libc::SYS_fsconfig,
        libc::SYS_fsmount,
        libc::SYS_fspick,
        libc::SYS_mount_setattr,
        libc::SYS_unshare,
        libc::SYS_setns,
        libc::SYS_keyctl,
        libc::SYS_add_key,
        libc::SYS_request_key,
        libc::SYS_bpf,
        libc::SYS_perf_event_open,
        libc::SYS_userfaultfd,
        libc::SYS_io_uring_setup,
        libc::SYS_io_uring_enter,
        libc::SYS_io_uring_register,
        libc::SYS_open_by_handle_at,
        libc::SYS_name_to_handle_at,
        libc::SYS_fchmod,
        libc::SYS_fchmodat,
        libc::SYS_fchown,
        libc::SYS_fchownat,
        libc::SYS_setxattr,
        libc::SYS_lsetxattr,
        libc::SYS_fsetxattr,
        libc::SYS_removexattr,
        libc::SYS_lremovexattr,
        libc::SYS_fremovexattr,
        libc::SYS_utimensat,
        libc::SYS_init_module,
        libc::SYS_finit_module,
        libc::SYS_delete_module,
        libc::SYS_kexec_load,
        libc::SYS_reboot,
        libc::SYS_swapon,
        libc::SYS_swapoff,
        libc::SYS_acct,
        libc::SYS_sethostname,
        libc::SYS_setdomainname,
        libc::SYS_settimeofday,
        libc::SYS_clock_settime,
        libc::SYS_syslog,
        // Newer than some C library headers, one number on every
        // architecture: fchmodat2 (6.6), setxattrat and removexattrat (6.13).
        452,
        463,
        466,
    ];
    #[cfg(target_arch = "x86_64")]
    calls.extend([
        libc::SYS_chmod,
        libc::SYS_chown,
        libc::SYS_lchown,
        libc::SYS_utime,
        libc::SYS_utimes,
        libc::SYS_futimesat,
        libc::SYS_iopl,
        libc::SYS_ioperm,
        libc::SYS_kexec_file_load,
    ]);
    calls
}

/// Every number the filter does not simply allow, sorted, with its answer.
pub fn leaves() -> Vec<(u32, Leaf)> {
    let mut out: Vec<(u32, Leaf)> = denied()
        .into_iter()
        .filter_map(|n| u32::try_from(n).ok())
        .map(|n| (n, Leaf::Deny))
        .collect();
    for (call, leaf) in [
        (libc::SYS_clone, Leaf::Clone),
        (libc::SYS_clone3, Leaf::NotImplemented),
        (libc::SYS_ioctl, Leaf::Ioctl),
        (libc::SYS_prlimit64, Leaf::OwnProcess),
    ] {
        if let Ok(n) = u32::try_from(call) {
            out.push((n, leaf));
        }
    }
    out.sort_unstable_by_key(|(n, _)| *n);
    out.dedup_by_key(|(n, _)| *n);
    out
}

fn stmt(code: u16, k: u32) -> sock_filter {
    sock_filter {
        code,
        jt: 0,
        jf: 0,
        k,
    }
}

fn jump(code: u16, k: u32, jt: usize, jf: usize) -> Result<sock_filter, Missing> {
    let far = || Missing::Apply("seccomp: a jump of the filter is too long".to_owned());
    Ok(sock_filter {
        code,
        jt: u8::try_from(jt).map_err(|_| far())?,
        jf: u8::try_from(jf).map_err(|_| far())?,
        k,
    })
}

fn errno(e: i32) -> u32 {
    RET_ERRNO | u32::try_from(e).unwrap_or(1)
}

/// The instructions that answer for one number (the accumulator holds it).
fn leaf_block(leaf: Leaf) -> Result<Vec<sock_filter>, Missing> {
    let eperm = errno(libc::EPERM);
    Ok(match leaf {
        Leaf::Deny => vec![stmt(BPF_RET_K, eperm)],
        Leaf::NotImplemented => vec![stmt(BPF_RET_K, errno(libc::ENOSYS))],
        Leaf::Clone => vec![
            stmt(BPF_LD_W_ABS, ARG0_LOW),
            jump(BPF_JSET_K, NEW_NAMESPACES, 0, 1)?,
            stmt(BPF_RET_K, eperm),
            stmt(BPF_RET_K, RET_ALLOW),
        ],
        Leaf::OwnProcess => vec![
            stmt(BPF_LD_W_ABS, ARG0_LOW),
            jump(BPF_JEQ_K, 0, 0, 1)?,
            stmt(BPF_RET_K, RET_ALLOW),
            stmt(BPF_RET_K, eperm),
        ],
        Leaf::Ioctl => vec![
            stmt(BPF_LD_W_ABS, ARG1_LOW),
            jump(BPF_JEQ_K, libc::TIOCSTI as u32, 1, 0)?,
            jump(BPF_JEQ_K, libc::TIOCLINUX as u32, 0, 1)?,
            stmt(BPF_RET_K, eperm),
            stmt(BPF_RET_K, RET_ALLOW),
        ],
    })
}

/// A binary tree over sorted `items`; the accumulator holds the number.
fn tree(items: &[(u32, Leaf)]) -> Result<Vec<sock_filter>, Missing> {
    if items.len() <= 3 {
        let mut out = Vec::new();
        for (nr, leaf) in items {
            let block = leaf_block(*leaf)?;
            out.push(jump(BPF_JEQ_K, *nr, 0, block.len())?);
            out.extend(block);
        }
        out.push(stmt(BPF_RET_K, RET_ALLOW));
        return Ok(out);
    }
    let mid = items.len() / 2;
    let (low, high) = items.split_at(mid);
    let first_high = high.first().map_or(0, |(n, _)| *n);
    let high = tree(high)?;
    let low = tree(low)?;
    let mut out = vec![jump(BPF_JGE_K, first_high, 0, high.len())?];
    out.extend(high);
    out.extend(low);
    Ok(out)
}

/// The whole program, built once per process (the probe and the
/// confinement both need it).
pub fn program() -> Result<Vec<sock_filter>, Missing> {
    static PROGRAM: std::sync::OnceLock<Result<Vec<sock_filter>, Missing>> =
        std::sync::OnceLock::new();
    PROGRAM.get_or_init(build).clone()
}

fn build() -> Result<Vec<sock_filter>, Missing> {
    let mut out = vec![
        stmt(BPF_LD_W_ABS, ARCH),
        jump(BPF_JEQ_K, audit_arch()?, 1, 0)?,
        stmt(BPF_RET_K, RET_KILL_PROCESS),
        stmt(BPF_LD_W_ABS, NR),
    ];
    if cfg!(target_arch = "x86_64") {
        out.push(jump(BPF_JSET_K, X32_BIT, 0, 1)?);
        out.push(stmt(BPF_RET_K, errno(libc::EPERM)));
    }
    out.extend(tree(&leaves())?);
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Runs the program over `(nr, arch, args)` as the kernel would, for
    /// the instructions it uses.
    fn run(prog: &[sock_filter], nr: u32, arch: u32, args: [u64; 2]) -> u32 {
        let mut acc = 0u32;
        let mut pc = 0usize;
        loop {
            let ins = &prog[pc];
            match ins.code {
                BPF_LD_W_ABS => {
                    acc = match ins.k {
                        NR => nr,
                        ARCH => arch,
                        ARG0_LOW => args[0] as u32,
                        ARG1_LOW => args[1] as u32,
                        other => panic!("load of {other}"),
                    };
                    pc += 1;
                }
                BPF_RET_K => return ins.k,
                code => {
                    let taken = match code {
                        BPF_JEQ_K => acc == ins.k,
                        BPF_JGE_K => acc >= ins.k,
                        BPF_JSET_K => acc & ins.k != 0,
                        other => panic!("code {other:#x}"),
                    };
                    pc += 1 + usize::from(if taken { ins.jt } else { ins.jf });
                }
            }
        }
    }

    #[test]
    fn every_number_gets_its_answer() {
        let prog = program().unwrap();
        let arch = audit_arch().unwrap();
        let eperm = errno(libc::EPERM);
        let denied: Vec<u32> = denied().iter().map(|n| *n as u32).collect();
        for nr in 0..600u32 {
            let got = run(&prog, nr, arch, [0, 0]);
            let want = if denied.contains(&nr) {
                eperm
            } else if nr == libc::SYS_clone3 as u32 {
                errno(libc::ENOSYS)
            } else {
                RET_ALLOW
            };
            assert_eq!(got, want, "syscall {nr}");
        }
        let clone = libc::SYS_clone as u32;
        assert_eq!(
            run(&prog, clone, arch, [libc::CLONE_NEWUSER as u64, 0]),
            eperm
        );
        assert_eq!(run(&prog, clone, arch, [0x80, 0]), eperm);
        assert_eq!(
            run(&prog, clone, arch, [libc::SIGCHLD as u64, 0]),
            RET_ALLOW
        );
        let ioctl = libc::SYS_ioctl as u32;
        assert_eq!(run(&prog, ioctl, arch, [1, libc::TIOCSTI]), eperm);
        // The kernel reads the request as 32 bits: high bits do not hide it.
        assert_eq!(
            run(&prog, ioctl, arch, [1, (1u64 << 32) | libc::TIOCSTI]),
            eperm
        );
        assert_eq!(run(&prog, ioctl, arch, [1, libc::TIOCLINUX]), eperm);
        assert_eq!(run(&prog, ioctl, arch, [1, libc::TCGETS]), RET_ALLOW);
        assert_eq!(run(&prog, 0, arch ^ 1, [0, 0]), RET_KILL_PROCESS);
        if cfg!(target_arch = "x86_64") {
            assert_eq!(run(&prog, X32_BIT | 41, arch, [0, 0]), eperm);
        }
        assert!(prog.len() < 400, "{}", prog.len());
    }
}
