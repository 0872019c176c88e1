//! Server-sent events (SSE) parsing, as the WHATWG spec defines it: lines end in LF, CRLF or
//! CR; `data:` lines append to the event's data (joined with `\n`); lines starting with `:`
//! are comments; a blank line dispatches the event. Input may be split anywhere across reads
//! (inside a line, between CR and LF, inside a UTF-8 sequence): the parser buffers the
//! partial line. A line longer than the parser's limit is an error, so memory stays bounded.
//!
//! ```
//! use servebench::http::SseParser;
//! let mut parser = SseParser::new();
//! let mut events = Vec::new();
//! parser.feed(b"data: {\"a\":1}\r\n\r\n: keep-alive\n\nda", &mut events).unwrap();
//! parser.feed(b"ta: [DONE]\n\n", &mut events).unwrap();
//! assert_eq!(events.len(), 2);
//! assert_eq!(events[0].data, "{\"a\":1}");
//! assert!(events[1].is_done());
//! ```

/// Default longest line the parser buffers (16 MiB).
pub const DEFAULT_MAX_LINE: usize = 16 << 20;

/// Default largest event data (all its `data:` lines together) the parser buffers (64 MiB).
pub const DEFAULT_MAX_EVENT: usize = 64 << 20;

/// One dispatched SSE event.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SseEvent {
    /// The `event:` field, if one was given.
    pub event: Option<String>,
    /// The `data:` lines joined with `\n`.
    pub data: String,
}

impl SseEvent {
    /// `true` for OpenAI's end-of-stream sentinel, `data: [DONE]`.
    pub fn is_done(&self) -> bool {
        self.data.trim() == "[DONE]"
    }
}

/// Errors from [`SseParser::feed`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SseError {
    /// A line grew past the parser's limit without a line ending.
    #[error("SSE line longer than {limit} bytes")]
    LineTooLong {
        /// The limit in bytes.
        limit: usize,
    },
    /// An event's `data:` lines grew past the parser's limit without a blank line.
    #[error("SSE event data longer than {limit} bytes")]
    EventTooLarge {
        /// The limit in bytes.
        limit: usize,
    },
}

/// An incremental SSE parser. Feed it bytes as they arrive; it appends complete events.
#[derive(Debug, Clone)]
pub struct SseParser {
    line: Vec<u8>,
    data: String,
    has_data: bool,
    event: Option<String>,
    /// The previous byte was a CR: a following LF belongs to the same line ending.
    after_cr: bool,
    max_line: usize,
    max_event: usize,
}

impl Default for SseParser {
    fn default() -> Self {
        SseParser::new()
    }
}

impl SseParser {
    /// A parser with the default line limit ([`DEFAULT_MAX_LINE`]).
    pub fn new() -> Self {
        SseParser::with_max_line(DEFAULT_MAX_LINE)
    }

    /// A parser that rejects lines longer than `max_line` bytes.
    pub fn with_max_line(max_line: usize) -> Self {
        SseParser {
            line: Vec::new(),
            data: String::new(),
            has_data: false,
            event: None,
            after_cr: false,
            max_line,
            max_event: DEFAULT_MAX_EVENT,
        }
    }

    /// The same parser, rejecting events whose data exceeds `max_event` bytes (default
    /// [`DEFAULT_MAX_EVENT`]): a stream of `data:` lines without a blank line would
    /// otherwise grow one event without bound.
    pub fn with_max_event(mut self, max_event: usize) -> Self {
        self.max_event = max_event;
        self
    }

    /// Parse `bytes`, appending every event completed by them to `out`.
    pub fn feed(&mut self, mut bytes: &[u8], out: &mut Vec<SseEvent>) -> Result<(), SseError> {
        if self.after_cr && !bytes.is_empty() {
            if bytes[0] == b'\n' {
                bytes = &bytes[1..];
            }
            self.after_cr = false;
        }
        while let Some(pos) = bytes.iter().position(|&b| b == b'\n' || b == b'\r') {
            let (head, rest) = bytes.split_at(pos);
            let is_cr = rest.first() == Some(&b'\r');
            let mut rest = &rest[1..];
            if is_cr {
                match rest.first() {
                    Some(b'\n') => rest = &rest[1..],
                    Some(_) => {}
                    None => self.after_cr = true,
                }
            }
            if self.line.is_empty() {
                self.process_line(head, out)?;
            } else {
                self.check_len(head.len())?;
                let mut line = std::mem::take(&mut self.line);
                line.extend_from_slice(head);
                let r = self.process_line(&line, out);
                line.clear();
                self.line = line;
                r?;
            }
            bytes = rest;
        }
        if !bytes.is_empty() {
            self.check_len(bytes.len())?;
            self.line.extend_from_slice(bytes);
        }
        Ok(())
    }

    /// The input ended: dispatch a last event left without its blank line (and any
    /// unterminated line), as lenient clients do.
    pub fn finish(&mut self, out: &mut Vec<SseEvent>) {
        if !self.line.is_empty() {
            let line = std::mem::take(&mut self.line);
            // An over-long last line is dropped: the stream has ended anyway.
            let _ = self.process_line(&line, out);
        }
        let _ = self.process_line(b"", out);
        self.after_cr = false;
    }

    fn check_len(&self, extra: usize) -> Result<(), SseError> {
        if self.line.len() + extra > self.max_line {
            return Err(SseError::LineTooLong {
                limit: self.max_line,
            });
        }
        Ok(())
    }

