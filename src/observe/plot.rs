//! SVG charts of a set of runs (feature `plot`, drawn with plotters' SVG backend): Total
//! TPS per configuration (with interval whiskers when a run has an interval, else a point,
//! the value written above it), latency CDFs (TTFT, TPOT, E2E) per configuration, and
//! output throughput, requests in flight and KV-cache usage over time, each stage of a
//! staged run (a phase, a ramp step, a staged fill) marked where it starts.
//!
//! Latencies follow vLLM's definitions (TPOT excludes the first token); times over the run
//! come from [`super::slices`], KV-cache usage from the scraped [`ServerSeries`].
//!
//! ```
//! use std::time::Duration;
//! use servebench::metrics::{compute, MetricsOptions};
//! use servebench::observe::{charts, PlotRun};
//! use servebench::record::{Chunk, RequestRecord};
//! use servebench::Convention;
//!
//! let records: Vec<RequestRecord> = (0..10u64)
//!     .map(|i| {
//!         let mut r = RequestRecord::new(i, Duration::from_millis(100 * i));
//!         for k in 1..=5 {
//!             r.chunks.push(Chunk { at: Duration::from_millis(100 * i + 40 * k), tokens: 1 });
//!         }
//!         r.ended_at = r.chunks.last().map(|c| c.at);
//!         r
//!     })
//!     .collect();
//! let result = compute(&records, MetricsOptions::new(Convention::Vllm));
//! let run = PlotRun::new("baseline", &result, &records);
//! let out = charts(&[run]).unwrap();
//! assert_eq!(out[0].file, "total_tps.svg");
//! assert!(out[0].svg.starts_with("<svg"));
//! ```

use std::path::Path;

use plotters::prelude::*;

use super::series::{Known, ServerSeries};
use super::slices::slices;
use super::stages::Stage;
use crate::metrics::request::vllm_tpot;
use crate::record::RequestRecord;
use crate::result::BenchmarkResult;

/// One run to draw.
#[derive(Debug, Clone, Copy)]
pub struct PlotRun<'a> {
    /// Its name on the charts (the configuration).
    pub label: &'a str,
    /// Its computed figures.
    pub result: &'a BenchmarkResult,
    /// Its records.
    pub records: &'a [RequestRecord],
    /// Its server metrics, if scraped.
    pub server: Option<&'a ServerSeries>,
    /// An interval around Total TPS (e.g. a 95 % confidence interval over repeats), drawn
    /// as a whisker.
    pub total_tps_interval: Option<(f64, f64)>,
    /// Its load stages ([`Stage`]), whose starts are marked on the charts over time.
    pub stages: &'a [Stage],
}

impl<'a> PlotRun<'a> {
    /// A run without server metrics or interval.
    pub fn new(label: &'a str, result: &'a BenchmarkResult, records: &'a [RequestRecord]) -> Self {
        PlotRun {
            label,
            result,
            records,
            server: None,
            total_tps_interval: None,
            stages: &[],
        }
    }
}

/// A drawn chart.
#[derive(Debug, Clone, PartialEq)]
pub struct Chart {
    /// Its file name (`total_tps.svg`, …).
    pub file: String,
    /// Its title.
    pub title: String,
    /// The SVG document.
    pub svg: String,
}

/// Drawing or writing a chart failed.
#[derive(Debug, thiserror::Error)]
pub enum PlotError {
    /// Nothing to draw.
    #[error("no runs to plot")]
    NoRuns,
    /// plotters failed.
    #[error("drawing {chart}: {message}")]
    Draw {
        /// The chart's file name.
        chart: String,
        /// plotters' error.
        message: String,
    },
    /// Writing a file failed.
    #[error("{}: {source}", path.display())]
    Io {
        /// The file.
        path: std::path::PathBuf,
        /// The error.
        source: std::io::Error,
    },
}

/// Chart size, pixels.
pub const SIZE: (u32, u32) = (760, 420);

/// Most points drawn per CDF line (evenly spaced by rank, the last always kept).
pub const MAX_CDF_POINTS: usize = 400;

fn color(i: usize) -> RGBColor {
    // Colour-blind-safe (Okabe–Ito).
    const C: [(u8, u8, u8); 8] = [
        (0, 114, 178),
        (230, 159, 0),
        (0, 158, 115),
        (204, 121, 167),
        (86, 180, 233),
        (213, 94, 0),
        (240, 228, 66),
        (0, 0, 0),
    ];
    let (r, g, b) = C[i % C.len()];
    RGBColor(r, g, b)
}

