//! Reading the CLI's inputs: every verb reads its files through [`servebench::load`] (text
//! reports, servebench results and run files, guidellm, vLLM, SGLang and aiperf files), so
//! a file one verb reads, all of them read. `-` reads stdin. Every error names the file and
//! what it was read as, and the line, JSON path or column where it did not fit.

use std::fmt;
use std::path::Path;

use servebench::load::{self, Run};

/// A bad input: the message already names the file and line.
#[derive(Debug)]
pub struct InputError(pub String);

impl fmt::Display for InputError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl From<load::LoadError> for InputError {
    fn from(e: load::LoadError) -> Self {
        InputError(e.to_string())
    }
}

/// The name used in messages: `<stdin>` for `-`.
pub fn display_name(path: &str) -> String {
    if path == "-" {
        "<stdin>".to_string()
    } else {
        path.to_string()
    }
}

/// Every run in `path` (`-`: stdin); never an empty list.
pub fn load(path: &str) -> Result<Vec<Run>, InputError> {
    Ok(load::load_path(Path::new(path))?)
}
