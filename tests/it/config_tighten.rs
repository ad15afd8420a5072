//! The tighten-only project overlay: every key's direction, the named
//! rules of design §3, and project routing that can only get stricter.

use std::path::{Path, PathBuf};

use toml::Value;
use vouch::config::spec::{KEYS, Kind, Tighten};
use vouch::config::tighten::apply_project;
use vouch::config::{
    ConfigError, LoadedConfig, RoutePolicy, Source, WithoutModel, for_project, load_trusted,
    render_show,
};
use vouch::paths::Paths;
use vouch::request::Request;

struct Fixture {
    dir: tempfile::TempDir,
    trusted: LoadedConfig,
}

impl Fixture {
    fn new(user: &str) -> Fixture {
        let dir = tempfile::tempdir().unwrap();
        let vh = dir.path().join("vh");
        std::fs::create_dir_all(&vh).unwrap();
        std::fs::write(vh.join("config.toml"), user).unwrap();
        let vh_str = vh.to_str().unwrap().to_owned();
        let paths =
            Paths::from_lookup(move |k| (k == "VOUCH_HOME").then(|| vh_str.clone())).unwrap();
        let trusted = load_trusted(&paths, None, Vec::new()).unwrap();
        Fixture { dir, trusted }
    }

    /// A git project with `.vouch/config.toml`; returns a nested cwd.
    fn project(&self, overlay: &str) -> PathBuf {
        let root = self.dir.path().join("proj");
        std::fs::create_dir_all(root.join(".git")).unwrap();
        std::fs::create_dir_all(root.join(".vouch")).unwrap();
        std::fs::create_dir_all(root.join("src/deep")).unwrap();
        std::fs::write(root.join(".vouch/config.toml"), overlay).unwrap();
        root.join("src/deep")
    }

    fn overlay_path(&self) -> PathBuf {
        self.dir.path().join("proj/.vouch/config.toml")
    }

    fn apply(&self, overlay: &str) -> Result<LoadedConfig, ConfigError> {
        let cwd = self.project(overlay);
        for_project(&self.trusted, Some(&cwd)).effective
    }
}

fn loosening_key(result: Result<LoadedConfig, ConfigError>) -> String {
    match result {
        Err(ConfigError::Loosening { key, .. }) => key,
        Err(other) => panic!("expected a loosening error, got {other}"),
        Ok(_) => panic!("expected a loosening error, got a config"),
    }
}

fn request(surface: &str, command: &str) -> Request {
    let v = serde_json::json!({"session_id": "s", "surface": surface, "command": command});
    Request::from_slice(v.to_string().as_bytes()).unwrap()
}

#[test]
fn lowering_is_applied_and_sourced_to_the_project() {
    let f = Fixture::new("");
    let loaded = f
        .apply(
            "[reviewer]\ntimeout_ms = 10000\nretries = 1\n[budget]\nmax_reviewer_input_tokens = 4096\n\
             [turn]\nmax_reviews = 5\n[decision]\nmax_auto_allow_risk = \"low\"\non_uncertain = \"deny\"\n\
             [breaker]\nwindow_size = 100\nconsecutive_denials = 2\naction = \"deny\"\n\
             [overrides]\nbreak_glass_enabled = false\n[audit]\nenabled = false\nretention_days = 30\n",
        )
        .unwrap();
    let c = &loaded.config;
    assert_eq!(c.reviewer.timeout_ms, 10_000);
    assert_eq!(c.reviewer.retries, 1);
    assert_eq!(c.budget.max_reviewer_input_tokens, 4096);
    assert_eq!(c.turn.max_reviews, 5);
    assert_eq!(c.breaker.window_size, 100);
    assert!(!c.overrides.break_glass_enabled);
    assert!(!c.audit.enabled);
    assert_eq!(c.audit.retention_days, 30);
    let path = f.overlay_path();
    assert_eq!(
        loaded.source_of("reviewer.timeout_ms"),
        Some(&Source::Project(path.clone()))
    );
    assert_eq!(loaded.source_of("reviewer.model"), Some(&Source::Default));
    assert!(render_show(&loaded).contains(&format!(
        "audit.retention_days = 30  # project {}\n",
        path.display()
    )));
    // The trusted config itself is untouched.
    assert_eq!(f.trusted.config.reviewer.timeout_ms, 90_000);
}

