//! Differential testing of the inert stage against real bash (issue 31,
//! Must show): every command vouch calls inert ([`vouch::policy::inert`])
//! runs in real bash in bubblewrap over a fresh copy of a fixture home
//! ([`fixture`]), every program really running after being recorded
//! ([`runner`]). It fails on any change to the tree (beyond `.git/index`,
//! the one documented exception), any recorded program outside the inert
//! set, any trace of a program git's configuration names, any network
//! attempt, and any write attempted outside the copy.
//!
//! - `cargo test --release --test inert_differential`: the harness's own
//!   checks (look-alikes it must catch), the kept lines of
//!   `tests/fixtures/inert_differential.jsonl` and a short generated run
//!   (fixed seed, [`DEFAULT_INERT`] inert commands).
//! - The long run: `VOUCH_INERT_DIFF_CASES=20000 cargo test --release
//!   --test inert_differential -- generated` (`VOUCH_INERT_DIFF_SEED`: a
//!   number or `random`; `VOUCH_INERT_DIFF_JOBS`: sandboxes at once).
//! - The agent corpus: `VOUCH_INERT_DIFF_CORPUS=../shared/agent-commands/commands.jsonl
//!   cargo test --release --test inert_differential -- corpus` (the corpus
//!   is read where it lies, never copied into the repository).
//! - Confined against unconfined ([`confined`], issue 42): the kept lines
//!   vouch calls inert by default, the corpus's with
//!   `VOUCH_INERT_DIFF_CORPUS=… cargo test --release --test
//!   inert_differential -- compare-confined`: each runs as written and as
//!   `vouch confine -- bash -c …`, and the two print the same bytes and end
//!   the same, but for the documented exceptions
//!   (`VOUCH_INERT_DIFF_CONFINED_LIMIT=N`: an even sample of N).
//!
//! Without bubblewrap (or user namespaces), or strace for the fuzzer, the
//! trials that need them are ignored with the reason printed; under
//! `VOUCH_TEST_STRICT=1` they run and fail instead ([`strict`]). The corpus
//! trials stay opt-in either way.
//!
//! This binary is also the recorder: run from its sandbox mount point it
//! records, then executes the real program.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    clippy::too_many_lines
)]

mod confined;
mod fixture;
mod fuzz;
mod generator;
// The differential harness's recorder, with every program passed through
// (`run_with`); its own `run` is unused here.
#[path = "../it/support/fixtures.rs"]
mod fixtures;
#[allow(dead_code)]
#[path = "../../crates/vouch-shell/tests/bash_differential/recorder.rs"]
mod recorder;
#[path = "../../crates/vouch-shell/tests/bash_differential/run_env.rs"]
mod run_env;
mod runner;
// The differential harness's sandbox: its run loop, socket collector and
// the names it gives recorders; its own `Sandbox` is unused here.
#[allow(dead_code)]
#[path = "../../crates/vouch-shell/tests/bash_differential/sandbox.rs"]
mod sandbox;
// A missing tool skips, or under `VOUCH_TEST_STRICT=1` fails.
#[path = "../../crates/vouch-shell/tests/support/strict.rs"]
mod strict;

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use libtest_mimic::{Arguments, Failed, Trial};
use proptest::strategy::{Strategy, ValueTree};
use proptest::test_runner::{Config, RngAlgorithm, TestRng, TestRunner};
use vouch::policy::inert::{InertContext, InertVerdict, judge};

use recorder::Record;
use sandbox::{Ending, Unavailable};

/// The short run's seed and size: 5–12 s on two shared cores.
const DEFAULT_SEED: u64 = 0x696e_6572_7431;
const DEFAULT_INERT: usize = 300;
const DEFAULT_JOBS: usize = 2;
/// The generator stops after this many commands per inert one asked for,
/// so a stage that proves nothing ends the run instead of looping.
const MAX_GENERATED_PER_INERT: usize = 20;
/// Failures printed in full; every one is written to the failures file.
const PRINTED_FAILURES: usize = 10;

/// Programs a run of inert commands may execute: every name the one
/// command table marks inert-capable (readers, the shells and runners the
/// stage follows into, `find`, git, and the builtins that also exist as
/// programs).
fn allowed(name: &str) -> bool {
    vouch::shell::spec::lookup(name).is_some_and(|s| s.inert != vouch::shell::spec::Inert::Never)
}

/// Programs that use the network, and git's subcommands that do.
const NETWORK: &[&str] = &[
    "curl", "wget", "nc", "ncat", "netcat", "socat", "ssh", "scp", "sftp", "rsync", "telnet",
    "ftp", "ping", "dig", "nslookup", "host", "gh", "aws", "kubectl", "docker",
];
const GIT_NETWORK: &[&str] = &[
    "fetch",
    "pull",
    "push",
    "clone",
    "ls-remote",
    "remote-http",
    "remote-https",
    "submodule",
    "send-email",
];

/// The harness: the fixture, the slots commands run in, the sandbox.
struct Harness {
    _base: tempfile::TempDir,
    fixture_home: PathBuf,
    /// The fixture home's snapshot: every copy starts equal to it.
    pristine: fixture::Snapshot,
    slots: Vec<Slot>,
    sandbox: runner::Sandbox,
}

/// One writable copy of the fixture home, refreshed before every run.
struct Slot {
    root: PathBuf,
    home: PathBuf,
    project: PathBuf,
    tmp: PathBuf,
    protected: Vec<String>,
    /// Held from judging to the end of the run: the copy is the slot's.
    /// True when the copy may differ from the fixture (new, or the last
    /// run changed something, `.git/index` included).
    dirty: Mutex<bool>,
}

