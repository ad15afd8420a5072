//! The program texts read-only tools take (`sed` scripts, `awk` programs,
//! `jq` filters): inert only when nothing in them writes, reads another
//! file, runs a program or prints the environment.

use crate::shell::spec::Dialect;

/// Why a program text is not inert, or `None` when it is.
pub fn refusal(kind: Dialect, text: &str) -> Option<String> {
    match kind {
        Dialect::Pattern => None,
        Dialect::Sed => sed(text),
        Dialect::Awk => awk(text),
        Dialect::Jq => jq(text),
    }
}

/// sed commands that only print, delete, branch or edit the pattern and
/// hold spaces. `w`/`W` write, `r`/`R` read another file, `e` runs one.
const SED_SAFE: &str = "pPlL=qQdDnNhHgGxzbtTy:F{}#";

fn sed(script: &str) -> Option<String> {
    let mut rest = script.chars().peekable();
    loop {
        skip_sed_separators(&mut rest);
        rest.peek()?;
        if let Err(why) = sed_address(&mut rest) {
            return Some(why);
        }
        skip_blanks(&mut rest);
        if rest.peek() == Some(&'!') {
            rest.next();
            skip_blanks(&mut rest);
        }
        let command = rest.next()?;
        match command {
            's' => {
                if let Err(why) = sed_substitute(&mut rest) {
                    return Some(why);
                }
            }
            'y' => {
                if sed_delimited(&mut rest, 2).is_err() {
                    return Some("a sed `y` command that does not parse".to_owned());
                }
            }
            ':' | 'b' | 't' | 'T' => {
                // GNU sed ends a label at a blank or a `;` (`:a w out.txt`
                // is the label `a`, then `w out.txt`), POSIX sed at the end
                // of the line: the shorter reading is the one that may hide
                // a command.
                skip_blanks(&mut rest);
                while rest.peek().is_some_and(|c| !c.is_whitespace() && *c != ';') {
                    rest.next();
                }
            }
            '#' => {
                while rest.peek().is_some_and(|c| *c != '\n') {
                    rest.next();
                }
            }
            c if SED_SAFE.contains(c) => {}
            c => {
                return Some(format!(
                    "sed command `{c}` writes, reads another file or runs a program (or is not known)"
                ));
            }
        }
    }
}

fn skip_blanks(chars: &mut std::iter::Peekable<std::str::Chars<'_>>) {
    while chars.peek().is_some_and(|c| *c == ' ' || *c == '\t') {
        chars.next();
    }
}

fn skip_sed_separators(chars: &mut std::iter::Peekable<std::str::Chars<'_>>) {
    while chars.peek().is_some_and(|c| c.is_whitespace() || *c == ';') {
        chars.next();
    }
}

/// Skips up to two addresses (`1`, `$`, `/re/`, `\%re%`, `1~2`, `+3`).
fn sed_address(chars: &mut std::iter::Peekable<std::str::Chars<'_>>) -> Result<(), String> {
    for round in 0..2 {
        match chars.peek() {
            Some(c) if c.is_ascii_digit() || *c == '$' || *c == '+' || *c == '~' => {
                while chars
                    .peek()
                    .is_some_and(|c| c.is_ascii_digit() || *c == '$' || *c == '+' || *c == '~')
                {
                    chars.next();
                }
            }
            Some('/') => {
                chars.next();
                sed_until(chars, '/')?;
                sed_regex_flags(chars);
            }
            Some('\\') => {
                chars.next();
                let Some(delim) = chars.next() else {
                    return Err("a sed address that does not parse".to_owned());
                };
                sed_until(chars, delim)?;
                sed_regex_flags(chars);
            }
            _ if round == 0 => return Ok(()),
            _ => return Err("a sed address range without its end".to_owned()),
        }
        skip_blanks(chars);
        if chars.peek() == Some(&',') && round == 0 {
            chars.next();
            skip_blanks(chars);
        } else {
            return Ok(());
        }
    }
    Ok(())
}

fn sed_regex_flags(chars: &mut std::iter::Peekable<std::str::Chars<'_>>) {
    while chars.peek().is_some_and(|c| *c == 'I' || *c == 'M') {
        chars.next();
    }
}

