//! Line continuations: a backslash before a newline, which bash's reader
//! removes before it splits words. `r\⏎m -rf ~` runs `rm`, `$HO\⏎ME` is
//! `$HOME`, and a here-document delimiter `EO\⏎F` ends an unquoted body.
//!
//! bash removes the pair wherever its reader is asked to
//! (`shell_getc(remove_quoted_newline)`), which is everywhere but inside
//! single quotes and `$'…'`, in a comment, in the body of a here-document
//! whose delimiter is quoted, and right after another backslash (an
//! escaped backslash is a literal one). The grammar the analysis parses
//! with reads a continuation as a blank between tokens instead, so the
//! source is joined first, with the quoting contexts tracked here: double
//! quotes, `$(…)`, backquotes and `${…}` nest; single quotes inside `${…}`
//! within double quotes are literal, as in bash.
//!
//! The scan is one pass over the bytes (each byte is looked at a bounded
//! number of times) and the context stack grows by at most one entry per
//! byte, so no budget beyond the request's size is needed.

use std::borrow::Cow;

/// The source with its line continuations removed where bash removes them.
pub(crate) fn join(source: &str) -> Cow<'_, str> {
    if !source.contains("\\\n") {
        return Cow::Borrowed(source);
    }
    let mut scan = Scan {
        src: source.as_bytes(),
        at: 0,
        out: Vec::with_capacity(source.len()),
        stack: vec![Ctx::Code { parens: 0 }],
        pending: Vec::new(),
    };
    scan.run();
    // Only ASCII pairs were dropped between whole characters, so the
    // result is UTF-8; were it not, the joined text (lossily) is still
    // what bash reads, never the unjoined one.
    Cow::Owned(String::from_utf8_lossy(&scan.out).into_owned())
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Ctx {
    /// Commands: the top level, `$(…)` (with its open parentheses).
    Code { parens: u32 },
    /// Inside backquotes.
    Backquote,
    /// Inside double quotes.
    Double,
    /// Inside `${…}`, with its open braces; `quoted` when it stands inside
    /// double quotes (single quotes are then literal).
    Param { braces: u32, quoted: bool },
    /// Inside `$((…))` or `((…))`, with its open parentheses: `<<` is a
    /// shift there, not a here-document.
    Arith { parens: u32 },
}

/// A here-document whose body starts after the current line.
struct Pending {
    delimiter: Vec<u8>,
    strip_tabs: bool,
    quoted: bool,
}

struct Scan<'a> {
    src: &'a [u8],
    at: usize,
    out: Vec<u8>,
    stack: Vec<Ctx>,
    pending: Vec<Pending>,
}

