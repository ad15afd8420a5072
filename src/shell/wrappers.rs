//! Commands that run another command: `sudo`, `env`, `timeout`, `xargs`,
//! shells with `-c`, `eval`, `find -exec`, …
//!
//! A wrapper is removed from the unit's argv so policy sees the command that
//! really runs (`sudo -u root rm -rf /` is `rm -rf /`). Commands that run a
//! *script* (`bash -c STR`, `eval STR`, `su -c STR`) or a second command
//! (`find -exec`) report it as a [`Spawn`] for the walker to parse. When an
//! option's arity is unclear, the option is assumed to take no value, so the
//! next word is looked at as the command rather than skipped.

use super::word::{Piece, Word};
use super::{Assignment, RedirectOp, Unit};

/// Something a unit runs besides itself.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Spawn {
    /// A script string (`bash -c`, `eval`, `su -c`, `watch`, `env -S`).
    Script(String),
    /// A command given as words (`find -exec … ;`).
    Argv(Vec<Word>),
}

const SHELLS: &[&str] = &[
    "bash", "sh", "zsh", "dash", "ksh", "mksh", "ash", "rbash", "fish", "yash", "posh",
];

/// How many wrappers deep one unit is unwrapped; past this the rest stays
/// as argv (and no rule can be skipped by that: the words remain).
const MAX_WRAPPERS: usize = 32;

/// An option parsed off a wrapper.
struct Opt {
    /// Short letter or long name.
    name: String,
    value: Option<Word>,
}

/// Parses leading options of `args`; returns them and the index of the
/// first operand. `value_short`/`value_long` list the options taking a value.
fn options(args: &[Word], value_short: &str, value_long: &[&str]) -> (Vec<Opt>, usize) {
    let mut opts = Vec::new();
    let mut i = 0;
    while let Some(word) = args.get(i) {
        let Some(arg) = word.as_literal() else { break };
        if arg == "--" {
            i += 1;
            break;
        }
        if let Some(long) = arg.strip_prefix("--") {
            let (name, inline) = match long.split_once('=') {
                Some((n, v)) => (n, Some(Word::literal_text(v))),
                None => (long, None),
            };
            if inline.is_none() && value_long.contains(&name) {
                opts.push(Opt {
                    name: name.to_owned(),
                    value: args.get(i + 1).cloned(),
                });
                i += 2;
            } else {
                opts.push(Opt {
                    name: name.to_owned(),
                    value: inline,
                });
                i += 1;
            }
            continue;
        }
        let Some(cluster) = arg.strip_prefix('-') else {
            break;
        };
        if cluster.is_empty() {
            break;
        }
        i += 1;
        for (pos, c) in cluster.char_indices() {
            if value_short.contains(c) {
                let rest = cluster.get(pos + c.len_utf8()..).unwrap_or("");
                let value = if rest.is_empty() {
                    i += 1;
                    args.get(i - 1).cloned()
                } else {
                    Some(Word::literal_text(rest))
                };
                opts.push(Opt {
                    name: c.to_string(),
                    value,
                });
                break;
            }
            opts.push(Opt {
                name: c.to_string(),
                value: None,
            });
        }
    }
    (opts, i.min(args.len()))
}

fn has(opts: &[Opt], names: &[&str]) -> bool {
    opts.iter().any(|o| names.contains(&o.name.as_str()))
}

fn value_of(opts: &[Opt], names: &[&str]) -> Option<Word> {
    opts.iter()
        .rev()
        .find(|o| names.contains(&o.name.as_str()))
        .and_then(|o| o.value.clone())
}

/// Drops the wrapper and its first `skip` argument words.
fn strip(unit: &mut Unit, name: &str, skip: usize) {
    let cut = (1 + skip).min(unit.argv.len());
    unit.argv.drain(..cut);
    unit.wrappers.push(name.to_owned());
    // `env`/`sudo` take `NAME=value` words before the command; other
    // wrappers would run a command literally named `NAME=value`, which fails.
    // Reading them as assignments everywhere only adds information.
    take_assignments(unit);
}

/// `NAME=value` words at the start of the argv become assignments.
fn take_assignments(unit: &mut Unit) {
    while let Some(first) = unit.argv.first() {
        let Some((name, value)) = split_assignment(first) else {
            break;
        };
        unit.assignments.push(Assignment { name, value });
        unit.argv.remove(0);
    }
}

fn split_assignment(word: &Word) -> Option<(String, Word)> {
    let Some(Piece::Literal(head)) = word.pieces.first() else {
        return None;
    };
    let (name, value_head) = head.split_once('=')?;
    let valid = !name.is_empty()
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        && !name.starts_with(|c: char| c.is_ascii_digit());
    if !valid {
        return None;
    }
    let mut value = Word::default();
    value.push_str(value_head);
    for piece in word.pieces.iter().skip(1) {
        value.push(piece.clone());
    }
    Some((name.to_owned(), value))
}

fn join_script(words: &[Word]) -> String {
    words
        .iter()
        .map(Word::to_script)
        .collect::<Vec<_>>()
        .join(" ")
}

