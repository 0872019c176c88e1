//! 512 concurrent streams on 2 threads, each chunk event stamped by the collector's clock
//! (or, with `--explicit-time`, by the driver): events per second by wall clock and per
//! CPU-second, and a check that no event was lost. On a shared machine the CPU figure is
//! the one to read: `events / (process CPU time / threads)` is the rate two dedicated
//! cores would sustain.
//!
//! ```text
//! cargo run --release --example collector_throughput -- [--events 40000000] [--explicit-time]
//! ```

use std::sync::Barrier;
use std::time::{Duration, Instant};

use servebench::collector::{Collector, CollectorOptions, SystemClock};
use servebench::engine::Usage;

/// Process user+system CPU seconds from `/proc/self/stat` (Linux, 100 Hz ticks).
fn cpu_seconds() -> Option<f64> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    let after = &stat[stat.rfind(')')? + 2..];
    let f: Vec<&str> = after.split_whitespace().collect();
    Some((f.get(11)?.parse::<f64>().ok()? + f.get(12)?.parse::<f64>().ok()?) / 100.0)
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let events: u64 = args
        .iter()
        .position(|a| a == "--events")
        .and_then(|i| args.get(i + 1))
        .and_then(|v| v.parse().ok())
        .unwrap_or(40_000_000);
    let explicit = args.iter().any(|a| a == "--explicit-time");
    let (threads, streams) = (2usize, 512usize);
    let collector = Collector::with_options(
        SystemClock::new(),
        CollectorOptions {
            keep_records: false,
            histograms: false,
        },
    );
    let per_thread = events / threads as u64;
    let barrier = Barrier::new(threads + 1);
    let cpu0 = cpu_seconds();
    let t0 = Instant::now();
    std::thread::scope(|s| {
        for _ in 0..threads {
            let (c, barrier) = (&collector, &barrier);
            s.spawn(move || {
                let mut reqs: Vec<_> = (0..streams / threads).map(|_| c.begin()).collect();
                let n = reqs.len();
                for r in reqs.iter_mut() {
                    r.reserve_chunks(per_thread as usize / n + 1);
                }
                barrier.wait();
                for i in 0..per_thread as usize {
                    if explicit {
                        reqs[i % n].chunk_at(Duration::from_nanos(i as u64), 1);
                    } else {
                        reqs[i % n].chunk(1);
                    }
                }
                for r in reqs {
                    r.finish(Usage::default());
                }
            });
        }
        barrier.wait();
    });
    let wall = t0.elapsed().as_secs_f64();
    let cpu = cpu_seconds().zip(cpu0).map(|(b, a)| b - a);
    let snap = collector.snapshot();
    let total = per_thread * threads as u64;
    let lost = total - snap.chunks;
    println!(
        "{} events over {streams} streams on {threads} threads ({}): {:.2} s wall = {:.1} M events/s; \
         {} CPU s = {} M events/s per 2 dedicated cores; lost {lost}; tokens counted {}",
        total,
        if explicit { "driver timestamps" } else { "clock read per event" },
        wall,
        total as f64 / wall / 1e6,
        cpu.map_or("?".into(), |c| format!("{c:.2}")),
        cpu.map_or("?".into(), |c| format!("{:.1}", total as f64 / (c / threads as f64) / 1e6)),
        snap.output_tokens,
    );
    if lost != 0 || snap.output_tokens != total {
        std::process::exit(1);
    }
}
