//! The rule registry: every deterministic rule a decision can name in its
//! `rule_id` — the hard denies (design §6.1), the inert stage and routing —
//! with its family and one line saying what it means.
//!
//! A rule id is never written as a string anywhere else: the stages name a
//! [`RuleId`], and [`RuleId::as_str`] is the only place its text comes
//! from. `docs/rules.md` is generated from this table
//! (`cargo run --example rules_doc > docs/rules.md`); `tests/it/rules.rs`
//! checks that the page is current, that every hard-deny and routing rule
//! fires in some fixture (`expect_rule` in `tests/fixtures/hard_deny*.jsonl`,
//! `rule_id` in `routing.jsonl`), that every fixture names a rule that
//! exists, and that no source file outside this one spells a rule id.
//!
//! Adding a rule is adding one line to [`HardRule`]'s or [`StageRule`]'s
//! list below and a fixture that fires it.

/// The hard-deny categories of design §6.1.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
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
    /// Every category, in the order of design §6.1.
    pub const ALL: [Category; 7] = [
        Category::WipeRootOrHome,
        Category::DeviceDestroy,
        Category::ForkBomb,
        Category::TrustBoundary,
        Category::CredentialExfiltration,
        Category::AccessPersistence,
        Category::TransportSecurityWeakening,
    ];

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

    /// The rule of a hard deny that only a conservative reading finds
    /// (an unknown program's arguments, a string that may be code, text
    /// the analysis could not follow): docs/shell.md, "What the floor does
    /// not know".
    pub fn conservative_rule(&self) -> HardRule {
        match self {
            Category::WipeRootOrHome => HardRule::WipeConservativeReading,
            Category::DeviceDestroy => HardRule::DeviceConservativeReading,
            Category::ForkBomb => HardRule::ForkBombConservativeReading,
            Category::TrustBoundary => HardRule::TrustConservativeReading,
            Category::CredentialExfiltration => HardRule::ExfilConservativeReading,
            Category::AccessPersistence => HardRule::PersistConservativeReading,
            Category::TransportSecurityWeakening => HardRule::TransportConservativeReading,
        }
    }
}

/// The stage a rule belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Family {
    /// A hard deny of this category (stage `hard_deny`).
    HardDeny(Category),
    /// The inert stage's allow (stage `inert`).
    Inert,
    /// Routing (stage `routing`), including the answer without a reviewer.
    Routing,
}

impl Family {
    /// The id's first part: the category's id, `inert` or `routing`.
    pub fn id(&self) -> &'static str {
        match self {
            Family::HardDeny(c) => c.id(),
            Family::Inert => "inert",
            Family::Routing => "routing",
        }
    }
}

/// Defines one enum of rules from one list: each line is `Variant =
/// (group, "family-id", "name", "meaning")` — the family id spelled out so
/// the whole id is one string constant; `$group` is what `$group_fn`
/// returns for it.
macro_rules! rule_enum {
    (
        $(#[$doc:meta])* $enum:ident, $group_ty:ty, $group_fn:ident, $group_path:path;
        $( $variant:ident = ($group:ident, $fid:literal, $name:literal, $meaning:literal), )*
    ) => {
        $(#[$doc])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum $enum {
            $( $variant, )*
        }

        impl $enum {
            /// Every rule of this kind, in registry order.
            pub const ALL: &'static [$enum] = &[ $( $enum::$variant, )* ];

            /// The id as decisions, fixtures and the audit spell it:
            /// `family/name`.
            pub const fn as_str(self) -> &'static str {
                match self {
                    $( $enum::$variant => concat!($fid, "/", $name), )*
                }
            }

            pub fn $group_fn(self) -> $group_ty {
                use $group_path as G;
                match self {
                    $( $enum::$variant => G::$group, )*
                }
            }

            /// One line: what the rule means.
            pub fn meaning(self) -> &'static str {
                match self {
                    $( $enum::$variant => $meaning, )*
                }
            }
        }
    };
}

