//! Several `vouch review` processes — what agent harness hooks start — share
//! one SQLite state. Hammering the same session and turn concurrently must
//! lose no breaker or budget update.

use std::process::Command;

use serde_json::json;

use crate::support::model_server::{ModelServer, Step};
use vouch::config::Config;
use vouch::session::{TurnKey, turn_status};
use vouch::store::Store;

const PROCESSES: usize = 2;
const REVIEWS_EACH: usize = 12;

fn allow() -> Step {
    let v = json!({"outcome": "allow", "risk_level": "low", "user_authorization": "high",
                   "rationale": "fine", "suggestion": null});
    Step::json(
        200,
        json!({"choices": [{"index": 0, "message": {"role": "assistant", "content": v.to_string()},
               "finish_reason": "stop"}], "usage": {"prompt_tokens": 10, "completion_tokens": 5}}),
    )
}

fn review(home: &std::path::Path, base_url: &str, command: &str) -> serde_json::Value {
    let request = json!({
        "session_id": "shared", "turn_id": "t1", "surface": "bash", "command": command,
        "cwd": "/srv/app", "home": "/home/dev",
        "transcript": [{"role": "user", "text": "look at the history"}],
    });
    let out = crate::support::run_with_stdin(
        Command::new(env!("CARGO_BIN_EXE_vouch"))
            .arg("review")
            .env("VOUCH_HOME", home)
            .env("VOUCH_REVIEWER__PROVIDER", "openai")
            .env("VOUCH_REVIEWER__BASE_URL", base_url)
            .env("VOUCH_TURN__MAX_REVIEWS", "1000")
            // `git log` is inert otherwise; these reviews must reach the model.
            .env("VOUCH_INERT__ENABLED", "false")
            .env_remove("RUST_LOG"),
        request.to_string().as_bytes(),
    );
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_review_processes_lose_no_update() {
    let server = ModelServer::start((0..PROCESSES * REVIEWS_EACH).map(|_| allow()).collect()).await;
    let home = tempfile::tempdir().unwrap();
    let base_url = server.base_url();
    let workers: Vec<_> = (0..PROCESSES)
        .map(|p| {
            let home = home.path().to_owned();
            let base_url = base_url.clone();
            std::thread::spawn(move || {
                for i in 0..REVIEWS_EACH {
                    // Distinct commands so no review is a cache hit.
                    let d = review(&home, &base_url, &format!("git log -n {p}{i:02}"));
                    assert_eq!(d["stage"], "reviewer", "{d}");
                    assert_eq!(d["decision"], "allow", "{d}");
                }
            })
        })
        .collect();
    for w in workers {
        tokio::task::spawn_blocking(move || w.join().unwrap())
            .await
            .unwrap();
    }
    assert_eq!(server.requests().len(), PROCESSES * REVIEWS_EACH);
    let store = Store::open(&home.path().join("state")).unwrap();
    let cfg = Config::defaults().unwrap();
    let status = turn_status(
        &store,
        &cfg,
        TurnKey {
            session: "shared",
            turn: "t1",
        },
    )
    .unwrap();
    assert_eq!(status.reviews as usize, PROCESSES * REVIEWS_EACH);
    assert_eq!(status.verdicts as usize, PROCESSES * REVIEWS_EACH);
}
