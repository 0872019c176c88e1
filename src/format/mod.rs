//! Text and table renderers/parsers for benchmark reports.

pub mod pyfmt;
pub mod doc;
pub mod text;
