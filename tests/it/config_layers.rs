//! Trusted configuration layers: precedence, source tracking, environment
//! parsing, error messages, paths and `config show`.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use vouch::config::{
    Config, ConfigError, FailClosed, LoadedConfig, RoutePolicy, Source, load_trusted, project_root,
    render_show,
};
use vouch::paths::{Paths, PathsError};

struct Home {
    dir: tempfile::TempDir,
    paths: Paths,
}

impl Home {
    fn new() -> Home {
        let dir = tempfile::tempdir().unwrap();
        let vh = dir.path().join("vh");
        std::fs::create_dir_all(&vh).unwrap();
        let env = lookup(&[("VOUCH_HOME", vh.to_str().unwrap())]);
        let paths = Paths::from_lookup(env).unwrap();
        Home { dir, paths }
    }

    fn user(&self, text: &str) -> PathBuf {
        std::fs::write(&self.paths.user_config, text).unwrap();
        self.paths.user_config.clone()
    }

    fn file(&self, name: &str, text: &str) -> PathBuf {
        let p = self.dir.path().join(name);
        std::fs::write(&p, text).unwrap();
        p
    }

    fn load(&self, cli: Option<&Path>, env: &[(&str, &str)]) -> Result<LoadedConfig, ConfigError> {
        load_trusted(&self.paths, cli, vars(env))
    }
}