impl Slot {
    fn new(root: PathBuf) -> Slot {
        let home = root.join("home/dev");
        let protected = vec![
            home.join(".config/vouch").display().to_string(),
            home.join(".local/state/vouch").display().to_string(),
        ];
        Slot {
            project: home.join("project"),
            tmp: root.join("tmp"),
            home,
            root,
            protected,
            dirty: Mutex::new(true),
        }
    }

    /// A fresh copy of the fixture home (`cp -a`) and an empty `/tmp`.
    fn refresh(&self, fixture_home: &Path) -> Result<(), String> {
        let copy = self.root.join("home");
        if copy.exists() {
            std::fs::remove_dir_all(&copy).map_err(|e| format!("clearing the slot: {e}"))?;
        }
        if self.tmp.exists() {
            std::fs::remove_dir_all(&self.tmp).map_err(|e| format!("clearing tmp: {e}"))?;
        }
        std::fs::create_dir_all(&self.tmp).map_err(|e| format!("tmp: {e}"))?;
        let status = std::process::Command::new("cp")
            .arg("-a")
            .arg(fixture_home)
            .arg(&copy)
            .status()
            .map_err(|e| format!("cp: {e}"))?;
        if status.success() {
            Ok(())
        } else {
            Err(format!("cp -a failed: {status}"))
        }
    }

    /// vouch's verdict on `command`, with the slot's project as cwd.
    fn judge(&self, command: &str) -> InertVerdict {
        let home = self.home.display().to_string();
        let cwd = self.project.display().to_string();
        let env = vouch::shell::ShellEnv {
            cwd: Some(&cwd),
            home: &home,
            vars: &[],
        };
        let analysis = vouch::shell::analyze(command, &env, &vouch::shell::Limits::DEFAULT);
        let ctx = InertContext {
            home: &home,
            protected: &self.protected,
            git_system_config: Path::new("/nonexistent/vouch-inert-diff/gitconfig"),
            files: &vouch::engine::Disk,
        };
        judge(command, &analysis, &ctx)
    }
}

impl Harness {
    fn new(slots: usize) -> Result<Harness, Unavailable> {
        Harness::with_fixture(slots, false)
    }

    /// The harness over the plain fixture, or the planted one (what
    /// programs read on their own: `fuzz::plant`).
    fn with_fixture(slots: usize, planted: bool) -> Result<Harness, Unavailable> {
        // The sandbox mounts its own `/tmp`; a fixture home under the host's
        // `/tmp` (a checkout in `/tmp`) would be mounted inside it, so the
        // harness then works in `/var/tmp` instead.
        let target_tmp = env!("CARGO_TARGET_TMPDIR");
        let under_tmp = Path::new(target_tmp).starts_with("/tmp");
        let place = if under_tmp { "/var/tmp" } else { target_tmp };
        let base = tempfile::Builder::new()
            .prefix("vouch-inert-diff-")
            .tempdir_in(place)
            .map_err(|e| Unavailable(format!("no temp dir in {place}: {e}")))?;
        let fixture_root = base.path().join("fixture");
        fixture::build(&fixture_root).map_err(|e| {
            Unavailable(format!(
                "cannot build the fixture (it needs git: `apt-get install git`): {e}"
            ))
        })?;
        if planted {
            fuzz::plant(&fixture_root.join("home/dev"))
                .map_err(|e| Unavailable(format!("cannot plant the fixture: {e}")))?;
        }
        let sandbox = runner::Sandbox::new(&base.path().join("sandbox"))?;
        let harness = Harness {
            pristine: fixture::snapshot(&fixture_root.join("home/dev")),
            fixture_home: fixture_root.join("home"),
            slots: (0..slots.max(1))
                .map(|i| Slot::new(base.path().join(format!("slot-{i}"))))
                .collect(),
            sandbox,
            _base: base,
        };
        let slot = &harness.slots[0];
        slot.refresh(&harness.fixture_home).map_err(Unavailable)?;
        if fixture::snapshot(&slot.home) != harness.pristine {
            return Err(Unavailable(
                "`cp -a` does not copy the fixture exactly".to_owned(),
            ));
        }
        let probe = harness.sandbox.run(
            "echo probe; /bin/true",
            &slot.home,
            &slot.project,
            &slot.tmp,
        );
        if probe.ending != Ending::Exited(Some(0))
            || !probe.records.iter().any(|r| r.name == "true")
            || !probe.rejected.is_empty()
        {
            return Err(Unavailable(sandbox::cannot_start(
                probe.ending,
                &probe.stderr,
            )));
        }
        Ok(harness)
    }

