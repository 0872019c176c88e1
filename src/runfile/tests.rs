//! Tests of `runfile`.

use super::*;
use crate::metrics::{compute, MetricsOptions};
use crate::record::{Chunk, ErrorKind, Outcome};
use crate::result::Convention;
use std::time::Duration;

fn sample() -> RunFile {
    let mut records = Vec::new();
    for id in 0..3u64 {
        let mut r = RequestRecord::new(id, Duration::from_millis(10 * id));
        for k in 1..=4u64 {
            r.chunks.push(Chunk {
                at: Duration::from_millis(10 * id + 30 * k),
                tokens: 1,
            });
        }
        r.ended_at = Some(Duration::from_millis(10 * id + 121));
        r.prompt_tokens = Some(128);
        records.push(r);
    }
    let mut failed = RequestRecord::new(3, Duration::from_millis(40));
    failed.outcome = Outcome::Error {
        kind: ErrorKind::HttpStatus,
        message: "503".into(),
    };
    records.push(failed);
    let opts = MetricsOptions::new(Convention::Vllm);
    let result = compute(&records, opts.clone());
    let started = chrono::DateTime::parse_from_rfc3339("2026-12-03T18:00:00+00:00").unwrap();
    let mut run = RunFile::new(
        result,
        records,
        Profile::preset("latency").unwrap(),
        started,
    );
    run.target = Some("http://127.0.0.1:9".into());
    run.model = Some("Qwen/Qwen3.5-35B-A3B".into());
    run.models_response =
        Some(serde_json::json!({"object": "list", "data": [{"id": "Qwen/Qwen3.5-35B-A3B"}]}));
    run.command_line = vec!["servebench".into(), "bench".into()];
    run.seed = Some(7);
    run.arrivals = Some(Arrivals::Gamma {
        rate: 20.0,
        burstiness: 0.5,
        seed: 7,
        rescale: true,
    });
    run.shard = Some(Shard { index: 2, count: 4 });
    run.labels.insert("step".into(), "baseline".into());
    run.metrics_options = Some(opts);
    run.warmup_records = vec![RequestRecord::new(99, Duration::ZERO)];
    run.stages = crate::observe::Stage::of_fill(2.5, 16);
    run.cold_start = Some(ColdStart {
        healthy_after_s: 12.25,
    });
    run
}

#[test]
fn both_forms_round_trip_through_files_atomically() {
    let dir = tempfile::tempdir().unwrap();
    let run = sample();
    for name in ["run.json", "run.jsonl"] {
        let path = dir.path().join(name);
        check_writable(&path).unwrap();
        run.write_atomic(&path).unwrap();
        assert_eq!(RunFile::read(&path).unwrap(), run, "{name}");
        // Overwriting keeps exactly one file and no temporaries.
        run.write_atomic(&path).unwrap();
    }
    let names: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    assert_eq!(names.len(), 2, "{names:?}");
    let jsonl = std::fs::read_to_string(dir.path().join("run.jsonl")).unwrap();
    assert_eq!(jsonl.lines().count(), 1 + run.records.len());
    assert!(jsonl.lines().next().unwrap().contains("\"record_count\":4"));
}

/// A soak's run file, written with its records read from a spool, is the file
/// `write_atomic` writes, in both forms.
#[test]
fn a_spooled_run_file_is_the_same_file() {
    let dir = tempfile::tempdir().unwrap();
    let run = sample();
    let spool = dir.path().join("spool.jsonl");
    let mut lines = String::new();
    for r in &run.records {
        lines.push_str(&serde_json::to_string(r).unwrap());
        lines.push('\n');
    }
    std::fs::write(&spool, lines).unwrap();
    let mut header = run.clone();
    header.records.clear();
    for name in ["run.json", "run.jsonl"] {
        let (whole, spooled) = (dir.path().join(name), dir.path().join(format!("s-{name}")));
        run.write_atomic(&whole).unwrap();
        header
            .write_atomic_spooled(&spooled, &spool, run.records.len() as u64)
            .unwrap();
        assert_eq!(
            std::fs::read(&whole).unwrap(),
            std::fs::read(&spooled).unwrap(),
            "{name}"
        );
        assert_eq!(RunFile::read(&spooled).unwrap(), run, "{name}");
    }
    // An empty spool: no records member at all, as for a run without records.
    std::fs::write(&spool, "").unwrap();
    let path = dir.path().join("empty.json");
    header.write_atomic_spooled(&path, &spool, 0).unwrap();
    assert_eq!(RunFile::read(&path).unwrap(), header);
}

