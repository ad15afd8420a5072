//! Simple commands: expansion, then a function call, a builtin or a
//! program; and the builtins that change what later commands do (`cd`,
//! `read`, `printf -v`, `mapfile`, `set`, `shift`, `eval`, `source`,
//! `exec`, `declare` and friends, `shopt`, `trap`, …).

use std::rc::Rc;

use super::ast::{ArgAst, AssignValue, Simple};
use super::command::{Command, CommandKind, Redirect, RedirectOp};
use super::expand::binding_value;
use super::interp::{Body, Flow, Interp, Jump, Output, candidates_detail, join};
use super::state::{Binding, Func, State, Var};
use super::value::{Arg, Seg, Sources, Text, Value};

/// Builtins: they run inside the shell, no program starts.
const BUILTINS: &[&str] = &[
    ":",
    ".",
    "[",
    "alias",
    "bg",
    "bind",
    "break",
    "builtin",
    "caller",
    "cd",
    "command",
    "compgen",
    "complete",
    "compopt",
    "continue",
    "declare",
    "dirs",
    "disown",
    "echo",
    "enable",
    "eval",
    "exec",
    "exit",
    "export",
    "false",
    "fc",
    "fg",
    "getopts",
    "hash",
    "help",
    "history",
    "jobs",
    "kill",
    "let",
    "local",
    "logout",
    "mapfile",
    "popd",
    "printf",
    "pushd",
    "pwd",
    "read",
    "readarray",
    "readonly",
    "return",
    "set",
    "shift",
    "shopt",
    "source",
    "suspend",
    "test",
    "times",
    "trap",
    "true",
    "type",
    "typeset",
    "ulimit",
    "umask",
    "unalias",
    "unset",
    "wait",
];

/// The argv of recorded command `index` (empty when none was recorded).
fn argv_of(commands: &[super::command::Command], index: Option<usize>) -> Vec<Arg> {
    index
        .and_then(|i| commands.get(i))
        .map(|c| c.argv.clone())
        .unwrap_or_default()
}

pub(crate) fn is_builtin(name: &str) -> bool {
    BUILTINS.contains(&name)
}

/// Everything one simple command needs besides its argv.
pub(crate) struct Call<'a> {
    pub simple: &'a Simple,
    pub assigns: &'a [(String, Value)],
    pub redirects: &'a [Redirect],
}

impl Interp {
    pub(crate) fn simple(&mut self, s: &Simple, state: State) -> (Flow, Output) {
        let mut state = state;
        // Prefix assignments see the ones before them.
        let mut scratch = state.clone();
        let mut assigns = Vec::new();
        let mut substituted = false;
        for a in &s.assigns {
            substituted |= has_substitution(a);
            let value = self.assign_value(a, &mut scratch);
            self.apply_assign(a, &mut scratch, false);
            assigns.push((a.name.clone(), value));
        }
        let (shapes, _) = self.expand_command_words(&s.words, &mut state);
        let mut cmd_state = state.clone();
        let (redirects, stdout) = self.redirects(&s.redirects, &mut cmd_state);
        let reads_stdin = redirects.iter().any(|r| {
            r.fd == 0
                && matches!(
                    r.op,
                    RedirectOp::Read
                        | RedirectOp::ReadWrite
                        | RedirectOp::HereDoc
                        | RedirectOp::HereString
                )
        });
        let call = Call {
            simple: s,
            assigns: &assigns,
            redirects: &redirects,
        };
        let mut flow = Flow::default();
        let mut out: Option<Output> = None;
        for argv in shapes {
            let (f, o) = if argv.is_empty() {
                self.assignments_only(&call, &scratch, cmd_state.clone(), substituted)
            } else {
                self.dispatch(argv, &call, cmd_state.clone())
            };
            flow.ok = join(flow.ok, f.ok, &self.known);
            flow.fail = join(flow.fail, f.fail, &self.known);
            flow.jumps.extend(f.jumps);
            out = Some(match out {
                None => o,
                Some(prev) => either(prev, o),
            });
        }
        if reads_stdin {
            for st in [flow.ok.as_mut(), flow.fail.as_mut()].into_iter().flatten() {
                st.stdin = state.stdin.clone();
            }
        }
        self.remember_files(&redirects, out.as_ref(), &mut flow);
        let out = match stdout {
            super::expand::Stdout::Elsewhere => Output::empty(),
            super::expand::Stdout::Unknown => Output::unknown(Sources::none()),
            super::expand::Stdout::Output => out.unwrap_or_else(Output::empty),
            super::expand::Stdout::OutputAndUnknown => out
                .unwrap_or_else(Output::empty)
                .then(Output::unknown(Sources::none()), &mut self.meter),
        };
        (flow, out)
    }

    /// Files written by `>` / `>>` with statically known text: a script
    /// staged this way (`echo 'rm -rf /' > x; bash x`) is still read.
    pub(crate) fn remember_files(
        &mut self,
        redirects: &[Redirect],
        out: Option<&Output>,
        flow: &mut Flow,
    ) {
        for st in [flow.ok.as_mut(), flow.fail.as_mut()].into_iter().flatten() {
            // Standard output: the command's own last `>` / `>&N` of it, or
            // what `exec` left it open on. Through a descriptor `exec`
            // opened, the text adds to what was written through it before.
            let own = redirects
                .iter()
                .rev()
                .find(|r| r.fd == 1 && (r.op.writes() || r.op == RedirectOp::Duplicate))
                .map(as_duplicate);
            let through = match &own {
                Some(r) if r.op == RedirectOp::Duplicate => match r.target.as_known() {
                    Some(n) => n.parse::<u32>().ok().and_then(|n| st.fds.get(&n)).cloned(),
                    // `>&$fd` of an unknown descriptor: any file `exec`
                    // opened for writing may get the text.
                    None => {
                        self.unknown_writes(st, out);
                        continue;
                    }
                },
                Some(_) => None,
                None => st.fds.get(&1).cloned(),
            };
            let written = match (own, through) {
                (Some(r), None) if r.op != RedirectOp::Duplicate => r,
                (_, Some(open)) if open.op.writes() => Redirect {
                    op: RedirectOp::Append,
                    ..open
                },
                (_, _) => continue,
            };
            self.write_file(st, &written, out);
        }
    }

    /// Records what `written` (a `>`/`>>` of standard output, or the
    /// descriptor it went through) leaves in its file. Bytes nobody can
    /// know (another command's output, what the file held on disk) are a
    /// hole in the text, never the reason to forget the known part: `echo
    /// 'rm -rf /' > x; cat f >> x; bash x` still runs the known line.
    fn write_file(&mut self, st: &mut State, written: &Redirect, out: Option<&Output>) {
        let Some(path) = file_path(written, &st.cwd) else {
            return;
        };
        let hole = || Value::text(Text::any(out.map(|o| o.from.clone()).unwrap_or_default()));
        let text = out.and_then(|o| o.text.clone()).unwrap_or_else(hole);
        match written.op {
            RedirectOp::Append | RedirectOp::AppendAll => self.append_to_file(st, path, &text),
            _ => {
                Rc::make_mut(&mut st.files).insert(path, text);
            }
        }
    }

    /// Adds `text` to what file `path` holds (unknown bytes when nothing
    /// is known of it). Past the budget the file is forgotten, so it reads
    /// as unknown.
    fn append_to_file(&mut self, st: &mut State, path: String, text: &Value) {
        let files = Rc::make_mut(&mut st.files);
        let old = files
            .remove(&path)
            .unwrap_or_else(|| Value::text(Text::any(Sources::none())));
        if let Some(c) = super::interp::concat_values(&old, text, &mut self.meter) {
            files.insert(path, c);
        }
    }

    /// `A=1 B=2` (or a command word that expanded to nothing): the
    /// assignments stay in the shell.
    fn assignments_only(
        &mut self,
        call: &Call<'_>,
        assigned: &State,
        state: State,
        substituted: bool,
    ) -> (Flow, Output) {
        let mut state = state;
        for a in &call.simple.assigns {
            if let Some(var) = assigned.vars.get(assigned.resolve(&a.name)) {
                state.set(&a.name, var.clone());
            }
        }
        if !call.redirects.is_empty() || !call.assigns.is_empty() {
            // Recorded so policy sees the redirection (`> file`) and the
            // variables (`NODE_TLS_REJECT_UNAUTHORIZED=0`) the shell now has.
            let cmd = self.command(
                &state,
                Vec::new(),
                CommandKind::Builtin,
                call.assigns.to_vec(),
                call.redirects,
            );
            let index = self.emit(cmd, Output::empty());
            // `$(< file)` prints the file.
            let reads_file = call.simple.words.is_empty()
                && call
                    .redirects
                    .iter()
                    .any(|r| r.fd == 0 && r.op == RedirectOp::Read);
            if reads_file && self.ctx.origin == super::command::Origin::CommandSubstitution {
                let out = Output::unknown(index.map(Sources::one).unwrap_or_default());
                return (Flow::either(state), out);
            }
        }
        let flow = if substituted {
            Flow::either(state)
        } else {
            Flow::ok(state)
        };
        (flow, Output::empty())
    }

