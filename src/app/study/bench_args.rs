//! The `bench` arguments of a study's runs against a launched server: its address, key and
//! timeout, the scrape interval, and the study's `[endpoint]`; and the prefix-cache reset
//! before a run.

use std::time::Duration;

use crate::app::bench::BenchArgs;
use crate::http::{Endpoint, HttpEngine};
use crate::profile::Profile;
use crate::study::{EndpointSpec, EngineSpec};

/// The `bench` arguments of a study's runs against the server at `target`.
pub(super) fn bench_args(
    spec: &EngineSpec,
    endpoint: Option<&EndpointSpec>,
    target: &str,
    bearer: Option<&str>,
    profile: Profile,
) -> BenchArgs {
    let mut args = BenchArgs::new(target.to_string(), profile);
    args.http.api_key = bearer.map(str::to_string);
    args.http.request_timeout = Some(Duration::from_secs_f64(spec.request_timeout_s));
    args.scrape_interval = Some(crate::study::observe::SCRAPE_INTERVAL);
    // Each run its own trace (the run file's `trace_id` label).
    args.http.trace = Some(crate::http::trace::TraceId::random());
    if let Some(e) = endpoint {
        // The study file's check accepted only known names.
        args.http.endpoint = e.name.parse().unwrap_or(Endpoint::Completions);
        args.http.inputs_per_request = e.batch_size.or(e.documents).unwrap_or(1);
        args.http.document_tokens = e.document_tokens;
    }
    args
}

/// Empties the server's prefix cache before a run; what happened, for the run file:
/// `reset: POST /reset_prefix_cache` (or `/flush_cache`), or `not reset: WHY`.
pub(super) fn reset_prefix_cache(args: &BenchArgs) -> String {
    let done =
        HttpEngine::new(args.http.clone()).and_then(|e| e.reset_prefix_cache().map(str::to_string));
    match done {
        Ok(path) => format!("reset: POST {path}"),
        Err(e) => format!("not reset: {e}"),
    }
}
