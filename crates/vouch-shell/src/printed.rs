//! What a few more programs print, when their input is known: the path
//! tools (`dirname`, `basename`, `realpath`, `readlink -f`) over known
//! names, and `tr` over known input (`… | tr a-z n-za-m | sh` runs the
//! rot13 of a known text).
//!
//! Paths are read lexically: `realpath ~` is the home directory as named
//! (a symbolic link on the way is runtime data, and the name is what the
//! hard denies judge). Anything not known — an option these readers do not
//! take, a value with a hole — prints unknown text, as for any program.

use super::path;
use super::state::State;
use super::value::{Arg, Value};

/// What `program` (a path tool) prints for `args` in `state`'s directory.
pub(crate) fn paths(program: &str, args: &[Arg], state: &State) -> Option<Value> {
    let mut names: Vec<&str> = Vec::new();
    let mut suffix: Option<&str> = None;
    let mut multiple = program != "basename";
    let mut follow = program != "readlink";
    let mut words = args.iter();
    while let Some(arg) = words.next() {
        let word = arg.as_known()?;
        match (program, word) {
            (_, "--") => {
                for rest in words.by_ref() {
                    names.push(rest.as_known()?);
                }
                break;
            }
            (
                "realpath",
                "-e"
                | "-m"
                | "-s"
                | "-q"
                | "-L"
                | "-P"
                | "--canonicalize-existing"
                | "--canonicalize-missing"
                | "--no-symlinks"
                | "--quiet"
                | "--logical"
                | "--physical",
            ) => {}
            (
                "readlink",
                "-f"
                | "-e"
                | "-m"
                | "--canonicalize"
                | "--canonicalize-existing"
                | "--canonicalize-missing",
            ) => follow = true,
            ("readlink", "-n" | "-q" | "-s" | "--no-newline" | "--quiet" | "--silent") => {}
            ("basename", "-a" | "--multiple") => multiple = true,
            ("basename", "-s") => {
                suffix = Some(words.next()?.as_known()?);
                multiple = true;
            }
            (_, w) if w.starts_with('-') && w.len() > 1 => return None,
            (_, w) => names.push(w),
        }
    }
    if !follow || names.is_empty() {
        return None;
    }
    if !multiple {
        // `basename NAME [SUFFIX]`.
        if names.len() == 2 {
            suffix = names.pop();
        }
        if names.len() != 1 {
            return None;
        }
    }
    let mut out = String::new();
    for name in names {
        let line = match program {
            "dirname" => dirname(name),
            "basename" => basename(name, suffix),
            _ => path::absolute(name, &state.cwd)?,
        };
        out.push_str(&line);
        out.push('\n');
    }
    Some(Value::known(&out))
}

/// `dirname NAME` as coreutils prints it.
fn dirname(name: &str) -> String {
    let trimmed = name.trim_end_matches('/');
    if trimmed.is_empty() {
        return if name.starts_with('/') { "/" } else { "." }.to_owned();
    }
    match trimmed.rfind('/') {
        None => ".".to_owned(),
        Some(at) => {
            let head = trimmed.get(..at).unwrap_or("").trim_end_matches('/');
            if head.is_empty() { "/" } else { head }.to_owned()
        }
    }
}

/// `basename NAME [SUFFIX]` as coreutils prints it.
fn basename(name: &str, suffix: Option<&str>) -> String {
    let trimmed = name.trim_end_matches('/');
    if trimmed.is_empty() {
        return if name.is_empty() {
            String::new()
        } else {
            "/".to_owned()
        };
    }
    let base = trimmed.rsplit('/').next().unwrap_or(trimmed);
    match suffix.and_then(|s| base.strip_suffix(s)) {
        Some(stripped) if !stripped.is_empty() => stripped.to_owned(),
        _ => base.to_owned(),
    }
}

/// What `tr SET1 SET2` (or `tr -d SET1`) prints of its known input.
pub(crate) fn tr(args: &[Arg], state: &State) -> Option<Value> {
    let input = state.stdin.text.as_ref()?.as_known()?;
    let words: Vec<&str> = args.iter().map(Arg::as_known).collect::<Option<_>>()?;
    match words.as_slice() {
        ["-d", set] | ["--delete", set] => {
            let set = expand_set(set)?;
            Some(Value::known(
                &input
                    .chars()
                    .filter(|c| !set.contains(c))
                    .collect::<String>(),
            ))
        }
        [from, to] if !from.starts_with('-') => {
            let from = expand_set(from)?;
            let to = expand_set(to)?;
            let last = *to.last()?;
            let map = |c: char| -> char {
                match from.iter().rposition(|f| *f == c) {
                    Some(i) => to.get(i).copied().unwrap_or(last),
                    None => c,
                }
            };
            Some(Value::known(&input.chars().map(map).collect::<String>()))
        }
        _ => None,
    }
}

/// A `tr` set with ranges and backslash escapes; `None` for classes and
/// equivalence forms (`[:upper:]`, `[=a=]`), which are not read.
fn expand_set(set: &str) -> Option<Vec<char>> {
    if set.contains("[:") || set.contains("[=") || set.len() > 1024 {
        return None;
    }
    let mut chars: Vec<char> = Vec::new();
    let mut it = set.chars().peekable();
    while let Some(c) = it.next() {
        let c = if c == '\\' {
            match it.next()? {
                'n' => '\n',
                't' => '\t',
                '\\' => '\\',
                other => other,
            }
        } else {
            c
        };
        chars.push(c);
    }
    let mut out = Vec::new();
    let mut i = 0;
    while let Some(&c) = chars.get(i) {
        if chars.get(i + 1) == Some(&'-')
            && let Some(&end) = chars.get(i + 2)
            && end >= c
        {
            out.extend(c..=end);
            i += 3;
        } else {
            out.push(c);
            i += 1;
        }
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn path_tools() {
        assert_eq!(dirname("/home/dev/project"), "/home/dev");
        assert_eq!(dirname("/home"), "/");
        assert_eq!(dirname("a"), ".");
        assert_eq!(dirname("/"), "/");
        assert_eq!(basename("/home/dev/", None), "dev");
        assert_eq!(basename("a.sh", Some(".sh")), "a");
    }

    #[test]
    fn tr_sets() {
        assert_eq!(expand_set("a-e").unwrap(), vec!['a', 'b', 'c', 'd', 'e']);
        assert_eq!(expand_set("n-za-m").unwrap().len(), 26);
        assert!(expand_set("[:upper:]").is_none());
    }
}
