//! The inert stage's corpora (issue 31): every line of `inert.jsonl` is
//! proven inert; no line of `not_inert.jsonl` (writes, program execution,
//! network, secret reads and configuration-driven execution that look
//! read-only) nor of any hard-deny fixture is. A git repository whose
//! configuration names a program makes `git status` not inert.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

#[path = "it/support/fixtures.rs"]
mod fixtures;

use std::path::Path;

use serde::Deserialize;
use vouch::policy::inert::{InertContext, InertVerdict, judge};

#[derive(Deserialize)]
struct Line {
    command: Option<String>,
    cwd: String,
    home: String,
}

const PROTECTED: &[&str] = &[
    "/home/dev/.config/vouch",
    "/home/dev/.local/state/vouch",
    "/opt/vouch/bin/vouch",
];

fn verdict(command: &str, cwd: &str, home: &str) -> InertVerdict {
    let env = vouch::shell::ShellEnv {
        cwd: Some(cwd),
        home,
        vars: &[],
    };
    let analysis = vouch::shell::analyze(command, &env, &vouch::shell::Limits::DEFAULT);
    let protected: Vec<String> = PROTECTED.iter().map(|p| (*p).to_owned()).collect();
    let ctx = InertContext {
        home,
        protected: &protected,
        git_system_config: Path::new("/nonexistent/gitconfig"),
        files: &vouch::engine::Disk,
    };
    judge(command, &analysis, &ctx)
}

/// A scratch project (a git repository with a few files) for the lines
/// that must be proven: git needs a repository to read the configuration
/// of, and the symlink checks a real directory.
fn scratch_project() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("home/dev");
    let project = root.join("app");
    std::fs::create_dir_all(project.join("src")).unwrap();
    std::fs::write(project.join("README.md"), "# app\n").unwrap();
    std::fs::write(project.join("src/main.rs"), "fn main() {}\n").unwrap();
    git(&project, &["init", "-q"]);
    dir
}

#[test]
fn every_inert_fixture_is_proven() {
    let scratch = scratch_project();
    let home = scratch.path().join("home/dev").display().to_string();
    let cwd = scratch.path().join("home/dev/app").display().to_string();
    let lines = fixtures::jsonl::<Line>("inert.jsonl");
    assert!(lines.len() >= 70, "inert.jsonl has {} lines", lines.len());
    let failed: Vec<String> = lines
        .iter()
        .filter_map(|(n, l)| {
            let command = l.command.as_deref().unwrap_or_default();
            assert_eq!((l.cwd.as_str(), l.home.as_str()), ("/srv/app", "/home/dev"));
            match verdict(command, &cwd, &home) {
                InertVerdict::Inert(_) => None,
                InertVerdict::NotProven(why) => {
                    Some(format!("inert.jsonl:{n}: `{command}`: {why}"))
                }
            }
        })
        .collect();
    assert!(failed.is_empty(), "not proven:\n{}", failed.join("\n"));
}

#[test]
fn no_look_alike_or_hard_deny_fixture_is_inert() {
    let files = [
        "not_inert.jsonl",
        "hard_deny.jsonl",
        "hard_deny_extra.jsonl",
        "hard_deny_redteam.jsonl",
        "hard_deny_peers.jsonl",
        "hard_deny_mechanisms.jsonl",
        "hard_deny_lookalikes.jsonl",
        "hard_deny_floor.jsonl",
    ];
    let mut checked = 0;
    let mut inert = Vec::new();
    for file in files {
        for (n, l) in fixtures::jsonl::<Line>(file) {
            let Some(command) = l.command else {
                continue;
            };
            checked += 1;
            if let InertVerdict::Inert(units) = verdict(&command, &l.cwd, &l.home) {
                inert.push(format!("{file}:{n}: `{command}`: {}", units.join("; ")));
            }
        }
    }
    assert!(checked >= 1_000, "only {checked} lines checked");
    assert!(inert.is_empty(), "called inert:\n{}", inert.join("\n"));
}

