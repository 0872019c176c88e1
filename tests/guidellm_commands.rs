//! The guidellm command lines servebench prints (`Profile::guidellm_command`,
//! `Profile::guidellm_run_command`, `servebench profiles --guidellm`), pinned to forms
//! guidellm accepts.
//!
//! guidellm 0.8.1 (`guidellm run`) rejects `--constraint kind=max_concurrency,count=N`
//! ("invalid kind 'max_concurrency'"); its constraint kinds are listed below, and a
//! concurrency cap belongs to the profile: `max_concurrency=N` on a rate profile
//! (`constant`, `poisson`, `async`) or `kind=concurrent,streams=N` (guidellm's
//! `benchmark/profiles/asynchronous.py` and `concurrent.py`; verified with guidellm 0.8.1
//! against the example server, see `scripts/check_guidellm_commands.sh`).
//! `guidellm benchmark` (≤ 0.7) has no concurrency flag: its cap is the
//! `GUIDELLM__MAX_CONCURRENCY` setting (`settings.max_concurrency`).

use std::process::Command;

use servebench::profile::{Profile, PRESET_NAMES};

/// guidellm 0.8.1's `--constraint` kinds (from `guidellm run --help`).
const CONSTRAINT_KINDS: [&str; 7] = [
    "max_errors",
    "max_error_rate",
    "max_global_error_rate",
    "max_duration",
    "max_requests",
    "min_requests",
    "over_saturation",
];

/// The `key=value` pairs of a `--FLAG kind=…,k=v` line.
fn pairs(line: &str) -> Vec<(String, String)> {
    let args = line.split_whitespace().nth(1).unwrap_or_default();
    args.split(',')
        .filter_map(|kv| kv.split_once('='))
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

fn check_run_command(cmd: &str, cap: Option<u64>) {
    for line in cmd.lines().map(|l| l.trim().trim_end_matches(" \\")) {
        if line.starts_with("--constraint ") {
            let p = pairs(line);
            assert_eq!(p[0].0, "kind", "{line}");
            assert!(CONSTRAINT_KINDS.contains(&p[0].1.as_str()), "{line}");
        }
        if line.starts_with("--profile ") {
            let p = pairs(line);
            assert_eq!(p[0], ("kind".into(), "constant".into()), "{line}");
            let keys: Vec<&str> = p.iter().map(|(k, _)| k.as_str()).collect();
            match cap {
                Some(c) => {
                    assert_eq!(keys, ["kind", "rate", "max_concurrency"], "{line}");
                    assert_eq!(p[2].1, c.to_string());
                }
                None => assert_eq!(keys, ["kind", "rate"], "{line}"),
            }
        }
    }
    assert!(!cmd.contains("kind=max_concurrency"), "{cmd}");
}

#[test]
fn capped_profiles_put_the_cap_where_guidellm_accepts_it() {
    for name in PRESET_NAMES {
        for cap in [None, Some(64)] {
            let mut p = Profile::preset(name).unwrap();
            p.max_concurrency = cap;
            let run = p.guidellm_run_command("http://127.0.0.1:8000", "/m");
            check_run_command(&run, cap);
            let bench = p.guidellm_command("http://127.0.0.1:8000", "/m");
            assert!(!bench.contains("--max-concurrency"), "{bench}");
            match cap {
                Some(c) => assert!(
                    bench.starts_with(&format!(
                        "GUIDELLM__MAX_CONCURRENCY={c} guidellm benchmark \\\n"
                    )),
                    "{bench}"
                ),
                None => assert!(bench.starts_with("guidellm benchmark \\\n"), "{bench}"),
            }
        }
    }
    // The exact text of one capped command.
    let mut p = Profile::preset("throughput").unwrap();
    p.max_concurrency = Some(32);
    assert_eq!(
        p.guidellm_run_command("http://127.0.0.1:8000", "/m"),
        "guidellm run \\\n  --backend kind=openai_http,target=http://127.0.0.1:8000 \\\n  \
         --tokenizer kind=hf_auto,model=/m \\\n  \
         --profile kind=constant,rate=1000,max_concurrency=32 \\\n  \
         --constraint kind=max_requests,count=1000 \\\n  \
         --seed kind=static,value=42 \\\n  \
         --data kind=synthetic_text,prompt_tokens=1024,output_tokens=128"
    );
}

#[test]
fn the_profiles_command_prints_the_cap_in_both_syntaxes() {
    let bin = env!("CARGO_BIN_EXE_servebench");
    for (syntax, needle) in [
        (
            "run",
            "--profile kind=constant,rate=1000,max_concurrency=16 \\\n",
        ),
        (
            "benchmark",
            "GUIDELLM__MAX_CONCURRENCY=16 guidellm benchmark \\\n",
        ),
    ] {
        let o = Command::new(bin)
            .args([
                "profiles",
                "throughput",
                "--guidellm",
                "http://h:8000",
                "/m",
            ])
            .args(["--syntax", syntax, "--max-concurrency", "16"])
            .output()
            .unwrap();
        let out = String::from_utf8(o.stdout).unwrap();
        assert!(o.status.success());
        assert!(out.contains(needle), "{out}");
    }
    let o = Command::new(bin)
        .args(["profiles", "--max-concurrency", "0", "--guidellm", "h", "m"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
}
