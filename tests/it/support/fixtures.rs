//! The one fixture loader: test vectors live in `tests/fixtures/` as data
//! (JSONL, TOML), and every test, the corpus runner and the benches read
//! them through here. A bad line fails naming its file and line.

#![allow(dead_code, clippy::panic)]

use std::path::PathBuf;

use serde::de::DeserializeOwned;

/// Where fixture `name` lives.
pub fn path(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name)
}

/// The whole text of fixture `name`.
pub fn text(name: &str) -> String {
    let path = path(name);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// Every non-blank line of JSONL fixture `name`, parsed, with its 1-based
/// line number.
pub fn jsonl<T: DeserializeOwned>(name: &str) -> Vec<(usize, T)> {
    text(name)
        .lines()
        .enumerate()
        .filter(|(_, line)| !line.trim().is_empty())
        .map(|(i, line)| {
            let value = serde_json::from_str(line)
                .unwrap_or_else(|e| panic!("{name}:{}: bad fixture line: {e}", i + 1));
            (i + 1, value)
        })
        .collect()
}

/// The records of several JSONL fixtures, in order, without line numbers.
pub fn records<T: DeserializeOwned>(names: &[&str]) -> Vec<T> {
    names
        .iter()
        .flat_map(|name| jsonl(name).into_iter().map(|(_, v)| v))
        .collect()
}

/// The redaction corpora (`secrets.jsonl`, `secrets_extra.jsonl`): each
/// line's record.
pub fn secret_records() -> Vec<serde_json::Value> {
    records(&["secrets.jsonl", "secrets_extra.jsonl"])
}

/// Every secret in the redaction corpora.
pub fn secrets() -> Vec<String> {
    secret_records()
        .iter()
        .map(|v| match v["secret"].as_str() {
            Some(secret) => secret.to_owned(),
            None => panic!("a redaction corpus line without a `secret`: {v}"),
        })
        .collect()
}
