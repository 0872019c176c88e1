//! Unit tests of the client: request bodies, SSE chunk interpretation, error messages.

use super::*;
use crate::record::ErrorKind;

fn interpret_all(lines: &[&str]) -> (StreamState, Vec<Option<u32>>) {
    let mut s = StreamState::default();
    let out = lines.iter().map(|l| s.interpret(l).unwrap()).collect();
    (s, out)
}

#[test]
fn every_delta_kind_counts_and_role_only_does_not() {
    let (s, out) = interpret_all(&[
        r#"{"choices":[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":null}]}"#,
        r#"{"choices":[{"index":0,"delta":{"reasoning":"a"}}]}"#,
        r#"{"choices":[{"index":0,"delta":{"reasoning_content":"b"}}]}"#,
        r#"{"choices":[{"index":0,"delta":{"content":"c","reasoning":null}}]}"#,
        r#"{"choices":[{"index":0,"text":" d"}]}"#,
        r#"{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0}]}}]}"#,
        r#"{"choices":[{"index":0,"delta":{},"finish_reason":"length"}]}"#,
        r#"{"choices":[{"index":0,"text":"","finish_reason":"length"}]}"#,
        r#"{"choices":[],"usage":{"prompt_tokens":9,"completion_tokens":5}}"#,
    ]);
    assert_eq!(
        out,
        [
            None,
            Some(1),
            Some(1),
            Some(1),
            Some(1),
            Some(1),
            None,
            None,
            None
        ]
    );
    assert_eq!(s.token_chunks, 5);
    assert_eq!(s.prompt_tokens, Some(9));
    assert_eq!(s.completion_tokens, Some(5));
}

#[test]
fn continuous_usage_gives_tokens_per_chunk() {
    // A speculative-decoding server: 1, then 3, then 2 tokens per chunk.
    let (s, out) = interpret_all(&[
        r#"{"choices":[{"text":"a"}],"usage":{"prompt_tokens":4,"completion_tokens":1,"total_tokens":5}}"#,
        r#"{"choices":[{"text":"bcd"}],"usage":{"prompt_tokens":4,"completion_tokens":4,"total_tokens":8}}"#,
        r#"{"choices":[{"text":"ef"}],"usage":{"prompt_tokens":4,"completion_tokens":6,"total_tokens":10}}"#,
        r#"{"choices":[],"usage":{"prompt_tokens":4,"completion_tokens":6,"total_tokens":10}}"#,
    ]);
    assert_eq!(out, [Some(1), Some(3), Some(2), None]);
    assert_eq!(s.counted_tokens, 6);
}

