//! Statistics over samples: exact summaries that reproduce numpy's arithmetic bit for bit
//! (vLLM's `np.mean`/`np.std`/`np.median`/`np.percentile`), guidellm's weighted inverse-CDF
//! distributions, and a streaming, bounded-memory [`Streaming`] summary on `hdrhistogram`
//! that can be serialized and merged across collectors, processes and hosts.
//!
//! # Exact, numpy convention
//!
//! * [`pairwise_sum`] is numpy's float64 summation (8 accumulators, blocks of 128, recursive
//!   halving), so [`mean`] and [`std`] equal `np.mean` / `np.std` (population, `ddof=0`).
//! * [`percentile_linear`] is `np.percentile(x, p)` with the default `'linear'` method,
//!   including numpy's two-sided interpolation (`b − (b−a)(1−t)` for `t ≥ 0.5`).
//! * [`median`] is `np.median`: the middle value, or the mean of the two middle values.
//!
//! ```
//! use servebench::stats::{numpy_summary, percentile_linear};
//! let mut xs = vec![4.0, 1.0, 3.0, 2.0];
//! let s = numpy_summary(&mut xs, &[50.0, 90.0]).unwrap();
//! assert_eq!(s.mean, 2.5);
//! assert_eq!(s.median, 2.5);
//! assert!((s.percentiles[1].1 - 3.7).abs() < 1e-12);
//! assert_eq!(percentile_linear(&[1.0, 2.0, 3.0, 4.0], 100.0), Some(4.0));
//! ```

use std::cmp::Ordering;
use std::time::Duration;

/// numpy's pairwise-summation block size (`PW_BLOCKSIZE`).
const PW_BLOCKSIZE: usize = 128;

/// Sum of `xs` exactly as numpy's float64 `add.reduce` adds a contiguous array: pairwise
/// summation with 8 partial sums per block of at most 128 values.
pub fn pairwise_sum(xs: &[f64]) -> f64 {
    let n = xs.len();
    if n < 8 {
        let mut res = 0.0;
        for &x in xs {
            res += x;
        }
        res
    } else if n <= PW_BLOCKSIZE {
        let mut r = [0.0f64; 8];
        r.copy_from_slice(&xs[..8]);
        let full = n - n % 8;
        let mut i = 8;
        while i < full {
            for (j, acc) in r.iter_mut().enumerate() {
                *acc += xs[i + j];
            }
            i += 8;
        }
        let mut res = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]));
        for &x in &xs[full..] {
            res += x;
        }
        res
    } else {
        let mut n2 = n / 2;
        n2 -= n2 % 8;
        pairwise_sum(&xs[..n2]) + pairwise_sum(&xs[n2..])
    }
}

/// `np.mean(xs)`; `None` for an empty slice.
pub fn mean(xs: &[f64]) -> Option<f64> {
    if xs.is_empty() {
        return None;
    }
    Some(pairwise_sum(xs) / xs.len() as f64)
}

/// `np.std(xs)` (population standard deviation, `ddof=0`), computed as numpy does: the
/// mean, then the pairwise sum of squared deviations divided by `n`. `None` when empty.
pub fn std(xs: &[f64]) -> Option<f64> {
    let m = mean(xs)?;
    Some(variance_about(xs, m).sqrt())
}

/// Population variance about a given mean, with numpy's summation of the squared
/// deviations (in blocks, so no second full-size buffer is allocated).
fn variance_about(xs: &[f64], m: f64) -> f64 {
    // numpy materialises (x - m)^2 and pairwise-sums it. Reproduce the same pairwise tree
    // by computing squared deviations leaf by leaf.
    fn sq_sum(xs: &[f64], m: f64) -> f64 {
        let n = xs.len();
        let sq = |x: f64| {
            let d = x - m;
            d * d
        };
        if n < 8 {
            let mut res = 0.0;
            for &x in xs {
                res += sq(x);
            }
            res
        } else if n <= PW_BLOCKSIZE {
            let mut r = [0.0f64; 8];
            for (j, acc) in r.iter_mut().enumerate() {
                *acc = sq(xs[j]);
            }
            let full = n - n % 8;
            let mut i = 8;
            while i < full {
                for (j, acc) in r.iter_mut().enumerate() {
                    *acc += sq(xs[i + j]);
                }
                i += 8;
            }
            let mut res = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]));
            for &x in &xs[full..] {
                res += sq(x);
            }
            res
        } else {
            let mut n2 = n / 2;
            n2 -= n2 % 8;
            sq_sum(&xs[..n2], m) + sq_sum(&xs[n2..], m)
        }
    }
    sq_sum(xs, m) / xs.len() as f64
}

