//! Property: for random trusted configurations and random project overlays,
//! the project fold either fails or yields a configuration that is never
//! looser than its base on any key, and whose routing answers are never
//! looser on random requests.
//!
//! The looseness check is written here from the key table's directions
//! (`spec::KEYS`), independently of the fold's own comparison.

use std::path::Path;

use proptest::prelude::*;
use toml::{Table, Value};
use vouch::config::spec::{KEYS, Kind, ROUTE_POLICIES, RULE_FIELDS, Tighten};
use vouch::config::tighten::apply_project;
use vouch::config::{LoadedConfig, load_trusted};
use vouch::paths::Paths;
use vouch::request::Request;

const PATTERNS: &[&str] = &[
    "^git",
    "^git push",
    "^rm",
    "curl",
    "^ls$",
    ".*",
    "^mcp__",
    "^read$",
    "env",
    "\"path\"",
];
const SURFACES: &[&str] = &[
    "bash", "read", "write", "network", "mcp", "git_push", "my_tool",
];
const COMMANDS: &[&str] = &[
    "git push origin main",
    "git status",
    "rm -rf build",
    "curl http://x",
    "ls",
    "cat .env",
    "read",
];
const TOOLS: &[&str] = &["Bash", "mcp__prod__q", "Read"];
const PATHS: &[&str] = &["src/a.rs", ".env", "/home/dev/.ssh/id_rsa", "README.md"];

fn pick<'a>(list: &[&'a str], seed: u64) -> &'a str {
    list[(seed % list.len() as u64) as usize]
}

fn legal(kind: Kind, seed: u64) -> Option<Value> {
    match kind {
        Kind::Int { min, max } => {
            let span = (max - min + 1) as u64;
            Some(Value::Integer(min + (seed % span) as i64))
        }
        Kind::Bool => Some(Value::Boolean(seed.is_multiple_of(2))),
        Kind::Price => Some(Value::Float((seed % 1000) as f64 / 8.0)),
        Kind::Enum(values) => Some(Value::String(pick(values, seed).to_owned())),
        Kind::Paths => Some(Value::Array(
            PATHS
                .iter()
                .take((seed % 3) as usize)
                .map(|p| Value::String((*p).to_owned()))
                .collect(),
        )),
        Kind::Text(_) | Kind::Rules | Kind::Surfaces => None,
    }
}

fn rule(seed: u64) -> Value {
    let mut t = Table::new();
    let policy = pick(ROUTE_POLICIES, seed / 16);
    let field = pick(RULE_FIELDS, seed / 64);
    // A regex may not pass on the raw command (or request): such a rule is
    // a command template instead, as the configuration requires.
    if policy == "pass" && matches!(field, "command" | "request") {
        t.insert(
            "command".into(),
            pick(&["git status *", "npm test *", "ls"], seed).into(),
        );
    } else {
        t.insert("pattern".into(), pick(PATTERNS, seed).into());
        t.insert("field".into(), field.into());
    }
    t.insert("policy".into(), policy.into());
    Value::Table(t)
}

/// Environment variables that build a random, legal trusted configuration.
fn trusted_env(seeds: &[u64]) -> Vec<(String, String)> {
    let mut env = Vec::new();
    for (spec, seed) in KEYS.iter().zip(seeds) {
        if seed % 3 == 0 {
            continue; // keep the default
        }
        let var = format!("VOUCH_{}", spec.key.replace('.', "__").to_uppercase());
        let value = match spec.kind {
            Kind::Rules => Value::Array((0..seed % 4).map(|i| rule(seed / 7 + i * 31)).collect()),
            Kind::Surfaces => {
                for (i, s) in SURFACES.iter().enumerate() {
                    if (seed >> i) & 1 == 1 {
                        env.push((
                            format!("VOUCH_ROUTING__SURFACES__{}", s.to_uppercase()),
                            pick(ROUTE_POLICIES, seed / (i as u64 + 3)).to_owned(),
                        ));
                    }
                }
                continue;
            }
            other => match legal(other, *seed) {
                Some(v) => v,
                None => continue,
            },
        };
        let text = match &value {
            Value::String(s) => s.clone(),
            v => v.to_string(),
        };
        env.push((var, text));
    }
    // Keep the cross-field rule satisfiable: the window is at least the
    // denials it counts.
    env.retain(|(k, _)| k != "VOUCH_BREAKER__WINDOW_DENIALS" && k != "VOUCH_BREAKER__WINDOW_SIZE");
    env.push((
        "VOUCH_BREAKER__WINDOW_SIZE".into(),
        (200 + seeds[0] % 800).to_string(),
    ));
    env.push((
        "VOUCH_BREAKER__WINDOW_DENIALS".into(),
        (1 + seeds[1] % 200).to_string(),
    ));
    env
}

