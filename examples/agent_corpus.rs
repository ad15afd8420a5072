//! What vouch decides without a model on real agent traffic (issue 31): runs
//! every command of the shared real-agent corpus through the engine, with the
//! default configuration and no reviewer model, exactly as `vouch review`
//! would for a bash request, and reports the share decided without a model
//! (hard deny, inert, a routing rule) by agent and by the corpus's rough
//! class, weighted by runs and by distinct commands.
//!
//! ```text
//! cargo run --release --example agent_corpus -- [PATH] [--top N] [--json] [--cwd record|scratch] [--decisions FILE]
//! ```
//!
//! PATH defaults to `../shared/agent-commands/commands.jsonl` beside the
//! repository; when it is absent the program says so and exits 0. The corpus
//! is measurement data that must never be copied into the repository (many
//! of its sources carry no licence): this program only reads it.
//!
//! Each request gets the record's `cwd` when it is an absolute path
//! (`--cwd record`, the default) and otherwise a scratch project (a `git
//! init` repository with a README.md and src/main.rs) under a temporary
//! home; `--cwd scratch` gives every request the scratch project. The engine
//! runs under a temporary `VOUCH_HOME` and `HOME`, never the real ones, with
//! the audit turned off (it does not change a decision, only what is
//! recorded). `--top N` (default 40) lists the most-run `read` commands that
//! still need a model: what to look at when widening the inert table.
//! `--json` prints a machine-readable summary instead of the tables.

use std::collections::BTreeMap;
use std::io::BufRead as _;
use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::{Context as _, bail};
use serde::{Deserialize, Serialize};
use vouch::config::{Config, Provider};
use vouch::decision::Decision;
use vouch::engine::{Engine, EngineOptions};
use vouch::paths::Paths;
use vouch::request::Request;

/// Codex's safe list over the same corpus, as measured by the issue's author
/// (issue 31). Cited, not recomputed: Codex's code stays out of this
/// repository.
const CODEX_CITATION: &str = "Codex is_safe_command (measured by the issue author over the same \
                              corpus): 34.2% of runs (8,300 of 24,273)";
const CODEX_RUNS_SHARE: f64 = 34.2;
/// Codex's share of the inspect-only (`read`) runs, from the same citation.
const CODEX_READ_SHARE: f64 = 78.0;
/// The issue's target share of all runs decided without a model.
const TARGET_RUNS_SHARE: f64 = 40.0;
/// How much of a rationale the `--top` list shows.
const RATIONALE_CHARS: usize = 160;
/// How much of a command the listings show.
const COMMAND_CHARS: usize = 120;

/// One line of the corpus (the fields this program reads; the rest are
/// ignored).
#[derive(Debug, Deserialize)]
struct Record {
    command: String,
    agent: String,
    #[serde(default = "one")]
    count: u64,
    #[serde(default)]
    rough_class: Option<String>,
    #[serde(default)]
    cwd: Option<String>,
    #[serde(default)]
    balanced: bool,
}

fn one() -> u64 {
    1
}

/// How a decision was reached, coarsely: the first three need no model.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Kind {
    HardDeny,
    Inert,
    /// A routing rule decided (human or never), not the no-reviewer fallback.
    RoutingRule,
    /// Routing `pass`: vouch has no opinion, the harness decides.
    RoutingAbstain,
    /// What the model would have reviewed, deferred because none is
    /// configured (`routing/no-reviewer`).
    NoReviewer,
    /// Any other stage (configuration error, reviewer failure, …).
    Other,
    /// The request did not validate.
    BadRequest,
}

