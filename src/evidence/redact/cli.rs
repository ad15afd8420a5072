//! Command-line options that carry secrets: which options of which
//! commands, read the way `getopt_long` reads them.
//!
//! `curl -u user:pass`, `docker login -p X`, `redis-cli -a X`,
//! `mysql -pSECRET`, `sshpass -p X`, `openssl … -pass pass:X`: the same
//! letter means a password for one command and a port, a user or a flag for
//! another (`docker run -u 1000:1000`, `ssh -p 2222`), so the knowledge is
//! per command, and it is the shell analysis's: each command's entry in
//! [`crate::shell::spec`] lists its options (so clusters like `-su
//! user:pass` split right and `curl -O -u` is read as two options) and
//! marks the secret ones ([`Secrets`]); [`crate::shell::options`] parses
//! them. Any command's long option whose name says secret (`--db-password
//! X`, `--api-key=X`) is read the same way.
//!
//! Words come from two places: the shell layer's parse of a bash command
//! ([`crate::shell::analyze`], through wrappers, `bash -c` and `eval`), and
//! a bounded word lexer over any text for commands quoted in prose,
//! transcripts and tool output.

use crate::shell::options::{self, Item, OptName, OptValue, OptWord};
use crate::shell::spec::{self, CommandSpec, SPECS, Secret, SecretOperands, Secrets};

use super::argv::{ArgSecret, Part, push_part};
use super::keys::{KeyClass, classify_key};
use super::kind::SecretKind;
use super::kind::Span;
use super::values::{self, Syntax};

/// How the table's [`Secret`] reads: the part and the kind.
fn part_of(secret: Secret) -> (Part, SecretKind) {
    match secret {
        Secret::Password => (Part::Whole, SecretKind::CliPassword),
        Secret::Token => (Part::Whole, SecretKind::CliSecret),
        Secret::AfterColon => (Part::AfterColon, SecretKind::CliPassword),
        Secret::AfterPercent => (Part::AfterPercent, SecretKind::CliPassword),
        Secret::OpensslPass => (Part::OpensslPass, SecretKind::CliPassword),
    }
}

/// Descriptor words that make a secret-named long option something else
/// (`--password-stdin`, `--token-file`, `--ask-pass`, `--no-password`).
fn generic_long(name: &str) -> bool {
    !name.starts_with("no-") && !name.starts_with("ask") && classify_key(name) == KeyClass::Secret
}

/// The kind a generic long option's value gets.
fn generic_kind(name: &str) -> SecretKind {
    let lower = name.to_ascii_lowercase();
    if lower.contains("pass") || lower.contains("pwd") {
        SecretKind::CliPassword
    } else {
        SecretKind::CliSecret
    }
}

/// A word for the option parser: its text when it is UTF-8.
struct Word<'a>(Option<&'a str>);

impl OptWord for Word<'_> {
    fn known(&self) -> Option<&str> {
        self.0
    }
}

/// The table's entry for `argv[0]` (by basename), when its words can carry
/// a secret.
fn spec_for(argv: &[&[u8]]) -> Option<&'static CommandSpec> {
    let name = argv.first()?;
    let base = name.rsplit(|b| *b == b'/').next().unwrap_or(name);
    let spec = spec::lookup(std::str::from_utf8(base).ok()?)?;
    spec.secrets.any().then_some(spec)
}

/// Whether `name` (an option as parsed) is one of `names` as the table
/// writes them: one letter for a short option, else a long one.
fn named(name: OptName, names: &[&str]) -> bool {
    names.iter().any(|n| match name {
        OptName::Short(c) => {
            let mut chars = n.chars();
            chars.next() == Some(c) && chars.next().is_none()
        }
        OptName::Long(l) => *n == l,
    })
}

/// Whether the secret options apply: the table's subcommand words, when it
/// names some, are among the first three operands (`docker login`).
fn secrets_apply(secrets: &Secrets, argv: &[&[u8]], items: &[Item]) -> bool {
    secrets.after.is_empty()
        || items
            .iter()
            .filter_map(|item| match item {
                Item::Operand { at } => argv.get(at + 1),
                _ => None,
            })
            .take(3)
            .any(|w| secrets.after.iter().any(|sub| sub.as_bytes() == *w))
}

