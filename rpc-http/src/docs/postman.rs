//! Postman collections (format v2.1) of a JSON-RPC API version, built from
//! its OpenRPC document: one POST per method with an example request.

use serde_json::{Map, Value, json};
use sha2::{Digest, Sha256};

use super::example::params_example;

/// The schema URL a v2.1 collection names.
pub const SCHEMA: &str = "https://schema.getpostman.com/json/collection/v2.1.0/collection.json";

/// Where the requests go.
#[derive(Debug, Clone, Copy)]
pub struct Target<'a> {
    /// The default of the `baseUrl` variable (`http://host:port`, or a
    /// configured public base).
    pub base_url: &'a str,
    /// The endpoint's path below the base (`/rpc/v2`).
    pub path: &'a str,
    /// Whether requests need a token: then the collection authenticates
    /// with `Bearer {{token}}` (the variable is left empty).
    pub protected: bool,
}

/// A stable UUID-shaped id for `name` (the same collection always gets
/// the same id, so re-imports update it).
pub fn collection_id(name: &str) -> String {
    let hash = Sha256::digest(name.as_bytes());
    let mut bytes = [0u8; 16];
    bytes.copy_from_slice(&hash[..16]);
    // A name-based UUID: version 5 layout, RFC 4122 variant.
    bytes[6] = (bytes[6] & 0x0f) | 0x50;
    bytes[8] = (bytes[8] & 0x3f) | 0x80;
    let hex: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
    format!("{}-{}-{}-{}-{}", &hex[..8], &hex[8..12], &hex[12..16], &hex[16..20], &hex[20..])
}

/// The collection's name for an OpenRPC document: `{title} v{N}`.
pub fn collection_name(doc: &Value) -> String {
    let title = doc["info"]["title"].as_str().unwrap_or("JSON-RPC API");
    let version = doc["info"]["x-api-version"].as_str().unwrap_or("v1");
    format!("{title} {version}")
}

/// The collection of the methods of `doc` (an OpenRPC document, in the
/// language its texts should have).
pub fn collection(doc: &Value, target: Target<'_>) -> Value {
    let name = collection_name(doc);
    let mut info = Map::new();
    info.insert("_postman_id".into(), json!(collection_id(&name)));
    info.insert("name".into(), json!(name));
    if let Some(description) = doc["info"]["description"].as_str() {
        info.insert("description".into(), json!(description));
    }
    info.insert("version".into(), doc["info"]["version"].clone());
    info.insert("schema".into(), json!(SCHEMA));
    let methods = doc["methods"].as_array().map(Vec::as_slice).unwrap_or_default();
    let items: Vec<Value> = methods.iter().map(|m| item(m, doc, target)).collect();
    let mut variables = vec![json!({"key": "baseUrl", "value": target.base_url, "type": "string"})];
    let mut collection = Map::new();
    collection.insert("info".into(), Value::Object(info));
    collection.insert("item".into(), Value::Array(items));
    if target.protected {
        variables.push(json!({"key": "token", "value": "", "type": "secret"}));
        collection.insert(
            "auth".into(),
            json!({"type": "bearer", "bearer": [{"key": "token", "value": "{{token}}", "type": "string"}]}),
        );
    }
    collection.insert("variable".into(), Value::Array(variables));
    Value::Object(collection)
}

fn item(method: &Value, doc: &Value, target: Target<'_>) -> Value {
    let name = method["name"].as_str().unwrap_or_default();
    let params = method["params"].as_array().map(Vec::as_slice).unwrap_or_default();
    let example = params_example(
        params
            .iter()
            .filter_map(|p| Some((p["name"].as_str()?, p["required"].as_bool().unwrap_or(false), &p["schema"]))),
        doc,
    );
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": name, "params": example});
    let raw = serde_json::to_string_pretty(&body).unwrap_or_default();
    let segments: Vec<&str> = target.path.split('/').filter(|s| !s.is_empty()).collect();
    let description: Vec<&str> =
        [&method["summary"], &method["description"]].into_iter().filter_map(Value::as_str).collect();
    let mut request = Map::new();
    request.insert("method".into(), json!("POST"));
    request.insert("header".into(), json!([{"key": "Content-Type", "value": "application/json"}]));
    request.insert("body".into(), json!({"mode": "raw", "raw": raw, "options": {"raw": {"language": "json"}}}));
    request.insert(
        "url".into(),
        json!({"raw": format!("{{{{baseUrl}}}}{}", target.path), "host": ["{{baseUrl}}"], "path": segments}),
    );
    if !description.is_empty() {
        request.insert("description".into(), json!(description.join("\n\n")));
    }
    json!({"name": name, "request": request, "response": []})
}

#[cfg(test)]
mod tests {
    use super::*;

    fn doc() -> Value {
        json!({
            "openrpc": "1.3.2",
            "info": {"title": "Shop", "version": "1.2.3", "description": "Sells things.", "x-api-version": "v2"},
            "methods": [
                {"name": "Shop.get", "summary": "Gets one.", "description": "By id.", "params": [
                    {"name": "id", "required": true, "schema": {"$ref": "#/components/schemas/Id"}},
                    {"name": "verbose", "required": false, "schema": {"type": "boolean"}}]},
                {"name": "ping", "params": []}
            ],
            "components": {"schemas": {"Id": {"type": "integer", "minimum": 7}}}
        })
    }

    #[test]
    fn one_request_per_method() {
        let target = Target { base_url: "http://127.0.0.1:8080", path: "/rpc/v2", protected: false };
        let collection = collection(&doc(), target);
        assert_eq!(collection["info"]["name"], "Shop v2");
        assert_eq!(collection["info"]["schema"], SCHEMA);
        assert_eq!(collection["info"]["_postman_id"], collection_id("Shop v2"));
        assert_eq!(
            collection["variable"],
            json!([{"key": "baseUrl", "value": "http://127.0.0.1:8080", "type": "string"}])
        );
        assert!(collection.get("auth").is_none());
        let get = &collection["item"][0];
        assert_eq!(get["name"], "Shop.get");
        assert_eq!(get["request"]["method"], "POST");
        assert_eq!(
            get["request"]["url"],
            json!({"raw": "{{baseUrl}}/rpc/v2", "host": ["{{baseUrl}}"], "path": ["rpc", "v2"]})
        );
        assert_eq!(get["request"]["description"], "Gets one.\n\nBy id.");
        let body: Value = serde_json::from_str(get["request"]["body"]["raw"].as_str().unwrap()).unwrap();
        assert_eq!(body, json!({"jsonrpc": "2.0", "id": 1, "method": "Shop.get", "params": {"id": 7}}));
        let ping: Value =
            serde_json::from_str(collection["item"][1]["request"]["body"]["raw"].as_str().unwrap()).unwrap();
        assert_eq!(ping["params"], json!({}));
    }

    #[test]
    fn protected_endpoints_use_a_token_variable() {
        let target = Target { base_url: "", path: "/rpc", protected: true };
        let collection = collection(&doc(), target);
        assert_eq!(collection["auth"]["type"], "bearer");
        assert_eq!(collection["auth"]["bearer"][0]["value"], "{{token}}");
        assert_eq!(collection["variable"][1], json!({"key": "token", "value": "", "type": "secret"}));
    }

    #[test]
    fn ids_are_stable_uuids() {
        let id = collection_id("Shop v2");
        assert_eq!(id, collection_id("Shop v2"));
        assert_ne!(id, collection_id("Shop v1"));
        assert_eq!(id.len(), 36);
        assert_eq!(&id[14..15], "5");
    }
}