    /// Runs one expanded argv.
    pub(crate) fn dispatch(
        &mut self,
        argv: Vec<Arg>,
        call: &Call<'_>,
        state: State,
    ) -> (Flow, Output) {
        let Some(first) = argv.first().cloned() else {
            return (Flow::ok(state), Output::empty());
        };
        let candidates = match &first {
            Arg::Field(v) => v.candidates().to_vec(),
            Arg::Unknown(_) => Vec::new(),
        };
        if candidates.len() > 1 {
            let mut flow = Flow::default();
            let mut out: Option<Output> = None;
            for c in candidates {
                let mut one = argv.clone();
                if let Some(slot) = one.first_mut() {
                    *slot = Arg::Field(Value::text(c));
                }
                let (f, o) = self.dispatch(one, call, state.clone());
                flow.ok = join(flow.ok, f.ok, &self.known);
                flow.fail = join(flow.fail, f.fail, &self.known);
                flow.jumps.extend(f.jumps);
                out = Some(match out {
                    None => o,
                    Some(prev) => either(prev, o),
                });
            }
            return (flow, out.unwrap_or_else(Output::empty));
        }
        let Some(name) = first.as_known().map(str::to_owned) else {
            return self.unresolved(argv, call.assigns, call.redirects, state);
        };
        if name == "coproc" {
            return self.coproc(argv, call, state);
        }
        if !name.contains('/') {
            if let Some(func) = state.functions.get(&name).cloned() {
                return self.call_function(&name, &func, argv, call, state);
            }
            if let Some(alias) = state.aliases.get(&name).cloned() {
                if state.opts.expand_aliases {
                    return self.alias(&alias, argv, call, state);
                }
                // Non-interactive bash expands aliases only under
                // `expand_aliases`, which the harness's shell may set:
                // both readings are followed.
                let (flow, out) = self.alias(&alias, argv.clone(), call, state.clone());
                let mut call_plain = Vec::new();
                call_plain.extend(argv);
                let (plain, plain_out) = self.dispatch_plain(&name, call_plain, call, state);
                let joined = Flow {
                    ok: join(flow.ok, plain.ok, &self.known),
                    fail: join(flow.fail, plain.fail, &self.known),
                    jumps: flow.jumps.into_iter().chain(plain.jumps).collect(),
                };
                return (joined, either(out, plain_out));
            }
        }
        self.dispatch_plain(&name, argv, call, state)
    }

    /// A builtin or a program (no function or alias of that name).
    fn dispatch_plain(
        &mut self,
        name: &str,
        argv: Vec<Arg>,
        call: &Call<'_>,
        state: State,
    ) -> (Flow, Output) {
        if !name.contains('/') && is_builtin(name) {
            return self.builtin(name, argv, call, state);
        }
        self.program(argv, call.assigns, call.redirects, state)
    }

    /// `coproc [NAME] CMD` / `coproc NAME { …; }`: the command runs in the
    /// background. (The grammar does not parse the group form; its words
    /// arrive here and the group's braces are dropped.)
    fn coproc(&mut self, argv: Vec<Arg>, call: &Call<'_>, state: State) -> (Flow, Output) {
        let mut rest: Vec<Arg> = argv.into_iter().skip(1).collect();
        if rest
            .get(1)
            .and_then(Arg::as_known)
            .is_some_and(|t| matches!(t, "{" | "("))
        {
            rest.remove(0);
        }
        if rest
            .first()
            .and_then(Arg::as_known)
            .is_some_and(|t| matches!(t, "{" | "("))
        {
            rest.remove(0);
        }
        if rest
            .last()
            .and_then(Arg::as_known)
            .is_some_and(|t| matches!(t, "}" | ")"))
        {
            rest.pop();
        }
        let saved = self.ctx;
        self.ctx.background = true;
        self.ctx.jobs = self.ctx.jobs.saturating_add(1);
        self.ctx.asyncs = self.ctx.asyncs.saturating_add(1);
        // `coproc coproc …`: one level a word.
        let ran = self.nested(|this| this.dispatch(rest, call, state.clone()));
        self.ctx = saved;
        let out = ran.map_or_else(|| Output::unknown(Sources::none()), |(_, out)| out);
        (Flow::ok(state), out)
    }

    /// A program (`External`), then whatever it runs.
    pub(crate) fn program(
        &mut self,
        argv: Vec<Arg>,
        assigns: &[(String, Value)],
        redirects: &[Redirect],
        state: State,
    ) -> (Flow, Output) {
        // `command $CMD …`, `exec $CMD …`: a program named at run time.
        if argv.first().is_some_and(|a| a.as_known().is_none()) {
            return self.unresolved(argv, assigns, redirects, state);
        }
        let printed = self.printed_by(&argv, &state);
        let cmd = self.command(
            &state,
            argv.clone(),
            CommandKind::External,
            assigns.to_vec(),
            redirects,
        );
        let index = self.emit(cmd, printed);
        self.run_by_path(index, &argv, assigns, &state);
        let flow = self.run_external(index, &argv, assigns, state);
        (flow, self.output_of(index))
    }

    /// A command whose name is runtime data: recorded as unresolved, with
    /// the readings of it as each program the hard denies name
    /// ([`Interp::unknown_name`]).
    fn unresolved(
        &mut self,
        argv: Vec<Arg>,
        assigns: &[(String, Value)],
        redirects: &[Redirect],
        state: State,
    ) -> (Flow, Output) {
        let cmd = self.command(
            &state,
            argv,
            CommandKind::Unresolved,
            assigns.to_vec(),
            redirects,
        );
        let index = self.emit(cmd, Output::unknown(Sources::none()));
        self.unknown_name(index, &argv_of(&self.commands, index), assigns, &state);
        (Flow::either(state), self.output_of(index))
    }

    /// A program named by a path that the command itself made: a file it
    /// wrote (`cat > w.sh <<EOF … EOF; chmod +x w.sh; ./w.sh` runs the
    /// text as a script) or a copy or link of a program (`ln -s /bin/rm
    /// /tmp/ls; /tmp/ls -rf ~` runs `rm`).
    fn run_by_path(
        &mut self,
        index: Option<usize>,
        argv: &[Arg],
        assigns: &[(String, Value)],
        state: &State,
    ) {
        let Some(first) = argv.first() else { return };
        let Some(path) = first
            .as_known()
            .and_then(|p| super::path::absolute(p, &state.cwd))
        else {
            return;
        };
        if !first.as_known().is_some_and(|p| p.contains('/')) {
            // A bare name is looked up in `PATH`, which holds the working
            // directory only when the agent's environment says so (`$0 &`
            // in a script run as `bash b.sh` runs `b.sh`). A script the
            // command line wrote there under that name is read as what it
            // may run: a conservative reading, only ever to deny.
            if state
                .files
                .get(&path)
                .cloned()
                .and_then(written_part)
                .is_some()
            {
                let saved = self.ctx.conservative;
                self.ctx.conservative = true;
                self.run_written_script(index, first, argv, state, &path);
                self.ctx.conservative = saved;
            }
            return;
        }
        if let Some(program) = state.programs.get(&path).cloned() {
            let mut renamed = argv.to_vec();
            if let Some(slot) = renamed.first_mut() {
                *slot = Arg::Field(Value::known(&program));
            }
            self.spawn(index, renamed, assigns.to_vec(), None, state.clone());
            return;
        }
        self.run_written_script(index, first, argv, state, &path);
    }

    /// Runs the script the command line wrote at `path`, as `argv` starts it.
    fn run_written_script(
        &mut self,
        index: Option<usize>,
        first: &Arg,
        argv: &[Arg],
        state: &State,
        path: &str,
    ) {
        if let Some(text) = state.files.get(path).cloned().and_then(written_part) {
            let mut child = state.clone();
            // `$0` is the path it was run by (`$0 &` in it runs it again).
            if let Arg::Field(name) = first {
                child.arg0 = name.clone();
                child.assign_value("BASH_SOURCE", name, &self.known);
            }
            child.positional = Some(Rc::new(
                argv.iter()
                    .skip(1)
                    .filter_map(|a| match a {
                        Arg::Field(v) => Some(v.clone()),
                        Arg::Unknown(_) => None,
                    })
                    .collect(),
            ));
            let scripts = self.value_scripts(&text);
            self.run_scripts(scripts, child, index, true);
        }
    }

    fn alias(
        &mut self,
        alias: &str,
        argv: Vec<Arg>,
        call: &Call<'_>,
        state: State,
    ) -> (Flow, Output) {
        // The alias text replaces the command word; the rest follows it.
        let mut script = alias.to_owned();
        let mut state = state;
        for arg in argv.iter().skip(1) {
            script.push(' ');
            script.push_str(&self.arg_script(arg, &mut state));
        }
        let _ = call;
        self.run_script(&script, state, None, false)
    }

    /// `f(){ sleep 9 & f; }`: for a call that surely runs `body` again,
    /// notes when the run of it started a process that outlives it (no
    /// `wait`) and passed no condition that could end the recursion.
    fn note_recursion_spawning(&mut self, body: &Rc<super::ast::Stmt>) {
        if self
            .function_running(body)
            .is_some_and(|frame| frame.spawned && !frame.waited && !frame.branched)
        {
            self.note(match self.ctx.conservative {
                false => super::command::RECURSION_SPAWNING,
                true => super::command::RECURSION_SPAWNING_IN_READING,
            });
        }
    }

    /// A call of a body being run is guarded by the conditions within
    /// that body (`a` calling `b` past a test, `b` calling `a`), not by
    /// those around its first call, and is a copy in a process of its own
    /// only behind a `&`, `coproc` or pipe within that body. A body on the
    /// state's call stack but without a frame (none is expected) is judged
    /// unguarded, and against the command line.
    fn judge_recursive_call(&self, cmd: &mut Command, body: &Rc<super::ast::Stmt>) {
        let frame = self.function_running(body);
        cmd.guarded = frame.is_some_and(|f| self.guarded_since(Some(f)));
        cmd.async_rerun = frame.map_or(self.ctx.asyncs > 0, |f| self.ctx.asyncs > f.asyncs);
    }

