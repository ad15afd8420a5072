//! Strict JSON input: the parser for canonical requests, HTTP bodies,
//! harness hook payloads and the central service's replies to a remote
//! hook. Not for every JSON document from outside: the model's reply,
//! transcripts, audit events, harness settings files and `vouch eval` sets
//! are read where they arrive, under their own rules (the Known gaps of
//! `src/lib.rs` list them).
//!
//! Strict means: an empty body is refused as such, a serde error names the
//! path of the offending field (``at `transcript[2].role`: unknown variant …``),
//! and anything after the one JSON value is an error rather than ignored.
//! Which fields are allowed is the target type's business
//! (`#[serde(deny_unknown_fields)]`).

use serde::de::DeserializeOwned;

/// Why a JSON document was refused. Messages are lowercase and name the
/// field at fault; they are safe to show the caller (they quote field names
/// and serde's description, never whole values).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum JsonError {
    #[error("request body is empty")]
    Empty,
    #[error("{0}")]
    Invalid(String),
    #[error("trailing data after the JSON value: {0}")]
    Trailing(String),
}

/// Parses exactly one JSON value of type `T` from `bytes`.
pub fn from_slice<T: DeserializeOwned>(bytes: &[u8]) -> Result<T, JsonError> {
    if bytes.iter().all(u8::is_ascii_whitespace) {
        return Err(JsonError::Empty);
    }
    // Nearly every document is valid: parsed once without tracking paths.
    // A refused one is parsed again, tracking them, for its error (the same
    // deserializer over the same bytes fails at the same place).
    if let Ok(value) = serde_json::from_slice(bytes) {
        return Ok(value);
    }
    let mut de = serde_json::Deserializer::from_slice(bytes);
    let value = serde_path_to_error::deserialize(&mut de).map_err(|e| {
        let path = e.path().to_string();
        let inner = e.into_inner();
        if path.is_empty() || path == "." {
            JsonError::Invalid(inner.to_string())
        } else {
            JsonError::Invalid(format!("at `{path}`: {inner}"))
        }
    })?;
    de.end().map_err(|e| JsonError::Trailing(e.to_string()))?;
    Ok(value)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, serde::Deserialize)]
    #[serde(deny_unknown_fields)]
    #[allow(dead_code)]
    struct Body {
        items: Vec<Item>,
    }

    #[derive(Debug, serde::Deserialize)]
    #[serde(deny_unknown_fields)]
    #[allow(dead_code)]
    struct Item {
        name: String,
    }

    #[test]
    fn errors_name_the_path_and_refuse_trailing_data() {
        assert!(matches!(from_slice::<Body>(b"  \n"), Err(JsonError::Empty)));
        let e = from_slice::<Body>(br#"{"items": [{"name": "a"}, {"nmae": "b"}]}"#).unwrap_err();
        assert!(
            e.to_string()
                .starts_with("at `items[1].nmae`: unknown field `nmae`"),
            "{e}"
        );
        let e = from_slice::<Body>(br#"{"items": []} {}"#).unwrap_err();
        assert!(matches!(e, JsonError::Trailing(_)), "{e}");
        assert!(from_slice::<Body>(br#"{"items": [{"name": "a"}]}"#).is_ok());
    }
}
