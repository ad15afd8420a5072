//! Nothing secret reaches the audit: every secret of the fixture corpus,
//! raw paths and URLs go through reviews, the hook route (before and after
//! the call), every `vouch hook` adapter as a process (before and after the
//! call), `POST /v1/audit/events` and `vouch audit ingest`; then the raw
//! bytes of `audit.sqlite`, its `-wal` and `-shm` files and every log line
//! are scanned. None of them may appear — while the safe parts (templates,
//! classes) demonstrably were written, so the scan reads real data.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::{Value, json};

use crate::support::fixtures;
use crate::support::model_server::{ModelServer, Reply, Script, verdict};
use crate::support::serve::Running;

/// The corpus commands, and each secret placed where templates keep words
/// or drop values: after an option, glued to one, bare, in a URL.
fn commands(secrets: &[String]) -> Vec<String> {
    let mut out: Vec<String> = fixtures::secret_records()
        .iter()
        .map(|v| v["command"].as_str().unwrap().to_owned())
        .collect();
    for s in secrets {
        let quoted = format!("'{}'", s.replace('\'', "'\\''"));
        out.push(format!("deploy --token {quoted}"));
        out.push(format!("deploy {quoted} now"));
        out.push(format!("mysql -p{quoted} app"));
        out.push(format!("login --secret={quoted}"));
        out.push(format!("curl https://ops:{quoted}@{HOST}/v1?key={quoted}"));
    }
    out
}

const HOST: &str = "billing.internal-acme-corp.example";
const URL: &str = "https://billing.internal-acme-corp.example/api/v1/invoices?customer=4711";

fn paths(project: &Path) -> Vec<String> {
    vec![
        project
            .join("src/quarterly-acme-layoffs.md")
            .display()
            .to_string(),
        "/home/dev/.ssh/id_acme_prod_deploy".to_owned(),
        "/srv/acme-payroll/employees-2026.csv".to_owned(),
        "../../acme-merger/term-sheet.pdf".to_owned(),
    ]
}

fn review(surface: &str, fields: Value, project: &Path, i: usize) -> Value {
    let mut r = json!({"session_id": "secrets", "turn_id": format!("t{i}"), "source": "claude-code",
                       "surface": surface, "cwd": project, "home": "/home/dev"});
    for (k, v) in fields.as_object().unwrap() {
        r[k] = v.clone();
    }
    r
}

fn hook(event: &str, tool: &str, input: Value, project: &Path, i: usize) -> Value {
    json!({"session_id": "secrets-hook", "transcript_path": "/nonexistent/t.jsonl", "cwd": project,
           "permission_mode": "default", "hook_event_name": event, "tool_name": tool,
           "tool_input": input, "tool_use_id": format!("toolu_{i}"),
           "tool_response": {"stdout": "printed the key", "stderr": ""}})
}

fn pi_event(value: &str, secret: &str, project: &Path, i: usize) -> Value {
    json!({"requestId": format!("pi-{i}"), "surface": "bash", "value": value, "result": "allow",
           "resolution": "user_approved", "origin": secret, "agentName": secret,
           "matchedPattern": secret, "cwd": project.join("src"), "home": "/home/dev"})
}

async fn post(
    client: &reqwest::Client,
    server: &Running,
    path: &str,
    token: &str,
    body: &Value,
) -> Value {
    let response = client
        .post(server.url(path))
        .bearer_auth(token)
        .json(body)
        .send()
        .await
        .unwrap();
    let status = response.status();
    let value: Value = response.json().await.unwrap();
    assert!(status.is_success(), "{path}: {status} {value}");
    value
}

