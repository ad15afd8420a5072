//! Code a static reading of bash does not follow: interpreter one-liners,
//! `awk` and GNU `sed` programs that run commands, editors given `!`
//! commands, scheduled jobs, shells fed a script nobody can read, commands
//! whose very name is runtime data.
//!
//! Where such code hands a literal string to a shell (`os.system("…")`,
//! `system "…"`, backticks, `execSync('…')`), the string is extracted and
//! judged as bash like any other command. Everything else gets a note, so
//! the request goes to the reviewer instead of passing.

use crate::shell::spec::{self, Operands, Role};
use crate::shell::{Command, CommandKind};

use super::facts::Facts;
use super::fork::inline_code;

/// Markers of code that starts processes, deletes files or talks to the
/// network.
const CAPABILITIES: &[&str] = &[
    "system",
    "popen",
    "subprocess",
    "exec",
    "spawn",
    "fork",
    "child_process",
    "shell_exec",
    "passthru",
    "proc_open",
    "`",
    "%x",
    "qx",
    "rmtree",
    "remove",
    "unlink",
    "rmdir",
    "rmSync",
    "rm_rf",
    "FileUtils",
    "shutil",
    "open(",
    "urlopen",
    "urllib",
    "requests",
    "http",
    "socket",
    "fetch",
    "net.",
    "Deno.",
    "Bun.",
    "io.popen",
    "os.execute",
    "kill",
];

fn is_interpreter(name: &str) -> bool {
    crate::shell::runs_other_language(name)
}

/// Literal strings a piece of code hands to a shell.
pub(super) fn shell_strings(code: &str) -> Vec<String> {
    let mut out = Vec::new();
    for marker in [
        "os.system(",
        "os.popen(",
        "system(",
        "system ",
        "exec(",
        "execSync(",
        "spawnSync(",
        "shell_exec(",
        "passthru(",
        "popen(",
        "Popen(",
        "check_output(",
        "check_call(",
        "run(",
        "call(",
        "os.execute(",
        "io.popen(",
    ] {
        let mut rest = code;
        while let Some(at) = rest.find(marker) {
            let after = rest.get(at + marker.len()..).unwrap_or("");
            if let Some(s) = leading_string(after) {
                out.push(s);
            }
            rest = after;
        }
    }
    for (open, close) in [
        ("`", "`"),
        ("%x(", ")"),
        ("qx(", ")"),
        ("qx{", "}"),
        ("%x{", "}"),
    ] {
        let mut rest = code;
        while let Some(at) = rest.find(open) {
            let after = rest.get(at + open.len()..).unwrap_or("");
            match after.find(close) {
                Some(end) => {
                    out.push(after.get(..end).unwrap_or("").to_owned());
                    rest = after.get(end + close.len()..).unwrap_or("");
                }
                None => break,
            }
        }
    }
    out.truncate(16);
    out
}

/// A quoted string at the start of `text` (after blanks).
fn leading_string(text: &str) -> Option<String> {
    let text = text.trim_start();
    let quote = text.chars().next().filter(|c| matches!(c, '"' | '\''))?;
    let body = text.get(1..)?;
    let mut out = String::new();
    let mut chars = body.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => {
                if let Some(n) = chars.next() {
                    out.push(n);
                }
            }
            c if c == quote => return Some(out),
            c => out.push(c),
        }
    }
    None
}

/// Shell strings embedded in interpreter code and scripts other programs
/// run (`tar --to-command`, `socat EXEC:`), to be judged as bash.
pub(super) fn embedded_scripts(f: &Facts<'_>) -> Vec<String> {
    let mut out = Vec::new();
    for (i, cmd) in f.commands() {
        let Some(name) = cmd.name() else { continue };
        if is_interpreter(name) || matches!(name, "awk" | "gawk" | "mawk" | "nawk") {
            for code in inline_code(f, i) {
                out.extend(shell_strings(&code));
            }
            if matches!(name, "awk" | "gawk" | "mawk" | "nawk") {
                for a in cmd.args() {
                    if let Some(code) = a.as_known() {
                        out.extend(shell_strings(code));
                    }
                }
            }
        }
        if let Some(eff) = f.effects_of(i)
            && spec::lookup(name).is_some_and(|s| s.operands == Operands::Special)
        {
            for v in eff.with(&[Role::Script]) {
                if let Some(t) = v.as_known()
                    && !is_interpreter(name)
                    && name != "perl"
                {
                    out.push(t.to_owned());
                }
            }
        }
    }
    out.truncate(16);
    out
}

