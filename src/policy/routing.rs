//! Routing (design §6.2): which requests the reviewer model sees at all.
//!
//! Ordered `routing.rules` (a regex over `surface`, `tool`, `command` or the
//! canonical JSON of the action fields), then `routing.surfaces`, then
//! `routing.default`. A read of a sensitive path is routed at least as
//! strictly as `routing.sensitive_reads`, even when reads otherwise pass.
//!
//! A project overlay's routing is kept in its own table and never spliced
//! into the trusted rule list: first-match order would let a broad project
//! rule (`^git` → `ai`) shadow a narrower trusted one (`^git push` →
//! `human`). Instead each table answers on its own and the stricter answer
//! wins (`pass` < `ai` < `human` < `never`).
//!
//! Regexes are compiled once, when the configuration is loaded; `route` is
//! on the hot path and does no work beyond matching.

use std::collections::BTreeMap;
use std::sync::Arc;

use regex::{Regex, RegexBuilder};

use crate::config::{RoutePolicy, RoutingConfig, RoutingRule, RuleField};
use crate::policy::credentials::is_sensitive_path;
use crate::request::{Request, Surface, canonical_json};

/// Compiled-program size cap per rule, so a hostile or careless pattern
/// cannot make loading (or matching) expensive.
const REGEX_SIZE_LIMIT: usize = 1 << 20;

/// Compiles one rule pattern the way the router will use it.
pub fn compile_pattern(pattern: &str) -> Result<Regex, regex::Error> {
    RegexBuilder::new(pattern)
        .size_limit(REGEX_SIZE_LIMIT)
        .dfa_size_limit(REGEX_SIZE_LIMIT)
        .build()
}

/// A rule whose pattern does not compile.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("routing rule {index}: pattern does not compile: {message}")]
pub struct RoutingError {
    pub index: usize,
    pub message: String,
}

impl RoutingError {
    /// The configuration error naming the rule's pattern key in `file`.
    pub fn in_layer(self, file: &str) -> crate::config::ConfigError {
        crate::config::ConfigError::Invalid {
            file: file.to_owned(),
            key: format!("routing.rules[{}].pattern", self.index),
            problem: self.message,
        }
    }
}

/// Which configuration a routing answer came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RuleOrigin {
    /// Package defaults, user file, `--config` or environment.
    Trusted,
    /// The tighten-only project overlay.
    Project,
}

/// Why a request was routed the way it was.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RouteReason {
    /// `routing.rules[index]` matched (0-based, per origin).
    Rule {
        index: usize,
        field: RuleField,
        note: Option<Arc<str>>,
        origin: RuleOrigin,
    },
    /// `routing.surfaces.<name>`.
    Surface { name: Arc<str>, origin: RuleOrigin },
    /// A read of a sensitive path (`routing.sensitive_reads`).
    SensitiveRead,
    /// `routing.default`.
    Default { origin: RuleOrigin },
}

/// The routing answer for one request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Route {
    pub policy: RoutePolicy,
    pub reason: RouteReason,
}

impl Route {
    /// A stable id for the decision's `rule_id`.
    pub fn rule_id(&self) -> String {
        match &self.reason {
            RouteReason::Rule { index, origin, .. } => match origin {
                RuleOrigin::Trusted => format!("routing/rule-{index}"),
                RuleOrigin::Project => format!("routing/project-rule-{index}"),
            },
            RouteReason::Surface { name, origin } => match origin {
                RuleOrigin::Trusted => format!("routing/surface-{name}"),
                RuleOrigin::Project => format!("routing/project-surface-{name}"),
            },
            RouteReason::SensitiveRead => "routing/sensitive-read".to_owned(),
            RouteReason::Default { origin } => match origin {
                RuleOrigin::Trusted => "routing/default".to_owned(),
                RuleOrigin::Project => "routing/project-default".to_owned(),
            },
        }
    }

    /// One sentence for the decision's `rationale`.
    pub fn rationale(&self) -> String {
        let policy = self.policy.as_str();
        match &self.reason {
            RouteReason::Rule {
                index,
                field,
                note,
                origin,
            } => {
                let note = note
                    .as_deref()
                    .map(|n| format!(" ({n})"))
                    .unwrap_or_default();
                format!(
                    "{} routing rule {index} matched the {}{note}: policy `{policy}`",
                    origin_word(*origin),
                    field_word(*field)
                )
            }
            RouteReason::Surface { name, origin } => format!(
                "{} routing sends surface `{name}` to policy `{policy}`",
                origin_word(*origin)
            ),
            RouteReason::SensitiveRead => {
                format!("reads of sensitive paths are routed to policy `{policy}`")
            }
            RouteReason::Default { origin } => format!(
                "no routing rule or surface entry matched; the {} default policy is `{policy}`",
                origin_word(*origin)
            ),
        }
    }
}

