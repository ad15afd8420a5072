//! `vouch eval` as a user runs it: the shipped sets through the whole
//! pipeline against the test model server with scripted verdicts. Every
//! figure of the report is worked out here, independently — which cases the
//! deterministic stages decide (asked of an engine without a model), what
//! each scripted reply makes of the others — and compared exactly; the JSON
//! document round-trips; the user's own state and audit are untouched, byte
//! for byte.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::{Value, json};
use vouch::config::Config;
use vouch::engine::{Engine, EngineOptions};
use vouch::eval::Report;
use vouch::eval::report::{Came, decided_without_model, nearest_rank};
use vouch::request::Request;

use crate::support::fixtures;
use crate::support::model_server::{Answer, Content, ModelServer, Reply, Script, Stop};

const SETS: [&str; 4] = [
    "eval/everyday.jsonl",
    "eval/over_eager.jsonl",
    "eval/authorization.jsonl",
    "eval/injection.jsonl",
];

struct Case {
    id: String,
    category: String,
    expect: String,
    request: Request,
}

fn shipped_cases() -> Vec<Case> {
    let mut cases = Vec::new();
    for set in SETS {
        for (_, v) in fixtures::jsonl::<Value>(set) {
            let mut request: Request = serde_json::from_value(v["request"].clone()).unwrap();
            let id = v["id"].as_str().unwrap().to_owned();
            // As eval does: every case its own session and turn.
            request.session_id = format!("eval-{id}");
            request.turn_id = Some("eval".to_owned());
            cases.push(Case {
                id,
                category: v["category"].as_str().unwrap().to_owned(),
                expect: v["expect"].as_str().unwrap().to_owned(),
                request,
            });
        }
    }
    cases
}

#[test]
fn the_shipped_sets_hold_300_labelled_cases_with_a_reason_each() {
    let cases = shipped_cases();
    assert!(cases.len() >= 300, "{} cases", cases.len());
    let ids: BTreeSet<&str> = cases.iter().map(|c| c.id.as_str()).collect();
    assert_eq!(ids.len(), cases.len(), "ids are unique");
    for set in SETS {
        for (line, v) in fixtures::jsonl::<Value>(set) {
            let why = v["why"].as_str().unwrap_or_default();
            assert!(
                !why.trim().is_empty() && !why.contains('\n'),
                "{set}:{line}"
            );
            assert!(
                ["allow", "deny", "defer"].contains(&v["expect"].as_str().unwrap()),
                "{set}:{line}"
            );
        }
    }
    let categories: BTreeSet<&str> = cases.iter().map(|c| c.category.as_str()).collect();
    for wanted in ["everyday", "over-eager", "authorization", "injection"] {
        assert!(categories.contains(wanted), "{wanted}");
    }
}

/// What the deterministic stages make of each case: `Some` decided without
/// a model, `None` the model's to judge (asked of an engine with no model).
async fn deterministic(cases: &[Case]) -> Vec<Option<Came>> {
    let dir = tempfile::tempdir().unwrap();
    let mut config = Config::defaults().unwrap();
    config.cache.ttl_ms = 0;
    let engine = Engine::new(EngineOptions::isolated(dir.path(), &config).unwrap()).unwrap();
    let mut out = Vec::new();
    for case in cases {
        let d = engine.review(case.request.clone()).await;
        out.push(decided_without_model(&d).then(|| Came::of(&d)));
    }
    out
}

/// One scripted model reply, and what the case comes to with it.
struct Scripted {
    reply: Reply,
    came: Came,
    /// `(input, output)` tokens when the reply is a verdict.
    tokens: Option<(u64, u64)>,
    fault: Option<&'static str>,
}

fn verdict(k: usize, outcome: &str, risk: &str, came: Came) -> Scripted {
    let (input, output) = (300 + (k as u64 * 37) % 1000, 20 + (k as u64 * 7) % 60);
    let v = json!({"outcome": outcome, "risk_level": risk, "user_authorization": "medium",
        "rationale": format!("scripted reply {k}: {outcome}"), "suggestion": null});
    Scripted {
        reply: Reply::answer(Answer {
            content: Content::Verdict(v),
            stop: Stop::Done,
            input_tokens: input,
            output_tokens: output,
        }),
        came,
        tokens: Some((input, output)),
        fault: None,
    }
}

/// The k-th model call's reply: mostly verdicts of every kind (an allow at
/// high risk meets the ceiling: `decision.on_risk_exceeded = "defer"`), and
/// a server error and garbage now and then (`failure_mode = "deny"`).
fn scripted(k: usize) -> Scripted {
    match k % 11 {
        0 | 3 | 6 | 8 => verdict(k, "allow", "low", Came::Allow),
        1 | 5 | 9 => verdict(k, "deny", "medium", Came::Deny),
        2 | 7 => verdict(k, "defer", "low", Came::Defer),
        4 => verdict(k, "allow", "high", Came::Defer),
        _ if k.is_multiple_of(2) => Scripted {
            reply: Reply::status(500),
            came: Came::Deny,
            tokens: None,
            fault: Some("reviewer_down"),
        },
        _ => Scripted {
            reply: Reply::garbage(),
            came: Came::Deny,
            tokens: None,
            fault: Some("reviewer_bad_reply"),
        },
    }
}

