//! Multi-turn conversations: generated ones (`C × T` turns of fixed lengths) and those of a
//! multi-turn ShareGPT file. Turn `k`'s prompt is the whole history — every earlier user
//! message and answer, verbatim, in order — plus the next user message; the driver sends it
//! after turn `k − 1` ended (see [`TurnPlan`]).
//!
//! The history holds the answers the dataset expects (generated: `output_tokens` words; a
//! file: the assistant turns written there), not the text the server streamed back: the
//! prompts are fixed before the run, so a run is reproducible and a simulator without text
//! output sees the same prompts as a real server. With `ignore_eos` an answer has exactly the
//! expected length, so the token counts match what a client appending the real answer sends.
//!
//! ```
//! use std::time::Duration;
//! use servebench::driver::multi_turn;
//! let plan = multi_turn(2, 3, 10, 5, Duration::ZERO, 7).unwrap();
//! assert_eq!(plan.items.len(), 6);
//! let t = plan.turns.as_ref().unwrap();
//! assert_eq!((t[1].conversation, t[1].turn), (0, 2));
//! // Turn 2 starts with turn 1's prompt: 10 + 5 + 10 tokens.
//! assert!(plan.items[1].prompt.as_ref().unwrap().starts_with(plan.items[0].prompt.as_ref().unwrap()));
//! assert_eq!(plan.items[1].prompt_tokens, 25);
//! ```

use std::path::Path;
use std::time::Duration;

use serde::Deserialize;

use super::datasets::{DatasetError, Plan, SessionSpec, ThinkTime, TurnPlan};
use super::workload::{approx_tokens, synthetic_text, WorkItem, MAX_REQUESTS, MAX_TEXT_TOKENS};
use crate::rng::Rng;

/// `conversations × turns` generated turns (ids in conversation order: conversation 0's
/// turns first). See the module docs.
pub fn multi_turn(
    conversations: u64,
    turns: u32,
    input_tokens: u64,
    output_tokens: u64,
    think_time: Duration,
    seed: u64,
) -> Result<Plan, DatasetError> {
    if conversations == 0 || turns == 0 || input_tokens == 0 || output_tokens == 0 {
        return Err(DatasetError::BadParameter(format!(
            "a multi-turn dataset needs at least 1 conversation, turn, input token and output \
             token (got {conversations} conversations of {turns} turns, {input_tokens} input \
             and {output_tokens} output tokens)"
        )));
    }
    let n = conversations.saturating_mul(u64::from(turns));
    let longest = (input_tokens + output_tokens).saturating_mul(u64::from(turns));
    if n > MAX_REQUESTS || longest > MAX_TEXT_TOKENS {
        return Err(DatasetError::TooLarge(format!(
            "{n} turns, the last of {longest} tokens"
        )));
    }
    let mut rng = Rng::new(seed ^ 0x4d55_4c54_4954_5552);
    let mut b = Builder::default();
    for c in 0..conversations {
        let mut history = String::new();
        let mut history_tokens = 0;
        for t in 1..=turns {
            let user = synthetic_text(input_tokens, &mut rng);
            let prompt = join(&history, &user);
            let place = TurnPlan::main(c, t, think_time);
            b.push(
                &prompt,
                history_tokens + input_tokens,
                output_tokens,
                history_tokens,
                place,
            );
            let answer = synthetic_text(output_tokens, &mut rng);
            history = join(&prompt, &answer);
            history_tokens += input_tokens + output_tokens;
        }
    }
    Ok(b.plan())
}

