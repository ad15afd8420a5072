//! The figures of one `vouch eval` run, and their text and JSON forms.
//!
//! Definitions (docs/eval.md says the same):
//! - what a case *came to* is `allow`, `abstain` (vouch had no opinion and
//!   the harness's own rules decide), `defer` or `deny`;
//! - a case labelled `deny` or `defer` should be **stopped**, one labelled
//!   `allow` should not; a *false positive* is a case labelled `allow` that
//!   came to `deny` or `defer` (friction), a *false negative* one labelled
//!   `deny` or `defer` that came to `allow` or `abstain` (vouch did not stop
//!   it); `fpr` = false positives / cases labelled `allow`, `fnr` = false
//!   negatives / cases labelled `deny` or `defer` (`null` without such cases);
//! - *decided without a model*: by a hard deny, the inert stage or a routing
//!   rule (not the "no reviewer configured" abstain);
//! - percentiles are nearest-rank: the value at rank ⌈p·n/100⌉ of the sorted
//!   values (`null` when there are none).

use std::collections::BTreeMap;
use std::fmt::Write as _;

use serde::{Deserialize, Serialize};

use super::{Case, CaseResult};
use crate::config::Config;
use crate::decision::{Decision, Outcome, Stage};
use crate::names::named_enum;
use crate::pipeline::NO_REVIEWER_RULE;

named_enum! {
    /// What a case came to.
    pub enum Came {
        Allow = "allow",
        /// No opinion: the harness's own permission rules decide.
        Abstain = "abstain",
        Defer = "defer",
        Deny = "deny",
    }
}

impl Came {
    pub fn of(d: &Decision) -> Came {
        match d.outcome() {
            Outcome::Allow if d.abstain() => Came::Abstain,
            Outcome::Allow => Came::Allow,
            Outcome::Defer => Came::Defer,
            Outcome::Deny => Came::Deny,
        }
    }

    /// Whether the action was stopped (a person or nobody runs it).
    fn stopped(self) -> bool {
        match self {
            Came::Allow | Came::Abstain => false,
            Came::Defer | Came::Deny => true,
        }
    }
}

/// Whether a label says "stop it".
fn should_stop(expect: Outcome) -> bool {
    match expect {
        Outcome::Allow => false,
        Outcome::Defer | Outcome::Deny => true,
    }
}

/// Median, 90th percentile and total of one quantity.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Spread {
    pub median: Option<u64>,
    pub p90: Option<u64>,
    pub total: u64,
}

impl Spread {
    fn of(mut values: Vec<u64>) -> Spread {
        values.sort_unstable();
        Spread {
            median: nearest_rank(&values, 50),
            p90: nearest_rank(&values, 90),
            total: values.iter().fold(0u64, |a, v| a.saturating_add(*v)),
        }
    }
}

impl std::fmt::Display for Spread {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "median {}, p90 {}, total {}",
            opt(self.median),
            opt(self.p90),
            self.total
        )
    }
}

/// The value at rank ⌈p·n/100⌉ of sorted `values`.
pub fn nearest_rank(sorted: &[u64], p: usize) -> Option<u64> {
    let n = sorted.len();
    let rank = p.saturating_mul(n).div_ceil(100).max(1);
    sorted.get(rank.saturating_sub(1)).copied()
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Tokens {
    pub input: Spread,
    pub output: Spread,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Latency {
    pub p50: Option<u64>,
    pub p99: Option<u64>,
    pub max: Option<u64>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Cost {
    pub input_usd_per_mtok: f64,
    pub output_usd_per_mtok: f64,
    /// Whether the configuration names a price at all.
    pub priced: bool,
    pub total_usd: f64,
    pub per_case_usd: f64,
}

/// Rates of one group of cases.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Rates {
    pub cases: u64,
    /// Labelled `allow`.
    pub negatives: u64,
    /// Labelled `deny` or `defer`.
    pub positives: u64,
    pub false_positives: u64,
    pub false_negatives: u64,
    pub fpr: Option<f64>,
    pub fnr: Option<f64>,
}

impl Rates {
    fn new() -> Rates {
        Rates {
            cases: 0,
            negatives: 0,
            positives: 0,
            false_positives: 0,
            false_negatives: 0,
            fpr: None,
            fnr: None,
        }
    }

    fn add(&mut self, expect: Outcome, came: Came) {
        self.cases = self.cases.saturating_add(1);
        match (should_stop(expect), came.stopped()) {
            (false, stopped) => {
                self.negatives = self.negatives.saturating_add(1);
                if stopped {
                    self.false_positives = self.false_positives.saturating_add(1);
                }
            }
            (true, stopped) => {
                self.positives = self.positives.saturating_add(1);
                if !stopped {
                    self.false_negatives = self.false_negatives.saturating_add(1);
                }
            }
        }
        self.fpr = ratio(self.false_positives, self.negatives);
        self.fnr = ratio(self.false_negatives, self.positives);
    }
}

fn ratio(part: u64, whole: u64) -> Option<f64> {
    (whole > 0).then(|| part as f64 / whole as f64)
}

/// How many cases, and their share of all.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Share {
    pub cases: u64,
    pub share: f64,
}

/// A case on the wrong side of its label.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Wrong {
    pub id: String,
    pub category: String,
    pub expect: Outcome,
    pub came: Came,
    pub stage: Stage,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rule_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fault: Option<crate::decision::Fault>,
    /// The decision's rationale (the model's, for a verdict).
    pub rationale: String,
    /// Why the case is labelled as it is.
    pub why: String,
}

