//! `vouch hook <harness> --server URL` through the real binary, against a
//! real `vouch serve` on 127.0.0.1:0 (and a TLS front before it) with the
//! scripted model server: every harness gets, byte for byte, the reply the
//! local path gives for the same call; every way the service can fail is
//! the harness's deny tagged `[vouch fault: unreachable]`, fast; the
//! token never shows in a log.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::support::hooks::{HARNESSES, fixture, shell_event};
use crate::support::model_server::{ModelServer, Reply, Script};
use crate::support::serve::Running;
use crate::support::tls::{Ca, TlsFront};

/// The reviewer's two verdicts, picked by the command in the packet.
fn model_script() -> Script {
    let verdict = |outcome: &str, rationale: &str| {
        Reply::verdict(json!({"outcome": outcome, "risk_level": "low",
            "user_authorization": "high", "rationale": rationale, "suggestion": null}))
    };
    Script::always(verdict("allow", "the user asked for exactly this")).rule(
        "denied-marker",
        verdict("deny", "MODEL-DENY-MARKER: nobody asked for this"),
    )
}

/// The reviewer configuration for `base_url`; the breaker is kept shut so
/// a deny reads the same in every harness's turn.
fn model_config(base_url: &str) -> String {
    format!(
        "[reviewer]\nprovider = \"openai\"\nbase_url = \"{base_url}\"\napi_key_env = \"\"\n\
         timeout_ms = 5000\n[breaker]\nconsecutive_denials = 100\nwindow_denials = 50\n"
    )
}

/// The user's home both the local and the remote hook run under (the same
/// `$HOME`, so a message naming it reads the same), and a vouch home each.
struct Machine {
    user: tempfile::TempDir,
}

impl Machine {
    fn new() -> Machine {
        Machine {
            user: tempfile::tempdir().unwrap(),
        }
    }

    /// A fresh vouch home (`--home`), with `config` if any.
    fn vouch_home(&self, config: Option<&str>) -> PathBuf {
        let dir = tempfile::Builder::new()
            .prefix("vouch-home")
            .tempdir_in(self.user.path())
            .unwrap()
            .keep();
        if let Some(text) = config {
            std::fs::write(dir.join("config.toml"), text).unwrap();
        }
        dir
    }
}

/// One hook run's result.
struct Run {
    code: i32,
    stdout: String,
    stderr: String,
    elapsed: Duration,
}

