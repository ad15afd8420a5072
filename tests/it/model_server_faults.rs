//! The test model server against vouch's real reviewer client: every fault
//! it can script, in each wire format, ends in the decision the reviewer
//! contract says (design §6.5) — a named failure and a fail-closed decision,
//! never an allow caused by a fault — within the review deadline. Also the
//! server's own contract: queue before rules before default, the JSON script
//! and its errors, the control endpoints, and the runnable form
//! (`examples/model_server.rs`) that other test suites spawn.

use std::io::{BufRead, BufReader, Write};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tokio::task::JoinSet;

use crate::support::model_server::{
    Answer, Content, Declared, DropAt, ModelServer, Reply, Script, Stop, verdict,
};
use vouch::config::{Config, FailClosed, Provider};
use vouch::decision::ceiling;
use vouch::decision::{Decision, Outcome, Stage};
use vouch::reviewer::{
    FailureClass, ModelInput, ReviewOutcome, ReviewResult, Reviewer, http_client,
};

const PROVIDERS: [Provider; 3] = [Provider::Openai, Provider::Anthropic, Provider::Ollama];
/// Deadline of every review here: long enough for a retry, short enough
/// that a hang costs little.
const TIMEOUT_MS: u64 = 1500;

struct Run {
    result: ReviewResult,
    decision: Decision,
    elapsed: Duration,
}

impl Run {
    fn calls(&self) -> u32 {
        self.result.stats.calls
    }

    fn verdict(&self) -> Outcome {
        match &self.result.outcome {
            ReviewOutcome::Verdict(v) => v.outcome,
            ReviewOutcome::Failure(class) => panic!("expected a verdict, got {class:?}"),
        }
    }
}

fn config(provider: Provider, base_url: &str, timeout_ms: u64) -> Config {
    let mut config = Config::defaults().unwrap();
    config.reviewer.provider = provider;
    config.reviewer.base_url = base_url.to_owned();
    config.reviewer.timeout_ms = timeout_ms;
    config.reviewer.retries = 2;
    config.reviewer.api_key_env = String::new();
    config
}

/// One review by the real client, checked against what holds for every
/// review: within the deadline (+1 s), at most two calls, and a failure is
/// never an allow — not even under a configuration that allows wherever it
/// may.
async fn review(provider: Provider, base_url: String, timeout_ms: u64, user: &str) -> Run {
    let config = config(provider, &base_url, timeout_ms);
    let reviewer = Reviewer::new(&config.reviewer, http_client().unwrap(), None).unwrap();
    let started = Instant::now();
    let input = ModelInput {
        system: "judge the action",
        user,
    };
    let result = reviewer.review(input, 10).await;
    let elapsed = started.elapsed();
    let decision = ceiling::decide(&result, &config, "hash".into());
    assert!(
        elapsed <= Duration::from_millis(timeout_ms + 1000),
        "{provider:?}: review took {elapsed:?}"
    );
    assert!(result.stats.calls <= 2);
    if let ReviewOutcome::Failure(class) = result.outcome {
        assert_eq!(decision.outcome(), Outcome::Deny, "{provider:?} {class:?}");
        assert_eq!(decision.stage(), Stage::ReviewerFailure);
        assert!(decision.rationale().contains(class.name()));
        let mut permissive = config.clone();
        permissive.decision.on_risk_exceeded = Outcome::Allow;
        permissive.decision.on_uncertain = Outcome::Allow;
        permissive.decision.failure_mode = FailClosed::Defer;
        let d = ceiling::decide(&result, &permissive, "hash".into());
        assert_eq!(d.outcome(), Outcome::Defer);
    }
    Run {
        result,
        decision,
        elapsed,
    }
}

struct Case {
    name: &'static str,
    reply: Reply,
    class: FailureClass,
    calls: u32,
}

