//! Transcripts are files the harness writes from what the agent said and
//! saw: every format's parser must never panic and must stay within its
//! entry bound, from the start of a file or from the middle of a line.
#![no_main]

use libfuzzer_sys::fuzz_target;
use vouch::hooks::transcript::{self, Format};
use vouch::request::MAX_TRANSCRIPT_ENTRIES;

fuzz_target!(|data: &[u8]| {
    let Some((&selector, rest)) = data.split_first() else {
        return;
    };
    let text = String::from_utf8_lossy(rest);
    let format: &dyn Format = match selector % 3 {
        0 => &transcript::CLAUDE_CODE,
        1 => &transcript::CODEX,
        _ => &transcript::GEMINI,
    };
    let parsed = transcript::parse(&text, format, selector & 0x80 != 0);
    assert!(
        parsed.entries.len() <= MAX_TRANSCRIPT_ENTRIES,
        "entry bound exceeded"
    );
});
