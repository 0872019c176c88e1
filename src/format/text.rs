//! "Serving Benchmark Result" blocks: rendering and parsing in GPUStack and vLLM styles.

use serde::{Deserialize, Serialize};

/// How a parsed block was laid out (placeholder until the text format lands).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Layout {}
