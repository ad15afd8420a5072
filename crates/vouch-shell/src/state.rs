//! The shell state the interpreter tracks along the control flow of one
//! command line: variables, positional parameters, the working directory,
//! functions, shell options, descriptors an `exec` opened, files written
//! with known contents, and what standard input holds.
//!
//! A state is cheap to clone (shared tables are copied only when written),
//! because every branch (`a && b`, `if`, loops) forks it, and two states
//! join into one whose every value lists the candidates of both.

use std::collections::BTreeMap;
use std::rc::Rc;

use super::ast::Stmt;
use super::command::Redirect;
use super::value::{Sources, Text, Value};

/// One candidate value of a variable.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) enum Binding {
    Unset,
    Str(Text),
    /// An indexed array, elements 0..n (sparse or associative arrays are
    /// [`Binding::Unknown`]).
    Arr(Rc<Vec<Text>>),
    /// Set from the environment or to something unknowable.
    Unknown(Sources),
}

/// A variable: every value it may hold here.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Var {
    /// Candidates, never empty.
    pub vals: Vec<Binding>,
    pub exported: bool,
}

impl Var {
    pub(crate) fn one(binding: Binding, exported: bool) -> Self {
        Var {
            vals: vec![binding],
            exported,
        }
    }

    /// The environment's value: unknown (possibly unset or empty, which
    /// `${x:-…}` and `${x-…}` take into account).
    ///
    /// Not marked exported: assigning it makes a shell variable, which a
    /// child process inherits only after `export` (whether the agent's
    /// environment already exported the name is runtime data).
    pub(crate) fn from_environment() -> Self {
        Var::one(Binding::Unknown(Sources::none()), false)
    }

    fn join(&mut self, other: &Var) {
        for b in &other.vals {
            if !self.vals.contains(b) {
                self.vals.push(b.clone());
            }
        }
        self.exported |= other.exported;
    }
}

/// Shell options that change expansion.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) struct Opts {
    pub noglob: bool,
    pub dotglob: bool,
    pub nullglob: bool,
    pub nocaseglob: bool,
    pub globstar: bool,
    pub expand_aliases: bool,
    pub lastpipe: bool,
}

impl Opts {
    /// Joining two branches keeps the reading that expands more.
    fn join(self, other: Opts) -> Opts {
        Opts {
            noglob: self.noglob && other.noglob,
            dotglob: self.dotglob || other.dotglob,
            nullglob: self.nullglob && other.nullglob,
            nocaseglob: self.nocaseglob || other.nocaseglob,
            globstar: self.globstar || other.globstar,
            expand_aliases: self.expand_aliases || other.expand_aliases,
            lastpipe: self.lastpipe && other.lastpipe,
        }
    }
}

/// What standard input holds for the commands about to run.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub(crate) struct Input {
    /// The remaining text when statically known.
    pub text: Option<Value>,
    /// Each item (line) is one of these, when only their shape is known
    /// (`find ROOT` prints ROOT and paths below it).
    pub items: Option<Value>,
    /// Commands whose output it holds.
    pub from: Sources,
}

/// A function definition.
#[derive(Debug, Clone)]
pub(crate) struct Func {
    pub body: Rc<Stmt>,
    pub exported: bool,
}

/// Two definitions are the same when they share one body: every body comes
/// from one parse (a script string is parsed once per analysis), so a
/// pointer comparison is exact for a definition run again and costs nothing
/// however large the body — a deep comparison ran, uncharged, at every join
/// of two states.
impl PartialEq for Func {
    fn eq(&self, other: &Func) -> bool {
        Rc::ptr_eq(&self.body, &other.body) && self.exported == other.exported
    }
}

/// The variables one function call declared `local`, with their values before.
pub(crate) type Locals = Vec<(String, Option<Var>)>;