fn draw_err(chart: &str) -> impl Fn(String) -> PlotError + '_ {
    move |message| PlotError::Draw {
        chart: chart.into(),
        message,
    }
}

/// The value written above each Total TPS point (what a reader and the tests read back).
pub fn tps_label(v: f64) -> String {
    format!("{v:.1}")
}

/// The run's Total TPS: total (input + output) tokens per second.
pub fn total_tps(r: &BenchmarkResult) -> Option<f64> {
    r.total_token_throughput_per_s
}

fn total_tps_chart(runs: &[PlotRun]) -> Result<String, String> {
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, SIZE).into_drawing_area();
        root.fill(&WHITE).map_err(|e| e.to_string())?;
        let top = runs
            .iter()
            .flat_map(|r| {
                total_tps(r.result)
                    .into_iter()
                    .chain(r.total_tps_interval.map(|(_, hi)| hi))
            })
            .fold(0.0, f64::max);
        let top = if top > 0.0 { top * 1.15 } else { 1.0 };
        let n = runs.len();
        let mut chart = ChartBuilder::on(&root)
            .caption("Total TPS per configuration", ("sans-serif", 20))
            .margin(12)
            .x_label_area_size(40)
            .y_label_area_size(70)
            .build_cartesian_2d(-0.5f64..(n as f64 - 0.5), 0f64..top)
            .map_err(|e| e.to_string())?;
        let labels: Vec<String> = runs.iter().map(|r| r.label.to_string()).collect();
        chart
            .configure_mesh()
            .disable_x_mesh()
            .x_labels(n.max(1))
            .x_label_formatter(&|x| {
                let i = x.round();
                if (x - i).abs() < 1e-6 && i >= 0.0 {
                    labels.get(i as usize).cloned().unwrap_or_default()
                } else {
                    String::new()
                }
            })
            .y_desc("tokens/s")
            .draw()
            .map_err(|e| e.to_string())?;
        for (i, r) in runs.iter().enumerate() {
            let x = i as f64;
            let c = color(i);
            if let Some((lo, hi)) = r.total_tps_interval {
                let cap = 0.08;
                for seg in [
                    vec![(x, lo), (x, hi)],
                    vec![(x - cap, lo), (x + cap, lo)],
                    vec![(x - cap, hi), (x + cap, hi)],
                ] {
                    chart
                        .draw_series(std::iter::once(PathElement::new(seg, c.stroke_width(2))))
                        .map_err(|e| e.to_string())?;
                }
            }
            if let Some(v) = total_tps(r.result) {
                chart
                    .draw_series(std::iter::once(Circle::new((x, v), 6, c.filled())))
                    .map_err(|e| e.to_string())?;
                let label_y = r.total_tps_interval.map_or(v, |(_, hi)| hi.max(v));
                chart
                    .draw_series(std::iter::once(Text::new(
                        tps_label(v),
                        (x + 0.12, label_y),
                        ("sans-serif", 14).into_font().color(&BLACK),
                    )))
                    .map_err(|e| e.to_string())?;
            }
        }
        root.present().map_err(|e| e.to_string())?;
    }
    Ok(svg)
}

/// A CDF's points: (value, fraction at or below it), at most [`MAX_CDF_POINTS`].
pub fn cdf_points(mut v: Vec<f64>) -> Vec<(f64, f64)> {
    v.retain(|x| x.is_finite());
    v.sort_by(f64::total_cmp);
    let n = v.len();
    if n == 0 {
        return Vec::new();
    }
    let step = n.div_ceil(MAX_CDF_POINTS).max(1);
    let mut idx: Vec<usize> = (0..n).step_by(step).collect();
    if idx.last() != Some(&(n - 1)) {
        idx.push(n - 1);
    }
    idx.into_iter()
        .map(|i| (v[i], (i + 1) as f64 / n as f64))
        .collect()
}

/// Per-request latencies in ms: TTFT, TPOT (vLLM's), E2E, of successful requests.
pub fn latencies_ms(records: &[RequestRecord], which: Latency) -> Vec<f64> {
    records
        .iter()
        .filter(|r| r.outcome.is_success())
        .filter_map(|r| match which {
            Latency::Ttft => r.ttft().map(|d| d.as_secs_f64() * 1e3),
            Latency::E2e => r.latency().map(|d| d.as_secs_f64() * 1e3),
            Latency::Tpot => vllm_tpot(r).map(|d| d.as_secs_f64() * 1e3),
        })
        .collect()
}

