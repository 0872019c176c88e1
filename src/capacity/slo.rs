//! The SLO a capacity search holds a server to ([`SloTarget`], parsed from `--slo` text such
//! as `ttft:p99<=500ms tpot:p99<=50ms goodput>=0.99`) and how one probe is judged against it
//! ([`SloTarget::check`]): each condition's observed value over its limit, the worst ratio
//! deciding. Latencies follow vLLM's definitions ([`crate::metrics`] computes them); a
//! request is "good" for `goodput>=G` as vLLM's `--goodput` counts it
//! ([`crate::metrics::Slo`]).

use serde::{Deserialize, Serialize};

use crate::metrics::{compute, MetricsOptions, Slo};
use crate::record::RequestRecord;
use crate::result::{BenchmarkResult, Convention, SearchKind, Summary};

/// The latency an SLO condition bounds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum SloMetric {
    /// Time to first token.
    Ttft,
    /// Time per output token (vLLM's: excludes the first token).
    Tpot,
    /// Inter-token latency.
    Itl,
    /// End-to-end request latency.
    E2el,
}

impl SloMetric {
    /// The key as `--slo` spells it (`ttft`).
    pub fn key(self) -> &'static str {
        match self {
            SloMetric::Ttft => "ttft",
            SloMetric::Tpot => "tpot",
            SloMetric::Itl => "itl",
            SloMetric::E2el => "e2el",
        }
    }

    fn summary(self, r: &BenchmarkResult) -> Option<&Summary> {
        match self {
            SloMetric::Ttft => r.ttft.as_ref(),
            SloMetric::Tpot => r.tpot.as_ref(),
            SloMetric::Itl => r.itl.as_ref(),
            SloMetric::E2el => r.e2el.as_ref(),
        }
    }
}

/// Which statistic of a latency's distribution a condition bounds.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum SloStatistic {
    /// The mean.
    Mean,
    /// A percentile, in percent (`99.0` for `p99`; `median` is `p50`).
    Percentile(f64),
}

/// One latency condition: `METRIC:STAT<=LIMIT`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct SloCondition {
    /// The latency.
    pub metric: SloMetric,
    /// Its statistic.
    pub statistic: SloStatistic,
    /// The inclusive upper limit, ms.
    pub limit_ms: f64,
}

/// A service-level objective for a capacity search: latency conditions and optionally a
/// goodput share. It holds in a run when every condition holds (inclusive limits).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SloTarget {
    /// The latency conditions, in the order given.
    pub conditions: Vec<SloCondition>,
    /// `goodput>=G`: at least this share (0 < G ≤ 1) of the requests sent must succeed
    /// within the per-request limits ([`SloTarget::per_request`]).
    pub goodput_share: Option<f64>,
}

