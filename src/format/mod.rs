//! Text and table renderers/parsers for benchmark reports.

pub mod bench;
pub mod capacity;
pub mod comparison;
pub mod doc;
pub mod gpustack;
pub mod intervals;
pub mod labels;
pub mod lint;
pub mod noise;
pub mod observe;
pub mod production;
pub mod profile;
pub mod pyfmt;
pub mod shell;
#[cfg(feature = "sim")]
pub mod sim;
#[cfg(all(feature = "study", unix))]
pub mod study;
pub mod text;
