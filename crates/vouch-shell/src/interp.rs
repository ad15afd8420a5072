//! The abstract interpreter: runs a parsed script the way bash would, over
//! values that may be known, candidates or unknown, and records every
//! simple command that would start.
//!
//! Control flow is followed, not flattened: `a && b` runs `b` in the state
//! `a` succeeded with, `a || b` in the one it failed with, a `cd` that may
//! fail leaves both directories as candidates, loops over known lists are
//! unrolled, other loops run to a fixpoint, function bodies are inlined
//! with their arguments, subshells and pipeline stages fork the state and
//! drop it afterwards. Every step is charged to the [`Meter`].

use std::collections::HashMap;
use std::hash::BuildHasher as _;
use std::rc::Rc;

use super::ShellError;
use super::ast::{ArmEnd, CaseArm, Part, Redir, Stmt, WordAst};
use super::budget::Meter;
use super::command::{Command, CommandKind, Origin, Redirect, RedirectOp};
use super::state::{Binding, Known, State};
use super::value::{Arg, Sources, Text, Value};

/// What a statement wrote to its standard output.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Output {
    /// The whole text, when statically known.
    pub text: Option<Value>,
    /// Each item (line) is one of these, when only their shape is known.
    pub items: Option<Value>,
    /// The commands whose output it is.
    pub from: Sources,
}

impl Output {
    pub(crate) fn empty() -> Self {
        Output {
            text: Some(Value::known("")),
            items: None,
            from: Sources::none(),
        }
    }

    pub(crate) fn unknown(from: Sources) -> Self {
        Output {
            text: None,
            items: None,
            from,
        }
    }

    fn is_empty(&self) -> bool {
        self.text.as_ref().and_then(Value::as_known) == Some("")
    }

    /// This output followed by `next`.
    pub(crate) fn then(self, next: Output, meter: &mut Meter) -> Output {
        if self.is_empty() && self.from.is_empty() {
            return next;
        }
        if next.is_empty() && next.from.is_empty() {
            return self;
        }
        // Known text next to unknown bytes stays known where it is: what
        // reads it (a shell fed `{ echo 'rm -rf /'; cat f; }`) sees the
        // known lines and a hole from the unknown output's commands.
        let text = match (self.text, next.text) {
            (Some(a), Some(b)) => concat_values(&a, &b, meter),
            (Some(a), None) => concat_values(&a, &Value::text(Text::any(next.from.clone())), meter),
            (None, Some(b)) => concat_values(&Value::text(Text::any(self.from.clone())), &b, meter),
            (None, None) => None,
        };
        let mut from = self.from;
        from.extend(&next.from);
        Output {
            text,
            items: None,
            from,
        }
    }

    /// One of two outputs (branches): candidates of both.
    fn either(self, other: Output) -> Output {
        let mut from = self.from;
        from.extend(&other.from);
        let text = match (self.text, other.text) {
            (Some(mut a), Some(b)) => {
                a.merge(&b);
                Some(a)
            }
            _ => None,
        };
        Output {
            text,
            items: None,
            from,
        }
    }
}

/// Every candidate of `a` followed by every candidate of `b`.
pub(crate) fn concat_values(a: &Value, b: &Value, meter: &mut Meter) -> Option<Value> {
    let mut out: Vec<Text> = Vec::new();
    for x in a.candidates() {
        for y in b.candidates() {
            if out.len() as u64 >= meter.limits.max_candidates {
                meter.exceeded("max_candidates", candidates_detail(meter));
                return Value::from_candidates(out);
            }
            let mut t = x.clone();
            t.append(y);
            out.push(t);
        }
    }
    Value::from_candidates(out)
}

/// What the `max_candidates` budget note says.
pub(crate) fn candidates_detail(meter: &Meter) -> String {
    format!(
        "a value has more than {} candidates",
        meter.limits.max_candidates
    )
}

/// Where control goes besides the next statement.
#[derive(Debug, Clone)]
pub(crate) enum Jump {
    Break(u32, State),
    Continue(u32, State),
    Return(State),
}

/// How a statement ended: the states in which it succeeded or failed (none:
/// it cannot end that way), and jumps out of it.
#[derive(Debug, Clone, Default)]
pub(crate) struct Flow {
    pub ok: Option<State>,
    pub fail: Option<State>,
    pub jumps: Vec<Jump>,
}

impl Flow {
    /// Exit status unknown: the same state either way.
    pub(crate) fn either(state: State) -> Self {
        Flow {
            ok: Some(state.clone()),
            fail: Some(state),
            jumps: Vec::new(),
        }
    }

    pub(crate) fn ok(state: State) -> Self {
        Flow {
            ok: Some(state),
            fail: None,
            jumps: Vec::new(),
        }
    }

    pub(crate) fn fail(state: State) -> Self {
        Flow {
            ok: None,
            fail: Some(state),
            jumps: Vec::new(),
        }
    }

    /// Control never comes back (`exit`, `exec`).
    pub(crate) fn dead() -> Self {
        Flow::default()
    }
}

/// Joins optional states.
pub(crate) fn join(a: Option<State>, b: Option<State>, known: &Known) -> Option<State> {
    match (a, b) {
        (Some(mut x), Some(y)) => {
            x.join(&y, known);
            Some(x)
        }
        (x, None) => x,
        (None, y) => y,
    }
}

/// Context for commands being recorded.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Ctx {
    pub origin: Origin,
    pub background: bool,
    pub in_pipeline: bool,
    pub parent: Option<usize>,
    /// Script-string nesting.
    pub depth: u32,
    /// How many conditions whose outcome is runtime data enclose this
    /// point, counted from the command line ([`Command::guarded`] compares
    /// it with the count where a [`Frame`] began).
    pub guards: u32,
    /// Inside a conservative reading ([`Command::conservative`]).
    pub conservative: bool,
    /// The `&` jobs and coprocesses enclosing this point: a command
    /// started in the background *by* a body (a loop's, a function's) is
    /// one recorded at more than the body began with, not one that is
    /// backgrounded because the whole body is (`while :; do sleep 9;
    /// done &`).
    pub jobs: u32,
    /// The same, with pipelines of more than one stage counted too.
    pub asyncs: u32,
}

