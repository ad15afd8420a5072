//! `transport-security-weakening`: turning off TLS certificate
//! verification — `curl -k` (any unambiguous prefix), `wget
//! --no-check-certificate`, git's `http.sslVerify` in every way git reads
//! it (`-c`, `config`, an empty value, `GIT_SSL_NO_VERIFY`,
//! `GIT_CONFIG_COUNT`/`KEY_n`/`VALUE_n`, `GIT_CONFIG_PARAMETERS`), npm's
//! `strict-ssl`, pip's `--trusted-host`, `NODE_TLS_REJECT_UNAUTHORIZED=0`,
//! `PYTHONHTTPSVERIFY=0` — unless every URL involved is loopback. A proxy,
//! `--resolve` or `--connect-to` may send a loopback URL elsewhere, so it
//! ends the exemption.
//!
//! `curl -k` has two more exemptions ([`curl_without_remote_tls`]): every
//! URL is plain `http://` (no TLS to weaken), or every URL's host and port
//! is sent to loopback by `--resolve`/`--connect-to`. Neither holds with
//! `-L` (a redirect may lead to `https://` anywhere), a proxy, or the
//! proxy's and DoH's own `--proxy-insecure`/`--doh-insecure`.

use super::HardRule;
use crate::shell::spec::{Modifier, Role};
use crate::shell::{Arg, Value};

use super::facts::Facts;
use super::{HardDeny, deny, net, switches};

/// Values git reads as false.
fn falsey(text: &str) -> bool {
    matches!(
        text.trim().to_ascii_lowercase().as_str(),
        "false" | "0" | "no" | "off" | ""
    )
}

/// `http.sslVerify` or `http.<url>.sslVerify`; returns the URL scope.
fn ssl_verify_key(key: &str) -> Option<Option<String>> {
    let lower = key.to_ascii_lowercase();
    let inner = lower.strip_prefix("http.")?.strip_suffix("sslverify")?;
    let scope = inner.strip_suffix('.').unwrap_or(inner);
    Some((!scope.is_empty()).then(|| scope.to_owned()))
}

fn weak(rule: HardRule, what: String) -> Option<HardDeny> {
    deny(rule, what)
}

/// URLs of commands `from..` (what an assignment can affect).
/// What the rules ask about the commands around each one, computed in one
/// pass each way rather than by a scan per command (a line of 2,000
/// exports made the scans quadratic: 160 ms).
struct Around {
    /// From command `i` on, every request goes to a loopback address and
    /// there is at least one (`net::all_loopback` of the later URLs).
    loopback_after: Vec<bool>,
    /// From command `i` on, some request is routed elsewhere.
    routed_after: Vec<bool>,
    /// A proxy applies to command `i` (its own assignment or an earlier
    /// export).
    proxied: Vec<bool>,
}

impl Around {
    fn of(f: &Facts<'_>) -> Self {
        let n = f.analysis.commands.len();
        let mut loopback_after = vec![false; n + 1];
        let mut any_after = vec![false; n + 1];
        let mut all_after = vec![true; n + 1];
        let mut routed_after = vec![false; n + 1];
        for j in (0..n).rev() {
            let (urls, routed) = net::urls(f, j);
            let next_all = all_after.get(j + 1).copied().unwrap_or(true);
            let next_any = any_after.get(j + 1).copied().unwrap_or(false);
            let here_all = urls.is_empty() || net::all_loopback(&urls);
            let all = here_all && next_all;
            let any = !urls.is_empty() || next_any;
            if let (Some(a), Some(y), Some(l)) = (
                all_after.get_mut(j),
                any_after.get_mut(j),
                loopback_after.get_mut(j),
            ) {
                *a = all;
                *y = any;
                *l = all && any;
            }
            let next_routed = routed_after.get(j + 1).copied().unwrap_or(false);
            if let Some(r) = routed_after.get_mut(j) {
                *r = routed || next_routed;
            }
        }
        let mut proxied = Vec::with_capacity(n);
        let mut earlier = false;
        for j in 0..n {
            let own = env_pairs(f, j)
                .iter()
                .any(|(name, v)| PROXY_VARS.contains(&name.as_str()) && v.as_known() != Some(""));
            proxied.push(own || earlier);
            earlier |= own && f.command(j).is_some_and(|c| c.name().is_some());
        }
        Around {
            loopback_after,
            routed_after,
            proxied,
        }
    }

