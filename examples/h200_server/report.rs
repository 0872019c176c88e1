//! Minimal seed-style printing for the example (the library's `format::text` and `compare`
//! renderers replace it once they land).

use servebench::result::{BenchmarkResult, Summary};

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

/// The "Serving Benchmark Result" block in the seed's layout.
pub fn block(r: &BenchmarkResult) -> String {
    let mut out = String::from("============ Serving Benchmark Result ============\n");
    let heads = [
        (10, "----------------------Latency---------------------"),
        (14, "---------------Time to First Token----------------"),
        (18, "-----Time per Output Token (excl. 1st token)------"),
        (22, "---------------Inter-token Latency----------------"),
    ];
    for (i, (label, value)) in rows(r).into_iter().enumerate() {
        if let Some((_, h)) = heads.iter().find(|(at, _)| *at == i) {
            out.push_str(h);
            out.push('\n');
        }
        out.push_str(&format!("{label:<40} {value}\n"));
    }
    out.push_str("==================================================\n");
    out
}

/// The block's rows as a Markdown table.
pub fn markdown(r: &BenchmarkResult) -> String {
    let mut out = String::from("| Metric | Value |\n|---|---|\n");
    for (label, value) in rows(r) {
        out.push_str(&format!("| {} | {value} |\n", label.trim_end_matches(':')));
    }
    out
}

/// One cell of the seed's conclusion table: `Total TPS: x [(+p%)] Mean TPOT(ms): y`.
pub fn cell(r: &BenchmarkResult, base: Option<&BenchmarkResult>) -> String {
    let tps = r.total_token_throughput_per_s.unwrap_or(0.0);
    let tpot = r.tpot.as_ref().and_then(|s| s.mean).unwrap_or(0.0);
    match base.and_then(|b| b.total_token_throughput_per_s) {
        Some(b) if b > 0.0 => format!(
            "Total TPS: {tps:.2} ({:+.2}%) Mean TPOT(ms): {tpot:.2}",
            (tps / b - 1.0) * 100.0
        ),
        _ => format!("Total TPS: {tps:.2} Mean TPOT(ms): {tpot:.2}"),
    }
}

/// The seed's summary sentence comparing an optimized run with its baseline.
pub fn summary_line(title: &str, base: &BenchmarkResult, opt: &BenchmarkResult) -> String {
    let b = base.total_token_throughput_per_s.unwrap_or(0.0);
    let o = opt.total_token_throughput_per_s.unwrap_or(0.0);
    let bt = base.tpot.as_ref().and_then(|s| s.mean).unwrap_or(0.0);
    let ot = opt.tpot.as_ref().and_then(|s| s.mean).unwrap_or(0.0);
    let faster = if o >= b { "faster" } else { "slower" };
    let lower = if ot <= bt { "reduced" } else { "increased" };
    format!(
        "Summary ({title}): Optimized Total TPS = {o:.2}, baseline Total TPS = {b:.2}. Optimized is {faster} by {:.2} tok/s ({:.1}%); Mean TPOT = {ot:.2} ms vs {bt:.2} ms, {lower} by {:.2} ms ({:.2}%).",
        (o - b).abs(),
        if b > 0.0 { (o / b - 1.0).abs() * 100.0 } else { 0.0 },
        (ot - bt).abs(),
        if bt > 0.0 { (ot / bt - 1.0).abs() * 100.0 } else { 0.0 },
    )
}
