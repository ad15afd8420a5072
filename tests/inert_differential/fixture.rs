//! The fixture home the inert harness copies for every run, and the tree
//! snapshot that says whether a run changed it.
//!
//! `home/dev` holds the project (`project/`, a git repository with a
//! commit), a fake secret (`.env`, `~/.aws/credentials` and a project
//! symlink to it), files named like options (`--pre=sh`, `-o`, `-rf`),
//! vouch's own directories, and repositories whose git configuration names
//! a program that leaves a trace when it runs: `project/vendor/x`
//! (`core.fsmonitor`), `textconv` (a `.gitattributes` driver with
//! `diff.x.textconv`) and `extdiff` (`diff.external`).

use std::collections::BTreeMap;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::process::Command;

use sha2::{Digest, Sha256};

/// Files whose appearance means a program named by git's configuration ran.
pub const TRACES: &[&str] = &[
    "FSMONITOR_RAN",
    "TEXTCONV_RAN",
    "EXTDIFF_RAN",
    "PRE_RAN",
    "HOOK_RAN",
    "RAN",
];

/// The one change an inert command may make (docs/inert.md): git's stat
/// cache, `.git/index`, refreshed by `git status` and a worktree `git diff`.
pub fn is_exempt(relative: &str) -> bool {
    relative == ".git/index" || relative.ends_with("/.git/index")
}

/// Writes the fixture under `root` (its `home/dev`); `root` must not exist.
pub fn build(root: &Path) -> std::io::Result<()> {
    let home = root.join("home/dev");
    let project = home.join("project");
    let files: &[(&str, &str)] = &[
        (
            "project/README.md",
            "# app\n\nA small fixture project. TODO: more\n",
        ),
        (
            "project/src/main.rs",
            "fn main() {\n    println!(\"hello\"); // TODO\n}\n",
        ),
        (
            "project/src/lib.rs",
            "pub fn add(a: i32, b: i32) -> i32 {\n    a + b\n}\n",
        ),
        ("project/docs/guide.md", "# Guide\n\nfoo bar\nbaz foo\n"),
        (
            "project/Cargo.toml",
            "[package]\nname = \"app\"\nversion = \"0.1.0\"\n",
        ),
        (
            "project/data.json",
            "{\"name\": \"app\", \"items\": [1, 2, 3]}\n",
        ),
        ("project/notes.txt", "b\na\nb\nc\n"),
        ("project/.env", "API_TOKEN=sk-fake-VOUCHSECRET-dotenv\n"),
        (
            "project/terraform.tfstate",
            "{\"resources\": [{\"password\": \"VOUCHSECRET-tfstate\"}]}\n",
        ),
        ("project/--files0-from=.env", "option-like file\n"),
        ("project/--output=out.txt", "option-like file\n"),
        ("project/opts", "--print-file-name ../.aws/credentials\n"),
        (".bashrc", "export TOKEN=VOUCHSECRET-bashrc\n"),
        ("project/--pre=sh", "#!/bin/sh\ntouch PRE_RAN\n"),
        ("project/-o", "option-like file\n"),
        ("project/-rf", "option-like file\n"),
        (
            ".aws/credentials",
            "[default]\naws_secret_access_key = VOUCHSECRET-aws\n",
        ),
        (
            ".gitconfig",
            "[user]\n\tname = Dev\n\temail = dev@example.com\n",
        ),
        (".config/vouch/config.toml", "# vouch's own configuration\n"),
        (".local/state/vouch/audit.log", "vouch's own state\n"),
        ("textconv/notes.txt", "one\n"),
        ("textconv/.gitattributes", "*.txt diff=x\n"),
        ("extdiff/notes.txt", "one\n"),
        ("project/vendor/x/lib.txt", "vendored\n"),
    ];
    for (path, text) in files {
        let path = home.join(path);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent)?;
        }
        std::fs::write(&path, text)?;
    }
    std::fs::set_permissions(
        project.join("--pre=sh"),
        std::fs::Permissions::from_mode(0o755),
    )?;
    std::os::unix::fs::symlink("../../.aws/credentials", project.join("docs/setup.txt"))?;
    // `sub/..` is the home, not the project: the kernel resolves the link
    // before the `..`.
    std::os::unix::fs::symlink("../.aws", project.join("sub"))?;

    repositories(&home)
}

