//! A benchmark fixture: an application with many annotated methods.
//!
//! `build.rs` writes `SCALE_METHODS` methods (default 20) into the MCP group
//! [`Big`] and 10 into [`Small`]; `bench/scale.py` builds it with 1,000 (the
//! start-up time and the `tools/list` cost of issue 19) and with 200, with and
//! without the annotations (`SCALE_ANNOTATED=0`, the compile-time ratio),
//! and with `async` methods (`SCALE_ASYNC=1`).

#![allow(missing_docs)]

#[allow(unused_imports)]
use mcp::{mcp_tool, rpc};

rpc::api_group! {
    /// The many methods.
    pub struct Big => "big", mcp = true;
}

rpc::api_group! {
    /// Ten methods, the list `Big`'s is compared with.
    pub struct Small => "small", mcp = true;
}

include!("items.rs");

impl rpc::ApplicationError for ScaleError {
    fn code(&self) -> i32 {
        match self {
            ScaleError::NotFound(_) => 404,
            ScaleError::EmptyName => 422,
        }
    }
}

include!(concat!(env!("OUT_DIR"), "/services.rs"));

/// Every generated service, registered with `app` (annotated builds only).
pub fn with_services(app: mcp::App) -> mcp::App {
    include!(concat!(env!("OUT_DIR"), "/register.rs"))
}
