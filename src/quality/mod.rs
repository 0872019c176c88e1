//! Quality beside speed: an evaluation set run against a server with fixed sampling, its
//! accuracy with an interval, and two configurations compared on the same items.
//!
//! - [`eval`]: the items — servebench's JSON Lines (`prompt`, `answer`, `scorer`), GSM8K's
//!   (`question`, `answer` ending `#### N`) and MMLU's (`question`, `choices`, `answer`) as
//!   users have them, and a seeded synthetic arithmetic set ([`eval::synthetic`]) that needs
//!   no download;
//! - [`score`]: the scorers (exact match, numeric extraction, multiple-choice letter, regex);
//! - [`paired`]: accuracy with its Wilson interval and the paired comparison of two runs
//!   on the same items — McNemar's exact test for a difference and a non-inferiority
//!   margin on the paired difference's interval;
//! - [`answers`]: how the example server answers the synthetic items at a configured
//!   accuracy (seeded), so a quality drop can be staged and detected;
//! - [`run`]: the file `servebench quality --output` writes.
//!
//! ```
//! use servebench::quality::eval::synthetic;
//! use servebench::quality::paired::{compare_runs, QualityCall};
//! let items = synthetic(400, 7);
//! // Two runs that answer every item the same: no difference.
//! let same: Vec<bool> = items.iter().map(|i| i.id.len() % 2 == 0).collect();
//! let c = compare_runs(&same, &same, 0.05, 1.0).unwrap();
//! assert_eq!(c.call, QualityCall::WithinNoise);
//! assert!(c.non_inferior);
//! ```

pub mod answers;
pub mod eval;
pub mod paired;
pub mod run;
pub mod score;
