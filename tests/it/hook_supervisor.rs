//! `vouch hook` decides in a supervised worker (issue 43): whatever ends
//! the worker mid-decision becomes each harness's own fail-closed reply,
//! exit 0 — never the crash a harness reads as "run the tool".
//!
//! The worker is caught mid-decision: the reviewer model (or, with
//! `--server`, the central service's reviewer) never answers, so the
//! worker waits in the model call until the test sees the call arrive,
//! finds the worker among the hook process's children (`/proc`) and sends
//! it a signal. Every harness, every signal, both paths. A stopped worker
//! (a hang nothing inside it can end) is answered by the supervisor's own
//! deadline; nothing in the hook's environment decides which program the
//! worker is; and the deep inputs that once aborted the decision reach
//! every harness's worker and are answered by it, not by the supervisor.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use rustix::process::{Pid, Signal, kill_process};
use serde_json::{Value, json};

use crate::support::hooks::{HARNESSES, deny_reason, event_of, every_harness, shell_event};
use crate::support::model_server::{ModelServer, Reply, Script};
use crate::support::serve::Running;

/// The signals a worker is killed with, by name. `SIGSEGV` and `SIGBUS`
/// are sent twice: Rust's stack-overflow handler catches them, and one
/// sent from outside (not a fault in a guard page) makes it put back the
/// default action and return, so a real fault kills; the second signal,
/// sent once the handler is gone, does what a real fault would.
const SIGNALS: [(&str, Signal, bool); 13] = [
    ("SIGSEGV", Signal::SEGV, true),
    ("SIGABRT", Signal::ABORT, false),
    ("SIGBUS", Signal::BUS, true),
    ("SIGILL", Signal::ILL, false),
    ("SIGFPE", Signal::FPE, false),
    ("SIGKILL", Signal::KILL, false),
    ("SIGTERM", Signal::TERM, false),
    ("SIGINT", Signal::INT, false),
    ("SIGHUP", Signal::HUP, false),
    ("SIGQUIT", Signal::QUIT, false),
    ("SIGSYS", Signal::SYS, false),
    ("SIGXCPU", Signal::XCPU, false),
    ("SIGUSR1", Signal::USR1, false),
];

/// The reviewer that never answers, and reviews that wait for it long.
fn hanging_config(base_url: &str) -> String {
    format!(
        "[reviewer]\nprovider = \"openai\"\nbase_url = \"{base_url}\"\napi_key_env = \"\"\n\
         timeout_ms = 60000\n[turn]\nmax_reviews = 1000\n[cache]\nttl_ms = 0\n\
         [server]\nmax_concurrent_reviews = 1024\nrate_limit_per_second = 100000\n"
    )
}

/// `vouch hook HARNESS --home HOME --timeout 60 --defer-as deny ARGS…`,
/// started with `input` written and stdin closed, environment cleared but
/// for `HOME` and `env`.
fn start_hook(
    home: &Path,
    harness: &str,
    input: &Value,
    args: &[&str],
    env: &[(&str, &str)],
) -> Child {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_vouch"));
    cmd.args(["hook", harness, "--home"])
        .arg(home)
        .args(["--timeout", "60", "--defer-as", "deny"])
        .args(args)
        .env_clear()
        .env("HOME", home)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    for (k, v) in env {
        cmd.env(k, v);
    }
    let mut child = cmd.spawn().unwrap();
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(input.to_string().as_bytes()).unwrap();
    drop(stdin);
    child
}

/// The worker: the one child of the hook process.
fn worker_of(hook: &Child) -> i32 {
    let pid = hook.id();
    let children = std::fs::read_to_string(format!("/proc/{pid}/task/{pid}/children")).unwrap();
    let pids: Vec<i32> = children
        .split_whitespace()
        .map(|p| p.parse().unwrap())
        .collect();
    assert_eq!(pids.len(), 1, "the hook has one worker: {pids:?}");
    pids[0]
}

