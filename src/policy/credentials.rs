//! Which paths name credential files: the one list.
//!
//! Shared by the `credential-exfiltration` hard deny (a credential file read
//! and sent to a network sink), the trust rules and routing (reads of
//! sensitive paths go to the model even when reads otherwise pass).
//! Matching is on path components at the end of the path, "under any path
//! prefix": `~/.aws/credentials`, `/home/dev/.aws/credentials` and
//! `../../.aws/credentials` all match.
//!
//! What counts (and what does not) is decided here, by name alone — vouch
//! never reads a file to see what it holds:
//!
//! - cloud and tool tokens: AWS, kube, docker, npm, netrc, pgpass, git
//!   credentials, the harnesses' own auth files, vouch's tokens and key;
//! - gcloud's application-default credentials and its token databases
//!   (`~/.config/gcloud/application_default_credentials.json`,
//!   `credentials.db`, `access_tokens.db`, `legacy_credentials/`);
//! - Azure's token caches (`~/.azure/msal_token_cache.*`,
//!   `accessTokens.json`);
//! - the system password hashes (`/etc/shadow`, `/etc/gshadow`);
//! - SSH private keys (`.ssh/id_*` but not `.pub`);
//! - TLS private keys by their conventional names: `*.key`, `privkey*.pem`,
//!   `key.pem`, `*-key.pem`, `*_key.pem`, and anything under an `ssl`/`tls`
//!   `private/` directory. A plain `*.pem` is usually a certificate (public)
//!   and is only *sensitive* (routing), not a credential: whether it holds a
//!   private key is file content, which a static floor cannot see.

/// Suffixes (as path components) that name a credential file. Patterns
/// (`rm ~/.ssh/id_*`) are tested against these and [`PATTERN_SHAPES`].
pub const CREDENTIAL_SUFFIXES: &[&[&str]] = &[
    &[".aws", "credentials"],
    &[".kube", "config"],
    &[".docker", "config.json"],
    &[".npmrc"],
    &[".netrc"],
    &[".pgpass"],
    &[".git-credentials"],
    &[".codex", "auth.json"],
    &[".claude", ".credentials.json"],
    &[".pi", "agent", "auth.json"],
    &["gcloud", "application_default_credentials.json"],
    &["gcloud", "credentials.db"],
    &["gcloud", "access_tokens.db"],
    &[".azure", "accessTokens.json"],
    &[".azure", "msal_token_cache.json"],
    &[".azure", "msal_token_cache.bin"],
    &["etc", "shadow"],
    &["etc", "gshadow"],
    &["adapter.token"],
    &["operator.token"],
    &["hmac.key"],
];

/// Names a pattern is also tested against: the rule-based credentials
/// ([`is_env_file`], SSH and TLS private keys) in their common spellings.
pub const PATTERN_SHAPES: &[&[&str]] = &[
    &[".env"],
    &[".env.local"],
    &[".env.production"],
    &[".env.development.local"],
    &[".env.production.local"],
    &[".ssh", "id_rsa"],
    &[".ssh", "id_ed25519"],
    &[".ssh", "id_ecdsa"],
    &[".ssh", "id_dsa"],
    &["privkey.pem"],
    &["server.key"],
];

/// Directories whose recursive read takes credentials along.
pub const CREDENTIAL_DIRS: &[&[&str]] = &[
    &[".ssh"],
    &[".aws"],
    &[".kube"],
    &[".docker"],
    &[".gnupg"],
    &[".codex"],
    &[".azure"],
    &[".config", "gcloud"],
];

/// `.env` variants that are templates, not secrets.
const ENV_TEMPLATE_SUFFIXES: &[&str] = &["example", "sample", "template", "dist", "defaults"];

/// Splits a path into its normal components, ignoring empty and `.` parts.
fn components(path: &str) -> Vec<&str> {
    path.split('/')
        .filter(|c| !c.is_empty() && *c != ".")
        .collect()
}

/// `.env`, `.env.local`, `.env.production.local`, … but not `.env.example`.
pub fn is_env_file(name: &str) -> bool {
    if name == ".env" {
        return true;
    }
    let Some(rest) = name.strip_prefix(".env.") else {
        return false;
    };
    !rest.is_empty()
        && !rest
            .split('.')
            .any(|part| ENV_TEMPLATE_SUFFIXES.contains(&part.to_ascii_lowercase().as_str()))
}

/// An SSH private key: `.ssh/id_*` other than a `.pub` public key.
fn is_ssh_private_key(parts: &[&str]) -> bool {
    match parts {
        [.., dir, name] => *dir == ".ssh" && name.starts_with("id_") && !name.ends_with(".pub"),
        _ => false,
    }
}

