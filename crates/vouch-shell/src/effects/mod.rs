//! What a command does to which paths and hosts, read from the
//! command-spec table ([`super::spec`]) with the option parser: every
//! operand or option value with its [`Role`], plus the modifiers given
//! (`-r`, `-f`, `-i`, `-k`, …).
//!
//! Redirections are part of every command's effects, wherever they were
//! written. Commands without a spec may read every file they name (the
//! conservative reading for data flow), and write nothing.

mod special;

pub(crate) use special::git_settings;

use super::command::{Command, RedirectOp};
use super::options::{Item, OptName, Parsed};
use super::runners::{canonical_args, drop_prefix, option_value, parse_args};
use super::spec::{self, CommandSpec, Modifier, Network, Operands, Role};
use super::value::{Arg, Text, Value};

/// The effects of one command.
#[derive(Debug, Clone)]
pub struct Effects {
    /// Each path, URL or script the command acts on, with what it does.
    pub items: Vec<(Role, Value)>,
    pub modifiers: Vec<Modifier>,
    /// An argument nobody knows may be an option that changes the effect
    /// (`rm $FLAGS /`).
    pub unknown_options: bool,
    pub network: Network,
    /// The parse, for rules that read particular options.
    pub parsed: Option<Parsed>,
}

impl Effects {
    pub fn has(&self, m: Modifier) -> bool {
        self.modifiers.contains(&m)
    }

    /// Values with one of `roles`.
    pub fn with(&self, roles: &[Role]) -> impl Iterator<Item = &Value> {
        self.items
            .iter()
            .filter(move |(r, _)| roles.contains(r))
            .map(|(_, v)| v)
    }
}

fn arg_value(arg: &Arg) -> Option<Value> {
    match arg {
        Arg::Field(v) => Some(v.clone()),
        Arg::Unknown(_) => None,
    }
}

/// The effects of `cmd` (its redirections included).
pub fn effects(cmd: &Command) -> Effects {
    let mut out = Effects {
        items: Vec::new(),
        modifiers: Vec::new(),
        unknown_options: false,
        network: Network::None,
        parsed: None,
    };
    for r in &cmd.redirects {
        match r.op {
            op if op.writes() => out.items.push((Role::Write, r.target.clone())),
            RedirectOp::Read => out.items.push((Role::Read, r.target.clone())),
            _ => {}
        }
        if r.op == RedirectOp::ReadWrite {
            out.items.push((Role::Read, r.target.clone()));
        }
    }
    let Some(name) = cmd.name() else {
        return out;
    };
    let args = cmd.args();
    // On a case-insensitive file system `RM` runs `rm`.
    let Some(spec) = spec::lookup(name).or_else(|| {
        name.bytes()
            .any(|b| b.is_ascii_uppercase())
            .then(|| spec::lookup(&name.to_ascii_lowercase()))
            .flatten()
    }) else {
        // Unknown command: it may read any file it names.
        for a in args {
            if let Some(v) = arg_value(a)
                && !v.as_known().is_some_and(|t| t.starts_with('-'))
            {
                out.items.push((Role::Read, v));
            }
        }
        return out;
    };
    out.network = spec.network;
    let parsed = parse_args(spec, args);
    for (names, m) in spec.modifiers {
        if parsed.has(names) && !out.modifiers.contains(m) {
            out.modifiers.push(*m);
        }
    }
    out.unknown_options = parsed
        .items
        .iter()
        .any(|i| matches!(i, Item::Unknown { .. }));
    for (names, role) in spec.option_roles {
        for v in parsed.values(names) {
            let value = option_value(args, v);
            out.items.push((*role, value));
        }
    }
    operand_effects(spec, &parsed, args, &mut out);
    remote_names(spec, &parsed, cmd, &mut out);
    if spec.names.first() == Some(&"curl") && !parsed.has(&["g", "globoff"]) {
        curl_globs(&mut out);
    }
    // sed's `-i` and awk's `-i inplace` are read by their own arms too.
    if matches!(
        spec.operands,
        Operands::Special | Operands::ProgramFirst { .. }
    ) {
        let canonical = canonical_args(spec, args, &parsed);
        let args = canonical.as_deref().unwrap_or(args);
        let name = spec
            .names
            .iter()
            .find(|n| n.eq_ignore_ascii_case(name))
            .copied()
            .unwrap_or(name);
        special::effects(name, spec, &parsed, cmd, args, &mut out);
    }
    out.parsed = Some(parsed);
    out
}

/// At most this many names one curl glob stands for (`{a,b}`, `[1-9]`);
/// a larger glob is left as written.
const MAX_CURL_GLOB: usize = 64;

