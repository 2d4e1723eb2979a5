//! HTTP transports.

mod exchange;
mod handshake;
mod headers;
pub(crate) mod inflight;
pub mod negotiate;
mod reply;
mod sse;
mod stateless;
pub mod streamable_http;
