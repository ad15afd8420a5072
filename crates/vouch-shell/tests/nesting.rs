//! Deep nesting is bounded by construction (issue 30): every nested
//! expansion operator to depth 64, arithmetic to depth 10,000 and the
//! inputs that once overflowed the stack or ran for minutes, each analysed
//! on a thread with tokio's default 2 MiB stack and with the wall-clock
//! backstops switched off — what bounds the work is the budgets alone. An
//! analysis that hits a budget is incomplete (the request goes on to the
//! reviewer), never truncated into an allow.

#![allow(
    clippy::unwrap_used,
    clippy::panic,
    clippy::too_many_lines,
    reason = "test helpers: a failure is the test failing"
)]

use std::time::{Duration, Instant};

use proptest::prelude::*;
use vouch_shell::{Limits, ShellEnv, analyze};

/// What a test reads of an analysis (the analysis itself stays on its thread).
#[derive(Debug)]
struct Summary {
    /// The budgets that ran out.
    incomplete: Vec<&'static str>,
    /// Every unit's program name, where known.
    programs: Vec<String>,
}

/// The ceiling the floor promises for any input within the request limits.
const CEILING: Duration = Duration::from_millis(50);

/// Limits with the clocks lifted: only the counted budgets bound the work.
fn no_deadline() -> Limits {
    Limits {
        parse_timeout_us: u64::MAX / 4,
        analysis_timeout_us: u64::MAX / 4,
        ..Limits::DEFAULT
    }
}

/// Analyses `command` on a 2 MiB stack and returns the analysis with the
/// fastest of three runs (a loaded machine slows one run, not three).
fn analysed(command: &str) -> (Summary, Duration) {
    let command = command.to_owned();
    std::thread::Builder::new()
        .stack_size(2 << 20)
        .spawn(move || {
            let env = ShellEnv {
                cwd: Some("/home/dev/project"),
                home: "/home/dev",
                vars: &[],
            };
            let limits = no_deadline();
            let mut best = Duration::MAX;
            let mut last = None;
            for _ in 0..3 {
                let start = Instant::now();
                let analysis = analyze(&command, &env, &limits);
                best = best.min(start.elapsed());
                last = Some(Summary {
                    incomplete: analysis.incomplete.iter().map(|i| i.budget).collect(),
                    programs: analysis
                        .commands
                        .iter()
                        .filter_map(|c| c.argv.first().and_then(|a| a.as_known()))
                        .map(str::to_owned)
                        .collect(),
                });
                if best <= CEILING {
                    break;
                }
            }
            (last.unwrap(), best)
        })
        .unwrap()
        .join()
        .unwrap()
}

fn bounded(name: &str, command: &str) -> Summary {
    let (analysis, took) = analysed(command);
    assert!(
        took <= CEILING,
        "{name}: {} bytes took {took:?} (incomplete: {:?})",
        command.len(),
        analysis.incomplete
    );
    analysis
}

/// `open` repeated `depth` times around `inner`, closed by `close`.
fn nest(open: &str, inner: &str, close: &str, depth: usize) -> String {
    format!("{}{inner}{}", open.repeat(depth), close.repeat(depth))
}

/// `body` inside `depth` nested `for … in 1 2` loops: over `i` each, or,
/// with `distinct`, over `v0`, `v1`, … (see [`loop_vars`]).
fn loops(depth: usize, distinct: bool, body: &str) -> String {
    let opens: String = (0..depth)
        .map(|k| match distinct {
            true => format!("for v{k} in 1 2; do "),
            false => "for i in 1 2; do ".to_owned(),
        })
        .collect();
    format!("{opens}{body}{}", "; done".repeat(depth))
}

/// `$v0$v1…`: the variables of `depth` distinct [`loops`], so the text
/// differs at every run of the body.
fn loop_vars(depth: usize) -> String {
    (0..depth).map(|k| format!("$v{k}")).collect()
}

