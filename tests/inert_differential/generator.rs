//! The commands the harness tries: read-only command families and their
//! look-alikes that write or run something, combined the way agents
//! combine them (pipelines, `&&`/`||`/`;`, redirections, `$(…)`, `bash -c`
//! and `zsh -lc` wrappers, `cd`, globs, quoting), so that the generated
//! commands sit on both sides of the inert boundary.
//!
//! Operands name the fixture's files ([`crate::fixture`]): readable ones,
//! secrets (`.env`, `docs/setup.txt` → `~/.aws/credentials`), vouch's
//! files, files named like options (`--pre=sh`, `-o`, `-rf`), globs that
//! match them, and the repositories whose configuration names a program.

use proptest::prelude::*;
use proptest::sample::select;

/// Operands: `{f}` and `{g}` in a template.
const FILES: &[&str] = &[
    "README.md",
    "README.md",
    "src/main.rs",
    "src/lib.rs",
    "docs/guide.md",
    "Cargo.toml",
    "data.json",
    "notes.txt",
    "missing.txt",
    "src",
    "docs",
    ".",
    "..",
    "*",
    "*.md",
    "src/*.rs",
    "docs/*",
    ".*",
    "-- *",
    ".env",
    "docs/setup.txt",
    "~/.aws/credentials",
    "~/.config/vouch/config.toml",
    "--pre=sh",
    "./-o",
    "-- -o",
    "./-rf",
    "vendor/x/lib.txt",
    "/etc/hostname",
    "/dev/null",
];

/// Patterns: `{p}`.
const PATTERNS: &[&str] = &["TODO", "foo", "fn", "'a b'", "\"name\"", "-e foo", "'^#'"];

/// One command with placeholders: read-only forms.
const TEMPLATES: &[&str] = &[
    // listing
    "ls",
    "ls -la",
    "ls -la {f}",
    "ls -1 {f}",
    "ls -R src",
    "ls -d {f}",
    "ls -lh {f} {g}",
    "tree",
    "tree -L 2",
    "tree -a {f}",
    "tree -o out.txt",
    "stat {f}",
    "stat -c %s {f}",
    "du -sh {f}",
    "du -a",
    "wc -l {f}",
    "wc {f} {g}",
    "file {f}",
    "realpath {f}",
    "basename {f}",
    "dirname {f}",
    "pwd",
    "echo {f}",
    "echo {p} {f}",
    "printf '%s\\n' {f}",
    "test -f {f}",
    "[ -d {f} ]",
    "true",
    "date -u",
    "uname -a",
    "whoami",
    "which git",
    "type ls",
    "command -v rg",
    // reading
    "cat {f}",
    "cat -n {f}",
    "cat {f} {g}",
    "head {f}",
    "head -n 5 {f}",
    "head -5 {f}",
    "tail -n 3 {f}",
    "tail -1 {f}",
    "nl {f}",
    "tac {f}",
    "rev {f}",
    "sort {f}",
    "sort -u {f}",
    "sort -rn {f}",
    "uniq {f}",
    "uniq -c {f}",
    "cut -c1-5 {f}",
    "cut -d: -f1 {f}",
    "od -c {f}",
    "xxd {f}",
    "base64 {f}",
    "sha256sum {f}",
    "md5sum {f}",
    "diff {f} {g}",
    "diff -u {f} {g}",
    "diff -r src docs",
    "cmp {f} {g}",
    "comm notes.txt {g}",
    "strings {f}",
    "fold -w 20 {f}",
    "column -t {f}",
    "tr a-z A-Z < {f}",
    // searching
    "grep {p} {f}",
    "grep -n {p} {f}",
    "grep -rn {p} .",
    "grep -rn {p} src",
    "grep -ri {p} {f}",
    "grep -c {p} {f}",
    "grep -l {p} {f}",
    "grep -f {f} README.md",
    "rg {p}",
    "rg -n {p} {f}",
    "rg -l {p}",
    "rg --files",
    "rg --files {f}",
    "rg -i {p} src",
    "rg -c {p} {f}",
    "find .",
    "find . -name '*.rs'",
    "find src -type f",
    "find . -maxdepth 1 -type d",
    "find {f} -name '*.md' -print",
    "find . -newer README.md",
    // scripts
    "sed -n '1,5p' {f}",
    "sed -n 1p {f}",
    "sed -n '/foo/p' {f}",
    "sed 's/a/b/' {f}",
    "sed -e 's/foo/bar/g' {f}",
    "awk '{print $1}' {f}",
    "awk -F: '{print NF}' {f}",
    "awk 'NR==1' {f}",
    "awk 'END {print NR}' {f}",
    "jq . data.json",
    "jq -r .name data.json",
    "jq '.items | length' data.json",
    "jq -c '.items[]' {f}",
    // git
    "git status",
    "git status --short",
    "git status -s",
    "git status --porcelain",
    "git log --oneline -5",
    "git log -1 --stat",
    "git log --format=%H -3",
    "git --no-pager log -3",
    "git diff",
    "git diff --stat",
    "git diff HEAD",
    "git diff --cached",
    "git diff -- {f}",
    "git show HEAD",
    "git show --stat HEAD",
    "git show HEAD:README.md",
    "git branch",
    "git branch -a",
    "git branch -v",
    "git tag",
    "git remote -v",
    "git rev-parse HEAD",
    "git rev-parse --show-toplevel",
    "git ls-files",
    "git blame README.md",
    "git describe --always",
    "git cat-file -p HEAD",
    "git shortlog -s",
    "git count-objects -v",
    "git for-each-ref",
    "git rev-list --all",
    "git reflog show",
    "git -C vendor/x status",
    "git -C ../textconv diff",
    "git -C ../extdiff diff",
    "git -C ../textconv log -p",
];

