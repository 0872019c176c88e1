//! Deterministic synthetic runs ([`generate`]) for the metrics benchmarks
//! (`benches/metrics.rs`), `examples/metrics_dataset.rs` and `scripts/numpy_metrics.py`,
//! and their binary array layout ([`write_dataset`]).
//!
//! Binary layout written by [`write_dataset`] (all little-endian, one file per array, in
//! a directory, plus `meta.json`): `sent_ns.u64`, `usage_out.u32` (0 = not reported),
//! `prompt.u32`, `success.u8`, `chunk_offsets.u64` (n + 1 prefix offsets into the chunk
//! arrays), `chunk_at_ns.u64`, `chunk_tokens.u32`. Each file is written to a temporary name and
//! renamed into place.
//!
//! ```
//! use servebench::record::synthetic::generate;
//! let run = generate(100, 10, 50.0, 42);
//! assert_eq!(run.len(), 100);
//! assert!(run.iter().all(|r| r.chunks.len() == 10));
//! assert_eq!(run, generate(100, 10, 50.0, 42)); // deterministic
//! ```

use std::path::Path;
use std::time::Duration;

use super::{Chunk, ErrorKind, Outcome, RequestRecord};

/// The generator of the synthetic runs (re-exported from [`crate::rng`], its home).
pub use crate::rng::SplitMix64;

/// `n` requests of `chunks` chunks each (±0 — every request has exactly `chunks` chunks so
/// the event count is exact), arriving at ~`rate` req/s; 1 % fail, 10 % report no usage,
/// 5 % of chunks carry 2–4 tokens (speculative decoding).
pub fn generate(n: usize, chunks: usize, rate: f64, seed: u64) -> Vec<RequestRecord> {
    let mut rng = SplitMix64::new(seed);
    let gap_ns = (1e9 / rate) as u64;
    let mut records = Vec::with_capacity(n);
    let mut t = 0u64;
    for id in 0..n {
        t += rng.range(gap_ns / 2, gap_ns.saturating_mul(3) / 2 + 1);
        let mut r = RequestRecord::new(id as u64, Duration::from_nanos(t));
        r.prompt_tokens = Some(rng.range(64, 2048));
        let mut at = t + rng.range(20_000_000, 400_000_000);
        let mut tokens = 0u64;
        r.chunks.reserve_exact(chunks);
        for _ in 0..chunks {
            let k = if rng.range(0, 100) < 5 {
                rng.range(2, 5) as u32
            } else {
                1
            };
            tokens += u64::from(k);
            r.chunks.push(Chunk {
                at: Duration::from_nanos(at),
                tokens: k,
            });
            at += rng.range(5_000_000, 60_000_000);
        }
        r.ended_at = r.chunks.last().map(|c| c.at);
        if rng.range(0, 100) >= 10 {
            r.usage_output_tokens = Some(tokens);
        }
        if rng.range(0, 100) == 0 {
            r.outcome = Outcome::Error {
                kind: ErrorKind::StreamCut,
                message: "cut".into(),
            };
        }
        records.push(r);
    }
    records
}

/// Write `bytes` to `dir/name` through a temporary file renamed into place.
fn write_file(dir: &Path, name: &str, bytes: impl Iterator<Item = u8>) -> std::io::Result<()> {
    crate::atomic::write_with(&dir.join(name), |w| {
        let mut buf = Vec::with_capacity(1 << 20);
        for b in bytes {
            buf.push(b);
            if buf.len() == buf.capacity() {
                w.write_all(&buf)?;
                buf.clear();
            }
        }
        w.write_all(&buf)
    })
}

/// Write `records` into the directory `dir` (created if missing) in the layout described
/// in the module docs.
pub fn write_dataset(dir: &Path, records: &[RequestRecord]) -> std::io::Result<()> {
    std::fs::create_dir_all(dir)?;
    let ns = |d: Duration| d.as_nanos() as u64;
    write_file(
        dir,
        "sent_ns.u64",
        records.iter().flat_map(|r| ns(r.sent_at).to_le_bytes()),
    )?;
    write_file(
        dir,
        "usage_out.u32",
        records
            .iter()
            .flat_map(|r| (r.usage_output_tokens.unwrap_or(0) as u32).to_le_bytes()),
    )?;
    write_file(
        dir,
        "prompt.u32",
        records
            .iter()
            .flat_map(|r| (r.input_tokens().unwrap_or(0) as u32).to_le_bytes()),
    )?;
    write_file(
        dir,
        "success.u8",
        records.iter().map(|r| u8::from(r.outcome.is_success())),
    )?;
    let mut offsets = Vec::with_capacity(records.len() + 1);
    let mut o = 0u64;
    offsets.push(o);
    for r in records {
        o += r.chunks.len() as u64;
        offsets.push(o);
    }
    write_file(
        dir,
        "chunk_offsets.u64",
        offsets.iter().flat_map(|o| o.to_le_bytes()),
    )?;
    write_file(
        dir,
        "chunk_at_ns.u64",
        records
            .iter()
            .flat_map(|r| r.chunks.iter().flat_map(|c| ns(c.at).to_le_bytes())),
    )?;
    write_file(
        dir,
        "chunk_tokens.u32",
        records
            .iter()
            .flat_map(|r| r.chunks.iter().flat_map(|c| c.tokens.to_le_bytes())),
    )?;
    let meta = format!("{{\"requests\": {}, \"chunks\": {}}}\n", records.len(), o);
    write_file(dir, "meta.json", meta.into_bytes().into_iter())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arrays_hold_the_records() {
        let run = generate(50, 4, 100.0, 7);
        assert!(run.iter().any(|r| r.usage_output_tokens.is_none()));
        let dir = std::env::temp_dir().join(format!("sb-synth-{}", std::process::id()));
        write_dataset(&dir, &run).unwrap();
        let read = |name: &str| std::fs::read(dir.join(name)).unwrap();
        let sent: Vec<u64> = read("sent_ns.u64")
            .chunks(8)
            .map(|b| u64::from_le_bytes(b.try_into().unwrap()))
            .collect();
        let want: Vec<u64> = run.iter().map(|r| r.sent_at.as_nanos() as u64).collect();
        assert_eq!(sent, want);
        assert_eq!(read("chunk_tokens.u32").len(), 50 * 4 * 4);
        let ok: Vec<bool> = read("success.u8").iter().map(|&b| b == 1).collect();
        let want: Vec<bool> = run.iter().map(|r| r.outcome.is_success()).collect();
        assert_eq!(ok, want);
        let meta = String::from_utf8(read("meta.json")).unwrap();
        assert_eq!(meta, "{\"requests\": 50, \"chunks\": 200}\n");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