rule_enum! {
    /// A hard-deny rule (design §6.1): its category is part of it.
    HardRule, Category, category, Category;
    // wipe-root-or-home
    WipeRmRecursiveForce = (WipeRootOrHome, "wipe-root-or-home", "rm-recursive-force", "`rm -rf` (or its long options) of the root, the home or a directory that holds them"),
    WipeRmRecursive = (WipeRootOrHome, "wipe-root-or-home", "rm-recursive", "`rm -r` without `-f` of the root, the home or a directory that holds them"),
    WipeRmUnknownFlags = (WipeRootOrHome, "wipe-root-or-home", "rm-unknown-flags", "`rm` with flags known only at run time (they may be `-rf`) on the root or the home"),
    WipeNoPreserveRoot = (WipeRootOrHome, "wipe-root-or-home", "no-preserve-root", "`--no-preserve-root` given to `rm`, `chmod`, `chown` or `chgrp`: the guard against acting on `/` switched off"),
    WipeUnknownCommandRmFlags = (WipeRootOrHome, "wipe-root-or-home", "unknown-command-rm-flags", "a command whose name is runtime data, given `-rf`, on the root or the home"),
    WipeFindDelete = (WipeRootOrHome, "wipe-root-or-home", "find-delete", "`find -delete` (or `-exec rm`) starting at the root or the home"),
    WipeRsyncDelete = (WipeRootOrHome, "wipe-root-or-home", "rsync-delete", "`rsync --delete` into the root or the home: everything not in the source is removed"),
    WipeDeleteSurface = (WipeRootOrHome, "wipe-root-or-home", "delete-surface", "a delete request (not a command) whose path is the root, the home or a directory holding them"),
    WipeConservativeReading = (WipeRootOrHome, "wipe-root-or-home", "conservative-reading", "a wipe found only by reading conservatively what vouch cannot follow (docs/shell.md)"),
    // device-destroy
    DeviceMkfs = (DeviceDestroy, "device-destroy", "mkfs", "`mkfs` (any variant) formats a block device"),
    DeviceWipefs = (DeviceDestroy, "device-destroy", "wipefs", "`wipefs` erases a block device's signatures"),
    DeviceBlkdiscard = (DeviceDestroy, "device-destroy", "blkdiscard", "`blkdiscard` discards every block of a device"),
    DevicePartitionTable = (DeviceDestroy, "device-destroy", "partition-table", "a partitioning tool (`sgdisk`, `sfdisk`, `parted`, `fdisk`…) rewrites a device's partition table"),
    DeviceDdToDevice = (DeviceDestroy, "device-destroy", "dd-to-device", "`dd of=` a block device"),
    DeviceShredDevice = (DeviceDestroy, "device-destroy", "shred-device", "`shred` overwrites a block device"),
    DeviceWriteToDevice = (DeviceDestroy, "device-destroy", "write-to-device", "another program (or a write request) overwrites a block device"),
    DeviceRedirectToDevice = (DeviceDestroy, "device-destroy", "redirect-to-device", "a shell redirection (`>`, `>>`, `tee`) onto a block device"),
    DeviceNamedAtRunTime = (DeviceDestroy, "device-destroy", "device-named-at-run-time", "a device-destroying program whose device is known only at run time and may be a disk"),
    DeviceVolumeDestroy = (DeviceDestroy, "device-destroy", "volume-destroy", "a storage tool destroys a volume, pool or disk's data (`zpool destroy`, `sg_format --format`, `sg_sanitize`…)"),
    DeviceConservativeReading = (DeviceDestroy, "device-destroy", "conservative-reading", "a device destroyed only in a conservative reading of what vouch cannot follow"),
    // fork-bomb
    ForkBombRecursiveFunction = (ForkBomb, "fork-bomb", "recursive-function", "a function that spawns copies of itself without bound"),
    ForkBombScriptRunsItself = (ForkBomb, "fork-bomb", "script-runs-itself", "a script that starts itself again (`$0 &`, `bash $0 | …`) without a guard"),
    ForkBombInterpreterForkLoop = (ForkBomb, "fork-bomb", "interpreter-fork-loop", "interpreter code that forks in an unbounded loop (`while True: os.fork()`)"),
    ForkBombEndlessSpawningLoop = (ForkBomb, "fork-bomb", "endless-spawning-loop", "a loop that never ends starts a background process each time round and waits for none"),
    ForkBombEndlessInputSpawns = (ForkBomb, "fork-bomb", "endless-input-spawns", "a process started for every line of an endless input (`yes`, `seq inf`, `/dev/zero` into `xargs -P0`, `parallel -j0`, a shell running `… &` lines) without a bound on how many run at once"),
    ForkBombRecursionLeavesProcesses = (ForkBomb, "fork-bomb", "recursion-leaves-processes", "a function that starts a background process and then surely calls itself again (`f(){ sleep 9 & f; }`), leaving a process behind per call"),
    ForkBombConservativeReading = (ForkBomb, "fork-bomb", "conservative-reading", "a fork bomb found only in a conservative reading of what vouch cannot follow"),
    // trust-boundary
    TrustWrite = (TrustBoundary, "trust-boundary", "write", "a write to vouch's own files or a harness's hook or permission settings"),
    TrustDelete = (TrustBoundary, "trust-boundary", "delete", "a removal of vouch's own files or a harness's hook or permission settings"),
    TrustMove = (TrustBoundary, "trust-boundary", "move", "a move or rename of vouch's own files or a harness's settings out of place"),
    TrustChmod = (TrustBoundary, "trust-boundary", "chmod", "a mode, owner or attribute change of vouch's own files or a harness's settings"),
    TrustLink = (TrustBoundary, "trust-boundary", "link", "a link made at vouch's own files or a harness's settings (replacing what they are)"),
    TrustReadSecret = (TrustBoundary, "trust-boundary", "read-secret", "a read of vouch's tokens, key or databases"),
    TrustConservativeReading = (TrustBoundary, "trust-boundary", "conservative-reading", "a trust-boundary change found only in a conservative reading of what vouch cannot follow"),
    // credential-exfiltration
    ExfilSinkReadsFile = (CredentialExfiltration, "credential-exfiltration", "sink-reads-file", "a network sink reads a credential file itself (`curl -d @~/.aws/credentials`, `scp key host:`)"),
    ExfilStagedFile = (CredentialExfiltration, "credential-exfiltration", "staged-file", "a network sink sends a copy of a credential made earlier in the command"),
    ExfilPipeToSink = (CredentialExfiltration, "credential-exfiltration", "pipe-to-sink", "a credential read by one command reaches a network sink through a pipe"),
    ExfilSubstitution = (CredentialExfiltration, "credential-exfiltration", "substitution", "a credential reaches a network sink through a substitution, a variable or a here-string"),
    ExfilUploadOption = (CredentialExfiltration, "credential-exfiltration", "upload-option", "an upload option names a credential file (`curl -T`, `--upload-file`, `-F file=@`)"),
    ExfilNetrcRedirect = (CredentialExfiltration, "credential-exfiltration", "netrc-redirect", "`curl --location-trusted` with credentials: any host a redirect names receives them"),
    ExfilServesCredentials = (CredentialExfiltration, "credential-exfiltration", "serves-credentials", "a file server started over a directory that holds credentials"),
    ExfilPublishesCredentials = (CredentialExfiltration, "credential-exfiltration", "publishes-credentials", "a package published from a directory that holds credentials"),
    ExfilGitPush = (CredentialExfiltration, "credential-exfiltration", "git-push", "`git push` of a commit that adds a credential file"),
    ExfilRemoteCopy = (CredentialExfiltration, "credential-exfiltration", "remote-copy", "a credential file copied to another machine or a cloud store (`scp`, `rsync host:`, `aws s3 cp`)"),
    ExfilConservativeReading = (CredentialExfiltration, "credential-exfiltration", "conservative-reading", "an exfiltration found only in a conservative reading of what vouch cannot follow"),
    // access-persistence
    PersistAuthorizedKeys = (AccessPersistence, "access-persistence", "authorized-keys", "a key added to SSH `authorized_keys` (a write, a copy into `~/.ssh`, `ssh-copy-id` to this machine)"),
    PersistSshRc = (AccessPersistence, "access-persistence", "ssh-rc", "commands written where every SSH login runs them (`~/.ssh/rc`, `/etc/ssh/sshrc`)"),
    PersistSudoers = (AccessPersistence, "access-persistence", "sudoers", "a sudo rule written (`/etc/sudoers`, `/etc/sudoers.d/`)"),
    PersistSshdConfig = (AccessPersistence, "access-persistence", "sshd-config", "SSH server settings that authorize more written (`sshd_config`, `sshd_config.d/`)"),
    PersistAccounts = (AccessPersistence, "access-persistence", "accounts", "the account or group files written (`/etc/passwd`, `/etc/shadow`, `/etc/group`, `/etc/gshadow`)"),
    PersistPam = (AccessPersistence, "access-persistence", "pam", "authentication rules changed to let anyone in (`/etc/pam.d`, a PAM module)"),
    PersistSudoGroup = (AccessPersistence, "access-persistence", "sudo-group", "an account added to an administrators' group (`usermod -aG sudo`, `gpasswd -a … wheel`)"),
    PersistAdminUser = (AccessPersistence, "access-persistence", "admin-user", "an account made with an administrators' primary group or UID 0"),
    PersistRootPassword = (AccessPersistence, "access-persistence", "root-password", "root's password set or removed (`passwd root`, `chpasswd` of root)"),
    PersistSetuid = (AccessPersistence, "access-persistence", "setuid", "a program made setuid or given capabilities that amount to root"),
    PersistConservativeReading = (AccessPersistence, "access-persistence", "conservative-reading", "persistence found only in a conservative reading of what vouch cannot follow"),
    // transport-security-weakening
    TransportCurlInsecure = (TransportSecurityWeakening, "transport-security-weakening", "curl-insecure", "`curl -k`/`--insecure` to a host that is not this machine"),
    TransportWgetNoCheckCertificate = (TransportSecurityWeakening, "transport-security-weakening", "wget-no-check-certificate", "`wget --no-check-certificate` to a host that is not this machine"),
    TransportGitSslVerifyOff = (TransportSecurityWeakening, "transport-security-weakening", "git-ssl-verify-off", "git's `http.sslVerify` set to false (configuration, `-c`, `GIT_CONFIG_*`)"),
    TransportGitSslNoVerify = (TransportSecurityWeakening, "transport-security-weakening", "git-ssl-no-verify", "`GIT_SSL_NO_VERIFY` set for a command"),
    TransportNodeTlsRejectUnauthorized = (TransportSecurityWeakening, "transport-security-weakening", "node-tls-reject-unauthorized", "`NODE_TLS_REJECT_UNAUTHORIZED=0` for a command"),
    TransportPythonHttpsVerify = (TransportSecurityWeakening, "transport-security-weakening", "python-https-verify", "`PYTHONHTTPSVERIFY=0` for a command"),
    TransportNpmStrictSslOff = (TransportSecurityWeakening, "transport-security-weakening", "npm-strict-ssl-off", "npm's, yarn's or pnpm's `strict-ssl` turned off"),
    TransportPipTrustedHost = (TransportSecurityWeakening, "transport-security-weakening", "pip-trusted-host", "pip told to trust a host without verifying it (`--trusted-host`, `PIP_TRUSTED_HOST`, `pip config`)"),
    TransportToolVerifyOff = (TransportSecurityWeakening, "transport-security-weakening", "tool-verify-off", "another tool's certificate verification switched off (an option, a variable or its configuration)"),
    TransportCaBundleOff = (TransportSecurityWeakening, "transport-security-weakening", "ca-bundle-off", "the trusted certificate bundle replaced with nothing (`SSL_CERT_FILE=/dev/null`, an empty CA option)"),
    TransportProtocolDowngrade = (TransportSecurityWeakening, "transport-security-weakening", "protocol-downgrade", "secure URLs rewritten to plain `http://` or a tool told to allow insecure protocols"),
    TransportConfigFile = (TransportSecurityWeakening, "transport-security-weakening", "config-file", "a tool's configuration file written with its verification switched off (`.curlrc` `insecure`, `.npmrc`, `pip.conf`…)"),
    TransportConservativeReading = (TransportSecurityWeakening, "transport-security-weakening", "conservative-reading", "a weakening found only in a conservative reading of what vouch cannot follow"),
}

