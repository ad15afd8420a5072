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

use crate::rules::StageRule;

use crate::config::{RoutePolicy, RoutingConfig, RoutingRule, RuleField};
use crate::credentials::is_sensitive_path;
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

/// Compiles one rule: exactly one of `pattern` and `command`; a regex may
/// not pass (allow) on the raw command text, where `git status; rm -rf ..`
/// matches `^git status` too.
fn compile_rule(index: usize, rule: &RoutingRule) -> Result<Matcher, RoutingError> {
    let error = |key: &'static str, message: String| RoutingError {
        index,
        key,
        message,
    };
    match (&rule.pattern, &rule.command) {
        (Some(_), Some(_)) => Err(error(
            "command",
            "give either `pattern` (a regex) or `command` (a template), not both".to_owned(),
        )),
        (None, None) => Err(error(
            "pattern",
            "a rule needs `pattern` (a regex) or `command` (a command template)".to_owned(),
        )),
        (None, Some(template)) => Template::parse(template)
            .map(Matcher::Template)
            .map_err(|e| error("command", e)),
        (Some(pattern), None) => {
            let raw_command = matches!(rule.field, RuleField::Command | RuleField::Request);
            if rule.policy == RoutePolicy::Pass && raw_command {
                return Err(error(
                    "pattern",
                    format!(
                        "a regex over the raw {} cannot pass (allow) safely: `x; rm -rf ..` \
                         matches a prefix too. Use a command template, matched against every \
                         command that would run: `command = \"{}\"`",
                        field_word(rule.field),
                        suggested_template(pattern)
                    ),
                ));
            }
            compile_pattern(pattern)
                .map(Matcher::Regex)
                .map_err(|e| error("pattern", e.to_string()))
        }
    }
}

/// A template a regex probably meant (`^git status` → `git status *`).
fn suggested_template(pattern: &str) -> String {
    let words: String = pattern
        .trim_start_matches('^')
        .trim_end_matches('$')
        .chars()
        .filter(|c| c.is_ascii_alphanumeric() || matches!(c, ' ' | '-' | '_' | '.' | '/'))
        .collect();
    let words = words.trim();
    if words.is_empty() {
        "program *".to_owned()
    } else {
        format!("{words} *")
    }
}

/// A rule whose pattern does not compile.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("routing rule {index}: `{key}`: {message}")]
pub struct RoutingError {
    pub index: usize,
    /// The rule's key at fault (`pattern` or `command`).
    pub key: &'static str,
    pub message: String,
}

impl RoutingError {
    /// The configuration error naming the rule's pattern key in `file`.
    pub fn in_layer(self, file: &str) -> crate::config::ConfigError {
        crate::config::ConfigError::Invalid {
            file: file.to_owned(),
            key: format!("routing.rules[{}].{}", self.index, self.key),
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
                RuleOrigin::Trusted => StageRule::RoutingRule.with(&index.to_string()),
                RuleOrigin::Project => StageRule::RoutingProjectRule.with(&index.to_string()),
            },
            RouteReason::Surface { name, origin } => match origin {
                RuleOrigin::Trusted => StageRule::RoutingSurface.with(name),
                RuleOrigin::Project => StageRule::RoutingProjectSurface.with(name),
            },
            RouteReason::SensitiveRead => StageRule::RoutingSensitiveRead.as_str().to_owned(),
            RouteReason::Default { origin } => match origin {
                RuleOrigin::Trusted => StageRule::RoutingDefault.as_str().to_owned(),
                RuleOrigin::Project => StageRule::RoutingProjectDefault.as_str().to_owned(),
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
    matcher: Matcher,
    field: RuleField,
    policy: RoutePolicy,
    note: Option<Arc<str>>,
}

/// How a rule matches.
#[derive(Debug)]
enum Matcher {
    /// A regex over the rule's field.
    Regex(Regex),
    /// A command template over the analysed units.
    Template(Template),
}

/// One unit a bash command would run, as routing sees it: its words after
/// expansion (`None` where a word is not known statically), and whether
/// the unit is inert on its own (`cd`, `ls`: an allowing template need not
/// name it).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unit {
    pub words: Vec<Option<String>>,
    pub inert: bool,
}

/// Directories whose programs are the system's, not the project's.
pub const SYSTEM_BIN: &[&str] = &[
    "/bin/",
    "/usr/bin/",
    "/usr/local/bin/",
    "/sbin/",
    "/usr/sbin/",
    "/opt/homebrew/bin/",
];

/// A command template: words, where `*` alone stands for any run of words
/// (none included) and a `*` inside a word for any characters in it. The
/// first word names the program: a unit run by a path matches it only when
/// the path is a system directory's (`/usr/bin/git`, never `./git`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Template {
    words: Vec<String>,
}

