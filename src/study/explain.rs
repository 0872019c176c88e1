//! The study file's field reference, as `servebench study --explain` prints it.

/// `servebench study --explain`: every field of a study file.
pub const EXPLAIN: &str = r#"servebench study file (TOML), format "servebench-study" version 1

Top level
  format = "servebench-study"      required
  version = 1                      required
  title = "..."                    required: the document's title
  goal = "throughput"|"latency"|"capacity"  default throughput; picks the default target
                                   and wording; capacity: every run is a capacity search
                                   under `slo`, the target is the capacity (req/s)
  slo = "ttft:p99<=500ms tpot:p99<=50ms goodput>=0.99"
                                   goal capacity: the SLO, `bench --slo`'s syntax
  model = "Org/Model"              required: the model (baseline of every engine)
  hardware = "NVIDIA H200"         required: hardware label for the document
  target = "total_token_throughput" metric the decision rule compares; default by goal
                                   (throughput: total_token_throughput, latency: mean_e2el_ms);
                                   any key `servebench compare` prints
  repetitions = 1                  runs per (configuration, profile), >= 1, or "auto": each
                                   ladder step runs interleaved repetitions with its reference
                                   until the decision is reached at the stated error rates
                                   (group-sequential, Pocock alpha spending) or the budget is
                                   spent
  max_repetitions = 10             "auto": the budget, repetitions per side at most
  min_repetitions = 2              "auto": repetitions at the first look, and of the engines'
                                   baselines and the final comparison
  min_effect = 1.0                 a step is kept only when better than the best so far by
                                   more than this percentage of the target, with 95% confidence
  order = "sequential"|"interleaved"  a configuration's runs: a1 a2 b1 b2 | a1 b1 a2 b2
  warmup_requests = 0              requests sent and discarded before a server's first run
  seed = 0                         workload seed (ShareGPT sampling)
  vary_seed = false                repetition r uses seed + r - 1
  notes = ["..."]                  sentences for the note on what was not tested

[noise]                            the simulator engine's run-to-run noise (vLLM-measured spread)
  mode = "auto"|"on"|"off"         auto: on whenever a configuration runs more than once;
                                   off: a deterministic simulation (every repetition identical)
  run_sigma = 0.005                log-sd of the per-run speed factor
  step_sigma = 0.03                log-sd of each engine step's time factor
  arrival_jitter_ms = 0.5          mean extra client -> server delay per request
  seed = 0                         seed of the noise

[profiles.NAME]                    custom profiles (presets need no entry: sharegpt, throughput,
                                   long-context, generation-heavy, latency)
  dataset_name = "ShareGPT"|"Random"
  dataset_input_tokens, dataset_output_tokens, dataset_seed   (Random)
  request_rate = 1000              requests/s
  total_requests = 1000
  max_concurrency = 512            optional client-side cap

[capacity]                         goal capacity: the search of every run
  search = "rate"|"concurrency"    default rate
  max = 64                         required: the highest load probed
  min = 2                          default max/32 (rate), 1 (concurrency)
  resolution = 1                   default (max-min)/32 (rate), 1 (concurrency)
  repeats = 3                      most probes at one load near the SLO's limit

[[engines]]                        one or more; each runs its baseline on the ladder profiles,
                                   the best enters the ladder
  name = "vLLM"                    required: name in the document
  kind = "simulator"|"command"     required
  version = "v0.17.1"              engine version for the document
  gpus = 1                         GPUs the server uses (cost figures)
  gpu_price = 3.5                  USD per GPU-hour: $/1M tokens and tok/s per GPU in the
                                   document's conclusion
  model = "..."                    default: the study's model
  flags = ["--max-model-len=32768"]  baseline flags, the engine's own spelling, one per argument
  command = ["vllm","serve","{model}","--port","{port}","{flags}"]
                                   command: argument vector, no shell. {model} {port} {host}
                                   {api_key} are filled inside arguments; an argument that is
                                   exactly "{flags}" becomes the flags, one argument each
  host = "127.0.0.1"               command: where the server listens
  port = 0                         command: 0 picks a free port per launch
  health_path = "/health"          command: polled until 200, then /v1/models must answer
  start_timeout_s = 600            command: seconds to become healthy, else a recorded failure
  stop_signal = "SIGTERM"          command: SIGTERM | SIGINT | SIGQUIT | SIGHUP | SIGKILL
  stop_timeout_s = 30              command: seconds before SIGKILL of the process group
  env = { NAME = "value" }         command: added to the server's environment
  api_key_env = "OPENAI_API_KEY"   variable holding the API key: sent as bearer token, fills
                                   {api_key}; never written to journal, logs or document; the
                                   variable must be set (an unset one is an error), and a key
                                   written in the study file itself is refused
  expected_start_s = 120           command: launch time the plan assumes
  request_timeout_s = 3600         command: limit for one request (a hung server fails it)

