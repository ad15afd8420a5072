//! The fault soak (issue 14): mixed load on the real `vouch serve` while the
//! test model server injects every fault type at random and vouch's stderr
//! is a pipe read slowly, then not at all. Asserts: no fault ever becomes an
//! allow, every request is answered within `reviewer.timeout_ms` + 1 s,
//! only documented statuses, and memory stays flat.
//!
//! Short by default (20 s, in `cargo test`); the long form is
//! `VOUCH_SOAK_SECONDS=600 cargo test --release --test it soak -- --nocapture`.

use std::io::Read;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::support::model_server::{Declared, DropAt, ModelServer, Reply, Script, verdict};
use crate::support::proof::{Service, seconds_from_env, token};

const TIMEOUT_MS: u64 = 1500;
const CLIENTS: usize = 16;

/// Every fault the model server has, each behind a marker in the command.
fn faults() -> Vec<(&'static str, Reply)> {
    vec![
        ("F-status500", Reply::status(500)),
        ("F-status429", Reply::status(429).header("retry-after", "0")),
        ("F-status503", Reply::status(503)),
        ("F-quota", Reply::status_error(429, "insufficient_quota")),
        ("F-garbage", Reply::garbage()),
        ("F-trunc-ok", Reply::truncate(Declared::Correct)),
        ("F-trunc-wrong", Reply::truncate(Declared::Wrong)),
        ("F-drop-before", Reply::drop_at(DropAt::BeforeAnyByte)),
        ("F-drop-headers", Reply::drop_at(DropAt::MidHeaders)),
        ("F-drop-body", Reply::drop_at(DropAt::MidBody)),
        ("F-drip", Reply::slow_drip(1, Duration::from_millis(40))),
        ("F-hang", Reply::hang()),
        (
            "F-slow",
            Reply::allow().delayed(Duration::from_millis(TIMEOUT_MS + 500)),
        ),
        (
            "F-badverdict",
            Reply::verdict(json!({"outcome": "allow", "risk_level": "catastrophic"})),
        ),
        ("F-text", Reply::text("Sure, this looks fine: allow")),
    ]
}

#[derive(Default)]
struct Tally {
    requests: AtomicU64,
    faulted: AtomicU64,
    wrong_allows: AtomicU64,
    stalls: AtomicU64,
    bad_status: AtomicU64,
    allows: AtomicU64,
    max_ms: AtomicU64,
}

fn config(model: &ModelServer) -> String {
    format!(
        "[reviewer]\nprovider = \"openai\"\nbase_url = \"{}\"\napi_key_env = \"\"\ntimeout_ms = {TIMEOUT_MS}\n\
         retries = 2\nmax_retry_after_ms = 200\n\n[turn]\nmax_reviews = 1000\n\n\
         [server]\nrate_limit_per_second = 100000\nmax_concurrent_reviews = 64\n",
        model.base_url()
    )
}

/// A seeded xorshift64* stream: the soak's choices are random but
/// reproducible (`VOUCH_SOAK_SEED`), without a dependency for it.
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: usize) -> usize {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        let x = self.0.wrapping_mul(0x2545_f491_4f6c_dd1d);
        usize::try_from(x >> 33).unwrap() % n
    }
}

/// A request of a random kind; `Some(marker)` when it carries a fault.
fn pick(rng: &mut Rng, client: usize, n: u64, markers: &[&str]) -> (Value, Option<String>) {
    let mut v = json!({"session_id": format!("soak-{client}"), "turn_id": format!("t{client}-{n}"),
                       "surface": "bash", "cwd": "/srv/app", "home": "/home/dev"});
    let roll = rng.below(100);
    let fault = if roll < 10 {
        v["command"] = "rm -rf ~".into();
        None
    } else if roll < 20 {
        v["surface"] = "read".into();
        v["path"] = "/srv/app/README.md".into();
        None
    } else if roll < 40 {
        v["command"] = format!("make test-{client}-{n}").into();
        None
    } else {
        let marker = markers[rng.below(markers.len())].to_owned();
        v["command"] = format!("make {marker}-{client}-{n}").into();
        Some(marker)
    };
    (v, fault)
}

async fn client(
    url: String,
    token: String,
    idx: usize,
    until: Instant,
    markers: Arc<Vec<&'static str>>,
    tally: Arc<Tally>,
) {
    let http = reqwest::Client::builder()
        .timeout(Duration::from_secs(30))
        .build()
        .unwrap();
    let seed = std::env::var("VOUCH_SOAK_SEED")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(0x5eed_u64);
    let mut rng = Rng(seed ^ (u64::try_from(idx).unwrap() + 1).wrapping_mul(0x9e37_79b9_7f4a_7c15));
    let mut n = 0;
    while Instant::now() < until {
        n += 1;
        let (body, fault) = pick(&mut rng, idx, n, &markers);
        let sent = Instant::now();
        let response = http.post(&url).bearer_auth(&token).json(&body).send().await;
        let (status, decision) = match response {
            Ok(r) => (
                r.status().as_u16(),
                r.json::<Value>().await.unwrap_or(Value::Null),
            ),
            Err(_) => (0, Value::Null),
        };
        let ms = u64::try_from(sent.elapsed().as_millis()).unwrap_or(u64::MAX);
        tally.requests.fetch_add(1, Ordering::Relaxed);
        tally.max_ms.fetch_max(ms, Ordering::Relaxed);
        if ms > TIMEOUT_MS + 1000 {
            tally.stalls.fetch_add(1, Ordering::Relaxed);
        }
        // 200 is the only status this load may get: it is authenticated,
        // small and under the rate limit (429 and 503 are documented for
        // those limits and the review slots, not for a model fault).
        if status != 200 {
            tally.bad_status.fetch_add(1, Ordering::Relaxed);
            continue;
        }
        let allowed = decision["decision"] == "allow";
        tally
            .allows
            .fetch_add(u64::from(allowed), Ordering::Relaxed);
        if fault.is_some() {
            tally.faulted.fetch_add(1, Ordering::Relaxed);
            if allowed {
                eprintln!("WRONG ALLOW under {fault:?}: {decision}");
                tally.wrong_allows.fetch_add(1, Ordering::Relaxed);
            }
        }
    }
}