    /// Runs `command` in `slot` on a copy equal to the fixture and returns
    /// what was wrong. The copy is a fresh `cp -a` unless the previous run
    /// left it byte-identical to the fixture, `.git/index` included
    /// (`dirty` false); a run that changes anything marks it dirty.
    fn check(&self, slot: &Slot, command: &str, dirty: Option<&mut bool>) -> Checked {
        let Some(dirty) = dirty else {
            return Checked::broken(command, "the slot's lock is poisoned".to_owned());
        };
        if *dirty {
            if let Err(e) = slot.refresh(&self.fixture_home) {
                return Checked::broken(command, e);
            }
            *dirty = false;
        }
        let before = &self.pristine;
        let run = self
            .sandbox
            .run(command, &slot.home, &slot.project, &slot.tmp);
        let after = fixture::snapshot(&slot.home);
        let tmp = fixture::snapshot(&slot.tmp);
        let mut problems = Vec::new();
        *dirty = after != self.pristine || !tmp.is_empty();
        let changes = fixture::changes(before, &after);
        if !changes.is_empty() {
            problems.push(format!("{} change(s) to the tree", changes.len()));
        }
        for path in fixture::traces(&after) {
            problems.push(format!("a program git's configuration names ran: `{path}`"));
        }
        if !tmp.is_empty() {
            let left: Vec<&String> = tmp.keys().collect();
            problems.push(format!("files left in /tmp: {left:?}"));
        }
        if command.contains("/dev/tcp/") || command.contains("/dev/udp/") {
            problems.push("a network attempt: bash's `/dev/tcp`/`/dev/udp`".to_owned());
        }
        for r in &run.records {
            if let Some(why) = record_problem(r) {
                problems.push(why);
            }
        }
        if run.stderr.contains("Read-only file system") {
            problems.push("a write attempted outside the copy (read-only file system)".to_owned());
        }
        for why in &run.rejected {
            problems.push(format!("recorder channel: {why}"));
        }
        Checked {
            command: command.to_owned(),
            problems,
            changes,
            hashes: (fixture::tree_hash(before), fixture::tree_hash(&after)),
            records: run.records,
            stderr: run.stderr,
            timed_out: run.ending == Ending::TimedOut,
        }
    }
}

/// What is wrong with one recorded execution, if anything.
fn record_problem(r: &Record) -> Option<String> {
    let shown = || format!("`{} {}` in {}", r.name, r.args.join(" "), r.cwd);
    if NETWORK.contains(&r.name.as_str()) {
        return Some(format!("a network attempt: {}", shown()));
    }
    if r.name == "git" && r.args.iter().any(|a| GIT_NETWORK.contains(&a.as_str())) {
        return Some(format!("a network attempt: {}", shown()));
    }
    if !allowed(&r.name) {
        return Some(format!("a program outside the inert set: {}", shown()));
    }
    if matches!(r.name.as_str(), "bash" | "sh" | "dash" | "zsh") {
        // A shell runs a `-c` script, or a system script through its
        // `#!` line; anything else runs a file or its input.
        let script = r
            .args
            .first()
            .is_some_and(|a| a.starts_with(runner::REAL_ROOT));
        let dash_c = r
            .args
            .iter()
            .take_while(|a| a.starts_with('-'))
            .any(|a| !a.starts_with("--") && a.contains('c'));
        if !script && !dash_c {
            return Some(format!("a shell running a file or its input: {}", shown()));
        }
    }
    None
}

/// The result of one checked run.
struct Checked {
    command: String,
    problems: Vec<String>,
    changes: Vec<String>,
    hashes: (String, String),
    records: Vec<Record>,
    stderr: String,
    timed_out: bool,
}

impl Checked {
    fn broken(command: &str, why: String) -> Checked {
        Checked {
            command: command.to_owned(),
            problems: vec![format!("harness: {why}")],
            changes: Vec::new(),
            hashes: (String::new(), String::new()),
            records: Vec::new(),
            stderr: String::new(),
            timed_out: false,
        }
    }

    fn report(&self) -> String {
        let records: Vec<String> = self
            .records
            .iter()
            .map(|r| format!("  ran: {} {:?} (cwd {})", r.name, r.args, r.cwd))
            .collect();
        let changes: Vec<String> = self.changes.iter().map(|c| format!("  {c}")).collect();
        format!(
            "command: {}\nproblems: {}\ntree hash before {} after {}\nchanges:\n{}\nrecords:\n{}\nstderr: {}",
            self.command,
            self.problems.join("; "),
            self.hashes.0,
            self.hashes.1,
            changes.join("\n"),
            records.join("\n"),
            self.stderr.trim()
        )
    }

    fn json(&self, verdict: &str) -> String {
        serde_json::json!({
            "command": self.command,
            "verdict": verdict,
            "problems": self.problems,
            "changes": self.changes,
            "records": self.records,
            "stderr": self.stderr,
        })
        .to_string()
    }
}

/// The look-alikes the harness must catch when they run: each is judged
/// not inert by vouch, and each, run anyway, must be found out. A harness
/// that lets these through would pass anything.
fn canaries(harness: &Available) -> Vec<Trial> {
    let cases: &[(&str, &str)] = &[
        ("cd vendor/x && git status", "FSMONITOR_RAN"),
        ("cd ../textconv && git diff", "TEXTCONV_RAN"),
        ("cd ../extdiff && git diff", "EXTDIFF_RAN"),
        ("sort -o out.txt README.md", "added project/out.txt"),
        ("uniq notes.txt out.txt", "added project/out.txt"),
        ("sed -n '1w out.txt' README.md", "added project/out.txt"),
        (
            "find . -name '*.md' -exec touch {}.x \\;",
            "outside the inert set",
        ),
        (
            "awk 'BEGIN{system(\"touch RAN\")}'",
            "outside the inert set",
        ),
        ("rg TODO --p* src", "a shell running a file"),
        ("git -c alias.x='!touch RAN' x", "outside the inert set"),
        ("cat README.md > /tmp/x", "files left in /tmp"),
        ("echo x > ~/../../escape", "read-only file system"),
        ("curl -s http://192.0.2.1/", "network attempt"),
        ("git fetch origin", "network attempt"),
        ("exec 3<>/dev/tcp/192.0.2.1/80", "network attempt"),
        ("cat README.md | sh", "a shell running"),
    ];
    cases
        .iter()
        .map(|&(command, expect)| {
            sandboxed(
                format!("canary: `{command}` is caught ({expect})"),
                harness.clone(),
                move |harness| {
                    let slot = &harness.slots[0];
                    let mut dirty = slot.dirty.lock().unwrap();
                    if *dirty {
                        slot.refresh(&harness.fixture_home)?;
                        *dirty = false;
                    }
                    if let InertVerdict::Inert(units) = slot.judge(command) {
                        return Err(format!("vouch calls `{command}` inert: {units:?}").into());
                    }
                    let checked = harness.check(slot, command, Some(&mut dirty));
                    let text = format!(
                        "{}\n{}",
                        checked.problems.join("\n"),
                        checked.changes.join("\n")
                    );
                    if text.to_lowercase().contains(&expect.to_lowercase()) {
                        Ok(())
                    } else {
                        Err(format!("not caught:\n{}", checked.report()).into())
                    }
                },
            )
        })
        .collect()
}