/// The project's repository, and the three whose configuration names a
/// program.
fn repositories(home: &Path) -> std::io::Result<()> {
    let project = home.join("project");
    git(&project, &["init", "-q", "-b", "main"])?;
    git(
        &project,
        &[
            "add",
            "README.md",
            "src",
            "docs",
            "Cargo.toml",
            "data.json",
            "notes.txt",
        ],
    )?;
    git(&project, &["commit", "-q", "-m", "first"])?;
    // A worktree change, so `git diff` and `git status` have work to do.
    std::fs::write(project.join("notes.txt"), "b\na\nb\nc\nd\n")?;

    let vendor = project.join("vendor/x");
    git(&vendor, &["init", "-q", "-b", "main"])?;
    git(&vendor, &["add", "lib.txt"])?;
    git(&vendor, &["commit", "-q", "-m", "vendored"])?;
    git(
        &vendor,
        &["config", "core.fsmonitor", "touch FSMONITOR_RAN"],
    )?;

    let textconv = home.join("textconv");
    git(&textconv, &["init", "-q", "-b", "main"])?;
    git(&textconv, &["add", "."])?;
    git(&textconv, &["commit", "-q", "-m", "first"])?;
    git(
        &textconv,
        &["config", "diff.x.textconv", "touch TEXTCONV_RAN; cat"],
    )?;
    std::fs::write(textconv.join("notes.txt"), "two\n")?;

    let extdiff = home.join("extdiff");
    git(&extdiff, &["init", "-q", "-b", "main"])?;
    git(&extdiff, &["add", "."])?;
    git(&extdiff, &["commit", "-q", "-m", "first"])?;
    git(&extdiff, &["config", "diff.external", "touch EXTDIFF_RAN"])?;
    std::fs::write(extdiff.join("notes.txt"), "two\n")?;
    Ok(())
}

/// The planted variant's repositories (the fuzzer's, `fuzz::plant`): a
/// bare repository inside the project with a hook and an fsmonitor, a
/// partial clone whose promisor remote a `git show` of a missing object
/// fetches from, a configuration behind a byte-order mark, one whose
/// `[core]` follows a comment ending in a backslash, and a project remote
/// URL carrying a token.
pub fn extra_repositories(home: &Path) -> std::io::Result<()> {
    let project = home.join("project");
    git(
        &project,
        &[
            "config",
            "remote.origin.url",
            "https://dev:VOUCHSECRET-gittoken@example.invalid/app.git",
        ],
    )?;
    let bare = project.join("bare.git");
    std::fs::create_dir_all(&bare)?;
    git(&bare, &["init", "-q", "--bare", "-b", "main"])?;
    git(&bare, &["config", "core.fsmonitor", "touch FSMONITOR_RAN"])?;
    let hook = bare.join("hooks/post-index-change");
    std::fs::write(&hook, "#!/bin/sh\ntouch HOOK_RAN\n")?;
    std::fs::set_permissions(&hook, std::fs::Permissions::from_mode(0o755))?;

    let partial = home.join("partial");
    std::fs::create_dir_all(&partial)?;
    std::fs::write(partial.join("README.md"), "partial\n")?;
    git(&partial, &["init", "-q", "-b", "main"])?;
    git(&partial, &["add", "README.md"])?;
    git(&partial, &["commit", "-q", "-m", "first"])?;
    for (k, v) in [
        ("core.repositoryformatversion", "1"),
        ("extensions.partialClone", "origin"),
        ("remote.origin.promisor", "true"),
        ("remote.origin.url", "https://example.invalid/partial.git"),
    ] {
        git(&partial, &["config", k, v])?;
    }
    // The blob of README.md is gone: `git show HEAD:README.md` fetches it.
    let blob = Command::new("git")
        .args(["rev-parse", "HEAD:README.md"])
        .current_dir(&partial)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("HOME", &partial)
        .output()?;
    let blob = String::from_utf8_lossy(&blob.stdout).trim().to_owned();
    if let (Some(dir), Some(file)) = (blob.get(..2), blob.get(2..)) {
        let _ = std::fs::remove_file(partial.join(".git/objects").join(dir).join(file));
    }

    for (name, config) in [
        ("bom", "\u{feff}[core]\n\tfsmonitor = touch FSMONITOR_RAN\n"),
        (
            "comment",
            "[user]\n\tname = dev ; a comment \\\n[core]\n\tfsmonitor = touch FSMONITOR_RAN\n",
        ),
    ] {
        let repo = home.join(name);
        std::fs::create_dir_all(&repo)?;
        std::fs::write(repo.join("notes.txt"), "one\n")?;
        git(&repo, &["init", "-q", "-b", "main"])?;
        git(&repo, &["add", "."])?;
        git(&repo, &["commit", "-q", "-m", "first"])?;
        let path = repo.join(".git/config");
        let mut text = std::fs::read_to_string(&path)?;
        if let Some(rest) = config.strip_prefix('\u{feff}') {
            text = format!("\u{feff}{text}{rest}");
        } else {
            text.push_str(config);
        }
        std::fs::write(&path, text)?;
        std::fs::write(repo.join("notes.txt"), "two\n")?;
    }
    Ok(())
}