pub(crate) struct Interp {
    pub known: Known,
    pub meter: Meter,
    pub commands: Vec<Command>,
    /// Per command: what it prints, for pipes and substitutions.
    pub printed: Vec<Output>,
    pub errors: Vec<ShellError>,
    /// Redirections of enclosing compound statements.
    pub redirect_stack: Vec<Redirect>,
    pub ctx: Ctx,
    /// Known output of process substitutions, by the commands producing it.
    pub proc_outputs: Vec<Output>,
    /// Commands of an output process substitution (`>(…)`) waiting for the
    /// command whose words made them: what it writes is their input. The
    /// origin of that command and the range of their indices.
    pub pending_feeds: Vec<(super::command::Origin, std::ops::Range<usize>)>,
    /// Text nobody knows inside a re-parsed script string: the placeholder
    /// number of each distinct origin. One origin keeps one name, so a
    /// script re-run (a loop around `eval`) reads the same text and leaves
    /// the same state as the run before instead of one more variable each
    /// time (the states of a loop would never repeat, and every join would
    /// grow with the runs before it).
    pub holes: HashMap<Sources, usize, foldhash::fast::RandomState>,
    /// Behaviour a static reading cannot bound.
    pub notes: Vec<String>,
    /// How many times a `true`, `false` or `:` gave a status the user's
    /// shell snapshot could change (a function of that name): a loop on
    /// `while :` is endless unless such a function says otherwise.
    pub(crate) snapshot_statuses: usize,
    /// Functions defined, in order (for [`Interp::uncalled_functions`]).
    pub defined: Vec<(String, Rc<Stmt>)>,
    /// Function bodies a call ran (a name may have had several bodies).
    pub called: Vec<Rc<Stmt>>,
    /// Commands recorded, by the hash of their record: the first index
    /// recorded with each hash (records are compared, so a collision costs
    /// a scan, never a wrong answer).
    dedupe: HashMap<u64, usize, foldhash::fast::RandomState>,
    /// Script strings parsed so far, by text: a script run again (a loop
    /// around `eval` or `bash -c`) is parsed once, and a function it defines
    /// keeps one body, so the states of two runs compare equal by pointer.
    /// The text is kept shared, for the [`Frame`]s that run it.
    scripts: HashMap<Rc<str>, Rc<Stmt>, foldhash::fast::RandomState>,
    hasher: foldhash::fast::RandomState,
    commands_full: bool,
    /// The function bodies and scripts being run, innermost last: a script
    /// or function that runs one of them again runs itself
    /// ([`Command::recursive`]).
    pub(crate) frames: Vec<Frame>,
    /// Per command: [`Ctx::jobs`] where it was recorded.
    pub(crate) job_depths: Vec<u32>,
    /// [`Ctx::guards`] where each `return`, `break` or `continue` ran, the
    /// deepest kept per statement of the lists being run (see `seq`).
    pub(crate) jump_guards: Vec<u32>,
}

/// A function body or script being run, and how many runtime conditions
/// enclosed the point where it began: a command is guarded within the
/// body when more enclose it ([`Command::guarded`]), so a guard around
/// the first run (`echo … > f.sh && bash f.sh`) bounds none of the runs
/// the body starts itself.
#[derive(Debug)]
pub(crate) struct Frame {
    pub body: Body,
    pub guards: u32,
    /// [`Ctx::jobs`] and [`Ctx::asyncs`] where the frame began.
    pub jobs: u32,
    pub asyncs: u32,
    /// A command started in the background since the frame began (in it
    /// or in anything it ran): each run of the body leaves a process.
    pub spawned: bool,
    /// A `wait` ran since the frame began: the processes it left ended.
    pub waited: bool,
    /// A condition (`if`, `&&`, `||`, `case`, a loop, a test) or a
    /// `return`/`exit` ran since the frame began. vouch may know its
    /// outcome for this run, but not for the runs the body starts itself
    /// with other arguments (`[ -n "$1" ] || return; …; shift; f "$@"`):
    /// such a recursion may end.
    pub branched: bool,
}

/// What a [`Frame`] runs.
#[derive(Debug)]
pub(crate) enum Body {
    /// A function's body, by its parsed statement (two definitions share
    /// one body only when they are the same definition).
    Function(Rc<Stmt>),
    /// A script, by its text: the same text is the same program however
    /// it was reached (a file run again through `$0`, `./f.sh` or a copy,
    /// `eval "$BASH_EXECUTION_STRING"`), whichever parse it came from.
    Script(Rc<str>),
}

/// Placeholder variables standing for unknown text in script strings.
pub(crate) const HOLE_PREFIX: &str = "__vouch_hole_";

impl Interp {
    pub(crate) fn new(known: Known, meter: Meter) -> Self {
        Interp {
            known,
            meter,
            commands: Vec::new(),
            printed: Vec::new(),
            errors: Vec::new(),
            redirect_stack: Vec::new(),
            ctx: Ctx {
                origin: Origin::Command,
                background: false,
                in_pipeline: false,
                parent: None,
                depth: 0,
                guards: 0,
                conservative: false,
                jobs: 0,
                asyncs: 0,
            },
            proc_outputs: Vec::new(),
            pending_feeds: Vec::new(),
            holes: HashMap::default(),
            scripts: HashMap::default(),
            notes: Vec::new(),
            snapshot_statuses: 0,
            defined: Vec::new(),
            called: Vec::new(),
            dedupe: HashMap::default(),
            hasher: foldhash::fast::RandomState::default(),
            commands_full: false,
            frames: Vec::new(),
            job_depths: Vec::new(),
            jump_guards: Vec::new(),
        }
    }

    /// The frame running script `text`, when it is being run now (a
    /// script that runs it again runs itself).
    pub(crate) fn script_running(&self, text: &str) -> Option<&Frame> {
        self.frames
            .iter()
            .find(|f| matches!(&f.body, Body::Script(t) if **t == *text))
    }

    /// The frame running function body `body`, when it is being run now.
    pub(crate) fn function_running(&self, body: &Rc<Stmt>) -> Option<&Frame> {
        self.frames
            .iter()
            .find(|f| matches!(&f.body, Body::Function(b) if Rc::ptr_eq(b, body)))
    }

    /// Whether the current point is reached only past a runtime condition
    /// since `frame` began (none given: since the command line began).
    /// INVARIANT: frames nest, so a point guarded within an inner frame is
    /// guarded within every outer one.
    pub(crate) fn guarded_since(&self, frame: Option<&Frame>) -> bool {
        self.ctx.guards > frame.map_or(0, |f| f.guards)
    }

    /// Records `note` once.
    pub(crate) fn note(&mut self, note: &str) {
        if !self.notes.iter().any(|n| n == note) {
            self.notes.push(note.to_owned());
        }
    }

    /// Runs `stmt` as `body` in a new frame that begins here.
    pub(crate) fn exec_frame(&mut self, body: Body, stmt: &Stmt, state: State) -> (Flow, Output) {
        self.frames.push(Frame {
            body,
            guards: self.ctx.guards,
            jobs: self.ctx.jobs,
            asyncs: self.ctx.asyncs,
            spawned: false,
            waited: false,
            branched: false,
        });
        let result = self.exec(stmt, state);
        self.frames.pop();
        result
    }

    /// Marks command `index` as one that runs again a body being run,
    /// guarded when the point is within `frame`, the frame it starts again.
    /// The record may stand for several runs (identical records are kept
    /// once): it stays unguarded once any of them is.
    /// Returns false when there is no command to mark.
    pub(crate) fn mark_recursive(&mut self, index: Option<usize>, frame: (u32, u32)) -> bool {
        let (frame_guards, frame_asyncs) = frame;
        let guarded = self.ctx.guards > frame_guards;
        let async_rerun = self.ctx.asyncs > frame_asyncs;
        let Some(cmd) = index.and_then(|i| self.commands.get_mut(i)) else {
            return false;
        };
        cmd.async_rerun |= async_rerun;
        if cmd.recursive {
            cmd.guarded &= guarded;
        } else {
            cmd.recursive = true;
            cmd.guarded = guarded;
        }
        true
    }

