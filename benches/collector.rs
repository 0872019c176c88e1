//! Collector hot path: one chunk event against a bare `Instant::now()`, and throughput with
//! 512 concurrent streams driven by 2 threads (every event accounted for).

use std::hint::black_box;
use std::sync::Barrier;
use std::time::{Duration, Instant};

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use servebench::collector::{Collector, CollectorOptions, SystemClock};
use servebench::engine::Usage;

fn no_records() -> CollectorOptions {
    CollectorOptions {
        keep_records: false,
        histograms: false,
    }
}

fn chunk_event(c: &mut Criterion) {
    let mut g = c.benchmark_group("chunk_event");
    g.bench_function("bare_instant_now", |b| b.iter(|| black_box(Instant::now())));
    let collector = Collector::with_options(SystemClock::new(), no_records());
    g.bench_function("handle_chunk", |b| {
        b.iter_custom(|iters| {
            let mut h = collector.begin();
            h.reserve_chunks(iters as usize);
            let t = Instant::now();
            for _ in 0..iters {
                h.chunk(black_box(1));
            }
            let e = t.elapsed();
            h.finish(Usage::default());
            e
        })
    });
    g.bench_function("handle_chunk_growing_vec", |b| {
        b.iter_custom(|iters| {
            // Realistic: 128-chunk requests, the Vec grows as chunks arrive.
            let mut total = Duration::ZERO;
            let mut left = iters;
            while left > 0 {
                let n = left.min(128);
                let mut h = collector.begin();
                let t = Instant::now();
                for _ in 0..n {
                    h.chunk(black_box(1));
                }
                total += t.elapsed();
                h.finish(Usage::default());
                left -= n;
            }
            total
        })
    });
    g.finish();
}

/// `events` chunk events over 512 open requests, 256 per thread, round-robin; each event
/// reads the clock (`explicit_time == false`) or carries the driver's own timestamp.
fn run_streams(
    collector: &Collector,
    events: u64,
    threads: usize,
    streams: usize,
    explicit_time: bool,
) -> Duration {
    let per_thread = events / threads as u64;
    let barrier = Barrier::new(threads);
    let elapsed = std::thread::scope(|s| {
        let handles: Vec<_> = (0..threads)
            .map(|_| {
                let barrier = &barrier;
                s.spawn(move || {
                    let mut reqs: Vec<_> =
                        (0..streams / threads).map(|_| collector.begin()).collect();
                    let per_req = (per_thread as usize).div_ceil(reqs.len()) + 1;
                    for r in reqs.iter_mut() {
                        r.reserve_chunks(per_req);
                    }
                    barrier.wait();
                    let t = Instant::now();
                    let n = reqs.len();
                    if explicit_time {
                        for i in 0..per_thread as usize {
                            reqs[i % n].chunk_at(Duration::from_nanos(i as u64), 1);
                        }
                    } else {
                        for i in 0..per_thread as usize {
                            reqs[i % n].chunk(1);
                        }
                    }
                    let e = t.elapsed();
                    for r in reqs {
                        r.finish(Usage::default());
                    }
                    e
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().unwrap_or_default())
            .max()
            .unwrap_or_default()
    });
    elapsed
}

fn streams_512(c: &mut Criterion) {
    let mut g = c.benchmark_group("streams_512_threads_2");
    g.throughput(Throughput::Elements(1));
    g.sample_size(20);
    for (name, explicit) in [("chunk_events", false), ("chunk_at_events", true)] {
        g.bench_function(name, |b| {
            b.iter_custom(|iters| {
                let collector = Collector::with_options(SystemClock::new(), no_records());
                let events = iters.max(2) & !1;
                let e = run_streams(&collector, events, 2, 512, explicit);
                // Nothing lost: every event is counted, every request ended.
                let snap = collector.snapshot();
                assert_eq!(snap.chunks, events, "lost chunk events");
                assert_eq!(snap.output_tokens, events, "lost tokens");
                assert_eq!(
                    (snap.started, snap.succeeded, snap.in_flight),
                    (512, 512, 0)
                );
                // Scale to the requested iteration count (events is iters rounded to even).
                e.mul_f64(iters as f64 / events as f64)
            })
        });
    }
    g.finish();
}

criterion_group!(benches, chunk_event, streams_512);
criterion_main!(benches);
