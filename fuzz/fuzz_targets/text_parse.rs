//! Fuzzes `servebench::format::text::parse` on arbitrary bytes (read as lossy UTF-8).
//!
//! Properties checked on every input that parses:
//! * every block re-renders to exactly its span of the input (render(parse(x)) == x);
//! * the rendered block parses again, alone, to a result that renders identically;
//! * the canonical layouts of both styles round-trip too.
//!
//! Errors are fine (the parser must only never panic).
#![no_main]

use libfuzzer_sys::fuzz_target;
use servebench::format::text::{parse, parse_block, render, Style};

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let Ok(blocks) = parse(&text) else {
        return;
    };
    for b in blocks {
        let rendered = b.render();
        assert_eq!(rendered, &text[b.span.clone()], "render(parse(x)) != x");
        let again = parse_block(&rendered).expect("a rendered block parses");
        assert_eq!(again.render(), rendered);
        for style in [Style::Gpustack, Style::Vllm] {
            let canonical = render(&b.result, style);
            let back = parse_block(&canonical).expect("a canonical block parses");
            assert_eq!(render(&back.result, style), canonical);
        }
    }
});
