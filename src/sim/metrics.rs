//! The simulator's Prometheus metrics, with vLLM's names, labels (`engine`, `model_name`)
//! and meanings (V1 engine, 0.10–0.17), so that scraping, summaries and explanations work
//! without a GPU: the scheduler gauges (`vllm:num_requests_running`,
//! `vllm:num_requests_waiting`, `vllm:kv_cache_usage_perc`), the counters
//! (`vllm:num_preemptions_total`, `vllm:prompt_tokens_total`,
//! `vllm:generation_tokens_total`, `vllm:prefix_cache_queries_total` and `_hits_total` in
//! tokens, `vllm:request_success_total`, the speculative-decoding drafts, draft tokens and
//! accepted tokens) and the per-request latency histograms (`vllm:time_to_first_token_seconds`
//! from the API server's arrival to the first token's output, `vllm:request_queue_time_seconds`
//! waiting in the scheduler, `vllm:request_prefill_time_seconds` from first scheduled to the
//! first token, `vllm:request_decode_time_seconds`,
//! `vllm:request_time_per_output_token_seconds`, `vllm:e2e_request_latency_seconds`).
//!
//! [`SimMetrics`] holds the counters and histograms; [`super::H200Sim`] updates them from a
//! few hooks, renders them on `/metrics` ([`crate::engine::Engine::metrics_text`]) and,
//! when asked, samples them every N virtual seconds into a
//! [`ServerSeries`] ([`super::H200Sim::sample_metrics_every`]).

use crate::observe::prom::{self, Help, Sample};
use crate::observe::series::ServerSeries;

use super::power::{EnergyMeter, DCGM_HELP};

/// vLLM's bucket bounds for time-to-first-token, seconds.
const TTFT_BOUNDS_S: &[f64] = &[
    0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10.0,
    20.0, 40.0, 80.0, 160.0, 640.0, 2560.0,
];
/// vLLM's bucket bounds for per-request phase and end-to-end latencies, seconds.
const REQUEST_BOUNDS_S: &[f64] = &[
    0.3, 0.5, 0.8, 1.0, 1.5, 2.0, 2.5, 5.0, 10.0, 15.0, 20.0, 30.0, 40.0, 50.0, 60.0, 120.0, 240.0,
    480.0, 960.0, 1920.0, 7680.0,
];
/// vLLM's bucket bounds for time per output token, seconds.
const TPOT_BOUNDS_S: &[f64] = &[
    0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10.0, 20.0,
    40.0, 80.0,
];

/// A cumulative Prometheus histogram.
#[derive(Debug, Clone, PartialEq)]
pub struct Histogram {
    bounds: &'static [f64],
    /// Observations at or below each bound (not yet cumulative).
    counts: Vec<u64>,
    /// Observations above the last bound.
    over: u64,
    /// Sum of observations.
    pub sum: f64,
    /// Number of observations.
    pub count: u64,
}

impl Histogram {
    fn new(bounds: &'static [f64]) -> Histogram {
        Histogram {
            bounds,
            counts: vec![0; bounds.len()],
            over: 0,
            sum: 0.0,
            count: 0,
        }
    }

    /// Records one observation.
    pub fn observe(&mut self, v: f64) {
        self.sum += v;
        self.count += 1;
        match self.bounds.iter().position(|&b| v <= b) {
            Some(i) => self.counts[i] += 1,
            None => self.over += 1,
        }
    }

    /// The mean observation; `None` before any.
    pub fn mean(&self) -> Option<f64> {
        (self.count > 0).then(|| self.sum / self.count as f64)
    }

    fn samples(&self, family: &str, labels: &[(String, String)], out: &mut Vec<Sample>) {
        let mut cum = 0;
        for (b, c) in self
            .bounds
            .iter()
            .map(|b| prom::format_value(*b))
            .chain(std::iter::once("+Inf".to_string()))
            .zip(self.counts.iter().chain(std::iter::once(&self.over)))
        {
            cum += c;
            let mut l = labels.to_vec();
            l.push(("le".into(), b));
            out.push(Sample {
                name: format!("{family}_bucket"),
                labels: l,
                value: cum as f64,
            });
        }
        out.push(Sample {
            name: format!("{family}_count"),
            labels: labels.to_vec(),
            value: self.count as f64,
        });
        out.push(Sample {
            name: format!("{family}_sum"),
            labels: labels.to_vec(),
            value: self.sum,
        });
    }
}

