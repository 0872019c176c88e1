//! Agentic traces in SGLang's format (`bench_serving --dataset-name agentic_trace`, for
//! OpenHands / SWE-smith traces; `python/sglang/benchmark/datasets/agentic_trace.py`):
//!
//! ```json
//! {"metadata": {…},
//!  "conversations": [[{"messages": [{"role": "system", …}, {"role": "user", …}], "prompt_tokens": 73821},
//!                     {"messages": [{"role": "tool", …}], "prompt_tokens": 74894}, …], …]}
//! ```
//!
//! Each turn lists only its new non-assistant messages — the user's and the tools' results,
//! whose sizes are the trace's. Turn `k` sends the history (every earlier turn's messages and
//! the answer to each) plus its own messages, after the previous answer and the think time.
//! As for every multi-turn dataset here ([`super::conversations`]), the history holds a
//! synthetic answer of `output_tokens` words, not the text the server streamed: the prompts
//! are fixed before the run (SGLang feeds back the server's reply; its default answer
//! length is 220 tokens, the traces' average).

use std::path::Path;

use serde::Deserialize;
use serde_json::Value;

#[derive(Deserialize)]
struct Trace {
    #[serde(default)]
    conversations: Vec<Vec<Turn>>,
}

#[derive(Deserialize)]
struct Turn {
    #[serde(default)]
    messages: Vec<Message>,
}

#[derive(Deserialize)]
struct Message {
    #[serde(default)]
    content: Value,
}

/// A message's text: a string, or the `text` of its content parts.
fn text_of(content: &Value) -> String {
    match content {
        Value::String(s) => s.clone(),
        Value::Array(parts) => parts
            .iter()
            .filter_map(|p| p.get("text").and_then(Value::as_str))
            .collect::<Vec<_>>()
            .join(" "),
        _ => String::new(),
    }
}

/// Whether the file at `path` is an agentic trace (a JSON object) rather than a ShareGPT
/// list (a JSON array), from its first non-blank byte.
pub(crate) fn is_trace_file(path: &Path) -> bool {
    use std::io::Read as _;
    let mut head = [0u8; 4096];
    let n = std::fs::File::open(path)
        .and_then(|mut f| f.read(&mut head))
        .unwrap_or(0);
    head[..n]
        .iter()
        .find(|b| !b.is_ascii_whitespace())
        .is_some_and(|&b| b == b'{')
}

/// Why a trace could not be read: the 1-based line (0: the whole file) and what is wrong.
#[derive(Debug)]
pub(crate) enum TraceError {
    /// The file could not be read.
    Io(std::io::Error),
    /// The JSON is not a trace.
    Invalid(usize, String),
}

/// The trace at `path`: per conversation, per turn that has messages, the turn's new
/// messages' text joined by spaces.
pub(crate) fn read_trace(path: &Path) -> Result<Vec<Vec<String>>, TraceError> {
    let text = std::fs::read_to_string(path).map_err(TraceError::Io)?;
    let trace: Trace = serde_json::from_str(&text).map_err(|e| {
        TraceError::Invalid(
            e.line(),
            format!(
                "not an agentic trace ({{\"conversations\": [[{{\"messages\": […]}}, …], …]}}), column {}: {e}",
                e.column()
            ),
        )
    })?;
    if trace.conversations.is_empty() {
        return Err(TraceError::Invalid(
            0,
            "no `conversations` in the trace".into(),
        ));
    }
    Ok(trace
        .conversations
        .iter()
        .map(|conv| {
            conv.iter()
                .filter(|t| !t.messages.is_empty())
                .map(|t| {
                    t.messages
                        .iter()
                        .map(|m| text_of(&m.content))
                        .filter(|s| !s.trim().is_empty())
                        .collect::<Vec<_>>()
                        .join(" ")
                })
                .collect()
        })
        .collect())
}
