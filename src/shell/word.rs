//! Words as bash would see them after quote removal, with every part that
//! bash would still expand kept visible.
//!
//! Policy must tell `rm -rf '/'` (a literal root) from `rm -rf "$DIR"` (an
//! unknown value) and from `rm -rf ~` (the home directory). A word is a list
//! of pieces: decoded literal text, the home directory (`~`, `$HOME`,
//! `${HOME}`), other expansions, unquoted glob characters and substitutions.

/// One part of a decoded word.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Piece {
    /// Text after quote removal and escape decoding.
    Literal(String),
    /// The home directory: a leading `~`, `$HOME` or `${HOME}`.
    Home,
    /// Any other parameter expansion. `default` holds the text of a
    /// `${NAME:-default}` / `${NAME-default}` / `${NAME:=default}` fallback.
    Var {
        name: String,
        default: Option<String>,
    },
    /// An unquoted glob character (`*`, `?`, `[`).
    Glob(char),
    /// A command, process or arithmetic substitution (its units are
    /// extracted separately; its value is unknown here).
    Subst,
}

/// A decoded shell word.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Word {
    pub pieces: Vec<Piece>,
}

impl Word {
    /// A word of literal text only.
    pub fn literal_text(text: &str) -> Self {
        Word {
            pieces: vec![Piece::Literal(text.to_owned())],
        }
    }

    /// Appends literal text, merging with a preceding literal piece.
    pub(crate) fn push_str(&mut self, text: &str) {
        if text.is_empty() {
            return;
        }
        if let Some(Piece::Literal(last)) = self.pieces.last_mut() {
            last.push_str(text);
        } else {
            self.pieces.push(Piece::Literal(text.to_owned()));
        }
    }

    pub(crate) fn push_char(&mut self, c: char) {
        if let Some(Piece::Literal(last)) = self.pieces.last_mut() {
            last.push(c);
        } else {
            self.pieces.push(Piece::Literal(c.to_string()));
        }
    }

    pub(crate) fn push(&mut self, piece: Piece) {
        match piece {
            Piece::Literal(text) => self.push_str(&text),
            other => self.pieces.push(other),
        }
    }

    /// The text when the word is fully literal (no expansion, glob or
    /// substitution left), else `None`.
    pub fn literal(&self) -> Option<String> {
        let mut out = String::new();
        for piece in &self.pieces {
            match piece {
                Piece::Literal(text) => out.push_str(text),
                Piece::Home | Piece::Var { .. } | Piece::Glob(_) | Piece::Subst => return None,
            }
        }
        Some(out)
    }

    /// The text when the only expansions left are glob characters, which
    /// bash keeps literally when nothing matches (`https://[::1]:8443/`).
    pub fn literal_with_globs(&self) -> Option<String> {
        let mut out = String::new();
        for piece in &self.pieces {
            match piece {
                Piece::Literal(text) => out.push_str(text),
                Piece::Glob(c) => out.push(*c),
                Piece::Home | Piece::Var { .. } | Piece::Subst => return None,
            }
        }
        Some(out)
    }

    /// The literal text as a borrowed string, when the word is one literal piece
    /// (or empty). Cheap check for option parsing.
    pub fn as_literal(&self) -> Option<&str> {
        match self.pieces.as_slice() {
            [] => Some(""),
            [Piece::Literal(text)] => Some(text),
            _ => None,
        }
    }

    /// True when any part would be expanded by bash.
    pub fn has_expansion(&self) -> bool {
        self.pieces.iter().any(|p| !matches!(p, Piece::Literal(_)))
    }

    /// True when the word contains a substitution.
    pub fn has_substitution(&self) -> bool {
        self.pieces.iter().any(|p| matches!(p, Piece::Subst))
    }

    /// Names of the variables the word expands (`HOME` included).
    pub fn variables(&self) -> impl Iterator<Item = &str> {
        self.pieces.iter().filter_map(|p| match p {
            Piece::Var { name, .. } => Some(name.as_str()),
            Piece::Home => Some("HOME"),
            Piece::Literal(_) | Piece::Glob(_) | Piece::Subst => None,
        })
    }

    /// Human-readable form for rationales: expansions shown as bash source.
    pub fn display(&self) -> String {
        let mut out = String::new();
        for piece in &self.pieces {
            match piece {
                Piece::Literal(text) => out.push_str(text),
                Piece::Home => out.push('~'),
                Piece::Var { name, default } => match default {
                    Some(d) => {
                        out.push_str("${");
                        out.push_str(name);
                        out.push_str(":-");
                        out.push_str(d);
                        out.push('}');
                    }
                    None => {
                        out.push_str("${");
                        out.push_str(name);
                        out.push('}');
                    }
                },
                Piece::Glob(c) => out.push(*c),
                Piece::Subst => out.push_str("$(…)"),
            }
        }
        out
    }

    /// Bash source that, parsed again, yields the same pieces. Used when the
    /// word is itself a script (`bash -c WORD`, `eval WORD`): literal text is
    /// the script, expansions stay expansions.
    pub fn to_script(&self) -> String {
        let mut out = String::new();
        for piece in &self.pieces {
            match piece {
                Piece::Literal(text) => out.push_str(text),
                Piece::Home => out.push_str("$HOME"),
                Piece::Var { name, default } => {
                    out.push_str("${");
                    out.push_str(name);
                    if let Some(d) = default {
                        out.push_str(":-");
                        out.push_str(d);
                    }
                    out.push('}');
                }
                Piece::Glob(c) => out.push(*c),
                Piece::Subst => out.push_str("${__vouch_substitution}"),
            }
        }
        out
    }
}

