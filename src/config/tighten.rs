//! The tighten-only project overlay (design §3).
//!
//! `<project root>/.vouch/config.toml` lives where the agent works, so the
//! agent may have written it. It may therefore only make vouch stricter than
//! the trusted configuration: every key moves only in the direction the key
//! table (`spec::KEYS`) gives it, and any other move is a
//! [`ConfigError::Loosening`] naming the key. The fold is done here, key by
//! key, so no array or table is ever replaced in a way that drops a stricter
//! trusted value.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use toml::{Table, Value};

use super::layers::{Fold, LoadedConfig, Source, env_layer, ignored_vars, read_layer_file};
use super::spec::{self, KeySpec, Kind, ROUTE_POLICIES, Tighten};
use super::validate::{cross_field, validate_layer};
use super::{ConfigError, RoutePolicy, RoutingRule};
use crate::config::routing::ProjectRouting;

/// The project overlay's path under a project root.
pub const PROJECT_OVERLAY: &str = ".vouch/config.toml";

/// The effective configuration for one request's project.
#[derive(Debug, Clone)]
pub struct ProjectConfig {
    /// The project root (`None` when the request had no `cwd`).
    pub root: Option<PathBuf>,
    /// The overlay file, when one exists.
    pub overlay: Option<PathBuf>,
    /// The trusted configuration tightened by the overlay, or why the
    /// overlay was rejected. On `Err` the caller disables the reviewer for
    /// this request and answers with the trusted `decision.failure_mode`,
    /// stage `config_error`, the error in the rationale.
    pub effective: Result<LoadedConfig, ConfigError>,
}

/// The nearest ancestor of `cwd` (itself included) holding `.git` (a
/// directory, or a file for worktrees and submodules); else `cwd`.
pub fn project_root(cwd: &Path) -> PathBuf {
    cwd.ancestors()
        .find(|dir| std::fs::symlink_metadata(dir.join(".git")).is_ok())
        .unwrap_or(cwd)
        .to_path_buf()
}

/// The effective configuration for a request whose working directory is
/// `cwd`. Reads `<project root>/.vouch/config.toml` when it exists.
pub fn for_project(trusted: &LoadedConfig, cwd: Option<&Path>) -> ProjectConfig {
    let Some(cwd) = cwd else {
        return ProjectConfig {
            root: None,
            overlay: None,
            effective: Ok(trusted.clone()),
        };
    };
    overlay_at(trusted, project_root(cwd))
}

/// The effective configuration for a known project root.
pub(crate) fn overlay_at(trusted: &LoadedConfig, root: PathBuf) -> ProjectConfig {
    let file = root.join(PROJECT_OVERLAY);
    let (overlay, effective) = match read_layer_file(&file, false) {
        Ok(None) => (None, Ok(trusted.clone())),
        Ok(Some(table)) => (Some(file.clone()), apply_project(trusted, &file, &table)),
        Err(e) => (Some(file.clone()), Err(e)),
    };
    ProjectConfig {
        root: Some(root),
        overlay,
        effective,
    }
}

/// Folds a parsed project overlay into the trusted configuration.
pub fn apply_project(
    trusted: &LoadedConfig,
    file: &Path,
    overlay: &Table,
) -> Result<LoadedConfig, ConfigError> {
    apply_overlay(trusted, Source::Project(file.to_path_buf()), overlay)
}

/// Folds an untrusted layer other than the project file (the environment of
/// `vouch hook`, which the project can set) tighten-only, and returns a
/// configuration that can be the trusted base of the later project fold:
/// when it touches routing, its router is rebuilt from the folded values, so
/// a second overlay does not replace this one's routing. Every value it sets is already at least
/// as strict as its base, so appending its rules to the trusted list never
/// loosens.
pub fn tighten_trusted(
    trusted: &LoadedConfig,
    source: Source,
    overlay: &Table,
) -> Result<LoadedConfig, ConfigError> {
    let layer = source.layer_name();
    let routing = overlay.contains_key("routing");
    let mut folded = apply_overlay(trusted, source, overlay)?;
    if routing {
        folded.router = crate::config::routing::Router::new(&folded.config.routing)
            .map_err(|e| e.in_layer(&layer))?;
    }
    Ok(folded)
}

