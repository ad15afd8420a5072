//! What a tree search reads (`grep -r`, `rg`), checked at decision time.
//!
//! The walk follows the program's own narrowing only where vouch computes
//! it exactly, and reads any narrowing it cannot compute as none:
//!
//! - `rg` skips hidden entries and what ignore files ignore — unless a rule
//!   **whitelists** an entry, which makes ripgrep read it hidden or not (a
//!   `.gitignore` line `!.env`, `-t`, `-g`). So ignore files are followed
//!   only while no ignore file that applies (in the tree, above it, the
//!   repository's `info/exclude`, the user's global one) holds a whitelist;
//!   with one, every entry counts as read. `-g` globs that name a path (a
//!   `/`) are not followed either. The globs, types and ignore syntax are
//!   ripgrep's own (the `ignore` crate).
//! - `grep -r` reads every entry, hidden ones included; `--include` and
//!   `--exclude` (GNU grep: the last matching one wins; none matching, a
//!   file is read unless the first was `--include`) are followed when every
//!   glob is plain (letters, digits, `.`, `_`, `-`, `*`, `?`).
//!
//! Every directory entry and every ignore-file line is charged to one
//! budget before it is read; past it the search is not proven.

use std::path::{Path, PathBuf};
use std::rc::Rc;

use crate::shell::spec::{Select, Trees};
use globset::{Glob, GlobMatcher};
use ignore::Match;
use ignore::gitignore::{Gitignore, GitignoreBuilder};
use ignore::overrides::{Override, OverrideBuilder};
use ignore::types::{Types, TypesBuilder};

use super::files::{Files, Kind};
use super::{InertContext, absolute, content_path_refusal, sensitive_by_name, tree_refusal};

/// At most this many directory entries and ignore-file lines are checked
/// before the search is not proven.
const MAX_TREE_ENTRIES: usize = 20_000;

/// An ignore file larger than this is not read: the search is not proven.
const MAX_IGNORE_FILE: u64 = 256 * 1024;

/// The ignore files ripgrep reads in every directory, the git one only
/// inside a repository.
const RG_IGNORE_FILES: &[&str] = &[".rgignore", ".ignore"];

/// The narrowing options of one search, as given.
#[derive(Debug, Default)]
pub(super) struct Narrowing {
    items: Vec<(Select, String)>,
    globs_caseless: bool,
    /// The paths reach the program through `xargs`, which splits them at
    /// blanks and reads quotes and backslashes: a name holding one would
    /// become other words (`a .env` is `a` and `.env`), so it is refused.
    names_split: bool,
}

impl Narrowing {
    /// The paths a `find` printed: only base names matching one of `names`
    /// (its `-name` globs; followed as `--include` ones are, when plain),
    /// split at blanks when `split`.
    pub(super) fn found(names: &[String], split: bool) -> Narrowing {
        Narrowing {
            items: names.iter().map(|g| (Select::Include, g.clone())).collect(),
            globs_caseless: false,
            names_split: split,
        }
    }

    /// Records a [`Select`] option; `value` is its text (none for a flag).
    pub(super) fn add(&mut self, select: Select, value: Option<&str>) -> Result<(), String> {
        if select == Select::GlobsCaseless {
            self.globs_caseless = true;
            return Ok(());
        }
        let value = value.ok_or("a narrowing option with a value not known statically")?;
        self.items.push((select, value.to_owned()));
        Ok(())
    }
}

