//! Interpreter code read for what it runs: a tokenizer of each language's
//! string syntax, and the calls that hand a string or an argument list to
//! a shell or to `exec`.
//!
//! `python -c 'os.system("rm -rf ~")'` runs `rm -rf ~`; so do
//! `os.system("""rm -rf ~""")`, `subprocess.run(['rm', '-rf', home])`,
//! `system q{rm -rf ~}` in Perl, `%x(rm -rf ~)` in Ruby, `` exec(`…`) ``
//! in PHP and `os.execute([[rm -rf ~]])` in Lua. A marker followed by a
//! quote sees the first of these only. Here each language's strings are
//! read by its own rules — prefixes and triple quotes, `q{}`/`qq()`/`qw[]`
//! with any delimiter, `%q`/`%x`/`%w`, template literals, long brackets,
//! here-documents, escapes decoded, interpolations as holes — and the
//! code is a stream of strings, names and punctuation. Then:
//!
//! - a string (or strings joined by the language's concatenation) given to
//!   a call that runs a shell (`system`, `popen`, `execSync`, backquotes,
//!   `qx`, `do shell script`, …) is a script the interpreter runs;
//! - a list of strings given to a call that runs a program
//!   (`subprocess.run([…])`, `execvp`, `spawnSync('rm', [...])`, Perl's
//!   and Ruby's `system` of several arguments, Tcl's `exec`) is an argv;
//! - a call that removes a tree (`shutil.rmtree`, `FileUtils.rm_rf`,
//!   `fs.rmSync`, `remove_tree`, …) is read as `rm -rf`, one that writes a
//!   file (`open(p, 'w')`, `fs.writeFileSync`, `File.write`, …) as `tee`,
//!   one that removes a file as `rm -f`, one that changes a mode as
//!   `chmod`: the hard denies judge the path;
//! - the home directory written the language's way (`os.path.expanduser
//!   ('~')`, `Path.home()`, `$ENV{HOME}`, `Dir.home`, `os.homedir()`,
//!   `process.env.HOME`, `getenv('HOME')`, …) is the home directory;
//! - when the code can run a shell at all, every other string that may be
//!   a command line (and every string that decodes from base64 to one) is
//!   a conservative reading ([`super::conservative`]): the code may build
//!   its command from it.
//!
//! Everything is bounded: the code is read once, at most
//! [`MAX_CODE_BYTES`], into at most [`MAX_TOKENS`] tokens; nested brackets
//! and interpolations are skipped, never recursed into.

use super::decode;

/// Longest code read; longer code is read up to here (what it runs past
/// the cut is the reviewer's).
pub(crate) const MAX_CODE_BYTES: usize = 64 * 1024;

/// Most tokens one piece of code yields.
pub(crate) const MAX_TOKENS: usize = 8192;

/// The languages read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Lang {
    Python,
    Perl,
    Ruby,
    Js,
    Php,
    Lua,
    Tcl,
    Awk,
    R,
    Julia,
    AppleScript,
}

/// The language an interpreter named `name` speaks.
pub(crate) fn lang_of(name: &str) -> Option<Lang> {
    let base = name.trim_end_matches(|c: char| c.is_ascii_digit() || c == '.' || c == '-');
    Some(match base {
        "python" | "pypy" | "ipython" => Lang::Python,
        "perl" => Lang::Perl,
        "ruby" | "jruby" | "irb" => Lang::Ruby,
        "node" | "nodejs" | "deno" | "bun" | "qjs" => Lang::Js,
        "php" => Lang::Php,
        "lua" | "luajit" => Lang::Lua,
        "tclsh" | "wish" | "expect" => Lang::Tcl,
        "awk" | "gawk" | "mawk" | "nawk" | "busybox-awk" => Lang::Awk,
        "Rscript" | "R" => Lang::R,
        "julia" => Lang::Julia,
        "osascript" => Lang::AppleScript,
        _ => return None,
    })
}

/// One piece of a string: known text, or a hole an interpolation fills at
/// run time (`{x}`, `$var`, `#{x}`), or the home directory written the
/// language's way inside it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Piece {
    Text(String),
    Hole,
    Home,
}

/// A token of code.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Tok {
    /// A string literal's value.
    Str(Vec<Piece>),
    /// A string that runs as a shell command where it stands (Perl's and
    /// Ruby's backquotes and `qx`/`%x`, PHP's backquotes, Julia's command
    /// literals).
    Run(Vec<Piece>),
    /// A name (identifier; `a.b` and `a::b` are names and punctuation).
    Name(String),
    /// The home directory written as an expression (`Dir.home`).
    Home,
    Punct(char),
    /// A line break (a statement end for languages without `;`).
    Newline,
}

/// Reads `code` in `lang` into tokens.
pub(crate) fn tokenize(lang: Lang, code: &str) -> Vec<Tok> {
    let code = code
        .get(..floor_boundary(code, MAX_CODE_BYTES))
        .unwrap_or(code);
    let mut t = Tokenizer {
        lang,
        src: code.as_bytes(),
        code,
        at: 0,
        out: Vec::new(),
    };
    t.run();
    home_expressions(lang, &mut t.out);
    t.out
}

fn floor_boundary(s: &str, at: usize) -> usize {
    if at >= s.len() {
        return s.len();
    }
    let mut i = at;
    while i > 0 && !s.is_char_boundary(i) {
        i -= 1;
    }
    i
}

struct Tokenizer<'a> {
    lang: Lang,
    src: &'a [u8],
    code: &'a str,
    at: usize,
    out: Vec<Tok>,
}

