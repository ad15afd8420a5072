//! Redaction against the vendored secret vectors, our own positives, and
//! the false-positive guards that must come through unchanged.

use proptest::prelude::*;
use serde::Deserialize;
use serde_json::json;
use vouch::evidence::redact::{
    RedactionReport, SecretKind, redact_request, redact_request_with_report, redact_text,
    redact_text_with, redact_value,
};
use vouch::request::Request;

#[derive(Debug, Deserialize)]
struct SecretCase {
    kind: String,
    secret: String,
    command: String,
}

#[derive(Debug, Deserialize)]
struct NegativeCase {
    text: String,
    why: String,
}

fn load<T: for<'de> Deserialize<'de>>(name: &str) -> Vec<T> {
    crate::support::fixtures::records(&[name])
}

fn all_secrets() -> Vec<SecretCase> {
    let mut cases: Vec<SecretCase> = load("secrets.jsonl");
    cases.extend(load::<SecretCase>("secrets_extra.jsonl"));
    cases
}

#[test]
fn fixture_sizes() {
    assert!(load::<SecretCase>("secrets.jsonl").len() >= 14);
    assert!(load::<SecretCase>("secrets_extra.jsonl").len() >= 20);
    assert!(load::<NegativeCase>("redaction_negatives.jsonl").len() >= 15);
}

/// Kinds found by vouch's own structural rules carry exactly that label;
/// provider formats carry the label of the rule that matched (gitleaks' id
/// when both rule sets match).
const STRUCTURAL_KINDS: &[&str] = &[
    "url_password",
    "url_credential",
    "cli_password",
    "jwt",
    "private_key",
    "auth_header",
    "cookie",
];

