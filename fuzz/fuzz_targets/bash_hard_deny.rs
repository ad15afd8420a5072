//! Any bash the agent writes: parsing and every hard-deny rule must never
//! panic and must finish within the budgets (libFuzzer's `-timeout` catches
//! a blow-up; the analysis budgets turn one into a visible parse failure).
#![no_main]

use libfuzzer_sys::fuzz_target;
use vouch::policy::hard_deny::{self, DenyContext, VouchFiles};
use vouch::shell::Limits;

fuzz_target!(|data: &[u8]| {
    let Ok(command) = std::str::from_utf8(data) else {
        return;
    };
    let protected = VouchFiles {
        paths: vec!["/home/dev/.config/vouch".to_owned()],
        config_only: Vec::new(),
        vars: vec![(
            "VOUCH_HOME".to_owned(),
            "/home/dev/.config/vouch".to_owned(),
        )],
    };
    let ctx = DenyContext {
        home: "/home/dev",
        cwd: Some("/srv/app"),
        protected: &protected,
        limits: &Limits::DEFAULT,
    };
    let _ = hard_deny::check_command(command, &ctx);
    // The audit reads a command's shape through the same parser.
    let _ = vouch::shell::shape_of(command, &Limits::DEFAULT);
});
