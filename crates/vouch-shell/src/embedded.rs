//! Shell code that programs run on the command line's behalf: `git`'s
//! `core.sshCommand`, pager, editor and `!` aliases (and the
//! `GIT_SSH_COMMAND` family of variables), `ssh -o ProxyCommand`, `rsync
//! -e`, `tar --checkpoint-action=exec=` and `--to-command`, `zip -TT`,
//! `script -c`, `tmux` commands, `at`/`batch` scripts, GNU `sed`'s `e`.
//!
//! Each is run as a script in a child shell whose parent is the program,
//! so every rule judges it like any other command.

use super::interp::Interp;
use super::runners::{option_value, parse_args};
use super::spec::{self, Role};
use super::state::State;
use super::value::{Arg, Value};

/// git configuration keys whose value git runs through a shell.
const GIT_SCRIPT_KEYS: &[&str] = &[
    "core.sshcommand",
    "core.pager",
    "core.editor",
    "core.fsmonitor",
    "core.hookspath",
    "sequence.editor",
    "diff.external",
    "gpg.program",
    "credential.helper",
    "core.askpass",
];

/// Variables whose value git (or a pager) runs through a shell.
const GIT_SCRIPT_VARS: &[&str] = &[
    "GIT_SSH_COMMAND",
    "GIT_PAGER",
    "GIT_EDITOR",
    "GIT_SEQUENCE_EDITOR",
    "GIT_EXTERNAL_DIFF",
    "PAGER",
    "EDITOR",
    "VISUAL",
];

/// Programs whose script options are read here (the runners read their
/// own).
const HANDLED_ELSEWHERE: &[&str] = &["su", "runuser", "flock", "env", "sudo"];

fn known(v: &Value) -> Option<String> {
    v.as_known().map(str::to_owned)
}

impl Interp {
    /// Runs the shell code program `name` at `index` would run.
    pub(crate) fn embedded_scripts(
        &mut self,
        index: Option<usize>,
        name: &str,
        args: &[Arg],
        assigns: &[(String, Value)],
        state: &State,
    ) {
        let mut scripts: Vec<Value> = Vec::new();
        if let Some(spec) = spec::lookup(name)
            && !HANDLED_ELSEWHERE.contains(&name)
        {
            let parsed = parse_args(spec, args);
            for (names, role) in spec.option_roles {
                if *role == Role::Script {
                    for v in parsed.values(names) {
                        scripts.push(option_value(args, v));
                    }
                }
            }
        }
        let words: Vec<Option<&str>> = args.iter().map(Arg::as_known).collect();
        match name {
            "git" => self.git_scripts(index, args, &words, assigns, state, &mut scripts),
            "ssh" | "scp" | "sftp" => ssh_option_scripts(&words, &mut scripts),
            "rsync" => rsync_scripts(&words, args, &mut scripts),
            "tar" | "bsdtar" | "gtar" => tar_scripts(&words, args, &mut scripts),
            "zip" => zip_scripts(&words, args, &mut scripts),
            "tmux" => tmux_scripts(&words, args, &mut scripts),
            "at" | "batch" => {
                let file = words.iter().position(|w| *w == Some("-f"));
                match file.and_then(|k| args.get(k + 1)) {
                    Some(f) => {
                        if let Some(text) = self.file_text(f, state) {
                            scripts.push(text);
                        }
                    }
                    None => {
                        if let Some(text) = &state.stdin.text {
                            scripts.push(text.clone());
                        }
                    }
                }
            }
            "sed" | "gsed" => {
                for w in words.iter().flatten() {
                    scripts.extend(sed_commands(w).into_iter().map(|c| Value::known(&c)));
                }
            }
            _ => {}
        }
        if scripts.is_empty() {
            return;
        }
        let child = self.child_shell_state(state, assigns);
        for script in scripts {
            let s = child.clone();
            let texts = self.value_scripts(&script);
            self.run_scripts(texts, s, index, true);
        }
    }

