//! Why a latency changed between two runs: a change of mean TTFT split into waiting for
//! admission (the API server, then the scheduler's queue) and prefill, and a change of mean
//! TPOT split into the batch size and the time each sequence costs a step, from the client
//! records and the server's metrics ([`ServerSeries`]).
//!
//! # How
//!
//! **TTFT.** The server's histograms give per-run means of its own TTFT (arrival at the API
//! server → first token: `vllm:time_to_first_token_seconds`), of the time queued in the
//! scheduler (`vllm:request_queue_time_seconds`) and of prefill (first scheduled → first
//! token: `vllm:request_prefill_time_seconds`). The API server's share is the server TTFT
//! less the other two. The client's mean TTFT also holds the network and the client; that
//! part is *assumed unchanged* between the runs, so what the parts leave of the measured
//! change is reported as "not explained".
//!
//! **TPOT.** The server's mean per-request TPOT (`vllm:request_time_per_output_token_seconds`)
//! is the time of one engine step as a decoding request saw it. The batch it was in is the
//! mean of `vllm:num_requests_running` weighted by the tokens generated between scrapes. The
//! step time is read as batch × time per sequence (the *assumption*: a step costs each
//! running sequence the same; every running request gains one token per step, i.e. no
//! speculative decoding). The change then splits exactly into a batch part (Δbatch × mean
//! time per sequence) and a step-cost part (Δtime per sequence × mean batch). What the
//! server's TPOT leaves of the client's (vLLM's definition) is "not explained".
//!
//! On the simulator every quantity is known: the parts add up to the measured changes within
//! 1 % (`tests/observe_explain.rs`).

use serde::{Deserialize, Serialize};

use super::series::{Known, ServerSeries};
use crate::metrics::request::vllm_tpot;
use crate::record::RequestRecord;

/// One run as [`explain`] reads it.
#[derive(Debug, Clone, Copy)]
pub struct RunView<'a> {
    /// A name for the run (its configuration).
    pub label: &'a str,
    /// The client's records.
    pub records: &'a [RequestRecord],
    /// The server's metrics, if scraped.
    pub server: Option<&'a ServerSeries>,
}

/// One share of a change.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Part {
    /// What it is (`"prefill"`, `"batch size"`, …).
    pub name: String,
    /// Its value in the base run (ms, or the part's own unit for factors).
    pub base: f64,
    /// Its value in the candidate run.
    pub candidate: f64,
    /// Its contribution to the change of the metric, ms.
    pub delta_ms: f64,
}

/// A metric's change and its parts.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Breakdown {
    /// `"TTFT"` or `"TPOT"`.
    pub metric: String,
    /// The client's mean in the base run, ms.
    pub base_ms: f64,
    /// The client's mean in the candidate run, ms.
    pub candidate_ms: f64,
    /// The parts; their `delta_ms` add up to the measured change less `unexplained_ms`.
    pub parts: Vec<Part>,
    /// Measured change − Σ parts, ms.
    pub unexplained_ms: f64,
    /// What the split assumes.
    pub assumptions: Vec<String>,
}

impl Breakdown {
    /// The measured change, ms.
    pub fn delta_ms(&self) -> f64 {
        self.candidate_ms - self.base_ms
    }

    /// Σ of the parts' contributions, ms.
    pub fn explained_ms(&self) -> f64 {
        self.parts.iter().map(|p| p.delta_ms).sum()
    }
}

/// Both breakdowns, or why one is missing.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Explanation {
    /// The base run's label.
    pub base: String,
    /// The candidate run's label.
    pub candidate: String,
    /// The TTFT breakdown, if both runs have the data.
    pub ttft: Option<Breakdown>,
    /// The TPOT breakdown, if both runs have the data.
    pub tpot: Option<Breakdown>,
    /// Why a breakdown is missing.
    pub notes: Vec<String>,
}

fn mean(v: impl Iterator<Item = f64>) -> Option<f64> {
    let (s, n) = v.fold((0.0, 0usize), |(s, n), x| (s + x, n + 1));
    (n > 0).then(|| s / n as f64)
}

