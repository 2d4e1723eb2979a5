//! The macros reach the runtime as `mcp::rpc` when `rpc-core` is not a
//! dependency of the application (this crate's manifest names only `mcp`;
//! each case is a module of this test binary).

#[path = "pass/mcp_only.rs"]
mod mcp_only;

#[test]
fn pass_mcp_only() {
    mcp_only::main();
}
