//! The result cache from code ([`CacheControl`]): warm an entry, delete
//! one request's entry (one caller's or everyone's), every entry of a
//! method, or what a writer's `#[rpc::invalidates]` relations would make
//! stale, in whichever store the executor keeps results (in process or
//! Redis).

use std::sync::Arc;

use serde_json::{Map, Value};

use super::{Call, Executor, Params, bind_and_validate, keys};
use crate::descriptor::CachePolicy;
use crate::error::{RpcError, code};
use crate::identity::Identity;
use crate::registry::Method;
use crate::store::StoreError;

/// The result cache of an [`Executor`], from code: what
/// [`Executor::cache`] and, inside a method, [`Context::cache`](crate::Context::cache)
/// give. Cheap to clone (it shares the executor).
///
/// Methods and parameters are named as a client names them: the
/// parameters are bound, validated and completed with their defaults as a
/// call's are, so the entry found is the one a call would use. Errors say
/// what went wrong: an unknown method (`-32601`), a method without
/// `#[rpc::cache]` or parameters it does not take (`-32602`), a store that
/// failed or cannot delete by prefix (`-32603`, the store's message).
///
/// ```
/// # extern crate rpc_core as rpc;
/// # use serde_json::json;
/// # async fn run(executor: rpc::Executor) -> Result<(), rpc::RpcError> {
/// let cache = executor.cache();
/// // Compute and store the entry before the first client asks.
/// cache.warm("Catalog.get", 1, json!({"id": 7}), None).await?;
/// // The product changed: every caller's entry for it goes.
/// cache.delete_request_for_everyone("Catalog.get", 1, json!({"id": 7})).await?;
/// // A new price list: every entry of the method, in every version.
/// let removed = cache.delete_method("Catalog.get", None).await?;
/// // What `Catalog.update` with these arguments would invalidate.
/// cache.delete_relation("Catalog.update", 1, json!({"id": 7, "price": 10})).await?;
/// # let _ = removed; Ok(()) }
/// ```
#[derive(Clone)]
pub struct CacheControl {
    executor: Executor,
}

impl std::fmt::Debug for CacheControl {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CacheControl").finish_non_exhaustive()
    }
}

impl crate::context::Context {
    /// The result cache of the executor running this call, to warm or
    /// delete entries from inside a method (see
    /// [`CacheControl`]); `None` in a context built
    /// by hand (a unit test calling the method directly).
    ///
    /// ```
    /// # extern crate rpc_core as rpc;
    /// # use rpc::Context;
    /// # async fn rename(ctx: Context, id: u64) -> Result<(), rpc::RpcError> {
    /// if let Some(cache) = ctx.cache() {
    ///     cache.delete_request_for_everyone("Catalog.get", 1, serde_json::json!({"id": id})).await?;
    /// }
    /// # Ok(()) }
    /// ```
    pub fn cache(&self) -> Option<CacheControl> {
        let shared = Arc::clone(self.executor_state()?).downcast::<super::Shared>().ok()?;
        Some(CacheControl { executor: Executor { shared } })
    }
}

impl Executor {
    /// The result cache of this executor, from code (see [`CacheControl`]).
    pub fn cache(&self) -> CacheControl {
        CacheControl { executor: self.clone() }
    }
}

/// A store failure, with the store's message.
fn store_failed(e: &StoreError) -> RpcError {
    RpcError::new(code::INTERNAL_ERROR, format!("the cache store failed: {e}")).with_kind("rpc::CacheStore")
}

/// `method` has no cache (in this environment).
fn not_cached(method: &str, version: u32, elsewhere: bool) -> RpcError {
    let message = match elsewhere {
        true => format!("method `{method}` (v{version}) is not cached in this environment"),
        false => format!("method `{method}` (v{version}) is not cached: it has no #[rpc::cache]"),
    };
    RpcError::invalid_params(message).with_kind("rpc::NotCached")
}

/// Parameters as a call takes them (an error message cuts what it quotes).
fn to_params(params: Value) -> Result<Params, RpcError> {
    match params {
        Value::Null => Ok(Params::None),
        Value::Object(named) => Ok(Params::Named(named)),
        Value::Array(positional) => Ok(Params::Positional(positional)),
        _ => Err(RpcError::invalid_params("parameters are an object, an array or null")),
    }
}

impl CacheControl {
    /// The method `name` of `version`, if it is known.
    fn method(&self, name: &str, version: u32) -> Result<Arc<Method>, RpcError> {
        self.executor
            .shared
            .registry
            .method(version, name, None)
            .cloned()
            .ok_or_else(|| RpcError::method_not_found(&format!("{name} (v{version})")).with_kind("rpc::UnknownMethod"))
    }

    /// The method `name` of `version` and its cache policy.
    fn cached(&self, name: &str, version: u32) -> Result<(Arc<Method>, CachePolicy), RpcError> {
        let method = self.method(name, version)?;
        match method.descriptor().cache {
            Some(policy) if policy.applies_in(self.executor.shared.env) => Ok((method, policy)),
            Some(_) => Err(not_cached(method.name(), version, true)),
            None => Err(not_cached(method.name(), version, false)),
        }
    }