/// Why parts of the command cannot be read statically.
pub(super) fn notes(f: &Facts<'_>) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut push = |note: String| {
        if !out.contains(&note) {
            out.push(note);
        }
    };
    for (i, cmd) in f.commands() {
        if cmd.kind == CommandKind::Unresolved {
            push(
                "a command whose name is runtime data (vouch cannot tell what it runs)".to_owned(),
            );
            continue;
        }
        let Some(name) = cmd.name() else { continue };
        let words: Vec<&str> = cmd
            .args()
            .iter()
            .map(|a| a.as_known().unwrap_or(""))
            .collect();
        if serves_network(name, &words) {
            push(format!("`{name}` serves files or a shell over the network"));
        }
        if is_interpreter(name) {
            for code in inline_code(f, i) {
                if CAPABILITIES.iter().any(|m| code.contains(m)) {
                    push(format!(
                        "`{name}` runs inline code that may start processes, remove files or use the network; vouch does not read it"
                    ));
                }
            }
            continue;
        }
        if let Some(note) = tool_note(name, cmd) {
            push(note);
        }
        for note in shell_notes(f, i, name, cmd) {
            push(note);
        }
    }
    out
}

/// A command that serves files or a shell to the network.
fn serves_network(name: &str, words: &[&str]) -> bool {
    (is_interpreter(name)
        && words
            .windows(2)
            .any(|w| w == ["-m", "http.server"] || w == ["-m", "SimpleHTTPServer"]))
        || (name == "php" && words.contains(&"-S"))
        || (name == "ruby" && words.iter().any(|w| w.contains("httpd")))
        || (matches!(name, "busybox" | "toybox") && words.contains(&"httpd"))
        || (matches!(name, "nc" | "ncat" | "netcat")
            && words.iter().any(|w| w.starts_with('-') && w.contains('l')))
}

/// A tool that is given a program of its own which runs commands (awk, sed,
/// editors, schedulers, make, DNS lookups of another command's output).
fn tool_note(name: &str, cmd: &Command) -> Option<String> {
    let any_known =
        |test: &dyn Fn(&str) -> bool| cmd.args().iter().any(|a| a.as_known().is_some_and(test));
    match name {
        "awk" | "gawk" | "mawk" | "nawk"
            if any_known(&|t| {
                t.contains("system")
                    || t.contains("| \"")
                    || t.contains("|&")
                    || t.contains("|\"")
                    || t.contains("getline")
                    || t.contains("| \"sh")
            }) =>
        {
            Some("an awk program that runs commands".to_owned())
        }
        "sed" | "gsed" if any_known(&sed_executes) => {
            Some("a GNU sed script that runs its input as commands (`e`)".to_owned())
        }
        "vi" | "vim" | "nvim" | "ex" | "view" | "emacs" | "emacsclient"
            if any_known(&|t| {
                t.contains('!')
                    || t.contains("system(")
                    || t.contains("shell-command")
                    || t.contains("call-process")
                    || t.contains("start-process")
            }) =>
        {
            Some(format!("`{name}` is given commands that run a shell"))
        }
        "gdb" | "lldb" | "gdb-multiarch"
            if any_known(&|t| t.starts_with("shell") || t.starts_with('!')) =>
        {
            Some(format!(
                "`{name}` is given debugger commands that run a shell"
            ))
        }
        "ssh" | "scp" | "sftp"
            if any_known(&|t| t.contains("ProxyCommand") || t.contains("LocalCommand"))
                || reads_process_substitution(cmd) =>
        {
            Some(format!(
                "`{name}` runs a command its configuration names (ProxyCommand, LocalCommand)"
            ))
        }
        "git"
            if any_known(&|t| {
                t.contains("hooksPath") || t.contains("protocol.ext") || t.starts_with("ext::")
            }) =>
        {
            Some("git runs hooks or a transport command the command chooses".to_owned())
        }
        "run-parts" => Some("`run-parts` runs every program in a directory".to_owned()),
        "crontab" | "at" | "batch" | "launchctl" | "systemd-run" => {
            let listing = cmd
                .args()
                .iter()
                .any(|a| matches!(a.as_known(), Some("-l" | "-r" | "list")));
            (!listing).then(|| format!("`{name}` schedules commands for later"))
        }
        "make" | "gmake" if reads_process_substitution(cmd) => {
            Some("make recipes from a process substitution".to_owned())
        }
        "nslookup" | "dig" | "host" | "drill"
            if cmd.args().iter().any(|a| !a.sources().is_empty()) =>
        {
            Some("data from another command in a DNS query".to_owned())
        }
        _ => None,
    }
}

