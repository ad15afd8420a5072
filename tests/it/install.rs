//! `vouch install`, `vouch uninstall` and `vouch doctor` as a user runs
//! them: the real binary, `HOME` and `VOUCH_HOME` in temp dirs, the
//! harness's settings file read back byte for byte.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use serde::Deserialize;
use serde_json::Value;

use crate::support::fixtures;
use vouch::hooks::HarnessId;

/// The variables that move a harness's settings: cleared, so the real
/// environment never leaks in.
const HARNESS_VARS: &[&str] = &[
    "CLAUDE_CONFIG_DIR",
    "CODEX_HOME",
    "GEMINI_CLI_HOME",
    "QWEN_HOME",
    "COPILOT_HOME",
    "XDG_CONFIG_HOME",
    "XDG_STATE_HOME",
    "VOUCH_ADAPTER_TOKEN",
];

struct Env {
    _dir: tempfile::TempDir,
    home: PathBuf,
    vouch_home: PathBuf,
}

struct Out {
    code: i32,
    stdout: String,
    stderr: String,
}

impl Env {
    fn new() -> Env {
        let dir = tempfile::tempdir().unwrap();
        let home = dir.path().join("home");
        let vouch_home = dir.path().join("vouch");
        std::fs::create_dir_all(&home).unwrap();
        std::fs::create_dir_all(&vouch_home).unwrap();
        Env {
            _dir: dir,
            home,
            vouch_home,
        }
    }

    fn vouch(&self, args: &[&str]) -> Out {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_vouch"));
        cmd.args(args)
            .env("HOME", &self.home)
            .env("VOUCH_HOME", &self.vouch_home)
            .env_remove("RUST_LOG")
            .stdin(Stdio::null());
        for var in HARNESS_VARS {
            cmd.env_remove(var);
        }
        let out = cmd.output().unwrap();
        Out {
            code: out.status.code().unwrap(),
            stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        }
    }

    /// The settings file of `harness` under this HOME.
    fn settings(&self, harness: &str) -> PathBuf {
        let spec = HarnessId::named(harness)
            .unwrap()
            .harness()
            .install()
            .unwrap();
        let home = self.home.display().to_string();
        spec.path(&|name| (name == "HOME").then(|| home.clone()))
            .unwrap()
    }

    fn write(&self, harness: &str, text: &str) -> PathBuf {
        let path = self.settings(harness);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, text).unwrap();
        path
    }
}

/// A settings file per harness with something of the user's own in it.
fn existing(harness: &str) -> Option<&'static str> {
    Some(match harness {
        "claude-code" => {
            "{\n  \"model\": \"opus\",\n  \"hooks\": {\n    \"PreToolUse\": [\n      {\n        \"matcher\": \"Bash\",\n        \"hooks\": [\n          {\n            \"type\": \"command\",\n            \"command\": \"/usr/local/bin/my-audit\"\n          }\n        ]\n      }\n    ]\n  }\n}\n"
        }
        "codex" => {
            "# my Codex\nmodel = \"gpt-5\"\n\n[[hooks.PreToolUse]]\n[[hooks.PreToolUse.hooks]]\ntype = \"command\"\ncommand = \"/usr/local/bin/my-audit\"\n\n[hooks.state.\"PATH:pre_tool_use:0:0\"]\ntrusted_hash = \"sha256:mine\"\n"
        }
        "gemini" | "qwen" => {
            "{\n    \"general\": {\"vimMode\": true},\n    \"hooks\": {\n        \"BeforeTool\": [{\"matcher\": \"\", \"hooks\": [{\"name\": \"mine\", \"type\": \"command\", \"command\": \"/usr/local/bin/my-audit\"}]}]\n    }\n}\n"
        }
        "cursor" | "copilot" => {
            "{\n  \"version\": 1,\n  \"hooks\": {\n    \"preToolUse\": [\n      {\n        \"command\": \"/usr/local/bin/my-audit\",\n        \"bash\": \"/usr/local/bin/my-audit\"\n      }\n    ]\n  }\n}\n"
        }
        _ => return None,
    })
}

