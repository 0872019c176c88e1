//! One request's life: sending it, reading the SSE stream into stamped events, and turning
//! HTTP errors, cut streams and timeouts into failures.

use std::sync::Arc;
use std::time::Duration;

use http_body_util::BodyExt;
use hyper::StatusCode;
use serde_json::Value;

use super::connection::{build_request, connect, give_back, pooled};
use super::failure::{error_message, fail, truncate, Failure};
use super::prompt::encode_body;
use super::whole::MAX_WHOLE_BODY;
use super::wire::{Protocol, StreamState};
use super::{Shared, MAX_ERROR_BODY};
use crate::engine::{EngineEvent, EngineRequest, Usage};
use crate::http::prepare::Encoded;
use crate::http::sse::{SseEvent, SseParser};
use crate::record::ErrorKind;
use crate::record::Payload;

pub(super) async fn run_request(
    shared: Arc<Shared>,
    request: EngineRequest,
    body: Option<Encoded>,
) {
    let id = request.id;
    let result = match shared.config.request_timeout {
        Some(limit) => {
            match tokio::time::timeout(limit, stream_request(&shared, request, body)).await {
                Ok(r) => r,
                Err(_) => Err(fail(
                    ErrorKind::Timeout,
                    format!("no complete response within {:.3} s", limit.as_secs_f64()),
                )),
            }
        }
        None => stream_request(&shared, request, body).await,
    };
    let event = match result {
        Ok((at, usage)) => EngineEvent::Finished { id, at, usage },
        Err(f) => EngineEvent::Failed {
            id,
            at: shared.now(),
            kind: f.kind,
            message: f.message,
        },
    };
    shared.inbox.push([event]);
}

pub(super) async fn stream_request(
    shared: &Shared,
    request: EngineRequest,
    prepared: Option<Encoded>,
) -> Result<(Duration, Usage), Failure> {
    let id = request.id;
    // Stamped before the body is encoded, as vLLM takes `st` before aiohttp encodes the
    // payload: the send time is when the client decided to send.
    let sent = shared.now();
    shared.inbox.push([EngineEvent::Sent { id, at: sent }]);
    let Encoded { body, payload } = match prepared {
        Some(b) => b,
        None => encode_body(&shared.config, &request),
    };
    drop(request);
    if payload != Payload::default() {
        shared.inbox.push([EngineEvent::Carried {
            id,
            at: sent,
            payload,
        }]);
    }
    // A pooled connection may have been closed by the server meanwhile: retry once on a new one.
    let (mut conn, reused) = match pooled(shared).await {
        Some(c) => (c, true),
        None => (connect(shared).await?, false),
    };
    let response = match conn
        .sender
        .send_request(build_request(shared, id, &body)?)
        .await
    {
        Ok(r) => r,
        Err(e) if reused && (e.is_canceled() || e.is_closed() || e.is_incomplete_message()) => {
            conn = connect(shared).await?;
            conn.sender
                .send_request(build_request(shared, id, &body)?)
                .await
                .map_err(|e| fail(ErrorKind::Connect, format!("sending the request: {e}")))?
        }
        Err(e) => {
            return Err(fail(
                ErrorKind::Connect,
                format!("sending the request: {e}"),
            ))
        }
    };
    // The head's read is claimed here, so that the first body chunk, when it comes in a
    // later read, is stamped by that one.
    let head = conn.stamp.claim(shared.now());
    if let Some(date) = response.headers().get(hyper::header::DATE) {
        if let (Ok(v), Ok(mut clock)) = (date.to_str(), shared.clock.lock()) {
            clock.observe_header(v, sent, head);
        }
    }
    let status = response.status();
    let mut body = response.into_body();
    if !status.is_success() {
        let message = error_body_message(&mut body).await;
        return Err(fail(
            ErrorKind::HttpStatus,
            status_message(status, &message),
        ));
    }
    let endpoint = shared.config.endpoint;
    if !endpoint.streams() {
        return whole_answer(shared, conn, &mut body, payload.inputs.unwrap_or(1)).await;
    }
    let mut state = StreamState::for_endpoint(endpoint);
    state.keep_content = shared.config.response_format.is_some();
    let result = read_stream(shared, id, &mut conn, &mut body, &mut state).await;
    report_end(shared, id, &result, &state);
    let done_at = result?;
    give_back(shared, conn);
    if state.token_chunks == 0 {
        return Err(fail(
            ErrorKind::Protocol,
            "never received a token chunk (no text, content or reasoning delta)",
        ));
    }
    Ok((
        done_at,
        Usage {
            prompt_tokens: state.prompt_tokens,
            completion_tokens: state.completion_tokens,
        },
    ))
}

/// Hands the engine what a stream's end tells beside its chunks, before the event that
/// ends the request: the reasoning split (whether or not the stream ended well) and, after
/// a complete stream, the answer's checks.
fn report_end(shared: &Shared, id: u64, result: &Result<Duration, Failure>, state: &StreamState) {
    if let Some(split) = state.reasoning_split() {
        let at = match result {
            Ok(done_at) => *done_at,
            Err(_) => shared.now(),
        };
        shared
            .inbox
            .push([EngineEvent::Reasoning { id, at, split }]);
    }
    let checks = super::checks::output_checks(
        shared.config.tools.as_ref(),
        shared.config.response_format.as_ref(),
        state,
    );
    if let (Ok(at), Some(checks)) = (result, checks) {
        shared.inbox.push([EngineEvent::Checked {
            id,
            at: *at,
            checks,
        }]);
    }
}

