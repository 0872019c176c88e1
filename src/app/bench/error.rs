//! Why a bench run could not run or be saved.

use crate::driver::DriverError;
use crate::http::HttpError;

/// Errors of a bench run.
#[derive(Debug, thiserror::Error)]
pub enum BenchError {
    /// Setting up the HTTP engine or reaching the server failed.
    #[error(transparent)]
    Http(#[from] HttpError),
    /// The driver could not run the profile.
    #[error(transparent)]
    Driver(#[from] DriverError),
    /// The GPU telemetry source asked for (a DCGM exporter's URL, or `nvidia-smi`) gave no
    /// sample before the run: nothing was sent.
    #[error("GPU telemetry from {source_name} failed before the run started: {reason}")]
    GpuMetrics {
        /// The source as given ([`BenchArgs::gpu_metrics`](super::BenchArgs::gpu_metrics)).
        source_name: String,
        /// Why its first sample failed.
        reason: String,
    },
    /// Writing the output failed.
    #[error("writing {path}: {message}")]
    Write {
        /// The output path.
        path: String,
        /// What went wrong.
        message: String,
    },
}
