//! The catalog's services: plain Rust methods, annotated.

use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, RwLock};

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

/// A subscription to restock notices.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Subscription {
    /// The subscription's id (a UUID).
    pub id: String,
    /// The product.
    pub product: u64,
    /// Where notices go.
    pub email: String,
    /// How often: `daily` or `weekly`.
    pub digest: String,
    /// The last day notices are sent (`YYYY-MM-DD`), if any.
    pub until: Option<String>,
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

/// Errors of the catalog: each variant has its own JSON-RPC code (listed in
/// the `errors` of every method returning it, in the OpenRPC document) and
/// exposes its `#[rpc(data)]` fields in `data.extra`.
#[derive(Debug, Clone, PartialEq, rpc::ApplicationError)]
pub enum CatalogError {
    /// No product has this id.
    #[rpc(code = 404)]
    NotFound(#[rpc(data = "id")] u64),
    /// No subscription has this id.
    #[rpc(code = 4041)]
    NoSubscription(#[rpc(data = "subscription")] String),
    /// No product has this name.
    #[rpc(code = 4042)]
    NoSuchName(#[rpc(data = "name")] String),
    /// The catalog keeps no more subscriptions.
    #[rpc(code = 429)]
    TooManySubscriptions,
}

impl fmt::Display for CatalogError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CatalogError::NotFound(id) => write!(f, "product {id} not found"),
            CatalogError::NoSubscription(id) => write!(f, "subscription {id} not found"),
            CatalogError::NoSuchName(name) => write!(f, "no product is named {name:?}"),
            CatalogError::TooManySubscriptions => {
                write!(f, "the catalog keeps at most {MAX_SUBSCRIPTIONS} subscriptions")
            }
        }
    }
}

/// The most subscriptions the example keeps (it keeps them in memory).
pub const MAX_SUBSCRIPTIONS: usize = 10_000;

impl std::error::Error for CatalogError {}

/// The built-in `ping`.
#[derive(Debug, Default)]
pub struct Pinger;

/// Is the server there?
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
    products: RwLock<Vec<Product>>,
    subscriptions: Mutex<Vec<Subscription>>,
    subscribed: AtomicU64,
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
        Catalog {
            products: RwLock::new(products),
            subscriptions: Mutex::new(Vec::new()),
            subscribed: AtomicU64::new(0),
            reindexed: AtomicU64::new(0),
        }
    }

    /// The products, for reading (a panicked writer left them consistent:
    /// every write is a single assignment).
    fn products(&self) -> std::sync::RwLockReadGuard<'_, Vec<Product>> {
        self.products.read().unwrap_or_else(|e| e.into_inner())
    }

    /// The product `id`.
    pub(crate) fn product_by_id(&self, id: u64) -> Result<Product, CatalogError> {
        self.products().iter().find(|p| p.id == id).cloned().ok_or(CatalogError::NotFound(id))
    }

    /// The product named `name` (case-insensitive).
    pub(crate) fn product_by_name(&self, name: &str) -> Option<Product> {
        self.products().iter().find(|p| p.name.eq_ignore_ascii_case(name)).cloned()
    }

    /// Up to `limit` product names that `keep` accepts, in id order.
    pub(crate) fn names_where(&self, keep: impl Fn(&str) -> bool, limit: usize) -> Vec<String> {
        self.products().iter().filter(|p| keep(&p.name)).take(limit).map(|p| p.name.clone()).collect()
    }

    /// Up to `limit` product ids (as text) that `keep` accepts, in id order.
    pub(crate) fn ids_where(&self, keep: impl Fn(&str) -> bool, limit: usize) -> Vec<String> {
        self.products().iter().map(|p| p.id.to_string()).filter(|id| keep(id)).take(limit).collect()
    }

    /// How many subscriptions `email` holds.
    pub(crate) fn subscriptions_of(&self, email: &str) -> usize {
        let subscriptions = self.subscriptions.lock().unwrap_or_else(|e| e.into_inner());
        subscriptions.iter().filter(|s| s.email.eq_ignore_ascii_case(email)).count()
    }

    /// Removes every subscription of `email`; how many there were.
    pub(crate) fn remove_subscriptions_of(&self, email: &str) -> usize {
        let mut subscriptions = self.subscriptions.lock().unwrap_or_else(|e| e.into_inner());
        let before = subscriptions.len();
        subscriptions.retain(|s| !s.email.eq_ignore_ascii_case(email));
        before - subscriptions.len()
    }

    fn find(&self, query: &str, limit: u32) -> Vec<Product> {
        let query = query.to_lowercase();
        self.products()
            .iter()
            .filter(|p| p.name.to_lowercase().contains(&query))
            .take(limit as usize)
            .cloned()
            .collect()
    }
}

