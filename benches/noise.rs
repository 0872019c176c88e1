//! Within-run confidence intervals (`noise::run_intervals`, 1000 resamples) against
//! `metrics::compute` on the same records: 10 k requests / 1 M chunk events, and with
//! `SERVEBENCH_BENCH_LARGE=1` 1 M requests / 100 M chunk events (≈ 3.5 GB RAM). The goal:
//! intervals at most 5× compute's own time.

use std::hint::black_box;
use std::time::Duration;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use servebench::metrics::compute;
use servebench::noise::{run_intervals, IntervalOptions};
use servebench::record::synthetic as dataset;
use servebench::result::Convention;

fn bench_size(c: &mut Criterion, requests: usize, chunks: usize, samples: usize) {
    let records = dataset::generate(requests, chunks, (requests as f64 / 1000.0).max(1.0), 42);
    let result = compute(&records, Convention::Vllm);
    let opts = IntervalOptions::default();
    let ci = run_intervals(&records, &result, &opts).expect("intervals");
    eprintln!(
        "{requests} requests: {} blocks; output throughput {:.1} [{:.1}, {:.1}], p99 ITL {:.3} ms {:?}",
        ci.blocks,
        result.output_throughput_per_s.unwrap_or(f64::NAN),
        ci.output_throughput_per_s.map_or(f64::NAN, |i| i.lo),
        ci.output_throughput_per_s.map_or(f64::NAN, |i| i.hi),
        result.itl.as_ref().and_then(|s| s.percentile(99.0)).unwrap_or(f64::NAN),
        ci.itl.as_ref().and_then(|s| s.percentile(99.0)),
    );
    let mut g = c.benchmark_group(format!("noise_{requests}req_{chunks}chunks"));
    g.throughput(Throughput::Elements((requests * chunks) as u64));
    g.sample_size(samples);
    g.measurement_time(Duration::from_secs(10));
    g.warm_up_time(Duration::from_secs(1));
    g.bench_function("compute_vllm", |b| {
        b.iter(|| black_box(compute(&records, Convention::Vllm)))
    });
    g.bench_function("intervals_1000_resamples", |b| {
        b.iter(|| black_box(run_intervals(&records, &result, &opts)))
    });
    g.finish();
}

fn small(c: &mut Criterion) {
    bench_size(c, 10_000, 100, 10);
}

fn large(c: &mut Criterion) {
    if std::env::var_os("SERVEBENCH_BENCH_LARGE").is_some() {
        bench_size(c, 1_000_000, 100, 10);
    }
}

criterion_group!(benches, small, large);
criterion_main!(benches);