/// Reads `argv` (name first) with the table's option spec and returns the
/// secret arguments.
pub fn secrets_in(argv: &[&[u8]]) -> Vec<ArgSecret> {
    let mut out = Vec::new();
    let spec = spec_for(argv);
    let args = argv.get(1..).unwrap_or_default();
    // Words an option of the table took as its value (their index in
    // `argv`, ascending): never read again as options.
    let mut values_at = Vec::new();
    if let Some(spec) = spec {
        let words: Vec<Word<'_>> = args
            .iter()
            .map(|w| Word(std::str::from_utf8(w).ok()))
            .collect();
        let items = options::parse(&spec.options, &words);
        let listed = secrets_apply(&spec.secrets, argv, &items);
        for item in &items {
            match *item {
                Item::Opt {
                    name,
                    value: Some(value),
                    ..
                } => {
                    let (word, from) = match value {
                        OptValue::Attached { at, offset } => (at + 1, offset),
                        OptValue::Next { at } => {
                            values_at.push(at + 1);
                            (at + 1, 0)
                        }
                    };
                    let secret = spec
                        .secrets
                        .options
                        .iter()
                        .find(|(names, _)| listed && named(name, names));
                    match (secret, name) {
                        (Some((_, secret)), _) => {
                            let (part, kind) = part_of(*secret);
                            push_part(argv, word, from, part, kind, &mut out);
                        }
                        (None, OptName::Long(l)) if generic_long(l) => {
                            push_part(argv, word, from, Part::Whole, generic_kind(l), &mut out);
                        }
                        (None, _) => {}
                    }
                }
                Item::Opt { .. }
                | Item::End { .. }
                | Item::Operand { .. }
                | Item::Unknown { .. }
                | Item::Invalid { .. } => {}
            }
        }
    }
    generic_options(argv, &values_at, spec, &mut out);
    if let Some(spec) = spec {
        special_positional(spec.secrets.operands, argv, &mut out);
    }
    printf_arguments(argv, &mut out);
    super::stores::stored_in(argv, &mut out);
    out.sort_by_key(|f| (f.word, f.from));
    out.dedup();
    out
}

/// Any long option whose name says secret and that the table does not
/// list (for this command, or at all): `--db-password X`, `--api-key=X`.
/// Its value is glued, or the next word when that does not look like
/// another option.
fn generic_options(
    argv: &[&[u8]],
    values_at: &[usize],
    spec: Option<&CommandSpec>,
    out: &mut Vec<ArgSecret>,
) {
    let listed = |name: &str| spec.is_some_and(|s| s.options.long.iter().any(|l| l.name == name));
    let mut i = 1;
    while let Some(word) = argv.get(i) {
        if *word == b"--" {
            break;
        }
        if values_at.binary_search(&i).is_ok() {
            i += 1;
            continue;
        }
        let Some(body) = word.strip_prefix(b"--") else {
            i += 1;
            continue;
        };
        let (name, glued) = match body.iter().position(|b| *b == b'=') {
            Some(eq) => (body.get(..eq).unwrap_or_default(), Some(2 + eq + 1)),
            None => (body, None),
        };
        let name = String::from_utf8_lossy(name);
        if listed(&name) || !generic_long(&name) {
            i += 1;
            continue;
        }
        let kind = generic_kind(&name);
        match glued {
            Some(from) => {
                push_part(argv, i, from, Part::Whole, kind, out);
                i += 1;
            }
            None => match argv.get(i + 1) {
                Some(next) if !next.starts_with(b"-") || next.len() == 1 => {
                    push_part(argv, i + 1, 0, Part::Whole, kind, out);
                    i += 2;
                }
                Some(_) | None => i += 1,
            },
        }
    }
}

/// Secrets by position: `htpasswd -b FILE USER PASSWORD`, `xfreerdp
/// /p:PASSWORD`, `aws configure set NAME VALUE`.
fn special_positional(operands: SecretOperands, argv: &[&[u8]], out: &mut Vec<ArgSecret>) {
    match operands {
        SecretOperands::None => {}
        SecretOperands::HtpasswdBatch => htpasswd_batch(argv, out),
        SecretOperands::SlashP => freerdp_password(argv, out),
        SecretOperands::ConfigSet => config_set(argv, out),
    }
}

