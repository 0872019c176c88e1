//! `servebench quality` against the example server: two configurations served at staged
//! accuracies (80 % and 78 %, each with its own answer seed) answer the synthetic eval set
//! over HTTP; the accuracy lines agree with the files, and `quality compare` calls the
//! 2-point drop worse and not non-inferior, while two servers at the same accuracy are
//! within noise. The error rates over seeded trials are the library's calibration test
//! (`quality::paired`), quoted in the decisions chapter.
#![cfg(all(feature = "http", feature = "cli", feature = "quality"))]

mod common;

use std::process::Command;

use common::example_server::Served;
use servebench::quality::run::QualityRun;

fn servebench(args: &[&str]) -> (bool, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_servebench"))
        .args(args)
        .output()
        .unwrap();
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// Runs the synthetic set against a server at `accuracy` with `seed`; the file.
fn quality_run(dir: &std::path::Path, accuracy: &str, seed: &str) -> (String, QualityRun) {
    let server = Served::start(&[
        "--speed",
        "50",
        "--delta",
        "content",
        "--accuracy",
        accuracy,
        "--accuracy-seed",
        seed,
    ]);
    let path = dir.join(format!("q-{accuracy}-{seed}.json"));
    let path = path.to_str().unwrap().to_string();
    let (ok, text, err) = servebench(&[
        "quality",
        "--target",
        &server.url,
        "--eval",
        "synthetic:2000",
        "--output",
        &path,
    ]);
    assert!(ok, "{err}");
    let run = QualityRun::read(&path).unwrap();
    assert_eq!(run.items.len(), 2000);
    assert!(run.items.iter().all(|i| i.error.is_none()));
    // The printed line is the file's figure.
    let a = &run.accuracy;
    assert!(
        text.starts_with(&format!(
            "Accuracy: {:.2} % ({} of 2000 items), 95 % interval",
            100.0 * a.accuracy,
            a.right
        )),
        "{text}"
    );
    let target: f64 = accuracy.parse().unwrap();
    // 2000 items: the accuracy's standard deviation is under a point.
    assert!((a.accuracy - target).abs() < 0.03, "{a:?}");
    (path, run)
}

#[test]
fn a_staged_two_point_drop_is_worse_and_an_aa_pair_is_not() {
    let dir = tempfile::tempdir().unwrap();
    let (reference, _) = quality_run(dir.path(), "0.8", "1");
    let (dropped, _) = quality_run(dir.path(), "0.78", "2");
    let (same, _) = quality_run(dir.path(), "0.8", "3");
    let (ok, text, err) = servebench(&["quality", "compare", &reference, &dropped]);
    assert!(ok, "{err}");
    assert!(text.contains(" over 2000 items: worse ("), "{text}");
    assert!(
        text.contains("Not shown non-inferior at a 1 point margin"),
        "{text}"
    );
    let (ok, text, err) = servebench(&["quality", "compare", &reference, &same]);
    assert!(ok, "{err}");
    assert!(text.contains(" over 2000 items: within noise ("), "{text}");
    // Runs of different eval sets do not pair.
    let other = dir.path().join("other.json");
    let mut run = QualityRun::read(&reference).unwrap();
    run.eval = "synthetic:100".into();
    std::fs::write(&other, serde_json::to_string(&run).unwrap()).unwrap();
    let (ok, _, err) = servebench(&["quality", "compare", &reference, other.to_str().unwrap()]);
    assert!(!ok && err.contains("same eval set"), "{err}");
}

/// Bad eval files name the file, the line and the JSON path; a bad spec names itself.
#[test]
fn bad_eval_input_names_where() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("e.jsonl");
    std::fs::write(&f, "{\"question\": \"q\", \"answer\": \"no marker\"}\n").unwrap();
    let (ok, _, err) = servebench(&[
        "quality",
        "--target",
        "http://127.0.0.1:9",
        "--eval",
        f.to_str().unwrap(),
    ]);
    assert!(!ok);
    assert!(
        err.contains("e.jsonl:1: $.answer: a GSM8K answer ends with `#### NUMBER`"),
        "{err}"
    );
    let (ok, _, err) = servebench(&[
        "quality",
        "--target",
        "http://127.0.0.1:9",
        "--eval",
        "synthetic:x",
    ]);
    assert!(!ok && err.contains("synthetic:N"), "{err}");
}
