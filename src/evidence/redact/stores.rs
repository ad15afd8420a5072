//! Commands that store a secret: the value they are handed is a secret
//! whatever it is named.
//!
//! `gh secret set PROD_DB_URL --body V`, `aws ssm put-parameter --value V`,
//! `doppler secrets set STRIPE_KEY V`, `heroku config:set K=V`: the option
//! or operand that carries the value says nothing secret (`--body`,
//! `--value`, a name like `PROD_DB_URL`), the subcommand does. And
//! `echo V | docker login --password-stdin`, `echo V | htpasswd -i f u`,
//! `… | chpasswd`: the secret is the literal another command prints into
//! a program that reads its password from standard input.
//!
//! Each is one row of a table here ([`STORES`], [`STDIN_READERS`]), read
//! by [`super::cli`] for both sources of words: the shell analysis of a
//! command (whose `stdin_text` is the text piped or here-stringed in) and
//! the word lexer over any other text (which looks back over the pipe to
//! the `echo` before it).

use super::argv::{ArgSecret, Part, push_part};
use super::kind::SecretKind;

/// How a secret-storing subcommand takes its value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Takes {
    /// The value of these options: `--body V`, `--body=V`, `-b V`, `-bV`.
    Options(&'static [&'static str]),
    /// The value after the first `=` of these options' values
    /// (`--from-literal=key=V`, `--set K=V`).
    OptionPairs(&'static [&'static str]),
    /// Every operand `NAME=VALUE`: the part after `=` (`heroku config:set
    /// A=1 B=2`, `vault kv put secret/app db=V`).
    Pairs,
    /// `NAME VALUE` (or `NAME=VALUE`): the operand after the first
    /// upper-case name (`doppler secrets set STRIPE_KEY V`).
    NameValue,
}

/// One secret-storing subcommand: the program's names, the subcommand words
/// that follow it (options between them are skipped), what carries the
/// value.
struct Store {
    names: &'static [&'static str],
    path: &'static [&'static str],
    takes: &'static [Takes],
}

/// The secret-storing subcommands.
const STORES: &[Store] = &[
    Store {
        names: &["gh"],
        path: &["secret", "set"],
        takes: &[Takes::Options(&["body", "b"])],
    },
    Store {
        names: &["aws"],
        path: &["ssm", "put-parameter"],
        takes: &[Takes::Options(&["value"])],
    },
    Store {
        names: &["aws"],
        path: &["secretsmanager", "create-secret"],
        takes: &[Takes::Options(&["secret-string", "secret-binary"])],
    },
    Store {
        names: &["aws"],
        path: &["secretsmanager", "put-secret-value"],
        takes: &[Takes::Options(&["secret-string", "secret-binary"])],
    },
    Store {
        names: &["aws"],
        path: &["secretsmanager", "update-secret"],
        takes: &[Takes::Options(&["secret-string", "secret-binary"])],
    },
    Store {
        names: &["az"],
        path: &["keyvault", "secret", "set"],
        takes: &[Takes::Options(&["value"])],
    },
    Store {
        names: &["doppler"],
        path: &["secrets", "set"],
        takes: &[Takes::NameValue],
    },
    Store {
        names: &["netlify"],
        path: &["env:set"],
        takes: &[Takes::NameValue],
    },
    Store {
        names: &["dotenv", "dotenvx"],
        path: &["set"],
        takes: &[Takes::NameValue],
    },
    Store {
        names: &["glab"],
        path: &["variable", "set"],
        takes: &[Takes::NameValue, Takes::Options(&["value", "v"])],
    },
    Store {
        names: &["travis"],
        path: &["env", "set"],
        takes: &[Takes::NameValue],
    },
    Store {
        names: &["vault"],
        path: &["kv", "put"],
        takes: &[Takes::Pairs],
    },
    Store {
        names: &["vault"],
        path: &["kv", "patch"],
        takes: &[Takes::Pairs],
    },
    Store {
        names: &["vault"],
        path: &["write"],
        takes: &[Takes::Pairs],
    },
    Store {
        names: &["kubectl"],
        path: &["create", "secret"],
        takes: &[
            Takes::OptionPairs(&["from-literal"]),
            Takes::Options(&["docker-password"]),
        ],
    },
    Store {
        names: &["heroku"],
        path: &["config:set"],
        takes: &[Takes::Pairs],
    },
    Store {
        names: &["dokku"],
        path: &["config:set"],
        takes: &[Takes::Pairs],
    },
    Store {
        names: &["fly", "flyctl"],
        path: &["secrets", "set"],
        takes: &[Takes::Pairs],
    },
    Store {
        names: &["supabase"],
        path: &["secrets", "set"],
        takes: &[Takes::Pairs],
    },
    Store {
        names: &["firebase"],
        path: &["functions:config:set"],
        takes: &[Takes::Pairs],
    },
    Store {
        names: &["railway"],
        path: &["variables"],
        takes: &[Takes::OptionPairs(&["set"])],
    },
    Store {
        names: &["az"],
        path: &["webapp", "config", "appsettings", "set"],
        takes: &[Takes::OptionPairs(&["settings"])],
    },
];