    /// One script string's statements, parsed at most once per analysis.
    /// A new text is charged to the parse budget before it is parsed
    /// ([`Meter::script_parse`]); past the budget it runs nothing, and the
    /// analysis is incomplete.
    pub(crate) fn parse_script(&mut self, text: &str) -> Rc<Stmt> {
        self.parse_script_text(text).1
    }

    /// [`Self::parse_script`], with the text as the analysis keeps it.
    pub(crate) fn parse_script_text(&mut self, text: &str) -> (Rc<str>, Rc<Stmt>) {
        if let Some((key, stmt)) = self.scripts.get_key_value(text) {
            return (Rc::clone(key), Rc::clone(stmt));
        }
        if !self.meter.script_parse(text.len()) {
            return (Rc::from(text), Rc::new(Stmt::Empty));
        }
        let parsed = super::syntax::parse(text, &mut self.meter);
        self.errors.extend(parsed.errors);
        let stmt = Rc::new(parsed.stmt);
        let key: Rc<str> = Rc::from(text);
        self.scripts.insert(Rc::clone(&key), Rc::clone(&stmt));
        (key, stmt)
    }

    /// Records a command (once: an identical one, met again in a loop or
    /// a second candidate, keeps its first index). `None` past the budget.
    /// The `>(…)` commands made while expanding the words of command
    /// `index` read what it writes (`cat key > >(curl -d @- …)`, `tee
    /// >(nc …) < key`).
    fn feed_process_substitutions(&mut self, origin: super::command::Origin, index: usize) {
        let pending = std::mem::take(&mut self.pending_feeds);
        for (from, range) in pending {
            if from != origin || range.contains(&index) {
                self.pending_feeds.push((from, range));
                continue;
            }
            for k in range {
                if let Some(c) = self.commands.get_mut(k) {
                    c.stdin_from.insert(index);
                }
            }
        }
    }

    pub(crate) fn emit(&mut self, mut cmd: Command, printed: Output) -> Option<usize> {
        cmd.origin = self.ctx.origin;
        cmd.background |= self.ctx.background;
        cmd.in_pipeline |= self.ctx.in_pipeline;
        cmd.depth = self.ctx.depth as usize;
        cmd.guarded |= self.guarded_since(self.frames.last());
        cmd.conservative |= self.ctx.conservative;
        if cmd.parent.is_none() {
            cmd.parent = self.ctx.parent;
        }
        // Before the record is merged with an identical one: each run of
        // a body counts.
        let waits = cmd.name() == Some("wait");
        // A `return` or `exit` past no runtime condition within the body
        // (`: || return`) leaves every run alike; a `test` judges itself.
        let leaves = matches!(cmd.name(), Some("return" | "exit"));
        let guards = self.ctx.guards;
        for frame in &mut self.frames {
            // Started in the background by the body, not with it.
            let spawned = self.ctx.jobs > frame.jobs;
            frame.spawned |= spawned;
            frame.waited |= waits && !spawned;
            frame.branched |= leaves && guards > frame.guards && !spawned;
        }
        let hash = self.hasher.hash_one(&cmd);
        if let Some(&index) = self.dedupe.get(&hash) {
            if self.commands.get(index) == Some(&cmd) {
                return Some(index);
            }
            if let Some(index) = self.commands.iter().position(|c| *c == cmd) {
                return Some(index);
            }
        }
        if cmd.is_widened() {
            self.meter
                .exceeded("max_candidates", candidates_detail(&self.meter));
        }
        if self.commands.len() as u64 >= self.meter.limits.max_commands {
            if !self.commands_full {
                self.commands_full = true;
                let limit = self.meter.limits.max_commands;
                self.meter.exceeded(
                    "max_commands",
                    format!("the command runs more than {limit} simple commands"),
                );
            }
            return None;
        }
        let index = self.commands.len();
        let origin = cmd.origin;
        self.dedupe.entry(hash).or_insert(index);
        self.commands.push(cmd);
        self.job_depths.push(self.ctx.jobs);
        let mut printed = printed;
        printed.from.insert(index);
        self.printed.push(printed);
        self.feed_process_substitutions(origin, index);
        Some(index)
    }

    /// What command `index` prints.
    pub(crate) fn output_of(&self, index: Option<usize>) -> Output {
        match index.and_then(|i| self.printed.get(i)) {
            Some(out) => out.clone(),
            None => Output::unknown(Sources::none()),
        }
    }

    /// A command record at this point, with the effective redirections.
    pub(crate) fn command(
        &self,
        state: &State,
        argv: Vec<Arg>,
        kind: CommandKind,
        assignments: Vec<(String, Value)>,
        own: &[Redirect],
    ) -> Command {
        let mut redirects: Vec<Redirect> = Vec::new();
        for r in state.fds.values() {
            redirects.push(r.clone());
        }
        redirects.extend(self.redirect_stack.iter().cloned());
        for r in own {
            // `>&3` writes where descriptor 3 points.
            if r.op == RedirectOp::Duplicate
                && let Some(fd) = r.target.as_known().and_then(|t| t.parse::<u32>().ok())
                && let Some(opened) = state.fds.get(&fd)
            {
                let mut effective = opened.clone();
                effective.fd = r.fd;
                redirects.push(effective);
            }
            redirects.push(r.clone());
        }
        Command {
            argv,
            cwd: state.cwd.clone(),
            kind,
            parent: None,
            assignments,
            redirects,
            stdin_from: state.stdin.from.clone(),
            stdin_text: state.stdin.text.clone(),
            background: false,
            recursive: false,
            guarded: false,
            in_pipeline: false,
            async_rerun: false,
            function: state.calls.last().cloned(),
            depth: 0,
            origin: Origin::Command,
            conservative: false,
        }
    }

    /// Runs `stmt` in `state`, as reached only past a runtime condition
    /// when `guarded` (or when it already is).
    pub(crate) fn exec_guarded(
        &mut self,
        guarded: bool,
        stmt: &Stmt,
        state: State,
    ) -> (Flow, Output) {
        let saved = self.ctx.guards;
        self.ctx.guards = self.ctx.guards.saturating_add(u32::from(guarded));
        let result = self.exec(stmt, state);
        self.ctx.guards = saved;
        result
    }

    /// Runs `stmt` in `state`.
    pub(crate) fn exec(&mut self, stmt: &Stmt, state: State) -> (Flow, Output) {
        if !self.meter.step() || !self.meter.enter() {
            return (Flow::either(state), Output::unknown(Sources::none()));
        }
        let result = self.exec_stmt(stmt, state);
        self.meter.leave();
        result
    }

    /// Runs `f` one nesting level deeper, charged before it runs: `None`
    /// (recorded as `max_syntax_depth`) when no level is left. Every
    /// recursion over the input that does not pass through
    /// [`Interp::exec`] or an expansion part (a wrapper's command, a
    /// builtin that runs a builtin, `coproc`) goes through here, so the
    /// one depth count bounds the stack whatever the input nests.
    pub(crate) fn nested<T>(&mut self, f: impl FnOnce(&mut Self) -> T) -> Option<T> {
        if !self.meter.enter() {
            return None;
        }
        let out = f(self);
        self.meter.leave();
        Some(out)
    }

