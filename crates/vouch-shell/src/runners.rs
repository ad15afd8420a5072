//! Programs that run other commands: wrappers (`sudo`, `env`, `nice`,
//! `timeout`, …), shells (`bash -c`, a shell reading a piped or
//! here-document script, `bash <(…)`), `xargs`, `find -exec`, `su`,
//! `flock`, `watch`, `parallel`.
//!
//! Each is read through its entry in the command-spec table ([`spec`]) with
//! the getopt_long parser, so options with separate values, prefixes and
//! `--` are understood the way the program understands them. The command
//! it runs is recorded with the wrapper as its parent, in the working
//! directory and environment the wrapper gives it.

use std::rc::Rc;

use super::command::Redirect;
use super::interp::{Flow, Interp};
use super::options::{Item, OptValue, OptWord, Parsed};
use super::spec::{self, CommandSpec, Modifier, Operands};
use super::state::{Binding, State, Var};
use super::value::{Arg, Seg, Sources, Text, Value};

/// An argv entry as an option-parser word.
pub(crate) struct W<'a>(pub(crate) &'a Arg);

impl OptWord for W<'_> {
    fn known(&self) -> Option<&str> {
        self.0.as_known()
    }

    fn known_prefix(&self) -> &str {
        match self.0 {
            Arg::Field(v) => match v.candidates() {
                [only] => only.known_prefix(),
                _ => "",
            },
            Arg::Unknown(_) => "",
        }
    }

    fn operand_like(&self) -> bool {
        let Arg::Field(v) = self.0 else { return false };
        // Some candidate is surely an operand: known text not starting
        // with `-`, or a pattern (which bash expands to names).
        v.candidates().iter().any(|t| {
            let head = t.known_prefix();
            match t.as_known() {
                Some(k) => !k.starts_with('-') || k == "-",
                None => !head.starts_with('-') && (t.is_pattern() || !head.is_empty()),
            }
        })
    }
}

/// Parses `args` by a spec.
pub(crate) fn parse_args(spec: &CommandSpec, args: &[Arg]) -> Parsed {
    let words: Vec<W<'_>> = args.iter().map(W).collect();
    Parsed::new(&spec.options, &words)
}

/// `args` with every long option written as an unambiguous prefix spelt
/// out in full (`--app` → `--append`, `--gro=sudo` → `--groups=sudo`), as
/// getopt_long reads it; `None` when no word changes. Code that reads
/// particular words (a subcommand's flags, `-G sudo`) reads these, so a
/// prefix never hides an option the spec table knows.
pub fn canonical_args(spec: &CommandSpec, args: &[Arg], parsed: &Parsed) -> Option<Vec<Arg>> {
    let mut out: Option<Vec<Arg>> = None;
    for item in &parsed.items {
        let Item::Opt {
            name: super::options::OptName::Long(full),
            at,
            ..
        } = item
        else {
            continue;
        };
        let Some(text) = args.get(*at).and_then(Arg::as_known) else {
            continue;
        };
        let Some(body) = text.strip_prefix("--") else {
            continue;
        };
        let (written, value) = match body.split_once('=') {
            Some((n, v)) => (n, Some(v)),
            None => (body, None),
        };
        if written == *full || !spec.options.prefixes {
            continue;
        }
        let spelt = match value {
            Some(v) => format!("--{full}={v}"),
            None => format!("--{full}"),
        };
        let words = out.get_or_insert_with(|| args.to_vec());
        if let Some(slot) = words.get_mut(*at) {
            *slot = Arg::known(&spelt);
        }
    }
    out
}

/// The value of an option, as a value (an attached value is the rest of
/// its word).
pub(crate) fn option_value(args: &[Arg], value: OptValue) -> Value {
    match value {
        OptValue::Next { at } => match args.get(at) {
            Some(Arg::Field(v)) => v.clone(),
            Some(Arg::Unknown(from)) => Value::text(Text::any(from.clone())),
            None => Value::unknown(),
        },
        OptValue::Attached { at, offset } => match args.get(at) {
            Some(Arg::Field(v)) => drop_prefix(v, offset),
            Some(Arg::Unknown(from)) => Value::text(Text::any(from.clone())),
            None => Value::unknown(),
        },
    }
}

/// Each candidate without its first `bytes` bytes of known text.
pub(crate) fn drop_prefix(v: &Value, bytes: usize) -> Value {
    let candidates = v
        .candidates()
        .iter()
        .map(|t| {
            let mut out = Text::default();
            let mut skip = bytes;
            for seg in &t.segs {
                match seg {
                    Seg::Lit(s) if skip > 0 => {
                        let cut = skip.min(s.len());
                        skip -= cut;
                        out.push_str(s.get(cut..).unwrap_or(""));
                    }
                    other if skip > 0 => {
                        skip = 0;
                        out.push(other.clone());
                    }
                    other => out.push(other.clone()),
                }
            }
            out
        })
        .collect();
    Value::from_candidates(candidates).unwrap_or_else(|| Value::known(""))
}

/// `NAME=value` as an assignment.
fn split_assignment(arg: &Arg) -> Option<(String, Value)> {
    let Arg::Field(v) = arg else { return None };
    let [only] = v.candidates() else { return None };
    let head = only.known_prefix();
    let (name, _) = head.split_once('=')?;
    // `BASH_FUNC_name%%=() { …; }`: not a shell variable, but what a
    // child bash imports as function `name`.
    let exported_function =
        name.starts_with("BASH_FUNC_") && (name.ends_with("%%") || name.ends_with("()"));
    let valid = exported_function
        || (!name.is_empty()
            && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
            && !name.starts_with(|c: char| c.is_ascii_digit()));
    if !valid {
        return None;
    }
    Some((name.to_owned(), drop_prefix(v, name.len() + 1)))
}

/// `{}` in find's `-exec`: the starting point or a path below it — and,
/// since find visits every entry, each name in the starting point (`root/*`
/// as a pattern, so `find ~/.ssh -exec cat {} \;` reads what `cat
/// ~/.ssh/*` reads).
fn found_paths(roots: &[Value]) -> Value {
    let mut candidates = Vec::new();
    for root in roots {
        for r in root.candidates() {
            candidates.push(r.clone());
            let mut below = r.clone();
            if !r.known_suffix().ends_with('/') {
                below.push_str("/");
            }
            let mut each = below.clone();
            each.push(Seg::Star);
            candidates.push(each);
            below.push(Seg::Any(Sources::none()));
            candidates.push(below);
        }
    }
    Value::from_candidates(candidates).unwrap_or_else(Value::unknown)
}