/// `--slo` text that does not read; every variant names the token at fault.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum SloTargetError {
    /// Nothing given.
    #[error("no SLO given (expected e.g. `ttft:p99<=500ms tpot:p99<=50ms goodput>=0.99`)")]
    Empty,
    /// A token of neither form.
    #[error("`{token}`: not an SLO condition (expected METRIC:STAT<=LIMIT such as `ttft:p99<=500ms`, or `goodput>=0.99`)")]
    Syntax {
        /// The token.
        token: String,
    },
    /// A latency other than ttft, tpot, itl, e2el.
    #[error("`{token}`: unknown latency `{metric}` (valid: ttft, tpot, itl, e2el)")]
    UnknownMetric {
        /// The token.
        token: String,
        /// The latency as typed.
        metric: String,
    },
    /// A statistic other than `mean`, `median` or `pNN`.
    #[error("`{token}`: unknown statistic `{statistic}` (valid: mean, median, p50, p90, p99, p99.9, … any pN with 0 < N <= 100)")]
    UnknownStatistic {
        /// The token.
        token: String,
        /// The statistic as typed.
        statistic: String,
    },
    /// A limit that is not a positive finite number.
    #[error("`{token}`: `{value}` is not a positive number")]
    BadLimit {
        /// The token.
        token: String,
        /// The value as typed.
        value: String,
    },
    /// A latency limit without `ms` or `s`.
    #[error("`{token}`: give the limit's unit (`500ms` or `0.5s`)")]
    MissingUnit {
        /// The token.
        token: String,
    },
    /// A unit other than `ms` or `s`.
    #[error("`{token}`: unknown unit `{unit}` (valid: ms, s)")]
    UnknownUnit {
        /// The token.
        token: String,
        /// The unit as typed.
        unit: String,
    },
    /// A goodput share outside (0, 1] (or (0 %, 100 %]).
    #[error("`{token}`: the goodput share must be in (0, 1] (or 0–100 %)")]
    BadShare {
        /// The token.
        token: String,
    },
    /// The same condition twice.
    #[error("`{token}`: given twice")]
    Duplicate {
        /// The token.
        token: String,
    },
    /// `goodput>=G` with no ttft, tpot or e2el limit to count good requests by.
    #[error("`{token}`: goodput needs a ttft, tpot or e2el limit to count good requests by")]
    GoodputWithoutLimits {
        /// The token.
        token: String,
    },
}

fn number(token: &str, s: &str) -> Result<f64, SloTargetError> {
    s.parse::<f64>()
        .ok()
        .filter(|v| v.is_finite() && *v > 0.0)
        .ok_or_else(|| SloTargetError::BadLimit {
            token: token.to_string(),
            value: s.to_string(),
        })
}

fn condition(token: &str) -> Result<SloCondition, SloTargetError> {
    let syntax = || SloTargetError::Syntax {
        token: token.to_string(),
    };
    let (lhs, limit) = token.split_once("<=").ok_or_else(syntax)?;
    let (metric, statistic) = lhs.split_once(':').ok_or_else(syntax)?;
    let metric = match metric {
        "ttft" => SloMetric::Ttft,
        "tpot" => SloMetric::Tpot,
        "itl" => SloMetric::Itl,
        "e2el" => SloMetric::E2el,
        other => {
            return Err(SloTargetError::UnknownMetric {
                token: token.to_string(),
                metric: other.to_string(),
            })
        }
    };
    let bad_stat = || SloTargetError::UnknownStatistic {
        token: token.to_string(),
        statistic: statistic.to_string(),
    };
    let statistic = match statistic {
        "mean" => SloStatistic::Mean,
        "median" => SloStatistic::Percentile(50.0),
        p => {
            let v: f64 = p
                .strip_prefix('p')
                .and_then(|n| n.parse().ok())
                .ok_or_else(bad_stat)?;
            if !(v > 0.0 && v <= 100.0) {
                return Err(bad_stat());
            }
            SloStatistic::Percentile(v)
        }
    };
    let split = limit
        .find(|c: char| c.is_ascii_alphabetic())
        .unwrap_or(limit.len());
    let (value, unit) = limit.split_at(split);
    let v = number(token, value)?;
    let limit_ms = match unit {
        "ms" => v,
        "s" => v * 1000.0,
        "" => {
            return Err(SloTargetError::MissingUnit {
                token: token.to_string(),
            })
        }
        other => {
            return Err(SloTargetError::UnknownUnit {
                token: token.to_string(),
                unit: other.to_string(),
            })
        }
    };
    Ok(SloCondition {
        metric,
        statistic,
        limit_ms,
    })
}

fn share(token: &str, value: &str) -> Result<f64, SloTargetError> {
    let (v, percent) = match value.strip_suffix('%') {
        Some(v) => (v, true),
        None => (value, false),
    };
    let bad = || SloTargetError::BadShare {
        token: token.to_string(),
    };
    let v: f64 = v.parse().map_err(|_| bad())?;
    let v = if percent { v / 100.0 } else { v };
    if v.is_finite() && v > 0.0 && v <= 1.0 {
        Ok(v)
    } else {
        Err(bad())
    }
}