/// A kept command (`tests/fixtures/inert_differential.jsonl`): what the
/// harness once found, or a form worth running every time.
#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct KeptLine {
    command: String,
    #[allow(dead_code)]
    found: String,
    /// A finding not fixed yet: the line must still fail, so a fix shows
    /// up as a failure asking to drop the label.
    #[serde(default)]
    open: Option<String>,
}

/// Each kept line: when vouch calls it inert, it runs clean.
fn kept_lines(harness: &Available) -> Vec<Trial> {
    fixtures::jsonl::<KeptLine>("inert_differential.jsonl")
        .into_iter()
        .map(|(number, line)| {
            sandboxed(
                format!("inert_differential.jsonl:{number} `{}`", line.command),
                harness.clone(),
                move |harness| {
                    let tally = Tally::default();
                    tally.take(harness, &harness.slots[0], &line.command);
                    let failures = tally.failures.lock().map_err(|_| "poisoned")?;
                    match (failures.first(), &line.open) {
                        (None, None) | (Some(_), Some(_)) => Ok(()),
                        (Some(f), None) => Err(f.report().into()),
                        (None, Some(open)) => {
                            Err(format!("now runs clean; drop its `open` label (`{open}`)").into())
                        }
                    }
                },
            )
        })
        .collect()
}

/// The `index`th generated command of the run with `seed`: the same on
/// every machine and whatever the number of jobs.
fn generated(seed: u64, index: usize) -> String {
    let mut bytes = [0u8; 32];
    bytes[..8].copy_from_slice(&seed.to_le_bytes());
    bytes[8..16].copy_from_slice(&(index as u64).to_le_bytes());
    let rng = TestRng::from_seed(RngAlgorithm::ChaCha, &bytes);
    let mut runner = TestRunner::new_with_rng(Config::default(), rng);
    generator::command()
        .new_tree(&mut runner)
        .map(|t| t.current())
        .unwrap_or_default()
}

/// Tallies of a run.
#[derive(Default)]
struct Tally {
    judged: AtomicUsize,
    inert: AtomicUsize,
    run: AtomicUsize,
    timed_out: AtomicUsize,
    failures: Mutex<Vec<Checked>>,
}

impl Tally {
    fn summary(&self, what: &str, seconds: f64) -> String {
        let failures = self.failures.lock().map(|f| f.len()).unwrap_or(0);
        format!(
            "{what}: {} judged, {} inert, {} run in bubblewrap, {} failures, {} timed out (killed after 10 s), {seconds:.0} s",
            self.judged.load(Ordering::Relaxed),
            self.inert.load(Ordering::Relaxed),
            self.run.load(Ordering::Relaxed),
            failures,
            self.timed_out.load(Ordering::Relaxed),
        )
    }

    /// Judges `command` in `slot`; runs it when inert and keeps a failure.
    fn take(&self, harness: &Harness, slot: &Slot, command: &str) {
        self.judged.fetch_add(1, Ordering::Relaxed);
        let mut dirty = slot.dirty.lock().map_err(|_| ()).ok();
        if let Some(dirty) = dirty.as_deref_mut()
            && *dirty
        {
            if slot.refresh(&harness.fixture_home).is_err() {
                return;
            }
            *dirty = false;
        }
        let InertVerdict::Inert(_) = slot.judge(command) else {
            return;
        };
        self.inert.fetch_add(1, Ordering::Relaxed);
        let checked = harness.check(slot, command, dirty.as_deref_mut());
        self.run.fetch_add(1, Ordering::Relaxed);
        if checked.timed_out {
            self.timed_out.fetch_add(1, Ordering::Relaxed);
        }
        if !checked.problems.is_empty()
            && let Ok(mut failures) = self.failures.lock()
        {
            failures.push(checked);
        }
    }

    /// Fails with the first failures printed and all of them in a file.
    fn finish(&self, what: &str, started: Instant) -> Result<(), Failed> {
        let summary = self.summary(what, started.elapsed().as_secs_f64());
        eprintln!("inert_differential: {summary}");
        let failures = self.failures.lock().map_err(|_| "poisoned")?;
        if failures.is_empty() {
            return Ok(());
        }
        let path = Path::new(env!("CARGO_TARGET_TMPDIR"))
            .join(format!("inert-differential-{what}-failures.jsonl"));
        if let Ok(mut file) = std::fs::File::create(&path) {
            for f in failures.iter() {
                let _ = writeln!(file, "{}", f.json("inert"));
            }
        }
        let shown: Vec<String> = failures
            .iter()
            .take(PRINTED_FAILURES)
            .map(Checked::report)
            .collect();
        Err(format!(
            "{summary}\nevery failure is in {}\n\n{}",
            path.display(),
            shown.join("\n\n")
        )
        .into())
    }
}

