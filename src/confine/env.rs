//! The confined command's environment: the caller's, less every variable
//! that holds a secret.
//!
//! A variable is a secret when the redaction says so of `{NAME: VALUE}`:
//! its name is secret-shaped (`DATABASE_PASSWORD`, `API_KEY`, `*_TOKEN`),
//! or its value is (a provider key's format, a URL with a password such as
//! `DATABASE_URL=postgres://u:p@h/db`, a PEM block, a JWT, a random-looking
//! value under a name that may hold one). The same detectors as the
//! evidence packet's ([`crate::evidence::redact`]), so there is one list.
//! Such a variable is left out whole — the command sees it unset, so
//! `echo $DATABASE_URL`, `/proc/self/environ` and an interpreter's
//! environment table print nothing secret. A name or value that is not
//! UTF-8 cannot be checked, and is left out too.

use std::ffi::OsString;

use serde_json::{Map, Value};

/// The variables to keep, in their order, and the names left out. All of
/// them are judged in one pass of the redaction, as one object: a value
/// found secret under one name is then hidden under every other too.
pub fn scrub(vars: Vec<(OsString, OsString)>) -> (Vec<(OsString, OsString)>, Vec<String>) {
    let mut object = Map::with_capacity(vars.len());
    for (name, value) in &vars {
        if let (Some(n), Some(v)) = (name.to_str(), value.to_str()) {
            object.insert(n.to_owned(), Value::String(v.to_owned()));
        }
    }
    let object = Value::Object(object);
    let redacted = crate::evidence::redact::redact_value(&object);
    let mut kept = Vec::with_capacity(vars.len());
    let mut dropped = Vec::new();
    for (name, value) in vars {
        let (Some(n), Some(v)) = (name.to_str(), value.to_str()) else {
            dropped.push(name.to_string_lossy().into_owned());
            continue;
        };
        // A name given twice keeps its last value in the object: judge the
        // others on their own.
        let unchanged = match object.get(n) {
            Some(Value::String(seen)) if seen == v => redacted.get(n) == object.get(n),
            Some(_) | None => !is_secret(n, v),
        };
        match unchanged || v.is_empty() {
            true => kept.push((name, value)),
            false => dropped.push(n.to_owned()),
        }
    }
    (kept, dropped)
}

/// Whether the redaction hides anything of `{name: value}`.
pub fn is_secret(name: &str, value: &str) -> bool {
    if value.is_empty() {
        return false;
    }
    let mut object = Map::with_capacity(1);
    object.insert(name.to_owned(), Value::String(value.to_owned()));
    let object = Value::Object(object);
    crate::evidence::redact::redact_value(&object) != object
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secrets_by_name_and_by_value_are_left_out() {
        assert!(is_secret("DATABASE_PASSWORD", "hunter2"));
        assert!(is_secret("GITHUB_TOKEN", "x"));
        assert!(is_secret(
            "DATABASE_URL",
            "postgres://app:s3cr3t-Pa55@db.internal:5432/app"
        ));
        assert!(is_secret(
            "SOMETHING",
            "AKIAIOSFODNN7EXAMPLE wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"
        ));
        for (n, v) in [
            ("PATH", "/usr/local/bin:/usr/bin:/bin"),
            ("HOME", "/home/dev"),
            ("LANG", "C.UTF-8"),
            ("TERM", "xterm-256color"),
            ("PWD", "/home/dev/project"),
            ("DATABASE_URL", "postgres://localhost/app"),
            ("EMPTY_TOKEN", ""),
        ] {
            assert!(!is_secret(n, v), "{n}={v}");
        }
    }

    #[test]
    fn scrub_keeps_order_and_names_what_it_dropped() {
        let vars = vec![
            ("A".into(), "1".into()),
            ("API_KEY".into(), "sk-live-0123456789abcdef".into()),
            ("B".into(), "2".into()),
        ];
        let (kept, dropped) = scrub(vars);
        assert_eq!(
            kept,
            vec![("A".into(), "1".into()), ("B".into(), "2".into())]
        );
        assert_eq!(dropped, vec!["API_KEY".to_owned()]);
    }
}
