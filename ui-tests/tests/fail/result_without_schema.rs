// A result type needs Serialize and JsonSchema; one error, on the return type.
pub struct Svc;

#[derive(serde::Serialize)]
pub struct Report;

#[rpc::service]
impl Svc {
    /// Reports.
    pub fn report(&self) -> Result<Report, rpc::RpcError> {
        Ok(Report)
    }
}

fn main() {}
