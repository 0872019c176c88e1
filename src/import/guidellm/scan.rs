//! A fast reader for one request object of the parallel parse ([`super::parallel`]).
//!
//! guidellm writes ~100 members per request, of which [`RawRequest`] reads about a dozen;
//! `serde_json` spends most of its time on the others (each key parsed, checked as UTF-8
//! and matched, each value skipped through its generic machinery). This reader walks the
//! object once with byte loops: it matches the keys it needs as bytes, skips everything
//! else as strict JSON, and reads numbers with the standard library's correctly rounded
//! parser (what `serde_json`'s `float_roundtrip` also gives).
//!
//! It accepts only a subset of what `serde_json` accepts, on which it gives exactly the
//! same [`RawRequest`]; on anything else — an escaped key, an escaped or non-UTF-8 string
//! it must keep, a negative number or an exponent in a field it reads, an integer too
//! large, a duplicate field, a value of another type, a syntax error, nesting deeper than
//! 128 — it returns `None`, and the caller parses the object with `serde_json`, whose
//! result or error then stands. What it accepts is strict JSON as `serde_json` reads it
//! (control characters and bad escapes in strings rejected, one leading zero, no trailing
//! comma); like `serde_json` it does not check skipped strings for UTF-8 nor `\u`
//! escapes for valid code points.

use super::raw::{RawInfo, RawRequest, RawSchedulerInfo, RawTimings};

/// Read the request object at `at` (its `{`): the request and the position just past its
/// `}`; `None` when the object is outside this reader's subset (see the module docs).
pub(super) fn request(bytes: &[u8], at: usize) -> Option<(RawRequest, usize)> {
    let mut c = Cursor { b: bytes, i: at };
    let r = c.request()?;
    Some((r, c.i))
}

/// The eight high bits of a word.
const HIGH: u64 = 0x8080_8080_8080_8080;
/// One in every byte of a word.
const ONES: u64 = 0x0101_0101_0101_0101;

/// High bit set in the lowest byte of `w` that is `"`, `\` or a control character (bytes
/// above the first such byte may be flagged spuriously).
fn special(w: u64) -> u64 {
    let ctrl = w.wrapping_sub(ONES * 0x20) & !w;
    let q = w ^ (ONES * u64::from(b'"'));
    let quote = q.wrapping_sub(ONES) & !q;
    let s = w ^ (ONES * u64::from(b'\\'));
    let slash = s.wrapping_sub(ONES) & !s;
    (ctrl | quote | slash) & HIGH
}

struct Cursor<'a> {
    b: &'a [u8],
    i: usize,
}

/// The keys an object reader wants, and a bit for each of their lengths.
struct Names {
    names: &'static [&'static [u8]],
    lengths: u64,
}

impl Names {
    const fn new(names: &'static [&'static [u8]]) -> Names {
        let mut lengths = 0u64;
        let mut i = 0;
        while i < names.len() {
            assert!(names[i].len() < 64);
            lengths |= 1 << names[i].len();
            i += 1;
        }
        Names { names, lengths }
    }
}

/// Which value a member holds, for the object readers.
enum Key {
    Known(u32),
    Other,
}

impl<'a> Cursor<'a> {
    fn peek(&self) -> Option<u8> {
        self.b.get(self.i).copied()
    }

    fn ws(&mut self) {
        while let Some(b' ' | b'\n' | b'\t' | b'\r') = self.peek() {
            self.i += 1;
        }
    }

    /// Past `byte` after optional whitespace.
    fn eat(&mut self, byte: u8) -> Option<()> {
        self.ws();
        (self.peek()? == byte).then(|| self.i += 1)
    }