/// When a program reads a password from its standard input.
struct StdinReader {
    names: &'static [&'static str],
    /// Subcommand words that must follow the name (options between them
    /// skipped); empty: none.
    path: &'static [&'static str],
    /// Words one of which must be present (`--password-stdin`); empty:
    /// always.
    flags: &'static [&'static str],
    part: Part,
}

/// Programs that read a password from standard input.
const STDIN_READERS: &[StdinReader] = &[
    StdinReader {
        names: &[
            "docker", "podman", "nerdctl", "buildah", "skopeo", "helm", "oras", "crane",
        ],
        path: &["login"],
        flags: &["--password-stdin"],
        part: Part::Whole,
    },
    StdinReader {
        names: &["htpasswd"],
        path: &[],
        flags: &["-i"],
        part: Part::Whole,
    },
    StdinReader {
        names: &["passwd"],
        path: &[],
        flags: &["--stdin"],
        part: Part::Whole,
    },
    StdinReader {
        names: &["chpasswd", "chgpasswd"],
        path: &[],
        flags: &[],
        part: Part::AfterColon,
    },
    StdinReader {
        names: &["sudo"],
        path: &[],
        flags: &["-S", "--stdin"],
        part: Part::Whole,
    },
    StdinReader {
        names: &["gh"],
        path: &["auth", "login"],
        flags: &["--with-token"],
        part: Part::Whole,
    },
    StdinReader {
        names: &["vault"],
        path: &["login"],
        flags: &["-"],
        part: Part::Whole,
    },
    StdinReader {
        names: &["openssl"],
        path: &["passwd"],
        flags: &["-stdin"],
        part: Part::Whole,
    },
    StdinReader {
        names: &["mkpasswd"],
        path: &[],
        flags: &["--stdin", "-s"],
        part: Part::Whole,
    },
    StdinReader {
        names: &["wrangler"],
        path: &["secret", "put"],
        flags: &[],
        part: Part::Whole,
    },
];

/// Every program name of both tables, for the keyword prefilter.
pub fn names() -> impl Iterator<Item = &'static str> {
    STORES
        .iter()
        .flat_map(|s| s.names.iter().copied())
        .chain(STDIN_READERS.iter().flat_map(|r| r.names.iter().copied()))
}

/// The basename of `argv[0]`.
fn program<'a>(argv: &[&'a [u8]]) -> Option<&'a [u8]> {
    let name = argv.first()?;
    name.rsplit(|b| *b == b'/').next()
}

/// Whether the words after the name start (options aside) with `path`;
/// returns the index in `argv` after its last word.
fn after_path(argv: &[&[u8]], path: &[&str]) -> Option<usize> {
    let mut want = path.iter();
    let mut next = want.next();
    let mut option_before = false;
    for (i, word) in argv.iter().enumerate().skip(1) {
        let Some(sub) = next else {
            return Some(i);
        };
        if word.starts_with(b"-") {
            option_before = !word.contains(&b'=');
            continue;
        }
        if *word == sub.as_bytes() {
            next = want.next();
        } else if !option_before {
            return None;
        }
        // Else: the value of the option before it (`aws --region r ssm`).
        option_before = false;
    }
    next.is_none().then_some(argv.len())
}

