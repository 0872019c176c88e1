//! The main job's study (`studies/qwen3.5-h200-throughput.toml` on the simulator) beside the
//! seed document: the same sections in the same order, the same conclusion-table cases and
//! the same ladder steps in the same order; the latency study file; study-file errors that
//! name the key or line.
#![cfg(all(feature = "study", unix))]

use std::path::Path;

use servebench::app::study;
use servebench::format::text;
use servebench::study::StudyFile;

fn seed() -> String {
    std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/seed.txt"
    ))
    .unwrap()
}

fn study_file(name: &str) -> StudyFile {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("studies")
        .join(name);
    StudyFile::read(&path).unwrap()
}

/// Markdown headings, `#`s removed.
fn headings(md: &str) -> Vec<String> {
    md.lines()
        .filter(|l| l.starts_with('#'))
        .map(|l| l.trim_start_matches('#').trim().to_string())
        .collect()
}

/// The first cells of a table's rows after the line `header` (text: tab-separated; markdown:
/// `|`-separated, separator row skipped, `**` removed).
fn first_cells(doc: &str, header: &str) -> Vec<String> {
    let at = doc
        .find(header)
        .unwrap_or_else(|| panic!("no table `{header}`"));
    doc[at..]
        .lines()
        .skip(1)
        .take_while(|l| !l.trim().is_empty())
        .filter(|l| !l.starts_with("|--") && !l.starts_with("| ---"))
        .map(|l| {
            let cell = if l.starts_with('|') {
                l.trim_start_matches('|').split('|').next().unwrap_or("")
            } else {
                l.split('\t').next().unwrap_or("")
            };
            cell.trim().trim_matches('*').to_string()
        })
        .collect()
}

