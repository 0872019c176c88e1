//! How library errors read on the command line: the library's errors name the value, the
//! field and the reason; this module, and only it, adds the flag that gave the value.

#[cfg(feature = "http")]
use servebench::accuracy::{AccuracyError, KeysError};
#[cfg(feature = "http")]
use servebench::driver::tokenized::TokenizerError;
#[cfg(feature = "http")]
use servebench::driver::LoraError;
use servebench::merge::MergeError;
use servebench::observe::SliceError;
#[cfg(all(feature = "study", unix))]
use servebench::study::{ShardedError, StudyError};

use crate::input::InputError;

/// `--tokenizer FILE: why`.
#[cfg(feature = "http")]
pub(crate) fn tokenizer(e: TokenizerError) -> InputError {
    InputError(format!("--tokenizer {e}"))
}

/// `--lora-modules` / `--lora-split`: why.
#[cfg(feature = "http")]
pub(crate) fn lora(e: LoraError) -> InputError {
    InputError(format!("--lora-modules/--lora-split: {e}"))
}

/// `--slice: why`.
pub(crate) fn slice(e: SliceError) -> InputError {
    InputError(format!("--slice: {e}"))
}

#[cfg(feature = "http")]
/// `--truth FILE: why` for the server's timeline; a client file's error as it is.
pub(crate) fn accuracy(e: AccuracyError) -> InputError {
    match e {
        AccuracyError::Truth(_) | AccuracyError::EmptyTruth { .. } => {
            InputError(format!("--truth {e}"))
        }
        AccuracyError::Keys {
            source: KeysError::NoPrefix { .. } | KeysError::AmbiguousPrefix { .. },
            ..
        } => InputError(format!("{e} with --request-id-prefix")),
        other => InputError(other.to_string()),
    }
}

/// `merge: why`, with the flag that helps where there is one.
pub(crate) fn merge(e: MergeError) -> InputError {
    match e {
        MergeError::Missing { .. } => InputError(format!("merge: {e}: --allow-missing")),
        MergeError::NoServerClock { .. } => InputError(format!("merge: {e}: use --align wall")),
        MergeError::NotAShard { .. } => InputError(format!(
            "merge: {e}: merge takes the run files of `bench --shard K/N`"
        )),
        other => InputError(format!("merge: {other}")),
    }
}

#[cfg(all(feature = "study", unix))]
/// A study's error, with the flag where a sharded study's concerns one.
pub(crate) fn study(e: &StudyError) -> String {
    match e {
        StudyError::Sharded(s) => match s.as_ref() {
            ShardedError::NeedsBarrier => {
                format!("--shard in a study needs --start-at barrier:DIR: {e}")
            }
            ShardedError::Simulator { .. } => format!("--shard: {e}"),
            _ => e.to_string(),
        },
        _ => e.to_string(),
    }
}