    /// Charges a copy of `argv` against `max_expansion_bytes` (its text,
    /// and [`super::expand::PIECE_COST`] a word): false (recorded) once
    /// spent. A command that hands its words on to another (a wrapper,
    /// `builtin`, `command`) copies them once a level, so a chain of them
    /// over thousands of words is charged for what it copies — the
    /// square of the line, not its length, were it free.
    pub(crate) fn charge_copy(&mut self, argv: &[Arg]) -> bool {
        let bytes = argv
            .iter()
            .map(|a| match a {
                Arg::Field(v) => v
                    .candidates()
                    .iter()
                    .map(Text::bytes)
                    .fold(0, u64::saturating_add),
                Arg::Unknown(_) => 1,
            })
            .fold(0, u64::saturating_add)
            .saturating_add(super::expand::PIECE_COST.saturating_mul(argv.len() as u64));
        self.meter.expansion(bytes)
    }

    /// [`Interp::exec`] one level down.
    fn exec_stmt(&mut self, stmt: &Stmt, state: State) -> (Flow, Output) {
        // `&&`, `||`, `if` and `while` branch unless their condition's
        // outcome is known from literal words ([`known_condition`]); a
        // `[[ … ]]` judges itself.
        let branches = match stmt {
            Stmt::And(cond, _) | Stmt::Or(cond, _) | Stmt::While { cond, .. } => {
                !known_condition(cond)
            }
            Stmt::If { branches, .. } => !branches.iter().all(|(c, _)| known_condition(c)),
            Stmt::For { .. } | Stmt::ArithFor { .. } | Stmt::Case { .. } | Stmt::Arith(_) => true,
            _ => false,
        };
        if branches {
            self.branch_frames();
        }
        match stmt {
            Stmt::Empty => (Flow::ok(state), Output::empty()),
            Stmt::Simple(simple) => self.simple(simple, state),
            Stmt::Pipeline(stages) => self.pipeline(stages, state),
            Stmt::Not(inner) => {
                let (flow, out) = self.exec(inner, state);
                let negated = Flow {
                    ok: flow.fail,
                    fail: flow.ok,
                    jumps: flow.jumps,
                };
                (negated, out)
            }
            Stmt::And(a, b) => self.and_or(a, b, state, true),
            Stmt::Or(a, b) => self.and_or(a, b, state, false),
            Stmt::Seq(list) => self.seq(list, state),
            Stmt::Background(inner) => {
                let saved = self.ctx;
                self.ctx.background = true;
                self.ctx.jobs = self.ctx.jobs.saturating_add(1);
                self.ctx.asyncs = self.ctx.asyncs.saturating_add(1);
                let (_, out) = self.exec(inner, state.clone());
                self.ctx = saved;
                (Flow::ok(state), Output::unknown(out.from))
            }
            Stmt::Subshell(inner) => {
                let (flow, out) = self.exec(inner, state.clone());
                let ok = flow.ok.is_some() || has_return(&flow);
                let fail = flow.fail.is_some();
                (status_flow(state, ok, fail), out)
            }
            Stmt::Group(inner) => self.exec(inner, state),
            Stmt::Redirected(inner, redirs) => self.redirected(inner, redirs, state),
            Stmt::If {
                branches,
                otherwise,
            } => self.if_stmt(branches, otherwise.as_deref(), state),
            Stmt::While { cond, body, until } => self.while_loop(cond, body, *until, state),
            Stmt::For { var, items, body } => self.for_loop(var, items.as_deref(), body, state),
            Stmt::ArithFor {
                init,
                cond,
                update,
                body,
            } => self.arith_for(init, cond, update, body, state),
            Stmt::Case { word, arms } => self.case(word, arms, state),
            Stmt::Function { name, body } => self.define_function(name, body, state),
            Stmt::Arith(expr) => {
                let mut state = state;
                let value = self.arith(expr, &mut state);
                let flow = match value {
                    Some(0) => Flow::fail(state),
                    Some(_) => Flow::ok(state),
                    None => Flow::either(state),
                };
                (flow, Output::empty())
            }
            Stmt::Test { words } => self.test_stmt(words, state),
        }
    }

    /// `[[ … ]]`: its words are expanded, and the names and expressions
    /// it reads evaluated; either status may follow.
    fn test_stmt(&mut self, words: &[WordAst], state: State) -> (Flow, Output) {
        let mut state = state;
        let values: Vec<Value> = words
            .iter()
            .map(|w| self.expand_value(w, &mut state))
            .collect();
        // `-v NAME` and arithmetic comparisons read a name or an
        // expression, whose subscript is expanded (`[[ -v
        // 'a[$(cmd)]' ]]`, `[[ $x -eq 1 ]]` with `x='a[$(cmd)]'`).
        for (k, v) in values.iter().enumerate() {
            let op = v.as_known().unwrap_or("");
            let (arithmetic, operands) = match op {
                "-v" | "-R" => (false, vec![k + 1]),
                "-eq" | "-ne" | "-lt" | "-le" | "-gt" | "-ge" => {
                    (true, vec![k.wrapping_sub(1), k + 1])
                }
                _ => (false, Vec::new()),
            };
            for at in operands {
                let Some(text) = values.get(at).and_then(Value::as_known) else {
                    continue;
                };
                if super::evaluated::runs_in_subscript(text) {
                    self.run_evaluated(text, &state, None);
                } else if arithmetic {
                    let _ = self.arith(text, &mut state);
                }
            }
        }
        let known: Option<Vec<&str>> = values.iter().map(Value::as_known).collect();
        self.literal_test(words.iter().all(literal_word), known, true);
        (Flow::either(state), Output::empty())
    }

    /// Marks the frames being run as having passed a condition whose
    /// outcome may differ in runs the body starts itself.
    pub(crate) fn branch_frames(&mut self) {
        for frame in &mut self.frames {
            frame.branched = true;
        }
    }

    /// `name() { … }`: the function exists from here on (and is remembered
    /// for [`Self::uncalled_functions`]).
    fn define_function(&mut self, name: &str, body: &Rc<Stmt>, state: State) -> (Flow, Output) {
        if !self
            .defined
            .iter()
            .any(|(n, b)| n == name && Rc::ptr_eq(b, body))
        {
            self.defined.push((name.to_owned(), Rc::clone(body)));
        }
        let mut state = state;
        Rc::make_mut(&mut state.functions).insert(
            name.to_owned(),
            super::state::Func {
                body: Rc::clone(body),
                exported: false,
            },
        );
        (Flow::ok(state), Output::empty())
    }

    fn and_or(&mut self, a: &Stmt, b: &Stmt, state: State, and: bool) -> (Flow, Output) {
        let statuses = self.snapshot_statuses;
        let (first, out_a) = self.exec(a, state);
        // A status only the user's snapshot could change (`true && f|f&`)
        // is no runtime condition: what follows is not guarded by it.
        let by_snapshot = self.snapshot_statuses > statuses;
        let (go, stay) = if and {
            (first.ok, first.fail)
        } else {
            (first.fail, first.ok)
        };
        let mut jumps = first.jumps;
        let surely = stay.is_none();
        let Some(go) = go else {
            let flow = if and {
                Flow {
                    ok: None,
                    fail: stay,
                    jumps,
                }
            } else {
                Flow {
                    ok: stay,
                    fail: None,
                    jumps,
                }
            };
            return (flow, out_a);
        };
        let (second, out_b) = self.exec_guarded(!surely && !by_snapshot, b, go);
        jumps.extend(second.jumps);
        let out = if surely {
            out_a.then(out_b, &mut self.meter)
        } else {
            let both = out_a.clone().then(out_b, &mut self.meter);
            out_a.either(both)
        };
        let flow = if and {
            Flow {
                ok: second.ok,
                fail: join(stay, second.fail, &self.known),
                jumps,
            }
        } else {
            Flow {
                ok: join(stay, second.ok, &self.known),
                fail: second.fail,
                jumps,
            }
        };
        (flow, out)
    }