/// Commands handled by [`unwrap`]; everything else is left as it is.
const RUNNERS: &[&str] = &[
    "sudo",
    "doas",
    "env",
    "nice",
    "ionice",
    "nohup",
    "builtin",
    "busybox",
    "toybox",
    "unbuffer",
    "coproc",
    "setsid",
    "caffeinate",
    "time",
    "stdbuf",
    "chroot",
    "timeout",
    "command",
    "exec",
    "xargs",
    "flock",
    "watch",
    "eval",
    "su",
    "runuser",
    "find",
    "export",
    "declare",
    "typeset",
    "readonly",
    "local",
];

fn is_runner(name: &str) -> bool {
    RUNNERS.contains(&name) || SHELLS.contains(&name)
}

/// Removes wrappers from `unit` in place; returns what else it runs.
#[expect(
    clippy::too_many_lines,
    reason = "predates the 80-line limit; split by issue 8"
)]
pub(crate) fn unwrap(unit: &mut Unit) -> Vec<Spawn> {
    let mut spawns = Vec::new();
    for _ in 0..MAX_WRAPPERS {
        let Some(name) = unit.name().filter(|n| is_runner(n)).map(str::to_owned) else {
            break;
        };
        let args = unit.args().to_vec();
        match name.as_str() {
            "sudo" => {
                let (opts, at) = options(
                    &args,
                    "ugCprtUTDR",
                    &[
                        "user",
                        "group",
                        "close-from",
                        "prompt",
                        "role",
                        "type",
                        "other-user",
                        "command-timeout",
                        "chdir",
                        "chroot",
                        "host",
                    ],
                );
                if has(
                    &opts,
                    &["l", "list", "v", "validate", "k", "K", "V", "h", "help"],
                ) && at >= args.len()
                {
                    break;
                }
                strip(unit, &name, at);
                take_assignments(unit);
                if has(&opts, &["e", "edit"]) {
                    unit.argv.insert(0, Word::literal_text("sudoedit"));
                    break;
                }
            }
            "doas" => {
                let (_, at) = options(&args, "uC", &[]);
                strip(unit, &name, at);
            }
            "env" => {
                let (opts, at) =
                    options(&args, "uCSP", &["unset", "chdir", "split-string", "path"]);
                strip(unit, &name, at);
                take_assignments(unit);
                if let Some(split) = value_of(&opts, &["S", "split-string"]) {
                    let mut script = split.to_script();
                    for word in &unit.argv {
                        script.push(' ');
                        script.push_str(&word.to_script());
                    }
                    spawns.push(Spawn::Script(script));
                    unit.argv.clear();
                    break;
                }
            }
            "nice" => {
                let (_, at) = options(&args, "n", &["adjustment"]);
                strip(unit, &name, at);
            }
            "ionice" => {
                let (opts, at) = options(
                    &args,
                    "cnpPu",
                    &["class", "classdata", "pid", "pgid", "uid"],
                );
                if has(&opts, &["p", "P", "u", "pid", "pgid", "uid"]) {
                    break;
                }
                strip(unit, &name, at);
            }
            "nohup" | "builtin" | "busybox" | "toybox" | "unbuffer" | "coproc" => {
                let (_, at) = options(&args, "", &[]);
                strip(unit, &name, at);
            }
            "setsid" => {
                let (_, at) = options(&args, "", &[]);
                strip(unit, &name, at);
            }
            "caffeinate" => {
                let (_, at) = options(&args, "tw", &[]);
                strip(unit, &name, at);
            }
            "time" => {
                let (_, at) = options(&args, "fo", &["format", "output"]);
                strip(unit, &name, at);
            }
            "stdbuf" => {
                let (_, at) = options(&args, "ioe", &["input", "output", "error"]);
                strip(unit, &name, at);
            }
            "chroot" => {
                let (_, at) = options(&args, "", &["userspec", "groups"]);
                // The operand after the options is the new root.
                strip(unit, &name, at + 1);
            }
            "timeout" => {
                let (_, at) = options(&args, "sk", &["signal", "kill-after"]);
                // The operand after the options is the duration.
                strip(unit, &name, at + 1);
            }
            "command" => {
                let (opts, at) = options(&args, "", &[]);
                if has(&opts, &["v", "V"]) {
                    // `command -v rm` looks a name up; nothing runs.
                    break;
                }
                strip(unit, &name, at);
            }
            "exec" => {
                let (_, at) = options(&args, "a", &[]);
                strip(unit, &name, at);
            }
            "xargs" => {
                let (_, at) = options(
                    &args,
                    "ILnPsdEa",
                    &[
                        "arg-file",
                        "max-args",
                        "max-lines",
                        "max-procs",
                        "max-chars",
                        "delimiter",
                        "eof",
                    ],
                );
                strip(unit, &name, at);
                unit.extra_args_unknown = true;
                if unit.argv.is_empty() {
                    unit.argv.push(Word::literal_text("echo"));
                }
            }
            "flock" => {
                let (opts, at) =
                    options(&args, "wEc", &["timeout", "conflict-exit-code", "command"]);
                if let Some(script) = value_of(&opts, &["c", "command"]) {
                    spawns.push(Spawn::Script(script.to_script()));
                    break;
                }
                let rest = args.get(at + 1..).unwrap_or(&[]);
                if rest.first().and_then(Word::as_literal) == Some("-c") {
                    if let Some(script) = rest.get(1) {
                        spawns.push(Spawn::Script(script.to_script()));
                    }
                    break;
                }
                strip(unit, &name, at + 1);
            }
            "watch" => {
                let (opts, at) = options(&args, "nq", &["interval", "equexit"]);
                if has(&opts, &["x", "exec"]) {
                    strip(unit, &name, at);
                } else {
                    spawns.push(Spawn::Script(join_script(args.get(at..).unwrap_or(&[]))));
                    break;
                }
            }
            "eval" => {
                spawns.push(Spawn::Script(join_script(&args)));
                break;
            }
            "su" | "runuser" => {
                let (opts, _) = options(
                    &args,
                    "cgGsw",
                    &[
                        "command",
                        "group",
                        "supp-group",
                        "shell",
                        "whitelist-environment",
                    ],
                );
                if let Some(script) = value_of(&opts, &["c", "command"]) {
                    spawns.push(Spawn::Script(script.to_script()));
                } else if let Some(pos) = args.iter().position(|w| w.as_literal() == Some("-c"))
                    && let Some(script) = args.get(pos + 1)
                {
                    // `su root -c CMD`: options may follow the user name.
                    spawns.push(Spawn::Script(script.to_script()));
                }
                break;
            }
            "export" | "declare" | "typeset" | "readonly" | "local" => {
                // Reached through a wrapper (`sudo export X=1`): the grammar
                // saw a plain command, so record its assignments here.
                for word in &args {
                    if let Some((name, value)) = split_assignment(word) {
                        unit.assignments.push(Assignment { name, value });
                    }
                }
                break;
            }
            "find" => {
                spawns.extend(find_exec(&args));
                break;
            }
            shell if SHELLS.contains(&shell) => {
                let (opts, at) = options(&args, "oO", &["rcfile", "init-file"]);
                if has(&opts, &["c"])
                    && let Some(script) = args.get(at)
                {
                    spawns.push(Spawn::Script(script.to_script()));
                } else if let Some(herestring) = unit
                    .redirects
                    .iter()
                    .find(|r| matches!(r.op, RedirectOp::HereString | RedirectOp::HereDoc))
                    && (at >= args.len() || has(&opts, &["s"]))
                {
                    spawns.push(Spawn::Script(herestring.target.to_script()));
                }
                break;
            }
            _ => break,
        }
    }
    spawns
}

