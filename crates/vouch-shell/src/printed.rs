//! What a few more programs print, when their input is known: the path
//! tools (`dirname`, `basename`, `realpath`, `readlink -f`) over known
//! names, and `tr` over known input (`… | tr a-z n-za-m | sh` runs the
//! rot13 of a known text), and the programs that copy their input
//! unchanged ([`copied_input`]: `tee`, `dd`, `sed -n p`, `awk 1`), so text
//! passed through them to a file or a shell is still read.
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

/// Where a program prints its input unchanged from: `Some(Copied::Stdin)`
/// for `tee FILE…` (standard output is standard input), `dd` without
/// `of=`, `sed -n p`, `sed ''`, `awk 1`, `awk '{print}'`;
/// `Some(Copied::File(arg))` for the one file such a filter (or `dd if=`)
/// reads. `None` when the program is not such a copier or an option could
/// change the bytes (`dd skip=`, `sed -e s/…`): its output is not read.
pub(crate) fn copied_input(program: &str, args: &[Arg]) -> Option<Copied> {
    match program {
        // tee's options (`-a`, `-i`, `-p`) never change what it prints.
        "tee" => Some(Copied::Stdin),
        "dd" => {
            let mut input = Copied::Stdin;
            for a in args {
                let (key, value) = a.as_known()?.split_once('=')?;
                match key {
                    "if" => input = Copied::File(Arg::Field(Value::known(value))),
                    // Printed elsewhere: nothing on standard output.
                    "of" => return None,
                    "bs" | "ibs" | "obs" | "status" => {}
                    _ => return None,
                }
            }
            Some(input)
        }
        "sed" | "gsed" => {
            let mut quiet = false;
            let mut scripts: Vec<&str> = Vec::new();
            let mut files: Vec<&Arg> = Vec::new();
            let mut words = args.iter();
            while let Some(a) = words.next() {
                match a.as_known() {
                    Some("-n" | "--quiet" | "--silent") => quiet = true,
                    Some("-u" | "--unbuffered") => {}
                    Some("-e" | "--expression") => scripts.push(words.next()?.as_known()?),
                    Some(w) if w.starts_with('-') && w.len() > 1 => return None,
                    Some(w) if scripts.is_empty() && files.is_empty() => scripts.push(w),
                    _ => files.push(a),
                }
            }
            let same = match scripts.as_slice() {
                [script] => (quiet && script.trim() == "p") || (!quiet && script.trim().is_empty()),
                _ => false,
            };
            same.then_some(())?;
            copied_file(&files)
        }
        "awk" | "gawk" | "mawk" | "nawk" | "busybox-awk" => {
            let (program, files) = args.split_first()?;
            let program: String = program.as_known()?.split_whitespace().collect();
            matches!(program.as_str(), "1" | "{print}" | "{print$0}").then_some(())?;
            let files: Vec<&Arg> = files.iter().collect();
            if files
                .iter()
                .any(|a| a.as_known().is_none_or(|w| w.starts_with('-')))
            {
                return None;
            }
            copied_file(&files)
        }
        _ => None,
    }
}

/// Standard input when no file is named, the one file when one is; more
/// files (or one that may be an option) are not read.
fn copied_file(files: &[&Arg]) -> Option<Copied> {
    match files {
        [] => Some(Copied::Stdin),
        [only]
            if only
                .as_known()
                .is_some_and(|w| !w.starts_with('-') || w == "-") =>
        {
            Some(Copied::File((*only).clone()))
        }
        _ => None,
    }
}

/// What a copier ([`copied_input`]) copies.
#[derive(Debug)]
pub(crate) enum Copied {
    Stdin,
    File(Arg),
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
    fn copiers() {
        let args =
            |w: &[&str]| -> Vec<Arg> { w.iter().map(|t| Arg::Field(Value::known(t))).collect() };
        assert!(matches!(
            copied_input("sed", &args(&["-n", "p"])),
            Some(Copied::Stdin)
        ));
        assert!(matches!(
            copied_input("sed", &args(&["-n", "-e", "p", "f"])),
            Some(Copied::File(_))
        ));
        assert!(copied_input("sed", &args(&["p"])).is_none());
        assert!(copied_input("sed", &args(&["-n", "s/a/b/p"])).is_none());
        assert!(matches!(
            copied_input("awk", &args(&["{ print }"])),
            Some(Copied::Stdin)
        ));
        assert!(copied_input("awk", &args(&["{print $1}"])).is_none());
        assert!(matches!(
            copied_input("dd", &args(&["if=a", "bs=1M"])),
            Some(Copied::File(_))
        ));
        assert!(copied_input("dd", &args(&["of=a"])).is_none());
        assert!(copied_input("dd", &args(&["skip=1"])).is_none());
        assert!(matches!(
            copied_input("tee", &args(&["-a", "x"])),
            Some(Copied::Stdin)
        ));
    }

    #[test]
    fn tr_sets() {
        assert_eq!(expand_set("a-e").unwrap(), vec!['a', 'b', 'c', 'd', 'e']);
        assert_eq!(expand_set("n-za-m").unwrap().len(), 26);
        assert!(expand_set("[:upper:]").is_none());
    }
}
