//! Seeds the fuzz corpora with the project's own test vectors, so the
//! JSON-shaped targets start past the JSON parser (from an empty corpus a
//! 10-minute `request` run never built one valid request):
//!
//! ```text
//! cargo run --release --example fuzz_seeds      # writes fuzz/corpus/<target>/
//! cd fuzz && cargo fuzz run -O <target> -- -max_total_time=600 -timeout=10
//! ```
//!
//! Every seed comes from `tests/fixtures` (vouch-shell's too, and the two
//! example requests), read through the one fixture loader, so the seeds
//! follow the fixtures.
//! The files are named by the SHA-256 of their bytes; running it again adds
//! nothing twice. `hard_deny_wrapped` builds its own structure and gets
//! none.

use std::path::{Path, PathBuf};

use anyhow::Context;
use serde_json::{Value, json};
use sha2::{Digest, Sha256};
use vouch::hooks::HarnessId;

#[path = "../tests/it/support/fixtures.rs"]
mod fixtures;

/// Command corpora: `bash_hard_deny` starts from every command in them.
const COMMAND_FIXTURES: &[&str] = &[
    "hard_deny.jsonl",
    "hard_deny_extra.jsonl",
    "hard_deny_peers.jsonl",
    "hard_deny_redteam.jsonl",
    "benign.jsonl",
    "benign_extra.jsonl",
    "benign_peers.jsonl",
    "benign_redteam.jsonl",
    // vouch-shell's own fixture (its differential harness against bash).
    "../../crates/vouch-shell/tests/fixtures/bash_differential.jsonl",
    "templates.jsonl",
    "templates_extra.jsonl",
];

/// Texts with secrets, near-misses and guards: `redaction` starts from them.
const SECRET_FIXTURES: &[&str] = &[
    "secrets.jsonl",
    "secrets_extra.jsonl",
    "redaction_probes.jsonl",
    "redaction_guards.jsonl",
    "redaction_negatives.jsonl",
];

/// libFuzzer's default `-max_len` grows from the corpus; longer seeds would
/// only slow every run.
const MAX_SEED_BYTES: usize = 16 * 1024;

struct Corpus {
    dir: PathBuf,
    written: usize,
}

impl Corpus {
    fn open(root: &Path, target: &str) -> anyhow::Result<Self> {
        let dir = root.join(target);
        std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
        Ok(Corpus { dir, written: 0 })
    }

    fn add(&mut self, bytes: &[u8]) -> anyhow::Result<()> {
        if bytes.len() > MAX_SEED_BYTES {
            return Ok(());
        }
        let name = hex::encode(Sha256::digest(bytes));
        let path = self.dir.join(name.get(..16).unwrap_or(&name));
        std::fs::write(&path, bytes).with_context(|| format!("writing {}", path.display()))?;
        self.written += 1;
        Ok(())
    }

    /// A seed whose first byte selects a variant (an adapter, a format, a
    /// place to plant a secret).
    fn add_selected(&mut self, selector: u8, bytes: &[u8]) -> anyhow::Result<()> {
        self.add(&[&[selector], bytes].concat())
    }
}

fn string_field<'a>(record: &'a Value, key: &str) -> Option<&'a str> {
    record.get(key).and_then(Value::as_str)
}