impl Kind {
    fn name(self) -> &'static str {
        match self {
            Kind::HardDeny => "hard_deny",
            Kind::Inert => "inert",
            Kind::RoutingRule => "routing",
            Kind::RoutingAbstain => "abstain",
            Kind::NoReviewer => "no_reviewer",
            Kind::Other => "other",
            Kind::BadRequest => "bad_request",
        }
    }

    fn without_model(self) -> bool {
        match self {
            Kind::HardDeny | Kind::Inert | Kind::RoutingRule => true,
            Kind::RoutingAbstain | Kind::NoReviewer | Kind::Other | Kind::BadRequest => false,
        }
    }

    fn of(decision: &Decision) -> Kind {
        match decision.stage().as_str() {
            "hard_deny" => Kind::HardDeny,
            // Matched by name: the stage may not exist yet in this build.
            "inert" => Kind::Inert,
            "routing" if decision.abstain() => Kind::RoutingAbstain,
            "routing" if decision.rule_id() == Some(vouch::pipeline::NO_REVIEWER_RULE) => {
                Kind::NoReviewer
            }
            "routing" => Kind::RoutingRule,
            _ => Kind::Other,
        }
    }
}

/// What happened to one record.
struct Outcome {
    kind: Kind,
    stage: String,
    decision: String,
    rule_id: String,
    rationale: String,
    micros: u64,
}

/// Distinct commands and runs, in all and decided without a model.
#[derive(Debug, Default, Clone, Serialize)]
struct Tally {
    distinct: u64,
    runs: u64,
    distinct_without_model: u64,
    runs_without_model: u64,
    distinct_inert: u64,
    runs_inert: u64,
}

impl Tally {
    fn add(&mut self, count: u64, kind: Kind) {
        self.distinct += 1;
        self.runs += count;
        if kind.without_model() {
            self.distinct_without_model += 1;
            self.runs_without_model += count;
        }
        if kind == Kind::Inert {
            self.distinct_inert += 1;
            self.runs_inert += count;
        }
    }
}

fn pct(part: u64, whole: u64) -> f64 {
    if whole == 0 {
        0.0
    } else {
        100.0 * part as f64 / whole as f64
    }
}

/// A listed command: one line, at most `COMMAND_CHARS` characters.
fn show_command(command: &str) -> String {
    format!("{:?}", truncate(command, COMMAND_CHARS))
}

fn truncate(text: &str, chars: usize) -> String {
    let mut out: String = text.chars().take(chars).collect();
    if text.chars().nth(chars).is_some() {
        out.push('…');
    }
    out
}

struct Options {
    path: PathBuf,
    top: usize,
    json: bool,
    scratch_only: bool,
    /// `--peer-blocked [DIR]`: instead of the agent corpus, every command
    /// the two peer guards' own suites block (`DIR`, default
    /// `../shared/peer-suites`), which must never be inert.
    peer_blocked: Option<PathBuf>,
    /// `--decisions FILE`: one JSON line per record (its line number, stage,
    /// outcome, rule and rationale, the scratch directory's path replaced by
    /// `<scratch>`), for comparing two builds decision by decision. Never the
    /// command itself: the file may be kept, the corpus may not.
    decisions: Option<PathBuf>,
}

fn options() -> anyhow::Result<Options> {
    let mut path = None;
    let mut top = 40;
    let mut json = false;
    let mut scratch_only = false;
    let mut peer_blocked = None;
    let mut decisions = None;
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--top" => {
                let n = args.next().context("`--top` needs a number")?;
                top = n.parse().with_context(|| format!("`--top {n}`"))?;
            }
            "--json" => json = true,
            "--decisions" => {
                decisions = Some(PathBuf::from(
                    args.next().context("`--decisions` needs a file")?,
                ));
            }
            "--peer-blocked" => {
                peer_blocked =
                    Some(Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/peer-suites"));
            }
            "--cwd" => match args.next().as_deref() {
                Some("record") => scratch_only = false,
                Some("scratch") => scratch_only = true,
                other => bail!("`--cwd` takes `record` or `scratch`, got {other:?}"),
            },
            flag if flag.starts_with("--") => bail!("unknown option `{flag}`"),
            _ if path.is_none() => path = Some(PathBuf::from(arg)),
            _ => bail!("one corpus path only, got a second: `{arg}`"),
        }
    }
    let path = path.unwrap_or_else(|| {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/agent-commands/commands.jsonl")
    });
    Ok(Options {
        path,
        top,
        json,
        scratch_only,
        peer_blocked,
        decisions,
    })
}

