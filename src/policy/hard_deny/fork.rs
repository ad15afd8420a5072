//! `fork-bomb`: a function that spawns copies of itself (directly, through
//! `$FUNCNAME` or mutual recursion) in a pipeline or the background and
//! surely calls itself again, a script that starts itself again the same
//! way (`bash $0 & bash $0` in the file it runs), and interpreter
//! one-liners that fork in an unbounded loop; a function that leaves a
//! background process behind and surely calls itself again; a loop that
//! never ends (`while :`, `for ((;;))`, `while sleep 0`, `yes | while
//! read`) starting background processes; a runner with no bound on its
//! parallelism (`xargs -P0`, `parallel -j0`) fed input that never ends.
//!
//! "Surely" is what tells a bomb from a tree walker: in `:(){ :|:& };:`
//! every call starts two more, so the recursion never ends; in
//! `walk(){ for d in "$1"/*; do [ -d "$d" ] && walk "$d" & done; }` each
//! call recurses only past a test of the file system
//! ([`crate::shell::Command::guarded`]), so the tree bounds it. A function
//! with one recursive call that no runtime condition guards recurses
//! without end, and if any of its recursive calls spawns, it is a bomb.
//! The guard is judged within the body that is started again, a
//! function's or a script's (a guard around the first call or run, as in
//! `echo … > f.sh && bash f.sh`, does not bound the recursion), and a
//! condition vouch can decide (`true &&`, `if :`) is no guard.

use super::HardRule;
use crate::shell::CommandKind;
use crate::shell::spec::Role;

use super::facts::Facts;
use super::{HardDeny, deny};

pub(super) fn check(f: &mut Facts<'_>) -> Option<HardDeny> {
    if f.analysis
        .notes
        .iter()
        .any(|n| n == crate::shell::ENDLESS_SPAWNING)
    {
        return deny(HardRule::ForkBombEndlessSpawningLoop,
            "a loop that never ends starts a background process each time round and waits for nothing".to_owned(),
        );
    }
    if let Some(deny) = endless_input_spawns(f) {
        return Some(deny);
    }
    // Functions that surely call themselves again.
    let unbounded: Vec<&str> = f
        .commands()
        .filter(|(_, c)| c.kind == CommandKind::Function && c.recursive && !c.guarded)
        .filter_map(|(_, c)| c.name())
        .collect();
    for (i, cmd) in f.commands() {
        // A script that starts itself again (`bash $0 & bash $0` in the
        // file it runs, `eval "$BASH_EXECUTION_STRING" &`) is the same bomb.
        let reruns_itself = cmd.kind != CommandKind::Function && cmd.recursive && !cmd.guarded;
        if reruns_itself && cmd.async_rerun {
            return deny(
                HardRule::ForkBombScriptRunsItself,
                format!(
                    "`{}` starts the script it is part of again, without bound",
                    cmd.name().unwrap_or("?")
                ),
            );
        }
        if cmd.kind == CommandKind::Function
            && cmd.recursive
            && cmd.async_rerun
            && cmd.name().is_none_or(|n| unbounded.contains(&n))
        {
            let name = cmd.name().unwrap_or("?");
            return deny(
                HardRule::ForkBombRecursiveFunction,
                format!("function `{name}` spawns copies of itself without bound"),
            );
        }
        let Some(name) = cmd.name() else { continue };
        for code in inline_code(f, i) {
            if crate::shell::code_forks_without_bound(name, &code) {
                return deny(
                    HardRule::ForkBombInterpreterForkLoop,
                    format!("`{name}` forks in an unbounded loop"),
                );
            }
        }
    }
    // Weaker than a copy of itself in the background: a process of
    // another kind left behind by each call (`f(){ sleep 9 & f; }`).
    if f.analysis.notes.iter().any(|n| {
        n == crate::shell::RECURSION_SPAWNING
            || (f.judges_readings() && n == crate::shell::RECURSION_SPAWNING_IN_READING)
    }) {
        return deny(
            HardRule::ForkBombRecursionLeavesProcesses,
            "a function starts a background process and calls itself again without end, leaving a process behind each time".to_owned(),
        );
    }
    None
}

