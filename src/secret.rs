//! Secrets kept out of every file servebench writes (run files' `command_line`, a study's
//! journal, document and logs): the value of a flag that carries a key is replaced by
//! [`REDACTED`], found by the flag's name and the argument's position (`--api-key VALUE`,
//! `--api-key=VALUE`, `--hf-token VALUE`), never by guessing what a key looks like.

/// What a secret is replaced with.
pub const REDACTED: &str = "***";

/// Whether `flag` (`--api-key`, `--hf_token`, `--admin-password`) names a secret: its last
/// word (after `-` or `_`) is `key`, `apikey`, `token`, `password`, `passwd` or `secret`.
/// `--max-num-batched-tokens` and `--ssl-keyfile` are not secrets.
///
/// ```
/// use servebench::secret::is_secret_flag;
/// assert!(is_secret_flag("--api-key"));
/// assert!(is_secret_flag("--HF_TOKEN"));
/// assert!(!is_secret_flag("--max-num-batched-tokens"));
/// assert!(!is_secret_flag("--ssl-keyfile"));
/// assert!(!is_secret_flag("api-key"), "a flag starts with `-`");
/// ```
pub fn is_secret_flag(flag: &str) -> bool {
    if !flag.starts_with('-') {
        return false;
    }
    let name = flag.trim_start_matches('-').to_ascii_lowercase();
    let last = name.rsplit(['-', '_']).next().unwrap_or("");
    matches!(
        last,
        "key" | "apikey" | "token" | "password" | "passwd" | "secret"
    )
}

/// Where a secret sits in an argument vector.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SecretAt {
    /// `--flag=VALUE` at this index.
    Inline(usize),
    /// `--flag VALUE`: the value at this index.
    Next(usize),
}

/// The secrets of `argv` by position: the value of every flag [`is_secret_flag`] names.
///
/// ```
/// use servebench::secret::{secrets_in, SecretAt};
/// let argv = ["bench", "--api-key", "sk-1", "--token=t", "--api-key"].map(String::from);
/// assert_eq!(secrets_in(&argv), [SecretAt::Next(2), SecretAt::Inline(3)]);
/// ```
pub fn secrets_in(argv: &[String]) -> Vec<SecretAt> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < argv.len() {
        let arg = &argv[i];
        match arg.split_once('=') {
            Some((flag, _)) if is_secret_flag(flag) => out.push(SecretAt::Inline(i)),
            None if is_secret_flag(arg) && i + 1 < argv.len() => {
                out.push(SecretAt::Next(i + 1));
                i += 1;
            }
            _ => {}
        }
        i += 1;
    }
    out
}

/// Whether `value` only refers to a key: a placeholder (`{api_key}`) or a shell variable
/// (`$OPENAI_API_KEY`, `${OPENAI_API_KEY}`).
fn is_reference(value: &str) -> bool {
    let name = |n: &str| !n.is_empty() && n.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    let braced = |v: &str, open: &str| {
        v.strip_prefix(open)
            .and_then(|r| r.strip_suffix('}'))
            .is_some_and(name)
    };
    braced(value, "{") || braced(value, "${") || value.strip_prefix('$').is_some_and(name)
}

/// `argv` with every secret (see [`secrets_in`]) replaced by [`REDACTED`]; a value that
/// only refers to a key (`{api_key}`, `$OPENAI_API_KEY`) is kept.
///
/// ```
/// use servebench::secret::redact_argv;
/// let argv = ["servebench", "bench", "--api-key", "sk-1", "--api_key=sk-2", "--model", "m"].map(String::from);
/// assert_eq!(redact_argv(&argv), ["servebench", "bench", "--api-key", "***", "--api_key=***", "--model", "m"]);
/// let template = ["vllm", "--api-key", "{api_key}"].map(String::from);
/// assert_eq!(redact_argv(&template), template);
/// ```
pub fn redact_argv(argv: &[String]) -> Vec<String> {
    let mut out = argv.to_vec();
    for at in secrets_in(argv) {
        if is_reference(value_at(argv, at)) {
            continue;
        }
        match at {
            SecretAt::Next(i) => {
                if let Some(a) = out.get_mut(i) {
                    *a = REDACTED.to_string();
                }
            }
            SecretAt::Inline(i) => {
                if let Some(a) = out.get_mut(i) {
                    if let Some((flag, _)) = a.split_once('=') {
                        *a = format!("{flag}={REDACTED}");
                    }
                }
            }
        }
    }
    out
}

/// The value at a secret's position in `argv`.
pub fn value_at(argv: &[String], at: SecretAt) -> &str {
    match at {
        SecretAt::Next(i) => argv.get(i).map_or("", String::as_str),
        SecretAt::Inline(i) => argv
            .get(i)
            .and_then(|a| a.split_once('='))
            .map_or("", |(_, v)| v),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_trailing_secret_flag_without_value_is_left_alone() {
        let argv = ["x", "--api-key"].map(String::from);
        assert_eq!(redact_argv(&argv), argv);
    }

    #[test]
    fn the_value_after_a_secret_flag_is_redacted_even_when_it_looks_like_a_flag() {
        let argv = ["x", "--token", "--not-a-flag", "y"].map(String::from);
        assert_eq!(redact_argv(&argv), ["x", "--token", REDACTED, "y"]);
    }
}