impl Tokenizer<'_> {
    fn byte(&self, i: usize) -> Option<u8> {
        self.src.get(i).copied()
    }

    fn rest(&self) -> &str {
        self.code.get(self.at..).unwrap_or("")
    }

    fn push(&mut self, tok: Tok) {
        if self.out.len() < MAX_TOKENS {
            self.out.push(tok);
        }
    }

    fn run(&mut self) {
        while self.at < self.src.len() && self.out.len() < MAX_TOKENS {
            let start = self.at;
            self.step();
            if self.at <= start {
                self.at = start + 1;
            }
        }
    }

    fn step(&mut self) {
        let Some(b) = self.byte(self.at) else { return };
        if self.comment() {
            return;
        }
        if let Some((tok, end)) = self.string_at() {
            self.push(tok);
            self.at = end;
            return;
        }
        match b {
            b'\n' => {
                self.push(Tok::Newline);
                self.at += 1;
            }
            b' ' | b'\t' | b'\r' => self.at += 1,
            b if b.is_ascii_alphabetic() || b == b'_' => {
                let len = self
                    .src
                    .get(self.at..)
                    .unwrap_or_default()
                    .iter()
                    .take_while(|c| c.is_ascii_alphanumeric() || **c == b'_')
                    .count();
                let name = self
                    .code
                    .get(self.at..self.at + len)
                    .unwrap_or("")
                    .to_owned();
                self.at += len;
                self.push(Tok::Name(name));
            }
            _ => {
                let c = self.rest().chars().next().unwrap_or(' ');
                self.at += c.len_utf8();
                self.push(Tok::Punct(c));
            }
        }
    }

    /// Skips a comment at the cursor; true when there was one.
    fn comment(&mut self) -> bool {
        let rest = self.rest();
        let line = match self.lang {
            Lang::Python | Lang::Perl | Lang::Ruby | Lang::Tcl | Lang::Awk | Lang::R => {
                rest.starts_with('#') && !self.perl_special_hash()
            }
            Lang::Julia => rest.starts_with('#') && !rest.starts_with("#="),
            Lang::Js => rest.starts_with("//"),
            Lang::Php => rest.starts_with("//") || rest.starts_with('#'),
            Lang::Lua => rest.starts_with("--") && !rest.starts_with("--["),
            Lang::AppleScript => rest.starts_with("--") || rest.starts_with('#'),
        };
        if line {
            let len = rest.find('\n').unwrap_or(rest.len());
            self.at += len;
            return true;
        }
        let block = match self.lang {
            Lang::Js | Lang::Php => rest.starts_with("/*").then_some("*/"),
            Lang::Lua => rest.starts_with("--[").then_some("]"),
            Lang::Julia => rest.starts_with("#=").then_some("=#"),
            Lang::Python
            | Lang::Perl
            | Lang::Ruby
            | Lang::Tcl
            | Lang::Awk
            | Lang::R
            | Lang::AppleScript => None,
        };
        if let Some(close) = block {
            if self.lang == Lang::Lua {
                // `--[[ … ]]` (any level); `--[` alone is a line comment.
                self.at += 2;
                match self.long_bracket() {
                    Some(end) => self.at = end,
                    None => {
                        let len = self.rest().find('\n').unwrap_or(self.rest().len());
                        self.at += len;
                    }
                }
                return true;
            }
            let len = rest
                .get(2..)
                .and_then(|r| r.find(close))
                .map_or(rest.len(), |i| i + 2 + close.len());
            self.at += len;
            return true;
        }
        false
    }

    /// `$#array` and `$#` in Perl are not comments.
    fn perl_special_hash(&self) -> bool {
        self.lang == Lang::Perl && self.at > 0 && self.byte(self.at - 1) == Some(b'$')
    }

    /// A string literal (or a regex, skipped as a non-string) at the cursor.
    fn string_at(&mut self) -> Option<(Tok, usize)> {
        match self.lang {
            Lang::Python => self.python_string(),
            Lang::Perl => self.perl_string(),
            Lang::Ruby => self.ruby_string(),
            Lang::Js => self.js_string(),
            Lang::Php => self.php_string(),
            Lang::Lua => self.lua_string(),
            Lang::Tcl => self.tcl_string(),
            Lang::Awk => self
                .quoted(b'"', Escapes::C, Interp::None)
                .map(|(p, e)| (Tok::Str(p), e)),
            Lang::R => self.r_string(),
            Lang::Julia => self.julia_string(),
            Lang::AppleScript => self
                .quoted(b'"', Escapes::C, Interp::None)
                .map(|(p, e)| (Tok::Str(p), e)),
        }
    }

    /// A string delimited by `quote` at the cursor (the cursor on the
    /// opening quote): its pieces and the index after the closing quote.
    fn quoted(&self, quote: u8, escapes: Escapes, interp: Interp) -> Option<(Vec<Piece>, usize)> {
        if self.byte(self.at) != Some(quote) {
            return None;
        }
        self.body(self.at + 1, &[quote], escapes, interp)
    }

    /// A string body from `from` to the first unescaped `close` sequence.
    fn body(
        &self,
        from: usize,
        close: &[u8],
        escapes: Escapes,
        interp: Interp,
    ) -> Option<(Vec<Piece>, usize)> {
        let mut pieces = Pieces::default();
        let mut i = from;
        while i < self.src.len() {
            if self.src.get(i..i + close.len()) == Some(close) {
                return Some((pieces.done(), i + close.len()));
            }
            let b = self.byte(i)?;
            if b == b'\\' && escapes != Escapes::None {
                let (text, used) = escape(self.code, i, escapes);
                pieces.text(&text);
                i += used;
                continue;
            }
            if let Some(used) = interpolation(self.code, i, interp) {
                let span = self.code.get(i..i + used).unwrap_or("");
                if is_home_text(span) {
                    pieces.home();
                } else {
                    pieces.hole();
                }
                i += used;
                continue;
            }
            let c = self.code.get(i..).and_then(|r| r.chars().next())?;
            pieces.char(c);
            i += c.len_utf8();
        }
        // Never closed: the rest is the string (a reader errs wider).
        Some((pieces.done(), self.src.len()))
    }

    fn python_string(&self) -> Option<(Tok, usize)> {
        let rest = self.rest();
        let prefix = rest
            .bytes()
            .take(3)
            .take_while(|b| matches!(b.to_ascii_lowercase(), b'r' | b'b' | b'u' | b'f'))
            .count();
        // A prefix only counts when a quote follows it and it starts a word.
        if prefix > 0
            && self.at > 0
            && self
                .byte(self.at - 1)
                .is_some_and(|b| b.is_ascii_alphanumeric() || b == b'_')
        {
            return None;
        }
        let q = self.byte(self.at + prefix)?;
        if !matches!(q, b'\'' | b'"') {
            return None;
        }
        let flags = rest.get(..prefix).unwrap_or("").to_ascii_lowercase();
        let raw = flags.contains('r');
        let f = flags.contains('f');
        let triple = self.src.get(self.at + prefix..self.at + prefix + 3) == Some(&[q, q, q][..]);
        let open = if triple { 3 } else { 1 };
        let close: Vec<u8> = std::iter::repeat_n(q, open).collect();
        let escapes = if raw { Escapes::Raw } else { Escapes::Python };
        let interp = if f { Interp::Braces } else { Interp::None };
        let (p, end) = self.body(self.at + prefix + open, &close, escapes, interp)?;
        Some((Tok::Str(p), end))
    }

    fn perl_string(&self) -> Option<(Tok, usize)> {
        let b = self.byte(self.at)?;
        match b {
            b'\'' => self
                .quoted(b'\'', Escapes::Single, Interp::None)
                .map(|(p, e)| (Tok::Str(p), e)),
            b'"' => self
                .quoted(b'"', Escapes::C, Interp::Sigil)
                .map(|(p, e)| (Tok::Str(p), e)),
            b'`' => self
                .quoted(b'`', Escapes::C, Interp::Sigil)
                .map(|(p, e)| (Tok::Run(p), e)),
            b'<' if self.rest().starts_with("<<") => self.heredoc(),
            b'/' if self.regex_may_start() => self.skip_delimited(self.at, 1),
            b'q' | b'm' | b's' | b't' | b'y' => self.perl_quote_like(),
            _ => None,
        }
    }

    /// `q//`, `qq//`, `qw//`, `qx//` (strings) and `m//`, `s///`, `tr///`,
    /// `y///` (patterns, skipped) with any delimiter.
    fn perl_quote_like(&self) -> Option<(Tok, usize)> {
        if self.at > 0
            && self.byte(self.at - 1).is_some_and(|b| {
                b.is_ascii_alphanumeric() || matches!(b, b'_' | b'$' | b'@' | b'%' | b'&')
            })
        {
            return None;
        }
        let rest = self.rest();
        let word_len = rest.bytes().take_while(u8::is_ascii_alphabetic).count();
        let word = rest.get(..word_len)?;
        let (kind, parts) = match word {
            "q" => ('q', 1),
            "qq" => ('Q', 1),
            "qw" => ('w', 1),
            "qx" => ('x', 1),
            "m" | "qr" => ('m', 1),
            "s" => ('m', 2),
            "tr" | "y" => ('m', 2),
            _ => return None,
        };
        let mut at = self.at + word_len;
        while self.byte(at).is_some_and(|b| b == b' ') {
            at += 1;
        }
        let delim = self.byte(at)?;
        if delim.is_ascii_alphanumeric()
            || delim.is_ascii_whitespace()
            || delim == b'_'
            || delim == b','
            || delim == b';'
            || delim == b'='
            || delim == b')'
        {
            return None;
        }
        if kind == 'm' {
            return self.skip_delimited(at, parts);
        }
        let (close, nests) = closing(delim);
        let (escapes, interp) = match kind {
            'q' | 'w' => (Escapes::Single, Interp::None),
            _ => (Escapes::C, Interp::Sigil),
        };
        let (pieces, end) = if nests {
            self.nested_body(at + 1, delim, close, escapes, interp)?
        } else {
            self.body(at + 1, &[close], escapes, interp)?
        };
        let tok = match kind {
            'x' => Tok::Run(pieces),
            'w' => Tok::Str(words_list(&pieces)),
            _ => Tok::Str(pieces),
        };
        Some((tok, end))
    }

    /// A body whose delimiters nest (`q{a{b}c}`).
    fn nested_body(
        &self,
        from: usize,
        open: u8,
        close: u8,
        escapes: Escapes,
        interp: Interp,
    ) -> Option<(Vec<Piece>, usize)> {
        let mut depth = 0usize;
        let mut i = from;
        while let Some(b) = self.byte(i) {
            match b {
                b'\\' => i += 2,
                b if b == open => {
                    depth += 1;
                    i += 1;
                }
                b if b == close => {
                    if depth == 0 {
                        let (pieces, _) = self.body_until(from, i, escapes, interp);
                        return Some((pieces, i + 1));
                    }
                    depth -= 1;
                    i += 1;
                }
                _ => i += 1,
            }
        }
        let (pieces, _) = self.body_until(from, self.src.len(), escapes, interp);
        Some((pieces, self.src.len()))
    }

    /// The pieces of `from..to` read as a string body.
    fn body_until(
        &self,
        from: usize,
        to: usize,
        escapes: Escapes,
        interp: Interp,
    ) -> (Vec<Piece>, usize) {
        let inner = Tokenizer {
            lang: self.lang,
            src: self.src.get(..to).unwrap_or(self.src),
            code: self.code.get(..to).unwrap_or(self.code),
            at: from,
            out: Vec::new(),
        };
        inner
            .body(from, b"\0\0\0\0never", escapes, interp)
            .unwrap_or((Vec::new(), to))
    }

    /// Skips `parts` delimited sections starting at the delimiter at `at`
    /// (a pattern, not a string): a token nobody reads.
    fn skip_delimited(&self, at: usize, parts: usize) -> Option<(Tok, usize)> {
        let delim = self.byte(at)?;
        let (close, nests) = closing(delim);
        let mut i = at + 1;
        let mut done = 0;
        let mut depth = 0usize;
        while let Some(b) = self.byte(i) {
            i += 1;
            match b {
                b'\\' => i += 1,
                b'\n' if self.lang != Lang::Perl => break,
                b if nests && b == delim => depth += 1,
                b if b == close => {
                    if depth > 0 {
                        depth -= 1;
                        continue;
                    }
                    done += 1;
                    if done == parts {
                        break;
                    }
                    if nests {
                        // `s{a}{b}`: the second part has its own brackets.
                        while self.byte(i).is_some_and(|c| c.is_ascii_whitespace()) {
                            i += 1;
                        }
                        if self.byte(i).is_some() {
                            i += 1;
                        }
                    }
                }
                _ => {}
            }
        }
        // Pattern flags.
        while self.byte(i).is_some_and(|b| b.is_ascii_alphabetic()) {
            i += 1;
        }
        Some((Tok::Punct('/'), i))
    }

    /// Whether a `/` at the cursor starts a pattern rather than dividing.
    fn regex_may_start(&self) -> bool {
        let before = self.out.last().cloned();
        match before {
            None | Some(Tok::Newline) => true,
            Some(Tok::Punct(c)) => matches!(
                c,
                '(' | ',' | '=' | ':' | '[' | '!' | '&' | '|' | '?' | '{' | '}' | ';' | '~'
            ),
            Some(Tok::Name(n)) => matches!(
                n.as_str(),
                "if" | "unless"
                    | "and"
                    | "or"
                    | "not"
                    | "return"
                    | "split"
                    | "grep"
                    | "when"
                    | "typeof"
            ),
            Some(Tok::Str(_) | Tok::Run(_) | Tok::Home) => false,
        }
    }

    /// A here-document (`<<'EOF'`, `<<"EOF"`, `<<EOF`, `<<~EOF`, Ruby's
    /// `<<-EOS`, PHP's `<<<EOT`): its body up to the terminator line.
    fn heredoc(&self) -> Option<(Tok, usize)> {
        let rest = self.rest();
        let mut i = if rest.starts_with("<<<") { 3 } else { 2 };
        if matches!(rest.as_bytes().get(i), Some(b'~' | b'-')) {
            i += 1;
        }
        let quote = rest
            .as_bytes()
            .get(i)
            .copied()
            .filter(|b| matches!(b, b'\'' | b'"'));
        if quote.is_some() {
            i += 1;
        }
        let word_len = rest
            .get(i..)?
            .bytes()
            .take_while(|b| b.is_ascii_alphanumeric() || *b == b'_')
            .count();
        if word_len == 0 {
            return None;
        }
        let word = rest.get(i..i + word_len)?;
        let line_end = rest.find('\n')?;
        let body_start = self.at + line_end + 1;
        let body = self.code.get(body_start..)?;
        let mut offset = 0;
        let mut end_of_body = body.len();
        let mut after = self.src.len();
        for line in body.split_inclusive('\n') {
            if line.trim() == word || line.trim().trim_end_matches(';') == word {
                end_of_body = offset;
                after = body_start + offset + line.len();
                break;
            }
            offset += line.len();
        }
        let text = body.get(..end_of_body).unwrap_or("");
        let (escapes, interp) = match quote {
            Some(b'\'') => (Escapes::None, Interp::None),
            _ => (Escapes::C, Interp::Sigil),
        };
        let inner = Tokenizer {
            lang: self.lang,
            src: text.as_bytes(),
            code: text,
            at: 0,
            out: Vec::new(),
        };
        let (pieces, _) = inner
            .body(0, b"\0\0\0\0never", escapes, interp)
            .unwrap_or_default();
        // The rest of the opening line is code; the body is resumed after.
        // The body is returned whole and the opening line's remainder is
        // tokenized by re-reading it: keep the cursor just after the word.
        let _ = after;
        Some((
            Tok::Str(pieces),
            self.at + i + word_len + usize::from(quote.is_some()),
        ))
    }

    fn ruby_string(&self) -> Option<(Tok, usize)> {
        let b = self.byte(self.at)?;
        match b {
            b'\'' => self
                .quoted(b'\'', Escapes::Single, Interp::None)
                .map(|(p, e)| (Tok::Str(p), e)),
            b'"' => self
                .quoted(b'"', Escapes::C, Interp::Ruby)
                .map(|(p, e)| (Tok::Str(p), e)),
            b'`' => self
                .quoted(b'`', Escapes::C, Interp::Ruby)
                .map(|(p, e)| (Tok::Run(p), e)),
            b'<' if self.rest().starts_with("<<~")
                || self.rest().starts_with("<<-")
                || self.rest().starts_with("<<'")
                || self.rest().starts_with("<<\"") =>
            {
                self.heredoc()
            }
            b'/' if self.regex_may_start() => self.skip_delimited(self.at, 1),
            b'%' => self.ruby_percent(),
            _ => None,
        }
    }

    /// `%q()`, `%Q()`, `%()`, `%w[]`, `%W[]`, `%x()`, `%i[]`, `%r{}`.
    fn ruby_percent(&self) -> Option<(Tok, usize)> {
        let kind = self.byte(self.at + 1)?;
        let (kind, at) = if kind.is_ascii_alphabetic() {
            (kind, self.at + 2)
        } else {
            (b'Q', self.at + 1)
        };
        let delim = self.byte(at)?;
        if delim.is_ascii_alphanumeric() || delim.is_ascii_whitespace() || delim == b'=' {
            return None;
        }
        if kind == b'r' {
            return self.skip_delimited(at, 1);
        }
        let (close, nests) = closing(delim);
        let (escapes, interp) = match kind {
            b'q' | b'w' | b'i' => (Escapes::Single, Interp::None),
            _ => (Escapes::C, Interp::Ruby),
        };
        let (pieces, end) = if nests {
            self.nested_body(at + 1, delim, close, escapes, interp)?
        } else {
            self.body(at + 1, &[close], escapes, interp)?
        };
        let tok = match kind {
            b'x' => Tok::Run(pieces),
            b'w' | b'W' | b'i' => Tok::Str(words_list(&pieces)),
            _ => Tok::Str(pieces),
        };
        Some((tok, end))
    }

    fn js_string(&self) -> Option<(Tok, usize)> {
        let b = self.byte(self.at)?;
        match b {
            b'\'' | b'"' => self
                .quoted(b, Escapes::C, Interp::None)
                .map(|(p, e)| (Tok::Str(p), e)),
            b'`' => self
                .quoted(b'`', Escapes::C, Interp::Template)
                .map(|(p, e)| (Tok::Str(p), e)),
            b'/' if !self.rest().starts_with("//")
                && !self.rest().starts_with("/*")
                && self.regex_may_start() =>
            {
                self.skip_delimited(self.at, 1)
            }
            _ => None,
        }
    }

    fn php_string(&self) -> Option<(Tok, usize)> {
        let b = self.byte(self.at)?;
        match b {
            b'\'' => self
                .quoted(b'\'', Escapes::Single, Interp::None)
                .map(|(p, e)| (Tok::Str(p), e)),
            b'"' => self
                .quoted(b'"', Escapes::C, Interp::Sigil)
                .map(|(p, e)| (Tok::Str(p), e)),
            b'`' => self
                .quoted(b'`', Escapes::C, Interp::Sigil)
                .map(|(p, e)| (Tok::Run(p), e)),
            b'<' if self.rest().starts_with("<<<") => self.heredoc(),
            _ => None,
        }
    }

    fn lua_string(&mut self) -> Option<(Tok, usize)> {
        let b = self.byte(self.at)?;
        match b {
            b'\'' | b'"' => self
                .quoted(b, Escapes::C, Interp::None)
                .map(|(p, e)| (Tok::Str(p), e)),
            b'[' if matches!(self.byte(self.at + 1), Some(b'[' | b'=')) => {
                let start = self.at;
                let end = self.long_bracket()?;
                // The body between the brackets.
                let open = self
                    .src
                    .get(start..)
                    .unwrap_or_default()
                    .iter()
                    .skip(1)
                    .take_while(|c| **c == b'=')
                    .count()
                    + 2;
                let close = open;
                let body = self
                    .code
                    .get(start + open..end.saturating_sub(close))
                    .unwrap_or("");
                let body = body.strip_prefix('\n').unwrap_or(body);
                Some((Tok::Str(vec![Piece::Text(body.to_owned())]), end))
            }
            _ => None,
        }
    }

    /// The index after a Lua long bracket (`[[…]]`, `[==[…]==]`) at the cursor.
    fn long_bracket(&self) -> Option<usize> {
        if self.byte(self.at) != Some(b'[') {
            return None;
        }
        let level = self
            .src
            .get(self.at + 1..)
            .unwrap_or_default()
            .iter()
            .take_while(|b| **b == b'=')
            .count();
        if self.byte(self.at + 1 + level) != Some(b'[') {
            return None;
        }
        let mut close = vec![b']'];
        close.extend(std::iter::repeat_n(b'=', level));
        close.push(b']');
        let from = self.at + level + 2;
        let found = self
            .src
            .get(from..)
            .unwrap_or_default()
            .windows(close.len())
            .position(|w| w == close.as_slice());
        Some(found.map_or(self.src.len(), |i| from + i + close.len()))
    }

    fn tcl_string(&self) -> Option<(Tok, usize)> {
        let b = self.byte(self.at)?;
        match b {
            b'"' => self
                .quoted(b'"', Escapes::C, Interp::Tcl)
                .map(|(p, e)| (Tok::Str(p), e)),
            b'{' => {
                let (pieces, end) =
                    self.nested_body(self.at + 1, b'{', b'}', Escapes::None, Interp::None)?;
                Some((Tok::Str(pieces), end))
            }
            _ => None,
        }
    }

    fn r_string(&self) -> Option<(Tok, usize)> {
        let b = self.byte(self.at)?;
        match b {
            b'\'' | b'"' => self
                .quoted(b, Escapes::C, Interp::None)
                .map(|(p, e)| (Tok::Str(p), e)),
            b'r' | b'R' if matches!(self.byte(self.at + 1), Some(b'"' | b'\'')) => {
                let q = self.byte(self.at + 1)?;
                let dashes = self
                    .src
                    .get(self.at + 2..)
                    .unwrap_or_default()
                    .iter()
                    .take_while(|c| **c == b'-')
                    .count();
                let open = self.byte(self.at + 2 + dashes)?;
                let (close, _) = closing(open);
                let mut end = vec![close];
                end.extend(std::iter::repeat_n(b'-', dashes));
                end.push(q);
                self.body(self.at + 3 + dashes, &end, Escapes::None, Interp::None)
                    .map(|(p, e)| (Tok::Str(p), e))
            }
            _ => None,
        }
    }

    fn julia_string(&self) -> Option<(Tok, usize)> {
        let b = self.byte(self.at)?;
        match b {
            b'"' if self.rest().starts_with("\"\"\"") => self
                .body(self.at + 3, b"\"\"\"", Escapes::C, Interp::Julia)
                .map(|(p, e)| (Tok::Str(p), e)),
            b'"' => self
                .quoted(b'"', Escapes::C, Interp::Julia)
                .map(|(p, e)| (Tok::Str(p), e)),
            b'`' => self
                .quoted(b'`', Escapes::C, Interp::Julia)
                .map(|(p, e)| (Tok::Run(p), e)),
            _ => None,
        }
    }
}

