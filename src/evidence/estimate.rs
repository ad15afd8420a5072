//! Token estimators: how many tokens a text will cost the reviewer, erring
//! high.
//!
//! The budget is only worth something if the estimate is an upper bound, so
//! both estimators are conservative. `utf8` counts one token per byte, which
//! no byte-level tokenizer exceeds. `o200k` runs the `o200k_base` tokenizer
//! and adds a 15% margin for the gap between it and whatever tokenizer the
//! configured model really uses.
//!
//! Building the `o200k_base` encoder takes ~170 ms, so it is built once,
//! lazily, the first time an `o200k` count is asked for — never on the
//! hard-deny path, which does not estimate anything. A service can call
//! [`Estimator::prepare`] at start to pay that cost before the first review.

use std::sync::OnceLock;

use tiktoken_rs::CoreBPE;

pub use crate::config::Estimator;

/// Margin added to `o200k` counts, in percent.
const O200K_MARGIN_PERCENT: u64 = 15;

static O200K: OnceLock<Option<CoreBPE>> = OnceLock::new();

fn o200k() -> Option<&'static CoreBPE> {
    O200K
        .get_or_init(|| tiktoken_rs::o200k_base().ok())
        .as_ref()
}

impl Estimator {
    /// Estimated tokens of `s`, never below its true `o200k_base` count.
    pub fn count(&self, s: &str) -> u64 {
        let bytes = u64::try_from(s.len()).unwrap_or(u64::MAX);
        match self {
            Estimator::Utf8 => bytes,
            Estimator::O200k => match o200k_tokens(s) {
                Some(tokens) => tokens
                    .saturating_mul(100 + O200K_MARGIN_PERCENT)
                    .div_ceil(100),
                // No encoder (it failed to build) or it gave up on this text:
                // the byte count is still an upper bound.
                None => bytes,
            },
        }
    }

    /// The most tokens any text of `bytes` bytes can be estimated at: no
    /// tokenizer emits more tokens than bytes, plus the margin.
    pub fn upper_bound_for_bytes(&self, bytes: u64) -> u64 {
        match self {
            Estimator::Utf8 => bytes,
            Estimator::O200k => bytes
                .saturating_mul(100 + O200K_MARGIN_PERCENT)
                .div_ceil(100),
        }
    }

    /// Builds whatever the estimator needs ahead of time. Cheap after the
    /// first call; a no-op for `utf8`.
    pub fn prepare(&self) {
        match self {
            Estimator::Utf8 => {}
            Estimator::O200k => {
                let _ = o200k();
            }
        }
    }
}

/// `o200k_base` token count, or `None` when the encoder is unavailable.
///
/// The tokenizer's pre-split regex can panic on pathological input (a
/// backtracking limit inside `tiktoken-rs`); that must not take the review
/// down, so the call is isolated and a panic falls back to the byte count.
fn o200k_tokens(s: &str) -> Option<u64> {
    if s.is_empty() {
        return Some(0);
    }
    let bpe = o200k()?;
    let counted = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        bpe.encode_ordinary(s).len()
    }));
    counted.ok().and_then(|n| u64::try_from(n).ok())
}

/// `s` as a JSON string literal, quotes included: the form in which text
/// travels in a provider request body, and so the form that is estimated.
pub fn json_escaped(s: &str) -> String {
    serde_json::Value::String(s.to_owned()).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn utf8_counts_bytes() {
        assert_eq!(Estimator::Utf8.count(""), 0);
        assert_eq!(Estimator::Utf8.count("héllo"), 6);
    }

    #[test]
    fn o200k_adds_the_margin_and_rounds_up() {
        assert_eq!(Estimator::O200k.count(""), 0);
        // "hello" is one o200k token: 1 * 1.15 rounds up to 2.
        assert_eq!(Estimator::O200k.count("hello"), 2);
        let text = "The quick brown fox jumps over the lazy dog. ".repeat(20);
        let raw = o200k_tokens(&text).unwrap();
        assert_eq!(Estimator::O200k.count(&text), (raw * 115).div_ceil(100));
        assert!(Estimator::O200k.count(&text) < Estimator::Utf8.count(&text));
    }

    #[test]
    fn json_escaping_includes_quotes_and_escapes() {
        assert_eq!(json_escaped("a\"b\n"), r#""a\"b\n""#);
    }
}