/// numpy's `_lerp(a, b, t)`: `a + (b−a)·t`, or `b − (b−a)·(1−t)` when `t ≥ 0.5`.
fn lerp(a: f64, b: f64, t: f64) -> f64 {
    let diff = b - a;
    if t >= 0.5 {
        b - diff * (1.0 - t)
    } else {
        a + diff * t
    }
}

/// Where numpy's `'linear'` method looks for percentile `p` in `n` sorted values: the
/// lower index, the upper index and the interpolation weight. `None` when `n == 0` or `p`
/// is not in `[0, 100]`.
fn linear_position(n: usize, p: f64) -> Option<(usize, usize, f64)> {
    if n == 0 || !(0.0..=100.0).contains(&p) {
        return None;
    }
    let q = p / 100.0;
    let virtual_index = (n - 1) as f64 * q;
    let last = n - 1;
    if virtual_index >= last as f64 {
        return Some((last, last, 0.0));
    }
    let lo = virtual_index.floor();
    let gamma = virtual_index - lo;
    let lo = lo as usize;
    Some((lo, (lo + 1).min(last), gamma))
}

/// `np.percentile(sorted, p)` (method `'linear'`) of values **already sorted ascending**.
/// `None` for an empty slice or `p` outside `[0, 100]`.
pub fn percentile_linear(sorted: &[f64], p: f64) -> Option<f64> {
    let (lo, hi, t) = linear_position(sorted.len(), p)?;
    Some(lerp(sorted[lo], sorted[hi], t))
}

/// `np.median(sorted)` of values already sorted ascending; `None` when empty.
pub fn median_sorted(sorted: &[f64]) -> Option<f64> {
    let n = sorted.len();
    if n == 0 {
        return None;
    }
    if n % 2 == 1 {
        Some(sorted[n / 2])
    } else {
        Some((sorted[n / 2 - 1] + sorted[n / 2]) / 2.0)
    }
}

/// The values of the requested order statistics (0-based ranks into the sorted order) of
/// `values`, found with successive selections instead of a full sort: O(n) per distinct
/// rank on a shrinking slice. `values` is reordered. Ranks ≥ `values.len()` give `NaN`.
pub fn order_statistics(values: &mut [f64], ranks: &[usize]) -> Vec<f64> {
    let mut order: Vec<usize> = (0..ranks.len()).collect();
    order.sort_by_key(|&i| ranks[i]);
    let mut out = vec![f64::NAN; ranks.len()];
    let mut lo = 0usize;
    let mut last: Option<(usize, f64)> = None;
    for i in order {
        let r = ranks[i];
        if r >= values.len() {
            continue;
        }
        if let Some((lr, lv)) = last {
            if lr == r {
                out[i] = lv;
                continue;
            }
        }
        let (_, v, _) = values[lo..].select_nth_unstable_by(r - lo, f64::total_cmp);
        let v = *v;
        out[i] = v;
        last = Some((r, v));
        lo = r + 1;
    }
    out
}

/// Exact summary of a sample in numpy's conventions (what vLLM reports). Units are those of
/// the input.
#[derive(Debug, Clone, PartialEq)]
pub struct NumpySummary {
    /// Number of values.
    pub count: usize,
    /// `np.mean`.
    pub mean: f64,
    /// `np.median`.
    pub median: f64,
    /// `np.std` (population).
    pub std: f64,
    /// Smallest value.
    pub min: f64,
    /// Largest value.
    pub max: f64,
    /// `(p, np.percentile(x, p))` in the order asked; `NaN` for `p` outside `[0, 100]`.
    pub percentiles: Vec<(f64, f64)>,
}

