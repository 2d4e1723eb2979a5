//! rmcp 3.11 over stdio, serving the call `bench/scale.py` sends to
//! `catalog --stdio`: a tool `Catalog.get(id)` answering the same result
//! (`{"id": id, "name": "n<id>"}`, as text and as `structuredContent`).
//! The peer of our stdio transport; what it measures is rmcp's per-line
//! cost for the same lines and the same answers.

use rmcp::handler::server::{router::tool::ToolRouter, wrapper::Parameters};
use rmcp::model::{CallToolResult, ContentBlock, ServerCapabilities, ServerConfig};
use rmcp::{ErrorData, ServerHandler, ServiceExt, schemars, tool, tool_handler, tool_router};

#[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
struct GetRequest {
    id: u64,
}

#[derive(Debug, Clone)]
struct Catalog {
    tool_router: ToolRouter<Self>,
}

#[tool_router]
impl Catalog {
    #[tool(name = "Catalog.get", description = "A product by id")]
    fn get(&self, Parameters(GetRequest { id }): Parameters<GetRequest>) -> Result<CallToolResult, ErrorData> {
        let product = serde_json::json!({ "id": id, "name": format!("n{id}") });
        let mut result = CallToolResult::success(vec![ContentBlock::text(product.to_string())]);
        result.structured_content = Some(serde_json::json!({ "result": product }));
        Ok(result)
    }
}

#[tool_handler(router = self.tool_router)]
impl ServerHandler for Catalog {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
    }
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let server = Catalog { tool_router: Catalog::tool_router() }.serve(rmcp::transport::stdio()).await?;
    server.waiting().await?;
    Ok(())
}
