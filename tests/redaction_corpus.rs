//! Redaction probe corpus: every line of `redaction_probes.jsonl` (a fake
//! secret in a natural context) and `redaction_guards.jsonl` (text that must
//! come through byte for byte) is its own test (libtest-mimic).
//!
//! One engine reviews every probe in every carrier — the bash command, the
//! tool input, the agent's reason, the agent name, a user message, a tool
//! call, a tool result (plain and in a file viewer's `N→` lines), a summary
//! — and every encoding — URL-escaped in a query, JSON-escaped inside a
//! string, single- and double-quoted for `bash -c` — one carrier per
//! request, so no field is hidden only because another gave it away. The
//! reviews go to the test model server on 127.0.0.1:0 with `VOUCH_HOME` in
//! a temp dir and every log event captured; each probe's test then checks
//! that its secret's bytes are in no model request body, no log line and no
//! byte of the state directory.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

#[path = "it/support/model_server.rs"]
mod model_server;

use std::io::Write;
use std::sync::{Arc, Mutex, OnceLock};

use libtest_mimic::{Arguments, Failed, Trial};
use serde::Deserialize;
use serde_json::{Value, json};

use model_server::{ModelServer, Reply, Script};
use vouch::config::{Config, Provider};
use vouch::engine::{Engine, EngineOptions};
use vouch::evidence::redact::redact_text;
use vouch::request::Request;

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
struct Probe {
    format: String,
    secret: String,
    text: String,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
struct Guard {
    text: String,
    why: String,
}

fn lines<T: for<'de> Deserialize<'de>>(file: &str) -> Vec<(usize, T)> {
    let path = format!("{}/tests/fixtures/{file}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(&path)
        .unwrap()
        .lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
        .map(|(i, l)| {
            let v = serde_json::from_str(l).unwrap_or_else(|e| panic!("{file}:{}: {e}", i + 1));
            (i + 1, v)
        })
        .collect()
}

/// Every way the corpus puts a text in front of vouch.
const CARRIERS: &[&str] = &[
    "command",
    "input",
    "reason",
    "agent",
    "user",
    "tool_call",
    "tool_result",
    "file_view",
    "summary",
    "url_encoded",
    "json_escaped",
    "bash_single_quoted",
    "bash_double_quoted",
];

fn url_encode(s: &str) -> String {
    s.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                char::from(b).to_string()
            }
            other => format!("%{other:02X}"),
        })
        .collect()
}

/// A request that carries `text` in exactly one place; `tag` marks it so
/// its packet can be found among the recorded bodies.
fn request(tag: &str, carrier: &str, text: &str) -> Request {
    let mut r = json!({
        "session_id": format!("s-{tag}"),
        "turn_id": format!("t-{tag}-{carrier}"),
        "surface": "bash",
        "tool": "Bash",
        "command": format!("echo {tag}"),
        "cwd": "/srv/app",
        "home": "/home/dev",
        "tool_call_id": "toolu_now",
        "transcript": [{"role": "user", "text": format!("please run the step for {tag}")}],
    });
    let user = |t: String| json!({"role": "user", "text": t});
    let call = |cmd: String| {
        [
            json!({"role": "tool_call", "tool_call_id": "toolu_now", "tool_name": "Bash", "input": {"command": cmd}}),
        ]
    };
    let result = |t: String| {
        [
            json!({"role": "tool_call", "tool_call_id": "toolu_now", "tool_name": "Bash", "input": {"command": format!("echo {tag}")}}),
            json!({"role": "tool_result", "tool_call_id": "toolu_now", "text": t}),
        ]
    };
    let transcript = r["transcript"].as_array_mut().unwrap();
    match carrier {
        "command" => r["command"] = json!(text),
        "input" => r["input"] = json!({"command": text, "description": format!("step {tag}")}),
        "reason" => r["reason"] = json!(text),
        "agent" => r["agent"] = json!(text),
        "user" => transcript.push(user(format!("{tag}: {text}"))),
        "tool_call" => transcript
            .splice(0..0, call(text.to_owned()))
            .for_each(drop),
        "tool_result" => transcript
            .splice(0..0, result(format!("$ {text}\nok\n")))
            .for_each(drop),
        "file_view" => {
            let viewed: String = text
                .lines()
                .enumerate()
                .map(|(i, l)| format!("{:>6}→{l}\n", i + 1))
                .collect();
            transcript.splice(0..0, result(viewed)).for_each(drop);
        }
        "summary" => transcript.insert(0, json!({"role": "summary", "text": text})),
        "url_encoded" => transcript
            .splice(
                0..0,
                result(format!(
                    "GET https://hooks.example.com/cb?data={}&ok=1",
                    url_encode(text)
                )),
            )
            .for_each(drop),
        "json_escaped" => {
            let escaped = serde_json::to_string(&json!({"note": text})).unwrap();
            transcript.push(user(format!("{tag}: the config is {escaped}")));
        }
        "bash_single_quoted" => {
            r["command"] = json!(format!("bash -c '{}'", text.replace('\'', r"'\''")));
        }
        "bash_double_quoted" => {
            let escaped = text
                .replace('\\', r"\\")
                .replace('"', "\\\"")
                .replace('$', r"\$")
                .replace('`', r"\`");
            r["command"] = json!(format!("sh -c \"{escaped}\""));
        }
        other => panic!("unknown carrier {other}"),
    }
    Request::from_slice(r.to_string().as_bytes()).unwrap()
}