fn cli(home: &Path, args: &[&str], stdin: &str) -> (Vec<u8>, String) {
    let out = crate::support::run_with_stdin(
        Command::new(env!("CARGO_BIN_EXE_vouch"))
            .args(args)
            .env("VOUCH_HOME", home)
            .env("HOME", home)
            .env("RUST_LOG", "info"),
        stdin.as_bytes(),
    );
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    (
        out.stdout,
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn audit_files(home: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    ["audit.sqlite", "audit.sqlite-wal", "audit.sqlite-shm"]
        .iter()
        .map(|f| home.join("state").join(f))
        .filter(|p| p.exists())
        .map(|p| {
            let bytes = std::fs::read(&p).unwrap();
            (p, bytes)
        })
        .collect()
}

fn contains(haystack: &[u8], needle: &str) -> bool {
    !needle.is_empty()
        && haystack
            .windows(needle.len())
            .any(|w| w == needle.as_bytes())
}

#[tokio::test]
async fn no_secret_path_or_url_reaches_the_audit_files_or_the_logs() {
    let secrets = fixtures::secrets();
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("vh");
    let project = dir.path().join("client-acme-confidential-project");
    std::fs::create_dir_all(project.join(".git")).unwrap();
    // Deny for some, defer (a human is asked) for others, allow the rest.
    let script = Script::always(Reply::allow())
        .rule("deploy", Reply::verdict(verdict("defer", "medium")))
        .rule("mysql", Reply::verdict(verdict("deny", "high")));
    let model = ModelServer::with_script(script).await;
    let config = format!(
        "[reviewer]\nprovider = \"openai\"\nbase_url = \"{}\"\ntimeout_ms = 5000\n\
         [turn]\nmax_reviews = 1000\n[routing.surfaces]\nread = \"ai\"\n",
        model.base_url()
    );
    std::fs::create_dir_all(&home).unwrap();
    let server = Running::start(&home, &config, &[("VOUCH_REVIEWER_API_KEY", "test-key")]);
    let client = reqwest::Client::new();
    let (adapter, _operator) = (server.token("adapter"), server.token("operator"));
    let commands = commands(&secrets);
    let paths = paths(&project);
    let mut i = 0;
    let mut next = || {
        i += 1;
        i
    };
    for command in &commands {
        post(
            &client,
            &server,
            "/v1/review",
            &adapter,
            &review("bash", json!({"command": command}), &project, next()),
        )
        .await;
        // A human approved it (if vouch deferred it) and it ran.
        for event in ["PreToolUse", "PostToolUse"] {
            let n = next();
            post(
                &client,
                &server,
                "/hooks/claude-code",
                &adapter,
                &hook(event, "Bash", json!({"command": command}), &project, n),
            )
            .await;
        }
    }
    for path in &paths {
        for surface in ["read", "write", "external_directory"] {
            post(
                &client,
                &server,
                "/v1/review",
                &adapter,
                &review(surface, json!({"path": path}), &project, next()),
            )
            .await;
        }
        post(
            &client,
            &server,
            "/hooks/claude-code",
            &adapter,
            &hook(
                "PreToolUse",
                "Write",
                json!({"file_path": path, "content": secrets[0]}),
                &project,
                next(),
            ),
        )
        .await;
    }
    for secret in &secrets {
        let input = json!({"query": secret, "url": URL});
        post(
            &client,
            &server,
            "/v1/review",
            &adapter,
            &review(
                "mcp",
                json!({"tool": "mcp__crm__lookup", "input": input}),
                &project,
                next(),
            ),
        )
        .await;
        post(
            &client,
            &server,
            "/v1/review",
            &adapter,
            &review(
                "network",
                json!({"destination": format!("{HOST}:443"), "input": input}),
                &project,
                next(),
            ),
        )
        .await;
        post(
            &client,
            &server,
            "/hooks/claude-code",
            &adapter,
            &hook(
                "PreToolUse",
                "WebFetch",
                json!({"url": format!("{URL}&token={secret}"), "prompt": secret}),
                &project,
                next(),
            ),
        )
        .await;
    }
    // Ingest: pi decision events over HTTP, and the same kinds through the CLI.
    let mut events = Vec::new();
    for (n, command) in commands.iter().enumerate() {
        let secret = &secrets[n % secrets.len()];
        events.push(pi_event(command, secret, &project, n));
        let mut path_event = pi_event(&paths[n % paths.len()], secret, &project, n + 100_000);
        path_event["surface"] = "read".into();
        events.push(path_event);
        events.push(json!({"kind": "ran", "source": "gemini",
                           "request": review("bash", json!({"command": command}), &project, n)}));
    }
    for chunk in events.chunks(200) {
        post(
            &client,
            &server,
            "/v1/audit/events",
            &adapter,
            &Value::Array(chunk.to_vec()),
        )
        .await;
    }
    // While the service runs, the write-ahead log and its index exist.
    let health: Value = client
        .get(server.url("/healthz"))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(health["audit"]["status"], "on", "{health}");
    let mut files = audit_files(&home);
    let names: Vec<String> = files
        .iter()
        .map(|(p, _)| p.file_name().unwrap().to_string_lossy().into_owned())
        .collect();
    assert_eq!(
        names,
        ["audit.sqlite", "audit.sqlite-wal", "audit.sqlite-shm"]
    );
    let mut log = server.stop();
    let lines: String = events
        .iter()
        .map(|e| {
            let mut e = e.clone();
            if let Some(id) = e.get("requestId").and_then(Value::as_str) {
                e["requestId"] = format!("cli-{id}").into();
            }
            format!("{e}\n")
        })
        .collect();
    let (summary, stderr) = cli(&home, &["audit", "ingest"], &lines);
    log.push(stderr);
    let summary: Value = serde_json::from_slice(&summary).unwrap();
    assert!(summary["counted"].as_u64().unwrap() > 0, "{summary}");
    for command in commands.iter().take(10) {
        let (_, stderr) = cli(
            &home,
            &["review"],
            &review("bash", json!({"command": command}), &project, 0).to_string(),
        );
        log.push(stderr);
    }
    let (report, stderr) = cli(
        &home,
        &[
            "audit",
            "report",
            "--scope",
            "all",
            "--format",
            "json",
            "--min-count",
            "1",
            "--top",
            "50",
        ],
        "",
    );
    log.push(stderr);
    let report: Value = serde_json::from_slice(&report).unwrap();

    // And after every process closed it (checkpointed into the main file).
    files.extend(audit_files(&home));
    // The scan reads real data: safe parts of what went in are there.
    let all: Vec<u8> = files.iter().flat_map(|(_, b)| b.iter().copied()).collect();
    for expected in [
        "deploy --token *",
        "mysql * app",
        "sensitive",
        "mcp__crm__lookup",
        "user_approved",
        "public",
    ] {
        assert!(
            contains(&all, expected),
            "`{expected}` was not written; the scan would prove nothing"
        );
    }
    assert!(
        report["totals"]["observations"].as_u64().unwrap() > 500,
        "{}",
        report["totals"]
    );
    assert!(
        report["totals"]["by_resolution"]["user_approved"]
            .as_u64()
            .unwrap()
            > 0
    );

    let log = log.join("\n");
    let project_text = project.display().to_string();
    let mut needles: Vec<String> = secrets.clone();
    needles.extend(paths.iter().cloned());
    needles.extend([
        URL.to_owned(),
        HOST.to_owned(),
        project_text,
        "client-acme-confidential".to_owned(),
    ]);
    needles.extend(
        [
            "quarterly-acme-layoffs",
            "id_acme_prod_deploy",
            "acme-payroll",
            "acme-merger",
        ]
        .map(str::to_owned),
    );
    let mut leaks = Vec::new();
    for needle in &needles {
        for (path, bytes) in &files {
            if contains(bytes, needle) {
                leaks.push(format!("`{needle}` in {}", path.display()));
            }
        }
        if log.contains(needle.as_str()) {
            leaks.push(format!("`{needle}` in the logs"));
        }
    }
    assert!(leaks.is_empty(), "{}", leaks.join("\n"));
}

const HARNESS_FIXTURES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/harnesses");

fn harness_fixture(harness: &str, name: &str) -> Value {
    let text =
        std::fs::read_to_string(Path::new(HARNESS_FIXTURES).join(harness).join(name)).unwrap();
    serde_json::from_str(&text).unwrap()
}

/// A captured shell event of `harness` (before or after the call), moved
/// into `project` and carrying `command`.
fn shell_event(harness: &str, after: bool, command: &str, project: &Path) -> Value {
    let (file, command_at) = match (harness, after) {
        ("claude-code", false) => ("pretooluse-http.json", "/tool_input/command"),
        ("claude-code", true) => ("posttooluse.bash.json", "/tool_input/command"),
        ("codex", false) => ("PreToolUse.stdin.json", "/tool_input/command"),
        ("codex", true) => ("PostToolUse.stdin.json", "/tool_input/command"),
        ("gemini", false) => ("before_tool.run_shell_command.json", "/tool_input/command"),
        ("gemini", true) => ("after_tool.run_shell_command.json", "/tool_input/command"),
        ("cursor", _) => ("beforeShellExecution.plain.json", "/command"),
        (other, _) => panic!("{other}"),
    };
    let mut v = harness_fixture(harness, file);
    *v.pointer_mut(command_at).unwrap() = command.into();
    v["cwd"] = project.display().to_string().into();
    v["transcript_path"] = Value::Null;
    // The before and after events of a call come from one session.
    v["session_id"] = "secrets-hooks".into();
    v["conversation_id"] = "secrets-hooks".into();
    if harness == "claude-code" {
        v["permission_mode"] = "default".into();
    }
    if harness == "cursor" {
        v["workspace_roots"] = json!([project]);
        if after {
            v["hook_event_name"] = "afterShellExecution".into();
            v["output"] = "printed the key".into();
        }
    }
    v
}

/// A file event of `harness` on `path` (the before-hook, and Cursor's
/// after-edit).
fn file_events(harness: &str, path: &str, secret: &str, project: &Path) -> Vec<Value> {
    let mut out = Vec::new();
    match harness {
        "claude-code" | "codex" => {
            let mut v = shell_event(harness, false, "true", project);
            v["tool_name"] = "Write".into();
            v["tool_input"] = json!({"file_path": path, "content": secret});
            out.push(v);
        }
        "gemini" => {
            let mut v = harness_fixture("gemini", "before_tool.write_file.json");
            v["cwd"] = project.display().to_string().into();
            v["transcript_path"] = Value::Null;
            v["tool_input"] = json!({"file_path": path, "content": secret});
            out.push(v);
        }
        "cursor" => {
            for file in ["beforeReadFile.json", "afterFileEdit.json"] {
                let mut v = harness_fixture("cursor", file);
                v["workspace_roots"] = json!([project]);
                v["file_path"] = path.into();
                if file == "beforeReadFile.json" {
                    v["content"] = secret.into();
                } else {
                    v["edits"] = json!([{"old_string": secret, "new_string": secret}]);
                }
                out.push(v);
            }
        }
        other => panic!("{other}"),
    }
    out
}

/// One `vouch hook` process; returns its stderr (the log).
fn run_hook(home: &Path, harness: &str, event: &Value) -> String {
    let out = crate::support::run_with_stdin(
        Command::new(env!("CARGO_BIN_EXE_vouch"))
            .args(["hook", harness, "--home"])
            .arg(home)
            .env_clear()
            .env("HOME", home)
            .env("RUST_LOG", "info"),
        event.to_string().as_bytes(),
    );
    assert!(
        out.status.success(),
        "{harness}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        !out.stdout.is_empty() || harness == "codex",
        "{harness}: no reply"
    );
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// Every hook, as the harness runs it (one `vouch hook` process per event,
/// before and after the call): the secrets and raw paths never reach the
/// audit files or the logs, while each harness's decisions and the human
/// approvals (deferred, then ran) are recorded.
// Multi-threaded: the hook processes are waited for on this thread while
// the model server answers them on another.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_secret_reaches_the_audit_through_any_hook_process() {
    let secrets = fixtures::secrets();
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("vh");
    let project = dir.path().join("client-acme-confidential-project");
    std::fs::create_dir_all(project.join(".git")).unwrap();
    std::fs::create_dir_all(&home).unwrap();
    let script = Script::always(Reply::allow())
        .rule("deploy", Reply::verdict(verdict("defer", "medium")))
        .rule("mysql", Reply::verdict(verdict("deny", "high")));
    let model = ModelServer::with_script(script).await;
    std::fs::write(
        home.join("config.toml"),
        format!(
            "[reviewer]\nprovider = \"openai\"\nbase_url = \"{}\"\napi_key_env = \"\"\n\
             timeout_ms = 5000\n[turn]\nmax_reviews = 1000\n[routing.surfaces]\nread = \"ai\"\n",
            model.base_url()
        ),
    )
    .unwrap();
    const HARNESSES: [&str; 4] = ["claude-code", "codex", "gemini", "cursor"];
    let mut log = Vec::new();
    for (i, secret) in secrets.iter().enumerate() {
        let quoted = format!("'{}'", secret.replace('\'', "'\\''"));
        let harness = HARNESSES[i % HARNESSES.len()];
        // Each secret in one command shape, through one harness, before
        // and after the call: deferred (a human is asked), denied, allowed.
        let command = match i % 3 {
            0 => format!("deploy --token {quoted}"),
            1 => format!("mysql -p{quoted} app"),
            _ => format!("curl https://ops:{quoted}@{HOST}/v1?key={quoted}"),
        };
        for after in [false, true] {
            log.push(run_hook(
                &home,
                harness,
                &shell_event(harness, after, &command, &project),
            ));
        }
    }
    let paths = paths(&project);
    for (i, harness) in HARNESSES.iter().enumerate() {
        for path in &paths {
            for event in file_events(harness, path, &secrets[i % secrets.len()], &project) {
                log.push(run_hook(&home, harness, &event));
            }
        }
    }
    let files = audit_files(&home);
    let (report, stderr) = cli(
        &home,
        &[
            "audit",
            "report",
            "--scope",
            "all",
            "--format",
            "json",
            "--min-count",
            "1",
        ],
        "",
    );
    log.push(stderr);
    let report: Value = serde_json::from_slice(&report).unwrap();
    let totals = &report["totals"];
    for harness in HARNESSES {
        assert!(
            totals["by_source"][harness].as_u64().unwrap_or(0) > 0,
            "nothing recorded from {harness}: {totals}"
        );
    }
    // Deferred by the model, asked, then ran: a human approval, recorded
    // across two hook processes.
    assert!(
        totals["by_resolution"]["user_approved"]
            .as_u64()
            .unwrap_or(0)
            > 0,
        "{totals}"
    );
    let all: Vec<u8> = files.iter().flat_map(|(_, b)| b.iter().copied()).collect();
    for expected in ["deploy --token *", "sensitive", "claude-code", "cursor"] {
        assert!(
            contains(&all, expected),
            "`{expected}` was not written; the scan would prove nothing"
        );
    }
    let log = log.join("\n");
    let mut needles: Vec<String> = secrets.clone();
    needles.extend(paths.iter().cloned());
    needles.extend([
        HOST.to_owned(),
        project.display().to_string(),
        "client-acme-confidential".to_owned(),
    ]);
    needles.extend(
        [
            "quarterly-acme-layoffs",
            "id_acme_prod_deploy",
            "acme-payroll",
            "acme-merger",
        ]
        .map(str::to_owned),
    );
    let mut leaks = Vec::new();
    for needle in &needles {
        for (path, bytes) in &files {
            if contains(bytes, needle) {
                leaks.push(format!("`{needle}` in {}", path.display()));
            }
        }
        if log.contains(needle.as_str()) {
            leaks.push(format!("`{needle}` in the logs"));
        }
    }
    assert!(leaks.is_empty(), "{}", leaks.join("\n"));
}
