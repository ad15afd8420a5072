//! Effects of the commands whose operands a table row cannot describe:
//! `dd key=value`, `tar` modes, `git` subcommands, `sed`/`perl` scripts,
//! archives, `sqlite3`, HTTP clients' request items, stream sinks, and the
//! disk tools whose read-only options must not count as writes.

use super::{Effects, after_marker, after_prefix};
use crate::command::Command;
use crate::options::Parsed;
use crate::runners::{option_value, parse_args};
use crate::spec::{CommandSpec, Modifier, Network, Role};
use crate::value::{Arg, Value};

fn operands(parsed: &Parsed, args: &[Arg]) -> Vec<Value> {
    parsed
        .operands()
        .into_iter()
        .filter_map(|at| match args.get(at) {
            Some(Arg::Field(v)) => Some(v.clone()),
            _ => None,
        })
        .collect()
}

fn known_args(args: &[Arg]) -> Vec<Option<&str>> {
    args.iter().map(Arg::as_known).collect()
}

/// What a command with its own argument conventions reads, writes or
/// reaches, one arm per command family.
pub(crate) fn effects(
    name: &str,
    spec: &CommandSpec,
    parsed: &Parsed,
    cmd: &Command,
    args: &[Arg],
    out: &mut Effects,
) {
    match name {
        "chmod" | "chown" | "chgrp" | "chattr" | "chflags" | "lchown" => {
            mode_change(parsed, args, out)
        }
        "patch" => patch(parsed, args, out),
        "cmake" => cmake(args, out),
        "gh" | "aws" | "gsutil" | "rclone" | "az" | "gcloud" | "s3cmd" | "mc" | "lftp" | "ftp"
        | "tftp" | "smbclient" | "aria2c" | "croc" | "magic-wormhole" | "wormhole" | "transfer"
        | "ffsend" => {
            out.network = Network::Client;
            uploads(name, args, cmd, out);
        }
        "sed" | "gsed" | "perl" => script_files(name, parsed, args, out),
        "dd" | "dcfldd" | "dc3dd" | "ddpt" => dd(args, out),
        "ddrescue" | "gddrescue" => ddrescue(parsed, args, out),
        "tar" | "bsdtar" | "gtar" => tar(spec, args, cmd, out),
        "zip" => zip(parsed, args, out),
        "unzip" => unzip(parsed, args, cmd, out),
        "7z" | "7za" | "7zr" => seven_zip(args, cmd, out),
        "sqlite3" => sqlite3(args, out),
        "git" => git(spec, args, cmd, out),
        "http" | "https" | "xh" | "xhs" | "httpie" => http_items(args, out),
        "ssh" => {
            // The destination is the host; a remote command runs there.
            if let Some(host) = operands(parsed, args).into_iter().next() {
                out.items.push((Role::Url, host));
            }
        }
        "sftp" => {
            if let Some(host) = operands(parsed, args).into_iter().next() {
                out.items.push((Role::Url, host));
            }
            uploads(name, args, cmd, out);
        }
        "nc" | "ncat" | "netcat" | "telnet" | "cryptcat" | "pwncat" | "sendmail" => {
            peers(args, out)
        }
        "mail" | "mailx" | "mutt" => mail(args, out),
        "socat" => socat(args, out),
        "openssl" => openssl(args, out),
        "wipefs" => wipefs(parsed, args, out),
        "awk" | "gawk" | "mawk" | "nawk" => awk(parsed, args, out),
        "del-cli" => {
            out.modifiers.extend([Modifier::Recursive, Modifier::Force]);
            for v in operands(parsed, args) {
                out.items.push((Role::Delete, v));
            }
        }
        "badblocks" => badblocks(parsed, args, out),
        _ if is_formatter(name) => formatter(name, parsed, args, out),
        _ => disk_tool(name, args, out),
    }
}

/// `patch`: the file patched (or `-o`'s output), inside `-d`'s directory.
fn patch(parsed: &Parsed, args: &[Arg], out: &mut Effects) {
    let dir = parsed
        .values(&["d", "directory"])
        .last()
        .map(|v| option_value(args, *v));
    let targets: Vec<Value> = operands(parsed, args)
        .into_iter()
        .take(1)
        .chain(
            parsed
                .values(&["o", "output"])
                .into_iter()
                .map(|v| option_value(args, v)),
        )
        .collect();
    for t in targets {
        let t = match &dir {
            Some(d) => join_relative(d, &t).unwrap_or(t),
            None => t,
        };
        out.items.push((Role::Write, t));
    }
    if let Some(d) = dir {
        out.items.push((Role::WriteInto, d));
    }
}

