//! Registration by type in a binary that links several annotated crates
//! (the catalog and the conformance fixtures): a registry holds exactly the
//! services it was given.

use catalog::{Catalog, CatalogV2};
use rpc::{Call, Environment, Executor, Params, Registry};
use serde_json::json;

#[tokio::test]
async fn one_service_among_many_linked() {
    // Linked here: the catalog's Pinger, Catalog and CatalogV2, the
    // conformance Fixtures, and this test crate's own services.
    let _linked = conformance_server::Fixtures::default();
    let registry = Registry::builder().service(Catalog::new()).build().expect("Catalog alone builds");
    let names: Vec<&str> = registry.version(1).expect("version 1").iter().map(|m| m.name()).collect();
    assert_eq!(
        names,
        [
            "Catalog.categories",
            "Catalog.complete_id",
            "Catalog.complete_name",
            "Catalog.get",
            "Catalog.list",
            "Catalog.product",
            "Catalog.reindex",
            "Catalog.rename",
            "Catalog.review",
            "Catalog.search",
            "Catalog.stats",
            "Catalog.subscribe",
            "Catalog.unsubscribe",
            "Catalog.unsubscribe_all"
        ]
    );
    assert_eq!(registry.versions().collect::<Vec<_>>(), [1], "CatalogV2 was not registered");

    let executor = Executor::new(registry, Environment::Test);
    let params = Params::Named(json!({"id": 3}).as_object().cloned().unwrap_or_default());
    let result = executor.execute(Call::new("Catalog.get", 1, params)).await.result.expect("Catalog.get runs");
    assert_eq!(result.get(), r#"{"id":3,"name":"n3"}"#);
}

#[tokio::test]
async fn version_two_without_version_one_says_which_type_to_add() {
    let catalog = std::sync::Arc::new(Catalog::new());
    let error = Registry::builder().service(CatalogV2::new(catalog.clone())).build().expect_err("the base is missing");
    let message = error.to_string();
    assert!(message.contains("declares version 2 of `Catalog`"), "{message}");
    assert!(message.contains("`catalog::services::Catalog`"), "names the base type: {message}");
    assert_eq!(error.problems().len(), 1, "one problem, not a cascade: {message}");

    let registry = Registry::builder()
        .service_arc(catalog.clone())
        .service(CatalogV2::new(catalog))
        .build()
        .expect("with the base it builds");
    assert!(registry.method(2, "Catalog.search", None).is_some());
    assert!(registry.method(2, "Catalog.list", None).is_none(), "removed in version 2");
    assert!(registry.method(2, "Catalog.get", None).is_some(), "inherited from version 1");
}

mod copied_group {
    rpc::api_group!(pub struct Agents => "agents", mcp = true);
    // Copy-pasted, the name left as it was: the admin methods would be served to agents.
    rpc::api_group!(pub struct Admin => "agents");

    pub struct Tools;
    #[rpc::service(groups(Agents))]
    impl Tools {
        /// Searches.
        pub fn search(&self) {}
    }

    pub struct Back;
    #[rpc::service(groups(Admin))]
    impl Back {
        /// Drops everything.
        pub fn purge(&self) {}
    }
}

#[test]
fn two_groups_of_one_name_are_refused_naming_both_declarations() {
    let error = Registry::builder()
        .service(copied_group::Tools)
        .service(copied_group::Back)
        .build()
        .expect_err("two groups named agents");
    let problem = error.problems().iter().find(|p| p.contains("declared twice")).expect("the group problem");
    assert!(problem.contains("group \"agents\""), "{problem}");
    assert!(
        problem.contains("Agents at tests/tests/registration.rs:")
            || problem.contains("Agents at tests/registration.rs:"),
        "{problem}"
    );
    assert!(problem.contains("Admin at "), "{problem}");
    // Each alone is fine.
    assert!(Registry::builder().service(copied_group::Tools).build().is_ok());
    assert!(Registry::builder().service(copied_group::Back).build().is_ok());
}

mod misspelt_removal {
    pub struct Shop;
    #[rpc::service]
    impl Shop {
        /// Renames.
        pub fn rename(&self) {}
    }

    pub struct ShopV2;
    #[rpc::service(alias = "Shop", version = 2, removed("Shop.renam"))]
    impl ShopV2 {
        /// Counts.
        pub fn count(&self) -> u32 {
            0
        }
    }
}

#[test]
fn a_misspelt_removal_gets_a_did_you_mean() {
    let error = Registry::builder()
        .service(misspelt_removal::Shop)
        .service(misspelt_removal::ShopV2)
        .build()
        .expect_err("Shop.renam does not exist");
    let problem = error.problems().iter().find(|p| p.contains("Shop.renam`")).expect("the removal problem");
    assert!(problem.ends_with("did you mean `Shop.rename`?"), "{problem}");
}