impl Scan<'_> {
    fn byte(&self, at: usize) -> Option<u8> {
        self.src.get(at).copied()
    }

    fn copy(&mut self, n: usize) {
        let end = (self.at + n).min(self.src.len());
        if let Some(bytes) = self.src.get(self.at..end) {
            self.out.extend_from_slice(bytes);
        }
        self.at = end;
    }

    fn top(&self) -> Ctx {
        self.stack
            .last()
            .copied()
            .unwrap_or(Ctx::Code { parens: 0 })
    }

    fn set_top(&mut self, ctx: Ctx) {
        if let Some(top) = self.stack.last_mut() {
            *top = ctx;
        }
    }

    fn run(&mut self) {
        while let Some(b) = self.byte(self.at) {
            let next = self.byte(self.at + 1);
            if b == b'\\' {
                if next == Some(b'\n') {
                    self.at += 2;
                } else {
                    // The escaped byte is literal (a quote, a backslash).
                    self.copy(2);
                }
                continue;
            }
            match self.top() {
                Ctx::Code { parens } => self.code(b, next, parens),
                Ctx::Backquote => {
                    if b == b'`' {
                        self.stack.pop();
                        self.copy(1);
                    } else {
                        self.unquoted(b, next);
                    }
                }
                Ctx::Double => self.double(b, next),
                Ctx::Param { braces, quoted } => self.param(b, next, braces, quoted),
                Ctx::Arith { parens } => self.arith(b, next, parens),
            }
        }
    }

    /// Bytes in command position: comments, here-documents and parentheses
    /// count here.
    fn code(&mut self, b: u8, next: Option<u8>, parens: u32) {
        match b {
            b'#' if self.word_start() => {
                while self.byte(self.at).is_some_and(|c| c != b'\n') {
                    self.copy(1);
                }
            }
            b'(' if next == Some(b'(') && self.word_start() => {
                self.stack.push(Ctx::Arith { parens: 0 });
                self.copy(2);
            }
            b'(' => {
                self.set_top(Ctx::Code { parens: parens + 1 });
                self.copy(1);
            }
            b')' => {
                if parens == 0 && self.stack.len() > 1 {
                    self.stack.pop();
                } else {
                    self.set_top(Ctx::Code {
                        parens: parens.saturating_sub(1),
                    });
                }
                self.copy(1);
            }
            // A here-string (`<<<`) is no here-document.
            b'<' if next == Some(b'<') && self.byte(self.at + 2) == Some(b'<') => self.copy(3),
            b'<' if next == Some(b'<') => self.heredoc_operator(),
            b'\n' => {
                self.copy(1);
                self.bodies();
            }
            _ => self.unquoted(b, next),
        }
    }

    /// Quotes and expansions where bytes are not quoted.
    fn unquoted(&mut self, b: u8, next: Option<u8>) {
        match (b, next) {
            (b'\'', _) => self.single(1),
            (b'$', Some(b'\'')) => self.ansi_c(),
            (b'"', _) => {
                self.stack.push(Ctx::Double);
                self.copy(1);
            }
            _ => self.expansion(b, next, false),
        }
    }

    /// `$(`, `${` and backquotes, which open a context wherever they stand.
    fn expansion(&mut self, b: u8, next: Option<u8>, quoted: bool) {
        match (b, next) {
            (b'$', Some(b'(')) if self.byte(self.at + 2) == Some(b'(') => {
                self.stack.push(Ctx::Arith { parens: 0 });
                self.copy(3);
            }
            (b'$', Some(b'(')) => {
                self.stack.push(Ctx::Code { parens: 0 });
                self.copy(2);
            }
            (b'$', Some(b'{')) => {
                self.stack.push(Ctx::Param { braces: 0, quoted });
                self.copy(2);
            }
            (b'`', _) => {
                self.stack.push(Ctx::Backquote);
                self.copy(1);
            }
            _ => self.copy(1),
        }
    }

    fn double(&mut self, b: u8, next: Option<u8>) {
        if b == b'"' {
            self.stack.pop();
            self.copy(1);
        } else {
            self.expansion(b, next, true);
        }
    }

    fn param(&mut self, b: u8, next: Option<u8>, braces: u32, quoted: bool) {
        match b {
            b'{' => {
                self.set_top(Ctx::Param {
                    braces: braces + 1,
                    quoted,
                });
                self.copy(1);
            }
            b'}' => {
                if braces == 0 {
                    self.stack.pop();
                } else {
                    self.set_top(Ctx::Param {
                        braces: braces - 1,
                        quoted,
                    });
                }
                self.copy(1);
            }
            b'"' => {
                self.stack.push(Ctx::Double);
                self.copy(1);
            }
            b'\'' if quoted => self.copy(1),
            _ if quoted => self.expansion(b, next, true),
            _ => self.unquoted(b, next),
        }
    }

    fn arith(&mut self, b: u8, next: Option<u8>, parens: u32) {
        match b {
            b'(' => {
                self.set_top(Ctx::Arith { parens: parens + 1 });
                self.copy(1);
            }
            b')' if parens == 0 => {
                self.stack.pop();
                self.copy(if next == Some(b')') { 2 } else { 1 });
            }
            b')' => {
                self.set_top(Ctx::Arith { parens: parens - 1 });
                self.copy(1);
            }
            _ => self.expansion(b, next, true),
        }
    }

    /// A `#` that starts a word starts a comment.
    fn word_start(&self) -> bool {
        self.out.last().is_none_or(|c| {
            c.is_ascii_whitespace() || matches!(c, b';' | b'&' | b'|' | b'(' | b')' | b'<' | b'>')
        })
    }

    /// Copies a single-quoted string from its opening quote (`skip` bytes
    /// before the text) to its closing one, as it is.
    fn single(&mut self, skip: usize) {
        self.copy(skip);
        while let Some(c) = self.byte(self.at) {
            self.copy(1);
            if c == b'\'' {
                break;
            }
        }
    }

    /// Copies `$'…'`, where a backslash escapes the next byte.
    fn ansi_c(&mut self) {
        self.copy(2);
        while let Some(c) = self.byte(self.at) {
            match c {
                b'\\' => self.copy(2),
                b'\'' => {
                    self.copy(1);
                    break;
                }
                _ => self.copy(1),
            }
        }
    }

    /// `<<` or `<<-` and its delimiter word; the body follows the line.
    fn heredoc_operator(&mut self) {
        self.copy(2);
        let strip_tabs = self.byte(self.at) == Some(b'-');
        if strip_tabs {
            self.copy(1);
        }
        while matches!(self.byte(self.at), Some(b' ' | b'\t')) {
            self.copy(1);
        }
        let mut delimiter = Vec::new();
        let mut quoted = false;
        while let Some(c) = self.byte(self.at) {
            match c {
                b'\\' if self.byte(self.at + 1) == Some(b'\n') => {
                    self.at += 2;
                }
                b'\\' => {
                    quoted = true;
                    if let Some(d) = self.byte(self.at + 1) {
                        delimiter.push(d);
                    }
                    self.copy(2);
                }
                b'\'' | b'"' => {
                    quoted = true;
                    self.copy(1);
                    while let Some(d) = self.byte(self.at) {
                        self.copy(1);
                        if d == c {
                            break;
                        }
                        delimiter.push(d);
                    }
                }
                c if c.is_ascii_whitespace() || b";&|()<>".contains(&c) => break,
                c => {
                    delimiter.push(c);
                    self.copy(1);
                }
            }
        }
        self.pending.push(Pending {
            delimiter,
            strip_tabs,
            quoted,
        });
    }

    /// The bodies of the here-documents of the line just ended, in order.
    fn bodies(&mut self) {
        for doc in std::mem::take(&mut self.pending) {
            while self.at < self.src.len() {
                let mut line = Vec::new();
                while let Some(c) = self.byte(self.at) {
                    match c {
                        b'\\' if !doc.quoted && self.byte(self.at + 1) == Some(b'\n') => {
                            self.at += 2;
                        }
                        b'\\' if !doc.quoted => {
                            line.extend(self.src.get(self.at..self.at + 2).unwrap_or(&[]));
                            self.at = (self.at + 2).min(self.src.len());
                        }
                        b'\n' => {
                            self.at += 1;
                            break;
                        }
                        c => {
                            line.push(c);
                            self.at += 1;
                        }
                    }
                }
                let body = if doc.strip_tabs {
                    let tabs = line.iter().take_while(|c| **c == b'\t').count();
                    line.get(tabs..).unwrap_or(&[])
                } else {
                    line.as_slice()
                };
                let end = body == doc.delimiter.as_slice();
                self.out.extend_from_slice(&line);
                self.out.push(b'\n');
                if end {
                    break;
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::join;

    #[test]
    fn joins_where_bash_does() {
        let cases = [
            ("r\\\nm -rf ~", "rm -rf ~"),
            ("rm -rf $HO\\\nME", "rm -rf $HOME"),
            ("echo \"a\\\nb\"", "echo \"ab\""),
            ("echo $(r\\\nm x)", "echo $(rm x)"),
            ("echo \"${x:-'a\\\nb'}\"", "echo \"${x:-'ab'}\""),
            ("echo a\\\\\nb", "echo a\\\\\nb"),
        ];
        for (source, joined) in cases {
            assert_eq!(join(source), joined, "{source:?}");
        }
    }

    #[test]
    fn keeps_where_bash_does() {
        let cases = [
            "echo 'a\\\nb'",
            "echo $'a\\\nb'",
            "echo ${x:-'a\\\nb'}",
            "echo a # c \\\necho b",
            "cat <<'E'\nx\\\nE\n",
            "echo $((1<<2)) 'a\\\nb'",
            "cat <<<'x'\n'a\\\nb'",
        ];
        for source in cases {
            assert_eq!(join(source), source, "{source:?}");
        }
    }

    #[test]
    fn here_document_bodies() {
        assert_eq!(
            join("cat <<E\nx\\\\\ny\\\nz\nE\\\n\necho"),
            "cat <<E\nx\\\\\nyz\nE\necho"
        );
        assert_eq!(join("cat <<E\nEO\\\nF\nE\nr\\\nm"), "cat <<E\nEOF\nE\nrm");
    }
}
