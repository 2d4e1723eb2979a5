//! Transports: Streamable HTTP, and stdio on top of it.

use std::sync::Arc;

use rpc::i18n::Language;
use rpc::security::Identity;

/// Who asks, and in which language to answer: what the endpoint learned of
/// a request before its body was read.
#[derive(Debug, Clone, Default)]
pub(crate) struct Caller {
    /// The caller's identity, from the access policy.
    pub identity: Option<Arc<Identity>>,
    /// The negotiated language.
    pub language: Language,
}

impl Caller {
    /// The subject of the caller's identity: who owns the sessions it opens.
    pub fn owner(&self) -> Option<&str> {
        self.identity.as_deref().map(|i| i.subject.as_str())
    }
}

mod exchange;
mod handshake;
mod headers;
pub(crate) mod inflight;
pub(crate) mod listen_slots;
pub mod negotiate;
mod reply;
mod sse;
mod stateless;
pub mod stdio;
pub mod streamable_http;
