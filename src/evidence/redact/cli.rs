//! Command-line options that carry secrets, as table data: which options of
//! which commands, read the way `getopt_long` reads them.
//!
//! `curl -u user:pass`, `docker login -p X`, `redis-cli -a X`,
//! `mysql -pSECRET`, `sshpass -p X`, `openssl … -pass pass:X`: the same
//! letter means a password for one command and a port, a user or a flag for
//! another (`docker run -u 1000:1000`, `ssh -p 2222`), so the table names the
//! command. Each [`CommandSpec`] lists the options that take an argument
//! (so clusters like `-su user:pass` split right) and marks the secret ones.
//! Any command's long option whose name says secret (`--db-password X`,
//! `--api-key=X`) is read the same way.
//!
//! The table is shaped for the shell layer's option parser (one spec per
//! command, `getopt_long` semantics); until that parser exists the small
//! one here reads it. Words come from two places: the shell layer's parse of
//! a bash command ([`crate::shell::analyze`], through wrappers, `bash -c` and
//! `eval`), and a bounded word lexer over any text for commands quoted in
//! prose, transcripts and tool output.

use super::keys::{KeyClass, classify_key};
use super::kind::SecretKind;
use super::scan::Span;
use super::values::{self, Syntax};

/// Which part of an option's argument is the secret.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Part {
    /// All of it.
    Whole,
    /// After the first `:` (`user:password`); nothing when there is none.
    AfterColon,
    /// After the first `%` (`smbclient -U user%password`).
    AfterPercent,
    /// After a `pass:` prefix (`openssl -pass pass:X`); `env:`/`file:`
    /// references are not secrets.
    OpensslPass,
}

/// How an option takes its argument.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Arg {
    /// Glued (`-pX`, `--password=X`) or the next word.
    Required,
    /// Glued only: `mysql -p` alone prompts, and the next word is a
    /// database name.
    Optional,
}

/// One secret-carrying option.
#[derive(Debug, Clone, Copy)]
pub struct OptSpec {
    pub short: Option<u8>,
    pub long: Option<&'static str>,
    pub arg: Arg,
    pub part: Part,
    pub kind: SecretKind,
}

/// One command's options.
#[derive(Debug, Clone, Copy)]
pub struct CommandSpec {
    /// Command names (basename of `argv[0]`).
    pub names: &'static [&'static str],
    /// Words that must follow the name for the spec to apply
    /// (`docker login`).
    pub subcommand: &'static [&'static str],
    /// Short options that take a (non-secret) argument, so a cluster
    /// stops at them.
    pub short_with_arg: &'static [u8],
    /// Long options are written with one dash (`-storepass`, `-passin`).
    pub single_dash_long: bool,
    /// `getopt_long` accepts an unambiguous prefix of a long option.
    pub abbreviations: bool,
    pub secret: &'static [OptSpec],
}

const fn opt(
    short: Option<u8>,
    long: Option<&'static str>,
    part: Part,
    kind: SecretKind,
) -> OptSpec {
    OptSpec {
        short,
        long,
        arg: Arg::Required,
        part,
        kind,
    }
}

const PW: SecretKind = SecretKind::CliPassword;
const SECRET: SecretKind = SecretKind::CliSecret;

