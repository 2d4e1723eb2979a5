//! The handshake-era session's own stream over stdio: what HTTP sends on a
//! `GET` with `Mcp-Session-Id` (`notifications/resources/updated` for the
//! resources the session subscribed to) written as lines, from the answer
//! to `initialize` until the conversation ends.
//!
//! The server offers it when it has a change hub
//! ([`McpServer::sends_on_its_own`]); without one there is nothing to send,
//! and nothing is opened. Keep-alives are not written.

use std::sync::Arc;

use rpc::jsonrpc::envelope::Body;
use tokio::sync::{mpsc, watch};
use tokio::task::JoinHandle;

use super::lines::Out;
use crate::server::{Accepts, Caller, Incoming, McpServer, ReadParams, Reply};

/// A session's stream being written, and how to end it.
pub(super) struct SessionUpdates {
    closing: watch::Sender<bool>,
    task: JoinHandle<()>,
}

impl SessionUpdates {
    /// Opens the stream of `session` and writes its messages to `lines`,
    /// if `server` has anything to send on it.
    pub(super) fn open(
        server: &McpServer,
        version: u32,
        session: Arc<str>,
        protocol: Option<Arc<str>>,
        lines: mpsc::Sender<Out>,
    ) -> Option<Self> {
        if !server.sends_on_its_own() {
            return None;
        }
        let (closing, closed) = watch::channel(false);
        let server = server.clone();
        let task = tokio::spawn(async move {
            let mut incoming = Incoming::new(Body::<'_, ReadParams<'_>>::Batch(Vec::new()), version, Caller::default());
            incoming.session = Some(&session);
            incoming.protocol = protocol.as_deref();
            incoming.accepts = Accepts::BOTH;
            incoming.closing = Some(&closed);
            match server.open_session_stream(incoming).await {
                // No progress on it: every message goes out as it comes.
                Reply::Stream(stream) => super::progress::forward(stream, &lines, super::progress::HOLD).await,
                refused => tracing::warn!(?refused, "stdio: the session's stream of updates was refused"),
            }
        });
        Some(SessionUpdates { closing, task })
    }

    /// Ends the stream and waits until nothing more is written.
    pub(super) async fn close(self) {
        let _ = self.closing.send(true);
        if let Err(e) = self.task.await
            && e.is_panic()
        {
            tracing::error!("stdio: the session's stream of updates panicked: {e}");
        }
    }
}
