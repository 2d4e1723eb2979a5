//! Procedural macros behind `rpc-core` (library `rpc`) and `mcp`.
//!
//! Use them through those crates: `#[rpc::service]`, `#[rpc::info]` and
//! `#[mcp::mcp_tool]`. The generated code finds `rpc-core` under whatever
//! name the application's `Cargo.toml` gives it (a renamed dependency, or
//! `mcp::rpc` when only `mcp` is a dependency); `#[rpc::service(crate =
//! "...")]` names it explicitly, for frameworks that re-export it.

mod attrs;
mod codegen;
mod compact;
mod deferred;
mod docs;
mod error_derive;
mod errors;
mod fields;
mod impl_block;
mod invoke;
mod krate;
mod method;
mod method_attrs;
mod names;
mod param;
mod policies;
mod role;
mod rules;
mod scopes;
mod seconds;
mod service;
mod spans;
mod suggest;
mod tool_checks;
mod uri_template;
mod values;

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
/// `#[rpc::cache(..)]`, `#[rpc::lock(..)]`, `#[rpc::invalidates(..)]`,
/// `#[mcp_tool(...)]`.
///
/// Per parameter: `#[rpc(default = expr, description = "...", header)]` and
/// validation rules, which become JSON Schema keywords of the parameter
/// (enforced before the call, `-32602` otherwise):
///
/// * `length(min = 3, max = 100)`: characters of a string, items of a
///   `Vec`/slice/array (either bound may be left out);
/// * `range(min = 1, max = 100)`: a number's inclusive bounds (integers or
///   floats);
/// * `pattern = "^[a-z]+$"`: a regular expression (checked at compile
///   time; unanchored, as in JSON Schema);
/// * `email`, `uuid`, `date`, `date_time`, `uri`: a string format;
/// * `one_of("a", "b")`, `one_of(1, 2, 3)`: the allowed values (literals
///   of one kind);
/// * `not_blank`: a string with a non-whitespace character.
///
/// A rule that does not fit the parameter's type (`pattern` on a `u64`,
/// `range` on a `String`) is a compile error. On an `Option<T>` parameter
/// the rules apply to the value, and `null` stays valid.
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

/// Caches a method's results: `#[rpc::cache(ttl = 60)]`,
/// `#[rpc::cache(ttl = 300, env(prod, dev, test))]`.
///
/// `ttl` (required) is a whole number of seconds from 1; `env(..)` lists the
/// environments caching applies in (`prod`, `dev`, `test`; default `prod`
/// only). Goes on a method inside an `#[rpc::service]` impl block, once.
#[proc_macro_attribute]
pub fn cache(args: TokenStream, item: TokenStream) -> TokenStream {
    deferred::fold_or_refuse("cache", "#[rpc::cache]", args.into(), item.into()).into()
}

/// Lets one call of a method run at a time: `#[rpc::lock]` (one lock per
/// method), `#[rpc::lock(param = "id", ttl = 30)]` (one lock per value of
/// parameter `id`).
///
/// `param` names one of the method's parameters (not its `Context`);
/// `ttl` is how long the lock holds at most, in whole seconds (default 30).
/// A call that finds the lock held fails fast. Goes on a method inside an
/// `#[rpc::service]` impl block, once.
#[proc_macro_attribute]
pub fn lock(args: TokenStream, item: TokenStream) -> TokenStream {
    deferred::fold_or_refuse("lock", "#[rpc::lock]", args.into(), item.into()).into()
}

/// Names methods whose cached results this method invalidates once its
/// response is sent: `#[rpc::invalidates("Catalog.get", "Catalog.search")]`.
///
/// Each name is a full RPC method name (alias, separator and fn name, or an
/// `#[rpc::info(name)]`), checked when the registry is built. The bare flag
/// `warm_up` (`#[rpc::invalidates("Catalog.get", warm_up)]`) also computes
/// those entries again. The attribute may repeat, to warm up some methods
/// and not others:
///
/// ```ignore
/// #[rpc::invalidates("Catalog.get", warm_up)]
/// #[rpc::invalidates("Catalog.search")]
/// pub fn update(&self, id: u64) { /* ... */ }
/// ```
#[proc_macro_attribute]
pub fn invalidates(args: TokenStream, item: TokenStream) -> TokenStream {
    deferred::fold_or_refuse("invalidates", "#[rpc::invalidates]", args.into(), item.into()).into()
}