/// The starting points of a `find` command line.
fn find_roots(args: &[Arg]) -> (Vec<Value>, usize) {
    let mut k = 0;
    while let Some(t) = args.get(k).and_then(Arg::as_known) {
        match t {
            "-H" | "-L" | "-P" => k += 1,
            "-D" => k += 2,
            _ if t.starts_with("-O") => k += 1,
            "--" => {
                k += 1;
                break;
            }
            _ => break,
        }
    }
    let mut roots = Vec::new();
    while let Some(a) = args.get(k) {
        let expression = a.as_known().is_some_and(|t| {
            (t.starts_with('-') && t.len() > 1) || matches!(t, "(" | ")" | "!" | ",")
        });
        if expression {
            break;
        }
        match a {
            Arg::Field(v) => roots.push(v.clone()),
            Arg::Unknown(from) => roots.push(Value::text(Text::any(from.clone()))),
        }
        k += 1;
    }
    if roots.is_empty() {
        roots.push(Value::known("."));
    }
    (roots, k)
}

/// What `find ARGS` prints, item by item.
pub(crate) fn find_items(args: &[Arg], _state: &State) -> Value {
    let (roots, _) = find_roots(args);
    found_paths(&roots)
}

/// Splits known `xargs` input into items.
fn xargs_items(text: &str, nul: bool, delim: Option<char>, lines: bool) -> Vec<String> {
    if nul {
        return text
            .split('\0')
            .filter(|s| !s.is_empty())
            .map(str::to_owned)
            .collect();
    }
    if let Some(d) = delim {
        let mut items: Vec<String> = text.split(d).map(str::to_owned).collect();
        if items.last().is_some_and(String::is_empty) {
            items.pop();
        }
        return items;
    }
    if lines {
        return text
            .lines()
            .map(|l| l.trim().to_owned())
            .filter(|l| !l.is_empty())
            .collect();
    }
    // Blank-separated, with quotes and backslashes (xargs's own rules).
    let mut items = Vec::new();
    let mut current = String::new();
    let mut started = false;
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        match c {
            ' ' | '\t' | '\n' => {
                if started {
                    items.push(std::mem::take(&mut current));
                    started = false;
                }
            }
            '\'' | '"' => {
                started = true;
                for q in chars.by_ref() {
                    if q == c {
                        break;
                    }
                    current.push(q);
                }
            }
            '\\' => {
                started = true;
                if let Some(n) = chars.next() {
                    current.push(n);
                }
            }
            other => {
                started = true;
                current.push(other);
            }
        }
    }
    if started {
        items.push(current);
    }
    items
}

impl Interp {
    /// After a program was recorded: what it runs.
    pub(crate) fn run_external(
        &mut self,
        index: Option<usize>,
        argv: &[Arg],
        assigns: &[(String, Value)],
        state: State,
    ) -> Flow {
        let Some(name) = argv
            .first()
            .and_then(Arg::as_known)
            .map(|n| n.rsplit('/').next().unwrap_or(n).to_owned())
        else {
            return Flow::either(state);
        };
        let args = argv.get(1..).unwrap_or(&[]);
        // `sleep N` with durations it accepts succeeds (`while sleep 0`
        // loops for ever) unless the user's shell snapshot defines a
        // function of that name: sure but for the snapshot, as `true`, so
        // a loop around it never ends and `sleep 1 || rm -rf ~` is judged.
        if name == "sleep" && !args.is_empty() && args.iter().all(is_duration) {
            self.snapshot_statuses += 1;
        }
        let mut state = state;
        self.record_writes(&name, args, &mut state);
        self.embedded_scripts(index, &name, args, assigns, &state);
        self.interpreter_code(index, &name, args, assigns, &state);
        if name == "curl" {
            self.curl_configs(index, args, &state);
        }
        if spec::WGET.contains(&name.as_str()) {
            self.wget_configs(index, args, assigns, &state);
        }
        if spec::PACKAGE_RUNNERS.contains(&name.as_str())
            || spec::PACKAGE_MANAGERS.contains(&name.as_str())
        {
            self.package_runner(index, &name, args, &state);
            return Flow::either(state);
        }
        let Some(spec) = spec::lookup(&name) else {
            self.unknown_program(index, &name, args, assigns, &state);
            return Flow::either(state);
        };
        match spec.operands {
            Operands::Command { skip } => {
                let parsed = parse_args(spec, args);
                if parsed.has_modifier(spec, Modifier::NoRun) {
                    return Flow::either(state);
                }
                let mut start = parsed.first_operand_or_unknown().unwrap_or(args.len());
                if name == "nice" || name == "renice" {
                    // `nice -5 cmd`: an old-style adjustment.
                    while args.get(start).and_then(Arg::as_known).is_some_and(|t| {
                        t.strip_prefix('-')
                            .is_some_and(|n| n.parse::<i64>().is_ok())
                    }) {
                        start += 1;
                    }
                }
                let inner: Vec<Arg> = args.iter().skip(start + skip).cloned().collect();
                self.spawn(index, inner, assigns.to_vec(), None, state.clone());
                Flow::either(state)
            }
            Operands::Shell => {
                let refuses = name == "bash" && bash_refuses_long_option(args);
                self.shell(index, spec, args, assigns, &state, refuses);
                Flow::either(state)
            }
            Operands::Script => {
                let s = state.clone();
                let scripts = self.args_script(args);
                self.run_scripts(scripts, s, index, true);
                Flow::either(state)
            }
            Operands::Special => {
                self.run_special(index, &name, spec, args, assigns, &state);
                Flow::either(state)
            }
            Operands::Ignore
            | Operands::All(_)
            | Operands::After(..)
            | Operands::Copy { .. }
            | Operands::Positional(_)
            | Operands::ProgramFirst { .. }
            | Operands::Format => Flow::either(state),
        }
    }

    /// What a program with its own way of naming the command it runs
    /// (`sudo`, `env`, `xargs`, `su`, `flock`, `watch`, `find`, `parallel`)
    /// runs.
    fn run_special(
        &mut self,
        index: Option<usize>,
        name: &str,
        spec: &CommandSpec,
        args: &[Arg],
        assigns: &[(String, Value)],
        state: &State,
    ) {
        match name {
            "sudo" => self.sudo(index, spec, args, assigns, state),
            "env" => self.env(index, spec, args, assigns, state),
            "xargs" => self.xargs(index, spec, args, assigns, state),
            "su" | "runuser" => self.su(index, spec, args, assigns, state),
            "flock" => self.flock(index, spec, args, assigns, state),
            "watch" => self.watch(index, spec, args, state),
            "find" => self.find_exec(index, args, state),
            "parallel" => self.parallel(index, args, state),
            _ => {}
        }
    }

    /// Records the command a wrapper runs, with the wrapper's redirections,
    /// and what that command runs in turn — one nesting level deeper
    /// ([`Interp::nested`]): `nice nice … rm` recurses through here once
    /// per wrapper, so past `max_syntax_depth` the rest is unknown.
    pub(crate) fn spawn(
        &mut self,
        parent: Option<usize>,
        argv: Vec<Arg>,
        assigns: Vec<(String, Value)>,
        cwd: Option<Value>,
        state: State,
    ) {
        if argv.is_empty() || !self.charge_copy(&argv) {
            return;
        }
        self.nested(|this| this.spawn_here(parent, argv, assigns, cwd, state));
    }

