//! JSON settings files (Claude Code, Gemini CLI, Qwen Code, Cursor, Copilot
//! CLI): vouch's hook entries merged in and taken out again, with every
//! other key, hook and the file's own key order and indentation kept.
//!
//! `serde_json::Value` sorts object keys (vouch relies on that for its
//! canonical JSON), so a settings file is read into [`Json`], which keeps
//! keys in the file's order. A file whose keys repeat is refused: which of
//! the two the harness reads is the harness's business, and rewriting it
//! would silently pick one.

use std::fmt;

use serde::de::{self, Deserializer, MapAccess, SeqAccess, Visitor};
use serde::ser::{SerializeMap, SerializeSeq, Serializer};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::hooks::settings::JsonRules;

/// A JSON value whose objects keep their keys in order.
#[derive(Debug, Clone, PartialEq)]
pub enum Json {
    Null,
    Bool(bool),
    Number(serde_json::Number),
    String(String),
    Array(Vec<Json>),
    Object(Vec<(String, Json)>),
}

impl Json {
    /// `v` with its (sorted) keys in `v`'s order.
    pub fn from_value(v: &Value) -> Json {
        match v {
            Value::Null => Json::Null,
            Value::Bool(b) => Json::Bool(*b),
            Value::Number(n) => Json::Number(n.clone()),
            Value::String(s) => Json::String(s.clone()),
            Value::Array(a) => Json::Array(a.iter().map(Json::from_value).collect()),
            Value::Object(o) => Json::Object(
                o.iter()
                    .map(|(k, v)| (k.clone(), Json::from_value(v)))
                    .collect(),
            ),
        }
    }

    /// The same value as a `serde_json::Value` (key order lost): for
    /// comparisons that must not depend on it.
    pub fn to_value(&self) -> Value {
        match self {
            Json::Null => Value::Null,
            Json::Bool(b) => Value::Bool(*b),
            Json::Number(n) => Value::Number(n.clone()),
            Json::String(s) => Value::String(s.clone()),
            Json::Array(a) => Value::Array(a.iter().map(Json::to_value).collect()),
            Json::Object(o) => {
                Value::Object(o.iter().map(|(k, v)| (k.clone(), v.to_value())).collect())
            }
        }
    }

    pub fn get(&self, key: &str) -> Option<&Json> {
        match self {
            Json::Object(o) => o.iter().find(|(k, _)| k == key).map(|(_, v)| v),
            _ => None,
        }
    }

    fn get_mut(&mut self, key: &str) -> Option<&mut Json> {
        match self {
            Json::Object(o) => o.iter_mut().find(|(k, _)| k == key).map(|(_, v)| v),
            _ => None,
        }
    }

    /// The value at `path` (object keys).
    pub fn at(&self, path: &[&str]) -> Option<&Json> {
        path.iter().try_fold(self, |v, k| v.get(k))
    }

    pub fn as_str(&self) -> Option<&str> {
        match self {
            Json::String(s) => Some(s),
            _ => None,
        }
    }

    pub fn as_array(&self) -> Option<&[Json]> {
        match self {
            Json::Array(a) => Some(a),
            _ => None,
        }
    }

    fn is_empty_container(&self) -> bool {
        match self {
            Json::Array(a) => a.is_empty(),
            Json::Object(o) => o.is_empty(),
            Json::Null | Json::Bool(_) | Json::Number(_) | Json::String(_) => false,
        }
    }
}

impl Serialize for Json {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Json::Null => s.serialize_unit(),
            Json::Bool(b) => s.serialize_bool(*b),
            Json::Number(n) => n.serialize(s),
            Json::String(v) => s.serialize_str(v),
            Json::Array(a) => {
                let mut seq = s.serialize_seq(Some(a.len()))?;
                for v in a {
                    seq.serialize_element(v)?;
                }
                seq.end()
            }
            Json::Object(o) => {
                let mut map = s.serialize_map(Some(o.len()))?;
                for (k, v) in o {
                    map.serialize_entry(k, v)?;
                }
                map.end()
            }
        }
    }
}

impl<'de> Deserialize<'de> for Json {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Json, D::Error> {
        d.deserialize_any(JsonVisitor)
    }
}

