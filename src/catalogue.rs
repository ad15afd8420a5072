//! The harness catalogue: for each harness vouch has an adapter for, what
//! the layers below the adapters need to know about it — its name, the
//! configuration files the agent must not write ([`HarnessFiles`], read by
//! the trust-boundary hard denies) and whether its after-event reports the
//! arguments that ran (read by the audit). Everything else about a harness
//! is its adapter's (`src/hooks/harnesses/`), which takes these facts from
//! its [`Entry`]; its audit rule language is the audit's
//! (`src/audit/targets/`).
//!
//! A leaf: it imports nothing from the crate, so `policy` and `audit` read
//! it without reaching up to `hooks`. One file rather than one per harness:
//! an entry is a few lines of data, and one table is read (and checked
//! against the adapter registry: `tests/it/hooks.rs`) as a whole.

/// Configuration of one harness that the agent must not change: its
/// permission rules, its hooks, anything that could switch vouch off or run
/// code around it. Paths are components below a project or home directory
/// (recognised wherever they appear in a path, as a project can sit
/// anywhere); `*` in a component is a wildcard within that name, and a
/// last component `**` is anything below.
#[derive(Debug, Clone, Copy)]
pub struct HarnessFiles {
    /// What the hard deny calls it ("Codex's configuration").
    pub what: &'static str,
    /// Directories the harness owns whole (`.codex`): removing, replacing,
    /// relinking or filling one replaces its rules.
    pub dirs: &'static [&'static str],
    /// Files and subtrees, as component lists.
    pub files: &'static [&'static [&'static str]],
}

/// One harness: what the layers below the adapters know of it.
#[derive(Debug)]
pub struct Entry {
    /// The name on the command line, in the HTTP route and in `source`
    /// (`claude-code`).
    pub name: &'static str,
    /// The harness's configuration the agent must not write.
    pub protected: HarnessFiles,
    /// Whether something after vouch's check can change a call's arguments
    /// (a later hook's or plugin's rewrite) and the after-event reports the
    /// arguments that actually ran. Then the audit remembers each allowed
    /// call, and an after-event that matches no decision of its session is
    /// recorded as `ran_unreviewed` instead of being dropped.
    pub after_event_has_ran_arguments: bool,
}

/// Every harness, in the adapter registry's order (`hooks::harnesses::ALL`:
/// the adapters' file names, sorted).
pub static ALL: &[&Entry] = &[
    &CLAUDE_CODE,
    &CODEX,
    &COPILOT,
    &CURSOR,
    &GEMINI,
    &OPENCODE,
    &QWEN,
];

/// The harness named `name`, if vouch knows it.
pub fn named(name: &str) -> Option<&'static Entry> {
    ALL.iter().copied().find(|e| e.name == name)
}

pub static CLAUDE_CODE: Entry = Entry {
    name: "claude-code",
    // Claude Code's settings: its hooks, permission rules and modes.
    protected: HarnessFiles {
        what: "Claude Code's settings",
        dirs: &[".claude"],
        files: &[
            &[".claude", "settings.json"],
            &[".claude", "settings.local.json"],
            &[".claude", "settings*.json"],
            &[".claude.json"],
        ],
    },
    after_event_has_ran_arguments: false,
};

pub static CODEX: Entry = Entry {
    name: "codex",
    // Codex's configuration: everything under `.codex` (its config, hooks,
    // rules and trusted hashes).
    protected: HarnessFiles {
        what: "Codex's configuration",
        dirs: &[".codex"],
        files: &[&[".codex", "**"]],
    },
    after_event_has_ran_arguments: false,
};

