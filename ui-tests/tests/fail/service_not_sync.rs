// Service instances are shared by concurrent calls: they must be Send + Sync.
pub struct Svc {
    cache: std::cell::RefCell<u32>,
}

#[rpc::service]
impl Svc {
    /// Reads.
    pub fn read(&self) -> u32 {
        *self.cache.borrow()
    }
}

fn main() {}
