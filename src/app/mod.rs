//! The application layer: the verbs of `servebench` (bench, its capacity search, sweep, report, lint of files,
//! simulate, study runs), each composed from the library's parts. Transport
//! (`http`, feature `http`), the importers ([`crate::import`]), the judges ([`crate::lint`],
//! [`crate::noise`], [`crate::compare`]) and the simulator (`sim`, feature `sim`) are parts these
//! verbs use; every text they print is made by [`crate::format`]. No part of the library
//! calls a verb; the `servebench` binary parses its command line, calls one, prints and
//! exits.

#[cfg(feature = "http")]
pub mod bench;
#[cfg(feature = "http")]
pub(crate) mod capacity;
pub(crate) mod lint_files;
#[cfg(all(feature = "http", feature = "quality"))]
pub mod quality;
pub(crate) mod report;
#[cfg(all(feature = "sim", feature = "cli"))]
pub mod simulate;
#[cfg(all(feature = "study", unix))]
pub mod study;
#[cfg(feature = "http")]
pub(crate) mod sweep;

#[cfg(feature = "http")]
pub use capacity::{
    probe_args, run_capacity, CapacityArgs, CapacityError, CapacityRun, ProbeEvent, CAPACITY_FORMAT,
};
pub use lint_files::{
    exit_code, lint_bytes, lint_path, lint_run_file, lint_runs, LintInputError, EXIT_BAD_INPUT,
    EXIT_CLEAN, EXIT_FINDINGS, EXIT_USAGE,
};
pub use report::{
    render_report, report_bytes, report_path, report_run, report_runs, Numbers, ReportBlock,
    ReportOptions,
};
#[cfg(feature = "http")]
pub use sweep::{run_sweep, save_sweep};