/// The stage each non-hard-deny rule belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Stage {
    Inert,
    Routing,
}

rule_enum! {
    /// A rule of the inert stage or of routing. A `{…}` in a routing id is
    /// filled in by [`StageRule::with`] (the rule's index, the surface).
    StageRule, Stage, stage, Stage;
    InertReadOnly = (Inert, "inert", "read-only", "every command of the request only reads (docs/inert.md); allowed without a model, to run confined"),
    RoutingRule = (Routing, "routing", "rule-{index}", "the trusted `routing.rules` entry at this index matched"),
    RoutingProjectRule = (Routing, "routing", "project-rule-{index}", "the project's `routing.rules` entry at this index matched (tighten-only)"),
    RoutingSurface = (Routing, "routing", "surface-{name}", "the trusted `routing.surfaces` policy for this surface applied"),
    RoutingProjectSurface = (Routing, "routing", "project-surface-{name}", "the project's `routing.surfaces` policy for this surface applied (tighten-only)"),
    RoutingSensitiveRead = (Routing, "routing", "sensitive-read", "a read of a sensitive path, routed by `routing.sensitive_reads`"),
    RoutingDefault = (Routing, "routing", "default", "no rule or surface policy matched: the trusted `routing.default`"),
    RoutingProjectDefault = (Routing, "routing", "project-default", "no rule or surface policy matched: the project's stricter `routing.default`"),
    RoutingNoReviewer = (Routing, "routing", "no-reviewer", "no reviewer model is configured (`reviewer.provider = \"none\"`): `reviewer.without_model` decides"),
}

