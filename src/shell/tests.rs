//! Unit tests for bash unit extraction.

use super::*;

fn names(command: &str) -> Vec<String> {
    let script = parse(command);
    assert!(script.errors.is_empty(), "{command}: {:?}", script.errors);
    script
        .units
        .iter()
        .map(|u| {
            u.argv
                .iter()
                .map(Word::display)
                .collect::<Vec<_>>()
                .join(" ")
        })
        .collect()
}

#[test]
fn smoke() {
    assert_eq!(names("rm -rf /"), vec!["rm -rf /"]);
}
