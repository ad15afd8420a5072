//! What `echo` and `printf` print, and what `test` / `[` answer, when their
//! arguments are known: the format applied (not joined), escapes decoded,
//! the format reused for extra arguments. Unknown arguments leave holes in
//! the text, so the data flow is kept.

use super::state::Known;
use super::value::{Arg, Seg, Sources, Text, Value};

/// One argument as a single text (`None` for an unknown number of fields
/// or several candidates).
fn one_text(arg: &Arg) -> Option<Text> {
    match arg {
        Arg::Field(v) => match v.candidates() {
            [only] if !only.is_pattern() => Some(only.clone()),
            [only] => only
                .unmatched_spelling()
                .map(|s| Text::lit(&s))
                .filter(|_| false),
            _ => None,
        },
        Arg::Unknown(_) => None,
    }
}

/// Text of an argument: its single text, or a hole.
fn text_or_hole(arg: &Arg) -> Text {
    one_text(arg).unwrap_or_else(|| Text::any(arg.sources()))
}

/// `echo`'s output.
pub(crate) fn echo(args: &[Arg]) -> Option<Value> {
    let mut newline = true;
    let mut escapes = false;
    let mut k = 0;
    while let Some(a) = args.get(k) {
        let Some(t) = a.as_known() else { break };
        let Some(flags) = t.strip_prefix('-') else {
            break;
        };
        if flags.is_empty() || !flags.chars().all(|c| matches!(c, 'n' | 'e' | 'E')) {
            break;
        }
        for c in flags.chars() {
            match c {
                'n' => newline = false,
                'e' => escapes = true,
                _ => escapes = false,
            }
        }
        k += 1;
    }
    let mut out = Text::default();
    for (i, a) in args.iter().skip(k).enumerate() {
        if i > 0 {
            out.push_str(" ");
        }
        if matches!(a, Arg::Unknown(_)) {
            out.push(Seg::Any(a.sources()));
            continue;
        }
        let t = text_or_hole(a);
        if escapes {
            for seg in &t.segs {
                match seg {
                    Seg::Lit(s) => {
                        let (decoded, stop) = decode_escapes(s, true);
                        out.push_str(&decoded);
                        if stop {
                            return Some(Value::text(out));
                        }
                    }
                    other => out.push(other.clone()),
                }
            }
        } else {
            out.append(&t);
        }
    }
    if newline {
        out.push_str("\n");
    }
    Some(Value::text(out))
}

/// Decodes backslash escapes (`printf` formats and `%b`, `echo -e`); the
/// flag says whether `\c` stopped the output. `echo_style`: octal is
/// `\0NNN` (echo, `%b`) rather than `\NNN` (formats).
fn decode_escapes(s: &str, echo_style: bool) -> (String, bool) {
    let mut out = String::new();
    let mut chars = s.chars().peekable();
    let take = |chars: &mut std::iter::Peekable<std::str::Chars<'_>>, radix: u32, max: usize| {
        let mut v: Option<u32> = None;
        for _ in 0..max {
            match chars.peek().and_then(|d| d.to_digit(radix)) {
                Some(d) => {
                    v = Some(v.unwrap_or(0) * radix + d);
                    chars.next();
                }
                None => break,
            }
        }
        v
    };
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        let Some(e) = chars.next() else {
            out.push('\\');
            break;
        };
        let simple = match e {
            'a' => Some('\u{7}'),
            'b' => Some('\u{8}'),
            'e' | 'E' => Some('\u{1b}'),
            'f' => Some('\u{c}'),
            'n' => Some('\n'),
            'r' => Some('\r'),
            't' => Some('\t'),
            'v' => Some('\u{b}'),
            '\\' => Some('\\'),
            '"' if !echo_style => Some('"'),
            '\'' if !echo_style => Some('\''),
            '?' if !echo_style => Some('?'),
            _ => None,
        };
        if let Some(ch) = simple {
            out.push(ch);
            continue;
        }
        let code = match e {
            'c' => return (out, true),
            'x' => take(&mut chars, 16, 2),
            'u' => take(&mut chars, 16, 4),
            'U' => take(&mut chars, 16, 8),
            '0' if echo_style => Some(take(&mut chars, 8, 3).unwrap_or(0)),
            d @ '0'..='7' if !echo_style => {
                let mut v = d.to_digit(8).unwrap_or(0);
                for _ in 0..2 {
                    match chars.peek().and_then(|x| x.to_digit(8)) {
                        Some(x) => {
                            v = v * 8 + x;
                            chars.next();
                        }
                        None => break,
                    }
                }
                Some(v)
            }
            _ => None,
        };
        match code {
            Some(v) => out.push(char::from_u32(v).unwrap_or('\u{fffd}')),
            None => {
                out.push('\\');
                out.push(e);
            }
        }
    }
    (out, false)
}