#[test]
fn equal_values_are_fine() {
    let f = Fixture::new("");
    assert!(
        f.apply("[reviewer]\ntimeout_ms = 90000\n[audit]\nenabled = true\n")
            .is_ok()
    );
}

#[test]
fn raising_a_limit_names_the_key() {
    let f = Fixture::new("[reviewer]\ntimeout_ms = 30000\n");
    let err = f.apply("[reviewer]\ntimeout_ms = 60000\n").unwrap_err();
    let msg = err.to_string();
    assert!(msg.contains("reviewer.timeout_ms"), "{msg}");
    assert!(
        msg.contains(&f.overlay_path().display().to_string()),
        "{msg}"
    );
    assert_eq!(
        loosening_key(f.apply("[budget]\nmax_user_transcript_tokens = 5000\n")),
        "budget.max_user_transcript_tokens"
    );
    assert_eq!(
        loosening_key(f.apply("[decision]\nmax_auto_allow_risk = \"high\"\n")),
        "decision.max_auto_allow_risk"
    );
    assert_eq!(
        loosening_key(f.apply("[decision]\nfailure_mode = \"defer\"\n")),
        "decision.failure_mode"
    );
    assert_eq!(
        loosening_key(f.apply("[decision]\non_risk_exceeded = \"allow\"\n")),
        "decision.on_risk_exceeded"
    );
    assert_eq!(
        loosening_key(f.apply("[breaker]\nwindow_size = 10\n")),
        "breaker.window_size"
    );
    assert_eq!(
        loosening_key(f.apply("[budget]\nestimator = \"o200k\"\n")),
        "budget.estimator"
    );
    assert_eq!(
        loosening_key(f.apply("[grants]\nttl_ms = 120000\n")),
        "grants.ttl_ms"
    );
}

#[test]
fn model_and_endpoint_selection_is_refused_even_when_equal() {
    let f = Fixture::new("");
    for (overlay, key) in [
        ("[reviewer]\nmodel = \"other\"\n", "reviewer.model"),
        (
            "[reviewer]\nmodel = \"codex-auto-review\"\n",
            "reviewer.model",
        ),
        (
            "[reviewer]\nprovider = \"anthropic\"\n",
            "reviewer.provider",
        ),
        (
            "[reviewer]\nbase_url = \"https://evil.example/v1\"\n",
            "reviewer.base_url",
        ),
        (
            "[reviewer]\napi_key_env = \"OTHER\"\n",
            "reviewer.api_key_env",
        ),
        ("[server]\nallow_remote = false\n", "server.allow_remote"),
        ("[server]\nlisten = \"127.0.0.1:1\"\n", "server.listen"),
    ] {
        assert_eq!(loosening_key(f.apply(overlay)), key, "{overlay}");
    }
}

#[test]
fn re_enabling_is_refused() {
    let f = Fixture::new("[overrides]\nbreak_glass_enabled = false\n[audit]\nenabled = false\n");
    assert_eq!(
        loosening_key(f.apply("[overrides]\nbreak_glass_enabled = true\n")),
        "overrides.break_glass_enabled"
    );
    assert_eq!(
        loosening_key(f.apply("[audit]\nenabled = true\n")),
        "audit.enabled"
    );
    assert!(f.apply("[audit]\nenabled = false\n").is_ok());
}

#[test]
fn longer_audit_retention_is_refused() {
    let f = Fixture::new("");
    assert_eq!(
        loosening_key(f.apply("[audit]\nretention_days = 365\n")),
        "audit.retention_days"
    );
    assert_eq!(
        f.apply("[audit]\nretention_days = 7\n")
            .unwrap()
            .config
            .audit
            .retention_days,
        7
    );
}

#[test]
fn pass_routing_is_refused() {
    let f = Fixture::new("");
    assert_eq!(
        loosening_key(f.apply("[[routing.rules]]\npattern = \"^ls\"\npolicy = \"pass\"\n")),
        "routing.rules[0].policy"
    );
    assert_eq!(
        loosening_key(f.apply("[routing.surfaces]\nread = \"pass\"\n")),
        "routing.surfaces.read"
    );
    assert_eq!(
        loosening_key(f.apply("[routing]\ndefault = \"pass\"\n")),
        "routing.default"
    );
    assert_eq!(
        loosening_key(f.apply("[routing]\nsensitive_reads = \"pass\"\n")),
        "routing.sensitive_reads"
    );
}

