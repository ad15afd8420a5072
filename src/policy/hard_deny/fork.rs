//! `fork-bomb`: a function that spawns copies of itself (directly, through
//! `$FUNCNAME` or mutual recursion) in a pipeline or the background and
//! surely calls itself again, and interpreter one-liners that fork in an
//! unbounded loop.
//!
//! "Surely" is what tells a bomb from a tree walker: in `:(){ :|:& };:`
//! every call starts two more, so the recursion never ends; in
//! `walk(){ for d in "$1"/*; do [ -d "$d" ] && walk "$d" & done; }` each
//! call recurses only past a test of the file system
//! ([`crate::shell::Command::guarded`]), so the tree bounds it. A function
//! with one recursive call that no runtime condition guards recurses
//! without end, and if any of its recursive calls spawns, it is a bomb.
//! The guard is judged within the function's own body (a guard around the
//! first call does not bound the recursion), and a condition vouch can
//! decide (`true &&`, `if :`) is no guard.

use crate::shell::CommandKind;
use crate::shell::spec::Role;

use super::facts::Facts;
use super::{Category, HardDeny, deny};

/// Interpreters whose inline code (`-e`, `-c`, `-r`) is read for a fork loop.
const INTERPRETERS: &[&str] = &[
    "perl", "ruby", "node", "php", "python", "python2", "python3", "lua",
];

pub(super) fn check(f: &mut Facts<'_>) -> Option<HardDeny> {
    // Functions that surely call themselves again.
    let unbounded: Vec<&str> = f
        .commands()
        .filter(|(_, c)| c.kind == CommandKind::Function && c.recursive && !c.guarded)
        .filter_map(|(_, c)| c.name())
        .collect();
    for (i, cmd) in f.commands() {
        if cmd.kind == CommandKind::Function
            && cmd.recursive
            && (cmd.background || cmd.in_pipeline)
            && cmd.name().is_none_or(|n| unbounded.contains(&n))
        {
            let name = cmd.name().unwrap_or("?");
            return deny(
                Category::ForkBomb,
                "fork-bomb/recursive-function",
                format!("function `{name}` spawns copies of itself without bound"),
            );
        }
        let Some(name) = cmd.name() else { continue };
        let base = name.trim_end_matches(|c: char| c.is_ascii_digit() || c == '.');
        if !INTERPRETERS.contains(&name) && !INTERPRETERS.contains(&base) {
            continue;
        }
        for code in inline_code(f, i) {
            if forks_in_a_loop(&code, language_of(name)) {
                return deny(
                    Category::ForkBomb,
                    "fork-bomb/interpreter-fork-loop",
                    format!("`{name}` forks in an unbounded loop"),
                );
            }
        }
    }
    None
}

/// The inline code an interpreter is given (`-e CODE`, `-c CODE`, `-r CODE`).
pub(super) fn inline_code(f: &Facts<'_>, i: usize) -> Vec<String> {
    let mut out = Vec::new();
    if let Some(eff) = f.effects_of(i) {
        for v in eff.with(&[Role::Script]) {
            if let Some(t) = v.as_known() {
                out.push(t.to_owned());
            }
        }
    }
    let Some(cmd) = f.command(i) else { return out };
    let args = cmd.args();
    let mut k = 0;
    while let Some(a) = args.get(k) {
        let flag = a.as_known().unwrap_or("");
        let takes = matches!(
            flag,
            "-e" | "-E" | "-c" | "-r" | "--eval" | "-p" | "--print"
        ) || (flag.starts_with('-')
            && !flag.starts_with("--")
            && flag.ends_with(['e', 'c'])
            && flag.len() <= 4);
        if takes && let Some(code) = args.get(k + 1).and_then(|c| c.as_known()) {
            out.push(code.to_owned());
            k += 2;
            continue;
        }
        k += 1;
    }
    out
}

/// Does the one-liner fork inside a loop? Only its code counts: `fork`
/// or `while` inside a string, a regular expression or a comment is data
/// (`perl -ne 'print if /while.*fork/'` forks nothing).
fn forks_in_a_loop(code: &str, language: Language) -> bool {
    let code = code_only(code, language);
    let tokens: Vec<&str> = code
        .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .filter(|t| !t.is_empty())
        .collect();
    let compact: String = code.chars().filter(|c| !c.is_whitespace()).collect();
    let forks = tokens.iter().any(|t| t.contains("fork"));
    let looping = tokens
        .iter()
        .any(|t| matches!(*t, "while" | "until" | "loop" | "whileTrue"))
        || compact.contains("for(;;)");
    forks && looping
}

/// The interpreter families whose literal syntax [`code_only`] knows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Language {
    /// Perl and Ruby: quote-like operators (`q()`, `m//`, `s///`, `%w[]`)
    /// and bare `/regex/`.
    PerlRuby,
    /// JavaScript and PHP: bare `/regex/` where an operand is expected.
    Script,
    /// Python and Lua: strings and comments only.
    Plain,
}

pub(super) fn language_of(name: &str) -> Language {
    let base = name.trim_end_matches(|c: char| c.is_ascii_digit() || c == '.');
    match base {
        "perl" | "ruby" => Language::PerlRuby,
        "node" | "php" => Language::Script,
        _ => Language::Plain,
    }
}