/// `printf FORMAT ARGS…`'s output.
pub(crate) fn format(args: &[Arg], _known: &Known) -> Option<Value> {
    let mut k = 0;
    if args.first().and_then(Arg::as_known) == Some("--") {
        k = 1;
    }
    let fmt = args.get(k)?.as_known()?.to_owned();
    let rest: Vec<Text> = args.iter().skip(k + 1).map(text_or_hole).collect();
    if args
        .iter()
        .skip(k + 1)
        .any(|a| matches!(a, Arg::Unknown(_)))
    {
        // An unknown number of arguments: the format repeats unknowably.
        let mut t = Text::default();
        t.push(Seg::Any(args.iter().fold(Sources::none(), |mut s, a| {
            s.extend(&a.sources());
            s
        })));
        return Some(Value::text(t));
    }
    let mut out = Text::default();
    let mut next = 0usize;
    let mut rounds = 0;
    loop {
        let consumed_before = next;
        if !apply_format(&fmt, &rest, &mut next, &mut out) {
            break;
        }
        rounds += 1;
        if next >= rest.len() || next == consumed_before || rounds > 1000 {
            break;
        }
    }
    Some(Value::text(out))
}

/// One pass of the format; false when `\c` stopped the output.
fn apply_format(fmt: &str, args: &[Text], next: &mut usize, out: &mut Text) -> bool {
    let mut chars = fmt.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\\' => {
                if !escape(&mut chars, out) {
                    return false;
                }
            }
            '%' => {
                let mut spec = String::new();
                while let Some(&d) = chars.peek() {
                    if "-+ #0123456789.".contains(d) {
                        spec.push(d);
                        chars.next();
                    } else {
                        break;
                    }
                }
                let Some(conv) = chars.next() else {
                    out.push_str("%");
                    break;
                };
                if conv == '%' {
                    out.push_str("%");
                    continue;
                }
                let arg = args.get(*next).cloned().unwrap_or_default();
                if *next < args.len() {
                    *next += 1;
                }
                if !conversion(conv, &spec, arg, out) {
                    return false;
                }
            }
            other => out.push_char(other),
        }
    }
    true
}

/// One backslash escape of the format (the `\` already read); false when it
/// was `\c`.
fn escape(chars: &mut std::iter::Peekable<std::str::Chars<'_>>, out: &mut Text) -> bool {
    let mut esc = String::from("\\");
    if let Some(n) = chars.next() {
        esc.push(n);
        if n == 'x' || n.is_ascii_digit() || n == 'u' || n == 'U' {
            let max = match n {
                'x' => 2,
                'u' => 4,
                'U' => 8,
                _ => 2,
            };
            for _ in 0..max {
                match chars.peek() {
                    Some(d) if d.is_ascii_hexdigit() => {
                        esc.push(*d);
                        chars.next();
                    }
                    _ => break,
                }
            }
        }
    }
    let (decoded, stop) = decode_escapes(&esc, false);
    out.push_str(&decoded);
    !stop
}

