//! `servebench lint`'s findings as text: one finding per line
//! (`source: run: severity[code]: message (evidence)`) or a JSON array of
//! [`RunFindings`], and the [`fmt::Display`] of a [`Finding`], its [`Code`] and its
//! [`Severity`].
//!
//! ```
//! use servebench::format::lint::render_text;
//! use servebench::app::lint_bytes;
//! use servebench::lint::LintOptions;
//! let bytes = std::fs::read("tests/fixtures/seed.txt").unwrap();
//! let runs = lint_bytes("seed.txt", &bytes, &LintOptions::default()).unwrap();
//! let text = render_text(&runs);
//! assert!(text.contains("seed.txt: line 131: error[single-iteration-streams]: "), "{text}");
//! ```

use std::fmt;

use crate::lint::{fmt_num, Code, Finding, RunFindings, Severity};

/// One finding per line: `source: run: severity[code]: message (evidence)`.
pub fn render_text(runs: &[RunFindings]) -> String {
    let mut out = String::new();
    for r in runs {
        for f in &r.findings {
            out.push_str(&format!("{}: {}: {f}\n", r.source, r.run));
        }
    }
    out
}

/// The findings as a JSON array of [`RunFindings`] (for tools).
pub fn render_json(runs: &[RunFindings]) -> String {
    serde_json::to_string_pretty(runs).unwrap_or_else(|_| "[]".to_string())
}

impl fmt::Display for Code {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl fmt::Display for Severity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Severity::Info => "info",
            Severity::Warning => "warning",
            Severity::Error => "error",
        })
    }
}

impl fmt::Display for Finding {
    /// `error[impossible-peak]: message (name=value, …)`
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}[{}]: {}", self.severity, self.code, self.message)?;
        if !self.evidence.is_empty() {
            f.write_str(" (")?;
            for (i, e) in self.evidence.iter().enumerate() {
                if i > 0 {
                    f.write_str(", ")?;
                }
                write!(f, "{}={}", e.name, fmt_num(e.value))?;
            }
            f.write_str(")")?;
        }
        Ok(())
    }
}