/// Checks what a search of `path` reads: no entry the program would read
/// is sensitive, and no symbolic link it meets leads to a sensitive file
/// or a tree that may not be searched (whether or not the program follows
/// it: `grep -R` and `rg -L` do).
pub(super) fn tree_walk(
    path: &str,
    trees: Trees,
    narrowing: &Narrowing,
    cwd: Option<&str>,
    ctx: &InertContext<'_>,
) -> Result<(), String> {
    let files = ctx.files;
    let root = PathBuf::from(absolute(path, cwd, ctx.home)?);
    let mut budget = Budget {
        left: MAX_TREE_ENTRIES,
        path,
    };
    let rules = match trees {
        Trees::SkipsHidden => {
            Rules::Ripgrep(Box::new(Ripgrep::new(narrowing, &root, ctx, &mut budget)?))
        }
        Trees::Everything => Rules::Grep(Grep::new(narrowing)),
    };
    let mut pending = vec![Dir {
        path: root.clone(),
        ignores: Vec::new(),
        gitignores: Vec::new(),
        in_git: rules.in_git_at(&root, files),
        whitelists: false,
        sensitive: false,
    }];
    while let Some(parent) = pending.pop() {
        if !files.is_dir_at(&parent.path) {
            // A file operand of `grep -r`, or gone: the program reads no
            // more than vouch can.
            continue;
        }
        let dir = rules.enter(parent, &mut budget, files)?;
        let Ok(entries) = files.entries(&dir.path) else {
            continue;
        };
        for entry in entries {
            budget.charge(1)?;
            let entry = entry.map_err(|e| format!("`{path}`: {e}"))?;
            let full = dir.path.join(&entry.name);
            let shown = full.display().to_string();
            let kind = entry.kind.map_err(|e| format!("`{shown}`: {e}"))?;
            let name = entry.name.to_string_lossy();
            // What a link points to, looked up once. A link to a directory
            // is one to the programs that follow it (`grep -R`, `rg -L`,
            // `find -L`): never left out as a file.
            let target = match kind == Kind::Symlink {
                true => files.stat(&full).ok(),
                false => None,
            };
            let dir_like = kind == Kind::Dir || target.is_some_and(|m| m.kind == Kind::Dir);
            if rules.skips(&dir, &full, &name, dir_like) {
                continue;
            }
            if narrowing.names_split && xargs_splits(&name) {
                return Err(format!(
                    "`{path}` holds a name `xargs` would split into other words"
                ));
            }
            let sensitive = dir.sensitive
                || sensitive_by_name(&shown, files)
                || ctx
                    .protected
                    .iter()
                    .any(|p| crate::shell::path::is_ancestor_or_self(p, &shown));
            if kind == Kind::Symlink {
                match target {
                    // Walked as well, followed or not (`grep -R`, `rg -L`
                    // follow it); a loop ends with the budget.
                    Some(meta) if meta.kind == Kind::Dir => {
                        tree_refusal(&shown, cwd, ctx)?;
                        pending.push(dir.child(full, sensitive));
                    }
                    Some(_) => content_path_refusal(&shown, cwd, ctx)?,
                    None => {}
                }
            } else if kind == Kind::Dir {
                // A sensitive directory's names are not its contents: its
                // files are judged one by one, all of them sensitive.
                pending.push(dir.child(full, sensitive));
            } else if sensitive {
                return Err(format!(
                    "`{path}` holds `{name}`, a sensitive file the search reads"
                ));
            } else if kind == Kind::File && hard_linked(&full, files) {
                // Another name of the same file may be a secret's
                // (`ln ~/.aws/credentials t/notes.txt`), and a link inside
                // the project is readable confined too.
                return Err(format!(
                    "`{path}` holds `{name}`, a file with more than one name"
                ));
            }
        }
    }
    Ok(())
}

/// Whether `xargs` (without `-0`) reads `text` as other words than itself:
/// it splits at blanks and reads quotes and backslashes.
pub(super) fn xargs_splits(text: &str) -> bool {
    text.chars()
        .any(|c| c.is_whitespace() || matches!(c, '\'' | '"' | '\\'))
}

/// A regular file with more than one hard link (one whose links cannot be
/// counted is taken to).
fn hard_linked(path: &Path, files: &dyn Files) -> bool {
    files.lstat(path).map_or(true, |m| m.links > 1)
}

struct Budget<'p> {
    left: usize,
    path: &'p str,
}

impl Budget<'_> {
    fn charge(&mut self, units: usize) -> Result<(), String> {
        self.left = self
            .left
            .checked_sub(units)
            .ok_or_else(|| format!("`{}`: too many entries to check", self.path))?;
        Ok(())
    }
}

