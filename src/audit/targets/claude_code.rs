//! Claude Code's permission rules (`permissions.allow` in
//! `.claude/settings.json`), for `vouch audit report --target claude-code`.

use serde_json::json;

use crate::audit::targets::{self, Rule, RuleLanguage};
use crate::catalogue;

/// Claude Code `permissions.allow`: `Bash(git status)` exact,
/// `Bash(npm run:*)` prefix, `Bash(npm test * --token *)` wildcards, and
/// bare tool names (`mcp__server__tool`).
pub struct ClaudeCode;

impl RuleLanguage for ClaudeCode {
    fn name(&self) -> &'static str {
        catalogue::CLAUDE_CODE.name
    }

    fn title(&self) -> &'static str {
        "Claude Code"
    }

    fn source_url(&self) -> &'static str {
        "https://code.claude.com/docs/en/permissions"
    }

    fn file(&self, all_projects: bool) -> &'static str {
        if all_projects {
            "~/.claude/settings.json"
        } else {
            ".claude/settings.json"
        }
    }

    fn format(&self) -> &'static str {
        "json"
    }

    fn template_rule(&self, template: &str, blocked: &[String]) -> Result<(String, bool), String> {
        // `Bash(p:*)` is a prefix rule; anything else matches the whole
        // command, `*` spanning any characters.
        let prefix = template.strip_suffix(" *").filter(|p| !p.contains('*'));
        let rule = match prefix {
            Some(prefix) => format!("Bash({prefix}:*)"),
            None => format!("Bash({template})"),
        };
        let covers = |b: &str| match prefix {
            Some(p) => b == p || targets::glob_matches(&format!("{p} *"), b),
            None => targets::glob_matches(template, b),
        };
        match targets::blocked_by(blocked, covers) {
            Some(why) => Err(why),
            None => Ok((rule, false)),
        }
    }

    fn tool_rule(&self, tool: &str) -> Result<String, String> {
        Ok(tool.to_owned())
    }

    fn snippet(&self, rules: &[Rule]) -> String {
        let allow: Vec<&str> = rules.iter().map(|r| r.rule.as_str()).collect();
        targets::pretty(&json!({ "permissions": { "allow": allow } }))
    }

    fn note(&self) -> &'static str {
        "Merge into `permissions.allow`. `Bash(x:*)` also matches `x` with no arguments; deny \
         and ask rules still win over these."
    }
}
