//! Every tool's switch that turns TLS certificate verification off, as
//! data: environment variables, command-line flags (the ones whose name
//! says what they do, on any program, and the plain `--insecure` of the
//! tools where that is what it means), configuration settings, and the
//! protocol downgrades that leave nothing to verify (an `http://` package
//! registry, a git `insteadOf` that rewrites `https://` to `http://`).
//!
//! A switch set to its secure value is not weakening: `--insecure=false`,
//! `--tls-verify=true`, `NODE_TLS_REJECT_UNAUTHORIZED=1`, `strict-ssl
//! true`. A flag is a whole word (`-insecure` inside `-insecure=false` or a
//! grep pattern is not the flag).

use super::HardRule;
use super::net;

/// Values tools read as false.
pub(super) fn falsey(text: &str) -> bool {
    matches!(
        text.trim().to_ascii_lowercase().as_str(),
        "false" | "0" | "no" | "off" | "n" | "f"
    )
}

/// Values tools read as true.
pub(super) fn truthy(text: &str) -> bool {
    matches!(
        text.trim().to_ascii_lowercase().as_str(),
        "true" | "1" | "yes" | "on" | "y" | "t"
    )
}

/// How an environment variable's value weakens verification.
#[derive(Debug, Clone, Copy)]
enum Judge {
    /// Set at all, even empty (git reads `getenv(…) != NULL`).
    Set,
    /// Any value that is not empty.
    NonEmpty,
    /// Any value that is not empty and not false (an unknown value too).
    NotFalse,
    /// An explicit false (verification is the default).
    False,
    /// Exactly `0` (an unknown value too).
    Zero,
    /// Empty or `/dev/null` (Python requests reads an empty bundle as no
    /// verification).
    EmptyBundle,
    /// Its text holds one of these switches (`GOFLAGS=-insecure`,
    /// `MAVEN_OPTS=-Dmaven.wagon.http.ssl.insecure=true`).
    Holds,
    /// A plain `http://` URL to a host that is not loopback.
    HttpUrl,
}

/// The variables, with how each weakens and the rule that names it.
const ENV: &[(&str, Judge, HardRule)] = &[
    (
        "GIT_SSL_NO_VERIFY",
        Judge::Set,
        HardRule::TransportGitSslNoVerify,
    ),
    (
        "NODE_TLS_REJECT_UNAUTHORIZED",
        Judge::Zero,
        HardRule::TransportNodeTlsRejectUnauthorized,
    ),
    (
        "PYTHONHTTPSVERIFY",
        Judge::Zero,
        HardRule::TransportPythonHttpsVerify,
    ),
    (
        "NPM_CONFIG_STRICT_SSL",
        Judge::False,
        HardRule::TransportNpmStrictSslOff,
    ),
    (
        "npm_config_strict_ssl",
        Judge::False,
        HardRule::TransportNpmStrictSslOff,
    ),
    (
        "YARN_STRICT_SSL",
        Judge::False,
        HardRule::TransportNpmStrictSslOff,
    ),
    (
        "YARN_ENABLE_STRICT_SSL",
        Judge::False,
        HardRule::TransportNpmStrictSslOff,
    ),
    (
        "UV_INSECURE_HOST",
        Judge::NonEmpty,
        HardRule::TransportToolVerifyOff,
    ),
    (
        "GOINSECURE",
        Judge::NonEmpty,
        HardRule::TransportToolVerifyOff,
    ),
    (
        "GONOSUMDB",
        Judge::NonEmpty,
        HardRule::TransportToolVerifyOff,
    ),
    (
        "GONOSUMCHECK",
        Judge::NonEmpty,
        HardRule::TransportToolVerifyOff,
    ),
    (
        "GIT_SSL_CAINFO_DISABLE",
        Judge::NonEmpty,
        HardRule::TransportToolVerifyOff,
    ),
    (
        "AZURE_CLI_DISABLE_CONNECTION_VERIFICATION",
        Judge::NonEmpty,
        HardRule::TransportToolVerifyOff,
    ),
    (
        "VAULT_SKIP_VERIFY",
        Judge::NotFalse,
        HardRule::TransportToolVerifyOff,
    ),
    (
        "NOMAD_SKIP_VERIFY",
        Judge::NotFalse,
        HardRule::TransportToolVerifyOff,
    ),
    (
        "CONSUL_HTTP_SSL_VERIFY",
        Judge::False,
        HardRule::TransportToolVerifyOff,
    ),
    (
        "HELM_KUBEINSECURE_SKIP_TLS_VERIFY",
        Judge::NotFalse,
        HardRule::TransportToolVerifyOff,
    ),
    (
        "HELM_INSECURE_SKIP_TLS_VERIFY",
        Judge::NotFalse,
        HardRule::TransportToolVerifyOff,
    ),
    (
        "CLOUDSDK_AUTH_DISABLE_SSL_VALIDATION",
        Judge::NotFalse,
        HardRule::TransportToolVerifyOff,
    ),
    (
        "ANSIBLE_GALAXY_IGNORE",
        Judge::NotFalse,
        HardRule::TransportToolVerifyOff,
    ),
    (
        "BUNDLE_SSL_VERIFY_MODE",
        Judge::Zero,
        HardRule::TransportToolVerifyOff,
    ),
    (
        "CONDA_SSL_VERIFY",
        Judge::False,
        HardRule::TransportToolVerifyOff,
    ),
    (
        "CURL_CA_BUNDLE",
        Judge::EmptyBundle,
        HardRule::TransportCaBundleOff,
    ),
    (
        "REQUESTS_CA_BUNDLE",
        Judge::EmptyBundle,
        HardRule::TransportCaBundleOff,
    ),
    ("GOFLAGS", Judge::Holds, HardRule::TransportToolVerifyOff),
    ("MAVEN_OPTS", Judge::Holds, HardRule::TransportToolVerifyOff),
    ("MAVEN_ARGS", Judge::Holds, HardRule::TransportToolVerifyOff),
    (
        "JAVA_TOOL_OPTIONS",
        Judge::Holds,
        HardRule::TransportToolVerifyOff,
    ),
    (
        "_JAVA_OPTIONS",
        Judge::Holds,
        HardRule::TransportToolVerifyOff,
    ),
    (
        "NPM_CONFIG_REGISTRY",
        Judge::HttpUrl,
        HardRule::TransportProtocolDowngrade,
    ),
    (
        "npm_config_registry",
        Judge::HttpUrl,
        HardRule::TransportProtocolDowngrade,
    ),
    (
        "YARN_NPM_REGISTRY_SERVER",
        Judge::HttpUrl,
        HardRule::TransportProtocolDowngrade,
    ),
];

