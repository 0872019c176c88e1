//! The prefix-cache hit rate a bench run's workload implies, beside the server's: the
//! measured requests' prompts in send order ([`crate::metrics::prefix`]), when the server
//! reported prefix-cache counters.

use crate::driver::workload::WorkItem;
use crate::metrics::prefix::{implied_prefix_hits, prefix_cache_figures};
use crate::observe::ServerSeries;
use crate::record::RequestRecord;
use crate::result::PrefixCacheFigures;

/// The implied and measured rates of the run whose measured `records` were sent from
/// `work` (request `id` is `work[id]`); `None` when the server reported no prefix-cache
/// lookups (caching off, or not scraped).
pub(super) fn figures(
    records: &[RequestRecord],
    work: &[WorkItem],
    block_tokens: u64,
    server: Option<&ServerSeries>,
) -> Option<PrefixCacheFigures> {
    let summary = server?.summary();
    summary.prefix_cache_queries_tokens.filter(|q| *q > 0.0)?;
    let mut sent: Vec<&RequestRecord> = records.iter().collect();
    sent.sort_by_key(|r| r.sent_at);
    // A prompt the client made up on sending (no text in the workload) is the HTTP
    // client's synthetic prompt for its id.
    let texts: Vec<std::borrow::Cow<'_, str>> = sent
        .iter()
        .filter_map(|r| {
            let w = work.get(usize::try_from(r.id).ok()?)?;
            Some(match &w.prompt {
                Some(p) => std::borrow::Cow::Borrowed(p.as_str()),
                None => std::borrow::Cow::Owned(crate::http::client::synthetic_prompt(
                    r.id,
                    w.prompt_tokens,
                )),
            })
        })
        .collect();
    let implied = implied_prefix_hits(texts.iter().map(|t| t.as_ref()), 0, block_tokens);
    Some(prefix_cache_figures(
        implied,
        block_tokens,
        summary.prefix_cache_hit_rate,
    ))
}