impl std::str::FromStr for SloTarget {
    type Err = SloTargetError;

    /// Conditions separated by spaces or commas: `METRIC:STAT<=LIMIT` with METRIC one of
    /// `ttft tpot itl e2el`, STAT `mean`, `median` or `pN`, LIMIT a number with `ms` or
    /// `s`; and at most one `goodput>=G` (a share, `0.99` or `99%`).
    ///
    /// ```
    /// use servebench::capacity::SloTarget;
    /// let slo: SloTarget = "ttft:p99<=500ms tpot:p99<=0.05s goodput>=99%".parse().unwrap();
    /// assert_eq!(slo.conditions.len(), 2);
    /// assert_eq!(slo.conditions[1].limit_ms, 50.0);
    /// assert_eq!(slo.goodput_share, Some(0.99));
    /// assert_eq!(slo.to_string(), "ttft:p99<=500ms tpot:p99<=50ms goodput>=0.99");
    /// let err = "ttft:p99<=500ms tpot:p99<=50".parse::<SloTarget>().unwrap_err();
    /// assert!(err.to_string().starts_with("`tpot:p99<=50`"), "{err}");
    /// ```
    fn from_str(s: &str) -> Result<SloTarget, SloTargetError> {
        let mut out = SloTarget {
            conditions: Vec::new(),
            goodput_share: None,
        };
        let mut goodput_token = None;
        for token in s.split(|c: char| c.is_whitespace() || c == ',') {
            if token.is_empty() {
                continue;
            }
            if let Some(value) = token.strip_prefix("goodput>=") {
                if out.goodput_share.is_some() {
                    return Err(SloTargetError::Duplicate {
                        token: token.to_string(),
                    });
                }
                out.goodput_share = Some(share(token, value)?);
                goodput_token = Some(token.to_string());
                continue;
            }
            let c = condition(token)?;
            if out
                .conditions
                .iter()
                .any(|d| d.metric == c.metric && d.statistic == c.statistic)
            {
                return Err(SloTargetError::Duplicate {
                    token: token.to_string(),
                });
            }
            out.conditions.push(c);
        }
        if let Some(token) = goodput_token {
            if out.per_request() == Slo::default() {
                return Err(SloTargetError::GoodputWithoutLimits { token });
            }
        }
        if out.conditions.is_empty() && out.goodput_share.is_none() {
            return Err(SloTargetError::Empty);
        }
        Ok(out)
    }
}

/// The canonical `--slo` text (limits in ms), which parses back to the same target.
impl std::fmt::Display for SloTarget {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut first = true;
        let mut sep = |f: &mut std::fmt::Formatter<'_>| {
            let s = if first { "" } else { " " };
            first = false;
            f.write_str(s)
        };
        for c in &self.conditions {
            sep(f)?;
            let stat = match c.statistic {
                SloStatistic::Mean => "mean".to_string(),
                SloStatistic::Percentile(p) => format!("p{p}"),
            };
            write!(f, "{}:{stat}<={}ms", c.metric.key(), c.limit_ms)?;
        }
        if let Some(g) = self.goodput_share {
            sep(f)?;
            write!(f, "goodput>={g}")?;
        }
        Ok(())
    }
}

/// One condition's figure in a probe.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ConditionCheck {
    /// The condition as `--slo` spells it (`ttft:p99<=500ms`, `goodput>=0.99`).
    pub condition: String,
    /// The observed value: ms for a latency, the good share for goodput; `None` when the
    /// probe has none (no successful request).
    pub observed: Option<f64>,
    /// Observed over limit (for goodput: the share missing over the share allowed to
    /// miss); at most 1 when the condition holds. A missing value counts as
    /// [`MAX_RATIO`].
    pub ratio: f64,
}

