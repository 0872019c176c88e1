//! What must be equal between a merged sharded run and the single-process run with the same
//! seed: every request's id, prompt (client and server token counts), send offset in the
//! schedule and output tokens.

use std::collections::BTreeSet;
use std::time::Duration;

use servebench::runfile::RunFile;

/// (id, client prompt tokens, server prompt tokens, send offset in the schedule, output
/// tokens).
pub type Key = (u64, Option<u64>, Option<u64>, Duration, u64);

/// Every request's [`Key`].
pub fn keys(run: &RunFile) -> BTreeSet<Key> {
    let origin = run.schedule_origin.expect("schedule origin");
    run.records
        .iter()
        .map(|r| {
            (
                r.id,
                r.prompt_tokens,
                r.usage_prompt_tokens,
                r.scheduled_at.expect("scheduled") - origin,
                r.output_tokens(),
            )
        })
        .collect()
}
