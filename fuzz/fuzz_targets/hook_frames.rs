//! `vouch hook` supervises the worker that decides (issue 43) and reads
//! its output line by line: whatever bytes a worker could leave there (a
//! line cut short by a crash, garbage), the reading is a frame or a named
//! problem — which the supervisor answers fail-closed — never a panic, and
//! a frame it accepts renders as the bytes the harness gets.
#![no_main]

use libfuzzer_sys::fuzz_target;
use vouch::hooks::supervise::{Frame, read_frame, reply_frame};

fuzz_target!(|data: &[u8]| {
    if let Ok(Frame::Reply(reply)) = read_frame(data) {
        let _ = reply.to_stdout();
        // What a worker writes for a reply reads back as that reply.
        assert_eq!(
            read_frame(reply_frame(&reply).as_bytes()),
            Ok(Frame::Reply(reply))
        );
    }
});
