//! Simulator speed: simulated requests per second of wall time, and how the cost grows with
//! the number of requests (1 k → 1 M; it should be linear). Each run drives a fresh
//! baseline H200 simulator through the load driver (cap 512 in flight, all requests
//! scheduled at once, Random 128-token prompts / 8 output tokens); and the same at 100 k
//! requests for each step model: the BF16 35B and the 9B (operator tables) and the FP8
//! 35B (calibrated roofline).

#![allow(missing_docs)]

use std::time::Duration;

use criterion::{black_box, criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use servebench::driver::Arrivals;
use servebench::driver::{run, workload, RunOptions};
use servebench::sim;

fn simulate(n: usize) -> usize {
    let config = sim::Config::named("baseline").unwrap_or_else(|| panic!("no baseline config"));
    simulate_on(n, config)
}

fn simulate_on(n: usize, config: sim::Config) -> usize {
    let work = match workload::random(n, 128, 8, 0.0, 42, false) {
        Ok(w) => w,
        Err(e) => panic!("{e}"),
    };
    let opts = RunOptions {
        arrivals: Arrivals::AllAtOnce,
        max_concurrency: Some(512),
        ..RunOptions::default()
    };
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

/// The two step models at 100 k requests, `baseline` on an H200: the operator tables
/// (every step a sum of interpolated kernel times: the BF16 35B and the 9B) and the
/// calibrated roofline (the FP8 35B).
fn step_models(c: &mut Criterion) {
    let mut g = c.benchmark_group("h200_sim_step_model");
    g.sample_size(10);
    let n = 100_000usize;
    g.throughput(Throughput::Elements(n as u64));
    for (label, model) in [
        ("35b_operator_tables", "qwen3.5-35b-a3b"),
        ("35b_fp8_roofline", "Qwen/Qwen3.5-35B-A3B-FP8"),
        ("9b_operator_tables", "qwen3.5-9b"),
    ] {
        let config = match sim::Config::named_on("baseline", model, "h200") {
            Ok(c) => c,
            Err(e) => panic!("{e}"),
        };
        g.bench_with_input(BenchmarkId::new(label, n), &n, |b, &n| {
            b.iter(|| black_box(simulate_on(n, config.clone())))
        });
    }
    g.finish();
}

criterion_group!(benches, scaling, step_models);
criterion_main!(benches);
