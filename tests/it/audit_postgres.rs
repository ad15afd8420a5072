//! The audit on PostgreSQL (`[store] backend = "postgres"`): several
//! replicas, each a process of its own with its own writer and its own
//! caches of interned ids, write into one database, and their counts add
//! up — concurrent batches, idempotent ingest across replicas, a decision
//! made by one replica paired with the after-event another one saw, an
//! audit recreated under a running writer. And nothing secret reaches the
//! database's tables. Without a PostgreSQL installation the tests say why
//! and pass, or under `VOUCH_TEST_STRICT=1` fail.

use std::os::unix::fs::{DirBuilderExt as _, PermissionsExt as _};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};
use vouch::audit::db::{Db, Op};
use vouch::audit::keys::{Domain, KEY_FILE, Keys};
use vouch::audit::record::{ResultKind, Row};
use vouch::audit::report::{Options, Report, Scope};
use vouch::audit::subject::{Kind, Subject};
use vouch::clock::ManualClock;
use vouch::config::Config;
use vouch::engine::{Engine, EngineOptions};
use vouch::request::Request;

use crate::store_schema::{cluster::Cluster, postgres_store};

/// 2026-12-01T12:00:00Z.
const NOW_MS: u64 = 1_796_126_400_000;
const DAY_MS: u64 = 86_400_000;

/// One replica of a team's service: its own `VOUCH_HOME` (state directory,
/// copy of `hmac.key`) and engine, the shared database, the shared project
/// checkout path.
struct Replica {
    engine: Engine,
    home: PathBuf,
}

impl Replica {
    fn new(root: &Path, name: &str, url: &str, edit: impl FnOnce(&mut Config)) -> Replica {
        let mut config = Config::defaults().unwrap();
        config.store = postgres_store();
        edit(&mut config);
        let home = root.join(name);
        let mut options = EngineOptions::isolated(&home, &config).unwrap();
        options.clock = Arc::new(ManualClock::new(NOW_MS));
        let (var, url) = (config.store.url_env.clone(), url.to_owned());
        options.env = Arc::new(move |name| (name == var).then(|| url.clone()));
        Replica {
            engine: Engine::new(options).unwrap(),
            home,
        }
    }

    fn state(&self) -> PathBuf {
        self.home.join("state")
    }

    async fn report(&self, project: &Path) -> Report {
        self.engine
            .audit_report(Options {
                days: 30,
                top: 50,
                min_count: 5,
                scope: Scope::Current(project.to_path_buf()),
                target: "claude-code".parse().unwrap(),
            })
            .await
            .unwrap()
    }
}

/// Replicas share one key: the first one's, copied.
fn share_key(from: &Replica, to: &Replica) {
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(to.state())
        .unwrap();
    let target = to.state().join(KEY_FILE);
    std::fs::copy(from.state().join(KEY_FILE), &target).unwrap();
    assert_eq!(
        std::fs::metadata(&target).unwrap().permissions().mode() & 0o077,
        0
    );
}

fn pi(project: &Path, id: &str, value: &str, resolution: &str) -> Value {
    json!({
        "requestId": id, "surface": "bash", "value": value, "result": "allow",
        "resolution": resolution, "origin": "project", "agentName": "main",
        "matchedPattern": "make *", "cwd": project.join("src"), "timestamp_ms": NOW_MS,
    })
}

