//! The throughput–interactivity trade-off as a Pareto front with its uncertainty.
//!
//! Each run is a point: **output tokens per second per GPU** (the operator's axis) against
//! **tokens per second per user**, `1000 / mean TPOT (ms)` (the user's axis, as InferenceX
//! and `vllm bench sweep plot_pareto` draw it), and a second front against **P99 TTFT**
//! (lower is better). Each coordinate carries the run's within-run interval when the run
//! has one ([`crate::noise::run_intervals`]).
//!
//! A point is on the **front** when no other point is better on both axes. A point that
//! another is better than on both axes is **dominated** only when the two points' intervals
//! separate on both axes; when they overlap on either axis it is **dominated within
//! noise**: kept and marked, not dropped, since a repetition could put it on the front.
//!
//! ```
//! use servebench::compare::pareto::{pareto_points, Axes, Dominance, ParetoInput};
//! use servebench::BenchmarkResult;
//! let run = |tps: f64, tpot: f64| BenchmarkResult {
//!     output_throughput_per_s: Some(tps),
//!     tpot: Some(servebench::Summary { mean: Some(tpot), ..Default::default() }),
//!     ..Default::default()
//! };
//! let (a, b, c) = (run(1000.0, 20.0), run(3000.0, 40.0), run(900.0, 25.0));
//! let inputs = [("a", &a), ("b", &b), ("c", &c)].map(|(label, result)| ParetoInput { label: label.into(), result, gpus: 1 });
//! let points = pareto_points(&inputs, Axes::Interactivity);
//! assert_eq!(points[0].dominance, Dominance::Front);
//! assert_eq!(points[1].dominance, Dominance::Front);
//! // c: a is better on both axes; without intervals that is clear.
//! assert_eq!(points[2].dominance, Dominance::Dominated { by: "a".into() });
//! ```

use serde::Serialize;

use crate::result::BenchmarkResult;

/// The pair of axes a front is drawn on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Axes {
    /// Output tok/s per GPU against tok/s per user (both higher is better).
    Interactivity,
    /// Output tok/s per GPU against P99 TTFT (lower is better).
    P99Ttft,
}

impl Axes {
    /// The second axis's name with its unit.
    pub fn y_label(self) -> &'static str {
        match self {
            Axes::Interactivity => "tok/s per user (1000 / mean TPOT ms)",
            Axes::P99Ttft => "P99 TTFT (ms)",
        }
    }

    /// Whether the second axis is higher-is-better.
    pub fn y_higher_is_better(self) -> bool {
        self == Axes::Interactivity
    }
}

/// One run to place.
#[derive(Debug, Clone)]
pub struct ParetoInput<'a> {
    /// Its label (a file name, a configuration).
    pub label: String,
    /// Its figures (with within-run intervals when it has them).
    pub result: &'a BenchmarkResult,
    /// GPUs that served it.
    pub gpus: u32,
}

/// A value with its interval (the value itself at both ends when the run has none).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Estimate {
    /// The point estimate.
    pub value: f64,
    /// Lower end.
    pub lo: f64,
    /// Upper end.
    pub hi: f64,
    /// Whether the ends are an interval (else both are the value).
    pub interval: bool,
}

impl Estimate {
    fn of(value: f64, ends: Option<(f64, f64)>) -> Estimate {
        let (lo, hi) = ends.unwrap_or((value, value));
        Estimate {
            value,
            lo: lo.min(hi),
            hi: lo.max(hi),
            interval: ends.is_some(),
        }
    }
}

/// Where a point stands.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case", tag = "kind")]
pub enum Dominance {
    /// No point is better on both axes.
    Front,
    /// Another point is better on both axes, but their intervals overlap on one.
    DominatedWithinNoise {
        /// The label of the point that dominates it (the one with the most throughput).
        by: String,
    },
    /// Another point is better on both axes and the intervals separate on both.
    Dominated {
        /// The label of the point that dominates it.
        by: String,
    },
}

/// A placed point.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ParetoPoint {
    /// The run's label.
    pub label: String,
    /// Output tokens per second per GPU.
    pub x: Estimate,
    /// The second axis ([`Axes`]).
    pub y: Estimate,
    /// Where it stands.
    pub dominance: Dominance,
}

