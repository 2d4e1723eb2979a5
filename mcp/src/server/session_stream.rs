//! The handshake era's own stream of a session (HTTP `GET` with
//! `Mcp-Session-Id`): `notifications/resources/updated` for the resources
//! the session subscribed to (`resources/subscribe`, on any instance: the
//! subscriptions are read from the session store when an update arrives),
//! keep-alives, and its end when the session ends or the server shuts down.
//!
//! It needs a change hub ([`ListChanges`](crate::ListChanges)); without one
//! the server has nothing to send and answers `405`. Streams count against
//! the same limits as `subscriptions/listen` streams.

use std::sync::Arc;
use std::time::Duration;

use futures_util::stream;
use tokio::sync::{broadcast, watch};

use super::handshake::session_of;
use super::incoming::Incoming;
use super::listen_slots::{ListenSlot, Refused};
use super::reply::{Frame, Reply, Status};
use super::state::Inner;
use crate::call::ProtocolError;
use crate::session::SessionStore;

/// Opens the stream of the session `incoming` names.
pub(crate) async fn open(inner: &Arc<Inner>, endpoint: &str, incoming: &Incoming<'_>) -> Reply {
    let Some(changes) = &inner.list_changes else {
        // Transports offer the stream only with a hub (HTTP answers 405).
        let error =
            ProtocolError::new(rpc::error::code::INVALID_REQUEST, "this server sends nothing on a stream of its own");
        return Reply::error(Status::BadRequest, None, &error);
    };
    if !incoming.accepts.stream {
        let error = ProtocolError::new(
            rpc::error::code::INVALID_REQUEST,
            "Not Acceptable: GET answers with a text/event-stream",
        );
        return Reply::error(Status::NotAcceptable, None, &error);
    }
    let session = match session_of(inner, endpoint, incoming, None).await {
        Ok((session, _)) => session,
        Err(reply) => return reply,
    };
    let slot = match inner.listen_slots.take(&incoming.caller.limit_key()) {
        Ok(slot) => slot,
        Err(refused) => {
            let limit = match refused {
                Refused::Client(limit) | Refused::Endpoint(limit) => limit,
            };
            let error = ProtocolError::new(
                rpc::error::code::INVALID_REQUEST,
                format!("Too many open streams (at most {limit}): close one first"),
            );
            return Reply::error(Status::TooManyRequests, None, &error).retry_after(5);
        }
    };
    let mut closed = vec![changes.closed()];
    closed.extend(incoming.closing.cloned());
    Reply::Stream(stream(Watch {
        session: session.id.clone(),
        sessions: Arc::clone(&inner.sessions),
        ttl: inner.config.session_ttl,
        updates: changes.subscribe_updates(),
        closed,
        keep_alive: inner.config.keep_alive,
        slot,
    }))
}

/// What a session's stream holds.
struct Watch {
    session: String,
    sessions: Arc<dyn SessionStore>,
    ttl: Duration,
    updates: broadcast::Receiver<Arc<str>>,
    closed: Vec<watch::Receiver<bool>>,
    keep_alive: Duration,
    slot: ListenSlot,
}

fn stream(watch: Watch) -> super::reply::MessageStream {
    struct State {
        watch: Watch,
        tick: tokio::time::Interval,
    }
    let mut tick = tokio::time::interval_at(tokio::time::Instant::now() + watch.keep_alive, watch.keep_alive);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    Box::pin(stream::unfold(State { watch, tick }, |mut s| async move {
        let _held = &s.watch.slot;
        loop {
            let uri: Arc<str> = tokio::select! {
                biased;
                () = super::stream::any_set(&mut s.watch.closed) => return None,
                received = s.watch.updates.recv() => match received {
                    Ok(uri) => uri,
                    // Missed updates cannot be named (a session keeps digests
                    // of its URIs): the client reads again when it reconnects.
                    Err(broadcast::error::RecvError::Lagged(_)) => continue,
                    Err(broadcast::error::RecvError::Closed) => return None,
                },
                _ = s.tick.tick() => return Some((Frame::KeepAlive, s)),
            };
            // The subscriptions as they are now (changed on any instance); a
            // session that ended ends its stream.
            let session = match s.watch.sessions.get(&s.watch.session, s.watch.ttl).await {
                Ok(Some(session)) => session,
                Ok(None) => return None,
                // The store does not answer: this update is not delivered.
                Err(_) => continue,
            };
            if session.subscriptions.contains(&super::methods::subscription_key(&uri)) {
                return Some((Frame::Message(super::stream::resource_updated(&uri, None)), s));
            }
        }
    }))
}