struct JsonVisitor;

impl<'de> Visitor<'de> for JsonVisitor {
    type Value = Json;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_unit<E>(self) -> Result<Json, E> {
        Ok(Json::Null)
    }

    fn visit_bool<E>(self, v: bool) -> Result<Json, E> {
        Ok(Json::Bool(v))
    }

    fn visit_i64<E>(self, v: i64) -> Result<Json, E> {
        Ok(Json::Number(v.into()))
    }

    fn visit_u64<E>(self, v: u64) -> Result<Json, E> {
        Ok(Json::Number(v.into()))
    }

    fn visit_f64<E: de::Error>(self, v: f64) -> Result<Json, E> {
        serde_json::Number::from_f64(v)
            .map(Json::Number)
            .ok_or_else(|| E::custom("a number that is not finite"))
    }

    fn visit_str<E>(self, v: &str) -> Result<Json, E> {
        Ok(Json::String(v.to_owned()))
    }

    fn visit_string<E>(self, v: String) -> Result<Json, E> {
        Ok(Json::String(v))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Json, A::Error> {
        let mut out = Vec::new();
        while let Some(v) = seq.next_element()? {
            out.push(v);
        }
        Ok(Json::Array(out))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Json, A::Error> {
        let mut out: Vec<(String, Json)> = Vec::new();
        while let Some((k, v)) = map.next_entry::<String, Json>()? {
            if out.iter().any(|(seen, _)| *seen == k) {
                return Err(de::Error::custom(format!("the key `{k}` appears twice")));
            }
            out.push((k, v));
        }
        Ok(Json::Object(out))
    }
}

/// How a file was laid out, so it is written back the same way.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Style {
    /// The indentation of one level; `None` for a file on one line.
    pub indent: Option<String>,
    pub trailing_newline: bool,
}

impl Default for Style {
    fn default() -> Self {
        Style {
            indent: Some("  ".to_owned()),
            trailing_newline: true,
        }
    }
}

/// Parses a settings file, and how it is laid out.
pub fn parse(text: &str) -> Result<(Json, Style), String> {
    let value: Json = serde_json::from_str(text).map_err(|e| {
        format!(
            "it is not valid JSON (line {}, column {}: {e}); vouch does not rewrite a file it \
             cannot read whole (comments are not JSON either)",
            e.line(),
            e.column()
        )
    })?;
    let body = text.trim_end();
    let indent = body.lines().nth(1).map(|line| {
        line.chars()
            .take_while(|c| *c == ' ' || *c == '\t')
            .collect::<String>()
    });
    let style = Style {
        indent: match indent {
            Some(i) if !i.is_empty() => Some(i),
            Some(_) => Some("  ".to_owned()),
            None => None,
        },
        trailing_newline: text.ends_with('\n'),
    };
    Ok((value, style))
}

/// `value` laid out in `style`.
pub fn render(value: &Json, style: &Style) -> Result<String, String> {
    let mut out = Vec::new();
    let written = match &style.indent {
        Some(indent) => {
            let formatter = serde_json::ser::PrettyFormatter::with_indent(indent.as_bytes());
            let mut ser = serde_json::Serializer::with_formatter(&mut out, formatter);
            value.serialize(&mut ser)
        }
        None => value.serialize(&mut serde_json::Serializer::new(&mut out)),
    };
    written.map_err(|e| format!("cannot write JSON: {e}"))?;
    let mut text = String::from_utf8(out).map_err(|e| format!("cannot write JSON: {e}"))?;
    if style.trailing_newline {
        text.push('\n');
    }
    Ok(text)
}

/// What decides whether a hook entry is vouch's.
pub type IsVouch<'a> = &'a dyn Fn(&Json) -> bool;

/// What one install changed beyond vouch's own hook entries, so uninstall
/// can put it back.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Changes {
    /// Keys install added, in order: with the value it put there (removed
    /// again while it still holds it), or none for a container it made
    /// (removed again when empty).
    pub created: Vec<Created>,
    /// Settings install set (Qwen Code's folder trust), with what they held
    /// before (none: absent).
    pub forced: Vec<Forced>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Created {
    pub path: Vec<String>,
    pub value: Option<Value>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Forced {
    pub path: Vec<String>,
    pub before: Option<Value>,
}

fn dotted(path: &[String]) -> String {
    path.join(".")
}

/// Merges `snippet` (vouch's fragment) into `doc`. Vouch's entries already
/// there are replaced where they stand; the others are kept as they are.
pub fn merge(
    doc: &mut Json,
    snippet: &Value,
    rules: &JsonRules,
    is_vouch: IsVouch<'_>,
) -> Result<Changes, String> {
    if !matches!(doc, Json::Object(_)) {
        return Err("its top level is not a JSON object".to_owned());
    }
    for path in rules.off_switches {
        if doc.at(path) == Some(&Json::Bool(true)) {
            return Err(format!(
                "`{}` is true there, so the harness runs no hook at all, vouch's included; \
                 remove it first",
                path.join(".")
            ));
        }
    }
    let Value::Object(fragment) = snippet else {
        return Err("vouch's fragment is not a JSON object".to_owned());
    };
    let mut changes = Changes::default();
    for (key, value) in fragment {
        if key == "hooks" {
            merge_hooks(doc, value, is_vouch, &mut changes)?;
        } else {
            ensure(doc, vec![key.clone()], value, &mut changes)?;
        }
    }
    for path in rules.force_true {
        force_true(doc, path, &mut changes)?;
    }
    Ok(changes)
}

fn merge_hooks(
    doc: &mut Json,
    hooks: &Value,
    is_vouch: IsVouch<'_>,
    changes: &mut Changes,
) -> Result<(), String> {
    let Value::Object(events) = hooks else {
        return Err("vouch's fragment has no hooks object".to_owned());
    };
    let prefix = ["hooks".to_owned()];
    let table = child_container(doc, &[], "hooks", true, changes)?;
    for (event, entries) in events {
        let list = child_container(table, &prefix, event, false, changes)?;
        let Json::Array(items) = list else {
            return Err(format!("`hooks.{event}` is not an array"));
        };
        let first = items.iter().position(is_vouch);
        items.retain(|e| !is_vouch(e));
        let at = first.unwrap_or(items.len()).min(items.len());
        let new: Vec<Json> = entries
            .as_array()
            .map(|a| a.iter().map(Json::from_value).collect())
            .unwrap_or_default();
        for (offset, entry) in new.into_iter().enumerate() {
            items.insert(at.saturating_add(offset).min(items.len()), entry);
        }
    }
    Ok(())
}

/// The object or array `key` of `parent` (an object at `prefix`), made
/// when absent (`object` says which) and recorded in `changes`.
fn child_container<'a>(
    parent: &'a mut Json,
    prefix: &[String],
    key: &str,
    object: bool,
    changes: &mut Changes,
) -> Result<&'a mut Json, String> {
    let mut path = prefix.to_vec();
    path.push(key.to_owned());
    let Json::Object(entries) = parent else {
        return Err(format!("`{}`'s parent is not an object", dotted(&path)));
    };
    let index = match entries.iter().position(|(k, _)| k == key) {
        Some(i) => i,
        None => {
            let empty = if object {
                Json::Object(Vec::new())
            } else {
                Json::Array(Vec::new())
            };
            entries.push((key.to_owned(), empty));
            changes.created.push(Created {
                path: path.clone(),
                value: None,
            });
            entries.len().saturating_sub(1)
        }
    };
    let child = entries
        .get_mut(index)
        .map(|(_, v)| v)
        .ok_or_else(|| format!("`{}` vanished", dotted(&path)))?;
    let fits = if object {
        matches!(child, Json::Object(_))
    } else {
        matches!(child, Json::Array(_))
    };
    if !fits {
        return Err(format!(
            "`{}` is not {}",
            dotted(&path),
            if object { "an object" } else { "an array" }
        ));
    }
    Ok(child)
}

