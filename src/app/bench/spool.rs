//! A soak's records (`bench --duration`): each finished request is written whole to a
//! spool file (JSON Lines, flushed as it ends, so an interrupted or killed soak keeps every
//! request so far) and kept in memory only as a slim copy ([`slim`]: its first chunk, the
//! first reasoning and answer chunks, and its last chunk, each carrying the tokens of the
//! chunks dropped before it), so the client's memory per request is a few hundred bytes
//! whatever the output length. The slim copy keeps TTFT, the time to the first answer,
//! E2EL, token counts and TPOT exactly; vLLM's ITL (every chunk gap) is kept in a
//! streaming histogram fed from the whole record ([`crate::stats::Streaming`]'s error
//! bound), and the run file is written with the whole records copied from the spool, so
//! `report` recomputes every figure exactly.

use std::fs::File;
use std::io::{BufWriter, Write as _};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use super::BenchError;
use crate::collector::RecordSink;
use crate::record::{Chunk, RequestRecord};
use crate::stats::Streaming;

/// How a soak keeps its records (`bench --duration`): streamed as they end, slim in
/// memory.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct SoakRecords {
    /// The spool file for the whole records (the binary puts it beside the output and
    /// copies it into the run file at the end); `None`: the whole records are not kept.
    pub spool: Option<PathBuf>,
}

/// Where a soak's whole records go while it runs.
#[derive(Debug)]
pub(crate) struct Spool {
    path: Option<PathBuf>,
    state: Arc<Mutex<State>>,
}

#[derive(Debug)]
struct State {
    out: Option<BufWriter<File>>,
    records: u64,
    itl: Streaming,
    error: Option<String>,
}

/// What a soak's spool holds once the run is over.
#[derive(Debug, Clone, PartialEq)]
pub struct Spooled {
    /// The spool file (JSON Lines, one whole record per line); `None`: the whole records
    /// were not kept (no `--output`).
    pub path: Option<PathBuf>,
    /// Records written.
    pub records: u64,
    /// vLLM's inter-token latencies (every chunk gap of every successful request).
    pub itl: Streaming,
}

impl Spool {
    /// A spool writing to `path` (created, truncated), or keeping no whole record.
    pub(crate) fn create(path: Option<&Path>) -> Result<Spool, BenchError> {
        let out = match path {
            Some(p) => Some(BufWriter::new(File::create(p).map_err(|e| {
                BenchError::Write {
                    path: p.display().to_string(),
                    message: e.to_string(),
                }
            })?)),
            None => None,
        };
        Ok(Spool {
            path: path.map(Path::to_path_buf),
            state: Arc::new(Mutex::new(State {
                out,
                records: 0,
                itl: Streaming::new(),
                error: None,
            })),
        })
    }

    /// The sink the driver hands each finished record to.
    pub(crate) fn sink(&self) -> RecordSink {
        let state = Arc::clone(&self.state);
        RecordSink::new(move |r| {
            let mut s = match state.lock() {
                Ok(g) => g,
                Err(p) => p.into_inner(),
            };
            if crate::metrics::vllm_success(&r) {
                for gap in crate::metrics::vllm_itl_gaps(&r) {
                    s.itl.record(gap);
                }
            }
            s.records += 1;
            if let Some(out) = s.out.as_mut() {
                let written = serde_json::to_writer(&mut *out, &r)
                    .map_err(|e| e.to_string())
                    .and_then(|()| out.write_all(b"\n").map_err(|e| e.to_string()))
                    .and_then(|()| out.flush().map_err(|e| e.to_string()));
                if let Err(e) = written {
                    s.error.get_or_insert(e);
                }
            }
            Some(slim(r))
        })
    }

    /// The spool once the run is over (its file flushed); an error names the file if a
    /// write failed.
    pub(crate) fn finish(self) -> Result<Spooled, BenchError> {
        let mut s = match self.state.lock() {
            Ok(g) => g,
            Err(p) => p.into_inner(),
        };
        let write_err = |message: String| BenchError::Write {
            path: self
                .path
                .as_ref()
                .map_or(String::new(), |p| p.display().to_string()),
            message,
        };
        if let Some(e) = s.error.take() {
            return Err(write_err(e));
        }
        if let Some(out) = s.out.as_mut() {
            out.flush().map_err(|e| write_err(e.to_string()))?;
        }
        Ok(Spooled {
            path: self.path.clone(),
            records: s.records,
            itl: std::mem::take(&mut s.itl),
        })
    }
}