/// A TLS private key by its conventional names (see the module doc).
fn is_tls_private_key(parts: &[&str]) -> bool {
    let Some((name, dirs)) = parts.split_last() else {
        return false;
    };
    let in_private_dir = dirs
        .windows(2)
        .any(|w| matches!(w, [tls, "private"] if matches!(*tls, "ssl" | "tls" | "pki")));
    (name.len() > ".key".len() && name.ends_with(".key"))
        || (name.starts_with("privkey") && name.ends_with(".pem"))
        || *name == "key.pem"
        || name.ends_with("-key.pem")
        || name.ends_with("_key.pem")
        || in_private_dir
}

/// An Azure token cache: `.azure/msal_token_cache.*`.
fn is_azure_token_cache(parts: &[&str]) -> bool {
    matches!(parts, [.., ".azure", name] if name.starts_with("msal_token_cache."))
}

/// True when `path` names a known credential file.
pub fn is_credential_path(path: &str) -> bool {
    let parts = components(path);
    let Some(name) = parts.last() else {
        return false;
    };
    if is_env_file(name)
        || is_ssh_private_key(&parts)
        || is_tls_private_key(&parts)
        || is_azure_token_cache(&parts)
    {
        return true;
    }
    CREDENTIAL_SUFFIXES
        .iter()
        .any(|suffix| parts.ends_with(suffix))
}

/// Broader than credentials: anything whose read deserves a model's look
/// (private keys, keyrings, cloud and harness configs).
pub fn is_sensitive_path(path: &str) -> bool {
    if is_credential_path(path) {
        return true;
    }
    let parts = components(path);
    let Some(name) = parts.last() else {
        return false;
    };
    let sensitive_dirs = [
        ".ssh",
        ".gnupg",
        ".aws",
        ".kube",
        ".docker",
        ".azure",
        ".config/gcloud",
    ];
    let in_sensitive_dir = parts.iter().any(|p| sensitive_dirs.contains(p))
        || parts.windows(2).any(|w| w == [".config", "gcloud"]);
    let key_like = [".pem", ".key", ".p12", ".pfx", ".keystore", ".jks"]
        .iter()
        .any(|ext| name.ends_with(ext));
    in_sensitive_dir
        || key_like
        || name.starts_with("id_")
        || *name == "shadow"
        || *name == "sudoers"
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn credential_files_under_any_prefix() {
        for p in [
            ".env",
            "./.env.local",
            "/srv/app/.env.production.local",
            "~/.ssh/id_rsa",
            "/home/dev/.ssh/id_ed25519",
            "$HOME/.aws/credentials",
            "../../.kube/config",
            "~/.docker/config.json",
            "~/.npmrc",
            "/root/.netrc",
            "~/.codex/auth.json",
            "~/.claude/.credentials.json",
            "~/.pi/agent/auth.json",
            "/x/state/vouch/operator.token",
            "hmac.key",
            "~/.config/gcloud/application_default_credentials.json",
            "~/.config/gcloud/credentials.db",
            "~/.config/gcloud/access_tokens.db",
            "~/.azure/msal_token_cache.json",
            "~/.azure/msal_token_cache.bin",
            "~/.azure/accessTokens.json",
            "/etc/shadow",
            "/etc/ssl/private/server.key",
            "/etc/ssl/private/anything",
            "/etc/letsencrypt/live/x/privkey.pem",
            "certs/tls-key.pem",
        ] {
            assert!(is_credential_path(p), "{p}");
        }
    }

    #[test]
    fn templates_and_lookalikes_are_not_credentials() {
        for p in [
            ".env.example",
            ".env.sample",
            "config/.env.template",
            "~/.ssh/id_rsa.pub",
            "~/.ssh/known_hosts",
            "environment.md",
            ".envrc.md",
            "credentials.md",
            "/etc/kube/config",
            "cert.pem",
            "/etc/letsencrypt/live/x/fullchain.pem",
            "/etc/passwd",
            "~/.azure/config",
            ".key",
            "",
        ] {
            assert!(!is_credential_path(p), "{p}");
        }
    }

    #[test]
    fn sensitive_is_wider_than_credentials() {
        assert!(is_sensitive_path("~/.ssh/known_hosts"));
        assert!(is_sensitive_path("certs/server.key"));
        assert!(is_sensitive_path("/etc/shadow"));
        assert!(!is_sensitive_path("src/main.rs"));
        assert!(!is_sensitive_path("README.md"));
    }
}
