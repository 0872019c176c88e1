//! What a study shows beyond its figures, on a small simulator study run into a directory:
//! every run file carries the simulator's sampled vLLM metrics (their generation-token
//! increase is the records' output tokens); STUDY.md has, per step, the paragraph of
//! `observe::explain` on the two run files it compares; with the `plot` feature the charts
//! (`plots/PROFILE/*.svg`, well-formed XML) and `report.html` exist and are linked; a
//! resumed study writes the same bytes.
#![cfg(feature = "study")]

use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;

use servebench::app::study::{self as runner, Runner};
use servebench::format::study as doc;
use servebench::observe::Known;
use servebench::observe::{explain, RunView};
use servebench::runfile::RunFile;
use servebench::study::Journal;
use servebench::study::StudyFile;

const STUDY: &str = r#"format = "servebench-study"
version = 1
title = "Observed study"
model = "Qwen/Qwen3.5-35B-A3B"
hardware = "NVIDIA H200"

[profiles.busy]
dataset_name = "Random"
dataset_input_tokens = 512
dataset_output_tokens = 64
request_rate = 1000
total_requests = 96

[profiles.small]
dataset_name = "Random"
dataset_input_tokens = 128
dataset_output_tokens = 32
request_rate = 1000
total_requests = 24

[[engines]]
name = "vLLM"
kind = "simulator"
flags = ["--max-model-len=32768"]

[ladder]
profiles = ["busy"]

[[ladder.steps]]
name = "Quantization"
model = "Qwen/Qwen3.5-35B-A3B-FP8"

[[ladder.steps]]
name = "Batched tokens"
add = ["--max-num-batched-tokens=4096"]

[final]
profiles = ["busy", "small"]
"#;

