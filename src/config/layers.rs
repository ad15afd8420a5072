//! The trusted layers: package defaults, the user overlay, `--config FILE`
//! and `VOUCH_<SECTION>__<KEY>` environment variables, folded in that order.
//!
//! The fold is done on TOML tables by hand rather than with the `config`
//! crate: that crate lowercases keys and replaces arrays whole, and it does
//! not say which layer set a value. Here every leaf key remembers its source,
//! which `vouch config show` prints and error messages rely on.
//!
//! Within trusted layers a later layer replaces a value, including the whole
//! `routing.rules` list (the owner may remove a rule they no longer want);
//! `routing.surfaces` merges per surface. Only the project overlay is
//! restricted (see `tighten`).

use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use toml::{Table, Value};

use super::spec::{self, Kind};
use super::validate::{cross_field, cross_field_problem, validate_layer};
use super::{Config, ConfigError, DEFAULT_TOML};
use crate::config::routing::Router;
use crate::paths::Paths;

/// Largest accepted configuration file, in bytes.
pub const MAX_CONFIG_FILE_BYTES: u64 = 1024 * 1024;

/// Environment variables with the `VOUCH_` prefix that are not configuration.
const NON_CONFIG_VARS: &[&str] = &[
    "VOUCH_HOME",
    "VOUCH_ALLOW_UNTRUSTED_DEV",
    "VOUCH_REVIEWER_API_KEY",
    "VOUCH_STORE_URL",
    // `vouch hook --server`'s adapter token.
    "VOUCH_ADAPTER_TOKEN",
];

/// Which layer set a key's effective value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Source {
    Default,
    User(PathBuf),
    CliConfig(PathBuf),
    Env(String),
    /// A value the `vouch hook` command line sets (its deadline).
    HookCommandLine(String),
    Project(PathBuf),
}

impl fmt::Display for Source {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Source::Default => f.write_str("default"),
            Source::User(path) => write!(f, "user {}", path.display()),
            Source::CliConfig(path) => write!(f, "--config {}", path.display()),
            Source::Env(var) => write!(f, "env {var}"),
            Source::HookCommandLine(flag) => write!(f, "hook command line {flag}"),
            Source::Project(path) => write!(f, "project {}", path.display()),
        }
    }
}

impl Source {
    /// How error messages name the layer.
    pub fn layer_name(&self) -> String {
        match self {
            Source::Default => "<defaults>".to_owned(),
            Source::User(path) | Source::CliConfig(path) | Source::Project(path) => {
                path.display().to_string()
            }
            Source::Env(var) => format!("environment variable `{var}`"),
            Source::HookCommandLine(flag) => format!("hook command line `{flag}`"),
        }
    }
}

/// A validated, effective configuration with the source of every leaf and
/// the compiled router. Cheap to clone.
#[derive(Debug, Clone)]
pub struct LoadedConfig {
    pub config: Arc<Config>,
    /// Leaf key (`reviewer.timeout_ms`, `routing.surfaces.read`,
    /// `routing.rules[0]`) → the layer that set it.
    pub sources: Arc<BTreeMap<String, Source>>,
    /// Routing compiled from this configuration.
    pub router: Router,
    /// The trusted files that were read (user overlay if present, `--config`).
    pub trusted_files: Vec<PathBuf>,
    /// Where trusted files are looked for, present or not: the user overlay
    /// path (creating it would make it trusted on the next load) and the
    /// `--config` file.
    pub trusted_locations: Vec<PathBuf>,
    /// The folded table, kept for the project fold and `config show`.
    pub(crate) table: Arc<Table>,
}

impl LoadedConfig {
    /// The first trusted file location (present or not), or the running
    /// executable, that lies inside `project_root`, where the agent could
    /// have written it. The caller refuses to decide for such a project
    /// (design §6.1 `trust-boundary`) unless `VOUCH_ALLOW_UNTRUSTED_DEV=1`.
    ///
    /// Paths are compared as given and with symlinks resolved (for a file
    /// that does not exist yet, through its parent), so a symlinked home or
    /// project directory does not hide the overlap.
    pub fn trusted_file_inside(&self, project_root: &Path) -> Option<PathBuf> {
        let roots = [project_root.to_path_buf(), resolved(project_root)];
        // `trusted_locations` already holds each file's resolved form (made
        // once at load), so a request costs one resolution: its root's.
        self.trusted_locations
            .iter()
            .map(PathBuf::as_path)
            .chain(crate::paths::current_exe())
            .find(|file| roots.iter().any(|root| file.starts_with(root)))
            .map(Path::to_path_buf)
    }

    /// The source of one leaf key.
    pub fn source_of(&self, key: &str) -> Option<&Source> {
        self.sources.get(key)
    }
}