/// One `%` conversion applied to its argument; false when a `%b` argument
/// held `\c`.
fn conversion(conv: char, spec: &str, arg: Text, out: &mut Text) -> bool {
    match conv {
        's' | 'q' => {
            let text = match (conv, arg.as_known()) {
                ('q', Some(s)) => Text::lit(&super::param::shell_quote(s)),
                _ => arg,
            };
            pad(&text, spec, out);
        }
        'b' => match arg.as_known() {
            Some(s) => {
                let (decoded, stop) = decode_escapes(s, true);
                out.push_str(&decoded);
                if stop {
                    return false;
                }
            }
            None => out.append(&arg),
        },
        'c' => match arg.as_known() {
            Some(s) => out.push_str(&s.chars().next().map(String::from).unwrap_or_default()),
            None => out.push(Seg::Any(arg.sources())),
        },
        'd' | 'i' | 'u' | 'x' | 'X' | 'o' => {
            let n = arg.as_known().map(|s| s.trim().parse::<i64>().unwrap_or(0));
            match n {
                Some(n) => {
                    let s = match conv {
                        'x' => format!("{n:x}"),
                        'X' => format!("{n:X}"),
                        'o' => format!("{n:o}"),
                        _ => n.to_string(),
                    };
                    pad(&Text::lit(&s), spec, out);
                }
                None => out.push(Seg::Any(arg.sources())),
            }
        }
        _ => out.push(Seg::Any(arg.sources())),
    }
    true
}

/// Width and precision of `%s`.
fn pad(text: &Text, spec: &str, out: &mut Text) {
    let Some(s) = text.as_known() else {
        out.append(text);
        return;
    };
    let left = spec.contains('-');
    let spec = spec.trim_start_matches(['-', '+', ' ', '#', '0']);
    let (width, precision) = match spec.split_once('.') {
        Some((w, p)) => (
            w.parse::<usize>().ok(),
            Some(p.parse::<usize>().unwrap_or(0)),
        ),
        None => (spec.parse::<usize>().ok(), None),
    };
    let mut body: String = match precision {
        Some(p) => s.chars().take(p).collect(),
        None => s.to_owned(),
    };
    if let Some(w) = width.filter(|w| *w <= 4096) {
        let len = body.chars().count();
        if len < w {
            let fill = " ".repeat(w - len);
            body = if left { body + &fill } else { fill + &body };
        }
    }
    out.push_str(&body);
}

/// `test` / `[` on known strings: `-z`, `-n`, `=`, `!=`, a lone string.
pub(crate) fn test(args: &[Arg], bracket: bool) -> Option<bool> {
    let mut words: Vec<&str> = Vec::new();
    for a in args {
        words.push(a.as_known()?);
    }
    if bracket {
        if words.last() != Some(&"]") {
            return None;
        }
        words.pop();
    }
    match words.as_slice() {
        [] => Some(false),
        [s] => Some(!s.is_empty()),
        ["-z", s] => Some(s.is_empty()),
        ["-n", s] => Some(!s.is_empty()),
        ["!", s] => Some(s.is_empty()),
        [a, "=" | "==", b] => Some(a == b),
        [a, "!=", b] => Some(a != b),
        _ => None,
    }
}

/// The known words of a `test` / `[` (without the closing `]`).
pub(crate) fn known_words(args: &[Arg], bracket: bool) -> Option<Vec<&str>> {
    let mut words: Vec<&str> = args.iter().map(Arg::as_known).collect::<Option<_>>()?;
    if bracket && words.pop() != Some("]") {
        return None;
    }
    Some(words)
}

