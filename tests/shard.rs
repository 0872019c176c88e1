//! Sharded runs without a server: the driver's partition against a virtual-time engine (N
//! shards send exactly the single run's requests at its times), and `merge`'s refusals and
//! timeline (library and CLI), on run files made here.

mod common;

use std::collections::BTreeSet;
use std::time::Duration;

use common::TestEngine;
use servebench::driver::workload::random;
use servebench::driver::Arrivals;
use servebench::driver::Shard;
use servebench::driver::{run, RunOptions};
use servebench::merge::{merge, Align, MergeError, MergeOptions};
use servebench::metrics::{compute, MetricsOptions};
use servebench::profile::Profile;
use servebench::record::RequestRecord;
use servebench::record::ServerClock;
use servebench::runfile::{RunFile, RunStatus};
use servebench::Convention;

fn opts(shard: Option<Shard>) -> RunOptions {
    RunOptions {
        arrivals: Arrivals::Poisson {
            rate: 50.0,
            seed: 7,
        },
        max_concurrency: None,
        max_duration: Some(Duration::from_secs(600)),
        shard,
        ..RunOptions::default()
    }
}

/// (id, prompt tokens, scheduled offset, output tokens) of every record.
type Key = (u64, Option<u64>, Duration, u64);

fn keys(records: &[RequestRecord]) -> BTreeSet<Key> {
    records
        .iter()
        .map(|r| {
            (
                r.id,
                r.prompt_tokens,
                r.scheduled_at.unwrap(),
                r.output_tokens(),
            )
        })
        .collect()
}

#[test]
fn shards_together_send_the_single_runs_requests_at_its_times() {
    let work = random(103, 64, 16, 0.5, 11, false).unwrap();
    let single = run(&mut TestEngine::new(30, 5, 1), &work, &opts(None)).unwrap();
    assert_eq!(single.records.len(), 103);
    for n in [1u32, 2, 3, 4] {
        let mut union = Vec::new();
        for k in 1..=n {
            let shard = Shard::new(k, n).unwrap();
            let out = run(&mut TestEngine::new(30, 5, 1), &work, &opts(Some(shard))).unwrap();
            assert!(out.records.iter().all(|r| shard.owns(r.id as usize)));
            assert_eq!(out.records.len(), shard.indices(103).count());
            union.extend(out.records);
        }
        assert_eq!(keys(&union), keys(&single.records), "{n} shards");
        // Uncapped, the engine answers each request the same way whoever sends it: the
        // union's metrics are the single run's.
        union.sort_by_key(|r| r.id);
        assert_eq!(union, single.records, "{n} shards");
        let m = MetricsOptions::new(Convention::Vllm);
        assert_eq!(compute(&union, m.clone()), compute(&single.records, m));
    }
}

#[test]
fn a_start_instant_offsets_the_schedule_and_a_cap_is_split() {
    let work = random(40, 32, 8, 0.0, 3, false).unwrap();
    let mut o = opts(Some(Shard::new(2, 4).unwrap()));
    o.start_at = Some(Duration::from_secs(5));
    o.max_concurrency = Some(6); // shares 2, 2, 1, 1
    let mut engine = TestEngine::new(400, 50, 1);
    let out = run(&mut engine, &work, &o).unwrap();
    let sched = o.arrivals.schedule(40).unwrap();
    let start = Duration::from_secs(5);
    for r in &out.records {
        // The schedule counts from the start instant: nothing is sent before it.
        assert_eq!(r.scheduled_at, Some(start + sched[r.id as usize]));
        assert!(r.sent_at >= start + sched[r.id as usize]);
    }
    // Shard 2 of 4 may have at most 2 requests in flight: with 750 ms requests every
    // ~80 ms, it must queue.
    let mut events: Vec<(Duration, i32)> = out
        .records
        .iter()
        .flat_map(|r| [(r.sent_at, 1), (r.ended_at.unwrap(), -1)])
        .collect();
    events.sort();
    let peak = events
        .iter()
        .scan(0, |n, (_, d)| {
            *n += d;
            Some(*n)
        })
        .max();
    assert_eq!(peak, Some(2));
    assert!(out
        .records
        .iter()
        .any(|r| r.sent_at > r.scheduled_at.unwrap()));
    o.max_concurrency = Some(3);
    assert!(run(&mut TestEngine::new(1, 1, 1), &work, &o).is_err());
}