/// `dd of=… if=…`.
fn dd(args: &[Arg], out: &mut Effects) {
    for a in args {
        let Arg::Field(v) = a else { continue };
        if let Some(p) = after_prefix(v, "of=") {
            out.items.push((Role::Write, p));
        } else if let Some(p) = after_prefix(v, "if=") {
            out.items.push((Role::Read, p));
        }
    }
}

/// `ddrescue INFILE OUTFILE [MAPFILE]`: the output is written (a device
/// only with `-f`, which ddrescue demands for one).
fn ddrescue(parsed: &Parsed, args: &[Arg], out: &mut Effects) {
    let mut it = operands(parsed, args).into_iter();
    if let Some(input) = it.next() {
        out.items.push((Role::Read, input));
    }
    if let Some(output) = it.next() {
        out.items.push((Role::Write, output));
    }
}

/// `zip ARCHIVE FILES…`: the archive is written, the files read.
fn zip(parsed: &Parsed, args: &[Arg], out: &mut Effects) {
    let mut it = operands(parsed, args).into_iter();
    if let Some(archive) = it.next() {
        out.items.push((Role::Write, archive));
    }
    for v in it {
        out.items.push((Role::ReadTree, v));
    }
}

/// `unzip ARCHIVE [-d DIR]`: extracts into `-d` or the working directory.
fn unzip(parsed: &Parsed, args: &[Arg], cmd: &Command, out: &mut Effects) {
    let dir = parsed
        .values(&["d"])
        .last()
        .map(|v| option_value(args, *v))
        .unwrap_or_else(|| cmd.cwd.clone());
    out.items.push((Role::WriteInto, dir));
    if let Some(archive) = operands(parsed, args).into_iter().next() {
        out.items.push((Role::Read, archive));
    }
}

/// `sqlite3 DB`: the database file (the first operand) is opened for
/// writing unless read-only.
fn sqlite3(args: &[Arg], out: &mut Effects) {
    let words = known_args(args);
    let readonly = words
        .iter()
        .any(|a| matches!(a, Some("-readonly" | "--readonly" | "-safe")));
    let mut k = 0;
    while let Some(a) = args.get(k) {
        let t = a.as_known().unwrap_or("");
        if matches!(
            t,
            "-cmd"
                | "-init"
                | "-separator"
                | "-newline"
                | "-nullvalue"
                | "-mmap"
                | "-lookaside"
                | "-pagecache"
                | "-heap"
                | "-vfs"
                | "-maxsize"
                | "-escape"
        ) {
            k += 2;
            continue;
        }
        if t.starts_with('-') {
            k += 1;
            continue;
        }
        if let Arg::Field(v) = a {
            out.items
                .push((if readonly { Role::Read } else { Role::Write }, v.clone()));
        }
        break;
    }
}

/// Network clients whose every operand that is not an option is a peer.
fn peers(args: &[Arg], out: &mut Effects) {
    for a in args {
        if let Arg::Field(v) = a
            && !v.as_known().is_some_and(|t| t.starts_with('-'))
        {
            out.items.push((Role::Url, v.clone()));
        }
    }
}

/// `mail`/`mailx`/`mutt`: every operand is a recipient, and an attachment
/// (`-a FILE`, `-A FILE`, `--attach=FILE`) is sent.
fn mail(args: &[Arg], out: &mut Effects) {
    let mut k = 0;
    while let Some(a) = args.get(k) {
        k += 1;
        let Arg::Field(v) = a else { continue };
        match v.as_known() {
            Some("-a" | "-A" | "--attach") => {
                if let Some(Arg::Field(file)) = args.get(k) {
                    out.items.push((Role::Upload, file.clone()));
                }
                k += 1;
            }
            Some(t) if t.starts_with("--attach=") => {
                out.items.push((
                    Role::Upload,
                    Value::known(t.trim_start_matches("--attach=")),
                ));
            }
            Some(t) if t.starts_with('-') => {
                // `-s SUBJECT`, `-c CC`, `-b BCC`: a value that is not a
                // recipient.
                if matches!(t, "-s" | "-c" | "-b" | "-r" | "-S" | "-q") {
                    k += 1;
                }
            }
            _ => out.items.push((Role::Url, v.clone())),
        }
    }
}

