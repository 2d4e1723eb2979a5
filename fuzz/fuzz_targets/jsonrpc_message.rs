//! Arbitrary bytes through the JSON-RPC parser (see `rpc_fuzz::jsonrpc_message`).
//!
//! Built by `cargo fuzz` (which sets `--cfg fuzzing`); elsewhere a stub
//! that says so.
#![cfg_attr(fuzzing, no_main)]

#[cfg(fuzzing)]
libfuzzer_sys::fuzz_target!(|data: &[u8]| rpc_fuzz::jsonrpc_message::run(data));

#[cfg(not(fuzzing))]
fn main() {
    eprintln!("a fuzz target: run it with `cargo +nightly fuzz run NAME` (see scripts/fuzz.sh)");
}
