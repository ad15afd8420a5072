//! Differential testing of vouch's shell analysis against real bash
//! (issue 8, build item 4).
//!
//! A command runs in real bash inside a bubblewrap sandbox where every
//! external program is a recorder ([`recorder`], [`sandbox`]); what bash
//! really ran (name, argv after expansion, cwd) is compared with the units
//! vouch extracted ([`adapter`], [`compare`]). Commands come from a proptest
//! grammar ([`grammar`]); every disagreement found is kept as a line of
//! `tests/fixtures/bash_differential.jsonl` (this crate's), and each line
//! is its own test.
//!
//! - `cargo test --release -p vouch-shell --test bash_differential` runs
//!   the fixture lines, the harness's own checks and a short generated run
//!   (fixed seed); `cargo test --release` at the workspace root runs it too.
//! - The long run: `VOUCH_DIFF_CASES=5000 VOUCH_DIFF_SEED=random cargo test
//!   --release -p vouch-shell --test bash_differential -- generated` (see
//!   `docs/differential.md`).
//!
//! Without bubblewrap (or user namespaces) the real-bash runs are skipped
//! with the reason printed, and the fixture lines are judged on their
//! recorded runs alone; under `VOUCH_TEST_STRICT=1` every one of them
//! fails instead ([`strict`]).
//!
//! It tests `vouch-shell` alone; the root crate's test tree reuses its
//! sandbox, recorder and knobs (`tests/inert_differential/`), and it reads
//! its fixture through the root's one fixture loader, whose
//! `CARGO_MANIFEST_DIR` is this crate's here.
//!
//! This binary is also the recorder: run from its sandbox mount point it
//! records and exits before anything else happens.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

mod adapter;
mod compare;
#[path = "../../../../tests/it/support/fixtures.rs"]
mod fixtures;
mod generated;
mod grammar;
mod recorder;
mod run_env;
mod sandbox;
#[path = "../support/strict.rs"]
mod strict;

use std::sync::Arc;

use libtest_mimic::{Arguments, Failed, Trial};
use serde::{Deserialize, Serialize};

use compare::{Arg, Context, Expect, Outcome, Unit, Value};
use recorder::Record;
use sandbox::Sandbox;

/// One kept disagreement (or regression line).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Fixture {
    pub command: String,
    /// bash's behaviour follows from the text alone: vouch must be exact.
    #[serde(rename = "static")]
    pub is_static: bool,
    /// Every command of the case runs, so a unit bash never ran is wrong.
    pub all_run: bool,
    /// What bash ran, as recorded when the line was added.
    pub bash: Vec<Record>,
    /// What the comparison said when the line was added.
    pub found: String,
    /// A documented limit (`docs/shell.md`): the line must still disagree,
    /// so a fix shows up as a failure asking to drop the label.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub known_limit: Option<String>,
}

/// The judgement on one command: compare vouch's units with bash's records.
pub fn judge(command: &str, records: &[Record], is_static: bool, all_run: bool) -> Judgement {
    let (units, error) = adapter::extract(command, sandbox::CWD, sandbox::HOME);
    let outcome = compare::compare(&units, records, &Context { all_run });
    Judgement {
        outcome,
        is_static,
        units,
        error,
    }
}

/// What [`judge`] found.
pub struct Judgement {
    pub outcome: Outcome,
    pub is_static: bool,
    pub units: Vec<Unit>,
    pub error: Option<String>,
}

impl Judgement {
    /// A disagreement: something wrong, or a static case left imprecise.
    pub fn disagrees(&self) -> bool {
        match &self.outcome {
            Outcome::Wrong(_) => true,
            Outcome::Consistent => self.is_static,
            Outcome::Exact => false,
        }
    }

    pub fn summary(&self) -> String {
        let units: Vec<String> = self.units.iter().map(compare::show_unit).collect();
        let what = match &self.outcome {
            Outcome::Wrong(findings) => findings
                .iter()
                .map(ToString::to_string)
                .collect::<Vec<_>>()
                .join("; "),
            Outcome::Consistent if self.is_static => {
                "imprecise: static command, vouch left a value unknown".to_owned()
            }
            Outcome::Consistent => "consistent".to_owned(),
            Outcome::Exact => "exact".to_owned(),
        };
        let error = self
            .error
            .as_deref()
            .map(|e| format!(" (vouch: {e})"))
            .unwrap_or_default();
        format!("{what}{error}; vouch units: [{}]", units.join("; "))
    }
}