/// curl expands `{a,b}` lists and `[1-3]`/`[a-z]` ranges in URLs and `-T`
/// names itself (bash has quoted them away): `-T "$HOME/.ssh/{id_rsa,x}"`
/// uploads `~/.ssh/id_rsa`. Each expansion is added as one more item.
fn curl_globs(out: &mut Effects) {
    let mut added = Vec::new();
    for (role, value) in &out.items {
        if !matches!(role, Role::Upload | Role::Url) {
            continue;
        }
        for t in value.candidates() {
            let Some(text) = t.as_known() else { continue };
            if let Some(names) = curl_glob(text).filter(|n| n.len() > 1) {
                added.extend(names.iter().map(|n| (*role, Value::known(n))));
            }
        }
    }
    out.items.extend(added);
}

/// The names curl's glob `text` stands for; `None` when it has no glob or
/// more than [`MAX_CURL_GLOB`] names.
fn curl_glob(text: &str) -> Option<Vec<String>> {
    let open = text.find(['{', '['])?;
    let head = text.get(..open)?;
    let body = text.get(open + 1..)?;
    let (alternatives, tail) = if text.get(open..open + 1) == Some("{") {
        let close = body.find('}')?;
        let inner = body.get(..close)?;
        (
            inner.split(',').map(str::to_owned).collect::<Vec<_>>(),
            body.get(close + 1..)?,
        )
    } else {
        let close = body.find(']')?;
        let inner = body.get(..close)?;
        let (range, _step) = inner.split_once(':').unwrap_or((inner, "1"));
        let (from, to) = range.split_once('-')?;
        let items: Vec<String> = match (from.parse::<u64>(), to.parse::<u64>()) {
            (Ok(a), Ok(b)) if b >= a && b - a < MAX_CURL_GLOB as u64 => (a..=b)
                .map(|n| format!("{n:0width$}", width = from.len()))
                .collect(),
            _ => {
                let (a, b) = (from.chars().next()?, to.chars().next()?);
                if from.chars().count() != 1 || to.chars().count() != 1 || b < a {
                    return None;
                }
                (a..=b).map(String::from).collect()
            }
        };
        (items, body.get(close + 1..)?)
    };
    let rests = match curl_glob(tail) {
        Some(r) => r,
        None => vec![tail.to_owned()],
    };
    let mut out = Vec::new();
    for a in &alternatives {
        for r in &rests {
            if out.len() >= MAX_CURL_GLOB {
                return None;
            }
            out.push(format!("{head}{a}{r}"));
        }
    }
    Some(out)
}

/// A download saved under the server's name lands in the output directory
/// (`--output-dir`, `-P`) or else in the working directory: `cd ~/.ssh &&
/// curl -O URL` writes into `~/.ssh` whatever the name.
fn remote_names(spec: &CommandSpec, parsed: &Parsed, cmd: &Command, out: &mut Effects) {
    let wget_default = spec.names == spec::WGET
        && !parsed.has(&["O", "output-document", "spider"])
        && !parsed.operands().is_empty();
    if wget_default && !out.modifiers.contains(&Modifier::RemoteName) {
        out.modifiers.push(Modifier::RemoteName);
    }
    if out.has(Modifier::RemoteName) && !out.items.iter().any(|(r, _)| *r == Role::WriteInto) {
        out.items.push((Role::WriteInto, cmd.cwd.clone()));
    }
}

/// `cmd`'s arguments with long-option prefixes spelt out by its spec
/// ([`canonical_args`]); `None` when there is no spec or nothing changes.
pub fn canonical_args_of(cmd: &Command) -> Option<Vec<Arg>> {
    let spec = spec::lookup(cmd.name()?)?;
    let args = cmd.args();
    canonical_args(spec, args, &parse_args(spec, args))
}