    fn call_function(
        &mut self,
        name: &str,
        func: &Func,
        argv: Vec<Arg>,
        call: &Call<'_>,
        state: State,
    ) -> (Flow, Output) {
        let recursive = state.bodies.iter().any(|b| Rc::ptr_eq(b, &func.body));
        let mut cmd = self.command(
            &state,
            argv.clone(),
            CommandKind::Function,
            call.assigns.to_vec(),
            call.redirects,
        );
        cmd.recursive = recursive;
        if recursive {
            self.judge_recursive_call(&mut cmd, &func.body);
        }
        let unguarded = recursive && !cmd.guarded;
        let index = self.emit(cmd, Output::unknown(Sources::none()));
        let depth_limit = self.meter.limits.max_call_depth as usize;
        if recursive {
            if unguarded {
                self.note_recursion_spawning(&func.body);
            }
            return (Flow::either(state), self.output_of(index));
        }
        if state.calls.len() >= depth_limit {
            self.meter.exceeded(
                "max_call_depth",
                format!("function calls nest deeper than {depth_limit}"),
            );
            return (Flow::either(state), self.output_of(index));
        }
        let mut inner = state.clone();
        let args: Vec<Arg> = argv.into_iter().skip(1).collect();
        // Unknown when any argument is.
        inner.positional = args
            .iter()
            .map(|a| match a {
                Arg::Field(v) => Some(v.clone()),
                Arg::Unknown(_) => None,
            })
            .collect::<Option<Vec<Value>>>()
            .map(Rc::new);
        Rc::make_mut(&mut inner.calls).push(name.to_owned());
        Rc::make_mut(&mut inner.bodies).push(Rc::clone(&func.body));
        self.called.push(Rc::clone(&func.body));
        Rc::make_mut(&mut inner.locals).push(Vec::new());
        let mut saved_prefix = Vec::new();
        for (var, value) in call.assigns {
            saved_prefix.push((var.clone(), inner.vars.get(var).cloned()));
            inner.assign_value(var, value, &self.known);
        }
        // Whether the body calls itself again is judged from its own
        // conditions, not from those around this call.
        let (flow, out) = self.exec_frame(Body::Function(Rc::clone(&func.body)), &func.body, inner);
        let mut ok = flow.ok;
        let mut fail = flow.fail;
        for jump in flow.jumps {
            if let Jump::Return(s) = jump {
                ok = join(ok, Some(s.clone()), &self.known);
                fail = join(fail, Some(s), &self.known);
            }
        }
        let restore = |mut s: State| -> State {
            s.positional = state.positional.clone();
            s.calls = Rc::clone(&state.calls);
            s.bodies = Rc::clone(&state.bodies);
            let frame = Rc::make_mut(&mut s.locals).pop().unwrap_or_default();
            for (var, old) in frame.into_iter().rev().chain(saved_prefix.iter().cloned()) {
                restore_reference(&mut s, &state, &var);
                match old {
                    Some(v) => s.set(&var, v),
                    None => {
                        Rc::make_mut(&mut s.vars).remove(&var);
                    }
                }
            }
            s
        };
        let flow = Flow {
            ok: ok.map(&restore),
            fail: fail.map(&restore),
            jumps: Vec::new(),
        };
        (flow, out)
    }

    fn builtin(
        &mut self,
        name: &str,
        argv: Vec<Arg>,
        call: &Call<'_>,
        state: State,
    ) -> (Flow, Output) {
        if call.assigns.is_empty() {
            return self.builtin_inner(name, argv, call, state);
        }
        // `IFS=, read …`: prefix assignments hold while the builtin runs.
        let mut inner = state.clone();
        for (var, value) in call.assigns {
            inner.assign_value(var, value, &self.known);
        }
        let (mut flow, out) = self.builtin_inner(name, argv, call, inner);
        for s in [flow.ok.as_mut(), flow.fail.as_mut()].into_iter().flatten() {
            for (var, _) in call.assigns {
                match state.vars.get(var) {
                    Some(v) => s.set(var, v.clone()),
                    None => {
                        Rc::make_mut(&mut s.vars).remove(var);
                    }
                }
            }
        }
        (flow, out)
    }

    fn builtin_inner(
        &mut self,
        name: &str,
        argv: Vec<Arg>,
        call: &Call<'_>,
        state: State,
    ) -> (Flow, Output) {
        let printed = self.printed_by(&argv, &state);
        let cmd = self.command(
            &state,
            argv.clone(),
            CommandKind::Builtin,
            call.assigns.to_vec(),
            call.redirects,
        );
        let index = self.emit(cmd, printed);
        let args: Vec<Arg> = argv.iter().skip(1).cloned().collect();
        self.evaluated_arguments(name, &args, &state, index);
        match name {
            "cd" | "pushd" | "eval" | "source" | "." | "exec" | "command" | "builtin"
            | "return" | "break" | "continue" => {
                self.control_builtin(name, argv, args, call, state, index)
            }
            _ => {
                let flow = self.state_builtin(name, &args, call, state, index);
                (flow, self.output_of(index))
            }
        }
    }

    /// Builtins that run other code or leave the current command's flow
    /// (`cd`, `eval`, `source`, `exec`, `command`, `builtin`, `return`,
    /// `break`, `continue`).
    fn control_builtin(
        &mut self,
        name: &str,
        argv: Vec<Arg>,
        args: Vec<Arg>,
        call: &Call<'_>,
        state: State,
        index: Option<usize>,
    ) -> (Flow, Output) {
        match name {
            "cd" | "pushd" => (
                self.cd(&args, state, name == "pushd"),
                self.output_of(index),
            ),
            "eval" => {
                let script = self.args_script(&args);
                self.run_scripts_in_shell(script, state, index)
            }
            "source" | "." => self.source(&args, state, index),
            "exec" => self.exec_builtin(argv, call, state),
            "command" => self.command_builtin(args, call, state),
            "builtin" => {
                let name = args.first().and_then(Arg::as_known).map(str::to_owned);
                match name {
                    // `builtin builtin …`: one level a word.
                    Some(n) if is_builtin(&n) && self.charge_copy(&args) => self
                        .nested(|this| this.builtin_inner(&n, args, call, state.clone()))
                        .unwrap_or_else(|| (Flow::either(state), Output::unknown(Sources::none()))),
                    Some(n) if is_builtin(&n) => {
                        (Flow::either(state), Output::unknown(Sources::none()))
                    }
                    _ => (Flow::either(state), self.output_of(index)),
                }
            }
            "return" => (
                {
                    self.jump_guards.push(self.ctx.guards);
                    Flow {
                        ok: None,
                        fail: None,
                        jumps: vec![Jump::Return(state)],
                    }
                },
                self.output_of(index),
            ),
            "break" | "continue" => {
                let n = args
                    .first()
                    .and_then(Arg::as_known)
                    .and_then(|t| t.parse::<u32>().ok())
                    .unwrap_or(1)
                    .max(1);
                self.jump_guards.push(self.ctx.guards);
                let jump = if name == "break" {
                    Jump::Break(n, state)
                } else {
                    Jump::Continue(n, state)
                };
                (
                    Flow {
                        ok: None,
                        fail: None,
                        jumps: vec![jump],
                    },
                    self.output_of(index),
                )
            }
            _ => (Flow::either(state), self.output_of(index)),
        }
    }

    /// Builtins that change or test the shell's state and then go on.
    fn state_builtin(
        &mut self,
        name: &str,
        args: &[Arg],
        call: &Call<'_>,
        state: State,
        index: Option<usize>,
    ) -> Flow {
        let mut state = state;
        match name {
            // Harnesses source the user's shell snapshot before the command,
            // and a function named `true`, `false` or `:` there runs instead
            // of the builtin (bash looks functions up first): their status
            // is the environment's, so `true || rm -rf ~` may run `rm`.
            ":" | "true" | "false" => {
                self.snapshot_statuses += 1;
                Flow::either(state)
            }
            "popd" => popd(state),
            "export" | "declare" | "typeset" | "local" | "readonly" => {
                self.declare(name, args, call.simple, &mut state);
                Flow::either(state)
            }
            "unset" => unset(args, state),
            "set" => {
                self.set_builtin(args, &mut state);
                Flow::either(state)
            }
            "shift" => shift(args, state),
            "shopt" => {
                self.shopt(args, &mut state);
                Flow::either(state)
            }
            "alias" | "unalias" => aliases(name, args, state),
            "read" => self.read(args, &mut state, index),
            "mapfile" | "readarray" => {
                self.mapfile(args, &mut state, index);
                Flow::either(state)
            }
            "printf" => {
                if let Some(var) = printf_var(args) {
                    let value = super::printf::format(args.get(2..).unwrap_or(&[]), &self.known);
                    state.assign_value(&var, &value.unwrap_or_else(Value::unknown), &self.known);
                }
                Flow::either(state)
            }
            "trap" => {
                if let Some(script) = args.first().filter(|_| args.len() >= 2) {
                    let mut scripts = self.args_script(std::slice::from_ref(script));
                    scripts.retain(|(s, _)| !s.is_empty() && s != "-");
                    self.run_scripts(scripts, state.clone(), None, false);
                }
                Flow::either(state)
            }
            "exit" | "logout" => Flow::dead(),
            "test" | "[" => {
                let bracket = name == "[";
                let literal = call.simple.words.iter().all(literal_arg);
                match super::printf::test(args, bracket) {
                    Some(status) => {
                        // Literal words give the same outcome in every
                        // run: no condition that could end a recursion.
                        if !literal {
                            self.branch_frames();
                        }
                        match status {
                            true => Flow::ok(state),
                            false => Flow::fail(state),
                        }
                    }
                    None => {
                        let words = super::printf::known_words(args, bracket);
                        self.literal_test(literal, words, false);
                        Flow::either(state)
                    }
                }
            }
            "let" => self.let_builtin(args, state),
            "hash" => self.hash_builtin(args, state),
            _ => Flow::either(state),
        }
    }

    /// `let EXPR…`: the status of the last expression.
    fn let_builtin(&mut self, args: &[Arg], mut state: State) -> Flow {
        let mut last = None;
        for a in args {
            if let Some(expr) = a.as_known().map(str::to_owned) {
                last = self.arith(&expr, &mut state);
            } else {
                last = None;
            }
        }
        match last {
            Some(0) => Flow::fail(state),
            Some(_) => Flow::ok(state),
            None => Flow::either(state),
        }
    }