/// Every fault, as the server's answer to every call. The bodies that
/// faults cut or drip carry an allow, so a client that read a fault as an
/// answer would allow.
fn fault_cases() -> Vec<Case> {
    let case = |name, reply, class, calls| Case {
        name,
        reply,
        class,
        calls,
    };
    vec![
        case("500", Reply::status(500), FailureClass::Http5xx, 2),
        case("529", Reply::status(529), FailureClass::Http5xx, 2),
        case("429", Reply::status(429), FailureClass::RateLimited, 2),
        case(
            "429 quota",
            Reply::status_error(429, "insufficient_quota"),
            FailureClass::Quota,
            1,
        ),
        case(
            "503 retry-after 30",
            Reply::status(503).header("retry-after", "30"),
            FailureClass::RetryAfterTooLong,
            1,
        ),
        case(
            "429 retry-after date",
            Reply::status(429).retry_after_date_in(Duration::from_secs(60)),
            FailureClass::RetryAfterTooLong,
            1,
        ),
        case(
            "429 retry-after unparseable",
            Reply::status(429).header("retry-after", "soon"),
            FailureClass::RateLimited,
            1,
        ),
        case("401", Reply::status(401), FailureClass::Auth, 1),
        case("404", Reply::status(404), FailureClass::ClientError(404), 1),
        case(
            "garbage",
            Reply::garbage(),
            FailureClass::MalformedResponse,
            1,
        ),
        case(
            "truncate, correct length",
            Reply::truncate(Declared::Correct),
            FailureClass::MalformedResponse,
            1,
        ),
        case(
            "truncate, wrong length",
            Reply::truncate(Declared::Wrong),
            FailureClass::Timeout,
            1,
        ),
        case(
            "drop before any byte",
            Reply::drop_at(DropAt::BeforeAnyByte),
            FailureClass::Connect,
            2,
        ),
        case(
            "drop mid-headers",
            Reply::drop_at(DropAt::MidHeaders),
            FailureClass::Connect,
            2,
        ),
        case(
            "drop mid-body",
            Reply::drop_at(DropAt::MidBody),
            FailureClass::Connect,
            2,
        ),
        case(
            "slow drip past the deadline",
            Reply::slow_drip(1, Duration::from_millis(50)),
            FailureClass::Timeout,
            1,
        ),
        case("hang", Reply::hang(), FailureClass::Timeout, 1),
        case(
            "delay past the deadline",
            Reply::allow().delayed(Duration::from_secs(5)),
            FailureClass::Timeout,
            1,
        ),
        case(
            "max tokens",
            Reply::allow().stop(Stop::MaxTokens),
            FailureClass::Truncated,
            1,
        ),
        case(
            "schema-invalid verdict",
            Reply::verdict(json!({"outcome": "allow"})),
            FailureClass::SchemaInvalid,
            2,
        ),
        case(
            "empty output",
            Reply::text(""),
            FailureClass::EmptyOutput,
            2,
        ),
    ]
}

/// Runs every fault case against `provider`, concurrently (each has its own
/// server), and checks class, call count and the fail-closed decision.
async fn every_fault_fails_closed(provider: Provider) {
    let mut runs = JoinSet::new();
    for case in fault_cases() {
        runs.spawn(async move {
            let server = ModelServer::with_script(Script::always(case.reply)).await;
            let run = review(provider, server.base_url(), TIMEOUT_MS, "rm -rf build").await;
            assert_eq!(server.requests().len() as u32, run.calls());
            (case.name, case.class, case.calls, run)
        });
    }
    while let Some(done) = runs.join_next().await {
        let (name, class, calls, run) = done.unwrap();
        assert_eq!(
            run.result.outcome,
            ReviewOutcome::Failure(class),
            "{provider:?} {name}"
        );
        assert_eq!(run.calls(), calls, "{provider:?} {name}");
        assert_eq!(run.decision.outcome(), Outcome::Deny, "{provider:?} {name}");
    }
}

#[tokio::test]
async fn every_fault_fails_closed_openai() {
    every_fault_fails_closed(Provider::Openai).await;
}

#[tokio::test]
async fn every_fault_fails_closed_anthropic() {
    every_fault_fails_closed(Provider::Anthropic).await;
}

#[tokio::test]
async fn every_fault_fails_closed_ollama() {
    every_fault_fails_closed(Provider::Ollama).await;
}

/// A refusal reads as one in OpenAI and Anthropic; Ollama has no refusal
/// field, so its refusal prose is not a verdict (retried once with the
/// correction, then a failure).
#[tokio::test]
async fn refusals_fail_closed_in_each_format() {
    for (provider, class, calls) in [
        (Provider::Openai, FailureClass::Refusal, 1),
        (Provider::Anthropic, FailureClass::Refusal, 1),
        (Provider::Ollama, FailureClass::InvalidJson, 2),
    ] {
        let server =
            ModelServer::with_script(Script::always(Reply::allow().stop(Stop::Refusal))).await;
        let run = review(provider, server.base_url(), TIMEOUT_MS, "x").await;
        assert_eq!(
            run.result.outcome,
            ReviewOutcome::Failure(class),
            "{provider:?}"
        );
        assert_eq!(run.calls(), calls, "{provider:?}");
    }
}

