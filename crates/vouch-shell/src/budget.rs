//! Budgets for the analysis of one command line, and the meter that
//! charges work against them.
//!
//! Every loop over untrusted input (parsing, expansion, candidate sets,
//! globs, the data flow through variables, functions and loops) charges a
//! budget. Running out is never a silent truncation: the meter records an
//! [`Incomplete`] naming the budget, the work already done is kept (a hard
//! deny found in it stands) and the rest of the command is unknown, so the
//! request goes to the reviewer. The defaults live in `config/default.toml`
//! (`[analysis]`) and only trusted configuration may change them: a project
//! that lowered them could turn a hard deny into a review.

use std::fmt;
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

/// A budget the analysis ran out of. The commands found so far are still
/// returned (a hard deny among them stands); the rest is unknown, so the
/// request must be reviewed, never passed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Incomplete {
    /// The `[analysis]` configuration key of the budget.
    pub budget: &'static str,
    /// What exceeded it.
    pub detail: String,
}

impl fmt::Display for Incomplete {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} (budget `analysis.{}`)", self.detail, self.budget)
    }
}

/// The `[analysis]` configuration section.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Limits {
    /// Parser work for one script (tree-sitter operations).
    pub max_parse_operations: u64,
    /// Wall-clock backstop for parsing one script, in microseconds.
    pub parse_timeout_us: u64,
    /// Syntax nodes in one parsed script.
    pub max_syntax_nodes: u64,
    /// Nesting of the syntax tree.
    pub max_syntax_depth: u32,
    /// Script strings inside script strings (`bash -c`, `eval`, piped scripts).
    pub max_script_nesting: u32,
    /// Statements, expansions and builtin steps interpreted in all.
    pub max_steps: u64,
    /// Wall-clock backstop for the whole analysis of one command line
    /// (parsing included), in microseconds.
    pub analysis_timeout_us: u64,
    /// Simple commands reported.
    pub max_commands: u64,
    /// Fields one word or one argv may expand to (brace expansion, splitting).
    pub max_fields: u64,
    /// Candidates one value may have.
    pub max_candidates: u64,
    /// Bytes of one expanded string.
    pub max_value_bytes: u64,
    /// Bytes that expanding command words may produce in all (the copies
    /// brace expansion makes, the text of expanded fields), summed over
    /// the analysis: what bounds the work of words that each expand a
    /// large value or are copied many times.
    pub max_expansion_bytes: u64,
    /// Nested function calls, `source`s and `eval`s.
    pub max_call_depth: u32,
    /// Iterations of one loop followed statically.
    pub max_loop_iterations: u32,
    /// Pattern-matching work (pattern length × subject length, summed).
    pub max_match_work: u64,
}

impl Limits {
    /// The package defaults (the same numbers as `config/default.toml`,
    /// checked by a test).
    pub const DEFAULT: Limits = Limits {
        max_parse_operations: 4_000_000,
        parse_timeout_us: 25_000,
        max_syntax_nodes: 200_000,
        max_syntax_depth: 200,
        max_script_nesting: 8,
        max_steps: 10_000,
        analysis_timeout_us: 40_000,
        max_commands: 10_000,
        max_fields: 10_000,
        max_candidates: 64,
        max_value_bytes: 65_536,
        max_expansion_bytes: 1_048_576,
        max_call_depth: 16,
        max_loop_iterations: 64,
        max_match_work: 20_000_000,
    };
}

impl Default for Limits {
    fn default() -> Self {
        Limits::DEFAULT
    }
}

/// Charges work against [`Limits`] and records what ran out.
#[derive(Debug)]
pub struct Meter {
    pub limits: Limits,
    steps: u64,
    /// Past the analysis deadline: every further step is refused.
    late: bool,
    match_work: u64,
    expansion_bytes: u64,
    /// Parser progress reports seen, each about a hundred operations.
    parse_reports: u64,
    /// When parsing must have finished (all scripts of one command line).
    parse_deadline: Instant,
    /// When the whole analysis must have finished.
    deadline: Instant,
    /// Levels entered and not yet left: syntax levels while a script is
    /// converted, statements and word parts while it is interpreted — one
    /// count for both, since a script parsed inside an expansion
    /// (`bash -c "$(…)"`) nests inside it. Every recursion over the input
    /// passes through [`Meter::enter`], so this bounds the stack.
    depth: u32,
    incomplete: Vec<Incomplete>,
}

