//! The three provider wire formats: the request body each one expects and the
//! reading of its reply into "a verdict, or why not".
//!
//! `openai` and `ollama` speak chat completions with a strict `json_schema`
//! response format (OpenAI caps output with `max_completion_tokens`, Ollama
//! with `max_tokens`); `anthropic` speaks messages with one forced tool whose
//! input is the verdict. Replies are read as loose JSON so an extra field from
//! a compatible server does not matter, while the verdict inside is validated
//! strictly by [`super::verdict`].

use serde::Serialize;
use serde_json::Value;

use super::verdict::{self, Verdict, VerdictError};
use super::{FailureClass, ModelInput};
use crate::config::Provider;

/// The fixed reminder appended, as one more user message, to the second
/// call after malformed output. Request and evidence stay as they were.
pub const FORMAT_CORRECTION: &str = include_str!("../../prompts/format-correction.md");

/// Name of the forced Anthropic tool.
pub const TOOL_NAME: &str = "submit_verdict";

const TOOL_DESCRIPTION: &str = "Submit the review verdict for the requested action.";

/// `anthropic-version` header value this wire format is written against.
pub const ANTHROPIC_VERSION: &str = "2023-06-01";

/// The wire formats vouch speaks: every [`Provider`] except `none`, which
/// has no model to call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Wire {
    Openai,
    Anthropic,
    Ollama,
}

impl Wire {
    /// The wire format of a configured provider; `None` for `none`.
    pub fn of(provider: Provider) -> Option<Wire> {
        match provider {
            Provider::None => None,
            Provider::Openai => Some(Wire::Openai),
            Provider::Anthropic => Some(Wire::Anthropic),
            Provider::Ollama => Some(Wire::Ollama),
        }
    }

    pub fn provider(self) -> Provider {
        match self {
            Wire::Openai => Provider::Openai,
            Wire::Anthropic => Provider::Anthropic,
            Wire::Ollama => Provider::Ollama,
        }
    }
}

/// The path appended to `reviewer.base_url`.
pub fn endpoint_path(provider: Wire) -> &'static str {
    match provider {
        Wire::Openai | Wire::Ollama => "/chat/completions",
        Wire::Anthropic => "/messages",
    }
}

pub fn provider_name(provider: Wire) -> &'static str {
    match provider {
        Wire::Openai => "openai",
        Wire::Anthropic => "anthropic",
        Wire::Ollama => "ollama",
    }
}

/// The fixed parts of every request for one configured reviewer.
#[derive(Debug, Clone)]
pub struct RequestShape {
    pub provider: Wire,
    pub model: String,
    pub max_output_tokens: u32,
    pub schema: Value,
}

impl RequestShape {
    /// The JSON body of one call, serialized; `with_correction` appends the
    /// fixed format correction after the evidence. Written straight from
    /// borrowed parts (no intermediate `Value` tree to build and free: the
    /// packet text is the bulk of it and is copied once, into the body).
    pub fn body_bytes(
        &self,
        input: &ModelInput<'_>,
        with_correction: bool,
    ) -> Result<Vec<u8>, serde_json::Error> {
        let messages = self.messages(input, with_correction);
        match self.provider {
            Wire::Openai | Wire::Ollama => serde_json::to_vec(&self.chat_body(&messages)),
            Wire::Anthropic => serde_json::to_vec(&self.anthropic_body(input, &messages)),
        }
    }

    /// The same body as a JSON value (tests and tools).
    pub fn body(
        &self,
        input: &ModelInput<'_>,
        with_correction: bool,
    ) -> Result<Value, serde_json::Error> {
        let messages = self.messages(input, with_correction);
        match self.provider {
            Wire::Openai | Wire::Ollama => serde_json::to_value(self.chat_body(&messages)),
            Wire::Anthropic => serde_json::to_value(self.anthropic_body(input, &messages)),
        }
    }