/// Summarize `values` as numpy does (see the module docs). `values` is reordered (partial
/// selection, not a full sort). `None` for an empty slice — vLLM substitutes `0` then.
pub fn numpy_summary(values: &mut [f64], percentiles: &[f64]) -> Option<NumpySummary> {
    let n = values.len();
    if n == 0 {
        return None;
    }
    let mean_v = pairwise_sum(values) / n as f64;
    let std_v = variance_about(values, mean_v).sqrt();
    let (mut min_v, mut max_v) = (f64::INFINITY, f64::NEG_INFINITY);
    for &x in values.iter() {
        if x.total_cmp(&min_v) == Ordering::Less {
            min_v = x;
        }
        if x.total_cmp(&max_v) == Ordering::Greater {
            max_v = x;
        }
    }
    // Ranks needed: the median's one or two, and each percentile's lower/upper index.
    let mut ranks = vec![(n - 1) / 2, n / 2];
    let positions: Vec<Option<(usize, usize, f64)>> =
        percentiles.iter().map(|&p| linear_position(n, p)).collect();
    for &(lo, hi, _) in positions.iter().flatten() {
        ranks.push(lo);
        ranks.push(hi);
    }
    let vals = order_statistics(values, &ranks);
    let median_v = if n % 2 == 1 {
        vals[1]
    } else {
        (vals[0] + vals[1]) / 2.0
    };
    let mut out = Vec::with_capacity(percentiles.len());
    let mut k = 2;
    for (&p, pos) in percentiles.iter().zip(&positions) {
        match pos {
            Some((_, _, t)) => {
                out.push((p, lerp(vals[k], vals[k + 1], *t)));
                k += 2;
            }
            None => out.push((p, f64::NAN)),
        }
    }
    Some(NumpySummary {
        count: n,
        mean: mean_v,
        median: median_v,
        std: std_v,
        min: min_v,
        max: max_v,
        percentiles: out,
    })
}

// ------------------------------------------------------------------------------------------
// Streaming, bounded-memory summaries (hdrhistogram)
// ------------------------------------------------------------------------------------------

/// Errors of the streaming histograms.
#[derive(Debug, thiserror::Error)]
pub enum StatsError {
    /// The histogram could not be created (significant digits outside 0–5).
    #[error("cannot create histogram: {0:?}")]
    Create(hdrhistogram::CreationError),
    /// Two histograms could not be merged.
    #[error("cannot merge histograms: {0:?}")]
    Merge(hdrhistogram::AdditionError),
    /// The histogram could not be serialized.
    #[error("cannot serialize histogram: {0:?}")]
    Serialize(hdrhistogram::serialization::V2DeflateSerializeError),
    /// The bytes are not a V2 (optionally deflate-compressed) histogram.
    #[error("cannot deserialize histogram: {0:?}")]
    Deserialize(hdrhistogram::serialization::DeserializeError),
    /// The text is not valid base64.
    #[error("invalid base64 at byte {0}")]
    Base64(usize),
}

