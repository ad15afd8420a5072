//! Routing and project-config lookup cost: both sit on the per-request hot
//! path (target: the whole deterministic path within 20 µs).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::hint::black_box;
use std::path::Path;

use criterion::{Criterion, criterion_group, criterion_main};
use vouch::config::{LoadedConfig, ProjectCache, for_project, load_trusted};
use vouch::paths::Paths;
use vouch::request::Request;

#[path = "../tests/it/support/fixtures.rs"]
mod fixtures;

fn load(home: &Path, cli: Option<&Path>) -> LoadedConfig {
    let home = home.to_str().unwrap().to_owned();
    let paths = Paths::from_lookup(move |k| (k == "VOUCH_HOME").then(|| home.clone())).unwrap();
    load_trusted(&paths, cli, Vec::new()).unwrap()
}

fn request(v: serde_json::Value) -> Request {
    Request::from_slice(v.to_string().as_bytes()).unwrap()
}

fn bench(c: &mut Criterion) {
    let dir = tempfile::tempdir().unwrap();
    let defaults = load(dir.path(), None);
    let fixture = fixtures::path("routing.toml");
    let with_rules = load(dir.path(), Some(&fixture));

    let bash = request(serde_json::json!({
        "session_id": "s", "surface": "bash", "tool": "Bash",
        "command": "cargo test --workspace", "cwd": "/srv/app"
    }));
    let read_env = request(serde_json::json!({
        "session_id": "s", "surface": "read", "path": "/srv/app/.env.local"
    }));
    let network = request(serde_json::json!({
        "session_id": "s", "surface": "network", "destination": "example.com:443"
    }));

    c.bench_function("route/bash/no_rules", |b| {
        b.iter(|| black_box(defaults.router.route(black_box(&bash))))
    });
    c.bench_function("route/bash/6_rules", |b| {
        b.iter(|| black_box(with_rules.router.route(black_box(&bash))))
    });
    c.bench_function("route/network/request_json_rule", |b| {
        b.iter(|| black_box(with_rules.router.route(black_box(&network))))
    });
    c.bench_function("route/read/sensitive", |b| {
        b.iter(|| black_box(defaults.router.route(black_box(&read_env))))
    });

    let project = dir.path().join("proj");
    let cwd = project.join("src/deep/er");
    std::fs::create_dir_all(&cwd).unwrap();
    std::fs::create_dir_all(project.join(".git")).unwrap();
    c.bench_function("for_project/no_overlay", |b| {
        b.iter(|| black_box(for_project(&defaults, Some(black_box(&cwd)))))
    });
    std::fs::create_dir_all(project.join(".vouch")).unwrap();
    std::fs::write(
        project.join(".vouch/config.toml"),
        "[reviewer]\ntimeout_ms = 30000\n[[routing.rules]]\npattern = \"^git push\"\npolicy = \"never\"\n",
    )
    .unwrap();
    c.bench_function("for_project/overlay", |b| {
        b.iter(|| black_box(for_project(&defaults, Some(black_box(&cwd)))))
    });
    let cache = ProjectCache::new(64);
    c.bench_function("project_cache/overlay", |b| {
        b.iter(|| black_box(cache.for_project(&defaults, Some(black_box(&cwd)))))
    });
}

criterion_group!(benches, bench);
criterion_main!(benches);