/// The temporary world the engine runs in: vouch's home, the user's home
/// and a small project for requests without a usable `cwd`.
struct Scratch {
    dir: tempfile::TempDir,
    vouch_home: PathBuf,
    home: String,
    project: String,
}

fn scratch() -> anyhow::Result<Scratch> {
    let dir = tempfile::tempdir().context("cannot create a temporary directory")?;
    let root = dir.path().canonicalize()?;
    let vouch_home = root.join("vouch-home");
    let home = root.join("home");
    let project = home.join("project");
    std::fs::create_dir_all(&vouch_home)?;
    std::fs::create_dir_all(project.join("src"))?;
    std::fs::write(project.join("README.md"), "# project\n\nA fixture.\n")?;
    std::fs::write(
        project.join("src/main.rs"),
        "fn main() {\n    println!(\"hello\");\n}\n",
    )?;
    // The child sees the temporary home, not the user's git configuration.
    let git = std::process::Command::new("git")
        .args(["init", "-q"])
        .current_dir(&project)
        .env("HOME", &home)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .status();
    match git {
        Ok(status) if status.success() => {}
        Ok(status) => eprintln!("note: `git init` in the scratch project failed ({status})"),
        Err(e) => eprintln!("note: cannot run `git init` in the scratch project: {e}"),
    }
    Ok(Scratch {
        dir,
        vouch_home,
        home: home.display().to_string(),
        project: project.display().to_string(),
    })
}

/// One engine for the whole run: the default configuration (no reviewer
/// model) with the audit off, under the scratch homes, and `deny_paths` as
/// `inert.deny_paths`.
fn engine(scratch: &Scratch, deny_paths: Vec<String>) -> anyhow::Result<Engine> {
    let mut config = Config::defaults()?;
    config.inert.deny_paths = deny_paths;
    if config.reviewer.provider != Provider::None {
        bail!("the default configuration names a reviewer model; this measures the default");
    }
    config.audit.enabled = false;
    let mut options = EngineOptions::isolated(&scratch.vouch_home, &config)?;
    let vouch_home = scratch.vouch_home.display().to_string();
    let home = scratch.home.clone();
    options.paths = Paths::from_lookup(|name| match name {
        "VOUCH_HOME" => Some(vouch_home.clone()),
        "HOME" => Some(home.clone()),
        _ => None,
    })?;
    Ok(Engine::new(options)?)
}

struct Run<'a> {
    engine: &'a Engine,
    runtime: &'a tokio::runtime::Runtime,
    scratch: &'a Scratch,
    scratch_only: bool,
}

impl Run<'_> {
    fn decide(&self, record: &Record) -> Outcome {
        let cwd = match &record.cwd {
            Some(cwd) if !self.scratch_only && cwd.starts_with('/') => cwd.as_str(),
            _ => self.scratch.project.as_str(),
        };
        let body = serde_json::json!({
            "session_id": "corpus",
            "turn_id": "t",
            "surface": "bash",
            "tool": "Bash",
            "command": record.command,
            "cwd": cwd,
            "home": self.scratch.home,
            // As every harness that rewrites a call sends it: an inert
            // allow runs confined (docs/confine.md).
            "can_run_confined": true,
        });
        let started = Instant::now();
        let request = match Request::from_slice(body.to_string().as_bytes()) {
            Ok(request) => request,
            Err(e) => {
                return Outcome {
                    kind: Kind::BadRequest,
                    stage: "bad_request".to_owned(),
                    decision: String::new(),
                    rule_id: String::new(),
                    rationale: e.to_string(),
                    micros: 0,
                };
            }
        };
        let decision = self.runtime.block_on(self.engine.review(request));
        let micros = u64::try_from(started.elapsed().as_micros()).unwrap_or(u64::MAX);
        Outcome {
            kind: Kind::of(&decision),
            stage: decision.stage().as_str().to_owned(),
            decision: decision.outcome().as_str().to_owned(),
            rule_id: decision.rule_id().unwrap_or_default().to_owned(),
            rationale: decision.rationale().to_owned(),
            micros,
        }
    }
}

