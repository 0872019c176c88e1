//! Workloads: the list of requests (prompt length, output budget, optional text) a
//! [`Profile`] sends.
//!
//! * **Random** — vLLM's random dataset lengths: with `range_ratio` `r` each length is a
//!   uniform integer in `[floor(L·(1−r)), ceil(L·(1+r))]` (output at least 1); with `r = 0`
//!   (the default, and what guidellm's `prompt_tokens=…,output_tokens=…` does) every request
//!   gets exactly `L`.
//! * **ShareGPT** — from the real `ShareGPT_V3_unfiltered_cleaned_split.json` when the file
//!   exists: entries with at least two turns, shuffled with the seed, prompt = first turn,
//!   output budget = length of the second turn; with [`ShareGptFilter::Vllm`] vLLM's rules
//!   drop prompts or outputs under 4 tokens, prompts over 1024 and pairs over 2048 tokens;
//!   vLLM oversamples (seeded) when too few remain. **Token counts are approximated without a
//!   tokenizer** by [`approx_tokens`] (a BPE-like count: see its docs; typically within ±15%
//!   of Qwen's tokenizer on English text).
//! * **ShareGPT, built in** — without the file, lengths are drawn from a built-in
//!   distribution ([`builtin_sharegpt`]): an **approximation**, log-normal prompt and output
//!   lengths whose means match the seed study's ShareGPT run (342 prompt tokens with the
//!   chat template, 281 output tokens per request).

use std::path::{Path, PathBuf};

use serde::Deserialize;

use crate::profile::{Dataset, Profile, SHAREGPT_FILE};
use crate::rng::Rng;

/// One request to send.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WorkItem {
    /// Prompt length in tokens (as the client counts it).
    pub prompt_tokens: u64,
    /// Output budget (`max_tokens`).
    pub output_tokens: u64,
    /// Prompt text, when the workload has one.
    pub prompt: Option<String>,
    /// Tokens at the start of the prompt shared with other requests.
    pub shared_prefix_tokens: u64,
}

/// Which ShareGPT entries to keep.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ShareGptFilter {
    /// Keep every entry with two turns (guidellm, the seed's runs).
    #[default]
    None,
    /// vLLM's `is_valid_sequence`: prompt and output ≥ 4, prompt ≤ 1024, sum ≤ 2048 tokens.
    Vllm,
}

/// Options for [`build`].
#[derive(Debug, Clone, PartialEq, Default)]
pub struct WorkloadOptions {
    /// vLLM's `--random-range-ratio` for Random datasets, in `[0, 1)`.
    pub range_ratio: f64,
    /// ShareGPT filtering rules.
    pub sharegpt_filter: ShareGptFilter,
    /// Seed for ShareGPT shuffling / the built-in distribution (Random datasets use the
    /// profile's `dataset_seed`).
    pub sharegpt_seed: u64,
    /// Generate prompt text for Random datasets (HTTP engines need it; simulators do not).
    pub with_text: bool,
    /// Length distribution used for ShareGPT when the file is absent.
    pub builtin_shape: LengthShape,
    /// A real tokenizer for Random datasets' prompts (`--tokenizer`): exact token counts,
    /// made as vLLM's random dataset makes them ([`super::tokenized`]).
    pub tokenizer: Option<std::sync::Arc<super::tokenized::PromptTokenizer>>,
}

