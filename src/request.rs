//! The canonical request: the one shape every harness adapter, the CLI and the
//! HTTP service translate into before anything is decided.
//!
//! Parsing is strict on purpose. An unknown field is far more likely to be a
//! typo that silently drops a constraint (`comand`) than a harmless extra, so
//! it is an error that names the field. Sizes are bounded and an oversized
//! value is an error, never a truncation: a truncated command is a different
//! command.

use std::collections::BTreeMap;
use std::fmt;

use serde::{Deserialize, Serialize};
use serde_json::Value;
use sha2::{Digest, Sha256};

/// Largest accepted request body, in bytes.
pub const MAX_REQUEST_BYTES: usize = 1024 * 1024;
/// Largest accepted `command`, in bytes.
pub const MAX_COMMAND_BYTES: usize = 64 * 1024;
/// Largest accepted path-like field (`cwd`, `home`, `path`, …), in bytes.
pub const MAX_PATH_BYTES: usize = 4096;
/// Largest accepted number of transcript entries.
pub const MAX_TRANSCRIPT_ENTRIES: usize = 10_000;

/// Why a request was rejected. Messages name the field and the problem.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum RequestError {
    #[error("request body is {size} bytes, larger than the limit of {limit} bytes")]
    TooLarge { size: usize, limit: usize },
    #[error("request body is larger than the limit of {limit} bytes")]
    StreamTooLarge { limit: usize },
    #[error("request body is empty")]
    Empty,
    #[error("request body is not valid UTF-8 (at byte {offset})")]
    NotUtf8 { offset: usize },
    #[error("request body must be a JSON object (`{{…}}`), not {found}")]
    NotAnObject { found: &'static str },
    #[error("{0}")]
    Json(String),
    #[error("field `{field}` is {size} bytes, larger than the limit of {limit} bytes")]
    FieldTooLarge {
        field: &'static str,
        size: usize,
        limit: usize,
    },
    #[error("field `{field}` contains a NUL byte")]
    NulByte { field: &'static str },
    #[error("field `{field}` must be an absolute path, got `{value}`")]
    NotAbsolute { field: &'static str, value: String },
    #[error("field `{field}` must not be empty")]
    EmptyField { field: &'static str },
    #[error("field `transcript` has {count} entries, more than the limit of {limit}")]
    TranscriptTooLong { count: usize, limit: usize },
}

/// The surface an action crosses.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Surface {
    Bash,
    Write,
    Edit,
    Read,
    Path,
    ExternalDirectory,
    Network,
    Mcp,
    Delete,
    GitPush,
    /// A harness tool name outside the built-in set, `^[A-Za-z0-9_.:-]{1,64}$`.
    Custom(String),
}

impl Surface {
    pub fn as_str(&self) -> &str {
        match self {
            Surface::Bash => "bash",
            Surface::Write => "write",
            Surface::Edit => "edit",
            Surface::Read => "read",
            Surface::Path => "path",
            Surface::ExternalDirectory => "external_directory",
            Surface::Network => "network",
            Surface::Mcp => "mcp",
            Surface::Delete => "delete",
            Surface::GitPush => "git_push",
            Surface::Custom(name) => name,
        }
    }

    /// Surfaces whose action is a write, delete or move of `path`.
    pub fn writes_path(&self) -> bool {
        matches!(
            self,
            Surface::Write | Surface::Edit | Surface::Delete | Surface::Path
        )
    }
}

impl fmt::Display for Surface {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl std::str::FromStr for Surface {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Ok(match s {
            "bash" => Surface::Bash,
            "write" => Surface::Write,
            "edit" => Surface::Edit,
            "read" => Surface::Read,
            "path" => Surface::Path,
            "external_directory" => Surface::ExternalDirectory,
            "network" => Surface::Network,
            "mcp" => Surface::Mcp,
            "delete" => Surface::Delete,
            "git_push" => Surface::GitPush,
            other if is_custom_surface(other) => Surface::Custom(other.to_owned()),
            other => return Err(format!("surface `{other}` is not valid")),
        })
    }
}

fn is_custom_surface(s: &str) -> bool {
    (1..=64).contains(&s.len())
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b':' | b'-'))
}

