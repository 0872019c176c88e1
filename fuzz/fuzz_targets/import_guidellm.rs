//! Fuzz the guidellm importer: any bytes give a report or a typed error, never a panic;
//! an imported report keeps its invariants and its aggregates survive a JSON round trip;
//! the parallel parse agrees with the sequential one whenever it applies.
#![no_main]

use libfuzzer_sys::fuzz_target;
use servebench::import::guidellm;
use servebench::BenchmarkResult;

fuzz_target!(|data: &[u8]| {
    // The parallel parse (large files) either declines or gives the sequential result.
    let sequential = guidellm::from_slice_sequential(data);
    if let Some(parallel) = guidellm::from_slice_parallel(data, 2) {
        assert_eq!(format!("{parallel:?}"), format!("{sequential:?}"));
    }
    let Ok(report) = sequential else {
        return;
    };
    for b in &report.benchmarks {
        assert_eq!(b.records.len(), b.in_window.len());
        assert!(b.window_start <= b.window_end);
        for r in &b.records {
            assert!(r.chunks.windows(2).all(|w| w[0].at <= w[1].at));
            if let Some(end) = r.ended_at {
                assert!(end >= r.sent_at);
            }
        }
        let _ = servebench::lint::lint_run(&b.result, Some(&b.measured_records()), &Default::default());
        let json = serde_json::to_string(&b.result).expect("serializes");
        // serde_json's default float parser may differ in the last bit: compare the rest.
        let back: BenchmarkResult = serde_json::from_str(&json).expect("reads back");
        assert_eq!(back.successful_requests, b.result.successful_requests);
        assert_eq!(back.total_output_tokens, b.result.total_output_tokens);
        assert_eq!(back.meta, b.result.meta);
    }
});
