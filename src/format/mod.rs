//! Text and table renderers/parsers for benchmark reports.

pub mod comparison;
pub mod doc;
pub mod gpustack;
pub mod intervals;
pub mod labels;
pub mod lint;
pub mod noise;
pub mod production;
pub mod pyfmt;
pub mod text;
