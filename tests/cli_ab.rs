//! `servebench ab URL URL`: an A/A test against one example server (`h200_server --serve
//! --speed 10`). Interleaved pairs in counterbalanced order, every run file saved, then
//! the verdict table — in which no metric is called different (the target row included),
//! and bad usage is refused before anything runs. With `--repetitions auto` (the default) against a server twice as
//! fast, the sequential design stops within its first looks with "better".
#![cfg(all(feature = "study", unix))]

mod common;

use std::process::Command;

use common::example_server::Served;

const BIN: &str = env!("CARGO_BIN_EXE_servebench");

/// The tests of this file take turns: an A/A test's pairs must not share the CPUs with
/// another test's runs, or the contention of one side of a pair reads as a difference.
static ALONE: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn alone() -> std::sync::MutexGuard<'static, ()> {
    ALONE.lock().unwrap_or_else(|p| p.into_inner())
}

#[test]
fn an_aa_test_against_one_example_server_calls_no_metric_different() {
    let _alone = alone();
    let server = Served::start(&["--speed", "10"]);
    let url = server.url.clone();
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("ab");
    let o = Command::new(BIN)
        .args([
            "ab",
            "--baseline",
            &url,
            "--candidate",
            &url,
            "--repetitions",
            "3",
        ])
        .args(["--out", out.to_str().unwrap(), "--"])
        .args([
            "--input-tokens",
            "256",
            "--output-tokens",
            "32",
            "--max-requests",
            "40",
        ])
        .args(["--rate", "20", "--arrivals", "poisson", "--seed", "3"])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(
        o.status.success(),
        "{}\n{stdout}",
        String::from_utf8_lossy(&o.stderr)
    );
    eprintln!("{stdout}");
    // Every run file saved, three per side, the pairs in counterbalanced order: baseline
    // first in pairs 1 and 3, the candidate first in pair 2.
    let started = |side: &str, k: u32| {
        let p = out.join("runs").join(format!("{side}-r{k}.json"));
        servebench::runfile::RunFile::read(&p)
            .unwrap_or_else(|e| panic!("{}: {e}", p.display()))
            .started_at
    };
    for k in 1..=3 {
        let (a, b) = (started("baseline", k), started("candidate", k));
        assert_eq!(a < b, k % 2 == 1, "pair {k}: baseline {a}, candidate {b}");
    }
    assert_eq!(
        std::fs::read_to_string(out.join("verdict.txt")).unwrap(),
        stdout
    );
    let rows: Vec<&str> = stdout
        .lines()
        .skip_while(|l| !l.starts_with("metric "))
        .skip(1)
        .collect();
    assert!(rows.len() >= 10, "{stdout}");
    assert!(
        rows[0].starts_with("total_token_throughput (target)"),
        "{}",
        rows[0]
    );
    for r in &rows {
        assert!(
            // "below the minimum effect": a difference the rule itself calls negligible (a
            // deterministic server's throughput can differ by 0.00x % with a tight interval).
            r.ends_with("within noise")
                || r.ends_with("below the minimum effect")
                || r.ends_with("no interval (sign only)"),
            "called different in an A/A test: {r}"
        );
    }
    assert!(
        rows[0].ends_with("within noise") || rows[0].ends_with("below the minimum effect"),
        "{}",
        rows[0]
    );
    // A second run into the same directory is refused; so are flags `ab` sets itself.
    let again = Command::new(BIN)
        .args(["ab", "--baseline", &url, "--candidate", &url])
        .args([
            "--out",
            out.to_str().unwrap(),
            "--input-tokens",
            "8",
            "--output-tokens",
            "8",
        ])
        .output()
        .unwrap();
    assert_eq!(again.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&again.stderr).contains("already holds runs"));
    let reserved = Command::new(BIN)
        .args(["ab", "--baseline", &url, "--candidate", &url])
        .args([
            "--out",
            dir.path().join("x").to_str().unwrap(),
            "--output",
            "y.json",
        ])
        .output()
        .unwrap();
    assert_eq!(reserved.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&reserved.stderr).contains("`--output` is set by `ab`"));
    let bad = Command::new(BIN)
        .args(["ab", "--baseline", &url, "--candidate", &url])
        .args([
            "--out",
            dir.path().join("z").to_str().unwrap(),
            "--profil",
            "x",
        ])
        .output()
        .unwrap();
    assert_eq!(bad.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&bad.stderr).contains("the bench flags do not parse"));
    assert!(
        !dir.path().join("z").exists(),
        "nothing created for bad flags"
    );
}