fn count_of(report: &Report, subject: &str) -> u64 {
    report
        .top_subjects
        .iter()
        .find(|s| s.subject == subject)
        .map_or(0, |s| s.count)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn replicas_writing_at_once_add_up() {
    let Some(cluster) = tokio::task::block_in_place(Cluster::start) else {
        return;
    };
    let root = tempfile::tempdir().unwrap();
    let project = root.path().join("project");
    std::fs::create_dir_all(project.join(".git")).unwrap();
    let human = |c: &mut Config| {
        c.routing.rules.push(vouch::config::RoutingRule {
            pattern: Some("^make".into()),
            command: None,
            field: vouch::config::RuleField::Command,
            policy: vouch::config::RoutePolicy::Human,
            note: None,
        });
    };
    let a = Replica::new(root.path(), "a", &cluster.url(), human);
    // The first write mints the key; the other replica gets a copy.
    let first = a
        .engine
        .audit_ingest(
            vec![pi(&project, "first", "git status", "user_approved")],
            true,
        )
        .await
        .unwrap();
    assert_eq!(first.counted, 1);
    let b = Replica::new(root.path(), "b", &cluster.url(), human);
    share_key(&a, &b);
    assert!(
        !a.state().join(vouch::audit::db::DATABASE_FILE).exists(),
        "the audit is on PostgreSQL, not in a file"
    );

    // Both replicas ingest at once: the same templates (so both intern the
    // same subjects and hashes concurrently), their own request ids.
    const ROUNDS: usize = 8;
    const PER_BATCH: usize = 50;
    let templates = [
        "git status",
        "cargo test",
        "npm run build",
        "ls -la",
        "git log",
    ];
    let ingest = |replica: &'static str, engine: Engine, project: PathBuf| async move {
        for round in 0..ROUNDS {
            let events = (0..PER_BATCH)
                .map(|i| {
                    pi(
                        &project,
                        &format!("{replica}-{round}-{i}"),
                        templates[i % templates.len()],
                        "user_approved",
                    )
                })
                .collect();
            let summary = engine.audit_ingest(events, true).await.unwrap();
            assert_eq!(summary.counted, PER_BATCH as u64, "{replica} round {round}");
        }
    };
    let (ra, rb) = tokio::join!(
        tokio::spawn(ingest("a", a.engine.clone(), project.clone())),
        tokio::spawn(ingest("b", b.engine.clone(), project.clone()))
    );
    ra.unwrap();
    rb.unwrap();

    // An event delivered to both replicas counts once.
    let twice = vec![pi(&project, "both", "git status", "user_approved")];
    let at_a = a.engine.audit_ingest(twice.clone(), true).await.unwrap();
    let at_b = b.engine.audit_ingest(twice, true).await.unwrap();
    assert_eq!((at_a.counted, at_b.counted, at_b.duplicates), (1, 0, 1));

    // vouch's own decisions go through each replica's background writer; a
    // call deferred by replica a that ran is reported to replica b.
    let request = |i: usize| -> Request {
        Request::from_slice(
            json!({"session_id": "s-1", "turn_id": format!("t{i}"),
                   "tool_call_id": format!("toolu_{i}"), "source": "claude-code",
                   "surface": "bash", "command": "make test", "cwd": project})
            .to_string()
            .as_bytes(),
        )
        .unwrap()
    };
    // (The same command in one session: one pending ask at a time.)
    for i in 0..6 {
        let (decides, runs) = if i % 2 == 0 { (&a, &b) } else { (&b, &a) };
        let decision = decides.engine.review(request(i)).await;
        assert_eq!(decision.outcome(), vouch::decision::Outcome::Defer);
        assert!(decides.engine.flush_audit(Duration::from_secs(10)));
        // Five of them were approved and ran; one was not.
        if i < 5 {
            runs.engine.observe_ran(&request(i));
            assert!(runs.engine.flush_audit(Duration::from_secs(10)));
        }
    }
    let total = 1 + 2 * ROUNDS * PER_BATCH + 1 + 6 + 5;
    for replica in [&a, &b] {
        let report = replica.report(&project).await;
        assert_eq!(report.totals.observations, total as u64, "{report:#?}");
        // Every template was written by both replicas: one subject each.
        let per_template = (2 * ROUNDS * PER_BATCH / templates.len()) as u64;
        assert_eq!(count_of(&report, "git status"), per_template + 2);
        assert_eq!(count_of(&report, "cargo test"), per_template);
        let make = report
            .top_subjects
            .iter()
            .find(|s| s.subject == "make test")
            .unwrap();
        assert_eq!((make.approvals, make.by_result["defer"]), (5, 6));
        assert!(
            report
                .suggestions
                .rules
                .iter()
                .any(|r| r.rule == "Bash(make test)")
        );
        assert_eq!(
            report.top_subjects.len(),
            templates.len() + 1,
            "no subject interned twice"
        );
    }
    let subjects: i64 = tokio::task::block_in_place(|| {
        cluster
            .client()
            .query_one("SELECT count(*) FROM subjects", &[])
            .unwrap()
            .get(0)
    });
    assert_eq!(subjects, i64::try_from(templates.len()).unwrap() + 1);

    // A replica that minted a key of its own would split every keyed hash:
    // it is refused, and the shared counts stay as they were.
    let c = Replica::new(root.path(), "c", &cluster.url(), human);
    let err = c
        .engine
        .audit_ingest(
            vec![pi(&project, "c-1", "git status", "user_approved")],
            true,
        )
        .await
        .unwrap_err();
    assert!(err.to_string().contains("other replicas"), "{err}");
    assert_eq!(a.report(&project).await.totals.observations, total as u64);
}