    fn git_scripts(
        &mut self,
        index: Option<usize>,
        args: &[Arg],
        words: &[Option<&str>],
        assigns: &[(String, Value)],
        state: &State,
        scripts: &mut Vec<Value>,
    ) {
        let Some(spec) = spec::lookup("git") else {
            return;
        };
        let (settings, sub_at) = super::effects::git_settings(spec, args);
        let sub = sub_at.and_then(|at| words.get(at).copied().flatten());
        for setting in &settings {
            let Some(setting) = setting.as_known() else {
                continue;
            };
            self.git_setting(setting, sub, words, scripts);
            // `-c alias.x=!cmd` runs when `x` is the subcommand.
            if let Some((key, value)) = setting.split_once('=')
                && let Some(alias) = key.to_ascii_lowercase().strip_prefix("alias.")
                && sub == Some(alias)
                && let Some(script) = value.strip_prefix('!')
            {
                scripts.push(Value::known(script));
            }
        }
        if sub == Some("submodule")
            && let Some(at) = sub_at
        {
            self.submodule_foreach(args.get(at + 1..).unwrap_or(&[]), scripts);
        }
        if let (Some(sub), Some(at)) = (sub, sub_at) {
            let rest = args.get(at + 1..).unwrap_or(&[]);
            scripts.extend(git_subcommand_scripts(sub, rest));
            if sub == "bisect"
                && let Some(run) = rest.iter().position(|a| a.as_known() == Some("run"))
            {
                // `git bisect run CMD ARGS…` runs the command (by `execvp`)
                // at every step.
                let command: Vec<Arg> = rest.get(run + 1..).unwrap_or(&[]).to_vec();
                self.spawn(index, command, assigns.to_vec(), None, state.clone());
            }
        }
        for var in GIT_SCRIPT_VARS {
            let value = assigns
                .iter()
                .rev()
                .find(|(n, _)| n == var)
                .map(|(_, v)| v.clone())
                .or_else(|| {
                    let v = state.get(var, &self.known);
                    v.vals.iter().find_map(|b| match b {
                        super::state::Binding::Str(t) if v.exported => Some(Value::text(t.clone())),
                        _ => None,
                    })
                });
            if let Some(v) = value
                && known(&v).is_some_and(|t| !t.is_empty())
            {
                scripts.push(v);
            }
        }
    }

    fn git_setting(
        &mut self,
        setting: &str,
        sub: Option<&str>,
        words: &[Option<&str>],
        scripts: &mut Vec<Value>,
    ) {
        let Some((key, value)) = setting.split_once('=') else {
            return;
        };
        let key = key.to_ascii_lowercase();
        if GIT_SCRIPT_KEYS.contains(&key.as_str()) || key.starts_with("pager.") {
            let value = value.strip_prefix('!').unwrap_or(value);
            if !value.is_empty() {
                scripts.push(Value::known(value));
            }
        }
        let _ = (sub, words);
    }

    /// `git submodule [--quiet] foreach [--recursive] CMD…`: one word is a
    /// shell script; several are a command and its arguments, which git
    /// runs through `sh -c '"$@"'` (the same commands).
    fn submodule_foreach(&mut self, rest: &[Arg], scripts: &mut Vec<Value>) {
        let mut k = 0;
        while let Some(t) = rest.get(k).and_then(Arg::as_known) {
            k += 1;
            if t == "foreach" {
                break;
            }
            if !t.starts_with('-') {
                return;
            }
        }
        if rest.get(k.saturating_sub(1)).and_then(Arg::as_known) != Some("foreach") {
            return;
        }
        while let Some(t) = rest.get(k).and_then(Arg::as_known) {
            if !matches!(t, "--recursive" | "-q" | "--quiet") {
                break;
            }
            k += 1;
        }
        let command = rest.get(k..).unwrap_or(&[]);
        match command {
            [] => {}
            [Arg::Field(one)] => scripts.push(one.clone()),
            _ => {
                for (text, _) in self.args_script(command) {
                    scripts.push(Value::known(&text));
                }
            }
        }
    }

    /// The state a child shell of `state` starts in.
    fn child_shell_state(&self, state: &State, assigns: &[(String, Value)]) -> State {
        let mut child = State::new(state.cwd.clone());
        child.files = std::rc::Rc::clone(&state.files);
        child.programs = std::rc::Rc::clone(&state.programs);
        let (vars, functions) = state.exported();
        child.vars = std::rc::Rc::new(vars);
        child.functions = std::rc::Rc::new(functions);
        for (name, value) in assigns {
            child.assign_value(name, value, &self.known);
        }
        child
    }
}

