//! `servebench compare` with noise: run files with records (intervals computed from them),
//! repetitions (t-intervals), and plain reports (noise unknown).
#![cfg(all(feature = "sim", feature = "cli"))]

use std::path::PathBuf;
use std::process::{Command, Output};

use servebench::profile::Profile;
use servebench::runfile::RunFile;
use servebench::sim::Config;
use servebench::sim::Simulated;
use servebench::sim::{simulate_repetition, NoiseModel};

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
    profile_file(name, config, seed, profile)
}

/// A run of `profile` on the simulator with noise, saved as a run file.
fn profile_file(name: &str, config: &str, seed: u64, profile: Profile) -> PathBuf {
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

/// Several runs per side: between-run t-intervals, from paths after `--` or from two
/// directories; a side with one run is refused with the reason.
#[test]
fn several_runs_per_side_use_between_run_intervals() {
    let dir_a = path("multi-a");
    let dir_b = path("multi-b");
    for d in [&dir_a, &dir_b] {
        let _ = std::fs::remove_dir_all(d);
        std::fs::create_dir_all(d).unwrap();
    }
    let a: Vec<PathBuf> = (0..3)
        .map(|i| {
            let p = run_file(&format!("multi-a{i}.json"), "baseline", 40 + i);
            let to = dir_a.join(format!("a{i}.json"));
            std::fs::copy(&p, &to).unwrap();
            to
        })
        .collect();
    let b: Vec<PathBuf> = (0..3)
        .map(|i| {
            let p = run_file(&format!("multi-b{i}.json"), "optimized", 50 + i);
            let to = dir_b.join(format!("b{i}.json"));
            std::fs::copy(&p, &to).unwrap();
            to
        })
        .collect();
    let s = |p: &PathBuf| p.to_str().unwrap().to_string();
    let mut args: Vec<String> = vec!["compare".into()];
    args.extend(a.iter().map(s));
    args.push("--".into());
    args.extend(b.iter().map(s));
    let argv: Vec<&str> = args.iter().map(String::as_str).collect();
    let out = stdout(&run(&argv));
    assert!(
        out.contains(
            "Noise: 95% t-intervals from 3 baseline and 3 candidate runs (unpaired, Welch)"
        ),
        "{out}"
    );
    assert!(
        out.contains("Verdicts: the target, Total Token throughput (tok/s), at 5%; the "),
        "{out}"
    );
    // FP8 decodes faster: the mean TPOT is better between runs too.
    let tpot = out
        .lines()
        .find(|l| l.starts_with("Mean TPOT (ms)") && l.contains('['))
        .unwrap();
    assert!(tpot.contains("better"), "{out}");
    // Two directories: the same comparison.
    let by_dir = stdout(&run(&[
        "compare",
        dir_a.to_str().unwrap(),
        dir_b.to_str().unwrap(),
    ]));
    let noise = |o: &str| o[o.find("Noise:").unwrap()..].to_string();
    assert_eq!(noise(&by_dir), noise(&out));
    // One run against three: no between-run interval for one side.
    let o = run(&["compare", argv[1], "--", argv[5], argv[6], argv[7]]);
    assert_eq!(o.status.code(), Some(1));
    let e = String::from_utf8_lossy(&o.stderr);
    assert!(
        e.contains("between-run intervals need at least 2 runs per side, the baseline has 1"),
        "{e}"
    );
    // Three paths without `--` are a usage error.
    assert_eq!(
        run(&["compare", argv[1], argv[2], argv[3]]).status.code(),
        Some(2)
    );
}

/// `--min-effect`: the FP8 mean-TPOT drop (about 4–5 %) is "better" against a 1 % minimum
/// and "better but below the minimum effect" against 30 %; the target metric is listed
/// first.
#[test]
fn min_effect_outcomes_and_the_target_first() {
    let a = run_file("me-a.json", "baseline", 61);
    let b = run_file("me-b.json", "optimized", 62);
    let (a, b) = (a.to_str().unwrap(), b.to_str().unwrap());
    let row = |out: &str, label: &str| -> String {
        out.lines()
            .find(|l| l.starts_with(label) && l.contains('['))
            .unwrap_or_else(|| panic!("{out}"))
            .to_string()
    };
    let one = stdout(&run(&[
        "compare",
        a,
        b,
        "--target",
        "mean_tpot_ms",
        "--min-effect",
        "1",
    ]));
    assert!(row(&one, "Mean TPOT (ms)").contains("better"), "{one}");
    assert!(!row(&one, "Mean TPOT (ms)").contains("< min"), "{one}");
    assert!(one.contains("\"better\" needs the interval beyond the minimum effect of 1.00%"));
    // The target's row opens the noise table.
    let header = one
        .lines()
        .position(|l| l.starts_with("Metric") && l.contains("Change %   95% interval"))
        .unwrap();
    assert!(
        one.lines()
            .nth(header + 1)
            .unwrap()
            .starts_with("Mean TPOT (ms)"),
        "{one}"
    );
    let big = stdout(&run(&[
        "compare",
        a,
        b,
        "--target",
        "mean_tpot_ms",
        "--min-effect",
        "30",
    ]));
    assert!(
        row(&big, "Mean TPOT (ms)").contains("better < min"),
        "{big}"
    );
    // The first table says the same, in full words.
    assert!(
        big.lines().any(|l| l.starts_with("Mean TPOT (ms)")
            && l.ends_with("better but below the minimum effect")),
        "{big}"
    );
    let bad = run(&["compare", a, b, "--min-effect", "-1"]);
    assert_eq!(bad.status.code(), Some(2));
    let bad = run(&["compare", a, b, "--target", "tpot"]);
    assert_eq!(bad.status.code(), Some(2));
}

/// Runs of different workloads are compared with a warning; a burst run of 1000 requests
/// says why its noise is unknown (too few independent blocks), not "without records".
#[test]
fn different_workloads_warn_and_burst_runs_give_the_real_reason() {
    let a = run_file("wl-a.json", "baseline", 71);
    let mut faster = Profile::preset("latency").unwrap();
    faster.total_requests = 300;
    faster.request_rate = 20.0;
    let b = profile_file("wl-b.json", "baseline", 72, faster);
    let o = run(&["compare", a.to_str().unwrap(), b.to_str().unwrap()]);
    let out = stdout(&o);
    let warning = "Warning: the two sides ran different workloads (request rate 10 vs 20 req/s)";
    assert!(out.starts_with(warning), "{out}");
    assert!(String::from_utf8_lossy(&o.stderr).contains(warning));
    // The same workload drawn with another seed is no difference.
    let a2 = run_file("wl-a2.json", "baseline", 73);
    let same = stdout(&run(&[
        "compare",
        a.to_str().unwrap(),
        a2.to_str().unwrap(),
    ]));
    assert!(!same.contains("Warning:"), "{same}");

    // A Throughput run: 1000 requests at once, served in a few waves.
    let burst = |name: &str, seed: u64| {
        profile_file(
            name,
            "baseline",
            seed,
            Profile::preset("throughput").unwrap(),
        )
    };
    let (x, y) = (burst("burst-a.json", 81), burst("burst-b.json", 82));
    let out = stdout(&run(&["compare", x.to_str().unwrap(), y.to_str().unwrap()]));
    assert!(
        out.contains("Noise: unknown (")
            && out.contains("noise-cli-burst-a.json: too few independent blocks"),
        "{out}"
    );
    assert!(!out.contains("single runs without records"), "{out}");
    // Neither better nor worse without the noise.
    let first_table: Vec<&str> = out.lines().take_while(|l| !l.is_empty()).collect();
    assert!(
        first_table[1..]
            .iter()
            .all(|l| l.ends_with("noise unknown") || l.ends_with("N/A")),
        "{out}"
    );
}
