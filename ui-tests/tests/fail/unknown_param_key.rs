// A misspelt parameter key gets a "did you mean".
pub struct Svc;

#[rpc::service]
impl Svc {
    /// Ping.
    pub fn ping(&self, #[rpc(defualt = 1)] n: u32) -> u32 {
        n
    }
}

fn main() {}