    fn messages<'a>(&self, input: &ModelInput<'a>, with_correction: bool) -> Vec<Message<'a>> {
        let mut messages = Vec::with_capacity(3);
        match self.provider {
            Wire::Openai | Wire::Ollama => messages.push(Message {
                content: input.system,
                role: "system",
            }),
            // Anthropic takes the system prompt as a top-level field.
            Wire::Anthropic => {}
        }
        messages.push(Message {
            content: input.user,
            role: "user",
        });
        if with_correction {
            messages.push(Message {
                content: FORMAT_CORRECTION,
                role: "user",
            });
        }
        messages
    }

    fn chat_body<'a>(&'a self, messages: &'a [Message<'a>]) -> ChatBody<'a> {
        let (max_completion_tokens, max_tokens) = match self.provider {
            Wire::Openai => (Some(self.max_output_tokens), None),
            Wire::Ollama | Wire::Anthropic => (None, Some(self.max_output_tokens)),
        };
        ChatBody {
            max_completion_tokens,
            max_tokens,
            messages,
            model: &self.model,
            response_format: ResponseFormat {
                json_schema: JsonSchema {
                    name: "verdict",
                    schema: &self.schema,
                    strict: true,
                },
                kind: "json_schema",
            },
            temperature: 0,
        }
    }

    fn anthropic_body<'a>(
        &'a self,
        input: &ModelInput<'a>,
        messages: &'a [Message<'a>],
    ) -> AnthropicBody<'a> {
        AnthropicBody {
            max_tokens: self.max_output_tokens,
            messages,
            model: &self.model,
            system: input.system,
            temperature: 0,
            tool_choice: ToolChoice {
                name: TOOL_NAME,
                kind: "tool",
            },
            tools: [Tool {
                description: TOOL_DESCRIPTION,
                input_schema: &self.schema,
                name: TOOL_NAME,
            }],
        }
    }
}

// The request bodies, fields in alphabetical order: the bytes sent are the
// ones the earlier `Value`-built bodies serialized to (serde_json's maps
// are sorted), so recorded requests and tests keep reading the same.

#[derive(Serialize)]
struct Message<'a> {
    content: &'a str,
    role: &'static str,
}

#[derive(Serialize)]
struct ChatBody<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    max_completion_tokens: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    max_tokens: Option<u32>,
    messages: &'a [Message<'a>],
    model: &'a str,
    response_format: ResponseFormat<'a>,
    temperature: u8,
}

#[derive(Serialize)]
struct ResponseFormat<'a> {
    json_schema: JsonSchema<'a>,
    #[serde(rename = "type")]
    kind: &'static str,
}

#[derive(Serialize)]
struct JsonSchema<'a> {
    name: &'static str,
    schema: &'a Value,
    strict: bool,
}

#[derive(Serialize)]
struct AnthropicBody<'a> {
    max_tokens: u32,
    messages: &'a [Message<'a>],
    model: &'a str,
    system: &'a str,
    temperature: u8,
    tool_choice: ToolChoice,
    tools: [Tool<'a>; 1],
}

#[derive(Serialize)]
struct ToolChoice {
    name: &'static str,
    #[serde(rename = "type")]
    kind: &'static str,
}

#[derive(Serialize)]
struct Tool<'a> {
    description: &'static str,
    input_schema: &'a Value,
    name: &'static str,
}

/// Tokens the provider billed for one call (0 when it did not say).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Usage {
    pub input_tokens: u64,
    pub output_tokens: u64,
}

/// One successful HTTP exchange, read.
#[derive(Debug, Clone, PartialEq)]
pub struct Reply {
    pub usage: Usage,
    pub verdict: Result<Verdict, FailureClass>,
}

/// Reads a 2xx body. A body that is not the provider's envelope is
/// [`FailureClass::MalformedResponse`]; usage is kept whenever it is present,
/// because it was billed whatever the verdict turned out to be.
pub fn read_reply(provider: Wire, body: &[u8]) -> Reply {
    let Ok(envelope) = serde_json::from_slice::<Value>(body) else {
        return Reply {
            usage: Usage::default(),
            verdict: Err(FailureClass::MalformedResponse),
        };
    };
    match provider {
        Wire::Openai | Wire::Ollama => read_chat(&envelope),
        Wire::Anthropic => read_messages(&envelope),
    }
}

fn count(v: Option<&Value>) -> u64 {
    v.and_then(Value::as_u64).unwrap_or(0)
}

fn from_verdict_error(e: VerdictError) -> FailureClass {
    match e {
        VerdictError::Empty => FailureClass::EmptyOutput,
        VerdictError::InvalidJson => FailureClass::InvalidJson,
        VerdictError::SchemaInvalid => FailureClass::SchemaInvalid,
    }
}

fn read_chat(envelope: &Value) -> Reply {
    let usage = envelope.get("usage").map_or(Usage::default(), |u| Usage {
        input_tokens: count(u.get("prompt_tokens")),
        output_tokens: count(u.get("completion_tokens")),
    });
    Reply {
        usage,
        verdict: chat_verdict(envelope),
    }
}

