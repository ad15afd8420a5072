//! Suggested rules in each harness's own rule language.
//!
//! A candidate is a subject a human kept approving with no denial in the
//! window (see [`super::report`]). Each target expresses it as narrowly as
//! its language allows, and says so when it cannot be as narrow as the
//! template: Codex and Gemini CLI match command prefixes, Cursor only the
//! command word. A rule that would also cover a template denied in the
//! window is not suggested at all. The languages, as documented:
//!
//! - Claude Code `permissions.allow`: `Bash(git status)` exact,
//!   `Bash(npm run:*)` prefix, `Bash(npm test * --token *)` wildcards, and
//!   bare tool names (`mcp__server__tool`) — code.claude.com/docs/en/permissions.
//! - Codex execpolicy: Starlark `prefix_rule(pattern = [...], decision =
//!   "allow", justification = ..., match = [...])` in `rules/*.rules` —
//!   developers.openai.com/codex/rules.
//! - Gemini CLI policy engine: TOML `[[rule]]` with `toolName`,
//!   `commandPrefix`, `decision`, `priority` — geminicli.com/docs/reference/policy-engine.
//! - pi-permission-system: `permission.bash` pattern map, `*` wildcards,
//!   last matching rule wins — the package README.
//! - Cursor CLI: `permissions.allow` with `Shell(commandBase)`, the first
//!   token only — docs.cursor.com/en/cli/reference/permissions.

use std::collections::BTreeMap;

use serde::Serialize;
use serde_json::{Value, json};

use super::subject::Kind;

/// A harness whose rule language the report can write.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Target {
    ClaudeCode,
    Codex,
    Gemini,
    Pi,
    Cursor,
    /// vouch's own routing: `[[routing.rules]]` command templates.
    Vouch,
}

impl Target {
    pub const ALL: [Target; 6] = [
        Target::ClaudeCode,
        Target::Codex,
        Target::Gemini,
        Target::Pi,
        Target::Cursor,
        Target::Vouch,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Target::ClaudeCode => "claude-code",
            Target::Codex => "codex",
            Target::Gemini => "gemini",
            Target::Pi => "pi",
            Target::Cursor => "cursor",
            Target::Vouch => "vouch",
        }
    }

    pub fn title(self) -> &'static str {
        match self {
            Target::ClaudeCode => "Claude Code",
            Target::Codex => "Codex",
            Target::Gemini => "Gemini CLI",
            Target::Pi => "pi-permission-system",
            Target::Cursor => "Cursor CLI",
            Target::Vouch => "vouch",
        }
    }

    /// The documentation the output follows.
    pub fn source_url(self) -> &'static str {
        match self {
            Target::ClaudeCode => "https://code.claude.com/docs/en/permissions",
            Target::Codex => "https://developers.openai.com/codex/rules",
            Target::Gemini => "https://geminicli.com/docs/reference/policy-engine/",
            Target::Pi => "https://www.npmjs.com/package/@gotgenes/pi-permission-system",
            Target::Cursor => "https://docs.cursor.com/en/cli/reference/permissions",
            Target::Vouch => "docs/inert.md#rules-over-analysed-commands",
        }
    }

    /// The file the rules go in, for one project or for every project.
    pub fn file(self, all_projects: bool) -> &'static str {
        match (self, all_projects) {
            (Target::ClaudeCode, false) => ".claude/settings.json",
            (Target::ClaudeCode, true) => "~/.claude/settings.json",
            (Target::Codex, false) => ".codex/rules/vouch.rules",
            (Target::Codex, true) => "~/.codex/rules/default.rules",
            (Target::Gemini, false) => ".gemini/policies/vouch.toml",
            (Target::Gemini, true) => "~/.gemini/policies/vouch.toml",
            (Target::Pi, false) => ".pi/extensions/pi-permission-system/config.json",
            (Target::Pi, true) => "~/.pi/agent/extensions/pi-permission-system/config.json",
            (Target::Cursor, false) => ".cursor/cli.json",
            (Target::Cursor, true) => "~/.cursor/cli-config.json",
            // A project overlay may not pass: the rules go in the user's
            // trusted file either way.
            (Target::Vouch, _) => "~/.config/vouch/config.toml",
        }
    }

    pub fn format(self) -> &'static str {
        match self {
            Target::ClaudeCode | Target::Pi | Target::Cursor => "json",
            Target::Codex => "starlark",
            Target::Gemini | Target::Vouch => "toml",
        }
    }

    /// The `source` whose tool names this target uses.
    fn tool_source(self) -> &'static str {
        self.as_str()
    }
}

