//! Command knowledge as data: one declarative table of command specs.
//!
//! Each entry says, for one command (or a family of names), which options
//! exist and take values (an [`OptionSpec`] for the getopt_long parser),
//! what its operands are (files it reads, writes, deletes; a wrapped
//! command; a script), what the values of particular options are, which
//! options change the effect (`-r` makes a delete recursive, `-i` makes
//! `sed` write), and how it uses the network. The interpreter reads the
//! table to unwrap runners (`sudo`, `env -C`, `xargs`, `timeout`, …) and
//! policy reads the same table to know what a command does to which path.
//! Adding a command is one entry here plus fixture lines.

use super::options::{HasArg, LongOpt, OptionSpec, long};

/// What a word (an operand or an option's value) is to the command.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    /// A file whose contents are read.
    Read,
    /// A file or directory read with everything below it.
    ReadTree,
    /// A file that is created or overwritten.
    Write,
    /// A directory that receives new files (`-t DIR`, `--output-dir`).
    WriteInto,
    /// A file that is removed (a tree when the command is recursive).
    Delete,
    /// Moved away: the path and everything below it goes.
    MoveAway,
    /// Permissions, owner or attributes change (a tree when recursive).
    Mode,
    /// Becomes the target of a new link.
    LinkTarget,
    /// A file whose contents are sent over the network.
    Upload,
    /// Data sent over the network: `@file` reads a file (curl `-d`).
    Data,
    /// A form field: `name=@file` / `name=<file` reads a file (curl `-F`).
    FormData,
    /// A header: `@file` reads headers from a file (curl `-H`).
    Header,
    /// `name@file` loads a file into a variable (curl `--variable`).
    Variable,
    /// A URL or remote host the command talks to.
    Url,
    /// A proxy, resolve or connect-to rule that changes where a URL goes.
    Route,
    /// Shell code the command runs.
    Script,
    /// The working directory of the command or of what it runs.
    Chdir,
    /// Anything else (a mode, a user, a count).
    Value,
}

/// What the operands (words that are not options) are.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Operands {
    /// None that matter.
    Ignore,
    /// Every operand has this role.
    All(Role),
    /// The first `n` operands are values (a mode, a pattern), the rest
    /// have the role.
    After(usize, Role),
    /// Sources and one destination (the last operand, or the value of a
    /// target-directory option, which then receives every source).
    Copy {
        sources: Role,
        dest: Role,
        target_dir: &'static [&'static str],
    },
    /// A wrapped command starts at operand `skip` (the ones before are a
    /// duration, a new root, a lock file).
    Command { skip: usize },
    /// A shell: `-c` makes the first operand a script, then `$0`, `$1`, …;
    /// otherwise the first operand is a script file.
    Shell,
    /// The operands joined by spaces are a script (`eval`, `watch`).
    Script,
    /// Read by a command-specific function (`dd`, `tar`, `find`, `git`,
    /// `xargs`, `env`, `su`, …).
    Special,
}

/// An option that changes what the command does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Modifier {
    /// Acts on whole trees (`rm -r`, `chmod -R`, `cp -a`).
    Recursive,
    /// Does not ask (`rm -f`).
    Force,
    /// Edits its operands in place (`sed -i`, `perl -i`).
    InPlace,
    /// Only lists or prints (`sfdisk -l`, `parted print`).
    ReadOnly,
    /// Runs its command in the background (`sudo -b`).
    Background,
    /// Skips TLS certificate verification (`curl -k`).
    Insecure,
    /// Starts with an empty environment (`env -i`).
    EmptyEnvironment,
    /// Runs a login shell / `$SHELL` (`sudo -i`, `sudo -s`).
    ViaShell,
    /// Prints instead of running (`command -v`, `sudo -l`).
    NoRun,
}

/// How a command uses the network.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Network {
    None,
    /// Sends what its options name (`curl -T`, `wget --post-file`) and,
    /// with `@-`, its standard input.
    Client,
    /// Sends its standard input (`nc`, `socat`, `telnet`, `ssh`).
    Stream,
    /// Copies files to a remote operand (`scp`, `rsync`, `sftp`).
    RemoteCopy,
}

/// One command family.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CommandSpec {
    pub names: &'static [&'static str],
    pub options: OptionSpec,
    pub operands: Operands,
    /// Roles of option values: names (single letters are short options).
    pub option_roles: &'static [(&'static [&'static str], Role)],
    pub modifiers: &'static [(&'static [&'static str], Modifier)],
    pub network: Network,
}

const fn opts(short: &'static str, long: &'static [LongOpt]) -> OptionSpec {
    OptionSpec {
        short,
        long,
        stop_at_operand: false,
        prefixes: true,
    }
}

/// Options stop at the first operand (wrappers).
const fn posix(short: &'static str, long: &'static [LongOpt]) -> OptionSpec {
    OptionSpec {
        short,
        long,
        stop_at_operand: true,
        prefixes: true,
    }
}

const fn spec(
    names: &'static [&'static str],
    options: OptionSpec,
    operands: Operands,
) -> CommandSpec {
    CommandSpec {
        names,
        options,
        operands,
        option_roles: &[],
        modifiers: &[],
        network: Network::None,
    }
}

