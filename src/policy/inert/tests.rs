use std::path::Path;

use super::*;

fn verdict(command: &str) -> InertVerdict {
    let env = crate::shell::ShellEnv {
        cwd: Some("/srv/app"),
        home: "/home/dev",
        vars: &[],
    };
    let analysis = crate::shell::analyze(command, &env, &crate::shell::Limits::DEFAULT);
    let protected = vec!["/home/dev/.config/vouch".to_owned()];
    let ctx = InertContext {
        home: "/home/dev",
        protected: &protected,
        git_system_config: Path::new("/nonexistent/gitconfig"),
        files: &crate::engine::Disk,
    };
    judge(command, &analysis, &ctx)
}

#[test]
fn plain_reads_are_inert() {
    for command in [
        "ls -la",
        "ls",
        "cat README.md",
        "head -n 20 src/main.rs",
        "grep -n foo src/lib.rs",
        "rg -n needle src",
        "sed -n '1,220p' src/main.rs",
        "wc -l src/*.rs",
        "find . -name '*.py' -type f",
        "cat package.json | jq .name",
        "ls -la 2>/dev/null",
        "cd src && ls",
        "pwd",
        "echo hello",
        "/bin/zsh -lc 'cat web/package.json'",
        "bash -lc \"ls -la && cat README.md\"",
        "cat README.md 2>&1 | head -50",
    ] {
        assert!(
            matches!(verdict(command), InertVerdict::Inert(_)),
            "{command}: {:?}",
            verdict(command)
        );
    }
}

#[test]
fn look_alikes_are_not() {
    for command in [
        "git status; rm -rf ../other",
        "./cat README.md",
        "cat ~/.aws/credentials",
        "cat .env",
        "rg --pre=sh needle",
        "rg -nz needle",
        "sed -n 1,5p '-ew notes.md'",
        "sed -i s/a/b/ f",
        "sort -o out f",
        "uniq in out",
        "ls > listing.txt",
        "find . -name x -exec rm {} +",
        "find . -delete",
        "awk 'BEGIN{system(\"id\")}'",
        "PAGER=sh git log",
        "PATH=.:$PATH ls",
        "test -v 'a[$(id)]'",
        "[[ $x -eq 1 ]]",
        "echo $((x))",
        "printf -v x '%s' y",
        "python3 -m json.tool f",
        "git log --output=x",
        "git -c core.pager=sh log",
        "git branch newbranch",
        "curl https://example.com",
        "cat $(touch x; echo f)",
        "ls &",
        "grep -r foo ~",
        "rg foo /",
        "bash script.sh",
        "tail -f log | sh",
        "env",
        "cat /proc/self/environ",
        "xargs rm < list",
    ] {
        assert!(
            matches!(verdict(command), InertVerdict::NotProven(_)),
            "{command}: {:?}",
            verdict(command)
        );
    }
}