    fn exempt_after(&self, i: usize) -> bool {
        !self.routed_after.get(i).copied().unwrap_or(true)
            && self.loopback_after.get(i).copied().unwrap_or(false)
    }

    fn proxied(&self, i: usize) -> bool {
        self.proxied.get(i).copied().unwrap_or(true)
    }
}

pub(super) fn check(f: &mut Facts<'_>) -> Option<HardDeny> {
    let around = Around::of(f);
    for i in 0..f.analysis.commands.len() {
        if let Some(d) = assignments(f, i, &around).or_else(|| command(f, i, &around)) {
            return Some(d);
        }
    }
    None
}

/// `NAME=value` the command puts in its environment or exports.
fn env_pairs(f: &Facts<'_>, i: usize) -> Vec<(String, Value)> {
    let Some(cmd) = f.command(i) else {
        return Vec::new();
    };
    let mut out: Vec<(String, Value)> = cmd.assignments.clone();
    // The environment a container is given (`docker run -e K=V`) and the
    // one `go env -w K=V` writes for every later `go`.
    let words: Vec<&str> = cmd
        .args()
        .iter()
        .map(|a| a.as_known().unwrap_or(""))
        .collect();
    let passes_env = match cmd.name() {
        Some("docker" | "podman" | "nerdctl") => words
            .iter()
            .any(|w| matches!(*w, "run" | "create" | "exec")),
        Some("go") => words.first() == Some(&"env") && words.contains(&"-w"),
        _ => false,
    };
    if passes_env {
        for (k, w) in words.iter().enumerate() {
            let pair = match *w {
                "-e" | "--env" | "-w" => words.get(k + 1).copied(),
                other => other
                    .strip_prefix("--env=")
                    .or_else(|| other.strip_prefix("-e").filter(|r| r.contains('=')))
                    .or_else(|| {
                        (cmd.name() == Some("go") && !other.starts_with('-')).then_some(other)
                    }),
            };
            if let Some((name, value)) = pair.and_then(|p| p.split_once('='))
                && !name.is_empty()
            {
                out.push((name.to_owned(), Value::known(value)));
            }
        }
    }
    if matches!(
        cmd.name(),
        Some("export" | "declare" | "typeset" | "readonly" | "local")
    ) {
        for a in cmd.args() {
            let Arg::Field(v) = a else { continue };
            let head = v
                .candidates()
                .first()
                .map(|t| t.known_prefix().to_owned())
                .unwrap_or_default();
            if let Some((name, _)) = head.split_once('=')
                && let Some(value) = crate::shell::effects::after_prefix(v, &format!("{name}="))
            {
                out.push((name.to_owned(), value));
            }
        }
    }
    out
}

