//! Commands whose output is a credential: the second kind of credential
//! source beside the files of [`crate::credentials`]. `aws
//! configure export-credentials`, `gh auth token`, `kubectl config view
//! --raw`, a secret manager's `get`, `printenv` of the whole environment —
//! what they print, piped or substituted into a network sink, is sent.
//!
//! A token minted for one service and sent to that service is its use,
//! not its theft: `curl -H "Authorization: Bearer $(gcloud auth
//! print-access-token)" https://storage.googleapis.com/…` is how Google
//! documents its API. So a producer may name its audience, the domains the
//! credential is for; a sink whose every URL is known and inside that
//! audience does not exfiltrate it. Secret managers, keychains, password
//! stores and the environment have no audience: any sink sends them away.

use crate::shell::{Arg, Command};

use super::facts::Facts;

/// What a command's output is, when it is a credential.
#[derive(Debug, Clone)]
pub(super) struct Produced {
    /// The command as the rationale shows it (`gh auth token`).
    pub what: String,
    /// Domains the credential is meant for (empty: none).
    pub audience: &'static [&'static str],
}

const AWS: &[&str] = &["amazonaws.com", "amazonaws.com.cn", "aws.amazon.com"];
const GITHUB: &[&str] = &["github.com", "ghcr.io", "githubusercontent.com"];
const GOOGLE: &[&str] = &["googleapis.com", "gcr.io", "pkg.dev", "google.com"];
const AZURE: &[&str] = &[
    "azure.com",
    "azure.net",
    "windows.net",
    "microsoft.com",
    "microsoftonline.com",
    "azurecr.io",
];
const HEROKU: &[&str] = &["heroku.com"];
const GITLAB: &[&str] = &["gitlab.com"];
const NONE: &[&str] = &[];

/// One producer: the program, the words that must follow it in order
/// (options skipped), and, when not empty, one of `flags` that must be
/// given too.
struct Producer {
    programs: &'static [&'static str],
    words: &'static [&'static str],
    flags: &'static [&'static str],
    audience: &'static [&'static str],
}

const fn p(
    programs: &'static [&'static str],
    words: &'static [&'static str],
    flags: &'static [&'static str],
    audience: &'static [&'static str],
) -> Producer {
    Producer {
        programs,
        words,
        flags,
        audience,
    }
}

