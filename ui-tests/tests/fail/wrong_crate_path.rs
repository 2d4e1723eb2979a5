// A `crate = "..."` path that leads nowhere: the path's own error, not
// absurd ones about the parameters ("`range` applies to number parameters,
// but `id` is `u64`").
rpc::api_group!(pub struct Mcp => "mcp", mcp = true);

pub struct Other;

#[rpc::service(groups(Mcp), crate = "nowhere::rpc")]
impl Other {
    /// Echoes.
    pub fn d(&self, #[rpc(range(min = 1))] id: u64, #[rpc(length(max = 5))] name: String) -> u64 {
        let _ = name;
        id
    }
}

fn main() {}
