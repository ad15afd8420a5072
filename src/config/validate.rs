//! Validation of one configuration layer against the key table, before it is
//! merged: unknown keys, wrong types and out-of-range values are errors that
//! name the layer (file or variable), the key and the legal values.
//!
//! Each layer is checked on its own so the message points at the file the
//! user must fix, not at the merged result.

use toml::{Table, Value};

use super::ConfigError;
use super::spec::{self, KeySpec, Kind, ROUTE_POLICIES, RULE_FIELDS, TextShape};
use crate::config::routing::compile_pattern;

/// Longest accepted rule pattern, in bytes.
const MAX_PATTERN_BYTES: usize = 4096;
/// Longest accepted rule note, in bytes.
const MAX_NOTE_BYTES: usize = 512;
/// Most rules one layer may add; routing is on the hot path.
const MAX_RULES: usize = 256;

/// A problem with one key, before the layer name is attached.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Problem {
    pub key: String,
    pub problem: String,
}

impl Problem {
    fn new(key: impl Into<String>, problem: impl Into<String>) -> Self {
        Problem {
            key: key.into(),
            problem: problem.into(),
        }
    }

    pub fn in_layer(self, layer: &str) -> ConfigError {
        ConfigError::Invalid {
            file: layer.to_owned(),
            key: self.key,
            problem: self.problem,
        }
    }
}

/// Checks every key of one layer table.
pub fn validate_layer(layer: &str, table: &Table) -> Result<(), ConfigError> {
    for (section, body) in table {
        if !spec::sections().any(|s| s == section) {
            return Err(Problem::new(section.as_str(), "unknown section").in_layer(layer));
        }
        let Value::Table(body) = body else {
            return Err(Problem::new(
                section.as_str(),
                format!("expected a table, got {}", shown(body)),
            )
            .in_layer(layer));
        };
        for (key, value) in body {
            let Some(spec) = spec::lookup(section, key) else {
                return Err(Problem::new(format!("{section}.{key}"), "unknown key").in_layer(layer));
            };
            validate_value(spec, value).map_err(|p| p.in_layer(layer))?;
        }
    }
    Ok(())
}

/// Checks one value against its key's kind and range.
pub fn validate_value(spec: &KeySpec, value: &Value) -> Result<(), Problem> {
    let key = spec.key;
    let wrong = || {
        Problem::new(
            key,
            format!(
                "expected {}, got {}",
                spec::describe(spec.kind),
                shown(value)
            ),
        )
    };
    match spec.kind {
        Kind::Int { min, max } => {
            let Value::Integer(n) = value else {
                return Err(wrong());
            };
            if *n < min || *n > max {
                return Err(Problem::new(
                    key,
                    format!(
                        "`{n}` is out of range: expected {}",
                        spec::describe(spec.kind)
                    ),
                ));
            }
        }
        Kind::Price => {
            let price = match value {
                Value::Integer(n) => *n as f64,
                Value::Float(f) => *f,
                _ => return Err(wrong()),
            };
            if !(0.0..=spec::MAX_PRICE).contains(&price) {
                return Err(Problem::new(
                    key,
                    format!(
                        "`{price}` is out of range: expected {}",
                        spec::describe(spec.kind)
                    ),
                ));
            }
        }
        Kind::Bool => {
            if !value.is_bool() {
                return Err(wrong());
            }
        }
        Kind::Enum(values) => {
            let Some(s) = value.as_str() else {
                return Err(wrong());
            };
            if spec::enum_rank(values, s).is_none() {
                return Err(wrong());
            }
        }
        Kind::Text(shape) => {
            let Some(s) = value.as_str() else {
                return Err(wrong());
            };
            if !text_ok(shape, s) {
                return Err(wrong());
            }
        }
        Kind::Rules => validate_rules(value)?,
        Kind::Surfaces => validate_surfaces(value)?,
        Kind::Paths => {
            let Some(paths) = value.as_array() else {
                return Err(wrong());
            };
            let path_ok = |p: &Value| {
                p.as_str().is_some_and(|s| {
                    !s.is_empty() && s.len() <= 4096 && !s.chars().any(char::is_control)
                })
            };
            if paths.len() > spec::MAX_PATHS || !paths.iter().all(path_ok) {
                return Err(wrong());
            }
        }
    }
    Ok(())
}

