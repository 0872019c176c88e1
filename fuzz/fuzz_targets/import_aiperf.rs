//! Fuzz aiperf's three readers (`profile_export.jsonl`, `profile_export_aiperf.json` and
//! `.csv`): typed errors, never a panic; records' chunks stay in time order.
#![no_main]

use libfuzzer_sys::fuzz_target;
use servebench::import::aiperf;

fuzz_target!(|data: &[u8]| {
    if let Ok(run) = aiperf::records_from_slice(data) {
        for r in &run.records {
            assert!(r.chunks.windows(2).all(|w| w[0].at <= w[1].at));
            assert!(r.chunks.first().is_none_or(|c| c.at >= r.sent_at));
        }
    }
    let _ = aiperf::aggregate_from_slice(data);
    let _ = aiperf::csv_from_slice(data);
});
