//! What a container runs on this machine's directories it mounts.
//!
//! `docker run -v "$HOME":/h alpine rm -rf /h/` wipes the home directory:
//! the command runs inside the container, on a path the bind mount makes
//! the host's. The container's command is read conservatively: every
//! suffix of the words after `run` that starts with a word naming a
//! program (the image and the options before it are not known to vouch's
//! table) is a command line, with each mounted container path written as
//! the host path it stands for, judged as bash (a conservative deny).
//!
//! Bounded: at most [`MAX_SCRIPTS`] readings of at most
//! [`MAX_WORDS`] words each.

use crate::shell::Command;

use super::facts::Facts;

/// Most readings per command line.
const MAX_SCRIPTS: usize = 16;

/// Most words of a container's command read.
const MAX_WORDS: usize = 64;

/// The container engines whose `run`/`create` take `-v HOST:CONTAINER`.
const ENGINES: &[&str] = &["docker", "podman", "nerdctl", "finch"];

/// The command lines containers started by `f` run, with their mounts
/// resolved to the host's paths.
pub(super) fn scripts(f: &Facts<'_>) -> Vec<String> {
    let mut out = Vec::new();
    for (_, cmd) in f.commands() {
        if cmd.name().is_some_and(|n| ENGINES.contains(&n)) {
            for script in container_scripts(cmd) {
                if out.len() < MAX_SCRIPTS && !out.contains(&script) {
                    out.push(script);
                }
            }
        }
    }
    out
}

/// The readings of one engine call: nothing unless it is `run` or
/// `create` with at least one bind mount.
fn container_scripts(cmd: &Command) -> Vec<String> {
    let words: Vec<&str> = cmd
        .args()
        .iter()
        .take(MAX_WORDS)
        .map(|a| a.as_known().unwrap_or(""))
        .collect();
    let Some(run) = words
        .iter()
        .position(|w| matches!(*w, "run" | "create" | "container"))
    else {
        return Vec::new();
    };
    let rest = words.get(run + 1..).unwrap_or_default();
    let mounts = mounts(rest);
    if mounts.is_empty() {
        return Vec::new();
    }
    let mut out = Vec::new();
    for (k, word) in rest.iter().enumerate() {
        if word.is_empty() || word.starts_with('-') || word.contains([':', '=', ',']) {
            continue;
        }
        let line: Vec<String> = rest
            .get(k..)
            .unwrap_or_default()
            .iter()
            .map(|w| quote(&host_paths(w, &mounts)))
            .collect();
        out.push(line.join(" "));
        if out.len() >= MAX_SCRIPTS {
            break;
        }
    }
    out
}

/// `(host, container)` of each bind mount: `-v H:C[:opts]`,
/// `--volume[=]H:C`, `--mount type=bind,source=H,target=C`.
fn mounts(words: &[&str]) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut k = 0;
    while let Some(word) = words.get(k) {
        k += 1;
        let value = match *word {
            "-v" | "--volume" | "--mount" => {
                k += 1;
                words.get(k - 1).copied()
            }
            w => w
                .strip_prefix("--volume=")
                .or_else(|| w.strip_prefix("--mount="))
                .or_else(|| w.strip_prefix("-v").filter(|v| v.contains(':'))),
        };
        let Some(value) = value else { continue };
        if value.contains("source=") || value.contains("src=") {
            let field = |keys: &[&str]| {
                value.split(',').find_map(|p| {
                    let (key, v) = p.split_once('=')?;
                    keys.contains(&key).then(|| v.to_owned())
                })
            };
            if let (Some(h), Some(c)) = (
                field(&["source", "src"]),
                field(&["target", "destination", "dst"]),
            ) {
                out.push((h, c));
            }
        } else if let Some((h, rest)) = value.split_once(':')
            && h.starts_with(['/', '~', '.'])
        {
            let c = rest.split(':').next().unwrap_or(rest);
            out.push((h.to_owned(), c.to_owned()));
        }
    }
    out
}

/// `text` with each container path of `mounts` written as its host path.
fn host_paths(text: &str, mounts: &[(String, String)]) -> String {
    let mut out = text.to_owned();
    for (host, container) in mounts {
        let container = container.trim_end_matches('/');
        if container.is_empty() {
            continue;
        }
        let mut mapped = String::with_capacity(out.len());
        let mut rest = out.as_str();
        while let Some(at) = rest.find(container) {
            let before_ok = at == 0
                || rest
                    .get(..at)
                    .and_then(|b| b.chars().last())
                    .is_some_and(|c| !c.is_alphanumeric() && c != '/' && c != '_' && c != '.');
            let after = rest.get(at + container.len()..).unwrap_or("");
            let after_ok = after
                .chars()
                .next()
                .is_none_or(|c| matches!(c, '/' | ' ' | '\'' | '"' | ';' | '*'));
            mapped.push_str(rest.get(..at).unwrap_or(""));
            if before_ok && after_ok {
                mapped.push_str(host.trim_end_matches('/'));
            } else {
                mapped.push_str(container);
            }
            rest = after;
        }
        mapped.push_str(rest);
        out = mapped;
    }
    out
}

/// One word quoted for bash.
fn quote(word: &str) -> String {
    format!("'{}'", word.replace('\'', "'\\''"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mounts_and_paths() {
        let m = mounts(&["--rm", "-v", "/home/dev:/h", "alpine", "rm", "-rf", "/h/"]);
        assert_eq!(m, [("/home/dev".to_owned(), "/h".to_owned())]);
        assert_eq!(host_paths("/h/", &m), "/home/dev/");
        assert_eq!(host_paths("rm -rf /h/*", &m), "rm -rf /home/dev/*");
        assert_eq!(host_paths("/hx", &m), "/hx");
        let m = mounts(&["--mount", "type=bind,source=/home/dev/.ssh,target=/k"]);
        assert_eq!(m, [("/home/dev/.ssh".to_owned(), "/k".to_owned())]);
        assert!(mounts(&["-v", "named:/data"]).is_empty());
    }
}
