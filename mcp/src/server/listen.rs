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

/// The most resources one stream subscribes to.
pub(crate) const MAX_SUBSCRIPTIONS: usize = 100;

/// `resourceSubscriptions`: the URIs, each at most
/// [`MAX_URI_BYTES`](crate::changes::MAX_URI_BYTES), at most
/// [`MAX_SUBSCRIPTIONS`] of them, repeated ones once.
fn resource_subscriptions(asked: &Value) -> Result<Vec<String>, String> {
    let Some(listed) = asked.get("resourceSubscriptions") else { return Ok(Vec::new()) };
    let Some(listed) = listed.as_array() else {
        return Err("notifications.resourceSubscriptions must be an array of resource URIs".into());
    };
    if listed.len() > MAX_SUBSCRIPTIONS {
        return Err(format!("a stream subscribes to at most {MAX_SUBSCRIPTIONS} resources; open another for more"));
    }
    let mut uris: Vec<String> = Vec::with_capacity(listed.len());
    for uri in listed {
        match uri.as_str() {
            Some(uri) if !uri.is_empty() && uri.len() <= crate::changes::MAX_URI_BYTES => {
                if !uris.iter().any(|u| u == uri) {
                    uris.push(uri.to_owned());
                }
            }
            _ => {
                return Err(format!(
                    "each of notifications.resourceSubscriptions is a URI of 1 to {} bytes",
                    crate::changes::MAX_URI_BYTES
                ));
            }
        }
    }
    Ok(uris)
}

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
    let uris = match resource_subscriptions(&asked) {
        Ok(uris) => uris,
        Err(message) => {
            let error = ProtocolError::new(rpc::error::code::INVALID_PARAMS, message);
            return Reply::error(Status::BadRequest, Some(id), &error);
        }
    };
    // Kinds the server does not serve are left out of the acknowledgement
    // (the client learns they are not served).
    let filter = ListenFilter {
        tools: wants("toolsListChanged"),
        prompts: wants("promptsListChanged") && inner.served.prompts,
        resources: wants("resourcesListChanged") && inner.served.resources,
        uris: if inner.served.resources { uris } else { Vec::new() },
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
    if !filter.uris.is_empty() {
        honoured.insert("resourceSubscriptions".into(), json!(filter.uris));
    }
    let mut params = Map::new();
    params.insert(
        "_meta".into(),
        json!({ meta::SUBSCRIPTION_ID: serde_json::from_str::<Value>(id.get()).unwrap_or(Value::Null) }),
    );
    params.insert("notifications".into(), Value::Object(honoured));
    let ack = json!({"jsonrpc": "2.0", "method": "notifications/subscriptions/acknowledged", "params": params});
    let mut closed = vec![changes.closed()];
    closed.extend(incoming.closing.cloned());
    Reply::Stream(stream::listen_stream(Listen {
        id: id.get().to_owned(),
        acknowledgement: serde_json::to_vec(&ack).unwrap_or_default(),
        filter,
        changes: changes.subscribe(),
        updates: changes.subscribe_updates(),
        closed,
        keep_alive: inner.config.keep_alive,
        slot,
    }))
}
