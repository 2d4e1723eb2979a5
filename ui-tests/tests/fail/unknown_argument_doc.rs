// A `# Arguments` entry must name a parameter: a typo would drop its description.
pub struct Svc;

#[rpc::service]
impl Svc {
    /// Search.
    ///
    /// # Arguments
    /// * `qurey` - What to find
    /// * `limit` - How many
    pub fn search(&self, query: String, limit: u32) -> Vec<String> {
        vec![query; limit as usize]
    }
}

fn main() {}
