//! Which paths name credential files.
//!
//! Shared by the `credential-exfiltration` hard deny (a credential file read
//! and sent to a network sink) and by routing (reads of sensitive paths go to
//! the model even when reads otherwise pass). Matching is on path components
//! at the end of the path, "under any path prefix": `~/.aws/credentials`,
//! `/home/dev/.aws/credentials` and `../../.aws/credentials` all match.

/// Suffixes (as path components) that name a credential file.
const CREDENTIAL_SUFFIXES: &[&[&str]] = &[
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
    &["adapter.token"],
    &["operator.token"],
    &["hmac.key"],
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

/// True when `path` names a known credential file.
pub fn is_credential_path(path: &str) -> bool {
    let parts = components(path);
    let Some(name) = parts.last() else {
        return false;
    };
    if is_env_file(name) || is_ssh_private_key(&parts) {
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
