//! Seeing inside a run: the server's Prometheus metrics scraped during it ([`prom`],
//! [`ServerSeries`], and with the `http` feature `Scraper`), metrics per time window and the
//! run's steady state ([`slices()`], [`steady_state`], and by MSER-5: [`steady_window`]),
//! its load stages (phases, ramp steps, a staged fill: [`Stage`]), a change of latency explained by what
//! the server did ([`explain()`]), GPU power and energy from `nvidia-smi` ([`energy_figures`]),
//! and with the `plot` feature SVG charts (`charts`) and a self-contained HTML report
//! (`html`; a capacity search's chart: `capacity_chart`; a Pareto front's: `pareto_chart`).

#[cfg(feature = "plot")]
pub(crate) mod capacity_plot;
pub(crate) mod explain;
pub(crate) mod gpu;
#[cfg(feature = "plot")]
pub mod html;
pub mod live;
#[cfg(feature = "plot")]
pub(crate) mod pareto_plot;
#[cfg(feature = "plot")]
pub(crate) mod plot;
pub mod prom;
#[cfg(feature = "http")]
pub(crate) mod scrape;
pub(crate) mod series;
pub(crate) mod slices;
pub(crate) mod stages;
pub(crate) mod steady;

#[cfg(feature = "plot")]
pub use capacity_plot::{capacity_chart, CAPACITY_SVG};
pub use explain::{
    client_tpot_ms, client_ttft_ms, explain, token_weighted_batch, Breakdown, Explanation, Part,
    RunView,
};
pub use gpu::{
    add_server_figures, energy_figures, nvidia_smi_samples, parse_nvidia_smi, spec_decode_figures,
    MIN_WINDOW_SAMPLES, NVIDIA_SMI, NVIDIA_SMI_QUERY,
};
#[cfg(feature = "plot")]
pub use pareto_plot::{pareto_chart, pareto_svg_name};
#[cfg(feature = "plot")]
pub use plot::{
    cdf_points, charts, latencies_ms, total_tps, tps_label, write_charts, Chart, Latency,
    PlotError, PlotRun, MAX_CDF_POINTS,
};
#[cfg(feature = "http")]
pub use scrape::{metrics_url, scrape_once, ScrapeError, Scraper};
pub use series::{
    counter_increase, Known, ServerSeries, ServerSummary, CLOCK_SPEED, KNOWN_HISTOGRAMS,
};
pub use slices::{
    slices, steady_state, Slice, SliceError, SteadyState, MAX_SLICES, STEADY_FRACTION,
};
pub use stages::{members as stage_members, Stage, StageKind, RAMP_STAGES};
pub use steady::{
    cold_figures, cut_by_time, mser5, stage_figures, steady_figures, steady_window, ColdFigures,
    SteadyWindow, MSER_BATCH, MSER_MIN_BATCHES,
};
