//! Prints the hard-deny verdict of each command line on stdin (one per
//! line, or JSON lines with a `command` field), for exploring the floor:
//! `echo 'rm -rf ~' | cargo run --release --example floor_probe`.

use std::io::BufRead as _;

use anyhow::Context as _;
use vouch::policy::hard_deny::{self, Context, Protected, Verdict};
use vouch::request::Request;

const CWD: &str = "/home/dev/project";
const HOME: &str = "/home/dev";

fn verdict(command: &str) -> anyhow::Result<Verdict> {
    let body = serde_json::json!({
        "session_id": "probe", "surface": "bash", "command": command, "cwd": CWD, "home": HOME,
    });
    let request = Request::from_slice(body.to_string().as_bytes())
        .with_context(|| format!("request for `{command}`"))?;
    let protected = Protected {
        paths: vec!["/opt/vouch/bin/vouch".to_owned()],
        config_only: Vec::new(),
        vars: Vec::new(),
    };
    let ctx = Context {
        home: HOME,
        cwd: Some(CWD),
        protected: &protected,
        limits: &vouch::shell::Limits::DEFAULT,
    };
    Ok(hard_deny::check(&request, &ctx))
}

fn main() -> anyhow::Result<()> {
    for line in std::io::stdin().lock().lines() {
        let line = line?;
        if line.trim().is_empty() {
            continue;
        }
        let command = match serde_json::from_str::<serde_json::Value>(&line) {
            Ok(v) => v
                .get("command")
                .and_then(|c| c.as_str())
                .unwrap_or(&line)
                .to_owned(),
            Err(_) => line.clone(),
        };
        let started = std::time::Instant::now();
        let v = verdict(&command)?;
        let us = started.elapsed().as_micros();
        let (kind, detail) = match &v {
            Verdict::Deny(d) => ("DENY", d.rule_id.to_owned()),
            Verdict::ParseFailed { error } => ("parse_failed", error.clone()),
            Verdict::Incomplete { note } => ("incomplete", note.clone()),
            Verdict::Clear => ("clear", String::new()),
        };
        println!("{kind:12} {us:>6}us {command}\n             {detail}");
    }
    Ok(())
}