/// The closing delimiter of `open`, and whether the pair nests.
fn closing(open: u8) -> (u8, bool) {
    match open {
        b'(' => (b')', true),
        b'[' => (b']', true),
        b'{' => (b'}', true),
        b'<' => (b'>', true),
        other => (other, false),
    }
}

/// `qw(a b c)`, `%w[a b c]`: the words, as one string of them joined by
/// blanks (an argv when given to `system`).
fn words_list(pieces: &[Piece]) -> Vec<Piece> {
    let mut out = Vec::new();
    for p in pieces {
        match p {
            Piece::Text(t) => out.push(Piece::Text(
                t.split_whitespace().collect::<Vec<_>>().join(" "),
            )),
            other => out.push(other.clone()),
        }
    }
    out
}

/// Which escapes a string's body has.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Escapes {
    /// None at all (a quoted here-document, a Tcl brace string).
    None,
    /// Only `\\` and the quote (Perl and Ruby single quotes).
    Single,
    /// A raw string: a backslash keeps itself and the next character.
    Raw,
    /// C-style: `\n`, `\t`, `\xHH`, `\uXXXX`, octal, and the character.
    C,
    /// Python's: C-style plus `\N{…}` (read as unknown).
    Python,
}

/// How a string's body interpolates.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Interp {
    None,
    /// Python f-strings: `{…}` (`{{` is a brace).
    Braces,
    /// Perl and PHP: `$name`, `${…}`, `$h{…}`, `@a`.
    Sigil,
    /// Ruby: `#{…}`.
    Ruby,
    /// JavaScript template literals: `${…}`.
    Template,
    /// Tcl: `$name`, `[cmd]`.
    Tcl,
    /// Julia: `$name`, `$(…)`.
    Julia,
}

