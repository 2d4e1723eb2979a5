//! Server-Sent Events response bodies: a request's notifications followed
//! by its response, and the long-lived `subscriptions/listen` stream.
//!
//! Dropping a body (the client went away) drops what it drives: the
//! method's future, so closing the stream cancels the call.

use std::collections::VecDeque;
use std::convert::Infallible;
use std::future::Future;
use std::pin::Pin;
use std::task::Poll;
use std::time::Duration;

use bytes::Bytes;
use futures_util::StreamExt;
use futures_util::stream;
use http::{HeaderValue, Response, StatusCode, header};
use http_body::Frame;
use http_body_util::{BodyExt, StreamBody};
use rpc::server::body::ResponseBody;
use rpc::{Execution, Executor};
use tokio::sync::{broadcast, mpsc, watch};

use super::listen_slots::ListenSlot;
use crate::changes::ListChange;
use crate::protocol::meta;

/// One SSE `message` event carrying `json`.
pub(crate) fn event(json: &[u8]) -> Bytes {
    let mut out = Vec::with_capacity(json.len() + 24);
    out.extend_from_slice(b"event: message\ndata: ");
    out.extend_from_slice(json);
    out.extend_from_slice(b"\n\n");
    Bytes::from(out)
}

/// A response body of `frames`.
fn into_body(frames: impl futures_util::Stream<Item = Bytes> + Send + 'static) -> ResponseBody {
    BodyExt::boxed_unsync(StreamBody::new(frames.map(|b| Ok::<_, Infallible>(Frame::data(b)))))
}

/// An SSE comment: clients ignore it; proxies see traffic.
const KEEP_ALIVE: &[u8] = b": keep-alive\n\n";

/// A `200 text/event-stream` response with the headers SSE needs.
pub(crate) fn response(body: ResponseBody) -> Response<ResponseBody> {
    let mut response = Response::new(body);
    *response.status_mut() = StatusCode::OK;
    let headers = response.headers_mut();
    headers.insert(header::CONTENT_TYPE, HeaderValue::from_static("text/event-stream"));
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache, no-transform"));
    headers.insert("x-accel-buffering", HeaderValue::from_static("no"));
    response
}

/// How a call ended: its JSON-RPC response (`None` when it was cancelled:
/// the stream ends without one) and the executions for after-response listeners.
pub(crate) struct Finished {
    pub response: Option<Vec<u8>>,
    pub executions: Vec<Execution>,
    /// The error code of an error response (decides the HTTP status of a
    /// plain response).
    pub error_code: Option<i32>,
}

/// A call in progress.
pub(crate) type CallFuture = Pin<Box<dyn Future<Output = Finished> + Send + 'static>>;

/// Runs the executor's after-response work once: when the stream ends,
/// or when it is dropped first.
struct AfterSent {
    executor: Executor,
    executions: Vec<Execution>,
}

impl AfterSent {
    fn fire(&mut self) {
        let executions = std::mem::take(&mut self.executions);
        if !executions.is_empty() {
            self.executor.response_sent(executions);
        }
    }
}

impl Drop for AfterSent {
    fn drop(&mut self) {
        self.fire();
    }
}

/// What [`start`] saw first.
pub(crate) enum Started {
    /// The call finished; `events` are what it emitted meanwhile.
    Finished { finished: Finished, events: Vec<Bytes> },
    /// The call emitted an event (or ran past the patience): it goes on in
    /// an SSE body.
    Streaming { call: CallFuture, events: mpsc::Receiver<Bytes>, first: Option<Bytes> },
}

/// Drives `call` until it finishes, emits its first event, or `patience`
/// passes without either (then the response commits to SSE, so keep-alive
/// comments can hold the connection open).
pub(crate) async fn start(mut call: CallFuture, mut events: mpsc::Receiver<Bytes>, patience: Duration) -> Started {
    let mut timer = std::pin::pin!(tokio::time::sleep(patience));
    let first = std::future::poll_fn(|cx| {
        if let Poll::Ready(Some(frame)) = events.poll_recv(cx) {
            return Poll::Ready(Err(Some(frame)));
        }
        if let Poll::Ready(finished) = call.as_mut().poll(cx) {
            return Poll::Ready(Ok(finished));
        }
        if timer.as_mut().poll(cx).is_ready() {
            return Poll::Ready(Err(None));
        }
        Poll::Pending
    })
    .await;
    match first {
        Ok(finished) => {
            let mut queued = Vec::new();
            while let Ok(frame) = events.try_recv() {
                queued.push(frame);
            }
            Started::Finished { finished, events: queued }
        }
        Err(first) => Started::Streaming { call, events, first },
    }
}

/// The SSE body of a streaming call: its notifications as they come, then
/// its response; keep-alive comments while it is quiet.
pub(crate) fn call_body(
    call: CallFuture,
    events: mpsc::Receiver<Bytes>,
    first: Option<Bytes>,
    executor: Executor,
    keep_alive: Duration,
) -> ResponseBody {
    struct State {
        queue: VecDeque<Bytes>,
        call: Option<CallFuture>,
        events: mpsc::Receiver<Bytes>,
        tick: tokio::time::Interval,
        after: AfterSent,
    }
    let mut tick = tokio::time::interval_at(tokio::time::Instant::now() + keep_alive, keep_alive);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let state = State {
        queue: first.map(|f| event(&f)).into_iter().collect(),
        call: Some(call),
        events,
        tick,
        after: AfterSent { executor, executions: Vec::new() },
    };
    let frames = stream::unfold(state, |mut s| async move {
        loop {
            if let Some(frame) = s.queue.pop_front() {
                return Some((frame, s));
            }
            let Some(call) = s.call.as_mut() else {
                s.after.fire();
                return None;
            };
            tokio::select! {
                biased;
                Some(frame) = s.events.recv() => s.queue.push_back(event(&frame)),
                finished = call => {
                    s.call = None;
                    while let Ok(frame) = s.events.try_recv() {
                        s.queue.push_back(event(&frame));
                    }
                    if let Some(response) = finished.response {
                        s.queue.push_back(event(&response));
                    }
                    s.after.executions = finished.executions;
                }
                _ = s.tick.tick() => return Some((Bytes::from_static(KEEP_ALIVE), s)),
            }
        }
    });
    into_body(frames)
}

