//! Streams of messages: a call's notifications followed by its response,
//! and the long-lived `subscriptions/listen` stream. Transports frame each
//! [`Frame`] their way (SSE events, lines).
//!
//! Dropping a stream (the client went away) drops what it drives: the
//! method's future, so closing the stream cancels the call.

use std::collections::VecDeque;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::Poll;
use std::time::Duration;

use bytes::Bytes;
use futures_util::StreamExt;
use futures_util::stream;
use rpc::{Execution, Executor};
use tokio::sync::{broadcast, mpsc, watch};

use super::listen_slots::ListenSlot;
use super::reply::{Frame, MessageStream};
use crate::changes::ListChange;
use crate::protocol::meta;

/// How a call ended: its JSON-RPC response (`None` when it was cancelled:
/// a stream ends without one) and the executions for after-response listeners.
pub(crate) struct Finished {
    pub response: Option<Vec<u8>>,
    pub executions: Vec<Execution>,
    /// The error code of an error response (decides the status of a plain reply).
    pub error_code: Option<i32>,
    /// The scopes the caller's credential lacked for the call (its tool's
    /// `scopes(...)`): a plain reply is a 403 the client may step up from.
    pub needs_scopes: Option<&'static [&'static str]>,
    /// The call was over its client's rate: a plain reply is a 429 with
    /// this `Retry-After`.
    pub retry_after: Option<u32>,
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
    /// a stream.
    Streaming { call: CallFuture, events: mpsc::Receiver<Bytes>, first: Option<Bytes> },
}

/// Drives `call` until it finishes, emits its first event, or `patience`
/// passes without either (then the reply commits to a stream, so keep-alives
/// can hold the connection open).
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

/// The stream of a call still running: its notifications as they come,
/// then its response; keep-alives while it is quiet.
pub(crate) fn call_stream(
    call: CallFuture,
    events: mpsc::Receiver<Bytes>,
    first: Option<Bytes>,
    executor: Executor,
    keep_alive: Duration,
) -> MessageStream {
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
        queue: first.into_iter().collect(),
        call: Some(call),
        events,
        tick,
        after: AfterSent { executor, executions: Vec::new() },
    };
    Box::pin(stream::unfold(state, |mut s| async move {
        loop {
            if let Some(frame) = s.queue.pop_front() {
                return Some((Frame::Message(frame), s));
            }
            let Some(call) = s.call.as_mut() else {
                s.after.fire();
                return None;
            };
            tokio::select! {
                biased;
                Some(frame) = s.events.recv() => s.queue.push_back(frame),
                finished = call => {
                    s.call = None;
                    while let Ok(frame) = s.events.try_recv() {
                        s.queue.push_back(frame);
                    }
                    if let Some(response) = finished.response {
                        s.queue.push_back(Bytes::from(response));
                    }
                    s.after.executions = finished.executions;
                }
                _ = s.tick.tick() => return Some((Frame::KeepAlive, s)),
            }
        }
    }))
}

/// The stream of a finished call that emitted events before its response.
pub(crate) fn finished_stream(events: Vec<Bytes>, finished: Finished, executor: Executor) -> MessageStream {
    let mut frames = events;
    if let Some(response) = finished.response {
        frames.push(Bytes::from(response));
    }
    let after = AfterSent { executor, executions: finished.executions };
    let end = stream::once(async move {
        drop(after);
        None
    });
    Box::pin(
        stream::iter(frames.into_iter().map(|f| Some(Frame::Message(f)))).chain(end).filter_map(std::future::ready),
    )
}

/// What a `subscriptions/listen` stream delivers.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct ListenFilter {
    pub tools: bool,
    pub prompts: bool,
    pub resources: bool,
    /// The resources whose updates it delivers (`resourceSubscriptions`).
    pub uris: Vec<String>,
}

impl ListenFilter {
    fn wants(&self, change: ListChange) -> bool {
        match change {
            ListChange::Tools => self.tools,
            ListChange::Prompts => self.prompts,
            ListChange::Resources => self.resources,
        }
    }
}

