// A parameter type needs Deserialize and JsonSchema; the error points at it.
pub struct Svc;

pub struct Opaque;

#[rpc::service]
impl Svc {
    /// Takes something that cannot come from JSON.
    pub fn take(&self, value: Opaque) {
        let _ = value;
    }
}

fn main() {}