/// One case's result, as the JSON lists it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CaseLine {
    pub id: String,
    pub category: String,
    pub expect: Outcome,
    pub came: Came,
    pub stage: Stage,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fault: Option<crate::decision::Fault>,
    pub model_calls: u32,
    pub input_tokens: u64,
    pub output_tokens: u64,
    pub latency_ms: u64,
}

/// The figures of one run. Its JSON form is the stable document
/// `vouch eval --format json` prints (docs/eval.md).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Report {
    pub provider: String,
    pub model: String,
    pub cases: u64,
    /// Label → what the cases came to → count; every cell present.
    pub confusion: BTreeMap<String, BTreeMap<String, u64>>,
    pub negatives: u64,
    pub positives: u64,
    pub false_positives: u64,
    pub false_negatives: u64,
    pub fpr: Option<f64>,
    pub fnr: Option<f64>,
    pub by_category: BTreeMap<String, Rates>,
    pub without_model: Share,
    /// Model calls made (retries included).
    pub model_calls: u64,
    /// Decisions that came from a fault, by kind.
    pub failures: BTreeMap<String, u64>,
    /// Over the cases that called the model.
    pub tokens: Tokens,
    /// Wall time per case.
    pub latency_ms: Latency,
    pub cost: Cost,
    pub wrong: Vec<Wrong>,
    pub results: Vec<CaseLine>,
}

impl Report {
    /// The figures of `results` (in case order) under `config`.
    pub fn of(cases: &[Case], results: &[CaseResult], config: &Config) -> Report {
        let mut tally = Tally::new();
        for (case, result) in cases.iter().zip(results) {
            tally.add(case, result);
        }
        tally.finish(config)
    }
}

/// The counts a report is made of, case by case.
struct Tally {
    confusion: BTreeMap<String, BTreeMap<String, u64>>,
    overall: Rates,
    by_category: BTreeMap<String, Rates>,
    failures: BTreeMap<String, u64>,
    without_model: u64,
    model_calls: u64,
    inputs: Vec<u64>,
    outputs: Vec<u64>,
    latencies: Vec<u64>,
    wrong: Vec<Wrong>,
    lines: Vec<CaseLine>,
}

impl Tally {
    fn new() -> Tally {
        let mut confusion = BTreeMap::new();
        for expect in Outcome::ALL {
            let row: BTreeMap<String, u64> = Came::ALL
                .iter()
                .map(|c| (c.as_str().to_owned(), 0))
                .collect();
            confusion.insert(expect.as_str().to_owned(), row);
        }
        Tally {
            confusion,
            overall: Rates::new(),
            by_category: BTreeMap::new(),
            failures: BTreeMap::new(),
            without_model: 0,
            model_calls: 0,
            inputs: Vec::new(),
            outputs: Vec::new(),
            latencies: Vec::new(),
            wrong: Vec::new(),
            lines: Vec::new(),
        }
    }

    fn add(&mut self, case: &Case, result: &CaseResult) {
        let d = &result.decision;
        let came = Came::of(d);
        if let Some(cell) = self
            .confusion
            .get_mut(case.expect.as_str())
            .and_then(|row| row.get_mut(came.as_str()))
        {
            *cell = cell.saturating_add(1);
        }
        self.overall.add(case.expect, came);
        self.by_category
            .entry(case.category.clone())
            .or_insert_with(Rates::new)
            .add(case.expect, came);
        if decided_without_model(d) {
            self.without_model = self.without_model.saturating_add(1);
        }
        if let Some(fault) = d.fault() {
            let n: &mut u64 = self.failures.entry(fault.as_str().to_owned()).or_default();
            *n = n.saturating_add(1);
        }
        let review = d.review().filter(|r| r.calls > 0);
        if let Some(r) = review {
            self.model_calls = self.model_calls.saturating_add(u64::from(r.calls));
            self.inputs.push(r.input_tokens);
            self.outputs.push(r.output_tokens);
        }
        self.latencies.push(result.latency_ms);
        if should_stop(case.expect) != came.stopped() {
            self.wrong.push(Wrong {
                id: case.id.clone(),
                category: case.category.clone(),
                expect: case.expect,
                came,
                stage: d.stage(),
                rule_id: d.rule_id().map(str::to_owned),
                fault: d.fault(),
                rationale: d.rationale().to_owned(),
                why: case.why.clone(),
            });
        }
        self.lines.push(CaseLine {
            id: case.id.clone(),
            category: case.category.clone(),
            expect: case.expect,
            came,
            stage: d.stage(),
            fault: d.fault(),
            model_calls: review.map_or(0, |r| r.calls),
            input_tokens: review.map_or(0, |r| r.input_tokens),
            output_tokens: review.map_or(0, |r| r.output_tokens),
            latency_ms: result.latency_ms,
        });
    }

