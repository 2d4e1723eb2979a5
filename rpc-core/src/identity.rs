//! Who is calling: the [`Identity`] an access policy gives a request, which
//! reaches the executor, the listeners and the methods with the call.

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::{Map, Value};

/// Who made a request, as the transport's access policy established it
/// (a static token, a tenant, an OAuth subject). Methods read it from their
/// context (`ctx.identity()`), listeners from
/// [`CallInfo::identity`](crate::CallInfo); sessions, cached results and
/// locks are kept per identity (by its `subject`).
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct Identity {
    /// A stable name for the caller (a key's label, a tenant id, a user).
    pub subject: String,
    /// The scopes the caller's credential grants (an OAuth access token's
    /// `scope`); empty for credentials without scopes (static tokens).
    pub scopes: Vec<String>,
    /// Whether the credential is limited to `scopes` (set by
    /// [`with_scopes`](Self::with_scopes), even with no scope at all): a
    /// method's `scopes(...)` are checked only against such identities;
    /// an identity without (a static token) may call every method its
    /// access policy lets it reach.
    pub scoped: bool,
    /// The OAuth client the credential was issued to, when known.
    pub client_id: Option<String>,
    /// Anything else the policy knows (tenant, roles, issuer, ...).
    pub attributes: Map<String, Value>,
}

impl Identity {
    /// An identity named `subject`, without scopes or attributes.
    pub fn new(subject: impl Into<String>) -> Self {
        Identity { subject: subject.into(), scopes: Vec::new(), scoped: false, client_id: None, attributes: Map::new() }
    }

    /// The identity with attribute `key` set to `value`.
    pub fn with(mut self, key: impl Into<String>, value: impl Into<Value>) -> Self {
        self.attributes.insert(key.into(), value.into());
        self
    }

    /// The identity limited to `scopes` (duplicates and empty names
    /// dropped, the order kept); an empty list limits it to methods that
    /// need no scope.
    pub fn with_scopes<S: Into<String>>(mut self, scopes: impl IntoIterator<Item = S>) -> Self {
        self.scoped = true;
        for scope in scopes {
            let scope = scope.into();
            if !scope.is_empty() && !self.scopes.contains(&scope) {
                self.scopes.push(scope);
            }
        }
        self
    }

    /// The identity of a credential issued to OAuth client `client_id`.
    pub fn with_client_id(mut self, client_id: impl Into<String>) -> Self {
        self.client_id = Some(client_id.into());
        self
    }

    /// Whether the caller was granted `scope`.
    pub fn has_scope(&self, scope: &str) -> bool {
        self.scopes.iter().any(|s| s == scope)
    }

    /// Whether the caller may use something that needs all of `required`:
    /// always for an identity not limited to scopes.
    pub fn grants_all(&self, required: &[&str]) -> bool {
        !self.scoped || required.iter().all(|s| self.has_scope(s))
    }

    /// The scopes of `required` the caller lacks (none for an identity not
    /// limited to scopes).
    pub fn missing<'a>(&self, required: &[&'a str]) -> Vec<&'a str> {
        if !self.scoped {
            return Vec::new();
        }
        required.iter().copied().filter(|s| !self.has_scope(s)).collect()
    }
}

/// An identity as messages carry it (a queued call, a queued task):
/// `{"subject", "scopes", "scoped", "clientId", "attributes"}` (all but
/// `clientId` required, no other member); read back through the constructors, so
/// scopes are deduplicated as when the identity was made.
#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct Record {
    subject: String,
    scopes: Vec<String>,
    scoped: bool,
    client_id: Option<String>,
    attributes: Map<String, Value>,
}

/// [`Record`], borrowed from the identity it writes.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct RecordRef<'a> {
    subject: &'a str,
    scopes: &'a [String],
    scoped: bool,
    client_id: Option<&'a str>,
    attributes: &'a Map<String, Value>,
}

impl Serialize for Identity {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        RecordRef {
            subject: &self.subject,
            scopes: &self.scopes,
            scoped: self.scoped,
            client_id: self.client_id.as_deref(),
            attributes: &self.attributes,
        }
        .serialize(serializer)
    }
}

impl<'de> Deserialize<'de> for Identity {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let record = Record::deserialize(deserializer)?;
        let mut identity = Identity::new(record.subject);
        if record.scoped {
            identity = identity.with_scopes(record.scopes);
        }
        if let Some(client) = record.client_id {
            identity = identity.with_client_id(client);
        }
        for (key, value) in record.attributes {
            identity = identity.with(key, value);
        }
        Ok(identity)
    }
}

#[cfg(test)]
mod tests {

    #[test]
    fn identities_round_trip_as_json_keeping_everything() {
        let identity = Identity::new("alice").with_scopes(["catalog:read"]).with_client_id("app").with("tenant", "t1");
        let json = serde_json::to_value(&identity).unwrap();
        assert_eq!(
            json,
            serde_json::json!({"subject": "alice", "scopes": ["catalog:read"], "scoped": true, "clientId": "app",
                "attributes": {"tenant": "t1"}})
        );
        assert_eq!(serde_json::from_value::<Identity>(json).unwrap(), identity);
        for other in [Identity::new("key"), Identity::new("bob").with_scopes(Vec::<String>::new())] {
            let back: Identity = serde_json::from_str(&serde_json::to_string(&other).unwrap()).unwrap();
            assert_eq!(back, other);
        }
        let unknown = r#"{"subject":"a","scopes":[],"scoped":false,"clientId":null,"attributes":{},"admin":true}"#;
        assert!(serde_json::from_str::<Identity>(unknown).is_err(), "no other member");
        let missing = r#"{"subject":"a","scopes":[],"clientId":null,"attributes":{}}"#;
        assert!(serde_json::from_str::<Identity>(missing).is_err(), "`scoped` is required");
    }
    use super::Identity;

    #[test]
    fn scopes_limit_only_scoped_identities() {
        let token = Identity::new("key");
        assert!(token.grants_all(&["a:write"]));
        assert!(token.missing(&["a:write"]).is_empty());
        let oauth = Identity::new("alice").with_scopes(["a:read", "", "a:read"]);
        assert_eq!(oauth.scopes, ["a:read"]);
        assert!(oauth.grants_all(&[]) && oauth.grants_all(&["a:read"]));
        assert!(!oauth.grants_all(&["a:read", "a:write"]));
        assert_eq!(oauth.missing(&["a:read", "a:write", "b"]), ["a:write", "b"]);
        let none = Identity::new("bob").with_scopes(Vec::<String>::new());
        assert!(none.scoped && !none.grants_all(&["a:read"]) && none.grants_all(&[]));
    }
}