fn text_ok(shape: TextShape, s: &str) -> bool {
    match shape {
        TextShape::Url => {
            let rest = s
                .strip_prefix("https://")
                .or_else(|| s.strip_prefix("http://"));
            s.len() <= 2048
                && rest.is_some_and(|r| !r.is_empty() && !r.starts_with('/'))
                && !s.chars().any(|c| c.is_whitespace() || c.is_control())
        }
        TextShape::ModelId => {
            (1..=256).contains(&s.len()) && !s.chars().any(|c| c.is_control() || c == ' ')
        }
        TextShape::EnvVarName => {
            // A configuration-shaped name would be ignored as configuration.
            let config_shaped = s.starts_with("VOUCH_") && s.contains("__");
            s.is_empty()
                || (s.len() <= 128
                    && !config_shaped
                    && s.bytes().enumerate().all(|(i, b)| {
                        b == b'_' || b.is_ascii_alphabetic() || (i > 0 && b.is_ascii_digit())
                    }))
        }
        TextShape::Listen => match s.strip_prefix("unix:") {
            Some(path) => path.starts_with('/') && !path.contains('\0'),
            None => s
                .rsplit_once(':')
                .is_some_and(|(host, port)| !host.is_empty() && port.parse::<u16>().is_ok()),
        },
    }
}

fn validate_rules(value: &Value) -> Result<(), Problem> {
    let Value::Array(rules) = value else {
        return Err(Problem::new(
            "routing.rules",
            format!(
                "expected {}, got {}",
                spec::describe(Kind::Rules),
                shown(value)
            ),
        ));
    };
    if rules.len() > MAX_RULES {
        return Err(Problem::new(
            "routing.rules",
            format!(
                "{} rules is more than the limit of {MAX_RULES}",
                rules.len()
            ),
        ));
    }
    for (index, rule) in rules.iter().enumerate() {
        validate_rule(index, rule)?;
    }
    Ok(())
}

/// A rule's `command`: a template of bounded size that parses.
fn validate_template(at: &str, value: &Value) -> Result<(), Problem> {
    let Some(template) = value.as_str().filter(|t| t.len() <= MAX_PATTERN_BYTES) else {
        return Err(Problem::new(
            at,
            format!(
                "expected a command template of at most {MAX_PATTERN_BYTES} bytes \
                 (`\"npm test *\"`), got {}",
                shown(value)
            ),
        ));
    };
    crate::config::routing::Template::parse(template)
        .map(|_| ())
        .map_err(|e| Problem::new(at, e))
}

/// `policy`, and exactly one of `pattern` and `command`.
fn required_keys(index: usize, rule: &toml::Table) -> Result<(), Problem> {
    let at = |field: &str| format!("routing.rules[{index}].{field}");
    if !rule.contains_key("policy") {
        return Err(Problem::new(at("policy"), "missing required key"));
    }
    match (rule.contains_key("pattern"), rule.contains_key("command")) {
        (true, false) | (false, true) => Ok(()),
        (false, false) => Err(Problem::new(
            at("pattern"),
            "missing required key: give `pattern` (a regex) or `command` (a command template)",
        )),
        (true, true) => Err(Problem::new(
            at("command"),
            "give either `pattern` (a regex) or `command` (a command template), not both",
        )),
    }
}

fn validate_rule(index: usize, rule: &Value) -> Result<(), Problem> {
    let at = |field: &str| format!("routing.rules[{index}].{field}");
    let Value::Table(rule) = rule else {
        return Err(Problem::new(
            format!("routing.rules[{index}]"),
            format!(
                "expected a `{{pattern | command, policy, field, note}}` table, got {}",
                shown(rule)
            ),
        ));
    };
    for (field, value) in rule {
        match field.as_str() {
            "pattern" => {
                let Some(pattern) = value.as_str() else {
                    return Err(Problem::new(
                        at(field),
                        format!("expected a regex string, got {}", shown(value)),
                    ));
                };
                if pattern.len() > MAX_PATTERN_BYTES {
                    return Err(Problem::new(
                        at(field),
                        format!(
                            "pattern is {} bytes, more than the limit of {MAX_PATTERN_BYTES}",
                            pattern.len()
                        ),
                    ));
                }
                compile_pattern(pattern).map_err(|e| {
                    Problem::new(at(field), format!("rule {index} does not compile: {e}"))
                })?;
            }
            "command" => validate_template(&at(field), value)?,
            "policy" | "field" => {
                let values = if field == "policy" {
                    ROUTE_POLICIES
                } else {
                    RULE_FIELDS
                };
                if value
                    .as_str()
                    .is_none_or(|s| spec::enum_rank(values, s).is_none())
                {
                    return Err(Problem::new(
                        at(field),
                        format!(
                            "expected one of {}, got {}",
                            spec::quoted_list(values),
                            shown(value)
                        ),
                    ));
                }
            }
            "note" => {
                if value.as_str().is_none_or(|s| s.len() > MAX_NOTE_BYTES) {
                    return Err(Problem::new(
                        at(field),
                        format!(
                            "expected a string of at most {MAX_NOTE_BYTES} bytes, got {}",
                            shown(value)
                        ),
                    ));
                }
            }
            _ => return Err(Problem::new(at(field), "unknown key")),
        }
    }
    required_keys(index, rule)
}

