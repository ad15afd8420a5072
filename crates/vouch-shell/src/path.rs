//! Lexical paths: joining a relative path to a working directory and
//! folding `.`, `..` and repeated slashes the way bash's logical `cd` does.
//! Nothing here touches the file system (symlinks are the adapter's
//! `resolved_path`).

use super::value::Value;

/// The pieces of `path` between slashes, as `path.split('/')` gives them,
/// found by a plain byte scan: for components this short the `char`
/// searcher's set-up costs more than the search (every path of every
/// command is normalized).
fn components(path: &str) -> impl Iterator<Item = &str> {
    let mut rest = Some(path);
    std::iter::from_fn(move || {
        let r = rest?;
        match r.bytes().position(|b| b == b'/') {
            Some(i) => {
                rest = r.get(i + 1..);
                r.get(..i)
            }
            None => {
                rest = None;
                Some(r)
            }
        }
    })
}

/// True when `path` is absolute with no empty, `.` or `..` component and no
/// trailing slash: already in the form [`normalize`] produces.
fn is_normal(path: &str) -> bool {
    path == "/"
        || (path.starts_with('/')
            && !path.ends_with('/')
            && components(path.get(1..).unwrap_or(""))
                .all(|c| !c.is_empty() && c != "." && c != ".."))
}

/// Folds `.`, `..` and repeated slashes of an absolute path.
pub fn normalize(path: &str) -> String {
    if is_normal(path) {
        return path.to_owned();
    }
    let mut parts: Vec<&str> = Vec::new();
    for part in components(path) {
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

/// `path` made absolute against `cwd` and normalized.
pub fn join(cwd: &str, path: &str) -> String {
    if path.starts_with('/') {
        return normalize(path);
    }
    let mut joined = String::with_capacity(cwd.len() + 1 + path.len());
    joined.push_str(cwd);
    joined.push('/');
    joined.push_str(path);
    normalize(&joined)
}

/// True when `dir` is `path` or one of its ancestors.
pub fn is_ancestor_or_self(dir: &str, path: &str) -> bool {
    dir == "/"
        || path == dir
        || path
            .strip_prefix(dir)
            .is_some_and(|rest| rest.starts_with('/'))
}

/// `path` made absolute against a working directory that must be known.
pub fn absolute(path: &str, cwd: &Value) -> Option<String> {
    if path.starts_with('/') {
        return Some(normalize(path));
    }
    Some(join(cwd.as_known()?, path))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normalizes_dots() {
        assert_eq!(normalize("/a/./b/../c//"), "/a/c");
        assert_eq!(normalize("/.."), "/");
        assert_eq!(normalize("/home/dev/.."), "/home");
        assert_eq!(normalize("/"), "/");
        assert_eq!(normalize("/a/.../b"), "/a/.../b");
        assert_eq!(join("/srv/app", "../x"), "/srv/x");
        assert_eq!(join("/srv/app", "/etc"), "/etc");
    }

    #[test]
    fn components_split_as_str_split_does() {
        for p in [
            "", "/", "//", "a", "/a", "a/", "/a/b/", "/a//b", "a/./../b", "/é/ü//",
        ] {
            assert_eq!(
                components(p).collect::<Vec<_>>(),
                p.split('/').collect::<Vec<_>>(),
                "{p}"
            );
        }
    }
}
