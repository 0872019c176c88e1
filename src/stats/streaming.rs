//! Streaming, bounded-memory summaries of durations on `hdrhistogram` ([`Streaming`]):
//! mergeable, and serializable as HdrHistogram's V2 encoding (bytes or base64 text).

use std::time::Duration;

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

/// `d` in nanoseconds, saturating at `u64::MAX` (about 584 years), without u128
/// arithmetic (it runs once per chunk in the metrics).
#[inline]
pub(crate) fn nanos_u64(d: Duration) -> u64 {
    d.as_secs()
        .saturating_mul(1_000_000_000)
        .saturating_add(u64::from(d.subsec_nanos()))
}

/// Standard-alphabet base64 that writes padding and reads text with or without it.
const BASE64: base64::engine::GeneralPurpose = base64::engine::GeneralPurpose::new(
    &base64::alphabet::STANDARD,
    base64::engine::GeneralPurposeConfig::new()
        .with_decode_padding_mode(base64::engine::DecodePaddingMode::Indifferent),
);

fn base64_encode(bytes: &[u8]) -> String {
    use base64::Engine as _;
    BASE64.encode(bytes)
}

fn base64_decode(text: &str) -> Result<Vec<u8>, StatsError> {
    use base64::{DecodeError, Engine as _};
    BASE64.decode(text).map_err(|e| {
        StatsError::Base64(match e {
            DecodeError::InvalidByte(at, _) | DecodeError::InvalidLastSymbol(at, _) => at,
            DecodeError::InvalidLength(len) => len,
            DecodeError::InvalidPadding => text.len(),
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nanos_saturate_like_the_u128_conversion() {
        for d in [
            Duration::ZERO,
            Duration::new(1, 999_999_999),
            Duration::new(u64::MAX / 1_000_000_000, 709_551_615),
            Duration::new(u64::MAX / 1_000_000_000, 709_551_616),
            Duration::MAX,
        ] {
            assert_eq!(
                nanos_u64(d),
                u64::try_from(d.as_nanos()).unwrap_or(u64::MAX)
            );
        }
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
