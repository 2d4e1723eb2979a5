//! HTTP transports.

pub mod negotiate;
pub mod streamable_http;
