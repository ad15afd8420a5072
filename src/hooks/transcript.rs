//! Reading a harness's transcript file for evidence: the user's latest
//! request, the tool calls and results of the current turn, compaction
//! summaries — tolerantly and bounded.
//!
//! Tolerant, because the file belongs to the harness and is being written
//! while the hook runs: a missing file, a partial last line, an unknown line
//! type or a line that is not JSON is skipped, never an error. Bounded,
//! because it can be hundreds of MiB: only the tail is read, in growing
//! windows from the end (64 KiB, then ×4) until the latest genuine user
//! message is inside the window or `hooks.transcript_tail_bytes` is reached.
//! The result is plain [`TranscriptEntry`] values; redaction, selection and
//! budgets are the evidence packet's job.

use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::path::Path;

use serde_json::Value;

use crate::request::{MAX_TRANSCRIPT_ENTRIES, TranscriptEntry};

/// The first window read from the end of the file.
const FIRST_WINDOW_BYTES: u64 = 64 * 1024;

/// A transcript format: what a window of JSONL records says. A harness
/// names its own in [`super::TranscriptRef`]; the formats several harnesses
/// share are here ([`CLAUDE_CODE`], [`CODEX`], [`GEMINI`]), a harness with
/// its own implements this in its adapter file.
pub trait Format: Sync + std::fmt::Debug {
    /// The lines of a window's records (each a parsed JSON line, oldest
    /// first; lines that were not JSON are already skipped).
    fn lines(&self, records: Vec<Value>) -> Vec<Line>;
}

/// Claude Code session JSONL (`~/.claude/projects/…/<session>.jsonl`).
#[derive(Debug)]
pub struct ClaudeCodeJsonl;
pub static CLAUDE_CODE: ClaudeCodeJsonl = ClaudeCodeJsonl;

impl Format for ClaudeCodeJsonl {
    fn lines(&self, records: Vec<Value>) -> Vec<Line> {
        records.iter().map(claude_line).collect()
    }
}

/// Codex rollout JSONL (`~/.codex/sessions/…/rollout-….jsonl`).
#[derive(Debug)]
pub struct CodexRollout;
pub static CODEX: CodexRollout = CodexRollout;

impl Format for CodexRollout {
    fn lines(&self, records: Vec<Value>) -> Vec<Line> {
        records.iter().map(codex_line).collect()
    }
}

/// Gemini CLI chat JSONL (`~/.gemini/tmp/<project>/chats/session-….jsonl`).
#[derive(Debug)]
pub struct GeminiChat;
pub static GEMINI: GeminiChat = GeminiChat;

impl Format for GeminiChat {
    fn lines(&self, records: Vec<Value>) -> Vec<Line> {
        let mut fold = GeminiFold::default();
        for record in &records {
            fold.add(record);
        }
        fold.lines()
    }
}

/// What the transcript says.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Transcript {
    /// Oldest first, at most [`MAX_TRANSCRIPT_ENTRIES`] (the newest).
    pub entries: Vec<TranscriptEntry>,
    /// An id for the latest user message (its record id), usable as a turn.
    pub latest_user_id: Option<String>,
    /// Codex: who reviews approval requests in the latest turn
    /// (`approvals_reviewer`: `user` is a person).
    pub approvals_reviewer: Option<String>,
    /// The file existed and was read.
    pub read: bool,
}

/// One parsed line: entries (a line can hold several) and side facts.
#[derive(Debug, Default)]
pub struct Line {
    pub entries: Vec<TranscriptEntry>,
    /// A genuine user message, with its record id when there is one.
    pub user_id: Option<Option<String>>,
    /// Codex: who reviews approval requests from here on.
    pub approvals_reviewer: Option<String>,
}

/// Reads the tail of `path`. Never fails: what cannot be read is absent.
pub fn read(path: &Path, format: &dyn Format, max_bytes: u64) -> Transcript {
    // Never a FIFO in the transcript's place (`open_regular`).
    let Ok(mut file) = crate::paths::open_regular(path) else {
        return Transcript::default();
    };
    let Ok(size) = file.metadata().map(|m| m.len()) else {
        return Transcript::default();
    };
    let cap = size.min(max_bytes);
    let mut window = FIRST_WINDOW_BYTES.min(cap);
    loop {
        let Some(text) = tail(&mut file, size, window) else {
            return Transcript::default();
        };
        let from_start = window == size;
        let parsed = parse(&text, format, from_start);
        // Found the user's request, or nothing more may be read.
        if parsed.latest_user_id.is_some() || has_user(&parsed) || window >= cap {
            return parsed;
        }
        window = window.saturating_mul(4).min(cap);
    }
}

