//! `observe` on the simulator, where every quantity is known: the seed's Throughput profile,
//! baseline vs FP8 weights ("quantization"), with the simulator's vLLM metrics sampled as a
//! scraper would; the explained parts add up to the measured change of mean TTFT and TPOT
//! within 1 %, and the summaries equal the simulator's own counters.
#![cfg(feature = "sim")]

use std::time::Duration;

use servebench::driver::Arrivals;
use servebench::driver::DatasetSpec;
use servebench::driver::{run, RunOptions};
use servebench::observe::Known;
use servebench::observe::{client_ttft_ms, explain, RunView};
use servebench::profile::Profile;
use servebench::sim::{simulate_observed, Config, H200Sim};

#[test]
fn baseline_vs_fp8_parts_add_up_to_the_measured_change() {
    let profile = Profile::preset("throughput").unwrap();
    let run = |name: &str| {
        simulate_observed(
            &profile,
            &Config::named(name).unwrap(),
            0,
            false,
            Duration::from_secs(1),
        )
        .unwrap()
    };
    let (base, sa) = run("baseline");
    let (cand, sb) = run("quantization");
    let e = explain(
        &RunView {
            label: "baseline",
            records: &base.records,
            server: Some(&sa),
        },
        &RunView {
            label: "quantization",
            records: &cand.records,
            server: Some(&sb),
        },
    );
    println!("{}", e.render());
    println!("{}", e.paragraph());
    for b in [e.ttft.as_ref().unwrap(), e.tpot.as_ref().unwrap()] {
        let d = b.delta_ms();
        assert!(
            d.abs() > 0.1,
            "{}: the configurations must differ ({d} ms)",
            b.metric
        );
        assert!(
            (b.explained_ms() - d).abs() <= 0.01 * d.abs(),
            "{}: parts {} ms vs measured {d} ms",
            b.metric,
            b.explained_ms()
        );
    }
    // The client's TTFT is the one the run's result reports.
    let reported = base.result.ttft.as_ref().and_then(|s| s.mean).unwrap();
    assert!((client_ttft_ms(&base.records).unwrap() - reported).abs() < 1e-6 * reported);
}

#[test]
fn the_summary_equals_the_simulators_own_counters() {
    // Prefix caching on, 2048-token prompts whose text shares a 1900-token prefix (the
    // simulator's cache finds it by hashing the text), a small pool: preemptions and prefix
    // hits both happen.
    let config = Config::named("prefix-cache").unwrap();
    let mut params = servebench::sim::Params::for_config(&config);
    params.kv_pool_bytes /= 8.0;
    let mut sim = H200Sim::with_params(config, params)
        .warmed_up()
        .sample_metrics_every(Duration::from_millis(500));
    let work = DatasetSpec::SharedPrefix {
        groups: 1,
        prompts_per_group: 300,
        prefix_tokens: 1900,
        input_tokens: 148,
        output_tokens: 512,
        seed: 1,
    }
    .build(None)
    .unwrap()
    .items;
    let opts = RunOptions {
        arrivals: Arrivals::AllAtOnce,
        ..RunOptions::default()
    };
    let out = run(&mut sim, &work, &opts).unwrap();
    let series = sim.metrics_series().unwrap();
    let sum = series.summary();
    assert!(sim.preemptions() > 0, "the small pool must preempt");
    assert_eq!(sum.preemptions, Some(sim.preemptions() as f64));
    let m = sim.metrics();
    assert!(m.prefix_cache_hits > 0);
    assert_eq!(
        sum.prefix_cache_hits_tokens,
        Some(m.prefix_cache_hits as f64)
    );
    assert_eq!(
        sum.prefix_cache_queries_tokens,
        Some(m.prefix_cache_queries as f64)
    );
    let rate = sum.prefix_cache_hit_rate.unwrap();
    assert!(rate > 0.5 && rate < 1.0, "{rate}");
    let generated: u64 = out.records.iter().map(|r| r.client_output_tokens()).sum();
    assert_eq!(generated, 300 * 512);
    assert_eq!(
        series.increase(Known::GenerationTokens.names()),
        Some(generated as f64),
        "every token the client received was counted"
    );
    let peak = sum.kv_cache_usage_peak.unwrap();
    assert!(peak > 0.5 && peak <= 1.0, "{peak}");
    assert!(sum.running_mean.unwrap() > 1.0);
}
