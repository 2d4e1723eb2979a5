//! The methods of `bench/scale` as rmcp tools: `build.rs` writes
//! `SCALE_METHODS` of them (default 20) in servers of 50, and 10 more; with
//! `SCALE_ANNOTATED=0`, the same methods without rmcp's macros.

#![allow(missing_docs, dead_code, unused_imports)]

use rmcp::handler::server::{router::tool::ToolRouter, wrapper::Json, wrapper::Parameters};
use rmcp::model::{ServerCapabilities, ServerConfig};
use rmcp::{ErrorData, ServerHandler, schemars, tool, tool_handler, tool_router};
use serde::{Deserialize, Serialize};

/// The items of a search.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Items {
    /// The items found.
    pub items: Vec<Item>,
}

include!("../../../scale/src/items.rs");

impl From<ScaleError> for ErrorData {
    fn from(error: ScaleError) -> Self {
        ErrorData::invalid_params(error.to_string(), None)
    }
}

/// The arguments of a lookup (shared by every lookup: the most favourable
/// way to write them with rmcp).
#[derive(Debug, Deserialize, schemars::JsonSchema)]
pub struct GetArgs {
    /// The item's id
    pub id: u64,
    /// Whether to include the details
    pub detail: Option<bool>,
}

/// The arguments of a search.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
pub struct SearchArgs {
    /// Words to look for
    pub query: String,
    /// At most this many results
    pub limit: Option<u32>,
}

/// The arguments of a write.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
pub struct RenameArgs {
    /// The item's id
    pub id: u64,
    /// The new name
    pub name: String,
}

include!(concat!(env!("OUT_DIR"), "/servers.rs"));

#[cfg(all(test, annotated))]
mod tests {
    /// The macros made every method a tool, with its annotations.
    #[test]
    fn every_method_is_a_tool() {
        let tools = super::B0::tool_router().list_all();
        assert_eq!(tools.len(), 50);
        let get = tools.iter().find(|t| t.name == "get_0").expect("get_0");
        assert_eq!(get.annotations.as_ref().and_then(|a| a.read_only_hint), Some(true));
        assert!(get.output_schema.is_some(), "Json<Item> describes its output");
    }
}
