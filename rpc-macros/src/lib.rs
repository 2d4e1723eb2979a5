//! Procedural macros behind `rpc-core` (imported as `rpc`) and `mcp`.
//!
//! Use them through those crates: `#[rpc::service]`, `#[rpc::info]` and
//! `#[mcp::mcp_tool]`. Generated code refers to `::rpc::__private`, so the
//! application depends on `rpc-core` under its library name `rpc`.

mod attrs;
mod docs;
mod errors;
mod method;
mod names;
mod service;

use proc_macro::TokenStream;
use quote::quote;

/// Publishes the `pub fn name(&self, ...)` methods of an inherent impl block
/// as RPC methods.
///
/// Keys: `alias = "Catalog"` (default: the type name; `""` gives bare fn
/// names), `separator = "."`, `version = 1`, `groups(GroupType, ...)` (types
/// implementing `rpc::ApiGroup`), `removed("Catalog.old", ...)` (names this
/// version drops from the previous one).
///
/// Per method: `#[rpc::info(name = "...", groups(...), skip)]`,
/// `#[mcp_tool(...)]`; per parameter: `#[rpc(default = expr, description = "...")]`.
#[proc_macro_attribute]
pub fn service(args: TokenStream, item: TokenStream) -> TokenStream {
    service::expand(args.into(), item.into()).into()
}

/// Per-method settings inside an `#[rpc::service]` impl block:
/// `name = "..."` (the full method name), `groups(...)` (replaces the
/// service's groups), `skip` (hides the method from the API).
#[proc_macro_attribute]
pub fn info(args: TokenStream, item: TokenStream) -> TokenStream {
    outside_service("#[rpc::info]", args, item)
}

/// MCP tool annotations on a method inside an `#[rpc::service]` impl block:
/// `title = "..."`, `read_only_hint`, `destructive_hint`, `idempotent_hint`,
/// `open_world_hint` (each `= true`/`= false`; a bare key means `true`).
/// Unset hints are left out of the tool's `annotations`.
#[proc_macro_attribute]
pub fn mcp_tool(args: TokenStream, item: TokenStream) -> TokenStream {
    outside_service("#[mcp_tool]", args, item)
}

/// The attribute macros above only do something inside `#[rpc::service]`,
/// which consumes them. Reaching here means they were used elsewhere
/// (or in the marker form the service macro emits to keep imports used).
fn outside_service(name: &str, args: TokenStream, item: TokenStream) -> TokenStream {
    if args.to_string() == "__rpc_service" {
        return TokenStream::new();
    }
    let item2: proc_macro2::TokenStream = item.into();
    let message = format!("{name} only works on a method inside an `#[rpc::service]` impl block");
    let error = syn::Error::new(proc_macro2::Span::call_site(), message).to_compile_error();
    quote!(#error #item2).into()
}
