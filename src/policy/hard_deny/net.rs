//! Network commands: which options make curl/wget read a file, which words
//! are URLs, and which hosts are loopback.

use crate::shell::{Piece, Unit, Word};

use super::effects::Args;

/// curl short options that take a value.
pub(crate) const CURL_VALUE_SHORT: &str = "AbcCdDeEFHKmoPQrtTuUwxXyYz";
/// curl long options that take a value (when not written `--opt=value`).
pub(crate) const CURL_VALUE_LONG: &[&str] = &[
    "data",
    "data-binary",
    "data-ascii",
    "data-raw",
    "data-urlencode",
    "json",
    "form",
    "form-string",
    "upload-file",
    "header",
    "output",
    "user",
    "request",
    "user-agent",
    "referer",
    "cookie",
    "cookie-jar",
    "config",
    "cert",
    "key",
    "cacert",
    "capath",
    "url",
    "proxy",
    "max-time",
    "connect-timeout",
    "write-out",
    "dump-header",
    "range",
    "continue-at",
    "retry",
    "resolve",
    "connect-to",
    "interface",
    "limit-rate",
    "max-filesize",
    "output-dir",
    "proxy-user",
    "oauth2-bearer",
    "aws-sigv4",
    "unix-socket",
    "local-port",
    "retry-delay",
    "retry-max-time",
    "speed-limit",
    "speed-time",
    "time-cond",
    "trace",
    "trace-ascii",
    "stderr",
    "ciphers",
    "pass",
    "variable",
    "url-query",
    "doh-url",
    "dns-servers",
    "quote",
    "proxy-header",
    "cert-type",
    "key-type",
    "hostpubmd5",
    "pubkey",
    "mail-from",
    "mail-rcpt",
];

/// wget short options that take a value.
pub(crate) const WGET_VALUE_SHORT: &str = "OoaPeiUtTwQlADRI";
pub(crate) const WGET_VALUE_LONG: &[&str] = &[
    "output-document",
    "output-file",
    "append-output",
    "directory-prefix",
    "post-data",
    "post-file",
    "body-data",
    "body-file",
    "header",
    "user-agent",
    "user",
    "password",
    "method",
    "execute",
    "input-file",
    "tries",
    "timeout",
    "wait",
    "quota",
    "level",
    "accept",
    "domains",
    "reject",
    "include-directories",
];

/// Commands that send data over the network.
const SINKS: &[&str] = &[
    "curl", "wget", "nc", "ncat", "netcat", "socat", "telnet", "scp", "sftp", "rsync", "ftp",
    "http", "https", "xh", "openssl", "aria2c", "lftp", "curlie", "ssh",
];

/// A unit that can send its input or named files over the network.
pub(crate) fn is_sink(unit: &Unit) -> bool {
    unit.name().is_some_and(|n| SINKS.contains(&n)) || writes_dev_tcp(unit)
}

/// `… > /dev/tcp/host/port`: bash opens a socket.
pub(crate) fn writes_dev_tcp(unit: &Unit) -> bool {
    unit.redirects.iter().any(|r| {
        r.op.writes()
            && r.target.pieces.first().is_some_and(|p| {
                matches!(p, Piece::Literal(t) if t.starts_with("/dev/tcp/") || t.starts_with("/dev/udp/"))
            })
    })
}

/// The part of `word` after the first `marker` in its leading literal text.
fn after_marker(word: &Word, marker: &str) -> Option<Word> {
    let Some(Piece::Literal(first)) = word.pieces.first() else {
        return None;
    };
    let pos = first.find(marker)?;
    let mut out = Word::default();
    out.push_str(first.get(pos + marker.len()..).unwrap_or(""));
    for piece in word.pieces.iter().skip(1) {
        out.push(piece.clone());
    }
    Some(out)
}