/// `find … -exec CMD {} ;` runs CMD: each `-exec`/`-execdir`/`-ok`/`-okdir`
/// segment becomes a command, with `{}` an unknown path.
fn find_exec(args: &[Word]) -> Vec<Spawn> {
    let mut spawns = Vec::new();
    let mut i = 0;
    while let Some(word) = args.get(i) {
        i += 1;
        if !matches!(
            word.as_literal(),
            Some("-exec" | "-execdir" | "-ok" | "-okdir")
        ) {
            continue;
        }
        let mut argv = Vec::new();
        while let Some(next) = args.get(i) {
            i += 1;
            match next.as_literal() {
                Some(";" | "+") => break,
                Some("{}") => argv.push(Word {
                    pieces: vec![Piece::Var {
                        name: "{}".to_owned(),
                        default: None,
                    }],
                }),
                _ => argv.push(next.clone()),
            }
        }
        if !argv.is_empty() {
            spawns.push(Spawn::Argv(argv));
        }
    }
    spawns
}

/// A shell that reads its script from standard input (`… | bash`, `sh -s`).
pub(crate) fn reads_script_from_stdin(unit: &Unit) -> bool {
    let Some(name) = unit.name() else {
        return false;
    };
    if !SHELLS.contains(&name) {
        return false;
    }
    let (opts, at) = options(unit.args(), "oO", &["rcfile", "init-file"]);
    !has(&opts, &["c"]) && (at >= unit.args().len() || has(&opts, &["s"]))
}

/// The text an `echo`/`printf` with literal arguments prints.
pub(crate) fn printed_text(unit: &Unit) -> Option<String> {
    let name = unit.name()?;
    if name == "cat" && unit.args().is_empty() {
        // `cat <<EOF | sh`: the here-document is the script.
        return unit
            .redirects
            .iter()
            .find(|r| matches!(r.op, RedirectOp::HereDoc | RedirectOp::HereString))
            .map(|r| r.target.to_script());
    }
    if name != "echo" && name != "printf" {
        return None;
    }
    let mut words = Vec::new();
    for word in unit.args() {
        words.push(word.literal()?);
    }
    if name == "echo" {
        while words
            .first()
            .is_some_and(|w| matches!(w.as_str(), "-n" | "-e" | "-E"))
        {
            words.remove(0);
        }
    }
    let joined = words.join(" ");
    Some(if name == "printf" || joined.contains("\\n") {
        joined.replace("\\n", "\n")
    } else {
        joined
    })
}
