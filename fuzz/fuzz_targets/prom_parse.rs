//! Fuzzes `servebench::observe::prom::parse` (Prometheus' text format, what `bench` scrapes
//! from a server's `/metrics`) on arbitrary bytes (read as lossy UTF-8).
//!
//! Properties checked on every input that parses: writing the samples and parsing them
//! again gives the same names, labels and values (NaN compared as NaN), and a series built
//! from them survives JSON. Errors are fine (the parser must only never panic).
#![no_main]

use libfuzzer_sys::fuzz_target;
use servebench::observe::prom::{parse, write};
use servebench::observe::ServerSeries;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let Ok(samples) = parse(&text) else {
        return;
    };
    let again = parse(&write(&samples)).expect("written samples parse");
    assert_eq!(again.len(), samples.len());
    for (a, b) in samples.iter().zip(&again) {
        assert_eq!((&a.name, &a.labels), (&b.name, &b.labels));
        assert!(a.value.to_bits() == b.value.to_bits() || (a.value.is_nan() && b.value.is_nan()));
    }
    let mut s = ServerSeries::new("fuzz", 1.0);
    s.push(0.0, samples);
    let json = serde_json::to_string(&s).expect("a series serializes");
    let back: ServerSeries = serde_json::from_str(&json).expect("and reads back");
    assert_eq!(back.series.len(), s.series.len());
    let _ = s.summary();
});
