//! Prints the hard-deny verdict of each command line on stdin (one per
//! line, or JSON lines with a `command` field), for exploring the floor:
//! `echo 'rm -rf ~' | cargo run --release --example floor_probe`.

use std::io::BufRead as _;

use anyhow::Context as _;
use vouch::policy::hard_deny::{self, DenyContext, DenyVerdict, VouchFiles};
use vouch::request::Request;

const CWD: &str = "/home/dev/project";
const HOME: &str = "/home/dev";

fn verdict(command: &str) -> anyhow::Result<DenyVerdict> {
    let body = serde_json::json!({
        "session_id": "probe", "surface": "bash", "command": command, "cwd": CWD, "home": HOME,
    });
    let request = Request::from_slice(body.to_string().as_bytes())
        .with_context(|| format!("request for `{command}`"))?;
    let protected = VouchFiles {
        paths: vec!["/opt/vouch/bin/vouch".to_owned()],
        config_only: Vec::new(),
        vars: Vec::new(),
    };
    let ctx = DenyContext {
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
        // A JSON object line with a `command`, or a JSON string line (its
        // decoded text, newlines and all), or the line as it is.
        let command = match serde_json::from_str::<serde_json::Value>(&line) {
            Ok(serde_json::Value::Object(o)) => o
                .get("command")
                .and_then(|c| c.as_str())
                .unwrap_or(&line)
                .to_owned(),
            Ok(serde_json::Value::String(s)) => s,
            _ => line.clone(),
        };
        if std::env::var_os("FLOOR_DUMP").is_some() {
            let env = vouch::shell::ShellEnv {
                cwd: Some(CWD),
                home: HOME,
                vars: &[],
            };
            let a = vouch::shell::analyze(&command, &env, &vouch::shell::Limits::DEFAULT);
            for c in &a.commands {
                println!(
                    "    {:?} {:?} parent={:?} conservative={} recursive={} bg={} guarded={} cwd={:?}",
                    c.kind,
                    c.argv,
                    c.parent,
                    c.conservative,
                    c.recursive,
                    c.background,
                    c.guarded,
                    c.cwd.as_known()
                );
            }
            println!(
                "    errors={:?} incomplete={:?} notes={:?}",
                a.errors, a.incomplete, a.notes
            );
        }
        let started = std::time::Instant::now();
        let v = verdict(&command)?;
        let us = started.elapsed().as_micros();
        let (kind, detail) = match &v {
            DenyVerdict::Deny(d) => ("DENY", d.rule_id().to_owned()),
            DenyVerdict::ParseFailed { error } => ("parse_failed", error.clone()),
            DenyVerdict::Incomplete { note } => ("incomplete", note.clone()),
            DenyVerdict::Clear => ("clear", String::new()),
        };
        let shown = serde_json::to_string(&command).unwrap_or_default();
        println!("{kind:12} {us:>6}us {shown}\n             {detail}");
    }
    Ok(())
}