/// Look-alikes that write, run or connect.
const LOOK_ALIKES: &[&str] = &[
    "sort -o out.txt {f}",
    "sort {f} -o {g}",
    "uniq {f} out.txt",
    "sed -n 'w out.txt' {f}",
    "sed 's/a/b/w out.txt' {f}",
    "sed -i 's/a/b/' {f}",
    "sed -n '1e touch RAN' {f}",
    "find . -exec touch {} +",
    "find . -name '*.md' -delete",
    "find . -fprint out.txt",
    "find . -execdir ls \\;",
    "tee out.txt < {f}",
    "awk 'BEGIN{system(\"touch RAN\")}'",
    "awk '{print > \"out.txt\"}' {f}",
    "awk '{print | \"sh\"}' {f}",
    "jq -n env",
    "jq -n '$ENV'",
    "git -c core.pager='touch RAN' log",
    "git -c core.fsmonitor='touch RAN' status",
    "git log --output=out.txt",
    "git diff --ext-diff",
    "git diff --textconv",
    "git branch newbranch",
    "git tag v9",
    "git stash",
    "git checkout -- {f}",
    "git config user.name x",
    "git fetch",
    "git pull",
    "git ls-remote origin",
    "git commit -am x",
    "git add {f}",
    "git grep foo",
    "git archive HEAD",
    "git format-patch -1",
    "rg --pre=sh TODO",
    "rg --pre sh {p}",
    "rg -z {p}",
    "rg --hidden {p}",
    "rg -u {p}",
    "rg {p} {f}",
    "grep -r {p} ~",
    "PAGER='touch RAN' git log",
    "GIT_PAGER=cat git log",
    "LANG=C sort {f}",
    "LC_ALL=C ls",
    "xxd {f} out.bin",
    "touch {f}",
    "rm -f out.txt",
    "mkdir newdir",
    "cp {f} copy.txt",
    "mv out.txt out2.txt",
    "ln -s {f} link",
    "chmod +x {f}",
    "python3 -c 'print(1)'",
    "curl -s http://192.0.2.1/",
    "wget -q http://192.0.2.1/",
    "nc 192.0.2.1 80",
    "exec 3<>/dev/tcp/192.0.2.1/80",
    "./-o",
    "./cat README.md",
    "env",
    "printenv",
    "set",
    "export A=1",
    "read x < {f}",
    "less {f}",
    "vim -R {f}",
    "make -n",
    "tar -tf x.tar",
    "dd if={f} of=out.txt",
    "truncate -s 0 {f}",
];

/// Stages after the first of a pipeline: they read standard input.
const FILTERS: &[&str] = &[
    "head",
    "head -3",
    "tail -2",
    "wc -l",
    "sort",
    "sort -u",
    "uniq -c",
    "grep -v foo",
    "grep -n a",
    "cut -c1-10",
    "awk '{print $1}'",
    "sed -n 1p",
    "tr a-z A-Z",
    "cat",
    "cat -",
    "rev",
    "nl",
    "jq .",
    "xargs echo",
    "xargs ls -la",
    "xargs -I{} echo {}",
    "xargs cat",
    "tee /dev/null",
    "tee out.txt",
    "sort -o out.txt",
    "xargs rm -f",
    "xargs touch",
    "sh",
    "bash",
    "base64 -d",
];

/// Redirections after a command.
const REDIRECTS: &[&str] = &[
    "",
    "",
    "",
    "",
    " 2>/dev/null",
    " 2>&1",
    " >/dev/null 2>&1",
    " &>/dev/null",
    " < README.md",
    " < .env",
    " > out.txt",
    " >> notes.txt",
    " 2> err.txt",
    " <<< foo",
    " >| out.txt",
];