/// A streaming, bounded-memory summary of durations on an auto-resizing
/// [`hdrhistogram::Histogram`] of nanoseconds with **3 significant digits** (by default).
///
/// # Error bound
///
/// With `d` significant digits every value is kept within its bucket of relative width
/// at most `2^-⌈log2(2·10^d)⌉+1` (1/1024 for `d = 3`):
///
/// * [`Streaming::percentile`]`(p)` returns a value `v` with `x₍ₖ₎ ≤ v ≤ x₍ₖ₎·(1 + 1/1024)`,
///   where `x₍ₖ₎` is the `k`-th smallest recorded value and `k = max(1, ⌈p/100·n⌉)` (the
///   nearest-rank / inverse-CDF rule, the same rank guidellm uses for unweighted samples;
///   numpy's linear rule interpolates between ranks `⌊(n−1)p/100⌋+1` and the next one);
/// * `min`/`max` are within 1/1024 relative of the exact extremes, `mean` within 1/2048,
///   values below 2048 ns are exact.
///
/// Memory is a few tens of KiB whatever the number of samples. Histograms merge exactly
/// ([`Streaming::merge`]) and travel between processes and hosts as HdrHistogram's standard
/// V2 deflate-compressed encoding ([`Streaming::to_bytes`], or base64 text — the form
/// HdrHistogram log files use — via [`Streaming::to_base64`] and serde).
///
/// ```
/// use std::time::Duration;
/// use servebench::stats::Streaming;
/// let mut a = Streaming::new();
/// let mut b = Streaming::new();
/// for ms in 1..=50 { a.record(Duration::from_millis(ms)); }
/// for ms in 51..=100 { b.record(Duration::from_millis(ms)); }
/// // Ship `b` to another process as text, merge it there.
/// let wire = b.to_base64().unwrap();
/// a.merge(&Streaming::from_base64(&wire).unwrap()).unwrap();
/// assert_eq!(a.count(), 100);
/// let p50 = a.percentile(50.0).unwrap().as_secs_f64() * 1e3;
/// assert!((50.0..=50.0 * (1.0 + 1.0 / 1024.0)).contains(&p50));
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct Streaming {
    hist: hdrhistogram::Histogram<u64>,
}

impl Default for Streaming {
    fn default() -> Self {
        Streaming::new()
    }
}

impl Streaming {
    /// Significant digits of [`Streaming::new`].
    pub const DEFAULT_SIGFIG: u8 = 3;

    /// An empty summary with 3 significant digits.
    pub fn new() -> Self {
        match hdrhistogram::Histogram::new(Self::DEFAULT_SIGFIG) {
            Ok(hist) => Streaming { hist },
            // 3 significant digits is always a valid configuration.
            Err(e) => unreachable!("hdrhistogram rejected 3 significant digits: {e:?}"),
        }
    }

    /// An empty summary with `sigfig` significant digits (0–5).
    pub fn with_sigfig(sigfig: u8) -> Result<Self, StatsError> {
        hdrhistogram::Histogram::new(sigfig)
            .map(|hist| Streaming { hist })
            .map_err(StatsError::Create)
    }

    /// Record one duration (saturating at `u64::MAX` ns, about 584 years).
    pub fn record(&mut self, d: Duration) {
        self.record_n(d, 1);
    }

    /// Record `count` copies of one duration.
    pub fn record_n(&mut self, d: Duration, count: u64) {
        // Auto-resizing histograms only fail on u64 counter overflow; saturate instead.
        // The histogram grows to fit; past its largest representable value it clamps.
        if self.hist.record_n(nanos_u64(d), count).is_err() {
            self.hist.saturating_record_n(nanos_u64(d), count);
        }
    }

    /// Number of recorded values.
    pub fn count(&self) -> u64 {
        self.hist.len()
    }

    /// `true` when nothing was recorded.
    pub fn is_empty(&self) -> bool {
        self.hist.is_empty()
    }

    /// Add every value of `other` (exact: bucket counts are summed).
    pub fn merge(&mut self, other: &Streaming) -> Result<(), StatsError> {
        self.hist.add(&other.hist).map_err(StatsError::Merge)
    }

    /// Percentile `p` (0–100) by the nearest-rank rule, see the type docs; `None` when
    /// empty or `p` is outside `[0, 100]`.
    pub fn percentile(&self, p: f64) -> Option<Duration> {
        if self.is_empty() || !(0.0..=100.0).contains(&p) {
            return None;
        }
        Some(Duration::from_nanos(self.hist.value_at_quantile(p / 100.0)))
    }

    /// Smallest value (within the resolution); `None` when empty.
    pub fn min(&self) -> Option<Duration> {
        (!self.is_empty()).then(|| Duration::from_nanos(self.hist.min()))
    }