#[test]
fn every_secret_is_removed_and_labelled() {
    let mut failures = Vec::new();
    for case in all_secrets() {
        let out = redact_text(&case.command);
        let label = format!("[REDACTED:{}]", case.kind);
        let labelled = match STRUCTURAL_KINDS.contains(&case.kind.as_str()) {
            true => out.contains(&label),
            false => out.contains("[REDACTED:"),
        };
        if out.contains(&case.secret) || !labelled {
            failures.push(format!("{}: {} -> {}", case.kind, case.command, out));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn redaction_keeps_the_surrounding_command() {
    let out = redact_text("psql postgres://admin:p4ss-f1Qh6yYTWmE4@db.internal:5432/prod");
    assert_eq!(
        out,
        "psql postgres://admin:[REDACTED:url_password]@db.internal:5432/prod"
    );
    let out = redact_text("mysql -u root --password=Hx9-lBYOvfZ8UzDzV8 prod");
    assert_eq!(out, "mysql -u root --password=[REDACTED:cli_password] prod");
    let out = redact_text("DATABASE_PASSWORD=1584d8c4fa2815d2802827283e0ad841 ./run.sh");
    assert_eq!(
        out,
        "DATABASE_PASSWORD=[REDACTED:generic_assignment] ./run.sh"
    );
}

#[test]
fn redaction_is_idempotent() {
    for case in all_secrets() {
        let once = redact_text(&case.command).into_owned();
        let twice = redact_text(&once).into_owned();
        assert_eq!(once, twice, "{}", case.kind);
    }
}

#[test]
fn negatives_come_through_unchanged() {
    let mut failures = Vec::new();
    for case in load::<NegativeCase>("redaction_negatives.jsonl") {
        let out = redact_text(&case.text);
        if out != case.text {
            failures.push(format!("{} ({}): {}", case.text, case.why, out));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn report_counts_kinds_never_values() {
    let mut report = RedactionReport::default();
    let text = "A=ghp_pfJBd0Kh8oOOL8dKLzdocJ2isAjIhKtJ0Rlg B=ghp_pfJBd0Kh8oOOL8dKLzdocJ2isAjIhKtJ0Rlh \
                mysql --password=Hx9-lBYOvfZ8UzDzV8";
    let out = redact_text_with(text, &mut report);
    assert!(!out.contains("ghp_"));
    assert_eq!(report.count_label("github_pat"), 2);
    assert_eq!(report.count(SecretKind::CliPassword), 1);
    assert_eq!(report.total(), 3);
    let json = serde_json::to_string(&report).unwrap();
    assert_eq!(json, r#"{"github_pat":2,"cli_password":1}"#);
}

#[test]
fn values_under_secret_keys_are_replaced_whole() {
    let input = json!({
        "password": "hunter2",
        "apiKey": "short",
        "X-Api-Key": 12345,
        "credentials": {"user": "a", "secret": "b"},
        "db_password": "$DB_PASSWORD",
        "token": null,
        "author": "Jane Doe",
        "tokenizer": "o200k_base",
        "keyboard": "us",
        "monkey": "banana",
        "secretary": "jane",
        "public_key": "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIG9vZ",
        "max_tokens": 256,
        "sort_key": "name",
        "cache_key": "9f8e7d6c5b4a39281706f5e4d3c2b1a0",
        "nested": [{"headers": {"Authorization": "Bearer abc.def"}}],
        "command": "export OPENAI_API_KEY=sk-proj-RVdD53X83RZJzzzzgEOzdmenCkhvMdgaKjIg8xNbe3nNyjOq"
    });
    let out = redact_value(&input);
    let field = json!("[REDACTED:secret_field]");
    assert_eq!(out["password"], field);
    assert_eq!(out["apiKey"], field);
    assert_eq!(out["X-Api-Key"], field);
    assert_eq!(out["credentials"], field);
    assert_eq!(out["nested"][0]["headers"]["Authorization"], field);
    assert_eq!(
        out["cache_key"], field,
        "a random value under a key-ish name"
    );
    assert_eq!(
        out["db_password"], "$DB_PASSWORD",
        "a reference, not a secret"
    );
    assert_eq!(out["token"], json!(null));
    for plain in [
        "author",
        "tokenizer",
        "keyboard",
        "monkey",
        "secretary",
        "public_key",
        "max_tokens",
        "sort_key",
    ] {
        assert_eq!(out[plain], input[plain], "{plain}");
    }
    assert_eq!(
        out["command"], "export OPENAI_API_KEY=[REDACTED:openai]",
        "strings under ordinary keys are scanned as text"
    );
}

fn request_with(secret_command: &str, secret: &str) -> Request {
    let v = json!({
        "id": "req-1", "tool_call_id": "toolu_01", "session_id": "s-1",
        "surface": "bash", "tool": "Bash",
        "command": secret_command,
        "cwd": "/srv/app", "home": "/home/dev",
        "input": {"command": secret_command, "env": {"API_TOKEN": secret}},
        "reason": format!("need to use {secret_command}"),
        // A URL password cannot hold whitespace; such cases skip this field.
        "destination": if secret.contains(char::is_whitespace) {
            "example.com:443".to_owned()
        } else {
            format!("https://deploy:{secret}@example.com:443")
        },
        "transcript": [
            {"role": "user", "text": format!("use this: {secret_command}")},
            {"role": "tool_call", "tool_call_id": "toolu_00", "tool_name": "Bash",
             "input": {"command": secret_command}},
            {"role": "tool_result", "tool_call_id": "toolu_00", "text": format!("ok\n{secret_command}\n")},
            {"role": "assistant", "text": format!("I ran {secret_command}")},
            {"role": "summary", "text": format!("earlier we used {secret_command}")}
        ]
    });
    Request::from_slice(v.to_string().as_bytes()).unwrap()
}

#[test]
fn redact_request_covers_every_text_field() {
    for case in all_secrets() {
        let request = request_with(&case.command, &case.secret);
        let (redacted, report) = redact_request_with_report(&request);
        let text = serde_json::to_string(&redacted).unwrap();
        assert!(!text.contains(&case.secret), "{}: {text}", case.kind);
        assert!(report.total() >= 7, "{}: {report:?}", case.kind);
        // Identifiers that link calls to results are untouched.
        assert_eq!(redacted.tool_call_id, request.tool_call_id);
        assert_eq!(redacted.session_id, request.session_id);
        assert_eq!(redact_request(&redacted), redacted, "idempotent");
    }
}

proptest! {
    #[test]
    fn arbitrary_text_never_panics_and_is_idempotent(s in "\\PC{0,200}") {
        let once = redact_text(&s).into_owned();
        let twice = redact_text(&once).into_owned();
        prop_assert_eq!(once, twice);
    }

    #[test]
    fn embedded_secrets_never_survive(
        prefix in "[a-z ./=:-]{0,40}",
        suffix in "[a-z ./=:-]{0,40}",
        pick in 0usize..64,
    ) {
        let cases = all_secrets();
        let case = &cases[pick % cases.len()];
        let text = format!("{prefix} {} {suffix}", case.command);
        let out = redact_text(&text);
        prop_assert!(!out.contains(&case.secret), "{}", out);
    }
}