/// A workload could not be built.
#[derive(Debug, thiserror::Error)]
pub enum WorkloadError {
    /// The tokenizer (`--tokenizer`) failed.
    #[error("{0}")]
    Tokenizer(String),
    /// `range_ratio` outside `[0, 1)`.
    #[error("range_ratio must be in [0, 1), got {0}")]
    BadRangeRatio(f64),
    /// The ShareGPT file could not be read.
    #[error("cannot read ShareGPT file {path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// The ShareGPT file is not the expected JSON.
    #[error("ShareGPT file {path} is not a JSON list of {{conversations: [{{value}}]}} (line {line}, column {column}): {message}")]
    Json {
        /// The file.
        path: PathBuf,
        /// Line of the error.
        line: usize,
        /// Column of the error.
        column: usize,
        /// serde_json's message.
        message: String,
    },
    /// No entry survived the filters.
    #[error("ShareGPT file {0} has no usable conversations")]
    Empty(PathBuf),
    /// A structured dataset could not be built.
    #[error(transparent)]
    Dataset(Box<super::datasets::DatasetError>),
    /// More requests, or a longer prompt text, than the workload will hold in memory
    /// ([`MAX_REQUESTS`], [`MAX_TEXT_TOKENS`]).
    #[error("workload too large: {0}")]
    TooLarge(String),
}

/// Most requests one workload holds (each is built before the run starts).
pub const MAX_REQUESTS: u64 = 10_000_000;

/// Longest prompt, in tokens, for which [`random`] writes a text (about 4 bytes a token);
/// a longer prompt is an error rather than an allocation sized by the input.
pub const MAX_TEXT_TOKENS: u64 = 2_000_000;

/// Builds the requests of `profile` (its `total_requests` of them).
///
/// ```
/// use servebench::driver::workload::{build, WorkloadOptions};
/// use servebench::Profile;
/// let w = build(&Profile::preset("throughput").unwrap(), &WorkloadOptions::default()).unwrap();
/// assert_eq!(w.len(), 1000);
/// assert!(w.iter().all(|r| r.prompt_tokens == 1024 && r.output_tokens == 128));
/// ```
pub fn build(profile: &Profile, opts: &WorkloadOptions) -> Result<Vec<WorkItem>, WorkloadError> {
    if profile.total_requests > MAX_REQUESTS {
        return Err(WorkloadError::TooLarge(format!(
            "{} requests (at most {MAX_REQUESTS})",
            profile.total_requests
        )));
    }
    let n = usize::try_from(profile.total_requests).unwrap_or(usize::MAX);
    match &profile.dataset {
        Dataset::Random {
            input_tokens,
            output_tokens,
            seed,
        } if opts.with_text && opts.tokenizer.is_some() => match &opts.tokenizer {
            Some(tok) => super::tokenized::random(
                tok,
                n,
                *input_tokens,
                *output_tokens,
                opts.range_ratio,
                *seed,
            ),
            None => Err(WorkloadError::Tokenizer("no tokenizer".into())),
        },
        Dataset::Random {
            input_tokens,
            output_tokens,
            seed,
        } => random(
            n,
            *input_tokens,
            *output_tokens,
            opts.range_ratio,
            *seed,
            opts.with_text,
        ),
        Dataset::ShareGpt { path } => match sharegpt_source(path.as_deref()) {
            Some(file) => sharegpt_file(&file, n, opts.sharegpt_seed, opts.sharegpt_filter),
            None => Ok(sharegpt_like(n, opts.sharegpt_seed, &opts.builtin_shape)),
        },
        // The requests only: `driver::run_profile` also applies the plan's schedule.
        Dataset::Structured(spec) => Ok(spec
            .build(Some(profile.total_requests))
            .map_err(|e| WorkloadError::Dataset(Box::new(e)))?
            .items),
    }
}

/// The ShareGPT file a ShareGPT profile reads: `path` when given, else
/// [`SHAREGPT_FILE`] in the working directory when it is there; `None`: neither, and the
/// built-in length distribution stands in ([`sharegpt_like`]). Every run says which
/// (`bench` on stderr and in its run file's `dataset_source` label).
pub fn sharegpt_source(path: Option<&std::path::Path>) -> Option<PathBuf> {
    let file = path.map_or_else(|| PathBuf::from(SHAREGPT_FILE), PathBuf::from);
    (path.is_some() || file.exists()).then_some(file)
}