/// Whether an argument is a process substitution's `/dev/fd/N`.
fn reads_process_substitution(cmd: &Command) -> bool {
    cmd.args().iter().any(|a| {
        a.candidates()
            .iter()
            .any(|t| t.known_prefix().starts_with("/dev/fd/"))
    })
}

/// Shells and `eval` running text known only at run time.
fn shell_notes(f: &Facts<'_>, i: usize, name: &str, cmd: &Command) -> Vec<String> {
    let mut out = Vec::new();
    if spec::is_shell(name) && shell_reads_unknown_stdin(f, i) {
        out.push(format!(
            "`{name}` runs a script from standard input that nobody can read statically"
        ));
    }
    if name == "eval" && cmd.args().iter().any(|a| a.has_unknown()) {
        out.push("`eval` of text known only at run time".to_owned());
    }
    if spec::is_shell(name)
        && let Some(p) = cmd.argv.get(1)
        && cmd.argv.iter().any(|a| a.as_known() == Some("-c"))
        && p.has_unknown()
    {
        out.push(format!("`{name} -c` runs a script known only at run time"));
    }
    out
}

/// A shell without `-c` or a script file, reading standard input whose text
/// is unknown.
fn shell_reads_unknown_stdin(f: &Facts<'_>, i: usize) -> bool {
    let Some(cmd) = f.command(i) else {
        return false;
    };
    let words: Vec<Option<&str>> = cmd.args().iter().map(|a| a.as_known()).collect();
    if words.contains(&Some("-c")) {
        return false;
    }
    let operand = words.iter().find(|w| w.is_none_or(|t| !t.starts_with('-')));
    let reads_stdin = match operand {
        None => true,
        Some(Some(t)) => matches!(*t, "-" | "/dev/stdin"),
        Some(None) => false,
    };
    reads_stdin && cmd.stdin_text.is_none() && !cmd.stdin_from.is_empty()
}

/// GNU sed's `e` command (run the pattern space) or `s///e` flag.
fn sed_executes(script: &str) -> bool {
    for cmd in script.split([';', '\n']) {
        let c = cmd.trim();
        if c == "e" || c.starts_with("e ") {
            return true;
        }
        if let Some(body) = c.strip_prefix('s')
            && let Some(delim) = body.chars().next()
            && !delim.is_alphanumeric()
        {
            let parts: Vec<&str> = body
                .get(delim.len_utf8()..)
                .unwrap_or("")
                .split(delim)
                .collect();
            if let Some(flags) = parts.get(2)
                && flags.contains('e')
            {
                return true;
            }
        }
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn extracts_literal_shell_strings() {
        assert_eq!(
            shell_strings("import os; os.system(\"rm -rf /\")"),
            vec!["rm -rf /", "rm -rf /"]
        );
        assert!(shell_strings("`rm -rf ~`").contains(&"rm -rf ~".to_owned()));
        assert!(shell_strings("%x(rm -rf ~)").contains(&"rm -rf ~".to_owned()));
        assert!(shell_strings("print(1)").is_empty());
    }

    #[test]
    fn sed_e() {
        assert!(sed_executes("e"));
        assert!(sed_executes("s/x/rm -rf ~/e"));
        assert!(!sed_executes("s/e/f/g"));
    }
}
