// Documented MCP methods, undocumented methods of groups not published over
// MCP, and methods marked `undocumented` compile without a warning.
#![deny(warnings)]

rpc::api_group!(pub struct Mcp => "mcp", mcp = true);
rpc::api_group!(pub struct Internal => "internal");

pub struct Svc;

#[rpc::service(groups(Mcp))]
impl Svc {
    /// Documented.
    pub fn documented(&self) -> u32 {
        1
    }

    #[rpc::info(undocumented)]
    pub fn described_elsewhere(&self) -> u32 {
        2
    }

    #[rpc::info(groups(Internal))]
    pub fn internal(&self) -> u32 {
        3
    }
}

pub struct Texts;

#[rpc::service(groups(Mcp), undocumented)]
impl Texts {
    pub fn from_translations(&self) -> u32 {
        4
    }
}

pub fn main() {
    let registry = rpc::Registry::builder().service(Svc).service(Texts).build().expect("registry builds");
    assert_eq!(registry.version(1).expect("v1").len(), 4);
}
