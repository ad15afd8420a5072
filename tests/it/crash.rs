//! The crash test (issue 14): `kill -9` of the real `vouch serve` while
//! reviews, grant mints and grant consumption are in flight; restart on the
//! same home; then `PRAGMA integrity_check` is `ok`, no grant consumed
//! before the crash (or in flight at it) can be consumed again, and the
//! tripped breaker of a turn is still tripped. The policy audit rides along:
//! pi decision events are ingested while the kill lands, and after the
//! restart `audit.sqlite` passes `integrity_check` and its totals are never
//! lower than before the crash plus every ingest that was answered (only
//! what was in flight at the kill may be missing).
//!
//! Three rounds by default (in `cargo test`); the long form is
//! `VOUCH_CRASH_ROUNDS=50 cargo test --release --test it crash -- --nocapture`.

use std::path::Path;
use std::time::Duration;

use serde_json::{Value, json};

use crate::support::model_server::{ModelServer, Reply, Script, verdict};
use crate::support::proof::{Service, token};
use crate::support::{AUDIT_REPORT_ALL, audit_observations};

fn config(model: &ModelServer) -> String {
    format!(
        "[reviewer]\nprovider = \"openai\"\nbase_url = \"{}\"\napi_key_env = \"\"\ntimeout_ms = 5000\n\n\
         [turn]\nmax_reviews = 1000\n\n[server]\nrate_limit_per_second = 100000\nmax_concurrent_reviews = 64\n",
        model.base_url()
    )
}

fn review(session: &str, turn: &str, command: &str, grant: bool) -> Value {
    json!({"session_id": session, "turn_id": turn, "surface": "bash", "command": command,
           "cwd": "/srv/app", "home": "/home/dev", "issue_grant": grant,
           "transcript": [{"role": "user", "text": "please build it"}]})
}

async fn post(
    http: &reqwest::Client,
    service: &Service,
    token: &str,
    path: &str,
    body: &Value,
) -> Option<Value> {
    let response = http
        .post(service.url(path))
        .bearer_auth(token)
        .json(body)
        .send()
        .await
        .ok()?;
    response.json().await.ok()
}

/// Mints `n` grants; returns (grant token, the request it is for).
async fn mint(
    http: &reqwest::Client,
    service: &Service,
    token: &str,
    round: u32,
    n: u32,
) -> Vec<(String, Value)> {
    let mut grants = Vec::new();
    for i in 0..n {
        let request = review(
            "crash",
            &format!("r{round}-g{i}"),
            &format!("cargo build -p g{round}x{i}"),
            true,
        );
        let decision = post(http, service, token, "/v1/review", &request)
            .await
            .unwrap();
        assert_eq!(decision["decision"], "allow", "{decision}");
        grants.push((
            decision["grant"]["token"].as_str().unwrap().to_owned(),
            request,
        ));
    }
    grants
}

async fn consume(
    http: &reqwest::Client,
    service: &Service,
    token: &str,
    grant: &(String, Value),
) -> Option<bool> {
    let body = json!({"session_id": "crash", "token": grant.0, "request": grant.1});
    post(http, service, token, "/v1/grants/consume", &body).await?["consumed"].as_bool()
}

fn integrity(home: &Path) -> String {
    integrity_of(&home.join("state").join(vouch::store::DATABASE_FILE))
}

fn integrity_of(db: &Path) -> String {
    let db = rusqlite::Connection::open(db).unwrap();
    db.query_row("PRAGMA integrity_check", [], |r| r.get::<_, String>(0))
        .unwrap()
}

/// Observations the audit has counted, over every project.
async fn audit_total(http: &reqwest::Client, service: &Service, operator: &str) -> u64 {
    audit_observations(http, &service.url(AUDIT_REPORT_ALL), operator).await
}

/// Posts batches of new pi decision events to `listen` until the service
/// stops answering; returns how many events the answered batches counted
/// (each answer comes after its transaction committed).
async fn ingest_until_killed(
    http: reqwest::Client,
    listen: String,
    token: String,
    label: String,
) -> u64 {
    let mut acknowledged = 0;
    for batch in 0..10_000u32 {
        let events: Vec<Value> = (0..20)
            .map(|e| {
                json!({"requestId": format!("{label}-b{batch}-e{e}"), "surface": "bash",
                       "value": "git status", "result": "allow", "resolution": "user_approved",
                       "origin": null, "agentName": "main", "matchedPattern": null,
                       "cwd": "/srv/app"})
            })
            .collect();
        let answered = async {
            let response = http
                .post(format!("http://{listen}/v1/audit/events"))
                .bearer_auth(&token)
                .json(&events)
                .send()
                .await
                .ok()?;
            response.json::<Value>().await.ok()?["counted"].as_u64()
        };
        match answered.await {
            Some(counted) => acknowledged += counted,
            None => break,
        }
    }
    acknowledged
}

