//! Unit tests for bash unit extraction: every construct that runs commands,
//! word decoding, redirections, data flow, errors and limits.

use super::*;

/// Each unit's argv rendered as text.
fn units(command: &str) -> Vec<String> {
    let script = parse(command);
    assert!(script.errors.is_empty(), "{command}: {:?}", script.errors);
    rendered(&script)
}

fn rendered(script: &Script) -> Vec<String> {
    script
        .units
        .iter()
        .map(|u| {
            u.argv
                .iter()
                .map(Word::display)
                .collect::<Vec<_>>()
                .join(" ")
        })
        .collect()
}

fn has_unit(command: &str, expected: &str) {
    let got = units(command);
    assert!(
        got.iter().any(|u| u == expected),
        "{command}: expected unit `{expected}` in {got:?}"
    );
}

#[test]
fn lists_and_pipelines_split_into_units() {
    assert_eq!(
        units("a && b || c; d & e\nf"),
        ["a", "b", "c", "d", "e", "f"]
    );
    assert_eq!(units("a | b |& c"), ["a", "b", "c"]);
    assert_eq!(units("! a"), ["a"]);
}

#[test]
fn groups_subshells_and_control_flow_are_entered() {
    for (command, expected) in [
        ("( rm x )", "rm x"),
        ("{ rm x; }", "rm x"),
        ("if a; then rm x; elif b; then c; else d; fi", "rm x"),
        ("if rm x; then :; fi", "rm x"),
        ("while true; do rm x; done", "rm x"),
        ("until false; do rm x; done", "rm x"),
        ("for f in a b; do rm x; done", "rm x"),
        ("case $v in a) rm x;; *) b;; esac", "rm x"),
        ("f() { rm x; }", "rm x"),
        ("function g { rm x; }", "rm x"),
        ("[ -f $(rm x) ]", "rm x"),
    ] {
        has_unit(command, expected);
    }
}

#[test]
fn substitutions_are_units() {
    has_unit("echo $(rm x)", "rm x");
    has_unit("echo \"$(rm x)\"", "rm x");
    has_unit("echo `rm x`", "rm x");
    has_unit("echo `echo \\`rm x\\``", "rm x");
    has_unit("diff <(rm x) b", "rm x");
    has_unit("tee >(rm x)", "rm x");
    has_unit("X=$(rm x)", "rm x");
    has_unit("echo ${v:-$(rm x)}", "rm x");
    has_unit("cat <<EOF\n$(rm x)\nEOF", "rm x");
}

#[test]
fn script_strings_are_parsed_again() {
    has_unit("bash -c 'rm x'", "rm x");
    has_unit("sh -lc \"rm x\"", "rm x");
    has_unit("zsh -o pipefail -c 'rm x'", "rm x");
    has_unit("eval 'rm x'", "rm x");
    has_unit("eval rm x", "rm x");
    has_unit("su -c 'rm x' root", "rm x");
    has_unit("bash -c \"sh -c 'rm x'\"", "rm x");
    has_unit("echo 'rm x' | bash", "rm x");
    has_unit("cat <<'EOF' | sh\nrm x\nEOF", "rm x");
    has_unit("bash <<< 'rm x'", "rm x");
    has_unit("sh <<'EOF'\nrm x\nEOF", "rm x");
    has_unit("env -S 'rm x'", "rm x");
}

#[test]
fn wrappers_are_removed() {
    for command in [
        "sudo rm x",
        "sudo -u root -H rm x",
        "sudo --user=root rm x",
        "doas -u root rm x",
        "env rm x",
        "env -i -u HOME A=1 rm x",
        "nice -n 5 rm x",
        "nice -5 rm x",
        "nohup rm x",
        "timeout 10 rm x",
        "timeout -s KILL -k 5 10s rm x",
        "command rm x",
        "builtin rm x",
        "exec rm x",
        "time rm x",
        "stdbuf -oL rm x",
        "ionice -c 3 rm x",
        "setsid rm x",
        "chroot /mnt rm x",
        "sudo env A=1 nice -n 1 rm x",
    ] {
        let script = parse(command);
        let last = script.units.last().expect("a unit");
        assert_eq!(
            last.argv.iter().map(Word::display).collect::<Vec<_>>(),
            ["rm", "x"],
            "{command}"
        );
        assert!(!last.wrappers.is_empty(), "{command}");
    }
    let script = parse("env A=1 B=$HOME rm x");
    let unit = &script.units[0];
    assert_eq!(unit.assignments.len(), 2);
    assert_eq!(unit.assignments[1].value.pieces, vec![Piece::Home]);
}