/// `printf 'password=%s\n' VALUE`: an argument that a conversion puts
/// after a secret-named `NAME=` or `NAME: ` in the format is that name's
/// value, as it would be written in the assignment the format prints.
fn printf_arguments(argv: &[&[u8]], out: &mut Vec<ArgSecret>) {
    let Some(name) = argv.first() else { return };
    if name.rsplit(|b| *b == b'/').next() != Some(b"printf".as_slice()) {
        return;
    }
    // `printf -v VAR FORMAT …` stores the text instead of printing it.
    let mut at = 1;
    if argv.get(at).is_some_and(|w| *w == b"-v") {
        at += 2;
    }
    if argv.get(at).is_some_and(|w| *w == b"--") {
        at += 1;
    }
    let Some(format) = argv.get(at) else { return };
    let mut argument = at + 1;
    let mut i = 0;
    // The format is reused while arguments remain; once is enough to name
    // the secret ones, and a format without conversions consumes none.
    while let Some(&b) = format.get(i) {
        if b != b'%' {
            i += 1;
            continue;
        }
        if format.get(i + 1) == Some(&b'%') {
            i += 2;
            continue;
        }
        // Flags, width and precision, then the conversion letter.
        let mut j = i + 1;
        while format
            .get(j)
            .is_some_and(|c| matches!(c, b'-' | b'+' | b' ' | b'#' | b'0'..=b'9' | b'.'))
        {
            j += 1;
        }
        if format.get(j).is_some_and(u8::is_ascii_alphabetic) {
            let before = format.get(..i).unwrap_or_default();
            if secret_name_before(before) {
                push_part(
                    argv,
                    argument,
                    0,
                    Part::Whole,
                    SecretKind::GenericAssignment,
                    out,
                );
            }
            argument += 1;
        }
        i = j + 1;
    }
}

/// Whether `text` ends with `NAME=` or `NAME: ` whose NAME says secret.
fn secret_name_before(text: &[u8]) -> bool {
    let text = text.strip_suffix(b" ").unwrap_or(text);
    let Some(head) = text.strip_suffix(b"=").or_else(|| text.strip_suffix(b":")) else {
        return false;
    };
    let start = head
        .iter()
        .rposition(|b| !(b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.')))
        .map_or(0, |p| p + 1);
    let name = String::from_utf8_lossy(head.get(start..).unwrap_or_default());
    !name.is_empty() && classify_key(&name) == KeyClass::Secret
}

/// `… config[ure] [set] NAME VALUE` whose NAME says secret.
fn config_set(argv: &[&[u8]], out: &mut Vec<ArgSecret>) {
    let words: Vec<usize> = (1..argv.len())
        .filter(|&i| argv.get(i).is_some_and(|w| !w.starts_with(b"-")))
        .collect();
    let Some(at) = words
        .iter()
        .position(|&i| matches!(argv.get(i), Some(w) if *w == b"config" || *w == b"configure"))
    else {
        return;
    };
    let mut rest = words.get(at + 1..).unwrap_or_default();
    if rest
        .first()
        .and_then(|&i| argv.get(i))
        .is_some_and(|w| *w == b"set")
    {
        rest = rest.get(1..).unwrap_or_default();
    }
    let Some(&first) = rest.first() else { return };
    let Some(word) = argv.get(first) else { return };
    // `npm config set NAME=VALUE` is one word.
    if let Some(eq) = word.iter().position(|b| *b == b'=') {
        if config_name_is_secret(word.get(..eq).unwrap_or_default()) {
            push_part(argv, first, eq + 1, Part::Whole, SecretKind::CliSecret, out);
        }
        return;
    }
    if let Some(&value) = rest.get(1)
        && config_name_is_secret(word)
    {
        push_part(argv, value, 0, Part::Whole, SecretKind::CliSecret, out);
    }
}

/// Whether a configuration key names a secret: by its words, or npm's
/// `_auth` (base64 of `user:password`), scoped (`//registry/:_auth`) or not.
fn config_name_is_secret(name: &[u8]) -> bool {
    let name = String::from_utf8_lossy(name);
    let last = name.rsplit(':').next().unwrap_or(&name);
    classify_key(&name) == KeyClass::Secret || last == "_auth" || last == "_password"
}

fn htpasswd_batch(argv: &[&[u8]], out: &mut Vec<ArgSecret>) {
    let flags: Vec<&&[u8]> = argv
        .iter()
        .skip(1)
        .filter(|w| w.starts_with(b"-"))
        .collect();
    if !flags.iter().any(|f| f.contains(&b'b')) {
        return;
    }
    let positional: Vec<usize> = (1..argv.len())
        .filter(|&i| argv.get(i).is_some_and(|w| !w.starts_with(b"-")))
        .collect();
    // With -n there is no file: USER PASSWORD.
    let index = if flags.iter().any(|f| f.contains(&b'n')) {
        1
    } else {
        2
    };
    if let Some(&word) = positional.get(index) {
        push_part(argv, word, 0, Part::Whole, SecretKind::CliPassword, out);
    }
}

fn freerdp_password(argv: &[&[u8]], out: &mut Vec<ArgSecret>) {
    for (i, word) in argv.iter().enumerate().skip(1) {
        if word.starts_with(b"/p:") {
            push_part(argv, i, 3, Part::Whole, SecretKind::CliPassword, out);
        }
    }
}

// ---------------------------------------------------------------------------
// Commands quoted in text
// ---------------------------------------------------------------------------

/// Most words read after a command name found in text.
pub const MAX_WORDS: usize = 128;

/// Every name of a command whose words the table says can carry a secret,
/// for the keyword prefilter.
pub fn command_names() -> impl Iterator<Item = &'static str> {
    SPECS
        .iter()
        .filter(|c| c.secrets.any())
        .flat_map(|c| c.names.iter().copied())
        .chain(std::iter::once("printf"))
        .chain(super::stores::names())
}

/// One shell word found in text: its raw extent and its decoded bytes.
struct TextWord<'h> {
    start: usize,
    end: usize,
    decoded: std::borrow::Cow<'h, [u8]>,
}

