//! End-to-end tests of the reviewer client against real HTTP servers on
//! 127.0.0.1:0 speaking each provider's wire format, scripted per test.
//!
//! Every test checks what the server saw (number of calls, body shape,
//! headers), the outcome or failure class, the decision the host rules make
//! of it, that the whole review stayed within its deadline (+1 s slack), that
//! no fault became an allow, and that the captured tracing output holds
//! neither the API key nor prompt, response or provider-error text.

use std::io::Write;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime};

use serde_json::{Value, json};

use crate::support::model_server::{DropAt, ModelServer, Recorded, Step};
use vouch::config::{Config, FailClosed, Provider};
use vouch::decision::ceiling;
use vouch::decision::{Decision, Outcome, Stage};
use vouch::reviewer::wire::FORMAT_CORRECTION;
use vouch::reviewer::{
    FailureClass, ModelInput, ReviewOutcome, ReviewResult, Reviewer, api_key_from_env, http_client,
};

const KEY_ENV: &str = "VOUCH_TEST_REVIEWER_KEY";
const KEY: &str = "sk-test-KEYMARKER-4f9a2c71d0";
const SYSTEM: &str = "SYSTEM-PROMPT-MARKER judge the action below";
const USER: &str = "USER-EVIDENCE-MARKER rm -rf build";
const RATIONALE: &str = "RATIONALE-MARKER the user asked to clean build";
const ERROR_TEXT: &str = "PROVIDER-ERROR-MARKER";
const PACKET_ESTIMATE: u64 = 321;

fn verdict(outcome: &str, risk: &str) -> Value {
    json!({
        "outcome": outcome,
        "risk_level": risk,
        "user_authorization": "high",
        "rationale": RATIONALE,
        "suggestion": null,
    })
}

fn allow_low() -> Value {
    verdict("allow", "low")
}

fn chat(content: Value, finish_reason: &str) -> Value {
    json!({
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "model": "codex-auto-review",
        "choices": [{
            "index": 0,
            "message": {"role": "assistant", "content": content, "refusal": null},
            "finish_reason": finish_reason,
        }],
        "usage": {"prompt_tokens": 400, "completion_tokens": 40, "total_tokens": 440},
    })
}

fn chat_ok(v: &Value) -> Step {
    Step::json(200, chat(Value::String(v.to_string()), "stop"))
}

fn chat_text(text: &str) -> Step {
    Step::json(200, chat(Value::String(text.into()), "stop"))
}

fn messages(content: Value, stop_reason: &str) -> Value {
    json!({
        "id": "msg_1",
        "type": "message",
        "role": "assistant",
        "model": "claude-test",
        "content": content,
        "stop_reason": stop_reason,
        "usage": {"input_tokens": 500, "output_tokens": 60},
    })
}

fn messages_ok(input: &Value) -> Step {
    Step::json(
        200,
        messages(
            json!([{"type": "tool_use", "id": "toolu_1", "name": "submit_verdict", "input": input}]),
            "tool_use",
        ),
    )
}

fn error_step(status: u16, code: &str) -> Step {
    Step::json(
        status,
        json!({"error": {"message": format!("{ERROR_TEXT} {code}"), "type": code, "code": code}}),
    )
}

/// A buffer the test subscriber writes into.
#[derive(Clone, Default)]
struct Captured(Arc<Mutex<Vec<u8>>>);

impl Write for Captured {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

struct Setup {
    provider: Provider,
    base_url: String,
    timeout_ms: u64,
    retries: u32,
    with_key: bool,
}

impl Setup {
    fn new(provider: Provider, base_url: String) -> Setup {
        Setup {
            provider,
            base_url,
            timeout_ms: 5000,
            retries: 2,
            with_key: true,
        }
    }
    fn timeout_ms(mut self, ms: u64) -> Setup {
        self.timeout_ms = ms;
        self
    }
    fn retries(mut self, n: u32) -> Setup {
        self.retries = n;
        self
    }
    fn without_key(mut self) -> Setup {
        self.with_key = false;
        self
    }

