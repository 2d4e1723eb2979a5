//! Who is calling: the [`Identity`] an access policy gives a request, which
//! reaches the executor, the listeners and the methods with the call.

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
    /// The OAuth client the credential was issued to, when known.
    pub client_id: Option<String>,
    /// Anything else the policy knows (tenant, roles, issuer, ...).
    pub attributes: Map<String, Value>,
}

impl Identity {
    /// An identity named `subject`, without scopes or attributes.
    pub fn new(subject: impl Into<String>) -> Self {
        Identity { subject: subject.into(), scopes: Vec::new(), client_id: None, attributes: Map::new() }
    }

    /// The identity with attribute `key` set to `value`.
    pub fn with(mut self, key: impl Into<String>, value: impl Into<Value>) -> Self {
        self.attributes.insert(key.into(), value.into());
        self
    }

    /// The identity granted `scopes` (duplicates and empty names dropped,
    /// the order kept).
    pub fn with_scopes<S: Into<String>>(mut self, scopes: impl IntoIterator<Item = S>) -> Self {
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
}
