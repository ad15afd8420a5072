//! The read-only profile derived from `vouch-shell`'s one command table
//! (`crates/vouch-shell/src/spec/`): a unit of an entry marked
//! [`Inert::Reader`] is inert when every option given is one the entry
//! lists, written whole (the real program may resolve an abbreviation
//! differently), with a read-only role or modifier, and every operand's
//! role is read-only and what it names may be read. Nothing here lists a
//! command or an option: the knowledge is the table's, the proof is here.

use crate::shell::options::{Item, OptName, OptValue, Parsed};
use crate::shell::spec::{CommandSpec, Inert, Modifier, Operands, Role, Trees};

use super::tree::{Narrowing, tree_walk, xargs_splits};
use super::{
    InertContext, Word, content_path_refusal, expand_pattern, script_refusal, tree_refusal,
};

/// What the unit showed, for the rationale.
pub(super) enum Shown {
    Text,
    Names,
    Contents,
    Trees,
}

impl Shown {
    pub(super) fn describe(&self) -> &'static str {
        match self {
            Shown::Text => "prints, writes nothing",
            Shown::Names => "shows names and metadata only",
            Shown::Contents => "reads files that are not sensitive",
            Shown::Trees => "searches trees that are not sensitive",
        }
    }
}

/// The option's label as written in a reason.
fn label(name: &OptName) -> String {
    crate::shell::effects::option_label(name)
}

/// The role the entry gives option `name`'s value (`Value` when unlisted).
pub(super) fn option_role(spec: &CommandSpec, name: &OptName) -> Role {
    spec.option_roles
        .iter()
        .find(|(names, _)| name.is(names))
        .map_or(Role::Value, |(_, role)| *role)
}

/// The modifiers the entry gives option `name`.
pub(super) fn option_modifiers<'s>(
    spec: &'s CommandSpec,
    name: &'s OptName,
) -> impl Iterator<Item = Modifier> + 's {
    spec.modifiers
        .iter()
        .filter(move |(names, _)| name.is(names))
        .map(|(_, m)| *m)
}

/// An option is refused for inert when the word does not spell its long
/// name whole (getopt_long would resolve `--fil` to whatever the real
/// program has, which may be an option the table does not list), or when
/// its role or a modifier is not read-only.
pub(super) fn option_refusal(
    program: &str,
    spec: &CommandSpec,
    name: &OptName,
    written: Option<&str>,
) -> Result<(), String> {
    if let OptName::Long(long) = name {
        let whole = written
            .map(|w| w.trim_start_matches('-'))
            .map(|w| w.split_once('=').map_or(w, |(n, _)| n));
        if whole != Some(long) {
            return Err(format!(
                "`{program}` with an abbreviated long option (`--{long}` written short): the real program may read it as another"
            ));
        }
    }
    for m in option_modifiers(spec, name) {
        if !m.is_read_only() {
            return Err(format!(
                "`{program} {}` {}",
                label(name),
                modifier_reason(m)
            ));
        }
    }
    let role = option_role(spec, name);
    if !role.is_read_only() {
        return Err(format!("`{program} {}` {}", label(name), role_reason(role)));
    }
    Ok(())
}

fn modifier_reason(m: Modifier) -> &'static str {
    match m {
        Modifier::Runs => "runs code or a program it finds elsewhere",
        Modifier::Connects => "uses the network",
        Modifier::Writes | Modifier::InPlace => "writes files",
        Modifier::Hidden => "reads hidden and ignored files",
        Modifier::Setting => "changes how the program reads its input",
        Modifier::Terminal => "talks to the terminal",
        Modifier::Substitutes => "puts its input into the command it runs",
        Modifier::NamesFromInput => "reads files named in a file or its input",
        Modifier::Background
        | Modifier::Insecure
        | Modifier::EmptyEnvironment
        | Modifier::ViaShell
        | Modifier::RemoteName => "is not read-only",
        Modifier::Recursive
        | Modifier::Force
        | Modifier::ReadOnly
        | Modifier::NoRun
        | Modifier::FollowsLinks => "only reads",
    }
}