    fn seq(&mut self, list: &[Stmt], state: State) -> (Flow, Output) {
        let mut current = Some(state);
        let mut last = Flow::default();
        let mut jumps = Vec::new();
        let mut out = Output::empty();
        // Past a statement that may have left (`[ -d "$d" ] || continue`,
        // `… || return`), the rest is reached only past a runtime condition.
        let mut guarded = false;
        let count = list.len();
        for (k, stmt) in list.iter().enumerate() {
            let Some(s) = current.take() else {
                break;
            };
            let mark = self.jump_guards.len();
            let base = self.ctx.guards.saturating_add(u32::from(guarded));
            let (flow, o) = self.exec_guarded(guarded, stmt, s);
            // Jumps taken past a runtime condition within the statement
            // guard the rest; one past a status only the user's snapshot
            // could change (`: || return`) does not, as `true && f|f&`.
            let deepest = self
                .jump_guards
                .get(mark..)
                .and_then(|g| g.iter().max().copied());
            self.jump_guards.truncate(mark);
            self.jump_guards.extend(deepest);
            guarded |= !flow.jumps.is_empty() && deepest.is_some_and(|g| g > base);
            out = out.then(o, &mut self.meter);
            jumps.extend(flow.jumps.iter().cloned());
            if k + 1 == count {
                last = flow;
            } else {
                // The states move on: a copy kept here would share every
                // table with the next statement's, and its first
                // assignment would copy the whole table (2,000
                // assignments took 1.3 s).
                let Flow {
                    ok,
                    fail,
                    jumps: own,
                } = flow;
                current = join(ok, fail, &self.known);
                last = Flow {
                    ok: None,
                    fail: None,
                    jumps: own,
                };
            }
        }
        last.jumps = jumps;
        (last, out)
    }

    fn pipeline(&mut self, stages: &[Stmt], state: State) -> (Flow, Output) {
        let saved = self.ctx;
        self.ctx.in_pipeline = stages.len() > 1;
        if stages.len() > 1 {
            self.ctx.asyncs = self.ctx.asyncs.saturating_add(1);
        }
        let mut input = state.stdin.clone();
        let mut last = (Flow::either(state.clone()), Output::empty());
        let count = stages.len();
        // Every stage runs in a subshell, but the files it writes stay:
        // `echo … | base64 -d > x.sh; bash x.sh`.
        let mut after = state.clone();
        for (k, stage) in stages.iter().enumerate() {
            let mut stage_state = state.clone();
            stage_state.stdin = input.clone();
            // The stages run at once: a file an earlier stage writes may
            // hold its old or its new text when a later one reads it
            // (`echo '…' | tee x.sh | bash` runs `bash x.sh` in that text).
            if after.files != state.files {
                stage_state.files = Rc::new(super::state::join_files(&state.files, &after.files));
            }
            let lastpipe = k + 1 == count && state.opts.lastpipe;
            let (flow, out) = self.exec(stage, stage_state);
            if let Some(written) = flow.ok.as_ref().or(flow.fail.as_ref()) {
                if written.files != state.files {
                    after.files = Rc::clone(&written.files);
                }
                if written.programs != state.programs {
                    after.programs = Rc::clone(&written.programs);
                }
            }
            input = super::state::Input {
                text: out.text.clone(),
                items: out.items.clone(),
                from: out.from.clone(),
            };
            if lastpipe {
                last = (flow, out);
            } else {
                let ok = flow.ok.is_some() || has_return(&flow);
                let fail = flow.fail.is_some();
                last = (status_flow(after.clone(), ok, fail), out);
            }
        }
        self.ctx = saved;
        last
    }

    fn redirected(&mut self, inner: &Stmt, redirs: &[Redir], state: State) -> (Flow, Output) {
        let mut state = state;
        let saved_stdin = state.stdin.clone();
        let (expanded, stdout) = self.redirects(redirs, &mut state);
        let pushed = expanded.len();
        self.redirect_stack.extend(expanded.iter().cloned());
        let (mut flow, out) = self.exec(inner, state);
        // `{ echo 'rm -rf /'; cat f; } > x.sh`: what the group wrote is
        // the file's text, as for a simple command.
        self.remember_files(&expanded, Some(&out), &mut flow);
        let new_len = self.redirect_stack.len().saturating_sub(pushed);
        self.redirect_stack.truncate(new_len);
        for s in [flow.ok.as_mut(), flow.fail.as_mut()].into_iter().flatten() {
            s.stdin = saved_stdin.clone();
        }
        let out = match stdout {
            super::expand::Stdout::Elsewhere => Output::empty(),
            super::expand::Stdout::Unknown => Output::unknown(Sources::none()),
            super::expand::Stdout::Output => out,
            super::expand::Stdout::OutputAndUnknown => {
                out.then(Output::unknown(Sources::none()), &mut self.meter)
            }
        };
        (flow, out)
    }

    fn if_stmt(
        &mut self,
        branches: &[(Stmt, Stmt)],
        otherwise: Option<&Stmt>,
        state: State,
    ) -> (Flow, Output) {
        let mut result = Flow::default();
        let mut out: Option<Output> = None;
        let mut current = Some(state);
        // Every branch so far surely failed its condition: what follows is
        // reached without a runtime condition.
        let mut sure = true;
        for (cond, body) in branches {
            let Some(s) = current.take() else { break };
            let statuses = self.snapshot_statuses;
            let (c, _) = self.exec_guarded(!sure, cond, s);
            let by_snapshot = self.snapshot_statuses > statuses;
            result.jumps.extend(c.jumps);
            let body_guarded = !sure || (c.fail.is_some() && !by_snapshot);
            sure &= c.ok.is_none();
            if let Some(go) = c.ok {
                let (b, o) = self.exec_guarded(body_guarded, body, go);
                out = Some(match out {
                    None => o,
                    Some(prev) => prev.either(o),
                });
                result.ok = join(result.ok, b.ok, &self.known);
                result.fail = join(result.fail, b.fail, &self.known);
                result.jumps.extend(b.jumps);
            }
            current = c.fail;
        }
        if let Some(rest) = current {
            match otherwise {
                Some(body) => {
                    let (b, o) = self.exec_guarded(!sure, body, rest);
                    out = Some(match out {
                        None => o,
                        Some(prev) => prev.either(o),
                    });
                    result.ok = join(result.ok, b.ok, &self.known);
                    result.fail = join(result.fail, b.fail, &self.known);
                    result.jumps.extend(b.jumps);
                }
                None => {
                    out = Some(match out {
                        None => Output::empty(),
                        Some(prev) => prev.either(Output::empty()),
                    });
                    result.ok = join(result.ok, Some(rest), &self.known);
                }
            }
        }
        (result, out.unwrap_or_else(Output::empty))
    }