/// Folds `VOUCH_<SECTION>__<KEY>` variables into `trusted` tighten-only,
/// one variable at a time (so an error names it), for `vouch hook`: there
/// the environment comes from the harness, which loads the project's `.env`
/// and project settings, so it may only make vouch stricter. Variables that
/// are not configuration (`VOUCH_HOME`, `VOUCH_ALLOW_UNTRUSTED_DEV`, the API
/// key) are skipped here; the caller ignores them too.
pub fn tighten_with_env<I>(trusted: &LoadedConfig, env: I) -> Result<LoadedConfig, ConfigError>
where
    I: IntoIterator<Item = (String, String)>,
{
    let mut vars: Vec<(String, String)> = env
        .into_iter()
        .filter(|(k, _)| k.starts_with("VOUCH_"))
        .collect();
    vars.sort();
    // Only the trusted value of `api_key_env` names a key variable here: an
    // environment that renamed it would be loosening anyway.
    let ignored = ignored_vars(&trusted.table, &[]);
    let mut folded = trusted.clone();
    for (var, raw) in &vars {
        if ignored.iter().any(|i| i == var) {
            continue;
        }
        if let Some(layer) = env_layer(var, raw)? {
            folded = tighten_trusted(&folded, Source::Env(var.clone()), &layer)?;
        }
    }
    Ok(folded)
}

fn apply_overlay(
    trusted: &LoadedConfig,
    source: Source,
    overlay: &Table,
) -> Result<LoadedConfig, ConfigError> {
    let layer = source.layer_name();
    validate_layer(&layer, overlay)?;
    let mut fold = Fold {
        table: (*trusted.table).clone(),
        sources: (*trusted.sources).clone(),
    };
    let mut routing = ProjectRouting::default();
    let loosening = |key: &str, problem: String| ConfigError::Loosening {
        file: layer.clone(),
        key: key.to_owned(),
        problem,
    };

    for (section, body) in overlay {
        let Value::Table(body) = body else { continue };
        for (key, value) in body {
            let full = format!("{section}.{key}");
            let Some(key_spec) = spec::lookup(section, key) else {
                // INVARIANT: validate_layer rejected unknown keys.
                return Err(loosening(&full, "unknown key".to_owned()));
            };
            let base = trusted.table.get(section).and_then(|s| s.get(key));
            match key_spec.tighten {
                Tighten::TrustedOnly => {
                    return Err(loosening(
                        &full,
                        "only a trusted layer (user file, `--config` or environment) may set it"
                            .to_owned(),
                    ));
                }
                Tighten::Lower | Tighten::Higher | Tighten::DisableOnly => {
                    check_scalar(key_spec, base, value).map_err(|p| loosening(&full, p))?;
                    set_leaf(&mut fold, section, key, value.clone(), &source);
                    if full == "routing.default" {
                        routing.default = policy_of(value);
                    } else if full == "routing.sensitive_reads" {
                        routing.sensitive_reads = policy_of(value);
                    }
                }
                Tighten::AppendRules => {
                    append_rules(&mut fold, value, &source, &mut routing)
                        .map_err(|(k, p)| loosening(&k, p))?;
                }
                Tighten::StricterSurfaces => {
                    tighten_surfaces(&mut fold, &trusted.table, value, &source, &mut routing)
                        .map_err(|(k, p)| loosening(&k, p))?;
                }
            }
        }
    }

    cross_field(&layer, &fold.table)?;
    let config = fold.to_config(&layer)?;
    let router = trusted
        .router
        .with_project(&routing)
        .map_err(|e| e.in_layer(&layer))?;
    Ok(LoadedConfig {
        config: Arc::new(config),
        sources: Arc::new(fold.sources),
        router,
        trusted_files: trusted.trusted_files.clone(),
        trusted_locations: trusted.trusted_locations.clone(),
        table: Arc::new(fold.table),
    })
}

/// The rank a value has on its key's scale: the integer itself, the enum
/// index, or 1 for `true`.
pub fn rank(kind: Kind, value: &Value) -> Option<i64> {
    match (kind, value) {
        (Kind::Int { .. }, Value::Integer(n)) => Some(*n),
        (Kind::Enum(values), Value::String(s)) => {
            spec::enum_rank(values, s).map(|i| i64::try_from(i).unwrap_or(i64::MAX))
        }
        (Kind::Bool, Value::Boolean(b)) => Some(i64::from(*b)),
        _ => None,
    }
}

/// Whether `new` is at least as strict as `base` for a scalar key, per the
/// key table. `TrustedOnly` keys only accept an unchanged value here (the
/// overlay fold rejects them before asking).
pub fn not_looser(key_spec: &KeySpec, base: &Value, new: &Value) -> bool {
    let (Some(b), Some(n)) = (rank(key_spec.kind, base), rank(key_spec.kind, new)) else {
        return base == new;
    };
    match key_spec.tighten {
        Tighten::Lower => n <= b,
        Tighten::Higher => n >= b,
        // `true` is 1: turning on is the loosening direction.
        Tighten::DisableOnly => n <= b,
        Tighten::TrustedOnly | Tighten::AppendRules | Tighten::StricterSurfaces => base == new,
    }
}