/// The scheduler's state at one instant (what the gauges show).
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Gauges {
    /// Requests in the running batch.
    pub running: usize,
    /// Requests waiting in the scheduler (including preempted ones).
    pub waiting: usize,
    /// Fraction of KV + state blocks in use, 0–1.
    pub kv_cache_usage: f64,
    /// Preemptions so far.
    pub preemptions: u64,
}

/// The simulator's counters and histograms. See the module docs.
#[derive(Debug, Clone, PartialEq)]
pub struct SimMetrics {
    labels: Vec<(String, String)>,
    /// Prompt tokens of requests that produced their first token.
    pub prompt_tokens: u64,
    /// Tokens generated.
    pub generation_tokens: u64,
    /// Prompt tokens looked up in the prefix cache (with prefix caching on).
    pub prefix_cache_queries: u64,
    /// Of those, found cached.
    pub prefix_cache_hits: u64,
    /// Requests finished (`finished_reason="length"`: the simulator always runs to
    /// `max_tokens`).
    pub request_success: u64,
    /// Speculative-decoding drafts proposed.
    pub spec_drafts: u64,
    /// Draft tokens proposed.
    pub spec_draft_tokens: u64,
    /// Draft tokens accepted.
    pub spec_accepted_tokens: u64,
    /// Draft tokens accepted at each draft position (0 first), vLLM's
    /// `vllm:spec_decode_num_accepted_tokens_per_pos`.
    pub spec_accepted_per_pos: Vec<u64>,
    /// Arrival at the API server → first token output.
    pub ttft: Histogram,
    /// Time waiting in the scheduler before first scheduled.
    pub queue: Histogram,
    /// First scheduled → first token.
    pub prefill: Histogram,
    /// First token → last token.
    pub decode: Histogram,
    /// Per request: decode time ÷ (output tokens − 1).
    pub tpot: Histogram,
    /// Arrival at the API server → last token.
    pub e2e: Histogram,
    /// The GPU's energy meter, when the simulator models power ([`super::PowerModel`]): its
    /// DCGM exporter samples join vLLM's on `/metrics` and in the sampled series.
    pub power: Option<EnergyMeter>,
    sample_every_s: Option<f64>,
    next_sample_s: f64,
    series: Option<ServerSeries>,
}

/// DCGM's utilization window on `/metrics` (the exporter's default collection interval).
const DCGM_WINDOW_S: f64 = 1.0;

/// `(metric family, type, help)` of every family [`SimMetrics::samples`] writes.
const HELP: &[(&str, &str, &str)] = &[
    (
        "vllm:num_requests_running",
        "gauge",
        "Number of requests in model execution batches.",
    ),
    (
        "vllm:num_requests_waiting",
        "gauge",
        "Number of requests waiting to be processed.",
    ),
    (
        "vllm:kv_cache_usage_perc",
        "gauge",
        "KV-cache usage. 1 means 100 percent usage.",
    ),
    (
        "vllm:num_preemptions",
        "counter",
        "Cumulative number of preemption from the engine.",
    ),
    (
        "vllm:prompt_tokens",
        "counter",
        "Number of prefill tokens processed.",
    ),
    (
        "vllm:generation_tokens",
        "counter",
        "Number of generation tokens processed.",
    ),
    (
        "vllm:prefix_cache_queries",
        "counter",
        "Prefix cache queries, in terms of number of queried tokens.",
    ),
    (
        "vllm:prefix_cache_hits",
        "counter",
        "Prefix cache hits, in terms of number of cached tokens.",
    ),
    (
        "vllm:request_success",
        "counter",
        "Count of successfully processed requests.",
    ),
    (
        "vllm:spec_decode_num_drafts",
        "counter",
        "Number of spec decoding drafts.",
    ),
    (
        "vllm:spec_decode_num_draft_tokens",
        "counter",
        "Number of draft tokens.",
    ),
    (
        "vllm:spec_decode_num_accepted_tokens",
        "counter",
        "Number of accepted tokens.",
    ),
    (
        "vllm:spec_decode_num_accepted_tokens_per_pos",
        "counter",
        "Accepted tokens per draft's position.",
    ),
    (
        "vllm:time_to_first_token_seconds",
        "histogram",
        "Histogram of time to first token in seconds.",
    ),
    (
        "vllm:request_queue_time_seconds",
        "histogram",
        "Histogram of time spent in WAITING phase for request.",
    ),
    (
        "vllm:request_prefill_time_seconds",
        "histogram",
        "Histogram of time spent in PREFILL phase for request.",
    ),
    (
        "vllm:request_decode_time_seconds",
        "histogram",
        "Histogram of time spent in DECODE phase for request.",
    ),
    (
        "vllm:request_time_per_output_token_seconds",
        "histogram",
        "Histogram of time_per_output_token_seconds per request.",
    ),
    (
        "vllm:e2e_request_latency_seconds",
        "histogram",
        "Histogram of e2e request latency in seconds.",
    ),
];