/// Every operator that nests a word inside a parameter expansion.
const PARAM_FORMS: [(&str, &str); 24] = [
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
    ("$(echo ", ")"),
    ("\"$(echo ", ")\""),
    ("<(cat ", ")"),
];

#[test]
fn every_parameter_operator_nested_64_deep_is_bounded() {
    for (open, close) in PARAM_FORMS {
        for prefix in ["echo ", "rm -rf / ; echo ", "x="] {
            let command = format!("{prefix}{}", nest(open, "x", close, 64));
            bounded(&format!("{open}…{close}"), &command);
        }
    }
}

#[test]
fn replacement_patterns_nested_in_both_operands_are_bounded() {
    // Ten levels, each holding the last one twice (7 KB): the operands
    // were expanded once per candidate and the replacement twice, four
    // times per level (a million expansions); now each once.
    let mut word = "x".to_owned();
    for _ in 0..10 {
        word = format!("${{a/{word}/{word}}}");
    }
    bounded("pattern and replacement", &format!("echo {word}"));
}

#[test]
fn the_inputs_that_crashed_or_ran_for_minutes_are_bounded() {
    let cases = [
        (
            "arithmetic parentheses 1,000",
            format!("echo $(({}))", nest("(", "1", ")", 1000)),
        ),
        (
            "arithmetic expansions 1,000",
            format!("echo {}", nest("$(( 1+", "1", " ))", 1000)),
        ),
        (
            "${a:-…} 3,000",
            format!("echo {}", nest("${a:-", "x", "}", 3000)),
        ),
        (
            "${a/x/…} 12",
            format!("echo {}", nest("${a/x/", "y", "}", 12)),
        ),
        (
            "${a:-…} 50 behind a hard deny",
            format!("rm -rf / ; echo {}", nest("${a:-", "x", "}", 50)),
        ),
        (
            "${a:=…} 26",
            format!("echo {}", nest("${a:=", "x", "}", 26)),
        ),
        ("${a#…} 26", format!("echo {}", nest("${a#", "x", "}", 26))),
        (
            "${a:-${b}…} 26",
            format!("echo {}", nest("${a:-${b}", "x", "}", 26)),
        ),
        (
            "set -- \"$@\" \"$@\" 25",
            format!(
                "set -- a b; {}echo \"$@\"",
                "set -- \"$@\" \"$@\"; ".repeat(25)
            ),
        ),
        (
            "arrays doubled 25",
            format!(
                "a=(x y); {}echo \"${{a[@]}}\"",
                "a=(\"${a[@]}\" \"${a[@]}\"); ".repeat(25)
            ),
        ),
        (
            "command substitutions 3,000",
            format!("echo {}", nest("$(echo ", "x", ")", 3000)),
        ),
        ("subshells 3,000", nest("(", "echo x", ")", 3000)),
        ("groups 3,000", nest("{ ", "echo x;", " }", 3000)),
        (
            "quoted substitutions 1,000",
            format!("echo {}", nest("\"$(echo ", "x", ")\"", 1000)),
        ),
        (
            "process substitutions 1,000",
            format!("cat {}", nest("<(cat ", "x", ")", 1000)),
        ),
        (
            "ifs 1,000",
            format!("{}fi", "if true; then ".repeat(1000)).replace("fi", &"fi; ".repeat(1000)),
        ),
        (
            "subscripts 1,000",
            format!("echo ${{a[{}]}}", nest("a[", "0", "]", 1000)),
        ),
        (
            "unary minus 10,000",
            format!("echo $(( {}1 ))", "-".repeat(10_000)),
        ),
        (
            "ternaries 1,000",
            format!("echo $(( {}1{} ))", "1?".repeat(1000), ":0".repeat(1000)),
        ),
        ("functions calling themselves", "f(){ f; f; }; f".to_owned()),
        // The `bash_nesting` fuzz target's finding: each run of the `eval`
        // named its unknown text anew and parsed it again, so the states
        // of the loops never repeated and every join compared function
        // bodies deep (7 levels: 1.4 s, 9 levels: 7 s).
        (
            "loops around an eval that defines a function, 20",
            loops(
                20,
                false,
                "eval \"${a:-${b}f(){ ${a/#x/$@}; }; f}\"",
            ),
        ),
        // A later `bash_nesting` finding: loops around process
        // substitutions of functions defined in assignments' defaults.
        (
            "loops around process substitutions defining functions",
            "for i in 1 2; do for i in 1 2; do for i in 1 2; do ${a,,>(cat ${a=>(cat ${a=f(){ for i in 1 2; do ${a,,>(cat ${a=f(){ rm -rf ~; }; f})}; done; }; f})})}; done; done; done".to_owned(),
        ),
        // A third: `${a:-…}` nested under loops, 64 candidates a level,
        // copied and compared once per candidate of the base (0.8 s).
        (
            "loops around defaults of many candidates",
            "for i in 1 2; do for i in 1 2; do for i in 1 2; do for i in 1 2; do for i in 1 2; do for i in 1 2; do for i in 1 2; do for i in 1 2; do ${a+${a=${!a:-${a=${a+${a:-((${a:-${a:-${a:-${a:-${a:-${a:-${a:-${a:-${a:-${a:-${a#${a:-$b}}}}}}}}}}}}))}}}}}}; done; done; done; done; done; done; done; done".to_owned(),
        ),
        // A different script at every run: each new text is charged to
        // the parse budget before it is parsed.
        (
            "loops around an eval of a new script each run, 16",
            loops(16, true, &format!("eval \"echo {}\"", loop_vars(16))),
        ),
        (
            "loops around bash -c of a new script each run, 16",
            loops(
                16,
                true,
                &format!("bash -c \"f(){{ echo {}; }}; f\"", loop_vars(16)),
            ),
        ),
        (
            "here-documents in substitutions 200",
            format!("cat {}", nest("$(cat <<E\n", "x\nE\n", ")", 200)),
        ),
    ];
    for (name, command) in cases {
        bounded(name, &command);
    }
}