/// vLLM's random-dataset lengths (see the module docs); `n` requests.
///
/// ```
/// use servebench::driver::workload::random;
/// let w = random(500, 100, 10, 0.5, 1, false).unwrap();
/// assert!(w.iter().all(|r| (50..=150).contains(&r.prompt_tokens) && (5..=15).contains(&r.output_tokens)));
/// assert!(random(1, 1, 1, 1.0, 1, false).is_err());
/// ```
pub fn random(
    n: usize,
    input_tokens: u64,
    output_tokens: u64,
    range_ratio: f64,
    seed: u64,
    with_text: bool,
) -> Result<Vec<WorkItem>, WorkloadError> {
    if !(0.0..1.0).contains(&range_ratio) {
        return Err(WorkloadError::BadRangeRatio(range_ratio));
    }
    let mut rng = Rng::new(seed);
    let bounds = |l: u64| -> (u64, u64) {
        let lf = l as f64;
        (
            (lf * (1.0 - range_ratio)).floor() as u64,
            (lf * (1.0 + range_ratio)).ceil() as u64,
        )
    };
    let (ilo, ihi) = bounds(input_tokens);
    if with_text && ihi > MAX_TEXT_TOKENS {
        return Err(WorkloadError::TooLarge(format!(
            "prompt text of up to {ihi} tokens for {input_tokens} input tokens (at most \
             {MAX_TEXT_TOKENS})"
        )));
    }
    let (olo, ohi) = bounds(output_tokens);
    let olo = olo.max(1);
    Ok((0..n)
        .map(|_| {
            let p = rng.range_inclusive(ilo, ihi);
            let o = rng.range_inclusive(olo, ohi.max(olo));
            WorkItem {
                prompt_tokens: p,
                output_tokens: o,
                prompt: with_text.then(|| synthetic_text(p, &mut rng)),
                shared_prefix_tokens: 0,
            }
        })
        .collect())
}

/// Words that are one token each in common BPE vocabularies.
const WORDS: [&str; 32] = [
    "the", "of", "and", "to", "in", "is", "that", "for", "it", "as", "was", "with", "be", "by",
    "on", "not", "he", "this", "are", "or", "his", "from", "at", "which", "but", "have", "an",
    "had", "they", "you", "were", "their",
];

/// A text of about `tokens` tokens: random common words, one token each.
pub fn synthetic_text(tokens: u64, rng: &mut Rng) -> String {
    // The capacity is a hint: bounded so that a huge count cannot overflow or abort here.
    let hint = usize::try_from(tokens.min(MAX_TEXT_TOKENS)).unwrap_or(0);
    let mut s = String::with_capacity(hint.saturating_mul(4));
    for i in 0..tokens {
        if i > 0 {
            s.push(' ');
        }
        s.push_str(WORDS[rng.index(WORDS.len())]);
    }
    s
}

/// Approximate token count of `text` without a tokenizer (BPE-like, tuned for Qwen-style
/// vocabularies):
///
/// * a run of ASCII letters (with its leading space) is `1 + (len − 1) / 7` tokens;
/// * every digit is one token (Qwen splits numbers into digits);
/// * every other ASCII symbol is one token; a run of whitespace other than a single space
///   is one token;
/// * every CJK character is one token; a run of other non-ASCII letters is one token per
///   three characters, rounded up.
///
/// ```
/// use servebench::driver::workload::approx_tokens;
/// assert_eq!(approx_tokens("Hello, world!"), 4);
/// assert_eq!(approx_tokens("internationalization"), 3);
/// assert_eq!(approx_tokens("2024"), 4);
/// ```
pub fn approx_tokens(text: &str) -> u64 {
    #[derive(PartialEq, Clone, Copy)]
    enum Run {
        None,
        Ascii,
        Other,
        Space,
    }
    let mut n = 0u64;
    let mut run = Run::None;
    let mut len = 0u64;
    let flush = |run: Run, len: u64| -> u64 {
        match run {
            Run::None => 0,
            Run::Ascii => 1 + (len - 1) / 7,
            Run::Other => len.div_ceil(3),
            Run::Space => u64::from(len > 1),
        }
    };
    for ch in text.chars() {
        let kind = if ch.is_ascii_alphabetic() {
            Run::Ascii
        } else if ch.is_whitespace() {
            Run::Space
        } else if !ch.is_ascii() && ch.is_alphabetic() && !is_cjk(ch) {
            Run::Other
        } else {
            // Digits, symbols, CJK: one token each.
            n += flush(run, len);
            n += 1;
            run = Run::None;
            len = 0;
            continue;
        };
        if kind == run {
            len += 1;
        } else {
            n += flush(run, len);
            run = kind;
            len = 1;
        }
    }
    n + flush(run, len)
}

