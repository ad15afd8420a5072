//! The command text read conservatively where the analysis could not read
//! it whole.
//!
//! When a budget stops the analysis (padding of 10,000 `:;`, `eval`
//! nested past the depth, a loop run past the steps) or the command does
//! not parse, what comes after the stop is unknown to the analysis — and a
//! catastrophic command written there as plain text would otherwise pass
//! to the reviewer, or, with no reviewer, pass. Here the text itself is
//! read: quotes and backslashes are taken off, and from every place a word
//! names a program the hard denies judge ([`crate::shell::DANGEROUS_PROGRAMS`]) to the next shell
//! separator is one command line, analysed on its own. A hard deny among
//! them is a conservative one (the caller says so); nothing here allows.
//!
//! Bounded: at most [`MAX_SEGMENTS`] segments of at most
//! [`MAX_SEGMENT_BYTES`] each are analysed, once each (a segment met again
//! is not analysed again), with the default budgets.

use std::collections::HashSet;

/// Most segments analysed per command.
pub(super) const MAX_SEGMENTS: usize = 64;

/// Longest segment analysed.
pub(super) const MAX_SEGMENT_BYTES: usize = 2048;

/// Programs of [`crate::shell::DANGEROUS_PROGRAMS`] a segment never starts
/// at: their argument is a script whose quotes the flattened text has lost
/// (`sed -i 's/a: .*/b/'` would read as other words), and the script they
/// run starts a segment of its own.
const TAKES_SCRIPT: &[&str] = &["sh", "bash", "eval", "sed"];

/// The command lines the text holds, conservatively: each run from a word
/// naming one of [`crate::shell::DANGEROUS_PROGRAMS`] (or a `mkfs.*`) to the next separator, in
/// the text with its quoting taken off.
pub(super) fn segments(command: &str) -> Vec<String> {
    let flat = flatten(command);
    let mut out = Vec::new();
    let mut seen = HashSet::new();
    let bytes = flat.as_bytes();
    let mut i = 0;
    while i < bytes.len() && out.len() < MAX_SEGMENTS {
        let at_word = i == 0 || bytes.get(i - 1).is_some_and(|b| is_boundary(*b));
        if !at_word {
            i += 1;
            continue;
        }
        let word_end = bytes
            .get(i..)
            .unwrap_or_default()
            .iter()
            .position(|b| is_boundary(*b) || *b == b' ')
            .map_or(bytes.len(), |n| i + n);
        let word = flat.get(i..word_end).unwrap_or("");
        let name = word.rsplit('/').next().unwrap_or(word);
        if !((crate::shell::DANGEROUS_PROGRAMS.contains(&name) && !TAKES_SCRIPT.contains(&name))
            || name.starts_with("mkfs."))
        {
            i = word_end.max(i + 1);
            continue;
        }
        let end = bytes
            .get(i..)
            .unwrap_or_default()
            .iter()
            .position(|b| is_separator(*b))
            .map_or(bytes.len(), |n| i + n)
            .min(i + MAX_SEGMENT_BYTES);
        let mut end = end;
        while end > i && !flat.is_char_boundary(end) {
            end -= 1;
        }
        let segment = flat.get(i..end).unwrap_or("").trim().to_owned();
        if segment.contains(' ') && seen.insert(segment.clone()) {
            out.push(segment);
        }
        i = word_end.max(i + 1);
    }
    out
}

/// The quoted strings of the text (`'…'`, `"…"`, `$'…'` decoded) that may
/// be command lines: where a command's name is runtime data (`${m[k]}`,
/// `${BASH_REMATCH[1]}`, `"${a[@]}"` built by `read` or `mapfile`), the
/// command it runs may be any of them.
pub(super) fn quoted_strings(command: &str) -> Vec<String> {
    let bytes = command.as_bytes();
    let mut out = Vec::new();
    let mut seen = HashSet::new();
    let mut i = 0;
    while i < bytes.len() && out.len() < MAX_SEGMENTS {
        let (body, end) = match bytes.get(i) {
            Some(b'\'') => {
                let ansi = i > 0 && bytes.get(i - 1) == Some(&b'$');
                let close = bytes
                    .get(i + 1..)
                    .unwrap_or_default()
                    .iter()
                    .enumerate()
                    .find(|(k, b)| {
                        **b == b'\'' && !(ansi && bytes.get(i + *k).is_some_and(|p| *p == b'\\'))
                    })
                    .map(|(k, _)| i + 1 + k);
                let Some(close) = close else { break };
                let raw = command.get(i + 1..close).unwrap_or("");
                let body = if ansi {
                    crate::shell::decode_ansi_c(raw)
                } else {
                    raw.to_owned()
                };
                (body, close + 1)
            }
            Some(b'"') => {
                let mut k = i + 1;
                while let Some(&b) = bytes.get(k) {
                    match b {
                        b'\\' => k += 2,
                        b'"' => break,
                        _ => k += 1,
                    }
                }
                if k >= bytes.len() {
                    break;
                }
                (command.get(i + 1..k).unwrap_or("").to_owned(), k + 1)
            }
            _ => {
                i += 1;
                continue;
            }
        };
        let text = body.trim();
        if text.len() <= MAX_SEGMENT_BYTES
            && text.contains([' ', ';', '|', '&', '('])
            && seen.insert(text.to_owned())
        {
            out.push(text.to_owned());
        }
        i = end.max(i + 1);
    }
    out
}