/// Read the SSE body to `[DONE]`, pushing token chunks to the inbox as they arrive; the
/// time `[DONE]` arrived.
async fn read_stream(
    shared: &Shared,
    id: u64,
    conn: &mut super::connection::Conn,
    body: &mut hyper::body::Incoming,
    state: &mut StreamState,
) -> Result<Duration, Failure> {
    let mut parser = SseParser::new();
    let mut events: Vec<SseEvent> = Vec::new();
    let mut done_at = None;
    let mut chunks = Vec::new();
    loop {
        match body.frame().await {
            None => break,
            Some(Err(e)) => {
                return Err(fail(
                    ErrorKind::StreamCut,
                    format!("stream cut after {} token chunks: {e}", state.token_chunks),
                ))
            }
            Some(Ok(frame)) => {
                let Ok(data) = frame.into_data() else {
                    continue; // trailers
                };
                // When the read that brought these bytes returned, not when this task ran.
                let at = conn.stamp.claim(shared.now());
                parser
                    .feed(&data, &mut events)
                    .map_err(|e| fail(ErrorKind::Protocol, e.to_string()))?;
                let mut failure = None;
                for ev in events.drain(..) {
                    if done_at.is_some() || failure.is_some() {
                        continue;
                    }
                    if ev.is_done() {
                        done_at = Some(at);
                        continue;
                    }
                    match super::events::on_event(state, &ev.data) {
                        Ok(Some(tokens)) => chunks.push(EngineEvent::Chunk { id, at, tokens }),
                        Ok(None) => {}
                        Err(f) => failure = Some(f),
                    }
                    if state.done {
                        // The Responses and Messages APIs end with an event, not `[DONE]`.
                        done_at = Some(at);
                    }
                }
                if !chunks.is_empty() {
                    shared.inbox.push(chunks.drain(..));
                }
                if let Some(f) = failure {
                    return Err(f);
                }
            }
        }
    }
    done_at.ok_or_else(|| {
        fail(
            ErrorKind::StreamCut,
            format!(
                "stream ended before {} after {} token chunks",
                match state.protocol {
                    Protocol::Chunks => "[DONE]",
                    Protocol::Responses => "response.completed",
                    Protocol::Messages => "message_stop",
                },
                state.token_chunks
            ),
        )
    })
}

/// A whole (non-streamed) answer to a request of `inputs` inputs, read and checked: when
/// its last bytes arrived and the usage it reports.
async fn whole_answer(
    shared: &Shared,
    mut conn: super::connection::Conn,
    body: &mut hyper::body::Incoming,
    inputs: u32,
) -> Result<(Duration, Usage), Failure> {
    let (done_at, bytes) = read_whole(shared, &mut conn, body).await?;
    give_back(shared, conn);
    let usage = super::whole::check(shared.config.endpoint, inputs, &bytes)?;
    Ok((done_at, usage))
}

/// Read a whole (non-streamed) answer; when its last bytes arrived, and the bytes.
async fn read_whole(
    shared: &Shared,
    conn: &mut super::connection::Conn,
    body: &mut hyper::body::Incoming,
) -> Result<(Duration, Vec<u8>), Failure> {
    let mut buf = Vec::new();
    let mut last = shared.now();
    while let Some(frame) = body.frame().await {
        let frame = frame.map_err(|e| {
            fail(
                ErrorKind::StreamCut,
                format!("answer cut after {} bytes: {e}", buf.len()),
            )
        })?;
        let Ok(data) = frame.into_data() else {
            continue;
        };
        last = conn.stamp.claim(shared.now());
        if buf.len() + data.len() > MAX_WHOLE_BODY {
            return Err(fail(
                ErrorKind::Protocol,
                format!("the answer is larger than {MAX_WHOLE_BODY} bytes"),
            ));
        }
        buf.extend_from_slice(&data);
    }
    Ok((last, buf))
}

pub(super) fn status_message(status: StatusCode, message: &str) -> String {
    let reason = status.canonical_reason().unwrap_or("");
    if message.is_empty() {
        format!("HTTP {} {reason}", status.as_u16())
    } else {
        format!("HTTP {} {reason}: {message}", status.as_u16())
    }
}

pub(super) async fn error_body_message(body: &mut hyper::body::Incoming) -> String {
    let mut buf = Vec::new();
    while buf.len() < MAX_ERROR_BODY {
        match body.frame().await {
            Some(Ok(frame)) => {
                if let Ok(d) = frame.into_data() {
                    buf.extend_from_slice(&d);
                }
            }
            _ => break,
        }
    }
    let text = String::from_utf8_lossy(&buf);
    match serde_json::from_str::<Value>(&text) {
        Ok(v) => error_message(&v).unwrap_or_else(|| truncate(&text)),
        Err(_) => truncate(text.trim()),
    }
}