/// `code` with every string literal, regular expression and comment
/// replaced by a blank: what is left is what runs.
fn code_only(code: &str, language: Language) -> String {
    let chars: Vec<char> = code.chars().collect();
    let mut out = String::with_capacity(code.len());
    let mut k = 0;
    // Whether an operand (not an operator) comes next, which is where a
    // `/` starts a regular expression rather than a division.
    let mut operand_next = true;
    let closing = |open: char| match open {
        '(' => ')',
        '[' => ']',
        '{' => '}',
        '<' => '>',
        other => other,
    };
    // Skips a delimited literal starting after its opening `open` at `*k`.
    let skip = |k: &mut usize, open: char| {
        let close = closing(open);
        let mut depth = 1usize;
        while let Some(&c) = chars.get(*k) {
            *k += 1;
            if c == '\\' {
                *k += 1;
            } else if c == close {
                depth -= 1;
                if depth == 0 {
                    return;
                }
            } else if c == open && close != open {
                depth += 1;
            }
        }
    };
    while let Some(&c) = chars.get(k) {
        match c {
            '\'' | '"' | '`' => {
                k += 1;
                skip(&mut k, c);
                out.push(' ');
                operand_next = false;
            }
            '#' if language != Language::Script
                && (k == 0
                    || chars
                        .get(k - 1)
                        .is_some_and(|p| p.is_whitespace() || *p == ';')) =>
            {
                while chars.get(k).is_some_and(|c| *c != '\n') {
                    k += 1;
                }
            }
            '/' if operand_next && language != Language::Plain => {
                k += 1;
                skip(&mut k, '/');
                out.push(' ');
                operand_next = false;
            }
            c if c.is_ascii_alphabetic() || c == '_' || c == '%' => {
                let start = k;
                k += 1;
                while chars
                    .get(k)
                    .is_some_and(|c| c.is_ascii_alphanumeric() || *c == '_')
                {
                    k += 1;
                }
                let word: String = chars.get(start..k).unwrap_or(&[]).iter().collect();
                let delimiter = chars
                    .get(k)
                    .copied()
                    .filter(|d| !d.is_alphanumeric() && !d.is_whitespace() && *d != '_');
                let quote_like = language == Language::PerlRuby
                    && matches!(
                        word.as_str(),
                        "q" | "qq"
                            | "qw"
                            | "qr"
                            | "qx"
                            | "m"
                            | "s"
                            | "tr"
                            | "y"
                            | "%q"
                            | "%Q"
                            | "%w"
                            | "%W"
                            | "%r"
                            | "%i"
                            | "%x"
                            | "%"
                    )
                    && delimiter
                        .is_some_and(|d| !matches!(d, ',' | ';' | ')' | '=' | '.' | '-' | '>'));
                if let (true, Some(d)) = (quote_like, delimiter) {
                    k += 1;
                    skip(&mut k, d);
                    // `s/a/b/`, `tr/a/b/`: a second part, its own brackets
                    // for bracketed delimiters (`s{a}{b}`).
                    if matches!(word.as_str(), "s" | "tr" | "y") {
                        if closing(d) != d {
                            while chars.get(k).is_some_and(|c| c.is_whitespace()) {
                                k += 1;
                            }
                            if let Some(&d2) = chars.get(k) {
                                k += 1;
                                skip(&mut k, d2);
                            }
                        } else {
                            skip(&mut k, d);
                        }
                    }
                    out.push(' ');
                    operand_next = false;
                    continue;
                }
                out.push_str(&word);
                operand_next = matches!(
                    word.as_str(),
                    "if" | "unless"
                        | "and"
                        | "or"
                        | "not"
                        | "return"
                        | "split"
                        | "grep"
                        | "when"
                        | "while"
                        | "until"
                        | "match"
                        | "typeof"
                );
            }
            c if c.is_ascii_digit() => {
                out.push(c);
                k += 1;
                operand_next = false;
            }
            ')' | ']' | '}' => {
                out.push(c);
                k += 1;
                operand_next = c == '}';
            }
            c if c.is_whitespace() => {
                out.push(c);
                k += 1;
            }
            other => {
                out.push(other);
                k += 1;
                operand_next = true;
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn forks_only_in_code() {
        let perl = Language::PerlRuby;
        assert!(forks_in_a_loop("fork while 1", perl));
        assert!(forks_in_a_loop("fork while fork", perl));
        assert!(forks_in_a_loop("1 while fork", perl));
        assert!(!forks_in_a_loop("print if /while.*fork/", perl));
        assert!(!forks_in_a_loop("print if m{fork} while 0", perl));
        assert!(!forks_in_a_loop("s/fork/spawn/g while 0", perl));
        assert!(!forks_in_a_loop(
            "puts $_ if $_ =~ /fork/ && $_ =~ /loop/",
            perl
        ));
        assert!(forks_in_a_loop("loop { fork }", perl));
        let plain = Language::Plain;
        assert!(forks_in_a_loop("import os\nwhile True: os.fork()", plain));
        assert!(!forks_in_a_loop("print(\"fork while loop\")", plain));
        assert!(!forks_in_a_loop("# while fork\nprint(1)", plain));
        let js = Language::Script;
        assert!(forks_in_a_loop(
            "while(true){require('child_process').fork('x')}",
            js
        ));
        assert!(!forks_in_a_loop("console.log(\"while (true) fork()\")", js));
        assert!(forks_in_a_loop("for(;;) pcntl_fork();", js));
    }
}