    /// [`Interp::spawn`] one level down.
    fn spawn_here(
        &mut self,
        parent: Option<usize>,
        argv: Vec<Arg>,
        assigns: Vec<(String, Value)>,
        cwd: Option<Value>,
        state: State,
    ) {
        let mut state = state;
        if let Some(cwd) = cwd {
            // `env -C src`: relative to where the wrapper runs.
            let mut candidates = Vec::new();
            for dir in cwd.candidates() {
                match (dir.as_known(), state.cwd.candidates()) {
                    (Some(d), _) if d.starts_with('/') => {
                        candidates.push(Text::lit(&super::path::normalize(d)))
                    }
                    (Some(d), bases) => {
                        for b in bases {
                            match b.as_known() {
                                Some(base) => {
                                    candidates.push(Text::lit(&super::path::join(base, d)))
                                }
                                None => candidates.push(Text::any(Sources::none())),
                            }
                        }
                    }
                    (None, _) => candidates.push(dir.clone()),
                }
            }
            state.oldpwd = Some(state.cwd.clone());
            state.cwd = Value::from_candidates(candidates).unwrap_or(cwd);
        }
        let redirects: Vec<Redirect> = parent
            .and_then(|p| self.commands.get(p))
            .map(|c| c.redirects.clone())
            .unwrap_or_default();
        let candidates = match argv.first() {
            Some(Arg::Field(v)) if v.candidates().len() > 1 => v.candidates().to_vec(),
            _ => Vec::new(),
        };
        if !candidates.is_empty() {
            for c in candidates {
                let mut one = argv.clone();
                if let Some(first) = one.first_mut() {
                    *first = Arg::Field(Value::text(c));
                }
                self.spawn(parent, one, assigns.clone(), None, state.clone());
            }
            return;
        }
        let known_name = argv.first().and_then(Arg::as_known).is_some();
        let kind = if known_name {
            super::command::CommandKind::External
        } else {
            super::command::CommandKind::Unresolved
        };
        let printed = self.printed_by(&argv, &state);
        let mut cmd = self.command(&state, argv.clone(), kind, assigns.clone(), &[]);
        cmd.redirects = redirects;
        cmd.parent = parent;
        let saved = self.ctx;
        self.ctx.parent = parent;
        let index = self.emit(cmd, printed);
        self.ctx = saved;
        if known_name {
            let mut child = state;
            for (name, value) in &assigns {
                child.assign_value(name, value, &self.known);
            }
            self.run_external(index, &argv, &assigns, child);
        } else {
            self.unknown_name(index, &argv, &assigns, &state);
        }
        // The wrapper prints what its command prints — read only after that
        // command ran its own wrapped command, so `sudo sudo echo …` carries
        // echo's text out through both wrappers.
        // A conservative reading says what may run, not what is printed:
        // its output is not the wrapper's.
        let reading = index
            .and_then(|i| self.commands.get(i))
            .is_some_and(|c| c.conservative)
            && !parent
                .and_then(|p| self.commands.get(p))
                .is_some_and(|c| c.conservative);
        if !reading
            && let (Some(p), Some(i)) = (parent, index)
            && let Some(inner) = self.printed.get(i).cloned()
            && let Some(outer) = self.printed.get_mut(p)
        {
            outer.text = inner.text;
            outer.items = inner.items;
            outer.from.extend(&inner.from);
        }
    }

    /// The state of a new shell started from `state`: exported variables
    /// and functions, the given assignments, `$0` and positional values.
    fn child_shell(&self, state: &State, assigns: &[(String, Value)], clear: bool) -> State {
        let mut child = State::new(state.cwd.clone());
        child.oldpwd = state.oldpwd.clone();
        child.stdin = state.stdin.clone();
        // The file system is the same one: what the command wrote (a
        // script, a copy of a program) is there for the child too.
        child.files = Rc::clone(&state.files);
        child.programs = Rc::clone(&state.programs);
        if clear {
            child.env_cleared = true;
        } else {
            let (vars, functions) = state.exported();
            child.vars = Rc::new(vars);
            child.functions = Rc::new(functions);
        }
        for (name, value) in assigns {
            child.set(
                name,
                Var {
                    vals: value
                        .candidates()
                        .iter()
                        .cloned()
                        .map(Binding::Str)
                        .collect(),
                    exported: true,
                },
            );
        }
        child
    }

    fn shell(
        &mut self,
        index: Option<usize>,
        spec: &CommandSpec,
        args: &[Arg],
        assigns: &[(String, Value)],
        state: &State,
        refuses_options: bool,
    ) {
        let parsed = parse_args(spec, args);
        // `refuses_options`: bash stops at a long option it does not have
        // (`bash --noexec -c …` prints its usage, exit 2) before it reads
        // any script.
        let noexec = refuses_options || reads_without_running(&parsed, args);
        let operands = parsed.operands();
        let value_at = |k: usize| -> Option<Value> {
            operands.get(k).and_then(|&at| match args.get(at) {
                Some(Arg::Field(v)) => Some(v.clone()),
                Some(Arg::Unknown(from)) => Some(Value::text(Text::any(from.clone()))),
                None => None,
            })
        };
        let mut child = self.child_shell(state, assigns, false);
        let rest = |from: usize| -> Vec<Value> {
            operands
                .iter()
                .skip(from)
                .filter_map(|&at| match args.get(at) {
                    Some(Arg::Field(v)) => Some(v.clone()),
                    _ => None,
                })
                .collect()
        };
        let script = if parsed.has(&["c"]) {
            if let Some(arg0) = value_at(1) {
                child.arg0 = arg0;
            }
            child.positional = Some(Rc::new(rest(2)));
            let script = value_at(0);
            // The script can read its own text (and run it again).
            if let Some(text) = &script {
                child.assign_value("BASH_EXECUTION_STRING", text, &self.known);
            }
            script
        } else if !operands.is_empty() && !parsed.has(&["s"]) {
            let file = operands.first().and_then(|&at| args.get(at)).cloned();
            child.positional = Some(Rc::new(rest(1)));
            // `$0` is the script file's name (`bash $0` runs it again).
            // `$BASH_SOURCE` too (`bash "$BASH_SOURCE" &`).
            if let Some(Arg::Field(name)) = &file {
                child.arg0 = name.clone();
                child.assign_value("BASH_SOURCE", name, &self.known);
            }
            file.and_then(|f| self.script_file_text(&f, state))
        } else {
            child.positional = Some(Rc::new(rest(0)));
            let text = state.stdin.text.clone();
            child.stdin = super::state::Input::default();
            text
        };
        // Startup files run first, in the same shell (a function they define
        // replaces what the script calls): `--rcfile`/`--init-file` for an
        // interactive shell, `$BASH_ENV` for a script, `$ENV` for `sh -i`.
        let startup = self.startup_text(&parsed, args, &child, state);
        // Functions the environment exports (`BASH_FUNC_ls%%=() { …; }`)
        // are defined before anything else runs.
        let imported = super::evaluated::imported_functions(assigns).map(|t| Value::known(&t));
        let startup = match (imported, startup) {
            (Some(i), Some(s)) => super::interp::concat_values(&i, &s, &mut self.meter),
            (i, s) => i.or(s),
        };
        let words: Vec<Option<&str>> = args.iter().map(Arg::as_known).collect();
        let option = |name: &str| {
            words
                .windows(2)
                .any(|w| matches!(w, [Some("-o"), Some(n)] if *n == name))
        };
        // `-n`/`-o noexec`: the script is read, never run (its startup
        // file is still judged: read conservatively).
        let script = if noexec { None } else { script };
        self.shell_prompts(
            parsed.has(&["x", "xtrace"]) || option("xtrace"),
            parsed.has(&["i"]),
            &child,
            index,
        );
        let script = match (startup, script) {
            (None, script) => script,
            (Some(first), Some(script)) => {
                super::interp::concat_values(&first, &Value::known("\n"), &mut self.meter)
                    .and_then(|f| super::interp::concat_values(&f, &script, &mut self.meter))
            }
            (Some(first), None) => Some(first),
        };
        if let Some(script) = script {
            let scripts = self.value_scripts(&script);
            self.run_scripts(scripts, child, index, true);
        }
    }

