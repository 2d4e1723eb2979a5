//! `scale [big|small] [HOST:PORT]`: serves the fixture's group `big` (default)
//! or `small` over HTTP (MCP at `/mcp/v1`, JSON-RPC at `/rpc`), on
//! 127.0.0.1:8120 by default.

#[tokio::main]
async fn main() -> Result<(), mcp::AppError> {
    let mut args = std::env::args().skip(1);
    let group = args.next().unwrap_or_else(|| "big".into());
    let listen = args.next().unwrap_or_else(|| "127.0.0.1:8120".into());
    let app = match group.as_str() {
        "small" => mcp::App::new::<scale::Small>(),
        _ => mcp::App::new::<scale::Big>(),
    };
    scale::with_services(app).serve(listen).await
}
