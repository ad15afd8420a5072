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
//! Redaction reads it too: which option values and operands are secrets
//! (`curl -u user:PASSWORD`, `mysql -pPASSWORD`), parsed by the same option
//! parser, so the two never disagree about which options take a value.
//! Adding a command is one entry here plus fixture lines.

pub mod git;
pub mod readers;

use super::options::{Clusters, HasArg, LongOpt, OptionSpec, long};

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
    /// A path whose names and metadata are shown, never its contents
    /// (`ls`, `stat`, `du`, `wc`'s counts).
    Names,
    /// A program text in a small language the command interprets itself
    /// (a regular expression, a sed script, an awk program, a jq filter).
    Program(Dialect),
    /// A program (or a file of code) the command runs or loads by name:
    /// `rg --pre CMD`, `sort --compress-program`, `sed -f FILE`, `bash
    /// --rcfile FILE`.
    Run,
    /// A setting of the system or of how the command reads its input
    /// (`hostname NAME`, `date -s`, a shell's `-o OPTION`, `xargs
    /// --process-slot-var`): it changes something beyond printing.
    Setting,
    /// Narrows which entries of a searched tree are read (`rg -g`, `rg -t`,
    /// `grep --include`). The inert stage follows the narrowing only where
    /// it can compute it exactly; otherwise it reads it as none.
    Select(Select),
}

/// How a [`Role::Select`] option narrows a tree search.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Select {
    /// ripgrep's `-g GLOB` (`!GLOB` excludes): an override that decides
    /// over ignore files and hidden names.
    Glob,
    /// ripgrep's `--iglob GLOB`: the same, case-insensitive.
    GlobCaseless,
    /// ripgrep's `--glob-case-insensitive`: every `-g` is case-insensitive.
    GlobsCaseless,
    /// ripgrep's `-t TYPE`: only files of the type, hidden ones included.
    Type,
    /// ripgrep's `-T TYPE`: no file of the type.
    TypeNot,
    /// grep's `--include GLOB` (on base names; the last match wins).
    Include,
    /// grep's `--exclude GLOB`.
    Exclude,
}

/// The languages of [`Role::Program`] texts, each read by the inert stage's
/// script checks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dialect {
    /// A regular expression or a fixed string: it never runs anything.
    Pattern,
    /// A sed script: `w`, `W`, `r`, `R`, `e` and `s///w|e` write, read or run.
    Sed,
    /// An awk program: `system`, pipes, redirections, `getline`, `ENVIRON`.
    Awk,
    /// A jq filter: `import`, `include`, `$ENV`, `env`, `input_filename`.
    Jq,
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
    /// Operand `i` has role `i`; operands past the list are an error to the
    /// program, read here as the last role (`uniq IN OUT`, `xxd IN OUT`:
    /// the second operand is written).
    Positional(&'static [Role]),
    /// The first operand is a program text unless one of the `inline`
    /// options gave it (`grep -e`, `sed -e`, `awk -f`); every other operand
    /// has role `rest`.
    ProgramFirst {
        program: Dialect,
        rest: Role,
        inline: &'static [&'static str],
    },
    /// `+FORMAT` operands are formats; any other operand sets a value
    /// (`date 01011200` sets the clock).
    Format,
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
    /// Saves downloads under names the server chooses, in the output
    /// directory or else the working directory (`curl -O`; `wget` by
    /// default).
    RemoteName,
    /// Runs code or programs it finds elsewhere: a program file (`jq -f`),
    /// decompressors (`rg -z`, `file -z`), a shell's startup file (`bash
    /// -i`), a command per level (`tree -R` runs itself again with `-o`).
    Runs,
    /// Uses the network (`hostname -f` asks DNS).
    Connects,
    /// Writes files (`tree -R` writes `00Tree.html`, `file -C` compiles a
    /// magic file, `file -p` resets access times, `gawk -p` a profile).
    Writes,
    /// Reads hidden and ignored files it skips by default (`rg --hidden`,
    /// `-u`, `--no-ignore`).
    Hidden,
    /// Follows symbolic links while walking a tree (`grep -R`, `rg -L`).
    FollowsLinks,
    /// Changes how the program reads its input or script (`bash -f`, `-k`,
    /// `-s`), so the analysis's reading no longer holds.
    Setting,
    /// Talks to the terminal (`xargs -p` prompts, `xargs -o` hands it on).
    Terminal,
    /// Puts its input into the words of the command it runs (`xargs -I`).
    Substitutes,
    /// Reads files named in its input or in a file rather than its operands
    /// (`wc --files0-from`, `tree --fromfile`, `md5sum -c`).
    NamesFromInput,
}

impl Modifier {
    /// Whether an option with this modifier leaves a command only reading
    /// what its operands name (the inert stage's derived profile).
    pub fn is_read_only(self) -> bool {
        match self {
            // They change how operands are read, never what is written.
            Modifier::Recursive
            | Modifier::Force
            | Modifier::ReadOnly
            | Modifier::NoRun
            | Modifier::FollowsLinks => true,
            Modifier::InPlace
            | Modifier::Background
            | Modifier::Insecure
            | Modifier::EmptyEnvironment
            | Modifier::ViaShell
            | Modifier::RemoteName
            | Modifier::Runs
            | Modifier::Connects
            | Modifier::Writes
            | Modifier::Hidden
            | Modifier::Setting
            | Modifier::Terminal
            | Modifier::Substitutes
            | Modifier::NamesFromInput => false,
        }
    }
}

/// How an entry may be used by the inert stage (`src/policy/inert`), which
/// derives its read-only profile from this table: nothing else lists
/// commands or options.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Inert {
    /// Never inert: the entry's options are not all classified, or the
    /// command writes, runs or connects whatever its options.
    Never,
    /// Every option the real program has is listed with what it does;
    /// a unit is inert when every option and operand given has a read-only
    /// role or modifier ([`Role::is_read_only`], [`Modifier::is_read_only`])
    /// and what it reads may be read. `trees`: what a tree search reads.
    Reader { trees: Trees },
    /// Runs the command after its options (`xargs`, `timeout`, `nice`,
    /// `stdbuf`): inert when its options are read-only and what it runs is.
    Runner,
    /// A shell whose `-c` script the analysis reads as bash: inert when its
    /// options are read-only and every command of the script is.
    Shell,
    /// `find`: inert when its expression only selects and prints names
    /// ([`crate::find::LISTING`]).
    Find,
    /// `git`: a read-only subcommand ([`git::subcommand`]) in a repository
    /// whose configuration names no program ([`git::names_program`]).
    Git,
    /// A bash builtin that only prints, tests or moves within the command
    /// (checked with bash's own rules: `test -v` and arithmetic evaluate).
    Builtin,
}

/// What a directory tree searched for contents reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Trees {
    /// Hidden entries are skipped (`rg` by default).
    SkipsHidden,
    /// Every entry, hidden ones included (`grep -r`, `diff -r`).
    Everything,
}

impl Role {
    /// Whether a word with this role leaves a command only reading (what
    /// it names must still be checked: a file read, a tree searched, a
    /// program text).
    pub fn is_read_only(self) -> bool {
        match self {
            Role::Read
            | Role::ReadTree
            | Role::Value
            | Role::Names
            | Role::Program(_)
            | Role::Select(_) => true,
            Role::Write
            | Role::WriteInto
            | Role::Delete
            | Role::MoveAway
            | Role::Mode
            | Role::LinkTarget
            | Role::Upload
            | Role::Data
            | Role::FormData
            | Role::Header
            | Role::Variable
            | Role::Url
            | Role::Route
            | Role::Script
            | Role::Chdir
            | Role::Run
            | Role::Setting => false,
        }
    }
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

/// Which part of an option's value is a secret, and what kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Secret {
    /// The whole value is a password.
    Password,
    /// The whole value is a token or key.
    Token,
    /// A password after the first `:` (`user:password`); none without one.
    AfterColon,
    /// A password after the first `%` (`smbclient -U user%password`).
    AfterPercent,
    /// A password after a `pass:` prefix (`openssl -pass pass:X`); `env:`
    /// and `file:` are references, not secrets.
    OpensslPass,
}

/// Operands that are secrets, by position rather than by option.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SecretOperands {
    None,
    /// `htpasswd -b FILE USER PASSWORD` (`-nb USER PASSWORD`).
    HtpasswdBatch,
    /// `xfreerdp /p:PASSWORD`.
    SlashP,
    /// `… config[ure] [set] NAME VALUE` whose NAME says secret (`aws
    /// configure set`, `npm config set`, `git config`).
    ConfigSet,
}

/// The secrets a command's words carry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Secrets {
    /// Option values: names (single letters are short options).
    pub options: &'static [(&'static [&'static str], Secret)],
    /// The options are secrets only after one of these words, among the
    /// first three operands (`docker login -p X`; `docker run -p 80:80`
    /// is a port).
    pub after: &'static [&'static str],
    pub operands: SecretOperands,
}

