//! Replicas sharing one state (issue 27): three real `vouch serve`
//! processes answer for the same sessions, and whatever one of them
//! decided, spent or counted holds on the other two. One test body per
//! property, run against both store backends:
//!
//! - `sqlite`: the three replicas share one `VOUCH_HOME` (one machine, one
//!   `vouch.sqlite`, one `audit.sqlite`);
//! - `postgres`: each replica has its own `VOUCH_HOME` holding copies of the
//!   first one's `adapter.token`, `operator.token` and `hmac.key` (as a team
//!   distributes them) and `[store] backend = "postgres"`, its URL in
//!   `VOUCH_STORE_URL`, on a throwaway cluster
//!   ([`crate::support::postgres`]). Without PostgreSQL installed these
//!   print `skipped: <reason>` and return, or under `VOUCH_TEST_STRICT=1`
//!   (as `.ci/run` runs them, after installing it) fail.
//!
//! Run them with `cargo test --release --test it replicas::` (one backend:
//! `replicas:: sqlite` or `replicas:: postgres`). Each test starts its own
//! replicas (and cluster), so they run in parallel like the rest.

use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::support::model_server::{ModelServer, Reply, Script, verdict};
use crate::support::postgres::Cluster;
use crate::support::serve::Running;
use crate::support::strict;
use crate::support::{AUDIT_REPORT_ALL, audit_observations};

/// How many replicas every test runs.
const REPLICAS: usize = 3;

/// The reviewer deadline the replicas run with; the service's request
/// deadline is this plus 5 s (`http::limits::REQUEST_TIMEOUT_SLACK`).
const REVIEW_TIMEOUT_MS: u64 = 3000;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Backend {
    Sqlite,
    Postgres,
}

/// One test body, instantiated once per backend:
/// `replicas::<name>::sqlite` and `replicas::<name>::postgres`.
macro_rules! both_backends {
    ($($name:ident),* $(,)?) => {$(
        mod $name {
            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn sqlite() {
                super::$name(super::Backend::Sqlite).await;
            }

            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn postgres() {
                super::$name(super::Backend::Postgres).await;
            }
        }
    )*};
}

both_backends!(
    one_grant_raced_on_every_replica_has_one_winner,
    a_turn_budget_holds_across_replicas,
    denials_on_several_replicas_open_the_breaker_on_all,
    an_override_and_a_break_glass_are_used_once_across_replicas,
    a_verdict_made_on_one_replica_is_a_cache_hit_on_another,
    kill_9_of_one_replica_under_load_spends_no_grant_twice,
);

mod audit_totals_add_up_over_replicas {
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn sqlite() {
        super::audit_totals_add_up_over_replicas(super::Backend::Sqlite).await;
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn postgres() {
        super::audit_totals_add_up_over_replicas(super::Backend::Postgres).await;
    }
}

/// Three running replicas over one state, the model server they call, and
/// the cluster when the backend is PostgreSQL. Fields drop in order: the
/// replicas first (killed), then their homes, then the cluster.
struct Replicas {
    nodes: Vec<Option<Running>>,
    homes: Vec<tempfile::TempDir>,
    api: Api,
    backend: Backend,
    cluster: Option<Cluster>,
}

/// What a client of the replicas holds (cheap to clone into tasks).
#[derive(Clone)]
struct Api {
    /// Base URLs (`http://127.0.0.1:port`), usable after a replica died.
    urls: Vec<String>,
    adapter: String,
    operator: String,
    http: reqwest::Client,
}

impl std::ops::Deref for Replicas {
    type Target = Api;