/// Consumes up to the unescaped `delim`.
fn sed_until(
    chars: &mut std::iter::Peekable<std::str::Chars<'_>>,
    delim: char,
) -> Result<(), String> {
    while let Some(c) = chars.next() {
        if c == '\\' {
            chars.next();
        } else if c == delim {
            return Ok(());
        } else if c == '\n' {
            break;
        }
    }
    Err("a sed expression that does not end".to_owned())
}

fn sed_delimited(
    chars: &mut std::iter::Peekable<std::str::Chars<'_>>,
    parts: usize,
) -> Result<(), String> {
    let Some(delim) = chars.next() else {
        return Err("missing delimiter".to_owned());
    };
    if delim == '\n' || delim == '\\' {
        return Err("bad delimiter".to_owned());
    }
    for _ in 0..parts {
        sed_until(chars, delim)?;
    }
    Ok(())
}

/// `s/re/replacement/flags`: flags `w FILE` write and `e` runs the result.
fn sed_substitute(chars: &mut std::iter::Peekable<std::str::Chars<'_>>) -> Result<(), String> {
    if sed_delimited(chars, 2).is_err() {
        return Err("a sed `s` command that does not parse".to_owned());
    }
    while let Some(c) = chars.peek().copied() {
        match c {
            'g' | 'p' | 'i' | 'I' | 'm' | 'M' => {
                chars.next();
            }
            d if d.is_ascii_digit() => {
                chars.next();
            }
            ';' | '\n' | ' ' | '\t' | '}' => return Ok(()),
            'w' | 'W' => return Err("sed `s///w` writes a file".to_owned()),
            'e' => return Err("sed `s///e` runs the pattern space as a command".to_owned()),
            other => return Err(format!("sed `s///` flag `{other}` is not known")),
        }
    }
    Ok(())
}

/// awk programs: refused when they can run a program (`system`, a pipe,
/// `getline` from a command), write (`>`, `>>`, `printf >`), read other
/// files (`getline <`), load code (`@load`, `@include`) or print the
/// environment (`ENVIRON`). A comparison `$1 > 5` is refused too: telling
/// it from a redirection needs awk's grammar, and the model still sees it.
fn awk(program: &str) -> Option<String> {
    // `ARGV`/`ARGC` choose the files awk reads (`ARGV[1] =
    // "/proc/self/environ"; ARGC = 2` in BEGIN reads another file).
    for word in [
        "system", "getline", "close", "fflush", "ENVIRON", "PROCINFO", "@load", "@include", "ARGV",
        "ARGC",
    ] {
        if program.contains(word) {
            return Some(format!("awk program uses `{word}`"));
        }
    }
    for c in ['|', '>', '<'] {
        if program.contains(c) {
            return Some(format!(
                "awk program has `{c}` (a pipe or a redirection runs or writes)"
            ));
        }
    }
    None
}

/// jq filters: refused when they load modules or read the environment.
fn jq(filter: &str) -> Option<String> {
    for word in [
        "import",
        "include",
        "$ENV",
        "env",
        "input_filename",
        "$__loc__",
        "modulemeta",
        "get_search_list",
    ] {
        if filter.contains(word) {
            return Some(format!("jq filter uses `{word}`"));
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sed_prints_are_inert() {
        for s in [
            "1,5p", "10p", "$p", "/foo/p", "1,/end/p", "s/a/b/g", "s|a|b|", "1~2p;3q", "/x/!d",
            "y/ab/cd/",
        ] {
            assert_eq!(sed(s), None, "{s}");
        }
    }

    #[test]
    fn sed_writes_and_execs_are_not() {
        for s in [
            "w notes.md",
            "1,5w out",
            "s/a/b/w out",
            "s/a/b/e",
            "e id",
            "r /etc/passwd",
            "1R f",
            "W x",
            "s/a/b/;e ls",
        ] {
            assert!(sed(s).is_some(), "{s}");
        }
    }

    #[test]
    fn awk_and_jq() {
        assert_eq!(awk("{print $1}"), None);
        assert!(awk("BEGIN{system(\"id\")}").is_some());
        assert!(awk("{print > \"f\"}").is_some());
        assert!(awk("{print | \"sh\"}").is_some());
        assert_eq!(jq(".name"), None);
        assert!(jq("$ENV.TOKEN").is_some());
        assert!(jq("import \"x\" as y; .").is_some());
    }
}
