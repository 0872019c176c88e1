//! The checks of an answer's content: each tool call's arguments against its tool's
//! parameters schema, a structured answer against the response format's schema
//! ([`OutputChecks`]), from what the stream state collected.

use super::wire::StreamState;
use crate::http::schema::{JsonSchema, Tools};
use crate::record::OutputChecks;

/// The checks of one answer, when the request offered `tools` or asked for a response
/// `format` (`None` otherwise).
pub(super) fn output_checks(
    tools: Option<&Tools>,
    format: Option<&JsonSchema>,
    state: &StreamState,
) -> Option<OutputChecks> {
    if tools.is_none() && format.is_none() {
        return None;
    }
    let mut c = OutputChecks {
        tool_calls: u32::try_from(state.tool_calls.len()).unwrap_or(u32::MAX),
        first_tool_chunk: state.first_tool_chunk,
        tool_tokens: state.tool_tokens,
        ..OutputChecks::default()
    };
    for (name, arguments) in &state.tool_calls {
        let verdict = match tools {
            Some(tools) => tools.check_call(name, arguments),
            None => Err(format!("tool {name}: called although no tool was offered")),
        };
        match verdict {
            Ok(()) => c.valid_tool_calls += 1,
            Err(e) => {
                c.failure.get_or_insert(e);
            }
        }
    }
    if let Some(schema) = format {
        let verdict = schema.check(&state.content);
        c.structured_valid = Some(verdict.is_ok());
        if let Err(e) = verdict {
            c.failure.get_or_insert(format!("response format: {e}"));
        }
    }
    Some(c)
}