/// A random overlay: any key (trusted-only ones included), values legal or
/// one step out of range, routing rules and surfaces with any policy.
fn overlay(entries: &[(usize, u64)]) -> Table {
    let mut table = Table::new();
    for (index, seed) in entries {
        let spec = &KEYS[index % KEYS.len()];
        let (section, key) = spec.key.split_once('.').unwrap();
        let value = match spec.kind {
            Kind::Int { min, max } if seed % 11 == 0 => {
                Value::Integer(if seed % 2 == 0 { max + 1 } else { min - 1 })
            }
            Kind::Rules => {
                Value::Array((0..1 + seed % 3).map(|i| rule(seed / 5 + i * 17)).collect())
            }
            Kind::Surfaces => {
                let mut t = Table::new();
                t.insert(
                    pick(SURFACES, *seed).into(),
                    pick(ROUTE_POLICIES, seed / 8).into(),
                );
                Value::Table(t)
            }
            Kind::Text(_) => Value::String("https://other.example/v1".into()),
            other => legal(other, *seed).unwrap(),
        };
        let body = table
            .entry(section.to_owned())
            .or_insert_with(|| Value::Table(Table::new()));
        body.as_table_mut().unwrap().insert(key.to_owned(), value);
    }
    table
}

fn rank(kind: Kind, v: &Value) -> i64 {
    match (kind, v) {
        (Kind::Int { .. }, Value::Integer(n)) => *n,
        (Kind::Enum(values), Value::String(s)) => {
            values.iter().position(|x| x == s).unwrap() as i64
        }
        (Kind::Bool, Value::Boolean(b)) => i64::from(*b),
        other => panic!("no rank for {other:?}"),
    }
}

fn policy_rank(v: &Value) -> i64 {
    rank(Kind::Enum(ROUTE_POLICIES), v)
}

fn as_table(loaded: &LoadedConfig) -> Table {
    Table::try_from(&*loaded.config).unwrap()
}

fn assert_not_looser(base: &Table, new: &Table) {
    for spec in KEYS {
        let (section, key) = spec.key.split_once('.').unwrap();
        let (b, n) = (&base[section][key], &new[section][key]);
        match spec.tighten {
            Tighten::TrustedOnly => assert_eq!(b, n, "{}", spec.key),
            Tighten::Lower => assert!(
                rank(spec.kind, n) <= rank(spec.kind, b),
                "{}: {b} -> {n}",
                spec.key
            ),
            Tighten::Higher => assert!(
                rank(spec.kind, n) >= rank(spec.kind, b),
                "{}: {b} -> {n}",
                spec.key
            ),
            Tighten::DisableOnly => assert!(
                !n.as_bool().unwrap() || b.as_bool().unwrap(),
                "{}",
                spec.key
            ),
            Tighten::AppendRules => {
                let (b, n) = (b.as_array().unwrap(), n.as_array().unwrap());
                assert!(n.len() >= b.len());
                assert_eq!(&n[..b.len()], &b[..], "trusted rules must be kept in order");
                for added in &n[b.len()..] {
                    assert_ne!(added["policy"].as_str(), Some("pass"));
                }
            }
            Tighten::StricterSurfaces => {
                let base_default = &base["routing"]["default"];
                let (b, n) = (b.as_table().unwrap(), n.as_table().unwrap());
                for (name, policy) in b {
                    let np = n.get(name).expect("a trusted surface entry was dropped");
                    assert!(policy_rank(np) >= policy_rank(policy), "surface {name}");
                }
                for (name, policy) in n {
                    let floor = b.get(name).unwrap_or(base_default);
                    assert!(policy_rank(policy) >= policy_rank(floor), "surface {name}");
                }
            }
        }
    }
}