/// Every file under `dir` with its bytes.
fn snapshot(dir: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    let mut out = BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
            } else {
                out.insert(path.clone(), std::fs::read(&path).unwrap());
            }
        }
    }
    out
}

fn ratio(part: u64, whole: u64) -> Option<f64> {
    (whole > 0).then(|| part as f64 / whole as f64)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_figure_of_the_report_is_exact_and_the_users_state_is_untouched() {
    let cases = shipped_cases();
    let decided = deterministic(&cases).await;
    let to_model = decided.iter().filter(|d| d.is_none()).count();
    assert!(to_model > 200, "most cases need the model: {to_model}");
    let script: Vec<Scripted> = (0..to_model).map(scripted).collect();
    let server = ModelServer::with_script(Script::queue(
        script.iter().map(|s| s.reply.clone()).collect(),
    ))
    .await;

    // The user's own vouch: a configuration naming the model, and a state
    // directory with an audit database of their own.
    let user = tempfile::tempdir().unwrap();
    std::fs::write(
        user.path().join("config.toml"),
        format!(
            "[reviewer]\nprovider = \"openai\"\nbase_url = \"{}\"\nmodel = \"eval-model\"\n\
             api_key_env = \"\"\nretries = 0\ninput_usd_per_mtok = 0.4\noutput_usd_per_mtok = 1.6\n",
            server.base_url()
        ),
    )
    .unwrap();
    std::fs::create_dir_all(user.path().join("state")).unwrap();
    std::fs::write(user.path().join("state/audit.db"), b"the user's own audit").unwrap();
    std::fs::write(user.path().join("state/state.db"), b"the user's own state").unwrap();
    let before = snapshot(user.path());

    let mut cmd = Command::new(env!("CARGO_BIN_EXE_vouch"));
    cmd.arg("eval");
    for set in SETS {
        cmd.arg("--set").arg(fixtures::path(set));
    }
    cmd.args(["--concurrency", "1", "--format", "json"])
        .env("VOUCH_HOME", user.path())
        .env("HOME", user.path())
        .env_remove("RUST_LOG");
    let out = tokio::task::spawn_blocking(move || cmd.output().unwrap())
        .await
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "stderr: {stderr}");
    assert_eq!(
        snapshot(user.path()),
        before,
        "the user's files are untouched"
    );
    assert_eq!(server.requests().len(), to_model, "one model call per case");

    // The JSON round-trips through the typed report.
    let text = String::from_utf8(out.stdout).unwrap();
    let report: Report = serde_json::from_str(&text).unwrap();
    let again: Value = serde_json::to_value(&report).unwrap();
    assert_eq!(again, serde_json::from_str::<Value>(&text).unwrap());
    for key in [
        "cases",
        "confusion",
        "fpr",
        "fnr",
        "by_category",
        "tokens",
        "latency_ms",
        "cost",
        "wrong",
    ] {
        assert!(again.get(key).is_some(), "stable key `{key}`");
    }

    // Every figure, worked out here.
    let mut came = Vec::new();
    let mut script_iter = script.iter();
    let (mut inputs, mut outputs) = (Vec::new(), Vec::new());
    let mut failures: BTreeMap<String, u64> = BTreeMap::new();
    for d in &decided {
        match d {
            Some(c) => came.push(*c),
            None => {
                let s = script_iter.next().unwrap();
                came.push(s.came);
                // A failed call still counts, with no tokens.
                let (i, o) = s.tokens.unwrap_or((0, 0));
                inputs.push(i);
                outputs.push(o);
                if let Some(f) = s.fault {
                    *failures.entry(f.to_owned()).or_default() += 1;
                }
            }
        }
    }
    let stopped = |c: Came| matches!(c, Came::Defer | Came::Deny);
    let mut confusion: BTreeMap<String, BTreeMap<String, u64>> = BTreeMap::new();
    for e in ["allow", "defer", "deny"] {
        for c in ["allow", "abstain", "defer", "deny"] {
            confusion.entry(e.into()).or_default().insert(c.into(), 0);
        }
    }
    let (mut neg, mut pos, mut fp, mut fn_) = (0u64, 0u64, 0u64, 0u64);
    let mut by_cat: BTreeMap<String, [u64; 4]> = BTreeMap::new();
    let mut wrong = BTreeSet::new();
    for (case, c) in cases.iter().zip(&came) {
        *confusion
            .get_mut(&case.expect)
            .unwrap()
            .get_mut(c.as_str())
            .unwrap() += 1;
        let cat = by_cat.entry(case.category.clone()).or_default();
        if case.expect == "allow" {
            neg += 1;
            cat[0] += 1;
            if stopped(*c) {
                fp += 1;
                cat[2] += 1;
                wrong.insert(case.id.clone());
            }
        } else {
            pos += 1;
            cat[1] += 1;
            if !stopped(*c) {
                fn_ += 1;
                cat[3] += 1;
                wrong.insert(case.id.clone());
            }
        }
    }
    assert_eq!(report.cases, cases.len() as u64);
    assert_eq!(report.confusion, confusion);
    assert_eq!(
        (
            report.negatives,
            report.positives,
            report.false_positives,
            report.false_negatives
        ),
        (neg, pos, fp, fn_)
    );
    assert_eq!(report.fpr, ratio(fp, neg));
    assert_eq!(report.fnr, ratio(fn_, pos));
    assert!(fp > 0 && fn_ > 0, "the script makes mistakes of both kinds");
    for (name, [n, p, f_p, f_n]) in &by_cat {
        let got = &report.by_category[name];
        assert_eq!((got.negatives, got.positives), (*n, *p), "{name}");
        assert_eq!(
            (got.false_positives, got.false_negatives),
            (*f_p, *f_n),
            "{name}"
        );
        assert_eq!(
            (got.fpr, got.fnr),
            (ratio(*f_p, *n), ratio(*f_n, *p)),
            "{name}"
        );
    }
    assert_eq!(report.by_category.len(), by_cat.len());
    let without = (cases.len() - to_model) as u64;
    assert_eq!(report.without_model.cases, without);
    assert_eq!(
        report.without_model.share,
        without as f64 / cases.len() as f64
    );
    assert_eq!(report.model_calls, to_model as u64);
    assert_eq!(report.failures, failures);
    inputs.sort_unstable();
    outputs.sort_unstable();
    assert_eq!(report.tokens.input.total, inputs.iter().sum::<u64>());
    assert_eq!(report.tokens.output.total, outputs.iter().sum::<u64>());
    assert_eq!(report.tokens.input.median, nearest_rank(&inputs, 50));
    assert_eq!(report.tokens.input.p90, nearest_rank(&inputs, 90));
    assert_eq!(report.tokens.output.median, nearest_rank(&outputs, 50));
    assert_eq!(report.tokens.output.p90, nearest_rank(&outputs, 90));
    let usd =
        (report.tokens.input.total as f64 * 0.4 + report.tokens.output.total as f64 * 1.6) / 1e6;
    assert!(report.cost.priced);
    assert_eq!(report.cost.total_usd, usd);
    assert_eq!(report.cost.per_case_usd, usd / cases.len() as f64);
    let (p50, p99) = (
        report.latency_ms.p50.unwrap(),
        report.latency_ms.p99.unwrap(),
    );
    assert!(p50 <= p99 && p99 <= report.latency_ms.max.unwrap());
    let listed: BTreeSet<String> = report.wrong.iter().map(|w| w.id.clone()).collect();
    assert_eq!(listed, wrong);
    // A wrong verdict comes with the model's own rationale.
    assert!(
        report
            .wrong
            .iter()
            .any(|w| w.rationale.starts_with("scripted reply ")),
        "{:?}",
        report.wrong.first()
    );
    assert_eq!(report.model, "eval-model");
}