/// A command listed in the report.
#[derive(Debug, Serialize)]
struct Listed {
    runs: u64,
    agent: String,
    class: String,
    command: String,
    kind: &'static str,
    stage: String,
    decision: String,
    rule_id: String,
    rationale: String,
}

impl Listed {
    fn new(record: &Record, class: &str, outcome: &Outcome) -> Listed {
        Listed {
            runs: record.count,
            agent: record.agent.clone(),
            class: class.to_owned(),
            command: show_command(&record.command),
            kind: outcome.kind.name(),
            stage: outcome.stage.clone(),
            decision: outcome.decision.clone(),
            rule_id: outcome.rule_id.clone(),
            rationale: truncate(&outcome.rationale, RATIONALE_CHARS),
        }
    }
}

#[derive(Debug, Default, Serialize)]
struct Report {
    corpus: String,
    cwd_mode: &'static str,
    total: Tally,
    balanced: Tally,
    by_agent: BTreeMap<String, Tally>,
    by_class: BTreeMap<String, Tally>,
    /// Decision kind (`other` split by stage) → (distinct, runs).
    by_kind: BTreeMap<String, (u64, u64)>,
    /// Rule ids of the decisions made without a model → (distinct, runs).
    by_rule: BTreeMap<String, (u64, u64)>,
    hard_denies: Vec<Listed>,
    bad_requests: Vec<Listed>,
    unreadable_lines: Vec<String>,
    /// Requests with a `cwd` of their own.
    record_cwd: u64,
    timing_us: Timing,
    inert_timing_us: Timing,
    top_read_needing_model: Vec<Listed>,
}

#[derive(Debug, Default, Serialize)]
struct Timing {
    decisions: usize,
    median: u64,
    p99: u64,
    max: u64,
}

impl Timing {
    fn of(mut micros: Vec<u64>) -> Timing {
        micros.sort_unstable();
        let at = |q: f64| -> u64 {
            let last = micros.len().saturating_sub(1);
            // An index into the sorted list, rounded.
            let index = (last as f64 * q).round() as usize;
            micros.get(index).copied().unwrap_or(0)
        };
        Timing {
            decisions: micros.len(),
            median: at(0.5),
            p99: at(0.99),
            max: micros.last().copied().unwrap_or(0),
        }
    }
}

fn measure(opts: &Options, run: &Run<'_>) -> anyhow::Result<Report> {
    let file = std::fs::File::open(&opts.path)
        .with_context(|| format!("cannot open `{}`", opts.path.display()))?;
    let mut report = Report {
        corpus: opts.path.display().to_string(),
        cwd_mode: if opts.scratch_only {
            "scratch"
        } else {
            "record"
        },
        ..Report::default()
    };
    let mut micros = Vec::new();
    let mut inert_micros = Vec::new();
    let mut read_needing_model = Vec::new();
    let mut decisions = match &opts.decisions {
        Some(path) => Some(std::io::BufWriter::new(
            std::fs::File::create(path)
                .with_context(|| format!("cannot create `{}`", path.display()))?,
        )),
        None => None,
    };
    let scratch_text = run.scratch.dir.path().display().to_string();
    for (number, line) in std::io::BufReader::new(file).lines().enumerate() {
        let line = line.with_context(|| format!("cannot read `{}`", opts.path.display()))?;
        if line.trim().is_empty() {
            continue;
        }
        let record: Record = match serde_json::from_str(&line) {
            Ok(record) => record,
            Err(e) => {
                report
                    .unreadable_lines
                    .push(format!("line {}: {e}", number + 1));
                continue;
            }
        };
        let class = record.rough_class.as_deref().unwrap_or("unlabelled");
        if record.cwd.as_deref().is_some_and(|c| c.starts_with('/')) && !opts.scratch_only {
            report.record_cwd += 1;
        }
        let outcome = run.decide(&record);
        if let Some(out) = decisions.as_mut() {
            use std::io::Write as _;
            let line = serde_json::json!({
                "line": number + 1,
                "stage": outcome.stage,
                "decision": outcome.decision,
                "rule_id": outcome.rule_id,
                "rationale": outcome.rationale.replace(&scratch_text, "<scratch>"),
            });
            writeln!(out, "{line}").context("cannot write the decisions file")?;
        }
        tally(&mut report, &record, class, &outcome);
        if outcome.kind != Kind::BadRequest {
            micros.push(outcome.micros);
        }
        if outcome.kind == Kind::Inert {
            inert_micros.push(outcome.micros);
        }
        if class == "read" && !outcome.kind.without_model() {
            read_needing_model.push(Listed::new(&record, class, &outcome));
        }
        if (number + 1) % 2000 == 0 {
            eprintln!("… {} records", number + 1);
        }
    }
    read_needing_model.sort_by(|a, b| b.runs.cmp(&a.runs).then_with(|| a.command.cmp(&b.command)));
    read_needing_model.truncate(opts.top);
    report.top_read_needing_model = read_needing_model;
    report.timing_us = Timing::of(micros);
    report.inert_timing_us = Timing::of(inert_micros);
    Ok(report)
}