/// Makes `doc` hold `value` at `path`: adds what is absent, recurses into
/// objects, refuses a different value already there.
fn ensure(
    doc: &mut Json,
    path: Vec<String>,
    value: &Value,
    changes: &mut Changes,
) -> Result<(), String> {
    let Some(key) = path.last().cloned() else {
        return Ok(());
    };
    let Json::Object(entries) = doc else {
        return Err(format!("`{}`'s parent is not an object", dotted(&path)));
    };
    match entries.iter_mut().find(|(k, _)| *k == key) {
        None => {
            entries.push((key, Json::from_value(value)));
            changes.created.push(Created {
                path,
                value: Some(value.clone()),
            });
            Ok(())
        }
        Some((_, existing)) => match (existing, value) {
            (existing @ Json::Object(_), Value::Object(wanted)) => {
                for (k, v) in wanted {
                    let mut sub = path.clone();
                    sub.push(k.clone());
                    ensure(existing, sub, v, changes)?;
                }
                Ok(())
            }
            (existing, wanted) if existing.to_value() == *wanted => Ok(()),
            (existing, wanted) => Err(format!(
                "`{}` is {} there and vouch needs {wanted}; change it, then install again",
                dotted(&path),
                existing.to_value()
            )),
        },
    }
}

fn force_true(doc: &mut Json, path: &[&str], changes: &mut Changes) -> Result<(), String> {
    let Some((last, parents)) = path.split_last() else {
        return Ok(());
    };
    let mut at = doc;
    let mut walked: Vec<String> = Vec::new();
    for key in parents {
        walked.push((*key).to_owned());
        let Json::Object(entries) = at else {
            return Err(format!("`{}`'s parent is not an object", walked.join(".")));
        };
        let index = match entries.iter().position(|(k, _)| k == key) {
            Some(i) => i,
            None => {
                entries.push(((*key).to_owned(), Json::Object(Vec::new())));
                changes.created.push(Created {
                    path: walked.clone(),
                    value: None,
                });
                entries.len().saturating_sub(1)
            }
        };
        at = entries
            .get_mut(index)
            .map(|(_, v)| v)
            .ok_or_else(|| format!("`{}` vanished", walked.join(".")))?;
        if !matches!(at, Json::Object(_)) {
            return Err(format!("`{}` is not an object", walked.join(".")));
        }
    }
    let Json::Object(entries) = at else {
        return Err(format!("`{}` is not an object", parents.join(".")));
    };
    let before = entries
        .iter()
        .find(|(k, _)| k == last)
        .map(|(_, v)| v.to_value());
    if before == Some(Value::Bool(true)) {
        return Ok(());
    }
    match entries.iter_mut().find(|(k, _)| k == last) {
        Some((_, v)) => *v = Json::Bool(true),
        None => entries.push(((*last).to_owned(), Json::Bool(true))),
    }
    changes.forced.push(Forced {
        path: path.iter().map(|s| (*s).to_owned()).collect(),
        before,
    });
    Ok(())
}

