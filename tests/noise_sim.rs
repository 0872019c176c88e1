//! The noise-aware path end to end on the simulator with its run-to-run variation on
//! ([`servebench::sim::NoiseModel`]): the seed's baseline and optimized configurations on the
//! Throughput profile are called "better" in every trial (two interleaved repetitions of
//! each, paired), and the noise model does vary the runs.
#![cfg(feature = "sim")]

use servebench::compare::{OUTPUT_THROUGHPUT, TOTAL_TOKEN_THROUGHPUT};
use servebench::noise::{compare_repetitions, NoiseVerdict, VerdictOptions};
use servebench::noise::{run_intervals, IntervalError, IntervalOptions};
use servebench::profile::Profile;
use servebench::result::BenchmarkResult;
use servebench::sim::Config;
use servebench::sim::{simulate_repetition, NoiseModel};

fn run(config: &str, seed: u64) -> servebench::sim::Simulated {
    let profile = Profile::preset("throughput").unwrap();
    let config = Config::named(config).unwrap();
    simulate_repetition(&profile, &config, true, &NoiseModel::typical(seed)).unwrap()
}

const TRIALS: u64 = 10;

#[test]
fn optimized_beats_baseline_on_throughput_in_every_trial() {
    let opts = VerdictOptions::default();
    let mut tputs = Vec::new();
    for t in 0..TRIALS {
        // Interleaved A B A B, each run with its own noise seed.
        let mut base: Vec<BenchmarkResult> = Vec::new();
        let mut opt: Vec<BenchmarkResult> = Vec::new();
        for rep in 0..2 {
            base.push(run("baseline", 100 * t + 2 * rep).result);
            opt.push(run("optimized", 100 * t + 2 * rep + 1).result);
        }
        let c = compare_repetitions(&base, &opt, true, &opts);
        for m in [OUTPUT_THROUGHPUT, TOTAL_TOKEN_THROUGHPUT] {
            let d = c.metric(&m).unwrap();
            assert_eq!(
                d.verdict,
                NoiseVerdict::Better,
                "trial {t}: {} {d:?}",
                m.label
            );
        }
        tputs.extend(base.iter().map(|r| r.output_throughput_per_s.unwrap()));
    }
    assert!(
        tputs.windows(2).all(|w| w[0] != w[1]),
        "noise on, yet identical runs: {tputs:?}"
    );
    let mean = tputs.iter().sum::<f64>() / tputs.len() as f64;
    let sd =
        (tputs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (tputs.len() - 1) as f64).sqrt();
    eprintln!(
        "baseline output throughput over {} noisy runs: mean {mean:.0} tok/s, CV {:.2}%",
        tputs.len(),
        100.0 * sd / mean
    );
    // Run-to-run variation as documented: about 1 % from the run factor, more from steps.
    assert!(sd / mean > 0.002 && sd / mean < 0.05, "CV {}", sd / mean);
}

/// One Throughput run is a burst of 1000 requests served in a few waves: its per-window
/// series are correlated over much of the run, so within-run intervals are refused with
/// the reason (repetitions are the way), instead of being invented.
#[test]
fn a_burst_run_says_it_cannot_estimate_its_own_noise() {
    let out = run("baseline", 7);
    match run_intervals(&out.records, &out.result, &IntervalOptions::default()) {
        Err(IntervalError::Correlated { blocks, .. }) => assert!(blocks < 12),
        other => panic!("expected Correlated, got {other:?}"),
    }
}
