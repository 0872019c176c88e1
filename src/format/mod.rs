//! Text and table renderers/parsers for benchmark reports.

pub mod bench;
pub mod capacity;
pub mod comparison;
pub mod doc;
pub mod gpustack;
pub mod intervals;
pub mod labels;
pub mod lint;
pub(crate) mod noise;
pub(crate) mod observe;
pub mod pareto;
pub mod production;
mod profile;
pub(crate) mod pyfmt;
#[cfg(feature = "quality")]
pub mod quality;
pub mod shell;
#[cfg(feature = "sim")]
pub(crate) mod sim;
#[cfg(all(feature = "study", unix))]
pub mod study;
pub mod sweep;
pub mod text;

pub use observe::{cold_line, drift_line, render_slices, stage_line, steady_line};
#[cfg(feature = "sim")]
pub use sim::markdown as sim_markdown;