fn has_user(t: &Transcript) -> bool {
    t.entries
        .iter()
        .any(|e| matches!(e, TranscriptEntry::User { .. }))
}

/// The last `window` bytes of the file, as text (invalid UTF-8 replaced).
fn tail(file: &mut File, size: u64, window: u64) -> Option<String> {
    file.seek(SeekFrom::Start(size.saturating_sub(window)))
        .ok()?;
    let mut bytes = Vec::new();
    file.by_ref().take(window).read_to_end(&mut bytes).ok()?;
    Some(String::from_utf8_lossy(&bytes).into_owned())
}

/// Parses the lines of a window. Unless the window starts at the file's
/// beginning, its first line is partial and skipped; a partial last line
/// fails to parse and is skipped like any other bad line.
pub fn parse(text: &str, format: &dyn Format, from_start: bool) -> Transcript {
    let mut lines = text.split('\n');
    if !from_start {
        lines.next();
    }
    let mut out = Transcript {
        read: true,
        ..Transcript::default()
    };
    // A window holds at most `hooks.transcript_tail_bytes`, so its records
    // are bounded by it.
    let records: Vec<Value> = lines
        .map(str::trim)
        .filter(|raw| !raw.is_empty())
        .filter_map(|raw| serde_json::from_str::<Value>(raw).ok())
        .collect();
    for line in format.lines(records) {
        absorb(&mut out, line);
    }
    let excess = out.entries.len().saturating_sub(MAX_TRANSCRIPT_ENTRIES);
    out.entries.drain(..excess);
    out
}

fn absorb(out: &mut Transcript, line: Line) {
    if let Some(id) = line.user_id {
        out.latest_user_id = id;
    }
    if line.approvals_reviewer.is_some() {
        out.approvals_reviewer = line.approvals_reviewer;
    }
    out.entries.extend(line.entries);
}

/// Text of a content value: a string, or the `text` of its text blocks.
pub fn content_text(content: &Value, block_types: &[&str]) -> String {
    match content {
        Value::String(s) => s.clone(),
        Value::Array(blocks) => blocks
            .iter()
            .filter(|b| {
                b.get("type")
                    .and_then(Value::as_str)
                    .is_none_or(|t| block_types.contains(&t))
            })
            .filter_map(|b| b.get("text").and_then(Value::as_str))
            .collect::<Vec<_>>()
            .join("\n"),
        _ => String::new(),
    }
}

pub fn str_of<'a>(v: &'a Value, key: &str) -> Option<&'a str> {
    v.get(key).and_then(Value::as_str)
}

// ---------------------------------------------------------------------------
// Claude Code
// ---------------------------------------------------------------------------

/// One Claude Code record: `user` (text, or `tool_result` blocks),
/// `assistant` (`tool_use` blocks; prose is left out of the evidence anyway),
/// `summary`, and compaction summaries carried as user records.
fn claude_line(v: &Value) -> Line {
    let mut line = Line::default();
    let kind = str_of(v, "type").unwrap_or_default();
    let content = v.get("message").and_then(|m| m.get("content"));
    match kind {
        "summary" => {
            if let Some(text) = str_of(v, "summary") {
                line.entries.push(TranscriptEntry::Summary {
                    text: text.to_owned(),
                });
            }
        }
        "user" => {
            let Some(content) = content else { return line };
            if v.get("isCompactSummary").and_then(Value::as_bool) == Some(true) {
                line.entries.push(TranscriptEntry::Summary {
                    text: content_text(content, &["text"]),
                });
                return line;
            }
            claude_tool_results(content, &mut line);
            let text = content_text(content, &["text"]);
            let meta = v.get("isMeta").and_then(Value::as_bool) == Some(true);
            if !text.trim().is_empty() && !meta {
                line.entries.push(TranscriptEntry::User { text });
                let id = str_of(v, "promptId").or_else(|| str_of(v, "uuid"));
                line.user_id = Some(id.map(str::to_owned));
            }
        }
        "assistant" => {
            let Some(Value::Array(blocks)) = content else {
                return line;
            };
            for b in blocks {
                if str_of(b, "type") == Some("tool_use") {
                    line.entries.push(TranscriptEntry::ToolCall {
                        tool_call_id: str_of(b, "id").map(str::to_owned),
                        tool_name: str_of(b, "name").map(str::to_owned),
                        input: b.get("input").cloned(),
                    });
                }
            }
        }
        _ => {}
    }
    line
}