/// One directory of the walk and the rules that apply in it.
struct Dir {
    path: PathBuf,
    /// `.rgignore` and `.ignore` matchers, outermost first.
    ignores: Vec<Rc<Gitignore>>,
    /// `.gitignore` matchers of the repository, outermost first.
    gitignores: Vec<Rc<Gitignore>>,
    in_git: bool,
    /// A rule that applies here may whitelist: ignore files are not
    /// followed and hidden entries count as read.
    whitelists: bool,
    /// Inside a sensitive directory: every file is sensitive.
    sensitive: bool,
}

impl Dir {
    fn child(&self, path: PathBuf, sensitive: bool) -> Dir {
        Dir {
            path,
            ignores: self.ignores.clone(),
            gitignores: self.gitignores.clone(),
            in_git: self.in_git,
            whitelists: self.whitelists,
            sensitive: self.sensitive || sensitive,
        }
    }
}

enum Rules {
    Ripgrep(Box<Ripgrep>),
    Grep(Grep),
}

impl Rules {
    fn in_git_at(&self, root: &Path, files: &dyn Files) -> bool {
        match self {
            Rules::Ripgrep(_) => root.ancestors().any(|a| files.exists(&a.join(".git"))),
            Rules::Grep(_) => false,
        }
    }

    /// Reads the directory's own ignore files (ripgrep) before its entries.
    fn enter(
        &self,
        mut dir: Dir,
        budget: &mut Budget<'_>,
        files: &dyn Files,
    ) -> Result<Dir, String> {
        match self {
            Rules::Grep(_) => Ok(dir),
            Rules::Ripgrep(rg) => {
                if !rg.follows_ignores {
                    return Ok(dir);
                }
                let git = dir.path.join(".git");
                if files.exists(&git) {
                    // A repository's root: the outer repository's
                    // `.gitignore` files stop applying.
                    dir.in_git = true;
                    dir.gitignores.clear();
                    dir.whitelists |= exclude_whitelists(&git, budget, files)?;
                }
                for name in RG_IGNORE_FILES {
                    match read_ignore_file(&dir.path, name, budget, files)? {
                        Some(Ignore::Rules(matcher)) => {
                            dir.whitelists |= matcher.num_whitelists() > 0;
                            dir.ignores.push(Rc::new(matcher));
                        }
                        Some(Ignore::Unfollowed) => dir.whitelists = true,
                        None => {}
                    }
                }
                match read_ignore_file(&dir.path, ".gitignore", budget, files)? {
                    Some(Ignore::Rules(matcher)) => {
                        dir.whitelists |= matcher.num_whitelists() > 0;
                        if dir.in_git {
                            dir.gitignores.push(Rc::new(matcher));
                        }
                    }
                    Some(Ignore::Unfollowed) => dir.whitelists = true,
                    None => {}
                }
                Ok(dir)
            }
        }
    }

    /// Whether the program skips this entry (never reads it or below it).
    fn skips(&self, dir: &Dir, path: &Path, name: &str, is_dir: bool) -> bool {
        match self {
            Rules::Grep(grep) => !is_dir && !grep.reads(name),
            Rules::Ripgrep(rg) => rg.skips(dir, path, name, is_dir),
        }
    }
}

/// ripgrep's rules for one search.
struct Ripgrep {
    /// `-g` / `--iglob`, when every glob is followed; `None` without any.
    overrides: Option<Override>,
    /// `-g` globs not followed: any entry may be whitelisted.
    overrides_unknown: bool,
    types: Option<Types>,
    /// No whitelist above the tree, in the global ignore file or the
    /// repository's exclude file (the tree's own are checked as walked).
    follows_ignores: bool,
}