fn role_reason(role: Role) -> &'static str {
    match role {
        Role::Write | Role::WriteInto => "writes a file",
        Role::Delete | Role::MoveAway | Role::Mode | Role::LinkTarget => "changes a file",
        Role::Upload | Role::Data | Role::FormData | Role::Header | Role::Variable => "sends data",
        Role::Url | Role::Route => "uses the network",
        Role::Script | Role::Run => "runs a program or code from a file",
        Role::Chdir => "changes directory",
        Role::Setting => "changes a setting",
        Role::Read
        | Role::ReadTree
        | Role::Value
        | Role::Names
        | Role::Program(_)
        | Role::Select(_) => "only reads",
    }
}

/// True when every option the program has is harmless whatever it is
/// given, so a pattern operand that may expand to an option word (`ls *`
/// with a file named `-R`) is safe: no option reads a named file, runs,
/// writes, or changes more than the output.
fn options_all_plain(spec: &CommandSpec) -> bool {
    !spec.response_files
        && spec
            .option_roles
            .iter()
            .all(|(_, role)| matches!(role, Role::Value | Role::Names))
        && spec
            .modifiers
            .iter()
            .all(|(_, m)| m.is_read_only() && *m != Modifier::Recursive)
}

/// How a tree is searched: the program's kind of walk and the options that
/// narrow it.
#[derive(Clone, Copy)]
struct Search<'n> {
    trees: Trees,
    narrowing: &'n Narrowing,
}

/// What the options of a reader's unit say, each checked: the operands,
/// whether a tree is searched, whether an option gave the program text.
struct Given<'w> {
    operands: Vec<Word<'w>>,
    recursive: bool,
    inline: bool,
    shown: Shown,
}

fn given<'w>(
    program: &str,
    spec: &CommandSpec,
    search: Search<'_>,
    args: &[Word<'w>],
    cwd: Option<&str>,
    ctx: &InertContext<'_>,
) -> Result<Given<'w>, String> {
    let parsed = Parsed::new(&spec.options, args);
    let glob_safe = options_all_plain(spec);
    let mut operands: Vec<Word<'w>> = Vec::new();
    let mut recursive = false;
    let mut inline = false;
    let mut shown = Shown::Text;
    for item in &parsed.items {
        match item {
            Item::Opt { name, value, at } => {
                let written = args.get(*at).and_then(|w| w.text);
                option_refusal(program, spec, name, written)?;
                if option_modifiers(spec, name).any(|m| m == Modifier::Recursive) {
                    recursive = true;
                }
                if let Operands::ProgramFirst { inline: names, .. } = spec.operands
                    && name.is(names)
                {
                    inline = true;
                }
                let role = option_role(spec, name);
                if let Role::Select(_) = role {
                    // Collected by `narrowing` before any tree is walked.
                    continue;
                }
                if let (Some(v), true) = (value, role != Role::Value) {
                    let text = word_value(args, *v).ok_or_else(|| {
                        format!("`{program} {}` with a value not known", label(name))
                    })?;
                    check_word(
                        role,
                        Word {
                            text: Some(text),
                            pattern: None,
                            found: None,
                        },
                        search,
                        cwd,
                        ctx,
                        &mut shown,
                    )?;
                }
            }
            Item::End { .. } => {}
            Item::Operand { at } => {
                if let Some(word) = args.get(*at) {
                    operands.push(*word);
                }
            }
            // A pattern that may start with `-` is an option to most
            // programs; to one whose every option is harmless, it is safe.
            Item::Unknown { at }
                if glob_safe && args.get(*at).is_some_and(|w| w.pattern.is_some()) =>
            {
                if let Some(word) = args.get(*at) {
                    operands.push(*word);
                }
            }
            Item::Unknown { .. } | Item::Invalid { .. } => {
                return Err(format!(
                    "`{program}` with an option its table entry does not list"
                ));
            }
        }
    }
    Ok(Given {
        operands,
        recursive,
        inline,
        shown,
    })
}