fn tally(report: &mut Report, record: &Record, class: &str, outcome: &Outcome) {
    let kind = outcome.kind;
    report.total.add(record.count, kind);
    if record.balanced {
        report.balanced.add(record.count, kind);
    }
    report
        .by_agent
        .entry(record.agent.clone())
        .or_default()
        .add(record.count, kind);
    report
        .by_class
        .entry(class.to_owned())
        .or_default()
        .add(record.count, kind);
    let kind_key = match kind {
        Kind::Other => format!("other ({}: {})", outcome.stage, outcome.decision),
        _ => kind.name().to_owned(),
    };
    let entry = report.by_kind.entry(kind_key).or_default();
    entry.0 += 1;
    entry.1 += record.count;
    if kind.without_model() {
        let entry = report
            .by_rule
            .entry(format!("{} {}", outcome.stage, outcome.rule_id))
            .or_default();
        entry.0 += 1;
        entry.1 += record.count;
    }
    match kind {
        Kind::HardDeny => report.hard_denies.push(Listed::new(record, class, outcome)),
        Kind::BadRequest => report
            .bad_requests
            .push(Listed::new(record, class, outcome)),
        Kind::Inert | Kind::RoutingRule | Kind::RoutingAbstain | Kind::NoReviewer | Kind::Other => {
        }
    }
}

fn print_table(title: &str, rows: &BTreeMap<String, Tally>, total: &Tally) {
    println!();
    println!(
        "| {title} | distinct | runs | runs without a model | distinct without a model | runs inert |"
    );
    println!("| --- | ---: | ---: | ---: | ---: | ---: |");
    let mut sorted: Vec<(&String, &Tally)> = rows.iter().collect();
    sorted.sort_by(|a, b| b.1.runs.cmp(&a.1.runs).then_with(|| a.0.cmp(b.0)));
    let row = |name: &str, t: &Tally| {
        println!(
            "| {name} | {} | {} | {:.1}% | {:.1}% | {:.1}% |",
            t.distinct,
            t.runs,
            pct(t.runs_without_model, t.runs),
            pct(t.distinct_without_model, t.distinct),
            pct(t.runs_inert, t.runs),
        );
    };
    for (name, t) in sorted {
        row(name, t);
    }
    row("**total**", total);
}

