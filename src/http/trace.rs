//! W3C Trace Context (<https://www.w3.org/TR/trace-context/>) for the requests a run sends:
//! one trace per run ([`TraceId`], random), one span per request, its id derived from the
//! trace and the request's id, sent as the `traceparent` header
//! (`00-TRACE_ID-SPAN_ID-01`, sampled). A server that traces (vLLM with
//! `--otlp-traces-endpoint`) makes its span for the request a child of that span, so the
//! server's spans of a run are found by the run's trace id (its run file's `trace_id`
//! label), and each one's parent span id names the request: [`TraceId::span_of`]. Each
//! shard of a sharded run has a trace of its own; the merged run's label lists them all,
//! comma-separated, in shard order.
//!
//! ```
//! use servebench::http::trace::TraceId;
//! let t = TraceId::from_hex("4bf92f3577b34da6a3ce929d0e0e4736").unwrap();
//! let header = t.traceparent(7);
//! assert!(header.starts_with("00-4bf92f3577b34da6a3ce929d0e0e4736-"));
//! assert!(header.ends_with("-01"));
//! assert_eq!(header.len(), 55);
//! // The span of request 7 is the same every time, and another request's differs.
//! assert_eq!(t.span_of(7), t.span_of(7));
//! assert_ne!(t.span_of(7), t.span_of(8));
//! assert_eq!(header[36..52], format!("{:016x}", t.span_of(7)));
//! ```

/// A run's trace id: 16 bytes, never all zero.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct TraceId(u128);

fn mix(mut z: u64) -> u64 {
    // SplitMix64's finalizer.
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

impl TraceId {
    /// A new random trace id (the clock, the process id and a counter, mixed: trace ids of
    /// runs must not repeat, and need not be secret).
    pub fn random() -> TraceId {
        use std::sync::atomic::{AtomicU64, Ordering};
        static COUNTER: AtomicU64 = AtomicU64::new(0);
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos() as u64);
        let n = COUNTER.fetch_add(1, Ordering::Relaxed);
        let a = mix(nanos ^ u64::from(std::process::id()).rotate_left(32));
        let b = mix(a ^ n.wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ 0x7472_6163_6569_6421);
        TraceId((u128::from(a) << 64 | u128::from(b)).max(1))
    }

    /// The trace id written as 32 lowercase hex digits; `None` for anything else or all
    /// zeros (an invalid trace id in W3C's rules).
    pub fn from_hex(hex: &str) -> Option<TraceId> {
        if hex.len() != 32 || !hex.bytes().all(|b| b.is_ascii_hexdigit()) {
            return None;
        }
        u128::from_str_radix(hex, 16)
            .ok()
            .filter(|v| *v != 0)
            .map(TraceId)
    }

    /// 32 lowercase hex digits.
    pub fn hex(&self) -> String {
        format!("{:032x}", self.0)
    }

    /// The span id of request `id` in this trace (never zero).
    pub fn span_of(&self, id: u64) -> u64 {
        let s = mix((self.0 as u64) ^ mix(id ^ (self.0 >> 64) as u64));
        s.max(1)
    }

    /// The `traceparent` header of request `id`: version 00, sampled.
    pub fn traceparent(&self, id: u64) -> String {
        format!("00-{:032x}-{:016x}-01", self.0, self.span_of(id))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_valid_and_do_not_repeat() {
        let a = TraceId::random();
        let b = TraceId::random();
        assert_ne!(a, b);
        assert_eq!(TraceId::from_hex(&a.hex()), Some(a));
        for bad in [
            "",
            "00000000000000000000000000000000",
            "4BF92F3577B34DA6A3CE929D0E0E47",
            "xyz",
        ] {
            assert_eq!(TraceId::from_hex(bad), None, "{bad}");
        }
        let spans: std::collections::HashSet<u64> = (0..10_000).map(|i| a.span_of(i)).collect();
        assert_eq!(spans.len(), 10_000);
        assert!(!spans.contains(&0));
    }
}