#[test]
fn arithmetic_nested_ten_thousand_deep_is_bounded() {
    for (open, close) in [("(", ")"), ("$((", "))"), ("-(", ")"), ("a[", "]")] {
        let command = format!("echo $(({}))", nest(open, "1", close, 10_000));
        bounded(&format!("arithmetic {open}…{close}"), &command);
    }
}

/// One random nesting of operators: each level picks one of the forms.
fn nested_word() -> impl Strategy<Value = String> {
    let leaf = prop_oneof![
        Just("x".to_owned()),
        Just("$b".to_owned()),
        Just("~".to_owned())
    ];
    leaf.prop_recursive(64, 64, 1, |inner| {
        (inner, 0..PARAM_FORMS.len() + 4).prop_map(|(word, k)| match PARAM_FORMS.get(k) {
            Some((open, close)) => format!("{open}{word}{close}"),
            None => match k - PARAM_FORMS.len() {
                0 => format!("$(( 1+{word} ))"),
                1 => format!("'{word}'"),
                2 => format!("{{a,{word}}}"),
                _ => format!("${{a/{word}/{word}}}"),
            },
        })
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    #[test]
    fn random_nestings_are_bounded(word in nested_word(), deny in any::<bool>()) {
        let prefix = if deny { "rm -rf ~ ; echo " } else { "echo " };
        let command = format!("{prefix}{word}");
        let (analysis, took) = analysed(&command);
        prop_assert!(took <= CEILING, "{} bytes took {:?}: {:?}", command.len(), took, analysis.incomplete);
        if deny {
            prop_assert!(analysis.programs.iter().any(|p| p == "rm"), "{:?}", analysis);
        }
    }
}
