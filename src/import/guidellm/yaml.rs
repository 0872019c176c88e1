//! guidellm's YAML report (`--output kind=yaml`): the same document as its JSON report,
//! written by PyYAML. It is read as YAML into a JSON value, written back as JSON and read by
//! the JSON importer, so both give the same benchmarks (and the same errors past the YAML
//! syntax, with JSON paths that name the same keys).
//!
//! YAML's `.nan`/`.inf` become JSON `null`: absent values, as bare `NaN` in the JSON report.

use super::{from_slice as from_json, GuidellmReport};
use crate::import::ImportError;

/// Read a guidellm YAML report.
///
/// ```
/// let yaml = b"benchmarks: []\nmetadata:\n  version: 2\n";
/// let err = servebench::import::guidellm::from_yaml_slice(yaml).unwrap_err();
/// assert!(err.to_string().contains("$.benchmarks: no requests"), "{err}");
/// ```
///
/// # Errors
///
/// [`ImportError::Yaml`] (line, column) for YAML that does not parse, else the JSON
/// importer's errors.
pub fn from_slice(bytes: &[u8]) -> Result<GuidellmReport, ImportError> {
    let value: serde_json::Value = serde_yaml_ng::from_slice(bytes).map_err(|e| {
        let (line, column) = e.location().map_or((0, 0), |l| (l.line(), l.column()));
        ImportError::Yaml {
            line,
            column,
            message: e.to_string(),
        }
    })?;
    let json = serde_json::to_vec(&value).map_err(|e| ImportError::Yaml {
        line: 0,
        column: 0,
        message: format!("cannot convert to JSON: {e}"),
    })?;
    from_json(&json)
}
