//! Fuzz guidellm's CSV and YAML readers (`servebench::import::guidellm::{csv, yaml}`):
//! typed errors, never a panic; a CSV run's summaries keep their percentiles in order of
//! rank.
#![no_main]

use libfuzzer_sys::fuzz_target;
use servebench::import::guidellm::{csv, yaml};

fuzz_target!(|data: &[u8]| {
    if let Ok(runs) = csv::from_slice(data) {
        for (_, _, r) in &runs {
            for s in [&r.ttft, &r.tpot, &r.itl, &r.e2el].into_iter().flatten() {
                assert!(s.percentiles.windows(2).all(|w| w[0].p < w[1].p));
            }
        }
    }
    let _ = yaml::from_slice(data);
});
