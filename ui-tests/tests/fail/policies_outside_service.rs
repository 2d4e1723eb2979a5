// The method attributes mean nothing outside an #[rpc::service] impl block.
#[rpc::cache(ttl = 60)]
pub fn a() {}

#[rpc::lock]
pub fn b() {}

#[rpc::invalidates("Svc.a")]
pub fn c() {}

fn main() {}
