// `Bad:ping` is fine in a group that is not published over MCP.
rpc::api_group!(pub struct Internal => "internal");

pub struct Bad;

#[rpc::service(alias = "Bad", separator = ":", groups(Internal))]
impl Bad {
    /// Ping.
    pub fn ping(&self) -> String {
        "pong".into()
    }
}

pub fn main() {
    let registry = rpc::Registry::builder().service(Bad).build().expect("registry builds");
    assert!(registry.method(1, "Bad:ping", Some("internal")).is_some());
}
