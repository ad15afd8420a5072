//! Turning words into absolute paths, and the path predicates the rules use.
//!
//! Resolution is lexical: `~`, `$HOME` and `${HOME}` become the request's
//! home, variables assigned earlier in the same command take their literal
//! values, relative paths join the request's `cwd` (and any directory a
//! `cd` earlier in the command moved to), and `.`/`..` are folded. Nothing
//! here touches the filesystem; symlinks are the adapter's `resolved_path`.

use std::collections::HashMap;

use crate::shell::{Piece, Word};

/// A word resolved to an absolute, normalized path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Resolved {
    pub path: String,
    /// Unquoted glob characters remain in `path`.
    pub glob: bool,
}

/// Values of variables assigned anywhere in the command (every value a
/// variable takes is a candidate: order within one command is not trusted).
pub(crate) type Vars = HashMap<String, Vec<Word>>;

/// Most candidate expansions considered for one word.
const MAX_CANDIDATES: usize = 16;

/// Expands `word` to its candidate texts (with a "has glob" flag). A part
/// that is unknown (a substitution, an unassigned variable) yields no
/// candidate for that combination.
pub(crate) fn expand(word: &Word, home: &str, vars: &Vars, depth: usize) -> Vec<(String, bool)> {
    let mut out: Vec<(String, bool)> = vec![(String::new(), false)];
    for piece in &word.pieces {
        match piece {
            Piece::Literal(text) => out.iter_mut().for_each(|(s, _)| s.push_str(text)),
            Piece::Home => out.iter_mut().for_each(|(s, _)| s.push_str(home)),
            Piece::Glob(c) => out.iter_mut().for_each(|(s, g)| {
                s.push(*c);
                *g = true;
            }),
            Piece::Var { name, .. } if name.starts_with('~') => {
                let user = name.get(1..).unwrap_or("");
                let path = if home.rsplit('/').next() == Some(user) {
                    home.to_owned()
                } else if user == "root" {
                    "/root".to_owned()
                } else {
                    format!("/home/{user}")
                };
                out.iter_mut().for_each(|(s, _)| s.push_str(&path));
            }
            Piece::Var { name, .. } => {
                // Bounded: `A=$B; B=$A` must not loop.
                let values = match vars.get(name) {
                    Some(values) if depth < 8 => values,
                    _ => return Vec::new(),
                };
                let mut expanded: Vec<(String, bool)> = Vec::new();
                for value in values {
                    expanded.extend(expand(value, home, vars, depth + 1));
                }
                let mut next = Vec::new();
                for (prefix, g) in &out {
                    for (text, inner_glob) in &expanded {
                        if next.len() < MAX_CANDIDATES {
                            next.push((format!("{prefix}{text}"), *g || *inner_glob));
                        }
                    }
                }
                out = next;
            }
            Piece::Subst => return Vec::new(),
        }
    }
    out
}

/// True when `path` is absolute with no empty, `.` or `..` component and no
/// trailing slash: already in the form [`normalize`] produces.
fn is_normal(path: &str) -> bool {
    path == "/"
        || (path.starts_with('/')
            && !path.ends_with('/')
            && path
                .get(1..)
                .unwrap_or("")
                .split('/')
                .all(|c| !c.is_empty() && c != "." && c != ".."))
}

/// Folds `.`, `..` and repeated slashes of an absolute path.
pub(crate) fn normalize(path: &str) -> String {
    if is_normal(path) {
        return path.to_owned();
    }
    let mut parts: Vec<&str> = Vec::new();
    for part in path.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                parts.pop();
            }
            other => parts.push(other),
        }
    }
    let mut out = String::with_capacity(path.len());
    for part in &parts {
        out.push('/');
        out.push_str(part);
    }
    if out.is_empty() {
        out.push('/');
    }
    out
}

/// Resolves `word` against each candidate working directory.
pub(crate) fn resolve(word: &Word, home: &str, cwds: &[String], vars: &Vars) -> Vec<Resolved> {
    let mut out = Vec::new();
    for (text, glob) in expand(word, home, vars, 0) {
        if !text.contains('{') {
            out.extend(resolve_text(&text, glob, cwds));
            continue;
        }
        let mut alternatives = Vec::new();
        brace_expand(&text, &mut alternatives);
        let expanded = alternatives.len() > 1;
        for alternative in alternatives {
            // Brace expansion happens before tilde expansion: `{x,~}`.
            let alternative = match alternative.strip_prefix('~') {
                Some(rest) if expanded && (rest.is_empty() || rest.starts_with('/')) => {
                    format!("{home}{rest}")
                }
                _ => alternative,
            };
            out.extend(resolve_text(&alternative, glob, cwds));
        }
    }
    out
}

/// Most words one brace expansion may produce here.
const MAX_BRACE_WORDS: usize = 32;