/// `vouch hook HARNESS --home HOME ARGS…` with only `HOME` and `env` in its
/// environment (debug logs on, to show what the logs could leak).
fn hook(
    user: &Path,
    home: &Path,
    harness: &str,
    input: &Value,
    args: &[&str],
    env: &[(&str, &str)],
) -> Run {
    let started = Instant::now();
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_vouch"));
    cmd.args(["hook", harness, "--home"])
        .arg(home)
        .args(args)
        .env_clear()
        .env("HOME", user)
        .env("RUST_LOG", "debug")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    for (k, v) in env {
        cmd.env(k, v);
    }
    let mut child = cmd.spawn().unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(input.to_string().as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    Run {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8(out.stdout).unwrap(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        elapsed: started.elapsed(),
    }
}

/// A running `vouch serve` reviewing with `model`, and its adapter token.
fn serve(model: &ModelServer) -> (Running, tempfile::TempDir, String) {
    let home = tempfile::tempdir().unwrap();
    let running = Running::start(home.path(), &model_config(&model.base_url()), &[]);
    let token = running.token("adapter");
    (running, home, token)
}

/// A loopback URL with nothing listening on it.
fn dead_url() -> String {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    drop(listener);
    format!("http://127.0.0.1:{port}")
}

/// Whether a reply blocks the call, in each harness's own terms.
fn is_deny(harness: &str, stdout: &str) -> bool {
    let v: Value = serde_json::from_str(stdout).unwrap_or_else(|e| panic!("{e}: {stdout}"));
    let found = [
        "/hookSpecificOutput/permissionDecision",
        "/hookSpecificOutput/decision/behavior",
        "/permissionDecision",
        "/decision",
        "/permission",
    ]
    .iter()
    .filter_map(|p| v.pointer(p).and_then(Value::as_str))
    .collect::<Vec<_>>();
    assert!(!found.is_empty(), "{harness}: no decision in {stdout}");
    found.iter().all(|d| *d == "deny" || *d == "block")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_harness_gets_the_local_reply_from_the_service() {
    let model = ModelServer::with_script(model_script()).await;
    let (service, _service_home, token) = serve(&model);
    let url = format!("http://{}", service.listen);
    let machine = Machine::new();
    let local_home = machine.vouch_home(Some(&model_config(&model.base_url())));
    for harness in HARNESSES {
        // A fresh remote home per harness: nothing decided before is reused.
        let remote_home = machine.vouch_home(None);
        for (case, command) in [
            ("hard deny", "echo ok; rm -rf ~/"),
            ("model allow", "touch allowed-marker"),
            ("model deny", "touch denied-marker"),
        ] {
            let input = shell_event(harness, command);
            let local = hook(machine.user.path(), &local_home, harness, &input, &[], &[]);
            let before = model.requests().len();
            let remote = hook(
                machine.user.path(),
                &remote_home,
                harness,
                &input,
                &["--server", &url],
                &[("VOUCH_ADAPTER_TOKEN", &token)],
            );
            assert_eq!((local.code, remote.code), (0, 0), "{harness} {case}");
            assert_eq!(
                remote.stdout, local.stdout,
                "{harness} {case}: the remote reply differs"
            );
            assert!(!remote.stdout.contains("[vouch fault"), "{harness} {case}");
            let asked = model.requests().len() - before;
            match case {
                "hard deny" => {
                    assert!(is_deny(harness, &remote.stdout), "{harness}");
                    assert!(remote.stdout.contains("Do not retry"), "{harness}");
                    assert_eq!(asked, 0, "{harness}: a hard deny never reaches the model");
                }
                "model allow" => {
                    // Codex's PreToolUse has no allow: no objection is empty.
                    let empty = remote.stdout.is_empty();
                    assert!(empty || !is_deny(harness, &remote.stdout), "{harness}");
                    assert_eq!(asked, 1, "{harness}: the service asked the model once");
                }
                _ => {
                    assert!(is_deny(harness, &remote.stdout), "{harness}");
                    assert!(remote.stdout.contains("MODEL-DENY-MARKER"), "{harness}");
                    assert_eq!(asked, 1, "{harness}");
                }
            }
            assert!(
                !remote.stderr.contains(&token),
                "{harness}: the token was logged"
            );
        }
    }
    let log = service.stop();
    assert!(
        !log.iter().any(|l| l.contains(&token)),
        "the service logged the token"
    );
}

/// The evidence only the developer's machine has reaches the service's
/// packet: the transcript file's latest user message (inline, redacted
/// before it leaves), and the prompt the prompt hook recorded locally when
/// the transcript holds none yet.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_local_transcript_and_recorded_prompt_reach_the_services_packet() {
    let model = ModelServer::with_script(model_script()).await;
    let (service, _service_home, token) = serve(&model);
    let url = format!("http://{}", service.listen);
    let machine = Machine::new();
    let home = machine.vouch_home(None);
    let args = ["--server", url.as_str()];
    let env = [("VOUCH_ADAPTER_TOKEN", token.as_str())];
    let run = |input: &Value| {
        hook(
            machine.user.path(),
            &home,
            "claude-code",
            input,
            &args,
            &env,
        )
    };

    let secret = "AKIAUJZDE8GXD6NCF10E";
    let transcript = machine.user.path().join("session.jsonl");
    let lines = [
        json!({"type": "user", "uuid": "u1", "message": {"role": "user",
            "content": format!("LATEST-USER-MARKER: please run it; my key is {secret}")}}),
        json!({"type": "assistant", "message": {"content": [{"type": "tool_use",
            "id": "toolu_vouchcheck01", "name": "Bash",
            "input": {"command": "touch transcript-marker", "description": "LINKED-MARKER"}}]}}),
    ];
    let text: String = lines.iter().map(|l| format!("{l}\n")).collect();
    std::fs::write(&transcript, text).unwrap();
    let mut input = shell_event("claude-code", "touch transcript-marker");
    input["transcript_path"] = transcript.display().to_string().into();
    let r = run(&input);
    assert!(r.stdout.contains("\"allow\""), "{}", r.stdout);
    let body = model.requests().last().unwrap().raw_body.clone();
    assert!(body.contains("LATEST-USER-MARKER"), "{body}");
    assert!(body.contains("LINKED-MARKER"), "{body}");
    assert!(!body.contains(secret), "a secret reached the model");

    // No transcript yet: the prompt the prompt hook recorded stands in.
    let missing = machine.user.path().join("not-written-yet.jsonl");
    let mut prompt = fixture("claude-code", "userpromptsubmit.json");
    prompt["transcript_path"] = missing.display().to_string().into();
    prompt["prompt"] = "PROMPT-MARKER: please create ran-c".into();
    let r = run(&prompt);
    assert_eq!(r.stdout, "{}\n", "a prompt is never blocked");
    let mut input = shell_event("claude-code", "touch ran-c");
    input["transcript_path"] = missing.display().to_string().into();
    let r = run(&input);
    assert!(r.stdout.contains("\"allow\""), "{}", r.stdout);
    let body = model.requests().last().unwrap().raw_body.clone();
    assert!(body.contains("PROMPT-MARKER"), "{body}");
}

/// A dead port: every harness's deny, tagged unreachable, well within the
/// deadline; a hard deny still gets its own words (decided locally).
#[test]
fn a_service_that_is_down_is_each_harness_unreachable_deny() {
    let url = dead_url();
    let machine = Machine::new();
    let home = machine.vouch_home(None);
    let args = ["--server", url.as_str()];
    let env = [("VOUCH_ADAPTER_TOKEN", "some-token-value")];
    for harness in HARNESSES {
        let input = shell_event(harness, "make test");
        let r = hook(machine.user.path(), &home, harness, &input, &args, &env);
        assert_eq!(r.code, 0, "{harness}");
        assert!(is_deny(harness, &r.stdout), "{harness}: {}", r.stdout);
        assert!(
            r.stdout.contains("[vouch fault: unreachable]"),
            "{harness}: {}",
            r.stdout
        );
        assert!(
            r.elapsed < Duration::from_secs(5),
            "{harness}: {:?}",
            r.elapsed
        );
        assert!(!r.stderr.contains("some-token-value"), "{harness}");

        let input = shell_event(harness, "rm -rf /");
        let r = hook(machine.user.path(), &home, harness, &input, &args, &env);
        assert!(is_deny(harness, &r.stdout), "{harness}: {}", r.stdout);
        assert!(r.stdout.contains("Do not retry"), "{harness}: {}", r.stdout);
        assert!(
            !r.stdout.contains("[vouch fault"),
            "{harness}: {}",
            r.stdout
        );
    }
}

/// A service that accepts the connection but never answers: the hook
/// gives up before its deadline with the unreachable deny, not the
/// watchdog's.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_service_that_hangs_is_cut_off_before_the_deadline() {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let hold = tokio::spawn(async move {
        let mut open = Vec::new();
        while let Ok((stream, _)) = listener.accept().await {
            open.push(stream);
        }
    });
    let machine = Machine::new();
    let home = machine.vouch_home(None);
    let input = shell_event("claude-code", "make test");
    let r = tokio::task::spawn_blocking(move || {
        // Deadline: 8 s timeout − 5 s margin = 3 s.
        let args = ["--server", url.as_str(), "--timeout", "8"];
        let env = [("VOUCH_ADAPTER_TOKEN", "t")];
        hook(
            machine.user.path(),
            &home,
            "claude-code",
            &input,
            &args,
            &env,
        )
    })
    .await
    .unwrap();
    assert!(is_deny("claude-code", &r.stdout), "{}", r.stdout);
    assert!(
        r.stdout.contains("[vouch fault: unreachable]") && r.stdout.contains("did not answer"),
        "{}",
        r.stdout
    );
    assert!(r.elapsed < Duration::from_secs(5), "{:?}", r.elapsed);
    hold.abort();
}

