//! The HTTP side: the accept loop, routing of each request, error bodies, the API-key
//! check, and the generation endpoints (`/v1/completions`, `/v1/chat/completions`,
//! `/v1/responses`, `/v1/messages`) handing work to the engine; the pooling endpoints go
//! to [`super::pooling`].

use std::convert::Infallible;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc as std_mpsc;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use bytes::Bytes;
use http_body_util::BodyExt;
use hyper::body::{Body, Frame, Incoming, SizeHint};
use hyper::{Method, Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use serde_json::json;

use super::engine_loop::{Control, End, FirstWrite};
use super::openai::{parse_request, ApiError};
use super::options::{FaultKind, ServeOptions};
use super::pooling;
use super::prometheus::{clock_speed_text, inc, metrics_text, Counters};
use super::stream::{BodyError, SseBody};
use crate::engine::EngineRequest;
use crate::http::stamped::{ReadStamp, StampedTcp};
use crate::http::Endpoint;

pub(super) struct Ctx {
    pub(super) options: ServeOptions,
    pub(super) model_json: String,
    pub(super) ctrl: std_mpsc::Sender<Control>,
    pub(super) next_id: AtomicU64,
    pub(super) counter: AtomicU64,
    pub(super) counters: Arc<Counters>,
    /// The engine thread's hand-off window ([`super::handoff`]).
    pub(super) gate: Arc<super::handoff::Gate>,
    pub(super) created: u64,
    /// The finished requests, for `GET /timeline` (with `record_timeline`).
    pub(super) timeline: Option<super::served::Timeline>,
    pub(super) origin: Instant,
    pub(super) speed: f64,
}

impl Ctx {
    pub(super) fn send(&self, c: Control) -> bool {
        self.ctrl.send(c).is_ok()
    }
}

pub(super) async fn accept_loop(listener: tokio::net::TcpListener, ctx: Arc<Ctx>) {
    let slots = Arc::new(tokio::sync::Semaphore::new(
        ctx.options
            .max_connections
            .clamp(1, tokio::sync::Semaphore::MAX_PERMITS),
    ));
    loop {
        // Take a connection slot before accepting: at the cap, clients wait in the backlog.
        let Ok(slot) = Arc::clone(&slots).acquire_owned().await else {
            return;
        };
        let stream = match listener.accept().await {
            Ok((s, _)) => s,
            Err(_) => {
                // Usually out of file descriptors: back off instead of spinning.
                tokio::time::sleep(Duration::from_millis(10)).await;
                continue;
            }
        };
        let _ = stream.set_nodelay(true);
        let ctx = Arc::clone(&ctx);
        let header_timeout = ctx.options.header_read_timeout;
        // Each request's arrival is when its first bytes reached this socket (the kernel's
        // stamp on Linux), not when the handler got to run.
        let arrivals = Arc::new(ReadStamp::new(Instant::now()));
        let io = StampedTcp::new(stream, Arc::clone(&arrivals));
        tokio::spawn(async move {
            let _slot = slot;
            let svc = hyper::service::service_fn(move |req| {
                let ctx = Arc::clone(&ctx);
                let arrivals = Arc::clone(&arrivals);
                async move { Ok::<_, Infallible>(handle(req, ctx, arrivals).await) }
            });
            let _ = hyper::server::conn::http1::Builder::new()
                .timer(hyper_util::rt::TokioTimer::new())
                .header_read_timeout(header_timeout)
                .serve_connection(TokioIo::new(io), svc)
                .await;
        });
    }
}

/// A response body: a complete buffer or an SSE stream.
pub(super) enum ServerBody {
    Full(Option<Bytes>),
    Sse(Box<SseBody>),
}

impl Body for ServerBody {
    type Data = Bytes;
    type Error = BodyError;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, BodyError>>> {
        match self.get_mut() {
            ServerBody::Full(b) => Poll::Ready(b.take().map(|b| Ok(Frame::data(b)))),
            ServerBody::Sse(s) => s.poll_next(cx),
        }
    }

    fn is_end_stream(&self) -> bool {
        matches!(self, ServerBody::Full(None))
    }

    fn size_hint(&self) -> SizeHint {
        match self {
            ServerBody::Full(Some(b)) => SizeHint::with_exact(b.len() as u64),
            ServerBody::Full(None) => SizeHint::with_exact(0),
            ServerBody::Sse(_) => SizeHint::default(),
        }
    }
}

pub(super) fn full(
    status: StatusCode,
    content_type: &str,
    body: impl Into<Bytes>,
) -> Response<ServerBody> {
    let mut resp = Response::new(ServerBody::Full(Some(body.into())));
    *resp.status_mut() = status;
    if let Ok(v) = hyper::header::HeaderValue::from_str(content_type) {
        resp.headers_mut().insert(hyper::header::CONTENT_TYPE, v);
    }
    resp
}

pub(super) fn error_type(status: StatusCode) -> &'static str {
    match status.as_u16() {
        400 => "BadRequestError",
        401 => "AuthenticationError",
        404 => "NotFoundError",
        405 => "MethodNotAllowed",
        413 => "RequestTooLarge",
        503 => "ServiceUnavailable",
        _ => "InternalServerError",
    }
}

