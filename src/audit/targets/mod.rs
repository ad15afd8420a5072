//! Suggested rules in each harness's own rule language.
//!
//! A candidate is a subject a human kept approving with no denial in the
//! window (see [`super::report`]). Each target expresses it as narrowly as
//! its language allows, and says so when it cannot be as narrow as the
//! template: Codex and Gemini CLI match command prefixes, Cursor only the
//! command word. A rule that would also cover a template denied in the
//! window is not suggested at all. Each harness's language is one file
//! here (`src/audit/targets/<harness>.rs`, a [`RuleLanguage`] named as the
//! harness is in [`crate::catalogue`]), with the documentation it follows;
//! pi-permission-system's and vouch's own are in this one. A test
//! (`tests/it/audit.rs`) checks that every harness of the adapter registry
//! has its language here, in the registry's order.

pub mod claude_code;
pub mod codex;
pub mod copilot;
pub mod cursor;
pub mod gemini;
pub mod opencode;
pub mod qwen;

use std::collections::BTreeMap;
use std::fmt;

use serde::{Serialize, Serializer};
use serde_json::{Value, json};

use super::subject::Kind;

/// A permission-rule language the report can write suggestions in: each
/// harness's own (one file each in this module), pi-permission-system's and
/// vouch's own routing rules.
pub trait RuleLanguage: Sync {
    /// The `--target` name (a harness's name where it is one).
    fn name(&self) -> &'static str;
    fn title(&self) -> &'static str;
    /// The documentation the output follows.
    fn source_url(&self) -> &'static str;
    /// The file the rules go in, for one project or for every project.
    fn file(&self, all_projects: bool) -> &'static str;
    /// `json`, `toml`, `starlark`…
    fn format(&self) -> &'static str;
    /// The `source` whose tool names this language uses.
    fn tool_source(&self) -> &'static str {
        self.name()
    }
    /// The rule for a command template, and whether it is broader than the
    /// template; `Err` says why no rule is safe. `blocked` are the
    /// templates with a denial in the window: a rule that would cover one
    /// is refused (see [`blocked_by`]).
    fn template_rule(&self, template: &str, blocked: &[String]) -> Result<(String, bool), String>;
    /// The rule for a tool name this harness reported.
    fn tool_rule(&self, tool: &str) -> Result<String, String>;
    /// The text to merge into [`RuleLanguage::file`].
    fn snippet(&self, rules: &[Rule]) -> String;
    /// What the user should know before merging the rules.
    fn note(&self) -> &'static str;
}

/// Every language, in the order `--target` lists them: the harnesses' in
/// the adapter registry's order (file-name order, `hooks::harnesses::ALL`),
/// then pi-permission-system's and vouch's own.
static LANGUAGES: &[&dyn RuleLanguage] = &[
    &claude_code::ClaudeCode,
    &codex::Codex,
    &copilot::Copilot,
    &cursor::Cursor,
    &gemini::Gemini,
    &opencode::OpenCode,
    &qwen::Qwen,
    &Pi,
    &VouchRules,
];

/// A rule language, by name: `--target`.
#[derive(Clone, Copy)]
pub struct Target(&'static dyn RuleLanguage);

impl Target {
    /// Every language: each harness's, in the adapter registry's order,
    /// then pi's and vouch's.
    pub fn all() -> impl Iterator<Item = Target> {
        LANGUAGES.iter().copied().map(Target)
    }

    /// A target by its language.
    pub fn of(language: &'static dyn RuleLanguage) -> Target {
        Target(language)
    }

    pub fn as_str(self) -> &'static str {
        self.0.name()
    }

    pub fn language(self) -> &'static dyn RuleLanguage {
        self.0
    }
}

impl PartialEq for Target {
    fn eq(&self, other: &Self) -> bool {
        self.as_str() == other.as_str()
    }
}

impl Eq for Target {}

impl fmt::Debug for Target {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Target({})", self.as_str())
    }
}

impl Serialize for Target {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

impl std::str::FromStr for Target {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Target::all().find(|t| t.as_str() == s).ok_or_else(|| {
            let names: Vec<&str> = Target::all().map(Target::as_str).collect();
            format!("must be one of `{}`", names.join("`, `"))
        })
    }
}

/// A subject that qualifies for a rule.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Candidate {
    pub surface: String,
    pub kind: Kind,
    pub subject: String,
    /// Direct human approvals on the ask path in the window.
    pub approvals: u64,
    /// The harnesses that reported it.
    pub sources: Vec<String>,
}

/// One suggested rule.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Rule {
    /// The rule as written in the target's language.
    pub rule: String,
    /// The subjects it stands for, and their approvals.
    pub subjects: Vec<String>,
    pub approvals: u64,
    /// True when the rule allows more than the templates it came from.
    pub broader: bool,
    /// What the rule is for (the first subject's surface and kind).
    #[serde(skip)]
    pub surface: String,
    #[serde(skip)]
    pub kind: Kind,
}