/// Runs `work` on each slot in its own thread.
fn on_slots(harness: &Arc<Harness>, work: impl Fn(&Harness, &Slot) + Send + Sync + 'static) {
    let work = Arc::new(work);
    let threads: Vec<_> = (0..harness.slots.len())
        .map(|i| {
            let harness = Arc::clone(harness);
            let work = Arc::clone(&work);
            std::thread::spawn(move || work(&harness, &harness.slots[i]))
        })
        .collect();
    for t in threads {
        let _ = t.join();
    }
}

fn generated_trial(harness: Available) -> Trial {
    let target = run_env::env_number("VOUCH_INERT_DIFF_CASES", DEFAULT_INERT);
    sandboxed(
        format!("generated: {target} commands vouch calls inert, run in real bash"),
        harness,
        move |harness| {
            let seed = run_env::seed("VOUCH_INERT_DIFF_SEED", DEFAULT_SEED);
            eprintln!("inert_differential: generated run, seed {seed}, {target} inert commands");
            let started = Instant::now();
            let tally = Arc::new(Tally::default());
            let next = Arc::new(AtomicUsize::new(0));
            let max = target.saturating_mul(MAX_GENERATED_PER_INERT);
            let shared = Arc::clone(&tally);
            on_slots(harness, move |harness, slot| {
                while shared.inert.load(Ordering::Relaxed) < target {
                    let index = next.fetch_add(1, Ordering::Relaxed);
                    if index >= max {
                        break;
                    }
                    shared.take(harness, slot, &generated(seed, index));
                }
            });
            if tally.inert.load(Ordering::Relaxed) < target {
                return Err(format!(
                    "only {} inert commands in {max} generated",
                    tally.inert.load(Ordering::Relaxed)
                )
                .into());
            }
            tally.finish("generated", started)
        },
    )
}

/// The harness, or why the sandbox cannot run here (naming the tool and
/// how to install it).
type Available = Result<Arc<Harness>, String>;

/// Whether a trial that needs the harness is ignored: where the sandbox
/// cannot run (the reason printed when the harness was set up), but not
/// under strict mode, where it runs and fails.
fn without_sandbox(harness: &Available) -> bool {
    harness.is_err() && !strict::strict()
}

/// A trial that runs `body` in the sandbox; ignored where the sandbox
/// cannot run ([`without_sandbox`]).
fn sandboxed(
    name: String,
    harness: Available,
    body: impl FnOnce(&Arc<Harness>) -> Result<(), Failed> + Send + 'static,
) -> Trial {
    let ignored = without_sandbox(&harness);
    Trial::test(name, move || match harness {
        Ok(harness) => body(&harness),
        Err(why) => Err(strict::failure(&why).into()),
    })
    .with_ignored_flag(ignored)
}

#[derive(serde::Deserialize)]
struct CorpusLine {
    command: String,
}

/// Opt-in: ignored unless `VOUCH_INERT_DIFF_CORPUS` names the corpus (a
/// measurement outside the repository, not a missing tool), strict mode
/// or not.
fn corpus_trial(harness: Available) -> Trial {
    let path = std::env::var("VOUCH_INERT_DIFF_CORPUS").ok();
    let ignored = without_sandbox(&harness) || path.is_none();
    if path.is_none() {
        eprintln!(
            "inert_differential: corpus run skipped: set VOUCH_INERT_DIFF_CORPUS to a commands.jsonl (../shared/agent-commands/commands.jsonl)"
        );
    }
    Trial::test(
        "corpus: every agent command vouch calls inert, run in real bash",
        move || {
            let Some(path) = path else {
                return Err("VOUCH_INERT_DIFF_CORPUS is not set".into());
            };
            let harness = harness.map_err(|why| strict::failure(&why))?;
            let text = std::fs::read_to_string(&path)
                .map_err(|e| format!("VOUCH_INERT_DIFF_CORPUS=`{path}` cannot be read: {e}"))?;
            let mut commands = Vec::new();
            for (i, line) in text.lines().enumerate() {
                if line.trim().is_empty() {
                    continue;
                }
                let line: CorpusLine = serde_json::from_str(line)
                    .map_err(|e| format!("{path}:{}: not a corpus line: {e}", i + 1))?;
                commands.push(line.command);
            }
            commands.sort();
            commands.dedup();
            eprintln!(
                "inert_differential: corpus `{path}`: {} distinct commands",
                commands.len()
            );
            let started = Instant::now();
            let commands = Arc::new(commands);
            let tally = Arc::new(Tally::default());
            let next = Arc::new(AtomicUsize::new(0));
            let shared = Arc::clone(&tally);
            on_slots(&harness, move |harness, slot| {
                while let Some(command) = commands.get(next.fetch_add(1, Ordering::Relaxed)) {
                    shared.take(harness, slot, command);
                }
            });
            tally.finish("corpus", started)
        },
    )
    .with_ignored_flag(ignored)
}