/// awk reads its file operands (after the program, unless `-f`, `-e`,
/// `--source` or `-E` gave it; `NAME=value` operands are assignments);
/// gawk's `-i inplace` (the `inplace` extension) rewrites each of them.
fn awk(parsed: &Parsed, args: &[Arg], out: &mut Effects) {
    let program_given = parsed.has(&["f", "file", "e", "source", "E", "exec"]);
    let in_place = parsed.values(&["i", "include"]).into_iter().any(|v| {
        option_value(args, v)
            .candidates()
            .iter()
            .any(|t| matches!(t.as_known(), Some("inplace" | "inplace.awk")))
    });
    if in_place {
        out.modifiers.push(Modifier::InPlace);
    }
    let files = operands(parsed, args)
        .into_iter()
        .skip(usize::from(!program_given))
        .filter(|v| {
            !v.as_known()
                .is_some_and(|t| t.contains('=') && !t.starts_with('/'))
        });
    for v in files {
        out.items.push((Role::Read, v.clone()));
        if in_place {
            out.items.push((Role::Write, v));
        }
    }
    for v in parsed.values(&["f", "file"]) {
        out.items.push((Role::Read, option_value(args, v)));
    }
}

/// `wipefs`: without `-a` or `-o` it only lists signatures.
fn wipefs(parsed: &Parsed, args: &[Arg], out: &mut Effects) {
    let erases = parsed.has(&["a", "all", "o", "offset"]) && !parsed.has(&["n", "no-act"]);
    if erases {
        for v in operands(parsed, args) {
            out.items.push((Role::Write, v));
        }
    }
}

/// `badblocks -w` writes its device.
fn badblocks(parsed: &Parsed, args: &[Arg], out: &mut Effects) {
    if known_args(args)
        .iter()
        .any(|a| a.is_some_and(|t| t.starts_with('-') && t.contains('w')))
    {
        for v in operands(parsed, args) {
            out.items.push((Role::Write, v));
        }
    }
}

/// `mkfs*` and friends write their device unless only asked what they would do.
fn formatter(name: &str, parsed: &Parsed, args: &[Arg], out: &mut Effects) {
    if formatter_dry_run(name, &known_args(args)) {
        return;
    }
    for v in operands(parsed, args) {
        out.items.push((Role::Write, v));
    }
    if name == "mkfs" {
        // `mkfs -t ext4 DEV`: the device is the last operand.
        for a in args.iter().rev().take(1) {
            if let Arg::Field(v) = a {
                out.items.push((Role::Write, v.clone()));
            }
        }
    }
}

/// Whether this formatter run only prints what it would do. The dry-run
/// letter is each tool's own: `-n` for mke2fs and mkntfs, `-N` for
/// mkfs.xfs and BSD newfs; elsewhere those letters take a value
/// (`mkfs.vfat -n LABEL`, `mkfs.xfs -n size=…`, `mke2fs -N INODES`), so
/// they change nothing. `--help` and `--version` print and exit.
fn formatter_dry_run(name: &str, words: &[Option<&str>]) -> bool {
    let fs_type = words
        .iter()
        .position(|w| *w == Some("-t"))
        .and_then(|at| words.get(at + 1).copied().flatten());
    let family = match (name, fs_type) {
        ("mkfs", Some(t)) => t.to_owned(),
        (n, _) => n
            .strip_prefix("mkfs.")
            .or_else(|| n.strip_prefix("mke2fs").map(|_| "ext2"))
            .or_else(|| n.strip_prefix("mkntfs").map(|_| "ntfs"))
            .unwrap_or(n)
            .to_owned(),
    };
    // Letters of options that take no value, which getopt lets a cluster
    // hold together with the dry-run letter (`-Fn`).
    let (letter, flags): (char, &str) = match family.as_str() {
        "ext2" | "ext3" | "ext4" => ('n', "cFjnqSvDK"),
        "ntfs" => ('n', "nfqvFQIC"),
        "xfs" => ('N', "NfKq"),
        "newfs" | "newfs_msdos" | "newfs_udf" => ('N', "N"),
        _ => ('\0', ""),
    };
    words.iter().flatten().any(|w| {
        matches!(*w, "--help" | "--version")
            || (family == "ntfs" && *w == "--no-action")
            || w.strip_prefix('-').is_some_and(|c| {
                !c.starts_with('-') && c.contains(letter) && c.chars().all(|x| flags.contains(x))
            })
    })
}

fn is_formatter(name: &str) -> bool {
    name == "mkfs"
        || name.starts_with("mkfs.")
        || name.starts_with("newfs")
        || matches!(
            name,
            "mke2fs"
                | "mkswap"
                | "mkdosfs"
                | "mkntfs"
                | "newfs"
                | "newfs_apfs"
                | "newfs_hfs"
                | "mkreiserfs"
                | "mkudffs"
                | "mkexfatfs"
                | "wipefs"
                | "blkdiscard"
        )
}