fn tmp(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("servebench-obs-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    d
}

/// Runs the study into `dir` and writes its document, as `servebench study run` does.
fn run_study(dir: &Path) -> doc::Document {
    let s = StudyFile::parse(STUDY, "observed.toml".as_ref()).unwrap();
    let mut r = Runner::create(s, STUDY, dir).unwrap();
    let never = AtomicBool::new(false);
    assert_eq!(
        r.run(&never, &mut |_| {}).unwrap(),
        runner::Finish::Complete
    );
    let doc = doc::render(&r.study, &r.outcomes, &r.analysis(), true);
    runner::write_document(dir, &doc).unwrap();
    doc
}

fn run_file(dir: &Path, j: &Journal, key: &str) -> RunFile {
    RunFile::read(dir.join(&j.runs[key].file)).unwrap()
}

#[test]
fn study_runs_carry_server_metrics_and_the_document_explains_each_step() {
    let dir = tmp("explain");
    let doc = run_study(&dir);
    let j = Journal::read(&dir).unwrap();
    assert!(j.failures.is_empty(), "{:?}", j.failures);
    assert!(j.runs.len() >= 5, "{:?}", j.runs.keys());
    // Every run file has the sampled series, and the server's generation-token counter grew
    // by exactly the output tokens the client's records hold.
    for key in j.runs.keys() {
        let run = run_file(&dir, &j, key);
        let s = run
            .server_metrics
            .as_ref()
            .unwrap_or_else(|| panic!("{key}: no server_metrics"));
        assert!(s.len() >= 2, "{key}: {} samples", s.len());
        assert!((s.interval_s - 1.0).abs() < 1e-9, "{key}: {}", s.interval_s);
        let generated = s.increase(Known::GenerationTokens.names()).unwrap();
        let records: u64 = run.records.iter().map(|r| r.output_tokens()).sum();
        assert!(records > 0);
        assert_eq!(generated, records as f64, "{key}");
    }
    // One explanation per step, each the paragraph of explain() on the two run files.
    let md = std::fs::read_to_string(dir.join("STUDY.md")).unwrap();
    assert_eq!(md, doc.markdown);
    let steps = doc.json.explanations.len();
    assert_eq!(steps, 2, "{:?}", doc.json.explanations);
    assert_eq!(md.matches("\nWhy (profile busy;").count(), steps);
    for e in &doc.json.explanations {
        let (b, c) = (
            run_file(&dir, &j, &e.base_key),
            run_file(&dir, &j, &e.candidate_key),
        );
        let fresh = explain(
            &RunView {
                label: &e.reference,
                records: &b.records,
                server: b.server_metrics.as_ref(),
            },
            &RunView {
                label: &e.step,
                records: &c.records,
                server: c.server_metrics.as_ref(),
            },
        );
        assert_eq!(fresh, e.explanation);
        let ttft = fresh.ttft.as_ref().expect("TTFT explained");
        let tpot = fresh.tpot.as_ref().expect("TPOT explained");
        // The simulator knows every part: they add up to the measured change.
        for b in [ttft, tpot] {
            assert!(
                (b.explained_ms() - b.delta_ms()).abs() <= 0.01 * b.base_ms,
                "{b:?}"
            );
        }
        let para = fresh.paragraph();
        assert!(para.contains("Mean TTFT went from") && para.contains("Mean TPOT went from"));
        // The paragraph follows the step's own section.
        let section = md
            .split_once(&format!("\n### {}\n", e.step))
            .map(|x| x.1)
            .unwrap_or_else(|| panic!("no section for {}", e.step));
        let section = section.split("\n## ").next().unwrap();
        let section = section.split("\n### ").next().unwrap();
        assert!(section.contains(para.trim_end()), "{}: {section}", e.step);
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// Checks that `text` is well-formed XML with an `<svg>` root.
#[cfg(feature = "plot")]
fn well_formed_svg(path: &Path, text: &str) {
    use quick_xml::events::Event;
    let mut r = quick_xml::Reader::from_str(text);
    let mut root = None;
    let mut depth = 0i64;
    loop {
        match r.read_event() {
            Ok(Event::Start(e)) => {
                if root.is_none() {
                    root = Some(String::from_utf8_lossy(e.name().as_ref()).into_owned());
                }
                depth += 1;
            }
            Ok(Event::End(_)) => depth -= 1,
            Ok(Event::Eof) => break,
            Ok(_) => {}
            Err(e) => panic!(
                "{}: malformed at {}: {e}",
                path.display(),
                r.buffer_position()
            ),
        }
    }
    assert_eq!(root.as_deref(), Some("svg"), "{}", path.display());
    assert_eq!(depth, 0, "{}: unclosed elements", path.display());
}

#[cfg(feature = "plot")]
#[test]
fn plots_and_the_report_are_written_beside_the_document_and_linked() {
    let dir = tmp("plots");
    let doc = run_study(&dir);
    let md = std::fs::read_to_string(dir.join("STUDY.md")).unwrap();
    assert!(md.contains("\n## Plots\n"), "{md}");
    assert!(md.contains("](report.html)"));
    let links: Vec<&str> = md
        .lines()
        .filter_map(|l| l.strip_prefix("- [plots/"))
        .filter_map(|l| l.split_once("](").map(|x| x.1.trim_end_matches(')')))
        .collect();
    // Both profiles, with the four client charts, the two over time and the KV cache.
    for p in ["busy", "small"] {
        for f in [
            "total_tps.svg",
            "ttft_cdf.svg",
            "tpot_cdf.svg",
            "e2e_cdf.svg",
            "throughput_over_time.svg",
            "concurrency_over_time.svg",
            "kv_cache_over_time.svg",
        ] {
            let rel = format!("plots/{p}/{f}");
            assert!(links.contains(&rel.as_str()), "{rel} not linked: {links:?}");
        }
    }
    for rel in &links {
        let path = dir.join(rel);
        let text = std::fs::read_to_string(&path)
            .unwrap_or_else(|e| panic!("{} linked but: {e}", path.display()));
        well_formed_svg(&path, &text);
    }
    let html = std::fs::read_to_string(dir.join("report.html")).unwrap();
    assert!(html.starts_with("<!DOCTYPE html>") && html.trim_end().ends_with("</html>"));
    assert!(!html.contains("<script") && !html.contains(" src="));
    // The report shows every configuration of the decision profile and each explanation.
    assert_eq!(html.matches("<svg").count(), 7);
    for label in ["vLLM baseline", "Quantization", "Batched tokens"] {
        assert!(html.contains(&format!("<td>{label}</td>")), "{label}");
    }
    for e in &doc.json.explanations {
        assert!(html.contains(&servebench::observe::html::escape(
            e.explanation.render().lines().next().unwrap()
        )));
    }
    // The files written are the document's, byte for byte.
    for (rel, contents) in &doc.files {
        assert_eq!(&std::fs::read_to_string(dir.join(rel)).unwrap(), contents);
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_resumed_study_writes_the_same_document_plots_and_report() {
    let dir = tmp("resume");
    let doc = run_study(&dir);
    let r = Runner::resume(&dir, false).unwrap();
    let again = doc::render(&r.study, &r.outcomes, &r.analysis(), true);
    assert_eq!(again.markdown, doc.markdown);
    assert_eq!(again.files, doc.files);
    assert_eq!(
        serde_json::to_string(&again.json).unwrap(),
        serde_json::to_string(&doc.json).unwrap()
    );
    assert!(cfg!(not(feature = "plot")) || !doc.files.is_empty());
    let _ = std::fs::remove_dir_all(&dir);
}
