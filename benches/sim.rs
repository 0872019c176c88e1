//! Simulator speed: simulated requests per second of wall time, and how the cost grows with
//! the number of requests (1 k → 1 M; it should be linear). Each run drives a fresh
//! baseline H200 simulator through the load driver (cap 512 in flight, all requests
//! scheduled at once, Random 128-token prompts / 8 output tokens).

#![allow(missing_docs)]

use std::time::Duration;

use criterion::{black_box, criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use servebench::driver::Arrivals;
use servebench::driver::{run, workload, RunOptions};
use servebench::sim;

fn simulate(n: usize) -> usize {
    let work = match workload::random(n, 128, 8, 0.0, 42, false) {
        Ok(w) => w,
        Err(e) => panic!("{e}"),
    };
    let opts = RunOptions {
        arrivals: Arrivals::AllAtOnce,
        max_concurrency: Some(512),
        ..RunOptions::default()
    };
    let config = sim::Config::named("baseline").unwrap_or_else(|| panic!("no baseline config"));
    let mut engine = sim::H200Sim::new(config);
    match run(&mut engine, &work, &opts) {
        Ok(out) => out.records.len(),
        Err(e) => panic!("{e}"),
    }
}

fn scaling(c: &mut Criterion) {
    let mut g = c.benchmark_group("h200_sim_requests");
    g.sample_size(10);
    g.warm_up_time(Duration::from_millis(500));
    g.measurement_time(Duration::from_secs(3));
    for n in [1_000usize, 10_000, 100_000, 1_000_000] {
        g.throughput(Throughput::Elements(n as u64));
        g.bench_with_input(BenchmarkId::from_parameter(n), &n, |b, &n| {
            b.iter(|| black_box(simulate(n)))
        });
    }
    g.finish();
}

criterion_group!(benches, scaling);
criterion_main!(benches);