/// The rule an environment variable set to `value` (`None`: unknown)
/// breaks, if any. `SSL_CERT_FILE=/dev/null` and Poetry's
/// `POETRY_CERTIFICATES_<NAME>_CERT=false` are judged here too.
pub(super) fn env_weakens(name: &str, value: Option<&str>) -> Option<HardRule> {
    if name == "SSL_CERT_FILE" {
        return (value == Some("/dev/null")).then_some(HardRule::TransportCaBundleOff);
    }
    if name.starts_with("POETRY_CERTIFICATES_") && name.ends_with("_CERT") {
        return value
            .is_none_or(falsey)
            .then_some(HardRule::TransportToolVerifyOff);
    }
    let (_, judge, rule) = ENV.iter().find(|(n, _, _)| *n == name)?;
    let hit = match (judge, value) {
        (Judge::Set, _) => true,
        (Judge::NonEmpty | Judge::NotFalse | Judge::False | Judge::Zero, None) => true,
        (Judge::NonEmpty, Some(v)) => !v.is_empty(),
        (Judge::NotFalse, Some(v)) => !v.is_empty() && !falsey(v),
        (Judge::False, Some(v)) => falsey(v),
        (Judge::Zero, Some(v)) => v.trim() == "0",
        (Judge::EmptyBundle, v) => v.is_some_and(|v| v.is_empty() || v == "/dev/null"),
        (Judge::Holds, v) => v.is_some_and(|v| {
            v.split_whitespace().any(|w| {
                flag_weakens(w, None).is_some()
                    || insecure_word("go", w)
                    || maven_property_weakens(w)
            })
        }),
        (Judge::HttpUrl, v) => v.is_some_and(plain_http_remote),
    };
    hit.then_some(*rule)
}

/// A `http://` (or unauthenticated `git://`) URL whose host is not loopback.
pub(super) fn plain_http_remote(url: &str) -> bool {
    let lower = url.trim().trim_matches(['"', '\'']).to_ascii_lowercase();
    (lower.starts_with("http://") || lower.starts_with("git://")) && !net::is_loopback_url(&lower)
}

