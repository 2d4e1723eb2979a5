//! Where the runtime crate is, under the name the application's
//! `Cargo.toml` gives it.
//!
//! The generated code names the runtime by an absolute path. Without an
//! override (`#[rpc::service(crate = "...")]`, for frameworks that
//! re-export it), the path comes from the manifest (proc-macro-crate), in
//! this order: the `rpc` facade under its own name (`::rpc`) or renamed
//! (`my_rpc = { package = "rpc" }`: `::my_rpc`); else `rpc-core` itself
//! (`::rpc_core`, or its renamed name; inside `rpc-core`, `::rpc`, which
//! it declares for itself); else `mcp`, which re-exports the facade
//! (`::mcp::rpc`). Every one of them has the same `__private` module.

use proc_macro_crate::{FoundCrate, crate_name};
use proc_macro2::{Span, TokenStream};
use quote::{ToTokens, quote};

/// The library name of the `rpc` facade.
const RPC_LIB: &str = "rpc";
/// The library name of the `mcp` package.
const MCP_LIB: &str = "mcp";

/// The resolved runtime crate.
#[derive(Clone)]
pub struct Krate {
    /// Path of the `rpc` crate root, e.g. `::rpc` or `::my_rpc`.
    pub root: TokenStream,
    /// Names a path to `rpc`'s attribute macros may start with (`rpc`, `my_rpc`).
    pub rpc_names: Vec<String>,
    /// Names a path to `mcp`'s attribute macros may start with (`mcp`, `my_mcp`).
    pub mcp_names: Vec<String>,
}

impl Krate {
    /// Resolves the crate, honouring `crate = "..."` when given.
    pub fn resolve(explicit: Option<&syn::Path>) -> Krate {
        let mcp = match crate_name("mcp") {
            Ok(FoundCrate::Name(name)) => Some(name),
            Ok(FoundCrate::Itself) => Some(MCP_LIB.to_owned()),
            Err(_) => None,
        };
        let mut mcp_names = vec![MCP_LIB.to_owned()];
        mcp_names.extend(mcp.clone().filter(|m| m != MCP_LIB));

        let (root, name) = match explicit {
            Some(path) => (path.to_token_stream(), path.segments.last().map(|s| s.ident.to_string())),
            None => match (crate_name("rpc"), crate_name("rpc-core")) {
                (Ok(FoundCrate::Name(name)), _) if name == RPC_LIB => (absolute(RPC_LIB), None),
                (Ok(FoundCrate::Name(name)), _) => (absolute(&name), Some(name)),
                // `rpc-core` itself declares `extern crate self as rpc;`.
                (_, Ok(FoundCrate::Itself)) => (absolute(RPC_LIB), None),
                (_, Ok(FoundCrate::Name(name))) => (absolute(&name), Some(name)),
                _ => match &mcp {
                    Some(mcp) => {
                        let mcp = absolute(mcp);
                        (quote!(#mcp::rpc), None)
                    }
                    None => (absolute(RPC_LIB), None),
                },
            },
        };
        let mut rpc_names = vec![RPC_LIB.to_owned()];
        rpc_names.extend(name.filter(|n| n != RPC_LIB));
        Krate { root, rpc_names, mcp_names }
    }

    /// `<root>::__private`.
    pub fn private(&self) -> TokenStream {
        let root = &self.root;
        quote!(#root::__private)
    }

    /// Whether an attribute path, read as its segments ([`segments`],
    /// once for all the names a caller asks about), names one of `rpc`'s
    /// attributes called `last` (`#[last]`, `#[rpc::last]`,
    /// `#[my_rpc::last]`, `#[mcp::rpc::last]`).
    pub fn names_rpc_attr(&self, segments: &[String], last: &str) -> bool {
        match segments {
            [one] => one == last,
            [krate, one] => one == last && self.rpc_names.contains(krate),
            [mcp, rpc, one] => one == last && rpc == RPC_LIB && self.mcp_names.contains(mcp),
            _ => false,
        }
    }

    /// Whether an attribute path, read as its segments, names `mcp`'s
    /// attribute called `last` (`#[last]`, `#[mcp::last]`, `#[my_mcp::last]`).
    pub fn names_mcp_attr(&self, segments: &[String], last: &str) -> bool {
        match segments {
            [one] => one == last,
            [krate, one] => one == last && self.mcp_names.contains(krate),
            _ => false,
        }
    }

    /// Whether `path` is the inert parameter attribute (`#[rpc(...)]`, or
    /// the renamed crate's name, `#[my_rpc(...)]`).
    pub fn is_param_attr(&self, path: &syn::Path) -> bool {
        path.get_ident().is_some_and(|ident| self.rpc_names.iter().any(|n| ident == n))
    }
}

/// How generated code names `rpc`'s `__private` module: the alias a
/// service block's code `use`s (one identifier, which the macro writes
/// into its output token by token) or the whole path (a method whose
/// attribute macros expanded first, outside that block).
#[derive(Clone)]
pub enum Private {
    /// `__rpc_private`.
    Alias(proc_macro2::Ident),
    /// `::rpc::__private`, or wherever the crate is.
    Path(TokenStream),
}

impl Private {
    /// The same path with every token at `span` (where a diagnostic about
    /// the expression it begins points, and the location a
    /// `#[track_caller]` function it names records).
    pub fn at(&self, span: Span) -> Private {
        match self {
            Private::Alias(ident) => {
                let mut ident = ident.clone();
                ident.set_span(span);
                Private::Alias(ident)
            }
            Private::Path(path) => Private::Path(crate::spans::respan(path.clone(), span)),
        }
    }
}

impl ToTokens for Private {
    fn to_tokens(&self, tokens: &mut TokenStream) {
        match self {
            Private::Alias(ident) => ident.to_tokens(tokens),
            Private::Path(path) => path.to_tokens(tokens),
        }
    }
}

/// An attribute path's segments as text (each one asked of the compiler
/// once: a caller matching it against several names reads it once).
pub fn segments(path: &syn::Path) -> Vec<String> {
    path.segments.iter().map(|s| s.ident.to_string()).collect()
}

fn absolute(name: &str) -> TokenStream {
    let ident = syn::Ident::new(name, Span::call_site());
    quote!(::#ident)
}