    async fn run(self) -> Run {
        let captured = Captured::default();
        let sink = captured.clone();
        let subscriber = tracing_subscriber::fmt()
            .json()
            .with_max_level(tracing::Level::TRACE)
            .with_writer(move || sink.clone())
            .finish();
        let _guard = tracing::subscriber::set_default(subscriber);

        let mut config = Config::defaults().unwrap();
        config.reviewer.provider = self.provider;
        config.reviewer.base_url = self.base_url;
        config.reviewer.timeout_ms = self.timeout_ms;
        config.reviewer.retries = self.retries;
        config.reviewer.api_key_env = KEY_ENV.into();
        let with_key = self.with_key;
        let lookup = move |name: &str| (with_key && name == KEY_ENV).then(|| KEY.to_owned());
        let key = api_key_from_env(&config.reviewer, &lookup);
        let reviewer = Reviewer::new(&config.reviewer, http_client().unwrap(), key).unwrap();

        let started = Instant::now();
        let input = ModelInput {
            system: SYSTEM,
            user: USER,
        };
        let result = reviewer.review(input, PACKET_ESTIMATE).await;
        let elapsed = started.elapsed();
        let decision = ceiling::decide(&result, &config, "hash-1".into());
        let logs = String::from_utf8(captured.0.lock().unwrap().clone()).unwrap();
        let run = Run {
            result,
            decision,
            elapsed,
            logs,
            config,
        };
        run.check_invariants();
        run
    }
}

struct Run {
    result: ReviewResult,
    decision: Decision,
    elapsed: Duration,
    logs: String,
    config: Config,
}

impl Run {
    /// What must hold for every review, whatever the script.
    fn check_invariants(&self) {
        let limit = Duration::from_millis(self.config.reviewer.timeout_ms + 1000);
        assert!(
            self.elapsed <= limit,
            "review took {:?}, over the deadline",
            self.elapsed
        );
        assert!(self.result.stats.calls <= 2, "more than two model calls");
        assert_eq!(self.result.stats.packet_tokens_estimate, PACKET_ESTIMATE);
        assert_eq!(self.result.stats.model, "codex-auto-review");
        for (secret, what) in [
            (KEY, "the API key"),
            (SYSTEM, "system prompt text"),
            (USER, "user prompt text"),
            (RATIONALE, "response text"),
            (ERROR_TEXT, "provider error text"),
        ] {
            assert!(
                !self.logs.contains(secret),
                "{what} leaked into tracing output"
            );
        }
        let attempts = self.logs.matches(r#""event":"review_attempt""#).count();
        let completes = self.logs.matches(r#""event":"review_complete""#).count();
        assert_eq!(attempts as u32, self.result.stats.calls, "{}", self.logs);
        assert_eq!(completes, 1, "{}", self.logs);
        if let ReviewOutcome::Failure(class) = self.result.outcome {
            assert_ne!(self.decision.outcome(), Outcome::Allow);
            assert!(
                self.logs
                    .contains(&format!(r#""failure_class":"{}""#, class.name())),
                "{}",
                self.logs
            );
            // Even a configuration that allows wherever it may never turns a
            // fault into an allow.
            let mut permissive = self.config.clone();
            permissive.decision.on_risk_exceeded = Outcome::Allow;
            permissive.decision.on_uncertain = Outcome::Allow;
            permissive.decision.failure_mode = FailClosed::Defer;
            let d = ceiling::decide(&self.result, &permissive, "h".into());
            assert_eq!(d.outcome(), Outcome::Defer);
            assert_eq!(d.stage(), Stage::ReviewerFailure);
        }
    }

    fn expect_failure(&self, class: FailureClass, calls: u32) {
        assert_eq!(self.result.outcome, ReviewOutcome::Failure(class));
        assert_eq!(self.result.stats.calls, calls);
        assert_eq!(self.decision.outcome(), Outcome::Deny);
        assert_eq!(self.decision.stage(), Stage::ReviewerFailure);
        assert!(self.decision.rationale().contains(class.name()));
        assert!(self.decision.message().contains("could not complete"));
    }

    fn expect_verdict(&self, outcome: Outcome, stage: Stage, calls: u32) {
        match &self.result.outcome {
            ReviewOutcome::Verdict(v) => assert_eq!(v.rationale, RATIONALE),
            ReviewOutcome::Failure(class) => panic!("expected a verdict, got {class:?}"),
        }
        assert_eq!(self.result.stats.calls, calls);
        assert_eq!(self.decision.outcome(), outcome);
        assert_eq!(self.decision.stage(), stage);
        assert_eq!(self.decision.review().unwrap().calls, calls);
    }
}

fn assert_openai_request(r: &Recorded) {
    assert_eq!(r.path, "/v1/chat/completions");
    assert_eq!(
        r.headers.get("authorization").unwrap(),
        &format!("Bearer {KEY}")
    );
    assert!(r.headers.get("x-api-key").is_none());
    assert_key_only_in(r, "authorization");
    let b = &r.body;
    assert_eq!(b["model"], "codex-auto-review");
    assert_eq!(b["max_completion_tokens"], 256);
    assert!(b.get("max_tokens").is_none());
    assert_eq!(b["temperature"], 0);
    assert_eq!(b["response_format"]["type"], "json_schema");
    assert_eq!(b["response_format"]["json_schema"]["name"], "verdict");
    assert_eq!(b["response_format"]["json_schema"]["strict"], true);
    assert_eq!(
        b["response_format"]["json_schema"]["schema"]["additionalProperties"],
        false
    );
    assert_eq!(
        b["messages"][0],
        json!({"role": "system", "content": SYSTEM})
    );
    assert_eq!(b["messages"][1], json!({"role": "user", "content": USER}));
}

fn assert_key_only_in(r: &Recorded, header: &str) {
    assert!(!r.raw_body.contains(KEY), "key in the request body");
    for (name, value) in &r.headers {
        if name.as_str() != header {
            assert!(
                !value.to_str().unwrap_or("").contains(KEY),
                "key in header {name}"
            );
        }
    }
}

/// The second request repeats the first and appends the fixed correction.
fn assert_correction_appended(first: &Recorded, second: &Recorded) {
    let m1 = first.body["messages"].as_array().unwrap();
    let m2 = second.body["messages"].as_array().unwrap();
    assert!(!first.raw_body.contains("not a valid verdict"));
    assert_eq!(m2.len(), m1.len() + 1);
    assert_eq!(&m2[..m1.len()], &m1[..]);
    assert_eq!(
        m2.last().unwrap(),
        &json!({"role": "user", "content": FORMAT_CORRECTION})
    );
}

// ---------------------------------------------------------------- openai

#[tokio::test]
async fn openai_happy_path() {
    let server = ModelServer::start(vec![chat_ok(&allow_low())]).await;
    let run = Setup::new(Provider::Openai, server.base_url()).run().await;
    run.expect_verdict(Outcome::Allow, Stage::Reviewer, 1);
    let reqs = server.requests();
    assert_eq!(reqs.len(), 1);
    assert_openai_request(&reqs[0]);
    assert_eq!(reqs[0].body["messages"].as_array().unwrap().len(), 2);
    let stats = &run.result.stats;
    assert_eq!((stats.input_tokens, stats.output_tokens), (400, 40));
    assert!(run.logs.contains(r#""outcome":"allow""#));
}

#[tokio::test]
async fn openai_model_denial_and_ceiling() {
    let server = ModelServer::start(vec![
        chat_ok(&verdict("deny", "high")),
        chat_ok(&verdict("allow", "critical")),
    ])
    .await;
    let run = Setup::new(Provider::Openai, server.base_url()).run().await;
    run.expect_verdict(Outcome::Deny, Stage::Reviewer, 1);
    assert!(run.decision.message().contains("vouch approve"));
    let run = Setup::new(Provider::Openai, server.base_url()).run().await;
    run.expect_verdict(Outcome::Defer, Stage::RiskCeiling, 1);
    assert_eq!(server.requests().len(), 2);
}

#[tokio::test]
async fn server_error_then_success_retries_once() {
    let server =
        ModelServer::start(vec![error_step(500, "server_error"), chat_ok(&allow_low())]).await;
    let run = Setup::new(Provider::Openai, server.base_url()).run().await;
    run.expect_verdict(Outcome::Allow, Stage::Reviewer, 2);
    let reqs = server.requests();
    assert_eq!(reqs.len(), 2);
    // A transport retry resends the same body, without the correction.
    assert_eq!(reqs[0].body, reqs[1].body);
    assert!(run.logs.contains(r#""http_status":500"#));
}

#[tokio::test]
async fn server_error_twice_fails_closed() {
    let server = ModelServer::start(vec![
        error_step(503, "overloaded"),
        error_step(502, "bad_gateway"),
        chat_ok(&allow_low()),
    ])
    .await;
    let run = Setup::new(Provider::Openai, server.base_url()).run().await;
    run.expect_failure(FailureClass::Http5xx, 2);
    assert_eq!(server.requests().len(), 2);
}

#[tokio::test]
async fn server_error_with_long_retry_after_fails_closed_without_waiting() {
    let server = ModelServer::start(vec![
        error_step(503, "overloaded").header("retry-after", "120"),
        chat_ok(&allow_low()),
    ])
    .await;
    let run = Setup::new(Provider::Openai, server.base_url()).run().await;
    run.expect_failure(FailureClass::RetryAfterTooLong, 1);
    assert!(
        run.elapsed < Duration::from_millis(900),
        "{:?}",
        run.elapsed
    );
}

#[tokio::test]
async fn retries_zero_means_one_call() {
    let server =
        ModelServer::start(vec![error_step(500, "server_error"), chat_ok(&allow_low())]).await;
    let run = Setup::new(Provider::Openai, server.base_url())
        .retries(0)
        .run()
        .await;
    run.expect_failure(FailureClass::Http5xx, 1);
    assert_eq!(server.requests().len(), 1);
}

#[tokio::test]
async fn rate_limited_with_short_retry_after_waits_then_retries() {
    let server = ModelServer::start(vec![
        error_step(429, "rate_limit_exceeded").header("retry-after", "1"),
        chat_ok(&allow_low()),
    ])
    .await;
    let run = Setup::new(Provider::Openai, server.base_url()).run().await;
    run.expect_verdict(Outcome::Allow, Stage::Reviewer, 2);
    assert_eq!(server.requests().len(), 2);
    assert!(
        run.elapsed >= Duration::from_millis(950),
        "{:?}",
        run.elapsed
    );
}

#[tokio::test]
async fn rate_limited_with_long_retry_after_fails_closed_without_waiting() {
    let server = ModelServer::start(vec![
        error_step(429, "rate_limit_exceeded").header("retry-after", "30"),
        chat_ok(&allow_low()),
    ])
    .await;
    let run = Setup::new(Provider::Openai, server.base_url()).run().await;
    run.expect_failure(FailureClass::RetryAfterTooLong, 1);
    assert_eq!(server.requests().len(), 1);
    assert!(
        run.elapsed < Duration::from_millis(900),
        "{:?}",
        run.elapsed
    );
}

#[tokio::test]
async fn retry_after_within_ceiling_but_past_the_deadline_fails_closed() {
    let server = ModelServer::start(vec![
        error_step(429, "rate_limit_exceeded").header("retry-after", "3"),
        chat_ok(&allow_low()),
    ])
    .await;
    let run = Setup::new(Provider::Openai, server.base_url())
        .timeout_ms(2000)
        .run()
        .await;
    run.expect_failure(FailureClass::RetryAfterTooLong, 1);
    assert!(
        run.elapsed < Duration::from_millis(900),
        "{:?}",
        run.elapsed
    );
}

#[tokio::test]
async fn rate_limited_with_http_date_retry_after() {
    let when = httpdate::fmt_http_date(SystemTime::now() + Duration::from_secs(2));
    let server = ModelServer::start(vec![
        error_step(429, "rate_limit_exceeded").header("retry-after", when),
        chat_ok(&allow_low()),
    ])
    .await;
    let run = Setup::new(Provider::Openai, server.base_url()).run().await;
    run.expect_verdict(Outcome::Allow, Stage::Reviewer, 2);
    assert_eq!(server.requests().len(), 2);
    // The date has one-second resolution: the wait is between 1 and 2 s.
    assert!(
        run.elapsed >= Duration::from_millis(900),
        "{:?}",
        run.elapsed
    );

    let far = httpdate::fmt_http_date(SystemTime::now() + Duration::from_secs(120));
    let server = ModelServer::start(vec![
        error_step(429, "rate_limit_exceeded").header("retry-after", far),
        chat_ok(&allow_low()),
    ])
    .await;
    let run = Setup::new(Provider::Openai, server.base_url()).run().await;
    run.expect_failure(FailureClass::RetryAfterTooLong, 1);
}

#[tokio::test]
async fn rate_limited_with_retry_after_ms() {
    let server = ModelServer::start(vec![
        error_step(429, "rate_limit_exceeded")
            .header("retry-after-ms", "400")
            .header("retry-after", "60"),
        chat_ok(&allow_low()),
    ])
    .await;
    let run = Setup::new(Provider::Openai, server.base_url()).run().await;
    run.expect_verdict(Outcome::Allow, Stage::Reviewer, 2);
    assert!(
        run.elapsed >= Duration::from_millis(380),
        "{:?}",
        run.elapsed
    );
    assert!(run.elapsed < Duration::from_secs(3), "{:?}", run.elapsed);
}

#[tokio::test]
async fn rate_limited_without_retry_after_retries_at_once() {
    let server = ModelServer::start(vec![
        error_step(429, "rate_limit_exceeded"),
        error_step(429, "rate_limit_exceeded"),
    ])
    .await;
    let run = Setup::new(Provider::Openai, server.base_url()).run().await;
    run.expect_failure(FailureClass::RateLimited, 2);
    assert_eq!(server.requests().len(), 2);
}

#[tokio::test]
async fn quota_error_is_not_retried() {
    let server = ModelServer::start(vec![
        error_step(429, "insufficient_quota").header("retry-after", "1"),
        chat_ok(&allow_low()),
    ])
    .await;
    let run = Setup::new(Provider::Openai, server.base_url()).run().await;
    run.expect_failure(FailureClass::Quota, 1);
    assert_eq!(server.requests().len(), 1);
}

#[tokio::test]
async fn unauthorized_is_not_retried() {
    let server = ModelServer::start(vec![
        error_step(401, "invalid_api_key"),
        chat_ok(&allow_low()),
    ])
    .await;
    let run = Setup::new(Provider::Openai, server.base_url()).run().await;
    run.expect_failure(FailureClass::Auth, 1);
    assert_eq!(server.requests().len(), 1);
    assert!(run.decision.rationale().contains("api_key_env"));
}

#[tokio::test]
async fn other_client_errors_are_not_retried() {
    for status in [400, 404] {
        let server = ModelServer::start(vec![
            error_step(status, "bad_request"),
            chat_ok(&allow_low()),
        ])
        .await;
        let run = Setup::new(Provider::Openai, server.base_url()).run().await;
        run.expect_failure(FailureClass::ClientError(status), 1);
        assert_eq!(server.requests().len(), 1);
    }
}

#[tokio::test]
async fn redirects_are_not_followed() {
    let server = ModelServer::start(vec![
        Step::json(307, json!({})).header("location", "http://127.0.0.1:9/v1/chat/completions"),
        chat_ok(&allow_low()),
    ])
    .await;
    let run = Setup::new(Provider::Openai, server.base_url()).run().await;
    run.expect_failure(FailureClass::UnexpectedStatus(307), 1);
    assert_eq!(server.requests().len(), 1);
}

#[tokio::test]
async fn slow_reply_times_out_at_the_deadline() {
    let server = ModelServer::start(vec![
        chat_ok(&allow_low()).delayed(Duration::from_secs(4)),
        chat_ok(&allow_low()),
    ])
    .await;
    let run = Setup::new(Provider::Openai, server.base_url())
        .timeout_ms(1500)
        .run()
        .await;
    run.expect_failure(FailureClass::Timeout, 1);
    assert_eq!(server.requests().len(), 1);
    assert!(
        run.elapsed >= Duration::from_millis(1400),
        "{:?}",
        run.elapsed
    );
}

#[tokio::test]
async fn the_retry_gets_only_the_time_left() {
    let server = ModelServer::start(vec![
        error_step(500, "server_error").delayed(Duration::from_millis(1000)),
        chat_ok(&allow_low()).delayed(Duration::from_secs(4)),
    ])
    .await;
    let run = Setup::new(Provider::Openai, server.base_url())
        .timeout_ms(1500)
        .run()
        .await;
    run.expect_failure(FailureClass::Timeout, 2);
    assert_eq!(server.requests().len(), 2);
    assert!(
        run.elapsed < Duration::from_millis(2200),
        "{:?}",
        run.elapsed
    );
}

#[tokio::test]
async fn dropped_connection_retries_once() {
    let ok = chat(Value::String(allow_low().to_string()), "stop");
    let drop = || Step::drop_at(DropAt::BeforeAnyByte);
    let server = ModelServer::start(vec![drop(), Step::json(200, ok)]).await;
    let run = Setup::new(Provider::Openai, server.base_url()).run().await;
    run.expect_verdict(Outcome::Allow, Stage::Reviewer, 2);
    assert_eq!(server.requests().len(), 2);

    let server = ModelServer::start(vec![drop(), drop()]).await;
    let run = Setup::new(Provider::Openai, server.base_url()).run().await;
    run.expect_failure(FailureClass::Connect, 2);
    let bodies: Vec<String> = server.requests().into_iter().map(|r| r.raw_body).collect();
    assert_eq!(bodies.len(), 2);
    assert!(bodies[0].contains(USER), "the server read the request");
}

#[tokio::test]
async fn connection_refused_fails_closed() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    drop(listener);
    let run = Setup::new(Provider::Openai, format!("http://{addr}/v1"))
        .run()
        .await;
    run.expect_failure(FailureClass::Connect, 2);
}

#[tokio::test]
async fn empty_content_retries_with_correction_then_fails() {
    let server = ModelServer::start(vec![
        chat_text(""),
        Step::json(200, chat(Value::Null, "stop")),
    ])
    .await;
    let run = Setup::new(Provider::Openai, server.base_url()).run().await;
    run.expect_failure(FailureClass::EmptyOutput, 2);
    let reqs = server.requests();
    assert_eq!(reqs.len(), 2);
    assert_correction_appended(&reqs[0], &reqs[1]);
    // Both calls were billed.
    assert_eq!(run.result.stats.input_tokens, 800);
}

#[tokio::test]
async fn prose_around_one_object_is_a_verdict() {
    let text = format!(
        "Sure! Here's my verdict:\n```json\n{}\n```\nLet me know if you'd like more.",
        verdict("deny", "medium")
    );
    let server = ModelServer::start(vec![chat_text(&text)]).await;
    let run = Setup::new(Provider::Openai, server.base_url()).run().await;
    run.expect_verdict(Outcome::Deny, Stage::Reviewer, 1);
    assert_eq!(server.requests().len(), 1);
}

#[tokio::test]
async fn two_candidate_objects_are_invalid() {
    let both = format!("{} or {}", allow_low(), verdict("deny", "high"));
    let server = ModelServer::start(vec![chat_text(&both), chat_text(&both)]).await;
    let run = Setup::new(Provider::Openai, server.base_url()).run().await;
    run.expect_failure(FailureClass::InvalidJson, 2);
}

#[tokio::test]
async fn schema_invalid_twice_fails_closed() {
    let mut extra = allow_low();
    extra["confidence"] = json!(0.9);
    let server = ModelServer::start(vec![
        chat_ok(&extra),
        chat_ok(&verdict("approve", "low")),
        chat_ok(&allow_low()),
    ])
    .await;
    let run = Setup::new(Provider::Openai, server.base_url()).run().await;
    run.expect_failure(FailureClass::SchemaInvalid, 2);
    let reqs = server.requests();
    assert_eq!(reqs.len(), 2);
    assert_correction_appended(&reqs[0], &reqs[1]);
}

#[tokio::test]
async fn schema_invalid_then_valid_succeeds_with_the_correction() {
    let server = ModelServer::start(vec![
        chat_text(r#"{"outcome":"allow"}"#),
        chat_ok(&allow_low()),
    ])
    .await;
    let run = Setup::new(Provider::Openai, server.base_url()).run().await;
    run.expect_verdict(Outcome::Allow, Stage::Reviewer, 2);
    let reqs = server.requests();
    assert_eq!(reqs.len(), 2);
    assert_openai_request(&reqs[1]);
    assert_correction_appended(&reqs[0], &reqs[1]);
    assert!(run.logs.contains(r#""next":"retry_with_correction""#));
}

#[tokio::test]
async fn truncated_output_is_not_retried() {
    let server = ModelServer::start(vec![
        Step::json(200, chat(json!(r#"{"outcome":"allow","risk_le"#), "length")),
        chat_ok(&allow_low()),
    ])
    .await;
    let run = Setup::new(Provider::Openai, server.base_url()).run().await;
    run.expect_failure(FailureClass::Truncated, 1);
    assert_eq!(server.requests().len(), 1);
}

#[tokio::test]
async fn refusal_is_not_retried() {
    let mut body = chat(Value::Null, "stop");
    body["choices"][0]["message"]["refusal"] = json!("I can't help with that.");
    let server = ModelServer::start(vec![Step::json(200, body), chat_ok(&allow_low())]).await;
    let run = Setup::new(Provider::Openai, server.base_url()).run().await;
    run.expect_failure(FailureClass::Refusal, 1);
    assert_eq!(server.requests().len(), 1);
}

#[tokio::test]
async fn oversized_reply_is_not_read() {
    let huge = "x".repeat(2 << 20);
    let server = ModelServer::start(vec![chat_text(&huge), chat_ok(&allow_low())]).await;
    let run = Setup::new(Provider::Openai, server.base_url()).run().await;
    run.expect_failure(FailureClass::ResponseTooLarge, 1);
}

// ------------------------------------------------------------- anthropic

fn assert_anthropic_request(r: &Recorded) {
    assert_eq!(r.path, "/v1/messages");
    assert_eq!(r.headers.get("x-api-key").unwrap(), KEY);
    assert_eq!(r.headers.get("anthropic-version").unwrap(), "2023-06-01");
    assert!(r.headers.get("authorization").is_none());
    assert_key_only_in(r, "x-api-key");
    let b = &r.body;
    assert_eq!(b["system"], SYSTEM);
    assert_eq!(b["max_tokens"], 256);
    assert!(b.get("max_completion_tokens").is_none());
    assert!(b.get("response_format").is_none());
    assert_eq!(
        b["tool_choice"],
        json!({"type": "tool", "name": "submit_verdict"})
    );
    assert_eq!(b["tools"][0]["name"], "submit_verdict");
    assert_eq!(
        b["tools"][0]["input_schema"]["required"]
            .as_array()
            .unwrap()
            .len(),
        5
    );
    assert_eq!(b["messages"][0], json!({"role": "user", "content": USER}));
}

#[tokio::test]
async fn anthropic_happy_path() {
    let server = ModelServer::start(vec![messages_ok(&verdict("deny", "critical"))]).await;
    let run = Setup::new(Provider::Anthropic, server.base_url())
        .run()
        .await;
    run.expect_verdict(Outcome::Deny, Stage::Reviewer, 1);
    assert!(run.decision.message().contains("vouch break-glass"));
    let reqs = server.requests();
    assert_eq!(reqs.len(), 1);
    assert_anthropic_request(&reqs[0]);
    assert_eq!(reqs[0].body["messages"].as_array().unwrap().len(), 1);
    let stats = &run.result.stats;
    assert_eq!((stats.input_tokens, stats.output_tokens), (500, 60));
}

#[tokio::test]
async fn anthropic_overloaded_then_success() {
    let server = ModelServer::start(vec![
        error_step(529, "overloaded_error"),
        messages_ok(&allow_low()),
    ])
    .await;
    let run = Setup::new(Provider::Anthropic, server.base_url())
        .run()
        .await;
    run.expect_verdict(Outcome::Allow, Stage::Reviewer, 2);
    assert_eq!(server.requests().len(), 2);
}

#[tokio::test]
async fn anthropic_schema_invalid_then_valid() {
    let server = ModelServer::start(vec![
        messages_ok(&json!({"outcome": "allow", "risk_level": "low"})),
        messages_ok(&allow_low()),
    ])
    .await;
    let run = Setup::new(Provider::Anthropic, server.base_url())
        .run()
        .await;
    run.expect_verdict(Outcome::Allow, Stage::Reviewer, 2);
    let reqs = server.requests();
    assert_anthropic_request(&reqs[1]);
    assert_correction_appended(&reqs[0], &reqs[1]);
}

#[tokio::test]
async fn anthropic_max_tokens_and_refusal_are_not_retried() {
    let cut = messages(
        json!([{"type": "tool_use", "id": "t", "name": "submit_verdict", "input": {}}]),
        "max_tokens",
    );
    let server = ModelServer::start(vec![Step::json(200, cut), messages_ok(&allow_low())]).await;
    let run = Setup::new(Provider::Anthropic, server.base_url())
        .run()
        .await;
    run.expect_failure(FailureClass::Truncated, 1);
    assert_eq!(server.requests().len(), 1);

    let refused = messages(json!([]), "refusal");
    let server =
        ModelServer::start(vec![Step::json(200, refused), messages_ok(&allow_low())]).await;
    let run = Setup::new(Provider::Anthropic, server.base_url())
        .run()
        .await;
    run.expect_failure(FailureClass::Refusal, 1);
    assert_eq!(server.requests().len(), 1);
}

#[tokio::test]
async fn anthropic_long_retry_after_and_auth_fail_closed() {
    let server = ModelServer::start(vec![
        error_step(429, "rate_limit_error").header("retry-after", "30"),
        messages_ok(&allow_low()),
    ])
    .await;
    let run = Setup::new(Provider::Anthropic, server.base_url())
        .run()
        .await;
    run.expect_failure(FailureClass::RetryAfterTooLong, 1);

    let server = ModelServer::start(vec![
        error_step(401, "authentication_error"),
        messages_ok(&allow_low()),
    ])
    .await;
    let run = Setup::new(Provider::Anthropic, server.base_url())
        .run()
        .await;
    run.expect_failure(FailureClass::Auth, 1);
    assert_eq!(server.requests().len(), 1);
}

#[tokio::test]
async fn anthropic_slow_reply_times_out() {
    let server = ModelServer::start(vec![
        messages_ok(&allow_low()).delayed(Duration::from_secs(4)),
    ])
    .await;
    let run = Setup::new(Provider::Anthropic, server.base_url())
        .timeout_ms(1500)
        .run()
        .await;
    run.expect_failure(FailureClass::Timeout, 1);
}

// ---------------------------------------------------------------- ollama

fn assert_ollama_request(r: &Recorded) {
    assert_eq!(r.path, "/v1/chat/completions");
    assert!(
        r.headers.get("authorization").is_none(),
        "no key, no header"
    );
    assert!(r.headers.get("x-api-key").is_none());
    let b = &r.body;
    assert_eq!(b["max_tokens"], 256);
    assert!(b.get("max_completion_tokens").is_none());
    assert_eq!(b["response_format"]["type"], "json_schema");
    assert_eq!(b["response_format"]["json_schema"]["strict"], true);
    assert_eq!(
        b["messages"][0],
        json!({"role": "system", "content": SYSTEM})
    );
    assert_eq!(b["messages"][1], json!({"role": "user", "content": USER}));
}

#[tokio::test]
async fn ollama_happy_path_without_a_key() {
    let server = ModelServer::start(vec![chat_ok(&verdict("defer", "medium"))]).await;
    let run = Setup::new(Provider::Ollama, server.base_url())
        .without_key()
        .run()
        .await;
    run.expect_verdict(Outcome::Defer, Stage::Reviewer, 1);
    let reqs = server.requests();
    assert_eq!(reqs.len(), 1);
    assert_ollama_request(&reqs[0]);
}

#[tokio::test]
async fn ollama_sends_the_key_as_bearer_when_set() {
    let server = ModelServer::start(vec![chat_ok(&allow_low())]).await;
    let run = Setup::new(Provider::Ollama, server.base_url()).run().await;
    run.expect_verdict(Outcome::Allow, Stage::Reviewer, 1);
    let reqs = server.requests();
    assert_eq!(
        reqs[0].headers.get("authorization").unwrap(),
        &format!("Bearer {KEY}")
    );
    assert_key_only_in(&reqs[0], "authorization");
}

#[tokio::test]
async fn ollama_faults() {
    let server =
        ModelServer::start(vec![error_step(500, "server_error"), chat_ok(&allow_low())]).await;
    let run = Setup::new(Provider::Ollama, server.base_url())
        .without_key()
        .run()
        .await;
    run.expect_verdict(Outcome::Allow, Stage::Reviewer, 2);

    let server = ModelServer::start(vec![chat_text("I think allow"), chat_text("allow.")]).await;
    let run = Setup::new(Provider::Ollama, server.base_url())
        .without_key()
        .run()
        .await;
    run.expect_failure(FailureClass::InvalidJson, 2);
    let reqs = server.requests();
    assert_ollama_request(&reqs[1]);
    assert_correction_appended(&reqs[0], &reqs[1]);

    let server = ModelServer::start(vec![
        Step::json(200, chat(json!("{\"outcome\""), "length")),
        chat_ok(&allow_low()),
    ])
    .await;
    let run = Setup::new(Provider::Ollama, server.base_url())
        .without_key()
        .run()
        .await;
    run.expect_failure(FailureClass::Truncated, 1);
    assert_eq!(server.unused_steps(), 1);

    let server = ModelServer::start(vec![
        Step::drop_at(DropAt::BeforeAnyByte),
        Step::drop_at(DropAt::BeforeAnyByte),
    ])
    .await;
    let run = Setup::new(Provider::Ollama, server.base_url())
        .without_key()
        .run()
        .await;
    run.expect_failure(FailureClass::Connect, 2);
}