/// Flags that turn verification off on any program: their names say so.
const OFF_FLAGS: &[&str] = &[
    "insecure-skip-tls-verify",
    "insecure-skip-verify",
    "skip-tls-verify",
    "tls-skip-verify",
    "no-tls-verify",
    "tls-no-verify",
    "no-verify-ssl",
    "no-check-certificate",
    "ssl-no-verify",
    "no-ssl-verify",
    "skip-ssl-validation",
    "skip-ssl-verification",
    "disable-ssl-verification",
    "ignore-certificate-errors",
    "unsafely-ignore-certificate-errors",
    "trust-server-cert",
    "trust-server-cert-failures",
    "insecure-registry",
    "allow-insecure-registry",
    "allow-insecure-host",
    "insecure-tls",
    "ignore-certs",
];

/// Flags of [`OFF_FLAGS`] whose value is a list of hosts (or failures):
/// only those hosts lose verification.
const HOST_LIST_FLAGS: &[&str] = &[
    "unsafely-ignore-certificate-errors",
    "insecure-registry",
    "allow-insecure-registry",
    "allow-insecure-host",
];

/// Flags that keep verification on unless set false (`--tls-verify=false`).
const VERIFY_FLAGS: &[&str] = &[
    "tls-verify",
    "tlsverify",
    "src-tls-verify",
    "dest-tls-verify",
    "verify-ssl",
    "ssl-verify",
    "sslverify",
    "check-certificate",
    "verify-tls",
];

/// Whether one word (with the next, for a flag whose value is separate)
/// turns verification off, and the flag as shown. `--flag`, `-flag` (Go's
/// single dash), `--flag=true`; never `--flag=false`.
pub(super) fn flag_weakens(word: &str, next: Option<&str>) -> Option<String> {
    let lower = word.to_ascii_lowercase();
    let bare = lower
        .strip_prefix("--")
        .or_else(|| lower.strip_prefix('-'))?;
    let (name, value) = match bare.split_once('=') {
        Some((n, v)) => (n, Some(v)),
        None => (bare, None),
    };
    if OFF_FLAGS.contains(&name) {
        let hosts = if HOST_LIST_FLAGS.contains(&name) {
            value.or(next
                .filter(|n| !n.starts_with('-') && name != "unsafely-ignore-certificate-errors"))
        } else {
            None
        };
        let off = match (value, hosts) {
            (_, Some(list)) => !list
                .split([',', ' '])
                .filter(|h| !h.is_empty())
                .all(|h| net::is_loopback_url(h) || net::is_loopback_host(h)),
            (Some(v), None) => !falsey(v),
            (None, None) => true,
        };
        return off.then(|| word.to_owned());
    }
    if VERIFY_FLAGS.contains(&name) {
        return value.is_some_and(falsey).then(|| word.to_owned());
    }
    None
}

/// Programs whose plain `--insecure` (or Go's `-insecure`) skips
/// certificate verification. Elsewhere the word means other things
/// (`cockroach start --insecure` runs without TLS at all).
const INSECURE_TOOLS: &[&str] = &[
    "argocd",
    "crane",
    "gcrane",
    "grpcurl",
    "mc",
    "oras",
    "regctl",
    "talosctl",
    "go",
    "helm",
    "cosign",
    "notation",
    "vegeta",
    "conda",
    "mamba",
    "micromamba",
];

/// `--insecure`, `-insecure`, `--insecure=true` for [`INSECURE_TOOLS`].
pub(super) fn insecure_word(name: &str, word: &str) -> bool {
    if !INSECURE_TOOLS.contains(&name) {
        return false;
    }
    let lower = word.to_ascii_lowercase();
    let Some(bare) = lower.strip_prefix("--").or_else(|| lower.strip_prefix('-')) else {
        return false;
    };
    match bare.split_once('=') {
        Some(("insecure", v)) => !falsey(v),
        Some(_) => false,
        None => bare == "insecure",
    }
}

/// Java system properties that turn verification off for Maven's
/// transports (`-Dmaven.wagon.http.ssl.insecure=true`).
pub(super) fn maven_property_weakens(word: &str) -> bool {
    let Some(prop) = word.strip_prefix("-D") else {
        return false;
    };
    let (key, value) = prop.split_once('=').unwrap_or((prop, "true"));
    let key = key.to_ascii_lowercase();
    match key.as_str() {
        "maven.wagon.http.ssl.insecure"
        | "maven.wagon.http.ssl.allowall"
        | "maven.wagon.http.ssl.ignore.validity.dates"
        | "maven.resolver.transport.insecure" => !falsey(value),
        "aether.connector.https.securitymode" => value.eq_ignore_ascii_case("insecure"),
        _ => false,
    }
}

/// The value `lower` (a command's words, lowercased) gives `key`: the
/// next word, or glued on with `=`.
fn config_value(lower: &[String], key: &str) -> Option<String> {
    lower.iter().enumerate().find_map(|(k, w)| {
        if w == key {
            lower.get(k + 1).cloned()
        } else {
            w.strip_prefix(key)
                .and_then(|r| r.strip_prefix('='))
                .map(str::to_owned)
        }
    })
}