    /// `params` bound to `method`'s names and validated, as a call's are.
    fn bound(method: &Method, params: Value) -> Result<Map<String, Value>, RpcError> {
        bind_and_validate(method, to_params(params)?).map_err(|(e, _)| e)
    }

    /// Calls `method` with `params` as `identity` (anonymous with `None`)
    /// without reading the cache, as `$rpc.ignoreCache` does, so that its
    /// fresh result is stored for the next call alike. It is a call like
    /// any other (validation, locks, listeners, the cache relations after
    /// it), except that rate limits do not count it. Fails for a method
    /// without `#[rpc::cache]`, and with the method's own error.
    pub async fn warm(
        &self,
        method: &str,
        version: u32,
        params: Value,
        identity: Option<Arc<Identity>>,
    ) -> Result<(), RpcError> {
        let (method, _) = self.cached(method, version)?;
        let params = to_params(params)?;
        let call =
            Call::new(method.name(), version, params).resolved(method.clone()).identity(identity).ignore_cache(true);
        let execution = Box::pin(self.executor.execute(call)).await;
        if execution.result.is_ok() {
            self.executor.response_sent(vec![execution]);
            return Ok(());
        }
        execution.result.map(|_| ())
    }

    /// Deletes the entry of one caller (`identity`, `None` for anonymous
    /// calls) for a call of `method` with `params`: that caller's next such
    /// call runs the method. Other callers' entries stay.
    pub async fn delete_request(
        &self,
        method: &str,
        version: u32,
        params: Value,
        identity: Option<&Identity>,
    ) -> Result<(), RpcError> {
        let (method, _) = self.cached(method, version)?;
        let params = Self::bound(&method, params)?;
        let key = keys::caller_key(&method, version, &params, identity);
        self.executor.shared.stores.cache.remove(&key).await.map_err(|e| store_failed(&e))
    }

    /// Deletes every caller's entry for a call of `method` with `params`.
    /// For a method some `#[rpc::invalidates]` names, this is a new
    /// generation stamp (one write; a result being computed meanwhile is
    /// not served either); for another, every key starting with the
    /// request's is removed ([`CacheStore::remove_prefix`](crate::store::CacheStore::remove_prefix),
    /// which looks through the store's keys).
    pub async fn delete_request_for_everyone(&self, method: &str, version: u32, params: Value) -> Result<(), RpcError> {
        let (method, policy) = self.cached(method, version)?;
        let params = Self::bound(&method, params)?;
        let executor = &self.executor;
        if executor.shared.registry.is_invalidated(version, method.name()) {
            return executor.cache_invalidate(&method, version, &policy, &params).await.map_err(|e| store_failed(&e));
        }
        let prefix = keys::request_prefix(&method, version, &params);
        executor.shared.stores.cache.remove_prefix(&prefix).await.map(|_| ()).map_err(|e| store_failed(&e))
    }

    /// Deletes every entry of `method` (every caller, every parameter) in
    /// `version`, or in every version it exists in with `None`: how many
    /// entries were removed. Generation stamps stay: they expire at the
    /// method's TTL and never make a result current.
    pub async fn delete_method(&self, method: &str, version: Option<u32>) -> Result<u64, RpcError> {
        let versions: Vec<u32> = match version {
            Some(version) => {
                self.cached(method, version)?;
                vec![version]
            }
            None => {
                let registry = &self.executor.shared.registry;
                let known: Vec<u32> =
                    registry.versions().filter(|&v| registry.method(v, method, None).is_some()).collect();
                let Some(&first) = known.first() else {
                    return Err(RpcError::method_not_found(method).with_kind("rpc::UnknownMethod"));
                };
                let cached: Vec<u32> = known.into_iter().filter(|&v| self.cached(method, v).is_ok()).collect();
                if cached.is_empty() {
                    return Err(self.cached(method, first).err().unwrap_or_else(|| not_cached(method, first, false)));
                }
                cached
            }
        };
        let mut removed = 0;
        for version in versions {
            let prefix = keys::method_prefix(method, version);
            removed += self.executor.shared.stores.cache.remove_prefix(&prefix).await.map_err(|e| store_failed(&e))?;
        }
        Ok(removed)
    }

    /// Makes stale what a call of `writer` with `params` would after it
    /// ran, without running it: for each method its `#[rpc::invalidates]`
    /// names, every caller's entry for the arguments that method shares
    /// with the writer. Relations with `warm_up` are not warmed (there is
    /// no caller to warm for: use [`warm`](Self::warm)). Returns how many
    /// related methods were invalidated; fails for a writer without
    /// relations.
    pub async fn delete_relation(&self, writer: &str, version: u32, params: Value) -> Result<u64, RpcError> {
        let writer = self.method(writer, version)?;
        if writer.descriptor().invalidates.is_empty() {
            let message = format!("method `{}` (v{version}) declares no #[rpc::invalidates]", writer.name());
            return Err(RpcError::invalid_params(message).with_kind("rpc::NoRelation"));
        }
        let params = Self::bound(&writer, params)?;
        self.executor.invalidate_related(&writer, version, &params, None).await.map_err(|e| store_failed(&e))
    }
}