/// The largest ratio a check reports (a condition without a value, or goodput with no
/// share allowed to miss and some missing).
pub const MAX_RATIO: f64 = 1e6;

/// A probe judged against the SLO.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SloCheck {
    /// Every condition's figure, in the SLO's order (goodput last).
    pub conditions: Vec<ConditionCheck>,
    /// The worst (largest) ratio: the probe's margin to the SLO.
    pub worst_ratio: f64,
    /// Whether the SLO held (`worst_ratio <= 1`).
    pub held: bool,
}

impl SloTarget {
    /// The per-request limits a request must meet to count as good (vLLM's `--goodput`):
    /// for each of TTFT, TPOT and E2EL, the largest limit any condition sets on it (ITL
    /// has no per-request limit in vLLM's goodput).
    pub fn per_request(&self) -> Slo {
        let mut slo = Slo::default();
        for c in &self.conditions {
            let slot = match c.metric {
                SloMetric::Ttft => &mut slo.ttft_ms,
                SloMetric::Tpot => &mut slo.tpot_ms,
                SloMetric::E2el => &mut slo.e2el_ms,
                SloMetric::Itl => continue,
            };
            *slot = Some(slot.map_or(c.limit_ms, |v: f64| v.max(c.limit_ms)));
        }
        slo
    }

    /// The options the SLO is judged with: vLLM's convention, the SLO's percentiles, and
    /// the per-request limits as goodput when a share is asked for.
    pub fn metrics_options(&self) -> MetricsOptions {
        let mut m = MetricsOptions::new(Convention::Vllm);
        m.percentiles = Vec::new();
        for c in &self.conditions {
            if let SloStatistic::Percentile(p) = c.statistic {
                if !m.percentiles.contains(&p) {
                    m.percentiles.push(p);
                }
            }
        }
        if self.goodput_share.is_some() {
            m.goodput = Some(self.per_request());
        }
        m
    }

    /// Judges one probe's records against the SLO (see the module docs). Requests that
    /// failed count against the goodput share; the latency statistics are over the
    /// successful requests, and a probe with none fails every latency condition.
    pub fn check(&self, records: &[RequestRecord]) -> SloCheck {
        let r = compute(records, self.metrics_options());
        self.check_result(&r)
    }

    /// [`SloTarget::check`] on figures computed with [`SloTarget::metrics_options`].
    pub fn check_result(&self, r: &BenchmarkResult) -> SloCheck {
        let mut conditions = Vec::new();
        let one = |observed: Option<f64>, limit: f64| {
            observed.map_or(MAX_RATIO, |v| (v / limit).clamp(0.0, MAX_RATIO))
        };
        // vLLM reports 0 for the statistics of no request: no success, no value.
        let any = r.successful_requests.unwrap_or(0) > 0;
        for c in &self.conditions {
            let observed = c
                .metric
                .summary(r)
                .filter(|_| any)
                .and_then(|s| match c.statistic {
                    SloStatistic::Mean => s.mean,
                    SloStatistic::Percentile(p) => s.percentile(p),
                });
            let single = SloTarget {
                conditions: vec![*c],
                goodput_share: None,
            };
            conditions.push(ConditionCheck {
                condition: single.to_string(),
                observed,
                ratio: one(observed, c.limit_ms),
            });
        }
        if let Some(g) = self.goodput_share {
            // vLLM's goodput is good requests per second of the run: times the run's
            // duration, the count of good requests (an integer, so rounding is exact).
            let sent = r.successful_requests.unwrap_or(0) + r.failed_requests.unwrap_or(0);
            let good = match (r.request_goodput_per_s, r.duration_s()) {
                (Some(rate), Some(d)) if sent > 0 => Some((rate * d).round() / sent as f64),
                _ => None,
            };
            let ratio = match good {
                None => MAX_RATIO,
                Some(s) if g >= 1.0 => {
                    if s >= 1.0 {
                        0.0
                    } else {
                        MAX_RATIO
                    }
                }
                Some(s) => ((1.0 - s).max(0.0) / (1.0 - g)).clamp(0.0, MAX_RATIO),
            };
            conditions.push(ConditionCheck {
                condition: format!("goodput>={g}"),
                observed: good,
                ratio,
            });
        }
        let worst_ratio = conditions.iter().map(|c| c.ratio).fold(0.0, f64::max);
        SloCheck {
            conditions,
            worst_ratio,
            held: worst_ratio <= 1.0,
        }
    }