/// An escape at `at` in `code`: its text and the bytes it used.
fn escape(code: &str, at: usize, escapes: Escapes) -> (String, usize) {
    let next = code.get(at + 1..).and_then(|r| r.chars().next());
    let Some(c) = next else {
        return ("\\".to_owned(), 1);
    };
    match escapes {
        Escapes::None => ("\\".to_owned(), 1),
        Escapes::Single => match c {
            '\\' | '\'' => (c.to_string(), 2),
            _ => ("\\".to_owned(), 1),
        },
        Escapes::Raw => (format!("\\{c}"), 1 + c.len_utf8()),
        Escapes::C | Escapes::Python => {
            let hex = |len: usize| -> Option<(String, usize)> {
                let digits = code.get(at + 2..at + 2 + len)?;
                let n = u32::from_str_radix(digits, 16).ok()?;
                Some((char::from_u32(n)?.to_string(), 2 + len))
            };
            let simple = |s: &str| (s.to_owned(), 2);
            match c {
                'n' => simple("\n"),
                't' => simple("\t"),
                'r' => simple("\r"),
                '0'..='7' => {
                    let digits: String = code
                        .get(at + 1..)
                        .unwrap_or("")
                        .chars()
                        .take(3)
                        .take_while(|d| d.is_digit(8))
                        .collect();
                    let n = u32::from_str_radix(&digits, 8).unwrap_or(0);
                    let text = char::from_u32(n).map(|c| c.to_string()).unwrap_or_default();
                    (text, 1 + digits.len())
                }
                'x' => hex(2).unwrap_or_else(|| simple("x")),
                'u' if code.get(at + 2..).is_some_and(|r| r.starts_with('{')) => {
                    let close = code.get(at + 3..).and_then(|r| r.find('}'));
                    match close.and_then(|len| {
                        let n = u32::from_str_radix(code.get(at + 3..at + 3 + len)?, 16).ok()?;
                        Some((char::from_u32(n)?.to_string(), 4 + len))
                    }) {
                        Some(done) => done,
                        None => simple("u"),
                    }
                }
                'u' => hex(4).unwrap_or_else(|| simple("u")),
                'U' => hex(8).unwrap_or_else(|| simple("U")),
                c => (c.to_string(), 1 + c.len_utf8()),
            }
        }
    }
}

/// The length of an interpolation starting at `at`, if one does.
fn interpolation(code: &str, at: usize, interp: Interp) -> Option<usize> {
    let rest = code.get(at..)?;
    let bracketed = |open: &str, close_of: char| -> Option<usize> {
        let inner = rest.strip_prefix(open)?;
        let opening = open.chars().last()?;
        let mut depth = 0usize;
        for (i, c) in inner.char_indices() {
            if c == opening {
                depth += 1;
            } else if c == close_of {
                if depth == 0 {
                    return Some(open.len() + i + 1);
                }
                depth -= 1;
            }
        }
        Some(rest.len())
    };
    let name_len = |from: usize| -> usize {
        rest.get(from..)
            .unwrap_or("")
            .bytes()
            .take_while(|b| b.is_ascii_alphanumeric() || *b == b'_')
            .count()
    };
    match interp {
        Interp::None => None,
        Interp::Braces => {
            if rest.starts_with("{{") {
                return None;
            }
            bracketed("{", '}')
        }
        Interp::Ruby => bracketed("#{", '}'),
        Interp::Template => bracketed("${", '}'),
        Interp::Sigil | Interp::Tcl | Interp::Julia => {
            if interp == Interp::Tcl && rest.starts_with('[') {
                return bracketed("[", ']');
            }
            if interp == Interp::Julia && rest.starts_with("$(") {
                return bracketed("$(", ')');
            }
            if rest.starts_with("${") {
                return bracketed("${", '}');
            }
            let sigil = rest.starts_with('$') || (interp == Interp::Sigil && rest.starts_with('@'));
            if !sigil {
                return None;
            }
            let n = name_len(1);
            if n == 0 {
                return None;
            }
            // `$ENV{HOME}`, `$h{key}`, `$a[0]`, `$o->{x}`: the subscript too.
            let mut len = 1 + n;
            for _ in 0..4 {
                let tail = rest.get(len..).unwrap_or("");
                let step = if tail.starts_with('{') {
                    tail.find('}').map(|i| i + 1)
                } else if tail.starts_with('[') {
                    tail.find(']').map(|i| i + 1)
                } else if tail.starts_with("->{") || tail.starts_with("->[") {
                    tail.find(['}', ']']).map(|i| i + 1)
                } else {
                    None
                };
                match step {
                    Some(s) => len += s,
                    None => break,
                }
            }
            Some(len)
        }
    }
}

/// Builds the pieces of a string.
#[derive(Default)]
struct Pieces {
    out: Vec<Piece>,
}

impl Pieces {
    fn text(&mut self, s: &str) {
        if let Some(Piece::Text(last)) = self.out.last_mut() {
            last.push_str(s);
        } else {
            self.out.push(Piece::Text(s.to_owned()));
        }
    }

    fn char(&mut self, c: char) {
        let mut b = [0u8; 4];
        self.text(c.encode_utf8(&mut b));
    }

    fn hole(&mut self) {
        if self.out.last() != Some(&Piece::Hole) {
            self.out.push(Piece::Hole);
        }
    }

    fn home(&mut self) {
        self.out.push(Piece::Home);
    }

    fn done(self) -> Vec<Piece> {
        self.out
    }
}

/// The ways code names the home directory, written without blanks and
/// with every quote as `'`.
const HOME_FORMS: &[&str] = &[
    "os.path.expanduser('~')",
    "os.path.expanduser('~/')",
    "expanduser('~')",
    "path.expanduser('~')",
    "Path.home()",
    "pathlib.Path.home()",
    "Path('~').expanduser()",
    "os.environ['HOME']",
    "os.environ.get('HOME')",
    "environ['HOME']",
    "os.getenv('HOME')",
    "getenv('HOME')",
    "$ENV{HOME}",
    "$ENV{'HOME'}",
    "ENV['HOME']",
    "ENV.fetch('HOME')",
    "Dir.home",
    "Dir.home()",
    "File.expand_path('~')",
    "os.homedir()",
    "require('os').homedir()",
    "process.env.HOME",
    "process.env['HOME']",
    "Deno.env.get('HOME')",
    "Bun.env.HOME",
    "$_SERVER['HOME']",
    "Sys.getenv('HOME')",
    "path.expand('~')",
    "homedir()",
    "ENV[\"HOME\"]",
    "$env(HOME)",
    "$::env(HOME)",
];

/// Whether an interpolation's text (`$ENV{HOME}`, `#{Dir.home}`,
/// `${os.homedir()}`, `{os.path.expanduser('~')}`) names the home directory.
fn is_home_text(span: &str) -> bool {
    let inner = span
        .strip_prefix("#{")
        .or_else(|| span.strip_prefix("${"))
        .or_else(|| span.strip_prefix('{'))
        .and_then(|s| s.strip_suffix('}'))
        .unwrap_or(span);
    let norm: String = inner
        .chars()
        .filter(|c| !c.is_whitespace())
        .map(|c| if c == '"' { '\'' } else { c })
        .collect();
    HOME_FORMS.iter().any(|f| f.replace('"', "'") == norm)
        || matches!(norm.as_str(), "$HOME" | "$ENV{HOME}")
}

/// Replaces token runs that spell the home directory with [`Tok::Home`].
fn home_expressions(lang: Lang, toks: &mut Vec<Tok>) {
    let _ = lang;
    let mut i = 0;
    while i < toks.len() {
        let mut matched = None;
        for len in (1..=9).rev() {
            let Some(run) = toks.get(i..i + len) else {
                continue;
            };
            let text = spell(run);
            if text.is_empty() {
                continue;
            }
            if is_home_text(&text) {
                matched = Some(len);
                break;
            }
        }
        match matched {
            Some(len) => {
                toks.splice(i..i + len, [Tok::Home]);
                i += 1;
            }
            None => i += 1,
        }
    }
}

/// Tokens spelt back as code (strings single-quoted), for matching forms.
fn spell(run: &[Tok]) -> String {
    let mut out = String::new();
    for t in run {
        match t {
            Tok::Name(n) => out.push_str(n),
            Tok::Punct(c) => out.push(*c),
            Tok::Str(p) => {
                out.push('\'');
                for piece in p {
                    match piece {
                        Piece::Text(t) => out.push_str(t),
                        Piece::Hole | Piece::Home => return String::new(),
                    }
                }
                out.push('\'');
            }
            Tok::Run(_) | Tok::Home | Tok::Newline => return String::new(),
        }
    }
    out
}