fn help_for(s: &Sample) -> Option<Help<'static>> {
    let n = s.name.as_str();
    HELP.iter().find_map(|&(family, kind, help)| {
        let ours = match kind {
            "counter" => n.strip_prefix(family) == Some("_total"),
            "histogram" => n
                .strip_prefix(family)
                .is_some_and(|r| matches!(r, "_bucket" | "_sum" | "_count")),
            _ => n == family,
        };
        ours.then_some(Help { family, kind, help })
    })
}

impl SimMetrics {
    /// Empty metrics for a server of `model_name` (the `model_name` label).
    pub fn new(model_name: &str) -> SimMetrics {
        SimMetrics {
            labels: vec![
                ("engine".into(), "0".into()),
                ("model_name".into(), model_name.into()),
            ],
            prompt_tokens: 0,
            generation_tokens: 0,
            prefix_cache_queries: 0,
            prefix_cache_hits: 0,
            request_success: 0,
            spec_drafts: 0,
            spec_draft_tokens: 0,
            spec_accepted_tokens: 0,
            spec_accepted_per_pos: Vec::new(),
            ttft: Histogram::new(TTFT_BOUNDS_S),
            queue: Histogram::new(REQUEST_BOUNDS_S),
            prefill: Histogram::new(REQUEST_BOUNDS_S),
            decode: Histogram::new(REQUEST_BOUNDS_S),
            tpot: Histogram::new(TPOT_BOUNDS_S),
            e2e: Histogram::new(REQUEST_BOUNDS_S),
            power: None,
            sample_every_s: None,
            next_sample_s: 0.0,
            series: None,
        }
    }

    /// A request was scheduled for the first time after `queue_s` in the waiting queue;
    /// `queried_tokens` of its prompt were looked up in the prefix cache, `hit_tokens` found.
    pub fn admitted(&mut self, queue_s: f64, queried_tokens: u64, hit_tokens: u64) {
        self.queue.observe(queue_s);
        self.prefix_cache_queries += queried_tokens;
        self.prefix_cache_hits += hit_tokens;
    }

    /// A request's first token was output `ttft_s` after it reached the API server,
    /// `prefill_s` after it was first scheduled.
    pub fn first_token(&mut self, prompt_tokens: u64, ttft_s: f64, prefill_s: f64) {
        self.prompt_tokens += prompt_tokens;
        self.ttft.observe(ttft_s);
        self.prefill.observe(prefill_s);
    }

    /// A request finished `e2e_s` after it reached the API server, `decode_s` after its
    /// first token, with `output_tokens` tokens.
    pub fn finished(&mut self, e2e_s: f64, decode_s: f64, output_tokens: u64) {
        self.request_success += 1;
        self.e2e.observe(e2e_s);
        self.decode.observe(decode_s);
        // vLLM's server-side TPOT is the client-side definition on the decode span.
        if let Some(tpot_s) = crate::metrics::request::vllm_tpot_s(0.0, decode_s, output_tokens) {
            self.tpot.observe(tpot_s);
        }
    }