    /// Collects the jumps of one loop body: breaks leave, continues go on.
    fn loop_jumps(
        &self,
        jumps: Vec<Jump>,
        exits: &mut Option<State>,
        next: &mut Option<State>,
        outer: &mut Vec<Jump>,
    ) {
        for jump in jumps {
            match jump {
                Jump::Break(1, s) => *exits = join(exits.take(), Some(s), &self.known),
                Jump::Continue(1, s) => *next = join(next.take(), Some(s), &self.known),
                Jump::Break(n, s) => outer.push(Jump::Break(n - 1, s)),
                Jump::Continue(n, s) => outer.push(Jump::Continue(n - 1, s)),
                Jump::Return(s) => outer.push(Jump::Return(s)),
            }
        }
    }

    fn while_loop(
        &mut self,
        cond: &Stmt,
        body: &Stmt,
        until: bool,
        state: State,
    ) -> (Flow, Output) {
        let first_command = self.commands.len();
        let mut exits: Option<State> = None;
        let mut outer = Vec::new();
        let mut current = state;
        let limit = self.meter.limits.max_loop_iterations;
        let mut converged = false;
        let mut endless_but_for_snapshot = false;
        // A loop's status is its last body command's (0 when the body never
        // ran): `while …; do false; done || X` runs X.
        let mut body_may_fail = false;
        for _ in 0..limit {
            let statuses = self.snapshot_statuses;
            let (c, _) = self.exec(cond, current.clone());
            let by_snapshot = self.snapshot_statuses > statuses;
            endless_but_for_snapshot |= by_snapshot;
            outer.extend(c.jumps.iter().cloned());
            let (go, stop) = if until {
                (c.fail, c.ok)
            } else {
                (c.ok, c.fail)
            };
            let exact = stop.is_none();
            exits = join(exits, stop, &self.known);
            let Some(go) = go else {
                converged = true;
                break;
            };
            let (b, _) = self.exec_guarded(!exact && !by_snapshot, body, go);
            body_may_fail |= b.fail.is_some();
            let mut next = join(b.ok, b.fail, &self.known);
            self.loop_jumps(b.jumps, &mut exits, &mut next, &mut outer);
            let Some(next) = next else {
                converged = true;
                break;
            };
            if exact {
                // The condition surely holds: follow iterations one by one
                // until the state repeats.
                if next == current {
                    converged = true;
                    break;
                }
                current = next;
                continue;
            }
            let mut widened = current.clone();
            widened.join(&next, &self.known);
            if widened == current {
                converged = true;
                break;
            }
            current = widened;
        }
        if !converged {
            self.meter.exceeded(
                "max_loop_iterations",
                format!("a loop runs more than {limit} iterations that change what it does"),
            );
            exits = join(exits, Some(current), &self.known);
        }
        if (exits.is_none() || endless_but_for_snapshot) && outer.is_empty() {
            self.note_background_spawning(first_command);
        }
        let flow = Flow {
            fail: exits.clone().filter(|_| body_may_fail),
            ok: exits,
            jumps: outer,
        };
        (flow, Output::unknown(Sources::none()))
    }

    /// For a loop that never ends: notes when its body (the commands from
    /// `first_command` on) starts background processes — ones it puts in
    /// the background itself, not the whole loop's being in one (`while
    /// :; do sleep 9; done &` runs one process at a time).
    fn note_background_spawning(&mut self, first_command: usize) {
        let here = self.ctx.jobs;
        let depths = &self.job_depths;
        let spawned_by_body = |k: usize| depths.get(k).is_some_and(|d| *d > here);
        if !(first_command..self.commands.len()).any(spawned_by_body) {
            return;
        }
        // Nothing in the body waits (`sleep`, `wait`, `read`, …): the
        // loop starts processes as fast as it can, without end.
        // `sleep 0` waits for nothing; `read` of input that never ends
        // (`yes | while read l`) has a line at once.
        let commands = &self.commands;
        let waits = commands.get(first_command..).is_some_and(|new| {
            new.iter().enumerate().any(|(k, c)| {
                !spawned_by_body(first_command + k)
                    && match c.name() {
                        Some("sleep") => !sleeps_for_nothing(c),
                        Some("read") => {
                            !super::endless::reads_endless_input(commands, first_command + k)
                        }
                        Some("wait" | "inotifywait" | "timeout" | "select") => true,
                        _ => false,
                    }
            })
        });
        let note = match waits {
            true => "a loop that never ends keeps starting background processes",
            false => super::command::ENDLESS_SPAWNING,
        };
        self.note(note);
    }

    fn for_loop(
        &mut self,
        var: &str,
        items: Option<&[WordAst]>,
        body: &Stmt,
        state: State,
    ) -> (Flow, Output) {
        let mut state = state;
        let list: Vec<Vec<Arg>> = match items {
            Some(words) => self.expand_argv_words(words, &mut state),
            None => vec![self.positional_args(&state)],
        };
        let limit = self.meter.limits.max_loop_iterations as usize;
        if let [only] = list.as_slice()
            && only.len() <= limit
            && only.iter().all(|a| matches!(a, Arg::Field(_)))
        {
            // A known list: one iteration per item, in order.
            let mut exits: Option<State> = None;
            let mut outer = Vec::new();
            let mut current = Some(state);
            // The loop's status is the last iteration's (0 without one).
            let mut last_may_fail = false;
            for item in only {
                let Some(mut s) = current.take() else { break };
                if let Arg::Field(value) = item {
                    s.assign_value(var, value, &self.known);
                }
                let (b, _) = self.exec(body, s);
                last_may_fail = b.fail.is_some();
                let mut next = join(b.ok, b.fail, &self.known);
                self.loop_jumps(b.jumps, &mut exits, &mut next, &mut outer);
                current = next;
            }
            let ok = join(exits, current, &self.known);
            let flow = Flow {
                fail: ok.clone().filter(|_| last_may_fail),
                ok,
                jumps: outer,
            };
            return (flow, Output::unknown(Sources::none()));
        }
        // Unknown items: the variable is any of them, the body runs any
        // number of times.
        let mut candidates: Vec<Text> = Vec::new();
        let mut unknown = Sources::none();
        let mut any_unknown = false;
        for shape in &list {
            for arg in shape {
                match arg {
                    Arg::Field(v) => candidates.extend(v.candidates().iter().cloned()),
                    Arg::Unknown(from) => {
                        any_unknown = true;
                        unknown.extend(from);
                    }
                }
            }
        }
        if any_unknown || list.len() != 1 {
            candidates.push(Text::any(unknown));
        }
        let value = Value::from_candidates(candidates).unwrap_or_else(Value::unknown);
        state.assign_value(var, &value, &self.known);
        let cond = Stmt::Empty;
        // Items of unknown number may be none: the body may not run.
        let saved = self.ctx.guards;
        self.ctx.guards = self.ctx.guards.saturating_add(u32::from(any_unknown));
        let result = self.fixpoint_body(&cond, body, state);
        self.ctx.guards = saved;
        result
    }

