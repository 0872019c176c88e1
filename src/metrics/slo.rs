//! Goodput: vLLM's `--goodput` service-level objectives ([`Slo`], parsed from `KEY:VALUE`
//! text) and whether a request meets them.

use serde::{Deserialize, Serialize};

/// Goodput service-level objectives, in ms; a request is "good" when it meets every one
/// that is set (inclusive bounds).
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct Slo {
    /// Maximum time to first token, ms.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ttft_ms: Option<f64>,
    /// Maximum time per output token, ms.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tpot_ms: Option<f64>,
    /// Maximum end-to-end latency, ms.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub e2el_ms: Option<f64>,
    /// Maximum time to finish a session (its first send to its last turn's end), ms:
    /// judged per session ([`SessionFigures`](crate::result::SessionFigures)), not per
    /// request.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session_ms: Option<f64>,
    /// A request is good only when its output checks passed: every tool call's arguments
    /// and the structured output validate (requests asked for neither pass).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub valid: bool,
}

impl Slo {
    /// Whether the SLO judges requests (a latency limit, or validity) — an SLO of a session
    /// time alone gives no request goodput.
    pub fn judges_requests(&self) -> bool {
        self.ttft_ms.is_some() || self.tpot_ms.is_some() || self.e2el_ms.is_some() || self.valid
    }
}

/// Whether a record's output checks passed: its tool calls all validated and its
/// structured output (if asked for) too; `true` when nothing was checked.
pub(crate) fn checks_pass(r: &crate::record::RequestRecord) -> bool {
    r.checks
        .as_ref()
        .is_none_or(|c| c.valid_tool_calls == c.tool_calls && c.structured_valid != Some(false))
}

/// A goodput SLO string could not be read (see [`Slo`]'s `FromStr`).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum SloParseError {
    /// No `KEY:VALUE` pair at all.
    #[error("no SLO given (expected e.g. `ttft:500 tpot:50 e2el:2000`)")]
    Empty,
    /// An item without a `:`.
    #[error("`{0}` is not KEY:VALUE (e.g. `ttft:500`)")]
    NotAPair(String),
    /// A key other than `ttft`, `tpot`, `e2el`, `session`, `valid`.
    #[error("unknown SLO `{0}` (known: ttft, tpot, e2el, session, valid)")]
    UnknownKey(String),
    /// A value that is not a finite, non-negative number of milliseconds.
    #[error("SLO `{key}`: `{value}` is not a non-negative number of milliseconds")]
    BadValue {
        /// The key.
        key: String,
        /// The value as typed.
        value: String,
    },
    /// The same key twice.
    #[error("SLO `{0}` given twice")]
    Duplicate(String),
}

impl std::str::FromStr for Slo {
    type Err = SloParseError;

    /// vLLM's `--goodput` syntax: `KEY:VALUE` items in milliseconds, separated by spaces
    /// (or commas), keys `ttft`, `tpot`, `e2el`; and servebench's `session:MS` (time to
    /// finish a session) and `valid` (output checks must pass).
    ///
    /// ```
    /// use servebench::metrics::Slo;
    /// let slo: Slo = "ttft:500 tpot:50 e2el:2000".parse().unwrap();
    /// assert_eq!((slo.ttft_ms, slo.tpot_ms, slo.e2el_ms), (Some(500.0), Some(50.0), Some(2000.0)));
    /// assert!("ttft=500".parse::<Slo>().is_err());
    /// assert!("itl:5".parse::<Slo>().is_err());
    /// let agent: Slo = "session:60000 valid".parse().unwrap();
    /// assert_eq!((agent.session_ms, agent.valid, agent.judges_requests()), (Some(60000.0), true, true));
    /// ```
    fn from_str(s: &str) -> Result<Slo, SloParseError> {
        let mut slo = Slo::default();
        let mut any = false;
        for item in s.split(|c: char| c.is_whitespace() || c == ',') {
            if item.is_empty() {
                continue;
            }
            if item == "valid" {
                if slo.valid {
                    return Err(SloParseError::Duplicate("valid".into()));
                }
                slo.valid = true;
                any = true;
                continue;
            }
            let (key, value) = item
                .split_once(':')
                .ok_or_else(|| SloParseError::NotAPair(item.to_string()))?;
            let slot = match key {
                "ttft" => &mut slo.ttft_ms,
                "tpot" => &mut slo.tpot_ms,
                "e2el" => &mut slo.e2el_ms,
                "session" => &mut slo.session_ms,
                other => return Err(SloParseError::UnknownKey(other.to_string())),
            };
            let v: f64 = value
                .parse()
                .ok()
                .filter(|v: &f64| v.is_finite() && *v >= 0.0)
                .ok_or_else(|| SloParseError::BadValue {
                    key: key.to_string(),
                    value: value.to_string(),
                })?;
            if slot.replace(v).is_some() {
                return Err(SloParseError::Duplicate(key.to_string()));
            }
            any = true;
        }
        if any {
            Ok(slo)
        } else {
            Err(SloParseError::Empty)
        }
    }
}

/// vLLM's goodput count: the successes meeting every SLO that is set, inclusive
/// (`slo_ms / 1000 >= value_s`); per success its TTFT, TPOT (0 for output ≤ 1) and E2EL, s.
pub(crate) fn goodput_count(
    slo: Option<Slo>,
    ttfts: &[f64],
    all_tpots: &[f64],
    e2els: &[f64],
    valid: &[bool],
) -> Option<u64> {
    slo.filter(Slo::judges_requests).map(|slo| {
        ttfts
            .iter()
            .zip(all_tpots)
            .zip(e2els)
            .zip(valid)
            .filter(|(((&ttft, &tpot), &e2el), &ok)| {
                meets_slo(&slo, ttft, tpot, e2el) && (ok || !slo.valid)
            })
            .count() as u64
    })
}

/// Whether one success (TTFT, TPOT — 0 for output ≤ 1 — and E2EL, s) meets every SLO
/// that is set, inclusive (`slo_ms / 1000 >= value_s`), as vLLM counts goodput.
#[inline]
pub(crate) fn meets_slo(slo: &Slo, ttft: f64, tpot: f64, e2el: f64) -> bool {
    let ok = |limit: Option<f64>, v: f64| limit.is_none_or(|ms| ms / 1000.0 >= v);
    ok(slo.ttft_ms, ttft) && ok(slo.tpot_ms, tpot) && ok(slo.e2el_ms, e2el)
}