/// Runs `git` for the test's scratch repository (never the user's).
fn git(dir: &Path, args: &[&str]) {
    let status = std::process::Command::new("git")
        .args(args)
        .current_dir(dir)
        .env("HOME", dir)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .status()
        .expect("git runs");
    assert!(status.success(), "git {args:?}");
}

#[test]
fn git_is_inert_only_when_its_configuration_names_no_program() {
    let home = tempfile::tempdir().unwrap();
    let repo = home.path().join("repo");
    std::fs::create_dir_all(repo.join("vendor/x")).unwrap();
    git(&repo, &["init", "-q"]);
    let home_s = home.path().display().to_string();
    let repo_s = repo.display().to_string();
    assert!(matches!(
        verdict("git status", &repo_s, &home_s),
        InertVerdict::Inert(_)
    ));

    // A nested repository's own configuration applies to `cd vendor/x && git status`.
    let nested = repo.join("vendor/x");
    git(&nested, &["init", "-q"]);
    git(&nested, &["config", "core.fsmonitor", "./hook.sh"]);
    match verdict("git -C vendor/x status", &repo_s, &home_s) {
        InertVerdict::NotProven(why) => assert!(why.contains("core.fsmonitor"), "{why}"),
        InertVerdict::Inert(units) => panic!("inert: {units:?}"),
    }
    // After a `cd`, git is not proven at all (which repository applies is
    // left to the model until the analysis follows every `cd` exactly).
    assert!(matches!(
        verdict("cd vendor/x && git status", &repo_s, &home_s),
        InertVerdict::NotProven(_)
    ));
    assert!(matches!(
        verdict("git status", &repo_s, &home_s),
        InertVerdict::Inert(_)
    ));

    // The user's file too, and an include is never followed.
    std::fs::write(
        home.path().join(".gitconfig"),
        "[include]\n\tpath = other\n",
    )
    .unwrap();
    assert!(matches!(
        verdict("git log -1", &repo_s, &home_s),
        InertVerdict::NotProven(_)
    ));
    std::fs::write(
        home.path().join(".gitconfig"),
        "[diff \"pdf\"]\n\ttextconv = x\n",
    )
    .unwrap();
    assert!(matches!(
        verdict("git diff", &repo_s, &home_s),
        InertVerdict::NotProven(_)
    ));
}

#[test]
fn a_symlink_to_a_secret_is_not_read() {
    let home = tempfile::tempdir().unwrap();
    let project = home.path().join("app");
    std::fs::create_dir_all(project.join("docs")).unwrap();
    std::fs::create_dir_all(home.path().join(".aws")).unwrap();
    std::fs::write(home.path().join(".aws/credentials"), "[default]\n").unwrap();
    std::os::unix::fs::symlink(
        home.path().join(".aws/credentials"),
        project.join("docs/setup.txt"),
    )
    .unwrap();
    std::fs::write(project.join("docs/readme.txt"), "hello\n").unwrap();
    let (cwd, home_s) = (
        project.display().to_string(),
        home.path().display().to_string(),
    );
    assert!(matches!(
        verdict("cat docs/readme.txt", &cwd, &home_s),
        InertVerdict::Inert(_)
    ));
    assert!(matches!(
        verdict("cat docs/setup.txt", &cwd, &home_s),
        InertVerdict::NotProven(_)
    ));
    // Through a pattern as well: the matches are checked at decision time.
    assert!(matches!(
        verdict("cat docs/*.txt", &cwd, &home_s),
        InertVerdict::NotProven(_)
    ));
    std::fs::remove_file(project.join("docs/setup.txt")).unwrap();
    assert!(matches!(
        verdict("cat docs/*.txt", &cwd, &home_s),
        InertVerdict::Inert(_)
    ));
}

