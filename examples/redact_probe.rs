//! Prints each stdin line as redaction leaves it, as text and as a request's
//! command (for exploring what reaches the reviewer):
//! `echo 'x password=hunter2hunter2; rm -rf ~/app' | cargo run --release --example redact_probe`.

use std::io::BufRead as _;

use vouch::evidence::redact::{redact_request, redact_text};
use vouch::request::Request;

fn main() -> anyhow::Result<()> {
    for line in std::io::stdin().lock().lines() {
        let line = line?;
        // A JSON string line stands for its decoded text (newlines and all).
        let line = match line.starts_with('"') {
            true => serde_json::from_str::<String>(&line).unwrap_or(line),
            false => line,
        };
        println!("in:      {line}");
        println!("text:    {}", redact_text(&line));
        let body = serde_json::json!({"session_id": "p", "surface": "bash", "command": line});
        let request = Request::from_slice(body.to_string().as_bytes())?;
        let out = redact_request(&request);
        println!("command: {}", out.command.as_deref().unwrap_or(""));
    }
    Ok(())
}