/// Adds the values a secret-storing subcommand is handed in `argv`.
pub fn stored_in(argv: &[&[u8]], out: &mut Vec<ArgSecret>) {
    let Some(name) = program(argv) else { return };
    for store in STORES
        .iter()
        .filter(|s| s.names.iter().any(|n| n.as_bytes() == name))
    {
        let Some(from) = after_path(argv, store.path) else {
            continue;
        };
        for takes in store.takes {
            match *takes {
                Takes::Options(names) => option_values(argv, from, names, false, out),
                Takes::OptionPairs(names) => option_values(argv, from, names, true, out),
                Takes::Pairs => pairs(argv, from, out),
                Takes::NameValue => name_value(argv, from, out),
            }
        }
    }
}

/// The values of the options `names` from `from` on (see
/// [`Takes::Options`]); with `pair`, only what follows the first `=` of
/// each value.
fn option_values(
    argv: &[&[u8]],
    from: usize,
    names: &[&str],
    pair: bool,
    out: &mut Vec<ArgSecret>,
) {
    let part = if pair { Part::AfterEquals } else { Part::Whole };
    let mut i = from;
    while let Some(word) = argv.get(i) {
        if *word == b"--" {
            break;
        }
        for name in names {
            let long = name.len() > 1;
            let flag = if long {
                [b"--".as_slice(), name.as_bytes()].concat()
            } else {
                [b"-".as_slice(), name.as_bytes()].concat()
            };
            if *word == flag.as_slice() {
                if argv.get(i + 1).is_some() && !is_reference(argv.get(i + 1)) {
                    push_part(argv, i + 1, 0, part, SecretKind::CliSecret, out);
                }
            } else if let Some(rest) = word.strip_prefix(flag.as_slice()) {
                let glued = match (long, rest.first()) {
                    (true, Some(b'=')) => Some(flag.len() + 1),
                    (false, Some(_)) => Some(flag.len()),
                    (true, _) | (false, None) => None,
                };
                if let Some(at) = glued
                    && !is_reference(word.get(at..).as_ref())
                {
                    push_part(argv, i, at, part, SecretKind::CliSecret, out);
                }
            }
        }
        i += 1;
    }
}

/// A value that names where the secret is rather than holding it
/// (`file://secret.json`, `fileb://key.bin`, `-` for standard input).
fn is_reference(value: Option<&&[u8]>) -> bool {
    value.is_some_and(|v| {
        v.starts_with(b"file://") || v.starts_with(b"fileb://") || *v == b"-" || v.starts_with(b"@")
    })
}

/// Every `NAME=VALUE` operand from `from` on.
fn pairs(argv: &[&[u8]], from: usize, out: &mut Vec<ArgSecret>) {
    for (i, word) in argv.iter().enumerate().skip(from) {
        if *word == b"--" {
            continue;
        }
        if !word.starts_with(b"-") && word.contains(&b'=') {
            push_part(argv, i, 0, Part::AfterEquals, SecretKind::CliSecret, out);
        }
    }
}

/// `NAME VALUE`: the operand after the first upper-case name (an option's
/// value such as `--project backend` may stand before it), or after the
/// first operand when none is upper-case; `NAME=VALUE` operands too.
fn name_value(argv: &[&[u8]], from: usize, out: &mut Vec<ArgSecret>) {
    let operands: Vec<usize> = (from..argv.len())
        .filter(|&i| argv.get(i).is_some_and(|w| !w.starts_with(b"-")))
        .collect();
    if operands
        .iter()
        .any(|&i| argv.get(i).is_some_and(|w| w.contains(&b'=')))
    {
        pairs(argv, from, out);
        return;
    }
    let is_name = |w: &[u8]| {
        w.iter().any(u8::is_ascii_uppercase)
            && w.iter()
                .all(|b| b.is_ascii_uppercase() || b.is_ascii_digit() || *b == b'_')
    };
    let at = operands
        .iter()
        .position(|&i| argv.get(i).is_some_and(|w| is_name(w)))
        .unwrap_or(0);
    if let Some(&value) = operands.get(at + 1) {
        push_part(argv, value, 0, Part::Whole, SecretKind::CliSecret, out);
    }
}