/// Interpreter steps between two reads of the clock.
const STEPS_PER_CLOCK_READ: u64 = 16;

/// Operations tree-sitter performs between two progress reports.
const OPERATIONS_PER_REPORT: u64 = 100;

/// What one script parse is charged before it starts, in parser
/// operations ([`Meter::script_parse`]): with the default
/// `max_parse_operations`, at most 2,500 distinct script strings are parsed
/// in one analysis (a small one costs ~10–20 µs to parse and convert).
pub const SCRIPT_PARSE_OPERATIONS: u64 = 1_600;

/// Bytes of script text charged as one parser operation on top.
const BYTES_PER_OPERATION: u64 = 4;

impl Meter {
    pub fn new(limits: Limits) -> Self {
        let start = Instant::now();
        Meter {
            limits,
            steps: 0,
            late: false,
            match_work: 0,
            expansion_bytes: 0,
            parse_reports: 0,
            parse_deadline: start + Duration::from_micros(limits.parse_timeout_us),
            deadline: start + Duration::from_micros(limits.analysis_timeout_us),
            depth: 0,
            incomplete: Vec::new(),
        }
    }

    /// One parser progress report: false (and recorded) when parsing must
    /// stop. The operation count is the deterministic budget; the deadline
    /// is a backstop for a machine too slow to reach it in time.
    pub fn parse_progress(&mut self) -> bool {
        self.parse_reports = self.parse_reports.saturating_add(1);
        if self.parse_reports.saturating_mul(OPERATIONS_PER_REPORT)
            > self.limits.max_parse_operations
        {
            self.exceeded(
                "max_parse_operations",
                format!(
                    "parsing needs more than {} parser operations",
                    self.limits.max_parse_operations
                ),
            );
            return false;
        }
        self.parse_on_time()
    }

    /// Charges the parse of one script string (`eval`, `bash -c`, a piped
    /// script) before it starts: [`SCRIPT_PARSE_OPERATIONS`] plus one per
    /// [`BYTES_PER_OPERATION`] of its text, on top of what tree-sitter
    /// reports while it runs — a parse too small to reach its first
    /// report (a hundred operations) still costs its set-up, the
    /// conversion of its tree and its error recovery, so a loop that
    /// re-parses many distinct small scripts spends this budget instead of
    /// running free. False (and recorded) when the budget is spent.
    pub fn script_parse(&mut self, bytes: usize) -> bool {
        let operations = SCRIPT_PARSE_OPERATIONS
            .saturating_add(u64::try_from(bytes).unwrap_or(u64::MAX) / BYTES_PER_OPERATION);
        let reports = operations.div_ceil(OPERATIONS_PER_REPORT);
        self.parse_reports = self.parse_reports.saturating_add(reports.saturating_sub(1));
        self.parse_progress()
    }

    /// False (and recorded) once parsing is past its deadline: for the work
    /// after tree-sitter's own (turning its tree into statements).
    pub fn parse_on_time(&mut self) -> bool {
        if Instant::now() <= self.parse_deadline {
            return true;
        }
        self.exceeded(
            "parse_timeout_us",
            format!(
                "parsing took longer than {} µs",
                self.limits.parse_timeout_us
            ),
        );
        false
    }

    /// Enters one nesting level before recursing into it; false (and
    /// recorded) once `max_syntax_depth` levels are open. Each `true` is
    /// matched by one [`Meter::leave`].
    pub fn enter(&mut self) -> bool {
        if self.depth >= self.limits.max_syntax_depth {
            self.too_deep();
            return false;
        }
        self.depth += 1;
        true
    }

    /// Leaves a level [`Meter::enter`] opened.
    pub fn leave(&mut self) {
        self.depth = self.depth.saturating_sub(1);
    }

    /// Levels open now.
    pub fn depth(&self) -> u32 {
        self.depth
    }

    /// Closes every level opened since `depth` was read (a walk that
    /// stopped early, a conversion that was abandoned).
    pub fn restore_depth(&mut self, depth: u32) {
        self.depth = depth.min(self.depth);
    }

    /// Levels that may still be entered.
    pub fn depth_left(&self) -> u32 {
        self.limits.max_syntax_depth.saturating_sub(self.depth)
    }