/// `sed SCRIPT FILES` / `sed -e S FILES` / `perl -e CODE FILES`: files read,
/// or written with `-i`. GNU sed's `e` command and `s///e` run shell code.
fn script_files(name: &str, parsed: &Parsed, args: &[Arg], out: &mut Effects) {
    let scripted = parsed.has(&["e", "expression", "f", "file", "E"]) && name == "perl"
        || parsed.has(&["e", "expression", "f", "file"]);
    let ops = operands(parsed, args);
    let mut files = ops.into_iter();
    if !scripted && let Some(script) = files.next() {
        out.items.push((Role::Value, script));
    }
    let in_place = out.has(Modifier::InPlace);
    for f in files {
        out.items
            .push((if in_place { Role::Write } else { Role::Read }, f));
    }
}

fn tar(spec: &CommandSpec, args: &[Arg], cmd: &Command, out: &mut Effects) {
    // Old-style `tar czf out.tgz dir`: the first word is a cluster.
    let mut words: Vec<Arg> = args.to_vec();
    if let Some(first) = words.first().and_then(Arg::as_known)
        && !first.starts_with('-')
        && !first.is_empty()
        && first.chars().all(|c| c.is_ascii_alphabetic())
    {
        let cluster = format!("-{first}");
        if let Some(slot) = words.first_mut() {
            *slot = Arg::known(&cluster);
        }
    }
    let parsed = parse_args(spec, &words);
    let create = parsed.has(&[
        "c",
        "create",
        "r",
        "append",
        "u",
        "update",
        "A",
        "catenate",
        "concatenate",
    ]);
    let extract = parsed.has(&["x", "extract", "get"]);
    let archives: Vec<Value> = parsed
        .values(&["f", "file"])
        .into_iter()
        .map(|v| option_value(&words, v))
        .collect();
    let dirs: Vec<Value> = parsed
        .values(&["C", "directory"])
        .into_iter()
        .map(|v| option_value(&words, v))
        .collect();
    for v in parsed.values(&[
        "to-command",
        "checkpoint-action",
        "use-compress-program",
        "I",
        "info-script",
        "F",
        "new-volume-script",
        "rsh-command",
    ]) {
        out.items.push((Role::Script, option_value(&words, v)));
    }
    if create {
        for a in &archives {
            out.items.push((Role::Write, a.clone()));
        }
        for v in operands(&parsed, &words) {
            out.items.push((Role::ReadTree, v));
        }
    } else if extract {
        for a in &archives {
            out.items.push((Role::Read, a.clone()));
        }
        let target = dirs.last().cloned().unwrap_or_else(|| cmd.cwd.clone());
        out.items.push((Role::WriteInto, target.clone()));
        for v in operands(&parsed, &words) {
            if let Some(joined) = join_relative(&target, &v) {
                out.items.push((Role::Write, joined));
            }
        }
    }
}

/// `dir/rel` for a relative `rel`.
fn join_relative(dir: &Value, rel: &Value) -> Option<Value> {
    let mut candidates = Vec::new();
    for r in rel.candidates() {
        for d in dir.candidates() {
            if r.known_prefix().starts_with('/') {
                candidates.push(r.clone());
                continue;
            }
            let mut t = d.clone();
            t.push_str("/");
            t.append(r);
            candidates.push(t);
        }
    }
    Value::from_candidates(candidates)
}

fn seven_zip(args: &[Arg], cmd: &Command, out: &mut Effects) {
    let mode = args.first().and_then(Arg::as_known).unwrap_or("");
    let mut outdir = None;
    let mut rest = Vec::new();
    for a in args.iter().skip(1) {
        if let Arg::Field(v) = a {
            if let Some(d) = after_prefix(v, "-o") {
                outdir = Some(d);
            } else if !v.as_known().is_some_and(|t| t.starts_with('-')) {
                rest.push(v.clone());
            }
        }
    }
    match mode {
        "a" | "u" => {
            let mut it = rest.into_iter();
            if let Some(archive) = it.next() {
                out.items.push((Role::Write, archive));
            }
            for v in it {
                out.items.push((Role::ReadTree, v));
            }
        }
        "x" | "e" => {
            out.items
                .push((Role::WriteInto, outdir.unwrap_or_else(|| cmd.cwd.clone())));
        }
        _ => {}
    }
}