/// The latencies with a CDF chart.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Latency {
    /// Time to first token.
    Ttft,
    /// Time per output token (vLLM's).
    Tpot,
    /// End-to-end latency.
    E2e,
}

impl Latency {
    fn name(self) -> &'static str {
        match self {
            Latency::Ttft => "TTFT",
            Latency::Tpot => "TPOT",
            Latency::E2e => "E2E latency",
        }
    }

    fn file(self) -> &'static str {
        match self {
            Latency::Ttft => "ttft_cdf.svg",
            Latency::Tpot => "tpot_cdf.svg",
            Latency::E2e => "e2e_cdf.svg",
        }
    }
}

/// Lines over a shared x axis, one per run, and vertical marks `(x, label)` (stage starts).
fn lines_chart(
    title: &str,
    x_desc: &str,
    y_desc: &str,
    lines: &[(String, Vec<(f64, f64)>)],
    y_max: Option<f64>,
    marks: &[(f64, String)],
) -> Result<String, String> {
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, SIZE).into_drawing_area();
        root.fill(&WHITE).map_err(|e| e.to_string())?;
        let pts = lines.iter().flat_map(|(_, p)| p.iter());
        let x_max = pts
            .clone()
            .map(|p| p.0)
            .chain(marks.iter().map(|m| m.0))
            .fold(0.0, f64::max);
        let x_max = if x_max > 0.0 { x_max * 1.02 } else { 1.0 };
        let y_top = y_max.unwrap_or_else(|| {
            let m = pts.map(|p| p.1).fold(0.0, f64::max);
            if m > 0.0 {
                m * 1.1
            } else {
                1.0
            }
        });
        let mut chart = ChartBuilder::on(&root)
            .caption(title, ("sans-serif", 20))
            .margin(12)
            .x_label_area_size(40)
            .y_label_area_size(70)
            .build_cartesian_2d(0f64..x_max, 0f64..y_top)
            .map_err(|e| e.to_string())?;
        chart
            .configure_mesh()
            .x_desc(x_desc)
            .y_desc(y_desc)
            .draw()
            .map_err(|e| e.to_string())?;
        let grey = RGBColor(120, 120, 120);
        chart
            .draw_series(
                marks.iter().map(|(x, _)| {
                    PathElement::new(vec![(*x, 0.0), (*x, y_top)], grey.stroke_width(1))
                }),
            )
            .map_err(|e| e.to_string())?;
        chart
            .draw_series(marks.iter().map(|(x, label)| {
                Text::new(
                    label.clone(),
                    (*x, y_top * 0.97),
                    ("sans-serif", 12).into_font(),
                )
            }))
            .map_err(|e| e.to_string())?;
        for (i, (label, p)) in lines.iter().enumerate() {
            let c = color(i);
            chart
                .draw_series(LineSeries::new(p.iter().copied(), c.stroke_width(2)))
                .map_err(|e| e.to_string())?
                .label(label.clone())
                .legend(move |(x, y)| {
                    PathElement::new(vec![(x, y), (x + 18, y)], c.stroke_width(3))
                });
        }
        chart
            .configure_series_labels()
            .position(SeriesLabelPosition::LowerRight)
            .background_style(WHITE.mix(0.85))
            .border_style(BLACK)
            .draw()
            .map_err(|e| e.to_string())?;
        root.present().map_err(|e| e.to_string())?;
    }
    Ok(svg)
}

/// The window used for the over-time charts: about 100 windows over the longest run, at
/// least 1 s.
fn time_window(runs: &[PlotRun]) -> std::time::Duration {
    let end = runs
        .iter()
        .flat_map(|r| r.records.iter())
        .filter_map(|r| r.ended_at.or(r.chunks.last().map(|c| c.at)))
        .max()
        .unwrap_or_default()
        .as_secs_f64();
    std::time::Duration::from_secs_f64((end / 100.0).ceil().max(1.0))
}

/// Each run's stage starts on the time axis of the charts over time (the records' own
/// clock), labelled with the stage; the first stage's start (the run's start) is not marked.
fn stage_marks(runs: &[PlotRun]) -> Vec<(f64, String)> {
    let mut out: Vec<(f64, String)> = Vec::new();
    for r in runs {
        let Some(origin) = r.records.iter().map(|r| r.sent_at).min() else {
            continue;
        };
        for s in r.stages.iter().filter(|s| s.start_s > 0.0) {
            let mark = (origin.as_secs_f64() + s.start_s, s.label.clone());
            if !out.contains(&mark) {
                out.push(mark);
            }
        }
    }
    out
}

