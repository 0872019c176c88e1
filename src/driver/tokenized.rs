//! Prompts with exact token counts from a Hugging Face `tokenizer.json` (cargo feature
//! `tokenizer`, the `tokenizers` crate), built as vLLM's random dataset builds them: the
//! input length less the tokens the tokenizer's post-processor adds (`[CLS]`/`[SEP]`, a
//! BOS), a run of consecutive non-special token ids starting at a random offset
//! (`allowed[(offset + i + k) % len(allowed)]`), decoded to text, re-encoded without
//! special tokens and truncated or padded with random ids until the text encodes to the
//! target length (at most 10 rounds, vLLM's `gen_prompt_decode_to_target_len`). The
//! request's `prompt_tokens` is the length the final text encodes to, as vLLM's
//! `prompt_len` is. The random draws are servebench's seeded generator, not numpy's, so
//! the texts are vLLM's method, not vLLM's bytes.
//!
//! Without the feature [`PromptTokenizer::from_file`] says the build lacks it.

use std::path::{Path, PathBuf};

use super::workload::{self, WorkItem, WorkloadError};
use crate::rng::Rng;

/// Decode/re-encode rounds before a prompt's length is taken as it is (vLLM's `max_retry`).
pub const MAX_ROUNDS: usize = 10;

/// A tokenizer could not be used.
#[derive(Debug, thiserror::Error)]
pub enum TokenizerError {
    /// The file could not be read or is not a `tokenizer.json`.
    #[error("{}: {message}", path.display())]
    Load {
        /// The file.
        path: PathBuf,
        /// Why.
        message: String,
    },
    /// Encoding or decoding failed.
    #[error("{}: {message}", path.display())]
    Codec {
        /// The file.
        path: PathBuf,
        /// Why.
        message: String,
    },
    /// This build has no tokenizer support.
    #[error("{}: this servebench was built without the `tokenizer` cargo feature", .0.display())]
    NotBuilt(PathBuf),
}

/// A `tokenizer.json`, ready to make prompts of exact lengths.
pub struct PromptTokenizer {
    path: PathBuf,
    #[cfg(feature = "tokenizer")]
    tok: tokenizers::Tokenizer,
    /// Non-special ids below the base vocabulary size, ascending.
    #[cfg(feature = "tokenizer")]
    allowed: Vec<u32>,
    /// Tokens the post-processor adds to a single sequence.
    special_added: u64,
}

impl std::fmt::Debug for PromptTokenizer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PromptTokenizer")
            .field("path", &self.path)
            .finish()
    }
}

impl PartialEq for PromptTokenizer {
    /// Two tokenizers read from the same file are equal.
    fn eq(&self, other: &Self) -> bool {
        self.path == other.path
    }
}

impl PromptTokenizer {
    /// The file it was read from.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Tokens the tokenizer's post-processor adds around one sequence (2 for BERT's
    /// `[CLS]`…`[SEP]`): vLLM subtracts them from `--random-input-len`.
    pub fn special_tokens_added(&self) -> u64 {
        self.special_added
    }
}

#[cfg(not(feature = "tokenizer"))]
impl PromptTokenizer {
    /// Reads `path` (needs the `tokenizer` feature).
    ///
    /// # Errors
    ///
    /// Always [`TokenizerError::NotBuilt`] in this build.
    pub fn from_file(path: &Path) -> Result<PromptTokenizer, TokenizerError> {
        Err(TokenizerError::NotBuilt(path.to_path_buf()))
    }

    /// Tokens in `text` without special tokens (not in this build).
    ///
    /// # Errors
    ///
    /// Always [`TokenizerError::NotBuilt`] in this build.
    pub fn count(&self, _text: &str) -> Result<u64, TokenizerError> {
        Err(TokenizerError::NotBuilt(self.path.clone()))
    }

    /// A prompt of `target` tokens (not in this build).
    ///
    /// # Errors
    ///
    /// Always [`TokenizerError::NotBuilt`] in this build.
    pub fn prompt(
        &self,
        _target: u64,
        _start: u64,
        _rng: &mut Rng,
    ) -> Result<(String, u64), TokenizerError> {
        Err(TokenizerError::NotBuilt(self.path.clone()))
    }
}

#[cfg(feature = "tokenizer")]
impl PromptTokenizer {
    /// Reads a Hugging Face `tokenizer.json`.
    ///
    /// # Errors
    ///
    /// [`TokenizerError::Load`] naming the file when it cannot be read or parsed, or has
    /// no non-special token.
    pub fn from_file(path: &Path) -> Result<PromptTokenizer, TokenizerError> {
        use tokenizers::PostProcessor as _;
        let load = |message: String| TokenizerError::Load {
            path: path.to_path_buf(),
            message,
        };
        let bytes = std::fs::read(path).map_err(|e| load(e.to_string()))?;
        let mut tok = tokenizers::Tokenizer::from_bytes(&bytes).map_err(|e| load(e.to_string()))?;
        // Some files (MiniLM's) pad or truncate every encoding to a fixed length; counting
        // needs neither (`transformers` applies them only when asked).
        tok.with_padding(None);
        tok.with_truncation(None).map_err(|e| load(e.to_string()))?;
        let special: std::collections::HashSet<u32> = tok
            .get_added_tokens_decoder()
            .into_iter()
            .filter(|(_, t)| t.special)
            .map(|(id, _)| id)
            .collect();
        let vocab = u32::try_from(tok.get_vocab_size(false)).unwrap_or(u32::MAX);
        let allowed: Vec<u32> = (0..vocab).filter(|id| !special.contains(id)).collect();
        if allowed.is_empty() {
            return Err(load("no token that is not special".into()));
        }
        let special_added = tok
            .get_post_processor()
            .map_or(0, |p| p.added_tokens(false) as u64);
        Ok(PromptTokenizer {
            path: path.to_path_buf(),
            tok,
            allowed,
            special_added,
        })
    }