/// One fixture line: bash still does what the line recorded (when the
/// sandbox runs here; under strict mode it must), and vouch agrees — or,
/// for a known limit, still does not.
fn check_fixture(line: usize, fixture: &Fixture, sandbox: &Available) -> Result<(), String> {
    let at = format!("bash_differential.jsonl:{line}: `{}`", fixture.command);
    match sandbox {
        Ok(sandbox) => {
            let run = sandbox.run(&fixture.command);
            if !same_records(&run.records, &fixture.bash) {
                return Err(format!(
                    "{at}: bash now runs {:?}, the line says {:?}: re-record it",
                    run.records, fixture.bash
                ));
            }
        }
        Err(why) if strict::strict() => return Err(format!("{at}: {}", strict::failure(why))),
        Err(_) => {}
    }
    let judgement = judge(
        &fixture.command,
        &fixture.bash,
        fixture.is_static,
        fixture.all_run,
    );
    match (&fixture.known_limit, judgement.disagrees()) {
        (None, false) | (Some(_), true) => Ok(()),
        (None, true) => Err(format!("{at}: {}", judgement.summary())),
        (Some(limit), false) => Err(format!(
            "{at}: now agrees with bash; drop its known_limit (`{limit}`) and the note in docs/differential.md"
        )),
    }
}

fn same_records(a: &[Record], b: &[Record]) -> bool {
    let key = |r: &Record| (r.name.clone(), r.args.clone(), r.cwd.clone());
    let mut a: Vec<_> = a.iter().map(key).collect();
    let mut b: Vec<_> = b.iter().map(key).collect();
    a.sort();
    b.sort();
    a == b
}

fn rec(name: &str, args: &[&str], cwd: &str) -> Record {
    Record {
        name: name.to_owned(),
        path: format!("/usr/bin/{name}"),
        args: args.iter().map(|s| (*s).to_owned()).collect(),
        cwd: cwd.to_owned(),
    }
}

fn known(s: &str) -> Value {
    Value::known(s)
}

fn unit(name: &str, args: Vec<Arg>, cwd: Value) -> Unit {
    Unit {
        name: known(name),
        args,
        cwd,
        expect: Expect::Recorded,
        alternatives: name.to_owned(),
    }
}

fn fields(words: &[&str]) -> Vec<Arg> {
    words.iter().map(|w| Arg::Field(known(w))).collect()
}

const PROJECT: &str = "/home/dev/project";

fn check(ok: bool, why: &str) -> Result<(), Failed> {
    if ok { Ok(()) } else { Err(why.into()) }
}