/// One command table (issue 42): every name the inert stage may call inert
/// has an entry in vouch-shell's spec table that says so, and the stage has
/// no table of its own. Every program on this machine's `PATH` and every
/// name of the table is tried alone and with a file operand.
#[test]
fn every_inert_capable_name_has_a_spec_entry() {
    use vouch::shell::spec::{self, Inert};
    let scratch = scratch_project();
    let home = scratch.path().join("home/dev").display().to_string();
    let cwd = scratch.path().join("home/dev/app").display().to_string();
    let mut names: std::collections::BTreeSet<String> = spec::all()
        .flat_map(|s| s.names.iter().map(|n| (*n).to_owned()))
        .collect();
    for dir in ["/usr/bin", "/bin", "/usr/local/bin", "/usr/sbin"] {
        if let Ok(entries) = std::fs::read_dir(dir) {
            for entry in entries.flatten() {
                let name = entry.file_name().to_string_lossy().into_owned();
                if name
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || "-_.+".contains(c))
                {
                    names.insert(name);
                }
            }
        }
    }
    let mut capable = 0;
    for name in &names {
        for command in [
            name.clone(),
            format!("{name} README.md"),
            format!("{name} -- ."),
        ] {
            if let InertVerdict::Inert(_) = verdict(&command, &cwd, &home) {
                let entry = spec::lookup(name);
                assert!(
                    entry.is_some_and(|s| s.inert != Inert::Never),
                    "`{command}` is inert, but `{name}` has no inert-capable spec entry"
                );
                capable += 1;
            }
        }
    }
    assert!(
        capable > 50,
        "only {capable} inert commands among {} names",
        names.len()
    );
    // No second table: the stage's sources hold no option spec of their own.
    for (file, text) in [
        ("mod.rs", include_str!("../src/policy/inert/mod.rs")),
        ("derive.rs", include_str!("../src/policy/inert/derive.rs")),
        ("git.rs", include_str!("../src/policy/inert/git.rs")),
        ("scripts.rs", include_str!("../src/policy/inert/scripts.rs")),
    ] {
        for needle in [
            "OptionSpec {",
            "LongOpt",
            "HasArg",
            "long(\"",
            "const SHELLS",
            "FIND_SAFE",
        ] {
            assert!(
                !text.contains(needle),
                "src/policy/inert/{file} holds `{needle}`: command knowledge belongs in vouch-shell's spec"
            );
        }
    }
    assert!(
        !std::path::Path::new(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/src/policy/inert/table.rs"
        ))
        .exists(),
        "src/policy/inert/table.rs is a second command table"
    );
}

/// A project with secrets beside its code, as agents' projects hold them:
/// hidden `.env` files, ignored Terraform state and keys, a deny-path-like
/// directory of vouch's own.
fn secret_project(setup: &str) -> (tempfile::TempDir, String, String) {
    let home = tempfile::tempdir().unwrap();
    let project = home.path().join("proj");
    std::fs::create_dir_all(project.join("src")).unwrap();
    std::fs::create_dir_all(project.join("deploy")).unwrap();
    std::fs::create_dir_all(project.join("config")).unwrap();
    let files: &[(&str, &str)] = &[
        ("src/main.rs", "fn main() {} // TODO\n"),
        ("README.md", "# proj TODO\n"),
        (".env", "API_KEY=FAKESECRET_env TODO\n"),
        ("config/.env", "TOKEN=FAKESECRET_config TODO\n"),
        (
            "terraform.tfstate",
            "{\"password\":\"FAKESECRET_tf TODO\"}\n",
        ),
        (
            "deploy/id_rsa",
            "-----BEGIN RSA PRIVATE KEY-----\nFAKESECRET_key TODO\n",
        ),
        (".gitignore", ".env\nconfig/.env\n*.tfstate\ndeploy/\n"),
    ];
    for (path, text) in files {
        std::fs::write(project.join(path), text).unwrap();
    }
    git(&project, &["init", "-q"]);
    let status = std::process::Command::new("bash")
        .args(["-c", setup])
        .current_dir(&project)
        .status()
        .unwrap();
    assert!(status.success(), "setup `{setup}`");
    let (cwd, home_s) = (
        project.display().to_string(),
        home.path().display().to_string(),
    );
    (home, cwd, home_s)
}

