// The method attributes and parameter rules under a renamed `rpc-core`
// (`my_rpc`), directly and through a `use ... as ...` import.
use my_rpc::lock as exclusive;

pub struct Svc;

#[my_rpc::service]
impl Svc {
    /// Gets.
    #[my_rpc::cache(ttl = 5, env(dev))]
    pub fn get(&self, #[my_rpc(length(min = 1), not_blank)] key: String) -> String {
        key
    }

    /// Puts.
    #[exclusive(param = "key")]
    #[my_rpc::invalidates("Svc.get")]
    pub fn put(&self, #[my_rpc(range(max = 10))] key: u8) -> u8 {
        key
    }
}

pub fn main() {
    let registry = my_rpc::Registry::builder().service(Svc).build().expect("registry builds");
    let get = registry.method(1, "Svc.get", None).expect("get").descriptor();
    assert_eq!(get.cache.map(|c| c.ttl_secs), Some(5));
    assert_eq!(get.params[0].rules.len(), 2);
    let put = registry.method(1, "Svc.put", None).expect("put").descriptor();
    assert_eq!(put.lock.and_then(|l| l.param), Some("key"));
    assert_eq!(put.params[0].rules.len(), 1);
    assert_eq!(put.invalidates.iter().map(|r| r.method).collect::<Vec<_>>(), ["Svc.get"]);
}
