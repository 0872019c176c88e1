//! Evaluation items and the files they come in. One item per JSON Lines line, in one of
//! three shapes, told apart by their keys:
//!
//! - servebench's: `{"id": "q1", "prompt": "...", "answer": "42", "scorer": "numeric"}`
//!   (`scorer`: `exact`, `numeric`, `choice` or `regex:PATTERN`, default `exact`);
//! - GSM8K's: `{"question": "...", "answer": "... #### 72"}` — the number after `####` is
//!   the answer, scored numerically;
//! - MMLU's: `{"question": "...", "choices": ["...", ...], "answer": 2}` (or `"C"`) — the
//!   choices become lettered options and the letter is scored.

use serde_json::Value;

use super::score::{Scorer, LETTERS};

/// One item: what is asked, what counts as right, and how to tell.
#[derive(Debug, Clone, PartialEq)]
pub struct EvalItem {
    /// Its id (the file's `id`, else `line N`; `synthetic-N`).
    pub id: String,
    /// The prompt sent as the user's message.
    pub prompt: String,
    /// The reference answer.
    pub answer: String,
    /// How a response is scored against it.
    pub scorer: Scorer,
}

/// A bad eval file, naming the file, the line and the JSON path.
#[derive(Debug, thiserror::Error, PartialEq)]
pub enum EvalError {
    /// Reading failed.
    #[error("{path}: {message}")]
    Io {
        /// The file.
        path: String,
        /// The I/O error.
        message: String,
    },
    /// A line that is not an item.
    #[error("{path}:{line}: {at}: {message}")]
    Item {
        /// The file.
        path: String,
        /// Its 1-based line.
        line: usize,
        /// The JSON path of the bad value (`$`, `$.answer`, `$.choices[1]`).
        at: String,
        /// What is wrong.
        message: String,
    },
    /// A file without any item.
    #[error("{0}: no evaluation items")]
    Empty(String),
    /// A `synthetic:N` spec with a bad N.
    #[error("`{0}`: expected synthetic:N with N a whole number of items from 1 to 1000000")]
    Synthetic(String),
}

/// Items from the text of a JSON Lines eval file (`path` names it in errors).
///
/// ```
/// use servebench::quality::eval::parse;
/// let text = concat!(
///     r#"{"question": "Tom has 3 apples and buys 4. How many?", "answer": "3 + 4 = 7\n#### 7"}"#, "\n",
///     r#"{"question": "2+2?", "choices": ["3", "4", "5"], "answer": 1}"#, "\n",
/// );
/// let items = parse(text, "e.jsonl").unwrap();
/// assert_eq!((items[0].answer.as_str(), items[1].answer.as_str()), ("7", "B"));
/// assert!(items[1].prompt.contains("B. 4"));
/// let err = parse(r#"{"question": "q", "choices": ["a", "b"], "answer": 3}"#, "e.jsonl").unwrap_err();
/// assert_eq!(err.to_string(), "e.jsonl:1: $.answer: choice 3 is out of range (2 choices)");
/// ```
pub fn parse(text: &str, path: &str) -> Result<Vec<EvalItem>, EvalError> {
    let mut items = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let item = serde_json::from_str::<Value>(line)
            .map_err(|e| Bad("$".into(), e.to_string()))
            .and_then(|v| {
                let id = v
                    .get("id")
                    .map(|x| x.as_str().map_or_else(|| x.to_string(), str::to_string))
                    .unwrap_or_else(|| format!("line {}", i + 1));
                if v.get("prompt").is_some() {
                    own_item(&v, id)
                } else if v.get("choices").is_some() {
                    mmlu_item(&v, id)
                } else {
                    gsm8k_item(&v, id)
                }
            })
            .map_err(|Bad(at, message)| EvalError::Item {
                path: path.to_string(),
                line: i + 1,
                at,
                message,
            })?;
        items.push(item);
    }
    if items.is_empty() {
        return Err(EvalError::Empty(path.to_string()));
    }
    Ok(items)
}

/// What is wrong with a line: the JSON path and the message.
struct Bad(String, String);

fn bad(at: &str, message: impl Into<String>) -> Bad {
    Bad(at.to_string(), message.into())
}

/// `v[key]` as text (a number's digits too).
fn text_at(v: &Value, key: &str) -> Result<String, Bad> {
    match v.get(key) {
        Some(Value::String(s)) => Ok(s.clone()),
        Some(Value::Number(n)) => Ok(n.to_string()),
        Some(_) => Err(bad(&format!("$.{key}"), "expected a string")),
        None => Err(bad("$", format!("no `{key}`"))),
    }
}

/// servebench's own line: `prompt`, `answer`, `scorer`.
fn own_item(v: &Value, id: String) -> Result<EvalItem, Bad> {
    let scorer = match v.get("scorer") {
        None => Scorer::Exact,
        Some(Value::String(s)) => Scorer::parse(s).map_err(|m| bad("$.scorer", m))?,
        Some(_) => return Err(bad("$.scorer", "expected a string")),
    };
    Ok(EvalItem {
        id,
        prompt: text_at(v, "prompt")?,
        answer: text_at(v, "answer")?,
        scorer,
    })
}

