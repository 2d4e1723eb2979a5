//! Compile-time errors of the macros, each with a `.stderr` snapshot
//! (regenerate with `TRYBUILD=overwrite cargo test -p ui-tests`).
//! The snapshots are taken with the workspace's stable toolchain (1.95);
//! other compiler versions may word their messages differently.

#[test]
fn ui() {
    let t = trybuild::TestCases::new();
    t.pass("tests/pass/*.rs");
    t.compile_fail("tests/fail/*.rs");
}