/// The generated agent sessions of `spec` (its docs state the distributions), in the
/// order [`TurnPlan`] asks for: each session's main turn 1, its sub-agents' turns, then the
/// main agent's later turns.
///
/// ```
/// use servebench::driver::{agent_sessions, SessionSpec, ThinkTime};
/// let spec = SessionSpec {
///     sessions: 1, turns: 3, input_tokens: 100, output_tokens: 10, tool_result_tokens: 50,
///     tool_result_sigma: 0.0, think_time_s: 2.0, think_time: ThinkTime::Fixed, fanout: 2,
///     subagent_turns: 2, seed: 1,
/// };
/// let plan = agent_sessions(&spec).unwrap();
/// let tokens: Vec<u64> = plan.items.iter().map(|w| w.prompt_tokens).collect();
/// // Main 1: the task. Each sub-agent: the parent's 110 tokens + its task, then + answer
/// // + tool result. Main 2: 110 + both sub-agents' answers; main 3: + answer + tool result.
/// assert_eq!(tokens, [100, 210, 270, 210, 270, 130, 190]);
/// let t = plan.turns.unwrap();
/// assert_eq!((t[3].agent, t[3].turn, t[3].forked_at), (2, 1, 1));
/// ```
pub fn agent_sessions(spec: &SessionSpec) -> Result<Plan, DatasetError> {
    check_sessions(spec)?;
    let out = spec.output_tokens;
    let mut text = Rng::new(spec.seed ^ 0x5345_5353_494f_4e53);
    let mut draws = Rng::new(spec.seed ^ 0x544f_4f4c_5449_4d45);
    let tool_result = |rng: &mut Rng| -> u64 {
        let m = spec.tool_result_tokens;
        if spec.tool_result_sigma > 0.0 {
            // Saturating float-to-int of a value clamped to [1, 16 m].
            (rng.lognormal(m as f64, spec.tool_result_sigma).round() as u64)
                .clamp(1, m.saturating_mul(16))
        } else {
            m
        }
    };
    let think = |rng: &mut Rng| {
        let s = match spec.think_time {
            ThinkTime::Fixed => spec.think_time_s,
            ThinkTime::Exponential => rng.exponential(spec.think_time_s),
        };
        Duration::try_from_secs_f64(s).unwrap_or(Duration::ZERO)
    };
    let mut b = Builder::default();
    for c in 0..spec.sessions {
        let task = synthetic_text(spec.input_tokens, &mut text);
        b.push(
            &task,
            spec.input_tokens,
            out,
            0,
            TurnPlan::main(c, 1, Duration::ZERO),
        );
        let mut main = (
            join(&task, &synthetic_text(out, &mut text)),
            spec.input_tokens + out,
        );
        let mut results = Vec::new();
        for a in 1..=spec.fanout {
            let (mut history, mut tokens) = main.clone();
            let mut last = String::new();
            for t in 1..=spec.subagent_turns {
                let new = if t == 1 {
                    spec.input_tokens
                } else {
                    tool_result(&mut draws)
                };
                let prompt = join(&history, &synthetic_text(new, &mut text));
                let place = TurnPlan::sub_agent(c, a, t, 1, think(&mut draws));
                b.push(&prompt, tokens + new, out, tokens, place);
                last = synthetic_text(out, &mut text);
                history = join(&prompt, &last);
                tokens += new + out;
            }
            results.push(last);
        }
        for t in 2..=spec.turns {
            let (new_text, new) = if t == 2 && spec.fanout > 0 {
                (results.join(" "), u64::from(spec.fanout) * out)
            } else {
                let n = tool_result(&mut draws);
                (synthetic_text(n, &mut text), n)
            };
            let prompt = join(&main.0, &new_text);
            b.push(
                &prompt,
                main.1 + new,
                out,
                main.1,
                TurnPlan::main(c, t, think(&mut draws)),
            );
            main = (
                join(&prompt, &synthetic_text(out, &mut text)),
                main.1 + new + out,
            );
        }
    }
    Ok(b.plan())
}

