//! `servebench accuracy --truth TIMELINE CLIENT_FILE… [--format text|json]`: each client
//! file's requests joined to the example server's timeline (`h200_server --timeline`), and
//! the client's TTFT, ITL, TPOT and E2E error against the server's, its unmatched requests
//! and its throughput against the server's (see `servebench::accuracy`). Each block says
//! how its file was joined: by the ids it keeps, by request order (vLLM), or not at all
//! (SGLang: counts and throughput only, and why).

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use servebench::accuracy::{
    self, ClientAccuracy, ErrorStats, Join, JoinOptions, PrefixFrom, Throughput,
};

use crate::input::InputError;
use crate::output::TextOrJson;

/// Arguments of `servebench accuracy`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The server's timeline: `h200_server --serve … --timeline FILE` (or `GET /timeline`
    /// saved to a file), JSON Lines.
    #[arg(long, value_name = "TIMELINE")]
    truth: PathBuf,
    /// Client files with per-request records: servebench run files (`bench --output`),
    /// guidellm JSON/YAML reports, aiperf `profile_export.jsonl` (aiperf's printed figures
    /// from `profile_export_aiperf.json` beside it), `vllm bench serve --save-detailed`
    /// results (joined by request order); SGLang `bench_serving` results (not joinable:
    /// counts and throughput only).
    #[arg(value_name = "CLIENT_FILE", required = true)]
    clients: Vec<PathBuf>,
    /// vLLM's `--request-id-prefix` of the run (the same flag name as vLLM's): its request
    /// `i` was sent as `x-request-id: {prefix}{i}`. Without it, the one prefix whose ids in
    /// the timeline are exactly 0 … n−1 for the file's n requests is used.
    #[arg(long, value_name = "PREFIX")]
    request_id_prefix: Option<String>,
    /// Output format: `text`, a block per client run, then a summary table; `json`, an
    /// array, one object per client run.
    #[arg(long, value_enum, default_value_t)]
    format: TextOrJson,
}

/// The accuracy report.
pub fn run(args: &Args) -> Result<String, InputError> {
    let clients: Vec<&Path> = args.clients.iter().map(PathBuf::as_path).collect();
    let opts = JoinOptions {
        request_id_prefix: args.request_id_prefix.clone(),
    };
    let all = accuracy::measure_files_with(&args.truth, &clients, &opts)
        .map_err(crate::flagged::accuracy)?;
    match args.format {
        TextOrJson::Json => serde_json::to_string_pretty(&all)
            .map(|s| s + "\n")
            .map_err(|e| InputError(format!("cannot write JSON: {e}"))),
        TextOrJson::Text => Ok(text(&args.truth, &all)),
    }
}

fn signed(x: f64) -> String {
    format!("{x:+.3}")
}

fn opt(x: Option<f64>, digits: usize) -> String {
    x.map_or_else(|| "-".into(), |v| format!("{v:.digits$}"))
}

fn row(out: &mut String, name: &str, s: Option<&ErrorStats>) {
    match s {
        Some(s) => {
            let _ = writeln!(
                out,
                "  {name:<5} {:>7} {:>11} {:>11} {:>11} {:>11}",
                s.count,
                signed(s.median_ms),
                signed(s.p99_ms),
                signed(s.max_ms),
                format!("{:.3}", s.truth_median_ms),
            );
        }
        None => {
            let _ = writeln!(out, "  {name:<5} {:>7}", 0);
        }
    }
}

/// How a file was joined, for a human.
/// The output and request throughput lines: the client's figures beside the server's
/// (`server` names what the server's side covers).
fn throughput_lines(out: &mut String, t: &Throughput, server: &str) {
    let _ = writeln!(
        out,
        "  output throughput: client {} tok/s, {server} {} tok/s ({} %)",
        opt(t.client_output_tok_per_s, 1),
        opt(t.truth_output_tok_per_s, 1),
        t.output_error_pct
            .map_or_else(|| "-".into(), |p| format!("{p:+.2}")),
    );
    let _ = writeln!(
        out,
        "  request throughput: client {} req/s, {server} {} req/s",
        opt(t.client_request_per_s, 3),
        opt(t.truth_request_per_s, 3),
    );
}

fn join_text(join: &Join) -> String {
    match join {
        Join::ServebenchIds => {
            "by the x-request-id servebench sent (servebench-{record id})".into()
        }
        Join::FileIds => "by the request ids the file lists (else the response ids)".into(),
        Join::RequestOrder {
            prefix,
            prefix_from,
            prompt_tokens_compared,
            prompt_tokens_agree,
        } => format!(
            "by request order: record i is x-request-id {prefix}{{i}} (prefix {}; prompt \
             tokens agree with the server's for {prompt_tokens_agree} of \
             {prompt_tokens_compared} pairs)",
            match prefix_from {
                PrefixFrom::Given => "given by --request-id-prefix",
                PrefixFrom::Timeline => "found in the timeline",
            }
        ),
        Join::None { reason } => format!("none — {reason}"),
    }
}