    fn deref(&self) -> &Api {
        &self.api
    }
}

/// The trusted overlay every replica runs with: the reviewer at `model`,
/// limits open enough that the store, not the limiter, is what is tested;
/// `extra` is appended (more sections).
fn config(backend: Backend, model: &ModelServer, extra: &str) -> String {
    let mut config = format!(
        "[reviewer]\nprovider = \"openai\"\nbase_url = \"{}\"\napi_key_env = \"\"\n\
         timeout_ms = {REVIEW_TIMEOUT_MS}\n\n\
         [server]\nrate_limit_per_second = 100000\nmax_concurrent_reviews = 64\nshutdown_grace_ms = 2000\n\n{extra}\n",
        model.base_url()
    );
    if backend == Backend::Postgres {
        config.push_str("\n[store]\nbackend = \"postgres\"\n");
    }
    config
}

impl Replicas {
    /// Starts the replicas (and the cluster); `None` (after printing why)
    /// when the backend cannot run here.
    async fn start(backend: Backend, model: &ModelServer, extra: &str) -> Option<Replicas> {
        let config = config(backend, model, extra);
        let http = reqwest::Client::builder()
            .timeout(Duration::from_secs(30))
            .build()
            .unwrap();
        match backend {
            Backend::Sqlite => {
                let home = tempfile::tempdir().unwrap();
                let nodes: Vec<Running> = (0..REPLICAS)
                    .map(|_| Running::start(home.path(), &config, &[]))
                    .collect();
                Some(Replicas::assemble(nodes, vec![home], http, backend, None))
            }
            Backend::Postgres => {
                let cluster = match Cluster::start() {
                    Ok(cluster) => cluster,
                    Err(skip) => match strict::skip(&skip.0) {
                        Ok(()) => return None,
                        Err(failure) => panic!("{failure}"),
                    },
                };
                let url = cluster.url();
                let env = [("VOUCH_STORE_URL", url.as_str())];
                let homes: Vec<tempfile::TempDir> = (0..REPLICAS)
                    .map(|_| tempfile::tempdir().unwrap())
                    .collect();
                let first = Running::start(homes[0].path(), &config, &env);
                let first_state = homes[0].path().join("state");
                ensure_hmac_key(&http, &first, &first_state).await;
                let mut nodes = vec![first];
                for home in &homes[1..] {
                    distribute(&first_state, &home.path().join("state"));
                    nodes.push(Running::start(home.path(), &config, &env));
                }
                Some(Replicas::assemble(
                    nodes,
                    homes,
                    http,
                    backend,
                    Some(cluster),
                ))
            }
        }
    }

    fn assemble(
        nodes: Vec<Running>,
        homes: Vec<tempfile::TempDir>,
        http: reqwest::Client,
        backend: Backend,
        cluster: Option<Cluster>,
    ) -> Replicas {
        let adapter = nodes[0].token("adapter");
        let operator = nodes[0].token("operator");
        for node in &nodes[1..] {
            assert_eq!(
                node.token("adapter"),
                adapter,
                "replicas disagree on the adapter token"
            );
        }
        Replicas {
            api: Api {
                urls: nodes.iter().map(|n| n.url("")).collect(),
                adapter,
                operator,
                http,
            },
            nodes: nodes.into_iter().map(Some).collect(),
            homes,
            backend,
            cluster,
        }
    }

    /// `kill -9` of `replica` (dropping a [`Running`] kills it).
    fn kill9(&mut self, replica: usize) {
        drop(self.nodes[replica].take());
    }
}

impl Api {
    fn url(&self, replica: usize, path: &str) -> String {
        format!("{}{path}", self.urls[replica % REPLICAS])
    }

    /// `POST /v1/review` on `replica`: the decision.
    async fn review(&self, replica: usize, body: &Value) -> Value {
        post(
            &self.http,
            &self.url(replica, "/v1/review"),
            &self.adapter,
            body,
        )
        .await
        .unwrap()
    }

    /// `POST /v1/grants/consume` on `replica`: whether it was consumed.
    async fn consume(&self, replica: usize, body: &Value) -> bool {
        consume(
            &self.http,
            &self.url(replica, "/v1/grants/consume"),
            &self.adapter,
            body,
        )
        .await
        .unwrap()
    }

    /// `vouch`'s audit total (every project) as `replica` reports it.
    async fn audit_total(&self, replica: usize) -> u64 {
        audit_observations(
            &self.http,
            &self.url(replica, AUDIT_REPORT_ALL),
            &self.operator,
        )
        .await
    }

    /// A review on `replica` that must be allowed with a grant: the body
    /// that consumes the grant.
    async fn mint(&self, replica: usize, request: &Value) -> Value {
        let d = self.review(replica, request).await;
        assert_eq!(decided(&d), ("allow", "reviewer"), "{d}");
        let token = d["grant"]["token"].as_str().unwrap().to_owned();
        json!({"session_id": request["session_id"], "token": token, "request": request})
    }

