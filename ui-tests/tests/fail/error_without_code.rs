// A method error must convert into rpc::RpcError (implement rpc::ApplicationError).
pub struct Svc;

#[derive(Debug)]
pub struct Oops;

#[rpc::service]
impl Svc {
    /// Fails.
    pub fn fail(&self) -> Result<u32, Oops> {
        Err(Oops)
    }

    /// A `String` error: another crate's type, mapped rather than implemented.
    pub fn text(&self) -> Result<u32, String> {
        Err("no".to_owned())
    }
}

fn main() {}