fn origin_word(origin: RuleOrigin) -> &'static str {
    match origin {
        RuleOrigin::Trusted => "trusted",
        RuleOrigin::Project => "project",
    }
}

fn field_word(field: RuleField) -> &'static str {
    match field {
        RuleField::Surface => "surface",
        RuleField::Tool => "tool",
        RuleField::Command => "command",
        RuleField::Request => "request",
    }
}

/// The routing a project overlay adds; every part is optional.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ProjectRouting {
    pub rules: Vec<RoutingRule>,
    pub surfaces: BTreeMap<String, RoutePolicy>,
    pub default: Option<RoutePolicy>,
    pub sensitive_reads: Option<RoutePolicy>,
}

impl ProjectRouting {
    pub fn is_empty(&self) -> bool {
        self.rules.is_empty()
            && self.surfaces.is_empty()
            && self.default.is_none()
            && self.sensitive_reads.is_none()
    }
}

#[derive(Debug)]
struct CompiledRule {
    regex: Regex,
    field: RuleField,
    policy: RoutePolicy,
    note: Option<Arc<str>>,
}

#[derive(Debug)]
struct Table {
    origin: RuleOrigin,
    rules: Vec<CompiledRule>,
    surfaces: BTreeMap<String, (RoutePolicy, Arc<str>)>,
    default: Option<RoutePolicy>,
    sensitive_reads: Option<RoutePolicy>,
}

impl Table {
    fn build(
        origin: RuleOrigin,
        rules: &[RoutingRule],
        surfaces: &BTreeMap<String, RoutePolicy>,
        default: Option<RoutePolicy>,
        sensitive_reads: Option<RoutePolicy>,
    ) -> Result<Table, RoutingError> {
        let rules = rules
            .iter()
            .enumerate()
            .map(|(index, rule)| {
                Ok(CompiledRule {
                    regex: compile_pattern(&rule.pattern).map_err(|e| RoutingError {
                        index,
                        message: e.to_string(),
                    })?,
                    field: rule.field,
                    policy: rule.policy,
                    note: rule.note.as_deref().map(Arc::from),
                })
            })
            .collect::<Result<Vec<_>, RoutingError>>()?;
        let surfaces = surfaces
            .iter()
            .map(|(name, policy)| (name.clone(), (*policy, Arc::from(name.as_str()))))
            .collect();
        Ok(Table {
            origin,
            rules,
            surfaces,
            default,
            sensitive_reads,
        })
    }

    /// This table's own answer: first matching rule, then the surface entry,
    /// then its default (a project table may have none).
    fn answer(&self, request: &Request, request_json: &mut Option<String>) -> Option<Route> {
        for (index, rule) in self.rules.iter().enumerate() {
            let text: Option<&str> = match rule.field {
                RuleField::Surface => Some(request.surface.as_str()),
                RuleField::Tool => request.tool.as_deref(),
                RuleField::Command => request.command.as_deref(),
                RuleField::Request => Some(
                    request_json
                        .get_or_insert_with(|| canonical_json(&request.action_value()))
                        .as_str(),
                ),
            };
            // A rule over a field the request does not carry never matches.
            if text.is_some_and(|t| rule.regex.is_match(t)) {
                return Some(Route {
                    policy: rule.policy,
                    reason: RouteReason::Rule {
                        index,
                        field: rule.field,
                        note: rule.note.clone(),
                        origin: self.origin,
                    },
                });
            }
        }
        if let Some((policy, name)) = self.surfaces.get(request.surface.as_str()) {
            return Some(Route {
                policy: *policy,
                reason: RouteReason::Surface {
                    name: name.clone(),
                    origin: self.origin,
                },
            });
        }
        self.default.map(|policy| Route {
            policy,
            reason: RouteReason::Default {
                origin: self.origin,
            },
        })
    }
}

/// Routes requests; cheap to clone (the compiled tables are shared).
#[derive(Debug, Clone)]
pub struct Router {
    trusted: Arc<Table>,
    project: Option<Arc<Table>>,
}

impl Router {
    /// Compiles the trusted routing configuration.
    pub fn new(routing: &RoutingConfig) -> Result<Router, RoutingError> {
        Ok(Router {
            trusted: Arc::new(Table::build(
                RuleOrigin::Trusted,
                &routing.rules,
                &routing.surfaces,
                Some(routing.default),
                Some(routing.sensitive_reads),
            )?),
            project: None,
        })
    }

    /// This router plus a project's routing; the trusted tables are shared,
    /// only the project's rules are compiled.
    pub fn with_project(&self, project: &ProjectRouting) -> Result<Router, RoutingError> {
        if project.is_empty() {
            return Ok(Router {
                trusted: Arc::clone(&self.trusted),
                project: None,
            });
        }
        Ok(Router {
            trusted: Arc::clone(&self.trusted),
            project: Some(Arc::new(Table::build(
                RuleOrigin::Project,
                &project.rules,
                &project.surfaces,
                project.default,
                project.sensitive_reads,
            )?)),
        })
    }