/// Adds each location's symlink-resolved form (when it differs), so the
/// per-request trust check compares paths without touching the filesystem.
fn with_resolved_forms(locations: &mut Vec<PathBuf>) {
    let extra: Vec<PathBuf> = locations
        .iter()
        .map(|p| resolved(p))
        .filter(|r| !locations.contains(r))
        .collect();
    locations.extend(extra);
}

/// `path` with symlinks resolved; for a missing file, its resolved parent
/// joined with its name; else `path` unchanged.
fn resolved(path: &Path) -> PathBuf {
    if let Ok(p) = std::fs::canonicalize(path) {
        return p;
    }
    match (path.parent(), path.file_name()) {
        (Some(parent), Some(name)) => std::fs::canonicalize(parent)
            .map(|p| p.join(name))
            .unwrap_or_else(|_| path.to_path_buf()),
        _ => path.to_path_buf(),
    }
}

/// A table being folded, with the source of each leaf.
pub(crate) struct Fold {
    pub table: Table,
    pub sources: BTreeMap<String, Source>,
}

impl Fold {
    /// Merges one validated layer.
    pub fn merge(&mut self, layer: &Table, source: &Source) {
        for (section, body) in layer {
            let Value::Table(body) = body else { continue };
            let mut target = take_table(&mut self.table, section);
            for (key, value) in body {
                let full = format!("{section}.{key}");
                match (section.as_str(), key.as_str(), value) {
                    ("routing", "surfaces", Value::Table(entries)) => {
                        let mut surfaces = take_table(&mut target, key);
                        for (name, policy) in entries {
                            surfaces.insert(name.clone(), policy.clone());
                            self.sources
                                .insert(format!("{full}.{name}"), source.clone());
                        }
                        target.insert(key.clone(), Value::Table(surfaces));
                        self.sources.insert(full, source.clone());
                    }
                    ("routing", "rules", Value::Array(rules)) => {
                        target.insert(key.clone(), value.clone());
                        self.sources.retain(|k, _| !k.starts_with("routing.rules["));
                        for index in 0..rules.len() {
                            self.sources
                                .insert(format!("routing.rules[{index}]"), source.clone());
                        }
                        self.sources.insert(full, source.clone());
                    }
                    _ => {
                        target.insert(key.clone(), value.clone());
                        self.sources.insert(full, source.clone());
                    }
                }
            }
            self.table.insert(section.clone(), Value::Table(target));
        }
    }

    /// Converts the folded table into the typed configuration.
    pub fn to_config(&self, layer: &str) -> Result<Config, ConfigError> {
        Value::Table(self.table.clone())
            .try_into()
            .map_err(|e: toml::de::Error| ConfigError::Parse {
                file: layer.to_owned(),
                message: e.message().to_owned(),
            })
    }
}

/// Removes and returns the sub-table `key` (empty when absent); the caller
/// puts it back. Taking it out avoids holding a borrow into the parent.
fn take_table(table: &mut Table, key: &str) -> Table {
    match table.remove(key) {
        Some(Value::Table(t)) => t,
        _ => Table::new(),
    }
}

/// Reads and parses one configuration file. `Ok(None)` when it is absent
/// and not `required`.
pub(crate) fn read_layer_file(path: &Path, required: bool) -> Result<Option<Table>, ConfigError> {
    let file = path.display().to_string();
    // The project's file is the agent's: never a FIFO in its place, and
    // the size and kind are the opened file's (`open_regular`).
    let opened = match crate::paths::open_regular(path) {
        Ok(opened) => opened,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound && !required => return Ok(None),
        Err(e) => {
            return Err(ConfigError::Io {
                file,
                message: e.to_string(),
            });
        }
    };
    let len = opened
        .metadata()
        .map(|m| m.len())
        .map_err(|e| ConfigError::Io {
            file: file.clone(),
            message: e.to_string(),
        })?;
    if len > MAX_CONFIG_FILE_BYTES {
        return Err(ConfigError::Io {
            file,
            message: format!(
                "file is {len} bytes, larger than the limit of {MAX_CONFIG_FILE_BYTES} bytes"
            ),
        });
    }
    let mut text = String::new();
    std::io::Read::read_to_string(
        &mut std::io::Read::take(opened, MAX_CONFIG_FILE_BYTES.saturating_add(1)),
        &mut text,
    )
    .map_err(|e| ConfigError::Io {
        file: file.clone(),
        message: e.to_string(),
    })?;
    if u64::try_from(text.len()).map_or(true, |n| n > MAX_CONFIG_FILE_BYTES) {
        // It grew while it was read: never parse a part of it.
        return Err(ConfigError::Io {
            file,
            message: format!("file grew past the limit of {MAX_CONFIG_FILE_BYTES} bytes"),
        });
    }
    parse_layer(&file, &text).map(Some)
}

