//! The study document's "Start-up" section: each launched configuration's time to healthy,
//! to its first token and its warm-up window ([`crate::study::Startup`]), one row per launch.

use std::fmt::Write as _;

use crate::study::plan::{Analysis, Outcomes};

/// The names the document gives configuration `key`: its engine's and its steps' (`vLLM`,
/// `Quantization`), else the key.
fn names(a: &Analysis, key: &str) -> String {
    let named: Vec<&str> = a
        .engines
        .iter()
        .map(|e| (e.name.as_str(), &e.config))
        .chain(a.steps.iter().map(|s| (s.name.as_str(), &s.config)))
        .filter(|(_, c)| c.key() == key)
        .map(|(n, _)| n)
        .collect();
    if named.is_empty() {
        format!("`{key}`")
    } else {
        named.join(", ")
    }
}

/// Writes the section when a configuration's server was launched (nothing otherwise).
pub(super) fn startup_section(w: &mut String, o: &Outcomes, a: &Analysis) {
    if o.startups.is_empty() {
        return;
    }
    let _ = writeln!(w, "## Start-up\n");
    let _ = writeln!(
        w,
        "Each launched server: from launch to a healthy answer (health check, then `/v1/models`), from launch to the first token of the first request (the warm-up's where the study sends one), that request's TTFT, and the first measured run's warm-up window — the requests sent before its steady state (MSER-5) — with its median TTFT beside the steady state's. Launch 1 is the configuration's cold start; a later launch (a resumed or retried study) starts it again.\n"
    );
    let _ = writeln!(
        w,
        "| Configuration | Launch | Healthy after (s) | First token after launch (s) | First request's TTFT (ms) | Warm-up window | Median TTFT in it (ms) | Median TTFT, steady state (ms) |\n| --- | --- | --- | --- | --- | --- | --- | --- |"
    );
    let cell =
        |v: Option<f64>, digits: usize| v.map_or("-".to_string(), |x| format!("{x:.digits$}"));
    for (key, launches) in &o.startups {
        for s in launches {
            let window = match (s.warmup_requests, s.warmup_s) {
                (Some(n), Some(t)) => format!("{n} requests, {t:.1} s"),
                _ => "-".into(),
            };
            let _ = writeln!(
                w,
                "| {} | {} | {:.2} | {} | {} | {window} | {} | {} |",
                names(a, key),
                s.launch,
                s.healthy_s,
                cell(s.first_token_s, 2),
                cell(s.first_ttft_ms, 1),
                cell(s.warmup_median_ttft_ms, 1),
                cell(s.steady_median_ttft_ms, 1),
            );
        }
    }
    w.push('\n');
}