fn lookup(vars: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> + use<> {
    let map: HashMap<String, String> = vars
        .iter()
        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
        .collect();
    move |name| map.get(name).cloned()
}

fn vars(env: &[(&str, &str)]) -> Vec<(String, String)> {
    env.iter()
        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
        .collect()
}

#[test]
fn defaults_alone_all_come_from_default() {
    let home = Home::new();
    let loaded = home.load(None, &[]).unwrap();
    assert_eq!(*loaded.config, Config::defaults().unwrap());
    assert!(loaded.trusted_files.is_empty());
    assert!(loaded.sources.values().all(|s| *s == Source::Default));
    let shown = render_show(&loaded);
    assert!(
        shown.contains("reviewer.timeout_ms = 90000  # default\n"),
        "{shown}"
    );
    assert!(shown.contains("routing.surfaces.read = \"pass\"  # default\n"));
    assert!(shown.contains("routing.rules = []  # default\n"));
    assert!(shown.contains("reviewer.api_key_env = \"VOUCH_REVIEWER_API_KEY\"  # default\n"));
    // One line per leaf in the key table (rules and surfaces expand).
    let surfaces = loaded.config.routing.surfaces.len();
    assert_eq!(
        shown.lines().count(),
        vouch::config::spec::KEYS.len() - 1 + surfaces
    );
}

#[test]
fn each_layer_overrides_the_one_before_and_is_named() {
    let home = Home::new();
    let user = home.user(
        "[reviewer]\ntimeout_ms = 5000\nretries = 1\nmax_output_tokens = 128\n[audit]\nretention_days = 30\n",
    );
    let cli = home.file("cli.toml", "[reviewer]\ntimeout_ms = 6000\nretries = 0\n");
    let loaded = home
        .load(Some(&cli), &[("VOUCH_REVIEWER__TIMEOUT_MS", "7000")])
        .unwrap();
    let c = &loaded.config;
    assert_eq!(c.reviewer.timeout_ms, 7000);
    assert_eq!(c.reviewer.retries, 0);
    assert_eq!(c.reviewer.max_output_tokens, 128);
    assert_eq!(c.audit.retention_days, 30);
    assert_eq!(c.reviewer.model, "codex-auto-review");
    assert_eq!(
        loaded.source_of("reviewer.timeout_ms"),
        Some(&Source::Env("VOUCH_REVIEWER__TIMEOUT_MS".into()))
    );
    assert_eq!(
        loaded.source_of("reviewer.retries"),
        Some(&Source::CliConfig(cli.clone()))
    );
    assert_eq!(
        loaded.source_of("reviewer.max_output_tokens"),
        Some(&Source::User(user.clone()))
    );
    assert_eq!(loaded.source_of("reviewer.model"), Some(&Source::Default));
    assert_eq!(loaded.trusted_files, vec![user.clone(), cli.clone()]);

    let shown = render_show(&loaded);
    assert!(shown.contains("reviewer.timeout_ms = 7000  # env VOUCH_REVIEWER__TIMEOUT_MS\n"));
    assert!(shown.contains(&format!(
        "reviewer.retries = 0  # --config {}\n",
        cli.display()
    )));
    assert!(shown.contains(&format!(
        "audit.retention_days = 30  # user {}\n",
        user.display()
    )));
}

#[test]
fn missing_user_file_is_fine_but_missing_cli_file_is_an_error() {
    let home = Home::new();
    assert!(home.load(None, &[]).is_ok());
    let missing = home.dir.path().join("nope.toml");
    let err = home.load(Some(&missing), &[]).unwrap_err();
    assert!(matches!(err, ConfigError::Io { .. }), "{err:?}");
    assert!(err.to_string().contains(&missing.display().to_string()));
}

#[test]
fn unknown_key_names_file_and_key() {
    let home = Home::new();
    let user = home.user("[reviewer]\ntimout_ms = 5000\n");
    let err = home.load(None, &[]).unwrap_err();
    assert_eq!(
        err.to_string(),
        format!("{}: key `reviewer.timout_ms`: unknown key", user.display())
    );
    home.user("[reviwer]\ntimeout_ms = 5000\n");
    let err = home.load(None, &[]).unwrap_err().to_string();
    assert!(err.contains("key `reviwer`: unknown section"), "{err}");
    home.user("reviewer = 3\n");
    let err = home.load(None, &[]).unwrap_err().to_string();
    assert!(err.contains("expected a table"), "{err}");
}

#[test]
fn wrong_type_and_range_name_file_key_and_legal_range() {
    let home = Home::new();
    let cli = home.file("c.toml", "[reviewer]\ntimeout_ms = \"fast\"\n");
    let err = home.load(Some(&cli), &[]).unwrap_err();
    assert_eq!(err.key(), Some("reviewer.timeout_ms"));
    let msg = err.to_string();
    assert!(msg.starts_with(&cli.display().to_string()), "{msg}");
    assert!(msg.contains("an integer in 1000–600000"), "{msg}");

    let cli = home.file("c.toml", "[audit]\nretention_days = 4000\n");
    let msg = home.load(Some(&cli), &[]).unwrap_err().to_string();
    assert!(msg.contains("key `audit.retention_days`"), "{msg}");
    assert!(msg.contains("`4000` is out of range"), "{msg}");
    assert!(msg.contains("1–3650"), "{msg}");

    for (text, key, needle) in [
        (
            "[decision]\nfailure_mode = \"allow\"\n",
            "decision.failure_mode",
            "`defer`, `deny`",
        ),
        (
            "[decision]\nmax_auto_allow_risk = \"critical\"\n",
            "decision.max_auto_allow_risk",
            "`low`",
        ),
        (
            "[reviewer]\nprovider = \"gemini\"\n",
            "reviewer.provider",
            "`openai`",
        ),
        (
            "[reviewer]\nbase_url = \"ftp://x\"\n",
            "reviewer.base_url",
            "URL",
        ),
        (
            "[reviewer]\napi_key_env = \"MY KEY\"\n",
            "reviewer.api_key_env",
            "environment variable",
        ),
        (
            "[reviewer]\napi_key_env = \"VOUCH_REVIEWER__MODEL\"\n",
            "reviewer.api_key_env",
            "not `VOUCH_<SECTION>__<KEY>`",
        ),
        ("[reviewer]\nretries = 3\n", "reviewer.retries", "0–2"),
        (
            "[budget]\nmax_reviewer_input_tokens = 1024\n",
            "budget.max_reviewer_input_tokens",
            "2048–32768",
        ),
        (
            "[overrides]\nbreak_glass_enabled = 1\n",
            "overrides.break_glass_enabled",
            "`true` or `false`",
        ),
        ("[cache]\nttl_ms = 1.5\n", "cache.ttl_ms", "integer"),
        (
            "[routing]\nsurfaces = { \"bad name\" = \"ai\" }\n",
            "routing.surfaces.bad name",
            "surface",
        ),
        (
            "[routing.surfaces]\nbash = \"maybe\"\n",
            "routing.surfaces.bash",
            "`never`",
        ),
        (
            "[server]\nlisten = \"nope\"\n",
            "server.listen",
            "host:port",
        ),
    ] {
        let cli = home.file("c.toml", text);
        let err = home.load(Some(&cli), &[]).unwrap_err();
        assert_eq!(err.key(), Some(key), "{text}: {err}");
        assert!(err.to_string().contains(needle), "{text}: {err}");
    }
}

#[test]
fn cross_field_rules_name_the_layer_that_broke_them() {
    let home = Home::new();
    let user = home.user("[breaker]\nwindow_denials = 60\n");
    let err = home.load(None, &[]).unwrap_err();
    assert_eq!(err.key(), Some("breaker.window_denials"));
    assert!(err.to_string().starts_with(&user.display().to_string()));
    home.user("[breaker]\nwindow_denials = 60\nwindow_size = 60\n");
    assert_eq!(
        home.load(None, &[]).unwrap().config.breaker.window_denials,
        60
    );

    home.user("[server]\nlisten = \"0.0.0.0:8787\"\n");
    let err = home.load(None, &[]).unwrap_err();
    assert_eq!(err.key(), Some("server.listen"));
    home.user("[server]\nlisten = \"0.0.0.0:8787\"\nallow_remote = true\n");
    assert!(home.load(None, &[]).is_ok());
    home.user("[server]\nlisten = \"[::1]:9\"\n");
    assert!(home.load(None, &[]).is_ok());
    home.user("[server]\nlisten = \"unix:/run/vouch.sock\"\n");
    assert!(home.load(None, &[]).is_ok());
}

#[test]
fn rule_patterns_must_compile_and_errors_name_the_index() {
    let home = Home::new();
    home.user(
        "[[routing.rules]]\npattern = \"^git push\"\npolicy = \"human\"\n\
         [[routing.rules]]\npattern = \"([\"\npolicy = \"ai\"\n",
    );
    let err = home.load(None, &[]).unwrap_err();
    assert_eq!(err.key(), Some("routing.rules[1].pattern"));
    assert!(err.to_string().contains("rule 1"), "{err}");

    for (rule, key) in [
        (
            "pattern = \"x\"\npolicy = \"sometimes\"\n",
            "routing.rules[0].policy",
        ),
        (
            "pattern = \"x\"\npolicy = \"ai\"\nfield = \"path\"\n",
            "routing.rules[0].field",
        ),
        ("pattern = \"x\"\n", "routing.rules[0].policy"),
        ("policy = \"ai\"\n", "routing.rules[0].pattern"),
        (
            "pattern = \"x\"\npolicy = \"ai\"\nextra = 1\n",
            "routing.rules[0].extra",
        ),
    ] {
        home.user(&format!("[[routing.rules]]\n{rule}"));
        let err = home.load(None, &[]).unwrap_err();
        assert_eq!(err.key(), Some(key), "{rule}: {err}");
    }
}

#[test]
fn trusted_layers_replace_rules_and_merge_surfaces() {
    let home = Home::new();
    let user = home.user(
        "[routing]\nrules = [{ pattern = \"^a\", policy = \"human\" }, { pattern = \"^b\", policy = \"never\" }]\n\
         [routing.surfaces]\nbash = \"human\"\n",
    );
    let cli = home.file(
        "c.toml",
        "[routing]\nrules = [{ pattern = \"^c\", policy = \"ai\", note = \"c\" }]\n[routing.surfaces]\nnetwork = \"never\"\n",
    );
    let loaded = home.load(Some(&cli), &[]).unwrap();
    let routing = &loaded.config.routing;
    assert_eq!(routing.rules.len(), 1);
    assert_eq!(routing.rules[0].pattern.as_deref(), Some("^c"));
    assert_eq!(routing.surfaces.get("bash"), Some(&RoutePolicy::Human));
    assert_eq!(routing.surfaces.get("network"), Some(&RoutePolicy::Never));
    assert_eq!(routing.surfaces.get("read"), Some(&RoutePolicy::Pass));
    assert_eq!(
        loaded.source_of("routing.rules[0]"),
        Some(&Source::CliConfig(cli.clone()))
    );
    assert_eq!(loaded.source_of("routing.rules[1]"), None);
    assert_eq!(
        loaded.source_of("routing.surfaces.bash"),
        Some(&Source::User(user.clone()))
    );
    let shown = render_show(&loaded);
    assert!(shown.contains("routing.rules[0] = { pattern = \"^c\", field = \"command\", policy = \"ai\", note = \"c\" }  # --config"), "{shown}");
    assert!(shown.contains("routing.surfaces.network = \"never\"  # --config"));
}

#[test]
fn environment_values_are_parsed_by_key_type() {
    let home = Home::new();
    let loaded = home
        .load(
            None,
            &[
                ("VOUCH_ROUTING__DEFAULT", "human"),
                ("VOUCH_ROUTING__SURFACES__READ", "ai"),
                ("VOUCH_AUDIT__ENABLED", "false"),
                ("VOUCH_REVIEWER__MODEL", "123"),
                ("VOUCH_REVIEWER__BASE_URL", "\"https://api.example.com/v1\""),
                ("VOUCH_BREAKER__ACTION", "deny"),
                ("VOUCH_CACHE__TTL_MS", "1_000"),
                (
                    "VOUCH_ROUTING__RULES",
                    "[{ pattern = \"^git push\", policy = \"human\" }]",
                ),
                ("VOUCH_HOME", "/ignored"),
                ("VOUCH_ALLOW_UNTRUSTED_DEV", "1"),
                ("VOUCH_REVIEWER_API_KEY", "sk-live-secret-value"),
                ("VOUCH_UNRELATED", "whatever"),
                ("PATH", "/usr/bin"),
            ],
        )
        .unwrap();
    let c = &loaded.config;
    assert_eq!(c.routing.default, RoutePolicy::Human);
    assert_eq!(c.routing.surfaces.get("read"), Some(&RoutePolicy::Ai));
    assert!(!c.audit.enabled);
    assert_eq!(c.reviewer.model, "123");
    assert_eq!(c.reviewer.base_url, "https://api.example.com/v1");
    assert_eq!(c.breaker.action, FailClosed::Deny);
    assert_eq!(c.cache.ttl_ms, 1000);
    assert_eq!(c.routing.rules.len(), 1);
    assert_eq!(
        loaded.source_of("routing.surfaces.read"),
        Some(&Source::Env("VOUCH_ROUTING__SURFACES__READ".into()))
    );
    let shown = render_show(&loaded);
    assert!(!shown.contains("sk-live-secret-value"));
    assert!(shown.contains("routing.default = \"human\"  # env VOUCH_ROUTING__DEFAULT\n"));
}

#[test]
fn bad_environment_variables_are_named() {
    let home = Home::new();
    for (var, value, needle) in [
        (
            "VOUCH_REVIEWER__TIMOUT_MS",
            "5",
            "unknown key `reviewer.timout_ms`",
        ),
        ("VOUCH_NOPE__X", "5", "unknown section `nope`"),
        ("VOUCH_REVIEWER_TIMEOUT_MS", "5", "two underscores"),
        (
            "VOUCH_REVIEWER__TIMEOUT_MS__X",
            "5",
            "not a configuration key",
        ),
        ("VOUCH_AUDIT__RETENTION_DAYS", "0", "out of range"),
        (
            "VOUCH_REVIEWER__TIMEOUT_MS",
            "soon",
            "an integer in 1000–600000",
        ),
        ("VOUCH_AUDIT__ENABLED", "yes", "`true` or `false`"),
    ] {
        let err = home.load(None, &[(var, value)]).unwrap_err().to_string();
        assert!(
            err.contains(&format!("environment variable `{var}`")),
            "{var}: {err}"
        );
        assert!(err.contains(needle), "{var}: {err}");
    }
}

#[test]
fn the_configured_api_key_variable_is_never_configuration() {
    let home = Home::new();
    home.user("[reviewer]\napi_key_env = \"VOUCH_MY_KEY\"\n");
    let loaded = home
        .load(
            None,
            &[
                ("VOUCH_MY_KEY", "sk-secret-1"),
                ("VOUCH_REVIEWER_API_KEY", "sk-2"),
            ],
        )
        .unwrap();
    let shown = render_show(&loaded);
    assert!(shown.contains("reviewer.api_key_env = \"VOUCH_MY_KEY\""));
    assert!(!shown.contains("sk-secret-1") && !shown.contains("sk-2"));
    // Named in the environment layer itself.
    let home = Home::new();
    assert!(
        home.load(
            None,
            &[
                ("VOUCH_REVIEWER__API_KEY_ENV", "VOUCH_OTHER_KEY"),
                ("VOUCH_OTHER_KEY", "k")
            ]
        )
        .is_ok()
    );
}

#[test]
fn show_masks_credentials_in_the_endpoint() {
    let home = Home::new();
    home.user("[reviewer]\nbase_url = \"https://me:hunter2@api.example.com/v1?key=abc\"\n");
    let shown = render_show(&home.load(None, &[]).unwrap());
    assert!(
        !shown.contains("hunter2") && !shown.contains("abc"),
        "{shown}"
    );
    assert!(shown.contains("reviewer.base_url = \"https://***@api.example.com/v1?***\""));
}

#[test]
fn xdg_locations_are_used_without_vouch_home() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = dir.path().join("cfg");
    let state = dir.path().join("state");
    let paths = Paths::from_lookup(lookup(&[
        ("HOME", dir.path().join("home").to_str().unwrap()),
        ("XDG_CONFIG_HOME", cfg.to_str().unwrap()),
        ("XDG_STATE_HOME", state.to_str().unwrap()),
    ]))
    .unwrap();
    assert_eq!(paths.vouch_home, None);
    assert_eq!(paths.user_config, cfg.join("vouch/config.toml"));
    assert_eq!(paths.state_dir, state.join("vouch"));
    std::fs::create_dir_all(cfg.join("vouch")).unwrap();
    std::fs::write(&paths.user_config, "[turn]\nmax_reviews = 5\n").unwrap();
    let loaded = load_trusted(&paths, None, Vec::new()).unwrap();
    assert_eq!(loaded.config.turn.max_reviews, 5);
    assert_eq!(
        loaded.source_of("turn.max_reviews"),
        Some(&Source::User(paths.user_config.clone()))
    );

    // Home defaults when XDG is unset or relative.
    let paths = Paths::from_lookup(lookup(&[
        ("HOME", dir.path().join("home").to_str().unwrap()),
        ("XDG_CONFIG_HOME", "relative"),
    ]))
    .unwrap();
    assert_eq!(
        paths.user_config,
        dir.path().join("home/.config/vouch/config.toml")
    );
    assert_eq!(
        Paths::from_lookup(lookup(&[])).unwrap_err(),
        PathsError::NoHome
    );
}