/// `{a,b}` alternatives (`rm -rf {/,~}`). Quoted braces are expanded too:
/// the extra candidates can only add denials.
pub(crate) fn brace_expand(text: &str, out: &mut Vec<String>) {
    if out.len() >= MAX_BRACE_WORDS {
        return;
    }
    let Some((open, close, commas)) = find_brace(text) else {
        out.push(text.to_owned());
        return;
    };
    let prefix = text.get(..open).unwrap_or("");
    let suffix = text.get(close + 1..).unwrap_or("");
    let mut start = open + 1;
    for cut in commas.into_iter().chain(std::iter::once(close)) {
        let alternative = text.get(start..cut).unwrap_or("");
        brace_expand(&format!("{prefix}{alternative}{suffix}"), out);
        start = cut + 1;
    }
}

/// The first `{…}` holding a top-level comma: its bounds and comma offsets.
fn find_brace(text: &str) -> Option<(usize, usize, Vec<usize>)> {
    let bytes = text.as_bytes();
    for (open, _) in text.match_indices('{') {
        let mut depth = 0usize;
        let mut commas = Vec::new();
        for (k, b) in bytes.iter().enumerate().skip(open) {
            match b {
                b'{' => depth += 1,
                b'}' => {
                    depth = depth.saturating_sub(1);
                    if depth == 0 {
                        if !commas.is_empty() {
                            return Some((open, k, commas));
                        }
                        break;
                    }
                }
                b',' if depth == 1 => commas.push(k),
                _ => {}
            }
        }
    }
    None
}

pub(crate) fn resolve_text(text: &str, glob: bool, cwds: &[String]) -> Vec<Resolved> {
    if text.is_empty() {
        return Vec::new();
    }
    if text.starts_with('/') {
        return vec![Resolved {
            path: normalize(text),
            glob,
        }];
    }
    cwds.iter()
        .map(|cwd| {
            let mut joined = String::with_capacity(cwd.len() + 1 + text.len());
            joined.push_str(cwd);
            joined.push('/');
            joined.push_str(text);
            Resolved {
                path: normalize(&joined),
                glob,
            }
        })
        .collect()
}

/// `path` equals `base` or lies below it.
pub(crate) fn is_within(path: &str, base: &str) -> bool {
    if base == "/" {
        return true;
    }
    path == base
        || path
            .strip_prefix(base)
            .is_some_and(|rest| rest.starts_with('/'))
}

/// Components of an absolute path.
pub(crate) fn components(path: &str) -> Vec<&str> {
    path.split('/').filter(|c| !c.is_empty()).collect()
}

/// Shell glob match of one path component (`*`, `?`, `[…]`).
pub(crate) fn glob_component(pattern: &str, name: &str) -> bool {
    // Without `dotglob`, a leading `.` is only matched by a literal dot.
    if name.starts_with('.') && !pattern.starts_with('.') {
        return false;
    }
    let p: Vec<char> = pattern.chars().collect();
    let n: Vec<char> = name.chars().collect();
    glob_from(&p, &n, 0)
}

fn glob_from(p: &[char], n: &[char], depth: usize) -> bool {
    if depth > 64 {
        // Pathological pattern: answer "may match", the stricter answer.
        return true;
    }
    match p.split_first() {
        None => n.is_empty(),
        Some(('*', rest)) => {
            (0..=n.len()).any(|k| glob_from(rest, n.get(k..).unwrap_or(&[]), depth + 1))
        }
        Some(('?', rest)) => n
            .split_first()
            .is_some_and(|(_, n_rest)| glob_from(rest, n_rest, depth + 1)),
        Some(('[', rest)) => {
            let Some(close) = rest.iter().position(|&c| c == ']') else {
                return n.first() == Some(&'[')
                    && glob_from(rest, n.get(1..).unwrap_or(&[]), depth + 1);
            };
            let Some((first, n_rest)) = n.split_first() else {
                return false;
            };
            let class = rest.get(..close).unwrap_or(&[]);
            let (negate, class) = match class.split_first() {
                Some(('!' | '^', tail)) => (true, tail),
                _ => (false, class),
            };
            let mut hit = false;
            let mut i = 0;
            while let Some(&c) = class.get(i) {
                if class.get(i + 1) == Some(&'-')
                    && let Some(&hi) = class.get(i + 2)
                {
                    hit |= (c..=hi).contains(first);
                    i += 3;
                } else {
                    hit |= c == *first;
                    i += 1;
                }
            }
            hit != negate && glob_from(rest.get(close + 1..).unwrap_or(&[]), n_rest, depth + 1)
        }
        Some((c, rest)) => n
            .split_first()
            .is_some_and(|(first, n_rest)| first == c && glob_from(rest, n_rest, depth + 1)),
    }
}

