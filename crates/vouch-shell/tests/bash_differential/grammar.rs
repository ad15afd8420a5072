//! A grammar of bash commands for differential testing, as proptest
//! strategies.
//!
//! It covers what issue 8 lists: wrappers and their options, every quoting
//! form, brace/tilde/parameter (all operators)/arithmetic/command
//! substitution expansions, word splitting with an assigned `IFS`, globs,
//! redirections in every position, functions with arguments, `set --`,
//! `read`/`printf -v`/`mapfile` from literal input, here-strings and
//! here-documents, scripts fed to shells, pipelines, lists, compound
//! commands and `cd`. Each generated [`Case`] renders to bash source and
//! says whether bash's behaviour is **static** (decided by the text alone,
//! given the request's cwd and home) and whether **every command runs** (no
//! dead branch), which the comparison needs.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;

use proptest::prelude::*;
use proptest::sample::select;

/// Variables a case may assign up front; a reference to one it did not
/// assign reads the (unknown) environment.
const VARS: &[&str] = &["A", "B", "C"];
/// Values those variables take.
const VALUES: &[&str] = &[
    "x",
    "a b",
    "/tmp/x",
    "-rf",
    "--force",
    "a,b",
    "",
    "/home/dev/project/src",
    "src/a b",
    "https://x.example/p?q=1",
    "x:y",
    "-n 1",
    "*",
];
/// Literal argument texts, rendered with every quoting style.
const TEXTS: &[&str] = &[
    "-rf",
    "-f",
    "--force",
    "-n",
    "1",
    "/",
    "/tmp/x",
    "a b",
    "x",
    "*",
    "~",
    "$HOME",
    "a;b",
    "it's",
    "say \"hi\"",
    "https://x.example/a?b=1&c=2",
    "a\tb",
    "-",
    "--",
    "{a,b}",
    "x=1",
    "",
    "é",
    "a\\b",
    "line1\nline2",
    "!x",
    "#c",
];
/// External commands the leaves run (each has a recorder in the sandbox).
const COMMANDS: &[&str] = &[
    "rm", "cat", "ls", "touch", "cp", "mv", "mkdir", "chmod", "grep", "wc", "head", "tee", "dd",
    "curl", "git",
];
/// Safe alternatives inside braces.
const BRACE_ALTS: &[&str] = &["a", "b", "/tmp", "-r", "-f", "", "1", "x/y"];
const GLOBS: &[&str] = &["*", "*.txt", "src/*", "?.txt", "[ab]*", ".*", "*/", "[!a]*"];
const ARITH: &[&str] = &["$((1+2))", "$((2*3))", "$((7/2))", "$(( -1 ))", "$((1<<4))"];
/// Directories that exist in the sandbox (plus `/`).
const DIRS: &[&str] = &[
    "/tmp",
    "/tmp/x",
    "src",
    "build",
    "~",
    "..",
    "/",
    "~/.ssh",
    "/home/dev/project/dist",
];
const PATTERNS: &[&str] = &["x", "*/", "/*", "a*", "?", "*", "[ab]", "tmp"];
/// Patterns for `${V/p/r}` forms, where a `/` would end the pattern.
const REPLACE_PATTERNS: &[&str] = &["x", "a*", "?", "[ab]", "tmp", "*", " "];
const REPLACEMENTS: &[&str] = &["", "y", "/", "Z Z"];
const REDIRECTS: &[&str] = &[
    ">/dev/null",
    "2>/dev/null",
    "2>&1",
    "</dev/null",
    ">>/tmp/log",
    "&>/dev/null",
    "3>&-",
    "1<>/tmp/rw",
    ">/tmp/out.txt",
    "2>>/tmp/err.log",
    "<<<'text'",
    ">|/tmp/clob",
    "0</dev/null",
    "&>>/tmp/all",
];

/// How a literal is quoted.
#[derive(Debug, Clone, Copy)]
pub enum Quote {
    Bare,
    Single,
    Double,
    AnsiC,
}