    /// `hash -p PATH NAME`: later `NAME` runs `PATH`.
    fn hash_builtin(&mut self, args: &[Arg], mut state: State) -> Flow {
        // `hash -p /bin/rm ls`: later `ls` runs `/bin/rm`.
        if args.first().and_then(Arg::as_known) == Some("-p")
            && let (Some(path), Some(alias)) = (
                args.get(1).and_then(Arg::as_known),
                args.get(2).and_then(Arg::as_known),
            )
        {
            let fname = alias.to_owned();
            let body = format!("command {} \"$@\"", super::param::shell_quote(path));
            let body = self.parse_script(&body);
            Rc::make_mut(&mut state.functions).insert(
                fname,
                Func {
                    body,
                    exported: false,
                },
            );
        }
        Flow::either(state)
    }

    fn cd(&mut self, args: &[Arg], state: State, push: bool) -> Flow {
        let operands: Vec<&Arg> = args
            .iter()
            .skip_while(|a| matches!(a.as_known(), Some(t) if t.starts_with('-') && t.len() > 1))
            .collect();
        let target: Value = match operands.first() {
            None => binding_value(&state.get("HOME", &self.known)),
            Some(Arg::Unknown(from)) => Value::text(Text::any(from.clone())),
            Some(Arg::Field(v)) => {
                if v.as_known() == Some("-") {
                    match &state.oldpwd {
                        Some(old) => old.clone(),
                        None => Value::unknown(),
                    }
                } else {
                    v.clone()
                }
            }
        };
        let mut candidates = Vec::new();
        for t in target.candidates() {
            match t.as_known() {
                Some("") => candidates.extend(state.cwd.candidates().iter().cloned()),
                Some(path) if path.starts_with('/') => {
                    candidates.push(Text::lit(&super::path::normalize(path)));
                }
                Some(path) => {
                    // `CDPATH` (when the command sets it) is searched first
                    // for a name not starting with `.` or `..`.
                    if !path.starts_with("./")
                        && !path.starts_with("../")
                        && path != "."
                        && path != ".."
                    {
                        for base in self.cdpath(&state) {
                            candidates.push(Text::lit(&super::path::join(&base, path)));
                        }
                    }
                    for c in state.cwd.candidates() {
                        match c.as_known() {
                            Some(cwd) => candidates.push(Text::lit(&super::path::join(cwd, path))),
                            None => candidates.push(Text::any(Sources::none())),
                        }
                    }
                }
                None => candidates.push(Text::any(t.sources())),
            }
        }
        // `/`, the home directory and its ancestors exist: a `cd` there
        // cannot fail (as `cd -` back to where the shell was cannot).
        let surely = candidates.iter().all(|c| {
            c.as_known()
                .is_some_and(|p| p == "/" || super::path::is_ancestor_or_self(p, &self.known.home))
        }) || operands.first().is_some_and(|a| {
            a.as_known() == Some("-") && state.oldpwd.as_ref().is_some_and(|o| !o.has_any())
        });
        let new_cwd = Value::from_candidates(candidates).unwrap_or_else(Value::unknown);
        let mut ok = state.clone();
        ok.oldpwd = Some(state.cwd.clone());
        if push {
            Rc::make_mut(&mut ok.dirstack).push(state.cwd.clone());
        }
        ok.cwd = new_cwd;
        Flow {
            ok: Some(ok),
            fail: (!surely).then_some(state),
            jumps: Vec::new(),
        }
    }

    /// The absolute entries of a `CDPATH` the command line set (one from
    /// the environment is not known, and is not followed).
    fn cdpath(&self, state: &State) -> Vec<String> {
        let var = state.get("CDPATH", &self.known);
        let mut out = Vec::new();
        for b in &var.vals {
            if let Binding::Str(t) = b
                && let Some(text) = t.as_known()
            {
                for entry in text.split(':').filter(|e| e.starts_with('/')) {
                    if !out.iter().any(|o| o == entry) {
                        out.push(entry.to_owned());
                    }
                }
            }
        }
        out
    }

    /// `source FILE`/`. FILE` (command `index`): FILE's text, when this
    /// command line made it known, runs in this shell.
    fn source(&mut self, args: &[Arg], state: State, index: Option<usize>) -> (Flow, Output) {
        let Some(file) = args.first() else {
            return (Flow::fail(state), Output::empty());
        };
        let script = self.script_file_text(file, &state);
        let mut inner = state;
        let saved_positional = inner.positional.clone();
        if args.len() > 1 {
            inner.positional = Some(Rc::new(
                args.iter()
                    .skip(1)
                    .filter_map(|a| match a {
                        Arg::Field(v) => Some(v.clone()),
                        Arg::Unknown(_) => None,
                    })
                    .collect(),
            ));
        }
        let Some(text) = script else {
            return (Flow::either(inner), Output::unknown(Sources::none()));
        };
        let scripts = self.value_scripts(&text);
        let (mut flow, out) = self.run_scripts_in_shell(scripts, inner, index);
        if args.len() > 1 {
            for s in [flow.ok.as_mut(), flow.fail.as_mut()].into_iter().flatten() {
                s.positional = saved_positional.clone();
            }
        }
        (flow, out)
    }

    /// The text of a script file `arg` names, for a shell to run: what this
    /// command line wrote there ([`Self::file_text`]).
    pub(crate) fn script_file_text(&self, arg: &Arg, state: &State) -> Option<Value> {
        self.file_text(arg, state).and_then(written_part)
    }

    /// The contents of a file named by `arg` when this command line made
    /// them known: standard input, a process substitution, a file written
    /// earlier.
    pub(crate) fn file_text(&self, arg: &Arg, state: &State) -> Option<Value> {
        self.file_text_through(arg, state, true)
    }

    /// [`Self::file_text`]; `through_fds`: a `/dev/fd/N` the command opened
    /// for reading on a file (`3<f.sh`, `3< <(…)`) holds that file's text.
    /// Followed once: the file an opened descriptor names is not itself
    /// read through another descriptor, so the lookup ends.
    fn file_text_through(&self, arg: &Arg, state: &State, through_fds: bool) -> Option<Value> {
        let from = arg.sources();
        if !from.is_empty()
            && let Some(out) = self.proc_outputs.iter().find(|o| o.from == from)
        {
            return out.text.clone();
        }
        let path = arg.as_known()?;
        if matches!(path, "/dev/stdin" | "-" | "/proc/self/fd/0" | "/dev/fd/0") {
            return state.stdin.text.clone();
        }
        // `/dev/fd/N` of a descriptor the command opened on known text.
        if let Some(n) = path
            .strip_prefix("/dev/fd/")
            .or_else(|| path.strip_prefix("/proc/self/fd/"))
            .and_then(|n| n.parse::<u32>().ok())
            && let Some(opened) = state.fds.get(&n)
        {
            return match opened.op {
                RedirectOp::HereString | RedirectOp::HereDoc => Some(opened.target.clone()),
                RedirectOp::Read if through_fds => {
                    self.file_text_through(&Arg::Field(opened.target.clone()), state, false)
                }
                _ => None,
            };
        }
        let absolute = super::path::absolute(path, &state.cwd)?;
        state.files.get(&absolute).cloned()
    }

    fn exec_builtin(&mut self, argv: Vec<Arg>, call: &Call<'_>, state: State) -> (Flow, Output) {
        let mut k = 1;
        while let Some(a) = argv.get(k) {
            match a.as_known() {
                Some("-c" | "-l") => k += 1,
                Some("-a") => k += 2,
                Some("--") => {
                    k += 1;
                    break;
                }
                _ => break,
            }
        }
        let rest: Vec<Arg> = argv.iter().skip(k).cloned().collect();
        // `exec {fd}>x.sh` reads as a word `{fd}` and a redirection of the
        // default descriptor: bash opens the lowest free descriptor from
        // 10 and stores its number in `fd` (`exec {fd}>&-` closes it).
        let named = match rest.as_slice() {
            [word] => word.as_known().and_then(named_fd),
            _ => None,
        };
        if rest.is_empty() || (named.is_some() && call.redirects.len() == 1) {
            // `exec 3<>/dev/tcp/h/80`, `exec < file`, `exec 3>x.sh`: for
            // the rest of the shell.
            let mut state = state;
            let mut redirects = call.redirects.to_vec();
            if let Some(name) = named {
                let closes = redirects.iter().any(|r| r.target.as_known() == Some("-"));
                let fd = match closes {
                    true => binding_value(&state.get(name, &self.known))
                        .as_known()
                        .and_then(|t| t.parse::<u32>().ok()),
                    false => (10..1024).find(|n| !state.fds.contains_key(n)),
                };
                let Some(fd) = fd else {
                    // An unknown descriptor: what is written through it
                    // stays unknown.
                    state.assign(name, Binding::Str(Text::any(Sources::none())), &self.known);
                    return (Flow::either(state), Output::empty());
                };
                if !closes {
                    state.assign(name, Binding::Str(Text::lit(&fd.to_string())), &self.known);
                }
                for r in &mut redirects {
                    r.fd = fd;
                }
            }
            for r in &redirects {
                self.open_fd(r, &mut state);
                if r.fd == 0 {
                    state.stdin.from.extend(&r.target.sources());
                }
            }
            // `exec` without a program prints nothing; what its `>x.sh`
            // leaves in the file is nothing yet ([`Self::remember_files`]).
            return (Flow::ok(state), Output::empty());
        }
        let (_, out) = self.program(rest, call.assigns, call.redirects, state);
        (Flow::dead(), out)
    }

