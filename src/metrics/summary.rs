//! vLLM's summaries of a list of latencies: numpy's figures in seconds, reported in ms,
//! and vLLM's zeros for an empty list. A leaf: the conventions and the production figures
//! all summarise through it.

use crate::result::{Percentile, Summary};
use crate::stats::NumpySummary;

/// Convert a numpy summary in seconds (or `None` = empty → vLLM's zeros) to a [`Summary`]
/// in ms, with the requested percentiles.
pub(crate) fn vllm_summary_ms(s: Option<NumpySummary>, percentiles: &[f64]) -> Summary {
    let ms = |x: f64| x * 1000.0;
    match s {
        Some(s) => Summary {
            mean: Some(ms(s.mean)),
            median: Some(ms(s.median)),
            std: Some(ms(s.std)),
            min: Some(ms(s.min)),
            max: Some(ms(s.max)),
            percentiles: s
                .percentiles
                .iter()
                .map(|&(p, v)| Percentile {
                    p,
                    value: if v.is_nan() { None } else { Some(ms(v)) },
                })
                .collect(),
        },
        None => Summary {
            mean: Some(0.0),
            median: Some(0.0),
            std: Some(0.0),
            min: Some(0.0),
            max: Some(0.0),
            percentiles: percentiles
                .iter()
                .map(|&p| Percentile {
                    p,
                    value: if (0.0..=100.0).contains(&p) {
                        Some(0.0)
                    } else {
                        None
                    },
                })
                .collect(),
        },
    }
}