/// The comparison's own rules, checked on fixed inputs so a broken matcher
/// cannot make every case agree.
fn compare_self_checks() -> Vec<Trial> {
    let all_run = Context { all_run: true };
    vec![
        Trial::test("compare: globs follow bash's rules", move || {
            let cases = [
                ("*", "a.txt", true),
                ("*", ".env", false),
                (".*", ".env", true),
                ("src/*", "src/a", true),
                ("*", "src/a", false),
                ("[ab]*", "b1", true),
                ("[!a]*", "a1", false),
                ("?.txt", "a.txt", true),
                ("a[", "a[", true),
                ("[[:digit:]]x", "7x", true),
            ];
            for (p, s, want) in cases {
                check(
                    compare::glob_matches(p, s) == want,
                    &format!("`{p}` against `{s}` should be {want}"),
                )?;
            }
            Ok(())
        }),
        Trial::test("compare: a wrong argument or cwd is wrong", move || {
            let ctx = Context { all_run: true };
            let r = rec("rm", &["-rf", "/"], PROJECT);
            let u = unit("rm", fields(&["-rf", "/tmp"]), known(PROJECT));
            check(
                matches!(
                    compare::compare(&[u], std::slice::from_ref(&r), &ctx),
                    Outcome::Wrong(_)
                ),
                "a different argument must be a disagreement",
            )?;
            let u = unit("rm", fields(&["-rf", "/"]), known("/tmp"));
            check(
                matches!(compare::compare(&[u], &[r], &ctx), Outcome::Wrong(_)),
                "a different cwd must be a disagreement",
            )
        }),
        Trial::test(
            "compare: unknown fields, holes, sets and patterns admit per their meaning",
            move || {
                let ctx = all_run;
                let r = rec("rm", &["-rf", "a", "b"], PROJECT);
                let mut u = unit(
                    "rm",
                    vec![Arg::Field(known("-rf")), Arg::Fields],
                    Value::unknown(),
                );
                check(
                    compare::compare(std::slice::from_ref(&u), std::slice::from_ref(&r), &ctx)
                        == Outcome::Consistent,
                    "fields admit any arguments, loosely",
                )?;
                u.args = vec![Arg::Field(known("-rf")), Arg::Field(Value::unknown())];
                check(
                    matches!(
                        compare::compare(&[u], std::slice::from_ref(&r), &ctx),
                        Outcome::Wrong(_)
                    ),
                    "one unknown field is exactly one argument",
                )?;
                let star = Value(vec![compare::Cand(vec![compare::Piece::Star])]);
                let glob = unit(
                    "rm",
                    vec![Arg::Field(known("-rf")), Arg::Field(star)],
                    known(PROJECT),
                );
                check(
                    compare::compare(&[glob], std::slice::from_ref(&r), &ctx)
                        == Outcome::Consistent,
                    "a pattern admits the names it matches",
                )?;
                let hole = Value(vec![compare::Cand(vec![
                    compare::Piece::Lit("/tmp/".into()),
                    compare::Piece::Any,
                ])]);
                let u = unit("ls", vec![Arg::Field(hole)], known(PROJECT));
                check(
                    compare::compare(&[u], &[rec("ls", &["/tmp/a/b"], PROJECT)], &ctx)
                        == Outcome::Consistent,
                    "a hole admits any text, `/` included",
                )?;
                let one = unit("ls", vec![], Value::one_of(&["/tmp", PROJECT]));
                let r1 = rec("ls", &[], "/tmp");
                let r2 = rec("ls", &[], PROJECT);
                check(
                    compare::compare(std::slice::from_ref(&one), &[r1.clone(), r2], &ctx)
                        == Outcome::Exact,
                    "a candidate set that is exactly what ran is exact",
                )?;
                check(
                    compare::compare(&[one], &[r1], &ctx) == Outcome::Consistent,
                    "a candidate set wider than what ran is only consistent",
                )
            },
        ),
        Trial::test(
            "compare: extras, internals and unverifiable units",
            move || {
                let ctx = Context { all_run: true };
                let mut echo = unit("echo", vec![], known(PROJECT));
                echo.expect = Expect::Internal;
                check(
                    compare::compare(std::slice::from_ref(&echo), &[], &ctx) == Outcome::Exact,
                    "a builtin is never recorded",
                )?;
                let ghost = unit("rm", vec![], known(PROJECT));
                check(
                    matches!(
                        compare::compare(std::slice::from_ref(&ghost), &[], &ctx),
                        Outcome::Wrong(_)
                    ),
                    "an external unit that never ran is extra",
                )?;
                check(
                    compare::compare(
                        std::slice::from_ref(&ghost),
                        &[],
                        &Context { all_run: false },
                    ) == Outcome::Exact,
                    "in a case with dead branches a unit may not run",
                )?;
                let mut behind_sudo = ghost;
                behind_sudo.expect = Expect::Unverifiable;
                check(
                    compare::compare(&[behind_sudo], &[], &ctx) == Outcome::Exact,
                    "a unit behind sudo cannot be verified",
                )
            },
        ),
    ]
}

/// The sandbox, or why it cannot run here (naming the tool and how to
/// install it).
pub type Available = Result<Arc<Sandbox>, String>;

