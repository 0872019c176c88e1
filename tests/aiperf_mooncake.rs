//! The Mooncake slice through a real client that replays it: aiperf 0.13
//! (`--custom-dataset-type mooncake_trace --fixed-schedule`, the trace's timestamps × 0.1)
//! and servebench (`--dataset-name mooncake --time-scale 0.1`), each against a fresh example
//! server recording its timeline (`tests/fixtures/aiperf-mooncake/`, made by
//! `scripts/make_mooncake_aiperf_fixture.sh`). Request count, token totals and send
//! schedule are compared with what servebench's Mooncake dataset makes of the trace.

use std::collections::{BTreeSet, HashMap};
use std::time::Duration;

use servebench::driver::DatasetSpec;

const TRACE: &str = "tests/fixtures/mooncake_conversation_240.jsonl";
const DIR: &str = "tests/fixtures/aiperf-mooncake";
const SCALE: f64 = 0.1;
/// The example server's context length (Qwen3.5-35B-A3B's `max_model_len` in the baseline).
const CONTEXT_TOKENS: u64 = 32768;

fn jsonl(path: &str) -> Vec<serde_json::Value> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

fn u(v: &serde_json::Value) -> u64 {
    v.as_u64().unwrap()
}

/// Lateness of each send against its due time, relative to the most punctual request (a
/// server sees arrivals, not the client's zero), in ms: (p50, p99).
fn relative_lateness_ms(pairs: &[(f64, f64)]) -> (f64, f64) {
    let mut late: Vec<f64> = pairs.iter().map(|(at, due)| at - due).collect();
    late.sort_by(f64::total_cmp);
    let min = late[0];
    let late: Vec<f64> = late.iter().map(|l| (l - min) * 1000.0).collect();
    let q = |p: usize| late[(late.len() - 1) * p / 100];
    (q(50), q(99))
}

