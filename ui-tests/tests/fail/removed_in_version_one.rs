// Version 1 has nothing earlier to remove a method from.
pub struct Svc;

#[rpc::service(removed("Svc.old"))]
impl Svc {
    /// Ping.
    pub fn ping(&self) {}
}

fn main() {}