fn is_cjk(ch: char) -> bool {
    matches!(ch as u32,
        0x3040..=0x30FF | 0x3400..=0x4DBF | 0x4E00..=0x9FFF | 0xAC00..=0xD7AF | 0xF900..=0xFAFF)
}

#[derive(Deserialize)]
struct Entry {
    #[serde(default)]
    conversations: Vec<Turn>,
}

#[derive(Deserialize)]
struct Turn {
    #[serde(default)]
    value: String,
}

/// Reads a ShareGPT JSON file and builds `n` requests with vLLM's sampling (see the
/// module docs): shuffle with `seed`, take the first valid entries, oversample when short.
pub fn sharegpt_file(
    path: &Path,
    n: usize,
    seed: u64,
    filter: ShareGptFilter,
) -> Result<Vec<WorkItem>, WorkloadError> {
    let file = std::fs::File::open(path).map_err(|source| WorkloadError::Io {
        path: path.to_path_buf(),
        source,
    })?;
    let entries: Vec<Entry> =
        serde_json::from_reader(std::io::BufReader::new(file)).map_err(|e| {
            WorkloadError::Json {
                path: path.to_path_buf(),
                line: e.line(),
                column: e.column(),
                message: e.to_string(),
            }
        })?;
    let mut pairs: Vec<(String, String)> = entries
        .into_iter()
        .filter_map(|e| {
            let mut it = e.conversations.into_iter();
            match (it.next(), it.next()) {
                (Some(a), Some(b)) => Some((a.value, b.value)),
                _ => None,
            }
        })
        .collect();
    let mut rng = Rng::new(seed);
    rng.shuffle(&mut pairs);
    let mut out = Vec::with_capacity(n);
    for (prompt, completion) in pairs {
        if out.len() >= n {
            break;
        }
        let p = approx_tokens(&prompt);
        let o = approx_tokens(&completion);
        if filter == ShareGptFilter::Vllm && (p < 4 || o < 4 || p > 1024 || p + o > 2048) {
            continue;
        }
        out.push(WorkItem {
            prompt_tokens: p,
            output_tokens: o.max(1),
            prompt: Some(prompt),
            shared_prefix_tokens: 0,
        });
    }
    if out.is_empty() && n > 0 {
        return Err(WorkloadError::Empty(path.to_path_buf()));
    }
    let have = out.len();
    while out.len() < n {
        let i = rng.index(have);
        out.push(out[i].clone());
    }
    Ok(out)
}

/// The shape of a ShareGPT-like length distribution: log-normal prompt and output lengths,
/// clamped, then scaled so that the sample means hit the targets.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LengthShape {
    /// Log-space sigma of prompt lengths.
    pub prompt_sigma: f64,
    /// Log-space sigma of output lengths.
    pub output_sigma: f64,
    /// Target mean prompt length, tokens (before any chat template).
    pub prompt_mean: f64,
    /// Target mean output length, tokens.
    pub output_mean: f64,
    /// Longest prompt, tokens.
    pub prompt_max: u64,
    /// Longest output, tokens.
    pub output_max: u64,
    /// Fraction of requests with a short answer, uniform in `[4, short_output_max]` tokens
    /// (the rest are log-normal, scaled so the overall mean is `output_mean`).
    pub short_fraction: f64,
    /// Longest short answer, tokens.
    pub short_output_max: u64,
}

