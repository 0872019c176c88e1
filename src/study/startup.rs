//! A launched server's start-up, as a study records it per configuration (the cold/warm
//! distinction of `vllm bench startup`, from the runner's side): the time from launch to
//! a healthy answer, from launch to the first token of the first request (the warm-up's,
//! else the first measured run's), that request's TTFT, and the first measured run's
//! warm-up window — the requests before its steady state by MSER-5
//! ([`crate::observe::steady_window`]) — against the steady state's median TTFT. The
//! first launch of a configuration is its cold start; a later one (a resumed or retried
//! study) is kept beside it.

use std::time::{Duration, SystemTime};

use serde::{Deserialize, Serialize};

use crate::runfile::RunFile;

/// One launch of a configuration's server.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Startup {
    /// Which launch of the configuration (1: the first).
    pub launch: u32,
    /// Seconds from the launch to the first healthy answer (health, then `/v1/models`).
    pub healthy_s: f64,
    /// Seconds from the launch to the first token of the first request sent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub first_token_s: Option<f64>,
    /// That request's TTFT, ms.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub first_ttft_ms: Option<f64>,
    /// The first measured run's warm-up window: seconds from its first send to its steady
    /// state's first send.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub warmup_s: Option<f64>,
    /// The requests sent in that window.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub warmup_requests: Option<usize>,
    /// The median TTFT over the requests of that window, ms.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub warmup_median_ttft_ms: Option<f64>,
    /// The median TTFT over that run's steady state, ms.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub steady_median_ttft_ms: Option<f64>,
    /// The first measured run's key.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run: Option<String>,
}

/// The first request `run` sent (its warm-up requests first): when its first token came
/// (wall clock) and its TTFT.
pub fn first_token(run: &RunFile) -> Option<(SystemTime, Duration)> {
    let first = run
        .warmup_records
        .iter()
        .chain(&run.records)
        .min_by_key(|r| r.sent_at)?;
    let ttft = first.ttft().or_else(|| first.latency())?;
    let at = SystemTime::from(run.started_at) + first.sent_at + ttft;
    Some((at, ttft))
}

impl Startup {
    /// Launch number `launch`, launched at `launched_at` and healthy after `healthy`; the
    /// first request's run (`first_sent`: the warm-up run, else the first measured run) and
    /// the first measured run (`measured`: its key and file), where they ran.
    pub fn of(
        launch: u32,
        launched_at: SystemTime,
        healthy: Duration,
        first_sent: Option<&RunFile>,
        measured: Option<(&str, &RunFile)>,
    ) -> Startup {
        let first = first_sent.and_then(first_token);
        let mut s = Startup {
            launch,
            healthy_s: healthy.as_secs_f64(),
            first_token_s: first
                .and_then(|(at, _)| at.duration_since(launched_at).ok().map(|d| d.as_secs_f64())),
            first_ttft_ms: first.map(|(_, t)| t.as_secs_f64() * 1e3),
            warmup_s: None,
            warmup_requests: None,
            warmup_median_ttft_ms: None,
            steady_median_ttft_ms: None,
            run: measured.map(|(k, _)| k.to_string()),
        };
        // The warm-up window as `bench --cold` reports it ([`crate::observe::cold_figures`]).
        let Some(cold) = measured.and_then(|(_, run)| crate::observe::cold_figures(&run.records))
        else {
            return s;
        };
        let median = |r: &crate::result::BenchmarkResult| r.ttft.as_ref().and_then(|t| t.median);
        s.warmup_s = Some(cold.warmup_s);
        s.warmup_requests = Some(cold.warmup_requests);
        s.warmup_median_ttft_ms = cold.warmup.as_ref().and_then(median);
        s.steady_median_ttft_ms = median(&cold.steady);
        s
    }
}