/// Trips the breaker of turn `brk` with three model denials in a row.
async fn trip_breaker(http: &reqwest::Client, service: &Service, token: &str) -> String {
    let mut last = Value::Null;
    for i in 0..4 {
        last = post(
            http,
            service,
            token,
            "/v1/review",
            &review(
                "crash-brk",
                "brk",
                &format!("git push --force BRK{i}"),
                false,
            ),
        )
        .await
        .unwrap();
    }
    assert_eq!(last["stage"], "breaker", "the breaker did not trip: {last}");
    last["decision"].as_str().unwrap().to_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kill_9_under_load_loses_no_consumed_grant_and_keeps_the_breaker() {
    let rounds: u32 = std::env::var("VOUCH_CRASH_ROUNDS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(3);
    let script = Script::always(
        Reply::verdict(
            json!({"outcome": "allow", "risk_level": "low", "user_authorization": "high",
        "rationale": "asked for", "suggestion": null}),
        )
        .delayed(Duration::from_millis(5)),
    )
    .rule("BRK", Reply::verdict(verdict("deny", "high")));
    let model = ModelServer::with_script(script).await;
    model.set_max_recorded(100);
    let home = tempfile::tempdir().unwrap();
    let http = reqwest::Client::builder()
        .timeout(Duration::from_secs(10))
        .build()
        .unwrap();
    let mut service = Service::start(home.path(), &config(&model));
    let token = token(home.path(), "adapter");
    let operator = crate::support::proof::token(home.path(), "operator");
    let audit_db = home
        .path()
        .join("state")
        .join(vouch::audit::db::DATABASE_FILE);
    let mut acknowledged_total = 0u64;
    let breaker_decision = trip_breaker(&http, &service, &token).await;
    let mut spent: Vec<((String, Value), bool)> = Vec::new();
    let (mut in_flight_total, mut consumed_total) = (0usize, 0usize);
    for round in 0..rounds {
        let grants = mint(&http, &service, &token, round, 24).await;
        let audit_before = audit_total(&http, &service, &operator).await;
        let ingests: Vec<_> = (0..4)
            .map(|t| {
                tokio::spawn(ingest_until_killed(
                    http.clone(),
                    service.listen.clone(),
                    token.clone(),
                    format!("crash-r{round}-t{t}"),
                ))
            })
            .collect();
        // Concurrent: consumption of every new grant, fresh reviews that
        // mint more, and hard denies; the kill lands while they run.
        let mut tasks = Vec::new();
        for (i, grant) in grants.iter().cloned().enumerate() {
            let (h, t, at) = (http.clone(), token.clone(), UrlOnly(service.listen.clone()));
            tasks.push(tokio::spawn(async move {
                tokio::time::sleep(Duration::from_millis(u64::try_from(i).unwrap() * 3)).await;
                let outcome = at.consume(&h, &t, &grant).await;
                (grant, outcome)
            }));
            let (h, t, url) = (http.clone(), token.clone(), service.url("/v1/review"));
            tokio::spawn(async move {
                let body = review(
                    "crash-load",
                    &format!("r{round}-l{i}"),
                    &format!("cargo test -p l{round}x{i}"),
                    true,
                );
                let _ = h.post(url).bearer_auth(&t).json(&body).send().await;
            });
        }
        tokio::time::sleep(Duration::from_millis(30 + u64::from(round) * 11 % 40)).await;
        service.kill9();
        for t in tasks {
            let (grant, outcome) = t.await.unwrap();
            match outcome {
                Some(true) => consumed_total += 1,
                None => in_flight_total += 1,
                Some(false) => panic!("a fresh grant was refused before the crash"),
            }
            spent.push((grant, outcome == Some(true)));
        }
        let mut acknowledged = 0;
        for t in ingests {
            acknowledged += t.await.unwrap();
        }
        acknowledged_total += acknowledged;
        assert_eq!(integrity(home.path()), "ok", "round {round}: after kill -9");
        assert_eq!(
            integrity_of(&audit_db),
            "ok",
            "round {round}: audit.sqlite after kill -9"
        );
        service = Service::start(home.path(), &config(&model));
        assert_eq!(integrity(home.path()), "ok", "round {round}: after restart");
        let audit_after = audit_total(&http, &service, &operator).await;
        assert!(
            audit_after >= audit_before + acknowledged,
            "round {round}: audit totals fell across the crash: {audit_after} < {audit_before} \
             before + {acknowledged} acknowledged"
        );
        // Every grant whose consumption answered true, and every one whose
        // answer the crash swallowed: at most one more success each (the
        // swallowed ones may not have committed), and never a second.
        for (grant, was_consumed) in &spent {
            let first = consume(&http, &service, &token, grant).await.unwrap();
            let second = consume(&http, &service, &token, grant).await.unwrap();
            assert!(
                !(first && *was_consumed),
                "round {round}: a consumed grant was consumable again after the crash"
            );
            assert!(!second, "round {round}: a grant consumed twice");
        }
        let after = post(
            &http,
            &service,
            &token,
            "/v1/review",
            &review("crash-brk", "brk", "git push --force BRK-again", false),
        )
        .await
        .unwrap();
        assert_eq!(
            after["stage"], "breaker",
            "round {round}: breaker lost across the crash: {after}"
        );
        assert_eq!(after["decision"], breaker_decision.as_str());
    }
    assert!(
        acknowledged_total > 0,
        "no audit ingest was answered before a kill; the audit leg tested nothing"
    );
    eprintln!(
        "crash: {rounds} kill -9 rounds, {} grants consumed before a crash, {} consumptions in flight at one, \
         0 consumed twice, integrity ok, breaker intact; {acknowledged_total} audit events \
         acknowledged during kills, none lost",
        consumed_total, in_flight_total
    );
}

/// The consume call against an address (the task outlives the `Service`).
struct UrlOnly(String);

impl UrlOnly {
    async fn consume(
        &self,
        http: &reqwest::Client,
        token: &str,
        grant: &(String, Value),
    ) -> Option<bool> {
        let body = json!({"session_id": "crash", "token": grant.0, "request": grant.1});
        let response = http
            .post(format!("http://{}/v1/grants/consume", self.0))
            .bearer_auth(token)
            .json(&body)
            .send()
            .await
            .ok()?;
        response.json::<Value>().await.ok()?["consumed"].as_bool()
    }
}