#[test]
fn surface_entries_may_only_get_stricter() {
    let f =
        Fixture::new("[routing]\ndefault = \"human\"\n[routing.surfaces]\nnetwork = \"never\"\n");
    // No trusted entry for bash: the trusted default (human) is the floor.
    assert_eq!(
        loosening_key(f.apply("[routing.surfaces]\nbash = \"ai\"\n")),
        "routing.surfaces.bash"
    );
    assert_eq!(
        loosening_key(f.apply("[routing.surfaces]\nnetwork = \"human\"\n")),
        "routing.surfaces.network"
    );
    let loaded = f
        .apply("[routing.surfaces]\nbash = \"never\"\nread = \"human\"\n")
        .unwrap();
    assert_eq!(
        loaded.config.routing.surfaces.get("bash"),
        Some(&RoutePolicy::Never)
    );
    assert_eq!(
        loaded.router.route(&request("bash", "ls")).policy,
        RoutePolicy::Never
    );
}

#[test]
fn project_rules_cannot_shadow_stricter_trusted_rules() {
    let f = Fixture::new(
        "[[routing.rules]]\npattern = \"^git push\"\npolicy = \"human\"\nnote = \"pushes need a person\"\n",
    );
    let loaded = f
        .apply("[[routing.rules]]\npattern = \"^git\"\npolicy = \"ai\"\n")
        .unwrap();
    let push = loaded
        .router
        .route(&request("bash", "git push origin main"));
    assert_eq!(push.policy, RoutePolicy::Human);
    assert_eq!(push.rule_id(), "routing/rule-0");
    assert!(
        push.rationale().contains("pushes need a person"),
        "{}",
        push.rationale()
    );
    let status = loaded.router.route(&request("bash", "git status"));
    assert_eq!(status.policy, RoutePolicy::Ai);
    // The effective rule list shows both, trusted first.
    assert_eq!(loaded.config.routing.rules.len(), 2);
    assert_eq!(
        loaded.source_of("routing.rules[1]"),
        Some(&Source::Project(f.overlay_path()))
    );

    // A stricter project rule wins over the trusted answer.
    let loaded = f
        .apply(
            "[[routing.rules]]\npattern = \"^git status\"\npolicy = \"never\"\nnote = \"frozen\"\n",
        )
        .unwrap();
    let status = loaded.router.route(&request("bash", "git status"));
    assert_eq!(status.policy, RoutePolicy::Never);
    assert_eq!(status.rule_id(), "routing/project-rule-0");
    assert!(status.rationale().contains("project routing rule 0"));
}

#[test]
fn project_default_and_sensitive_reads_only_raise() {
    let f = Fixture::new("");
    let loaded = f
        .apply("[routing]\ndefault = \"human\"\nsensitive_reads = \"never\"\n")
        .unwrap();
    let bash = loaded.router.route(&request("bash", "make"));
    assert_eq!(bash.policy, RoutePolicy::Human);
    assert_eq!(bash.rule_id(), "routing/project-default");
    let secret = loaded.router.route(&request("read", "cat .env"));
    assert_eq!(secret.policy, RoutePolicy::Never);
    assert_eq!(secret.rule_id(), "routing/sensitive-read");
}

#[test]
fn a_project_may_ask_for_a_human_without_a_model_never_for_an_abstain() {
    let f = Fixture::new("");
    let loaded = f.apply("[reviewer]\nwithout_model = \"human\"\n").unwrap();
    assert_eq!(loaded.config.reviewer.without_model, WithoutModel::Human);
    let f = Fixture::new("[reviewer]\nwithout_model = \"human\"\n");
    let key = loosening_key(f.apply("[reviewer]\nwithout_model = \"abstain\"\n"));
    assert_eq!(key, "reviewer.without_model");
}