/// `git [-C dir] [-c k=v] SUBCOMMAND …`: writes of `checkout`/`restore`/
/// `clone`/`init`/`worktree`, `config` files, and shell code git runs.
fn git(spec: &CommandSpec, args: &[Arg], cmd: &Command, out: &mut Effects) {
    let parsed = parse_args(spec, args);
    let mut dir = cmd.cwd.clone();
    for v in parsed.values(&["C"]) {
        let d = option_value(args, v);
        dir = join_relative(&dir, &d).unwrap_or(d);
    }
    // `--work-tree=DIR` (or a separate value) is where checkouts land and
    // what `clean` empties.
    if let Some(v) = parsed.values(&["work-tree"]).last() {
        let d = option_value(args, *v);
        dir = join_relative(&dir, &d).unwrap_or(d);
    }
    let (settings, sub_at) = git_settings(spec, args);
    for setting in settings {
        out.items.push((Role::Value, setting));
    }
    let Some(start) = sub_at else {
        return;
    };
    let sub = args.get(start).and_then(Arg::as_known).unwrap_or("");
    let rest: Vec<Arg> = args.iter().skip(start + 1).cloned().collect();
    git_subcommand(sub, &dir, &rest, out);
}

/// git's configuration settings on the command line — the global `-c
/// key=value` (also attached, `-ckey=value`) and `git clone`'s `-c` /
/// `--config` (and its prefixes), which the clone runs with — and where
/// the subcommand is.
pub(crate) fn git_settings(spec: &CommandSpec, args: &[Arg]) -> (Vec<Value>, Option<usize>) {
    let parsed = parse_args(spec, args);
    let mut settings: Vec<Value> = parsed
        .values(&["c"])
        .into_iter()
        .map(|v| option_value(args, v))
        .collect();
    let sub_at = parsed.first_operand();
    if let Some(at) = sub_at
        && args.get(at).and_then(Arg::as_known) == Some("clone")
    {
        let rest = args.get(at + 1..).unwrap_or(&[]);
        let words: Vec<crate::runners::W<'_>> = rest.iter().map(crate::runners::W).collect();
        let clone = Parsed::new(&crate::spec::GIT_CLONE_OPTIONS, &words);
        settings.extend(
            clone
                .values(&["c", "config"])
                .into_iter()
                .map(|v| option_value(rest, v)),
        );
    }
    (settings, sub_at)
}

/// The fields of `args`, known or not, skipping the unknown arguments.
fn fields<'a>(args: impl Iterator<Item = &'a Arg>) -> Vec<Value> {
    args.filter_map(|a| match a {
        Arg::Field(v) => Some(v.clone()),
        Arg::Unknown(_) => None,
    })
    .collect()
}

/// What one git subcommand (`rest` = its arguments) touches, relative to
/// the repository directory `dir`.
fn git_subcommand(sub: &str, dir: &Value, rest: &[Arg], out: &mut Effects) {
    let rest_known = known_args(rest);
    let paths_after_dashdash = || {
        let at = rest_known.iter().position(|a| *a == Some("--"));
        fields(rest.iter().skip(at.map_or(usize::MAX, |k| k + 1)))
    };
    let non_options = || {
        fields(
            rest.iter()
                .filter(|a| !a.as_known().is_some_and(|t| t.starts_with('-'))),
        )
    };
    let push_rel = |out: &mut Effects, role: Role, v: &Value| {
        if let Some(j) = join_relative(dir, v) {
            out.items.push((role, j));
        }
    };
    match sub {
        "checkout" | "restore" => {
            let mut paths = paths_after_dashdash();
            if sub == "restore" && paths.is_empty() {
                paths = non_options();
            }
            for p in &paths {
                push_rel(out, Role::Write, p);
            }
        }
        "clone" => {
            let ops = non_options();
            match ops.get(1) {
                Some(target) => push_rel(out, Role::WriteInto, target),
                None => out.items.push((Role::WriteInto, dir.clone())),
            }
            if let Some(url) = ops.first() {
                out.items.push((Role::Url, url.clone()));
            }
        }
        "init" | "worktree" => {
            let ops = non_options();
            let target = if sub == "worktree" {
                ops.get(1)
            } else {
                ops.first()
            };
            match target {
                Some(t) => push_rel(out, Role::WriteInto, t),
                None => out.items.push((Role::WriteInto, dir.clone())),
            }
        }
        "config" => {
            // `git config --file F k v` writes F.
            for (k, a) in rest_known.iter().enumerate() {
                if matches!(a, Some("--file" | "-f"))
                    && let Some(Arg::Field(f)) = rest.get(k + 1)
                {
                    push_rel(out, Role::Write, f);
                }
            }
        }
        "mv" => {
            for p in non_options() {
                push_rel(out, Role::Write, &p);
            }
        }
        // `git clean -f` removes the untracked files of the work tree, and
        // with `-d` its untracked directories: a recursive removal of it.
        "clean" => git_clean(&rest_known, dir, out),
        // `git diff --no-index A B` prints both files.
        "diff" if rest_known.contains(&Some("--no-index")) => {
            for p in non_options() {
                push_rel(out, Role::Read, &p);
            }
        }
        "rm" => {
            for p in non_options() {
                push_rel(out, Role::Delete, &p);
            }
        }
        "push" | "fetch" | "pull" | "remote" | "ls-remote" | "submodule" => {
            for p in non_options() {
                out.items.push((Role::Url, p));
            }
        }
        _ => {}
    }
}