/// Parses TOML text into a layer table.
pub(crate) fn parse_layer(file: &str, text: &str) -> Result<Table, ConfigError> {
    toml::from_str::<Table>(text).map_err(|e| ConfigError::Parse {
        file: file.to_owned(),
        message: e.to_string().trim_end().to_owned(),
    })
}

/// The process environment for [`load_trusted`]. A `VOUCH_` variable that
/// is not valid UTF-8 is an error rather than silently skipped.
pub fn process_env() -> Result<Vec<(String, String)>, ConfigError> {
    let mut out = Vec::new();
    for (key, value) in std::env::vars_os() {
        let key = key.to_string_lossy().into_owned();
        if !key.starts_with("VOUCH_") {
            continue;
        }
        let value = value.into_string().map_err(|_| ConfigError::Env {
            var: key.clone(),
            problem: "value is not valid UTF-8".to_owned(),
        })?;
        out.push((key, value));
    }
    Ok(out)
}

/// Loads the trusted layers. `env` is the environment to consult (tests pass
/// their own; the CLI passes [`process_env`]).
pub fn load_trusted<I>(
    paths: &Paths,
    cli_config: Option<&Path>,
    env: I,
) -> Result<LoadedConfig, ConfigError>
where
    I: IntoIterator<Item = (String, String)>,
{
    let mut fold = Fold {
        table: Table::new(),
        sources: BTreeMap::new(),
    };
    let mut trusted_files = Vec::new();
    let mut trusted_locations = vec![paths.user_config.clone()];

    let defaults = parse_layer("<defaults>", DEFAULT_TOML)?;
    apply(&mut fold, &defaults, &Source::Default)?;

    if let Some(user) = read_layer_file(&paths.user_config, false)? {
        apply(&mut fold, &user, &Source::User(paths.user_config.clone()))?;
        trusted_files.push(paths.user_config.clone());
    }
    if let Some(path) = cli_config {
        trusted_locations.push(path.to_path_buf());
        // INVARIANT: `required = true` never yields `Ok(None)`.
        if let Some(cli) = read_layer_file(path, true)? {
            apply(&mut fold, &cli, &Source::CliConfig(path.to_path_buf()))?;
            trusted_files.push(path.to_path_buf());
        }
    }

    let mut vars: Vec<(String, String)> = env
        .into_iter()
        .filter(|(k, _)| k.starts_with("VOUCH_"))
        .collect();
    vars.sort();
    let ignored = ignored_vars(&fold.table, &vars);
    with_resolved_forms(&mut trusted_locations);
    // The environment is one layer: each variable is validated alone, the
    // cross-field rules once all are merged (so `…__WINDOW_DENIALS` and
    // `…__WINDOW_SIZE` may be raised together), naming the variable that set
    // the offending key.
    for (var, raw) in &vars {
        if ignored.iter().any(|i| i == var) {
            continue;
        }
        if let Some(layer) = env_layer(var, raw)? {
            let source = Source::Env(var.clone());
            validate_layer(&source.layer_name(), &layer)?;
            fold.merge(&layer, &source);
        }
    }
    cross_field_problem(&fold.table).map_err(|p| {
        let layer = fold
            .sources
            .get(&p.key)
            .map_or_else(|| "environment".to_owned(), Source::layer_name);
        p.in_layer(&layer)
    })?;

    let config = fold.to_config("effective configuration")?;
    let router = Router::new(&config.routing).map_err(|e| e.in_layer("effective configuration"))?;
    Ok(LoadedConfig {
        config: Arc::new(config),
        sources: Arc::new(fold.sources),
        router,
        trusted_files,
        trusted_locations,
        table: Arc::new(fold.table),
    })
}

/// Validates, merges and re-checks cross-field rules for one layer.
fn apply(fold: &mut Fold, layer: &Table, source: &Source) -> Result<(), ConfigError> {
    let name = source.layer_name();
    validate_layer(&name, layer)?;
    fold.merge(layer, source);
    cross_field(&name, &fold.table)
}

/// Variables that are never configuration: the fixed set, plus whatever
/// `reviewer.api_key_env` and `store.url_env` name (before or in the
/// environment layer), since a user may keep the key or the URL in any
/// `VOUCH_…` variable.
pub(super) fn ignored_vars(table: &Table, vars: &[(String, String)]) -> Vec<String> {
    let mut ignored: Vec<String> = NON_CONFIG_VARS.iter().map(|s| (*s).to_owned()).collect();
    for (section, key) in [("reviewer", "api_key_env"), ("store", "url_env")] {
        if let Some(name) = table
            .get(section)
            .and_then(|r| r.get(key))
            .and_then(Value::as_str)
        {
            ignored.push(name.to_owned());
        }
    }
    for (var, value) in vars {
        if var == "VOUCH_REVIEWER__API_KEY_ENV" || var == "VOUCH_STORE__URL_ENV" {
            ignored.push(value.clone());
        }
    }
    ignored
}

