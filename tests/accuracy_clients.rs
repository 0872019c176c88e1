//! `servebench accuracy` on one real session: servebench, aiperf 0.13.0, `vllm bench serve`
//! 0.33.0 and guidellm 0.8.1 ran one after the other against one example server, whose
//! timeline holds their 64 requests (`tests/fixtures/accuracy-clients/`, made by
//! `scripts/make_accuracy_clients_fixture.sh`; see the fixtures README). Every client's rows,
//! the vLLM join by request order, each client's own printed throughput, configured against
//! measured concurrency, and SGLang's file, which cannot be joined.
#![cfg(feature = "cli")]

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use servebench::accuracy::KeysError;
use servebench::accuracy::{
    measure_files, measure_files_with, AccuracyError, ClientAccuracy, Join, JoinOptions, PrefixFrom,
};
use servebench::http::timeline;

const BIN: &str = env!("CARGO_BIN_EXE_servebench");

fn fix(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/accuracy-clients")
        .join(name)
}

fn json(path: &Path) -> serde_json::Value {
    serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap()
}

/// The prefix vLLM printed in its `Namespace(… request_id_prefix='…')` line.
fn printed_prefix() -> String {
    let console = std::fs::read_to_string(fix("vllm-console.txt")).unwrap();
    let at = console.find("request_id_prefix='").unwrap() + "request_id_prefix='".len();
    console[at..].split('\'').next().unwrap().to_string()
}

const CLIENTS: [&str; 4] = [
    "servebench-run.json",
    "guidellm.json",
    "aiperf/profile_export.jsonl",
    "vllm-result.json",
];