/// The first word of `lower` that `key` accepts and whose next word
/// `value` accepts (`certificates.X.cert false`).
fn key_then_value(
    lower: &[String],
    key: impl Fn(&str) -> bool,
    value: impl Fn(&str) -> bool,
) -> Option<&String> {
    lower
        .iter()
        .enumerate()
        .find(|(k, w)| key(w) && lower.get(k + 1).is_some_and(|v| value(v)))
        .map(|(_, w)| w)
}

/// The registry a JavaScript package manager's words (`lower`) set, when
/// it is a plain-HTTP remote.
fn plain_http_registry(lower: &[String]) -> Option<String> {
    let key_value = |key: &str| config_value(lower, key);
    let registry = key_value("registry")
        .or_else(|| key_value("--registry"))
        .or_else(|| key_value("npmregistryserver"));
    registry.filter(|r| plain_http_remote(r))
}

/// The source `gem sources` adds (`-a`, `--add`, `--source`; words
/// `lower`), when it is a plain-HTTP remote.
fn plain_http_gem_source(lower: &[String]) -> Option<&str> {
    let at = |w: &str| lower.iter().position(|x| x == w);
    let after = |w: &str| at(w).and_then(|k| lower.get(k + 1)).map(String::as_str);
    let source = after("-a")
        .or_else(|| after("--add"))
        .or_else(|| after("--source"));
    source.filter(|s| plain_http_remote(s))
}

/// Whether an ansible command (`name`, its words `lower`) is told not to
/// validate TLS certificates: `validate_certs=no`, `ansible-galaxy -c`.
fn ansible_skips_validation(name: &str, lower: &[String]) -> bool {
    let validate_off = lower.iter().any(|w| {
        w.split_whitespace().any(|part| {
            part.strip_prefix("validate_certs=")
                .or_else(|| part.strip_prefix("validate_certs:"))
                .is_some_and(|v| falsey(v.trim_matches(['"', '\''])))
        })
    });
    let ignore = name == "ansible-galaxy" && lower.iter().any(|w| w == "-c");
    validate_off || ignore
}

/// The known words of one command, and what a configuration-setting
/// command of a tool sets: `gcloud config set auth/disable_ssl_validation
/// true`, `az config set core.disable_connection_verification=1`, `bundle
/// config set ssl_verify_mode 0`, `poetry config certificates.X.cert
/// false`, `npm config set registry http://…`, `gem sources -a http://…`,
/// ansible's `validate_certs=no`, gsutil's boto option. The description
/// and rule of the first that weakens.
pub(super) fn tool_config(name: &str, words: &[&str]) -> Option<(HardRule, String)> {
    let lower: Vec<String> = words.iter().map(|w| w.to_ascii_lowercase()).collect();
    let off = HardRule::TransportToolVerifyOff;
    let downgrade = HardRule::TransportProtocolDowngrade;
    let key_value = |key: &str| config_value(&lower, key);
    match name {
        "gcloud" => key_value("auth/disable_ssl_validation")
            .filter(|v| truthy(v))
            .map(|_| {
                (
                    off,
                    "`gcloud` set to skip TLS certificate validation".to_owned(),
                )
            }),
        "az" => key_value("core.disable_connection_verification")
            .filter(|v| !v.is_empty() && !falsey(v))
            .map(|_| {
                (
                    off,
                    "`az` set to skip TLS connection verification".to_owned(),
                )
            }),
        "bundle" | "bundler" => key_value("ssl_verify_mode")
            .filter(|v| v.trim() == "0")
            .map(|_| (off, "`bundle` set to `ssl_verify_mode 0`".to_owned())),
        "poetry" => key_then_value(
            &lower,
            |w| w.starts_with("certificates.") && w.ends_with(".cert"),
            falsey,
        )
        .map(|w| {
            (
                off,
                format!("`poetry config {w} false` skips TLS certificate verification"),
            )
        }),
        "npm" | "pnpm" | "yarn" | "bun" => plain_http_registry(&lower).map(|r| {
            (
                downgrade,
                format!("`{name}` uses the plain-HTTP registry `{r}`"),
            )
        }),
        "gem" => plain_http_gem_source(&lower)
            .map(|s| (downgrade, format!("`gem` uses the plain-HTTP source `{s}`"))),
        "ansible" | "ansible-playbook" | "ansible-galaxy" | "ansible-pull" => {
            ansible_skips_validation(name, &lower).then(|| {
                (
                    off,
                    format!("`{name}` told not to validate TLS certificates"),
                )
            })
        }
        // `kubectl config set clusters.prod.insecure-skip-tls-verify true`.
        "kubectl" | "oc" => {
            key_then_value(&lower, |w| w.ends_with("insecure-skip-tls-verify"), truthy).map(|w| {
                (
                    off,
                    format!("`{name} config set {w} true` skips TLS verification"),
                )
            })
        }
        "gsutil" => lower
            .iter()
            .any(|w| {
                w.replace(' ', "")
                    .contains("https_validate_certificates=false")
            })
            .then(|| {
                (
                    off,
                    "`gsutil` told not to validate TLS certificates".to_owned(),
                )
            }),
        _ => None,
    }
}

