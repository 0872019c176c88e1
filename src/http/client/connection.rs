//! Connections to the server: connecting, the pool of idle keep-alive connections, and
//! building each request's HTTP head.

use std::sync::Arc;

use bytes::Bytes;
use http_body_util::Full;
use hyper::Request;
use hyper_util::rt::TokioIo;

use super::failure::{fail, Failure};
use super::{Sender, Shared, MAX_IDLE, REQUEST_ID_PREFIX};
use crate::http::stamped::{ReadStamp, StampedTcp};
use crate::http::Endpoint;
use crate::record::ErrorKind;

/// One keep-alive connection: the request sender and the times its reads returned data.
pub(super) struct Conn {
    pub(super) sender: Sender,
    pub(super) stamp: Arc<ReadStamp>,
}

pub(super) async fn connect(shared: &Shared) -> Result<Conn, Failure> {
    let t = &shared.target;
    let tcp = tokio::time::timeout(
        shared.config.connect_timeout,
        tokio::net::TcpStream::connect((t.host.as_str(), t.port)),
    )
    .await
    .map_err(|_| {
        fail(
            ErrorKind::Connect,
            format!("connect to {} timed out", t.authority),
        )
    })?
    .map_err(|e| {
        fail(
            ErrorKind::Connect,
            format!("connect to {}: {e}", t.authority),
        )
    })?;
    let _ = tcp.set_nodelay(true);
    let stamp = Arc::new(ReadStamp::new(shared.origin));
    let io = TokioIo::new(StampedTcp::new(tcp, Arc::clone(&stamp)));
    let (sender, conn) = hyper::client::conn::http1::handshake(io)
        .await
        .map_err(|e| fail(ErrorKind::Connect, format!("HTTP handshake: {e}")))?;
    tokio::spawn(async move {
        let _ = conn.await;
    });
    Ok(Conn { sender, stamp })
}

/// Opens `count` connections concurrently into the idle pool; returns how many opened.
pub(super) async fn preconnect(shared: &Arc<Shared>, count: usize) -> usize {
    let mut set = tokio::task::JoinSet::new();
    for _ in 0..count {
        let shared = Arc::clone(shared);
        set.spawn(async move { connect(&shared).await.ok() });
    }
    let mut opened = 0;
    while let Some(joined) = set.join_next().await {
        if let Ok(Some(conn)) = joined {
            give_back(shared, conn);
            opened += 1;
        }
    }
    opened
}

/// An idle pooled connection (its read stamps forgotten), or `None`.
pub(super) async fn pooled(shared: &Shared) -> Option<Conn> {
    loop {
        let candidate = shared.idle.lock().ok()?.pop();
        let mut conn = candidate?;
        if conn.sender.is_closed() {
            continue;
        }
        if conn.sender.ready().await.is_ok() {
            conn.stamp.reset();
            return Some(conn);
        }
    }
}

pub(super) fn give_back(shared: &Shared, conn: Conn) {
    if conn.sender.is_closed() {
        return;
    }
    if let Ok(mut idle) = shared.idle.lock() {
        if idle.len() < MAX_IDLE {
            idle.push(conn);
        }
    }
}

pub(super) fn build_request(
    shared: &Shared,
    id: u64,
    body: &Bytes,
) -> Result<Request<Full<Bytes>>, Failure> {
    let t = &shared.target;
    let endpoint = shared.config.endpoint;
    let accept = if endpoint.streams() {
        "text/event-stream"
    } else {
        "application/json"
    };
    let mut builder = Request::post(format!("{}{}", t.base_path, endpoint.path()))
        .header(hyper::header::HOST, t.authority.as_str())
        .header(hyper::header::CONTENT_TYPE, "application/json")
        .header(hyper::header::ACCEPT, accept)
        .header("x-request-id", format!("{REQUEST_ID_PREFIX}{id}"));
    if let Some(trace) = &shared.config.trace {
        builder = builder.header("traceparent", trace.traceparent(id));
    }
    if endpoint == Endpoint::Messages {
        // Anthropic's headers: the key as `x-api-key`, the API version always.
        builder = builder.header(
            "anthropic-version",
            shared.config.anthropic_version.as_str(),
        );
        if let Some(key) = &shared.config.api_key {
            builder = builder.header("x-api-key", key.as_str());
        }
    } else if let Some(key) = &shared.config.api_key {
        builder = builder.header(hyper::header::AUTHORIZATION, format!("Bearer {key}"));
    }
    builder
        .body(Full::new(body.clone()))
        .map_err(|e| fail(ErrorKind::Other, format!("building the request: {e}")))
}