/// MCP tool annotations on a method inside an `#[rpc::service]` impl block:
/// `title = "..."`, `read_only_hint`, `destructive_hint`, `idempotent_hint`,
/// `open_world_hint` (each `= true`/`= false`; a bare key means `true`).
/// Unset hints are left out of the tool's `annotations`.
#[proc_macro_attribute]
pub fn mcp_tool(args: TokenStream, item: TokenStream) -> TokenStream {
    deferred::fold_or_refuse("tool", "#[mcp_tool]", args.into(), item.into()).into()
}

/// An MCP resource on a method inside an `#[rpc::service]` impl block:
/// `uri = "scheme://..."` (required: a URI, or an RFC 6570 template of
/// levels 1 to 3 whose variables are the method's parameters), `name`,
/// `title`, `mime_type`. The method's result is the resource's contents.
#[proc_macro_attribute]
pub fn mcp_resource(args: TokenStream, item: TokenStream) -> TokenStream {
    deferred::fold_or_refuse("resource", "#[mcp_resource]", args.into(), item.into()).into()
}

/// An MCP prompt on a method inside an `#[rpc::service]` impl block: its
/// parameters are the prompt's arguments; `name`, `title`. The method
/// returns the prompt's text or messages.
#[proc_macro_attribute]
pub fn mcp_prompt(args: TokenStream, item: TokenStream) -> TokenStream {
    deferred::fold_or_refuse("prompt", "#[mcp_prompt]", args.into(), item.into()).into()
}

/// Completion of a prompt argument or a resource template variable on a
/// method inside an `#[rpc::service]` impl block: `prompt = "name"` or
/// `resource = "template"`, and `argument = "..."`. The method takes the
/// partial value as `value` and returns the suggestions.
#[proc_macro_attribute]
pub fn mcp_complete(args: TokenStream, item: TokenStream) -> TokenStream {
    deferred::fold_or_refuse("complete", "#[mcp_complete]", args.into(), item.into()).into()
}

/// The per-method marker `#[rpc::service]` leaves on methods whose other
/// attribute macros must expand first. Not public API.
#[doc(hidden)]
#[proc_macro_attribute]
pub fn __rpc_method(args: TokenStream, item: TokenStream) -> TokenStream {
    deferred::expand(args.into(), item.into()).into()
}

/// Derives `rpc::ApplicationError` (and `rpc::ErrorCodes`) for an error
/// enum, one JSON-RPC code per variant, or for a struct (one code):
///
/// ```ignore
/// #[derive(Debug, rpc::ApplicationError)]
/// pub enum ShopError {
///     /// Product not found.
///     #[rpc(code = 404)]
///     NotFound { #[rpc(data)] id: u64 },
///     #[rpc(code = 409, message = "Out of stock")]
///     OutOfStock(#[rpc(data = "sku")] String),
/// }
/// ```
///
/// `code` (required) is the variant's code; `message` (default: the first
/// paragraph of the variant's doc comment) says what it means in the
/// OpenRPC document (the message of an actual error is its `Display`
/// text). Fields marked `#[rpc(data)]` (tuple fields: `#[rpc(data =
/// "name")]`) make up `data.extra`; they need `Serialize` and `JsonSchema`.
/// Every method returning `Result<T, ShopError>` lists these codes in its
/// OpenRPC `errors`. Two variants with one code, and the framework's own
/// codes (`-32602`, ...), are compile errors. `#[rpc(crate = "path")]` on
/// the type names the runtime crate.
#[proc_macro_derive(ApplicationError, attributes(rpc))]
pub fn application_error(input: TokenStream) -> TokenStream {
    error_derive::derive(input.into()).into()
}
