//! One source of truth for the schema: the SQLite migrations
//! (`migrations/state/`, `migrations/audit/`) are the source, and the
//! PostgreSQL ones (`migrations/postgres/…`) are translations this test
//! checks. After migrating both backends from scratch, they have the same
//! tables, and each table the same columns in the same order, with the same
//! nullability and the same kind of value (64-bit integer, text or bytes),
//! and the same number of schema versions per component.
//!
//! PostgreSQL runs in a throwaway cluster ([`cluster`]); without a
//! PostgreSQL installation the tests say why and pass, or under
//! `VOUCH_TEST_STRICT=1` fail.

use std::collections::BTreeMap;
use std::path::Path;

use vouch::audit::db::{Db, MIGRATIONS as AUDIT_MIGRATIONS};
use vouch::config::{Config, StoreBackend, StoreConfig};
use vouch::store::Store;

/// The shared throwaway cluster (`support::postgres`), one per test, that
/// answers `None` (after printing why) where PostgreSQL is not installed,
/// and under strict mode fails the test there (`support::strict`).
pub(crate) mod cluster {
    pub(crate) struct Cluster(crate::support::postgres::Cluster);

    impl Cluster {
        pub(crate) fn start() -> Option<Cluster> {
            match crate::support::postgres::Cluster::start() {
                Ok(cluster) => Some(Cluster(cluster)),
                Err(skip) => match crate::support::strict::skip(&skip.0) {
                    Ok(()) => None,
                    Err(failure) => panic!("{failure}"),
                },
            }
        }

        pub(crate) fn url(&self) -> String {
            self.0.url()
        }

        /// A direct connection to the test database.
        pub(crate) fn client(&self) -> postgres::Client {
            postgres::Client::connect(&self.url(), postgres::NoTls).unwrap()
        }
    }
}

/// The `[store]` section for the cluster at `url_env`'s URL.
pub(crate) fn postgres_store() -> StoreConfig {
    let mut store = Config::defaults().unwrap().store;
    store.backend = StoreBackend::Postgres;
    store.pool_size = 4;
    store
}

/// Table → columns in order: (name, nullable, kind).
type Schema = BTreeMap<String, Vec<(String, bool, String)>>;

/// The kind of value a declared type holds, in words both backends share;
/// anything else is named with its backend, so it never matches.
fn kind(backend: &str, declared: &str) -> String {
    match declared.to_ascii_lowercase().as_str() {
        // Every integer is 64-bit on both sides: PostgreSQL's narrower
        // `integer` and `smallint` are not the same kind.
        "integer" if backend == "sqlite" => "int64".to_owned(),
        "bigint" if backend == "postgres" => "int64".to_owned(),
        "text" => "text".to_owned(),
        "blob" if backend == "sqlite" => "bytes".to_owned(),
        "bytea" if backend == "postgres" => "bytes".to_owned(),
        other => format!("{backend}:{other}"),
    }
}

fn sqlite_schema(path: &Path) -> Schema {
    let conn = rusqlite::Connection::open(path).unwrap();
    let tables: Vec<String> = conn
        .prepare(
            "SELECT name FROM sqlite_schema WHERE type = 'table' AND name NOT LIKE 'sqlite_%' \
             ORDER BY name",
        )
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    let mut schema = Schema::new();
    for table in tables {
        let columns = conn
            .prepare(&format!("PRAGMA table_info(\"{table}\")"))
            .unwrap()
            .query_map([], |r| {
                let name: String = r.get(1)?;
                let declared: String = r.get(2)?;
                let not_null: bool = r.get(3)?;
                // A key column never holds NULL (SQLite reports a rowid
                // alias as nullable; it cannot be).
                let key: i64 = r.get(5)?;
                Ok((name, !not_null && key == 0, kind("sqlite", &declared)))
            })
            .unwrap()
            .collect::<Result<Vec<_>, _>>()
            .unwrap();
        schema.insert(table, columns);
    }
    schema
}

