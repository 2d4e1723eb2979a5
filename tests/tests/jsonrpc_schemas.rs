//! The per-method JSON Schemas of the catalog registry: exact expectations
//! for a few methods, golden files for every method of every version
//! (`tests/golden/v{N}.{method}.json`; regenerate with `UPDATE_GOLDEN=1`),
//! and every result the server returns validated against its method's
//! output schema.

use crate::jsonrpc_common;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use jsonrpc_common::{CATALOG_REGISTRY, CatalogServer, assert_valid_result, call_result};
use rpc::Environment;
use serde_json::{Value, json};

fn golden_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("golden")
}

fn updating() -> bool {
    std::env::var_os("UPDATE_GOLDEN").is_some_and(|v| v == "1")
}

fn schemas(version: u32, method: &str) -> &'static rpc::schema::MethodSchemaSet {
    CATALOG_REGISTRY.method(version, method, None).unwrap_or_else(|| panic!("{method} exists in v{version}")).schemas()
}

fn output(version: u32, method: &str) -> &'static Value {
    schemas(version, method).output.as_ref().unwrap_or_else(|| panic!("{method} has an output schema"))
}

/// The golden file of one method: its input and output schemas.
fn golden_content(version: u32, method: &str) -> Value {
    let set = schemas(version, method);
    json!({"input": set.input, "output": set.output})
}

fn golden_name(version: u32, method: &str) -> String {
    format!("v{version}.{method}.json")
}

#[test]
fn ping_input_schema() {
    assert_eq!(
        schemas(1, "ping").input,
        json!({
            "type": "object",
            "properties": {"who": {"type": "string", "description": "Who is pinging", "default": "x"}},
            "additionalProperties": false
        })
    );
}

#[test]
fn get_output_schema_references_product() {
    let output = output(1, "Catalog.get");
    let mut top = output.clone();
    let defs = top.as_object_mut().and_then(|o| o.remove("$defs")).unwrap_or_else(|| panic!("$defs: {output}"));
    assert_eq!(
        top,
        json!({"type": "object", "properties": {"result": {"$ref": "#/$defs/Product"}}, "required": ["result"]})
    );
    let names: Vec<&String> = defs.as_object().map(|d| d.keys().collect()).unwrap_or_default();
    assert_eq!(names, ["Product"], "only the definitions the schema uses");
    assert_eq!(defs["Product"]["type"], json!("object"));
    assert_eq!(defs["Product"]["required"], json!(["id", "name"]));
}

#[test]
fn categories_output_schema_is_recursive() {
    let output = output(1, "Catalog.categories");
    assert_eq!(output["properties"]["result"], json!({"$ref": "#/$defs/Category"}));
    let category = &output["$defs"]["Category"];
    assert_eq!(category["properties"]["children"]["items"], json!({"$ref": "#/$defs/Category"}));
}

#[test]
fn reindex_output_is_an_integer() {
    let output = output(1, "Catalog.reindex");
    assert_eq!(output["type"], json!("object"));
    assert_eq!(output["required"], json!(["result"]));
    assert_eq!(output["properties"]["result"]["type"], json!("integer"));
}

#[test]
fn schemas_are_self_contained() {
    for version in CATALOG_REGISTRY.versions() {
        let table = CATALOG_REGISTRY.version(version).expect("listed version exists");
        for method in table.iter() {
            let set = method.schemas();
            for schema in std::iter::once(&set.input).chain(set.output.iter()) {
                let mut found = Vec::new();
                jsonrpc_common::refs(schema, &mut found);
                for r in found {
                    let name = r
                        .strip_prefix("#/$defs/")
                        .unwrap_or_else(|| panic!("{}: local reference expected, got {r}", method.name()));
                    assert!(schema["$defs"].get(name).is_some(), "{} (v{version}): {r} resolves", method.name());
                }
                jsonschema::validator_for(schema)
                    .unwrap_or_else(|e| panic!("{} (v{version}): schema compiles: {e}", method.name()));
            }
        }
    }
}

