//! The call model every transport shares: a [`Call`] to execute (method,
//! version, parameters, who calls and through which [`Transport`], the
//! request context), what listeners see of it ([`CallInfo`]), and how far
//! it got ([`Stage`]).

pub mod transport;

use std::sync::Arc;
use std::time::Duration;

use serde_json::{Map, Value};

use crate::context::Context;
use crate::error::RpcError;
use crate::identity::Identity;
use crate::registry::Method;

pub use transport::Transport;

/// Call parameters as they arrived.
#[derive(Debug, Clone, Default)]
pub enum Params {
    /// No `params` member.
    #[default]
    None,
    /// By name.
    Named(Map<String, Value>),
    /// By position, in declaration order.
    Positional(Vec<Value>),
}

/// Parameters read from their raw JSON text into `T` (which may borrow
/// from it): what every transport and the executor read them with, so a
/// text that cannot be read gets the same `-32602` wherever it is read.
pub fn read_params<'a, T: serde::Deserialize<'a>>(raw: &'a serde_json::value::RawValue) -> Result<T, RpcError> {
    serde_json::from_str(raw.get()).map_err(|e| RpcError::invalid_params(format!("Invalid params: {e}")))
}

/// One call to execute: `Call::new(method, version, params)`, then
/// optionally [`scope`](Call::scope) and [`transport`](Call::transport).
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct Call<'a> {
    /// The method name.
    pub method: &'a str,
    /// The API version.
    pub version: u32,
    /// The parameters.
    pub params: Params,
    /// The named parameters as raw JSON text (an object), when the
    /// transport left them unread (see [`named_raw`](Self::named_raw)).
    pub raw_named: Option<&'a serde_json::value::RawValue>,
    /// Restricts the lookup to one API group (an MCP endpoint serves one group).
    pub scope: Option<&'a str>,
    /// The transport the call came through.
    pub transport: Transport,
    /// The request context the method gets (default: one that logs to `tracing`).
    pub context: Option<Context>,
    /// The method, when the caller has already looked it up (by `method`,
    /// `version` and `scope`): the executor does not look it up again.
    pub resolved: Option<Arc<Method>>,
    /// Who is calling, as the endpoint's access policy established it.
    pub identity: Option<Arc<Identity>>,
    /// The size of the parameters as received, in bytes (0: unknown). From
    /// [`LARGE_INPUT_BYTES`] on, binding and validation run under
    /// [`tokio::task::block_in_place`] on a multi-threaded runtime, so the
    /// other requests of the worker move to another thread meanwhile.
    pub input_bytes: usize,
    /// Skip the cache read (`$rpc.ignoreCache`): the method runs, and its
    /// fresh result is stored.
    pub ignore_cache: bool,
    /// The longest the method may take (`$rpc.timeout`); an async method
    /// still running then is abandoned with `-32000`.
    pub timeout: Option<Duration>,
    /// A client's call, counted against the executor's call rate (see
    /// [`from_client`](Self::from_client)); calls the server makes itself
    /// (a cache warm-up) are not.
    pub metered: bool,
    /// The client's address, which rate limits count by when the call has
    /// no identity.
    pub peer: Option<std::net::IpAddr>,
    /// The caller writes the result as a JSON string too (MCP's text
    /// content): a result cache that shares its entries keeps room for that
    /// string with the result it stores, so that a hit copies the string
    /// ([`ResultJson::json_string`](crate::ResultJson::json_string))
    /// instead of escaping the result again. From such a call on, every
    /// result of the method the cache stores keeps that room, whoever's
    /// call stores it ([`Method::results_read_as_strings`](crate::Method::results_read_as_strings)).
    pub result_as_string: bool,
}

/// Parameters of at least this many bytes ([`Call::input_bytes`]) are
/// bound and validated under `block_in_place` on a multi-threaded runtime.
pub const LARGE_INPUT_BYTES: usize = 64 * 1024;

impl<'a> Call<'a> {
    /// A call of `method` in API `version`, over JSON-RPC, in no particular group.
    #[inline]
    pub fn new(method: &'a str, version: u32, params: Params) -> Self {
        Call {
            method,
            version,
            params,
            raw_named: None,
            scope: None,
            transport: Transport::JsonRpc,
            context: None,
            resolved: None,
            identity: None,
            input_bytes: 0,
            ignore_cache: false,
            timeout: None,
            metered: false,
            peer: None,
            result_as_string: false,
        }
    }

