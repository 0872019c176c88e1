//! A run's server metrics over time ([`ServerSeries`]: one column per series, one row per
//! scrape, every metric kept, known or not) and what they say about the run
//! ([`ServerSummary`]: peak and mean KV-cache usage, mean running and waiting requests,
//! preemptions, prefix-cache hit rate, speculative-decoding acceptance, server-side token
//! throughput, the mean of each latency histogram).
//!
//! The metric names of vLLM (V1 engine, 0.10 and later) and SGLang are known ([`Known`]);
//! where both an old and a new vLLM name exist (`vllm:gpu_cache_usage_perc` before 0.10,
//! `vllm:kv_cache_usage_perc` after), either is read. Series of the same metric with
//! different labels (several engines, several models) are added up.
//!
//! ```
//! use servebench::observe::prom::Sample;
//! use servebench::observe::ServerSeries;
//!
//! let mut s = ServerSeries::new("http://127.0.0.1:8000", 1.0);
//! for (t, running, preempted, kv) in [(0.0, 0.0, 5.0, 0.0), (1.0, 8.0, 7.0, 0.5), (2.0, 4.0, 9.0, 0.25)] {
//!     s.push(t, vec![
//!         Sample::new("vllm:num_requests_running", running),
//!         Sample::new("vllm:num_preemptions_total", preempted),
//!         Sample::new("vllm:kv_cache_usage_perc", kv),
//!     ]);
//! }
//! let sum = s.summary();
//! assert_eq!(sum.preemptions, Some(4.0));
//! assert_eq!(sum.kv_cache_usage_peak, Some(0.5));
//! // Time-weighted: 0 for the first second, 8 for the second.
//! assert_eq!(sum.running_mean, Some(4.0));
//! ```

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::prom::Sample;

/// One scraped value; JSON has no NaN or infinity, so those are written as the strings
/// `"NaN"`, `"+Inf"`, `"-Inf"` (Prometheus' spellings) and read back exactly.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Value(pub f64);

impl Serialize for Value {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        if self.0.is_finite() {
            s.serialize_f64(self.0)
        } else {
            s.serialize_str(&super::prom::format_value(self.0))
        }
    }
}

impl<'de> Deserialize<'de> for Value {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Raw {
            N(f64),
            S(String),
        }
        match Raw::deserialize(d)? {
            Raw::N(v) => Ok(Value(v)),
            Raw::S(s) => match s.as_str() {
                "NaN" | "+Inf" | "-Inf" => {
                    Ok(Value(super::prom::parse_value(&s).unwrap_or(f64::NAN)))
                }
                other => Err(serde::de::Error::custom(format!(
                    "expected a number, \"NaN\", \"+Inf\" or \"-Inf\", got {other:?}"
                ))),
            },
        }
    }
}

/// The gauge of server seconds per wall-clock second that the example server exports
/// (its `--speed`); see [`ServerSeries::clock_speed`].
pub const CLOCK_SPEED: &str = "servebench_clock_speed";

/// Server metrics scraped during a run. `times_s[i]` is when scrape `i` was taken (seconds
/// from the run's start, the clock of the records); `series[key][i]` is that series' value
/// then (`null`: the series was absent from that scrape).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ServerSeries {
    /// What was scraped: a `/metrics` URL or `h200-sim`.
    pub target: String,
    /// The scrape interval asked for, seconds.
    pub interval_s: f64,
    /// Scrape times, seconds from the run's start.
    pub times_s: Vec<f64>,
    /// Values per series key (`name{label="v",…}`, see [`Sample::key`]), one per scrape.
    pub series: BTreeMap<String, Vec<Option<Value>>>,
    /// What went wrong while scraping (a server without `/metrics`, a failed scrape, a
    /// malformed line), in order. Scraping problems never fail a run.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
}