    /// Skip a string's content after its opening quote, up to and past its closing quote;
    /// `true` when it held an escape.
    fn skip_str(&mut self) -> Option<bool> {
        let mut escaped = false;
        loop {
            // A key or a short string ends within four words; a longer one is searched
            // with `memchr` and its span then checked for control characters.
            let mut found = None;
            for _ in 0..4 {
                let Some(w) = self.b.get(self.i..self.i + 8) else {
                    break;
                };
                let m = special(u64::from_le_bytes(w.try_into().ok()?));
                if m != 0 {
                    found = Some(self.i + (m.trailing_zeros() / 8) as usize);
                    break;
                }
                self.i += 8;
            }
            let at = match found {
                Some(at) => at,
                None => {
                    let rest = self.b.get(self.i..)?;
                    let n = memchr::memchr2(b'"', b'\\', rest)?;
                    // The smallest byte of the span (a loop the compiler vectorises).
                    if rest[..n].iter().fold(u8::MAX, |a, &c| a.min(c)) < 0x20 {
                        return None;
                    }
                    self.i + n
                }
            };
            match self.b[at] {
                b'"' => {
                    self.i = at + 1;
                    return Some(escaped);
                }
                b'\\' => {
                    escaped = true;
                    match *self.b.get(at + 1)? {
                        b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't' => self.i = at + 2,
                        b'u' => {
                            let hex = self.b.get(at + 2..at + 6)?;
                            if !hex.iter().all(u8::is_ascii_hexdigit) {
                                return None;
                            }
                            self.i = at + 6;
                        }
                        _ => return None,
                    }
                }
                _ => return None, // a control character
            }
        }
    }