impl std::str::FromStr for Target {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Target::ALL
            .into_iter()
            .find(|t| t.as_str() == s)
            .ok_or_else(|| {
                "must be one of `claude-code`, `codex`, `gemini`, `pi`, `cursor`, `vouch`"
                    .to_owned()
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
    surface: String,
    #[serde(skip)]
    kind: Kind,
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

/// `*` in `pattern` matches any run of characters; everything else itself.
/// `text` is another template, whose own `*` is compared literally: a rule
/// that matches the template string matches some command it stands for.
pub fn glob_matches(pattern: &str, text: &str) -> bool {
    let (p, t) = (pattern.as_bytes(), text.as_bytes());
    let (mut pi, mut ti) = (0usize, 0usize);
    let mut star: Option<(usize, usize)> = None;
    while ti < t.len() {
        match (p.get(pi), t.get(ti)) {
            (Some(b'*'), _) => {
                star = Some((pi, ti));
                pi += 1;
            }
            (Some(pc), Some(tc)) if pc == tc => {
                pi += 1;
                ti += 1;
            }
            _ => match star {
                Some((sp, st)) => {
                    pi = sp + 1;
                    ti = st + 1;
                    star = Some((sp, st + 1));
                }
                None => return false,
            },
        }
    }
    p.get(pi..)
        .is_some_and(|rest| rest.iter().all(|&b| b == b'*'))
}

/// The literal tokens before the first wildcard.
fn literal_prefix(template: &str) -> Vec<&str> {
    template
        .split(' ')
        .take_while(|token| !token.contains('*'))
        .collect()
}

/// True when a prefix rule of `prefix` tokens matches a command the
/// template `other` stands for (its `*` may be anything).
fn prefix_covers(prefix: &[&str], other: &str) -> bool {
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
            Kind::Template => template_rule(target, &candidate.subject, blocked),
            Kind::Tool => tool_rule(target, candidate),
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
        snippet(target, &rules)
    };
    Suggestions {
        target,
        file: target.file(all_projects),
        format: target.format(),
        documentation: target.source_url(),
        rules,
        skipped,
        snippet,
        notes: notes(target),
    }
}

fn blocked_by(blocked: &[String], covers: impl Fn(&str) -> bool) -> Option<String> {
    blocked.iter().find(|b| covers(b)).map(|b| {
        format!(
            "it would also allow `{b}`, which was denied (or could not be confirmed) in the window"
        )
    })
}

/// The rule text for a template, and whether it is broader than it.
fn template_rule(
    target: Target,
    template: &str,
    blocked: &[String],
) -> Result<(String, bool), String> {
    match target {
        Target::ClaudeCode => {
            // `Bash(p:*)` is a prefix rule; anything else matches the whole
            // command, `*` spanning any characters.
            let prefix = template.strip_suffix(" *").filter(|p| !p.contains('*'));
            let rule = match prefix {
                Some(prefix) => format!("Bash({prefix}:*)"),
                None => format!("Bash({template})"),
            };
            let covers = |b: &str| match prefix {
                Some(p) => b == p || glob_matches(&format!("{p} *"), b),
                None => glob_matches(template, b),
            };
            match blocked_by(blocked, covers) {
                Some(why) => Err(why),
                None => Ok((rule, false)),
            }
        }
        Target::Pi | Target::Vouch => match blocked_by(blocked, |b| glob_matches(template, b)) {
            Some(why) => Err(why),
            None => Ok((template.to_owned(), false)),
        },
        Target::Codex | Target::Gemini => {
            let prefix = literal_prefix(template);
            if let Some(why) = blocked_by(blocked, |b| prefix_covers(&prefix, b)) {
                return Err(why);
            }
            // A prefix rule also matches any arguments after the prefix.
            Ok((prefix.join(" "), true))
        }
        Target::Cursor => {
            let mut tokens = template.split(' ');
            let command = tokens.next().unwrap_or_default();
            let rest: Vec<&str> = tokens.collect();
            let broader = match rest.as_slice() {
                ["*"] => false,
                [] => true,
                _ => {
                    return Err(format!(
                        "Cursor's `Shell(…)` names only the command word: `Shell({command})` would \
                         allow every `{command}` command, far more than `{template}`"
                    ));
                }
            };
            match blocked_by(blocked, |b| b.split(' ').next() == Some(command)) {
                Some(why) => Err(why),
                None => Ok((format!("Shell({command})"), broader)),
            }
        }
    }
}

/// The rule for a tool name: only for the harness that named the tool.
fn tool_rule(target: Target, candidate: &Candidate) -> Result<(String, bool), String> {
    if !candidate.sources.iter().any(|s| s == target.tool_source()) {
        return Err(format!(
            "tool names differ between harnesses, and `{}` was not reported by {}",
            candidate.subject,
            target.title()
        ));
    }
    match target {
        Target::ClaudeCode | Target::Gemini => Ok((candidate.subject.clone(), false)),
        Target::Pi => Ok((candidate.subject.clone(), false)),
        Target::Codex => Err("Codex rules cover shell commands only".to_owned()),
        Target::Vouch => Err(
            "vouch's rules name commands; other tools are routed by `routing.surfaces`".to_owned(),
        ),
        Target::Cursor => Err(
            "Cursor's `Mcp(server, tool)` needs the server name, which the audit does not keep"
                .to_owned(),
        ),
    }
}

fn quoted(s: &str) -> String {
    Value::String(s.to_owned()).to_string()
}

fn snippet(target: Target, rules: &[Rule]) -> String {
    let is_tool = |rule: &Rule| rule.kind == Kind::Tool;
    match target {
        Target::ClaudeCode => {
            let allow: Vec<&str> = rules.iter().map(|r| r.rule.as_str()).collect();
            pretty(&json!({ "permissions": { "allow": allow } }))
        }
        Target::Cursor => {
            let allow: Vec<&str> = rules.iter().map(|r| r.rule.as_str()).collect();
            pretty(&json!({ "permissions": { "allow": allow, "deny": [] } }))
        }
        Target::Pi => {
            let mut permission: BTreeMap<String, Value> = BTreeMap::new();
            let mut bash = serde_json::Map::new();
            for rule in rules {
                if is_tool(rule) {
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
        Target::Codex => {
            let mut out = String::from("# Suggested by `vouch audit report --target codex`.\n");
            for rule in rules {
                let tokens: Vec<String> = rule.rule.split(' ').map(quoted).collect();
                let list = format!("[{}]", tokens.join(", "));
                let why = format!(
                    "approved by hand {} times (vouch audit: {})",
                    rule.approvals,
                    rule.subjects
                        .iter()
                        .map(|s| format!("`{s}`"))
                        .collect::<Vec<_>>()
                        .join(", ")
                );
                out.push_str(&format!(
                    "prefix_rule(\n    pattern = {list},\n    decision = \"allow\",\n    justification = {},\n    match = [{list}],\n)\n",
                    quoted(&why)
                ));
            }
            out
        }
        Target::Vouch => vouch_snippet(rules),
        Target::Gemini => {
            let mut out = String::from("# Suggested by `vouch audit report --target gemini`.\n");
            for rule in rules {
                out.push_str("\n[[rule]]\n");
                if is_tool(rule) {
                    out.push_str(&format!("toolName = {}\n", quoted(&rule.rule)));
                } else {
                    out.push_str("toolName = \"run_shell_command\"\n");
                    out.push_str(&format!("commandPrefix = {}\n", quoted(&rule.rule)));
                }
                out.push_str("decision = \"allow\"\npriority = 100\n");
            }
            out
        }
    }
}

/// `[[routing.rules]]` tables for vouch's own configuration.
fn vouch_snippet(rules: &[Rule]) -> String {
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

fn pretty(value: &Value) -> String {
    let mut text = serde_json::to_string_pretty(value).unwrap_or_default();
    text.push('\n');
    text
}

fn notes(target: Target) -> Vec<String> {
    let common = "Repeated approval is evidence of preference, not proof of safety: read each rule \
                  before you add it.";
    let specific = match target {
        Target::ClaudeCode => {
            "Merge into `permissions.allow`. `Bash(x:*)` also matches `x` with no arguments; \
             deny and ask rules still win over these."
        }
        Target::Codex => {
            "Prefix rules also allow any arguments after the prefix. Project rules in \
             `.codex/rules/` load only for trusted projects; check a file with \
             `codex execpolicy check --rules FILE <command>`."
        }
        Target::Gemini => {
            "`commandPrefix` also allows any arguments after the prefix. Workspace policies rank \
             below user and admin policies."
        }
        Target::Pi => {
            "Merge into the existing `permission.bash` map and put these entries after any broader \
             pattern that should still ask or deny (such as `\"*\": \"ask\"` or `\"git *\": \
             \"ask\"`): pi-permission-system applies the last matching pattern."
        }
        Target::Cursor => {
            "`Shell(x)` allows every `x` command, whatever its arguments; only templates that \
             already cover every argument (`x *`) are offered."
        }
        Target::Vouch => {
            "Append to your user configuration (a project overlay may not pass); where it \
             already has an inline `rules = [...]`, add these there as `{ command = …, policy = \
             \"pass\" }`. A template passes a command only when every command it would run, after \
             expansion, matches an allowing template or only reads; `*` stands for any words."
        }
    };
    vec![specific.to_owned(), common.to_owned()]
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