/// A candidate the target cannot express safely.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Skipped {
    pub subject: String,
    pub approvals: u64,
    pub reason: String,
}

/// The suggestions for one target.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Suggestions {
    pub target: Target,
    pub file: &'static str,
    pub format: &'static str,
    pub documentation: &'static str,
    pub rules: Vec<Rule>,
    pub skipped: Vec<Skipped>,
    /// Text to merge into `file`; empty when there are no rules.
    pub snippet: String,
    pub notes: Vec<String>,
}

pub use crate::config::routing::glob_matches;

/// The literal tokens before the first wildcard.
pub fn literal_prefix(template: &str) -> Vec<&str> {
    template
        .split(' ')
        .take_while(|token| !token.contains('*'))
        .collect()
}

/// True when a prefix rule of `prefix` tokens matches a command the
/// template `other` stands for (its `*` may be anything).
pub fn prefix_covers(prefix: &[&str], other: &str) -> bool {
    let tokens: Vec<&str> = other.split(' ').collect();
    for (i, want) in prefix.iter().enumerate() {
        match tokens.get(i) {
            Some(&"*") => return true,
            Some(have) if glob_matches(have, want) => {}
            Some(_) | None => return false,
        }
    }
    true
}

/// Builds one target's suggestions. `blocked` are the templates with a
/// denial (or other blocking evidence) in the window.
pub fn suggest(
    target: Target,
    candidates: &[Candidate],
    blocked: &[String],
    all_projects: bool,
) -> Suggestions {
    let mut rules: Vec<Rule> = Vec::new();
    let mut skipped = Vec::new();
    for candidate in candidates {
        let outcome = match candidate.kind {
            Kind::Template => target.0.template_rule(&candidate.subject, blocked),
            Kind::Tool => tool_rule(target, candidate).map(|rule| (rule, false)),
            Kind::NoTemplate | Kind::Path | Kind::Network => {
                Err("only command templates and tool names can become rules".to_owned())
            }
        };
        match outcome {
            Ok((rule, broader)) => match rules.iter_mut().find(|r| r.rule == rule) {
                Some(existing) => {
                    existing.subjects.push(candidate.subject.clone());
                    existing.approvals += candidate.approvals;
                    existing.broader |= broader;
                }
                None => rules.push(Rule {
                    rule,
                    subjects: vec![candidate.subject.clone()],
                    approvals: candidate.approvals,
                    broader,
                    surface: candidate.surface.clone(),
                    kind: candidate.kind,
                }),
            },
            Err(reason) => skipped.push(Skipped {
                subject: candidate.subject.clone(),
                approvals: candidate.approvals,
                reason,
            }),
        }
    }
    let snippet = if rules.is_empty() {
        String::new()
    } else {
        target.0.snippet(&rules)
    };
    let language = target.0;
    Suggestions {
        target,
        file: language.file(all_projects),
        format: language.format(),
        documentation: language.source_url(),
        rules,
        skipped,
        snippet,
        notes: vec![language.note().to_owned(), CAUTION.to_owned()],
    }
}

/// Why no rule is suggested when it would cover a blocked template.
pub fn blocked_by(blocked: &[String], covers: impl Fn(&str) -> bool) -> Option<String> {
    blocked.iter().find(|b| covers(b)).map(|b| {
        format!(
            "it would also allow `{b}`, which was denied (or could not be confirmed) in the window"
        )
    })
}

/// The rule for a tool name: only for the harness that named the tool.
fn tool_rule(target: Target, candidate: &Candidate) -> Result<String, String> {
    let language = target.0;
    if !candidate
        .sources
        .iter()
        .any(|s| s == language.tool_source())
    {
        return Err(format!(
            "tool names differ between harnesses, and `{}` was not reported by {}",
            candidate.subject,
            language.title()
        ));
    }
    language.tool_rule(&candidate.subject)
}

/// A JSON string literal.
pub fn quoted(s: &str) -> String {
    Value::String(s.to_owned()).to_string()
}

/// Pretty JSON with a final newline.
pub fn pretty(value: &Value) -> String {
    let mut text = serde_json::to_string_pretty(value).unwrap_or_default();
    text.push('\n');
    text
}

/// Said under every target's rules.
const CAUTION: &str = "Repeated approval is evidence of preference, not proof of safety: read each \
                       rule before you add it.";

/// The rule for a template as written: every `*` any characters (the
/// pattern languages of pi-permission-system and vouch).
fn whole_template(template: &str, blocked: &[String]) -> Result<(String, bool), String> {
    match blocked_by(blocked, |b| glob_matches(template, b)) {
        Some(why) => Err(why),
        None => Ok((template.to_owned(), false)),
    }
}