    /// A string without escapes, after its opening quote: its bytes.
    fn plain_str(&mut self) -> Option<&'a [u8]> {
        let start = self.i;
        if self.skip_str()? {
            return None;
        }
        self.b.get(start..self.i - 1)
    }

    /// A member key (after the `"`), matched against `names`.
    fn key(&mut self, names: &Names) -> Option<Key> {
        let k = self.plain_str()?;
        // Most keys are not wanted, and have a length no wanted key has.
        if k.len() < 64 && names.lengths & (1 << k.len()) != 0 {
            if let Some(n) = names.names.iter().position(|&n| n == k) {
                return Some(Key::Known(n as u32));
            }
        }
        // `serde_json` reads a key as a `str`: it must be UTF-8.
        if !k.is_ascii() {
            std::str::from_utf8(k).ok()?;
        }
        Some(Key::Other)
    }

    /// The digits of a JSON number (the sign, if any, already consumed): one leading
    /// zero, optional fraction and exponent. Returns whether it had a fraction or exponent.
    fn number_body(&mut self) -> Option<bool> {
        match self.peek()? {
            b'0' => self.i += 1,
            b'1'..=b'9' => {
                self.i += 1;
                self.digits();
            }
            _ => return None,
        }
        let mut float = false;
        if self.peek() == Some(b'.') {
            self.i += 1;
            if self.digits() == 0 {
                return None;
            }
            float = true;
        }
        if let Some(b'e' | b'E') = self.peek() {
            self.i += 1;
            if let Some(b'+' | b'-') = self.peek() {
                self.i += 1;
            }
            if self.digits() == 0 {
                return None;
            }
            float = true;
        }
        Some(float)
    }

    fn digits(&mut self) -> usize {
        let start = self.i;
        while let Some(b'0'..=b'9') = self.peek() {
            self.i += 1;
        }
        self.i - start
    }

    /// Past `literal`'s remaining bytes (its first byte already matched).
    fn literal(&mut self, literal: &[u8]) -> Option<()> {
        (self.b.get(self.i..self.i + literal.len())? == literal).then(|| self.i += literal.len())
    }

    /// `null`: `true` (and consumed); anything else: `false` (nothing consumed).
    fn null(&mut self) -> Option<bool> {
        self.ws();
        if self.peek()? == b'n' {
            self.literal(b"null")?;
            return Some(true);
        }
        Some(false)
    }

    /// An `Option<f64>` member: `null`, or a non-negative number without exponent.
    fn f64(&mut self) -> Option<Option<f64>> {
        if self.null()? {
            return Some(None);
        }
        let start = self.i;
        self.number_body()?;
        let text = self.b.get(start..self.i)?;
        // Python writes at most 17 significant digits (and an exponent beyond 1e16 or
        // below 1e-4): longer texts and exponents are left to `serde_json`.
        if text.len() > 32 || text.iter().any(|&c| c == b'e' || c == b'E') {
            return None;
        }
        // ASCII digits and a dot: UTF-8.
        let v: f64 = std::str::from_utf8(text).ok()?.parse().ok()?;
        v.is_finite().then_some(Some(v))
    }

    /// An `Option<u64>` member: `null`, or a non-negative integer that fits.
    fn u64(&mut self) -> Option<Option<u64>> {
        if self.null()? {
            return Some(None);
        }
        let start = self.i;
        if self.number_body()? {
            return None;
        }
        let mut v = 0u64;
        for &d in self.b.get(start..self.i)? {
            v = v.checked_mul(10)?.checked_add(u64::from(d - b'0'))?;
        }
        Some(Some(v))
    }

    /// An `Option<String>` member: `null`, or a string without `\u` escapes.
    fn string(&mut self) -> Option<Option<String>> {
        if self.null()? {
            return Some(None);
        }
        if self.peek()? != b'"' {
            return None;
        }
        self.i += 1;
        let start = self.i;
        let escaped = self.skip_str()?;
        let raw = self.b.get(start..self.i - 1)?;
        if !escaped {
            return Some(Some(std::str::from_utf8(raw).ok()?.to_owned()));
        }
        // The escapes have been checked by `skip_str`.
        let mut out = Vec::with_capacity(raw.len());
        let mut i = 0;
        while let Some(k) = memchr::memchr(b'\\', raw.get(i..)?) {
            out.extend_from_slice(raw.get(i..i + k)?);
            out.push(match *raw.get(i + k + 1)? {
                b'b' => 0x08,
                b'f' => 0x0c,
                b'n' => b'\n',
                b'r' => b'\r',
                b't' => b'\t',
                b'u' => return None,
                c => c, // `"`, `\` or `/`
            });
            i += k + 2;
        }
        out.extend_from_slice(raw.get(i..)?);
        // `serde_json` checks the unescaped string as a whole.
        Some(Some(String::from_utf8(out).ok()?))
    }

    /// Skip any JSON value (strict; `None` beyond 128 levels of nesting).
    fn skip_value(&mut self) -> Option<()> {
        // One bit per open container: 1 for an object, 0 for an array.
        let mut stack: u128 = 0;
        let mut depth = 0u32;
        loop {
            // A value.
            self.ws();
            match self.peek()? {
                b'"' => {
                    self.i += 1;
                    self.skip_str()?;
                }
                b'n' => {
                    self.i += 1;
                    self.literal(b"ull")?;
                }
                b't' => {
                    self.i += 1;
                    self.literal(b"rue")?;
                }
                b'f' => {
                    self.i += 1;
                    self.literal(b"alse")?;
                }
                b'-' => {
                    self.i += 1;
                    self.number_body()?;
                }
                b'0'..=b'9' => {
                    self.number_body()?;
                }
                open @ (b'[' | b'{') => {
                    self.i += 1;
                    if depth == 128 {
                        return None;
                    }
                    let object = open == b'{';
                    stack = (stack << 1) | u128::from(object);
                    depth += 1;
                    self.ws();
                    let close = if object { b'}' } else { b']' };
                    if self.peek()? == close {
                        self.i += 1;
                        stack >>= 1;
                        depth -= 1;
                    } else {
                        if object {
                            self.member_key()?;
                        }
                        continue;
                    }
                }
                _ => return None,
            }
            // After a value: a comma and the next one, or the end of containers.
            loop {
                if depth == 0 {
                    return Some(());
                }
                let object = stack & 1 == 1;
                self.ws();
                match self.peek()? {
                    b',' => {
                        self.i += 1;
                        if object {
                            self.member_key()?;
                        }
                        break;
                    }
                    b'}' if object => {}
                    b']' if !object => {}
                    _ => return None,
                }
                self.i += 1;
                stack >>= 1;
                depth -= 1;
            }
        }
    }

    /// A skipped object's key and colon.
    fn member_key(&mut self) -> Option<()> {
        self.eat(b'"')?;
        self.skip_str()?;
        self.eat(b':')
    }

    /// Read an object's members: `member` reads the value of the known key with the given
    /// index (each at most once), other values are skipped. `None` for `null`.
    fn object(
        &mut self,
        names: &Names,
        mut member: impl FnMut(&mut Self, u32) -> Option<()>,
    ) -> Option<()> {
        self.ws();
        if self.peek()? != b'{' {
            return None;
        }
        self.i += 1;
        let mut seen = 0u32;
        self.ws();
        if self.peek()? == b'}' {
            self.i += 1;
            return Some(());
        }
        loop {
            self.eat(b'"')?;
            let key = self.key(names)?;
            self.eat(b':')?;
            match key {
                Key::Known(n) => {
                    // A duplicate field is an error for `serde_json`.
                    if seen & (1 << n) != 0 {
                        return None;
                    }
                    seen |= 1 << n;
                    member(self, n)?;
                }
                Key::Other => self.skip_value()?,
            }
            self.ws();
            match self.peek()? {
                b',' => self.i += 1,
                b'}' => {
                    self.i += 1;
                    return Some(());
                }
                _ => return None,
            }
        }
    }

    /// An optional nested object: `null` or the object.
    fn nested<T>(&mut self, read: impl FnOnce(&mut Self) -> Option<T>) -> Option<Option<T>> {
        if self.null()? {
            return Some(None);
        }
        read(self).map(Some)
    }

    fn request(&mut self) -> Option<RawRequest> {
        const NAMES: Names = Names::new(&[
            b"info",
            b"request_start_time",
            b"request_end_time",
            b"prompt_tokens",
            b"output_tokens",
            b"scheduler_info",
            b"start_time",
            b"end_time",
            b"first_token_time",
            b"last_token_time",
            b"error",
        ]);
        let mut r = RawRequest::default();
        self.object(&NAMES, |c, n| {
            match n {
                0 => r.info = c.nested(Self::info)?,
                1 => r.request_start_time = c.f64()?,
                2 => r.request_end_time = c.f64()?,
                3 => r.prompt_tokens = c.u64()?,
                4 => r.output_tokens = c.u64()?,
                5 => r.scheduler_info = c.nested(Self::scheduler_info)?,
                6 => r.start_time = c.f64()?,
                7 => r.end_time = c.f64()?,
                8 => r.first_token_time = c.f64()?,
                9 => r.last_token_time = c.f64()?,
                _ => r.error = c.string()?,
            }
            Some(())
        })?;
        Some(r)
    }

    fn info(&mut self) -> Option<RawInfo> {
        const NAMES: Names = Names::new(&[b"status", b"timings", b"error"]);
        let mut r = RawInfo::default();
        self.object(&NAMES, |c, n| {
            match n {
                0 => r.status = c.string()?,
                1 => r.timings = c.nested(Self::timings)?,
                _ => r.error = c.string()?,
            }
            Some(())
        })?;
        Some(r)
    }

    fn timings(&mut self) -> Option<RawTimings> {
        const NAMES: Names = Names::new(&[
            b"targeted_start",
            b"request_start",
            b"first_token_iteration",
            b"last_token_iteration",
            b"token_iterations",
            b"request_end",
            b"resolve_start",
            b"resolve_end",
        ]);
        let mut r = RawTimings::default();
        self.object(&NAMES, |c, n| {
            match n {
                0 => r.targeted_start = c.f64()?,
                1 => r.request_start = c.f64()?,
                2 => r.first_token_iteration = c.f64()?,
                3 => r.last_token_iteration = c.f64()?,
                4 => r.token_iterations = c.u64()?,
                5 => r.request_end = c.f64()?,
                6 => r.resolve_start = c.f64()?,
                _ => r.resolve_end = c.f64()?,
            }
            Some(())
        })?;
        Some(r)
    }

    fn scheduler_info(&mut self) -> Option<RawSchedulerInfo> {
        const NAMES: Names =
            Names::new(&[b"targeted_start_time", b"request_start", b"request_end"]);
        let mut r = RawSchedulerInfo::default();
        self.object(&NAMES, |c, n| {
            match n {
                0 => r.targeted_start_time = c.f64()?,
                1 => r.request_start = c.f64()?,
                _ => r.request_end = c.f64()?,
            }
            Some(())
        })?;
        Some(r)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use serde_json::Value;

    /// Every request object of the guidellm fixtures (0.8.1: successful, errored and
    /// incomplete ones).
    fn fixture_requests() -> &'static [Value] {
        static REQUESTS: std::sync::OnceLock<Vec<Value>> = std::sync::OnceLock::new();
        REQUESTS.get_or_init(read_fixture_requests)
    }

    fn read_fixture_requests() -> Vec<Value> {
        let mut out = Vec::new();
        for name in ["constant_rate20.json", "errors.json"] {
            let path = format!(
                "{}/tests/fixtures/guidellm/{name}",
                env!("CARGO_MANIFEST_DIR")
            );
            let doc: Value = serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap();
            for b in doc["benchmarks"].as_array().unwrap() {
                for list in ["successful", "errored", "incomplete"] {
                    if let Some(l) = b["requests"][list].as_array() {
                        out.extend(l.iter().cloned());
                    }
                }
            }
        }
        out
    }

    /// What `serde_json` reads at the start of `bytes` (the parallel parse's fallback):
    /// the request and where it ends.
    fn serde(bytes: &[u8]) -> Option<(RawRequest, usize)> {
        let mut one = serde_json::Deserializer::from_slice(bytes).into_iter::<RawRequest>();
        let r = one.next()?.ok()?;
        Some((r, one.byte_offset()))
    }

    /// When the reader accepts, `serde_json` reads the same request ending at the same
    /// byte.
    fn agrees(bytes: &[u8]) -> Result<bool, TestCaseError> {
        match request(bytes, 0) {
            Some(fast) => {
                let expected = serde(bytes);
                prop_assert_eq!(Some(fast), expected, "{}", String::from_utf8_lossy(bytes));
                Ok(true)
            }
            None => Ok(false),
        }
    }

    #[test]
    fn fixture_requests_read_as_serde_json_reads_them() {
        let requests = fixture_requests();
        assert!(requests.len() > 100);
        let mut errored = 0;
        for r in requests {
            errored += usize::from(r["info"]["error"].is_string());
            for bytes in [
                serde_json::to_vec(r).unwrap(),
                serde_json::to_vec_pretty(r).unwrap(),
            ] {
                let mut followed = bytes.clone();
                followed.extend_from_slice(b", {");
                for b in [&bytes, &followed] {
                    let fast = request(b, 0).expect("a guidellm request is in the subset");
                    assert_eq!(fast.1, bytes.len());
                    assert_eq!(Some(fast), serde(b));
                }
            }
        }
        assert!(errored > 0, "the fixtures hold errored requests");
    }

    #[test]
    fn outside_the_subset_declines_and_serde_json_decides() {
        let base = r#"{"type_": "x", "info": {"status": "completed", "timings": {"request_start": 10.5, "token_iterations": 3}}, "prompt_tokens": 7}"#;
        assert!(request(base.as_bytes(), 0).is_some());
        for (text, serde_reads) in [
            // serde_json reads these; the reader leaves them to it.
            (r#"{"inf\u006f": null}"#, true),
            (r#"{"prompt_tokens": 7, "request_start_time": -0}"#, true),
            (r#"{"request_start_time": 1e3}"#, true),
            (r#"{"request_start_time": -1.5}"#, true),
            (r#"{"info": {"status": "caf\u00e9"}}"#, true),
            (
                r#"[null, null, null, null, null, null, null, null, null, null, null]"#,
                true,
            ),
            (r#"{"info": [null, null, null]}"#, true),
            // serde_json rejects these.
            (r#"{"prompt_tokens": 7, "prompt_tokens": 8}"#, false),
            (r#"{"prompt_tokens": 7.0}"#, false),
            (r#"{"prompt_tokens": -7}"#, false),
            (r#"{"prompt_tokens": 18446744073709551616}"#, false),
            (r#"{"prompt_tokens": 07}"#, false),
            (r#"{"x": 07}"#, false),
            (r#"{"x": 1.}"#, false),
            (r#"{"x": 1e}"#, false),
            (r#"{"x": [1,]}"#, false),
            (r#"{"x": {"a": 1,}}"#, false),
            (r#"{"x": 1,}"#, false),
            (r#"{"x": "\x"}"#, false),
            (r#"{"x": "\u12G4"}"#, false),
            ("{\"x\": \"a\u{1}b\"}", false),
            ("{\"x\": \"a\tb\"}", false),
            (r#"{"x": nul}"#, false),
            (r#"{"x": tru}"#, false),
            (r#"{"x" 1}"#, false),
            (r#"{x: 1}"#, false),
            (r#"{"request_start_time": 1e400}"#, false),
            (r#"{"request_start_time": "1.5"}"#, false),
            (r#"{"info": {"status": 3}}"#, false),
        ] {
            assert!(request(text.as_bytes(), 0).is_none(), "{text}");
            assert_eq!(serde(text.as_bytes()).is_some(), serde_reads, "{text}");
        }
        // Not UTF-8: a kept string or a key is checked (serde_json rejects them), a
        // skipped string is not (serde_json does not check it either).
        let bad_key = b"{\"\xff\": 1}";
        assert!(request(bad_key, 0).is_none() && serde(bad_key).is_none());
        let bad_status = b"{\"info\": {\"status\": \"\xff\"}}";
        assert!(request(bad_status, 0).is_none() && serde(bad_status).is_none());
        let skipped = b"{\"output\": \"\xff\", \"prompt_tokens\": 3}";
        assert!(agrees(skipped).unwrap());
        // Kept strings with escapes other than `\u`, unescaped as `serde_json` does.
        let escaped =
            br#"{"error": "a \"quoted\" \\ error\/\b\f\n\r\t.", "info": {"error": "\"\""}}"#;
        assert!(agrees(escaped).unwrap());
        let bad_escaped = b"{\"error\": \"\\n\xff\"}";
        assert!(request(bad_escaped, 0).is_none() && serde(bad_escaped).is_none());
        // Deep nesting in a skipped value: read up to 128 levels, then left to serde_json.
        for depth in [1, 127, 128, 129, 500] {
            let text = format!(
                r#"{{"x": {}{}, "prompt_tokens": 1}}"#,
                "[".repeat(depth),
                "]".repeat(depth)
            );
            let fast = agrees(text.as_bytes()).unwrap();
            assert_eq!(fast, depth <= 128, "{depth}");
            assert!(serde(text.as_bytes()).is_some());
        }
    }

    /// Bytes that are likely to matter to a JSON reader.
    fn interesting() -> impl Strategy<Value = u8> {
        prop_oneof![
            prop::sample::select(b"\"\\,:{}[]-+.eE0123456789nulltrfa \n\tu/".to_vec()),
            any::<u8>(),
        ]
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(4000))]
        /// Random damage to a real request: whatever the reader accepts, `serde_json`
        /// reads the same.
        #[test]
        fn damaged_requests_read_as_serde_json_reads_them(
            pick in any::<prop::sample::Index>(),
            pretty in any::<bool>(),
            edits in prop::collection::vec((any::<prop::sample::Index>(), 0u8..3, interesting()), 1..4),
        ) {
            let requests = fixture_requests();
            let r = pick.get(requests);
            let mut bytes = if pretty { serde_json::to_vec_pretty(r) } else { serde_json::to_vec(r) }.unwrap();
            for (at, kind, byte) in edits {
                let i = at.index(bytes.len());
                match kind {
                    0 => bytes[i] = byte,
                    1 => bytes.insert(i, byte),
                    _ => {
                        bytes.remove(i);
                    }
                }
                if bytes.is_empty() {
                    return Ok(());
                }
            }
            agrees(&bytes)?;
        }
    }
}