/// Reads the command whose name starts at `at` (and ends at `name_end`)
/// and adds the spans of its secret arguments. Returns where the words it
/// read end.
pub fn scan_command(hay: &[u8], at: usize, name_end: usize, out: &mut Vec<Span>) -> usize {
    // One allocation for the words of a line (a command in prose runs to
    // its line's end), not one per doubling.
    let mut words = Vec::with_capacity(32);
    words.push(TextWord {
        start: at,
        end: name_end,
        decoded: std::borrow::Cow::Borrowed(hay.get(at..name_end).unwrap_or_default()),
    });
    let mut i = name_end;
    while words.len() < MAX_WORDS {
        while hay.get(i).is_some_and(|b| *b == b' ' || *b == b'\t') {
            i += 1;
        }
        if hay.get(i..i + 2) == Some(b"\\\n") {
            i += 2;
            continue;
        }
        match hay.get(i) {
            None | Some(b'\n' | b'\r' | b';' | b'|' | b'&' | b')' | b'`' | b'<' | b'>') => break,
            Some(_) => {}
        }
        // A word without quotes, escapes or `$` ends at its first delimiter
        // and is its own decoding; any other is walked in full.
        let plain_end = hay
            .get(i..)
            .unwrap_or_default()
            .iter()
            .position(|&b| {
                values::is_shell_delimiter(b) || matches!(b, b'\'' | b'"' | b'\\' | b'$')
            })
            .map_or(hay.len(), |p| i + p);
        let plain = hay
            .get(plain_end)
            .is_none_or(|&b| values::is_shell_delimiter(b));
        let next = match plain {
            true => plain_end,
            false => values::extent(hay, i, Syntax::Shell, 0, usize::MAX).next,
        };
        if next <= i {
            break;
        }
        let raw = hay.get(i..next).unwrap_or_default();
        let decoded = match plain {
            true => std::borrow::Cow::Borrowed(raw),
            false => std::borrow::Cow::Owned(super::views::dequote(raw)),
        };
        words.push(TextWord {
            start: i,
            end: next,
            decoded,
        });
        i = next;
    }
    let argv: Vec<&[u8]> = words.iter().map(|w| w.decoded.as_ref()).collect();
    for found in secrets_in(&argv) {
        if let Some(word) = words.get(found.word) {
            out.push(word_span(hay, word, found));
        }
    }
    if let Some(part) = super::stores::reads_secret_stdin(&argv) {
        stdin_literals(hay, at, i, part, out);
    }
    i
}

/// How far back from a password reader the `echo` piped into it is looked
/// for.
const PIPE_REACH: usize = 512;

