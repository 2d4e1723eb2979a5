// `#[derive(rpc::ApplicationError)]`: each variant its own code, none of the
// framework's own codes, integer literals that fit an `i32`.
use std::fmt;

#[derive(Debug, rpc::ApplicationError)]
pub enum ShopError {
    /// Product not found.
    #[rpc(code = 404)]
    NotFound,
    /// Order not found.
    #[rpc(code = 404)]
    NoOrder,
    /// Bad input.
    #[rpc(code = -32602)]
    BadInput,
    /// Locked.
    #[rpc(code = -32400)]
    Busy,
    /// Too big.
    #[rpc(code = 4294967296)]
    Huge,
    /// Not a literal.
    #[rpc(code = CODE)]
    Computed,
}

const CODE: i32 = 7;

impl fmt::Display for ShopError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("shop error")
    }
}

impl std::error::Error for ShopError {}

fn main() {}