/// A (possibly globbed) path matches `concrete` component by component.
pub(crate) fn path_matches(pattern: &Resolved, concrete: &str) -> bool {
    if !pattern.glob {
        return pattern.path == concrete;
    }
    let p = components(&pattern.path);
    let c = components(concrete);
    p.len() == c.len()
        && p.iter()
            .zip(c.iter())
            .all(|(pp, cc)| glob_component(pp, cc))
}

/// The pattern names `concrete` or something below it.
pub(crate) fn covers(pattern: &Resolved, concrete: &str) -> bool {
    if !pattern.glob {
        return is_within(concrete, &pattern.path);
    }
    let p = components(&pattern.path);
    let c = components(concrete);
    p.len() <= c.len()
        && p.iter()
            .zip(c.iter())
            .all(|(pp, cc)| glob_component(pp, cc))
}

/// The pattern names something at or below `base`.
pub(crate) fn inside(pattern: &Resolved, base: &str) -> bool {
    if !pattern.glob {
        return is_within(&pattern.path, base);
    }
    let literal_prefix = literal_prefix(pattern);
    is_within(&literal_prefix, base) || (pattern.glob && covers(pattern, base))
}

/// The directories of the path before its first globbed component.
pub(crate) fn literal_prefix(pattern: &Resolved) -> String {
    if !pattern.glob {
        return pattern.path.clone();
    }
    let mut out = String::new();
    for part in components(&pattern.path) {
        if part.contains(['*', '?', '[']) {
            break;
        }
        out.push('/');
        out.push_str(part);
    }
    if out.is_empty() {
        out.push('/');
    }
    out
}

/// A last component that matches everything in its directory (`*`, `.*`,
/// `*.*` is not: it needs a dot).
pub(crate) fn is_match_all(component: &str) -> bool {
    component.contains('*')
        && component.chars().all(|c| matches!(c, '*' | '?' | '.'))
        && component != "*.*"
}

/// Block devices (and raw memory) whose overwrite destroys data.
pub(crate) fn is_block_device(pattern: &Resolved) -> bool {
    let path = if pattern.glob {
        literal_prefix(pattern)
    } else {
        pattern.path.clone()
    };
    let Some(rest) = path.strip_prefix("/dev/") else {
        return pattern.glob && pattern.path.starts_with("/dev/") && path == "/dev";
    };
    const PREFIXES: &[&str] = &[
        "sd", "hd", "vd", "xvd", "nvme", "mmcblk", "loop", "md", "dm-", "sr", "disk/", "mapper/",
        "root", "mem", "kmem", "port", "nbd", "rbd", "zd", "bcache", "ubd",
    ];
    PREFIXES.iter().any(|p| rest.starts_with(p))
        || (pattern.glob && components(&pattern.path).len() == 2)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normalizes_dots() {
        assert_eq!(normalize("/a/./b/../c//"), "/a/c");
        assert_eq!(normalize("/.."), "/");
        assert_eq!(normalize("/home/dev/.."), "/home");
        assert_eq!(normalize("/home/dev"), "/home/dev");
        assert_eq!(normalize("/"), "/");
        assert_eq!(normalize("/a/"), "/a");
        assert_eq!(normalize("/a/.../b"), "/a/.../b");
    }

    #[test]
    fn globs_match_components() {
        assert!(glob_component("*", "anything"));
        assert!(glob_component(".env*", ".env.local"));
        assert!(glob_component("id_[rd]sa", "id_rsa"));
        assert!(!glob_component("id_[!r]sa", "id_rsa"));
        assert!(glob_component("?", "x"));
        assert!(!glob_component("*.md", "x.rs"));
        assert!(!glob_component("*", ".vouch"));
        assert!(glob_component(".*", ".vouch"));
    }

    #[test]
    fn braces_expand() {
        let mut out = Vec::new();
        brace_expand("{/,~}x", &mut out);
        assert_eq!(out, ["/x", "~x"]);
        let mut out = Vec::new();
        brace_expand("a{b,c{d,e}}f", &mut out);
        assert_eq!(out, ["abf", "acdf", "acef"]);
        let mut out = Vec::new();
        brace_expand("${x}{}", &mut out);
        assert_eq!(out, ["${x}{}"]);
    }

    #[test]
    fn match_all_components() {
        assert!(is_match_all("*"));
        assert!(is_match_all(".*"));
        assert!(!is_match_all("*.log"));
    }

    #[test]
    fn block_devices() {
        let r = |p: &str| Resolved {
            path: p.into(),
            glob: p.contains('*'),
        };
        assert!(is_block_device(&r("/dev/sda")));
        assert!(is_block_device(&r("/dev/nvme0n1")));
        assert!(is_block_device(&r("/dev/disk/by-id/x")));
        assert!(is_block_device(&r("/dev/sd*")));
        assert!(!is_block_device(&r("/dev/null")));
        assert!(!is_block_device(&r("/dev/zero")));
        assert!(!is_block_device(&r("/dev/tcp/1.2.3.4/80")));
    }
}
