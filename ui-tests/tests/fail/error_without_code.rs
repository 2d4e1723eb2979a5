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
}

fn main() {}
