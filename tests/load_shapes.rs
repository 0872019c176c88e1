//! Load shapes on the simulator (in-process, its virtual timeline): a burst of 256 streams
//! at t = 0 (the server's batch) fills the server at once, and its first requests' TTFT
//! tail stands far above the steady window's (MSER-5); a staged fill (the cap reached over
//! 30 s, `bench --fill-seconds 30`) lowers that tail.
#![cfg(feature = "sim")]

use std::time::Duration;

use servebench::driver::{run, workload, Arrivals, RunOptions};
use servebench::observe::steady_window;
use servebench::record::RequestRecord;
use servebench::sim::{Config, H200Sim};

fn p99_ttft_ms(records: &[&RequestRecord]) -> f64 {
    let mut v: Vec<f64> = records
        .iter()
        .filter_map(|r| r.ttft())
        .map(|d| d.as_secs_f64() * 1e3)
        .collect();
    v.sort_by(f64::total_cmp);
    v[(v.len() * 99 / 100).min(v.len() - 1)]
}

/// The run's records, and the p99 TTFT of the requests sent before its steady window and
/// of those inside it.
fn burst(cap: usize, fill: Option<Duration>) -> (f64, f64) {
    burst_on(Config::named("baseline").unwrap(), cap, fill)
}

fn burst_on(config: Config, cap: usize, fill: Option<Duration>) -> (f64, f64) {
    let work = workload::random(3000, 512, 256, 0.0, 7, false).unwrap();
    let mut sim = H200Sim::new(config).warmed_up();
    let o = RunOptions {
        arrivals: Arrivals::AllAtOnce,
        max_concurrency: Some(cap),
        fill,
        ..RunOptions::default()
    };
    let records = run(&mut sim, &work, &o).unwrap().records;
    let w = steady_window(&records).unwrap();
    let first: Vec<&RequestRecord> = records.iter().filter(|r| r.sent_at < w.start).collect();
    let steady = w.records(&records);
    assert!(
        first.len() >= 20,
        "{} requests before the window",
        first.len()
    );
    (p99_ttft_ms(&first), p99_ttft_ms(&steady))
}

#[test]
fn a_burst_fill_has_a_tail_the_steady_state_has_not_and_a_staged_fill_lowers_it() {
    // 256 streams, the server's batch: in the steady state a request is sent as another
    // ends and waits for no one; at t = 0 all 256 prefill together. (With 512 streams the
    // steady state queues at the server too, and both tails are long.)
    let (fill_p99, steady_p99) = burst(256, None);
    eprintln!("t = 0 fill: first requests' p99 TTFT {fill_p99:.0} ms, steady {steady_p99:.0} ms");
    assert!(fill_p99 > 5.0 * steady_p99, "{fill_p99} vs {steady_p99}");
    let (staged_p99, staged_steady) = burst(256, Some(Duration::from_secs(30)));
    eprintln!("staged fill: {staged_p99:.0} ms, steady {staged_steady:.0} ms");
    assert!(staged_p99 < fill_p99 / 2.0, "{staged_p99} vs {fill_p99}");
}

/// 512 streams, on a server whose batch and KV cache hold them (FP8 weights,
/// `--max-num-seqs=512`): the t = 0 fill's p99 TTFT (9.5 s) stands far above the steady
/// window's (0.39 s), and a 30-s staged fill brings the first requests' to 0.31 s. (On the
/// BF16 baseline the KV cache cannot hold 512 such requests and the steady state queues
/// too: 9.5 s against 6.9 s.)
#[test]
fn a_burst_of_512_streams_on_a_batch_of_512() {
    let config = servebench::sim::from_engine_args(
        "Qwen/Qwen3.5-35B-A3B-FP8",
        "h200",
        &["--max-num-seqs=512".to_string()],
    )
    .unwrap();
    let (fill_p99, steady_p99) = burst_on(config.clone(), 512, None);
    eprintln!("512 at t = 0: first requests' p99 TTFT {fill_p99:.0} ms, steady {steady_p99:.0} ms");
    let (staged_p99, staged_steady) = burst_on(config, 512, Some(Duration::from_secs(30)));
    eprintln!("512 staged: {staged_p99:.0} ms, steady {staged_steady:.0} ms");
    assert!(fill_p99 > 5.0 * steady_p99, "{fill_p99} vs {steady_p99}");
    assert!(staged_p99 < fill_p99 / 2.0, "{staged_p99} vs {fill_p99}");
}

/// A 12-minute soak (virtual time) at 10 req/s: with a slow leak injected (each step 2×
/// longer per hour, so 40 % longer at the end) the p99 TTFT's drift over 1-minute windows
/// is significant and about the leak's size; without it, none is found.
#[test]
fn a_soak_with_a_slow_leak_reports_drift_and_one_without_does_not() {
    let soak = |leak_per_hour: f64| {
        let work = workload::random(7200, 1024, 128, 0.0, 3, false).unwrap();
        let config = Config::named("baseline").unwrap();
        let mut params = servebench::sim::Params::for_config(&config);
        params.leak_per_hour = leak_per_hour;
        let mut sim = H200Sim::with_params(config, params).warmed_up();
        let o = RunOptions {
            arrivals: Arrivals::Poisson {
                rate: 10.0,
                seed: 5,
            },
            max_concurrency: Some(512),
            ..RunOptions::default()
        };
        let records = run(&mut sim, &work, &o).unwrap().records;
        servebench::noise::ttft_drift(&records, Duration::from_secs(60)).unwrap()
    };
    let leaky = soak(2.0);
    eprintln!("leak: {leaky:?}");
    assert!(
        leaky.significant && leaky.relative_slope_per_hour > 0.5,
        "{leaky:?}"
    );
    let steady = soak(0.0);
    eprintln!("no leak: {steady:?}");
    assert!(!steady.significant, "{steady:?}");
    assert!(steady.windows >= 11);
}