/// An MMLU line: `question`, `choices`, `answer` (index or letter).
fn mmlu_item(v: &Value, id: String) -> Result<EvalItem, Bad> {
    let Some(Value::Array(choices)) = v.get("choices") else {
        return Err(bad("$.choices", "expected an array of strings"));
    };
    if choices.len() < 2 || choices.len() > LETTERS.len() {
        return Err(bad(
            "$.choices",
            format!(
                "expected 2 to {} choices, got {}",
                LETTERS.len(),
                choices.len()
            ),
        ));
    }
    let mut prompt = text_at(v, "question")?;
    for (k, c) in choices.iter().enumerate() {
        let c = c
            .as_str()
            .ok_or_else(|| bad(&format!("$.choices[{k}]"), "expected a string"))?;
        prompt.push_str(&format!("\n{}. {c}", &LETTERS[k..=k]));
    }
    prompt.push_str("\nAnswer with the letter of the correct option.");
    let answer = match v.get("answer") {
        Some(Value::Number(n)) => {
            let k = n
                .as_u64()
                .filter(|k| (*k as usize) < choices.len())
                .ok_or_else(|| {
                    bad(
                        "$.answer",
                        format!("choice {n} is out of range ({} choices)", choices.len()),
                    )
                })?;
            LETTERS[k as usize..=k as usize].to_string()
        }
        Some(Value::String(s)) if s.len() == 1 && LETTERS[..choices.len()].contains(s.as_str()) => {
            s.clone()
        }
        _ => {
            return Err(bad(
                "$.answer",
                "expected the right choice's index or letter",
            ))
        }
    };
    Ok(EvalItem {
        id,
        prompt,
        answer,
        scorer: Scorer::Choice,
    })
}

/// A GSM8K line: `question`, `answer` ending `#### N`.
fn gsm8k_item(v: &Value, id: String) -> Result<EvalItem, Bad> {
    let question = text_at(v, "question")?;
    let answer = text_at(v, "answer")?
        .rsplit_once("####")
        .map(|(_, a)| a.trim().replace(',', ""))
        .filter(|a| !a.is_empty())
        .ok_or_else(|| bad("$.answer", "a GSM8K answer ends with `#### NUMBER`"))?;
    Ok(EvalItem {
        id,
        prompt: format!("{question}\nGive the final answer as a number."),
        answer,
        scorer: Scorer::Numeric,
    })
}

/// Items of `spec`: `synthetic:N` (the seeded arithmetic set, seed 0) or a JSON Lines file.
pub fn load(spec: &str) -> Result<Vec<EvalItem>, EvalError> {
    if let Some(n) = spec.strip_prefix("synthetic:") {
        let n: usize = n
            .parse()
            .ok()
            .filter(|n| (1..=1_000_000).contains(n))
            .ok_or_else(|| EvalError::Synthetic(spec.to_string()))?;
        return Ok(synthetic(n, 0));
    }
    let text = std::fs::read_to_string(spec).map_err(|e| EvalError::Io {
        path: spec.to_string(),
        message: e.to_string(),
    })?;
    parse(&text, spec)
}

/// The prompt of a synthetic item: `Compute 37 + 58. Answer with the number only.`
pub fn synthetic_prompt(a: u64, b: u64) -> String {
    format!("Compute {a} + {b}. Answer with the number only.")
}

/// `(a, b)` of a prompt that holds a synthetic item's question.
pub fn synthetic_question(prompt: &str) -> Option<(u64, u64)> {
    let rest = &prompt[prompt.find("Compute ")? + "Compute ".len()..];
    let (q, _) = rest.split_once(". Answer with the number only.")?;
    let (a, b) = q.split_once(" + ")?;
    Some((a.trim().parse().ok()?, b.trim().parse().ok()?))
}

/// `n` arithmetic items with exact answers (sums of two numbers below 1000), the same for
/// the same `seed`: generated, never downloaded.
///
/// ```
/// use servebench::quality::eval::{synthetic, synthetic_question};
/// let items = synthetic(3, 0);
/// assert_eq!(items, synthetic(3, 0));
/// let (a, b) = synthetic_question(&items[0].prompt).unwrap();
/// assert_eq!(items[0].answer, (a + b).to_string());
/// ```
pub fn synthetic(n: usize, seed: u64) -> Vec<EvalItem> {
    let mut rng = crate::rng::Rng::new(crate::rng::mix(seed ^ 0x5155_414c_4954_5931));
    (0..n)
        .map(|i| {
            let (a, b) = (rng.range_inclusive(10, 999), rng.range_inclusive(10, 999));
            EvalItem {
                id: format!("synthetic-{i}"),
                prompt: synthetic_prompt(a, b),
                answer: (a + b).to_string(),
                scorer: Scorer::Numeric,
            }
        })
        .collect()
}
