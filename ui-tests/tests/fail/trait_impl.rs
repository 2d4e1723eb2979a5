// Only inherent impl blocks can be services.
pub struct Svc;

#[rpc::service]
impl Default for Svc {
    fn default() -> Self {
        Svc
    }
}

fn main() {}