    /// `exec`'s redirection `r` for the rest of the shell: a descriptor
    /// copied from another (`4>&1`) takes what that one is open on now,
    /// so restoring it later (`exec >&4`) reopens the original; a file
    /// opened for writing is emptied (`>`) or kept (`>>`) now, and what is
    /// written through the descriptor later adds to it.
    fn open_fd(&mut self, r: &Redirect, state: &mut State) {
        let fds = Rc::make_mut(&mut state.fds);
        if r.op == RedirectOp::Duplicate {
            match r.target.as_known() {
                Some("-") => {
                    fds.remove(&r.fd);
                }
                Some(n) => match n.parse::<u32>().ok().and_then(|n| fds.get(&n)).cloned() {
                    // Back onto what it was open on at the start.
                    Some(open)
                        if open.op == RedirectOp::Duplicate
                            && open.target.as_known() == Some(&*r.fd.to_string()) =>
                    {
                        fds.remove(&r.fd);
                    }
                    Some(open) => {
                        fds.insert(r.fd, Redirect { fd: r.fd, ..open });
                    }
                    None if n == r.fd.to_string() => {}
                    None => {
                        fds.insert(r.fd, r.clone());
                    }
                },
                None => {
                    fds.insert(r.fd, r.clone());
                }
            }
            return;
        }
        fds.insert(r.fd, r.clone());
        if !r.op.writes() {
            return;
        }
        let Some(path) = file_path(r, &state.cwd) else {
            return;
        };
        let files = Rc::make_mut(&mut state.files);
        match r.op {
            RedirectOp::Write | RedirectOp::Clobber | RedirectOp::WriteAll => {
                files.insert(path, Value::known(""));
            }
            RedirectOp::Append | RedirectOp::AppendAll | RedirectOp::ReadWrite => {
                files
                    .entry(path)
                    .or_insert_with(|| Value::text(Text::any(Sources::none())));
            }
            RedirectOp::Read
            | RedirectOp::Duplicate
            | RedirectOp::HereString
            | RedirectOp::HereDoc => {}
        }
    }

    fn command_builtin(&mut self, args: Vec<Arg>, call: &Call<'_>, state: State) -> (Flow, Output) {
        let mut k = 0;
        while let Some(a) = args.get(k) {
            match a.as_known() {
                Some("-v" | "-V") => {
                    return (Flow::either(state), Output::unknown(Sources::none()));
                }
                Some("-p") => k += 1,
                Some("--") => {
                    k += 1;
                    break;
                }
                _ => break,
            }
        }
        let rest: Vec<Arg> = args.into_iter().skip(k).collect();
        let Some(name) = rest.first().and_then(Arg::as_known).map(str::to_owned) else {
            if rest.is_empty() {
                return (Flow::ok(state), Output::empty());
            }
            return self.program(rest, call.assigns, call.redirects, state);
        };
        if !name.contains('/') && is_builtin(&name) {
            // `command command …`: one level, and one copy, a word.
            if !self.charge_copy(&rest) {
                return (Flow::either(state), Output::unknown(Sources::none()));
            }
            return self
                .nested(|this| this.builtin(&name, rest, call, state.clone()))
                .unwrap_or_else(|| (Flow::either(state), Output::unknown(Sources::none())));
        }
        self.program(rest, call.assigns, call.redirects, state)
    }

    fn declare(&mut self, keyword: &str, args: &[Arg], simple: &Simple, state: &mut State) {
        let mut exported = keyword == "export";
        let mut functions = false;
        let mut nameref = false;
        let mut array = false;
        let mut local = keyword == "local";
        for a in args {
            let Some(t) = a.as_known() else { continue };
            if let Some(flags) = t
                .strip_prefix('-')
                .filter(|f| !f.is_empty() && !f.contains('='))
            {
                exported |= flags.contains('x');
                array |= flags.contains('a') || flags.contains('A');
                functions |= flags.contains('f') || flags.contains('F');
                nameref |= keyword != "export" && flags.contains('n');
                if flags.contains('g') {
                    local = false;
                }
            } else if !t.starts_with('+') {
                break;
            }
        }
        let in_function = !state.calls.is_empty();
        let local = (local || keyword == "declare" || keyword == "typeset") && in_function;
        for w in &simple.words {
            match w {
                ArgAst::Assign(assign) => {
                    if local {
                        remember_local(state, &assign.name);
                    }
                    if nameref {
                        self.name_reference(assign, state);
                        continue;
                    }
                    self.apply_assign(assign, state, exported);
                    // `declare -a c='(rm -rf /)'`: a quoted compound value is
                    // still a compound assignment for an array.
                    if array && let AssignValue::Scalar(word) = &assign.value {
                        let value = self.expand_value(word, state);
                        if let Some(text) = value.as_known()
                            && text.starts_with('(')
                            && text.ends_with(')')
                        {
                            let script = format!("{}={text}", assign.name);
                            let (flow, _) = self.run_script(&script, state.clone(), None, false);
                            if let Some(after) = flow.ok.or(flow.fail) {
                                *state = after;
                            }
                        }
                    }
                }
                ArgAst::Word(_) => {}
            }
        }
        // Names without a value: `export X`, `local y`, `export -f f`.
        for a in args {
            let Some(t) = a.as_known() else { continue };
            if t.starts_with('-') || t.starts_with('+') || t.contains('=') {
                continue;
            }
            if functions {
                if let Some(f) = Rc::make_mut(&mut state.functions).get_mut(t) {
                    f.exported |= exported;
                }
                continue;
            }
            if local {
                remember_local(state, t);
                let exported_flag = state.get(t, &self.known).exported;
                state.set(t, Var::one(Binding::Unset, exported_flag || exported));
            } else if exported {
                let mut var = state.get(t, &self.known);
                var.exported = true;
                state.set(t, var);
            }
        }
    }

    /// `declare -n NAME=TARGET`: `NAME` now stands for `TARGET`. A target
    /// that is not one known name makes `NAME` unknown.
    fn name_reference(&mut self, assign: &super::ast::Assign, state: &mut State) {
        let target = self.assign_value(assign, state);
        let refs = Rc::make_mut(&mut state.refs);
        refs.remove(&assign.name);
        match target.as_known().filter(|t| is_reference_target(t)) {
            Some(t) if t != assign.name => {
                let t = t.to_owned();
                Rc::make_mut(&mut state.refs).insert(assign.name.clone(), t);
            }
            _ => state.set(
                &assign.name,
                Var::one(Binding::Unknown(target.sources()), false),
            ),
        }
    }

    fn set_builtin(&mut self, args: &[Arg], state: &mut State) {
        let mut k = 0;
        while let Some(a) = args.get(k) {
            let Some(t) = a.as_known() else {
                state.positional = None;
                return;
            };
            if t == "--" {
                k += 1;
                break;
            }
            if t == "-o" || t == "+o" {
                let on = t == "-o";
                if let Some(opt) = args.get(k + 1).and_then(Arg::as_known) {
                    if opt == "noglob" {
                        state.opts.noglob = on;
                    }
                    k += 2;
                    continue;
                }
                return;
            }
            if let Some(flags) = t.strip_prefix('-').or_else(|| t.strip_prefix('+')) {
                if t == "-" || t == "+" {
                    k += 1;
                    break;
                }
                if flags.contains('f') {
                    state.opts.noglob = t.starts_with('-');
                }
                k += 1;
                continue;
            }
            break;
        }
        if k < args.len() || args.get(k.saturating_sub(1)).and_then(Arg::as_known) == Some("--") {
            let rest: Vec<Arg> = args.iter().skip(k).cloned().collect();
            state.positional = if rest.iter().all(|a| matches!(a, Arg::Field(_))) {
                Some(Rc::new(
                    rest.into_iter()
                        .filter_map(|a| match a {
                            Arg::Field(v) => Some(v),
                            Arg::Unknown(_) => None,
                        })
                        .collect(),
                ))
            } else {
                None
            };
        }
    }

    fn shopt(&mut self, args: &[Arg], state: &mut State) {
        let mut on = None;
        for a in args {
            match a.as_known() {
                Some("-s") => on = Some(true),
                Some("-u") => on = Some(false),
                Some(opt) => {
                    let Some(v) = on else { continue };
                    let o = &mut state.opts;
                    match opt {
                        "dotglob" => o.dotglob = v,
                        "nullglob" => o.nullglob = v,
                        "nocaseglob" => o.nocaseglob = v,
                        "globstar" => o.globstar = v,
                        "expand_aliases" => o.expand_aliases = v,
                        "lastpipe" => o.lastpipe = v,
                        _ => {}
                    }
                }
                None => {}
            }
        }
    }

    fn read(&mut self, args: &[Arg], state: &mut State, index: Option<usize>) -> Flow {
        let ReadOptions {
            mut names,
            raw,
            array,
            delim,
            from_fd,
            known_words,
        } = read_options(args);
        if !known_words {
            return self.read_unknown(&names, array.as_deref(), state, index);
        }
        if names.is_empty() && array.is_none() {
            names.push("REPLY".to_owned());
        }
        let text = if from_fd {
            None
        } else {
            state
                .stdin
                .text
                .as_ref()
                .and_then(|v| v.as_known().map(str::to_owned))
        };
        let Some(text) = text else {
            let flow = self.read_unknown(&names, array.as_deref(), state, index);
            // Input that never ends (`yes | while read l`) always has
            // another line: the read succeeds, but for the snapshot (a
            // function named `read` there runs instead), as `true`.
            if !from_fd
                && index.is_some_and(|i| super::endless::reads_endless_input(&self.commands, i))
            {
                self.snapshot_statuses += 1;
            }
            return flow;
        };
        if text.is_empty() {
            for n in &names {
                state.assign(n, Binding::Str(Text::default()), &self.known);
            }
            return Flow::fail(state.clone());
        }
        let (line, rest, complete) = match text.find(delim) {
            Some(at) => (
                text.get(..at).unwrap_or("").to_owned(),
                text.get(at + delim.len_utf8()..).unwrap_or("").to_owned(),
                true,
            ),
            None => (text.clone(), String::new(), false),
        };
        state.stdin.text = Some(Value::known(&rest));
        let line = if raw { line } else { unescape_read(&line) };
        let ifs = binding_value(&state.get("IFS", &self.known));
        let ifs = ifs.as_known().unwrap_or(" \t\n").to_owned();
        if let Some(arr) = array {
            let items: Vec<Text> = split_ifs(&line, &ifs, usize::MAX)
                .into_iter()
                .map(|s| Text::lit(&s))
                .collect();
            state.assign(&arr, Binding::Arr(Rc::new(items)), &self.known);
        } else {
            let parts = split_ifs(&line, &ifs, names.len());
            for (i, n) in names.iter().enumerate() {
                let v = parts.get(i).cloned().unwrap_or_default();
                state.assign(n, Binding::Str(Text::lit(&v)), &self.known);
            }
        }
        if complete {
            Flow::ok(state.clone())
        } else {
            Flow::fail(state.clone())
        }
    }