    /// The text of the startup file a shell reads before its commands, when
    /// it is statically known (a process substitution, a file written
    /// earlier in the command).
    fn startup_text(
        &self,
        parsed: &Parsed,
        args: &[Arg],
        child: &State,
        state: &State,
    ) -> Option<Value> {
        let interactive = parsed.has(&["i"]);
        let file = if interactive {
            parsed
                .values(&["rcfile", "init-file"])
                .last()
                .map(|v| option_value(args, *v))
                .or_else(|| known_var(child, "ENV", &self.known))
        } else {
            known_var(child, "BASH_ENV", &self.known)
        }?;
        self.file_text(&Arg::Field(file), state)
    }

    /// `sudo -i`, `sudo -s`, `su`, `su -` without a command: the shell
    /// reads its commands from standard input.
    fn stdin_shell(&mut self, index: Option<usize>, assigns: &[(String, Value)], state: &State) {
        let Some(text) = state.stdin.text.clone() else {
            return;
        };
        let mut child = self.child_shell(state, assigns, false);
        child.stdin = super::state::Input::default();
        let scripts = self.value_scripts(&text);
        self.run_scripts(scripts, child, index, true);
    }

    fn sudo(
        &mut self,
        index: Option<usize>,
        spec: &CommandSpec,
        args: &[Arg],
        assigns: &[(String, Value)],
        state: &State,
    ) {
        let parsed = parse_args(spec, args);
        if parsed.has_modifier(spec, Modifier::NoRun) {
            return;
        }
        let Some(start) = parsed.first_operand_or_unknown() else {
            if parsed.has(&["i", "login", "s", "shell"]) {
                self.stdin_shell(index, assigns, state);
            }
            return;
        };
        let mut inner: Vec<Arg> = args.iter().skip(start).cloned().collect();
        let mut env: Vec<(String, Value)> = assigns.to_vec();
        while let Some((name, value)) = inner.first().and_then(split_assignment) {
            env.push((name, value));
            inner.remove(0);
        }
        if parsed.has(&["e", "edit"]) {
            inner.insert(0, Arg::known("sudoedit"));
        } else if parsed.has_modifier(spec, Modifier::ViaShell) && !inner.is_empty() {
            let joined = self.args_script(&inner);
            let script: Vec<Text> = joined.into_iter().map(|(t, _)| Text::lit(&t)).collect();
            inner = vec![
                Arg::known("/bin/bash"),
                Arg::known("-c"),
                Arg::Field(Value::from_candidates(script).unwrap_or_else(Value::unknown)),
            ];
        }
        let cwd = parsed
            .values(&["D", "chdir"])
            .last()
            .map(|v| option_value(args, *v));
        self.spawn(index, inner, env, cwd, state.clone());
    }

    fn env(
        &mut self,
        index: Option<usize>,
        spec: &CommandSpec,
        args: &[Arg],
        assigns: &[(String, Value)],
        state: &State,
    ) {
        let parsed = parse_args(spec, args);
        let clear = parsed.has_modifier(spec, Modifier::EmptyEnvironment)
            || parsed.items.iter().any(|i| matches!(i, Item::Operand { at } if args.get(*at).and_then(Arg::as_known) == Some("-")));
        let cwd = parsed
            .values(&["C", "chdir"])
            .last()
            .map(|v| option_value(args, *v));
        let mut start = parsed.first_operand_or_unknown().unwrap_or(args.len());
        if args.get(start).and_then(Arg::as_known) == Some("-") {
            start += 1;
        }
        let mut inner: Vec<Arg> = args.iter().skip(start).cloned().collect();
        let mut env: Vec<(String, Value)> = assigns.to_vec();
        while let Some((name, value)) = inner.first().and_then(split_assignment) {
            env.push((name, value));
            inner.remove(0);
        }
        let mut child_state = if clear {
            self.child_shell(state, &env, true)
        } else {
            state.clone()
        };
        for name in parsed.values(&["u", "unset"]) {
            if let Some(n) = option_value(args, name).as_known() {
                child_state.unset(n);
            }
        }
        if let Some(split) = parsed.values(&["S", "split-string"]).last() {
            // `env -S 'cmd args'`: the string is split into words.
            let text = option_value(args, *split);
            let mut s = child_state.clone();
            if let Some(c) = &cwd {
                s.cwd = c.clone();
            }
            let mut scripts = self.value_scripts(&text);
            let tail = self.args_script(&inner);
            // No tail only when its copies ran out of budget (recorded):
            // the string without its words is not what runs.
            let Some((t, _)) = tail.first() else {
                return;
            };
            for sc in &mut scripts {
                sc.0.push(' ');
                sc.0.push_str(t);
            }
            let saved = self.ctx;
            self.ctx.parent = index;
            self.run_scripts(scripts, s, index, true);
            self.ctx = saved;
            return;
        }
        self.spawn(index, inner, env, cwd, child_state);
    }