pub(super) fn error_json(status: StatusCode, message: &str) -> String {
    json!({"error": {
        "message": message,
        "type": error_type(status),
        "param": null,
        "code": status.as_u16(),
    }})
    .to_string()
}

pub(super) fn error_response(ctx: &Ctx, status: StatusCode, message: &str) -> Response<ServerBody> {
    if status.is_client_error() {
        inc(&ctx.counters.rejected, 1);
    }
    full(status, "application/json", error_json(status, message))
}

/// Whether `req` carries `Authorization: Bearer KEY` or `x-api-key: KEY` for the configured
/// key (always true without one). The scheme is matched case-insensitively, the key exactly.
pub(super) fn authorized(headers: &hyper::HeaderMap, key: Option<&str>) -> bool {
    let Some(key) = key else {
        return true;
    };
    let bearer = headers
        .get_all(hyper::header::AUTHORIZATION)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .filter_map(|v| v.split_once(' '))
        .any(|(scheme, k)| scheme.eq_ignore_ascii_case("bearer") && k.trim() == key);
    // Anthropic's clients send the key as `x-api-key`.
    bearer
        || headers
            .get_all("x-api-key")
            .iter()
            .filter_map(|v| v.to_str().ok())
            .any(|k| k.trim() == key)
}

/// `arrivals`: the connection's read stamps; the request arrived with the first read not
/// yet claimed (its head's).
pub(super) async fn handle(
    req: Request<Incoming>,
    ctx: Arc<Ctx>,
    arrivals: Arc<ReadStamp>,
) -> Response<ServerBody> {
    let arrived = arrivals.claim_instant();
    let path = req.uri().path().to_string();
    let method = req.method().clone();
    let guarded =
        path.starts_with("/v1/") || Endpoint::for_path(&path).is_some_and(|e| !e.streams());
    if guarded && !authorized(req.headers(), ctx.options.api_key.as_deref()) {
        return error_response(
            &ctx,
            StatusCode::UNAUTHORIZED,
            "missing or wrong API key: send `Authorization: Bearer KEY` (or `x-api-key: KEY`)",
        );
    }
    if path != "/metrics" && ctx.origin.elapsed() < ctx.options.ready_after {
        return error_response(
            &ctx,
            StatusCode::SERVICE_UNAVAILABLE,
            "the server is starting: the model is loading",
        );
    }
    match (method, path.as_str()) {
        (Method::GET, "/health") => full(StatusCode::OK, "text/plain", Bytes::new()),
        (Method::GET, "/metrics") => {
            let mut text = metrics_text(&ctx.counters.snapshot());
            text.push_str(&clock_speed_text(ctx.speed));
            // The engine's own metrics (the simulator's are vLLM's), asked of the engine
            // thread so they are current.
            let (tx, rx) = tokio::sync::oneshot::channel();
            if ctx.send(Control::Metrics(tx)) {
                if let Ok(Some(engine)) = rx.await {
                    text.push_str(&engine);
                }
            }
            full(StatusCode::OK, "text/plain; version=0.0.4", text)
        }
        (Method::GET, "/v1/models") => {
            let mut model = json!({
                "id": ctx.options.model,
                "object": "model",
                "created": ctx.created,
                "owned_by": "servebench",
                "root": ctx.options.model,
            });
            if let Some(len) = ctx.options.max_model_len {
                model["max_model_len"] = json!(len);
            }
            let mut data = vec![model];
            // LoRA adapters are listed after the base model, as vLLM lists them.
            for name in &ctx.options.lora_modules {
                data.push(json!({
                    "id": name,
                    "object": "model",
                    "created": ctx.created,
                    "owned_by": "servebench",
                    "root": name,
                    "parent": ctx.options.model,
                }));
            }
            let body = json!({"object": "list", "data": data}).to_string();
            full(StatusCode::OK, "application/json", body)
        }
        (Method::GET, "/timeline") if ctx.timeline.is_some() => {
            let served = ctx
                .timeline
                .as_ref()
                .map(super::served::snapshot)
                .unwrap_or_default();
            let entries = crate::http::timeline::entries(&served, ctx.origin, ctx.speed);
            full(
                StatusCode::OK,
                "application/jsonl",
                crate::http::timeline::to_jsonl(&entries),
            )
        }
        (Method::POST, "/reset_prefix_cache" | "/flush_cache") => reset_prefix_cache(&ctx).await,
        (Method::POST, p) if Endpoint::for_path(p).is_some() => {
            let endpoint = Endpoint::for_path(p).unwrap_or_default();
            generate(req, ctx, endpoint, arrived, &arrivals).await
        }
        (_, p) if Endpoint::for_path(p).is_some() => {
            error_response(&ctx, StatusCode::METHOD_NOT_ALLOWED, "method not allowed")
        }
        (_, "/health" | "/metrics" | "/v1/models" | "/reset_prefix_cache" | "/flush_cache") => {
            error_response(&ctx, StatusCode::METHOD_NOT_ALLOWED, "method not allowed")
        }
        (_, other) => error_response(&ctx, StatusCode::NOT_FOUND, &format!("no route {other}")),
    }
}

