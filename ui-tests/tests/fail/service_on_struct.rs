// `#[rpc::service]` on the struct instead of its impl block: one error on
// the attribute, saying where it goes; the impl's attributes stay quiet.
#[rpc::service]
pub struct Svc;

impl Svc {
    /// Gets.
    #[rpc::info(name = "get")]
    #[rpc::cache(ttl = 5m)]
    pub fn get(&self, #[rpc(range(min = 1))] id: u64) -> u64 {
        id
    }
}

fn main() {}