/// Every reading of the text's quoted strings as a command line, for code
/// vouch cannot follow: each string, the strings quoted inside it (one
/// level: `'BEGIN{c="rm -rf ~"; c | getline}'`, `(shell-command "…")`),
/// and of each, the forms a program would run it in — its `\n` and `\t`
/// escapes decoded (a `printf` or `echo -e` feeding a script), a leading
/// editor prefix taken off (`:!cmd`, `!cmd`, `silent !cmd`), git's
/// `ext::` transport with its `%` escapes. At most [`MAX_SEGMENTS`].
pub(super) fn code_readings(command: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut push = |text: String| {
        if out.len() < MAX_SEGMENTS && !out.contains(&text) {
            out.push(text);
        }
    };
    for string in quoted_strings(command) {
        for inner in quoted_strings(&string) {
            for form in run_forms(&inner) {
                push(form);
            }
        }
        for form in run_forms(&string) {
            push(form);
        }
    }
    out
}

/// A string as the programs that run strings would run it.
fn run_forms(text: &str) -> Vec<String> {
    let mut out = vec![text.to_owned()];
    if text.contains('\\') {
        out.push(
            text.replace("\\n", "\n")
                .replace("\\t", "\t")
                .replace("\\\"", "\""),
        );
    }
    let editor = text
        .trim_start_matches(|c: char| c == ':' || c.is_whitespace())
        .trim_start_matches("silent")
        .trim_start_matches("exe")
        .trim_start();
    if let Some(rest) = editor.strip_prefix('!') {
        out.push(rest.trim_start_matches('!').to_owned());
    }
    if let Some(rest) = text.strip_prefix("ext::") {
        out.push(ext_command(rest));
    }
    out
}

/// git's `ext::` command as a shell line: unescaped blanks split the
/// arguments, `% ` is a blank inside one, `%%` a percent sign.
fn ext_command(spec: &str) -> String {
    let mut args = vec![String::new()];
    let mut chars = spec.chars();
    while let Some(c) = chars.next() {
        match c {
            '%' => match chars.next() {
                Some(' ') => args.last_mut().into_iter().for_each(|a| a.push(' ')),
                Some(other) => args.last_mut().into_iter().for_each(|a| a.push(other)),
                None => {}
            },
            ' ' => args.push(String::new()),
            other => args.last_mut().into_iter().for_each(|a| a.push(other)),
        }
    }
    args.iter()
        .filter(|a| !a.is_empty())
        .map(|a| format!("'{}'", a.replace('\'', "'\\''")))
        .collect::<Vec<_>>()
        .join(" ")
}

/// The text with quotes and backslashes taken off and every construct
/// that opens or closes a command (`$(`, backquotes, parentheses, braces)
/// turned into a separator.
fn flatten(command: &str) -> String {
    let mut out = String::with_capacity(command.len());
    let mut chars = command.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\'' | '"' | '\\' => {
                // `\n` in a quoted string holding a script is a line break.
                if c == '\\' && chars.peek() == Some(&'n') {
                    chars.next();
                    out.push('\n');
                }
            }
            '$' if matches!(chars.peek(), Some('(' | '{' | '\'' | '"')) => {
                if chars.peek() == Some(&'(') {
                    chars.next();
                    out.push(';');
                }
            }
            '`' | '(' | ')' | '{' | '}' => out.push(';'),
            other => out.push(other),
        }
    }
    out
}

/// Bytes that end a command line.
fn is_separator(b: u8) -> bool {
    matches!(b, b';' | b'&' | b'|' | b'\n' | b'\r')
}

/// Bytes before which a word starts.
fn is_boundary(b: u8) -> bool {
    is_separator(b) || matches!(b, b' ' | b'\t' | b'=')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn segments_start_at_program_words() {
        let padded = format!("{}rm -rf ~", ":;".repeat(10_000));
        assert_eq!(segments(&padded), ["rm -rf ~"]);
        assert_eq!(segments(r#"eval "eval \"eval 'rm -rf /'\"""#), ["rm -rf /"]);
        assert_eq!(segments("echo $($($(rm -rf ~)))"), ["rm -rf ~"]);
        assert!(segments("ls -la; cat README.md").is_empty());
    }

    #[test]
    fn segments_are_bounded() {
        let many = "rm -rf a; ".repeat(10_000);
        assert!(segments(&many).len() <= MAX_SEGMENTS);
        let distinct: String = (0..10_000).map(|n| format!("rm -rf d{n}; ")).collect();
        assert_eq!(segments(&distinct).len(), MAX_SEGMENTS);
    }
}