/// After a retryable fault the retry gets the next reply in the queue, after
/// whatever wait the provider asked for (seconds, HTTP-date or
/// `retry-after-ms`).
#[tokio::test]
async fn a_retryable_fault_then_a_verdict() {
    let deny = || Reply::verdict(verdict("deny", "high"));
    let cases = [
        (Reply::status(503), Duration::ZERO),
        (Reply::drop_at(DropAt::MidBody), Duration::ZERO),
        (
            Reply::status(429).header("retry-after", "1"),
            Duration::from_millis(950),
        ),
        (
            Reply::status(429).header("retry-after-ms", "300"),
            Duration::from_millis(290),
        ),
        // One-second resolution: the wait is between 1 and 2 s.
        (
            Reply::status(529).retry_after_date_in(Duration::from_secs(2)),
            Duration::from_millis(900),
        ),
    ];
    for provider in [Provider::Openai, Provider::Anthropic] {
        for (fault, wait) in cases.clone() {
            let server = ModelServer::start(vec![fault.clone(), deny()]).await;
            let run = review(provider, server.base_url(), 5000, "git push --force").await;
            assert_eq!(run.verdict(), Outcome::Deny, "{provider:?} {fault:?}");
            assert_eq!(run.calls(), 2);
            assert_eq!(run.decision.stage(), Stage::Reviewer);
            assert!(
                run.elapsed >= wait,
                "{provider:?} {fault:?}: {:?}",
                run.elapsed
            );
            assert_eq!(server.unused_steps(), 0);
        }
    }
}

/// A slow drip that finishes inside the deadline is a whole, valid reply:
/// what the faults cut is a real envelope.
#[tokio::test]
async fn a_slow_drip_inside_the_deadline_is_an_answer() {
    for provider in PROVIDERS {
        let drip = Reply::slow_drip(64, Duration::from_millis(10)).with_answer(Answer {
            content: Content::Verdict(verdict("defer", "medium")),
            ..Answer::default()
        });
        let server = ModelServer::with_script(Script::always(drip)).await;
        let run = review(provider, server.base_url(), 5000, "x").await;
        assert_eq!(run.verdict(), Outcome::Defer, "{provider:?}");
        assert_eq!(run.result.stats.input_tokens, 100);
        assert_eq!(run.result.stats.output_tokens, 20);
    }
}

/// Content rules pick the reply by what the request says; the queue comes
/// first, and what no rule matches gets the default.
#[tokio::test]
async fn rules_choose_by_request_content() {
    let script = Script::queue(vec![Reply::status(500), Reply::status(500)])
        .rule("rm -rf", Reply::verdict(verdict("deny", "critical")))
        .rule("STALL-HERE", Reply::hang());
    let script = Script {
        default: Reply::verdict(verdict("allow", "low")),
        ..script
    };
    let server = ModelServer::with_script(script).await;
    let url = server.base_url();
    // The queue answers first, whatever the content: two 500s.
    let run = review(Provider::Openai, url.clone(), TIMEOUT_MS, "ls").await;
    assert_eq!(
        run.result.outcome,
        ReviewOutcome::Failure(FailureClass::Http5xx)
    );
    let run = review(Provider::Anthropic, url.clone(), TIMEOUT_MS, "rm -rf /").await;
    assert_eq!(run.verdict(), Outcome::Deny);
    assert!(
        run.decision.message().contains("break-glass"),
        "{}",
        run.decision.message()
    );
    let run = review(Provider::Ollama, url.clone(), TIMEOUT_MS, "ls -la").await;
    assert_eq!(run.verdict(), Outcome::Allow);
    assert_eq!(run.decision.outcome(), Outcome::Allow);
    let run = review(Provider::Openai, url, TIMEOUT_MS, "echo STALL-HERE").await;
    assert_eq!(
        run.result.outcome,
        ReviewOutcome::Failure(FailureClass::Timeout)
    );
    let paths: Vec<String> = server.requests().into_iter().map(|r| r.path).collect();
    assert_eq!(
        paths,
        [
            "/v1/chat/completions",
            "/v1/chat/completions",
            "/v1/messages",
            "/v1/chat/completions",
            "/v1/chat/completions",
        ]
    );
}

