//! What a client writes to the catalog's stdio transport (see `rpc_fuzz::stdio_lines`).
//!
//! A libFuzzer target with the `libfuzzer` feature (scripts/fuzz.sh);
//! without it a stub that says so.
#![cfg_attr(feature = "libfuzzer", no_main)]

#[cfg(feature = "libfuzzer")]
libfuzzer_sys::fuzz_target!(|data: &[u8]| rpc_fuzz::stdio_lines::run(data));

#[cfg(not(feature = "libfuzzer"))]
fn main() {
    eprintln!("a fuzz target: run it with scripts/fuzz.sh (or `cargo fuzz run NAME --features libfuzzer`)");
}