impl StageRule {
    /// The id with its parameter filled in: `routing/rule-{index}` with
    /// `3` is `routing/rule-3`. An id without a parameter is returned as
    /// it is.
    pub fn with(self, param: &str) -> String {
        match around_param(self.as_str()) {
            Some((head, tail)) => format!("{head}{param}{tail}"),
            None => self.as_str().to_owned(),
        }
    }
}

/// What comes before and after the `{…}` parameter of an id, if it has one.
fn around_param(id: &str) -> Option<(&str, &str)> {
    let (head, rest) = id.split_once('{')?;
    let (_, tail) = rest.split_once('}')?;
    Some((head, tail))
}

/// Any deterministic rule a decision can name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum RuleId {
    Hard(HardRule),
    Stage(StageRule),
}

impl RuleId {
    /// Every rule: the hard denies, then the inert stage and routing.
    pub fn all() -> impl Iterator<Item = RuleId> {
        HardRule::ALL
            .iter()
            .map(|r| RuleId::Hard(*r))
            .chain(StageRule::ALL.iter().map(|r| RuleId::Stage(*r)))
    }

    /// The id, with a routing parameter still as `{…}`.
    pub fn as_str(self) -> &'static str {
        match self {
            RuleId::Hard(r) => r.as_str(),
            RuleId::Stage(r) => r.as_str(),
        }
    }

    pub fn meaning(self) -> &'static str {
        match self {
            RuleId::Hard(r) => r.meaning(),
            RuleId::Stage(r) => r.meaning(),
        }
    }

    pub fn family(self) -> Family {
        match self {
            RuleId::Hard(r) => Family::HardDeny(r.category()),
            RuleId::Stage(r) => match r.stage() {
                Stage::Inert => Family::Inert,
                Stage::Routing => Family::Routing,
            },
        }
    }

    /// Whether `text` is this rule's id (with any value for a parameter).
    pub fn matches(self, text: &str) -> bool {
        match around_param(self.as_str()) {
            Some((head, tail)) => {
                text.len() > head.len() + tail.len()
                    && text.starts_with(head)
                    && text.ends_with(tail)
            }
            None => text == self.as_str(),
        }
    }

    /// The rule whose id `text` is, if any.
    pub fn parse(text: &str) -> Option<RuleId> {
        RuleId::all().find(|r| r.matches(text))
    }
}