fn request(surface: u64, command: u64, tool: u64, path: u64) -> Request {
    let mut v = serde_json::json!({"session_id": "s", "surface": pick(SURFACES, surface)});
    if !command.is_multiple_of(5) {
        v["command"] = pick(COMMANDS, command).into();
    }
    if !tool.is_multiple_of(3) {
        v["tool"] = pick(TOOLS, tool).into();
    }
    if path.is_multiple_of(2) {
        v["path"] = pick(PATHS, path / 2).into();
    }
    Request::from_slice(v.to_string().as_bytes()).unwrap()
}

fn trusted(seeds: &[u64], home: &Path) -> LoadedConfig {
    let home = home.to_str().unwrap().to_owned();
    let paths = Paths::from_lookup(move |k| (k == "VOUCH_HOME").then(|| home.clone())).unwrap();
    load_trusted(&paths, None, trusted_env(seeds)).unwrap()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn project_fold_is_never_looser(
        base_seeds in prop::collection::vec(any::<u64>(), KEYS.len()),
        entries in prop::collection::vec((any::<usize>(), any::<u64>()), 0..8),
        requests in prop::collection::vec((any::<u64>(), any::<u64>(), any::<u64>(), any::<u64>()), 16),
    ) {
        let home = tempfile::tempdir().unwrap();
        let base = trusted(&base_seeds, home.path());
        let table = overlay(&entries);
        let result = apply_project(&base, Path::new("/p/.vouch/config.toml"), &table);
        if let Ok(project) = result {
            assert_not_looser(&as_table(&base), &as_table(&project));
            for (s, c, t, p) in &requests {
                let req = request(*s, *c, *t, *p);
                let before = base.router.route(&req);
                let after = project.router.route(&req);
                prop_assert!(
                    after.policy.strictness() >= before.policy.strictness(),
                    "{req:?}: {before:?} -> {after:?}"
                );
            }
        }
    }

    /// Overlays made only of tightening moves are always accepted, so the
    /// property above is not vacuous.
    #[test]
    fn pure_tightening_is_accepted(
        base_seeds in prop::collection::vec(any::<u64>(), KEYS.len()),
        keys in prop::collection::vec(any::<usize>(), 1..6),
    ) {
        let home = tempfile::tempdir().unwrap();
        let base = trusted(&base_seeds, home.path());
        let base_table = as_table(&base);
        let mut table = Table::new();
        for index in keys {
            let spec = &KEYS[index % KEYS.len()];
            let (section, key) = spec.key.split_once('.').unwrap();
            let b = &base_table[section][key];
            let value = match (spec.tighten, spec.kind) {
                (Tighten::Lower, Kind::Int { min, .. }) => Value::Integer((rank(spec.kind, b) - 1).max(min)),
                (Tighten::Higher, Kind::Int { max, .. }) => Value::Integer((rank(spec.kind, b) + 1).min(max)),
                (Tighten::Lower, Kind::Enum(values)) => Value::String(values[0].into()),
                (Tighten::Higher, Kind::Enum(values)) => Value::String(values[values.len() - 1].into()),
                (Tighten::DisableOnly, _) => Value::Boolean(false),
                (Tighten::AppendRules, _) => Value::Array(vec![rule(2 * 16 + 1)]),
                _ => continue,
            };
            let body = table.entry(section.to_owned()).or_insert_with(|| Value::Table(Table::new()));
            body.as_table_mut().unwrap().insert(key.to_owned(), value);
        }
        let result = apply_project(&base, Path::new("/p/.vouch/config.toml"), &table);
        prop_assert!(result.is_ok(), "{table}: {:?}", result.err());
    }
}
