//! What runs after the response was sent: the `after_response` listeners,
//! then the cache relations (`#[rpc::invalidates]`): each related method's
//! entries for the same arguments (those it declares) go stale for every
//! caller (a new generation stamp, see `executor::cache`), and the
//! caller's own entry is computed again when the relation asks for a
//! warm-up.

use serde_json::value::RawValue;
use serde_json::{Map, Value};

use super::{Call, CallInfo, Executor, Params};

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
            let Some(policy) = related.descriptor().cache.filter(|policy| policy.applies_in(self.env)) else {
                continue;
            };
            let declared = related.descriptor().params;
            let params: Map<String, Value> = info
                .params
                .iter()
                .filter(|(name, _)| declared.iter().any(|p| p.is_param && p.name == name.as_str()))
                .map(|(name, value)| (name.clone(), value.clone()))
                .collect();
            // Every caller's entry goes stale, not only this caller's.
            if let Err(e) = self.cache_invalidate(&related, info.version, &policy, &params).await {
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
                    tracing::debug!(method = related.name(), error = %crate::logged::logged(e.message()), "warm-up call failed");
                }
            }
        }
    }
}
