//! What `bench` prints on stderr beside its report: the server's and the GPUs' scrape
//! notes, the lints, the note on vLLM's peak concurrency, and the production figures
//! (reasoning, energy, speculative decoding, adapters).

use servebench::app::bench::BenchRun;
use servebench::Convention;

/// Prints the notes of a finished run on stderr.
pub fn print(run: &BenchRun) {
    if let Some(w) = crate::self_test::near_ceiling(&run.file) {
        eprintln!("servebench: {w}");
    }
    use servebench::app::bench::{BUILT_IN_SHAREGPT, DATASET_SOURCE_LABEL};
    if run
        .file
        .labels
        .get(DATASET_SOURCE_LABEL)
        .map(String::as_str)
        == Some(BUILT_IN_SHAREGPT)
    {
        eprintln!(
            "servebench: note: no ShareGPT file (./{} or --dataset-path): the prompts and \
             answer lengths came from the {BUILT_IN_SHAREGPT} (the run file's {DATASET_SOURCE_LABEL} \
             label says so)",
            servebench::profile::SHAREGPT_FILE
        );
    }
    if let Some(s) = &run.file.server_metrics {
        for n in &s.notes {
            eprintln!("servebench: metrics: {n}");
        }
        if !s.is_empty() {
            eprintln!(
                "servebench: {} scrapes of {} ({} series)",
                s.len(),
                s.target,
                s.series.len()
            );
        }
    }
    if let Some(g) = &run.file.gpu_metrics {
        for n in &g.notes {
            eprintln!("servebench: gpu metrics: {n}");
        }
        if run.file.result.energy.is_none() {
            eprintln!(
                "servebench: gpu metrics: {} gave no energy figures for this run ({} samples)",
                g.target,
                g.len()
            );
        }
    }
    if !run.findings.is_empty() {
        eprintln!("servebench: lints ({}):", run.findings.len());
    }
    for f in &run.findings {
        eprintln!("{f}");
    }
    if let Some(note) = peak_note(&run.file.result) {
        eprintln!("servebench: note: {note}");
    }
    // The production figures (reasoning, energy, speculative decoding, adapters) beside
    // the block, which stays byte for byte what vLLM or GPUStack would print.
    for line in servebench::format::production::lines(&run.file.result) {
        eprintln!("servebench: {line}");
    }
}

/// Why vLLM's "Peak concurrent requests" can exceed the client's cap, when it does.
fn peak_note(r: &servebench::BenchmarkResult) -> Option<String> {
    if r.meta.convention != Some(Convention::Vllm) {
        return None;
    }
    let (peak, cap) = (r.peak_concurrent_requests?, r.max_concurrency?);
    if peak <= cap as f64 {
        return None;
    }
    let exact = r
        .exact
        .as_ref()
        .and_then(|e| e.peak_in_flight)
        .map(|n| format!("; the most in flight at one instant was {n}"))
        .unwrap_or_default();
    Some(format!(
        "\"Peak concurrent requests\" ({peak:.0}) is above the cap of {cap}: vLLM counts every \
         request active at any time during a 1-second bucket{exact}"
    ))
}

/// What to do about an HTTP status in `message` (` — …`, or nothing): 401/403 name the
/// key flags, 404 lists the models the server serves (a model or adapter name that is not
/// one of them is the usual cause).
pub fn status_hint(message: &str, has_key: bool, served: &[String]) -> String {
    if message.contains("HTTP 401") || message.contains("HTTP 403") {
        if has_key {
            " — the server refused the API key given (--api-key or OPENAI_API_KEY)".into()
        } else {
            " — the server wants an API key: give --api-key KEY or set OPENAI_API_KEY".into()
        }
    } else if message.contains("HTTP 404") {
        if served.is_empty() {
            " — check the target's path and --model (GET /v1/models lists what it serves)".into()
        } else {
            format!(
                " — the server serves {}: --model and --lora-modules must name one of them",
                served.join(", ")
            )
        }
    } else {
        String::new()
    }
}
