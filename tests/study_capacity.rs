//! A study with `goal = "capacity"` on the embedded simulator: every run is a capacity
//! search under the study's SLO, the ladder keeps a step only when its capacity interval
//! lies above the best one's, and `STUDY.md` concludes in req/s under the SLO with
//! intervals. Each interval contains the simulator's own capacity for that configuration,
//! found independently by a fine bisection over the same simulated runs; every probe is a
//! run file in the study directory.
#![cfg(all(feature = "study", feature = "sim", unix))]

use std::sync::atomic::AtomicBool;

use servebench::app::study::Runner;
use servebench::capacity::SloTarget;
use servebench::runfile::RunFile;
use servebench::study::Configuration;
use servebench::study::StudyFile;
use servebench::study::{decide_capacity, Call};

const STUDY: &str = r#"
format = "servebench-study"
version = 1
title = "Capacity of Qwen3.5-35B-A3B under a TTFT SLO"
goal = "capacity"
slo = "ttft:p90<=300ms"
model = "Qwen/Qwen3.5-35B-A3B"
hardware = "NVIDIA H200"

[capacity]
search = "rate"
min = 2
max = 40
resolution = 0.5

[profiles.prefill]
dataset_name = "Random"
dataset_input_tokens = 4000
dataset_output_tokens = 20
request_rate = 10
total_requests = 100

[[engines]]
name = "vLLM"
kind = "simulator"
flags = ["--max-model-len=32768"]

[ladder]
profiles = ["prefill"]

[[ladder.steps]]
name = "Quantization"
model = "Qwen/Qwen3.5-35B-A3B-FP8"

[[ladder.steps]]
name = "Fewer Batched Tokens"
add = ["--max-num-batched-tokens=2048"]

[final]
profiles = ["prefill"]
"#;