fn run_file(k: u32, n: u32, ids: &[u64], start: &str) -> (String, RunFile) {
    let work = random(ids.len(), 16, 4, 0.0, 1, false).unwrap();
    let mut records = run(&mut TestEngine::new(20, 5, 1), &work, &opts(None))
        .unwrap()
        .records;
    for (r, &id) in records.iter_mut().zip(ids) {
        r.id = id;
    }
    let result = compute(&records, MetricsOptions::new(Convention::Vllm));
    let t = chrono::DateTime::parse_from_rfc3339(start).unwrap();
    let mut file = RunFile::new(result, records, Profile::preset("latency").unwrap(), t);
    file.seed = Some(42);
    file.shard = Some(Shard::new(k, n).unwrap());
    file.metrics_options = Some(MetricsOptions::new(Convention::Vllm));
    (format!("run-{k}.json"), file)
}

fn shards() -> Vec<(String, RunFile)> {
    vec![
        run_file(1, 3, &[0, 3, 6], "2026-12-03T19:00:00Z"),
        run_file(2, 3, &[1, 4], "2026-12-03T19:00:00.250Z"),
        run_file(3, 3, &[2, 5], "2026-12-03T19:00:00.5+00:00"),
    ]
}

#[test]
fn merged_metrics_are_the_metrics_of_the_union_of_the_records() {
    let runs = shards();
    let merged = merge(&runs, &MergeOptions::default()).unwrap();
    let mut union = Vec::new();
    for ((_, run), shift_ms) in runs.iter().zip([0, 250, 500]) {
        for r in &run.records {
            let mut r = r.clone();
            servebench::merge::shift_record(&mut r, Duration::from_millis(shift_ms));
            union.push(r);
        }
    }
    union.sort_by_key(|r| r.id);
    assert_eq!(merged.run.records, union);
    let m = MetricsOptions::new(Convention::Vllm);
    assert_eq!(merged.run.result, {
        let mut r = compute(&union, m);
        r.meta = merged.run.result.meta.clone();
        r
    });
    let first_send = union.iter().map(|r| r.sent_at).min().unwrap();
    let last_end = union.iter().filter_map(|r| r.ended_at).max().unwrap();
    let want_ms = (last_end - first_send).as_secs_f64() * 1e3;
    assert!((merged.run.result.duration_ms.unwrap() - want_ms).abs() < 1e-6);
    assert_eq!(merged.run.shard, None);
    assert_eq!(merged.run.status, RunStatus::Complete);
    assert_eq!(merged.run.started_at, runs[0].1.started_at);
    let starts: Vec<f64> = merged.clocks.iter().map(|c| c.start_offset_s).collect();
    assert_eq!(starts, [0.0, 0.25, 0.5]);
    // No Date headers in these files: nothing to say about skew, and no server alignment.
    assert!(merged
        .clocks
        .iter()
        .all(|c| c.skew_vs_reference_s.is_none()));
    let e = merge(
        &runs,
        &MergeOptions {
            align: Align::ServerDate,
            ..MergeOptions::default()
        },
    )
    .unwrap_err();
    assert_eq!(
        e,
        MergeError::NoServerClock {
            name: "run-1.json".into()
        }
    );
}

#[test]
fn date_header_bounds_measure_and_correct_a_skewed_clock() {
    let mut runs = shards();
    // The server's clock is 1000 s + the shard's wall time, except that shard 3's host
    // clock runs 40 ms ahead: it believes it started at .500 when the others' clocks said
    // .460. Bounds ±2 ms.
    for (k, (_, run)) in runs.iter_mut().enumerate() {
        let wall = servebench::record::unix_s(std::time::SystemTime::from(
            run.started_at.with_timezone(&chrono::Utc),
        ));
        let truth = wall - if k == 2 { 0.040 } else { 0.0 } + 1000.0;
        run.server_clock = Some(ServerClock {
            lo_unix_s: Some(truth - 0.002),
            hi_unix_s: Some(truth + 0.002),
            samples: 50,
        });
    }
    let wall = merge(&runs, &MergeOptions::default()).unwrap();
    let (lo, hi) = wall.clocks[2].skew_vs_reference_s.unwrap();
    assert!(lo <= 0.040 && 0.040 <= hi && hi - lo <= 0.0081, "{lo} {hi}");
    let (lo, hi) = wall.clocks[1].skew_vs_reference_s.unwrap();
    assert!(lo <= 0.0 && 0.0 <= hi, "{lo} {hi}");
    assert!(wall.clocks[2]
        .describe(wall.reference)
        .contains("+40.000 ± 4.000 ms"));
    let by_server = merge(
        &runs,
        &MergeOptions {
            align: Align::ServerDate,
            ..MergeOptions::default()
        },
    )
    .unwrap();
    // (Unix seconds as f64 carry ~0.2 µs of rounding.)
    assert!((by_server.clocks[2].shift_s - 0.460).abs() < 1e-6);
    assert!((wall.clocks[2].shift_s - 0.500).abs() < 1e-6);
    let id2 =
        |m: &servebench::merge::Merged| m.run.records.iter().find(|r| r.id == 2).unwrap().sent_at;
    let moved = (id2(&wall) - id2(&by_server)).as_secs_f64();
    assert!((moved - 0.040).abs() < 1e-6, "{moved}");
}

