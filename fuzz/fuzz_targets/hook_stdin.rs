//! Every harness's hook stdin is written by the harness from the agent's
//! tool call: each adapter's parser must never panic on any JSON, and
//! rendering any answer for whatever event it names must not either.
#![no_main]

use libfuzzer_sys::fuzz_target;
use vouch::hooks::{Event, harnesses};

fuzz_target!(|data: &[u8]| {
    let Some((&selector, rest)) = data.split_first() else {
        return;
    };
    let Ok(value) = serde_json::from_slice::<serde_json::Value>(rest) else {
        return;
    };
    let all = harnesses::ALL;
    let Some(&harness) = all.get(usize::from(selector) % all.len().max(1)) else {
        return;
    };
    match harness.parse(&value) {
        Ok(Event::Decide(call)) => {
            let _ = harness.no_op(&call.event);
        }
        Ok(event) => {
            let _ = harness.no_op(event.name());
        }
        Err(_) => {
            let _ = harness.no_op(harness.primary_event());
        }
    }
});
