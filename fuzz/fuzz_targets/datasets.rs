//! Fuzzes the readers of dataset files — multi-turn ShareGPT and SGLang agentic traces
//! (`--dataset multi-turn --dataset-path`, `--sessions FILE`), JSON Lines prompts, Mooncake
//! traces and image lists (`--image-file`) — on arbitrary bytes written to a file.
//!
//! Properties: never a panic; a plan that builds has one turn entry per request when it has
//! turns, and no request without a prompt length.
#![no_main]

use libfuzzer_sys::fuzz_target;
use servebench::driver::images::ImageLoad;
use servebench::driver::DatasetSpec;

fuzz_target!(|data: &[u8]| {
    let path = std::env::temp_dir().join(format!("servebench-fuzz-{}.data", std::process::id()));
    if std::fs::write(&path, data).is_err() {
        return;
    }
    let specs = [
        DatasetSpec::MultiTurn {
            conversations: 8,
            turns: 8,
            input_tokens: 16,
            output_tokens: 8,
            think_time_s: 0.0,
            seed: 1,
            path: Some(path.clone()),
        },
        DatasetSpec::Jsonl {
            path: path.clone(),
            default_output_tokens: 8,
        },
        DatasetSpec::Mooncake {
            path: path.clone(),
            time_scale: 1.0,
        },
    ];
    for spec in specs {
        let Ok(plan) = spec.build(Some(1000)) else {
            continue;
        };
        if let Some(turns) = &plan.turns {
            assert_eq!(turns.len(), plan.items.len());
        }
        if let Some(at) = &plan.send_at {
            assert_eq!(at.len(), plan.items.len());
        }
    }
    if let Ok(load) = ImageLoad::from_file(1, &path) {
        assert!(!load.sources.is_empty());
    }
});