    /// Largest value (within the resolution); `None` when empty.
    pub fn max(&self) -> Option<Duration> {
        (!self.is_empty()).then(|| Duration::from_nanos(self.hist.max()))
    }

    /// Mean in nanoseconds; `None` when empty.
    pub fn mean_ns(&self) -> Option<f64> {
        (!self.is_empty()).then(|| self.hist.mean())
    }

    /// Population standard deviation in nanoseconds; `None` when empty.
    pub fn std_ns(&self) -> Option<f64> {
        (!self.is_empty()).then(|| self.hist.stdev())
    }

    /// A report [`Summary`](crate::result::Summary) in ms with the given percentiles (the
    /// median is the nearest-rank p50). Empty → every value `None`.
    pub fn summary_ms(&self, percentiles: &[f64]) -> crate::result::Summary {
        let ms = |d: Duration| d.as_secs_f64() * 1e3;
        crate::result::Summary {
            mean: self.mean_ns().map(|v| v / 1e6),
            median: self.percentile(50.0).map(ms),
            std: self.std_ns().map(|v| v / 1e6),
            min: self.min().map(ms),
            max: self.max().map(ms),
            percentiles: percentiles
                .iter()
                .map(|&p| crate::result::Percentile {
                    p,
                    value: self.percentile(p).map(ms),
                })
                .collect(),
        }
    }

    /// The underlying histogram (values in nanoseconds).
    pub fn histogram(&self) -> &hdrhistogram::Histogram<u64> {
        &self.hist
    }

    /// Serialize as HdrHistogram's V2 deflate-compressed encoding.
    pub fn to_bytes(&self) -> Result<Vec<u8>, StatsError> {
        use hdrhistogram::serialization::Serializer as _;
        let mut out = Vec::new();
        hdrhistogram::serialization::V2DeflateSerializer::new()
            .serialize(&self.hist, &mut out)
            .map_err(StatsError::Serialize)?;
        Ok(out)
    }

    /// Read a histogram written by [`Streaming::to_bytes`] (or by any HdrHistogram
    /// implementation's V2 serializer, compressed or not).
    pub fn from_bytes(bytes: &[u8]) -> Result<Self, StatsError> {
        let mut reader = bytes;
        let hist: hdrhistogram::Histogram<u64> = hdrhistogram::serialization::Deserializer::new()
            .deserialize(&mut reader)
            .map_err(StatsError::Deserialize)?;
        Ok(Streaming { hist })
    }

    /// [`Streaming::to_bytes`] as standard base64 text (HdrHistogram log format payload).
    pub fn to_base64(&self) -> Result<String, StatsError> {
        Ok(base64_encode(&self.to_bytes()?))
    }

    /// Read the text written by [`Streaming::to_base64`].
    pub fn from_base64(text: &str) -> Result<Self, StatsError> {
        Streaming::from_bytes(&base64_decode(text)?)
    }
}

impl serde::Serialize for Streaming {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let text = self.to_base64().map_err(serde::ser::Error::custom)?;
        s.serialize_str(&text)
    }
}

impl<'de> serde::Deserialize<'de> for Streaming {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let text = <String as serde::Deserialize>::deserialize(d)?;
        Streaming::from_base64(&text).map_err(serde::de::Error::custom)
    }
}

fn nanos_u64(d: Duration) -> u64 {
    u64::try_from(d.as_nanos()).unwrap_or(u64::MAX)
}

const B64: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

fn base64_encode(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let b = [
            chunk[0],
            chunk.get(1).copied().unwrap_or(0),
            chunk.get(2).copied().unwrap_or(0),
        ];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(char::from(B64[((n >> (18 - 6 * i)) & 63) as usize]));
            } else {
                out.push('=');
            }
        }
    }
    out
}

