// A group type that does not exist (a typo): one error, on the name, with
// rustc's suggestion of the declared group.
rpc::api_group!(pub struct Public => "public", mcp = true);

pub struct Svc;

#[rpc::service(groups(Pubilc))]
impl Svc {
    /// One.
    pub fn one(&self) -> u32 {
        1
    }

    /// Two.
    pub fn two(&self) -> u32 {
        2
    }

    /// Three.
    #[rpc::info(name = "Svc.three")]
    pub fn three(&self) -> u32 {
        3
    }
}

fn main() {}