/// The commands the confined comparison runs: the agent corpus at `path`
/// or the kept lines.
fn confined_commands(corpus: bool, path: Option<String>) -> Result<Vec<String>, String> {
    Ok(match (corpus, path) {
        (true, Some(path)) => {
            let text = std::fs::read_to_string(&path).map_err(|e| format!("{path}: {e}"))?;
            text.lines()
                .filter(|l| !l.trim().is_empty())
                .map(|l| serde_json::from_str::<CorpusLine>(l).map(|c| c.command))
                .collect::<Result<_, _>>()
                .map_err(|e| format!("{path}: {e}"))?
        }
        (true, None) => return Err("VOUCH_INERT_DIFF_CORPUS is not set".into()),
        (false, _) => fixtures::jsonl::<KeptLine>("inert_differential.jsonl")
            .into_iter()
            .map(|(_, line)| line.command)
            .collect(),
    })
}

/// Confined against unconfined over the kept lines (`corpus` false) or the
/// agent corpus: every command vouch calls inert. The corpus form is
/// opt-in like [`corpus_trial`].
fn compare_confined_trial(harness: Available, corpus: bool) -> Trial {
    let path = std::env::var("VOUCH_INERT_DIFF_CORPUS").ok();
    let ignored = without_sandbox(&harness) || (corpus && path.is_none());
    let name = match corpus {
        true => "compare-confined: every agent command vouch calls inert, confined and not",
        false => "compare-confined: the kept lines vouch calls inert, confined and not",
    };
    Trial::test(name, move || {
        let harness = harness.map_err(|why| strict::failure(&why))?;
        confined::available(&harness).map_err(|e| format!("vouch confine cannot run here: {e}"))?;
        let mut commands = confined_commands(corpus, path)?;
        commands.sort();
        commands.dedup();
        // `VOUCH_INERT_DIFF_CONFINED_LIMIT=N`: an even sample of N of the
        // inert ones (each runs three times in the sandbox: the whole
        // corpus takes over an hour on two shared cores).
        let limit = run_env::env_number("VOUCH_INERT_DIFF_CONFINED_LIMIT", usize::MAX);
        if limit < commands.len() {
            let slot = &harness.slots[0];
            slot.refresh(&harness.fixture_home)?;
            commands.retain(|c| matches!(slot.judge(c), InertVerdict::Inert(_)));
            let step = commands.len().div_ceil(limit.max(1)).max(1);
            commands = commands.into_iter().step_by(step).collect();
            eprintln!(
                "inert_differential: an even sample of {} inert commands (every {step})",
                commands.len()
            );
        }
        let started = Instant::now();
        let compared = Arc::new(confined::Compared::default());
        let commands = Arc::new(commands);
        let next = Arc::new(AtomicUsize::new(0));
        let shared = Arc::clone(&compared);
        on_slots(&harness, move |harness, slot| {
            // Judged over the fixture as it runs: a slot is filled by its
            // first run, and judged before it `sub/../.bashrc` had no `sub`
            // to resolve (the verdict depended on the order). Each run
            // refreshes the slot again, and an inert one changes nothing.
            if slot.refresh(&harness.fixture_home).is_err() {
                return;
            }
            while let Some(command) = commands.get(next.fetch_add(1, Ordering::Relaxed)) {
                if let InertVerdict::Inert(_) = slot.judge(command) {
                    confined::compare(harness, slot, command, &shared);
                }
            }
        });
        let summary = compared.summary(
            if corpus { "corpus" } else { "kept lines" },
            started.elapsed().as_secs_f64(),
        );
        eprintln!("inert_differential: {summary}");
        let path = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!(
            "inert-differential-confined-{}.txt",
            if corpus { "corpus" } else { "kept" }
        ));
        if let (Ok(mut file), Ok(all)) =
            (std::fs::File::create(&path), compared.not_identical.lock())
        {
            for (outcome, detail) in all.iter() {
                let _ = writeln!(file, "{outcome:?}: {detail}\n");
            }
            eprintln!(
                "inert_differential: every command not identical is in {}",
                path.display()
            );
        }
        let differences = compared.differences.lock().map_err(|_| "poisoned")?;
        match differences.is_empty() {
            true => Ok(()),
            false => Err(format!(
                "{summary}\n\n{}",
                differences
                    .iter()
                    .take(PRINTED_FAILURES)
                    .cloned()
                    .collect::<Vec<_>>()
                    .join("\n\n")
            )
            .into()),
        }
    })
    .with_ignored_flag(ignored)
}

/// `VOUCH_INERT_DIFF_SHOW='COMMAND'`: judges and runs one command and
/// prints everything, for debugging a failure.
fn show(command: &str) {
    let harness = match Harness::new(1) {
        Ok(h) => h,
        Err(why) => {
            eprintln!("the sandbox cannot run here: {}", why.0);
            return;
        }
    };
    let slot = &harness.slots[0];
    println!("vouch: {:?}", slot.judge(command));
    let mut dirty = true;
    println!(
        "{}",
        harness.check(slot, command, Some(&mut dirty)).report()
    );
}