    /// A draft of `k` tokens had its first `accepted` accepted: counts them per position.
    pub fn accepted_at_positions(&mut self, k: u64, accepted: u64) {
        let k = usize::try_from(k).unwrap_or(usize::MAX).min(64);
        if self.spec_accepted_per_pos.len() < k {
            self.spec_accepted_per_pos.resize(k, 0);
        }
        for n in self
            .spec_accepted_per_pos
            .iter_mut()
            .take(accepted as usize)
        {
            *n += 1;
        }
    }

    /// Every sample `/metrics` shows with the scheduler in state `g`, in vLLM's order.
    pub fn samples(&self, g: &Gauges) -> Vec<Sample> {
        let l = &self.labels;
        let one = |name: &str, value: f64| Sample {
            name: name.into(),
            labels: l.clone(),
            value,
        };
        let mut out = vec![
            one("vllm:num_requests_running", g.running as f64),
            one("vllm:num_requests_waiting", g.waiting as f64),
            one("vllm:kv_cache_usage_perc", g.kv_cache_usage),
            one("vllm:num_preemptions_total", g.preemptions as f64),
            one("vllm:prompt_tokens_total", self.prompt_tokens as f64),
            one(
                "vllm:generation_tokens_total",
                self.generation_tokens as f64,
            ),
            one(
                "vllm:prefix_cache_queries_total",
                self.prefix_cache_queries as f64,
            ),
            one(
                "vllm:prefix_cache_hits_total",
                self.prefix_cache_hits as f64,
            ),
        ];
        let mut success = l.clone();
        success.push(("finished_reason".into(), "length".into()));
        out.push(Sample {
            name: "vllm:request_success_total".into(),
            labels: success,
            value: self.request_success as f64,
        });
        out.push(one(
            "vllm:spec_decode_num_drafts_total",
            self.spec_drafts as f64,
        ));
        out.push(one(
            "vllm:spec_decode_num_draft_tokens_total",
            self.spec_draft_tokens as f64,
        ));
        out.push(one(
            "vllm:spec_decode_num_accepted_tokens_total",
            self.spec_accepted_tokens as f64,
        ));
        for (pos, n) in self.spec_accepted_per_pos.iter().enumerate() {
            let mut labels = l.clone();
            labels.push(("position".into(), pos.to_string()));
            out.push(Sample {
                name: "vllm:spec_decode_num_accepted_tokens_per_pos_total".into(),
                labels,
                value: *n as f64,
            });
        }
        for (family, h) in [
            ("vllm:time_to_first_token_seconds", &self.ttft),
            ("vllm:request_queue_time_seconds", &self.queue),
            ("vllm:request_prefill_time_seconds", &self.prefill),
            ("vllm:request_decode_time_seconds", &self.decode),
            ("vllm:request_time_per_output_token_seconds", &self.tpot),
            ("vllm:e2e_request_latency_seconds", &self.e2e),
        ] {
            h.samples(family, l, &mut out);
        }
        out
    }

    /// The `/metrics` text (with `# HELP` and `# TYPE` lines) in state `g`.
    pub fn render(&self, g: &Gauges) -> String {
        prom::write_with_help(&self.samples(g), help_for)
    }

    /// [`SimMetrics::samples`] at virtual time `now_s`, followed by the GPU's DCGM samples
    /// when the meter is on (utilization over the `since_s`..`now_s` window).
    pub fn samples_at(&self, g: &Gauges, now_s: f64, since_s: f64) -> Vec<Sample> {
        let mut out = self.samples(g);
        if let Some(p) = &self.power {
            out.extend(p.samples(now_s, since_s));
        }
        out
    }

    /// The `/metrics` text at virtual time `now_s`: [`SimMetrics::render`] plus the DCGM
    /// samples when the meter is on (utilization over the last second).
    pub fn render_at(&self, g: &Gauges, now_s: f64) -> String {
        prom::write_with_help(
            &self.samples_at(g, now_s, (now_s - DCGM_WINDOW_S).max(0.0)),
            |s| {
                help_for(s).or_else(|| {
                    DCGM_HELP
                        .iter()
                        .find(|(family, _, _)| *family == s.name)
                        .map(|&(family, kind, help)| Help { family, kind, help })
                })
            },
        )
    }

