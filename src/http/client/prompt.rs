//! Request bodies: synthetic prompts from a word list and the OpenAI completions or chat
//! JSON body sent for each request.

use bytes::Bytes;
use serde_json::{json, Value};

use super::HttpConfig;
use crate::engine::EngineRequest;
use crate::http::Endpoint;
use crate::rng::SplitMix64;

/// A word list for synthetic prompts: common English words, about one token each in
/// BPE vocabularies, and exactly one token each for the example server's word tokenizer.
pub(super) const WORDS: [&str; 32] = [
    "the", "of", "and", "to", "in", "is", "that", "for", "it", "as", "was", "with", "be", "by",
    "on", "not", "he", "this", "are", "or", "his", "from", "at", "which", "but", "have", "an",
    "had", "they", "you", "were", "their",
];

/// A deterministic prompt of `tokens` space-separated words, different for each `seed`
/// (so prefix caches do not see identical prompts).
///
/// ```
/// use servebench::http::client::synthetic_prompt;
/// let p = synthetic_prompt(7, 5);
/// assert_eq!(p.split_whitespace().count(), 5);
/// assert_ne!(p, synthetic_prompt(8, 5));
/// ```
pub fn synthetic_prompt(seed: u64, tokens: u64) -> String {
    let mut words = SplitMix64::new(seed ^ 0x5851_f42d_4c95_7f2d);
    let mut out = String::with_capacity(tokens as usize * 4);
    for i in 0..tokens {
        let z = words.next_u64();
        if i > 0 {
            out.push(' ');
        }
        out.push_str(WORDS[(z % WORDS.len() as u64) as usize]);
    }
    out
}

pub(super) fn request_body(config: &HttpConfig, request: &EngineRequest) -> Value {
    let prompt = request
        .prompt
        .clone()
        .unwrap_or_else(|| synthetic_prompt(request.id, request.prompt_tokens));
    let mut stream_options = json!({"include_usage": true});
    if config.continuous_usage {
        stream_options["continuous_usage_stats"] = Value::Bool(true);
    }
    let mut body = match config.endpoint {
        Endpoint::Completions => json!({
            "prompt": prompt,
            "max_tokens": request.max_output_tokens,
            "stream": true,
            "stream_options": stream_options,
        }),
        Endpoint::Chat => json!({
            "messages": [{"role": "user", "content": prompt}],
            "max_completion_tokens": request.max_output_tokens,
            "stream": true,
            "stream_options": stream_options,
        }),
    };
    if let Value::Object(map) = &mut body {
        match (&config.lora, &config.model) {
            (Some(split), _) => {
                map.insert("model".into(), Value::String(split.pick(request.id).into()));
            }
            (None, Some(model)) => {
                map.insert("model".into(), Value::String(model.clone()));
            }
            (None, None) => {}
        }
        if request.ignore_eos {
            map.insert("ignore_eos".into(), Value::Bool(true));
        }
        for (k, v) in &config.extra_body {
            map.insert(k.clone(), v.clone());
        }
    }
    body
}

/// The bytes of the JSON body sent for `request`.
pub(super) fn encode_body(config: &HttpConfig, request: &EngineRequest) -> Bytes {
    Bytes::from(request_body(config, request).to_string())
}