/// Calls that run their string argument in a shell.
const SHELL_CALLS: &[&str] = &[
    "system",
    "popen",
    "getoutput",
    "getstatusoutput",
    "check_output",
    "check_call",
    "call",
    "run",
    "Popen",
    "execSync",
    "exec",
    "shell_exec",
    "passthru",
    "proc_open",
    "execute",
    "spawnSync",
    "spawn",
    "execFileSync",
    "execFile",
    "capture2",
    "capture2e",
    "capture3",
    "popen2",
    "popen3",
    "pipeline_r",
    "pipeline_w",
    "readpipe",
    "qx",
    "shell",
    "system2",
    "sh",
    "bash",
    "exec_command",
    "Command",
    "check_call",
];

/// Calls that run a program from an argument list.
const EXEC_CALLS: &[&str] = &[
    "execv",
    "execve",
    "execvp",
    "execvpe",
    "execl",
    "execle",
    "execlp",
    "execlpe",
    "spawnv",
    "spawnve",
    "spawnvp",
    "spawnvpe",
    "spawnl",
    "spawnlp",
    "posix_spawn",
    "posix_spawnp",
];

/// Calls that remove a whole tree.
const TREE_REMOVERS: &[&str] = &[
    "rmtree",
    "remove_tree",
    "rm_rf",
    "rm_r",
    "remove_dir",
    "remove_entry",
    "remove_entry_secure",
    "rmSync",
    "rmdirSync",
    "removeSync",
    "emptyDirSync",
    "rimraf",
    "remove",
    "rm",
    "rmdir",
    "unlink",
    "delete",
];

/// Calls that write a file they are given.
const WRITERS: &[&str] = &[
    "writeFileSync",
    "appendFileSync",
    "writeFile",
    "appendFile",
    "createWriteStream",
    "file_put_contents",
    "write_text",
    "write_bytes",
    "write",
];

/// What a piece of code runs, for the interpreter to record.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Reading {
    /// A script a shell runs.
    Script(Vec<Piece>),
    /// An argv a program is started with.
    Argv(Vec<Vec<Piece>>),
}

/// The readings of one piece of code: the ones it surely runs, and the
/// conservative ones (strings that may become a command).
#[derive(Debug, Default)]
pub(crate) struct Readings {
    pub runs: Vec<Reading>,
    pub conservative: Vec<Reading>,
}

/// Most readings one piece of code yields, each kind.
const MAX_READINGS: usize = 32;

/// Reads `code` in `lang`.
pub(crate) fn readings(lang: Lang, code: &str) -> Readings {
    let toks = tokenize(lang, code);
    let mut out = Readings::default();
    let mut used = vec![false; toks.len()];
    let can_run = toks.iter().any(|t| match t {
        Tok::Run(_) => true,
        Tok::Name(n) => SHELL_CALLS.contains(&n.as_str()) || EXEC_CALLS.contains(&n.as_str()),
        _ => false,
    });
    let mut i = 0;
    while i < toks.len() && out.runs.len() < MAX_READINGS {
        match toks.get(i) {
            Some(Tok::Run(p)) => {
                out.runs.push(Reading::Script(p.clone()));
                mark(&mut used, i, i + 1);
            }
            Some(Tok::Name(n)) => {
                let name = n.as_str();
                if lang == Lang::Tcl && name == "exec" {
                    let (argv, end) = tcl_words(&toks, i + 1);
                    if !argv.is_empty() {
                        out.runs.push(Reading::Argv(argv));
                        mark(&mut used, i, end);
                    }
                } else if lang == Lang::AppleScript && name == "do" {
                    if let (Some(Tok::Name(a)), Some(Tok::Name(b))) =
                        (toks.get(i + 1), toks.get(i + 2))
                        && a == "shell"
                        && b == "script"
                        && let Some((script, end)) = joined_string(lang, &toks, i + 3)
                    {
                        out.runs.push(Reading::Script(script));
                        mark(&mut used, i, end);
                    }
                } else if let Some(args) = call_args(lang, &toks, i) {
                    let before = out.runs.len();
                    classify_call(lang, name, &args, &toks, &mut out);
                    if out.runs.len() > before {
                        mark(&mut used, args.start, args.end);
                    }
                }
            }
            Some(Tok::Punct('|')) if lang == Lang::Awk => {
                // `print … | "cmd"` (the printed text is the command's
                // input), `"cmd" | getline`.
                if let Some((command, end)) = joined_string(lang, &toks, i + 1) {
                    let script = match printed_before(&toks, i) {
                        Some(text) => piped(&text, &command),
                        None => command,
                    };
                    out.runs.push(Reading::Script(script));
                    mark(&mut used, i, end);
                } else if let Some(Tok::Name(n)) = toks.get(i + 1)
                    && n == "getline"
                    && let Some(script) = string_before(&toks, i)
                {
                    out.runs.push(Reading::Script(script));
                }
            }
            _ => {}
        }
        i += 1;
    }
    if can_run {
        conservative_readings(lang, &toks, &used, &mut out);
    }
    out
}

/// The conservative readings of code that can run something: the strings
/// and string lists no sure reading used, which may become a command.
fn conservative_readings(lang: Lang, toks: &[Tok], used: &[bool], out: &mut Readings) {
    let mut k = 0;
    while k < toks.len() && out.conservative.len() < MAX_READINGS {
        if used.get(k).copied().unwrap_or(true) {
            k += 1;
            continue;
        }
        match toks.get(k) {
            Some(Tok::Str(_)) => {
                if let Some((s, end)) = joined_string(lang, toks, k) {
                    if may_be_command(&s) {
                        out.conservative.push(Reading::Script(s.clone()));
                    }
                    if let Some(decoded) = base64_text(&s) {
                        out.conservative
                            .push(Reading::Script(vec![Piece::Text(decoded)]));
                    }
                    k = end.max(k + 1);
                    continue;
                }
            }
            Some(Tok::Punct('[' | '(')) => {
                if let Some((argv, end)) = string_list(toks, k)
                    && argv.len() >= 2
                {
                    out.conservative.push(Reading::Argv(argv));
                    k = end;
                    continue;
                }
            }
            _ => {}
        }
        k += 1;
    }
}

fn mark(used: &mut [bool], from: usize, to: usize) {
    for u in used.iter_mut().take(to).skip(from) {
        *u = true;
    }
}

/// The arguments of a call at name token `at`: `name(…)`, or (Perl, Ruby,
/// awk's `system`) `name ARG, ARG` to the end of the statement.
struct Args {
    /// Token range of the arguments.
    start: usize,
    end: usize,
    /// Each top-level argument's token range.
    each: Vec<(usize, usize)>,
}

fn call_args(lang: Lang, toks: &[Tok], at: usize) -> Option<Args> {
    let open = at + 1;
    match toks.get(open) {
        Some(Tok::Punct('(')) => {
            let mut depth = 0usize;
            let mut each = Vec::new();
            let mut from = open + 1;
            for (k, t) in toks.iter().enumerate().skip(open) {
                match t {
                    Tok::Punct('(' | '[' | '{') => depth += 1,
                    Tok::Punct(')' | ']' | '}') => {
                        depth = depth.saturating_sub(1);
                        if depth == 0 {
                            if k > from {
                                each.push((from, k));
                            }
                            return Some(Args {
                                start: open,
                                end: k + 1,
                                each,
                            });
                        }
                    }
                    Tok::Punct(',') if depth == 1 => {
                        each.push((from, k));
                        from = k + 1;
                    }
                    _ => {}
                }
            }
            each.push((from, toks.len()));
            Some(Args {
                start: open,
                end: toks.len(),
                each,
            })
        }
        Some(Tok::Str(_) | Tok::Home | Tok::Run(_) | Tok::Punct('['))
            if matches!(lang, Lang::Perl | Lang::Ruby | Lang::Tcl) =>
        {
            let mut each = Vec::new();
            let mut from = open;
            let mut depth = 0usize;
            let mut k = open;
            while let Some(t) = toks.get(k) {
                match t {
                    Tok::Punct(';') | Tok::Newline if depth == 0 => break,
                    Tok::Punct('(' | '[' | '{') => depth += 1,
                    Tok::Punct(')' | ']' | '}') => depth = depth.saturating_sub(1),
                    Tok::Punct(',') if depth == 0 => {
                        each.push((from, k));
                        from = k + 1;
                    }
                    Tok::Name(n)
                        if depth == 0 && matches!(n.as_str(), "or" | "and" | "if" | "unless") =>
                    {
                        break;
                    }
                    _ => {}
                }
                k += 1;
            }
            if k > from {
                each.push((from, k));
            }
            Some(Args {
                start: open,
                end: k,
                each,
            })
        }
        _ => None,
    }
}

/// Sorts one call into the readings.
fn classify_call(lang: Lang, name: &str, args: &Args, toks: &[Tok], out: &mut Readings) {
    if SHELL_CALLS.contains(&name) || EXEC_CALLS.contains(&name) {
        classify_process_call(lang, name, args, toks, out);
        return;
    }
    let Some(target) = args
        .each
        .first()
        .copied()
        .and_then(|r| path_argument(lang, toks, r))
    else {
        return;
    };
    if TREE_REMOVERS.contains(&name) {
        out.runs.push(if removes_recursively(name, args, toks) {
            fixed_argv(&["rm", "-rf"], target)
        } else {
            fixed_argv(&["rm", "-f"], target)
        });
        return;
    }
    let writes_mode = || {
        args.each.get(1).is_some_and(|&(s, _)| {
            matches!(toks.get(s), Some(Tok::Str(p)) if p.iter().any(|piece| matches!(piece, Piece::Text(t) if t.contains(['w', 'a', '>', '+']))))
        })
    };
    if WRITERS.contains(&name) || (matches!(name, "open" | "fopen") && writes_mode()) {
        out.runs.push(fixed_argv(&["tee", "-a"], target));
        return;
    }
    if name == "chmod"
        && let Some(digits) = chmod_digits(args, toks)
    {
        out.runs.push(Reading::Argv(vec![
            vec![Piece::Text("chmod".to_owned())],
            vec![Piece::Text(digits)],
            target,
        ]));
    }
}