/// Waits until a model call whose packet holds `marker` has arrived.
fn wait_for_call(model: &ModelServer, marker: &str) {
    let deadline = Instant::now() + Duration::from_secs(30);
    while !model.requests().iter().any(|r| r.raw_body.contains(marker)) {
        assert!(Instant::now() < deadline, "no model call for `{marker}`");
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// Waits until process `pid` no longer catches `signal` (or is gone).
fn wait_for_default_action(pid: i32, signal: Signal) {
    let bit = 1u64 << (signal.as_raw() - 1);
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let Ok(status) = std::fs::read_to_string(format!("/proc/{pid}/status")) else {
            return;
        };
        let caught = status
            .lines()
            .find_map(|l| l.strip_prefix("SigCgt:"))
            .map(|mask| u64::from_str_radix(mask.trim(), 16).unwrap());
        match caught {
            Some(mask) if mask & bit != 0 => {
                assert!(Instant::now() < deadline, "{pid} still catches {signal:?}");
                std::thread::sleep(Duration::from_millis(2));
            }
            // Caught no longer, or a zombie without the line.
            Some(_) | None => return,
        }
    }
}

/// No core files: half the signals dump core by default, and the hook
/// (and its worker) inherit this process's limit.
fn no_core_files() {
    use rustix::process::{Resource, Rlimit, getrlimit, setrlimit};
    let limit = getrlimit(Resource::Core);
    setrlimit(
        Resource::Core,
        Rlimit {
            current: Some(0),
            maximum: limit.maximum,
        },
    )
    .unwrap();
}

fn signal(pid: i32, signal: Signal) {
    kill_process(Pid::from_raw(pid).unwrap(), signal).unwrap();
}

/// Kills each harness's worker mid-decision with every signal; each reply
/// is the harness's deny for its event, tagged as vouch's internal fault
/// and naming the signal, and comes long before any deadline.
fn every_signal_is_each_harness_fail_closed_reply(
    home_for: &(dyn Fn(&str) -> PathBuf + Sync),
    args: &[&str],
    model: &ModelServer,
    path: &str,
) {
    no_core_files();
    std::thread::scope(|scope| {
        for harness in every_harness() {
            let home = home_for(harness);
            scope.spawn(move || {
                for (name, sig, twice) in SIGNALS {
                    let marker = format!("test-{path}-{harness}-{name}");
                    let input = shell_event(harness, &format!("make {marker}"));
                    let event = event_of(harness, &input);
                    let started = Instant::now();
                    let hook = start_hook(&home, harness, &input, args, &[]);
                    wait_for_call(model, &marker);
                    let worker = worker_of(&hook);
                    signal(worker, sig);
                    if twice {
                        wait_for_default_action(worker, sig);
                        // Gone already is fine: the first one did it.
                        let _ = kill_process(Pid::from_raw(worker).unwrap(), sig);
                    }
                    let out = hook.wait_with_output().unwrap();
                    let what = format!("{path} {harness} {name}");
                    assert_eq!(out.status.code(), Some(0), "{what}");
                    let stdout = String::from_utf8(out.stdout).unwrap();
                    let reason = deny_reason(harness, &event, &stdout)
                        .unwrap_or_else(|e| panic!("{what}: {e}"));
                    assert!(
                        reason.starts_with("[vouch fault: internal] "),
                        "{what}: {reason}"
                    );
                    let number = sig.as_raw();
                    assert!(
                        reason.contains(&format!("killed by signal {number} ({name}")),
                        "{what}: {reason}"
                    );
                    // The worker's own deadline was 55 s away.
                    assert!(started.elapsed() < Duration::from_secs(20), "{what}");
                }
            });
        }
    });
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_signal_that_ends_the_worker_is_each_harness_fail_closed_reply() {
    let model = ModelServer::with_script(Script::always(Reply::hang())).await;
    let homes = tempfile::tempdir().unwrap();
    let config = hanging_config(&model.base_url());
    let home_for = |harness: &str| {
        let home = homes.path().join(harness);
        std::fs::create_dir_all(&home).unwrap();
        std::fs::write(home.join("config.toml"), &config).unwrap();
        home
    };
    tokio::task::block_in_place(|| {
        every_signal_is_each_harness_fail_closed_reply(&home_for, &[], &model, "local");
    });
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_signal_that_ends_a_remote_hooks_worker_is_each_harness_fail_closed_reply() {
    let model = ModelServer::with_script(Script::always(Reply::hang())).await;
    let service_home = tempfile::tempdir().unwrap();
    let service = Running::start(service_home.path(), &hanging_config(&model.base_url()), &[]);
    let token_file = service_home.path().join("state").join("adapter.token");
    let url = format!("http://{}", service.listen);
    let homes = tempfile::tempdir().unwrap();
    let home_for = |harness: &str| {
        let home = homes.path().join(harness);
        std::fs::create_dir_all(&home).unwrap();
        home
    };
    let token = token_file.to_str().unwrap().to_owned();
    let args = ["--server", url.as_str(), "--token-file", token.as_str()];
    tokio::task::block_in_place(|| {
        every_signal_is_each_harness_fail_closed_reply(&home_for, &args, &model, "remote");
    });
    service.stop();
}

/// A worker that stops (nothing inside it, its own watchdog included, can
/// answer) is answered by the supervisor just before the harness's own
/// timeout: `--timeout 3` with a 500 ms margin gives the worker until
/// 2.5 s, the supervisor until 2.75 s.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stopped_worker_is_answered_by_the_supervisors_deadline() {
    let model = ModelServer::with_script(Script::always(Reply::hang())).await;
    let home = tempfile::tempdir().unwrap();
    std::fs::write(
        home.path().join("config.toml"),
        format!(
            "{}[hooks]\ndeadline_margin_ms = 500\n",
            hanging_config(&model.base_url())
        ),
    )
    .unwrap();
    let harness = "codex";
    let input = shell_event(harness, "make stopped-marker");
    let started = Instant::now();
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_vouch"));
    cmd.args(["hook", harness, "--home"])
        .arg(home.path())
        .args(["--timeout", "3"])
        .env_clear()
        .env("HOME", home.path())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null());
    let mut hook = cmd.spawn().unwrap();
    hook.stdin
        .take()
        .unwrap()
        .write_all(input.to_string().as_bytes())
        .unwrap();
    tokio::task::block_in_place(|| {
        wait_for_call(&model, "stopped-marker");
        signal(worker_of(&hook), Signal::STOP);
        let out = hook.wait_with_output().unwrap();
        let elapsed = started.elapsed();
        assert_eq!(out.status.code(), Some(0));
        let stdout = String::from_utf8(out.stdout).unwrap();
        let reason = deny_reason(harness, "PreToolUse", &stdout).unwrap();
        assert!(
            reason.starts_with("[vouch fault: deadline] ")
                && reason.contains("did not answer within 2750 ms"),
            "{reason}"
        );
        assert!(elapsed >= Duration::from_millis(2700), "{elapsed:?}");
        assert!(elapsed < Duration::from_secs(3), "{elapsed:?}");
    });
}

/// The worker is the hook's own executable: a `vouch` on `PATH` (the
/// project can set the hook's environment) that would allow everything,
/// and variables that look like switches, change nothing.
#[test]
fn nothing_in_the_environment_chooses_or_switches_off_the_worker() {
    let home = tempfile::tempdir().unwrap();
    let bin = home.path().join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    let allow = json!({"reply": {"hookSpecificOutput": {"hookEventName": "PreToolUse",
        "permissionDecision": "allow", "permissionDecisionReason": "FAKE-WORKER"}}});
    let fake = format!("#!/bin/sh\ncat >/dev/null\necho '{allow}'\n");
    for name in ["vouch", "hook-worker"] {
        let path = bin.join(name);
        std::fs::write(&path, &fake).unwrap();
        std::fs::set_permissions(&path, std::os::unix::fs::PermissionsExt::from_mode(0o755))
            .unwrap();
    }
    let path = bin.display().to_string();
    let input = shell_event("claude-code", "rm -rf /");
    let hook = start_hook(
        home.path(),
        "claude-code",
        &input,
        &[],
        &[
            ("PATH", path.as_str()),
            ("VOUCH_HOOK_WORKER", path.as_str()),
            ("VOUCH_SUPERVISE", "0"),
            ("VOUCH_NO_SUPERVISOR", "1"),
            ("VOUCH_BIN", path.as_str()),
        ],
    );
    let out = hook.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    let stdout = String::from_utf8(out.stdout).unwrap();
    let reason = deny_reason("claude-code", "PreToolUse", &stdout).unwrap();
    assert!(reason.contains("Automatic policy denied"), "{reason}");
    assert!(!stdout.contains("FAKE-WORKER"), "{stdout}");
}

/// The inputs that aborted the decision (every wrapper, runner and
/// nesting construct, thousands deep around `rm -rf ~`) reach every
/// harness's worker, which answers each: the harness's deny (a hard deny,
/// or — incomplete, no model, `without_model = "human"`, `--defer-as
/// deny` — a deny saying a human must approve), never the supervisor's
/// fault reply for a worker that died, exit 0.
#[test]
fn the_deep_inputs_get_each_harness_deny_from_its_worker() {
    let cases = crate::support::deep::all_within(10_000, vouch::request::MAX_COMMAND_BYTES);
    let homes = tempfile::tempdir().unwrap();
    std::thread::scope(|scope| {
        for harness in every_harness() {
            let home = homes.path().join(harness);
            std::fs::create_dir_all(&home).unwrap();
            std::fs::write(
                home.join("config.toml"),
                "[reviewer]\nwithout_model = \"human\"\n",
            )
            .unwrap();
            let cases = &cases;
            scope.spawn(move || {
                for case in cases {
                    let input = shell_event(harness, &case.command);
                    let event = event_of(harness, &input);
                    let hook = start_hook(&home, harness, &input, &[], &[]);
                    let out = hook.wait_with_output().unwrap();
                    let what = format!("{harness}: {}", case.name);
                    assert_eq!(out.status.code(), Some(0), "{what}");
                    let stdout = String::from_utf8(out.stdout).unwrap();
                    let reason = deny_reason(harness, &event, &stdout)
                        .unwrap_or_else(|e| panic!("{what}: {e}"));
                    assert!(!reason.starts_with("[vouch fault"), "{what}: {reason}");
                }
            });
        }
    });
}

/// The same inputs through `vouch hook --server` (the floor is decided on
/// this machine first, then the central service): each answered by the
/// worker, the harness's deny.
#[test]
fn the_deep_inputs_through_a_remote_hook_get_the_deny_from_its_worker() {
    let cases = crate::support::deep::all_within(10_000, vouch::request::MAX_COMMAND_BYTES);
    let service_home = tempfile::tempdir().unwrap();
    let service = Running::start(
        service_home.path(),
        "[reviewer]\nwithout_model = \"human\"\n[server]\nrate_limit_per_second = 100000\n",
        &[],
    );
    let token_file = service_home.path().join("state").join("adapter.token");
    let url = format!("http://{}", service.listen);
    let token = token_file.to_str().unwrap().to_owned();
    let args = ["--server", url.as_str(), "--token-file", token.as_str()];
    let home = tempfile::tempdir().unwrap();
    // One harness takes every case; every harness takes a few.
    let every: Vec<(&str, &crate::support::deep::Case)> = cases
        .iter()
        .map(|c| ("claude-code", c))
        .chain(
            HARNESSES
                .iter()
                .flat_map(|h| cases.iter().step_by(40).map(move |c| (*h, c))),
        )
        .collect();
    for (harness, case) in every {
        let input = shell_event(harness, &case.command);
        let event = event_of(harness, &input);
        let out = start_hook(home.path(), harness, &input, &args, &[])
            .wait_with_output()
            .unwrap();
        let what = format!("{harness} --server: {}", case.name);
        assert_eq!(out.status.code(), Some(0), "{what}");
        let stdout = String::from_utf8(out.stdout).unwrap();
        let reason =
            deny_reason(harness, &event, &stdout).unwrap_or_else(|e| panic!("{what}: {e}"));
        assert!(!reason.starts_with("[vouch fault"), "{what}: {reason}");
    }
    service.stop();
}