/// No secrets.
pub const NO_SECRETS: Secrets = Secrets {
    options: &[],
    after: &[],
    operands: SecretOperands::None,
};

impl Secrets {
    /// Whether the command's words can carry a secret at all.
    pub fn any(&self) -> bool {
        !self.options.is_empty() || self.operands != SecretOperands::None
    }
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
    /// What redaction hides. Any command's long option whose name says
    /// secret (`--db-password X`) is hidden as well, listed or not.
    pub secrets: Secrets,
    /// How the inert stage may use the entry.
    pub inert: Inert,
    /// Files the program reads on its own, relative to the home (`.jq`,
    /// `.magic`): one that exists may change what the program does, so the
    /// command is not inert there.
    pub startup_files: &'static [&'static str],
    /// An operand `@FILE` is read as more options (binutils' `strings`).
    pub response_files: bool,
}

const fn opts(short: &'static str, long: &'static [LongOpt]) -> OptionSpec {
    OptionSpec {
        short,
        long,
        stop_at_operand: false,
        prefixes: true,
        single_dash_long: false,
        clusters: Clusters::Getopt,
    }
}

/// Options stop at the first operand (wrappers).
const fn posix(short: &'static str, long: &'static [LongOpt]) -> OptionSpec {
    OptionSpec {
        short,
        long,
        stop_at_operand: true,
        prefixes: true,
        single_dash_long: false,
        clusters: Clusters::Getopt,
    }
}

/// Long options with one dash and no abbreviations (`openssl`, `keytool`).
const fn single_dash(long: &'static [LongOpt]) -> OptionSpec {
    OptionSpec {
        short: "",
        long,
        stop_at_operand: false,
        prefixes: false,
        single_dash_long: true,
        clusters: Clusters::Getopt,
    }
}

/// A command vouch knows only for the secrets its options carry: its
/// operands are read like an unknown command's.
const fn secret_carrier(
    names: &'static [&'static str],
    options: OptionSpec,
    secrets: Secrets,
) -> CommandSpec {
    CommandSpec {
        secrets,
        ..spec(names, options, Operands::All(Role::Read))
    }
}

/// Partitioning and volume tools: one list, read by the command table below
/// and by the hard-deny device rule.
pub const PARTITIONERS: &[&str] = &[
    "sgdisk",
    "gdisk",
    "cgdisk",
    "parted",
    "sfdisk",
    "fdisk",
    "cfdisk",
    "diskutil",
    "cryptsetup",
    "hdparm",
    "nvme",
    "zpool",
    "mdadm",
    "pvcreate",
    "vgcreate",
    "lvremove",
];

/// Programs that fetch a package (or find a bin on `PATH`) and run the
/// program named after their options: `npx sh -c …` runs `sh`.
pub const PACKAGE_RUNNERS: &[&str] = &["npx", "pnpx", "bunx"];

/// Package managers whose `exec`/`x`/`dlx` subcommand is a package runner
/// (`npm exec -- sh -c …`, `pnpm dlx shx rm …`, `yarn dlx`, `bun x`), and
/// `bun exec`, which runs its string in Bun's shell.
pub const PACKAGE_MANAGERS: &[&str] = &["npm", "pnpm", "yarn", "bun"];

/// The package runners' options (npm's `exec`, pnpm's and yarn's `dlx`,
/// bunx), stopping at the first operand: everything after it is the
/// command's. `-c`/`--call` is a shell string (pnpm's `-c` is shell mode,
/// whose command is then that same string).
pub const PACKAGE_RUNNER_OPTIONS: OptionSpec = OptionSpec {
    short: "p:c:yq",
    long: &[
        long("package", Required),
        long("call", Required),
        long("yes", No),
        long("no", No),
        long("bun", No),
        long("quiet", No),
        long("silent", No),
        long("verbose", No),
        long("shell-mode", No),
        long("ignore-existing", No),
        long("prefer-offline", No),
        long("prefer-online", No),
        long("offline", No),
        long("registry", Required),
        long("cache", Required),
        long("workspace", Required),
        long("workspaces", No),
        long("recursive", No),
        long("parallel", No),
    ],
    stop_at_operand: true,
    prefixes: true,
    single_dash_long: false,
    clusters: Clusters::Getopt,
};

/// `git clone`'s options (git's parse-options takes unambiguous prefixes):
/// `-c`/`--config` settings apply to the new repository and to the clone
/// itself (`core.fsmonitor`, `core.sshCommand`, `http.sslVerify`).
pub const GIT_CLONE_OPTIONS: OptionSpec = OptionSpec {
    short: "lsqvnc:o:b:u:j:",
    long: &[
        long("local", No),
        long("no-local", No),
        long("no-hardlinks", No),
        long("shared", No),
        long("dissociate", No),
        long("quiet", No),
        long("verbose", No),
        long("progress", No),
        long("no-checkout", No),
        long("bare", No),
        long("mirror", No),
        long("single-branch", No),
        long("no-single-branch", No),
        long("no-tags", No),
        long("tags", No),
        long("recursive", Optional),
        long("recurse-submodules", Optional),
        long("shallow-submodules", No),
        long("no-shallow-submodules", No),
        long("remote-submodules", No),
        long("no-remote-submodules", No),
        long("sparse", No),
        long("also-filter-submodules", No),
        long("reject-shallow", No),
        long("no-reject-shallow", No),
        long("template", Required),
        long("origin", Required),
        long("branch", Required),
        long("revision", Required),
        long("upload-pack", Required),
        long("reference", Required),
        long("reference-if-able", Required),
        long("separate-git-dir", Required),
        long("depth", Required),
        long("shallow-since", Required),
        long("shallow-exclude", Required),
        long("config", Required),
        long("server-option", Required),
        long("jobs", Required),
        long("filter", Required),
        long("bundle-uri", Required),
        long("ref-format", Required),
    ],
    stop_at_operand: false,
    prefixes: true,
    single_dash_long: false,
    clusters: Clusters::Getopt,
};

/// wget's names: unless told a file (`-O`) or only checking (`--spider`),
/// wget saves what it fetches under the server's name.
pub const WGET: &[&str] = &["wget", "wget2"];

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
        secrets: NO_SECRETS,
        inert: Inert::Never,
        startup_files: &[],
        response_files: false,
    }
}

use HasArg::{No, Optional, Required};
use Role::*;

const RECURSIVE: &[(&[&str], Modifier)] = &[(&["r", "R", "recursive"], Modifier::Recursive)];

/// A shell's options (bash's; the others take a subset).
const SHELL_OPTIONS: OptionSpec = OptionSpec {
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
    single_dash_long: false,
    clusters: Clusters::Getopt,
};