#[test]
fn golden_schemas() {
    let dir = golden_dir();
    let mut expected_files = BTreeSet::new();
    let mut mismatches = Vec::new();
    if updating() {
        std::fs::create_dir_all(&dir).expect("create tests/golden");
    }
    for version in CATALOG_REGISTRY.versions() {
        let table = CATALOG_REGISTRY.version(version).expect("listed version exists");
        for method in table.iter() {
            let name = golden_name(version, method.name());
            let path = dir.join(&name);
            let actual = golden_content(version, method.name());
            expected_files.insert(name.clone());
            if updating() {
                let text = serde_json::to_string_pretty(&actual).expect("a schema serialises") + "\n";
                std::fs::write(&path, text).unwrap_or_else(|e| panic!("write {}: {e}", path.display()));
                continue;
            }
            let text = std::fs::read_to_string(&path)
                .unwrap_or_else(|e| panic!("read {} ({e}); run with UPDATE_GOLDEN=1 to create it", path.display()));
            let golden: Value =
                serde_json::from_str(&text).unwrap_or_else(|e| panic!("{} is JSON: {e}", path.display()));
            if golden != actual {
                mismatches.push(format!(
                    "{name}:\n  golden: {golden}\n  actual: {actual}",
                    golden = serde_json::to_string(&golden).unwrap_or_default(),
                    actual = serde_json::to_string(&actual).unwrap_or_default()
                ));
            }
        }
    }

    // Golden files of methods that no longer exist are stale.
    let present: BTreeSet<String> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("read {}: {e}", dir.display()))
        .map(|entry| entry.expect("directory entry").file_name().to_string_lossy().into_owned())
        .filter(|name| name.starts_with('v') && name.ends_with(".json"))
        .collect();
    let stale: Vec<&String> = present.difference(&expected_files).collect();
    if updating() {
        for name in &stale {
            std::fs::remove_file(dir.join(name)).unwrap_or_else(|e| panic!("remove stale {name}: {e}"));
        }
        return;
    }
    assert!(stale.is_empty(), "golden files without a method (run with UPDATE_GOLDEN=1): {stale:?}");
    assert!(
        mismatches.is_empty(),
        "schemas differ from the golden files (run with UPDATE_GOLDEN=1 to accept):\n{}",
        mismatches.join("\n")
    );
}

#[test]
fn output_schemas_reject_wrong_results() {
    let get = jsonschema::validator_for(output(1, "Catalog.get")).expect("the output schema compiles");
    assert!(!get.is_valid(&json!({"result": {"id": "seven", "name": "n7"}})));
    assert!(!get.is_valid(&json!({"result": {"id": 7}})));
    assert!(!jsonschema::is_valid(output(1, "Catalog.reindex"), &json!({"result": -1})));
    assert!(!jsonschema::is_valid(output(1, "ping"), &json!({})));
    assert!(!jsonschema::is_valid(
        output(1, "Catalog.categories"),
        &json!({"result": {"name": "All", "children": [{"name": "Books"}]}})
    ));
}

/// Calls every method of every version over HTTP and validates each result.
#[tokio::test]
async fn every_live_result_matches_its_output_schema() {
    let catalog = CatalogServer::start(Environment::Dev).await;
    let mut covered = BTreeSet::new();
    let first = "5b6f0c1e-0000-4000-8000-000000000001";
    let second = "5b6f0c1e-0000-4000-8000-000000000002";
    let calls: [(u32, &str, Value); 34] = [
        (1, "Activity.summary", Value::Null),
        (2, "Activity.summary", Value::Null),
        (1, "ping", Value::Null),
        (1, "ping", json!({"who": "me"})),
        (1, "Catalog.get", json!({"id": 1})),
        (1, "Catalog.search", json!({"query": "n"})),
        (1, "Catalog.search", json!({"query": "nothing"})),
        (1, "Catalog.list", json!({"sort": "name", "page": 5})),
        (1, "Catalog.categories", Value::Null),
        (1, "Catalog.reindex", Value::Null),
        (1, "Catalog.stats", Value::Null),
        (1, "Catalog.product", json!({"id": 5})),
        (1, "Catalog.review", json!({"name": "n5"})),
        (1, "Catalog.complete_name", json!({"value": "n1"})),
        (1, "Catalog.complete_id", json!({"value": "9"})),
        (1, "Catalog.unsubscribe_all", json!({"email": "nobody@example.com"})),
        (2, "Catalog.unsubscribe_all", json!({"email": "nobody@example.com"})),
        (2, "Catalog.product", json!({"id": 6})),
        (2, "Catalog.review", json!({"name": "n6", "tone": "critical"})),
        (2, "Catalog.complete_name", json!({"value": ""})),
        (2, "Catalog.complete_id", json!({"value": ""})),
        (2, "ping", Value::Null),
        (2, "Catalog.stats", Value::Null),
        (2, "Catalog.get", json!({"id": 100})),
        (2, "Catalog.search", json!({"query": "n", "limit": 3, "offset": 98})),
        (2, "Catalog.count", Value::Null),
        (2, "Catalog.categories", Value::Null),
        (2, "Catalog.reindex", Value::Null),
        (1, "Catalog.rename", json!({"id": 3, "name": "three"})),
        (2, "Catalog.rename", json!({"id": 4, "name": "four"})),
        (1, "Catalog.subscribe", json!({"id": 3, "email": "a@example.com", "until": "2027-01-31"})),
        (2, "Catalog.subscribe", json!({"id": 4, "email": "b@example.com", "digest": "daily"})),
        (1, "Catalog.unsubscribe", json!({"subscription": first})),
        (2, "Catalog.unsubscribe", json!({"subscription": second})),
    ];
    for (version, method, params) in calls {
        let result = call_result(&catalog.url(version), method, params).await;
        assert_valid_result(version, method, &result);
        covered.insert((version, method.to_owned()));
    }
    for version in CATALOG_REGISTRY.versions() {
        for method in CATALOG_REGISTRY.version(version).expect("listed version exists").iter() {
            assert!(covered.contains(&(version, method.name().to_owned())), "{} v{version} is called", method.name());
        }
    }
}