impl Serialize for Surface {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for Surface {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let raw = String::deserialize(deserializer)?;
        raw.parse().map_err(serde::de::Error::custom)
    }
}

/// One entry of the untrusted transcript, oldest first.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "role", rename_all = "snake_case", deny_unknown_fields)]
pub enum TranscriptEntry {
    User {
        text: String,
    },
    ToolCall {
        #[serde(default)]
        tool_call_id: Option<String>,
        #[serde(default)]
        tool_name: Option<String>,
        #[serde(default)]
        input: Option<Value>,
    },
    ToolResult {
        #[serde(default)]
        tool_call_id: Option<String>,
        #[serde(default)]
        text: String,
    },
    Assistant {
        text: String,
    },
    /// Compaction or branch summary: context, never authorization.
    Summary {
        text: String,
    },
}

/// The canonical request (design §4).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Request {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_call_id: Option<String>,
    pub session_id: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub turn_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent: Option<String>,
    pub surface: Surface,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub command: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cwd: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub home: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resolved_path: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub destination: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub transcript: Vec<TranscriptEntry>,
    #[serde(default)]
    pub issue_grant: bool,
    /// The caller runs an inert allow's confined form (the decision's
    /// `confined`) in place of `command`. Without it an inert command is
    /// not allowed: it goes on to routing (docs/confine.md). How the call
    /// is carried, not what it is: not part of `request_hash`.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub can_run_confined: bool,
    /// Sent by `vouch hook --server`: the hook decided inert where the
    /// files are, and the service, which cannot see them, must not
    /// (docs/remote-hook.md). Not part of `request_hash`.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub remote_hook: bool,
    /// Set by the service, never read from a body: the caller may be on
    /// another machine (the service accepts remote peers, or a proxy
    /// forwarded the call), so this machine's files are not the command's
    /// and inert is not decided.
    #[serde(skip)]
    pub files_elsewhere: bool,
    /// Where `transcript` came from, for the packet's host note. Only a
    /// harness adapter sets it: it is never read from a request body (an
    /// unknown field there), so a caller cannot word the host's note.
    #[serde(skip)]
    pub transcript_source: TranscriptSource,
}

/// Where a request's transcript evidence came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum TranscriptSource {
    /// The caller sent it with the request (HTTP, CLI): taken as sent.
    #[default]
    Caller,
    /// A harness adapter read the harness's transcript file, and took the
    /// latest user message from `prompt`.
    Harness {
        file: TranscriptFile,
        prompt: PromptSource,
    },
}

/// What became of the harness's transcript file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TranscriptFile {
    /// The harness named none, or reading is switched off
    /// (`hooks.transcript_tail_bytes = 0`).
    NotRead,
    /// Named, but not there (the harness had not written it yet) or not
    /// readable.
    Missing,
    /// Read.
    Read,
}

/// Where the latest user message of a harness's call came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PromptSource {
    /// The transcript file holds it.
    Transcript,
    /// The transcript holds none; the prompt the harness's prompt hook
    /// recorded for the session stands in for it.
    Record,
    /// Neither the transcript nor a record holds one.
    Nowhere,
}

impl Request {
    /// Parses and validates one request from raw bytes.
    pub fn from_slice(bytes: &[u8]) -> Result<Self, RequestError> {
        if bytes.len() > MAX_REQUEST_BYTES {
            return Err(RequestError::TooLarge {
                size: bytes.len(),
                limit: MAX_REQUEST_BYTES,
            });
        }
        let text = std::str::from_utf8(bytes).map_err(|e| RequestError::NotUtf8 {
            offset: e.valid_up_to(),
        })?;
        // serde's derived structs also read an array as their fields in
        // order; the canonical request is an object and nothing else.
        let found = match text.trim_start().as_bytes().first() {
            None | Some(b'{') => None,
            Some(b'[') => Some("an array"),
            Some(b'"') => Some("a string"),
            Some(b't' | b'f') => Some("a boolean"),
            Some(b'n') => Some("null"),
            Some(_) => Some("a number or other text"),
        };
        if let Some(found) = found {
            return Err(RequestError::NotAnObject { found });
        }
        let request: Request = crate::json::from_slice(text.as_bytes()).map_err(|e| match e {
            crate::json::JsonError::Empty => RequestError::Empty,
            crate::json::JsonError::Invalid(_) | crate::json::JsonError::Trailing(_) => {
                RequestError::Json(e.to_string())
            }
        })?;
        request.validate()?;
        Ok(request)
    }