    fn xargs(
        &mut self,
        index: Option<usize>,
        spec: &CommandSpec,
        args: &[Arg],
        assigns: &[(String, Value)],
        state: &State,
    ) {
        let parsed = parse_args(spec, args);
        let start = parsed.first_operand_or_unknown().unwrap_or(args.len());
        let mut template: Vec<Arg> = args.iter().skip(start).cloned().collect();
        if template.is_empty() {
            template.push(Arg::known("echo"));
        }
        let XargsOptions {
            replace,
            max_args,
            max_lines,
            nul,
            delim,
            from_file,
        } = XargsOptions::of(&parsed, args);
        let text = if from_file {
            // `xargs -a FILE`: the items come from the file.
            parsed
                .values(&["a", "arg-file"])
                .last()
                .map(|v| option_value(args, *v))
                .and_then(|f| self.file_text(&Arg::Field(f), state))
                .and_then(|t| t.as_known().map(str::to_owned))
        } else {
            state
                .stdin
                .text
                .as_ref()
                .and_then(Value::as_known)
                .map(str::to_owned)
        };
        let Some(text) = text else {
            // Unknown input: items nobody knows (or of a known shape).
            let item = match (&state.stdin.items, from_file) {
                (Some(items), false) => Arg::Field(items.clone()),
                _ => Arg::Field(Value::text(Text::any(state.stdin.from.clone()))),
            };
            let argv = match &replace {
                Some(r) => substitute_args(&template, r, &item),
                None => {
                    let mut a = template.clone();
                    a.push(item);
                    a.push(Arg::Unknown(state.stdin.from.clone()));
                    a
                }
            };
            self.spawn(index, argv, assigns.to_vec(), None, state.clone());
            return;
        };
        let lines = replace.is_some() || max_lines.is_some();
        let items = self
            .meter
            .cap_fields(xargs_items(&text, nul, delim, lines), "`xargs` receives");
        let chunk = if replace.is_some() {
            1
        } else {
            max_args.or(max_lines).unwrap_or(usize::MAX)
        };
        let chunks = xargs_chunks(items, chunk, parsed.has(&["r", "no-run-if-empty"]));
        for chunk in chunks {
            // A step per command line: once refused (and recorded), the rest
            // is unknown.
            if !self.meter.step() {
                break;
            }
            let argv = match &replace {
                Some(r) => {
                    let item = Arg::known(chunk.first().map_or("", String::as_str));
                    substitute_args(&template, r, &item)
                }
                None => {
                    let mut a = template.clone();
                    a.extend(chunk.iter().map(|s| Arg::known(s)));
                    a
                }
            };
            let mut s = state.clone();
            s.stdin = super::state::Input::default();
            self.spawn(index, argv, assigns.to_vec(), None, s);
        }
    }

    fn su(
        &mut self,
        index: Option<usize>,
        spec: &CommandSpec,
        args: &[Arg],
        assigns: &[(String, Value)],
        state: &State,
    ) {
        let parsed = parse_args(spec, args);
        let scripts: Vec<Value> = parsed
            .values(&["c", "command", "session-command"])
            .into_iter()
            .map(|v| option_value(args, v))
            .collect();
        let child = self.child_shell(state, assigns, false);
        if !scripts.is_empty() {
            for script in scripts {
                let c = child.clone();
                let texts = self.value_scripts(&script);
                self.run_scripts(texts, c, index, true);
            }
            return;
        }
        if parsed.has(&["u", "user"]) {
            // `runuser -u USER CMD ARGS`
            let inner: Vec<Arg> = parsed
                .operands()
                .into_iter()
                .filter_map(|at| args.get(at).cloned())
                .collect();
            self.spawn(index, inner, assigns.to_vec(), None, state.clone());
            return;
        }
        // `su`, `su - root`: the user's shell reads standard input.
        self.stdin_shell(index, assigns, state);
    }

    fn flock(
        &mut self,
        index: Option<usize>,
        spec: &CommandSpec,
        args: &[Arg],
        assigns: &[(String, Value)],
        state: &State,
    ) {
        let parsed = parse_args(spec, args);
        let child = self.child_shell(state, assigns, false);
        if let Some(v) = parsed.values(&["c", "command"]).last() {
            let script = option_value(args, *v);
            let texts = self.value_scripts(&script);
            self.run_scripts(texts, child, index, true);
            return;
        }
        let Some(lock) = parsed.first_operand_or_unknown() else {
            return;
        };
        let rest: Vec<Arg> = args.iter().skip(lock + 1).cloned().collect();
        if rest.first().and_then(Arg::as_known) == Some("-c") {
            if let Some(Arg::Field(script)) = rest.get(1) {
                let texts = self.value_scripts(script);
                self.run_scripts(texts, child, index, true);
            }
            return;
        }
        self.spawn(index, rest, assigns.to_vec(), None, state.clone());
    }

    fn watch(&mut self, index: Option<usize>, spec: &CommandSpec, args: &[Arg], state: &State) {
        let parsed = parse_args(spec, args);
        let Some(start) = parsed.first_operand_or_unknown() else {
            return;
        };
        let rest: Vec<Arg> = args.iter().skip(start).cloned().collect();
        if parsed.has(&["x", "exec"]) {
            self.spawn(index, rest, Vec::new(), None, state.clone());
            return;
        }
        let s = self.child_shell(state, &[], false);
        let scripts = self.args_script(&rest);
        self.run_scripts(scripts, s, index, true);
    }

    /// `npx`/`pnpx`/`bunx`, and `npm exec`/`npm x`, `pnpm exec`/`dlx`,
    /// `yarn exec`/`dlx`, `bun x`/`exec`: the program named after the
    /// options runs (a package's bin of that name, or the one on `PATH`:
    /// `npx sh -c …` runs `sh`), and `-c`/`--call` strings run in a shell.
    /// Which package a name fetches is the registry's, so a package's own
    /// behaviour stays the model's; the bins vouch knows (`shx`, `rimraf`)
    /// are read by their specs.
    fn package_runner(&mut self, index: Option<usize>, name: &str, args: &[Arg], state: &State) {
        let (args, shell_mode) = if spec::PACKAGE_RUNNERS.contains(&name) {
            (args, false)
        } else {
            match package_manager_exec(args) {
                Some(found) => found,
                None => return,
            }
        };
        let words: Vec<W<'_>> = args.iter().map(W).collect();
        let parsed = Parsed::new(&spec::PACKAGE_RUNNER_OPTIONS, &words);
        let child = self.child_shell(state, &[], false);
        for v in parsed.values(&["c", "call"]) {
            let script = option_value(args, v);
            let scripts = self.value_scripts(&script);
            self.run_scripts(scripts, child.clone(), index, true);
        }
        let Some(start) = parsed.first_operand_or_unknown() else {
            return;
        };
        let rest: Vec<Arg> = args.iter().skip(start).cloned().collect();
        if shell_mode || parsed.has(&["shell-mode"]) {
            let scripts = self.args_script(&rest);
            self.run_scripts(scripts, child, index, true);
        } else {
            self.spawn(index, rest, Vec::new(), None, state.clone());
        }
    }

    /// `curl -K FILE` reads more options from FILE (`-` is standard input):
    /// when its text is known (a here-string, a pipe of `echo`, a process
    /// substitution printing known text) those options are recorded as a
    /// `curl` the first one runs, so `-k` or `upload-file = ~/.ssh/id_rsa`
    /// in a config is judged like the same option on the command line.
    /// Nested `-K` options in the config are not followed.
    fn curl_configs(&mut self, index: Option<usize>, args: &[Arg], state: &State) {
        let Some(spec) = spec::lookup("curl") else {
            return;
        };
        let parsed = parse_args(spec, args);
        for v in parsed.values(&["K", "config"]) {
            let source = match v {
                OptValue::Next { at } => args.get(at).cloned(),
                OptValue::Attached { .. } => Some(Arg::Field(option_value(args, v))),
            };
            let Some(text) = source.and_then(|a| self.file_text(&a, state)) else {
                continue;
            };
            for candidate in text.candidates() {
                let Some(config) = candidate.as_known() else {
                    continue;
                };
                let mut argv = vec![Arg::known("curl")];
                argv.extend(curl_config_words(config).iter().map(|w| Arg::known(w)));
                if argv.len() > 1 {
                    self.spawn(index, argv, Vec::new(), None, state.clone());
                }
            }
        }
    }