/// A batch of `n` counts of `subjects` subjects under `scope`, on `day`.
fn batch(day: i64, scope: &str, subjects: usize, n: usize, tag: &str) -> Vec<Op> {
    (0..n)
        .map(|i| Op::Count {
            row: Row {
                day,
                scope: Some(scope.to_owned()),
                surface: "bash".to_owned(),
                subject: Subject::new(Kind::Template, format!("tool{} sub *", i % subjects)),
                source: "claude-code".to_owned(),
                result: ResultKind::Allow,
                resolution: "user_approved",
                origin: Some(format!("{:032x}", i % 3)),
                pattern: Some(format!("{tag}{:030x}", i % 7)),
                forwarded: false,
            },
            retention_days: 30,
            once: None,
            awaits: None,
        })
        .collect()
}

fn total(db: &Db, today: i64) -> (i64, usize) {
    let rows = db.window(today - 29, today, None).unwrap();
    let named = db.subjects(rows.iter().map(|r| r.subject_id)).unwrap();
    assert!(
        rows.iter().all(|r| named.contains_key(&r.subject_id)),
        "every counted row names a stored subject"
    );
    (rows.iter().map(|r| r.count).sum(), named.len())
}

#[test]
fn writers_with_their_own_caches_add_up_and_survive_a_recreated_audit() {
    let Some(cluster) = Cluster::start() else {
        return;
    };
    let url = cluster.url();
    let cfg = postgres_store();
    let today = i64::try_from(NOW_MS / DAY_MS).unwrap();
    let scope = Keys::from_bytes([7; 32]).digest(Domain::Scope, "/srv/app");
    // Several writers at once (replicas), many batches each, the same
    // subjects and hashes: all of them insert-or-get the same ids.
    let writers: Vec<_> = (0..3)
        .map(|w| {
            let (url, cfg, scope) = (url.clone(), cfg.clone(), scope.clone());
            std::thread::spawn(move || {
                let mut db = Db::open_postgres(Some(&url), &cfg).unwrap();
                for round in 0..20 {
                    let now = NOW_MS + u64::try_from(round).unwrap();
                    let ops = batch(today - (round % 3), &scope, 40, 100, "p");
                    let summary = db.write(ops, now, 30).unwrap();
                    assert_eq!(summary.counted, 100, "writer {w} round {round}");
                }
                db
            })
        })
        .collect();
    let mut dbs: Vec<Db> = writers.into_iter().map(|t| t.join().unwrap()).collect();
    assert_eq!(total(&dbs[0], today), (3 * 20 * 100, 40));

    // The audit is recreated (dropped and migrated anew) while the writers
    // keep their caches: their next batches must not name old ids.
    let mut client = cluster.client();
    client
        .batch_execute(
            "DROP TABLE meta, daily, seen, subjects, hashes, blocks, pruned, pending; \
             DELETE FROM vouch_schema WHERE component = 'audit';",
        )
        .unwrap();
    // A different subject takes id 1 first.
    let mut fresh = Db::open_postgres(Some(&url), &cfg).unwrap();
    fresh
        .write(batch(today, &scope, 1, 1, "q"), NOW_MS, 30)
        .unwrap();
    client
        .batch_execute("UPDATE subjects SET subject = 'other sub *' WHERE id = 1")
        .unwrap();
    for db in &mut dbs {
        db.write(batch(today, &scope, 40, 100, "p"), NOW_MS, 30)
            .unwrap();
    }
    // All of it under the one scope, whose id is the new audit's.
    let scope_id = fresh.hash_id(&scope).unwrap().unwrap();
    let rows = fresh.window(today - 29, today, Some(scope_id)).unwrap();
    assert_eq!(
        rows.iter().map(|r| r.count).sum::<i64>(),
        fresh
            .window(today - 29, today, None)
            .unwrap()
            .iter()
            .map(|r| r.count)
            .sum::<i64>()
    );
    let named = fresh.subjects(rows.iter().map(|r| r.subject_id)).unwrap();
    let by_subject = |text: &str| -> i64 {
        rows.iter()
            .filter(|r| named[&r.subject_id].text == text)
            .map(|r| r.count)
            .sum()
    };
    // 3 writers × 100 counts over 40 subjects: 7 or 8 each; the renamed
    // row got only the fresh writer's one count.
    assert_eq!(by_subject("other sub *"), 1);
    assert_eq!(by_subject("tool0 sub *"), 3 * 3);
    assert_eq!(rows.iter().map(|r| r.count).sum::<i64>(), 1 + 3 * 100);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn nothing_secret_reaches_the_postgres_tables() {
    let Some(cluster) = tokio::task::block_in_place(Cluster::start) else {
        return;
    };
    let root = tempfile::tempdir().unwrap();
    let project = root.path().join("acme-payroll-project");
    std::fs::create_dir_all(project.join(".git")).unwrap();
    let replica = Replica::new(root.path(), "a", &cluster.url(), |_| {});
    let secrets = crate::support::fixtures::secrets();
    assert!(secrets.len() >= 10);
    let url = "https://billing.internal-acme-corp.example/api/v1/invoices?customer=4711";
    let mut raw: Vec<String> = vec![
        url.to_owned(),
        "billing.internal-acme-corp.example".to_owned(),
        project.display().to_string(),
        "/home/dev/.ssh/id_acme_prod_deploy".to_owned(),
        "prod-deploy-acme".to_owned(),
    ];
    let mut events = Vec::new();
    for (i, s) in secrets.iter().enumerate() {
        let quoted = format!("'{}'", s.replace('\'', "'\\''"));
        for (j, command) in [
            format!("deploy --token {quoted}"),
            format!("mysql -p{quoted} app"),
            format!("curl {url}&key={quoted}"),
        ]
        .into_iter()
        .enumerate()
        {
            raw.push(command.clone());
            events.push(json!({
                "requestId": format!("secret-{i}-{j}"), "surface": "bash", "value": command,
                "result": "allow", "resolution": "user_approved", "origin": "prod-deploy-acme",
                "agentName": "main", "matchedPattern": format!("deploy {s}"),
                "cwd": project.join("src"), "timestamp_ms": NOW_MS,
            }));
        }
    }
    events.push(json!({
        "requestId": "path-1", "surface": "read", "value": "/home/dev/.ssh/id_acme_prod_deploy",
        "result": "allow", "resolution": "user_approved", "origin": "project",
        "agentName": "main", "matchedPattern": "*", "cwd": project, "timestamp_ms": NOW_MS,
    }));
    let summary = replica.engine.audit_ingest(events, true).await.unwrap();
    assert!(summary.counted > 10, "{summary:?}");

    // Every row of every table in the database, as text.
    let dump = tokio::task::block_in_place(|| dump_tables(&mut cluster.client()));
    // The safe parts were written, so the scan reads real data.
    assert!(dump.contains("deploy --token *"), "{dump}");
    assert!(
        dump.contains("sensitive") || dump.contains("home"),
        "{dump}"
    );
    let leaks: Vec<&String> = secrets
        .iter()
        .chain(raw.iter())
        .filter(|s| s.len() >= 6 && dump.contains(s.as_str()))
        .collect();
    assert!(leaks.is_empty(), "found in PostgreSQL: {leaks:?}");
    // And the key never went there either (hex or raw).
    let key = std::fs::read(replica.state().join(KEY_FILE)).unwrap();
    assert!(!dump.contains(&hex_of(&key)));
}

/// Every row of every table of the database, as text, one per line.
fn dump_tables(client: &mut postgres::Client) -> String {
    let tables: Vec<String> = client
        .query(
            "SELECT table_name::text FROM information_schema.tables \
             WHERE table_schema = 'public'",
            &[],
        )
        .unwrap()
        .iter()
        .map(|r| r.get(0))
        .collect();
    assert!(tables.iter().any(|t| t == "daily"), "{tables:?}");
    let mut dump = String::new();
    for table in &tables {
        for row in client
            .query(&format!("SELECT t::text FROM \"{table}\" AS t"), &[])
            .unwrap()
        {
            dump.push_str(&row.get::<_, String>(0));
            dump.push('\n');
        }
    }
    dump
}

fn hex_of(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// `vouch audit <args>` as its own process of replica `home`, on the
/// PostgreSQL database at `url`.
fn vouch_audit(home: &Path, url: &str, args: &[&str], stdin: &str) -> Value {
    let out = crate::support::run_with_stdin(
        std::process::Command::new(env!("CARGO_BIN_EXE_vouch"))
            .arg("audit")
            .args(args)
            .env("VOUCH_HOME", home)
            .env("HOME", home)
            .env("VOUCH_STORE__BACKEND", "postgres")
            // Not the default `VOUCH_STORE_URL`: the configuration's
            // environment layer rejects that name as a malformed `VOUCH_…`
            // setting.
            .env("VOUCH_STORE__URL_ENV", "AUDIT_TEST_DATABASE_URL")
            .env("AUDIT_TEST_DATABASE_URL", url)
            .env_remove("RUST_LOG"),
        stdin.as_bytes(),
    );
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

#[test]
fn processes_of_two_replicas_ingesting_at_once_add_up() {
    let Some(cluster) = Cluster::start() else {
        return;
    };
    let url = cluster.url();
    let root = tempfile::tempdir().unwrap();
    let project = root.path().join("project");
    std::fs::create_dir_all(project.join(".git")).unwrap();
    let (a, b) = (root.path().join("a"), root.path().join("b"));
    let lines = |tag: &str, n: usize| -> String {
        (0..n)
            .map(|i| {
                let templates = ["git status", "cargo test", "npm run build"];
                let event = pi(
                    &project,
                    &format!("{tag}-{i}"),
                    templates[i % templates.len()],
                    "user_approved",
                );
                format!("{event}\n")
            })
            .collect()
    };
    // Replica a's first process mints the key; b gets a copy.
    let first = vouch_audit(&a, &url, &["ingest"], &lines("first", 3));
    assert_eq!(first["counted"], 3, "{first}");
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(b.join("state"))
        .unwrap();
    std::fs::copy(
        a.join("state").join(KEY_FILE),
        b.join("state").join(KEY_FILE),
    )
    .unwrap();
    // Six processes at once, three per replica, each with its own writer
    // and caches.
    const EACH: usize = 60;
    let processes: Vec<_> = (0..6)
        .map(|p| {
            let home = if p % 2 == 0 { a.clone() } else { b.clone() };
            let (url, input) = (url.clone(), lines(&format!("p{p}"), EACH));
            std::thread::spawn(move || vouch_audit(&home, &url, &["ingest"], &input))
        })
        .collect();
    for process in processes {
        let summary = process.join().unwrap();
        assert_eq!(summary["counted"], EACH, "{summary}");
    }
    for home in [&a, &b] {
        let report = vouch_audit(
            home,
            &url,
            &[
                "report", "--scope", "all", "--format", "json", "--days", "30",
            ],
            "",
        );
        assert_eq!(report["totals"]["observations"], 3 + 6 * EACH, "{report:#}");
    }
    assert!(
        !a.join("state")
            .join(vouch::audit::db::DATABASE_FILE)
            .exists()
    );
}