/// Resolves when any of `signals` is set (or its sender is gone); never
/// without signals.
pub(crate) async fn any_set(signals: &mut [watch::Receiver<bool>]) {
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

/// `notifications/resources/updated` of `uri`, with `meta` (a JSON object:
/// the subscription id of a listen stream) when given.
pub(crate) fn resource_updated(uri: &str, meta: Option<&str>) -> Bytes {
    let uri = serde_json::to_string(uri).unwrap_or_default();
    let meta = meta.map(|meta| format!(",\"_meta\":{meta}")).unwrap_or_default();
    Bytes::from(format!(
        "{{\"jsonrpc\":\"2.0\",\"method\":\"notifications/resources/updated\",\"params\":{{\"uri\":{uri}{meta}}}}}"
    ))
}

/// What a listen stream holds: its subscription, what it delivers, and
/// when it ends.
pub(crate) struct Listen {
    /// The listen request's JSON-RPC id, raw (the subscription id).
    pub id: String,
    pub acknowledgement: Vec<u8>,
    pub filter: ListenFilter,
    pub changes: broadcast::Receiver<ListChange>,
    /// Resource updates (their URIs).
    pub updates: broadcast::Receiver<Arc<str>>,
    /// The endpoint's close, the server's shutdown.
    pub closed: Vec<watch::Receiver<bool>>,
    pub keep_alive: Duration,
    /// The stream's place under the endpoint's limits, for as long as it is open.
    pub slot: ListenSlot,
}

/// The `subscriptions/listen` stream: the acknowledgement, then every
/// requested change, each tagged with the subscription id; a final response
/// when the server closes it, nothing when the client goes away.
pub(crate) fn listen_stream(listen: Listen) -> MessageStream {
    struct State {
        _slot: ListenSlot,
        queue: VecDeque<Bytes>,
        tagged_meta: String,
        id: String,
        filter: ListenFilter,
        changes: broadcast::Receiver<ListChange>,
        updates: broadcast::Receiver<Arc<str>>,
        closed: Vec<watch::Receiver<bool>>,
        tick: tokio::time::Interval,
        done: bool,
    }
    impl State {
        fn change_frame(&self, change: ListChange) -> Bytes {
            Bytes::from(format!(
                "{{\"jsonrpc\":\"2.0\",\"method\":\"{}\",\"params\":{{\"_meta\":{}}}}}",
                change.method(),
                self.tagged_meta
            ))
        }

        fn update_frame(&self, uri: &str) -> Bytes {
            resource_updated(uri, Some(&self.tagged_meta))
        }

        fn farewell(&self) -> Bytes {
            Bytes::from(format!(
                "{{\"jsonrpc\":\"2.0\",\"id\":{},\"result\":{{\"resultType\":\"complete\",\"_meta\":{}}}}}",
                self.id, self.tagged_meta
            ))
        }
    }
    let Listen { id, acknowledgement, filter, changes, updates, closed, keep_alive, slot } = listen;
    let mut tick = tokio::time::interval_at(tokio::time::Instant::now() + keep_alive, keep_alive);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let state = State {
        _slot: slot,
        queue: VecDeque::from([Bytes::from(acknowledgement)]),
        tagged_meta: format!("{{\"{}\":{id}}}", meta::SUBSCRIPTION_ID),
        id,
        filter,
        changes,
        updates,
        closed,
        tick,
        done: false,
    };
    Box::pin(stream::unfold(state, |mut s| async move {
        if let Some(frame) = s.queue.pop_front() {
            return Some((Frame::Message(frame), s));
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
                    return Some((Frame::Message(farewell), s));
                }
                received = s.changes.recv() => match received {
                    Ok(change) if s.filter.wants(change) => {
                        let frame = s.change_frame(change);
                        return Some((Frame::Message(frame), s));
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
                            return Some((Frame::Message(frame), s));
                        }
                    }
                    Err(broadcast::error::RecvError::Closed) => {
                        s.done = true;
                        let farewell = s.farewell();
                        return Some((Frame::Message(farewell), s));
                    }
                },
                received = s.updates.recv(), if !s.filter.uris.is_empty() => match received {
                    Ok(uri) if s.filter.uris.iter().any(|u| **u == *uri) => {
                        let frame = s.update_frame(&uri);
                        return Some((Frame::Message(frame), s));
                    }
                    Ok(_) => {}
                    Err(broadcast::error::RecvError::Lagged(_)) => {
                        // Updates were missed: every subscribed resource may
                        // have changed, so each is announced.
                        let frames: Vec<Bytes> = s.filter.uris.iter().map(|uri| s.update_frame(uri)).collect();
                        s.queue.extend(frames);
                        if let Some(frame) = s.queue.pop_front() {
                            return Some((Frame::Message(frame), s));
                        }
                    }
                    Err(broadcast::error::RecvError::Closed) => {}
                },
                _ = s.tick.tick() => return Some((Frame::KeepAlive, s)),
            }
        }
    }))
}