    /// wget's startup file, named by `--config FILE` or `WGETRC=FILE`, when
    /// its text is known (a process substitution, a file written earlier):
    /// each setting line is what `-e LINE` would say, recorded as a `wget
    /// -e …` the first one runs, so `check_certificate = off` there is
    /// judged like the option.
    fn wget_configs(
        &mut self,
        index: Option<usize>,
        args: &[Arg],
        assigns: &[(String, Value)],
        state: &State,
    ) {
        let mut files: Vec<Arg> = Vec::new();
        for (k, a) in args.iter().enumerate() {
            let Arg::Field(v) = a else { continue };
            if v.as_known() == Some("--config") {
                files.extend(args.get(k + 1).cloned());
            } else if v
                .candidates()
                .iter()
                .any(|t| t.known_prefix().starts_with("--config="))
            {
                files.push(Arg::Field(drop_prefix(v, "--config=".len())));
            }
        }
        files.extend(
            assigns
                .iter()
                .filter(|(n, _)| n == "WGETRC")
                .map(|(_, v)| Arg::Field(v.clone())),
        );
        for file in files {
            let Some(text) = self.file_text(&file, state) else {
                continue;
            };
            for candidate in text.candidates() {
                let Some(config) = candidate.as_known() else {
                    continue;
                };
                let mut argv = vec![Arg::known("wget")];
                for line in config.lines().map(str::trim) {
                    if !line.is_empty() && !line.starts_with('#') {
                        argv.push(Arg::known("-e"));
                        argv.push(Arg::known(line));
                    }
                }
                if argv.len() > 1 {
                    self.spawn(index, argv, Vec::new(), None, state.clone());
                }
            }
        }
    }

    /// `find … -exec CMD {} ;` runs CMD with `{}` the starting point or a
    /// path below it.
    fn find_exec(&mut self, index: Option<usize>, args: &[Arg], state: &State) {
        let (roots, start) = find_roots(args);
        let found = found_paths(&roots);
        let mut k = start;
        while let Some(a) = args.get(k) {
            k += 1;
            let dir = match a.as_known() {
                Some("-exec" | "-ok") => false,
                Some("-execdir" | "-okdir") => true,
                _ => continue,
            };
            let mut argv = Vec::new();
            let mut batch = false;
            while let Some(next) = args.get(k) {
                k += 1;
                match next.as_known() {
                    Some(";") => break,
                    Some("+") if argv.last().and_then(Arg::as_known) == Some("{}") => {
                        batch = true;
                        break;
                    }
                    _ => argv.push(next.clone()),
                }
            }
            let mut argv = substitute_args(&argv, "{}", &Arg::Field(found.clone()));
            if batch {
                // `{} +` is one or more found paths: the first as above,
                // then as many more as the file system holds.
                argv.push(Arg::Unknown(Sources::none()));
            }
            let cwd = dir.then(|| {
                let mut v = found.clone();
                for r in &roots {
                    v.merge(r);
                }
                v
            });
            self.spawn(index, argv, Vec::new(), cwd, state.clone());
        }
    }

    /// GNU `parallel CMD ::: ARGS` (or arguments from standard input): each
    /// argument, shell-quoted as parallel quotes it, into the command line,
    /// which a shell runs.
    fn parallel(&mut self, index: Option<usize>, args: &[Arg], state: &State) {
        let sep = args
            .iter()
            .position(|a| matches!(a.as_known(), Some(":::" | "::::" | ":::+")));
        let from_stdin = || -> Vec<Arg> {
            match state.stdin.text.as_ref().and_then(Value::as_known) {
                Some(text) => text
                    .lines()
                    .filter(|l| !l.is_empty())
                    .map(Arg::known)
                    .collect(),
                None => vec![Arg::Field(match &state.stdin.items {
                    Some(i) => i.clone(),
                    None => Value::text(Text::any(state.stdin.from.clone())),
                })],
            }
        };
        let (template, items): (Vec<Arg>, Vec<Arg>) = match sep {
            Some(at) => (
                args.get(..at).unwrap_or(&[]).to_vec(),
                args.get(at + 1..).unwrap_or(&[]).to_vec(),
            ),
            None => (args.to_vec(), from_stdin()),
        };
        let k = parallel_options_len(&template);
        let command: Vec<Arg> = template.into_iter().skip(k).collect();
        let items = self.meter.cap_fields(items, "`parallel` receives");
        if command.is_empty() {
            // `parallel ::: 'cmd …'`: each argument is a command line.
            for item in &items {
                if !self.meter.step() {
                    break;
                }
                let s = self.child_shell(state, &[], false);
                let scripts = self.args_script(std::slice::from_ref(item));
                self.run_scripts(scripts, s, index, true);
            }
            return;
        }
        let has_slot = command.iter().any(|a| {
            a.candidates()
                .iter()
                .any(|t| t.known_prefix().contains("{}") || t.known_suffix().contains("{}"))
        });
        for item in &items {
            // A step per command line: once refused (and recorded), the rest
            // is unknown.
            if !self.meter.step() {
                break;
            }
            let quoted = quote_arg(item);
            let argv = if has_slot {
                substitute_args(&command, "{}", &quoted)
            } else {
                let mut a = command.clone();
                a.push(quoted);
                a
            };
            let s = self.child_shell(state, &[], false);
            let scripts = self.args_script(&argv);
            self.run_scripts(scripts, s, index, true);
        }
    }
}

/// How many leading words of a `parallel` template are its own options.
/// The command-line words of a curl config file: one option a line,
/// `--name value`, `name = value`, `name: value` or `name value` (the
/// leading dashes optional for long names), `-k` short options, `#`
/// comments, double-quoted values with backslash escapes. `-K`/`--config`
/// lines are dropped (they are not followed).
fn curl_config_words(config: &str) -> Vec<String> {
    let mut words = Vec::new();
    for line in config.lines() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let (name, value) = match line.find(|c: char| c.is_whitespace() || c == '=' || c == ':') {
            Some(at) => (
                line.get(..at).unwrap_or(""),
                line.get(at..)
                    .unwrap_or("")
                    .trim_start_matches(|c: char| c.is_whitespace() || c == '=' || c == ':'),
            ),
            None => (line, ""),
        };
        let option = if name.starts_with('-') {
            name.to_owned()
        } else {
            format!("--{name}")
        };
        if matches!(option.as_str(), "-K" | "--config") || option.starts_with("-K") {
            continue;
        }
        words.push(option);
        if !value.is_empty() {
            words.push(unquote_curl_value(value));
        }
    }
    words
}