/// `(setup, command, judged inert)`.
const TREE_CASES: &[(&str, &str, bool)] = &[
    ("", "rg TODO", true),
    ("", "rg -l TODO", true),
    ("", "rg --files", true),
    ("", "rg -c TODO -g '*.rs'", true),
    ("", "rg -t rust TODO", true),
    ("", "grep -rn TODO --include='*.rs' .", true),
    (
        "",
        "grep -rn TODO --include='*.rs' --exclude='*.env' .",
        true,
    ),
    ("", "grep -rn TODO --exclude='*.rs' .", false),
    ("", "grep -rn TODO .", false),
    (
        "",
        "grep -rn TODO --include='*.rs' --include='.env' .",
        false,
    ),
    ("", "grep -rn TODO --include='[.]env' .", false),
    // A whitelist makes ripgrep read a hidden or ignored file.
    ("echo '!.env' >> .gitignore", "rg TODO", false),
    ("echo '!*.tfstate' > .ignore", "rg TODO", false),
    ("echo '!.env' > .rgignore", "rg TODO", false),
    (
        "mkdir -p .git/info && echo '!*.tfstate' >> .git/info/exclude",
        "rg TODO",
        false,
    ),
    ("echo '!.env' > ../.ignore", "rg TODO", false),
    (
        "mkdir -p ../.config/git && echo '!.env' > ../.config/git/ignore",
        "rg TODO",
        false,
    ),
    (
        "printf '[core]\\n\\texcludesFile = /tmp/x\\n' > ../.gitconfig",
        "rg TODO",
        false,
    ),
    ("", "rg TODO -g '.env'", false),
    ("", "rg TODO -g 'config/.env'", false),
    ("", "rg TODO --iglob '.ENV'", false),
    ("", "rg TODO --glob-case-insensitive -g '.ENV'", false),
    (
        "echo 'X=FAKESECRET_sh TODO' > .env.sh",
        "rg TODO -t sh",
        false,
    ),
    // No rule ignores it any more: it is read.
    ("printf '.env\\n' > .gitignore", "rg TODO", false),
    // A nested repository's files obey its own ignore files only.
    (
        "mkdir -p sub && git init -q sub && cp terraform.tfstate sub/",
        "rg TODO",
        false,
    ),
    (
        "mkdir -p sub/in && git init -q sub && cp terraform.tfstate sub/in/ && echo '*.tfstate' > sub/.gitignore",
        "rg TODO",
        true,
    ),
    // Outside a repository ripgrep does not read `.gitignore`.
    ("rm -rf .git", "rg TODO", false),
    (
        "rm -rf .git && printf '*.tfstate\\ndeploy/\\n' > .ignore",
        "rg TODO",
        true,
    ),
    // Paths a `find` printed, read by what `-exec` or `xargs` runs: a
    // search of find's roots, narrowed by its `-name` globs when its
    // expression only joins tests with "and".
    ("", "find src -name '*.rs' | xargs grep -l TODO", true),
    (
        "",
        "find . -name '*.rs' -print0 | xargs -0 grep -n TODO",
        true,
    ),
    ("", "find . -name '*.rs' -exec grep -l TODO {} \\;", true),
    (
        "",
        "find . -type f -name '*.rs' -exec grep -n TODO {} +",
        true,
    ),
    ("", "find . -type f | xargs grep -l TODO", false),
    ("", "find . -exec grep -l TODO {} +", false),
    (
        "",
        "find . -name '*.rs' -o -name .env | xargs grep TODO",
        false,
    ),
    ("", "find . -iname '*.RS' | xargs grep TODO", false),
    // `xargs` splits `src/a .env` into `src/a` and `.env`.
    ("touch 'src/a .env'", "find src | xargs grep TODO", false),
    (
        "touch 'src/a .env'",
        "find src -print0 | xargs -0 grep TODO",
        true,
    ),
    ("", "find src -print0 | xargs grep TODO", false),
    // A linked directory is searched where it points.
    (
        "mkdir -p ../out && ln -s ../../out src/lib",
        "grep -Rn TODO --include='*.rs' src",
        false,
    ),
    // Found by the second red team (issue 42): rg stops reading an ignore
    // file at a line that is not UTF-8, and its versions read classes
    // differently: such a file is not followed.
    (
        "printf '# caf\\xe9\\n*.tfstate\\ndeploy/\\n' > .gitignore",
        "rg TODO",
        false,
    ),
    (
        "printf '*.tfstat[[:alpha:]]\\ndeploy/\\n.env\\n' > .gitignore",
        "rg TODO",
        false,
    ),
    // An action before `-name` acts on every path.
    ("", "find . -print -name '*.rs' | xargs cat", false),
    (
        "",
        "find . -type f -print0 -name '*.rs' | xargs -0 cat",
        false,
    ),
    // A directory `-name` matched, searched whole by `grep -r`.
    ("", "find . -name deploy | xargs grep -r TODO", false),
    (
        "",
        "find . -maxdepth 1 -name config -exec grep -r TODO {} +",
        false,
    ),
    // find's starting point split by xargs.
    (
        "mkdir -p 'src/a .env'",
        "find 'src/a .env' | xargs cat",
        false,
    ),
    // find's error messages among the paths.
    (
        "ln -s .env such",
        "find src nonexist 2>&1 | xargs cat",
        false,
    ),
    ("ln -s .env such", "find src nonexist |& xargs cat", false),
    ("", "find src nonexist 2>/dev/null | xargs cat", true),
    (
        "ln -s .env such",
        "find src nonexist 2>&1 >/dev/null | xargs cat",
        false,
    ),
    // A file with a second name inside the tree.
    ("ln .env src/notes.txt", "grep -r TODO src", false),
    (
        "ln .env src/notes.rs",
        "find src -name '*.rs' | xargs cat",
        false,
    ),
    ("ln .env src/notes.rs", "rg TODO src", false),
];

