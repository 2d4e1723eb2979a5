// Generic service types are refused.
pub struct Svc<T>(T);

#[rpc::service]
impl<T: Send + Sync + 'static> Svc<T> {
    /// Ping.
    pub fn ping(&self) {}
}

fn main() {}
