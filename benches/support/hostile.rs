//! The hostile corpus: inputs built to make the shell analysis work hard,
//! shared by the deterministic benchmark and `examples/shell_profile.rs`.

/// Inputs built to make the analysis work hard (issue 8's list and more),
/// each within the 64 KiB request limit.
pub fn hostile() -> Vec<(&'static str, String)> {
    let mut out = vec![
        ("glob stars", format!("touch {}X", "*".repeat(4000))),
        ("brace list", format!("rm -rf {{{}/}}", "1,".repeat(8000))),
        (
            "brace sequences",
            "echo {1..1000}{1..1000}{1..1000}".to_owned(),
        ),
        (
            "deep braces",
            format!("echo {}a{}", "{".repeat(20000), "}".repeat(20000)),
        ),
        (
            "doubling variable",
            format!("V=x; {}rm -rf $V", "V=$V$V; ".repeat(60)),
        ),
        (
            "decoy assignments",
            format!("{}D=/; rm -rf $D", "D=$RANDOM; ".repeat(2000)),
        ),
        (
            "relative cd",
            format!("{}rm -rf *", "cd a || cd b; ".repeat(4000)),
        ),
        ("many cd", format!("{}rm -rf x", "cd a; ".repeat(10000))),
        ("pipes", format!("{}a", "a|".repeat(32000))),
        (
            "nested subshells",
            format!("{}a{}", "(".repeat(10000), ")".repeat(10000)),
        ),
        ("nested bash -c", {
            let mut s = "rm -rf /".to_owned();
            for _ in 0..12 {
                s = format!("bash -c {}", vouch_quote(&s));
            }
            s
        }),
        ("recursive function", "f() { f; f; }; f".to_owned()),
        (
            "loop",
            "for i in {1..100000}; do cd $i; done; rm -rf *".to_owned(),
        ),
        // Found by the `bash_hard_deny` fuzz target (11 s before the fix).
        (
            "parallel fan-out",
            include_str!("../../tests/fixtures/parallel_fan_out.sh")
                .trim_end()
                .to_owned(),
        ),
        // Found by the same fuzz target: 8,000 brace words joined one at a
        // time onto 64 growing shapes (57 s before the fix).
        (
            "brace copies",
            include_str!("../../tests/fixtures/brace_copies.sh")
                .trim_end()
                .to_owned(),
        ),
        (
            "long brace word",
            format!("echo {}{{1..10000}}", "a".repeat(30000)),
        ),
        ("value copies", {
            let words = vec!["\"$S\""; 5000].join(" ");
            format!("S={}; echo {words}", "a".repeat(30000))
        }),
        ("unclosed braces", format!("echo {}", "{".repeat(60000))),
        (
            "unclosed brace lists",
            format!("echo {}", "{a,".repeat(16000)),
        ),
        (
            "multi-way words",
            format!(
                "X=a; [ -n \"$1\" ] && X=\"a b\"; echo {}",
                vec!["$X"; 20000].join(" ")
            ),
        ),
        // `eval` joins its words into one script per way of taking them:
        // a 64-way first word then copied every combination for each of
        // 10,000 words (5.0 s with the deadlines off before the fix; the
        // fuzzer's 281-byte `env -S` line of the same kind took 2.8 s).
        ("argument copies", argument_copies()),
    ];
    out.extend(nesting_and_readings());
    out.retain(|(_, c)| c.len() <= 64 * 1024);
    out
}

/// Six two-way variables make a 64-way word; `eval` then joins it with
/// 10,000 more words.
pub fn argument_copies() -> String {
    let mut line = String::new();
    for i in 0..6 {
        line.push_str(&format!("if [ -n \"$X\" ]; then V{i}=a; else V{i}=b; fi; "));
    }
    line.push_str("eval \"$V0$V1$V2$V3$V4$V5\" $1{1..10000}");
    line
}

pub fn vouch_quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', "'\\''"))
}

/// Issue 30's inputs: deep nesting (which overflowed `vouch serve`'s stack)
/// and nested operators (which grew ×2 or ×4 a level), and the readings
/// added after its red team.
fn nesting_and_readings() -> Vec<(&'static str, String)> {
    vec![
        // Issue 30's red team: deep nesting overflowed `vouch serve`'s
        // stack (SIGABRT), and nested operators grew ×2 or ×4 a level.
        (
            "deep arithmetic",
            format!("echo $(({}1{}))", "(".repeat(1000), ")".repeat(1000)),
        ),
        (
            "deep defaults",
            format!("echo {}x{}", "${a:-".repeat(3000), "}".repeat(3000)),
        ),
        (
            "nested replacements",
            format!("echo {}y{}", "${a/x/".repeat(12), "}".repeat(12)),
        ),
        (
            "nested defaults behind a deny",
            format!("rm -rf / ; echo {}x{}", "${a:-".repeat(50), "}".repeat(50)),
        ),
        (
            "nested assignments",
            format!("echo {}x{}", "${a:=".repeat(26), "}".repeat(26)),
        ),
        (
            "doubled positionals",
            format!(
                "set -- a b; {}echo \"$@\"",
                "set -- \"$@\" \"$@\"; ".repeat(25)
            ),
        ),
        (
            "deep subscripts",
            format!("echo $(({}1{}))", "a[".repeat(10000), "]".repeat(10000)),
        ),
        (
            "nested arithmetic expansions",
            format!("echo {}1{}", "$(( 1+".repeat(199), " ))".repeat(199)),
        ),
        // The readings added after that red team: every line continuation
        // joined in one pass, decoded payloads read, references followed.
        ("line continuations", "r\\\n".repeat(20_000) + "m -rf ~"),
        (
            "decoded payload",
            format!(
                "echo {} | base64 -d | sh",
                data_encoding::BASE64.encode("echo a; ".repeat(5_000).as_bytes())
            ),
        ),
        (
            "reference chain",
            (1..2_000)
                .map(|k| format!("declare -n r{k}=r{}; ", k + 1))
                .collect::<String>()
                + "r2000=~; rm -rf \"$r1\"",
        ),
        (
            "quoted arithmetic substitutions",
            format!("echo $(( {} 1 ))", "'$(echo 1)' + ".repeat(2_000)),
        ),
    ]
}
