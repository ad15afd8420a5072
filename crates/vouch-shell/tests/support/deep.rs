//! The deep-nesting generator (issue 43): every program the command table
//! says runs other code, and every construct of the grammar that nests,
//! stacked thousands deep around a catastrophic tail (`rm -rf ~`).
//!
//! The programs come from the table itself ([`vouch_shell::spec::SPECS`]):
//! every name of every `Operands::Command` entry (a wrapper: `nice nice …
//! rm`), `Operands::Shell` (a shell reading a here-document that starts
//! the next shell, or its `-c` string made of a substitution of one),
//! `Operands::Script` (`eval eval …`), `Operands::Special` (the runners
//! the interpreter reads by name, each in the form that runs its command;
//! every other special name stacked as a prefix too), the package runners
//! and managers, and every option whose value the table says is shell
//! code. A new entry is covered with no new line here. The grammar's
//! constructs are listed by hand: the grammar is fixed.
//!
//! Shared by the crate's own test (`tests/depth.rs`: the analysis on a
//! 2 MiB stack with the clocks off) and vouch's end-to-end tests (the same
//! inputs to `vouch serve`, `vouch review` and every `vouch hook`).

#![allow(
    dead_code,
    clippy::too_many_lines,
    reason = "each test binary uses a part; the tables are long"
)]

use vouch_shell::spec::{Operands, PACKAGE_MANAGERS, PACKAGE_RUNNERS, Role, SPECS};

/// The catastrophic command at the bottom of every case.
pub const TAIL: &str = "rm -rf ~";

/// One generated input.
#[derive(Debug, Clone)]
pub struct Case {
    /// What it stacks, for messages (`wrapper nice`, `grammar subshell`).
    pub name: String,
    pub command: String,
    /// Whether bash would run the tail: then the analysis must find it or
    /// say it is incomplete, never neither.
    pub runs_tail: bool,
}

/// How one level opens and closes around the next.
enum Level {
    /// The same text before each level, nothing after (`nice `).
    Prefix(String),
    /// Text before and after each level (`$(`, `)`).
    Around(String, String),
    /// A quoted here-document per level, each with its own delimiter:
    /// `before` + `<<'E7'` + newline … `E7` + newline + `after`.
    HereDoc(String, String),
}

impl Level {
    fn build(&self, depth: usize, tail: &str) -> String {
        match self {
            Level::Prefix(open) => format!("{}{tail}", open.repeat(depth)),
            Level::Around(open, close) => {
                format!("{}{tail}{}", open.repeat(depth), close.repeat(depth))
            }
            Level::HereDoc(before, after) => {
                let mut out = String::new();
                for k in 0..depth {
                    out.push_str(&format!("{before}<<'E{k}'\n"));
                }
                out.push_str(tail);
                out.push('\n');
                for k in (0..depth).rev() {
                    out.push_str(&format!("E{k}\n{after}"));
                }
                out
            }
        }
    }
}

/// `program` run with shell code `-o` (or `--option`) whose value is a
/// substitution of a here-document holding the next level.
fn code_option(program: &str, option: &str) -> Level {
    let flag = if option.chars().count() == 1 {
        format!("-{option}")
    } else {
        format!("--{option}")
    };
    Level::HereDoc(format!("{program} {flag} \"$(cat "), ")\"".to_owned())
}

/// The runners the interpreter reads by name (`Operands::Special`), each
/// in a form that runs the command after it. Any other special name is
/// stacked as a plain prefix.
fn special_form(name: &str) -> Option<&'static str> {
    Some(match name {
        "sudo" => "sudo ",
        "env" => "env ",
        "xargs" => "xargs ",
        "runuser" => "runuser -u root ",
        "flock" => "flock /tmp/lock ",
        "watch" => "watch ",
        "find" => "find . -exec ",
        "parallel" => "parallel ",
        _ => return None,
    })
}

