//! Cursor CLI's permission rules (`permissions.allow` in `.cursor/cli.json`),
//! for `vouch audit report --target cursor`.

use serde_json::json;

use crate::audit::targets::{self, Rule, RuleLanguage};
use crate::catalogue;

/// Cursor CLI: `permissions.allow` with `Shell(commandBase)`, the first
/// token only.
pub struct Cursor;

impl RuleLanguage for Cursor {
    fn name(&self) -> &'static str {
        catalogue::CURSOR.name
    }

    fn title(&self) -> &'static str {
        "Cursor CLI"
    }

    fn source_url(&self) -> &'static str {
        "https://docs.cursor.com/en/cli/reference/permissions"
    }

    fn file(&self, all_projects: bool) -> &'static str {
        if all_projects {
            "~/.cursor/cli-config.json"
        } else {
            ".cursor/cli.json"
        }
    }

    fn format(&self) -> &'static str {
        "json"
    }

    fn template_rule(&self, template: &str, blocked: &[String]) -> Result<(String, bool), String> {
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
        match targets::blocked_by(blocked, |b| b.split(' ').next() == Some(command)) {
            Some(why) => Err(why),
            None => Ok((format!("Shell({command})"), broader)),
        }
    }

    fn tool_rule(&self, _tool: &str) -> Result<String, String> {
        Err(
            "Cursor's `Mcp(server, tool)` needs the server name, which the audit does not keep"
                .to_owned(),
        )
    }

    fn snippet(&self, rules: &[Rule]) -> String {
        let allow: Vec<&str> = rules.iter().map(|r| r.rule.as_str()).collect();
        targets::pretty(&json!({ "permissions": { "allow": allow, "deny": [] } }))
    }

    fn note(&self) -> &'static str {
        "`Shell(x)` allows every `x` command, whatever its arguments; only templates that \
         already cover every argument (`x *`) are offered."
    }
}
