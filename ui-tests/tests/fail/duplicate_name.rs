// Two methods of one version cannot share a name.
pub struct Svc;

#[rpc::service]
impl Svc {
    /// First.
    pub fn first(&self) -> u32 {
        1
    }

    /// Second, renamed onto the first.
    #[rpc::info(name = "Svc.first")]
    pub fn second(&self) -> u32 {
        2
    }
}

fn main() {}
