//! The user guide: how to use servebench, chapter by chapter. Each chapter is a Markdown file
//! under `docs/guide/`, included here so that `cargo doc` builds it (and checks its links)
//! and its Rust examples run as doc-tests; the same files read well on the repository's web
//! page.
//!
//! | chapter | what it teaches |
//! |---|---|
//! | [`conventions`] | vLLM's and guidellm's metric definitions; report blocks that render and parse back byte for byte |
//! | [`cli`] | every verb of the `servebench` command line, and the one loader every verb reads through |
//! | [`exit_codes`] | exit codes, failed measurements and secrets |
//! | [`real_server`] | benchmarking an OpenAI-compatible server: `bench`, run files, interrupted runs |
//! | [`studies`] | tuning studies: the study file, the ladder, the journal, the document |
//! | [`observe`] | server metrics, time slices, explained deltas, charts and the HTML report |
//! | [`workloads`] | trace replay, shared prefixes, conversations, rate sweeps, datasets |
//! | [`sharding`] | one run from many client machines, and merging the shards |
//! | [`simulator`] | the embedded simulated H200: models, GPUs, vLLM flags, fitted constants, serving it |
//! | [`accuracy`] | how far a client's timings are from the server's truth |
//! | [`peer_files`] | every peer tool's file: joins, own definitions, concurrency |
//! | [`capacity`] | the highest load a server sustains under an SLO |
//! | [`noise`] | within-run intervals, repetitions and noise-aware verdicts, with their calibration |
//! | [`compare`] | comparing runs: several per side, multiplicity control, minimum effects, tail intervals |
//! | [`decisions`] | study decisions: simulated noise, adaptive repetitions, the minimum effect, honest documents |
//! | [`production`] | reasoning-aware latency, energy per token, speculative decoding, LoRA traffic |
//! | [`simulator_fidelity`] | the simulator's operator tables and its error budget on development points |
//! | [`architecture`] | the crate's parts and the rules between them (checked by a test) |
//! | [`development`] | fuzzing and the test suite |

#[doc = include_str!("../docs/guide/conventions.md")]
pub mod conventions {}
#[doc = include_str!("../docs/guide/cli.md")]
pub mod cli {}
#[doc = include_str!("../docs/guide/exit-codes.md")]
pub mod exit_codes {}
#[doc = include_str!("../docs/guide/real-server.md")]
pub mod real_server {}
#[doc = include_str!("../docs/guide/studies.md")]
pub mod studies {}
#[doc = include_str!("../docs/guide/observe.md")]
pub mod observe {}
#[doc = include_str!("../docs/guide/workloads.md")]
pub mod workloads {}
#[doc = include_str!("../docs/guide/endpoints.md")]
pub mod endpoints {}
#[doc = include_str!("../docs/guide/agentic.md")]
pub mod agentic {}
#[doc = include_str!("../docs/guide/sharding.md")]
pub mod sharding {}
#[doc = include_str!("../docs/guide/simulator.md")]
pub mod simulator {}
#[doc = include_str!("../docs/guide/accuracy.md")]
pub mod accuracy {}
#[doc = include_str!("../docs/guide/peer-files.md")]
pub mod peer_files {}
#[doc = include_str!("../docs/guide/capacity.md")]
pub mod capacity {}
#[doc = include_str!("../docs/guide/noise.md")]
pub mod noise {}
#[doc = include_str!("../docs/guide/architecture.md")]
pub mod architecture {}
#[doc = include_str!("../docs/guide/development.md")]
pub mod development {}
#[doc = include_str!("../docs/guide/compare.md")]
pub mod compare {}
#[doc = include_str!("../docs/guide/decisions.md")]
pub mod decisions {}
#[doc = include_str!("../docs/guide/production.md")]
pub mod production {}
#[doc = include_str!("../docs/guide/simulator-fidelity.md")]
pub mod simulator_fidelity {}
