//! Fuzz guidellm's CSV and YAML readers (`servebench::import::guidellm::{from_csv_slice, from_yaml_slice}`):
//! typed errors, never a panic; a CSV run's summaries keep their percentiles in order of
//! rank.
#![no_main]

use libfuzzer_sys::fuzz_target;
use servebench::import::guidellm::{from_csv_slice, from_yaml_slice};

fuzz_target!(|data: &[u8]| {
    if let Ok(runs) = from_csv_slice(data) {
        for (_, _, r) in &runs {
            for s in [&r.ttft, &r.tpot, &r.itl, &r.e2el].into_iter().flatten() {
                assert!(s.percentiles.windows(2).all(|w| w[0].p < w[1].p));
            }
        }
    }
    let _ = from_yaml_slice(data);
});
