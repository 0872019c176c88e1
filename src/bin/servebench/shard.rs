//! The shard flags of `servebench bench` (`--shard K/N`, `--start-at TIME|barrier:DIR`):
//! resolving the common start instant before the run.

use std::time::{Duration, SystemTime};

use servebench::driver::Shard;
use servebench::driver::{rfc3339, BarrierOptions, StartAt};

use crate::input::InputError;

/// A start further in the past than this is reported (the shard starts at once).
const LATE_WARNING: Duration = Duration::from_millis(100);

/// The wall-clock start: `--start-at`'s time, or the barrier's (waiting for the other
/// shards there); `None` without `--start-at`.
pub fn start_instant(
    shard: Option<Shard>,
    start_at: Option<&StartAt>,
) -> Result<Option<SystemTime>, InputError> {
    let Some(start_at) = start_at else {
        return Ok(None);
    };
    let shard = shard.unwrap_or(Shard::WHOLE);
    if let StartAt::Barrier(dir) = start_at {
        eprintln!(
            "servebench: shard {shard} waiting at the barrier in {}",
            dir.display()
        );
    }
    let t = start_at
        .resolve(shard, &BarrierOptions::default())
        .map_err(|e| InputError(format!("--start-at: {e}")))?;
    match SystemTime::now().duration_since(t) {
        Ok(late) if late > LATE_WARNING => eprintln!(
            "servebench: shard {shard}: the start {} passed {:.3} s ago; starting now",
            rfc3339(t),
            late.as_secs_f64()
        ),
        _ => eprintln!("servebench: shard {shard} starts at {}", rfc3339(t)),
    }
    Ok(Some(t))
}