/// `git clean`: with `-f` (and not `-n`) it removes untracked files of the
/// work tree `dir`, with `-d` also untracked directories.
fn git_clean(words: &[Option<&str>], dir: &Value, out: &mut Effects) {
    let flag = |short: char, long: &str| {
        words.iter().flatten().any(|w| {
            *w == long || (w.starts_with('-') && !w.starts_with("--") && w.contains(short))
        })
    };
    if flag('f', "--force") && !flag('n', "--dry-run") {
        out.modifiers.push(Modifier::Force);
        if flag('d', "-d") {
            out.modifiers.push(Modifier::Recursive);
        }
        out.items.push((Role::Delete, dir.clone()));
    }
}

/// httpie/xh request items: `field@file` and `field=@file` embed a file.
fn http_items(args: &[Arg], out: &mut Effects) {
    for a in args {
        let Arg::Field(v) = a else { continue };
        let head = v
            .candidates()
            .first()
            .map(|t| t.known_prefix().to_owned())
            .unwrap_or_default();
        if head.starts_with('-') {
            continue;
        }
        if head.contains("://") || !head.contains(['@', '=', ':']) {
            out.items.push((Role::Url, v.clone()));
            continue;
        }
        if let Some(file) = after_marker(v, "=@").or_else(|| {
            (!head.contains('=') && head.contains('@'))
                .then(|| after_marker(v, "@"))
                .flatten()
        }) {
            out.items.push((Role::Upload, file));
        }
    }
}

/// `socat FILE:.env TCP:host:port`.
fn socat(args: &[Arg], out: &mut Effects) {
    for a in args {
        let Some(t) = a.as_known() else { continue };
        let Some((kind, rest)) = t.split_once(':') else {
            continue;
        };
        let target = rest.split(',').next().unwrap_or("");
        match kind.to_ascii_uppercase().as_str() {
            "FILE" | "OPEN" | "GOPEN" | "CREATE" | "PIPE" => {
                out.items.push((Role::Read, Value::known(target)));
            }
            "EXEC" | "SYSTEM" => out.items.push((Role::Script, Value::known(rest))),
            _ => out.items.push((Role::Url, Value::known(t))),
        }
    }
}

/// `openssl`: only `s_client`/`s_server` talk to the network; the other
/// subcommands read `-in` and write `-out` locally.
fn openssl(args: &[Arg], out: &mut Effects) {
    let sub = args.first().and_then(Arg::as_known).unwrap_or("");
    let network = matches!(sub, "s_client" | "s_server" | "s_time");
    let mut k = 1;
    while let Some(a) = args.get(k) {
        let opt = a.as_known().unwrap_or("");
        let value = args.get(k + 1).and_then(|v| match v {
            Arg::Field(v) => Some(v.clone()),
            Arg::Unknown(_) => None,
        });
        match opt {
            // A TLS client's key and certificate authenticate it to the
            // server: used here, not sent.
            "-key" | "-cert" | "-pass" | "-CAfile" | "-cert_chain" if network => {
                if let Some(v) = value {
                    out.items.push((Role::Value, v));
                }
                k += 2;
                continue;
            }
            "-in" | "-inkey" | "-key" | "-infiles" | "-kfile" | "-pass" => {
                if let Some(v) = value {
                    out.items.push((Role::Read, v));
                }
                k += 2;
                continue;
            }
            "-out" | "-keyout" => {
                if let Some(v) = value {
                    out.items.push((Role::Write, v));
                }
                k += 2;
                continue;
            }
            "-connect" | "-host" => {
                if let Some(v) = value {
                    out.items.push((Role::Url, v));
                }
                k += 2;
                continue;
            }
            _ => {}
        }
        k += 1;
    }
    if !network {
        out.network = Network::None;
    }
}

/// Partition and disk tools: what they write unless only listing.
/// sgdisk/gdisk options that change the partition table.
const GDISK_WRITES: &[&str] = &[
    "-Z",
    "--zap-all",
    "-z",
    "--zap",
    "-o",
    "--clear",
    "-n",
    "--new",
    "-d",
    "--delete",
    "-g",
    "--mbrtogpt",
];