    /// The routing answer for `request`: the stricter of the trusted and
    /// project answers, raised to `sensitive_reads` for sensitive reads.
    pub fn route(&self, request: &Request) -> Route {
        let mut request_json = None;
        // INVARIANT: the trusted table always has a default, so this is the
        // trusted answer; the fallback is only there to avoid a panic path and
        // is the strictest policy.
        let mut route = self
            .trusted
            .answer(request, &mut request_json)
            .unwrap_or(Route {
                policy: RoutePolicy::Never,
                reason: RouteReason::Default {
                    origin: RuleOrigin::Trusted,
                },
            });
        if let Some(project) = &self.project
            && let Some(project_route) = project.answer(request, &mut request_json)
        {
            route = stricter(route, project_route);
        }
        let sensitive = [
            self.trusted.sensitive_reads,
            self.project.as_ref().and_then(|p| p.sensitive_reads),
        ]
        .into_iter()
        .flatten()
        .max_by_key(|p| p.strictness());
        if let Some(policy) = sensitive
            && is_sensitive_read(request)
        {
            route = stricter(
                route,
                Route {
                    policy,
                    reason: RouteReason::SensitiveRead,
                },
            );
        }
        route
    }
}

/// The stricter route; on a tie the first (the one already chosen) stays, so
/// the explanation names the trusted or earlier reason.
fn stricter(first: Route, second: Route) -> Route {
    if second.policy.strictness() > first.policy.strictness() {
        second
    } else {
        first
    }
}

/// Input keys that harnesses use for the file a tool touches.
const INPUT_PATH_KEYS: &[&str] = &["path", "file_path", "filePath", "notebook_path"];

/// A request that reads (or otherwise accesses without writing) a sensitive
/// path. Writing surfaces and bash are routed by their own entries; bash
/// reads are the reviewer's and the hard denies' business.
fn is_sensitive_read(request: &Request) -> bool {
    if request.surface.writes_path() || request.surface == Surface::Bash {
        return false;
    }
    let named = [request.path.as_deref(), request.resolved_path.as_deref()]
        .into_iter()
        .flatten()
        .any(is_sensitive_path);
    if named {
        return true;
    }
    if let Some(serde_json::Value::Object(input)) = &request.input
        && INPUT_PATH_KEYS
            .iter()
            .filter_map(|k| input.get(*k).and_then(serde_json::Value::as_str))
            .any(is_sensitive_path)
    {
        return true;
    }
    request.surface == Surface::Read
        && request.command.as_deref().is_some_and(|command| {
            command
                .split(|c: char| c.is_whitespace() || "\"'`;|&<>()=,".contains(c))
                .filter(|t| !t.is_empty())
                .any(is_sensitive_path)
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request(surface: &str, command: Option<&str>) -> Request {
        let mut v = serde_json::json!({"session_id": "s", "surface": surface, "tool": "Tool"});
        if let Some(c) = command {
            v["command"] = c.into();
        }
        Request::from_slice(v.to_string().as_bytes()).unwrap()
    }

    fn rule(pattern: &str, policy: RoutePolicy, field: RuleField) -> RoutingRule {
        RoutingRule {
            pattern: pattern.into(),
            policy,
            field,
            note: None,
        }
    }

    fn routing(rules: Vec<RoutingRule>) -> RoutingConfig {
        RoutingConfig {
            default: RoutePolicy::Ai,
            rules,
            sensitive_reads: RoutePolicy::Ai,
            surfaces: [("read".to_owned(), RoutePolicy::Pass)].into(),
        }
    }

    #[test]
    fn bad_pattern_names_its_index() {
        let err = Router::new(&routing(vec![
            rule("^ok", RoutePolicy::Ai, RuleField::Command),
            rule("(", RoutePolicy::Ai, RuleField::Command),
        ]))
        .unwrap_err();
        assert_eq!(err.index, 1);
    }

    #[test]
    fn stricter_keeps_the_first_on_ties() {
        let a = Route {
            policy: RoutePolicy::Ai,
            reason: RouteReason::SensitiveRead,
        };
        let b = Route {
            policy: RoutePolicy::Ai,
            reason: RouteReason::Default {
                origin: RuleOrigin::Trusted,
            },
        };
        assert_eq!(stricter(a.clone(), b), a);
    }

    #[test]
    fn read_command_naming_a_credential_is_sensitive() {
        assert!(is_sensitive_read(&request(
            "read",
            Some("cat ~/.aws/credentials")
        )));
        assert!(!is_sensitive_read(&request("read", Some("cat README.md"))));
        assert!(!is_sensitive_read(&request("bash", Some("cat .env"))));
    }
}
