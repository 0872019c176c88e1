//! The `h200_server` example's binary for tests that launch it as a real server process.
//! Examples get no `CARGO_BIN_EXE_*` variable, so [`example_server`] runs `cargo build
//! --example h200_server` once per test binary (a no-op when it is fresh) into the target
//! directory of the `servebench` binary under test.

use std::path::PathBuf;
use std::process::Command;
use std::sync::OnceLock;

/// The example server binary, built on first use.
pub fn example_server() -> PathBuf {
    static PATH: OnceLock<PathBuf> = OnceLock::new();
    PATH.get_or_init(|| {
        let bin_dir = PathBuf::from(env!("CARGO_BIN_EXE_servebench"))
            .parent()
            .unwrap()
            .to_path_buf();
        let target = bin_dir.parent().unwrap();
        let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
        let mut cmd = Command::new(cargo);
        cmd.args(["build", "--example", "h200_server"])
            .current_dir(env!("CARGO_MANIFEST_DIR"))
            .env("CARGO_TARGET_DIR", target);
        if bin_dir.ends_with("release") {
            cmd.arg("--release");
        }
        let st = cmd.status().expect("cargo build --example h200_server");
        assert!(st.success(), "building the example server failed");
        let p = bin_dir.join("examples").join("h200_server");
        assert!(p.exists(), "{}", p.display());
        p
    })
    .clone()
}
