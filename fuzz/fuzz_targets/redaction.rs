//! Redaction against anything around a secret: a known secret of each kind
//! (from `tests/fixtures/secrets.jsonl`) planted between arbitrary text,
//! separated by a space on each side so the text cannot legitimately extend
//! the token, must never survive `redact_text`; arbitrary text alone must
//! not panic. Time is bounded by libFuzzer's `-timeout` and `-max_len`
//! (linear time is measured separately in `benches/`).
#![no_main]

use libfuzzer_sys::fuzz_target;
use vouch::evidence::redact;

const SECRETS: &[&str] = &[
    "AKIAUJZDE8GXD6NCF10E",
    "ghp_pfJBd0Kh8oOOL8dKLzdocJ2isAjIhKtJ0Rlg",
    "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",
    "sk-proj-RVdD53X83RZJzzzzgEOzdmenCkhvMdgaKjIg8xNbe3nNyjOq",
];

fuzz_target!(|data: &[u8]| {
    let Some((&selector, rest)) = data.split_first() else {
        return;
    };
    let text = String::from_utf8_lossy(rest);
    let _ = redact::redact_text(&text);
    let Some(secret) = SECRETS.get(usize::from(selector) % SECRETS.len()) else {
        return;
    };
    let split = usize::from(selector) * text.len() / 256;
    let split = (0..=split)
        .rev()
        .find(|&i| text.is_char_boundary(i))
        .unwrap_or(0);
    let (before, after) = text.split_at(split);
    let planted = format!("{before} {secret} {after}");
    let out = redact::redact_text(&planted);
    assert!(
        !out.contains(secret),
        "secret survived redaction: {planted:?} -> {out:?}"
    );
});
