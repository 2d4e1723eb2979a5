//! The catalog's services: plain Rust methods, annotated.

use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};

use mcp::mcp_tool;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

rpc::api_group! {
    /// Methods published to AI agents over MCP (`/mcp/{ver}`).
    pub struct Mcp => "mcp", mcp = true;
}

rpc::api_group! {
    /// Back-office methods, served over JSON-RPC only.
    pub struct Admin => "admin";
}

/// A product.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Product {
    /// Product id.
    pub id: u64,
    /// Product name.
    pub name: String,
}

/// A category with its subcategories (a recursive tree).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Category {
    /// Category name.
    pub name: String,
    /// Subcategories.
    pub children: Vec<Category>,
}

/// Figures about the catalog.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct CatalogStats {
    /// Number of products.
    pub products: u64,
    /// The longest product name.
    pub longest_name: String,
    /// Average length of a product name, in characters.
    pub average_name_length: f64,
}

/// How to order a product listing.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum SortOrder {
    /// By id, ascending.
    IdAsc,
    /// By id, descending.
    IdDesc,
    /// By name, alphabetically.
    Name,
}

/// Errors of the catalog.
#[derive(Debug, Clone, PartialEq)]
pub enum CatalogError {
    /// No product has this id.
    NotFound(u64),
}

impl fmt::Display for CatalogError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CatalogError::NotFound(id) => write!(f, "product {id} not found"),
        }
    }
}

impl std::error::Error for CatalogError {}

impl rpc::ApplicationError for CatalogError {
    fn code(&self) -> i32 {
        match self {
            CatalogError::NotFound(_) => 404,
        }
    }
    fn data(&self) -> Option<serde_json::Value> {
        match self {
            CatalogError::NotFound(id) => Some(serde_json::json!({"id": id})),
        }
    }
}

/// The built-in `ping`.
#[derive(Debug, Default)]
pub struct Pinger;

#[rpc::service(alias = "", groups(Mcp))]
impl Pinger {
    /// Ping.
    ///
    /// # Arguments
    /// * `who` - Who is pinging
    pub fn ping(&self, #[rpc(default = "x")] who: String) -> String {
        format!("pong {who}")
    }
}

/// An in-memory product catalog.
#[derive(Debug)]
pub struct Catalog {
    products: Vec<Product>,
    reindexed: AtomicU64,
}

impl Default for Catalog {
    fn default() -> Self {
        Self::new()
    }
}

impl Catalog {
    /// The example catalog: products 1 to 100.
    pub fn new() -> Self {
        Self::with_products(100)
    }

    /// A catalog of products `1..=count`, named `n1`, `n2`, ...
    pub fn with_products(count: u64) -> Self {
        let products = (1..=count).map(|id| Product { id, name: format!("n{id}") }).collect();
        Catalog { products, reindexed: AtomicU64::new(0) }
    }

    fn find(&self, query: &str, limit: u32) -> Vec<Product> {
        let query = query.to_lowercase();
        self.products.iter().filter(|p| p.name.to_lowercase().contains(&query)).take(limit as usize).cloned().collect()
    }
}

#[rpc::service(groups(Mcp))]
impl Catalog {
    /// Search products by name.
    ///
    /// Returns up to `limit` products whose name contains `query`, in id order.
    ///
    /// # Arguments
    /// * `query` - Text the product name must contain (case-insensitive)
    /// * `limit` - Maximum number of products to return
    #[mcp_tool(read_only_hint = true, idempotent_hint = true)]
    pub async fn search(&self, query: String, #[rpc(default = 10)] limit: u32) -> Vec<Product> {
        self.find(&query, limit)
    }

    /// Get one product by id.
    ///
    /// Fails with error 404 when there is no such product.
    ///
    /// # Arguments
    /// * `id` - Product id
    #[mcp_tool(title = "Get product", read_only_hint = true)]
    pub fn get(&self, id: u64) -> Result<Product, CatalogError> {
        self.products.iter().find(|p| p.id == id).cloned().ok_or(CatalogError::NotFound(id))
    }