    fn process_line(&mut self, line: &[u8], out: &mut Vec<SseEvent>) -> Result<(), SseError> {
        if line.is_empty() {
            if self.has_data {
                out.push(SseEvent {
                    event: self.event.take(),
                    data: std::mem::take(&mut self.data),
                });
            }
            self.has_data = false;
            self.event = None;
            return Ok(());
        }
        if line[0] == b':' {
            return Ok(());
        }
        let (field, value) = match line.iter().position(|&b| b == b':') {
            Some(i) => {
                let v = &line[i + 1..];
                (&line[..i], v.strip_prefix(b" ").unwrap_or(v))
            }
            None => (line, &b""[..]),
        };
        match field {
            b"data" => {
                let grown = self.data.len() + usize::from(self.has_data) + value.len();
                if grown > self.max_event {
                    return Err(SseError::EventTooLarge {
                        limit: self.max_event,
                    });
                }
                if self.has_data {
                    self.data.push('\n');
                }
                self.data.push_str(&String::from_utf8_lossy(value));
                self.has_data = true;
            }
            b"event" => self.event = Some(String::from_utf8_lossy(value).into_owned()),
            _ => {} // id, retry and unknown fields do not matter here
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse_all(chunks: &[&[u8]]) -> Vec<SseEvent> {
        let mut p = SseParser::new();
        let mut out = Vec::new();
        for c in chunks {
            p.feed(c, &mut out).unwrap();
        }
        p.finish(&mut out);
        out
    }

    fn datas(events: &[SseEvent]) -> Vec<&str> {
        events.iter().map(|e| e.data.as_str()).collect()
    }

    #[test]
    fn vllm_style_stream() {
        let s = b"data: {\"choices\":[{\"text\":\" a\"}]}\n\ndata: {\"choices\":[],\"usage\":{\"completion_tokens\":1}}\n\ndata: [DONE]\n\n";
        let ev = parse_all(&[s]);
        assert_eq!(ev.len(), 3);
        assert_eq!(ev[0].data, "{\"choices\":[{\"text\":\" a\"}]}");
        assert!(ev[2].is_done());
        assert!(!ev[0].is_done());
    }

    #[test]
    fn comments_event_names_and_multiline_data() {
        let s = b": ping\nevent: message\ndata: line1\ndata:line2\nid: 7\nretry: 10\n\n:only a comment\n\n";
        let ev = parse_all(&[s]);
        assert_eq!(ev.len(), 1);
        assert_eq!(ev[0].event.as_deref(), Some("message"));
        assert_eq!(ev[0].data, "line1\nline2");
    }

    #[test]
    fn crlf_and_bare_cr_endings() {
        let ev = parse_all(&[b"data: a\r\n\r\ndata: b\r\rdata: c\n\n"]);
        assert_eq!(datas(&ev), ["a", "b", "c"]);
    }

    #[test]
    fn every_split_point_gives_the_same_events() {
        let s: &[u8] =
            "data: {\"t\":\"é\"}\r\n\r\n: c\r\ndata: x\r\ndata: y\r\n\r\ndata: [DONE]\r\n\r\n"
                .as_bytes();
        let whole = parse_all(&[s]);
        assert_eq!(datas(&whole), ["{\"t\":\"é\"}", "x\ny", "[DONE]"]);
        for i in 0..=s.len() {
            for j in i..=s.len() {
                let ev = parse_all(&[&s[..i], &s[i..j], &s[j..]]);
                assert_eq!(ev, whole, "split at {i},{j}");
            }
        }
        // one byte at a time
        let bytes: Vec<&[u8]> = s.chunks(1).collect();
        assert_eq!(parse_all(&bytes), whole);
    }

    #[test]
    fn unterminated_last_event_is_flushed_on_finish() {
        let ev = parse_all(&[b"data: a\n\ndata: tail"]);
        assert_eq!(datas(&ev), ["a", "tail"]);
    }

    #[test]
    fn empty_data_field_dispatches_an_empty_event() {
        let ev = parse_all(&[b"data\n\ndata:\n\n"]);
        assert_eq!(datas(&ev), ["", ""]);
    }

    #[test]
    fn line_limit_bounds_memory() {
        let mut p = SseParser::with_max_line(8);
        let mut out = Vec::new();
        p.feed(b"data: 12", &mut out).unwrap();
        assert_eq!(
            p.feed(b"3", &mut out),
            Err(SseError::LineTooLong { limit: 8 })
        );
        let mut p = SseParser::with_max_line(8);
        assert!(p.feed(b"data: 123456789\n\n", &mut out).is_ok());
    }

    #[test]
    fn event_limit_bounds_memory_of_data_lines_without_a_blank_line() {
        let mut p = SseParser::with_max_line(64).with_max_event(20);
        let mut out = Vec::new();
        // 10 + 1 + 9 = 20 bytes: at the limit.
        p.feed(b"data: 0123456789\ndata: 012345678\n\n", &mut out)
            .unwrap();
        assert_eq!(datas(&out), ["0123456789\n012345678"]);
        // A hostile stream of data lines that never ends its event.
        let mut p = SseParser::with_max_line(64).with_max_event(20);
        let mut err = None;
        for _ in 0..1000 {
            if let Err(e) = p.feed(b"data: 0123456789\n", &mut out) {
                err = Some(e);
                break;
            }
        }
        assert_eq!(err, Some(SseError::EventTooLarge { limit: 20 }));
        assert!(p.data.len() <= 20);
    }
}
