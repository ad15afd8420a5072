//! Qwen Code's permission rules (`permissions.allow` in `.qwen/settings.json`),
//! for `vouch audit report --target qwen`.

use serde_json::json;

use crate::audit::targets::{self, Rule, RuleLanguage};
use crate::catalogue;

/// Where suggested rules go, for one project or for every project.
fn rules_file(all_projects: bool) -> &'static str {
    if all_projects {
        "~/.qwen/settings.json"
    } else {
        ".qwen/settings.json"
    }
}

/// The documentation the rule language follows (read in the 0.24.4
/// bundle's `permissions/rule-parser.ts` too).
const RULES_URL: &str = "https://qwenlm.github.io/qwen-code-docs/en/users/configuration/settings/";

/// A `permissions.allow` rule for a vouch command template (`*` = any
/// words), and whether it allows more than the template. Qwen's
/// `Bash(cmd)` is a prefix rule on word boundaries (`Bash(git status)`
/// also matches `git status --short`); in `Bash(cmd *)` the arguments are
/// optional (`cmd` alone matches too, as with Claude Code's `Bash(cmd:*)`);
/// any other `*` is any characters. Qwen splits a compound command and
/// wants a rule for each part. It reads `:*` as ` *`, so a template with
/// `:*` cannot be written as it is.
fn template_rule(template: &str) -> Result<(String, bool), String> {
    if template.contains(":*") {
        return Err(format!(
            "Qwen Code reads `:*` in a rule as ` *`, so `{template}` cannot be written exactly"
        ));
    }
    Ok((format!("Bash({template})"), !template.contains('*')))
}

/// True when the rule written for `template` would also match a command
/// the template `other` stands for.
fn template_covers(template: &str, other: &str) -> bool {
    let rule = if template.contains('*') {
        template.to_owned()
    } else {
        // No wildcard: Qwen matches the text, or the text and more words.
        format!("{template} *")
    };
    other == template.trim_end_matches(" *") || targets::glob_matches(&rule, other)
}

/// A `permissions.allow` rule for a tool Qwen reported by name (MCP tools
/// are `mcp__server__tool`, which Qwen's rules name the same way).
fn tool_rule(tool: &str) -> String {
    tool.to_owned()
}

/// The settings fragment holding `rules`.
fn rules_snippet(rules: &[&str]) -> String {
    let value = json!({"permissions": {"allow": rules}});
    let mut text = serde_json::to_string_pretty(&value).unwrap_or_else(|_| value.to_string());
    text.push('\n');
    text
}

/// What the user should know before merging the rules.
const RULES_NOTE: &str = "Merge into `permissions.allow`. `Bash(x)` also matches `x` followed \
                              by any arguments, and `Bash(x *)` matches `x` alone; `ask` and \
                              `deny` rules still win. Project rules load only in a trusted folder.";

/// Qwen Code `permissions.allow`: `Bash(cmd)` (a prefix on word
/// boundaries), `Bash(cmd *)` and bare tool names — its settings reference
/// and the 0.24.4 rule parser.
pub struct Qwen;

impl RuleLanguage for Qwen {
    fn name(&self) -> &'static str {
        catalogue::QWEN.name
    }

    fn title(&self) -> &'static str {
        "Qwen Code"
    }

    fn source_url(&self) -> &'static str {
        RULES_URL
    }

    fn file(&self, all_projects: bool) -> &'static str {
        rules_file(all_projects)
    }

    fn format(&self) -> &'static str {
        "json"
    }

    fn template_rule(&self, template: &str, blocked: &[String]) -> Result<(String, bool), String> {
        let (rule, broader) = template_rule(template)?;
        match targets::blocked_by(blocked, |b| template_covers(template, b)) {
            Some(why) => Err(why),
            None => Ok((rule, broader)),
        }
    }

    fn tool_rule(&self, tool: &str) -> Result<String, String> {
        Ok(tool_rule(tool))
    }

    fn snippet(&self, rules: &[Rule]) -> String {
        let allow: Vec<&str> = rules.iter().map(|r| r.rule.as_str()).collect();
        rules_snippet(&allow)
    }

    fn note(&self) -> &'static str {
        RULES_NOTE
    }
}

#[cfg(test)]
mod tests {
    use serde_json::Value;

    use super::*;

    #[test]
    fn rules_follow_qwens_matching() {
        assert_eq!(
            template_rule("npm test *"),
            Ok(("Bash(npm test *)".to_owned(), false))
        );
        // A bare command is a prefix rule in Qwen.
        assert_eq!(
            template_rule("git status"),
            Ok(("Bash(git status)".to_owned(), true))
        );
        assert!(template_rule("docker run img:*").is_err());
        assert!(template_covers("git status", "git status --short"));
        assert!(template_covers("npm test *", "npm test"));
        assert!(!template_covers("npm test *", "npm publish"));
        let v: Value = serde_json::from_str(&rules_snippet(&["Bash(ls *)"])).unwrap();
        assert_eq!(v["permissions"]["allow"][0], "Bash(ls *)");
    }
}
