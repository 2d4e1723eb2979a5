//! The errors a method can answer with, as its OpenRPC `errors` list.
//!
//! `#[derive(rpc::ApplicationError)]` on an error enum implements
//! [`ApplicationError`](crate::ApplicationError) (each variant's code and
//! the data it exposes) and [`ErrorCodes`] (the list of those codes). A
//! method returning `Result<T, E>` lists `E`'s codes in its OpenRPC
//! `errors` without anything more written: the descriptor
//! `#[rpc::service]` generates asks for `<E as ErrorCodes>::CODES` when
//! `E` has them, and for nothing otherwise.
//!
//! ```
//! # extern crate rpc_core as rpc;
//! /// Errors of the shop.
//! #[derive(Debug, rpc::ApplicationError)]
//! pub enum ShopError {
//!     /// Product not found.
//!     #[rpc(code = 404)]
//!     NotFound {
//!         #[rpc(data)]
//!         id: u64,
//!     },
//!     #[rpc(code = 409, message = "Out of stock")]
//!     OutOfStock,
//! }
//! # impl std::fmt::Display for ShopError {
//! #     fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result { f.write_str("shop error") }
//! # }
//! # impl std::error::Error for ShopError {}
//! use rpc::{ApplicationError as _, ErrorCodes as _};
//! assert_eq!(ShopError::NotFound { id: 7 }.code(), 404);
//! assert_eq!(ShopError::NotFound { id: 7 }.data(), Some(serde_json::json!({"id": 7})));
//! let codes: Vec<(i32, &str)> = ShopError::CODES.iter().map(|c| (c.code, c.message)).collect();
//! assert_eq!(codes, [(404, "Product not found."), (409, "Out of stock")]);
//! ```

use schemars::{Schema, SchemaGenerator};

use crate::error::code;

/// Builds the schema of what an error exposes (`data.extra`).
pub type DataSchemaFn = fn(&mut SchemaGenerator) -> Schema;

/// One error a method can answer with: its code, a message that says what
/// it means, and the schema of the data it exposes.
#[derive(Debug, Clone, Copy)]
#[non_exhaustive]
pub struct ErrorCode {
    /// The JSON-RPC error code.
    pub code: i32,
    /// What the error means (the variant's `message`, or the first
    /// paragraph of its doc comment); the message of an actual error is
    /// its `Display` text.
    pub message: &'static str,
    /// The error type's name (`CatalogError`); empty for the framework's own errors.
    pub type_name: &'static str,
    /// The variant's name (`NotFound`), or the framework error's name.
    pub name: &'static str,
    /// The schema of `data.extra`, when the error exposes data.
    pub data: Option<DataSchemaFn>,
}

impl ErrorCode {
    /// An error `code` meaning `message`.
    pub const fn new(code: i32, message: &'static str) -> Self {
        ErrorCode { code, message, type_name: "", name: "", data: None }
    }

    /// Names it: variant `name` of the error type `type_name`.
    pub const fn named(mut self, type_name: &'static str, name: &'static str) -> Self {
        self.type_name = type_name;
        self.name = name;
        self
    }

    /// The schema of the data it exposes (`data.extra`).
    pub const fn with_data(mut self, data: DataSchemaFn) -> Self {
        self.data = Some(data);
        self
    }

    /// The key under `components.errors` of an OpenRPC document:
    /// `Type.Variant`, or `rpc.Name` for the framework's own errors.
    pub fn component_key(&self) -> String {
        match self.type_name {
            "" => format!("rpc.{}", self.name),
            type_name => format!("{type_name}.{}", self.name),
        }
    }
}

/// An error type that lists the codes it can produce, one per variant:
/// `#[derive(rpc::ApplicationError)]` implements it.
pub trait ErrorCodes {
    /// Every code, in declaration order, each once.
    const CODES: &'static [ErrorCode];
}

/// `-32602`: the parameters do not fit the method (listed for methods that
/// take parameters); `data.extra` gives the reasons per parameter.
pub const INVALID_PARAMS: ErrorCode =
    ErrorCode::new(code::INVALID_PARAMS, "Invalid params").named("", "InvalidParams").with_data(reasons_schema);

fn reasons_schema(_: &mut SchemaGenerator) -> Schema {
    schemars::json_schema!({
        "type": "object",
        "description": "The reasons each parameter was refused, by parameter name",
        "additionalProperties": {"type": "array", "items": {"type": "string"}},
    })
}

/// `-32400`: another call holds the method's lock (`#[rpc::lock]`).
pub const LOCKED: ErrorCode = ErrorCode::new(code::LOGIC_ERROR, "Method is locked").named("", "Locked");

/// `-32403`: the caller's credential lacks a scope the method needs
/// (methods with `scopes(...)`); `data.extra.scope` names the missing scopes.
pub const INSUFFICIENT_SCOPE: ErrorCode =
    ErrorCode::new(code::FORBIDDEN, "Insufficient scope").named("", "InsufficientScope").with_data(scope_schema);

fn scope_schema(_: &mut SchemaGenerator) -> Schema {
    schemars::json_schema!({
        "type": "object",
        "properties": {
            "error": {"const": "insufficient_scope"},
            "scope": {"type": "string", "description": "The missing scopes, space-separated"},
        },
        "required": ["error", "scope"],
    })
}

/// The codes inside JSON-RPC's reserved range (`-32768..=-32000`) that the
/// framework answers with itself; an application error must not reuse them
/// (`#[derive(rpc::ApplicationError)]` refuses them at compile time, from
/// its own copy of this list).
pub const FRAMEWORK_CODES: &[(i32, &str)] = &[
    (code::PARSE_ERROR, "parse error"),
    (code::INVALID_REQUEST, "invalid request"),
    (code::METHOD_NOT_FOUND, "method not found"),
    (code::INVALID_PARAMS, "invalid params"),
    (code::INTERNAL_ERROR, "internal error"),
    (code::LOGIC_ERROR, "method locked"),
    (code::FORBIDDEN, "insufficient scope"),
    (code::RATE_LIMITED, "rate limited"),
    (code::TIMEOUT, "timeout; MCP: no session"),
    (-32001, "MCP: session not found"),
    (-32002, "MCP: resource not found"),
    (-32020, "MCP: header mismatch"),
    (-32021, "MCP: missing client capability"),
    (-32022, "MCP: unsupported protocol version"),
    (crate::ask::CANNOT_ASK, "cannot ask the client"),
    (crate::ask::INPUT_REQUIRED, "input required"),
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn component_keys() {
        assert_eq!(INVALID_PARAMS.component_key(), "rpc.InvalidParams");
        assert_eq!(
            ErrorCode::new(404, "Not found").named("ShopError", "NotFound").component_key(),
            "ShopError.NotFound"
        );
    }

    #[test]
    fn framework_codes_are_reserved_and_distinct() {
        let mut codes: Vec<i32> = FRAMEWORK_CODES.iter().map(|(c, _)| *c).collect();
        assert!(codes.iter().all(|c| (-32768..=-32000).contains(c)), "{codes:?}");
        codes.sort_unstable();
        codes.dedup();
        assert_eq!(codes.len(), FRAMEWORK_CODES.len());
    }
}