/// The literal a password reader starting at `at` is given on standard
/// input, written in the text: the words of an `echo`/`printf` piped into
/// it (`echo 'V' | docker login --password-stdin`), or its here-string
/// after `end` (`chpasswd <<< 'u:V'`). Each word is hidden inside its
/// quotes; the commands stay.
fn stdin_literals(hay: &[u8], at: usize, end: usize, part: Part, out: &mut Vec<Span>) {
    let rest = hay.get(end..).unwrap_or_default();
    if let Some(after) = rest.strip_prefix(b"<<<") {
        let from = end + 3 + after.iter().take_while(|b| **b == b' ').count();
        literal_words(hay, from, hay.len().min(from + PIPE_REACH), part, out);
    }
    // Back over blanks (and a `sudo`-like prefix is not looked through) to
    // the pipe, then to where the stage before it starts.
    let before = hay
        .get(at.saturating_sub(PIPE_REACH)..at)
        .unwrap_or_default();
    let offset = at.saturating_sub(PIPE_REACH);
    let trimmed = before.trim_ascii_end();
    let Some(pipe) = trimmed.len().checked_sub(1) else {
        return;
    };
    if trimmed.last() != Some(&b'|') || (pipe > 0 && trimmed.get(pipe - 1) == Some(&b'|')) {
        return;
    }
    let stage_start = trimmed
        .get(..pipe)
        .unwrap_or_default()
        .iter()
        .rposition(|b| matches!(b, b';' | b'&' | b'|' | b'(' | b'\n' | b'`' | b'{'))
        .map_or(0, |p| p + 1);
    let stage = trimmed.get(stage_start..pipe).unwrap_or_default();
    // The last `echo`/`printf` word of the stage: the stage may open the
    // string that holds the command (`"echo …`) or follow prose (`run
    // this: echo …`).
    let Some((lead, command)) = [b"echo ".as_slice(), b"printf ".as_slice()]
        .into_iter()
        .filter_map(|c| {
            memchr::memmem::rfind_iter(stage, c)
                .find(|&p| {
                    p.checked_sub(1).and_then(|b| stage.get(b)).is_none_or(|b| {
                        // Non-ASCII: the end of a file viewer's `12→`.
                        b.is_ascii_whitespace()
                            || !b.is_ascii()
                            || matches!(b, b'"' | b'\'' | b':' | b'=')
                    })
                })
                .map(|p| (p, c))
        })
        .max_by_key(|(p, _)| *p)
    else {
        return;
    };
    let from = offset + stage_start + lead + command.len() - 1;
    literal_words(hay, from, offset + pipe, part, out);
}

/// Hides the literal words in `from..to` (options such as `-n`, `-e` and a
/// `printf` format followed by arguments aside).
fn literal_words(hay: &[u8], from: usize, to: usize, part: Part, out: &mut Vec<Span>) {
    let mut words = Vec::new();
    let mut i = from;
    while i < to && words.len() < MAX_WORDS {
        i += hay
            .get(i..to)
            .unwrap_or_default()
            .iter()
            .take_while(|b| **b == b' ' || **b == b'\t')
            .count();
        if i >= to
            || hay
                .get(i)
                .is_some_and(|b| values::is_shell_delimiter(*b) && !matches!(b, b'\'' | b'"'))
        {
            break;
        }
        let e = values::extent(hay, i, Syntax::Shell, 0, to - i);
        if e.next <= i {
            break;
        }
        words.push((i, e.next.min(to)));
        i = e.next;
    }
    let literal: Vec<(usize, usize)> = words
        .into_iter()
        .skip_while(|&(s, e)| {
            hay.get(s..e)
                .is_some_and(|w| w.starts_with(b"-") && w.len() <= 3)
        })
        .collect();
    // `printf FORMAT ARG…`: the arguments are the text; a lone word is.
    for &(start, end) in literal.iter().skip(usize::from(
        literal.len() > 1 && is_format(hay, literal.first()),
    )) {
        let raw = hay.get(start..end).unwrap_or_default();
        let decoded = super::views::dequote(raw);
        if decoded.contains(&b'$') || decoded.contains(&b'`') || values::is_exempt(&decoded) {
            continue;
        }
        let (mut s, mut e) = (start, end);
        let open = hay.get(s).copied();
        if matches!(open, Some(b'\'' | b'"')) && e > s + 1 && hay.get(e - 1).copied() == open {
            s += 1;
            e -= 1;
        }
        if part == Part::AfterColon {
            match hay
                .get(s..e)
                .and_then(|w| w.iter().position(|b| *b == b':'))
            {
                Some(c) => s += c + 1,
                None => continue,
            }
        }
        if s < e {
            out.push(Span::new(s, e, SecretKind::CliPassword));
        }
    }
}