/// The load line: what the client was configured with and measured, against the server.
fn load_line(out: &mut String, a: &ClientAccuracy) {
    let t = &a.throughput;
    let mut configured = Vec::new();
    if let Some(c) = t.intended_concurrency {
        configured.push(format!("concurrency {c}"));
    }
    if let Some(r) = t.intended_rate_per_s {
        configured.push(format!("rate {r} req/s"));
    }
    let configured = if configured.is_empty() {
        "-".to_string()
    } else {
        configured.join(", ")
    };
    let _ = writeln!(
        out,
        "  load: configured {configured}; client-measured peak concurrency {}; at the server: \
         exact peak in flight {}, mean {}",
        opt(t.client_peak_concurrency, 0),
        t.truth_peak_in_flight
            .map_or_else(|| "-".into(), |p| p.to_string()),
        opt(t.truth_mean_in_flight, 2),
    );
}

/// A block for a file that could not be joined: counts and throughput only.
fn unjoined_text(out: &mut String, a: &ClientAccuracy) {
    let t = &a.throughput;
    let _ = writeln!(
        out,
        "  requests: the file {} ({} successful); the timeline entries no other file claimed {} \
         ({} successful; they may include the client's warm-up requests)",
        a.requests,
        a.client_successful
            .map_or_else(|| "-".into(), |n| n.to_string()),
        a.truth_unmatched,
        t.truth_requests
            .map_or_else(|| "-".into(), |n| n.to_string()),
    );
    throughput_lines(out, t, "server over those entries");
    load_line(out, a);
    let _ = writeln!(
        out,
        "  TTFT, ITL, TPOT, E2E: not compared (no request can be matched)"
    );
}

/// The text report: a block per client run, then one line per run.
fn text(truth: &Path, all: &[ClientAccuracy]) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "Client error against the server's timeline {} (client − server, ms)",
        truth.display()
    );
    for a in all {
        let _ = writeln!(out, "\n{} — {} ({})", a.tool, a.file, a.run);
        let _ = writeln!(out, "  join: {}", join_text(&a.join));
        if let Join::None { .. } = a.join {
            unjoined_text(&mut out, a);
            continue;
        }
        let _ = writeln!(
            out,
            "  requests {}, matched {}, unmatched {}, ambiguous {}, failed {}",
            a.requests, a.matched, a.unmatched, a.ambiguous, a.failed
        );
        if !a.unmatched_examples.is_empty() {
            let _ = writeln!(out, "  unmatched e.g.: {}", a.unmatched_examples.join(", "));
        }
        let _ = writeln!(
            out,
            "  {:<5} {:>7} {:>11} {:>11} {:>11} {:>11}",
            "", "n", "median", "p99", "max", "server p50"
        );
        row(&mut out, "TTFT", a.ttft.as_ref());
        if a.ttft_server_late.is_some() {
            row(&mut out, " srv", a.ttft_server_late.as_ref());
            row(&mut out, " rest", a.ttft_after_release.as_ref());
        }
        if a.ttft_after_write.is_some() {
            row(&mut out, " wire", a.ttft_after_write.as_ref());
        }
        if a.ttft_send.is_some() {
            row(&mut out, "  send", a.ttft_send.as_ref());
            row(&mut out, "  recv", a.ttft_receive.as_ref());
        }
        row(&mut out, "ITL", a.itl.as_ref());
        row(&mut out, "TPOT", a.tpot.as_ref());
        row(&mut out, "E2E", a.e2e.as_ref());
        if a.ttft_server_late.is_some() {
            let _ = writeln!(
                out,
                "  (TTFT = srv + rest: srv is the server's own lateness, its engine thread \
                 releasing the first chunk after the engine produced it; rest is everything \
                 after that release; wire, of the rest, is what passed after the server's HTTP \
                 task handed the first chunk's bytes to its HTTP library: socket, loopback and \
                 client; send and recv split wire on the host's clock: server arrival − client \
                 send, client stamp − server write)"
            );
        }
        if a.itl_skipped > 0 {
            let _ = writeln!(
                out,
                "  ITL: {} requests skipped (client and server chunk counts differ)",
                a.itl_skipped
            );
        }
        let t = &a.throughput;
        if let Some(from) = &a.client_figures_from {
            let _ = writeln!(out, "  client figures as printed, from {from}");
        }
        throughput_lines(&mut out, t, "server");
        load_line(&mut out, a);
    }
    let _ = writeln!(
        out,
        "\n{:<10} {:<32} {:>9} {:>9} {:>9} {:>9} {:>8}",
        "client", "file", "TTFT p50", "TTFT p99", "E2E p50", "E2E p99", "tok/s %"
    );
    for a in all {
        let m = |s: Option<&ErrorStats>, f: fn(&ErrorStats) -> f64| {
            s.map_or_else(|| "-".into(), |s| signed(f(s)))
        };
        let file: String = {
            let n = a.file.chars().count();
            if n > 32 {
                a.file.chars().skip(n - 32).collect()
            } else {
                a.file.clone()
            }
        };
        let _ = writeln!(
            out,
            "{:<10} {:<32} {:>9} {:>9} {:>9} {:>9} {:>8}",
            a.tool,
            file,
            m(a.ttft.as_ref(), |s| s.median_ms),
            m(a.ttft.as_ref(), |s| s.p99_ms),
            m(a.e2e.as_ref(), |s| s.median_ms),
            m(a.e2e.as_ref(), |s| s.p99_ms),
            a.throughput
                .output_error_pct
                .map_or_else(|| "-".into(), |p| format!("{p:+.2}")),
        );
    }
    out
}