/// `POST /reset_prefix_cache` / `POST /flush_cache`: empties the engine's prefix cache.
/// 200 when it is empty afterwards (or the engine keeps none), 503 when blocks in use kept
/// it from emptying (vLLM refuses a reset while requests hold cached blocks).
pub(super) async fn reset_prefix_cache(ctx: &Ctx) -> Response<ServerBody> {
    let (tx, rx) = tokio::sync::oneshot::channel();
    if !ctx.send(Control::ResetPrefixCache(tx)) {
        return error_response(ctx, StatusCode::SERVICE_UNAVAILABLE, "engine stopped");
    }
    match rx.await {
        Ok(Some(true)) | Ok(None) => full(StatusCode::OK, "text/plain", Bytes::new()),
        Ok(Some(false)) => error_response(
            ctx,
            StatusCode::SERVICE_UNAVAILABLE,
            "the prefix cache was not fully reset: running requests hold cached blocks",
        ),
        Err(_) => error_response(ctx, StatusCode::SERVICE_UNAVAILABLE, "engine stopped"),
    }
}

pub(super) async fn generate(
    req: Request<Incoming>,
    ctx: Arc<Ctx>,
    endpoint: Endpoint,
    received: Instant,
    arrivals: &ReadStamp,
) -> Response<ServerBody> {
    let tag = req
        .headers()
        .get("x-request-id")
        .and_then(|v| v.to_str().ok())
        .map(str::to_string);
    let body = match read_body(req.into_body(), &ctx, arrivals).await {
        Ok(b) => b,
        Err(response) => return response,
    };
    if !endpoint.streams() {
        return pool(ctx, endpoint, &body, tag, received).await;
    }
    let mut parsed = match parse_request(&body, endpoint, &ctx.options) {
        Ok(p) => p,
        Err(ApiError(status, message)) => return error_response(&ctx, status, &message),
    };
    inc(&ctx.counters.requests, 1);
    let n = ctx.counter.fetch_add(1, Ordering::Relaxed) + 1;
    let fault = ctx
        .options
        .fault
        .filter(|f| n.is_multiple_of(f.every))
        .map(|f| f.kind);
    if fault == Some(FaultKind::Status500) {
        return injected_500(&ctx, n);
    }
    let id = ctx.next_id.fetch_add(1, Ordering::Relaxed);
    let answer = match (&ctx.options.answerer, parsed.prompt_text.as_deref()) {
        (Some(a), Some(prompt)) => (a.0)(prompt),
        _ => None,
    };
    let (tx, rx) = super::handoff::channel(&ctx.gate, ctx.options.stream_buffer);
    let (request, response_id) = submission(id, endpoint, &mut parsed);
    let first_write = FirstWrite::default();
    if !ctx.send(Control::Submit {
        request,
        tx,
        tag: tag.clone(),
        response_id,
        received,
        first_write: Arc::clone(&first_write),
    }) {
        return full(
            StatusCode::SERVICE_UNAVAILABLE,
            "application/json",
            error_json(StatusCode::SERVICE_UNAVAILABLE, "engine stopped"),
        );
    }
    let guard = CancelGuard {
        id,
        ctx: Arc::clone(&ctx),
        armed: true,
    };
    let sse = SseBody {
        rx,
        endpoint,
        parsed: parsed.clone(),
        fault,
        completion: 0,
        token_chunks: 0,
        done: false,
        guard,
        text_index: 0,
        answer,
        cut: None,
        cut_timer: None,
        first_write,
        script: script_for(&ctx, n, &parsed),
        typed: super::events::TypedEvents {
            endpoint,
            id,
            model: ctx.options.model.clone(),
            created: ctx.created,
            prompt_tokens: parsed.prompt_tokens,
            phase: Default::default(),
            reasoned: false,
            tool: parsed.tool.as_ref().map(|(name, _)| name.clone()),
            tool_args: String::new(),
        },
    };
    inc(&ctx.counters.open_streams, 1);
    let mut resp = respond(sse, parsed.stream).await;
    if let Some(tag) = tag.and_then(|t| hyper::header::HeaderValue::from_str(&t).ok()) {
        resp.headers_mut().insert("x-request-id", tag);
    }
    resp
}