/// The table. Commands not listed still have their secret-named long
/// options read (see [`generic_long`]).
pub const COMMANDS: &[CommandSpec] = &[
    CommandSpec {
        names: &["curl"],
        subcommand: &[],
        short_with_arg: b"AbcCdDeEFhHKmoPQrtTuUwxXYyz",
        single_dash_long: false,
        abbreviations: false,
        secret: &[
            opt(Some(b'u'), Some("user"), Part::AfterColon, PW),
            opt(Some(b'U'), Some("proxy-user"), Part::AfterColon, PW),
            opt(None, Some("oauth2-bearer"), Part::Whole, SECRET),
            opt(None, Some("pass"), Part::Whole, PW),
            opt(None, Some("proxy-pass"), Part::Whole, PW),
            opt(Some(b'E'), Some("cert"), Part::AfterColon, PW),
        ],
    },
    CommandSpec {
        names: &[
            "docker", "podman", "nerdctl", "buildah", "skopeo", "helm", "oras", "crane",
        ],
        subcommand: &["login"],
        short_with_arg: b"u",
        single_dash_long: false,
        abbreviations: false,
        secret: &[opt(Some(b'p'), Some("password"), Part::Whole, PW)],
    },
    CommandSpec {
        names: &["redis-cli", "valkey-cli", "keydb-cli"],
        subcommand: &[],
        short_with_arg: b"hpsnucrix",
        single_dash_long: false,
        abbreviations: false,
        secret: &[
            opt(Some(b'a'), Some("pass"), Part::Whole, PW),
            opt(None, Some("askpass"), Part::Whole, PW),
        ],
    },
    CommandSpec {
        names: &[
            "mysql",
            "mysqldump",
            "mysqladmin",
            "mysqlimport",
            "mysqlshow",
            "mysqlcheck",
            "mysqlpump",
            "mysqlsh",
            "mariadb",
            "mariadb-dump",
            "mariadb-admin",
        ],
        subcommand: &[],
        short_with_arg: b"hPuDSeAcOW",
        single_dash_long: false,
        abbreviations: true,
        secret: &[OptSpec {
            short: Some(b'p'),
            long: Some("password"),
            arg: Arg::Optional,
            part: Part::Whole,
            kind: PW,
        }],
    },
    CommandSpec {
        names: &["sshpass"],
        subcommand: &[],
        short_with_arg: b"fde",
        single_dash_long: false,
        abbreviations: false,
        secret: &[opt(Some(b'p'), None, Part::Whole, PW)],
    },
    CommandSpec {
        names: &[
            "mongo",
            "mongosh",
            "mongodump",
            "mongorestore",
            "mongoexport",
            "mongoimport",
        ],
        subcommand: &[],
        short_with_arg: b"uhdco",
        single_dash_long: false,
        abbreviations: false,
        secret: &[opt(Some(b'p'), Some("password"), Part::Whole, PW)],
    },
    CommandSpec {
        names: &["sqlcmd", "bcp"],
        subcommand: &[],
        short_with_arg: b"SUdiQoqtlA",
        single_dash_long: false,
        abbreviations: false,
        secret: &[opt(Some(b'P'), None, Part::Whole, PW)],
    },
    CommandSpec {
        names: &[
            "ldapsearch",
            "ldapmodify",
            "ldapadd",
            "ldapdelete",
            "ldapwhoami",
            "ldappasswd",
        ],
        subcommand: &[],
        short_with_arg: b"HhpDbsfyxo",
        single_dash_long: false,
        abbreviations: false,
        secret: &[
            opt(Some(b'w'), None, Part::Whole, PW),
            opt(Some(b's'), None, Part::Whole, PW),
        ],
    },
    CommandSpec {
        names: &["zip", "unzip", "7z", "7za", "7zr"],
        subcommand: &[],
        short_with_arg: b"bdnt",
        single_dash_long: false,
        abbreviations: false,
        secret: &[
            opt(Some(b'P'), Some("password"), Part::Whole, PW),
            OptSpec {
                short: Some(b'p'),
                long: None,
                arg: Arg::Optional,
                part: Part::Whole,
                kind: PW,
            },
        ],
    },
    CommandSpec {
        names: &["ssh-keygen"],
        subcommand: &[],
        short_with_arg: b"abCDEfFGIJjKmMnOrsSTtVwYzZ",
        single_dash_long: false,
        abbreviations: false,
        secret: &[
            opt(Some(b'N'), None, Part::Whole, PW),
            opt(Some(b'P'), None, Part::Whole, PW),
        ],
    },
    CommandSpec {
        names: &["smbclient", "rpcclient", "smbmap"],
        subcommand: &[],
        short_with_arg: b"IpnRsWlOtTDcdmA",
        single_dash_long: false,
        abbreviations: false,
        secret: &[opt(Some(b'U'), Some("user"), Part::AfterPercent, PW)],
    },
    CommandSpec {
        names: &["az"],
        subcommand: &["login"],
        short_with_arg: b"ut",
        single_dash_long: false,
        abbreviations: false,
        secret: &[opt(Some(b'p'), Some("password"), Part::Whole, PW)],
    },
    CommandSpec {
        names: &["openssl"],
        subcommand: &[],
        short_with_arg: b"",
        single_dash_long: true,
        abbreviations: false,
        secret: &[
            opt(None, Some("pass"), Part::OpensslPass, PW),
            opt(None, Some("passin"), Part::OpensslPass, PW),
            opt(None, Some("passout"), Part::OpensslPass, PW),
            opt(None, Some("k"), Part::Whole, PW),
            opt(None, Some("kfile"), Part::Whole, PW),
        ],
    },
    CommandSpec {
        names: &["keytool", "jarsigner"],
        subcommand: &[],
        short_with_arg: b"",
        single_dash_long: true,
        abbreviations: false,
        secret: &[
            opt(None, Some("storepass"), Part::Whole, PW),
            opt(None, Some("keypass"), Part::Whole, PW),
            opt(None, Some("srcstorepass"), Part::Whole, PW),
            opt(None, Some("deststorepass"), Part::Whole, PW),
            opt(None, Some("srckeypass"), Part::Whole, PW),
            opt(None, Some("destkeypass"), Part::Whole, PW),
            opt(None, Some("new"), Part::Whole, PW),
        ],
    },
    CommandSpec {
        names: &["aws", "npm", "yarn", "pnpm", "git", "gh"],
        subcommand: &[],
        short_with_arg: b"",
        single_dash_long: false,
        abbreviations: false,
        // `aws configure set NAME VALUE`, `npm config set NAME VALUE`,
        // `git config NAME VALUE`: see [`config_set`].
        secret: &[],
    },
    CommandSpec {
        names: &["htpasswd"],
        subcommand: &[],
        short_with_arg: b"rC",
        single_dash_long: false,
        abbreviations: false,
        // `htpasswd -b FILE USER PASSWORD`: see [`htpasswd_batch`].
        secret: &[],
    },
    CommandSpec {
        names: &["xfreerdp", "wlfreerdp", "sdl-freerdp"],
        subcommand: &[],
        short_with_arg: b"",
        single_dash_long: false,
        abbreviations: false,
        // `/p:password`: see [`freerdp_password`].
        secret: &[],
    },
];

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

