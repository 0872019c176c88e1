//! What `servebench explain` and `servebench slices` print: an explanation's tables and
//! its paragraph for a study document ([`Explanation::render`], [`Explanation::paragraph`]),
//! and the time slices' table with the steady state ([`render_slices`]). The numbers come
//! from [`crate::observe`].

use std::fmt::Write as _;

use crate::observe::explain::Explanation;
use crate::observe::slices::{steady_state, Slice};

/// The slices as a text table, and the steady state under it.
pub fn render_slices(slices: &[Slice]) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{:>9} {:>9} {:>9} {:>12} {:>11} {:>11} {:>10}",
        "start s", "end s", "completed", "output tok/s", "TTFT ms", "TPOT ms", "in flight"
    );
    let opt = |v: Option<f64>| v.map_or("-".to_string(), |v| format!("{v:.2}"));
    for s in slices {
        let _ = writeln!(
            out,
            "{:>9.1} {:>9.1} {:>9} {:>12.1} {:>11} {:>11} {:>10.1}",
            s.start_s,
            s.end_s,
            s.requests_completed,
            s.output_tokens_per_s,
            opt(s.ttft_mean_ms),
            opt(s.tpot_mean_ms),
            s.in_flight_mean
        );
    }
    match steady_state(slices) {
        Some(st) => {
            let _ = writeln!(
                out,
                "steady state: {:.1}–{:.1} s at {:.0} output tok/s (ramp-up {:.1} s, drain {:.1} s)",
                st.ramp_up_end_s,
                st.drain_start_s,
                st.level_tokens_per_s,
                st.ramp_up_end_s,
                st.end_s - st.drain_start_s
            );
        }
        None => out.push_str("steady state: none (no output tokens)\n"),
    }
    out
}

fn signed(ms: f64) -> String {
    // Never `inf` or `NaN` on the page (explain refuses such splits; this is the backstop).
    if !ms.is_finite() {
        return "n/a".into();
    }
    // No "-0.0": a change under the printed precision is zero.
    let ms = if ms.abs() < 0.05 { 0.0 } else { ms };
    if ms.abs() >= 1000.0 {
        format!("{:+.2} s", ms / 1e3)
    } else {
        format!("{ms:+.1} ms")
    }
}

fn plain(ms: f64) -> String {
    if !ms.is_finite() {
        return "n/a".into();
    }
    if ms.abs() >= 1000.0 {
        format!("{:.2} s", ms / 1e3)
    } else if ms.abs() < 1.0 {
        format!("{ms:.3} ms")
    } else {
        format!("{ms:.1} ms")
    }
}

/// A part's share of the change; blank when the change is under 1 % of the base (shares
/// of a near-zero change mean nothing).
fn share(part: f64, whole: f64, base: f64) -> String {
    if whole.abs() > 0.01 * base.abs() && whole.abs() > 0.0 {
        let pct = 100.0 * part / whole;
        format!("{:.0} %", if pct.abs() < 0.5 { 0.0 } else { pct })
    } else {
        "-".into()
    }
}

impl Explanation {
    /// A text table per metric, with the assumptions (what `servebench explain` prints).
    pub fn render(&self) -> String {
        let mut out = String::new();
        let _ = writeln!(out, "{} → {}", self.base, self.candidate);
        for b in self.ttft.iter().chain(self.tpot.iter()) {
            let d = b.delta_ms();
            let _ = writeln!(
                out,
                "\nmean {}: {} → {} ({}, measured by the client)",
                b.metric,
                plain(b.base_ms),
                plain(b.candidate_ms),
                signed(d)
            );
            let unit_is_ms = b.metric == "TTFT";
            for p in &b.parts {
                let (x, y) = if unit_is_ms || p.name.contains("time") {
                    (plain(p.base), plain(p.candidate))
                } else {
                    (format!("{:.1}", p.base), format!("{:.1}", p.candidate))
                };
                let _ = writeln!(
                    out,
                    "  {:<34} {:>10} → {:>10}  {:>11}  {:>5}",
                    p.name,
                    x,
                    y,
                    signed(p.delta_ms),
                    share(p.delta_ms, d, b.base_ms)
                );
            }
            let _ = writeln!(
                out,
                "  {:<34} {:>10}   {:>10}  {:>11}  {:>5}",
                "not explained",
                "",
                "",
                signed(b.unexplained_ms),
                share(b.unexplained_ms, d, b.base_ms)
            );
            for a in &b.assumptions {
                let _ = writeln!(out, "  assumes: {a}");
            }
        }
        for n in &self.notes {
            let _ = writeln!(out, "note: {n}");
        }
        out
    }

