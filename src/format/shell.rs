//! Commands printed for a human to paste: every argument quoted for a POSIX shell (`sh`,
//! `bash`, `zsh`), so that the pasted line runs exactly the argument vector meant — no brace
//! expansion of `{"method":"mtp",…}`, no `$(…)`, `;` or glob run by the shell. One quoting
//! rule for the study document's serving command, the guidellm commands and the resume
//! hints.

use std::borrow::Cow;

/// Whether `c` needs no quoting anywhere in a word.
fn plain(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.' | '/' | ',' | ':' | '@' | '%' | '+')
}

/// `arg` as one shell word: unchanged when it holds only characters no POSIX shell treats
/// specially (letters, digits, `-_./,:@%+`, and `=` after the first character), else in
/// single quotes (a `'` inside as `'\''`). The empty string is `''`.
///
/// ```
/// use servebench::format::shell::quote;
/// assert_eq!(quote("--max-model-len=32768"), "--max-model-len=32768");
/// assert_eq!(quote(r#"--speculative-config={"method":"mtp"}"#), r#"'--speculative-config={"method":"mtp"}'"#);
/// assert_eq!(quote("it's"), r#"'it'\''s'"#);
/// assert_eq!(quote(""), "''");
/// ```
pub fn quote(arg: &str) -> Cow<'_, str> {
    let safe = !arg.is_empty()
        && arg
            .char_indices()
            .all(|(i, c)| plain(c) || (c == '=' && i > 0));
    if safe {
        Cow::Borrowed(arg)
    } else {
        Cow::Owned(format!("'{}'", arg.replace('\'', r"'\''")))
    }
}

/// [`quote`], except that a whole-word shell variable (`${target}`) is left as it is: a
/// template the reader fills by setting the variable.
///
/// ```
/// use servebench::format::shell::quote_template;
/// assert_eq!(quote_template("${model_path}"), "${model_path}");
/// assert_eq!(quote_template("${a}b"), "'${a}b'");
/// ```
pub fn quote_template(arg: &str) -> Cow<'_, str> {
    let var = arg
        .strip_prefix("${")
        .and_then(|r| r.strip_suffix('}'))
        .is_some_and(|name| {
            name.chars().next().is_some_and(|c| !c.is_ascii_digit())
                && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        });
    if var {
        Cow::Borrowed(arg)
    } else {
        quote(arg)
    }
}

/// [`quote`], except that `${NAME}` references inside `arg` stay live: such a word is
/// double-quoted with `"`, `\`, `` ` `` and every other `$` escaped, so the shell fills
/// the references and nothing else.
///
/// ```
/// use servebench::format::shell::quote_expanding;
/// assert_eq!(quote_expanding("127.0.0.1:${PORT}"), "\"127.0.0.1:${PORT}\"");
/// assert_eq!(quote_expanding("--api-key=${KEY}"), "\"--api-key=${KEY}\"");
/// assert_eq!(quote_expanding("$HOME x"), "'$HOME x'");
/// ```
pub fn quote_expanding(arg: &str) -> Cow<'_, str> {
    let mut refs = Vec::new();
    let mut rest = arg;
    let mut offset = 0;
    while let Some(i) = rest.find("${") {
        let Some(len) = rest[i + 2..].find('}') else {
            break;
        };
        let name = &rest[i + 2..i + 2 + len];
        let valid = name.chars().next().is_some_and(|c| !c.is_ascii_digit())
            && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
        if valid {
            refs.push(offset + i..offset + i + 3 + len);
        }
        offset += i + 3 + len;
        rest = &rest[i + 3 + len..];
    }
    if refs.is_empty() {
        return quote(arg);
    }
    let mut out = String::from("\"");
    for (i, c) in arg.char_indices() {
        let live = refs.iter().any(|r| r.start == i);
        if matches!(c, '"' | '\\' | '`') || (c == '$' && !live) {
            out.push('\\');
        }
        out.push(c);
    }
    out.push('"');
    Cow::Owned(out)
}

/// The words of `argv`, each [`quote`]d, joined by spaces.
///
/// ```
/// use servebench::format::shell::join;
/// assert_eq!(join(["servebench", "study", "run", "--resume", "my dir"]), "servebench study run --resume 'my dir'");
/// ```
pub fn join<I, S>(argv: I) -> String
where
    I: IntoIterator<Item = S>,
    S: AsRef<str>,
{
    argv.into_iter()
        .map(|a| quote(a.as_ref()).into_owned())
        .collect::<Vec<_>>()
        .join(" ")
}

/// The command to continue an interrupted study in `dir`, ready to paste.
///
/// ```
/// use servebench::format::shell::resume_hint;
/// assert_eq!(resume_hint("out dir".as_ref()), "servebench study run --resume 'out dir'");
/// ```
pub fn resume_hint(dir: &std::path::Path) -> String {
    join([
        "servebench",
        "study",
        "run",
        "--resume",
        &dir.to_string_lossy(),
    ])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn specials_are_quoted_and_plain_words_are_not() {
        for w in [
            "a b", "a;b", "$(x)", "`x`", "*", "~", "#x", "{a,b}", "a\nb", "=x", "!x",
        ] {
            assert!(quote(w).starts_with('\''), "{w}");
        }
        for w in [
            "vllm",
            "Qwen/Qwen3.5-35B-A3B-FP8",
            "--a=b",
            "http://h:8000/v1",
            "1,2",
        ] {
            assert_eq!(quote(w), w);
        }
    }
}
