//! Documents about an endpoint: the MCP Registry's [`server_json`] and a
//! [`manifest`] per AI client. Streamable HTTP serves them below each
//! version (`GET /v{N}/server.json`, `GET /v{N}/manifests/{client}`).

pub mod manifest;
pub mod server_json;