fn all_four(opts: &JoinOptions) -> Vec<ClientAccuracy> {
    let paths: Vec<PathBuf> = CLIENTS.iter().map(|c| fix(c)).collect();
    let refs: Vec<&Path> = paths.iter().map(PathBuf::as_path).collect();
    measure_files_with(&fix("timeline.jsonl"), &refs, opts).unwrap_or_else(|e| panic!("{e}"))
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

#[test]
fn four_clients_on_one_timeline_each_fully_joined() {
    let truth = timeline::read_file(&fix("timeline.jsonl")).unwrap();
    assert_eq!(truth.len(), 20 + 12 + 16 + 16);
    let all = all_four(&JoinOptions::default());
    let tools: Vec<&str> = all.iter().map(|a| a.tool.as_str()).collect();
    assert_eq!(tools, ["servebench", "guidellm", "aiperf", "vllm"]);
    for (a, n) in all.iter().zip([20, 12, 16, 16]) {
        // Every request of each client is in the timeline; the rest are the others'.
        assert_eq!((a.requests, a.matched, a.unmatched), (n, n, 0), "{a:?}");
        assert_eq!((a.ambiguous, a.failed), (0, 0), "{a:?}");
        assert_eq!(a.truth_unmatched, truth.len() - n, "{}", a.tool);
        let ttft = a.ttft.unwrap();
        assert_eq!(ttft.count, n);
        // A client sends before the server receives and reads after it writes.
        assert!(ttft.min_ms > -0.5, "{a:?}");
        assert!(a.e2e.unwrap().min_ms > -0.5, "{a:?}");
        // 32 output tokens, one per chunk on both sides: 31 gaps per request.
        assert_eq!(a.itl.unwrap().count, 31 * n, "{}", a.tool);
        assert_eq!(a.throughput.truth_requests, Some(n));
        assert_eq!(a.throughput.truth_peak_in_flight, Some(4), "{}", a.tool);
    }
    assert_eq!(all[0].join, Join::ServebenchIds);
    assert_eq!(all[1].join, Join::FileIds);
    assert_eq!(all[2].join, Join::FileIds);
    // vLLM: by request order, the prefix found in the timeline being the one vLLM printed.
    assert_eq!(
        all[3].join,
        Join::RequestOrder {
            prefix: printed_prefix(),
            prefix_from: PrefixFrom::Timeline,
            prompt_tokens_compared: 16,
            prompt_tokens_agree: 16,
        }
    );
}

/// The vLLM join done by hand: record i of `--save-detailed` is the timeline's
/// `{prefix}{i}`; vLLM's `ttfts[i]` against first token − arrival.
#[test]
fn the_vllm_join_by_request_order_equals_one_done_by_hand() {
    let prefix = printed_prefix();
    let truth = timeline::read_file(&fix("timeline.jsonl")).unwrap();
    let by_id: HashMap<&str, f64> = truth
        .iter()
        .map(|e| {
            (
                e.request_id.as_str(),
                (e.first_token_unix_s.unwrap() - e.arrival_unix_s) * 1e3,
            )
        })
        .collect();
    let v = json(&fix("vllm-result.json"));
    let ttfts = v["ttfts"].as_array().unwrap();
    let errs: Vec<f64> = ttfts
        .iter()
        .enumerate()
        .map(|(i, t)| t.as_f64().unwrap() * 1e3 - by_id[format!("{prefix}{i}").as_str()])
        .collect();
    // The server's token counts agree with vLLM's for every joined pair.
    let out_lens = v["output_lens"].as_array().unwrap();
    for (i, n) in out_lens.iter().enumerate() {
        let e = truth
            .iter()
            .find(|e| e.request_id == format!("{prefix}{i}"))
            .unwrap();
        assert_eq!(Some(e.output_tokens), n.as_u64());
    }
    let by_hand = median(errs);
    let found = all_four(&JoinOptions::default()).remove(3);
    let given = all_four(&JoinOptions {
        request_id_prefix: Some(prefix.clone()),
    })
    .remove(3);
    let ours = found.ttft.unwrap().median_ms;
    assert!((by_hand - ours).abs() < 1e-9, "{by_hand} vs {ours}");
    // Given or found, the same figures; only the join says which.
    assert_eq!(
        given.join,
        Join::RequestOrder {
            prefix: prefix.clone(),
            prefix_from: PrefixFrom::Given,
            prompt_tokens_compared: 16,
            prompt_tokens_agree: 16,
        }
    );
    assert_eq!(
        (given.ttft, given.itl, given.e2e),
        (found.ttft, found.itl, found.e2e)
    );
    // A wrong prefix matches nothing, and the report says which ids it looked for.
    let wrong = all_four(&JoinOptions {
        request_id_prefix: Some("bench-00000000-".into()),
    })
    .remove(3);
    assert_eq!((wrong.matched, wrong.unmatched), (0, 16));
    assert_eq!(wrong.unmatched_examples[0], "bench-00000000-0");
    // Were the order not vLLM's (here: the timeline's indices reversed), the prompt-token
    // check of the join says so.
    let text = std::fs::read_to_string(fix("timeline.jsonl")).unwrap();
    let reversed: String = text
        .lines()
        .map(|l| {
            let mut v: serde_json::Value = serde_json::from_str(l).unwrap();
            let id = v["request_id"].as_str().unwrap().to_string();
            if let Some(i) = id.strip_prefix(&prefix) {
                let i: usize = i.parse().unwrap();
                v["request_id"] = format!("{prefix}{}", 15 - i).into();
            }
            v.to_string() + "\n"
        })
        .collect();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("reversed.jsonl");
    std::fs::write(&path, reversed).unwrap();
    let r = measure_files(&path, &[&fix("vllm-result.json")]).unwrap();
    let Join::RequestOrder {
        prompt_tokens_compared,
        prompt_tokens_agree,
        ..
    } = r[0].join
    else {
        panic!("{:?}", r[0].join)
    };
    assert_eq!(prompt_tokens_compared, 16);
    assert!(prompt_tokens_agree < 8, "{prompt_tokens_agree}");
}

/// Each row's client throughput is the figure the client printed: servebench's, guidellm's
/// and vLLM's from their files, aiperf's from `profile_export_aiperf.json` beside its
/// per-request export (not a recomputation from the records, which divides by another
/// duration).
#[test]
fn each_row_uses_the_clients_own_printed_throughput() {
    let all = all_four(&JoinOptions::default());
    let out = |a: &ClientAccuracy| a.throughput.client_output_tok_per_s.unwrap();
    let sb = json(&fix("servebench-run.json"));
    assert_eq!(
        out(&all[0]),
        sb["result"]["output_throughput_per_s"].as_f64().unwrap()
    );
    let g = json(&fix("guidellm.json"));
    assert_eq!(
        out(&all[1]),
        g["benchmarks"][0]["metrics"]["output_tokens_per_second"]["successful"]["mean"]
            .as_f64()
            .unwrap()
    );
    let ai = json(&fix("aiperf/profile_export_aiperf.json"));
    let printed = ai["output_token_throughput"]["avg"].as_f64().unwrap();
    assert_eq!(out(&all[2]), printed);
    assert!(all[2]
        .client_figures_from
        .as_deref()
        .is_some_and(|f| f.ends_with("aiperf/profile_export_aiperf.json")));
    assert!(
        all.iter()
            .filter(|a| a.client_figures_from.is_some())
            .count()
            == 1
    );
    assert_eq!(
        all[2].throughput.client_request_per_s,
        ai["request_throughput"]["avg"].as_f64()
    );
    // The records alone give another figure (aiperf's benchmark_duration, not its window).
    let recs = servebench::load::load_path(&fix("aiperf/profile_export.jsonl")).unwrap();
    let recomputed = recs[0].result.output_throughput_per_s.unwrap();
    assert!(
        (recomputed / printed - 1.0).abs() > 1e-3,
        "{recomputed} vs {printed}"
    );
    let console = std::fs::read_to_string(fix("aiperf/profile_export_console.txt")).unwrap();
    // … the very figure aiperf printed (two decimals, thousands grouped).
    let s = format!("{printed:.2}");
    let (int, frac) = s.split_once('.').unwrap();
    let grouped = if int.len() > 3 {
        format!("{},{}", &int[..int.len() - 3], &int[int.len() - 3..])
    } else {
        int.to_string()
    };
    let row = console
        .lines()
        .find(|l| l.contains("Output Token Throughput (tokens/sec)"))
        .unwrap();
    assert!(row.contains(&format!(" {grouped}.{frac} ")), "{row}");
    let v = json(&fix("vllm-result.json"));
    assert_eq!(out(&all[3]), v["output_throughput"].as_f64().unwrap());
}

/// Configured concurrency (4 for every client) and the client's measured peak are two
/// fields: guidellm's measured maximum is its file's `request_concurrency.max`, not its
/// configured `streams`.
#[test]
fn configured_and_measured_concurrency_are_two_fields() {
    let all = all_four(&JoinOptions::default());
    for a in &all {
        assert_eq!(a.throughput.intended_concurrency, Some(4), "{}", a.tool);
    }
    let g = json(&fix("guidellm.json"));
    let b = &g["benchmarks"][0];
    assert_eq!(b["config"]["strategy"]["streams"], 4);
    assert_eq!(
        all[1].throughput.client_peak_concurrency,
        b["metrics"]["request_concurrency"]["successful"]["max"].as_f64()
    );
    let v = json(&fix("vllm-result.json"));
    assert_eq!(
        all[3].throughput.client_peak_concurrency,
        v["max_concurrent_requests"].as_f64()
    );
    // aiperf's per-request export: the configured concurrency from its aggregate export.
    assert_eq!(all[2].throughput.client_peak_concurrency, None);
}

/// SGLang's file cannot be joined: its row still compares counts and throughput, against
/// the timeline entries no other file claimed, and says why the rest cannot be compared.
#[test]
fn sglang_files_get_counts_and_throughput_and_the_reason() {
    let sglang =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/sglang-0.5.23/results.jsonl");
    let alone = measure_files(&fix("timeline.jsonl"), &[&sglang]).unwrap();
    assert_eq!(alone.len(), 2, "two runs in the file");
    for a in &alone {
        let Join::None { reason } = &a.join else {
            panic!("{:?}", a.join)
        };
        assert!(reason.contains("no request or response id"), "{reason}");
        assert_eq!((a.requests, a.matched, a.unmatched), (40, 0, 40));
        assert_eq!(a.client_successful, Some(40));
        assert!(a.ttft.is_none() && a.itl.is_none() && a.e2e.is_none());
        // Nothing else given: every entry of the timeline is unclaimed.
        assert_eq!(a.truth_unmatched, 64);
        assert_eq!(a.throughput.truth_requests, Some(64));
        assert!(a.throughput.output_error_pct.is_some());
        assert_eq!(a.throughput.intended_concurrency, Some(8));
    }
    // With the four clients' files, no entry is left for it.
    let mut paths: Vec<PathBuf> = CLIENTS.iter().map(|c| fix(c)).collect();
    paths.push(sglang);
    let refs: Vec<&Path> = paths.iter().map(PathBuf::as_path).collect();
    let with = measure_files(&fix("timeline.jsonl"), &refs).unwrap();
    assert_eq!(with.len(), 6);
    assert_eq!(with[4].truth_unmatched, 0);
    assert_eq!(with[4].throughput.truth_output_tok_per_s, None);
}

/// Two prefixes that both fit: the join stops and asks for --request-id-prefix, naming
/// them; none that fits: it says so.
#[test]
fn an_ambiguous_or_missing_prefix_is_an_error_that_asks_for_the_flag() {
    let prefix = printed_prefix();
    let text = std::fs::read_to_string(fix("timeline.jsonl")).unwrap();
    let copies: String = text
        .lines()
        .filter(|l| l.contains(&format!("\"request_id\":\"{prefix}")))
        .map(|l| l.replace(&prefix, "other-") + "\n")
        .collect();
    let dir = tempfile::tempdir().unwrap();
    let two = dir.path().join("two.jsonl");
    std::fs::write(&two, format!("{text}{copies}")).unwrap();
    let err = measure_files(&two, &[&fix("vllm-result.json")]).unwrap_err();
    let AccuracyError::Keys {
        source: KeysError::AmbiguousPrefix { candidates, .. },
        ..
    } = &err
    else {
        panic!("{err}")
    };
    assert_eq!(candidates, &vec![prefix.clone(), "other-".to_string()]);
    assert!(err.to_string().ends_with("give the prefix"), "{err}");
    // The prefix settles it.
    let given = measure_files_with(
        &two,
        &[&fix("vllm-result.json")],
        &JoinOptions {
            request_id_prefix: Some("other-".into()),
        },
    )
    .unwrap();
    assert_eq!(given[0].matched, 16);
    // A timeline without the vLLM run: no prefix fits.
    let none = dir.path().join("none.jsonl");
    let others: String = text
        .lines()
        .filter(|l| !l.contains(&prefix))
        .map(|l| l.to_string() + "\n")
        .collect();
    std::fs::write(&none, others).unwrap();
    let err = measure_files(&none, &[&fix("vllm-result.json")])
        .unwrap_err()
        .to_string();
    assert!(err.contains("vllm-result.json"), "{err}");
    assert!(err.contains("keeps no request ids"), "{err}");
    assert!(err.contains("0 … 15"), "{err}");
}

/// The CLI: `--request-id-prefix` and the join line of each block; configured and measured
/// concurrency named apart.
#[test]
fn cli_says_which_join_it_used() {
    let prefix = printed_prefix();
    let mut cmd = Command::new(BIN);
    cmd.arg("accuracy")
        .arg("--truth")
        .arg(fix("timeline.jsonl"));
    for c in CLIENTS {
        cmd.arg(fix(c));
    }
    let o = cmd.output().unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let text = String::from_utf8(o.stdout).unwrap();
    assert!(
        text.contains(&format!(
            "join: by request order: record i is x-request-id {prefix}{{i}} (prefix found in \
             the timeline; prompt tokens agree with the server's for 16 of 16 pairs)"
        )),
        "{text}"
    );
    assert!(
        text.contains("join: by the x-request-id servebench sent"),
        "{text}"
    );
    assert!(text.contains("load: configured concurrency 4; client-measured peak concurrency"));
    assert!(!text.contains("intended"), "{text}");
    let o = Command::new(BIN)
        .args([
            "accuracy",
            "--format",
            "json",
            "--request-id-prefix",
            &prefix,
            "--truth",
        ])
        .arg(fix("timeline.jsonl"))
        .arg(fix("vllm-result.json"))
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v[0]["join"]["by"], "request_order");
    assert_eq!(v[0]["join"]["prefix_from"], "given");
    assert_eq!(v[0]["matched"], 16);
}