fn print_report(report: &Report) {
    let t = &report.total;
    println!("corpus: {}", report.corpus);
    println!(
        "configuration: defaults, reviewer.provider = \"none\", audit off; cwd: {} ({} requests with the record's own cwd)",
        report.cwd_mode, report.record_cwd
    );
    println!();
    println!(
        "distinct commands: {}   runs: {}   (balanced subset: {} distinct, {} runs)",
        t.distinct, t.runs, report.balanced.distinct, report.balanced.runs
    );
    println!(
        "decided without a model: {:.1}% of runs ({} of {}), {:.1}% of distinct ({} of {}); target {TARGET_RUNS_SHARE:.0}% of runs",
        pct(t.runs_without_model, t.runs),
        t.runs_without_model,
        t.runs,
        pct(t.distinct_without_model, t.distinct),
        t.distinct_without_model,
        t.distinct,
    );
    println!(
        "inert: {:.1}% of runs ({}), {:.1}% of distinct ({})",
        pct(t.runs_inert, t.runs),
        t.runs_inert,
        pct(t.distinct_inert, t.distinct),
        t.distinct_inert,
    );
    println!(
        "balanced subset decided without a model: {:.1}% of runs, {:.1}% of distinct",
        pct(report.balanced.runs_without_model, report.balanced.runs),
        pct(
            report.balanced.distinct_without_model,
            report.balanced.distinct
        ),
    );
    println!("hard denies: {} (must be 0)", report.hard_denies.len());
    for d in &report.hard_denies {
        println!(
            "  HARD DENY {} x{} [{}] {}",
            d.rule_id, d.runs, d.agent, d.command
        );
    }
    println!();
    println!("{CODEX_CITATION}");
    let read = report.by_class.get("read").cloned().unwrap_or_default();
    println!(
        "  beside vouch: {:.1}% of runs (Codex {CODEX_RUNS_SHARE}%); `read` runs {:.1}% (Codex {CODEX_READ_SHARE:.0}%)",
        pct(t.runs_without_model, t.runs),
        pct(read.runs_without_model, read.runs),
    );
    print_table("agent", &report.by_agent, t);
    print_table("rough_class", &report.by_class, t);
    println!();
    println!("| decision | distinct | runs |");
    println!("| --- | ---: | ---: |");
    for (kind, (distinct, runs)) in &report.by_kind {
        println!("| {kind} | {distinct} | {runs} |");
    }
    if !report.by_rule.is_empty() {
        println!();
        println!("decided without a model, by stage and rule:");
        for (rule, (distinct, runs)) in &report.by_rule {
            println!("  {rule}: {distinct} distinct, {runs} runs");
        }
    }
    print_problems(report);
    print_timing(report);
    print_top(report);
}

fn print_problems(report: &Report) {
    if !report.bad_requests.is_empty() {
        println!();
        println!("bad requests: {}", report.bad_requests.len());
        for b in report.bad_requests.iter().take(10) {
            println!("  x{} [{}] {}: {}", b.runs, b.agent, b.command, b.rationale);
        }
    }
    if !report.unreadable_lines.is_empty() {
        println!();
        println!("unreadable corpus lines: {}", report.unreadable_lines.len());
        for line in report.unreadable_lines.iter().take(10) {
            println!("  {line}");
        }
    }
}

fn print_timing(report: &Report) {
    let (all, inert) = (&report.timing_us, &report.inert_timing_us);
    println!();
    println!(
        "wall time per decision (µs, engine.review in-process): median {}, p99 {}, max {} over {} decisions",
        all.median, all.p99, all.max, all.decisions
    );
    if inert.decisions > 0 {
        println!(
            "  inert decisions: median {}, p99 {}, max {} over {}",
            inert.median, inert.p99, inert.max, inert.decisions
        );
    }
}

fn print_top(report: &Report) {
    println!();
    println!(
        "top {} `read` commands that still need a model (by runs):",
        report.top_read_needing_model.len()
    );
    for (rank, l) in report.top_read_needing_model.iter().enumerate() {
        println!(
            "{:>3}. x{:<4} [{}] {}",
            rank + 1,
            l.runs,
            l.agent,
            l.command
        );
        println!(
            "       {} {} {}: {}",
            l.stage, l.decision, l.rule_id, l.rationale
        );
    }
}

