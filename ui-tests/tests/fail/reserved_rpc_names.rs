// JSON-RPC 2.0 reserves method names beginning with `rpc.`: an alias or a
// name making them is refused (once for the alias, however many methods).
pub struct Rpc;

#[rpc::service(alias = "rpc")]
impl Rpc {
    /// Pings.
    pub fn ping(&self) {}

    /// Pongs.
    pub fn pong(&self) {}
}

pub struct Named;

#[rpc::service]
impl Named {
    /// Discovers.
    #[rpc::info(name = "rpc.discover")]
    pub fn discover(&self) {}
}

fn main() {}