    /// Records that the input nests deeper than `max_syntax_depth`.
    pub fn too_deep(&mut self) {
        let limit = self.limits.max_syntax_depth;
        self.exceeded(
            "max_syntax_depth",
            format!("the command is nested deeper than {limit} levels"),
        );
    }

    /// Records that `budget` ran out (once per budget).
    pub fn exceeded(&mut self, budget: &'static str, detail: impl Into<String>) {
        if !self.incomplete.iter().any(|i| i.budget == budget) {
            self.incomplete.push(Incomplete {
                budget,
                detail: detail.into(),
            });
        }
    }

    /// True once any budget ran out.
    pub fn is_incomplete(&self) -> bool {
        !self.incomplete.is_empty()
    }

    /// At most `max_fields` of `items`, the items a command receives
    /// (`what`, e.g. "`xargs` receives"); more is recorded, never dropped
    /// silently.
    pub fn cap_fields<T>(&mut self, mut items: Vec<T>, what: &str) -> Vec<T> {
        let limit = self.limits.max_fields;
        if items.len() as u64 > limit {
            self.exceeded("max_fields", format!("{what} more than {limit} items"));
            items.truncate(usize::try_from(limit).unwrap_or(usize::MAX));
        }
        items
    }

    /// One interpreter step; false (and recorded) once the step budget is
    /// spent or the analysis is past its deadline. The step count is the
    /// deterministic budget; the deadline (read every
    /// [`STEPS_PER_CLOCK_READ`] steps) is a backstop for inputs whose steps
    /// are each expensive, so no command line holds the floor for longer.
    pub fn step(&mut self) -> bool {
        self.charge(false)
    }

    /// A step that may cost far more than most (a whole script: a parse,
    /// a state copy and a join): the clock is read every time, so the
    /// deadline is not overshot by [`STEPS_PER_CLOCK_READ`] of them.
    pub fn script_step(&mut self) -> bool {
        self.charge(true)
    }

    fn charge(&mut self, read_clock: bool) -> bool {
        self.steps = self.steps.saturating_add(1);
        if !self.within(
            self.steps,
            self.limits.max_steps,
            "max_steps",
            "the command needs",
            "analysis steps",
        ) {
            return false;
        }
        if self.late {
            return false;
        }
        if (read_clock || self.steps.is_multiple_of(STEPS_PER_CLOCK_READ))
            && Instant::now() > self.deadline
        {
            self.late = true;
            self.exceeded(
                "analysis_timeout_us",
                format!(
                    "the analysis took longer than {} µs",
                    self.limits.analysis_timeout_us
                ),
            );
            return false;
        }
        true
    }

    /// Charges pattern-matching work; false (and recorded) once spent.
    pub fn match_work(&mut self, units: u64) -> bool {
        self.match_work = self.match_work.saturating_add(units);
        self.within(
            self.match_work,
            self.limits.max_match_work,
            "max_match_work",
            "pattern matching needs",
            "work units",
        )
    }

    /// Charges bytes that expansion produced; false (and recorded) once
    /// `max_expansion_bytes` is spent.
    pub fn expansion(&mut self, bytes: u64) -> bool {
        self.expansion_bytes = self.expansion_bytes.saturating_add(bytes);
        self.within(
            self.expansion_bytes,
            self.limits.max_expansion_bytes,
            "max_expansion_bytes",
            "expanding the command's words makes",
            "bytes",
        )
    }

    /// True once `max_expansion_bytes` is spent (and recorded).
    pub fn expansion_spent(&self) -> bool {
        self.expansion_bytes > self.limits.max_expansion_bytes
    }

    /// False once `spent` is past `limit`, recording `budget` as "`what`
    /// more than `limit` `unit`".
    fn within(
        &mut self,
        spent: u64,
        limit: u64,
        budget: &'static str,
        what: &str,
        unit: &str,
    ) -> bool {
        if spent <= limit {
            return true;
        }
        self.exceeded(budget, format!("{what} more than {limit} {unit}"));
        false
    }

    pub fn into_incomplete(self) -> Vec<Incomplete> {
        self.incomplete
    }

    pub fn incomplete(&self) -> &[Incomplete] {
        &self.incomplete
    }
}
