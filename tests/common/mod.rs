//! Helpers for the HTTP and driver tests and the load check: the deterministic
//! virtual-time engine (the library's [`FixedEngine`], named `TestEngine` here), work items
//! and a driver run.
#![allow(dead_code, unused_imports)]

#[cfg(feature = "cli")]
pub mod example_server;
pub mod kids;
pub mod request_keys;
pub mod scrape;

use std::time::Duration;

use servebench::driver::workload::WorkItem;
use servebench::driver::Arrivals;
use servebench::driver::RunOptions;
use servebench::engine::Engine;
pub use servebench::engine::FixedEngine as TestEngine;

/// `n` Random-dataset work items (no prompt text: the HTTP client synthesizes it).
pub fn work(n: usize, input: u64, output: u64) -> Vec<WorkItem> {
    vec![
        WorkItem {
            prompt_tokens: input,
            output_tokens: output,
            prompt: None,
            shared_prefix_tokens: 0,
        };
        n
    ]
}

/// Run `work` through the load driver: arrivals `gap_ms` apart (all at once for 0), at most
/// `cap` in flight, a 60 s limit.
pub fn run(
    engine: &mut impl Engine,
    work: &[WorkItem],
    gap_ms: u64,
    cap: usize,
) -> Vec<servebench::record::RequestRecord> {
    let opts = RunOptions {
        arrivals: if gap_ms == 0 {
            Arrivals::AllAtOnce
        } else {
            Arrivals::Constant {
                rate: 1000.0 / gap_ms as f64,
            }
        },
        max_concurrency: Some(cap),
        max_duration: Some(Duration::from_secs(60)),
        ..RunOptions::default()
    };
    let out = servebench::driver::run(engine, work, &opts).expect("driver");
    assert!(out.aborted.is_none(), "{:?}", out.aborted);
    out.records
}
