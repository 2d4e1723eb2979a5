//! The macros under renamed dependencies compile and run (see Cargo.toml:
//! `my_rpc` is `rpc-core`, `my_mcp` is `mcp`).

#[test]
fn ui() {
    trybuild::TestCases::new().pass("tests/pass/*.rs");
}
