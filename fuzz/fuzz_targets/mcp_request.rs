//! Scripts of HTTP requests, mostly to `/mcp`, through the catalog app (see `rpc_fuzz::app`).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| rpc_fuzz::app::run_mcp(data));
