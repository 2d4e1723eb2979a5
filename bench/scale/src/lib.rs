//! A benchmark fixture: an application with many annotated methods.
//!
//! `build.rs` writes `SCALE_METHODS` methods (default 20) into the MCP group
//! [`Big`] and 10 into [`Small`]; `bench/scale.py` builds it with 1,000 (the
//! start-up time and the `tools/list` cost of issue 19) and with 200, with and
//! without the annotations (`SCALE_ANNOTATED=0`, the compile-time ratio).

#![allow(missing_docs)]

use std::fmt;

#[allow(unused_imports)]
use mcp::{mcp_tool, rpc};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

rpc::api_group! {
    /// The many methods.
    pub struct Big => "big", mcp = true;
}

rpc::api_group! {
    /// Ten methods, the list `Big`'s is compared with.
    pub struct Small => "small", mcp = true;
}

/// An item.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
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

impl rpc::ApplicationError for ScaleError {
    fn code(&self) -> i32 {
        match self {
            ScaleError::NotFound(_) => 404,
            ScaleError::EmptyName => 422,
        }
    }
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

include!(concat!(env!("OUT_DIR"), "/services.rs"));

/// Every generated service, registered with `app` (annotated builds only).
pub fn with_services(app: mcp::App) -> mcp::App {
    include!(concat!(env!("OUT_DIR"), "/register.rs"))
}
