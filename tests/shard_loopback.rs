//! Four `servebench bench --shard K/4` processes on loopback (127.0.0.1 only) against the
//! example server (the simulated H200, speed 20), meeting at a barrier directory, merged
//! with `servebench merge`: the merged run holds the requests, tokens and (prompt, send
//! offset) pairs of a single-process run with the same seed, and its metrics are those of
//! the union of the shards' records.
#![cfg(all(feature = "http", feature = "cli", feature = "sim"))]

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use servebench::merge::shift_record;
use servebench::metrics::compute;
use servebench::runfile::{RunFile, RunStatus};
use servebench::sim::serve::{spawn, ServeArgs};
use servebench::sim::Config;

const BIN: &str = env!("CARGO_BIN_EXE_servebench");

fn bench_args(target: &str, out: &Path) -> Vec<String> {
    [
        "bench",
        "--target",
        target,
        "--profile",
        "sharegpt",
        "--max-requests",
        "48",
        "--rate",
        "40",
        "--style",
        "vllm",
        "--quiet",
        "--output",
    ]
    .iter()
    .map(|s| s.to_string())
    .chain([out.display().to_string()])
    .collect()
}

mod common;
use common::kids::Kids;
use common::request_keys::keys;

fn wait_all(kids: &mut Kids, limit: Duration) -> Vec<String> {
    let t0 = Instant::now();
    let mut errs = vec![String::new(); kids.0.len()];
    loop {
        let mut done = 0;
        for (i, c) in kids.0.iter_mut().enumerate() {
            if let Some(status) = c.try_wait().unwrap() {
                assert!(status.success(), "shard {} failed: {status}", i + 1);
                done += 1;
            }
        }
        if done == kids.0.len() {
            break;
        }
        assert!(t0.elapsed() < limit, "shards still running after {limit:?}");
        std::thread::sleep(Duration::from_millis(20));
    }
    for (i, c) in kids.0.iter_mut().enumerate() {
        use std::io::Read;
        if let Some(mut e) = c.stderr.take() {
            let _ = e.read_to_string(&mut errs[i]);
        }
    }
    errs
}

#[test]
fn four_shard_processes_merge_into_the_single_process_run() {
    let server = spawn(
        &Config::named("baseline").unwrap(),
        &ServeArgs {
            speed: 20.0,
            ..ServeArgs::default()
        },
    )
    .unwrap();
    let target = format!("http://{}", server.local_addr());
    let dir: PathBuf =
        std::env::temp_dir().join(format!("servebench-shards-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();

    // One process.
    let single_path = dir.join("single.json");
    let o = Command::new(BIN)
        .args(bench_args(&target, &single_path))
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let single = RunFile::read(&single_path).unwrap();

    // Four shard processes, meeting at a barrier.
    let barrier = format!("barrier:{}", dir.join("barrier").display());
    let mut kids = Kids(Vec::new());
    let mut shard_paths = Vec::new();
    for k in 1..=4 {
        let p = dir.join(format!("run-{k}.json"));
        kids.0.push(
            Command::new(BIN)
                .args(bench_args(&target, &p))
                .args(["--shard", &format!("{k}/4"), "--start-at", &barrier])
                .stdout(Stdio::null())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap(),
        );
        shard_paths.push(p);
    }
    let errs = wait_all(&mut kids, Duration::from_secs(120));
    let starts: BTreeSet<String> = errs
        .iter()
        .filter_map(|e| e.lines().find(|l| l.contains(" starts at ")))
        .map(|l| l.split(" starts at ").nth(1).unwrap().to_string())
        .collect();
    assert_eq!(starts.len(), 1, "one common start: {errs:?}");

    let merged_path = dir.join("merged.json");
    let o = Command::new(BIN)
        .arg("merge")
        .args(&shard_paths)
        .arg("--out")
        .arg(&merged_path)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{stderr}");
    // The skew between shards on one host, measured through the server's Date headers,
    // is reported for shards 2 to 4 (its bounds contain the true 0 within their width).
    assert_eq!(stderr.matches("against shard 1/4's").count(), 3, "{stderr}");
    let merged = RunFile::read(&merged_path).unwrap();

    // The same requests, tokens and (prompt, send offset) pairs as the single run.
    assert_eq!(merged.records.len(), 48);
    assert_eq!(single.records.len(), 48);
    assert!(merged.records.iter().all(|r| r.outcome.is_success()));
    assert_eq!(keys(&merged), keys(&single));
    let tokens = |f: &RunFile| {
        (
            f.result.total_input_tokens,
            f.result.total_output_tokens,
            f.result.successful_requests,
        )
    };
    assert_eq!(tokens(&merged), tokens(&single));
    assert_eq!(merged.seed, single.seed);
    assert_eq!(merged.profile, single.profile);
    assert_eq!(merged.status, RunStatus::Complete);
    assert_eq!(merged.shard, None);

    // The merged metrics are those of the union of the shards' records on one timeline.
    let shards: Vec<RunFile> = shard_paths
        .iter()
        .map(|p| RunFile::read(p).unwrap())
        .collect();
    // They agreed on one start: each shard's schedule start lands on the latest one.
    assert!(shards
        .iter()
        .all(|s| s.start_at.is_some() && s.start_at == shards[0].start_at));
    let lead = shards
        .iter()
        .map(|s| s.schedule_origin.unwrap())
        .max()
        .unwrap();
    assert_eq!(merged.schedule_origin, Some(lead));
    let mut union = Vec::new();
    for s in &shards {
        let shift = lead - s.schedule_origin.unwrap();
        for r in &s.records {
            let mut r = r.clone();
            shift_record(&mut r, shift);
            union.push(r);
        }
    }
    union.sort_by_key(|r| r.id);
    assert_eq!(merged.records, union);
    let mut want = compute(&union, merged.metrics_options.clone().unwrap());
    want.meta = merged.result.meta.clone();
    want.max_concurrency = merged.result.max_concurrency;
    assert_eq!(merged.result, want);
    drop(kids);
    server.shutdown();
    let _ = std::fs::remove_dir_all(&dir);
}
