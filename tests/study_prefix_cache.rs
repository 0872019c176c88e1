//! The seed's prefix-caching step, run by the study runner on the simulator: on a
//! shared-prefix profile (4 groups × 12 prompts sharing a 2000-token prefix) it is judged
//! better beyond the noise of two repetitions; every run says in its run file that the
//! prefix cache started empty (a fresh simulator per run).
#![cfg(feature = "study")]

use std::path::Path;
use std::sync::atomic::AtomicBool;

use servebench::app::study::{Finish, Runner, PREFIX_CACHE_LABEL, SIM_RESTART};
use servebench::driver::DatasetSpec;
use servebench::profile::{Dataset, Profile};
use servebench::runfile::RunFile;
use servebench::study::Call;
use servebench::study::StudyFile;

const SEED_STUDY: &str = "studies/qwen3.5-h200-throughput.toml";
const STEP: &str = "Prefix Cache && Quantization";

fn shared_prefix() -> Profile {
    Profile {
        name: Some("shared".into()),
        dataset: Dataset::Structured(DatasetSpec::SharedPrefix {
            groups: 4,
            prompts_per_group: 12,
            prefix_tokens: 2000,
            input_tokens: 200,
            output_tokens: 64,
            seed: 1,
        }),
        request_rate: 1000.0,
        total_requests: 48,
        max_concurrency: None,
    }
}

#[test]
fn the_seeds_prefix_caching_step_beats_the_noise_on_a_shared_prefix_profile() {
    let text = std::fs::read_to_string(SEED_STUDY).unwrap();
    let mut study = StudyFile::parse(&text, Path::new(SEED_STUDY)).unwrap();
    // The seed's ladder up to its prefix-caching step, on the shared-prefix profile, two
    // repetitions per configuration.
    study.profiles.insert("shared".into(), shared_prefix());
    study.ladder.profiles = vec!["shared".into()];
    study
        .ladder
        .steps
        .retain(|s| s.name == "Quantization" || s.name == STEP);
    assert_eq!(study.ladder.steps.len(), 2, "the seed study has both steps");
    study.final_.profiles = vec!["shared".into()];
    study.repetitions = servebench::study::Repetitions::Fixed(2);
    let dir = tempfile::tempdir().unwrap();
    let mut runner = Runner::create(study, &text, dir.path()).unwrap();
    let finish = runner
        .run(&AtomicBool::new(false), &mut |l| eprintln!("{l}"))
        .unwrap();
    assert_eq!(finish, Finish::Complete);
    let a = runner.analysis();
    let step = a.steps.iter().find(|s| s.name == STEP).unwrap();
    assert_eq!(step.reference, "Quantization");
    let d = step.decision.as_ref().expect("both sides ran");
    eprintln!("{STEP}: {}", d.text());
    assert_ne!(d.call, Call::WithinNoise, "{}", d.text());
    assert_eq!(d.call, Call::Better, "{}", d.text());
    assert!(
        d.half_width.is_some(),
        "judged on repetitions: {}",
        d.text()
    );
    // Every run file records that its prefix cache started empty, and how.
    let mut files = 0;
    for entry in walk(&dir.path().join("runs")) {
        let run = RunFile::read(&entry).unwrap();
        assert_eq!(
            run.labels.get(PREFIX_CACHE_LABEL).map(String::as_str),
            Some(SIM_RESTART),
            "{}",
            entry.display()
        );
        files += 1;
    }
    // Quantization and the prefix-caching step, then the final configuration: 2 runs each.
    assert!(files >= 4, "{files} run files");
}

/// Agent sessions (6 sessions: a 1500-token task, 3 main turns, 2 sub-agents of 2 turns
/// forked after turn 1, 200-token tool results): every later turn and every sub-agent
/// re-sends a long history, which a prefix cache serves.
fn agent_sessions() -> Profile {
    let spec = servebench::driver::SessionSpec {
        sessions: 6,
        turns: 3,
        input_tokens: 1500,
        output_tokens: 32,
        tool_result_tokens: 200,
        tool_result_sigma: 0.0,
        think_time_s: 0.0,
        think_time: servebench::driver::ThinkTime::Fixed,
        fanout: 2,
        subagent_turns: 2,
        seed: 3,
    };
    Profile {
        name: Some("agents".into()),
        dataset: Dataset::Structured(DatasetSpec::Sessions(spec)),
        request_rate: 1000.0,
        total_requests: 6 * (3 + 2 * 2),
        max_concurrency: None,
    }
}

/// The prefix-caching step judged on an agent-session workload on the simulator: better
/// beyond the noise, and each run a session run (its sub-agents counted, every session
/// complete).
#[test]
fn the_prefix_caching_step_is_judged_on_agent_sessions() {
    let text = std::fs::read_to_string(SEED_STUDY).unwrap();
    let mut study = StudyFile::parse(&text, Path::new(SEED_STUDY)).unwrap();
    study.profiles.insert("agents".into(), agent_sessions());
    study.ladder.profiles = vec!["agents".into()];
    study
        .ladder
        .steps
        .retain(|s| s.name == "Quantization" || s.name == STEP);
    study.final_.profiles = vec!["agents".into()];
    study.repetitions = servebench::study::Repetitions::Fixed(2);
    let dir = tempfile::tempdir().unwrap();
    let mut runner = Runner::create(study, &text, dir.path()).unwrap();
    let finish = runner.run(&AtomicBool::new(false), &mut |_| {}).unwrap();
    assert_eq!(finish, Finish::Complete);
    let a = runner.analysis();
    let step = a.steps.iter().find(|s| s.name == STEP).unwrap();
    let d = step.decision.as_ref().expect("both sides ran");
    eprintln!("{STEP} on agent sessions: {}", d.text());
    assert_eq!(d.call, Call::Better, "{}", d.text());
    for path in walk(&dir.path().join("runs")) {
        let run = RunFile::read(&path).unwrap();
        let f = run.result.sessions.as_ref().expect("a session run");
        assert_eq!(
            (f.sessions, f.complete, f.subagents),
            (6, 6, 12),
            "{}",
            path.display()
        );
    }
}

fn walk(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            out.extend(walk(&p));
        } else if p.extension().is_some_and(|x| x == "json") {
            out.push(p);
        }
    }
    out
}