/// The token: from `--token-file` or `VOUCH_ADAPTER_TOKEN` (the file wins);
/// a wrong one is refused (401, a deny); none is a config error; neither
/// the hook nor the service ever logs it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_token_comes_from_a_file_or_the_environment_and_a_wrong_one_denies() {
    let model = ModelServer::with_script(model_script()).await;
    let (service, _service_home, token) = serve(&model);
    let url = format!("http://{}", service.listen);
    let machine = Machine::new();
    let home = machine.vouch_home(None);
    let input = shell_event("claude-code", "touch allowed-marker");
    let allowed = |r: &Run| r.stdout.contains("\"permissionDecision\":\"allow\"");
    let run = |args: &[&str], env: &[(&str, &str)]| {
        hook(machine.user.path(), &home, "claude-code", &input, args, env)
    };

    let r = run(&["--server", &url], &[("VOUCH_ADAPTER_TOKEN", &token)]);
    assert!(allowed(&r), "from the environment: {}", r.stdout);

    let file = machine.user.path().join("adapter.token");
    std::fs::write(&file, format!("{token}\n")).unwrap();
    let file_arg = file.display().to_string();
    let wrong = "wrong-token-0123456789";
    let r = run(
        &["--server", &url, "--token-file", &file_arg],
        &[("VOUCH_ADAPTER_TOKEN", wrong)],
    );
    assert!(allowed(&r), "from the file, which wins: {}", r.stdout);

    let r = run(&["--server", &url], &[("VOUCH_ADAPTER_TOKEN", wrong)]);
    assert!(is_deny("claude-code", &r.stdout), "{}", r.stdout);
    assert!(
        r.stdout.contains("[vouch fault: unreachable]") && r.stdout.contains("401"),
        "{}",
        r.stdout
    );
    assert!(!r.stdout.contains(wrong) && !r.stderr.contains(wrong));

    let r = run(&["--server", &url], &[]);
    assert!(is_deny("claude-code", &r.stdout), "{}", r.stdout);
    assert!(
        r.stdout.contains("[vouch fault: config_error]")
            && r.stdout.contains("VOUCH_ADAPTER_TOKEN"),
        "{}",
        r.stdout
    );

    let missing = machine
        .user
        .path()
        .join("no-such.token")
        .display()
        .to_string();
    let r = run(
        &["--server", &url, "--token-file", &missing],
        &[("VOUCH_ADAPTER_TOKEN", &token)],
    );
    assert!(
        r.stdout.contains("[vouch fault: config_error]") && r.stdout.contains("no-such.token"),
        "{}",
        r.stdout
    );

    // Plain http across the network needs saying so.
    let r = run(
        &["--server", "http://vouch.example:8787"],
        &[("VOUCH_ADAPTER_TOKEN", &token)],
    );
    assert!(
        r.stdout.contains("[vouch fault: config_error]") && r.stdout.contains("plain http"),
        "{}",
        r.stdout
    );

    let log = service.stop();
    for line in &log {
        assert!(!line.contains(&token) && !line.contains(wrong), "{line}");
    }
}

