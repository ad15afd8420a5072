//! Turning what the model said into a [`Verdict`], or into the reason it is not
//! one.
//!
//! Extraction is tolerant: a model may wrap its one JSON object in prose or a
//! code fence, and that is still its answer. Validation is strict: the object
//! must match `prompts/verdict.schema.json` exactly (every key present, no
//! extra or repeated key, enum values only, rationale and suggestion at most
//! 600 characters). Several candidate objects are ambiguous, so they are
//! invalid rather than guessed between.

use serde::{Deserialize, Deserializer, Serialize};

use crate::names::{Outcome, RiskLevel, named_enum};

named_enum! {
    /// How clearly the user authorized this exact action, as judged by the model.
    pub enum UserAuthorization {
        Unknown = "unknown",
        Low = "low",
        Medium = "medium",
        High = "high",
    }
}

/// The verdict JSON schema sent to the provider (structured output or tool).
pub const VERDICT_SCHEMA: &str = include_str!("../../prompts/verdict.schema.json");

/// Longest `rationale` or `suggestion`, in characters (Unicode code points,
/// as JSON Schema and `str::chars` count). The schema sends the rationale's
/// `maxLength`; the suggestion's cap is enforced only here.
pub const MAX_TEXT_CHARS: usize = 600;

/// A schema-valid reviewer verdict. Serializable in the schema's own shape,
/// so a verdict cache can store and reload it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Verdict {
    pub outcome: Outcome,
    pub risk_level: RiskLevel,
    pub user_authorization: UserAuthorization,
    pub rationale: String,
    pub suggestion: Option<String>,
}

/// Why model output is not a verdict. Only the class is kept: the offending
/// text is model output and never leaves this module.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum VerdictError {
    /// Nothing but whitespace.
    Empty,
    /// No JSON object, an unparseable one, or more than one candidate.
    InvalidJson,
    /// A JSON object that does not match the schema.
    SchemaInvalid,
}

/// The wire shape, with the schema's rules enforced by serde: unknown and
/// duplicate keys are errors, enums accept only their listed values.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawVerdict {
    outcome: Outcome,
    risk_level: RiskLevel,
    user_authorization: UserAuthorization,
    rationale: String,
    // `Option<Option<_>>` tells a missing key (outer `None`, invalid) apart
    // from an explicit `null` (`Some(None)`, valid).
    #[serde(default, deserialize_with = "present")]
    suggestion: Option<Option<String>>,
}

fn present<'de, D>(deserializer: D) -> Result<Option<Option<String>>, D::Error>
where
    D: Deserializer<'de>,
{
    Option::<String>::deserialize(deserializer).map(Some)
}

impl RawVerdict {
    fn validate(self) -> Result<Verdict, VerdictError> {
        let suggestion = self.suggestion.ok_or(VerdictError::SchemaInvalid)?;
        let too_long = |s: &str| s.chars().count() > MAX_TEXT_CHARS;
        if too_long(&self.rationale) || suggestion.as_deref().is_some_and(too_long) {
            return Err(VerdictError::SchemaInvalid);
        }
        Ok(Verdict {
            outcome: self.outcome,
            risk_level: self.risk_level,
            user_authorization: self.user_authorization,
            rationale: self.rationale,
            suggestion,
        })
    }
}

/// Parses free text that should hold exactly one verdict object.
pub fn parse_text(text: &str) -> Result<Verdict, VerdictError> {
    if text.trim().is_empty() {
        return Err(VerdictError::Empty);
    }
    let candidates = object_spans(text);
    let [only] = candidates.as_slice() else {
        return Err(VerdictError::InvalidJson);
    };
    let json = text.get(only.clone()).ok_or(VerdictError::InvalidJson)?;
    let value: serde_json::Value =
        serde_json::from_str(json).map_err(|_| VerdictError::InvalidJson)?;
    if !value.is_object() {
        return Err(VerdictError::InvalidJson);
    }
    // Parse the text again (not the `Value`) so a repeated key is caught:
    // `Value` keeps only the last one, which could hide `"outcome":"deny"`.
    serde_json::from_str::<RawVerdict>(json)
        .map_err(|_| VerdictError::SchemaInvalid)?
        .validate()
}

/// Validates an already-structured verdict (an Anthropic `tool_use` input).
pub fn parse_value(value: serde_json::Value) -> Result<Verdict, VerdictError> {
    if !value.is_object() {
        return Err(VerdictError::SchemaInvalid);
    }
    serde_json::from_value::<RawVerdict>(value)
        .map_err(|_| VerdictError::SchemaInvalid)?
        .validate()
}

/// Byte ranges of the top-level balanced `{…}` spans in `text`. Quotes are
/// tracked only inside a span, so an apostrophe or quote in surrounding prose
/// cannot hide a brace; braces inside JSON strings do not count.
fn object_spans(text: &str) -> Vec<std::ops::Range<usize>> {
    let mut spans = Vec::new();
    let mut depth = 0usize;
    let mut start = 0usize;
    let mut in_string = false;
    let mut escaped = false;
    for (i, byte) in text.bytes().enumerate() {
        if depth == 0 {
            if byte == b'{' {
                depth = 1;
                start = i;
            }
            continue;
        }
        if in_string {
            match byte {
                _ if escaped => escaped = false,
                b'\\' => escaped = true,
                b'"' => in_string = false,
                _ => {}
            }
            continue;
        }
        match byte {
            b'"' => in_string = true,
            b'{' => depth += 1,
            b'}' => {
                depth -= 1;
                if depth == 0 {
                    spans.push(start..i + 1);
                }
            }
            _ => {}
        }
    }
    spans
}