/// Takes vouch's entries out of `doc` and, with what install recorded,
/// puts back what it changed. Returns how many entries went.
pub fn unmerge(doc: &mut Json, is_vouch: IsVouch<'_>, changes: Option<&Changes>) -> usize {
    let mut removed = 0;
    let mut emptied: Vec<String> = Vec::new();
    if let Some(Json::Object(events)) = doc.get_mut("hooks") {
        for (event, list) in events.iter_mut() {
            if let Json::Array(items) = list {
                let before = items.len();
                items.retain(|e| !is_vouch(e));
                let gone = before.saturating_sub(items.len());
                removed += gone;
                if gone > 0 && items.is_empty() {
                    emptied.push(event.clone());
                }
            }
        }
        if changes.is_none() {
            // Without a record, an event left empty by taking vouch out
            // was vouch's alone.
            events.retain(|(k, v)| !(emptied.contains(k) && v.is_empty_container()));
        }
    }
    match changes {
        Some(changes) => {
            for forced in changes.forced.iter().rev() {
                restore(doc, &forced.path, forced.before.as_ref());
            }
            for created in changes.created.iter().rev() {
                remove_created(doc, created);
            }
        }
        None => {
            if doc.get("hooks").is_some_and(Json::is_empty_container) && removed > 0 {
                remove_at(doc, &["hooks".to_owned()]);
            }
        }
    }
    removed
}

fn parent_of<'a>(
    doc: &'a mut Json,
    path: &[String],
) -> Option<(&'a mut Vec<(String, Json)>, String)> {
    let (last, parents) = path.split_last()?;
    let mut at = doc;
    for key in parents {
        at = at.get_mut(key)?;
    }
    match at {
        Json::Object(entries) => Some((entries, last.clone())),
        _ => None,
    }
}