/// A tree search is judged by what the program itself reads (issue 42):
/// `rg` skips hidden and ignored entries unless a rule whitelists one,
/// `grep -r` reads everything its `--include`/`--exclude` leave in. Each
/// case is also run for real: a search judged inert prints no secret.
#[test]
fn a_tree_search_reads_what_the_program_reads() {
    let real = |program: &str| {
        std::process::Command::new(program)
            .arg("--version")
            .output()
            .is_ok_and(|o| o.status.success())
    };
    assert!(
        real("rg") && real("grep"),
        "ripgrep and GNU grep are needed (.ci/run installs them)"
    );
    for (setup, command, inert) in TREE_CASES {
        let (_home, cwd, home) = secret_project(setup);
        let got = verdict(command, &cwd, &home);
        assert_eq!(
            matches!(got, InertVerdict::Inert(_)),
            *inert,
            "`{setup}` then `{command}`: {got:?}"
        );
        let out = std::process::Command::new("bash")
            .args(["-c", command])
            .current_dir(&cwd)
            .env("HOME", &home)
            .env_remove("RIPGREP_CONFIG_PATH")
            .env_remove("XDG_CONFIG_HOME")
            .output()
            .unwrap();
        let printed = [out.stdout, out.stderr].concat();
        let leaked = printed.windows(10).any(|w| w == b"FAKESECRET");
        if *inert {
            assert!(
                !leaked,
                "`{setup}` then `{command}` is judged inert and printed a secret"
            );
        }
    }
}