#[test]
fn syntax_errors_and_odd_files_name_the_file() {
    let home = Home::new();
    let user = home.user("[reviewer\n");
    let err = home.load(None, &[]).unwrap_err();
    assert!(matches!(err, ConfigError::Parse { .. }));
    assert!(err.to_string().starts_with(&user.display().to_string()));
    home.user("");
    let dir = home.dir.path().join("adir");
    std::fs::create_dir_all(&dir).unwrap();
    let err = home.load(Some(&dir), &[]).unwrap_err();
    assert!(err.to_string().contains("not a regular file"), "{err}");
}

#[test]
fn project_root_is_the_nearest_git_ancestor_else_cwd() {
    let dir = tempfile::tempdir().unwrap();
    let repo = dir.path().join("repo");
    let nested = repo.join("a/b");
    std::fs::create_dir_all(&nested).unwrap();
    assert_eq!(project_root(&nested), nested);
    std::fs::create_dir_all(repo.join(".git")).unwrap();
    assert_eq!(project_root(&nested), repo);
    assert_eq!(project_root(&repo), repo);
    // A worktree's `.git` is a file, and the nearest one wins.
    std::fs::write(repo.join("a/.git"), "gitdir: /elsewhere\n").unwrap();
    assert_eq!(project_root(&nested), repo.join("a"));
}

