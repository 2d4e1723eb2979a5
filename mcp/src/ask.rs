//! Asking the client during a call, one API for both eras: a method that
//! takes `ctx: mcp::Context` awaits an elicitation, a sampled message or
//! the client's roots.
//!
//! * Handshake era (and stdio): a real request on the call's response
//!   stream (`elicitation/create`, ...), answered by the client's response,
//!   which the server matches to the waiting call (only within the same
//!   session or conversation). The client must take an event stream.
//! * 2026-07-28: the call returns an `InputRequiredResult` listing what it
//!   asked (`inputRequests`, by key) with an integrity-protected
//!   `requestState`; the client calls again with `inputResponses`, and the
//!   method runs again from the start: this time its question finds its
//!   answer under the same key. A method that asks must therefore ask the
//!   same questions under the same keys each time, and do nothing it cannot
//!   repeat before its last question.
//!
//! Only what the client declared is asked: a client without the
//! `elicitation` capability gets no elicitation, and the ask fails with
//! `-32021` (the method may go on without the answer).
//!
//! ```
//! use mcp::AskClient as _;
//! # pub struct Shop;
//! # impl Shop {
//! /// Deletes a product, after the user confirmed it.
//! pub async fn delete(&self, ctx: mcp::Context, id: u64) -> Result<String, rpc::RpcError> {
//!     let answer = ctx
//!         .elicit("confirm", &format!("Delete product {id}?"), serde_json::json!({
//!             "type": "object",
//!             "properties": {"confirm": {"type": "boolean"}},
//!             "required": ["confirm"]
//!         }))
//!         .await?;
//!     if answer.accepted_bool("confirm") {
//!         Ok(format!("deleted {id}"))
//!     } else {
//!         Ok("kept".into())
//!     }
//! }
//! # }
//! ```

use std::future::Future;

use rpc::{Context, RpcError};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};

use crate::call::ProtocolError;

/// What the user did with an elicitation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ElicitAction {
    /// Submitted the form (`content` holds the values).
    Accept,
    /// Refused to answer.
    Decline,
    /// Dismissed the request.
    Cancel,
}

/// The answer to an elicitation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Elicitation {
    /// What the user did.
    pub action: ElicitAction,
    /// The submitted values (with [`ElicitAction::Accept`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub content: Option<Map<String, Value>>,
}

impl Elicitation {
    /// The submitted value of `field`, if the user accepted.
    pub fn accepted(&self, field: &str) -> Option<&Value> {
        match self.action {
            ElicitAction::Accept => self.content.as_ref()?.get(field),
            _ => None,
        }
    }

    /// Whether the user accepted with `field` set to `true`.
    pub fn accepted_bool(&self, field: &str) -> bool {
        self.accepted(field).and_then(Value::as_bool).unwrap_or(false)
    }

    /// The submitted string `field`, if the user accepted.
    pub fn accepted_str(&self, field: &str) -> Option<&str> {
        self.accepted(field).and_then(Value::as_str)
    }
}

/// One of the client's roots.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Root {
    /// Its URI (`file:///...`).
    pub uri: String,
    /// Its name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
}

#[derive(Deserialize)]
struct RootsResult {
    roots: Vec<Root>,
}

/// Asking the client, on a method's [`Context`] (see the [module](self)).
pub trait AskClient {
    /// `elicitation/create` in form mode: `message` and the
    /// `requested_schema` of the form (a flat object of primitive fields).
    fn elicit(
        &self,
        key: &str,
        message: &str,
        requested_schema: Value,
    ) -> impl Future<Output = Result<Elicitation, RpcError>> + Send;

    /// `elicitation/create` in URL mode: the client opens `url` (where the
    /// user completes something out of band) and says whether it did.
    fn elicit_url(
        &self,
        key: &str,
        message: &str,
        url: &str,
        elicitation_id: &str,
    ) -> impl Future<Output = Result<Elicitation, RpcError>> + Send;

    /// `sampling/createMessage` with `params` (`messages`, `maxTokens`, ...);
    /// the `CreateMessageResult`.
    fn sample(&self, key: &str, params: Value) -> impl Future<Output = Result<Value, RpcError>> + Send;

    /// `roots/list`: the client's roots.
    fn list_roots(&self, key: &str) -> impl Future<Output = Result<Vec<Root>, RpcError>> + Send;
}

/// `-32021`: the client did not declare `capability`.
fn undeclared(capability: &str) -> RpcError {
    let protocol = ProtocolError::missing_capabilities(&[capability]);
    RpcError::new(protocol.code, format!("the client did not declare the `{capability}` capability"))
}

async fn ask(ctx: &Context, capability: &str, key: &str, method: &str, params: Value) -> Result<Value, RpcError> {
    if !ctx.can_ask() {
        return Err(rpc::ask::cannot_ask(method));
    }
    if !ctx.client_has(capability) {
        return Err(undeclared(capability));
    }
    ctx.ask_client(key, method, params).await
}

fn parse<T: for<'de> Deserialize<'de>>(method: &str, value: Value) -> Result<T, RpcError> {
    serde_json::from_value(value)
        .map_err(|e| RpcError::invalid_params(format!("the client's answer to {method} is malformed: {e}")))
}

impl AskClient for Context {
    fn elicit(
        &self,
        key: &str,
        message: &str,
        requested_schema: Value,
    ) -> impl Future<Output = Result<Elicitation, RpcError>> + Send {
        // Form mode is the default (`mode` appeared with URL mode in 2025-11-25).
        let params = json!({"message": message, "requestedSchema": requested_schema});
        let (key, method) = (key.to_owned(), "elicitation/create");
        async move { parse(method, ask(self, "elicitation", &key, method, params).await?) }
    }

    fn elicit_url(
        &self,
        key: &str,
        message: &str,
        url: &str,
        elicitation_id: &str,
    ) -> impl Future<Output = Result<Elicitation, RpcError>> + Send {
        let params = json!({"mode": "url", "message": message, "url": url, "elicitationId": elicitation_id});
        let (key, method) = (key.to_owned(), "elicitation/create");
        async move { parse(method, ask(self, "elicitation", &key, method, params).await?) }
    }

    fn sample(&self, key: &str, params: Value) -> impl Future<Output = Result<Value, RpcError>> + Send {
        let key = key.to_owned();
        async move { ask(self, "sampling", &key, "sampling/createMessage", params).await }
    }

    fn list_roots(&self, key: &str) -> impl Future<Output = Result<Vec<Root>, RpcError>> + Send {
        let key = key.to_owned();
        async move {
            let result: RootsResult = parse("roots/list", ask(self, "roots", &key, "roots/list", json!({})).await?)?;
            Ok(result.roots)
        }
    }
}