fn main() -> anyhow::Result<()> {
    let opts = options()?;
    if !opts.path.is_file() {
        println!(
            "agent_corpus: no corpus at `{}` (the shared real-agent corpus lives outside the \
             repository); nothing measured",
            opts.path.display()
        );
        return Ok(());
    }
    let scratch = scratch()?;
    // cc-safety-net's suite configures one protected directory of its own
    // (`denyPaths: ['protected']`, for `find protected/child -type f`);
    // vouch's equivalent setting is `inert.deny_paths`. The real-agent
    // measurement uses the defaults unchanged.
    let deny_paths = match opts.peer_blocked {
        Some(_) => vec!["protected".to_owned()],
        None => Vec::new(),
    };
    let engine = engine(&scratch, deny_paths)?;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("cannot start the runtime")?;
    let run = Run {
        engine: &engine,
        runtime: &runtime,
        scratch: &scratch,
        scratch_only: opts.scratch_only,
    };
    if let Some(dir) = &opts.peer_blocked {
        return peer_blocked(&run, dir);
    }
    let report = measure(&opts, &run)?;
    if opts.json {
        println!("{}", serde_json::to_string_pretty(&summary(&report))?);
    } else {
        print_report(&report);
    }
    Ok(())
}

/// Every command the peer guards' suites block, through the same engine:
/// the count decided inert must be zero (each one is printed).
fn peer_blocked(run: &Run<'_>, dir: &Path) -> anyhow::Result<()> {
    let mut commands = Vec::new();
    for (file, all) in [
        ("dcg.jsonl", false),
        ("safety_net.jsonl", false),
        ("peer_blocked_in_category.jsonl", true),
    ] {
        let path = dir.join(file);
        let Ok(text) = std::fs::read_to_string(&path) else {
            println!("agent_corpus: no `{}`; skipped", path.display());
            continue;
        };
        for line in text.lines().filter(|l| !l.trim().is_empty()) {
            let v: serde_json::Value = serde_json::from_str(line)
                .with_context(|| format!("{}: a line is not JSON", path.display()))?;
            let field = |key: &str| v.get(key).and_then(serde_json::Value::as_str);
            let blocked = all || field("peer_expect") == Some("block");
            if let (true, Some(command)) = (blocked, field("command")) {
                commands.push(command.to_owned());
            }
        }
    }
    let peer_project = format!("{}/secret-protection-project", run.scratch.home);
    std::fs::create_dir_all(&peer_project)?;
    let mut inert = Vec::new();
    let mut stages: BTreeMap<String, u64> = BTreeMap::new();
    for command in &commands {
        // The peers' tests run in a project of their own, not at `~/project`
        // (the scratch project's place): cc-safety-net's secret tests use
        // `<tmp>/secret-protection-project`.
        let record = Record {
            command: command.clone(),
            agent: "peer-suite".to_owned(),
            count: 1,
            rough_class: None,
            cwd: Some(peer_project.clone()),
            balanced: false,
        };
        let outcome = run.decide(&record);
        *stages.entry(outcome.stage.clone()).or_default() += 1;
        if outcome.stage == "inert" {
            inert.push(format!(
                "{}  ({})",
                show_command(command),
                outcome.rationale
            ));
        }
    }
    println!(
        "peer-blocked commands: {} (dcg and cc-safety-net suites, `block` only)",
        commands.len()
    );
    for (stage, n) in &stages {
        println!("  stage {stage}: {n}");
    }
    println!("decided inert: {} (must be 0)", inert.len());
    for line in &inert {
        println!("  INERT {line}");
    }
    if !inert.is_empty() {
        bail!("{} peer-blocked commands were decided inert", inert.len());
    }
    Ok(())
}

/// The `--json` summary: the report plus the derived shares and the cited
/// Codex figure.
fn summary(report: &Report) -> serde_json::Value {
    let t = &report.total;
    serde_json::json!({
        "report": report,
        "shares": {
            "runs_without_model_pct": pct(t.runs_without_model, t.runs),
            "distinct_without_model_pct": pct(t.distinct_without_model, t.distinct),
            "runs_inert_pct": pct(t.runs_inert, t.runs),
            "distinct_inert_pct": pct(t.distinct_inert, t.distinct),
            "target_runs_pct": TARGET_RUNS_SHARE,
        },
        "cited": {
            "codex_is_safe_command": CODEX_CITATION,
            "codex_runs_pct": CODEX_RUNS_SHARE,
            "codex_read_runs_pct": CODEX_READ_SHARE,
        },
    })
}