/// The state of one shell at one point of the command.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct State {
    /// Variables assigned in the command; others come from [`State::get`]'s
    /// environment defaults.
    pub vars: Rc<BTreeMap<String, Var>>,
    /// `$1…`; `None` when unknown.
    pub positional: Option<Rc<Vec<Value>>>,
    pub arg0: Value,
    pub cwd: Value,
    /// `OLDPWD`; `None`: the environment's (unknown).
    pub oldpwd: Option<Value>,
    pub dirstack: Rc<Vec<Value>>,
    /// Redirections an `exec` made permanent, by descriptor.
    pub fds: Rc<BTreeMap<u32, Redirect>>,
    pub opts: Opts,
    pub functions: Rc<BTreeMap<String, Func>>,
    pub aliases: Rc<BTreeMap<String, String>>,
    /// Files written in this command, by absolute path, with what they may
    /// hold: the text written, or its candidates (a hole among them where
    /// one way through the command left the file as it was before).
    pub files: Rc<BTreeMap<String, Value>>,
    /// Programs copied or linked under another name earlier in the command
    /// (`ln -s /bin/rm /tmp/ls`, `cp /bin/rm x`): the absolute path of the
    /// copy and the program it is. A join keeps both sides' (a copy made
    /// in either branch may be run).
    pub programs: Rc<BTreeMap<String, String>>,
    pub stdin: Input,
    /// Per active function call: variables declared `local` and the value
    /// each had before.
    pub locals: Rc<Vec<Locals>>,
    /// Names of the functions being called, outermost first.
    pub calls: Rc<Vec<String>>,
    /// The bodies those calls run, in the same order. A call is recursive
    /// only when it re-enters one of these bodies: a function that defines
    /// a new body under its own name and calls it (`f() { f() { …; }; f; }`)
    /// runs the new body, as bash does.
    pub bodies: Rc<Vec<Rc<Stmt>>>,
    /// Started with an empty environment (`env -i`): unassigned variables
    /// are unset rather than unknown.
    pub env_cleared: bool,
    /// Name references (`declare -n r=HOME`): reading or assigning `r`
    /// reads or assigns `HOME`.
    pub refs: Rc<BTreeMap<String, String>>,
}

/// How many references a name is followed through: bash's `NAMEREF_MAX`
/// (a longer chain reads as empty there; here the name reached is read as
/// the environment's, unknown).
const MAX_REF_HOPS: usize = 8;

/// The values vouch knows about the environment.
#[derive(Debug, Clone)]
pub(crate) struct Known {
    pub home: String,
    /// The user name the home directory is named after.
    pub user: Option<String>,
    pub vars: Vec<(String, String)>,
}

/// Files after a join: a file either side wrote may hold what either wrote,
/// and a file only one side wrote may still hold what it held before the
/// command (a hole). `true && echo '…' > x.sh; bash x.sh` runs the text
/// when `true` succeeded (a status only the user's snapshot could change),
/// so the text is not dropped for the way it was not written.
pub(crate) fn join_files(
    mine: &BTreeMap<String, Value>,
    theirs: &BTreeMap<String, Value>,
) -> BTreeMap<String, Value> {
    let mut files = BTreeMap::new();
    for path in mine.keys().chain(theirs.keys()) {
        if files.contains_key(path) {
            continue;
        }
        let value = match (mine.get(path), theirs.get(path)) {
            (Some(a), Some(b)) => {
                let mut v = a.clone();
                v.merge(b);
                v
            }
            (Some(a), None) | (None, Some(a)) => {
                let mut v = a.clone();
                v.add(Text::any(Sources::none()));
                v
            }
            (None, None) => continue,
        };
        files.insert(path.clone(), value);
    }
    files
}

impl State {
    pub(crate) fn new(cwd: Value) -> Self {
        State {
            vars: Rc::new(BTreeMap::new()),
            positional: Some(Rc::new(Vec::new())),
            arg0: Value::known("bash"),
            cwd,
            oldpwd: None,
            dirstack: Rc::new(Vec::new()),
            fds: Rc::new(BTreeMap::new()),
            opts: Opts::default(),
            functions: Rc::new(BTreeMap::new()),
            aliases: Rc::new(BTreeMap::new()),
            files: Rc::new(BTreeMap::new()),
            programs: Rc::new(BTreeMap::new()),
            stdin: Input::default(),
            locals: Rc::new(Vec::new()),
            calls: Rc::new(Vec::new()),
            bodies: Rc::new(Vec::new()),
            env_cleared: false,
            refs: Rc::new(BTreeMap::new()),
        }
    }