impl Ripgrep {
    fn new(
        narrowing: &Narrowing,
        root: &Path,
        ctx: &InertContext<'_>,
        budget: &mut Budget<'_>,
    ) -> Result<Ripgrep, String> {
        let mut overrides = OverrideBuilder::new("/");
        let mut any_glob = false;
        let mut overrides_unknown = false;
        let mut types = TypesBuilder::new();
        types.add_defaults();
        let mut any_type = false;
        for (select, value) in &narrowing.items {
            match select {
                Select::Glob | Select::GlobCaseless => {
                    any_glob = true;
                    // A glob naming a path matches from the working
                    // directory; vouch follows base-name globs only.
                    if value.contains('/') {
                        overrides_unknown = true;
                        continue;
                    }
                    overrides
                        .case_insensitive(
                            narrowing.globs_caseless || *select == Select::GlobCaseless,
                        )
                        .map_err(|e| format!("`rg -g {value}`: {e}"))?;
                    overrides
                        .add(value)
                        .map_err(|e| format!("`rg -g {value}`: {e}"))?;
                }
                Select::Type => {
                    any_type = true;
                    types.select(value);
                }
                Select::TypeNot => {
                    any_type = true;
                    types.negate(value);
                }
                // grep's; ripgrep's table gives it no such option.
                Select::Include | Select::Exclude | Select::GlobsCaseless => {}
            }
        }
        let overrides = match any_glob && !overrides_unknown {
            true => Some(overrides.build().map_err(|e| format!("`rg -g`: {e}"))?),
            false => None,
        };
        let types = match any_type {
            true => Some(types.build().map_err(|e| format!("`rg -t`: {e}"))?),
            false => None,
        };
        let follows_ignores =
            !overrides_unknown && !outer_whitelists(root, Path::new(ctx.home), budget, ctx.files)?;
        Ok(Ripgrep {
            overrides,
            overrides_unknown,
            types,
            follows_ignores,
        })
    }

    fn skips(&self, dir: &Dir, path: &Path, name: &str, is_dir: bool) -> bool {
        if self.overrides_unknown {
            return false;
        }
        if let Some(overrides) = &self.overrides {
            match overrides.matched(name, is_dir) {
                Match::Whitelist(_) => return false,
                Match::Ignore(_) => return true,
                Match::None => {}
            }
        }
        let follows = self.follows_ignores && !dir.whitelists;
        if follows {
            let ignored = dir
                .ignores
                .iter()
                .chain(dir.gitignores.iter())
                .any(|g| g.matched(path, is_dir).is_ignore());
            if ignored {
                return true;
            }
        }
        let mut whitelisted = false;
        if let Some(types) = &self.types {
            match types.matched(name, is_dir) {
                Match::Ignore(_) => return true,
                Match::Whitelist(_) => whitelisted = true,
                Match::None => {}
            }
        }
        follows && !whitelisted && name.starts_with('.')
    }
}

/// Whether an ignore file that applies to the whole search may whitelist:
/// one in a directory above the tree, the user's global git ignore file
/// (or one named in the git configuration), the repository's exclude file.
fn outer_whitelists(
    root: &Path,
    home: &Path,
    budget: &mut Budget<'_>,
    files: &dyn Files,
) -> Result<bool, String> {
    for dir in root.ancestors().skip(1) {
        for name in [".rgignore", ".ignore", ".gitignore"] {
            if read_ignore_file(dir, name, budget, files)?.is_some_and(|m| m.may_whitelist()) {
                return Ok(true);
            }
        }
        let git = dir.join(".git");
        if files.exists(&git) && exclude_whitelists(&git, budget, files)? {
            return Ok(true);
        }
    }
    // `core.excludesFile` names a file vouch does not follow.
    for config in [".gitconfig", ".config/git/config"] {
        let text = read_bounded(&home.join(config), files)?.unwrap_or_default();
        if String::from_utf8_lossy(&text)
            .to_ascii_lowercase()
            .contains("excludesfile")
        {
            return Ok(true);
        }
    }
    let global = read_ignore_file(&home.join(".config/git"), "ignore", budget, files)?;
    Ok(global.is_some_and(|m| m.may_whitelist()))
}

/// Whether a repository's `info/exclude` may whitelist (a `.git` file, a
/// linked worktree, names a git directory vouch does not follow: it may).
fn exclude_whitelists(
    git: &Path,
    budget: &mut Budget<'_>,
    files: &dyn Files,
) -> Result<bool, String> {
    if !files.is_dir_at(git) {
        return Ok(true);
    }
    let exclude = read_ignore_file(&git.join("info"), "exclude", budget, files)?;
    Ok(exclude.is_some_and(|m| m.may_whitelist()))
}