/// Everything the reviews left behind.
struct World {
    bodies: Vec<String>,
    state: Vec<u8>,
    logs: Vec<u8>,
}

/// The model allows every probe, so each review reaches the model and its
/// verdict is stored (a deny would be stored too; allow touches more state).
fn allow() -> Reply {
    Reply::verdict(model_server::verdict("allow", "low"))
}

struct LogWriter(Arc<Mutex<Vec<u8>>>);

impl Write for LogWriter {
    fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(b);
        Ok(b.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

fn all_bytes_under(dir: &std::path::Path) -> Vec<u8> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            out.extend(all_bytes_under(&path));
        } else {
            out.extend(std::fs::read(&path).unwrap());
        }
    }
    out
}

/// Runs every review once, with one engine, and keeps what it left.
fn world() -> &'static World {
    static WORLD: OnceLock<World> = OnceLock::new();
    WORLD.get_or_init(|| {
        let logs = Arc::new(Mutex::new(Vec::new()));
        let writer = Arc::clone(&logs);
        let subscriber = tracing_subscriber::fmt()
            .with_max_level(tracing::Level::TRACE)
            .with_ansi(false)
            .with_writer(move || LogWriter(Arc::clone(&writer)))
            .finish();
        tracing::subscriber::set_global_default(subscriber).unwrap();
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .unwrap();
        runtime.block_on(async {
            let mut requests: Vec<Request> = Vec::new();
            for (line, probe) in lines::<Probe>("redaction_probes.jsonl") {
                for carrier in CARRIERS {
                    requests.push(request(&format!("probe#{line}#"), carrier, &probe.text));
                }
            }
            for (line, guard) in lines::<Guard>("redaction_guards.jsonl") {
                for carrier in ["command", "user", "tool_result"] {
                    requests.push(request(&format!("guard#{line}#"), carrier, &guard.text));
                }
            }
            let server = ModelServer::with_script(Script::always(allow())).await;
            let home = tempfile::tempdir().unwrap();
            let mut config = Config::defaults().unwrap();
            // The default is no reviewer; the probes must reach one (and
            // carriers such as `echo …` must not be decided as inert).
            config.reviewer.provider = Provider::Openai;
            config.inert.enabled = false;
            config.reviewer.base_url = server.base_url();
            config.reviewer.timeout_ms = 10_000;
            config.budget.max_reviewer_input_tokens = 32768;
            let engine =
                Engine::new(EngineOptions::isolated(home.path(), &config).unwrap()).unwrap();
            for r in requests {
                let _ = engine.review(r).await;
            }
            drop(engine);
            World {
                bodies: server.requests().into_iter().map(|r| r.raw_body).collect(),
                state: all_bytes_under(home.path()),
                logs: logs.lock().unwrap().clone(),
            }
        })
    })
}