/// The client's mean TTFT over successful requests, ms.
pub fn client_ttft_ms(records: &[RequestRecord]) -> Option<f64> {
    mean(
        records
            .iter()
            .filter(|r| r.outcome.is_success())
            .filter_map(|r| r.ttft())
            .map(|d| d.as_secs_f64() * 1e3),
    )
}

/// The client's mean TPOT (vLLM's, [`vllm_tpot`]: (E2EL − TTFT) ÷ (tokens − 1)) over
/// successful requests with more than one token, ms.
pub fn client_tpot_ms(records: &[RequestRecord]) -> Option<f64> {
    mean(
        records
            .iter()
            .filter(|r| r.outcome.is_success())
            .filter_map(|r| vllm_tpot(r).map(|d| d.as_secs_f64() * 1e3)),
    )
}

/// The mean running batch as generated tokens saw it: `vllm:num_requests_running` at each
/// scrape, weighted by the tokens generated until the next. `None` when no token was
/// generated between scrapes, or when the scrapes saw no request running while tokens were
/// generated (a run shorter than the scrape interval: every scrape fell before the first
/// request or after the last, and the batch is unknown, not zero).
pub fn token_weighted_batch(s: &ServerSeries) -> Option<f64> {
    let running = s.known(Known::Running)?;
    let gen = s.known(Known::GenerationTokens)?;
    let (mut num, mut den) = (0.0, 0.0);
    for i in 0..s.len().saturating_sub(1) {
        if let (Some(b), Some(g0), Some(g1)) = (running[i], gen[i], gen[i + 1]) {
            let tokens = (g1 - g0).max(0.0);
            // The batch during the interval: the mean of its two ends.
            let b = running[i + 1].map_or(b, |b1| (b + b1) / 2.0);
            num += b * tokens;
            den += tokens;
        }
    }
    (den > 0.0 && num > 0.0).then(|| num / den)
}

/// Why the server's histograms cannot be set beside the client's records of `records`:
/// the server's mean end-to-end latency is longer than the client's, which the server's
/// part of each request cannot be (its interval lies inside the client's). A server whose
/// clock runs faster than the wall clock (the example server at `--speed X` reports
/// virtual seconds) or histograms that cover other requests (a server also serving
/// others) do that. 5 % and 1 ms of slack cover the warm-up requests the histograms hold.
fn clock_mismatch(label: &str, s: &ServerSeries, records: &[RequestRecord]) -> Option<String> {
    let server_ms = wall_ms(s, "vllm:e2e_request_latency_seconds")?;
    let client_ms = mean(
        records
            .iter()
            .filter(|r| r.outcome.is_success())
            .filter_map(|r| r.latency().map(|d| d.as_secs_f64() * 1e3)),
    )?;
    (server_ms > client_ms * 1.05 + 1.0).then(|| {
        format!(
            "{label}: the server's mean end-to-end latency ({server_ms:.1} ms) exceeds the \
             client's ({client_ms:.1} ms, {:.1}×): the server's clock is not the client's (a \
             sped-up simulator that does not say its speed) or its histograms hold other \
             requests; its parts are not set beside the client's figures",
            server_ms / client_ms
        )
    })
}

/// `b` when every figure in it is finite; else `None`, with a note.
fn finite(b: Breakdown, notes: &mut Vec<String>) -> Option<Breakdown> {
    let figures = [b.base_ms, b.candidate_ms, b.unexplained_ms]
        .into_iter()
        .chain(
            b.parts
                .iter()
                .flat_map(|p| [p.base, p.candidate, p.delta_ms]),
        );
    let ok = figures.into_iter().all(f64::is_finite);
    if !ok {
        notes.push(format!(
            "{}: a part of the split is not a finite number (too few scrapes inside the run); not split",
            b.metric
        ));
    }
    ok.then_some(b)
}

struct TtftServer {
    ttft_ms: f64,
    queue_ms: f64,
    prefill_ms: f64,
}

/// The mean of histogram `family` in wall-clock ms: the server's seconds over its clock
/// speed ([`ServerSeries::clock_speed`]).
fn wall_ms(s: &ServerSeries, family: &str) -> Option<f64> {
    Some(s.histogram_mean(family)? * 1e3 / s.clock_speed())
}