/// A curl config value: `"…"` with backslash escapes, or the text up to
/// the first blank.
fn unquote_curl_value(value: &str) -> String {
    let Some(quoted) = value.strip_prefix('"') else {
        return value.split_whitespace().next().unwrap_or("").to_owned();
    };
    let mut out = String::new();
    let mut chars = quoted.chars();
    while let Some(c) = chars.next() {
        match c {
            '"' => break,
            '\\' => match chars.next() {
                Some('n') => out.push('\n'),
                Some('t') => out.push('\t'),
                Some(other) => out.push(other),
                None => {}
            },
            other => out.push(other),
        }
    }
    out
}

/// The arguments of a package manager's runner subcommand (`exec`, `x`,
/// `dlx`) and whether they are one shell string (`pnpm -c exec`, `bun
/// exec`); `None` for any other subcommand. Options before the subcommand
/// are skipped (the ones that take a value with it).
fn package_manager_exec(args: &[Arg]) -> Option<(&[Arg], bool)> {
    let mut shell_mode = false;
    let mut k = 0;
    while let Some(word) = args.get(k) {
        let text = word.as_known()?;
        k += 1;
        match text {
            "-c" | "--shell-mode" => shell_mode = true,
            "-C" | "--dir" | "--prefix" | "--filter" | "-F" | "--workspace" | "--cwd" => k += 1,
            t if t.starts_with('-') => {}
            "exec" | "x" | "dlx" => {
                let rest = args.get(k..).unwrap_or(&[]);
                let bun_shell = text == "exec" && rest.len() == 1;
                return Some((rest, shell_mode || bun_shell));
            }
            _ => return None,
        }
    }
    None
}

fn parallel_options_len(template: &[Arg]) -> usize {
    let mut k = 0;
    while let Some(t) = template.get(k).and_then(Arg::as_known) {
        if !t.starts_with('-') {
            break;
        }
        k += if matches!(
            t,
            "-j" | "-P"
                | "-N"
                | "-n"
                | "-S"
                | "-a"
                | "-d"
                | "-I"
                | "-C"
                | "--jobs"
                | "--colsep"
                | "--results"
                | "--joblog"
                | "--tmpdir"
                | "--delimiter"
                | "--arg-file"
                | "--sshlogin"
        ) {
            2
        } else {
            1
        };
    }
    k
}

/// An argument shell-quoted (`'…'`), as GNU parallel passes it.
fn quote_arg(arg: &Arg) -> Arg {
    match arg {
        Arg::Field(v) => {
            let candidates = v
                .candidates()
                .iter()
                .map(|t| match t.as_known() {
                    Some(s) => Text::lit(&super::param::shell_quote(s)),
                    None => t.clone(),
                })
                .collect();
            Value::from_candidates(candidates).map_or_else(|| arg.clone(), Arg::Field)
        }
        Arg::Unknown(_) => arg.clone(),
    }
}

/// Replaces `slot` in every argument by `item` (a word equal to the slot
/// becomes the item, a word containing it gets the item's text).
fn substitute_args(template: &[Arg], slot: &str, item: &Arg) -> Vec<Arg> {
    template
        .iter()
        .map(|a| {
            if a.as_known() == Some(slot) {
                return item.clone();
            }
            let Arg::Field(v) = a else { return a.clone() };
            let candidates: Vec<Text> = v
                .candidates()
                .iter()
                .flat_map(|t| {
                    let Some(s) = t.as_known().filter(|s| s.contains(slot)) else {
                        return vec![t.clone()];
                    };
                    item.candidates()
                        .iter()
                        .map(|i| {
                            let mut out = Text::default();
                            for (k, piece) in s.split(slot).enumerate() {
                                if k > 0 {
                                    out.append(i);
                                }
                                out.push_str(piece);
                            }
                            out
                        })
                        .collect::<Vec<_>>()
                })
                .collect();
            Value::from_candidates(candidates).map_or_else(|| a.clone(), Arg::Field)
        })
        .collect()
}

impl Parsed {
    /// True when an option carrying `modifier` in `spec` was given.
    pub(crate) fn has_modifier(&self, spec: &CommandSpec, modifier: Modifier) -> bool {
        spec.modifiers
            .iter()
            .filter(|(_, m)| *m == modifier)
            .any(|(names, _)| self.has(names))
    }
}

/// The xargs options that shape the commands it runs.
struct XargsOptions {
    /// `-I R` / `-i`: each item replaces `R` in the template.
    replace: Option<String>,
    max_args: Option<usize>,
    max_lines: Option<usize>,
    /// `-0`: items end at NUL.
    nul: bool,
    /// `-d C`: items end at `C`.
    delim: Option<char>,
    /// `-a FILE`: items come from the file, not standard input.
    from_file: bool,
}

impl XargsOptions {
    fn of(parsed: &Parsed, args: &[Arg]) -> Self {
        let text_opt = |names: &[&str]| -> Option<Option<String>> {
            parsed.items.iter().rev().find_map(|i| match i {
                Item::Opt { name, value, .. } if name.is(names) => {
                    Some(value.and_then(|v| option_value(args, v).as_known().map(str::to_owned)))
                }
                _ => None,
            })
        };
        let per = |names: &[&str]| -> Option<usize> {
            text_opt(names)
                .flatten()
                .and_then(|n| n.parse::<usize>().ok())
                .filter(|n| *n > 0)
        };
        Self {
            replace: text_opt(&["I", "i", "replace", "J"]).map(|r| {
                r.filter(|t| !t.is_empty())
                    .unwrap_or_else(|| "{}".to_owned())
            }),
            max_args: per(&["n", "max-args"]),
            max_lines: per(&["L", "l", "max-lines"]).or_else(|| parsed.has(&["l"]).then_some(1)),
            nul: parsed.has(&["0", "null"]),
            delim: text_opt(&["d", "delimiter"])
                .flatten()
                .and_then(|d| super::lex::decode_ansi_c(&d).chars().next()),
            from_file: parsed.has(&["a", "arg-file"]),
        }
    }
}

/// xargs' items grouped `chunk` per command; one empty command when there are
/// none, unless `-r`.
fn xargs_chunks(items: Vec<String>, chunk: usize, no_run_if_empty: bool) -> Vec<Vec<String>> {
    let mut chunks: Vec<Vec<String>> = Vec::new();
    for item in items {
        match chunks.last_mut() {
            Some(last) if last.len() < chunk => last.push(item),
            _ => chunks.push(vec![item]),
        }
    }
    if chunks.is_empty() && !no_run_if_empty {
        chunks.push(Vec::new());
    }
    chunks
}

/// A variable's value in `state` when it is set to one known text.
fn known_var(state: &State, name: &str, known: &super::state::Known) -> Option<Value> {
    let var = state.get(name, known);
    match var.vals.as_slice() {
        [Binding::Str(t)] => Some(Value::text(t.clone())),
        _ => None,
    }
}

