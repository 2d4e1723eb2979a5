//! The macros' compile-time errors, each with a `.stderr` snapshot
//! (regenerate with `TRYBUILD=overwrite cargo test -p ui-tests`), and the
//! cases that must compile and run (`tests/pass/`, each a module of this
//! test binary with its own `main`).
//! The snapshots are taken with the workspace's stable toolchain (1.95);
//! other compiler versions may word their messages differently.

use serde_json::Value;

/// Calls `method` through `executor` with named `params` (or none), on a
/// runtime of its own: what the pass cases that call their methods share.
pub(crate) fn call(executor: &rpc::Executor, method: &str, params: Value) -> Result<Value, rpc::RpcError> {
    let runtime = tokio::runtime::Builder::new_current_thread().build().expect("runtime");
    let params = match params {
        Value::Object(map) => rpc::Params::Named(map),
        _ => rpc::Params::None,
    };
    let execution = runtime.block_on(executor.execute(rpc::Call::new(method, 1, params)));
    execution.result.map(|raw| serde_json::from_str(raw.get()).expect("results are JSON"))
}

#[test]
fn compile_fail() {
    // Only compile-fail cases: trybuild checks them all in one `cargo check
    // --keep-going` (with a pass case it would build and link each one).
    trybuild::TestCases::new().compile_fail("tests/fail/*.rs");
}

#[path = "pass/attributes_under_other_names.rs"]
mod attributes_under_other_names;

#[test]
fn pass_attributes_under_other_names() {
    attributes_under_other_names::main();
}

#[path = "pass/full_service.rs"]
mod full_service;

#[test]
fn pass_full_service() {
    full_service::main();
}

#[path = "pass/invalid_name_outside_mcp.rs"]
mod invalid_name_outside_mcp;

#[test]
fn pass_invalid_name_outside_mcp() {
    invalid_name_outside_mcp::main();
}

#[path = "pass/no_warnings.rs"]
mod no_warnings;

#[test]
fn pass_no_warnings() {
    no_warnings::main();
}

#[path = "pass/result_by_meaning.rs"]
mod result_by_meaning;

#[test]
fn pass_result_by_meaning() {
    result_by_meaning::main();
}

#[path = "pass/rules_and_policies.rs"]
mod rules_and_policies;

#[test]
fn pass_rules_and_policies() {
    rules_and_policies::main();
}

#[path = "pass/self_defaults.rs"]
mod self_defaults;

#[test]
fn pass_self_defaults() {
    self_defaults::main();
}

#[path = "pass/error_codes.rs"]
mod error_codes;

#[test]
fn pass_error_codes() {
    error_codes::main();
}

#[path = "pass/borrowed_results.rs"]
mod borrowed_results;

#[test]
fn pass_borrowed_results() {
    borrowed_results::main();
}