/// How much a counter grew over its values in order: the sum of its increases; a drop is a
/// reset (a restarted server), after which the counter counts from zero again.
pub fn counter_increase(values: impl IntoIterator<Item = f64>) -> f64 {
    let mut last: Option<f64> = None;
    let mut total = 0.0;
    for x in values {
        if let Some(l) = last {
            total += if x >= l { x - l } else { x };
        }
        last = Some(x);
    }
    total
}

/// The canonical quantities servebench reads from a server's metrics.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Known {
    /// Requests in the running batch (gauge).
    Running,
    /// Requests waiting to be scheduled (gauge).
    Waiting,
    /// Fraction of the KV cache in use, 0–1 (gauge).
    KvCacheUsage,
    /// Preemptions so far (counter).
    Preemptions,
    /// Prompt tokens looked up in the prefix cache (counter).
    PrefixCacheQueries,
    /// Of those, tokens found cached (counter).
    PrefixCacheHits,
    /// Prefix-cache hit rate, 0–1, as a gauge (SGLang).
    PrefixCacheHitRate,
    /// Prompt tokens processed (counter).
    PromptTokens,
    /// Tokens generated (counter).
    GenerationTokens,
    /// Speculative-decoding draft tokens proposed (counter).
    SpecDraftTokens,
    /// Of those, accepted (counter).
    SpecAcceptedTokens,
    /// Speculative-decoding drafts (counter).
    SpecDrafts,
}

impl Known {
    /// The metric names that carry this quantity, vLLM's first.
    pub fn names(self) -> &'static [&'static str] {
        match self {
            Known::Running => &["vllm:num_requests_running", "sglang:num_running_reqs"],
            Known::Waiting => &["vllm:num_requests_waiting", "sglang:num_queue_reqs"],
            Known::KvCacheUsage => &[
                "vllm:kv_cache_usage_perc",
                "vllm:gpu_cache_usage_perc",
                "sglang:token_usage",
            ],
            Known::Preemptions => &["vllm:num_preemptions_total"],
            Known::PrefixCacheQueries => &["vllm:prefix_cache_queries_total"],
            Known::PrefixCacheHits => &["vllm:prefix_cache_hits_total"],
            Known::PrefixCacheHitRate => &["sglang:cache_hit_rate"],
            Known::PromptTokens => &["vllm:prompt_tokens_total", "sglang:prompt_tokens_total"],
            Known::GenerationTokens => &[
                "vllm:generation_tokens_total",
                "sglang:generation_tokens_total",
            ],
            Known::SpecDraftTokens => &["vllm:spec_decode_num_draft_tokens_total"],
            Known::SpecAcceptedTokens => &["vllm:spec_decode_num_accepted_tokens_total"],
            Known::SpecDrafts => &["vllm:spec_decode_num_drafts_total"],
        }
    }
}

/// Latency histograms whose run mean the summary reports (vLLM's names, then SGLang's).
pub const KNOWN_HISTOGRAMS: [&str; 9] = [
    "vllm:time_to_first_token_seconds",
    "vllm:request_queue_time_seconds",
    "vllm:request_prefill_time_seconds",
    "vllm:request_decode_time_seconds",
    "vllm:request_time_per_output_token_seconds",
    "vllm:inter_token_latency_seconds",
    "vllm:e2e_request_latency_seconds",
    "sglang:time_to_first_token_seconds",
    "sglang:e2e_request_latency_seconds",
];

