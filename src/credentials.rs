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
//! - cloud and tool tokens: AWS (and its SSO and CLI caches), kube, docker
//!   and podman, npm, yarn, netrc, pgpass, MySQL, git credentials (the
//!   store's two locations), GitHub's and hub's hosts files, PyPI, RubyGems,
//!   Cargo, Terraform, Pulumi, Vault, boto, s3cmd, rclone, Databricks,
//!   DigitalOcean, Kaggle, Hugging Face, Maven's settings, Composer's auth,
//!   age keys, the harnesses' own auth files, vouch's tokens and key;
//! - Terraform state and variable files (`*.tfstate`, `*.tfvars`): they
//!   hold the secrets the configuration was given, in plain text;
//! - a process's environment (`/proc/PID/environ`), where tokens live;
//! - gcloud's application-default credentials and its token databases
//!   (`~/.config/gcloud/application_default_credentials.json`,
//!   `credentials.db`, `access_tokens.db`, `legacy_credentials/`);
//! - Azure's token caches (`~/.azure/msal_token_cache.*`,
//!   `accessTokens.json`);
//! - the system password hashes (`/etc/shadow`, `/etc/gshadow`);
//! - SSH private keys: `id_rsa`, `id_ed25519`, `id_ecdsa`, `id_dsa` (and
//!   their `_sk` forms) wherever they are, any other file in a `.ssh`
//!   directory that is not one of its public files (`*.pub`,
//!   `known_hosts`, `config`, `authorized_keys`, …), and the host keys
//!   (`/etc/ssh/ssh_host_*_key`);
//! - key stores: `*.p12`, `*.pfx`, `*.jks`, `*.keystore`;
//! - `.htpasswd` (password hashes, like `/etc/shadow`);
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
    &[".config", "git", "credentials"],
    &[".config", "gh", "hosts.yml"],
    &[".config", "hub"],
    &[".pypirc"],
    &[".gem", "credentials"],
    &[".cargo", "credentials"],
    &[".cargo", "credentials.toml"],
    &[".terraform.d", "credentials.tfrc.json"],
    &[".terraformrc"],
    &[".pulumi", "credentials.json"],
    &[".vault-token"],
    &[".boto"],
    &[".s3cfg"],
    &[".my.cnf"],
    &[".mylogin.cnf"],
    &["_netrc"],
    &[".yarnrc.yml"],
    &[".databrickscfg"],
    &["rclone", "rclone.conf"],
    &["doctl", "config.yaml"],
    &[".kaggle", "kaggle.json"],
    &["huggingface", "token"],
    &[".huggingface", "token"],
    &["huggingface", "stored_tokens"],
    &[".m2", "settings.xml"],
    &[".m2", "settings-security.xml"],
    &["composer", "auth.json"],
    &["containers", "auth.json"],
    &["sops", "age", "keys.txt"],
    &[".htpasswd"],
    &["kubernetes", "admin.conf"],
    &["k3s", "k3s.yaml"],
    &[".codex", "auth.json"],
    &[".claude", ".credentials.json"],
    &[".gemini", "oauth_creds.json"],
    &[".qwen", "oauth_creds.json"],
    &["github-copilot", "hosts.json"],
    &["github-copilot", "apps.json"],
    &["opencode", "auth.json"],
    &[".pi", "agent", "auth.json"],
    &["gcloud", "application_default_credentials.json"],
    &["gcloud", "credentials.db"],
    &["gcloud", "access_tokens.db"],
    &[".azure", "accessTokens.json"],
    &[".azure", "msal_token_cache.json"],
    &[".azure", "msal_token_cache.bin"],
    &[".azure", "service_principal_entries.json"],
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
    &["terraform.tfstate"],
    &["terraform.tfvars"],
    &[".envrc"],
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
    &[".config", "gh"],
    &[".password-store"],
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

/// The files of a `.ssh` directory that are not secret.
const SSH_PUBLIC_FILES: &[&str] = &[
    "known_hosts",
    "known_hosts.old",
    "config",
    "authorized_keys",
    "authorized_keys2",
    "environment",
    "rc",
    "allowed_signers",
];

/// The conventional names of an SSH private key, wherever it lies.
const SSH_KEY_NAMES: &[&str] = &["id_rsa", "id_ed25519", "id_ecdsa", "id_dsa", "identity"];

/// An SSH private key: a conventional key name (`id_rsa`, `id_ed25519_sk`)
/// anywhere, any file in a `.ssh` directory but its public ones, and a
/// host key (`ssh_host_ed25519_key`).
fn is_ssh_private_key(parts: &[&str]) -> bool {
    let Some((name, dirs)) = parts.split_last() else {
        return false;
    };
    if name.ends_with(".pub") {
        return false;
    }
    let key_name = SSH_KEY_NAMES
        .iter()
        .any(|k| *name == *k || name.strip_prefix(k).is_some_and(|r| r == "_sk"));
    let in_ssh_dir = dirs.last() == Some(&".ssh")
        && !SSH_PUBLIC_FILES.contains(name)
        && !name.starts_with("known_hosts")
        && !name.starts_with("config")
        && !name.ends_with(".sock")
        && !name.starts_with('.');
    let host_key = name.starts_with("ssh_host_") && name.ends_with("_key");
    key_name || in_ssh_dir || host_key
}