/// Sorts a call that runs a shell or starts a program (`os.system`,
/// `spawnSync`, `execvp`, …): a script, or an argv.
fn classify_process_call(lang: Lang, name: &str, args: &Args, toks: &[Tok], out: &mut Readings) {
    let first = args.each.first().copied();
    let arg_string = |range: (usize, usize)| string_argument(lang, toks, range);
    let arg_path = |range: (usize, usize)| path_argument(lang, toks, range);
    // `spawnSync('rm', ['-rf', '/'])`: the program, then its arguments.
    if let (Some(program), Some(&(s, _))) = (first.and_then(arg_path), args.each.get(1))
        && let Some((list, _)) = string_list(toks, s)
        && !(name.starts_with("exec") || name.starts_with("spawnv"))
    {
        let mut argv = vec![program];
        argv.extend(list);
        out.runs.push(Reading::Argv(argv));
        return;
    }
    // A list as the first argument (or as the second of an exec call,
    // `execvp("rm", ["rm", …])`): an argv.
    for &(s, e) in args.each.iter().take(2) {
        if let Some((argv, _)) = string_list(toks, s)
            && !argv.is_empty()
            && s < e
        {
            out.runs.push(Reading::Argv(argv));
            return;
        }
    }
    let strings: Vec<Vec<Piece>> = args.each.iter().filter_map(|r| arg_path(*r)).collect();
    match strings.len() {
        0 => {}
        1 => {
            if let Some(script) = first.and_then(arg_string) {
                out.runs.push(Reading::Script(script));
            }
        }
        _ => {
            // `system("rm", "-rf", "/")`; `execl(path, "rm", "-rf", "/")`
            // names the program twice.
            let argv = if name.starts_with("execl") || name.starts_with("spawnl") {
                strings.into_iter().skip(1).collect()
            } else {
                strings
            };
            // `spawnSync('rm', ['-rf', '/'])`: the program and a list.
            out.runs.push(Reading::Argv(argv));
        }
    }
}

/// The string an argument (token range `range`) is, when the whole
/// argument is one string (trailing newlines aside).
fn string_argument(lang: Lang, toks: &[Tok], range: (usize, usize)) -> Option<Vec<Piece>> {
    let (s, e) = range;
    let (text, end) = joined_string(lang, toks, s)?;
    (end >= e
        || toks
            .get(end..e)
            .is_some_and(|r| r.iter().all(|t| matches!(t, Tok::Newline))))
    .then_some(text)
}

/// The path an argument (token range `range`) starts with: a string, or
/// one from the home directory.
fn path_argument(lang: Lang, toks: &[Tok], range: (usize, usize)) -> Option<Vec<Piece>> {
    let (s, _) = range;
    match toks.get(s) {
        Some(Tok::Home | Tok::Str(_)) => joined_string(lang, toks, s).map(|(p, _)| p),
        _ => None,
    }
}

/// An argv of fixed words and then `path`, the command a file call means
/// (`shutil.rmtree(p)` is `rm -rf p`).
fn fixed_argv(words: &[&str], path: Vec<Piece>) -> Reading {
    let mut v: Vec<Vec<Piece>> = words
        .iter()
        .map(|w| vec![Piece::Text((*w).to_owned())])
        .collect();
    v.push(path);
    Reading::Argv(v)
}

/// Whether a tree remover's call removes recursively: by its name
/// (`rmtree`, `rm_rf`), or `remove`/`rm`/`rmdir`/`delete` given a
/// `recursive` or `force` option.
fn removes_recursively(name: &str, args: &Args, toks: &[Tok]) -> bool {
    matches!(
        name,
        "rmtree"
            | "remove_tree"
            | "rm_rf"
            | "rm_r"
            | "remove_dir"
            | "remove_entry"
            | "remove_entry_secure"
            | "rmSync"
            | "rmdirSync"
            | "removeSync"
            | "emptyDirSync"
            | "rimraf"
    ) || matches!(name, "remove" | "rm" | "rmdir" | "delete")
        && toks.get(args.start..args.end).is_some_and(|r| {
            r.iter()
                .any(|t| matches!(t, Tok::Name(n) if n == "recursive" || n == "force"))
        })
}

/// The digits of a `chmod` call's mode when written as a number
/// (`os.chmod(path, 0o4755)`); `None` when it is not, or has no digits.
fn chmod_digits(args: &Args, toks: &[Tok]) -> Option<String> {
    let &(s, _) = args.each.get(1)?;
    let Some(Tok::Punct(_) | Tok::Name(_)) = toks.get(s) else {
        return None;
    };
    let mode: String = toks
        .get(s..args.each.get(1).map_or(s, |r| r.1))
        .unwrap_or(&[])
        .iter()
        .filter_map(|t| match t {
            Tok::Name(n) => Some(n.clone()),
            Tok::Punct(c) if c.is_ascii_digit() => Some(c.to_string()),
            _ => None,
        })
        .collect();
    let digits: String = mode
        .trim_start_matches("0o")
        .trim_start_matches('o')
        .chars()
        .filter(char::is_ascii_digit)
        .collect();
    (!digits.is_empty()).then_some(digits)
}

/// The string at `at`, joined with the strings the language concatenates
/// after it (`"a" + "b"`, `'a' . 'b'`, `"a" .. "b"`, awk's `"a" "b"`),
/// and the token index after it.
fn joined_string(lang: Lang, toks: &[Tok], at: usize) -> Option<(Vec<Piece>, usize)> {
    let mut out: Vec<Piece> = Vec::new();
    let mut k = at;
    let mut any = false;
    loop {
        match toks.get(k) {
            Some(Tok::Str(p)) => {
                out.extend(p.iter().cloned());
                any = true;
                k += 1;
            }
            Some(Tok::Home) => {
                out.push(Piece::Home);
                any = true;
                k += 1;
            }
            _ => break,
        }
        let joined = match (lang, toks.get(k), toks.get(k + 1)) {
            (
                Lang::Python | Lang::Js | Lang::Ruby | Lang::Julia | Lang::R,
                Some(Tok::Punct('+')),
                _,
            ) => 1,
            (Lang::Perl | Lang::Php, Some(Tok::Punct('.')), _) => 1,
            (Lang::Lua, Some(Tok::Punct('.')), Some(Tok::Punct('.'))) => 2,
            (Lang::Julia, Some(Tok::Punct('*')), _) => 1,
            (Lang::AppleScript, Some(Tok::Punct('&')), _) => 1,
            (Lang::Awk | Lang::Python, Some(Tok::Str(_)), _) => 0,
            _ => break,
        };
        k += joined;
    }
    any.then_some((out, k))
}

/// A bracketed list of strings at `at` (`["rm", "-rf", "/"]`, `('rm',
/// '-rf')`, `c("-rf", "/")`'s parenthesis): its items and the index after.
fn string_list(toks: &[Tok], at: usize) -> Option<(Vec<Vec<Piece>>, usize)> {
    let (open, close) = match toks.get(at)? {
        Tok::Punct('[') => ('[', ']'),
        Tok::Punct('(') => ('(', ')'),
        Tok::Name(n) if n == "c" || n == "qw" => return string_list(toks, at + 1),
        _ => return None,
    };
    let _ = open;
    let mut items = Vec::new();
    let mut k = at + 1;
    loop {
        match toks.get(k)? {
            Tok::Str(p) => items.push(p.clone()),
            Tok::Home => items.push(vec![Piece::Home]),
            Tok::Newline => {}
            Tok::Punct(c) if *c == close => return Some((items, k + 1)),
            _ => return None,
        }
        k += 1;
        match toks.get(k)? {
            Tok::Punct(',') => k += 1,
            Tok::Punct(c) if *c == close => return Some((items, k + 1)),
            Tok::Newline => k += 1,
            _ => return None,
        }
    }
}

/// Tcl's `exec WORD…` to the end of the command.
fn tcl_words(toks: &[Tok], from: usize) -> (Vec<Vec<Piece>>, usize) {
    let mut argv: Vec<Vec<Piece>> = Vec::new();
    let mut k = from;
    while let Some(t) = toks.get(k) {
        match t {
            Tok::Newline | Tok::Punct(';' | ']') => break,
            Tok::Str(p) => argv.push(p.clone()),
            Tok::Home => argv.push(vec![Piece::Home]),
            Tok::Name(n) => match argv.last_mut() {
                // `-rf` is `-` then `rf`: glue punctuation and names of one word.
                Some(last)
                    if matches!(toks.get(k - 1), Some(Tok::Punct('-' | '/' | '.' | '~'))) =>
                {
                    last.push(Piece::Text(n.clone()));
                }
                _ => argv.push(vec![Piece::Text(n.clone())]),
            },
            Tok::Punct(c) => match argv.last_mut() {
                Some(last)
                    if matches!(toks.get(k - 1), Some(Tok::Name(_) | Tok::Punct(_)))
                        && !matches!(toks.get(k.wrapping_sub(1)), Some(Tok::Newline))
                        && tcl_glued(toks, k) =>
                {
                    last.push(Piece::Text(c.to_string()));
                }
                _ => argv.push(vec![Piece::Text(c.to_string())]),
            },
            Tok::Run(_) => {}
        }
        k += 1;
    }
    (argv, k)
}

/// Whether the punctuation at `k` is glued to the word before it (the
/// tokenizer drops blanks, so this is a guess from the neighbours).
fn tcl_glued(toks: &[Tok], k: usize) -> bool {
    let _ = (toks, k);
    false
}