/// The parameters of [`agent_sessions`] in range, and its plan within what a workload
/// holds.
fn check_sessions(spec: &SessionSpec) -> Result<(), DatasetError> {
    let bad = |what: String| Err(DatasetError::BadParameter(what));
    let zero = [
        ("sessions", spec.sessions),
        ("turns", u64::from(spec.turns)),
        ("input tokens", spec.input_tokens),
        ("output tokens", spec.output_tokens),
        ("tool result tokens", spec.tool_result_tokens),
        ("sub-agent turns", u64::from(spec.subagent_turns)),
    ];
    if let Some((name, _)) = zero.iter().find(|(_, v)| *v == 0) {
        return bad(format!("{name} must be at least 1"));
    }
    if !(spec.tool_result_sigma.is_finite() && spec.tool_result_sigma >= 0.0) {
        return bad(format!(
            "tool result sigma {} is not a non-negative number",
            spec.tool_result_sigma
        ));
    }
    if !(spec.think_time_s.is_finite() && spec.think_time_s >= 0.0) {
        return bad(format!(
            "think time {} s is not a non-negative number",
            spec.think_time_s
        ));
    }
    if spec.fanout > 0 && spec.turns < 2 {
        return bad(format!(
            "a fan-out of {} needs at least 2 turns (turn 2 gathers the sub-agents' results)",
            spec.fanout
        ));
    }
    let per = u64::from(spec.turns)
        .saturating_add(u64::from(spec.fanout).saturating_mul(u64::from(spec.subagent_turns)));
    let n = spec.sessions.saturating_mul(per);
    // The longest prompt, with every tool result at its clamp.
    let step = spec
        .output_tokens
        .saturating_add(spec.tool_result_tokens.saturating_mul(16));
    let longest = spec
        .input_tokens
        .saturating_add(step.saturating_mul(u64::from(spec.turns.max(spec.subagent_turns))))
        .saturating_add(u64::from(spec.fanout).saturating_mul(spec.output_tokens));
    if n > MAX_REQUESTS || longest > MAX_TEXT_TOKENS {
        return Err(DatasetError::TooLarge(format!(
            "{n} requests, prompts up to {longest} tokens"
        )));
    }
    Ok(())
}

/// A plan under construction: each turn's request and its place.
#[derive(Default)]
struct Builder {
    items: Vec<WorkItem>,
    turns: Vec<TurnPlan>,
}

impl Builder {
    /// A turn sending `prompt` (`prompt_tokens` long, its first `shared` tokens the
    /// history) and asking for `output_tokens`.
    fn push(
        &mut self,
        prompt: &str,
        prompt_tokens: u64,
        output_tokens: u64,
        shared: u64,
        place: TurnPlan,
    ) {
        self.items.push(WorkItem {
            prompt_tokens,
            output_tokens,
            prompt: Some(prompt.to_string()),
            shared_prefix_tokens: shared,
        });
        self.turns.push(place);
    }

    fn plan(self) -> Plan {
        Plan {
            items: self.items,
            send_at: None,
            turns: Some(self.turns),
        }
    }
}

/// The first `conversations` of SGLang's agentic trace at `path` (in the file's order),
/// each cut at `turns` turns, every answer `output_tokens` long: turn `k` sends the history
/// and its new user and tool messages (the format: `{"conversations": [[{"messages": […]}, …], …]}`).
///
/// ```
/// use servebench::driver::workload::approx_tokens;
/// # let dir = std::env::temp_dir().join("servebench-agentic-doc");
/// # std::fs::create_dir_all(&dir).unwrap();
/// let path = dir.join("trace.json");
/// std::fs::write(&path, r#"{"conversations": [[
///     {"messages": [{"role": "system", "content": "be terse"}, {"role": "user", "content": "fix the bug"}]},
///     {"messages": [{"role": "tool", "content": "test output: 3 failed"}]}]]}"#).unwrap();
/// let plan = servebench::driver::agentic_trace(&path, 10, 10, 5, std::time::Duration::ZERO, 1).unwrap();
/// assert_eq!(plan.items.len(), 2);
/// // Turn 2: turn 1's messages, a 5-token answer, the tool's result.
/// let turn1 = approx_tokens("be terse fix the bug");
/// assert_eq!(plan.items[1].prompt_tokens, turn1 + 5 + approx_tokens("test output: 3 failed"));
/// assert!(plan.items[1].prompt.as_ref().unwrap().starts_with("be terse fix the bug"));
/// ```
pub fn agentic_trace(
    path: &Path,
    conversations: u64,
    turns: u32,
    output_tokens: u64,
    think_time: Duration,
    seed: u64,
) -> Result<Plan, DatasetError> {
    let invalid = |line: usize, message: String| DatasetError::Invalid {
        path: path.to_path_buf(),
        line,
        message,
    };
    let convs = super::agentic::read_trace(path).map_err(|e| match e {
        super::agentic::TraceError::Io(source) => DatasetError::Io {
            path: path.to_path_buf(),
            source,
        },
        super::agentic::TraceError::Invalid(line, message) => invalid(line, message),
    })?;
    let mut rng = Rng::new(seed ^ 0x4147_454e_5449_4321);
    let mut b = Builder::default();
    let out = output_tokens.max(1);
    for (c, conv) in convs
        .iter()
        .take(usize::try_from(conversations).unwrap_or(usize::MAX))
        .enumerate()
    {
        let mut history = String::new();
        for (t, new) in conv.iter().take(turns as usize).enumerate() {
            let prompt = join(&history, new);
            let prompt_tokens = approx_tokens(&prompt);
            if prompt_tokens > MAX_TEXT_TOKENS {
                return Err(DatasetError::TooLarge(format!(
                    "conversation {c} turn {}: {prompt_tokens} tokens",
                    t + 1
                )));
            }
            let place = TurnPlan::main(c as u64, t as u32 + 1, think_time);
            let shared = approx_tokens(&history);
            b.push(&prompt, prompt_tokens.max(1), out, shared, place);
            history = join(&prompt, &synthetic_text(out, &mut rng));
        }
    }
    if b.items.is_empty() {
        return Err(invalid(
            0,
            "no conversation has a turn with messages".into(),
        ));
    }
    Ok(b.plan())
}

