//! Redaction of adversarial text at 16 KiB, 256 KiB and 1 MiB: time must
//! grow linearly with the text, and 1 MiB must take ≤ 50 ms (issue 9).
//!
//! The text is built to make a naive scanner quadratic: keywords repeated
//! back to back (`token=token=…`, `key:key:…`), near-matches of every kind
//! (provider prefixes with bodies one character short, PEM headers without
//! material, URLs without a password, JWT lookalikes), and every encoding
//! the decoder views undo (URL escapes, JSON escapes, shell quoting).
//! Run: `cargo bench --bench redaction -- --warm-up-time 1 --measurement-time 3`.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

use std::hint::black_box;

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use vouch::evidence::redact::{prepare, redact_text};

/// Pieces that each stress one part of the scanner: repeated keywords and
/// near-matches.
const PIECES: &[&str] = &[
    "token=token=token=token=token=token=token=token=",
    "key:key:key:key:key:key:key:key:key:key:key:",
    "password=$password=$password=$password=",
    "ghp_short ghp_ ghp_abc sk-ant- sk- AKIA1234 xoxb- glpat- hf_ npm_ AIza ",
    "-----BEGIN RSA PRIVATE KEY----- -----END RSA PRIVATE KEY----- ",
    "https://user@host/ http://a:b http://x.y/@z s3://bucket/key ",
    "eyJhbGciOi.eyJzdWIi eyJ eyJ.eyJ. ",
    "curl -u curl -u curl -H mysql -p mysql --password --token --api-key ",
    "machine machine login password ",
    r#"{"name": "value", "value": "name"} "#,
    "authorization: bearer authorization: cookie: set-cookie: ",
    "secret_key=SECRET_KEY=secretKey=apiKey=api_key=clientSecret= ",
    "the author used the tokenizer on the keyboard next to a monkey\n",
];

/// Encoded near-matches: URL escapes, JSON escapes, shell quoting. Each
/// one makes the decoder views scan the text around it.
const ENCODED: &[&str] = &[
    "%3D%3D%3D%25token%3D%2520Bearer%2520 ",
    r#"\"password\":\"\",\"token\":\"\",\"key\":\"\" "#,
    r#"'a'\''b'"c\"d"$'\x41' "#,
];

/// Adversarial text of `len` bytes with an encoded piece every
/// `encoded_every` pieces.
fn adversarial(len: usize, encoded_every: usize) -> String {
    let mut out = String::with_capacity(len + 128);
    let mut i = 0;
    while out.len() < len {
        out.push_str(PIECES[i % PIECES.len()]);
        if i % encoded_every == 0 {
            out.push_str(ENCODED[(i / encoded_every) % ENCODED.len()]);
        }
        i += 1;
    }
    out.truncate(out.floor_char_boundary(len));
    out
}

fn bench(c: &mut Criterion) {
    assert!(prepare(), "redaction rules compile");
    // The issue's adversarial text: keywords and near-matches throughout,
    // an encoded piece every 64 pieces (about one per 2 KiB).
    run(c, "redact_adversarial", 64);
    // Every encoding in every few hundred bytes: each decoder view is as
    // large as the text. Reported beside the target, not held to it.
    run(c, "redact_dense_encodings", 1);
}

fn run(c: &mut Criterion, name: &str, encoded_every: usize) {
    let mut group = c.benchmark_group(name);
    group.sample_size(10);
    for kib in [16usize, 256, 1024] {
        let text = adversarial(kib * 1024, encoded_every);
        group.throughput(Throughput::Bytes(text.len() as u64));
        group.bench_with_input(
            BenchmarkId::from_parameter(format!("{kib}KiB")),
            &text,
            |b, t| {
                b.iter(|| black_box(redact_text(black_box(t))));
            },
        );
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