/// Every program of the command table that runs other code, `depth` deep.
pub fn programs(depth: usize) -> Vec<Case> {
    let mut cases = Vec::new();
    let mut add = |name: String, level: Level, runs_tail: bool, tail: &str| {
        cases.push(Case {
            name,
            command: level.build(depth, tail),
            runs_tail,
        });
    };
    for spec in SPECS {
        for name in spec.names {
            match spec.operands {
                Operands::Command { skip } => {
                    let operands = " 1".repeat(skip);
                    let level = Level::Prefix(format!("{name}{operands} "));
                    // `builtin` runs only builtins: its tail is `eval`.
                    if *name == "builtin" {
                        add(format!("wrapper {name}"), level, true, "eval rm -rf ~");
                    } else {
                        add(format!("wrapper {name}"), level, true, TAIL);
                    }
                }
                Operands::Shell => {
                    add(
                        format!("shell {name} reading a here-document"),
                        Level::HereDoc(format!("{name} "), String::new()),
                        true,
                        TAIL,
                    );
                    add(
                        format!("shell {name} -c"),
                        code_option(name, "c"),
                        true,
                        TAIL,
                    );
                }
                Operands::Script => {
                    add(
                        format!("script {name}"),
                        Level::Prefix(format!("{name} ")),
                        true,
                        TAIL,
                    );
                }
                Operands::Special => match special_form(name) {
                    Some(form) => add(
                        format!("runner {name}"),
                        Level::Prefix(form.to_owned()),
                        true,
                        TAIL,
                    ),
                    None => add(
                        format!("special {name}"),
                        Level::Prefix(format!("{name} ")),
                        false,
                        TAIL,
                    ),
                },
                Operands::Ignore
                | Operands::All(_)
                | Operands::After(..)
                | Operands::Copy { .. }
                | Operands::Positional(_)
                | Operands::ProgramFirst { .. }
                | Operands::Format => {}
            }
            for (options, role) in spec.option_roles {
                if *role != Role::Script {
                    continue;
                }
                for option in *options {
                    add(
                        format!("code option {name} {option}"),
                        code_option(name, option),
                        true,
                        TAIL,
                    );
                }
            }
        }
    }
    for runner in PACKAGE_RUNNERS {
        add(
            format!("package runner {runner}"),
            Level::Prefix(format!("{runner} ")),
            true,
            TAIL,
        );
    }
    for manager in PACKAGE_MANAGERS {
        for sub in ["exec", "x", "dlx"] {
            add(
                format!("package manager {manager} {sub}"),
                Level::Prefix(format!("{manager} {sub} ")),
                true,
                TAIL,
            );
        }
    }
    cases
}

/// Every construct of the grammar that nests, `depth` deep.
pub fn grammar(depth: usize) -> Vec<Case> {
    let around = |open: &str, close: &str| Level::Around(open.to_owned(), close.to_owned());
    let prefix = |open: &str| Level::Prefix(open.to_owned());
    // Commands that nest hold the tail innermost; values that nest (a
    // test, arithmetic, a subscript) hold a word, and the tail follows the
    // whole nest (`… && rm -rf ~`). (name, level, before, innermost, after)
    let after = " && rm -rf ~";
    let forms: Vec<(&str, Level, &str, &str, String)> = vec![
        ("subshell", around("(", ")"), "", TAIL, String::new()),
        ("group", around("{ ", "; }"), "", TAIL, String::new()),
        (
            "command substitution",
            around("$(", ")"),
            "echo ",
            TAIL,
            String::new(),
        ),
        (
            "quoted command substitution",
            around("\"$(", ")\""),
            "echo ",
            TAIL,
            String::new(),
        ),
        (
            "backticks",
            around("$(echo `", "`)"),
            "echo ",
            TAIL,
            String::new(),
        ),
        (
            "process substitution <( )",
            around("<(", ")"),
            "cat ",
            TAIL,
            String::new(),
        ),
        (
            "process substitution >( )",
            around(">(", ")"),
            "tee ",
            TAIL,
            String::new(),
        ),
        (
            "if",
            around("if true; then ", "; fi"),
            "",
            TAIL,
            String::new(),
        ),
        (
            "if in a condition",
            around("if ", "; then :; fi"),
            "",
            TAIL,
            String::new(),
        ),
        (
            "else",
            around("if false; then :; else ", "; fi"),
            "",
            TAIL,
            String::new(),
        ),
        (
            "while",
            around("while true; do ", "; done"),
            "",
            TAIL,
            String::new(),
        ),
        (
            "until",
            around("until false; do ", "; done"),
            "",
            TAIL,
            String::new(),
        ),
        (
            "for",
            around("for i in 1; do ", "; done"),
            "",
            TAIL,
            String::new(),
        ),
        (
            "for with braces",
            around("for i in 1; { ", "; }"),
            "",
            TAIL,
            String::new(),
        ),
        (
            "arithmetic for",
            around("for ((i=0; i<1; i++)); do ", "; done"),
            "",
            TAIL,
            String::new(),
        ),
        (
            "select",
            around("select i in 1; do ", "; done"),
            "",
            TAIL,
            String::new(),
        ),
        (
            "case",
            around("case x in x) ", ";; esac"),
            "",
            TAIL,
            String::new(),
        ),
        (
            "function",
            around("f() { ", "; }; f"),
            "",
            TAIL,
            String::new(),
        ),
        (
            "function keyword",
            around("function f { ", "; }; f"),
            "",
            TAIL,
            String::new(),
        ),
        ("coproc", prefix("coproc "), "", TAIL, String::new()),
        (
            "coproc group",
            around("coproc { ", "; }"),
            "",
            TAIL,
            String::new(),
        ),
        ("negation", prefix("! "), "", TAIL, String::new()),
        ("time", prefix("time "), "", TAIL, String::new()),
        ("and list", prefix("true && "), "", TAIL, String::new()),
        ("or list", prefix("false || "), "", TAIL, String::new()),
        (
            "background list",
            prefix("true & "),
            "",
            TAIL,
            String::new(),
        ),
        ("sequence", prefix("true; "), "", TAIL, String::new()),
        ("pipeline", prefix("true | "), "", TAIL, String::new()),
        (
            "assignment prefixes",
            prefix("a=1 "),
            "",
            TAIL,
            String::new(),
        ),
        (
            "redirections",
            prefix(">/dev/null "),
            "",
            TAIL,
            String::new(),
        ),
        (
            "here-documents",
            Level::HereDoc("cat ".to_owned(), String::new()),
            "rm -rf ~; ",
            "x",
            String::new(),
        ),
        (
            "eval of a here-document",
            Level::HereDoc("eval \"$(cat ".to_owned(), ")\"".to_owned()),
            "",
            TAIL,
            String::new(),
        ),
        (
            "test parentheses",
            around("( ", " )"),
            "[[ ",
            "x",
            format!(" ]]{after}"),
        ),
        (
            "test negation",
            prefix("! "),
            "[[ ",
            "x",
            format!(" ]]{after}"),
        ),
        (
            "test builtin negation",
            prefix("! "),
            "test ",
            "x",
            after.to_owned(),
        ),
        (
            "test brackets",
            around("( ", " )"),
            "[ ",
            "x",
            format!(" ]{after}"),
        ),
        (
            "arithmetic parentheses",
            around("(", ")"),
            "echo $((",
            "1",
            format!(")){after}"),
        ),
        (
            "arithmetic expansions",
            around("$((1+", "))"),
            "echo ",
            "1",
            after.to_owned(),
        ),
        (
            "arithmetic command",
            around("((", "))"),
            "",
            "1",
            after.to_owned(),
        ),
        (
            "arithmetic negation",
            prefix("!"),
            "echo $((",
            "1",
            format!(")){after}"),
        ),
        (
            "arithmetic minus",
            prefix("- "),
            "echo $((",
            "1",
            format!(")){after}"),
        ),
        (
            "arithmetic power",
            prefix("2**"),
            "echo $((",
            "1",
            format!(")){after}"),
        ),
        (
            "arithmetic assignment",
            prefix("a="),
            "echo $((",
            "1",
            format!(")){after}"),
        ),
        (
            "arithmetic ternary",
            around("1?", ":0"),
            "echo $((",
            "1",
            format!(")){after}"),
        ),
        (
            "subscripts",
            around("a[", "]"),
            "echo ${a[",
            "0",
            format!("]}}{after}"),
        ),
        (
            "legacy arithmetic",
            around("$[", "]"),
            "echo ",
            "1",
            after.to_owned(),
        ),
        (
            "brace expansion",
            around("{a,", "}"),
            "echo ",
            "b",
            after.to_owned(),
        ),
    ];
    let mut cases: Vec<Case> = forms
        .into_iter()
        .map(|(name, level, before, inner, after)| Case {
            name: format!("grammar {name}"),
            command: format!("{before}{}{after}", level.build(depth, inner)),
            runs_tail: true,
        })
        .collect();
    for (open, close) in PARAM_FORMS {
        cases.push(Case {
            name: format!("expansion {open}…{close}"),
            command: format!(
                "echo {}{after}",
                Level::Around(open.to_owned(), close.to_owned()).build(depth, "x")
            ),
            runs_tail: true,
        });
    }
    cases
}

