//! The application layer: the verbs of `servebench` (bench, its capacity search, sweep, report, lint of files,
//! simulate, study runs), each composed from the library's parts. Transport
//! ([`crate::http`]), the importers ([`crate::import`]), the judges ([`crate::lint`],
//! [`crate::noise`], [`crate::compare`]) and the simulator ([`crate::sim`]) are parts these
//! verbs use; every text they print is made by [`crate::format`]. No part of the library
//! calls a verb; the `servebench` binary parses its command line, calls one, prints and
//! exits.

#[cfg(feature = "http")]
pub mod bench;
#[cfg(feature = "http")]
pub mod capacity;
pub mod lint_files;
pub mod report;
#[cfg(all(feature = "sim", feature = "cli"))]
pub mod simulate;
#[cfg(all(feature = "study", unix))]
pub mod study;
#[cfg(feature = "http")]
pub mod sweep;