fn chat_verdict(envelope: &Value) -> Result<Verdict, FailureClass> {
    let Some(choices) = envelope.get("choices").and_then(Value::as_array) else {
        return Err(FailureClass::MalformedResponse);
    };
    let Some(choice) = choices.first() else {
        return Err(FailureClass::EmptyOutput);
    };
    let message = choice.get("message").unwrap_or(&Value::Null);
    let refused = message
        .get("refusal")
        .and_then(Value::as_str)
        .is_some_and(|r| !r.trim().is_empty());
    match choice.get("finish_reason").and_then(Value::as_str) {
        _ if refused => return Err(FailureClass::Refusal),
        Some("content_filter") => return Err(FailureClass::Refusal),
        // Cut off by the output cap: whatever was produced is incomplete,
        // and asking again would hit the same cap.
        Some("length") => return Err(FailureClass::Truncated),
        _ => {}
    }
    let text = match message.get("content") {
        None | Some(Value::Null) => String::new(),
        Some(Value::String(s)) => s.clone(),
        // Some compatible servers send content parts.
        Some(Value::Array(parts)) => parts
            .iter()
            .filter_map(|p| p.get("text").and_then(Value::as_str))
            .collect::<Vec<_>>()
            .join(""),
        Some(_) => return Err(FailureClass::MalformedResponse),
    };
    verdict::parse_text(&text).map_err(from_verdict_error)
}

fn block_type(block: &Value) -> Option<&str> {
    block.get("type").and_then(Value::as_str)
}

fn read_messages(envelope: &Value) -> Reply {
    // Cache reads and writes are billed input too.
    let usage = envelope.get("usage").map_or(Usage::default(), |u| Usage {
        input_tokens: count(u.get("input_tokens"))
            .saturating_add(count(u.get("cache_creation_input_tokens")))
            .saturating_add(count(u.get("cache_read_input_tokens"))),
        output_tokens: count(u.get("output_tokens")),
    });
    Reply {
        usage,
        verdict: messages_verdict(envelope),
    }
}