/// What a run's server metrics say, over the whole scraped span. `None`: the server did not
/// export the metric (or fewer than two scrapes for a rate).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ServerSummary {
    /// Scrapes taken.
    pub scrapes: usize,
    /// Seconds between the first and the last scrape.
    pub span_s: f64,
    /// Highest KV-cache usage seen, 0–1.
    pub kv_cache_usage_peak: Option<f64>,
    /// Time-weighted mean KV-cache usage, 0–1.
    pub kv_cache_usage_mean: Option<f64>,
    /// Time-weighted mean of running requests.
    pub running_mean: Option<f64>,
    /// Time-weighted mean of waiting requests.
    pub waiting_mean: Option<f64>,
    /// Preemptions during the span.
    pub preemptions: Option<f64>,
    /// Prompt tokens looked up in the prefix cache during the span.
    pub prefix_cache_queries_tokens: Option<f64>,
    /// Of those, found cached.
    pub prefix_cache_hits_tokens: Option<f64>,
    /// Hits ÷ queries over the span (or SGLang's gauge, time-weighted).
    pub prefix_cache_hit_rate: Option<f64>,
    /// Accepted ÷ proposed draft tokens over the span.
    pub spec_decode_acceptance_rate: Option<f64>,
    /// Prompt tokens processed per second of the span.
    pub prompt_tokens_per_s: Option<f64>,
    /// Tokens generated per second of the span.
    pub generation_tokens_per_s: Option<f64>,
    /// Mean of each known latency histogram over the span (Δsum ÷ Δcount), seconds.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub histogram_means_s: BTreeMap<String, f64>,
}

impl ServerSeries {
    /// An empty series for `target`, scraped every `interval_s`.
    pub fn new(target: impl Into<String>, interval_s: f64) -> ServerSeries {
        ServerSeries {
            target: target.into(),
            interval_s,
            times_s: Vec::new(),
            series: BTreeMap::new(),
            notes: Vec::new(),
        }
    }

    /// Adds a scrape taken at `at_s`. A series first seen now is absent (`None`) before.
    pub fn push(&mut self, at_s: f64, samples: Vec<Sample>) {
        let row = self.times_s.len();
        self.times_s.push(at_s);
        for s in samples {
            let col = self
                .series
                .entry(s.key())
                .or_insert_with(|| vec![None; row]);
            // A key repeated within one scrape keeps its last value.
            col.resize(row, None);
            col.push(Some(Value(s.value)));
        }
        for col in self.series.values_mut() {
            col.resize(row + 1, None);
        }
    }

    /// Number of scrapes.
    pub fn len(&self) -> usize {
        self.times_s.len()
    }

    /// Whether no scrape was stored.
    pub fn is_empty(&self) -> bool {
        self.times_s.is_empty()
    }