    /// An operator `POST` on `replica`: (status, body).
    async fn operator_post(&self, replica: usize, path: &str, body: &Value) -> (u16, Value) {
        let response = self
            .http
            .post(self.url(replica, path))
            .bearer_auth(&self.operator)
            .json(body)
            .send()
            .await
            .unwrap();
        let status = response.status().as_u16();
        (status, response.json().await.unwrap_or(Value::Null))
    }
}

/// The audit's `hmac.key` is created by the first audit write; a team copies
/// it from a replica that has one. One ingested event on `first` makes it.
async fn ensure_hmac_key(http: &reqwest::Client, first: &Running, state: &Path) {
    let key = state.join(vouch::audit::keys::KEY_FILE);
    let answer = post(
        http,
        &first.url("/v1/audit/events"),
        &first.token("adapter"),
        &events("replicas-key", 1),
    )
    .await;
    assert!(
        answer.is_some_and(|a| a["counted"] == 1),
        "the key-making ingest failed"
    );
    let deadline = Instant::now() + Duration::from_secs(10);
    while !key.is_file() {
        assert!(
            Instant::now() < deadline,
            "{} never appeared",
            key.display()
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// Copies the files every replica needs the same copy of into `to` (a new
/// state directory, `0700`, files `0600`).
fn distribute(from: &Path, to: &Path) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::create_dir_all(to).unwrap();
    std::fs::set_permissions(to, std::fs::Permissions::from_mode(0o700)).unwrap();
    for name in [
        "adapter.token",
        "operator.token",
        vouch::audit::keys::KEY_FILE,
    ] {
        std::fs::copy(from.join(name), to.join(name)).unwrap();
        std::fs::set_permissions(to.join(name), std::fs::Permissions::from_mode(0o600)).unwrap();
    }
}

/// `POST` `body` with `token`; the JSON answer, `None` on a transport error
/// or an answer that is not JSON (a killed replica).
async fn post(http: &reqwest::Client, url: &str, token: &str, body: &Value) -> Option<Value> {
    let response = http
        .post(url)
        .bearer_auth(token)
        .json(body)
        .send()
        .await
        .ok()?;
    response.json().await.ok()
}

async fn consume(http: &reqwest::Client, url: &str, token: &str, body: &Value) -> Option<bool> {
    post(http, url, token, body).await?["consumed"].as_bool()
}

fn allow_script(delay_ms: u64) -> Script {
    Script::always(
        Reply::verdict(json!({"outcome": "allow", "risk_level": "low",
            "user_authorization": "high", "rationale": "asked for", "suggestion": null}))
        .delayed(Duration::from_millis(delay_ms)),
    )
}

fn review(session: &str, turn: &str, command: &str, grant: bool) -> Value {
    json!({"session_id": session, "turn_id": turn, "surface": "bash", "command": command,
           "cwd": "/srv/app", "home": "/home/dev", "issue_grant": grant,
           "transcript": [{"role": "user", "text": "please build it"}]})
}

fn decided(d: &Value) -> (&str, &str) {
    (
        d["decision"].as_str().unwrap_or("?"),
        d["stage"].as_str().unwrap_or("?"),
    )
}

/// 64 clients, spread over the three replicas, consume one grant at once;
/// 20 rounds, exactly one winner each.
async fn one_grant_raced_on_every_replica_has_one_winner(backend: Backend) {
    let model = ModelServer::with_script(allow_script(0)).await;
    let Some(r) = Replicas::start(backend, &model, "[turn]\nmax_reviews = 1000\n").await else {
        return;
    };
    let api = Arc::new(r.api.clone());
    for round in 0..20 {
        let request = review(
            "race",
            &format!("g{round}"),
            &format!("cargo build -p race{round}"),
            true,
        );
        let body = r.mint(round, &request).await;
        let barrier = Arc::new(tokio::sync::Barrier::new(64));
        let tasks: Vec<_> = (0..64)
            .map(|client| {
                let (r, body, barrier) = (Arc::clone(&api), body.clone(), Arc::clone(&barrier));
                tokio::spawn(async move {
                    barrier.wait().await;
                    r.consume(client, &body).await
                })
            })
            .collect();
        let mut winners = 0;
        for t in tasks {
            winners += usize::from(t.await.unwrap());
        }
        assert_eq!(
            winners, 1,
            "{backend:?} round {round}: {winners} clients consumed one grant"
        );
    }
}

/// 48 reviews of one turn at once, spread over the replicas, each needing
/// the model, with `turn.max_reviews = 5`: at most 5 model calls, and every
/// answer beyond the budget fails closed at stage `budget`.
async fn a_turn_budget_holds_across_replicas(backend: Backend) {
    let model = ModelServer::with_script(allow_script(20)).await;
    let Some(r) = Replicas::start(backend, &model, "[turn]\nmax_reviews = 5\n").await else {
        return;
    };
    let api = Arc::new(r.api.clone());
    let barrier = Arc::new(tokio::sync::Barrier::new(48));
    let tasks: Vec<_> = (0..48)
        .map(|i| {
            let (r, barrier) = (Arc::clone(&api), Arc::clone(&barrier));
            tokio::spawn(async move {
                barrier.wait().await;
                r.review(
                    i,
                    &review(
                        "budget",
                        "one-turn",
                        &format!("cargo test -p budget{i}"),
                        false,
                    ),
                )
                .await
            })
        })
        .collect();
    let mut allows = 0;
    for t in tasks {
        let d = t.await.unwrap();
        match decided(&d) {
            ("allow", "reviewer") => allows += 1,
            (decision, "budget") => assert_ne!(decision, "allow", "{d}"),
            _ => panic!("{backend:?}: neither a review nor the budget: {d}"),
        }
    }
    let calls = model.requests().len();
    assert!(
        calls <= 5,
        "{backend:?}: {calls} model calls in a turn whose budget is 5"
    );
    assert!((1..=5).contains(&allows), "{backend:?}: {allows} allows");
}

/// Three model denials of one turn, each on another replica, open the
/// turn's breaker: the next review of that turn stops at `breaker` on
/// every replica without calling the model; another turn is unaffected.
async fn denials_on_several_replicas_open_the_breaker_on_all(backend: Backend) {
    let script = allow_script(0).rule("BRKCMD", Reply::verdict(verdict("deny", "high")));
    let model = ModelServer::with_script(script).await;
    // The shipped `breaker.consecutive_denials` (3).
    let Some(r) = Replicas::start(backend, &model, "[turn]\nmax_reviews = 1000\n").await else {
        return;
    };
    for i in 0..3 {
        let d = r
            .review(
                i,
                &review("brk", "t1", &format!("git push --force BRKCMD{i}"), false),
            )
            .await;
        assert_eq!(decided(&d), ("deny", "reviewer"), "{d}");
    }
    assert_eq!(model.requests().len(), 3);
    for i in 0..REPLICAS {
        let d = r
            .review(
                i,
                &review("brk", "t1", &format!("cargo build -p after{i}"), false),
            )
            .await;
        assert_eq!(d["stage"], "breaker", "{backend:?} replica {i}: {d}");
        assert_ne!(d["decision"], "allow", "{d}");
    }
    assert_eq!(
        model.requests().len(),
        3,
        "{backend:?}: an open breaker called the model"
    );
    let other = r
        .review(1, &review("brk", "t2", "cargo build -p other-turn", false))
        .await;
    assert_eq!(decided(&other), ("allow", "reviewer"), "{other}");
}

/// Races the exact retry of `request` (fresh `turn_id`s, same hash) on every
/// replica, 4 clients each; the decisions.
async fn race_retry(r: &Arc<Api>, request: &Value, label: &str) -> Vec<Value> {
    let barrier = Arc::new(tokio::sync::Barrier::new(4 * REPLICAS));
    let tasks: Vec<_> = (0..4 * REPLICAS)
        .map(|k| {
            let (r, barrier) = (Arc::clone(r), Arc::clone(&barrier));
            let mut body = request.clone();
            body["turn_id"] = format!("{label}-retry-{k}").into();
            tokio::spawn(async move {
                barrier.wait().await;
                r.review(k, &body).await
            })
        })
        .collect();
    let mut decisions = Vec::new();
    for t in tasks {
        decisions.push(t.await.unwrap());
    }
    decisions
}

/// An exact-retry override approved on one replica, and a break glass
/// challenged on one and confirmed on another, each allow exactly one of 12
/// concurrent exact retries spread over the three replicas.
async fn an_override_and_a_break_glass_are_used_once_across_replicas(backend: Backend) {
    let script = Script::default()
        .rule(
            "Trusted override from a human operator",
            Reply::verdict(verdict("allow", "low")),
        )
        .rule("OVRCMD", Reply::verdict(verdict("deny", "medium")))
        .rule("GLASSCMD", Reply::verdict(verdict("deny", "critical")));
    let model = ModelServer::with_script(script).await;
    let Some(r) = Replicas::start(backend, &model, "[turn]\nmax_reviews = 1000\n").await else {
        return;
    };
    let api = Arc::new(r.api.clone());

    let denied = review("ovr", "t0", "git push origin OVRCMD", false);
    let d = r.review(0, &denied).await;
    assert_eq!(decided(&d), ("deny", "reviewer"), "{d}");
    let (status, approval) = r
        .operator_post(1, "/v1/sessions/ovr/overrides", &json!({"selector": "1"}))
        .await;
    assert_eq!(status, 200, "{approval}");
    assert_eq!(approval["request_hash"], d["request_hash"]);
    let decisions = race_retry(&api, &denied, "ovr").await;
    let used: Vec<_> = decisions
        .iter()
        .filter(|d| d["decision"] == "allow")
        .collect();
    assert_eq!(
        used.len(),
        1,
        "{backend:?}: the override allowed {} retries: {decisions:?}",
        used.len()
    );
    assert_eq!(used[0]["stage"], "override", "{}", used[0]);

    let critical = review("bg", "t0", "git push origin GLASSCMD", false);
    let d = r.review(2, &critical).await;
    assert_eq!(decided(&d), ("deny", "reviewer"), "{d}");
    assert_eq!(d["risk_level"], "critical", "{d}");
    let (status, challenge) = r
        .operator_post(2, "/v1/sessions/bg/break-glass", &json!({}))
        .await;
    assert_eq!(status, 200, "{challenge}");
    let confirm = json!({"challenge_id": challenge["id"], "phrase": challenge["phrase"]});
    let (status, approval) = r
        .operator_post(0, "/v1/sessions/bg/break-glass/confirm", &confirm)
        .await;
    assert_eq!(
        status, 200,
        "{backend:?}: confirm on another replica: {approval}"
    );
    let calls_before = model.requests().len();
    let decisions = race_retry(&api, &critical, "bg").await;
    let used: Vec<_> = decisions
        .iter()
        .filter(|d| d["decision"] == "allow")
        .collect();
    assert_eq!(
        used.len(),
        1,
        "{backend:?}: break glass allowed {} retries: {decisions:?}",
        used.len()
    );
    assert_eq!(used[0]["stage"], "break_glass", "{}", used[0]);
    // The others were the cached critical denial or a fresh one; the
    // allowed one did not call the model.
    assert!(model.requests().len() - calls_before < 4 * REPLICAS);
}

/// A verdict made on one replica is a cache hit (stage `cache`, no model
/// call) on the others, in another turn.
async fn a_verdict_made_on_one_replica_is_a_cache_hit_on_another(backend: Backend) {
    let model = ModelServer::with_script(allow_script(0)).await;
    let Some(r) = Replicas::start(backend, &model, "[turn]\nmax_reviews = 1000\n").await else {
        return;
    };
    let first = r
        .review(0, &review("cache", "t0", "cargo build -p cached", false))
        .await;
    assert_eq!(decided(&first), ("allow", "reviewer"), "{first}");
    for i in 1..REPLICAS {
        let again = r
            .review(
                i,
                &review("cache", &format!("t{i}"), "cargo build -p cached", false),
            )
            .await;
        assert_eq!(
            decided(&again),
            ("allow", "cache"),
            "{backend:?} replica {i}: {again}"
        );
        assert!(again["review"].is_null(), "{again}");
    }
    assert_eq!(
        model.requests().len(),
        1,
        "{backend:?}: the cache was not shared"
    );
}

/// Pi decision events (idempotent by `requestId`).
fn events(label: &str, n: usize) -> Value {
    (0..n)
        .map(|e| {
            json!({"requestId": format!("{label}-e{e}"), "surface": "bash", "value": "git status",
                   "result": "allow", "resolution": "user_approved", "origin": null,
                   "agentName": "main", "matchedPattern": null, "cwd": "/srv/app"})
        })
        .collect()
}

/// Ingests and reviews spread over the replicas: every replica's report
/// counts every acknowledged event and every decision, once.
async fn audit_totals_add_up_over_replicas(backend: Backend) {
    let model = ModelServer::with_script(allow_script(0)).await;
    let Some(r) = Replicas::start(backend, &model, "[turn]\nmax_reviews = 1000\n").await else {
        return;
    };
    let api = Arc::new(r.api.clone());
    let before = r.audit_total(0).await;
    let tasks: Vec<_> = (0..REPLICAS * 4)
        .map(|b| {
            let r = Arc::clone(&api);
            tokio::spawn(async move {
                let answer = post(
                    &r.http,
                    &r.url(b, "/v1/audit/events"),
                    &r.adapter,
                    &events(&format!("b{b}"), 20),
                )
                .await
                .unwrap();
                answer["counted"].as_u64().unwrap()
            })
        })
        .collect();
    let mut acknowledged = 0;
    for t in tasks {
        acknowledged += t.await.unwrap();
    }
    assert_eq!(acknowledged, 20 * 4 * REPLICAS as u64);
    // A replayed batch (another replica) counts nothing twice.
    let replay = post(
        &r.http,
        &r.url(2, "/v1/audit/events"),
        &r.adapter,
        &events("b0", 20),
    )
    .await
    .unwrap();
    assert_eq!(replay["counted"], 0, "{backend:?}: {replay}");
    // Decisions are audited after the answer, by each replica's writer.
    let decisions = 9;
    for i in 0..decisions {
        let d = r
            .review(
                i,
                &review("audit", "t0", &format!("cargo build -p audited{i}"), false),
            )
            .await;
        assert_eq!(decided(&d), ("allow", "reviewer"), "{d}");
    }
    let expected = before + acknowledged + decisions as u64;
    let deadline = Instant::now() + Duration::from_secs(15);
    for i in 0..REPLICAS {
        loop {
            let total = r.audit_total(i).await;
            if total == expected {
                break;
            }
            assert!(
                total < expected && Instant::now() < deadline,
                "{backend:?} replica {i}: audit total {total}, expected {expected} \
                 ({before} before + {acknowledged} ingested + {decisions} decisions)"
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }
}

/// Posts batches of 20 new events to `url` until it stops answering or
/// `batches` were sent; the events the answered batches counted.
async fn ingest(
    http: reqwest::Client,
    url: String,
    token: String,
    label: String,
    batches: u32,
) -> u64 {
    let mut acknowledged = 0;
    for batch in 0..batches {
        match post(
            &http,
            &url,
            &token,
            &events(&format!("{label}-b{batch}"), 20),
        )
        .await
        {
            Some(answer) => acknowledged += answer["counted"].as_u64().unwrap_or(0),
            None => break,
        }
    }
    acknowledged
}

/// `kill -9` of one replica while grants are consumed, grants minted,
/// reviews made and audit events ingested on all three: no grant is
/// consumed twice (the survivors consume each again), the audit total is
/// never below what was acknowledged, and the survivors keep answering.
async fn kill_9_of_one_replica_under_load_spends_no_grant_twice(backend: Backend) {
    let model = ModelServer::with_script(allow_script(5)).await;
    model.set_max_recorded(100);
    let Some(mut r) = Replicas::start(backend, &model, "[turn]\nmax_reviews = 1000\n").await else {
        return;
    };
    let before = r.audit_total(0).await;
    let mut grants = Vec::new();
    for i in 0..36 {
        let request = review(
            "kill",
            &format!("m{i}"),
            &format!("cargo build -p kill{i}"),
            true,
        );
        grants.push(r.mint(i, &request).await);
    }
    let victim = 2;
    let ingests: Vec<_> = (0..REPLICAS)
        .map(|i| {
            // The victim's ingest runs until it dies; the survivors' a while.
            let batches = if i == victim { 100_000 } else { 15 };
            tokio::spawn(ingest(
                r.http.clone(),
                r.url(i, "/v1/audit/events"),
                r.adapter.clone(),
                format!("kill-{i}"),
                batches,
            ))
        })
        .collect();
    let mut consumes = Vec::new();
    for (i, body) in grants.iter().cloned().enumerate() {
        let (http, url, token) = (
            r.http.clone(),
            r.url(i, "/v1/grants/consume"),
            r.adapter.clone(),
        );
        consumes.push(tokio::spawn(async move {
            tokio::time::sleep(Duration::from_millis(u64::try_from(i).unwrap() * 4)).await;
            consume(&http, &url, &token, &body).await
        }));
        let (http, url, token) = (r.http.clone(), r.url(i, "/v1/review"), r.adapter.clone());
        tokio::spawn(async move {
            let body = review(
                "kill-load",
                &format!("l{i}"),
                &format!("cargo test -p load{i}"),
                true,
            );
            let _ = post(&http, &url, &token, &body).await;
        });
    }
    tokio::time::sleep(Duration::from_millis(100)).await;
    r.kill9(victim);
    let (mut consumed, mut lost) = (Vec::new(), 0);
    for (i, t) in consumes.into_iter().enumerate() {
        match t.await.unwrap() {
            Some(true) => consumed.push(true),
            Some(false) => panic!("{backend:?}: fresh grant {i} was refused"),
            None => {
                assert_eq!(
                    i % REPLICAS,
                    victim,
                    "a survivor failed to answer a consume"
                );
                lost += 1;
                consumed.push(false);
            }
        }
    }
    let mut acknowledged = 0;
    for t in ingests {
        acknowledged += t.await.unwrap();
    }
    assert!(
        acknowledged > 0,
        "no ingest was answered; the audit leg tested nothing"
    );
    for (i, body) in grants.iter().enumerate() {
        let survivor = i % 2;
        let first = r.consume(survivor, body).await;
        let second = r.consume(1 - survivor, body).await;
        assert!(
            !(first && consumed[i]),
            "{backend:?}: grant {i} was consumed again after the kill"
        );
        assert!(
            !second,
            "{backend:?}: grant {i} consumed twice by the survivors"
        );
    }
    for i in 0..2 {
        let d = r
            .review(
                i,
                &review(
                    "kill-after",
                    "t0",
                    &format!("cargo build -p survivor{i}"),
                    false,
                ),
            )
            .await;
        assert_eq!(
            decided(&d),
            ("allow", "reviewer"),
            "{backend:?} survivor {i}: {d}"
        );
    }
    let total = r.audit_total(0).await;
    assert!(
        total >= before + acknowledged,
        "{backend:?}: audit total {total} < {before} before + {acknowledged} acknowledged"
    );
    if r.backend == Backend::Sqlite {
        let db = rusqlite::Connection::open(
            r.homes[0]
                .path()
                .join("state")
                .join(vouch::store::DATABASE_FILE),
        )
        .unwrap();
        let check: String = db
            .query_row("PRAGMA integrity_check", [], |row| row.get(0))
            .unwrap();
        assert_eq!(check, "ok");
    }
    eprintln!(
        "replicas kill -9 ({backend:?}): {} grants consumed before the kill, {lost} unanswered by the victim, \
         none twice; {acknowledged} audit events acknowledged, total {total}",
        consumed.iter().filter(|c| **c).count()
    );
}

/// The harness itself: a cluster starts, answers, stops, starts again on
/// the same data, and its directory is gone once it is dropped.
#[test]
fn a_throwaway_cluster_starts_stops_and_keeps_its_data() {
    let mut cluster = match Cluster::start() {
        Ok(cluster) => cluster,
        Err(skip) => match strict::skip(&skip.0) {
            Ok(()) => return,
            Err(failure) => panic!("{failure}"),
        },
    };
    let root = cluster.root().to_path_buf();
    assert!(
        cluster
            .url()
            .starts_with("postgresql://postgres@/vouch?host=/")
    );
    cluster.query_value("CREATE TABLE kept (v int); INSERT INTO kept VALUES (42)");
    cluster.stop();
    assert!(
        !cluster.psql("vouch", "SELECT 1").status.success(),
        "a stopped cluster answered"
    );
    cluster.start_again();
    assert_eq!(cluster.query_value("SELECT v FROM kept"), "42");
    assert_eq!(cluster.query_value("SHOW listen_addresses"), "");
    drop(cluster);
    assert!(!root.exists(), "{} was left behind", root.display());
}

/// Every `vouch serve` answer during [`the_database_stopped_under_load_fails_closed_and_recovers`]:
/// when it was sent and answered, and what.
struct Answer {
    sent: Instant,
    answered: Instant,
    decision: Option<Value>,
}

/// PostgreSQL only: the database stops while three replicas are under load.
/// Every review that needs state fails closed (never an allow) with
/// `fault: state_unavailable`, each within the service's deadline; a hard
/// deny still answers; `/healthz` says not ready; a grant cannot be
/// consumed. Then the database starts again and the same replicas — not
/// restarted — answer reviews again, and the grant is still there.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_database_stopped_under_load_fails_closed_and_recovers() {
    let model = ModelServer::with_script(allow_script(5)).await;
    model.set_max_recorded(100);
    let Some(mut r) =
        Replicas::start(Backend::Postgres, &model, "[turn]\nmax_reviews = 1000\n").await
    else {
        return;
    };
    let deadline = Duration::from_millis(REVIEW_TIMEOUT_MS) + Duration::from_secs(5);
    let kept = review("db-down", "grant", "cargo build -p kept-grant", true);
    let kept = r.mint(0, &kept).await;
    for i in 0..REPLICAS {
        let health = r.http.get(r.url(i, "/healthz")).send().await.unwrap();
        assert_eq!(
            health.status(),
            200,
            "replica {i} not ready before the stop"
        );
    }

    let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let (http, urls, token) = (r.http.clone(), r.urls.clone(), r.adapter.clone());
    let load: Vec<_> = (0..REPLICAS * 2)
        .map(|client| {
            let (http, token, stop) = (http.clone(), token.clone(), Arc::clone(&stop));
            let url = format!("{}/v1/review", urls[client % REPLICAS]);
            tokio::spawn(async move {
                let mut answers = Vec::new();
                let mut n = 0u64;
                while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                    n += 1;
                    let body = review(
                        "db-down",
                        &format!("c{client}-{n}"),
                        &format!("cargo test -p c{client}x{n}"),
                        false,
                    );
                    let sent = Instant::now();
                    let decision = post(&http, &url, &token, &body).await;
                    answers.push(Answer {
                        sent,
                        answered: Instant::now(),
                        decision,
                    });
                    tokio::time::sleep(Duration::from_millis(5)).await;
                }
                answers
            })
        })
        .collect();
    tokio::time::sleep(Duration::from_millis(300)).await;

    let cluster = r.cluster.as_mut().unwrap();
    tokio::task::block_in_place(|| cluster.stop());
    let down = Instant::now();

    for (i, base) in urls.iter().enumerate() {
        let health = http.get(format!("{base}/healthz")).send().await.unwrap();
        assert_eq!(
            health.status(),
            503,
            "replica {i} says ready with the database down"
        );
        let consumed = consume(&http, &format!("{base}/v1/grants/consume"), &token, &kept).await;
        assert_ne!(
            consumed,
            Some(true),
            "replica {i} consumed a grant with the database down"
        );
        let hard = post(
            &http,
            &format!("{base}/v1/review"),
            &token,
            &review("db-down", "hd", "rm -rf ~", false),
        )
        .await
        .unwrap();
        assert_eq!(decided(&hard), ("deny", "hard_deny"), "replica {i}: {hard}");
    }
    tokio::time::sleep(Duration::from_millis(700)).await;

    let up_begins = Instant::now();
    tokio::task::block_in_place(|| cluster.start_again());
    // The same processes recover: each replica allows again, bounded.
    let recovery = Instant::now() + Duration::from_secs(30);
    for (i, base) in urls.iter().enumerate() {
        loop {
            let d = post(
                &http,
                &format!("{base}/v1/review"),
                &token,
                &review(
                    "db-down",
                    "after",
                    &format!("cargo build -p recovered{i}"),
                    false,
                ),
            )
            .await;
            if d.as_ref()
                .is_some_and(|d| decided(d) == ("allow", "reviewer"))
            {
                break;
            }
            assert!(
                Instant::now() < recovery,
                "replica {i} did not recover: {d:?}"
            );
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        let health = http.get(format!("{base}/healthz")).send().await.unwrap();
        assert_eq!(
            health.status(),
            200,
            "replica {i} not ready after the restart"
        );
    }
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    let mut while_down = 0;
    for t in load {
        for a in t.await.unwrap() {
            let d = a
                .decision
                .as_ref()
                .expect("a replica did not answer a review");
            assert!(
                a.answered - a.sent <= deadline + Duration::from_secs(1),
                "an answer took {:?}: {d}",
                a.answered - a.sent
            );
            if a.sent >= down && a.answered <= up_begins {
                while_down += 1;
                assert_ne!(
                    d["decision"], "allow",
                    "an allow with the database down: {d}"
                );
                assert_eq!(d["fault"], "state_unavailable", "{d}");
            }
        }
    }
    assert!(
        while_down >= 3,
        "only {while_down} reviews were answered while the database was down"
    );
    let again = consume(
        &http,
        &format!("{}/v1/grants/consume", urls[1]),
        &token,
        &kept,
    )
    .await;
    assert_eq!(
        again,
        Some(true),
        "the grant minted before the stop was lost"
    );
    // The audit kept running through the outage: an ingest on one replica
    // after the restart is in another replica's report, with no restart of
    // either.
    let audit_before = r.audit_total(2).await;
    let counted = post(
        &http,
        &format!("{}/v1/audit/events", urls[0]),
        &token,
        &events("after-db-restart", 20),
    )
    .await
    .expect("the audit ingest answered after the restart")["counted"]
        .as_u64()
        .unwrap();
    assert_eq!(counted, 20);
    // At least those 20: the replicas' own decision records, written by
    // their audit writers in the background, may land in between too.
    let audit_after = r.audit_total(2).await;
    assert!(
        audit_after >= audit_before + 20,
        "the audit did not recover after the database restart: {audit_after} < {audit_before} + 20"
    );
    eprintln!(
        "replicas db stop: {while_down} reviews answered fail-closed while the database was down"
    );
}