    /// One paragraph (Markdown) for a study document's step.
    pub fn paragraph(&self) -> String {
        let mut s = String::new();
        if let Some(b) = &self.ttft {
            let p = |i: usize| b.parts.get(i).map_or(0.0, |p| p.delta_ms);
            let _ = write!(
                s,
                "Mean TTFT went from {} ({}) to {} ({}, {}): waiting for admission {} (scheduler queue {}, API server {}), prefill {}, not explained {}. ",
                plain(b.base_ms),
                self.base,
                plain(b.candidate_ms),
                self.candidate,
                signed(b.delta_ms()),
                signed(p(0) + p(1)),
                signed(p(1)),
                signed(p(0)),
                signed(p(2)),
                signed(b.unexplained_ms),
            );
        }
        if let Some(b) = &self.tpot {
            let (batch, step) = (&b.parts[0], &b.parts[1]);
            let _ = write!(
                s,
                "Mean TPOT went from {} to {} ({}): the running batch went from {:.1} to {:.1} requests ({}), the step time per sequence from {} to {} ({}), not explained {}. ",
                plain(b.base_ms),
                plain(b.candidate_ms),
                signed(b.delta_ms()),
                batch.base,
                batch.candidate,
                signed(batch.delta_ms),
                plain(step.base),
                plain(step.candidate),
                signed(step.delta_ms),
                signed(b.unexplained_ms),
            );
        }
        if self.ttft.is_some() || self.tpot.is_some() {
            s.push_str("(Assumed: the network and client add the same time in both runs; a step costs each running sequence the same.)");
        }
        for n in &self.notes {
            let _ = write!(s, " Note: {n}.");
        }
        s.trim().to_string()
    }
}

/// The steady-state line of a report: the MSER-5 window, and the figures over its requests
/// beside the whole run's (both labelled).
///
/// `window` and `whole` are the same metrics computed over the window's records and over
/// every record.
pub fn steady_line(
    w: &crate::observe::SteadyWindow,
    window: &crate::result::BenchmarkResult,
    whole: &crate::result::BenchmarkResult,
) -> String {
    // Answers that came whole have no TTFT: the window is found on their latency.
    let on = if whole.ttft.is_some() {
        "TTFT"
    } else {
        "request latency"
    };
    format!(
        "steady state (MSER-5 on {on} in send order): {:.1}–{:.1} s, {} requests ({} cut as \
         the fill, {} as the drain); over them: {}; whole run: {}",
        w.start.as_secs_f64(),
        w.end.as_secs_f64(),
        w.requests,
        w.fill,
        w.drain,
        window_figures(window),
        window_figures(whole)
    )
}

/// A window's figures as the steady-state and phase lines print them: `49.80 req/s,
/// output 6374.40 tok/s, mean TTFT 80.12 ms, P99 TTFT 301.20 ms, mean TPOT 21.03 ms`
/// (`-` for a figure the window has not).
fn window_figures(r: &crate::result::BenchmarkResult) -> String {
    let mean = |s: &Option<crate::result::Summary>| s.as_ref().and_then(|s| s.mean);
    let f = |v: Option<f64>, unit: &str| match v {
        Some(v) => format!("{v:.2} {unit}"),
        None => "-".into(),
    };
    if r.ttft.is_none() && r.e2el.is_some() {
        return format!(
            "{}, mean latency {}, P99 latency {}",
            f(r.request_throughput_per_s, "req/s"),
            f(mean(&r.e2el), "ms"),
            f(r.e2el.as_ref().and_then(|s| s.percentile(99.0)), "ms"),
        );
    }
    format!(
        "{}, output {}, mean TTFT {}, P99 TTFT {}, mean TPOT {}",
        f(r.request_throughput_per_s, "req/s"),
        f(r.output_throughput_per_s, "tok/s"),
        f(mean(&r.ttft), "ms"),
        f(r.ttft.as_ref().and_then(|s| s.percentile(99.0)), "ms"),
        f(mean(&r.tpot), "ms"),
    )
}

