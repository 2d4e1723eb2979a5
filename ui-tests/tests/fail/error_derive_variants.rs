// `#[derive(rpc::ApplicationError)]`: a code and a message per variant, data
// fields with names, once each, of types that serialise; known keys only.
use std::fmt;

#[derive(Debug, rpc::ApplicationError)]
#[rpc(code = 500)]
pub enum ShopError {
    /// No code.
    NoCode,
    #[rpc(code = 1)]
    NoMessage,
    /// A tuple field exposed without a name.
    #[rpc(code = 2)]
    Unnamed(#[rpc(data)] u64),
    /// A name exposed twice.
    #[rpc(code = 3)]
    Twice {
        #[rpc(data)]
        id: u64,
        #[rpc(data = "id")]
        other: u64,
    },
    /// An unknown key.
    #[rpc(code = 4, status = 404)]
    Unknown,
}

impl fmt::Display for ShopError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("shop error")
    }
}

impl std::error::Error for ShopError {}

#[derive(Debug, rpc::ApplicationError)]
pub enum Generic<T> {
    /// Generic.
    #[rpc(code = 6)]
    Thing(T),
}

fn main() {}
