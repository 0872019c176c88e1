//! Import throughput on a large generated guidellm report (MB/s), against
//! `serde_json::from_slice::<Value>` on the same bytes.
//!
//! The file is the real `constant_rate20.json` fixture with its request list repeated until
//! the report is about 64 MB (`SERVEBENCH_BENCH_MB` overrides), written once to
//! `target/bench-guidellm-large.json` so other tools (guidellm's own loader) can time the
//! same bytes. `SERVEBENCH_BENCH_FILE=PATH` benches a given file instead (a report made by
//! guidellm itself; see benches/HISTORY.md for the command that makes one).

use std::path::Path;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};

fn large_report() -> Vec<u8> {
    let mb: usize = std::env::var("SERVEBENCH_BENCH_MB")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(64);
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let fixture =
        std::fs::read(root.join("tests/fixtures/guidellm/constant_rate20.json")).expect("fixture");
    let mut doc: serde_json::Value = serde_json::from_slice(&fixture).expect("fixture parses");
    let requests = doc["benchmarks"][0]["requests"]["successful"]
        .as_array()
        .expect("requests")
        .clone();
    let per_request = fixture.len() / requests.len();
    let copies = (mb << 20) / per_request / requests.len() + 1;
    let list = doc["benchmarks"][0]["requests"]["successful"]
        .as_array_mut()
        .expect("requests");
    for _ in 1..copies {
        list.extend(requests.iter().cloned());
    }
    let bytes = serde_json::to_vec(&doc).expect("serializes");
    let out = root.join("target/bench-guidellm-large.json");
    let _ = std::fs::write(out, &bytes);
    bytes
}

fn bench(c: &mut Criterion) {
    let bytes = match std::env::var_os("SERVEBENCH_BENCH_FILE") {
        Some(path) => std::fs::read(&path).expect("SERVEBENCH_BENCH_FILE reads"),
        None => large_report(),
    };
    let mut g = c.benchmark_group("guidellm_import");
    g.throughput(Throughput::Bytes(bytes.len() as u64));
    g.sample_size(10);
    g.bench_function("servebench_guidellm_from_slice", |b| {
        b.iter(|| servebench::import::guidellm::from_slice(&bytes).expect("imports"))
    });
    g.bench_function("serde_json_value_from_slice", |b| {
        b.iter(|| serde_json::from_slice::<serde_json::Value>(&bytes).expect("parses"))
    });
    // The NaN-tolerant path: the same report with one bare NaN goes through the
    // streaming filter.
    let text = String::from_utf8(bytes.clone()).expect("utf-8");
    let with_nan = text.replacen("\"slo_attainment\":null", "\"slo_attainment\":NaN", 1);
    if with_nan == text {
        // A file without the marker (guidellm's own layout): no NaN variant.
        g.finish();
        return;
    }
    g.bench_function("servebench_guidellm_from_slice_with_nan", |b| {
        b.iter(|| servebench::import::guidellm::from_slice(with_nan.as_bytes()).expect("imports"))
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