    /// The variable `name` stands for, through name references.
    pub(crate) fn resolve<'a>(&'a self, name: &'a str) -> &'a str {
        let mut name = name;
        for _ in 0..MAX_REF_HOPS {
            match self.refs.get(name) {
                Some(target) => name = target,
                None => break,
            }
        }
        name
    }

    /// The variable `name` as this shell sees it.
    pub(crate) fn get(&self, name: &str, known: &Known) -> Var {
        let name = self.resolve(name);
        if let Some(var) = self.vars.get(name) {
            return var.clone();
        }
        environment(name, self, known)
    }

    pub(crate) fn set(&mut self, name: &str, var: Var) {
        let name = self.resolve(name).to_owned();
        Rc::make_mut(&mut self.vars).insert(name, var);
    }

    /// Assigns one value, keeping the exported flag.
    pub(crate) fn assign(&mut self, name: &str, binding: Binding, known: &Known) {
        let exported = self.get(name, known).exported;
        self.set(name, Var::one(binding, exported));
    }

    pub(crate) fn unset(&mut self, name: &str) {
        self.set(name, Var::one(Binding::Unset, false));
    }

    /// Joins `other` into `self`: every value becomes the candidates of both.
    pub(crate) fn join(&mut self, other: &State, known: &Known) {
        self.join_values(other, known);
        self.join_tables(other);
    }

    /// Variables, positional parameters, `$0` and the directories.
    fn join_values(&mut self, other: &State, known: &Known) {
        if !Rc::ptr_eq(&self.vars, &other.vars) {
            let names: Vec<String> = self.vars.keys().chain(other.vars.keys()).cloned().collect();
            let mut merged = BTreeMap::new();
            for name in names {
                if merged.contains_key(&name) {
                    continue;
                }
                let mut mine = self.get(&name, known);
                let theirs = other.get(&name, known);
                if mine != theirs {
                    mine.join(&theirs);
                }
                merged.insert(name, mine);
            }
            self.vars = Rc::new(merged);
        }
        self.positional = match (&self.positional, &other.positional) {
            (Some(a), Some(b)) if a == b => Some(Rc::clone(a)),
            (Some(a), Some(b)) if a.len() == b.len() => Some(Rc::new(
                a.iter()
                    .zip(b.iter())
                    .map(|(x, y)| {
                        let mut v = x.clone();
                        v.merge(y);
                        v
                    })
                    .collect(),
            )),
            _ => None,
        };
        self.arg0.merge(&other.arg0);
        self.cwd.merge(&other.cwd);
        self.oldpwd = match (&self.oldpwd, &other.oldpwd) {
            (Some(a), Some(b)) => {
                let mut v = a.clone();
                v.merge(b);
                Some(v)
            }
            // One side still has the environment's (unknown) value.
            (Some(a), None) | (None, Some(a)) => {
                let mut v = a.clone();
                v.add(Text::any(Sources::none()));
                Some(v)
            }
            (None, None) => None,
        };
    }