fn join(a: &str, b: &str) -> String {
    if a.is_empty() {
        b.to_string()
    } else {
        format!("{a} {b}")
    }
}

#[derive(Deserialize)]
struct Entry {
    #[serde(default)]
    conversations: Vec<Message>,
}

#[derive(Deserialize)]
struct Message {
    #[serde(default)]
    from: String,
    #[serde(default)]
    value: String,
}

/// Conversations from a ShareGPT JSON file: entries whose messages alternate user
/// (`human`/`user`) and assistant (`gpt`/`assistant`/`chatgpt`) turns, starting with the
/// user, with at least one full exchange; shuffled with `seed`, the first `conversations`
/// taken, each cut at `turns` exchanges. Turn `k` sends the history plus user message `k`
/// and asks for the written answer's length (at least 1 token).
pub fn sharegpt_multi_turn(
    path: &Path,
    conversations: u64,
    turns: u32,
    think_time: Duration,
    seed: u64,
) -> Result<Plan, DatasetError> {
    let file = std::fs::File::open(path).map_err(|source| DatasetError::Io {
        path: path.to_path_buf(),
        source,
    })?;
    let entries: Vec<Entry> =
        serde_json::from_reader(std::io::BufReader::new(file)).map_err(|e| {
            DatasetError::Invalid {
                path: path.to_path_buf(),
                line: e.line(),
                message: format!(
                    "not a ShareGPT list of {{conversations: [{{from, value}}]}} (column {}): {e}",
                    e.column()
                ),
            }
        })?;
    let is_user = |m: &Message| matches!(m.from.as_str(), "human" | "user");
    let is_bot = |m: &Message| matches!(m.from.as_str(), "gpt" | "assistant" | "chatgpt");
    let mut usable: Vec<Vec<(String, String)>> = entries
        .into_iter()
        .filter_map(|e| {
            let mut pairs = Vec::new();
            let mut it = e.conversations.into_iter();
            while let (Some(u), Some(a)) = (it.next(), it.next()) {
                if !(is_user(&u) && is_bot(&a)) || u.value.trim().is_empty() {
                    break;
                }
                pairs.push((u.value, a.value));
            }
            (!pairs.is_empty()).then_some(pairs)
        })
        .collect();
    if usable.is_empty() {
        return Err(DatasetError::Invalid {
            path: path.to_path_buf(),
            line: 0,
            message: "no conversation with a user turn followed by an assistant turn".into(),
        });
    }
    let mut rng = Rng::new(seed);
    rng.shuffle(&mut usable);
    let mut b = Builder::default();
    for (c, pairs) in usable.into_iter().take(conversations as usize).enumerate() {
        let mut history = String::new();
        for (t, (user, answer)) in pairs.into_iter().take(turns as usize).enumerate() {
            let prompt = join(&history, &user);
            let place = TurnPlan::main(c as u64, t as u32 + 1, think_time);
            let (tokens, shared) = (approx_tokens(&prompt), approx_tokens(&history));
            b.push(
                &prompt,
                tokens,
                approx_tokens(&answer).max(1),
                shared,
                place,
            );
            history = join(&prompt, &answer);
        }
    }
    Ok(b.plan())
}