/// The status of a `test` (or, with `double`, a `[[ … ]]`) over known
/// words, when it depends on nothing else: file tests, `-v`, `-o`/`-a`
/// and, within `[[`, patterns and arithmetic on names are `None` (their
/// answer is the machine's or the shell's).
pub(crate) fn test_words(words: &[&str], double: bool) -> Option<bool> {
    // `[[ a == b* ]]` matches a pattern; `[[ 1 -eq x ]]` reads `x`.
    let pattern = |s: &str| double && s.contains(['*', '?', '[', '(', '|', '!', '+', '@']);
    match words {
        [] => Some(false),
        [s] => Some(!s.is_empty()),
        ["!", rest @ ..] if !rest.is_empty() => test_words(rest, double).map(|b| !b),
        ["-z", s] => Some(s.is_empty()),
        ["-n", s] => Some(!s.is_empty()),
        [a, "=" | "==", b] if !pattern(b) => Some(a == b),
        [a, "!=", b] if !pattern(b) => Some(a != b),
        [a, op, b] => {
            let (a, b) = (decimal(a)?, decimal(b)?);
            match *op {
                "-eq" => Some(a == b),
                "-ne" => Some(a != b),
                "-lt" => Some(a < b),
                "-le" => Some(a <= b),
                "-gt" => Some(a > b),
                "-ge" => Some(a >= b),
                _ => None,
            }
        }
        _ => None,
    }
}

/// A decimal integer as `test` reads one (blanks around it, a sign).
fn decimal(s: &str) -> Option<i64> {
    let t = s.trim_matches([' ', '\t']);
    let digits = t.strip_prefix(['-', '+']).unwrap_or(t);
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    t.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(words: &[&str]) -> Vec<Arg> {
        words.iter().map(|w| Arg::known(w)).collect()
    }

    fn known() -> Known {
        Known {
            home: "/home/dev".into(),
            user: None,
            vars: Vec::new(),
        }
    }

    #[test]
    fn echo_output() {
        assert_eq!(echo(&args(&["a", "b"])).unwrap().as_known(), Some("a b\n"));
        assert_eq!(echo(&args(&["-n", "a"])).unwrap().as_known(), Some("a"));
        assert_eq!(
            echo(&args(&["-e", "a\\nb"])).unwrap().as_known(),
            Some("a\nb\n")
        );
        assert_eq!(
            echo(&args(&["-x", "a"])).unwrap().as_known(),
            Some("-x a\n")
        );
    }

    #[test]
    fn printf_applies_the_format() {
        let f = |w: &[&str]| {
            format(&args(w), &known())
                .unwrap()
                .as_known()
                .map(str::to_owned)
        };
        assert_eq!(f(&["%s %s\\n", "rm", "-rf"]).as_deref(), Some("rm -rf\n"));
        assert_eq!(f(&["%s\\n", "a", "b"]).as_deref(), Some("a\nb\n"));
        assert_eq!(f(&["r%sm -rf /", ""]).as_deref(), Some("rm -rf /"));
        assert_eq!(f(&["\\x72m"]).as_deref(), Some("rm"));
        assert_eq!(f(&["%b", "a\\tb"]).as_deref(), Some("a\tb"));
        assert_eq!(f(&["%d%%", "5"]).as_deref(), Some("5%"));
        assert_eq!(f(&["%.1s", "xyz"]).as_deref(), Some("x"));
    }

    #[test]
    fn tests() {
        assert_eq!(test(&args(&["-z", ""]), false), Some(true));
        assert_eq!(test(&args(&["a", "=", "b", "]"]), true), Some(false));
        assert_eq!(test(&args(&["-f", "x"]), false), None);
        assert_eq!(test_words(&["1", "-eq", "1"], false), Some(true));
        assert_eq!(test_words(&["0", "-lt", "1"], true), Some(true));
        assert_eq!(test_words(&["2", "-le", "1"], false), Some(false));
        assert_eq!(test_words(&["!", "1", "-ne", "1"], false), Some(true));
        assert_eq!(test_words(&[" -3", "-ge", "+2"], false), Some(false));
        assert_eq!(test_words(&["1", "-eq", "x"], false), None);
        assert_eq!(test_words(&["-d", "/"], false), None);
        assert_eq!(test_words(&["-f", "lock"], true), None);
        assert_eq!(test_words(&["a", "==", "a*"], true), None);
        assert_eq!(test_words(&["a", "==", "a*"], false), Some(false));
        assert_eq!(test_words(&["1", "-lt", "2"], true), Some(true));
    }
}