/// The built-in ShareGPT approximation: means from the seed study's ShareGPT run (342,058
/// prompt tokens including a 10-token chat template and 281,412 output tokens over 1000
/// requests); the sigmas (a heavy prompt tail — unfiltered first turns include pasted
/// documents — and a moderate output spread) are fitted so that the simulated seed run
/// reproduces its duration and latencies. An approximation, not measured lengths.
pub const BUILTIN_SHAREGPT: LengthShape = LengthShape {
    prompt_sigma: 1.8,
    output_sigma: 0.6,
    prompt_mean: 332.058,
    output_mean: 281.412,
    prompt_max: 16_000,
    output_max: 3_000,
    short_fraction: 0.0,
    short_output_max: 40,
};

impl Default for LengthShape {
    fn default() -> Self {
        BUILTIN_SHAREGPT
    }
}

/// `n` ShareGPT-like requests from the built-in length distribution [`BUILTIN_SHAREGPT`]
/// (an approximation; see the module docs).
///
/// ```
/// use servebench::driver::workload::builtin_sharegpt;
/// let w = builtin_sharegpt(1000, 0);
/// let mean_out = w.iter().map(|r| r.output_tokens).sum::<u64>() as f64 / 1000.0;
/// assert!((mean_out - 281.4).abs() < 1.0, "{mean_out}");
/// assert_eq!(w, builtin_sharegpt(1000, 0));
/// ```
pub fn builtin_sharegpt(n: usize, seed: u64) -> Vec<WorkItem> {
    sharegpt_like(n, seed, &BUILTIN_SHAREGPT)
}

fn scaled(raw: Vec<f64>, mean: f64, max: u64) -> Vec<u64> {
    // Scale to the target mean, clamp, and repeat a few times so the clamping does not
    // pull the mean off.
    let mut xs = raw;
    for _ in 0..4 {
        let m = xs.iter().sum::<f64>() / xs.len().max(1) as f64;
        if m <= 0.0 {
            break;
        }
        for x in &mut xs {
            *x = (*x * mean / m).clamp(4.0, max as f64);
        }
    }
    xs.into_iter().map(|x| x.round() as u64).collect()
}

/// `n` requests with lengths of the given [`LengthShape`], deterministic for `seed`.
pub fn sharegpt_like(n: usize, seed: u64, shape: &LengthShape) -> Vec<WorkItem> {
    let mut rng = Rng::new(seed ^ 0x5348_4152_4547_5054);
    let mut p = Vec::with_capacity(n);
    let mut o = Vec::with_capacity(n);
    let mut short = Vec::new();
    for _ in 0..n {
        p.push(rng.lognormal(1.0, shape.prompt_sigma));
        o.push(rng.lognormal(1.0, shape.output_sigma));
        short.push(if rng.f64() < shape.short_fraction {
            Some(rng.range_inclusive(4, shape.short_output_max.max(4)))
        } else {
            None
        });
    }
    let p = scaled(p, shape.prompt_mean, shape.prompt_max);
    let n_short = short.iter().filter(|s| s.is_some()).count();
    let short_sum: u64 = short.iter().flatten().sum();
    let long_n = n - n_short;
    let long_mean = if long_n > 0 {
        ((shape.output_mean * n as f64 - short_sum as f64) / long_n as f64).max(4.0)
    } else {
        shape.output_mean
    };
    let long: Vec<f64> = o
        .iter()
        .zip(&short)
        .filter(|(_, s)| s.is_none())
        .map(|(x, _)| *x)
        .collect();
    let mut long = scaled(long, long_mean, shape.output_max).into_iter();
    let o: Vec<u64> = short
        .iter()
        .map(|s| s.unwrap_or_else(|| long.next().unwrap_or(4)))
        .collect();
    p.into_iter()
        .zip(o)
        .map(|(p, o)| WorkItem {
            prompt_tokens: p,
            output_tokens: o,
            prompt: None,
            shared_prefix_tokens: 0,
        })
        .collect()
}