fn messages_verdict(envelope: &Value) -> Result<Verdict, FailureClass> {
    match envelope.get("stop_reason").and_then(Value::as_str) {
        Some("max_tokens") => return Err(FailureClass::Truncated),
        Some("refusal") => return Err(FailureClass::Refusal),
        _ => {}
    }
    let Some(blocks) = envelope.get("content").and_then(Value::as_array) else {
        return Err(FailureClass::MalformedResponse);
    };
    let tool_inputs: Vec<&Value> = blocks
        .iter()
        .filter(|b| block_type(b) == Some("tool_use"))
        .filter(|b| b.get("name").and_then(Value::as_str) == Some(TOOL_NAME))
        .filter_map(|b| b.get("input"))
        .collect();
    match tool_inputs.as_slice() {
        [input] => verdict::parse_value((*input).clone()).map_err(from_verdict_error),
        // Two verdicts in one reply are ambiguous.
        [_, _, ..] => Err(FailureClass::InvalidJson),
        // A server that ignored the forced tool may still have answered in text.
        [] => {
            let text = blocks
                .iter()
                .filter(|b| block_type(b) == Some("text"))
                .filter_map(|b| b.get("text").and_then(Value::as_str))
                .collect::<Vec<_>>()
                .join("");
            verdict::parse_text(&text).map_err(from_verdict_error)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::decision::Outcome;
    use serde_json::json;

    const VERDICT: &str = r#"{"outcome":"deny","risk_level":"high","user_authorization":"unknown","rationale":"pushes to main","suggestion":"open a pull request"}"#;

    fn shape(provider: Wire) -> RequestShape {
        RequestShape {
            provider,
            model: "m".into(),
            max_output_tokens: 256,
            schema: serde_json::from_str(verdict::VERDICT_SCHEMA).unwrap(),
        }
    }

    const INPUT: ModelInput<'static> = ModelInput {
        system: "SYS",
        user: "USR",
    };

    #[test]
    fn bodies_serialize_as_their_sorted_json_values() {
        for provider in [Wire::Openai, Wire::Ollama, Wire::Anthropic] {
            for correction in [false, true] {
                let bytes = shape(provider).body_bytes(&INPUT, correction).unwrap();
                let value: Value = serde_json::from_slice(&bytes).unwrap();
                assert_eq!(String::from_utf8(bytes).unwrap(), value.to_string());
                assert_eq!(value, shape(provider).body(&INPUT, correction).unwrap());
            }
        }
    }

    #[test]
    fn openai_body() {
        let b = shape(Wire::Openai).body(&INPUT, false).unwrap();
        assert_eq!(b["max_completion_tokens"], 256);
        assert!(b.get("max_tokens").is_none());
        assert_eq!(b["temperature"], 0);
        assert_eq!(b["response_format"]["type"], "json_schema");
        assert_eq!(b["response_format"]["json_schema"]["strict"], true);
        assert_eq!(b["response_format"]["json_schema"]["name"], "verdict");
        assert_eq!(
            b["messages"],
            json!([{"role":"system","content":"SYS"},{"role":"user","content":"USR"}])
        );
    }

    #[test]
    fn ollama_body_uses_max_tokens() {
        let b = shape(Wire::Ollama).body(&INPUT, false).unwrap();
        assert_eq!(b["max_tokens"], 256);
        assert!(b.get("max_completion_tokens").is_none());
        assert_eq!(b["response_format"]["json_schema"]["strict"], true);
    }

    #[test]
    fn anthropic_body_forces_the_tool() {
        let b = shape(Wire::Anthropic).body(&INPUT, true).unwrap();
        assert_eq!(b["system"], "SYS");
        assert_eq!(b["max_tokens"], 256);
        assert_eq!(b["tool_choice"], json!({"type":"tool","name":TOOL_NAME}));
        assert_eq!(b["tools"][0]["name"], TOOL_NAME);
        assert_eq!(b["tools"][0]["input_schema"]["additionalProperties"], false);
        assert_eq!(
            b["messages"],
            json!([{"role":"user","content":"USR"},{"role":"user","content":FORMAT_CORRECTION}])
        );
    }

    #[test]
    fn chat_replies() {
        let reply = |choice: Value| {
            let body =
                json!({"choices":[choice],"usage":{"prompt_tokens":10,"completion_tokens":3}});
            read_reply(Wire::Openai, body.to_string().as_bytes())
        };
        let ok = reply(json!({"message":{"content":VERDICT},"finish_reason":"stop"}));
        assert_eq!(
            ok.usage,
            Usage {
                input_tokens: 10,
                output_tokens: 3
            }
        );
        assert_eq!(ok.verdict.unwrap().outcome, Outcome::Deny);
        let cut = reply(json!({"message":{"content":VERDICT},"finish_reason":"length"}));
        assert_eq!(cut.verdict, Err(FailureClass::Truncated));
        assert_eq!(cut.usage.output_tokens, 3);
        let refused =
            reply(json!({"message":{"content":null,"refusal":"no"},"finish_reason":"stop"}));
        assert_eq!(refused.verdict, Err(FailureClass::Refusal));
        let empty = reply(json!({"message":{"content":""},"finish_reason":"stop"}));
        assert_eq!(empty.verdict, Err(FailureClass::EmptyOutput));
        let null = reply(json!({"message":{"content":null,"refusal":null},"finish_reason":"stop"}));
        assert_eq!(null.verdict, Err(FailureClass::EmptyOutput));
        let parts = reply(json!({"message":{"content":[{"type":"text","text":VERDICT}]}}));
        assert!(parts.verdict.is_ok());
        assert_eq!(
            read_reply(Wire::Ollama, b"<html>").verdict,
            Err(FailureClass::MalformedResponse)
        );
        assert_eq!(
            read_reply(Wire::Openai, b"{\"choices\":[]}").verdict,
            Err(FailureClass::EmptyOutput)
        );
    }

    #[test]
    fn messages_replies() {
        let reply = |stop: &str, content: Value| {
            let body = json!({"content":content,"stop_reason":stop,
                "usage":{"input_tokens":7,"output_tokens":2,"cache_read_input_tokens":5}});
            read_reply(Wire::Anthropic, body.to_string().as_bytes())
        };
        let input: Value = serde_json::from_str(VERDICT).unwrap();
        let tool = json!({"type":"tool_use","id":"t","name":TOOL_NAME,"input":input});
        let ok = reply("tool_use", json!([tool]));
        assert_eq!(
            ok.usage,
            Usage {
                input_tokens: 12,
                output_tokens: 2
            }
        );
        assert_eq!(ok.verdict.unwrap().outcome, Outcome::Deny);
        assert_eq!(
            reply("max_tokens", json!([tool])).verdict,
            Err(FailureClass::Truncated)
        );
        assert_eq!(
            reply("refusal", json!([])).verdict,
            Err(FailureClass::Refusal)
        );
        assert_eq!(
            reply("tool_use", json!([tool, tool])).verdict,
            Err(FailureClass::InvalidJson)
        );
        let text = json!({"type":"text","text":format!("verdict: {VERDICT}")});
        assert!(reply("end_turn", json!([text])).verdict.is_ok());
        assert_eq!(
            reply("end_turn", json!([])).verdict,
            Err(FailureClass::EmptyOutput)
        );
        let bad = json!({"type":"tool_use","id":"t","name":TOOL_NAME,"input":{"outcome":"allow"}});
        assert_eq!(
            reply("tool_use", json!([bad])).verdict,
            Err(FailureClass::SchemaInvalid)
        );
    }
}