fn harnesses() -> Vec<&'static str> {
    HarnessId::all()
        .filter(|h| h.harness().install().is_some())
        .map(HarnessId::as_str)
        .collect()
}

#[test]
fn every_harness_installs_keeping_the_rest_once_and_uninstalls_to_the_same_bytes() {
    for harness in harnesses() {
        let env = Env::new();
        let text = existing(harness)
            .map(|t| t.replace("PATH", &env.settings(harness).display().to_string()));
        let path = match &text {
            Some(t) => env.write(harness, t),
            None => env.settings(harness),
        };
        let before = std::fs::read(&path).ok();
        let out = env.vouch(&["install", harness]);
        assert_eq!(out.code, 0, "{harness}: {}", out.stderr);
        let installed = std::fs::read_to_string(&path).unwrap();
        if let Some(t) = &text {
            assert!(
                installed.contains("/usr/local/bin/my-audit"),
                "{harness}: the user's hook went: {installed}"
            );
            if harness == "claude-code" {
                assert!(installed.contains("\"model\": \"opus\""), "{installed}");
            }
            assert_ne!(&installed, t);
        }
        let id = HarnessId::named(harness).unwrap();
        let once = vouch::install::count_entries(id, &installed).unwrap();
        assert!(once >= 1, "{harness}: no vouch entry: {installed}");
        // Twice: the same bytes, the same entries.
        let out = env.vouch(&["install", harness]);
        assert_eq!(out.code, 0, "{harness}: {}", out.stderr);
        assert!(
            out.stderr.contains("nothing written"),
            "{harness}: {}",
            out.stderr
        );
        let twice = std::fs::read_to_string(&path).unwrap();
        assert_eq!(
            twice, installed,
            "{harness}: a second install changed the file"
        );
        assert_eq!(vouch::install::count_entries(id, &twice).unwrap(), once);
        let out = env.vouch(&["uninstall", harness]);
        assert_eq!(out.code, 0, "{harness}: {}", out.stderr);
        assert_eq!(
            std::fs::read(&path).ok(),
            before,
            "{harness}: uninstall did not give the file back"
        );
    }
}

#[test]
fn an_invalid_configuration_or_a_dry_run_writes_nothing() {
    for harness in harnesses() {
        let env = Env::new();
        let path = env.write(
            harness,
            &existing(harness)
                .unwrap_or("// a plugin of the user's\n")
                .replace("PATH", "/x"),
        );
        let before = std::fs::read(&path).unwrap();
        std::fs::write(
            env.vouch_home.join("config.toml"),
            "[reviewer]\nprovider = \"nobody\"\n",
        )
        .unwrap();
        let out = env.vouch(&["install", harness]);
        assert_eq!(out.code, 2, "{harness}: {}", out.stderr);
        assert!(
            out.stderr.contains("config.toml"),
            "{harness}: {}",
            out.stderr
        );
        assert!(out.stderr.contains("nothing was written"), "{}", out.stderr);
        assert_eq!(std::fs::read(&path).unwrap(), before, "{harness}");
        std::fs::remove_file(env.vouch_home.join("config.toml")).unwrap();
        let out = env.vouch(&["install", harness, "--dry-run"]);
        if harness == "opencode" {
            // Another file is in vouch's place: refused, never replaced.
            assert_eq!(out.code, 2, "{}", out.stderr);
            assert!(out.stderr.contains("not vouch's"), "{}", out.stderr);
        } else {
            assert_eq!(out.code, 0, "{harness}: {}", out.stderr);
            assert!(
                out.stdout.contains("+"),
                "{harness}: no diff: {}",
                out.stdout
            );
        }
        assert_eq!(std::fs::read(&path).unwrap(), before, "{harness}");
        assert!(
            !env.vouch_home
                .join("installed")
                .join(format!("{harness}.json"))
                .exists()
        );
    }
}