/// Turns one `VOUCH_…` variable into a one-key layer. `Ok(None)` for a
/// variable that is not configuration-shaped (neither `__` nor a section
/// prefix), so other tools' `VOUCH_…` variables are left alone, while a typo
/// such as `VOUCH_REVIEWER_TIMEOUT_MS` is an error.
pub(super) fn env_layer(var: &str, raw: &str) -> Result<Option<Table>, ConfigError> {
    let Some(rest) = var.strip_prefix("VOUCH_") else {
        return Ok(None);
    };
    let lower = rest.to_ascii_lowercase();
    let err = |problem: String| ConfigError::Env {
        var: var.to_owned(),
        problem,
    };
    if !lower.contains("__") {
        let names_section = spec::sections().any(|s| {
            lower
                .strip_prefix(s)
                .is_some_and(|after| after.starts_with('_'))
        });
        if names_section {
            return Err(err(
                "not a configuration variable: use `VOUCH_<SECTION>__<KEY>` with two underscores"
                    .to_owned(),
            ));
        }
        return Ok(None);
    }
    let parts: Vec<&str> = lower.split("__").collect();
    let (section, key, entry) = match parts.as_slice() {
        [section, key] => (*section, *key, None),
        [section, key, entry] if *section == "routing" && *key == "surfaces" => {
            (*section, *key, Some(*entry))
        }
        _ => {
            return Err(err(
                "not a configuration key: expected `VOUCH_<SECTION>__<KEY>` (or `VOUCH_ROUTING__SURFACES__<NAME>`)"
                    .to_owned(),
            ));
        }
    };
    if !spec::sections().any(|s| s == section) {
        return Err(err(format!("unknown section `{section}`")));
    }
    let Some(key_spec) = spec::lookup(section, key) else {
        return Err(err(format!("unknown key `{section}.{key}`")));
    };
    let value = match entry {
        Some(name) => {
            let mut surfaces = Table::new();
            surfaces.insert(
                name.to_owned(),
                parse_env_value(Kind::Enum(spec::ROUTE_POLICIES), raw),
            );
            Value::Table(surfaces)
        }
        None => parse_env_value(key_spec.kind, raw),
    };
    let mut body = Table::new();
    body.insert(key.to_owned(), value);
    let mut layer = Table::new();
    layer.insert(section.to_owned(), Value::Table(body));
    Ok(Some(layer))
}

/// Parses an environment value as a TOML value when that is what the key
/// holds; string keys take the text as is (a quoted TOML string is
/// unquoted), so `VOUCH_REVIEWER__MODEL=123` is the model `123`.
fn parse_env_value(kind: Kind, raw: &str) -> Value {
    let as_toml = || {
        toml::from_str::<Table>(&format!("v = {raw}"))
            .ok()
            .and_then(|mut t| t.remove("v"))
    };
    match kind {
        Kind::Enum(_) | Kind::Text(_) => match as_toml() {
            Some(Value::String(s)) => Value::String(s),
            _ => Value::String(raw.to_owned()),
        },
        Kind::Int { .. }
        | Kind::Price
        | Kind::Bool
        | Kind::Rules
        | Kind::Surfaces
        | Kind::Paths => as_toml().unwrap_or_else(|| Value::String(raw.to_owned())),
    }
}

impl LoadedConfig {
    /// A loaded configuration from a typed [`Config`] built in code (tests,
    /// tools): validated exactly like a trusted layer, every value reported
    /// as coming from the defaults.
    pub fn from_config(config: &Config) -> Result<LoadedConfig, ConfigError> {
        let layer = "<programmatic configuration>";
        let table = Table::try_from(config).map_err(|e| ConfigError::Parse {
            file: layer.to_owned(),
            message: e.to_string(),
        })?;
        let mut fold = Fold {
            table: Table::new(),
            sources: BTreeMap::new(),
        };
        apply(&mut fold, &table, &Source::Default)?;
        let config = fold.to_config(layer)?;
        let router = Router::new(&config.routing).map_err(|e| e.in_layer(layer))?;
        Ok(LoadedConfig {
            config: Arc::new(config),
            sources: Arc::new(fold.sources),
            router,
            trusted_files: Vec::new(),
            trusted_locations: Vec::new(),
            table: Arc::new(fold.table),
        })
    }
}