    /// Checks limits and shapes that serde cannot express.
    pub fn validate(&self) -> Result<(), RequestError> {
        if self.session_id.is_empty() {
            return Err(RequestError::EmptyField {
                field: "session_id",
            });
        }
        let limited: [(&'static str, Option<&String>, usize); 10] = [
            ("session_id", Some(&self.session_id), 256),
            ("id", self.id.as_ref(), 256),
            ("tool_call_id", self.tool_call_id.as_ref(), 256),
            ("turn_id", self.turn_id.as_ref(), 256),
            ("command", self.command.as_ref(), MAX_COMMAND_BYTES),
            ("cwd", self.cwd.as_ref(), MAX_PATH_BYTES),
            ("home", self.home.as_ref(), MAX_PATH_BYTES),
            ("path", self.path.as_ref(), MAX_PATH_BYTES),
            ("resolved_path", self.resolved_path.as_ref(), MAX_PATH_BYTES),
            ("destination", self.destination.as_ref(), 1024),
        ];
        for (field, value, limit) in limited {
            let Some(value) = value else { continue };
            if value.len() > limit {
                return Err(RequestError::FieldTooLarge {
                    field,
                    size: value.len(),
                    limit,
                });
            }
            if value.contains('\0') {
                return Err(RequestError::NulByte { field });
            }
        }
        for (field, value) in [
            ("cwd", self.cwd.as_ref()),
            ("home", self.home.as_ref()),
            ("resolved_path", self.resolved_path.as_ref()),
        ] {
            if let Some(value) = value
                && !value.starts_with('/')
            {
                return Err(RequestError::NotAbsolute {
                    field,
                    value: value.clone(),
                });
            }
        }
        if self.transcript.len() > MAX_TRANSCRIPT_ENTRIES {
            return Err(RequestError::TranscriptTooLong {
                count: self.transcript.len(),
                limit: MAX_TRANSCRIPT_ENTRIES,
            });
        }
        Ok(())
    }

    /// The action fields that identify "the same action" (design §4).
    pub fn action_value(&self) -> Value {
        let mut action = serde_json::Map::new();
        let mut put = |key: &str, value: Option<&String>| {
            if let Some(v) = value {
                action.insert(key.to_owned(), Value::String(v.clone()));
            }
        };
        put("surface", Some(&self.surface.as_str().to_owned()));
        put("tool", self.tool.as_ref());
        put("command", self.command.as_ref());
        put("path", self.path.as_ref());
        put("resolved_path", self.resolved_path.as_ref());
        put("destination", self.destination.as_ref());
        put("cwd", self.cwd.as_ref());
        put("agent", self.agent.as_ref());
        if let Some(input) = &self.input {
            action.insert("input".to_owned(), input.clone());
        }
        Value::Object(action)
    }

    /// Lowercase hex SHA-256 of the canonical JSON of the action fields:
    /// the bytes `canonical_json(&self.action_value())` would be, written
    /// straight into the digest (no value tree, no text).
    pub fn request_hash(&self) -> String {
        let mut digest = Digest256(Sha256::new());
        // The keys of `action_value`, in the sorted order canonical JSON
        // writes them; absent fields are left out, as there.
        let fields: [(&str, Option<Field<'_>>); 9] = [
            ("agent", self.agent.as_deref().map(Field::Text)),
            ("command", self.command.as_deref().map(Field::Text)),
            ("cwd", self.cwd.as_deref().map(Field::Text)),
            ("destination", self.destination.as_deref().map(Field::Text)),
            ("input", self.input.as_ref().map(Field::Json)),
            ("path", self.path.as_deref().map(Field::Text)),
            (
                "resolved_path",
                self.resolved_path.as_deref().map(Field::Text),
            ),
            ("surface", Some(Field::Text(self.surface.as_str()))),
            ("tool", self.tool.as_deref().map(Field::Text)),
        ];
        digest.put(b"{");
        let mut first = true;
        for (key, field) in fields {
            let Some(field) = field else { continue };
            if !first {
                digest.put(b",");
            }
            first = false;
            write_json_string(key, &mut digest);
            digest.put(b":");
            match field {
                Field::Text(text) => write_json_string(text, &mut digest),
                Field::Json(value) => write_canonical(value, &mut digest),
            }
        }
        digest.put(b"}");
        hex::encode(digest.0.finalize())
    }

    /// The `turn_id`, or the one default turn when absent.
    pub fn turn(&self) -> &str {
        self.turn_id.as_deref().unwrap_or("default")
    }
}

/// Serializes `value` with object keys sorted and no insignificant whitespace.
///
/// Written out rather than relying on `serde_json::Map` ordering, which
/// changes if any crate in the build enables `preserve_order`.
pub fn canonical_json(value: &Value) -> String {
    let mut out = Text(String::new());
    write_canonical(value, &mut out);
    out.0
}

/// Where canonical JSON is written: a string, or a digest.
trait Sink {
    fn put_str(&mut self, s: &str);
}

struct Text(String);

impl Sink for Text {
    fn put_str(&mut self, s: &str) {
        self.0.push_str(s);
    }
}

struct Digest256(Sha256);

impl Digest256 {
    fn put(&mut self, bytes: &[u8]) {
        self.0.update(bytes);
    }
}

impl Sink for Digest256 {
    fn put_str(&mut self, s: &str) {
        self.0.update(s.as_bytes());
    }
}

/// One action field of [`Request::request_hash`].
enum Field<'a> {
    Text(&'a str),
    Json(&'a Value),
}

/// `s` as a JSON string, escaped exactly as serde_json writes it.
fn write_json_string(s: &str, out: &mut impl Sink) {
    out.put_str("\"");
    let mut start = 0;
    for (i, c) in s.char_indices() {
        let escaped = match c {
            '"' => "\\\"",
            '\\' => "\\\\",
            '\n' => "\\n",
            '\r' => "\\r",
            '\t' => "\\t",
            '\u{8}' => "\\b",
            '\u{c}' => "\\f",
            c if u32::from(c) < 0x20 => "",
            _ => continue,
        };
        out.put_str(s.get(start..i).unwrap_or_default());
        if escaped.is_empty() {
            out.put_str(&format!("\\u{:04x}", u32::from(c)));
        } else {
            out.put_str(escaped);
        }
        start = i + c.len_utf8();
    }
    out.put_str(s.get(start..).unwrap_or_default());
    out.put_str("\"");
}

fn write_canonical(value: &Value, out: &mut impl Sink) {
    match value {
        Value::Object(map) => {
            let sorted: BTreeMap<&String, &Value> = map.iter().collect();
            out.put_str("{");
            for (i, (key, val)) in sorted.into_iter().enumerate() {
                if i > 0 {
                    out.put_str(",");
                }
                write_json_string(key, out);
                out.put_str(":");
                write_canonical(val, out);
            }
            out.put_str("}");
        }
        Value::Array(items) => {
            out.put_str("[");
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.put_str(",");
                }
                write_canonical(item, out);
            }
            out.put_str("]");
        }
        Value::String(s) => write_json_string(s, out),
        Value::Null => out.put_str("null"),
        Value::Bool(true) => out.put_str("true"),
        Value::Bool(false) => out.put_str("false"),
        Value::Number(n) => out.put_str(&n.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The old definition: the canonical JSON of `action_value`, hashed.
    fn hash_of_text(r: &Request) -> String {
        hex::encode(Sha256::digest(canonical_json(&r.action_value()).as_bytes()))
    }

    #[test]
    fn strings_are_escaped_as_serde_json_escapes_them() {
        let mut all: String = (0u32..0x100).filter_map(char::from_u32).collect();
        all.push_str("\u{7f}\u{2028}\u{2029}é漢🦀\u{feff}");
        for s in [all.as_str(), "", "plain", "\"\\\"", "a\u{0}b\u{1f}c"] {
            let mut out = Text(String::new());
            write_json_string(s, &mut out);
            assert_eq!(out.0, Value::String(s.to_owned()).to_string(), "{s:?}");
        }
    }

    #[test]
    fn the_request_hash_is_the_digest_of_the_canonical_action_json() {
        let mut full = base();
        full["path"] = "src/\"x\"\n.rs".into();
        full["resolved_path"] = "/srv/app/src/x.rs".into();
        full["destination"] = "https://example.com/?q=\u{1}".into();
        full["input"] =
            serde_json::json!({"z": [1, 2.5, -3, true, null, {"b": "\t", "a": "é"}], "a": 1e300});
        let mut minimal = serde_json::json!({"session_id": "s", "surface": "read"});
        minimal["path"] = "README.md".into();
        for v in [base(), full, minimal] {
            let r = parse(&v).unwrap();
            assert_eq!(r.request_hash(), hash_of_text(&r), "{v}");
        }
    }

    fn base() -> Value {
        serde_json::json!({
            "id": "req-1", "tool_call_id": "toolu_01", "session_id": "s-1",
            "turn_id": "t-1", "source": "claude-code", "agent": "main",
            "surface": "bash", "tool": "Bash", "command": "rm -rf build",
            "cwd": "/srv/app", "home": "/home/dev",
            "input": {"command": "rm -rf build"},
            "reason": "clean", "transcript": [{"role": "user", "text": "clean"}],
            "issue_grant": false
        })
    }

    fn parse(v: &Value) -> Result<Request, RequestError> {
        Request::from_slice(v.to_string().as_bytes())
    }

    fn hash_of(v: &Value) -> String {
        match parse(v) {
            Ok(r) => r.request_hash(),
            Err(e) => format!("error: {e}"),
        }
    }

    #[test]
    fn unknown_field_is_named() {
        let mut v = base();
        v["comand"] = "ls".into();
        let err = parse(&v).unwrap_err().to_string();
        assert!(err.contains("unknown field `comand`"), "{err}");
    }

    #[test]
    fn missing_session_is_named() {
        let mut v = base();
        v.as_object_mut().unwrap().remove("session_id");
        let err = parse(&v).unwrap_err().to_string();
        assert!(err.contains("missing field `session_id`"), "{err}");
    }

    #[test]
    fn bad_surface_is_named() {
        let mut v = base();
        v["surface"] = "foo bar".into();
        let err = parse(&v).unwrap_err().to_string();
        assert!(err.contains("surface `foo bar` is not valid"), "{err}");
        v["surface"] = "my_tool:v1".into();
        assert_eq!(
            parse(&v).unwrap().surface,
            Surface::Custom("my_tool:v1".into())
        );
        v["surface"] = "x".repeat(65).into();
        assert!(parse(&v).is_err());
    }

    #[test]
    fn transcript_errors_carry_their_path() {
        let mut v = base();
        v["transcript"] =
            serde_json::json!([{"role": "user", "text": "a"}, {"role": "user", "txt": "b"}]);
        let err = parse(&v).unwrap_err().to_string();
        assert!(err.contains("transcript[1]"), "{err}");
        assert!(err.contains("txt"), "{err}");
    }

    #[test]
    fn oversized_command_is_an_error_not_a_truncation() {
        let mut v = base();
        v["command"] = "a".repeat(MAX_COMMAND_BYTES + 1).into();
        assert_eq!(
            parse(&v).unwrap_err(),
            RequestError::FieldTooLarge {
                field: "command",
                size: MAX_COMMAND_BYTES + 1,
                limit: MAX_COMMAND_BYTES
            }
        );
        v["command"] = "a".repeat(MAX_COMMAND_BYTES).into();
        assert!(parse(&v).is_ok());
    }

    #[test]
    fn oversized_body_is_rejected() {
        let body = vec![b' '; MAX_REQUEST_BYTES + 1];
        assert!(matches!(
            Request::from_slice(&body),
            Err(RequestError::TooLarge { .. })
        ));
    }

    #[test]
    fn nul_and_relative_paths_are_rejected() {
        let mut v = base();
        v["command"] = "ls\u{0}".into();
        assert_eq!(
            parse(&v).unwrap_err(),
            RequestError::NulByte { field: "command" }
        );
        let mut v = base();
        v["cwd"] = "srv".into();
        assert!(parse(&v).unwrap_err().to_string().contains("`cwd`"));
    }

    #[test]
    fn only_session_and_surface_are_required() {
        let r = Request::from_slice(br#"{"session_id":"s","surface":"read"}"#).unwrap();
        assert_eq!(r.turn(), "default");
    }

    #[test]
    fn hash_ignores_per_attempt_fields_and_evidence() {
        let h = hash_of(&base());
        assert_eq!(h.len(), 64);
        for (key, value) in [
            ("id", Value::from("req-2")),
            ("tool_call_id", "toolu_99".into()),
            ("turn_id", "t-9".into()),
            ("session_id", "s-other".into()),
            ("reason", "different reason".into()),
            ("transcript", serde_json::json!([])),
            ("issue_grant", true.into()),
            ("can_run_confined", true.into()),
            ("remote_hook", true.into()),
            ("source", "codex".into()),
            ("home", "/home/other".into()),
        ] {
            let mut v = base();
            v[key] = value;
            assert_eq!(hash_of(&v), h, "changing `{key}` must not change the hash");
        }
    }

    #[test]
    fn hash_changes_with_each_action_field() {
        let h = hash_of(&base());
        for (key, value) in [
            ("surface", Value::from("write")),
            ("tool", "Shell".into()),
            ("command", "rm -rf build2".into()),
            ("path", "/srv/app/x".into()),
            ("resolved_path", "/srv/app/y".into()),
            ("destination", "example.com:443".into()),
            ("cwd", "/srv/other".into()),
            ("agent", "sub".into()),
            (
                "input",
                serde_json::json!({"command": "rm -rf build", "x": 1}),
            ),
        ] {
            let mut v = base();
            v[key] = value;
            assert_ne!(hash_of(&v), h, "changing `{key}` must change the hash");
        }
    }

    #[test]
    fn hash_is_the_documented_canonical_json() {
        let r = parse(&base()).unwrap();
        let expected = r#"{"agent":"main","command":"rm -rf build","cwd":"/srv/app","input":{"command":"rm -rf build"},"surface":"bash","tool":"Bash"}"#;
        assert_eq!(canonical_json(&r.action_value()), expected);
        assert_eq!(
            r.request_hash(),
            hex::encode(Sha256::digest(expected.as_bytes()))
        );
    }

    /// Found by the `request` fuzz target: a number in `input` read as a
    /// slightly different `f64` than the one it was written from (serde_json
    /// parses floats fast, not exactly, unless `float_roundtrip` is on), so
    /// a request that a client re-sends as vouch wrote it — the grant broker
    /// echoing it to `/v1/grants/consume` — hashed differently.
    #[test]
    fn the_hash_survives_a_json_round_trip_of_any_number() {
        for text in [
            "1E-60",
            "1e-60",
            "0.1",
            "2.2250738585072014e-308",
            "5e-324",
            "1.7976931348623157e308",
            "9007199254740993",
            "-0.0",
            "123456789.123456789e-30",
            "4.9406564584124654e-324",
        ] {
            let body = format!(r#"{{"session_id":"s","surface":"mcp","input":{text}}}"#);
            let first = Request::from_slice(body.as_bytes()).unwrap();
            let again =
                Request::from_slice(serde_json::to_vec(&first).unwrap().as_slice()).unwrap();
            assert_eq!(again.input, first.input, "{text}");
            assert_eq!(again.request_hash(), first.request_hash(), "{text}");
        }
    }

    /// The canonical request is a JSON object. serde's derived structs also
    /// read a JSON array as their fields in order; that form is nobody's
    /// contract and is refused, by name.
    #[test]
    fn a_request_must_be_a_json_object() {
        let positional = br#"["r-1", "t-1", "s-1", null, null, null, "bash"]"#;
        let e = Request::from_slice(positional).unwrap_err().to_string();
        assert!(e.contains("JSON object"), "{e}");
        for not_object in [&b"\"s\""[..], b"3", b"null", b"true", b" [] "] {
            let e = Request::from_slice(not_object).unwrap_err().to_string();
            assert!(e.contains("JSON object"), "{e}");
        }
        assert!(Request::from_slice(b" \n{\"session_id\":\"s\",\"surface\":\"bash\"}").is_ok());
    }

    #[test]
    fn canonical_json_sorts_nested_keys() {
        let v = serde_json::json!({"b": {"z": 1, "a": [ {"y": 2, "x": 3} ]}, "a": "é"});
        assert_eq!(
            canonical_json(&v),
            r#"{"a":"é","b":{"a":[{"x":3,"y":2}],"z":1}}"#
        );
    }
}