#[test]
fn broken_settings_are_refused_naming_the_file_and_never_overwritten() {
    for (harness, garbage) in [
        ("claude-code", "{\"hooks\": {"),
        ("gemini", "{\n  // a comment\n  \"a\": 1\n}\n"),
        ("codex", "[hooks\nx = "),
        ("qwen", "{\"a\": 1, \"a\": 2}"),
        ("claude-code", "{\"hooks\": []}"),
        ("copilot", "[1, 2]"),
    ] {
        let env = Env::new();
        let path = env.write(harness, garbage);
        let out = env.vouch(&["install", harness]);
        assert_eq!(out.code, 2, "{harness} {garbage:?}: {}", out.stderr);
        assert!(
            out.stderr.contains(&path.display().to_string()),
            "{harness}: the error does not name the file: {}",
            out.stderr
        );
        assert_eq!(std::fs::read_to_string(&path).unwrap(), garbage);
        let out = env.vouch(&["uninstall", harness]);
        assert_eq!(
            std::fs::read_to_string(&path).unwrap(),
            garbage,
            "{}",
            out.stderr
        );
    }
}

#[test]
fn switches_that_turn_every_hook_off_are_refused() {
    for (harness, text, key) in [
        (
            "claude-code",
            "{\"disableAllHooks\": true}",
            "disableAllHooks",
        ),
        ("qwen", "{\"disableAllHooks\": true}", "disableAllHooks"),
        (
            "gemini",
            "{\"hooksConfig\": {\"enabled\": false}}",
            "hooksConfig.enabled",
        ),
    ] {
        let env = Env::new();
        let path = env.write(harness, text);
        let out = env.vouch(&["install", harness]);
        assert_eq!(out.code, 2, "{harness}: {}", out.stderr);
        assert!(out.stderr.contains(key), "{harness}: {}", out.stderr);
        assert_eq!(std::fs::read_to_string(&path).unwrap(), text);
    }
}

#[test]
fn permissions_are_kept_and_new_files_are_private() {
    let env = Env::new();
    let path = env.write("claude-code", "{}\n");
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o640)).unwrap();
    assert_eq!(env.vouch(&["install", "claude-code"]).code, 0);
    let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o7777;
    assert_eq!(mode, 0o640);
    let out = env.vouch(&["install", "cursor"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let mode = std::fs::metadata(env.settings("cursor"))
        .unwrap()
        .permissions()
        .mode()
        & 0o7777;
    assert_eq!(mode, 0o600);
    // No temporary file is left beside the settings.
    let names: Vec<_> = std::fs::read_dir(path.parent().unwrap())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names, ["settings.json"]);
}

