//! Fuzz the one loader (`servebench::load::load`): any bytes, under a name whose extension
//! the first byte picks, either load into at least one run or give a typed error that names
//! the file; never a panic. Every run loaded lints and renders.
#![no_main]

use libfuzzer_sys::fuzz_target;
use servebench::format::text::{render, Style};

const NAMES: [&str; 6] = ["f.txt", "f.json", "f.jsonl", "f.csv", "f.yaml", "-"];

fuzz_target!(|data: &[u8]| {
    let Some((&pick, bytes)) = data.split_first() else {
        return;
    };
    let name = NAMES[usize::from(pick) % NAMES.len()];
    match servebench::load::load(name, bytes) {
        Ok(runs) => {
            assert!(!runs.is_empty());
            let _ = servebench::app::lint_runs(&runs, &Default::default());
            for run in &runs {
                let _ = render(&run.result, Style::Gpustack);
                let _ = render(&run.result, Style::Vllm);
            }
        }
        Err(e) => assert!(e.to_string().starts_with(name), "{e}"),
    }
});