    /// List products in a given order.
    ///
    /// # Arguments
    /// * `sort` - Order of the listing
    /// * `page` - Page number, from 1 (20 products per page)
    #[mcp_tool(read_only_hint = true)]
    pub fn list(&self, sort: SortOrder, #[rpc(default = 1)] page: u32) -> Vec<Product> {
        let mut products = self.products.clone();
        match sort {
            SortOrder::IdAsc => {}
            SortOrder::IdDesc => products.reverse(),
            SortOrder::Name => products.sort_by(|a, b| a.name.cmp(&b.name)),
        }
        products.into_iter().skip(page.saturating_sub(1) as usize * 20).take(20).collect()
    }

    /// The category tree.
    #[mcp_tool(read_only_hint = true)]
    pub fn categories(&self) -> Category {
        let leaf = |name: &str| Category { name: name.into(), children: vec![] };
        Category {
            name: "All".into(),
            children: vec![
                Category { name: "Books".into(), children: vec![leaf("Fiction"), leaf("Science")] },
                leaf("Music"),
            ],
        }
    }

    /// Figures about the catalog: the number of products and their names.
    ///
    /// Scans the catalog in batches of 25 products, reporting progress after
    /// each batch when the client asked for it, and logs a summary.
    #[mcp_tool(read_only_hint = true, idempotent_hint = true)]
    pub async fn stats(&self, ctx: mcp::Context) -> CatalogStats {
        let total = self.products.len();
        let (mut longest, mut characters) = (String::new(), 0usize);
        for (batch, products) in self.products.chunks(25).enumerate() {
            for product in products {
                let length = product.name.chars().count();
                characters += length;
                if length > longest.chars().count() {
                    longest.clone_from(&product.name);
                }
            }
            let scanned = ((batch + 1) * 25).min(total);
            ctx.progress(scanned as f64, Some(total as f64), Some("scanning products"));
            tokio::task::yield_now().await;
        }
        let average = if total == 0 { 0.0 } else { characters as f64 / total as f64 };
        ctx.info(serde_json::json!({"products": total, "longest_name": longest}));
        CatalogStats { products: total as u64, longest_name: longest, average_name_length: average }
    }

    /// Rebuild the search index.
    ///
    /// A back-office method: it belongs to the `admin` group only, so it is
    /// served over JSON-RPC but is not an MCP tool.
    #[rpc::info(groups(Admin))]
    pub fn reindex(&self) -> u64 {
        self.reindexed.fetch_add(1, Ordering::Relaxed) + 1
    }
}

/// Version 2 of the catalog API: `Catalog.search` gains an offset,
/// `Catalog.count` is new, and `Catalog.list` is gone.
#[derive(Debug)]
pub struct CatalogV2 {
    catalog: std::sync::Arc<Catalog>,
}

impl CatalogV2 {
    /// Version 2 over the same data as version 1.
    pub fn new(catalog: std::sync::Arc<Catalog>) -> Self {
        CatalogV2 { catalog }
    }
}

#[rpc::service(alias = "Catalog", version = 2, groups(Mcp), removed("Catalog.list"))]
impl CatalogV2 {
    /// Search products by name, with paging.
    ///
    /// # Arguments
    /// * `query` - Text the product name must contain (case-insensitive)
    /// * `limit` - Maximum number of products to return
    /// * `offset` - Number of matches to skip
    #[mcp_tool(read_only_hint = true, idempotent_hint = true)]
    pub fn search(
        &self,
        query: String,
        #[rpc(default = 10)] limit: u32,
        #[rpc(default = 0)] offset: u32,
    ) -> Vec<Product> {
        let mut found = self.catalog.find(&query, limit.saturating_add(offset));
        found.drain(..(offset as usize).min(found.len()));
        found
    }

    /// Number of products in the catalog.
    #[mcp_tool(read_only_hint = true)]
    pub fn count(&self) -> usize {
        self.catalog.products.len()
    }
}