    /// Starts sampling every `interval_s` virtual seconds from time 0.
    pub fn sample_every(&mut self, interval_s: f64) {
        self.sample_every_s = Some(interval_s);
        self.next_sample_s = 0.0;
        self.series = Some(ServerSeries::new("h200-sim", interval_s));
    }

    /// Takes the samples due by `now_s` (the scheduler has been in state `g` since the last
    /// call). Does nothing unless [`SimMetrics::sample_every`] was called.
    pub fn sample_to(&mut self, now_s: f64, g: &Gauges) {
        let Some(every) = self.sample_every_s.filter(|e| *e > 0.0) else {
            return;
        };
        while self.next_sample_s <= now_s {
            let at = self.next_sample_s;
            let samples = self.samples_at(g, at, (at - every).max(0.0));
            if let Some(s) = &mut self.series {
                s.push(at, samples);
            }
            self.next_sample_s += every;
        }
    }

    /// The samples taken so far plus one at `now_s` in state `g`; `None` without sampling.
    pub fn series(&self, now_s: f64, g: &Gauges) -> Option<ServerSeries> {
        let mut m = self.clone();
        m.sample_to(now_s, g);
        let mut s = m.series?;
        if s.times_s.last().is_none_or(|&t| t < now_s) {
            let since = s.times_s.last().copied().unwrap_or(0.0);
            s.push(now_s, self.samples_at(g, now_s, since));
        }
        Some(s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn histograms_are_cumulative_and_render_as_vllm_does() {
        let mut m = SimMetrics::new("Qwen/Qwen3.5-35B-A3B");
        m.ttft.observe(0.003);
        m.ttft.observe(3.0);
        m.ttft.observe(5000.0);
        m.generation_tokens = 7;
        let text = m.render(&Gauges {
            running: 2,
            waiting: 1,
            kv_cache_usage: 0.5,
            preemptions: 3,
        });
        assert!(text.contains("# TYPE vllm:num_preemptions counter\nvllm:num_preemptions_total{engine=\"0\",model_name=\"Qwen/Qwen3.5-35B-A3B\"} 3.0\n"), "{text}");
        assert!(text.contains("# TYPE vllm:time_to_first_token_seconds histogram\n"));
        let s = prom::parse(&text).unwrap();
        let bucket = |le: &str| {
            s.iter()
                .find(|x| {
                    x.name == "vllm:time_to_first_token_seconds_bucket" && x.label("le") == Some(le)
                })
                .unwrap()
                .value
        };
        assert_eq!(
            (
                bucket("0.001"),
                bucket("0.005"),
                bucket("5.0"),
                bucket("+Inf")
            ),
            (0.0, 1.0, 2.0, 3.0)
        );
        let count = s
            .iter()
            .find(|x| x.name == "vllm:time_to_first_token_seconds_count")
            .unwrap();
        assert_eq!(count.value, 3.0);
        let sum = s
            .iter()
            .find(|x| x.name == "vllm:time_to_first_token_seconds_sum")
            .unwrap();
        assert_eq!(sum.value, 5003.003);
        assert_eq!(samples_named(&s, "vllm:kv_cache_usage_perc"), 0.5);
    }

    fn samples_named(s: &[Sample], name: &str) -> f64 {
        s.iter().find(|x| x.name == name).unwrap().value
    }

    #[test]
    fn sampling_takes_every_due_instant_once() {
        let mut m = SimMetrics::new("m");
        m.sample_every(1.0);
        let g = Gauges {
            running: 4,
            ..Gauges::default()
        };
        m.sample_to(0.5, &g);
        m.sample_to(3.2, &Gauges { running: 8, ..g });
        let s = m.series(3.5, &g).unwrap();
        assert_eq!(s.times_s, vec![0.0, 1.0, 2.0, 3.0, 3.5]);
        let running = s.known(crate::observe::series::Known::Running).unwrap();
        assert_eq!(
            running,
            vec![Some(4.0), Some(8.0), Some(8.0), Some(8.0), Some(4.0)]
        );
    }
}