/// The SSE body of a finished call that emitted events before its response.
pub(crate) fn finished_body(events: Vec<Bytes>, finished: Finished, executor: Executor) -> ResponseBody {
    let mut frames: Vec<Bytes> = events.iter().map(|f| event(f)).collect();
    if let Some(response) = &finished.response {
        frames.push(event(response));
    }
    let after = AfterSent { executor, executions: finished.executions };
    let frames = stream::iter(frames).chain(stream::once(async move {
        drop(after);
        Bytes::new()
    }));
    into_body(frames.filter(|b| std::future::ready(!b.is_empty())))
}

/// What a `subscriptions/listen` stream delivers.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct ListenFilter {
    pub tools: bool,
    pub prompts: bool,
    pub resources: bool,
}

impl ListenFilter {
    fn wants(self, change: ListChange) -> bool {
        match change {
            ListChange::Tools => self.tools,
            ListChange::Prompts => self.prompts,
            ListChange::Resources => self.resources,
        }
    }
}

/// Resolves when any of `signals` is set (or its sender is gone); never
/// without signals.
async fn any_set(signals: &mut [watch::Receiver<bool>]) {
    if signals.is_empty() {
        return std::future::pending().await;
    }
    let waits: Vec<_> = signals
        .iter_mut()
        .map(|s| {
            Box::pin(async move {
                let _ = s.wait_for(|set| *set).await;
            })
        })
        .collect();
    futures_util::future::select_all(waits).await;
}

/// The body of a `subscriptions/listen` stream: the acknowledgement, then
/// every requested change, each tagged with the subscription id (the
/// listen request's JSON-RPC id, raw); a final response when the server
/// closes it (`closed`: the endpoint's close, the server's shutdown),
/// nothing when the client goes away.
pub(crate) fn listen_body(
    id: String,
    acknowledgement: Vec<u8>,
    filter: ListenFilter,
    changes: broadcast::Receiver<ListChange>,
    closed: Vec<watch::Receiver<bool>>,
    keep_alive: Duration,
    slot: ListenSlot,
) -> ResponseBody {
    struct State {
        /// The stream's place under the endpoint's limits, for as long as it is open.
        _slot: ListenSlot,
        queue: VecDeque<Bytes>,
        tagged_meta: String,
        id: String,
        filter: ListenFilter,
        changes: broadcast::Receiver<ListChange>,
        closed: Vec<watch::Receiver<bool>>,
        tick: tokio::time::Interval,
        done: bool,
    }
    impl State {
        fn change_frame(&self, change: ListChange) -> Bytes {
            let frame = format!(
                "{{\"jsonrpc\":\"2.0\",\"method\":\"{}\",\"params\":{{\"_meta\":{}}}}}",
                change.method(),
                self.tagged_meta
            );
            event(frame.as_bytes())
        }

        fn farewell(&self) -> Bytes {
            let response = format!(
                "{{\"jsonrpc\":\"2.0\",\"id\":{},\"result\":{{\"resultType\":\"complete\",\"_meta\":{}}}}}",
                self.id, self.tagged_meta
            );
            event(response.as_bytes())
        }
    }
    let mut tick = tokio::time::interval_at(tokio::time::Instant::now() + keep_alive, keep_alive);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let state = State {
        _slot: slot,
        queue: VecDeque::from([event(&acknowledgement)]),
        tagged_meta: format!("{{\"{}\":{id}}}", meta::SUBSCRIPTION_ID),
        id,
        filter,
        changes,
        closed,
        tick,
        done: false,
    };
    let frames = stream::unfold(state, |mut s| async move {
        if let Some(frame) = s.queue.pop_front() {
            return Some((frame, s));
        }
        if s.done {
            return None;
        }
        loop {
            tokio::select! {
                biased;
                () = any_set(&mut s.closed) => {
                    s.done = true;
                    let farewell = s.farewell();
                    return Some((farewell, s));
                }
                received = s.changes.recv() => match received {
                    Ok(change) if s.filter.wants(change) => {
                        let frame = s.change_frame(change);
                        return Some((frame, s));
                    }
                    Ok(_) => {}
                    Err(broadcast::error::RecvError::Lagged(_)) => {
                        // Changes were missed: which kinds is unknown, so every
                        // requested kind is announced (a list-changed
                        // notification only says "fetch again").
                        for change in [ListChange::Tools, ListChange::Prompts, ListChange::Resources] {
                            if s.filter.wants(change) {
                                let frame = s.change_frame(change);
                                s.queue.push_back(frame);
                            }
                        }
                        if let Some(frame) = s.queue.pop_front() {
                            return Some((frame, s));
                        }
                    }
                    Err(broadcast::error::RecvError::Closed) => {
                        s.done = true;
                        let farewell = s.farewell();
                        return Some((farewell, s));
                    }
                },
                _ = s.tick.tick() => return Some((Bytes::from_static(KEEP_ALIVE), s)),
            }
        }
    });
    into_body(frames)
}