fn check_scalar(key_spec: &KeySpec, base: Option<&Value>, new: &Value) -> Result<(), String> {
    let Some(base) = base else {
        return Err("the trusted configuration has no value to compare with".to_owned());
    };
    if not_looser(key_spec, base, new) {
        return Ok(());
    }
    Err(match key_spec.tighten {
        Tighten::Lower => {
            format!("`{new}` is looser than the trusted `{base}`; a project may only lower it")
        }
        Tighten::Higher => format!(
            "`{new}` is looser than the trusted `{base}`; a project may only raise it (stricter)"
        ),
        Tighten::DisableOnly => "a project may only turn it off, never back on".to_owned(),
        Tighten::TrustedOnly | Tighten::AppendRules | Tighten::StricterSurfaces => {
            "a project may not change it".to_owned()
        }
    })
}

fn set_leaf(fold: &mut Fold, section: &str, key: &str, value: Value, source: &Source) {
    let mut layer = Table::new();
    let mut body = Table::new();
    body.insert(key.to_owned(), value);
    layer.insert(section.to_owned(), Value::Table(body));
    fold.merge(&layer, source);
}

fn policy_of(value: &Value) -> Option<RoutePolicy> {
    value.clone().try_into().ok()
}

/// Appends the project's rules after the trusted ones (for `config show`)
/// and hands them to the router as a separate table.
fn append_rules(
    fold: &mut Fold,
    value: &Value,
    source: &Source,
    routing: &mut ProjectRouting,
) -> Result<(), (String, String)> {
    let Value::Array(new_rules) = value else {
        return Err(("routing.rules".to_owned(), "expected an array".to_owned()));
    };
    let mut routing_table = match fold.table.remove("routing") {
        Some(Value::Table(t)) => t,
        _ => Table::new(),
    };
    let mut all = match routing_table.remove("rules") {
        Some(Value::Array(a)) => a,
        _ => Vec::new(),
    };
    let mut result = Ok(());
    for (index, rule) in new_rules.iter().enumerate() {
        let parsed: Result<RoutingRule, _> = rule.clone().try_into();
        let parsed = match parsed {
            Ok(r) => r,
            Err(e) => {
                result = Err((format!("routing.rules[{index}]"), e.to_string()));
                break;
            }
        };
        if parsed.policy == RoutePolicy::Pass {
            result = Err((
                format!("routing.rules[{index}].policy"),
                "a project may not add `pass` routing; only `ai`, `human` or `never`".to_owned(),
            ));
            break;
        }
        fold.sources
            .insert(format!("routing.rules[{}]", all.len()), source.clone());
        all.push(rule.clone());
        routing.rules.push(parsed);
    }
    routing_table.insert("rules".to_owned(), Value::Array(all));
    fold.table
        .insert("routing".to_owned(), Value::Table(routing_table));
    result
}

/// Each project surface entry must be at least as strict as what the
/// trusted configuration gives that surface (its entry, else the default);
/// `pass` is never accepted.
fn tighten_surfaces(
    fold: &mut Fold,
    trusted: &Table,
    value: &Value,
    source: &Source,
    routing: &mut ProjectRouting,
) -> Result<(), (String, String)> {
    let Value::Table(entries) = value else {
        return Err(("routing.surfaces".to_owned(), "expected a table".to_owned()));
    };
    let policy_kind = Kind::Enum(ROUTE_POLICIES);
    for (name, policy) in entries {
        let key = format!("routing.surfaces.{name}");
        let routing_table = trusted.get("routing");
        let floor = routing_table
            .and_then(|r| r.get("surfaces"))
            .and_then(|s| s.get(name))
            .or_else(|| routing_table.and_then(|r| r.get("default")))
            .cloned();
        let (Some(new_rank), Some(floor_rank)) = (
            rank(policy_kind, policy),
            floor.as_ref().and_then(|f| rank(policy_kind, f)),
        ) else {
            return Err((key, "not a routing policy".to_owned()));
        };
        if policy.as_str() == Some("pass") {
            return Err((
                key,
                "a project may not add `pass` routing; only `ai`, `human` or `never`".to_owned(),
            ));
        }
        if new_rank < floor_rank {
            return Err((
                key,
                format!(
                    "{policy} is looser than the trusted {}; a project may only make a surface stricter",
                    floor.map(|f| f.to_string()).unwrap_or_default()
                ),
            ));
        }
        let mut surfaces = Table::new();
        surfaces.insert(name.clone(), policy.clone());
        let mut body = Table::new();
        body.insert("surfaces".to_owned(), Value::Table(surfaces));
        let mut layer = Table::new();
        layer.insert("routing".to_owned(), Value::Table(body));
        fold.merge(&layer, source);
        if let Some(p) = policy_of(policy) {
            routing.surfaces.insert(name.clone(), p);
        }
    }
    Ok(())
}
