//! `--tokenizer FILE`: prompts with exact token counts, made as vLLM's random dataset makes
//! them, checked against Hugging Face's Python `transformers` on the same `tokenizer.json`
//! (`tests/fixtures/tokenizer/minilm-reference.json`, made by
//! `scripts/make_tokenizer_fixture.py`; the tokenizer's origin is in tests/fixtures/README.md).
#![cfg(feature = "tokenizer")]

use std::path::Path;

use servebench::driver::tokenized::{self, PromptTokenizer};
use servebench::driver::workload::{self, WorkloadOptions};
use servebench::profile::Profile;

const TOKENIZER: &str = "tests/fixtures/tokenizer/minilm/tokenizer.json";

fn reference() -> serde_json::Value {
    let text = std::fs::read_to_string("tests/fixtures/tokenizer/minilm-reference.json").unwrap();
    serde_json::from_str(&text).unwrap()
}

#[test]
fn the_tokenizer_reads_as_transformers_reads_it() {
    let tok = PromptTokenizer::from_file(Path::new(TOKENIZER)).unwrap();
    let r = reference();
    assert_eq!(
        tok.special_tokens_added(),
        r["num_special_tokens_to_add"].as_u64().unwrap()
    );
    assert_eq!(tok.allowed_tokens() as u64, r["allowed"].as_u64().unwrap());
    for c in r["counts"].as_array().unwrap() {
        let text = c["text"].as_str().unwrap();
        assert_eq!(
            tok.count(text).unwrap(),
            c["tokens"].as_u64().unwrap(),
            "{text:?}"
        );
    }
    // vLLM's first round, case by case: the same text, re-encoding to the same length
    // (often not the target: the reason for the rounds that follow).
    for c in r["cases"].as_array().unwrap() {
        let (start, target) = (c["start"].as_u64().unwrap(), c["target"].as_u64().unwrap());
        let text = tok.decode_run(start, target).unwrap();
        assert_eq!(
            text,
            c["text"].as_str().unwrap(),
            "start {start}, {target} tokens"
        );
        assert_eq!(
            tok.count(&text).unwrap(),
            c["reencoded_tokens"].as_u64().unwrap(),
            "start {start}, {target} tokens"
        );
    }
}

#[test]
fn random_prompts_encode_to_exactly_their_token_counts() {
    let tok = PromptTokenizer::from_file(Path::new(TOKENIZER)).unwrap();
    let items = tokenized::random(&tok, 40, 1024, 16, 0.0, 7).unwrap();
    let mut exact = 0;
    for w in &items {
        let text = w.prompt.as_deref().unwrap();
        // The recorded count is the text's own count, always.
        assert_eq!(tok.count(text).unwrap(), w.prompt_tokens);
        // vLLM's target: the input length less [CLS] and [SEP].
        exact += usize::from(w.prompt_tokens == 1022);
        assert_eq!(w.output_tokens, 16);
    }
    assert_eq!(exact, items.len(), "every prompt converged to 1022 tokens");
    // Seeded: the same prompts again; another seed, other prompts.
    let again = tokenized::random(&tok, 40, 1024, 16, 0.0, 7).unwrap();
    assert_eq!(again, items);
    let other = tokenized::random(&tok, 40, 1024, 16, 0.0, 8).unwrap();
    assert_ne!(other[0].prompt, items[0].prompt);
    // With a range ratio the lengths vary and each is still exact.
    for w in tokenized::random(&tok, 20, 300, 8, 0.5, 3).unwrap() {
        assert_eq!(
            tok.count(w.prompt.as_deref().unwrap()).unwrap(),
            w.prompt_tokens
        );
        assert!(
            (149..=447).contains(&w.prompt_tokens),
            "{}",
            w.prompt_tokens
        );
    }
}

#[test]
fn workloads_use_the_tokenizer_for_random_prompts() {
    let tok = std::sync::Arc::new(PromptTokenizer::from_file(Path::new(TOKENIZER)).unwrap());
    let mut p = Profile::preset("latency").unwrap();
    p.total_requests = 5;
    let opts = WorkloadOptions {
        with_text: true,
        tokenizer: Some(tok.clone()),
        ..WorkloadOptions::default()
    };
    let items = workload::build(&p, &opts).unwrap();
    assert_eq!(items.len(), 5);
    for w in &items {
        assert_eq!(
            tok.count(w.prompt.as_deref().unwrap()).unwrap(),
            w.prompt_tokens
        );
    }
}

#[test]
fn a_bad_tokenizer_file_is_named() {
    let err = PromptTokenizer::from_file(Path::new("tests/fixtures/seed.txt")).unwrap_err();
    assert!(
        err.to_string().starts_with("tests/fixtures/seed.txt: "),
        "{err}"
    );
    let err = PromptTokenizer::from_file(Path::new("/nonexistent/tokenizer.json")).unwrap_err();
    assert!(
        err.to_string().contains("/nonexistent/tokenizer.json"),
        "{err}"
    );
}
