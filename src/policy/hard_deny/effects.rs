//! What a unit does to which paths: writes, deletes, moves, mode changes,
//! links and reads.
//!
//! Several categories ask the same question ("does this command write
//! `authorized_keys`?", "does it delete vouch's state dir?", "does it read
//! `.env`?"), so the answer lives here once, per command family.

use crate::shell::{Unit, Word};

/// How a unit touches a path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Effect {
    Write,
    /// Removed; `recursive` when a whole tree goes.
    Delete {
        recursive: bool,
    },
    /// Moved away (the tree below goes with it).
    MoveAway,
    Mode {
        recursive: bool,
    },
    /// Made the target of a link (`ln -s PROTECTED alias` opens a second
    /// name through which the protected file can be changed).
    Link,
    Read {
        recursive: bool,
    },
}

impl Effect {
    pub(crate) fn verb(self) -> &'static str {
        match self {
            Effect::Write => "writes",
            Effect::Delete { .. } => "deletes",
            Effect::MoveAway => "moves",
            Effect::Mode { .. } => "changes permissions of",
            Effect::Link => "links to",
            Effect::Read { .. } => "reads",
        }
    }

    /// Changes or removes what is at the path.
    pub(crate) fn modifies(self) -> bool {
        !matches!(self, Effect::Read { .. })
    }

    /// Acts on everything below the path too.
    pub(crate) fn whole_tree(self) -> bool {
        matches!(
            self,
            Effect::Delete { recursive: true }
                | Effect::MoveAway
                | Effect::Mode { recursive: true }
        )
    }
}

/// Options and operands of a command line, GNU style (options may follow
/// operands; `--` ends options).
pub(crate) struct Args<'u> {
    pub opts: Vec<(String, Option<&'u Word>)>,
    pub operands: Vec<&'u Word>,
}

impl<'u> Args<'u> {
    pub(crate) fn parse(args: &'u [Word], value_short: &str, value_long: &[&str]) -> Self {
        let mut opts = Vec::new();
        let mut operands = Vec::new();
        let mut i = 0;
        let mut options_done = false;
        while let Some(word) = args.get(i) {
            i += 1;
            let literal = word.as_literal();
            let Some(arg) = literal.filter(|a| !options_done && a.starts_with('-') && a.len() > 1)
            else {
                if literal == Some("--") && !options_done {
                    options_done = true;
                } else {
                    operands.push(word);
                }
                continue;
            };
            if let Some(long) = arg.strip_prefix("--") {
                match long.split_once('=') {
                    Some((name, _)) => opts.push((name.to_owned(), Some(word))),
                    None if value_long.contains(&long) => {
                        opts.push((long.to_owned(), args.get(i)));
                        i += 1;
                    }
                    None => opts.push((long.to_owned(), None)),
                }
                continue;
            }
            let cluster = arg.get(1..).unwrap_or("");
            for (pos, c) in cluster.char_indices() {
                if value_short.contains(c) {
                    if cluster.len() > pos + c.len_utf8() {
                        opts.push((c.to_string(), Some(word)));
                    } else {
                        opts.push((c.to_string(), args.get(i)));
                        i += 1;
                    }
                    break;
                }
                opts.push((c.to_string(), None));
            }
        }
        Args { opts, operands }
    }

    pub(crate) fn has(&self, names: &[&str]) -> bool {
        self.opts.iter().any(|(n, _)| names.contains(&n.as_str()))
    }

    /// Values of the named options, with `--name=` / `-xVALUE` prefixes removed.
    pub(crate) fn values(&self, names: &[&str]) -> Vec<Word> {
        self.opts
            .iter()
            .filter(|(n, _)| names.contains(&n.as_str()))
            .filter_map(|(n, v)| v.map(|w| option_value(n, w)))
            .collect()
    }
}

/// Strips `--name=` or `-x` from an option word that carries its value.
pub(crate) fn option_value(name: &str, word: &Word) -> Word {
    let Some(text) = word.as_literal() else {
        return word.clone();
    };
    let long = format!("--{name}=");
    let short = format!("-{name}");
    if let Some(v) = text.strip_prefix(&long) {
        return Word::literal_text(v);
    }
    if name.chars().count() == 1
        && let Some(v) = text.strip_prefix('-')
        && let Some(pos) = v.find(name)
        && text != short
    {
        return Word::literal_text(v.get(pos + name.len()..).unwrap_or(""));
    }
    word.clone()
}

/// Commands that name paths without reading their contents.
const METADATA_ONLY: &[&str] = &[
    "echo", "printf", "ls", "stat", "file", "test", "[", "[[", "realpath", "readlink", "basename",
    "dirname", "du", "which", "type", "command", "touch", "mkdir", "cd", "pushd", "wc", "git",
    "true", "false", ":", "export", "unset",
];

