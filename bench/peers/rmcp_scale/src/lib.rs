//! The methods of `bench/scale` as rmcp tools: `build.rs` writes
//! `SCALE_METHODS` of them (default 20) in servers of 50, and 10 more; with
//! `SCALE_ANNOTATED=0`, the same methods without rmcp's macros.

#![allow(missing_docs, dead_code, unused_imports)]

use std::fmt;

use rmcp::handler::server::{router::tool::ToolRouter, wrapper::Json, wrapper::Parameters};
use rmcp::model::{ServerCapabilities, ServerConfig};
use rmcp::{ErrorData, ServerHandler, schemars, tool, tool_handler, tool_router};
use serde::{Deserialize, Serialize};

/// An item.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Item {
    /// The item's id.
    pub id: u64,
    /// Its kind (the method's number).
    pub kind: u32,
    /// Its name.
    pub name: String,
    /// Its details, when asked for.
    pub detail: Option<String>,
}

/// The items of a search.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Items {
    /// The items found.
    pub items: Vec<Item>,
}

/// The fixture's errors.
#[derive(Debug, Clone, PartialEq)]
pub enum ScaleError {
    /// No item has this id.
    NotFound(u64),
    /// A name may not be empty.
    EmptyName,
}

impl fmt::Display for ScaleError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ScaleError::NotFound(id) => write!(f, "item {id} not found"),
            ScaleError::EmptyName => f.write_str("a name may not be empty"),
        }
    }
}

impl std::error::Error for ScaleError {}

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

fn item(id: u64, kind: usize, detail: bool) -> Result<Item, ScaleError> {
    if id == 0 || id > 1000 {
        return Err(ScaleError::NotFound(id));
    }
    let kind = kind as u32;
    Ok(Item { id, kind, name: format!("item {id}"), detail: detail.then(|| format!("item {id} of kind {kind}")) })
}

fn search(query: &str, limit: u32, kind: usize) -> Vec<Item> {
    (1..=u64::from(limit.min(20)))
        .filter_map(|id| item(id, kind, false).ok())
        .filter(|i| i.name.contains(query))
        .collect()
}

fn rename(id: u64, name: String, kind: usize) -> Result<Item, ScaleError> {
    if name.is_empty() {
        return Err(ScaleError::EmptyName);
    }
    item(id, kind, false).map(|item| Item { name, ..item })
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
