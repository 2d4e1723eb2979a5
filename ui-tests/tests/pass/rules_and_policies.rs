// Every validation rule and the cache / lock / invalidates attributes,
// on the types they apply to; a method with a foreign attribute macro
// (`#[tool]` under another name) takes the deferred path.
use std::borrow::Cow;

use mcp::mcp_tool as tool;

rpc::api_group!(pub struct Shelf => "shelf", mcp = true);

pub struct Books;

#[rpc::service(alias = "Books", groups(Shelf))]
impl Books {
    /// Finds books.
    #[rpc::cache(ttl = 300, env(prod, dev, test))]
    pub fn search(
        &self,
        #[rpc(length(min = 3, max = 100), not_blank, pattern = "^[a-z ]+$")] query: String,
        #[rpc(range(min = 1, max = 100), default = 10)] limit: u32,
        #[rpc(range(min = -1.5, max = 2.5))] boost: Option<f64>,
        #[rpc(one_of("asc", "desc"))] order: Option<String>,
        #[rpc(one_of(1, 2, 3))] page_size: u8,
        #[rpc(length(max = 5))] tags: Vec<String>,
        #[rpc(length(min = 1))] authors: Option<Vec<String>>,
        // ECMA-262 (look-ahead too, with the `jsonschema` feature: tests/tests/validation_rules.rs).
        #[rpc(pattern = r"^(?<code>[a-z\d]{4,})$")] code: Option<String>,
    ) -> usize {
        let _ = (query, limit, boost, order, page_size, tags, authors, code);
        0
    }

    /// Gets one book.
    #[rpc::cache(ttl = 60)]
    pub fn get(
        &self,
        #[rpc(uuid)] id: String,
        #[rpc(email)] contact: Option<String>,
        #[rpc(date)] on: Option<String>,
        #[rpc(date_time)] at: Option<String>,
        #[rpc(uri)] link: Option<String>,
    ) -> String {
        let _ = (contact, on, at, link);
        id
    }

    /// Updates a book.
    #[rpc::lock(param = "id", ttl = 10)]
    #[rpc::invalidates("Books.get", warm_up)]
    #[rpc::invalidates("Books.search")]
    pub fn update(&self, id: String, ctx: rpc::Context) {
        let _ = (id, ctx);
    }

    /// Durations with units: a bare number is seconds.
    #[rpc::cache(ttl = 5m)]
    pub fn units(&self) {}

    /// A lock's duration with units.
    #[rpc::lock(ttl = "1h30m")]
    pub fn locked_units(&self) {}

    /// Durations in seconds, by name; a unit within a deferred method.
    #[rpc::cache(ttl_secs = 90)]
    #[tool(read_only_hint)]
    pub fn seconds(&self) {}

    /// A lock's duration with a unit, within a deferred method.
    #[rpc::lock(ttl = 2h)]
    #[tool(idempotent_hint)]
    pub fn locked_hours(&self) {}

    /// Rebuilds the index.
    #[rpc::lock]
    #[tool(destructive_hint)]
    #[rpc::invalidates("Books.search")]
    pub fn reindex(&self, #[rpc(not_blank)] reason: Cow<'static, str>) {
        let _ = reason;
    }
}

pub fn main() {
    use rpc::descriptor::{CachePolicy, Format, LockPolicy, Relation, Rule};
    let registry = rpc::Registry::builder().service(Books).build().expect("registry builds");
    let search = registry.method(1, "Books.search", None).expect("search").descriptor();
    assert_eq!(
        search.cache,
        Some(CachePolicy {
            ttl_secs: 300,
            environments: &[rpc::Environment::Prod, rpc::Environment::Dev, rpc::Environment::Test]
        })
    );
    assert_eq!(
        search.params[0].rules,
        &[Rule::Length { min: Some(3), max: Some(100) }, Rule::Pattern("^[a-z ]+$"), Rule::NotBlank]
    );
    assert_eq!(search.params[2].rules, &[Rule::Range { min: Some(-1.5), max: Some(2.5) }]);
    assert_eq!(search.params[3].rules, &[Rule::OneOf(r#"["asc","desc"]"#)]);
    let get = registry.method(1, "Books.get", None).expect("get").descriptor();
    assert_eq!(get.cache, Some(CachePolicy { ttl_secs: 60, environments: &[rpc::Environment::Prod] }));
    assert_eq!(get.params[3].rules, &[Rule::Format(Format::DateTime)]);
    let update = registry.method(1, "Books.update", None).expect("update").descriptor();
    assert_eq!(update.lock, Some(LockPolicy { param: Some("id"), ttl_secs: 10 }));
    assert_eq!(
        update.invalidates,
        &[Relation { method: "Books.get", warm_up: true }, Relation { method: "Books.search", warm_up: false }]
    );
    let reindex = registry.method(1, "Books.reindex", None).expect("reindex").descriptor();
    assert_eq!(reindex.lock, Some(LockPolicy { param: None, ttl_secs: 30 }));
    assert_eq!(reindex.invalidates, &[Relation { method: "Books.search", warm_up: false }]);
    assert_eq!(reindex.tool.destructive_hint, Some(true));
    let units = registry.method(1, "Books.units", None).expect("units").descriptor();
    assert_eq!(units.cache.map(|c| c.ttl_secs), Some(300), "5m is five minutes");
    let locked = registry.method(1, "Books.locked_units", None).expect("locked_units").descriptor();
    assert_eq!(locked.lock, Some(LockPolicy { param: None, ttl_secs: 5400 }));
    let seconds = registry.method(1, "Books.seconds", None).expect("seconds").descriptor();
    assert_eq!(seconds.cache.map(|c| c.ttl_secs), Some(90));
    let hours = registry.method(1, "Books.locked_hours", None).expect("locked_hours").descriptor();
    assert_eq!(hours.lock.map(|l| l.ttl_secs), Some(7200));
}