    /// A loop whose condition is unknown: the body runs until the state
    /// stops changing.
    fn fixpoint_body(&mut self, _cond: &Stmt, body: &Stmt, state: State) -> (Flow, Output) {
        let mut exits = Some(state.clone());
        let mut outer = Vec::new();
        let mut current = state;
        let limit = self.meter.limits.max_loop_iterations;
        let mut converged = false;
        // Any iteration may be the last, whose status is the loop's.
        let mut body_may_fail = false;
        for _ in 0..limit {
            let (b, _) = self.exec(body, current.clone());
            body_may_fail |= b.fail.is_some();
            let mut next = join(b.ok, b.fail, &self.known);
            self.loop_jumps(b.jumps, &mut exits, &mut next, &mut outer);
            let Some(next) = next else {
                converged = true;
                break;
            };
            let mut widened = current.clone();
            widened.join(&next, &self.known);
            exits = join(exits, Some(next), &self.known);
            if widened == current {
                converged = true;
                break;
            }
            current = widened;
        }
        if !converged {
            self.meter.exceeded(
                "max_loop_iterations",
                format!("a loop runs more than {limit} iterations that change what it does"),
            );
        }
        let flow = Flow {
            fail: exits.clone().filter(|_| body_may_fail),
            ok: exits,
            jumps: outer,
        };
        (flow, Output::unknown(Sources::none()))
    }

    fn arith_for(
        &mut self,
        init: &str,
        cond: &str,
        update: &str,
        body: &Stmt,
        state: State,
    ) -> (Flow, Output) {
        let mut state = state;
        self.arith(init, &mut state);
        let first_command = self.commands.len();
        // `for ((;;))`, `for ((i=0; 1; i++))`: nothing in the condition
        // can end the loop, only a jump out of the body.
        let endless = cond.trim().is_empty() || cond.trim().parse::<i64>().is_ok_and(|n| n != 0);
        let limit = self.meter.limits.max_loop_iterations;
        let mut exits: Option<State> = None;
        let mut body_may_fail = false;
        let mut outer = Vec::new();
        let mut current = Some(state);
        for _ in 0..limit {
            let Some(mut s) = current.take() else {
                break;
            };
            let value = if cond.trim().is_empty() {
                Some(1)
            } else {
                self.arith(cond, &mut s)
            };
            match value {
                Some(0) => {
                    exits = join(exits, Some(s), &self.known);
                    break;
                }
                Some(_) => {
                    let before = endless.then(|| s.clone());
                    let (b, _) = self.exec(body, s);
                    body_may_fail |= b.fail.is_some();
                    let mut next = join(b.ok, b.fail, &self.known);
                    self.loop_jumps(b.jumps, &mut exits, &mut next, &mut outer);
                    if let Some(mut n) = next {
                        self.arith(update, &mut n);
                        // An endless loop back where it began repeats
                        // itself: nothing more to follow.
                        if before.as_ref() == Some(&n) {
                            break;
                        }
                        current = Some(n);
                    }
                }
                None => {
                    let (flow, out) = self.fixpoint_body(&Stmt::Empty, body, s);
                    let mut flow = flow;
                    flow.ok = join(flow.ok, exits, &self.known);
                    flow.jumps.extend(outer);
                    return (flow, out);
                }
            }
        }
        let never_left = exits.is_none() && outer.is_empty();
        if let Some(s) = current {
            self.meter.exceeded(
                "max_loop_iterations",
                format!("a loop runs more than {limit} iterations"),
            );
            exits = join(exits, Some(s), &self.known);
        }
        if endless && never_left {
            self.note_background_spawning(first_command);
        }
        let flow = Flow {
            fail: exits.clone().filter(|_| body_may_fail),
            ok: exits,
            jumps: outer,
        };
        (flow, Output::unknown(Sources::none()))
    }

    fn case(&mut self, word: &WordAst, arms: &[CaseArm], state: State) -> (Flow, Output) {
        let mut state = state;
        let subject = self.expand_value(word, &mut state);
        let mut result = Flow::default();
        let mut out: Option<Output> = None;
        let mut testing = Some(state);
        let mut falling: Option<State> = None;
        // Every pattern so far surely failed to match; the arm fallen
        // into was reached only past a runtime condition.
        let mut sure = true;
        let mut falling_guarded = false;
        for arm in arms {
            let mut enter = falling.take();
            let mut guarded = enter.is_some() && falling_guarded;
            if let Some(mut s) = testing.take() {
                let mut matched = Match::No;
                for p in &arm.patterns {
                    let patterns = self.expand_pattern(p, &mut s);
                    matched = matched.or(self.case_match(&subject, &patterns));
                }
                match matched {
                    Match::Yes => {
                        guarded |= !sure;
                        enter = join(enter, Some(s), &self.known);
                    }
                    Match::No => testing = Some(s),
                    Match::Maybe => {
                        guarded = true;
                        sure = false;
                        enter = join(enter, Some(s.clone()), &self.known);
                        testing = Some(s);
                    }
                }
            }
            let Some(go) = enter else { continue };
            falling_guarded = guarded;
            let (b, o) = self.exec_guarded(guarded, &arm.body, go);
            out = Some(match out {
                None => o,
                Some(prev) => prev.either(o),
            });
            result.jumps.extend(b.jumps);
            let after = join(b.ok.clone(), b.fail.clone(), &self.known);
            match arm.end {
                ArmEnd::Break => {
                    result.ok = join(result.ok, b.ok, &self.known);
                    result.fail = join(result.fail, b.fail, &self.known);
                }
                ArmEnd::FallThrough => falling = after,
                ArmEnd::TestNext => testing = join(testing, after, &self.known),
            }
        }
        let rest = join(testing, falling, &self.known);
        result.ok = join(result.ok, rest, &self.known);
        (result, out.unwrap_or_else(Output::empty))
    }

    fn case_match(&mut self, subject: &Value, patterns: &[Text]) -> Match {
        let mut result = Match::No;
        for s in subject.candidates() {
            for p in patterns {
                let Some(known) = s.as_known() else {
                    return Match::Maybe;
                };
                if p.has_any() {
                    return Match::Maybe;
                }
                if !self.meter.match_work(super::glob::cost(p, known.len())) {
                    return Match::Maybe;
                }
                if super::glob::matches(p, known, super::glob::Mode::STRING) {
                    if subject.candidates().len() == 1 {
                        return Match::Yes;
                    }
                    result = Match::Maybe;
                }
            }
        }
        result
    }

