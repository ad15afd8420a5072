//! Differential testing of vouch's shell analysis against real bash
//! (issue 8, build item 4).
//!
//! A command runs in real bash inside a bubblewrap sandbox where every
//! external program is a recorder ([`recorder`], [`sandbox`]); what bash
//! really ran (name, argv after expansion, cwd) is compared with the units
//! vouch extracted ([`adapter`], [`compare`]). Commands come from a proptest
//! grammar ([`grammar`]); every disagreement found is kept as a line of
//! `tests/fixtures/bash_differential.jsonl`, and each line is its own test.
//!
//! - `cargo test --release --test bash_differential` runs the fixture lines,
//!   the harness's own checks and a short generated run (fixed seed).
//! - The long run: `VOUCH_DIFF_CASES=5000 VOUCH_DIFF_SEED=random cargo test
//!   --release --test bash_differential -- generated` (see `docs/shell.md`).
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
mod generated;
mod grammar;
mod recorder;
mod sandbox;

use std::collections::BTreeSet;
use std::sync::Arc;

use libtest_mimic::{Arguments, Failed, Trial};
use serde::{Deserialize, Serialize};

use compare::{Arg, Context, Outcome, Unit, Value};
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
    #[serde(default, skip_serializing_if = "BTreeSet::is_empty")]
    pub functions: BTreeSet<String>,
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
pub fn judge(
    command: &str,
    records: &[Record],
    is_static: bool,
    all_run: bool,
    functions: &BTreeSet<String>,
    builtins: &BTreeSet<String>,
) -> Judgement {
    let (units, error) = adapter::extract(command, sandbox::CWD, sandbox::HOME);
    let ctx = Context {
        builtins,
        functions,
        all_run,
    };
    let outcome = compare::compare(&units, records, &ctx);
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

fn fixtures() -> Vec<(usize, Fixture)> {
    let path = format!(
        "{}/tests/fixtures/bash_differential.jsonl",
        env!("CARGO_MANIFEST_DIR")
    );
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    text.lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
        .map(|(i, l)| {
            let fixture: Fixture = serde_json::from_str(l)
                .unwrap_or_else(|e| panic!("bash_differential.jsonl:{}: {e}", i + 1));
            (i + 1, fixture)
        })
        .collect()
}

/// One fixture line: bash still does what the line recorded (when the
/// sandbox runs here), and vouch agrees — or, for a known limit, still
/// does not.
fn check_fixture(
    line: usize,
    fixture: &Fixture,
    sandbox: Option<&Sandbox>,
    builtins: &BTreeSet<String>,
) -> Result<(), String> {
    let at = format!("bash_differential.jsonl:{line}: `{}`", fixture.command);
    if let Some(sandbox) = sandbox {
        let run = sandbox.run(&fixture.command);
        if !same_records(&run.records, &fixture.bash) {
            return Err(format!(
                "{at}: bash now runs {:?}, the line says {:?}: re-record it",
                run.records, fixture.bash
            ));
        }
    }
    let judgement = judge(
        &fixture.command,
        &fixture.bash,
        fixture.is_static,
        fixture.all_run,
        &fixture.functions,
        builtins,
    );
    match (&fixture.known_limit, judgement.disagrees()) {
        (None, false) | (Some(_), true) => Ok(()),
        (None, true) => Err(format!("{at}: {}", judgement.summary())),
        (Some(limit), false) => Err(format!(
            "{at}: now agrees with bash; drop its known_limit (`{limit}`) and the note in docs/shell.md"
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

/// The comparison's own rules, checked on fixed inputs so a broken matcher
/// cannot make every case agree.
fn rec(name: &str, args: &[&str], cwd: &str) -> Record {
    Record {
        name: name.to_owned(),
        path: format!("/usr/bin/{name}"),
        args: args.iter().map(|s| (*s).to_owned()).collect(),
        cwd: cwd.to_owned(),
    }
}

fn known(s: &str) -> Value {
    Value::Known(s.to_owned())
}

fn unit(name: &str, args: Vec<Arg>, cwd: Value, wrappers: &[&str]) -> Unit {
    Unit {
        name: known(name),
        args,
        cwd,
        wrappers: wrappers.iter().map(|s| (*s).to_owned()).collect(),
    }
}

fn compare_self_checks() -> Vec<Trial> {
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
            ];
            for (p, s, want) in cases {
                if compare::glob_matches(p, s) != want {
                    return Err(format!("`{p}` against `{s}` should be {want}").into());
                }
            }
            Ok(())
        }),
        Trial::test("compare: a wrong argument or cwd is wrong", move || {
            let r = rec("rm", &["-rf", "/"], "/home/dev/project");
            let u = unit(
                "rm",
                vec![Arg::One(known("-rf")), Arg::One(known("/tmp"))],
                known("/home/dev/project"),
                &[],
            );
            let builtins = BTreeSet::new();
            let none = BTreeSet::new();
            let ctx = Context {
                builtins: &builtins,
                functions: &none,
                all_run: true,
            };
            if !matches!(
                compare::compare(&[u], std::slice::from_ref(&r), &ctx),
                Outcome::Wrong(_)
            ) {
                return Err("a different argument must be a disagreement".into());
            }
            let u = unit(
                "rm",
                vec![Arg::One(known("-rf")), Arg::One(known("/"))],
                known("/tmp"),
                &[],
            );
            if !matches!(compare::compare(&[u], &[r], &ctx), Outcome::Wrong(_)) {
                return Err("a different cwd must be a disagreement".into());
            }
            Ok(())
        }),
        Trial::test(
            "compare: unknown fields, sets and globs admit per their meaning",
            move || {
                let builtins = BTreeSet::new();
                let ctx = Context {
                    builtins: &builtins,
                    functions: &BTreeSet::new(),
                    all_run: true,
                };
                let r = rec("rm", &["-rf", "a", "b"], "/home/dev/project");
                let fields = unit(
                    "rm",
                    vec![Arg::One(known("-rf")), Arg::Fields],
                    Value::Unknown,
                    &[],
                );
                if compare::compare(&[fields], std::slice::from_ref(&r), &ctx)
                    != Outcome::Consistent
                {
                    return Err("fields admit any arguments, loosely".into());
                }
                let glob = unit(
                    "rm",
                    vec![Arg::One(known("-rf")), Arg::Glob("*".into())],
                    known("/home/dev/project"),
                    &[],
                );
                if compare::compare(&[glob], std::slice::from_ref(&r), &ctx) != Outcome::Consistent
                {
                    return Err("a glob admits what it matches".into());
                }
                let set: BTreeSet<String> =
                    ["/tmp".to_owned(), "/home/dev/project".to_owned()].into();
                let one = unit("ls", vec![], Value::OneOf(set.clone()), &[]);
                let r1 = rec("ls", &[], "/tmp");
                let r2 = rec("ls", &[], "/home/dev/project");
                if compare::compare(std::slice::from_ref(&one), &[r1.clone(), r2], &ctx)
                    != Outcome::Exact
                {
                    return Err("a candidate set that is exactly what ran is exact".into());
                }
                if compare::compare(&[one], &[r1], &ctx) != Outcome::Consistent {
                    return Err("a candidate set wider than what ran is only consistent".into());
                }
                Ok(())
            },
        ),
        Trial::test("compare: wrappers, extras and builtins", move || {
            let mut builtins = BTreeSet::new();
            builtins.insert("echo".to_owned());
            let ctx = Context {
                builtins: &builtins,
                functions: &BTreeSet::new(),
                all_run: true,
            };
            let sudo = rec(
                "sudo",
                &["-u", "root", "rm", "-rf", "/"],
                "/home/dev/project",
            );
            let inner = unit(
                "rm",
                vec![Arg::One(known("-rf")), Arg::One(known("/"))],
                known("/home/dev/project"),
                &["sudo"],
            );
            if compare::compare(
                std::slice::from_ref(&inner),
                std::slice::from_ref(&sudo),
                &ctx,
            ) != Outcome::Exact
            {
                return Err("sudo's record ends with the unit's command".into());
            }
            let wrong = unit(
                "rm",
                vec![Arg::One(known("/"))],
                known("/home/dev/project"),
                &["sudo"],
            );
            if !matches!(compare::compare(&[wrong], &[sudo], &ctx), Outcome::Wrong(_)) {
                return Err("sudo's record must end with the unit's exact command".into());
            }
            let echo = unit("echo", vec![], known("/home/dev/project"), &[]);
            if compare::compare(std::slice::from_ref(&echo), &[], &ctx) != Outcome::Exact {
                return Err("a builtin is never recorded".into());
            }
            let ghost = unit("rm", vec![], known("/home/dev/project"), &[]);
            if !matches!(compare::compare(&[ghost], &[], &ctx), Outcome::Wrong(_)) {
                return Err("an external unit that never ran is extra".into());
            }
            Ok(())
        }),
    ]
}

/// The sandbox's own promises: externals are recorded however they are
/// named, builtins are not, and the log cannot be forged.
fn sandbox_self_checks(sandbox: Option<Arc<Sandbox>>) -> Vec<Trial> {
    let make =
        |name: &str, command: &'static str, check: fn(&sandbox::Run) -> Result<(), String>| {
            let sandbox = sandbox.clone();
            let ignored = sandbox.is_none();
            Trial::test(format!("sandbox: {name}"), move || {
                let Some(sandbox) = sandbox else {
                    return Err("the sandbox cannot run here".into());
                };
                check(&sandbox.run(command)).map_err(Failed::from)
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

fn main() {
    if recorder::invoked_as_recorder() {
        recorder::run();
    }
    let args = Arguments::from_args();
    let sandbox = match Sandbox::new() {
        Ok(s) => Some(Arc::new(s)),
        Err(why) => {
            eprintln!(
                "bash_differential: real-bash runs skipped: {}; fixture lines use their recorded runs",
                why.0
            );
            None
        }
    };
    let builtins: Arc<BTreeSet<String>> = Arc::new(match &sandbox {
        Some(s) => s.builtins.clone(),
        None => generated::FALLBACK_BUILTINS
            .iter()
            .map(|s| (*s).to_owned())
            .collect(),
    });
    let mut trials = compare_self_checks();
    trials.extend(sandbox_self_checks(sandbox.clone()));
    for (line, fixture) in fixtures() {
        let sandbox = sandbox.clone();
        let builtins = Arc::clone(&builtins);
        let name = format!("bash_differential.jsonl:{line} `{}`", fixture.command);
        trials.push(Trial::test(name, move || {
            check_fixture(line, &fixture, sandbox.as_deref(), &builtins).map_err(Failed::from)
        }));
    }
    trials.push(generated::trial(sandbox, builtins));
    libtest_mimic::run(&args, trials).exit();
}