/// Runs the host's git for the fixture (never the user's configuration).
fn git(dir: &Path, args: &[&str]) -> std::io::Result<()> {
    let out = Command::new("git")
        .args(args)
        .current_dir(dir)
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", dir)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_AUTHOR_NAME", "Dev")
        .env("GIT_AUTHOR_EMAIL", "dev@example.com")
        .env("GIT_COMMITTER_NAME", "Dev")
        .env("GIT_COMMITTER_EMAIL", "dev@example.com")
        .env("GIT_AUTHOR_DATE", "2026-01-01T00:00:00Z")
        .env("GIT_COMMITTER_DATE", "2026-01-01T00:00:00Z")
        .output()?;
    if out.status.success() {
        Ok(())
    } else {
        Err(std::io::Error::other(format!(
            "git {args:?} in {}: {}",
            dir.display(),
            String::from_utf8_lossy(&out.stderr)
        )))
    }
}

/// Every entry of a tree: relative path to type, mode and content (a
/// file's SHA-256, a symlink's target). Modification times are left out:
/// reading changes access times, and only content and metadata that a
/// write changes matter.
pub type Snapshot = BTreeMap<String, String>;

/// The snapshot of everything under `root`.
pub fn snapshot(root: &Path) -> Snapshot {
    let mut out = Snapshot::new();
    walk(root, root, &mut out);
    out
}

fn walk(root: &Path, dir: &Path, out: &mut Snapshot) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        out.insert(relative(root, dir), "unreadable directory".to_owned());
        return;
    };
    let mut entries: Vec<PathBuf> = entries.flatten().map(|e| e.path()).collect();
    entries.sort();
    for path in entries {
        let rel = relative(root, &path);
        let Ok(meta) = std::fs::symlink_metadata(&path) else {
            out.insert(rel, "vanished".to_owned());
            continue;
        };
        let mode = meta.mode() & 0o7777;
        let kind = meta.file_type();
        let value = if kind.is_symlink() {
            let target = std::fs::read_link(&path).unwrap_or_default();
            format!("link -> {}", target.display())
        } else if kind.is_dir() {
            walk(root, &path, out);
            format!("dir {mode:o}")
        } else if kind.is_file() {
            let digest = std::fs::read(&path)
                .map(|bytes| hex(&Sha256::digest(&bytes)))
                .unwrap_or_else(|e| format!("unreadable: {e}"));
            format!("file {mode:o} {} {digest}", meta.len())
        } else {
            format!("special {mode:o}")
        };
        out.insert(rel, value);
    }
}

fn relative(root: &Path, path: &Path) -> String {
    path.strip_prefix(root)
        .unwrap_or(path)
        .display()
        .to_string()
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// The whole snapshot as one SHA-256 (the "tree hash" reported).
pub fn tree_hash(snapshot: &Snapshot) -> String {
    let mut hasher = Sha256::new();
    for (path, value) in snapshot {
        hasher.update(path.as_bytes());
        hasher.update([0]);
        hasher.update(value.as_bytes());
        hasher.update([0]);
    }
    hex(&hasher.finalize())
}

/// What changed between two snapshots, the exempt paths left out: one line
/// per added, removed or changed entry.
pub fn changes(before: &Snapshot, after: &Snapshot) -> Vec<String> {
    let mut out = Vec::new();
    for (path, old) in before {
        if is_exempt(path) {
            continue;
        }
        match after.get(path) {
            None => out.push(format!("removed {path} ({old})")),
            Some(new) if new != old => out.push(format!("changed {path}: {old} -> {new}")),
            Some(_) => {}
        }
    }
    for (path, new) in after {
        if !is_exempt(path) && !before.contains_key(path) {
            out.push(format!("added {path} ({new})"));
        }
    }
    out
}

/// A trace file anywhere in the snapshot.
pub fn traces(snapshot: &Snapshot) -> Vec<String> {
    snapshot
        .keys()
        .filter(|p| {
            let name = p.rsplit('/').next().unwrap_or(p);
            TRACES.contains(&name)
        })
        .cloned()
        .collect()
}