/// The inline code an interpreter is given (`-e CODE`, `-c CODE`, `-r CODE`).
pub(super) fn inline_code(f: &Facts<'_>, i: usize) -> Vec<String> {
    let mut out = Vec::new();
    if let Some(eff) = f.effects_of(i) {
        for v in eff.with(&[Role::Script]) {
            if let Some(t) = v.as_known() {
                out.push(t.to_owned());
            }
        }
    }
    let Some(cmd) = f.command(i) else { return out };
    let args = cmd.args();
    // awk's program is its first operand.
    if cmd
        .name()
        .is_some_and(|n| matches!(n, "awk" | "gawk" | "mawk" | "nawk"))
    {
        out.extend(
            args.iter()
                .filter_map(|a| a.as_known())
                .filter(|t| t.contains('{'))
                .map(ToOwned::to_owned),
        );
    }
    let mut k = 0;
    while let Some(a) = args.get(k) {
        let flag = a.as_known().unwrap_or("");
        let takes = matches!(
            flag,
            "-e" | "-E" | "-c" | "-r" | "--eval" | "-p" | "--print"
        ) || (flag.starts_with('-')
            && !flag.starts_with("--")
            && flag.ends_with(['e', 'c'])
            && flag.len() <= 4);
        if takes && let Some(code) = args.get(k + 1).and_then(|c| c.as_known()) {
            out.push(code.to_owned());
            k += 2;
            continue;
        }
        k += 1;
    }
    out
}

/// A process starter fed input that never ends
/// ([`crate::shell::reads_endless_input`]: `yes`, `seq inf`, `/dev/zero`):
/// `yes 'sleep 9 &' | bash` runs a background job per line, `seq inf |
/// xargs -P0 …` and `yes | parallel -j0 …` start a process per line with
/// no limit on how many run at once.
fn endless_input_spawns(f: &Facts<'_>) -> Option<HardDeny> {
    let commands = f.analysis.commands.as_slice();
    for (i, cmd) in f.commands() {
        let Some(name) = cmd.name() else { continue };
        if !crate::shell::reads_endless_input(commands, i) {
            continue;
        }
        let words: Vec<&str> = cmd.args().iter().filter_map(|a| a.as_known()).collect();
        // The text of the lines, when a `yes` prints them.
        let line = cmd
            .stdin_from
            .iter()
            .filter_map(|k| f.command(k))
            .filter(|c| c.name() == Some("yes"))
            .map(|source| {
                source
                    .args()
                    .iter()
                    .filter_map(|a| a.as_known())
                    .collect::<Vec<_>>()
                    .join(" ")
            })
            .next()
            .unwrap_or_default();
        let backgrounds = line.trim_end().ends_with('&') && !line.trim_end().ends_with("&&")
            || line.contains("& ");
        let shell = crate::shell::spec::is_shell(name) && !words.contains(&"-c");
        if (shell && backgrounds) || unbounded_runner(name, &words) {
            return deny(
                HardRule::ForkBombEndlessInputSpawns,
                format!(
                    "`{name}` starts a process for every line of an input that never ends, without a bound on how many run at once"
                ),
            );
        }
    }
    None
}

/// A runner told to run as many processes at once as it has lines:
/// `xargs -P0` / `--max-procs=0`, GNU `parallel -j0` / `--jobs 0` /
/// `-P0` (`-j0` is "as many as possible").
fn unbounded_runner(name: &str, words: &[&str]) -> bool {
    let flags: &[&str] = match name {
        "xargs" => &["-P", "--max-procs"],
        "parallel" => &["-j", "-P", "--jobs", "--max-procs"],
        _ => return false,
    };
    let zero = |v: &str| matches!(v, "0" | "0%");
    words.iter().enumerate().any(|(k, w)| {
        flags.iter().any(|flag| {
            let attached = match w.strip_prefix(flag) {
                Some("") => Some(""),
                Some(rest) if flag.starts_with("--") => rest.strip_prefix('='),
                rest => rest,
            };
            match attached {
                Some("") => words.get(k + 1).is_some_and(|v| zero(v)),
                Some(v) => zero(v),
                None => false,
            }
        })
    })
}

#[cfg(test)]
mod tests {
    use crate::shell::code_forks_without_bound as forks;

    /// Only the code forks: `fork` or `while` inside a string, a regular
    /// expression or a comment is data.
    #[test]
    fn forks_only_in_code() {
        assert!(forks("perl", "fork while 1"));
        assert!(forks("perl", "fork while fork"));
        assert!(forks("perl", "1 while fork"));
        assert!(!forks("perl", "print if /while.*fork/"));
        assert!(!forks("perl", "print if m{fork} while 0"));
        assert!(!forks("perl", "s/fork/spawn/g while 0"));
        assert!(!forks("ruby", "puts $_ if $_ =~ /fork/ && $_ =~ /loop/"));
        assert!(forks("ruby", "loop { fork }"));
        assert!(forks("python3", "import os\nwhile True: os.fork()"));
        assert!(!forks("python3", "print(\"fork while loop\")"));
        assert!(!forks("python3", "# while fork\nprint(1)"));
        assert!(forks(
            "node",
            "while(true){require('child_process').fork('x')}"
        ));
        assert!(!forks("node", "console.log(\"while (true) fork()\")"));
        assert!(forks("php", "for(;;) pcntl_fork();"));
    }
}
