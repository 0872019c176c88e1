//! A plain-text endpoint served beside a run: every `GET` answers the text a function
//! renders at that moment (`bench --metrics-listen ADDR` serves the run's live metrics in
//! Prometheus' format). Its own thread and runtime; stopped when the handle drops.

use std::net::SocketAddr;
use std::sync::Arc;

use bytes::Bytes;
use http_body_util::Full;

use super::HttpError;

/// The function a [`TextListener`] renders each answer with.
pub type RenderFn = dyn Fn() -> String + Send + Sync;

/// A running listener; dropping it stops it.
#[derive(Debug)]
pub struct TextListener {
    addr: SocketAddr,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl TextListener {
    /// Listens on `addr` (port 0: any free port) and answers every request with `render()`
    /// as `text/plain; version=0.0.4`.
    pub fn start(addr: SocketAddr, render: Arc<RenderFn>) -> Result<TextListener, HttpError> {
        let std_listener = std::net::TcpListener::bind(addr)
            .map_err(|e| HttpError::Request(format!("cannot listen on {addr}: {e}")))?;
        let bound = std_listener
            .local_addr()
            .map_err(|e| HttpError::Request(e.to_string()))?;
        std_listener
            .set_nonblocking(true)
            .map_err(|e| HttpError::Request(e.to_string()))?;
        let (tx, mut rx) = tokio::sync::oneshot::channel::<()>();
        let thread = std::thread::Builder::new()
            .name("servebench-metrics-listen".into())
            .spawn(move || {
                let Ok(rt) = tokio::runtime::Builder::new_current_thread().enable_all().build() else {
                    return;
                };
                rt.block_on(async move {
                    let Ok(listener) = tokio::net::TcpListener::from_std(std_listener) else {
                        return;
                    };
                    loop {
                        tokio::select! {
                            _ = &mut rx => return,
                            accepted = listener.accept() => {
                                let Ok((stream, _)) = accepted else { continue };
                                let render = Arc::clone(&render);
                                tokio::spawn(async move {
                                    let svc = hyper::service::service_fn(move |_req| {
                                        let body = render();
                                        async move {
                                            hyper::Response::builder()
                                                .header(hyper::header::CONTENT_TYPE, "text/plain; version=0.0.4; charset=utf-8")
                                                .body(Full::new(Bytes::from(body)))
                                        }
                                    });
                                    let io = hyper_util::rt::TokioIo::new(stream);
                                    let _ = hyper::server::conn::http1::Builder::new()
                                        .serve_connection(io, svc)
                                        .await;
                                });
                            }
                        }
                    }
                });
            })
            .map_err(|e| HttpError::Request(e.to_string()))?;
        Ok(TextListener {
            addr: bound,
            stop: Some(tx),
            thread: Some(thread),
        })
    }

    /// The address it listens on.
    pub fn local_addr(&self) -> SocketAddr {
        self.addr
    }
}

impl Drop for TextListener {
    fn drop(&mut self) {
        if let Some(tx) = self.stop.take() {
            let _ = tx.send(());
        }
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}