    /// Who is calling: the call's identity, else its context's.
    pub fn caller(&self) -> Option<&Identity> {
        self.identity.as_deref().or_else(|| self.context.as_ref().and_then(Context::identity))
    }

    /// A client's call, from `peer` (its address, when the transport has
    /// one): counted against the executor's call rate, by identity, else
    /// by address ([`crate::rate`]).
    #[inline]
    pub fn from_client(mut self, peer: Option<std::net::IpAddr>) -> Self {
        self.metered = true;
        self.peer = peer;
        self
    }

    /// Named parameters given as their raw JSON text (an object; `params`
    /// stays [`Params::None`]): the executor reads them only when it needs
    /// them. A repeated call of a cached method with the same text (and the
    /// same caller) finds its cache slot without reading, binding and
    /// validating them again: those are functions of the text, and only a
    /// text that passed them is remembered. Listeners that see requests
    /// ([`Listener::watches_requests`](crate::events::Listener::watches_requests))
    /// get them read, as before.
    #[inline]
    pub fn named_raw(mut self, raw: &'a serde_json::value::RawValue) -> Self {
        self.params = Params::None;
        self.raw_named = Some(raw);
        self
    }

    /// Skips the cache read (the fresh result is stored).
    #[inline]
    pub fn ignore_cache(mut self, ignore: bool) -> Self {
        self.ignore_cache = ignore;
        self
    }

    /// Abandons an async method still running after `limit`.
    #[inline]
    pub fn timeout(mut self, limit: Option<Duration>) -> Self {
        self.timeout = limit;
        self
    }

    /// The size of the parameters as received, in bytes (e.g. the length of
    /// the raw `params`): large inputs are checked without holding up the
    /// other requests of the runtime worker (see [`LARGE_INPUT_BYTES`]).
    #[inline]
    pub fn input_bytes(mut self, bytes: usize) -> Self {
        self.input_bytes = bytes;
        self
    }

    /// The request context the method gets.
    #[inline]
    pub fn context(mut self, context: Context) -> Self {
        self.context = Some(context);
        self
    }

    /// The method, already looked up by the caller (an MCP endpoint finds
    /// it through its tool): it must be the one the registry holds under
    /// this call's name, version and scope.
    #[inline]
    pub fn resolved(mut self, method: Arc<Method>) -> Self {
        self.resolved = Some(method);
        self
    }

    /// The caller's identity (from the endpoint's access policy): the
    /// method reads it from its context, listeners from [`CallInfo::identity`].
    #[inline]
    pub fn identity(mut self, identity: Option<Arc<Identity>>) -> Self {
        self.identity = identity;
        self
    }

    /// Restricts the lookup to the methods of group `group`.
    #[inline]
    pub fn scope(mut self, group: &'a str) -> Self {
        self.scope = Some(group);
        self
    }

    /// The transport the call came through.
    #[inline]
    pub fn transport(mut self, transport: Transport) -> Self {
        self.transport = transport;
        self
    }
}

/// What listeners see of a call.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct CallInfo {
    /// Internal call id, unique per process, never exposed to clients.
    pub id: u64,
    /// The method.
    pub method: Arc<Method>,
    /// The API version.
    pub version: u32,
    /// The transport.
    pub transport: Transport,
    /// The bound, validated named parameters.
    pub params: Map<String, Value>,
    /// Who is calling, when the endpoint's access policy identified the caller.
    pub identity: Option<Arc<Identity>>,
}

/// How far a call got through the pipeline.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Stage {
    /// An `on_request` listener refused the call, or the transport did
    /// before the executor saw it (see [`Executor::report_refusal`](crate::Executor::report_refusal)).
    Request,
    /// The method does not exist (in this version and scope).
    Lookup,
    /// The caller's credential lacks a scope the method needs
    /// (`scopes(...)`); the method did not run.
    Access,
    /// The client is over its call rate ([`crate::rate`]); nothing ran.
    RateLimit,
    /// The parameters did not bind or validate; the method did not run.
    Validation,
    /// The result came from the cache (`#[rpc::cache]`); the method did not run.
    Cache,
    /// A `before_execute` listener refused the call; the method did not run.
    Hooks,
    /// Another call holds the method's lock (or the lock store failed); the
    /// method did not run.
    Lock,
    /// The method ran (its result may still be an error).
    Method,
}
