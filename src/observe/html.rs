//! A self-contained HTML report (feature `plot`): one file with inline CSS and the inline
//! SVG charts of [`super::charts`], a summary table per run (client figures and, when
//! scraped, the server's), a table of each staged run's stages, and optional text sections (explanations). No script, no
//! network, no external file: it opens from disk in any browser.
//!
//! ```
//! use servebench::metrics::{compute, MetricsOptions};
//! use servebench::observe::html::{report, PageSection};
//! use servebench::observe::{charts, PlotRun};
//! use servebench::Convention;
//!
//! let result = compute(&[], MetricsOptions::new(Convention::Vllm));
//! let runs = [PlotRun::new("a<b", &result, &[])];
//! let html = report("Study", &runs, &charts(&runs).unwrap(), &[PageSection::text("Why", "x & y")]);
//! assert!(html.contains("<td>a&lt;b</td>") && html.contains("x &amp; y"));
//! assert!(!html.contains("<script") && !html.contains(" src="));
//! ```

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use super::plot::{total_tps, write_atomic, write_charts, Chart, PlotError, PlotRun};
use super::series::ServerSummary;

/// A titled block of text in the report.
#[derive(Debug, Clone, PartialEq)]
pub struct PageSection {
    /// Its heading.
    pub heading: String,
    /// Its text, shown preformatted (escaped).
    pub text: String,
}

impl PageSection {
    /// A section of preformatted text.
    pub fn text(heading: impl Into<String>, text: impl Into<String>) -> PageSection {
        PageSection {
            heading: heading.into(),
            text: text.into(),
        }
    }
}

/// Escapes text for HTML.
pub fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

const CSS: &str = "body{font-family:system-ui,sans-serif;margin:2rem auto;max-width:1100px;color:#222;padding:0 1rem}\
h1{font-size:1.6rem}h2{font-size:1.2rem;margin-top:2rem}\
table{border-collapse:collapse;font-size:.9rem}th,td{border:1px solid #ccc;padding:.3rem .6rem;text-align:right}\
th:first-child,td:first-child{text-align:left}thead{background:#f3f3f3}\
.charts{display:grid;grid-template-columns:repeat(auto-fit,minmax(520px,1fr));gap:1rem}\
figure{margin:0;border:1px solid #ddd;padding:.5rem;background:#fff}figure svg{width:100%;height:auto;display:block}\
figcaption{font-size:.85rem;color:#555}pre{background:#f7f7f7;padding:.8rem;overflow-x:auto;font-size:.85rem}";

fn num(v: Option<f64>, digits: usize) -> String {
    v.map_or("–".to_string(), |v| format!("{v:.digits$}"))
}

fn pct(v: Option<f64>) -> String {
    v.map_or("–".to_string(), |v| format!("{:.1} %", v * 100.0))
}

/// The steady-state window by MSER-5 ([`super::steady_window`], as `report` prints it), as
/// the send times `start–end s` on the charts' clock.
fn steady(r: &PlotRun) -> String {
    super::steady_window(r.records).map_or("–".into(), |w| {
        format!("{:.0}–{:.0} s", w.start.as_secs_f64(), w.end.as_secs_f64())
    })
}

/// A staged run's table: each stage's span, offered load and vLLM's figures over the
/// requests sent in it.
fn stage_table(h: &mut String, r: &PlotRun) {
    if r.stages.is_empty() {
        return;
    }
    let _ = writeln!(
        h,
        "<h2>Stages: {}</h2>\n<table class=\"stages\"><thead><tr><th>stage</th><th>span (s after the first send)</th><th>offered rate (req/s)</th><th>client cap</th><th>requests sent</th><th>succeeded</th><th>req/s</th><th>mean TTFT ms</th><th>P99 TTFT ms</th></tr></thead><tbody>",
        escape(r.label)
    );
    for (stage, (sent, res)) in r
        .stages
        .iter()
        .zip(super::stage_figures(r.stages, r.records))
    {
        let span = match stage.end_s {
            Some(e) => format!("{:.1}–{e:.1}", stage.start_s),
            None => format!("{:.1}–", stage.start_s),
        };
        let pair = |p: Option<(String, String)>| match p {
            Some((a, b)) if a == b => a,
            Some((a, b)) => format!("{a}→{b}"),
            None => "–".into(),
        };
        let _ = writeln!(
            h,
            "<tr><td>{}</td><td>{span}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            escape(&stage.label),
            pair(stage.rate_per_s.map(|(a, b)| (format!("{a:.2}"), format!("{b:.2}")))),
            pair(stage.concurrency.map(|(a, b)| (a.to_string(), b.to_string()))),
            sent,
            res.successful_requests.map_or("–".into(), |n| n.to_string()),
            num(res.request_throughput_per_s, 2),
            num(res.ttft.as_ref().and_then(|s| s.mean), 2),
            num(res.ttft.as_ref().and_then(|s| s.percentile(99.0)), 2),
        );
    }
    h.push_str("</tbody></table>\n");
}