/// One secret found in an argument vector: in word `word`, the decoded
/// bytes from `from` on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Found {
    pub word: usize,
    pub from: usize,
    pub kind: SecretKind,
}

/// The spec for `argv` (its name, then its subcommand words).
pub fn spec_for(argv: &[&[u8]]) -> Option<&'static CommandSpec> {
    let name = argv.first()?;
    let base = name.rsplit(|b| *b == b'/').next().unwrap_or(name);
    COMMANDS.iter().find(|spec| {
        spec.names.iter().any(|n| n.as_bytes() == base)
            && spec.subcommand.iter().all(|sub| {
                argv.iter()
                    .skip(1)
                    .filter(|w| !w.starts_with(b"-"))
                    .take(3)
                    .any(|w| *w == sub.as_bytes())
            })
    })
}

/// Reads `argv` (name first) with `getopt_long` semantics and returns the
/// secret arguments.
pub fn secrets_in(argv: &[&[u8]]) -> Vec<Found> {
    let spec = spec_for(argv);
    let mut out = Vec::new();
    let mut i = 1;
    while let Some(word) = argv.get(i) {
        if *word == b"--" {
            break;
        }
        i += match (word.strip_prefix(b"--"), word.first()) {
            (Some(long), _) => long_option(spec, argv, i, long, 2, &mut out),
            (None, Some(b'-')) if word.len() > 1 => short_or_single_dash(spec, argv, i, &mut out),
            _ => 1,
        };
    }
    if let Some(spec) = spec {
        special_positional(spec, argv, &mut out);
    }
    out
}

/// A `--name[=value]` option at `argv[i]`; returns how many words it used.
fn long_option(
    spec: Option<&CommandSpec>,
    argv: &[&[u8]],
    i: usize,
    body: &[u8],
    dashes: usize,
    out: &mut Vec<Found>,
) -> usize {
    let (name, glued) = match body.iter().position(|b| *b == b'=') {
        Some(eq) => (body.get(..eq).unwrap_or_default(), Some(dashes + eq + 1)),
        None => (body, None),
    };
    let name_text = String::from_utf8_lossy(name);
    let known = spec.and_then(|s| {
        s.secret.iter().find(|o| {
            o.long.is_some_and(|l| {
                l.as_bytes() == name
                    || (s.abbreviations && name.len() >= 3 && l.as_bytes().starts_with(name))
            })
        })
    });
    let (arg, part, kind) = match known {
        Some(o) => (o.arg, o.part, o.kind),
        None if generic_long(&name_text) => (Arg::Required, Part::Whole, generic_kind(&name_text)),
        None => return 1,
    };
    // A listed option takes the next word whatever it is, as getopt does;
    // an unlisted one only when it does not look like another option.
    let takes_any = known.is_some();
    match (glued, arg) {
        (Some(from), _) => {
            push_part(argv, i, from, part, kind, out);
            1
        }
        (None, Arg::Required) => match argv.get(i + 1) {
            Some(next) if takes_any || !next.starts_with(b"-") || next.len() == 1 => {
                push_part(argv, i + 1, 0, part, kind, out);
                2
            }
            Some(_) | None => 1,
        },
        (None, Arg::Optional) => 1,
    }
}