/// A git `url.<base>.insteadOf <prefix>` (or `pushInsteadOf`) that rewrites
/// a secure prefix (`https://`, `ssh://`, `git@`) into plain `http://` or
/// `git://`: every fetch from it is then unauthenticated.
pub(super) fn git_insteadof_downgrade(key: &str, value: &str) -> bool {
    let lower = key.to_ascii_lowercase();
    let Some(rest) = lower.strip_prefix("url.") else {
        return false;
    };
    let Some(base) = rest
        .strip_suffix(".insteadof")
        .or_else(|| rest.strip_suffix(".pushinsteadof"))
    else {
        return false;
    };
    let value = value.trim().to_ascii_lowercase();
    let secure =
        value.starts_with("https://") || value.starts_with("ssh://") || value.starts_with("git@");
    plain_http_remote(base) && secure
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flags_by_value() {
        assert!(flag_weakens("--insecure-skip-tls-verify", None).is_some());
        assert!(flag_weakens("--insecure-skip-tls-verify=true", None).is_some());
        assert!(flag_weakens("--insecure-skip-tls-verify=false", None).is_none());
        assert!(flag_weakens("-tls-skip-verify", None).is_some());
        assert!(flag_weakens("--tls-verify=false", None).is_some());
        assert!(flag_weakens("--tls-verify=true", None).is_none());
        assert!(flag_weakens("--insecure-registry", Some("localhost:5000")).is_none());
        assert!(flag_weakens("--insecure-registry=r.example.com:5000", None).is_some());
        assert!(
            flag_weakens(
                "--unsafely-ignore-certificate-errors=localhost,127.0.0.1",
                None
            )
            .is_none()
        );
        assert!(flag_weakens("--unsafely-ignore-certificate-errors", Some("main.ts")).is_some());
        assert!(flag_weakens("-insecure", None).is_none());
        assert!(flag_weakens("--no-verify", None).is_none());
    }

    #[test]
    fn insecure_is_per_tool() {
        assert!(insecure_word("argocd", "--insecure"));
        assert!(insecure_word("go", "-insecure"));
        assert!(!insecure_word("go", "-insecure=false"));
        assert!(!insecure_word("cockroach", "--insecure"));
        assert!(!insecure_word("grep", "-insecure"));
    }

    #[test]
    fn environment() {
        assert!(env_weakens("GIT_SSL_NO_VERIFY", Some("")).is_some());
        assert!(env_weakens("NODE_TLS_REJECT_UNAUTHORIZED", Some("1")).is_none());
        assert!(env_weakens("CURL_CA_BUNDLE", Some("")).is_some());
        assert!(env_weakens("CURL_CA_BUNDLE", Some("/etc/ssl/certs/ca.pem")).is_none());
        assert!(env_weakens("VAULT_SKIP_VERIFY", Some("false")).is_none());
        assert!(env_weakens("VAULT_SKIP_VERIFY", Some("1")).is_some());
        assert!(env_weakens("GOFLAGS", Some("-mod=mod -insecure")).is_some());
        assert!(env_weakens("GOFLAGS", Some("-mod=mod")).is_none());
        assert!(env_weakens("GOINSECURE", Some("")).is_none());
        assert!(env_weakens("npm_config_registry", Some("http://registry.npmjs.org/")).is_some());
        assert!(env_weakens("npm_config_registry", Some("http://localhost:4873/")).is_none());
    }

    #[test]
    fn downgrades() {
        assert!(git_insteadof_downgrade(
            "url.http://github.com/.insteadOf",
            "https://github.com/"
        ));
        assert!(!git_insteadof_downgrade(
            "url.https://github.com/.insteadOf",
            "git@github.com:"
        ));
        assert!(!git_insteadof_downgrade(
            "url.git@github.com:.insteadOf",
            "https://github.com/"
        ));
    }
}