fn assignments(f: &Facts<'_>, i: usize, around: &Around) -> Option<HardDeny> {
    let pairs = env_pairs(f, i);
    if pairs.is_empty() {
        return None;
    }
    let exempt = around.exempt_after(i);
    let get = |name: &str| pairs.iter().find(|(n, _)| n == name).map(|(_, v)| v);
    // A tool's own server address, when it is loopback, keeps its
    // verification switch local (`VAULT_ADDR=https://127.0.0.1:8200
    // VAULT_SKIP_VERIFY=1 vault status`).
    let local_server = |addr: &str| {
        get(addr)
            .and_then(Value::as_known)
            .is_some_and(net::is_loopback_url)
    };
    for (name, value) in &pairs {
        let known = value.as_known();
        let (rule, hit) = match name.as_str() {
            "VAULT_SKIP_VERIFY" if local_server("VAULT_ADDR") => continue,
            "NOMAD_SKIP_VERIFY" if local_server("NOMAD_ADDR") => continue,
            "CONSUL_HTTP_SSL_VERIFY" if local_server("CONSUL_HTTP_ADDR") => continue,
            "PIP_TRUSTED_HOST" => {
                let all_local =
                    known.is_some_and(|v| v.split_whitespace().all(net::is_loopback_host));
                if !all_local {
                    return weak(
                        HardRule::TransportPipTrustedHost,
                        format!("`PIP_TRUSTED_HOST={value}` skips TLS certificate verification"),
                    );
                }
                continue;
            }
            "GIT_CONFIG_PARAMETERS" => (
                HardRule::TransportGitSslVerifyOff,
                known.is_none_or(git_parameters_verify_off),
            ),
            n if n.starts_with("GIT_CONFIG_KEY_") => {
                let index = n.trim_start_matches("GIT_CONFIG_KEY_");
                let is_key = known.is_some_and(|k| ssl_verify_key(k).is_some());
                let v = get(&format!("GIT_CONFIG_VALUE_{index}"));
                let off = v.is_none_or(|v| v.as_known().is_none_or(falsey));
                let downgrade = known.is_some_and(|k| {
                    v.and_then(Value::as_known)
                        .is_some_and(|v| switches::git_insteadof_downgrade(k, v))
                });
                if downgrade && !exempt {
                    return weak(
                        HardRule::TransportProtocolDowngrade,
                        format!("`{name}={value}` rewrites secure git URLs to plain `http://`"),
                    );
                }
                (HardRule::TransportGitSslVerifyOff, is_key && off)
            }
            other => match switches::env_weakens(other, known) {
                Some(rule) => (rule, true),
                None => continue,
            },
        };
        if hit && !exempt {
            return weak(
                rule,
                format!("`{name}={value}` turns off TLS certificate verification"),
            );
        }
    }
    None
}

/// Whether `GIT_CONFIG_PARAMETERS` (`'k'='v'` pairs, comma-separated)
/// turns `http.sslVerify` off for any host but loopback.
fn git_parameters_verify_off(value: &str) -> bool {
    let text = value.to_ascii_lowercase().replace(['\'', '"', ' '], "");
    text.split(',').any(|kv| {
        kv.split_once('=').is_some_and(|(k, v)| {
            ssl_verify_key(k).is_some_and(|scope| scope.is_none_or(|s| !net::is_loopback_url(&s)))
                && falsey(v)
        })
    })
}

/// Variables that send a command's requests through a proxy.
const PROXY_VARS: &[&str] = &[
    "HTTPS_PROXY",
    "https_proxy",
    "HTTP_PROXY",
    "http_proxy",
    "ALL_PROXY",
    "all_proxy",
];

/// Tool options and settings that turn verification off, by tool (the
/// switches every tool shares are [`switches`]').
fn tool_setting(name: &str, words: &[&str]) -> Option<HardRule> {
    let lower: Vec<String> = words.iter().map(|w| w.to_ascii_lowercase()).collect();
    let pair = |key: &str| {
        lower
            .iter()
            .enumerate()
            .any(|(k, w)| w == key && lower.get(k + 1).is_some_and(|v| switches::falsey(v)))
    };
    let hit = match name {
        "ssh" | "scp" | "sftp" | "autossh" => lower.iter().any(|w| {
            let w = w.trim_start_matches("-o");
            let (k, v) = w.split_once(['=', ' ']).unwrap_or((w, ""));
            (k == "stricthostkeychecking"
                && matches!(v.trim(), "no" | "off" | "accept-new" | "false"))
                || (k == "userknownhostsfile" && v.trim() == "/dev/null")
        }),
        "conda" | "mamba" | "micromamba" => {
            pair("ssl_verify") || lower.iter().any(|w| w == "ssl_verify=false")
        }
        "go" => lower.iter().any(|w| {
            w.strip_prefix("goinsecure=")
                .or_else(|| w.strip_prefix("gonosumdb="))
                .is_some_and(|v| !v.is_empty())
        }),
        "composer" => {
            pair("secure-http")
                || lower.iter().enumerate().any(|(k, w)| {
                    w == "disable-tls" && lower.get(k + 1).is_some_and(|v| switches::truthy(v))
                })
        }
        "aria2c" => lower.iter().any(|w| {
            w.strip_prefix("--check-certificate=")
                .is_some_and(switches::falsey)
        }),
        "http" | "https" | "xh" | "xhs" | "httpie" => lower.iter().enumerate().any(|(k, w)| {
            w.strip_prefix("--verify=").is_some_and(switches::falsey)
                || (w == "--verify" && lower.get(k + 1).is_some_and(|v| switches::falsey(v)))
        }),
        "lftp" => lower.iter().any(|w| {
            w.contains("ssl:verify-certificate")
                && (w.contains(" no")
                    || w.contains(" off")
                    || w.contains(" false")
                    || w.contains("=no"))
        }),
        _ => false,
    };
    hit.then_some(HardRule::TransportToolVerifyOff)
}