/// Parameter-expansion operators.
#[derive(Debug, Clone)]
pub enum Op {
    Plain,
    Default(&'static str),
    DefaultUnset(&'static str),
    Assign(&'static str),
    Alternative(&'static str),
    RemovePrefix(&'static str),
    RemovePrefixLong(&'static str),
    RemoveSuffix(&'static str),
    RemoveSuffixLong(&'static str),
    Replace(&'static str, &'static str),
    ReplaceAll(&'static str, &'static str),
    ReplacePrefix(&'static str, &'static str),
    ReplaceSuffix(&'static str, &'static str),
    Substring(i8, Option<u8>),
    UpperFirst,
    UpperAll,
    LowerFirst,
    LowerAll,
    Length,
    Quoted,
    Upper,
    Lower,
}

/// Tilde prefixes.
#[derive(Debug, Clone, Copy)]
pub enum Tilde {
    Home,
    HomeSlash,
    Pwd,
    OldPwd,
    User,
}

/// One part of a word.
#[derive(Debug, Clone)]
pub enum Part {
    Lit(&'static str, Quote),
    Var {
        name: &'static str,
        op: Op,
        quoted: bool,
    },
    Indirect {
        quoted: bool,
    },
    Tilde(Tilde),
    Brace(Vec<&'static str>),
    Seq(&'static str),
    Glob(&'static str),
    Arith(&'static str),
    Subst {
        cmd: Box<Leaf>,
        quoted: bool,
    },
    /// `$1`, `"$@"`, … — only inside a function body or a `bash -c` script.
    Positional(&'static str),
}

/// A word: parts concatenated.
#[derive(Debug, Clone)]
pub struct Word(pub Vec<Part>);

/// How a leaf's command name is written.
#[derive(Debug, Clone)]
pub enum Name {
    Plain(&'static str),
    Absolute(&'static str),
    Escaped(&'static str),
    Quoted(&'static str),
    AnsiC(&'static str),
    /// `$CMD` with `CMD` assigned just before.
    Variable(&'static str),
}

/// Wrappers that run their command.
#[derive(Debug, Clone)]
pub enum Wrapper {
    Env(Vec<&'static str>),
    Nice(&'static str),
    Nohup,
    Timeout(&'static str),
    Stdbuf,
    Setsid,
    Command(bool),
    Sudo(&'static str),
}

/// One simple command with its redirections interleaved.
#[derive(Debug, Clone)]
pub struct Leaf {
    pub prefix: Option<(&'static str, Word)>,
    pub wrappers: Vec<Wrapper>,
    pub name: Name,
    pub args: Vec<Word>,
    /// (position among the words, redirection).
    pub redirects: Vec<(usize, &'static str)>,
}

/// Statements.
#[derive(Debug, Clone)]
pub enum Stmt {
    Leaf(Leaf),
    And(Box<Stmt>, Box<Stmt>),
    /// `a || b`: `b` runs only when `left_fails`.
    Or {
        left_fails: bool,
        right: Box<Stmt>,
        left: Box<Stmt>,
    },
    Seq(Box<Stmt>, Box<Stmt>),
    Pipe(Box<Stmt>, Box<Stmt>),
    Background(Box<Stmt>),
    Not(Box<Stmt>),
    Group(Box<Stmt>),
    Subshell(Box<Stmt>),
    /// `if COND; then A; else B; fi` with a condition that is `true` or `false`.
    If {
        cond: bool,
        then: Box<Stmt>,
        other: Option<Box<Stmt>>,
    },
    For {
        items: Vec<Word>,
        body: Leaf,
    },
    WhileRead {
        lines: Vec<&'static str>,
        body: Leaf,
    },
    Case {
        subject: &'static str,
        hit: Box<Stmt>,
        miss: Box<Stmt>,
    },
    /// A function defined with a body and called with argument lists.
    Function {
        name: &'static str,
        keyword: bool,
        body: Box<Stmt>,
        calls: Vec<Vec<Word>>,
    },
    /// A script run by a shell in one of the forms bash offers.
    Shell {
        form: ShellForm,
        script: Box<Stmt>,
        args: Vec<Word>,
    },
    /// A value read from literal input, then used.
    Read {
        form: ReadForm,
        input: &'static str,
        then: Leaf,
    },
    SetArgs {
        args: Vec<Word>,
        shift: bool,
        then: Leaf,
    },
    Cd {
        dir: &'static str,
        form: CdForm,
        then: Box<Stmt>,
    },
    Xargs {
        input: &'static str,
        opts: &'static str,
        leaf: Leaf,
    },
    FindExec {
        start: &'static str,
        leaf: Leaf,
        plus: bool,
    },
    Heredoc {
        leaf: Leaf,
        quoted: bool,
        body: Vec<Word>,
    },
    /// `printf 'FORMAT' NAME WORDS… | bash`: the format is applied, then
    /// bash parses what it printed.
    PrintfPipe {
        format: &'static str,
        name: &'static str,
        words: Vec<&'static str>,
    },
    /// `exec REDIRECT; LEAF`: the redirection stays for the rest of the shell.
    ExecRedirect {
        redirect: &'static str,
        then: Leaf,
    },
}

#[derive(Debug, Clone, Copy)]
pub enum ShellForm {
    BashC,
    ShC,
    BashCDashDash,
    Eval,
    EchoPipe,
    HereString,
    BashS,
    Heredoc,
    ProcessSubst,
    Source,
    /// `echo S | bash -`
    DashStdin,
    /// `bash /dev/stdin <<< S`
    DevStdin,
    /// `sh < <(echo S)` (`sh` is dash on Debian, bash on macOS: dynamic)
    StdinProcSubst,
    /// `printf '%s\0' S | xargs -0 -I{} bash -c {}`
    XargsScript,
    /// `printf '%s\n' a 'b c' | xargs bash -c S _`
    XargsArgs,
    /// `coproc { S; }; wait`
    Coproc,
}

#[derive(Debug, Clone, Copy)]
pub enum ReadForm {
    HereString,
    TwoVars,
    IfsComma,
    PrintfV,
    Mapfile,
    Heredoc,
    PipeGroup,
    Array,
}

#[derive(Debug, Clone, Copy)]
pub enum CdForm {
    And,
    Semicolon,
    Subshell,
    Pushd,
}

/// One generated command: up-front assignments, then statements.
#[derive(Debug, Clone)]
pub struct Case {
    pub assigns: Vec<(&'static str, &'static str, Quote)>,
    pub ifs: Option<&'static str>,
    pub stmts: Vec<Stmt>,
    /// Line continuations (backslash-newline) inserted into the text, each
    /// at a place drawn from this number: bash removes them before it
    /// splits words (outside single quotes and comments).
    pub continuations: Vec<u16>,
    /// The text is handed to `eval` as a static base64 payload (`eval
    /// "$(printf %s … | base64 -d)"`): the same shell runs it.
    pub encoded: bool,
}

/// A case as bash source, with what the comparison needs to know.
#[derive(Debug, Clone)]
pub struct Rendered {
    pub source: String,
    /// bash's behaviour follows from the text alone.
    pub is_static: bool,
    /// No command is in a dead branch.
    pub all_run: bool,
}

// ---------------------------------------------------------------- rendering

struct Renderer {
    assigned: BTreeSet<&'static str>,
    is_static: bool,
    all_run: bool,
    /// Positional parameters are known here (function body, child shell,
    /// after `set --`).
    positional_known: bool,
    /// Inside a child shell (`bash -c`, `| bash`, …): the parent's
    /// unexported variables are gone, the agent's environment shows through.
    in_child: bool,
    /// A `cd D && …` ran earlier in this shell: it may have failed.
    after_cd: bool,
    /// A `cd` moved this shell away from the project (in its own list or
    /// earlier): a relative `env --chdir=src` looks for a `src` there.
    cwd_moved: bool,
    /// Assignments the rendered text relies on, put first (`P=A`, `CMD_rm=rm`).
    needs: BTreeSet<String>,
    /// Values of the variables assigned up front.
    values: BTreeMap<&'static str, &'static str>,
    /// Some text that can reach a positional parameter or loop variable
    /// holds a pattern character: an unquoted use of one is globbed, and
    /// the file system decides what it becomes.
    pattern_data: bool,
}

/// True when pathname expansion acts on `text` once it is unquoted.
fn has_pattern(text: &str) -> bool {
    text.contains(['*', '?', '['])
}

impl Case {
    pub fn render(&self) -> Rendered {
        let mut r = Renderer {
            assigned: BTreeSet::new(),
            is_static: true,
            all_run: true,
            positional_known: false,
            in_child: false,
            after_cd: false,
            cwd_moved: false,
            needs: BTreeSet::new(),
            values: self.assigns.iter().map(|(n, v, _)| (*n, *v)).collect(),
            // Literal pattern text anywhere, or an assigned value with one,
            // may be handed to a function, `set --` or a loop.
            pattern_data: self.assigns.iter().any(|(_, v, _)| has_pattern(v))
                || format!("{:?}", self.stmts)
                    .split("Lit(\"")
                    .skip(1)
                    .any(|rest| rest.split('"').next().is_some_and(has_pattern)),
        };
        let mut lines = Vec::new();
        for (name, value, quote) in &self.assigns {
            lines.push(format!("{name}={}", lit(value, *quote)));
            r.assigned.insert(name);
        }
        if let Some(ifs) = self.ifs {
            lines.push(format!("IFS={}", lit(ifs, Quote::Single)));
        }
        for stmt in &self.stmts {
            lines.push(r.stmt(stmt));
        }
        let mut all: Vec<String> = r.needs.iter().cloned().collect();
        all.extend(lines);
        let mut source = join_lines(&all);
        for at in &self.continuations {
            source = continue_line(&source, usize::from(*at));
        }
        if self.encoded {
            source = format!(
                "eval \"$(printf %s {} | base64 -d)\"",
                data_encoding::BASE64.encode(source.as_bytes())
            );
        }
        Rendered {
            source,
            is_static: r.is_static,
            all_run: r.all_run,
        }
    }
}

/// `source` with a backslash-newline inserted at a character boundary
/// picked by `at`: never right after a backslash (that would escape the
/// inserted backslash instead of continuing the line), nor inside single
/// quotes (kept there, it would name a program no sandbox holds), nor at
/// the very end (a command substitution would strip the newline and leave
/// a lone backslash).
fn continue_line(source: &str, at: usize) -> String {
    let mut quoted = false;
    let mut places: Vec<usize> = Vec::new();
    let mut previous = ' ';
    for (i, c) in source.char_indices() {
        if !quoted && previous != '\\' {
            places.push(i);
        }
        if c == '\'' && (quoted || previous != '\\') {
            quoted = !quoted;
        }
        previous = if previous == '\\' && !quoted { ' ' } else { c };
    }
    let Some(&place) = places.get(at % places.len().max(1)) else {
        return source.to_owned();
    };
    format!("{}\\\n{}", &source[..place], &source[place..])
}

/// Joins statements: with `;` unless one ends in a here-document, which
/// needs its own line.
fn join_lines(lines: &[String]) -> String {
    let mut out = String::new();
    for (i, line) in lines.iter().enumerate() {
        if i > 0 {
            let prev_heredoc = lines.get(i - 1).is_some_and(|p| p.contains('\n'));
            out.push_str(if prev_heredoc { "\n" } else { "; " });
        }
        out.push_str(line);
    }
    out
}

/// A literal in a quoting style; `Bare` escapes every special character.
pub fn lit(text: &str, quote: Quote) -> String {
    match quote {
        Quote::Bare => {
            if text.is_empty() {
                return "''".to_owned();
            }
            let mut out = String::new();
            for c in text.chars() {
                if c == '\n' {
                    out.push_str("$'\\n'");
                } else if c.is_ascii_alphanumeric() || "_./-,:@%+".contains(c) || !c.is_ascii() {
                    out.push(c);
                } else {
                    out.push('\\');
                    out.push(c);
                }
            }
            out
        }
        Quote::Single => format!("'{}'", text.replace('\'', "'\\''")),
        Quote::Double => {
            let mut out = String::from("\"");
            for c in text.chars() {
                if matches!(c, '"' | '\\' | '$' | '`') {
                    out.push('\\');
                }
                out.push(c);
            }
            out.push('"');
            out
        }
        Quote::AnsiC => {
            let mut out = String::from("$'");
            for (i, c) in text.chars().enumerate() {
                match c {
                    '\'' => out.push_str("\\'"),
                    '\\' => out.push_str("\\\\"),
                    '\n' => out.push_str("\\n"),
                    '\t' => out.push_str("\\t"),
                    c if c.is_ascii_alphabetic() && i % 2 == 0 => {
                        let _ = write!(out, "\\x{:02x}", c as u32);
                    }
                    c => out.push(c),
                }
            }
            out.push('\'');
            out
        }
    }
}

impl Renderer {
    fn dynamic(&mut self) {
        self.is_static = false;
    }

    fn dead(&mut self) {
        self.all_run = false;
    }

    fn word(&mut self, word: &Word) -> String {
        let mut out = String::new();
        let n = word.0.len();
        for (i, part) in word.0.iter().enumerate() {
            out.push_str(&self.part(part, i == 0, i + 1 == n));
        }
        if out.is_empty() { "''".to_owned() } else { out }
    }

    fn part(&mut self, part: &Part, first: bool, last: bool) -> String {
        match part {
            Part::Lit(text, quote) => lit(text, *quote),
            Part::Var { name, op, quoted } => {
                if self.in_child || !self.assigned.contains(name) {
                    self.dynamic();
                }
                let value = self.values.get(name).copied();
                let data = value.map_or(self.pattern_data, has_pattern);
                if !*quoted && data && !matches!(op, Op::Length) {
                    // The expansion is globbed: the file system decides.
                    self.dynamic();
                }
                let body = format!("${{{}{name}{}}}", op_prefix(op), op_suffix(op));
                if *quoted { format!("\"{body}\"") } else { body }
            }
            Part::Indirect { quoted } => {
                // `${!P}` with `P` naming `A`.
                if self.in_child {
                    // The child does not inherit the unexported `P`: with
                    // no `P` in the agent's environment, `${!P}` is an
                    // invalid indirect expansion, fatal to a
                    // non-interactive shell, so nothing after it runs.
                    self.dynamic();
                    self.dead();
                } else if !self.assigned.contains("A") {
                    self.dynamic();
                }
                if !*quoted && self.values.get("A").is_some_and(|v| has_pattern(v)) {
                    self.dynamic();
                }
                self.needs.insert("P=A".to_owned());
                let body = "${!P}".to_owned();
                if *quoted { format!("\"{body}\"") } else { body }
            }
            Part::Tilde(t) => {
                if !first {
                    // Not at the start of a word: bash keeps it literal.
                    return "\\~".to_owned();
                }
                // A tilde-prefix runs to the first `/`: end it with one unless
                // the word ends here, so the next part is not a user name.
                let slash = if last { "" } else { "/" };
                match t {
                    Tilde::Home => format!("~{slash}"),
                    Tilde::HomeSlash => "~/".to_owned(),
                    Tilde::Pwd => format!("~+{slash}"),
                    Tilde::OldPwd => {
                        self.dynamic();
                        format!("~-{slash}")
                    }
                    Tilde::User => {
                        self.dynamic();
                        format!("~dev{slash}")
                    }
                }
            }
            Part::Brace(alts) => format!("{{{}}}", alts.join(",")),
            Part::Seq(s) => (*s).to_owned(),
            Part::Glob(g) => {
                self.dynamic();
                (*g).to_owned()
            }
            Part::Arith(a) => (*a).to_owned(),
            Part::Subst { cmd, quoted } => {
                self.dynamic();
                let inner = self.leaf(cmd);
                if *quoted {
                    format!("\"$({inner})\"")
                } else {
                    format!("$({inner})")
                }
            }
            Part::Positional(p) => {
                if !self.positional_known
                    || (!p.starts_with('"') && p != &"$#" && self.pattern_data)
                {
                    self.dynamic();
                }
                (*p).to_owned()
            }
        }
    }

    fn leaf(&mut self, leaf: &Leaf) -> String {
        if self.after_cd {
            self.dynamic();
        }
        let mut words = Vec::new();
        if let Some((name, value)) = &leaf.prefix {
            words.push(format!("{name}={}", self.word(value)));
        }
        let mut exec_by_program = false;
        let mut moved = false;
        for wrapper in &leaf.wrappers {
            if let Wrapper::Env(opts) = wrapper {
                // `--chdir=src` is looked up from where this `env` runs:
                // after an earlier `env -C DIR` that is not the project,
                // and `src` may not exist there (the file system decides).
                if (moved || self.cwd_moved) && opts.contains(&"--chdir=src") {
                    self.dynamic();
                    self.dead();
                }
                moved |= opts
                    .iter()
                    .any(|o| o.starts_with("-C") || o.starts_with("--chdir"));
            }
            if matches!(wrapper, Wrapper::Command(_)) && exec_by_program {
                // `env command …`, `nohup command …`: the program named
                // `command` runs only where the file system has one
                // (macOS does; Debian does not).
                self.dynamic();
                self.dead();
            }
            exec_by_program |= !matches!(wrapper, Wrapper::Command(_));
            words.push(wrapper_text(wrapper).to_owned());
        }
        words.push(self.name(&leaf.name));
        for arg in &leaf.args {
            words.push(self.word(arg));
        }
        let mut out = Vec::new();
        for (i, w) in words.iter().enumerate() {
            for (pos, r) in &leaf.redirects {
                // Never before a prefix assignment's own position 0 when the
                // redirect would turn `X=1` into a command (it cannot).
                if *pos == i {
                    out.push((*r).to_owned());
                }
            }
            out.push(w.clone());
        }
        for (pos, r) in &leaf.redirects {
            if *pos >= words.len() {
                out.push((*r).to_owned());
            }
        }
        out.join(" ")
    }

    fn name(&mut self, name: &Name) -> String {
        match name {
            Name::Plain(n) => (*n).to_owned(),
            Name::Absolute(n) => format!("/usr/bin/{n}"),
            Name::Escaped(n) => format!("\\{n}"),
            Name::Quoted(n) => {
                let (a, b) = n.split_at(1);
                format!("\"{a}\"'{b}'")
            }
            Name::AnsiC(n) => lit(n, Quote::AnsiC),
            Name::Variable(n) => {
                if self.in_child {
                    // Not exported: a child shell would read the agent's
                    // environment instead. Keep the case about one thing.
                    return (*n).to_owned();
                }
                self.needs.insert(format!("CMD_{n}={n}"));
                format!("${{CMD_{n}}}")
            }
        }
    }

    fn stmt(&mut self, stmt: &Stmt) -> String {
        if self.after_cd {
            // An earlier `cd D && …` in this shell may have failed (whether
            // `D` exists is the file system's business): the directory
            // this runs in is runtime data.
            self.dynamic();
        }
        match stmt {
            Stmt::Pipe(..) | Stmt::Background(_) | Stmt::Subshell(_) => {
                // Subshells: a `cd` inside does not reach what follows.
                let saved = (self.after_cd, self.cwd_moved);
                let text = self.stmt_inner(stmt);
                (self.after_cd, self.cwd_moved) = saved;
                text
            }
            _ => self.stmt_inner(stmt),
        }
    }

    fn stmt_inner(&mut self, stmt: &Stmt) -> String {
        match stmt {
            Stmt::Leaf(l) => self.leaf(l),
            Stmt::And(a, b) => {
                if may_fail(a) {
                    self.dead();
                }
                format!("{} && {}", self.operand(a), self.operand(b))
            }
            Stmt::Or {
                left_fails,
                left,
                right,
            } => {
                if *left_fails {
                    format!("false || {}", self.operand(right))
                } else {
                    let l = self.operand(left);
                    self.dead();
                    format!("{l} || {}", self.operand(right))
                }
            }
            Stmt::Seq(a, b) => format!("{}; {}", self.operand(a), self.operand(b)),
            Stmt::Pipe(a, b) => format!("{} | {}", self.operand(a), self.operand(b)),
            Stmt::Background(a) => format!("{} & wait", self.operand(a)),
            Stmt::Not(a) => format!("! {}", self.operand(a)),
            Stmt::Group(a) => format!("{{ {}; }}", self.stmt(a)),
            Stmt::Subshell(a) => format!("( {} )", self.stmt(a)),
            other => self.compound(other),
        }
    }

    /// A list inside a list is grouped, so bash parses the text the way the
    /// case was built (`a | ! b` is not bash; `x && a; b` would regroup).
    fn operand(&mut self, stmt: &Stmt) -> String {
        let text = self.stmt(stmt);
        match stmt {
            Stmt::And(..)
            | Stmt::Or { .. }
            | Stmt::Seq(..)
            | Stmt::Pipe(..)
            | Stmt::Background(_)
            | Stmt::Not(_)
            | Stmt::Cd { .. }
            | Stmt::Read { .. }
            | Stmt::SetArgs { .. }
            | Stmt::Function { .. }
            | Stmt::Xargs { .. } => format!("{{ {text}; }}"),
            Stmt::Leaf(_)
            | Stmt::Group(_)
            | Stmt::Subshell(_)
            | Stmt::If { .. }
            | Stmt::For { .. }
            | Stmt::WhileRead { .. }
            | Stmt::Case { .. }
            | Stmt::Shell { .. }
            | Stmt::FindExec { .. }
            | Stmt::Heredoc { .. }
            | Stmt::PrintfPipe { .. } => text,
            Stmt::ExecRedirect { .. } => format!("{{ {text}; }}"),
        }
    }

    /// Compound commands: `if`, `for`, `while read`, `case`.
    fn compound(&mut self, stmt: &Stmt) -> String {
        match stmt {
            Stmt::If { cond, then, other } => {
                let c = if *cond { "true" } else { "false" };
                let t = {
                    let before = self.all_run;
                    let t = self.stmt(then);
                    if !*cond {
                        self.all_run = false;
                    } else {
                        self.all_run &= before;
                    }
                    t
                };
                match other {
                    Some(o) => {
                        let e = self.stmt(o);
                        if *cond {
                            self.dead();
                        }
                        format!("if {c}; then {t}; else {e}; fi")
                    }
                    None => format!("if {c}; then {t}; fi"),
                }
            }
            Stmt::For { items, body } => {
                // An item may expand to no word at all, and then the body
                // never runs.
                if items
                    .iter()
                    .any(|w| !w.0.iter().all(|p| matches!(p, Part::Lit(..))))
                {
                    self.dead();
                }
                let items: Vec<String> = items.iter().map(|w| self.word(w)).collect();
                let was = self.assigned.insert("V");
                let b = self.leaf(body);
                if was {
                    self.assigned.remove("V");
                }
                format!("for V in {}; do {b}; done", items.join(" "))
            }
            Stmt::WhileRead { lines, body } => {
                let was = self.assigned.insert("V");
                let b = self.leaf(body);
                if was {
                    self.assigned.remove("V");
                }
                let input = lit(&lines.join("\n"), Quote::AnsiC);
                format!("while read -r V; do {b}; done <<< {input}")
            }
            Stmt::Case { subject, hit, miss } => {
                let h = self.stmt(hit);
                let m = self.stmt(miss);
                self.dead();
                format!("case {subject} in {subject}) {h};; *) {m};; esac")
            }
            other => self.runner(other),
        }
    }

    /// Functions, shells, reads, `set --`, `cd`, `xargs`, `find`, here-documents.
    fn runner(&mut self, stmt: &Stmt) -> String {
        match stmt {
            Stmt::Leaf(_)
            | Stmt::And(..)
            | Stmt::Or { .. }
            | Stmt::Seq(..)
            | Stmt::Pipe(..)
            | Stmt::Background(_)
            | Stmt::Not(_)
            | Stmt::Group(_)
            | Stmt::Subshell(_)
            | Stmt::If { .. }
            | Stmt::For { .. }
            | Stmt::WhileRead { .. }
            | Stmt::Case { .. } => unreachable!("routed by `stmt` and `compound`"),
            Stmt::Function {
                name,
                keyword,
                body,
                calls,
            } => {
                let saved = self.positional_known;
                self.positional_known = true;
                let b = self.stmt(body);
                self.positional_known = saved;
                let def = if *keyword {
                    format!("function {name} {{ {b}; }}")
                } else {
                    format!("{name}() {{ {b}; }}")
                };
                let mut out = def;
                for call in calls {
                    let args: Vec<String> = call.iter().map(|w| self.word(w)).collect();
                    out.push_str("; ");
                    out.push_str(name);
                    for a in args {
                        out.push(' ');
                        out.push_str(&a);
                    }
                }
                out
            }
            Stmt::Shell { form, script, args } => self.shell(*form, script, args),
            Stmt::Read { form, input, then } => self.read(*form, input, then),
            Stmt::SetArgs { args, shift, then } => {
                let a: Vec<String> = args.iter().map(|w| self.word(w)).collect();
                let saved = self.positional_known;
                self.positional_known = true;
                let t = self.leaf(then);
                self.positional_known = saved;
                let shift = if *shift { "; shift" } else { "" };
                format!("set -- {}{shift}; {t}", a.join(" "))
            }
            other => self.tools(other),
        }
    }

    /// `cd`, `xargs`, `find -exec`, here-documents.
    fn cd(&mut self, dir: &str, form: CdForm, then: &Stmt) -> String {
        let d = if dir.starts_with('~') {
            dir.to_owned()
        } else {
            lit(dir, Quote::Bare)
        };
        if !dir.starts_with(['/', '~']) && dir != ".." {
            // A relative directory exists only where it is looked up
            // from: after an earlier `cd` the `cd` may fail and what
            // follows it not run.
            self.dead();
        }
        // `then` runs where the `cd` went, and only when it succeeded: a
        // list is grouped, or `cd D && set -- x; y` would run `y` whether
        // or not the `cd` failed.
        let moved = self.cwd_moved;
        self.cwd_moved = true;
        match form {
            CdForm::And | CdForm::Pushd => {
                let text = if matches!(form, CdForm::Pushd) {
                    format!("pushd {d} >/dev/null && {}", self.operand(then))
                } else {
                    format!("cd {d} && {}", self.operand(then))
                };
                // What follows the list runs where the `cd` left it.
                self.after_cd = true;
                text
            }
            CdForm::Semicolon => {
                // Whether `cd` succeeded is the filesystem's business.
                self.dynamic();
                format!("cd {d}; {}", self.stmt(then))
            }
            CdForm::Subshell => {
                let inside = self.operand(then);
                self.cwd_moved = moved;
                let t = self.stmt(then);
                format!("(cd {d} && {inside}); {t}")
            }
        }
    }

    fn tools(&mut self, stmt: &Stmt) -> String {
        match stmt {
            Stmt::Leaf(_)
            | Stmt::And(..)
            | Stmt::Or { .. }
            | Stmt::Seq(..)
            | Stmt::Pipe(..)
            | Stmt::Background(_)
            | Stmt::Not(_)
            | Stmt::Group(_)
            | Stmt::Subshell(_)
            | Stmt::If { .. }
            | Stmt::For { .. }
            | Stmt::WhileRead { .. }
            | Stmt::Case { .. }
            | Stmt::Function { .. }
            | Stmt::Shell { .. }
            | Stmt::Read { .. }
            | Stmt::SetArgs { .. } => unreachable!("routed by `stmt`, `compound` and `runner`"),
            Stmt::Cd { dir, form, then } => self.cd(dir, *form, then),
            Stmt::Xargs { input, opts, leaf } => {
                let l = self.leaf(leaf);
                let opts = if opts.is_empty() {
                    String::new()
                } else {
                    format!("{opts} ")
                };
                format!(
                    "printf '%s\\n' {} | xargs {opts}{l}",
                    lit(input, Quote::Single)
                )
            }
            Stmt::FindExec { start, leaf, plus } => {
                // The paths find produces, and whether it runs the command
                // at all, depend on the filesystem.
                self.dynamic();
                self.dead();
                let l = self.leaf(leaf);
                let end = if *plus { "+" } else { "\\;" };
                format!("find {start} -maxdepth 1 -name '*.txt' -exec {l} {{}} {end}")
            }
            Stmt::Heredoc { leaf, quoted, body } => {
                let l = self.leaf(leaf);
                let lines: Vec<String> = body
                    .iter()
                    .map(|w| if *quoted { plain_text(w) } else { self.word(w) })
                    .collect();
                let delim = if *quoted { "'EOF'" } else { "EOF" };
                format!("{l} <<{delim}\n{}\nEOF", lines.join("\n"))
            }
            Stmt::PrintfPipe {
                format,
                name,
                words,
            } => {
                let args: Vec<String> = words.iter().map(|w| lit(w, Quote::Single)).collect();
                format!("printf '{format}' {name} {} | bash", args.join(" "))
            }
            Stmt::ExecRedirect { redirect, then } => {
                format!("exec {redirect}; {}", self.leaf(then))
            }
        }
    }

    fn shell(&mut self, form: ShellForm, script: &Stmt, args: &[Word]) -> String {
        let child = !matches!(
            form,
            ShellForm::Eval | ShellForm::Source | ShellForm::Coproc
        );
        if matches!(form, ShellForm::ShC | ShellForm::StdinProcSubst) {
            // Which shell `sh` is depends on the machine (dash rejects
            // bash-only expansions, so even whether commands run does).
            self.dynamic();
            self.dead();
        }
        if matches!(form, ShellForm::ProcessSubst) {
            // `bash <(…)` runs `bash /dev/fd/N`: N is the descriptor bash
            // picks, which depends on what it inherited (runtime data).
            self.dynamic();
        }
        let (saved_pos, saved_child) = (self.positional_known, self.in_child);
        let saved_cd = (self.after_cd, self.cwd_moved);
        if child {
            // A child shell's positional parameters are exactly its
            // arguments (none, for the forms that pass none).
            self.positional_known = true;
            self.in_child = true;
        }
        let inner = self.stmt(script);
        self.positional_known = saved_pos;
        self.in_child = saved_child;
        if child {
            (self.after_cd, self.cwd_moved) = saved_cd;
        }
        let args = match form {
            ShellForm::BashC | ShellForm::ShC | ShellForm::BashCDashDash => args,
            _ => &[],
        };
        let a: Vec<String> = args.iter().map(|w| self.word(w)).collect();
        let tail = if a.is_empty() {
            String::new()
        } else {
            format!(" _ {}", a.join(" "))
        };
        let q = lit(&inner, Quote::Single);
        match form {
            ShellForm::BashC => format!("bash -c {q}{tail}"),
            ShellForm::ShC => format!("sh -c {q}{tail}"),
            ShellForm::BashCDashDash => format!("bash -c -- {q}{tail}"),
            ShellForm::Eval => format!("eval {q}"),
            ShellForm::EchoPipe => format!("echo {q} | bash"),
            ShellForm::HereString => format!("bash <<< {q}"),
            ShellForm::BashS => format!("bash -s <<< {q}"),
            ShellForm::Heredoc => format!("bash <<'EOF'\n{inner}\nEOF"),
            ShellForm::ProcessSubst => format!("bash <(echo {q})"),
            ShellForm::Source => format!("source <(printf '%s\\n' {q})"),
            ShellForm::DashStdin => format!("echo {q} | bash -"),
            ShellForm::DevStdin => format!("bash /dev/stdin <<< {q}"),
            ShellForm::StdinProcSubst => format!("sh < <(echo {q})"),
            ShellForm::XargsScript => format!("printf '%s\\0' {q} | xargs -0 -I{{}} bash -c {{}}"),
            ShellForm::XargsArgs => format!("printf '%s\\n' a 'b c' | xargs bash -c {q} _"),
            ShellForm::Coproc => format!("coproc {{ {inner}; }}; wait"),
        }
    }

    fn read(&mut self, form: ReadForm, input: &str, then: &Leaf) -> String {
        let sets_s = !matches!(form, ReadForm::HereString | ReadForm::Heredoc);
        let was_r = self.assigned.insert("R");
        let was_s = sets_s && self.assigned.insert("S");
        let t = self.leaf(then);
        if was_r {
            self.assigned.remove("R");
        }
        if was_s {
            self.assigned.remove("S");
        }
        let q = lit(input, Quote::Single);
        match form {
            ReadForm::HereString => format!("read -r R <<< {q}; {t}"),
            ReadForm::TwoVars => format!("read -r R S <<< {q}; {t}"),
            ReadForm::IfsComma => format!("IFS=, read -r R S <<< {q}; {t}"),
            ReadForm::PrintfV => format!("printf -v R '%s-%s' {q} y; printf -v S %s {q}; {t}"),
            ReadForm::Mapfile => format!("mapfile -t R <<< {q}; S=${{R[0]}}; {t}"),
            ReadForm::Heredoc => format!("read -r R <<'EOF'\n{input}\nEOF\n{t}"),
            ReadForm::PipeGroup => format!("echo {q} | {{ read -r R S; {t}; }}"),
            ReadForm::Array => format!("R=({q} x); S=${{R[1]}}; {t} \"${{R[@]}}\""),
        }
    }
}

/// True when `stmt` may end with a failure status, so an `&&` after it may
/// not run. Recorders and `true` succeed; `!` of a success fails.
fn may_fail(stmt: &Stmt) -> bool {
    match stmt {
        Stmt::Leaf(_)
        | Stmt::Background(_)
        | Stmt::Read { .. }
        | Stmt::SetArgs { .. }
        | Stmt::Xargs { .. }
        | Stmt::FindExec { .. }
        | Stmt::Heredoc { .. }
        | Stmt::PrintfPipe { .. }
        | Stmt::ExecRedirect { .. }
        | Stmt::For { .. }
        | Stmt::WhileRead { .. } => false,
        Stmt::Not(_) => true,
        Stmt::And(a, b) => may_fail(a) || may_fail(b),
        Stmt::Or {
            left_fails: true,
            right,
            ..
        } => may_fail(right),
        Stmt::Or {
            left_fails: false,
            left,
            right,
        } => may_fail(left) && may_fail(right),
        Stmt::Seq(_, b) | Stmt::Pipe(_, b) => may_fail(b),
        Stmt::Group(a) | Stmt::Subshell(a) => may_fail(a),
        Stmt::If {
            cond: true, then, ..
        } => may_fail(then),
        Stmt::If {
            cond: false, other, ..
        } => other.as_deref().is_some_and(may_fail),
        Stmt::Case { hit, .. } => may_fail(hit),
        Stmt::Function { body, .. } => may_fail(body),
        Stmt::Shell { script, .. } => may_fail(script),
        Stmt::Cd { then, .. } => may_fail(then),
    }
}

/// Text of a word with no expansion, for a quoted here-document body.
fn plain_text(word: &Word) -> String {
    word.0
        .iter()
        .map(|p| match p {
            Part::Lit(t, _) => (*t).to_owned(),
            _ => "$x".to_owned(),
        })
        .collect()
}

fn op_prefix(op: &Op) -> &'static str {
    match op {
        Op::Length => "#",
        _ => "",
    }
}

fn op_suffix(op: &Op) -> String {
    match op {
        Op::Plain | Op::Length => String::new(),
        Op::Default(w) => format!(":-{w}"),
        Op::DefaultUnset(w) => format!("-{w}"),
        Op::Assign(w) => format!(":={w}"),
        Op::Alternative(w) => format!(":+{w}"),
        Op::RemovePrefix(p) => format!("#{p}"),
        Op::RemovePrefixLong(p) => format!("##{p}"),
        Op::RemoveSuffix(p) => format!("%{p}"),
        Op::RemoveSuffixLong(p) => format!("%%{p}"),
        Op::Replace(p, r) => format!("/{p}/{}", escape_rep(r)),
        Op::ReplaceAll(p, r) => format!("//{p}/{}", escape_rep(r)),
        Op::ReplacePrefix(p, r) => format!("/#{p}/{}", escape_rep(r)),
        Op::ReplaceSuffix(p, r) => format!("/%{p}/{}", escape_rep(r)),
        Op::Substring(o, Some(l)) => format!(":{}:{l}", offset(*o)),
        Op::Substring(o, None) => format!(":{}", offset(*o)),
        Op::UpperFirst => "^".to_owned(),
        Op::UpperAll => "^^".to_owned(),
        Op::LowerFirst => ",".to_owned(),
        Op::LowerAll => ",,".to_owned(),
        Op::Quoted => "@Q".to_owned(),
        Op::Upper => "@U".to_owned(),
        Op::Lower => "@L".to_owned(),
    }
}

fn escape_rep(r: &str) -> String {
    r.replace(' ', "\\ ").replace('/', "\\/")
}

fn offset(o: i8) -> String {
    // A negative offset needs a space so it is not `:-`.
    if o < 0 {
        format!(" {o}")
    } else {
        o.to_string()
    }
}

fn wrapper_text(w: &Wrapper) -> String {
    match w {
        Wrapper::Env(opts) => {
            let mut s = String::from("env");
            for o in opts {
                s.push(' ');
                s.push_str(o);
            }
            s
        }
        Wrapper::Nice(o) => format!("nice {o}").trim_end().to_owned(),
        Wrapper::Nohup => "nohup".to_owned(),
        Wrapper::Timeout(o) => format!("timeout {o}"),
        Wrapper::Stdbuf => "stdbuf -o0".to_owned(),
        Wrapper::Setsid => "setsid -w".to_owned(),
        Wrapper::Command(p) => if *p { "command -p" } else { "command" }.to_owned(),
        Wrapper::Sudo(o) => format!("sudo {o}").trim_end().to_owned(),
    }
}

// ---------------------------------------------------------------- strategies

fn quote() -> impl Strategy<Value = Quote> {
    prop_oneof![
        Just(Quote::Bare),
        Just(Quote::Single),
        Just(Quote::Double),
        Just(Quote::AnsiC)
    ]
}

fn op() -> impl Strategy<Value = Op> {
    let w = || select(&["d", "/", "~", "a b", ""][..]);
    let p = || select(PATTERNS);
    prop_oneof![
        4 => Just(Op::Plain),
        1 => w().prop_map(Op::Default),
        1 => w().prop_map(Op::DefaultUnset),
        1 => w().prop_map(Op::Assign),
        1 => w().prop_map(Op::Alternative),
        1 => p().prop_map(Op::RemovePrefix),
        1 => p().prop_map(Op::RemovePrefixLong),
        1 => p().prop_map(Op::RemoveSuffix),
        1 => p().prop_map(Op::RemoveSuffixLong),
        1 => (select(REPLACE_PATTERNS), select(REPLACEMENTS)).prop_map(|(a, b)| Op::Replace(a, b)),
        1 => (select(REPLACE_PATTERNS), select(REPLACEMENTS)).prop_map(|(a, b)| Op::ReplaceAll(a, b)),
        1 => (select(REPLACE_PATTERNS), select(REPLACEMENTS)).prop_map(|(a, b)| Op::ReplacePrefix(a, b)),
        1 => (select(REPLACE_PATTERNS), select(REPLACEMENTS)).prop_map(|(a, b)| Op::ReplaceSuffix(a, b)),
        1 => (-3i8..4, proptest::option::of(0u8..4)).prop_map(|(o, l)| Op::Substring(o, l)),
        1 => Just(Op::UpperFirst),
        1 => Just(Op::UpperAll),
        1 => Just(Op::LowerFirst),
        1 => Just(Op::LowerAll),
        1 => Just(Op::Length),
        1 => Just(Op::Quoted),
        1 => Just(Op::Upper),
        1 => Just(Op::Lower),
    ]
}

fn tilde() -> impl Strategy<Value = Tilde> {
    prop_oneof![
        6 => Just(Tilde::Home),
        6 => Just(Tilde::HomeSlash),
        3 => Just(Tilde::Pwd),
        1 => Just(Tilde::OldPwd),
        1 => Just(Tilde::User),
    ]
}

/// A simple leaf for inside a substitution (no nesting).
fn inner_leaf() -> impl Strategy<Value = Leaf> {
    (
        select(COMMANDS),
        proptest::collection::vec((select(TEXTS), quote()), 0..2),
    )
        .prop_map(|(name, args)| Leaf {
            prefix: None,
            wrappers: Vec::new(),
            name: Name::Plain(name),
            args: args
                .into_iter()
                .map(|(t, q)| Word(vec![Part::Lit(t, q)]))
                .collect(),
            redirects: Vec::new(),
        })
}

fn part(positional: bool) -> BoxedStrategy<Part> {
    let base = prop_oneof![
        8 => (select(TEXTS), quote()).prop_map(|(t, q)| Part::Lit(t, q)),
        4 => (select(VARS), op(), any::<bool>()).prop_map(|(name, op, quoted)| Part::Var { name, op, quoted }),
        1 => any::<bool>().prop_map(|quoted| Part::Indirect { quoted }),
        2 => tilde().prop_map(Part::Tilde),
        2 => proptest::collection::vec(select(BRACE_ALTS), 2..4).prop_map(Part::Brace),
        1 => select(&["{1..3}", "{a..c}", "{3..1}", "{1..10..4}", "{x,y}{1,2}"][..]).prop_map(Part::Seq),
        1 => select(ARITH).prop_map(Part::Arith),
        // Runtime-dependent parts stay rarer, so most cases are static.
        1 => (select(GLOBS), proptest::bool::weighted(0.3)).prop_map(|(g, keep)| if keep { Part::Glob(g) } else { Part::Lit(g, Quote::Single) }),
        1 => (inner_leaf(), any::<bool>(), proptest::bool::weighted(0.3)).prop_map(|(cmd, quoted, keep)| if keep {
            Part::Subst { cmd: Box::new(cmd), quoted }
        } else {
            Part::Arith("$((3%2))")
        }),
    ];
    if positional {
        prop_oneof![
            4 => base,
            1 => select(&["$1", "\"$1\"", "\"$@\"", "$@", "$*", "\"$*\"", "$#", "${1:-d}", "\"${2}\"", "${@:2}"][..])
                .prop_map(Part::Positional),
        ]
        .boxed()
    } else {
        base.boxed()
    }
}

fn word(positional: bool) -> impl Strategy<Value = Word> {
    proptest::collection::vec(part(positional), 1..3).prop_map(Word)
}

fn name() -> impl Strategy<Value = Name> {
    let c = || select(COMMANDS);
    prop_oneof![
        8 => c().prop_map(Name::Plain),
        1 => c().prop_map(Name::Absolute),
        1 => c().prop_map(Name::Escaped),
        1 => c().prop_map(Name::Quoted),
        1 => c().prop_map(Name::AnsiC),
        1 => c().prop_map(Name::Variable),
    ]
}

fn wrapper() -> impl Strategy<Value = Wrapper> {
    prop_oneof![
        2 => (
            proptest::collection::vec(select(&["-i", "-u X", "-C /tmp", "--chdir=src", "-C ~/.ssh", "--unset=Y"][..]), 0..3),
            any::<bool>(),
            proptest::collection::vec(select(&["X=1", "PATH=/bin", "Y='a b'"][..]), 0..2),
        )
            .prop_map(|(mut opts, dashdash, assigns)| {
                // env reads options, then `--`, then assignments.
                if dashdash {
                    opts.push("--");
                }
                opts.extend(assigns);
                Wrapper::Env(opts)
            }),
        1 => select(&["", "-n 5", "--adjustment=3", "-n1"][..]).prop_map(Wrapper::Nice),
        1 => Just(Wrapper::Nohup),
        1 => select(&["5", "-k 1 5", "-s KILL 5", "--signal=TERM 5", "--kill-after 1 5"][..]).prop_map(Wrapper::Timeout),
        1 => Just(Wrapper::Stdbuf),
        1 => Just(Wrapper::Setsid),
        1 => any::<bool>().prop_map(Wrapper::Command),
        1 => select(&["", "-u root", "-E", "--", "-u root -g root --"][..]).prop_map(Wrapper::Sudo),
    ]
}

fn leaf(positional: bool) -> impl Strategy<Value = Leaf> {
    (
        proptest::option::weighted(0.1, (select(&["X", "LC_ALL"][..]), word(positional))),
        proptest::collection::vec(wrapper(), 0..3),
        name(),
        proptest::collection::vec(word(positional), 0..4),
        proptest::collection::vec((0usize..6, select(REDIRECTS)), 0..3),
    )
        .prop_map(|(prefix, mut wrappers, name, args, redirects)| {
            // `command` is a builtin: behind a wrapper that executes a
            // program it would be looked up as one (absent on Debian,
            // a script on macOS), so it only ever comes first.
            if let Some(at) = wrappers
                .iter()
                .position(|w| matches!(w, Wrapper::Command(_)))
            {
                let w = wrappers.remove(at);
                wrappers.retain(|w| !matches!(w, Wrapper::Command(_)));
                wrappers.insert(0, w);
            }
            Leaf {
                prefix,
                wrappers,
                name,
                args,
                redirects,
            }
        })
}

fn stmt(positional: bool) -> impl Strategy<Value = Stmt> {
    let leaf_stmt = leaf(positional).prop_map(Stmt::Leaf);
    leaf_stmt.prop_recursive(3, 12, 3, move |inner| {
        let w = move || word(positional);
        prop_oneof![
            2 => (inner.clone(), inner.clone()).prop_map(|(a, b)| Stmt::And(Box::new(a), Box::new(b))),
            1 => (any::<bool>(), inner.clone(), inner.clone()).prop_map(|(left_fails, left, right)| Stmt::Or {
                left_fails,
                left: Box::new(left),
                right: Box::new(right),
            }),
            2 => (inner.clone(), inner.clone()).prop_map(|(a, b)| Stmt::Seq(Box::new(a), Box::new(b))),
            2 => (inner.clone(), inner.clone()).prop_map(|(a, b)| Stmt::Pipe(Box::new(a), Box::new(b))),
            1 => inner.clone().prop_map(|a| Stmt::Background(Box::new(a))),
            1 => inner.clone().prop_map(|a| Stmt::Not(Box::new(a))),
            1 => inner.clone().prop_map(|a| Stmt::Group(Box::new(a))),
            1 => inner.clone().prop_map(|a| Stmt::Subshell(Box::new(a))),
            1 => (any::<bool>(), inner.clone(), proptest::option::of(inner.clone())).prop_map(|(cond, t, o)| Stmt::If {
                cond,
                then: Box::new(t),
                other: o.map(Box::new),
            }),
            1 => (proptest::collection::vec(w(), 1..3), leaf_using(&["V"])).prop_map(|(items, body)| Stmt::For { items, body }),
            1 => (proptest::collection::vec(select(&["a", "b c", "/tmp/x", ""][..]), 1..3), leaf_using(&["V"]))
                .prop_map(|(lines, body)| Stmt::WhileRead { lines, body }),
            1 => (select(&["x", "y"][..]), inner.clone(), inner.clone()).prop_map(|(subject, hit, miss)| Stmt::Case {
                subject,
                hit: Box::new(hit),
                miss: Box::new(miss),
            }),
            2 => (select(&["f", "g"][..]), any::<bool>(), stmt_positional_leafy(), proptest::collection::vec(proptest::collection::vec(word(false), 0..3), 1..3))
                .prop_map(|(name, keyword, body, calls)| Stmt::Function { name, keyword, body: Box::new(body), calls }),
            2 => (shell_form(), inner.clone(), proptest::collection::vec(word(false), 0..3))
                .prop_map(|(form, script, args)| Stmt::Shell { form, script: Box::new(script), args }),
            2 => (read_form(), select(&["/tmp/x", "a b c", "x,/", "-rf /tmp/y", "~/q"][..]), leaf_using(&["R", "S"]))
                .prop_map(|(form, input, then)| Stmt::Read { form, input, then }),
            1 => (proptest::collection::vec(w(), 0..3), any::<bool>(), leaf(true))
                .prop_map(|(args, shift, then)| Stmt::SetArgs { args, shift, then }),
            2 => (select(DIRS), cd_form(), inner.clone()).prop_map(|(dir, form, then)| Stmt::Cd { dir, form, then: Box::new(then) }),
            1 => (select(&["a b", "/tmp/x\n~", "x"][..]), select(&["", "-n 1", "-I{}", "-0", "--max-args 1"][..]), inner_leaf())
                .prop_map(|(input, opts, leaf)| Stmt::Xargs { input, opts, leaf }),
            1 => (select(&[".", "src", "/tmp"][..]), wrapped_inner_leaf(), any::<bool>())
                .prop_map(|(start, leaf, plus)| Stmt::FindExec { start, leaf, plus }),
            1 => printf_pipe(),
            1 => (select(&["3>/tmp/exec.out", "</dev/null", "2>/tmp/exec.err", ">/tmp/exec.all"][..]), leaf(positional))
                .prop_map(|(redirect, then)| Stmt::ExecRedirect { redirect, then }),
        ]
    })
}

/// An inner leaf behind an optional wrapper that really runs it.
fn wrapped_inner_leaf() -> impl Strategy<Value = Leaf> {
    (
        inner_leaf(),
        proptest::option::of(select(
            &["env", "nice", "env X=1", "timeout 5", "nohup"][..],
        )),
    )
        .prop_map(|(mut leaf, wrapper)| {
            if let Some(w) = wrapper {
                leaf.args
                    .insert(0, Word(vec![Part::Lit(leaf_name(&leaf.name), Quote::Bare)]));
                let mut parts = w.split(' ');
                let first = parts.next().unwrap_or("env");
                leaf.name = Name::Plain(first);
                for (k, extra) in parts.enumerate() {
                    leaf.args
                        .insert(k, Word(vec![Part::Lit(extra, Quote::Bare)]));
                }
            }
            leaf
        })
}

fn leaf_name(name: &Name) -> &'static str {
    match name {
        Name::Plain(n)
        | Name::Absolute(n)
        | Name::Escaped(n)
        | Name::Quoted(n)
        | Name::AnsiC(n)
        | Name::Variable(n) => n,
    }
}

/// `printf` with a format that is applied to its words before bash reads
/// the result: `'%s %s\n'`, or one with literal text around the `%s`.
fn printf_pipe() -> impl Strategy<Value = Stmt> {
    (
        select(COMMANDS),
        proptest::collection::vec(
            select(&["-rf", "/tmp/x", "a b", "x;ls", "-n", "1", "'q'"][..]),
            1..3,
        ),
        any::<bool>(),
    )
        .prop_map(|(name, words, literal)| {
            let format = match (words.len(), literal) {
                (1, false) => "%s %s\\n",
                (1, true) => "%s -v %s\\n",
                (_, false) => "%s %s %s\\n",
                (_, true) => "%s %s -- %s\\n",
            };
            Stmt::PrintfPipe {
                format,
                name,
                words,
            }
        })
}

/// A function body: leaves that use positional parameters.
fn stmt_positional_leafy() -> impl Strategy<Value = Stmt> {
    prop_oneof![
        3 => leaf(true).prop_map(Stmt::Leaf),
        1 => (leaf(true), leaf(true)).prop_map(|(a, b)| Stmt::Seq(Box::new(Stmt::Leaf(a)), Box::new(Stmt::Leaf(b)))),
        1 => (select(DIRS), leaf(true)).prop_map(|(dir, l)| Stmt::Cd { dir, form: CdForm::And, then: Box::new(Stmt::Leaf(l)) }),
    ]
}

/// A leaf whose words use the variables a loop or read form sets.
fn leaf_using(vars: &'static [&'static str]) -> impl Strategy<Value = Leaf> {
    (
        name(),
        proptest::collection::vec(
            prop_oneof![
                (select(vars), any::<bool>()).prop_map(|(v, quoted)| Word(vec![Part::Var {
                    name: v,
                    op: Op::Plain,
                    quoted
                }])),
                (select(TEXTS), quote()).prop_map(|(t, q)| Word(vec![Part::Lit(t, q)])),
            ],
            1..3,
        ),
    )
        .prop_map(|(name, args)| Leaf {
            prefix: None,
            wrappers: Vec::new(),
            name: match name {
                Name::Variable(n) => Name::Plain(n),
                other => other,
            },
            args,
            redirects: Vec::new(),
        })
}

fn shell_form() -> impl Strategy<Value = ShellForm> {
    prop_oneof![
        3 => Just(ShellForm::BashC),
        1 => Just(ShellForm::ShC),
        1 => Just(ShellForm::BashCDashDash),
        2 => Just(ShellForm::Eval),
        1 => Just(ShellForm::EchoPipe),
        1 => Just(ShellForm::HereString),
        1 => Just(ShellForm::BashS),
        1 => Just(ShellForm::ProcessSubst),
        1 => Just(ShellForm::Source),
        1 => Just(ShellForm::DashStdin),
        1 => Just(ShellForm::DevStdin),
        1 => Just(ShellForm::StdinProcSubst),
        1 => Just(ShellForm::XargsScript),
        1 => Just(ShellForm::XargsArgs),
        1 => Just(ShellForm::Coproc),
    ]
}

fn read_form() -> impl Strategy<Value = ReadForm> {
    prop_oneof![
        Just(ReadForm::HereString),
        Just(ReadForm::TwoVars),
        Just(ReadForm::IfsComma),
        Just(ReadForm::PrintfV),
        Just(ReadForm::Mapfile),
        Just(ReadForm::PipeGroup),
        Just(ReadForm::Array),
    ]
}

fn cd_form() -> impl Strategy<Value = CdForm> {
    prop_oneof![
        3 => Just(CdForm::And),
        1 => Just(CdForm::Semicolon),
        1 => Just(CdForm::Subshell),
        1 => Just(CdForm::Pushd),
    ]
}

/// Statements that end in a here-document, which must end their line:
/// generated only at the top level.
fn heredoc_stmt() -> impl Strategy<Value = Stmt> {
    prop_oneof![
        (
            leaf(false),
            any::<bool>(),
            proptest::collection::vec(word(false), 1..3)
        )
            .prop_map(|(leaf, quoted, body)| Stmt::Heredoc { leaf, quoted, body }),
        stmt(false).prop_map(|script| Stmt::Shell {
            form: ShellForm::Heredoc,
            script: Box::new(script),
            args: Vec::new()
        }),
        (
            select(&["/tmp/x", "a b c", "~/q"][..]),
            leaf_using(&["R", "S"])
        )
            .prop_map(|(input, then)| Stmt::Read {
                form: ReadForm::Heredoc,
                input,
                then
            }),
    ]
}

/// A whole case.
pub fn case() -> impl Strategy<Value = Case> {
    (
        proptest::collection::vec(
            (proptest::bool::weighted(0.85), select(VALUES), quote()),
            VARS.len(),
        )
        .prop_map(|picks| {
            // Each variable is usually assigned: an unassigned one reads the
            // agent's environment, and most cases should be static.
            picks
                .into_iter()
                .zip(VARS)
                .filter(|((keep, _, _), _)| *keep)
                .map(|((_, value, quote), name)| (*name, value, quote))
                .collect::<Vec<_>>()
        }),
        proptest::option::weighted(0.2, select(&[",", ":", " ", ""][..])),
        proptest::collection::vec(prop_oneof![6 => stmt(false), 1 => heredoc_stmt()], 1..3),
        prop_oneof![
            4 => Just(Vec::new()),
            1 => proptest::collection::vec(any::<u16>(), 1..4),
        ],
        proptest::bool::weighted(0.1),
    )
        .prop_map(|(assigns, ifs, stmts, continuations, encoded)| Case {
            assigns,
            ifs,
            stmts,
            continuations,
            encoded,
        })
}
