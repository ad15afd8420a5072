//! OpenCode's `permission` rules (`opencode.json`), for `vouch audit report
//! --target opencode`.

use serde_json::{Value, json};

use crate::audit::subject::Kind;
use crate::audit::targets::{self, Rule, RuleLanguage};
use crate::catalogue;

/// The audit's suggested rules in OpenCode's `permission` language: per
/// tool, a map of wildcard patterns (`*` any characters, `?` one, and a
/// final ` *` also matches no arguments) to `allow`/`ask`/`deny`, the last
/// matching entry winning. Returns the pattern for a command template and
/// whether it allows more than the template, or why it cannot.
fn template_rule(template: &str) -> Result<(String, bool), String> {
    if template.contains('?') {
        return Err(format!(
            "OpenCode reads `?` in a pattern as any one character, and `{template}` contains one"
        ));
    }
    // A final ` *` also matches the bare command, which the template does
    // not stand for.
    Ok((template.to_owned(), template.ends_with(" *")))
}

/// Whether the OpenCode pattern `rule` also matches the template `other`.
fn rule_covers(rule: &str, other: &str) -> bool {
    targets::glob_matches(rule, other) || rule.strip_suffix(" *").is_some_and(|bare| bare == other)
}

/// The `opencode.json` fragment for command patterns and whole tools.
fn permission_fragment<'a>(
    commands: impl IntoIterator<Item = &'a str>,
    tools: impl IntoIterator<Item = &'a str>,
) -> Value {
    let mut permission = serde_json::Map::new();
    for tool in tools {
        permission.insert(tool.to_owned(), Value::from("allow"));
    }
    let bash: serde_json::Map<String, Value> = commands
        .into_iter()
        .map(|c| (c.to_owned(), Value::from("allow")))
        .collect();
    if !bash.is_empty() {
        permission.insert("bash".to_owned(), Value::Object(bash));
    }
    json!({ "permission": permission })
}

/// The note that goes with the suggestions.
const RULE_NOTE: &str = "Merge into `permission.bash` of `opencode.json` after any broader \
     pattern that should still ask or deny (such as `\"*\": \"ask\"`): OpenCode applies the \
     last matching pattern. A pattern ending in ` *` also matches the command with no \
     arguments. These rules only stop OpenCode's own prompt; vouch's plugin still reviews \
     each call first.";

/// OpenCode `permission` in `opencode.json`: per tool a map of wildcard
/// patterns, the last match winning (opencode.ai/docs/permissions).
pub struct OpenCode;

impl RuleLanguage for OpenCode {
    fn name(&self) -> &'static str {
        catalogue::OPENCODE.name
    }

    fn title(&self) -> &'static str {
        "OpenCode"
    }

    fn source_url(&self) -> &'static str {
        "https://opencode.ai/docs/permissions/"
    }

    fn file(&self, all_projects: bool) -> &'static str {
        if all_projects {
            "~/.config/opencode/opencode.json"
        } else {
            "opencode.json"
        }
    }

    fn format(&self) -> &'static str {
        "json"
    }

    fn template_rule(&self, template: &str, blocked: &[String]) -> Result<(String, bool), String> {
        let (rule, broader) = template_rule(template)?;
        match targets::blocked_by(blocked, |b| rule_covers(&rule, b)) {
            Some(why) => Err(why),
            None => Ok((rule, broader)),
        }
    }

    fn tool_rule(&self, tool: &str) -> Result<String, String> {
        Ok(tool.to_owned())
    }

    fn snippet(&self, rules: &[Rule]) -> String {
        let is_tool = |r: &&Rule| r.kind == Kind::Tool;
        targets::pretty(&permission_fragment(
            rules
                .iter()
                .filter(|r| !is_tool(r))
                .map(|r| r.rule.as_str()),
            rules.iter().filter(is_tool).map(|r| r.rule.as_str()),
        ))
    }

    fn note(&self) -> &'static str {
        RULE_NOTE
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rules_are_opencode_patterns() {
        assert_eq!(
            template_rule("git status").unwrap(),
            ("git status".into(), false)
        );
        assert_eq!(
            template_rule("npm run *").unwrap(),
            ("npm run *".into(), true)
        );
        assert!(template_rule("ls ?").is_err());
        assert!(rule_covers("npm run *", "npm run"));
        assert!(rule_covers("npm run *", "npm run build"));
        assert!(!rule_covers("git status", "git push"));
        let v = permission_fragment(["git status", "npm run *"], ["github_create_issue"]);
        assert_eq!(v["permission"]["bash"]["npm run *"], "allow");
        assert_eq!(v["permission"]["github_create_issue"], "allow");
    }

    #[test]
    fn the_audit_report_writes_opencode_json() {
        use crate::audit::targets::{Candidate, Target, suggest};
        let candidate = |subject: &str, kind: Kind| Candidate {
            surface: "bash".into(),
            kind,
            subject: subject.into(),
            approvals: 5,
            sources: vec!["opencode".into()],
        };
        let s = suggest(
            Target::of(&OpenCode),
            &[
                candidate("git status", Kind::Template),
                candidate("npm run *", Kind::Template),
                candidate("rm *", Kind::Template),
                candidate("ls ?", Kind::Template),
                candidate("github_create_issue", Kind::Tool),
            ],
            &["rm -rf *".to_owned()],
            false,
        );
        assert_eq!(s.file, "opencode.json");
        let v: Value = serde_json::from_str(&s.snippet).unwrap();
        assert_eq!(
            v,
            json!({"permission": {
                "github_create_issue": "allow",
                "bash": {"git status": "allow", "npm run *": "allow"},
            }})
        );
        let skipped: Vec<_> = s.skipped.iter().map(|k| k.subject.as_str()).collect();
        assert_eq!(skipped, ["rm *", "ls ?"]);
    }
}
