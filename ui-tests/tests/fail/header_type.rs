// `#[rpc(header)]` mirrors strings, integers and booleans only.
pub struct Svc;

#[rpc::service]
impl Svc {
    /// Tags.
    pub fn tag(&self, #[rpc(header)] tags: Vec<String>) -> usize {
        tags.len()
    }
}

fn main() {}