impl Template {
    /// Parses `text`; an empty template or one whose program is `*` is
    /// refused (it would name no program).
    pub fn parse(text: &str) -> Result<Template, String> {
        let words: Vec<String> = text.split_ascii_whitespace().map(str::to_owned).collect();
        match words.first().map(String::as_str) {
            None => Err("the command template is empty".to_owned()),
            Some(first) if first.contains('*') => {
                Err("the command template must start with a program name, not `*`".to_owned())
            }
            Some(_) => Ok(Template { words }),
        }
    }

    /// Does `unit` match (every word, the whole unit)?
    pub fn matches(&self, unit: &Unit) -> bool {
        let Some((program, rest)) = self.words.split_first() else {
            return false;
        };
        let Some((Some(first), args)) = unit.words.split_first() else {
            return false;
        };
        if !program_is(first, program) {
            return false;
        }
        words_match(rest, args)
    }
}

fn program_is(written: &str, name: &str) -> bool {
    if written == name {
        return true;
    }
    SYSTEM_BIN
        .iter()
        .any(|dir| written.strip_prefix(dir) == Some(name))
}

/// Template words against unit words; `*` alone matches any run.
///
/// One pass with a single backtrack point (the last `*`), as glob matching
/// is done: O(template × words) whatever the stars. A recursion that tried
/// every split at every `*` took exponential time — a project template of
/// a dozen stars against a unit of ten thousand words held a thread for
/// good — and recursed once per template word.
fn words_match(template: &[String], words: &[Option<String>]) -> bool {
    let one = |literal: &str, word: &Option<String>| match word {
        Some(word) if literal.contains('*') => glob_matches(literal, word),
        Some(word) => literal == word,
        None => false,
    };
    let (mut t, mut w) = (0usize, 0usize);
    // The word after the last `*` seen, and where that star's run ends now.
    let mut star: Option<(usize, usize)> = None;
    while let Some(word) = words.get(w) {
        match template.get(t).map(String::as_str) {
            Some("*") => {
                star = Some((t + 1, w));
                t += 1;
            }
            Some(literal) if one(literal, word) => {
                t += 1;
                w += 1;
            }
            // A mismatch: the last star takes one more word, or nothing
            // can.
            Some(_) | None => match star {
                Some((after, run_end)) => {
                    t = after;
                    w = run_end + 1;
                    star = Some((after, run_end + 1));
                }
                None => return false,
            },
        }
    }
    template
        .get(t..)
        .is_some_and(|rest| rest.iter().all(|word| word == "*"))
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
                    matcher: compile_rule(index, rule)?,
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

    /// Does the template rule apply? An allowing (`pass`) template applies
    /// only when every unit matches one of this table's allowing templates
    /// or is inert on its own, and this one matches at least one unit; any
    /// other policy applies when any unit matches. Without units (not bash,
    /// or a command that was not fully analysed) no template applies.
    fn template_applies(
        &self,
        template: &Template,
        policy: RoutePolicy,
        units: Option<&[Unit]>,
    ) -> bool {
        let Some(units) = units.filter(|u| !u.is_empty()) else {
            return false;
        };
        let this = units.iter().any(|u| template.matches(u));
        match policy {
            RoutePolicy::Pass => {
                this && units.iter().all(|u| {
                    u.inert
                        || self.rules.iter().any(|r| match (&r.matcher, r.policy) {
                            (Matcher::Template(t), RoutePolicy::Pass) => t.matches(u),
                            (Matcher::Template(_) | Matcher::Regex(_), _) => false,
                        })
                })
            }
            RoutePolicy::Ai | RoutePolicy::Human | RoutePolicy::Never => this,
        }
    }

    /// This table's own answer: first matching rule, then the surface entry,
    /// then its default (a project table may have none).
    fn answer(
        &self,
        request: &Request,
        request_json: &mut Option<String>,
        units: Option<&[Unit]>,
    ) -> Option<Route> {
        for (index, rule) in self.rules.iter().enumerate() {
            let regex = match &rule.matcher {
                Matcher::Regex(regex) => regex,
                Matcher::Template(template) => {
                    if self.template_applies(template, rule.policy, units) {
                        return Some(Route {
                            policy: rule.policy,
                            reason: RouteReason::Rule {
                                index,
                                field: RuleField::Command,
                                note: rule.note.clone(),
                                origin: self.origin,
                            },
                        });
                    }
                    continue;
                }
            };
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
            if text.is_some_and(|t| regex.is_match(t)) {
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
        self.route_units(request, None)
    }

    /// Whether any table has a command-template rule (which reads the
    /// units of an analysed command).
    pub fn has_templates(&self) -> bool {
        let any = |t: &Table| {
            t.rules
                .iter()
                .any(|r| matches!(r.matcher, Matcher::Template(_)))
        };
        any(&self.trusted) || self.project.as_deref().is_some_and(any)
    }

    /// [`Router::route`] with the units the request's command would run,
    /// for the command-template rules.
    pub fn route_units(&self, request: &Request, units: Option<&[Unit]>) -> Route {
        let mut request_json = None;
        // INVARIANT: the trusted table always has a default, so this is the
        // trusted answer; the fallback is only there to avoid a panic path and
        // is the strictest policy.
        let mut route = self
            .trusted
            .answer(request, &mut request_json, units)
            .unwrap_or(Route {
                policy: RoutePolicy::Never,
                reason: RouteReason::Default {
                    origin: RuleOrigin::Trusted,
                },
            });
        if let Some(project) = &self.project
            && let Some(project_route) = project.answer(request, &mut request_json, units)
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
            pattern: Some(pattern.into()),
            command: None,
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

    /// The recursive reading `words_match` replaced: every split at every
    /// `*` (exponential, kept here as the reference).
    fn by_every_split(template: &[String], words: &[Option<String>]) -> bool {
        match template.split_first() {
            None => words.is_empty(),
            Some((star, rest)) if star == "*" => (0..=words.len()).any(|skip| {
                words
                    .get(skip..)
                    .is_some_and(|tail| by_every_split(rest, tail))
            }),
            Some((literal, rest)) => match words.split_first() {
                Some((Some(word), tail)) => {
                    let same = if literal.contains('*') {
                        glob_matches(literal, word)
                    } else {
                        literal == word
                    };
                    same && by_every_split(rest, tail)
                }
                Some((None, _)) | None => false,
            },
        }
    }

    #[test]
    fn templates_match_as_every_split_would() {
        let vocabulary = ["a", "b", "*", "a*", "*b"];
        let subjects = ["a", "b", "ab", "ba"];
        let mut seed = 7u64;
        let mut next = |n: usize| {
            seed = seed.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
            usize::try_from(seed >> 33).unwrap() % n
        };
        for _ in 0..20_000 {
            let template: Vec<String> = (0..next(6))
                .map(|_| vocabulary[next(vocabulary.len())].to_owned())
                .collect();
            let words: Vec<Option<String>> = (0..next(7))
                .map(|_| match next(9) {
                    0 => None,
                    k => Some(subjects[k % subjects.len()].to_owned()),
                })
                .collect();
            assert_eq!(
                words_match(&template, &words),
                by_every_split(&template, &words),
                "{template:?} {words:?}"
            );
        }
    }

    #[test]
    fn many_stars_against_many_words_are_linear() {
        let template: Vec<String> = std::iter::repeat_n("*".to_owned(), 12)
            .chain(["never".to_owned()])
            .collect();
        let words: Vec<Option<String>> = (0..10_000).map(|k| Some(format!("w{k}"))).collect();
        let started = std::time::Instant::now();
        assert!(!words_match(&template, &words));
        // The recursion never finished; one pass is a few milliseconds.
        assert!(started.elapsed() < std::time::Duration::from_secs(5));
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
