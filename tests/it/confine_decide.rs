//! An inert allow runs confined (issue 42): the decision carries the
//! confined form only where the caller runs it and the files are this
//! machine's; every adapter that can rewrite a call answers with it; the
//! confined form, read by a real shell, runs exactly the original command;
//! a service never calls inert what it cannot see (a forwarded call, a
//! remote hook); a team's remote hook decides inert where the files are.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use proptest::prelude::*;
use serde_json::{Value, json};

use crate::support::fixtures;
use crate::support::serve::Running;

/// `vouch review` of `body` with `VOUCH_HOME=home`.
fn review(home: &Path, user: &Path, body: &Value) -> Value {
    let mut child = Command::new(env!("CARGO_BIN_EXE_vouch"))
        .arg("review")
        .env_clear()
        .env("VOUCH_HOME", home)
        .env("HOME", user)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(body.to_string().as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    serde_json::from_slice(&out.stdout).unwrap()
}

/// A user home and a git project in one scratch directory.
fn project() -> (tempfile::TempDir, PathBuf, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(dir.path()).unwrap();
    let (user, project) = (root.join("home"), root.join("project"));
    std::fs::create_dir_all(user.join(".aws")).unwrap();
    std::fs::create_dir_all(project.join(".git")).unwrap();
    std::fs::create_dir_all(project.join("docs")).unwrap();
    std::fs::write(user.join(".aws/credentials"), "aws_secret_access_key=X\n").unwrap();
    std::fs::write(project.join("README.md"), "hi\n").unwrap();
    std::os::unix::fs::symlink(
        user.join(".aws/credentials"),
        project.join("docs/setup.txt"),
    )
    .unwrap();
    (dir, user, project)
}

#[test]
fn an_inert_allow_carries_its_confined_form_only_for_a_caller_that_runs_it() {
    let (_dir, user, project) = project();
    let home = tempfile::tempdir().unwrap();
    let body = |can: bool| {
        json!({"session_id": "s", "surface": "bash", "command": "ls -la && cat README.md",
               "cwd": project, "can_run_confined": can})
    };
    let d = review(home.path(), &user, &body(true));
    assert_eq!(
        (d["decision"].as_str(), d["stage"].as_str()),
        (Some("allow"), Some("inert")),
        "{d}"
    );
    let argv: Vec<&str> = d["confined"]["argv"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    let exe = std::fs::canonicalize(env!("CARGO_BIN_EXE_vouch")).unwrap();
    assert_eq!(argv[0], exe.to_str().unwrap());
    assert_eq!(&argv[1..3], ["confine", "--home"]);
    assert_eq!(argv[3], home.path().to_str().unwrap());
    assert_eq!(argv[4], "--");
    assert_eq!(&argv[6..], ["-c", "ls -la && cat README.md"]);
    // The same request, from a caller that would run the command as it is:
    // not inert, on to routing (no model: the harness's rules decide).
    let d = review(home.path(), &user, &body(false));
    assert_eq!(d["stage"], "routing", "{d}");
    assert!(d.get("confined").is_none(), "{d}");
    // The hash does not depend on how the call is carried.
    assert_eq!(
        review(home.path(), &user, &body(true))["request_hash"],
        d["request_hash"]
    );
    // A remote hook's request: the service must not decide inert.
    let mut remote = body(true);
    remote["remote_hook"] = true.into();
    assert_eq!(review(home.path(), &user, &remote)["stage"], "routing");
}

#[test]
fn the_confined_form_runs_and_reads_what_the_command_reads() {
    let (_dir, user, project) = project();
    let home = tempfile::tempdir().unwrap();
    let body = json!({"session_id": "s", "surface": "bash", "command": "cat README.md; ls docs",
                      "cwd": project, "can_run_confined": true});
    let d = review(home.path(), &user, &body);
    let line = d["confined"]["command"].as_str().unwrap();
    let out = Command::new("/bin/bash")
        .args(["-c", line])
        .current_dir(&project)
        .env_clear()
        .env("HOME", &user)
        .env("PATH", "/usr/bin:/bin")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(String::from_utf8_lossy(&out.stdout), "hi\nsetup.txt\n");
}

/// Runs `line` in real bash with the program word replaced by `printf
/// '%s\0'`, and splits what it prints back into words.
fn words_bash_reads(line: &str) -> Vec<String> {
    let out = Command::new("/bin/bash")
        .args(["-c", &format!("printf '%s\\0' {line}")])
        .env_clear()
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let mut words: Vec<String> = out
        .stdout
        .split(|b| *b == 0)
        .map(|w| String::from_utf8(w.to_vec()).unwrap())
        .collect();
    words.pop();
    words
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// The confined form, parsed by bash, is exactly the argv the decision
    /// carries: vouch, `confine`, `--`, bash, `-c` and the command, every
    /// byte of it (quotes, backslashes, newlines, `$`, globs, unicode).
    #[test]
    fn the_confined_command_line_round_trips_every_byte(
        command in "[^\u{0}]{0,80}",
        home in proptest::option::of("/[^\u{0}]{0,20}"),
    ) {
        let at = vouch::confine::Locations {
            home: home.as_deref().map(Path::new),
            config: None,
        };
        let c = vouch::confine::Confined::new(
            Path::new("/opt/vouch dir/vouch"),
            Path::new("/bin/bash"),
            &at,
            &command,
            None,
        )
        .unwrap();
        prop_assert_eq!(words_bash_reads(&c.command), c.argv.clone());
        prop_assert_eq!(c.argv.last().unwrap(), &command);
    }
}

/// A hook input of `harness` running `command` in `cwd`.
fn shell_event(harness: &str, command: &str, cwd: &Path) -> Value {
    let (name, pointer) = match harness {
        "claude-code" => ("pretooluse-http.json", "/tool_input/command"),
        "codex" => ("PreToolUse.stdin.json", "/tool_input/command"),
        "copilot" => ("preToolUse.bash.json", "/toolArgs/command"),
        "cursor" => ("beforeShellExecution.plain.json", "/command"),
        "gemini" => ("before_tool.run_shell_command.json", "/tool_input/command"),
        "opencode" => ("tool.execute.before.bash.json", "/args/command"),
        "qwen" => ("PreToolUse.run_shell_command.json", "/tool_input/command"),
        other => panic!("{other}"),
    };
    let mut v: Value =
        serde_json::from_str(&fixtures::text(&format!("harnesses/{harness}/{name}"))).unwrap();
    *v.pointer_mut(pointer).unwrap() = command.into();
    for key in ["/cwd", "/directory", "/worktree"] {
        if let Some(slot) = v.pointer_mut(key) {
            *slot = cwd.display().to_string().into();
        }
    }
    if let Some(roots) = v.pointer_mut("/workspace_roots") {
        *roots = json!([cwd]);
    }
    v
}

fn hook(harness: &str, home: &Path, user: &Path, input: &Value, args: &[&str]) -> String {
    let mut child = Command::new(env!("CARGO_BIN_EXE_vouch"))
        .args(["hook", harness, "--home"])
        .arg(home)
        .args(args)
        .env_clear()
        .env("HOME", user)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(input.to_string().as_bytes())
        .unwrap();
    String::from_utf8(child.wait_with_output().unwrap().stdout).unwrap()
}

/// Where each harness's reply puts the command to run, for the ones that
/// rewrite; `None` for the ones that cannot.
fn rewritten(harness: &str) -> Option<&'static str> {
    match harness {
        "claude-code" | "codex" => Some("/hookSpecificOutput/updatedInput/command"),
        "gemini" => Some("/hookSpecificOutput/tool_input/command"),
        "copilot" => Some("/modifiedArgs/command"),
        "opencode" => Some("/command"),
        "cursor" | "qwen" => None,
        other => panic!("{other}"),
    }
}

#[test]
fn every_harness_that_rewrites_runs_the_confined_form_and_the_others_get_no_inert_allow() {
    let (_dir, user, project) = project();
    let home = tempfile::tempdir().unwrap();
    for harness in [
        "claude-code",
        "codex",
        "gemini",
        "copilot",
        "opencode",
        "cursor",
        "qwen",
    ] {
        let input = shell_event(harness, "ls -la", &project);
        let stdout = hook(harness, home.path(), &user, &input, &[]);
        let reply: Value = serde_json::from_str(&stdout).unwrap_or(Value::Null);
        match rewritten(harness) {
            Some(pointer) => {
                let line = reply.pointer(pointer).and_then(Value::as_str);
                let line = line.unwrap_or_else(|| panic!("{harness}: no rewrite in {stdout}"));
                assert!(line.contains(" confine "), "{harness}: {line}");
                assert!(line.ends_with("-c 'ls -la'"), "{harness}: {line}");
            }
            None => {
                // No model configured: vouch abstains, the harness's own
                // rules decide — never an allow of its own.
                assert!(!stdout.contains("\"allow\""), "{harness}: {stdout}");
                assert!(!stdout.contains("confine"), "{harness}: {stdout}");
            }
        }
    }
}

/// Team mode (issue 42): `cat docs/setup.txt`, where on the agent's machine
/// `docs/setup.txt` links to `~/.aws/credentials`, through `vouch hook
/// claude-code --server` to a service that cannot see the project, is not
/// allowed without review; a plain `ls` is decided inert on the agent's
/// machine, confined, without asking the service.
#[test]
fn a_remote_hook_decides_inert_where_the_files_are() {
    let (_dir, user, project) = project();
    let service_home = tempfile::tempdir().unwrap();
    // The service has no reviewer: what it would review abstains.
    let service = Running::start(service_home.path(), "", &[]);
    let token = service.token("adapter");
    let url = format!("http://{}", service.listen);
    let local = tempfile::tempdir().unwrap();
    let args = ["--server", url.as_str()];
    let run = |command: &str| {
        let input = shell_event("claude-code", command, &project);
        let mut child = Command::new(env!("CARGO_BIN_EXE_vouch"))
            .args(["hook", "claude-code", "--home"])
            .arg(local.path())
            .args(args)
            .env_clear()
            .env("HOME", &user)
            .env("VOUCH_ADAPTER_TOKEN", &token)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        child
            .stdin
            .take()
            .unwrap()
            .write_all(input.to_string().as_bytes())
            .unwrap();
        String::from_utf8(child.wait_with_output().unwrap().stdout).unwrap()
    };
    let secret = run("cat docs/setup.txt");
    assert!(
        !secret.contains("\"allow\""),
        "allowed without review: {secret}"
    );
    let ls = run("ls -la");
    let reply: Value = serde_json::from_str(&ls).unwrap();
    assert_eq!(
        reply["hookSpecificOutput"]["permissionDecision"], "allow",
        "{ls}"
    );
    assert!(
        reply["hookSpecificOutput"]["updatedInput"]["command"]
            .as_str()
            .unwrap()
            .contains(" confine "),
        "{ls}"
    );
    let log = service.stop();
    // The service saw the symlink read (and judged it without inert), and
    // never the `ls`, which was decided where the files are.
    assert!(!log.iter().any(|l| l.contains("inert")), "{log:?}");
}

#[tokio::test]
async fn a_service_never_calls_a_forwarded_call_inert() {
    let (_dir, user, project) = project();
    let service_home = tempfile::tempdir().unwrap();
    let service = Running::start(service_home.path(), "", &[("HOME", user.to_str().unwrap())]);
    let token = service.token("adapter");
    let client = reqwest::Client::new();
    let body = json!({"session_id": "s", "surface": "bash", "command": "ls", "cwd": project,
                      "can_run_confined": true});
    let post = |forwarded: bool| {
        let mut req = client
            .post(service.url("/v1/review"))
            .bearer_auth(&token)
            .json(&body);
        if forwarded {
            req = req.header("X-Forwarded-For", "203.0.113.7");
        }
        req.send()
    };
    let direct: Value = post(false).await.unwrap().json().await.unwrap();
    assert_eq!(direct["stage"], "inert", "{direct}");
    let forwarded: Value = post(true).await.unwrap().json().await.unwrap();
    assert_eq!(forwarded["stage"], "routing", "{forwarded}");
    // An unknown field is still refused.
    let bad = client
        .post(service.url("/v1/review"))
        .bearer_auth(&token)
        .json(&json!({"session_id": "s", "surface": "bash", "can_run_confinedd": true}))
        .send()
        .await
        .unwrap();
    assert_eq!(bad.status(), 400);
    service.stop();
}
