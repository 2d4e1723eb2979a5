//! What the server answers a message with, independent of the transport:
//! nothing, one JSON-RPC message with the outcome class each era gives it,
//! or a stream of messages. Streamable HTTP maps these to status codes,
//! headers and SSE; stdio writes lines.

use std::pin::Pin;

use bytes::Bytes;
use futures_util::Stream;
use rpc::Execution;
use rpc::jsonrpc::response::{write_error_with, write_result};
use serde_json::value::RawValue;

use crate::call::ProtocolError;
use crate::protocol::code;

/// The outcome class of a reply (HTTP's status code for it).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Status {
    /// 200.
    Ok,
    /// 202: accepted, nothing to answer.
    Accepted,
    /// 400.
    BadRequest,
    /// 404.
    NotFound,
    /// 406: the client accepts no form the reply can take.
    NotAcceptable,
    /// 403: the caller's credential lacks scopes the request needs
    /// ([`Message::needs_scopes`]).
    Forbidden,
    /// 429: too many of something; retry after a while.
    TooManyRequests,
    /// 500.
    InternalError,
    /// 503.
    ServiceUnavailable,
}

/// One JSON-RPC message (or a batch's array) to send back.
#[derive(Debug)]
#[non_exhaustive]
pub struct Message {
    /// The outcome class.
    pub status: Status,
    /// The serialised message.
    pub body: Vec<u8>,
    /// Whether it may go as one event of a stream to a client that takes
    /// only streams (results); errors of the request's shape always go as
    /// plain JSON.
    pub negotiable: bool,
    /// The executions whose after-response work waits for this message to
    /// be sent ([`McpServer::sent`](super::McpServer::sent)).
    pub executions: Vec<Execution>,
    /// The session `initialize` opened (`Mcp-Session-Id`).
    pub session: Option<String>,
    /// Seconds to wait before trying again (with [`Status::TooManyRequests`]).
    pub retry_after: Option<u32>,
    /// The scopes a call needed that the caller's credential lacks (with
    /// [`Status::Forbidden`]): HTTP answers with a challenge naming them,
    /// for the client to ask its authorization server for them.
    pub needs_scopes: Option<&'static [&'static str]>,
}

/// One item of a [`MessageStream`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Frame {
    /// A JSON-RPC message.
    Message(Bytes),
    /// Nothing happened for a while (a stream's keep-alive, for proxies).
    KeepAlive,
}

/// Messages sent as they come: a call's notifications and then its
/// response, or a `subscriptions/listen` stream. Dropping it drops what it
/// drives (a call's future: the call is cancelled).
pub type MessageStream = Pin<Box<dyn Stream<Item = Frame> + Send>>;

/// A reply.
#[non_exhaustive]
pub enum Reply {
    /// Nothing to answer (a notification, a client's response).
    Accepted,
    /// One message.
    Message(Message),
    /// A stream of messages.
    Stream(MessageStream),
}

impl std::fmt::Debug for Reply {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Reply::Accepted => f.write_str("Accepted"),
            Reply::Message(message) => f.debug_tuple("Message").field(message).finish(),
            Reply::Stream(_) => f.write_str("Stream"),
        }
    }
}

impl Reply {
    /// An error about the request (never sent as a stream event).
    pub(crate) fn error(status: Status, id: Option<&RawValue>, error: &ProtocolError) -> Reply {
        let mut body = Vec::new();
        write_error(&mut body, id, error);
        Reply::Message(Message {
            status,
            body,
            negotiable: false,
            executions: Vec::new(),
            session: None,
            retry_after: None,
            needs_scopes: None,
        })
    }

    /// A message that may go as one stream event; its after-response work
    /// waits for it to be sent.
    pub(crate) fn message(status: Status, body: Vec<u8>, executions: Vec<Execution>) -> Reply {
        Reply::Message(Message {
            status,
            body,
            negotiable: true,
            executions,
            session: None,
            retry_after: None,
            needs_scopes: None,
        })
    }

    /// The message's missing scopes.
    pub(crate) fn needing_scopes(mut self, scopes: Option<&'static [&'static str]>) -> Reply {
        if let Reply::Message(message) = &mut self {
            message.needs_scopes = scopes;
        }
        self
    }

    /// The message's session (`initialize`).
    pub(crate) fn with_session(mut self, id: String) -> Reply {
        if let Reply::Message(message) = &mut self {
            message.session = Some(id);
        }
        self
    }

    /// The message's `Retry-After`.
    pub(crate) fn retry_after(mut self, seconds: u32) -> Reply {
        if let Reply::Message(message) = &mut self {
            message.retry_after = Some(seconds);
        }
        self
    }
}

/// Appends `{"jsonrpc":"2.0","id":..,"error":{..}}`.
pub(crate) fn write_error(out: &mut Vec<u8>, id: Option<&RawValue>, error: &ProtocolError) {
    write_error_with(out, id, |out| error.write_json(out));
}

/// Appends the response for `result`.
pub(crate) fn write_outcome(out: &mut Vec<u8>, id: &RawValue, result: &Result<Vec<u8>, ProtocolError>) {
    match result {
        Ok(body) => write_result(out, id, body),
        Err(error) => write_error(out, Some(id), error),
    }
}

/// The outcome class of a 2026-07-28 error (the specification's and the
/// official SDKs' table): request-shape, header, capability and version
/// errors are 400, unknown methods 404; errors of a method that ran are 200.
pub(crate) fn stateless_status(error_code: i32) -> Status {
    match error_code {
        rpc::error::code::PARSE_ERROR
        | rpc::error::code::INVALID_REQUEST
        | rpc::error::code::INVALID_PARAMS
        | code::HEADER_MISMATCH
        | code::MISSING_REQUIRED_CLIENT_CAPABILITY
        | code::UNSUPPORTED_PROTOCOL_VERSION => Status::BadRequest,
        rpc::error::code::METHOD_NOT_FOUND => Status::NotFound,
        _ => Status::Ok,
    }
}

/// The handshake era answers errors of a request it served with 200.
pub(crate) fn handshake_status(_error_code: i32) -> Status {
    Status::Ok
}