fn ttft_server(s: &ServerSeries) -> Option<TtftServer> {
    Some(TtftServer {
        ttft_ms: wall_ms(s, "vllm:time_to_first_token_seconds")?,
        queue_ms: wall_ms(s, "vllm:request_queue_time_seconds")?,
        prefill_ms: wall_ms(s, "vllm:request_prefill_time_seconds")?,
    })
}

/// The assumption a split makes when a server's clock is not the wall clock.
fn speed_assumptions(servers: [&ServerSeries; 2]) -> Vec<String> {
    let speeds: Vec<f64> = servers.iter().map(|s| s.clock_speed()).collect();
    if speeds.iter().all(|&x| x == 1.0) {
        return Vec::new();
    }
    vec![format!(
        "the server's histograms run on its own clock ({} server seconds per wall second, \
         servebench_clock_speed): divided by it",
        speeds
            .iter()
            .map(|x| format!("{x}"))
            .collect::<Vec<_>>()
            .join(" and ")
    )]
}

fn part(name: &str, base: f64, candidate: f64, delta_ms: f64) -> Part {
    Part {
        name: name.into(),
        base,
        candidate,
        delta_ms,
    }
}

/// Explains the change from `base` to `candidate`; see the module docs.
pub fn explain(base: &RunView, candidate: &RunView) -> Explanation {
    let mut notes = Vec::new();
    let servers = match (base.server, candidate.server) {
        (Some(a), Some(b)) => {
            let mismatch: Vec<String> = [
                clock_mismatch(base.label, a, base.records),
                clock_mismatch(candidate.label, b, candidate.records),
            ]
            .into_iter()
            .flatten()
            .collect();
            if mismatch.is_empty() {
                Some((a, b))
            } else {
                notes.extend(mismatch);
                None
            }
        }
        _ => {
            notes.push(
                "no server metrics for one of the runs: the changes cannot be split (scrape /metrics during the runs)"
                    .into(),
            );
            None
        }
    };
    for (label, records) in [
        (base.label, base.records),
        (candidate.label, candidate.records),
    ] {
        if records.iter().any(|r| r.reasoning.is_some()) {
            notes.push(format!(
                "TTFT: {label} streamed reasoning; TTFT counts the first token of either stream (reasoning or answer), not the first answer token"
            ));
        }
    }
    let ttft = (|| {
        let (sa, sb) = servers?;
        let (ca, cb) = (
            client_ttft_ms(base.records)?,
            client_ttft_ms(candidate.records)?,
        );
        let (Some(a), Some(b)) = (ttft_server(sa), ttft_server(sb)) else {
            notes.push("TTFT: a run lacks vllm:time_to_first_token_seconds, vllm:request_queue_time_seconds or vllm:request_prefill_time_seconds".into());
            return None;
        };
        let api = |x: &TtftServer| x.ttft_ms - x.queue_ms - x.prefill_ms;
        let parts = vec![
            part(
                "admission wait: API server",
                api(&a),
                api(&b),
                api(&b) - api(&a),
            ),
            part(
                "admission wait: scheduler queue",
                a.queue_ms,
                b.queue_ms,
                b.queue_ms - a.queue_ms,
            ),
            part(
                "prefill",
                a.prefill_ms,
                b.prefill_ms,
                b.prefill_ms - a.prefill_ms,
            ),
        ];
        let explained: f64 = parts.iter().map(|p| p.delta_ms).sum();
        let b = Breakdown {
            metric: "TTFT".into(),
            base_ms: ca,
            candidate_ms: cb,
            parts,
            unexplained_ms: (cb - ca) - explained,
            assumptions: vec![
                "the network and the client add the same time to TTFT in both runs".into(),
                "the server's histograms cover the same requests as the client's records".into(),
            ]
            .into_iter()
            .chain(speed_assumptions([sa, sb]))
            .collect(),
        };
        finite(b, &mut notes)
    })();
    let tpot = (|| {
        let (sa, sb) = servers?;
        let (ca, cb) = (
            client_tpot_ms(base.records)?,
            client_tpot_ms(candidate.records)?,
        );
        let name = "vllm:request_time_per_output_token_seconds";
        let (Some(ta), Some(tb)) = (sa.histogram_mean(name), sb.histogram_mean(name)) else {
            notes.push(format!("TPOT: a run lacks {name}"));
            return None;
        };
        let (Some(ba), Some(bb)) = (token_weighted_batch(sa), token_weighted_batch(sb)) else {
            let lacks = [sa, sb].iter().any(|s| {
                s.known(Known::Running).is_none() || s.known(Known::GenerationTokens).is_none()
            });
            notes.push(if lacks {
                "TPOT: a run lacks vllm:num_requests_running or vllm:generation_tokens_total".into()
            } else {
                "TPOT: a run's scrapes saw no request running while tokens were generated \
                 (the run is shorter than the scrape interval): its batch is unknown; scrape \
                 more often"
                    .into()
            });
            return None;
        };
        for (label, s, records) in [
            (base.label, sa, base.records),
            (candidate.label, sb, candidate.records),
        ] {
            if let Some(f) = super::gpu::spec_decode_figures(s) {
                // Each figure the counters give (a server without the draft-token counter
                // has no acceptance rate: none is shown rather than 0 %).
                let figures: Vec<String> = [
                    f.acceptance_rate
                        .map(|a| format!("acceptance {:.0} %", a * 100.0)),
                    f.mean_accepted_length
                        .map(|l| format!("mean accepted length {l:.2}")),
                    crate::metrics::production::tokens_per_chunk(records)
                        .map(|t| format!("{t:.2} tokens per streamed chunk")),
                ]
                .into_iter()
                .flatten()
                .collect();
                let figures = if figures.is_empty() {
                    String::new()
                } else {
                    format!(" ({})", figures.join(", "))
                };
                notes.push(format!(
                    "TPOT: {label} used speculative decoding{figures}: a step then yields more than one token per request and the batch/step split overstates the step time"
                ));
            }
        }
        // While tokens are generated at least one request runs: a lower mean is the
        // scrapes missing the batch, taken as 1 and said.
        if ba < 1.0 || bb < 1.0 {
            notes.push(
                "TPOT: the scrapes saw fewer than one request running on average while tokens \
                 were generated (they miss most of the batch: scrape more often); the batch \
                 is taken as 1"
                    .into(),
            );
        }
        let (ba, bb) = (ba.max(1.0), bb.max(1.0));
        let (ta, tb) = (ta * 1e3 / sa.clock_speed(), tb * 1e3 / sb.clock_speed());
        let (pa, pb) = (ta / ba, tb / bb);
        let parts = vec![
            part("batch size", ba, bb, (bb - ba) * (pa + pb) / 2.0),
            part(
                "step time per sequence",
                pa,
                pb,
                (pb - pa) * (ba + bb) / 2.0,
            ),
        ];
        let explained: f64 = parts.iter().map(|p| p.delta_ms).sum();
        let b = Breakdown {
            metric: "TPOT".into(),
            base_ms: ca,
            candidate_ms: cb,
            parts,
            unexplained_ms: (cb - ca) - explained,
            assumptions: vec![
                "TPOT is the engine's step time: a step costs each running sequence the same, batch × time per sequence".into(),
                "every running request gains one token per step (no speculative decoding)".into(),
                "the batch is vllm:num_requests_running weighted by the tokens generated between scrapes".into(),
            ]
            .into_iter()
            .chain(speed_assumptions([sa, sb]))
            .collect(),
        };
        finite(b, &mut notes)
    })();
    // A note said of both runs (the same file twice) once.
    let mut seen = std::collections::HashSet::new();
    notes.retain(|n| seen.insert(n.clone()));
    Explanation {
        base: base.label.into(),
        candidate: candidate.label.into(),
        ttft,
        tpot,
        notes,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::observe::prom::Sample;
    use crate::record::Chunk;
    use std::time::Duration;

    fn records(ttft_ms: u64, tpot_ms: u64) -> Vec<RequestRecord> {
        (0..4)
            .map(|i| {
                let mut r = RequestRecord::new(i, Duration::ZERO);
                for k in 0..5 {
                    r.chunks.push(Chunk {
                        at: Duration::from_millis(ttft_ms + k * tpot_ms),
                        tokens: 1,
                    });
                }
                r.ended_at = r.chunks.last().map(|c| c.at);
                r
            })
            .collect()
    }

    fn hist(name: &str, mean_s: f64, out: &mut Vec<Sample>, n: f64) {
        out.push(Sample::new(format!("{name}_sum"), mean_s * n));
        out.push(Sample::new(format!("{name}_count"), n));
    }

    fn series(ttft: f64, queue: f64, prefill: f64, tpot: f64, batch: f64) -> ServerSeries {
        series_with(ttft, queue, prefill, tpot, batch, &|_| Vec::new())
    }

    /// [`series`] with `extra(n)` in each scrape (`n`: the requests finished by then).
    fn series_with(
        ttft: f64,
        queue: f64,
        prefill: f64,
        tpot: f64,
        batch: f64,
        extra: &dyn Fn(f64) -> Vec<Sample>,
    ) -> ServerSeries {
        let mut s = ServerSeries::new("x", 1.0);
        for (t, n) in [(0.0, 0.0), (1.0, 4.0)] {
            let mut v = extra(n);
            v.extend([
                Sample::new("vllm:num_requests_running", batch),
                Sample::new("vllm:generation_tokens_total", 20.0 * n),
            ]);
            hist("vllm:time_to_first_token_seconds", ttft, &mut v, n);
            hist("vllm:request_queue_time_seconds", queue, &mut v, n);
            hist("vllm:request_prefill_time_seconds", prefill, &mut v, n);
            hist(
                "vllm:request_time_per_output_token_seconds",
                tpot,
                &mut v,
                n,
            );
            s.push(t, v);
        }
        s
    }

    /// A run shorter than the scrape interval: both scrapes saw no request running while
    /// 80 tokens were generated. The batch is unknown, not zero: no TPOT split (it was
    /// `inf` per sequence and `NaN` shares), a note that says why, nothing non-finite in
    /// the text.
    #[test]
    fn a_run_between_two_scrapes_gets_no_tpot_split_and_no_infinities() {
        let (ra, rb) = (records(1000, 40), records(700, 30));
        let sa = series(0.99, 0.6, 0.34, 0.040, 0.0);
        let sb = series(0.69, 0.4, 0.24, 0.030, 0.0);
        let view = |label, records, server| RunView {
            label,
            records,
            server: Some(server),
        };
        let e = explain(&view("a", &ra, &sa), &view("b", &rb, &sb));
        assert!(e.tpot.is_none());
        assert!(
            e.notes.iter().any(|n| n.contains("batch is unknown")),
            "{:?}",
            e.notes
        );
        let text = format!("{}{}", e.render(), e.paragraph());
        for bad in ["inf", "NaN", "nan"] {
            assert!(!text.contains(bad), "{text}");
        }
    }

    /// The server's clock runs 8× the client's (the example server at `--speed 8`): its
    /// mean end-to-end latency is longer than the client's, which cannot be; the parts are
    /// not set beside the client's TTFT (they once put a 25.9-ms prefill inside a 5.4-ms
    /// TTFT) and a note says why, once per run.
    #[test]
    fn a_server_clock_faster_than_the_clients_is_refused() {
        let (ra, rb) = (records(10, 4), records(10, 4));
        let server = series_with(0.08, 0.01, 0.06, 0.032, 8.0, &|n| {
            let mut v = Vec::new();
            hist("vllm:e2e_request_latency_seconds", 8.0 * 0.026, &mut v, n);
            v
        });
        let view = |label, records| RunView {
            label,
            records,
            server: Some(&server),
        };
        let e = explain(&view("a", &ra), &view("a", &rb));
        assert!(e.ttft.is_none() && e.tpot.is_none());
        let clock: Vec<&String> = e
            .notes
            .iter()
            .filter(|n| n.contains("the server's clock is not the client's"))
            .collect();
        assert_eq!(clock.len(), 1, "{:?}", e.notes);
        assert!(clock[0].contains("(208.0 ms) exceeds the client's (26.0 ms, 8.0×)"));
    }

    #[test]
    fn parts_are_the_server_means_and_the_rest_is_unexplained() {
        let (ra, rb) = (records(1000, 40), records(700, 30));
        // Server: TTFT 0.99 s = 0.05 API + 0.6 queue + 0.34 prefill; then 0.69 = 0.05 + 0.4 + 0.24.
        let sa = series(0.99, 0.6, 0.34, 0.040, 8.0);
        let sb = series(0.69, 0.4, 0.24, 0.030, 12.0);
        let e = explain(
            &RunView {
                label: "a",
                records: &ra,
                server: Some(&sa),
            },
            &RunView {
                label: "b",
                records: &rb,
                server: Some(&sb),
            },
        );
        let t = e.ttft.as_ref().unwrap();
        assert_eq!((t.base_ms, t.candidate_ms), (1000.0, 700.0));
        let d: Vec<f64> = t
            .parts
            .iter()
            .map(|p| (p.delta_ms * 1e6).round() / 1e6)
            .collect();
        assert_eq!(d, vec![0.0, -200.0, -100.0]);
        assert!(t.unexplained_ms.abs() < 1e-9, "{}", t.unexplained_ms);
        let p = e.tpot.as_ref().unwrap();
        assert_eq!((p.base_ms, p.candidate_ms), (40.0, 30.0));
        // 40 ms / 8 = 5 ms per sequence; 30 / 12 = 2.5. Batch: +4 × 3.75 = +15 ms;
        // per sequence: −2.5 × 10 = −25 ms.
        assert!((p.parts[0].delta_ms - 15.0).abs() < 1e-9);
        assert!((p.parts[1].delta_ms + 25.0).abs() < 1e-9);
        assert!(p.unexplained_ms.abs() < 1e-9);
        let text = e.render();
        assert!(text.contains("admission wait: scheduler queue"), "{text}");
        assert!(
            e.paragraph().contains("prefill -100.0 ms"),
            "{}",
            e.paragraph()
        );
    }

    #[test]
    fn the_speculative_decoding_note_shows_only_the_figures_the_counters_give() {
        let r = records(100, 10);
        let with_spec = |draft_tokens: bool| {
            // 25 drafts per finished request, 2 draft tokens each, 0.6 accepted per draft.
            let s = series_with(0.1, 0.05, 0.04, 0.010, 4.0, &|n| {
                let mut v = vec![
                    Sample::new("vllm:spec_decode_num_drafts_total", 25.0 * n),
                    Sample::new("vllm:spec_decode_num_accepted_tokens_total", 15.0 * n),
                ];
                if draft_tokens {
                    v.push(Sample::new(
                        "vllm:spec_decode_num_draft_tokens_total",
                        50.0 * n,
                    ));
                }
                v
            });
            let view = RunView {
                label: "mtp",
                records: &r,
                server: Some(&s),
            };
            let e = explain(&view, &view);
            e.notes
                .iter()
                .find(|n| n.contains("used speculative decoding"))
                .cloned()
                .unwrap()
        };
        assert!(
            with_spec(true).starts_with(
                "TPOT: mtp used speculative decoding (acceptance 30 %, mean accepted length 1.60, 1.00 tokens per streamed chunk): "
            ),
            "{}",
            with_spec(true)
        );
        assert!(
            with_spec(false).starts_with(
                "TPOT: mtp used speculative decoding (mean accepted length 1.60, 1.00 tokens per streamed chunk): "
            ),
            "{}",
            with_spec(false)
        );
    }

    #[test]
    fn without_server_metrics_it_says_so() {
        let r = records(100, 10);
        let e = explain(
            &RunView {
                label: "a",
                records: &r,
                server: None,
            },
            &RunView {
                label: "b",
                records: &r,
                server: None,
            },
        );
        assert!(e.ttft.is_none() && e.tpot.is_none());
        assert!(e.render().contains("no server metrics"), "{}", e.render());
    }
}
