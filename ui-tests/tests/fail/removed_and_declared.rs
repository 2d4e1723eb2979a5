// A version cannot both declare and remove a method.
pub struct SvcV2;

#[rpc::service(alias = "Svc", version = 2, removed("Svc.ping"))]
impl SvcV2 {
    /// Ping.
    pub fn ping(&self) {}
}

fn main() {}