/// Kubernetes clients: their server is the kubeconfig's unless `--server`
/// (or `-s`) names it.
const KUBE_CLIENTS: &[&str] = &[
    "kubectl",
    "oc",
    "helm",
    "kubeseal",
    "k9s",
    "velero",
    "flux",
    "kustomize",
    "istioctl",
];

/// Options that name the server a tool talks to.
const SERVER_OPTIONS: &[&str] = &[
    "--server",
    "-server",
    "--kube-apiserver",
    "--address",
    "-address",
    "--addr",
    "-http-addr",
    "--http-addr",
    "--endpoint-url",
    "--endpoint",
    "--url",
    "-url",
];

/// Is every server command `i` talks to known and loopback (its URLs,
/// server options, URL and registry operands)? A Kubernetes client without
/// `--server` talks to its kubeconfig's server, which nobody can read here.
fn talks_only_to_loopback(f: &Facts<'_>, i: usize, name: &str, words: &[&str]) -> bool {
    let (urls, routed) = net::urls(f, i);
    if routed {
        return false;
    }
    let mut endpoints: Vec<String> = Vec::new();
    for u in &urls {
        match u.as_known() {
            Some(t) => endpoints.push(t.to_owned()),
            None => return false,
        }
    }
    let kube = KUBE_CLIENTS.contains(&name);
    let mut named_server = false;
    for (k, w) in words.iter().enumerate() {
        let separate = SERVER_OPTIONS.contains(w) || (kube && *w == "-s");
        let attached = SERVER_OPTIONS
            .iter()
            .find_map(|o| w.strip_prefix(o).and_then(|r| r.strip_prefix('=')));
        if separate {
            match words.get(k + 1) {
                Some(v) if !v.is_empty() => endpoints.push((*v).to_owned()),
                _ => return false,
            }
            named_server = true;
        } else if let Some(v) = attached {
            endpoints.push(v.to_owned());
            named_server = true;
        } else if !w.starts_with('-') && w.contains("://") {
            endpoints.push((*w).to_owned());
        } else if !w.starts_with('-')
            && let Some(host) = registry_host(w)
        {
            endpoints.push(host.to_owned());
        }
    }
    if kube && !named_server {
        return false;
    }
    !endpoints.is_empty()
        && endpoints
            .iter()
            .all(|e| net::is_loopback_url(e) || net::is_loopback_host(e))
}

/// The registry of an image reference that names one (`localhost:5000/app`,
/// `registry.example.com/app:1`; `alpine` names none: Docker Hub), or the
/// host of `host:port`.
fn registry_host(word: &str) -> Option<&str> {
    let word = word
        .strip_prefix("docker://")
        .or_else(|| word.strip_prefix("oci://"))
        .unwrap_or(word);
    let first = word.split('/').next()?;
    let looks_like_host = first.contains('.') || first.contains(':') || first == "localhost";
    (looks_like_host && !first.is_empty() && !first.contains('=')).then_some(first)
}

/// The switches of [`switches`] on command `i`: a flag whose name says it
/// skips verification, a tool's `--insecure`, a Maven property, a tool's
/// configuration setting. Loopback-only commands are exempt from the
/// flags, never from a configuration that outlasts them.
fn switch_setting(f: &Facts<'_>, i: usize, name: &str, words: &[&str]) -> Option<HardDeny> {
    let flag = words.iter().enumerate().find_map(|(k, w)| {
        switches::flag_weakens(w, words.get(k + 1).copied())
            .or_else(|| switches::insecure_word(name, w).then(|| (*w).to_owned()))
            .or_else(|| switches::maven_property_weakens(w).then(|| (*w).to_owned()))
    });
    if let Some(flag) = flag
        && !talks_only_to_loopback(f, i, name, words)
    {
        return weak(
            HardRule::TransportToolVerifyOff,
            format!("`{name} {flag}` skips TLS certificate verification"),
        );
    }
    let (rule, what) = switches::tool_config(name, words)?;
    weak(rule, what)
}

