//! Deterministic synthetic runs for the metrics benchmarks and `scripts/numpy_metrics.py`
//! (shared by `benches/metrics.rs` and `examples/metrics_dataset.rs` through `#[path]`).
//!
//! Binary layout written by [`write_dataset`] (all little-endian, one file per array, in
//! a directory, plus `meta.json`): `sent_ns.u64`, `usage_out.u32` (0 = not reported),
//! `prompt.u32`, `success.u8`, `chunk_offsets.u64` (n + 1 prefix offsets into the chunk
//! arrays), `chunk_at_ns.u64`, `chunk_tokens.u32`.

#![allow(dead_code)]

use std::io::Write;
use std::path::Path;
use std::time::Duration;

use servebench::record::{Chunk, ErrorKind, Outcome, RequestRecord};

/// SplitMix64: a tiny, good-enough seeded PRNG.
pub struct SplitMix64(u64);

impl SplitMix64 {
    pub fn new(seed: u64) -> Self {
        SplitMix64(seed)
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in `[lo, hi)`.
    pub fn range(&mut self, lo: u64, hi: u64) -> u64 {
        lo + self.next_u64() % (hi - lo).max(1)
    }
}

/// `n` requests of `chunks` chunks each (±0 — every request has exactly `chunks` chunks so
/// the event count is exact), arriving at ~`rate` req/s; 1 % fail, 10 % report no usage,
/// 5 % of chunks carry 2–4 tokens (speculative decoding).
pub fn generate(n: usize, chunks: usize, rate: f64, seed: u64) -> Vec<RequestRecord> {
    let mut rng = SplitMix64::new(seed);
    let gap_ns = (1e9 / rate) as u64;
    let mut records = Vec::with_capacity(n);
    let mut t = 0u64;
    for id in 0..n {
        t += rng.range(gap_ns / 2, gap_ns * 3 / 2 + 1);
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

fn write_file(dir: &Path, name: &str, bytes: impl Iterator<Item = u8>) -> std::io::Result<()> {
    let mut w = std::fs::File::create(dir.join(name))?;
    let mut buf = Vec::with_capacity(1 << 20);
    for b in bytes {
        buf.push(b);
        if buf.len() == buf.capacity() {
            w.write_all(&buf)?;
            buf.clear();
        }
    }
    w.write_all(&buf)?;
    w.flush()
}

/// Write `records` in the layout described in the module docs.
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
    std::fs::write(dir.join("meta.json"), meta)
}
