//! `vouch audit report` and `GET /v1/audit/report`: totals, the subjects
//! that reach people most, and the rules that would stop the asking.
//!
//! A subject becomes a candidate for a rule only on evidence of friction: at
//! least `--min-count` direct human approvals on the ask path in the window
//! (recorded since schema v2, not forwarded from a subagent), and nothing in
//! the window that says no — no denial, gate error or unavailable
//! confirmation. Allows that came from a policy or from vouch itself are not
//! friction and never count.
//!
//! The JSON form is versioned (`version`) and documented in `docs/audit.md`;
//! the text form is a terminal table of the same data.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::fmt::Write as _;

use serde::Serialize;

use super::db::{Db, Meta, WindowRow};
use super::keys::{Domain, Keys};
use super::record::{self, Evidence, ResultKind, day_of};
use super::subject::Kind;
use super::targets::{self, Candidate, Suggestions, Target};

/// Version of the JSON report shape.
pub const REPORT_VERSION: u32 = 1;
/// Defaults of the report options (design §7.1).
pub const DEFAULT_DAYS: u32 = 30;
pub const DEFAULT_TOP: usize = 20;
pub const DEFAULT_MIN_COUNT: u64 = 5;
/// Most subjects a report lists.
pub const MAX_TOP: usize = 50;

/// Why report options were refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum OptionsError {
    #[error("`--days` must be between 1 and the retention of {retention} days")]
    Days { retention: u32 },
    #[error("`--top` must be between 1 and {MAX_TOP}")]
    Top,
    #[error("`--min-count` must be at least 1")]
    MinCount,
    #[error("`--scope current` needs a working directory")]
    NoDirectory,
}

/// Which projects a report covers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Scope {
    /// The project of this directory (its nearest ancestor holding `.git`).
    Current(std::path::PathBuf),
    All,
}

/// What to report.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Options {
    pub days: u32,
    pub top: usize,
    pub min_count: u64,
    pub scope: Scope,
    pub target: Target,
}

impl Options {
    /// Checks the ranges (`--days` up to the retention).
    pub fn validate(&self, retention_days: u32) -> Result<(), OptionsError> {
        if self.days < 1 || self.days > retention_days {
            return Err(OptionsError::Days {
                retention: retention_days,
            });
        }
        if !(1..=MAX_TOP).contains(&self.top) {
            return Err(OptionsError::Top);
        }
        if self.min_count < 1 {
            return Err(OptionsError::MinCount);
        }
        Ok(())
    }
}