#[test]
fn command_v_is_a_lookup_not_a_run() {
    assert_eq!(units("command -v rm"), ["command -v rm"]);
}

#[test]
fn xargs_and_find_exec_run_commands_with_unknown_arguments() {
    let script = parse("find . -name x -exec rm -f {} \\;");
    let exec = script.units.iter().find(|u| u.origin == Origin::FindExec);
    let exec = exec.expect("find -exec unit");
    assert_eq!(exec.name(), Some("rm"));
    assert!(exec.extra_args_unknown);
    let script = parse("ls | xargs -0 -n 1 rm -f");
    let xargs = &script.units[1];
    assert_eq!(xargs.name(), Some("rm"));
    assert!(xargs.extra_args_unknown);
    assert_eq!(xargs.sources, vec![0]);
}

#[test]
fn text_arguments_are_not_units() {
    assert_eq!(units("echo 'rm -rf /'"), ["echo rm -rf /"]);
    assert_eq!(
        units("git commit -m 'rm -rf /'"),
        ["git commit -m rm -rf /"]
    );
    assert_eq!(units("grep 'rm -rf /' ."), ["grep rm -rf / ."]);
    assert_eq!(units("printf '%s' \"$(echo hi)\"").len(), 2);
    assert_eq!(units("cat <<'EOF'\nrm -rf /\nEOF"), ["cat"]);
}

#[test]
fn words_are_decoded() {
    for (command, expected) in [
        ("\"r\"\"m\"", "rm"),
        ("'r'm", "rm"),
        ("\\rm", "rm"),
        ("$'\\x72m'", "rm"),
        ("$'\\162m'", "rm"),
        ("$'\\u0072m'", "rm"),
        ("\"a\\\"b\"", "a\"b"),
        ("'it'\\''s'", "it's"),
        ("a\\ b", "a b"),
    ] {
        let script = parse(command);
        let first = &script.units[0].argv[0];
        assert_eq!(first.literal().as_deref(), Some(expected), "{command}");
    }
}

#[test]
fn expansions_stay_visible() {
    let arg = |command: &str| parse(command).units.last().unwrap().argv[1].clone();
    assert_eq!(arg("rm ~").pieces, vec![Piece::Home]);
    assert_eq!(arg("rm $HOME").pieces, vec![Piece::Home]);
    assert_eq!(arg("rm \"${HOME}\"").pieces, vec![Piece::Home]);
    assert_eq!(
        arg("rm ~/*").pieces,
        vec![Piece::Home, Piece::Literal("/".into()), Piece::Glob('*')]
    );
    assert_eq!(arg("rm '~/*'").literal().as_deref(), Some("~/*"));
    assert_eq!(arg("rm \"*\"").literal().as_deref(), Some("*"));
    assert!(matches!(&arg("rm $DIR").pieces[..], [Piece::Var { name, .. }] if name == "DIR"));
    assert!(matches!(
        &arg("rm ${D:-/}").pieces[..],
        [Piece::Var { name, default: Some(d) }] if name == "D" && d == "/"
    ));
    assert!(arg("rm $(pwd)").has_substitution());
    assert!(!arg("rm '$HOME'").has_expansion());
}

#[test]
fn redirections_are_recorded_with_operators() {
    let script = parse("cmd > a >> b >| c &> d 2>&1 < e");
    let ops: Vec<(RedirectOp, String)> = script.units[0]
        .redirects
        .iter()
        .map(|r| (r.op, r.target.display()))
        .collect();
    assert!(ops.contains(&(RedirectOp::Write, "a".into())), "{ops:?}");
    assert!(ops.contains(&(RedirectOp::Append, "b".into())), "{ops:?}");
    assert!(ops.contains(&(RedirectOp::Clobber, "c".into())), "{ops:?}");
    assert!(ops.contains(&(RedirectOp::WriteAll, "d".into())), "{ops:?}");
    assert!(
        ops.contains(&(RedirectOp::Duplicate, "1".into())),
        "{ops:?}"
    );
    assert!(ops.contains(&(RedirectOp::Read, "e".into())), "{ops:?}");
    let heredoc = parse("cat <<EOF > out\nhello $HOME\nEOF");
    let unit = &heredoc.units[0];
    assert!(unit.redirects.iter().any(|r| r.op == RedirectOp::Write));
    let body = unit
        .redirects
        .iter()
        .find(|r| r.op == RedirectOp::HereDoc)
        .expect("heredoc");
    assert!(body.target.pieces.contains(&Piece::Home));
    let here = parse("cat <<< \"x\"");
    assert_eq!(here.units[0].redirects[0].op, RedirectOp::HereString);
}