/// The simulator's capacity for `c` under `slo` on `profile`, by bisection to 0.01 req/s
/// over runs made as the study makes its probes (a fresh simulator per run, 30 s of
/// requests, the sustained-load rule).
fn offline_capacity(s: &StudyFile, c: &Configuration, slo: &SloTarget) -> f64 {
    let (config, params) = servebench::study::sim_config(&c.model, &c.flags).unwrap();
    let profile = s.profile("prefill").unwrap();
    let holds = |rate: f64| {
        // The study's probes: bounded by time, judged on the SLO and the load carried.
        let mut p = profile.clone();
        p.request_rate = rate;
        p.total_requests =
            servebench::capacity::probe_requests(rate, servebench::capacity::DEFAULT_PROBE_SECONDS);
        let out =
            servebench::app::study::simulate_run(&p, config.clone(), params.clone(), 0, false)
                .unwrap();
        slo.check_probe(
            &out.records,
            servebench::result::SearchKind::Rate,
            Some(p.total_requests),
        )
        .held
    };
    let (mut lo, mut hi) = (2.0, 40.0);
    assert!(holds(lo) && !holds(hi));
    while hi - lo > 0.01 {
        let mid = (lo + hi) / 2.0;
        if holds(mid) {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    (lo + hi) / 2.0
}

#[test]
fn a_capacity_study_concludes_in_requests_per_second_under_the_slo() {
    let s = StudyFile::parse(STUDY, "capacity.toml".as_ref()).unwrap();
    let slo = s.slo_target().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let mut r = Runner::create(s.clone(), STUDY, &dir.path().join("study")).unwrap();
    r.run(&AtomicBool::new(false), &mut |l| eprintln!("{l}"))
        .unwrap();
    let a = r.analysis();
    let doc = servebench::format::study::render(&s, &r.outcomes, &a, true);
    eprintln!("{}", doc.markdown);
    // Every decision says what it rests on (the capacity searches' intervals), never an
    // empty "()" or "single runs without intervals" for results that have intervals.
    let md = &doc.markdown;
    assert!(!md.contains("()") && !md.contains("; )"), "{md}");
    assert!(!md.contains("single runs without intervals"), "{md}");
    assert!(md.contains("on the capacity searches' intervals"), "{md}");

    // Every configuration's capacity interval contains the simulator's own capacity.
    let base = a.baseline.clone().unwrap();
    let rec = a.recommended.clone().unwrap();
    let capacity_of = |c: &Configuration| {
        let key = servebench::study::run_key(&c.key(), "prefill", 1);
        r.outcomes.results[&key].capacity.clone().unwrap()
    };
    let mut configs = vec![base.clone()];
    configs.extend(a.steps.iter().map(|st| st.config.clone()));
    for c in &configs {
        let e = capacity_of(c);
        let truth = offline_capacity(&s, c, &slo);
        let (lo, hi) = (e.lower.unwrap(), e.upper.unwrap());
        eprintln!("{}: [{lo:.2}, {hi:.2}] vs {truth:.2}", c.key());
        assert!(
            lo <= truth && truth <= hi,
            "{}: [{lo}, {hi}] vs {truth}",
            c.key()
        );
        assert!(hi - lo <= 0.5 + 1e-9 && e.converged);
        assert_eq!(e.slo, "ttft:p90<=300ms");
        // Fewer probes than a 77-point grid.
        assert!(e.probes < 77 / 3, "{}", e.probes);
    }
    // Each step is kept exactly when its interval lies above the best configuration's.
    let mut best = capacity_of(&base);
    for st in &a.steps {
        let e = capacity_of(&st.config);
        let d = decide_capacity(&best, &e);
        assert_eq!(st.accepted, d.call == Call::Better, "{}", st.name);
        if st.accepted {
            best = e;
        }
    }
    assert!(a.steps[0].accepted, "FP8 raises the capacity");

    // The document concludes in req/s under the SLO, with the intervals.
    let md = &doc.markdown;
    let conclusion = &md[..md.find("## Experimental Setup").unwrap()];
    assert!(conclusion.contains("optimizing capacity under the SLO of Qwen3.5-35B-A3B"));
    assert!(conclusion.contains("| Benchmark Case | Baseline capacity | Optimized capacity |"));
    let cell =
        |e: &servebench::result::CapacityEstimate| servebench::format::capacity::capacity_cell(e);
    let row = format!(
        "| prefill Profile | {} | {} |",
        cell(&capacity_of(&base)),
        cell(&capacity_of(&rec))
    );
    assert!(conclusion.contains(&row), "no `{row}` in\n{conclusion}");
    assert!(row.contains(" req/s ["), "{row}");
    assert!(conclusion.contains("SLO `ttft:p90<=300ms`"), "{conclusion}");
    assert!(conclusion.contains("Decision on Capacity under the SLO"));
    assert_eq!(doc.json.target, "capacity");

    // Every probe is a run file with its place in the search; the run's file is the
    // probe at the highest load that held.
    let study_dir = dir.path().join("study");
    for c in &configs {
        let e = capacity_of(c);
        let probes = study_dir.join(format!("runs/{}/prefill-r1-probes", c.key()));
        let mut n = 0;
        for i in 1..=e.probes {
            let f = RunFile::read(probes.join(format!("probe-{i:03}.json"))).unwrap();
            let p = f.capacity_probe.unwrap();
            assert_eq!((p.index, p.held), (i, slo.check(&f.records).held));
            n += 1;
        }
        assert_eq!(n, e.probes);
        let run =
            RunFile::read(study_dir.join(format!("runs/{}/prefill-r1.json", c.key()))).unwrap();
        let p = run.capacity_probe.clone().unwrap();
        assert_eq!(Some(p.load), e.lower);
        assert!(p.held);
        assert_eq!(run.result.capacity, Some(e));
    }
}

#[test]
fn a_capacity_study_file_names_what_is_wrong() {
    let bad = |from: &str, to: &str| {
        let text = STUDY.replace(from, to);
        StudyFile::parse(&text, "capacity.toml".as_ref())
            .unwrap_err()
            .to_string()
    };
    let e = bad("slo = \"ttft:p90<=300ms\"", "slo = \"ttft:p90<=300\"");
    assert!(
        e.contains("`slo`: `ttft:p90<=300`: give the limit's unit"),
        "{e}"
    );
    let e = bad("slo = \"ttft:p90<=300ms\"\n", "");
    assert!(e.contains("`slo`: goal = \"capacity\" needs an SLO"), "{e}");
    let e = bad("max = 40", "max = 1");
    assert!(
        e.contains("`[capacity]`: the search range must have 0 < min < max"),
        "{e}"
    );
    let e = bad("goal = \"capacity\"", "goal = \"throughput\"");
    assert!(
        e.contains("`slo` and `[capacity]` are for goal = \"capacity\""),
        "{e}"
    );
    let e = bad(
        "goal = \"capacity\"",
        "goal = \"capacity\"\ntarget = \"mean_ttft_ms\"",
    );
    assert!(e.contains("a capacity study's target is `capacity`"), "{e}");
}