/// A key store or PKCS#12 bundle, which holds private keys.
fn is_key_store(name: &str) -> bool {
    [".p12", ".pfx", ".jks", ".keystore"]
        .iter()
        .any(|ext| name.len() > ext.len() && name.ends_with(ext))
}

/// Terraform state (and its backup) and variable files, which hold the
/// configuration's secrets in plain text; an example or template is not.
fn is_terraform_secret(name: &str) -> bool {
    let template = ["example", "sample", "template", "dist"]
        .iter()
        .any(|t| name.contains(t));
    !template
        && (name.ends_with(".tfstate")
            || name.ends_with(".tfstate.backup")
            || name.ends_with(".tfvars")
            || name.ends_with(".tfvars.json"))
}

/// Places whose every file is a credential: gcloud's legacy credentials,
/// the AWS SSO and CLI caches, GnuPG's private keys, a process's
/// environment.
fn in_credential_store(parts: &[&str]) -> bool {
    const STORES: &[&[&str]] = &[
        &["gcloud", "legacy_credentials"],
        &[".aws", "sso", "cache"],
        &[".aws", "cli", "cache"],
        &[".gnupg", "private-keys-v1.d"],
    ];
    let below = |dir: &[&str]| {
        parts
            .windows(dir.len())
            .enumerate()
            .any(|(k, w)| w == dir && k + dir.len() < parts.len())
    };
    STORES.iter().any(|dir| below(dir))
        || matches!(
            parts,
            ["proc", _, "environ"] | ["proc", _, "task", _, "environ"]
        )
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
        || *name == ".envrc"
        || is_ssh_private_key(&parts)
        || is_tls_private_key(&parts)
        || is_azure_token_cache(&parts)
        || is_key_store(name)
        || is_terraform_secret(name)
        || in_credential_store(&parts)
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
    let key_like = [
        ".pem",
        ".key",
        ".p12",
        ".pfx",
        ".keystore",
        ".jks",
        ".ppk",
        ".ovpn",
        ".keytab",
    ]
    .iter()
    .any(|ext| name.ends_with(ext));
    in_sensitive_dir
        || key_like
        || is_history(name)
        || ((name.ends_with(".asc") || name.ends_with(".gpg"))
            && (name.contains("private") || name.contains("secret")))
        || is_token_file(name)
        || name.starts_with("id_")
        || *name == "shadow"
        || *name == "sudoers"
}

/// Shell and REPL histories: commands typed with secrets in them.
fn is_history(name: &str) -> bool {
    matches!(
        name,
        ".bash_history"
            | ".zsh_history"
            | ".sh_history"
            | ".history"
            | ".python_history"
            | ".node_repl_history"
            | ".psql_history"
            | ".mysql_history"
            | ".sqlite_history"
            | ".rediscli_history"
            | ".irb_history"
            | ".lesshst"
            | ".viminfo"
    ) || name.ends_with("_history")
}

/// Files that hold a token or key by their conventional names: kubeconfigs,
/// WireGuard configurations, cloud service-account keys, OAuth client
/// secrets.
fn is_token_file(name: &str) -> bool {
    name == "kubeconfig"
        || name.ends_with(".kubeconfig")
        || (name.starts_with("wg") && name.ends_with(".conf"))
        || (name.starts_with("service-account") && name.ends_with(".json"))
        || (name.starts_with("client_secret") && name.ends_with(".json"))
        || name == "credentials.json"
        || name == "application_default_credentials.json"
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
            "~/.config/gh/hosts.yml",
            "~/.git-credentials",
            "~/.config/git/credentials",
            "~/.config/hub",
            "~/.pypirc",
            "~/.gem/credentials",
            "~/.cargo/credentials",
            "~/.cargo/credentials.toml",
            "~/.terraform.d/credentials.tfrc.json",
            "~/.azure/service_principal_entries.json",
            "~/.config/gcloud/legacy_credentials/dev@example.com/adc.json",
            "~/.vault-token",
            "~/.boto",
            "~/.s3cfg",
            "~/.pgpass",
            "~/.my.cnf",
            "~/.netrc",
            "infra/prod.tfvars",
            "terraform.tfstate",
            "terraform.tfstate.backup",
            "~/.aws/sso/cache/abc.json",
            "~/.aws/cli/cache/role.json",
            "/proc/self/environ",
            "/proc/1/environ",
            "id_rsa",
            "/tmp/id_ed25519_sk",
            "~/.ssh/deploy_key",
            "~/.ssh/github.pem",
            "/etc/ssh/ssh_host_ed25519_key",
            "~/.gnupg/private-keys-v1.d/ABCD.key",
            "signing.p12",
            "release.keystore",
            ".envrc",
            "~/.config/rclone/rclone.conf",
            "~/.kaggle/kaggle.json",
            "~/.cache/huggingface/token",
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
            "~/.ssh/known_hosts",
            "~/.ssh/config",
            "~/.ssh/authorized_keys",
            "~/.ssh/id_ed25519.pub",
            "/etc/ssh/ssh_host_ed25519_key.pub",
            "/etc/ssh/sshd_config",
            "terraform.tfvars.example",
            "variables.tf",
            "main.tf",
            "/proc/self/status",
            "~/.aws/config",
            "~/.cargo/config.toml",
            "~/.gnupg/pubring.kbx",
            "~/.config/gh/config.yml",
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