    fn codec(&self, e: impl std::fmt::Display) -> TokenizerError {
        TokenizerError::Codec {
            path: self.path.clone(),
            message: e.to_string(),
        }
    }

    fn encode(&self, text: &str) -> Result<Vec<u32>, TokenizerError> {
        self.tok
            .encode_fast(text, false)
            .map(|e| e.get_ids().to_vec())
            .map_err(|e| self.codec(e))
    }

    /// `len` consecutive non-special ids from position `start` (wrapping).
    fn run_of(&self, start: u64, len: u64) -> Vec<u32> {
        let n = self.allowed.len() as u64;
        (0..len)
            .map(|k| self.allowed[((start + k) % n) as usize])
            .collect()
    }

    /// The text `len` consecutive non-special ids from position `start` decode to: the
    /// first round of [`PromptTokenizer::prompt`] (vLLM's `tokenizer.decode(inner_seq)`).
    ///
    /// # Errors
    ///
    /// [`TokenizerError::Codec`] when the tokenizer fails.
    pub fn decode_run(&self, start: u64, len: u64) -> Result<String, TokenizerError> {
        self.tok
            .decode(&self.run_of(start, len), false)
            .map_err(|e| self.codec(e))
    }

    /// How many ids prompts are made of: those below the base vocabulary size that are not
    /// special.
    pub fn allowed_tokens(&self) -> usize {
        self.allowed.len()
    }

    /// Tokens in `text` without special tokens (what vLLM's re-encoding counts).
    ///
    /// # Errors
    ///
    /// [`TokenizerError::Codec`] when the tokenizer fails.
    pub fn count(&self, text: &str) -> Result<u64, TokenizerError> {
        Ok(self.encode(text)?.len() as u64)
    }

    /// A prompt of `target` tokens: consecutive non-special ids from `start`, decoded and
    /// re-encoded until the text encodes to `target` tokens (module docs). Returns the text
    /// and the tokens it encodes to (`target` unless [`MAX_ROUNDS`] did not suffice).
    ///
    /// # Errors
    ///
    /// [`TokenizerError::Codec`] when the tokenizer fails.
    pub fn prompt(
        &self,
        target: u64,
        start: u64,
        rng: &mut Rng,
    ) -> Result<(String, u64), TokenizerError> {
        let target_len = usize::try_from(target).unwrap_or(usize::MAX);
        let mut ids = self.run_of(start, target);
        let mut rounds = 0;
        loop {
            let text = self.tok.decode(&ids, false).map_err(|e| self.codec(e))?;
            ids = self.encode(&text)?;
            if ids.len() == target_len || rounds >= MAX_ROUNDS {
                return Ok((text, ids.len() as u64));
            }
            if ids.len() < target_len {
                let more = target_len - ids.len();
                ids.extend((0..more).map(|_| self.allowed[rng.index(self.allowed.len())]));
            } else {
                ids.truncate(target_len);
            }
            rounds += 1;
        }
    }
}

/// vLLM's random dataset with a real tokenizer: the lengths of [`workload::random`] for
/// `input_tokens` less [`PromptTokenizer::special_tokens_added`], each prompt made by
/// [`PromptTokenizer::prompt`] from a seeded random offset, `prompt_tokens` its exact count.
///
/// # Errors
///
/// As [`workload::random`]; a tokenizer failure as [`WorkloadError::Tokenizer`].
pub fn random(
    tok: &PromptTokenizer,
    n: usize,
    input_tokens: u64,
    output_tokens: u64,
    range_ratio: f64,
    seed: u64,
) -> Result<Vec<WorkItem>, WorkloadError> {
    let real = input_tokens
        .saturating_sub(tok.special_tokens_added())
        .max(1);
    let mut items = workload::random(n, real, output_tokens, range_ratio, seed, false)?;
    // Offsets and padding from a stream of their own: the lengths stay those of `random`.
    let mut rng = Rng::new(seed ^ 0x746f_6b65_6e69_7a65);
    for (i, w) in items.iter_mut().enumerate() {
        let offset = rng.next_u64() % (1 << 32);
        let (text, tokens) = tok
            .prompt(w.prompt_tokens, offset + i as u64, &mut rng)
            .map_err(|e| WorkloadError::Tokenizer(e.to_string()))?;
        w.prompt = Some(text);
        w.prompt_tokens = tokens;
    }
    Ok(items)
}
