//! `vouch config show`: the effective configuration, one leaf per line, each
//! with the layer that set it.
//!
//! The API key is never configuration (only the name of the variable that
//! holds it is), so it cannot be printed. Credentials or query strings in
//! `reviewer.base_url` are masked: a URL is a common place for a token.

use toml::Value;

use super::layers::{LoadedConfig, Source};
use super::spec::{KEYS, Kind};

/// One `key = value  # source` line per effective leaf, in table order.
pub fn render_show(loaded: &LoadedConfig) -> String {
    let mut out = String::new();
    for key_spec in KEYS {
        let Some((section, key)) = key_spec.key.split_once('.') else {
            continue;
        };
        let value = loaded.table.get(section).and_then(|s| s.get(key));
        let Some(value) = value else {
            line(
                &mut out,
                key_spec.key,
                "<unset>",
                loaded.source_of(key_spec.key),
            );
            continue;
        };
        match (key_spec.kind, value) {
            (Kind::Rules, Value::Array(rules)) if !rules.is_empty() => {
                for (index, rule) in rules.iter().enumerate() {
                    let name = format!("{}[{index}]", key_spec.key);
                    line(&mut out, &name, &render_rule(rule), loaded.source_of(&name));
                }
            }
            (Kind::Surfaces, Value::Table(entries)) if !entries.is_empty() => {
                for (surface, policy) in entries {
                    let name = format!("{}.{}", key_spec.key, toml_key(surface));
                    let source_key = format!("{}.{surface}", key_spec.key);
                    line(
                        &mut out,
                        &name,
                        &policy.to_string(),
                        loaded.source_of(&source_key),
                    );
                }
            }
            _ if key_spec.key == "reviewer.base_url" => {
                let masked = Value::String(mask_url(value.as_str().unwrap_or_default()));
                line(
                    &mut out,
                    key_spec.key,
                    &masked.to_string(),
                    loaded.source_of(key_spec.key),
                );
            }
            _ => line(
                &mut out,
                key_spec.key,
                &value.to_string(),
                loaded.source_of(key_spec.key),
            ),
        }
    }
    out
}

fn line(out: &mut String, key: &str, value: &str, source: Option<&Source>) {
    let source = source.map_or_else(|| "unknown".to_owned(), ToString::to_string);
    out.push_str(key);
    out.push_str(" = ");
    out.push_str(value);
    out.push_str("  # ");
    out.push_str(&source);
    out.push('\n');
}

/// A rule as an inline table in a fixed, readable key order, with the
/// default `field` spelled out.
fn render_rule(rule: &Value) -> String {
    let get = |k: &str| rule.get(k).map(ToString::to_string);
    let mut parts = Vec::with_capacity(4);
    if let Some(p) = get("pattern") {
        parts.push(format!("pattern = {p}"));
    }
    if let Some(c) = get("command") {
        parts.push(format!("command = {c}"));
    }
    parts.push(format!(
        "field = {}",
        get("field").unwrap_or_else(|| "\"command\"".to_owned())
    ));
    if let Some(p) = get("policy") {
        parts.push(format!("policy = {p}"));
    }
    if let Some(n) = get("note") {
        parts.push(format!("note = {n}"));
    }
    format!("{{ {} }}", parts.join(", "))
}

/// A surface name as a TOML key: bare when it can be, quoted otherwise.
fn toml_key(name: &str) -> String {
    if !name.is_empty()
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
    {
        name.to_owned()
    } else {
        Value::String(name.to_owned()).to_string()
    }
}

/// Masks `user:pass@` and the query string of a URL.
pub fn mask_url(url: &str) -> String {
    let (scheme, rest) = match url.split_once("://") {
        Some((scheme, rest)) => (format!("{scheme}://"), rest),
        None => (String::new(), url),
    };
    let (authority, tail) = match rest.find(['/', '?', '#']) {
        Some(i) => rest.split_at(i),
        None => (rest, ""),
    };
    let authority = match authority.rsplit_once('@') {
        Some((_, host)) => format!("***@{host}"),
        None => authority.to_owned(),
    };
    let tail = match tail.split_once('?') {
        Some((path, _)) => format!("{path}?***"),
        None => tail.to_owned(),
    };
    format!("{scheme}{authority}{tail}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn url_credentials_and_queries_are_masked() {
        assert_eq!(
            mask_url("https://user:secret@api.example.com/v1?key=abc"),
            "https://***@api.example.com/v1?***"
        );
        assert_eq!(
            mask_url("http://127.0.0.1:11434/v1"),
            "http://127.0.0.1:11434/v1"
        );
        assert_eq!(mask_url("https://h?token=x"), "https://h?***");
    }
}