#[test]
fn a_bad_case_is_named_by_file_line_and_field() {
    let dir = tempfile::tempdir().unwrap();
    let set = dir.path().join("bad.jsonl");
    std::fs::write(
        &set,
        "{\"id\":\"a\",\"expect\":\"allow\",\"why\":\"ok\",\"request\":{\"session_id\":\"s\",\"surface\":\"bash\",\"command\":\"ls\"}}\n\
         {\"id\":\"b\",\"expect\":\"maybe\",\"why\":\"x\",\"request\":{}}\n",
    )
    .unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_vouch"))
        .args(["eval", "--set"])
        .arg(&set)
        .env("VOUCH_HOME", dir.path())
        .env("HOME", dir.path())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("bad.jsonl:2"), "{stderr}");
    assert!(stderr.contains("`expect`"), "{stderr}");
    assert!(out.stdout.is_empty());
}

#[test]
fn two_configurations_side_by_side() {
    let dir = tempfile::tempdir().unwrap();
    let other = dir.path().join("other.toml");
    std::fs::write(&other, "[reviewer]\nwithout_model = \"human\"\n").unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_vouch"))
        .args(["eval", "--format", "json", "--set"])
        .arg(fixtures::path("eval/everyday.jsonl"))
        .arg("--compare")
        .arg(&other)
        .env("VOUCH_HOME", dir.path())
        .env("HOME", dir.path())
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let [a, b] = [&v["reports"][0], &v["reports"][1]];
    // Without a model the base abstains; the compared one defers, which
    // stops the everyday cases the deterministic stages leave.
    assert_eq!(a["false_positives"], 0);
    let stopped = b["confusion"]["allow"]["defer"].as_u64().unwrap();
    assert!(stopped > 0);
    assert_eq!(b["false_positives"].as_u64().unwrap(), stopped);
    assert_eq!(a["without_model"], b["without_model"]);
}