    /// [`SloTarget::check`] of a capacity probe at a `kind` of load that was to send
    /// `planned` requests: for a rate, the SLO and the load sustained
    /// ([`super::sustained`]) as a condition [`SUSTAINED_CONDITION`] whose observed value
    /// is the share carried and whose ratio is [`super::Sustained::ratio`] (the share
    /// missing over the share allowed to miss, or the latencies' growth over the growth
    /// allowed; [`MAX_RATIO`] when the steady window held too few requests): a probe that
    /// did not carry its load never holds.
    pub fn check_probe(
        &self,
        records: &[RequestRecord],
        kind: SearchKind,
        planned: Option<u64>,
    ) -> SloCheck {
        let mut check = self.check(records);
        if kind != SearchKind::Rate {
            return check;
        }
        let s = super::sustained(records, planned);
        let ratio = s.map_or(MAX_RATIO, |s| s.ratio().clamp(0.0, MAX_RATIO));
        check.conditions.push(ConditionCheck {
            condition: SUSTAINED_CONDITION.into(),
            observed: s.map(|s| s.share()),
            ratio,
        });
        check.worst_ratio = check.worst_ratio.max(ratio);
        check.held = check.worst_ratio <= 1.0;
        check
    }
}

/// The name of a rate probe's sustained-load condition in a [`SloCheck`]: achieved
/// requests per second at least 95 % of offered over the steady window.
pub const SUSTAINED_CONDITION: &str = "sustained>=0.95";

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::{Chunk, ErrorKind, Outcome};
    use std::time::Duration;

    fn parse_err(s: &str) -> SloTargetError {
        s.parse::<SloTarget>().unwrap_err()
    }

    #[test]
    fn every_bad_token_is_named() {
        let table: [(&str, SloTargetError); 10] = [
            ("", SloTargetError::Empty),
            (
                "ttft<=5ms",
                SloTargetError::Syntax {
                    token: "ttft<=5ms".into(),
                },
            ),
            (
                "ttft:p99>=5ms",
                SloTargetError::Syntax {
                    token: "ttft:p99>=5ms".into(),
                },
            ),
            (
                "ttfb:p99<=5ms",
                SloTargetError::UnknownMetric {
                    token: "ttfb:p99<=5ms".into(),
                    metric: "ttfb".into(),
                },
            ),
            (
                "ttft:p0<=5ms",
                SloTargetError::UnknownStatistic {
                    token: "ttft:p0<=5ms".into(),
                    statistic: "p0".into(),
                },
            ),
            (
                "ttft:p99<=-5ms",
                SloTargetError::BadLimit {
                    token: "ttft:p99<=-5ms".into(),
                    value: "-5".into(),
                },
            ),
            (
                "tpot:mean<=50",
                SloTargetError::MissingUnit {
                    token: "tpot:mean<=50".into(),
                },
            ),
            (
                "tpot:mean<=50us",
                SloTargetError::UnknownUnit {
                    token: "tpot:mean<=50us".into(),
                    unit: "us".into(),
                },
            ),
            (
                "ttft:p99<=5ms goodput>=1.5",
                SloTargetError::BadShare {
                    token: "goodput>=1.5".into(),
                },
            ),
            (
                "itl:p99<=5ms goodput>=0.9",
                SloTargetError::GoodputWithoutLimits {
                    token: "goodput>=0.9".into(),
                },
            ),
        ];
        for (text, want) in table {
            assert_eq!(parse_err(text), want, "{text}");
        }
        assert_eq!(
            parse_err("ttft:p99<=5ms,ttft:p99<=6ms"),
            SloTargetError::Duplicate {
                token: "ttft:p99<=6ms".into()
            }
        );
    }

    #[test]
    fn the_canonical_text_parses_back() {
        for text in [
            "ttft:p99<=500ms tpot:p99<=50ms goodput>=0.99",
            "e2el:mean<=2.5s itl:p99.9<=80ms",
            "ttft:median<=100ms,ttft:p90<=300ms goodput>=95%",
        ] {
            let a: SloTarget = text.parse().unwrap();
            let b: SloTarget = a.to_string().parse().unwrap();
            assert_eq!(a, b, "{text} -> {a}");
        }
        let slo: SloTarget = "ttft:median<=100ms ttft:p90<=300ms tpot:mean<=20ms"
            .parse()
            .unwrap();
        assert_eq!(
            slo.per_request(),
            Slo {
                ttft_ms: Some(300.0),
                tpot_ms: Some(20.0),
                ..Slo::default()
            }
        );
    }

    /// `n` requests, request `i` with TTFT `ttft_ms(i)` and 4 more tokens 10 ms apart.
    fn records(n: u64, ttft_ms: impl Fn(u64) -> u64) -> Vec<RequestRecord> {
        (0..n)
            .map(|i| {
                let sent = Duration::from_millis(100 * i);
                let mut r = RequestRecord::new(i, sent);
                for k in 0..5 {
                    r.chunks.push(Chunk {
                        at: sent + Duration::from_millis(ttft_ms(i) + 10 * k),
                        tokens: 1,
                    });
                }
                r.ended_at = r.chunks.last().map(|c| c.at);
                r
            })
            .collect()
    }

    #[test]
    fn a_probe_is_judged_by_its_worst_ratio() {
        // TTFT 100..=199 ms: p99 about 198 ms; TPOT 10 ms.
        let rs = records(100, |i| 100 + i);
        let slo: SloTarget = "ttft:p99<=250ms tpot:mean<=20ms".parse().unwrap();
        let c = slo.check(&rs);
        assert!(c.held);
        assert!(
            (c.conditions[0].ratio - 198.01 / 250.0).abs() < 1e-3,
            "{c:?}"
        );
        assert!((c.conditions[1].ratio - 0.5).abs() < 1e-9, "{c:?}");
        assert_eq!(c.worst_ratio, c.conditions[0].ratio);
        let tight: SloTarget = "ttft:p99<=150ms".parse().unwrap();
        let c = tight.check(&rs);
        assert!(!c.held && c.worst_ratio > 1.3, "{c:?}");

        // Goodput: 10 of 100 requests over 150 ms TTFT and one failed request on top:
        // good share 90/101.
        let mut rs = records(100, |i| if i % 10 == 0 { 300 } else { 100 });
        let mut failed = RequestRecord::new(100, Duration::from_secs(11));
        failed.outcome = Outcome::Error {
            kind: ErrorKind::HttpStatus,
            message: "503".into(),
        };
        rs.push(failed);
        let g: SloTarget = "ttft:p50<=150ms goodput>=0.8".parse().unwrap();
        let c = g.check(&rs);
        let share = c.conditions[1].observed.unwrap();
        assert!((share - 90.0 / 101.0).abs() < 1e-12, "{share}");
        assert!((c.conditions[1].ratio - (11.0 / 101.0) / 0.2).abs() < 1e-9);
        assert!(c.held);
        let strict: SloTarget = "ttft:p50<=150ms goodput>=1".parse().unwrap();
        assert_eq!(strict.check(&rs).worst_ratio, MAX_RATIO);
        // No successful request: every latency condition fails.
        assert_eq!(tight.check(&rs[100..]).worst_ratio, MAX_RATIO);
    }
}