#[test]
fn the_main_jobs_document_has_the_seeds_sections_tables_and_step_order() {
    let doc = study::run_in_memory(&study_file("qwen3.5-h200-throughput.toml")).unwrap();
    let md = &doc.markdown;
    let seed = seed();
    let seed_lines: Vec<&str> = seed.lines().map(str::trim).collect();
    // Every heading of ours is a line of the seed, in the seed's order. The seed is not
    // consistent with itself, so two normalisations: "Other Benchmark Cases" headings
    // without their " Profile" suffix (the seed's first lacks it), and a step's `&&` parts
    // as a set (its KV-cache section heading orders them differently from its summary row).
    let norm = |s: &str| {
        let s = s.trim_end_matches(" Profile");
        let mut parts: Vec<&str> = s.split(" && ").collect();
        parts.sort_unstable();
        parts.join(" && ")
    };
    let mut pos = 0;
    let ours = headings(md);
    for h in &ours[1..] {
        let found = seed_lines[pos..].iter().position(|l| norm(l) == norm(h));
        let Some(i) = found else {
            panic!("heading `{h}` is not in the seed after line {pos}");
        };
        pos += i + 1;
    }
    assert_eq!(ours[0], seed_lines[0], "title");
    for section in [
        "Conclusion",
        "Serving Command",
        "Note",
        "Experimental Setup",
        "Model",
        "Hardware",
        "Engine Version",
        "Benchmark Method",
        "Benchmark Profiles",
        "Open-Source Replacement",
        "Experiment Results",
        "Baseline of the Inference Engine",
        "vLLM",
        "Summary of Optimization Options",
        "Other Benchmark Cases",
    ] {
        assert!(
            ours.iter().any(|h| h == section),
            "missing section {section}"
        );
    }
    // The conclusion table: the same cases in the same order.
    assert_eq!(
        first_cells(md, "| Benchmark Case | baseline"),
        first_cells(&seed, "Benchmark Case\tbaseline")
    );
    // The ladder: the same steps in the same order, each with its own section.
    let steps = first_cells(&seed, "Benchmark Cases\tOptimized\tBaseline");
    assert_eq!(steps.len(), 5);
    assert_eq!(
        first_cells(md, "| Benchmark Cases | Optimized | Baseline |"),
        steps
    );
    for s in &steps {
        assert!(ours.contains(s), "no section for step {s}");
    }
    // Every block parses back, and there is one per run shown: the engine baseline and the
    // five steps (MTP included: the simulator models it) on the ladder's four profiles, and
    // baseline + optimized on the four final profiles.
    let blocks = text::parse(md).unwrap();
    assert_eq!(blocks.len(), 4 + 5 * 4 + 8, "{}", blocks.len());
    // The recommended command is `vllm serve` with the FP8 model and the kept flags.
    let cmd = doc.json.serving_command.clone().unwrap();
    assert!(
        cmd.starts_with("vllm serve Qwen/Qwen3.5-35B-A3B-FP8 \\\n    --reasoning-parser=qwen3"),
        "{cmd}"
    );
    assert!(cmd.ends_with("--async-scheduling"), "{cmd}");
    // MTP is simulated (draft passes and verification): its step shows a run of its own, on
    // the flags it names, and nothing is reported as not run.
    let mtp = md
        .split("### Speculative Decoding && Quantization\n")
        .nth(1)
        .and_then(|s| s.split("\n## ").next())
        .expect("the MTP step's section");
    assert!(mtp.contains("--speculative-config={\"method\":\"mtp\",\"num_speculative_tokens\":4}"));
    assert_eq!(text::parse(mtp).unwrap().len(), 4, "{mtp}");
    // MTP is better on ShareGPT but loses on every other profile: the all-profiles rule does
    // not keep it, its section says why and what the source study measured of it.
    assert!(mtp.contains("Skipped: better on sharegpt but not shown within the 2% tolerance on throughput (worse ("), "{mtp}");
    assert!(
        mtp.contains("| generation-heavy | guard: loses at most 2% | worse ("),
        "{mtp}"
    );
    assert!(mtp.contains("Known from elsewhere: In the source study this step's real ShareGPT run completed 516 of 1000 requests (48.4 % failed)"), "{mtp}");
    assert!(!cmd.contains("speculative"), "{cmd}");
    // The recommended command loses on no profile beyond the 2% tolerance: every final
    // profile is better, and the conclusion says the rule allowed no such loss.
    for row in &doc.json.conclusion {
        let d = row.decision.as_ref().unwrap();
        assert_eq!(
            d.call,
            servebench::study::Call::Better,
            "{}: {}",
            row.profile,
            d.text()
        );
    }
    assert!(md.contains("No kept step was allowed to lose more than 2% on any ladder profile (sharegpt, throughput, long-context, generation-heavy)."));
    // The kept step's latency cost beside its gain, and the best configuration per profile.
    assert!(md.contains("| Kept step | Total Token throughput (tok/s) | Mean TTFT | P99 TTFT | KV-cache peak | Preemptions |"));
    assert!(md.contains("| Quantization | +10.94% | "), "{md}");
    assert!(md.contains("| generation-heavy | KV Cache Dtype && Performance Mode && Prefix Cache && Quantization | "), "{md}");
    // The engine's GPU price gives the cost per final profile: the GPU-second over each
    // run's output throughput, baseline → optimized.
    assert!(
        md.contains("Cost at $3.50 per GPU-hour, 1 GPU (baseline → optimized):"),
        "{md}"
    );
    let share = blocks[blocks.len() - 8]
        .result
        .output_throughput_per_s
        .unwrap();
    let row = md
        .lines()
        .find(|l| l.starts_with("| sharegpt | $"))
        .expect("the cost row of sharegpt");
    let price: f64 = row["| sharegpt | $".len()..]
        .split(' ')
        .next()
        .unwrap()
        .parse()
        .unwrap();
    let want = 3.5 / 3600.0 / share * 1e6;
    assert!(
        (price / want - 1.0).abs() < 1e-3,
        "{row}: {price} vs {want}"
    );
    assert!(!md.contains("not run:"), "every step is modelled");
    // Every decision says what it rests on. The main job replays one run per configuration
    // with the simulator's noise off: a deterministic simulation, whose differences carry
    // the simulator's stated model error — not "exact", not within-run intervals, not a
    // point comparison of noisy runs.
    let decisions: Vec<&servebench::study::Decision> = doc
        .json
        .analysis
        .steps
        .iter()
        .filter_map(|s| s.decision.as_ref())
        .chain(
            doc.json
                .conclusion
                .iter()
                .filter_map(|r| r.decision.as_ref()),
        )
        .collect();
    assert_eq!(decisions.len(), 5 + 4, "five steps, four final profiles");
    for d in &decisions {
        assert_eq!(d.basis, servebench::study::MODEL_ERROR, "{d:?}");
        assert_eq!((d.n_reference, d.n_candidate), (1, 1));
        assert!(d.rule.contains("simulator's stated error"), "{}", d.rule);
        assert!(!d.text().contains("exact"), "{}", d.text());
        assert!(md.contains(&d.text()), "the document shows {}", d.text());
    }
    assert_eq!(doc.json.simulator_noise, Some(false));
    // A step is kept only above the minimum effect on the target and within the tolerance
    // on every other profile: the +0.6-0.7 % steps are not, nor is MTP.
    for s in &doc.json.analysis.steps {
        let d = s.decision.as_ref().unwrap();
        assert_eq!(s.profiles.len(), 4, "{}", s.name);
        assert_eq!(
            s.accepted,
            d.call == servebench::study::Call::Better && s.profiles.iter().all(|v| v.holds),
            "{}: {}",
            s.name,
            d.text()
        );
        if let Some(p) = d.percent.filter(|p| *p > 0.0 && *p < 1.0) {
            assert!(!s.accepted, "{} kept at {p:+.2}%", s.name);
            assert_eq!(d.call, servebench::study::Call::BelowMinimumEffect);
        }
    }
    // The method sentences are generated from those decisions: they name the basis and the
    // count, and claim no interval that was not computed.
    assert_eq!(doc.json.method.len(), 2);
    for m in &doc.json.method {
        assert!(md.contains(m.as_str()), "the document shows {m}");
        assert!(!m.contains("within-run"), "{m}");
    }
    assert!(doc.json.method[0].contains(
        "5 decisions on a simulation without run-to-run noise, each difference within the simulator's stated model error (n = 1 per side"
    ), "{}", doc.json.method[0]);
    assert!(
        doc.json.method[1].contains("deterministic simulation"),
        "{}",
        doc.json.method[1]
    );
    assert!(!md.contains("beyond their within-run 95% intervals"));
    // Determinism: a second run gives the same bytes.
    let again = study::run_in_memory(&study_file("qwen3.5-h200-throughput.toml")).unwrap();
    assert_eq!(again.markdown, doc.markdown);
}