    /// The directory stack, descriptors, options, functions, aliases, known
    /// files and standard input.
    fn join_tables(&mut self, other: &State) {
        if self.dirstack != other.dirstack {
            self.dirstack = Rc::new(Vec::new());
        }
        if self.fds != other.fds {
            let mut fds = (*self.fds).clone();
            for (fd, r) in other.fds.iter() {
                fds.entry(*fd).or_insert_with(|| r.clone());
            }
            self.fds = Rc::new(fds);
        }
        self.opts = self.opts.join(other.opts);
        if self.functions != other.functions {
            let mut functions = (*self.functions).clone();
            for (name, f) in other.functions.iter() {
                functions.entry(name.clone()).or_insert_with(|| f.clone());
            }
            self.functions = Rc::new(functions);
        }
        if self.refs != other.refs {
            let mut refs = (*self.refs).clone();
            for (name, target) in other.refs.iter() {
                refs.entry(name.clone()).or_insert_with(|| target.clone());
            }
            self.refs = Rc::new(refs);
        }
        if self.aliases != other.aliases {
            let mut aliases = (*self.aliases).clone();
            for (name, a) in other.aliases.iter() {
                aliases.entry(name.clone()).or_insert_with(|| a.clone());
            }
            self.aliases = Rc::new(aliases);
        }
        if self.files != other.files {
            self.files = Rc::new(join_files(&self.files, &other.files));
        }
        if self.programs != other.programs {
            let mut programs = (*self.programs).clone();
            for (path, program) in other.programs.iter() {
                programs
                    .entry(path.clone())
                    .or_insert_with(|| program.clone());
            }
            self.programs = Rc::new(programs);
        }
        if self.stdin != other.stdin {
            let mut from = self.stdin.from.clone();
            from.extend(&other.stdin.from);
            self.stdin = Input {
                text: None,
                items: None,
                from,
            };
        }
    }

    /// Exported variables and functions: what a child shell inherits.
    pub(crate) fn exported(&self) -> (BTreeMap<String, Var>, BTreeMap<String, Func>) {
        let vars = self
            .vars
            .iter()
            .filter(|(_, v)| v.exported)
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        let functions = self
            .functions
            .iter()
            .filter(|(_, f)| f.exported)
            .map(|(k, f)| (k.clone(), f.clone()))
            .collect();
        (vars, functions)
    }
}

/// The value of a variable nobody assigned in this command.
fn environment(name: &str, state: &State, known: &Known) -> Var {
    if state.env_cleared && !matches!(name, "PWD" | "IFS" | "OLDPWD") {
        return Var::one(Binding::Unset, false);
    }
    if let Some((_, value)) = known.vars.iter().find(|(n, _)| n == name) {
        return Var::one(Binding::Str(Text::lit(value)), true);
    }
    let str_var = |text: Text, exported| Var::one(Binding::Str(text), exported);
    match name {
        "HOME" => str_var(Text::lit(&known.home), true),
        // Bash never imports IFS; it starts as space, tab, newline.
        "IFS" => str_var(Text::lit(" \t\n"), false),
        "PWD" => Var {
            vals: state
                .cwd
                .candidates()
                .iter()
                .cloned()
                .map(Binding::Str)
                .collect(),
            exported: true,
        },
        "OLDPWD" => match &state.oldpwd {
            Some(v) => Var {
                vals: v.candidates().iter().cloned().map(Binding::Str).collect(),
                exported: true,
            },
            None => Var::from_environment(),
        },
        // The user the home directory is named after, or someone else.
        "USER" | "LOGNAME" => match &known.user {
            Some(user) => Var {
                vals: vec![
                    Binding::Str(Text::lit(user)),
                    Binding::Unknown(Sources::none()),
                ],
                exported: true,
            },
            None => Var::from_environment(),
        },
        // Some shell: bash's, or another one nobody can name.
        "SHELL" => Var {
            vals: vec![
                Binding::Str(Text::lit("/bin/bash")),
                Binding::Unknown(Sources::none()),
            ],
            exported: true,
        },
        "BASH" => str_var(Text::lit("/bin/bash"), false),
        // What bash sets itself, and names an environment always has.
        "PATH" | "TERM" | "LANG" | "SHLVL" | "HOSTNAME" | "HOSTTYPE" | "OSTYPE" | "MACHTYPE"
        | "BASH_VERSION" | "UID" | "EUID" | "PPID" | "RANDOM" | "SECONDS" | "LINENO"
        | "BASHPID" | "GROUPS" | "BASH_VERSINFO" => Var::from_environment(),
        // Anything else may as well not be set at all.
        _ => Var {
            vals: vec![Binding::Unknown(Sources::none()), Binding::Unset],
            exported: false,
        },
    }
}
