// `#[rpc(header)]` needs a valid header name part, unique in the tool.
pub struct Svc;

#[rpc::service]
impl Svc {
    /// Routes.
    pub fn route(
        &self,
        #[rpc(header = "a b")] region: String,
        #[rpc(header = "Zone")] zone: String,
        #[rpc(header = "zone")] zone2: String,
    ) -> String {
        format!("{region}{zone}{zone2}")
    }
}

fn main() {}
