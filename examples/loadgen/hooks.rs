//! `vouch hook claude-code` processes started at a fixed rate, as a harness
//! starts them: each one a new process that reads one PreToolUse event on
//! stdin, decides and prints. Alternately a hard deny and a command the
//! reviewer (the test model server) must see, each in its own turn.
//! Latency is spawn to exit; peak RSS is the largest `VmHWM` read from
//! `/proc` while the process ran (sampled every millisecond, so a lower
//! bound of the true peak).

use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::json;

/// One hook run.
pub struct Run {
    pub reviewed: bool,
    pub latency: Duration,
    pub peak_kib: u64,
    pub ok: bool,
}

fn input(command: &str, n: u64) -> Vec<u8> {
    json!({
        "session_id": "loadgen-hooks", "transcript_path": "/nonexistent/loadgen.jsonl",
        "cwd": "/srv/app", "prompt_id": format!("turn-{n}"), "permission_mode": "default",
        "hook_event_name": "PreToolUse", "tool_name": "Bash",
        "tool_input": {"command": command, "description": "loadgen"}, "tool_use_id": format!("toolu_{n}"),
    })
    .to_string()
    .into_bytes()
}

/// Writes the hook's trusted config (its `--home`) for `model_base_url`.
pub fn prepare(home: &Path, model_base_url: &str) -> anyhow::Result<()> {
    std::fs::write(
        home.join("config.toml"),
        format!(
            "[reviewer]\nprovider = \"openai\"\nbase_url = \"{model_base_url}\"\napi_key_env = \"\"\n\n\
             [turn]\nmax_reviews = 1000\n"
        ),
    )?;
    Ok(())
}

fn run_one(binary: &Path, home: &Path, n: u64) -> Run {
    let reviewed = n % 2 == 1;
    let command = if reviewed {
        format!("cargo build -p hook{n}")
    } else {
        "rm -rf ~/".to_owned()
    };
    let want = if reviewed { "\"allow\"" } else { "\"deny\"" };
    let started = Instant::now();
    let spawned = Command::new(binary)
        .args(["hook", "claude-code", "--home"])
        .arg(home)
        .args(["--timeout", "100"])
        .env_clear()
        .env("HOME", home)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn();
    let Ok(mut child) = spawned else {
        return Run {
            reviewed,
            latency: started.elapsed(),
            peak_kib: 0,
            ok: false,
        };
    };
    let wrote = child
        .stdin
        .take()
        .is_some_and(|mut s| s.write_all(&input(&command, n)).is_ok());
    let mut peak = 0;
    while let Ok(None) = child.try_wait() {
        if let Some((_, hwm)) = crate::target::memory_kib(child.id()) {
            peak = peak.max(hwm);
        }
        std::thread::sleep(Duration::from_millis(1));
    }
    let out = child.wait_with_output();
    let latency = started.elapsed();
    let ok = wrote
        && out
            .is_ok_and(|o| o.status.success() && String::from_utf8_lossy(&o.stdout).contains(want));
    Run {
        reviewed,
        latency,
        peak_kib: peak,
        ok,
    }
}

/// Starts `rate` hook processes a second for `duration` (each on its own
/// thread, so a slow one does not delay the next start).
pub fn run(binary: &Path, home: &Path, rate: f64, duration: Duration) -> Vec<Run> {
    let period = Duration::from_secs_f64(1.0 / rate);
    let started = Instant::now();
    let mut threads = Vec::new();
    let mut n = 0u64;
    while started.elapsed() < duration {
        let at = started + period.mul_f64(n as f64);
        if let Some(wait) = at.checked_duration_since(Instant::now()) {
            std::thread::sleep(wait);
        }
        let (binary, home) = (binary.to_owned(), home.to_owned());
        threads.push(std::thread::spawn(move || run_one(&binary, &home, n)));
        n += 1;
    }
    threads.into_iter().filter_map(|t| t.join().ok()).collect()
}