/// pi-permission-system: `permission.bash` pattern map, `*` wildcards, last
/// matching rule wins — the package README.
struct Pi;

impl RuleLanguage for Pi {
    fn name(&self) -> &'static str {
        "pi"
    }

    fn title(&self) -> &'static str {
        "pi-permission-system"
    }

    fn source_url(&self) -> &'static str {
        "https://www.npmjs.com/package/@gotgenes/pi-permission-system"
    }

    fn file(&self, all_projects: bool) -> &'static str {
        if all_projects {
            "~/.pi/agent/extensions/pi-permission-system/config.json"
        } else {
            ".pi/extensions/pi-permission-system/config.json"
        }
    }

    fn format(&self) -> &'static str {
        "json"
    }

    fn template_rule(&self, template: &str, blocked: &[String]) -> Result<(String, bool), String> {
        whole_template(template, blocked)
    }

    fn tool_rule(&self, tool: &str) -> Result<String, String> {
        Ok(tool.to_owned())
    }

    fn snippet(&self, rules: &[Rule]) -> String {
        let mut permission: BTreeMap<String, Value> = BTreeMap::new();
        let mut bash = serde_json::Map::new();
        for rule in rules {
            if rule.kind == Kind::Tool {
                if rule.surface == "mcp" || rule.surface == "skill" {
                    // A target within the surface's own pattern map.
                    let entry = permission
                        .entry(rule.surface.clone())
                        .or_insert_with(|| Value::Object(serde_json::Map::new()));
                    if let Some(map) = entry.as_object_mut() {
                        map.insert(rule.rule.clone(), Value::from("allow"));
                    }
                } else {
                    // Another tool: its own surface, allowed as a whole.
                    permission.insert(rule.rule.clone(), Value::from("allow"));
                }
            } else {
                bash.insert(rule.rule.clone(), Value::from("allow"));
            }
        }
        if !bash.is_empty() {
            permission.insert("bash".to_owned(), Value::Object(bash));
        }
        pretty(&json!({ "permission": permission }))
    }

    fn note(&self) -> &'static str {
        "Merge into the existing `permission.bash` map and put these entries after any broader \
         pattern that should still ask or deny (such as `\"*\": \"ask\"` or `\"git *\": \
         \"ask\"`): pi-permission-system applies the last matching pattern."
    }
}

/// vouch's own routing: `[[routing.rules]]` command templates.
struct VouchRules;

impl RuleLanguage for VouchRules {
    fn name(&self) -> &'static str {
        "vouch"
    }

    fn title(&self) -> &'static str {
        "vouch"
    }

    fn source_url(&self) -> &'static str {
        "docs/inert.md#rules-over-analysed-commands"
    }

    fn file(&self, _all_projects: bool) -> &'static str {
        // A project overlay may not pass: the rules go in the user's
        // trusted file either way.
        "~/.config/vouch/config.toml"
    }

    fn format(&self) -> &'static str {
        "toml"
    }

    fn template_rule(&self, template: &str, blocked: &[String]) -> Result<(String, bool), String> {
        whole_template(template, blocked)
    }

    fn tool_rule(&self, _tool: &str) -> Result<String, String> {
        Err("vouch's rules name commands; other tools are routed by `routing.surfaces`".to_owned())
    }

    fn snippet(&self, rules: &[Rule]) -> String {
        let mut out = String::from("# Suggested by `vouch audit report --target vouch`.\n");
        for rule in rules {
            out.push_str("\n[[routing.rules]]\n");
            out.push_str(&format!("command = {}\n", quoted(&rule.rule)));
            out.push_str("policy = \"pass\"\n");
            let note = format!("approved by hand {} times", rule.approvals);
            out.push_str(&format!("note = {}\n", quoted(&note)));
        }
        out
    }

    fn note(&self) -> &'static str {
        "Append to your user configuration (a project overlay may not pass); where it already \
         has an inline `rules = [...]`, add these there as `{ command = …, policy = \"pass\" }`. \
         A template passes a command only when every command it would run, after expansion, \
         matches an allowing template or only reads; `*` stands for any words."
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn glob() {
        assert!(glob_matches("cat *", "cat *"));
        assert!(glob_matches(
            "npm test * --token *",
            "npm test --watch --token *"
        ));
        assert!(!glob_matches("git status", "git status --short"));
        assert!(glob_matches("git *", "git push --force"));
        assert!(!glob_matches("ls -la", "ls"));
    }

    #[test]
    fn prefixes() {
        assert_eq!(literal_prefix("npm test * --token *"), vec!["npm", "test"]);
        assert_eq!(literal_prefix("curl --data=* *"), vec!["curl"]);
        assert!(prefix_covers(&["git", "push"], "git push --force *"));
        assert!(prefix_covers(&["git", "push"], "git * main"));
        assert!(!prefix_covers(&["git", "push"], "git status"));
    }
}
