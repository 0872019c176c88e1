//! Connections to the server: connecting, the pool of idle keep-alive connections, and
//! building each request's HTTP head.

use bytes::Bytes;
use http_body_util::Full;
use hyper::Request;
use hyper_util::rt::TokioIo;

use super::stream::{fail, Failure};
use super::{Sender, Shared, MAX_IDLE, REQUEST_ID_PREFIX};
use crate::record::ErrorKind;

pub(super) async fn connect(shared: &Shared) -> Result<Sender, Failure> {
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
    let (sender, conn) = hyper::client::conn::http1::handshake(TokioIo::new(tcp))
        .await
        .map_err(|e| fail(ErrorKind::Connect, format!("HTTP handshake: {e}")))?;
    tokio::spawn(async move {
        let _ = conn.await;
    });
    Ok(sender)
}

/// An idle pooled connection, or `None`.
pub(super) async fn pooled(shared: &Shared) -> Option<Sender> {
    loop {
        let candidate = shared.idle.lock().ok()?.pop();
        let mut sender = candidate?;
        if sender.is_closed() {
            continue;
        }
        if sender.ready().await.is_ok() {
            return Some(sender);
        }
    }
}

pub(super) fn give_back(shared: &Shared, sender: Sender) {
    if sender.is_closed() {
        return;
    }
    if let Ok(mut idle) = shared.idle.lock() {
        if idle.len() < MAX_IDLE {
            idle.push(sender);
        }
    }
}

pub(super) fn build_request(
    shared: &Shared,
    id: u64,
    body: &Bytes,
) -> Result<Request<Full<Bytes>>, Failure> {
    let t = &shared.target;
    let mut builder = Request::post(format!("{}{}", t.base_path, shared.config.endpoint.path()))
        .header(hyper::header::HOST, t.authority.as_str())
        .header(hyper::header::CONTENT_TYPE, "application/json")
        .header(hyper::header::ACCEPT, "text/event-stream")
        .header("x-request-id", format!("{REQUEST_ID_PREFIX}{id}"));
    if let Some(key) = &shared.config.api_key {
        builder = builder.header(hyper::header::AUTHORIZATION, format!("Bearer {key}"));
    }
    builder
        .body(Full::new(body.clone()))
        .map_err(|e| fail(ErrorKind::Other, format!("building the request: {e}")))
}
