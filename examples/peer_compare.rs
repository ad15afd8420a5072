//! Side by side with the peer command guards (issue 8): runs the commands
//! from destructive_command_guard's and cc-safety-net's own test suites
//! (extracted by `scripts/peer_commands.py`, as test inputs only) through
//! vouch's hard denies and reports where the verdicts differ.
//!
//! ```text
//! scripts/peer_commands.py --dcg PATH --ccsn PATH > target/peer-commands.jsonl
//! cargo run --release --example peer_compare -- target/peer-commands.jsonl
//! ```
//!
//! Prints a table per peer and writes `target/peer-compare/misses.jsonl`
//! (the peer blocks, vouch does not hard-deny) and
//! `target/peer-compare/false-denies.jsonl` (the peer allows, vouch
//! hard-denies), each line with a first guess at the vouch category it
//! belongs to (`null`: outside vouch's seven categories, e.g. `git reset
//! --hard`, which vouch leaves to the model by design). The guess only
//! sorts the lists for a human; docs/peers.md records the reviewed result.

use std::collections::BTreeMap;
use std::io::Write as _;

use anyhow::{Context as _, bail};
use serde::{Deserialize, Serialize};
use vouch::policy::hard_deny::{self, DenyContext, DenyVerdict, VouchFiles};
use vouch::request::Request;

#[derive(Debug, Deserialize)]
struct PeerCase {
    peer: String,
    source: String,
    command: String,
    peer_says: String,
}

#[derive(Debug, Serialize)]
struct Difference<'a> {
    peer: &'a str,
    source: &'a str,
    command: &'a str,
    peer_says: &'a str,
    vouch: String,
    guess: Option<&'static str>,
}

const CWD: &str = "/home/dev/project";
const HOME: &str = "/home/dev";