    fn read_unknown(
        &mut self,
        names: &[String],
        array: Option<&str>,
        state: &mut State,
        index: Option<usize>,
    ) -> Flow {
        let from = input_sources(state, index);
        for n in names.iter().map(String::as_str).chain(array) {
            state.assign(n, Binding::Unknown(from.clone()), &self.known);
        }
        Flow::either(state.clone())
    }

    fn mapfile(&mut self, args: &[Arg], state: &mut State, index: Option<usize>) {
        let mut strip = false;
        let mut name = "MAPFILE".to_owned();
        let mut k = 0;
        while let Some(a) = args.get(k) {
            k += 1;
            match a.as_known() {
                Some("-t") => strip = true,
                Some("-d" | "-n" | "-O" | "-s" | "-u" | "-C" | "-c") => k += 1,
                Some(t) if !t.starts_with('-') => name = t.to_owned(),
                _ => {}
            }
        }
        let binding = match state.stdin.text.as_ref().and_then(Value::as_known) {
            Some(text) => {
                let items: Vec<Text> = text
                    .split_inclusive('\n')
                    .map(|l| Text::lit(if strip { l.trim_end_matches('\n') } else { l }))
                    .collect();
                Binding::Arr(Rc::new(items))
            }
            None => Binding::Unknown(input_sources(state, index)),
        };
        state.stdin.text = Some(Value::known(""));
        state.assign(&name, binding, &self.known);
    }

    /// What a command prints when that is statically known: `echo`,
    /// `printf`, `pwd`, `cat` of known input.
    pub(crate) fn printed_by(&self, argv: &[Arg], state: &State) -> Output {
        let name = argv
            .first()
            .and_then(Arg::as_known)
            .map(|n| n.rsplit('/').next().unwrap_or(n));
        let args = argv.get(1..).unwrap_or(&[]);
        let text = match name {
            Some("echo") => super::printf::echo(args),
            Some("printf") if printf_var(args).is_none() => {
                super::printf::format(args, &self.known)
            }
            // Builtins that print nothing when used this way: `cd DIR`
            // (`cd -` prints the directory), `:`, `true`, assignments.
            Some("cd") if !args.iter().any(|a| a.as_known().is_none_or(|w| w == "-")) => {
                Some(Value::known(""))
            }
            Some(":" | "true" | "false" | "shift" | "unset") => Some(Value::known("")),
            Some("export" | "declare" | "typeset" | "local" | "readonly")
                if !args.is_empty()
                    && args.iter().all(|a| {
                        a.as_known()
                            .is_some_and(|w| !w.starts_with('-') || w.len() > 1 && !w.contains('p'))
                    }) =>
            {
                Some(Value::known(""))
            }
            Some("pwd") => state.cwd.candidates().first().map(|c| {
                let mut t = c.clone();
                t.push_str("\n");
                Value::text(t)
            }),
            Some("cat") if args.is_empty() => {
                return Output {
                    text: state.stdin.text.clone(),
                    items: state.stdin.items.clone(),
                    from: state.stdin.from.clone(),
                };
            }
            Some("cat") => self.cat_files(args, state),
            Some(program) if let Some(d) = super::decode::decoding(program, args) => {
                self.decoded_text(&d, state)
            }
            Some("find") => {
                return Output {
                    text: None,
                    items: Some(super::runners::find_items(args, state)),
                    from: Sources::none(),
                };
            }
            Some(program @ ("dirname" | "basename" | "realpath" | "readlink")) => {
                super::printed::paths(program, args, state)
            }
            Some("tr") => super::printed::tr(args, state),
            Some(program) if let Some(copied) = super::printed::copied_input(program, args) => {
                match copied {
                    super::printed::Copied::File(file) => self.file_text(&file, state),
                    super::printed::Copied::Stdin => {
                        return Output {
                            text: state.stdin.text.clone(),
                            items: state.stdin.items.clone(),
                            from: state.stdin.from.clone(),
                        };
                    }
                }
            }
            _ => None,
        };
        let items = glob_items(name, args);
        match text {
            Some(t) => Output {
                text: Some(t),
                items,
                from: Sources::none(),
            },
            None => Output::unknown(Sources::none()),
        }
    }

    /// What `cat FILE…` prints: the files' texts joined, a file nobody
    /// knows a hole in the text (`echo 'rm -rf /' | cat - f > x.sh` still
    /// writes the known line); unknown when no file's text is known or an
    /// option is given (`-n`, `-A` change the text).
    fn cat_files(&self, args: &[Arg], state: &State) -> Option<Value> {
        // A word that is or may be an option (`$X` could be `-n`).
        let option = |a: &Arg| match a {
            Arg::Field(v) => v.candidates().iter().any(|t| {
                let head = t.known_prefix();
                match t.as_known() {
                    Some(w) => w.starts_with('-') && w.len() > 1 && w != "-u",
                    None => head.is_empty() || head.starts_with('-'),
                }
            }),
            Arg::Unknown(_) => true,
        };
        if args
            .iter()
            .any(|a| option(a) && self.file_text(a, state).is_none())
        {
            return None;
        }
        let files: Vec<&Arg> = args.iter().filter(|a| a.as_known() != Some("-u")).collect();
        let texts: Vec<Option<Value>> = files.iter().map(|a| self.file_text(a, state)).collect();
        if texts.iter().all(Option::is_none) {
            return None;
        }
        let mut all = Some(Value::known(""));
        for (a, t) in files.iter().zip(texts) {
            let t = Some(t.unwrap_or_else(|| Value::text(Text::any(a.sources()))));
            all = match (all, t) {
                (Some(x), Some(y)) => {
                    let mut m = super::value::Value::known("");
                    m = super::interp::concat_values(
                        &x,
                        &y,
                        &mut super::budget::Meter::new(self.meter.limits),
                    )
                    .unwrap_or(m);
                    Some(m)
                }
                _ => None,
            };
        }
        all
    }

    /// What a decoder (`base64 -d`, …) prints for its file or standard
    /// input, when that text is known and decodes.
    fn decoded_text(&self, d: &super::decode::Decoding<'_>, state: &State) -> Option<Value> {
        let input = match d.file {
            Some(file) => self.file_text(file, state),
            None => state.stdin.text.clone(),
        };
        input
            .as_ref()
            .and_then(Value::as_known)
            .and_then(|text| super::decode::decode(d.decoder, text))
            .map(|text| Value::known(&text))
    }