fn contains(hay: &[u8], needle: &[u8]) -> bool {
    !needle.is_empty() && hay.windows(needle.len()).any(|w| w == needle)
}

/// The forms a secret's bytes take on the wire: as is, JSON-escaped once
/// (evidence lines) and twice (the packet inside the provider's JSON).
fn forms(secret: &str) -> Vec<Vec<u8>> {
    let once = serde_json::to_string(secret).unwrap();
    let once = once.trim_matches('"').to_owned();
    let twice = serde_json::to_string(&once).unwrap();
    let twice = twice.trim_matches('"').to_owned();
    let mut out = vec![
        secret.as_bytes().to_vec(),
        once.into_bytes(),
        twice.into_bytes(),
    ];
    // The tail of a secret must not survive a partial redaction either.
    let tail_len = (secret.len() / 2).max(8).min(secret.len());
    if let Some(tail) = secret.get(secret.len() - tail_len..) {
        out.push(tail.as_bytes().to_vec());
    }
    out.dedup();
    out
}

fn check_probe(line: usize, probe: &Probe) -> Result<(), Failed> {
    let w = world();
    let tag = format!("probe#{line}#");
    let reviewed = w.bodies.iter().filter(|b| b.contains(&tag)).count();
    if reviewed == 0 {
        return Err(format!("no model request carried probe {line}").into());
    }
    for form in forms(&probe.secret) {
        let shown = String::from_utf8_lossy(&form).into_owned();
        if let Some(body) = w.bodies.iter().find(|b| contains(b.as_bytes(), &form)) {
            let at = body.find(&shown).unwrap_or(0);
            let around = body
                .get(at.saturating_sub(120)..(at + shown.len() + 40).min(body.len()))
                .unwrap_or("");
            return Err(format!("`{shown}` reached the model: …{around}…").into());
        }
        if contains(&w.logs, &form) {
            return Err(format!("`{shown}` is in the logs").into());
        }
        if contains(&w.state, &form) {
            return Err(format!("`{shown}` is in the state directory").into());
        }
    }
    Ok(())
}

fn check_guard(line: usize, guard: &Guard) -> Result<(), Failed> {
    let out = redact_text(&guard.text);
    if out != guard.text {
        return Err(format!("changed ({}): {out}", guard.why).into());
    }
    let w = world();
    let tag = format!("guard#{line}#");
    let escaped = serde_json::to_string(&guard.text).unwrap();
    let escaped = escaped.trim_matches('"');
    let packets: Vec<String> = w
        .bodies
        .iter()
        .filter(|b| b.contains(&tag))
        .filter_map(|b| serde_json::from_str::<Value>(b).ok())
        .filter_map(|v| v["messages"][1]["content"].as_str().map(str::to_owned))
        .collect();
    if packets.len() < 3 {
        return Err(format!("only {} packets carried guard {line}", packets.len()).into());
    }
    if let Some(p) = packets.iter().find(|p| !p.contains(escaped)) {
        return Err(format!("not byte-identical in the packet ({}): {p}", guard.why).into());
    }
    Ok(())
}

fn main() {
    let args = Arguments::from_args();
    let mut trials = Vec::new();
    let probes = lines::<Probe>("redaction_probes.jsonl");
    let formats: std::collections::BTreeSet<&str> =
        probes.iter().map(|(_, p)| p.format.as_str()).collect();
    let guards = lines::<Guard>("redaction_guards.jsonl");
    let (n_probes, n_formats, n_guards) = (probes.len(), formats.len(), guards.len());
    trials.push(Trial::test("corpus_size", move || {
        if n_probes >= 150 && n_formats >= 60 && n_guards >= 100 {
            Ok(())
        } else {
            Err(format!("{n_probes} probes, {n_formats} formats, {n_guards} guards").into())
        }
    }));
    for (line, probe) in probes.clone() {
        let name = format!("probes.jsonl:{line}:{}", probe.format);
        trials.push(Trial::test(name, move || check_probe(line, &probe)));
    }
    for (line, guard) in guards {
        let name = format!("guards.jsonl:{line}:{}", guard.why);
        trials.push(Trial::test(name, move || check_guard(line, &guard)));
    }
    libtest_mimic::run(&args, trials).exit();
}