fn postgres_schema(client: &mut postgres::Client) -> Schema {
    let mut schema = Schema::new();
    for row in client
        .query(
            "SELECT table_name::text, column_name::text, is_nullable::text, data_type::text \
             FROM information_schema.columns \
             WHERE table_schema = 'public' AND table_name <> 'vouch_schema' \
             ORDER BY table_name, ordinal_position",
            &[],
        )
        .unwrap()
    {
        let table: String = row.get(0);
        let nullable: String = row.get(2);
        let declared: String = row.get(3);
        schema.entry(table).or_default().push((
            row.get(1),
            nullable == "YES",
            kind("postgres", &declared),
        ));
    }
    schema
}

/// The rows of `want` and `have` that differ, one line per table.
fn differences(want: &Schema, have: &Schema) -> Vec<String> {
    let mut out = Vec::new();
    for (table, columns) in want {
        match have.get(table) {
            None => out.push(format!("`{table}`: missing on PostgreSQL")),
            Some(other) if other != columns => {
                out.push(format!(
                    "`{table}`: SQLite {columns:?}\n   PostgreSQL {other:?}"
                ));
            }
            Some(_) => {}
        }
    }
    for table in have.keys().filter(|t| !want.contains_key(*t)) {
        out.push(format!("`{table}`: only on PostgreSQL"));
    }
    out
}

fn migration_files(dir: &str) -> usize {
    std::fs::read_dir(Path::new(env!("CARGO_MANIFEST_DIR")).join(dir))
        .unwrap()
        .filter_map(Result::ok)
        .filter(|e| e.file_name().to_string_lossy().ends_with(".sql"))
        .count()
}

#[test]
fn postgres_migrations_translate_the_sqlite_ones() {
    let Some(cluster) = cluster::Cluster::start() else {
        return;
    };
    // SQLite, the source: both files migrated from scratch.
    let home = tempfile::tempdir().unwrap();
    let state = home.path().join("state");
    let store = Store::open(&state).unwrap();
    let sqlite_state = sqlite_schema(store.path().unwrap());
    drop(store);
    let audit = Db::open(&state, std::time::Duration::from_secs(5)).unwrap();
    let sqlite_audit = sqlite_schema(audit.path().unwrap());
    drop(audit);
    assert!(sqlite_state.len() >= 7 && sqlite_audit.len() >= 7);
    let shared: Vec<&String> = sqlite_state
        .keys()
        .filter(|t| sqlite_audit.contains_key(*t))
        .collect();
    assert!(
        shared.is_empty(),
        "state and audit share one PostgreSQL schema, so no table name may be in both: \
         {shared:?}"
    );

    // PostgreSQL, the translation: both components in one database.
    let url = cluster.url();
    let cfg = postgres_store();
    let env = |name: &str| (name == cfg.url_env).then(|| url.clone());
    let store = Store::open_configured(&state, &cfg, &env, false).unwrap();
    assert_eq!(store.backend_name(), "postgres");
    let audit = Db::open_postgres(Some(&url), &cfg).unwrap();
    assert_eq!(audit.path(), None);
    let mut client = cluster.client();
    let mut postgres = postgres_schema(&mut client);
    let postgres_audit: Schema = sqlite_audit
        .keys()
        .filter_map(|t| postgres.remove_entry(t))
        .collect();

    let mut problems = differences(&sqlite_state, &postgres);
    problems.extend(differences(&sqlite_audit, &postgres_audit));
    assert!(
        problems.is_empty(),
        "the PostgreSQL migrations no longer match the SQLite ones:\n{}",
        problems.join("\n")
    );

    // The same versions, step for step.
    let mut versions = |component: &str| -> i64 {
        client
            .query_one(
                "SELECT max(version) FROM vouch_schema WHERE component = $1",
                &[&component],
            )
            .unwrap()
            .get(0)
    };
    assert_eq!(
        versions("state"),
        i64::try_from(migration_files("migrations/state")).unwrap()
    );
    assert_eq!(
        versions("audit"),
        i64::try_from(AUDIT_MIGRATIONS.len()).unwrap()
    );
    assert_eq!(
        migration_files("migrations/postgres/state"),
        migration_files("migrations/state")
    );
    assert_eq!(
        migration_files("migrations/postgres/audit"),
        migration_files("migrations/audit")
    );
}