    /// Evaluates an arithmetic expression, applying its assignments.
    pub(crate) fn arith(&mut self, expr: &str, state: &mut State) -> Option<i64> {
        // A variable whose value is an expression is read as one, and a
        // subscript in it is expanded as a word: `x='a[$(cmd)]'; $((x))`
        // runs `cmd`.
        let names: Vec<&str> = expr
            .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .filter(|w| w.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_'))
            .take(64)
            .collect();
        for name in names {
            let texts: Vec<String> = state
                .get(name, &self.known)
                .vals
                .iter()
                .filter_map(|b| match b {
                    Binding::Str(t) => t.as_known().map(str::to_owned),
                    _ => None,
                })
                .filter(|t| super::evaluated::runs_in_subscript(t))
                .collect();
            for text in texts {
                self.run_evaluated(&text, state, None);
            }
        }
        let known = &self.known;
        let snapshot = state.clone();
        let lookup = |name: &str| -> Option<i64> {
            let var = snapshot.get(name, known);
            let mut value: Option<i64> = None;
            for b in &var.vals {
                let n = match b {
                    Binding::Unset => Some(0),
                    Binding::Str(t) => t.as_known().map(|s| {
                        let s = s.trim();
                        if s.is_empty() {
                            Some(0)
                        } else {
                            s.parse().ok()
                        }
                    })?,
                    Binding::Arr(items) => items
                        .first()
                        .and_then(|t| t.as_known())
                        .and_then(|s| s.trim().parse().ok()),
                    Binding::Unknown(_) => None,
                };
                match (value, n) {
                    (_, None) => return None,
                    (None, Some(n)) => value = Some(n),
                    (Some(v), Some(n)) if v == n => {}
                    (Some(_), Some(_)) => return None,
                }
            }
            value
        };
        let (value, eval) = super::arith::Eval::run(expr, &lookup);
        for (name, n) in eval.assigned {
            let binding = match n {
                Some(n) => Binding::Str(Text::lit(&n.to_string())),
                None => Binding::Unknown(Sources::none()),
            };
            state.assign(&name, binding, &self.known);
        }
        value
    }
}

/// Result of matching a case pattern.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Match {
    Yes,
    No,
    Maybe,
}

impl Match {
    fn or(self, other: Match) -> Match {
        match (self, other) {
            (Match::Yes, _) | (_, Match::Yes) => Match::Yes,
            (Match::Maybe, _) | (_, Match::Maybe) => Match::Maybe,
            (Match::No, Match::No) => Match::No,
        }
    }
}

fn has_return(flow: &Flow) -> bool {
    flow.jumps.iter().any(|j| matches!(j, Jump::Return(_)))
}

/// A flow in `state` with the given possible statuses.
fn status_flow(state: State, ok: bool, fail: bool) -> Flow {
    match (ok, fail) {
        (true, true) | (false, false) => Flow::either(state),
        (true, false) => Flow::ok(state),
        (false, true) => Flow::fail(state),
    }
}

impl State {
    /// Assigns a scalar value with all its candidates.
    pub(crate) fn assign_value(&mut self, name: &str, value: &Value, known: &Known) {
        let exported = self.get(name, known).exported;
        self.set(
            name,
            super::state::Var {
                vals: value
                    .candidates()
                    .iter()
                    .cloned()
                    .map(Binding::Str)
                    .collect(),
                exported,
            },
        );
    }
}

impl Interp {
    /// Runs, once, the body of every function defined but never called:
    /// a call through an unknown name, a trap or an exported function may
    /// still run it.
    /// Whether something outside what the analysis followed may call a
    /// function named `name`: the harness's own commands after this one
    /// in the same shell (a builtin's or a program's name, `pwd`, `cd`,
    /// `exit`, …), a command whose name is runtime data, or a child shell
    /// that imports exported functions.
    fn may_be_called(&self, name: &str) -> bool {
        // bash calls these itself: an unknown command, a shell exit.
        matches!(
            name,
            "command_not_found_handle" | "command_not_found_handler"
        ) || super::builtins::is_builtin(name)
            || super::spec::lookup(name).is_some()
            || !name
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
            || self.commands.iter().any(|c| {
                c.kind == super::command::CommandKind::Unresolved
                    || (matches!(
                        c.name(),
                        Some("export" | "declare" | "typeset" | "readonly")
                    ) && c.args().iter().any(|a| {
                        a.as_known()
                            .is_none_or(|t| t.starts_with('-') && t.contains('f'))
                    }))
            })
    }

    pub(crate) fn uncalled_functions(&mut self, start: &State) {
        let mut defined: Vec<(String, Rc<Stmt>)> = Vec::new();
        std::mem::swap(&mut defined, &mut self.defined);
        for (name, body) in defined {
            // By body, not name: `f() { f() { …; }; }; f` called the outer
            // body only; the inner one still runs when something calls `f`.
            if self.called.iter().any(|b| Rc::ptr_eq(b, &body)) {
                continue;
            }
            if !self.may_be_called(&name) {
                // Nothing in the command can call it, and a harness starts
                // each command in a new shell: its body never runs. Not
                // judged, but not proven either (a note, for the reviewer).
                let note = format!(
                    "function `{name}` is defined but nothing in the command calls it (its body is not judged)"
                );
                if !self.notes.contains(&note) {
                    self.notes.push(note);
                }
                continue;
            }
            let saved = self.ctx;
            self.ctx.origin = Origin::UncalledFunction;
            let mut state = start.clone();
            state.positional = None;
            Rc::make_mut(&mut state.calls).push(name.clone());
            Rc::make_mut(&mut state.bodies).push(Rc::clone(&body));
            self.exec_frame(Body::Function(Rc::clone(&body)), &body, state);
            self.ctx = saved;
        }
    }
}

/// `sleep 0` (every operand a zero duration: `0`, `0.0`, `0s`): it
/// returns at once, so a loop around it waits for nothing.
fn sleeps_for_nothing(cmd: &Command) -> bool {
    !cmd.args().is_empty()
        && cmd.args().iter().all(|a| {
            a.as_known().is_some_and(|w| {
                let n = w.trim_end_matches(['s', 'm', 'h', 'd']);
                !n.is_empty() && n.parse::<f64>().is_ok_and(|v| v == 0.0)
            })
        })
}

/// Whether `cond`'s status follows from its literal words alone, the same
/// in every run: `:`, `true`, `false`, a `test`/`[`/`[[` of literal words
/// (whether the words decide it is the interpreter's to say: `[ -f lock ]`
/// does not), and `!`, `&&`, `||` of such. A function of the user's
/// snapshot named `true` or `test` is the snapshot's, as for `true`.
fn known_condition(cond: &Stmt) -> bool {
    match cond {
        Stmt::Simple(simple) => {
            let words: Option<Vec<&WordAst>> = simple
                .words
                .iter()
                .map(|w| match w {
                    super::ast::ArgAst::Word(w) => Some(w),
                    super::ast::ArgAst::Assign(_) => None,
                })
                .collect();
            let Some(words) = words else { return false };
            simple.assigns.is_empty()
                && simple.redirects.is_empty()
                && words.iter().all(|w| literal_word(w))
                && words
                    .first()
                    .and_then(|w| w.as_literal())
                    .is_some_and(|name| {
                        matches!(name.as_str(), ":" | "true" | "false" | "test" | "[")
                    })
        }
        Stmt::Test { words } => words.iter().all(literal_word),
        Stmt::Not(inner) | Stmt::Group(inner) => known_condition(inner),
        Stmt::And(a, b) | Stmt::Or(a, b) => known_condition(a) && known_condition(b),
        _ => false,
    }
}

/// A word that expands to itself: no parameter, substitution, glob,
/// brace or tilde.
pub(crate) fn literal_word(word: &WordAst) -> bool {
    word.parts.iter().all(|p| match p {
        Part::Quoted(_) => true,
        Part::Lit(t) => !t.contains(['*', '?', '[', '{', '~']) || t == "[",
        Part::Param { .. } | Part::Cmd { .. } | Part::Arith { .. } | Part::Proc { .. } => false,
    })
}