fn operand_effects(spec: &CommandSpec, parsed: &Parsed, args: &[Arg], out: &mut Effects) {
    let operands: Vec<Value> = parsed
        .operands()
        .into_iter()
        .filter_map(|at| args.get(at).and_then(arg_value))
        .collect();
    match spec.operands {
        Operands::All(role) => {
            for v in operands {
                out.items.push((role, v));
            }
        }
        Operands::After(n, role) => {
            for v in operands.into_iter().skip(n) {
                out.items.push((role, v));
            }
        }
        Operands::Copy {
            sources,
            dest,
            target_dir,
        } => {
            let dirs: Vec<Value> = parsed
                .values(target_dir)
                .into_iter()
                .map(|v| option_value(args, v))
                .collect();
            let (srcs, dst, into_dir): (Vec<Value>, Option<Value>, bool) =
                match (dirs.last(), operands.split_last()) {
                    (Some(d), _) => (operands.clone(), Some(d.clone()), true),
                    (None, Some((last, rest))) if !rest.is_empty() => {
                        (rest.to_vec(), Some(last.clone()), false)
                    }
                    (None, Some((last, _))) => (Vec::new(), Some(last.clone()), false),
                    (None, None) => (Vec::new(), None, false),
                };
            for s in &srcs {
                out.items.push((sources, s.clone()));
            }
            if let Some(d) = dst {
                out.items
                    .push((if into_dir { Role::WriteInto } else { dest }, d.clone()));
                // `cp k ~/.ssh/` writes `~/.ssh/k`.
                for s in &srcs {
                    if let Some(joined) = into(&d, s) {
                        out.items.push((dest, joined));
                    }
                }
            }
        }
        Operands::Positional(_) | Operands::ProgramFirst { .. } | Operands::Format => {
            reader_operands(spec.operands, parsed, operands, out);
        }
        Operands::Ignore
        | Operands::Command { .. }
        | Operands::Shell
        | Operands::Script
        | Operands::Special => {}
    }
}

/// The readers' operand forms (`uniq IN OUT`, `grep PATTERN FILE…`, `date
/// +FORMAT`).
fn reader_operands(
    operands_of: Operands,
    parsed: &Parsed,
    operands: Vec<Value>,
    out: &mut Effects,
) {
    match operands_of {
        Operands::Positional(roles) => {
            let last = roles.last().copied().unwrap_or(Role::Value);
            for (i, v) in operands.into_iter().enumerate() {
                out.items.push((roles.get(i).copied().unwrap_or(last), v));
            }
        }
        Operands::ProgramFirst {
            program,
            rest,
            inline,
        } => {
            let mut operands = operands.into_iter();
            if !parsed.has(inline)
                && let Some(text) = operands.next()
            {
                out.items.push((Role::Program(program), text));
            }
            for v in operands {
                out.items.push((rest, v));
            }
        }
        Operands::Format => {
            for v in operands {
                let format = v
                    .candidates()
                    .iter()
                    .all(|t| t.known_prefix().starts_with('+'));
                out.items
                    .push((if format { Role::Value } else { Role::Setting }, v));
            }
        }
        // The other forms are read by `operand_effects` itself.
        Operands::Ignore
        | Operands::All(_)
        | Operands::After(..)
        | Operands::Copy { .. }
        | Operands::Command { .. }
        | Operands::Shell
        | Operands::Script
        | Operands::Special => {}
    }
}

/// `dir/basename(source)` for each known source basename.
pub(crate) fn into(dir: &Value, source: &Value) -> Option<Value> {
    let mut candidates = Vec::new();
    for s in source.candidates() {
        let Some(text) = s.as_known() else { continue };
        let base = text.trim_end_matches('/').rsplit('/').next().unwrap_or("");
        if base.is_empty() || base == "." || base == ".." {
            continue;
        }
        for d in dir.candidates() {
            let mut joined = d.clone();
            if !d.known_suffix().ends_with('/') {
                joined.push_str("/");
            }
            joined.push_str(base);
            candidates.push(joined);
        }
    }
    Value::from_candidates(candidates)
}

/// The text of `value` after a literal `prefix` (`of=/dev/sda` → `/dev/sda`).
pub fn after_prefix(value: &Value, prefix: &str) -> Option<Value> {
    let candidates: Vec<Text> = value
        .candidates()
        .iter()
        .filter(|t| t.known_prefix().starts_with(prefix))
        .map(|t| {
            drop_prefix(&Value::text(t.clone()), prefix.len())
                .candidates()
                .first()
                .cloned()
                .unwrap_or_default()
        })
        .collect();
    Value::from_candidates(candidates)
}

/// The text after the first `marker` in the known prefix (`name=@file`).
pub fn after_marker(value: &Value, marker: &str) -> Option<Value> {
    let candidates: Vec<Text> = value
        .candidates()
        .iter()
        .filter_map(|t| {
            let head = t.known_prefix();
            let at = head.find(marker)?;
            drop_prefix(&Value::text(t.clone()), at + marker.len())
                .candidates()
                .first()
                .cloned()
        })
        .collect();
    Value::from_candidates(candidates)
}

/// The long or short name of an option, as written in rationales.
pub fn option_label(name: &OptName) -> String {
    match name {
        OptName::Short(c) => format!("-{c}"),
        OptName::Long(l) => format!("--{l}"),
    }
}