/// The answer of request `n` when the server is set to fail it with a 500 (`--fault 500:N`).
fn injected_500(ctx: &Ctx, n: u64) -> Response<ServerBody> {
    inc(&ctx.counters.injected_faults, 1);
    full(
        StatusCode::INTERNAL_SERVER_ERROR,
        "application/json",
        error_json(
            StatusCode::INTERNAL_SERVER_ERROR,
            &format!("injected fault: request {n} fails with 500"),
        ),
    )
}

/// The request's body, read whole; the error response when it is too large or cannot be
/// read.
async fn read_body(
    body: Incoming,
    ctx: &Ctx,
    arrivals: &ReadStamp,
) -> Result<bytes::Bytes, Response<ServerBody>> {
    match http_body_util::Limited::new(body, ctx.options.max_body_bytes)
        .collect()
        .await
    {
        Ok(c) => {
            // The body's reads belong to this request: the next one arrives with a later read.
            arrivals.reset();
            Ok(c.to_bytes())
        }
        Err(e) if e.is::<http_body_util::LengthLimitError>() => Err(error_response(
            ctx,
            StatusCode::PAYLOAD_TOO_LARGE,
            &format!("request body over {} bytes", ctx.options.max_body_bytes),
        )),
        Err(e) => Err(error_response(
            ctx,
            StatusCode::BAD_REQUEST,
            &format!("reading body: {e}"),
        )),
    }
}

/// The engine request of a parsed generation request (its prompt and images moved out),
/// and the id its answer carries in the endpoint's style.
fn submission(
    id: u64,
    endpoint: Endpoint,
    parsed: &mut super::openai::Parsed,
) -> (EngineRequest, String) {
    let request = EngineRequest {
        id,
        prompt_tokens: parsed.prompt_tokens,
        prompt: parsed.prompt_text.take(),
        max_output_tokens: parsed.max_tokens,
        ignore_eos: parsed.ignore_eos,
        arrival: Duration::ZERO,
        shared_prefix_tokens: 0,
        image_patches: std::mem::take(&mut parsed.image_patches),
        shares_admission: false,
        constrained: parsed.response_schema.is_some(),
    };
    let response_id = match endpoint {
        Endpoint::Completions => format!("cmpl-{id}"),
        Endpoint::Responses => format!("resp_{id}"),
        Endpoint::Messages => format!("msg_{id}"),
        _ => format!("chatcmpl-{id}"),
    };
    (request, response_id)
}

/// The answer: the event stream, or for `stream: false` its events collected into one
/// JSON body.
async fn respond(mut sse: SseBody, stream: bool) -> Response<ServerBody> {
    if stream {
        let mut r = Response::new(ServerBody::Sse(Box::new(sse)));
        let h = r.headers_mut();
        h.insert(
            hyper::header::CONTENT_TYPE,
            hyper::header::HeaderValue::from_static("text/event-stream; charset=utf-8"),
        );
        h.insert(
            hyper::header::CACHE_CONTROL,
            hyper::header::HeaderValue::from_static("no-cache"),
        );
        return r;
    }
    match sse.collect_all().await {
        Ok(body) => full(StatusCode::OK, "application/json", body),
        Err(message) => full(
            StatusCode::INTERNAL_SERVER_ERROR,
            "application/json",
            error_json(StatusCode::INTERNAL_SERVER_ERROR, &message),
        ),
    }
}