fn main() {
    if std::env::current_exe().is_ok_and(|p| p == Path::new(fuzz::DRIVER_PATH)) {
        fuzz::driver();
    }
    if recorder::invoked_as_recorder() {
        recorder::run_with(runner::resolve);
    }
    if let Ok(command) = std::env::var("VOUCH_INERT_DIFF_SHOW") {
        show(&command);
        return;
    }
    let mut args = Arguments::from_args();
    // The generated and corpus runs use every slot themselves.
    args.test_threads.get_or_insert(1);
    let jobs = run_env::env_number("VOUCH_INERT_DIFF_JOBS", DEFAULT_JOBS);
    let harness: Available = Harness::new(jobs).map(Arc::new).map_err(|why| why.0);
    if let Err(why) = &harness
        && !strict::strict()
    {
        eprintln!(
            "inert_differential: real-bash runs skipped: {why} (with VOUCH_TEST_STRICT=1 they fail)"
        );
    }
    let mut trials = canaries(&harness);
    trials.extend(kept_lines(&harness));
    trials.push(generated_trial(harness.clone()));
    trials.push(corpus_trial(harness.clone()));
    trials.push(compare_confined_trial(harness.clone(), false));
    trials.push(compare_confined_trial(harness, true));
    trials.push(fuzz_trial());
    libtest_mimic::run(&args, trials).exit();
}

/// The fuzzer's short run inside `cargo test --release`: cases per fixture
/// variant. The long run sets `VOUCH_INERT_FUZZ_CASES` (see `fuzz.rs`).
const DEFAULT_FUZZ: usize = 300;

/// The differential fuzzer against the real programs (issue 42, `fuzz.rs`):
/// argv generated from each inert-capable program's real option alphabet,
/// run in bubblewrap under `strace` over the plain and the planted
/// fixture, compared with vouch's verdict. Fails on any case vouch calls
/// inert that wrote, ran a program, connected or printed a secret byte
/// (confined: on any case that did, inert or not).
///
/// `VOUCH_INERT_FUZZ_CASES` (per variant), `VOUCH_INERT_FUZZ_SEED`,
/// `VOUCH_INERT_FUZZ_START` (the first case index: chunks of one long run),
/// `VOUCH_INERT_FUZZ_PROGRAMS` (a comma list), `VOUCH_INERT_FUZZ_CONFINE=1`
/// with `VOUCH_BIN` (each case as `$VOUCH_BIN confine -- bash -c …`).
fn fuzz_trial() -> Trial {
    let per_variant = run_env::env_number("VOUCH_INERT_FUZZ_CASES", DEFAULT_FUZZ);
    let filter = std::env::var("VOUCH_INERT_FUZZ_PROGRAMS").ok();
    let missing = fuzz_tools_missing(filter.as_deref());
    if let Some(why) = &missing
        && !strict::strict()
    {
        eprintln!("inert_differential: fuzz skipped: {why} (with VOUCH_TEST_STRICT=1 it fails)");
    }
    let ignored = missing.is_some() && !strict::strict();
    Trial::test(
        format!(
            "fuzz: {per_variant} generated argv per fixture variant, run under strace, against the prediction"
        ),
        move || {
            if let Some(why) = missing {
                return Err(strict::failure(&why).into());
            }
            let seed = run_env::seed("VOUCH_INERT_FUZZ_SEED", DEFAULT_SEED);
            let start = run_env::env_number("VOUCH_INERT_FUZZ_START", 0);
            let confine = match std::env::var("VOUCH_INERT_FUZZ_CONFINE").ok().as_deref() {
                Some("1") => Some(PathBuf::from(std::env::var("VOUCH_BIN").map_err(|_| {
                    "VOUCH_INERT_FUZZ_CONFINE=1 needs VOUCH_BIN, a vouch binary with `vouch confine`"
                })?)),
                _ => None,
            };
            let bwrap = sandbox::find_on_path("bwrap").ok_or(sandbox::NO_BWRAP)?;
            let driver = std::env::current_exe().map_err(|e| format!("test binary: {e}"))?;
            let programs = fuzz::programs_under_test(filter.as_deref());
            if programs.is_empty() {
                return Err("no program to fuzz".into());
            }
            let started = Instant::now();
            let mut tallies: std::collections::BTreeMap<String, fuzz::Tally> = Default::default();
            let mut findings: Vec<String> = Vec::new();
            let mut executions = 0usize;
            for (v, planted) in [false, true].into_iter().enumerate() {
                let harness = match Harness::with_fixture(1, planted) {
                    Ok(h) => h,
                    // Printed and passing, or under strict mode failing.
                    Err(why) => return strict::skip(&why.0).map_err(Failed::from),
                };
                let variant = if planted { "planted" } else { "plain" };
                let slot = &harness.slots[0];
                let pristine = harness.fixture_home.join("dev");
                let first = start + v * 1_000_000_000;
                let mut at = first;
                while at < first + per_variant {
                    let end = (at + fuzz::BATCH).min(first + per_variant);
                    slot.refresh(&harness.fixture_home)?;
                    let cases: Vec<fuzz::Case> =
                        (at..end).map(|i| fuzz::case(seed, i, &programs)).collect();
                    let judging = Instant::now();
                    let inert: Vec<bool> = cases
                        .iter()
                        .map(|c| matches!(slot.judge(&c.command), InertVerdict::Inert(_)))
                        .collect();
                    let judged_in = judging.elapsed();
                    let running = Instant::now();
                    let file = slot.root.join("cases.jsonl");
                    let text: Vec<String> = cases
                        .iter()
                        .map(|c| serde_json::to_string(c).unwrap_or_default())
                        .collect();
                    std::fs::write(&file, text.join("\n")).map_err(|e| format!("cases: {e}"))?;
                    let mut child = fuzz::batch_command(
                        &bwrap,
                        &driver,
                        &file,
                        &pristine,
                        &slot.home,
                        &slot.tmp,
                        confine.as_deref(),
                    )
                    .spawn()
                    .map_err(|e| format!("bwrap: {e}"))?;
                    let stderr = child.stderr.take();
                    let err_reader = std::thread::spawn(move || {
                        let mut text = String::new();
                        if let Some(mut e) = stderr {
                            let _ = std::io::Read::read_to_string(&mut e, &mut text);
                        }
                        text
                    });
                    let observed = child
                        .stdout
                        .take()
                        .map(fuzz::read_observed)
                        .unwrap_or_default();
                    let _ = child.wait();
                    let sandbox_err = err_reader.join().unwrap_or_default();
                    if std::env::var_os("VOUCH_INERT_FUZZ_TIMES").is_some() {
                        eprintln!(
                            "fuzz batch {at}: judged in {judged_in:?}, ran in {:?}",
                            running.elapsed()
                        );
                    }
                    if observed.len() != cases.len() {
                        return Err(format!(
                            "the sandbox ran {} of {} cases: {}",
                            observed.len(),
                            cases.len(),
                            sandbox_err.trim()
                        )
                        .into());
                    }
                    for ((case, observed), inert) in cases.iter().zip(&observed).zip(&inert) {
                        executions += 1;
                        let t = tallies.entry(case.program.clone()).or_default();
                        t.runs += 1;
                        if observed.timed_out {
                            t.timed_out += 1;
                        }
                        if observed.broken.is_some() {
                            t.broken += 1;
                        }
                        let bad = if confine.is_some() {
                            observed.escaped_confinement()
                        } else {
                            observed.bad()
                        };
                        if *inert {
                            t.inert += 1;
                        } else {
                            t.refused += 1;
                        }
                        if bad && *inert {
                            t.inert_bad += 1;
                        }
                        if bad && !*inert {
                            t.refused_bad += 1;
                        }
                        if bad && (*inert || confine.is_some()) {
                            findings.push(
                                serde_json::json!({
                                    "variant": variant,
                                    "program": case.program,
                                    "command": case.command,
                                    "inert": inert,
                                    "did": observed.summary(),
                                })
                                .to_string(),
                            );
                        }
                    }
                    at = end;
                }
            }
            let dir = Path::new(env!("CARGO_TARGET_TMPDIR"));
            let mode = if confine.is_some() {
                "confined"
            } else {
                "unconfined"
            };
            let findings_path =
                dir.join(format!("inert-fuzz-{mode}-findings-{seed}-{start}.jsonl"));
            let _ = std::fs::write(&findings_path, findings.join("\n"));
            let summary = serde_json::json!({
                "mode": mode,
                "seed": seed,
                "start": start,
                "executions": executions,
                "seconds": started.elapsed().as_secs(),
                "programs": tallies,
            });
            let summary_path = dir.join(format!("inert-fuzz-{mode}-summary-{seed}-{start}.json"));
            let _ = std::fs::write(&summary_path, summary.to_string());
            eprintln!(
                "inert_differential: fuzz ({mode}, seed {seed}, start {start}): {executions} executions in {} s, {} findings; per program in {}",
                started.elapsed().as_secs(),
                findings.len(),
                summary_path.display()
            );
            if findings.is_empty() {
                Ok(())
            } else {
                let shown: Vec<&String> = findings.iter().take(PRINTED_FAILURES * 3).collect();
                Err(format!(
                    "{} finding(s) (all in {}):\n{}",
                    findings.len(),
                    findings_path.display(),
                    shown
                        .iter()
                        .map(|s| s.as_str())
                        .collect::<Vec<_>>()
                        .join("\n")
                )
                .into())
            }
        },
    )
    .with_ignored_flag(ignored)
}

