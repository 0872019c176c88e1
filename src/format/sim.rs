//! A run's "Serving Benchmark Result" rows as a Markdown table (the simulator's
//! `--format markdown`); text blocks come from [`crate::format::text`], tables from
//! [`crate::compare`].

use crate::result::{BenchmarkResult, Summary};

fn f2(v: Option<f64>) -> String {
    v.map_or("N/A".to_string(), |x| format!("{x:.2}"))
}

fn int(v: Option<u64>) -> String {
    v.map_or("N/A".to_string(), |x| x.to_string())
}

fn rows(r: &BenchmarkResult) -> Vec<(String, String)> {
    let mut v: Vec<(String, String)> = vec![
        ("Successful requests:".into(), int(r.successful_requests)),
        (
            "Maximum request concurrency:".into(),
            int(r.max_concurrency),
        ),
        ("Benchmark duration (s):".into(), f2(r.duration_s())),
        ("Total input tokens:".into(), int(r.total_input_tokens)),
        ("Total generated tokens:".into(), int(r.total_output_tokens)),
        (
            "Request throughput (req/s):".into(),
            f2(r.request_throughput_per_s),
        ),
        (
            "Output token throughput (tok/s):".into(),
            f2(r.output_throughput_per_s),
        ),
        (
            "Peak output token throughput (tok/s):".into(),
            f2(r.peak_output_throughput_per_s),
        ),
        (
            "Peak concurrent requests:".into(),
            f2(r.peak_concurrent_requests),
        ),
        (
            "Total Token throughput (tok/s):".into(),
            f2(r.total_token_throughput_per_s),
        ),
    ];
    let summ =
        |v: &mut Vec<(String, String)>, s: &Option<Summary>, name: &str, unit: &str, div: f64| {
            let get = |f: &dyn Fn(&Summary) -> Option<f64>| s.as_ref().and_then(f).map(|x| x / div);
            v.push((format!("Mean {name}({unit}):"), f2(get(&|s| s.mean))));
            v.push((format!("Median {name}({unit}):"), f2(get(&|s| s.median))));
            v.push((
                format!("P95 {name}({unit}):"),
                f2(get(&|s| s.percentile(95.0))),
            ));
            v.push((
                format!("P99 {name}({unit}):"),
                f2(get(&|s| s.percentile(99.0))),
            ));
        };
    summ(&mut v, &r.e2el, "Latency", "s", 1000.0);
    summ(&mut v, &r.ttft, "TTFT ", "ms", 1.0);
    summ(&mut v, &r.tpot, "TPOT ", "ms", 1.0);
    summ(&mut v, &r.itl, "ITL ", "ms", 1.0);
    v
}

/// The block's rows as a Markdown table.
///
/// ```
/// let r = servebench::result::BenchmarkResult::default();
/// assert!(servebench::format::sim_markdown(&r).starts_with("| Metric | Value |"));
/// ```
pub fn markdown(r: &BenchmarkResult) -> String {
    let mut out = String::from("| Metric | Value |\n|---|---|\n");
    for (label, value) in rows(r) {
        out.push_str(&format!("| {} | {value} |\n", label.trim_end_matches(':')));
    }
    out
}