#[test]
fn errors_name_file_line_and_json_path() {
    let dir = tempfile::tempdir().unwrap();
    let run = sample();
    let path = dir.path().join("bad.jsonl");
    let mut bytes = Vec::new();
    run.write_to(&mut bytes, Form::Jsonl).unwrap();
    let text = String::from_utf8(bytes).unwrap();
    // Line 3 (the second record): a negative token count.
    let bad: String = text
        .lines()
        .enumerate()
        .map(|(i, l)| match i {
            2 => l.replacen("\"tokens\":1", "\"tokens\":-1", 1) + "\n",
            _ => format!("{l}\n"),
        })
        .collect();
    assert_ne!(bad, text);
    std::fs::write(&path, &bad).unwrap();
    let msg = RunFile::read(&path).unwrap_err().to_string();
    assert!(
        msg.contains("bad.jsonl") && msg.contains("line 3") && msg.contains("chunks[0].tokens"),
        "{msg}"
    );

    // A record line lost at the end.
    let cut: String = text.lines().take(4).map(|l| format!("{l}\n")).collect();
    std::fs::write(&path, cut).unwrap();
    let err = RunFile::read(&path).unwrap_err();
    assert!(
        matches!(
            err,
            RunFileError::RecordCount {
                declared: 4,
                found: 3,
                ..
            }
        ),
        "{err}"
    );

    // JSON form: the path inside the document.
    let path = dir.path().join("bad.json");
    let mut v = serde_json::to_value(&run).unwrap();
    v["records"][2]["sent_at"] = serde_json::json!("soon");
    std::fs::write(&path, v.to_string()).unwrap();
    let msg = RunFile::read(&path).unwrap_err().to_string();
    assert!(
        msg.contains("bad.json") && msg.contains("records[2].sent_at"),
        "{msg}"
    );

    v["records"][2]["sent_at"] = serde_json::json!({"secs": 0, "nanos": 0});
    v["version"] = serde_json::json!(2);
    let err = RunFile::from_slice(v.to_string().as_bytes()).unwrap_err();
    assert!(
        matches!(err, RunFileError::UnsupportedVersion { found: 2, .. }),
        "{err}"
    );
    let err = RunFile::from_slice(br#"{"schema_version":1,"result":{}}"#).unwrap_err();
    assert!(
        matches!(err, RunFileError::NotARunFile { found: None, .. }),
        "{err}"
    );
    let err = RunFile::from_slice(b"{\"format\":\"servebench-run\",").unwrap_err();
    assert!(matches!(err, RunFileError::Json { .. }), "{err}");
    let err = RunFile::from_slice(b"").unwrap_err();
    assert!(matches!(err, RunFileError::Json { .. }), "{err}");
}

#[test]
fn unwritable_destinations_are_refused_before_the_run() {
    let dir = tempfile::tempdir().unwrap();
    let err = check_writable(&dir.path().join("missing/run.json")).unwrap_err();
    assert!(err.to_string().contains("missing"), "{err}");
    let file = dir.path().join("file");
    std::fs::write(&file, "x").unwrap();
    assert!(
        check_writable(&file.join("run.json")).is_err(),
        "parent is a file"
    );
    assert!(check_writable(dir.path()).is_err(), "a directory");
    let mut perms = std::fs::metadata(&file).unwrap().permissions();
    perms.set_readonly(true);
    std::fs::set_permissions(&file, perms).unwrap();
    assert!(check_writable(&file).is_err(), "read-only file");
    assert_eq!(
        std::fs::read_dir(dir.path()).unwrap().count(),
        1,
        "nothing left behind"
    );
}

/// A capacity search's fields — `capacity_probe` on the run file, `capacity` in its result —
/// round-trip in both forms, are written under their documented names, and a run file
/// without them (every file before them) reads back with neither.
#[test]
fn capacity_fields_round_trip_and_are_optional() {
    use crate::result::{CapacityEstimate, CapacityProbe, SearchKind};
    let mut run = sample();
    run.capacity_probe = Some(CapacityProbe {
        search: SearchKind::Rate,
        slo: "ttft:p99<=500ms tpot:p99<=50ms goodput>=0.99".into(),
        index: 7,
        load: 12.5,
        repetition: 2,
        worst_ratio: 0.93,
        held: true,
    });
    run.result.capacity = Some(CapacityEstimate {
        search: SearchKind::Concurrency,
        slo: "ttft:p99<=500ms".into(),
        estimate: Some(24.0),
        lower: Some(24.0),
        upper: None,
        resolution: 1.0,
        probes: 9,
        converged: false,
    });
    for form in [Form::Json, Form::Jsonl] {
        let mut bytes = Vec::new();
        run.write_to(&mut bytes, form).unwrap();
        assert_eq!(RunFile::from_slice(&bytes).unwrap(), run, "{form:?}");
    }
    let v: serde_json::Value = serde_json::to_value(&run).unwrap();
    let probe = &v["capacity_probe"];
    assert_eq!(probe["search"], "rate");
    assert_eq!(probe["worst_ratio"], 0.93);
    assert_eq!(probe["held"], true);
    let cap = &v["result"]["capacity"];
    assert_eq!(cap["search"], "concurrency");
    assert_eq!(cap["lower"], 24.0);
    assert!(cap.get("upper").is_some_and(|u| u.is_null()));
    assert_eq!(cap["converged"], false);
    // Without them: absent from the file, `None` when read.
    let plain = sample();
    let text = serde_json::to_string(&plain).unwrap();
    assert!(!text.contains("capacity"), "{text}");
    let back = RunFile::from_slice(text.as_bytes()).unwrap();
    assert_eq!((back.capacity_probe, back.result.capacity), (None, None));
}
