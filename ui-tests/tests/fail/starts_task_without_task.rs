// `starts_task` only means something for a tool that runs as a task.
use mcp::mcp_tool;

rpc::api_group!(pub struct Tools => "tools", mcp = true);

pub struct Svc;

#[rpc::service(groups(Tools))]
impl Svc {
    /// Works long.
    #[mcp_tool(starts_task)]
    pub async fn work(&self, ctx: mcp::Context) -> Result<(), rpc::RpcError> {
        ctx.start_task().await?;
        Ok(())
    }
}

fn main() {}