fn remove_at(doc: &mut Json, path: &[String]) {
    if let Some((entries, key)) = parent_of(doc, path) {
        entries.retain(|(k, _)| *k != key);
    }
}

fn restore(doc: &mut Json, path: &[String], before: Option<&Value>) {
    let Some((entries, key)) = parent_of(doc, path) else {
        return;
    };
    match before {
        None => entries.retain(|(k, _)| *k != key),
        Some(v) => {
            if let Some((_, slot)) = entries.iter_mut().find(|(k, _)| *k == key) {
                *slot = Json::from_value(v);
            }
        }
    }
}

fn remove_created(doc: &mut Json, created: &Created) {
    let Some((entries, key)) = parent_of(doc, &created.path) else {
        return;
    };
    let still_ours = entries.iter().any(|(k, v)| {
        *k == key
            && match &created.value {
                Some(value) => v.to_value() == *value,
                None => v.is_empty_container(),
            }
    });
    if still_ours {
        entries.retain(|(k, _)| *k != key);
    }
}

/// The vouch entries in `doc`'s hooks, per event: what install twice must
/// leave at one.
pub fn count_vouch(doc: &Json, is_vouch: IsVouch<'_>) -> usize {
    match doc.get("hooks") {
        Some(Json::Object(events)) => events
            .iter()
            .filter_map(|(_, v)| v.as_array())
            .map(|items| items.iter().filter(|e| is_vouch(e)).count())
            .sum(),
        _ => 0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vouch(e: &Json) -> bool {
        e.get("command")
            .and_then(Json::as_str)
            .is_some_and(|c| c.starts_with("vouch "))
    }

    #[test]
    fn key_order_and_layout_survive_a_round_trip() {
        let text = "{\n    \"zeta\": 1,\n    \"alpha\": {\n        \"b\": [],\n        \"a\": null\n    }\n}\n";
        let (doc, style) = parse(text).unwrap();
        assert_eq!(style.indent.as_deref(), Some("    "));
        assert_eq!(render(&doc, &style).unwrap(), text);
        let (doc, style) = parse("{\"b\":1,\"a\":2}").unwrap();
        assert_eq!(render(&doc, &style).unwrap(), "{\"b\":1,\"a\":2}");
        assert!(parse("{\"a\":1,\"a\":2}").unwrap_err().contains("twice"));
    }

    #[test]
    fn merge_then_unmerge_gives_the_file_back() {
        let text = "{\n  \"model\": \"x\",\n  \"hooks\": {\n    \"Pre\": [\n      {\n        \"command\": \"mine\"\n      }\n    ]\n  }\n}\n";
        let (mut doc, style) = parse(text).unwrap();
        let snippet = serde_json::json!({"version": 1, "hooks": {"Pre": [{"command": "vouch hook x"}], "Post": [{"command": "vouch hook x"}]}});
        let rules = JsonRules {
            off_switches: &[&["disableAllHooks"]],
            force_true: &[&["security", "trust", "enabled"]],
        };
        let changes = merge(&mut doc, &snippet, &rules, &vouch).unwrap();
        assert_eq!(count_vouch(&doc, &vouch), 2);
        let again = changes.clone();
        merge(&mut doc, &snippet, &rules, &vouch).unwrap();
        assert_eq!(
            count_vouch(&doc, &vouch),
            2,
            "install twice is one entry per event"
        );
        assert_eq!(
            doc.at(&["hooks", "Pre"]).unwrap().as_array().unwrap().len(),
            2
        );
        unmerge(&mut doc, &vouch, Some(&again));
        assert_eq!(render(&doc, &style).unwrap(), text);
        let (mut off, _) = parse("{\"disableAllHooks\": true}").unwrap();
        assert!(merge(&mut off, &snippet, &rules, &vouch).is_err());
        let (mut conflict, _) = parse("{\"version\": 2}").unwrap();
        let e = merge(&mut conflict, &snippet, &rules, &vouch).unwrap_err();
        assert!(e.contains("`version`"), "{e}");
    }
}