fn base64_decode(text: &str) -> Result<Vec<u8>, StatsError> {
    let text = text.trim_end_matches('=');
    let mut out = Vec::with_capacity(text.len() * 3 / 4);
    let mut acc = 0u32;
    let mut bits = 0u32;
    for (i, c) in text.bytes().enumerate() {
        let v = match c {
            b'A'..=b'Z' => c - b'A',
            b'a'..=b'z' => c - b'a' + 26,
            b'0'..=b'9' => c - b'0' + 52,
            b'+' => 62,
            b'/' => 63,
            _ => return Err(StatsError::Base64(i)),
        };
        acc = (acc << 6) | u32::from(v);
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((acc >> bits) as u8);
            acc &= (1 << bits) - 1;
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pairwise_sum_matches_simple_sum_on_small_exact_values() {
        let xs: Vec<f64> = (1..=1000).map(f64::from).collect();
        assert_eq!(pairwise_sum(&xs), 500_500.0);
        assert_eq!(pairwise_sum(&[]), 0.0);
    }

    #[test]
    fn numpy_percentiles_known_values() {
        // np.percentile([1,2,3,4,5,6,7,8,9,10], [0, 25, 50, 90, 99, 100])
        // -> [1.0, 3.25, 5.5, 9.1, 9.91, 10.0]
        let sorted: Vec<f64> = (1..=10).map(f64::from).collect();
        let want = [
            (0.0, 1.0),
            (25.0, 3.25),
            (50.0, 5.5),
            (90.0, 9.1),
            (99.0, 9.91),
            (100.0, 10.0),
        ];
        for (p, v) in want {
            let got = percentile_linear(&sorted, p).unwrap();
            assert!((got - v).abs() < 1e-12, "p{p}: {got} vs {v}");
        }
        assert_eq!(percentile_linear(&sorted, 101.0), None);
        assert_eq!(percentile_linear(&[], 50.0), None);
    }

    #[test]
    fn summary_equals_sorted_definitions() {
        let mut xs = vec![5.0, 1.0, 9.0, 3.0, 7.0, 2.0, 8.0];
        let mut sorted = xs.clone();
        sorted.sort_by(f64::total_cmp);
        let s = numpy_summary(&mut xs, &[10.0, 50.0, 99.0]).unwrap();
        assert_eq!(s.median, median_sorted(&sorted).unwrap());
        assert_eq!(s.min, 1.0);
        assert_eq!(s.max, 9.0);
        for (p, v) in &s.percentiles {
            assert_eq!(*v, percentile_linear(&sorted, *p).unwrap());
        }
        // population std of [1,2,3,5,7,8,9]: mean 5, squared deviations sum 58 → sqrt(58/7)
        assert!((s.std - (58.0f64 / 7.0).sqrt()).abs() < 1e-12);
    }

    #[test]
    fn base64_round_trips_every_length() {
        for len in 0..40u8 {
            let bytes: Vec<u8> = (0..len)
                .map(|i| i.wrapping_mul(37).wrapping_add(200))
                .collect();
            let text = base64_encode(&bytes);
            assert_eq!(text.len() % 4, 0);
            assert_eq!(base64_decode(&text).unwrap(), bytes);
        }
        assert_eq!(base64_encode(b"Man"), "TWFu");
        assert_eq!(base64_encode(b"Ma"), "TWE=");
        assert!(matches!(base64_decode("TW!u"), Err(StatsError::Base64(2))));
    }

    #[test]
    fn streaming_serde_round_trip_and_bounds() {
        let mut s = Streaming::new();
        for us in (1..=10_000u64).map(|i| i * 37) {
            s.record(Duration::from_micros(us));
        }
        let json = serde_json::to_string(&s).unwrap();
        let back: Streaming = serde_json::from_str(&json).unwrap();
        assert_eq!(back, s);
        let p99 = s.percentile(99.0).unwrap().as_nanos() as f64;
        // k = ceil(0.99 * 10000) = 9900 → 9900 * 37 µs
        let exact = 9900.0 * 37_000.0;
        assert!(p99 >= exact && p99 <= exact * (1.0 + 1.0 / 1024.0), "{p99}");
        assert!(Streaming::from_bytes(b"not a histogram").is_err());
    }
}