/// `ab` with its default `--repetitions auto`: the candidate is the same simulated H200
/// served at twice the speed (every step takes half the wall time), so a burst's total
/// token throughput is far higher. The sequential design decides within its first looks:
/// the runs stop there (well under the budget), every run is saved, and the target row
/// reads "better" under the sequential rule.
#[test]
fn auto_repetitions_stop_early_on_a_clear_gain() {
    let _alone = alone();
    let (slow, fast) = (
        Served::start(&["--speed", "10"]),
        Served::start(&["--speed", "20"]),
    );
    let (slow, fast) = (&slow.url, &fast.url);
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("ab");
    let o = Command::new(BIN)
        .args(["ab", "--baseline", slow, "--candidate", fast])
        .args([
            "--max-repetitions",
            "8",
            "--out",
            out.to_str().unwrap(),
            "--",
        ])
        .args(["--input-tokens", "256", "--output-tokens", "64"])
        .args(["--max-requests", "40", "--rate", "1000", "--seed", "5"])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(
        o.status.success(),
        "{}\n{stdout}",
        String::from_utf8_lossy(&o.stderr)
    );
    eprintln!("{stdout}");
    assert!(
        stdout.contains("sequential: interleaved pairs until decided"),
        "{stdout}"
    );
    let first_look = servebench::noise::Design::default().first_look as usize;
    let runs = |side: &str| {
        (1..=8)
            .filter(|k| out.join("runs").join(format!("{side}-r{k}.json")).exists())
            .count()
    };
    let n = runs("baseline");
    assert_eq!(n, runs("candidate"), "interleaved pairs");
    // Decided well before the budget (two pairs leave a t-interval of one degree of
    // freedom, so the first look may not yet be enough).
    assert!((first_look..=4).contains(&n), "{n} runs per side");
    assert!(stdout.contains(&format!("{n} runs per side")), "{stdout}");
    let target = stdout
        .lines()
        .find(|l| l.starts_with("total_token_throughput (target)"))
        .unwrap_or_else(|| panic!("no target row: {stdout}"));
    assert!(target.ends_with("better"), "{target}");
}

/// The README's `ab` command line, exactly as printed (its own flags after the bench
/// flags), against the example server: both URLs and the output directory substituted,
/// nothing else. It once exited 2: the first bench flag swallowed `ab`'s `--out`.
#[test]
fn the_readmes_ab_command_runs_as_printed() {
    let _alone = alone();
    let readme =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/README.md")).unwrap();
    let mut lines = readme
        .lines()
        .skip_while(|l| !l.starts_with("servebench ab "));
    let mut command = String::new();
    for l in lines.by_ref() {
        match l.trim().strip_suffix('\\') {
            Some(part) => command.push_str(part),
            None => {
                command.push_str(l.trim());
                break;
            }
        }
    }
    assert!(command.contains("--out ab/"), "{command}");
    let server = Served::start(&["--speed", "10"]);
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("ab");
    let args: Vec<String> = command
        .split_whitespace()
        .skip(1)
        .map(|w| match w {
            "http://a:8000" | "http://b:8000" => server.url.clone(),
            "ab/" => out.to_str().unwrap().to_string(),
            w => w.to_string(),
        })
        .collect();
    let o = Command::new(BIN).args(&args).output().unwrap();
    assert!(
        o.status.success(),
        "{command}: {}\n{}",
        o.status,
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(out.join("verdict.txt").exists());
    assert!(out.join("runs/candidate-r2.json").exists());
}

/// A candidate that does not answer is found before any run: `ab` exits 1 naming it, and
/// no baseline run was made (it once ran a whole baseline run first).
#[test]
fn an_unreachable_candidate_is_found_before_any_run() {
    let _alone = alone();
    let server = Served::start(&["--speed", "10"]);
    let closed = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        format!("http://{}", l.local_addr().unwrap())
    };
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("ab");
    let o = Command::new(BIN)
        .args(["ab", "--baseline", &server.url, "--candidate", &closed])
        .args(["--repetitions", "2", "--out", out.to_str().unwrap()])
        .args(["--max-requests", "20"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(err.contains(&format!("the candidate {closed}")), "{err}");
    assert!(!out.join("runs").exists(), "a run was made");
}

/// One ShareGPT run per side under a cap: the default target, Total Token throughput,
/// varies so much within a run that only a change beyond ±10 % could be called; `compare`
/// says so, how many runs would decide the planned effect, and which steadier metric
/// would.
#[test]
fn compare_says_when_single_runs_cannot_decide_the_target() {
    let _alone = alone();
    let server = Served::start(&["--speed", "10"]);
    let dir = tempfile::tempdir().unwrap();
    let run = |name: &str, seed: &str| {
        let out = dir.path().join(name);
        let o = Command::new(BIN)
            .args(["bench", "--target", &server.url, "--profile", "sharegpt"])
            .args([
                "--max-concurrency",
                "64",
                "--seed",
                seed,
                "--quiet",
                "--output",
            ])
            .arg(&out)
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        out
    };
    let (a, b) = (run("a.json", "1"), run("b.json", "2"));
    let o = Command::new(BIN)
        .args(["compare", a.to_str().unwrap(), b.to_str().unwrap()])
        .output()
        .unwrap();
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success(), "{out}");
    let note = out
        .lines()
        .find(|l| {
            l.starts_with(
                "Note: these runs can call Total Token throughput (tok/s) different only beyond ±",
            )
        })
        .unwrap_or_else(|| panic!("{out}"));
    assert!(
        note.contains("to decide a 2% change, repeat them: about "),
        "{note}"
    );
    assert!(note.contains("--target "), "{note}");
}