/// `rule = "weighted"` on the main job's ladder: each step's section says the weighted
/// change that decided it, and a step is kept exactly when that change's interval lies
/// above the minimum effect (MTP's −13.5 % mean over the four profiles is not).
#[test]
fn the_weighted_rule_decides_and_says_so() {
    let mut s = study_file("qwen3.5-h200-throughput.toml");
    s.ladder.rule = servebench::study::LadderRule::Weighted;
    s.ladder.tolerance = None;
    s.ladder.weights.insert("sharegpt".into(), 3.0);
    let doc = study::run_in_memory(&s).unwrap();
    let md = &doc.markdown;
    for st in &doc.json.analysis.steps {
        let w = st.weighted.as_ref().expect("a weighted change per step");
        assert_eq!(st.accepted, w.holds, "{}", st.name);
    }
    let mtp = &doc.json.analysis.steps[4];
    assert!(!mtp.accepted && mtp.weighted.as_ref().unwrap().percent < 0.0);
    assert!(md.contains("Skipped: weighted change over the profiles (weights sharegpt 3, throughput 1, long-context 1, generation-heavy 1): "), "{md}");
    assert!(md.contains("| sharegpt | weight 3 | "), "{md}");
}

/// A `[quality]` gate: every configuration answers the synthetic eval set; with FP8 staged
/// 3 points less accurate, the Quantization step — 10.94 % faster on ShareGPT and better on
/// every profile — is not kept, and its section says why with the paired figures.
#[test]
fn a_step_that_loses_accuracy_beyond_the_margin_is_not_kept() {
    let mut s = study_file("qwen3.5-h200-throughput.toml");
    let q: servebench::study::QualitySpec = toml::from_str(
        "eval = \"synthetic:2000\"\nmargin = 1.0\nsim_accuracy = { baseline = 0.8, \"Quantization\" = -3.0 }",
    )
    .unwrap();
    s.quality = Some(q);
    let doc = study::run_in_memory(&s).unwrap();
    let md = &doc.markdown;
    let fp8 = &doc.json.analysis.steps[0];
    assert_eq!(fp8.name, "Quantization");
    assert_eq!(
        fp8.decision.as_ref().unwrap().call,
        servebench::study::Call::Better
    );
    assert!(fp8.profiles.iter().all(|v| v.holds));
    let c = fp8.quality.as_ref().unwrap();
    assert!(!c.non_inferior && c.difference < -0.02, "{c:?}");
    assert!(!fp8.accepted);
    assert!(
        md.contains(
            "Skipped: better on sharegpt but its accuracy is not shown within the 1-point margin ("
        ),
        "{md}"
    );
    assert!(md.contains("Quality (synthetic:2000): candidate "), "{md}");
    let cmd = doc.json.serving_command.clone().unwrap();
    assert!(!cmd.contains("-FP8"), "{cmd}");
}

