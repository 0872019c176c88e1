//! Scoring a response against an item's reference answer. Table of scorers:
//!
//! | scorer | the response's answer | right when |
//! |---|---|---|
//! | `exact` | the whole text, trimmed | equal to the reference, ignoring case |
//! | `numeric` | the last number in the text (commas dropped) | numerically equal |
//! | `choice` | the first standalone option letter `A`–`J` | the reference letter |
//! | `regex:P` | the first capture group of `P` (else the whole match) | equal, trimmed |

/// The lettered options of a multiple-choice item.
pub const LETTERS: &str = "ABCDEFGHIJ";

/// How a response is scored.
#[derive(Debug, Clone)]
pub enum Scorer {
    /// Trimmed, case-insensitive equality.
    Exact,
    /// The last number in the response.
    Numeric,
    /// The first standalone option letter.
    Choice,
    /// A pattern's first capture group (or whole match).
    Regex(regex::Regex),
}

impl PartialEq for Scorer {
    fn eq(&self, other: &Self) -> bool {
        match (self, other) {
            (Scorer::Regex(a), Scorer::Regex(b)) => a.as_str() == b.as_str(),
            (a, b) => std::mem::discriminant(a) == std::mem::discriminant(b),
        }
    }
}

impl Scorer {
    /// `exact`, `numeric`, `choice` or `regex:PATTERN`.
    pub fn parse(s: &str) -> Result<Scorer, String> {
        match s {
            "exact" => Ok(Scorer::Exact),
            "numeric" => Ok(Scorer::Numeric),
            "choice" => Ok(Scorer::Choice),
            _ => match s.strip_prefix("regex:") {
                Some(p) => regex::Regex::new(p)
                    .map(Scorer::Regex)
                    .map_err(|e| format!("bad pattern `{p}`: {e}")),
                None => Err(format!(
                    "unknown scorer `{s}` (exact, numeric, choice, regex:PATTERN)"
                )),
            },
        }
    }

    /// The answer `response` gives under this scorer (`None`: it gives none).
    ///
    /// ```
    /// use servebench::quality::score::Scorer;
    /// assert_eq!(Scorer::Numeric.extract("so 3 + 4 = 7 apples").as_deref(), Some("7"));
    /// assert_eq!(Scorer::Numeric.extract("about 1,234.5").as_deref(), Some("1234.5"));
    /// assert_eq!(Scorer::Choice.extract("The answer is (C).").as_deref(), Some("C"));
    /// assert_eq!(Scorer::Choice.extract("I think so"), None);
    /// ```
    pub fn extract(&self, response: &str) -> Option<String> {
        match self {
            Scorer::Exact => Some(response.trim().to_string()),
            Scorer::Numeric => last_number(response),
            Scorer::Choice => first_letter(response),
            Scorer::Regex(re) => {
                let c = re.captures(response)?;
                let m = c.get(1).or_else(|| c.get(0))?;
                Some(m.as_str().trim().to_string())
            }
        }
    }

    /// Whether `response` answers `reference` rightly.
    ///
    /// ```
    /// use servebench::quality::score::Scorer;
    /// assert!(Scorer::Numeric.is_right(" 95 lorem ipsum", "95"));
    /// assert!(Scorer::Numeric.is_right("95.0", "95"));
    /// assert!(!Scorer::Numeric.is_right(" 96", "95"));
    /// assert!(Scorer::Exact.is_right(" Paris\n", "paris"));
    /// let re = Scorer::parse(r"regex:answer: (\w+)").unwrap();
    /// assert!(re.is_right("the answer: blue", "blue"));
    /// ```
    pub fn is_right(&self, response: &str, reference: &str) -> bool {
        let Some(got) = self.extract(response) else {
            return false;
        };
        match self {
            Scorer::Exact => got.eq_ignore_ascii_case(reference.trim()),
            Scorer::Numeric => match (
                got.parse::<f64>(),
                reference.trim().replace(',', "").parse::<f64>(),
            ) {
                (Ok(a), Ok(b)) => (a - b).abs() <= 1e-9 * b.abs().max(1.0),
                _ => false,
            },
            Scorer::Choice => got.eq_ignore_ascii_case(reference.trim()),
            Scorer::Regex(_) => got == reference.trim(),
        }
    }
}

/// The last number in `s`: an optional minus, digits with optional commas, an optional
/// decimal part (commas dropped).
fn last_number(s: &str) -> Option<String> {
    let b = s.as_bytes();
    let mut last = None;
    let mut i = 0;
    while i < b.len() {
        if b[i].is_ascii_digit() {
            let start = if i > 0 && b[i - 1] == b'-' { i - 1 } else { i };
            let mut j = i;
            while j < b.len()
                && (b[j].is_ascii_digit()
                    || ((b[j] == b',' || b[j] == b'.')
                        && j + 1 < b.len()
                        && b[j + 1].is_ascii_digit()))
            {
                j += 1;
            }
            last = Some(s[start..j].replace(',', ""));
            i = j;
        } else {
            i += 1;
        }
    }
    last
}

/// The option letter a response gives: after `answer is` (`The answer is C`, `answer is
/// (C)`), else in parentheses (`(C)`), else as the response's first word when it is a
/// letter alone or followed by `.`, `)` or `:` (`C`, `C.`, `C) Paris`). `A` or `I` as a
/// sentence's first word is an article or a pronoun, not an answer.
fn first_letter(s: &str) -> Option<String> {
    let letters = LETTERS.as_bytes();
    let letter_at = |t: &str| -> Option<String> {
        let b = t.as_bytes();
        let c = *b.first()?;
        (letters.contains(&c) && b.get(1).is_none_or(|x| !x.is_ascii_alphanumeric()))
            .then(|| (c as char).to_string())
    };
    let lower = s.to_ascii_lowercase();
    if let Some(i) = lower.find("answer is") {
        let rest = s[i + "answer is".len()..].trim_start();
        let rest = rest.strip_prefix('(').unwrap_or(rest);
        if let Some(l) = letter_at(rest) {
            return Some(l);
        }
    }
    let b = s.as_bytes();
    for i in 0..b.len().saturating_sub(2) {
        if b[i] == b'(' && letters.contains(&b[i + 1]) && b[i + 2] == b')' {
            return Some((b[i + 1] as char).to_string());
        }
    }
    let t = s.trim();
    let b = t.as_bytes();
    match (b.first(), b.get(1)) {
        (Some(c), None | Some(b'.' | b')' | b':')) if letters.contains(c) => {
            Some((*c as char).to_string())
        }
        _ => None,
    }
}
