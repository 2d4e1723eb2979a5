// #[rpc::info] means nothing outside an #[rpc::service] impl block.
#[rpc::info(name = "x")]
pub fn free() {}

fn main() {}