/// Files whose settings turn verification off for a tool, and the text
/// that does it.
fn config_file_weakening(file: &str, content: &str) -> bool {
    let name = file.rsplit('/').next().unwrap_or(file).to_ascii_lowercase();
    let text: String = content
        .to_ascii_lowercase()
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ");
    let compact: String = text.chars().filter(|c| !c.is_whitespace()).collect();
    let lines_compact: Vec<String> = content
        .to_ascii_lowercase()
        .lines()
        .map(|l| l.chars().filter(|c| !c.is_whitespace()).collect())
        .collect();
    let line_value = |key: &str| -> Vec<String> {
        lines_compact
            .iter()
            .filter_map(|l| l.strip_prefix(key))
            .map(|rest| {
                rest.trim_start_matches([':', '='])
                    .trim_matches(['"', '\''])
                    .to_owned()
            })
            .collect()
    };
    match name.as_str() {
        ".wgetrc" | "wgetrc" => {
            compact.contains("check_certificate=off")
                || compact.contains("check-certificate=off")
                || compact.contains("check_certificate=0")
        }
        ".curlrc" | "curlrc" => text
            .split(['\n', ' '])
            .any(|w| matches!(w, "insecure" | "-k" | "--insecure")),
        ".gitconfig" | "config" if file.contains("/.bundle/") => {
            line_value("bundle_ssl_verify_mode")
                .iter()
                .any(|v| v == "0")
        }
        ".gitconfig" | "config" => {
            compact.contains("sslverify=false")
                || compact.contains("sslverify=0")
                || compact.contains("sslverify=no")
                || git_config_downgrade(content)
        }
        ".npmrc" | ".yarnrc" | "npmrc" => {
            compact.contains("strict-ssl=false")
                || compact.contains("strict-sslfalse")
                || compact.contains("strict-ssl\"false")
                || lines_compact.iter().any(|l| {
                    l.split_once("registry").is_some_and(|(_, rest)| {
                        switches::plain_http_remote(rest.trim_start_matches(['=', ' ', '"']))
                    })
                })
        }
        ".yarnrc.yml" => {
            compact.contains("enablestrictssl:false")
                || line_value("npmregistryserver")
                    .iter()
                    .any(|v| switches::plain_http_remote(v))
        }
        "pip.conf" | "pip.ini" => compact.contains("trusted-host"),
        ".condarc" => compact.contains("ssl_verify:false") || compact.contains("ssl_verify:no"),
        ".gemrc" | "gemrc" => {
            line_value(":ssl_verify_mode").iter().any(|v| v == "0")
                || line_value("ssl_verify_mode").iter().any(|v| v == "0")
        }
        ".boto" | "boto.cfg" => line_value("https_validate_certificates")
            .iter()
            .any(|v| switches::falsey(v)),
        "daemon.json" => docker_insecure_registries(&compact),
        _ if file.contains("/.kube/") || name.ends_with("kubeconfig") => {
            line_value("insecure-skip-tls-verify")
                .iter()
                .any(|v| switches::truthy(v))
        }
        _ => false,
    }
}

/// A git configuration text with `[url "http://…"] insteadOf = https://…`.
fn git_config_downgrade(content: &str) -> bool {
    let mut base: Option<String> = None;
    for line in content.lines() {
        let l = line.trim();
        if let Some(section) = l.strip_prefix('[') {
            base = section
                .trim_end_matches(']')
                .trim()
                .strip_prefix("url")
                .map(|rest| rest.trim().trim_matches('"').to_owned());
            continue;
        }
        let Some(b) = &base else { continue };
        if let Some((k, v)) = l.split_once('=') {
            let key = format!("url.{b}.{}", k.trim());
            if switches::git_insteadof_downgrade(&key, v) {
                return true;
            }
        }
    }
    false
}