/// `https://` through a TLS front: verified with `--ca-file`; the same
/// service with no CA file (the system roots do not know the test CA) or
/// with another CA's file fails closed.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn https_is_verified_with_the_ca_file_and_an_untrusted_certificate_fails_closed() {
    let model = ModelServer::with_script(model_script()).await;
    let (service, _service_home, token) = serve(&model);
    let ca = Ca::new("vouch test CA");
    let front = TlsFront::start(&ca, service.listen.parse().unwrap()).await;
    let machine = Machine::new();
    let home = machine.vouch_home(None);
    let ca_file = machine.user.path().join("team-ca.pem");
    std::fs::write(&ca_file, &ca.pem).unwrap();
    let other_file = machine.user.path().join("other-ca.pem");
    std::fs::write(&other_file, Ca::new("another CA").pem).unwrap();

    let mut runs = Vec::new();
    for (n, (server, ca)) in [
        (
            format!("https://localhost:{}", front.addr.port()),
            Some(&ca_file),
        ),
        (
            format!("https://127.0.0.1:{}/", front.addr.port()),
            Some(&ca_file),
        ),
        (format!("https://localhost:{}", front.addr.port()), None),
        (
            format!("https://localhost:{}", front.addr.port()),
            Some(&other_file),
        ),
    ]
    .into_iter()
    .enumerate()
    {
        let (user, home) = (machine.user.path().to_path_buf(), home.clone());
        let token = token.clone();
        let ca = ca.map(|p| p.display().to_string());
        let run = tokio::task::spawn_blocking(move || {
            let mut args = vec!["--server".to_owned(), server];
            if let Some(ca) = ca {
                args.extend(["--ca-file".to_owned(), ca]);
            }
            let args: Vec<&str> = args.iter().map(String::as_str).collect();
            // A command each: no verdict comes from the cache.
            let input = shell_event("claude-code", &format!("touch allowed-marker-{n}"));
            let env = [("VOUCH_ADAPTER_TOKEN", token.as_str())];
            hook(&user, &home, "claude-code", &input, &args, &env)
        })
        .await
        .unwrap();
        runs.push(run);
    }
    for r in &runs[..2] {
        assert!(
            r.stdout.contains("\"permissionDecision\":\"allow\""),
            "{}\n{}",
            r.stdout,
            r.stderr
        );
    }
    for r in &runs[2..] {
        assert!(is_deny("claude-code", &r.stdout), "{}", r.stdout);
        assert!(
            r.stdout.contains("[vouch fault: unreachable]"),
            "{}",
            r.stdout
        );
        assert!(r.elapsed < Duration::from_secs(5), "{:?}", r.elapsed);
    }
    assert_eq!(
        model.requests().len(),
        2,
        "only the verified calls were reviewed"
    );
}