fn claude_tool_results(content: &Value, line: &mut Line) {
    let Value::Array(blocks) = content else {
        return;
    };
    for b in blocks {
        if str_of(b, "type") == Some("tool_result") {
            line.entries.push(TranscriptEntry::ToolResult {
                tool_call_id: str_of(b, "tool_use_id").map(str::to_owned),
                text: b
                    .get("content")
                    .map(|c| content_text(c, &["text"]))
                    .unwrap_or_default(),
            });
        }
    }
}

// ---------------------------------------------------------------------------
// Codex
// ---------------------------------------------------------------------------

/// One Codex rollout record. User messages are `response_item` messages
/// with role `user` that the harness did not author (its environment
/// context and instructions carry `provenance.type = "harness"`); tool
/// calls are `function_call` / `custom_tool_call` / `local_shell_call`,
/// results their `…_output`; `compacted` is a summary; `turn_context` says
/// who reviews approvals.
fn codex_line(v: &Value) -> Line {
    let mut line = Line::default();
    let payload = v.get("payload").unwrap_or(&Value::Null);
    match str_of(v, "type").unwrap_or_default() {
        "turn_context" => {
            line.approvals_reviewer = str_of(payload, "approvals_reviewer").map(str::to_owned);
        }
        "compacted" => {
            if let Some(text) = str_of(payload, "message") {
                line.entries.push(TranscriptEntry::Summary {
                    text: text.to_owned(),
                });
            }
        }
        "response_item" => codex_item(payload, &mut line),
        _ => {}
    }
    line
}

fn codex_item(p: &Value, line: &mut Line) {
    let call_id = str_of(p, "call_id").map(str::to_owned);
    match str_of(p, "type").unwrap_or_default() {
        "message" if str_of(p, "role") == Some("user") && !codex_harness_authored(p) => {
            let text = p
                .get("content")
                .map(|c| content_text(c, &["input_text", "text"]))
                .unwrap_or_default();
            if !text.trim().is_empty() {
                line.entries.push(TranscriptEntry::User { text });
                line.user_id = Some(str_of(p, "id").map(str::to_owned));
            }
        }
        "function_call" => {
            // `arguments` is a JSON string; keep it structured when it parses.
            let input = str_of(p, "arguments").map(|a| {
                serde_json::from_str::<Value>(a).unwrap_or_else(|_| Value::String(a.to_owned()))
            });
            line.entries.push(TranscriptEntry::ToolCall {
                tool_call_id: call_id,
                tool_name: str_of(p, "name").map(str::to_owned),
                input,
            });
        }
        "custom_tool_call" | "local_shell_call" => {
            line.entries.push(TranscriptEntry::ToolCall {
                tool_call_id: call_id,
                tool_name: str_of(p, "name")
                    .or_else(|| str_of(p, "type"))
                    .map(str::to_owned),
                input: p.get("input").or_else(|| p.get("action")).cloned(),
            });
        }
        "function_call_output" | "custom_tool_call_output" | "local_shell_call_output" => {
            let text = match p.get("output") {
                Some(Value::String(s)) => s.clone(),
                Some(other) => str_of(other, "content")
                    .map(str::to_owned)
                    .unwrap_or_else(|| other.to_string()),
                None => String::new(),
            };
            line.entries.push(TranscriptEntry::ToolResult {
                tool_call_id: call_id,
                text,
            });
        }
        _ => {}
    }
}

