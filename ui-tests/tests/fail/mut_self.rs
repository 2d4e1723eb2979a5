// Service instances are shared by concurrent calls: `&mut self` is refused.
pub struct Svc;

#[rpc::service]
impl Svc {
    /// Bumps.
    pub fn bump(&mut self) {}
}

fn main() {}