/// Editors: every operand is written.
const EDITORS: &[&str] = &[
    "vi", "vim", "nvim", "nano", "emacs", "ed", "ex", "micro", "sudoedit", "code", "subl", "pico",
    "joe", "kak", "hx",
];

/// The path effects of one unit, with the word that names each path.
#[expect(
    clippy::too_many_lines,
    reason = "predates the 80-line limit; split by issue 8"
)]
pub(crate) fn effects(unit: &Unit) -> Vec<(Effect, Word)> {
    let mut out: Vec<(Effect, Word)> = Vec::new();
    for redirect in &unit.redirects {
        if redirect.op.writes() {
            out.push((Effect::Write, redirect.target.clone()));
        }
        if redirect.op.reads_file() {
            out.push((Effect::Read { recursive: false }, redirect.target.clone()));
        }
    }
    let Some(name) = unit.name() else {
        return out;
    };
    let args = unit.args();
    let all = |effect: Effect, operands: &[&Word], out: &mut Vec<(Effect, Word)>| {
        for w in operands {
            out.push((effect, (*w).clone()));
        }
    };
    match name {
        "rm" | "unlink" | "rmdir" | "shred" | "rimraf" | "trash" | "trash-put" | "srm" => {
            let a = Args::parse(
                args,
                "n",
                &["interactive", "iterations", "size", "random-source"],
            );
            let recursive = name == "rimraf" || a.has(&["r", "R", "recursive"]);
            all(Effect::Delete { recursive }, &a.operands, &mut out);
        }
        "mv" | "cp" | "install" | "ln" | "rsync" | "scp" | "ditto" => {
            let value_short = match name {
                "install" => "tSmog",
                "rsync" => "efTB",
                "scp" => "cFiJlOoPS",
                _ => "tS",
            };
            let a = Args::parse(
                args,
                value_short,
                &[
                    "target-directory",
                    "suffix",
                    "mode",
                    "owner",
                    "group",
                    "backup",
                    "exclude",
                    "include",
                    "rsh",
                    "rsync-path",
                    "filter",
                    "chmod",
                    "chown",
                ],
            );
            let recursive =
                a.has(&["r", "R", "a", "recursive", "archive"]) || name == "rsync" || name == "mv";
            let target_dir: Vec<Word> = a.values(&["t", "target-directory"]);
            let (sources, dest): (Vec<&Word>, Option<Word>) = match target_dir.first() {
                Some(dir) => (a.operands.clone(), Some(dir.clone())),
                None => match a.operands.split_last() {
                    Some((last, rest)) if !rest.is_empty() => {
                        (rest.to_vec(), Some((*last).clone()))
                    }
                    Some((last, _)) if name == "install" && a.has(&["d", "directory"]) => {
                        (Vec::new(), Some((*last).clone()))
                    }
                    _ => (Vec::new(), None),
                },
            };
            if name == "ln" {
                all(Effect::Link, &sources, &mut out);
                if let Some(dest) = dest {
                    out.push((Effect::Write, dest.clone()));
                    push_into_dir(&mut out, &dest, &sources);
                }
                return out;
            }
            let source_effect = if name == "mv" {
                Effect::MoveAway
            } else {
                Effect::Read { recursive }
            };
            all(source_effect, &sources, &mut out);
            if let Some(dest) = dest {
                out.push((Effect::Write, dest.clone()));
                push_into_dir(&mut out, &dest, &sources);
            }
        }
        // The identity file (`-i`) authenticates; nothing named is sent.
        "ssh" => {}
        "tee" => {
            let a = Args::parse(args, "", &["output-error"]);
            all(Effect::Write, &a.operands, &mut out);
        }
        "touch" | "truncate" => {
            let a = Args::parse(args, "srdt", &["reference", "size", "date"]);
            all(Effect::Write, &a.operands, &mut out);
        }
        "chmod" | "chown" | "chgrp" | "chattr" | "setfacl" | "chflags" => {
            let a = Args::parse(args, "", &["reference", "from"]);
            let recursive = a.has(&["R", "recursive"]);
            // The first operand is the mode/owner unless `--reference` names it.
            let skip = usize::from(!a.has(&["reference"]) && name != "setfacl");
            let paths: Vec<&Word> = a.operands.iter().skip(skip).copied().collect();
            all(Effect::Mode { recursive }, &paths, &mut out);
        }
        "sed" | "perl" | "gsed" => {
            let a = Args::parse(args, "efl", &["expression", "file", "line-length"]);
            let in_place = a.has(&["i", "in-place"])
                || a.opts.iter().any(|(n, _)| n.starts_with("in-place"))
                || args.iter().any(|w| {
                    w.as_literal().is_some_and(|t| {
                        t.starts_with('-') && !t.starts_with("--") && t.contains('i')
                    })
                });
            let skip = usize::from(!a.has(&["e", "f", "expression", "file"]));
            let files: Vec<&Word> = a.operands.iter().skip(skip).copied().collect();
            let effect = if in_place {
                Effect::Write
            } else {
                Effect::Read { recursive: false }
            };
            all(effect, &files, &mut out);
        }
        "dd" => {
            for w in args {
                let text = w.to_script();
                if let Some(path) = text.strip_prefix("of=") {
                    out.push((Effect::Write, strip_prefix_word(w, "of=", path)));
                } else if let Some(path) = text.strip_prefix("if=") {
                    out.push((
                        Effect::Read { recursive: false },
                        strip_prefix_word(w, "if=", path),
                    ));
                }
            }
        }
        "curl" => {
            let a = Args::parse(
                args,
                crate::policy::hard_deny::net::CURL_VALUE_SHORT,
                crate::policy::hard_deny::net::CURL_VALUE_LONG,
            );
            for w in a.values(&["o", "output", "D", "dump-header", "c", "cookie-jar"]) {
                out.push((Effect::Write, w));
            }
        }
        "wget" => {
            let a = Args::parse(
                args,
                "OoaPe",
                &[
                    "output-document",
                    "output-file",
                    "append-output",
                    "directory-prefix",
                ],
            );
            for w in a.values(&[
                "O",
                "output-document",
                "o",
                "output-file",
                "a",
                "append-output",
            ]) {
                out.push((Effect::Write, w));
            }
        }
        "tar" | "bsdtar" | "gtar" => {
            let a = Args::parse(args, "fCT", &["file", "directory", "files-from"]);
            let first_cluster = args.first().and_then(Word::as_literal).unwrap_or("");
            let create = a.has(&["c", "create", "r", "u", "append"])
                || (!first_cluster.starts_with('-') && first_cluster.contains(['c', 'r', 'u']));
            let extract = a.has(&["x", "extract", "get"])
                || (!first_cluster.starts_with('-') && first_cluster.contains('x'));
            let mut files = a.values(&["f", "file"]);
            let mut operands: Vec<&Word> = a.operands.clone();
            if !first_cluster.starts_with('-')
                && first_cluster.contains('f')
                && files.is_empty()
                && operands.len() > 1
            {
                // Old-style `tar czf out.tgz dir`: the first operand after the
                // cluster is the archive.
                operands.remove(0);
                if let Some(archive) = operands.first() {
                    files.push((*archive).clone());
                }
                operands.remove(0);
            }
            if create {
                for f in files {
                    out.push((Effect::Write, f));
                }
                all(Effect::Read { recursive: true }, &operands, &mut out);
            } else if extract {
                for dir in a.values(&["C", "directory"]) {
                    out.push((Effect::Write, dir));
                }
            }
        }
        "unzip" => {
            let a = Args::parse(args, "d", &[]);
            for dir in a.values(&["d"]) {
                out.push((Effect::Write, dir));
            }
        }
        _ if EDITORS.contains(&name) => {
            let a = Args::parse(args, "", &[]);
            all(Effect::Write, &a.operands, &mut out);
        }
        _ if METADATA_ONLY.contains(&name) => {}
        _ => {
            // Any other command may read the files it names.
            let a = Args::parse(args, "", &[]);
            let recursive = matches!(
                name,
                "zip" | "7z" | "grep" | "rg" | "base64" | "gzip" | "xz" | "bzip2" | "zstd"
            );
            all(Effect::Read { recursive }, &a.operands, &mut out);
        }
    }
    out
}

/// `cp authorized_keys ~/.ssh/` writes `~/.ssh/authorized_keys`.
fn push_into_dir(out: &mut Vec<(Effect, Word)>, dest: &Word, sources: &[&Word]) {
    for source in sources {
        let Some(text) = source.literal() else {
            continue;
        };
        let base = text.trim_end_matches('/').rsplit('/').next().unwrap_or("");
        if base.is_empty() || base == "." || base == ".." {
            continue;
        }
        let mut joined = dest.clone();
        joined.push_str("/");
        joined.push_str(base);
        out.push((Effect::Write, joined));
    }
}

/// The path part of a `key=path` word, keeping its expansions.
fn strip_prefix_word(word: &Word, prefix: &str, literal_rest: &str) -> Word {
    if word.as_literal().is_some() {
        return Word::literal_text(literal_rest);
    }
    let mut out = word.clone();
    if let Some(crate::shell::Piece::Literal(first)) = out.pieces.first_mut()
        && let Some(rest) = first.strip_prefix(prefix)
    {
        *first = rest.to_owned();
    }
    out
}