/// Docker's `daemon.json` listing a registry that is not loopback under
/// `insecure-registries` (compact, lower-case text).
fn docker_insecure_registries(compact: &str) -> bool {
    let Some((_, rest)) = compact.split_once("\"insecure-registries\":[") else {
        return false;
    };
    let list = rest.split(']').next().unwrap_or("");
    list.split(',')
        .map(|h| h.trim_matches('"'))
        .filter(|h| !h.is_empty())
        .any(|h| !net::is_loopback_url(h))
}

/// Command `i` writes a configuration file with text that skips TLS
/// certificate verification.
fn writes_weakened_config(f: &Facts<'_>, i: usize) -> Option<HardDeny> {
    let text = f.written_text(i)?;
    for touch in f.touches(i).iter() {
        if touch.role != Role::Write {
            continue;
        }
        for target in &touch.targets {
            let path = target.display();
            if config_file_weakening(&path, &text) {
                return weak(
                    HardRule::TransportConfigFile,
                    format!(
                        "writes `{path}` with a setting that skips TLS certificate verification"
                    ),
                );
            }
        }
    }
    None
}

fn command(f: &Facts<'_>, i: usize, around: &Around) -> Option<HardDeny> {
    let cmd = f.command(i)?;
    if let Some(d) = writes_weakened_config(f, i) {
        return Some(d);
    }
    let name = cmd.name()?.to_owned();
    let eff = f.effects_of(i)?;
    let (urls, routed) = net::urls(f, i);
    let routed = routed || around.proxied(i);
    let exempt = !routed && net::all_loopback(&urls);
    let words: Vec<&str> = cmd
        .args()
        .iter()
        .map(|a| a.as_known().unwrap_or(""))
        .collect();
    if let Some(rule) = tool_setting(&name, &words) {
        return weak(
            rule,
            format!("`{name}` is told to skip TLS or host-key verification"),
        );
    }
    if !matches!(name.as_str(), "curl" | "curlie" | "wget" | "wget2")
        && let Some(d) = switch_setting(f, i, &name, &words)
    {
        return Some(d);
    }
    let target = || {
        urls.iter()
            .find(|u| !net::all_loopback(std::slice::from_ref(*u)))
            .map(|u| format!(" for `{u}`"))
            .unwrap_or_default()
    };
    match name.as_str() {
        "curl" | "curlie"
            if eff.has(Modifier::Insecure)
                && !exempt
                && !curl_without_remote_tls(cmd.args(), eff, &urls, around.proxied(i)) =>
        {
            weak(
                HardRule::TransportCurlInsecure,
                format!(
                    "`curl --insecure` skips TLS certificate verification{}",
                    target()
                ),
            )
        }
        "wget" | "wget2" => {
            let execute_off = eff.with(&[Role::Value]).any(|v| {
                v.as_known().is_some_and(|t| {
                    let t = t.to_ascii_lowercase().replace('-', "_");
                    t.split_once('=')
                        .is_some_and(|(k, v)| k.trim() == "check_certificate" && falsey(v))
                })
            });
            ((eff.has(Modifier::Insecure) || execute_off) && !exempt).then(|| HardDeny {
                rule: HardRule::TransportWgetNoCheckCertificate,
                rationale: format!(
                    "`wget --no-check-certificate` skips TLS certificate verification{}",
                    target()
                ),
            })
        }
        "git" => git(f, i, &urls, exempt),
        "npm" | "pnpm" | "yarn" | "bun" | "npx" => npm(cmd.args(), &name, exempt),
        _ => pip(cmd.args(), &name),
    }
}

/// curl options that send the connection somewhere other than the URL's
/// host (the `Route` options of curl's spec) and are not a host mapping.
const CURL_ELSEWHERE: &[&str] = &[
    "x",
    "proxy",
    "preproxy",
    "socks4",
    "socks4a",
    "socks5",
    "socks5-hostname",
    "proxy1.0",
    "unix-socket",
    "abstract-unix-socket",
];