fn validate_surfaces(value: &Value) -> Result<(), Problem> {
    let Value::Table(surfaces) = value else {
        return Err(Problem::new(
            "routing.surfaces",
            format!(
                "expected {}, got {}",
                spec::describe(Kind::Surfaces),
                shown(value)
            ),
        ));
    };
    for (name, policy) in surfaces {
        let key = format!("routing.surfaces.{name}");
        if name.parse::<crate::request::Surface>().is_err() {
            return Err(Problem::new(
                key,
                "not a surface name (built-in or `^[A-Za-z0-9_.:-]{1,64}$`)",
            ));
        }
        if policy
            .as_str()
            .is_none_or(|s| spec::enum_rank(ROUTE_POLICIES, s).is_none())
        {
            return Err(Problem::new(
                key,
                format!(
                    "expected one of {}, got {}",
                    spec::quoted_list(ROUTE_POLICIES),
                    shown(policy)
                ),
            ));
        }
    }
    Ok(())
}

/// Rules across keys, checked on the merged result after each layer so the
/// error names the layer that broke them.
pub fn cross_field(layer: &str, merged: &Table) -> Result<(), ConfigError> {
    cross_field_problem(merged).map_err(|p| p.in_layer(layer))
}

/// The cross-field rules, without a layer name.
pub fn cross_field_problem(merged: &Table) -> Result<(), Problem> {
    let get = |section: &str, key: &str| merged.get(section).and_then(|s| s.get(key));
    if let (Some(Value::Integer(denials)), Some(Value::Integer(size))) = (
        get("breaker", "window_denials"),
        get("breaker", "window_size"),
    ) && denials > size
    {
        return Err(Problem::new(
            "breaker.window_denials",
            format!(
                "`{denials}` is larger than `breaker.window_size` (`{size}`); it must be at most the window size"
            ),
        ));
    }
    if let Some(listen) = get("server", "listen").and_then(Value::as_str) {
        let allow_remote = get("server", "allow_remote").and_then(Value::as_bool) == Some(true);
        if !allow_remote && !is_loopback_listen(listen) {
            return Err(Problem::new(
                "server.listen",
                format!(
                    "`{listen}` is not a loopback address; set `server.allow_remote = true` to listen on it"
                ),
            ));
        }
    }
    Ok(())
}

/// `unix:` sockets, `localhost`, `127.0.0.0/8` and `[::1]`.
pub fn is_loopback_listen(listen: &str) -> bool {
    if listen.starts_with("unix:") {
        return true;
    }
    let Some((host, _port)) = listen.rsplit_once(':') else {
        return false;
    };
    let host = host
        .strip_prefix('[')
        .and_then(|h| h.strip_suffix(']'))
        .unwrap_or(host);
    if host.eq_ignore_ascii_case("localhost") {
        return true;
    }
    host.parse::<std::net::IpAddr>()
        .is_ok_and(|ip| ip.is_loopback())
}

/// A value for an error message: TOML syntax plus its type.
pub fn shown(value: &Value) -> String {
    let text = value.to_string();
    let text = if text.len() > 80 {
        // Error messages only; the value itself is never truncated.
        let mut cut = 77;
        while !text.is_char_boundary(cut) {
            cut -= 1;
        }
        format!("{}...", text.get(..cut).unwrap_or_default())
    } else {
        text
    };
    format!("`{text}` ({})", value.type_str())
}
