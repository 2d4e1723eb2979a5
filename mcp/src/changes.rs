//! List-change and resource-update notifications for `subscriptions/listen`
//! streams (2026-07-28).
//!
//! The application keeps a [`ListChanges`] and tells it when a list changed
//! (tools reloaded, a plugin loaded) or a resource changed
//! ([`resource_updated`](ListChanges::resource_updated)); every open listen
//! stream that asked for that kind of change (or that resource) gets the
//! notification. With the `redis` feature, `ListChanges::share_through_redis`
//! carries them to the streams of every instance sharing the Redis. Give the same handle to the
//! endpoint with [`McpEndpointBuilder::list_changes`](crate::McpEndpointBuilder::list_changes):
//! only then does the endpoint advertise `listChanged` and serve
//! `subscriptions/listen`.
//!
//! ```
//! let changes = mcp::ListChanges::new();
//! let mut stream = changes.subscribe();
//! changes.tools_changed();
//! assert_eq!(stream.try_recv().ok(), Some(mcp::ListChange::Tools));
//! ```

use std::sync::{Arc, OnceLock};

use tokio::sync::{broadcast, mpsc, watch};

/// Which list changed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ListChange {
    /// `tools/list` (notification `notifications/tools/list_changed`).
    Tools,
    /// `prompts/list`.
    Prompts,
    /// `resources/list`.
    Resources,
}

impl ListChange {
    /// The notification method.
    pub fn method(self) -> &'static str {
        match self {
            ListChange::Tools => "notifications/tools/list_changed",
            ListChange::Prompts => "notifications/prompts/list_changed",
            ListChange::Resources => "notifications/resources/list_changed",
        }
    }

    /// The `subscriptions/listen` filter field that asks for it.
    pub fn filter_field(self) -> &'static str {
        match self {
            ListChange::Tools => "toolsListChanged",
            ListChange::Prompts => "promptsListChanged",
            ListChange::Resources => "resourcesListChanged",
        }
    }
}

/// Broadcasts list changes to the open listen streams, and ends them on
/// [`close`](Self::close). Cheap to clone: clones share the streams.
#[derive(Debug, Clone)]
pub struct ListChanges {
    changes: broadcast::Sender<ListChange>,
    updates: broadcast::Sender<Arc<str>>,
    closed: watch::Sender<bool>,
    /// Where changes raised here go to reach other instances (a relay).
    outbox: Arc<OnceLock<mpsc::Sender<Change>>>,
}

/// A change, as relayed between instances.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Change {
    List(ListChange),
    Resource(Arc<str>),
}

/// The longest resource URI notified, in bytes (longer ones are dropped).
pub const MAX_URI_BYTES: usize = 2048;

impl Default for ListChanges {
    fn default() -> Self {
        Self::new()
    }
}

impl ListChanges {
    /// A hub with no streams yet.
    pub fn new() -> Self {
        // A stream that falls this far behind skips ahead: a list-changed
        // notification carries no data, so one stands for many.
        let (changes, _) = broadcast::channel(64);
        // A stream that falls this far behind on resource updates skips
        // ahead too (the client reads the resources again).
        let (updates, _) = broadcast::channel(256);
        let (closed, _) = watch::channel(false);
        ListChanges { changes, updates, closed, outbox: Arc::default() }
    }

    /// The tool list changed.
    pub fn tools_changed(&self) {
        self.notify(ListChange::Tools);
    }

    /// The prompt list changed.
    pub fn prompts_changed(&self) {
        self.notify(ListChange::Prompts);
    }

    /// The resource `uri` changed: every open stream subscribed to it gets
    /// `notifications/resources/updated`.
    pub fn resource_updated(&self, uri: &str) {
        if uri.len() > MAX_URI_BYTES {
            return;
        }
        let uri: Arc<str> = Arc::from(uri);
        self.deliver(Change::Resource(Arc::clone(&uri)));
        self.forward(Change::Resource(uri));
    }

    /// Tells every open stream that asked for `change`.
    pub fn notify(&self, change: ListChange) {
        self.deliver(Change::List(change));
        self.forward(Change::List(change));
    }

    /// Delivers `change` to the streams of this process only.
    #[cfg_attr(not(feature = "redis"), allow(dead_code))]
    pub(crate) fn deliver(&self, change: Change) {
        // No receivers is fine: nobody is listening.
        match change {
            Change::List(change) => {
                let _ = self.changes.send(change);
            }
            Change::Resource(uri) => {
                let _ = self.updates.send(uri);
            }
        }
    }

    /// Hands `change` to the relay, if there is one (dropped when the relay
    /// is this far behind: a change is a hint to read again, not data).
    fn forward(&self, change: Change) {
        if let Some(outbox) = self.outbox.get() {
            let _ = outbox.try_send(change);
        }
    }

    /// Attaches the relay that carries changes raised here to other
    /// instances (once: `false` when one is attached already).
    #[cfg_attr(not(feature = "redis"), allow(dead_code))]
    pub(crate) fn attach_relay(&self, outbox: mpsc::Sender<Change>) -> bool {
        self.outbox.set(outbox).is_ok()
    }

    /// A receiver of future resource updates (their URIs).
    pub fn subscribe_updates(&self) -> broadcast::Receiver<Arc<str>> {
        self.updates.subscribe()
    }

    /// A receiver of future changes.
    pub fn subscribe(&self) -> broadcast::Receiver<ListChange> {
        self.changes.subscribe()
    }

    /// Ends every open stream gracefully (a final `subscriptions/listen`
    /// response, then the end of the stream), e.g. at shutdown. Streams
    /// opened afterwards end at once.
    pub fn close(&self) {
        self.closed.send_replace(true);
    }

    /// Whether [`close`](Self::close) was called, and a way to wait for it.
    pub(crate) fn closed(&self) -> watch::Receiver<bool> {
        self.closed.subscribe()
    }
}
