//! JSON-RPC 2.0 framing, as bytes in and out: parsing envelopes within
//! limits, the `$rpc` options, batch chaining (`@FROM`), writing responses.
//! The HTTP endpoint is in `rpc-http`.

pub mod chain;
pub mod envelope;
pub mod json_string;
pub mod limits;
pub mod response;
pub mod special;

pub use json_string::{json_string_len, raw_json_str, to_json_string, write_json_string};
pub use limits::JsonLimits;