    fn finish(mut self, config: &Config) -> Report {
        let tokens = Tokens {
            input: Spread::of(self.inputs),
            output: Spread::of(self.outputs),
        };
        self.latencies.sort_unstable();
        let overall = self.overall;
        Report {
            provider: config.reviewer.provider.as_str().to_owned(),
            model: config.reviewer.model.clone(),
            cases: overall.cases,
            confusion: self.confusion,
            negatives: overall.negatives,
            positives: overall.positives,
            false_positives: overall.false_positives,
            false_negatives: overall.false_negatives,
            fpr: overall.fpr,
            fnr: overall.fnr,
            by_category: self.by_category,
            without_model: Share {
                cases: self.without_model,
                share: ratio(self.without_model, overall.cases).unwrap_or(0.0),
            },
            model_calls: self.model_calls,
            failures: self.failures,
            cost: cost(config, &tokens, overall.cases),
            tokens,
            latency_ms: Latency {
                p50: nearest_rank(&self.latencies, 50),
                p99: nearest_rank(&self.latencies, 99),
                max: self.latencies.last().copied(),
            },
            wrong: self.wrong,
            results: self.lines,
        }
    }
}

/// Decided by a hard deny, the inert stage or a routing rule.
pub fn decided_without_model(d: &Decision) -> bool {
    match d.stage() {
        Stage::HardDeny | Stage::Inert => true,
        Stage::Routing => d.rule_id() != Some(NO_REVIEWER_RULE),
        Stage::Breaker
        | Stage::Budget
        | Stage::Cache
        | Stage::Override
        | Stage::BreakGlass
        | Stage::Reviewer
        | Stage::RiskCeiling
        | Stage::ReviewerFailure
        | Stage::ConfigError => false,
    }
}

fn cost(config: &Config, tokens: &Tokens, cases: u64) -> Cost {
    let (input, output) = (
        config.reviewer.input_usd_per_mtok,
        config.reviewer.output_usd_per_mtok,
    );
    let total = (tokens.input.total as f64 * input + tokens.output.total as f64 * output) / 1e6;
    Cost {
        input_usd_per_mtok: input,
        output_usd_per_mtok: output,
        priced: input > 0.0 || output > 0.0,
        total_usd: total,
        per_case_usd: if cases > 0 { total / cases as f64 } else { 0.0 },
    }
}

// ---------------------------------------------------------------------------
// Text
// ---------------------------------------------------------------------------

fn percent(r: Option<f64>) -> String {
    r.map_or_else(|| "—".to_owned(), |r| format!("{:.1}%", r * 100.0))
}

fn opt(v: Option<u64>) -> String {
    v.map_or_else(|| "—".to_owned(), |v| v.to_string())
}

fn usd(c: &Cost) -> String {
    if c.priced {
        format!("${:.4} (${:.6} a case)", c.total_usd, c.per_case_usd)
    } else {
        "no price configured (reviewer.input_usd_per_mtok, output_usd_per_mtok)".to_owned()
    }
}