/// The drift line of a long run's report: `drift: p99 TTFT +18.0 % per hour over 12
/// windows of 60 s (Mann–Kendall p = 0.0004): significant`.
pub fn drift_line(d: &crate::noise::Drift) -> String {
    format!(
        "drift: {} {:+.1} % per hour over {} windows of {:.0} s (Mann–Kendall p = {:.4}): {}",
        d.metric,
        d.relative_slope_per_hour * 100.0,
        d.windows,
        d.window_s,
        d.p_value,
        if d.significant {
            "significant"
        } else {
            "none found"
        }
    )
}

/// A cold run's line (`bench --cold`): how long the server took to become healthy, the
/// first request's TTFT, and the requests before the steady state (MSER-5) beside it:
/// `cold start: healthy after 12.30 s; first request's TTFT 6842.10 ms; before the steady
/// state (45 requests over 8.1 s): mean TTFT 5210.44 ms, P99 TTFT 6900.12 ms; steady state:
/// mean TTFT 80.12 ms, P99 TTFT 301.20 ms`.
pub fn cold_line(healthy_after_s: Option<f64>, c: &crate::observe::ColdFigures) -> String {
    let ttft = |r: &crate::result::BenchmarkResult| {
        let t = r.ttft.as_ref();
        let f = |v: Option<f64>| v.map_or("-".into(), |v| format!("{v:.2} ms"));
        format!(
            "mean TTFT {}, P99 TTFT {}",
            f(t.and_then(|s| s.mean)),
            f(t.and_then(|s| s.percentile(99.0)))
        )
    };
    let healthy = healthy_after_s.map_or(String::new(), |s| format!("healthy after {s:.2} s; "));
    let first = c
        .first_ttft
        .map_or("-".into(), |d| format!("{:.2} ms", d.as_secs_f64() * 1e3));
    let before = match &c.warmup {
        Some(r) => format!(
            "before the steady state ({} requests over {:.1} s): {}",
            c.warmup_requests,
            c.warmup_s,
            ttft(r)
        ),
        None => "no warm-up before the steady state".into(),
    };
    format!(
        "cold start: {healthy}first request's TTFT {first}; {before}; steady state: {}",
        ttft(&c.steady)
    )
}

/// One load stage's line in a report (its offered rate and cap as the run set them): a
/// phase, `phase "burst" 30.0–40.0 s at 50 req/s (cap 64): 500 requests sent, 500
/// succeeded; 49.80 req/s, output 6374.40 tok/s, mean TTFT 80.12 ms, P99 TTFT 301.20 ms,
/// mean TPOT 21.03 ms`; a ramp step, `stage "ramp 2/5" 12.0–20.5 s at 3.00–5.00 req/s: …`;
/// a staged fill, `stage "fill" 0.0–30.0 s, cap 1→256: …`.
pub fn stage_line(
    stage: &crate::observe::Stage,
    sent: usize,
    r: &crate::result::BenchmarkResult,
) -> String {
    use crate::observe::StageKind;
    let rate = |v: f64| {
        if v.fract() == 0.0 {
            format!("{v}")
        } else {
            format!("{v:.2}")
        }
    };
    let span = match stage.end_s {
        Some(end) => format!("{:.1}–{end:.1} s", stage.start_s),
        None => format!("from {:.1} s", stage.start_s),
    };
    let offered = match stage.rate_per_s {
        Some((a, b)) if a == b => format!(" at {} req/s", rate(a)),
        Some((a, b)) => format!(" at {}–{} req/s", rate(a), rate(b)),
        None => String::new(),
    };
    let cap = match (stage.kind, stage.concurrency) {
        (StageKind::Fill, Some((a, b))) if a != b => format!(", cap {a}→{b}"),
        (StageKind::Fill, Some((a, _))) => format!(", cap {a}"),
        (_, Some((a, b))) if a == b => format!(" (cap {a})"),
        (_, Some((a, b))) => format!(" (cap {a}→{b})"),
        (_, None) => String::new(),
    };
    let word = match stage.kind {
        StageKind::Phase => "phase",
        StageKind::Ramp | StageKind::Fill => "stage",
    };
    format!(
        "{word} \"{}\" {span}{offered}{cap}: {sent} requests sent, {} succeeded; {}",
        stage.label,
        r.successful_requests.unwrap_or(0),
        window_figures(r),
    )
}