/// Decodes the inside of an ANSI-C string (`$'…'` without the quotes).
pub fn decode_ansi_c(inner: &str) -> String {
    let mut out = String::new();
    let mut chars = inner.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        let Some(esc) = chars.next() else {
            out.push('\\');
            break;
        };
        match esc {
            'a' => out.push('\u{7}'),
            'b' => out.push('\u{8}'),
            'e' | 'E' => out.push('\u{1b}'),
            'f' => out.push('\u{c}'),
            'n' => out.push('\n'),
            'r' => out.push('\r'),
            't' => out.push('\t'),
            'v' => out.push('\u{b}'),
            '\\' | '\'' | '"' | '?' => out.push(esc),
            '0'..='7' => {
                let mut value = esc.to_digit(8).unwrap_or(0);
                for _ in 0..2 {
                    match chars.peek().and_then(|d| d.to_digit(8)) {
                        Some(d) => {
                            value = value * 8 + d;
                            chars.next();
                        }
                        None => break,
                    }
                }
                push_code(&mut out, value & 0xff);
            }
            'x' => {
                let value = take_hex(&mut chars, 2);
                match value {
                    Some(v) => push_code(&mut out, v),
                    None => out.push_str("\\x"),
                }
            }
            'u' => match take_hex(&mut chars, 4) {
                Some(v) => push_code(&mut out, v),
                None => out.push_str("\\u"),
            },
            'U' => match take_hex(&mut chars, 8) {
                Some(v) => push_code(&mut out, v),
                None => out.push_str("\\U"),
            },
            'c' => match chars.next() {
                Some(ctl) => push_code(&mut out, (ctl as u32) & 0x1f),
                None => out.push_str("\\c"),
            },
            other => {
                out.push('\\');
                out.push(other);
            }
        }
    }
    out
}

fn take_hex(chars: &mut std::iter::Peekable<std::str::Chars<'_>>, max: usize) -> Option<u32> {
    let mut value: Option<u32> = None;
    for _ in 0..max {
        match chars.peek().and_then(|d| d.to_digit(16)) {
            Some(d) => {
                value = Some(value.unwrap_or(0).saturating_mul(16).saturating_add(d));
                chars.next();
            }
            None => break,
        }
    }
    value
}

fn push_code(out: &mut String, code: u32) {
    // Bytes that are not valid scalar values decode to U+FFFD, which can match
    // nothing policy looks for: the command then stays with the model.
    out.push(char::from_u32(code).unwrap_or('\u{fffd}'));
}

/// Decodes text inside double quotes: only `\$`, `` \` ``, `\"`, `\\` and
/// backslash-newline are escapes there.
pub fn decode_double_quoted(text: &str, word: &mut Word) {
    if !text.contains('\\') {
        word.push_str(text);
        return;
    }
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\\' {
            match chars.peek() {
                Some('$' | '`' | '"' | '\\') => {
                    if let Some(next) = chars.next() {
                        word.push_char(next);
                    }
                }
                Some('\n') => {
                    chars.next();
                }
                _ => word.push_char('\\'),
            }
        } else {
            word.push_char(c);
        }
    }
}

/// Decodes unquoted text: backslash escapes any character, unquoted glob
/// characters stay globs, and a leading `~` (alone or before `/`) is home.
pub fn decode_unquoted(text: &str, at_word_start: bool, word: &mut Word) {
    if !text.contains(['\\', '*', '?', '[', '~']) {
        word.push_str(text);
        return;
    }
    let mut rest = text;
    if at_word_start && let Some(after) = rest.strip_prefix('~') {
        let user_end = after.find('/').unwrap_or(after.len());
        let user = after.get(..user_end).unwrap_or("");
        if user.is_empty() {
            word.push(Piece::Home);
        } else {
            word.push(Piece::Var {
                name: format!("~{user}"),
                default: None,
            });
        }
        rest = after.get(user_end..).unwrap_or("");
    }
    let mut chars = rest.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => match chars.next() {
                Some('\n') | None => {}
                Some(next) => word.push_char(next),
            },
            '*' | '?' | '[' => word.push(Piece::Glob(c)),
            other => word.push_char(other),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ansi_c_escapes_decode() {
        assert_eq!(decode_ansi_c(r"\x72m"), "rm");
        assert_eq!(decode_ansi_c(r"\162\155"), "rm");
        assert_eq!(decode_ansi_c(r"\u0072m"), "rm");
        assert_eq!(decode_ansi_c(r"a\nb\tc"), "a\nb\tc");
        assert_eq!(decode_ansi_c(r"it\'s"), "it's");
        assert_eq!(decode_ansi_c(r"\x2f"), "/");
    }

    #[test]
    fn unquoted_tilde_and_globs() {
        let mut w = Word::default();
        decode_unquoted("~/*", true, &mut w);
        assert_eq!(
            w.pieces,
            vec![Piece::Home, Piece::Literal("/".into()), Piece::Glob('*')]
        );
        let mut w = Word::default();
        decode_unquoted(r"\rm", true, &mut w);
        assert_eq!(w.literal().as_deref(), Some("rm"));
        let mut w = Word::default();
        decode_unquoted("a~", true, &mut w);
        assert_eq!(w.literal().as_deref(), Some("a~"));
    }

    #[test]
    fn double_quoted_escapes() {
        let mut w = Word::default();
        decode_double_quoted(r#"a\"b\$c\d"#, &mut w);
        assert_eq!(w.literal().as_deref(), Some(r#"a"b$c\d"#));
    }
}