#[test]
fn merge_refuses_files_of_other_runs() {
    let check = |runs: Vec<(String, RunFile)>, want: &str| {
        let e = merge(&runs, &MergeOptions::default())
            .unwrap_err()
            .to_string();
        assert!(e.contains(want), "{e} lacks {want}");
    };
    let mut runs = shards();
    runs[1].1.seed = Some(43);
    check(
        runs,
        "run-2.json: seed differs from run-1.json's (43 vs 42)",
    );
    let mut runs = shards();
    runs[2].1.profile = Profile::preset("throughput").unwrap();
    check(runs, "run-3.json: profile differs");
    let mut runs = shards();
    runs[1]
        .1
        .labels
        .insert("study".into(), "other-study".into());
    check(runs, "run-2.json: study label differs");
    let mut runs = shards();
    runs[2].1.shard = Some(Shard::new(3, 4).unwrap());
    check(runs, "shard count differs");
    let mut runs = shards();
    runs[2].1.shard = None;
    check(runs, "run-3.json: not a shard");
    let mut runs = shards();
    runs[2].1.shard = Some(Shard::new(1, 3).unwrap());
    check(runs, "run-3.json: shard 1/3 is also in run-1.json");
    let mut runs = shards();
    runs[2].1.records[0].id = 4;
    check(runs, "request id 4 is also in");
    check(shards()[..2].to_vec(), "shards [3] of 3 are missing");
    // Allowed: the merged run is marked interrupted.
    let partial = merge(
        &shards()[..2],
        &MergeOptions {
            allow_missing: true,
            ..MergeOptions::default()
        },
    )
    .unwrap();
    assert_eq!(partial.run.records.len(), 5);
    assert!(
        matches!(partial.run.status, RunStatus::Interrupted { ref reason } if reason.contains("[3] of 3 missing"))
    );
    assert_eq!(merge(&[], &MergeOptions::default()), Err(MergeError::Empty));
}

#[cfg(feature = "cli")]
#[test]
fn the_merge_command_writes_a_run_file_and_names_a_foreign_file() {
    let dir = std::env::temp_dir().join(format!("servebench-merge-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let mut paths = Vec::new();
    for (name, mut run) in shards() {
        if name == "run-3.json" {
            run.status = RunStatus::Interrupted {
                reason: "SIGTERM".into(),
            };
        }
        let p = dir.join(&name);
        run.write_atomic(&p).unwrap();
        paths.push(p);
    }
    let bin = env!("CARGO_BIN_EXE_servebench");
    let out = dir.join("merged.jsonl");
    let o = std::process::Command::new(bin)
        .arg("merge")
        .args(&paths)
        .arg("--out")
        .arg(&out)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{stderr}");
    assert!(stderr.contains("shard 2/3"), "{stderr}");
    let merged = RunFile::read(&out).unwrap();
    assert_eq!(merged.records.len(), 7);
    assert!(
        matches!(merged.status, RunStatus::Interrupted { ref reason } if reason == "shard 3/3: SIGTERM")
    );
    let printed =
        servebench::format::text::parse_block(&String::from_utf8_lossy(&o.stdout)).unwrap();
    assert_eq!(printed.result.successful_requests, Some(7));

    let (_, mut foreign) = run_file(2, 3, &[1, 4], "2026-12-03T19:00:00Z");
    foreign.seed = Some(1);
    foreign.write_atomic(&paths[1]).unwrap();
    let o = std::process::Command::new(bin)
        .arg("merge")
        .args(&paths)
        .arg("--out")
        .arg(dir.join("refused.json"))
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("run-2.json: seed differs"), "{stderr}");
    assert!(!dir.join("refused.json").exists());
    let _ = std::fs::remove_dir_all(&dir);
}