#[test]
fn the_latency_study_decides_on_mean_latency_with_repetitions() {
    let mut s = study_file("qwen3.5-h200-latency.toml");
    assert_eq!(s.target_metric().key, "mean_e2el_ms");
    assert!(!s.higher_is_better());
    // Keep the test fast: fewer requests per profile (the shape stays).
    for p in s.profiles.values_mut() {
        p.total_requests = p.total_requests.min(40);
    }
    let doc = study::run_in_memory(&s).unwrap();
    let md = &doc.markdown;
    assert!(
        md.contains("| Benchmark Case | Baseline (vLLM without any optimizations) | Optimized |")
    );
    assert!(md.contains("Mean latency: "), "latency cells");
    assert_eq!(doc.json.conclusion.len(), 4);
    for row in &doc.json.conclusion {
        assert_eq!(
            row.baseline.len(),
            3,
            "three repetitions of {}",
            row.profile
        );
    }
    let steps = first_cells(md, "| Benchmark Cases | Optimized | Baseline |");
    assert_eq!(
        steps,
        [
            "Quantization",
            "CUDA Graph Capture Size",
            "Max Num Batched Tokens",
            "Performance Mode Interactivity",
            "Prefix Cache",
            "Speculative Decoding (MTP, 1 token)"
        ]
    );
    // Every step is modelled (CUDA-graph capture size and MTP included): each has a run.
    assert!(!md.contains("not run:"), "{md}");
    assert_eq!(
        text::parse(md).unwrap().len(),
        1 + steps.len() + 2 * 4,
        "one block per case shown: engine, steps, baseline and optimized on four profiles"
    );
}

#[test]
fn the_plan_lists_every_run_with_a_time_estimate() {
    let mut s = study_file("qwen3.5-h200-throughput.toml");
    s.final_.profiles.truncate(2);
    let plan = study::estimate(&s).unwrap();
    let first = plan.lines().next().unwrap();
    assert!(
        first.starts_with("Plan of \"Optimizing Qwen3.5-35B-A3B Throughput\": "),
        "{first}"
    );
    assert!(first.contains("estimated wall time"), "{first}");
    // engine, 5 steps (all modelled, MTP included), then the final sessions with their runs.
    assert!(plan.contains("engine vLLM"));
    assert!(plan.contains("step Speculative Decoding && Quantization"));
    assert!(!plan.contains("unknown (not run"), "{plan}");
    // The baseline ran every final profile on the ladder already: only the recommended
    // configuration has final runs left.
    assert!(!plan.contains("final: baseline"), "{plan}");
    assert!(plan.contains("final: recommended"), "{plan}");
    assert!(plan.contains("throughput r1"));
}

#[test]
fn bad_study_files_name_the_key_or_line() {
    let good = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("studies/qwen3.5-h200-throughput.toml"),
    )
    .unwrap();
    assert!(StudyFile::parse(&good, "s.toml".as_ref()).is_ok());
    let cases: [(&str, &str, &str); 8] = [
        ("repetitions = 1", "repetitions = 0", "repetitions"),
        (
            "target = \"total_token_throughput\"",
            "target = \"tps\"",
            "unknown metric `tps`",
        ),
        ("version = 1", "version = 2", "version"),
        (
            "profiles = [\"sharegpt\",",
            "profiles = [\"shargpt\",",
            "ladder.profiles[0]",
        ),
        (
            "on = \"Quantization\"",
            "on = \"Quantisation\"",
            "ladder.steps[4].on",
        ),
        ("kind = \"simulator\"", "kind = \"gpu\"", "line"),
        (
            "hardware = \"NVIDIA H200\"",
            "hardware = \"NVIDIA H200\"\ncolour = 1",
            "unknown field `colour`",
        ),
        ("title = ", "title = \n", "line"),
    ];
    for (from, to, want) in cases {
        let text = good.replacen(from, to, 1);
        assert_ne!(text, good, "{from}");
        let err = StudyFile::parse(&text, "s.toml".as_ref())
            .unwrap_err()
            .to_string();
        assert!(err.starts_with("s.toml: "), "{err}");
        assert!(err.contains(want), "{from} -> {err}");
    }
    let cmd = good.replace(
        "kind = \"simulator\"",
        "kind = \"command\"\ncommand = [\"vllm\", \"serve\", \"{modle}\"]",
    );
    let err = StudyFile::parse(&cmd, "s.toml".as_ref())
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("engines[0].command[2]: unknown placeholder `{modle}`"),
        "{err}"
    );
    let sig = good.replace(
        "kind = \"simulator\"",
        "kind = \"command\"\ncommand = [\"vllm\"]\nstop_signal = \"SIGSTOP\"",
    );
    let err = StudyFile::parse(&sig, "s.toml".as_ref())
        .unwrap_err()
        .to_string();
    assert!(err.contains("engines[0].stop_signal"), "{err}");
}