/// Canonical requests: the examples, the routing vectors' requests, and
/// one of every other surface with awkward numbers in its input.
fn requests() -> anyhow::Result<Vec<Value>> {
    let mut out = Vec::new();
    for name in ["bash-request.json", "review-request.json"] {
        let path = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("examples")
            .join(name);
        let text = std::fs::read_to_string(&path).with_context(|| path.display().to_string())?;
        out.push(serde_json::from_str(&text).with_context(|| path.display().to_string())?);
    }
    out.extend(
        fixtures::records::<Value>(&["routing.jsonl"])
            .into_iter()
            .filter_map(|r| r.get("request").cloned()),
    );
    out.extend([
        json!({"session_id": "s", "surface": "write", "tool": "Write", "path": "/srv/app/src/main.rs",
               "cwd": "/srv/app", "input": {"file_path": "/srv/app/src/main.rs", "content": "fn main() {}\n"}}),
        json!({"session_id": "s", "surface": "edit", "path": "/srv/app/.env", "resolved_path": "/srv/app/.env",
               "input": {"old_string": "a", "new_string": "b", "replace_all": false}}),
        json!({"session_id": "s", "surface": "read", "path": "/home/dev/.ssh/id_ed25519", "home": "/home/dev"}),
        json!({"session_id": "s", "surface": "network", "destination": "registry.npmjs.org:443",
               "issue_grant": true, "input": {"host": "registry.npmjs.org", "port": 443}}),
        json!({"session_id": "s", "surface": "delete", "path": "/srv/app/target"}),
        json!({"session_id": "s", "surface": "git_push", "command": "git push origin HEAD:main", "cwd": "/srv/app"}),
        json!({"session_id": "s", "surface": "external_directory", "path": "/etc"}),
        json!({"session_id": "s", "surface": "path", "path": "/srv/app/README.md"}),
        json!({"session_id": "s", "surface": "WebFetch", "tool": "WebFetch",
               "input": {"url": "https://example.com", "prompt": "summarise"}}),
        json!({"id": "r2", "session_id": "s", "turn_id": "t", "source": "pi", "surface": "bash", "command": "ls",
               "cwd": "/w", "transcript": [
                   {"role": "user", "text": "hi"},
                   {"role": "tool_call", "tool_call_id": "c1", "tool_name": "bash", "input": {"command": "ls"}},
                   {"role": "tool_result", "tool_call_id": "c1", "text": "a\nb"},
                   {"role": "assistant", "text": "ok"},
                   {"role": "summary", "text": "earlier"}]}),
    ]);
    Ok(out)
}

fn main() -> anyhow::Result<()> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz/corpus");

    let mut request = Corpus::open(&root, "request")?;
    for r in requests()? {
        request.add(serde_json::to_string(&r)?.as_bytes())?;
    }
    // serde_json writes numbers its own way; these must survive as typed.
    let mcp = r#"{"session_id":"s","surface":"mcp","tool":"mcp__github__create_issue","input":{"n":1E-60,"big":12345678901234567890,"f":0.1,"neg":-0.0,"e":2.5e+300}}"#;
    request.add(mcp.as_bytes())?;

    let mut hooks = Corpus::open(&root, "hook_stdin")?;
    for (selector, id) in (0u8..).zip(HarnessId::all()) {
        let dir = fixtures::path(&format!("harnesses/{}", id.as_str()));
        let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
            .with_context(|| dir.display().to_string())?
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|e| e == "json"))
            .collect();
        files.sort();
        for file in files {
            let bytes = std::fs::read(&file).with_context(|| file.display().to_string())?;
            if serde_json::from_slice::<Value>(&bytes).is_ok() {
                hooks.add_selected(selector, &bytes)?;
            }
        }
    }

    let mut verdicts = Corpus::open(&root, "verdict")?;
    for record in fixtures::records::<Value>(&["verdicts.jsonl"]) {
        if let Some(text) = string_field(&record, "text") {
            verdicts.add(text.as_bytes())?;
        }
    }

    // The target's first byte: format (`% 3`: Claude Code, Codex, Gemini),
    // bit 7 starts mid-line.
    let mut transcripts = Corpus::open(&root, "transcript")?;
    let captured = [
        (0, "harnesses/claude-code/transcript.cut.jsonl"),
        (1, "harnesses/codex/PreToolUse.transcript.jsonl"),
        (
            1,
            "harnesses/codex/PreToolUse.approval-never.transcript.jsonl",
        ),
        (2, "harnesses/gemini/transcript.at_before_tool.jsonl"),
    ];
    for mid_line in [0u8, 0x80] {
        for (format, name) in captured {
            transcripts.add_selected(format | mid_line, fixtures::text(name).as_bytes())?;
        }
    }

    let mut commands = Corpus::open(&root, "bash_hard_deny")?;
    for record in fixtures::records::<Value>(COMMAND_FIXTURES) {
        if let Some(command) = string_field(&record, "command") {
            commands.add(command.as_bytes())?;
        }
    }

    // The target plants a known secret at `selector / 256` of the text.
    let mut redaction = Corpus::open(&root, "redaction")?;
    for (selector, record) in (0u8..=255)
        .cycle()
        .step_by(37)
        .zip(fixtures::records::<Value>(SECRET_FIXTURES))
    {
        if let Some(text) =
            string_field(&record, "text").or_else(|| string_field(&record, "command"))
        {
            redaction.add_selected(selector, text.as_bytes())?;
        }
    }

    for corpus in [request, hooks, verdicts, transcripts, commands, redaction] {
        println!("{}: {} seeds", corpus.dir.display(), corpus.written);
    }
    Ok(())
}