/// `docs/rules.md`: every rule, by family, with what it means. Printed by
/// `cargo run --example rules_doc`; `tests/it/rules.rs` checks the page
/// in the repository is this text.
pub fn reference_page() -> String {
    let mut out = String::from(
        "# Rules\n\n\
         <!-- Generated from src/rules.rs by `cargo run --example rules_doc > docs/rules.md`; \
         do not edit. -->\n\n\
         Every deterministic rule a decision can name in its `rule_id`. A hard deny \
         (stage `hard_deny`) cannot be lifted by any model, override or break glass \
         (design §6.1, docs/shell.md); the inert stage allows without a model \
         (docs/inert.md, docs/confine.md); routing sends a request to the model, \
         the human, or nowhere (docs/decisions.md). A `{…}` in an id is filled in: the \
         index of the `routing.rules` entry, or the surface's name.\n",
    );
    let mut family: Option<Family> = None;
    for rule in RuleId::all() {
        if family != Some(rule.family()) {
            family = Some(rule.family());
            let title = match rule.family() {
                Family::HardDeny(c) => format!("Hard deny: `{}`", c.id()),
                Family::Inert => "Inert".to_owned(),
                Family::Routing => "Routing".to_owned(),
            };
            out.push_str(&format!(
                "\n## {title}\n\n| rule | what it means |\n|---|---|\n"
            ));
        }
        out.push_str(&format!("| `{}` | {} |\n", rule.as_str(), rule.meaning()));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_id_is_its_familys_and_unique() {
        let mut seen = std::collections::HashSet::new();
        for rule in RuleId::all() {
            let id = rule.as_str();
            assert!(seen.insert(id), "{id} is registered twice");
            let (family, name) = id.split_once('/').unwrap();
            assert_eq!(family, rule.family().id(), "{id}: family prefix");
            assert!(!name.is_empty() && !rule.meaning().is_empty(), "{id}");
        }
    }

    #[test]
    fn parameters_fill_and_parse_back() {
        assert_eq!(StageRule::RoutingRule.with("3"), "routing/rule-3");
        assert_eq!(
            RuleId::parse("routing/project-surface-web_fetch"),
            Some(RuleId::Stage(StageRule::RoutingProjectSurface))
        );
        assert_eq!(RuleId::parse("routing/rule-"), None);
        assert_eq!(
            RuleId::parse("fork-bomb/recursive-function"),
            Some(RuleId::Hard(HardRule::ForkBombRecursiveFunction))
        );
        assert_eq!(RuleId::parse("fork-bomb/x"), None);
    }
}