[ladder]
  profiles = ["sharegpt"]          required: profiles the engine selection and the steps run;
                                   the first is the target profile
  rule = "all-profiles"|"target"|"weighted"
                                   all-profiles (default): a step is kept only when better on
                                   the target profile and shown not worse than the tolerance
                                   on every other ladder profile; target: the first profile
                                   alone decides (the source study's method); weighted: the
                                   weighted mean of the changes over the profiles decides
  tolerance = 2.0                  all-profiles: the most a kept step may lose on another
                                   profile, percent of the reference
  weights = { sharegpt = 3 }       weighted: each profile's weight (default 1)
  [[ladder.steps]]                 in order
    name = "Quantization"          required: name in the document
    on = "best"                    start from: best (default) | baseline | an earlier step's name
    model = "Org/Model-FP8"        serve another model
    add = ["--enable-prefix-caching"]  flags added (same key before '=' is replaced)
    remove = ["--kv-cache-dtype"]  flag keys removed
    notes = ["..."]                what is known about the step from elsewhere (a source
                                   study's measurement); the document says it beside the step

  A step is kept when it succeeds on every request and the decision rule calls it better
  than the best configuration so far on the target metric by more than min_effect, with 95%
  confidence (from repetitions, from within-run intervals of single runs, or from a
  simulation with the simulator's stated model error), and — rule all-profiles — the
  interval of its change on every other ladder profile lies above -tolerance; otherwise it
  is skipped and the document says why ("better but below the minimum effect", "within
  noise", "within model error", "worse", "no interval", "worse beyond the tolerance on
  generation-heavy").

[endpoint]                         the API every run calls (default: completions); not on
                                   simulator engines (run the example server as a command)
  name = "embeddings"              completions|chat|responses|messages|embeddings|rerank|
                                   score|pooling|classify
  batch_size = 8                   texts per embeddings/pooling/classify request
  documents = 16                   documents per rerank/score query
  document_tokens = 256            tokens of each document (default: the query's length)

[quality]                          an eval set every configuration answers after its runs; a
                                   step is kept only when its accuracy is shown non-inferior
  eval = "synthetic:500"           synthetic:N or a JSON Lines file (servebench, GSM8K, MMLU)
  margin = 1.0                     accuracy points a kept step may lose (95 %, one-sided)
  sim_accuracy = { baseline = 0.8, "Quantization" = -2.0 }
                                   simulator engines: staged accuracy and per-step change

[final]
  profiles = ["sharegpt", "throughput"]  required: baseline and recommended both run these
  add = ["--async-scheduling"]     flags added to the best step without a step of their own

The simulator engine understands: a model name ending in -FP8 or --quantization=fp8,
--kv-cache-dtype=fp8|auto, --performance-mode=throughput, --enable-prefix-caching,
--no-enable-prefix-caching, --max-num-batched-tokens=N, --max-num-seqs=N, and (no modelled
effect) --reasoning-parser, --max-model-len=32768, --async-scheduling. A configuration with any
other flag is recorded as not run on the simulator, naming the flag.

Sharded studies (`study run FILE --shard K/N --start-at barrier:DIR`, then `study merge`):
command engines only; shard 1 launches each server and the other shards load it at
http://{host}:{port}, so on several hosts `host` must be an address of shard 1's host that
the others reach.
"#;
