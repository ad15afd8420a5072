//! Codex's execpolicy rules (`.codex/rules/*.rules`, Starlark), for `vouch
//! audit report --target codex`.

use crate::audit::targets::{self, Rule, RuleLanguage};
use crate::catalogue;

/// Codex execpolicy: Starlark `prefix_rule(pattern = [...], decision =
/// "allow", justification = ..., match = [...])` in `rules/*.rules`.
pub struct Codex;

impl RuleLanguage for Codex {
    fn name(&self) -> &'static str {
        catalogue::CODEX.name
    }

    fn title(&self) -> &'static str {
        "Codex"
    }

    fn source_url(&self) -> &'static str {
        "https://developers.openai.com/codex/rules"
    }

    fn file(&self, all_projects: bool) -> &'static str {
        if all_projects {
            "~/.codex/rules/default.rules"
        } else {
            ".codex/rules/vouch.rules"
        }
    }

    fn format(&self) -> &'static str {
        "starlark"
    }

    fn template_rule(&self, template: &str, blocked: &[String]) -> Result<(String, bool), String> {
        let prefix = targets::literal_prefix(template);
        if let Some(why) = targets::blocked_by(blocked, |b| targets::prefix_covers(&prefix, b)) {
            return Err(why);
        }
        // A prefix rule also matches any arguments after the prefix.
        Ok((prefix.join(" "), true))
    }

    fn tool_rule(&self, _tool: &str) -> Result<String, String> {
        Err("Codex rules cover shell commands only".to_owned())
    }

    fn snippet(&self, rules: &[Rule]) -> String {
        let mut out = String::from("# Suggested by `vouch audit report --target codex`.\n");
        for rule in rules {
            let tokens: Vec<String> = rule.rule.split(' ').map(targets::quoted).collect();
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
                targets::quoted(&why)
            ));
        }
        out
    }

    fn note(&self) -> &'static str {
        "Prefix rules also allow any arguments after the prefix. Project rules in \
         `.codex/rules/` load only for trusted projects; check a file with `codex execpolicy \
         check --rules FILE <command>`."
    }
}