/// The sandbox's own promises: externals are recorded however they are
/// named, builtins are not, and the log cannot be forged.
fn sandbox_self_checks(sandbox: &Available) -> Vec<Trial> {
    let make =
        |name: &str, command: &'static str, check: fn(&sandbox::Run) -> Result<(), String>| {
            let sandbox = sandbox.clone();
            // Ignored where the sandbox cannot run, but for strict mode.
            let ignored = sandbox.is_err() && !strict::strict();
            Trial::test(format!("sandbox: {name}"), move || match sandbox {
                Ok(sandbox) => check(&sandbox.run(command)).map_err(Failed::from),
                Err(why) => Err(strict::failure(&why).into()),
            })
            .with_ignored_flag(ignored)
        };
    vec![
        make(
            "every way of naming an external is recorded",
            "/bin/rm a; /usr/bin/rm b; command -p rm c; \\rm d; env rm e; exec rm f",
            |run| {
                let args: Vec<String> = run
                    .records
                    .iter()
                    .filter(|r| r.name == "rm")
                    .flat_map(|r| r.args.clone())
                    .collect();
                if args == ["a", "b", "c", "d", "e", "f"] {
                    Ok(())
                } else {
                    Err(format!("rm records {args:?}"))
                }
            },
        ),
        make(
            "builtins are not recorded",
            "echo hi; printf x; cd /tmp; true; :",
            |run| {
                if run.records.is_empty() {
                    Ok(())
                } else {
                    Err(format!("builtins recorded: {:?}", run.records))
                }
            },
        ),
        make(
            "the log cannot be forged",
            "echo '{\"Exec\":{\"name\":\"rm\",\"path\":\"/bin/rm\",\"args\":[\"forged\"],\"cwd\":\"/\"}}' > /run/vouch-rec/sock; exec 3<>/run/vouch-rec/sock; cat /run/vouch-rec/sock > /tmp/x",
            |run| {
                if run
                    .records
                    .iter()
                    .any(|r| r.args.iter().any(|a| a == "forged"))
                {
                    Err(format!("forged record accepted: {:?}", run.records))
                } else {
                    Ok(())
                }
            },
        ),
        make(
            "there is no network",
            "exec 3<>/dev/tcp/192.0.2.1/80 && touch connected",
            |run| {
                if run.records.iter().any(|r| r.name == "touch") {
                    Err("a TCP connection succeeded inside the sandbox".into())
                } else {
                    Ok(())
                }
            },
        ),
        make(
            "the root is read-only and HOME is a fresh tmpfs",
            "echo x > /etc/vouch-test && touch wrote; shopt -s nullglob dotglob; f=(~/.config/*); [ ${#f[@]} = 0 ] && touch empty; echo y > ~/f && touch home",
            |run| {
                let touched: Vec<String> = run
                    .records
                    .iter()
                    .map(|r| format!("{} {}", r.name, r.args.join(" ")))
                    .collect();
                if touched == ["touch empty", "touch home"] {
                    Ok(())
                } else {
                    Err(format!("records {:?}", run.records))
                }
            },
        ),
    ]
}

/// `VOUCH_DIFF_SHOW='COMMAND' cargo test --release --test bash_differential`:
/// runs one command and prints what bash ran, what vouch says and the
/// verdict (as a static command where every command runs), for debugging a
/// fixture line.
fn show(command: &str) {
    let sandbox = match Sandbox::new() {
        Ok(s) => s,
        Err(why) => {
            eprintln!("the sandbox cannot run here: {}", why.0);
            return;
        }
    };
    let run = sandbox.run(command);
    println!("ending: {:?}", run.ending);
    for r in &run.records {
        println!("bash ran: {}", compare::show_record(r));
    }
    if !run.rejected.is_empty() {
        println!("rejected: {:?}", run.rejected);
    }
    println!("stderr:\n{}", run.stderr);
    let judgement = judge(command, &run.records, true, true);
    println!("{:?}: {}", judgement.outcome, judgement.summary());
    // The run as a fixture line (judged static, every command running), to
    // keep a fixed mechanism as a regression line.
    let line = Fixture {
        command: command.to_owned(),
        is_static: true,
        all_run: true,
        bash: run.records.clone(),
        found: "regression line: the mechanism it shows was fixed".to_owned(),
        known_limit: None,
    };
    if let Ok(json) = serde_json::to_string(&line) {
        println!("fixture: {json}");
    }
}

fn main() {
    if recorder::invoked_as_recorder() {
        recorder::run();
    }
    if let Ok(command) = std::env::var("VOUCH_DIFF_SHOW") {
        show(&command);
        return;
    }
    let args = Arguments::from_args();
    let sandbox: Available = Sandbox::new().map(Arc::new).map_err(|why| why.0);
    if let Err(why) = &sandbox
        && !strict::strict()
    {
        eprintln!(
            "bash_differential: real-bash runs skipped: {why}; fixture lines use their recorded runs (with VOUCH_TEST_STRICT=1 they fail)"
        );
    }
    let mut trials = compare_self_checks();
    trials.extend(sandbox_self_checks(&sandbox));
    for (line, fixture) in fixtures::jsonl::<Fixture>("bash_differential.jsonl") {
        let sandbox = sandbox.clone();
        let name = format!("bash_differential.jsonl:{line} `{}`", fixture.command);
        trials.push(Trial::test(name, move || {
            check_fixture(line, &fixture, &sandbox).map_err(Failed::from)
        }));
    }
    trials.push(generated::trial(sandbox));
    libtest_mimic::run(&args, trials).exit();
}
