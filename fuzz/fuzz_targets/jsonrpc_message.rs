//! Arbitrary bytes through the JSON-RPC parser (see `rpc_fuzz::jsonrpc_message`).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| rpc_fuzz::jsonrpc_message::run(data));