    /// Script text for arguments joined by spaces (`eval a b`), one per
    /// combination of candidates, with unknown text as placeholders.
    ///
    /// At most `max_candidates` combinations (more is recorded). Every byte
    /// copied is charged to `max_expansion_bytes`: an argument with several
    /// candidates copies each combination so far, and thousands of them
    /// once copied quadratically (a 281-byte `env -S` line took 2.8 s).
    /// Once the budget is spent there is no script at all, never a prefix
    /// of one: dropped trailing words could make a harmless command read
    /// as a destructive one.
    pub(crate) fn args_script(&mut self, args: &[Arg]) -> Vec<(String, Vec<(String, Sources)>)> {
        let limit = usize::try_from(self.meter.limits.max_candidates).unwrap_or(usize::MAX);
        let mut joined: Vec<Text> = vec![Text::default()];
        for (k, a) in args.iter().enumerate() {
            let unknown;
            let alts: &[Text] = match a {
                Arg::Field(v) => v.candidates(),
                Arg::Unknown(from) => {
                    unknown = [Text::any(from.clone())];
                    &unknown
                }
            };
            let separator = u64::from(k > 0);
            if let [only] = alts {
                // One way: every combination grows in place, nothing copied
                // but the word itself.
                let copies = u64::try_from(joined.len()).unwrap_or(u64::MAX);
                if !self
                    .meter
                    .expansion(copies.saturating_mul(only.bytes().saturating_add(separator)))
                {
                    return Vec::new();
                }
                for t in &mut joined {
                    if k > 0 {
                        t.push_str(" ");
                    }
                    t.append(only);
                }
                continue;
            }
            let mut next = Vec::new();
            'ways: for j in &joined {
                for alt in alts {
                    if next.len() >= limit {
                        self.meter
                            .exceeded("max_candidates", candidates_detail(&self.meter));
                        break 'ways;
                    }
                    let bytes = j
                        .bytes()
                        .saturating_add(separator)
                        .saturating_add(alt.bytes());
                    if !self.meter.expansion(bytes) {
                        return Vec::new();
                    }
                    let mut t = j.clone();
                    if k > 0 {
                        t.push_str(" ");
                    }
                    t.append(alt);
                    next.push(t);
                }
            }
            joined = next;
        }
        joined.into_iter().map(|t| self.hole_script(&t)).collect()
    }

    /// Script texts for a value (each candidate).
    pub(crate) fn value_scripts(&mut self, v: &Value) -> Vec<(String, Vec<(String, Sources)>)> {
        v.candidates().iter().map(|t| self.hole_script(t)).collect()
    }

    /// A text as script source: holes become placeholder variables.
    fn hole_script(&mut self, t: &Text) -> (String, Vec<(String, Sources)>) {
        let mut out = String::new();
        let mut holes = Vec::new();
        for seg in &t.segs {
            match seg {
                Seg::Lit(s) => out.push_str(s),
                Seg::Any(from) => {
                    let next = self.holes.len();
                    let number = *self.holes.entry(from.clone()).or_insert(next);
                    let name = format!("{}{number}", super::interp::HOLE_PREFIX);
                    out.push_str("${");
                    out.push_str(&name);
                    out.push('}');
                    holes.push((name, from.clone()));
                }
                Seg::Star => out.push('*'),
                Seg::Quest => out.push('?'),
                Seg::Class(c) => {
                    out.push('[');
                    out.push_str(c);
                    out.push(']');
                }
            }
        }
        (out, holes)
    }

    /// One argument as script source (for alias bodies).
    fn arg_script(&mut self, arg: &Arg, state: &mut State) -> String {
        let scripts = self.args_script(std::slice::from_ref(arg));
        let mut out = String::new();
        if let Some((s, holes)) = scripts.into_iter().next() {
            for (name, from) in holes {
                state.set(&name, Var::one(Binding::Unknown(from), true));
            }
            out = super::param::shell_quote(&s);
            if s.contains("${") {
                out = format!("\"{s}\"");
            }
        }
        out
    }

    /// Runs each script text in `state` (joined); `child`: a new shell.
    pub(crate) fn run_scripts(
        &mut self,
        scripts: Vec<(String, Vec<(String, Sources)>)>,
        state: State,
        parent: Option<usize>,
        child: bool,
    ) -> (Flow, Output) {
        let mut flow = Flow::default();
        let mut out: Option<Output> = None;
        if scripts.is_empty() {
            return (Flow::ok(state), Output::empty());
        }
        for (text, holes) in scripts {
            // Each script costs a state copy and a join even when the
            // meter refuses its statements: charge it, and once the budget
            // or the deadline is spent (already recorded as incomplete),
            // the rest are unknown — one join, not one per script.
            let refused = !self.meter.script_step();
            let (f, o) = if refused {
                (
                    Flow::either(state.clone()),
                    Output::unknown(Sources::none()),
                )
            } else {
                let mut s = state.clone();
                for (name, from) in holes {
                    s.set(&name, Var::one(Binding::Unknown(from), true));
                }
                self.run_script(&text, s, parent, child)
            };
            flow.ok = join(flow.ok, f.ok, &self.known);
            flow.fail = join(flow.fail, f.fail, &self.known);
            flow.jumps.extend(f.jumps);
            out = Some(match out {
                None => o,
                Some(prev) => either(prev, o),
            });
            if refused {
                break;
            }
        }
        (flow, out.unwrap_or_else(Output::empty))
    }

    /// Runs script texts in this shell for builtin `index` (`eval`,
    /// `source`). A text being run now (`eval "$BASH_EXECUTION_STRING"`
    /// or `. f.sh` inside that very script) starts itself again: the
    /// builtin is marked recursive and the text not followed; the other
    /// texts still run.
    fn run_scripts_in_shell(
        &mut self,
        scripts: Vec<(String, Vec<(String, Sources)>)>,
        state: State,
        index: Option<usize>,
    ) -> (Flow, Output) {
        let (running, rest): (Vec<_>, Vec<_>) = scripts
            .into_iter()
            .partition(|(text, _)| self.script_running(text).is_some());
        let innermost = running
            .iter()
            .filter_map(|(text, _)| self.script_running(text))
            .map(|f| (f.guards, f.asyncs))
            .max();
        let Some(frame_guards) = innermost else {
            return self.run_scripts(rest, state, None, false);
        };
        if !self.mark_recursive(index, frame_guards) {
            self.note(RERUN_UNMARKED);
        }
        if rest.is_empty() {
            return (Flow::either(state), Output::unknown(Sources::none()));
        }
        let (mut flow, out) = self.run_scripts(rest, state.clone(), None, false);
        flow.ok = join(flow.ok, Some(state.clone()), &self.known);
        flow.fail = join(flow.fail, Some(state), &self.known);
        (flow, either(out, Output::unknown(Sources::none())))
    }

    /// Parses and runs one script string one nesting level deeper.
    pub(crate) fn run_script(
        &mut self,
        text: &str,
        state: State,
        parent: Option<usize>,
        child: bool,
    ) -> (Flow, Output) {
        // The same script run again from inside itself (`bash $0` in the
        // file, `bash ./f.sh`, a copy of it): recursion, recorded on the
        // command that starts it and not followed again. Compared by text,
        // before any parse, so that no parse (a cached one, one the budget
        // refused) decides what counts as the same script.
        if let Some(frame_guards) = self.script_running(text).map(|f| (f.guards, f.asyncs)) {
            if !self.mark_recursive(parent, frame_guards) {
                self.note(RERUN_UNMARKED);
            }
            return (Flow::either(state), Output::unknown(Sources::none()));
        }
        let limit = self.meter.limits.max_script_nesting;
        if self.ctx.depth >= limit {
            self.meter.exceeded(
                "max_script_nesting",
                format!("script strings (`bash -c`, `eval`, piped scripts) nest deeper than {limit} levels"),
            );
            return (Flow::either(state), Output::unknown(Sources::none()));
        }
        let (text, stmt) = self.parse_script_text(text);
        let saved = self.ctx;
        self.ctx.depth += 1;
        if parent.is_some() {
            self.ctx.parent = parent;
        }
        let (flow, out) = self.exec_frame(Body::Script(text), &stmt, state.clone());
        self.ctx = saved;
        if child {
            // A child shell: nothing it did stays.
            let ok = flow.ok.is_some() || flow.jumps.iter().any(|j| matches!(j, Jump::Return(_)));
            let fail = flow.fail.is_some();
            let f = match (ok, fail) {
                (true, false) => Flow::ok(state),
                (false, true) => Flow::fail(state),
                _ => Flow::either(state),
            };
            return (f, out);
        }
        (flow, out)
    }
}

/// What of a file's known contents the command wrote: where it may still
/// hold what it held before (a join keeps that as a bare hole), that part
/// is a file from disk like any the command did not write, which a shell
/// runs unfollowed. A hole widened past the candidate budget stays, so the
/// analysis of what runs it is incomplete.
fn written_part(v: Value) -> Option<Value> {
    let written = v
        .into_candidates()
        .into_iter()
        .filter(|t| !matches!(t.segs.as_slice(), [Seg::Any(from)] if !from.is_widened()));
    Value::from_candidates(written.collect())
}

/// The note of a script started again from inside itself where no
/// command stands for the start (so none can carry [`Command::recursive`]):
/// not followed, so not judged.
///
/// [`Command::recursive`]: super::command::Command::recursive
const RERUN_UNMARKED: &str =
    "a script starts itself again where no command can be marked (the run is not followed)";

/// A local name reference ends with the call: `name` stands again for
/// what it stood for in `before` (the value restored next is the name's
/// own, not its target's).
fn restore_reference(s: &mut State, before: &State, name: &str) {
    if s.refs.get(name) != before.refs.get(name) {
        let refs = Rc::make_mut(&mut s.refs);
        match before.refs.get(name) {
            Some(target) => refs.insert(name.to_owned(), target.clone()),
            None => refs.remove(name),
        };
    }
}

fn remember_local(state: &mut State, name: &str) {
    let previous = state.vars.get(name).cloned();
    let locals = Rc::make_mut(&mut state.locals);
    if let Some(frame) = locals.last_mut()
        && !frame.iter().any(|(n, _)| n == name)
    {
        frame.push((name.to_owned(), previous));
    }
}

fn has_substitution(a: &super::ast::Assign) -> bool {
    let word_has = |w: &super::ast::WordAst| {
        w.parts
            .iter()
            .any(|p| matches!(p, super::ast::Part::Cmd { .. }))
    };
    match &a.value {
        super::ast::AssignValue::Scalar(w) => word_has(w),
        super::ast::AssignValue::Array(items) => items.iter().any(word_has),
    }
}

fn either(a: Output, b: Output) -> Output {
    let mut from = a.from;
    from.extend(&b.from);
    let text = match (a.text, b.text) {
        (Some(mut x), Some(y)) => {
            x.merge(&y);
            Some(x)
        }
        _ => None,
    };
    Output {
        text,
        items: None,
        from,
    }
}

/// `printf -v VAR …`: the variable.
fn printf_var(args: &[Arg]) -> Option<String> {
    if args.first().and_then(Arg::as_known) == Some("-v") {
        return args.get(1).and_then(Arg::as_known).map(str::to_owned);
    }
    None
}

/// Where unknown text `read`/`mapfile` (command `index`) takes from its
/// input comes from: the commands writing that input, and the builtin
/// itself, which reads whatever file its input is redirected from (`read
/// -r k < ~/.aws/credentials; curl -d "$k" …` carries the file).
fn input_sources(state: &State, index: Option<usize>) -> Sources {
    let mut from = state.stdin.from.clone();
    if let Some(i) = index {
        from.insert(i);
    }
    from
}

/// `read` without `-r`: a backslash escapes the next character.
fn unescape_read(line: &str) -> String {
    let mut out = String::new();
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        if c == '\\' {
            if let Some(n) = chars.next() {
                out.push(n);
            }
        } else {
            out.push(c);
        }
    }
    out
}