#[test]
fn hostile_usage_counts_are_bounded_not_a_panic() {
    let max = u64::MAX;
    let lines = [
        r#"{"choices":[{"text":"a"}],"usage":{"completion_tokens":5}}"#.to_string(),
        // Decreasing usage: the chunk still counts one token.
        r#"{"choices":[{"text":"b"}],"usage":{"completion_tokens":3}}"#.to_string(),
        // A jump to 10^15, then to u64::MAX, then a chunk without usage.
        r#"{"choices":[{"text":"c"}],"usage":{"completion_tokens":1000000000000000}}"#.to_string(),
        format!(r#"{{"choices":[{{"text":"d"}}],"usage":{{"completion_tokens":{max}}}}}"#),
        r#"{"choices":[{"text":"e"}]}"#.to_string(),
        format!(r#"{{"choices":[{{"text":"f"}}],"usage":{{"completion_tokens":{max}}}}}"#),
    ];
    let refs: Vec<&str> = lines.iter().map(String::as_str).collect();
    let (s, out) = interpret_all(&refs);
    let m = Some(u32::MAX);
    assert_eq!(out, [Some(5), Some(1), m, m, Some(1), m]);
    let sum: u64 = out.iter().flatten().map(|&t| u64::from(t)).sum();
    assert_eq!(s.counted_tokens, sum);
    assert_eq!(s.completion_tokens, Some(max));
    assert_eq!(s.token_chunks, 6);
}

#[test]
fn tokens_without_text_are_carried_into_the_next_chunk() {
    // A token whose text is still being detokenized arrives as an empty chunk.
    let (_, out) = interpret_all(&[
        r#"{"choices":[{"text":"a"}],"usage":{"completion_tokens":1}}"#,
        r#"{"choices":[{"text":""}],"usage":{"completion_tokens":2}}"#,
        r#"{"choices":[{"text":"é"}],"usage":{"completion_tokens":3}}"#,
    ]);
    assert_eq!(out, [Some(1), None, Some(2)]);
}

#[test]
fn in_stream_errors_and_garbage_fail() {
    let mut s = StreamState::default();
    let e = s
        .interpret(r#"{"error":{"message":"boom","type":"InternalServerError","code":500}}"#)
        .unwrap_err();
    assert_eq!(e, (ErrorKind::ServerError, "boom".to_string()));
    let e = s
        .interpret(r#"{"object":"error","message":"too long","type":"BadRequestError"}"#)
        .unwrap_err();
    assert_eq!(e, (ErrorKind::ServerError, "too long".to_string()));
    let e = s.interpret("not json").unwrap_err();
    assert_eq!(e.0, ErrorKind::Protocol);
    // `error: null` is not an error
    assert_eq!(
        s.interpret(r#"{"choices":[{"text":"x"}],"error":null}"#)
            .unwrap(),
        Some(1)
    );
}

#[test]
fn request_bodies_match_the_openai_shapes() {
    let mut cfg = HttpConfig::new("http://127.0.0.1:1");
    cfg.model = Some("m".into());
    let req = EngineRequest {
        id: 3,
        prompt_tokens: 4,
        prompt: None,
        max_output_tokens: 7,
        ignore_eos: true,
        arrival: Duration::ZERO,
        shared_prefix_tokens: 0,
        image_patches: Vec::new(),
        shares_admission: false,
        constrained: false,
    };
    let (b, payload) = request_body(&cfg, &req);
    assert_eq!(payload, crate::record::Payload::default());
    assert_eq!(b["model"], "m");
    assert_eq!(b["max_tokens"], 7);
    assert_eq!(b["stream"], true);
    assert_eq!(b["ignore_eos"], true);
    assert_eq!(b["stream_options"]["include_usage"], true);
    assert_eq!(b["stream_options"]["continuous_usage_stats"], true);
    assert_eq!(b["prompt"].as_str().unwrap().split(' ').count(), 4);
    cfg.endpoint = Endpoint::Chat;
    cfg.continuous_usage = false;
    let (b, _) = request_body(
        &cfg,
        &EngineRequest {
            ignore_eos: false,
            prompt: Some("hi there".into()),
            ..req.clone()
        },
    );
    assert_eq!(b["max_completion_tokens"], 7);
    assert_eq!(b["messages"][0]["content"], "hi there");
    assert_eq!(b["messages"][0]["role"], "user");
    assert!(b.get("ignore_eos").is_none());
    assert!(b["stream_options"].get("continuous_usage_stats").is_none());
}

/// The body of every other endpoint, as its API documents it.
#[test]
fn bodies_of_every_endpoint() {
    let mut cfg = HttpConfig::new("http://127.0.0.1:1");
    let req = EngineRequest {
        id: 3,
        prompt_tokens: 5,
        prompt: None,
        max_output_tokens: 9,
        ignore_eos: true,
        arrival: Duration::ZERO,
        shared_prefix_tokens: 0,
        image_patches: Vec::new(),
        shares_admission: false,
        constrained: false,
    };
    cfg.endpoint = Endpoint::Responses;
    let (b, p) = request_body(&cfg, &req);
    assert_eq!(
        (b["max_output_tokens"].as_u64(), b["stream"].as_bool()),
        (Some(9), Some(true))
    );
    assert!(b["input"].is_string() && p.response == crate::record::ResponseForm::Streamed);
    cfg.endpoint = Endpoint::Messages;
    let (b, _) = request_body(&cfg, &req);
    assert_eq!(b["max_tokens"], 9);
    assert_eq!(b["messages"][0]["role"], "user");
    cfg.endpoint = Endpoint::Embeddings;
    cfg.inputs_per_request = 4;
    let (b, p) = request_body(&cfg, &req);
    let inputs = b["input"].as_array().unwrap();
    assert_eq!(inputs.len(), 4);
    // Every input is its own text of the workload's length.
    assert!(inputs
        .iter()
        .all(|i| i.as_str().unwrap().split(' ').count() == 5));
    assert_ne!(inputs[1], inputs[2]);
    assert_eq!(
        (p.response, p.inputs),
        (crate::record::ResponseForm::Whole, Some(4))
    );
    assert!(b.get("ignore_eos").is_none() && b.get("stream").is_none());
    cfg.endpoint = Endpoint::Rerank;
    cfg.inputs_per_request = 3;
    cfg.document_tokens = Some(7);
    let (b, _) = request_body(&cfg, &req);
    assert_eq!(b["query"].as_str().unwrap().split(' ').count(), 5);
    let docs = b["documents"].as_array().unwrap();
    assert_eq!(docs.len(), 3);
    assert!(docs
        .iter()
        .all(|d| d.as_str().unwrap().split(' ').count() == 7));
    cfg.endpoint = Endpoint::Score;
    let (b, _) = request_body(&cfg, &req);
    assert_eq!(b["text_2"].as_array().unwrap().len(), 3);
    cfg.endpoint = Endpoint::Chat;
    cfg.inputs_per_request = 1;
    cfg.images = Some(crate::driver::images::ImageLoad::parse(2, "64x64").unwrap());
    let (b, p) = request_body(&cfg, &req);
    let parts = b["messages"][0]["content"].as_array().unwrap();
    assert_eq!(parts.len(), 3);
    assert_eq!(parts[1]["type"], "image_url");
    assert!(parts[1]["image_url"]["url"]
        .as_str()
        .unwrap()
        .starts_with("data:image/png;base64,"));
    let images = p.images.unwrap();
    // 64 x 64 is under min_pixels: 256 x 256, 64 tokens and 2 markers each.
    assert_eq!((images.count, images.vision_tokens), (2, 132));
}

/// A streamed tool call as OpenAI's function-calling guide shows it ("Streaming"): the first
/// delta names the function with empty arguments, the next ones carry argument pieces, the
/// last has `finish_reason: "tool_calls"`. The state keeps the call and which chunk first
/// carried it; the check finds the arguments valid for the tool.
#[test]
fn streamed_tool_calls_are_collected_and_checked() {
    let mut s = StreamState::default();
    let stream = [
        r#"{"choices":[{"index":0,"delta":{"role":"assistant","content":null,"tool_calls":[{"index":0,"id":"call_DdmO9pD3xa9XTPNJ32zg2hcA","type":"function","function":{"name":"get_weather","arguments":""}}]},"finish_reason":null}]}"#,
        r#"{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{\"ci"}}]},"finish_reason":null}]}"#,
        r#"{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"ty\": \"Paris\"}"}}]},"finish_reason":null}]}"#,
        r#"{"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}"#,
    ];
    let chunks: Vec<_> = stream.iter().map(|d| s.interpret(d).unwrap()).collect();
    assert_eq!(chunks, vec![Some(1), Some(1), Some(1), None]);
    assert_eq!(
        s.tool_calls,
        vec![(
            "get_weather".to_string(),
            r#"{"city": "Paris"}"#.to_string()
        )]
    );
    assert_eq!((s.first_tool_chunk, s.tool_tokens), (Some(0), 3));
    let mut cfg = HttpConfig::new("http://127.0.0.1:1");
    cfg.tools = Some(
        crate::http::schema::Tools::from_json(
            serde_json::from_str(include_str!("../../../tests/fixtures/agentic/tools.json"))
                .unwrap(),
        )
        .unwrap(),
    );
    let c = super::checks::output_checks(cfg.tools.as_ref(), None, &s).unwrap();
    assert_eq!((c.tool_calls, c.valid_tool_calls, c.failure), (1, 1, None));
    // The same call without its required argument fails, saying why.
    s.tool_calls[0].1 = r#"{"unit": "celsius"}"#.into();
    let c = super::checks::output_checks(cfg.tools.as_ref(), None, &s).unwrap();
    assert_eq!(c.valid_tool_calls, 0);
    assert!(c
        .failure
        .unwrap()
        .contains("\"city\" is a required property"));
}

/// Images from a dataset file go out as their URLs, in turn; an http(s) URL's size is
/// unknown to the client and counted as such, a data URL's is known.
#[test]
fn dataset_images_are_sent_by_url_in_turn() {
    use crate::driver::images::{ImageLoad, ImageSize, ImageSource};
    let mut cfg = HttpConfig::new("http://127.0.0.1:1");
    cfg.endpoint = Endpoint::Chat;
    cfg.images = Some(ImageLoad {
        per_request: 2,
        sizes: Vec::new(),
        sources: vec![
            ImageSource {
                url: "https://example.com/a.jpg".into(),
                size: None,
                bytes: None,
            },
            ImageSource {
                url: "data:image/png;base64,AAAA".into(),
                size: Some(ImageSize::new(512, 512)),
                bytes: Some(3),
            },
            ImageSource {
                url: "https://example.com/c.jpg".into(),
                size: None,
                bytes: None,
            },
        ],
    });
    let req = |id| EngineRequest {
        id,
        prompt_tokens: 5,
        max_output_tokens: 9,
        ignore_eos: true,
        ..EngineRequest::default()
    };
    // Request 1's images are entries 2 and 0 (2 × 1 + 0, 2 × 1 + 1 mod 3).
    let (b, p) = request_body(&cfg, &req(1));
    let parts = b["messages"][0]["content"].as_array().unwrap();
    let urls: Vec<&str> = parts[1..]
        .iter()
        .map(|x| x["image_url"]["url"].as_str().unwrap())
        .collect();
    assert_eq!(
        urls,
        ["https://example.com/c.jpg", "https://example.com/a.jpg"]
    );
    let sent = p.images.unwrap();
    assert_eq!((sent.count, sent.of_unknown_size, sent.bytes), (2, 2, 0));
    // Request 0: entries 0 and 1 — the data URL's 258 vision tokens are counted.
    let sent = request_body(&cfg, &req(0)).1.images.unwrap();
    assert_eq!(
        (
            sent.count,
            sent.of_unknown_size,
            sent.vision_tokens,
            sent.bytes
        ),
        (2, 1, 258, 3)
    );
}

/// The schema goes in the field asked for, and only there.
#[test]
fn the_schema_goes_in_the_chosen_field() {
    use crate::http::schema::{JsonSchema, SchemaField};
    let mut cfg = HttpConfig::new("http://127.0.0.1:1");
    cfg.endpoint = Endpoint::Chat;
    cfg.response_format = Some(JsonSchema::new(serde_json::json!({"type": "object"})).unwrap());
    let req = EngineRequest {
        id: 1,
        prompt_tokens: 5,
        max_output_tokens: 9,
        ignore_eos: true,
        ..EngineRequest::default()
    };
    for (field, name) in [
        (SchemaField::ResponseFormat, "response_format"),
        (SchemaField::StructuredOutputs, "structured_outputs"),
        (SchemaField::GuidedJson, "guided_json"),
    ] {
        cfg.schema_field = field;
        let (b, _) = request_body(&cfg, &req);
        let fields: Vec<&str> = ["response_format", "structured_outputs", "guided_json"]
            .into_iter()
            .filter(|f| b.get(*f).is_some())
            .collect();
        assert_eq!(fields, [name]);
    }
}