/// The script over HTTP, the recorded requests, and clearing them.
#[tokio::test]
async fn control_endpoints() {
    let server = ModelServer::start(vec![]).await;
    let client = reqwest::Client::new();
    let script = json!({
        "default": {"fault": "status", "status": 503, "retry_after": 30},
        "rules": [{"contains": "make deploy", "reply": {"verdict": verdict("deny", "high"), "usage": {"input_tokens": 7, "output_tokens": 3}}}],
    });
    let response = client
        .post(format!("{}/_script", server.url()))
        .json(&script)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);

    let run = review(
        Provider::Anthropic,
        server.base_url(),
        TIMEOUT_MS,
        "make deploy",
    )
    .await;
    assert_eq!(run.verdict(), Outcome::Deny);
    assert_eq!(run.result.stats.input_tokens, 7);
    let run = review(Provider::Openai, server.base_url(), TIMEOUT_MS, "make test").await;
    assert_eq!(
        run.result.outcome,
        ReviewOutcome::Failure(FailureClass::RetryAfterTooLong)
    );

    let response = client
        .get(format!("{}/_requests", server.url()))
        .send()
        .await
        .unwrap();
    assert_eq!(response.headers()["x-model-server-evicted"], "0");
    let listed: Value = response.json().await.unwrap();
    let listed = listed.as_array().unwrap();
    assert_eq!(listed.len(), 2);
    assert_eq!(listed[0]["method"], "POST");
    assert_eq!(listed[0]["path"], "/v1/messages");
    assert_eq!(listed[0]["headers"]["anthropic-version"], "2023-06-01");
    let body: Value = serde_json::from_str(listed[0]["body"].as_str().unwrap()).unwrap();
    assert_eq!(body["messages"][0]["content"], "make deploy");
    assert_eq!(listed[1]["path"], "/v1/chat/completions");

    let cleared: Value = client
        .delete(format!("{}/_requests", server.url()))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(cleared["cleared"], 2);
    assert!(server.requests().is_empty());

    let bad = client
        .post(format!("{}/_script", server.url()))
        .body(r#"{"default": {"fault": "hang", "status": 500}}"#)
        .send()
        .await
        .unwrap();
    assert_eq!(bad.status(), 400);
    let text = bad.text().await.unwrap();
    assert!(
        text.contains("`status` has no meaning for fault `hang`"),
        "{text}"
    );
    let missing = client
        .get(format!("{}/_nothing", server.url()))
        .send()
        .await
        .unwrap();
    assert_eq!(missing.status(), 404);
}

/// The record is bounded, and what it drops is counted.
#[tokio::test]
async fn the_record_is_bounded_and_counts_evictions() {
    let server = ModelServer::with_script(Script::default()).await;
    server.set_max_recorded(2);
    for user in ["one", "two", "three"] {
        review(Provider::Openai, server.base_url(), TIMEOUT_MS, user).await;
    }
    let kept: Vec<String> = server
        .requests()
        .into_iter()
        .map(|r| {
            r.body["messages"][1]["content"]
                .as_str()
                .unwrap()
                .to_owned()
        })
        .collect();
    assert_eq!(kept, ["two", "three"]);
    assert_eq!(server.evicted(), 1);
}

#[test]
fn script_errors_name_the_key() {
    let err = |text: &str| Script::from_json(text.as_bytes()).unwrap_err().to_string();
    for (script, expected) in [
        (r#"{"defualt": {}}"#, "unknown field `defualt`"),
        (
            r#"{"rules": [{"contains": "x", "reply": {"verdikt": 1}}]}"#,
            "at `rules[0].reply.verdikt`: unknown field",
        ),
        (
            r#"{"rules": [{"contains": "", "reply": {}}]}"#,
            "at `rules[0].contains`: must not be empty",
        ),
        (
            r#"{"queue": [{}, {"fault": "explode"}]}"#,
            "at `queue[1].fault`",
        ),
        (
            r#"{"default": {"verdict": {}, "text": "x"}}"#,
            "`verdict` and `text` exclude each other",
        ),
        (
            r#"{"default": {"fault": "garbage", "verdict": {}}}"#,
            "`verdict` has no meaning for fault `garbage`",
        ),
        (
            r#"{"default": {"fault": "drop", "retry_after": 1}}"#,
            "`retry_after` has no meaning for fault `drop`",
        ),
        (
            r#"{"default": {"fault": "status", "status": 700}}"#,
            "`status` = `700` is not an HTTP status",
        ),
        (
            r#"{"default": {"fault": "slow_drip", "chunk_bytes": 0}}"#,
            "`chunk_bytes` must be at least 1",
        ),
        (
            r#"{"default": {"raw": "x", "headers": {"bad name": "v"}}}"#,
            "header `bad name`",
        ),
        (r#"{"default": {}} trailing"#, "after the script"),
    ] {
        let message = err(script);
        assert!(message.contains(expected), "{script}: {message}");
    }
    let parsed = Script::from_json(
        br#"{"default": {"fault": "drop", "at": "mid_body", "verdict": {"outcome": "deny"}}}"#,
    )
    .unwrap();
    assert_eq!(
        parsed.default,
        Reply::drop_at(DropAt::MidBody).with_answer(Answer {
            content: Content::Verdict(json!({"outcome": "deny"})),
            ..Answer::default()
        })
    );
    assert_eq!(Script::from_json(b"{}").unwrap(), Script::default());
}

// ------------------------------------------------------- the runnable form

/// `target/<profile>/examples/model_server`, which `cargo test` builds.
fn example_binary() -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    let profile_dir = exe.parent().and_then(|deps| deps.parent()).unwrap();
    let binary = profile_dir.join("examples").join("model_server");
    assert!(
        binary.exists(),
        "{} is missing: `cargo test` builds it; after a filtered run, `cargo build --release --example model_server`",
        binary.display()
    );
    binary
}

/// Spawns the example and reads its first stdout line.
fn spawn_example(args: &[&str]) -> (Child, String) {
    let mut child = Command::new(example_binary())
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let stdout = child.stdout.take().unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut line = String::new();
        let _ = BufReader::new(stdout).read_line(&mut line);
        let _ = tx.send(line);
    });
    let line = rx
        .recv_timeout(Duration::from_secs(20))
        .expect("no first line");
    (child, line.trim_end().to_owned())
}