/// sfdisk options that only read (any other sfdisk run writes the table).
const SFDISK_READS: &[&str] = &[
    "-l",
    "--list",
    "-d",
    "--dump",
    "-s",
    "--show-size",
    "-V",
    "--verify",
    "-J",
    "--json",
    "-g",
    "--show-geometry",
    "-F",
    "--list-free",
    "-r",
    "--reorder",
    "--backup-pt-sectors",
    "-h",
    "--help",
    "-v",
    "--version",
    "--part-type",
    "--part-uuid",
    "--part-label",
    "--part-attrs",
    "-n",
    "--no-act",
];

/// fdisk options that only read.
const FDISK_READS: &[&str] = &[
    "-l",
    "--list",
    "-x",
    "--list-details",
    "-s",
    "--getsz",
    "-h",
    "--help",
    "-V",
    "--version",
];

/// Partitioning, encryption and volume tools: the devices they name are
/// written when the subcommand or option destroys data.
fn disk_tool(name: &str, args: &[Arg], out: &mut Effects) {
    let words: Vec<&str> = args.iter().map(|a| a.as_known().unwrap_or("")).collect();
    if !disk_tool_destroys(name, &words) {
        return;
    }
    for a in args {
        if let Arg::Field(v) = a
            && !v.as_known().is_some_and(|t| t.starts_with('-'))
        {
            // diskutil names devices without `/dev/` (`disk2`).
            match v.as_known() {
                Some(t)
                    if name == "diskutil" && (t.starts_with("disk") || t.starts_with("rdisk")) =>
                {
                    out.items
                        .push((Role::Write, Value::known(&format!("/dev/{t}"))));
                }
                _ => out.items.push((Role::Write, v.clone())),
            }
        }
    }
}

/// Whether this run of a disk tool destroys data (its known words).
fn disk_tool_destroys(name: &str, words: &[&str]) -> bool {
    let has = |list: &[&str]| words.iter().any(|w| list.contains(w));
    match name {
        // gdisk and cgdisk are interactive: their commands come from the
        // terminal or standard input (`<<< $'o\ny\nw\ny'`), so any run
        // but a listing may write the table.
        "gdisk" | "cgdisk" => !has(&["-l", "-v", "-h", "--help", "--version"]),
        "sgdisk" => {
            has(GDISK_WRITES)
                || words.iter().any(|w| {
                    w.starts_with("--zap")
                        || w.starts_with("-n")
                        || w.starts_with("-d")
                        || w.starts_with("-Z")
                })
        }
        "parted" => has(&["mklabel", "mktable", "rm", "mkpart", "resizepart", "mkfs"]),
        "sfdisk" => !has(SFDISK_READS) || has(&["--delete"]),
        "fdisk" => !has(FDISK_READS),
        "cfdisk" => true,
        // diskutil's verbs are read without regard to case
        // (`diskutil erasedisk`).
        "diskutil" => words.iter().any(|w| {
            [
                "eraseDisk",
                "eraseVolume",
                "partitionDisk",
                "zeroDisk",
                "randomDisk",
                "secureErase",
                "reformat",
                "deleteContainer",
                "deleteVolume",
                "eraseContainer",
            ]
            .iter()
            .any(|v| v.eq_ignore_ascii_case(w))
        }),
        "cryptsetup" => has(&["luksFormat", "erase", "luksErase", "reencrypt"]),
        "hdparm" => words.iter().any(|w| {
            w.starts_with("--security-erase")
                || *w == "--trim-sector-ranges"
                || *w == "--write-sector"
        }),
        "nvme" => has(&["format", "sanitize", "write-zeroes", "delete-ns"]),
        "zpool" => has(&["create", "labelclear", "destroy"]),
        "mdadm" => has(&["--create", "-C", "--zero-superblock"]),
        "pvcreate" | "vgcreate" | "lvremove" => true,
        _ => false,
    }
}

/// `chmod MODE FILES`: the mode may look like an option (`-x`, `-w`).
fn mode_change(parsed: &Parsed, args: &[Arg], out: &mut Effects) {
    if parsed.has(&["reference"]) {
        for v in operands(parsed, args) {
            out.items.push((Role::Mode, v));
        }
        return;
    }
    let is_option = |t: &str| {
        matches!(
            t,
            "-R" | "-v" | "-c" | "-f" | "-h" | "-H" | "-L" | "-P" | "-V"
        ) || t.starts_with("--")
            || (t.starts_with('-') && t.chars().skip(1).all(|c| "RvcfhHLPV".contains(c)))
    };
    let mut seen_mode = false;
    for a in args {
        let text = a.as_known();
        if text.is_some_and(&is_option) {
            continue;
        }
        if !seen_mode {
            seen_mode = true;
            continue;
        }
        if let Arg::Field(v) = a {
            out.items.push((Role::Mode, v.clone()));
        }
    }
}