#[cfg(test)]
mod tests {
    use super::*;

    const VALID: &str = r#"{"outcome":"allow","risk_level":"low","user_authorization":"high","rationale":"the user asked to clean build/","suggestion":null}"#;

    #[test]
    fn schema_file_parses_and_matches_the_validator() {
        let schema: serde_json::Value = serde_json::from_str(VERDICT_SCHEMA).unwrap();
        assert_eq!(schema["additionalProperties"], false);
        assert_eq!(schema["required"].as_array().unwrap().len(), 5);
        assert_eq!(
            schema["properties"]["rationale"]["maxLength"],
            MAX_TEXT_CHARS
        );
        // The suggestion's cap is enforced here, not sent: every schema
        // byte is paid on every call.
        assert!(
            schema["properties"]["suggestion"]
                .get("maxLength")
                .is_none()
        );
    }

    #[test]
    fn accepts_a_bare_object() {
        let v = parse_text(VALID).unwrap();
        assert_eq!(v.outcome, Outcome::Allow);
        assert_eq!(v.risk_level, RiskLevel::Low);
        assert_eq!(v.user_authorization, UserAuthorization::High);
        assert_eq!(v.suggestion, None);
    }

    #[test]
    fn accepts_prose_and_fences_around_one_object() {
        let text = format!("Here is my verdict:\n```json\n{VALID}\n```\nThat's all, I'd say.");
        assert_eq!(parse_text(&text).unwrap().outcome, Outcome::Allow);
    }

    #[test]
    fn braces_and_quotes_inside_strings_do_not_split_the_object() {
        let text = r#"ok {"outcome":"deny","risk_level":"high","user_authorization":"unknown","rationale":"runs `echo \"}{\"` then {rm}","suggestion":"use {a} instead"} done"#;
        let v = parse_text(text).unwrap();
        assert_eq!(v.outcome, Outcome::Deny);
        assert_eq!(v.suggestion.as_deref(), Some("use {a} instead"));
    }

    #[test]
    fn several_candidates_are_invalid() {
        let text = format!("{VALID}\n{VALID}");
        assert_eq!(parse_text(&text), Err(VerdictError::InvalidJson));
        let text = format!("maybe {{allow}} but really {VALID}");
        assert_eq!(parse_text(&text), Err(VerdictError::InvalidJson));
    }

    #[test]
    fn empty_and_non_json_are_classified() {
        assert_eq!(parse_text("  \n"), Err(VerdictError::Empty));
        assert_eq!(parse_text("allow"), Err(VerdictError::InvalidJson));
        assert_eq!(
            parse_text("{outcome: allow}"),
            Err(VerdictError::InvalidJson)
        );
        // Truncated output never closes its object.
        assert_eq!(
            parse_text(r#"{"outcome":"allow","risk_level":"lo"#),
            Err(VerdictError::InvalidJson)
        );
    }

    #[test]
    fn strict_schema_rules() {
        let cases = [
            // missing suggestion
            r#"{"outcome":"allow","risk_level":"low","user_authorization":"high","rationale":"r"}"#,
            // extra key
            r#"{"outcome":"allow","risk_level":"low","user_authorization":"high","rationale":"r","suggestion":null,"confidence":1}"#,
            // enum outside the schema
            r#"{"outcome":"approve","risk_level":"low","user_authorization":"high","rationale":"r","suggestion":null}"#,
            r#"{"outcome":"allow","risk_level":"none","user_authorization":"high","rationale":"r","suggestion":null}"#,
            r#"{"outcome":"allow","risk_level":"low","user_authorization":"yes","rationale":"r","suggestion":null}"#,
            r#"{"outcome":"Allow","risk_level":"low","user_authorization":"high","rationale":"r","suggestion":null}"#,
            // wrong types
            r#"{"outcome":"allow","risk_level":"low","user_authorization":"high","rationale":null,"suggestion":null}"#,
            r#"{"outcome":"allow","risk_level":"low","user_authorization":"high","rationale":"r","suggestion":3}"#,
            // repeated key: the later value must not silently win
            r#"{"outcome":"deny","risk_level":"low","user_authorization":"high","rationale":"r","suggestion":null,"outcome":"allow"}"#,
        ];
        for case in cases {
            assert_eq!(parse_text(case), Err(VerdictError::SchemaInvalid), "{case}");
        }
    }

    #[test]
    fn length_limits_count_characters() {
        let at_limit = "é".repeat(MAX_TEXT_CHARS);
        let make = |r: &str, s: &str| {
            format!(
                r#"{{"outcome":"deny","risk_level":"low","user_authorization":"low","rationale":"{r}","suggestion":"{s}"}}"#
            )
        };
        assert!(parse_text(&make(&at_limit, &at_limit)).is_ok());
        let over = "a".repeat(MAX_TEXT_CHARS + 1);
        assert_eq!(
            parse_text(&make(&over, "s")),
            Err(VerdictError::SchemaInvalid)
        );
        assert_eq!(
            parse_text(&make("r", &over)),
            Err(VerdictError::SchemaInvalid)
        );
    }

    #[test]
    fn structured_values_are_validated_too() {
        let v: serde_json::Value = serde_json::from_str(VALID).unwrap();
        assert!(parse_value(v).is_ok());
        assert_eq!(
            parse_value(serde_json::json!("allow")),
            Err(VerdictError::SchemaInvalid)
        );
        assert_eq!(
            parse_value(serde_json::json!({"outcome": "allow"})),
            Err(VerdictError::SchemaInvalid)
        );
    }
}
