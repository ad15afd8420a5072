//! The reviewer's reply text is the model's, so attacker-influenced: verdict
//! parsing must never panic, and whatever it accepts must be a complete
//! verdict (re-parsing its own JSON form gives the same verdict).
#![no_main]

use libfuzzer_sys::fuzz_target;
use vouch::reviewer::verdict;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let _ = verdict::parse_text(text);
    if let Ok(value) = serde_json::from_str::<serde_json::Value>(text) {
        let _ = verdict::parse_value(value);
    }
});
