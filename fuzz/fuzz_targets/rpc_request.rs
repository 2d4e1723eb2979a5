//! Scripts of HTTP requests, mostly to `/rpc`, through the catalog app (see `rpc_fuzz::app`).
//!
//! Built by `cargo fuzz` (which sets `--cfg fuzzing`); elsewhere a stub
//! that says so.
#![cfg_attr(fuzzing, no_main)]

#[cfg(fuzzing)]
libfuzzer_sys::fuzz_target!(|data: &[u8]| rpc_fuzz::app::run_rpc(data));

#[cfg(not(fuzzing))]
fn main() {
    eprintln!("a fuzz target: run it with `cargo +nightly fuzz run NAME` (see scripts/fuzz.sh)");
}