impl Interp {
    /// `cp SRC DEST`, `ln -s SRC DEST`, `install SRC DEST`, `mv SRC DEST`
    /// with known names: DEST is now SRC — its program (`/tmp/ls` made
    /// from `/bin/rm` is `rm`) and its text when known (`cp w.sh x; ./x`),
    /// or no known text.
    fn record_copy(&mut self, name: &str, args: &[Arg], state: &mut State) {
        let Some(spec) = spec::lookup(name) else {
            return;
        };
        let parsed = parse_args(spec, args);
        let operands: Vec<&str> = parsed
            .operands()
            .iter()
            .filter_map(|&at| args.get(at).and_then(Arg::as_known))
            .collect();
        let (Some(dest), [source]) = (
            operands.last(),
            operands
                .get(..operands.len().saturating_sub(1))
                .unwrap_or(&[]),
        ) else {
            return;
        };
        let Some(dest) = super::path::absolute(dest, &state.cwd) else {
            return;
        };
        let source_path = super::path::absolute(source, &state.cwd);
        let program = source_path
            .as_ref()
            .and_then(|p| state.programs.get(p).cloned())
            .unwrap_or_else(|| source.rsplit('/').next().unwrap_or(source).to_owned());
        let known = spec::lookup(&program).is_some()
            || super::builtins::is_builtin(&program)
            || spec::is_shell(&program);
        if !program.is_empty() && known {
            Rc::make_mut(&mut state.programs).insert(dest.clone(), program);
        }
        // The source is read as any reader would: a file written earlier,
        // standard input (`cp /dev/stdin x.sh <<< '…'`), a process
        // substitution or a descriptor opened on one. `-` is a file for
        // these programs. A copy of a file nobody knows replaces what DEST
        // was known to hold.
        let source_arg = parsed
            .operands()
            .iter()
            .rev()
            .nth(1)
            .and_then(|&at| args.get(at));
        let text = match source_arg {
            Some(arg) if *source != "-" => self.file_text(arg, state),
            _ => source_path.and_then(|p| state.files.get(&p).cloned()),
        };
        match text {
            Some(text) => {
                Rc::make_mut(&mut state.files).insert(dest, text);
            }
            None if state.files.contains_key(&dest) => {
                Rc::make_mut(&mut state.files).remove(&dest);
            }
            None => {}
        }
    }
}

impl Interp {
    /// The files a copying program writes with text this command line
    /// knows (`cp`, `install`, `tee`, `dd of=`), for a script run later.
    fn record_writes(&mut self, name: &str, args: &[Arg], state: &mut State) {
        match name {
            "cp" | "ln" | "install" | "mv" | "rsync" => self.record_copy(name, args, state),
            "tee" => self.record_tee(args, state),
            "dd" => self.record_dd(args, state),
            _ => {}
        }
    }

    /// `dd of=FILE [if=SOURCE]`: FILE now holds SOURCE's text (standard
    /// input without `if=`: `dd of=x.sh <<< '…'`). An operand that changes
    /// the bytes or where they land (`skip=`, `seek=`, `conv=`, `count=`)
    /// leaves FILE unknown.
    fn record_dd(&mut self, args: &[Arg], state: &mut State) {
        let mut input: Option<&str> = None;
        let mut output: Option<&str> = None;
        let mut exact = true;
        for a in args {
            match a.as_known().and_then(|w| w.split_once('=')) {
                Some(("if", v)) => input = Some(v),
                Some(("of", v)) => output = Some(v),
                Some(("bs" | "ibs" | "obs" | "status", _)) => {}
                _ => exact = false,
            }
        }
        let Some(dest) = output.and_then(|o| super::path::absolute(o, &state.cwd)) else {
            return;
        };
        let text = match (exact, input) {
            (false, _) => None,
            (true, None) => state.stdin.text.clone(),
            (true, Some(file)) => self.file_text(&Arg::Field(Value::known(file)), state),
        };
        let files = Rc::make_mut(&mut state.files);
        match text {
            Some(t) => files.insert(dest, t),
            None => files.remove(&dest),
        };
    }

    /// `… | tee [-a] FILE…`: each FILE now holds tee's standard input
    /// (`echo '…' | tee s.sh; bash s.sh` runs the text), or, appended,
    /// what it held before and then that input. Input nobody knows leaves
    /// each FILE unknown rather than what it held before.
    fn record_tee(&mut self, args: &[Arg], state: &mut State) {
        let Some(spec) = spec::lookup("tee") else {
            return;
        };
        let parsed = parse_args(spec, args);
        let append = parsed.has(&["a", "append"]);
        let input = state.stdin.text.clone();
        for at in parsed.operands() {
            let Some(path) = args
                .get(at)
                .and_then(Arg::as_known)
                .and_then(|p| super::path::absolute(p, &state.cwd))
            else {
                continue;
            };
            let files = Rc::make_mut(&mut state.files);
            let previous = files.remove(&path);
            let content = match (append, previous, &input) {
                (true, Some(old), Some(new)) => {
                    super::interp::concat_values(&old, new, &mut self.meter)
                }
                // What the file held before is a hole, as for `>>`.
                (true, None, Some(new)) => super::interp::concat_values(
                    &Value::text(Text::any(Sources::none())),
                    new,
                    &mut self.meter,
                ),
                (_, _, None) => None,
                (false, _, Some(new)) => Some(new.clone()),
            };
            if let Some(c) = content {
                files.insert(path, c);
            }
        }
    }
}

/// bash's own long options (`bash --help`); any other `--word` before the
/// script makes bash print its usage and exit 2, running nothing.
const BASH_LONG_OPTIONS: &[&str] = &[
    "--debug",
    "--debugger",
    "--dump-po-strings",
    "--dump-strings",
    "--help",
    "--init-file",
    "--login",
    "--noediting",
    "--noprofile",
    "--norc",
    "--posix",
    "--pretty-print",
    "--rcfile",
    "--restricted",
    "--verbose",
    "--version",
    "--wordexp",
];

/// Whether `bash ARGS…` stops at a long option it does not have: only
/// known words count, read up to the first word that is not an option.
fn bash_refuses_long_option(args: &[Arg]) -> bool {
    for arg in args {
        let Some(word) = arg.as_known() else {
            return false;
        };
        if word == "--" || !word.starts_with('-') {
            return false;
        }
        if word.starts_with("--") {
            let name = word.split('=').next().unwrap_or(word);
            return !BASH_LONG_OPTIONS.contains(&name);
        }
    }
    false
}

/// `-n` (`-o noexec`): the shell reads the commands and runs none of them;
/// an interactive shell ignores it.
fn reads_without_running(parsed: &Parsed, args: &[Arg]) -> bool {
    !parsed.has(&["i"])
        && (parsed.has(&["n"])
            || parsed
                .values(&["o"])
                .into_iter()
                .any(|v| option_value(args, v).as_known() == Some("noexec")))
}

/// A `sleep` operand it accepts: a non-negative number with an optional
/// unit (`0`, `1.5`, `2m`, `inf`).
fn is_duration(arg: &Arg) -> bool {
    arg.as_known().is_some_and(|w| {
        let n = w.strip_suffix(['s', 'm', 'h', 'd']).unwrap_or(w);
        !n.starts_with(['-', '+']) && n.parse::<f64>().is_ok_and(|v| v >= 0.0)
    })
}
