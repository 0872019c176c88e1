//! The one check every loaded run passes, whatever its format: no time past any plausible
//! clock. A record time or a duration of more than [`PLAUSIBLE_S`] (ten years) after the
//! run's start is a corrupt or hostile file, not a measurement — refused with the run,
//! request and field named, so that no verb ever prints an 18-quintillion-second duration.
//! Values that are impossible but readable (a chunk before its send, a peak below the mean)
//! are `lint`'s (`impossible-timing`, `peak-below-mean`).

use std::time::Duration;

use super::Run;
use crate::record::RequestRecord;
use crate::result::BenchmarkResult;

/// The latest a time may be after its run's start, in seconds (ten years).
pub const PLAUSIBLE_S: u64 = 10 * 365 * 24 * 3600;

fn late(d: Duration) -> bool {
    d > Duration::from_secs(PLAUSIBLE_S)
}

fn past_clock(what: String, value_s: f64) -> String {
    format!(
        "{what} is {value_s:.0} s after the run's start, past any plausible clock (at most \
         {PLAUSIBLE_S} s, ten years)"
    )
}

/// Why `run` cannot be true, if it cannot (see [`implausible`]).
pub(crate) fn check(run: &Run) -> Result<(), String> {
    let records = run.records.as_ref();
    implausible(
        &run.result,
        records.map_or(&[][..], |r| &r.all[..]),
        records.and_then(|r| r.window),
    )
    .map_or(Ok(()), Err)
}

/// What in `result`, `records` or the measured `window` cannot be a measurement, if
/// anything: the check [`super::load`] makes of every run, for readers of a servebench run
/// file that do not go through it.
///
/// ```
/// use std::time::Duration;
/// use servebench::load::implausible;
/// use servebench::record::RequestRecord;
/// use servebench::result::BenchmarkResult;
/// let mut r = RequestRecord::new(3, Duration::from_secs(1));
/// r.ended_at = Some(Duration::from_secs(u64::MAX));
/// let why = implausible(&BenchmarkResult::default(), &[r.clone()], None).unwrap();
/// assert!(why.starts_with("request 3: ended_at is 18446744073709551616 s after the run's start"), "{why}");
/// r.ended_at = Some(Duration::from_secs(2));
/// assert_eq!(implausible(&BenchmarkResult::default(), &[r], None), None);
/// ```
pub fn implausible(
    result: &BenchmarkResult,
    records: &[RequestRecord],
    window: Option<(Duration, Duration)>,
) -> Option<String> {
    inner(result, records, window).err()
}

fn inner(
    r: &BenchmarkResult,
    records: &[RequestRecord],
    window: Option<(Duration, Duration)>,
) -> Result<(), String> {
    {
        for r in records {
            let times = [
                ("scheduled_at", r.scheduled_at),
                ("sent_at", Some(r.sent_at)),
                ("ended_at", r.ended_at),
            ];
            for (field, t) in times {
                if let Some(t) = t.filter(|t| late(*t)) {
                    return Err(past_clock(
                        format!("request {}: {field}", r.id),
                        t.as_secs_f64(),
                    ));
                }
            }
            if let Some((i, c)) = r.chunks.iter().enumerate().find(|(_, c)| late(c.at)) {
                return Err(past_clock(
                    format!("request {}: chunks[{i}].at", r.id),
                    c.at.as_secs_f64(),
                ));
            }
        }
        if let Some((a, b)) = window {
            if late(a) || late(b) {
                return Err(past_clock(
                    "the measured window".into(),
                    a.max(b).as_secs_f64(),
                ));
            }
        }
    }
    if let Some(ms) = r.duration_ms.filter(|ms| ms.is_finite()) {
        if ms / 1000.0 > PLAUSIBLE_S as f64 {
            return Err(past_clock("the duration".into(), ms / 1000.0));
        }
    }
    if let Some(ms) = r
        .e2el
        .as_ref()
        .and_then(|s| s.max)
        .filter(|ms| ms.is_finite())
    {
        if ms / 1000.0 > PLAUSIBLE_S as f64 {
            return Err(past_clock(
                "the longest request (max E2EL)".into(),
                ms / 1000.0,
            ));
        }
    }
    Ok(())
}
