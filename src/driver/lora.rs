//! LoRA traffic: requests spread over adapter model names by a seeded split
//! ([`LoraSplit`]), as `vllm bench serve --lora-modules` and inference-perf do. Request `id`
//! goes to the adapter its seeded hash falls on ([`LoraSplit::pick`]), so the same run sends
//! the same requests to the same adapters, whatever the timing, and a record's adapter can
//! be told from its id alone.

use crate::rng::{mix, GOLDEN_GAMMA};

/// Adapter names and the share of requests each gets.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct LoraSplit {
    /// Adapter model names, as the server knows them (`vllm serve --lora-modules`).
    pub adapters: Vec<String>,
    /// Each adapter's share of the requests, summing to 1.
    pub shares: Vec<f64>,
    /// The split's seed.
    pub seed: u64,
}

/// A bad `--lora-modules` / `--lora-split`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct LoraError(String);

impl LoraSplit {
    /// `adapters` with `weights` (default: equal shares), normalized to sum to 1.
    ///
    /// ```
    /// use servebench::driver::LoraSplit;
    /// let s = LoraSplit::new(vec!["a".into(), "b".into()], Some(vec![3.0, 1.0]), 7).unwrap();
    /// assert_eq!(s.shares, [0.75, 0.25]);
    /// assert!(LoraSplit::new(vec!["a".into()], Some(vec![0.5, 0.5]), 7).unwrap_err()
    ///     .to_string().contains("2 shares for 1 adapters"));
    /// ```
    pub fn new(
        adapters: Vec<String>,
        weights: Option<Vec<f64>>,
        seed: u64,
    ) -> Result<Self, LoraError> {
        if adapters.is_empty() {
            return Err(LoraError("no adapter name given".into()));
        }
        for (i, a) in adapters.iter().enumerate() {
            if a.trim().is_empty() {
                return Err(LoraError(format!("adapter {} has an empty name", i + 1)));
            }
            if adapters[..i].contains(a) {
                return Err(LoraError(format!("adapter `{a}` is named twice")));
            }
        }
        let weights = weights.unwrap_or_else(|| vec![1.0; adapters.len()]);
        if weights.len() != adapters.len() {
            return Err(LoraError(format!(
                "{} shares for {} adapters",
                weights.len(),
                adapters.len()
            )));
        }
        if let Some(w) = weights.iter().find(|w| !(w.is_finite() && **w >= 0.0)) {
            return Err(LoraError(format!("share {w} is not a finite number >= 0")));
        }
        let total: f64 = weights.iter().sum();
        if total <= 0.0 {
            return Err(LoraError("the shares sum to 0".into()));
        }
        Ok(LoraSplit {
            adapters,
            shares: weights.iter().map(|w| w / total).collect(),
            seed,
        })
    }

    /// The adapter request `id` goes to.
    ///
    /// ```
    /// use servebench::driver::LoraSplit;
    /// let s = LoraSplit::new(vec!["a".into(), "b".into(), "c".into()], Some(vec![0.5, 0.3, 0.2]), 1).unwrap();
    /// let n = 100_000;
    /// let a = (0..n).filter(|&id| s.pick(id) == "a").count() as f64 / n as f64;
    /// assert!((a - 0.5).abs() < 0.01, "{a}");
    /// assert_eq!(s.pick(42), s.pick(42));
    /// ```
    pub fn pick(&self, id: u64) -> &str {
        let h = mix(self.seed.wrapping_mul(GOLDEN_GAMMA) ^ mix(id.wrapping_add(GOLDEN_GAMMA)));
        let u = (h >> 11) as f64 / (1u64 << 53) as f64;
        let mut acc = 0.0;
        for (a, s) in self.adapters.iter().zip(&self.shares) {
            acc += s;
            if u < acc {
                return a;
            }
        }
        // Rounding left u at or above the last cumulative share: the last adapter with one.
        self.adapters
            .iter()
            .zip(&self.shares)
            .rev()
            .find(|(_, s)| **s > 0.0)
            .map_or(self.adapters[0].as_str(), |(a, _)| a.as_str())
    }
}