/// Whether `argv` reads a password from standard input, and which part of
/// each line of it is the secret.
pub fn reads_secret_stdin(argv: &[&[u8]]) -> Option<Part> {
    let name = program(argv)?;
    STDIN_READERS
        .iter()
        .filter(|r| r.names.iter().any(|n| n.as_bytes() == name))
        .find(|r| {
            after_path(argv, r.path).is_some()
                && (r.flags.is_empty()
                    || argv
                        .iter()
                        .skip(1)
                        .any(|w| r.flags.iter().any(|f| f.as_bytes() == *w)))
        })
        .map(|r| r.part)
}

/// The secret parts of a password reader's standard input `text`: each
/// line, or each line's part after its first `:` (`user:password`).
pub fn stdin_secrets(text: &[u8], part: Part) -> Vec<&[u8]> {
    text.split(|b| *b == b'\n')
        .filter_map(|line| {
            let line = line.trim_ascii();
            let secret = match part {
                Part::AfterColon => line.splitn(2, |b| *b == b':').nth(1)?,
                Part::Whole | Part::AfterEquals | Part::AfterPercent | Part::OpensslPass => line,
            };
            (!secret.is_empty()).then_some(secret)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn found(cmd: &str) -> Vec<String> {
        let words: Vec<&[u8]> = cmd.split(' ').map(str::as_bytes).collect();
        let mut out = Vec::new();
        stored_in(&words, &mut out);
        out.into_iter()
            .map(|f| String::from_utf8_lossy(&words[f.word][f.from..]).into_owned())
            .collect()
    }

    #[test]
    fn the_stored_value_is_found() {
        assert_eq!(found("gh secret set PROD_DB_URL --body v1"), ["v1"]);
        assert_eq!(found("gh secret set X -b v2"), ["v2"]);
        assert_eq!(found("gh secret set X -bv3"), ["v3"]);
        assert_eq!(found("gh secret set X --body=v4 -R o/r"), ["v4"]);
        assert_eq!(
            found("aws ssm put-parameter --name /a --type SecureString --value v5"),
            ["v5"]
        );
        assert_eq!(
            found(
                "aws --region eu-west-1 secretsmanager create-secret --name n --secret-string v6"
            ),
            ["v6"]
        );
        assert_eq!(found("doppler secrets set STRIPE_KEY v7"), ["v7"]);
        assert_eq!(
            found("doppler secrets set --project app STRIPE_KEY v8"),
            ["v8"]
        );
        assert_eq!(found("doppler secrets set STRIPE_KEY=v9"), ["v9"]);
        assert_eq!(
            found("vault kv put secret/app db=v10 user=v11"),
            ["v10", "v11"]
        );
        assert_eq!(
            found("kubectl create secret generic x --from-literal=k=v12"),
            ["v12"]
        );
        assert_eq!(found("heroku config:set K=v13 -a app"), ["v13"]);
        assert_eq!(found("fly secrets set K=v14"), ["v14"]);
        // Not a store, or a reference.
        assert!(found("gh secret list").is_empty());
        assert!(found("gh pr create --body text").is_empty());
        assert!(found("aws ssm get-parameter --name /a").is_empty());
        assert!(found("aws secretsmanager create-secret --secret-string file://s.json").is_empty());
        assert!(found("heroku config:get K").is_empty());
        assert!(found("vault kv get secret/app").is_empty());
    }

    #[test]
    fn password_readers_are_known() {
        let words = |s: &'static str| s.split(' ').map(str::as_bytes).collect::<Vec<_>>();
        assert_eq!(
            reads_secret_stdin(&words("docker login -u ci --password-stdin r")),
            Some(Part::Whole)
        );
        assert_eq!(
            reads_secret_stdin(&words("htpasswd -i .htpasswd admin")),
            Some(Part::Whole)
        );
        assert_eq!(
            reads_secret_stdin(&words("chpasswd")),
            Some(Part::AfterColon)
        );
        assert_eq!(reads_secret_stdin(&words("docker login -u ci r")), None);
        assert_eq!(reads_secret_stdin(&words("docker build .")), None);
        assert_eq!(reads_secret_stdin(&words("passwd deploy")), None);
        assert_eq!(
            stdin_secrets(b"deploy:pw1\nroot:pw2\n", Part::AfterColon),
            [b"pw1".as_slice(), b"pw2"]
        );
    }
}