#[test]
fn aiperf_and_servebench_replay_the_same_requests_tokens_and_schedule() {
    let trace = jsonl(TRACE);
    let plan = DatasetSpec::Mooncake {
        path: TRACE.into(),
        time_scale: SCALE,
    }
    .build(None)
    .unwrap();
    let due_s: Vec<f64> = plan
        .send_at
        .as_ref()
        .unwrap()
        .iter()
        .map(Duration::as_secs_f64)
        .collect();
    // servebench's schedule is the trace's × the scale.
    for (t, d) in trace.iter().zip(&due_s) {
        assert!((t["timestamp"].as_f64().unwrap() / 1000.0 * SCALE - d).abs() < 1e-9);
    }
    let too_long: BTreeSet<usize> = trace
        .iter()
        .enumerate()
        .filter(|(_, t)| u(&t["input_length"]) + u(&t["output_length"]) > CONTEXT_TOKENS)
        .map(|(i, _)| i)
        .collect();

    // aiperf's per-request export: one record per trace line (its session number), the
    // successes answered with the trace's output length, the failures exactly the
    // requests over the context length (HTTP 400).
    let aiperf = jsonl(&format!("{DIR}/profile_export.jsonl"));
    assert_eq!(aiperf.len(), plan.items.len());
    let session: Vec<usize> = aiperf
        .iter()
        .map(|r| u(&r["metadata"]["session_num"]) as usize)
        .collect();
    assert_eq!(
        session.iter().copied().collect::<BTreeSet<_>>(),
        (0..trace.len()).collect()
    );
    let mut aiperf_out = 0;
    let mut aiperf_in = 0;
    let mut failed = BTreeSet::new();
    for (r, &i) in aiperf.iter().zip(&session) {
        match r["metrics"].get("output_sequence_length") {
            Some(osl) => {
                assert_eq!(u(&osl["value"]), plan.items[i].output_tokens, "line {i}");
                aiperf_out += u(&osl["value"]);
                aiperf_in += u(&r["metrics"]["input_sequence_length"]["value"]);
            }
            None => {
                assert_eq!(u(&r["error"]["code"]), 400, "line {i}");
                failed.insert(i);
            }
        }
    }
    assert_eq!(failed, too_long);
    let want_out: u64 = (0..trace.len())
        .filter(|i| !too_long.contains(i))
        .map(|i| plan.items[i].output_tokens)
        .sum();
    assert_eq!(aiperf_out, want_out);

    // servebench's requests as the server saw them: the same successes and output tokens;
    // each prompt the trace's length plus the same chat-template overhead (the server
    // counts words, and servebench's prompt words are one token each).
    let sb = jsonl(&format!("{DIR}/timeline-servebench.jsonl"));
    let sb_id = |t: &serde_json::Value| -> usize {
        t["request_id"].as_str().unwrap()["servebench-".len()..]
            .parse()
            .unwrap()
    };
    let served: BTreeSet<usize> = sb.iter().map(sb_id).collect();
    assert_eq!(served.len(), sb.len());
    assert_eq!(
        served,
        (0..trace.len()).filter(|i| !too_long.contains(i)).collect()
    );
    assert_eq!(
        sb.iter().map(|t| u(&t["output_tokens"])).sum::<u64>(),
        want_out
    );
    let overhead: BTreeSet<u64> = sb
        .iter()
        .map(|t| u(&t["prompt_tokens"]) - plan.items[sb_id(t)].prompt_tokens)
        .collect();
    assert_eq!(
        overhead.len(),
        1,
        "one chat-template overhead: {overhead:?}"
    );
    let sb_in: u64 = sb.iter().map(|t| u(&t["prompt_tokens"])).sum();
    let trace_in: u64 = served.iter().map(|&i| plan.items[i].prompt_tokens).sum();
    // aiperf's prompts are MiniLM-tokenizer text of the trace's lengths, which the server's
    // word count counts differently: within 10 % of the trace, not equal.
    let ratio = aiperf_in as f64 / trace_in as f64;
    assert!(
        (0.9..1.1).contains(&ratio) && aiperf_in != trace_in,
        "{ratio}"
    );

    // The send schedule at the server: each client's arrivals against the trace × scale.
    let ai = jsonl(&format!("{DIR}/timeline-aiperf.jsonl"));
    let by_uuid: HashMap<&str, usize> = aiperf
        .iter()
        .zip(&session)
        .map(|(r, &i)| (r["metadata"]["x_request_id"].as_str().unwrap(), i))
        .collect();
    let pairs = |tl: &[serde_json::Value], id: &dyn Fn(&serde_json::Value) -> usize| {
        tl.iter()
            .map(|t| (t["arrival_unix_s"].as_f64().unwrap(), due_s[id(t)]))
            .collect::<Vec<_>>()
    };
    let ai_pairs = pairs(&ai, &|t| by_uuid[t["request_id"].as_str().unwrap()]);
    assert_eq!(ai_pairs.len(), served.len());
    let (sb50, sb99) = relative_lateness_ms(&pairs(&sb, &sb_id));
    let (ai50, ai99) = relative_lateness_ms(&ai_pairs);
    eprintln!(
        "requests {} each, {} succeeded; output tokens {aiperf_out} each; input tokens at the \
         server: servebench {sb_in} (trace {trace_in} + {overhead:?} each), aiperf {aiperf_in}; \
         arrival lateness (vs the most punctual request): servebench p50 {sb50:.1} p99 \
         {sb99:.1} ms, aiperf p50 {ai50:.1} p99 {ai99:.1} ms",
        aiperf.len(),
        served.len()
    );
    // Both replay the schedule; in this recording servebench kept it more tightly.
    assert!(sb50 <= ai50 && sb99 <= ai99);

    // servebench reads aiperf's export: every request, sent at aiperf's request_start_ns.
    let runs =
        servebench::load::load_path(std::path::Path::new(&format!("{DIR}/profile_export.jsonl")))
            .unwrap();
    let recs = runs[0].records.as_ref().unwrap();
    assert_eq!(recs.all.len(), aiperf.len());
    assert_eq!(
        recs.all.iter().filter(|r| r.outcome.is_success()).count(),
        served.len()
    );
}