/// `cmake -E rm [-r] [-f] PATHS`, `remove_directory`, `remove`.
fn cmake(args: &[Arg], out: &mut Effects) {
    let words = known_args(args);
    let Some(at) = words.iter().position(|w| *w == Some("-E")) else {
        return;
    };
    let sub = words.get(at + 1).copied().flatten().unwrap_or("");
    let rest = args.get(at + 2..).unwrap_or(&[]);
    let recursive = match sub {
        "rm" => rest.iter().any(|a| {
            a.as_known()
                .is_some_and(|t| t.starts_with('-') && t.contains(['r', 'R']))
        }),
        "remove_directory" => true,
        "remove" => false,
        _ => return,
    };
    if recursive {
        out.modifiers.push(Modifier::Recursive);
        out.modifiers.push(Modifier::Force);
    }
    for a in rest {
        if let Arg::Field(v) = a
            && !v.as_known().is_some_and(|t| t.starts_with('-'))
        {
            out.items.push((Role::Delete, v.clone()));
        }
    }
}

/// Files cloud and transfer tools send: `gh gist create F`, `aws s3 cp F
/// s3://…`, `rclone copy D remote:`, `sftp`/`lftp` `put F`, ….
fn uploads(name: &str, args: &[Arg], cmd: &Command, out: &mut Effects) {
    let words = known_args(args);
    let values: Vec<Value> = args
        .iter()
        .filter_map(|a| match a {
            Arg::Field(v) if !v.as_known().is_some_and(|t| t.starts_with('-')) => Some(v.clone()),
            _ => None,
        })
        .collect();
    let remote = |v: &Value| {
        v.candidates().iter().any(|t| {
            let h = t.known_prefix();
            h.contains("://")
                || h.split_once(':')
                    .is_some_and(|(host, _)| !host.is_empty() && !host.contains('/'))
        })
    };
    let has = |w: &str| words.contains(&Some(w));
    let push_local = |out: &mut Effects, v: &Value| {
        if !remote(v) {
            out.items.push((Role::Upload, v.clone()));
        }
    };
    match name {
        "gh" if has("gist") || has("release") || (has("issue") || has("pr")) => {
            for v in values.iter().skip(2) {
                push_local(out, v);
            }
        }
        "aws" | "gsutil" | "s3cmd" | "mc" | "rclone" | "az" | "gcloud" => {
            let upload = values.iter().any(remote);
            if upload {
                for v in &values {
                    if v.as_known().is_some_and(|t| {
                        matches!(
                            t,
                            "s3" | "cp"
                                | "mv"
                                | "sync"
                                | "copy"
                                | "move"
                                | "put"
                                | "storage"
                                | "blob"
                                | "upload"
                                | "rsync"
                                | "alpha"
                        )
                    }) {
                        continue;
                    }
                    push_local(out, v);
                }
            }
        }
        // `tftp HOST -c put FILE [REMOTE]`: the rest of the line is one
        // tftp command.
        "tftp" => {
            let at = words.iter().position(|w| *w == Some("-c"));
            if let Some(at) = at
                && words.get(at + 1) == Some(&Some("put"))
                && let Some(Arg::Field(file)) = args.get(at + 2)
            {
                out.items.push((Role::Upload, file.clone()));
            }
        }
        "croc" | "magic-wormhole" | "wormhole" | "ffsend" | "transfer" => {
            for v in values.iter().skip(1) {
                push_local(out, v);
            }
        }
        _ => {}
    }
    batch_uploads(&words, cmd, out);
}

/// `lftp -e 'put F'`, `smbclient -c 'put F'`, and batch commands read from
/// standard input (`sftp host <<< 'put F'`).
fn batch_uploads(words: &[Option<&str>], cmd: &Command, out: &mut Effects) {
    let mut scripts: Vec<String> = Vec::new();
    for (k, w) in words.iter().enumerate() {
        if matches!(w, Some("-e" | "-c"))
            && let Some(Some(s)) = words.get(k + 1)
        {
            scripts.push((*s).to_owned());
        }
    }
    if let Some(text) = cmd.stdin_text.as_ref().and_then(Value::as_known) {
        scripts.push(text.to_owned());
    }
    for s in scripts {
        for line in s.split([';', '\n']) {
            let mut parts = line.split_whitespace();
            if matches!(
                parts.next(),
                Some("put" | "mput" | "reput" | "send" | "append")
            ) {
                for f in parts.filter(|p| !p.starts_with('-')).take(1) {
                    out.items.push((Role::Upload, Value::known(f)));
                }
            }
        }
    }
}
