// A field exposed as error data must serialise and have a JSON Schema.
use std::fmt;

#[derive(Debug)]
pub struct NotSerialisable;

#[derive(Debug, rpc::ApplicationError)]
pub enum ShopError {
    /// A field that does not serialise.
    #[rpc(code = 5)]
    Opaque(#[rpc(data = "what")] NotSerialisable),
}

impl fmt::Display for ShopError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("shop error")
    }
}

impl std::error::Error for ShopError {}

fn main() {}
