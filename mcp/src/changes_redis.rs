//! Changes shared between instances through Redis publish/subscribe
//! (feature `redis`): a list change or resource update raised on one
//! instance reaches the `subscriptions/listen` streams open on every
//! instance sharing the Redis (and its key prefix).
//!
//! Each instance publishes what is raised on it to the channel
//! `<prefix>mcp:changes` as a small JSON message naming its origin, and
//! delivers what the others publish to its own streams (never back out).
//! The subscription reconnects on its own after Redis went away; changes
//! raised meanwhile are lost, as a change is a hint to read again, not data.

use std::time::Duration;

use futures_util::StreamExt;
use rpc::store::StoreError;
use rpc::store::redis::RedisStore;
use serde::{Deserialize, Serialize};
use tokio::sync::mpsc;

use crate::changes::{Change, ListChange, ListChanges, MAX_URI_BYTES};

/// The longest message taken from the channel, in bytes.
const MAX_MESSAGE_BYTES: usize = MAX_URI_BYTES + 256;
/// Changes raised here that wait for the publisher (beyond: dropped).
const OUTBOX: usize = 1024;
/// The pause before subscribing again after the subscription was lost.
const RECONNECT: Duration = Duration::from_secs(1);

#[derive(Serialize, Deserialize)]
struct Message {
    /// The instance that raised it.
    from: String,
    /// `tools`, `prompts`, `resources` (a list), or `updated` (a resource).
    kind: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    uri: Option<String>,
}

impl Message {
    fn of(from: &str, change: &Change) -> Message {
        let (kind, uri) = match change {
            Change::List(ListChange::Tools) => ("tools", None),
            Change::List(ListChange::Prompts) => ("prompts", None),
            Change::List(ListChange::Resources) => ("resources", None),
            Change::Resource(uri) => ("updated", Some(uri.to_string())),
        };
        Message { from: from.to_owned(), kind: kind.to_owned(), uri }
    }

    fn change(self) -> Option<Change> {
        match (self.kind.as_str(), self.uri) {
            ("tools", _) => Some(Change::List(ListChange::Tools)),
            ("prompts", _) => Some(Change::List(ListChange::Prompts)),
            ("resources", _) => Some(Change::List(ListChange::Resources)),
            ("updated", Some(uri)) if uri.len() <= MAX_URI_BYTES => Some(Change::Resource(uri.into())),
            _ => None,
        }
    }
}

impl ListChanges {
    /// Shares this hub with every instance on the Redis of `redis` (under
    /// its key prefix): changes raised here reach their streams, theirs
    /// reach the streams here. Returns once subscribed; fails if Redis
    /// cannot be reached then, or if this hub is already shared.
    pub async fn share_through_redis(&self, redis: &RedisStore) -> Result<(), StoreError> {
        let channel = redis.key("mcp:changes");
        let origin = crate::tasks::new_task_id()?;
        let mut subscription = subscribe(redis, &channel).await?;
        let (outbox, mut raised) = mpsc::channel::<Change>(OUTBOX);
        if !self.attach_relay(outbox) {
            return Err(StoreError::new("these changes are already shared through Redis"));
        }
        // Publisher: what is raised here, out.
        let publisher = redis.clone();
        let (from, to) = (origin.clone(), channel.clone());
        tokio::spawn(async move {
            while let Some(change) = raised.recv().await {
                let text = serde_json::to_string(&Message::of(&from, &change)).unwrap_or_default();
                let mut connection = publisher.connection();
                let mut command = redis::cmd("PUBLISH");
                command.arg(&to).arg(text);
                // A change that cannot be published is lost (logged by nobody:
                // the breaker already says Redis is away).
                let _ = publisher.guard("PUBLISH", command.query_async::<i64>(&mut connection)).await;
            }
        });
        // Subscriber: what the others raise, in.
        let hub = self.clone();
        let redis = redis.clone();
        tokio::spawn(async move {
            loop {
                {
                    let mut messages = subscription.on_message();
                    while let Some(message) = messages.next().await {
                        let payload = message.get_payload_bytes();
                        if payload.len() > MAX_MESSAGE_BYTES {
                            continue;
                        }
                        let Ok(message) = serde_json::from_slice::<Message>(payload) else { continue };
                        if message.from == origin {
                            continue;
                        }
                        if let Some(change) = message.change() {
                            hub.deliver(change);
                        }
                    }
                }
                // The subscription ended (Redis went away): subscribe again.
                loop {
                    tokio::time::sleep(RECONNECT).await;
                    if let Ok(again) = subscribe(&redis, &channel).await {
                        subscription = again;
                        break;
                    }
                }
            }
        });
        Ok(())
    }
}

async fn subscribe(redis: &RedisStore, channel: &str) -> Result<redis::aio::PubSub, StoreError> {
    let bound = redis.response_timeout().saturating_mul(2);
    let connect = async {
        let mut pubsub = redis.client().get_async_pubsub().await?;
        pubsub.subscribe(channel).await?;
        Ok::<_, redis::RedisError>(pubsub)
    };
    match tokio::time::timeout(bound, connect).await {
        Ok(Ok(pubsub)) => Ok(pubsub),
        Ok(Err(e)) => Err(StoreError::new(format!("redis SUBSCRIBE: {e}"))),
        Err(_) => Err(StoreError::new(format!("redis SUBSCRIBE: no answer within {bound:?}"))),
    }
}