#[test]
fn trusted_files_inside_a_project_are_reported() {
    let home = Home::new();
    let project = home.dir.path().join("proj");
    std::fs::create_dir_all(&project).unwrap();
    let cli = project.join("vouch.toml");
    std::fs::write(&cli, "").unwrap();
    let loaded = home.load(Some(&cli), &[]).unwrap();
    assert_eq!(loaded.trusted_file_inside(&project), Some(cli));
    let elsewhere = home.dir.path().join("elsewhere");
    assert_eq!(loaded.trusted_file_inside(&elsewhere), None);
    // A symlink to the project does not hide the overlap.
    let link = home.dir.path().join("link");
    std::os::unix::fs::symlink(&project, &link).unwrap();
    let loaded = home.load(Some(&link.join("vouch.toml")), &[]).unwrap();
    assert!(loaded.trusted_file_inside(&project).is_some());
    // The user overlay counts even while absent: creating it would make it
    // trusted on the next load.
    let loaded = home.load(None, &[]).unwrap();
    assert!(loaded.trusted_files.is_empty());
    assert_eq!(
        loaded.trusted_file_inside(home.dir.path()),
        Some(home.paths.user_config.clone())
    );
}

#[test]
fn environment_is_one_layer_for_cross_field_rules() {
    let home = Home::new();
    let loaded = home
        .load(
            None,
            &[
                ("VOUCH_BREAKER__WINDOW_DENIALS", "145"),
                ("VOUCH_BREAKER__WINDOW_SIZE", "200"),
            ],
        )
        .unwrap();
    assert_eq!(loaded.config.breaker.window_denials, 145);
    let err = home
        .load(None, &[("VOUCH_BREAKER__WINDOW_DENIALS", "145")])
        .unwrap_err();
    assert_eq!(err.key(), Some("breaker.window_denials"));
    assert!(
        err.to_string()
            .contains("environment variable `VOUCH_BREAKER__WINDOW_DENIALS`"),
        "{err}"
    );
}