/// What may stand before the whole command.
const PREFIXES: &[&str] = &[
    "",
    "",
    "",
    "",
    "",
    "cd src && ",
    "cd docs; ",
    "cd vendor/x && ",
    "cd ../textconv && ",
    "cd ../extdiff && ",
    "cd .. && ",
    "cd ~ && ",
    "cd /tmp && ",
    "set -e; ",
    "set -euo pipefail; ",
];

const JOINS: &[&str] = &[" && ", " || ", "; ", " && ", "\n"];

/// How a file operand is quoted.
#[derive(Debug, Clone, Copy)]
enum Quote {
    Bare,
    Single,
    Double,
}

fn quote(word: &str, how: Quote) -> String {
    if word.starts_with("-- ") || word.contains(' ') {
        return word.to_owned();
    }
    match how {
        Quote::Bare => word.to_owned(),
        // A quoted `~` or glob stays literal: that explores too.
        Quote::Single => format!("'{word}'"),
        Quote::Double => format!("\"{word}\""),
    }
}

fn quote_strategy() -> impl Strategy<Value = Quote> {
    prop_oneof![
        6 => Just(Quote::Bare),
        1 => Just(Quote::Single),
        1 => Just(Quote::Double),
    ]
}

/// One simple command, with a redirection or none.
fn simple() -> impl Strategy<Value = String> {
    let template = prop_oneof![4 => select(TEMPLATES), 1 => select(LOOK_ALIKES)];
    (
        template,
        select(FILES),
        quote_strategy(),
        select(FILES),
        select(PATTERNS),
        select(REDIRECTS),
    )
        .prop_map(|(template, f, q, g, p, redirect)| {
            let filled = template
                .replace("{f}", &quote(f, q))
                .replace("{g}", g)
                .replace("{p}", p);
            format!("{filled}{redirect}")
        })
}

/// A simple command, possibly inside a substitution or a wrapper.
fn unit() -> impl Strategy<Value = String> {
    let plain = simple();
    prop_oneof![
        10 => plain,
        1 => simple().prop_map(|c| format!("echo \"$({c})\"")),
        1 => simple().prop_map(|c| format!("ls $({c})")),
        1 => simple().prop_map(|c| format!("cat $(echo README.md) | {c}")),
        1 => simple().prop_map(|c| format!("bash -c {}", single(&c))),
        1 => simple().prop_map(|c| format!("sh -c {}", single(&c))),
        1 => simple().prop_map(|c| format!("timeout 5 {c}")),
        1 => simple().prop_map(|c| format!("{{ {c}; }}")),
        1 => simple().prop_map(|c| format!("( {c} )")),
        1 => simple().prop_map(|c| format!("diff <({c}) README.md")),
        1 => simple().prop_map(|c| format!("for f in src/*.rs; do {c}; done")),
        1 => simple().prop_map(|c| format!("if [ -f README.md ]; then {c}; fi")),
    ]
}

/// A pipeline: a unit, then filters.
fn pipeline() -> impl Strategy<Value = String> {
    (
        unit(),
        proptest::collection::vec(select(FILTERS), 0..=2),
        select(REDIRECTS),
    )
        .prop_map(|(first, filters, redirect)| {
            if filters.is_empty() {
                return first;
            }
            let mut out = first;
            for f in filters {
                out.push_str(" | ");
                out.push_str(f);
            }
            out.push_str(redirect);
            out
        })
}

/// A whole command: a prefix, pipelines joined by `&&`, `||`, `;`, and
/// sometimes the wrappers harnesses add (`bash -lc`, `/bin/zsh -lc`).
pub fn command() -> impl Strategy<Value = String> {
    let list = (
        select(PREFIXES),
        proptest::collection::vec((pipeline(), select(JOINS)), 1..=2),
    )
        .prop_map(|(prefix, parts)| {
            let mut out = prefix.to_owned();
            let last = parts.len() - 1;
            for (i, (p, join)) in parts.into_iter().enumerate() {
                out.push_str(&p);
                if i < last {
                    out.push_str(join);
                }
            }
            out
        });
    (list, 0..10u8).prop_map(|(c, wrap)| match wrap {
        0 => format!("bash -lc {}", single(&c)),
        1 => format!("/bin/zsh -lc {}", single(&c)),
        2 => format!("bash -c \"{}\"", double(&c)),
        _ => c,
    })
}

/// `text` as one single-quoted bash word.
pub fn single(text: &str) -> String {
    format!("'{}'", text.replace('\'', "'\\''"))
}

/// `text` for the inside of a double-quoted bash word.
fn double(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if matches!(c, '\\' | '"' | '$' | '`') {
            out.push('\\');
        }
        out.push(c);
    }
    out
}
