//! The plan's unit tests: flags, run order, the ladder's walk, failures, engine ties.
use super::*;

fn study(steps: &str, reps: u32, order: &str) -> StudyFile {
    let text = format!(
        r#"format = "servebench-study"
version = 1
title = "T"
model = "M"
hardware = "H"
repetitions = {reps}
order = "{order}"
[[engines]]
name = "A"
kind = "simulator"
flags = ["--x=1"]
[[engines]]
name = "B"
kind = "simulator"
[ladder]
profiles = ["latency", "throughput"]
{steps}
[final]
profiles = ["latency", "sharegpt"]
add = ["--z"]
"#
    );
    StudyFile::parse(&text, "t.toml".as_ref()).unwrap()
}

fn result(tps: f64) -> BenchmarkResult {
    BenchmarkResult {
        successful_requests: Some(10),
        failed_requests: Some(0),
        total_token_throughput_per_s: Some(tps),
        ..Default::default()
    }
}

/// Fills every pending session's runs with `tps(config)` until the study is complete;
/// returns the sessions in order.
fn drive(s: &StudyFile, tps: impl Fn(&Configuration) -> f64) -> (Analysis, Vec<Session>) {
    let mut o = Outcomes::default();
    let mut sessions = Vec::new();
    loop {
        let a = analyse(s, &o);
        let Some(sess) = a.pending.clone() else {
            return (a, sessions);
        };
        for (p, r) in &sess.runs {
            o.results.insert(
                run_key(&sess.config.key(), p, *r),
                result(tps(&sess.config)),
            );
        }
        sessions.push(sess);
    }
}

#[test]
fn flags_are_replaced_by_key_removed_and_appended() {
    let base: Vec<String> = ["--a=1", "--b", "--c=x"].map(String::from).into();
    let out = apply_flags(&base, &["--a=2".into(), "--d".into()], &["--b".into()]);
    assert_eq!(out, ["--a=2", "--c=x", "--d"]);
}

#[test]
fn runs_are_ordered_sequentially_or_interleaved() {
    let p = ["a".to_string(), "b".to_string()];
    let seq = ordered_runs(&study("", 2, "sequential"), &p);
    assert_eq!(
        seq,
        [
            ("a".into(), 1),
            ("a".into(), 2),
            ("b".into(), 1),
            ("b".into(), 2)
        ]
    );
    let int = ordered_runs(&study("", 2, "interleaved"), &p);
    assert_eq!(
        int,
        [
            ("a".into(), 1),
            ("b".into(), 1),
            ("a".into(), 2),
            ("b".into(), 2)
        ]
    );
}

#[test]
fn the_ladder_keeps_better_steps_and_builds_on_the_best() {
    let steps = r#"
[[ladder.steps]]
name = "S1"
add = ["--s1"]
[[ladder.steps]]
name = "S2"
add = ["--s2"]
[[ladder.steps]]
name = "S3"
on = "baseline"
add = ["--s3"]
"#;
    let s = study(steps, 1, "sequential");
    // Engine B beats A; S1 helps, S2 hurts, S3 (from the baseline) helps most.
    let tps = |c: &Configuration| {
        let mut v = if c.engine == "B" { 200.0 } else { 100.0 };
        for (flag, d) in [("--s1", 10.0), ("--s2", -5.0), ("--s3", 50.0)] {
            if c.flags.iter().any(|f| f == flag) {
                v += d;
            }
        }
        v
    };
    let (a, sessions) = drive(&s, tps);
    assert_eq!(a.selected, Some(1), "engine B");
    let flags: Vec<Vec<String>> = a.steps.iter().map(|st| st.config.flags.clone()).collect();
    assert_eq!(flags[0], ["--s1"]);
    assert_eq!(flags[1], ["--s1", "--s2"], "S2 starts from the best (S1)");
    assert_eq!(flags[2], ["--s3"], "S3 starts from the baseline");
    let kept: Vec<bool> = a.steps.iter().map(|st| st.accepted).collect();
    assert_eq!(kept, [true, false, true]);
    assert_eq!(a.recommended.as_ref().unwrap().flags, ["--s3", "--z"]);
    // Sessions: two engines, three steps, then baseline (only `sharegpt` left) and the
    // recommended configuration; the baseline's `latency` run is not repeated.
    let purposes: Vec<&str> = sessions.iter().map(|s| s.purpose.as_str()).collect();
    assert_eq!(
        purposes,
        [
            "engine A",
            "engine B",
            "step S1",
            "step S2",
            "step S3",
            "final: baseline",
            "final: recommended"
        ]
    );
    assert_eq!(a.final_status, Some((Status::Done, Status::Done)));
}

#[test]
fn a_failed_step_is_skipped_and_the_study_goes_on() {
    let steps = r#"
[[ladder.steps]]
name = "S1"
add = ["--s1"]
[[ladder.steps]]
name = "S2"
add = ["--s2"]
"#;
    let s = study(steps, 1, "sequential");
    let mut o = Outcomes::default();
    let mut failed = None;
    loop {
        let a = analyse(&s, &o);
        let Some(sess) = a.pending else { break };
        if sess.purpose == "step S1" {
            failed = Some(sess.config.key());
            o.failures.insert(
                sess.config.key(),
                Failure {
                    reason: "boom".into(),
                    log: None,
                    retryable: true,
                },
            );
            continue;
        }
        for (p, r) in &sess.runs {
            o.results
                .insert(run_key(&sess.config.key(), p, *r), result(100.0));
        }
    }
    let a = analyse(&s, &o);
    assert!(failed.is_some());
    assert_eq!(
        a.steps[0].status,
        Status::Failed {
            reason: "boom".into()
        }
    );
    assert!(!a.steps[0].accepted);
    // A tie between the engines keeps the first (A, with its `--x=1`).
    assert_eq!(a.selected, Some(0));
    assert_eq!(
        a.steps[1].config.flags,
        ["--x=1", "--s2"],
        "S2 builds on the baseline"
    );
    assert!(a.pending.is_none());
}