/// Whether the first literal word is a `printf` format (holds a `%`).
fn is_format(hay: &[u8], word: Option<&(usize, usize)>) -> bool {
    word.and_then(|&(s, e)| hay.get(s..e))
        .is_some_and(|w| w.contains(&b'%'))
}

/// The raw span of the decoded bytes `found.from..` of `word`.
fn word_span(hay: &[u8], word: &TextWord<'_>, found: ArgSecret) -> Span {
    let raw = hay.get(word.start..word.end).unwrap_or_default();
    let prefix = word.decoded.get(..found.from).unwrap_or_default();
    // When the raw word starts with the same bytes as the decoded one (the
    // option is not quoted), the value starts at the same offset; else the
    // whole word goes.
    let mut start = if raw.starts_with(prefix) {
        word.start + found.from
    } else {
        word.start
    };
    let mut end = word.end;
    let open = hay.get(start).copied();
    if matches!(open, Some(b'\'' | b'"')) && end > start + 1 && hay.get(end - 1).copied() == open {
        start += 1;
        end -= 1;
    }
    Span::new(start, end, found.kind)
}

/// Any command's secret-named long option in text: `--db-password X`,
/// `--api-key=X`.
pub fn scan_long_options(hay: &[u8], from: usize, to: usize, out: &mut Vec<Span>) {
    let mut resume = from;
    for pos in memchr::memmem::find_iter(hay.get(from..to).unwrap_or_default(), b"--") {
        let pos = pos + from;
        if pos < resume {
            continue;
        }
        let before = pos.checked_sub(1).and_then(|i| hay.get(i)).copied();
        if !before
            .is_none_or(|b| b.is_ascii_whitespace() || matches!(b, b'\'' | b'"' | b'(' | b'='))
        {
            continue;
        }
        let name_start = pos + 2;
        let name_len = hay
            .get(name_start..)
            .unwrap_or_default()
            .iter()
            .take(65)
            .take_while(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_'))
            .count();
        if name_len == 0 || name_len > 64 {
            continue;
        }
        let name_end = name_start + name_len;
        let name = String::from_utf8_lossy(hay.get(name_start..name_end).unwrap_or_default());
        resume = name_end;
        if !generic_long(&name) {
            continue;
        }
        let value_at = match hay.get(name_end) {
            Some(b'=') => name_end + 1,
            Some(b' ' | b'\t') => {
                let skip = hay
                    .get(name_end..)
                    .unwrap_or_default()
                    .iter()
                    .take_while(|b| **b == b' ' || **b == b'\t')
                    .count();
                let at = name_end + skip;
                match hay.get(at) {
                    Some(b'-') | None => continue,
                    Some(b)
                        if b.is_ascii_whitespace() || matches!(b, b';' | b'|' | b'&' | b')') =>
                    {
                        continue;
                    }
                    Some(_) => at,
                }
            }
            Some(_) | None => continue,
        };
        let e = values::extent(hay, value_at, Syntax::Shell, 0, usize::MAX);
        if e.end > e.start && !values::is_exempt(e.bytes(hay)) {
            out.push(Span::new(e.start, e.end, generic_kind(&name)));
        }
        resume = e.next.max(resume);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn found(cmd: &str) -> Vec<String> {
        let words: Vec<&[u8]> = cmd.split(' ').map(str::as_bytes).collect();
        secrets_in(&words)
            .into_iter()
            .map(|f| String::from_utf8_lossy(&words[f.word][f.from..]).into_owned())
            .collect()
    }

    #[test]
    fn getopt_long_reads_the_table() {
        assert_eq!(found("curl -u user:pw1 https://x"), ["pw1"]);
        assert_eq!(found("curl -su user:pw1 https://x"), ["pw1"]);
        assert_eq!(found("curl -u :tok123 https://x"), ["tok123"]);
        assert_eq!(found("curl --user=me:pw2 x"), ["pw2"]);
        assert_eq!(found("curl -o out -u me:pw3 x"), ["pw3"]);
        // `-O` (remote name) takes no value: the `-u` after it is read.
        assert_eq!(found("curl -O -u me:pw3b x"), ["pw3b"]);
        assert_eq!(found("curl -OJ -u me:pw3c x"), ["pw3c"]);
        assert_eq!(found("curl -sSLOu me:pw3d x"), ["pw3d"]);
        assert_eq!(found("curl -sSLO --user me:pw3e x"), ["pw3e"]);
        assert_eq!(found("curl --oauth2-bearer tok4 x"), ["tok4"]);
        assert!(found("docker run -u 1000:1000 img").is_empty());
        assert_eq!(found("docker login -u me -p pw5 reg"), ["pw5"]);
        assert_eq!(found("docker login -u me --password=pw6 reg"), ["pw6"]);
        assert_eq!(found("redis-cli -h h -a pw7 ping"), ["pw7"]);
        assert_eq!(found("mysql -u root -ppw8 db"), ["pw8"]);
        assert!(found("mysql -u root -p db").is_empty());
        assert_eq!(found("mysql --pass=pw9 db"), ["pw9"]);
        assert!(found("ssh -p 2222 host").is_empty());
        assert_eq!(found("sshpass -p pw10 ssh h"), ["pw10"]);
        assert_eq!(found("openssl enc -aes256 -pass pass:pw11 -in f"), ["pw11"]);
        assert!(found("openssl enc -pass env:PW -in f").is_empty());
        assert_eq!(found("keytool -list -storepass pw12"), ["pw12"]);
        assert_eq!(found("smbclient -U user%pw13 //h/s"), ["pw13"]);
        assert_eq!(found("htpasswd -bc .htpasswd admin pw14"), ["pw14"]);
        assert_eq!(found("xfreerdp /u:me /p:pw15 /v:h"), ["pw15"]);
        assert_eq!(found("anytool --db-password pw16"), ["pw16"]);
        assert_eq!(found("anytool --api-key=pw17"), ["pw17"]);
        assert!(found("docker login --password-stdin").is_empty());
        assert!(found("tool --token-file /run/t").is_empty());
        assert!(found("psql --password -h db").is_empty());
    }

    #[test]
    fn the_shell_spec_table_says_which_options_take_values() {
        // Flags the old table of this file read as taking a value.
        assert_eq!(found("ldapsearch -x -w pw20 -b dc=x"), ["pw20"]);
        assert_eq!(found("redis-cli -c -a pw21 get k"), ["pw21"]);
        assert_eq!(found("mysql -A -ppw22 db"), ["pw22"]);
        assert!(found("ldapsearch -x -s sub -b dc=x").is_empty());
        assert_eq!(
            found("ldappasswd -x -w pw23 -s pw24 uid=a"),
            ["pw23", "pw24"]
        );
        // Single-dash long options.
        assert_eq!(found("openssl enc -d -k pw25 -in f"), ["pw25"]);
        assert_eq!(found("openssl rsa -passin=pass:pw26 -in k"), ["pw26"]);
        assert_eq!(
            found("keytool -importkeystore -srcstorepass pw27"),
            ["pw27"]
        );
        // Secrets only after their subcommand.
        assert!(found("docker run -p 80:80 -u 1000 img").is_empty());
        assert_eq!(found("helm registry login -u me -p pw28 r"), ["pw28"]);
        assert_eq!(found("az login -u me -p pw29"), ["pw29"]);
        // The wrapped command's own options are not sshpass's.
        assert_eq!(found("sshpass -p pw30 ssh -p 2222 h"), ["pw30"]);
        assert_eq!(found("unzip -P pw31 a.zip"), ["pw31"]);
        assert_eq!(found("7z x -ppw32 a.7z"), ["pw32"]);
        assert_eq!(found("zip -P pw33 a.zip f"), ["pw33"]);
        assert_eq!(found("wget --http-password=pw34 u"), ["pw34"]);
        assert_eq!(found("wget --user me --password pw35 u"), ["pw35"]);
        assert_eq!(found("curl --tlspassword pw36 u"), ["pw36"]);
        assert_eq!(found("curl -E cert.pem:pw37 u"), ["pw37"]);
        assert_eq!(found("smbclient -U me%pw38 //h/s"), ["pw38"]);
        assert_eq!(found("git config user.password pw39"), ["pw39"]);
        assert_eq!(found("npm config set _authToken pw40"), ["pw40"]);
        assert_eq!(found("mongosh -u me -p pw41 h"), ["pw41"]);
        assert_eq!(found("sqlcmd -S h -U sa -P pw42"), ["pw42"]);
        assert_eq!(
            found("ssh-keygen -p -P pw43 -N pw44 -f k"),
            ["pw43", "pw44"]
        );
        assert_eq!(found("git -c x=y push --password pw45"), ["pw45"]);
    }
}
