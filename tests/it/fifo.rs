//! A FIFO where vouch reads a file of the agent's world never holds a
//! decision up: opening one for reading waits for a writer that never
//! comes, and the agent can make one of any file it names — the
//! repository's `.git/config`, the project's `.vouch/config.toml`, a file a
//! command reads, the transcript. Each run below would hang without
//! `paths::open_regular`; a watchdog kills it and fails the test instead.

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::support::spawn_with_stdin;

/// How long a run may take before it counts as hung (a decision without a
/// model takes milliseconds; this leaves room for a loaded machine).
const HUNG: Duration = Duration::from_secs(60);

fn mkfifo(path: &Path) {
    let made = Command::new("mkfifo").arg(path).status().unwrap();
    assert!(made.success(), "mkfifo {}", path.display());
}

/// Runs `vouch <args>` with `stdin`, killing it after [`HUNG`]: its stdout,
/// or a failure naming the hang.
fn vouch(args: &[&str], home: &Path, user: &Path, stdin: &[u8]) -> Value {
    let mut child = spawn_with_stdin(
        Command::new(env!("CARGO_BIN_EXE_vouch"))
            .args(args)
            .env_clear()
            .env("VOUCH_HOME", home)
            .env("HOME", user)
            .env("PATH", std::env::var_os("PATH").unwrap_or_default()),
        stdin,
    );
    let started = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if started.elapsed() > HUNG {
            child.kill().unwrap();
            panic!("`vouch {args:?}` hung on a FIFO");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let out = child.wait_with_output().unwrap();
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "`vouch {args:?}` printed no JSON ({e}): {}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    })
}

/// A scratch home, user home and git project.
fn scratch() -> (tempfile::TempDir, std::path::PathBuf, std::path::PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(dir.path()).unwrap();
    let (user, project) = (root.join("user"), root.join("project"));
    std::fs::create_dir_all(&user).unwrap();
    std::fs::create_dir_all(project.join(".git")).unwrap();
    std::fs::write(project.join("README.md"), "hi\n").unwrap();
    (dir, user, project)
}

fn review(home: &Path, user: &Path, project: &Path, command: &str) -> Value {
    let body = json!({"session_id": "s", "surface": "bash", "command": command, "cwd": project});
    vouch(&["review"], home, user, body.to_string().as_bytes())
}

#[test]
fn a_fifo_git_config_is_not_inert_and_does_not_hang() {
    let (dir, user, project) = scratch();
    mkfifo(&project.join(".git/config"));
    // What git would read cannot be read: not proven to only read (with
    // no reviewer configured, the harness's own rules then decide).
    for command in ["git status", "git log -1", "cat .git/config"] {
        let d = review(&dir.path().join("home"), &user, &project, command);
        assert_ne!(d["stage"].as_str(), Some("inert"), "`{command}`: {d}");
        assert!(d["decision"].is_string(), "`{command}`: {d}");
    }
    // `ls` reads no file's contents: still decided, and at once.
    let d = review(&dir.path().join("home"), &user, &project, "ls");
    assert!(d["decision"].is_string(), "{d}");
}

#[test]
fn a_fifo_project_configuration_fails_closed_without_hanging() {
    let (dir, user, project) = scratch();
    std::fs::create_dir_all(project.join(".vouch")).unwrap();
    mkfifo(&project.join(".vouch/config.toml"));
    let d = review(&dir.path().join("home"), &user, &project, "ls");
    assert_ne!(d["decision"].as_str(), Some("allow"), "{d}");
    assert!(
        d["rationale"]
            .as_str()
            .unwrap_or_default()
            .contains("not a regular file"),
        "{d}"
    );
}

#[test]
fn a_fifo_a_command_reads_does_not_hang() {
    let (dir, user, project) = scratch();
    mkfifo(&project.join("notes.txt"));
    let d = review(&dir.path().join("home"), &user, &project, "cat notes.txt");
    assert!(d["decision"].is_string(), "{d}");
}

#[test]
fn a_fifo_transcript_does_not_hang_the_hook() {
    let (dir, user, project) = scratch();
    let transcript = project.join("t.jsonl");
    mkfifo(&transcript);
    let input = json!({
        "session_id": "s", "transcript_path": transcript, "cwd": project,
        "hook_event_name": "PreToolUse", "tool_name": "Bash",
        "tool_input": {"command": "rm -rf /"}, "tool_use_id": "t1"
    });
    let reply = vouch(
        &["hook", "claude-code"],
        &dir.path().join("home"),
        &user,
        input.to_string().as_bytes(),
    );
    assert_eq!(
        reply["hookSpecificOutput"]["permissionDecision"].as_str(),
        Some("deny"),
        "{reply}"
    );
}
