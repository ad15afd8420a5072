//! Prints `docs/rules.md`, the rule reference, from the registry in
//! `src/rules.rs`: `cargo run --example rules_doc > docs/rules.md`.

fn main() {
    print!("{}", vouch::rules::reference_page());
}