fn verdict(command: &str) -> anyhow::Result<DenyVerdict> {
    let body = serde_json::json!({
        "session_id": "peer-compare",
        "surface": "bash",
        "command": command,
        "cwd": CWD,
        "home": HOME,
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

fn describe(v: &DenyVerdict) -> (&'static str, String) {
    match v {
        DenyVerdict::Deny(d) => ("deny", d.rule_id().to_owned()),
        DenyVerdict::ParseFailed { error } => ("parse_failed", error.clone()),
        DenyVerdict::Incomplete { note } => ("analysis_incomplete", note.clone()),
        DenyVerdict::Clear => ("clear", String::new()),
    }
}

const DEVICES: &[&str] = &[
    "/dev/sd",
    "/dev/nvme",
    "/dev/hd",
    "/dev/vd",
    "/dev/xvd",
    "/dev/disk",
    "/dev/rdisk",
    "/dev/mmcblk",
    "/dev/md",
    "/dev/dm-",
    "/dev/mapper",
];
const DEVICE_TOOLS: &[&str] = &[
    "mkfs",
    "wipefs",
    "blkdiscard",
    "sgdisk",
    "sfdisk",
    "parted",
    "fdisk",
];
const CREDENTIALS: &[&str] = &[
    ".env",
    "id_rsa",
    "id_ed25519",
    ".aws/credentials",
    ".netrc",
    ".npmrc",
    ".kube/config",
    ".docker/config.json",
    "auth.json",
    ".credentials.json",
];
const SINKS: &[&str] = &[
    "curl", "wget", " nc ", "ncat", "socat", "scp ", "rsync", "ssh ", "/dev/tcp", "sftp",
];
const ACCESS: &[&str] = &[
    "authorized_keys",
    "sudoers",
    "usermod",
    "gpasswd",
    "adduser",
];
const TRANSPORT: &[&str] = &[
    "--insecure",
    "sslverify",
    "no_verify",
    "reject_unauthorized",
    "strict-ssl",
    "trusted-host",
    "no-check-certificate",
    "pythonhttpsverify",
];
const TRUST: &[&str] = &[
    ".claude/settings",
    ".codex",
    ".gemini/settings",
    ".cursor/",
    ".vouch",
    "/vouch",
];

/// A first guess at the vouch category a command belongs to, from textual
/// cues; `None` when nothing suggests one of the seven.
fn guess(command: &str) -> Option<&'static str> {
    let c = command.to_ascii_lowercase();
    let has = |words: &[&str]| words.iter().any(|w| c.contains(w));
    let curl_k = c.contains("curl")
        && c.split_whitespace()
            .any(|w| w.starts_with('-') && !w.starts_with("--") && w.contains('k'));
    if has(&[":(){", "fork while", "fork()"]) {
        Some("fork-bomb")
    } else if has(DEVICE_TOOLS) || has(DEVICES) {
        Some("device-destroy")
    } else if has(ACCESS) {
        Some("access-persistence")
    } else if has(TRANSPORT) || curl_k {
        Some("transport-security-weakening")
    } else if has(CREDENTIALS) && has(SINKS) {
        Some("credential-exfiltration")
    } else if has(TRUST) {
        Some("trust-boundary")
    } else if wipes_root_or_home(&c) {
        Some("wipe-root-or-home")
    } else {
        None
    }
}

fn wipes_root_or_home(c: &str) -> bool {
    let destructive = c.contains("rm ")
        || c.contains("-delete")
        || c.contains("--no-preserve-root")
        || c.contains("shred")
        || c.contains("rimraf");
    let target = c
        .split(|ch: char| ch.is_whitespace() || ch == '"' || ch == '\'')
        .any(|w| {
            matches!(
                w,
                "/" | "/*"
                    | "~"
                    | "~/"
                    | "~/*"
                    | "$home"
                    | "${home}"
                    | "$home/"
                    | "$home/*"
                    | "/home"
                    | "/root"
                    | ".."
                    | "*"
            )
        });
    destructive && target
}

/// DenyVerdict counts per (peer, what the peer says, what vouch says).
type Table = BTreeMap<(String, String, &'static str), usize>;

fn read_cases(path: &str) -> anyhow::Result<Vec<PeerCase>> {
    let text = std::fs::read_to_string(path).with_context(|| format!("reading `{path}`"))?;
    text.lines()
        .filter(|l| !l.trim().is_empty())
        .map(serde_json::from_str)
        .collect::<Result<_, _>>()
        .with_context(|| format!("parsing `{path}`"))
}

fn print_table(table: &Table) {
    println!(
        "{:<15} {:<6} {:>6} {:>13} {:>6}",
        "peer", "says", "deny", "parse_failed", "clear"
    );
    let mut rows: Vec<(String, String)> = table
        .keys()
        .map(|(p, s, _)| (p.clone(), s.clone()))
        .collect();
    rows.dedup();
    for (peer, says) in &rows {
        let n = |k: &'static str| {
            table
                .get(&(peer.clone(), says.clone(), k))
                .copied()
                .unwrap_or(0)
        };
        println!(
            "{peer:<15} {says:<6} {:>6} {:>13} {:>6}",
            n("deny"),
            n("parse_failed"),
            n("clear")
        );
    }
}

fn write_list(name: &str, list: &[Difference<'_>]) -> anyhow::Result<()> {
    let dir = std::path::Path::new("target/peer-compare");
    std::fs::create_dir_all(dir)?;
    let mut file = std::fs::File::create(dir.join(name))?;
    let mut by_guess: BTreeMap<&str, usize> = BTreeMap::new();
    for d in list {
        writeln!(file, "{}", serde_json::to_string(d)?)?;
        *by_guess
            .entry(d.guess.unwrap_or("(none of the seven)"))
            .or_default() += 1;
    }
    println!("\n{name}: {} lines, first guess by category:", list.len());
    for (category, count) in by_guess {
        println!("  {category:<30} {count}");
    }
    Ok(())
}

fn main() -> anyhow::Result<()> {
    let Some(path) = std::env::args().nth(1) else {
        bail!("usage: peer_compare PEER_COMMANDS.jsonl (see scripts/peer_commands.py)");
    };
    let cases = read_cases(&path)?;
    let mut table = Table::new();
    let mut misses = Vec::new();
    let mut false_denies = Vec::new();
    for case in &cases {
        let v = verdict(&case.command)?;
        let (kind, detail) = describe(&v);
        *table
            .entry((case.peer.clone(), case.peer_says.clone(), kind))
            .or_default() += 1;
        let diff = Difference {
            peer: &case.peer,
            source: &case.source,
            command: &case.command,
            peer_says: &case.peer_says,
            vouch: if detail.is_empty() {
                kind.to_owned()
            } else {
                format!("{kind}: {detail}")
            },
            guess: guess(&case.command),
        };
        match (case.peer_says.as_str(), kind) {
            ("block", "clear" | "parse_failed") => misses.push(diff),
            ("allow", "deny") => false_denies.push(diff),
            _ => {}
        }
    }
    print_table(&table);
    write_list("misses.jsonl", &misses)?;
    write_list("false-denies.jsonl", &false_denies)?;
    Ok(())
}
