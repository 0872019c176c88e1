//! `servebench export --format parquet` read back by a real consumer: a simulated run's
//! file is exported, then `scripts/check_parquet.py` reads it with pyarrow and recomputes
//! the mean TTFT from the rows, equal to the run's recorded figure. (CI installs pyarrow;
//! the test fails loudly without it.)
#![cfg(all(feature = "parquet", feature = "sim", feature = "cli"))]

use std::process::Command;

use servebench::profile::Profile;
use servebench::runfile::RunFile;
use servebench::sim::{simulate, Config};

#[test]
fn a_parquet_export_reads_back_in_pyarrow_with_the_same_mean_ttft() {
    let profile = Profile::preset("throughput").unwrap();
    let sim = simulate(&profile, &Config::named("baseline").unwrap(), 42, false).unwrap();
    let n = sim.records.len();
    let chunks: usize = sim.records.iter().map(|r| r.chunks.len()).sum();
    let run = RunFile::new(
        sim.result,
        sim.records,
        profile,
        chrono::Utc::now().fixed_offset(),
    );
    let dir = tempfile::tempdir().unwrap();
    let (json, parquet) = (dir.path().join("run.json"), dir.path().join("run.parquet"));
    run.write_atomic(&json).unwrap();
    let o = Command::new(env!("CARGO_BIN_EXE_servebench"))
        .args(["export", "--format", "parquet"])
        .arg(&json)
        .arg("--out")
        .arg(&parquet)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(String::from_utf8_lossy(&o.stdout).contains(&format!("{n} requests")));
    let script = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/check_parquet.py");
    let o = Command::new("python3")
        .arg(script)
        .arg(&parquet)
        .output()
        .unwrap();
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        o.status.success(),
        "{out}{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(
        out.starts_with(&format!("{n} rows, {chunks} chunk times")),
        "{out}"
    );
}

/// A file that is not a run file is refused, naming it.
#[test]
fn export_refuses_what_is_not_a_run_file() {
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("bad.json");
    std::fs::write(&bad, "{}").unwrap();
    let o = Command::new(env!("CARGO_BIN_EXE_servebench"))
        .args(["export", "--format", "parquet"])
        .arg(&bad)
        .arg("--out")
        .arg(dir.path().join("x.parquet"))
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&o.stderr).contains("bad.json"));
    assert!(!dir.path().join("x.parquet").exists());
}