    /// The series whose metric name is `name` (any labels), with their keys.
    pub fn family<'a>(
        &'a self,
        name: &'a str,
    ) -> impl Iterator<Item = (&'a str, &'a [Option<Value>])> + 'a {
        self.series.iter().filter_map(move |(k, v)| {
            let metric = k.split('{').next().unwrap_or(k);
            (metric == name).then_some((k.as_str(), v.as_slice()))
        })
    }

    /// Per scrape, the sum over label sets of the first of `names` the server exports
    /// (`None` at a scrape where none of its series has a value); `None` when no name is
    /// exported at all.
    pub fn metric(&self, names: &[&str]) -> Option<Vec<Option<f64>>> {
        names.iter().find_map(|name| {
            let cols: Vec<_> = self.family(name).map(|(_, v)| v).collect();
            (!cols.is_empty()).then(|| {
                (0..self.len())
                    .map(|i| {
                        let vals: Vec<f64> =
                            cols.iter().filter_map(|c| c[i].map(|v| v.0)).collect();
                        (!vals.is_empty()).then(|| vals.iter().sum())
                    })
                    .collect()
            })
        })
    }

    /// [`ServerSeries::metric`] of a known quantity.
    pub fn known(&self, k: Known) -> Option<Vec<Option<f64>>> {
        self.metric(k.names())
    }

    /// How much a counter grew over the span: the sum of its increases between consecutive
    /// scrapes; a drop is a reset (a restarted server), after which the counter counts from
    /// zero again.
    pub fn increase(&self, names: &[&str]) -> Option<f64> {
        Some(counter_increase(self.metric(names)?.into_iter().flatten()))
    }

    /// [`ServerSeries::increase`] of one series, by its key (`name{label="v",…}`).
    pub fn key_increase(&self, key: &str) -> Option<f64> {
        let col = self.series.get(key)?;
        Some(counter_increase(col.iter().flatten().map(|v| v.0)))
    }

    /// Time-weighted mean of a gauge between the first and the last scrape (each value
    /// holds until the next scrape).
    pub fn time_mean(&self, names: &[&str]) -> Option<f64> {
        time_weighted_mean(&self.times_s, &self.metric(names)?)
    }

    /// The highest value a gauge took.
    pub fn peak(&self, names: &[&str]) -> Option<f64> {
        self.metric(names)?.into_iter().flatten().reduce(f64::max)
    }

    /// The mean of histogram `family` over the span (its `_sum` increase ÷ its `_count`
    /// increase); `None` without observations.
    pub fn histogram_mean(&self, family: &str) -> Option<f64> {
        let sum = self.increase(&[&format!("{family}_sum")])?;
        let count = self.increase(&[&format!("{family}_count")])?;
        (count > 0.0).then(|| sum / count)
    }

    /// Server seconds per wall-clock second, as the server says (the gauge
    /// [`CLOCK_SPEED`], which the example server at `--speed X` exports); 1 when it says
    /// nothing (a real server's clock is the wall clock).
    pub fn clock_speed(&self) -> f64 {
        self.peak(&[CLOCK_SPEED])
            .filter(|s| s.is_finite() && *s > 0.0)
            .unwrap_or(1.0)
    }

    /// Seconds between the first and the last scrape.
    pub fn span_s(&self) -> f64 {
        match (self.times_s.first(), self.times_s.last()) {
            (Some(a), Some(b)) => b - a,
            _ => 0.0,
        }
    }

    /// The run's summary; see [`ServerSummary`].
    pub fn summary(&self) -> ServerSummary {
        let span = self.span_s();
        let per_s = |k: Known| {
            self.increase(k.names())
                .filter(|_| span > 0.0)
                .map(|x| x / span)
        };
        let queries = self.increase(Known::PrefixCacheQueries.names());
        let hits = self.increase(Known::PrefixCacheHits.names());
        let hit_rate = match (queries, hits) {
            (Some(q), Some(h)) if q > 0.0 => Some(h / q),
            _ => self.time_mean(Known::PrefixCacheHitRate.names()),
        };
        let drafted = self.increase(Known::SpecDraftTokens.names());
        let accepted = self.increase(Known::SpecAcceptedTokens.names());
        let acceptance = match (drafted, accepted) {
            (Some(d), Some(a)) if d > 0.0 => Some(a / d),
            _ => None,
        };
        ServerSummary {
            scrapes: self.len(),
            span_s: span,
            kv_cache_usage_peak: self.peak(Known::KvCacheUsage.names()),
            kv_cache_usage_mean: self.time_mean(Known::KvCacheUsage.names()),
            running_mean: self.time_mean(Known::Running.names()),
            waiting_mean: self.time_mean(Known::Waiting.names()),
            preemptions: self.increase(Known::Preemptions.names()),
            prefix_cache_queries_tokens: queries,
            prefix_cache_hits_tokens: hits,
            prefix_cache_hit_rate: hit_rate,
            spec_decode_acceptance_rate: acceptance,
            prompt_tokens_per_s: per_s(Known::PromptTokens),
            generation_tokens_per_s: per_s(Known::GenerationTokens),
            histogram_means_s: KNOWN_HISTOGRAMS
                .iter()
                .filter_map(|h| Some((h.to_string(), self.histogram_mean(h)?)))
                .collect(),
        }
    }
}

