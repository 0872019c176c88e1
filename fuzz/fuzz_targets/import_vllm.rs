//! Fuzz the vLLM importer (JSON and JSON Lines): no panic; records keep their order.
#![no_main]

use libfuzzer_sys::fuzz_target;
use servebench::import::vllm;

fuzz_target!(|data: &[u8]| {
    let Ok(runs) = vllm::from_slice(data) else {
        return;
    };
    for run in &runs {
        for r in run.records.iter().flatten() {
            assert!(r.chunks.windows(2).all(|w| w[0].at <= w[1].at));
        }
        let _ = servebench::lint::lint_result(&run.result, &Default::default());
    }
});
