//! What runs after the response was sent: the `after_response` listeners,
//! then the cache relations (`#[rpc::invalidates]`): each related method's
//! entry for the same arguments (those it declares) is removed, and
//! computed again when the relation asks for a warm-up.

use serde_json::value::RawValue;
use serde_json::{Map, Value};

use super::{Call, CallInfo, Executor, Params, keys};

impl Executor {
    pub(super) async fn after_response(&self, done: Vec<(CallInfo, Box<RawValue>)>) {
        for (info, value) in &done {
            self.listeners.after_response(info, value).await;
            self.invalidate_related(info).await;
        }
    }

    async fn invalidate_related(&self, info: &CallInfo) {
        for relation in info.method.descriptor().invalidates {
            // The registry checked that related methods exist and are cached.
            let Some(related) = self.registry.method(info.version, relation.method, None).cloned() else {
                continue;
            };
            if !related.descriptor().cache.is_some_and(|policy| policy.applies_in(self.env)) {
                continue;
            }
            let declared = related.descriptor().params;
            let params: Map<String, Value> = info
                .params
                .iter()
                .filter(|(name, _)| declared.iter().any(|p| p.is_param && p.name == name.as_str()))
                .map(|(name, value)| (name.clone(), value.clone()))
                .collect();
            let key = keys::method_cache_key(&related, info.version, &params, info.identity.as_deref());
            if let Err(e) = self.stores.cache.remove(&key).await {
                tracing::warn!(method = related.name(), error = %e, "could not invalidate a cached result");
                continue;
            }
            tracing::debug!(method = related.name(), by = info.method.name(), "cached result invalidated");
            if relation.warm_up {
                let call = Call::new(related.name(), info.version, Params::Named(params))
                    .resolved(related.clone())
                    .transport(info.transport)
                    .identity(info.identity.clone())
                    .ignore_cache(true);
                let warmed = Box::pin(self.execute(call)).await;
                if let Err(e) = warmed.result {
                    tracing::debug!(method = related.name(), error = %e.message(), "warm-up call failed");
                }
            }
        }
    }
}
