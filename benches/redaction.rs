//! Redaction of adversarial text at 16 KiB, 256 KiB and 1 MiB: time must
//! grow linearly with the text, and 1 MiB must take ≤ 50 ms (issue 9).
//!
//! The text (`support/adversarial.rs`) is built to make a naive scanner
//! quadratic. `examples/redact_profile.rs` runs the same input once, for
//! instruction counts under callgrind.
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

#[path = "support/adversarial.rs"]
mod adversarial;

use adversarial::{DENSE, SPARSE, adversarial};

fn bench(c: &mut Criterion) {
    assert!(prepare(), "redaction rules compile");
    // The adversarial text: keywords and near-matches throughout,
    // an encoded piece every 64 pieces (about one per 2 KiB).
    run(c, "redact_adversarial", SPARSE);
    // Every encoding in every few hundred bytes: each decoder view is as
    // large as the text. Reported beside the target, not held to it.
    run(c, "redact_dense_encodings", DENSE);
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