/// Shell commands a GNU sed script runs: `e CMD` (with or without an
/// address) and the replacement of `s///e`.
pub(crate) fn sed_commands(script: &str) -> Vec<String> {
    let mut out = Vec::new();
    for line in script.split([';', '\n']) {
        let c = line.trim_start();
        // Strip an address: digits, `$`, `/re/`, ranges.
        let body = c.trim_start_matches(|ch: char| ch.is_ascii_digit() || ch == '$' || ch == ',');
        if let Some(cmd) = body.strip_prefix("e ") {
            out.push(cmd.trim().to_owned());
            continue;
        }
        if let Some(rest) = body.strip_prefix('s')
            && let Some(delim) = rest.chars().next()
            && !delim.is_alphanumeric()
            && !delim.is_whitespace()
        {
            let parts: Vec<&str> = rest
                .get(delim.len_utf8()..)
                .unwrap_or("")
                .split(delim)
                .collect();
            if let (Some(replacement), Some(flags)) = (parts.get(1), parts.get(2))
                && flags.contains('e')
            {
                out.push((*replacement).to_owned());
            }
        }
    }
    out
}

/// `ssh -o ProxyCommand=…` and the other settings that run a command.
fn ssh_option_scripts(words: &[Option<&str>], scripts: &mut Vec<Value>) {
    for (k, w) in words.iter().enumerate() {
        let setting = match w {
            Some("-o") => words.get(k + 1).copied().flatten(),
            Some(t) if t.starts_with("-o") && t.len() > 2 => t.get(2..),
            _ => None,
        };
        let Some(setting) = setting else { continue };
        let (key, value) = setting
            .split_once(['=', ' '])
            .map_or((setting, ""), |(k, v)| (k, v.trim_start_matches('=')));
        if matches!(
            key.to_ascii_lowercase().as_str(),
            "proxycommand" | "localcommand" | "knownhostscommand"
        ) {
            scripts.push(Value::known(value));
        }
    }
}

/// `rsync -e CMD` / `--rsh=CMD`: the remote shell it starts.
fn rsync_scripts(words: &[Option<&str>], args: &[Arg], scripts: &mut Vec<Value>) {
    for (k, w) in words.iter().enumerate() {
        match w {
            Some("-e" | "--rsh") => {
                if let Some(Arg::Field(v)) = args.get(k + 1) {
                    scripts.push(v.clone());
                }
            }
            Some(t) if t.starts_with("--rsh=") => {
                scripts.push(Value::known(t.trim_start_matches("--rsh=")))
            }
            _ => {}
        }
    }
}

/// tar options that run a program (`--to-command`, `--checkpoint-action=exec=`, …).
fn tar_scripts(words: &[Option<&str>], args: &[Arg], scripts: &mut Vec<Value>) {
    for (k, w) in words.iter().enumerate() {
        let Some(t) = w else { continue };
        if let Some(action) = t.strip_prefix("--checkpoint-action=") {
            if let Some(cmd) = action.strip_prefix("exec=") {
                scripts.push(Value::known(cmd));
            }
        } else if let Some(cmd) = t
            .strip_prefix("--to-command=")
            .or_else(|| t.strip_prefix("--use-compress-program="))
            .or_else(|| t.strip_prefix("--info-script="))
            .or_else(|| t.strip_prefix("--new-volume-script="))
            .or_else(|| t.strip_prefix("--rsh-command="))
        {
            scripts.push(Value::known(cmd));
        } else if matches!(
            *t,
            "--to-command"
                | "--use-compress-program"
                | "-I"
                | "--info-script"
                | "-F"
                | "--new-volume-script"
                | "--rsh-command"
        ) && let Some(Arg::Field(v)) = args.get(k + 1)
        {
            scripts.push(v.clone());
        }
    }
}

/// `zip -TT CMD`: the command that tests the archive.
fn zip_scripts(words: &[Option<&str>], args: &[Arg], scripts: &mut Vec<Value>) {
    for (k, w) in words.iter().enumerate() {
        if matches!(w, Some("-TT" | "--unzip-command"))
            && let Some(Arg::Field(v)) = args.get(k + 1)
        {
            scripts.push(v.clone());
        }
    }
}

