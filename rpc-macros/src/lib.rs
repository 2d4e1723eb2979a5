//! Procedural macros behind `rpc-core` (library `rpc`) and `mcp`.
//!
//! Use them through those crates: `#[rpc::service]`, `#[rpc::info]` and
//! `#[mcp::mcp_tool]`. The generated code finds `rpc-core` under whatever
//! name the application's `Cargo.toml` gives it (a renamed dependency, or
//! `mcp::rpc` when only `mcp` is a dependency); `#[rpc::service(crate =
//! "...")]` names it explicitly, for frameworks that re-export it.

mod attrs;
mod codegen;
mod deferred;
mod docs;
mod errors;
mod krate;
mod method;
mod names;
mod service;

use proc_macro::TokenStream;

/// Publishes the `pub fn name(&self, ...)` methods of an inherent impl block
/// as RPC methods.
///
/// Keys: `alias = "Catalog"` (default: the type name; `""` gives bare fn
/// names), `separator = "."`, `version = 1`, `groups(GroupType, ...)` (types
/// implementing `rpc::ApiGroup`), `removed("Catalog.old", ...)` (names this
/// version drops from the previous one), `undocumented` (no warning for
/// methods without a description), `crate = "path::to::rpc"`.
///
/// Per method: `#[rpc::info(name = "...", groups(...), skip, undocumented)]`,
/// `#[mcp_tool(...)]`; per parameter: `#[rpc(default = expr, description = "...")]`.
#[proc_macro_attribute]
pub fn service(args: TokenStream, item: TokenStream) -> TokenStream {
    service::expand(args.into(), item.into()).into()
}

/// Per-method settings inside an `#[rpc::service]` impl block:
/// `name = "..."` (the full method name), `groups(...)` (replaces the
/// service's groups), `skip` (hides the method from the API),
/// `undocumented` (no warning when the method has no description).
#[proc_macro_attribute]
pub fn info(args: TokenStream, item: TokenStream) -> TokenStream {
    deferred::fold_or_refuse("info", "#[rpc::info]", args.into(), item.into()).into()
}

/// MCP tool annotations on a method inside an `#[rpc::service]` impl block:
/// `title = "..."`, `read_only_hint`, `destructive_hint`, `idempotent_hint`,
/// `open_world_hint` (each `= true`/`= false`; a bare key means `true`).
/// Unset hints are left out of the tool's `annotations`.
#[proc_macro_attribute]
pub fn mcp_tool(args: TokenStream, item: TokenStream) -> TokenStream {
    deferred::fold_or_refuse("tool", "#[mcp_tool]", args.into(), item.into()).into()
}

/// The per-method marker `#[rpc::service]` leaves on methods whose other
/// attribute macros must expand first. Not public API.
#[doc(hidden)]
#[proc_macro_attribute]
pub fn __rpc_method(args: TokenStream, item: TokenStream) -> TokenStream {
    deferred::expand(args.into(), item.into()).into()
}