#[test]
fn group_redirections_apply_to_inner_units() {
    let script = parse("{ a; b; } > out");
    assert!(script.units.iter().all(|u| u.redirects.len() == 1));
}

#[test]
fn data_flow_is_recorded() {
    let script = parse("cat f | gzip | nc h 1");
    assert_eq!(
        script.units[0].sinks,
        vec![Sink::Unit {
            index: 1,
            flow: Flow::Pipe
        }]
    );
    assert_eq!(script.units[2].sources, vec![1]);
    assert!(script.units.iter().all(|u| u.in_pipeline));

    let script = parse("curl -d \"$(cat f)\" u");
    let cat = script
        .units
        .iter()
        .position(|u| u.name() == Some("cat"))
        .unwrap();
    let curl = script
        .units
        .iter()
        .position(|u| u.name() == Some("curl"))
        .unwrap();
    assert!(script.units[cat].sinks.contains(&Sink::Unit {
        index: curl,
        flow: Flow::Substitution
    }));

    let script = parse("K=$(cat f); curl -d \"$K\" u");
    assert!(script.units[0].sinks.contains(&Sink::Variable("K".into())));
    assert_eq!(script.bindings.len(), 1);
    assert_eq!(script.bindings[0].assignment.name, "K");

    let script = parse("cat <<EOF | nc h 1\nx\nEOF");
    assert_eq!(script.units[1].name(), Some("nc"));
    assert_eq!(script.units[1].sources, vec![0]);

    let script = parse("FOO=1 BAR=$HOME cmd");
    assert_eq!(script.units[0].assignments.len(), 2);
}

#[test]
fn background_and_functions_are_marked() {
    let script = parse(":(){ :|:& };:");
    let inner: Vec<&Unit> = script
        .units
        .iter()
        .filter(|u| u.in_function.as_deref() == Some(":"))
        .collect();
    assert_eq!(inner.len(), 2);
    assert!(inner.iter().all(|u| u.in_pipeline));
    assert!(inner.iter().any(|u| u.background));
    let script = parse("sleep 1 & wait");
    assert!(script.units[0].background);
    assert!(!script.units[1].background);
}

#[test]
fn parse_errors_are_reported_with_the_units_that_parsed() {
    let script = parse("rm -rf / && ls $(");
    assert!(script.error().is_some(), "{script:?}");
    assert!(rendered(&script).iter().any(|u| u == "rm -rf /"));
    let script = parse("if then fi");
    assert!(script.error().is_some());
    let script = parse("echo 'unterminated");
    assert!(script.error().is_some());
    let script = parse("sudo if true; then rm x; fi");
    assert!(
        script.error().is_some(),
        "a reserved word as a command name"
    );
    let script = parse("bash -c 'ls $('");
    assert!(script.error().is_some(), "errors inside -c strings count");
}

#[test]
fn nesting_deeper_than_the_limit_is_an_error() {
    let mut command = "rm x".to_owned();
    for _ in 0..=MAX_SCRIPT_NESTING {
        command = format!("eval {}", shell_quote(&command));
    }
    let script = parse(&command);
    assert!(
        script
            .errors
            .iter()
            .any(|e| matches!(e, ShellError::TooDeep { .. })),
        "{:?}",
        script.errors
    );
    let mut within = "rm x".to_owned();
    for _ in 0..MAX_SCRIPT_NESTING {
        within = format!("eval {}", shell_quote(&within));
    }
    let script = parse(&within);
    assert!(script.errors.is_empty(), "{:?}", script.errors);
    assert!(rendered(&script).iter().any(|u| u == "rm x"));
}

#[test]
fn pathological_structure_is_an_error_not_a_crash() {
    let command = format!("{}rm x{}", "(".repeat(5000), ")".repeat(5000));
    let script = parse(&command);
    assert!(script.error().is_some());
}

fn shell_quote(text: &str) -> String {
    format!("'{}'", text.replace('\'', "'\\''"))
}