#[test]
fn a_linked_settings_file_is_written_through_its_link() {
    let env = Env::new();
    let dotfiles = env.home.join("dotfiles");
    std::fs::create_dir_all(&dotfiles).unwrap();
    let real = dotfiles.join("claude.json");
    std::fs::write(&real, "{\"model\": \"opus\"}\n").unwrap();
    let link = env.settings("claude-code");
    std::fs::create_dir_all(link.parent().unwrap()).unwrap();
    std::os::unix::fs::symlink(&real, &link).unwrap();
    let out = env.vouch(&["install", "claude-code"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(out.stderr.contains("a link to"), "{}", out.stderr);
    assert!(
        std::fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink()
    );
    assert!(
        std::fs::read_to_string(&real)
            .unwrap()
            .contains("hook claude-code")
    );
    assert_eq!(env.vouch(&["uninstall", "claude-code"]).code, 0);
    assert!(
        std::fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink()
    );
    assert_eq!(
        std::fs::read_to_string(&real).unwrap(),
        "{\"model\": \"opus\"}\n"
    );
    // A link to nowhere is refused.
    std::fs::remove_file(&link).unwrap();
    std::os::unix::fs::symlink(dotfiles.join("absent.json"), &link).unwrap();
    let out = env.vouch(&["install", "claude-code"]);
    assert_eq!(out.code, 2, "{}", out.stderr);
    assert!(!dotfiles.join("absent.json").exists());
}

#[test]
fn qwen_folder_trust_is_turned_on_and_back() {
    let env = Env::new();
    let text = "{\"security\": {\"folderTrust\": {\"enabled\": false}}}";
    let path = env.write("qwen", text);
    let out = env.vouch(&["install", "qwen"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(out.stderr.contains("folderTrust"), "{}", out.stderr);
    let v: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    assert_eq!(v["security"]["folderTrust"]["enabled"], true);
    assert_eq!(env.vouch(&["uninstall", "qwen"]).code, 0);
    assert_eq!(std::fs::read_to_string(&path).unwrap(), text);
}

#[test]
fn codex_keeps_the_users_hooks_trusted() {
    let env = Env::new();
    let path = env.settings("codex");
    let text = existing("codex")
        .unwrap()
        .replace("PATH", &path.display().to_string());
    env.write("codex", &text);
    assert_eq!(env.vouch(&["install", "codex"]).code, 0);
    let installed: toml::Table = std::fs::read_to_string(&path).unwrap().parse().unwrap();
    let state = installed["hooks"]["state"].as_table().unwrap();
    let key = |event: &str, group: usize| format!("{}:{event}:{group}:0", path.display());
    assert_eq!(
        state[&key("pre_tool_use", 0)]["trusted_hash"].as_str(),
        Some("sha256:mine")
    );
    // vouch's group is the second of PreToolUse, the first of the others.
    assert!(state.contains_key(&key("pre_tool_use", 1)));
    assert!(state.contains_key(&key("post_tool_use", 0)));
}

#[derive(Deserialize)]
struct Expected {
    repo: String,
    findings: Vec<ExpectedFinding>,
}

#[derive(Deserialize, PartialEq, Eq, Debug, PartialOrd, Ord)]
struct ExpectedFinding {
    file: String,
    kind: String,
}

#[test]
fn doctor_flags_every_fixture_repository_and_passes_the_clean_one() {
    for (line, case) in fixtures::jsonl::<Expected>("doctor/expected.jsonl") {
        let env = Env::new();
        let dir = fixtures::path("doctor").join(&case.repo);
        let out = env.vouch(&["doctor", dir.to_str().unwrap(), "--format", "json"]);
        let report: Value = serde_json::from_str(&out.stdout)
            .unwrap_or_else(|e| panic!("line {line}: {e}: {}", out.stdout));
        let mut got: Vec<ExpectedFinding> = report["repository"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| ExpectedFinding {
                file: f["file"].as_str().unwrap().to_owned(),
                kind: f["kind"].as_str().unwrap().to_owned(),
            })
            .collect();
        for f in report["repository"].as_array().unwrap() {
            assert!(!f["what"].as_str().unwrap().is_empty());
            assert!(!f["fix"].as_str().unwrap().is_empty());
        }
        let mut want = case.findings;
        got.sort();
        want.sort();
        assert_eq!(got, want, "line {line}: {}", case.repo);
        let code = i32::from(!want.is_empty());
        assert_eq!(out.code, code, "line {line}: {}", out.stderr);
        let text = env.vouch(&["doctor", dir.to_str().unwrap()]);
        assert_eq!(text.code, code);
        for f in &want {
            assert!(text.stdout.contains(&f.file), "{}", text.stdout);
        }
    }
}

#[test]
fn doctor_reads_hostile_repositories_without_trusting_them() {
    let env = Env::new();
    let repo = env.home.join("repo");
    let outside = env.home.join("outside.json");
    std::fs::write(&outside, "{\"disableAllHooks\": false}").unwrap();
    std::fs::create_dir_all(repo.join(".claude")).unwrap();
    std::os::unix::fs::symlink(&outside, repo.join(".claude/settings.json")).unwrap();
    std::fs::create_dir_all(repo.join(".qwen")).unwrap();
    let fifo = repo.join(".qwen/settings.json");
    assert!(
        Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap()
            .success()
    );
    std::fs::create_dir_all(repo.join(".gemini")).unwrap();
    std::fs::write(
        repo.join(".gemini/settings.json"),
        format!("{}{}", "[".repeat(100_000), "]".repeat(100_000)),
    )
    .unwrap();
    std::fs::create_dir_all(repo.join(".cursor")).unwrap();
    std::fs::write(repo.join(".cursor/hooks.json"), [0xff, 0xfe, 0x00, 0x7b]).unwrap();
    std::fs::create_dir_all(repo.join(".github/copilot")).unwrap();
    std::fs::write(
        repo.join(".github/copilot/settings.json"),
        vec![b' '; 2 * 1024 * 1024],
    )
    .unwrap();
    std::os::unix::fs::symlink("/", repo.join(".opencode")).unwrap();
    let out = env.vouch(&["doctor", repo.to_str().unwrap(), "--format", "json"]);
    assert_eq!(out.code, 1, "{}", out.stderr);
    let report: Value = serde_json::from_str(&out.stdout).unwrap();
    let files: Vec<(String, String)> = report["repository"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            (
                f["file"].as_str().unwrap().to_owned(),
                f["kind"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    for file in [
        ".claude/settings.json",
        ".qwen/settings.json",
        ".gemini/settings.json",
        ".cursor/hooks.json",
        ".github/copilot/settings.json",
        ".opencode",
    ] {
        assert!(
            files.contains(&(file.to_owned(), "unchecked".to_owned())),
            "{file}: {files:?}"
        );
    }
}

#[test]
fn doctor_reports_which_harnesses_are_guarded() {
    let env = Env::new();
    // Qwen Code found but not guarded; Claude Code guarded.
    std::fs::create_dir_all(env.home.join(".qwen")).unwrap();
    assert_eq!(env.vouch(&["install", "claude-code"]).code, 0);
    let clean = fixtures::path("doctor/clean");
    let out = env.vouch(&["doctor", clean.to_str().unwrap(), "--format", "json"]);
    assert_eq!(out.code, 1, "{}", out.stdout);
    let report: Value = serde_json::from_str(&out.stdout).unwrap();
    let status = |name: &str| {
        report["harnesses"]
            .as_array()
            .unwrap()
            .iter()
            .find(|h| h["harness"] == name)
            .unwrap()
            .clone()
    };
    let claude = status("claude-code");
    assert_eq!(claude["installed"], true);
    assert_eq!(claude["problems"], serde_json::json!([]));
    assert!(
        claude["ok"].to_string().contains("provider = \\\"none\\\""),
        "{claude}"
    );
    assert_eq!(status("qwen")["installed"], false);
    assert_eq!(status("codex")["found"], false);
    // Installed into Qwen too: the clean repository passes.
    assert_eq!(env.vouch(&["install", "qwen"]).code, 0);
    let out = env.vouch(&["doctor", clean.to_str().unwrap()]);
    assert_eq!(out.code, 0, "{}", out.stdout);
    // The binary the hook names is gone: a problem.
    let settings = env.settings("claude-code");
    let text = std::fs::read_to_string(&settings).unwrap();
    std::fs::write(
        &settings,
        text.replace(env!("CARGO_BIN_EXE_vouch"), "/nonexistent/vouch"),
    )
    .unwrap();
    let out = env.vouch(&["doctor", clean.to_str().unwrap()]);
    assert_eq!(out.code, 1);
    assert!(out.stdout.contains("/nonexistent/vouch"), "{}", out.stdout);
    let _ = Path::new("");
}
