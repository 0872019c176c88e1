//! The `h200_server` example's binary for tests that launch it as a real server process.
//! Examples get no `CARGO_BIN_EXE_*` variable, so [`example_server`] runs `cargo build
//! --example h200_server` once per test binary (a no-op when it is fresh) into the target
//! directory of the `servebench` binary under test. [`Served::start`] runs it as a server.

use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
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

/// A running `h200_server --serve 127.0.0.1:0 …`; killed when dropped.
pub struct Served {
    /// The server process.
    pub child: Child,
    /// Its base URL, from the line it prints when it listens.
    pub url: String,
}

impl Served {
    /// Starts `h200_server --serve 127.0.0.1:0` with `args` and waits for the line naming
    /// its address; its stderr keeps being drained so that it never blocks on a full pipe.
    pub fn start<S: AsRef<std::ffi::OsStr>>(args: &[S]) -> Served {
        let mut child = Command::new(example_server())
            .args(["--serve", "127.0.0.1:0"])
            .args(args)
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
        let url = loop {
            let line = lines.next().expect("server exited").unwrap();
            if let Some(rest) = line.split(" on http://").nth(1) {
                break format!("http://{}", rest.split(' ').next().unwrap());
            }
        };
        std::thread::spawn(move || for _ in lines {});
        Served { child, url }
    }
}

impl Drop for Served {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
