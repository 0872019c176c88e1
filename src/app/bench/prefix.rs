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
/// lookups (caching off, or not scraped) — vLLM's `prefix_cache_queries`/`hits` counters,
/// or SGLang's `cache_hit_rate` gauge.
pub(super) fn figures(
    records: &[RequestRecord],
    work: &[WorkItem],
    block_tokens: u64,
    server: Option<&ServerSeries>,
) -> Option<PrefixCacheFigures> {
    let summary = server?.summary();
    // vLLM counts lookups (none: caching off or no traffic); SGLang only gauges its hit
    // rate (`sglang:cache_hit_rate`), which stands on its own.
    match summary.prefix_cache_queries_tokens {
        Some(q) if q > 0.0 => {}
        Some(_) => return None,
        None => {
            summary.prefix_cache_hit_rate?;
        }
    }
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::observe::prom::Sample;

    fn work(prompts: &[&str]) -> Vec<WorkItem> {
        prompts
            .iter()
            .map(|p| WorkItem {
                prompt_tokens: p.split(' ').count() as u64,
                output_tokens: 1,
                prompt: Some(p.to_string()),
                shared_prefix_tokens: 0,
            })
            .collect()
    }

    /// An SGLang server reports its hit rate as a gauge only: the figures stand on it; a
    /// vLLM server that counted no lookup gives none.
    #[test]
    fn sglangs_hit_rate_gauge_is_the_measured_rate() {
        let prefix = vec!["w"; 32].join(" ");
        let w = work(&[&format!("{prefix} a"), &format!("{prefix} b")]);
        let records: Vec<RequestRecord> = (0..2)
            .map(|i| RequestRecord::new(i, std::time::Duration::from_millis(i)))
            .collect();
        let mut sg = ServerSeries::new("http://sglang:30000/metrics", 1.0);
        sg.push(0.0, vec![Sample::new("sglang:cache_hit_rate", 0.4)]);
        sg.push(1.0, vec![Sample::new("sglang:cache_hit_rate", 0.4)]);
        let f = figures(&records, &w, 16, Some(&sg)).unwrap();
        assert_eq!(f.measured_hit_rate, Some(0.4));
        // The second prompt's 32 shared words are two whole 16-token blocks.
        assert_eq!(f.implied_hit_tokens, 32);
        let mut vl = ServerSeries::new("http://vllm:8000/metrics", 1.0);
        for t in [0.0, 1.0] {
            vl.push(
                t,
                vec![
                    Sample::new("vllm:prefix_cache_queries_total", 0.0),
                    Sample::new("vllm:prefix_cache_hits_total", 0.0),
                ],
            );
        }
        assert_eq!(figures(&records, &w, 16, Some(&vl)), None);
    }
}
