//! Strict mode (issue 45): a test that needs a tool this machine lacks
//! (PostgreSQL's server binaries, bubblewrap, strace, ripgrep, tree, gawk,
//! `setpriv`) skips with a printed reason, so `cargo test` still works for
//! a developer without them; with `VOUCH_TEST_STRICT=1` (`.ci/run` sets
//! it) the same test fails instead, naming the tool and how to install it,
//! so a CI run cannot pass by skipping.
//!
//! A libtest-mimic trial that needs the tool is ignored without strict
//! mode and runs (to fail) under it: `.with_ignored_flag(missing &&
//! !strict())`, its body failing with [`failure`].
//!
//! Only a missing tool is strict: a run gated on an opt-in variable (a
//! corpus outside the repository, a harness binary, a long run's size)
//! stays ignored unless its variable is set.
//!
//! One file, included by `#[path]` into each test tree that has such a
//! test: vouch-shell's `bash_differential`, the root's `it` and
//! `inert_differential`.

#![allow(dead_code)]

/// Whether `VOUCH_TEST_STRICT=1` is set.
pub fn strict() -> bool {
    std::env::var_os("VOUCH_TEST_STRICT").is_some_and(|v| v == "1")
}

/// What a test that cannot run because of `missing` fails with.
pub fn failure(missing: &str) -> String {
    format!(
        "{missing} (a test that needs a missing tool fails under VOUCH_TEST_STRICT=1, and skips without it)"
    )
}

/// A test cannot run here because of `missing` (which names the tool and
/// how to install it). Without strict mode: prints `skipped: …` and
/// answers `Ok`, and the caller returns, passing. Under strict mode:
/// [`failure`], for the caller to panic with (a `#[test]`) or return (a
/// trial's body).
pub fn skip(missing: &str) -> Result<(), String> {
    if strict() {
        return Err(failure(missing));
    }
    let test = std::thread::current()
        .name()
        .filter(|name| *name != "main")
        .map(|name| format!("{name}: "))
        .unwrap_or_default();
    eprintln!("{test}skipped: {missing} (with VOUCH_TEST_STRICT=1 this fails)");
    Ok(())
}