fn wait_exit(child: &mut Child, within: Duration) -> std::process::ExitStatus {
    let deadline = Instant::now() + within;
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            return status;
        }
        assert!(Instant::now() < deadline, "the example did not exit");
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[tokio::test]
async fn the_example_serves_a_script_file_and_stops_at_end_of_stdin() {
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("script.json");
    std::fs::write(
        &script,
        json!({"rules": [{"contains": "curl", "reply": {"fault": "drop"}}]}).to_string(),
    )
    .unwrap();
    let (mut child, line) = spawn_example(&[
        "--listen",
        "127.0.0.1:0",
        "--script",
        script.to_str().unwrap(),
    ]);
    let port = line
        .strip_prefix("listening http://127.0.0.1:")
        .unwrap_or_else(|| panic!("first line: {line:?}"));
    assert!(port.parse::<u16>().unwrap() > 0);
    let base_url = format!("http://127.0.0.1:{port}/v1");

    let run = review(Provider::Openai, base_url.clone(), TIMEOUT_MS, "ls").await;
    assert_eq!(
        run.verdict(),
        Outcome::Allow,
        "no default: allow at low risk"
    );
    let run = review(
        Provider::Anthropic,
        base_url.clone(),
        TIMEOUT_MS,
        "curl x | sh",
    )
    .await;
    assert_eq!(
        run.result.outcome,
        ReviewOutcome::Failure(FailureClass::Connect)
    );
    let listed: Value = reqwest::get(format!("http://127.0.0.1:{port}/_requests"))
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(listed.as_array().unwrap().len(), 3);

    drop(child.stdin.take());
    let status = wait_exit(&mut child, Duration::from_secs(5));
    assert!(status.success(), "{status:?}");
    let mut stderr = String::new();
    std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut stderr).unwrap();
    assert!(stderr.contains("end of stdin"), "{stderr}");
}

#[test]
fn the_example_stops_on_sigterm_and_refuses_bad_input() {
    let (mut child, line) = spawn_example(&["--listen", "127.0.0.1:0"]);
    assert!(line.starts_with("listening http://127.0.0.1:"), "{line}");
    let killed = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(killed.success());
    let status = wait_exit(&mut child, Duration::from_secs(5));
    assert!(status.success(), "{status:?}");

    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("bad.json");
    std::fs::File::create(&script)
        .unwrap()
        .write_all(br#"{"default": {"fault": "hang", "delay_ms": "soon"}}"#)
        .unwrap();
    for (args, expected) in [
        (
            vec!["--script", script.to_str().unwrap()],
            "at `default.delay_ms`",
        ),
        (vec!["--listen", "0.0.0.0:0"], "loopback"),
    ] {
        let out = Command::new(example_binary())
            .args(&args)
            .stdin(Stdio::null())
            .output()
            .unwrap();
        assert!(!out.status.success(), "{args:?}");
        assert!(out.stdout.is_empty(), "{args:?}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stderr.contains(expected), "{args:?}: {stderr}");
    }
}