/// An ignore file in `dir`, read with ripgrep's syntax; `None` when there
/// is none. Each line is charged first.
fn read_ignore_file(
    dir: &Path,
    name: &str,
    budget: &mut Budget<'_>,
    files: &dyn Files,
) -> Result<Option<Ignore>, String> {
    let path = dir.join(name);
    let Some(text) = read_bounded(&path, files)? else {
        return Ok(None);
    };
    // ripgrep stops reading an ignore file at its first line that is not
    // UTF-8, and its glob syntax differs by version in classes, braces
    // and escapes: a file with any such line (but a comment) is not
    // followed — reported
    // as one that may whitelist, so nothing it names counts as skipped.
    let plain = |line: &str| {
        line.starts_with('#')
            || !line.ends_with(' ')
                && line
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b" ._-/*?!#".contains(&b))
    };
    let Ok(text) = std::str::from_utf8(&text) else {
        return Ok(Some(Ignore::Unfollowed));
    };
    if !text.lines().all(plain) {
        return Ok(Some(Ignore::Unfollowed));
    }
    let mut builder = GitignoreBuilder::new(dir);
    for line in text.lines() {
        budget.charge(1)?;
        // A line ripgrep cannot parse is an error it reports and skips;
        // skipping it here ignores less.
        let _ = builder.add_line(Some(path.clone()), line);
    }
    let matcher = builder
        .build()
        .map_err(|e| format!("`{}`: {e}", path.display()))?;
    Ok(Some(Ignore::Rules(matcher)))
}

/// An ignore file as vouch follows it.
enum Ignore {
    Rules(Gitignore),
    /// Not followed: it may whitelist anything.
    Unfollowed,
}

impl Ignore {
    fn may_whitelist(&self) -> bool {
        match self {
            Ignore::Rules(m) => m.num_whitelists() > 0,
            Ignore::Unfollowed => true,
        }
    }
}

/// A small file's text, `None` when it does not exist; too large or not
/// readable as text, the search is not proven.
fn read_bounded(path: &Path, files: &dyn Files) -> Result<Option<Vec<u8>>, String> {
    let Ok(meta) = files.stat(path) else {
        return Ok(None);
    };
    if meta.kind != Kind::File {
        return Ok(None);
    }
    if meta.len > MAX_IGNORE_FILE {
        return Err(format!("`{}` is too large to read", path.display()));
    }
    let bytes = files
        .read(path, MAX_IGNORE_FILE)
        .map_err(|e| format!("`{}`: {e}", path.display()))?;
    Ok(Some(bytes))
}

/// GNU grep's `--include` / `--exclude` on base names.
struct Grep {
    /// `(true for --include, glob)` in the order given; `None` when there
    /// is no narrowing or one vouch does not follow.
    rules: Option<Vec<(bool, GlobMatcher)>>,
}

impl Grep {
    fn new(narrowing: &Narrowing) -> Grep {
        let mut rules = Vec::new();
        for (select, value) in &narrowing.items {
            let include = match select {
                Select::Include => true,
                Select::Exclude => false,
                Select::Glob
                | Select::GlobCaseless
                | Select::GlobsCaseless
                | Select::Type
                | Select::TypeNot => continue,
            };
            let plain = !value.is_empty()
                && value
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b"._-*?".contains(&b));
            let Some(glob) = plain.then(|| Glob::new(value).ok()).flatten() else {
                return Grep { rules: None };
            };
            rules.push((include, glob.compile_matcher()));
        }
        Grep {
            rules: (!rules.is_empty()).then_some(rules),
        }
    }

    fn reads(&self, name: &str) -> bool {
        let Some(rules) = &self.rules else {
            return true;
        };
        match rules.iter().rev().find(|(_, glob)| glob.is_match(name)) {
            Some((include, _)) => *include,
            None => !rules.first().is_some_and(|(include, _)| *include),
        }
    }
}
