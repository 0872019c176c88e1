//! `servebench bench`: drive an OpenAI-compatible server with a load profile through
//! [`HttpEngine`] and the load [`driver`](crate::driver), then compute the report, the lints
//! and keep the raw records.
//!
//! [`Progressed`] wraps any engine to report live counters (done, failed, in flight, tok/s)
//! while the driver runs; the CLI turns them into a progress bar.

use std::path::Path;
use std::time::Duration;

use super::client::{HttpConfig, HttpEngine};
use super::HttpError;
use crate::driver::workload::WorkloadOptions;
use crate::driver::{run_profile, DriverError};
use crate::engine::{Engine, EngineError, EngineEvent, EngineRequest};
use crate::format::text::Style;
use crate::lint::{lint_run, Finding, LintOptions};
use crate::metrics::{compute, MetricsOptions};
use crate::profile::Profile;
use crate::record::RequestRecord;
use crate::result::{BenchmarkResult, Convention};

/// How often `bench` scrapes `/metrics` by default.
pub const DEFAULT_SCRAPE_INTERVAL: Duration = Duration::from_secs(1);

/// What to run.
#[derive(Debug, Clone, PartialEq)]
pub struct BenchArgs {
    /// Server, endpoint, model, key, timeouts.
    pub http: HttpConfig,
    /// The load profile (dataset, rate, request count, concurrency cap).
    pub profile: Profile,
    /// Send at most this many requests.
    pub max_requests: Option<u64>,
    /// Stop sending after this much wall time; requests still in flight are cancelled and
    /// recorded as incomplete.
    pub max_duration: Option<Duration>,
    /// Client-side cap on requests in flight; `None`: the profile's, else guidellm's 512.
    pub max_concurrency: Option<usize>,
    /// Ask `/v1/models` for the model name when `http.model` is `None`.
    pub discover_model: bool,
    /// Report style; also picks the metric convention ([`Style::Gpustack`]: guidellm's
    /// definitions, as GPUStack's reports use; [`Style::Vllm`]: vLLM's).
    pub style: Style,
    /// Scrape the server's `/metrics` this often during the run (`None`: don't).
    pub scrape_interval: Option<Duration>,
}

impl BenchArgs {
    /// Defaults for `target` and `profile`: completions, model discovery on, GPUStack style.
    pub fn new(target: impl Into<String>, profile: Profile) -> Self {
        BenchArgs {
            http: HttpConfig::new(target),
            profile,
            max_requests: None,
            max_duration: None,
            max_concurrency: None,
            discover_model: true,
            style: Style::Gpustack,
            scrape_interval: Some(DEFAULT_SCRAPE_INTERVAL),
        }
    }
}

/// Live counters for a progress bar.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Progress {
    /// Requests ended (finished or failed).
    pub done: u64,
    /// Of which failed.
    pub failed: u64,
    /// Requests in flight.
    pub in_flight: u64,
    /// Output tokens received so far.
    pub output_tokens: u64,
    /// Time since the start (engine clock).
    pub elapsed: Duration,
}

impl Progress {
    /// Output tokens per second so far.
    pub fn tokens_per_s(&self) -> f64 {
        let s = self.elapsed.as_secs_f64();
        if s > 0.0 {
            self.output_tokens as f64 / s
        } else {
            0.0
        }
    }
}

/// How often [`Progressed`] reports (engine clock).
pub const PROGRESS_EVERY: Duration = Duration::from_millis(200);

/// An engine wrapper that counts what passes through and calls `report` at least every
/// [`PROGRESS_EVERY`] while the driver waits in [`Engine::advance`] (a long wait is cut into
/// slices; the contract — return at the deadline or right after a terminal event — holds).
pub struct Progressed<'a, E> {
    inner: E,
    progress: Progress,
    next_report: Duration,
    report: &'a mut dyn FnMut(&Progress),
}

impl<'a, E: Engine> Progressed<'a, E> {
    /// Wrap `inner`.
    pub fn new(inner: E, report: &'a mut dyn FnMut(&Progress)) -> Self {
        Progressed {
            inner,
            progress: Progress::default(),
            next_report: Duration::ZERO,
            report,
        }
    }

    /// The counters so far.
    pub fn progress(&self) -> Progress {
        self.progress
    }

    /// The wrapped engine.
    pub fn into_inner(self) -> E {
        self.inner
    }

    fn tick(&mut self, force: bool) {
        let now = self.inner.now();
        if force || now >= self.next_report {
            self.progress.elapsed = now;
            self.progress.in_flight = self.inner.in_flight() as u64;
            (self.report)(&self.progress);
            self.next_report = now + PROGRESS_EVERY;
        }
    }
}

