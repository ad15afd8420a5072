//! Structure-aware nesting (issue 30): the fuzzer's bytes choose a tree of
//! bash constructs — every `${…}` operator, arithmetic, command and process
//! substitutions, quotes, functions, here-documents, brace expansion,
//! subshells and groups — and (issue 43) every program of the command table
//! that runs the command after it (`nice `, `timeout 1 `, `sudo `, `eval `,
//! `npx `: `nice ` a thousand times aborted the service), nested far deeper
//! than random bytes ever get, behind an optional hard-deny unit. The analysis runs with the clocks
//! switched off, so only the counted budgets bound it: libFuzzer's
//! `-timeout` catches a blow-up, a stack overflow aborts, and a hard-deny
//! unit in front must still be found whatever follows it.
#![no_main]

use std::sync::LazyLock;

use libfuzzer_sys::fuzz_target;
use vouch::shell::spec::{Operands, PACKAGE_RUNNERS, SPECS};
use vouch::shell::{Limits, ShellEnv, analyze};

/// Levels that are a program running the rest: every wrapper and script
/// runner of the command table (read from it, so a new entry is fuzzed
/// too), the runners read by name in the forms that run their command,
/// and the package runners.
static PROGRAMS: LazyLock<Vec<String>> = LazyLock::new(|| {
    let mut programs = Vec::new();
    for spec in SPECS {
        for name in spec.names {
            match spec.operands {
                Operands::Command { skip } => {
                    programs.push(format!("{name}{} ", " 1".repeat(skip)))
                }
                Operands::Script => programs.push(format!("{name} ")),
                Operands::Shell
                | Operands::Special
                | Operands::Ignore
                | Operands::All(_)
                | Operands::After(..)
                | Operands::Copy { .. }
                | Operands::Positional(_)
                | Operands::ProgramFirst { .. }
                | Operands::Format => {}
            }
        }
    }
    for form in [
        "sudo ",
        "env ",
        "xargs ",
        "runuser -u root ",
        "flock /tmp/l ",
        "watch ",
        "find . -exec ",
        "parallel ",
        "npm exec ",
    ] {
        programs.push(form.to_owned());
    }
    programs.extend(PACKAGE_RUNNERS.iter().map(|r| format!("{r} ")));
    programs
});

/// Openers and closers a level wraps around the level inside it.
const FORMS: [(&str, &str); 40] = [
    ("${a:-", "}"),
    ("${a-", "}"),
    ("${a:=", "}"),
    ("${a=", "}"),
    ("${a:+", "}"),
    ("${a+", "}"),
    ("${a:?", "}"),
    ("${a#", "}"),
    ("${a##", "}"),
    ("${a%", "}"),
    ("${a%%", "}"),
    ("${a/x/", "}"),
    ("${a//", "/y}"),
    ("${a/#x/", "}"),
    ("${a^", "}"),
    ("${a,,", "}"),
    ("${a:-${b}", "}"),
    ("${!a:-", "}"),
    ("${a[", "]}"),
    ("${a:", ":1}"),
    ("${#a[", "]}"),
    ("$(echo ", ")"),
    ("`echo ", "`"),
    ("\"$(echo ", ")\""),
    ("<(cat ", ")"),
    (">(cat ", ")"),
    ("$((1+", "))"),
    ("$[1+", "]"),
    ("((", "))"),
    ("(", ")"),
    ("{ ", "; }"),
    ("\"", "\""),
    ("'", "'"),
    ("{a,", "}"),
    ("f(){ ", "; }; f"),
    ("bash -c '", "'"),
    ("eval \"", "\""),
    ("$(cat <<E\n", "\nE\n)"),
    ("for i in 1 2; do ", "; done"),
    ("if true; then ", "; fi"),
];

/// Leaves the innermost level may hold.
const LEAVES: [&str; 6] = ["x", "$b", "~", "rm -rf ~", "$@", "*"];

fuzz_target!(|data: &[u8]| {
    let Some((&head, body)) = data.split_first() else {
        return;
    };
    // Each byte is one level (its form); runs of one byte repeat it, which is
    // how a fuzzer reaches depths of thousands.
    let mut command = String::new();
    let mut closers = Vec::new();
    let choices = FORMS.len() + PROGRAMS.len();
    for &b in body.iter().take(4096) {
        let k = usize::from(b) % choices;
        match (
            FORMS.get(k),
            k.checked_sub(FORMS.len()).and_then(|p| PROGRAMS.get(p)),
        ) {
            (Some((open, close)), _) => {
                command.push_str(open);
                closers.push(*close);
            }
            (None, Some(program)) => command.push_str(program),
            (None, None) => {}
        }
    }
    command.push_str(LEAVES.get(usize::from(head) % LEAVES.len()).unwrap_or(&"x"));
    for close in closers.iter().rev() {
        command.push_str(close);
    }
    let deny_first = head & 0x80 != 0;
    if deny_first {
        command.insert_str(0, "rm -rf / ; echo ");
    }
    let limits = Limits {
        parse_timeout_us: u64::MAX / 4,
        analysis_timeout_us: u64::MAX / 4,
        ..Limits::DEFAULT
    };
    let env = ShellEnv {
        cwd: Some("/srv/app"),
        home: "/home/dev",
        vars: &[],
    };
    let analysis = analyze(&command, &env, &limits);
    // An analysis that stopped on a budget goes to the reviewer instead.
    if deny_first && analysis.errors.is_empty() && analysis.incomplete.is_empty() {
        assert!(
            analysis
                .commands
                .iter()
                .any(|c| c.argv.first().and_then(|a| a.as_known()) == Some("rm")),
            "the hard-deny unit in front was lost: {command:?}"
        );
    }
});