/// Serves one pooling request whose body was read ([`super::pooling`]): one prefill-only
/// engine sequence per input, the answer when all are done.
pub(super) async fn pool(
    ctx: Arc<Ctx>,
    endpoint: Endpoint,
    body: &[u8],
    tag: Option<String>,
    received: Instant,
) -> Response<ServerBody> {
    let (seqs, top_n) = match pooling::sequences(body, endpoint, &ctx.options.model) {
        Ok(s) => s,
        Err(pooling::PoolError(status, message)) => return error_response(&ctx, status, &message),
    };
    if let Some(limit) = ctx.options.max_model_len {
        if let Some(s) = seqs.iter().find(|s| s.tokens > limit) {
            return error_response(
                &ctx,
                StatusCode::BAD_REQUEST,
                &format!(
                    "This model's maximum context length is {limit} tokens. However, an input has {} tokens.",
                    s.tokens
                ),
            );
        }
    }
    inc(&ctx.counters.requests, 1);
    let first = ctx.next_id.load(Ordering::Relaxed);
    let mut waits = Vec::with_capacity(seqs.len());
    for (i, s) in seqs.iter().enumerate() {
        let id = ctx.next_id.fetch_add(1, Ordering::Relaxed);
        let (tx, rx) = super::handoff::channel(&ctx.gate, ctx.options.stream_buffer);
        let request = EngineRequest {
            id,
            prompt_tokens: s.tokens,
            prompt: (!s.text.is_empty()).then(|| s.text.clone()),
            max_output_tokens: 1,
            ignore_eos: true,
            arrival: Duration::ZERO,
            shared_prefix_tokens: 0,
            image_patches: Vec::new(),
            // The request's inputs are rendered and tokenized together, with the first.
            shares_admission: i > 0,
            constrained: false,
        };
        if !ctx.send(Control::Submit {
            request,
            tx,
            tag: tag.clone(),
            response_id: format!("{}-{id}", endpoint.name()),
            received,
            first_write: FirstWrite::default(),
        }) {
            return error_response(&ctx, StatusCode::SERVICE_UNAVAILABLE, "engine stopped");
        }
        inc(&ctx.counters.open_streams, 1);
        let guard = CancelGuard {
            id,
            ctx: Arc::clone(&ctx),
            armed: true,
        };
        waits.push((rx, guard));
    }
    for (rx, guard) in &mut waits {
        loop {
            match rx.recv().await.and_then(|item| item.end) {
                None => continue,
                Some(End::Finished(_)) => {
                    guard.armed = false;
                    break;
                }
                Some(End::Failed { message, .. }) => {
                    guard.armed = false;
                    inc(&ctx.counters.failed, 1);
                    return full(
                        StatusCode::INTERNAL_SERVER_ERROR,
                        "application/json",
                        error_json(StatusCode::INTERNAL_SERVER_ERROR, &message),
                    );
                }
            }
        }
    }
    inc(&ctx.counters.completed, 1);
    let body = pooling::answer(
        endpoint,
        first,
        ctx.created,
        &ctx.options.model,
        &seqs,
        top_n,
    );
    let mut resp = full(StatusCode::OK, "application/json", body);
    if let Some(tag) = tag.and_then(|t| hyper::header::HeaderValue::from_str(&t).ok()) {
        resp.headers_mut().insert("x-request-id", tag);
    }
    resp
}

/// The scripted answer of request `n`, when it offered tools or asked for a response format:
/// an example that follows the schema, or, drawn at the server's invalid shares (seeded by
/// the request's number), one that breaks it.
fn script_for(ctx: &Ctx, n: u64, parsed: &super::openai::Parsed) -> Option<super::stream::Script> {
    let o = &ctx.options;
    let draw = |share: f64, salt: u64| {
        let u = crate::rng::SplitMix64::new(o.checks_seed ^ n.wrapping_mul(0x9e37_79b9) ^ salt)
            .next_u64() as f64
            / 2f64.powi(64);
        u < share
    };
    let text = |schema: &serde_json::Value, invalid: bool| {
        if invalid {
            crate::http::schema::broken(schema)
        } else {
            crate::http::schema::example(schema).to_string()
        }
    };
    match (&parsed.tool, &parsed.response_schema) {
        (Some((name, schema)), _) => Some(super::stream::Script::new(
            Some(name.clone()),
            text(schema, draw(o.invalid_tool_calls, 1)),
            parsed.max_tokens,
        )),
        (None, Some(schema)) => Some(super::stream::Script::new(
            None,
            text(schema, draw(o.invalid_json, 2)),
            parsed.max_tokens,
        )),
        (None, None) => None,
    }
}

/// Cancels the engine request when the response is dropped before its end was delivered.
pub(super) struct CancelGuard {
    pub(super) id: u64,
    pub(super) ctx: Arc<Ctx>,
    pub(super) armed: bool,
}

impl Drop for CancelGuard {
    fn drop(&mut self) {
        self.ctx
            .counters
            .open_streams
            .fetch_sub(1, Ordering::Relaxed);
        if self.armed {
            self.ctx.send(Control::Cancel(self.id));
        }
    }
}
