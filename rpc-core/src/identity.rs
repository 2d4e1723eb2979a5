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
    /// Anything else the policy knows (tenant, roles, ...).
    pub attributes: Map<String, Value>,
}

impl Identity {
    /// An identity named `subject`, without attributes.
    pub fn new(subject: impl Into<String>) -> Self {
        Identity { subject: subject.into(), attributes: Map::new() }
    }

    /// The identity with attribute `key` set to `value`.
    pub fn with(mut self, key: impl Into<String>, value: impl Into<Value>) -> Self {
        self.attributes.insert(key.into(), value.into());
        self
    }
}
