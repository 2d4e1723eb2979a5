//! What runs after the response was sent: the `after_response` listeners,
//! then the cache relations (`#[rpc::invalidates]`): each related method's
//! entries for the same arguments (those it declares) go stale for every
//! caller (a new generation stamp, see `executor::cache`), and the
//! caller's own entry is computed again when the relation asks for a
//! warm-up.

use std::sync::Arc;

use serde_json::{Map, Value};

use super::{Call, CallInfo, Executor, Params, Transport};
use crate::identity::Identity;
use crate::registry::Method;
use crate::result_json::ResultJson;
use crate::store::StoreError;

/// Whom a relation's warm-up calls for: the writer's transport and caller.
pub(super) type WarmAs = (Transport, Option<Arc<Identity>>);

impl Executor {
    pub(super) async fn after_response(&self, done: Vec<(CallInfo, ResultJson)>) {
        for (info, value) in &done {
            self.shared.listeners.after_response(info, value).await;
            let warm_as = Some((info.transport, info.identity.clone()));
            // Failures are logged where they happen.
            let _ = self.invalidate_related(&info.method, info.version, &info.params, warm_as).await;
        }
    }

    /// Runs the relations `writer` declares, as a call of it with `params`
    /// (bound and validated) does after it ran: how many related methods'
    /// entries went stale, or the first store failure (after trying them
    /// all). Warm-ups run only with `warm_as`.
    pub(super) async fn invalidate_related(
        &self,
        writer: &Method,
        version: u32,
        params: &Map<String, Value>,
        warm_as: Option<WarmAs>,
    ) -> Result<u64, StoreError> {
        let mut invalidated = 0;
        let mut failure = None;
        for relation in writer.descriptor().invalidates {
            // The registry checked that related methods exist and are cached.
            let Some(related) = self.shared.registry.method(version, relation.method, None).cloned() else {
                continue;
            };
            let Some(policy) = related.descriptor().cache.filter(|policy| policy.applies_in(self.shared.env)) else {
                continue;
            };
            let declared = related.descriptor().params;
            let params: Map<String, Value> = params
                .iter()
                .filter(|(name, _)| declared.iter().any(|p| p.is_param && p.name == name.as_str()))
                .map(|(name, value)| (name.clone(), value.clone()))
                .collect();
            // Every caller's entry goes stale, not only this caller's.
            if let Err(e) = self.cache_invalidate(&related, version, &policy, &params).await {
                tracing::warn!(method = related.name(), error = %e, "could not invalidate a cached result");
                failure.get_or_insert(e);
                continue;
            }
            invalidated += 1;
            tracing::debug!(method = related.name(), by = writer.name(), "cached result invalidated");
            if let (true, Some((transport, identity))) = (relation.warm_up, &warm_as) {
                let call = Call::new(related.name(), version, Params::Named(params))
                    .resolved(related.clone())
                    .transport(*transport)
                    .identity(identity.clone())
                    .ignore_cache(true);
                let warmed = Box::pin(self.execute(call)).await;
                if let Err(e) = warmed.result {
                    tracing::debug!(method = related.name(), error = %crate::logged::logged(e.message()), "warm-up call failed");
                }
            }
        }
        match failure {
            Some(e) => Err(e),
            None => Ok(invalidated),
        }
    }
}
