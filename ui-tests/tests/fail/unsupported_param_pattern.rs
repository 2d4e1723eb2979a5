// Parameters are named by their identifier, so patterns are refused.
pub struct Svc;

#[rpc::service]
impl Svc {
    /// Adds.
    pub fn add(&self, (a, b): (u32, u32)) -> u32 {
        a + b
    }
}

fn main() {}
