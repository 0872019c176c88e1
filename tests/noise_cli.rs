//! `servebench compare` with noise: run files with records (intervals computed from them),
//! repetitions (t-intervals), and plain reports (noise unknown).
#![cfg(all(feature = "sim", feature = "cli"))]

use std::path::PathBuf;
use std::process::{Command, Output};

use servebench::profile::Profile;
use servebench::runfile::RunFile;
use servebench::sim::noise::{simulate_repetition, NoiseModel};
use servebench::sim::run::Simulated;
use servebench::sim::Config;

const BIN: &str = env!("CARGO_BIN_EXE_servebench");

fn run(args: &[&str]) -> Output {
    Command::new(BIN).args(args).output().unwrap()
}

fn stdout(o: &Output) -> String {
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    String::from_utf8(o.stdout.clone()).unwrap()
}

fn path(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("noise-cli-{name}"))
}

/// A run of the latency profile (1 req/s, open loop: intervals are estimable) on the
/// simulator with noise, saved as `bench --output` saves a run (a servebench-run file).
fn run_file(name: &str, config: &str, seed: u64) -> PathBuf {
    let mut profile = Profile::preset("latency").unwrap();
    profile.total_requests = 300;
    profile.request_rate = 10.0;
    let cfg = Config::named(config).unwrap();
    let out: Simulated =
        simulate_repetition(&profile, &cfg, true, &NoiseModel::typical(seed)).unwrap();
    let p = path(name);
    let started = chrono::DateTime::parse_from_rfc3339("2026-01-01T00:00:00Z").unwrap();
    RunFile::new(out.result, out.records, profile, started)
        .write_atomic(&p)
        .unwrap();
    p
}

#[test]
fn compare_run_files_gives_verdicts_from_records() {
    let a = run_file("a.json", "baseline", 1);
    let a2 = run_file("a2.json", "baseline", 2);
    let b = run_file("b.json", "optimized", 3);
    let out = stdout(&run(&["compare", a.to_str().unwrap(), b.to_str().unwrap()]));
    assert!(
        out.contains("Noise: 95% intervals from each run's records"),
        "{out}"
    );
    let tpot = out
        .lines()
        .find(|l| l.starts_with("Mean TPOT (ms)") && l.contains('['))
        .unwrap_or_else(|| panic!("{out}"));
    // FP8 weights decode faster: the TPOT drop is far beyond the noise.
    assert!(tpot.contains("better"), "{tpot}");
    // The conclusion cell carries the verdict.
    assert!(
        out.trim_end().lines().last().unwrap().contains(", better]"),
        "{out}"
    );

    // Two runs of one configuration: the mean TPOT change is within the noise.
    let same = stdout(&run(&[
        "compare",
        a.to_str().unwrap(),
        a2.to_str().unwrap(),
    ]));
    let tpot = same
        .lines()
        .find(|l| l.starts_with("Mean TPOT (ms)") && l.contains('['))
        .unwrap();
    assert!(tpot.contains("within noise"), "{same}");

    // Markdown: the same table as a markdown table.
    let md = stdout(&run(&[
        "compare",
        a.to_str().unwrap(),
        b.to_str().unwrap(),
        "--format",
        "markdown",
    ]));
    assert!(
        md.contains(
            "| Metric | Change % | 95% interval | Verdict | Detectable | Runs for ±2.00% |"
        ),
        "{md}"
    );
}

#[test]
fn plain_reports_say_noise_unknown_and_repetitions_use_t_intervals() {
    let seed = "tests/fixtures/seed.txt";
    let out = stdout(&run(&[
        "compare",
        seed,
        seed,
        "--base-block",
        "8",
        "--candidate-block",
        "9",
    ]));
    assert!(
        out.contains("Noise: single runs without records: noise unknown\n"),
        "{out}"
    );

    // Repetitions: a JSON array of results per side.
    let results = |config: &str, seeds: [u64; 3]| -> PathBuf {
        let rs: Vec<_> = seeds
            .iter()
            .map(|&s| {
                let p = run_file(&format!("rep-{config}-{s}.json"), config, s);
                let v: serde_json::Value =
                    serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap();
                v["result"].clone()
            })
            .collect();
        let p = path(&format!("reps-{config}.json"));
        std::fs::write(&p, serde_json::to_string(&rs).unwrap()).unwrap();
        p
    };
    let a = results("baseline", [11, 13, 15]);
    let b = results("optimized", [12, 14, 16]);
    let out = stdout(&run(&[
        "compare",
        a.to_str().unwrap(),
        b.to_str().unwrap(),
        "--repetitions",
        "--paired",
    ]));
    assert!(
        out.contains("t-intervals from 3 baseline and 3 candidate runs (paired)"),
        "{out}"
    );
    assert!(
        out.lines()
            .any(|l| l.starts_with("Mean TPOT (ms)") && l.contains("better")),
        "{out}"
    );
    // One result is not repetitions.
    let single = run_file("single.json", "baseline", 21);
    let one = run(&[
        "compare",
        single.to_str().unwrap(),
        a.to_str().unwrap(),
        "--repetitions",
    ]);
    assert_eq!(one.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&one.stderr)
        .contains("--repetitions needs at least 2 results, the input holds 1"));
    let bad = run(&["compare", seed, seed, "--confidence", "95"]);
    assert_eq!(bad.status.code(), Some(2));
}
