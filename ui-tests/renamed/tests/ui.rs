//! The macros under renamed dependencies compile and run (see Cargo.toml:
//! `my_rpc` is `rpc-core`, `my_mcp` is `mcp`; the macros find the runtime by
//! this crate's manifest, so each case is a module of this test binary).

#[path = "pass/renamed_crates.rs"]
mod renamed_crates;

#[test]
fn pass_renamed_crates() {
    renamed_crates::main();
}

#[path = "pass/renamed_policies.rs"]
mod renamed_policies;

#[test]
fn pass_renamed_policies() {
    renamed_policies::main();
}
