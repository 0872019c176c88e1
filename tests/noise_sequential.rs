//! The sequential decision rule (`repetitions = "auto"`, `servebench ab`) calibrated on the
//! simulator with its run-to-run noise on ([`servebench::sim::noise`]): seeded A/A
//! comparisons of the Throughput profile's shape (a burst of random 1024/128 requests;
//! 200 of them, to keep the test fast) call the target metric different in at most 5 %
//! of trials (± sampling error); a true 3 % effect (the candidate's GPU 3 % faster in every
//! step) is kept in at least 80 %; the mean number of repetitions is printed
//! (`cargo test --test noise_sequential -- --nocapture`; the figures are in
//! docs/guide/decisions.md).
#![cfg(feature = "study")]

use servebench::compare::TOTAL_TOKEN_THROUGHPUT;
use servebench::noise::sequential::{Design, Outcome};
use servebench::profile::Profile;
use servebench::sim::noise::NoiseModel;
use servebench::sim::{Config, Params};
use servebench::study::runner::simulate_run;

fn profile() -> Profile {
    let mut p = Profile::preset("throughput").unwrap();
    p.total_requests = 200;
    p
}

/// The deployment's parameters, every step `speedup` times faster.
fn params(config: &Config, speedup: f64) -> Params {
    let mut p = Params::for_config(config);
    let s = &mut p.step;
    s.hbm_bytes_per_s *= speedup;
    s.peak_mm *= speedup;
    s.peak_bf16 *= speedup;
    s.t0_s /= speedup;
    s.t_mix_s /= speedup;
    s.draft_t0_s /= speedup;
    p
}

/// Total token throughput of one run with noise seed `noise` (`None`: deterministic).
fn tput(speedup: f64, noise: Option<u64>) -> f64 {
    let config = Config::named("baseline").unwrap();
    let mut p = params(&config, speedup);
    p.noise = noise.map(NoiseModel::typical);
    let out = simulate_run(&profile(), config, p, 0, true).unwrap();
    TOTAL_TOKEN_THROUGHPUT.value(&out.result).unwrap()
}

/// One sequential comparison, A B A B …, each run with its own noise seed: the outcome and
/// the repetitions per side it took.
fn compare(design: &Design, speedup: f64, trial: u64) -> (Outcome, usize) {
    let (mut a, mut b) = (Vec::new(), Vec::new());
    loop {
        let k = a.len() as u64;
        a.push(tput(1.0, Some(trial * 1000 + 2 * k)));
        b.push(tput(speedup, Some(trial * 1000 + 2 * k + 1)));
        if a.len() < design.first_look as usize {
            continue;
        }
        let look = design.look(&a, &b, true);
        if look.outcome != Outcome::Continue {
            return (look.outcome, a.len());
        }
    }
}

/// Upper end of "5 % ± sampling error" for `n` trials (1.96 binomial standard errors).
fn allowed(n: usize) -> f64 {
    0.05 + 1.96 * (0.05 * 0.95 / n as f64).sqrt()
}

#[test]
fn aa_comparisons_call_the_target_different_at_most_five_percent_of_the_time() {
    let design = Design::default();
    const TRIALS: u64 = 200;
    let mut different = 0;
    let mut reps = 0;
    let mut values = Vec::new();
    for t in 0..TRIALS {
        let (o, n) = compare(&design, 1.0, t);
        different += usize::from(o.is_different());
        reps += n;
        if t == 0 {
            values.push(tput(1.0, Some(0)));
            values.push(tput(1.0, Some(2)));
        }
    }
    assert_ne!(values[0], values[1], "the noise is on");
    let rate = different as f64 / TRIALS as f64;
    eprintln!(
        "A/A: {different} of {TRIALS} comparisons called different ({:.1}%), mean {:.2} repetitions per side",
        100.0 * rate,
        reps as f64 / TRIALS as f64
    );
    assert!(rate <= allowed(TRIALS as usize), "{rate}");
}

#[test]
fn a_true_three_percent_effect_is_kept_in_at_least_eighty_percent_of_trials() {
    // The effect, measured without noise: 3 % within ±0.3 %.
    let effect = tput(1.03, None) / tput(1.0, None) - 1.0;
    assert!((effect - 0.03).abs() < 0.003, "true effect {effect}");
    let design = Design::default();
    const TRIALS: u64 = 100;
    let mut kept = 0;
    let mut reps = 0;
    for t in 0..TRIALS {
        let (o, n) = compare(&design, 1.03, 10_000 + t);
        kept += usize::from(o == Outcome::Better);
        reps += n;
    }
    let power = kept as f64 / TRIALS as f64;
    eprintln!(
        "true effect {:+.2}%: kept in {kept} of {TRIALS} ({:.0}%), mean {:.2} repetitions per side",
        100.0 * effect,
        100.0 * power,
        reps as f64 / TRIALS as f64
    );
    assert!(power >= 0.8, "{power}");
}