/// What an awk `print`/`printf` statement ending at token `at` (a `|`)
/// prints, when it is one string.
fn printed_before(toks: &[Tok], at: usize) -> Option<Vec<Piece>> {
    let start = (at.saturating_sub(64)..at)
        .rev()
        .find(|&k| matches!(toks.get(k), Some(Tok::Name(n)) if n == "print" || n == "printf"))?;
    if toks
        .get(start + 1..at)?
        .iter()
        .any(|t| matches!(t, Tok::Punct(';' | '{' | '}') | Tok::Newline))
    {
        return None;
    }
    joined_string(Lang::Awk, toks, start + 1).and_then(|(p, end)| (end == at).then_some(p))
}

/// A shell line that gives `text` to `command` on its standard input:
/// `printf '%s\n' 'TEXT' | COMMAND`, with `text` single-quoted (holes stay
/// holes).
fn piped(text: &[Piece], command: &[Piece]) -> Vec<Piece> {
    let mut out = vec![Piece::Text("printf '%s\\n' '".to_owned())];
    for p in text {
        match p {
            Piece::Text(t) => out.push(Piece::Text(t.replace('\'', "'\\''"))),
            other => out.push(other.clone()),
        }
    }
    out.push(Piece::Text("' | ".to_owned()));
    out.extend(command.iter().cloned());
    out
}

/// The string that ends right before token `at` (awk's `"cmd" | getline`).
fn string_before(toks: &[Tok], at: usize) -> Option<Vec<Piece>> {
    match toks.get(at.checked_sub(1)?)? {
        Tok::Str(p) => Some(p.clone()),
        _ => None,
    }
}

/// Whether a string may be a command line: a blank between words, or a
/// shell operator.
fn may_be_command(pieces: &[Piece]) -> bool {
    let text: String = pieces
        .iter()
        .map(|p| match p {
            Piece::Text(t) => t.as_str(),
            Piece::Hole | Piece::Home => " x ",
        })
        .collect();
    let trimmed = text.trim();
    trimmed.len() > 2 && trimmed.contains([' ', ';', '|', '&', '\n'])
}

/// A string that is base64 of printable text (a payload the code decodes
/// and runs): the text.
fn base64_text(pieces: &[Piece]) -> Option<String> {
    let [Piece::Text(t)] = pieces else {
        return None;
    };
    let t = t.trim();
    if t.len() < 8
        || t.len() > 8192
        || !t
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'+' | b'/' | b'=' | b'-' | b'_'))
    {
        return None;
    }
    let text = decode::decode(decode::Decoder::Base64, t)
        .or_else(|| decode::decode(decode::Decoder::Base64Url, t))?;
    (text.contains(' ')
        && text
            .chars()
            .all(|c| !c.is_control() || c == '\n' || c == '\t'))
    .then_some(text)
}

/// Options whose value (or the rest of their cluster) is code, per
/// language, and the letters that take a value of another kind (which end
/// a cluster: `perl -Mstrict -e …`, `python -W error -c …`).
fn code_options(lang: Lang, name: &str) -> (&'static [&'static str], &'static str) {
    match lang {
        Lang::Python => (&["-c"], "WXmQ"),
        Lang::Perl => (&["-e", "-E"], "IMmFCxil0d"),
        Lang::Ruby => (&["-e"], "IrECFKx"),
        Lang::Js => match name {
            "deno" => (&["eval"], ""),
            _ => (&["-e", "--eval", "-p", "--print"], "r"),
        },
        Lang::Php => (&["-r", "-R", "-B", "-E"], "cdfz"),
        Lang::Lua => (&["-e"], "l"),
        Lang::Tcl => (&["-c"], ""),
        Lang::Awk => (&["-e", "--source"], "fvFW"),
        Lang::R => (&["-e", "--expr"], ""),
        Lang::Julia => (&["-e", "-E", "--eval", "--print"], "JLp"),
        Lang::AppleScript => (&["-e"], "l"),
    }
}

/// The code an interpreter's arguments give (`-c CODE`, `-eCODE`,
/// `--eval=CODE`, `deno eval CODE`), and its first operand (the script
/// file, or awk's program); arguments after the script are the script's.
fn code_and_operand<'a>(
    lang: Lang,
    name: &str,
    args: &'a [super::value::Arg],
) -> (Vec<super::value::Value>, Option<&'a super::value::Arg>) {
    use super::value::Arg;
    let (options, valued) = code_options(lang, name);
    let mut codes: Vec<super::value::Value> = Vec::new();
    let mut operand: Option<&Arg> = None;
    let mut k = 0;
    while let Some(arg) = args.get(k) {
        k += 1;
        let Some(word) = arg.as_known() else {
            if operand.is_none() {
                operand = Some(arg);
            }
            continue;
        };
        if word == "--" {
            if operand.is_none() {
                operand = args.get(k);
            }
            break;
        }
        // `--eval CODE`, `--eval=CODE`, `deno eval CODE`.
        if let Some(option) = options
            .iter()
            .find(|o| o.len() > 2 && (word == **o || word.starts_with(&format!("{o}="))))
        {
            match word.strip_prefix(&format!("{option}=")) {
                Some(code) => codes.push(super::value::Value::known(code)),
                None => {
                    if let Some(Arg::Field(v)) = args.get(k) {
                        codes.push(v.clone());
                    }
                    k += 1;
                }
            }
            continue;
        }
        let Some(cluster) = word
            .strip_prefix('-')
            .filter(|c| !c.is_empty() && !c.starts_with('-'))
        else {
            if word.starts_with("--") {
                continue;
            }
            if operand.is_none() && codes.is_empty() {
                operand = Some(arg);
            }
            // Arguments after the script are the script's.
            if lang != Lang::Awk || operand.is_some() {
                break;
            }
            continue;
        };
        for (at, letter) in cluster.char_indices() {
            let flag = format!("-{letter}");
            if options.contains(&flag.as_str()) {
                let rest = cluster.get(at + letter.len_utf8()..).unwrap_or("");
                if rest.is_empty() {
                    if let Some(Arg::Field(v)) = args.get(k) {
                        codes.push(v.clone());
                    }
                    k += 1;
                } else {
                    codes.push(super::value::Value::known(rest));
                }
                break;
            }
            if valued.contains(letter) {
                // `-W error`, `-Mstrict`: the value is the rest or the
                // next word.
                if cluster
                    .get(at + letter.len_utf8()..)
                    .unwrap_or("")
                    .is_empty()
                {
                    k += 1;
                }
                break;
            }
        }
    }
    (codes, operand)
}

impl super::interp::Interp {
    /// What an interpreter's code runs: its code from `-c`/`-e`/… options,
    /// a script file written earlier in the command, or its standard input,
    /// read by [`readings`] and recorded as the commands it runs (and, as
    /// conservative readings, the strings it may run).
    pub(crate) fn interpreter_code(
        &mut self,
        index: Option<usize>,
        name: &str,
        args: &[super::value::Arg],
        assigns: &[(String, super::value::Value)],
        state: &super::state::State,
    ) {
        use super::value::Arg;
        let Some(lang) = lang_of(name) else { return };
        let (mut codes, operand) = code_and_operand(lang, name, args);
        if codes.is_empty() {
            // awk's program is its first operand.
            if lang == Lang::Awk {
                if let Some(Arg::Field(v)) = operand {
                    codes.push(v.clone());
                }
            } else {
                let script = match operand {
                    Some(a) if a.as_known() != Some("-") => self.file_text(a, state),
                    _ => state.stdin.text.clone(),
                };
                codes.extend(script);
            }
        }
        let home = assigns
            .iter()
            .rev()
            .find(|(n, _)| n == "HOME")
            .map(|(_, v)| v.clone())
            .unwrap_or_else(|| super::value::Value::known(&self.known.home));
        for code in codes.into_iter().take(4) {
            for text in code.candidates().to_vec() {
                let Some(text) = text.as_known() else {
                    continue;
                };
                if !self.meter.script_step() {
                    return;
                }
                let found = readings(lang, text);
                self.record_readings(index, &found.runs, &home, assigns, state, false);
                self.record_readings(index, &found.conservative, &home, assigns, state, true);
            }
        }
    }

    fn record_readings(
        &mut self,
        index: Option<usize>,
        readings: &[Reading],
        home: &super::value::Value,
        assigns: &[(String, super::value::Value)],
        state: &super::state::State,
        conservative: bool,
    ) {
        use super::value::{Arg, Sources, Text, Value};
        let value = |pieces: &[Piece]| -> Value {
            let mut t = Text::default();
            for p in pieces {
                match p {
                    Piece::Text(s) => t.push_str(s),
                    Piece::Hole => t.push(super::value::Seg::Any(Sources::none())),
                    Piece::Home => match home.as_known() {
                        Some(h) => t.push_str(h),
                        None => t.push(super::value::Seg::Any(Sources::none())),
                    },
                }
            }
            Value::text(t)
        };
        let saved = self.ctx.conservative;
        self.ctx.conservative |= conservative;
        for reading in readings {
            if !self.meter.step() {
                break;
            }
            match reading {
                Reading::Script(pieces) => {
                    let texts = self.value_scripts(&value(pieces));
                    self.run_scripts(texts, state.clone(), index, true);
                }
                Reading::Argv(words) => {
                    let argv: Vec<Arg> = words.iter().map(|w| Arg::Field(value(w))).collect();
                    self.spawn(index, argv, assigns.to_vec(), None, state.clone());
                }
            }
        }
        self.ctx.conservative = saved;
    }
}

/// Calls that start a process.
const PROCESS_STARTERS: &[&str] = &[
    "fork",
    "spawn",
    "spawnSync",
    "Popen",
    "system",
    "exec",
    "execSync",
    "popen",
    "execute",
    "run",
    "call",
    "pcntl_fork",
    "proc_open",
];

