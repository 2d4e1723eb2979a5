// An `impl Trait` parameter is one error, on it, even when `# Arguments`
// documents it.
pub struct Svc;

#[rpc::service]
impl Svc {
    /// Greets.
    ///
    /// # Arguments
    /// * `name` - Who to greet
    pub fn greet(&self, name: impl Into<String>) -> String {
        name.into()
    }
}

fn main() {}