/// Does `curl -k` verify nothing that travels beyond this machine? Every
/// URL is plain `http://`, or every URL's host and port is mapped to
/// loopback by `--resolve HOST:PORT:ADDR` or `--connect-to
/// HOST:PORT:CHOST:CPORT`; never with a redirect (`-L`), a proxy, or
/// `--proxy-insecure`/`--doh-insecure`. Unknown words fail closed.
fn curl_without_remote_tls(
    args: &[Arg],
    eff: &crate::shell::effects::Effects,
    urls: &[Value],
    proxied: bool,
) -> bool {
    use crate::shell::options::{Item, OptValue};
    let Some(parsed) = eff.parsed.as_ref() else {
        return false;
    };
    if proxied
        || urls.is_empty()
        || parsed.has(&[
            "L",
            "location",
            "location-trusted",
            "proxy-insecure",
            "doh-insecure",
        ])
        || parsed.has(CURL_ELSEWHERE)
        || parsed
            .items
            .iter()
            .any(|i| matches!(i, Item::Unknown { .. }))
    {
        return false;
    }
    let known_value = |v: &OptValue| -> Option<String> {
        match *v {
            OptValue::Next { at } => args.get(at)?.as_known().map(str::to_owned),
            OptValue::Attached { at, offset } => {
                args.get(at)?.as_known()?.get(offset..).map(str::to_owned)
            }
        }
    };
    let mut maps: Vec<String> = Vec::new();
    for v in parsed.values(&["resolve", "connect-to"]) {
        match known_value(&v) {
            Some(text) => maps.push(text),
            None => return false,
        }
    }
    let resolves: Vec<String> = parsed
        .values(&["resolve"])
        .iter()
        .filter_map(known_value)
        .collect();
    let url_texts: Option<Vec<String>> = urls
        .iter()
        .map(|u| u.as_known().map(str::to_owned))
        .collect();
    let Some(url_texts) = url_texts else {
        return false;
    };
    if maps.is_empty() {
        return url_texts.iter().all(|u| {
            u.get(..7)
                .is_some_and(|scheme| scheme.eq_ignore_ascii_case("http://"))
        });
    }
    url_texts.iter().all(|u| {
        let Some((host, port)) = net::url_host_port(u) else {
            return false;
        };
        // curl uses the first mapping that names the host and port: each
        // one that may apply must lead to loopback.
        let mut mapped = false;
        for m in &maps {
            let is_resolve = resolves.contains(m);
            match net::curl_mapping(m, is_resolve) {
                Some((h, p, to)) => {
                    let host_applies = h.is_empty() || h == "*" || h.eq_ignore_ascii_case(&host);
                    let port_applies = p.is_empty() || p == port;
                    if host_applies && port_applies {
                        if !to.is_some_and(|t| t.split(',').all(net::is_loopback_host)) {
                            return false;
                        }
                        mapped = true;
                    }
                }
                None => return false,
            }
        }
        mapped || net::is_loopback_host(&host)
    })
}