use HasArg::{No, Optional, Required};
use Role::*;

const RECURSIVE: &[(&[&str], Modifier)] = &[(&["r", "R", "recursive"], Modifier::Recursive)];

/// The table. Lookup is by basename of `argv[0]`.
pub const SPECS: &[CommandSpec] = &[
    // ---------------------------------------------------------------- runners
    CommandSpec {
        modifiers: &[
            (&["b", "background"], Modifier::Background),
            (&["i", "login", "s", "shell"], Modifier::ViaShell),
            (
                &[
                    "l",
                    "list",
                    "v",
                    "validate",
                    "k",
                    "K",
                    "V",
                    "h",
                    "help",
                    "reset-timestamp",
                    "remove-timestamp",
                    "version",
                ],
                Modifier::NoRun,
            ),
        ],
        option_roles: &[(&["D", "chdir"], Chdir)],
        ..spec(
            &["sudo"],
            posix(
                "AbC:D:Eeg:HhiKkLlnPp:R:r:SsT:t:U:u:Vv",
                &[
                    long("askpass", No),
                    long("background", No),
                    long("bell", No),
                    long("close-from", Required),
                    long("chdir", Required),
                    long("chroot", Required),
                    long("preserve-env", Optional),
                    long("edit", No),
                    long("group", Required),
                    long("set-home", No),
                    long("help", No),
                    long("host", Required),
                    long("login", No),
                    long("remove-timestamp", No),
                    long("reset-timestamp", No),
                    long("list", No),
                    long("non-interactive", No),
                    long("preserve-groups", No),
                    long("prompt", Required),
                    long("role", Required),
                    long("stdin", No),
                    long("shell", No),
                    long("type", Required),
                    long("command-timeout", Required),
                    long("other-user", Required),
                    long("user", Required),
                    long("version", No),
                    long("validate", No),
                ],
            ),
            Operands::Special,
        )
    },
    spec(
        &["doas"],
        posix("C:LnSsu:", &[]),
        Operands::Command { skip: 0 },
    ),
    CommandSpec {
        option_roles: &[(&["C", "chdir"], Chdir), (&["S", "split-string"], Script)],
        modifiers: &[(&["i", "ignore-environment"], Modifier::EmptyEnvironment)],
        ..spec(
            &["env"],
            posix(
                "0iu:C:S:vP:",
                &[
                    long("null", No),
                    long("ignore-environment", No),
                    long("unset", Required),
                    long("chdir", Required),
                    long("split-string", Required),
                    long("debug", No),
                    long("block-signal", Optional),
                    long("default-signal", Optional),
                    long("ignore-signal", Optional),
                    long("list-signal-handling", No),
                    long("help", No),
                    long("version", No),
                ],
            ),
            Operands::Special,
        )
    },
    spec(
        &["nice"],
        posix(
            "n:",
            &[
                long("adjustment", Required),
                long("help", No),
                long("version", No),
            ],
        ),
        Operands::Command { skip: 0 },
    ),
    spec(
        &[
            "nohup",
            "setsid",
            "unbuffer",
            "caffeinate",
            "catchsegv",
            "stdbuf",
            "time",
            "strace",
            "ltrace",
        ],
        posix(
            "cfwi:o:e:s:p:E:u:a:t",
            &[
                long("input", Required),
                long("output", Required),
                long("error", Required),
                long("fork", No),
                long("wait", No),
                long("ctty", No),
                long("format", Required),
                long("append", No),
                long("verbose", No),
                long("portability", No),
                long("quiet", No),
            ],
        ),
        Operands::Command { skip: 0 },
    ),
    spec(
        &["ionice"],
        posix(
            "c:n:p:P:tu:",
            &[
                long("class", Required),
                long("classdata", Required),
                long("pid", Required),
                long("pgid", Required),
                long("ignore", No),
                long("uid", Required),
            ],
        ),
        Operands::Command { skip: 0 },
    ),
    spec(
        &["chrt", "taskset"],
        posix(
            "abdefiormp:RT:P:D:acpv",
            &[long("all-tasks", No), long("cpu-list", No), long("pid", No)],
        ),
        Operands::Command { skip: 1 },
    ),
    spec(
        &["timeout"],
        posix(
            "fk:ps:v",
            &[
                long("foreground", No),
                long("kill-after", Required),
                long("preserve-status", No),
                long("signal", Required),
                long("verbose", No),
                long("help", No),
                long("version", No),
            ],
        ),
        Operands::Command { skip: 1 },
    ),
    spec(
        &["chroot"],
        posix(
            "",
            &[
                long("groups", Required),
                long("userspec", Required),
                long("skip-chdir", No),
            ],
        ),
        Operands::Command { skip: 1 },
    ),
    spec(
        &["busybox", "toybox"],
        posix("", &[]),
        Operands::Command { skip: 0 },
    ),
    CommandSpec {
        modifiers: &[(&["v", "V"], Modifier::NoRun)],
        ..spec(
            &["command"],
            posix("pvV", &[]),
            Operands::Command { skip: 0 },
        )
    },
    spec(
        &["builtin", "exec", "coproc"],
        posix("cla:", &[]),
        Operands::Command { skip: 0 },
    ),
    CommandSpec {
        option_roles: &[(&["c", "command"], Script)],
        ..spec(
            &["flock"],
            posix(
                "sxunw:E:oc:FhV",
                &[
                    long("shared", No),
                    long("exclusive", No),
                    long("unlock", No),
                    long("nonblock", No),
                    long("timeout", Required),
                    long("conflict-exit-code", Required),
                    long("close", No),
                    long("command", Required),
                    long("no-fork", No),
                    long("verbose", No),
                ],
            ),
            Operands::Special,
        )
    },
    spec(
        &["watch"],
        posix(
            "bcCd::eghn:pqrtwx",
            &[
                long("beep", No),
                long("color", No),
                long("no-color", No),
                long("differences", Optional),
                long("errexit", No),
                long("chgexit", No),
                long("interval", Required),
                long("precise", No),
                long("no-rerun", No),
                long("no-title", No),
                long("no-wrap", No),
                long("exec", No),
                long("equexit", Required),
            ],
        ),
        Operands::Special,
    ),
    CommandSpec {
        option_roles: &[(&["c", "command", "session-command"], Script)],
        ..spec(
            &["su", "runuser"],
            opts(
                "c:fg:G:lmpPs:u:w:h",
                &[
                    long("command", Required),
                    long("session-command", Required),
                    long("fast", No),
                    long("group", Required),
                    long("supp-group", Required),
                    long("login", No),
                    long("preserve-environment", No),
                    long("pty", No),
                    long("shell", Required),
                    long("user", Required),
                    long("whitelist-environment", Required),
                    long("help", No),
                    long("version", No),
                ],
            ),
            Operands::Special,
        )
    },
    spec(
        &["xargs"],
        posix(
            "0a:d:E:e::I:i::L:l::n:oP:prs:tx",
            &[
                long("null", No),
                long("arg-file", Required),
                long("delimiter", Required),
                long("eof", Optional),
                long("replace", Optional),
                long("max-lines", Optional),
                long("max-args", Required),
                long("open-tty", No),
                long("max-procs", Required),
                long("process-slot-var", Required),
                long("interactive", No),
                long("no-run-if-empty", No),
                long("max-chars", Required),
                long("show-limits", No),
                long("verbose", No),
                long("exit", No),
                long("help", No),
                long("version", No),
            ],
        ),
        Operands::Special,
    ),
    spec(&["eval"], posix("", &[]), Operands::Script),
    spec(&["find"], posix("HLPD:O:", &[]), Operands::Special),
    spec(&["parallel"], posix("", &[]), Operands::Special),
    spec(
        &[
            "bash", "sh", "dash", "zsh", "ksh", "mksh", "ash", "rbash", "yash", "posh", "lksh",
            "pdksh", "oksh",
        ],
        OptionSpec {
            short: "abcefhiklmnprstuvxBCDEHPO:o:",
            long: &[
                long("login", No),
                long("noprofile", No),
                long("norc", No),
                long("posix", No),
                long("restricted", No),
                long("verbose", No),
                long("version", No),
                long("help", No),
                long("debugger", No),
                long("dump-strings", No),
                long("dump-po-strings", No),
                long("noediting", No),
                long("pretty-print", No),
                long("rcfile", Required),
                long("init-file", Required),
            ],
            stop_at_operand: true,
            prefixes: false,
        },
        Operands::Shell,
    ),
];