impl<E: Engine> Engine for Progressed<'_, E> {
    fn now(&self) -> Duration {
        self.inner.now()
    }

    fn submit(&mut self, request: EngineRequest) -> Result<(), EngineError> {
        self.inner.submit(request)
    }

    fn advance(
        &mut self,
        deadline: Option<Duration>,
        events: &mut Vec<EngineEvent>,
    ) -> Result<(), EngineError> {
        loop {
            let now = self.inner.now();
            let slice_end = now + PROGRESS_EVERY;
            let slice = match deadline {
                Some(d) => d.min(slice_end),
                None => slice_end,
            };
            let start = events.len();
            self.inner.advance(Some(slice), events)?;
            let mut ended = false;
            for ev in &events[start..] {
                match ev {
                    EngineEvent::Chunk { tokens, .. } => {
                        self.progress.output_tokens += u64::from(*tokens)
                    }
                    EngineEvent::Finished { .. } => {
                        self.progress.done += 1;
                        ended = true;
                    }
                    EngineEvent::Failed { .. } => {
                        self.progress.done += 1;
                        self.progress.failed += 1;
                        ended = true;
                    }
                    EngineEvent::Sent { .. } => {}
                }
            }
            self.tick(false);
            let reached = deadline.is_some_and(|d| self.inner.now() >= d);
            if ended || reached || (deadline.is_none() && self.inner.in_flight() == 0) {
                return Ok(());
            }
        }
    }

    fn in_flight(&self) -> usize {
        self.inner.in_flight()
    }

    fn cancel(&mut self, id: u64) -> bool {
        self.inner.cancel(id)
    }
}