/// tmux commands that start a shell command (its last argument).
fn tmux_scripts(words: &[Option<&str>], args: &[Arg], scripts: &mut Vec<Value>) {
    let runs = words.iter().any(|w| {
        matches!(
            w,
            Some(
                "new-session"
                    | "new"
                    | "new-window"
                    | "neww"
                    | "split-window"
                    | "splitw"
                    | "run-shell"
                    | "run"
                    | "respawn-pane"
                    | "respawnp"
                    | "respawn-window"
                    | "respawnw"
                    | "send-keys"
                    | "send"
                    | "display-popup"
                    | "popup"
            )
        )
    });
    if runs
        && let Some(Arg::Field(last)) = args
            .iter()
            .rev()
            .find(|a| !matches!(a.as_known(), Some("Enter" | "C-m")))
    {
        scripts.push(last.clone());
    }
}

/// Options of git subcommands whose value is shell code git runs (`git
/// rebase -x CMD` after each commit, `filter-branch --tree-filter CMD` on
/// every tree, the `--upload-pack`/`--receive-pack` programs run for a
/// local or ssh remote, `difftool -x`, `grep -O`, `send-email --to-cmd`).
const GIT_CODE_OPTIONS: &[(&str, &[&str])] = &[
    ("rebase", &["-x", "--exec"]),
    (
        "filter-branch",
        &[
            "--setup",
            "--tree-filter",
            "--index-filter",
            "--env-filter",
            "--msg-filter",
            "--commit-filter",
            "--tag-name-filter",
            "--parent-filter",
        ],
    ),
    ("difftool", &["-x", "--extcmd"]),
    ("grep", &["-O", "--open-files-in-pager"]),
    ("clone", &["-u", "--upload-pack"]),
    ("fetch", &["--upload-pack"]),
    ("pull", &["--upload-pack"]),
    ("ls-remote", &["--upload-pack"]),
    ("archive", &["--exec"]),
    ("push", &["--receive-pack", "--exec"]),
    (
        "send-email",
        &["--to-cmd", "--cc-cmd", "--header-cmd", "--sendmail-cmd"],
    ),
    ("instaweb", &["--httpd", "-d", "--browser", "-b"]),
];

/// The values of `sub`'s shell-code options in `rest` (the words after the
/// subcommand): separate (`-x CMD`), glued (`-xCMD`, `--exec=CMD`), and
/// long options written as any prefix of at least three letters (git's
/// parse-options takes an unambiguous prefix; a prefix that is ambiguous
/// among options vouch does not list is read as the code option, which
/// only ever adds a reading).
fn git_subcommand_scripts(sub: &str, rest: &[Arg]) -> Vec<Value> {
    let Some((_, options)) = GIT_CODE_OPTIONS.iter().find(|(s, _)| *s == sub) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    let mut k = 0;
    while let Some(arg) = rest.get(k) {
        k += 1;
        let Some(word) = arg.as_known() else { continue };
        if word == "--" {
            break;
        }
        for option in *options {
            if let Some(long) = option.strip_prefix("--") {
                let Some(body) = word.strip_prefix("--") else {
                    continue;
                };
                let (name, glued) = match body.split_once('=') {
                    Some((n, v)) => (n, Some(v)),
                    None => (body, None),
                };
                if name.len() < 3.min(long.len()) || !long.starts_with(name) {
                    continue;
                }
                match glued {
                    Some(v) => out.push(Value::known(v)),
                    None => {
                        if let Some(Arg::Field(v)) = rest.get(k) {
                            out.push(v.clone());
                        }
                        k += 1;
                    }
                }
                break;
            }
            let Some(letter) = option.strip_prefix('-') else {
                continue;
            };
            // A short option, alone or last in a cluster of flags, or
            // with its value glued on.
            let Some(cluster) = word.strip_prefix('-').filter(|c| !c.starts_with('-')) else {
                continue;
            };
            if let Some(at) = cluster.find(letter) {
                let glued = cluster.get(at + letter.len()..).unwrap_or("");
                if glued.is_empty() {
                    if let Some(Arg::Field(v)) = rest.get(k) {
                        out.push(v.clone());
                    }
                    k += 1;
                } else {
                    out.push(Value::known(glued));
                }
                break;
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sed_e_commands() {
        assert_eq!(sed_commands("e rm -rf ~"), vec!["rm -rf ~"]);
        assert_eq!(sed_commands("1e rm -rf /"), vec!["rm -rf /"]);
        assert_eq!(sed_commands("s/.*/rm -rf ~/e"), vec!["rm -rf ~"]);
        assert!(sed_commands("s/a/b/g").is_empty());
    }
}