pub static COPILOT: Entry = Entry {
    name: "copilot",
    // Agent-writable files that configure Copilot's hooks or permissions,
    // relative to the project root or to the home directory.
    //
    // - `.github/hooks/**`: repository hooks (any file name); in a trusted
    //   folder they run after vouch's and can rewrite the arguments vouch
    //   allowed (`modifiedArgs`).
    // - `.github/copilot/settings.json` (and `settings.local.json`): a trusted
    //   repository's `disableAllHooks` switches the user's hooks off too.
    // - `.copilot/hooks/**`, `.copilot/settings.json`, `.copilot/config.json`:
    //   the user's hooks (where vouch's lives), hook and permission settings,
    //   trusted folders.
    // - `.copilot/session-state/<id>/events.jsonl` and the `<id>` directory:
    //   the session log vouch reads as the transcript (a forged user message
    //   there would be evidence). The rest of a session's directory
    //   (`plan.md`, `files/`) is written by Copilot's agent in plan mode.
    protected: HarnessFiles {
        what: "GitHub Copilot CLI's hooks, settings or session log",
        dirs: &[".copilot"],
        files: &[
            &[".github", "hooks"],
            &[".github", "hooks", "**"],
            &[".github", "copilot", "settings.json"],
            &[".github", "copilot", "settings.local.json"],
            &[".copilot", "hooks"],
            &[".copilot", "hooks", "**"],
            &[".copilot", "settings.json"],
            &[".copilot", "config.json"],
            &[".copilot", "session-state", "*"],
            &[".copilot", "session-state", "*", "events.jsonl"],
        ],
    },
    // A trusted repository's later `preToolUse` hook can rewrite the
    // arguments vouch allowed (`modifiedArgs`); `postToolUse` carries the
    // arguments that ran.
    after_event_has_ran_arguments: true,
};

pub static CURSOR: Entry = Entry {
    name: "cursor",
    // Cursor's hooks and permissions.
    protected: HarnessFiles {
        what: "Cursor's hooks or permissions",
        dirs: &[".cursor"],
        files: &[
            &[".cursor", "hooks.json"],
            &[".cursor", "cli.json"],
            &[".cursor", "cli-config.json"],
            &[".cursor", "permissions.json"],
        ],
    },
    after_event_has_ran_arguments: false,
};

pub static GEMINI: Entry = Entry {
    name: "gemini",
    // Gemini CLI's settings (hooks, `hooksConfig`, tool permissions).
    protected: HarnessFiles {
        what: "Gemini CLI's settings",
        dirs: &[".gemini"],
        files: &[&[".gemini", "settings.json"]],
    },
    after_event_has_ran_arguments: false,
};

pub static OPENCODE: Entry = Entry {
    name: "opencode",
    // OpenCode's agent-writable configuration, relative to the project (any
    // directory OpenCode walks up through, since it finds these by walking
    // up) or to the home directory: plugins run arbitrary code inside
    // OpenCode with no trust prompt, and `opencode.json` holds permissions
    // and plugins.
    protected: HarnessFiles {
        what: "OpenCode's configuration or plugins",
        dirs: &[".opencode"],
        files: &[
            &[".opencode", "**"],
            &["opencode.json"],
            &["opencode.jsonc"],
            &[".config", "opencode"],
            &[".config", "opencode", "**"],
        ],
    },
    // A project plugin runs after vouch's and can rewrite `output.args`;
    // `tool.execute.after` carries the arguments that ran.
    after_event_has_ran_arguments: true,
};

pub static QWEN: Entry = Entry {
    name: "qwen",
    // Agent-writable paths that switch vouch off or loosen Qwen's own rules,
    // relative to the project root or the home directory. `settings.json`
    // holds the hooks, `disableAllHooks` (a trusted project's removes the
    // user's hooks, silently) and the permission rules; `trustedFolders.json`
    // decides whether a project's settings load at all. The rest of `.qwen/`
    // (agents, commands, skills, chat records) is the agent's ordinary work,
    // and removing or moving the whole directory is refused by name.
    protected: HarnessFiles {
        what: "Qwen Code's settings or trusted folders",
        dirs: &[".qwen"],
        files: &[
            &[".qwen", "settings.json"],
            &[".qwen", "trustedFolders.json"],
        ],
    },
    after_event_has_ran_arguments: false,
};