/// `-abc` clusters (or `-storepass` for single-dash-long commands).
fn short_or_single_dash(
    spec: Option<&CommandSpec>,
    argv: &[&[u8]],
    i: usize,
    out: &mut Vec<Found>,
) -> usize {
    let Some(word) = argv.get(i) else { return 1 };
    let body = word.get(1..).unwrap_or_default();
    if let Some(s) = spec
        && s.single_dash_long
    {
        return long_option(spec, argv, i, body, 1, out);
    }
    let Some(spec) = spec else { return 1 };
    for (offset, letter) in body.iter().enumerate() {
        let glued_at = 1 + offset + 1;
        let has_glued = glued_at < word.len();
        if let Some(o) = spec.secret.iter().find(|o| o.short == Some(*letter)) {
            if has_glued {
                push_part(argv, i, glued_at, o.part, o.kind, out);
                return 1;
            }
            return match (o.arg, argv.get(i + 1)) {
                (Arg::Required, Some(_)) => {
                    push_part(argv, i + 1, 0, o.part, o.kind, out);
                    2
                }
                _ => 1,
            };
        }
        if spec.short_with_arg.contains(letter) {
            // The rest of the word, or the next word, is its argument.
            return if has_glued { 1 } else { 2 };
        }
    }
    1
}

fn push_part(
    argv: &[&[u8]],
    word: usize,
    from: usize,
    part: Part,
    kind: SecretKind,
    out: &mut Vec<Found>,
) {
    let Some(text) = argv.get(word) else { return };
    let value = text.get(from..).unwrap_or_default();
    let offset = match part {
        Part::Whole => Some(0),
        Part::AfterColon => value.iter().position(|b| *b == b':').map(|c| c + 1),
        Part::AfterPercent => value.iter().position(|b| *b == b'%').map(|c| c + 1),
        Part::OpensslPass => value.starts_with(b"pass:").then_some(5),
    };
    let Some(offset) = offset else { return };
    let secret = value.get(offset..).unwrap_or_default();
    if secret.is_empty() || values::is_exempt(secret) {
        return;
    }
    out.push(Found {
        word,
        from: from + offset,
        kind,
    });
}

/// `htpasswd -b FILE USER PASSWORD` and `xfreerdp /p:PASSWORD`.
fn special_positional(spec: &CommandSpec, argv: &[&[u8]], out: &mut Vec<Found>) {
    if spec.names.contains(&"htpasswd") {
        htpasswd_batch(argv, out);
    }
    if spec.names.contains(&"xfreerdp") {
        freerdp_password(argv, out);
    }
    if spec.names.contains(&"aws") {
        config_set(argv, out);
    }
}

/// `… config[ure] [set] NAME VALUE` whose NAME says secret.
fn config_set(argv: &[&[u8]], out: &mut Vec<Found>) {
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
    if let (Some(&name), Some(&value)) = (rest.first(), rest.get(1))
        && let Some(name) = argv.get(name)
        && classify_key(&String::from_utf8_lossy(name)) == KeyClass::Secret
    {
        push_part(argv, value, 0, Part::Whole, SecretKind::CliSecret, out);
    }
}

fn htpasswd_batch(argv: &[&[u8]], out: &mut Vec<Found>) {
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

fn freerdp_password(argv: &[&[u8]], out: &mut Vec<Found>) {
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

/// Every command name of the table, for the keyword prefilter.
pub fn command_names() -> impl Iterator<Item = &'static str> {
    COMMANDS.iter().flat_map(|c| c.names.iter().copied())
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
    i
}

/// The raw span of the decoded bytes `found.from..` of `word`.
fn word_span(hay: &[u8], word: &TextWord<'_>, found: Found) -> Span {
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
}