/// Errors of a bench run.
#[derive(Debug, thiserror::Error)]
pub enum BenchError {
    /// Setting up the HTTP engine or reaching the server failed.
    #[error(transparent)]
    Http(#[from] HttpError),
    /// The driver could not run the profile.
    #[error(transparent)]
    Driver(#[from] DriverError),
    /// Writing the output failed.
    #[error("writing {path}: {message}")]
    Write {
        /// The output path.
        path: String,
        /// What went wrong.
        message: String,
    },
}

/// A finished run.
#[derive(Debug, Clone, PartialEq)]
pub struct BenchRun {
    /// The figures, in the convention of the chosen style, with the profile, model, target
    /// and convention in `meta`.
    pub result: BenchmarkResult,
    /// One record per request sent, in id order (engine clock: offsets from the run start).
    pub records: Vec<RequestRecord>,
    /// Lint findings on the result and the records.
    pub findings: Vec<Finding>,
    /// Set when the engine failed as a whole and the run stopped early.
    pub aborted: Option<String>,
    /// The server's metrics scraped during the run (see [`crate::observe`]).
    pub server_metrics: Option<crate::observe::ServerSeries>,
}

/// The metric convention a report style uses.
pub fn convention_for(style: Style) -> Convention {
    match style {
        Style::Gpustack => Convention::Guidellm,
        Style::Vllm => Convention::Vllm,
    }
}

/// Compute the report figures and lints for `records` (as [`run`] does).
pub fn summarize(
    records: &[RequestRecord],
    profile: &Profile,
    style: Style,
    max_concurrency: Option<usize>,
) -> (BenchmarkResult, Vec<Finding>) {
    let mut result = compute(records, MetricsOptions::new(convention_for(style)));
    result.meta.profile = Some(profile.clone());
    result.meta.convention = Some(convention_for(style));
    let opts = LintOptions {
        expected_requests: Some(profile.total_requests),
        client_cap: max_concurrency.map(|c| c as u64),
    };
    let findings = lint_run(&result, Some(records), &opts);
    (result, findings)
}

/// Run a benchmark against `args.http.target`, calling `progress` as it goes.
pub fn run(args: &BenchArgs, progress: &mut dyn FnMut(&Progress)) -> Result<BenchRun, BenchError> {
    let mut http = args.http.clone();
    if http.model.is_none() && args.discover_model {
        let probe = HttpEngine::new(http.clone())?;
        http.model = probe.list_models()?.into_iter().next();
    }
    let model = http.model.clone();
    let target = http.target.clone();
    let workload = WorkloadOptions {
        with_text: true,
        ..WorkloadOptions::default()
    };
    let http_engine = HttpEngine::new(http)?;
    let scraper = args
        .scrape_interval
        .map(|every| crate::observe::scrape::Scraper::start(&target, every, http_engine.origin()));
    let mut engine = Progressed::new(http_engine, progress);
    let mut cap = None;
    let out = run_profile(&mut engine, &args.profile, &workload, |o| {
        if let Some(c) = args.max_concurrency {
            o.max_concurrency = Some(c);
        }
        if let Some(n) = args.max_requests {
            o.max_requests = Some(o.max_requests.map_or(n, |m| m.min(n)));
        }
        o.max_duration = args.max_duration;
        cap = o.max_concurrency;
    });
    let server_metrics = scraper.map(|s| s.stop());
    let out = out?;
    engine.tick(true);
    let (mut result, findings) = summarize(&out.records, &args.profile, args.style, cap);
    result.meta.model = model;
    result.meta.source = Some(target);
    Ok(BenchRun {
        result,
        records: out.records,
        findings,
        aborted: out.aborted,
        server_metrics,
    })
}

/// Save a run: `*.jsonl` gets the records as JSON Lines; anything else a JSON object
/// `{"result": …, "records": […]}`.
pub fn save(path: &Path, run: &BenchRun) -> Result<(), BenchError> {
    let werr = |message: String| BenchError::Write {
        path: path.display().to_string(),
        message,
    };
    if path.extension().is_some_and(|e| e == "jsonl") {
        return crate::record::write_jsonl_file(path, &run.records)
            .map_err(|e| werr(e.to_string()));
    }
    let file = std::fs::File::create(path).map_err(|e| werr(e.to_string()))?;
    let mut v = serde_json::json!({"result": run.result, "records": run.records});
    if let Some(s) = &run.server_metrics {
        v["server_metrics"] = serde_json::to_value(s).map_err(|e| werr(e.to_string()))?;
    }
    serde_json::to_writer(std::io::BufWriter::new(file), &v).map_err(|e| werr(e.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::Usage;

    /// One chunk per request, 50 ms after submission.
    struct Echo {
        now: Duration,
        queue: Vec<(Duration, u64)>,
    }

    impl Engine for Echo {
        fn now(&self) -> Duration {
            self.now
        }
        fn submit(&mut self, r: EngineRequest) -> Result<(), EngineError> {
            self.queue
                .push((self.now + Duration::from_millis(50), r.id));
            Ok(())
        }
        fn advance(
            &mut self,
            deadline: Option<Duration>,
            ev: &mut Vec<EngineEvent>,
        ) -> Result<(), EngineError> {
            self.queue.sort();
            match self.queue.first().copied() {
                Some((at, id)) if deadline.is_none_or(|d| at <= d) => {
                    self.queue.remove(0);
                    self.now = at;
                    ev.push(EngineEvent::Chunk { id, at, tokens: 3 });
                    ev.push(EngineEvent::Finished {
                        id,
                        at,
                        usage: Usage::default(),
                    });
                }
                _ => {
                    if let Some(d) = deadline {
                        self.now = self.now.max(d)
                    }
                }
            }
            Ok(())
        }
        fn in_flight(&self) -> usize {
            self.queue.len()
        }
    }

    #[test]
    fn progressed_reports_while_waiting_and_keeps_the_contract() {
        let mut reports = Vec::new();
        let mut cb = |p: &Progress| reports.push(*p);
        let mut e = Progressed::new(
            Echo {
                now: Duration::ZERO,
                queue: vec![],
            },
            &mut cb,
        );
        for id in 0..2 {
            e.submit(EngineRequest {
                id,
                prompt_tokens: 1,
                prompt: None,
                max_output_tokens: 3,
                ignore_eos: true,
                arrival: Duration::ZERO,
                shared_prefix_tokens: 0,
            })
            .unwrap();
        }
        let mut ev = Vec::new();
        e.advance(None, &mut ev).unwrap();
        assert_eq!(ev.len(), 2, "returns right after the first terminal event");
        assert_eq!(e.now(), Duration::from_millis(50));
        e.advance(Some(Duration::from_millis(40)), &mut ev).unwrap();
        assert_eq!(ev.len(), 2, "nothing happens before an earlier deadline");
        e.advance(Some(Duration::from_secs(1)), &mut ev).unwrap();
        assert_eq!(ev.len(), 4);
        e.advance(Some(Duration::from_secs(1)), &mut ev).unwrap();
        assert_eq!(e.now(), Duration::from_secs(1));
        let p = e.progress();
        assert_eq!((p.done, p.failed, p.output_tokens), (2, 0, 6));
        drop(e);
        assert!(!reports.is_empty());
        assert_eq!(reports.last().unwrap().done, 2);
    }

    #[test]
    fn gpustack_style_uses_guidellm_conventions() {
        assert_eq!(convention_for(Style::Gpustack), Convention::Guidellm);
        assert_eq!(convention_for(Style::Vllm), Convention::Vllm);
    }
}