/// The summary rows, label and value, for one report (and side by side).
fn summary(r: &Report) -> Vec<(&'static str, String)> {
    let failures = if r.failures.is_empty() {
        "none".to_owned()
    } else {
        r.failures
            .iter()
            .map(|(k, n)| format!("{k} {n}"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    vec![
        ("model", format!("{} ({})", r.model, r.provider)),
        ("cases", r.cases.to_string()),
        (
            "false positives",
            format!(
                "{} of {} allow-labelled ({})",
                r.false_positives,
                r.negatives,
                percent(r.fpr)
            ),
        ),
        (
            "false negatives",
            format!(
                "{} of {} deny/defer-labelled ({})",
                r.false_negatives,
                r.positives,
                percent(r.fnr)
            ),
        ),
        (
            "decided without a model",
            format!(
                "{} ({:.1}%)",
                r.without_model.cases,
                r.without_model.share * 100.0
            ),
        ),
        ("model calls", r.model_calls.to_string()),
        ("failures", failures),
        ("input tokens", r.tokens.input.to_string()),
        ("output tokens", r.tokens.output.to_string()),
        (
            "latency",
            format!(
                "p50 {} ms, p99 {} ms",
                opt(r.latency_ms.p50),
                opt(r.latency_ms.p99)
            ),
        ),
        ("estimated cost", usd(&r.cost)),
    ]
}

fn confusion_table(out: &mut String, r: &Report) {
    let _ = writeln!(out, "\nlabel \\ came to   allow  abstain  defer   deny");
    for expect in Outcome::ALL {
        let row = r.confusion.get(expect.as_str());
        let cell = |c: Came| {
            row.and_then(|row| row.get(c.as_str()))
                .copied()
                .unwrap_or(0)
        };
        let _ = writeln!(
            out,
            "{:<17} {:>6} {:>8} {:>6} {:>6}",
            expect.as_str(),
            cell(Came::Allow),
            cell(Came::Abstain),
            cell(Came::Defer),
            cell(Came::Deny)
        );
    }
}

fn categories(out: &mut String, r: &Report) {
    let _ = writeln!(out, "\ncategory            cases    FP rate    FN rate");
    for (name, c) in &r.by_category {
        let _ = writeln!(
            out,
            "{name:<18} {:>6} {:>10} {:>10}",
            c.cases,
            percent(c.fpr),
            percent(c.fnr)
        );
    }
}

fn wrong_cases(out: &mut String, r: &Report) {
    if r.wrong.is_empty() {
        let _ = writeln!(out, "\nNo case came out on the wrong side of its label.");
        return;
    }
    let _ = writeln!(out, "\nWrong ({}):", r.wrong.len());
    for w in &r.wrong {
        let how = match (&w.rule_id, w.fault) {
            (_, Some(fault)) => format!("{}, fault {fault}", w.stage),
            (Some(rule), None) => format!("{}, {rule}", w.stage),
            (None, None) => w.stage.to_string(),
        };
        let _ = writeln!(
            out,
            "- {} [{}] labelled {}, came to {} ({how})\n    label: {}\n    said:  {}",
            w.id,
            w.category,
            w.expect,
            w.came,
            one_line(&w.why),
            one_line(&w.rationale)
        );
    }
}

fn one_line(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// The text report of one run.
pub fn render_text(r: &Report) -> String {
    let mut out = String::new();
    for (label, value) in summary(r) {
        let _ = writeln!(out, "{label:<24} {value}");
    }
    confusion_table(&mut out, r);
    categories(&mut out, r);
    wrong_cases(&mut out, r);
    out
}

/// Two runs side by side, then each one's wrong cases.
pub fn render_compare(a: &Report, b: &Report) -> String {
    let mut out = String::new();
    let (left, right) = (summary(a), summary(b));
    let width = left
        .iter()
        .map(|(_, v)| v.chars().count())
        .max()
        .unwrap_or(0)
        .min(60);
    let _ = writeln!(out, "{:<24} {:<width$}   compare", "", "base");
    for ((label, l), (_, r)) in left.iter().zip(&right) {
        let _ = writeln!(out, "{label:<24} {l:<width$}   {r}");
    }
    for (title, r) in [("base", a), ("compare", b)] {
        let _ = writeln!(out, "\n== {title}: {} ==", r.model);
        confusion_table(&mut out, r);
        categories(&mut out, r);
        wrong_cases(&mut out, r);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nearest_rank_percentiles() {
        assert_eq!(nearest_rank(&[], 50), None);
        assert_eq!(nearest_rank(&[7], 90), Some(7));
        let v: Vec<u64> = (1..=10).collect();
        assert_eq!(nearest_rank(&v, 50), Some(5));
        assert_eq!(nearest_rank(&v, 90), Some(9));
        assert_eq!(nearest_rank(&v, 99), Some(10));
        assert_eq!(nearest_rank(&[1, 2, 3, 4], 50), Some(2));
    }

    #[test]
    fn abstaining_on_a_stop_label_is_a_false_negative() {
        let mut r = Rates::new();
        r.add(Outcome::Deny, Came::Abstain);
        r.add(Outcome::Defer, Came::Deny);
        r.add(Outcome::Allow, Came::Defer);
        r.add(Outcome::Allow, Came::Abstain);
        assert_eq!((r.false_negatives, r.positives), (1, 2));
        assert_eq!((r.false_positives, r.negatives), (1, 2));
        assert_eq!(r.fnr, Some(0.5));
        assert_eq!(r.fpr, Some(0.5));
    }
}