/// `r` with only the chunks the slim figures need: the first, the first reasoning and the
/// first answer chunk, and the last; each kept chunk carries the tokens of the chunks
/// dropped just before it, so token counts, TTFT, the time to the first answer, E2EL and
/// TPOT are unchanged (not the gaps between chunks: vLLM's ITL).
pub fn slim(mut r: RequestRecord) -> RequestRecord {
    let n = r.chunks.len();
    if n <= 2 {
        return r;
    }
    let split = r.reasoning;
    let mut keep: Vec<usize> = vec![0, n - 1];
    if let Some(s) = split {
        keep.extend(s.first_reasoning_chunk.map(|i| i as usize));
        keep.extend(s.first_answer_chunk.map(|i| i as usize));
    }
    keep.retain(|&i| i < n);
    keep.sort_unstable();
    keep.dedup();
    let mut out = Vec::with_capacity(keep.len());
    let mut from = 0;
    for &k in &keep {
        let tokens = r.chunks[from..=k].iter().map(|c| c.tokens).sum();
        out.push(Chunk {
            at: r.chunks[k].at,
            tokens,
        });
        from = k + 1;
    }
    let position = |i: Option<u32>| {
        i.and_then(|i| keep.iter().position(|&k| k == i as usize))
            .and_then(|p| u32::try_from(p).ok())
    };
    if let (Some(s), Some(rs)) = (split, r.reasoning.as_mut()) {
        rs.first_reasoning_chunk = position(s.first_reasoning_chunk);
        rs.first_answer_chunk = position(s.first_answer_chunk);
    }
    r.chunks = out;
    r
}

/// vLLM's peak output throughput and peak concurrency over the whole records in the spool
/// at `path` ([`crate::metrics::vllm_peaks_streamed`]: two passes over the file, memory per
/// second of the run). A line that does not read is an error naming the file and line.
pub(crate) fn spooled_peaks(path: &Path) -> Result<(f64, f64), BenchError> {
    use std::io::BufRead as _;
    let failed: std::cell::RefCell<Option<String>> = std::cell::RefCell::new(None);
    let fail = |m: String| {
        failed.borrow_mut().get_or_insert(m);
    };
    let peaks = crate::metrics::vllm_peaks_streamed(|| {
        let lines = File::open(path)
            .map(|f| std::io::BufReader::new(f).lines())
            .map_err(|e| fail(e.to_string()))
            .into_iter()
            .flatten();
        lines.enumerate().filter_map(|(i, line)| {
            match line
                .map_err(|e| e.to_string())
                .and_then(|l| serde_json::from_str::<RequestRecord>(&l).map_err(|e| e.to_string()))
            {
                Ok(r) => Some(r),
                Err(e) => {
                    fail(format!("line {}: {e}", i + 1));
                    None
                }
            }
        })
    });
    match failed.into_inner() {
        Some(message) => Err(BenchError::Write {
            path: path.display().to_string(),
            message: format!("reading the spool back: {message}"),
        }),
        None => Ok(peaks),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::StreamSplit;
    use std::time::Duration;

    #[test]
    fn a_slim_record_keeps_every_per_request_figure_but_the_gaps() {
        let ms = Duration::from_millis;
        let mut r = RequestRecord::new(3, ms(10));
        for (i, t) in [30u64, 40, 45, 60, 70, 90].iter().enumerate() {
            r.chunks.push(Chunk {
                at: ms(*t),
                tokens: 1 + i as u32 % 2,
            });
        }
        r.ended_at = Some(ms(95));
        r.reasoning = Some(StreamSplit {
            first_reasoning_chunk: Some(0),
            first_answer_chunk: Some(3),
            reasoning_tokens: 4,
            answer_tokens: 5,
        });
        let s = slim(r.clone());
        assert_eq!(s.chunks.len(), 3);
        assert_eq!(s.client_output_tokens(), r.client_output_tokens());
        assert_eq!(s.ttft(), r.ttft());
        assert_eq!(s.latency(), r.latency());
        assert_eq!(s.time_to_first_answer(), r.time_to_first_answer());
        assert_eq!(crate::metrics::vllm_tpot(&s), crate::metrics::vllm_tpot(&r));
        assert_eq!(s.reasoning.unwrap().first_answer_chunk, Some(1));
    }
}
