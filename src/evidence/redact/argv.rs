//! A secret found in a command's words, and which part of a word it is:
//! what the CLI table's reader ([`super::cli`]) and the secret stores'
//! subcommands ([`super::stores`]) both report.

use super::kind::SecretKind;
use super::values;

/// Which part of an argument is the secret.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Part {
    /// All of it.
    Whole,
    /// After the first `:` (`user:password`); nothing when there is none.
    AfterColon,
    /// After the first `=` (`NAME=VALUE`); nothing when there is none.
    AfterEquals,
    /// After the first `%` (`smbclient -U user%password`).
    AfterPercent,
    /// After a `pass:` prefix (`openssl -pass pass:X`).
    OpensslPass,
}

/// One secret found in an argument vector: in word `word`, the decoded
/// bytes from `from` on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct ArgSecret {
    pub word: usize,
    pub from: usize,
    pub kind: SecretKind,
}

/// Records the secret in word `word` of `argv` from byte `from` on, as
/// `part` says, unless that part is empty or exempt.
pub(super) fn push_part(
    argv: &[&[u8]],
    word: usize,
    from: usize,
    part: Part,
    kind: SecretKind,
    out: &mut Vec<ArgSecret>,
) {
    let Some(text) = argv.get(word) else { return };
    let value = text.get(from..).unwrap_or_default();
    let offset = match part {
        Part::Whole => Some(0),
        Part::AfterColon => value.iter().position(|b| *b == b':').map(|c| c + 1),
        Part::AfterEquals => value.iter().position(|b| *b == b'=').map(|c| c + 1),
        Part::AfterPercent => value.iter().position(|b| *b == b'%').map(|c| c + 1),
        Part::OpensslPass => value.starts_with(b"pass:").then_some(5),
    };
    let Some(offset) = offset else { return };
    let secret = value.get(offset..).unwrap_or_default();
    if secret.is_empty() || values::is_exempt(secret) {
        return;
    }
    out.push(ArgSecret {
        word,
        from: from + offset,
        kind,
    });
}