/// What a shell's flags do beyond choosing `-c`: `-i` runs `~/.bashrc`,
/// `-s` reads the script from its input, and the rest change how the
/// script is read or run (no globbing, assignments anywhere, `-n` reads
/// without running, dumps and the debugger), so the analysis's reading
/// would no longer be bash's.
const SHELL_MODIFIERS: &[(&[&str], Modifier)] = &[
    (&["i"], Modifier::Runs),
    (
        &[
            "s",
            "a",
            "b",
            "f",
            "h",
            "k",
            "m",
            "n",
            "p",
            "r",
            "t",
            "v",
            "B",
            "C",
            "D",
            "E",
            "H",
            "P",
            "posix",
            "restricted",
            "verbose",
            "debugger",
            "dump-strings",
            "dump-po-strings",
            "noediting",
            "pretty-print",
        ],
        Modifier::Setting,
    ),
];

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
    CommandSpec {
        inert: Inert::Runner,
        ..spec(
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
        )
    },
    spec(
        &["nohup", "catchsegv", "pkexec-wrapper"],
        posix("", &[]),
        Operands::Command { skip: 0 },
    ),
    spec(
        &["setsid"],
        posix(
            "cfw",
            &[long("ctty", No), long("fork", No), long("wait", No)],
        ),
        Operands::Command { skip: 0 },
    ),
    spec(
        &["unbuffer"],
        posix("p", &[]),
        Operands::Command { skip: 0 },
    ),
    spec(
        &["caffeinate"],
        posix("dimsut:w:", &[]),
        Operands::Command { skip: 0 },
    ),
    CommandSpec {
        inert: Inert::Runner,
        ..spec(
            &["stdbuf"],
            posix(
                "i:o:e:",
                &[
                    long("input", Required),
                    long("output", Required),
                    long("error", Required),
                    long("help", No),
                    long("version", No),
                ],
            ),
            Operands::Command { skip: 0 },
        )
    },
    spec(
        &["time"],
        posix(
            "af:o:pqv",
            &[
                long("append", No),
                long("format", Required),
                long("output", Required),
                long("portability", No),
                long("quiet", No),
                long("verbose", No),
            ],
        ),
        Operands::Command { skip: 0 },
    ),
    spec(
        &["strace", "ltrace"],
        posix(
            "cCdDfFhiqrtTvVxXyzZa:b:e:E:I:o:O:p:P:s:S:u:U:",
            &[
                long("output", Required),
                long("trace", Required),
                long("env", Required),
            ],
        ),
        Operands::Command { skip: 0 },
    ),
    spec(
        &["pkexec"],
        posix(
            "",
            &[
                long("user", Required),
                long("disable-internal-agent", No),
                long("keep-cwd", No),
                long("version", No),
                long("help", No),
            ],
        ),
        Operands::Command { skip: 0 },
    ),
    spec(
        &["systemd-run"],
        posix(
            "dGhHM:p:qrStu:E:",
            &[
                long("user", No),
                long("system", No),
                long("scope", No),
                long("unit", Required),
                long("property", Required),
                long("description", Required),
                long("slice", Required),
                long("remain-after-exit", No),
                long("service-type", Required),
                long("uid", Required),
                long("gid", Required),
                long("nice", Required),
                long("working-directory", Required),
                long("setenv", Required),
                long("pty", No),
                long("pipe", No),
                long("quiet", No),
                long("wait", No),
                long("collect", No),
                long("same-dir", No),
                long("on-active", Required),
                long("on-calendar", Required),
                long("timer-property", Required),
                long("no-block", No),
                long("no-ask-password", No),
            ],
        ),
        Operands::Command { skip: 0 },
    ),
    spec(
        &["screen"],
        posix("AamOpqrRxDdiLlfS:T:t:h:e:c:s:X:", &[]),
        Operands::Command { skip: 0 },
    ),
    spec(
        &[
            "nsenter",
            "unshare",
            "firejail",
            "proot",
            "fakeroot",
            "fakechroot",
            "torsocks",
            "proxychains",
            "proxychains4",
            "tsocks",
            "sg",
            "numactl",
            "cgexec",
            "sem",
        ],
        posix("", &[]),
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
    CommandSpec {
        inert: Inert::Runner,
        ..spec(
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
        )
    },
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
        inert: Inert::Builtin,
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
    CommandSpec {
        // `-a FILE` reads the arguments from a file; `-p` and `-o` talk to
        // the terminal; `-I` puts input into the command's words.
        option_roles: &[(&["a", "arg-file"], Read), (&["process-slot-var"], Setting)],
        modifiers: &[
            (&["p", "interactive", "o", "open-tty"], Modifier::Terminal),
            (&["I", "i", "replace"], Modifier::Substitutes),
        ],
        inert: Inert::Runner,
        ..spec(
            &["xargs"],
            posix(
                "0a:d:E:e::I:i::J:L:l::n:oP:prR:s:S:tx",
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
        )
    },
    spec(&["eval"], posix("", &[]), Operands::Script),
    // shelljs's command line (`npx shx rm -rf dist`): runs the shelljs
    // command named first.
    spec(
        &["shx"],
        posix("", &[long("silent", No), long("verbose", No)]),
        Operands::Command { skip: 0 },
    ),
    CommandSpec {
        option_roles: &[(&["c", "command"], Script)],
        ..spec(
            &["script"],
            opts(
                "ac:eEfqTt::O:I:B:",
                &[
                    long("command", Required),
                    long("append", No),
                    long("quiet", No),
                    long("return", No),
                    long("flush", No),
                ],
            ),
            Operands::Special,
        )
    },
    spec(
        &["tmux"],
        posix("2CDlNuvVc:f:L:S:T:", &[]),
        Operands::Special,
    ),
    spec(&["cmake"], posix("", &[]), Operands::Special),
    spec(
        &["at", "batch"],
        opts("Vqf:mMlrdvt:b", &[]),
        Operands::Special,
    ),
    CommandSpec {
        inert: Inert::Find,
        ..spec(&["find"], posix("HLPD:O:", &[]), Operands::Special)
    },
    spec(&["parallel"], posix("", &[]), Operands::Special),
    // The shells whose `-c` script the analysis reads as bash, and the
    // others (read as bash too, but not trusted to be by the inert stage).
    CommandSpec {
        option_roles: &[(&["O", "o"], Setting), (&["rcfile", "init-file"], Run)],
        modifiers: SHELL_MODIFIERS,
        inert: Inert::Shell,
        ..spec(
            &["bash", "sh", "dash", "zsh"],
            SHELL_OPTIONS,
            Operands::Shell,
        )
    },
    CommandSpec {
        option_roles: &[(&["O", "o"], Setting), (&["rcfile", "init-file"], Run)],
        modifiers: SHELL_MODIFIERS,
        ..spec(
            &[
                "ksh", "mksh", "ash", "rbash", "yash", "posh", "lksh", "pdksh", "oksh",
            ],
            SHELL_OPTIONS,
            Operands::Shell,
        )
    },
    // ---------------------------------------------------------------- files
    CommandSpec {
        modifiers: &[
            (&["r", "R", "recursive"], Modifier::Recursive),
            (&["f", "force"], Modifier::Force),
        ],
        ..spec(
            &[
                "rm",
                "rimraf",
                "trash",
                "trash-put",
                "srm",
                "unlink",
                "rmdir",
            ],
            opts(
                "dfiIrRvp",
                &[
                    long("force", No),
                    long("interactive", Optional),
                    long("one-file-system", No),
                    long("no-preserve-root", No),
                    long("preserve-root", Optional),
                    long("recursive", No),
                    long("dir", No),
                    long("verbose", No),
                    long("parents", No),
                    long("ignore-fail-on-non-empty", No),
                    long("help", No),
                    long("version", No),
                ],
            ),
            Operands::All(Delete),
        )
    },
    CommandSpec {
        modifiers: &[(&["u", "remove"], Modifier::Force)],
        ..spec(
            &["shred"],
            opts(
                "fn:s:uvxz",
                &[
                    long("force", No),
                    long("iterations", Required),
                    long("random-source", Required),
                    long("size", Required),
                    long("remove", Optional),
                    long("verbose", No),
                    long("exact", No),
                    long("zero", No),
                ],
            ),
            Operands::All(Write),
        )
    },
    CommandSpec {
        modifiers: RECURSIVE,
        ..spec(
            &["cp", "install", "ditto", "gcp"],
            opts(
                "abdDfHilLnPprRsStTuvxg:m:o:S:Z",
                &[
                    long("archive", No),
                    long("attributes-only", No),
                    long("backup", Optional),
                    long("copy-contents", No),
                    long("debug", No),
                    long("force", No),
                    long("interactive", No),
                    long("link", No),
                    long("dereference", No),
                    long("no-clobber", No),
                    long("no-dereference", No),
                    long("preserve", Optional),
                    long("no-preserve", Required),
                    long("parents", No),
                    long("recursive", No),
                    long("reflink", Optional),
                    long("remove-destination", No),
                    long("sparse", Required),
                    long("strip-trailing-slashes", No),
                    long("symbolic-link", No),
                    long("suffix", Required),
                    long("target-directory", Required),
                    long("no-target-directory", No),
                    long("update", Optional),
                    long("verbose", No),
                    long("one-file-system", No),
                    long("context", Optional),
                    long("directory", No),
                    long("group", Required),
                    long("mode", Required),
                    long("owner", Required),
                    long("compare", No),
                    long("strip", No),
                    long("strip-program", Required),
                    long("preserve-timestamps", No),
                ],
            ),
            Operands::Copy {
                sources: Read,
                dest: Write,
                target_dir: &["t", "target-directory"],
            },
        )
    },
    spec(
        &["mv", "gmv"],
        opts(
            "bfinStTuvZ",
            &[
                long("backup", Optional),
                long("force", No),
                long("interactive", No),
                long("no-clobber", No),
                long("strip-trailing-slashes", No),
                long("suffix", Required),
                long("target-directory", Required),
                long("no-target-directory", No),
                long("update", Optional),
                long("verbose", No),
                long("context", No),
                long("exchange", No),
            ],
        ),
        Operands::Copy {
            sources: MoveAway,
            dest: Write,
            target_dir: &["t", "target-directory"],
        },
    ),
    spec(
        &["ln", "link"],
        opts(
            "bdfFinLPrsS:t:Tv",
            &[
                long("backup", Optional),
                long("directory", No),
                long("force", No),
                long("interactive", No),
                long("logical", No),
                long("no-dereference", No),
                long("physical", No),
                long("relative", No),
                long("symbolic", No),
                long("suffix", Required),
                long("target-directory", Required),
                long("no-target-directory", No),
                long("verbose", No),
            ],
        ),
        Operands::Copy {
            sources: LinkTarget,
            dest: Write,
            target_dir: &["t", "target-directory"],
        },
    ),
    spec(
        &["tee"],
        opts(
            "aip",
            &[
                long("append", No),
                long("ignore-interrupts", No),
                long("output-error", Optional),
            ],
        ),
        Operands::All(Write),
    ),
    spec(
        &["touch", "truncate", "mkdir", "mkfifo", "mknod", "fallocate"],
        opts(
            "acd:fhmr:t:s:o:l:npvz",
            &[
                long("date", Required),
                long("no-create", No),
                long("no-dereference", No),
                long("reference", Required),
                long("time", Required),
                long("size", Required),
                long("io-blocks", No),
                long("parents", No),
                long("mode", Required),
                long("verbose", No),
                long("context", Optional),
                long("length", Required),
                long("offset", Required),
            ],
        ),
        Operands::All(Write),
    ),
    CommandSpec {
        modifiers: &[(&["R", "recursive"], Modifier::Recursive)],
        ..spec(
            &["chmod", "chown", "chgrp", "chattr", "chflags", "lchown"],
            opts(
                "cfhvRHLPV",
                &[
                    long("changes", No),
                    long("silent", No),
                    long("quiet", No),
                    long("verbose", No),
                    long("no-dereference", No),
                    long("dereference", No),
                    long("no-preserve-root", No),
                    long("preserve-root", No),
                    long("reference", Required),
                    long("recursive", No),
                    long("from", Required),
                ],
            ),
            Operands::Special,
        )
    },
    CommandSpec {
        modifiers: &[(&["R", "recursive"], Modifier::Recursive)],
        ..spec(
            &["setfacl"],
            opts(
                "bkndRLPm:M:x:X:",
                &[
                    long("modify", Required),
                    long("remove", Required),
                    long("recursive", No),
                    long("set", Required),
                    long("set-file", Required),
                ],
            ),
            Operands::All(Mode),
        )
    },
    CommandSpec {
        modifiers: &[(&["i"], Modifier::InPlace)],
        option_roles: &[(&["e", "E"], Value)],
        ..spec(
            &["perl"],
            opts("0::aCcde:E:F:hi::I:lm:M:nprsStTuUvwWxX", &[]),
            Operands::Special,
        )
    },
    spec(
        &[
            "vi", "vim", "nvim", "nano", "emacs", "ed", "ex", "micro", "sudoedit", "code", "subl",
            "pico", "joe", "kak", "hx", "gedit", "kate",
        ],
        opts("", &[]),
        Operands::All(Write),
    ),
    spec(
        &["dd"],
        opts("", &[long("help", No), long("version", No)]),
        Operands::Special,
    ),
    spec(
        &["tar", "bsdtar", "gtar"],
        opts(
            "AcdrtuxaBb:C:f:F:g:GhiI:jJkK:lL:mMN:oO:pPRsSST:UvV:wWX:zZ",
            &[
                long("catenate", No),
                long("concatenate", No),
                long("create", No),
                long("diff", No),
                long("compare", No),
                long("delete", No),
                long("append", No),
                long("list", No),
                long("update", No),
                long("extract", No),
                long("get", No),
                long("directory", Required),
                long("file", Required),
                long("files-from", Required),
                long("exclude", Required),
                long("exclude-from", Required),
                long("to-command", Required),
                long("checkpoint-action", Required),
                long("use-compress-program", Required),
                long("info-script", Required),
                long("new-volume-script", Required),
                long("rsh-command", Required),
                long("transform", Required),
                long("gzip", No),
                long("bzip2", No),
                long("xz", No),
                long("zstd", No),
                long("verbose", No),
                long("overwrite", No),
                long("keep-old-files", No),
                long("absolute-names", No),
                long("strip-components", Required),
                long("owner", Required),
                long("group", Required),
                long("mode", Required),
                long("one-file-system", No),
                long("dereference", No),
            ],
        ),
        Operands::Special,
    ),
    CommandSpec {
        secrets: Secrets {
            options: &[(&["P", "password"], Secret::Password)],
            ..NO_SECRETS
        },
        ..spec(
            &["zip"],
            opts(
                "rRjJmDqvTyXZ:x:i:t:n:P:b:0123456789eFgAlk",
                &[long("recurse-paths", No), long("password", Required)],
            ),
            Operands::Special,
        )
    },
    CommandSpec {
        secrets: Secrets {
            options: &[(&["P"], Secret::Password)],
            ..NO_SECRETS
        },
        ..spec(
            &["unzip"],
            opts("d:lnoqtuvxjCLMVXKZP:", &[]),
            Operands::Special,
        )
    },
    // `7z x -pSECRET a.7z`: the password is glued; the other switches are
    // not getopt's, so only `-p` is listed.
    CommandSpec {
        secrets: Secrets {
            options: &[(&["p"], Secret::Password)],
            ..NO_SECRETS
        },
        ..spec(&["7z", "7za", "7zr"], opts("p::", &[]), Operands::Special)
    },
    spec(&["sqlite3"], opts("", &[]), Operands::Special),
    CommandSpec {
        secrets: Secrets {
            operands: SecretOperands::ConfigSet,
            ..NO_SECRETS
        },
        ..spec(&["gh", "aws"], opts("", &[]), Operands::Special)
    },
    CommandSpec {
        secrets: Secrets {
            options: &[(&["p", "password"], Secret::Password)],
            after: &["login"],
            operands: SecretOperands::None,
        },
        ..spec(
            &["az"],
            opts(
                "u:t:p:",
                &[
                    long("username", Required),
                    long("tenant", Required),
                    long("password", Required),
                ],
            ),
            Operands::Special,
        )
    },
    CommandSpec {
        secrets: Secrets {
            options: &[(&["U", "user"], Secret::AfterPercent)],
            ..NO_SECRETS
        },
        ..spec(
            &["smbclient"],
            opts(
                "I:p:n:R:s:W:l:O:t:T:D:c:d:m:A:U:",
                &[long("user", Required)],
            ),
            Operands::Special,
        )
    },
    spec(
        &[
            "gsutil",
            "rclone",
            "gcloud",
            "s3cmd",
            "mc",
            "lftp",
            "ftp",
            "tftp",
            "aria2c",
            "croc",
            "magic-wormhole",
            "wormhole",
            "transfer",
            "ffsend",
        ],
        opts("", &[]),
        Operands::Special,
    ),
    CommandSpec {
        secrets: Secrets {
            operands: SecretOperands::ConfigSet,
            ..NO_SECRETS
        },
        option_roles: git::GLOBAL_ROLES,
        modifiers: git::GLOBAL_MODIFIERS,
        inert: Inert::Git,
        ..spec(&["git"], git::GLOBAL, Operands::Special)
    },
    // ---------------------------------------------------------------- network
    CommandSpec {
        option_roles: &[
            (
                &[
                    "o",
                    "output",
                    "D",
                    "dump-header",
                    "c",
                    "cookie-jar",
                    "trace",
                    "trace-ascii",
                    "stderr",
                    "etag-save",
                    "libcurl",
                ],
                Write,
            ),
            (&["output-dir"], WriteInto),
            (&["T", "upload-file"], Upload),
            (
                &[
                    "d",
                    "data",
                    "data-binary",
                    "data-ascii",
                    "json",
                    "data-urlencode",
                ],
                Data,
            ),
            (&["F", "form"], FormData),
            (&["H", "header", "proxy-header"], Header),
            (&["variable"], Variable),
            // `--netrc-file` is not here: curl sends an entry only to its
            // own host (the exfiltration rule reads `--location-trusted`).
            (&["K", "config"], Upload),
            (&["url"], Url),
            (
                &[
                    "x",
                    "proxy",
                    "preproxy",
                    "connect-to",
                    "resolve",
                    "socks4",
                    "socks4a",
                    "socks5",
                    "socks5-hostname",
                    "proxy1.0",
                    "doh-url",
                    "unix-socket",
                    "abstract-unix-socket",
                ],
                Route,
            ),
        ],
        modifiers: &[
            (
                &["k", "insecure", "proxy-insecure", "doh-insecure"],
                Modifier::Insecure,
            ),
            (
                &[
                    "O",
                    "remote-name",
                    "remote-name-all",
                    "J",
                    "remote-header-name",
                ],
                Modifier::RemoteName,
            ),
        ],
        network: Network::Client,
        secrets: Secrets {
            options: &[
                (
                    &["u", "user", "U", "proxy-user", "E", "cert"],
                    Secret::AfterColon,
                ),
                (&["pass", "proxy-pass"], Secret::Password),
                (&["oauth2-bearer"], Secret::Token),
            ],
            ..NO_SECRETS
        },
        ..spec(
            &["curl", "curlie"],
            opts(
                "0123468aA:b:Bc:C:d:D:e:E:fF:gGh:H:iIjJkK:lLm:MnNo:OpP:qQ:r:RsSt:T:u:U:vVw:x:X:y:Y:z:Z#",
                &[
                    long("next", No),
                    long("http1.0", No),
                    long("tlsv1", No),
                    long("ipv4", No),
                    long("ipv6", No),
                    long("append", No),
                    long("use-ascii", No),
                    long("fail", No),
                    long("fail-with-body", No),
                    long("fail-early", No),
                    long("get", No),
                    long("globoff", No),
                    long("head", No),
                    long("include", No),
                    long("junk-session-cookies", No),
                    long("remote-header-name", No),
                    long("insecure", No),
                    long("location", No),
                    long("location-trusted", No),
                    long("list-only", No),
                    long("manual", No),
                    long("no-buffer", No),
                    long("netrc", No),
                    long("netrc-optional", No),
                    long("remote-name", No),
                    long("remote-name-all", No),
                    long("proxytunnel", No),
                    long("disable", No),
                    long("remote-time", No),
                    long("show-error", No),
                    long("silent", No),
                    long("version", No),
                    long("verbose", No),
                    long("parallel", No),
                    long("parallel-immediate", No),
                    long("progress-bar", No),
                    long("anyauth", No),
                    long("basic", No),
                    long("digest", No),
                    long("ntlm", No),
                    long("ntlm-wb", No),
                    long("negotiate", No),
                    long("compressed", No),
                    long("compressed-ssh", No),
                    long("create-dirs", No),
                    long("crlf", No),
                    long("disable-eprt", No),
                    long("disable-epsv", No),
                    long("disallow-username-in-url", No),
                    long("false-start", No),
                    long("ftp-create-dirs", No),
                    long("ftp-pasv", No),
                    long("ftp-pret", No),
                    long("ftp-skip-pasv-ip", No),
                    long("ftp-ssl-ccc", No),
                    long("ftp-ssl-control", No),
                    long("haproxy-protocol", No),
                    long("http0.9", No),
                    long("http1.1", No),
                    long("http2", No),
                    long("http2-prior-knowledge", No),
                    long("http3", No),
                    long("http3-only", No),
                    long("ignore-content-length", No),
                    long("no-alpn", No),
                    long("no-keepalive", No),
                    long("no-npn", No),
                    long("no-progress-meter", No),
                    long("no-sessionid", No),
                    long("path-as-is", No),
                    long("post301", No),
                    long("post302", No),
                    long("post303", No),
                    long("proxy-anyauth", No),
                    long("proxy-basic", No),
                    long("proxy-digest", No),
                    long("proxy-insecure", No),
                    long("proxy-negotiate", No),
                    long("proxy-ntlm", No),
                    long("proxy-ssl-allow-beast", No),
                    long("proxy-ssl-auto-client-cert", No),
                    long("proxy-tlsv1", No),
                    long("raw", No),
                    long("remove-on-error", No),
                    long("retry-all-errors", No),
                    long("retry-connrefused", No),
                    long("sasl-ir", No),
                    long("socks5-basic", No),
                    long("socks5-gssapi", No),
                    long("socks5-gssapi-nec", No),
                    long("ssl", No),
                    long("ssl-allow-beast", No),
                    long("ssl-auto-client-cert", No),
                    long("ssl-no-revoke", No),
                    long("ssl-reqd", No),
                    long("ssl-revoke-best-effort", No),
                    long("sslv2", No),
                    long("sslv3", No),
                    long("styled-output", No),
                    long("suppress-connect-headers", No),
                    long("tcp-fastfail", No),
                    long("tcp-nodelay", No),
                    long("tftp-no-options", No),
                    long("tlsv1.0", No),
                    long("tlsv1.1", No),
                    long("tlsv1.2", No),
                    long("tlsv1.3", No),
                    long("tr-encoding", No),
                    long("trace-time", No),
                    long("xattr", No),
                    long("doh-insecure", No),
                    long("doh-cert-status", No),
                    long("cert-status", No),
                    long("mail-rcpt-allowfails", No),
                    long("no-clobber", No),
                    long("ca-native", No),
                    long("proxy-ca-native", No),
                    long("help", No),
                    long("user-agent", Required),
                    long("cookie", Required),
                    long("cookie-jar", Required),
                    long("continue-at", Required),
                    long("data", Required),
                    long("data-ascii", Required),
                    long("data-binary", Required),
                    long("data-raw", Required),
                    long("data-urlencode", Required),
                    long("dump-header", Required),
                    long("cert", Required),
                    long("referer", Required),
                    long("form", Required),
                    long("form-string", Required),
                    long("header", Required),
                    long("config", Required),
                    long("max-time", Required),
                    long("output", Required),
                    long("ftp-port", Required),
                    long("quote", Required),
                    long("range", Required),
                    long("upload-file", Required),
                    long("telnet-option", Required),
                    long("user", Required),
                    long("proxy-user", Required),
                    long("write-out", Required),
                    long("request", Required),
                    long("proxy", Required),
                    long("speed-limit", Required),
                    long("speed-time", Required),
                    long("time-cond", Required),
                    long("abstract-unix-socket", Required),
                    long("alt-svc", Required),
                    long("aws-sigv4", Required),
                    long("cacert", Required),
                    long("capath", Required),
                    long("cert-type", Required),
                    long("ciphers", Required),
                    long("connect-timeout", Required),
                    long("connect-to", Required),
                    long("crlfile", Required),
                    long("curves", Required),
                    long("delegation", Required),
                    long("dns-interface", Required),
                    long("dns-ipv4-addr", Required),
                    long("dns-ipv6-addr", Required),
                    long("dns-servers", Required),
                    long("doh-url", Required),
                    long("egd-file", Required),
                    long("engine", Required),
                    long("etag-compare", Required),
                    long("etag-save", Required),
                    long("expect100-timeout", Required),
                    long("ftp-account", Required),
                    long("ftp-alternative-to-user", Required),
                    long("ftp-method", Required),
                    long("ftp-ssl-ccc-mode", Required),
                    long("happy-eyeballs-timeout-ms", Required),
                    long("hostpubmd5", Required),
                    long("hostpubsha256", Required),
                    long("hsts", Required),
                    long("interface", Required),
                    long("json", Required),
                    long("keepalive-time", Required),
                    long("key", Required),
                    long("key-type", Required),
                    long("krb", Required),
                    long("libcurl", Required),
                    long("limit-rate", Required),
                    long("local-port", Required),
                    long("login-options", Required),
                    long("mail-auth", Required),
                    long("mail-from", Required),
                    long("mail-rcpt", Required),
                    long("max-filesize", Required),
                    long("max-redirs", Required),
                    long("netrc-file", Required),
                    long("noproxy", Required),
                    long("oauth2-bearer", Required),
                    long("output-dir", Required),
                    long("parallel-max", Required),
                    long("pass", Required),
                    long("pinnedpubkey", Required),
                    long("preproxy", Required),
                    long("proto", Required),
                    long("proto-default", Required),
                    long("proto-redir", Required),
                    long("proxy-cacert", Required),
                    long("proxy-capath", Required),
                    long("proxy-cert", Required),
                    long("proxy-cert-type", Required),
                    long("proxy-ciphers", Required),
                    long("proxy-crlfile", Required),
                    long("proxy-header", Required),
                    long("proxy-key", Required),
                    long("proxy-key-type", Required),
                    long("proxy-pass", Required),
                    long("proxy-pinnedpubkey", Required),
                    long("proxy-service-name", Required),
                    long("proxy-tls13-ciphers", Required),
                    long("proxy-tlsauthtype", Required),
                    long("proxy-tlspassword", Required),
                    long("proxy-tlsuser", Required),
                    long("proxy1.0", Required),
                    long("pubkey", Required),
                    long("random-file", Required),
                    long("rate", Required),
                    long("request-target", Required),
                    long("resolve", Required),
                    long("retry", Required),
                    long("retry-delay", Required),
                    long("retry-max-time", Required),
                    long("sasl-authzid", Required),
                    long("service-name", Required),
                    long("socks4", Required),
                    long("socks4a", Required),
                    long("socks5", Required),
                    long("socks5-gssapi-service", Required),
                    long("socks5-hostname", Required),
                    long("stderr", Required),
                    long("tls-max", Required),
                    long("tls13-ciphers", Required),
                    long("tlsauthtype", Required),
                    long("tlspassword", Required),
                    long("tlsuser", Required),
                    long("trace", Required),
                    long("trace-ascii", Required),
                    long("trace-config", Required),
                    long("unix-socket", Required),
                    long("url", Required),
                    long("url-query", Required),
                    long("variable", Required),
                    long("ech", Required),
                    long("ip-tos", Required),
                    long("vlan-priority", Required),
                    long("create-file-mode", Required),
                ],
            ),
            Operands::All(Url),
        )
    },
    CommandSpec {
        option_roles: &[
            (
                &[
                    "O",
                    "output-document",
                    "o",
                    "output-file",
                    "a",
                    "append-output",
                    "save-cookies",
                    "hsts-file",
                    "warc-file",
                ],
                Write,
            ),
            (&["P", "directory-prefix"], WriteInto),
            // `--certificate`/`--private-key` authenticate the client to
            // the server: the key signs, it is not sent.
            (&["post-file", "body-file"], Upload),
            (&["i", "input-file", "load-cookies"], Read),
            (&["e", "execute"], Value),
        ],
        modifiers: &[(&["no-check-certificate"], Modifier::Insecure)],
        network: Network::Client,
        secrets: Secrets {
            options: &[(
                &[
                    "password",
                    "http-password",
                    "proxy-password",
                    "ftp-password",
                ],
                Secret::Password,
            )],
            ..NO_SECRETS
        },
        ..spec(
            WGET,
            opts(
                "Vhbe:o:a:dqvnv:i:FB:t:O:ncNS:T:w:Q:4:6:xrkKmEpHlLnpD:A:R:I:X:P:U:",
                &[
                    long("version", No),
                    long("help", No),
                    long("background", No),
                    long("quiet", No),
                    long("verbose", No),
                    long("no-verbose", No),
                    long("force-html", No),
                    long("no-clobber", No),
                    long("continue", No),
                    long("progress", No),
                    long("timestamping", No),
                    long("no-use-server-timestamps", No),
                    long("server-response", No),
                    long("spider", No),
                    long("no-dns-cache", No),
                    long("ipv4", No),
                    long("ipv6", No),
                    long("no-proxy", No),
                    long("ignore-length", No),
                    long("no-cookies", No),
                    long("keep-session-cookies", No),
                    long("save-headers", No),
                    long("content-disposition", No),
                    long("content-on-error", No),
                    long("trust-server-names", No),
                    long("auth-no-challenge", No),
                    long("no-check-certificate", No),
                    long("https-only", No),
                    long("no-hsts", No),
                    long("no-passive-ftp", No),
                    long("preserve-permissions", No),
                    long("retr-symlinks", No),
                    long("recursive", No),
                    long("delete-after", No),
                    long("convert-links", No),
                    long("convert-file-only", No),
                    long("backup-converted", No),
                    long("mirror", No),
                    long("page-requisites", No),
                    long("strict-comments", No),
                    long("no-parent", No),
                    long("no-directories", No),
                    long("force-directories", No),
                    long("no-host-directories", No),
                    long("protocol-directories", No),
                    long("adjust-extension", No),
                    long("ignore-case", No),
                    long("relative", No),
                    long("follow-ftp", No),
                    long("span-hosts", No),
                    long("no-remove-listing", No),
                    long("no-glob", No),
                    long("no-iri", No),
                    long("ask-password", No),
                    long("xattr", No),
                    long("unlink", No),
                    long("no-netrc", No),
                    long("no-config", No),
                    long("execute", Required),
                    long("output-file", Required),
                    long("append-output", Required),
                    long("debug-file", Required),
                    long("input-file", Required),
                    long("base", Required),
                    long("config", Required),
                    long("rejected-log", Required),
                    long("tries", Required),
                    long("retry-connrefused", Required),
                    long("output-document", Required),
                    long("backups", Required),
                    long("wait", Required),
                    long("waitretry", Required),
                    long("random-wait", Required),
                    long("timeout", Required),
                    long("dns-timeout", Required),
                    long("connect-timeout", Required),
                    long("read-timeout", Required),
                    long("limit-rate", Required),
                    long("bind-address", Required),
                    long("bind-dns-address", Required),
                    long("quota", Required),
                    long("restrict-file-names", Required),
                    long("prefer-family", Required),
                    long("user", Required),
                    long("password", Required),
                    long("use-askpass", Required),
                    long("local-encoding", Required),
                    long("remote-encoding", Required),
                    long("directory-prefix", Required),
                    long("cut-dirs", Required),
                    long("default-page", Required),
                    long("http-user", Required),
                    long("http-password", Required),
                    long("header", Required),
                    long("compression", Required),
                    long("max-redirect", Required),
                    long("proxy-user", Required),
                    long("proxy-password", Required),
                    long("referer", Required),
                    long("load-cookies", Required),
                    long("save-cookies", Required),
                    long("post-data", Required),
                    long("post-file", Required),
                    long("body-data", Required),
                    long("body-file", Required),
                    long("method", Required),
                    long("secure-protocol", Required),
                    long("certificate", Required),
                    long("certificate-type", Required),
                    long("private-key", Required),
                    long("private-key-type", Required),
                    long("ca-certificate", Required),
                    long("ca-directory", Required),
                    long("crl-file", Required),
                    long("pinnedpubkey", Required),
                    long("random-file", Required),
                    long("egd-file", Required),
                    long("hsts-file", Required),
                    long("warc-file", Required),
                    long("warc-header", Required),
                    long("warc-max-size", Required),
                    long("warc-cdx", Required),
                    long("warc-dedup", Required),
                    long("warc-tempdir", Required),
                    long("ftp-user", Required),
                    long("ftp-password", Required),
                    long("level", Required),
                    long("accept", Required),
                    long("reject", Required),
                    long("accept-regex", Required),
                    long("reject-regex", Required),
                    long("regex-type", Required),
                    long("domains", Required),
                    long("exclude-domains", Required),
                    long("follow-tags", Required),
                    long("ignore-tags", Required),
                    long("include-directories", Required),
                    long("exclude-directories", Required),
                    long("user-agent", Required),
                    long("ciphers", Required),
                    long("report-speed", Required),
                ],
            ),
            Operands::All(Url),
        )
    },
    CommandSpec {
        network: Network::Client,
        ..spec(
            &["http", "https", "xh", "xhs", "httpie"],
            opts("", &[]),
            Operands::Special,
        )
    },
    CommandSpec {
        network: Network::Stream,
        ..spec(
            &[
                "nc", "ncat", "netcat", "telnet", "socat", "mail", "mailx", "sendmail", "mutt",
                "s_client", "cryptcat", "pwncat",
            ],
            opts("", &[]),
            Operands::Special,
        )
    },
    CommandSpec {
        network: Network::Stream,
        secrets: Secrets {
            options: &[
                (&["pass", "passin", "passout"], Secret::OpensslPass),
                (&["k", "kfile"], Secret::Password),
            ],
            ..NO_SECRETS
        },
        ..spec(
            &["openssl"],
            single_dash(&[
                long("pass", Required),
                long("passin", Required),
                long("passout", Required),
                long("k", Required),
                long("kfile", Required),
                long("in", Required),
                long("out", Required),
                long("inkey", Required),
                long("key", Required),
                long("keyout", Required),
                long("cert", Required),
                long("connect", Required),
                long("host", Required),
                long("subj", Required),
                long("days", Required),
                long("config", Required),
            ]),
            Operands::Special,
        )
    },
    CommandSpec {
        network: Network::Stream,
        option_roles: &[(&["o"], Value)],
        ..spec(
            &["ssh"],
            posix(
                "46AaCfGgKkMNnqsTtVvXxYyB:b:c:D:E:e:F:I:i:J:L:l:m:O:o:p:Q:R:S:W:w:",
                &[],
            ),
            Operands::Special,
        )
    },
    CommandSpec {
        network: Network::RemoteCopy,
        // scp's `-R` copies between remotes through the local host; only
        // `-r` recurses, and scp has no long options.
        modifiers: &[(&["r"], Modifier::Recursive)],
        ..spec(
            &["scp"],
            opts("346ABCOpqRrsTvc:D:F:i:J:l:o:P:S:X:", &[]),
            Operands::Copy {
                sources: Read,
                dest: Write,
                target_dir: &[],
            },
        )
    },
    CommandSpec {
        network: Network::RemoteCopy,
        ..spec(
            &["sftp"],
            opts("46AaCfNpqrvB:b:c:D:F:i:J:l:o:P:R:S:s:X:", &[]),
            Operands::Special,
        )
    },
    CommandSpec {
        network: Network::RemoteCopy,
        ..spec(
            &["rsync"],
            opts(
                "vqcarRbuUdlLkKHpEAXoDgtOJNSxInhPWz0iyCFs46e:f:T:B:M:",
                &[
                    long("verbose", No),
                    long("quiet", No),
                    long("checksum", No),
                    long("archive", No),
                    long("recursive", No),
                    long("relative", No),
                    long("backup", No),
                    long("update", No),
                    long("links", No),
                    long("copy-links", No),
                    long("perms", No),
                    long("owner", No),
                    long("group", No),
                    long("times", No),
                    long("dry-run", No),
                    long("whole-file", No),
                    long("one-file-system", No),
                    long("existing", No),
                    long("ignore-existing", No),
                    long("remove-source-files", No),
                    // `--del` is rsync's own alias of `--delete-during`.
                    long("del", No),
                    long("delete", No),
                    long("delete-before", No),
                    long("delete-during", No),
                    long("delete-delay", No),
                    long("delete-after", No),
                    long("delete-excluded", No),
                    long("force", No),
                    long("compress", No),
                    long("progress", No),
                    long("partial", No),
                    long("human-readable", No),
                    long("stats", No),
                    long("itemize-changes", No),
                    long("inplace", No),
                    long("append", No),
                    long("rsh", Required),
                    long("rsync-path", Required),
                    long("exclude", Required),
                    long("include", Required),
                    long("exclude-from", Required),
                    long("include-from", Required),
                    long("files-from", Required),
                    long("filter", Required),
                    long("chmod", Required),
                    long("chown", Required),
                    long("temp-dir", Required),
                    long("backup-dir", Required),
                    long("suffix", Required),
                    long("compare-dest", Required),
                    long("copy-dest", Required),
                    long("link-dest", Required),
                    long("password-file", Required),
                    long("log-file", Required),
                    long("bwlimit", Required),
                    long("timeout", Required),
                    long("port", Required),
                    long("max-size", Required),
                    long("min-size", Required),
                    long("out-format", Required),
                ],
            ),
            Operands::Copy {
                sources: ReadTree,
                dest: Write,
                target_dir: &[],
            },
        )
    },
    CommandSpec {
        network: Network::Stream,
        ..spec(
            &[
                "nslookup",
                "dig",
                "host",
                "drill",
                "ping",
                "ping6",
                "traceroute",
            ],
            opts("", &[]),
            Operands::Ignore,
        )
    },
    // ---------------------------------------------------------------- devices
    spec(
        &[
            "mkfs",
            "mke2fs",
            "mkswap",
            "mkfs.ext2",
            "mkfs.ext3",
            "mkfs.ext4",
            "mkfs.xfs",
            "mkfs.btrfs",
            "mkfs.vfat",
            "mkfs.fat",
            "mkfs.ntfs",
            "mkfs.exfat",
            "mkfs.f2fs",
            "mkfs.minix",
            "mkdosfs",
            "mkntfs",
            "newfs",
            "newfs_apfs",
            "newfs_hfs",
            "newfs_msdos",
            "newfs_exfat",
            "newfs_udf",
            "blkdiscard",
            "badblocks",
        ],
        opts("", &[]),
        Operands::Special,
    ),
    spec(
        &["wipefs"],
        opts(
            "abfhiJno:pqt:O:V",
            &[
                long("all", No),
                long("backup", No),
                long("force", No),
                long("help", No),
                long("noheadings", No),
                long("json", No),
                long("lock", Optional),
                long("no-act", No),
                long("offset", Required),
                long("output", Required),
                long("parsable", No),
                long("quiet", No),
                long("types", Required),
                long("version", No),
            ],
        ),
        Operands::Special,
    ),
    spec(PARTITIONERS, opts("", &[]), Operands::Special),
    // del-cli (`npx del-cli DIR`) removes trees, like rimraf (with rm).
    spec(
        &["del-cli"],
        opts("vIg", &[long("glob", No), long("preserve-root", No)]),
        Operands::Special,
    ),
    // ---------------------------------------------------------------- accounts
    // shadow-utils parse with getopt_long: `--app --gr sudo` is
    // `--append --groups sudo`.
    spec(
        &["usermod"],
        opts(
            "abc:d:e:f:g:G:hl:Lmop:P:rR:s:u:Uv:V:w:W:Z:",
            &[
                long("append", No),
                long("badname", No),
                long("comment", Required),
                long("home", Required),
                long("expiredate", Required),
                long("inactive", Required),
                long("gid", Required),
                long("groups", Required),
                long("help", No),
                long("login", Required),
                long("lock", No),
                long("move-home", No),
                long("non-unique", No),
                long("password", Required),
                long("prefix", Required),
                long("remove", No),
                long("root", Required),
                long("shell", Required),
                long("uid", Required),
                long("unlock", No),
                long("add-subuids", Required),
                long("del-subuids", Required),
                long("add-subgids", Required),
                long("del-subgids", Required),
                long("selinux-user", Required),
            ],
        ),
        Operands::Ignore,
    ),
    spec(
        &["useradd"],
        opts(
            "b:c:d:De:f:g:G:hk:K:lmMNop:P:rR:s:u:UZ:",
            &[
                long("base-dir", Required),
                long("btrfs-subvolume-home", No),
                long("comment", Required),
                long("home-dir", Required),
                long("defaults", No),
                long("expiredate", Required),
                long("inactive", Required),
                long("gid", Required),
                long("groups", Required),
                long("help", No),
                long("skel", Required),
                long("key", Required),
                long("no-log-init", No),
                long("create-home", No),
                long("no-create-home", No),
                long("no-user-group", No),
                long("non-unique", No),
                long("password", Required),
                long("prefix", Required),
                long("system", No),
                long("root", Required),
                long("shell", Required),
                long("uid", Required),
                long("user-group", No),
                long("selinux-user", Required),
            ],
        ),
        Operands::Ignore,
    ),
    spec(
        &["gpasswd"],
        opts(
            "a:d:hQ:rRM:A:",
            &[
                long("add", Required),
                long("delete", Required),
                long("help", No),
                long("root", Required),
                long("remove-password", No),
                long("restrict", No),
                long("members", Required),
                long("administrators", Required),
            ],
        ),
        Operands::Ignore,
    ),
    // ---------------------------------------------------------------- readers
    spec(
        // The readers moved to `readers.rs`, where every option is classified.
        &["[[", "whereis"],
        opts("", &[]),
        Operands::Ignore,
    ),
    CommandSpec {
        modifiers: &[(
            &["r", "R", "recursive", "dereference-recursive"],
            Modifier::Recursive,
        )],
        ..spec(
            &["ag", "ack"],
            opts(
                "e:f:m:A:B:C:rR",
                &[
                    long("regexp", Required),
                    long("file", Required),
                    long("recursive", No),
                    long("dereference-recursive", No),
                ],
            ),
            Operands::After(1, Read),
        )
    },
    spec(
        &["basenc"],
        opts("diw:", &[long("decode", No), long("wrap", Required)]),
        Operands::All(Read),
    ),
    spec(
        &[
            "less", "more", "bat", "gzip", "xz", "bzip2", "zstd", "lz4", "gpg", "age", "yq",
            "iconv",
        ],
        opts("", &[]),
        Operands::All(Read),
    ),
    spec(&["sponge"], opts("a", &[]), Operands::All(Write)),
    spec(
        &["patch"],
        opts(
            "bcEeflnNRstuvZB:d:D:F:g:i:o:p:r:V:Y:z:",
            &[
                long("input", Required),
                long("output", Required),
                long("directory", Required),
                long("strip", Required),
                long("reject-file", Required),
                long("dry-run", No),
            ],
        ),
        Operands::Special,
    ),
    // ------------------------------------------------ secret carriers
    // Commands vouch knows only for the passwords their options carry;
    // their operands and option values are read like an unknown command's.
    CommandSpec {
        option_roles: &[(&["u", "username", "p", "password"], Read)],
        ..secret_carrier(
            &[
                "docker", "podman", "nerdctl", "buildah", "skopeo", "helm", "oras", "crane",
            ],
            opts(
                "u:p:",
                &[
                    long("username", Required),
                    long("password", Required),
                    long("password-stdin", No),
                ],
            ),
            Secrets {
                options: &[(&["p", "password"], Secret::Password)],
                after: &["login"],
                operands: SecretOperands::None,
            },
        )
    },
    CommandSpec {
        option_roles: &[(
            &["h", "p", "s", "a", "u", "r", "i", "n", "pass", "user"],
            Read,
        )],
        ..secret_carrier(
            &["redis-cli", "valkey-cli", "keydb-cli"],
            opts(
                "h:p:s:a:u:r:i:n:cxe",
                &[
                    long("pass", Required),
                    long("user", Required),
                    long("askpass", No),
                    long("tls", No),
                ],
            ),
            Secrets {
                options: &[(&["a", "pass"], Secret::Password)],
                ..NO_SECRETS
            },
        )
    },
    CommandSpec {
        option_roles: &[(
            &[
                "h",
                "P",
                "u",
                "D",
                "S",
                "e",
                "host",
                "port",
                "user",
                "database",
                "socket",
                "execute",
                "defaults-file",
                "defaults-extra-file",
                "login-path",
            ],
            Read,
        )],
        ..secret_carrier(
            &[
                "mysql",
                "mysqldump",
                "mysqladmin",
                "mysqlimport",
                "mysqlshow",
                "mysqlcheck",
                "mysqlpump",
                "mysqlsh",
                "mariadb",
                "mariadb-dump",
                "mariadb-admin",
            ],
            // `-p` alone prompts and the next word is a database name, so
            // the password is glued or nothing.
            opts(
                "h:P:u:D:S:e:p::",
                &[
                    long("host", Required),
                    long("port", Required),
                    long("user", Required),
                    long("database", Required),
                    long("socket", Required),
                    long("execute", Required),
                    long("password", Optional),
                    long("defaults-file", Required),
                    long("defaults-extra-file", Required),
                    long("login-path", Required),
                ],
            ),
            Secrets {
                options: &[(&["p", "password"], Secret::Password)],
                ..NO_SECRETS
            },
        )
    },
    CommandSpec {
        option_roles: &[(&["f", "d", "p", "P"], Read)],
        ..secret_carrier(
            &["sshpass"],
            // The wrapped command's own `-p 2222` is not sshpass's.
            posix("f:d:p:P:e::vhV", &[]),
            Secrets {
                options: &[(&["p"], Secret::Password)],
                ..NO_SECRETS
            },
        )
    },
    CommandSpec {
        option_roles: &[(&["u", "h", "d", "c", "o", "p", "password"], Read)],
        ..secret_carrier(
            &[
                "mongo",
                "mongosh",
                "mongodump",
                "mongorestore",
                "mongoexport",
                "mongoimport",
            ],
            opts("u:h:d:c:o:p:", &[long("password", Required)]),
            Secrets {
                options: &[(&["p", "password"], Secret::Password)],
                ..NO_SECRETS
            },
        )
    },
    CommandSpec {
        option_roles: &[(
            &["S", "U", "d", "i", "Q", "o", "q", "t", "l", "A", "P"],
            Read,
        )],
        ..secret_carrier(
            &["sqlcmd", "bcp"],
            opts("S:U:d:i:Q:o:q:t:l:A:P:", &[]),
            Secrets {
                options: &[(&["P"], Secret::Password)],
                ..NO_SECRETS
            },
        )
    },
    CommandSpec {
        option_roles: &[(&["H", "h", "p", "D", "b", "s", "f", "y", "o", "w"], Read)],
        ..secret_carrier(
            &[
                "ldapsearch",
                "ldapmodify",
                "ldapadd",
                "ldapdelete",
                "ldapwhoami",
            ],
            opts("H:h:p:D:b:s:f:y:o:w:xWZ", &[]),
            Secrets {
                options: &[(&["w"], Secret::Password)],
                ..NO_SECRETS
            },
        )
    },
    CommandSpec {
        option_roles: &[(&["H", "h", "p", "D", "y", "w", "a", "s"], Read)],
        ..secret_carrier(
            &["ldappasswd"],
            opts("H:h:p:D:y:w:a:s:t:T:xWASZ", &[]),
            Secrets {
                options: &[(&["w", "a", "s"], Secret::Password)],
                ..NO_SECRETS
            },
        )
    },
    CommandSpec {
        option_roles: &[(
            &[
                "a", "b", "C", "D", "E", "f", "F", "G", "I", "J", "j", "K", "m", "M", "n", "N",
                "O", "P", "r", "s", "S", "t", "T", "V", "w", "Y", "z", "Z",
            ],
            Read,
        )],
        ..secret_carrier(
            &["ssh-keygen"],
            opts(
                "a:b:C:D:E:f:F:G:I:J:j:K:m:M:n:N:O:P:r:s:S:t:T:V:w:Y:z:Z:cehHkLlpqRuvyAB",
                &[],
            ),
            Secrets {
                options: &[(&["N", "P"], Secret::Password)],
                ..NO_SECRETS
            },
        )
    },
    CommandSpec {
        option_roles: &[(
            &[
                "I", "p", "n", "R", "s", "W", "l", "O", "t", "T", "D", "c", "d", "m", "A", "U",
                "user",
            ],
            Read,
        )],
        ..secret_carrier(
            &["rpcclient", "smbmap"],
            opts(
                "I:p:n:R:s:W:l:O:t:T:D:c:d:m:A:U:",
                &[long("user", Required)],
            ),
            Secrets {
                options: &[(&["U", "user"], Secret::AfterPercent)],
                ..NO_SECRETS
            },
        )
    },
    CommandSpec {
        option_roles: &[(
            &[
                "alias",
                "keystore",
                "file",
                "storetype",
                "destkeystore",
                "srckeystore",
                "destalias",
                "srcalias",
                "dname",
                "keyalg",
                "keysize",
                "validity",
                "storepass",
                "keypass",
                "srcstorepass",
                "deststorepass",
                "srckeypass",
                "destkeypass",
                "new",
            ],
            Read,
        )],
        ..secret_carrier(
            &["keytool", "jarsigner"],
            single_dash(&[
                long("storepass", Required),
                long("keypass", Required),
                long("srcstorepass", Required),
                long("deststorepass", Required),
                long("srckeypass", Required),
                long("destkeypass", Required),
                long("new", Required),
                long("alias", Required),
                long("keystore", Required),
                long("file", Required),
                long("storetype", Required),
                long("destkeystore", Required),
                long("srckeystore", Required),
                long("destalias", Required),
                long("srcalias", Required),
                long("dname", Required),
                long("keyalg", Required),
                long("keysize", Required),
                long("validity", Required),
            ]),
            Secrets {
                options: &[(
                    &[
                        "storepass",
                        "keypass",
                        "srcstorepass",
                        "deststorepass",
                        "srckeypass",
                        "destkeypass",
                        "new",
                    ],
                    Secret::Password,
                )],
                ..NO_SECRETS
            },
        )
    },
    secret_carrier(
        &["npm", "yarn", "pnpm"],
        opts("", &[]),
        Secrets {
            operands: SecretOperands::ConfigSet,
            ..NO_SECRETS
        },
    ),
    CommandSpec {
        option_roles: &[(&["r", "C"], Read)],
        ..secret_carrier(
            &["htpasswd"],
            opts("r:C:bcnmBdspvDiI", &[]),
            Secrets {
                operands: SecretOperands::HtpasswdBatch,
                ..NO_SECRETS
            },
        )
    },
    secret_carrier(
        &["xfreerdp", "wlfreerdp", "sdl-freerdp"],
        opts("", &[]),
        Secrets {
            operands: SecretOperands::SlashP,
            ..NO_SECRETS
        },
    ),
    // --- issue 43: floor tables ---
    // More file-system makers: what they name is formatted (`special.rs`).
    spec(
        &[
            "mkfs.jfs",
            "mkfs.reiserfs",
            "mkreiserfs",
            "mkfs.udf",
            "mkudffs",
            "mkfs.hfsplus",
            "mkfs.hfs",
            "mkfs.bfs",
            "mkfs.cramfs",
            "mkfs.nilfs2",
            "mkfs.bcachefs",
            "mkfs.msdos",
            "mkexfatfs",
        ],
        opts("", &[]),
        Operands::Special,
    ),
    // dd's forensic relatives: `of=FILE` is written.
    spec(
        &["dcfldd", "dc3dd", "ddpt"],
        opts("", &[]),
        Operands::Special,
    ),
    // `ddrescue [OPTIONS] INFILE OUTFILE [MAPFILE]`: OUTFILE is written.
    spec(
        &["ddrescue", "gddrescue"],
        opts(
            "a:b:c:e:E:F:H:i:K:l:m:o:r:s:T:x:Z:ABCdDfGIJLMnNOpPqRStuvwy",
            &[],
        ),
        Operands::Special,
    ),
    // whois sends its query to the server `-h` names.
    CommandSpec {
        network: Network::Client,
        option_roles: &[(&["h"], Url)],
        ..spec(
            &["whois"],
            opts("abBcdFg:GHi:lLmMp:q:rRs:t:T:v:xh:", &[]),
            Operands::All(Value),
        )
    },
    // --- end issue 43 ---
];

/// Every name of [`SPECS`] with its spec, built on first use: a lookup runs
/// for every command of every request.
static BY_NAME: std::sync::LazyLock<
    std::collections::HashMap<&'static str, &'static CommandSpec, foldhash::fast::RandomState>,
> = std::sync::LazyLock::new(|| {
    let mut map = std::collections::HashMap::default();
    for spec in all() {
        for name in spec.names {
            // Names are unique (tested); the first spec would win anyway.
            map.entry(*name).or_insert(spec);
        }
    }
    map
});

/// Every entry: the table above and the readers ([`readers::READERS`]).
pub fn all() -> impl Iterator<Item = &'static CommandSpec> {
    SPECS.iter().chain(readers::READERS)
}

/// The spec for a command name (the basename of `argv[0]`).
pub fn lookup(name: &str) -> Option<&'static CommandSpec> {
    BY_NAME.get(name).copied()
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
        for s in all() {
            for n in s.names {
                assert!(seen.insert(*n), "{n} listed twice");
            }
            for c in s.options.short.chars() {
                assert!(
                    c.is_ascii_alphanumeric() || c == ':' || c == '#',
                    "{:?}: `{c}`",
                    s.names
                );
            }
            let names = s
                .option_roles
                .iter()
                .map(|(n, _)| *n)
                .chain(s.modifiers.iter().map(|(n, _)| *n))
                .chain(s.secrets.options.iter().map(|(n, _)| *n));
            for list in names {
                for n in list {
                    let exists = if n.len() == 1 && !s.options.single_dash_long {
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
    fn the_index_finds_what_a_scan_finds() {
        for spec in all() {
            for name in spec.names {
                let scanned = all().find(|s| s.names.contains(name));
                // `SPECS` is a constant: compare contents, not addresses.
                assert!(
                    lookup(name).is_some_and(|l| scanned.is_some_and(|s| l.names == s.names)),
                    "{name}"
                );
            }
        }
        assert!(lookup("no-such-command").is_none());
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