async fn flood_livez(url: String, until: Instant) {
    let http = reqwest::Client::new();
    while Instant::now() < until {
        let status = http
            .get(&url)
            .send()
            .await
            .map(|r| r.status().as_u16())
            .unwrap_or(0);
        assert_eq!(status, 200, "/livez under a stalled stderr");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn faults_at_random_with_a_stalled_stderr_never_allow_stall_or_grow() {
    let duration = seconds_from_env("VOUCH_SOAK_SECONDS", 20);
    let mut script =
        Script::always(Reply::verdict(verdict("allow", "low")).delayed(Duration::from_millis(5)));
    let faults = faults();
    for (marker, reply) in &faults {
        script = script.rule(marker, reply.clone());
    }
    let model = ModelServer::with_script(script).await;
    model.set_max_recorded(100);
    let home = tempfile::tempdir().unwrap();
    let mut service = Service::start(home.path(), &config(&model));
    // stderr read slowly (256 bytes every 50 ms) for the first half, then
    // not at all: the pipe fills and stays full.
    let mut stderr = service.stderr.take().unwrap();
    let reading = Arc::new(AtomicBool::new(true));
    let reader = {
        let reading = Arc::clone(&reading);
        std::thread::spawn(move || {
            let mut chunk = [0u8; 256];
            while reading.load(Ordering::Relaxed) && stderr.read(&mut chunk).is_ok_and(|n| n > 0) {
                std::thread::sleep(Duration::from_millis(50));
            }
            stderr // kept open, unread, until the test ends
        })
    };
    let tally = Arc::new(Tally::default());
    let markers: Arc<Vec<&'static str>> = Arc::new(faults.iter().map(|(m, _)| *m).collect());
    let started = Instant::now();
    let until = started + duration;
    let mut tasks = Vec::new();
    for idx in 0..CLIENTS {
        tasks.push(tokio::spawn(client(
            service.url("/v1/review"),
            token(home.path(), "adapter"),
            idx,
            until,
            Arc::clone(&markers),
            Arc::clone(&tally),
        )));
    }
    let mut rss = Vec::new();
    let mut flood = None;
    while Instant::now() < until {
        tokio::time::sleep(Duration::from_millis(500)).await;
        rss.push(service.rss_kib());
        if started.elapsed() > duration / 2 && flood.is_none() {
            reading.store(false, Ordering::Relaxed);
            // Access lines faster than any buffer drains: with stderr unread
            // the log writer must drop (and count), never block a decision.
            flood = Some(tokio::spawn(flood_livez(service.url("/livez"), until)));
        }
    }
    if let Some(f) = flood {
        f.await.unwrap();
    }
    for t in tasks {
        t.await.unwrap();
    }
    let still_answers = reqwest::get(service.url("/livez")).await.unwrap().status();
    let metrics = reqwest::get(service.url("/metrics"))
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    let dropped: u64 = metrics
        .lines()
        .find_map(|l| l.strip_prefix("vouch_log_lines_dropped_total "))
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(0);
    drop(service);
    let _ = reader.join();
    let (q, len) = (rss.len() / 4, rss.len());
    let early = rss[q..2 * q].iter().copied().max().unwrap_or(0);
    let late = rss[len - q..].iter().copied().max().unwrap_or(0);
    let get = |a: &AtomicU64| a.load(Ordering::Relaxed);
    eprintln!(
        "soak: {:?}, {} requests, {} under injected faults ({} kinds), {} allows, wrong allows {}, stalls {}, \
         bad statuses {}, log lines dropped {dropped}, slowest {} ms (limit {} ms), RSS {:.1} MiB (2nd quarter) -> {:.1} MiB (last quarter)",
        duration,
        get(&tally.requests),
        get(&tally.faulted),
        faults.len(),
        get(&tally.allows),
        get(&tally.wrong_allows),
        get(&tally.stalls),
        get(&tally.bad_status),
        get(&tally.max_ms),
        TIMEOUT_MS + 1000,
        early as f64 / 1024.0,
        late as f64 / 1024.0
    );
    assert_eq!(still_answers, 200);
    assert!(
        dropped > 0,
        "stderr never filled: the stalled-pipe half tested nothing"
    );
    assert!(
        get(&tally.faulted) > 50,
        "too few faults injected to mean anything"
    );
    assert!(
        get(&tally.allows) > 0,
        "nothing was allowed: the load did not reach the model"
    );
    assert_eq!(get(&tally.wrong_allows), 0, "a fault became an allow");
    assert_eq!(get(&tally.stalls), 0, "a request outlived timeout_ms + 1 s");
    assert_eq!(get(&tally.bad_status), 0, "an undocumented status");
    // Flat: the last quarter within 25 % (and 8 MiB of slack for allocator
    // noise) of the second quarter, after warm-up.
    assert!(
        late <= early + early / 4 + 8 * 1024,
        "memory grew: {early} KiB -> {late} KiB"
    );
}