#[test]
fn invalid_overlays_are_errors_not_ignored() {
    let f = Fixture::new("");
    for (overlay, expect_key) in [
        ("[reviewer]\ntimout_ms = 1\n", Some("reviewer.timout_ms")),
        ("[reviewer]\ntimeout_ms = 10\n", Some("reviewer.timeout_ms")),
        (
            "[[routing.rules]]\npattern = \"(\"\npolicy = \"never\"\n",
            Some("routing.rules[0].pattern"),
        ),
        ("not toml at all [", None),
    ] {
        let err = f.apply(overlay).unwrap_err();
        assert_eq!(err.key(), expect_key, "{overlay}: {err}");
        assert!(
            err.to_string()
                .contains(&f.overlay_path().display().to_string())
        );
    }
}

#[test]
fn no_overlay_or_no_cwd_means_the_trusted_config() {
    let f = Fixture::new("[reviewer]\ntimeout_ms = 1000\n");
    let none = for_project(&f.trusted, None);
    assert_eq!(none.root, None);
    assert_eq!(none.overlay, None);
    assert_eq!(none.effective.unwrap().config.reviewer.timeout_ms, 1000);

    let plain = f.dir.path().join("plain/sub");
    std::fs::create_dir_all(&plain).unwrap();
    let p = for_project(&f.trusted, Some(&plain));
    assert_eq!(p.root.as_deref(), Some(plain.as_path()));
    assert_eq!(p.overlay, None);
    assert!(p.effective.is_ok());

    // The overlay is found from a nested cwd via the `.git` root.
    let cwd = f.project("[reviewer]\ntimeout_ms = 1000\n");
    let p = for_project(&f.trusted, Some(&cwd));
    assert_eq!(p.root.as_deref(), Some(f.dir.path().join("proj").as_path()));
    assert_eq!(p.overlay, Some(f.overlay_path()));
    assert!(p.effective.is_ok());
}

#[test]
fn an_unreadable_overlay_fails_closed() {
    let f = Fixture::new("");
    let cwd = f.project("");
    let overlay = f.overlay_path();
    std::fs::remove_file(&overlay).unwrap();
    std::fs::create_dir_all(&overlay).unwrap();
    let p = for_project(&f.trusted, Some(Path::new(&cwd)));
    assert!(matches!(p.effective, Err(ConfigError::Io { .. })));
}

/// Table-driven over the whole key table: for every scalar key, a value one
/// step stricter is accepted and one step looser is a loosening error.
#[test]
fn every_key_moves_only_in_its_direction() {
    let f =
        Fixture::new("[overrides]\nbreak_glass_enabled = false\n[routing]\ndefault = \"human\"\n");
    let file = Path::new("/p/.vouch/config.toml");
    let base_table: toml::Table = toml::from_str(&render_table(&f.trusted)).unwrap();
    for spec in KEYS {
        let (section, key) = spec.key.split_once('.').unwrap();
        let base = base_table[section][key].clone();
        let one = |v: Value| {
            let mut body = toml::Table::new();
            body.insert(key.to_owned(), v);
            let mut t = toml::Table::new();
            t.insert(section.to_owned(), Value::Table(body));
            apply_project(&f.trusted, file, &t)
        };
        let (stricter, looser): (Option<Value>, Option<Value>) = match (spec.kind, &base) {
            (Kind::Int { min, max }, Value::Integer(b)) => {
                let down = (*b > min).then(|| Value::Integer(b - 1));
                let up = (*b < max).then(|| Value::Integer(b + 1));
                match spec.tighten {
                    Tighten::Lower => (down, up),
                    Tighten::Higher => (up, down),
                    Tighten::TrustedOnly => (None, Some(base.clone())),
                    other => panic!("{}: unexpected {other:?}", spec.key),
                }
            }
            (Kind::Enum(values), Value::String(s)) => {
                let i = values.iter().position(|v| v == s).unwrap();
                let down = i.checked_sub(1).map(|j| Value::String(values[j].into()));
                let up = values.get(i + 1).map(|v| Value::String((*v).into()));
                match spec.tighten {
                    Tighten::Lower => (down, up),
                    Tighten::Higher => (up, down),
                    Tighten::TrustedOnly => (None, Some(base.clone())),
                    other => panic!("{}: unexpected {other:?}", spec.key),
                }
            }
            (Kind::Bool, Value::Boolean(b)) => match spec.tighten {
                Tighten::DisableOnly => (
                    Some(Value::Boolean(false)),
                    (!b).then_some(Value::Boolean(true)),
                ),
                Tighten::TrustedOnly => (None, Some(base.clone())),
                other => panic!("{}: unexpected {other:?}", spec.key),
            },
            (Kind::Text(_) | Kind::Paths | Kind::Price, _) => {
                assert_eq!(spec.tighten, Tighten::TrustedOnly, "{}", spec.key);
                (None, Some(base.clone()))
            }
            (Kind::Rules | Kind::Surfaces, _) => continue,
            other => panic!("{}: unexpected {other:?}", spec.key),
        };
        if let Some(v) = stricter {
            let loaded = one(v.clone()).unwrap_or_else(|e| panic!("{} = {v}: {e}", spec.key));
            let after: toml::Table = toml::from_str(&render_table(&loaded)).unwrap();
            assert_eq!(after[section][key], v, "{}", spec.key);
        }
        if let Some(v) = looser {
            match one(v.clone()) {
                Err(ConfigError::Loosening { key: k, .. }) => assert_eq!(k, spec.key),
                other => panic!("{} = {v}: expected loosening, got {other:?}", spec.key),
            }
        }
    }
}