/// Every operator that nests a word inside a parameter expansion, and the
/// substitutions that nest one inside a word.
pub const PARAM_FORMS: [(&str, &str); 25] = [
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
    ("${a//x/", "}"),
    ("${a/#x/", "}"),
    ("${a/%x/", "}"),
    ("${a^", "}"),
    ("${a,,", "}"),
    ("${a:-${b}", "}"),
    ("\"${a:-", "}\""),
    ("${a[", "]}"),
    ("${a:", ":1}"),
    ("${!a:-", "}"),
    ("$(echo ", ")"),
    ("\"$(echo ", ")\""),
    ("<(cat ", ")"),
];

/// Every case: programs and grammar, `depth` deep.
pub fn all(depth: usize) -> Vec<Case> {
    let mut cases = programs(depth);
    cases.extend(grammar(depth));
    cases
}

/// Every case as deep as fits in `max_bytes` (a request's `command` field
/// is at most 64 KiB), at most `depth`: still thousands of levels, far
/// past every depth budget. Each name says its depth.
pub fn all_within(depth: usize, max_bytes: usize) -> Vec<Case> {
    let mut chosen: Vec<Option<Case>> = vec![None; all(1).len()];
    let mut at = depth;
    while at > 0 && chosen.iter().any(Option::is_none) {
        for (slot, case) in chosen.iter_mut().zip(all(at)) {
            if slot.is_none() && case.command.len() <= max_bytes {
                *slot = Some(Case {
                    name: format!("{} ×{at}", case.name),
                    ..case
                });
            }
        }
        at = at * 4 / 5;
    }
    chosen.into_iter().flatten().collect()
}
