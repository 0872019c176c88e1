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

use super::datasets::{DatasetError, Plan, TurnPlan};
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
    let mut items = Vec::new();
    let mut plan_turns = Vec::new();
    for c in 0..conversations {
        let mut history = String::new();
        let mut history_tokens = 0;
        for t in 1..=turns {
            let user = synthetic_text(input_tokens, &mut rng);
            let prompt = join(&history, &user);
            items.push(WorkItem {
                prompt_tokens: history_tokens + input_tokens,
                output_tokens,
                prompt: Some(prompt.clone()),
                shared_prefix_tokens: history_tokens,
            });
            plan_turns.push(TurnPlan {
                conversation: c,
                turn: t,
                think_time,
            });
            let answer = synthetic_text(output_tokens, &mut rng);
            history = join(&prompt, &answer);
            history_tokens += input_tokens + output_tokens;
        }
    }
    Ok(Plan {
        items,
        send_at: None,
        turns: Some(plan_turns),
    })
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
    let (mut items, mut plan_turns) = (Vec::new(), Vec::new());
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
            items.push(WorkItem {
                prompt_tokens: prompt_tokens.max(1),
                output_tokens: out,
                prompt: Some(prompt.clone()),
                shared_prefix_tokens: approx_tokens(&history),
            });
            plan_turns.push(TurnPlan {
                conversation: c as u64,
                turn: t as u32 + 1,
                think_time,
            });
            history = join(&prompt, &synthetic_text(out, &mut rng));
        }
    }
    if items.is_empty() {
        return Err(invalid(
            0,
            "no conversation has a turn with messages".into(),
        ));
    }
    Ok(Plan {
        items,
        send_at: None,
        turns: Some(plan_turns),
    })
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
    let mut items = Vec::new();
    let mut plan_turns = Vec::new();
    for (c, pairs) in usable.into_iter().take(conversations as usize).enumerate() {
        let mut history = String::new();
        for (t, (user, answer)) in pairs.into_iter().take(turns as usize).enumerate() {
            let prompt = join(&history, &user);
            items.push(WorkItem {
                prompt_tokens: approx_tokens(&prompt),
                output_tokens: approx_tokens(&answer).max(1),
                prompt: Some(prompt.clone()),
                shared_prefix_tokens: approx_tokens(&history),
            });
            plan_turns.push(TurnPlan {
                conversation: c as u64,
                turn: t as u32 + 1,
                think_time,
            });
            history = join(&prompt, &answer);
        }
    }
    Ok(Plan {
        items,
        send_at: None,
        turns: Some(plan_turns),
    })
}