fn git(f: &Facts<'_>, i: usize, urls: &[Value], exempt: bool) -> Option<HardDeny> {
    let cmd = f.command(i)?;
    let eff = f.effects_of(i)?;
    let deny_git = |key: &str| {
        weak(
            HardRule::TransportGitSslVerifyOff,
            format!("git `{key}` set to false skips TLS certificate verification"),
        )
    };
    for setting in eff.with(&[Role::Value]) {
        let Some(text) = setting.as_known() else {
            continue;
        };
        let (key, value) = text.split_once('=').unwrap_or((text, "true"));
        if switches::git_insteadof_downgrade(key, value) && !exempt {
            return weak(
                HardRule::TransportProtocolDowngrade,
                format!("git `{key}` rewrites secure URLs to plain `http://`"),
            );
        }
        let Some(scope) = ssl_verify_key(key) else {
            continue;
        };
        let scoped_local = scope.as_deref().is_some_and(net::is_loopback_url);
        if falsey(value) && !scoped_local && !exempt {
            return deny_git(key);
        }
    }
    let _ = urls;
    let args = cmd.args();
    let words: Vec<Option<&str>> = args.iter().map(Arg::as_known).collect();
    let config = words.iter().position(|w| *w == Some("config"))?;
    let rest: Vec<&str> = words
        .iter()
        .skip(config + 1)
        .map(|w| w.unwrap_or(""))
        .collect();
    if rest.iter().any(|t| {
        matches!(
            *t,
            "--unset" | "--unset-all" | "unset" | "--get" | "get" | "--list" | "-l"
        )
    }) {
        return None;
    }
    let mut operands = Vec::new();
    let mut j = 0;
    while let Some(t) = rest.get(j) {
        if matches!(
            *t,
            "--file" | "-f" | "--type" | "--blob" | "--default" | "--comment"
        ) {
            j += 2;
            continue;
        }
        if !t.starts_with('-') && *t != "set" {
            operands.push(*t);
        }
        j += 1;
    }
    let key = operands.first()?;
    let value = operands.get(1).copied().unwrap_or("");
    if switches::git_insteadof_downgrade(key, value) {
        return weak(
            HardRule::TransportProtocolDowngrade,
            format!("git `{key}` rewrites secure URLs to plain `http://`"),
        );
    }
    let scope = ssl_verify_key(key)?;
    let scoped_local = scope.as_deref().is_some_and(net::is_loopback_url);
    (falsey(value) && !scoped_local).then(|| HardDeny {
        rule: HardRule::TransportGitSslVerifyOff,
        rationale: format!("git `{key}` set to false skips TLS certificate verification"),
    })
}

fn npm(args: &[Arg], name: &str, exempt: bool) -> Option<HardDeny> {
    let lower: Vec<String> = args
        .iter()
        .map(|a| a.as_known().unwrap_or("").to_ascii_lowercase())
        .collect();
    let mut hit = lower
        .iter()
        .any(|w| w.strip_prefix("--strict-ssl=").is_some_and(falsey) || w == "--no-strict-ssl");
    for (k, w) in lower.iter().enumerate() {
        let key = w.trim_start_matches("--");
        if key == "strict-ssl" || key == "enablestrictssl" {
            hit |= lower.get(k + 1).is_some_and(|v| falsey(v) && !v.is_empty());
        }
        if let Some(v) = key
            .strip_prefix("strict-ssl=")
            .or_else(|| key.strip_prefix("enablestrictssl="))
        {
            hit |= falsey(v);
        }
    }
    (hit && !exempt).then(|| HardDeny {
        rule: HardRule::TransportNpmStrictSslOff,
        rationale: format!("`{name}` with `strict-ssl false` skips TLS certificate verification"),
    })
}

fn pip(args: &[Arg], name: &str) -> Option<HardDeny> {
    let is_pip = name.starts_with("pip")
        || (name.starts_with("python") && args.iter().any(|w| w.as_known() == Some("pip")))
        || (matches!(name, "uv" | "pipx") && args.first().and_then(Arg::as_known) == Some("pip"));
    if !is_pip {
        return None;
    }
    let words: Vec<&str> = args.iter().map(|a| a.as_known().unwrap_or("…")).collect();
    let mut hosts: Vec<&str> = Vec::new();
    for (k, w) in words.iter().enumerate() {
        // pip's option parser takes any unambiguous prefix (`--tr`).
        let (flag, inline) = w.split_once('=').map_or((*w, None), |(f, v)| (f, Some(v)));
        let prefix = flag.len() >= 4 && "--trusted-host".starts_with(flag);
        if prefix && let Some(v) = inline {
            hosts.push(v);
        } else if (prefix || w.ends_with(".trusted-host") || *w == "trusted-host")
            && let Some(v) = words.get(k + 1)
        {
            hosts.push(v);
        }
    }
    let all_local = !hosts.is_empty()
        && hosts.iter().all(|h| {
            h.split_whitespace()
                .all(|host| net::is_loopback_url(host) || net::is_loopback_host(host))
        });
    (!hosts.is_empty() && !all_local).then(|| HardDeny {
        rule: HardRule::TransportPipTrustedHost,
        rationale: format!(
            "`pip --trusted-host {}` skips TLS certificate verification",
            hosts.first().copied().unwrap_or("")
        ),
    })
}