fn codex_harness_authored(p: &Value) -> bool {
    p.get("internal_chat_message_metadata_passthrough")
        .and_then(|m| m.get("content_item_metadata"))
        .and_then(Value::as_array)
        .is_some_and(|items| {
            items.iter().any(|i| {
                i.get("provenance")
                    .and_then(|pr| str_of(pr, "type"))
                    .is_some_and(|t| t != "user")
            })
        })
}

// ---------------------------------------------------------------------------
// Gemini CLI
// ---------------------------------------------------------------------------

/// Gemini's chat JSONL is a header, `{"$set": {…}}` patches (one may carry
/// the whole `messages` list) and message records that later lines may
/// repeat with the same `id` (a tool call gains its result). Records are
/// folded by id, in first-seen order.
#[derive(Default)]
struct GeminiFold {
    order: Vec<String>,
    records: std::collections::HashMap<String, Value>,
}

impl GeminiFold {
    fn add(&mut self, v: &Value) {
        if let Some(set) = v.get("$set") {
            if let Some(Value::Array(messages)) = set.get("messages") {
                for m in messages {
                    self.record(m);
                }
            }
            return;
        }
        if v.get("type").is_some() {
            self.record(v);
        }
    }

    fn record(&mut self, m: &Value) {
        let Some(id) = str_of(m, "id") else { return };
        if !self.records.contains_key(id) {
            self.order.push(id.to_owned());
        }
        self.records.insert(id.to_owned(), m.clone());
    }

    fn lines(&self) -> Vec<Line> {
        self.order
            .iter()
            .filter_map(|id| self.records.get(id))
            .map(gemini_line)
            .collect()
    }
}

fn gemini_line(m: &Value) -> Line {
    let mut line = Line::default();
    let content = m
        .get("content")
        .map(|c| content_text(c, &[]))
        .unwrap_or_default();
    match str_of(m, "type").unwrap_or_default() {
        // The CLI's own first message describes the environment; it is
        // not the user's request.
        "user"
            if !content.trim_start().starts_with("<session_context>")
                && !content.trim().is_empty() =>
        {
            line.entries.push(TranscriptEntry::User { text: content });
            line.user_id = Some(str_of(m, "id").map(str::to_owned));
        }
        "gemini" => {
            for call in m
                .get("toolCalls")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
            {
                let id = str_of(call, "id").map(str::to_owned);
                line.entries.push(TranscriptEntry::ToolCall {
                    tool_call_id: id.clone(),
                    tool_name: str_of(call, "name").map(str::to_owned),
                    input: call.get("args").cloned(),
                });
                if let Some(result) = call.get("resultDisplay").or_else(|| call.get("result")) {
                    let text = match result {
                        Value::String(s) => s.clone(),
                        other => other.to_string(),
                    };
                    line.entries.push(TranscriptEntry::ToolResult {
                        tool_call_id: id,
                        text,
                    });
                }
            }
        }
        _ => {}
    }
    line
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn claude_records_become_entries() {
        // Ends in the middle of a line, as a transcript being written does.
        let text = include_str!("../../tests/fixtures/harnesses/claude-code/transcript.cut.jsonl");
        let t = parse(text, &CLAUDE_CODE, true);
        assert_eq!(t.latest_user_id.as_deref(), Some("p1"));
        assert_eq!(
            t.entries,
            vec![
                TranscriptEntry::Summary {
                    text: "earlier work".into()
                },
                TranscriptEntry::User {
                    text: "please clean build".into()
                },
                TranscriptEntry::ToolCall {
                    tool_call_id: Some("toolu_1".into()),
                    tool_name: Some("Bash".into()),
                    input: Some(serde_json::json!({"command": "ls"})),
                },
                TranscriptEntry::ToolResult {
                    tool_call_id: Some("toolu_1".into()),
                    text: "build\nsrc".into()
                },
            ]
        );
    }

    #[test]
    fn a_window_skips_its_partial_first_line() {
        let text = "ial line\"}\n{\"type\":\"user\",\"message\":{\"content\":\"hi\"}}\n";
        let t = parse(text, &CLAUDE_CODE, false);
        assert_eq!(t.entries.len(), 1);
    }

    #[test]
    fn missing_files_are_empty() {
        let t = read(Path::new("/nonexistent/t.jsonl"), &CODEX, 1 << 20);
        assert_eq!(t, Transcript::default());
    }
}
