//! Gemini CLI's policy-engine rules (`.gemini/policies/*.toml`), for `vouch
//! audit report --target gemini`.

use crate::audit::subject::Kind;
use crate::audit::targets::{self, Rule, RuleLanguage};
use crate::catalogue;

/// Gemini CLI policy engine: TOML `[[rule]]` with `toolName`,
/// `commandPrefix`, `decision`, `priority`.
pub struct Gemini;

impl RuleLanguage for Gemini {
    fn name(&self) -> &'static str {
        catalogue::GEMINI.name
    }

    fn title(&self) -> &'static str {
        "Gemini CLI"
    }

    fn source_url(&self) -> &'static str {
        "https://geminicli.com/docs/reference/policy-engine/"
    }

    fn file(&self, all_projects: bool) -> &'static str {
        if all_projects {
            "~/.gemini/policies/vouch.toml"
        } else {
            ".gemini/policies/vouch.toml"
        }
    }

    fn format(&self) -> &'static str {
        "toml"
    }

    fn template_rule(&self, template: &str, blocked: &[String]) -> Result<(String, bool), String> {
        let prefix = targets::literal_prefix(template);
        if let Some(why) = targets::blocked_by(blocked, |b| targets::prefix_covers(&prefix, b)) {
            return Err(why);
        }
        // A prefix rule also matches any arguments after the prefix.
        Ok((prefix.join(" "), true))
    }

    fn tool_rule(&self, tool: &str) -> Result<String, String> {
        Ok(tool.to_owned())
    }

    fn snippet(&self, rules: &[Rule]) -> String {
        let mut out = String::from("# Suggested by `vouch audit report --target gemini`.\n");
        for rule in rules {
            out.push_str("\n[[rule]]\n");
            if rule.kind == Kind::Tool {
                out.push_str(&format!("toolName = {}\n", targets::quoted(&rule.rule)));
            } else {
                out.push_str("toolName = \"run_shell_command\"\n");
                out.push_str(&format!(
                    "commandPrefix = {}\n",
                    targets::quoted(&rule.rule)
                ));
            }
            out.push_str("decision = \"allow\"\npriority = 100\n");
        }
        out
    }

    fn note(&self) -> &'static str {
        "`commandPrefix` also allows any arguments after the prefix. Workspace policies rank \
         below user and admin policies."
    }
}