/// The readers `.ci/run` installs for the fuzzer besides coreutils, grep
/// and sed (which every Debian has): without them their option profiles
/// go unfuzzed (`fuzz::programs_under_test` takes what is installed).
const FUZZ_READERS: [(&str, &str); 3] = [("rg", "ripgrep"), ("tree", "tree"), ("gawk", "gawk")];

/// What the fuzzer needs and this machine lacks, naming the packages:
/// bubblewrap and strace on `PATH`, and each of [`FUZZ_READERS`] the
/// `VOUCH_INERT_FUZZ_PROGRAMS` filter asks for. A missing reader only
/// counts under strict mode; elsewhere it is printed and left out.
fn fuzz_tools_missing(filter: Option<&str>) -> Option<String> {
    let mut packages: Vec<&str> = [("bwrap", "bubblewrap"), ("strace", "strace")]
        .into_iter()
        .filter(|(tool, _)| sandbox::find_on_path(tool).is_none())
        .map(|(_, package)| package)
        .collect();
    let readers: Vec<&str> = FUZZ_READERS
        .into_iter()
        .filter(|(name, _)| filter.is_none_or(|f| f.split(',').any(|n| n == *name)))
        .filter(|(name, _)| !fuzz::installed(name))
        .map(|(_, package)| package)
        .collect();
    if !readers.is_empty() && !strict::strict() {
        eprintln!(
            "inert_differential: fuzz: not installed, so not fuzzed: {} (`apt-get install {}`)",
            readers.join(", "),
            readers.join(" ")
        );
    }
    if strict::strict() {
        packages.extend(readers);
    }
    (!packages.is_empty()).then(|| {
        format!(
            "the fuzzer needs {} (`apt-get install {}`; .ci/run does)",
            packages.join(", "),
            packages.join(" ")
        )
    })
}
