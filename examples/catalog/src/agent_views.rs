//! What AI agents read from the catalog besides its tools: each product as
//! an MCP resource (`catalog://products/{id}`), a prompt that asks for a
//! review of a product, and completion of product names and ids; and a
//! destructive tool that asks the user to confirm first. They are methods
//! of [`Catalog`] like the tools, so they run through the same pipeline
//! (validation, the cache of `Catalog.product`, events) and are JSON-RPC
//! methods too.

use mcp::{AskClient, Content, PromptMessage, mcp_complete, mcp_prompt, mcp_resource, mcp_tool};

use crate::services::{Catalog, CatalogError, Mcp, Product};

/// The most suggestions a completion gives (MCP sends at most 100).
const MAX_SUGGESTIONS: usize = 100;

#[rpc::service(groups(Mcp))]
impl Catalog {
    /// One product, as JSON.
    ///
    /// # Arguments
    /// * `id` - Product id
    #[mcp_resource(
        uri = "catalog://products/{id}",
        name = "product",
        title = "Product",
        mime_type = "application/json"
    )]
    #[rpc::cache(ttl = 300, env(prod, dev))]
    pub fn product(&self, #[rpc(range(min = 1))] id: u64) -> Result<Product, CatalogError> {
        self.product_by_id(id)
    }

    /// Ask for a short review of a product.
    ///
    /// The product's data comes embedded, so the model reviews what the
    /// catalog holds.
    ///
    /// # Arguments
    /// * `name` - The product's name
    /// * `tone` - How the review should sound
    #[mcp_prompt(title = "Review a product")]
    pub fn review(
        &self,
        #[rpc(length(min = 1, max = 100))] name: String,
        #[rpc(default = "neutral", one_of("friendly", "neutral", "critical"))] tone: String,
    ) -> Result<Vec<PromptMessage>, CatalogError> {
        let product = self.product_by_name(&name).ok_or(CatalogError::NoSuchName(name))?;
        let json = serde_json::to_string(&product).unwrap_or_default();
        Ok(vec![
            PromptMessage::user(Content::embedded_text(
                format!("catalog://products/{}", product.id),
                "application/json",
                json,
            )),
            PromptMessage::user(Content::text(format!(
                "Write a {tone} review of the product above in three sentences."
            ))),
        ])
    }

    /// Product names starting with what was typed (case-insensitive).
    ///
    /// # Arguments
    /// * `value` - What was typed so far
    #[mcp_complete(prompt = "Catalog.review", argument = "name")]
    pub fn complete_name(&self, value: String) -> Vec<String> {
        let typed = value.to_lowercase();
        self.names_where(|name| name.to_lowercase().starts_with(&typed), MAX_SUGGESTIONS + 1)
    }

    /// Product ids starting with the digits typed.
    ///
    /// # Arguments
    /// * `value` - The digits typed so far
    #[mcp_complete(resource = "catalog://products/{id}", argument = "id")]
    pub fn complete_id(&self, value: String) -> Vec<String> {
        self.ids_where(|id| id.starts_with(&value), MAX_SUGGESTIONS + 1)
    }

    /// Cancel every restock notice of an email address, once the user
    /// confirmed it.
    ///
    /// Asks the user (MCP elicitation) before removing anything; over
    /// JSON-RPC, where nobody can be asked, it refuses.
    ///
    /// # Arguments
    /// * `email` - The address whose subscriptions end
    #[mcp_tool(title = "Cancel all subscriptions of an address", destructive_hint = true, idempotent_hint = true)]
    pub async fn unsubscribe_all(
        &self,
        ctx: mcp::Context,
        #[rpc(email)] email: String,
    ) -> Result<String, rpc::RpcError> {
        let count = self.subscriptions_of(&email);
        if count == 0 {
            return Ok(format!("{email} has no subscriptions"));
        }
        let question = format!("Cancel all {count} restock notices of {email}?");
        let schema = serde_json::json!({
            "type": "object",
            "properties": {"confirm": {"type": "boolean", "title": "Cancel them", "default": false}},
            "required": ["confirm"]
        });
        let answer = ctx.elicit("confirm", &question, schema).await?;
        if !answer.accepted_bool("confirm") {
            return Ok(format!("kept the subscriptions of {email}"));
        }
        let removed = self.remove_subscriptions_of(&email);
        Ok(format!("cancelled {removed} subscriptions of {email}"))
    }
}
