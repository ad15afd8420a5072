//! Race tests over HTTP (issue 14): many clients at once on the real
//! `vouch serve`, where a lost update would be an allow too many — one
//! grant consumed by 64 clients at once, and a turn's review budget spent by
//! 48 concurrent reviews. (Threads and processes racing on the store
//! directly are in `grants.rs` and `multiprocess.rs`.)

use std::time::Duration;

use serde_json::{Value, json};

use crate::support::model_server::{ModelServer, Reply, Script};
use crate::support::proof::{Service, token};

fn config(model: &ModelServer, max_reviews: u32) -> String {
    format!(
        "[reviewer]\nprovider = \"openai\"\nbase_url = \"{}\"\napi_key_env = \"\"\ntimeout_ms = 5000\n\n\
         [turn]\nmax_reviews = {max_reviews}\n\n[server]\nrate_limit_per_second = 100000\nmax_concurrent_reviews = 64\n",
        model.base_url()
    )
}

fn allow_with_grants() -> Script {
    Script::always(
        Reply::verdict(
            json!({"outcome": "allow", "risk_level": "low", "user_authorization": "high",
                              "rationale": "asked for", "suggestion": null}),
        )
        .delayed(Duration::from_millis(20)),
    )
}

fn review(turn: &str, command: &str) -> Value {
    json!({"session_id": "race", "turn_id": turn, "surface": "bash", "command": command,
           "cwd": "/srv/app", "home": "/home/dev", "issue_grant": true,
           "transcript": [{"role": "user", "text": "please build it"}]})
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sixty_four_clients_consuming_one_grant_over_http_yield_one_winner() {
    let model = ModelServer::with_script(allow_with_grants()).await;
    let home = tempfile::tempdir().unwrap();
    let service = Service::start(home.path(), &config(&model, 20));
    let token = token(home.path(), "adapter");
    let http = reqwest::Client::new();
    for round in 0..5 {
        let request = review(&format!("g{round}"), &format!("cargo build -p race{round}"));
        let decision: Value = http
            .post(service.url("/v1/review"))
            .bearer_auth(&token)
            .json(&request)
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        let grant = decision["grant"]["token"].as_str().unwrap().to_owned();
        let body = json!({"session_id": "race", "token": grant, "request": request});
        let barrier = std::sync::Arc::new(tokio::sync::Barrier::new(64));
        let mut tasks = Vec::new();
        for _ in 0..64 {
            let (http, token, url, body, barrier) = (
                http.clone(),
                token.clone(),
                service.url("/v1/grants/consume"),
                body.clone(),
                barrier.clone(),
            );
            tasks.push(tokio::spawn(async move {
                barrier.wait().await;
                let r = http
                    .post(url)
                    .bearer_auth(token)
                    .json(&body)
                    .send()
                    .await
                    .unwrap();
                assert_eq!(r.status(), 200);
                r.json::<Value>().await.unwrap()["consumed"]
                    .as_bool()
                    .unwrap()
            }));
        }
        let mut winners = 0;
        for t in tasks {
            winners += usize::from(t.await.unwrap());
        }
        assert_eq!(
            winners, 1,
            "round {round}: {winners} clients consumed one grant"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_reviews_in_one_turn_never_exceed_its_review_budget() {
    let model = ModelServer::with_script(allow_with_grants()).await;
    let home = tempfile::tempdir().unwrap();
    let service = Service::start(home.path(), &config(&model, 5));
    let token = token(home.path(), "adapter");
    let http = reqwest::Client::new();
    let barrier = std::sync::Arc::new(tokio::sync::Barrier::new(48));
    let mut tasks = Vec::new();
    for i in 0..48 {
        let (http, token, url, barrier) = (
            http.clone(),
            token.clone(),
            service.url("/v1/review"),
            barrier.clone(),
        );
        tasks.push(tokio::spawn(async move {
            barrier.wait().await;
            let mut body = review("one-turn", &format!("cargo test -p budget{i}"));
            body["issue_grant"] = false.into();
            http.post(url)
                .bearer_auth(token)
                .json(&body)
                .send()
                .await
                .unwrap()
                .json::<Value>()
                .await
                .unwrap()
        }));
    }
    let mut allows = 0;
    for t in tasks {
        let d = t.await.unwrap();
        if d["decision"] == "allow" {
            allows += 1;
        } else {
            assert_eq!(d["stage"], "budget", "{d}");
        }
    }
    let calls = model.requests().len();
    assert!(
        calls <= 5,
        "{calls} model calls in a turn whose budget is 5"
    );
    assert!((1..=5).contains(&allows), "{allows} allows");
}

/// A deterministic answer never queues behind model calls: with the one
/// model slot (`server.max_concurrent_reviews = 1`) held by a review whose
/// model has not answered, a hard deny and a routed read answer at once on
/// `POST /v1/review`, while the slow review is still waiting.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hard_denies_over_http_answer_while_every_model_slot_is_taken() {
    let slow = Reply::verdict(json!({"outcome": "allow", "risk_level": "low",
        "user_authorization": "high", "rationale": "asked for", "suggestion": null}))
    .delayed(Duration::from_secs(60));
    let model = ModelServer::with_script(Script::always(slow)).await;
    let home = tempfile::tempdir().unwrap();
    let config = format!(
        "[reviewer]\nprovider = \"openai\"\nbase_url = \"{}\"\napi_key_env = \"\"\n\
         timeout_ms = 120000\n\n[server]\nmax_concurrent_reviews = 1\n",
        model.base_url()
    );
    let service = Service::start(home.path(), &config);
    let token = token(home.path(), "adapter");
    let http = reqwest::Client::new();
    let post = |body: Value| {
        http.post(service.url("/v1/review"))
            .bearer_auth(&token)
            .json(&body)
            .send()
    };
    let held = tokio::spawn(post(review("slot", "cargo build -p slow")));
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    while model.requests().is_empty() {
        assert!(
            std::time::Instant::now() < deadline,
            "the slow review never reached the model"
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let deny: Value = post(review("slot", "sudo rm -rf --no-preserve-root /"))
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(
        (deny["decision"].as_str(), deny["stage"].as_str()),
        (Some("deny"), Some("hard_deny")),
        "{deny}"
    );
    let read = json!({"session_id": "race", "turn_id": "slot", "surface": "read",
                      "path": "src/main.rs", "cwd": "/srv/app"});
    let read: Value = post(read).await.unwrap().json().await.unwrap();
    assert_eq!(
        (read["decision"].as_str(), read["stage"].as_str()),
        (Some("allow"), Some("routing")),
        "{read}"
    );
    assert!(
        !held.is_finished(),
        "the slow review is still with the model"
    );
    assert_eq!(model.requests().len(), 1);
    held.abort();
}