/// Products: search, details, renames, and restock notices.
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
    #[rpc::cache(ttl = 30, env(prod, dev))]
    pub async fn search(
        &self,
        #[rpc(length(min = 1, max = 100))] query: String,
        #[rpc(default = 10, range(min = 1, max = 100))] limit: u32,
    ) -> Vec<Product> {
        self.find(&query, limit)
    }

    /// Get one product by id.
    ///
    /// Fails with error 404 when there is no such product.
    ///
    /// # Arguments
    /// * `id` - Product id
    #[mcp_tool(title = "Get product", read_only_hint = true)]
    #[rpc::cache(ttl = 300, env(prod, dev))]
    pub fn get(&self, #[rpc(range(min = 1))] id: u64) -> Result<Product, CatalogError> {
        self.product_by_id(id)
    }

    /// Rename a product.
    ///
    /// One rename per product at a time: a concurrent rename of the same
    /// product fails at once with -32400 ("locked"). The product's cached
    /// `Catalog.get` result is replaced once the rename is answered.
    ///
    /// # Arguments
    /// * `id` - Product id
    /// * `name` - The new name
    #[mcp_tool(title = "Rename product", idempotent_hint = true, destructive_hint = false, scopes("catalog:write"))]
    #[rpc::lock(param = "id", ttl = 10)]
    #[rpc::invalidates("Catalog.get", warm_up)]
    #[rpc::invalidates("Catalog.product")]
    pub fn rename(
        &self,
        #[rpc(range(min = 1))] id: u64,
        #[rpc(length(max = 80), not_blank)] name: String,
    ) -> Result<Product, CatalogError> {
        let mut products = self.products.write().unwrap_or_else(|e| e.into_inner());
        let product = products.iter_mut().find(|p| p.id == id).ok_or(CatalogError::NotFound(id))?;
        product.name = name.trim().to_owned();
        // Agents that subscribed to the product's resource read it again.
        crate::changes().resource_updated(&format!("catalog://products/{id}"));
        Ok(product.clone())
    }

    /// Subscribe an email address to restock notices for a product.
    ///
    /// # Arguments
    /// * `id` - Product id
    /// * `email` - Where notices go
    /// * `digest` - How often notices are sent: `daily` or `weekly`
    /// * `until` - The last day notices are sent (`YYYY-MM-DD`); none: until cancelled
    #[mcp_tool(title = "Subscribe to restock notices", idempotent_hint = false, destructive_hint = false)]
    pub fn subscribe(
        &self,
        #[rpc(range(min = 1))] id: u64,
        #[rpc(email, length(max = 254))] email: String,
        #[rpc(default = "weekly", one_of("daily", "weekly"))] digest: String,
        #[rpc(date)] until: Option<String>,
    ) -> Result<Subscription, CatalogError> {
        self.get(id)?;
        let mut subscriptions = self.subscriptions.lock().unwrap_or_else(|e| e.into_inner());
        if subscriptions.len() >= MAX_SUBSCRIPTIONS {
            return Err(CatalogError::TooManySubscriptions);
        }
        let number = self.subscribed.fetch_add(1, Ordering::Relaxed) + 1;
        let subscription =
            Subscription { id: format!("5b6f0c1e-0000-4000-8000-{number:012x}"), product: id, email, digest, until };
        subscriptions.push(subscription.clone());
        Ok(subscription)
    }

    /// Cancel a subscription to restock notices.
    ///
    /// # Arguments
    /// * `subscription` - The subscription's id, as `Catalog.subscribe` returned it
    #[mcp_tool(title = "Cancel a subscription", idempotent_hint = true, destructive_hint = true)]
    pub fn unsubscribe(&self, #[rpc(uuid)] subscription: String) -> Result<Subscription, CatalogError> {
        let mut subscriptions = self.subscriptions.lock().unwrap_or_else(|e| e.into_inner());
        let index = subscriptions
            .iter()
            .position(|s| s.id.eq_ignore_ascii_case(&subscription))
            .ok_or(CatalogError::NoSubscription(subscription))?;
        Ok(subscriptions.remove(index))
    }

    /// List products in a given order.
    ///
    /// # Arguments
    /// * `sort` - Order of the listing
    /// * `page` - Page number, from 1 (20 products per page)
    #[mcp_tool(read_only_hint = true)]
    pub fn list(&self, sort: SortOrder, #[rpc(default = 1)] page: u32) -> Vec<Product> {
        let mut products = self.products().clone();
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
        let snapshot = self.products().clone();
        let total = snapshot.len();
        let (mut longest, mut characters) = (String::new(), 0usize);
        for (batch, products) in snapshot.chunks(25).enumerate() {
            for product in products {
                let length = product.name.chars().count();
                characters += length;
                if length > longest.chars().count() {
                    longest.clone_from(&product.name);
                }
            }
            let scanned = ((batch + 1) * 25).min(total);
            ctx.progress(scanned as f64, Some(total as f64), Some("scanning products"));
            // A tenth of a second a batch, a stand-in for real work: a client
            // sees the progress arrive while the call goes on (over stdio a
            // progress notification is written only once the call has gone on
            // for 50 ms after it).
            tokio::time::sleep(std::time::Duration::from_millis(100)).await;
        }
        let average = if total == 0 { 0.0 } else { characters as f64 / total as f64 };
        ctx.info(serde_json::json!({"products": total, "longest_name": longest}));
        CatalogStats { products: total as u64, longest_name: longest, average_name_length: average }
    }

    /// Rebuild the search index.
    ///
    /// A back-office method of the `admin` group over JSON-RPC, and an MCP
    /// tool that runs as a task: a client that takes tasks gets a task id at
    /// once and polls it while the index is rebuilt (others wait for the
    /// result). One rebuild at a time, across every instance sharing the
    /// lock store: a second call while one runs fails at once with -32400.
    /// Returns how many rebuilds ran.
    ///
    /// # Arguments
    /// * `pause_ms` - How long the rebuild takes, in milliseconds (a stand-in for real work)
    #[rpc::info(groups(Admin, Mcp), scopes("catalog:admin"))]
    #[mcp_tool(title = "Rebuild the search index", idempotent_hint = true, open_world_hint = false, task = optional)]
    #[rpc::lock(ttl = 5)]
    pub async fn reindex(&self, #[rpc(default = 0, range(min = 0, max = 4000))] pause_ms: u64) -> u64 {
        tokio::time::sleep(std::time::Duration::from_millis(pause_ms)).await;
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

/// Products, version 2: paged search and a count.
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
        #[rpc(length(min = 1, max = 100))] query: String,
        #[rpc(default = 10, range(min = 1, max = 100))] limit: u32,
        #[rpc(default = 0)] offset: u32,
    ) -> Vec<Product> {
        let mut found = self.catalog.find(&query, limit.saturating_add(offset));
        found.drain(..(offset as usize).min(found.len()));
        found
    }

    /// Number of products in the catalog.
    #[mcp_tool(read_only_hint = true)]
    pub fn count(&self) -> usize {
        self.catalog.products().len()
    }
}
