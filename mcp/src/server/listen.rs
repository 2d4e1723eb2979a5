//! `subscriptions/listen` (2026-07-28): a long-lived stream of the list
//! changes a client asked for, within the server's limits on open streams.

use std::sync::Arc;

use serde_json::value::RawValue;
use serde_json::{Map, Value, json};

use super::incoming::Incoming;
use super::listen_slots::Refused;
use super::reply::{Reply, Status};
use super::state::Inner;
use super::stream::{self, Listen, ListenFilter};
use crate::call::ProtocolError;
use crate::protocol::meta;

/// Seconds a client over its share of streams is asked to wait.
const RETRY_AFTER_SECS: u32 = 5;

/// Opens the stream of the changes `asked` names (`{"toolsListChanged": true}`).
pub(crate) fn listen(inner: &Arc<Inner>, id: &RawValue, asked: Option<Value>, incoming: &Incoming<'_>) -> Reply {
    let Some(changes) = &inner.list_changes else {
        let error = ProtocolError::new(rpc::error::code::METHOD_NOT_FOUND, "Method not found: subscriptions/listen");
        return Reply::error(Status::NotFound, Some(id), &error);
    };
    if !incoming.accepts.stream {
        let error = ProtocolError::new(
            rpc::error::code::INVALID_REQUEST,
            "Not Acceptable: subscriptions/listen answers with a text/event-stream",
        );
        return Reply::error(Status::NotAcceptable, Some(id), &error);
    }
    let slot = match inner.listen_slots.take(&incoming.caller.limit_key()) {
        Ok(slot) => slot,
        Err(refused) => {
            let message = match refused {
                Refused::Client(limit) => {
                    format!("Too many subscriptions/listen streams: at most {limit} per client; close one first")
                }
                Refused::Endpoint(limit) => {
                    format!("Too many subscriptions/listen streams: the server has its {limit} open; retry later")
                }
            };
            let error = ProtocolError::new(rpc::error::code::INVALID_REQUEST, message);
            return Reply::error(Status::TooManyRequests, Some(id), &error).retry_after(RETRY_AFTER_SECS);
        }
    };
    let asked = asked.unwrap_or(Value::Null);
    let wants = |field: &str| asked.get(field).and_then(Value::as_bool).unwrap_or(false);
    // Kinds the server does not serve are left out of the acknowledgement
    // (the client learns they are not served).
    let filter = ListenFilter {
        tools: wants("toolsListChanged"),
        prompts: wants("promptsListChanged") && inner.served.prompts,
        resources: wants("resourcesListChanged") && inner.served.resources,
    };
    let mut honoured = Map::new();
    for (field, on) in [
        ("toolsListChanged", filter.tools),
        ("promptsListChanged", filter.prompts),
        ("resourcesListChanged", filter.resources),
    ] {
        if on {
            honoured.insert(field.into(), Value::Bool(true));
        }
    }
    let mut params = Map::new();
    params.insert(
        "_meta".into(),
        json!({ meta::SUBSCRIPTION_ID: serde_json::from_str::<Value>(id.get()).unwrap_or(Value::Null) }),
    );
    params.insert("notifications".into(), Value::Object(honoured));
    let ack = json!({"jsonrpc": "2.0", "method": "notifications/subscriptions/acknowledged", "params": params});
    let mut closed = vec![changes.closed()];
    closed.extend(incoming.closing.clone());
    Reply::Stream(stream::listen_stream(Listen {
        id: id.get().to_owned(),
        acknowledgement: serde_json::to_vec(&ack).unwrap_or_default(),
        filter,
        changes: changes.subscribe(),
        closed,
        keep_alive: inner.config.keep_alive,
        slot,
    }))
}