/// `vouch hook snippet <harness> --server URL` pins the server, the token
/// file (absolute) and the CA file in every harness's hook command line.
#[test]
fn snippets_pin_the_server_and_its_files() {
    let machine = Machine::new();
    let home = machine.vouch_home(None);
    for harness in HARNESSES {
        let out = Command::new(env!("CARGO_BIN_EXE_vouch"))
            .args([
                "hook",
                "snippet",
                harness,
                "--server",
                "https://vouch.example/team",
                "--token-file",
                "/etc/vouch/adapter.token",
                "--ca-file",
                "/etc/vouch/team-ca.pem",
            ])
            .env_clear()
            .env("HOME", machine.user.path())
            .env("VOUCH_HOME", &home)
            .output()
            .unwrap();
        assert!(out.status.success(), "{harness}: {out:?}");
        let text = String::from_utf8(out.stdout).unwrap();
        assert!(
            text.contains(&format!(
                "hook {harness} --home {} --server https://vouch.example/team --token-file \
                 /etc/vouch/adapter.token --ca-file /etc/vouch/team-ca.pem --timeout",
                home.display()
            )),
            "{harness}: {text}"
        );
        let notes = String::from_utf8(out.stderr).unwrap();
        assert!(notes.contains("unreachable"), "{harness}: {notes}");
    }
    // The http form of Claude Code's hook is the service's own route.
    let out = Command::new(env!("CARGO_BIN_EXE_vouch"))
        .args([
            "hook",
            "snippet",
            "claude-code",
            "--http",
            "--server",
            "https://x",
        ])
        .env_clear()
        .env("HOME", machine.user.path())
        .output()
        .unwrap();
    assert!(!out.status.success());
}

/// A local hook (no `--server`) with `[store] backend = "postgres"` never
/// takes the database URL from its environment, which the project can set
/// (a database of the project's choosing could hold a forged break glass):
/// a call that needs state fails closed as `state_unavailable`, saying why,
/// before any model call; a hard deny still answers.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_local_hook_never_takes_the_database_url_from_its_environment() {
    let model = ModelServer::with_script(model_script()).await;
    let machine = Machine::new();
    let config = format!(
        "{}[store]\nbackend = \"postgres\"\n",
        model_config(&model.base_url())
    );
    let home = machine.vouch_home(Some(&config));
    let planted = [(
        "VOUCH_STORE_URL",
        "postgresql://project@/planted?host=/nonexistent-vouch-test",
    )];
    let run = tokio::task::block_in_place(|| {
        hook(
            machine.user.path(),
            &home,
            "claude-code",
            &shell_event("claude-code", "touch allowed-marker"),
            &[],
            &planted,
        )
    });
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(is_deny("claude-code", &run.stdout), "{}", run.stdout);
    assert!(
        run.stdout.contains("[vouch fault: state_unavailable]")
            && run.stdout.contains("does not take the PostgreSQL URL"),
        "{}",
        run.stdout
    );
    assert!(
        !run.stdout.contains("planted") && !run.stderr.contains("planted"),
        "the planted URL was used or shown:\n{}\n{}",
        run.stdout,
        run.stderr
    );
    assert!(model.requests().is_empty(), "the model was called");
    let floor = tokio::task::block_in_place(|| {
        hook(
            machine.user.path(),
            &home,
            "claude-code",
            &shell_event("claude-code", "echo ok; rm -rf ~/"),
            &[],
            &planted,
        )
    });
    assert!(is_deny("claude-code", &floor.stdout), "{}", floor.stdout);
    assert!(
        !floor.stdout.contains("vouch fault"),
        "a hard deny needs no state: {}",
        floor.stdout
    );
}
