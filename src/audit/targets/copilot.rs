//! GitHub Copilot CLI's `--allow-tool` patterns, for `vouch audit report
//! --target copilot`.

use crate::audit::targets::{self, Rule, RuleLanguage};
use crate::catalogue;

/// A `shell(…)` pattern for a command template, and whether it is broader
/// than the template. Copilot matches `shell(x y)` by command and
/// first-level subcommand and `shell(x y:*)` by word prefix, so every rule
/// is a prefix rule: `x y *` is exact, anything else broader.
pub fn shell_rule(prefix: &[&str], template: &str) -> Option<(String, bool)> {
    if prefix.is_empty() || prefix.iter().any(|w| !pattern_word(w)) {
        return None;
    }
    let joined = prefix.join(" ");
    let exact = template == format!("{joined} *");
    Some((format!("shell({joined}:*)"), !exact))
}

/// A word Copilot's pattern parser keeps as written (no parentheses, which
/// end the argument, and no `:`, which starts the wildcard).
fn pattern_word(w: &str) -> bool {
    !w.is_empty()
        && !w
            .chars()
            .any(|c| matches!(c, '(' | ')' | ':') || c.is_whitespace())
}

/// The suggested rules as a Copilot command line (the patterns are
/// single-quoted for the shell; none contains a quote).
pub fn rules_snippet(rules: &[&str]) -> String {
    let mut out = String::from(
        "# Suggested by `vouch audit report --target copilot`: add to the copilot command line.\n",
    );
    out.push_str("copilot");
    for rule in rules {
        out.push_str(&format!(
            " \\\n  --allow-tool '{}'",
            rule.replace('\'', r"'\''")
        ));
    }
    out.push('\n');
    out
}

/// Parses one `kind(argument)` pattern the way Copilot's `--allow-tool`
/// does, for checking generated rules: the kind and the optional argument.
pub fn parse_pattern(pattern: &str) -> Option<(&str, Option<&str>)> {
    match pattern.split_once('(') {
        None => (!pattern.is_empty()
            && pattern
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || "-_".contains(c)))
        .then_some((pattern, None)),
        Some((kind, rest)) => {
            let arg = rest.strip_suffix(')')?;
            if kind.is_empty() || arg.contains(['(', ')']) {
                return None;
            }
            Some((kind, (!arg.is_empty()).then_some(arg)))
        }
    }
}

/// GitHub Copilot CLI: `--allow-tool 'shell(git status:*)'` word-prefix
/// patterns (`copilot help permissions`, 1.0.102).
pub struct Copilot;

impl RuleLanguage for Copilot {
    fn name(&self) -> &'static str {
        catalogue::COPILOT.name
    }

    fn title(&self) -> &'static str {
        "GitHub Copilot CLI"
    }

    fn source_url(&self) -> &'static str {
        "https://docs.github.com/en/copilot/how-tos/use-copilot-agents/use-copilot-cli"
    }

    fn file(&self, _all_projects: bool) -> &'static str {
        // Copilot takes permission rules on its command line only.
        "the copilot command line (--allow-tool)"
    }

    fn format(&self) -> &'static str {
        "shell"
    }

    fn template_rule(&self, template: &str, blocked: &[String]) -> Result<(String, bool), String> {
        let prefix = targets::literal_prefix(template);
        let Some((rule, broader)) = shell_rule(&prefix, template) else {
            return Err(format!(
                "no `shell(…)` pattern of GitHub Copilot CLI names `{template}`: it needs a \
                 literal command word, without `:` or parentheses"
            ));
        };
        match targets::blocked_by(blocked, |b| targets::prefix_covers(&prefix, b)) {
            Some(why) => Err(why),
            None => Ok((rule, broader)),
        }
    }

    fn tool_rule(&self, _tool: &str) -> Result<String, String> {
        Err(
            "GitHub Copilot CLI's rules name MCP tools as `server(tool)`, and the audit does not \
             keep the server name"
                .to_owned(),
        )
    }

    fn snippet(&self, rules: &[Rule]) -> String {
        let patterns: Vec<&str> = rules.iter().map(|r| r.rule.as_str()).collect();
        rules_snippet(&patterns)
    }

    fn note(&self) -> &'static str {
        "`shell(x y:*)` allows every command starting with the words `x y`, whatever follows; \
         pass each as `--allow-tool` (deny rules still win, even over --allow-all-tools)."
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shell_rules_are_prefix_patterns() {
        assert_eq!(
            shell_rule(&["git", "status"], "git status *"),
            Some(("shell(git status:*)".to_owned(), false))
        );
        assert_eq!(
            shell_rule(&["git", "status"], "git status"),
            Some(("shell(git status:*)".to_owned(), true))
        );
        assert_eq!(shell_rule(&["a:b"], "a:b *"), None);
        assert_eq!(shell_rule(&[], "*"), None);
        assert_eq!(
            parse_pattern("shell(git status:*)"),
            Some(("shell", Some("git status:*")))
        );
        assert_eq!(parse_pattern("write"), Some(("write", None)));
        assert_eq!(parse_pattern("shell(git"), None);
        let s = rules_snippet(&["shell(npm test:*)"]);
        assert!(s.contains("--allow-tool 'shell(npm test:*)'"), "{s}");
    }
}