/// The process starters of [`PROCESS_STARTERS`] that wait for the process
/// to end.
const WAITING_STARTERS: &[&str] = &["system", "execSync", "spawnSync", "run", "call", "execute"];

/// Whether `code` (run by the interpreter `name`) starts processes in a
/// loop nothing bounds — `while True: os.fork()`, `fork while 1`, `fork
/// for 1..1e9`, `[os.fork() for _ in iter(int, 1)]`, `loop { fork }`,
/// `while(1) spawn(…)`, `setInterval(() => spawn(…))`. Strings, patterns
/// and comments are not read (`perl -ne 'print if /fork/'` forks nothing).
pub(crate) fn forks_without_bound(name: &str, code: &str) -> bool {
    let Some(lang) = lang_of(name) else {
        return false;
    };
    let toks = tokenize(lang, code);
    let names: Vec<&str> = toks
        .iter()
        .filter_map(|t| match t {
            Tok::Name(n) => Some(n.as_str()),
            _ => None,
        })
        .collect();
    // A call that waits for its process (`system`, `run`, `execSync`)
    // spawns without bound only when its command line puts the process in
    // the background (`system("sleep 9 &")`); the others never wait.
    let background = toks.iter().any(|t| match t {
        Tok::Str(pieces) | Tok::Run(pieces) => pieces.iter().any(|p| match p {
            Piece::Text(text) => {
                let text = text.trim_end();
                text.ends_with('&') && !text.ends_with("&&") || text.contains("& ")
            }
            Piece::Hole | Piece::Home => false,
        }),
        Tok::Name(_) | Tok::Home | Tok::Punct(_) | Tok::Newline => false,
    });
    if !names
        .iter()
        .any(|n| PROCESS_STARTERS.contains(n) && (background || !WAITING_STARTERS.contains(n)))
    {
        return false;
    }
    let spelled: String = toks
        .iter()
        .map(|t| match t {
            Tok::Name(n) => format!(" {n} "),
            Tok::Punct(c) => c.to_string(),
            Tok::Newline => ";".to_owned(),
            Tok::Str(_) | Tok::Run(_) | Tok::Home => " s ".to_owned(),
        })
        .collect::<String>()
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ");
    const ENDLESS: &[&str] = &[
        "while True",
        "while 1",
        "while ( 1 )",
        "while (1)",
        "while(1)",
        "while ( true )",
        "while (true)",
        "while true",
        "for (;;)",
        "for ( ; ; )",
        "for(;;)",
        "iter ( int , 1 )",
        "iter(int,1)",
        "count ( )",
        "until false",
        "until 0",
        "setInterval",
        "1 .. 1e",
        "1..1e",
        "1 .. 9e",
        "1 .. Inf",
        "loop {",
        "loop do",
        "while :",
    ];
    let compact: String = spelled.chars().filter(|c| !c.is_whitespace()).collect();
    ENDLESS.iter().any(|e| {
        let e_compact: String = e.chars().filter(|c| !c.is_whitespace()).collect();
        compact.contains(&e_compact)
    }) || names.windows(2).any(|w| {
        // Perl's statement modifiers: `fork while 1`, `1 while fork`.
        matches!(w, ["fork", "while"] | ["while", "fork"])
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scripts(lang: Lang, code: &str) -> Vec<String> {
        readings(lang, code)
            .runs
            .into_iter()
            .map(|r| match r {
                Reading::Script(p) => render(&p),
                Reading::Argv(a) => a.iter().map(|w| render(w)).collect::<Vec<_>>().join(" "),
            })
            .collect()
    }

    fn render(p: &[Piece]) -> String {
        p.iter()
            .map(|x| match x {
                Piece::Text(t) => t.clone(),
                Piece::Hole => "?".to_owned(),
                Piece::Home => "~".to_owned(),
            })
            .collect()
    }

    #[test]
    fn python_strings_in_every_form() {
        assert_eq!(
            scripts(Lang::Python, r#"import os; os.system("""rm -rf ~""")"#),
            ["rm -rf ~"]
        );
        assert_eq!(
            scripts(Lang::Python, r#"__import__('os').system('rm -rf /')"#),
            ["rm -rf /"]
        );
        assert_eq!(
            scripts(Lang::Python, r#"import os; os.system("\x72m -rf /")"#),
            ["rm -rf /"]
        );
        assert_eq!(
            scripts(
                Lang::Python,
                r#"import subprocess; subprocess.call(['rm','-rf','/'])"#
            ),
            ["rm -rf /"]
        );
        assert_eq!(
            scripts(
                Lang::Python,
                r#"import os; os.execvp("rm", ["rm", "-rf", "/"])"#
            ),
            ["rm -rf /"]
        );
        assert_eq!(
            scripts(
                Lang::Python,
                "import shutil,os; shutil.rmtree(os.path.expanduser('~'))"
            ),
            ["rm -rf ~"]
        );
        assert_eq!(
            scripts(Lang::Python, r#"import os; os.system("rm " + "-rf /")"#),
            ["rm -rf /"]
        );
        assert_eq!(
            scripts(
                Lang::Python,
                r#"import os; os.system(f"rm -rf {os.environ['HOME']}")"#
            ),
            ["rm -rf ~"]
        );
    }

    #[test]
    fn perl_quote_like_forms() {
        assert_eq!(scripts(Lang::Perl, "system q{rm -rf ~}"), ["rm -rf ~"]);
        assert_eq!(
            scripts(Lang::Perl, r#"exec qq(rm -rf $ENV{HOME})"#),
            ["rm -rf ~"]
        );
        assert_eq!(scripts(Lang::Perl, "system(qw(rm -rf /))"), ["rm -rf /"]);
        assert_eq!(
            scripts(Lang::Perl, r#"system("rm", "-rf", $ENV{HOME})"#),
            ["rm -rf ~"]
        );
        assert_eq!(scripts(Lang::Perl, "`rm -rf ~`"), ["rm -rf ~"]);
        assert!(scripts(Lang::Perl, "print if /fork/").is_empty());
        assert_eq!(
            scripts(Lang::Perl, r#"use File::Path; remove_tree("/")"#),
            ["rm -rf /"]
        );
    }

    #[test]
    fn ruby_js_php_lua_tcl_awk() {
        assert_eq!(scripts(Lang::Ruby, "system %q{rm -rf ~}"), ["rm -rf ~"]);
        assert_eq!(scripts(Lang::Ruby, "%x(rm -rf ~)"), ["rm -rf ~"]);
        assert_eq!(
            scripts(Lang::Ruby, "require 'fileutils'; FileUtils.rm_rf(Dir.home)"),
            ["rm -rf ~"]
        );
        assert_eq!(scripts(Lang::Ruby, "exec('rm', '-rf', '/')"), ["rm -rf /"]);
        assert_eq!(
            scripts(
                Lang::Js,
                "require('child_process').execSync(`rm -rf ${require('os').homedir()}`)"
            ),
            ["rm -rf ~"]
        );
        assert_eq!(
            scripts(
                Lang::Js,
                "require('child_process').spawnSync('rm', ['-rf', '/'])"
            ),
            ["rm -rf /"]
        );
        assert_eq!(
            scripts(
                Lang::Js,
                "require('fs').rmSync(require('os').homedir(), {recursive: true})"
            ),
            ["rm -rf ~"]
        );
        assert_eq!(scripts(Lang::Php, "shell_exec('rm -rf /');"), ["rm -rf /"]);
        assert_eq!(scripts(Lang::Php, "echo `rm -rf /`;"), ["rm -rf /"]);
        assert_eq!(scripts(Lang::Lua, "os.execute([[rm -rf /]])"), ["rm -rf /"]);
        assert_eq!(
            scripts(Lang::Lua, "os.execute('rm ' .. '-rf /')"),
            ["rm -rf /"]
        );
        assert_eq!(scripts(Lang::Tcl, "exec rm -rf /"), ["rm -rf /"]);
        assert_eq!(
            scripts(Lang::Awk, r#"BEGIN { system("rm -rf /") }"#),
            ["rm -rf /"]
        );
        assert_eq!(
            scripts(Lang::Awk, r#"BEGIN { print "rm -rf /" | "sh" }"#),
            ["printf '%s\\n' 'rm -rf /' | sh"]
        );
        assert_eq!(
            scripts(Lang::Awk, r#"BEGIN { system("rm" " -rf /") }"#),
            ["rm -rf /"]
        );
    }

    #[test]
    fn strings_that_may_be_commands_are_conservative() {
        let r = readings(Lang::Python, r#"import os; c = "rm -rf /"; os.system(c)"#);
        assert!(r.runs.is_empty());
        assert_eq!(
            r.conservative,
            vec![Reading::Script(vec![Piece::Text("rm -rf /".to_owned())])]
        );
        // No way to run anything: strings are only data.
        assert!(
            readings(Lang::Python, r#"print("rm -rf /")"#)
                .conservative
                .is_empty()
        );
        // A base64 payload the code decodes.
        let r = readings(
            Lang::Python,
            r#"import os,base64; os.system(base64.b64decode("cm0gLXJmIH4=").decode())"#,
        );
        assert!(
            r.conservative
                .contains(&Reading::Script(vec![Piece::Text("rm -rf ~".to_owned())])),
            "{r:?}"
        );
    }

    #[test]
    fn hostile_code_is_bounded() {
        let deep = "q{".repeat(20_000);
        let _ = readings(Lang::Perl, &deep);
        let quotes = "\"".repeat(50_000);
        let _ = readings(Lang::Python, &quotes);
        let brackets = "[".repeat(50_000);
        let _ = readings(Lang::Lua, &brackets);
        let _ = readings(Lang::Ruby, &"%q(".repeat(20_000));
    }
}