/// The time-weighted mean of one gauge's `values` scraped at `times_s`: each value holds
/// until the next scrape (the last one weighs nothing); with one scrape, its value.
pub(crate) fn time_weighted_mean(times_s: &[f64], values: &[Option<f64>]) -> Option<f64> {
    let (mut num, mut den) = (0.0, 0.0);
    for (x, t) in values.iter().zip(times_s.windows(2)) {
        if let Some(x) = x {
            let dt = t[1] - t[0];
            num += x * dt;
            den += dt;
        }
    }
    if den > 0.0 {
        Some(num / den)
    } else {
        values.iter().flatten().next().copied()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn labelled(name: &str, engine: &str, v: f64) -> Sample {
        Sample {
            name: name.into(),
            labels: vec![("engine".into(), engine.into())],
            value: v,
        }
    }

    #[test]
    fn engines_add_up_and_counters_survive_a_reset() {
        let mut s = ServerSeries::new("x", 1.0);
        s.push(
            0.0,
            vec![
                labelled("vllm:generation_tokens_total", "0", 100.0),
                labelled("vllm:generation_tokens_total", "1", 50.0),
            ],
        );
        s.push(
            1.0,
            vec![
                labelled("vllm:generation_tokens_total", "0", 300.0),
                labelled("vllm:generation_tokens_total", "1", 150.0),
            ],
        );
        // Engine 1 restarted: 150 -> 20 means 20 new tokens.
        s.push(
            2.0,
            vec![
                labelled("vllm:generation_tokens_total", "0", 400.0),
                labelled("vllm:generation_tokens_total", "1", 20.0),
            ],
        );
        // Sums per scrape: 150, 450, 420 -> +300, then a drop (reset) counted as 420.
        assert_eq!(s.increase(Known::GenerationTokens.names()), Some(720.0));
        assert_eq!(s.summary().generation_tokens_per_s, Some(360.0));
    }

    #[test]
    fn absent_series_stay_absent_and_old_names_are_read() {
        let mut s = ServerSeries::new("x", 1.0);
        s.push(0.0, vec![Sample::new("vllm:gpu_cache_usage_perc", 0.2)]);
        s.push(1.0, vec![Sample::new("other", f64::NAN)]);
        s.push(3.0, vec![Sample::new("vllm:gpu_cache_usage_perc", 0.8)]);
        let other = &s.series["other"];
        assert_eq!((other.len(), other[0], other[2]), (3, None, None));
        assert!(other[1].is_some_and(|v| v.0.is_nan()));
        assert_eq!(s.peak(Known::KvCacheUsage.names()), Some(0.8));
        // 0.2 held for 1 s, the gap (1–3 s) is not counted.
        assert_eq!(s.time_mean(Known::KvCacheUsage.names()), Some(0.2));
        assert_eq!(s.summary().prefix_cache_hit_rate, None);
        // NaN survives JSON.
        let json = serde_json::to_string(&s).unwrap();
        assert!(json.contains("\"NaN\""), "{json}");
        let back: ServerSeries = serde_json::from_str(&json).unwrap();
        assert!(back.series["other"][1].unwrap().0.is_nan());
        assert_eq!(back.times_s, s.times_s);
        let bad = json.replace("\"NaN\"", "\"nan?\"");
        assert!(serde_json::from_str::<ServerSeries>(&bad)
            .unwrap_err()
            .to_string()
            .contains("nan?"));
    }

    #[test]
    fn histogram_means_come_from_sum_and_count_increases() {
        let mut s = ServerSeries::new("x", 1.0);
        let h = "vllm:request_queue_time_seconds";
        s.push(
            0.0,
            vec![
                Sample::new(format!("{h}_sum"), 10.0),
                Sample::new(format!("{h}_count"), 4.0),
            ],
        );
        s.push(
            1.0,
            vec![
                Sample::new(format!("{h}_sum"), 16.0),
                Sample::new(format!("{h}_count"), 7.0),
            ],
        );
        assert_eq!(s.histogram_mean(h), Some(2.0));
        assert_eq!(s.summary().histogram_means_s[h], 2.0);
    }
}