/// Splits a line by `IFS` into at most `max` parts (the last keeps the rest).
pub(crate) fn split_ifs(line: &str, ifs: &str, max: usize) -> Vec<String> {
    let is_ifs = |c: char| ifs.contains(c);
    let trimmed = line.trim_matches(|c: char| is_ifs(c) && c.is_whitespace());
    let mut out = Vec::new();
    let mut rest = trimmed;
    while !rest.is_empty() {
        if out.len() + 1 >= max {
            out.push(
                rest.trim_end_matches(|c: char| is_ifs(c) && c.is_whitespace())
                    .to_owned(),
            );
            break;
        }
        match rest.find(is_ifs) {
            Some(at) => {
                out.push(rest.get(..at).unwrap_or("").to_owned());
                rest = rest.get(at..).unwrap_or("");
                let mut chars = rest.chars();
                // One non-whitespace separator with the whitespace around it.
                let mut skipped_hard = false;
                while let Some(c) = chars.clone().next() {
                    if !is_ifs(c) {
                        break;
                    }
                    if !c.is_whitespace() {
                        if skipped_hard {
                            break;
                        }
                        skipped_hard = true;
                    }
                    chars.next();
                }
                rest = chars.as_str();
            }
            None => {
                out.push(rest.to_owned());
                break;
            }
        }
    }
    out
}

/// What `read`'s options ask for.
struct ReadOptions {
    names: Vec<String>,
    raw: bool,
    array: Option<String>,
    delim: char,
    from_fd: bool,
    /// False when a word is unknown: then `names` (so far) get unknown values.
    known_words: bool,
}

/// `read [-r] [-a array] [-d delim] [-u fd] [-p/-t/-n/-N/-i value] names…`.
fn read_options(args: &[Arg]) -> ReadOptions {
    let mut o = ReadOptions {
        names: Vec::new(),
        raw: false,
        array: None,
        delim: '\n',
        from_fd: false,
        known_words: true,
    };
    let mut k = 0;
    while let Some(a) = args.get(k) {
        k += 1;
        let Some(t) = a.as_known() else {
            o.known_words = false;
            return o;
        };
        match t {
            "-r" => o.raw = true,
            "-a" => o.array = args.get(k).and_then(Arg::as_known).map(str::to_owned),
            "-d" => {
                o.delim = args
                    .get(k)
                    .and_then(Arg::as_known)
                    .map(|d| d.chars().next().unwrap_or('\0'))
                    .unwrap_or('\n');
            }
            "-u" => o.from_fd = true,
            "-p" | "-t" | "-n" | "-N" | "-i" => {}
            _ if t.starts_with('-') && t.len() > 1 => {
                o.raw |= t.contains('r');
            }
            _ => o.names.push(t.to_owned()),
        }
        if matches!(t, "-a" | "-d" | "-u" | "-p" | "-t" | "-n" | "-N" | "-i") {
            k += 1;
        }
    }
    o
}

/// `popd`: back to the directory on top of the stack.
fn popd(mut state: State) -> Flow {
    let top = Rc::make_mut(&mut state.dirstack).pop();
    state.oldpwd = Some(state.cwd.clone());
    state.cwd = top.unwrap_or_else(Value::unknown);
    Flow::either(state)
}

/// `unset [-f|-v|-n] NAME…`.
fn unset(args: &[Arg], mut state: State) -> Flow {
    let mut functions = false;
    for a in args {
        match a.as_known() {
            Some("-f") => functions = true,
            Some("-v" | "-n") => functions = false,
            Some(n) if functions => {
                Rc::make_mut(&mut state.functions).remove(n);
            }
            Some(n) => state.unset(n),
            None => {}
        }
    }
    Flow::either(state)
}

/// `shift [N]`: fails when there are fewer than N positional parameters.
fn shift(args: &[Arg], mut state: State) -> Flow {
    let n = match args.first() {
        Some(a) => a.as_known().and_then(|t| t.parse::<usize>().ok()),
        None => Some(1),
    };
    match (n, &state.positional) {
        // A pattern among the first N may stand for any number of words.
        (Some(n), Some(list)) if list.iter().take(n).any(Value::has_pattern) => {
            state.positional = None;
            Flow::either(state)
        }
        (Some(n), Some(list)) if n <= list.len() => {
            state.positional = Some(Rc::new(list.iter().skip(n).cloned().collect()));
            Flow::ok(state)
        }
        (Some(_), Some(_)) => Flow::fail(state),
        _ => {
            state.positional = None;
            Flow::either(state)
        }
    }
}

/// `alias NAME=VALUE…` and `unalias NAME…`.
fn aliases(name: &str, args: &[Arg], mut state: State) -> Flow {
    for a in args {
        if name == "alias" {
            if let Some((n, v)) = a.as_known().and_then(|t| t.split_once('=')) {
                Rc::make_mut(&mut state.aliases).insert(n.to_owned(), v.to_owned());
            }
        } else if let Some(n) = a.as_known() {
            Rc::make_mut(&mut state.aliases).remove(n);
        }
    }
    Flow::either(state)
}

/// A name a reference may point to: a variable name (an array element,
/// `A[0]`, is left unknown).
fn is_reference_target(text: &str) -> bool {
    let mut bytes = text.bytes();
    bytes
        .next()
        .is_some_and(|b| b.is_ascii_alphabetic() || b == b'_')
        && bytes.all(|b| b.is_ascii_alphanumeric() || b == b'_')
}

/// The items `echo` or `printf '%s\n'` prints when an argument is a
/// pathname pattern (`printf '%s\n' ~/* | xargs -d '\n' rm -rf`): each
/// item is one of the arguments, so a program reading them (`xargs`) gets
/// each match of the pattern.
fn glob_items(name: Option<&str>, args: &[Arg]) -> Option<Value> {
    let printed: &[Arg] = match name {
        Some("echo") => {
            let flags = args
                .iter()
                .take_while(|a| {
                    a.as_known().is_some_and(|t| {
                        t.len() > 1
                            && t.starts_with('-')
                            && t.chars().skip(1).all(|c| matches!(c, 'n' | 'e' | 'E'))
                    })
                })
                .count();
            args.get(flags..).unwrap_or(&[])
        }
        Some("printf") => {
            let k = usize::from(args.first().and_then(Arg::as_known) == Some("--"));
            let format = args.get(k).and_then(Arg::as_known)?;
            if !matches!(format, "%s\\n" | "%s\\0" | "%s " | "%s\\t" | "%s\n") {
                return None;
            }
            args.get(k + 1..).unwrap_or(&[])
        }
        _ => return None,
    };
    let globbed = printed
        .iter()
        .any(|a| a.candidates().iter().any(Text::is_pattern));
    if !globbed {
        return None;
    }
    let mut all = Vec::new();
    for a in printed {
        match a {
            Arg::Field(v) => all.extend(v.candidates().iter().cloned()),
            Arg::Unknown(from) => all.push(Text::any(from.clone())),
        }
    }
    Value::from_candidates(all)
}

/// A command word that expands to itself ([`super::interp::literal_word`]).
fn literal_arg(word: &ArgAst) -> bool {
    match word {
        ArgAst::Word(w) => super::interp::literal_word(w),
        ArgAst::Assign(_) => false,
    }
}

impl Interp {
    /// A `test`, `[` or `[[` the interpreter reads both ways: when its
    /// literal `words` decide it (`[ 0 -lt 1 ]`, `[[ 1 ]]`), its status is
    /// the user's snapshot's alone, as `true`'s (it is not a runtime
    /// condition, a loop on it never ends), yet both ways are still read,
    /// so no command reached before is unreached now (`[ 1 -eq 2 ] && rm
    /// -rf /` is judged, as `false && rm -rf /`); otherwise it is a
    /// condition that may differ between runs ([`Frame::branched`]).
    ///
    /// [`Frame::branched`]: super::interp::Frame::branched
    pub(crate) fn literal_test(&mut self, literal: bool, words: Option<Vec<&str>>, double: bool) {
        match words
            .filter(|_| literal)
            .and_then(|w| super::printf::test_words(&w, double))
        {
            Some(_) => self.snapshot_statuses += 1,
            None => self.branch_frames(),
        }
    }
}

impl Interp {
    /// Output written through a descriptor vouch does not know: every
    /// file `exec` opened for writing may have got it, a hole in its text.
    fn unknown_writes(&mut self, st: &mut State, out: Option<&Output>) {
        let hole = Value::text(Text::any(out.map(|o| o.from.clone()).unwrap_or_default()));
        let paths: Vec<String> = st
            .fds
            .values()
            .filter(|r| r.op.writes())
            .filter_map(|r| file_path(r, &st.cwd))
            .collect();
        for path in paths {
            self.append_to_file(st, path, &hole);
        }
    }
}

/// The file a redirection names, absolute, when its target is known.
fn file_path(r: &Redirect, cwd: &Value) -> Option<String> {
    r.target
        .as_known()
        .and_then(|p| super::path::absolute(p, cwd))
}

/// `NAME` of a `{NAME}` word (`exec {fd}>x.sh`).
fn named_fd(word: &str) -> Option<&str> {
    let name = word.strip_prefix('{')?.strip_suffix('}')?;
    let mut bytes = name.bytes();
    let first = bytes.next()?;
    ((first.is_ascii_alphabetic() || first == b'_')
        && bytes.all(|b| b.is_ascii_alphanumeric() || b == b'_'))
    .then_some(name)
}

/// `>&$fd` is parsed as writing both outputs to a file, but bash reads a
/// word that expands to a number as the descriptor to copy.
fn as_duplicate(r: &Redirect) -> Redirect {
    let digits = r
        .target
        .as_known()
        .is_some_and(|t| !t.is_empty() && t.bytes().all(|b| b.is_ascii_digit()));
    match r.op == RedirectOp::WriteAll && digits {
        true => Redirect {
            op: RedirectOp::Duplicate,
            ..r.clone()
        },
        false => r.clone(),
    }
}
