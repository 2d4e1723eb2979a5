//! The macros reach the runtime as `mcp::rpc` when `rpc-core` is not a
//! dependency of the application.

#[test]
fn ui() {
    trybuild::TestCases::new().pass("tests/pass/*.rs");
}