/// The spec for a command name (the basename of `argv[0]`).
pub fn lookup(name: &str) -> Option<&'static CommandSpec> {
    SPECS.iter().find(|s| s.names.contains(&name))
}

/// The shells whose `-c` runs a script.
pub fn is_shell(name: &str) -> bool {
    lookup(name).is_some_and(|s| s.operands == Operands::Shell)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    #[test]
    fn names_are_unique_and_optstrings_valid() {
        let mut seen = HashSet::new();
        for s in SPECS {
            for n in s.names {
                assert!(seen.insert(*n), "{n} listed twice");
            }
            for c in s.options.short.chars() {
                assert!(
                    c.is_ascii_alphanumeric() || c == ':',
                    "{:?}: `{c}`",
                    s.names
                );
            }
            let names = s
                .option_roles
                .iter()
                .map(|(n, _)| *n)
                .chain(s.modifiers.iter().map(|(n, _)| *n));
            for list in names {
                for n in list {
                    let exists = if n.len() == 1 {
                        n.chars()
                            .next()
                            .and_then(|c| s.options.short_arg(c))
                            .is_some()
                    } else {
                        s.options.long.iter().any(|l| l.name == *n)
                    };
                    assert!(
                        exists,
                        "{:?}: option `{n}` is not in the option spec",
                        s.names
                    );
                }
            }
        }
    }

    #[test]
    fn lookups() {
        assert!(is_shell("bash"));
        assert!(!is_shell("env"));
        assert_eq!(
            lookup("timeout").map(|s| s.operands),
            Some(Operands::Command { skip: 1 })
        );
    }
}
