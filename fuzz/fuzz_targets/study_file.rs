//! Fuzzes `servebench::study::StudyFile::parse` (the TOML study file) and the study
//! journal's reader on arbitrary bytes (read as lossy UTF-8).
//!
//! Properties: never a panic; a study file that parses serializes to JSON and back to an
//! equal value (the journal embeds it that way).
#![no_main]

use libfuzzer_sys::fuzz_target;
use servebench::study::StudyFile;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let Ok(study) = StudyFile::parse(&text, "fuzz.toml".as_ref()) else {
        return;
    };
    let json = serde_json::to_vec(&study).expect("a parsed study serializes");
    let back: StudyFile = serde_json::from_slice(&json).expect("and reads back");
    assert_eq!(back, study);
    let _ = study.target_metric();
    for p in study.ladder.profiles.iter().chain(&study.final_.profiles) {
        assert!(study.profile(p).is_ok(), "checked profiles resolve");
    }
});
