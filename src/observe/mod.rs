//! Seeing inside a run: the server's Prometheus metrics scraped during it ([`prom`],
//! [`series`], and with the `http` feature `scrape`), metrics per time window and the
//! run's steady state ([`slices`]), a change of latency explained by what the server did
//! ([`explain`]), and with the `plot` feature SVG charts and a self-contained HTML report
//! (`plot`, `html`; a capacity search's chart: `capacity_plot`).

#[cfg(feature = "plot")]
pub mod capacity_plot;
pub mod explain;
pub mod gpu;
#[cfg(feature = "plot")]
pub mod html;
#[cfg(feature = "plot")]
pub mod plot;
pub mod prom;
#[cfg(feature = "http")]
pub mod scrape;
pub mod series;
pub mod slices;

pub use series::{ServerSeries, ServerSummary};