/// Draws every chart for `runs`; see the module docs. The KV-cache chart is drawn only when
/// a run has KV-cache usage in its server metrics.
pub fn charts(runs: &[PlotRun]) -> Result<Vec<Chart>, PlotError> {
    if runs.is_empty() {
        return Err(PlotError::NoRuns);
    }
    let mut out = Vec::new();
    let file = "total_tps.svg";
    out.push(Chart {
        file: file.into(),
        title: "Total TPS per configuration".into(),
        svg: total_tps_chart(runs).map_err(draw_err(file))?,
    });
    for which in [Latency::Ttft, Latency::Tpot, Latency::E2e] {
        let lines: Vec<_> = runs
            .iter()
            .map(|r| {
                (
                    r.label.to_string(),
                    cdf_points(latencies_ms(r.records, which)),
                )
            })
            .collect();
        // Runs whose answers came whole (pooling endpoints) have no TTFT or TPOT to draw.
        if which != Latency::E2e && lines.iter().all(|(_, points)| points.is_empty()) {
            continue;
        }
        let title = format!("{} CDF", which.name());
        out.push(Chart {
            file: which.file().into(),
            svg: lines_chart(
                &title,
                &format!("{} (ms)", which.name()),
                "fraction of requests",
                &lines,
                Some(1.0),
                &[],
            )
            .map_err(draw_err(which.file()))?,
            title,
        });
    }
    let window = time_window(runs);
    let per_run: Vec<_> = runs
        .iter()
        .map(|r| slices(r.records, window).unwrap_or_default())
        .collect();
    let mid = |s: &super::slices::Slice| (s.start_s + s.end_s) / 2.0;
    let over_time = |f: &dyn Fn(&super::slices::Slice) -> f64| -> Vec<(String, Vec<(f64, f64)>)> {
        runs.iter()
            .zip(&per_run)
            .map(|(r, s)| {
                (
                    r.label.to_string(),
                    s.iter().map(|x| (mid(x), f(x))).collect(),
                )
            })
            .collect()
    };
    let w = window.as_secs_f64();
    let marks = stage_marks(runs);
    for (file, title, y, lines) in [
        (
            "throughput_over_time.svg",
            format!("Output throughput over time ({w:.0} s windows)"),
            "output tokens/s",
            over_time(&|s| s.output_tokens_per_s),
        ),
        (
            "concurrency_over_time.svg",
            format!("Requests in flight over time ({w:.0} s windows)"),
            "requests in flight",
            over_time(&|s| s.in_flight_mean),
        ),
    ] {
        out.push(Chart {
            file: file.into(),
            svg: lines_chart(&title, "time since start (s)", y, &lines, None, &marks)
                .map_err(draw_err(file))?,
            title,
        });
    }
    let kv: Vec<_> = runs
        .iter()
        .filter_map(|r| {
            let s = r.server?;
            let v = s.known(Known::KvCacheUsage)?;
            let pts = s
                .times_s
                .iter()
                .zip(v)
                .filter_map(|(t, v)| Some((*t, v? * 100.0)))
                .collect();
            Some((r.label.to_string(), pts))
        })
        .collect();
    if !kv.is_empty() {
        let file = "kv_cache_over_time.svg";
        let title = "KV-cache usage over time (server metrics)".to_string();
        out.push(Chart {
            file: file.into(),
            svg: lines_chart(
                &title,
                "time since start (s)",
                "KV-cache usage (%)",
                &kv,
                Some(100.0),
                &marks,
            )
            .map_err(draw_err(file))?,
            title,
        });
    }
    Ok(out)
}

/// Writes `contents` to `path` atomically (a temporary file beside it, then a rename).
pub(crate) fn write_atomic(path: &Path, contents: &[u8]) -> Result<(), PlotError> {
    let io = |source| PlotError::Io {
        path: path.to_path_buf(),
        source,
    };
    crate::atomic::write(path, contents).map_err(io)
}

/// Draws every chart and writes each as `DIR/<file>` (creating `dir`).
pub fn write_charts(runs: &[PlotRun], dir: &Path) -> Result<Vec<Chart>, PlotError> {
    let out = charts(runs)?;
    std::fs::create_dir_all(dir).map_err(|source| PlotError::Io {
        path: dir.to_path_buf(),
        source,
    })?;
    for c in &out {
        write_atomic(&dir.join(&c.file), c.svg.as_bytes())?;
    }
    Ok(out)
}
