//! `metrics::compute` on synthetic runs: 10 k requests / 1 M chunk events, and 1 M requests /
//! 100 M chunk events (about 2.5 GB of records; few samples), in both conventions. On the
//! small run, `guidellm_reference` times the straightforward computation `compute` used
//! before its fast path (`guidellm_metrics`, every status group, plus the exact figures).

use std::hint::black_box;
use std::time::Duration;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use servebench::metrics::{compute, exact_figures, guidellm_metrics, MetricsOptions};
use servebench::record::synthetic as dataset;
use servebench::result::Convention;

fn bench_size(c: &mut Criterion, requests: usize, chunks: usize, samples: usize, reference: bool) {
    let records = dataset::generate(requests, chunks, (requests as f64 / 1000.0).max(1.0), 42);
    let mut g = c.benchmark_group(format!("compute_{requests}req_{chunks}chunks"));
    g.throughput(Throughput::Elements((requests * chunks) as u64));
    g.sample_size(samples);
    g.measurement_time(Duration::from_secs(10));
    g.warm_up_time(Duration::from_secs(1));
    g.bench_function("vllm", |b| {
        b.iter(|| black_box(compute(&records, Convention::Vllm)))
    });
    g.bench_function("guidellm", |b| {
        b.iter(|| black_box(compute(&records, Convention::Guidellm)))
    });
    if reference {
        let opts = MetricsOptions::new(Convention::Guidellm);
        g.bench_function("guidellm_reference", |b| {
            b.iter(|| black_box((guidellm_metrics(&records, &opts), exact_figures(&records))))
        });
    }
    g.finish();
}

fn small(c: &mut Criterion) {
    bench_size(c, 10_000, 100, 20, true);
}

fn large(c: &mut Criterion) {
    // Skipped unless asked for: SERVEBENCH_BENCH_LARGE=1 cargo bench --bench metrics
    if std::env::var_os("SERVEBENCH_BENCH_LARGE").is_some() {
        bench_size(c, 1_000_000, 100, 10, false);
    }
}

criterion_group!(benches, small, large);
criterion_main!(benches);