/// The runs that have both coordinates, placed on `axes` and classified (see the module
/// docs), in input order. A run without output throughput or the second axis's figure is
/// left out.
pub fn pareto_points(inputs: &[ParetoInput<'_>], axes: Axes) -> Vec<ParetoPoint> {
    let mut points: Vec<ParetoPoint> = inputs
        .iter()
        .filter_map(|i| {
            let r = i.result;
            let gpus = f64::from(i.gpus.max(1));
            let iv = r.intervals.as_ref();
            let x = Estimate::of(
                r.output_throughput_per_s? / gpus,
                iv.and_then(|v| v.output_throughput_per_s)
                    .map(|v| (v.lo / gpus, v.hi / gpus)),
            );
            let y = match axes {
                Axes::Interactivity => {
                    let tpot = r.tpot.as_ref()?.mean.filter(|t| *t > 0.0)?;
                    let ends = iv
                        .and_then(|v| v.tpot.as_ref()?.mean)
                        .filter(|v| v.lo > 0.0)
                        .map(|v| (1000.0 / v.hi, 1000.0 / v.lo));
                    Estimate::of(1000.0 / tpot, ends)
                }
                Axes::P99Ttft => {
                    let p99 = r.ttft.as_ref()?.percentile(99.0)?;
                    let ends = iv
                        .and_then(|v| v.ttft.as_ref()?.percentile(99.0))
                        .map(|v| (v.lo, v.hi));
                    Estimate::of(p99, ends)
                }
            };
            Some(ParetoPoint {
                label: i.label.clone(),
                x,
                y,
                dominance: Dominance::Front,
            })
        })
        .collect();
    let higher_y = axes.y_higher_is_better();
    let better_y = |a: &Estimate, b: &Estimate| {
        if higher_y {
            a.value >= b.value
        } else {
            a.value <= b.value
        }
    };
    let apart_y = |a: &Estimate, b: &Estimate| {
        if higher_y {
            a.lo > b.hi
        } else {
            a.hi < b.lo
        }
    };
    let snapshot = points.clone();
    for p in &mut points {
        let dominators = snapshot.iter().filter(|q| {
            q.label != p.label
                && q.x.value >= p.x.value
                && better_y(&q.y, &p.y)
                && (q.x.value > p.x.value || q.y.value != p.y.value)
        });
        // The clearest dominator: one apart on both axes if any, else the most throughput.
        let mut within: Option<&ParetoPoint> = None;
        let mut clear: Option<&ParetoPoint> = None;
        for q in dominators {
            if q.x.lo > p.x.hi && apart_y(&q.y, &p.y) {
                if clear.is_none_or(|c| q.x.value > c.x.value) {
                    clear = Some(q);
                }
            } else if within.is_none_or(|c| q.x.value > c.x.value) {
                within = Some(q);
            }
        }
        p.dominance = match (clear, within) {
            (Some(q), _) => Dominance::Dominated {
                by: q.label.clone(),
            },
            (None, Some(q)) => Dominance::DominatedWithinNoise {
                by: q.label.clone(),
            },
            (None, None) => Dominance::Front,
        };
    }
    points
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::result::intervals::{Interval, RunIntervals, SummaryIntervals};
    use crate::result::Summary;

    fn run(tps: f64, tps_se: f64, tpot: f64, tpot_se: f64) -> BenchmarkResult {
        let mut ri = RunIntervals::empty(0.95, 1000, 0);
        let iv = |v: f64, se: f64| Interval {
            lo: v - 1.96 * se,
            hi: v + 1.96 * se,
            se,
        };
        ri.output_throughput_per_s = Some(iv(tps, tps_se));
        ri.tpot = Some(SummaryIntervals {
            mean: Some(iv(tpot, tpot_se)),
            ..Default::default()
        });
        BenchmarkResult {
            output_throughput_per_s: Some(tps),
            tpot: Some(Summary {
                mean: Some(tpot),
                ..Default::default()
            }),
            intervals: Some(ri),
            ..Default::default()
        }
    }

    /// Table-driven: a point beaten on both axes with separate intervals is dominated;
    /// beaten but with overlapping intervals on either axis it is dominated within noise;
    /// GPUs divide the throughput axis.
    #[test]
    fn dominance_follows_the_intervals() {
        let cases = [
            // (challenger tps, tpot), expected for the point at (1000 tok/s, 20 ms)
            ((1200.0, 18.0), "dominated"),
            ((1010.0, 18.0), "within"), // throughput apart by 1 %: the intervals overlap
            ((1200.0, 19.9), "within"), // interactivity within noise
            ((1200.0, 22.0), "front"),  // more throughput, less interactivity: a trade
        ];
        for ((tps, tpot), want) in cases {
            let (p, q) = (run(1000.0, 5.0, 20.0, 0.1), run(tps, 5.0, tpot, 0.1));
            let inputs = [
                ParetoInput {
                    label: "p".into(),
                    result: &p,
                    gpus: 1,
                },
                ParetoInput {
                    label: "q".into(),
                    result: &q,
                    gpus: 1,
                },
            ];
            let got = &pareto_points(&inputs, Axes::Interactivity)[0].dominance;
            let kind = match got {
                Dominance::Front => "front",
                Dominance::DominatedWithinNoise { .. } => "within",
                Dominance::Dominated { .. } => "dominated",
            };
            assert_eq!(kind, want, "{tps} {tpot}: {got:?}");
        }
        let two = run(2000.0, 5.0, 20.0, 0.1);
        let pts = pareto_points(
            &[ParetoInput {
                label: "x".into(),
                result: &two,
                gpus: 2,
            }],
            Axes::Interactivity,
        );
        assert_eq!(pts[0].x.value, 1000.0);
        assert!((pts[0].y.value - 50.0).abs() < 1e-12);
    }
}