/// The effective config as a TOML table, through the typed struct.
fn render_table(loaded: &LoadedConfig) -> String {
    toml::to_string(&*loaded.config).unwrap()
}

#[test]
fn surface_floor_is_the_trusted_value_not_the_projects_own_default() {
    let f = Fixture::new("");
    let loaded = f
        .apply("[routing]\ndefault = \"never\"\n[routing.surfaces]\nbash = \"human\"\n")
        .unwrap();
    assert_eq!(
        loaded.router.route(&request("bash", "make")).policy,
        RoutePolicy::Human
    );
    assert_eq!(
        loaded.router.route(&request("network", "x")).policy,
        RoutePolicy::Never
    );
    // Still never looser than trusted: reads pass in trusted, the project
    // default (never) applies to them.
    assert_eq!(
        loaded
            .router
            .route(&request("read", "cat README.md"))
            .policy,
        RoutePolicy::Never
    );
}

#[test]
fn cache_matches_the_uncached_fold_and_notices_changes() {
    use vouch::config::ProjectCache;
    let f = Fixture::new("");
    let cache = ProjectCache::new(8);
    let cwd = f.project("[reviewer]\ntimeout_ms = 30000\n");
    let first = cache.for_project(&f.trusted, Some(&cwd));
    assert_eq!(
        first.effective.as_ref().unwrap().config.reviewer.timeout_ms,
        30_000
    );
    let again = cache.for_project(&f.trusted, Some(&cwd));
    assert!(std::sync::Arc::ptr_eq(
        &first.effective.as_ref().unwrap().config,
        &again.effective.as_ref().unwrap().config
    ));

    // A rewrite (here a loosening one) is noticed on the next lookup.
    std::fs::write(f.overlay_path(), "[reviewer]\ntimeout_ms = 600000\n").unwrap();
    let changed = cache.for_project(&f.trusted, Some(&cwd));
    assert!(matches!(
        changed.effective,
        Err(ConfigError::Loosening { .. })
    ));

    // Removal: back to the trusted configuration.
    std::fs::remove_file(f.overlay_path()).unwrap();
    let gone = cache.for_project(&f.trusted, Some(&cwd));
    assert_eq!(gone.overlay, None);
    assert_eq!(gone.effective.unwrap().config.reviewer.timeout_ms, 90_000);

    // A new trusted configuration is never answered from an old fold.
    std::fs::write(f.overlay_path(), "[turn]\nmax_reviews = 3\n").unwrap();
    let _ = cache.for_project(&f.trusted, Some(&cwd));
    let other = Fixture::new("[turn]\nmax_reviews = 2\n");
    let p = cache.for_project(&other.trusted, Some(&cwd));
    assert_eq!(loosening_key(p.effective), "turn.max_reviews");

    assert!(cache.for_project(&f.trusted, None).effective.is_ok());
}
