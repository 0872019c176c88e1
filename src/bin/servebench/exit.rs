//! The exit statuses of every `servebench` command — one contract, documented in
//! `docs/guide/exit-codes.md` and the README:
//!
//! | status | meaning |
//! |---|---|
//! | 0 | success |
//! | 1 | bad input: a file, target, model or setting servebench cannot use (the message names it) |
//! | 2 | usage: bad arguments (clap's status) |
//! | 3 | `lint` found something |
//! | 4 | it ran, but the measurement failed: the server never became healthy, died, or too many requests failed; a study with a configuration that could not be measured |
//! | 130, 143 | interrupted by SIGINT (Ctrl-C) or SIGTERM; what was measured is saved |

/// Success.
pub const SUCCESS: u8 = 0;
/// Bad input (the message names the file, target or key).
pub const BAD_INPUT: u8 = 1;
/// Usage errors (clap's own status for bad arguments).
pub const USAGE: u8 = 2;
/// `lint` found something (`servebench::app::EXIT_FINDINGS`, which `lint` returns).
#[cfg_attr(not(test), allow(dead_code))]
pub const FINDINGS: u8 = 3;
/// It ran, but the measurement failed.
pub const MEASUREMENT_FAILED: u8 = 4;
/// Interrupted by SIGINT (128 + 2, as shells report it).
pub const INTERRUPTED: u8 = 130;

#[cfg(test)]
mod tests {
    #[test]
    fn the_contract_agrees_with_lint() {
        use servebench::app as lint; // the lint verb's exit codes
        assert_eq!(i32::from(super::SUCCESS), lint::EXIT_CLEAN);
        assert_eq!(i32::from(super::BAD_INPUT), lint::EXIT_BAD_INPUT);
        assert_eq!(i32::from(super::USAGE), lint::EXIT_USAGE);
        assert_eq!(i32::from(super::FINDINGS), lint::EXIT_FINDINGS);
    }
}