/// The table. Each line prints a credential to standard output.
const PRODUCERS: &[Producer] = &[
    p(&["aws"], &["configure", "export-credentials"], &[], AWS),
    p(&["aws"], &["sts", "get-session-token"], &[], AWS),
    p(&["aws"], &["sts", "assume-role"], &[], AWS),
    p(&["aws"], &["sts", "assume-role-with-saml"], &[], AWS),
    p(
        &["aws"],
        &["sts", "assume-role-with-web-identity"],
        &[],
        AWS,
    ),
    p(&["aws"], &["sts", "get-federation-token"], &[], AWS),
    p(&["aws"], &["ecr", "get-login-password"], &[], AWS),
    p(&["aws"], &["ecr", "get-login"], &[], AWS),
    p(&["aws"], &["ecr-public", "get-login-password"], &[], AWS),
    p(
        &["aws"],
        &["codeartifact", "get-authorization-token"],
        &[],
        AWS,
    ),
    p(&["aws"], &["secretsmanager", "get-secret-value"], &[], NONE),
    p(
        &["aws"],
        &["ssm", "get-parameter"],
        &["--with-decryption"],
        NONE,
    ),
    p(
        &["aws"],
        &["ssm", "get-parameters"],
        &["--with-decryption"],
        NONE,
    ),
    p(
        &["aws"],
        &["ssm", "get-parameters-by-path"],
        &["--with-decryption"],
        NONE,
    ),
    p(&["gh"], &["auth", "token"], &[], GITHUB),
    p(
        &["gh"],
        &["auth", "status"],
        &["-t", "--show-token"],
        GITHUB,
    ),
    p(&["gh"], &["auth", "git-credential"], &[], GITHUB),
    p(&["kubectl", "oc"], &["config", "view"], &["--raw"], NONE),
    p(&["gcloud"], &["auth", "print-access-token"], &[], GOOGLE),
    p(&["gcloud"], &["auth", "print-identity-token"], &[], GOOGLE),
    p(
        &["gcloud"],
        &["auth", "application-default", "print-access-token"],
        &[],
        GOOGLE,
    ),
    p(&["gcloud"], &["secrets", "versions", "access"], &[], NONE),
    p(&["az"], &["account", "get-access-token"], &[], AZURE),
    p(&["az"], &["keyvault", "secret", "show"], &[], NONE),
    p(&["az"], &["ad", "sp", "create-for-rbac"], &[], NONE),
    p(&["heroku"], &["auth:token"], &[], HEROKU),
    p(
        &["glab"],
        &["auth", "status"],
        &["-t", "--show-token"],
        GITLAB,
    ),
    p(&["glab"], &["config", "get", "token"], &[], GITLAB),
    p(&["lpass"], &["show"], &[], NONE),
    p(&["keepassxc-cli"], &["show"], &[], NONE),
    p(&["doppler"], &["secrets"], &[], NONE),
    p(&["infisical"], &["export"], &[], NONE),
    p(&["chamber"], &["export"], &[], NONE),
    p(&["bw"], &["export"], &[], NONE),
    p(&["vault"], &["read"], &[], NONE),
    p(&["vault"], &["kv", "get"], &[], NONE),
    p(&["vault"], &["token", "create"], &[], NONE),
    p(&["vault"], &["print", "token"], &[], NONE),
    p(&["op"], &["read"], &[], NONE),
    p(&["op"], &["item", "get"], &[], NONE),
    p(&["bw"], &["get"], &[], NONE),
    p(&["gopass"], &["show"], &[], NONE),
    p(&["gopass"], &["cat"], &[], NONE),
    p(&["secret-tool"], &["lookup"], &[], NONE),
    p(&["keyring"], &["get"], &[], NONE),
    p(&["sops"], &[], &["-d", "--decrypt"], NONE),
    p(&["ansible-vault"], &["view"], &[], NONE),
    p(&["git"], &["credential", "fill"], &[], NONE),
    p(
        &["gpg", "gpg2"],
        &[],
        &["--export-secret-keys", "--export-secret-subkeys"],
        NONE,
    ),
    p(
        &["security"],
        &["find-generic-password"],
        &["-w", "-g"],
        NONE,
    ),
    p(
        &["security"],
        &["find-internet-password"],
        &["-w", "-g"],
        NONE,
    ),
    p(&["security"], &["dump-keychain"], &[], NONE),
];

/// Words that name a secret in an environment variable (`printenv
/// AWS_SECRET_ACCESS_KEY`).
const SECRET_NAME_PARTS: &[&str] = &[
    "TOKEN",
    "SECRET",
    "PASSWORD",
    "PASSWD",
    "API_KEY",
    "APIKEY",
    "ACCESS_KEY",
    "PRIVATE_KEY",
    "CREDENTIAL",
    "SESSION",
    "AUTH",
];

fn secret_name(name: &str) -> bool {
    let upper = name.to_ascii_uppercase();
    SECRET_NAME_PARTS.iter().any(|p| upper.contains(p))
}

/// The known words of `cmd` (unknown ones are empty).
fn words(cmd: &Command) -> Vec<&str> {
    cmd.args()
        .iter()
        .map(|a| a.as_known().unwrap_or(""))
        .collect()
}

/// Does `words` hold `wanted` in order, among its words that are not
/// options (`gcloud --quiet auth print-access-token`)?
fn in_order(words: &[&str], wanted: &[&str]) -> bool {
    let mut it = words.iter().filter(|w| !w.starts_with('-'));
    wanted.iter().all(|w| it.any(|x| x == w))
}

/// For the commands that print the environment (`printenv`, `env`, `set`,
/// `export -p`): `Some` of whether command `i` (`cmd`, named `name`, with
/// the known `words`) prints it, or a variable whose name says secret, and
/// what it is; `None` for any other command.
fn environment_output(
    f: &Facts<'_>,
    i: usize,
    cmd: &Command,
    name: &str,
    words: &[&str],
) -> Option<Option<Produced>> {
    let runs_a_command = || f.commands().any(|(_, c)| c.parent == Some(i));
    let environment = || {
        Some(Produced {
            what: format!("`{name}` (the environment, with its tokens)"),
            audience: NONE,
        })
    };
    match name {
        // The whole environment, or a variable whose name says secret.
        "printenv" => {
            let names: Vec<&&str> = words.iter().filter(|w| !w.starts_with('-')).collect();
            if names.is_empty() {
                return Some(environment());
            }
            Some(
                names
                    .iter()
                    .find(|n| secret_name(n))
                    .map(|secret| Produced {
                        what: format!("`printenv {secret}`"),
                        audience: NONE,
                    }),
            )
        }
        "env" if !runs_a_command() && !cmd.args().iter().any(Arg::has_unknown) => {
            let operand = words
                .iter()
                .any(|w| !w.starts_with('-') && !w.contains('='));
            Some((!operand).then(environment).flatten())
        }
        "set" if words.is_empty() => Some(environment()),
        "export" | "declare" | "typeset"
            if words
                .iter()
                .all(|w| matches!(*w, "-p" | "-x" | "-px" | "-xp")) =>
        {
            Some(environment())
        }
        _ => None,
    }
}

