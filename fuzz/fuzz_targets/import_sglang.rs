//! Fuzz the SGLang JSON Lines importer: no panic on any input.
#![no_main]

use libfuzzer_sys::fuzz_target;
use servebench::import::sglang;

fuzz_target!(|data: &[u8]| {
    let Ok(runs) = sglang::from_slice(data) else {
        return;
    };
    for run in &runs {
        let _ = servebench::lint::lint_result(&run.result, &Default::default());
    }
});