/// A reader's unit: `args` are its words after the name.
pub(super) fn reader_refusal(
    program: &str,
    spec: &CommandSpec,
    trees: Trees,
    args: &[Word<'_>],
    cwd: Option<&str>,
    ctx: &InertContext<'_>,
) -> Result<Shown, String> {
    for file in spec.startup_files {
        let path = format!("{}/{file}", ctx.home.trim_end_matches('/'));
        if ctx.files.lstat(std::path::Path::new(&path)).is_ok() {
            return Err(format!(
                "`{program}` reads `~/{file}` on its own, and it exists: it may change what the program does"
            ));
        }
    }
    // binutils read every word `@FILE` as more options, values included.
    if spec.response_files
        && args
            .iter()
            .any(|w| w.text.is_none_or(|t| t.starts_with('@')))
    {
        return Err(format!(
            "`{program}` reads a word `@FILE` (or a pattern that may be one) as more options"
        ));
    }
    let narrowing = narrowing(spec, args)?;
    let search = Search {
        trees,
        narrowing: &narrowing,
    };
    let Given {
        operands,
        recursive,
        inline,
        mut shown,
    } = given(program, spec, search, args, cwd, ctx)?;

    let roles = operand_roles(program, spec, &operands, inline)?;
    let mut searched = false;
    for (role, word) in roles {
        let role = match role {
            Role::Read if recursive => Role::ReadTree,
            other => other,
        };
        searched |= role == Role::ReadTree;
        check_word(role, word, search, cwd, ctx, &mut shown)?;
    }
    // `grep -r PAT` and `rg PAT` search the working directory.
    let searches_here = matches!(
        spec.operands,
        Operands::ProgramFirst {
            rest: Role::ReadTree,
            ..
        }
    ) || recursive;
    if searches_here && !searched {
        check_word(
            Role::ReadTree,
            Word {
                text: Some("."),
                pattern: None,
                found: None,
            },
            search,
            cwd,
            ctx,
            &mut shown,
        )?;
    }
    Ok(shown)
}

/// The options that narrow a tree search, all of them, before any tree is
/// walked (a later `rg -g .env` whitelists a hidden file).
fn narrowing(spec: &CommandSpec, args: &[Word<'_>]) -> Result<Narrowing, String> {
    let parsed = Parsed::new(&spec.options, args);
    let mut narrowing = Narrowing::default();
    for item in &parsed.items {
        if let Item::Opt { name, value, .. } = item
            && let Role::Select(select) = option_role(spec, name)
        {
            let text = match value {
                Some(v) => {
                    Some(word_value(args, *v).ok_or("a narrowing option with a value not known")?)
                }
                None => None,
            };
            narrowing.add(select, text)?;
        }
    }
    Ok(narrowing)
}

/// Each operand with its role, by the entry's [`Operands`].
fn operand_roles<'w>(
    program: &str,
    spec: &CommandSpec,
    operands: &[Word<'w>],
    inline: bool,
) -> Result<Vec<(Role, Word<'w>)>, String> {
    let mut out = Vec::with_capacity(operands.len());
    match spec.operands {
        Operands::All(role) => out.extend(operands.iter().map(|w| (role, *w))),
        Operands::After(n, role) => {
            for (i, w) in operands.iter().enumerate() {
                out.push((if i < n { Role::Value } else { role }, *w));
            }
        }
        Operands::ProgramFirst {
            program: d, rest, ..
        } => {
            let mut words = operands.iter();
            if !inline {
                let text = words
                    .next()
                    .ok_or_else(|| format!("`{program}` without its program"))?;
                if text.text.is_none() {
                    return Err(format!("`{program}` with a pattern for its program"));
                }
                out.push((Role::Program(d), *text));
            }
            out.extend(words.map(|w| (rest, *w)));
        }
        Operands::Positional(roles) => {
            // `uniq src/*.rs` is `uniq src/lib.rs src/main.rs`: a pattern
            // may expand past the operands that only read.
            let read_only = roles.iter().take_while(|r| r.is_read_only()).count();
            if operands.len() > read_only {
                return Err(format!(
                    "`{program}` with more than {read_only} operand(s): the next one is written"
                ));
            }
            if read_only < roles.len() && operands.iter().any(|w| w.pattern.is_some()) {
                return Err(format!(
                    "`{program}` with a pattern operand, which may expand past {read_only}: the next one is written"
                ));
            }
            for (w, role) in operands.iter().zip(roles.iter()) {
                out.push((*role, *w));
            }
        }
        Operands::Format => {
            for w in operands {
                if !w.text.is_some_and(|t| t.starts_with('+')) {
                    return Err(format!(
                        "`{program}` with an operand that is not a `+FORMAT` sets a value"
                    ));
                }
                out.push((Role::Value, *w));
            }
        }
        Operands::Ignore => {}
        Operands::Copy { .. }
        | Operands::Command { .. }
        | Operands::Shell
        | Operands::Script
        | Operands::Special => {
            return Err(format!("`{program}`'s operands are not a reader's"));
        }
    }
    Ok(out)
}

/// Checks one word by its role; records what the unit shows.
fn check_word(
    role: Role,
    word: Word<'_>,
    search: Search<'_>,
    cwd: Option<&str>,
    ctx: &InertContext<'_>,
    shown: &mut Shown,
) -> Result<(), String> {
    match role {
        Role::Value => Ok(()),
        Role::Names => {
            if matches!(shown, Shown::Text) {
                *shown = Shown::Names;
            }
            Ok(())
        }
        // A path a `find` printed, read: as a search of its roots, every
        // file below them (hidden ones too) read, names split at blanks
        // when `xargs` splits them.
        Role::Read | Role::ReadTree if word.found.is_some() => {
            let Some(found) = word.found else {
                return Err("a found path without its roots".to_owned());
            };
            *shown = Shown::Trees;
            if found.split && found.roots.iter().any(|r| xargs_splits(r)) {
                return Err(
                    "a `find` starting point `xargs` would split into other words".to_owned(),
                );
            }
            // A directory `-name` matched is searched whole by a reader
            // that recurses (`find t -name d | xargs grep -r`): its globs
            // narrow only what is read file by file.
            let names: &[String] = match role {
                Role::Read => &found.names,
                _ => &[],
            };
            let narrowing = Narrowing::found(names, found.split);
            for root in &found.roots {
                tree_refusal(root, cwd, ctx)?;
                tree_walk(root, Trees::Everything, &narrowing, cwd, ctx)?;
            }
            Ok(())
        }
        Role::Program(dialect) => {
            let text = word
                .text
                .ok_or("a program text that is a pattern".to_owned())?;
            script_refusal(dialect, text)
        }
        Role::Read => {
            if !matches!(shown, Shown::Trees) {
                *shown = Shown::Contents;
            }
            match (word.text, word.pattern) {
                (Some(text), _) => content_path_refusal(text, cwd, ctx),
                (None, Some(pattern)) => {
                    for path in expand_pattern(pattern, cwd, ctx)? {
                        content_path_refusal(&path, cwd, ctx)?;
                    }
                    Ok(())
                }
                (None, None) => Err("a word whose value is not known statically".to_owned()),
            }
        }
        Role::ReadTree => {
            *shown = Shown::Trees;
            let text = word
                .text
                .ok_or("a tree searched that is named by a pattern".to_owned())?;
            tree_refusal(text, cwd, ctx)?;
            tree_walk(text, search.trees, search.narrowing, cwd, ctx)
        }
        other => Err(format!("a word that {}", role_reason(other))),
    }
}

fn word_value<'w>(args: &[Word<'w>], value: OptValue) -> Option<&'w str> {
    match value {
        OptValue::Attached { at, offset } => args
            .get(at)
            .and_then(|w| w.text)
            .and_then(|w| w.get(offset..)),
        OptValue::Next { at } => args.get(at).and_then(|w| w.text),
    }
}