/// Whether command `i` prints a credential, and what it is.
pub(super) fn credential_output(f: &Facts<'_>, i: usize) -> Option<Produced> {
    let cmd = f.command(i)?;
    let name = cmd.name()?;
    let words = words(cmd);
    let shown = |extra: &[&str]| {
        let mut parts = vec![name];
        parts.extend(extra);
        parts.join(" ")
    };
    if let Some(printed) = environment_output(f, i, cmd, name, &words) {
        return printed;
    }
    // `kubectl get secret NAME -o yaml`: the secret's values (base64).
    if matches!(name, "kubectl" | "oc")
        && in_order(&words, &["get"])
        && words
            .iter()
            .any(|w| *w == "secret" || *w == "secrets" || w.starts_with("secret/"))
        && words.iter().any(|w| {
            *w == "-o" || *w == "--output" || w.starts_with("-o") || w.starts_with("--output=")
        })
    {
        return Some(Produced {
            what: "`kubectl get secret -o …`".to_owned(),
            audience: NONE,
        });
    }
    // `docker-credential-desktop get`, `docker-credential-pass get`.
    if name.starts_with("docker-credential-") && words.contains(&"get") {
        return Some(Produced {
            what: format!("`{name} get`"),
            audience: NONE,
        });
    }
    // `pass show NAME`, or `pass NAME` (show is pass's default).
    if name == "pass" {
        let first = words.iter().find(|w| !w.starts_with('-'))?;
        const OTHER: &[&str] = &[
            "ls", "list", "find", "search", "grep", "insert", "add", "edit", "generate", "rm",
            "remove", "delete", "mv", "rename", "cp", "copy", "git", "init", "help", "version",
        ];
        return (!OTHER.contains(first)).then(|| Produced {
            what: shown(&["show"]),
            audience: NONE,
        });
    }
    // `aws configure get aws_secret_access_key`.
    if name == "aws"
        && in_order(&words, &["configure", "get"])
        && words.iter().any(|w| secret_name(w))
    {
        return Some(Produced {
            what: shown(&["configure", "get"]),
            audience: AWS,
        });
    }
    // `npm config get //registry.npmjs.org/:_authToken`.
    if matches!(name, "npm" | "pnpm" | "yarn")
        && in_order(&words, &["config", "get"])
        && words
            .iter()
            .any(|w| w.to_ascii_lowercase().contains("auth") || secret_name(w))
    {
        return Some(Produced {
            what: shown(&["config", "get"]),
            audience: NONE,
        });
    }
    PRODUCERS
        .iter()
        .find(|p| {
            p.programs.contains(&name)
                && in_order(&words, p.words)
                && (p.flags.is_empty()
                    || words.iter().any(|w| {
                        p.flags.iter().any(|f| {
                            w == f || w.strip_prefix(f).is_some_and(|r| r.starts_with('='))
                        })
                    }))
        })
        .map(|p| Produced {
            what: format!("`{}`", shown(p.words)),
            audience: p.audience,
        })
}

/// Is `host` one of `audience`'s domains or below one?
pub(super) fn within(host: &str, audience: &[&str]) -> bool {
    let host = host.trim_end_matches('.').to_ascii_lowercase();
    audience
        .iter()
        .any(|d| host == *d || host.strip_suffix(d).is_some_and(|rest| rest.ends_with('.')))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn audiences() {
        assert!(within("api.github.com", GITHUB));
        assert!(within("github.com", GITHUB));
        assert!(!within("evilgithub.com", GITHUB));
        assert!(!within("github.com.evil.example", GITHUB));
        assert!(within("storage.googleapis.com", GOOGLE));
        assert!(!within("example.com", NONE));
    }

    #[test]
    fn words_in_order() {
        assert!(in_order(
            &["--quiet", "auth", "print-access-token"],
            &["auth", "print-access-token"]
        ));
        assert!(!in_order(
            &["auth", "list"],
            &["auth", "print-access-token"]
        ));
    }
}