/// The report's HTML; see the module docs.
pub fn report(title: &str, runs: &[PlotRun], charts: &[Chart], sections: &[PageSection]) -> String {
    let mut h = String::new();
    let _ = write!(
        h,
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>{t}</title><style>{CSS}</style></head><body>\n<h1>{t}</h1>\n<p>servebench {v} · {n} run(s)</p>\n",
        t = escape(title),
        v = env!("CARGO_PKG_VERSION"),
        n = runs.len()
    );
    h.push_str("<h2>Runs</h2>\n<table id=\"runs\"><thead><tr><th>configuration</th><th>successful requests</th><th>Total TPS</th><th>output tok/s</th><th>mean TTFT ms</th><th>mean TPOT ms</th><th>steady state</th><th>KV-cache peak</th><th>mean running</th><th>preemptions</th><th>prefix-cache hit rate</th></tr></thead><tbody>\n");
    for r in runs {
        let res = r.result;
        let s = r.server.map(|s| s.summary()).unwrap_or_default();
        let ServerSummary {
            kv_cache_usage_peak,
            running_mean,
            preemptions,
            prefix_cache_hit_rate,
            ..
        } = s;
        let tps = match (total_tps(res), r.total_tps_interval) {
            (Some(v), Some((lo, hi))) => format!("{v:.1} [{lo:.1}, {hi:.1}]"),
            (v, _) => num(v, 1),
        };
        let _ = writeln!(
            h,
            "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            escape(r.label),
            res.successful_requests.map_or("–".into(), |n| n.to_string()),
            tps,
            num(res.output_throughput_per_s, 1),
            num(res.ttft.as_ref().and_then(|s| s.mean), 2),
            num(res.tpot.as_ref().and_then(|s| s.mean), 2),
            steady(r),
            pct(kv_cache_usage_peak),
            num(running_mean, 1),
            num(preemptions, 0),
            pct(prefix_cache_hit_rate),
        );
    }
    h.push_str("</tbody></table>\n");
    for r in runs {
        stage_table(&mut h, r);
    }
    for s in sections {
        let _ = writeln!(
            h,
            "<h2>{}</h2>\n<pre>{}</pre>",
            escape(&s.heading),
            escape(&s.text)
        );
    }
    h.push_str("<h2>Charts</h2>\n<div class=\"charts\">\n");
    for c in charts {
        let id = c.file.trim_end_matches(".svg");
        let _ = writeln!(
            h,
            "<figure id=\"{}\">{}<figcaption>{}</figcaption></figure>",
            escape(id),
            c.svg.trim(),
            escape(&c.title)
        );
    }
    h.push_str("</div>\n</body></html>\n");
    h
}

/// Writes the charts (`DIR/*.svg`) and the report (`DIR/index.html`) for `runs`; returns
/// the report's path. This is what `servebench plot` and the study runner call.
pub fn write_report(
    dir: &Path,
    title: &str,
    runs: &[PlotRun],
    sections: &[PageSection],
) -> Result<PathBuf, PlotError> {
    let charts = write_charts(runs, dir)?;
    let path = dir.join("index.html");
    write_atomic(&path, report(title, runs, &charts, sections).as_bytes())?;
    Ok(path)
}
