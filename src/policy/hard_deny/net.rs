//! Hosts and URLs: which are loopback, which operands name a remote host.

use crate::shell::{Value, spec::Role};

use super::facts::Facts;

/// `https://127.0.0.1:8443/x`, `localhost:3000`, `[::1]`, `127.1`,
/// `git@localhost:r`.
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

/// The host (lower case, IPv6 without brackets) of a URL or a bare
/// `host[:port][/path]` (`nc host 80`, `ssh user@host`).
pub(crate) fn url_host(text: &str) -> Option<String> {
    let rest = text.split_once("://").map_or(text, |(_, r)| r);
    let authority = rest.split(['/', '?', '#']).next().unwrap_or("");
    let host_port = authority.rsplit_once('@').map_or(authority, |(_, h)| h);
    let host = if let Some(v6) = host_port.strip_prefix('[') {
        v6.split(']').next().unwrap_or("")
    } else {
        host_port.split(':').next().unwrap_or("")
    };
    (!host.is_empty()).then(|| host.trim_end_matches('.').to_ascii_lowercase())
}

/// The host (lower case, IPv6 without brackets) and port of an absolute
/// URL, the port defaulting by scheme (`https` 443, `http` 80).
pub(crate) fn url_host_port(url: &str) -> Option<(String, String)> {
    let (scheme, rest) = url.split_once("://")?;
    let authority = rest.split(['/', '?', '#']).next().unwrap_or("");
    let host_port = authority.rsplit_once('@').map_or(authority, |(_, h)| h);
    let (host, port) = if let Some(v6) = host_port.strip_prefix('[') {
        let (h, after) = v6.split_once(']')?;
        (h, after.strip_prefix(':'))
    } else {
        match host_port.split_once(':') {
            Some((h, p)) => (h, Some(p)),
            None => (host_port, None),
        }
    };
    let port = match (port, scheme.to_ascii_lowercase().as_str()) {
        (Some(p), _) if !p.is_empty() => p.to_owned(),
        (_, "https") => "443".to_owned(),
        (_, "http") => "80".to_owned(),
        _ => return None,
    };
    (!host.is_empty()).then(|| (host.trim_end_matches('.').to_ascii_lowercase(), port))
}

/// One curl `--resolve [+]HOST:PORT:ADDR[,ADDR]…` (`resolve`) or
/// `--connect-to HOST:PORT:CHOST:CPORT` entry: host, port and where it
/// goes (addresses or host, brackets removed; `None` when the target is
/// empty, which `--connect-to` reads as "the URL's own host").
pub(crate) fn curl_mapping(entry: &str, resolve: bool) -> Option<(String, String, Option<String>)> {
    let entry = entry.strip_prefix(['+', '-']).unwrap_or(entry);
    let (host, rest) = split_host(entry)?;
    let (port, rest) = rest.split_once(':')?;
    let target = if resolve {
        rest.to_owned()
    } else {
        let (chost, _cport) = split_host(rest)?;
        chost.to_owned()
    };
    let target: String = target.chars().filter(|c| !matches!(c, '[' | ']')).collect();
    Some((
        host.to_owned(),
        port.to_owned(),
        (!target.is_empty()).then_some(target),
    ))
}

/// `[v6]:rest` or `host:rest` → (host, rest).
fn split_host(text: &str) -> Option<(&str, &str)> {
    if let Some(v6) = text.strip_prefix('[') {
        let (h, after) = v6.split_once(']')?;
        return Some((h, after.strip_prefix(':')?));
    }
    text.split_once(':')
}

/// An IPv4 address in any form `inet_aton` accepts (`127.1`, `0x7f.1`,
/// `2130706433`).
fn parse_ipv4(host: &str) -> Option<u32> {
    let parts: Vec<&str> = host.split('.').collect();
    if parts.is_empty() || parts.len() > 4 {
        return None;
    }
    let mut nums = Vec::with_capacity(parts.len());
    for p in &parts {
        let n = if let Some(hex) = p.strip_prefix("0x").or_else(|| p.strip_prefix("0X")) {
            u32::from_str_radix(hex, 16).ok()?
        } else if p.len() > 1 && p.starts_with('0') {
            u32::from_str_radix(p.get(1..)?, 8).ok()?
        } else {
            p.parse().ok()?
        };
        nums.push(n);
    }
    let (last, head) = nums.split_last()?;
    let mut value: u32 = 0;
    for (k, n) in head.iter().enumerate() {
        if *n > 255 {
            return None;
        }
        let shift = u32::try_from(24 - 8 * k).ok()?;
        value |= n << shift;
    }
    let room = 32 - 8 * u32::try_from(head.len()).ok()?;
    if room < 32 && *last >= (1u32 << room) {
        return None;
    }
    Some(value | last)
}

pub(crate) fn is_loopback_host(host: &str) -> bool {
    let host = host.trim_end_matches('.').to_ascii_lowercase();
    if host == "localhost" || host.ends_with(".localhost") {
        return true;
    }
    if let Some(v4) = parse_ipv4(&host) {
        return v4 >> 24 == 127;
    }
    host.parse::<std::net::Ipv6Addr>()
        .is_ok_and(|v6| v6.is_loopback() || v6.to_ipv4_mapped().is_some_and(|v4| v4.is_loopback()))
}

/// True when every value is a known loopback URL or host, and there is at
/// least one. An unknown or empty set is not loopback (fail closed).
pub(crate) fn all_loopback(values: &[Value]) -> bool {
    !values.is_empty()
        && values.iter().all(|v| {
            v.candidates().iter().all(|t| {
                if t.has_any() {
                    return known_host(t.known_prefix()).is_some_and(is_loopback_host);
                }
                t.unmatched_spelling().is_some_and(|s| is_loopback_url(&s))
            })
        })
}

/// The host of a URL whose beginning is known up to past the host
/// (`https://localhost:` + an unknown port).
fn known_host(prefix: &str) -> Option<&str> {
    let (_, rest) = prefix.split_once("://")?;
    if let Some(v6) = rest.strip_prefix('[') {
        let end = v6.find(']')?;
        return v6.get(..end);
    }
    let end = rest.find([':', '/', '?', '#'])?;
    let host = rest.get(..end)?;
    (!host.contains('@') && !host.is_empty()).then_some(host)
}

/// The URLs command `i` uses, and whether a proxy or resolve rule may send
/// them elsewhere.
pub(crate) fn urls(f: &Facts<'_>, i: usize) -> (Vec<Value>, bool) {
    let Some(eff) = f.effects_of(i) else {
        return (Vec::new(), false);
    };
    let urls: Vec<Value> = eff.with(&[Role::Url]).cloned().collect();
    let routed = eff.with(&[Role::Route]).next().is_some();
    (urls, routed)
}

/// `host:path` or `user@host:path` (scp/rsync remote operands).
pub(crate) fn is_remote_operand(v: &Value) -> bool {
    v.candidates().iter().any(|t| {
        let head = t.known_prefix();
        if head.contains("://") {
            return true;
        }
        head.split_once(':')
            .is_some_and(|(host, _)| !host.is_empty() && !host.contains('/'))
    })
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
            "https://127.1/",
            "http://0x7f.1:80/",
            "http://2130706433/",
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
            "http://128.1/",
        ] {
            assert!(!is_loopback_url(t), "{t}");
        }
    }
}