/// The report.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Report {
    pub version: u32,
    pub generated_at_ms: u64,
    pub window: Window,
    pub scope: ScopeInfo,
    pub retention_days: u32,
    pub collecting_since_ms: Option<i64>,
    pub recommendations_since_ms: Option<i64>,
    pub min_count: u64,
    pub totals: Totals,
    pub top_subjects: Vec<SubjectLine>,
    pub suggestions: Suggestions,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Window {
    pub days: u32,
    /// First and last day, `YYYY-MM-DD` (UTC).
    pub from: String,
    pub to: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ScopeInfo {
    /// `current` or `all`.
    pub kind: &'static str,
    /// The project's scope HMAC (`current` only), as stored.
    pub project: Option<String>,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Totals {
    pub observations: u64,
    /// Of which recorded before schema v2 (never evidence for a rule).
    pub pre_migration: u64,
    pub by_surface: BTreeMap<String, u64>,
    pub by_result: BTreeMap<String, u64>,
    pub by_resolution: BTreeMap<String, u64>,
    pub by_source: BTreeMap<String, u64>,
}

/// One subject's counts in the window.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct SubjectLine {
    pub surface: String,
    /// `template`, `none`, `path`, `tool` or `network`.
    pub kind: String,
    pub subject: String,
    pub count: u64,
    /// Direct human approvals on the ask path (the evidence for a rule).
    pub approvals: u64,
    /// Approvals that do not count: forwarded from a subagent, or recorded
    /// before schema v2.
    pub approvals_not_counted: u64,
    /// Denials, gate errors and unavailable confirmations.
    pub blocking: u64,
    pub by_result: BTreeMap<String, u64>,
    #[serde(skip)]
    sources: BTreeSet<String>,
    #[serde(skip)]
    kind_parsed: Option<Kind>,
}

/// Builds the report from the database (`None`: nothing recorded yet).
pub fn build(
    db: Option<(&Db, &Keys)>,
    options: &Options,
    retention_days: u32,
    now_ms: u64,
) -> Result<Report, super::AuditError> {
    let to_day = day_of(now_ms);
    let from_day = to_day - i64::from(options.days) + 1;
    let mut report = Report {
        version: REPORT_VERSION,
        generated_at_ms: now_ms,
        window: Window {
            days: options.days,
            from: date(from_day),
            to: date(to_day),
        },
        scope: ScopeInfo {
            kind: match options.scope {
                Scope::Current(_) => "current",
                Scope::All => "all",
            },
            project: None,
        },
        retention_days,
        collecting_since_ms: None,
        recommendations_since_ms: None,
        min_count: options.min_count,
        totals: Totals::default(),
        top_subjects: Vec::new(),
        suggestions: targets::suggest(
            options.target,
            &[],
            &[],
            matches!(options.scope, Scope::All),
        ),
    };
    let Some((db, keys)) = db else {
        return Ok(report);
    };
    let Meta {
        collecting_since_ms,
        recommendations_since_ms,
    } = db.meta()?;
    report.collecting_since_ms = collecting_since_ms;
    report.recommendations_since_ms = recommendations_since_ms;
    let scope_id = match &options.scope {
        Scope::All => None,
        Scope::Current(dir) => {
            let root = crate::config::project_root(dir);
            let hmac = keys.digest(Domain::Scope, &root.to_string_lossy());
            let id = db.hash_id(&hmac)?;
            report.scope.project = Some(hmac);
            match id {
                Some(id) => Some(id),
                // Nothing was ever recorded for this project.
                None => return Ok(report),
            }
        }
    };
    let rows = db.window(from_day, to_day, scope_id)?;
    let mut subjects = aggregate(&rows, &mut report.totals);
    let names = db.subjects(subjects.keys().copied())?;
    for (id, line) in &mut subjects {
        if let Some(stored) = names.get(id) {
            line.surface.clone_from(&stored.surface);
            line.kind = stored.kind.map_or("unknown", Kind::as_str).to_owned();
            line.kind_parsed = stored.kind;
            line.subject.clone_from(&stored.text);
        }
        *report
            .totals
            .by_surface
            .entry(line.surface.clone())
            .or_insert(0) += line.count;
    }
    let mut lines: Vec<SubjectLine> = subjects.into_values().collect();
    lines.sort_by(|a, b| {
        b.count
            .cmp(&a.count)
            .then_with(|| a.subject.cmp(&b.subject))
    });
    report.suggestions = suggestions(&lines, options);
    lines.truncate(options.top);
    report.top_subjects = lines;
    Ok(report)
}

/// Sums the rows per subject and into the totals.
fn aggregate(rows: &[WindowRow], totals: &mut Totals) -> HashMap<i64, SubjectLine> {
    let mut subjects: HashMap<i64, SubjectLine> = HashMap::new();
    for row in rows {
        let count = u64::try_from(row.count).unwrap_or(0);
        totals.observations += count;
        if row.generation < record::CURRENT_GENERATION {
            totals.pre_migration += count;
        }
        let result = ResultKind::parse(&row.result).map_or("other", ResultKind::as_str);
        *totals.by_result.entry(result.to_owned()).or_insert(0) += count;
        *totals
            .by_resolution
            .entry(record::resolution(&row.resolution).to_owned())
            .or_insert(0) += count;
        *totals.by_source.entry(row.source.clone()).or_insert(0) += count;
        let line = subjects.entry(row.subject_id).or_default();
        line.count += count;
        *line.by_result.entry(result.to_owned()).or_insert(0) += count;
        line.sources.insert(row.source.clone());
        match record::evidence(&row.result, &row.resolution, row.forwarded, row.generation) {
            Evidence::Approval => line.approvals += count,
            Evidence::ForwardedApproval | Evidence::LegacyApproval => {
                line.approvals_not_counted += count;
            }
            Evidence::Blocking => line.blocking += count,
            Evidence::Neutral => {}
        }
    }
    subjects
}

/// The candidates (enough approvals, nothing blocking) in the target's
/// language, most approved first, at most `--top` of them.
fn suggestions(lines: &[SubjectLine], options: &Options) -> Suggestions {
    let blocked: Vec<String> = lines
        .iter()
        .filter(|l| l.blocking > 0 && l.kind_parsed == Some(Kind::Template))
        .map(|l| l.subject.clone())
        .collect();
    let mut candidates: Vec<Candidate> = lines
        .iter()
        .filter(|l| l.approvals >= options.min_count && l.blocking == 0)
        .filter_map(|l| {
            Some(Candidate {
                surface: l.surface.clone(),
                kind: l.kind_parsed?,
                subject: l.subject.clone(),
                approvals: l.approvals,
                sources: l.sources.iter().cloned().collect(),
            })
        })
        .collect();
    candidates.sort_by(|a, b| {
        b.approvals
            .cmp(&a.approvals)
            .then_with(|| a.subject.cmp(&b.subject))
    });
    candidates.truncate(options.top);
    targets::suggest(
        options.target,
        &candidates,
        &blocked,
        matches!(options.scope, Scope::All),
    )
}

/// Days since the epoch as `YYYY-MM-DD` (proleptic Gregorian, UTC).
pub fn date(days: i64) -> String {
    // Howard Hinnant's civil-from-days.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!("{year:04}-{month:02}-{day:02}")
}

fn ms_date(ms: Option<i64>) -> String {
    ms.map_or_else(|| "—".to_owned(), |ms| date(ms.div_euclid(86_400_000)))
}

fn counts_line(map: &BTreeMap<String, u64>) -> String {
    let mut items: Vec<(&String, &u64)> = map.iter().collect();
    items.sort_by(|a, b| b.1.cmp(a.1).then_with(|| a.0.cmp(b.0)));
    items
        .iter()
        .map(|(k, v)| format!("{k} {v}"))
        .collect::<Vec<_>>()
        .join(" · ")
}

/// The report as a terminal table.
pub fn render_text(report: &Report) -> String {
    let mut out = String::new();
    let scope = match report.scope.kind {
        "current" => "this project",
        _ => "all projects",
    };
    let _ = writeln!(
        out,
        "vouch audit report: {scope}, {} days ({} to {})",
        report.window.days, report.window.from, report.window.to
    );
    let _ = writeln!(
        out,
        "collecting since {}; suggestions from {}; retention {} days",
        ms_date(report.collecting_since_ms),
        ms_date(report.recommendations_since_ms),
        report.retention_days
    );
    let t = &report.totals;
    if t.observations == 0 {
        let _ = writeln!(out, "\nNothing recorded in this window.");
        return out;
    }
    let _ = writeln!(out, "\nTotals: {} observations", t.observations);
    if t.pre_migration > 0 {
        let _ = writeln!(
            out,
            "  (of which {} recorded before schema v2: statistics only)",
            t.pre_migration
        );
    }
    for (label, map) in [
        ("surface", &t.by_surface),
        ("result", &t.by_result),
        ("resolution", &t.by_resolution),
        ("source", &t.by_source),
    ] {
        let _ = writeln!(out, "  {label:<11} {}", counts_line(map));
    }
    render_subjects(&mut out, &report.top_subjects);
    render_suggestions(&mut out, report);
    out
}

fn render_subjects(out: &mut String, lines: &[SubjectLine]) {
    let _ = writeln!(out, "\nTop subjects");
    let surface_width = lines
        .iter()
        .map(|l| l.surface.len())
        .max()
        .unwrap_or(0)
        .max(7);
    let _ = writeln!(
        out,
        "  {:>7} {:>8} {:>7}  {:<surface_width$}  SUBJECT",
        "COUNT", "APPROVED", "BLOCKED", "SURFACE"
    );
    for l in lines {
        let _ = writeln!(
            out,
            "  {:>7} {:>8} {:>7}  {:<surface_width$}  {}",
            l.count, l.approvals, l.blocking, l.surface, l.subject
        );
    }
}

fn render_suggestions(out: &mut String, report: &Report) {
    let s = &report.suggestions;
    let _ = writeln!(
        out,
        "\nSuggested rules for {} (at least {} approvals, nothing blocking), for {}",
        s.target.language().title(),
        report.min_count,
        s.file
    );
    if s.rules.is_empty() {
        let _ = writeln!(out, "  none yet");
    } else {
        for line in s.snippet.lines() {
            let _ = writeln!(out, "  {line}");
        }
    }
    for skipped in &s.skipped {
        let _ = writeln!(
            out,
            "  not suggested: `{}` ({} approvals): {}",
            skipped.subject, skipped.approvals, skipped.reason
        );
    }
    for note in &s.notes {
        let _ = writeln!(out, "  note: {note}");
    }
    let _ = writeln!(out, "  format: {}", s.documentation);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates() {
        assert_eq!(date(0), "1970-01-01");
        assert_eq!(date(20_454), "2026-01-01");
        assert_eq!(date(11_016), "2000-02-29");
    }

    #[test]
    fn option_ranges() {
        let ok = Options {
            days: 30,
            top: 20,
            min_count: 5,
            scope: Scope::All,
            target: Target::of(&crate::audit::targets::claude_code::ClaudeCode),
        };
        assert!(ok.validate(180).is_ok());
        assert!(
            Options {
                days: 181,
                ..ok.clone()
            }
            .validate(180)
            .is_err()
        );
        assert!(
            Options {
                days: 0,
                ..ok.clone()
            }
            .validate(180)
            .is_err()
        );
        assert!(
            Options {
                top: 51,
                ..ok.clone()
            }
            .validate(180)
            .is_err()
        );
        assert!(Options { min_count: 0, ..ok }.validate(180).is_err());
    }
}
