// Parameters are deserialised, so they must be owned.
pub struct Svc;

#[rpc::service]
impl Svc {
    /// Echo.
    pub fn echo(&self, text: &str) -> String {
        text.to_owned()
    }
}

fn main() {}