/// Whether `spec`'s entry may be used by the inert stage at all.
pub(super) fn usable(spec: &CommandSpec) -> bool {
    !matches!(spec.inert, Inert::Never)
}

/// The entry's options that print only names or counts (`grep -l`, `-c`),
/// for a unit whose later words are not known: it is inert when such an
/// option comes first and no option of the program writes, runs or reads
/// a file it names (whatever the unknown words are, no content comes out).
pub(super) fn names_only(spec: &CommandSpec, known: &[&str]) -> bool {
    let Inert::Reader { .. } = spec.inert else {
        return false;
    };
    let harmless = spec.modifiers.iter().all(|(_, m)| m.is_read_only())
        && spec.startup_files.is_empty()
        && !spec.response_files;
    if !harmless {
        return false;
    }
    let parsed = Parsed::new(&spec.options, known);
    // Every option given is a flag or takes text (not `-f FILE`).
    let clean = parsed.items.iter().all(|item| match item {
        Item::Opt { name, .. } => matches!(option_role(spec, name), Role::Value | Role::Program(_)),
        Item::Operand { .. } | Item::End { .. } => true,
        Item::Unknown { .. } | Item::Invalid { .. } => false,
    });
    clean
        && parsed.items.iter().any(|item| {
            matches!(item, Item::Opt { name, .. }
                if option_modifiers(spec, name).any(|m| m == Modifier::ReadOnly))
        })
}