/// Files a curl/wget invocation reads and sends, with the option naming
/// each. `@-` (standard input) is left to the pipe rules.
pub(crate) fn uploaded_files(unit: &Unit) -> Vec<(Word, String)> {
    let mut out = Vec::new();
    match unit.name() {
        Some("curl" | "curlie") => {
            let a = Args::parse(unit.args(), CURL_VALUE_SHORT, CURL_VALUE_LONG);
            for (name, value) in &a.opts {
                let Some(value) = value else { continue };
                let value = super::effects::option_value(name, value);
                let file = match name.as_str() {
                    "d" | "data" | "data-binary" | "data-ascii" | "json" => {
                        starts_with(&value, "@")
                            .then(|| after_marker(&value, "@"))
                            .flatten()
                    }
                    "data-urlencode" => {
                        // `@file` or `name@file`; `name=value` is literal data.
                        let head = leading_literal(&value);
                        match (head.find('@'), head.find('=')) {
                            (Some(at), Some(eq)) if at < eq => after_marker(&value, "@"),
                            (Some(_), None) => after_marker(&value, "@"),
                            _ => None,
                        }
                    }
                    "F" | "form" => {
                        after_marker(&value, "=@")
                            .or_else(|| after_marker(&value, "=<"))
                            .map(|w| {
                                // `file;type=text/plain`: the file name ends at `;`.
                                let mut trimmed = Word::default();
                                for piece in w.pieces {
                                    match piece {
                                        Piece::Literal(t) => {
                                            trimmed.push_str(t.split(';').next().unwrap_or(""));
                                            if t.contains(';') {
                                                break;
                                            }
                                        }
                                        other => trimmed.push(other),
                                    }
                                }
                                trimmed
                            })
                    }
                    "T" | "upload-file" => Some(value.clone()),
                    _ => None,
                };
                if let Some(file) = file
                    && file.as_literal() != Some("-")
                    && file.as_literal() != Some("")
                {
                    out.push((file, option_label(name)));
                }
            }
        }
        Some("wget") => {
            let a = Args::parse(unit.args(), WGET_VALUE_SHORT, WGET_VALUE_LONG);
            for value in a.values(&["post-file", "body-file"]) {
                out.push((value, "--post-file".to_owned()));
            }
        }
        Some("http" | "https" | "xh") => {
            // httpie: `field@file` and `field=@file` embed a file.
            for word in unit.args() {
                if let Some(file) = after_marker(word, "=@").or_else(|| {
                    let head = leading_literal(word);
                    (!head.starts_with('-') && !head.contains("://") && head.contains('@'))
                        .then(|| after_marker(word, "@"))
                        .flatten()
                }) {
                    out.push((file, "a file field".to_owned()));
                }
            }
        }
        _ => {}
    }
    out
}

fn starts_with(word: &Word, prefix: &str) -> bool {
    leading_literal(word).starts_with(prefix)
}

fn leading_literal(word: &Word) -> &str {
    match word.pieces.first() {
        Some(Piece::Literal(t)) => t,
        _ => "",
    }
}

fn option_label(name: &str) -> String {
    if name.chars().count() == 1 {
        format!("-{name}")
    } else {
        format!("--{name}")
    }
}

/// Words a unit uses as URLs or hosts.
pub(crate) fn urls(unit: &Unit) -> Vec<Word> {
    match unit.name() {
        Some("curl" | "curlie") => {
            let a = Args::parse(unit.args(), CURL_VALUE_SHORT, CURL_VALUE_LONG);
            let mut out: Vec<Word> = a.operands.iter().map(|w| (*w).clone()).collect();
            out.extend(a.values(&["url"]));
            out
        }
        Some("wget") => {
            let a = Args::parse(unit.args(), WGET_VALUE_SHORT, WGET_VALUE_LONG);
            a.operands.into_iter().cloned().collect()
        }
        _ => unit
            .args()
            .iter()
            .filter(|w| {
                let head = leading_literal(w);
                head.contains("://") || looks_like_scp_remote(head)
            })
            .cloned()
            .collect(),
    }
}

/// `git@github.com:org/repo.git`.
fn looks_like_scp_remote(text: &str) -> bool {
    match text.split_once(':') {
        Some((host, path)) => {
            !host.is_empty()
                && !host.contains('/')
                && host.contains(['@', '.'])
                && !path.starts_with("//")
        }
        None => false,
    }
}

/// True when every word is a literal URL or host on loopback, and there is
/// at least one. An unknown or empty set is not loopback (fail closed).
pub(crate) fn all_loopback(words: &[Word]) -> bool {
    !words.is_empty()
        && words
            .iter()
            .all(|w| w.literal_with_globs().is_some_and(|t| is_loopback_url(&t)))
}

/// `https://127.0.0.1:8443/x`, `localhost:3000`, `[::1]`, `git@localhost:r`.
pub(crate) fn is_loopback_url(text: &str) -> bool {
    let rest = text.split_once("://").map_or(text, |(_, r)| r);
    let authority = rest.split(['/', '?', '#']).next().unwrap_or("");
    let host_port = authority.rsplit_once('@').map_or(authority, |(_, h)| h);
    let host = if let Some(v6) = host_port.strip_prefix('[') {
        v6.split(']').next().unwrap_or("")
    } else {
        host_port.split(':').next().unwrap_or("")
    };
    is_loopback_host(host)
}

pub(crate) fn is_loopback_host(host: &str) -> bool {
    let host = host.trim_end_matches('.').to_ascii_lowercase();
    if host == "localhost" {
        return true;
    }
    if let Ok(v4) = host.parse::<std::net::Ipv4Addr>() {
        return v4.is_loopback();
    }
    host.parse::<std::net::Ipv6Addr>()
        .is_ok_and(|v6| v6.is_loopback())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loopback_hosts() {
        for t in [
            "https://127.0.0.1:8443/health",
            "http://localhost/x",
            "https://[::1]:9/",
            "127.5.6.7",
            "localhost:3000/api",
            "https://user@localhost/",
        ] {
            assert!(is_loopback_url(t), "{t}");
        }
        for t in [
            "https://example.com",
            "https://127.0.0.1.evil.com/",
            "https://localhost.evil.com",
            "https://10.0.0.1",
            "http://0.0.0.0",
            "https://evil.com/?x=localhost",
            "https://localhost@evil.com/",
        ] {
            assert!(!is_loopback_url(t), "{t}");
        }
    }
}
