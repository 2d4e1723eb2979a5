// A misspelt key gets a "did you mean".
pub struct Svc;

#[rpc::service(aliass = "S")]
impl Svc {
    /// Ping.
    pub fn ping(&self) {}
}

fn main() {}
